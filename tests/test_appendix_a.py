"""Appendix A of ACP-V2-CLIENT-STATE.md: every scenario, one test each, expected state
asserted exactly on the snapshot (SNAPSHOT.md) and, where the scenario names one, on events
or on the bytes the client wrote.
"""

from __future__ import annotations

import base64

import pytest
from helpers import (
    PERM_OPTIONS,
    SID,
    Live,
    Log,
    apply,
    b64,
    chunk,
    empty_session,
    error,
    idle,
    line,
    message_entry,
    msg,
    notification,
    permission,
    plan_items,
    prompt_request,
    request,
    response,
    state,
    term,
    term_chunk,
    text,
    text_item,
    tool,
    tool_chunk,
    tool_entry,
    update,
)

from acp_client import Connection, Session
from acp_client.events import StateChanged, UpdateRejected


def _out(snapshot_terminal: dict[str, object]) -> bytes:
    return base64.b64decode(str(snapshot_terminal["output"]))


def test_a01_prompt_response_echo_running_chunks_idle() -> None:
    live = Live()
    live.new_session()
    rid = live.prompt("Fix it")
    live.agent(response(rid, {"messageId": "m"}))
    live.upd(
        msg("user", "m", content=[text("Fix it")]),
        state("running"),
        chunk("agent", "a1", "Done"),
        chunk("agent", "a1", "."),
        idle("end_turn"),
    )
    assert live.session() == empty_session(
        announced=True,
        state={"state": "idle", "stopReason": "end_turn"},
        completedTurns=["end_turn"],
        timeline=[message_entry("user", "m", "Fix it"), message_entry("agent", "a1", "Done", ".")],
        availableCommands=[],
        configOptions=[],
        prompts=[{"requestId": rid, "status": "accepted", "messageId": "m", "echoed": True}],
        protocolVersion=2,
    )
    assert live.conn.diagnostics == []


def test_a02_user_message_before_response_no_duplicate() -> None:
    """C15: the user message came first; the response links to it, no duplicate."""
    live = Live()
    live.new_session()
    rid = live.prompt("Fix it")
    live.upd(msg("user", "m", content=[text("Fix it")]), state("running"))
    assert live.session()["prompts"][0] == {"requestId": rid, "status": "pending", "echoed": False}
    live.agent(response(rid, {"messageId": "m"}))
    live.upd(chunk("agent", "a1", "Done"), idle())
    snap = live.session()
    assert snap["timeline"] == [
        message_entry("user", "m", "Fix it"),
        message_entry("agent", "a1", "Done"),
    ]
    assert snap["prompts"] == [
        {"requestId": rid, "status": "accepted", "messageId": "m", "echoed": True}
    ]
    assert snap["completedTurns"] == ["end_turn"]


def test_a03_two_prompts_with_identical_text() -> None:
    live = Live()
    live.new_session()
    r1 = live.prompt("same")
    r2 = live.prompt("same")
    live.agent(response(r2, {"messageId": "u2"}))
    live.upd(chunk("user", "u1", "same"), chunk("user", "u2", "same"))
    live.agent(response(r1, {"messageId": "u1"}))
    snap = live.session()
    assert snap["timeline"] == [
        message_entry("user", "u1", "same"),
        message_entry("user", "u2", "same"),
    ]
    assert snap["prompts"] == [
        {"requestId": r1, "status": "accepted", "messageId": "u1", "echoed": True},
        {"requestId": r2, "status": "accepted", "messageId": "u2", "echoed": True},
    ]
    assert live.conn.prompt(r1).message_id == "u1"
    assert live.conn.prompt(r2).message_id == "u2"


def test_a04_prompt_rejected_invalid_params() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"), idle())
    before = live.session()
    rid = live.prompt("x")
    live.agent(error(rid, -32602, "unsupported content"))
    snap = live.session()
    assert snap["prompts"] == [
        {
            "requestId": rid,
            "status": "rejected",
            "echoed": False,
            "error": {"code": -32602, "message": "unsupported content"},
        }
    ]
    assert snap["timeline"] == []
    assert snap["state"] == before["state"] and snap["completedTurns"] == before["completedTurns"]


