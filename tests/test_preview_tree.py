"""The session tree of the v2 Preview (docs/preview.md P1-P11, P31; scenarios B1-B5).

A child is announced by ``subagent_update`` on its parent and has its own session: its
own timeline, state machine and completed turns. Traffic before the announcement is
applied at once and attached later; ownership is fixed; cycles are refused; the client
sends no session mutation for a child (P10).
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import (
    Live,
    Log,
    chunk,
    idle,
    msg,
    permission,
    request,
    response,
    state,
    text,
    update,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_client import Connection, LocalProtocolError, load_session
from acp_client.events import SessionCreated, TreeUpdateApplied
from acp_client.testing import ReferenceModel
from acp_client.testing.strategies import child_sessions

P, C, Q = "sess_p", "sess_c", "sess_q"


def sub(cid: str, **fields: Any) -> dict[str, Any]:
    """A ``subagent_update`` naming the child ``cid``."""
    return {"sessionUpdate": "subagent_update", "sessionId": cid, **fields}


def new_session(log: Log, rid: int, sid: str) -> None:
    log.client(request(rid, "session/new", {"cwd": "/tmp", "mcpServers": []}))
    log.agent(response(rid, {"sessionId": sid}))


def test_b1_child_registration() -> None:
    """P1: the announcement creates the child, unannounced, under its parent."""
    log = Log()
    new_session(log, 1, P)
    events = log.upd(sub(C, title="Explorer"), sid=P)
    assert any(isinstance(e, SessionCreated) and e.session_id == C for e in events)
    assert any(isinstance(e, TreeUpdateApplied) for e in events)
    log.upd(chunk("agent", "a1", text("hi")), state("running"), sid=C)
    log.upd(sub(C, state={"state": "running"}), sid=P)
    log.upd(idle("end_turn"), sid=C)
    snap = log.snap()
    assert [s["sessionId"] for s in snap["sessions"]] == [P, C]
    parent, child = log.session(P), log.session(C)
    assert parent["children"] == [C] and "parentSessionId" not in parent
    assert child["parentSessionId"] == P and child["announced"] is False
    assert child["subagent"] == {"title": "Explorer", "state": {"state": "running"}}
    assert [e["messageId"] for e in child["timeline"]] == ["a1"]
    assert child["completedTurns"] == ["end_turn"]
    assert parent["completedTurns"] == [] and parent["timeline"] == []
    assert "children" not in child and "subagent" not in parent


def test_b2_child_traffic_before_announcement() -> None:
    """P2 / R67: no buffering; the early traffic is applied and the child attached later."""
    log = Log()
    new_session(log, 1, P)
    log.upd(chunk("agent", "a1", text("hi")), sid=C)
    log.upd(sub(C), sid=P)
    child = log.session(C)
    assert child["parentSessionId"] == P
    assert [e["messageId"] for e in child["timeline"]] == ["a1"]
    assert log.session(P)["children"] == [C]
    assert "subagent-announced-after-traffic" in log.codes()


def test_b3_association_patches() -> None:
    """P5: PATCH per field, META-PATCH for ``_meta``."""
    log = Log()
    new_session(log, 1, P)
    log.upd(sub(C, title="A", description="d", _meta={"a": 1, "b": 2}), sid=P)
    log.upd(sub(C, title=None, _meta={"b": None}), sid=P)
    log.upd(sub(C), sid=P)
    assert log.session(C)["subagent"] == {"description": "d", "_meta": {"a": 1}}


def test_b3_cancel_and_prompt_restrictions_for_a_child() -> None:
    live = Live()
    live.new_session(P)
    live.upd(sub(C, capabilities={"cancel": {}}), sid=P)
    live.cancel(C)  # allowed: the association has a cancel capability
    assert live.sent[-1]["method"] == "session/cancel"
    live.upd(sub(C, capabilities=None), sid=P)
    with pytest.raises(LocalProtocolError, match="P10"):
        live.conn.send_cancel(C)
    with pytest.raises(LocalProtocolError, match="P10"):
        live.conn.send_request("session/prompt", {"sessionId": C, "prompt": [text("x")]})
    live.upd(sub(C, capabilities={"cancel": {}}), sid=P)
    with pytest.raises(LocalProtocolError, match="P10"):  # a prompt: always refused
        live.conn.send_request("session/prompt", {"sessionId": C, "prompt": [text("x")]})
    for method in ("session/close", "session/set_config_option", "session/resume"):
        with pytest.raises(LocalProtocolError, match="P10"):
            live.conn.send_request(method, {"sessionId": C, "cwd": "/tmp", "mcpServers": []})


def test_b4_state_null_clears_the_mirror_only() -> None:
    """P31 / R81: the mirror is the association's; the child's own state is its own."""
    log = Log()
    new_session(log, 1, P)
    log.upd(sub(C, state={"state": "running"}), sid=P)
    log.upd(sub(C, state=None), sid=P)
    child, parent = log.session(C), log.session(P)
    assert "state" not in child["subagent"]
    assert "state" not in child  # the child's own state was never reported (P31)
    assert child["completedTurns"] == [] and parent["completedTurns"] == []


def test_b5_reparent_and_cycles() -> None:
    """P3 / R68 (fixed ownership) and P4 / R69 (cycles, the client's own sessions)."""
    log = Log()
    new_session(log, 1, P)
    new_session(log, 2, Q)
    new_session(log, 3, "sess_x")
    log.upd(sub(C, title="from P"), sid=P)
    log.upd(sub(C, title="from Q"), sid=Q)
    assert "subagent-reparent-ignored" in log.codes()
    assert log.session(C)["subagent"] == {"title": "from P"}
    log.upd(sub(P), sid=C)
    log.upd(sub(C), sid=C)
    assert log.codes().count("subagent-cycle") == 2
    log.upd(sub("sess_x"), sid=P)
    assert "subagent-claims-client-session" in log.codes()
    assert log.session(P)["children"] == [C]
    assert "parentSessionId" not in log.session(P)
    assert "parentSessionId" not in log.session("sess_x")
    assert "children" not in log.session(Q) and "children" not in log.session(C)


def test_p4_a_deeper_cycle_is_refused() -> None:
    log = Log()
    new_session(log, 1, P)
    log.upd(sub(C), sid=P)
    log.upd(sub("sess_g"), sid=C)
    log.upd(sub(P), sid="sess_g")  # P is an ancestor of sess_g
    assert log.codes() == ["subagent-cycle"]
    assert log.session("sess_g")["parentSessionId"] == C


def test_p4_a_resumed_root_is_attached() -> None:
    log = Log()
    log.client(request(1, "session/resume", {"sessionId": C, "cwd": "/tmp", "mcpServers": []}))
    log.agent(update(state("idle"), C), response(1, {}))
    log.upd(sub(C), sid=P)
    assert log.session(C)["parentSessionId"] == P
    assert "subagent-announced-after-traffic" in log.codes()


def test_p6_effective_directories_are_inherited() -> None:
    from acp_client._tree import effective

    log = Log()
    new_session(log, 1, P)
    log.upd(sub(C, cwd="/work", additionalDirectories=["/a"]), sid=P)
    log.upd(sub("sess_g", additionalDirectories=["/b"]), sid=C)
    sessions = dict(log.conn.sessions)
    assert effective(sessions, "sess_g", "cwd") == "/work"
    assert effective(sessions, "sess_g", "additionalDirectories") == ["/b"]
    assert effective(sessions, P, "cwd") is None


def test_p8_p11_child_traffic_is_the_child_s_and_cancel_does_not_cascade() -> None:
    """P8, P11 / R71: the child's permission request is answered only by its own cancel."""
    live = Live()
    live.new_session(P)
    live.upd(sub(C, capabilities={"cancel": {}}), sid=P)
    live.upd(state("running"), sid=P)
    live.upd(state("running"), sid=C)
    live.agent(permission(7, C))
    live.cancel(P)
    assert live.answers(7) == []  # the parent's cancel does not answer the child's request
    assert live.conn.session(C).cancel_requested is False
    live.cancel(C)
    assert live.answers(7)[0]["result"]["outcome"] == {"outcome": "cancelled"}


def test_p7_idle_child_keeps_its_parent() -> None:
    """P7 / R70: idle children and a closed parent keep the association."""
    log = Log()
    new_session(log, 1, P)
    log.upd(sub(C), sid=P)
    log.upd(state("running"), idle(), sid=C)
    log.client(request(2, "session/close", {"sessionId": P}))
    log.agent(response(2, {}))
    assert log.session(C)["parentSessionId"] == P and log.session(P)["children"] == [C]


def test_section_4_tree_keys_round_trip_through_load_session() -> None:
    log = Log()
    new_session(log, 1, P)
    log.upd(sub(C, title="T", capabilities={"cancel": {}}), sid=P)
    for sid in (P, C):
        data = log.session(sid)
        assert load_session(data).snapshot() == data
    with pytest.raises(ValueError, match="parentSessionId"):
        load_session({**log.session(C), "parentSessionId": 3})


def test_x0_no_tree_keys_without_tree_updates() -> None:
    log = Log()
    new_session(log, 1, P)
    log.upd(msg("agent", "a1", content=[text("x")]), sid=P)
    keys = set(log.session(P))
    assert not keys & {"parentSessionId", "subagent", "children", "replay"}


def test_a_session_on_its_own_keeps_tree_updates_verbatim() -> None:
    from helpers import apply

    from acp_client import Session

    session = Session(P)
    apply(session, sub(C))
    assert session.unknown_updates[0]["sessionUpdate"] == "subagent_update"


# ------------------------------------------------------------------ property

_CHILD_TRAFFIC = [
    chunk("agent", "c1", text("a")),
    state("running"),
    chunk("agent", "c1", text("b")),
    msg("agent", "c2", content=[text("z")]),
    idle("end_turn"),
]


_TREE_KEYS = ("parentSessionId", "subagent", "children")


def own_state(conn: Connection, sid: str) -> dict[str, Any]:
    """A session's snapshot without its place in the tree (which its parent decides)."""
    snap = conn.session(sid).snapshot()
    for key in _TREE_KEYS:
        snap.pop(key, None)
    return snap


def check_own_states_independent(
    streams: dict[str, list[dict[str, Any]]], order: list[str], root: str
) -> Connection:
    """Feed each session's stream in ``order`` (one label per message, per-stream order
    kept) after ``root``'s ``session/new``; every other session's own state must be what
    its own stream alone gives (P2, P8). Returns the interleaved connection."""
    positions = dict.fromkeys(streams, 0)
    conn = Connection(live=False)
    conn.receive_message(request(1, "session/new", {"cwd": "/", "mcpServers": []}), "outgoing")
    conn.receive_message(response(1, {"sessionId": root}), "incoming")
    for key in order:
        conn.receive_message(streams[key][positions[key]], "incoming")
        positions[key] += 1
    for sid, stream in streams.items():
        if sid == root:
            continue
        alone = Connection(live=False)
        for m in stream:
            alone.receive_message(m, "incoming")
        assert own_state(conn, sid) == own_state(alone, sid), sid
    return conn


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_property_child_state_is_independent_of_interleaving(data: st.DataObject) -> None:
    """A child's state is the same whatever the interleaving of its traffic with the
    parent's and another child's (P2, P8)."""
    streams = {
        P: [
            update(sub(C, title="one"), P),
            update(chunk("agent", "p1", text("x")), P),
            update(sub("sess_d"), P),
        ],
        C: [update(u, C) for u in _CHILD_TRAFFIC],
        "sess_d": [update(u, "sess_d") for u in _CHILD_TRAFFIC[:3]],
    }
    order = data.draw(st.permutations([k for k, v in streams.items() for _ in v]))
    conn = check_own_states_independent(streams, order, P)
    assert conn.session(C).snapshot()["subagent"] == {"title": "one"}
    assert conn.session("sess_d").tree.parent_id == P
    assert conn.session(P).tree.children == [C, "sess_d"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(child_sessions(P), st.data())
def test_property_generated_children_are_independent_of_interleaving(
    exchange: list[tuple[str, dict[str, Any]]], data: st.DataObject
) -> None:
    """The same with the testing kit's generated trees (nested children, patches, refused
    announcements, traffic before announcements): any other interleaving of the
    sessions' traffic gives each child the same own state, and the library and the
    reference model agree on both (P1-P9)."""
    streams: dict[str, list[dict[str, Any]]] = {}
    for _, m in exchange:
        streams.setdefault(m["params"]["sessionId"], []).append(m)
    streams.setdefault(P, [])
    order = data.draw(st.permutations([k for k, v in streams.items() for _ in v]))
    conn = check_own_states_independent(streams, order, P)
    model = ReferenceModel()
    model.feed("outgoing", request(1, "session/new", {"cwd": "/", "mcpServers": []}))
    model.feed("incoming", response(1, {"sessionId": P}))
    positions = dict.fromkeys(streams, 0)
    for key in order:
        model.feed("incoming", streams[key][positions[key]])
        positions[key] += 1
    ours = conn.snapshot()
    ours["diagnostics"] = []
    assert ours == model.snapshot()


def test_p9_references_never_create_a_session() -> None:
    """P9: a tool call's ``session`` item and a ``subagent`` background item are kept as
    received; naming an unknown session is reported and creates none."""
    log = Log()
    new_session(log, 1, P)
    log.upd(sub(C), sid=P)
    known = {"type": "session", "sessionId": C}
    ghost = {"type": "session", "sessionId": "ghost"}
    log.upd({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "content": [known]}, sid=P)
    assert log.codes() == []
    log.upd({"sessionUpdate": "tool_call_update", "toolCallId": "t2", "content": [ghost]}, sid=P)
    log.upd(state("running", background=[{"type": "subagent", "sessionId": "ghost2"}]), sid=P)
    assert log.codes() == ["reference-to-unknown-session", "reference-to-unknown-session"]
    assert [s["sessionId"] for s in log.snap()["sessions"]] == [P, C]
    assert log.entry("t2", P)["content"] == [ghost]
