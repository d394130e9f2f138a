"""The session's state machines, walked pair by pair (h2's ``stream.py`` tests style).

Three tables: the foreground machine (``_foreground.TRANSITIONS``, ACP-V2-CLIENT-STATE.md
6.3 / 6.4 / 12.2 / 12.3), the prompt submission machine (``_prompts.PROMPT_TRANSITIONS``,
10.3-10.5) and the permission request machine (``_prompts.PERMISSION_TRANSITIONS``, 11.1,
11.2). Every ``(state, input)`` pair of each is driven through a real ``Session`` (or the
tracked object) and its target and effects are checked against what the rule says; each
case is named after the rule it checks. Pairs missing from a table take the documented
error path: a ``LocalProtocolError`` (foreground, prompt) or no change (permission, R62).
"""

from __future__ import annotations

from itertools import product
from typing import Any, get_args

import pytest
from helpers import SID, apply, idle, state

from acp_client import LocalProtocolError, Session
from acp_client._foreground import TRANSITIONS, Phase, StateInput, phase_of, transition
from acp_client._prompts import (
    PERMISSION_TRANSITIONS,
    PROMPT_TRANSITIONS,
    PermissionInput,
    PermissionState,
    PermissionStatus,
    PromptInput,
    PromptState,
    PromptStatus,
)

# ------------------------------------------------------------------ foreground

PHASES: tuple[Phase, ...] = get_args(Phase)
INPUTS: tuple[StateInput, ...] = get_args(StateInput)

#: The state string each input kind sends, and the state that puts a session in a phase.
_SENT = {"idle": "idle", "active": "running", "custom": "_custom", "unknown": "unknown"}
_SETUP = {"idle": "idle", "active": "requires_action", "custom": "_other"}


def _rule(phase: Phase, event: StateInput) -> str:
    """The rule a pair checks: R51 (replay / completion), A27 (resume), R49, or 6.3."""
    kind, _, mode = event.partition("/")
    effects = TRANSITIONS[(phase, event)][1]
    if kind == "unknown":
        return "P33-unknown"
    if mode == "replay":
        return "R51-replay"
    if mode == "resume":
        return "A27-resume"
    if "complete" in effects:
        return "R51-completion"
    if "idle-again" in effects:
        return "R49-idle-again"
    if kind == "custom":
        return "6.3-custom"
    return "6.3"


def _session(phase: Phase, mode: str, unstable: tuple[str, ...] = ()) -> Session:
    """A session in ``phase``, a resume or a replay under way if ``mode`` says so."""
    session = Session(SID, unstable=unstable)
    if phase != "unknown":
        apply(session, state(_SETUP[phase], background=[]))
    if mode == "resume":
        session.begin_resume()
    elif mode == "replay":
        session.begin_replay()
    return session


def test_the_foreground_table_is_total() -> None:
    """6.3: every state_update has a transition from every phase, in every mode."""
    assert set(TRANSITIONS) == set(product(PHASES, INPUTS))
    for (phase, event), (target, _) in TRANSITIONS.items():
        kind = event.split("/")[0]
        # P33: the opt-in `unknown` keeps the phase of the last known state
        assert target == (phase if kind == "unknown" else kind)


