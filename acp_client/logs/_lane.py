"""The fast lane of a log replay: runs of agent notifications decoded and applied in bulk.

Nearly every record of a stored log is a ``session/update`` notification from the agent, and
none of those needs the reader's per-record work (LOG-FORMATS.md 1.7 checks, 1.9-1.11
perspective, pairing and look-ahead) once the log's format, perspective and side table are
settled and no response is held for the look-ahead. For such a stretch the reader hands the
raw lines to :class:`FastLane`: each line is decoded in one typed pass, the record wrapper
(``acp-client``, ``python-sdk``, ``capture``) together with its message (the typed decode
of ``Connection.receive_data``, the same message Structs), and the sink applies the run a
session's run at a time. A run that does not decode exactly
(anything unusual: an unknown field, a missing ``jsonrpc``, a batch, a bad time, two values
on a line) goes through the per-record path unchanged, which stays the reference: the
records, diagnostics and state are the same either way (a property test checks it).
"""

from __future__ import annotations

from math import isfinite
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

    __slots__ = ("_decode", "sink")

    def __init__(self, sink: LaneSink) -> None:
        self.sink = sink
        self._decode: Any = None

    def lines(self, reader: LogReader, lines: list[bytes]) -> None:
        """Read ``lines``: runs through the lane where it is open, the rest per record."""
        marks = [_MARK in line for line in lines]
        slow = reader._slow_lines
        i, n = 0, len(lines)
        while i < n:
            try:
                j = marks.index(False, i)
            except ValueError:
                j = n
            taken = self._run(reader, lines[i:j]) if j - i > 1 else False
            if taken:
                i = j
                continue
            if taken is None:  # the version waits for a record: this one, then the lane again
                j = i + 1
            k = j + 1 if j == i else j  # one other line, or a run the lane did not take
            slow(lines[i:k])
            if reader.in_document:
                slow(lines[k:])  # document mode (1.2) takes the rest
                return
            i = k

    def _run(self, reader: LogReader, run: list[bytes]) -> bool | None:
        """Apply ``run`` through the lane if it is open.

        ``True``: taken; ``None``: the lane is shut only until a record decides the log's
        version; ``False``: not for the lane.
        """
        fmt = reader.format
        if fmt is None or not reader.lane_ready():
            return False
        sink = self.sink
        sink.take(reader._take())  # what came before (an initialize that decides v2)
        if not sink.lane_open():
            return None if sink.lane_undecided() else False
        shape = SHAPE_OF_FORMAT[fmt]
        decoded = _decode(shape, run)
        if decoded is None:
            return False
        notes, times = decoded
        clock = "relative" if shape == "capture" else "epoch"
        sink.apply_updates(reader.skip_lines(len(run)), notes, times, clock)
        return True


def _decode(shape: str, run: list[bytes]) -> tuple[list[Any], list[float | None]] | None:
    """The typed notifications of ``run`` (one per line) and their records' times, or None.

    ``None`` when a line is unusual; a time is ``None`` for a record without one, and the
    times are ``[]`` for a format without a clock.

    Each line is decoded on its own (1.1: a line is one message, whatever its neighbours).
    """
    try:
        if shape == "jsonrpc":
            return list(map(decode_update_line, run)), []
        if shape == "acp":
            records = list(map(decode_acp_record, run))
            times = [None if r.time is UNSET else r.time for r in records]
            notes = [r.message for r in records]
        elif shape == "capture":
            captured = list(map(decode_capture_record, run))
            times = [None if r.t is UNSET else r.t for r in captured]
            notes = [r.msg for r in captured]
        else:
            return None
    except _ERRORS:
        return None
    timed = [t for t in times if t is not None] if None in times else times
    return (notes, times) if all(map(isfinite, timed)) else None  # type: ignore[arg-type]
