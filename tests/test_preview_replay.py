"""The replay boundary of the v2 Preview (docs/preview.md P16-P25; scenarios B7-B15).

``replay_complete`` ends a session's replayed history: what the replay did not report
again moves to ``unretained`` at the marker, not at the response; the current-state
snapshot after it is still a resume snapshot (no completion, P19); an agent built on 2.4.0
never sends it (P20); a failed resume truncates the replay (P21); stray markers are
reported and change nothing (P23).
"""

from __future__ import annotations

from typing import Any

from helpers import INFO, Log, chunk, error, idle, msg, request, response, state, text, update
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_client import Connection, load_session
from acp_client.events import ReplayFinished
from acp_client.testing import ReferenceModel
from acp_client.testing.strategies import conversations

S, C = "sess_s", "sess_c"
MARKER = {"sessionUpdate": "replay_complete"}


def preview_log(*, capability: bool = True) -> Log:
    """A log whose client speaks the v2 Preview (``capabilities.session`` advertised)."""
    log = Log()
    caps: dict[str, Any] = {"session": {}} if capability else {}
    log.client(request(0, "initialize", {"protocolVersion": 2, "capabilities": caps, "info": INFO}))
    log.agent(response(0, {"protocolVersion": 2, "capabilities": {}, "info": INFO}))
    log.client(request(1, "session/new", {"cwd": "/tmp", "mcpServers": []}))
    log.agent(response(1, {"sessionId": S}))
    return log


def history(log: Log) -> None:
    """S holds user u1, agent a1, agent a2 (the last one live-only)."""
    log.upd(
        msg("user", "u1", content=[text("fix")]),
        state("running"),
        chunk("agent", "a1", text("done")),
        msg("agent", "a2", content=[text("live")]),
        idle(),
        sid=S,
    )


def resume(log: Log, rid: int = 9, sid: str = S, *, replay: bool = True) -> None:
    params: dict[str, Any] = {"sessionId": sid, "cwd": "/tmp", "mcpServers": []}
    if replay:
        params["replayFrom"] = {"type": "start"}
    log.client(request(rid, "session/resume", params))


def ids(entries: list[dict[str, Any]]) -> list[str]:
    return [e["messageId"] for e in entries]


def test_b7_replay_with_marker() -> None:
    """P18 / R73: the marker ends the history; ``unretained`` is settled there."""
    log = preview_log()
    history(log)
    resume(log)
    log.upd(msg("user", "u1", content=[text("fix")]), chunk("agent", "a1", text("done")), sid=S)
    events = log.upd(MARKER, sid=S)
    assert any(isinstance(e, ReplayFinished) and e.ok for e in events)
    snap = log.session(S)
    assert ids(snap["unretained"]) == ["a2"]  # moved at the marker
    assert snap["replay"] == {"phase": "live", "complete": True, "truncated": False, "requestId": 9}
    log.upd(idle(), sid=S)
    log.agent(response(9, {}))
    snap = log.session(S)
    assert ids(snap["timeline"]) == ["u1", "a1"]
    assert snap["timeline"][1]["content"] == [text("done")]  # not duplicated
    assert snap["completedTurns"] == ["end_turn"]
    assert snap["replay"]["complete"] is True
    assert log.codes() == []


def test_b8_resume_snapshot_after_marker_is_no_completion() -> None:
    """P17, P19 / R74: no completion from a replayed or resume snapshot until the response."""
    log = preview_log()
    log.upd(state("running"), sid=S)
    resume(log)
    log.upd(state("running"), MARKER, idle(), sid=S)
    log.agent(response(9, {}))
    assert log.session(S)["completedTurns"] == []
    log.upd(state("running"), idle(), sid=S)  # live work after the response counts
    assert log.session(S)["completedTurns"] == ["end_turn"]


def test_b9_agent_built_on_2_4_0_without_marker() -> None:
    """P20 / R75: the success response ends a replay without marker."""
    log = preview_log()
    history(log)
    resume(log)
    log.upd(msg("user", "u1", content=[text("fix")]), chunk("agent", "a1", text("done")), sid=S)
    assert ids(log.session(S)["unretained"]) == []
    log.upd(idle(), sid=S)
    log.agent(response(9, {}))
    snap = log.session(S)
    assert snap["replay"] == {
        "phase": "live",
        "complete": False,
        "truncated": False,
        "requestId": 9,
    }
    assert "replay-complete-missing" in log.codes()
    assert ids(snap["unretained"]) == ["a2"]  # at the result


def test_x0_a_2_4_0_connection_keeps_its_snapshot() -> None:
    """Without any Preview element the snapshot is what it always was (section 4, X0)."""
    log = preview_log(capability=False)
    history(log)
    resume(log)
    log.upd(msg("user", "u1", content=[text("fix")]), idle(), sid=S)
    log.agent(response(9, {}))
    assert "replay" not in log.session(S)
    assert "replay-complete-missing" not in log.codes()


