"""Every decoder and encoder of ACP v2 JSON-RPC text, built once and reused.

Theory of operation: this module owns each JSON decoder of the package (ACP-V2-CLIENT-STATE.md
1.1, 1.2): the typed msgspec decoder of the ``session/update`` fast path
(:func:`decode_update_line`, one line at a time; a stored log's records of one,
:func:`decode_acp_record`, :func:`decode_capture_record`), the untyped one
(:func:`decode_plain`), and the standard-library fallback for valid JSON that msgspec refuses
(:func:`decode_leniently`, :func:`loads`). Other modules import these instead of building
their own. The common case costs one typed msgspec pass: a well-formed ``session/update``
with no unknown field decodes straight into the Structs of ``_schema``. Anything else takes
the lenient path: parsed into plain values once, the envelope classified (1.2,
:func:`message_from_builtins`), the params converted field by field following the schema's
annotations (13.5) by :mod:`acp_client._lenient`. Errors: :class:`RemoteProtocolError` with
the JSON path and code. :func:`encode` writes unknown fields kept in ``extra`` back in place.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any, Literal

import msgspec
from msgspec import UNSET

from . import _schema as s
from ._diagnostics import Diagnostic
from ._errors import INVALID_REQUEST, PARSE_ERROR, RemoteProtocolError, detached
from ._lenient import EXTRAS, convert, convert_or_raise, describe_json

__all__ = [
    "NOTIFICATION_PARAMS",
    "PLAIN_DECODER",
    "REQUEST_PARAMS",
    "RESULT_TYPES",
    "UNSTABLE_FEATURES",
    "Decoder",
    "convert",
    "decode_acp_record",
    "decode_capture_record",
    "batch_too_large",
    "decode_leniently",
    "decode_plain",
    "decode_unstable_update",
    "decode_update_line",
    "describe_json",
    "encode",
    "loads",
    "message_from_builtins",
    "raw_decode",
    "skip_whitespace",
    "to_builtins",
]

REQUEST_PARAMS: dict[str, type[Any]] = {
    "initialize": s.InitializeRequest,
    "auth/login": s.LoginAuthRequest,
    "auth/logout": s.LogoutAuthRequest,
    "session/new": s.NewSessionRequest,
    "session/resume": s.ResumeSessionRequest,
    "session/list": s.ListSessionsRequest,
    "session/close": s.CloseSessionRequest,
    "session/delete": s.DeleteSessionRequest,
    "session/prompt": s.PromptRequest,
    "session/set_config_option": s.SetSessionConfigOptionRequest,
    "tool_call/cancel": s.CancelToolCallRequest,
    "terminal/cancel": s.CancelTerminalRequest,
    "session/request_permission": s.RequestPermissionRequest,
}
"""Params Struct of every request method acp_client knows."""

NOTIFICATION_PARAMS: dict[str, type[Any]] = {
    "session/update": s.UpdateSessionNotification,
    "session/cancel": s.CancelSessionNotification,
    "$/cancel_request": s.CancelRequestNotification,
}
"""Params Struct of every notification method acp_client knows."""

RESULT_TYPES: dict[str, type[Any]] = {
    "initialize": s.InitializeResponse,
    "auth/login": s.LoginAuthResponse,
    "auth/logout": s.LogoutAuthResponse,
    "session/new": s.NewSessionResponse,
    "session/resume": s.ResumeSessionResponse,
    "session/list": s.ListSessionsResponse,
    "session/close": s.CloseSessionResponse,
    "session/delete": s.DeleteSessionResponse,
    "session/prompt": s.PromptResponse,
    "session/set_config_option": s.SetSessionConfigOptionResponse,
    "tool_call/cancel": s.CancelToolCallResponse,
    "terminal/cancel": s.CancelTerminalResponse,
    "session/request_permission": s.RequestPermissionResponse,
}
"""Result Struct of every request method acp_client knows."""


# ------------------------------------------------------------------------- decoders


class _FastUpdate(s.Notification, forbid_unknown_fields=True, kw_only=True):
    """A ``session/update`` notification decoded in one typed pass.

    Internal: :class:`Decoder` hands it out as a plain ``Notification`` (same fields), and
    the connection's hot path takes only its params.
    """

    jsonrpc: Literal["2.0"]
    method: Literal["session/update"]
    params: s.UpdateSessionNotification


decode_update_line = msgspec.json.Decoder(_FastUpdate).decode
"""One well-formed ``session/update`` line, typed in one pass (no unknown field anywhere).

