"""What the client's messages change, and the responses to its requests, by method.

Owns (ACP-V2-CLIENT-STATE.md 1.4, 10-12; prompt-lifecycle-v2.md; R8, R10, R45, R50, A17-A19,
A29, C2): the effects of the client's requests when sent (a table, :data:`REQUEST_EFFECTS`),
of the responses to them (a table, :data:`RESPONSE_EFFECTS`: ``initialize``,
``session/new``, ``session/resume``, ``session/prompt``, ``session/close``,
``session/set_config_option``, ``tool_call/cancel``, ``terminal/cancel``), of the client's
notifications and answers, and :func:`dispatch`, which routes every decoded message, either
direction, to its effects (the agent's side is :mod:`._agent_requests`). Every handler takes
a :class:`~._context.Context` (the connection's collaborators) and the events list; none
knows the connection.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec import UNSET

from . import _events as ev
from . import _schema as s
from ._agent_requests import notification_received, request_received
from ._checks import command_problems, config_problems
from ._codec import Decoder, convert
from ._context import Context, field, record_answer, session_id_of
from ._entities import TerminalState, ToolCallState
from ._errors import RESOURCE_NOT_FOUND, RemoteProtocolError
from ._prompts import Attempt, PromptState
from ._rpc import Pending, RequestId
from ._session import Session
from ._tree import plain_update

__all__ = [
    "REQUEST_EFFECTS",
    "connection_lost",
    "RESPONSE_EFFECTS",
    "SESSION_RESPONSE_EFFECTS",
    "dispatch",
    "request_sent",
    "response_received",
]

Events = list[ev.Event]
_BUSY = frozenset({"running", "requires_action"})
_DECODER = Decoder()


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
        effect(ctx, pending, result, error, events)
    elif pending.session_id is not None and method in SESSION_RESPONSE_EFFECTS:
        session = ctx.sessions.session(pending.session_id, events)
        SESSION_RESPONSE_EFFECTS[method](ctx, session, pending, result, error, events)
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


def _on_initialize(ctx: Context, pending: Pending, result: Any, error: Any, events: Events) -> None:
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
    ctx: Context, pending: Pending, result: Any, error: Any, events: Events
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
    ctx: Context, session: Session, pending: Pending, result: Any, error: Any, events: Events
) -> None:
    sid = session.session_id
    # (a session/close sent meanwhile changed the lifecycle, not the replay under way)
    replays = _replays(pending.params)
    if not replays:
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
    if replays:  # P18-P21: the replays of this request end (those without their marker)
        ctx.sessions.forest.finish(pending.request_id, error is None, events)
    reopening = session.take_reopening()
    # 10.5 / 12.3 step 5: -32002 says the session is gone; a closed session whose resume
    # failed stays closed (it was closed when the resume was sent: nothing new).
    gone = error is not None and (reopening or getattr(error, "code", None) == RESOURCE_NOT_FOUND)
    if gone and session.set_closed() and not reopening:
        events.append(ev.SessionClosed(session_id=sid))


def _on_prompt(
    ctx: Context, session: Session, pending: Pending, result: Any, error: Any, events: Events
) -> None:
    rid = pending.request_id
    prompt = ctx.prompts.get(rid)
    sid = session.session_id
    if prompt is None:
        return
    attempt = prompt.attempt(rid)  # an attempt of a keyed submission (P27)
    if error is not None:
        if not prompt.settles(attempt, error):
            return  # another attempt is pending or succeeded (P29)
        prompt.advance("reject")
        prompt.error = error
        events.append(ev.PromptRejected(session_id=sid, request_id=rid, error=error))
        return
    if attempt is not None and isinstance(result, s.PromptResponse):
        attempt.message_id = result.message_id
    if not prompt.settles(attempt, None):
        _another_success(ctx, prompt, attempt)
        return
    prompt.advance("accept")
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
        prompt.advance("unbind")
        ctx.notes.note(
            "prompt-response-without-message-id",
            "session/prompt result without a string `messageId` (R8)",
            session_id=sid,
        )
        events.append(
            ev.PromptAccepted(session_id=sid, request_id=rid, message_id=None, echoed=False)
        )


def _another_success(ctx: Context, prompt: PromptState, attempt: Attempt | None) -> None:
    """A later attempt of an accepted keyed submission succeeded too (P30)."""
    mid = attempt.message_id if attempt is not None else None
    if mid is not None and prompt.message_id is not None and mid != prompt.message_id:
        ctx.notes.note(
            "idempotency-key-message-mismatch",
            f"attempts under key {prompt.idempotency_key!r} were answered with messageIds"
            f" {prompt.message_id!r} and {mid!r}: the agent inserted it twice (P30)",
            "error",
            prompt.session_id,
        )


def _on_close(
    ctx: Context, session: Session, pending: Pending, result: Any, error: Any, events: Events
) -> None:
    sid = session.session_id
    if error is None and session.state is not None and session.state.state in _BUSY:
        ctx.notes.note(
            "close-while-working",
            f"session/close of {sid!r} succeeded while its work was still"
            f" {session.state.state!r}: it must end with idle `cancelled` first (A18)",
            session_id=sid,
        )
    if error is None or error.code == RESOURCE_NOT_FOUND:
        session.preview.clear_suggestions()  # P38
        if session.set_closed(by_close=True):  # a second close of a closed one is no news
            events.append(ev.SessionClosed(session_id=sid))
    elif session.lifecycle == "closing":
        session.lifecycle = "open"


def _on_set_config(
    ctx: Context, session: Session, pending: Pending, result: Any, error: Any, events: Events
) -> None:
    if isinstance(result, s.SetSessionConfigOptionResponse):
        _check_lists(ctx, session, UNSET, result.config_options)
        session.config_options = list(result.config_options)


def _on_entity_cancel(
    ctx: Context, session: Session, pending: Pending, result: Any, error: Any, events: Events
) -> None:
    entity = _cancelled_entity(session, pending.params)
    if entity is not None:
        done = entity.finished if isinstance(entity, ToolCallState) else entity.exited
        entity.cancel_pending = error is None and not done


ResponseEffect = Callable[[Context, Pending, Any, Any, Events], None]
SessionResponseEffect = Callable[[Context, Session, Pending, Any, Any, Events], None]
#: What the response to each of the client's requests changes (others: nothing) ...
RESPONSE_EFFECTS: dict[str, ResponseEffect] = {
    "initialize": _on_initialize,
    "session/new": _on_new_session,
}
#: ... and for a request naming a session, what it changes in that session.
SESSION_RESPONSE_EFFECTS: dict[str, SessionResponseEffect] = {
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
    if offer.requests_sent or offer.restored:
        # A log's new connection (LOG-FORMATS.md 1.4), or the first after a restore (R92):
        # the old one's requests are gone, and so are the resumes it left unanswered.
        offer.restored = False
        ctx.rpc.forget_requests()
        offer.requests_sent = False
        # a replay the old connection left unanswered ends here, truncated (P21, P22;
        # R45: what it did not report again is kept, as unretained)
        ctx.sessions.forest.finish_all(events, "got no answer (its connection ended)")
        for session in ctx.sessions.by_id.values():
            session.end_resume(all_of_them=True)
            if session.reopening:  # its resume died with the connection: still closed
                session.set_closed()
    offer.initialize_sent = True
    caps = field(params, "capabilities")
    if isinstance(plain_update(caps) if caps is not UNSET else None, dict):
        # capabilities.session: the v2 Preview's client group (ACP-V2-PREVIEW 2.11)
        ctx.sessions.forest.preview = plain_update(caps).get("session") is not None
    elicitation = field(caps, "elicitation")
    offer.elicitation = elicitation is not UNSET and elicitation is not None
    suggestions = field(
        field(field(params, "capabilities"), "session"), "prompt_suggestions", "promptSuggestions"
    )
    offer.offers_suggestions = suggestions is not UNSET and suggestions is not None


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
    pending = Pending(rid, method, params, sid)
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


def _keyed_submission(session: Session, key: str) -> PromptState | None:
    """The session's submission with that idempotency key (P26), if any."""
    for prompt in reversed(session.prompts):
        if prompt.idempotency_key == key:
            return prompt
    return None


