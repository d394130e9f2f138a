"""Read access to a session's stores: the timeline and the entities by id (2.2, 2.3, 12.3).

:class:`StoresView` is the part of :class:`~._session.Session` that only reads its
``_timeline.Timeline``: what a UI or the snapshot writer asks of the conversation. The
reducer (``_session``) owns the changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from . import _schema as s
from ._entities import (
    CompactionState,
    ListView,
    MessageState,
    PlanState,
    Role,
    TerminalState,
    TimelineEntry,
    ToolCallState,
)
from ._timeline import Timeline

__all__ = ["StoresView"]


class StoresView:
    """The stores of a session, read-only (a base of :class:`~._session.Session`)."""

    __slots__ = ()
    _tl: Timeline

    @property
    def ordinal(self) -> int:
        """How many updates have been applied."""
        return self._tl.ordinal

    @property
    def timeline(self) -> ListView[TimelineEntry]:
        """Messages, tool calls and compactions in first-seen order."""
        return ListView(self._tl.entries)

    def message(self, role: Role, message_id: str) -> MessageState | None:
        """The message with that role and id, if any."""
        return self._tl.messages[role].get(message_id)

    def messages(self, role: Role) -> Mapping[str, MessageState]:
        """All messages of one role by id."""
        return MappingProxyType(self._tl.messages[role])

    @property
    def tool_calls(self) -> Mapping[str, ToolCallState]:
        """Tool calls by id, in first-seen order."""
        return MappingProxyType(self._tl.tool_calls)

    @property
    def terminals(self) -> Mapping[str, TerminalState]:
        """Terminals by id, in first-seen order."""
        return MappingProxyType(self._tl.terminals)

    @property
    def plans(self) -> Mapping[str, PlanState]:
        """Plans by id, in first-seen order."""
        return MappingProxyType(self._tl.plans)

    @property
    def compactions(self) -> Mapping[str, CompactionState]:
        """Compactions by id."""
        return MappingProxyType(self._tl.compactions)

    @property
    def notices(self) -> ListView[s.Notice]:
        """Every notice received, in order (live information, not history)."""
        return ListView(self._tl.notices)

    @property
    def notice_ordinals(self) -> ListView[int]:
        """The ordinal each of :attr:`notices` arrived at (2.2), to anchor it in a UI."""
        return ListView(self._tl.notice_ordinals)

    @property
    def unknown_updates(self) -> ListView[dict[str, Any]]:
        """Updates of unknown kinds, verbatim, in arrival order."""
        return ListView(self._tl.unknown)

    @property
    def unknown_update_ordinals(self) -> ListView[int]:
        """The ordinal each of :attr:`unknown_updates` arrived at (2.2, 13.1)."""
        return ListView(self._tl.unknown_ordinals)

    @property
    def unretained(self) -> ListView[TimelineEntry]:
        """Timeline entries that a history replay did not report again."""
        return ListView(self._tl.unretained)

    @property
    def unretained_terminals(self) -> dict[str, TerminalState]:
        """Terminals a history replay did not report again (not in the snapshot)."""
        return self._tl.unretained_terminals

    @property
    def unretained_plans(self) -> dict[str, PlanState]:
        """Plans a history replay did not report again (not in the snapshot)."""
        return self._tl.unretained_plans
