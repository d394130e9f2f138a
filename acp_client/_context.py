"""What the parts of a connection share, each with one owner: the collaborators of the parts.

Owns: the diagnostics sink (:class:`Notes`, with the log line being read), the handshake
(:class:`Offer`: what ``initialize`` asked and the agent's answer offers, C1-C7), the
session registry (:class:`Registry`, ACP-V2-CLIENT-STATE.md 12.5: a session named for the
first time is created), the mode and :class:`Context`, the bundle the per-method effects
(:mod:`._methods`, :mod:`._agent_requests`) and the reader (:mod:`._inbound`) are given.
No part reaches into another: each is handed the collaborators it uses.

The mode: live and passive (log replay) connections differ only in what the client owes
the agent at once (``cancelled`` outcomes and ``cancel`` actions, R19, 11.5; -32601 and
-32602 answers, 1.3, 1.8; -32600 for invalid entries and batch arrays, 1.5) and in noting
an unannounced session (12.5). :class:`Live` and :class:`Passive` decide it, one chosen
when the connection is built; permission answers (:func:`answer_permission`) live here
with it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, Literal

import msgspec
from msgspec import UNSET

from . import _events as ev
from . import _schema as s
from ._arguments import checked_limit, checked_optional_limit
from ._checks import elicitation_problem
from ._diagnostics import Diagnostic, DiagnosticList
from ._errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, LimitExceeded
from ._limits import DEFAULT_MAX_ENTITIES
from ._prompts import PermissionState, PromptState
from ._rpc import RequestId, Rpc
from ._session import Session
from ._tree import Forest

__all__ = [
    "Context",
    "Live",
    "Notes",
    "Offer",
    "Passive",
    "Registry",
    "answer_permission",
    "field",
    "record_answer",
    "session_id_of",
]

Events = list[ev.Event]


def session_id_of(params: Any) -> str | None:
    """The ``sessionId`` a message's params (decoded or raw) name, if any."""
    sid = getattr(params, "session_id", None)
    if sid is None and isinstance(params, dict):
        sid = params.get("sessionId")
    return sid if isinstance(sid, str) else None


def field(obj: Any, name: str, wire_name: str | None = None) -> Any:
    """A field of a decoded Struct, or of raw params (by its wire name); ``UNSET`` if absent."""
    if isinstance(obj, dict):
        return obj.get(wire_name or name, UNSET)
    return getattr(obj, name, UNSET)


class Notes:
    """The diagnostics sink every part adds its findings to, placed at the current log line."""

    __slots__ = ("diagnostics", "line")

    def __init__(self, diagnostics: list[Diagnostic] | None = None) -> None:
        self.diagnostics: list[Diagnostic] = (
            DiagnosticList() if diagnostics is None else diagnostics
        )
        self.line: int | None = None

    def note(
        self,
        code: str,
        message: str,
        severity: Literal["warning", "error"] = "warning",
        session_id: str | None = None,
        path: str | None = None,
    ) -> None:
        """Add one diagnostic at the current line."""
        self.diagnostics.append(
            Diagnostic(
                code=code,
                message=message,
                line=self.line,
                severity=severity,
                path=path,
                session_id=session_id,
            )
        )

    def stamp(self, start: int, session_id: str | None) -> None:
        """Give diagnostics added since ``start`` by decoding a message their place."""
        diags = self.diagnostics
        for index in range(start, len(diags)):
            diag = diags[index]
            if diag.line is None and (self.line is not None or session_id is not None):
                diags[index] = msgspec.structs.replace(
                    diag, line=self.line, session_id=diag.session_id or session_id
                )


class Offer:
    """The handshake: what the client's ``initialize`` asked, what the agent's answer offers."""

    __slots__ = (
        "agent_capabilities",
        "agent_info",
        "answered",
        "auth_methods",
        "elicitation",
        "initialize_sent",
        "offers_suggestions",
        "protocol_version",
        "requests_sent",
        "restored",
    )

    def __init__(self) -> None:
        self.protocol_version: int | None = None
        self.agent_info: s.Implementation | None = None
        self.agent_capabilities: s.AgentCapabilities | None = None
        self.auth_methods: list[Any] = []
        # Set once initialize was answered: from then on, capabilities the agent omitted or
        # sent unreadable are not supported (C3), so the checks apply.
        self.answered = False
        self.requests_sent = False  # a request other than initialize was sent (1.4)
        self.initialize_sent = False
        self.elicitation = False  # the client's initialize advertised elicitation
        self.offers_suggestions = False  # ... and `session.promptSuggestions` (P39)
        # Restored from a snapshot (R90): the next initialize starts a new connection.
        self.restored = False

    def suggestions_advertised(self) -> bool:
        """Whether the client's ``initialize`` advertised prompt suggestions (P39)."""
        return self.offers_suggestions


