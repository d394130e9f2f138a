"""What each message changes, by method: the per-method effects of one connection.

Owns (ACP-V2-CLIENT-STATE.md 1.3-1.8, 10-12; prompt-lifecycle-v2.md): the effects of the
agent's requests and notifications, of the responses to the client's requests (tables
``method -> handler``: :data:`RESPONSE_EFFECTS`, :data:`REQUEST_EFFECTS`), of what the
client sent, and the permission answers. Every handler takes a :class:`~._context.Context`
(the connection's collaborators) and the events list; none knows the connection.

Live and passive (log replay) connections differ only in what the client owes the agent at
once (``cancelled`` outcomes, -32601/-32602 answers, batch arrays): :class:`Live` and
:class:`Passive` decide it, one chosen when the connection is built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from msgspec import UNSET

from . import _events as ev
from . import _schema as s
from ._checks import (
    command_problems,
    config_problems,
    elicitation_problem,
    option_problems,
    relative_path,
)
from ._codec import Decoder, convert
from ._context import Context, session_id_of
from ._entities import TerminalState, ToolCallState
from ._errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    RemoteProtocolError,
)
from ._prompts import PermissionState, PromptState
from ._rpc import Pending, RequestId
from ._session import Session

__all__ = [
    "Live",
    "Passive",
    "answer_permission",
    "apply_update",
    "dispatch",
    "displace",
    "field",
    "request_sent",
    "response_received",
]

Events = list[ev.Event]
_BUSY = frozenset({"running", "requires_action"})
_DECODER = Decoder()


def field(obj: Any, name: str, wire_name: str | None = None) -> Any:
    """A field of a decoded Struct, or of raw params (by its wire name); ``UNSET`` if absent."""
    if isinstance(obj, dict):
        return obj.get(wire_name or name, UNSET)
    return getattr(obj, name, UNSET)


def _replays(params: Any) -> bool:
    """Whether ``session/resume`` params (or raw ones) ask for a replay (``replayFrom``, 12.3)."""
    replay_from = field(params, "replay_from", "replayFrom")
    return replay_from is not UNSET and replay_from is not None


def _r8_result(method: str, result: Any) -> bool:
    """A prompt result without a string ``messageId`` (R8: accepted unbound, one warning).

    That is also a result that is no object at all (``null``, ``"ok"``): it has no id either.
    """
    return method == "session/prompt" and not (
        isinstance(result, dict) and isinstance(result.get("messageId"), str)
    )


def _salvage(value: Any, tp: Any) -> Any:
    """``value`` (part of an answer that failed validation) as ``tp`` if readable, else ``None``."""
    if value is None:
        return None
    try:
        return convert(value, tp)
    except RemoteProtocolError:
        return None


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _cancelled_entity(session: Session, params: Any) -> ToolCallState | TerminalState | None:
    """The tool call or terminal a ``tool_call/cancel`` / ``terminal/cancel`` names."""
    tool_call_id = getattr(params, "tool_call_id", None)
    if isinstance(tool_call_id, str):
        return session.tool_calls.get(tool_call_id)
    terminal_id = getattr(params, "terminal_id", None)
    if isinstance(terminal_id, str):
        return session.terminals.get(terminal_id)
    return None


# ----------------------------------------------------------------- the mode


class Passive:
    """A log replayed: the client's messages come from the log, so nothing is owed."""

    __slots__ = ("ctx",)

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def agent_session(self, session_id: str, events: Events) -> Session:
        """The session an agent message names (created if new)."""
        return self.ctx.sessions.session(session_id, events)

    def begin_batch(self) -> None:
        """A batch of the agent's is applied (live: its replies go out as one array, 1.5)."""

    def end_batch(self) -> None:
        """The batch is applied."""

    def expect(self, rid: RequestId) -> None:
        """The agent's request ``rid`` is tracked until the client answers it."""

    def forget(self, rid: RequestId) -> None:
        """The agent's request ``rid`` will never be answered (its id was reused)."""

    def refuse(self, rid: RequestId, code: int, message: str) -> None:
        """A request of the agent's that cannot be taken (an update with an id, say)."""

    def malformed_request(self, rid: RequestId, method: Any, code: int, message: str) -> None:
        """A request with malformed params: in a log, the client's answer follows."""
        self.ctx.rpc.pending_in[rid] = (method if isinstance(method, str) else "", None, None)

    def invalid_entry(self, message: str) -> None:
        """An invalid entry without an id (or an empty batch)."""

    def permission_withdrawn(self, perm: PermissionState, events: Events) -> None:
        """The agent withdrew a pending permission request (``$/cancel_request``)."""

    def elicitation_withdrawn(self, rid: RequestId) -> None:
        """The agent withdrew a pending ``elicitation/create``."""

    def cancel_permissions(self, session: Session, events: Events) -> None:
        """The client cancelled or closed the session: what it waits to decide is moot."""

    def permission_requested(
        self, session: Session, perm: PermissionState, tool_call_id: str | None, events: Events
    ) -> None:
        """A permission request arrived (live: moot at once if its work is cancelled)."""

    def agent_request(self, rid: RequestId, method: str, params: Any) -> None:
        """Another request arrived (live: answered at once unless the embedder serves it)."""


