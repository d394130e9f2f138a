"""The per-session reducer: folds decoded ``session/update`` payloads into state.

Theory of operation (ACP-V2-CLIENT-STATE.md sections 2-12, resolutions of section 15)
-----------------------------------------------------------------------------------
A :class:`Session` is pure and sans-IO. :meth:`Session.apply` takes one decoded update
(a Struct of ``_schema``, or the raw ``dict`` of an unknown variant), counts its ordinal,
finds its handler in one table by type, changes the state in place and returns one event.
Each update costs amortised constant time: entities are found by id in dicts, content is
appended to lists, terminal bytes to a ``bytearray``; nothing accumulated is ever copied,
and snapshots are taken only on demand.

A session is made of parts with one owner each:

* ``_timeline.Timeline``: the entity stores, the timeline (2.3: entries take their place
  when their key is first seen; nothing moves them), ordinals, replay generations (12.3).
* ``_updates.EntityUpdates``: what each entity update does (4 messages, 7 tool calls,
  8 terminals, 9 plans and compactions, 5 notices), chunks through one path.
* ``_foreground.Foreground``: the ``state_update`` machine, a ``(phase, input)`` table (6).
* ``_session_view.StoresView``: the read access to those stores (a base class).
* ``_tree.Node`` (``Session.tree``): its place in the session tree and its replay phase
  (ACP-V2-PREVIEW 3.1, 3.3); ``subagent_update`` and ``replay_complete`` go to the
  connection's ``_tree.Forest``, which owns them.
* this module: the handler table, the session-level lists (commands, config options,
  session info, usage), and the tracking of prompts and permission requests (10, 11)
  whose states are the tables of ``_prompts``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from functools import partial
from typing import Any, Literal

from msgspec.structs import replace

from . import _events as ev
from . import _schema as s
from ._arguments import checked_optional_limit
from ._diagnostics import Diagnostic, Severity
from ._entities import (
    ListView,
)
from ._foreground import Foreground
from ._preview import Preview
from ._prompts import PermissionState, PromptState, PromptTracker
from ._runs import apply_run
from ._session_view import StoresView
from ._snapshot_write import session_snapshot
from ._timeline import Timeline
from ._tree import Node, plain_update
from ._updates import (
    EntityUpdates,
    commands_update,
    config_update,
    runs_of,
    session_info_update,
    usage_update,
)

__all__ = ["Session", "Lifecycle", "runs_of"]

Lifecycle = Literal["open", "replaying", "closing", "closed"]


def _refer(up: EntityUpdates, what: str, session_id: str) -> None:
    """P9: a reference to a session, checked by the session's Preview part (``up.refer``)."""
    up.refer(session_id, what)


