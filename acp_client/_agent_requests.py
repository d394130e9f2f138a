"""The agent's requests and notifications: what each changes, what the client owes for it.

Owns (ACP-V2-CLIENT-STATE.md 1.2-1.8, 11.5, 12.5; R19, R38, R62): ``session/update``
applied to its session, ``$/cancel_request`` of the agent's, a reused request id, the
requests of the agent's (a table, :data:`AGENT_REQUESTS`: ``session/request_permission``
tracked as a permission, others handed to the embedder), the permission answers, and the
embedder's answers (``answer_*``). Every function takes a :class:`~._context.Context`.

What the client owes at once for them is the mode's decision (:class:`~._context.Live`,
:class:`~._context.Passive`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _events as ev
from . import _schema as s
from ._checks import option_problems, relative_path
from ._context import Context, answer_permission, session_id_of
from ._errors import METHOD_NOT_FOUND, LocalProtocolError
from ._limits import check_entities
from ._prompts import PermissionState
from ._rpc import AgentRequest as AgentRequestEntry
from ._rpc import RequestId

__all__ = [
    "AGENT_REQUESTS",
    "answer_chosen",
    "answer_error",
    "answer_result",
    "answer_unknown",
    "apply_update",
    "displace",
    "notification_received",
    "request_received",
]

Events = list[ev.Event]


def _withdraw(perm: PermissionState | None, events: Events) -> bool:
    """A pending permission request the agent gave up is ``withdrawn`` (True if it was)."""
    if perm is None or perm.status != "pending":
        return False
    perm.advance("withdraw")
    events.append(ev.PermissionWithdrawn(session_id=perm.session_id, request_id=perm.request_id))
    return True


# ------------------------------------------------------------ agent -> client


def apply_update(ctx: Context, params: s.UpdateSessionNotification, events: Events) -> None:
    """Apply one ``session/update`` to its session (created if new, 12.5).

    Raises:
        LimitExceeded: the session would be one too many, or the update would add an
            entity to a session holding ``max_entities`` (the reader keeps it raw).
    """
    session = ctx.sessions.by_id.get(params.session_id)
    if session is None:
        session = ctx.mode.agent_session(params.session_id, events)
    check_entities(session, params.update, ctx.sessions.max_entities)
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


def notification_received(ctx: Context, message: s.Notification, events: Events) -> None:
    method = message.method
    if method == "session/update":
        apply_update(ctx, message.params, events)
    elif method == "$/cancel_request":
        _agent_cancel_request(ctx, message.params.request_id, events)
    elif method not in _QUIET_NOTIFICATIONS:  # an extension's: no state, but kept raw
        sid = session_id_of(message.params)
        ctx.notes.note(
            "unknown-notification",
            f"notification {method!r} changes no state here (kept raw)",
            session_id=sid,
        )
        events.append(
            ev.UnknownNotificationReceived(method=method, params=message.params, session_id=sid)
        )


#: Notifications of the agent's that are known and change no state here.
_QUIET_NOTIFICATIONS = frozenset({"session/update", "$/cancel_request", "elicitation/complete"})


def _agent_cancel_request(ctx: Context, request_id: RequestId, events: Events) -> None:
    pending = ctx.rpc.pending_in.get(request_id)
    if pending is None:
        return  # unknown or answered: ignored (R62)
    method, _params, sid = pending
    if method == "session/request_permission" and sid is not None:
        perm = ctx.sessions.by_id[sid].permissions.get(request_id)
        if perm is not None and _withdraw(perm, events):
            ctx.mode.permission_withdrawn(perm, events)
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


def request_received(ctx: Context, message: s.Request, events: Events) -> None:
    rid = message.id
    if rid in ctx.rpc.pending_in:
        displace(ctx, rid, events)
    method = message.method
    params = message.params
    sid = session_id_of(params)
    ctx.rpc.pending_in[rid] = (method, params, sid)
    ctx.mode.expect(rid)  # in a batch, its answer joins the batch's array
    AGENT_REQUESTS.get(method, _other_request)(ctx, rid, method, params, sid, events)


def _other_request(
    ctx: Context, rid: RequestId, method: str, params: Any, sid: str | None, events: Events
) -> None:
    if sid is not None:
        ctx.mode.agent_session(sid, events)
    events.append(ev.AgentRequestReceived(request_id=rid, method=method, params=params))
    ctx.mode.agent_request(rid, method, params)


def _permission_requested(
    ctx: Context,
    rid: RequestId,
    method: str,
    params: s.RequestPermissionRequest,
    sid: str | None,
    events: Events,
) -> None:
    session = ctx.mode.agent_session(params.session_id, events)
    sid = session.session_id
    subject = params.subject
    tool_call_id = None
    if type(subject) is s.ToolCallPermissionSubject:
        events.append(session.apply(subject.tool_call))
        if session.side_events:  # a terminal its content created
            events.extend(session.side_events)
            session.side_events.clear()
        tool_call_id = subject.tool_call.tool_call_id
    elif type(subject) is s.CommandPermissionSubject and isinstance(subject.tool_call_id, str):
        tool_call_id = subject.tool_call_id
    for problem in option_problems(params.options):
        ctx.notes.note("invalid-permission-request", problem, session_id=sid)
    if params.extra:
        session.check_shadowed(params.extra, "permission request", rid)
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


AgentRequest = Callable[[Context, RequestId, str, Any, "str | None", Events], None]
#: What each request of the agent's does on arrival (others: an ``AgentRequestReceived``
#: the embedder answers, or live an error at once).
AGENT_REQUESTS: dict[str, AgentRequest] = {
    "session/request_permission": _permission_requested,
}


# ------------------------------------------------------- the embedder's answers


def _waiting(ctx: Context, request_id: RequestId) -> AgentRequestEntry:
    pending = ctx.rpc.pending_in.get(request_id)
    if pending is None:
        raise LocalProtocolError(f"no pending agent request {request_id!r}")
    return pending


def answer_chosen(
    ctx: Context, request_id: RequestId, option_id: str | None, events: Events
) -> None:
    """The embedder answers a permission request: an offered option, or ``None``."""
    pending = ctx.rpc.pending_in.get(request_id)
    if pending is None or pending[0] != "session/request_permission" or pending[2] is None:
        raise LocalProtocolError(f"no pending permission request {request_id!r}")
    perm = ctx.sessions.by_id[pending[2]].permissions[request_id]
    if option_id is not None:
        offered = [o.option_id for o in getattr(perm.request, "options", [])]
        if option_id not in offered:
            raise LocalProtocolError(f"option {option_id!r} was not offered")
    answer_permission(ctx, perm, option_id, events)


def answer_result(ctx: Context, request_id: RequestId, result: Any) -> None:
    """The embedder answers a request of the agent's (not a permission one) with a result."""
    if _waiting(ctx, request_id)[0] == "session/request_permission":
        raise LocalProtocolError("use answer_permission for permission requests")
    ctx.rpc.pending_in.pop(request_id)
    ctx.rpc.respond(request_id, result)


def answer_error(ctx: Context, request_id: RequestId, code: int, message: str) -> None:
    """The embedder answers a request of the agent's with an error."""
    method, _params, sid = _waiting(ctx, request_id)
    del ctx.rpc.pending_in[request_id]
    if method == "session/request_permission" and sid is not None:
        perm = ctx.sessions.by_id[sid].permissions.get(request_id)
        if perm is not None and perm.status == "pending":
            perm.advance("answer")
    ctx.rpc.respond_error(request_id, code, message)


def answer_unknown(ctx: Context, request_id: RequestId) -> None:
    """The embedder does not handle a request of the agent's: -32601."""
    method = _waiting(ctx, request_id)[0]
    del ctx.rpc.pending_in[request_id]
    ctx.rpc.respond_error(request_id, METHOD_NOT_FOUND, f"method not found: {method}")
