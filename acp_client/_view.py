"""The view helper: a render-ready view model kept in sync from events only (docs/events.md).

:class:`ConversationView` and :class:`SessionView` are the recipe of docs/events.md written
once: each event names an entity (and its timeline position); the view looks the entity up
by key, and only when the entity's ``version`` is newer than the row's does it read what is
new: the blocks after the row's absolute end (``content_since``), the terminal bytes after
it (``TerminalState.read``), the scalar fields. So one read of a 32k-chunk run costs one
delta, and every later event of the run is a version comparison (E1, E5, E6).
``EntriesChanged`` refreshes a range of rows (E3), ``EntriesRemoved`` deletes one, with the
terminals and plans a replay took away (E4); ``created=True`` inserts a row at the event's
``index`` (E2, E7). Nothing here reads the snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, TypeVar

from . import _events as ev
from . import _schema as s
from ._entities import (
    CompactionState,
    MessageState,
    SessionMessageState,
    TerminalState,
    ToolCallState,
)
from ._offsets import ContentRead, TerminalRead
from ._session import Session
from ._timeline import Timeline

__all__ = ["ConversationView", "EntryView", "SessionView", "TerminalView"]

Key = tuple[str, str]


class EntryView:
    """One row of a session's timeline, render-ready.

    Attributes:
        kind: ``"message"``, ``"toolCall"``, ``"compaction"`` or ``"sessionMessage"``.
        key: the entity's key: ``(role, message id)`` for a message, else ``(kind, id)``.
        blocks: the content blocks (a tool call's content items; a compaction's summary),
            appended as they arrive.
        start: the absolute index of ``blocks[0]`` (docs/events.md, E6).
        excluded: excluded from the agent's next context (a refusal, R14).
        version: the entity's version this row shows (E1).
        entity: the entity read last (``MessageState``, ``ToolCallState`` ...), to read
            anything the row does not copy; treat it as read-only.
        fields: a tool call's ``title``, ``kind``, ``status`` (the one to display),
            a compaction's ``status`` and ``error``; empty for messages.
    """

    __slots__ = ("blocks", "entity", "excluded", "fields", "key", "kind", "start", "version")

    def __init__(self, kind: str, key: Key) -> None:
        self.kind = kind
        self.key = key
        self.blocks: list[Any] = []
        self.start = 0
        self.excluded = False
        self.version = -1
        self.entity: Any = None
        self.fields: dict[str, Any] = {}

    @property
    def text(self) -> str:
        """The text blocks joined (a message's text for display)."""
        return "".join(b.text for b in self.blocks if type(b) is s.TextContent)

    def __repr__(self) -> str:
        return f"EntryView({self.key!r}, blocks={len(self.blocks)}, version={self.version})"


class TerminalView:
    """A terminal, render-ready: the retained bytes ``data`` from absolute offset ``start``.

    ``exit_status`` and ``command`` are copied; ``entity`` is the ``TerminalState`` read.
    """

    __slots__ = ("command", "data", "entity", "exit_status", "start", "terminal_id", "version")

    def __init__(self, terminal_id: str) -> None:
        self.terminal_id = terminal_id
        self.data = bytearray()
        self.start = 0
        self.version = -1
        self.entity: TerminalState | None = None
        self.command: str | None = None
        self.exit_status: s.TerminalExitStatus | None = None

    def __repr__(self) -> str:
        return f"TerminalView({self.terminal_id!r}, bytes={len(self.data)})"


H = TypeVar("H", list[Any], bytearray)


def _advance(
    held: H, start: int, read: ContentRead | TerminalRead, new: Any, window: int
) -> tuple[H, int]:
    """What a row holds from ``start`` on, after a delta ``read`` (``new``: its items).

    The row appends what is new, or starts again from it when what lay between is gone
    (``read.start`` past the row's end); then drops what lies before the entity's
    retained ``window`` start (E5, E6).
    """
    if read.start > start + len(held):
        held, start = type(held)(new), read.start
    elif new:
        held += new
    cut = window - start
    if cut > 0:
        del held[:cut]
        start += cut
    return held, start


def _sync_blocks(
    row: EntryView, entity: MessageState | SessionMessageState | ToolCallState | CompactionState
) -> None:
    """Bring ``row.blocks`` to the entity's content, copying only what is new (E6)."""
    if row.entity is not entity:  # a new entity for the key (a replay): start again
        row.entity = entity
        row.blocks = []
        row.start = 0
    read = entity.content_since(row.start + len(row.blocks))
    row.blocks, row.start = _advance(row.blocks, row.start, read, read.blocks, entity.base)


def _sync_terminal(row: TerminalView, term: TerminalState) -> None:
    """Bring ``row.data`` to the retained bytes, copying only the new ones (E5)."""
    if row.entity is not term:
        row.entity = term
        row.data = bytearray()
        row.start = 0
    read = term.read(row.start + len(row.data))
    row.data, row.start = _advance(row.data, row.start, read, read.data, term.start)
    row.command = term.command
    row.exit_status = term.exit_status
    row.version = term.version


class _Entities(Protocol):
    version: int
    excluded: bool


class SessionView:
    """The view model of one session, kept in sync by :meth:`apply` (docs/events.md).

    Attributes:
        session_id: the session's id.
        entries: the timeline rows, in the timeline's order.
        terminals: the terminals by id.
        plans: each plan's content by id (a ``PlanItems``, ``PlanMarkdown`` ... or raw dict).
        state / stop_reason: the last ``state_update``'s state and stop reason.
        resyncs: how many times an event broke the contract and the view was rebuilt from
            the session (a view that folds every event in order keeps it at 0).
    """

    def __init__(self, session: Session, *, empty: bool = False) -> None:
        self.session = session
        self._tl: Timeline = session.parts()[0]  # the stores (one object for the session)
        self.session_id = session.session_id
        self.entries: list[EntryView] = []
        self.terminals: dict[str, TerminalView] = {}
        self.plans: dict[str, Any] = {}
        self.state: str | None = None
        self.stop_reason: str | None = None
        self.resyncs = 0
        self._rows: dict[Key, EntryView] = {}
        self._plan_versions: dict[str, int] = {}
        self._handlers: dict[type[Any], Callable[[Any], None]] = {
            ev.MessageChunkAppended: self._message,
            ev.MessageUpserted: self._message,
            ev.ToolCallChunkAppended: self._tool_call,
            ev.ToolCallUpserted: self._tool_call,
            ev.CompactionChunkAppended: self._compaction,
            ev.CompactionUpserted: self._compaction,
            ev.SessionMessageChunkAppended: self._session_message,
            ev.SessionMessageUpserted: self._session_message,
            ev.TerminalOutputAppended: self._terminal,
            ev.TerminalUpserted: self._terminal,
            ev.PlanUpdated: self._plan,
            ev.PlanRemoved: self._plan,
            ev.StateChanged: self._state,
            ev.EntriesChanged: self._changed,
            ev.EntriesRemoved: self._removed,
            ev.CancelRequested: self._cancelled,
        }
        if not empty:  # ``empty``: the session is new; its events build the view
            self._build()

    # ------------------------------------------------------------------ folding

    def apply(self, event: ev.Event) -> None:
        """Fold one event of this session (others are ignored)."""
        handler = self._handlers.get(type(event))
        if handler is not None:
            handler(event)

    def apply_all(self, events: Iterable[ev.Event]) -> None:
        """Fold events in order."""
        handlers = self._handlers
        for event in events:
            handler = handlers.get(type(event))
            if handler is not None:
                handler(event)

    def _build(self) -> None:
        """Read the whole session: the start, or a resync after a broken contract."""
        self.entries = []
        self._rows = {}
        self.terminals = {}
        self.plans = {}
        self._plan_versions = {}
        for entity in self.session.timeline:
            row = EntryView(entity.entry, entity.key)
            self._rows[row.key] = row
            self.entries.append(row)
            self._refresh(row, entity)
        for terminal_id, term in self.session.terminals.items():
            tv = self.terminals[terminal_id] = TerminalView(terminal_id)
            _sync_terminal(tv, term)
        for plan_id, plan in self.session.plans.items():
            self.plans[plan_id] = plan.plan
            self._plan_versions[plan_id] = plan.version
        self._state(None)

    def _resync(self) -> None:
        self.resyncs += 1
        self._build()

    def _entry(
        self, kind: str, key: Key, store: Mapping[str, Any], entity_id: str, event: Any
    ) -> None:
        """An event naming a timeline entry: insert its row if new, refresh if behind."""
        row = self._rows.get(key)
        if row is None:
            if not event.created or event.index != len(self.entries):
                self._resync()  # not what the contract allows (E2, E7)
                return
            row = self._rows[key] = EntryView(kind, key)
            self.entries.append(row)
        elif event.version <= row.version:
            return  # the row already shows this change, or a later one (E1)
        entity = store.get(entity_id)
        if entity is not None:  # else the entity left already: an EntriesRemoved follows
            self._refresh(row, entity)

    def _refresh(self, row: EntryView, entity: Any) -> None:
        """Copy what changed of ``entity`` into ``row``."""
        kind = row.kind
        if kind == "toolCall":
            call: ToolCallState = entity
            row.fields = {"title": call.title, "kind": call.kind, "status": call.effective_status}
            _sync_blocks(row, call)
        elif kind == "compaction":
            comp: CompactionState = entity
            row.fields = {"status": comp.status, "error": comp.error}
            _sync_blocks(row, comp)
        else:
            _sync_blocks(row, entity)
        row.excluded = entity.excluded
        row.version = entity.version

    def _message(self, event: ev.MessageChunkAppended | ev.MessageUpserted) -> None:
        role, mid = event.role, event.message_id
        key = (role, mid)
        row = self._rows.get(key)
        if row is not None and event.version <= row.version:
            return  # the common case of a run of chunks: shown already (E1)
        self._entry("message", key, self._tl.messages[role], mid, event)

    def _tool_call(self, event: ev.ToolCallChunkAppended | ev.ToolCallUpserted) -> None:
        tid = event.tool_call_id
        self._entry("toolCall", ("toolCall", tid), self._tl.tool_calls, tid, event)

    def _compaction(self, event: ev.CompactionChunkAppended | ev.CompactionUpserted) -> None:
        cid = event.compaction_id
        self._entry("compaction", ("compaction", cid), self._tl.compactions, cid, event)

    def _session_message(
        self, event: ev.SessionMessageChunkAppended | ev.SessionMessageUpserted
    ) -> None:
        mid = event.message_id
        key = ("sessionMessage", mid)
        self._entry("sessionMessage", key, self._tl.session_messages, mid, event)

    def _terminal(self, event: ev.TerminalOutputAppended | ev.TerminalUpserted) -> None:
        tid = event.terminal_id
        row = self.terminals.get(tid)
        if row is not None and event.version <= row.version:
            return  # shown already (E1)
        if row is None:
            row = self.terminals[tid] = TerminalView(tid)
        term = self._tl.terminals.get(tid)
        if term is not None:
            _sync_terminal(row, term)

    def _plan(self, event: ev.PlanUpdated | ev.PlanRemoved) -> None:
        pid = event.plan_id
        plan = self._tl.plans.get(pid)
        if plan is None:
            self.plans.pop(pid, None)
        elif plan.version > self._plan_versions.get(pid, -1):
            self.plans[pid] = plan.plan
            self._plan_versions[pid] = plan.version

    def _state(self, event: ev.StateChanged | None) -> None:
        state = self.session.state
        self.state = state.state if state is not None else None
        reason = getattr(state, "stop_reason", None)
        self.stop_reason = reason if isinstance(reason, str) else None

    def _changed(self, event: ev.EntriesChanged) -> None:
        for row in self.entries[event.start : event.stop]:
            entity = self._lookup(row)
            if entity is not None and entity.version > row.version:
                self._refresh(row, entity)

    def _removed(self, event: ev.EntriesRemoved) -> None:
        for row in self.entries[event.start : event.stop]:
            del self._rows[row.key]
        del self.entries[event.start : event.stop]
        for tid in event.terminal_ids:
            self.terminals.pop(tid, None)
        for pid in event.plan_ids:
            self.plans.pop(pid, None)
            self._plan_versions.pop(pid, None)

    def _cancelled(self, event: ev.CancelRequested) -> None:
        for tid in event.tool_call_ids:
            row = self._rows.get(("toolCall", tid))
            entity = self._tl.tool_calls.get(tid)
            if row is not None and entity is not None and entity.version > row.version:
                self._refresh(row, entity)

    def _lookup(self, row: EntryView) -> _Entities | None:
        tl = self._tl
        kind, key_id = row.key
        found: Any
        if row.kind == "message":
            found = tl.messages[kind].get(key_id)
        elif kind == "toolCall":
            found = tl.tool_calls.get(key_id)
        elif kind == "compaction":
            found = tl.compactions.get(key_id)
        else:
            found = tl.session_messages.get(key_id)
        return found  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"SessionView({self.session_id!r}, entries={len(self.entries)})"


class _Sessions(Protocol):
    @property
    def sessions(self) -> Mapping[str, Session]: ...


class ConversationView:
    """The view model of every session of a connection, kept in sync from its events.

    Build it before folding the events of the reads after (it reads the current state
    once), then pass it every event, received and sent, in order::

        view = ConversationView(conn)
        for event in conn.receive_data(data):
            view.apply(event)
        view.apply_all(conn.take_sent_events())
        view.sessions[session_id].entries  # rows: .kind, .key, .blocks, .text, .fields

    A ``SessionCreated`` adds an empty :class:`SessionView` that the session's events
    fill; every per-session event goes to its session's view.
    """

    def __init__(self, connection: _Sessions) -> None:
        self._connection = connection
        self.sessions: dict[str, SessionView] = {
            sid: SessionView(session) for sid, session in connection.sessions.items()
        }

    def apply(self, event: ev.Event) -> None:
        """Fold one event."""
        sid = getattr(event, "session_id", None)
        if sid is None:
            return
        view = self.sessions.get(sid)
        if view is None:
            session = self._connection.sessions.get(sid)
            if session is None:
                return
            if type(event) is ev.SessionCreated:
                self.sessions[sid] = SessionView(session, empty=True)
                return
            # not announced by SessionCreated: read it as it is now (counted as a resync)
            view = self.sessions[sid] = SessionView(session)
            view.resyncs += 1
        view.apply(event)

    def apply_all(self, events: Iterable[ev.Event]) -> None:
        """Fold events in order."""
        for event in events:
            self.apply(event)

    def __repr__(self) -> str:
        return f"ConversationView(sessions={list(self.sessions)!r})"