def test_a05_message_replace_append_clear() -> None:
    """C16: per message, in arrival order: replace, append, keep, clear."""
    log = Log()
    log.upd(
        msg("agent", "m", content=[text("A")]),
        chunk("agent", "m", "B"),
        msg("agent", "m", content=[text("C")]),
        chunk("agent", "m", "D"),
    )
    assert log.timeline() == [message_entry("agent", "m", "C", "D")]
    log.upd(msg("agent", "m", _meta={"x": 1}))
    assert log.timeline() == [message_entry("agent", "m", "C", "D", _meta={"x": 1})]
    log.upd(msg("agent", "m", content=None))
    assert log.timeline() == [message_entry("agent", "m", _meta={"x": 1})]
    log.upd(chunk("agent", "m", "E"), msg("agent", "m", content=[]))
    assert log.timeline() == [message_entry("agent", "m", _meta={"x": 1})]


def test_a06_tool_call_lifecycle_and_lenient_fields() -> None:
    """C17: a tool call first seen in a content chunk is created; then applied in order."""
    log = Log()
    log.upd(tool_chunk("c", "first"))
    assert log.timeline() == [tool_entry("c", content=[text_item("first")])]
    log.upd(
        tool(
            "c",
            title="Run",
            kind="execute",
            status="in_progress",
            content=[text_item("R")],
            locations=[{"path": "/a"}],
        )
    )
    log.upd(tool_chunk("c", "more"))
    assert log.timeline() == [
        tool_entry(
            "c",
            title="Run",
            kind="execute",
            status="in_progress",
            content=[text_item("R"), text_item("more")],
            locations=[{"path": "/a"}],
        )
    ]
    log.upd(tool("c", locations=None))
    log.upd(tool("c", title=42))
    log.upd(tool("c", status=None, kind=None))
    assert log.timeline() == [
        tool_entry("c", title="Run", content=[text_item("R"), text_item("more")])
    ]


def test_a07_terminal_reference_chunks_snapshot_exit() -> None:
    """C19: chunks decoded one by one and appended; a snapshot replaces, never spliced."""
    log = Log()
    log.upd(tool("c", content=[{"type": "terminal", "terminalId": "t"}]))
    assert log.session()["terminals"] == [{"terminalId": "t", "output": "", "truncatedBytes": 0}]
    log.upd(term_chunk("t", "cGFz"), term_chunk("t", "c2Vk"))
    assert _out(log.terminal("t")) == b"passed"
    log.upd(term("t", command="pytest", output={"data": b64("SNAP")}))
    assert _out(log.terminal("t")) == b"SNAP"
    log.upd(term_chunk("t", b"+1"))
    assert _out(log.terminal("t")) == b"SNAP+1"
    log.upd(term("t", exitStatus={}))
    assert log.terminal("t") == {
        "terminalId": "t",
        "command": "pytest",
        "output": b64("SNAP+1"),
        "exitStatus": {},
        "truncatedBytes": 0,
    }
    assert log.sess().terminals["t"].exited
    log.upd(term("t", exitStatus=None))
    assert "exitStatus" not in log.terminal("t")
    assert not log.sess().terminals["t"].exited


def test_a08_split_four_byte_utf8_character() -> None:
    log = Log()
    data = "ok 🎉 done".encode()
    cut = data.index("🎉".encode()) + 2
    log.upd(term_chunk("t", data[:cut]), term_chunk("t", data[cut:]))
    assert _out(log.terminal("t")) == data
    assert log.sess().terminals["t"].text() == "ok 🎉 done"


def test_a09_plans_replaced_kept_separately_unknown_raw() -> None:
    """C18 / A16: each plan update replaces the whole content kept under its planId."""
    log = Log()
    log.upd(plan_items("p1", "a", "b"), plan_items("p2", "x"), plan_items("p1", "c"))
    md = {"type": "markdown", "planId": "p2", "content": "# md"}
    custom = {"type": "_acme", "planId": "p3", "blob": [1]}
    log.upd(
        {"sessionUpdate": "plan_update", "plan": md},
        {"sessionUpdate": "plan_update", "plan": custom},
    )
    assert log.session()["plans"] == [
        {"planId": "p1", "plan": plan_items("p1", "c")["plan"]},
        {"planId": "p2", "plan": md},
        {"planId": "p3", "plan": custom},
    ]


