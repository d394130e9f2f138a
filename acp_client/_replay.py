"""Replaying stored logs into reconciled state (passive mode, section 2.4).

:class:`Replayer` is sans-IO: feed it the records of :mod:`acp_client.logs` (or
``(direction, message)`` pairs) and it drives a passive :class:`~acp_client.Connection`.
It decides once per stream whether the log speaks ACP v1 (V1-TO-V2.md section 1.3: the
``initialize`` result, or v1-only markers) and then routes every message through the
v1 adapter, so a v1 log lands in the same v2 state model. :func:`replay_log` reads a
whole log file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Unpack

import msgspec

from ._connection import Connection
from ._diagnostics import DEFAULT_MAX_DIAGNOSTICS, Diagnostic, DiagnosticList
from ._events import Event, ResponseReceived
from ._schema import Error
from ._schema import UpdateSessionNotification as _Params
from ._updates import runs_of
from ._v1.logswitch import AdapterOrigin, LogSwitch

if TYPE_CHECKING:
    from .logs._source import ReadLimits

__all__ = ["FailedRequest", "ReplayResult", "Replayer", "replay_log"]


class FailedRequest(msgspec.Struct, frozen=True, gc=False):
    """A request of the client's that the agent answered with an error.

    A failed ``session/new`` leaves no session behind, so the snapshot alone cannot tell
    why a log holds none; a replay keeps these for the rendered view. Failed prompts are
    not listed: their ``PROMPT`` objects in the snapshot carry the error.

    Attributes:
        line: the log line of the error response (``None`` when the v1 adapter made the
            answer up at the end of a connection).
        method: the request's method (v2 name).
        session_id: the session the request named, if any.
        error: the JSON-RPC error object.
    """

    line: int | None
    method: str
    session_id: str | None
    error: Error

    def to_json(self) -> dict[str, Any]:
        """Plain data: ``line`` (when known), ``method``, ``sessionId`` (when known), ``error``."""
        out: dict[str, Any] = {}
        if self.line is not None:
            out["line"] = self.line
        out["method"] = self.method
        if self.session_id is not None:
            out["sessionId"] = self.session_id
        out["error"] = msgspec.to_builtins(self.error)
        return out


_to_params = msgspec.convert


class Replayer:
    """Feeds a recorded message stream into a passive connection.

    Args:
        protocol: ``1`` or ``2`` to force the stream's version, ``None`` to detect it.
        terminal_limit: per-terminal byte retention limit.
        block_limit: the content items each message, tool call, compaction and session
            message keeps (the last ones; ``None``: every one).
        strict: stop at the first error diagnostic of the state rules or the v1 adapter,
            also one that a message held back while the version was undecided gives when it
            is applied later: nothing after it is applied (see :attr:`stopped`).
        provenance: keep an :class:`AdapterOrigin` for every v2 message the v1 adapter
            produced or changed (in :attr:`origins`), to tell the adapter's synthetic ids,
            acceptances and states from what the Agent sent. Off by default: it holds the
            events and messages of the whole replay.
        unstable: the opt-in (unstable) features the sessions apply, as ``Connection``'s
            (``"prompt_suggestions"``, ``"cursors"``, ``"unknown_state"``).
        max_diagnostics: the diagnostics of one code kept, by the reader and by the
            connection (1,000); the later ones are counted (``diagnostics-dropped``).
    """

    def __init__(
        self,
        *,
        protocol: int | None = None,
        terminal_limit: int | None = None,
        strict: bool = False,
        provenance: bool = False,
        unstable: Collection[str] = (),
        max_diagnostics: int = DEFAULT_MAX_DIAGNOSTICS,
        block_limit: int | None = None,
    ) -> None:
        self.connection = Connection(
            live=False,
            terminal_limit=terminal_limit,
            block_limit=block_limit,
            unstable=unstable,
            max_diagnostics=max_diagnostics,
        )
        self.origins: list[AdapterOrigin] | None = [] if provenance else None
        """With ``provenance``: what the v1 adapter produced, in order (else ``None``)."""
        self.strict = strict
        self.stopped = False
        """``strict`` only: an error diagnostic stopped the replay; later input is ignored."""
        self.diagnostics: list[Diagnostic] = DiagnosticList(max_diagnostics)
        """The reader's and the v1 adapter's diagnostics (``max_diagnostics`` of each code)."""
        self.failed_requests: list[FailedRequest] = []
        """Requests the agent answered with an error, prompts aside, in log order."""
        self._raw_kinds: Counter[str] = Counter()
        self._typed_kinds: dict[type[Any], int] = {}
        self.messages = 0
        self.stderr_lines = 0
        self.first_time: float | None = None
        """The time of the first record that has one (formats with a clock), else ``None``."""
        self.last_time: float | None = None
        """The time of the last record that has one, else ``None``."""
        self.clock: str | None = None
        """``"epoch"`` (seconds since 1970) or ``"relative"`` (seconds since the recording
        began) for :attr:`first_time` / :attr:`last_time`; ``None`` without times."""
        self.session_times: dict[str, tuple[float, float]] = {}
        """Per session id: the times of the first and last record naming the session (its
        ``sessionId`` in the params or the result), for records that have a time."""
        self.skipped_unknown_direction = 0
        # v1 or v2, per connection of the log, and the v1 routing (V1-TO-V2.md 1.3)
        self._switch = LogSwitch(self, protocol=protocol, origins=self.origins)

    @property
    def version(self) -> int | None:
        """The protocol version of the log's current connection (``None``: undecided)."""
        return self._switch.version

    def apply_record(self, record: Any) -> None:
        """Apply one :class:`acp_client.logs.LogRecord`, discarding the events (fast path).

        A ``session/update`` record of a v2 log goes straight from its parsed params to the
        session's reducer; everything else takes :meth:`feed_record`.
        """
        if self.strict:
            if self.stopped:
                return
            mark = self.error_mark()
            self._apply_record(record)
            self._stop_on_error(mark)
            return
        self._apply_record(record)

    def note_time(
        self, first: float, last: float, clock: str, session_id: str | None = None
    ) -> None:
        """Records with times from ``first`` to ``last`` were read (log order).

        ``session_id``: the session those records name, if any (:attr:`session_times`).
        """
        if self.first_time is None:
            self.first_time = first
            self.clock = clock
        self.last_time = last
        if session_id is not None:
            seen = self.session_times.get(session_id)
            self.session_times[session_id] = (first if seen is None else seen[0], last)

    def _apply_record(self, record: Any) -> None:
        params = self._typed_update(record.direction, record.message)
        if params is None:
            self.feed_record(record)
            return
        conn = self.connection
        session = conn._sessions.get(params.session_id)
        if session is None or session.closed:
            conn.receive_update(params, line=record.line)
            return
        session.line = conn.line = record.line
        session.apply(params.update)
        if session.side_events:
            session.side_events.clear()

    def apply_updates(
        self,
        first_line: int,
        notes: list[Any],
        times: list[float | None] | None = None,
        clock: str = "epoch",
    ) -> None:
        """Apply agent ``session/update`` notifications of consecutive log lines, typed.

        The log reader's fast lane (v2 logs, not strict): each update as
        :meth:`apply_record` would apply the record of its line, without the record.
        ``times``: each line's record time (``None``: it has none), for :meth:`note_time`.
        """
        conn = self.connection
        sessions = conn._sessions
        kinds = self._typed_kinds
        n = len(notes)
        updates = [note.params.update for note in notes]
        for cls, count in Counter(map(type, updates)).items():
            kinds[cls] = kinds.get(cls, 0) + count
        lines = list(range(first_line, first_line + n))
        session_ids = [note.params.session_id for note in notes]
        events: list[Event] = []
        if session_ids.count(session_ids[0]) == n:
            runs: Iterable[tuple[str, list[int]]] = ((session_ids[0], lines),)
        else:
            runs = runs_of(session_ids, lines)
        for session_id, run in runs:
            session = sessions.get(session_id)
            start = run[0] - first_line
            if times:
                self._note_run_times(times, start, start + len(run), clock, session_id)
            if session is None or session.closed:
                for line in run:  # creates the session; a closed one takes the rules
                    conn.receive_update(notes[line - first_line].params, line=line)
                continue
            session.apply_run(updates[start : start + len(run)], events, run)
            events.clear()
        conn.line = first_line + n - 1
        self.messages += n

    def _note_run_times(
        self, times: list[float | None], start: int, end: int, clock: str, session_id: str
    ) -> None:
        first, last = times[start], times[end - 1]
        if first is None or last is None:  # a record without a time: the ones with one
            timed = [t for t in times[start:end] if t is not None]
            if not timed:
                return
            first, last = timed[0], timed[-1]
        self.note_time(first, last, clock, session_id)

    def _typed_update(self, direction: Any, message: Any) -> _Params | None:
        """The params of a well-formed v2 ``session/update`` from the agent (counted), else None."""
        if not (
            self._switch.version == 2
            and direction == "incoming"
            and type(message) is dict
            and "id" not in message
            and message.get("method") == "session/update"
            and message.get("jsonrpc") == "2.0"
        ):
            return None
        try:
            params: _Params = _to_params(message.get("params"), _Params)
        except (msgspec.ValidationError, UnicodeEncodeError):  # a lone surrogate key
            return None
        self.messages += 1
        update = params.update
        if type(update) is dict:
            self._count_raw(message)
        else:
            kinds = self._typed_kinds
            kinds[type(update)] = kinds.get(type(update), 0) + 1
        return params

    def feed_record(self, record: Any) -> list[Event]:
        """Apply one :class:`acp_client.logs.LogRecord`."""
        if record.kind != "message":
            self.stderr_lines += 1
            return []
        if record.direction not in ("incoming", "outgoing"):
            self.skipped_unknown_direction += 1
            return []
        return self.feed(record.direction, record.message, line=record.line)

    @property
    def update_kinds(self) -> Counter[str]:
        """How many updates of each ``sessionUpdate`` kind the log held."""
        out = Counter(self._raw_kinds)
        for cls, count in self._typed_kinds.items():
            out[cls.__struct_config__.tag] += count
        return out

    def error_mark(self) -> tuple[int, int]:
        """Where the diagnostics end now (for :meth:`errors_since`)."""
        return len(self.connection.diagnostics), len(self.diagnostics)

    def errors_since(self, mark: tuple[int, int]) -> bool:
        """Whether an error diagnostic was added since ``mark``."""
        conn, own = mark
        return any(d.severity == "error" for d in self.connection.diagnostics[conn:]) or any(
            d.severity == "error" for d in self.diagnostics[own:]
        )

    def _stop_on_error(self, mark: tuple[int, int]) -> None:
        if self.strict and self.errors_since(mark):
            self.stopped = True
            self._switch.buffer = []

    def feed(self, direction: str, message: Any, *, line: int | None = None) -> list[Event]:
        """Apply one JSON-RPC message (a dict) sent in ``direction``."""
        if self.stopped:
            return []
        if self.strict:
            mark = self.error_mark()
            events = self._feed(direction, message, line)
            self._stop_on_error(mark)
            return events
        return self._feed(direction, message, line)

    def _feed(self, direction: str, message: Any, line: int | None) -> list[Event]:
        params = self._typed_update(direction, message)
        if params is not None:
            return self.connection.receive_update(params, line=line)
        self.messages += 1
        if direction == "incoming" and isinstance(message, dict):
            self._count_raw(message)
        return self._switch.feed(direction, message, line)

    def _count_raw(self, message: dict[str, Any]) -> None:
        params = message.get("params")
        if type(params) is dict:
            update = params.get("update")
            if type(update) is dict:
                kind = update.get("sessionUpdate")
                self._raw_kinds[kind if isinstance(kind, str) else "(invalid)"] += 1

    def _note_failures(self, events: list[Event], line: int | None) -> None:
        for event in events:
            if type(event) is not ResponseReceived:
                continue
            method = self._switch.logged_method(event.request_id, event.method)
            if (
                event.error is not None
                and method != "session/prompt"
                # -32002 closes the session as a success does (11.5): nothing failed
                and not (method == "session/close" and event.error.code == -32002)
            ):
                failed = FailedRequest(line, method, event.session_id, event.error)
                self.failed_requests.append(failed)

    def finish(self) -> list[Event]:
        """End of the stream: apply anything held back while the version was undecided."""
        if self.stopped:
            self._switch.settle_v1()  # what was applied still gets its protocol version
            return []
        return self._switch.end_connection()

    @property
    def truncated_terminals(self) -> frozenset[tuple[str, str]]:
        """The v1 client terminals whose latest output the client cut at its byte limit.

        ``(sessionId, terminalId)`` pairs, from ``terminal/output``'s ``truncated`` (v2 has
        no field for it, so the snapshot cannot say it; the rendered view does).
        """
        return self._switch.truncated_terminals

    def all_diagnostics(self) -> list[Diagnostic]:
        """Reader, adapter and connection diagnostics, in log order.

        A problem both the reader and the connection report for the same line (a response
        pairing with no request, say) is listed once, as the reader put it.
        """
        seen = {(d.code, d.line) for d in self.diagnostics if d.line is not None}
        merged = [*self.diagnostics]
        merged += [d for d in self.connection.diagnostics if (d.code, d.line) not in seen]
        merged.sort(key=lambda d: d.line if d.line is not None else 0)
        return merged

    def snapshot(self) -> dict[str, Any]:
        """The snapshot of SNAPSHOT.md with every diagnostic of the replay."""
        snap = self.connection.snapshot()
        snap["diagnostics"] = [d.to_json() for d in self.all_diagnostics()]
        return snap