DEFAULT_MAX_SESSIONS = 10_000
"""Sessions a connection keeps at most (``Connection(max_sessions=...)``)."""


class Registry:
    """Every session of the connection, by id, in first-seen order."""

    __slots__ = (
        "block_limit",
        "by_id",
        "forest",
        "live",
        "max_entities",
        "max_sessions",
        "notes",
        "offer",
        "terminal_limit",
        "unstable",
    )

    def __init__(
        self,
        notes: Notes,
        offer: Offer,
        terminal_limit: int | None,
        unstable: frozenset[str] = frozenset(),
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        max_entities: int = DEFAULT_MAX_ENTITIES,
        block_limit: int | None = None,
    ) -> None:
        self.by_id: dict[str, Session] = {}
        self.notes = notes
        self.offer = offer
        self.terminal_limit = checked_optional_limit("terminal_limit", terminal_limit)
        self.block_limit = checked_optional_limit("block_limit", block_limit)
        self.max_sessions = checked_limit("max_sessions", max_sessions)
        self.max_entities = checked_limit("max_entities", max_entities)
        self.unstable = unstable
        self.live = False  # live: suggestions the client did not advertise are reported (P39)
        self.forest = Forest(self.by_id, self.session, self._tree_note)
        """The session tree and the replays in flight (ACP-V2-PREVIEW 3.1, 3.3)."""

    def _tree_note(self, code: str, message: str, session_id: str) -> None:
        self.notes.note(code, message, session_id=session_id)

    def session(self, session_id: str, events: list[ev.Event] | None = None) -> Session:
        """The session with that id, created (``SessionCreated`` unannounced) if new.

        Raises:
            LimitExceeded: it is new and ``max_sessions`` sessions exist already.
        """
        session = self.by_id.get(session_id)
        if session is None:
            if len(self.by_id) >= self.max_sessions:
                raise LimitExceeded(
                    "max_sessions", self.max_sessions, f"session {session_id!r} not created"
                )
            session = Session(
                session_id,
                terminal_limit=self.terminal_limit,
                block_limit=self.block_limit,
                diagnostics=self.notes.diagnostics,
                unstable=self.unstable,
            )
            session.protocol_version = self.offer.protocol_version  # the connection's, if known
            self.adopt(session)
            if events is not None:
                events.append(ev.SessionCreated(session_id=session_id, announced=False))
        session.line = self.notes.line
        return session

    def adopt(self, session: Session) -> None:
        """Register a session built elsewhere (new, or loaded from a snapshot) as this one's.

        Raises:
            LimitExceeded: ``max_sessions`` sessions exist already.
            ValueError: a session with its id exists already.
        """
        sid = session.session_id
        if sid in self.by_id:
            raise ValueError(f"session {sid!r} twice")
        if len(self.by_id) >= self.max_sessions:
            raise LimitExceeded("max_sessions", self.max_sessions, f"session {sid!r} not created")
        session.tree.hook = self.forest.update
        session.preview.known = self.by_id.__contains__  # references never create (P9)
        if self.live:
            session.preview.advertised = self.offer.suggestions_advertised
        self.by_id[sid] = session


class Context:
    """The collaborators the per-method effects and the reader work with, by name."""

    __slots__ = ("extension_methods", "mode", "notes", "offer", "prompts", "rpc", "sessions")

    def __init__(
        self,
        mode: Callable[[Context], Passive],
        *,
        terminal_limit: int | None,
        block_limit: int | None = None,
        extension_methods: Collection[str],
        unstable: Collection[str] = (),
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        max_entities: int = DEFAULT_MAX_ENTITIES,
        diagnostics: list[Diagnostic] | None = None,
    ) -> None:
        self.notes = Notes(diagnostics)
        self.offer = Offer()
        self.sessions = Registry(
            self.notes,
            self.offer,
            terminal_limit,
            frozenset(unstable),
            max_sessions=max_sessions,
            max_entities=max_entities,
            block_limit=block_limit,
        )
        self.rpc = Rpc()
        self.prompts: dict[int | str, PromptState] = {}
        self.extension_methods = frozenset(extension_methods)
        self.mode = mode(self)
        """What the client owes automatically: chosen once, by the connection's mode."""
        self.sessions.live = isinstance(self.mode, Live)


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
    record_answer(perm, outcome, events)


def record_answer(perm: PermissionState, outcome: Any, events: Events) -> None:
    plain = msgspec.to_builtins(outcome) if isinstance(outcome, msgspec.Struct) else outcome
    perm.outcome = plain
    if perm.status != "withdrawn":
        cancelled = isinstance(plain, dict) and plain.get("outcome") == "cancelled"
        perm.advance("cancel" if cancelled else "answer")
    events.append(
        ev.PermissionAnswered(session_id=perm.session_id, request_id=perm.request_id, outcome=plain)
    )