def test_a10_cancel_permission_overlay_later_status_idle() -> None:
    """C22: a cancel answers the pending permission and marks the tool call; updates go on."""
    live = Live()
    live.new_session()
    live.upd(state("running"), tool("c", status="in_progress"))
    live.agent(permission(5, subject={"type": "tool_call", "toolCall": {"toolCallId": "c"}}))
    live.cancel()
    assert live.answers(5) == [
        {"jsonrpc": "2.0", "id": 5, "result": {"outcome": {"outcome": "cancelled"}}}
    ]
    assert live.session()["timeline"] == [tool_entry("c", status="cancelled")]
    assert live.conn.session(SID).cancel_requested
    live.upd(tool("c", status="completed"))
    assert live.session()["timeline"] == [tool_entry("c", status="completed")]
    events = live.upd(idle("cancelled"))
    assert events[-1] == StateChanged(
        session_id=SID, state="idle", stop_reason="cancelled", turn_completed=True
    )
    assert not live.conn.session(SID).cancel_requested
    assert live.session()["permissionRequests"][0]["status"] == "cancelled"


@pytest.mark.parametrize("reset", [True, False])
def test_a11_resume_replay_over_existing_state(reset: bool) -> None:
    """A5: replayed messages keep their ids; with or without the reset, no duplicates."""
    live = Live()
    live.new_session()
    p1 = live.prompt("one")
    live.agent(response(p1, {"messageId": "u1"}))
    live.upd(
        chunk("user", "u1", "one"),
        state("running"),
        chunk("agent", "a", "x"),
        chunk("agent", "a", "y"),
        idle(),
    )
    p2 = live.prompt("live only")
    live.agent(response(p2, {"messageId": "u2"}))
    live.upd(chunk("user", "u2", "live only"), state("running"), idle())
    assert live.session()["completedTurns"] == ["end_turn", "end_turn"]

    rid, _ = live.conn.send_resume(SID, "/w")
    live.upd(chunk("user", "u1", "one"))
    if reset:
        live.upd(msg("agent", "a", content=[]))
    live.upd(chunk("agent", "a", "x"), chunk("agent", "a", "y"), idle("end_turn"))
    live.agent(response(rid, {}))
    snap = live.session()
    assert snap["timeline"] == [
        message_entry("user", "u1", "one"),
        message_entry("agent", "a", "x", "y"),
    ]
    assert snap["unretained"] == [message_entry("user", "u2", "live only")]
    assert snap["completedTurns"] == ["end_turn", "end_turn"]
    assert live.conn.prompt(p2).not_retained
    assert not live.conn.prompt(p1).not_retained
    assert snap["prompts"][0] == {
        "requestId": p1,
        "status": "accepted",
        "messageId": "u1",
        "echoed": True,
    }


def test_a12_unknown_variants_raw_malformed_chunk_rejected() -> None:
    """C14 / A10 / A6: custom and reserved variants kept raw; no messageId, rejected."""
    log = Log()
    unknown = [
        {"sessionUpdate": "_acme_progress", "p": 1},
        {"sessionUpdate": "foo_update"},
        # replay_complete: known in the v2 Preview (B14 supersedes A12 for it)
    ]
    log.upd(*unknown)
    events = log.upd({"sessionUpdate": "agent_message_chunk", "content": text("x")})
    assert isinstance(events[-1], UpdateRejected)
    assert events[-1].raw == {"sessionUpdate": "agent_message_chunk", "content": text("x")}
    assert log.session() == empty_session(unknownUpdates=unknown)


def test_a13_batch_of_three_updates_in_array_order() -> None:
    """R29: the entries of a received batch are applied in array order."""
    conn = Connection()
    conn.receive_data(
        line(
            [
                update(msg("agent", "m", content=[text("A")])),
                update(chunk("agent", "m", "B")),
                update(msg("agent", "m", content=[text("C")])),
            ]
        )
    )
    assert conn.snapshot()["sessions"][0]["timeline"] == [message_entry("agent", "m", "C")]


