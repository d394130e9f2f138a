"""One summary row per session of a replayed log: :class:`SessionSummary` (docs/summary.md).

:func:`summarize_result` reads a :class:`~acp_client.ReplayResult` through the sessions'
read access (the same stores the snapshot writer reads, SNAPSHOT.md) and counts what fleets
of logs are asked about: turns and stop reasons, prompts, messages, tool calls, permission
requests, terminals, the last usage and cost, diagnostics. It builds no snapshot: only the
counts are made, so a worker process sends back a few hundred bytes per session. A log that
could not be read gives one row with its ``error`` (:func:`error_row`); a log read to its
end without a session gives one row with ``session_id`` ``None``, so that no log is lost.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import msgspec

from ._codec import to_builtins
from ._entities import MessageState, ToolCallState

if TYPE_CHECKING:
    from ._prompts import PermissionState
    from ._replay import ReplayResult
    from ._session import Session

__all__ = ["NO_STOP_REASON", "SessionSummary", "error_row", "summarize_result"]

NO_STOP_REASON = "(none)"
"""The key of ``stop_reasons`` for a turn whose ``idle`` update carried no stop reason."""


class SessionSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One session of one stored log, counted (field by field in docs/summary.md).

    Fields marked *log* are the log's and repeat on every row of that log: group by
    ``path`` before adding them up.

    Attributes:
        path: the log file, as given (or as found in a folder).
        session_id: the session, ``None`` on the row of a log without a session (or that
            failed).
        parent_session_id: the parent of a child session (v2 Preview session tree).
        format: *log* the log format read (``None`` when none was detected).
        protocol_version: the version ``initialize`` negotiated for the session's
            connection (``1`` or ``2``), ``None`` when no ``initialize`` was seen.
        v1: *log* the log was read as ACP v1 (its state comes from the v1 adapter).
        agent_name / agent_version: *log* the agent's ``info`` from ``initialize``.
        first_time / last_time: the time of the first and last record naming the session
            (its ``sessionId`` in the params or the result) that has a time; on the row of
            a log without a session, the log's first and last record time.
        clock: *log* ``"epoch"`` (seconds since 1970, UTC) or ``"relative"`` (seconds
            since the recording began) for those times; ``None`` when the format has none.
        state: the session's last state (``idle``, ``running``, ``requires_action``, a
            custom one), ``None`` before any ``state_update``.
        turns_completed: how many times it went back to ``idle`` (``completedTurns``).
        stop_reasons: stop reason -> how many turns ended with it (``"(none)"``: no reason).
        prompts_accepted / prompts_rejected / prompts_pending: the client's prompts by
            status.
        user_messages / agent_messages / thoughts: messages of the timeline by role.
        tool_calls: tool calls of the timeline; by ``kind`` and by final ``status`` in
            ``tool_calls_by_kind`` / ``tool_calls_by_status`` (the snapshot's values).
        permission_requests: the agent's permission requests; ``permissions_by_outcome``
            counts them as ``pending``, ``cancelled``, ``withdrawn``, or for a chosen option
            its ``kind`` (``allow_once``, ``reject_always`` ...; ``selected`` when the option
            is not among the request's).
        terminals / terminal_bytes: the session's terminals and the output bytes they
            received since their last full output (kept and dropped by a retention limit).
        usage_used / usage_size / cost_amount / cost_currency: the last ``usage_update``.
        history_replay: the latest history replay of the v2 Preview: ``complete``,
            ``truncated``, ``replaying`` or ``live``; ``None`` without one.
        diagnostics_by_code / diagnostics_by_severity: *log* the replay's diagnostics.
        complete: *log* the log was read to its end (not cut by a fatal error or
            ``strict``).
        error: *log* why the log could not be read; then every other field is empty.
    """

    path: str
    session_id: str | None = None
    parent_session_id: str | None = None
    format: str | None = None
    protocol_version: int | None = None
    v1: bool = False
    agent_name: str | None = None
    agent_version: str | None = None
    first_time: float | None = None
    last_time: float | None = None
    clock: str | None = None
    state: str | None = None
    turns_completed: int = 0
    stop_reasons: dict[str, int] = msgspec.field(default_factory=dict)
    prompts_accepted: int = 0
    prompts_rejected: int = 0
    prompts_pending: int = 0
    user_messages: int = 0
    agent_messages: int = 0
    thoughts: int = 0
    tool_calls: int = 0
    tool_calls_by_kind: dict[str, int] = msgspec.field(default_factory=dict)
    tool_calls_by_status: dict[str, int] = msgspec.field(default_factory=dict)
    permission_requests: int = 0
    permissions_by_outcome: dict[str, int] = msgspec.field(default_factory=dict)
    terminals: int = 0
    terminal_bytes: int = 0
    usage_used: int | None = None
    usage_size: int | None = None
    cost_amount: int | float | None = None
    cost_currency: str | None = None
    history_replay: str | None = None
    diagnostics_by_code: dict[str, int] = msgspec.field(default_factory=dict)
    diagnostics_by_severity: dict[str, int] = msgspec.field(default_factory=dict)
    complete: bool = False
    error: str | None = None


