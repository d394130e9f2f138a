"""The reference model's vocabulary and state containers.

Owns: the known update kinds (spec 3), the keys each patch payload gives a meaning
(spec 13.2), the plain containers a session's state is kept in (entities, spec 2.3; the
session, 6, 10-12; pending requests, 1.2) and the small questions asked of them (is the
session idle, R11; what background work is listed, 6.4). Part of
:class:`~acp_client.testing.ReferenceModel`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SNAPSHOT_FORMAT = "acp-client/snapshot@1"

# Spec section 3: the nineteen known `sessionUpdate` values.
UPDATE_KINDS = (
    "user_message_chunk",
    "user_message",
    "agent_message_chunk",
    "agent_message",
    "agent_thought_chunk",
    "agent_thought",
    "state_update",
    "tool_call_content_chunk",
    "tool_call_update",
    "terminal_update",
    "terminal_output_chunk",
    "plan_update",
    "available_commands_update",
    "config_option_update",
    "session_info_update",
    "usage_update",
    "notice",
    "compaction_update",
    "compaction_summary_chunk",
)
"""The nineteen known ``sessionUpdate`` values (spec section 3), in the spec's order."""
PREVIEW_UPDATE_KINDS = (
    "subagent_update",
    "session_message",
    "session_message_chunk",
    "plan_removed",
    "replay_complete",
)
"""The ACP v2 Preview ``sessionUpdate`` values the model applies (P1-P5, P12-P15, P18, P45)."""
KNOWN_UPDATES = frozenset(UPDATE_KINDS) | frozenset(PREVIEW_UPDATE_KINDS)

_ROLE_OF_UPDATE = {
    "user_message_chunk": "user",
    "user_message": "user",
    "agent_message_chunk": "agent",
    "agent_message": "agent",
    "agent_thought_chunk": "thought",
    "agent_thought": "thought",
}

# Spec section 7.4: finished tool call statuses; anything else is not finished (R16).
_FINISHED = frozenset({"completed", "failed", "cancelled"})
_UINT64_MAX = 2**64 - 1
_KNOWN_STATES = frozenset({"running", "idle", "requires_action"})

# Keys of the patch payloads that have a meaning; every other key is an unknown field,
# kept on the entity with the PATCH rule (spec 13.2).
_MESSAGE_KEYS = frozenset({"sessionUpdate", "messageId", "content", "_meta"})
_TOOL_CALL_KEYS = frozenset(
    {
        "sessionUpdate",
        "toolCallId",
        "title",
        "name",
        "kind",
        "status",
        "content",
        "locations",
        "rawInput",
        "rawOutput",
        "capabilities",
        "_meta",
    }
)
_TERMINAL_KEYS = frozenset(
    {
        "sessionUpdate",
        "terminalId",
        "command",
        "cwd",
        "output",
        "exitStatus",
        "size",
        "capabilities",
        "_meta",
    }
)
_COMPACTION_KEYS = frozenset(
    {"sessionUpdate", "compactionId", "status", "summary", "error", "_meta"}
)
_INFO_KEYS = frozenset({"sessionUpdate", "title", "updatedAt", "_meta"})

Key = tuple[str, ...]


class _Rejected(Exception):
    """A known update that is malformed even after lenient decoding (spec 1.8)."""


# ---------------------------------------------------------------------------------------
# State containers.


@dataclass
class _Entity:
    """A timeline entity, terminal or plan: its stored fields plus unknown extra fields."""

    fields: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)
    first_seen: int = 0
    last_changed: int = 0
    excluded: bool = False
    output: bytearray = field(default_factory=bytearray)  # terminals only