class Live(Passive):
    """Attached to an agent: answers at once what the protocol makes the client owe."""

    __slots__ = ()

    def agent_session(self, session_id: str, events: Events) -> Session:
        """The session an agent message names; one never announced is unusual (12.5)."""
        ctx = self.ctx
        if session_id not in ctx.sessions.by_id and not any(
            p.method == "session/new" for p in ctx.rpc.pending_out.values()
        ):
            ctx.notes.note(
                "unannounced-session",
                f"the agent named session {session_id!r}, which no session/new or"
                " session/resume announced (12.5); it is created",
                session_id=session_id,
            )
        return ctx.sessions.session(session_id, events)

    def begin_batch(self) -> None:
        """A batch of the agent's is applied: its replies go out as one array (1.5)."""
        self.ctx.rpc.begin_batch()

    def end_batch(self) -> None:
        """The batch is applied: its array is owed once every request of it is answered."""
        self.ctx.rpc.end_batch()

    def expect(self, rid: RequestId) -> None:
        """In a batch, the answer to ``rid`` joins the batch's array."""
        self.ctx.rpc.expect(rid)

    def forget(self, rid: RequestId) -> None:
        """A batch no longer waits for the reply to ``rid``."""
        self.ctx.rpc.forget(rid)

    def refuse(self, rid: RequestId, code: int, message: str) -> None:
        """Answer the request with an error at once."""
        self.ctx.rpc.expect(rid)
        self.ctx.rpc.respond_error(rid, code, message)

    def malformed_request(self, rid: RequestId, method: Any, code: int, message: str) -> None:
        """A request with malformed params is answered -32602 (section 1.8)."""
        self.refuse(rid, code, message)

    def invalid_entry(self, message: str) -> None:
        """1.5: an invalid entry (or an empty batch) gets its own -32600 with id null."""
        self.ctx.rpc.respond_error(None, INVALID_REQUEST, message)

    def permission_withdrawn(self, perm: PermissionState, events: Events) -> None:
        """Answered ``cancelled``: the agent may still wait for an answer."""
        answer_permission(self.ctx, perm, None, events)

    def elicitation_withdrawn(self, rid: RequestId) -> None:
        """Answered ``cancel``."""
        self.ctx.rpc.respond(rid, {"action": "cancel"})
        self.ctx.rpc.pending_in.pop(rid, None)

    def cancel_permissions(self, session: Session, events: Events) -> None:
        """Pending permission requests are answered ``cancelled``, elicitations ``cancel``."""
        rpc = self.ctx.rpc
        for perm in list(session.permissions.values()):
            if perm.status == "pending" and perm.request_id in rpc.pending_in:
                answer_permission(self.ctx, perm, None, events)
        for rid, (method, _params, sid) in list(rpc.pending_in.items()):
            if method == "elicitation/create" and sid == session.session_id:
                del rpc.pending_in[rid]
                rpc.respond(rid, {"action": "cancel"})  # R19

    def permission_requested(
        self, session: Session, perm: PermissionState, tool_call_id: str | None, events: Events
    ) -> None:
        """Answered ``cancelled`` at once if its session is closing or its work cancelled."""
        if session.lifecycle == "closing" or (  # 11.5: the close cancels the work
            session.cancel_requested and not session.in_background(tool_call_id, perm.terminal_id)
        ):
            answer_permission(self.ctx, perm, None, events)

    def agent_request(self, rid: RequestId, method: str, params: Any) -> None:
        """1.3: an unknown request is answered -32601; 1.8: malformed params -32602."""
        ctx = self.ctx
        served = method in ctx.extension_methods or (
            method == "elicitation/create" and ctx.offer.elicitation
        )
        if served:
            if method == "elicitation/create":
                malformed = elicitation_problem(params)
                if malformed is not None:
                    del ctx.rpc.pending_in[rid]
                    ctx.rpc.respond_error(rid, INVALID_PARAMS, f"elicitation/create: {malformed}")
        else:
            del ctx.rpc.pending_in[rid]
            ctx.rpc.respond_error(rid, METHOD_NOT_FOUND, f"method not found: {method}")