class Session(StoresView):
    """Conversation state of one ACP session, and the reducer that keeps it.

    Args:
        session_id: the session's id.
        announced: whether a ``session/new`` / ``session/resume`` exchange created it.
        terminal_limit: retain at most this many bytes per terminal (older bytes are
            dropped from the front and counted); ``None`` keeps everything.
        block_limit: retain at most this many content items per message, tool call,
            compaction and session message (the older ones are dropped from the front and
            counted in ``truncated_blocks``); ``None`` keeps everything.
        diagnostics: a list to append diagnostics to (the connection shares its own).
        unstable: the unstable (draft) features to apply: ``"prompt_suggestions"``,
            ``"cursors"``, ``"unknown_state"`` (ACP v2 Preview P0; none by default).

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

    __slots__ = (
        "__weakref__",
        "_fg",
        "_handlers",
        "_reopening",
        "_tl",
        "_tracker",
        "_unknown",
        "_updates",
        "announced",
        "available_commands",
        "block_limit",
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
        "preview",
        "prompts",
        "prompts_by_message",
        "protocol_version",
        "session_id",
        "session_info",
        "side_events",
        "terminal_limit",
        "tree",
        "unstable",
        "usage",
    )

    def __init__(
        self,
        session_id: str,
        *,
        announced: bool = False,
        terminal_limit: int | None = None,
        block_limit: int | None = None,
        diagnostics: list[Diagnostic] | None = None,
        unstable: Collection[str] = (),
    ) -> None:
        self.session_id = session_id
        self.unstable = frozenset(unstable)  # the opted-in unstable features
        self.announced = announced
        self.created_by_new = False
        """Set when a ``session/new`` result created or announced the session."""
        self.lifecycle: Lifecycle = "open"
        self.closed = False
        self.close_succeeded = False
        """Whether a ``session/close`` for it succeeded (the snapshot's ``closed``), not only
        an agent saying it is gone (-32002 to a resume: ``closed`` too, 12.3 step 5)."""
        self._reopening = False
        self.protocol_version: int | None = None
        self.terminal_limit = terminal_limit
        self.block_limit = block_limit = checked_optional_limit("block_limit", block_limit)
        self.diagnostics: list[Diagnostic] = diagnostics if diagnostics is not None else []
        self.line: int | None = None
        self.available_commands: list[Any] | None = None
        self.config_options: list[Any] | None = None
        self.commands_updates = 0
        self.config_updates = 0
        self.session_info: dict[str, Any] | None = None
        self.usage: dict[str, Any] | None = None
        self.side_events: list[ev.Event] = []
        """Events an update causes besides its own (a terminal its reference created, a
        prompt it echoed), in order; a :class:`Connection` returns them right after that
        update's event and clears the list. Bounded by the entities, not the updates."""
        self.tree = Node()
        """Its place in the session tree and its replay phase (P1-P25; ``_tree.Node``)."""
        tl = self._tl = Timeline(terminal_limit, block_limit)
        fg = self._fg = Foreground(session_id, tl, self._note)
        tracker = self._tracker = PromptTracker(
            session_id, self._note, self.side_events, fg.in_background
        )
        self.prompts = tracker.prompts
        self.prompts_by_message = tracker.by_message
        """The first accepted prompt answered with each user message id."""
        self.permissions = tracker.permissions
        """The latest permission request with each id (answers find theirs here)."""
        up = self._updates = EntityUpdates(
            session_id, tl, self._note, self.side_events, tracker.user_message
        )
        fg.connect(up.reference_terminal, tracker.turn_ended, self.side_events)
        fg.reference_session = partial(_refer, up, "a `subagent` background item")
        self._handlers: dict[type[Any], Callable[[Any], ev.Event]] = {
            s.UserMessageChunk: partial(up.chunk, "user"),
            s.AgentMessageChunk: partial(up.chunk, "agent"),
            s.AgentThoughtChunk: partial(up.chunk, "thought"),
            s.UserMessage: up.message,
            s.AgentMessage: up.message,
            s.AgentThought: up.message,
            s.StateUpdate: self._state_update,
            s.ToolCallFields: up.tool_call,  # a permission request's subject (11.1)
            s.ToolCallUpdate: up.tool_call,
            s.ToolCallContentChunk: up.tool_call_chunk,
            s.TerminalUpdate: up.terminal,
            s.TerminalOutputChunk: up.terminal_chunk,
            s.PlanUpdate: up.plan,
            s.AvailableCommandsUpdate: partial(commands_update, self, self._note),
            s.ConfigOptionUpdate: partial(config_update, self, self._note),
            s.SessionInfoUpdate: partial(session_info_update, self),
            s.UsageUpdate: partial(usage_update, self),
            s.Notice: up.notice,
            s.CompactionUpdate: up.compaction,
            s.CompactionSummaryChunk: up.compaction_chunk,
        }
        pv = self.preview = Preview(
            session_id, tl, up, self._note, self.unstable, self.diagnostics, lambda: self.replaying
        )
        self._unknown = pv.install(self._handlers)
        self._handlers[s.SubagentUpdate] = self._tree_update  # P1-P5, owned by _tree
        self._handlers[s.ReplayComplete] = self._tree_update  # P18, P23

    # ----------------------------------------------------------------- read access

    @property
    def state(self) -> s.StateUpdate | None:
        """The last ``state_update`` applied (``None``: none yet)."""
        return self._fg.state

    @property
    def state_updates(self) -> int:
        """How many ``state_update`` snapshots were applied (replay included)."""
        return self._fg.state_updates

    @property
    def background(self) -> list[Any] | None:
        """The last reported ``background`` list (``None``: not reported, 6.4)."""
        return self._fg.background

    @property
    def cancel_requested(self) -> bool:
        """A ``session/cancel`` was sent and no idle came since (11.2, 6.3)."""
        return self._fg.cancel_requested

    @property
    def completed_turns(self) -> ListView[str | None]:
        """One stop reason (or ``None``) per completed piece of foreground work."""
        return ListView(self._fg.completed)

    def turns_completed_before(self, ordinal: int) -> int:
        """How many turns had completed before the update with this ordinal was applied."""
        return self._fg.turns_completed_before(ordinal)

    @property
    def state_name(self) -> str | None:
        """``running``, ``idle``, ``requires_action``, a custom string, or ``None`` (none)."""
        state = self._fg.state
        return state.state if state is not None else None

    @property
    def idle(self) -> bool | None:
        """Whether the session is idle (``None``: unknown).

        The last snapshot decides; before any, a session created by ``session/new`` is idle
        by protocol default, and any other session's activity is unknown (R11).
        """
        return self._fg.is_idle(self.created_by_new)

    @property
    def replaying(self) -> bool:
        """Whether a history replay is under way: from its resume to its response (12.3)."""
        return self._tl.previous is not None or self.lifecycle == "replaying"

    @property
    def reopening(self) -> bool:
        """Whether a ``session/resume`` of this closed session is under way (12.3 step 4)."""
        return self._reopening

    def parts(self) -> tuple[Timeline, Foreground]:
        """The stores and the foreground: the documented internal interface of the snapshot."""
        return self._tl, self._fg

    def snapshot(self) -> dict[str, Any]:
        """The SESSION object of SNAPSHOT.md for this session (plain data)."""
        return session_snapshot(self)

    # ------------------------------------------------------------------- applying

    def apply(self, update: s.SessionUpdate | s.ToolCallFields) -> ev.Event:
        """Apply one update payload and return the event that says what changed.

        A permission request's tool-call subject (a bare ``ToolCallFields``) is applied as
        a ``tool_call_update`` (11.1).
        """
        self._tl.ordinal += 1
        handler = self._handlers.get(type(update))
        if handler is None:
            return self._unknown(update)
        return handler(update)

    def apply_run(
        self, updates: list[Any], events: list[ev.Event], lines: list[int] | None = None
    ) -> None:
        """Apply decoded updates (all for this session) in order, as :meth:`apply` would.

        One event per update is appended to ``events``, each followed by its side events; a
        run of chunks for one message or terminal is applied in one step where it can be.
        ``lines``: each update's log line, for the diagnostics (see :mod:`._runs`).
        """
        apply_run(self, updates, events, lines)

    def apply_tool_call_fields(self, u: s.ToolCallFields) -> ev.ToolCallUpserted:
        """Apply a tool-call upsert without counting an ordinal (see :meth:`apply`)."""
        return self._updates.tool_call(u)

    def check_shadowed(self, extra: Mapping[str, Any], kind: str, key: object) -> None:
        """Note unknown fields named like the snapshot's own keys of a ``kind`` object (R35)."""
        self._updates.check_shadowed(extra, kind, key)

    def _note(self, code: str, message: str, severity: Severity = "warning") -> None:
        note = Diagnostic(code=code, message=message, severity=severity, line=self.line)
        self.diagnostics.append(replace(note, session_id=self.session_id))

    def _tree_update(self, update: Any) -> ev.Event:
        """``subagent_update`` / ``replay_complete``: the connection's tree applies them."""
        plain = plain_update(update)
        if self.tree.hook is None:  # a session on its own has no tree: kept verbatim
            return self._updates.unknown(plain)
        tag = plain["sessionUpdate"]
        self.tree.hook(self, tag, plain)
        return ev.TreeUpdateApplied(session_id=self.session_id, update=plain)

    def _state_update(self, u: s.StateUpdate) -> ev.Event:
        return self._fg.apply(u, self.created_by_new, self.replaying)

    # --------------------------------------------------------- prompts and cancel

    def add_prompt(self, prompt: PromptState) -> None:
        """Track a prompt submission of this session (in the order the client sent it).

        Sent while idle, it is the next work's: a cancel still awaiting an earlier accepted
        prompt's work (which may never come: a locally handled command) no longer applies.
        """
        self.prompts.append(prompt)
        if self.idle:
            self._fg.cancel_requested = False

    def prompt_accepted(self, echo_first_seen: int | None) -> None:
        """A prompt of this session was accepted: its work is awaited until the next idle."""
        self._fg.prompt_accepted(echo_first_seen)

    def link_prompt(self, prompt: PromptState, message_id: str, *, restored: bool = False) -> bool:
        """Bind an accepted prompt to its user message id; return whether it is echoed.

        ``restored``: a snapshot is loaded; its ``echoed`` stands as written.
        """
        applied = self._tl.user_message_applied(message_id)
        self._tracker.link(prompt, message_id, applied, restored)
        return prompt.echoed

    def add_permission(self, perm: PermissionState) -> None:
        """Record a permission request; an id answered before may come again (1.2)."""
        self._tracker.add_permission(perm)

    @property
    def permission_requests(self) -> ListView[PermissionState]:
        """Every permission request of the session, in arrival order (ids may repeat)."""
        return ListView(self._tracker.permission_log)

    def request_cancel(self) -> tuple[str, ...]:
        """Apply the local effects of sending ``session/cancel`` (section 11.2, R15).

        Marks the unfinished tool calls of the current work cancelled (a local overlay any
        later agent status replaces), sets ``cancel_requested`` until the idle that ends the
        work, and returns their ids (details: ``Foreground.request_cancel``).
        """
        return self._fg.request_cancel(self.idle)

    def in_background(self, tool_call_id: str | None, terminal_id: str | None = None) -> bool:
        """Whether the latest ``background`` list names this tool call or terminal."""
        return self._fg.in_background(tool_call_id, terminal_id)

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

    def take_reopening(self) -> bool:
        """The response to the resume came: return whether it was reopening the session."""
        reopening, self._reopening = self._reopening, False
        return reopening

    def begin_resume(self) -> None:
        """A ``session/resume`` without replay was sent (section 12.2).

        The session counts as announced, and until the response the agent's snapshot is a
        resume snapshot: it records no completion and starts no work (R51, A27).
        """
        self.announced = True
        self._fg.resuming += 1

    def end_resume(self, *, all_of_them: bool = False) -> None:
        """The response to a ``session/resume`` without replay arrived.

        ``all_of_them``: the connection that sent them is gone; none will be answered.
        """
        fg = self._fg
        fg.resuming = 0 if all_of_them else max(fg.resuming - 1, 0)

    def begin_replay(self, *, keep_after: int | None = None) -> ev.EntriesRemoved:
        """Start a history replay (section 12.3): entities move to a previous generation.

        ``keep_after``: entries first seen after this ordinal stay current (P16). Returns
        the event that says what left the current state (docs/events.md, E4).
        """
        self.lifecycle = "replaying"
        self.announced = True
        self._tracker.begin_replay()
        removed, terminals, plans = self._tl.begin_replay(keep_after)
        self._fg.turn_start = 0
        return ev.EntriesRemoved(
            self.session_id, 0, removed, "replay", tuple(terminals), tuple(plans)
        )

    def end_replay(self, ok: bool, *, why: str = "failed", window: bool = False) -> int:
        """Finish a replay; return how many timeline entries were not reported again.

        ``ok`` is false when the resume did not succeed: ``why`` says how, for the
        ``resume-failed`` diagnostic (its error answer, or the connection ending first).
        ``window``: the marker ended it before the response, which stays a resume
        snapshot's until then (P19: :meth:`end_resume` closes it).
        """
        if window:
            self._fg.resuming += 1
        kept, lost_users = self._tl.end_replay()
        self._tracker.end_replay(self._tl.user, lost_users, ok)
        self._fg.settle_turn_start()
        if self.lifecycle == "replaying":
            self.lifecycle = "open"
        if not ok:
            replayed = "after a partial replay" if self._tl.entries else "before replaying anything"
            self._note("resume-failed", f"session/resume {why} {replayed} (R45)")
        return kept

    def __repr__(self) -> str:
        return (
            f"Session({self.session_id!r}, state={self.state_name!r},"
            f" timeline={len(self._tl.entries)}, ordinal={self._tl.ordinal})"
        )
