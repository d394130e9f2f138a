r"""JSON that msgspec refuses but the JSON grammar allows, read with Python's ``json``.

A number beyond a double (``1e309`` reads as infinity; so does an integer of more than
4,300 digits, beyond Python's ``int()``) or a lone surrogate escape
(``"\ud800"``, as ``JSON.stringify`` writes it) is valid JSON that msgspec does not decode.
The log reader and the connection fall back to this reader for such text, so both paths
keep the message.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

__all__ = ["DECODER", "decode_leniently", "loads", "raw_decode", "skip_whitespace"]

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


#: Python's JSON decoder without the ``NaN`` / ``Infinity`` extensions.
DECODER = json.JSONDecoder(parse_constant=_reject_constant)
#: The same, for text with an integer past ``int()``'s digit limit (slower: a call per int).
_LONG_INTEGERS = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_integer)


def raw_decode(text: str, pos: int) -> tuple[Any, int]:
    """:data:`DECODER`'s ``raw_decode``; an integer past ``int()``'s limit reads as infinity."""
    try:
        return DECODER.raw_decode(text, pos)
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


_PLAIN = msgspec.json.Decoder()


def loads(raw: bytes | str) -> Any:
    """One JSON value: msgspec's fast decode, else :func:`decode_leniently`'s.

    Raises ``ValueError`` (msgspec's ``DecodeError`` is one) for what is not JSON, and
    ``RecursionError`` for a value nested too deep.
    """
    try:
        return _PLAIN.decode(raw)
    except msgspec.DecodeError:
        return decode_leniently(raw)