# ---------------------------------------------------------------- permissions


def answer_permission(
    ctx: Context, perm: PermissionState, option_id: str | None, events: Events
) -> None:
    """Owe the agent the answer to a permission request: an option, or ``cancelled``."""
    outcome: s.RequestPermissionOutcome = (
        s.CancelledPermissionOutcome()
        if option_id is None
        else s.SelectedPermissionOutcome(option_id=option_id)
    )
    ctx.rpc.pending_in.pop(perm.request_id, None)
    ctx.rpc.respond(perm.request_id, s.RequestPermissionResponse(outcome=outcome))
    _record_answer(perm, outcome, events)


def _record_answer(perm: PermissionState, outcome: Any, events: Events) -> None:
    plain = msgspec.to_builtins(outcome) if isinstance(outcome, msgspec.Struct) else outcome
    perm.outcome = plain
    if perm.status != "withdrawn":
        cancelled = isinstance(plain, dict) and plain.get("outcome") == "cancelled"
        perm.status = "cancelled" if cancelled else "answered"
    events.append(
        ev.PermissionAnswered(session_id=perm.session_id, request_id=perm.request_id, outcome=plain)
    )


def _withdraw(perm: PermissionState | None, events: Events) -> bool:
    """A pending permission request the agent gave up is ``withdrawn`` (True if it was)."""
    if perm is None or perm.status != "pending":
        return False
    perm.status = "withdrawn"
    events.append(ev.PermissionWithdrawn(session_id=perm.session_id, request_id=perm.request_id))
    return True


# ------------------------------------------------------------ agent -> client


def apply_update(ctx: Context, params: s.UpdateSessionNotification, events: Events) -> None:
    """Apply one ``session/update`` to its session (created if new, 12.5)."""
    session = ctx.sessions.by_id.get(params.session_id)
    if session is None:
        session = ctx.mode.agent_session(params.session_id, events)
    session.line = ctx.notes.line
    if session.closed:
        ctx.notes.note(
            "update-after-close",
            "session/update for a closed session (applied, R38)",
            session_id=session.session_id,
        )
    events.append(session.apply(params.update))
    if session.side_events:
        events.extend(session.side_events)
        session.side_events.clear()


def _notification_received(ctx: Context, message: s.Notification, events: Events) -> None:
    method = message.method
    if method == "session/update":
        apply_update(ctx, message.params, events)
    elif method == "$/cancel_request":
        _agent_cancel_request(ctx, message.params.request_id, events)
    # other notifications (elicitation/complete, extensions) change no state