def test_b10_truncated_replay() -> None:
    log = preview_log()
    history(log)
    resume(log)
    log.upd(msg("user", "u1", content=[text("fix")]), sid=S)
    log.agent(error(9, -32603, "boom"))
    replay = log.session(S)["replay"]
    assert replay["complete"] is False and replay["truncated"] is True
    assert "replay-truncated" in log.codes()


def test_b10_truncated_by_the_connection_ending() -> None:
    log = preview_log()
    history(log)
    resume(log)
    log.upd(msg("user", "u1", content=[text("fix")]), sid=S)
    log.client(request(20, "initialize", {"protocolVersion": 2, "capabilities": {}, "info": INFO}))
    assert log.session(S)["replay"]["truncated"] is True
    assert "replay-truncated" in log.codes()


def test_b10_marker_then_error_stays_complete() -> None:
    log = preview_log()
    history(log)
    resume(log)
    log.upd(MARKER, sid=S)
    log.agent(error(9, -32603, "boom"))
    replay = log.session(S)["replay"]
    assert replay["complete"] is True and replay["truncated"] is False


def test_b11_empty_replay() -> None:
    log = preview_log()
    history(log)
    resume(log)
    log.upd(MARKER, idle(), sid=S)
    log.agent(response(9, {}))
    snap = log.session(S)
    assert snap["replay"]["complete"] is True
    assert ids(snap["unretained"]) == ["u1", "a1", "a2"] and snap["timeline"] == []


def child_setup(log: Log) -> None:
    log.upd({"sessionUpdate": "subagent_update", "sessionId": C}, sid=S)
    log.upd(msg("agent", "c0", content=[text("old")]), sid=C)


def test_b12_child_replay() -> None:
    log = preview_log()
    child_setup(log)
    resume(log)
    log.upd(msg("user", "u1", content=[text("fix")]), sid=S)
    log.upd({"sessionUpdate": "subagent_update", "sessionId": C}, sid=S)
    log.upd(msg("agent", "c1", content=[text("new")]), MARKER, sid=C)
    log.upd(MARKER, idle(), sid=S)
    log.agent(response(9, {}))
    child, parent = log.session(C), log.session(S)
    assert ids(child["timeline"]) == ["c1"] and ids(child["unretained"]) == ["c0"]
    assert child["replay"]["complete"] is True and child["replay"]["requestId"] == 9
    assert parent["replay"]["complete"] is True
    assert parent["children"] == [C]
    assert log.codes() == []


def test_b13_child_marker_missing() -> None:
    log = preview_log()
    child_setup(log)
    resume(log)
    log.upd({"sessionUpdate": "subagent_update", "sessionId": C}, sid=S)
    log.upd(msg("agent", "c1", content=[text("new")]), sid=C)
    log.upd(MARKER, sid=S)
    log.agent(response(9, {}))
    replay = log.session(C)["replay"]
    assert replay["complete"] is False and replay["truncated"] is False
    assert "replay-complete-missing" in log.codes()


def test_b13_child_marker_missing_with_an_error() -> None:
    log = preview_log()
    child_setup(log)
    resume(log)
    log.upd({"sessionUpdate": "subagent_update", "sessionId": C}, sid=S)
    log.agent(error(9, -32603, "boom"))
    assert log.session(C)["replay"]["truncated"] is True


def test_p16_child_traffic_after_the_request_stays_in_the_replay() -> None:
    """P16 / R72: a child joins its parent's replay; what came after the request stays."""
    log = preview_log()
    child_setup(log)
    resume(log)
    log.upd(msg("agent", "c1", content=[text("early")]), sid=C)  # before its re-announcement
    log.upd({"sessionUpdate": "subagent_update", "sessionId": C}, sid=S)
    log.upd(MARKER, sid=C)
    child = log.session(C)
    assert ids(child["timeline"]) == ["c1"] and ids(child["unretained"]) == ["c0"]


def test_b14_unknown_child_and_stray_markers() -> None:
    """P23: an unexpected marker is reported and changes nothing."""
    log = preview_log()
    resume(log)
    log.upd(MARKER, sid="sess_x")
    snap_x = log.session("sess_x")
    assert "replay" not in snap_x and snap_x["announced"] is False
    assert snap_x["unknownUpdates"] == []
    assert log.codes() == ["unexpected-replay-complete"]
    log.upd(MARKER, sid=S)
    log.agent(response(9, {}))
    resume(log, 10, replay=False)
    before = log.session(S)
    log.upd(MARKER, sid=S)
    assert log.codes()[-1] == "unexpected-replay-complete"
    assert log.session(S) == before


def test_b15_duplicate_marker() -> None:
    log = preview_log()
    history(log)
    resume(log)
    log.upd(MARKER, msg("agent", "a3", content=[text("x")]), MARKER, sid=S)
    assert log.codes() == ["duplicate-replay-complete"]
    snap = log.session(S)
    assert ids(snap["timeline"]) == ["a3"]
    assert ids(snap["unretained"]) == ["u1", "a1", "a2"]