def test_a14_commands_malformed_untyped_unknown_and_bad_config() -> None:
    """R61: a command without `type` is dropped like a malformed one."""
    log = Log()
    ok = {"type": "command", "name": "ok", "description": "fine"}
    weird = {"type": "_acme", "name": "w", "description": "W", "x": 1}
    opt = {"type": "boolean", "configId": "b", "name": "B", "currentValue": True}
    log.upd({"sessionUpdate": "config_option_update", "configOptions": [opt]})
    log.upd(
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [
                ok,
                {"type": "command", "name": "broken"},
                {"name": "untyped", "description": "u"},
                weird,
            ],
        }
    )
    events = log.upd({"sessionUpdate": "config_option_update", "configOptions": "x"})
    assert isinstance(events[-1], UpdateRejected)
    snap = log.session()
    assert snap["availableCommands"] == [ok, weird]
    assert snap["configOptions"] == [opt]


def test_a15_updates_before_new_session_result() -> None:
    live = Live()
    rid, _ = live.conn.send_new_session("/w")
    x = {"type": "command", "name": "x", "description": "X"}
    y = {"type": "command", "name": "y", "description": "Y"}
    live.upd(
        state("running"), {"sessionUpdate": "available_commands_update", "availableCommands": [x]}
    )
    assert live.session()["announced"] is False
    live.agent(response(rid, {"sessionId": SID, "availableCommands": [y]}))
    snap = live.session()
    assert snap["announced"] is True
    assert snap["state"] == {"state": "running"}
    assert snap["availableCommands"] == [x]


def test_a15_updates_before_new_session_result_state_part() -> None:
    live = Live()
    rid, _ = live.conn.send_new_session("/w")
    live.upd(state("running"))
    assert live.session()["announced"] is False
    live.agent(response(rid, {"sessionId": SID}))
    snap = live.session()
    assert snap["announced"] is True and snap["state"] == {"state": "running"}
    assert [s["sessionId"] for s in live.snap()["sessions"]] == [SID]


def test_a16_log_starting_mid_stream() -> None:
    log = Log()
    log.upd(chunk("agent", "a", "hi"), tool("c", title="t"), sid="sess_9")
    log.agent(response(42, {"messageId": "u"}))
    snap = log.session("sess_9")
    assert snap == empty_session(
        "sess_9", timeline=[message_entry("agent", "a", "hi"), tool_entry("c", title="t")]
    )
    assert not log.sess("sess_9").idle
    assert [d["code"] for d in log.snap()["diagnostics"]] == ["orphan-response"]
    assert len(log.conn.unmatched_responses) == 1
    log.client(request(1, "session/resume", {"sessionId": "sess_9", "cwd": "/w"}))
    log.upd(idle(), sid="sess_9")
    log.agent(response(1, {}))
    assert log.session("sess_9")["announced"] is True
    assert log.session("sess_9")["timeline"] == snap["timeline"]


def test_a17_same_id_in_three_kinds_and_prompt_links_user_only() -> None:
    log = Log()
    log.client(prompt_request(1))
    log.upd(msg("agent", "m1", content=[text("A")]), msg("thought", "m1", content=[text("T")]))
    log.agent(response(1, {"messageId": "m1"}))
    assert log.session()["prompts"][0]["echoed"] is False
    log.upd(msg("user", "m1", content=[text("U")]))
    snap = log.session()
    assert snap["timeline"] == [
        message_entry("agent", "m1", "A"),
        message_entry("thought", "m1", "T"),
        message_entry("user", "m1", "U"),
    ]
    assert snap["prompts"] == [
        {"requestId": 1, "status": "accepted", "messageId": "m1", "echoed": True}
    ]


