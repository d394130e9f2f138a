"""Prompt submissions and permission requests (ACP-V2-CLIENT-STATE.md sections 10 and 11).

Prompt lifecycle, as a table (state, input) -> state::

    pending  + success response with string messageId -> accepted (unbound=False)
    pending  + success response without one            -> accepted (unbound=True, R8)
    pending  + error response                          -> rejected
    accepted + a replay that does not report it        -> accepted (not_retained=True)

``echoed`` is independent: it becomes true once a user-message update (or chunk) with
the accepted ``messageId`` is applied in that session, before or after the response, and
never goes back. Completion of the work is the session's ``idle`` state, not the response.

Permission requests: ``pending`` -> ``answered`` | ``cancelled`` (the client answered with
the ``cancelled`` outcome) | ``withdrawn`` (the agent's ``$/cancel_request``; final).
"""

from __future__ import annotations

from typing import Any, Literal

from . import _schema as s

__all__ = ["PermissionState", "PromptState", "PromptStatus", "PermissionStatus"]

PromptStatus = Literal["pending", "accepted", "rejected"]
PermissionStatus = Literal["pending", "answered", "cancelled", "withdrawn"]


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
