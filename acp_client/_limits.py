"""The entity limit of a session: which update would make one entity too many (issue 26).

Owns :data:`DEFAULT_MAX_ENTITIES` and the two questions a connection asks before applying an
update to a session that is full: how many entities it holds (messages, tool calls and
compactions on the timeline, terminals, plans, notices, unknown updates, ACP-V2-CLIENT-STATE
2.3, 13.1) and whether the update would add one. An update that would is not applied: the
connection keeps it raw in a ``LimitReached`` event (see :mod:`._inbound`). An update to an
entity that exists always applies, so a full session still completes what it holds.
"""

from __future__ import annotations

from typing import Any

from . import _schema as s
from ._entities import Role
from ._errors import LimitExceeded
from ._session import Session

__all__ = ["DEFAULT_MAX_ENTITIES", "check_entities", "entity_count"]

DEFAULT_MAX_ENTITIES = 100_000
"""Entities one session keeps at most (``Connection(max_entities=...)``)."""

_ROLE: dict[type[Any], Role] = {
    s.UserMessageChunk: "user",
    s.UserMessage: "user",
    s.AgentMessageChunk: "agent",
    s.AgentMessage: "agent",
    s.AgentThoughtChunk: "thought",
    s.AgentThought: "thought",
}
_KEYED: dict[type[Any], tuple[str, str]] = {
    s.ToolCallUpdate: ("tool_calls", "tool_call_id"),
    s.ToolCallContentChunk: ("tool_calls", "tool_call_id"),
    s.TerminalUpdate: ("terminals", "terminal_id"),
    s.TerminalOutputChunk: ("terminals", "terminal_id"),
    s.CompactionUpdate: ("compactions", "compaction_id"),
    s.CompactionSummaryChunk: ("compactions", "compaction_id"),
}
#: Updates that change the session itself, never adding an entity.
_SESSION_LEVEL = (
    s.StateUpdate,
    s.AvailableCommandsUpdate,
    s.ConfigOptionUpdate,
    s.SessionInfoUpdate,
    s.UsageUpdate,
)


def entity_count(session: Session) -> int:
    """The entities a session holds (each store's size; constant time)."""
    tl, _ = session.parts()
    return len(tl.entries) + len(tl.terminals) + len(tl.plans) + len(tl.notices) + len(tl.unknown)


def _adds_entity(session: Session, update: Any) -> bool:
    cls = type(update)
    role = _ROLE.get(cls)
    if role is not None:
        return session.message(role, update.message_id) is None
    keyed = _KEYED.get(cls)
    if keyed is not None:
        return getattr(update, keyed[1]) not in getattr(session, keyed[0])
    if cls is s.PlanUpdate:
        plan = update.plan
        plan_id = plan.plan_id if type(plan) is s.PlanItems else plan.get("planId")
        return plan_id not in session.plans
    return not isinstance(update, _SESSION_LEVEL)  # a notice, an unknown update: kept


def check_entities(session: Session, update: Any, limit: int) -> None:
    """Raise :class:`LimitExceeded` if ``update`` would add an entity to a full session."""
    if entity_count(session) >= limit and _adds_entity(session, update):
        raise LimitExceeded(
            "max_entities",
            limit,
            f"an update adding an entity to session {session.session_id!r} not applied",
        )