def _meta_sequence(log: Log, send: object) -> None:
    steps: list[tuple[object, object]] = [
        ({"a": 1, "b": 2}, {"a": 1, "b": 2}),
        ({"b": None, "c": {"x": 1}}, {"a": 1, "c": {"x": 1}}),
        ({"c": {"y": 2}}, {"a": 1, "c": {"y": 2}}),
        ({}, {"a": 1, "c": {"y": 2}}),
    ]
    for patch, expected in steps:
        send(patch)  # type: ignore[operator]
        assert log.entry("c1")["_meta"] == expected
    log.upd(tool_chunk("c1", "x", _meta={"z": 1}))
    assert log.entry("c1")["_meta"] == {"a": 1, "c": {"y": 2}}
    send(None)  # type: ignore[operator]
    assert "_meta" not in log.entry("c1")


def test_a18_meta_patch_on_a_tool_call() -> None:
    log = Log()
    _meta_sequence(log, lambda m: log.upd(tool("c1", _meta=m)))


def test_a18_meta_patch_through_a_permission_subject() -> None:
    log = Log()
    ids = iter(range(100, 200))
    _meta_sequence(
        log,
        lambda m: log.agent(
            permission(
                next(ids),
                subject={"type": "tool_call", "toolCall": {"toolCallId": "c1", "_meta": m}},
            )
        ),
    )


def test_a19_background_work() -> None:
    log = Log()
    bg = [{"type": "terminal", "terminalId": "t1"}]
    log.upd(term("t1", command="watch"))
    log.upd(state("running", background=bg))
    log.upd(idle("end_turn", background=bg))
    assert log.sess().background is not None and len(log.sess().background) == 1
    assert log.session()["state"] == {"state": "idle", "stopReason": "end_turn", "background": bg}
    log.upd(term("t1", exitStatus={"exitCode": 0}))
    log.upd(idle("end_turn", background=[]))
    assert log.session()["completedTurns"] == ["end_turn"]
    assert log.sess().background == []
    assert "background-not-reported" not in log.codes()
    log.upd(idle("end_turn"))
    assert log.sess().background is None
    assert "background-not-reported" in log.codes()
    log.upd(idle("end_turn", background=[{"type": "terminal"}]))
    assert log.sess().background is None
    job = {"type": "_acme_job", "id": 1}
    log.upd(idle("end_turn", background=[job]))
    assert log.sess().background == [job]
    assert log.session()["state"]["background"] == [job]
    assert log.session()["completedTurns"] == ["end_turn"]


def test_a20_cancel_with_background() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"), tool("c1", status="in_progress"), tool("c2", status="in_progress"))
    live.upd(state("running", background=[{"type": "tool_call", "toolCallId": "c2"}]))
    live.cancel()
    assert [e["status"] for e in live.session()["timeline"]] == ["cancelled", "in_progress"]
    live.agent(permission(9, subject={"type": "tool_call", "toolCall": {"toolCallId": "c2"}}))
    assert live.answers(9) == []
    assert live.session()["permissionRequests"][0]["status"] == "pending"


def test_a21_stop_reason_objects() -> None:
    log = Log()
    err = {"code": -32603, "message": "timeout"}
    log.upd(state("running"), idle("error", error=err))
    assert log.session()["state"] == {"state": "idle", "stopReason": "error", "error": err}
    log.upd(state("running"), idle("error", error="oops"))
    assert log.session()["state"] == {"state": "idle", "stopReason": "error"}
    assert "lenient-default" in log.codes()
    log.upd(state("running"), idle("_acme_quota", quota=3))
    assert log.session()["state"] == {"state": "idle", "stopReason": "_acme_quota", "quota": 3}
    log.upd(state("running"), idle(5))
    assert log.session()["state"] == {"state": "idle"}
    assert log.session()["completedTurns"] == ["error", "error", "_acme_quota", None]


def test_a22_repeated_snapshots_and_new_session_default_idle() -> None:
    log = Log()
    log.upd(state("running"), idle("end_turn"), idle("end_turn"), idle(None))
    assert log.session()["completedTurns"] == ["end_turn"]
    live = Live()
    live.new_session()
    assert "state" not in live.session()
    assert live.conn.session(SID).idle


