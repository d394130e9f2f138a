"""The stored-log reader: bytes in, ordered records and diagnostics out (LOG-FORMATS.md).

Theory of operation. :class:`LogReader` is sans-IO: ``feed`` it the bytes of a stored log in
chunks of any size, then ``close`` it; each call returns the records and diagnostics that are
final so far, in order. Inside, the pipeline is

    bytes -> ByteLines (gzip, BOM, LF split)             section 1.1
          -> JSON per line, or document mode             sections 1.1, 1.2
          -> format detection / one-format-per-file      sections 1.3, 1.4
          -> Mapper (the format's record mapping, 1.7)   sections 1.7, 2-7
          -> Perspective (acp-client, python-sdk)        section 1.11
          -> Pairing (tables, look-ahead, inference)     sections 1.9, 1.10, 2.2

Each line costs one msgspec decode (``_codec.decode_plain``) and a few dict lookups. Strict
mode stops at the first error diagnostic; fatal errors stop in every mode. Either way
everything read before is still handed out (held responses become orphans, an undecided
perspective is client-side). Memory is bounded by the limits of section 1.12: the longest
line, the decompressed size, the size of a document read whole.
:func:`iter_log` and :func:`read_log` (``_source.py``) drive a reader over a file, standard
input or bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal, cast

import msgspec

from acp_client._arguments import checked_limit
from acp_client._codec import BEYOND_DOUBLE, decode_plain, holds_infinity
from acp_client._codec import decode_leniently as decode_line_leniently
from acp_client._diagnostics import Diagnostic
from acp_client._framing import DEFAULT_MAX_LINE, LineTooLong, quoted_start
from acp_client.logs._document import (
    DocumentError,
    iter_document,
    lines_within,
    records_follow,
    value_then_junk,
)
from acp_client.logs._formats import SHAPE_OF_FORMAT, Mapper, detect_format, shape
from acp_client.logs._input import (
    DEFAULT_MAX_DECOMPRESSED,
    DEFAULT_MAX_RATIO,
    ByteLines,
    InputFatal,
    Lines,
)
from acp_client.logs._lane import FastLane
from acp_client.logs._pairing import Item, Pairing, Perspective, Sink
from acp_client.logs._records import (
    CODES,
    FORMATS,
    FormatId,
    LogRecord,
)
from acp_client.logs._sides import make_side_table

__all__ = ["DEFAULT_MAX_DOCUMENT", "LogReader"]

DEFAULT_MAX_DOCUMENT = 32 * 1024 * 1024

_LIMITS = ("max_line", "max_document", "max_decompressed", "max_ratio")
"""The largest log read whole as one JSON document (1.2: the Zed export), in bytes."""
#: A line that does not decode: bad JSON, or nested deeper than the decoder's recursion limit.
_UNDECODABLE = (msgspec.DecodeError, RecursionError)


#: A record's time: one beyond a double is ``bad-time`` (dropped), not written back as null.
_TIME_KEYS = frozenset({"time", "t", "ts"})


def _checked(record: Any, line: int, warn: Callable[[str, int | None, str], None]) -> Any:
    """``record``; a number beyond a double in it (read as infinity) is said, as live.

    A lenient decode (msgspec refuses them) or a document gives such numbers. A record's
    time beyond a double is ``bad-time`` instead (the formats drop it).
    """
    if type(record) is dict:
        beyond = any(holds_infinity(v) for k, v in record.items() if k not in _TIME_KEYS)
    else:
        beyond = holds_infinity(record)
    if beyond:
        warn("number-beyond-double", line, BEYOND_DOUBLE)
    return record


class _Stop(Exception):
    """Strict mode: the first error diagnostic was reported."""


def _check_options(
    format: str | None, perspective: str | None, direction: str | None, *limits: int
) -> None:
    """:class:`LogReader`'s options, checked (``ValueError`` names the wrong one)."""
    for name, value in zip(_LIMITS, limits, strict=True):
        checked_limit(name, value, 1)
    if format is not None and format not in FORMATS:
        raise ValueError(f"unknown log format {format!r}; known: {', '.join(FORMATS)}")
    if perspective not in (None, "client", "agent"):
        raise ValueError(f"perspective must be 'client' or 'agent', not {perspective!r}")
    if direction not in (None, "incoming", "outgoing"):
        raise ValueError(f"direction must be 'incoming' or 'outgoing', not {direction!r}")


