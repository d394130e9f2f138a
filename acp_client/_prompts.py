"""Prompt submissions and permission requests (ACP-V2-CLIENT-STATE.md sections 10 and 11).

Both are small state machines written as tables, ``(status, input) -> (status, effects)``,
walked pair by pair in ``tests/test_state_machines.py``.

:data:`PROMPT_TRANSITIONS` (10.3-10.5). A submission is ``pending`` until its response:

* ``accept``: a success response (10.4); ``unbind``: it had no string ``messageId``, so it
  cannot be linked (R8); ``reject``: an error response, kept for display (10.5).
* ``echo``: a user-message update with its ``messageId`` was applied in the session, before
  or after the response (10.4); ``echoed`` never goes back. It is independent of the status.
* ``placed``: that message was placed again (a replay containing it, 10.5);
  ``lost``: a full replay did not report it (R2, 10.5: ``not_retained``).

A pair missing from the table is a caller's error: :meth:`PromptState.advance` raises
:class:`~acp_client.LocalProtocolError` (a response is matched once, by its request id).
Completion of the work is the session's ``idle`` state, not the response.

:data:`PERMISSION_TRANSITIONS` (11.1, 11.2). A request is ``pending`` until the client
answers it (``answer``, or ``cancel`` with the ``cancelled`` outcome) or the agent withdraws
it (``withdraw``: ``$/cancel_request``, or its id reused while pending, 1.2). Every other
status is final: a pair missing from the table is ignored (R62: an unknown or answered
request's cancel changes nothing) and :meth:`PermissionState.advance` returns ``False``.
"""

from __future__ import annotations

from typing import Any, Literal

from . import _schema as s
from ._errors import LocalProtocolError

__all__ = [
    "PERMISSION_TRANSITIONS",
    "PROMPT_TRANSITIONS",
    "PermissionInput",
    "PermissionState",
    "PermissionStatus",
    "PromptInput",
    "PromptState",
    "PromptStatus",
]

PromptStatus = Literal["pending", "accepted", "rejected"]
PermissionStatus = Literal["pending", "answered", "cancelled", "withdrawn"]
PromptInput = Literal["accept", "unbind", "reject", "echo", "placed", "lost"]
PermissionInput = Literal["answer", "cancel", "withdraw"]

#: (status, input) -> (status, {flag: value}) for a prompt submission (10.3-10.5).
PROMPT_TRANSITIONS: dict[tuple[PromptStatus, PromptInput], tuple[PromptStatus, dict[str, bool]]] = {
    ("pending", "accept"): ("accepted", {}),
    ("pending", "reject"): ("rejected", {}),
    ("accepted", "unbind"): ("accepted", {"unbound": True}),
    ("accepted", "lost"): ("accepted", {"not_retained": True}),
    # echoed and placed do not depend on the status (10.4)
    ("pending", "echo"): ("pending", {"echoed": True}),
    ("accepted", "echo"): ("accepted", {"echoed": True}),
    ("rejected", "echo"): ("rejected", {"echoed": True}),
    ("pending", "placed"): ("pending", {"not_retained": False}),
    ("accepted", "placed"): ("accepted", {"not_retained": False}),
    ("rejected", "placed"): ("rejected", {"not_retained": False}),
}

#: (status, input) -> status for a permission request (11.1, 11.2); the rest is final.
PERMISSION_TRANSITIONS: dict[tuple[PermissionStatus, PermissionInput], PermissionStatus] = {
    ("pending", "answer"): "answered",
    ("pending", "cancel"): "cancelled",
    ("pending", "withdraw"): "withdrawn",
}


class PromptState:
    """One ``session/prompt`` submission, identified by its JSON-RPC request id.

    Attributes:
        request_id: the request id, as sent.
        session_id: the session it was sent to.
        prompt: the content blocks as sent (reference data; the agent's echo is canonical).
        status: ``pending``, ``accepted`` or ``rejected``.
        message_id: the inserted user message's id from the success response.
        echoed: whether that user message has been applied in the session.
        error: the JSON-RPC error object of a rejection.
        unbound: accepted without a usable ``messageId`` (cannot be linked; R8).
        not_retained: a later replay did not report the message.
        turns_before: completed turns the session had when the prompt was accepted (its turn
            is the next one to complete; see ``Connection.prompt_stop_reason``).
    """

    __slots__ = (
        "echoed",
        "error",
        "message_id",
        "not_retained",
        "prompt",
        "request_id",
        "session_id",
        "status",
        "turns_before",
        "unbound",
    )

    def __init__(self, request_id: int | str, session_id: str, prompt: Any) -> None:
        self.request_id = request_id
        self.session_id = session_id
        self.prompt = prompt
        self.status: PromptStatus = "pending"
        self.message_id: str | None = None
        self.echoed = False
        self.error: Any = None
        self.unbound = False
        self.not_retained = False
        self.turns_before: int | None = None

    def advance(self, event: PromptInput) -> None:
        """Take one input through :data:`PROMPT_TRANSITIONS`.

        Raises:
            LocalProtocolError: the pair is not in the table.
        """
        found = PROMPT_TRANSITIONS.get((self.status, event))
        if found is None:
            raise LocalProtocolError(f"prompt {self.request_id!r} is {self.status}: no {event!r}")
        self.status = found[0]
        for flag, value in found[1].items():
            setattr(self, flag, value)

    @property
    def inserted(self) -> bool:
        """Whether the agent answered that the prompt was inserted."""
        return self.status == "accepted"

    def __repr__(self) -> str:
        return (
            f"PromptState({self.request_id!r}, {self.status}, message_id={self.message_id!r}, "
            f"echoed={self.echoed})"
        )


class PermissionState:
    """One ``session/request_permission`` from the agent.

    Attributes:
        request_id: the agent's request id, as sent.
        session_id: the session it concerns.
        request: the decoded ``RequestPermissionRequest`` (or raw params if malformed).
        tool_call_id: the tool call it concerns (``tool_call`` subject or a command's id).
        status: ``pending``, ``answered``, ``cancelled`` or ``withdrawn``.
        outcome: the outcome object as answered.
    """

    __slots__ = ("outcome", "request", "request_id", "session_id", "status", "tool_call_id")

    def __init__(
        self,
        request_id: int | str,
        session_id: str,
        request: s.RequestPermissionRequest | dict[str, Any],
        tool_call_id: str | None,
    ) -> None:
        self.request_id = request_id
        self.session_id = session_id
        self.request = request
        self.tool_call_id = tool_call_id
        self.status: PermissionStatus = "pending"
        self.outcome: Any = None

    def advance(self, event: PermissionInput) -> bool:
        """Take one input through :data:`PERMISSION_TRANSITIONS`; return whether it changed.

        A pair missing from the table (a final status) changes nothing (R62).
        """
        found = PERMISSION_TRANSITIONS.get((self.status, event))
        if found is None:
            return False
        self.status = found
        return True

    @property
    def terminal_id(self) -> str | None:
        """The terminal a ``command`` subject names, if any (background checks use it)."""
        terminal_id = getattr(getattr(self.request, "subject", None), "terminal_id", None)
        return terminal_id if isinstance(terminal_id, str) else None

    @property
    def pending(self) -> bool:
        """Whether the request still waits for an answer."""
        return self.status == "pending"

    def __repr__(self) -> str:
        return f"PermissionState({self.request_id!r}, {self.status})"