def test_a23_notices() -> None:
    log = Log()
    log.upd(state("running"))
    warn = {"severity": "warning", "title": "MCP server unavailable"}
    err = {"severity": "error", "title": "Quota", "description": "low"}
    custom = {"severity": "_acme", "title": "c"}
    log.upd({"sessionUpdate": "notice", **warn}, {"sessionUpdate": "notice", **err})
    events = log.upd({"sessionUpdate": "notice", "severity": "info", "title": ""})
    assert isinstance(events[-1], UpdateRejected)
    log.upd({"sessionUpdate": "notice", **custom})
    snap = log.session()
    assert snap["notices"] == [warn, err, custom]
    session = log.sess()
    # recorded with ordinals (2.2, 9.6): a UI anchors each where it arrived
    assert list(session.notice_ordinals) == [2, 3, session.ordinal]
    log.upd(chunk("agent", "m1", "x"), {"sessionUpdate": "_acme_progress", "p": 1})
    assert list(session.unknown_updates) == [{"sessionUpdate": "_acme_progress", "p": 1}]
    assert list(session.unknown_update_ordinals) == [session.ordinal]
    assert list(session.notice_ordinals)[-1] == session.ordinal - 2
    assert snap["timeline"] == [] and snap["state"] == {"state": "running"}
    assert snap["completedTurns"] == []


def test_a24_compaction() -> None:
    log = Log()
    log.upd(chunk("agent", "m1", "before"))
    log.upd({"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "in_progress"})
    log.upd(chunk("agent", "m2", "after"))
    log.upd(
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1", "content": text("s1")},
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1", "content": text("s2")},
    )
    log.upd(
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "c1",
            "status": "completed",
            "summary": [text("S")],
        }
    )
    comp = {
        "entry": "compaction",
        "compactionId": "c1",
        "status": "completed",
        "summary": [text("S")],
    }
    assert log.timeline() == [
        message_entry("agent", "m1", "before"),
        comp,
        message_entry("agent", "m2", "after"),
    ]
    log.upd(
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "c1",
            "status": "completed",
            "summary": None,
            "_meta": {"k": 1},
        }
    )
    log.upd(
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "c1",
            "status": "completed",
            "_meta": {"j": 2},
        }
    )
    assert log.timeline()[1] == {
        "entry": "compaction",
        "compactionId": "c1",
        "status": "completed",
        "summary": [],
        "_meta": {"k": 1, "j": 2},
    }
    assert len(log.timeline()) == 3


def test_a25_compaction_chunk_for_unseen_id_and_update_without_status() -> None:
    log = Log()
    log.upd(chunk("agent", "m", "x"))
    log.upd(
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c2", "content": text("s")}
    )
    bad = {"sessionUpdate": "compaction_update", "compactionId": "c2", "summary": [text("z")]}
    events = log.upd(bad)
    assert isinstance(events[-1], UpdateRejected) and events[-1].raw == bad
    assert log.timeline() == [
        message_entry("agent", "m", "x"),
        {
            "entry": "compaction",
            "compactionId": "c2",
            "status": "in_progress",
            "summary": [text("s")],
        },
    ]


def test_a26_entity_cancel() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"), tool("c1", status="in_progress", capabilities={"cancel": {}}))
    rid, data = live.conn.send_cancel_tool_call(SID, "c1")
    live.wrote(data)
    assert live.sent[-1]["method"] == "tool_call/cancel"
    live.agent(response(rid, {}))
    call = live.conn.session(SID).tool_calls["c1"]
    assert call.cancel_pending
    live.upd(tool("c1", status="cancelled"))
    assert not call.cancel_pending
    assert live.session()["timeline"][0]["status"] == "cancelled"
    live.upd(tool("c2", capabilities={"cancel": {}}))
    live.upd(tool("c2", capabilities=None))
    assert not live.conn.session(SID).tool_calls["c2"].cancellable
    live.upd(tool("c2", capabilities={"cancel": {}}), tool("c2", capabilities="x"))
    assert live.conn.session(SID).tool_calls["c2"].cancellable
    live.upd(tool("c2", capabilities={"cancel": 3}))
    assert not live.conn.session(SID).tool_calls["c2"].cancellable
    assert live.session()["state"] == {"state": "running"}


