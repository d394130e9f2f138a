"""Driving a :class:`LogReader` over a source: bytes, a file name, standard input, a file.

Owns :func:`iter_log` (lazy: :class:`LogIterator`), :func:`read_log` (whole) and the options
they pass to the reader (LOG-FORMATS.md section 9; the limits of section 1.12).
"""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Mapping
from typing import IO, Any, Literal, TypeAlias, TypedDict, Unpack

from acp_client._diagnostics import Diagnostic
from acp_client.logs._reader import LogReader
from acp_client.logs._records import FormatId, LogReadResult, LogRecord

__all__ = ["LogIterator", "LogOptions", "LogSource", "ReadLimits", "iter_log", "read_log"]

LogSource: TypeAlias = bytes | bytearray | memoryview | str | os.PathLike[str] | IO[bytes]
"""Where a log comes from: its bytes, a file name (``"-"``: standard input), or a binary file."""


class ReadLimits(TypedDict, total=False):
    """The limits of :class:`LogReader` (LOG-FORMATS.md 1.12), as keywords."""

    max_line: int
    max_document: int
    max_decompressed: int
    max_ratio: int


class LogOptions(ReadLimits, total=False):
    """The options of :class:`LogReader`, as keywords of :func:`iter_log` and :func:`read_log`."""

    format: str | None
    strict: bool
    perspective: Literal["client", "agent"] | None
    direction: Literal["incoming", "outgoing"] | None
    sides: Mapping[str, str] | None


_CHUNK = 1 << 16  # small chunks keep few records alive at once: less GC work


class LogIterator:
    """Iterator over the records and diagnostics of one log, in order (see :func:`iter_log`).

    The reader's state is available while and after iterating: :attr:`format`,
    :attr:`fatal`, :attr:`stopped_early`. Use it as a context manager (or call
    :meth:`close`) to close a file it opened before the end.
    """

    def __init__(self, source: Any, reader: LogReader) -> None:
        self.reader = reader
        self._queue: deque[LogRecord | Diagnostic] = deque()
        self._file: IO[bytes] | None = None
        self._owned = False
        self._data: bytes | None = None
        self._offset = 0
        if isinstance(source, bytes | bytearray | memoryview):
            self._data = bytes(source)
        elif isinstance(source, str | os.PathLike):
            if os.fspath(source) == "-":
                self._file = sys.stdin.buffer
            else:
                self._file = open(source, "rb")  # noqa: SIM115 - closed by close()
                self._owned = True
        elif hasattr(source, "read"):
            self._file = source
        else:
            raise TypeError(f"cannot read a log from {type(source).__name__}")
        self._read = getattr(self._file, "read1", None) or getattr(self._file, "read", None)

    @property
    def format(self) -> FormatId | None:
        """The detected (or given) format id, ``None`` until one is known."""
        return self.reader.format

    @property
    def fatal(self) -> bool:
        """Reading ended on a fatal error."""
        return self.reader.fatal

    @property
    def stopped_early(self) -> bool:
        """Strict mode stopped reading at the first error diagnostic."""
        return self.reader.stopped_early

    def __iter__(self) -> LogIterator:
        return self

    def __next__(self) -> LogRecord | Diagnostic:
        queue = self._queue
        while not queue:
            if self.reader.done:
                self.close()
                raise StopIteration
            queue.extend(self._step())
        return queue.popleft()

    def _step(self) -> list[LogRecord | Diagnostic]:
        reader = self.reader
        if self._data is not None:
            start = self._offset
            if start >= len(self._data):
                self._data = None
                return reader.close()
            self._offset = start + _CHUNK
            return reader.feed(self._data[start : start + _CHUNK])
        if self._file is None or self._read is None:
            return reader.close()
        chunk = self._read(_CHUNK)
        if not chunk:
            self.close()
            return reader.close()
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise TypeError("a log file object must be opened in binary mode")
        out = reader.feed(bytes(chunk))
        if reader.done:
            self.close()
        return out

    def close(self) -> None:
        """Close the file this iterator opened (files passed in are left open)."""
        if self._file is not None and self._owned:
            self._file.close()
        self._file = None

    def __enter__(self) -> LogIterator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def iter_log(source: LogSource, **options: Unpack[LogOptions]) -> LogIterator:
    """Read a stored log lazily: yield its records and diagnostics in order.

    ``source`` is the log's bytes, a file name (``"-"`` for standard input) or a binary file
    object; the file is read in chunks, so memory stays flat for large JSON Lines logs. The
    options are those of :class:`LogReader`. For a log that is still growing (``--follow``),
    drive a :class:`LogReader` directly.
    """
    return LogIterator(source, LogReader(**options))


def read_log(source: LogSource, **options: Unpack[LogOptions]) -> LogReadResult:
    """Read a whole stored log: its records, diagnostics, format and how reading ended.

    ``source`` is the log's bytes, a file name (``"-"`` for standard input) or a binary file
    object. The options are those of :class:`LogReader` (LOG-FORMATS.md section 9).
    """
    records: list[LogRecord] = []
    diagnostics: list[Diagnostic] = []
    with iter_log(source, **options) as items:
        for item in items:
            if isinstance(item, LogRecord):
                records.append(item)
            else:
                diagnostics.append(item)
        return LogReadResult(
            records=records,
            diagnostics=diagnostics,
            format=items.format,
            fatal=items.fatal,
            stopped_early=items.stopped_early,
        )
