"""Events: small frozen values with past-tense names, one per thing that happened.

Every applied ``session/update`` yields exactly one event naming the entity it changed
and how, so that a UI re-renders only that. The connection adds events for requests and
responses (prompts, permissions, setup). Events are msgspec Structs: cheap to create,
immutable, comparable. The contract a view folds them by (entity versions, timeline
positions, removals, offsets) is docs/events.md (E1-E8).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from . import _schema as s
from ._entities import Role
from ._errors import RemoteProtocolError

__all__ = [
    "Event",
    "ContentChange",
    "MessageChunkAppended",
    "MessageUpserted",
    "ToolCallChunkAppended",
    "ToolCallUpserted",
    "TerminalOutputAppended",
    "TerminalUpserted",
    "PlanUpdated",
    "PlanRemoved",
    "SessionMessageUpserted",
    "SessionMessageChunkAppended",
    "PromptSuggestionsUpdated",
    "CursorUpserted",
    "AvailableCommandsUpdated",
    "ConfigOptionsUpdated",
    "SessionInfoUpdated",
    "UsageUpdated",
    "NoticeReceived",
    "CompactionUpserted",
    "CompactionChunkAppended",
    "StateChanged",
    "EntriesChanged",
    "EntriesRemoved",
    "UnknownUpdateReceived",
    "UpdateRejected",
    "SessionCreated",
    "SessionAnnounced",
    "SessionClosed",
    "ReplayStarted",
    "ReplayFinished",
    "TreeUpdateApplied",
    "CancelRequested",
    "PromptSent",
    "PromptAccepted",
    "PromptRejected",
    "PromptEchoed",
    "PermissionRequested",
    "PermissionAnswered",
    "PermissionWithdrawn",
    "AgentRequestReceived",
    "ResponseReceived",
    "UnmatchedResponseReceived",
    "InvalidMessageReceived",
    "UnknownNotificationReceived",
    "LimitReached",
]

ContentChange = Literal["unchanged", "replaced", "cleared"]
"""How an upsert changed a content list: omitted, a non-empty array, or ``null``/``[]``."""


class Event(msgspec.Struct, frozen=True, gc=False):
    """Base of every event."""


class _SessionEvent(Event, frozen=True):
    session_id: str


class MessageChunkAppended(_SessionEvent, frozen=True):
    """A chunk appended one block to a message (``created`` when it made the message)."""

    role: Role
    message_id: str
    block: s.ContentBlock
    created: bool
    index: int = -1
    """The entry's position in the session's timeline when the event was made (E2)."""
    version: int = 0
    """The entity's ``version`` right after this change (E1): a view that read the entity
    at this version or later already shows it."""


class MessageUpserted(_SessionEvent, frozen=True):
    """A whole-message update patched a message."""

    role: Role
    message_id: str
    created: bool
    content: ContentChange
    index: int = -1
    """The entry's position in the session's timeline when the event was made (E2)."""
    version: int = 0
    """The entity's ``version`` right after this change (E1): a view that read the entity
    at this version or later already shows it."""


class ToolCallChunkAppended(_SessionEvent, frozen=True):
    """A ``tool_call_content_chunk`` appended one content item."""

    tool_call_id: str
    item: s.ToolCallContent
    created: bool
    index: int = -1
    """The entry's position in the session's timeline when the event was made (E2)."""
    version: int = 0
    """The entity's ``version`` right after this change (E1): a view that read the entity
    at this version or later already shows it."""


class ToolCallUpserted(_SessionEvent, frozen=True):
    """A ``tool_call_update`` (or a permission subject) patched a tool call."""

    tool_call_id: str
    created: bool
    content: ContentChange
    index: int = -1
    """The entry's position in the session's timeline when the event was made (E2)."""
    version: int = 0
    """The entity's ``version`` right after this change (E1): a view that read the entity
    at this version or later already shows it."""


class TerminalOutputAppended(_SessionEvent, frozen=True):
    """A ``terminal_output_chunk`` appended bytes to a terminal."""

    terminal_id: str
    data: bytes
    created: bool
    version: int = 0
    """The entity's ``version`` right after this change (E1)."""


class TerminalUpserted(_SessionEvent, frozen=True):
    """A ``terminal_update`` patched a terminal; ``output`` says what became of its bytes.

    Also sent (``created=True``, ``output="unchanged"``) after the event of an update that
    created a terminal by naming it: tool-call content or a ``background`` list (R22, R53).
    """

    terminal_id: str
    created: bool
    output: ContentChange
    version: int = 0
    """The entity's ``version`` right after this change (E1)."""