class ReplayResult:
    """The outcome of :func:`replay_log`.

    Attributes:
        replayer: the :class:`Replayer` (its ``connection`` holds the live state).
        format: the log format read (``None`` if none was detected).
        fatal: reading ended on a fatal error (nothing after it was read).
        stopped_early: ``strict`` stopped at the first error.
        bytes_read: size of the (decompressed) input consumed, when known.
    """

    def __init__(
        self, replayer: Replayer, fmt: str | None, fatal: bool, stopped_early: bool
    ) -> None:
        self.replayer = replayer
        self.format = fmt
        self.fatal = fatal
        self.stopped_early = stopped_early

    @property
    def connection(self) -> Connection:
        """The passive connection holding the reconciled state."""
        return self.replayer.connection

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Every diagnostic, in log order."""
        return self.replayer.all_diagnostics()

    @property
    def ok(self) -> bool:
        """Whether the log was read to its end (diagnostics do not matter)."""
        return not self.fatal and not self.stopped_early

    @property
    def dropped_diagnostics(self) -> dict[str, int]:
        """Diagnostics counted but not kept past ``max_diagnostics``, by code."""
        dropped: Counter[str] = Counter()
        for kept in (self.replayer.diagnostics, self.connection.diagnostics):
            if isinstance(kept, DiagnosticList):
                dropped += kept.dropped
        return dict(sorted(dropped.items()))

    @property
    def failed_requests(self) -> list[FailedRequest]:
        """The client's requests the agent answered with an error (prompts aside)."""
        return self.replayer.failed_requests

    def snapshot(self) -> dict[str, Any]:
        """The reconciled state (SNAPSHOT.md)."""
        return self.replayer.snapshot()


