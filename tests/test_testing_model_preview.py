"""ReferenceModel on the ACP v2 Preview scenarios it follows (docs/preview.md).

Scenarios B6 (session messages), B7 (replay with marker), B24 (plan_removed) and, with
their opt-ins, B16/B17 (suggestions), B23 (cursors) and B25 (the ``unknown`` state) of
ACP-V2-PREVIEW.md, read by the model and, for the same messages, by the library: both must
give the expected fragments and the same snapshot (diagnostics aside, which the model does
not keep); then a property over any order of the opt-in updates.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# -- the opt-in unstable features (P32-P44) ------------------------------------------------

ALL = frozenset({"prompt_suggestions", "cursors", "unknown_state"})


def _both_with(agent: FakeAgent, unstable: frozenset[str]) -> dict[str, Any]:
    model = ReferenceModel(unstable=unstable)
    model.feed_all(copy.deepcopy(agent.messages))
    conn = Connection(live=False, unstable=unstable)
    for direction, message in copy.deepcopy(agent.messages):
        conn.receive_message(message, direction)
    ours = conn.snapshot()
    ours["diagnostics"] = []
    reference = model.snapshot()
    assert ours == reference
    return reference


def _suggest(*texts: str) -> dict[str, Any]:
    items = [{"prompt": [_text(t)]} for t in texts]
    return {"sessionUpdate": "prompt_suggestions_update", "suggestions": items}


def test_b16_b17_suggestions_in_the_model() -> None:
    a = FakeAgent(SID).initialize(0).new_session(1)
    a.update(_suggest("X")).prompt(2, "go")
    session = _both_with(a, ALL)["sessions"][0]
    assert session["promptSuggestions"] == [{"prompt": [_text("X")]}]  # a prompt keeps it
    a.update(_suggest("Y", "Z")).update(_suggest())
    assert _both_with(a, ALL)["sessions"][0]["promptSuggestions"] == []  # withdrawn
    a.update(_suggest("W")).resume(3)
    assert "promptSuggestions" not in _both_with(a, ALL)["sessions"][0]  # P38: cleared
    a.update(_suggest("stale"))  # P37: during the replay, not applied
    assert "promptSuggestions" not in _both_with(a, ALL)["sessions"][0]
    a.replay_complete().update(_suggest("Y")).resume_response(3)
    assert _both_with(a, ALL)["sessions"][0]["promptSuggestions"] == [{"prompt": [_text("Y")]}]
    without = _both_with(a, frozenset())["sessions"][0]  # no opt-in: unknown variants
    assert "promptSuggestions" not in without
    assert [u["sessionUpdate"] for u in without["unknownUpdates"]] == [
        "prompt_suggestions_update"
    ] * 6


def test_b23_cursors_in_the_model() -> None:
    def cursor(cursor_id: str, **fields: Any) -> dict[str, Any]:
        return {"sessionUpdate": "cursor_update", "cursorId": cursor_id, **fields}

    anchor = {"type": "user_message", "messageId": "u1", "position": "after"}
    a = FakeAgent(SID).new_session(1).user_message("u1", "hi")
    a.update(cursor("c1", anchor=anchor, capabilities={"move": {}}, _meta={"k": 1, "j": 2}))
    a.update(cursor("c1", anchor={"type": "tool_call", "toolCallId": "t1"}))  # ignored
    a.update(cursor("c1", capabilities=None, _meta={"k": None}))
    a.update(cursor("c2")).update(cursor("c2", anchor={"type": "_custom", "x": 1}))
    session = _both_with(a, ALL)["sessions"][0]
    assert session["cursors"] == [
        {"cursorId": "c1", "anchor": anchor, "_meta": {"j": 2}},
        {"cursorId": "c2", "anchor": {"type": "_custom", "x": 1}},
    ]
    assert [e["messageId"] for e in session["timeline"]] == ["u1"]  # not timeline entries
    a.resume(2).update(cursor("c2")).replay_complete().resume_response(2)
    assert _both_with(a, ALL)["sessions"][0]["cursors"] == [
        {"cursorId": "c2", "anchor": {"type": "_custom", "x": 1}}  # P44: c1 dropped
    ]


def test_b25_unknown_state_in_the_model() -> None:
    a = FakeAgent(SID).new_session(1).state("running").state("unknown")
    session = _both_with(a, ALL)["sessions"][0]
    assert session["state"] == {"state": "unknown"}
    assert session["lastKnownState"] == {"state": "running"}
    a.state("unknown").state("idle", stop_reason="end_turn")
    session = _both_with(a, ALL)["sessions"][0]
    assert session["completedTurns"] == ["end_turn"] and "lastKnownState" not in session
    a.state("unknown").state("idle", stop_reason="end_turn")  # idle -> unknown -> idle
    assert _both_with(a, ALL)["sessions"][0]["completedTurns"] == ["end_turn"]
    without = _both_with(a, frozenset())["sessions"][0]  # an unrecognized state (R64)
    # without it, `unknown` is a custom state: each following idle completes work
    assert "lastKnownState" not in without and without["completedTurns"] == ["end_turn"] * 2


def test_the_model_refuses_unknown_features() -> None:
    with pytest.raises(ValueError, match="cursers"):
        ReferenceModel(unstable={"cursers"})


_ANCHORS = st.sampled_from(
    [
        None,
        {"type": "user_message", "messageId": "u1", "position": "before"},
        {"type": "agent_message", "messageId": "a9"},
        {"type": "tool_call", "toolCallId": "t1"},
        {"type": "_custom", "x": 1},
    ]
)
_OP = st.one_of(
    st.sampled_from(["u1", "a1", "running", "idle", "unknown", "resume", "marker", "answer"]),
    st.tuples(st.just("suggest"), st.lists(st.sampled_from(["A", "B", ""]), max_size=3)),
    st.tuples(
        st.just("cursor"),
        st.sampled_from(["c1", "c2"]),
        _ANCHORS,
        st.sampled_from([0, None, {"x": 1}]),
        st.sampled_from([0, {"k": 1}, {"k": None}]),
    ),
)


def _script(ops: list[Any]) -> FakeAgent:
    """One session/new session, then the ops; a resume is answered by "answer" (or never)."""
    a = FakeAgent(SID).initialize(0).new_session(1)
    rid, resuming = 1, None
    for op in ops:
        if op in ("u1", "a1"):
            (a.user_message if op == "u1" else a.agent_message)(op, "t")
        elif op == "idle":
            a.state("idle", stop_reason="end_turn")
        elif op in ("running", "unknown"):
            a.state(op)
        elif op == "resume" and resuming is None:
            rid += 1
            resuming = rid
            a.resume(rid)
        elif op == "marker":
            a.replay_complete()
        elif op == "answer" and resuming is not None:
            a.resume_response(resuming)
            resuming = None
        elif isinstance(op, tuple) and op[0] == "suggest":
            # "" makes a malformed item (an empty prompt), dropped
            items = [{"prompt": [_text(t)] if t else []} for t in op[1]]
            a.update({"sessionUpdate": "prompt_suggestions_update", "suggestions": items})
        elif isinstance(op, tuple):
            u: dict[str, Any] = {"sessionUpdate": "cursor_update", "cursorId": op[1]}
            for key, value in (("anchor", op[2]), ("capabilities", op[3]), ("_meta", op[4])):
                if value != 0 and not (key == "anchor" and value is None):
                    u[key] = value
            a.update(u)
    return a


@settings(max_examples=150, deadline=None)
@given(st.lists(_OP, max_size=14), st.sampled_from([ALL, frozenset()]))
def test_property_opt_ins_match_the_library(ops: list[Any], unstable: frozenset[str]) -> None:
    """Suggestions, cursors and the ``unknown`` state, with and without their opt-in, in
    any order with messages, states and a resume's replay (marked or not, answered or
    not): the reference model and the library agree (P32-P44)."""
    _both_with(_script(ops), unstable)
