"""From raw bytes to lines: compression, byte-order mark, LF splitting (LOG-FORMATS.md 1.1).

Sans-IO: :class:`ByteLines` is fed chunks of the stored file and returns complete lines.
Gzip input (any number of members) is decompressed transparently; zstd, xz and bzip2 are
refused. Lines are split on LF only, by the one framer of the package
(:class:`~acp_client._framing.LineBuffer`, without a size limit: a stored line is read
whole); the CR of a CRLF is left on the line (every consumer treats it as whitespace),
nothing else ends a line.
"""

from __future__ import annotations

import sys
import zlib

from acp_client._framing import LineBuffer

__all__ = ["ByteLines", "InputFatal"]

_GZIP = b"\x1f\x8b"
_REFUSED = ((b"\x28\xb5\x2f\xfd", "zstd"), (b"\xfd7zXZ\x00", "xz"), (b"BZh", "bzip2"))
_SNIFF = 6
_BOM = b"\xef\xbb\xbf"
_SLICE = 1 << 16


class InputFatal(Exception):
    """The input cannot be read further; ``code`` is the diagnostic code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class _Gunzip:
    """Multi-member gzip decompression that salvages output up to a failure."""

    def __init__(self) -> None:
        self._d = zlib.decompressobj(31)
        self._started = False
        self.salvaged = b""

    def feed(self, data: bytes) -> bytes:
        out: list[bytes] = []
        for start in range(0, len(data), _SLICE):
            self._feed_slice(data[start : start + _SLICE], out)
        return b"".join(out)

    def _feed_slice(self, data: bytes, out: list[bytes]) -> None:
        saved = self._d.copy()
        mark = len(out)
        try:
            self._decompress(data, out)
        except zlib.error as exc:
            # Redo the slice byte by byte to keep every byte decoded before the failure.
            del out[mark:]
            self._d = saved
            try:
                for i in range(len(data)):
                    self._decompress(data[i : i + 1], out)
            except zlib.error:
                pass
            self.salvaged = b"".join(out)  # all this feed call decoded, earlier slices too
            raise InputFatal("gzip-error", f"gzip stream is broken: {exc}") from None

    def _decompress(self, data: bytes, out: list[bytes]) -> None:
        while data:
            if self._d.eof:
                # Zero padding may follow a member; anything else starts a new member.
                data = data.lstrip(b"\x00")
                if not data:
                    return
                self._d = zlib.decompressobj(31)
            self._started = True
            out.append(self._d.decompress(data))
            if not self._d.eof:
                return
            self._started = False
            data = self._d.unused_data

    def close(self) -> None:
        if self._started and not self._d.eof:
            raise InputFatal("gzip-error", "gzip stream breaks off (truncated)")


class ByteLines:
    """Split a byte stream into lines, after transparent gzip decompression and BOM removal.

    ``feed`` returns the complete lines (without their LF); ``close`` returns the lines still
    held and the last line if it had no final LF (or ``None``). Both raise
    :class:`InputFatal` for refused compression or a broken gzip stream; after ``feed``
    raised, :attr:`salvage` holds the lines decoded before the failure and
    :attr:`salvage_last` what followed the last LF (or ``None``).
    """

    def __init__(self) -> None:
        self._head: bytes | None = b""  # bytes kept for magic sniffing; None once decided
        self._gunzip: _Gunzip | None = None
        self._bom: bytes | None = b""  # text kept for BOM detection; None once decided
        self._lines = LineBuffer(sys.maxsize)  # no limit: a stored line is read whole
        self.salvage: list[bytes] = []
        self.salvage_last: bytes | None = None

    def feed(self, data: bytes) -> list[bytes]:
        """Feed raw bytes; return the lines they complete."""
        if self._head is not None:
            head = self._head + data
            if len(head) < _SNIFF:
                self._head = head
                return []
            self._head = None
            self._sniff(head)
            data = head
        return self._text(self._decompress(data))

    def close(self) -> tuple[list[bytes], bytes | None]:
        """End of input; return the remaining complete lines and the final line without LF."""
        lines: list[bytes] = []
        if self._head is not None:
            head, self._head = self._head, None
            self._sniff(head)
            lines = self._text(self._decompress(head))
        try:
            if self._gunzip is not None:
                self._gunzip.close()
        except InputFatal:
            self.salvage = lines
            self.salvage_last = self._rest()
            raise
        return lines, self._rest()

    def _rest(self) -> bytes | None:
        """What follows the last LF (the BOM check settled), once; ``None`` if nothing."""
        if self._bom is not None:
            text, self._bom = self._bom, None
            self._lines.feed(text[3:] if text.startswith(_BOM) else text)
        rest = self._lines.flush()
        return rest[0] or None if rest else None  # type: ignore[return-value]

    def _sniff(self, head: bytes) -> None:
        for magic, name in _REFUSED:
            if head.startswith(magic):
                raise InputFatal(
                    "unsupported-compression", f"{name}-compressed input is not supported"
                )
        if head.startswith(_GZIP):
            self._gunzip = _Gunzip()

    def _decompress(self, data: bytes) -> bytes:
        if self._gunzip is None:
            return data
        try:
            return self._gunzip.feed(data)
        except InputFatal:
            self.salvage = self._text(self._gunzip.salvaged)
            self.salvage_last = self._rest()
            raise

    def _text(self, data: bytes) -> list[bytes]:
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
        return self._lines.feed(data)  # type: ignore[return-value]  # no limit: all bytes
