# Owns what the v1 adapter remembers (V1-TO-V2.md sections 4, 5, 6, 8): a prompt turn, a
# session's open message, synthetic ids, modes, tool calls and terminals; and the variant
# tables of section 3.2. No behaviour beyond small pure helpers.
"""The v1 adapter's state: turns, sessions and the variant tables."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from .. import _schema as s
from .._codec import convert
from .._errors import RemoteProtocolError

Direction = Literal["incoming", "outgoing"]
"""``"incoming"``: Agent -> client; ``"outgoing"``: client -> Agent."""

JSON = Any
Message = dict[str, Any]
Output = list[tuple[str, Any]]
"""``(direction, message)`` pairs: plain JSON-RPC dicts, or a Struct notification that keeps an
update the v2 reducer must not interpret (V1-TO-V2 3.2: "passed through as an unknown v2
variant")."""

# Draft v1 variants: the same shapes in v2, but only with the draft surface enabled.
DRAFT_VARIANTS = frozenset(
    {"plan_update", "plan_removed", "subagent_update", "session_message", "session_message_chunk"}
)
# Every name v2 gives an update variant (stable and draft): one v1 lacks is wrapped raw.
V2_VARIANTS = (
    frozenset(
        cls.__struct_config__.tag
        for cls in s.KNOWN_SESSION_UPDATES
        if hasattr(cls, "__struct_config__")
    )
    | DRAFT_VARIANTS
)
# The v1 variants (V1-TO-V2 3.2) are the rows of `updates.TRANSLATIONS`.

ROLES = {"user_message_chunk": "user", "agent_message_chunk": "agent"}
ROLES["agent_thought_chunk"] = "thought"


def is_placeholder(item: JSON, terminal_id: str | None = None) -> bool:
    """Whether a translated content item stands in for a terminal with no traffic (3.4)."""
    return (
        isinstance(item, dict)
        and item.get("type") == "_acp_v1_terminal"
        and (terminal_id is None or item.get("terminalId") == terminal_id)
    )


def id_key(request_id: JSON) -> str:
    """A hashable key for a JSON-RPC id (``1`` and ``"1"`` stay distinct)."""
    return json.dumps(request_id, sort_keys=True)


def make_notification(method: str, params: JSON) -> Message:
    return {"jsonrpc": "2.0", "method": method, "params": params}


@dataclass
class Turn:
    """One v1 `session/prompt` request, from the request to its answer."""

    request_id: JSON
    session_id: str
    prompt: JSON
    inserted: bool = False
    cancel_sent: bool = False
    closed: bool = False  # a session/close ended it (A18): its result adds nothing


@dataclass
class SessionState:
    """What the adapter remembers about one session."""

    session_id: str
    open: tuple[str, str] | None = None  # (role, v2 messageId) of the open message
    minted: int = 0
    agent_ids: set[str] = field(default_factory=set)
    pending: Turn | None = None  # prompt awaiting insertion
    active: dict[str, Turn] = field(default_factory=dict)  # inserted, not ended
    state: str | None = None  # last foreground state the adapter emitted
    replaying: bool = False
    closed: bool = False
    titles: dict[str, JSON] = field(default_factory=dict)  # known tool calls -> title
    tool_meta: dict[str, JSON] = field(default_factory=dict)
    compaction_meta: dict[str, JSON] = field(default_factory=dict)
    info_meta: JSON = None
    permissions: set[str] = field(default_factory=set)  # pending permission request keys
    terminals: set[str] = field(default_factory=set)  # terminal ids with rebuilt data
    # what the terminal updates synthesised so far say of each terminal (merged snapshot)
    terminal_data: dict[str, dict[str, JSON]] = field(default_factory=dict)
    # terminals a load's replay reset on the v2 side: rebuilt again when next named
    stale_terminals: set[str] = field(default_factory=set)
    # tool calls whose latest content names a terminal without traffic yet: id -> content
    placeholders: dict[str, list[JSON]] = field(default_factory=dict)
    agent_options: list[JSON] | None = None
    modes: list[dict[str, JSON]] | None = None
    mode_current: str | None = None
    config_emitted: int = 0  # config_option_updates emitted (R50: a setup result yields)


def valid_v2(value: JSON, tp: Any) -> bool:
    """Whether the v2 connection will accept ``value`` as ``tp`` (else it rejects it)."""
    try:
        convert(value, tp)
    except RemoteProtocolError:
        return False
    return True
