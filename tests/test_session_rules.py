"""Reducer rules of ACP-V2-CLIENT-STATE.md sections 1.6-9 and 13, and the R-resolutions
that touch the reducer: one example test per rule, driven through the public API
(a passive Connection fed JSON-RPC dicts, or a bare Session) and checked on the
snapshot (SNAPSHOT.md shapes) and on events.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import pytest
from helpers import (
    SID,
    Live,
    Log,
    apply,
    b64,
    chunk,
    empty_session,
    idle,
    message_entry,
    msg,
    permission,
    plan_items,
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

from acp_client import Connection, Session, load_session
from acp_client.events import (
    CompactionChunkAppended,
    MessageChunkAppended,
    MessageUpserted,
    StateChanged,
    TerminalOutputAppended,
    TerminalUpserted,
    ToolCallChunkAppended,
    ToolCallUpserted,
    UnknownUpdateReceived,
    UpdateRejected,
)

NEW = {"cwd": "/work", "mcpServers": []}

# ---------------------------------------------------------------- 1.6 - 1.8


def test_1_6_updates_before_any_prompt_are_applied() -> None:
    log = Log()
    log.upd({"sessionUpdate": "available_commands_update", "availableCommands": []})
    log.upd(chunk("agent", "a1", "hello"))
    assert log.timeline() == [message_entry("agent", "a1", "hello")]


def test_1_6_notification_meta_is_never_stored() -> None:
    log = Log()
    log.agent(update(chunk("agent", "a1", "x"), _meta={"traceparent": "00-abc"}))
    assert "_meta" not in log.entry("a1")


def test_1_7_per_entity_updates_apply_in_arrival_order() -> None:
    log = Log()
    log.upd(chunk("agent", "a", "1"), chunk("agent", "b", "x"), chunk("agent", "a", "2"))
    assert log.entry("a")["content"] == [text("1"), text("2")]
    assert [e["messageId"] for e in log.timeline()] == ["a", "b"]


def test_1_8_update_without_session_update_is_rejected() -> None:
    log = Log()
    events = log.upd({"messageId": "m", "content": text("x")})
    assert any(isinstance(e, UpdateRejected) for e in events)
    assert log.timeline() == []
    assert log.session()["unknownUpdates"] == []
    assert any(d.severity == "error" for d in log.conn.diagnostics)


def test_1_8_malformed_known_variant_is_not_demoted_to_unknown() -> None:
    log = Log()
    events = log.upd({"sessionUpdate": "agent_message_chunk", "content": text("x")})
    assert [type(e) for e in events if isinstance(e, UpdateRejected)] == [UpdateRejected]
    assert log.session()["unknownUpdates"] == []
    assert log.timeline() == []


def test_1_8_update_without_session_id_creates_nothing() -> None:
    log = Log()
    log.agent({"jsonrpc": "2.0", "method": "session/update", "params": {"update": idle()}})
    assert log.snap()["sessions"] == []
    assert log.snap()["diagnostics"]


def test_1_8_update_without_update_is_rejected() -> None:
    log = Log()
    log.agent({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SID}})
    for s in log.snap()["sessions"]:
        assert s["timeline"] == [] and "state" not in s
    assert any(d["severity"] == "error" for d in log.snap()["diagnostics"])


def test_r5_chunk_with_malformed_known_block_is_rejected() -> None:
    log = Log()
    events = log.upd(chunk("agent", "a1", {"type": "text"}))
    assert any(isinstance(e, UpdateRejected) for e in events)
    assert log.timeline() == []


def test_r5_malformed_array_item_is_dropped_not_rejecting() -> None:
    log = Log()
    log.upd(msg("agent", "a1", content=[text("ok"), {"type": "image"}, text("ok2")]))
    assert log.entry("a1")["content"] == [text("ok"), text("ok2")]
    assert "skipped-invalid-item" in log.codes()


# ---------------------------------------------------------------- 2.3 timeline


def test_2_3_timeline_is_first_seen_order_and_updates_stay_in_place() -> None:
    log = Log()
    log.upd(
        chunk("agent", "m1", "a"),
        tool("c1", title="t"),
        {"sessionUpdate": "compaction_update", "compactionId": "k1", "status": "in_progress"},
        chunk("thought", "m2", "hmm"),
        chunk("agent", "m1", "b"),
        tool("c1", status="completed"),
    )
    keys = [
        (e["entry"], e.get("messageId") or e.get("toolCallId") or e.get("compactionId"))
        for e in log.timeline()
    ]
    assert keys == [("message", "m1"), ("toolCall", "c1"), ("compaction", "k1"), ("message", "m2")]
    assert log.entry("m1")["content"] == [text("a"), text("b")]


def test_2_3_plans_terminals_notices_are_not_timeline_entries() -> None:
    log = Log()
    log.upd(
        plan_items("p1", "x"),
        term("t1", command="ls"),
        {"sessionUpdate": "notice", "severity": "info", "title": "hi"},
        {"sessionUpdate": "session_info_update", "title": "T"},
        {"sessionUpdate": "usage_update", "used": 1, "size": 2},
    )
    assert log.timeline() == []


def test_2_3_ordinal_counts_every_applied_update() -> None:
    session = Session("s")
    apply(session, chunk("agent", "a", "x"))
    apply(session, idle())
    apply(session, {"sessionUpdate": "_custom"})
    assert session.ordinal == 3
    assert session.message("agent", "a").first_seen == 1  # type: ignore[union-attr]


# ---------------------------------------------------------------- 3 catalogue

ALL_KNOWN = [
    chunk("user", "u", "x"),
    msg("user", "u2", content=[text("x")]),
    chunk("agent", "a", "x"),
    msg("agent", "a2", content=[text("x")]),
    chunk("thought", "t", "x"),
    msg("thought", "t2", content=[text("x")]),
    state("running"),
    tool_chunk("c", "x"),
    tool("c2", title="x"),
    term("term", command="ls"),
    term_chunk("term", b"x"),
    plan_items("p", "x"),
    {"sessionUpdate": "available_commands_update", "availableCommands": []},
    {"sessionUpdate": "config_option_update", "configOptions": []},
    {"sessionUpdate": "session_info_update", "title": "x"},
    {"sessionUpdate": "usage_update", "used": 1, "size": 2},
    {"sessionUpdate": "notice", "severity": "info", "title": "x"},
    {"sessionUpdate": "compaction_update", "compactionId": "k", "status": "completed"},
    {"sessionUpdate": "compaction_summary_chunk", "compactionId": "k", "content": text("s")},
]


def test_3_all_nineteen_known_variants_are_applied_not_kept_raw() -> None:
    assert len({u["sessionUpdate"] for u in ALL_KNOWN}) == 19
    log = Log()
    events = log.upd(*ALL_KNOWN)
    assert not [e for e in events if isinstance(e, UnknownUpdateReceived | UpdateRejected)]
    snap = log.session()
    assert snap["unknownUpdates"] == []
    assert len(snap["timeline"]) == 9
    assert log.conn.diagnostics == []


def test_3_unknown_variant_kept_verbatim_with_no_state_change() -> None:
    log = Log()
    raw = {"sessionUpdate": "_acme_progress", "pct": 3, "nested": {"a": [1, None]}}
    events = log.upd(raw, {"sessionUpdate": "foo_update"})
    assert [type(e) for e in events][-2:] == [UnknownUpdateReceived, UnknownUpdateReceived]
    assert log.session() == empty_session(unknownUpdates=[raw, {"sessionUpdate": "foo_update"}])


def test_r36_v1_only_names_are_unknown_variants() -> None:
    log = Log()
    v1 = [
        {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "x"},
        {"sessionUpdate": "plan", "entries": []},
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
    ]
    log.upd(*v1)
    snap = log.session()
    assert snap["unknownUpdates"] == v1
    assert snap["timeline"] == [] and snap["plans"] == []


def test_r37_draft_variants_without_opt_in_are_unknown() -> None:
    """R37 as the v2 Preview amends it (P0): only the still-unstable kinds need an opt-in."""
    log = Log()
    drafts = [
        {"sessionUpdate": "prompt_suggestions_update", "suggestions": []},
        {"sessionUpdate": "cursor_update", "cursorId": "c1"},
    ]
    log.upd(plan_items("p1", "a"), *drafts)
    snap = log.session()
    assert snap["unknownUpdates"] == drafts
    assert [p["planId"] for p in snap["plans"]] == ["p1"]
    assert snap["timeline"] == []


# ---------------------------------------------------------------- 4 messages


def test_r1_chunk_for_unannounced_message_creates_it() -> None:
    log = Log()
    events = log.upd(chunk("agent", "a1", "hi"))
    assert isinstance(events[-1], MessageChunkAppended) and events[-1].created
    assert log.timeline() == [message_entry("agent", "a1", "hi")]
    assert log.conn.diagnostics == []


def test_4_1_chunk_meta_is_chunk_scoped() -> None:
    log = Log()
    log.upd(msg("agent", "a1", content=[text("A")], _meta={"k": 1}))
    log.upd(chunk("agent", "a1", "B", _meta={"z": 9}))
    assert log.entry("a1") == message_entry("agent", "a1", "A", "B", _meta={"k": 1})


def test_4_1_chunk_with_unknown_block_type_appends_it_raw() -> None:
    log = Log()
    raw = {"type": "_acme_widget", "x": [1, 2]}
    log.upd(chunk("agent", "a1", "A"), chunk("agent", "a1", raw))
    assert log.entry("a1")["content"] == [text("A"), raw]


def test_4_1_chunk_without_content_is_rejected() -> None:
    log = Log()
    log.upd({"sessionUpdate": "agent_message_chunk", "messageId": "a1"})
    assert log.timeline() == []


def test_4_2_new_message_without_content_starts_empty() -> None:
    log = Log()
    events = log.upd(msg("agent", "a1", _meta={"k": 1}))
    assert isinstance(events[-1], MessageUpserted) and events[-1].created
    assert log.timeline() == [message_entry("agent", "a1", _meta={"k": 1})]


def test_4_3_upsert_without_content_keeps_content() -> None:
    log = Log()
    log.upd(chunk("agent", "a1", "A"), chunk("agent", "a1", "B"), msg("agent", "a1"))
    assert log.entry("a1")["content"] == [text("A"), text("B")]
    assert log.events[-1] == MessageUpserted(
        session_id=SID,
        role="agent",
        message_id="a1",
        created=False,
        content="unchanged",
        index=0,
        version=3,  # the first entry, its third change (docs/events.md E1, E2)
    )


def test_4_3_upsert_with_content_replaces_chunk_accumulated_content() -> None:
    log = Log()
    log.upd(chunk("agent", "a1", "A"), chunk("agent", "a1", "B"))
    log.upd(msg("agent", "a1", content=[text("C")]))
    assert log.entry("a1")["content"] == [text("C")]
    log.upd(chunk("agent", "a1", "D"))
    assert log.entry("a1")["content"] == [text("C"), text("D")]


@pytest.mark.parametrize("clear", [None, []])
def test_4_3_null_or_empty_content_clears(clear: list[object] | None) -> None:
    log = Log()
    log.upd(msg("agent", "a1", content=[text("A")]), chunk("agent", "a1", "B"))
    log.upd(msg("agent", "a1", content=clear))
    assert log.entry("a1") == message_entry("agent", "a1")
    assert log.events[-1].content == "cleared"  # type: ignore[attr-defined]


def test_4_3_example_table_of_the_spec() -> None:
    log = Log()
    steps = [
        (msg("agent", "m", content=[text("A")]), ["A"]),
        (chunk("agent", "m", "B"), ["A", "B"]),
        (msg("agent", "m", _meta={"k": 1}), ["A", "B"]),
        (msg("agent", "m", content=[text("C")]), ["C"]),
        (chunk("agent", "m", "D"), ["C", "D"]),
        (msg("agent", "m", content=None), []),
    ]
    for upd, expected in steps:
        log.upd(upd)
        assert log.entry("m")["content"] == [text(t) for t in expected]
    assert log.entry("m")["_meta"] == {"k": 1}


def test_4_2_non_array_content_is_lenient_omitted() -> None:
    log = Log()
    log.upd(chunk("agent", "a1", "A"), msg("agent", "a1", content="oops"))
    assert log.entry("a1")["content"] == [text("A")]
    assert "lenient-default" in log.codes()


def test_4_2_meta_patch_on_message() -> None:
    log = Log()
    log.upd(msg("user", "u1", _meta={"a": 1, "b": 2}))
    log.upd(msg("user", "u1", _meta={"b": None, "c": {"x": 1}}))
    assert log.entry("u1")["_meta"] == {"a": 1, "c": {"x": 1}}
    log.upd(msg("user", "u1", _meta={"c": {"y": 2}}))
    assert log.entry("u1")["_meta"] == {"a": 1, "c": {"y": 2}}
    log.upd(msg("user", "u1", _meta={}))
    assert log.entry("u1")["_meta"] == {"a": 1, "c": {"y": 2}}
    log.upd(msg("user", "u1", _meta={"a": None, "c": None}))
    assert "_meta" not in log.entry("u1")
    log.upd(msg("user", "u1", _meta={"n": {"deep": None}}))
    assert log.entry("u1")["_meta"] == {"n": {"deep": None}}
    log.upd(msg("user", "u1", _meta=None))
    assert "_meta" not in log.entry("u1")


def test_4_2_non_object_meta_is_omitted() -> None:
    log = Log()
    log.upd(msg("agent", "a1", _meta={"a": 1}), msg("agent", "a1", _meta="x"))
    assert log.entry("a1")["_meta"] == {"a": 1}


def test_r35_unknown_message_fields_kept_with_patch_rule() -> None:
    log = Log()
    log.upd(msg("agent", "a1", content=[text("A")], futureField={"v": 1}))
    assert log.entry("a1")["futureField"] == {"v": 1}
    log.upd(msg("agent", "a1"))
    assert log.entry("a1")["futureField"] == {"v": 1}
    log.upd(msg("agent", "a1", futureField=2))
    assert log.entry("a1")["futureField"] == 2
    log.upd(msg("agent", "a1", futureField=None))
    assert "futureField" not in log.entry("a1")


def test_r6_same_message_id_in_three_kinds_gives_three_messages() -> None:
    log = Log()
    log.upd(
        msg("agent", "m1", content=[text("A")]),
        msg("thought", "m1", content=[text("T")]),
        chunk("user", "m1", "U"),
    )
    assert log.timeline() == [
        message_entry("agent", "m1", "A"),
        message_entry("thought", "m1", "T"),
        message_entry("user", "m1", "U"),
    ]
    assert log.conn.diagnostics == []


def test_r7_interleaved_chunks_append_to_their_own_messages() -> None:
    log = Log()
    log.upd(
        chunk("agent", "a", "1"),
        chunk("thought", "t", "x"),
        chunk("agent", "b", "y"),
        chunk("agent", "a", "2"),
        chunk("thought", "t", "z"),
    )
    assert log.timeline() == [
        message_entry("agent", "a", "1", "2"),
        message_entry("thought", "t", "x", "z"),
        message_entry("agent", "b", "y"),
    ]


def test_4_4_reset_before_chunked_replay_does_not_duplicate() -> None:
    log = Log()
    log.upd(chunk("agent", "a", "1"), chunk("agent", "a", "2"))
    log.upd(msg("agent", "a", content=[]), chunk("agent", "a", "1"), chunk("agent", "a", "2"))
    assert log.entry("a")["content"] == [text("1"), text("2")]


def test_r43_adjacent_text_blocks_are_not_merged() -> None:
    session = Session("s")
    for t in ("Hel", "lo", "!"):
        apply(session, chunk("agent", "a", t))
    m = session.message("agent", "a")
    assert m is not None and len(m.content) == 3 and m.text() == "Hello!"


def test_c25_message_ids_are_opaque() -> None:
    log = Log()
    ids = ["1", "01", " 1", "1 ", "ü", ""]
    log.upd(*(chunk("agent", i, i or "empty") for i in ids))
    assert [e["messageId"] for e in log.timeline()] == ids


# ---------------------------------------------------------------- 5 content blocks


def test_r4_unknown_block_types_kept_raw_in_place_everywhere() -> None:
    log = Log()
    raw = {"type": "_acme", "z": 1}
    log.upd(
        msg("agent", "a", content=[text("x"), raw, text("y")]),
        tool("c", content=[{"type": "content", "content": raw}, {"type": "_item", "q": 1}]),
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "k",
            "status": "done_",
            "summary": [raw],
        },
    )
    assert log.entry("a")["content"] == [text("x"), raw, text("y")]
    assert log.entry("c")["content"] == [
        {"type": "content", "content": raw},
        {"type": "_item", "q": 1},
    ]
    assert log.entry("k")["summary"] == [raw]
    assert log.entry("k")["status"] == "done_"


def test_5_all_known_block_types_round_trip_verbatim() -> None:
    blocks = [
        text("t", annotations={"audience": ["user"], "priority": 0.5}),
        {"type": "image", "data": "aGk=", "mimeType": "image/png", "uri": "https://x/y.png"},
        {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"},
        {
            "type": "resource_link",
            "name": "n",
            "uri": "file:///a",
            "size": 3,
            "icons": [{"src": "https://x/i.png"}],
        },
        {
            "type": "resource",
            "resource": {"uri": "file:///a", "text": "x", "mimeType": "text/plain"},
        },
        {"type": "resource", "resource": {"uri": "file:///b", "blob": "aGk="}},
    ]
    log = Log()
    log.upd(msg("user", "u", content=blocks))
    assert log.entry("u")["content"] == blocks
    assert log.conn.diagnostics == []


def test_5_lenient_fields_of_a_resource_link() -> None:
    log = Log()
    link = {
        "type": "resource_link",
        "name": "n",
        "uri": "file:///a",
        "size": "big",
        "title": 5,
        "icons": [{"src": "https://x/i.png"}, {"nosrc": 1}],
    }
    log.upd(chunk("agent", "a", link))
    assert log.entry("a")["content"] == [
        {
            "type": "resource_link",
            "name": "n",
            "uri": "file:///a",
            "icons": [{"src": "https://x/i.png"}],
        }
    ]


# ---------------------------------------------------------------- 6 foreground state


def test_6_3_state_is_absent_before_any_snapshot() -> None:
    log = Log()
    log.upd(chunk("agent", "a", "x"))
    assert "state" not in log.session()
    assert log.sess().state_name is None


def test_6_3_each_state_update_replaces_the_snapshot() -> None:
    log = Log()
    bg = [{"type": "terminal", "terminalId": "t1"}]
    log.upd(state("running", background=bg, _meta={"m": 1}))
    assert log.session()["state"] == {"state": "running", "background": bg, "_meta": {"m": 1}}
    log.upd(state("requires_action"))
    assert log.session()["state"] == {"state": "requires_action"}


def test_6_3_running_to_idle_records_one_completion() -> None:
    log = Log()
    events = log.upd(state("running"), idle("end_turn"))
    assert events[-1] == StateChanged(
        session_id=SID, state="idle", stop_reason="end_turn", turn_completed=True
    )
    assert log.session()["completedTurns"] == ["end_turn"]


def test_6_3_requires_action_starts_work_and_ends_with_idle() -> None:
    """A9: `requires_action`, then `running` or `idle`, spans one piece of work."""
    log = Log()
    log.upd(
        state("requires_action"), state("running"), state("requires_action"), idle("max_tokens")
    )
    assert log.session()["completedTurns"] == ["max_tokens"]


def test_r51_idle_while_idle_or_none_records_nothing() -> None:
    log = Log()
    log.upd(idle("end_turn"))
    log.upd(state("running"), idle("end_turn"), idle("end_turn"), idle(None))
    assert log.session()["completedTurns"] == ["end_turn"]
    assert log.session()["state"] == {"state": "idle"}


def test_r12_idle_without_stop_reason_ending_work_records_null() -> None:
    """A8: the idle that ends work must carry a stop reason."""
    log = Log()
    log.upd(state("running"), idle(None))
    assert log.session()["completedTurns"] == [None]
    assert "missing-stop-reason" in log.codes()


def test_6_3_any_idle_clears_cancel_requested() -> None:
    session = Session("s")
    apply(session, state("running"))
    session.request_cancel()
    assert session.cancel_requested
    apply(session, idle("end_turn"))
    assert not session.cancel_requested
    session.request_cancel()
    apply(session, idle("end_turn"))  # idle while idle still clears
    assert not session.cancel_requested


def test_r49_running_before_any_prompt_starts_agent_initiated_work() -> None:
    log = Log()
    log.upd(state("running"), chunk("agent", "a", "x"), idle("end_turn"))
    assert log.session()["completedTurns"] == ["end_turn"]


def test_r13_stop_reason_on_running_has_no_meaning_and_is_kept() -> None:
    log = Log()
    log.upd(state("running", stopReason="end_turn"))
    assert log.session()["state"] == {"state": "running", "stopReason": "end_turn"}
    assert log.session()["completedTurns"] == []


def test_r64_unrecognized_state_is_busy_kept_raw_and_ends_with_idle() -> None:
    log = Log()
    log.upd(state("running", background=[]))
    session = log.sess()
    session.request_cancel()
    raw = state("_acme_thinking", background=[{"type": "terminal", "terminalId": "t"}], x=1)
    log.upd(raw)
    snap = log.session()
    assert snap["state"]["state"] == "_acme_thinking"
    assert snap["state"]["x"] == 1
    assert not session.idle
    assert session.cancel_requested
    assert session.background is None
    log.upd(idle("end_turn"))
    assert log.session()["completedTurns"] == ["end_turn"]


def test_r64_custom_state_from_none_then_idle_records_completion() -> None:
    log = Log()
    log.upd(state("_acme"), idle("end_turn"))
    assert log.session()["completedTurns"] == ["end_turn"]


def test_6_2_error_stop_reason_with_error_object() -> None:
    log = Log()
    err = {"code": -32603, "message": "timeout"}
    log.upd(state("running"), idle("error", error=err))
    snap = log.session()
    assert snap["completedTurns"] == ["error"]
    assert snap["state"] == {"state": "idle", "stopReason": "error", "error": err}


def test_r60_error_stop_reason_with_malformed_error_drops_it() -> None:
    log = Log()
    log.upd(state("running"), idle("error", error="oops"))
    snap = log.session()
    assert snap["completedTurns"] == ["error"]
    assert snap["state"] == {"state": "idle", "stopReason": "error"}
    assert "lenient-default" in log.codes()


def test_6_2_custom_stop_reason_keeps_extra_fields() -> None:
    log = Log()
    log.upd(state("running"), idle("_acme_quota", quota=3))
    snap = log.session()
    assert snap["completedTurns"] == ["_acme_quota"]
    assert snap["state"] == {"state": "idle", "stopReason": "_acme_quota", "quota": 3}


def test_r12_malformed_stop_reason_counts_as_unreported() -> None:
    log = Log()
    log.upd(state("running"), idle(5))
    assert log.session()["completedTurns"] == [None]
    assert log.session()["state"] == {"state": "idle"}


def test_r14_refusal_excludes_the_prompt_and_everything_after_it() -> None:
    log = Log()
    log.upd(chunk("user", "u0", "first"), state("running"), chunk("agent", "a0", "ok"), idle())
    log.upd(
        state("running"),
        chunk("user", "u1", "bad"),
        tool("c1", title="t"),
        chunk("agent", "a1", "no"),
        idle("refusal"),
    )
    flags = {
        e.get("messageId") or e.get("toolCallId"): e.get("excludedFromContext")
        for e in log.timeline()
    }
    assert flags == {"u0": None, "a0": None, "u1": True, "c1": True, "a1": True}
    assert log.session()["completedTurns"] == ["end_turn", "refusal"]


@pytest.mark.parametrize("before", [[], [idle("end_turn")]])
def test_r14_an_idle_that_completed_no_turn_still_ends_the_earlier_work(
    before: list[dict[str, Any]],
) -> None:
    # A log that starts mid-stream: the first idle (from no state, or repeated) records no
    # turn, but what was placed before it is not part of the work the refusal ends.
    log = Log()
    log.upd(*before, chunk("user", "u0", "old"), chunk("agent", "a0", "ok"), idle("end_turn"))
    log.upd(chunk("user", "u1", "new"), state("running"), chunk("agent", "a1", "no"))
    log.upd(idle("refusal"))
    flags = [e.get("excludedFromContext") for e in log.timeline()]
    assert flags == [None, None, True, True]


@pytest.mark.parametrize("new_session", [False, True])
def test_r14_a_repeated_idle_leaves_a_waiting_prompt_in_the_next_work(new_session: bool) -> None:
    # 6.3: an idle while already idle (here: a background list that changed) neither starts
    # nor ends work. The prompt placed after the last idle still waits for its work (R49),
    # and a refusal of that work marks it (R14).
    log = Log()
    if new_session:  # none counts as idle then: the first idle repeats it
        log.client({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": NEW})
        log.agent({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": SID}})
    t1 = {"type": "terminal", "terminalId": "t1"}
    log.upd(state("running", background=[t1]), idle("end_turn", background=[t1]))
    log.upd(chunk("agent", "a0", "done"), msg("user", "u1", content=[text("q")]))
    log.upd(term("t1", exitStatus={"exitCode": 0}), idle(None, background=[]))
    log.upd(state("running", background=[]), chunk("agent", "a1", "no"))
    log.upd(idle("refusal", background=[]))
    flags = {e["messageId"]: e.get("excludedFromContext") for e in log.timeline()}
    assert flags == {"a0": None, "u1": True, "a1": True}
    assert log.session()["completedTurns"] == ["end_turn", "refusal"]


def test_r14_a_repeated_idle_after_the_prompt_was_answered_ends_it() -> None:
    # A prompt answered without `running` (a locally handled command) and a repeated idle:
    # the next work's refusal does not reach back to it.
    log = Log()
    log.client({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": NEW})
    log.agent({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": SID}})
    log.upd(msg("user", "u0", content=[text("/help")]), chunk("agent", "a0", "help"))
    log.upd(idle("end_turn"), msg("user", "u1", content=[text("q")]), idle(None))
    log.upd(state("running"), chunk("agent", "a1", "no"), idle("refusal"))
    flags = [e.get("excludedFromContext") for e in log.timeline()]
    assert flags == [None, None, True, True]


def test_r14_refusal_of_work_without_a_user_message_excludes_nothing() -> None:
    log = Log()
    log.upd(
        tool("c0", title="before the work"),
        state("running"),
        chunk("agent", "a1", "no"),
        idle("refusal"),
    )
    assert [e.get("excludedFromContext") for e in log.timeline()] == [None, None]


def test_6_4_background_omitted_null_and_empty() -> None:
    session = Session("s")
    apply(session, state("running"))
    assert session.background is None
    apply(session, state("running", background=[]))
    assert session.background == []
    apply(session, state("running", background=None))
    assert session.background is None


def test_r52_background_dropped_after_reported_is_not_reported_with_diagnostic() -> None:
    log = Log()
    log.upd(state("running", background=[]), idle("end_turn"))
    assert log.sess().background is None
    assert "background-not-reported" in log.codes()
    assert log.session()["state"] == {"state": "idle", "stopReason": "end_turn"}


def test_r52_malformed_background_item_makes_the_list_not_reported() -> None:
    log = Log()
    log.upd(state("running", background=[{"type": "terminal"}]))
    assert log.sess().background is None
    assert "background" not in log.session()["state"]
    assert log.conn.diagnostics


def test_6_4_unknown_background_item_kept_raw() -> None:
    log = Log()
    item = {"type": "_acme_job", "id": 3}
    log.upd(idle("end_turn", background=[item]))
    assert log.sess().background == [item]
    assert log.session()["state"]["background"] == [item]


def test_r22_background_terminal_item_creates_the_terminal() -> None:
    log = Log()
    log.upd(state("running", background=[{"type": "terminal", "terminalId": "t9"}]))
    assert log.session()["terminals"] == [{"terminalId": "t9", "output": "", "truncatedBytes": 0}]


def test_r22_a_terminal_created_by_a_reference_has_its_created_event() -> None:
    # A UI that builds its terminal list from events learns of it: after the event of the
    # update that named it, once; the terminal's own first update then says created=False.
    t1 = {"type": "terminal", "terminalId": "t1"}
    t2 = {"type": "terminal", "terminalId": "t2"}
    t3 = {"type": "terminal", "terminalId": "t3"}
    log = Log()
    log.upd(state("idle"))
    events = log.upd(
        tool("c1", content=[t1]),
        tool_chunk("c1", t2),
        state("running", background=[t3]),
        tool("c1", content=[t1, t2, t3]),  # all known: nothing more
    )
    made = TerminalUpserted
    assert [type(e) for e in events] == [
        ToolCallUpserted,
        made,
        ToolCallChunkAppended,
        made,
        StateChanged,
        made,
        ToolCallUpserted,
    ]
    assert [(e.terminal_id, e.created, e.output) for e in events if type(e) is made] == [
        ("t1", True, "unchanged"),
        ("t2", True, "unchanged"),
        ("t3", True, "unchanged"),
    ]
    (appended,) = log.upd(term_chunk("t1", b"x"))
    assert isinstance(appended, TerminalOutputAppended) and not appended.created


def test_6_4_work_listed_twice_in_background_is_a_diagnostic() -> None:
    """A25: each piece of background work is listed once."""
    log = Log()
    t9 = {"type": "terminal", "terminalId": "t9"}
    log.upd(term("t9"), state("running", background=[t9, {"type": "_x", "id": 1}]))
    assert log.codes() == []
    log.upd(state("running", background=[t9, t9, {"type": "_x"}, {"type": "_x"}]))
    assert log.codes() == ["background-duplicate"]
    assert log.session()["state"]["background"] == [t9, t9, {"type": "_x"}, {"type": "_x"}]


def test_r53_background_terminal_listed_before_announced_is_created_with_a_diagnostic() -> None:
    log = Log()
    t9 = {"type": "terminal", "terminalId": "t9"}
    log.upd(state("running", background=[t9]))
    assert log.codes() == ["background-unknown-terminal"]
    assert [t["terminalId"] for t in log.session()["terminals"]] == ["t9"]
    log.upd(state("running", background=[t9]))  # known now: listed again, no diagnostic
    assert log.codes() == ["background-unknown-terminal"]


def test_6_4_a_tool_call_listed_with_its_own_terminal_is_listed_twice() -> None:
    # "list each piece of work once (process-backed work as its terminal only)"
    log = Log()
    log.upd(term("t1"), tool("c1", content=[{"type": "terminal", "terminalId": "t1"}]))
    log.upd(tool("c2", status="in_progress"))
    t1 = {"type": "terminal", "terminalId": "t1"}
    c1 = {"type": "tool_call", "toolCallId": "c1"}
    c2 = {"type": "tool_call", "toolCallId": "c2"}
    log.upd(state("running", background=[t1, c2]))
    assert log.codes() == []
    log.upd(state("running", background=[c1, t1, c2]))
    assert log.codes() == ["background-duplicate"]
    assert "'c1'" in log.conn.diagnostics[0].message
    alone = Log()  # the tool call listed without its terminal: not listed twice
    alone.upd(term("t1"), tool("c1", content=[{"type": "terminal", "terminalId": "t1"}]))
    alone.upd(state("running", background=[c1]))
    assert alone.codes() == []


def test_r53_background_tool_call_for_unknown_id_is_not_created() -> None:
    log = Log()
    log.upd(state("running", background=[{"type": "tool_call", "toolCallId": "c9"}]))
    assert log.timeline() == []
    assert "background-unknown-tool-call" in log.codes()


def test_r54_item_leaving_background_infers_nothing() -> None:
    log = Log()
    log.upd(tool("c1", status="in_progress"))
    log.upd(state("running", background=[{"type": "tool_call", "toolCallId": "c1"}]))
    log.upd(idle("end_turn", background=[]))
    assert log.entry("c1")["status"] == "in_progress"


# ---------------------------------------------------------------- 7 tool calls


def test_7_1_defaults_of_a_first_seen_tool_call() -> None:
    log = Log()
    events = log.upd(tool("c1"))
    assert events[-1] == ToolCallUpserted(
        session_id=SID, tool_call_id="c1", created=True, content="unchanged", index=0, version=1
    )
    assert log.timeline() == [tool_entry("c1")]


def test_7_1_every_field_is_patched() -> None:
    log = Log()
    full = {
        "title": "Read",
        "name": "read_file",
        "kind": "read",
        "status": "in_progress",
        "content": [text_item("x")],
        "locations": [{"path": "/a", "line": 3}],
        "rawInput": {"p": "/a"},
        "rawOutput": [1, 2],
        "capabilities": {"cancel": {}},
        "_meta": {"m": 1},
    }
    log.upd(tool("c1", **full))
    assert log.entry("c1") == tool_entry("c1", **full)
    log.upd(tool("c1"))  # all omitted: nothing changes
    assert log.entry("c1") == tool_entry("c1", **full)


def test_7_1_null_clears_or_resets_each_field() -> None:
    log = Log()
    log.upd(
        tool(
            "c1",
            title="T",
            name="n",
            kind="edit",
            status="completed",
            content=[text_item("x")],
            locations=[{"path": "/a"}],
            rawInput={"a": 1},
            rawOutput="o",
            capabilities={"cancel": {}},
            _meta={"m": 1},
        )
    )
    log.upd(
        tool(
            "c1",
            title=None,
            name=None,
            kind=None,
            status=None,
            content=None,
            locations=None,
            rawInput=None,
            rawOutput=None,
            capabilities=None,
            _meta=None,
        )
    )
    assert log.entry("c1") == tool_entry("c1")


def test_7_1_lenient_wrong_types_decode_as_omitted() -> None:
    log = Log()
    log.upd(tool("c1", title="T", kind="edit", status="in_progress", locations=[{"path": "/a"}]))
    log.upd(
        tool(
            "c1",
            title=42,
            kind=5,
            status=[],
            name={},
            content="x",
            locations=7,
            capabilities="x",
            _meta=[1],
        )
    )
    assert log.entry("c1") == tool_entry(
        "c1", title="T", kind="edit", status="in_progress", locations=[{"path": "/a"}]
    )


def test_7_1_empty_content_and_locations_arrays_clear() -> None:
    log = Log()
    log.upd(tool("c1", content=[text_item("x")], locations=[{"path": "/a"}]))
    log.upd(tool("c1", content=[], locations=[]))
    assert log.entry("c1") == tool_entry("c1")


def test_7_1_raw_input_and_output_any_json_kept_verbatim() -> None:
    log = Log()
    for value in ("s", 0, False, [None, {"a": []}], {"deep": {"x": None}}):
        log.upd(tool("c1", rawInput=value, rawOutput=value))
        assert log.entry("c1")["rawInput"] == value
        assert log.entry("c1")["rawOutput"] == value


def test_r55_capabilities_replace_whole_and_malformed_cancel_advertises_nothing() -> None:
    log = Log()
    log.upd(tool("c1", capabilities={"cancel": {}, "_meta": {"a": 1}}))
    assert log.sess().tool_calls["c1"].cancellable
    log.upd(tool("c1", capabilities={"_meta": {"b": 2}}))
    assert log.entry("c1")["capabilities"] == {"_meta": {"b": 2}}
    assert not log.sess().tool_calls["c1"].cancellable
    log.upd(tool("c1", capabilities={"cancel": {}}))
    log.upd(tool("c1", capabilities="x"))
    assert log.sess().tool_calls["c1"].cancellable
    log.upd(tool("c1", capabilities={"cancel": 3}))
    assert not log.sess().tool_calls["c1"].cancellable
    log.upd(tool("c1", capabilities={"cancel": None}))
    assert not log.sess().tool_calls["c1"].cancellable


def test_7_2_chunks_append_update_replaces_later_chunks_append() -> None:
    log = Log()
    events = log.upd(tool_chunk("c1", "a"), tool_chunk("c1", "b"))[-2:]
    assert isinstance(events[0], ToolCallChunkAppended) and events[0].created
    assert not events[1].created  # type: ignore[attr-defined]
    log.upd(tool("c1", content=[text_item("R")]))
    log.upd(tool_chunk("c1", "c"))
    assert log.entry("c1")["content"] == [text_item("R"), text_item("c")]


def test_7_2_chunk_meta_never_patches_the_tool_call() -> None:
    log = Log()
    log.upd(tool("c1", _meta={"a": 1}), tool_chunk("c1", "x", _meta={"z": 1}))
    assert log.entry("c1")["_meta"] == {"a": 1}


def test_7_3_unknown_tool_call_id_is_created_by_chunk_or_update() -> None:
    """A12: a tool call reported without its title first is still created."""
    log = Log()
    log.upd(tool_chunk("c1", "x"), tool("c2", status="completed"))
    assert log.timeline() == [
        tool_entry("c1", content=[text_item("x")]),
        tool_entry("c2", status="completed"),
    ]
    assert log.conn.diagnostics == []


def test_7_4_unknown_status_and_kind_written_as_received() -> None:
    log = Log()
    log.upd(tool("c1", status="_acme_waiting", kind="_acme_kind"))
    assert log.entry("c1") == tool_entry("c1", status="_acme_waiting", kind="_acme_kind")
    assert not log.sess().tool_calls["c1"].finished


def test_7_4_empty_status_string_is_written_as_received() -> None:
    # An empty string is a status acp_client does not know, not an unset one: the
    # "pending" fallback is for unset or null only (SNAPSHOT.md TOOL_CALL).
    log = Log()
    log.upd(tool("c1", status="", kind=""))
    assert log.entry("c1") == tool_entry("c1", status="", kind="")
    call = log.sess().tool_calls["c1"]
    assert call.effective_status == "" and not call.finished
    log.upd(tool("c1", status=None))
    assert log.entry("c1")["status"] == "pending"


def test_7_4_paused_is_not_finished() -> None:
    session = Session("s")
    apply(session, tool("c1", status="paused"))
    assert not session.tool_calls["c1"].finished


def test_7_5_terminal_content_item_creates_the_terminal() -> None:
    log = Log()
    log.upd(
        tool("c1", content=[{"type": "terminal", "terminalId": "t1"}]),
        tool_chunk("c2", {"type": "terminal", "terminalId": "t2"}),
    )
    assert [t["terminalId"] for t in log.session()["terminals"]] == ["t1", "t2"]
    assert log.entry("c2")["content"] == [{"type": "terminal", "terminalId": "t2"}]


def test_7_6_diff_without_patch_and_with_unknown_operation() -> None:
    """C20: a diff without `patch` is read from its `changes`."""
    diff = {
        "type": "diff",
        "changes": [
            {"operation": "modify", "path": "/a", "fileType": "text"},
            {"operation": "move", "oldPath": "/b", "path": "/c"},
            {"operation": "_acme_link", "path": "/d"},
        ],
    }
    log = Log()
    log.upd(tool("c1", content=[diff]))
    assert log.entry("c1")["content"] == [diff]
    with_null = {**diff, "patch": None}
    log.upd(tool("c1", content=[with_null]))
    assert log.entry("c1")["content"][0]["changes"] == diff["changes"]


def test_7_6_malformed_change_dropped_and_file_type_lenient() -> None:
    log = Log()
    diff = {
        "type": "diff",
        "changes": [{"operation": "add"}, {"operation": "add", "path": "/x", "fileType": 3}],
        "patch": {"format": "git_patch", "text": "diff --git /x /x\n"},
    }
    log.upd(tool("c1", content=[diff]))
    assert log.entry("c1")["content"] == [
        {
            "type": "diff",
            "changes": [{"operation": "add", "path": "/x"}],
            "patch": {"format": "git_patch", "text": "diff --git /x /x\n"},
        }
    ]


def test_7_7_location_line_zero_is_stored_without_line() -> None:
    log = Log()
    log.upd(
        tool(
            "c1",
            locations=[
                {"path": "/a", "line": 0},
                {"path": "/b", "line": "x"},
                {"path": "/c", "line": 7},
            ],
        )
    )
    assert log.entry("c1")["locations"] == [
        {"path": "/a"},
        {"path": "/b"},
        {"path": "/c", "line": 7},
    ]


def test_7_8_local_overlay_shows_cancelled_until_a_later_agent_status() -> None:
    log = Log()
    log.upd(state("running"), tool("c1", status="in_progress"), tool("c2", status="completed"))
    marked = log.sess().request_cancel()
    assert marked == ("c1",)
    assert log.entry("c1")["status"] == "cancelled"
    assert log.entry("c2")["status"] == "completed"
    log.upd(tool("c1", title="still"))  # no status: overlay stays
    assert log.entry("c1")["status"] == "cancelled"
    log.upd(tool("c1", status="completed"))  # R17: the agent's status wins
    assert log.entry("c1")["status"] == "completed"


def test_r16_custom_status_is_covered_by_the_overlay() -> None:
    session = Session("s")
    apply(session, state("running"))
    apply(session, tool("c1", status="_acme_waiting"))
    apply(session, tool("c2", status="paused"))
    apply(session, tool("c3"))
    assert session.request_cancel() == ("c1", "c2", "c3")


def test_r15_overlay_covers_only_the_current_work() -> None:
    session = Session("s")
    apply(session, state("running"))
    apply(session, tool("old", status="in_progress"))
    apply(session, idle("end_turn"))
    apply(session, state("running"))
    apply(session, tool("new", status="in_progress"))
    assert session.request_cancel() == ("new",)


def test_r15_overlay_skips_background_tool_calls_and_terminals() -> None:
    session = Session("s")
    apply(session, state("running"))
    apply(session, tool("fg", status="in_progress"))
    apply(session, tool("bgc", status="in_progress"))
    apply(
        session,
        tool("bgt", status="in_progress", content=[{"type": "terminal", "terminalId": "t"}]),
    )
    apply(
        session,
        state(
            "running",
            background=[
                {"type": "tool_call", "toolCallId": "bgc"},
                {"type": "terminal", "terminalId": "t"},
            ],
        ),
    )
    assert session.request_cancel() == ("fg",)


def test_r48_idle_without_cancel_leaves_tool_statuses_as_reported() -> None:
    log = Log()
    log.upd(state("running"), tool("c1", status="in_progress"), tool("c2", status="paused"))
    log.upd(idle("end_turn"))
    assert [e["status"] for e in log.timeline()] == ["in_progress", "paused"]


def test_7_8_overlay_is_never_stored_as_agent_data() -> None:
    session = Session("s")
    apply(session, state("running"))
    apply(session, tool("c1", status="in_progress"))
    session.request_cancel()
    call = session.tool_calls["c1"]
    assert call.status == "in_progress" and call.effective_status == "cancelled"


# ---------------------------------------------------------------- 8 terminals


def test_8_1_terminal_first_named_by_a_chunk_exists_with_only_id_and_output() -> None:
    log = Log()
    events = log.upd(term_chunk("t1", b"hi"))
    assert isinstance(events[-1], TerminalOutputAppended) and events[-1].created
    assert log.session()["terminals"] == [
        {"terminalId": "t1", "output": b64(b"hi"), "truncatedBytes": 0}
    ]


def test_8_2_terminal_update_fields_patch_and_null_clears() -> None:
    log = Log()
    full = {
        "command": "ls",
        "cwd": "/w",
        "size": {"cols": 80, "rows": 24},
        "capabilities": {"cancel": {}},
        "exitStatus": {"exitCode": 0},
        "_meta": {"a": 1},
    }
    events = log.upd(term("t1", **full))
    assert events[-1] == TerminalUpserted(
        session_id=SID, terminal_id="t1", created=True, output="unchanged", version=1
    )
    assert log.terminal("t1") == {"terminalId": "t1", "output": "", "truncatedBytes": 0, **full}
    log.upd(term("t1"))
    assert log.terminal("t1") == {"terminalId": "t1", "output": "", "truncatedBytes": 0, **full}
    log.upd(
        term(
            "t1", command=None, cwd=None, size=None, capabilities=None, exitStatus=None, _meta=None
        )
    )
    assert log.terminal("t1") == {"terminalId": "t1", "output": "", "truncatedBytes": 0}


def test_8_3_chunks_decoded_separately_and_appended() -> None:
    log = Log()
    log.upd(term_chunk("t1", "YQ=="), term_chunk("t1", "Yg=="))  # concatenated: invalid
    assert base64.b64decode(log.terminal("t1")["output"]) == b"ab"
    assert log.conn.diagnostics == []


def test_8_2_output_snapshot_replaces_and_later_chunks_append() -> None:
    log = Log()
    log.upd(
        term_chunk("t1", b"old"), term("t1", output={"data": b64(b"NEW")}), term_chunk("t1", b"+")
    )
    assert base64.b64decode(log.terminal("t1")["output"]) == b"NEW+"


def test_r24_output_null_empties_and_later_chunks_append_to_empty() -> None:
    log = Log()
    events = log.upd(term_chunk("t1", b"old"), term("t1", output=None), term_chunk("t1", b"x"))
    assert events[-2].output == "cleared"  # type: ignore[attr-defined]
    assert base64.b64decode(log.terminal("t1")["output"]) == b"x"


def test_r24_exit_status_object_means_exited_and_null_unexits() -> None:
    session = Session("s")
    apply(session, term("t1", exitStatus={}))
    assert session.terminals["t1"].exited
    apply(session, term("t1", exitStatus=None))
    assert not session.terminals["t1"].exited


def test_r23_chunk_after_exit_is_still_appended() -> None:
    log = Log()
    log.upd(term("t1", exitStatus={"exitCode": 1}), term_chunk("t1", b"late"))
    assert base64.b64decode(log.terminal("t1")["output"]) == b"late"


def test_r25_invalid_base64_chunk_is_dropped_with_diagnostic() -> None:
    log = Log()
    log.upd(term_chunk("t1", b"ok"))
    events = log.upd(term_chunk("t1", "!!notbase64"))
    assert isinstance(events[-1], UpdateRejected)
    assert base64.b64decode(log.terminal("t1")["output"]) == b"ok"
    assert "invalid-base64" in log.codes()


def test_r25_an_invalid_first_chunk_creates_no_terminal() -> None:
    # "the chunk is dropped": the whole update, so the terminal is first seen later (t2 first).
    from acp_client.testing import ReferenceModel

    bad = term_chunk("t1", "!!notbase64")
    later = (term_chunk("t2", b"x"), term_chunk("t1", b"y"))
    log = Log()
    log.upd(bad, *later)
    assert [t["terminalId"] for t in log.session()["terminals"]] == ["t2", "t1"]
    model = ReferenceModel()
    for u in (bad, *later):
        model.feed("incoming", update(u))
    terminals = model.snapshot()["sessions"][0]["terminals"]
    assert [t["terminalId"] for t in terminals] == ["t2", "t1"]


@pytest.mark.parametrize("data", ["YWJj=", "YWJj==", "YWJj====", "é"])
def test_r25_excess_padding_or_non_ascii_is_invalid_base64(data: str) -> None:
    # RFC 4648: a whole quantum takes no padding; Python's strict mode alone accepts it.
    log = Log()
    log.upd(term_chunk("t1", b"ok"))
    events = log.upd(term_chunk("t1", data), term("t2", output={"data": data}))
    assert isinstance(events[0], UpdateRejected)
    assert base64.b64decode(log.terminal("t1")["output"]) == b"ok"
    assert log.terminal("t2")["output"] == ""
    assert log.codes().count("invalid-base64") == 2


def test_8_5_the_text_of_a_limited_terminal_is_that_of_its_retained_bytes() -> None:
    session = Session("s", terminal_limit=10)
    apply(session, term_chunk("t1", b"abcdefgh"))
    terminal = session.terminals["t1"]
    assert terminal.text() == "abcdefgh"
    apply(session, term_chunk("t1", b"XYZWV"))
    assert (terminal.output, terminal.truncated_bytes) == (b"defghXYZWV", 3)
    assert terminal.text() == "defghXYZWV"
    apply(session, term_chunk("t1", "é!".encode()))  # the cut moves again
    assert terminal.text() == terminal.output.decode() == "ghXYZWVé!"


def test_r25_invalid_base64_snapshot_is_treated_as_omitted() -> None:
    log = Log()
    log.upd(term_chunk("t1", b"ok"), term("t1", output={"data": "@@@"}, command="c"))
    assert base64.b64decode(log.terminal("t1")["output"]) == b"ok"
    assert log.terminal("t1")["command"] == "c"
    assert "invalid-base64" in log.codes()


def test_8_2_size_out_of_range_is_lenient_omitted() -> None:
    log = Log()
    log.upd(term("t1", size={"cols": 120, "rows": 40}), term("t1", size={"cols": 0, "rows": 40}))
    assert log.terminal("t1")["size"] == {"cols": 120, "rows": 40}
    assert "lenient-default" in log.codes()


def test_8_2_exit_code_may_be_negative() -> None:
    log = Log()
    log.upd(term("t1", exitStatus={"exitCode": -1073741510}))
    assert log.terminal("t1")["exitStatus"] == {"exitCode": -1073741510}


def test_r27_non_utf8_bytes_are_stored_as_is() -> None:
    session = Session("s")
    apply(session, term_chunk("t1", b"\xff\xfe\x1b[31m"))
    assert session.terminals["t1"].output == b"\xff\xfe\x1b[31m"
    assert session.terminals["t1"].text() == "\ufffd\ufffd\x1b[31m"


def test_8_4_split_utf8_sequence_decodes_across_chunks() -> None:
    session = Session("s")
    data = "a😀b".encode()
    for i in range(len(data)):
        apply(session, term_chunk("t1", data[i : i + 1]))
    assert session.terminals["t1"].text() == "a😀b"


def test_8_4_snapshot_resets_the_text_decoder_state() -> None:
    session = Session("s")
    apply(session, term_chunk("t1", "😀".encode()[:2]))
    apply(session, term("t1", output={"data": b64("ok")}))
    assert session.terminals["t1"].text() == "ok"


def test_r26_local_truncation_counts_dropped_bytes_and_snapshot_clears_it() -> None:
    conn = Connection(live=False, terminal_limit=4)
    conn.receive_message(update(term_chunk("t1", b"0123456789")))
    t = conn.snapshot()["sessions"][0]["terminals"][0]
    assert base64.b64decode(t["output"]) == b"6789"
    assert t["truncatedBytes"] == 6
    conn.receive_message(update(term("t1", output={"data": b64(b"ab")})))
    t = conn.snapshot()["sessions"][0]["terminals"][0]
    assert base64.b64decode(t["output"]) == b"ab" and t["truncatedBytes"] == 0


def test_8_1_terminal_state_kept_when_no_tool_call_references_it() -> None:
    log = Log()
    log.upd(tool("c1", content=[{"type": "terminal", "terminalId": "t1"}]), term_chunk("t1", b"x"))
    log.upd(tool("c1", content=None))
    assert base64.b64decode(log.terminal("t1")["output"]) == b"x"


# ---------------------------------------------------------------- 9 plans ...


def test_9_1_items_plan_replaced_wholesale() -> None:
    log = Log()
    log.upd(plan_items("p1", "a", "b"), plan_items("p1", "c"))
    assert log.session()["plans"] == [{"planId": "p1", "plan": plan_items("p1", "c")["plan"]}]


def test_r28_several_plans_first_seen_order_and_empty_plan() -> None:
    log = Log()
    log.upd(plan_items("p1", "a"), plan_items("p2", "b"), plan_items("p1"))
    plans = log.session()["plans"]
    assert [p["planId"] for p in plans] == ["p1", "p2"]
    assert plans[0]["plan"]["entries"] == []


def test_r28_unknown_plan_type_kept_raw_and_replaces() -> None:
    log = Log()
    md = {"type": "markdown", "planId": "p1", "content": "# plan"}
    log.upd(plan_items("p1", "a"), {"sessionUpdate": "plan_update", "plan": md})
    assert log.session()["plans"] == [{"planId": "p1", "plan": md}]
    log.upd(plan_items("p1", "back", _meta={"k": 1}))
    assert log.session()["plans"][0]["plan"]["_meta"] == {"k": 1}
    log.upd(plan_items("p1", "again"))
    assert "_meta" not in log.session()["plans"][0]["plan"]


def test_9_1_malformed_entries_dropped_non_array_rejects() -> None:
    log = Log()
    good = {"content": "a", "priority": "_acme", "status": "_x"}
    log.upd(
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "p1", "entries": [good, {"content": "b"}]},
        }
    )
    assert log.session()["plans"][0]["plan"]["entries"] == [good]
    events = log.upd(
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p1", "entries": "x"}}
    )
    assert isinstance(events[-1], UpdateRejected)
    assert log.session()["plans"][0]["plan"]["entries"] == [good]


CMD_X = {"type": "command", "name": "x", "description": "X"}
CMD_Y = {"type": "command", "name": "y", "description": "Y", "input": {"type": "text", "hint": "h"}}


def test_9_2_commands_replace_malformed_dropped_unknown_kept() -> None:
    log = Log()
    log.upd({"sessionUpdate": "available_commands_update", "availableCommands": [CMD_X]})
    weird = {"type": "_acme", "name": "w", "description": "W", "more": 1}
    log.upd(
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [
                CMD_Y,
                {"type": "command", "name": "bad"},
                {"name": "notype", "description": "d"},
                weird,
            ],
        }
    )
    assert log.session()["availableCommands"] == [CMD_Y, weird]


def test_9_2_non_array_commands_rejects_the_update() -> None:
    log = Log()
    log.upd({"sessionUpdate": "available_commands_update", "availableCommands": [CMD_X]})
    events = log.upd({"sessionUpdate": "available_commands_update", "availableCommands": "x"})
    assert isinstance(events[-1], UpdateRejected)
    assert log.session()["availableCommands"] == [CMD_X]


OPT_MODE = {
    "type": "select",
    "configId": "mode",
    "name": "Mode",
    "category": "mode",
    "currentValue": "a",
    "options": [{"value": "a", "name": "A"}],
}
OPT_BOOL = {"type": "boolean", "configId": "b", "name": "B", "currentValue": True}


def test_9_3_config_options_replace_and_unknown_type_kept() -> None:
    log = Log()
    raw = {"type": "_acme_slider", "configId": "s", "name": "S", "currentValue": 3}
    log.upd({"sessionUpdate": "config_option_update", "configOptions": [OPT_MODE]})
    log.upd({"sessionUpdate": "config_option_update", "configOptions": [OPT_BOOL, raw]})
    assert log.session()["configOptions"] == [OPT_BOOL, raw]


def test_9_3_select_with_empty_options_is_dropped() -> None:
    log = Log()
    bad = {**OPT_MODE, "options": []}
    log.upd({"sessionUpdate": "config_option_update", "configOptions": [bad, OPT_BOOL]})
    assert log.session()["configOptions"] == [OPT_BOOL]


def test_r34_non_array_config_options_rejects_the_update() -> None:
    log = Log()
    log.upd({"sessionUpdate": "config_option_update", "configOptions": [OPT_BOOL]})
    events = log.upd({"sessionUpdate": "config_option_update", "configOptions": "x"})
    assert isinstance(events[-1], UpdateRejected)
    assert log.session()["configOptions"] == [OPT_BOOL]


def test_9_4_session_info_patch_and_meta_patch() -> None:
    log = Log()
    log.upd(
        {
            "sessionUpdate": "session_info_update",
            "title": "T",
            "updatedAt": "now?",
            "_meta": {"a": 1},
        }
    )
    assert log.session()["sessionInfo"] == {"title": "T", "updatedAt": "now?", "_meta": {"a": 1}}
    log.upd({"sessionUpdate": "session_info_update", "_meta": {"b": 2}})
    assert log.session()["sessionInfo"] == {
        "title": "T",
        "updatedAt": "now?",
        "_meta": {"a": 1, "b": 2},
    }
    log.upd({"sessionUpdate": "session_info_update", "title": None, "updatedAt": 5})
    assert log.session()["sessionInfo"] == {"updatedAt": "now?", "_meta": {"a": 1, "b": 2}}


def test_r33_usage_cost_omitted_keeps_null_clears_meta_replaced() -> None:
    log = Log()
    cost = {"amount": 0.5, "currency": "USD"}
    log.upd(
        {"sessionUpdate": "usage_update", "used": 1, "size": 10, "cost": cost, "_meta": {"a": 1}}
    )
    assert log.session()["usage"] == {"used": 1, "size": 10, "cost": cost, "_meta": {"a": 1}}
    log.upd({"sessionUpdate": "usage_update", "used": 2, "size": 10})
    assert log.session()["usage"] == {"used": 2, "size": 10, "cost": cost}
    log.upd({"sessionUpdate": "usage_update", "used": 3, "size": 11, "cost": None})
    assert log.session()["usage"] == {"used": 3, "size": 11}


def test_numbers_are_kept_as_received_in_the_snapshot() -> None:
    # SNAPSHOT.md: values exactly as received: an integral `amount` or `priority` is not 1.0.
    log = Log()
    log.upd(
        {
            "sessionUpdate": "usage_update",
            "used": 1,
            "size": 2,
            "cost": {"amount": 1, "currency": "USD"},
        }
    )
    block = text("x", annotations={"priority": 1})
    log.upd(msg("agent", "a", content=[block]))
    out = json.dumps(log.session())
    assert '"amount": 1,' in out and '"priority": 1}' in out


def test_9_4_usage_without_used_is_rejected() -> None:
    log = Log()
    events = log.upd({"sessionUpdate": "usage_update", "size": 10})
    assert isinstance(events[-1], UpdateRejected)
    assert "usage" not in log.session()


def test_13_5_usage_beyond_uint64_is_rejected_on_the_fast_path_too() -> None:
    conn = Connection(live=False)
    lines = [
        update({"sessionUpdate": "usage_update", "used": 1, "size": 2}),
        update({"sessionUpdate": "usage_update", "used": 2**64, "size": 2}),
        update({"sessionUpdate": "usage_update", "used": 2**64 - 1, "size": 2**64 - 1}),
    ]
    events = conn.receive_data(b"".join(json.dumps(x).encode() + b"\n" for x in lines))
    assert [type(e).__name__ for e in events][-3:] == [
        "UsageUpdated",
        "UpdateRejected",
        "UsageUpdated",
    ]
    assert conn.snapshot()["sessions"][0]["usage"] == {"used": 2**64 - 1, "size": 2**64 - 1}
    assert [d.code for d in conn.diagnostics] == ["update-rejected"]


def test_9_5_compaction_update_and_chunks() -> None:
    log = Log()
    log.upd(chunk("agent", "a", "before"))
    log.upd({"sessionUpdate": "compaction_update", "compactionId": "k", "status": "in_progress"})
    log.upd(chunk("agent", "b", "after"))
    events = log.upd(
        {
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": "k",
            "content": text("s1"),
            "_meta": {"chunk": 1},
        },
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "k", "content": text("s2")},
    )
    assert isinstance(events[0], CompactionChunkAppended) and not events[0].created
    assert log.entry("k") == {
        "entry": "compaction",
        "compactionId": "k",
        "status": "in_progress",
        "summary": [text("s1"), text("s2")],
    }
    log.upd(
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "k",
            "status": "failed",
            "error": "boom",
            "summary": [text("S")],
        }
    )
    assert log.entry("k") == {
        "entry": "compaction",
        "compactionId": "k",
        "status": "failed",
        "summary": [text("S")],
        "error": "boom",
    }
    log.upd(
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "k",
            "status": "failed",
            "error": None,
            "summary": None,
        }
    )
    assert log.entry("k") == {
        "entry": "compaction",
        "compactionId": "k",
        "status": "failed",
        "summary": [],
    }
    assert [e.get("messageId", e.get("compactionId")) for e in log.timeline()] == ["a", "k", "b"]


def test_r56_compaction_chunk_creates_in_progress_and_update_without_status_rejected() -> None:
    log = Log()
    log.upd(
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c2", "content": text("x")}
    )
    assert log.entry("c2")["status"] == "in_progress"
    events = log.upd({"sessionUpdate": "compaction_update", "compactionId": "c2", "summary": []})
    assert isinstance(events[-1], UpdateRejected)
    assert log.entry("c2")["summary"] == [text("x")]
    assert log.session()["unknownUpdates"] == []


def test_9_6_notices_are_events_not_history() -> None:
    log = Log()
    log.upd(state("running"))
    n1 = {"severity": "warning", "title": "MCP server unavailable", "description": "d"}
    n2 = {"severity": "_acme", "title": "x", "_meta": {"k": 1}}
    log.upd({"sessionUpdate": "notice", **n1}, {"sessionUpdate": "notice", **n2})
    snap = log.session()
    assert snap["notices"] == [n1, n2]
    assert snap["timeline"] == []
    assert snap["state"] == {"state": "running"}


def test_9_6_a_notice_field_sent_as_null_is_absent_but_unknown_nulls_are_data() -> None:
    log = Log()
    log.upd(
        {
            "sessionUpdate": "notice",
            "severity": "info",
            "title": "t",
            "description": None,
            "_meta": None,
            "futureX": None,
        }
    )
    assert log.session()["notices"] == [{"severity": "info", "title": "t", "futureX": None}]
    assert load_session(log.session()).snapshot() == log.session()


def test_9_6_notice_with_empty_title_is_rejected() -> None:
    log = Log()
    events = log.upd({"sessionUpdate": "notice", "severity": "info", "title": ""})
    assert isinstance(events[-1], UpdateRejected)
    assert log.session()["notices"] == []


# ---------------------------------------------------------------- 13 extensibility


def test_r35_unknown_fields_on_tool_calls_terminals_info_compactions_kept() -> None:
    log = Log()
    log.upd(
        tool("c1", futureX=1),
        term("t1", futureY={"a": 1}),
        {"sessionUpdate": "session_info_update", "futureZ": "z"},
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "k",
            "status": "completed",
            "futureW": [1],
        },
    )
    assert log.entry("c1")["futureX"] == 1
    assert log.terminal("t1")["futureY"] == {"a": 1}
    assert log.session()["sessionInfo"] == {"futureZ": "z"}
    assert log.entry("k")["futureW"] == [1]


def test_r35_an_unknown_field_named_like_a_snapshot_key_never_changes_its_meaning() -> None:
    log = Log()
    log.upd(
        {**msg("agent", "m1", excludedFromContext=True), "role": "user"},
        tool("c1", entry="message", futureX=1),
        term("t1", truncatedBytes=99),
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "k",
            "status": "completed",
            "excludedFromContext": True,
        },
    )
    message = log.entry("m1")
    assert "excludedFromContext" not in message and message["role"] == "agent"
    assert log.entry("c1")["entry"] == "toolCall" and log.entry("c1")["futureX"] == 1
    assert "excludedFromContext" not in log.entry("k")
    assert log.terminal("t1")["truncatedBytes"] == 0
    assert log.codes() == ["unknown-field-shadowed"] * 4
    live = log.sess().message("agent", "m1")
    assert not live.excluded and live.extra == {"excludedFromContext": True, "role": "user"}
    # the snapshot read back does not take the agent's field for the refusal flag
    reloaded = load_session(log.session())
    assert not reloaded.message("agent", "m1").excluded
    assert load_session(log.session()).snapshot() == log.session()
    log.upd({**msg("agent", "m1"), "excludedFromContext": None})  # removes it: nothing shadowed
    assert log.codes() == ["unknown-field-shadowed"] * 4
    assert log.sess().message("agent", "m1").extra == {"role": "user"}


def test_c13_trace_context_meta_keys_are_kept() -> None:
    log = Log()
    meta = {"traceparent": "00-1-2-01", "tracestate": "x=1", "baggage": "b=2"}
    log.upd(msg("agent", "a", _meta=meta))
    assert log.entry("a")["_meta"] == meta


def test_r44_same_id_string_in_different_domains_is_independent() -> None:
    log = Log()
    log.upd(
        chunk("agent", "x", "m"),
        tool("x"),
        term("x"),
        plan_items("x", "p"),
        {"sessionUpdate": "compaction_update", "compactionId": "x", "status": "completed"},
    )
    assert [e["entry"] for e in log.timeline()] == ["message", "toolCall", "compaction"]
    assert len(log.session()["terminals"]) == 1 and len(log.session()["plans"]) == 1


# ---------------------------------------------------------------- Session API


def test_session_apply_returns_one_event_per_update() -> None:
    session = Session("s")
    events = [apply(session, u) for u in ALL_KNOWN]
    assert len(events) == len(ALL_KNOWN)
    assert all(e.session_id == "s" for e in events)  # type: ignore[attr-defined]


def test_session_accessors_read_the_state() -> None:
    session = Session("s")
    apply(session, chunk("agent", "a", "x"))
    apply(session, tool("c"))
    apply(session, plan_items("p", "e"))
    apply(session, term_chunk("t", b"x"))
    assert [e.key for e in session.timeline] == [("agent", "a"), ("toolCall", "c")]
    assert list(session.tool_calls) == ["c"]
    assert list(session.plans) == ["p"]
    assert list(session.terminals) == ["t"]
    assert session.messages("agent")["a"].text() == "x"


def test_r54_item_leaving_background_without_final_status_is_a_diagnostic() -> None:
    from acp_client import Connection
    from acp_client.testing import FakeAgent, Loopback

    conn = Connection(live=False)
    script = FakeAgent("s").tool_call("c1", status="in_progress").terminal("t1", command="x")
    script.state("running", background=[{"type": "tool_call", "toolCallId": "c1"}])
    script.state("running", background=[{"type": "terminal", "terminalId": "t1"}])
    script.update({"sessionUpdate": "terminal_update", "terminalId": "t1", "exitStatus": {}})
    script.state("idle", stop_reason="end_turn", background=[])
    Loopback(conn).play(script)
    codes = [d.code for d in conn.diagnostics]
    assert codes == ["background-dropped-unfinished"]  # c1 dropped unfinished; t1 had exited
    call = conn.session("s").tool_calls["c1"]
    assert call.status == "in_progress"  # nothing inferred


# ---------------------------------------------------------------- 14.2 agent obligations


def test_a29_command_names_with_whitespace_or_twice_are_diagnosed_and_kept() -> None:
    log = Log()
    commands = [
        {"type": "command", "name": "ok", "description": "d"},
        {"type": "command", "name": "two words", "description": "d"},
        {"type": "command", "name": "ok", "description": "again"},
    ]
    log.upd({"sessionUpdate": "available_commands_update", "availableCommands": commands})
    assert log.codes() == ["invalid-commands", "invalid-commands"]
    assert log.sess().available_commands is not None
    assert len(log.sess().available_commands) == 3


def test_a19_select_current_value_not_listed_or_values_twice_are_diagnosed() -> None:
    log = Log()
    select = {"type": "select", "configId": "m", "name": "M"}
    good = {**select, "currentValue": "a", "options": [{"value": "a", "name": "A"}]}
    log.upd({"sessionUpdate": "config_option_update", "configOptions": [good]})
    assert log.codes() == []
    bad = {
        **select,
        "currentValue": "z",
        "options": [{"value": "a", "name": "A"}, {"value": "a", "name": "A2"}],
    }
    log.upd({"sessionUpdate": "config_option_update", "configOptions": [bad, good]})
    assert log.codes() == ["invalid-config"] * 3  # not listed, value twice, option twice


def test_a29_a19_hold_for_the_lists_of_setup_and_config_results_too() -> None:
    commands = [{"type": "command", "name": "two words", "description": "d"}]
    select = {"type": "select", "configId": "m", "name": "M", "currentValue": "z"}
    config = [{**select, "options": [{"value": "a", "name": "A"}]}]
    log = Log()
    log.client({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": NEW})
    log.agent(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"sessionId": SID, "availableCommands": commands, "configOptions": config},
        }
    )
    assert [(d.code, d.line) for d in log.conn.diagnostics] == [
        ("invalid-commands", 2),
        ("invalid-config", 2),
    ]
    params = {"sessionId": SID, "configId": "m", "type": "id", "value": "a"}
    log.client({"jsonrpc": "2.0", "id": 2, "method": "session/set_config_option", "params": params})
    log.agent({"jsonrpc": "2.0", "id": 2, "result": {"configOptions": config}})
    assert [(d.code, d.line) for d in log.conn.diagnostics][2:] == [("invalid-config", 4)]
    assert len(log.session()["availableCommands"]) == 1  # kept all the same
    assert log.session()["configOptions"][0]["currentValue"] == "z"


def test_a13_a24_relative_paths_from_the_agent_are_diagnosed() -> None:
    log = Log()
    log.upd(term("t1", cwd="/abs"), tool("c1", locations=[{"path": "/abs/f.py"}]))
    assert log.codes() == []
    log.upd(term("t2", cwd="rel"), tool("c2", locations=[{"path": "src/f.py"}]))
    assert log.codes() == ["relative-path", "relative-path"]
    assert log.terminal("t2")["cwd"] == "rel"


def test_a15_diff_paths_must_be_absolute() -> None:
    def diff(*changes: dict[str, Any]) -> dict[str, Any]:
        return {"type": "diff", "changes": list(changes)}

    log = Log()
    good = diff({"operation": "move", "oldPath": "/a/x.py", "path": "/a/y.py"})
    log.upd(tool("c1", content=[good]), tool_chunk("c1", good))
    assert log.codes() == []
    log.upd(tool("c2", content=[diff({"operation": "modify", "path": "src/f.py"})]))
    log.upd(tool_chunk("c2", diff({"operation": "copy", "oldPath": "rel/x", "path": "/a/x"})))
    assert log.codes() == ["relative-path", "relative-path"]
    assert "src/f.py" in log.conn.diagnostics[0].message


def test_a26_a_final_entity_that_still_offers_cancel_is_diagnosed() -> None:
    cancel = {"cancel": {}}
    log = Log()
    log.upd(tool("c1", status="in_progress", capabilities=cancel), term("t1", capabilities=cancel))
    log.upd(tool("c2", status="completed", capabilities={}))
    log.upd(term("t2", exitStatus={"exitCode": 0}, capabilities={"cancel": None}))
    assert log.codes() == []
    log.upd(tool("c1", status="completed"), term("t1", exitStatus={"exitCode": 1}))
    assert log.codes() == ["cancel-offered-when-final", "cancel-offered-when-final"]
    log.upd(tool("c1", capabilities={}), term("t1", capabilities={}))  # withdrawn: fine
    log.upd(tool("c1", title="t"))  # an unrelated field does not repeat it
    assert len(log.codes()) == 2


def test_a11_cancelled_work_ending_with_error_is_diagnosed() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"))
    live.cancel()
    live.upd(idle("error", error={"code": -32603, "message": "boom"}))
    assert "cancel-ended-with-error" in live.codes()
    assert live.session()["completedTurns"] == ["error"]


# ------------------------------------------- rules that mutation testing found unpinned


def test_4_3_chunk_meta_is_kept_when_chunks_arrive_in_one_read() -> None:
    # "an item is a ContentBlock plus the chunk _meta it arrived with": the batched path of
    # a read holding several chunks keeps it as one-at-a-time application does.
    lines = [
        update(chunk("agent", "m", "a")),
        update({**chunk("agent", "m", "b"), "_meta": {"k": 1}}),
        update({**chunk("agent", "m", "c"), "_meta": {"k": 2}}),
    ]
    batched = Connection(live=False)
    batched.receive_data(b"".join(json.dumps(x).encode() + b"\n" for x in lines))
    single = Connection(live=False)
    for x in lines:
        single.receive_data(json.dumps(x).encode() + b"\n")
    for conn in (batched, single):
        message = conn.session(SID).message("agent", "m")
        assert message.chunk_meta == {1: {"k": 1}, 2: {"k": 2}}


def test_8_5_an_output_snapshot_clears_the_truncation_count() -> None:
    # 8.5: "a later snapshot clears the flag" (SNAPSHOT.md truncatedBytes)
    session = Session("s", terminal_limit=10)
    apply(session, term_chunk("t", b"x" * 5000))
    assert session.terminals["t"].truncated_bytes == 4990
    apply(session, term("t", output={"data": b64(b"hi")}))
    assert session.terminals["t"].truncated_bytes == 0
    assert session.snapshot()["terminals"][0]["truncatedBytes"] == 0


def test_r32_meta_emptied_of_keys_means_no_metadata() -> None:
    # R32: "an object emptied of keys means no metadata" (absent in the snapshot)
    session = Session("s")
    apply(session, {"sessionUpdate": "session_info_update", "_meta": {"a": 1}})
    apply(session, {"sessionUpdate": "session_info_update", "_meta": {"a": None}})
    assert session.snapshot()["sessionInfo"] == {}
    apply(session, tool("c", _meta={"a": 1}))
    apply(session, tool("c", _meta={"a": None}))
    assert session.tool_calls["c"].meta is None
    assert "_meta" not in session.snapshot()["timeline"][0]


def test_r60_an_error_idle_with_a_null_error_object_drops_the_key() -> None:
    session = Session("s")
    apply(session, idle("error", error=None))
    assert session.snapshot()["state"] == {"state": "idle", "stopReason": "error"}


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({}, "sessionId"),
        (5, "sessionId"),
        ({"sessionId": "s", "timeline": [[]]}, "timeline[0]"),
        ({"sessionId": "s", "timeline": [{"entry": "message"}]}, "timeline[0]"),
        ({"sessionId": "s", "plans": [{}]}, "plans[0]"),
        ({"sessionId": "s", "timeline": 5}, "timeline"),
        ({"sessionId": "s", "prompts": 3}, "prompts"),
        (
            {"sessionId": "s", "terminals": [{"terminalId": "t", "truncatedBytes": 1e400}]},
            "terminals[0]",
        ),
        ({"sessionId": "s", "usage": {"used": "\ud800", "size": 1}}, "usage"),
        ({"sessionId": "s", "permissionRequests": [{"requestId": {}}]}, "permissionRequests[0]"),
        # not base64: a terminal update read it leniently, the load dropped the diagnostic
        ({"sessionId": "s", "terminals": [{"terminalId": "t", "output": "!!!"}]}, "terminals[0]"),
        ({"sessionId": "s", "terminals": [{"terminalId": "t", "output": "aGk"}]}, "terminals[0]"),
        ({"sessionId": "s", "terminals": [{"terminalId": "t", "output": 5}]}, "terminals[0]"),
        (
            {"sessionId": "s", "timeline": [{"entry": "message", "messageId": "m", "role": 5}]},
            "timeline[0]",
        ),
    ],
)
def test_load_session_refuses_what_is_no_snapshot_naming_the_field(data: Any, where: str) -> None:
    with pytest.raises(
        ValueError, match=f"not a snapshot@1 SESSION object: at `{re.escape(where)}`"
    ):
        load_session(data)


def test_load_session_names_a_role_it_does_not_know() -> None:
    # it was reported as "missing 'x'", a KeyError's text
    data = {"sessionId": "s", "timeline": [{"entry": "message", "messageId": "m", "role": "x"}]}
    with pytest.raises(ValueError, match="`timeline\\[0\\]`: role: expected 'user', 'agent' or"):
        load_session(data)


def test_two_unretained_entries_of_one_id_load_back_as_two() -> None:
    """An entry a replay dropped, reported again, and dropped by a later replay (12.3)."""
    log = Log()
    resume = {"cwd": "/w", "mcpServers": [], "sessionId": SID, "replayFrom": {"type": "start"}}
    log.upd(chunk("agent", "a", "first"))
    log.client({"jsonrpc": "2.0", "id": 1, "method": "session/resume", "params": resume})
    log.agent({"jsonrpc": "2.0", "id": 1, "result": {}})
    log.upd(chunk("agent", "a", "second"))
    log.client({"jsonrpc": "2.0", "id": 2, "method": "session/resume", "params": resume})
    log.agent({"jsonrpc": "2.0", "id": 2, "result": {}})
    session = log.session()
    assert [e["content"][0]["text"] for e in session["unretained"]] == ["first", "second"]
    assert load_session(session).snapshot() == session


def test_snapshot_keeps_an_unknown_permission_subject_and_fields_and_loads_them_back() -> None:
    # 11.1: a subject of an unknown type is kept raw; SNAPSHOT.md: so is what is not understood.
    log = Log()
    log.agent(
        permission(5, subject={"type": "_acme_subject", "n": 1}, _acme={"x": 1}, outcome="no")
    )
    (perm,) = log.session()["permissionRequests"]
    assert perm["subject"] == {"type": "_acme_subject", "n": 1} and perm["_acme"] == {"x": 1}
    assert "outcome" not in perm  # an unknown field never takes the object's own key
    assert log.codes() == ["unknown-field-shadowed"]
    reloaded = load_session(log.session())
    assert reloaded.snapshot() == log.session()
    assert reloaded.permission_requests[0].request.subject == {"type": "_acme_subject", "n": 1}