def _agent_cancel_request(ctx: Context, request_id: RequestId, events: Events) -> None:
    pending = ctx.rpc.pending_in.get(request_id)
    if pending is None:
        return  # unknown or answered: ignored (R62)
    method, _params, sid = pending
    if method == "session/request_permission" and sid is not None:
        perm = ctx.sessions.by_id[sid].permissions.get(request_id)
        if _withdraw(perm, events):
            ctx.mode.permission_withdrawn(perm, events)  # type: ignore[arg-type]
    elif method == "elicitation/create":
        ctx.mode.elicitation_withdrawn(request_id)


def displace(ctx: Context, rid: RequestId, events: Events) -> None:
    """The agent reused the id of a request still pending (1.2 forbids it).

    The new request replaces the old one, as a log's reader pairs them (LOG-FORMATS
    1.10): an answer with that id can only be read as the new request's. The old one
    can no longer be answered on its own, so nothing waits for it: a pending permission
    request is ``withdrawn`` (the agent gave it up), and a batch it came in no longer
    waits for its reply (else the batch's answers would never be written).
    """
    method, _params, sid = ctx.rpc.pending_in.pop(rid)
    ctx.notes.note(
        "duplicate-request-id",
        f"the agent reused pending request id {rid!r}: its new request replaces"
        f" the {method} request, which can no longer be answered",
        session_id=sid,
    )
    ctx.mode.forget(rid)
    session = ctx.sessions.by_id.get(sid) if sid is not None else None
    if method == "session/request_permission" and session is not None:
        _withdraw(session.permissions.get(rid), events)


def _request_received(ctx: Context, message: s.Request, events: Events) -> None:
    rid = message.id
    if rid in ctx.rpc.pending_in:
        displace(ctx, rid, events)
    method = message.method
    params = message.params
    sid = session_id_of(params)
    ctx.rpc.pending_in[rid] = (method, params, sid)
    ctx.mode.expect(rid)  # in a batch, its answer joins the batch's array
    if method == "session/request_permission":
        _permission_requested(ctx, rid, params, events)
        return
    if sid is not None:
        ctx.mode.agent_session(sid, events)
    events.append(ev.AgentRequestReceived(request_id=rid, method=method, params=params))
    ctx.mode.agent_request(rid, method, params)


def _permission_requested(
    ctx: Context, rid: RequestId, params: s.RequestPermissionRequest, events: Events
) -> None:
    session = ctx.mode.agent_session(params.session_id, events)
    sid = session.session_id
    subject = params.subject
    tool_call_id = None
    if type(subject) is s.ToolCallPermissionSubject:
        session._ordinal += 1
        events.append(session.apply_tool_call_fields(subject.tool_call))
        if session.side_events:  # a terminal its content created
            events.extend(session.side_events)
            session.side_events.clear()
        tool_call_id = subject.tool_call.tool_call_id
    elif type(subject) is s.CommandPermissionSubject and isinstance(subject.tool_call_id, str):
        tool_call_id = subject.tool_call_id
    for problem in option_problems(params.options):
        ctx.notes.note("invalid-permission-request", problem, session_id=sid)
    if params.extra:
        session._check_shadowed(params.extra, "permission request", rid)
    if type(subject) is s.CommandPermissionSubject and relative_path(subject.cwd):
        ctx.notes.note(
            "relative-path",
            f"permission request {rid!r}: command cwd {subject.cwd!r} (A21)",
            session_id=sid,
        )
    perm = PermissionState(rid, sid, params, tool_call_id)
    session.add_permission(perm)
    events.append(ev.PermissionRequested(session_id=sid, request_id=rid, request=params))
    ctx.mode.permission_requested(session, perm, tool_call_id, events)