class PlanUpdated(_SessionEvent, frozen=True):
    """A plan's content was replaced."""

    plan_id: str
    created: bool
    version: int = 0
    """The entity's ``version`` right after this change (E1)."""


class PlanRemoved(_SessionEvent, frozen=True):
    """A ``plan_removed`` deleted a plan (``removed`` false: no plan had that id, P45)."""

    plan_id: str
    removed: bool


class SessionMessageUpserted(_SessionEvent, frozen=True):
    """A ``session_message`` patched an inter-session message (P12)."""

    message_id: str
    created: bool
    content: ContentChange
    index: int = -1
    """The entry's position in the session's timeline when the event was made (E2)."""
    version: int = 0
    """The entity's ``version`` right after this change (E1): a view that read the entity
    at this version or later already shows it."""


class SessionMessageChunkAppended(_SessionEvent, frozen=True):
    """A ``session_message_chunk`` appended one block to an inter-session message (P13)."""

    message_id: str
    block: s.ContentBlock
    created: bool
    index: int = -1
    """The entry's position in the session's timeline when the event was made (E2)."""
    version: int = 0
    """The entity's ``version`` right after this change (E1): a view that read the entity
    at this version or later already shows it."""


class PromptSuggestionsUpdated(_SessionEvent, frozen=True):
    """The prompt-suggestion list was replaced (``[]``: withdrawn) or cleared (opt-in, P34).

    ``applied`` is false for an update received during a replay (not applied, P37).
    """

    count: int
    applied: bool = True


class CursorUpserted(_SessionEvent, frozen=True):
    """A ``cursor_update`` created or patched a cursor (opt-in, P40-P43)."""

    cursor_id: str
    created: bool
    version: int = 0
    """The entity's ``version`` right after this change (E1)."""


class AvailableCommandsUpdated(_SessionEvent, frozen=True):
    """The command list was replaced."""


class ConfigOptionsUpdated(_SessionEvent, frozen=True):
    """The config option list was replaced."""


class SessionInfoUpdated(_SessionEvent, frozen=True):
    """Session info (title, updatedAt, _meta) was patched."""


class UsageUpdated(_SessionEvent, frozen=True):
    """Context usage / cost changed."""


class NoticeReceived(_SessionEvent, frozen=True):
    """A notice arrived (live information, not history)."""

    notice: s.Notice


class CompactionUpserted(_SessionEvent, frozen=True):
    """A ``compaction_update`` patched a compaction."""

    compaction_id: str
    created: bool
    summary: ContentChange
    index: int = -1
    """The entry's position in the session's timeline when the event was made (E2)."""
    version: int = 0
    """The entity's ``version`` right after this change (E1): a view that read the entity
    at this version or later already shows it."""


class CompactionChunkAppended(_SessionEvent, frozen=True):
    """A ``compaction_summary_chunk`` appended one summary block."""

    compaction_id: str
    block: s.ContentBlock
    created: bool
    index: int = -1
    """The entry's position in the session's timeline when the event was made (E2)."""
    version: int = 0
    """The entity's ``version`` right after this change (E1): a view that read the entity
    at this version or later already shows it."""


class StateChanged(_SessionEvent, frozen=True):
    """A ``state_update`` replaced the foreground snapshot.

    ``turn_completed`` is true when this moved the session into ``idle`` from a non-idle
    state (outside replay): the work ended with ``stop_reason``.
    """

    state: str
    stop_reason: str | None
    turn_completed: bool


class EntriesChanged(_SessionEvent, frozen=True):
    """Timeline entries ``[start, stop)`` changed together, each to a new version (E3).

    ``reason`` ``"refusal"``: a turn ended with ``refusal`` and excluded them from the
    agent's next context (R14); entries placed after ``stop`` are not concerned, even those
    placed by later updates of the same read.
    """

    start: int
    stop: int
    reason: str


class EntriesRemoved(_SessionEvent, frozen=True):
    """Timeline entries ``[start, stop)`` left the timeline (E4).

    The entries after them move down by ``stop - start``.
    ``reason`` ``"replay"``: a history replay starts (12.3); every terminal and plan of the
    session leaves too (``terminal_ids``, ``plan_ids``). What the replay reports again comes
    back as new entities (``created=True``), at the end of the timeline.
    """

    start: int
    stop: int
    reason: str
    terminal_ids: tuple[str, ...] = ()
    plan_ids: tuple[str, ...] = ()


