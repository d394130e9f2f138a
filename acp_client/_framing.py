r"""Newline-delimited JSON framing with a line-size limit (ACP-V2-CLIENT-STATE.md 1.1).

Bytes arrive split anywhere; :class:`LineBuffer` hands out whole lines (without the
``\n``), splitting each read in one C-level pass. Pending bytes are kept as a list of pieces
and joined once per line, so a long line arriving in many reads costs linear time.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "DEFAULT_MAX_LINE",
    "LineBuffer",
    "LineTooLong",
    "excerpt",
    "head_text",
    "quoted_start",
]

DEFAULT_MAX_LINE = 64 * 1024 * 1024


HEAD_KEPT = 1024
"""Bytes kept from the start of a line over the limit (:attr:`LineTooLong.head`)."""


class LineTooLong:
    """Marker yielded in place of a line longer than the limit (its bytes are dropped).

    Attributes:
        size: the line's length in bytes.
        head: its first bytes (at most :data:`HEAD_KEPT`), for a trace of what it was.
    """

    __slots__ = ("head", "size")

    def __init__(self, size: int, head: bytes = b"") -> None:
        self.size = size
        self.head = head

    def __repr__(self) -> str:
        return f"LineTooLong({self.size})"


class LineBuffer:
    """Splits a byte stream into lines.

    Args:
        max_line: the longest line accepted, in bytes; a longer one is skipped whole and
            reported as a :class:`LineTooLong` marker.
    """

    __slots__ = ("_discard_head", "_discarding", "_pending", "_pending_size", "max_line")

    def __init__(self, max_line: int = DEFAULT_MAX_LINE) -> None:
        self.max_line = max_line
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._discarding = 0
        self._discard_head = b""

    def feed(self, data: bytes) -> list[bytes | LineTooLong]:
        r"""Add bytes; return every line completed by them, in order.

        Lines are returned as read: a trailing ``\r`` and blank lines are left for the
        consumer (JSON treats both as whitespace).
        """
        lines: list[Any] = data.split(b"\n")  # bytes, and LineTooLong in place of some
        tail: bytes = lines.pop()
        if not lines:  # no newline: the whole read is held
            self._hold(tail)
            return lines
        first = 0
        if self._pending or self._discarding:
            lines[0] = self._complete(lines[0])
            first = 1
        if len(data) > self.max_line:  # then a line may be over the limit
            limit = self.max_line
            for i in range(first, len(lines)):
                line: bytes = lines[i]
                if len(line) > limit:
                    lines[i] = LineTooLong(len(line), line[:HEAD_KEPT])
        if tail:
            self._hold(tail)
        return lines

    def _complete(self, head: bytes) -> bytes | LineTooLong:
        """The held line ended by ``head`` (the bytes before a read's first newline)."""
        size = self._pending_size + len(head) + self._discarding
        if self._discarding:
            line: bytes | LineTooLong = LineTooLong(size, self._head_with(head))
        elif size > self.max_line:
            line = LineTooLong(size, _head_of((*self._pending, head)))
        else:
            self._pending.append(head)
            line = b"".join(self._pending)
        self._pending = []
        self._pending_size = 0
        self._discarding = 0
        self._discard_head = b""
        return line

    def _head_with(self, more: bytes) -> bytes:
        """The kept head of a line being skipped, with its next bytes (up to HEAD_KEPT)."""
        head = self._discard_head
        return head + more[: HEAD_KEPT - len(head)] if len(head) < HEAD_KEPT else head

    def _hold(self, rest: bytes) -> None:
        if self._discarding:
            self._discarding += len(rest)
            self._discard_head = self._head_with(rest)
        elif self._pending_size + len(rest) > self.max_line:
            self._discarding = self._pending_size + len(rest)
            self._discard_head = _head_of((*self._pending, rest))
            self._pending = []
            self._pending_size = 0
        else:
            self._pending.append(rest)
            self._pending_size += len(rest)

    def flush(self) -> list[bytes | LineTooLong]:
        r"""End of stream: return a last line that had no ``\\n`` (if any)."""
        out: list[bytes | LineTooLong] = []
        if self._discarding:
            out.append(LineTooLong(self._discarding, self._discard_head))
        elif self._pending:
            out.append(b"".join(self._pending))
        self._pending = []
        self._pending_size = 0
        self._discarding = 0
        self._discard_head = b""
        return out

    @property
    def buffered(self) -> int:
        """Bytes of an incomplete line held back."""
        return self._pending_size + self._discarding


def head_text(head: bytes) -> str:
    """A dropped line's first bytes as text, cut at a character boundary, ending with ``…``."""
    for end in range(len(head), max(len(head) - 4, -1), -1):
        try:  # the head may end inside a character
            return head[:end].decode("utf-8") + "…"
        except UnicodeDecodeError:
            continue
    return head.decode("utf-8", errors="replace") + "…"


#: How much of a line its diagnostic quotes, in characters (:func:`excerpt`).
EXCERPT_CHARS = 120


def excerpt(line: bytes, chars: int = EXCERPT_CHARS, *, longer: bool = False) -> str:
    """The start of ``line`` for a diagnostic, quoted and escaped.

    A JSON string literal, so every control and non-ASCII character is escaped (DEL too:
    nothing in it can drive a terminal): at most ``chars`` characters of the line, with
    ``…`` when it was longer (or ``longer``: ``line`` is only the start of the line).
    """
    import json

    text = line.decode("utf-8", "replace")
    quoted = json.dumps(text[:chars]).replace("\x7f", "\\u007f")
    return quoted + ("…" if longer or len(text) > chars else "")


#: How much of a line over the limit its ``line-too-long`` diagnostic quotes (characters).
LONG_LINE_CHARS = 80


def quoted_start(marker: LineTooLong) -> str:
    """The start of a line over the limit for its diagnostic (:func:`excerpt` of its head)."""
    head = marker.head  # its first bytes only: the line itself was never held
    return excerpt(head, LONG_LINE_CHARS, longer=len(head) < marker.size)


def _head_of(pieces: tuple[bytes, ...]) -> bytes:
    """The first :data:`HEAD_KEPT` bytes of the pieces joined (without joining them all)."""
    head = bytearray()
    for piece in pieces:
        head += piece[: HEAD_KEPT - len(head)]
        if len(head) >= HEAD_KEPT:
            break
    return bytes(head)