def _prompt_sent(
    ctx: Context, session: Session, rid: RequestId, params: Any, events: Events
) -> None:
    sid = session.session_id
    blocks = getattr(params, "prompt", None)
    key = field(params, "idempotency_key", "idempotencyKey")
    found = _keyed_submission(session, key) if isinstance(key, str) else None
    if found is not None:  # P27: an attempt of that submission
        if found.prompt is None:  # restored without its content (R90): this is it
            found.prompt = blocks
        elif plain_update(found.prompt) != plain_update(blocks):
            ctx.notes.note(
                "idempotency-key-prompt-mismatch",
                f"prompt {rid!r} reuses key {key!r} with other content than the first"
                " attempt (ACP-V2-PREVIEW 3.4); the agent's answer decides",
                session_id=sid,
            )
        found.retried(rid)
        ctx.prompts[rid] = found
        events.append(ev.PromptSent(session_id=sid, request_id=rid))
        return
    prompt = PromptState(rid, session.session_id, blocks)
    if isinstance(key, str):
        prompt.keyed(key)
    ctx.prompts[rid] = prompt
    session.add_prompt(prompt)
    events.append(ev.PromptSent(session_id=session.session_id, request_id=rid))


def _resume_sent(
    ctx: Context, session: Session, rid: RequestId, params: Any, events: Events
) -> None:
    if session.closed:
        session.reopen()
    session.preview.clear_suggestions()  # either mode (P38, R84)
    replays = _replays(params)
    ctx.sessions.forest.sent(session, rid, replays, events)
    if not replays:
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
    record_answer(perm, outcome, events)


Route = Callable[[Context, Any, Events], None]
#: Where each decoded message goes: (of the agent's?, its type) -> its effects.
_ROUTES: dict[tuple[bool, type[Any]], Route] = {
    (True, s.Notification): notification_received,
    (True, s.Request): request_received,
    (False, s.Request): request_sent,
    (False, s.Notification): _notification_sent,
}
#: Any other message is a response (or error response), of the agent's or the client's.
_RESPONSE_ROUTES: dict[bool, Route] = {True: response_received, False: _response_sent}


def connection_lost(ctx: Context, events: Events) -> None:
    """The agent went away: pending prompts stay pending (never retried, 10.5).

    Replays in flight without their marker are truncated (ACP-V2-PREVIEW P21).
    """
    ctx.sessions.forest.finish_all(events, "got no answer (connection lost)")
    for prompt in ctx.prompts.values():
        if prompt.status == "pending" and not prompt.outcome_unknown:  # R90: known lost
            ctx.notes.note(
                "prompt-uncertain",
                f"connection lost before the response to prompt {prompt.request_id!r}",
                session_id=prompt.session_id,
            )


def dispatch(ctx: Context, message: s.Message, incoming: bool, events: Events) -> None:
    """Route one decoded message, of the agent's (``incoming``) or of the client's."""
    route = _ROUTES.get((incoming, type(message))) or _RESPONSE_ROUTES[incoming]
    route(ctx, message, events)
