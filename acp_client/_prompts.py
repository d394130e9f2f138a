"""Prompt submissions, their attempts and permission requests (10, 11; P26-P30).

Implements ACP-V2-CLIENT-STATE.md sections 10 and 11, and ACP-V2-PREVIEW 3.4 for the
attempts of a keyed submission.

Both are small state machines written as tables, ``(status, input) -> (status, effects)``,
walked pair by pair in ``tests/test_state_machines.py``.

:data:`PROMPT_TRANSITIONS` (10.3-10.5). A submission is ``pending`` until its response:

* ``accept``: a success response (10.4); ``unbind``: it had no string ``messageId``, so it
  cannot be linked (R8); ``reject``: an error response, kept for display (10.5).
* ``echo``: a user-message update with its ``messageId`` was applied in the session, before
  or after the response (10.4); ``echoed`` never goes back. It is independent of the status.
* ``placed``: that message was placed again (a replay containing it, 10.5);
  ``lost``: a full replay did not report it (R2, 10.5: ``not_retained``).
* ``retry``: another attempt of a keyed submission was sent (P27, P29): a rejected
  submission is pending again; an accepted one stays accepted (insertion is a fact).

A keyed submission keeps its :class:`Attempt` objects in send order; its status is their
aggregate (P29) and its ``messageId`` the first success's (P30).

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

from collections.abc import Callable, Container
from typing import Any, Literal

from . import _events as ev
from . import _schema as s
from ._errors import LocalProtocolError

__all__ = [
    "PERMISSION_TRANSITIONS",
    "PROMPT_TRANSITIONS",
    "PermissionInput",
    "PermissionState",
    "PermissionStatus",
    "Attempt",
    "PromptInput",
    "PromptState",
    "PromptStatus",
    "PromptTracker",
]

PromptStatus = Literal["pending", "accepted", "rejected"]
PermissionStatus = Literal["pending", "answered", "cancelled", "withdrawn"]
PromptInput = Literal["accept", "unbind", "reject", "echo", "placed", "lost", "retry"]
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
    # P27, P29: another attempt of a keyed submission
    ("pending", "retry"): ("pending", {}),
    ("rejected", "retry"): ("pending", {}),
    ("accepted", "retry"): ("accepted", {}),
}

#: (status, input) -> status for a permission request (11.1, 11.2); the rest is final.
PERMISSION_TRANSITIONS: dict[tuple[PermissionStatus, PermissionInput], PermissionStatus] = {
    ("pending", "answer"): "answered",
    ("pending", "cancel"): "cancelled",
    ("pending", "withdraw"): "withdrawn",
}


class Attempt:
    """One ``session/prompt`` request of a keyed submission (P27).

    Attributes:
        request_id: its request id, as sent (ids may repeat across connections).
        status: ``pending``, ``accepted`` or ``rejected``.
        message_id: the ``messageId`` of its success response.
        error: the JSON-RPC error object of its error response.
    """

    __slots__ = ("error", "message_id", "request_id", "status")

    def __init__(self, request_id: int | str) -> None:
        self.request_id = request_id
        self.status: PromptStatus = "pending"
        self.message_id: str | None = None
        self.error: Any = None

    def snapshot(self) -> dict[str, Any]:
        """The ATTEMPT object of the snapshot (ACP-V2-PREVIEW section 4)."""
        out: dict[str, Any] = {"requestId": self.request_id, "status": self.status}
        if self.message_id is not None:
            out["messageId"] = self.message_id
        if self.error is not None:
            out["error"] = self.error
        return out

    def __repr__(self) -> str:
        return f"Attempt({self.request_id!r}, {self.status}, message_id={self.message_id!r})"


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
        idempotency_key: the key it was sent with (``None``: none; identified by request id).
        attempts: a keyed submission's attempts in send order (``None`` without a key);
            ``request_id`` is the first attempt's.
        outcome_unknown: restored from a snapshot while ``pending`` (R90): its request
            died with the old connection, so no response will settle it (10.5
            ``uncertain``); only a keyed retry's answer can (P27). ``turns_before`` is
            ``-1`` for a restored accepted prompt whose turn ended before the snapshot.
    """

    __slots__ = (
        "attempts",
        "echoed",
        "error",
        "idempotency_key",
        "message_id",
        "not_retained",
        "outcome_unknown",
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
        self.idempotency_key: str | None = None
        self.attempts: list[Attempt] | None = None
        self.outcome_unknown = False

    def keyed(self, key: str) -> PromptState:
        """Make this a keyed submission whose first attempt is its request (P26)."""
        self.idempotency_key = key
        self.attempts = [Attempt(self.request_id)]
        return self

    def retried(self, request_id: int | str) -> None:
        """Another attempt under the same key was sent (P27)."""
        assert self.attempts is not None
        self.attempts.append(Attempt(request_id))
        self.advance("retry")
        if self.status == "pending":
            self.error = None

    def attempt(self, request_id: int | str) -> Attempt | None:
        """The latest pending attempt sent with that request id (``None``: unkeyed)."""
        for attempt in reversed(self.attempts or ()):
            if attempt.request_id == request_id and attempt.status == "pending":
                return attempt
        return None

    def settles(self, attempt: Attempt | None, error: Any) -> bool:
        """Record an attempt's outcome; return whether the submission's status follows it.

        An error rejects the submission only when every attempt failed (P29); a success
        decides it unless an earlier success already did (P30).
        """
        if attempt is None:
            return True
        if error is not None:
            attempt.status, attempt.error = "rejected", error
            return self.status == "pending" and all(
                a.status == "rejected" for a in self.attempts or ()
            )
        attempt.status = "accepted"
        return self.status == "pending"

    def advance(self, event: PromptInput) -> None:
        """Take one input through :data:`PROMPT_TRANSITIONS`.

        Raises:
            LocalProtocolError: the pair is not in the table.
        """
        found = PROMPT_TRANSITIONS.get((self.status, event))
        if found is None:
            raise LocalProtocolError(f"prompt {self.request_id!r} is {self.status}: no {event!r}")
        self.status = found[0]
        if self.status != "pending":
            self.outcome_unknown = False  # a retry's answer decided it (P29)
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
        stale: restored from a snapshot while ``pending`` (R91): the agent that asked went
            with the old connection, so it cannot be answered (its status stays as
            recorded; the agent asks again after ``session/resume`` if it still needs to).
    """

    __slots__ = (
        "outcome",
        "request",
        "request_id",
        "session_id",
        "stale",
        "status",
        "tool_call_id",
    )

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
        self.stale = False

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

    @property
    def answerable(self) -> bool:
        """Whether the client can still answer it: pending and not restored stale (R91)."""
        return self.status == "pending" and not self.stale

    def __repr__(self) -> str:
        return f"PermissionState({self.request_id!r}, {self.status})"


class PromptTracker:
    """The prompts and permission requests of one session, and how updates concern them.

    Args:
        session_id: the session's id (for events).
        note: ``note(code, message)`` appends a diagnostic.
        side_events: where a prompt's echo event goes, after its update's event.
        in_background: whether the latest background list names a tool call or terminal.

    Attributes:
        prompts: every submission, in the order the client sent them.
        by_message: the first accepted prompt answered with each user message id.
        permissions: the latest permission request with each id.
        permission_log: every permission request, in arrival order (ids may repeat).
    """

    __slots__ = (
        "_awaiting_echo",
        "_in_background",
        "_note",
        "_pending_noted",
        "_replay_prompts",
        "_session_id",
        "_side",
        "_unechoed_reported",
        "by_message",
        "permission_log",
        "permissions",
        "prompts",
    )

    def __init__(
        self,
        session_id: str,
        note: Callable[[str, str], None],
        side_events: list[ev.Event],
        in_background: Callable[[str | None, str | None], bool],
    ) -> None:
        self._session_id = session_id
        self._note = note
        self._side = side_events
        self._in_background = in_background
        self.prompts: list[PromptState] = []
        self.by_message: dict[str, PromptState] = {}
        self._awaiting_echo: dict[str, list[PromptState]] = {}
        self._unechoed_reported: set[PromptState] = set()  # reported once each (10.5)
        self._replay_prompts: list[PromptState] = []
        self.permissions: dict[int | str, PermissionState] = {}
        self.permission_log: list[PermissionState] = []
        self._pending_noted: set[int | str] = set()  # permission-pending-at-idle reported

    def link(self, prompt: PromptState, message_id: str, applied: bool, restored: bool) -> None:
        """Bind a prompt to its user message id (10.4); ``applied``: that message exists."""
        prompt.message_id = message_id
        self.by_message.setdefault(message_id, prompt)
        if applied and not restored:
            prompt.advance("echo")
        elif not prompt.echoed:
            self._awaiting_echo.setdefault(message_id, []).append(prompt)

    def user_message(self, message_id: str) -> None:
        """A user message was created: the prompts answered with its id are echoed (10.4)."""
        placed = self.by_message.get(message_id)
        if placed is not None:
            placed.advance("placed")  # placed (again): 10.5
        for prompt in self._awaiting_echo.pop(message_id, ()):
            if not prompt.echoed:
                prompt.advance("echo")
                self._side.append(
                    ev.PromptEchoed(
                        session_id=self._session_id,
                        request_id=prompt.request_id,
                        message_id=message_id,
                    )
                )

    def add_permission(self, perm: PermissionState) -> None:
        """Record a permission request; an id answered before may come again (1.2)."""
        self.permissions[perm.request_id] = perm
        self.permission_log.append(perm)
        self._pending_noted.discard(perm.request_id)  # a new request under a used id

    def turn_ended(self) -> None:
        """Work ended: report pending permissions (R40) and unechoed prompts (R2), once each."""
        for perm in self.permissions.values():
            if (
                perm.status == "pending"
                and perm.request_id not in self._pending_noted  # once: a later idle adds nothing
                and not self._in_background(perm.tool_call_id, perm.terminal_id)
            ):
                self._pending_noted.add(perm.request_id)
                self._note(
                    "permission-pending-at-idle",
                    f"work ended while permission request {perm.request_id!r} is still pending"
                    " (it stays pending; R40)",
                )
        for message_id, prompts in self._awaiting_echo.items():
            for prompt in prompts:
                if prompt.inserted and not prompt.echoed and prompt not in self._unechoed_reported:
                    self._unechoed_reported.add(prompt)
                    self._note(
                        "prompt-not-echoed",
                        f"prompt {prompt.request_id!r} was accepted as {message_id!r} but no"
                        " user-message update reported it before the work ended (R2)",
                    )

    def begin_replay(self) -> None:
        """A history replay starts: it can tell about the prompts accepted before it (R2)."""
        self._replay_prompts = [p for p in self.prompts if p.status == "accepted"]

    def end_replay(self, reported: Container[str], lost: Container[str], ok: bool) -> None:
        """A replay ended: place its prompts, or mark them ``not_retained`` (R2, 10.5).

        A prompt is placed when ``reported`` names its message; otherwise it is not retained
        when the replay was full (``ok``) or ``lost`` names its message.
        """
        for prompt in self._replay_prompts:
            if prompt.message_id is None:
                continue
            if prompt.message_id in reported:
                prompt.advance("placed")
            elif ok or prompt.message_id in lost:
                prompt.advance("lost")
        self._replay_prompts = []
