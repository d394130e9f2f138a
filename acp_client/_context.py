"""What the parts of a connection share, each with one owner: the collaborators of the parts.

Owns: the diagnostics sink (:class:`Notes`, with the log line being read), the handshake
(:class:`Offer`: what ``initialize`` asked and the agent's answer offers, C1-C7), the
session registry (:class:`Registry`, ACP-V2-CLIENT-STATE.md 12.5: a session named for the
first time is created) and :class:`Context`, the bundle the per-method effects of
:mod:`._methods` and the reader of :mod:`._inbound` are given. No part reaches into
another: each is handed the collaborators it uses.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from . import _events as ev
from . import _schema as s
from ._diagnostics import Diagnostic
from ._prompts import PromptState
from ._rpc import Rpc
from ._session import Session

if TYPE_CHECKING:
    from ._methods import Passive

__all__ = ["Context", "Notes", "Offer", "Registry", "session_id_of"]


def session_id_of(params: Any) -> str | None:
    """The ``sessionId`` a message's params (decoded or raw) name, if any."""
    sid = getattr(params, "session_id", None)
    if sid is None and isinstance(params, dict):
        sid = params.get("sessionId")
    return sid if isinstance(sid, str) else None


class Notes:
    """The diagnostics sink every part adds its findings to, placed at the current log line."""

    __slots__ = ("diagnostics", "line")

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []
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
                severity=severity,
                line=self.line,
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
        "protocol_version",
        "requests_sent",
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


class Registry:
    """Every session of the connection, by id, in first-seen order."""

    __slots__ = ("by_id", "notes", "offer", "terminal_limit")

    def __init__(self, notes: Notes, offer: Offer, terminal_limit: int | None) -> None:
        self.by_id: dict[str, Session] = {}
        self.notes = notes
        self.offer = offer
        self.terminal_limit = terminal_limit

    def session(self, session_id: str, events: list[ev.Event] | None = None) -> Session:
        """The session with that id, created (``SessionCreated`` unannounced) if new."""
        session = self.by_id.get(session_id)
        if session is None:
            session = Session(
                session_id,
                terminal_limit=self.terminal_limit,
                diagnostics=self.notes.diagnostics,
            )
            session.protocol_version = self.offer.protocol_version  # the connection's, if known
            self.by_id[session_id] = session
            if events is not None:
                events.append(ev.SessionCreated(session_id=session_id, announced=False))
        session.line = self.notes.line
        return session


class Context:
    """The collaborators the per-method effects and the reader work with, by name."""

    __slots__ = ("extension_methods", "mode", "notes", "offer", "prompts", "rpc", "sessions")

    def __init__(
        self,
        mode: Callable[[Context], Passive],
        *,
        terminal_limit: int | None,
        extension_methods: Collection[str],
    ) -> None:
        self.notes = Notes()
        self.offer = Offer()
        self.sessions = Registry(self.notes, self.offer, terminal_limit)
        self.rpc = Rpc()
        self.prompts: dict[int | str, PromptState] = {}
        self.extension_methods = frozenset(extension_methods)
        self.mode = mode(self)
        """What the client owes automatically: chosen once, by the connection's mode."""