class UnknownUpdateReceived(_SessionEvent, frozen=True):
    """An update of an unknown or custom kind, kept verbatim."""

    update: dict[str, Any]


class UpdateRejected(_SessionEvent, frozen=True):
    """A ``session/update`` that could not be applied (kept raw, with its error)."""

    error: RemoteProtocolError
    raw: Any


class SessionCreated(_SessionEvent, frozen=True):
    """A session was seen for the first time (``announced`` when by a setup exchange)."""

    announced: bool


class SessionAnnounced(_SessionEvent, frozen=True):
    """A ``session/new`` or ``session/resume`` exchange for the session succeeded."""


class SessionClosed(_SessionEvent, frozen=True):
    """``session/close`` succeeded (or was answered -32002)."""


class ReplayStarted(_SessionEvent, frozen=True):
    """A ``session/resume`` with ``replayFrom`` was sent: history is being replayed."""


class ReplayFinished(_SessionEvent, frozen=True):
    """The replay ended; ``unretained`` entries were not reported again."""

    ok: bool
    unretained: int


class TreeUpdateApplied(_SessionEvent, frozen=True):
    """A ``subagent_update`` or ``replay_complete`` on this session (ACP-V2-PREVIEW 3.1, 3.3).

    ``update`` is the update as plain wire data; what it changed follows as its own events
    (``SessionCreated`` for a new child, ``ReplayFinished`` at a replay's marker) and in
    the sessions' ``tree``.
    """

    update: dict[str, Any]


class CancelRequested(_SessionEvent, frozen=True):
    """``session/cancel`` was sent: the listed tool calls are now shown cancelled locally."""

    tool_call_ids: tuple[str, ...]


class _RequestEvent(_SessionEvent, frozen=True):
    """An event about one JSON-RPC request of a session (a prompt or a permission)."""

    request_id: int | str


class PromptSent(_RequestEvent, frozen=True):
    """A ``session/prompt`` request was sent."""


class PromptAccepted(_RequestEvent, frozen=True):
    """The prompt was inserted; ``echoed`` if its user message was already applied."""

    message_id: str | None
    echoed: bool


class PromptRejected(_RequestEvent, frozen=True):
    """The prompt was not inserted (error response)."""

    error: s.Error


class PromptEchoed(_RequestEvent, frozen=True):
    """The user-message update for an accepted prompt was applied."""

    message_id: str


class PermissionRequested(_RequestEvent, frozen=True):
    """The agent asks for permission; answer with ``Connection.answer_permission``."""

    request: s.RequestPermissionRequest


class PermissionAnswered(_RequestEvent, frozen=True):
    """A permission request was answered (``outcome`` as sent)."""

    outcome: Any


class PermissionWithdrawn(_RequestEvent, frozen=True):
    """The agent withdrew a pending permission request with ``$/cancel_request``."""


class AgentRequestReceived(Event, frozen=True):
    """The agent sent a request acp_client does not handle.

    In live mode it was already answered -32601, unless its method is one of the
    connection's ``extension_methods``, or ``elicitation/create`` after an ``initialize``
    that advertised ``elicitation`` (a malformed one is answered -32602): then answer it.
    """

    request_id: int | str
    method: str
    params: Any


class ResponseReceived(Event, frozen=True):
    """A response to one of the client's requests (``error`` set for an error response)."""

    request_id: int | str
    method: str
    result: Any
    error: s.Error | None
    session_id: str | None


class UnmatchedResponseReceived(Event, frozen=True):
    """A response whose request is unknown (kept raw, with a diagnostic)."""

    message: s.Response | s.ErrorResponse


class InvalidMessageReceived(Event, frozen=True):
    """A line or message that could not be understood (kept raw, with a diagnostic)."""

    error: RemoteProtocolError


class UnknownNotificationReceived(Event, frozen=True):
    """A notification of the agent's whose method acp_client does not know (kept raw).

    It changes no state; a ``unknown-notification`` diagnostic counts it.
    """

    method: str
    params: Any
    session_id: str | None


class LimitReached(Event, frozen=True):
    """A message that would pass a limit the embedder set was not applied (kept raw).

    ``limit`` names the limit (``"max_sessions"``, ``"max_pending"``), ``value`` is its value
    (the count reached), ``message`` the message as decoded; a ``limit-reached`` diagnostic
    says the same. In live mode a request refused this way was answered with an error.
    """

    limit: str
    value: int
    message: Any
    session_id: str | None