def test_p22_a_log_ending_mid_replay_stays_replaying() -> None:
    """P22 / R76: nothing is inferred at a log's end (a new initialize ends it: B10)."""
    log = preview_log()
    history(log)
    resume(log)
    assert log.session(S)["replay"]["phase"] == "replaying"


def test_p24_a_straggling_live_update_counts_as_replay() -> None:
    """P24 / R77: what arrives between the request and the marker is history."""
    log = preview_log()
    history(log)
    resume(log)
    log.upd(msg("agent", "late", content=[text("live, but late")]), MARKER, sid=S)
    snap = log.session(S)
    assert ids(snap["timeline"]) == ["late"]
    assert ids(snap["unretained"]) == ["u1", "a1", "a2"]


def test_section_4_replay_key_round_trips() -> None:
    log = preview_log()
    history(log)
    resume(log)
    log.upd(MARKER, sid=S)
    data = log.session(S)
    assert load_session(data).snapshot() == data


def test_p25_marker_is_no_timeline_entry_and_counts_one_ordinal() -> None:
    log = preview_log()
    resume(log)
    before = log.conn.session(S).ordinal
    log.upd(MARKER, sid=S)
    assert log.conn.session(S).ordinal == before + 1
    assert log.session(S)["timeline"] == []


# ------------------------------------------------------------------ property

_LIVE = st.lists(
    st.sampled_from(
        [
            msg("user", "u1", content=[text("a")]),
            chunk("agent", "a1", text("b")),
            msg("agent", "a2", content=[text("c")]),
            {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": "x"},
            msg("user", "u2", content=[text("d")]),
        ]
    ),
    max_size=6,
)


def _feed(conn: Connection, msgs: list[dict[str, Any]]) -> None:
    """The client's requests go out; updates and responses come in."""
    for m in msgs:
        out = m.get("method") not in (None, "session/update")
        conn.receive_message(m, "outgoing" if out else "incoming")


def check_marked_replay_gives_live_state(
    head: list[tuple[str, dict[str, Any]]], updates: list[dict[str, Any]], resume_id: int
) -> None:
    """``head`` (a session's setup and its live history, as a log holds it) then a resume
    whose replay sends ``updates`` (that history's updates) again and ends in a marker:
    the timeline is the live one, nothing is unretained, the replay is complete; the
    reference model reads both the same way."""
    live = Connection(live=False)
    for direction, m in head:
        live.receive_message(m, direction)
    resume_params = {"sessionId": S, "cwd": "/t", "mcpServers": [], "replayFrom": {"type": "start"}}
    replay = [
        ("outgoing", request(resume_id, "session/resume", resume_params)),
        *(("incoming", update(u, S)) for u in updates),
        ("incoming", update(MARKER, S)),
        ("incoming", response(resume_id, {})),
    ]
    replayed = Connection(live=False)
    for direction, m in [*head, *replay]:
        replayed.receive_message(m, direction)
    a, b = live.session(S).snapshot(), replayed.session(S).snapshot()
    # R14 marks a refused turn when its completion is recorded; a replay records none
    # (P17), so the mark is the one thing a replayed history cannot carry.
    assert _unmarked(b["timeline"]) == _unmarked(a["timeline"])
    assert b["unretained"] == []
    assert b["replay"]["complete"] is True
    model = ReferenceModel()
    model.feed_all([*head, *replay])
    ours = replayed.snapshot()
    ours["diagnostics"] = []
    assert ours == model.snapshot()


def _unmarked(timeline: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "excludedFromContext"} for e in timeline]


_SETUP = [
    request(0, "initialize", {"protocolVersion": 2, "capabilities": {"session": {}}, "info": INFO}),
    response(0, {"protocolVersion": 2, "capabilities": {}, "info": INFO}),
    request(1, "session/new", {"cwd": "/tmp", "mcpServers": []}),
    response(1, {"sessionId": S}),
]


def _directed(msgs: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The client's requests go out; updates and responses come in."""
    out = [m.get("method") not in (None, "session/update") for m in msgs]
    return [("outgoing" if o else "incoming", m) for o, m in zip(out, msgs, strict=True)]


@settings(max_examples=60, deadline=None)
@given(_LIVE)
def test_property_a_marked_replay_gives_the_live_state(updates: list[dict[str, Any]]) -> None:
    """A replay ending in a marker gives the same timeline as the live history it replays."""
    head = _directed([*_SETUP, *(update(u, S) for u in updates)])
    check_marked_replay_gives_live_state(head, updates, 9)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(session_id=S, resume=False, session_messages=True))
def test_property_a_marked_replay_of_a_generated_history_gives_the_live_state(
    conversation: list[tuple[str, dict[str, Any]]],
) -> None:
    """The same for the testing kit's generated conversations: every update the session
    received live (turns, tool calls, terminals, plans, session messages ...) replayed
    after a resume and ended by the marker gives the live timeline (P18, P24)."""
    updates = [
        m["params"]["update"]
        for direction, m in conversation
        if direction == "incoming" and m.get("method") == "session/update"
    ]
    check_marked_replay_gives_live_state(conversation, updates, 1000)
