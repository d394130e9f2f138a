"""The per-session reducer: folds decoded ``session/update`` payloads into state.

Theory of operation (ACP-V2-CLIENT-STATE.md sections 2-9, resolutions of section 15)
-----------------------------------------------------------------------------------
A :class:`Session` is pure and sans-IO. :meth:`Session.apply` takes one decoded update
(a Struct of ``_schema``, or the raw ``dict`` of an unknown variant), changes the state in
place and returns one event. Each update costs amortised constant time: entities are
found by id in dicts, content is appended to lists, terminal bytes to a ``bytearray``;
nothing accumulated is ever copied, and snapshots are taken only on demand.

* Timeline (2.3): messages, tool calls and compactions take their place when their key
  is first seen in any update; nothing ever moves them.
* Messages (4): three id spaces (user, agent, thought). Upserts PATCH ``content``
  (omitted keeps, ``null``/``[]`` clears, an array replaces everything) and META-PATCH
  ``_meta``; chunks append one block, in arrival order per id.
* Tool calls (7): upsert with PATCH per field (``status: null`` resets to pending,
  ``kind: null`` to other), ``content``/``locations`` replaced whole, content chunks
  appended; any later ``status`` ends the local cancellation overlay (R17).
* Terminals (8): ``output`` is a snapshot that replaces the bytes, each chunk is base64-
  decoded on its own and appended; terminals first named by references are created (R22).
* Foreground state (6): every ``state_update`` replaces the snapshot; a transition into
  ``idle`` from a non-idle state outside replay records one completed turn (R51).
* Replay (12.3): :meth:`begin_replay` moves the entities to a previous generation and
  starts an empty timeline; :meth:`end_replay` moves what was not reported again to
  ``unretained``.
"""

from __future__ import annotations

import binascii
from bisect import bisect_left
from collections.abc import Callable, Mapping
from itertools import groupby, repeat
from types import MappingProxyType
from typing import Any, Literal

from msgspec import UNSET

from . import _events as ev
from . import _schema as s
from ._checks import command_problems, config_problems, relative_path
from ._diagnostics import Diagnostic
from ._entities import (
    FINISHED_STATUSES,
    CompactionState,
    ListView,
    MessageState,
    PlanState,
    Role,
    TerminalState,
    TimelineEntry,
    ToolCallState,
    compact,
    decode_base64,
)
from ._errors import INVALID_PARAMS, RemoteProtocolError
from ._patch import meta_patch, patch_extra
from ._prompts import PermissionState, PromptState

__all__ = ["Session", "Lifecycle"]

Lifecycle = Literal["open", "replaying", "closing", "closed"]
_ACTIVE = frozenset({"running", "requires_action"})
_KNOWN_STATES = s._KNOWN_STATES


# The hot path's constants (see Session._apply_run).
_AGENT_CHUNK = s.AgentMessageChunk
_THOUGHT_CHUNK = s.AgentThoughtChunk
_TERMINAL_CHUNK = s.TerminalOutputChunk
_TEXT = s.TextContent
_CHUNK_APPENDED = ev.MessageChunkAppended
_OUTPUT_APPENDED = ev.TerminalOutputAppended
_A2B = binascii.a2b_base64
_REMAINDER_4 = (3).__and__
_RUNS = frozenset({_AGENT_CHUNK, _THOUGHT_CHUNK, _TERMINAL_CHUNK})
# The keys the snapshot writes itself on each kind of object (SNAPSHOT.md): an unknown field
# of the same name stays in the live state but cannot be written beside them.
_ENTRY_KEYS = frozenset({"entry", "_meta", "content", "excludedFromContext"})
_SNAPSHOT_KEYS = {
    "message": _ENTRY_KEYS | {"messageId", "role"},
    "tool call": _ENTRY_KEYS
    | {"toolCallId", "title", "name", "kind", "status", "locations", "rawInput", "rawOutput"}
    | {"capabilities"},
    "compaction": _ENTRY_KEYS | {"compactionId", "status", "summary", "error"},
    "terminal": frozenset(
        {"terminalId", "command", "cwd", "output", "exitStatus", "size", "capabilities"}
        | {"_meta", "truncatedBytes"}
    ),
    "permission request": frozenset(
        {"requestId", "title", "description", "toolCallId", "status", "outcome", "options"}
        | {"subject"}
    ),
}


def runs_of(keys: list[Any], items: list[Any]) -> list[tuple[Any, list[Any]]]:
    """``items`` cut where ``keys`` (one per item) change: ``[(key, [items...]), ...]``."""
    runs = []
    start = 0
    for key, same in groupby(keys):
        end = start + sum(1 for _ in same)
        runs.append((key, items[start:end]))
        start = end
    return runs


