"""Checking and classifying the JSON-RPC message inside a record (LOG-FORMATS.md 1.7, 1.8).

A message is a request (``method`` and ``id``), a notification (``method``, no ``id``) or a
response (``id`` and exactly one of ``result`` / ``error``), as in ACP-V2-CLIENT-STATE.md 1.2.
Request ids are strings or integers within the signed 64-bit range; a response id may also be
``null``. Id equality (1.8) is Python equality on these values: a string never equals an
integer, and booleans and floats are never valid ids.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from .._lenient import describe_json

__all__ = ["Kind", "classify", "valid_request_id"]

Kind: TypeAlias = Literal["request", "notification", "response"]

_I64_MIN = -(1 << 63)
_I64_MAX = (1 << 63) - 1


def valid_request_id(value: Any) -> bool:
    """Whether ``value`` is an id ACP allows on a request (string or 64-bit integer)."""
    t = type(value)
    if t is str:
        return True
    return t is int and _I64_MIN <= value <= _I64_MAX


def classify(message: Any) -> tuple[Kind, Any] | str:
    """Classify a message (``jsonrpc`` member checked by the caller).

    Returns ``(kind, id)`` (``id`` is ``None`` for notifications), or a sentence saying why
    the message is not a classifiable ACP JSON-RPC object.
    """
    if type(message) is not dict:
        return f"message is {_describe(message)}, not a JSON object"
    if "method" in message:
        method = message["method"]
        if type(method) is not str:
            return f'"method" is {_describe(method)}, not a string'
        if "id" not in message:
            return ("notification", None)
        rid = message["id"]
        if not valid_request_id(rid):
            return f'request "id" {_short(rid)} is not a string or a 64-bit integer'
        return ("request", rid)
    if "id" not in message:
        return 'message has neither "method" nor "id"'
    has_result = "result" in message
    if has_result == ("error" in message):
        if has_result:
            return 'response has both "result" and "error"'
        return 'response has neither "result" nor "error"'
    rid = message["id"]
    if rid is not None and not valid_request_id(rid):
        return f'response "id" {_short(rid)} is not a string, a 64-bit integer or null'
    return ("response", rid)


def _describe(value: Any) -> str:
    return describe_json(value)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