def replay_log(
    source: Any,
    *,
    format: str | None = None,
    strict: bool = False,
    perspective: Literal["client", "agent"] | None = None,
    direction: Literal["incoming", "outgoing"] | None = None,
    sides: Mapping[str, str] | None = None,
    protocol: int | None = None,
    terminal_limit: int | None = None,
    block_limit: int | None = None,
    progress: Callable[[int], None] | None = None,
    unstable: Collection[str] = (),
    max_diagnostics: int = DEFAULT_MAX_DIAGNOSTICS,
    **limits: Unpack[ReadLimits],
) -> ReplayResult:
    r"""Replay a stored log (any format of LOG-FORMATS.md, gzip or not) into state.

    ``source`` is a file name, ``"-"`` for standard input, bytes, or a binary file object.
    With ``strict`` the replay stops at the first error diagnostic (of the reader or of
    the state rules). ``progress`` is called now and then with the number of records read.
    ``unstable`` opts the sessions into unstable features (see :class:`Connection`).
    ``limits`` are the reader's (``max_line``, ``max_document``, ``max_decompressed``,
    ``max_ratio``: see :class:`~acp_client.logs.LogReader`); reaching one is a diagnostic,
    and a limit that ends reading makes the result not :attr:`~ReplayResult.ok`.
    ``max_diagnostics`` bounds the diagnostics kept of each code (the rest are counted).
    ``terminal_limit`` / ``block_limit`` bound the bytes each terminal and the content
    items each message, tool call, compaction and session message keep (see ``Session``).

    Example:
        >>> from acp_client import replay_log
        >>> line = (b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s",'
        ...     b'"update":{"sessionUpdate":"state_update","state":"running"}}}\n')
        >>> result = replay_log(line)
        >>> result.snapshot()["sessions"][0]["state"]
        {'state': 'running'}
    """
    return _replay(
        source,
        lane=True,
        protocol=protocol,
        terminal_limit=terminal_limit,
        block_limit=block_limit,
        progress=progress,
        format=format,
        strict=strict,
        perspective=perspective,
        direction=direction,
        sides=sides,
        unstable=unstable,
        max_diagnostics=max_diagnostics,
        **limits,
    )