def response_received(ctx: Context, message: s.Response | s.ErrorResponse, events: Events) -> None:
    """A response from the agent: its request's effects (:data:`RESPONSE_EFFECTS`)."""
    rid = message.id
    pending = ctx.rpc.pending_out.pop(rid, None) if rid is not None else None
    notes = ctx.notes
    if pending is None:
        ctx.rpc.unmatched.append(message)
        notes.note("orphan-response", f"response to unknown request id {rid!r} (kept raw)")
        events.append(ev.UnmatchedResponseReceived(message=message))
        return
    method = pending.method
    error = message.error if type(message) is s.ErrorResponse else None
    result: Any = None
    if error is None:
        start = len(notes.diagnostics)
        try:
            result = _DECODER.decode_result(
                method,
                message.result,  # type: ignore[union-attr]
                diagnostics=notes.diagnostics,
            )
        except RemoteProtocolError as exc:
            result = message.result  # type: ignore[union-attr]
            if not _r8_result(method, result):  # R8 has its own diagnostic
                notes.note(
                    "invalid-result",
                    f"{method} result: {exc.message} at `{exc.path}`",
                    "error",
                    pending.session_id,
                    exc.path,
                )
        if len(notes.diagnostics) > start:
            notes.stamp(start, pending.session_id)
    effect = RESPONSE_EFFECTS.get(method)
    if effect is not None:
        effect(ctx, rid, pending, result, error, events)  # type: ignore[arg-type]
    events.append(
        ev.ResponseReceived(
            request_id=rid,  # type: ignore[arg-type]
            method=method,
            result=result,
            error=error,
            session_id=pending.session_id,
        )
    )


# ------------------------------------------------- responses to the client's requests


def _on_initialize(
    ctx: Context, rid: RequestId, pending: Pending, result: Any, error: Any, events: Events
) -> None:
    offer = ctx.offer
    version = field(result, "protocol_version", "protocolVersion")
    asked = field(pending.params, "protocol_version", "protocolVersion")
    if type(version) is int and type(asked) is int and not 1 <= version <= asked:
        ctx.notes.note(
            "protocol-version-mismatch",
            f"initialize asked for protocol {asked}; the agent answered {version},"
            " which is not a version the client offered (C2)",
            "error",
        )
    if error is None and isinstance(result, (s.InitializeResponse, dict)):
        offer.answered = True
    if isinstance(result, s.InitializeResponse):
        offer.protocol_version = result.protocol_version
        offer.agent_info = result.info
        caps = result.capabilities
        offer.agent_capabilities = caps if isinstance(caps, s.AgentCapabilities) else None
        methods = result.auth_methods
        offer.auth_methods = list(methods) if isinstance(methods, list) else []
    elif isinstance(result, dict):
        # An answer that does not fit the schema still tells the negotiated version, and
        # what it offers where that part can be read (C4, C6, C7 go by it).
        if type(result.get("protocolVersion")) is int:
            offer.protocol_version = result["protocolVersion"]
        offer.agent_capabilities = _salvage(result.get("capabilities"), s.AgentCapabilities)
        readable = (_salvage(m, s.AuthMethod) for m in _items(result.get("authMethods")))
        offer.auth_methods = [m for m in readable if m is not None]  # the field skips the rest


def _check_lists(ctx: Context, session: Session, commands: Any, config: Any) -> None:
    """A29 and A19 hold for the lists of a result as for those of an update."""
    sid = session.session_id
    if isinstance(commands, list) and session.protocol_version != 1:
        for problem in command_problems(commands):
            ctx.notes.note("invalid-commands", problem, "warning", sid)
    if isinstance(config, list):
        for problem in config_problems(config):
            ctx.notes.note("invalid-config", problem, "warning", sid)


def _setup_lists(ctx: Context, session: Session, pending: Pending, result: Any) -> None:
    commands = getattr(result, "available_commands", UNSET)
    config = getattr(result, "config_options", UNSET)
    _check_lists(ctx, session, commands, config)
    # R50: only if no update of that kind was applied since the request was sent (a
    # session unknown at send time had none before it).
    if session.commands_updates == max(pending.commands_mark, 0):
        session.available_commands = list(commands) if isinstance(commands, list) else []
    if session.config_updates == max(pending.config_mark, 0):
        session.config_options = list(config) if isinstance(config, list) else []