#: The fields whose values are ``{name: count}`` maps (nested in JSON, JSON text in CSV).
COUNT_FIELDS = (
    "stop_reasons",
    "tool_calls_by_kind",
    "tool_calls_by_status",
    "permissions_by_outcome",
    "diagnostics_by_code",
    "diagnostics_by_severity",
)


def error_row(path: str, error: str) -> SessionSummary:
    """The one row of a log that could not be read: its path and why."""
    return SessionSummary(path=path, error=error)


def summarize_result(path: str, result: ReplayResult) -> list[SessionSummary]:
    """The rows of one replayed log: one per session in first-seen order (at least one)."""
    replayer = result.replayer
    conn = result.connection
    diagnostics = result.diagnostics
    if result.fatal:
        errors = [d for d in diagnostics if d.severity == "error"]
        return [error_row(path, _why(errors[-1]) if errors else "the log could not be read")]
    info = conn.agent_info
    log: dict[str, Any] = {
        "path": path,
        "format": result.format,
        "v1": replayer.version == 1,
        "agent_name": info.name if info is not None else None,
        "agent_version": info.version if info is not None else None,
        "clock": replayer.clock,
        "diagnostics_by_code": dict(Counter(d.code for d in diagnostics)),
        "diagnostics_by_severity": dict(Counter(d.severity for d in diagnostics)),
        "complete": result.ok,
    }
    sessions = conn.sessions.values()
    if not sessions:  # the log's own first and last record times
        return [SessionSummary(**log, first_time=replayer.first_time, last_time=replayer.last_time)]
    version = conn.protocol_version
    times = replayer.session_times
    return [_session_row(session, version, log, times) for session in sessions]


def _session_row(
    session: Session,
    version: int | None,
    log: dict[str, Any],
    times: dict[str, tuple[float, float]],
) -> SessionSummary:
    roles: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    for entry in session.timeline:
        kind = type(entry)
        if kind is MessageState:
            roles[entry.role] += 1  # type: ignore[union-attr]
        elif kind is ToolCallState:
            call: ToolCallState = entry  # type: ignore[assignment]
            kinds[call.kind if call.kind is not None else "other"] += 1
            statuses[call.effective_status] += 1
    prompts = Counter(prompt.status for prompt in session.prompts)
    permissions = Counter(_outcome(perm) for perm in session.permission_requests)
    terminals = session.terminals
    usage = session.usage
    cost = usage["cost"] if usage is not None else None
    replay = session.tree.replay
    turns = session.completed_turns
    first, last = times.get(session.session_id, (None, None))
    return SessionSummary(
        **log,
        first_time=first,
        last_time=last,
        session_id=session.session_id,
        parent_session_id=session.tree.parent_id,
        protocol_version=session.protocol_version
        if session.protocol_version is not None
        else version,
        state=session.state_name,
        turns_completed=len(turns),
        stop_reasons=dict(Counter(NO_STOP_REASON if r is None else r for r in turns)),
        prompts_accepted=prompts["accepted"],
        prompts_rejected=prompts["rejected"],
        prompts_pending=prompts["pending"],
        user_messages=roles["user"],
        agent_messages=roles["agent"],
        thoughts=roles["thought"],
        tool_calls=sum(kinds.values()),
        tool_calls_by_kind=dict(kinds),
        tool_calls_by_status=dict(statuses),
        permission_requests=len(session.permission_requests),
        permissions_by_outcome=dict(permissions),
        terminals=len(terminals),
        terminal_bytes=sum(term.received_bytes for term in terminals.values()),
        usage_used=usage["used"] if usage is not None else None,
        usage_size=usage["size"] if usage is not None else None,
        cost_amount=cost.amount if cost is not None else None,
        cost_currency=cost.currency if cost is not None else None,
        history_replay=_replay_phase(replay) if replay is not None and replay.shown else None,
    )


def _why(diagnostic: Any) -> str:
    """The fatal diagnostic as an error: ``line 3: code: message`` (where it was)."""
    where = f"line {diagnostic.line}: " if diagnostic.line is not None else ""
    return f"{where}{diagnostic.code}: {diagnostic.message}"


def _replay_phase(replay: Any) -> str:
    if replay.complete:
        return "complete"
    if replay.truncated:
        return "truncated"
    return str(replay.phase)


def _outcome(perm: PermissionState) -> str:
    """``pending``, ``cancelled``, ``withdrawn``, or the kind of the option chosen."""
    if perm.status != "answered":
        return perm.status
    outcome = to_builtins(perm.outcome)
    if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
        name = outcome.get("outcome") if isinstance(outcome, dict) else None
        return name if isinstance(name, str) else "answered"
    request = perm.request
    options = request.get("options") if isinstance(request, dict) else request.options
    for option in to_builtins(options) or ():
        if isinstance(option, dict) and option.get("optionId") == outcome.get("optionId"):
            kind = option.get("kind")
            return kind if isinstance(kind, str) else "selected"
    return "selected"