def test_a27_terminal_extras() -> None:
    live = Live()
    live.new_session()
    live.upd(term("t", size={"cols": 120, "rows": 40}))
    assert live.session()["terminals"][0]["size"] == {"cols": 120, "rows": 40}
    live.upd(term("t", size=None))
    assert "size" not in live.session()["terminals"][0]
    live.upd(term("t", size={"cols": 120, "rows": 40}), term("t", size={"cols": 0, "rows": 40}))
    assert live.session()["terminals"][0]["size"] == {"cols": 120, "rows": 40}
    assert "lenient-default" in live.codes()
    live.upd(term("t", exitStatus={"exitCode": -1073741510}))
    assert live.session()["terminals"][0]["exitStatus"] == {"exitCode": -1073741510}
    live.upd(term("t2", capabilities={"cancel": {}}))
    rid, data = live.conn.send_cancel_terminal(SID, "t2")
    live.wrote(data)
    assert live.sent[-1]["params"] == {"sessionId": SID, "terminalId": "t2"}
    live.agent(response(rid, {}))
    live.upd(term("t2", exitStatus={"signal": "SIGTERM"}))
    assert live.session()["terminals"][1] == {
        "terminalId": "t2",
        "output": "",
        "exitStatus": {"signal": "SIGTERM"},
        "capabilities": {"cancel": {}},
        "truncatedBytes": 0,
    }


def test_a28_held_prompts() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"))
    p2 = live.prompt("P2")
    live.upd(idle("end_turn"))
    assert live.session()["prompts"][0]["status"] == "pending"
    live.agent(response(p2, {"messageId": "u2"}))
    live.upd(msg("user", "u2", content=[text("P2")]), state("running"))
    assert live.session()["prompts"][0] == {
        "requestId": p2,
        "status": "accepted",
        "messageId": "u2",
        "echoed": True,
    }
    p3 = live.prompt("P3")
    live.cancel()
    live.agent(error(p3, -32800, "withdrawn"))
    live.upd(idle("cancelled"))
    snap = live.session()
    assert snap["prompts"][1] == {
        "requestId": p3,
        "status": "rejected",
        "echoed": False,
        "error": {"code": -32800, "message": "withdrawn"},
    }
    assert snap["timeline"] == [message_entry("user", "u2", "P2")]
    assert snap["completedTurns"] == ["end_turn", "cancelled"]


def test_a29_agent_cancel_request_for_permission() -> None:
    """C24: the withdrawn permission request is answered exactly once."""
    live = Live()
    live.new_session()
    live.agent(permission(5))
    live.agent(notification("$/cancel_request", {"requestId": 5}))
    live.agent(notification("$/cancel_request", {"requestId": 5}))
    assert live.answers(5) == [
        {"jsonrpc": "2.0", "id": 5, "result": {"outcome": {"outcome": "cancelled"}}}
    ]
    assert live.session()["permissionRequests"] == [
        {
            "requestId": 5,
            "title": "Allow?",
            "status": "withdrawn",
            "outcome": {"outcome": "cancelled"},
            "options": PERM_OPTIONS,
        }
    ]
    assert live.conn.pending_agent_requests() == {}


def test_a30_paused_location_line_zero_unknown_status() -> None:
    session = Session("s")
    apply(session, state("running"))
    apply(session, tool("p", status="paused", locations=[{"path": "/a", "line": 0}]))
    apply(session, tool("u", status="_acme_waiting"))
    assert not session.tool_calls["p"].finished and not session.tool_calls["u"].finished
    assert session.request_cancel() == ("p", "u")
    log = Log()
    log.upd(tool("p", status="paused", locations=[{"path": "/a", "line": 0}]))
    assert log.entry("p") == tool_entry("p", status="paused", locations=[{"path": "/a"}])


def test_a31_custom_state_then_idle() -> None:
    """C27: an unrecognized state is busy, never idle, and not the old state confirmed."""
    log = Log()
    raw = {"state": "_acme_thinking", "background": [], "detail": {"x": 1}}
    log.upd({"sessionUpdate": "state_update", **raw})
    snap = log.session()
    assert snap["state"] == raw
    assert not log.sess().idle and log.sess().background is None
    log.upd(idle("end_turn"))
    assert log.session()["completedTurns"] == ["end_turn"]
