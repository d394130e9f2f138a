"""The entity stores of one session and its timeline (ACP-V2-CLIENT-STATE.md 2.2, 2.3, 12.3).

A :class:`Timeline` owns what a session knows about its entities: the update ordinal (2.2),
the timeline of messages, tool calls, compactions and session messages in first-seen order
(2.3), the stores by id (messages per role, tool calls, terminals, plans, compactions,
session messages and cursors, ACP v2 Preview P12, P40), notices and unknown
updates with the ordinals they arrived at, and the replay generations (12.3): what a
history replay did not report again moves to ``unretained``.

It only stores and finds; what an update changes is the reducer's (``_session``) and
when work starts or ends is the foreground's (``_foreground``). Its attributes are the
documented internal interface that ``_snapshot`` reads and restores.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from . import _entities as en

__all__ = ["Timeline"]

E = TypeVar("E", en.ToolCallState, en.CompactionState, en.SessionMessageState)
_Side = tuple[dict[str, en.TerminalState], dict[str, en.PlanState]]  # terminals, plans


def _is_user(entry: en.TimelineEntry) -> bool:
    return type(entry) is en.MessageState and entry.role == "user"


class Timeline:
    """The entities of one session, by id and in first-seen order (2.3), and the ordinal.

    Attributes:
        ordinal: how many updates were applied (each update's own ordinal, 2.2).
        entries: messages, tool calls and compactions in first-seen order; nothing moves.
        user / agent / thought: messages of each role by id (``messages`` maps the role).
        tool_calls / terminals / plans / compactions: the other stores, by id.
        notices / notice_ordinals: notices and the ordinal each arrived at.
        unknown / unknown_ordinals: unknown updates, verbatim, and their ordinals (13.1).
        unretained: timeline entries a history replay did not report again (12.3).
        unretained_terminals / unretained_plans: the same for terminals and plans.
        removed_plans: plans a ``plan_removed`` deleted and not set again since, by id, with
            the ordinal of the removal (ACP v2 Preview P45; for views, not in the snapshot).
        previous: while a replay runs, the timeline before it by key (else ``None``).
        changes: how many entity changes were made; each change stamps the entity's
            ``version`` with it (docs/events.md, E1).
    """

    __slots__ = (
        "agent",
        "block_limit",
        "changes",
        "compactions",
        "cursors",
        "cursors_seen",
        "entries",
        "messages",
        "notice_ordinals",
        "notices",
        "ordinal",
        "plans",
        "previous",
        "previous_cursors",
        "previous_side",
        "removed_plans",
        "session_messages",
        "terminal_limit",
        "terminals",
        "thought",
        "tool_calls",
        "unknown",
        "unknown_ordinals",
        "unretained",
        "unretained_plans",
        "unretained_terminals",
        "user",
    )

    def __init__(self, terminal_limit: int | None = None, block_limit: int | None = None) -> None:
        self.ordinal = 0
        self.changes = 0
        self.terminal_limit = terminal_limit
        self.block_limit = block_limit  # content items kept per entity (``_retention``)
        self.notices: list[Any] = []
        self.notice_ordinals: list[int] = []
        self.unknown: list[dict[str, Any]] = []
        self.unknown_ordinals: list[int] = []
        self.unretained: list[en.TimelineEntry] = []
        self.unretained_terminals: dict[str, en.TerminalState] = {}
        self.unretained_plans: dict[str, en.PlanState] = {}
        self.removed_plans: dict[str, int] = {}
        self.previous: dict[tuple[str, str], en.TimelineEntry] | None = None
        self.previous_side: _Side | None = None
        self.cursors_seen = False  # a cursor was ever seen (the snapshot's `cursors` key)
        self.previous_cursors: dict[str, en.CursorState] | None = None
        self._new_generation()

    def _new_generation(self) -> None:
        """Empty stores: a new session, or the generation a history replay rebuilds."""
        self.entries: list[en.TimelineEntry] = []
        self.user: dict[str, en.MessageState] = {}
        self.agent: dict[str, en.MessageState] = {}
        self.thought: dict[str, en.MessageState] = {}
        self.messages: dict[str, dict[str, en.MessageState]] = {
            "user": self.user,
            "agent": self.agent,
            "thought": self.thought,
        }
        self.tool_calls: dict[str, en.ToolCallState] = {}
        self.terminals: dict[str, en.TerminalState] = {}
        self.plans: dict[str, en.PlanState] = {}
        self.compactions: dict[str, en.CompactionState] = {}
        self.session_messages: dict[str, en.SessionMessageState] = {}
        self.cursors: dict[str, en.CursorState] = {}

    # ------------------------------------------------------------ get or create

    def new_message(self, role: en.Role, message_id: str) -> en.MessageState:
        """Create a message first seen now and place it at the end of the timeline."""
        msg = en.MessageState(role, message_id, self.ordinal)
        self.messages[role][message_id] = msg
        msg.index = len(self.entries)
        self.entries.append(msg)
        return msg

    def stamp(self, entity: en.TimelineEntry | en.TerminalState | en.PlanState) -> int:
        """Count one change of ``entity``: its new ``version`` (docs/events.md, E1)."""
        self.changes += 1
        entity.version = self.changes
        return self.changes

    def tool_call(self, tool_call_id: str) -> tuple[en.ToolCallState, bool]:
        """The tool call with this id, created (and placed) if new; and whether it was."""
        return self._placed(self.tool_calls, en.ToolCallState, tool_call_id)

    def compaction(self, compaction_id: str) -> tuple[en.CompactionState, bool]:
        """The compaction with this id, created (and placed) if new; and whether it was."""
        return self._placed(self.compactions, en.CompactionState, compaction_id)

    def _placed(
        self, store: dict[str, E], cls: Callable[[str, int], E], key: str
    ) -> tuple[E, bool]:
        """Get or create: a new entity takes its place at the end of the timeline (2.3)."""
        found = store.get(key)
        if found is not None:
            return found, False
        found = store[key] = cls(key, self.ordinal)
        found.index = len(self.entries)
        self.entries.append(found)
        return found, True

    def session_message(self, message_id: str) -> tuple[en.SessionMessageState, bool]:
        """The session message with this id, created (and placed) if new (P12, P13)."""
        return self._placed(self.session_messages, en.SessionMessageState, message_id)

    def cursor(self, cursor_id: str) -> tuple[en.CursorState, bool]:
        """The cursor with this id, created if new (P40).

        One a running replay moved away is carried into the new generation with its stored
        anchor (P44).
        """
        found = self.cursors.get(cursor_id)
        if found is not None:
            return found, False
        old = self.previous_cursors.pop(cursor_id, None) if self.previous_cursors else None
        self.cursors_seen = True
        self.cursors[cursor_id] = found = old or en.CursorState(cursor_id, self.ordinal)
        return found, old is None

    def remove_plan(self, plan_id: str) -> bool:
        """Delete a plan (P45), noting it as removed; return whether there was one."""
        if self.plans.pop(plan_id, None) is None:
            return False
        self.removed_plans[plan_id] = self.ordinal
        return True

    def terminal(self, terminal_id: str) -> tuple[en.TerminalState, bool]:
        """The terminal with this id, created if new (terminals are not placed, 8)."""
        term = self.terminals.get(terminal_id)
        if term is not None:
            return term, False
        term = en.TerminalState(terminal_id, self.ordinal, self.terminal_limit)
        self.terminals[terminal_id] = term
        return term, True

    def set_plan(self, plan_id: str, plan: Any) -> bool:
        """Store a plan's content (replaced whole); return whether the plan is new."""
        state = self.plans.get(plan_id)
        created = state is None
        if state is None:
            state = self.plans[plan_id] = en.PlanState(plan_id, plan, self.ordinal)
            self.removed_plans.pop(plan_id, None)
        state.plan = plan
        self.stamp(state)
        return created

    def add_notice(self, notice: Any) -> None:
        """Keep a notice, anchored at the current ordinal (2.2)."""
        self.notices.append(notice)
        self.notice_ordinals.append(self.ordinal)

    def add_unknown(self, update: dict[str, Any]) -> None:
        """Keep an unknown update verbatim, anchored at the current ordinal (13.1)."""
        self.unknown.append(update)
        self.unknown_ordinals.append(self.ordinal)

    # ----------------------------------------------------------------- queries

    def user_message_applied(self, message_id: str) -> bool:
        """Whether a user message with this id was ever applied here, in any generation."""
        if message_id in self.user:
            return True
        if self.previous is not None and ("user", message_id) in self.previous:
            return True  # applied before the replay that is running now
        return any(_is_user(e) and e.message_id == message_id for e in self.unretained)  # type: ignore[union-attr]

    def first_user_index(self, start: int) -> int | None:
        """The index of the first user message at or after ``start``, if any."""
        entries = self.entries
        for index in range(start, len(entries)):
            if _is_user(entries[index]):
                return index
        return None

    def last_user_index(self) -> int | None:
        """The index of the last user message of the timeline, if any."""
        entries = self.entries
        for index in range(len(entries) - 1, -1, -1):
            if _is_user(entries[index]):
                return index
        return None

    def ends_with_user_message(self, start: int) -> bool:
        """Whether the timeline has entries after ``start`` and its last is a user message."""
        return len(self.entries) > start and _is_user(self.entries[-1])

    # ------------------------------------------------------------------ replay

    def begin_replay(self, keep_after: int | None = None) -> tuple[int, list[str], list[str]]:
        """A history replay starts (12.3): the entities become the previous generation.

        ``keep_after``: entries first seen after this ordinal stay (a child joining its
        parent's replay keeps what arrived after the request was sent, P16). Entries are
        placed in first-seen order, so those kept are the last ones: they move to the front.

        Returns how many entries left the timeline (its first ones), and the ids of the
        terminals and plans that left (docs/events.md, E4).
        """
        gone = (list(self.terminals), list(self.plans))
        removed = len(self.entries)
        kept = [] if keep_after is None else [e for e in self.entries if e.first_seen > keep_after]
        moved = {id(entry) for entry in kept}
        self.previous = {e.key: e for e in self.entries if id(e) not in moved}
        for call in self.tool_calls.values():
            # 12.3 step 3: local cancellation overlays and pending entity cancels are
            # dropped; what the replay does not report again keeps the agent's own status.
            call.locally_cancelled = False
            call.cancel_pending = False
        self.previous_side = (self.terminals, self.plans)
        self.previous_cursors = self.cursors
        self._new_generation()
        for entry in kept:
            entry.index = len(self.entries)
            self.entries.append(entry)
            if isinstance(entry, en.MessageState):
                self.messages[entry.role][entry.message_id] = entry
            elif isinstance(entry, en.ToolCallState):
                self.tool_calls[entry.tool_call_id] = entry
            elif isinstance(entry, en.SessionMessageState):
                self.session_messages[entry.message_id] = entry
            else:
                self.compactions[entry.compaction_id] = entry
        return removed - len(kept), gone[0], gone[1]

    def end_replay(self) -> tuple[int, set[str]]:
        """Finish a replay: return how many entries it lost, and the lost user message ids.

        What the replay did not report again moves to ``unretained`` (12.3 step 4); what an
        earlier replay lost and this one reported again leaves it (its key keeps its
        identity, step 3).
        """
        previous = self.previous or {}
        self.previous = None
        self.previous_cursors = None  # cursors not announced again are dropped (P44)
        kept = 0
        current = {entry.key for entry in self.entries}
        self.unretained[:] = [entry for entry in self.unretained if entry.key not in current]
        lost_users: set[str] = set()
        for key, entry in previous.items():
            if key not in current:
                self.unretained.append(entry)
                kept += 1
                if _is_user(entry):
                    lost_users.add(entry.message_id)  # type: ignore[union-attr]
        if self.previous_side is not None:
            # Terminals and plans the replay did not report again leave the current state
            # too; they are kept here, outside the snapshot's lists.
            old_terminals, old_plans = self.previous_side
            for tid, term in old_terminals.items():
                if tid not in self.terminals:
                    self.unretained_terminals[tid] = term
            for pid, plan in old_plans.items():
                if pid not in self.plans:
                    self.unretained_plans[pid] = plan
            self.previous_side = None
        for tid in self.terminals.keys() & self.unretained_terminals.keys():
            del self.unretained_terminals[tid]  # reported again
        for pid in self.plans.keys() & self.unretained_plans.keys():
            del self.unretained_plans[pid]
        return kept, lost_users