@pytest.mark.parametrize(
    ("phase", "event"),
    [pytest.param(p, e, id=f"{_rule(p, e)}:{p}+{e}") for p, e in TRANSITIONS],
)
def test_foreground_transition(phase: Phase, event: StateInput) -> None:
    target, effects = TRANSITIONS[(phase, event)]
    kind, _, mode = event.partition("/")
    session = _session(phase, mode, ("unknown_state",) if kind == "unknown" else ())
    tl, fg = session.parts()
    assert phase_of(session.state_name, session.created_by_new) == phase
    fg.cancel_requested = True
    turns, idle_ordinal, work_start = len(session.completed_turns), fg.idle_ordinal, fg.work_start
    noted = len(session.diagnostics)
    upd = idle("end_turn", background=[]) if kind == "idle" else state(_SENT[kind], background=[])
    event_out = apply(session, upd)
    # the target phase (6.3: every snapshot replaces the stored one; P33: that of the last
    # known state while the opt-in `unknown` stands)
    shown = fg.last_known.state if fg.last_known is not None else None
    named = shown if kind == "unknown" else session.state_name
    assert phase_of(named, session.created_by_new) == target
    # complete (R51): one completed turn, reported on the event
    assert event_out.turn_completed is ("complete" in effects)  # type: ignore[attr-defined]
    assert len(session.completed_turns) == turns + ("complete" in effects)
    # end-work / idle-again with no awaited work: the idle ends what came before
    if "end-work" in effects or "idle-again" in effects:
        assert fg.idle_ordinal == tl.ordinal and fg.work_start is None
    else:
        assert fg.idle_ordinal == idle_ordinal
    # start-work (6.3): work starts at this ordinal
    if "start-work" in effects:
        assert work_start is None and fg.work_start == tl.ordinal
    elif "end-work" not in effects and "idle-again" not in effects:
        assert fg.work_start == work_start
    # clear-cancel (6.3): any idle, and only an idle
    assert session.cancel_requested is ("clear-cancel" not in effects)
    # background (6.4): known states store it, an unrecognized one forgets it
    if "forget-background" in effects:
        assert session.background is None
    else:
        assert session.background == []
    # nothing here breaks a rule: no diagnostic, checked or not
    assert len(session.diagnostics) == noted


def test_6_3_session_new_is_idle_before_any_snapshot() -> None:
    """6.3 / R11: no snapshot means idle for a session/new session, unknown otherwise."""
    assert phase_of(None, True) == "idle"
    assert phase_of(None, False) == "unknown"
    assert phase_of("running", False) == phase_of("requires_action", False) == "active"
    assert phase_of("_x", True) == "custom"


@pytest.mark.parametrize("phase", ["closed", "replaying", "running"])
def test_foreground_pairs_missing_from_the_table_raise(phase: str) -> None:
    """A pair outside the table is the documented error path: LocalProtocolError."""
    with pytest.raises(LocalProtocolError, match="no foreground transition"):
        transition(phase, "idle", 0)  # type: ignore[arg-type]


def test_R49_idle_again_holds_the_work_of_an_accepted_prompt() -> None:
    """R49 / 6.3: an idle while idle, a prompt's work awaited: neither starts nor ends work."""
    session = _session("idle", "live")
    fg = session.parts()[1]
    session.prompt_accepted(None)
    before = fg.idle_ordinal
    apply(session, idle("end_turn", background=[]))
    assert fg.idle_ordinal == before and fg.work_awaited
    assert [d.code for d in session.diagnostics] == ["idle-without-running"]
    apply(session, idle(None, background=[]))  # no stop reason: still held, nothing said
    assert fg.idle_ordinal == before and len(session.diagnostics) == 1


def test_R49_a_user_message_ending_the_timeline_waits_for_its_work() -> None:
    """R49 / R14: a user message placed since the last idle keeps waiting for its work."""
    session = _session("idle", "live")
    fg = session.parts()[1]
    apply(session, {"sessionUpdate": "user_message", "messageId": "u1", "content": []})
    before = fg.idle_ordinal
    apply(session, idle(None, background=[]))
    assert fg.idle_ordinal == before and not session.diagnostics


@pytest.mark.parametrize("phase", ["active", "custom"])
def test_R12_completion_without_stop_reason_is_noted(phase: Phase) -> None:
    session = _session(phase, "live")
    apply(session, idle(None, background=[]))
    assert list(session.completed_turns) == [None]
    assert [d.code for d in session.diagnostics] == ["missing-stop-reason"]


def test_A11_cancelled_work_ending_with_error_is_noted() -> None:
    session = _session("active", "live")
    session.request_cancel()
    apply(session, idle("error", background=[]))
    assert "cancel-ended-with-error" in [d.code for d in session.diagnostics]


@pytest.mark.parametrize("mode", ["live", "resume"])
def test_R54_checked_background_notes_what_is_not_reported(mode: str) -> None:
    """6.4: live and resume snapshots check background; a replayed one does not (R51)."""
    session = _session("active", mode)
    apply(session, state("running"))
    assert [d.code for d in session.diagnostics] == ["background-not-reported"]


