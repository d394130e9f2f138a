"""What each entity update does to the stores (ACP-V2-CLIENT-STATE.md 4, 5, 7, 8, 9, 13.3).

:class:`EntityUpdates` holds one handler per kind of entity update: message upserts and
chunks (4), tool calls (7), terminals (8), plans (9.1), compactions (9.3) and notices
(5); functions apply the session-level lists (commands, config options, session info,
usage). Each takes the decoded update and returns its event; the session's handler table
(``_session``) picks the handler and counts the ordinal. Chunks of every entity take one
way in (:func:`append_chunk`), and a run of message or terminal chunks is applied in one
step (:meth:`EntityUpdates.message_run`, :meth:`EntityUpdates.terminal_run`) with exactly
the state and events that applying them one by one gives: the connection's hot path.
"""

from __future__ import annotations

import binascii
from collections.abc import Callable, Mapping
from itertools import groupby, repeat
from typing import Any, Protocol

from msgspec import UNSET

from . import _events as ev
from . import _schema as s
from ._checks import command_problems, config_problems, relative_path
from ._codec import to_builtins
from ._entities import FINISHED_STATUSES, MessageState, Role, compact, decode_base64
from ._errors import INVALID_PARAMS, RemoteProtocolError
from ._patch import meta_patch, patch_extra
from ._retention import note_terminal, trim
from ._timeline import Timeline

__all__ = [
    "SNAPSHOT_KEYS",
    "EntityUpdates",
    "Lists",
    "append_chunk",
    "replaced_content",
    "commands_update",
    "config_update",
    "runs_of",
    "session_info_update",
    "usage_update",
]

_TEXT = s.TextContent
_CHUNK_APPENDED = ev.MessageChunkAppended
_OUTPUT_APPENDED = ev.TerminalOutputAppended
_A2B = binascii.a2b_base64
_REMAINDER_4 = (3).__and__

