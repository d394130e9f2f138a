"""ReferenceModel on the ACP v2 Preview scenarios it follows (docs/preview.md).

Scenarios B6 (session messages), B7 (replay with marker) and B24 (plan_removed) of
ACP-V2-PREVIEW.md, read by the model and, for the same messages, by the library: both must
give the expected fragments and the same snapshot (diagnostics aside, which the model does
not keep).
"""

from __future__ import annotations

import copy
from typing import Any

from acp_client import Connection
from acp_client.testing import FakeAgent, ReferenceModel

SID = "sess_c"


def _both(agent: FakeAgent) -> dict[str, Any]:
    model = ReferenceModel()
    model.feed_all(copy.deepcopy(agent.messages))
    conn = Connection(live=False)
    for direction, message in copy.deepcopy(agent.messages):
        conn.receive_message(message, "incoming" if direction == "incoming" else "outgoing")
    ours = conn.snapshot()
    ours["diagnostics"] = []
    reference = model.snapshot()
    assert ours == reference
    return reference


def _text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def _chunk(message_id: str, text: str) -> dict[str, Any]:
    content = _text(text)
    return {"sessionUpdate": "session_message_chunk", "messageId": message_id, "content": content}


def test_b6_session_messages_in_the_model() -> None:
    a = FakeAgent(SID)
    a.update(
        {"sessionUpdate": "session_message_chunk", "messageId": "sm1", "content": _text("do X")}
    )
    a.update(
        {
            "sessionUpdate": "session_message",
            "messageId": "sm1",
            "senderSessionId": "sess_p",
            "recipientSessionId": SID,
            "senderMessageId": "pm9",
        }
    )
    a.update(
        {"sessionUpdate": "session_message_chunk", "messageId": "sm1", "content": _text(" now")}
    )
    a.agent_message("sm1", "T")  # P12: another id space, another entity
    a.update({"sessionUpdate": "session_message", "messageId": "sm2", "senderSessionId": "ghost"})
    snap = _both(a)
    (session,) = snap["sessions"]  # no session "ghost" is created
    first, second, third = session["timeline"]
    assert first == {
        "entry": "sessionMessage",
        "messageId": "sm1",
        "senderSessionId": "sess_p",
        "recipientSessionId": SID,
        "senderMessageId": "pm9",
        "content": [_text("do X"), _text(" now")],
    }
    assert (second["entry"], second["role"], second["messageId"]) == ("message", "agent", "sm1")
    assert third["senderSessionId"] == "ghost" and third["content"] == []


def test_b7_replay_ends_at_the_marker_in_the_model() -> None:
    a = FakeAgent(SID).initialize(0).new_session(1)
    a.user_message("u1", "hi").agent_message("a1", "hello").agent_message("a2", "live only")
    a.state("idle", stop_reason="end_turn")
    a.resume(9)
    a.user_message("u1", "hi").agent_chunk("a1", "hello")
    a.update({"sessionUpdate": "replay_complete"})
    a.state("idle", stop_reason="end_turn")
    a.resume_response(9)
    session = _both(a)["sessions"][0]
    assert [e["messageId"] for e in session["timeline"]] == ["u1", "a1"]
    assert session["timeline"][1]["content"] == [_text("hello")]  # not duplicated
    assert [e["messageId"] for e in session["unretained"]] == ["a2"]  # moved at the marker
    assert session["replay"] == {
        "phase": "live",
        "complete": True,
        "truncated": False,
        "requestId": 9,
    }


def test_b24_plan_removed_in_the_model() -> None:
    def plan(pid: str) -> dict[str, Any]:
        items = {"type": "items", "planId": pid, "entries": []}
        return {"sessionUpdate": "plan_update", "plan": items}

    a = FakeAgent(SID).update(plan("p1")).update(plan("p2"))
    a.update({"sessionUpdate": "plan_removed", "planId": "p1"})
    assert [p["planId"] for p in _both(a)["sessions"][0]["plans"]] == ["p2"]
    a.update({"sessionUpdate": "plan_removed", "planId": "p9"})  # unknown id: no change
    a.update(plan("p1"))
    assert [p["planId"] for p in _both(a)["sessions"][0]["plans"]] == ["p2", "p1"]
