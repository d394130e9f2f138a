"""From raw bytes to lines: compression, byte-order mark, LF splitting (LOG-FORMATS.md 1.1).

Sans-IO: :class:`ByteLines` is fed chunks of the stored file and returns complete lines.
Gzip input (any number of members) is decompressed transparently, a bounded piece at a time;
zstd, xz and bzip2 are refused. Lines are split on LF only, by the one framer of the package
(:class:`~acp_client._framing.LineBuffer`); the CR of a CRLF is left on the line (every
consumer treats it as whitespace), nothing else ends a line.

The limits (LOG-FORMATS.md 1.12): a line over ``max_line`` bytes is never held: its bytes are
counted and dropped and a :class:`~acp_client._framing.LineTooLong` marker takes its place;
one without LF in :data:`RUNAWAY_FACTOR` times ``max_line`` (``/dev/zero``) ends reading
(``runaway-line``), whether its LF comes later or never; gzip output past the larger of
``max_decompressed`` and ``max_ratio`` times the compressed bytes read ends reading
(``decompressed-too-large``).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from acp_client._framing import DEFAULT_MAX_LINE, LineBuffer, LineTooLong

__all__ = [
    "DEFAULT_MAX_DECOMPRESSED",
    "DEFAULT_MAX_RATIO",
    "RUNAWAY_FACTOR",
    "ByteLines",
    "InputFatal",
]

DEFAULT_MAX_DECOMPRESSED = 1 << 30
"""Gzip output always allowed (1 GiB), whatever the compression ratio."""
DEFAULT_MAX_RATIO = 200
"""Gzip output allowed per compressed byte read, past :data:`DEFAULT_MAX_DECOMPRESSED`."""
RUNAWAY_FACTOR = 16
"""A line still without LF after this many times ``max_line`` bytes ends reading."""

_GZIP = b"\x1f\x8b"
_REFUSED = ((b"\x28\xb5\x2f\xfd", "zstd"), (b"\xfd7zXZ\x00", "xz"), (b"BZh", "bzip2"))
_SNIFF = 6
_BOM = b"\xef\xbb\xbf"
_SLICE = 1 << 14  # compressed bytes per step: a broken slice is redone byte by byte
_PIECE = 1 << 18  # decompressed bytes per step: at most this much text is split at once

Lines = list[bytes | LineTooLong]


class InputFatal(Exception):
    """The input cannot be read further; ``code`` is the diagnostic code."""

    def __init__(self, code: str, message: str, salvaged: bytes = b"") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.salvaged = salvaged  # text decoded before the failure, not handed out yet


class _Gunzip:
    """Multi-member gzip decompression in bounded pieces, salvaging output up to a failure."""

    def __init__(self, floor: int, ratio: int) -> None:
        self._d = zlib.decompressobj(31)
        self._started = False
        self._floor = floor
        self._ratio = ratio
        self._in = 0
        self._out = 0

    def feed(self, data: bytes) -> Iterator[bytes]:
        for start in range(0, len(data), _SLICE):
            yield from self._feed_slice(data[start : start + _SLICE])

    def _feed_slice(self, data: bytes) -> Iterator[bytes]:
        saved = self._d.copy()
        given = 0
        self._in += len(data)
        try:
            for piece in self._decompress(data):
                given += len(piece)
                self._count(len(piece))
                yield piece
        except zlib.error as exc:
            # Redo the slice byte by byte to keep every byte decoded before the failure.
            self._d = saved
            out: list[bytes] = []
            try:
                for i in range(len(data)):
                    out.extend(self._decompress(data[i : i + 1]))
            except zlib.error:
                pass
            salvaged = b"".join(out)[given:]
            raise InputFatal("gzip-error", f"gzip stream is broken: {exc}", salvaged) from None

    def _count(self, size: int) -> None:
        self._out += size
        allowed = max(self._floor, self._ratio * self._in)
        if self._out > allowed:
            raise InputFatal(
                "decompressed-too-large",
                f"gzip input expands past the limit of {allowed:,} bytes (the larger of "
                f"max_decompressed={self._floor:,} and max_ratio={self._ratio} times the "
                f"{self._in:,} compressed bytes read); reading stops",
            )

    def _decompress(self, data: bytes) -> Iterator[bytes]:
        while data:
            d = self._d
            if d.eof:
                # Zero padding may follow a member; anything else starts a new member.
                data = data.lstrip(b"\x00")
                if not data:
                    return
                self._d = d = zlib.decompressobj(31)
            self._started = True
            piece = d.decompress(data, _PIECE)
            while True:
                if piece:
                    yield piece
                if d.eof or not (d.unconsumed_tail or len(piece) == _PIECE):
                    break
                piece = d.decompress(d.unconsumed_tail, _PIECE)
            if not d.eof:
                return
            self._started = False
            data = d.unused_data

    def close(self) -> None:
        if self._started and not self._d.eof:
            raise InputFatal("gzip-error", "gzip stream breaks off (truncated)")


class ByteLines:
    """Split a byte stream into lines, after transparent gzip decompression and BOM removal.

    ``feed`` returns the complete lines (without their LF), :meth:`pieces` the same in bounded
    lists; ``close`` returns the lines still held and the last line if it had no final LF (or
    ``None``). A line over ``max_line`` bytes comes as a :class:`LineTooLong` marker (only
    in a list after which :attr:`may_hold_markers` is true). They raise :class:`InputFatal`
    for refused compression, a broken gzip stream or a limit that ends reading; then
    :attr:`salvage` holds the lines decoded before the failure and :attr:`salvage_last`
    what followed the last LF (or ``None``).
    """

    def __init__(
        self,
        max_line: int = DEFAULT_MAX_LINE,
        max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
        max_ratio: int = DEFAULT_MAX_RATIO,
    ) -> None:
        self._head: bytes | None = b""  # bytes kept for magic sniffing; None once decided
        self._gunzip: _Gunzip | None = None
        self._limits = (max_decompressed, max_ratio)
        self._bom: bytes | None = b""  # text kept for BOM detection; None once decided
        self._lines = LineBuffer(max_line)
        self._runaway = RUNAWAY_FACTOR * max_line
        self.may_hold_markers = False
        self.salvage: Lines = []
        self.salvage_last: bytes | LineTooLong | None = None

    @property
    def max_line(self) -> int:
        """The longest line handed out, in bytes."""
        return self._lines.max_line

    def feed(self, data: bytes) -> Lines:
        """Feed raw bytes; return the lines they complete."""
        return [line for piece in self.pieces(data) for line in piece]

    def pieces(self, data: bytes) -> Iterator[Lines]:
        """Feed raw bytes; yield the lines they complete, a bounded list at a time."""
        if self._head is not None:
            head = self._head + data
            if len(head) < _SNIFF:
                self._head = head
                return
            self._head = None
            self._sniff(head)
            data = head
        if self._gunzip is None:
            for start in range(0, len(data), _PIECE):
                yield self._text(data[start : start + _PIECE])
            return
        try:
            for piece in self._gunzip.feed(data):
                yield self._text(piece)
        except InputFatal as exc:
            if exc.code != "runaway-line":  # the gzip stream's: keep what it decoded before
                self.salvage = self._text(exc.salvaged)
                self.salvage_last = self._rest()
            raise

    def close(self) -> tuple[Lines, bytes | LineTooLong | None]:
        """End of input; return the remaining complete lines and the final line without LF."""
        lines: Lines = []
        if self._head is not None:
            head, self._head = self._head, None
            self._sniff(head)
            lines = self.feed(head)
        try:
            if self._gunzip is not None:
                self._gunzip.close()
        except InputFatal:
            self.salvage = lines
            self.salvage_last = self._rest()
            raise
        return lines, self._rest()

    def _rest(self) -> bytes | LineTooLong | None:
        """What follows the last LF (the BOM check settled), once; ``None`` if nothing."""
        if self._bom is not None:
            text, self._bom = self._bom, None
            self._lines.feed(text[3:] if text.startswith(_BOM) else text)
        rest = self._lines.flush()
        return rest[0] or None if rest else None

    def _sniff(self, head: bytes) -> None:
        for magic, name in _REFUSED:
            if head.startswith(magic):
                raise InputFatal(
                    "unsupported-compression", f"{name}-compressed input is not supported"
                )
        if head.startswith(_GZIP):
            self._gunzip = _Gunzip(*self._limits)

    def _text(self, data: bytes) -> Lines:
        if self._bom is not None:
            data = self._bom + data
            if len(data) < 3 and _BOM.startswith(data):
                self._bom = data
                return []
            self._bom = None
            if data.startswith(_BOM):
                data = data[3:]
        if not data:
            return []
        buffer = self._lines
        # only then can a line pass the limit: a marker may come
        self.may_hold_markers = len(data) + buffer.buffered > buffer.max_line
        lines = buffer.feed(data)
        if self.may_hold_markers:
            # A line past the runaway length ends reading whether its LF came in this piece
            # or not: where the pieces end never decides it (issue 26).
            for index, line in enumerate(lines):
                if type(line) is LineTooLong and line.size > self._runaway:
                    self._run_away(lines[:index])
        if buffer.buffered > self._runaway:
            self._run_away(lines)
        return lines

    def _run_away(self, before: Lines) -> None:
        """A line has no LF in :data:`RUNAWAY_FACTOR` times ``max_line``: reading ends."""
        self.salvage = before
        self.salvage_last = None
        raise InputFatal(
            "runaway-line",
            f"no line break in {self._runaway:,} bytes ({RUNAWAY_FACTOR} times "
            f"max_line={self._lines.max_line:,}): not a log of lines; reading stops",
        )