def _parses(raw: bytes) -> bool:
    """Whether a line is one JSON value."""
    try:
        decode_plain(raw)
    except _UNDECODABLE:
        return False
    return True


class _Fatal(Exception):
    """A fatal error was reported."""


class _Halt(Exception):
    """Reading stops (a broken document) without being fatal."""


class LogReader:
    """Sans-IO reader of one stored log.

    Args:
        format: a format id of :data:`FORMATS` to skip detection (``--format``).
        strict: stop at the first error diagnostic (``--strict``).
        perspective: ``"client"`` or ``"agent"``: the recording side of an ``acp-client`` /
            ``python-sdk`` log, instead of detecting it (``--perspective``).
        direction: ``"incoming"`` or ``"outgoing"``: in the ``jsonrpc`` format, give every
            message that direction and infer nothing (``--direction``); this also turns off
            request/response pairing for that format.
        sides: ``{method: "agent" | "client"}`` entries added to or overriding
            :data:`METHOD_SIDES` (``--side METHOD=agent|client``).
        max_line, max_document, max_decompressed, max_ratio: the limits of LOG-FORMATS.md
            1.12: the longest line, the largest document read whole (1.2), and how far gzip
            input may expand (bytes, or times the compressed bytes read, whichever is more).

    Raises:
        ValueError: an option has a value not listed above.
    """

    def __init__(
        self,
        *,
        format: str | None = None,
        strict: bool = False,
        perspective: Literal["client", "agent"] | None = None,
        direction: Literal["incoming", "outgoing"] | None = None,
        sides: Mapping[str, str] | None = None,
        max_line: int = DEFAULT_MAX_LINE,
        max_document: int = DEFAULT_MAX_DOCUMENT,
        max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
        max_ratio: int = DEFAULT_MAX_RATIO,
    ) -> None:
        _check_options(
            format, perspective, direction, max_line, max_document, max_decompressed, max_ratio
        )
        self._strict = strict
        self._perspective = perspective
        self._direction = direction
        self._sides = make_side_table(sides)
        self._bytes = ByteLines(max_line, max_decompressed, max_ratio)
        self._max_document = max_document
        self._document_size = 0
        self._lineno = 0
        self._mode: Literal["lines", "document"] | None = None
        self._document: list[bytes] = []
        self._document_line = 0
        self._document_unterminated = False  # its last line had no line break
        self._nonblank = False
        self._ready: list[LogRecord | Diagnostic] = []
        self._format: FormatId | None = None
        self._mapper: Mapper | None = None
        self._front: Sink | None = None
        self._perspective_stage: Perspective | None = None
        self.pairing: Pairing = Pairing("jsonrpc", self._sides, infer=False)
        self._done = False
        self._fatal = False
        self._stopped = False
        self.lane: FastLane | None = None  # a replay's: agent notifications skip the stages
        if format is not None:
            self._set_format(cast(FormatId, format))  # checked above

    # -- state ----------------------------------------------------------------------------

    @property
    def format(self) -> FormatId | None:
        """The detected (or given) format id, ``None`` until one is known."""
        return self._format

    @property
    def fatal(self) -> bool:
        """Reading ended on a fatal error."""
        return self._fatal

    @property
    def stopped_early(self) -> bool:
        """Strict mode stopped reading at the first error diagnostic."""
        return self._stopped

    @property
    def done(self) -> bool:
        """No more input is read (closed, stopped or fatal)."""
        return self._done

    @property
    def line(self) -> int:
        """The number of the last line read (blank ones too): 0 before the first."""
        return self._lineno

    # -- input ----------------------------------------------------------------------------

    def feed(self, data: bytes) -> list[LogRecord | Diagnostic]:
        """Read the next chunk of the stored file; return the items now final, in order."""
        if not self._done and data:
            self._run(self._feed, bytes(data))
        return self._take()

    def settle(self) -> list[LogRecord | Diagnostic]:
        """The input paused: return what waits only for later records, and read on.

        A response held back for a request that may still come (1.10's look-ahead) is
        given out now as an orphan, as :meth:`close` would; a later request with its id
        is then one more pending request. For a follower showing a log while it is written
        (``acp-client replay --follow``), so that the view is not behind what was read.
        """
        if not self._done:
            self.pairing.finish()
        return self._take()

    def close(self) -> list[LogRecord | Diagnostic]:
        """End of input; return every remaining item, in order."""
        if not self._done:
            self._run(self._close)
        return self._take()

    def _run(self, step: Any, *args: Any) -> None:
        try:
            step(*args)
        except _Stop:
            self._stopped = True
            self._finish()
        except (_Fatal, _Halt):
            self._finish()

    def _feed(self, data: bytes) -> None:
        source = self._bytes
        try:
            for lines in source.pieces(data):
                if source.may_hold_markers:
                    self._marked_lines(lines)
                else:
                    self._lines(lines)  # type: ignore[arg-type]  # no marker in them
        except InputFatal as exc:
            self._input_failed(exc)

    def _close(self) -> None:
        try:
            lines, last = self._bytes.close()
        except InputFatal as exc:
            self._input_failed(exc)
        self._marked_lines(lines)
        if type(last) is LineTooLong:
            self._marked_lines([last])
        elif last is not None:
            self._last_line(last)  # type: ignore[arg-type]  # bytes
        if self._mode == "document":
            self._read_document()
        if not self._nonblank:
            self.warn("empty-input", None, "the log has no non-blank line")
        elif self._format is None:
            self._fail("no-format-detected", None, "no record of a known log format in the input")
        self._finish()

    def _input_failed(self, exc: InputFatal) -> None:
        """A broken input stream: keep every record decoded before the break (1.1), then fail.

        The text decoded so far is read as usual, its last line (after the last LF) as a last
        line; a document (1.2) is read up to where the break cut it, without a second error.
        """
        self._marked_lines(self._bytes.salvage)
        last = self._bytes.salvage_last
        if type(last) is LineTooLong:
            self._marked_lines([last])
        elif last is not None and (self._mode == "document" or _parses(last)):  # type: ignore[arg-type]
            self._last_line(last)  # type: ignore[arg-type]  # complete without its LF
        if self._mode == "document":
            self._read_document(cut=True)
        self._fail(exc.code, self._lineno + 1, exc.message)

    def _finish(self) -> None:
        self._done = True
        if self._perspective_stage is not None:
            self._perspective_stage.finish()
        self.pairing.finish()

    def _take(self) -> list[LogRecord | Diagnostic]:
        out = self._ready
        self._ready = []
        if self._front is not None:
            out.extend(self.pairing.release())
        return out

    # -- lines ----------------------------------------------------------------------------

    def _lines(self, lines: list[bytes]) -> None:
        if self.lane is not None and self._mode != "document":
            self.lane.lines(self, lines)
        else:
            self._slow_lines(lines)

    def _marked_lines(self, lines: Lines) -> None:
        """Lines among which a line over ``max_line`` may be a marker (1.12)."""
        for part in _segments(lines):
            if isinstance(part, LineTooLong):
                self._too_long(part)
            else:
                self._lines(part)

    def _too_long(self, marker: LineTooLong) -> None:
        """A line over ``max_line``: skipped (never held), reported; resume after its LF."""
        self._lineno += 1
        self._nonblank = True
        message = _too_long_message(marker, self._bytes.max_line)
        if self._mode != "document":
            self.error("line-too-long", self._lineno, f"{message}; skipped")
            return
        self._read_document(cut=True)  # the records before it, then the document ends
        self.error("line-too-long", self._lineno, f"{message}: the document ends here")
        if self._format is None:
            self._fail("no-format-detected", None, "no record of a known log format")
        raise _Halt

    # -- the fast lane (see _lane.py) -----------------------------------------------------

    @property
    def in_document(self) -> bool:
        """Whether the input is read as one JSON document (1.2)."""
        return self._mode == "document"

    def lane_ready(self) -> bool:
        """Whether an agent ``session/update`` record would now pass every stage as it is."""
        mapper = self._mapper
        return mapper is not None and self._mode == "lines" and mapper.passes_updates(self.pairing)

    def skip_lines(self, count: int) -> int:
        """Count ``count`` lines the lane read; return the first one's number."""
        self._lineno += count
        self._nonblank = True
        return self._lineno - count + 1

    def _slow_lines(self, lines: list[bytes]) -> None:
        """Lines one at a time through every stage: the reference path."""
        if self._mode == "document":
            self._lineno += len(lines)
            self._collect(lines)
            return
        if lines and not lines[0] and not any(lines):  # only blank lines (1.1): counted
            self._lineno += len(lines)
            return
        rest: list[bytes] = []
        decode = decode_plain
        decode_error = _UNDECODABLE
        mapper = self._mapper
        handler = mapper.handler if mapper is not None else None
        file_shape = mapper.shape if mapper is not None else None
        lineno = self._lineno
        hot = False
        try:
            for index, raw in enumerate(lines):
                lineno += 1
                if not raw:
                    continue  # blank (1.1): counted, cheaply
                try:
                    value = decode(raw)
                except decode_error as exc:
                    self._lineno = lineno
                    try:
                        value = _checked(decode_line_leniently(raw), lineno, self.warn)
                    except (ValueError, RecursionError):
                        pass
                    else:
                        self._value(lineno, value)
                        mapper = self._mapper
                        if mapper is not None:
                            handler = mapper.handler
                            file_shape = mapper.shape
                        continue
                    if self._bad_line(raw, exc, final=False):
                        rest = lines[index + 1 :]  # collected below (the line count settled)
                        lineno += len(rest)
                        break
                    continue
                if handler is not None and shape(value) == file_shape:
                    hot = True
                    handler(lineno, value)  # the hot path: a record of the file's format
                else:
                    self._lineno = lineno
                    self._value(lineno, value)
                    mapper = self._mapper
                    if mapper is not None:
                        handler = mapper.handler
                        file_shape = mapper.shape
        finally:
            self._lineno = lineno
            if hot:
                self._nonblank = True
        if rest:
            self._collect(rest)

    def _last_line(self, raw: bytes) -> None:
        self._lineno += 1
        if self._mode == "document":
            self._document_unterminated = True
            self._collect([raw])
            return
        try:
            value = decode_plain(raw)
        except _UNDECODABLE as exc:
            try:
                value = _checked(decode_line_leniently(raw), self._lineno, self.warn)
            except (ValueError, RecursionError):
                self._bad_line(raw, exc, final=True)
                return
        self._value(self._lineno, value)

    def _bad_line(self, raw: bytes, exc: Exception, *, final: bool) -> bool:
        """Handle a line that does not parse; return whether document mode starts here."""
        stripped = raw.strip(b" \t\r")
        if not stripped:
            return False  # blank: skipped, but counted
        self._nonblank = True
        if self._mode is None:
            # A first line holding a whole value and then junk is a broken line of JSON
            # Lines, not the start of a document: the lines after it are read.
            if stripped[:1] in (b"[", b"{") and not value_then_junk(stripped):
                self._mode = "document"
                self._document_line = self._lineno
                self._document.append(raw)  # checked against the limit with the next lines
                self._document_size = len(raw) + 1
                return True
            self._mode = "lines"
        if final:
            self.warn(
                "truncated-final-line",
                self._lineno,
                f"the last line has no line break and does not parse ({exc}); ignored",
            )
        else:
            self.error("malformed-line", self._lineno, f"not a line of UTF-8 JSON: {exc}")
        return False

    def _collect(self, lines: list[bytes]) -> None:
        """Add lines to the document (1.2), within ``max_document`` (1.12)."""
        kept = lines_within(lines, self._max_document - self._document_size)
        self._document.extend(lines[:kept])
        self._document_size += sum(map(len, lines[:kept])) + kept
        if self._document_size <= self._max_document:
            return
        # it ends at the line that passed the limit, whatever the reads; if it was JSON
        # Lines after all, the lines after that one are read as lines
        self._lineno -= len(rest := lines[kept:])
        if records_follow(self._document[1:]):
            self._reread_as_lines(self._take_document().split(b"\n"))
            self._lines(rest)
            return
        self._read_document(cut=True)  # the records before the limit
        self._fail(
            "document-too-large",
            self._lineno,
            f"a JSON document (1.2) of more than max_document={self._max_document:,} bytes"
            f" (from line {self._document_line}); reading stops",
        )

    def _take_document(self) -> bytes:
        data = b"\n".join(self._document)
        self._document, self._document_size = [], 0
        return data

    def _read_document(self, *, cut: bool = False) -> None:
        """Read the collected document; ``cut``: the input broke off inside it (no error)."""
        data = self._take_document()
        read = 0
        try:
            for line, value in iter_document(data, self._document_line):
                read += 1
                self._value(line, _checked(value, line, self.warn))
        except DocumentError as exc:
            lines = data.split(b"\n") if read == 0 else []
            if read == 0 and records_follow(lines[1:]):
                # Not a document after all: JSON Lines whose first line is broken. Its other
                # lines are read as lines (1.3: a line before the first record that does not
                # parse is reported and skipped), so that nothing after it is lost.
                self._reread_as_lines(lines)
                return
            if cut:
                return  # the broken input explains it: its own error follows
            self.error("malformed-document", exc.line, f"{exc.message}; reading stops here")
            if self._format is None:
                self._fail("no-format-detected", None, "no record of a known log format")
            raise _Halt from None

    def _reread_as_lines(self, lines: list[bytes]) -> None:
        self._mode = "lines"
        self._lineno = self._document_line
        self.error("malformed-line", self._lineno, "not a line of UTF-8 JSON")
        last = lines.pop() if self._document_unterminated and len(lines) > 1 else None
        self._lines(lines[1:])
        if last is not None:
            self._last_line(last)

    # -- records --------------------------------------------------------------------------

    def _value(self, line: int, value: Any) -> None:
        self._nonblank = True
        if self._mode is None:
            self._mode = "lines"
        found = shape(value)
        mapper = self._mapper
        if mapper is None:
            if found is None:
                self.error(
                    "malformed-record", line, "valid JSON, but not a record of any known format"
                )
                return
            mapper = self._set_format(detect_format(value, found))
        mapper.record(line, value, found)

    def _set_format(self, fmt: FormatId) -> Mapper:
        self._format = fmt
        infer = SHAPE_OF_FORMAT[fmt] == "jsonrpc"
        self.pairing = Pairing(
            fmt, self._sides, infer=infer, fixed=self._direction if infer else None
        )
        front: Sink = self.pairing
        self._mapper = mapper = Mapper(self, fmt)
        if fmt in ("acp-client", "python-sdk"):
            stage = Perspective(self.pairing, self._sides, self._perspective)
            stage.on_settled = mapper.bypass  # once settled without a swap, skip the stage
            if self._perspective == "client":
                mapper.bypass(self.pairing)
            self._perspective_stage = front = stage
        self._front = front
        return mapper

    # -- Host protocol (used by the mapper) -----------------------------------------------

    def push(self, item: Item) -> None:
        """Hand an item to the pipeline."""
        if self._front is None:
            assert not isinstance(item, LogRecord)
            self._ready.append(item)  # type: ignore[arg-type]
        else:
            self._front.push(item)

    def warn(self, code: str, line: int | None, message: str) -> None:
        """Report a warning."""
        self.push(Diagnostic(code=code, message=message, severity="warning", line=line))

    def error(self, code: str, line: int | None, message: str) -> None:
        """Report an error; in strict mode, stop reading."""
        assert CODES[code] == "error"
        self.push(Diagnostic(code=code, message=message, severity="error", line=line))
        if self._strict:
            raise _Stop

    def _fail(self, code: str, line: int | None, message: str) -> None:
        self._fatal = True
        self.push(Diagnostic(code=code, message=message, severity="error", line=line))
        raise _Fatal


def _too_long_message(marker: LineTooLong, max_line: int) -> str:
    """What a ``line-too-long`` diagnostic says: the size, the limit, the quoted start."""
    start = quoted_start(marker)
    return f"a line of {marker.size:,} bytes, over max_line={max_line:,}, starting {start}"


def _segments(lines: Lines) -> Iterator[list[bytes] | LineTooLong]:
    """The runs of lines between the markers of lines over the limit, and the markers."""
    start = 0
    for index, line in enumerate(lines):
        if type(line) is LineTooLong:
            yield lines[start:index]  # type: ignore[misc]  # no marker in it
            yield line
            start = index + 1
    yield lines[start:] if start else lines  # type: ignore[misc]