def _on_new_session(
    ctx: Context, rid: RequestId, pending: Pending, result: Any, error: Any, events: Events
) -> None:
    if error is not None or not isinstance(result, s.NewSessionResponse):
        return
    existed = result.session_id in ctx.sessions.by_id
    session = ctx.sessions.session(result.session_id)
    if not existed:
        events.append(ev.SessionCreated(session_id=session.session_id, announced=True))
    session.announced = True
    session.created_by_new = True
    if pending.marks is not None:  # the counts when the request was sent (R50)
        marks = pending.marks.get(session.session_id, (0, 0))
        pending.commands_mark, pending.config_mark = marks
    _setup_lists(ctx, session, pending, result)
    events.append(ev.SessionAnnounced(session_id=session.session_id))


def _on_resume(
    ctx: Context, rid: RequestId, pending: Pending, result: Any, error: Any, events: Events
) -> None:
    sid = pending.session_id
    if sid is None:
        return
    session = ctx.sessions.session(sid, events)
    # (a session/close sent meanwhile changed the lifecycle, not the replay under way)
    replay = session.lifecycle == "replaying" or session._previous is not None
    if not _replays(pending.params):
        session.end_resume()
    if error is None:
        if session.state_updates == pending.state_mark:
            ctx.notes.note(
                "resume-without-snapshot",
                "session/resume succeeded without a state_update before its response"
                " (12.3, A17); the state stays as it was",
                session_id=sid,
            )
        session.announced = True
        if isinstance(result, s.ResumeSessionResponse):
            _setup_lists(ctx, session, pending, result)
        events.append(ev.SessionAnnounced(session_id=sid))
    if replay:
        unretained = session.end_replay(error is None)
        events.append(ev.ReplayFinished(session_id=sid, ok=error is None, unretained=unretained))
    reopening, session._reopening = session._reopening, False
    # 10.5 / 12.3 step 5: -32002 says the session is gone; a closed session whose resume
    # failed stays closed (it was closed when the resume was sent: nothing new).
    gone = error is not None and (reopening or getattr(error, "code", None) == RESOURCE_NOT_FOUND)
    if gone and session.set_closed() and not reopening:
        events.append(ev.SessionClosed(session_id=sid))


def _on_prompt(
    ctx: Context, rid: RequestId, pending: Pending, result: Any, error: Any, events: Events
) -> None:
    prompt = ctx.prompts.get(rid)
    sid = pending.session_id
    if prompt is None or sid is None:
        return
    session = ctx.sessions.session(sid, events)
    if error is not None:
        prompt.status = "rejected"
        prompt.error = error
        events.append(ev.PromptRejected(session_id=sid, request_id=rid, error=error))
        return
    prompt.status = "accepted"
    prompt.turns_before = len(session.completed_turns)
    echo = (
        session.message("user", result.message_id) if isinstance(result, s.PromptResponse) else None
    )
    session.prompt_accepted(None if echo is None else echo.first_seen)
    if isinstance(result, s.PromptResponse):
        if echo is not None:  # placed before the response: its turn is the one it was in
            prompt.turns_before = session.turns_completed_before(echo.first_seen)
        if result.message_id in session.prompts_by_message:
            ctx.notes.note(
                "duplicate-message-id",
                f"two prompts were answered with messageId {result.message_id!r} (R10)",
                session_id=sid,
            )
        echoed = session.link_prompt(prompt, result.message_id)
        events.append(
            ev.PromptAccepted(
                session_id=sid, request_id=rid, message_id=result.message_id, echoed=echoed
            )
        )
    else:
        prompt.unbound = True
        ctx.notes.note(
            "prompt-response-without-message-id",
            "session/prompt result without a string `messageId` (R8)",
            session_id=sid,
        )
        events.append(
            ev.PromptAccepted(session_id=sid, request_id=rid, message_id=None, echoed=False)
        )


