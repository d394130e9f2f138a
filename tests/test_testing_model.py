"""ReferenceModel against the spec's Appendix A scenarios, plus properties of the model.

Each scenario test is one scenario of ACP-V2-CLIENT-STATE.md Appendix A (numbers in the
names); expected values are snapshot fragments (SNAPSHOT.md).
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_client import Connection, replay_log
from acp_client.testing import FakeAgent, ReferenceModel
from acp_client.testing.strategies import (
    chunked_message_updates,
    content_blocks,
    conversations,
    damaged_update_pairs,
    prompt_echo_interleavings,
    rechunkings,
    updates,
)

SID = "sess_1"
PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def run(agent: FakeAgent) -> dict[str, Any]:
    model = ReferenceModel()
    model.feed_all(agent.messages)
    return model.snapshot()


def session(snap: dict[str, Any], sid: str = SID) -> dict[str, Any]:
    (found,) = [s for s in snap["sessions"] if s["sessionId"] == sid]
    return found


def texts(entry: dict[str, Any]) -> list[str]:
    return [b["text"] for b in entry["content"]]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def tool_call(s: dict[str, Any], tool_call_id: str) -> dict[str, Any]:
    (found,) = [
        e for e in s["timeline"] if e["entry"] == "toolCall" and e["toolCallId"] == tool_call_id
    ]
    return found


# -- Appendix A ---------------------------------------------------------------------------


def test_scenario_01_prompt_then_echo() -> None:
    a = FakeAgent(SID).new_session(0)
    a.prompt(1, "Fix the test").prompt_response(1, "m").user_message("m", "Fix the test")
    a.state("running").agent_chunk("a1", "Do").agent_chunk("a1", "ne").state("idle", "end_turn")
    s = session(run(a))
    assert [(e["entry"], e["role"], e["messageId"]) for e in s["timeline"]] == [
        ("message", "user", "m"),
        ("message", "agent", "a1"),
    ]
    assert texts(s["timeline"][1]) == ["Do", "ne"]
    assert s["state"] == {"state": "idle", "stopReason": "end_turn"}
    assert s["completedTurns"] == ["end_turn"]
    assert s["prompts"] == [
        {"requestId": 1, "status": "accepted", "messageId": "m", "echoed": True}
    ]


def test_scenario_02_echo_before_response() -> None:
    a = FakeAgent(SID).prompt(1, "hi").user_message("m", "hi").prompt_response(1, "m")
    s = session(run(a))
    assert len(s["timeline"]) == 1
    assert s["prompts"][0] == {
        "requestId": 1,
        "status": "accepted",
        "messageId": "m",
        "echoed": True,
    }


def test_scenario_03_identical_prompts() -> None:
    a = FakeAgent(SID).prompt(1, "same").prompt(2, "same")
    a.prompt_response(1, "u1").user_message("u1", "same")
    a.prompt_response(2, "u2").user_message("u2", "same")
    s = session(run(a))
    assert [e["messageId"] for e in s["timeline"]] == ["u1", "u2"]
    assert [(p["requestId"], p["messageId"]) for p in s["prompts"]] == [(1, "u1"), (2, "u2")]


def test_scenario_04_rejected_prompt() -> None:
    a = FakeAgent(SID).state("running").prompt(1, "x").prompt_error(1, -32602, "Invalid params")
    s = session(run(a))
    assert s["timeline"] == []
    assert s["state"] == {"state": "running"}
    assert s["prompts"] == [
        {
            "requestId": 1,
            "status": "rejected",
            "echoed": False,
            "error": {"code": -32602, "message": "Invalid params"},
        }
    ]


def test_scenario_05_message_upserts() -> None:
    a = FakeAgent(SID).agent_message("m", "A").agent_chunk("m", "B")
    a.agent_message("m", "C").agent_chunk("m", "D")
    assert texts(session(run(a))["timeline"][0]) == ["C", "D"]
    a.update({"sessionUpdate": "agent_message", "messageId": "m", "_meta": {"k": 1}})
    entry = session(run(a))["timeline"][0]
    assert texts(entry) == ["C", "D"] and entry["_meta"] == {"k": 1}
    for cleared in (None, []):
        b = FakeAgent(SID).agent_message("m", "A").agent_message("m", cleared)
        assert session(run(b))["timeline"][0]["content"] == []


def test_scenario_06_tool_call_patches() -> None:
    a = FakeAgent(SID).tool_content_chunk("c1", "first")
    tc = tool_call(session(run(a)), "c1")
    assert (tc["kind"], tc["status"], len(tc["content"])) == ("other", "pending", 1)
    item = {"type": "content", "content": {"type": "text", "text": "new"}}
    a.tool_call("c1", content=[item], kind="read", status="in_progress", title="T")
    a.tool_content_chunk("c1", "more")
    a.tool_call("c1", locations=[{"path": "/a"}]).tool_call("c1", locations=None)
    a.tool_call("c1", title=42)
    tc = tool_call(session(run(a)), "c1")
    assert [c["content"]["text"] for c in tc["content"]] == ["new", "more"]
    assert tc["locations"] == [] and tc["title"] == "T"
    a.tool_call("c1", status=None, kind=None)
    tc = tool_call(session(run(a)), "c1")
    assert (tc["status"], tc["kind"]) == ("pending", "other")


def test_scenario_07_terminal() -> None:
    ref = {"type": "terminal", "terminalId": "t1"}
    a = FakeAgent(SID).tool_call("c1", title="Run", content=[ref])
    assert session(run(a))["terminals"] == [{"terminalId": "t1", "output": "", "truncatedBytes": 0}]
    a.update({"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": "cGFz"})
    a.update({"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": "c2Vk"})
    assert session(run(a))["terminals"][0]["output"] == b64(b"passed")
    a.terminal("t1", output=b"snap").terminal_chunk("t1", b"+1").terminal("t1", exitStatus={})
    term = session(run(a))["terminals"][0]
    assert term["output"] == b64(b"snap+1") and term["exitStatus"] == {}
    a.terminal("t1", exitStatus=None)
    assert "exitStatus" not in session(run(a))["terminals"][0]


def test_scenario_08_split_utf8() -> None:
    data = "ok 🌍".encode()
    a = FakeAgent(SID).terminal_chunk("t1", data[:5]).terminal_chunk("t1", data[5:])
    out = base64.b64decode(session(run(a))["terminals"][0]["output"])
    assert out.decode("utf-8") == "ok 🌍"


def test_scenario_09_plans() -> None:
    a = FakeAgent(SID).plan("p1", ["a", "b"]).plan("p2", ["x"]).plan("p1", ["c"])
    plans = session(run(a))["plans"]
    assert [p["planId"] for p in plans] == ["p1", "p2"]
    assert [e["content"] for e in plans[0]["plan"]["entries"]] == ["c"]
    for kind in ("_acme_board", "markdown"):
        raw = {"type": kind, "planId": "p1", "content": "# Plan"}
        b = copy.deepcopy(a).update({"sessionUpdate": "plan_update", "plan": raw})
        assert session(run(b))["plans"][0]["plan"] == raw


def test_scenario_10_cancel() -> None:
    a = FakeAgent(SID).prompt(1, "go").prompt_response(1, "u").user_message("u", "go")
    a.state("running").tool_call("c1", title="Edit", status="in_progress")
    a.permission_request(0, "Allow?", "c1").cancel().permission_answer(0, None)
    s = session(run(a))
    assert tool_call(s, "c1")["status"] == "cancelled"
    assert s["permissionRequests"][0]["status"] == "cancelled"
    assert s["permissionRequests"][0]["outcome"] == {"outcome": "cancelled"}
    a.tool_call("c1", status="completed").state("idle", "cancelled")
    s = session(run(a))
    assert tool_call(s, "c1")["status"] == "completed"
    assert s["completedTurns"] == ["cancelled"]


def test_scenario_11_resume_with_replay() -> None:
    a = FakeAgent(SID).new_session(0)
    a.prompt(1, "one").prompt_response(1, "u1").user_message("u1", "one").state("running")
    a.agent_chunk("a1", "Hel").agent_chunk("a1", "lo").state("idle", "end_turn")
    a.prompt(2, "two").prompt_response(2, "u2").user_message("u2", "two").state("running")
    a.agent_message("a2", "Bye").state("idle", "end_turn")
    a.resume(3)
    a.user_message("u1", "one")  # replayed whole
    a.agent_message("a1", []).agent_chunk("a1", "Hel").agent_chunk("a1", "lo")  # with reset
    a.agent_chunk("a2", "Bye")  # chunked replay without the reset: still no duplicate
    a.state("idle", "end_turn").resume_response(3)
    s = session(run(a))
    assert [(e["messageId"], texts(e)) for e in s["timeline"]] == [
        ("u1", ["one"]),
        ("a1", ["Hel", "lo"]),
        ("a2", ["Bye"]),
    ]
    assert [e["messageId"] for e in s["unretained"]] == ["u2"]
    assert s["prompts"][1] == {
        "requestId": 2,
        "status": "accepted",
        "messageId": "u2",
        "echoed": True,
    }
    assert s["completedTurns"] == ["end_turn", "end_turn"]


def test_scenario_12_unknown_and_malformed_updates() -> None:
    a = FakeAgent(SID)
    for kind in ("_acme_progress", "foo_update", "bar_update"):
        a.custom(kind, value=1)
    a.update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}})
    s = session(run(a))
    assert [u["sessionUpdate"] for u in s["unknownUpdates"]] == [
        "_acme_progress",
        "foo_update",
        "bar_update",  # replay_complete is known in the v2 Preview (P23, B14)
    ]
    assert s["unknownUpdates"][0] == {"sessionUpdate": "_acme_progress", "value": 1}
    assert s["timeline"] == [] and "state" not in s


def test_scenario_13_batch_in_array_order() -> None:
    batch = FakeAgent(SID).agent_chunk("m", "1").agent_chunk("m", "2").agent_chunk("m", "3")
    model = ReferenceModel()
    model.feed("incoming", [m for _, m in batch.messages])
    assert texts(session(model.snapshot())["timeline"][0]) == ["1", "2", "3"]


def test_scenario_14_commands_and_config() -> None:
    good = {"type": "command", "name": "web", "description": "Search"}
    custom = {"type": "_acme_macro", "name": "m", "description": "Macro", "steps": 3}
    bad = {"type": "command", "name": "broken"}
    untyped = {"name": "old", "description": "No type"}
    a = FakeAgent(SID).commands([good, bad, untyped, custom])
    assert session(run(a))["availableCommands"] == [good, custom]
    opt = {"configId": "mode", "name": "Mode", "type": "boolean", "currentValue": True}
    a.config_options([opt]).update({"sessionUpdate": "config_option_update", "configOptions": "x"})
    assert session(run(a))["configOptions"] == [opt]


def test_scenario_15_updates_before_session_new_result() -> None:
    x = {"type": "command", "name": "x", "description": "X"}
    y = {"type": "command", "name": "y", "description": "Y"}
    a = FakeAgent(SID).new_session(0, respond=False).state("running").commands([x])
    snap = run(a)
    assert session(snap)["announced"] is False
    a.new_session_response(0, available_commands=[y])
    s = session(run(a))
    assert s["announced"] is True
    assert s["state"] == {"state": "running"}
    assert s["availableCommands"] == [x]


def test_scenario_16_log_starts_mid_stream() -> None:
    a = FakeAgent("sess_9").agent_chunk("a1", "partial").tool_call("c1", title="T")
    a.prompt_response(41, "u-unknown")
    s = session(run(a), "sess_9")
    assert s["announced"] is False and "state" not in s
    assert [e["entry"] for e in s["timeline"]] == ["message", "toolCall"]
    assert s["prompts"] == []
    a.resume(1, replay=False)
    assert session(run(a), "sess_9")["announced"] is True


def test_scenario_17_three_id_spaces() -> None:
    a = FakeAgent(SID).agent_message("m1", "A").thought("m1", "T").user_message("m1", "U")
    a.prompt(1, "U").prompt_response(1, "m1")
    s = session(run(a))
    assert [(e["role"], texts(e)) for e in s["timeline"]] == [
        ("agent", ["A"]),
        ("thought", ["T"]),
        ("user", ["U"]),
    ]
    assert s["prompts"][0]["messageId"] == "m1" and s["prompts"][0]["echoed"] is True


def test_scenario_18_meta_patch() -> None:
    def steps(a: FakeAgent, patch: Any) -> None:
        for meta in ({"a": 1, "b": 2}, {"b": None, "c": {"x": 1}}):
            patch(a, meta)

    def via_update(a: FakeAgent, meta: Any) -> None:
        a.tool_call("c1", _meta=meta)

    def via_subject(a: FakeAgent, meta: Any) -> None:
        subject = {"type": "tool_call", "toolCall": {"toolCallId": "c1", "_meta": meta}}
        params = {
            "sessionId": SID,
            "title": "ok?",
            "subject": subject,
            "options": [{"optionId": "y", "name": "Yes", "kind": "allow_once"}],
        }
        rid = len(a.messages)
        a.send(
            "incoming",
            {"jsonrpc": "2.0", "id": rid, "method": "session/request_permission", "params": params},
        )

    for patch in (via_update, via_subject):
        a = FakeAgent(SID)
        steps(a, patch)
        assert tool_call(session(run(a)), "c1")["_meta"] == {"a": 1, "c": {"x": 1}}
        patch(a, {"c": {"y": 2}})
        patch(a, {})
        a.update(
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "c1",
                "content": {"type": "terminal", "terminalId": "t"},
                "_meta": {"z": 1},
            }
        )
        assert tool_call(session(run(a)), "c1")["_meta"] == {"a": 1, "c": {"y": 2}}
        patch(a, None)
        assert "_meta" not in tool_call(session(run(a)), "c1")


def test_scenario_19_background() -> None:
    bg = [{"type": "terminal", "terminalId": "t1"}]
    a = FakeAgent(SID).terminal("t1", command="watch")
    a.state("running", background=bg).state("idle", "end_turn", background=bg)
    s = session(run(a))
    assert s["state"]["background"] == bg and s["completedTurns"] == ["end_turn"]
    a.terminal("t1", exitStatus={"exitCode": 0}).state("idle", "end_turn", background=[])
    s = session(run(a))
    assert s["state"]["background"] == [] and s["completedTurns"] == ["end_turn"]
    a.state("idle", "end_turn")
    assert "background" not in session(run(a))["state"]
    a.state("running", background=[{"type": "terminal"}])
    assert session(run(a))["state"] == {"state": "running"}
    a.state("running", background=[{"type": "_acme_job", "n": 1}])
    assert session(run(a))["state"]["background"] == [{"type": "_acme_job", "n": 1}]


def test_scenario_22_repeated_snapshots() -> None:
    a = FakeAgent(SID).new_session(0)
    assert "state" not in session(run(a))  # none: treated as idle for a new session
    a.state("running").state("idle", "end_turn").state("idle", "end_turn").state("idle")
    assert session(run(a))["completedTurns"] == ["end_turn"]


def test_scenario_23_notices() -> None:
    a = FakeAgent(SID).state("running").notice("warning", "MCP server unavailable")
    a.notice("error", "Oops", "details").notice("_acme", "Custom").notice("info", "")
    s = session(run(a))
    assert s["notices"] == [
        {"severity": "warning", "title": "MCP server unavailable"},
        {"severity": "error", "title": "Oops", "description": "details"},
        {"severity": "_acme", "title": "Custom"},
    ]
    assert s["timeline"] == [] and s["state"] == {"state": "running"}


def test_scenario_24_compaction() -> None:
    a = FakeAgent(SID).agent_message("a1", "before").compaction("k1", "in_progress")
    a.agent_message("a2", "after").compaction_chunk("k1", "S1").compaction_chunk("k1", "S2")
    k = session(run(a))["timeline"][1]
    assert (k["entry"], k["status"], texts({"content": k["summary"]})) == (
        "compaction",
        "in_progress",
        ["S1", "S2"],
    )
    a.compaction("k1", "completed", summary=[{"type": "text", "text": "S"}], _meta={"k": 1})
    a.compaction("k1", "completed", _meta={"j": 2})
    s = session(run(a))
    assert [e.get("messageId", e.get("compactionId")) for e in s["timeline"]] == ["a1", "k1", "a2"]
    k = s["timeline"][1]
    assert k["summary"] == [{"type": "text", "text": "S"}] and k["_meta"] == {"k": 1, "j": 2}
    a.compaction("k1", "completed", summary=None)
    assert session(run(a))["timeline"][1]["summary"] == []


def test_scenario_25_compaction_chunk_first_and_missing_status() -> None:
    a = FakeAgent(SID).agent_message("a1", "x").compaction_chunk("c2", "part")
    a.update({"sessionUpdate": "compaction_update", "compactionId": "c2", "error": "no status"})
    k = session(run(a))["timeline"][1]
    assert k == {
        "entry": "compaction",
        "compactionId": "c2",
        "status": "in_progress",
        "summary": [{"type": "text", "text": "part"}],
    }


# -- other rules --------------------------------------------------------------------------


def test_cancel_spares_background_work_r15() -> None:
    a = FakeAgent(SID).state("running").tool_call("c1", status="in_progress")
    a.tool_call("c2", status="in_progress")
    a.tool_call("c3", status="in_progress", content=[{"type": "terminal", "terminalId": "t1"}])
    bg = [{"type": "tool_call", "toolCallId": "c2"}, {"type": "terminal", "terminalId": "t1"}]
    a.state("running", background=bg).cancel()
    s = session(run(a))
    assert [tool_call(s, c)["status"] for c in ("c1", "c2", "c3")] == [
        "cancelled",
        "in_progress",
        "in_progress",
    ]


def test_cancel_while_idle_marks_nothing_r46() -> None:
    a = FakeAgent(SID).state("running").tool_call("c1", status="in_progress")
    a.state("idle", "end_turn").cancel()
    assert tool_call(session(run(a)), "c1")["status"] == "in_progress"


def test_replay_drops_overlay_and_snapshots_complete_nothing() -> None:
    a = FakeAgent(SID).state("running").tool_call("c1", status="in_progress").cancel()
    a.resume(5).state("running").tool_call("c1", status="in_progress").state("idle", "end_turn")
    a.resume_response(5)
    s = session(run(a))
    assert tool_call(s, "c1")["status"] == "in_progress" and s["completedTurns"] == []


def test_withdrawn_permission_stays_withdrawn() -> None:
    a = FakeAgent(SID).permission_request(5, "Allow?").cancel_request(5).permission_answer(5, None)
    a.cancel_request(5)
    (perm,) = session(run(a))["permissionRequests"]
    assert perm["status"] == "withdrawn" and perm["outcome"] == {"outcome": "cancelled"}


def test_command_subject_creates_nothing() -> None:
    subject = {
        "type": "command",
        "command": "ls",
        "cwd": "/",
        "toolCallId": "c9",
        "terminalId": "t9",
    }
    params = {
        "sessionId": SID,
        "title": "Run?",
        "subject": subject,
        "options": [{"optionId": "y", "name": "Yes", "kind": "allow_once"}],
    }
    a = FakeAgent(SID).send(
        "incoming",
        {"jsonrpc": "2.0", "id": 1, "method": "session/request_permission", "params": params},
    )
    s = session(run(a))
    assert s["timeline"] == [] and s["terminals"] == []
    assert s["permissionRequests"][0]["toolCallId"] == "c9"


def test_refusal_excludes_from_context_r14() -> None:
    a = FakeAgent(SID).prompt(1, "a").prompt_response(1, "u1").user_message("u1", "a")
    a.state("running").agent_message("a1", "ok").state("idle", "end_turn")
    a.prompt(2, "b").user_message("u2", "b").prompt_response(2, "u2").state("running")
    a.agent_message("a2", "no").state("idle", "refusal")
    flags = [e.get("excludedFromContext", False) for e in session(run(a))["timeline"]]
    assert flags == [False, False, True, True]


def test_setup_lists_r47_r50_close_and_version() -> None:
    a = FakeAgent(SID).initialize(0).new_session(1).close(2).close_response(2)
    s = session(run(a))
    assert (s["availableCommands"], s["configOptions"]) == ([], [])
    assert s["closed"] is True and s["protocolVersion"] == 2


def test_usage_cost_kept_when_omitted_r33() -> None:
    a = FakeAgent(SID).usage(10, 100, (0.5, "USD")).usage(20, 100)
    assert session(run(a))["usage"] == {
        "used": 20,
        "size": 100,
        "cost": {"amount": 0.5, "currency": "USD"},
    }
    a.update({"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": None})
    assert session(run(a))["usage"] == {"used": 1, "size": 2}


def test_invalid_base64_chunk_dropped_r25() -> None:
    a = FakeAgent(SID).terminal_chunk("t1", b"ok")
    a.update({"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": "!!"})
    a.terminal("t1", output={"data": "%%%"})
    assert session(run(a))["terminals"][0]["output"] == b64(b"ok")


def test_location_line_zero_dropped() -> None:
    a = FakeAgent(SID).tool_call("c1", locations=[{"path": "/a", "line": 0}, 5])
    assert tool_call(session(run(a)), "c1")["locations"] == [{"path": "/a"}]


def test_unknown_entity_fields_patched_r35() -> None:
    a = FakeAgent(SID).tool_call("c1", futureField=1).agent_message("m", "x")
    a.update({"sessionUpdate": "agent_message", "messageId": "m", "future": [1]})
    s = session(run(a))
    assert tool_call(s, "c1")["futureField"] == 1 and s["timeline"][1]["future"] == [1]
    a.tool_call("c1", futureField=None)
    assert "futureField" not in tool_call(session(run(a)), "c1")


def test_snapshot_is_a_fresh_copy() -> None:
    model = ReferenceModel()
    model.feed_all(FakeAgent(SID).agent_message("m", "x").messages)
    model.snapshot()["sessions"][0]["timeline"].clear()
    assert len(model.snapshot()["sessions"][0]["timeline"]) == 1


# -- properties of the model --------------------------------------------------------------


def _content_after(updates_: list[dict[str, Any]], role: str = "agent") -> list[Any]:
    a = FakeAgent(SID)
    for u in updates_:
        a.update(u)
    (entry,) = session(run(a))["timeline"]
    assert entry["role"] == role
    return list(entry["content"])


@PROPS
@given(
    st.lists(content_blocks(), max_size=5).flatmap(
        lambda blocks: st.tuples(st.just(blocks), chunked_message_updates("agent", "m1", blocks))
    )
)
def test_rechunking_keeps_content(case: tuple[list[Any], list[dict[str, Any]]]) -> None:
    blocks, sequence = case
    whole = [{"sessionUpdate": "agent_message", "messageId": "m1", "content": blocks}]
    assert _content_after(sequence) == _content_after(whole)


@PROPS
@given(st.text().flatmap(lambda t: st.tuples(st.just(t), rechunkings(t))))
def test_text_rechunking_keeps_text(case: tuple[str, list[str]]) -> None:
    text, pieces = case
    a = FakeAgent(SID)
    for piece in pieces:
        a.agent_chunk("m1", piece)
    assert "".join(texts(session(run(a))["timeline"][0])) == text


def _echo_case() -> tuple[list[Any], Any]:
    a = FakeAgent(SID).prompt(7, "hello").prompt_response(7, "u1")
    a.user_chunk("u1", "hel").user_chunk("u1", "lo")
    others = FakeAgent(SID).state("running").agent_chunk("a1", "hi").messages
    req, resp, *echo = a.messages
    return [req, resp, echo, others], prompt_echo_interleavings(req, resp, echo, others)


@PROPS
@given(_echo_case()[1])
def test_echo_order_does_not_change_snapshot(exchange: list[Any]) -> None:
    (req, resp, echo, others), _ = _echo_case()
    reference = ReferenceModel()
    reference.feed_all([req, resp, *echo, *others])
    model = ReferenceModel()
    model.feed_all(exchange)
    expected = reference.snapshot()
    snap = model.snapshot()
    # Placement follows first sight, so only the relative order of entities may differ.
    for s in (expected["sessions"][0], snap["sessions"][0]):
        s["timeline"].sort(key=lambda e: (e["role"], e["messageId"]))
    assert snap == expected


@PROPS
@given(st.lists(updates(), max_size=6), damaged_update_pairs())
def test_damaged_and_clean_updates_reconcile_alike(
    prefix: list[dict[str, Any]], pair: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    damaged, clean = pair
    snaps = []
    for last in (damaged, clean):
        a = FakeAgent(SID)
        for u in [*prefix, last]:
            a.update(u)
        snaps.append(run(a))
    assert snaps[0] == snaps[1]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations())
def test_generated_conversations_reconcile(exchange: list[Any]) -> None:
    model = ReferenceModel()
    model.feed_all(exchange)
    (s,) = model.snapshot()["sessions"]
    assert s["announced"] is True
    for prompt in s["prompts"]:
        assert prompt["status"] in ("accepted", "rejected")
        assert prompt["echoed"] is (prompt["status"] == "accepted")
    assert all(p["status"] != "pending" for p in s["permissionRequests"])
    assert s.get("state", {"state": "idle"})["state"] == "idle"  # absent: no work ran


def test_cancel_under_custom_state_ignores_its_background_r64() -> None:
    a = FakeAgent(SID).tool_call("c1", status="in_progress")
    a.update({"sessionUpdate": "state_update", "state": "_acme_thinking", "background": [5]})
    a.cancel()
    s = session(run(a))
    assert tool_call(s, "c1")["status"] == "cancelled"
    assert s["state"] == {"state": "_acme_thinking", "background": [5]}
    a.state("idle", "end_turn")
    assert session(run(a))["completedTurns"] == ["end_turn"]


def test_unknown_direction_is_ignored() -> None:
    model = ReferenceModel()
    model.feed("unknown", FakeAgent(SID).agent_chunk("m", "x").messages[0][1])
    assert model.snapshot()["sessions"] == []


_junk = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=4)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["id", "method", "params", "result", "error", "sessionId", "update"]),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=10,
)


_METHODS = [
    "session/prompt",
    "session/request_permission",
    "session/new",
    "session/resume",
    "session/close",
    "session/cancel",
    "$/cancel_request",
    "initialize",
    "session/set_config_option",
    "session/update",
]
_known_method_junk = st.builds(
    lambda rid, method, params, with_id: {
        "jsonrpc": "2.0",
        "method": method,
        "params": params,
        **({"id": rid} if with_id else {}),
    },
    st.integers(0, 3),
    st.sampled_from(_METHODS),
    st.dictionaries(
        st.sampled_from(
            [
                "sessionId",
                "title",
                "options",
                "subject",
                "requestId",
                "replayFrom",
                "update",
                "protocolVersion",
            ]
        ),
        st.one_of(st.just(SID), _junk),
        max_size=5,
    ),
    st.booleans(),
) | st.builds(
    lambda rid, body: {"jsonrpc": "2.0", "id": rid, **body},
    st.integers(0, 3),
    st.one_of(
        st.dictionaries(st.just("result"), _junk, min_size=1),
        st.dictionaries(st.just("error"), _junk, min_size=1),
    ),
)


@PROPS
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["incoming", "outgoing"]),
            st.one_of(
                updates(damaged=True).map(
                    lambda u: {
                        "jsonrpc": "2.0",
                        "method": "session/update",
                        "params": {"sessionId": SID, "update": u},
                    }
                ),
                _junk,
                _known_method_junk,
            ),
        ),
        max_size=12,
    )
)
def test_model_never_raises_on_bad_input(exchange: list[tuple[str, Any]]) -> None:
    model = ReferenceModel()
    model.feed_all(exchange)
    model.snapshot()


def _both(agent: FakeAgent) -> tuple[dict[str, Any], dict[str, Any]]:
    """The model's and the passive Connection's session snapshots of one exchange."""
    conn = Connection(live=False)
    for direction, message in agent.messages:
        conn.receive_message(copy.deepcopy(message), direction)
    return session(run(agent)), session(conn.snapshot())


def test_a27_resume_snapshot_is_no_completion_in_model_and_reducer() -> None:
    a = FakeAgent(SID).new_session(0).state("running")
    a.resume(1, replay=False).state("idle", "end_turn").resume_response(1)
    for s in _both(a):
        assert s["completedTurns"] == []
        assert s["state"] == {"state": "idle", "stopReason": "end_turn"}


def test_r15_replayed_running_starts_no_work_in_model_and_reducer() -> None:
    a = FakeAgent(SID).new_session(0).resume(1)
    a.tool_call("c1", status="in_progress").state("running").resume_response(1).cancel()
    for s in _both(a):
        assert tool_call(s, "c1")["status"] == "cancelled"


def test_a_resume_lost_with_its_connection_stops_no_completion_in_model_and_reducer() -> None:
    a = FakeAgent(SID).initialize(0).resume(1, replay=False)  # the connection ends here
    a.initialize(0).resume(2, replay=False).state("idle").resume_response(2)
    a.state("running").state("idle", "end_turn")
    for s in _both(a):
        assert s["completedTurns"] == ["end_turn"]


def test_r14_a_resume_snapshot_ends_the_earlier_turn_in_model_and_reducer() -> None:
    a = FakeAgent(SID).user_message("u1", "one").state("running").agent_message("a1", "A")
    a.resume(7, replay=False).state("idle", "end_turn").resume_response(7)
    a.user_message("u2", "two").state("running").agent_message("a2", "B")
    a.state("idle", "refusal")
    for s in _both(a):
        excluded = [e["messageId"] for e in s["timeline"] if e.get("excludedFromContext")]
        assert excluded == ["u2", "a2"]


def test_the_model_agrees_on_shadowed_fields_and_the_uint64_bound() -> None:
    a = FakeAgent(SID)
    a.update(
        {
            "sessionUpdate": "agent_message",
            "messageId": "m",
            "content": [{"type": "resource_link", "name": "n", "uri": "u", "size": 2**64}],
            "excludedFromContext": True,
        }
    )
    a.usage(2**64 - 1, 2**64 - 1).usage(2**64, 1).usage(1, 2**64)
    conn = Connection(live=False)
    conn.receive_data(a.to_bytes())
    expected = conn.snapshot()["sessions"]
    assert run(a)["sessions"] == expected
    (entry,) = expected[0]["timeline"]
    assert "excludedFromContext" not in entry and "size" not in entry["content"][0]
    assert expected[0]["usage"] == {"used": 2**64 - 1, "size": 2**64 - 1}


def test_model_a_reused_pending_permission_id_withdraws_the_old_request_as_the_library() -> None:
    agent = FakeAgent(SID)
    agent.permission_request(7, "first").permission_request(7, "second")
    agent.permission_answer(7, "allow-once")
    perms = session(run(agent))["permissionRequests"]
    assert [(p["title"], p["status"]) for p in perms] == [
        ("first", "withdrawn"),
        ("second", "answered"),
    ]
    library = replay_log(agent.log_text("acp-client").encode()).snapshot()
    assert session(library)["permissionRequests"] == perms


def test_model_keeps_an_unknown_permission_subject_and_unknown_fields_as_the_library() -> None:
    # SNAPSHOT.md: what is not understood stays, at its place; 11.1: an unknown subject raw.
    agent = FakeAgent(SID)
    params = {
        "sessionId": SID,
        "title": "T",
        "options": [{"optionId": "a", "name": "A", "kind": "allow_once"}],
        "subject": {"type": "_acme_subject", "n": 1},
        "_acme_extra": {"x": [1]},
        "status": "not the status",  # an unknown field named like the object's own key
    }
    agent.send("incoming", {"id": 5, "method": "session/request_permission", "params": params})
    (perm,) = session(run(agent))["permissionRequests"]
    assert perm["subject"] == {"type": "_acme_subject", "n": 1}
    assert perm["_acme_extra"] == {"x": [1]} and perm["status"] == "pending"
    library = replay_log(agent.log_text("acp-client").encode()).snapshot()
    assert session(library)["permissionRequests"] == [perm]


def test_a_replay_its_connection_left_unanswered_ends_with_it_in_model_and_library() -> None:
    # A log's new connection drops the pending resume (LOG-FORMATS 1.10): its replay ended
    # unconfirmed, and later live work counts again (it stayed "replaying" for ever).
    agent = FakeAgent(SID).initialize().new_session(1).prompt(2, "one")
    agent.prompt_response(2, "u1").user_message("u1", "one").state("running").agent_chunk("a1", "x")
    agent.state("idle", stop_reason="end_turn")
    agent.resume(3).user_message("u1", "one")  # replayed in part; the agent dies
    agent.initialize(10).resume(11, replay=False).state("idle", stop_reason="end_turn")
    agent.resume_response(11).prompt(12, "two").prompt_response(12, "u2")
    agent.user_message("u2", "two").state("running").state("idle", stop_reason="end_turn")
    model = session(run(agent))
    library = session(replay_log(agent.log_text("acp-client").encode()).snapshot())
    assert model == library
    assert library["completedTurns"] == ["end_turn", "end_turn"]
    assert [e["messageId"] for e in library["timeline"]] == ["u1", "u2"]
    assert [e["messageId"] for e in library["unretained"]] == ["a1"]


def test_model_a_session_a_resume_found_gone_is_not_closed_in_the_snapshot() -> None:
    # SNAPSHOT.md: `closed` once a session/close succeeded; a -32002 to a resume (or a v1
    # load) is none, though the session is gone (12.3 step 5).
    agent = FakeAgent(SID).resume(1).error(1, -32002, "Resource not found")
    model = session(run(agent))
    library = session(replay_log(agent.log_text("acp-client").encode()).snapshot())
    assert "closed" not in model and model == library


def test_a_cost_beyond_a_double_is_out_of_range_and_the_last_cost_stays() -> None:
    # 13.5: `cost` is default-on-error; 1e400 (read as infinity) is no amount (R33 keeps
    # the last cost), in the library and the model.
    def usage(amount: str) -> bytes:
        cost = '{"amount":' + amount + ',"currency":"USD"}'
        update = '{"sessionUpdate":"usage_update","used":1,"size":9,"cost":' + cost + "}"
        line = '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"'
        return (line + SID + '","update":' + update + "}}\n").encode()

    data = usage("0.5") + usage("1e400")
    library = replay_log(data).snapshot()
    model = ReferenceModel()
    model.feed_all([("incoming", json.loads(x)) for x in data.splitlines()])
    assert session(library)["usage"]["cost"] == {"amount": 0.5, "currency": "USD"}
    assert session(model.snapshot())["usage"] == session(library)["usage"]
    # the number is said as read (number-beyond-double, as live), then the cost dropped
    codes = [d["code"] for d in library["diagnostics"]]
    assert codes == ["number-beyond-double", "lenient-default"]
