"""The foreground machine of one session: ``state_update`` as a table (ACP-V2-CLIENT-STATE.md 6).

Theory (6.3, 6.4, 11.2, 12.2, 12.3; prompt-lifecycle-v2.md "Session States", "Cancellation")
-------------------------------------------------------------------------------------------
Every ``state_update`` replaces the stored snapshot. What else it does depends only on
two things, looked up in :data:`TRANSITIONS`, a dict keyed by ``(phase, input)`` whose
values are ``(target phase, effects)`` (h2's ``stream.py`` style):

* the **phase** before it: ``unknown`` (no snapshot yet, session not from ``session/new``:
  R11), ``idle`` (an ``idle`` snapshot, or none yet for a ``session/new`` session: idle by
  protocol default, 6.3), ``active`` (``running`` / ``requires_action``: work may start
  blocked) or ``custom`` (an unrecognized state string: never idle, 6.3);
* the **input**: the new state's kind (``idle``, ``active``, ``custom``) and the mode it
  arrives in: ``live``, ``resume`` (a ``session/resume`` without replay awaits its response:
  its snapshot records no completion and starts no work, R51 / A27) or ``replay`` (replayed
  history starts and ends no work, R51). The opt-in ``unknown`` state of the v2 Preview
  (P32, P33) is an input of its own that keeps the phase: the phase of a stored ``unknown``
  is that of the last known state before it.

The effects, run in the listed order:

* ``background`` / ``background-quiet``: a known state stores ``background`` (a list, or
  *not reported*); live and resume snapshots check it (6.4: R53, R54), replayed ones do not.
* ``forget-background``: an unrecognized state leaves background work *not reported* (6.3).
* ``complete``: work ended (6.3, R51): one completed turn with its stop reason (R12 when
  missing), a refusal marks the current work's prompt and what follows (R14), an ``error``
  after ``session/cancel`` breaks A11 and any other reason but ``cancelled`` is a cancel
  ignored (R89), then pending permissions (R40) and unechoed prompts
  (R2) are reported.
* ``end-work``: the idle ends what came before (a resume snapshot's too): the next work's
  prompt is placed after it.
* ``idle-again``: an idle while idle neither starts nor ends work (6.3); if a prompt accepted
  since the last idle, or a user message ending the timeline, still awaits its work (R49),
  that work keeps waiting (a refusal marks from it, R14; a cancel aims at it, R15); otherwise
  it is ``end-work``.
* ``start-work``: the work starts here (6.3); that of a prompt accepted while idle began with
  its acceptance (R49, R15).
* ``clear-cancel``: any idle clears ``cancelRequested`` (6.3), a replayed one too.

The table is total over its phases and inputs (``tests/test_state_machines.py`` walks every
pair); :func:`transition` raises :class:`LocalProtocolError` for a pair outside it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from typing import Any, Final, Literal, cast, get_args

from . import _events as ev
from . import _schema as s
from ._errors import LocalProtocolError
from ._timeline import Timeline

__all__ = ["Foreground", "Phase", "StateInput", "TRANSITIONS", "phase_of", "transition"]

Phase = Literal["unknown", "idle", "active", "custom"]
StateInput = Literal[
    "idle", "idle/resume", "idle/replay", "active", "active/resume", "active/replay", "custom"
    , "custom/resume", "custom/replay", "unknown", "unknown/resume", "unknown/replay"
]  # fmt: skip
Effect = Literal[
    "background",
    "background-quiet",
    "forget-background",
    "complete",
    "end-work",
    "idle-again",
    "start-work",
    "clear-cancel",
]

_BG: Final = "background"
_QUIET: Final = "background-quiet"
_FORGET: Final = "forget-background"

_Row = tuple[Phase, tuple[Effect, ...]]

# Resumed, replayed and unrecognized states do the same from every phase (6.3, R51):
# a resume or a replay starts and completes no work, a custom state only forgets the
# background list. Only a live ``idle`` or ``active`` depends on the phase before it.
_FROM_ANY_PHASE: dict[StateInput, _Row] = {
    "idle/resume": ("idle", (_BG, "end-work", "clear-cancel")),
    "idle/replay": ("idle", (_QUIET, "clear-cancel")),
    "active/resume": ("active", (_BG,)),
    "active/replay": ("active", (_QUIET,)),
    "custom": ("custom", (_FORGET,)),
    "custom/resume": ("custom", (_FORGET,)),
    "custom/replay": ("custom", (_FORGET,)),
}
_LIVE: dict[tuple[Phase, StateInput], _Row] = {
    # from no snapshot of a session not created by session/new (R11)
    ("unknown", "idle"): ("idle", (_BG, "end-work", "clear-cancel")),
    ("unknown", "active"): ("active", (_BG, "start-work")),
    # from idle (or no snapshot of a session/new session: idle by default, 6.3)
    ("idle", "idle"): ("idle", (_BG, "idle-again", "clear-cancel")),
    ("idle", "active"): ("active", (_BG, "start-work")),
    # from running / requires_action
    ("active", "idle"): ("idle", (_BG, "complete", "end-work", "clear-cancel")),
    ("active", "active"): ("active", (_BG,)),
    # from an unrecognized state string: never idle (6.3)
    ("custom", "idle"): ("idle", (_BG, "complete", "end-work", "clear-cancel")),
    ("custom", "active"): ("active", (_BG,)),
}

#: (phase, input) -> (target phase, effects in order). See the module docstring.
TRANSITIONS: dict[tuple[Phase, StateInput], _Row] = {
    **{
        (phase, state_input): row
        for phase in get_args(Phase)
        for state_input, row in _FROM_ANY_PHASE.items()
    },
    **_LIVE,
    # the opt-in `unknown` state (P32, P33): neither starts nor ends work; the phase stays
    # that of the last known state, which decides at the next known one (R82)
    **{
        (phase, cast(StateInput, "unknown" + mode)): (
            phase,
            (_QUIET if mode == "/replay" else _BG,),
        )
        for phase in ("unknown", "idle", "active", "custom")
        for mode in ("", "/resume", "/replay")
    },
}


def _nothing(*_: Any) -> None:
    """The callbacks until :meth:`Foreground.connect` sets them."""


_UNKNOWN = s.UnknownStateUpdate
_KINDS: dict[str, str] = {"idle": "idle", "running": "active", "requires_action": "active"}
_MODES = ("", "/resume", "/replay")


def phase_of(state: str | None, created_by_new: bool) -> Phase:
    """The phase a stored state name (``None``: no snapshot yet) stands for."""
    if state is None:
        return "idle" if created_by_new else "unknown"
    return _KINDS.get(state, "custom")  # type: ignore[return-value]


def transition(
    phase: Phase, state: str, mode: int, unknown: bool = False
) -> tuple[Phase, tuple[Effect, ...]]:
    """Look up the transition for a new ``state`` (mode 0 live, 1 resume, 2 replay).

    ``unknown``: the state is the opt-in ``unknown`` (P32), not a custom string.

    Raises:
        LocalProtocolError: the pair is not in :data:`TRANSITIONS` (a bug: it is total).
    """
    kind = "unknown" if unknown else _KINDS.get(state, "custom")
    key = (phase, cast(StateInput, kind + _MODES[mode]))
    found = TRANSITIONS.get(key)
    if found is None:
        raise LocalProtocolError(f"no foreground transition for {key!r}")
    return found


class Foreground:
    """The foreground state of one session (section 6) and the machine that changes it.

    Attributes:
        state: the last ``state_update`` applied (``None``: none yet).
        state_updates: how many were applied (replay included).
        background: the last reported ``background`` list (``None``: not reported).
        completed / completed_at: one stop reason per completed turn, and its ordinal.
        cancel_requested: a ``session/cancel`` was sent and no idle came since (11.2).
        turn_start: the timeline index where the current work's prompt is placed (R14).
        work_start: the ordinal the current work started at (``None``: no work).
        work_awaited: an accepted prompt's work is awaited until the next idle (R49).
        idle_ordinal: the ordinal of the last idle that ended work.
        resuming: ``session/resume`` requests without replay awaiting their response.
    """

    __slots__ = (
        "_note",
        "_reference_terminal",
        "_session_id",
        "_side",
        "_tl",
        "_turn_ended",
        "background",
        "background_reported",
        "cancel_requested",
        "completed",
        "completed_at",
        "idle_ordinal",
        "last_known",
        "reference_session",
        "resuming",
        "state",
        "state_updates",
        "turn_start",
        "work_awaited",
        "work_start",
    )

    def __init__(
        self,
        session_id: str,
        timeline: Timeline,
        note: Callable[[str, str], None],
    ) -> None:
        self._session_id = session_id
        self._tl = timeline
        self._note = note
        self._reference_terminal: Callable[[str], None] = _nothing
        self._turn_ended: Callable[[], None] = _nothing
        self._side: list[ev.Event] = []
        self.reference_session: Callable[[str], None] = _nothing
        """Who checks a ``subagent`` background item's session is known (P9)."""
        self.state: s.StateUpdate | None = None
        self.state_updates = 0
        self.background: list[Any] | None = None
        self.background_reported = False
        self.completed: list[str | None] = []
        self.completed_at: list[int] = []
        self.cancel_requested = False
        self.turn_start = 0
        self.work_start: int | None = None
        self.work_awaited = False
        self.idle_ordinal = 0
        self.resuming = 0
        self.last_known: s.StateUpdate | None = None
        """While the opt-in ``unknown`` state stands: the state before it (P32)."""

    def connect(
        self,
        reference_terminal: Callable[[str], None],
        turn_ended: Callable[[], None],
        side_events: list[ev.Event] | None = None,
    ) -> None:
        """Set the callbacks: who creates a listed terminal (R53), who reports at work's end.

        ``side_events``: where the events a state update causes besides its own go (E3).
        """
        self._reference_terminal = reference_terminal
        self._turn_ended = turn_ended
        if side_events is not None:
            self._side = side_events

    def apply(self, u: s.StateUpdate, created_by_new: bool, replaying: bool) -> ev.StateChanged:
        """Apply one ``state_update`` through :data:`TRANSITIONS`; return its event."""
        self.state_updates += 1
        old = self.state
        unknown = type(u) is _UNKNOWN
        if type(old) is _UNKNOWN:  # P33: the last known state decides (R82)
            old = self.last_known
        self.last_known = old if unknown else None
        previous = old.state if old is not None else None
        self.state = u
        stop_reason = u.stop_reason if isinstance(u.stop_reason, str) else None
        mode = 2 if replaying else 1 if self.resuming else 0
        _, effects = transition(phase_of(previous, created_by_new), u.state, mode, unknown)
        completed = False
        for effect in effects:
            if effect == "background" or effect == "background-quiet":
                self._set_background(u.background, checked=effect == "background")
            elif effect == "forget-background":
                self.background = None
            elif effect == "complete":
                completed = True
                self._complete(stop_reason)
            elif effect == "end-work":
                self._end_work()
            elif effect == "idle-again":
                self._idle_again(stop_reason)
            elif effect == "start-work":
                tl = self._tl
                self.work_start = self.idle_ordinal if self.work_awaited else tl.ordinal
            else:  # clear-cancel
                self.cancel_requested = False
        return ev.StateChanged(
            session_id=self._session_id,
            state=u.state,
            stop_reason=stop_reason,
            turn_completed=completed,
        )

    def _complete(self, stop_reason: str | None) -> None:
        self.completed.append(stop_reason)
        self.completed_at.append(self._tl.ordinal)
        if stop_reason is None:
            self._note(
                "missing-stop-reason", "idle ended foreground work without a `stopReason` (R12)"
            )
        if stop_reason == "refusal":
            start = self._tl.first_user_index(self.turn_start)
            # no prompt placed in this work: nothing leaves the context (R14)
            if start is not None:
                tl = self._tl
                for entry in tl.entries[start:]:
                    entry.excluded = True
                    tl.stamp(entry)
                stop = len(tl.entries)
                self._side.append(ev.EntriesChanged(self._session_id, start, stop, "refusal"))
        if stop_reason == "error" and self.cancel_requested:
            self._note(
                "cancel-ended-with-error",
                "work cancelled with session/cancel ended with `error`; it must"
                " end with `cancelled` (A11)",
            )
        elif self.cancel_requested and stop_reason not in ("cancelled", None):
            self._note(
                "cancel-ignored",
                f"work cancelled with session/cancel ended with {stop_reason!r}, not"
                " `cancelled`: the agent ignored or lost the cancel (R89)",
            )
        self._turn_ended()

    def _end_work(self) -> None:
        self.turn_start = len(self._tl.entries)
        self.work_start = None
        self.work_awaited = False
        self.idle_ordinal = self._tl.ordinal

    def _idle_again(self, stop_reason: str | None) -> None:
        if not (self.work_awaited or self._tl.ends_with_user_message(self.turn_start)):
            self._end_work()
        elif self.work_awaited and stop_reason is not None:
            # An agent that skipped `running` (it MUST report it when work starts) meant
            # this as the end of the prompt's work; nobody can tell, so say so.
            self._note(
                "idle-without-running",
                f"idle with stopReason {stop_reason!r} while the session was already"
                " idle and an accepted prompt's work was awaited: not a completed turn"
                " (6.3); no `running` was reported for that work",
            )

    # -------------------------------------------------------------- background

    def _set_background(self, background: Any, *, checked: bool) -> None:
        if isinstance(background, list):
            if self.background and checked:
                self._check_dropped(self.background, background)
            self.background = background
            self.background_reported = True
            self._touch(background)
        else:
            if self.background_reported and checked:
                self._note(
                    "background-not-reported",
                    "state_update without `background` after background work was reported;"
                    " background work is now unknown",
                )
            self.background = None

    def _touch(self, background: list[Any]) -> None:
        """R53 and 6.4: what a background list names exists; nothing is listed twice."""
        tl = self._tl
        seen: set[tuple[bool, str]] = set()
        for item in background:
            if type(item) is s.BackgroundTerminal:
                key = (True, item.terminal_id)
            elif type(item) is s.BackgroundToolCall:
                key = (False, item.tool_call_id)
            else:
                if type(item) is s.BackgroundSubagent:
                    self.reference_session(item.session_id)  # P9: never creates one
                continue  # an unknown kind of work: kept, not checked
            if key in seen:
                what = "terminal" if key[0] else "tool call"
                self._note("background-duplicate", f"background lists {what} {key[1]!r} twice")
            seen.add(key)
            if type(item) is s.BackgroundTerminal:
                if item.terminal_id not in tl.terminals:
                    self._note(
                        "background-unknown-terminal",
                        f"background lists terminal {item.terminal_id!r} before announcing it"
                        " (R53; created empty)",
                    )
                self._reference_terminal(item.terminal_id)
            elif type(item) is s.BackgroundToolCall and item.tool_call_id not in tl.tool_calls:
                self._note(
                    "background-unknown-tool-call",
                    f"background lists tool call {item.tool_call_id!r} before announcing it (R53)",
                )
        if not any(terminal for terminal, _ in seen):
            return  # no listed terminal: no tool call is listed with its own
        for item in background:
            if type(item) is not s.BackgroundToolCall:
                continue
            call = tl.tool_calls.get(item.tool_call_id)
            for part in call.content if call is not None else ():
                if type(part) is s.Terminal and (True, part.terminal_id) in seen:
                    self._note(
                        "background-duplicate",
                        f"background lists tool call {item.tool_call_id!r} and its terminal"
                        f" {part.terminal_id!r}: process-backed work is listed as its terminal"
                        " only (6.4)",
                    )
                    break

    def _check_dropped(self, before: list[Any], after: list[Any]) -> None:
        """R54: work that left the list should have reported its end first (nothing inferred)."""
        kept_calls = {i.tool_call_id for i in after if type(i) is s.BackgroundToolCall}
        kept_terms = {i.terminal_id for i in after if type(i) is s.BackgroundTerminal}
        for item in before:
            if type(item) is s.BackgroundToolCall and item.tool_call_id not in kept_calls:
                call = self._tl.tool_calls.get(item.tool_call_id)
                if call is not None and not call.finished:
                    self._dropped_unfinished(f"tool call {item.tool_call_id!r}", "a final status")
            elif type(item) is s.BackgroundTerminal and item.terminal_id not in kept_terms:
                term = self._tl.terminals.get(item.terminal_id)
                if term is not None and not term.exited:
                    self._dropped_unfinished(f"terminal {item.terminal_id!r}", "an exit status")

    def _dropped_unfinished(self, what: str, end: str) -> None:
        self._note(
            "background-dropped-unfinished",
            f"{what} left the background list without {end} (nothing is inferred; R54)",
        )

    def in_background(self, tool_call_id: str | None, terminal_id: str | None = None) -> bool:
        """Whether the latest ``background`` list names this tool call or terminal."""
        for item in self.background or ():
            if type(item) is s.BackgroundToolCall and item.tool_call_id == tool_call_id:
                return True
            if type(item) is s.BackgroundTerminal and item.terminal_id == terminal_id:
                return True
        return False

    # ---------------------------------------------------- prompts and cancel

    def is_idle(self, created_by_new: bool) -> bool | None:
        """Whether the session is idle (``None``: unknown, R11)."""
        if self.state is None:
            return True if created_by_new else None
        if type(self.state) is _UNKNOWN:
            return None  # not confirmed (P32)
        return self.state.state == "idle"

    def prompt_accepted(self, echo_first_seen: int | None) -> None:
        """A prompt was accepted: its work is awaited until the next idle (R49, R15).

        Not when its message was placed before the last idle: the response came after the
        work it started had ended.
        """
        if echo_first_seen is None or echo_first_seen > self.idle_ordinal:
            self.work_awaited = True

    def turns_completed_before(self, ordinal: int) -> int:
        """How many turns had completed before the update with this ordinal was applied."""
        return bisect_left(self.completed_at, ordinal)

    def request_cancel(self, idle: bool | None) -> tuple[str, ...]:
        """Mark the current work's unfinished tool calls cancelled (11.2, R15, R46, R49).

        Marks the not-finished tool calls of the current work cancelled (a local overlay
        that any later agent status replaces) and sets ``cancel_requested`` until the idle
        that ends the work. Returns the ids of the tool calls it marked. While idle
        (including a ``session/new`` session before any snapshot, 6.3) nothing runs in the
        foreground: nothing is marked and no idle is awaited (R46), so the next work's
        permission requests are not taken for cancelled ones; unless a prompt was accepted
        since the last idle: its work is under way even before ``running`` arrives (R49),
        and what changed since that idle pertains to it. Listed background work is not
        marked (R15).
        """
        if idle:
            if not self.work_awaited:
                return ()
            since: int | None = self.idle_ordinal
        else:
            since = self.work_start
        self.cancel_requested = True
        background_calls: set[str] = set()
        background_terms: set[str] = set()
        for item in self.background or ():
            if type(item) is s.BackgroundToolCall:
                background_calls.add(item.tool_call_id)
            elif type(item) is s.BackgroundTerminal:
                background_terms.add(item.terminal_id)
        marked = []
        for call in self._tl.tool_calls.values():
            if call.finished or call.locally_cancelled:
                continue
            if since is not None and call.last_changed < since:
                continue
            if call.tool_call_id in background_calls:
                continue
            if background_terms and any(
                type(item) is s.Terminal and item.terminal_id in background_terms
                for item in call.content
            ):
                continue
            call.locally_cancelled = True
            self._tl.stamp(call)  # the event that names it: CancelRequested (E1)
            marked.append(call.tool_call_id)
        return tuple(marked)

    def settle_turn_start(self) -> None:
        """Where the current work starts, once the state was rebuilt (replay or snapshot).

        When idle (or unknown): after everything. During work: at the last user message,
        the prompt that started it, so that a later refusal marks from there (R14).
        """
        self.turn_start = len(self._tl.entries)
        if self.state is not None and self.state.state != "idle":
            last = self._tl.last_user_index()
            if last is not None:
                self.turn_start = last