@dataclass
class _Session:
    session_id: str
    announced: bool = False
    created_by_new: bool = False
    closed: bool = False
    close_succeeded: bool = False  # the snapshot's `closed`: a session/close succeeded
    reopening: bool = False  # spec 12.3: a resume of this closed session is under way
    replaying: bool = False
    resuming: int = 0
    replay: dict[str, Any] | None = None  # the snapshot's `replay` (Preview section 4)
    replay_shown: bool = False  # reported: the connection speaks the Preview (P21)
    parent: str | None = None  # Preview P1-P4: the parent fixed at the announcement
    children: list[str] = field(default_factory=list)  # in announcement order
    subagent: dict[str, Any] | None = None  # the association, patched (P5, P31)
    ordinal: int = 0
    state: dict[str, Any] | None = None
    state_unknown: bool = False  # the opt-in `unknown` state stands (Preview P32)
    last_known: dict[str, Any] | None = None  # the state before it (P32, `lastKnownState`)
    suggestions: list[Any] | None = None  # opt-in prompt suggestions (P34-P39)
    cursors: dict[str, dict[str, Any]] | None = None  # opt-in cursors, once one was seen
    previous_cursors: dict[str, dict[str, Any]] = field(default_factory=dict)  # P44
    completed: list[str | None] = field(default_factory=list)
    work_start: int | None = None
    last_work_end: int = 0
    # an accepted prompt's work is awaited until the next idle (R49); the last idle's ordinal
    work_awaited: bool = False
    idle_ordinal: int = 0
    cancel_requested: bool = False
    timeline: list[Key] = field(default_factory=list)
    entities: dict[Key, _Entity] = field(default_factory=dict)
    terminals: dict[str, _Entity] = field(default_factory=dict)
    plans: dict[str, _Entity] = field(default_factory=dict)
    commands: list[Any] | None = None
    config: list[Any] | None = None
    commands_seq: int = -1  # global sequence number of the last update of that kind (R50)
    config_seq: int = -1
    info: _Entity | None = None
    usage: dict[str, Any] | None = None
    notices: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    permissions: list[dict[str, Any]] = field(default_factory=list)
    unknown: list[dict[str, Any]] = field(default_factory=list)
    unretained: list[_Entity] = field(default_factory=list)
    user_ids_seen: set[str] = field(default_factory=set)
    locally_cancelled: set[str] = field(default_factory=set)
    previous: dict[Key, _Entity] = field(default_factory=dict)
    previous_order: list[Key] = field(default_factory=list)


#: The fields of ``session/request_permission`` params, and the keys of a PERMISSION object.
_PERMISSION_PARAMS = frozenset({"sessionId", "title", "description", "options", "subject", "_meta"})
_PERMISSION_KEYS = frozenset(
    {"requestId", "title", "description", "toolCallId", "status", "outcome", "options", "subject"}
)


@dataclass
class _Pending:
    method: str
    params: Any
    seq: int
    record: dict[str, Any] | None = None  # the prompt or permission record it feeds
    attempt: dict[str, Any] | None = None  # a keyed prompt's attempt (Preview P27)


def _key_of_entity(e: _Entity) -> Key:
    f = e.fields
    if "role" in f:
        return ("message", f["role"], f["messageId"])
    if "toolCallId" in f:
        return ("toolCall", f["toolCallId"])
    if "compactionId" in f:
        return ("compaction", f["compactionId"])
    return ("sessionMessage", f["messageId"])  # ACP v2 Preview P12: its own id space


def _is_idle(s: _Session) -> bool:
    """Idle by the last snapshot, or a ``session/new`` session before any (R11).

    The opt-in ``unknown`` state is never idle (Preview P32).
    """
    state = s.state.get("state") if s.state is not None else None
    if s.state_unknown:
        return False
    return state == "idle" or (state is None and s.created_by_new)


def _background_ids(s: _Session) -> tuple[set[str], set[str]]:
    """Tool call ids and terminal ids listed in the latest `background` list."""
    calls: set[str] = set()
    terms: set[str] = set()
    state = s.state
    if state is None or (state.get("state") not in _KNOWN_STATES and not s.state_unknown):
        return calls, terms  # R64: an unrecognized state reports no background
    for item in state.get("background") or []:
        if item.get("type") == "tool_call":
            calls.add(item["toolCallId"])
        elif item.get("type") == "terminal":
            terms.add(item["terminalId"])
    return calls, terms