class Session:
    """Conversation state of one ACP session, and the reducer that keeps it.

    Args:
        session_id: the session's id.
        announced: whether a ``session/new`` / ``session/resume`` exchange created it.
        terminal_limit: retain at most this many bytes per terminal (older bytes are
            dropped from the front and counted); ``None`` keeps everything.
        diagnostics: a list to append diagnostics to (the connection shares its own).

    Example:
        >>> from acp_client import Decoder, Session
        >>> session = Session("s1")
        >>> msg = Decoder().decode(b'{"jsonrpc":"2.0","method":"session/update","params":'
        ...     b'{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk",'
        ...     b'"messageId":"m1","content":{"type":"text","text":"Hi"}}}}')
        >>> session.apply(msg.params.update).created
        True
        >>> session.message("agent", "m1").text()
        'Hi'
    """

    # Slots: CPython's attribute caches stop working on a plain instance dict of more than
    # 30 keys, and every update reads several of these.
    __slots__ = (
        "__weakref__",
        "_agent",
        "_awaiting_echo",
        "_background_reported",
        "_compactions",
        "_completed",
        "_completed_at",
        "_handlers",
        "_idle_ordinal",
        "_messages",
        "_notice_ordinals",
        "_notices",
        "_ordinal",
        "_pending_noted",
        "_permission_log",
        "_plans",
        "_previous",
        "_previous_side",
        "_reopening",
        "_replay_prompts",
        "_resuming",
        "_terminals",
        "_thought",
        "_timeline",
        "_tool_calls",
        "_turn_start_index",
        "_unechoed_reported",
        "_unknown",
        "_unknown_ordinals",
        "_unretained",
        "_user",
        "_work_awaited",
        "_work_start",
        "announced",
        "available_commands",
        "background",
        "cancel_requested",
        "close_succeeded",
        "closed",
        "commands_updates",
        "config_options",
        "config_updates",
        "created_by_new",
        "diagnostics",
        "lifecycle",
        "line",
        "permissions",
        "prompts",
        "prompts_by_message",
        "protocol_version",
        "session_id",
        "session_info",
        "side_events",
        "state",
        "state_updates",
        "terminal_limit",
        "unretained_plans",
        "unretained_terminals",
        "usage",
    )

    def __init__(
        self,
        session_id: str,
        *,
        announced: bool = False,
        terminal_limit: int | None = None,
        diagnostics: list[Diagnostic] | None = None,
    ) -> None:
        self.session_id = session_id
        self.announced = announced
        self.created_by_new = False
        """Set when a ``session/new`` result created or announced the session."""
        self.state_updates = 0
        """How many ``state_update`` snapshots were applied (replay included)."""
        self.lifecycle: Lifecycle = "open"
        self.closed = False
        self.close_succeeded = False
        """Whether a ``session/close`` for it succeeded (the snapshot's ``closed``), not only
        an agent saying it is gone (-32002 to a resume: ``closed`` too, 12.3 step 5)."""
        self._reopening = False  # a session/resume of this closed session is under way
        self._pending_noted: set[int | str] = set()  # permission-pending-at-idle reported
        self.protocol_version: int | None = None
        self.terminal_limit = terminal_limit
        self.diagnostics: list[Diagnostic] = diagnostics if diagnostics is not None else []
        self.line: int | None = None
        self._ordinal = 0
        self._timeline: list[TimelineEntry] = []
        self._user: dict[str, MessageState] = {}
        self._agent: dict[str, MessageState] = {}
        self._thought: dict[str, MessageState] = {}
        self._messages: dict[str, dict[str, MessageState]] = {
            "user": self._user,
            "agent": self._agent,
            "thought": self._thought,
        }
        self._tool_calls: dict[str, ToolCallState] = {}
        self._terminals: dict[str, TerminalState] = {}
        self._plans: dict[str, PlanState] = {}
        self._compactions: dict[str, CompactionState] = {}
        self.state: s.StateUpdate | None = None
        self._completed: list[str | None] = []
        self._completed_at: list[int] = []  # the ordinal of each completion
        self.background: list[Any] | None = None
        self._background_reported = False
        self.cancel_requested = False
        self._work_start: int | None = None
        # An accepted prompt's work may start after its response (R49): from acceptance to
        # the next idle, a cancel sent while idle still aims at it (11.2, R15, R18).
        self._work_awaited = False
        self._idle_ordinal = 0
        self._resuming = 0
        self._replay_prompts: list[PromptState] = []
        self._turn_start_index = 0
        self.available_commands: list[Any] | None = None
        self.config_options: list[Any] | None = None
        self.commands_updates = 0
        self.config_updates = 0
        self.session_info: dict[str, Any] | None = None
        self.usage: dict[str, Any] | None = None
        self._notices: list[Any] = []
        self._notice_ordinals: list[int] = []
        self._unknown: list[dict[str, Any]] = []
        self._unknown_ordinals: list[int] = []
        self._unretained: list[TimelineEntry] = []
        self.unretained_terminals: dict[str, TerminalState] = {}
        """Terminals a history replay did not report again (not in the snapshot)."""
        self.unretained_plans: dict[str, PlanState] = {}
        """Plans a history replay did not report again (not in the snapshot)."""
        self._previous: dict[tuple[str, str], TimelineEntry] | None = None
        self._previous_side: tuple[dict[str, TerminalState], dict[str, PlanState]] | None = None
        self.prompts: list[PromptState] = []
        self.prompts_by_message: dict[str, PromptState] = {}
        """The first accepted prompt answered with each user message id."""
        self._awaiting_echo: dict[str, list[PromptState]] = {}
        self._unechoed_reported: set[PromptState] = set()  # reported once each (10.5)
        self.permissions: dict[int | str, PermissionState] = {}
        """The latest permission request with each id (answers find theirs here)."""
        self._permission_log: list[PermissionState] = []
        self.side_events: list[ev.Event] = []
        """Events an update causes besides its own (a terminal its reference created, a
        prompt it echoed), in order; a :class:`Connection` returns them right after that
        update's event and clears the list. Bounded by the entities, not the updates."""
        self._handlers: dict[type[Any], Callable[[Any], ev.Event]] = {
            cls: getattr(self, name) for cls, name in _HANDLER_NAMES.items()
        }

    # ----------------------------------------------------------------- read access

    @property
    def ordinal(self) -> int:
        """How many updates have been applied."""
        return self._ordinal

    @property
    def timeline(self) -> ListView[TimelineEntry]:
        """Messages, tool calls and compactions in first-seen order."""
        return ListView(self._timeline)

    def message(self, role: Role, message_id: str) -> MessageState | None:
        """The message with that role and id, if any."""
        return self._messages[role].get(message_id)

    def turns_completed_before(self, ordinal: int) -> int:
        """How many turns had completed before the update with this ordinal was applied."""
        return bisect_left(self._completed_at, ordinal)

    def messages(self, role: Role) -> Mapping[str, MessageState]:
        """All messages of one role by id."""
        return MappingProxyType(self._messages[role])

    @property
    def tool_calls(self) -> Mapping[str, ToolCallState]:
        """Tool calls by id, in first-seen order."""
        return MappingProxyType(self._tool_calls)

    @property
    def terminals(self) -> Mapping[str, TerminalState]:
        """Terminals by id, in first-seen order."""
        return MappingProxyType(self._terminals)

    @property
    def plans(self) -> Mapping[str, PlanState]:
        """Plans by id, in first-seen order."""
        return MappingProxyType(self._plans)

    @property
    def compactions(self) -> Mapping[str, CompactionState]:
        """Compactions by id."""
        return MappingProxyType(self._compactions)

    @property
    def completed_turns(self) -> ListView[str | None]:
        """One stop reason (or ``None``) per completed piece of foreground work."""
        return ListView(self._completed)

    @property
    def notices(self) -> ListView[s.Notice]:
        """Every notice received, in order (live information, not history)."""
        return ListView(self._notices)

    @property
    def notice_ordinals(self) -> ListView[int]:
        """The ordinal each of :attr:`notices` arrived at (2.2), to anchor it in a UI."""
        return ListView(self._notice_ordinals)

    @property
    def unknown_updates(self) -> ListView[dict[str, Any]]:
        """Updates of unknown kinds, verbatim, in arrival order."""
        return ListView(self._unknown)

    @property
    def unknown_update_ordinals(self) -> ListView[int]:
        """The ordinal each of :attr:`unknown_updates` arrived at (2.2, 13.1)."""
        return ListView(self._unknown_ordinals)

    @property
    def unretained(self) -> ListView[TimelineEntry]:
        """Timeline entries that a history replay did not report again."""
        return ListView(self._unretained)

    @property
    def state_name(self) -> str | None:
        """``running``, ``idle``, ``requires_action``, a custom string, or ``None`` (none)."""
        return self.state.state if self.state is not None else None

    @property
    def idle(self) -> bool | None:
        """Whether the session is idle (``None``: unknown).

        The last snapshot decides; before any, a session created by ``session/new`` is idle
        by protocol default, and any other session's activity is unknown (R11).
        """
        if self.state is None:
            return True if self.created_by_new else None
        return self.state.state == "idle"

    def snapshot(self) -> dict[str, Any]:
        """The SESSION object of SNAPSHOT.md for this session (plain data)."""
        from ._snapshot import session_snapshot

        return session_snapshot(self)

    # ------------------------------------------------------------------- applying

    def apply(self, update: s.SessionUpdate) -> ev.Event:
        """Apply one update payload and return the event that says what changed."""
        self._ordinal += 1
        handler = self._handlers.get(type(update))
        if handler is None:
            return self._unknown_update(update)
        return handler(update)

    def _apply_run(self, updates: list[Any], events: list[ev.Event]) -> None:
        """Apply decoded updates (all for this session) in order.

        One event per update is appended to ``events``. The connection's hot path: a run
        of consecutive chunks of one kind for one message or terminal is applied in one
        step (see :meth:`_chunk_run` and :meth:`_terminal_run`), with exactly the state
        and events that applying them one by one gives; everything else goes through the
        per-update handlers.
        """
        append = events.append
        handlers = self._handlers
        side = self.side_events
        for cls, group in groupby(updates, type):
            if cls in _RUNS:
                run = list(group)
                if len(run) > 1:
                    if cls is _TERMINAL_CHUNK:
                        run = self._terminal_run(run, events)
                    else:
                        run = self._chunk_run(cls, run, events)
                group = iter(run)
            handler = handlers.get(cls)
            for update in group:
                self._ordinal += 1
                append(handler(update) if handler is not None else self._unknown_update(update))
                if side:
                    events.extend(side)
                    side.clear()

    def _chunk_run(self, cls: type[Any], run: list[Any], events: list[ev.Event]) -> list[Any]:
        """Apply a run of agent or thought chunks at once; return what is left to apply.

        Taken when every chunk names the same existing message and none has ``_meta``;
        the first chunk of a new message is left to its handler, which creates the
        message. A run naming several messages is applied a message's part at a time;
        otherwise (chunk ``_meta``) the run is returned for the handlers.
        """
        role: Role = "agent" if cls is _AGENT_CHUNK else "thought"
        messages = self._agent if cls is _AGENT_CHUNK else self._thought
        message_id = run[0].message_id
        msg = messages.get(message_id)
        if msg is None:
            # The first chunk creates the message (and its timeline entry).
            self._ordinal += 1
            events.append(self._chunk_slow(role, run[0]))
            msg = messages[message_id]
            run = run[1:]
        n = len(run)
        # Taken when every chunk names this message and none has _meta:
        blocks = [u.content for u in run if u.message_id == message_id and u.meta is UNSET]
        if n == 0 or len(blocks) != n:
            ids = [u.message_id for u in run]
            if n and ids.count(message_id) != n:
                return self._chunk_runs_by_message(cls, run, ids, events)
            return run
        # Plain text is stored compactly: ``compact``'s test, inline for a whole run.
        texts = [
            b.text
            for b in blocks
            if type(b) is _TEXT and b.annotations is UNSET and b.meta is UNSET and b.extra is UNSET
        ]
        msg._content += texts if len(texts) == n else map(compact, blocks)
        self._ordinal += n
        msg.last_changed = self._ordinal
        events += map(
            _CHUNK_APPENDED,
            repeat(self.session_id, n),
            repeat(role, n),
            repeat(message_id, n),
            blocks,
            repeat(False, n),
        )
        return []

    def _chunk_runs_by_message(
        self, cls: type[Any], run: list[Any], ids: list[str], events: list[ev.Event]
    ) -> list[Any]:
        """Apply a run of chunks that names several messages, one message's part at a time."""
        handler = self._handlers[cls]
        for _, part in runs_of(ids, run):
            if len(part) > 1:
                part = self._chunk_run(cls, part, events)
            for update in part:
                self._ordinal += 1
                events.append(handler(update))
        return []

    def _terminal_run(self, run: list[Any], events: list[ev.Event]) -> list[Any]:
        """Apply a run of output chunks for one terminal at once; return what is left.

        Taken only for an existing terminal without a retention limit, when every chunk
        decodes; the bytes are appended in one piece. Otherwise the run is returned for
        the handler (which reports each bad chunk on its own).
        """
        terminal_ids = [u.terminal_id for u in run]
        terminal_id = terminal_ids[0]
        term = self._terminals.get(terminal_id)
        n = len(run)
        if term is None or term.limit is not None or terminal_ids.count(terminal_id) != n:
            return run
        datas = [u.data for u in run]
        # bad_base64_shape for the whole run, in C: a length not a multiple of 4, or "===".
        if any(map(_REMAINDER_4, map(len, datas))) or any(
            map(str.endswith, datas, repeat("===", n))
        ):
            return run  # excess or missing padding: the handler reports each bad chunk
        try:
            # a keyword through functools.partial costs a dict per call: spelled out here
            pieces = [_A2B(data, strict_mode=True) for data in datas]
        except (ValueError, TypeError):  # binascii.Error, or non-ASCII text
            return run
        term.append(b"".join(pieces))
        self._ordinal += n
        term.last_changed = self._ordinal
        events += map(
            _OUTPUT_APPENDED,
            repeat(self.session_id, n),
            repeat(terminal_id, n),
            pieces,
            repeat(False, n),
        )
        return []

    def _note(
        self, code: str, message: str, severity: Literal["warning", "error"] = "warning"
    ) -> None:
        self.diagnostics.append(
            Diagnostic(
                code=code,
                message=message,
                severity=severity,
                line=self.line,
                session_id=self.session_id,
            )
        )

    def _patch_extra(
        self, stored: dict[str, Any] | None, extra: Any, kind: str, key: str
    ) -> dict[str, Any] | None:
        """:func:`patch_extra`, noting unknown fields the snapshot cannot hold (R35)."""
        self._check_shadowed(extra, kind, key)
        return patch_extra(stored, extra)

    def _check_shadowed(self, extra: Mapping[str, Any], kind: str, key: object) -> None:
        """Note unknown fields named like the snapshot's own keys of a ``kind`` object (R35)."""
        clash = [k for k in _SNAPSHOT_KEYS[kind].intersection(extra) if extra[k] is not None]
        if clash:
            self._note(
                "unknown-field-shadowed",
                f"{kind} {key!r}: unknown field(s) {', '.join(map(repr, sorted(clash)))} share"
                " a name with the snapshot's own keys: kept in the live state (`extra`), left"
                " out of the snapshot",
            )

    def _reject(self, update: Any, code: str, message: str) -> ev.Event:
        self._note(code, message, "error")
        error = RemoteProtocolError(message, path="$.params.update", code=INVALID_PARAMS)
        return ev.UpdateRejected(session_id=self.session_id, error=error, raw=update)

    def _new_message(self, role: Role, message_id: str) -> MessageState:
        msg = MessageState(role, message_id, self._ordinal)
        self._messages[role][message_id] = msg
        self._timeline.append(msg)
        if role == "user":
            self._echo(message_id)
        return msg

    def _echo(self, message_id: str) -> None:
        placed = self.prompts_by_message.get(message_id)
        if placed is not None:
            placed.not_retained = False  # placed (again): 10.5
        waiting = self._awaiting_echo.pop(message_id, None)
        if waiting:
            for prompt in waiting:
                if not prompt.echoed:
                    prompt.echoed = True
                    self.side_events.append(
                        ev.PromptEchoed(
                            session_id=self.session_id,
                            request_id=prompt.request_id,
                            message_id=message_id,
                        )
                    )

    def _chunk_slow(self, role: Role, u: s.ContentChunk) -> ev.Event:
        msg = self._messages[role].get(u.message_id)
        created = msg is None
        if msg is None:
            msg = self._new_message(role, u.message_id)
        content = msg._content
        if u.meta:
            if msg.chunk_meta is None:
                msg.chunk_meta = {}
            msg.chunk_meta[len(content)] = u.meta
        content.append(compact(u.content))
        msg.last_changed = self._ordinal
        return ev.MessageChunkAppended(self.session_id, role, u.message_id, u.content, created)

    def _text_chunk(
        self, role: Role, messages: dict[str, MessageState], u: s.ContentChunk
    ) -> ev.Event:
        """An agent or thought chunk, one at a time (runs go through :meth:`_chunk_run`)."""
        msg = messages.get(u.message_id)
        block = u.content
        if msg is None or u.meta:
            return self._chunk_slow(role, u)
        msg._content.append(compact(block))
        msg.last_changed = self._ordinal
        return _CHUNK_APPENDED(self.session_id, role, u.message_id, block, False)

    def _agent_chunk(self, u: s.ContentChunk) -> ev.Event:
        return self._text_chunk("agent", self._agent, u)

    def _thought_chunk(self, u: s.ContentChunk) -> ev.Event:
        return self._text_chunk("thought", self._thought, u)

    def _user_chunk(self, u: s.ContentChunk) -> ev.Event:
        return self._chunk_slow("user", u)

    def _message(self, u: s._MessageUpsert) -> ev.Event:
        role: Role = u.role  # type: ignore[attr-defined]
        msg = self._messages[role].get(u.message_id)
        created = msg is None
        if msg is None:
            msg = self._new_message(role, u.message_id)
        content = u.content
        change: ev.ContentChange = "unchanged"
        if content is not UNSET:
            msg.chunk_meta = None
            if content:
                msg._content = list(content)
                change = "replaced"
            else:
                msg._content = []
                change = "cleared"
        msg.meta = meta_patch(msg.meta, u.meta)
        if u.extra is not UNSET:
            msg.extra = self._patch_extra(msg.extra, u.extra, "message", u.message_id)
        msg.last_changed = self._ordinal
        return ev.MessageUpserted(
            session_id=self.session_id,
            role=role,
            message_id=u.message_id,
            created=created,
            content=change,
        )

    def _tool_call(self, tool_call_id: str) -> tuple[ToolCallState, bool]:
        call = self._tool_calls.get(tool_call_id)
        if call is not None:
            return call, False
        call = ToolCallState(tool_call_id, self._ordinal)
        self._tool_calls[tool_call_id] = call
        self._timeline.append(call)
        return call, True

    def apply_tool_call_fields(self, u: s.ToolCallFields) -> ev.ToolCallUpserted:
        """Apply a tool-call upsert (also used for a permission request's tool-call subject)."""
        call, created = self._tool_call(u.tool_call_id)
        if u.title is not UNSET:
            call.title = u.title
        if u.name is not UNSET:
            call.name = u.name
        if u.kind is not UNSET:
            call.kind = u.kind
        if u.status is not UNSET:
            call.status = u.status
            call.locally_cancelled = False
            if u.status in FINISHED_STATUSES:
                call.cancel_pending = False
        change: ev.ContentChange = "unchanged"
        if u.content is not UNSET:
            call.chunk_meta = None
            if u.content:
                call._content = list(u.content)
                change = "replaced"
                for item in call._content:
                    if type(item) is s.Terminal:
                        self._referenced_terminal(item.terminal_id)
                    elif type(item) is s.Diff:
                        self._check_diff(item)
            else:
                call._content = []
                change = "cleared"
        if u.locations is not UNSET:
            call._locations = list(u.locations) if u.locations else []
            for location in call._locations:
                path = getattr(location, "path", None)
                if relative_path(path):
                    self._note("relative-path", f"tool call location path {path!r} (A24)")
        if u.raw_input is not UNSET:
            call.raw_input = u.raw_input
        if u.raw_output is not UNSET:
            call.raw_output = u.raw_output
        if u.capabilities is not UNSET:
            call.capabilities = u.capabilities
        if (u.status is not UNSET or u.capabilities is not UNSET) and call.status in (
            FINISHED_STATUSES
        ):
            self._check_final_cancel(call.capabilities, f"tool call {u.tool_call_id!r}")
        call.meta = meta_patch(call.meta, u.meta)
        if u.extra is not UNSET:
            call.extra = self._patch_extra(call.extra, u.extra, "tool call", u.tool_call_id)
        call.last_changed = self._ordinal
        return ev.ToolCallUpserted(
            session_id=self.session_id,
            tool_call_id=u.tool_call_id,
            created=created,
            content=change,
        )

    def _tool_call_update(self, u: s.ToolCallUpdate) -> ev.Event:
        return self.apply_tool_call_fields(u)

    def _tool_call_chunk(self, u: s.ToolCallContentChunk) -> ev.Event:
        call, created = self._tool_call(u.tool_call_id)
        content = call._content
        if u.meta:
            if call.chunk_meta is None:
                call.chunk_meta = {}
            call.chunk_meta[len(content)] = u.meta
        content.append(u.content)
        if type(u.content) is s.Terminal:
            self._referenced_terminal(u.content.terminal_id)
        elif type(u.content) is s.Diff:
            self._check_diff(u.content)
        call.last_changed = self._ordinal
        return ev.ToolCallChunkAppended(self.session_id, u.tool_call_id, u.content, created)

    def _check_diff(self, diff: s.Diff) -> None:
        """A15 / A24: a diff names files by absolute paths."""
        for change in diff.changes:
            for path in (getattr(change, "path", None), getattr(change, "old_path", None)):
                if relative_path(path):
                    self._note("relative-path", f"diff path {path!r} is not absolute (A15)")

    def _check_final_cancel(self, capabilities: Any, what: str) -> None:
        """A26: an entity that is final no longer offers ``cancel``."""
        if getattr(capabilities, "cancel", None) not in (None, UNSET):
            self._note(
                "cancel-offered-when-final",
                f"{what} is final but still offers `capabilities.cancel` (A26)",
            )

    def _terminal(self, terminal_id: str) -> tuple[TerminalState, bool]:
        term = self._terminals.get(terminal_id)
        if term is not None:
            return term, False
        term = TerminalState(terminal_id, self._ordinal, self.terminal_limit)
        self._terminals[terminal_id] = term
        return term, True

    def _referenced_terminal(self, terminal_id: str) -> None:
        """A terminal named by a reference exists from then on (R22, R53).

        If that created it, an event says so, after the event of the update that named it.
        """
        _, created = self._terminal(terminal_id)
        if created:
            self.side_events.append(
                ev.TerminalUpserted(self.session_id, terminal_id, True, "unchanged")
            )

    def _terminal_update(self, u: s.TerminalUpdate) -> ev.Event:
        term, created = self._terminal(u.terminal_id)
        if u.command is not UNSET:
            term.command = u.command
        if u.cwd is not UNSET:
            term.cwd = u.cwd
            if relative_path(u.cwd):
                self._note("relative-path", f"terminal {u.terminal_id!r}: cwd {u.cwd!r} (A13)")
        change: ev.ContentChange = "unchanged"
        output = u.output
        if output is None:
            term.replace(b"")
            change = "cleared"
        elif output is not UNSET:
            try:
                data = decode_base64(output.data)
            except ValueError as exc:
                self._note(
                    "invalid-base64",
                    f"terminal {u.terminal_id!r}: output snapshot is not valid base64 ({exc});"
                    " treated as omitted",
                )
            else:
                term.replace(data)
                change = "replaced"
        if u.exit_status is not UNSET:
            term.exit_status = u.exit_status
            if u.exit_status is not None:
                term.cancel_pending = False
        if u.size is not UNSET:
            term.size = u.size
        if u.capabilities is not UNSET:
            term.capabilities = u.capabilities
        if (u.exit_status is not UNSET or u.capabilities is not UNSET) and term.exited:
            self._check_final_cancel(term.capabilities, f"terminal {u.terminal_id!r}")
        term.meta = meta_patch(term.meta, u.meta)
        if u.extra is not UNSET:
            term.extra = self._patch_extra(term.extra, u.extra, "terminal", u.terminal_id)
        term.last_changed = self._ordinal
        return ev.TerminalUpserted(
            session_id=self.session_id, terminal_id=u.terminal_id, created=created, output=change
        )

    def _terminal_chunk(self, u: s.TerminalOutputChunk) -> ev.Event:
        try:
            data = decode_base64(u.data)
        except ValueError as exc:
            return self._reject(
                u,
                "invalid-base64",
                f"terminal {u.terminal_id!r}: output chunk is not valid base64 ({exc}); dropped",
            )
        term, created = self._terminal(u.terminal_id)
        term.append(data)
        term.last_changed = self._ordinal
        return ev.TerminalOutputAppended(self.session_id, u.terminal_id, data, created)

    def _plan(self, u: s.PlanUpdate) -> ev.Event:
        plan = u.plan
        plan_id = plan.plan_id if type(plan) is s.PlanItems else plan.get("planId")  # type: ignore[union-attr]
        if not isinstance(plan_id, str):
            return self._reject(u, "malformed-update", "plan_update without a string `planId`")
        state = self._plans.get(plan_id)
        created = state is None
        if state is None:
            self._plans[plan_id] = PlanState(plan_id, plan, self._ordinal)
        else:
            state.plan = plan
        return ev.PlanUpdated(session_id=self.session_id, plan_id=plan_id, created=created)

    def _commands(self, u: s.AvailableCommandsUpdate) -> ev.Event:
        if self.protocol_version != 1:  # A29 is v2's rule: v1 allows `memory show`, say
            for problem in command_problems(u.available_commands):
                self._note("invalid-commands", problem)
        self.available_commands = list(u.available_commands)
        self.commands_updates += 1
        return ev.AvailableCommandsUpdated(session_id=self.session_id)

    def _config(self, u: s.ConfigOptionUpdate) -> ev.Event:
        for problem in config_problems(u.config_options):
            self._note("invalid-config", problem)
        self.config_options = list(u.config_options)
        self.config_updates += 1
        return ev.ConfigOptionsUpdated(session_id=self.session_id)

    def _session_info(self, u: s.SessionInfoUpdate) -> ev.Event:
        info = self.session_info
        if info is None:
            info = self.session_info = {}
        if u.title is not UNSET:
            info["title"] = u.title
        if u.updated_at is not UNSET:
            info["updatedAt"] = u.updated_at
        info["_meta"] = meta_patch(info.get("_meta"), u.meta)
        if u.extra is not UNSET:
            info["extra"] = patch_extra(info.get("extra"), u.extra)
        return ev.SessionInfoUpdated(session_id=self.session_id)

    def _usage(self, u: s.UsageUpdate) -> ev.Event:
        previous = self.usage
        cost = previous.get("cost") if previous else None
        if u.cost is not UNSET:
            cost = u.cost
        self.usage = {
            "used": u.used,
            "size": u.size,
            "cost": cost,
            "_meta": u.meta if u.meta is not UNSET else None,
            "extra": u.extra if u.extra is not UNSET else None,
        }
        return ev.UsageUpdated(session_id=self.session_id)

    def _notice(self, u: s.Notice) -> ev.Event:
        self._notices.append(u)
        self._notice_ordinals.append(self._ordinal)
        return ev.NoticeReceived(session_id=self.session_id, notice=u)

    def _compaction(self, compaction_id: str) -> tuple[CompactionState, bool]:
        comp = self._compactions.get(compaction_id)
        if comp is not None:
            return comp, False
        comp = CompactionState(compaction_id, self._ordinal)
        self._compactions[compaction_id] = comp
        self._timeline.append(comp)
        return comp, True

    def _compaction_update(self, u: s.CompactionUpdate) -> ev.Event:
        comp, created = self._compaction(u.compaction_id)
        comp.status = u.status
        change: ev.ContentChange = "unchanged"
        if u.summary is not UNSET:
            comp.chunk_meta = None
            if u.summary:
                comp._summary = list(u.summary)
                change = "replaced"
            else:
                comp._summary = []
                change = "cleared"
        if u.error is not UNSET:
            comp.error = u.error
        comp.meta = meta_patch(comp.meta, u.meta)
        if u.extra is not UNSET:
            comp.extra = self._patch_extra(comp.extra, u.extra, "compaction", u.compaction_id)
        comp.last_changed = self._ordinal
        return ev.CompactionUpserted(
            session_id=self.session_id,
            compaction_id=u.compaction_id,
            created=created,
            summary=change,
        )

    def _compaction_chunk(self, u: s.CompactionSummaryChunk) -> ev.Event:
        comp, created = self._compaction(u.compaction_id)
        if u.meta:
            if comp.chunk_meta is None:
                comp.chunk_meta = {}
            comp.chunk_meta[len(comp._summary)] = u.meta
        comp._summary.append(u.content)
        comp.last_changed = self._ordinal
        return ev.CompactionChunkAppended(
            session_id=self.session_id,
            compaction_id=u.compaction_id,
            block=u.content,
            created=created,
        )

    def _state_update(self, u: s.StateUpdate) -> ev.Event:
        self.state_updates += 1
        previous = self.state.state if self.state is not None else None
        self.state = u
        new = u.state
        completed = False
        stop_reason = u.stop_reason if isinstance(u.stop_reason, str) else None
        # A replay runs until its resume's response, also when a session/close sent
        # meanwhile moved the lifecycle on to `closing` (the close ends no replay).
        replaying = self._previous is not None or self.lifecycle == "replaying"
        # R51 / A27: replayed history and resume snapshots record no completion and start
        # no work.
        snapshot_only = replaying or self._resuming > 0
        if new in _KNOWN_STATES:
            background = u.background
            if isinstance(background, list):
                if self.background and not replaying:
                    self._check_dropped_background(self.background, background)
                self.background = background
                self._background_reported = True
                self._touch_background(background)
            else:
                if self._background_reported and not replaying:
                    self._note(
                        "background-not-reported",
                        "state_update without `background` after background work was reported;"
                        " background work is now unknown",
                    )
                self.background = None
        else:
            self.background = None
        if new == "idle":
            if not snapshot_only and previous is not None and previous != "idle":
                completed = True
                self._completed.append(stop_reason)
                self._completed_at.append(self._ordinal)
                if stop_reason is None:
                    self._note(
                        "missing-stop-reason",
                        "idle ended foreground work without a `stopReason` (R12)",
                    )
                if stop_reason == "refusal":
                    self._exclude_refused()
                if stop_reason == "error" and self.cancel_requested:
                    self._note(
                        "cancel-ended-with-error",
                        "work cancelled with session/cancel ended with `error`; it must"
                        " end with `cancelled` (A11)",
                    )
                self._check_pending_permissions()
                self._check_unechoed()
            repeated = previous == "idle" or (previous is None and self.created_by_new)
            if replaying:  # replayed history starts and ends no work (R51)
                pass
            elif (
                repeated
                and self._resuming == 0
                and (self._work_awaited or self._user_message_waits())
            ):
                # A repeated idle (a new background list, say; its stop reason, a repeated
                # one too, is context only) neither starts nor ends work (6.3): a prompt
                # accepted since the last idle, or a user message ending the timeline, still
                # waits for its work (R49), which a refusal marks from (R14) and a cancel
                # aims at (R15). Otherwise it ends what came before, as an idle does.
                if self._work_awaited and stop_reason is not None:
                    # An agent that skipped `running` (it MUST report it when work starts)
                    # meant this as the end of the prompt's work; nobody can tell, so say so.
                    self._note(
                        "idle-without-running",
                        f"idle with stopReason {stop_reason!r} while the session was already"
                        " idle and an accepted prompt's work was awaited: not a completed turn"
                        " (6.3); no `running` was reported for that work",
                    )
            else:
                # An idle ends what came before (a resume snapshot's too): the next work's
                # prompt is placed after it (R14 marks from there), also when this idle
                # completed no turn.
                self._turn_start_index = len(self._timeline)
                self._work_start = None
                self._work_awaited = False
                self._idle_ordinal = self._ordinal
            self.cancel_requested = False  # 6.3: any idle, a replayed one too
        elif new in _ACTIVE and (previous is None or previous == "idle") and not snapshot_only:
            # The work starts here (6.3); that of a prompt accepted while idle began with its
            # acceptance (R49): what changed since the last idle pertains to it, whichever
            # side of this `running` a cancel falls on (R15).
            self._work_start = self._idle_ordinal if self._work_awaited else self._ordinal
        return ev.StateChanged(
            session_id=self.session_id,
            state=new,
            stop_reason=stop_reason,
            turn_completed=completed,
        )

    def _user_message_waits(self) -> bool:
        """Whether a user message placed since the current work's start ends the timeline."""
        timeline = self._timeline
        if len(timeline) <= self._turn_start_index:
            return False
        last = timeline[-1]
        return type(last) is MessageState and last.role == "user"

    def _touch_background(self, background: list[Any]) -> None:
        seen: set[tuple[bool, str]] = set()
        for item in background:
            if type(item) is s.BackgroundTerminal:
                key = (True, item.terminal_id)
            elif type(item) is s.BackgroundToolCall:
                key = (False, item.tool_call_id)
            else:
                continue  # an unknown kind of work: kept, not checked
            if key in seen:
                what = "terminal" if key[0] else "tool call"
                self._note("background-duplicate", f"background lists {what} {key[1]!r} twice")
            seen.add(key)
            if type(item) is s.BackgroundTerminal:
                if item.terminal_id not in self._terminals:
                    self._note(
                        "background-unknown-terminal",
                        f"background lists terminal {item.terminal_id!r} before announcing it"
                        " (R53; created empty)",
                    )
                self._referenced_terminal(item.terminal_id)
            elif type(item) is s.BackgroundToolCall and item.tool_call_id not in self._tool_calls:
                self._note(
                    "background-unknown-tool-call",
                    f"background lists tool call {item.tool_call_id!r} before announcing it (R53)",
                )
        if not any(terminal for terminal, _ in seen):
            return  # no listed terminal: no tool call is listed with its own
        for item in background:
            if type(item) is not s.BackgroundToolCall:
                continue
            call = self._tool_calls.get(item.tool_call_id)
            for part in call._content if call is not None else ():
                if type(part) is s.Terminal and (True, part.terminal_id) in seen:
                    self._note(
                        "background-duplicate",
                        f"background lists tool call {item.tool_call_id!r} and its terminal"
                        f" {part.terminal_id!r}: process-backed work is listed as its terminal"
                        " only (6.4)",
                    )
                    break

    def _check_dropped_background(self, before: list[Any], after: list[Any]) -> None:
        """R54: work that left the list should have reported its end first (nothing inferred)."""
        kept_calls = {i.tool_call_id for i in after if type(i) is s.BackgroundToolCall}
        kept_terms = {i.terminal_id for i in after if type(i) is s.BackgroundTerminal}
        for item in before:
            if type(item) is s.BackgroundToolCall and item.tool_call_id not in kept_calls:
                call = self._tool_calls.get(item.tool_call_id)
                if call is not None and not call.finished:
                    self._note(
                        "background-dropped-unfinished",
                        f"tool call {item.tool_call_id!r} left the background list without a"
                        " final status (nothing is inferred; R54)",
                    )
            elif type(item) is s.BackgroundTerminal and item.terminal_id not in kept_terms:
                term = self._terminals.get(item.terminal_id)
                if term is not None and not term.exited:
                    self._note(
                        "background-dropped-unfinished",
                        f"terminal {item.terminal_id!r} left the background list without an"
                        " exit status (nothing is inferred; R54)",
                    )

    def _exclude_refused(self) -> None:
        start = None
        for index in range(self._turn_start_index, len(self._timeline)):
            entry = self._timeline[index]
            if type(entry) is MessageState and entry.role == "user":
                start = index
                break
        if start is None:
            return  # no prompt placed in this work: nothing leaves the context (R14)
        for entry in self._timeline[start:]:
            entry.excluded = True

    def _check_pending_permissions(self) -> None:
        for perm in self.permissions.values():
            if (
                perm.status == "pending"
                and perm.request_id not in self._pending_noted  # once: a later idle adds nothing
                and not self.in_background(perm.tool_call_id, perm.terminal_id)
            ):
                self._pending_noted.add(perm.request_id)
                self._note(
                    "permission-pending-at-idle",
                    f"work ended while permission request {perm.request_id!r} is still pending"
                    " (it stays pending; R40)",
                )

    def _check_unechoed(self) -> None:
        for message_id, prompts in self._awaiting_echo.items():
            for prompt in prompts:
                if (
                    prompt.status == "accepted"
                    and not prompt.echoed
                    and prompt not in self._unechoed_reported
                ):
                    self._unechoed_reported.add(prompt)
                    self._note(
                        "prompt-not-echoed",
                        f"prompt {prompt.request_id!r} was accepted as {message_id!r} but no"
                        " user-message update reported it before the work ended (R2)",
                    )

    def _unknown_update(self, update: Any) -> ev.Event:
        if not isinstance(update, dict):
            raise TypeError(f"not a session update: {type(update).__name__}")
        self._unknown.append(update)
        self._unknown_ordinals.append(self._ordinal)
        return ev.UnknownUpdateReceived(session_id=self.session_id, update=update)

    # --------------------------------------------------------- prompts and cancel

    def add_prompt(self, prompt: PromptState) -> None:
        """Track a prompt submission of this session (in the order the client sent it).

        Sent while idle, it is the next work's: a cancel still awaiting an earlier accepted
        prompt's work (which may never come: a locally handled command) no longer applies.
        """
        self.prompts.append(prompt)
        if self.idle:
            self.cancel_requested = False

    def prompt_accepted(self, echo_first_seen: int | None) -> None:
        """A prompt of this session was accepted: its work is awaited until the next idle.

        Not when its message was placed before the last idle: the response came after the
        work it started had ended (R49 lets it).
        """
        if echo_first_seen is None or echo_first_seen > self._idle_ordinal:
            self._work_awaited = True

    def link_prompt(self, prompt: PromptState, message_id: str) -> bool:
        """Bind an accepted prompt to its user message id; return whether it is echoed."""
        prompt.message_id = message_id
        self.prompts_by_message.setdefault(message_id, prompt)
        if self._user_message_applied(message_id):
            prompt.echoed = True
        else:
            self._awaiting_echo.setdefault(message_id, []).append(prompt)
        return prompt.echoed

    def _user_message_applied(self, message_id: str) -> bool:
        """Whether a user message with this id was ever applied here, in any generation."""
        if message_id in self._user:
            return True
        if self._previous is not None and ("user", message_id) in self._previous:
            return True  # applied before the replay that is running now
        return any(
            type(entry) is MessageState and entry.role == "user" and entry.message_id == message_id
            for entry in self._unretained
        )

    def add_permission(self, perm: PermissionState) -> None:
        """Record a permission request; an id answered before may come again (1.2)."""
        self.permissions[perm.request_id] = perm
        self._permission_log.append(perm)
        self._pending_noted.discard(perm.request_id)  # a new request under a used id

    @property
    def permission_requests(self) -> ListView[PermissionState]:
        """Every permission request of the session, in arrival order (ids may repeat)."""
        return ListView(self._permission_log)

    def request_cancel(self) -> tuple[str, ...]:
        """Apply the local effects of sending ``session/cancel`` (section 11.2, R15).

        Marks the not-finished tool calls of the current work cancelled (a local overlay
        that any later agent status replaces) and sets ``cancel_requested`` until the idle
        that ends the work. Returns the ids of the tool calls it marked. While idle
        (including a ``session/new`` session before any snapshot, 6.3) nothing runs in the
        foreground: nothing is marked and no idle is awaited (R46), so the next work's
        permission requests are not taken for cancelled ones; unless a prompt was accepted
        since the last idle: its work is under way even before ``running`` arrives (R49),
        and what changed since that idle pertains to it.
        """
        if self.idle:
            if not self._work_awaited:
                return ()
            since: int | None = self._idle_ordinal
        else:
            since = self._work_start
        self.cancel_requested = True
        background_calls: set[str] = set()
        background_terms: set[str] = set()
        for item in self.background or ():
            if type(item) is s.BackgroundToolCall:
                background_calls.add(item.tool_call_id)
            elif type(item) is s.BackgroundTerminal:
                background_terms.add(item.terminal_id)
        marked = []
        for call in self._tool_calls.values():
            if call.finished or call.locally_cancelled:
                continue
            if since is not None and call.last_changed < since:
                continue
            if call.tool_call_id in background_calls:
                continue
            if background_terms and any(
                type(item) is s.Terminal and item.terminal_id in background_terms
                for item in call._content
            ):
                continue
            call.locally_cancelled = True
            marked.append(call.tool_call_id)
        return tuple(marked)

    def in_background(self, tool_call_id: str | None, terminal_id: str | None = None) -> bool:
        """Whether the latest ``background`` list names this tool call or terminal."""
        for item in self.background or ():
            if type(item) is s.BackgroundToolCall and item.tool_call_id == tool_call_id:
                return True
            if type(item) is s.BackgroundTerminal and item.terminal_id == terminal_id:
                return True
        return False

    # ---------------------------------------------------------------------- replay

    def set_closed(self, *, by_close: bool = False) -> bool:
        """The session is closed; return whether it was not closed already.

        ``by_close``: a ``session/close`` succeeded (11.5); otherwise the agent said the
        session is gone (-32002 to a resume, 12.3 step 5).
        """
        newly = not self.closed
        self.closed = True
        self.close_succeeded = self.close_succeeded or by_close
        self.lifecycle = "closed"
        self._reopening = False
        return newly

    def reopen(self) -> None:
        """A ``session/resume`` of this closed session was sent: open again (12.3 step 4).

        If that resume fails, or its connection ends first, the session is closed again.
        """
        self.closed = False
        self._reopening = True
        self.lifecycle = "open"

    def begin_resume(self) -> None:
        """A ``session/resume`` without replay was sent (section 12.2).

        The session counts as announced, and until the response the agent's snapshot is a
        resume snapshot: it records no completion and starts no work (R51, A27).
        """
        self.announced = True
        self._resuming += 1

    def end_resume(self, *, all_of_them: bool = False) -> None:
        """The response to a ``session/resume`` without replay arrived.

        ``all_of_them``: the connection that sent them is gone; none will be answered.
        """
        if all_of_them:
            self._resuming = 0
        elif self._resuming:
            self._resuming -= 1

    def begin_replay(self) -> None:
        """Start a history replay (section 12.3): entities move to a previous generation."""
        self.lifecycle = "replaying"
        self.announced = True
        # the prompts this replay can tell about: accepted before it began (R2)
        self._replay_prompts = [p for p in self.prompts if p.status == "accepted"]
        self._previous = {entry.key: entry for entry in self._timeline}
        for call in self._tool_calls.values():
            # 12.3 step 3: local cancellation overlays and pending entity cancels are
            # dropped; what the replay does not report again keeps the agent's own status.
            call.locally_cancelled = False
            call.cancel_pending = False
        self._previous_side = (self._terminals, self._plans)
        self._timeline = []
        self._user, self._agent, self._thought = {}, {}, {}
        self._messages = {"user": self._user, "agent": self._agent, "thought": self._thought}
        self._tool_calls = {}
        self._terminals = {}
        self._plans = {}
        self._compactions = {}
        self._turn_start_index = 0

    def end_replay(self, ok: bool, *, why: str = "failed") -> int:
        """Finish a replay; return how many timeline entries were not reported again.

        ``ok`` is false when the resume did not succeed: ``why`` says how, for the
        ``resume-failed`` diagnostic (its error answer, or the connection ending first).
        """
        previous = self._previous or {}
        self._previous = None
        kept = 0
        current = {entry.key for entry in self._timeline}
        # An entry an earlier replay lost and this one reported again is back in the
        # timeline (12.3 step 3: its key keeps its identity); it is no longer unretained.
        self._unretained[:] = [entry for entry in self._unretained if entry.key not in current]
        lost_users: set[str] = set()
        for key, entry in previous.items():
            if key not in current:
                self._unretained.append(entry)
                kept += 1
                if type(entry) is MessageState and entry.role == "user":
                    lost_users.add(entry.message_id)
        for prompt in self._replay_prompts:
            if prompt.message_id is None:
                continue
            if prompt.message_id in self._user:
                prompt.not_retained = False  # 10.5: a later replay containing it places it
            elif ok or prompt.message_id in lost_users:
                # R2: a full replay without the message; it was never placed, or was lost
                prompt.not_retained = True
        self._replay_prompts = []
        if self._previous_side is not None:
            # Terminals and plans the replay did not report again leave the current state
            # too (section 12.3 step 4); they are kept here, outside the snapshot's lists.
            old_terminals, old_plans = self._previous_side
            for tid, term in old_terminals.items():
                if tid not in self._terminals:
                    self.unretained_terminals[tid] = term
            for pid, plan in old_plans.items():
                if pid not in self._plans:
                    self.unretained_plans[pid] = plan
            self._previous_side = None
        for tid in self._terminals.keys() & self.unretained_terminals.keys():
            del self.unretained_terminals[tid]  # reported again
        for pid in self._plans.keys() & self.unretained_plans.keys():
            del self.unretained_plans[pid]
        self._settle_turn_start()
        if self.lifecycle == "replaying":
            self.lifecycle = "open"
        if not ok:
            replayed = "after a partial replay" if self._timeline else "before replaying anything"
            self._note("resume-failed", f"session/resume {why} {replayed} (R45)")
        return kept

    def _settle_turn_start(self) -> None:
        """Where the current work starts, once the state was rebuilt (replay or snapshot).

        When idle (or unknown): after everything. During work: at the last user message,
        the prompt that started it, so that a later refusal marks from there (R14).
        """
        self._turn_start_index = len(self._timeline)
        if self.state is not None and self.state.state != "idle":
            for index in range(len(self._timeline) - 1, -1, -1):
                entry = self._timeline[index]
                if type(entry) is MessageState and entry.role == "user":
                    self._turn_start_index = index
                    break

    def __repr__(self) -> str:
        return (
            f"Session({self.session_id!r}, state={self.state_name!r},"
            f" timeline={len(self._timeline)}, ordinal={self._ordinal})"
        )


_HANDLER_NAMES: dict[type[Any], str] = {
    s.UserMessageChunk: "_user_chunk",
    s.AgentMessageChunk: "_agent_chunk",
    s.AgentThoughtChunk: "_thought_chunk",
    s.UserMessage: "_message",
    s.AgentMessage: "_message",
    s.AgentThought: "_message",
    s.StateUpdate: "_state_update",
    s.ToolCallContentChunk: "_tool_call_chunk",
    s.ToolCallUpdate: "_tool_call_update",
    s.TerminalUpdate: "_terminal_update",
    s.TerminalOutputChunk: "_terminal_chunk",
    s.PlanUpdate: "_plan",
    s.AvailableCommandsUpdate: "_commands",
    s.ConfigOptionUpdate: "_config",
    s.SessionInfoUpdate: "_session_info",
    s.UsageUpdate: "_usage",
    s.Notice: "_notice",
    s.CompactionUpdate: "_compaction_update",
    s.CompactionSummaryChunk: "_compaction_chunk",
}