# The keys the snapshot writes itself on each kind of object (SNAPSHOT.md): an unknown field
# of the same name stays in the live state but cannot be written beside them (R35).
_ENTRY_KEYS = frozenset({"entry", "_meta", "content", "excludedFromContext", "truncatedBlocks"})
SNAPSHOT_KEYS = {
    "message": _ENTRY_KEYS | {"messageId", "role"},
    "tool call": _ENTRY_KEYS
    | {"toolCallId", "title", "name", "kind", "status", "locations", "rawInput", "rawOutput"}
    | {"capabilities"},
    "compaction": _ENTRY_KEYS | {"compactionId", "status", "summary", "error"},
    "session message": _ENTRY_KEYS
    | {"messageId", "senderSessionId", "recipientSessionId", "senderMessageId"}
    | {"recipientMessageId"},
    "cursor": frozenset({"cursorId", "anchor", "capabilities", "_meta"}),
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


def append_chunk(entity: Any, content: list[Any], item: Any, meta: Any) -> None:
    """The one way a chunk joins an entity: ``item`` appended, its ``_meta`` kept by index."""
    if meta:
        if entity.chunk_meta is None:
            entity.chunk_meta = {}
        entity.chunk_meta[len(content)] = meta
    content.append(item)


def replaced_content(entity: Any, old: list[Any], value: Any) -> tuple[list[Any], ev.ContentChange]:
    """An upsert's content array (PATCH: not ``UNSET``): the new list and what changed.

    The new blocks take the absolute indices after every block of ``old`` (E6).
    """
    entity.chunk_meta = None
    entity.base += len(old)
    entity._dropped = 0  # what the block limit drops is counted from here (issue 26)
    if value:
        return list(value), "replaced"
    return [], "cleared"


def _no_reference_check(session_id: str, what: str) -> None:
    """Until a session's Preview part connects the check (P9)."""


class EntityUpdates:
    """The handlers of entity updates for one session's :class:`Timeline`.

    Args:
        session_id: the session's id (for events).
        timeline: the stores it changes.
        note: ``note(code, message, severity)`` appends a diagnostic.
        side_events: where events an update causes besides its own go (a terminal its
            reference created), in order.
        user_message: called with the id of each user message created (the prompt tracker
            links its prompts, 10.4).
    """

    __slots__ = ("_note", "_side", "_user_message", "refer", "session_id", "tl")

    def __init__(
        self,
        session_id: str,
        timeline: Timeline,
        note: Callable[..., None],
        side_events: list[ev.Event],
        user_message: Callable[[str], None],
    ) -> None:
        self.session_id = session_id
        self.tl = timeline
        self._note = note
        self._side = side_events
        self._user_message = user_message
        self.refer: Callable[[str, str], None] = _no_reference_check
        """``refer(session_id, what)``: a reference to a session was read (P9)."""

    # ------------------------------------------------------------ checks

    def check_shadowed(self, extra: Mapping[str, Any], kind: str, key: object) -> None:
        """Note unknown fields named like the snapshot's own keys of a ``kind`` object (R35)."""
        clash = [k for k in SNAPSHOT_KEYS[kind].intersection(extra) if extra[k] is not None]
        if clash:
            self._note(
                "unknown-field-shadowed",
                f"{kind} {key!r}: unknown field(s) {', '.join(map(repr, sorted(clash)))} share"
                " a name with the snapshot's own keys: kept in the live state (`extra`), left"
                " out of the snapshot",
            )

    def patched(self, entity: Any, u: Any, kind: str, key: str) -> None:
        """End an upsert: META-PATCH ``_meta``, PATCH unknown fields (R35), last changed."""
        entity.meta = meta_patch(entity.meta, u.meta)
        if u.extra is not UNSET:
            self.check_shadowed(u.extra, kind, key)
            entity.extra = patch_extra(entity.extra, u.extra)
        tl = self.tl
        entity.last_changed = tl.ordinal
        tl.changes += 1  # Timeline.stamp, inline: every upsert passes here (E1)
        entity.version = tl.changes

    def _check_item(self, item: Any) -> None:
        """R22, A15, A24: a terminal reference creates it; a diff's paths are absolute."""
        if type(item) is s.Terminal:
            self.reference_terminal(item.terminal_id)
        elif type(item) is s.SessionReference:
            self.refer(item.session_id, "a tool call's `session` content")
        elif type(item) is s.Diff:
            for change in item.changes:
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

    def retain(self, entity: Any, items: list[Any]) -> None:
        """The block limit, when set, after ``items`` (the entity's window) changed."""
        limit = self.tl.block_limit
        if limit is not None:
            trim(entity, items, limit, self._note)

    def reject(self, update: Any, code: str, message: str) -> ev.Event:
        """Drop a malformed update: an error diagnostic and ``UpdateRejected``."""
        self._note(code, message, "error")
        error = RemoteProtocolError(message, path="$.params.update", code=INVALID_PARAMS)
        return ev.UpdateRejected(session_id=self.session_id, error=error, raw=update)

    def reference_terminal(self, terminal_id: str) -> None:
        """A terminal named by a reference exists from then on (R22, R53).

        If that created it, an event says so, after the event of the update that named it.
        """
        term, created = self.tl.terminal(terminal_id)
        if created:
            version = self.tl.stamp(term)
            self._side.append(
                ev.TerminalUpserted(self.session_id, terminal_id, True, "unchanged", version)
            )

    # ---------------------------------------------------------- messages (4)

    def _message_of(self, role: Role, message_id: str) -> tuple[MessageState, bool]:
        msg = self.tl.messages[role].get(message_id)
        if msg is not None:
            return msg, False
        msg = self.tl.new_message(role, message_id)
        if role == "user":
            self._user_message(message_id)
        return msg, True

    def chunk(self, role: Role, u: s.ContentChunk) -> ev.Event:
        """Append one chunk's block to its message (created, and placed, if new)."""
        tl = self.tl
        msg = tl.messages[role].get(u.message_id)
        created = msg is None
        if msg is None:
            msg = self._message_of(role, u.message_id)[0]
        content = msg._content
        if u.meta:
            append_chunk(msg, content, compact(u.content), u.meta)
        else:  # append_chunk without _meta, spelled out: the path of every lone chunk
            content.append(compact(u.content))
        limit = tl.block_limit
        if limit is not None and len(content) > limit:
            trim(msg, content, limit, self._note)
        msg.last_changed = tl.ordinal
        tl.changes += 1
        msg.version = tl.changes
        return _CHUNK_APPENDED(
            self.session_id, role, u.message_id, u.content, created, msg.index, tl.changes
        )

    def message_run(self, role: Role, run: list[Any], events: list[ev.Event]) -> None:
        """Apply a run of agent or thought chunks in order (counting their ordinals).

        A run for one message is appended in one step unless a chunk has ``_meta`` (then
        each goes through :meth:`chunk`); the first chunk of a new message creates it
        through :meth:`chunk`; a run naming several messages is taken a message at a time.
        """
        tl = self.tl
        messages = tl.messages[role]
        message_id = run[0].message_id
        msg = messages.get(message_id)
        if msg is None:
            tl.ordinal += 1
            events.append(self.chunk(role, run[0]))
            msg = messages[message_id]
            run = run[1:]
        n = len(run)
        blocks = [u.content for u in run if u.message_id == message_id and not u.meta]
        if len(blocks) != n:
            ids = [u.message_id for u in run]
            if ids.count(message_id) != n:
                for _, part in runs_of(ids, run):
                    self.message_run(role, part, events)
                return
            for update in run:  # chunk _meta: each on its own
                tl.ordinal += 1
                events.append(self.chunk(role, update))
            return
        if not n:
            return
        # Plain text is stored compactly: ``compact``'s test, inline for a whole run.
        texts = [
            b.text
            for b in blocks
            if type(b) is _TEXT and b.annotations is UNSET and b.meta is UNSET and b.extra is UNSET
        ]
        msg._content += texts if len(texts) == n else map(compact, blocks)
        if tl.block_limit is not None:  # once per run: exactly the last block_limit kept
            trim(msg, msg._content, tl.block_limit, self._note)
        tl.ordinal += n
        msg.last_changed = tl.ordinal
        first = tl.changes + 1
        tl.changes += n
        msg.version = tl.changes
        events += map(
            _CHUNK_APPENDED,
            repeat(self.session_id, n),
            repeat(role, n),
            repeat(message_id, n),
            blocks,
            repeat(False, n),
            repeat(msg.index, n),
            range(first, first + n),
        )

    def message(self, u: s._MessageUpsert) -> ev.Event:
        """A ``user_message`` / ``agent_message`` / ``agent_thought`` upsert (4.2)."""
        role: Role = u.role  # type: ignore[attr-defined]
        msg, created = self._message_of(role, u.message_id)
        change: ev.ContentChange = "unchanged"
        if u.content is not UNSET:
            msg._content, change = replaced_content(msg, msg._content, u.content)
            self.retain(msg, msg._content)
        self.patched(msg, u, "message", u.message_id)
        return ev.MessageUpserted(
            self.session_id, role, u.message_id, created, change, msg.index, msg.version
        )

    # -------------------------------------------------------- tool calls (7)

    def tool_call(self, u: s.ToolCallFields) -> ev.ToolCallUpserted:
        """Apply a tool-call upsert (also a permission request's tool-call subject)."""
        call, created = self.tl.tool_call(u.tool_call_id)
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
            call._content, change = replaced_content(call, call._content, u.content)
            for item in call._content:
                self._check_item(item)
            self.retain(call, call._content)  # every item checked, the dropped ones too
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
        if (u.status is not UNSET or u.capabilities is not UNSET) and call.finished:
            self._check_final_cancel(call.capabilities, f"tool call {u.tool_call_id!r}")
        self.patched(call, u, "tool call", u.tool_call_id)
        return ev.ToolCallUpserted(
            self.session_id, u.tool_call_id, created, change, call.index, call.version
        )

    def tool_call_chunk(self, u: s.ToolCallContentChunk) -> ev.Event:
        """Append one content item to a tool call (created, and placed, if new)."""
        call, created = self.tl.tool_call(u.tool_call_id)
        append_chunk(call, call._content, u.content, u.meta)
        self._check_item(u.content)
        self.retain(call, call._content)
        call.last_changed = self.tl.ordinal
        version = self.tl.stamp(call)
        return ev.ToolCallChunkAppended(
            self.session_id, u.tool_call_id, u.content, created, call.index, version
        )

    # --------------------------------------------------------- terminals (8)

    def terminal(self, u: s.TerminalUpdate) -> ev.Event:
        """A ``terminal_update`` upsert; ``output`` is a snapshot that replaces the bytes."""
        term, created = self.tl.terminal(u.terminal_id)
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
        if term.limit is not None and change != "unchanged":
            note_terminal(term, self._note)
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
        self.patched(term, u, "terminal", u.terminal_id)
        return ev.TerminalUpserted(self.session_id, u.terminal_id, created, change, term.version)

    def terminal_chunk(self, u: s.TerminalOutputChunk) -> ev.Event:
        """Append one chunk's bytes, each base64-decoded on its own (8)."""
        try:
            data = decode_base64(u.data)
        except ValueError as exc:
            return self.reject(
                u,
                "invalid-base64",
                f"terminal {u.terminal_id!r}: output chunk is not valid base64 ({exc}); dropped",
            )
        term, created = self.tl.terminal(u.terminal_id)
        term.append(data)
        if term.limit is not None:
            note_terminal(term, self._note)
        term.last_changed = self.tl.ordinal
        tl = self.tl
        tl.changes += 1
        term.version = tl.changes
        return _OUTPUT_APPENDED(self.session_id, u.terminal_id, data, created, tl.changes)

    def terminal_run(self, run: list[Any], events: list[ev.Event]) -> list[Any]:
        """Apply a run of output chunks for one terminal at once; return what is left.

        Taken only for an existing terminal without a retention limit, when every chunk
        decodes; the bytes are appended in one piece. Otherwise the run is returned for
        :meth:`terminal_chunk` (which reports each bad chunk on its own).
        """
        terminal_ids = [u.terminal_id for u in run]
        terminal_id = terminal_ids[0]
        term = self.tl.terminals.get(terminal_id)
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
        tl = self.tl
        tl.ordinal += n
        term.last_changed = tl.ordinal
        first = tl.changes + 1
        tl.changes += n
        term.version = tl.changes
        events += map(
            _OUTPUT_APPENDED,
            repeat(self.session_id, n),
            repeat(terminal_id, n),
            pieces,
            repeat(False, n),
            range(first, first + n),
        )
        return []

    # ---------------------------------------------- plans, compactions, notices

    def plan(self, u: s.PlanUpdate) -> ev.Event:
        """A ``plan_update``: the plan with its ``planId`` replaced whole (9.1)."""
        plan = u.plan
        plan_id = plan.get("planId") if type(plan) is dict else plan.plan_id  # type: ignore[union-attr]
        if not isinstance(plan_id, str):
            return self.reject(u, "malformed-update", "plan_update without a string `planId`")
        created = self.tl.set_plan(plan_id, plan)
        version = self.tl.changes  # set_plan stamped it
        return ev.PlanUpdated(self.session_id, plan_id, created, version)

    def compaction(self, u: s.CompactionUpdate) -> ev.Event:
        """A ``compaction_update`` upsert (9.3)."""
        comp, created = self.tl.compaction(u.compaction_id)
        comp.status = u.status
        change: ev.ContentChange = "unchanged"
        if u.summary is not UNSET:
            comp._summary, change = replaced_content(comp, comp._summary, u.summary)
            self.retain(comp, comp._summary)
        if u.error is not UNSET:
            comp.error = u.error
        self.patched(comp, u, "compaction", u.compaction_id)
        return ev.CompactionUpserted(
            self.session_id, u.compaction_id, created, change, comp.index, comp.version
        )

    def compaction_chunk(self, u: s.CompactionSummaryChunk) -> ev.Event:
        """Append one summary block to a compaction (created, and placed, if new)."""
        comp, created = self.tl.compaction(u.compaction_id)
        append_chunk(comp, comp._summary, u.content, u.meta)
        self.retain(comp, comp._summary)
        comp.last_changed = self.tl.ordinal
        version = self.tl.stamp(comp)
        return ev.CompactionChunkAppended(
            self.session_id, u.compaction_id, u.content, created, comp.index, version
        )

    def notice(self, u: s.Notice) -> ev.Event:
        """A ``notice``: kept in order, live information, not history (5)."""
        self.tl.add_notice(u)
        return ev.NoticeReceived(session_id=self.session_id, notice=u)

    def raw(self, update: Any) -> ev.Event:
        """A known update this part does not apply (yet): kept as its raw JSON (13.1)."""
        return self.unknown(to_builtins(update))

    def unknown(self, update: Any) -> ev.Event:
        """An update of an unknown kind, kept verbatim (13.1)."""
        if not isinstance(update, dict):
            raise TypeError(f"not a session update: {type(update).__name__}")
        self.tl.add_unknown(update)
        return ev.UnknownUpdateReceived(session_id=self.session_id, update=update)


# ------------------------------------------------------ session-level lists (3, 5)


class Lists(Protocol):
    """The session-level values the list updates replace (a ``Session``'s attributes)."""

    session_id: str
    protocol_version: int | None
    available_commands: list[Any] | None
    commands_updates: int
    config_options: list[Any] | None
    config_updates: int
    session_info: dict[str, Any] | None
    usage: dict[str, Any] | None


def commands_update(into: Lists, note: Callable[[str, str], None], u: Any) -> ev.Event:
    """``available_commands_update``: the list replaced whole (A29 checked on v2)."""
    if into.protocol_version != 1:  # A29 is v2's rule: v1 allows `memory show`, say
        for problem in command_problems(u.available_commands):
            note("invalid-commands", problem)
    into.available_commands = list(u.available_commands)
    into.commands_updates += 1
    return ev.AvailableCommandsUpdated(session_id=into.session_id)


def config_update(into: Lists, note: Callable[[str, str], None], u: Any) -> ev.Event:
    """``config_option_update``: the options replaced whole (A19 checked)."""
    for problem in config_problems(u.config_options):
        note("invalid-config", problem)
    into.config_options = list(u.config_options)
    into.config_updates += 1
    return ev.ConfigOptionsUpdated(session_id=into.session_id)


def session_info_update(into: Lists, u: Any) -> ev.Event:
    """``session_info_update``: PATCH per field, META-PATCH ``_meta``."""
    info = into.session_info
    if info is None:
        info = into.session_info = {}
    if u.title is not UNSET:
        info["title"] = u.title
    if u.updated_at is not UNSET:
        info["updatedAt"] = u.updated_at
    info["_meta"] = meta_patch(info.get("_meta"), u.meta)
    if u.extra is not UNSET:
        info["extra"] = patch_extra(info.get("extra"), u.extra)
    return ev.SessionInfoUpdated(session_id=into.session_id)


def usage_update(into: Lists, u: Any) -> ev.Event:
    """``usage_update``: replaced whole, except that an omitted ``cost`` keeps the last."""
    previous = into.usage
    cost = previous.get("cost") if previous else None
    if u.cost is not UNSET:
        cost = u.cost
    into.usage = {
        "used": u.used,
        "size": u.size,
        "cost": cost,
        "_meta": u.meta if u.meta is not UNSET else None,
        "extra": u.extra if u.extra is not UNSET else None,
    }
    return ev.UsageUpdated(session_id=into.session_id)
