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
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from acp_client._codec import decode_acp_record, decode_capture_record, decode_update_line
from acp_client.logs._formats import SHAPE_OF_FORMAT

if TYPE_CHECKING:
    from acp_client._diagnostics import Diagnostic
    from acp_client.logs._reader import LogReader
    from acp_client.logs._records import LogRecord

__all__ = ["FastLane", "LaneSink"]

_MARK = b'"session/update"'
_ERRORS = (msgspec.ValidationError, msgspec.DecodeError, TypeError, RecursionError)
_MESSAGE = attrgetter("message")
_MSG = attrgetter("msg")


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

    def apply_updates(self, first_line: int, notes: list[Any]) -> None:
        """Decoded ``session/update`` notifications of consecutive lines from ``first_line``."""
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
        notes = _decode(decoder, lines, start)
        if notes:
            sink.apply_updates(reader.skip_lines(len(notes)), notes)
        return len(notes)


def _stretch_end(lines: list[bytes], start: int) -> int:
    """The end of the stretch of ``session/update`` lines from ``start`` (at least one line)."""
    end = start + 1
    for line in islice(lines, end, None):
        if _MARK not in line:
            break
        end += 1
    return end


# The typed decoder of each shape's record, and how to take its message out.
_Decoder = tuple[Callable[[bytes], Any], Callable[[Any], Any] | None]
_DECODERS: dict[str, _Decoder] = {
    "jsonrpc": (decode_update_line, None),
    "acp": (decode_acp_record, attrgetter("message")),
    "capture": (decode_capture_record, attrgetter("msg")),
}


def _decode(decoder: _Decoder, lines: list[bytes], start: int) -> list[Any]:
    """The typed notifications of ``lines`` from ``start`` up to the first odd line.

    An odd line is one that is no ordinary agent notification; the run may reach the end.
    Each line is decoded on its own (1.1: a line is one message, whatever its neighbours);
    ``list.extend`` keeps what the decode gave before a line failed. A record's time needs
    no check of its own: msgspec refuses a number beyond a float's range (``1e999``), so no
    decoded time is infinite, and such a line takes the per-record path (and its
    ``bad-time``).
    """
    decode, message = decoder
    items: list[Any] = []
    with suppress(*_ERRORS):
        items.extend(map(decode, islice(lines, start, None)))
    return items if message is None else list(map(message, items))