def test_R51_replayed_background_is_not_checked() -> None:
    session = _session("active", "replay")
    apply(session, state("running"))
    assert session.diagnostics == []


# ---------------------------------------------------------------------- prompts

_PROMPT_RULES = {
    "accept": "10.4",
    "unbind": "R8",
    "reject": "10.5",
    "echo": "10.4",
    "placed": "10.5",
    "lost": "R2",
    "retry": "P29",
}
PROMPT_PAIRS = list(product(get_args(PromptStatus), get_args(PromptInput)))


def _prompt(status: PromptStatus) -> PromptState:
    prompt = PromptState(1, SID, [])
    prompt.status = status
    return prompt


def _flags(prompt: PromptState) -> dict[str, Any]:
    return {k: getattr(prompt, k) for k in ("status", "echoed", "unbound", "not_retained")}


@pytest.mark.parametrize(
    ("status", "event"),
    [
        pytest.param(
            st,
            e,
            id=f"{_PROMPT_RULES[e]}:{st}+{e}"
            + ("" if (st, e) in PROMPT_TRANSITIONS else ":missing"),
        )
        for st, e in PROMPT_PAIRS
    ],
)
def test_prompt_transition(status: PromptStatus, event: PromptInput) -> None:
    prompt = _prompt(status)
    if event == "placed":
        prompt.not_retained = True
    before = _flags(prompt)
    found = PROMPT_TRANSITIONS.get((status, event))
    if found is None:
        with pytest.raises(LocalProtocolError):
            prompt.advance(event)
        assert _flags(prompt) == before
        return
    prompt.advance(event)
    target, flags = found
    assert prompt.status == target
    assert _flags(prompt) == {**before, "status": target, **flags}
    # what each rule says, independently of the table's spelling of it
    rules: dict[str, dict[str, Any]] = {
        "accept": {"status": "accepted"},
        "reject": {"status": "rejected"},
        "unbind": {"unbound": True},
        "echo": {"echoed": True},
        "placed": {"not_retained": False},
        "lost": {"not_retained": True},
        # P29: a retry makes a rejected submission pending again; insertion stays a fact
        "retry": {"status": "accepted" if status == "accepted" else "pending"},
    }
    expected = rules[event]
    assert {k: getattr(prompt, k) for k in expected} == expected


def test_10_3_only_a_sent_prompt_is_answered() -> None:
    """A response settles a pending prompt once; status inputs need ``pending``."""
    for status, event in PROMPT_PAIRS:
        if event in ("accept", "reject"):
            assert ((status, event) in PROMPT_TRANSITIONS) is (status == "pending")


# ------------------------------------------------------------------ permissions

_PERMISSION_RULES = {"answer": "11.1", "cancel": "11.2", "withdraw": "1.2"}
PERMISSION_PAIRS = list(product(get_args(PermissionStatus), get_args(PermissionInput)))


@pytest.mark.parametrize(
    ("status", "event"),
    [
        pytest.param(
            st,
            e,
            id=f"{_PERMISSION_RULES[e] if (st, e) in PERMISSION_TRANSITIONS else 'R62'}:{st}+{e}",
        )
        for st, e in PERMISSION_PAIRS
    ],
)
def test_permission_transition(status: PermissionStatus, event: PermissionInput) -> None:
    perm = PermissionState(7, SID, {}, None)
    perm.status = status
    target = PERMISSION_TRANSITIONS.get((status, event))
    changed = perm.advance(event)
    if target is None:
        # R62: a final request ignores what comes later
        assert changed is False and perm.status == status
        assert status != "pending"
    else:
        assert changed is True and perm.status == target
        assert (
            target == {"answer": "answered", "cancel": "cancelled", "withdraw": "withdrawn"}[event]
        )


def test_11_1_every_input_settles_a_pending_request() -> None:
    assert {e for (st, e) in PERMISSION_TRANSITIONS if st == "pending"} == set(
        get_args(PermissionInput)
    )
