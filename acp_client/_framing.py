r"""Newline-delimited JSON framing with a line-size limit (ACP-V2-CLIENT-STATE.md 1.1).

Bytes arrive split anywhere; :class:`LineBuffer` hands out whole lines (without the
``\\n`` and an optional ``\\r`` before it). Pending bytes are kept as a list of pieces and
joined once per line, so a long line arriving in many reads costs linear time.
"""

from __future__ import annotations

__all__ = ["LineBuffer", "LineTooLong", "DEFAULT_MAX_LINE"]

DEFAULT_MAX_LINE = 64 * 1024 * 1024


class LineTooLong:
    """Marker yielded in place of a line longer than the limit (its bytes are dropped)."""

    __slots__ = ("size",)

    def __init__(self, size: int) -> None:
        self.size = size

    def __repr__(self) -> str:
        return f"LineTooLong({self.size})"


class LineBuffer:
    """Splits a byte stream into lines.

    Args:
        max_line: the longest line accepted, in bytes; a longer one is skipped whole and
            reported as a :class:`LineTooLong` marker.
    """

    __slots__ = ("_discarding", "_pending", "_pending_size", "max_line")

    def __init__(self, max_line: int = DEFAULT_MAX_LINE) -> None:
        self.max_line = max_line
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._discarding = 0

    def feed(self, data: bytes) -> list[bytes | LineTooLong]:
        """Add bytes; return every line completed by them, in order."""
        out: list[bytes | LineTooLong] = []
        start = 0
        find = data.find
        while True:
            end = find(b"\n", start)
            if end < 0:
                break
            if self._pending or self._discarding:
                piece = data[start:end]
                size = self._pending_size + len(piece) + self._discarding
                if self._discarding or size > self.max_line:
                    out.append(LineTooLong(size))
                    line = None
                else:
                    self._pending.append(piece)
                    line = b"".join(self._pending)
                self._pending = []
                self._pending_size = 0
                self._discarding = 0
            else:
                if end - start > self.max_line:
                    out.append(LineTooLong(end - start))
                    line = None
                else:
                    line = data[start:end]
            if line is not None:
                if line.endswith(b"\r"):
                    line = line[:-1]
                if line.strip():
                    out.append(line)
            start = end + 1
        if start < len(data):
            rest = data[start:]
            if self._discarding:
                self._discarding += len(rest)
            elif self._pending_size + len(rest) > self.max_line:
                self._discarding = self._pending_size + len(rest)
                self._pending = []
                self._pending_size = 0
            else:
                self._pending.append(rest)
                self._pending_size += len(rest)
        return out

    def flush(self) -> list[bytes | LineTooLong]:
        r"""End of stream: return a last line that had no ``\\n`` (if any)."""
        out: list[bytes | LineTooLong] = []
        if self._discarding:
            out.append(LineTooLong(self._discarding))
        elif self._pending:
            line = b"".join(self._pending)
            if line.strip():
                out.append(line)
        self._pending = []
        self._pending_size = 0
        self._discarding = 0
        return out

    @property
    def buffered(self) -> int:
        """Bytes of an incomplete line held back."""
        return self._pending_size + self._discarding