Raises msgspec's ``ValidationError`` or ``DecodeError`` (or ``RecursionError``) for any
other line: the caller then takes the lenient path."""


class _AcpIncoming(msgspec.Struct, gc=False):  # an acp-client / python-sdk record (LOG-FORMATS 2)
    direction: Literal["incoming"]
    message: _FastUpdate
    time: float | msgspec.UnsetType = UNSET


class _CaptureIncoming(msgspec.Struct, gc=False):  # a capture record (LOG-FORMATS 4); no cycle
    dir: Literal["in"]
    msg: _FastUpdate
    t: float | msgspec.UnsetType = UNSET


decode_acp_record = msgspec.json.Decoder(_AcpIncoming).decode  # a log's fast lane (issue 23)
decode_capture_record = msgspec.json.Decoder(_CaptureIncoming).decode
PLAIN_DECODER = msgspec.json.Decoder()
"""The untyped msgspec decoder: JSON text to plain Python values."""

decode_plain = PLAIN_DECODER.decode
"""One JSON value as plain Python values (msgspec; raises ``msgspec.DecodeError``)."""

_WS = re.compile(r"[ \t\n\r]*")


def skip_whitespace(text: str, pos: int) -> int:
    """Position of the first non-whitespace character at or after ``pos``."""
    match = _WS.match(text, pos)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _integer(digits: str) -> int | float:
    """An integer, or an infinite float for one too long for ``int()`` (4,300 digits).

    Such an integer is read as a number beyond a double is.
    """
    try:
        return int(digits)
    except ValueError:
        return float(digits)


# The fallback for JSON msgspec refuses but the grammar allows: a number beyond a double
# (``1e309`` reads as infinity; so does an integer of more than 4,300 digits, beyond
# ``int()``) or a lone surrogate escape (``"\ud800"``, as ``JSON.stringify`` writes it).
# Python's JSON decoder, without the ``NaN`` / ``Infinity`` extensions:
_STDLIB = json.JSONDecoder(parse_constant=_reject_constant)
# The same, for text with an integer past ``int()``'s digit limit (slower: a call per int).
_LONG_INTEGERS = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_integer)


def raw_decode(text: str, pos: int) -> tuple[Any, int]:
    """Python's ``raw_decode`` (no ``NaN``); an integer past ``int()``'s limit reads as infinity."""
    try:
        return _STDLIB.raw_decode(text, pos)
    except ValueError as exc:
        if "integer string conversion" not in str(exc):
            raise
        return _LONG_INTEGERS.raw_decode(text, pos)


def decode_leniently(raw: bytes | str) -> Any:
    """Decode one JSON value that msgspec refused but JSON's grammar allows.

    Raises ``ValueError`` (including ``UnicodeDecodeError``) for text that is not UTF-8
    JSON, and ``RecursionError`` for a value nested too deep.
    """
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    value, end = raw_decode(text, skip_whitespace(text, 0))
    if skip_whitespace(text, end) != len(text):
        raise ValueError("extra data after the value")
    return value


def loads(raw: bytes | str) -> Any:
    """One JSON value: msgspec's fast decode, else :func:`decode_leniently`'s.

    Raises ``ValueError`` (msgspec's ``DecodeError`` is one) for what is not JSON, and
    ``RecursionError`` for a value nested too deep.
    """
    try:
        return decode_plain(raw)
    except msgspec.DecodeError:
        return decode_leniently(raw)


_FAST_FAILED = (msgspec.ValidationError, msgspec.DecodeError, RecursionError, UnicodeEncodeError)


def _parse(data: bytes | str, diagnostics: list[Diagnostic] | None = None) -> Any:
    try:
        return decode_plain(data)
    # RecursionError: nested too deep; UnicodeEncodeError: a str holding a lone surrogate
    except (msgspec.DecodeError, RecursionError, UnicodeEncodeError) as exc:
        error = exc
    try:  # valid JSON msgspec refuses: a lone surrogate escape, a number beyond a double
        value = decode_leniently(data)
    except (ValueError, RecursionError):
        raise RemoteProtocolError(f"not valid JSON: {error}", code=PARSE_ERROR) from None
    if diagnostics is not None and holds_infinity(value):
        diagnostics.append(Diagnostic(code="number-beyond-double", message=BEYOND_DOUBLE))
    return value


#: The message of ``number-beyond-double`` (live, and in a stored log's line or document).
BEYOND_DOUBLE = (
    "a number beyond a double's range (such as 1e400, or an integer of more than 4,300"
    " digits) reads as infinity and is written back as null"
)


def holds_infinity(value: Any) -> bool:
    """Whether a decoded JSON value holds an infinite number anywhere (iteratively)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is float:
            if item in (math.inf, -math.inf):
                return True
        elif type(item) is dict:
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
    return False


# ------------------------------------------------------------------------- messages

_NOTIFICATION = s.Notification
_INT64 = (-(2**63), 2**63 - 1)


def _valid_id(value: object, *, response: bool) -> bool:
    if isinstance(value, str):
        return True
    if isinstance(value, int) and not isinstance(value, bool):
        return _INT64[0] <= value <= _INT64[1]
    return response and value is None


class Decoder:
    """Decodes newline-free JSON-RPC text into :mod:`acp_client.schema` Structs.

    Build one and reuse it: it holds no per-message state.

    >>> Decoder().decode(b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}')
    Notification(method='session/cancel', params=CancelSessionNotification(session_id='s'))
    """

    __slots__ = ()

    def decode(
        self, data: bytes | str, *, diagnostics: list[Diagnostic] | None = None
    ) -> s.Message | list[s.Message]:
        """Decode one JSON-RPC message or batch.

        Lenient recoveries are appended to ``diagnostics`` when a list is given.

        Raises:
            RemoteProtocolError: not JSON (-32700), not a JSON-RPC message (-32600), or
                params of a known method invalid where the schema is strict (-32602). For a
                batch, the first invalid element raises; use :meth:`decode_all` to keep the
                valid ones.
        """
        try:
            message: s.Notification = decode_update_line(data)
        except _FAST_FAILED:  # UnicodeEncodeError: a str holding a lone surrogate
            pass
        else:
            message.__class__ = _NOTIFICATION  # the same fields: a plain Notification
            return message
        obj = _parse(data, diagnostics)
        if isinstance(obj, list):
            if not obj:
                raise RemoteProtocolError("empty batch", code=INVALID_REQUEST, raw=obj)
            out: list[s.Message] = []
            for i, item in enumerate(obj):
                out.append(message_from_builtins(item, diagnostics, f"$[{i}]"))
            return out
        return message_from_builtins(obj, diagnostics, "$")

    def decode_all(
        self,
        data: bytes | str,
        diagnostics: list[Diagnostic] | None = None,
        *,
        max_batch: int | None = None,
    ) -> list[s.Message | RemoteProtocolError]:
        """Decode one line into its messages; an invalid one is returned as its error.

        Never raises: a line that is not JSON gives a single -32700 error, an empty batch (or
        one of more than ``max_batch`` entries) a single -32600 error, and each invalid
        element of a batch its own error.
        """
        try:
            message: s.Notification = decode_update_line(data)
        except _FAST_FAILED:  # UnicodeEncodeError: a str holding a lone surrogate
            pass
        else:
            message.__class__ = _NOTIFICATION
            return [message]
        try:
            obj = _parse(data, diagnostics)
        except RemoteProtocolError as exc:
            return [detached(exc)]
        if isinstance(obj, list):
            if not obj:
                return [RemoteProtocolError("empty batch", code=INVALID_REQUEST, raw=obj)]
            if max_batch is not None and len(obj) > max_batch:
                return [batch_too_large(len(obj), max_batch)]
            items: list[tuple[Any, str]] = [(item, f"$[{i}]") for i, item in enumerate(obj)]
        else:
            items = [(obj, "$")]
        out: list[s.Message | RemoteProtocolError] = []
        for item, path in items:
            try:
                out.append(message_from_builtins(item, diagnostics, path))
            except RemoteProtocolError as exc:
                out.append(detached(exc))
        return out

    def decode_result(
        self, method: str, result: Any, *, diagnostics: list[Diagnostic] | None = None
    ) -> Any:
        """Convert the raw ``result`` of a response to the Struct of ``method``'s result.

        Unknown methods give the raw value back.

        Raises:
            RemoteProtocolError: the result is invalid where the schema is strict.
        """
        tp = RESULT_TYPES.get(method)
        if tp is None:
            return result
        return convert(result, tp, path="$.result", diagnostics=diagnostics)


def batch_too_large(count: int, max_batch: int) -> RemoteProtocolError:
    """The error of a batch of ``count`` entries, over the limit: none of it is applied."""
    return RemoteProtocolError(
        f"batch of {count} entries exceeds the limit max_batch={max_batch}",
        code=INVALID_REQUEST,
    )


_OWN_KEYS: dict[type[Any], frozenset[str]] = {
    s.Request: frozenset({"jsonrpc", "id", "method", "params"}),
    s.Notification: frozenset({"jsonrpc", "method", "params"}),
    s.Response: frozenset({"jsonrpc", "id", "result"}),
    s.ErrorResponse: frozenset({"jsonrpc", "id", "error"}),
}


def message_from_builtins(
    obj: Any, diagnostics: list[Diagnostic] | None = None, path: str = "$"
) -> s.Message:
    """Classify one parsed JSON-RPC object and convert its params (section 1.2).

    Raises:
        RemoteProtocolError: with code -32600 (not a JSON-RPC message) or -32602 (invalid
            params of a known method); ``raw`` holds the object, ``request_id`` its id.
    """
    message = _message_from_builtins(obj, diagnostics, path)
    # The members of its own kind are typed; any other (a `result` on a request, `params`
    # on a response, `method: null`...) is an unknown field, kept and written back.
    own = _OWN_KEYS[type(message)]
    if isinstance(obj, dict) and len(obj) > len(own & obj.keys()):
        message.extra = {k: v for k, v in obj.items() if k not in own}
        EXTRAS.seen = True
    return message


def _message_from_builtins(obj: Any, diagnostics: list[Diagnostic] | None, path: str) -> s.Message:
    """The classification of :func:`message_from_builtins`, before unknown members are kept."""
    if not isinstance(obj, dict):
        raise RemoteProtocolError(
            f"expected a JSON-RPC object, got {describe_json(obj)}",
            path=path,
            code=INVALID_REQUEST,
            raw=obj,
        )
    version = obj.get("jsonrpc", UNSET)
    if version is not UNSET and version != "2.0":
        raise RemoteProtocolError(
            '`jsonrpc` must be "2.0"', path=f"{path}.jsonrpc", code=INVALID_REQUEST, raw=obj
        )
    method = obj.get("method")
    if method is not None:
        if not isinstance(method, str):
            raise RemoteProtocolError(
                "`method` must be a string", path=f"{path}.method", code=INVALID_REQUEST, raw=obj
            )
        params = obj.get("params", UNSET)  # null kept: an unknown method's params are raw
        if "id" in obj:
            rid = obj["id"]
            if not _valid_id(rid, response=False):
                raise RemoteProtocolError(
                    "a request id must be a string or a 64-bit integer (no fraction or exponent)",
                    path=f"{path}.id",
                    code=INVALID_REQUEST,
                    raw=obj,
                )
            tp = REQUEST_PARAMS.get(method)
            typed = _params(params, tp, obj, rid, diagnostics, path)
            return s.Request(id=rid, method=method, params=typed)
        tp = NOTIFICATION_PARAMS.get(method)
        typed = _params(params, tp, obj, None, diagnostics, path)
        return s.Notification(method=method, params=typed)
    if "id" in obj:
        rid = obj["id"]
        # 1.2: `id: null` only on an error answering an unreadable request
        if not _valid_id(rid, response="result" not in obj):
            raise RemoteProtocolError(
                "invalid response id", path=f"{path}.id", code=INVALID_REQUEST, raw=obj
            )
        # Not a response at all (LOG-FORMATS 1.7, as a replay reads it): no request is named,
        # and the one it meant stays pending.
        has_result = "result" in obj
        if has_result == ("error" in obj):
            raise RemoteProtocolError(
                "a response needs exactly one of `result` and `error`",
                path=path,
                code=INVALID_REQUEST,
                raw=obj,
            )
        # A malformed error still names its request (``request_id``): a response is never
        # answered, and the connection settles the request it answers.
        if has_result:
            return s.Response(id=rid, result=obj["result"])
        error = convert_or_raise(
            obj["error"], s.Error, f"{path}.error", diagnostics, INVALID_REQUEST, obj, rid
        )
        return s.ErrorResponse(id=rid, error=error)
    raise RemoteProtocolError(
        "neither a request, a notification nor a response", path=path, code=INVALID_REQUEST, raw=obj
    )


def _params(
    params: Any,
    tp: type[Any] | None,
    obj: dict[str, Any],
    rid: int | str | None,
    diagnostics: list[Diagnostic] | None,
    path: str,
) -> Any:
    if tp is None:
        return params
    # omitted or null: valid when every field is optional; kept as sent (omitted, null and
    # a value stay three things, also for params)
    kept = params is UNSET or params is None
    typed = convert_or_raise(
        {} if kept else params, tp, f"{path}.params", diagnostics, raw=obj, request_id=rid
    )
    return params if kept else typed


# ------------------------------------------------------------- unstable (opt-in) variants

UNSTABLE_FEATURES: dict[str, str] = {
    "prompt_suggestions_update": "prompt_suggestions",
    "cursor_update": "cursors",
    "unknown": "unknown_state",
}
"""The opt-in feature that decodes each unstable update kind (and the ``unknown`` state)."""
_UNSTABLE_BY_TAG: dict[Any, type[Any]] = {
    cls.__struct_config__.tag: cls for cls in s.UNSTABLE_SESSION_UPDATES
}
_UPDATE_PATH = "$.params.update"


def decode_unstable_update(
    update: Any, features: frozenset[str], diagnostics: list[Diagnostic] | None = None
) -> Any:
    """The Struct of an unstable update the default decoders kept raw, when ``features`` opt in.

    The default decoders leave ``prompt_suggestions_update`` and ``cursor_update`` as raw
    ``dict`` updates and the ``unknown`` state as a custom state (its fields in ``extra``);
    for a session that enabled the feature (``"prompt_suggestions"``, ``"cursors"``,
    ``"unknown_state"``) this converts them, leniently where the annotations allow (ACP v2
    Preview 2.13). Anything else is returned unchanged.

    Raises:
        RemoteProtocolError: the update is malformed where the schema is strict.
    """
    if type(update) is dict:
        cls = _UNSTABLE_BY_TAG.get(update.get("sessionUpdate"))
        if cls is None or UNSTABLE_FEATURES[cls.__struct_config__.tag] not in features:
            return update
        return convert(update, cls, path=_UPDATE_PATH, diagnostics=diagnostics)
    if type(update) is s.StateUpdate and update.state == "unknown" and "unknown_state" in features:
        raw = {"sessionUpdate": "state_update", "state": "unknown"}
        if update.extra:
            raw.update(update.extra)
        return convert(raw, s.UnknownStateUpdate, path=_UPDATE_PATH, diagnostics=diagnostics)
    return update


# ------------------------------------------------------------------------- encoding

_ENCODER = msgspec.json.Encoder()
_EXTRA_MARK = b'"' + s.EXTRA_KEY.encode() + b'"'


def _walk(value: Any) -> Any:
    """Plain data for Structs, written field by field with ``extra`` spread in place.

    Raw values (dicts, lists, scalars) are left as they are: a key that merely looks like
    the extra holder inside ``_meta`` or an unknown variant is data.
    """
    if isinstance(value, msgspec.Struct):
        out: dict[str, Any] = {}
        config = value.__struct_config__
        if config.tag_field is not None:
            out[config.tag_field] = config.tag
        extra = None
        for info in msgspec.structs.fields(value):
            item = getattr(value, info.name)
            if item is UNSET:
                continue
            if info.name == "extra" and isinstance(value, s.Wire | s._Envelope):
                extra = item
                continue
            out[info.encode_name] = _walk(item)
        if extra:
            for key, item in extra.items():
                out.setdefault(key, item)
        return out
    if isinstance(value, list | tuple):
        return [_walk(item) for item in value]
    if isinstance(value, dict):
        return {key: _walk(item) for key, item in value.items()}
    return value


def _walk_deep(obj: Any) -> Any:
    """:func:`_walk`, also for values nested deeper than Python's recursion limit allows.

    The decoder takes JSON nested up to its parser's limit (about a thousand levels), so
    encoding what it accepted may recurse that deep: the limit is raised for that walk only.
    """
    try:
        return _walk(obj)
    except RecursionError:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20_000))
        try:
            return _walk(obj)
        finally:
            sys.setrecursionlimit(limit)


def to_builtins(obj: Any) -> Any:
    """Plain JSON-compatible Python data for a Struct (unknown fields written in place)."""
    if not EXTRAS.seen:
        try:
            if _EXTRA_MARK not in _ENCODER.encode(obj):
                return msgspec.to_builtins(obj)
        except UnicodeEncodeError:
            return _walk_deep(obj)  # a lone surrogate (see ``encode``): no JSON to look into
        EXTRAS.seen = True  # a Struct was built with ``extra`` by hand
    return _walk_deep(obj)


def encode(obj: Any) -> bytes:
    r"""Compact JSON for a message or any schema Struct, unknown fields written in place.

    A string holding a lone surrogate (JSON allows the escape ``\ud800``, and a lenient
    reader such as Python's ``json`` keeps it) is written back as that escape.
    """
    try:
        out = _ENCODER.encode(obj)
    except UnicodeEncodeError:
        return json.dumps(_walk_deep(obj), separators=(",", ":")).encode()
    if _EXTRA_MARK in out:
        out = _ENCODER.encode(_walk_deep(obj))
    return out
