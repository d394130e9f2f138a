"""Document mode: a log that is one (pretty-printed) JSON document (LOG-FORMATS.md 1.2).

The text is read as a sequence of JSON values separated by whitespace. A top-level array
contributes its elements as records, any other value is one record. Each record's line is the
line of its first character. Decoding stops at the first value that does not decode. A
document is collected within ``max_document`` (1.12): :func:`lines_within` says where it ends.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec

from acp_client._codec import decode_plain
from acp_client._codec import raw_decode as _raw_decode
from acp_client._codec import skip_whitespace as _skip
from acp_client.logs._formats import shape

__all__ = ["DocumentError", "iter_document", "lines_within", "records_follow", "value_then_junk"]


class DocumentError(Exception):
    """A value of the document does not decode; ``line`` is where it starts."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def iter_document(data: bytes, first_line: int) -> Iterator[tuple[int, Any]]:
    """Yield ``(line, record)`` for each record of the document ``data``.

    ``first_line`` is the line number of the first line of ``data``.

    Raises:
        DocumentError: at the first value that does not decode (after the records before it
            were yielded).
    """
    try:
        text = data.decode("utf-8")
        bad_utf8: int | None = None
    except UnicodeDecodeError as exc:
        text = data[: exc.start].decode("utf-8")
        bad_utf8 = first_line + data.count(b"\n", 0, exc.start)
    raw_decode = _raw_decode
    n = len(text)
    counted = 0
    line = first_line

    def line_at(pos: int) -> int:
        nonlocal counted, line
        line += text.count("\n", counted, pos)
        counted = pos
        return line

    def decode(pos: int) -> tuple[Any, int]:
        try:
            return raw_decode(text, pos)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
            if bad_utf8 is not None:
                raise DocumentError(bad_utf8, "the document is not valid UTF-8") from None
            raise DocumentError(line_at(pos), f"value does not decode: {exc}") from None

    pos = _skip(text, 0)
    while pos < n:
        if text[pos] != "[":
            start = line_at(pos)
            value, pos = decode(pos)
            yield start, value
        else:
            open_line = line_at(pos)
            pos = _skip(text, pos + 1)
            if pos < n and text[pos] == "]":
                pos += 1
            else:
                while True:
                    if pos >= n:
                        raise DocumentError(open_line, "the array opened here is not closed")
                    start = line_at(pos)
                    value, pos = decode(pos)
                    yield start, value
                    pos = _skip(text, pos)
                    if pos < n and text[pos] == ",":
                        pos = _skip(text, pos + 1)
                        continue
                    if pos < n and text[pos] == "]":
                        pos += 1
                        break
                    if pos >= n:
                        raise DocumentError(open_line, "the array opened here is not closed")
                    raise DocumentError(line_at(pos), "expected ',' or ']' in the array")
        pos = _skip(text, pos)
    if bad_utf8 is not None:
        raise DocumentError(bad_utf8, "the document is not valid UTF-8")


def records_follow(lines: list[bytes]) -> bool:
    """Whether one of ``lines`` is, on its own, a record of a known format (JSON Lines)."""
    for raw in lines:
        try:
            value = decode_plain(raw)
        except (msgspec.DecodeError, RecursionError):
            continue
        if shape(value) is not None:
            return True
    return False


def value_then_junk(line: bytes) -> bool:
    """Whether a line that does not parse holds a whole JSON value and then junk.

    Such a first line is a broken line of JSON Lines, not the start of a document (1.2): a
    document's first line holds whole values separated by whitespace, and then at most the
    start of one more (``[``, ``{"key": ...``) but never what cannot start a value.
    """
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    pos, n, values = 0, len(text), 0
    while pos < n:
        try:
            _, pos = _raw_decode(text, pos)
        except (ValueError, RecursionError):
            return values > 0 and text[pos] not in "[{"
        values += 1
        pos = _skip(text, pos)
    return False


def lines_within(lines: list[bytes], room: int) -> int:
    """How many of ``lines`` fit in ``room`` bytes (each with its LF), and the one past it."""
    if sum(map(len, lines)) + len(lines) <= room:
        return len(lines)
    for index, raw in enumerate(lines):
        room -= len(raw) + 1
        if room < 0:
            return index + 1
    return len(lines)