def _replay(
    source: Any,
    *,
    lane: bool,
    protocol: int | None,
    terminal_limit: int | None,
    progress: Callable[[int], None] | None,
    unstable: Collection[str] = (),
    max_diagnostics: int = DEFAULT_MAX_DIAGNOSTICS,
    block_limit: int | None = None,
    **options: Any,
) -> ReplayResult:
    """:func:`replay_log`; ``lane=False`` reads every record through the per-record path."""
    from .logs import iter_log
    from .logs._lane import FastLane

    replayer = Replayer(
        protocol=protocol,
        terminal_limit=terminal_limit,
        block_limit=block_limit,
        strict=options["strict"],
        unstable=unstable,
        max_diagnostics=max_diagnostics,
    )
    feed = _Feed(replayer, progress)
    with iter_log(source, **options) as items:
        if lane:
            items.reader.lane = FastLane(feed)
        take = feed.take_one
        for item in items:
            take(item)
            if replayer.stopped:
                break
        replayer.finish()  # what was held back, and the v1 adapter's end
        return ReplayResult(
            replayer, items.format, items.fatal, replayer.stopped or items.stopped_early
        )


class _Feed:
    """What a replay does with the reader's output: records, diagnostics and lane runs."""

    __slots__ = ("_count", "_progress", "replayer")

    def __init__(self, replayer: Replayer, progress: Callable[[int], None] | None) -> None:
        self.replayer = replayer
        self._progress = progress
        self._count = 0

    def take_one(self, item: Any) -> None:
        """One record (applied) or diagnostic (kept)."""
        from .logs import LogRecord

        replayer = self.replayer
        if type(item) is LogRecord:
            replayer.apply_record(item)
            if item.time is not None:
                sid = _session_named(item.message)
                replayer.note_time(item.time, item.time, item.clock or "epoch", sid)
            if self._progress is not None:
                self._counted(1)
        else:
            replayer.diagnostics.append(item)

    def take(self, items: list[Any]) -> None:
        """The reader's final items before a lane run."""
        for item in items:
            if not self.replayer.stopped:
                self.take_one(item)

    def lane_open(self) -> bool:
        """Runs may skip the records: a v2 log, not strict (a run stops at no error)."""
        replayer = self.replayer
        return replayer.version == 2 and not replayer.strict

    def lane_undecided(self) -> bool:
        """The log's version is not decided yet (a claimed v2 waits for a telling message)."""
        replayer = self.replayer
        return replayer.version is None and not replayer.strict and not replayer.stopped

    def apply_updates(
        self, first_line: int, notes: list[Any], times: list[float | None], clock: str
    ) -> None:
        """Apply a lane run (see :meth:`Replayer.apply_updates`)."""
        self.replayer.apply_updates(first_line, notes, times, clock)
        if self._progress is not None:
            self._counted(len(notes))

    def _counted(self, n: int) -> None:
        before = self._count
        self._count += n
        if self._count // 20000 > before // 20000:
            assert self._progress is not None
            self._progress(self._count)


def _session_named(message: Any) -> str | None:
    """The ``sessionId`` a record's message names in its params or result, if any."""
    if type(message) is not dict:
        return None
    for key in ("params", "result"):
        part = message.get(key)
        if type(part) is dict:
            sid = part.get("sessionId")
            if type(sid) is str:
                return sid
    return None


def iter_kinds(counter: Mapping[str, int]) -> Iterable[tuple[str, int]]:
    """Update kinds by descending count (for ``--stats``)."""
    return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
