# Owns what a restored connection (R92) gives the v1 adapter of its sessions: the adapter's own
# state is not in the snapshot, so it is rebuilt as far as the v2 state tells it (V1-TO-V2.md
# sections 4, 5 and 6.3), and docs/rules.md R92 lists what cannot be.
"""Seeding a v1 adapter from the sessions of a restored connection (R92)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .adapter import V1Adapter

__all__ = ["seed_adapter"]

# The ids the adapter mints (section 4): `acp-v1:<role>:<n>`, `:<k>` past an agent's own id.
_MINTED = re.compile(r"acp-v1:[a-z]+:([0-9]+)(?::[0-9]+)?\Z")
_BUSY = frozenset({"running", "requires_action"})


def seed_adapter(adapter: V1Adapter, sessions: Mapping[str, Any]) -> None:
    """Give ``adapter`` what the v1 ``sessions`` (restored ``Session`` objects) tell of it.

    Per session: the message ids in use (a minted id is never minted again, so new messages
    never continue restored ones), the last foreground state, whether it is closed, the tool
    calls' titles and ``_meta`` (updates patch them as before), and, while it works, the
    open message (the next id-less chunk of its role continues it, section 4).
    """
    for session_id, session in sessions.items():
        if session.protocol_version != 1:
            continue
        state = adapter._session(session_id)
        assert state is not None  # a string id
        for kind in ("user", "agent", "thought"):
            for message_id in session.messages(kind):
                state.agent_ids.add(message_id)
                minted = _MINTED.match(message_id)
                if minted is not None:
                    state.minted = max(state.minted, int(minted[1]))
        current = session.state.state if session.state is not None else None
        state.state = current if isinstance(current, str) else None
        state.closed = bool(session.closed)
        for tool_call_id, call in session.tool_calls.items():
            state.titles[tool_call_id] = call.title
            if call.meta is not None:
                state.tool_meta[tool_call_id] = call.meta
        entries = session.timeline
        last: Any = entries[-1] if len(entries) else None
        if current in _BUSY and isinstance(getattr(last, "role", None), str):
            state.open = (last.role, last.message_id)