def _on_close(
    ctx: Context, rid: RequestId, pending: Pending, result: Any, error: Any, events: Events
) -> None:
    sid = pending.session_id
    if sid is None:
        return
    session = ctx.sessions.session(sid, events)
    if error is None and session.state is not None and session.state.state in _BUSY:
        ctx.notes.note(
            "close-while-working",
            f"session/close of {sid!r} succeeded while its work was still"
            f" {session.state.state!r}: it must end with idle `cancelled` first (A18)",
            session_id=sid,
        )
    if error is None or error.code == RESOURCE_NOT_FOUND:
        if session.set_closed(by_close=True):  # a second close of a closed one is no news
            events.append(ev.SessionClosed(session_id=sid))
    elif session.lifecycle == "closing":
        session.lifecycle = "open"


def _on_set_config(
    ctx: Context, rid: RequestId, pending: Pending, result: Any, error: Any, events: Events
) -> None:
    sid = pending.session_id
    if sid is not None and isinstance(result, s.SetSessionConfigOptionResponse):
        session = ctx.sessions.session(sid, events)
        _check_lists(ctx, session, UNSET, result.config_options)
        session.config_options = list(result.config_options)


def _on_entity_cancel(
    ctx: Context, rid: RequestId, pending: Pending, result: Any, error: Any, events: Events
) -> None:
    sid = pending.session_id
    if sid is None or sid not in ctx.sessions.by_id:
        return
    entity = _cancelled_entity(ctx.sessions.by_id[sid], pending.params)
    if entity is not None:
        done = entity.finished if isinstance(entity, ToolCallState) else entity.exited
        entity.cancel_pending = error is None and not done


ResponseEffect = Callable[[Context, RequestId, Pending, Any, Any, Events], None]
#: What the response to each of the client's requests changes (others: nothing).
RESPONSE_EFFECTS: dict[str, ResponseEffect] = {
    "initialize": _on_initialize,
    "session/new": _on_new_session,
    "session/resume": _on_resume,
    "session/prompt": _on_prompt,
    "session/close": _on_close,
    "session/set_config_option": _on_set_config,
    "tool_call/cancel": _on_entity_cancel,
    "terminal/cancel": _on_entity_cancel,
}


# ------------------------------------------------------------ client -> agent


def _initialize_sent(ctx: Context, params: Any, events: Events) -> None:
    offer = ctx.offer
    if offer.requests_sent:
        # A log's new connection (LOG-FORMATS.md 1.4): the old one's requests are gone,
        # and so are the resumes it left unanswered.
        ctx.rpc.forget_requests()
        offer.requests_sent = False
        for session in ctx.sessions.by_id.values():
            session.end_resume(all_of_them=True)
            if session._previous is not None:
                # a replay the old connection left unanswered ends here, unconfirmed
                # (R45: what it did not report again is kept, as unretained)
                unretained = session.end_replay(False, why="got no answer (its connection ended)")
                events.append(
                    ev.ReplayFinished(
                        session_id=session.session_id, ok=False, unretained=unretained
                    )
                )
            if session._reopening:  # its resume died with the connection: still closed
                session.set_closed()
    offer.initialize_sent = True
    elicitation = field(field(params, "capabilities"), "elicitation")
    offer.elicitation = elicitation is not UNSET and elicitation is not None


def request_sent(ctx: Context, message: s.Request, events: Events) -> None:
    """A request of the client's: tracked until answered, and its effects at send time."""
    rid = message.id
    method = message.method
    params = message.params
    if method == "initialize":
        _initialize_sent(ctx, params, events)
    else:
        if rid in ctx.rpc.pending_out:
            ctx.notes.note("duplicate-request-id", f"the client reused pending request id {rid!r}")
        ctx.offer.requests_sent = True
    sid = session_id_of(params)
    pending = Pending(method, params, sid)
    ctx.rpc.track(rid, pending)
    if sid is None:
        if method == "session/new":
            pending.marks = {
                known: (one.commands_updates, one.config_updates)
                for known, one in ctx.sessions.by_id.items()
            }
        return
    session = ctx.sessions.session(sid, events)
    pending.commands_mark = session.commands_updates
    pending.config_mark = session.config_updates
    pending.state_mark = session.state_updates
    effect = REQUEST_EFFECTS.get(method)
    if effect is not None:
        effect(ctx, session, rid, params, events)


