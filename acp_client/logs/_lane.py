"""The fast lane of a log replay: runs of agent notifications decoded and applied in bulk.

Nearly every record of a stored log is a ``session/update`` notification from the agent, and
none of those needs the reader's per-record work (LOG-FORMATS.md 1.7 checks, 1.9-1.11
perspective, pairing and look-ahead) once the log's format, perspective and side table are
settled and no response is held for the look-ahead. For such a stretch the reader hands the
raw lines to :class:`FastLane`: each line is decoded in one typed pass, the record wrapper
(``acp-client``, ``python-sdk``, ``capture``) together with its message (the typed decode
of ``Connection.receive_data``, the same message Structs), and the sink applies the run a
session's run at a time. The decode itself finds the runs: a run ends at the first line
that does not decode exactly (anything unusual: an unknown field, a missing ``jsonrpc``, a
batch, a bad time, two values on a line, or no agent notification at all), and that line
goes through the per-record path unchanged, which stays the reference: the records,
diagnostics and state are the same either way (a property test checks it).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from itertools import islice
from typing import TYPE_CHECKING, Any, Protocol

import msgspec
from msgspec import UNSET

from acp_client._codec import decode_acp_record, decode_capture_record, decode_update_line
from acp_client.logs._formats import SHAPE_OF_FORMAT

if TYPE_CHECKING:
    from acp_client._diagnostics import Diagnostic
    from acp_client.logs._reader import LogReader
    from acp_client.logs._records import LogRecord

__all__ = ["FastLane", "LaneSink"]

_MARK = b'"session/update"'
_ERRORS = (msgspec.ValidationError, msgspec.DecodeError, TypeError, RecursionError)


class LaneSink(Protocol):
    """Where the lane's runs go (a replay)."""

    def lane_open(self) -> bool:
        """Whether runs may be applied now (else every line takes the per-record path)."""
        ...

    def lane_undecided(self) -> bool:
        """Whether the lane is shut only until the log's version is decided (by a record)."""
        ...

    def take(self, items: list[LogRecord | Diagnostic]) -> None:
        """The reader's final items so far, to be applied before the next run."""
        ...

    def apply_updates(
        self, first_line: int, notes: list[Any], times: list[float | None], clock: str
    ) -> None:
        """Decoded ``session/update`` notifications of consecutive lines from ``first_line``.

        ``times``: their records' times (``[]`` for a format without a clock), in ``clock``.
        """
        ...


class FastLane:
    """Splits a reader's lines into runs of agent notifications and the rest."""

    __slots__ = ("sink",)

    def __init__(self, sink: LaneSink) -> None:
        self.sink = sink

    def lines(self, reader: LogReader, lines: list[bytes]) -> None:
        """Read ``lines``: runs through the lane where it is open, the rest per record.

        Where the lane is open, the typed decode itself finds each run: it goes on while
        lines decode as ordinary agent notifications and stops at the first that does not,
        which takes the per-record path on its own. Where the lane is shut, the stretch of
        ``session/update`` lines goes per record at once.
        """
        slow = reader._slow_lines
        i, n = 0, len(lines)
        while i < n:
            taken = self._run(reader, lines, i)
            if taken:
                i += taken
                continue
            k = i + 1 if taken is not None else _stretch_end(lines, i)
            slow(lines[i:k])
            if reader.in_document:
                slow(lines[k:])  # document mode (1.2) takes the rest
                return
            i = k

    def _run(self, reader: LogReader, lines: list[bytes], start: int) -> int | None:
        """Apply the run of notifications from ``lines[start]`` through the lane if it is open.

        Returns how many lines it took: ``0`` when ``lines[start]`` is no ordinary agent
        notification, or the lane is shut only until a record decides the log's version;
        ``None`` when the lane is shut.
        """
        fmt = reader.format
        decoder = None if fmt is None else _DECODERS.get(SHAPE_OF_FORMAT[fmt])
        if decoder is None or not reader.lane_ready():  # zed and conductor: never
            return None
        sink = self.sink
        sink.take(reader._take())  # what came before (an initialize that decides v2)
        if not sink.lane_open():
            return 0 if sink.lane_undecided() else None
        decode, split, clock = decoder
        records: list[Any] = []
        with suppress(*_ERRORS):  # each line on its own (1.1); extend keeps what came before
            records.extend(map(decode, islice(lines, start, None)))
        if not records:
            return 0
        notes, times = (records, []) if split is None else split(records)
        sink.apply_updates(reader.skip_lines(len(notes)), notes, times, clock)
        return len(notes)


def _stretch_end(lines: list[bytes], start: int) -> int:
    """The end of the stretch of ``session/update`` lines from ``start`` (at least one line)."""
    end = start + 1
    for line in islice(lines, end, None):
        if _MARK not in line:
            break
        end += 1
    return end


def _acp_split(records: list[Any]) -> tuple[list[Any], list[float | None]]:
    """The messages and times (``None``: none) of ``acp-client`` / ``python-sdk`` records."""
    return [r.message for r in records], [None if r.time is UNSET else r.time for r in records]


def _capture_split(records: list[Any]) -> tuple[list[Any], list[float | None]]:
    """The messages and times (``None``: none) of ``capture`` records."""
    return [r.msg for r in records], [None if r.t is UNSET else r.t for r in records]


# Each shape's typed record decoder, how to split its records into messages and times, and
# its clock. A time needs no check of its own: msgspec refuses a number beyond a float's
# range (1e999), so no decoded time is infinite, and such a line takes the per-record path
# (its bad-time).
_Split = Callable[[list[Any]], tuple[list[Any], list[float | None]]]
_DECODERS: dict[str, tuple[Callable[[bytes], Any], _Split | None, str]] = {
    "jsonrpc": (decode_update_line, None, "epoch"),
    "acp": (decode_acp_record, _acp_split, "epoch"),
    "capture": (decode_capture_record, _capture_split, "relative"),
}