def _prompt_sent(
    ctx: Context, session: Session, rid: RequestId, params: Any, events: Events
) -> None:
    prompt = PromptState(rid, session.session_id, getattr(params, "prompt", None))
    ctx.prompts[rid] = prompt
    session.add_prompt(prompt)
    events.append(ev.PromptSent(session_id=session.session_id, request_id=rid))


def _resume_sent(
    ctx: Context, session: Session, rid: RequestId, params: Any, events: Events
) -> None:
    if session.closed:
        session.reopen()
    if _replays(params):
        session.begin_replay()
        events.append(ev.ReplayStarted(session_id=session.session_id))
    else:
        session.begin_resume()


def _entity_cancel_sent(
    ctx: Context, session: Session, rid: RequestId, params: Any, events: Events
) -> None:
    entity = _cancelled_entity(session, params)
    if entity is not None:
        entity.cancel_pending = True  # 11.6: "cancelling…" until confirmed or refused


def _close_sent(
    ctx: Context, session: Session, rid: RequestId, params: Any, events: Events
) -> None:
    session.lifecycle = "closing"
    ctx.mode.cancel_permissions(session, events)


RequestEffect = Callable[[Context, Session, RequestId, Any, Events], None]
#: What sending each request naming a session changes at once (others: nothing).
REQUEST_EFFECTS: dict[str, RequestEffect] = {
    "session/prompt": _prompt_sent,
    "session/resume": _resume_sent,
    "tool_call/cancel": _entity_cancel_sent,
    "terminal/cancel": _entity_cancel_sent,
    "session/close": _close_sent,
}


def _notification_sent(ctx: Context, message: s.Notification, events: Events) -> None:
    if message.method == "session/cancel":
        sid = session_id_of(message.params)
        if sid is None:
            return
        session = ctx.sessions.session(sid, events)
        marked = session.request_cancel()
        events.append(ev.CancelRequested(session_id=sid, tool_call_ids=marked))
        ctx.mode.cancel_permissions(session, events)


def _response_sent(ctx: Context, message: s.Response | s.ErrorResponse, events: Events) -> None:
    rid = message.id
    pending = ctx.rpc.pending_in.pop(rid, None) if rid is not None else None
    if pending is None:
        ctx.notes.note("orphan-response", f"client response to unknown agent request {rid!r}")
        events.append(ev.UnmatchedResponseReceived(message=message))
        return
    method, _params, sid = pending
    if method != "session/request_permission" or sid is None:
        return
    perm = ctx.sessions.by_id[sid].permissions.get(rid) if rid is not None else None
    if perm is None:
        return
    outcome: Any = None
    if type(message) is s.Response:
        result = message.result
        outcome = result.get("outcome") if isinstance(result, dict) else None
        if outcome is None and isinstance(result, s.RequestPermissionResponse):
            outcome = result.outcome
    _record_answer(perm, outcome, events)


def dispatch(ctx: Context, message: s.Message, incoming: bool, events: Events) -> None:
    """Route one decoded message, of the agent's (``incoming``) or of the client's."""
    kind = type(message)
    if incoming:
        if kind is s.Notification:
            _notification_received(ctx, message, events)  # type: ignore[arg-type]
        elif kind is s.Request:
            _request_received(ctx, message, events)  # type: ignore[arg-type]
        else:
            response_received(ctx, message, events)  # type: ignore[arg-type]
    elif kind is s.Request:
        request_sent(ctx, message, events)  # type: ignore[arg-type]
    elif kind is s.Notification:
        _notification_sent(ctx, message, events)  # type: ignore[arg-type]
    else:
        _response_sent(ctx, message, events)  # type: ignore[arg-type]
