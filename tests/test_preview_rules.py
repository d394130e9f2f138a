"""The v2 Preview's rules for inter-session messages, plans, references and the opt-in
features (docs/preview.md: P9 in part, P12-P15, P32-P46; scenarios B6, B16, B17, B23-B25).

Each scenario runs as ``test_bN_...`` against a passive or live ``Connection``; each rule has
at least one test naming it; the ordering rules of session messages have hypothesis
properties (any split into chunks, any interleaving with other sessions' traffic).
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from helpers import (
    SID,
    Live,
    Log,
    chunk,
    decode_update,
    error,
    idle,
    msg,
    plan_items,
    request,
    response,
    state,
    text,
    tool,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_client import Connection, load_session
from acp_client import events as ev

UNSTABLE = ("prompt_suggestions", "cursors", "unknown_state")
P, C = "sess_p", "sess_c"


def log_with(*sessions: str, unstable: tuple[str, ...] = UNSTABLE) -> Log:
    """A passive connection with the opt-in features, each session set up by ``session/new``."""
    log = Log()
    log.conn = Connection(live=False, unstable=unstable)
    for i, sid in enumerate(sessions, start=100):
        log.client(request(i, "session/new", {"cwd": "/w", "mcpServers": []}))
        log.agent(response(i, {"sessionId": sid}))
    return log


def sm(mid: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "session_message", "messageId": mid, **fields}


def sm_chunk(mid: str, t: str, **extra: Any) -> dict[str, Any]:
    return {"sessionUpdate": "session_message_chunk", "messageId": mid, "content": text(t), **extra}


def suggestions(*texts: str) -> dict[str, Any]:
    items = [{"prompt": [text(t)]} for t in texts]
    return {"sessionUpdate": "prompt_suggestions_update", "suggestions": items}


def cursor(cid: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "cursor_update", "cursorId": cid, **fields}


def anchor(mid: str, position: str = "after", kind: str = "user_message") -> dict[str, Any]:
    return {"type": kind, "messageId": mid, "position": position}


def resume(rid: int, *, replay: bool = True) -> dict[str, Any]:
    params: dict[str, Any] = {"sessionId": SID, "cwd": "/w", "mcpServers": []}
    if replay:
        params["replayFrom"] = {"type": "start"}
    return request(rid, "session/resume", params)


# ----------------------------------------------------------- inter-session messages


def test_b6_session_messages() -> None:
    log = log_with(P)
    log.upd(sm_chunk("sm1", "do X"), sid=C)
    log.upd(sm("sm1", senderSessionId=P, recipientSessionId=C, senderMessageId="pm9"), sid=C)
    log.upd(sm_chunk("sm1", " now"), sid=C)
    log.upd(msg("agent", "sm1", content=[text("T")]), sid=C)
    assert log.timeline(C) == [
        {
            "entry": "sessionMessage",
            "messageId": "sm1",
            "senderSessionId": P,
            "recipientSessionId": C,
            "senderMessageId": "pm9",
            "content": [text("do X"), text(" now")],
        },
        {"entry": "message", "messageId": "sm1", "role": "agent", "content": [text("T")]},
    ]
    assert "reference-to-unknown-session" not in log.codes()
    log.upd(sm("sm2", senderSessionId="ghost", content=[text("boo")]), sid=C)
    assert log.codes().count("reference-to-unknown-session") == 1
    assert "ghost" not in [s["sessionId"] for s in log.snap()["sessions"]]
    assert log.timeline(C)[-1]["senderSessionId"] == "ghost"


def test_p12_session_message_patches_participants_content_and_meta() -> None:
    log = log_with(P, C)
    log.upd(sm("m", senderSessionId=P, content=[text("a")], _meta={"a": 1, "b": 2}, x=1))
    events = log.upd(sm("m", senderSessionId=None, recipientSessionId=C, _meta={"b": None}))
    assert events == [ev.SessionMessageUpserted(SID, "m", False, "unchanged", index=0, version=2)]
    entry = log.timeline()[0]
    assert entry == {
        "entry": "sessionMessage",
        "messageId": "m",
        "recipientSessionId": C,
        "content": [text("a")],
        "_meta": {"a": 1},
        "x": 1,
    }
    log.upd(sm_chunk("m", "b"), sm("m", content=[text("c")]))
    assert log.timeline()[0]["content"] == [text("c")]  # an array replaces chunks too
    for cleared in (None, []):
        log.upd(sm_chunk("m", "d"), sm("m", content=cleared))
        assert log.timeline()[0]["content"] == []


def test_p12_session_messages_have_their_own_id_space() -> None:
    log = log_with()
    log.upd(chunk("user", "x", text("u")), chunk("agent", "x", text("a")), sm_chunk("x", "s"))
    entries = [(e["entry"], e.get("role")) for e in log.timeline()]
    assert entries == [("message", "user"), ("message", "agent"), ("sessionMessage", None)]


def test_p13_chunk_creates_a_message_with_participants_unset_and_keeps_chunk_meta() -> None:
    log = log_with(SID)
    (event,) = log.upd(sm_chunk("m", "a", _meta={"k": 1}))
    assert isinstance(event, ev.SessionMessageChunkAppended)
    assert (event.message_id, event.created) == ("m", True)
    assert log.timeline() == [{"entry": "sessionMessage", "messageId": "m", "content": [text("a")]}]
    assert log.sess().parts()[0].session_messages["m"].chunk_meta == {0: {"k": 1}}


def test_p14_outgoing_and_incoming_views_are_two_entities() -> None:
    log = log_with(P, C)
    log.upd(sm("out", recipientSessionId=C, recipientMessageId="in", content=[text("hi")]), sid=P)
    log.upd(sm("in", senderSessionId=P, senderMessageId="out", content=[text("hi")]), sid=C)
    assert [e["messageId"] for e in log.timeline(P)] == ["out"]
    assert [e["messageId"] for e in log.timeline(C)] == ["in"]
    assert log.timeline(P)[0]["recipientMessageId"] == "in"
    assert log.timeline(C)[0]["senderMessageId"] == "out"


def test_p15_a_session_message_is_never_a_user_message() -> None:
    log = log_with(SID)
    log.client(request(1, "session/prompt", {"sessionId": SID, "prompt": [text("hi")]}))
    log.upd(sm("u7", content=[text("hi")]))
    log.agent(response(1, {"messageId": "u7"}))
    prompt = log.session()["prompts"][0]
    assert prompt["echoed"] is False  # not linked to the session message
    log.upd(msg("user", "u7", content=[text("hi")]))
    assert log.session()["prompts"][0]["echoed"] is True


def _parts(content: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(content) + 1) for c in cuts} | {0, len(content)})
    return [content[a:b] for a, b in pairwise(points) if b > a]


@settings(max_examples=60, deadline=None)
@given(
    st.text(min_size=1, max_size=20),
    st.lists(st.integers(min_value=0, max_value=40), max_size=6),
    st.integers(min_value=0, max_value=6),
)
def test_p13_any_split_into_chunks_gives_the_same_entity(
    content: str, cuts: list[int], upsert_at: int
) -> None:
    """P13: a message streamed in any number of chunks, with its participants upserted
    before, between or after them, is one entity with the concatenated text."""
    parts = _parts(content, cuts)
    updates: list[dict[str, Any]] = [sm_chunk("m", p) for p in parts]
    updates.insert(min(upsert_at, len(updates)), sm("m", senderSessionId=P))
    log = log_with(P)
    log.upd(*updates)
    (entry,) = log.timeline()
    assert entry["senderSessionId"] == P
    assert "".join(b["text"] for b in entry["content"]) == content
    assert [b["text"] for b in entry["content"]] == parts


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_p12_p13_interleaving_with_other_sessions_traffic_changes_nothing(data: Any) -> None:
    """P12/P13 (and R6): another session's traffic, in any interleaving, never changes a
    session's inter-session messages."""
    mine = [sm_chunk("m", "a"), sm("m", senderSessionId=P), sm_chunk("m", "b"), sm_chunk("n", "c")]
    other = [sm_chunk("m", "x"), msg("agent", "m", content=[text("y")]), sm("m", content=None)]
    order = data.draw(
        st.permutations([("mine", i) for i in range(4)] + [("other", i) for i in range(3)])
    )
    # each session's own updates keep their order
    mine_order = iter(mine)
    other_order = iter(other)
    log = log_with(P, C)
    for who, _ in order:
        if who == "mine":
            log.upd(next(mine_order), sid=C)
        else:
            log.upd(next(other_order), sid=P)
    alone = log_with(P, C)
    alone.upd(*mine, sid=C)
    assert log.timeline(C) == alone.timeline(C)


# ------------------------------------------------------------------ references (P9)


def test_b25_tool_call_session_content_is_kept_and_unknown_reported() -> None:
    log = log_with(SID, C)
    log.upd(tool("t1", content=[{"type": "session", "sessionId": C}]))
    assert log.entry("t1")["content"] == [{"type": "session", "sessionId": C}]
    assert "reference-to-unknown-session" not in log.codes()
    log.upd(tool("t2", content=[{"type": "session", "sessionId": "nobody"}]))
    assert log.entry("t2")["content"] == [{"type": "session", "sessionId": "nobody"}]
    assert log.codes().count("reference-to-unknown-session") == 1
    assert "nobody" not in [s["sessionId"] for s in log.snap()["sessions"]]


def test_p9_references_never_create_a_session() -> None:
    log = log_with(SID)
    log.upd(sm("m", senderSessionId="a", recipientSessionId="b"))
    log.upd(tool("t", content=[{"type": "session", "sessionId": "c"}]))
    assert [s["sessionId"] for s in log.snap()["sessions"]] == [SID]
    assert log.codes().count("reference-to-unknown-session") == 3


# -------------------------------------------------------------------------- plans


def test_b24_plan_removed() -> None:
    log = log_with(unstable=())
    log.upd(plan_items("p1", "a"), plan_items("p2", "b"))
    events = log.upd({"sessionUpdate": "plan_removed", "planId": "p1"})
    assert events == [ev.PlanRemoved(SID, "p1", True)]
    assert [p["planId"] for p in log.session()["plans"]] == ["p2"]
    events = log.upd({"sessionUpdate": "plan_removed", "planId": "p9"})
    assert events == [ev.PlanRemoved(SID, "p9", False)]
    assert log.codes() == [] and [p["planId"] for p in log.session()["plans"]] == ["p2"]
    log.upd(plan_items("p1", "c"))
    assert [p["planId"] for p in log.session()["plans"]] == ["p2", "p1"]
    md = {"type": "markdown", "planId": "p3", "content": "# plan"}
    log.upd({"sessionUpdate": "plan_update", "plan": md})
    assert log.session()["plans"][-1] == {"planId": "p3", "plan": md}
    assert log.session()["unknownUpdates"] == []


def test_p45_removal_is_not_an_unknown_update_and_survives_a_snapshot() -> None:
    log = log_with(unstable=())
    log.upd(plan_items("p1", "a"), {"sessionUpdate": "plan_removed", "planId": "p1"})
    snap = log.session()
    assert snap["plans"] == [] and snap["unknownUpdates"] == []
    assert load_session(snap).snapshot() == snap


def test_p46_markdown_and_file_plans_replace_whole() -> None:
    log = log_with(unstable=())
    f = {"type": "file", "planId": "p", "uri": "file:///plan.md"}
    md = {"type": "markdown", "planId": "p", "content": "# x"}
    log.upd(
        {"sessionUpdate": "plan_update", "plan": f}, {"sessionUpdate": "plan_update", "plan": md}
    )
    assert log.session()["plans"] == [{"planId": "p", "plan": md}]


# -------------------------------------------------------------- prompt suggestions


def test_b16_suggestions() -> None:
    log = log_with(SID)
    events = log.upd(suggestions("X"))
    assert events == [ev.PromptSuggestionsUpdated(SID, 1)]
    assert log.session()["promptSuggestions"] == [{"prompt": [text("X")]}]
    log.client(request(1, "session/prompt", {"sessionId": SID, "prompt": [text("go")]}))
    assert log.session()["promptSuggestions"] == [{"prompt": [text("X")]}]
    log.upd(suggestions("Y", "Z"))
    assert [s["prompt"][0]["text"] for s in log.session()["promptSuggestions"]] == ["Y", "Z"]
    log.upd(suggestions())
    assert log.session()["promptSuggestions"] == []
    assert log.timeline() == []
    plain = log_with(SID, unstable=())
    plain.upd(suggestions("X"))
    assert plain.session()["unknownUpdates"] == [suggestions("X")]
    assert "promptSuggestions" not in plain.session()


def test_b17_suggestions_during_replay_are_not_applied() -> None:
    log = log_with(SID)
    log.upd(suggestions("old"))
    log.client(resume(9))
    assert "promptSuggestions" not in log.session()  # cleared at send (P38)
    events = log.upd(suggestions("X"))
    assert events == [ev.PromptSuggestionsUpdated(SID, 1, applied=False)]
    assert "suggestions-during-replay" in log.codes()
    assert "promptSuggestions" not in log.session()
    log.agent(response(9, {}))
    log.upd(suggestions("Y"))
    assert log.session()["promptSuggestions"] == [{"prompt": [text("Y")]}]


def test_b17_suggestions_after_the_marker_apply() -> None:
    log = log_with(SID)
    log.client(resume(9))
    log.upd({"sessionUpdate": "replay_complete"}, suggestions("Y"))
    assert log.session()["promptSuggestions"] == [{"prompt": [text("Y")]}]


def test_p34_malformed_items_dropped_non_array_rejected() -> None:
    log = log_with(SID)
    bad = {
        "sessionUpdate": "prompt_suggestions_update",
        "suggestions": [{"prompt": []}, {"prompt": [text("ok")]}],
    }
    log.upd(bad)
    assert log.session()["promptSuggestions"] == [{"prompt": [text("ok")]}]
    assert "skipped-invalid-item" in log.codes()
    events = log.upd({"sessionUpdate": "prompt_suggestions_update", "suggestions": {}})
    assert isinstance(events[0], ev.UpdateRejected)
    assert log.session()["promptSuggestions"] == [{"prompt": [text("ok")]}]


def test_p35_p36_suggestions_are_no_history_and_start_absent() -> None:
    log = log_with(SID)
    assert "promptSuggestions" not in log.session()
    ordinal = log.sess().ordinal
    log.upd(suggestions("a"), suggestions())
    assert log.sess().ordinal == ordinal + 2
    snap = log.session()
    assert snap["timeline"] == [] and snap["unretained"] == [] and snap["promptSuggestions"] == []


def test_p38_r84_resume_and_close_clear_the_list() -> None:
    log = log_with(SID)
    log.upd(suggestions("a"))
    log.client(resume(9, replay=False))
    assert "promptSuggestions" not in log.session()
    log.agent(response(9, {}))
    log.upd(suggestions("b"))
    log.client(request(10, "session/close", {"sessionId": SID}))
    assert log.session()["promptSuggestions"] == [{"prompt": [text("b")]}]  # not yet
    log.agent(error(10, -32603))
    assert log.session()["promptSuggestions"] == [{"prompt": [text("b")]}]  # failed close
    log.client(request(11, "session/close", {"sessionId": SID}))
    log.agent(response(11, {}))
    assert "promptSuggestions" not in log.session()


def test_p37_r83_suggestions_not_applied_while_replaying() -> None:
    log = log_with(SID)
    log.client(resume(3))
    log.upd(suggestions("stale"))
    assert log.codes().count("suggestions-during-replay") == 1


def test_p39_r85_suggestions_not_advertised_are_applied_with_a_warning() -> None:
    live = Live(initialize=False)
    live.conn = Connection(unstable=UNSTABLE)
    live.initialize()
    live.new_session()
    live.upd(suggestions("a"))
    assert live.session()["promptSuggestions"] == [{"prompt": [text("a")]}]
    assert live.codes() == ["suggestions-not-advertised"]
    advertised = Live(initialize=False)
    advertised.conn = Connection(unstable=UNSTABLE)
    advertised.initialize(session={"promptSuggestions": {}})
    advertised.new_session()
    advertised.upd(suggestions("a"))
    assert advertised.codes() == []
    passive = log_with(SID)
    passive.upd(suggestions("a"))
    assert "suggestions-not-advertised" not in passive.codes()


# ------------------------------------------------------------------------- cursors


def test_b23_cursors() -> None:
    log = log_with(SID)
    log.upd(msg("user", "u1", content=[text("hi")]))
    events = log.upd(cursor("c1", anchor=anchor("u1"), capabilities={"methods": ["a"]}))
    assert events == [ev.CursorUpserted(SID, "c1", True, version=2)]  # after the message's 1
    log.upd(cursor("c1", anchor=anchor("u1", "before")))
    assert log.codes() == ["cursor-anchor-changed"]
    log.upd(cursor("c1", capabilities=None))
    log.upd(cursor("c1", _meta={"a": 1}), cursor("c1", _meta={"b": 2}))
    assert log.session()["cursors"] == [
        {"cursorId": "c1", "anchor": anchor("u1"), "_meta": {"a": 1, "b": 2}}
    ]
    log.upd(cursor("c2"))
    assert log.codes()[-1] == "cursor-without-anchor"
    log.upd(cursor("c3", anchor=anchor("u9")))
    assert log.codes()[-1] == "cursor-anchor-unresolved"
    assert [e["messageId"] for e in log.timeline()] == ["u1"]
    assert [c["cursorId"] for c in log.session()["cursors"]] == ["c1", "c2", "c3"]


def test_p40_cursors_are_no_timeline_entries_and_absent_until_seen() -> None:
    log = log_with(SID)
    assert "cursors" not in log.session()
    log.upd(cursor("c", anchor={"type": "tool_call", "toolCallId": "t", "position": "before"}))
    assert log.timeline() == [] and len(log.session()["cursors"]) == 1


def test_p41_first_anchor_stored_later() -> None:
    log = log_with(SID)
    log.upd(msg("agent", "a1", content=[text("x")]))
    log.upd(cursor("c"), cursor("c", anchor=anchor("a1", kind="agent_message")))
    assert log.session()["cursors"][0]["anchor"] == anchor("a1", kind="agent_message")
    assert log.codes() == ["cursor-without-anchor"]


def test_p42_equal_anchor_is_nothing_malformed_rejects_unknown_type_raw() -> None:
    log = log_with(SID)
    log.upd(msg("user", "u1", content=[text("x")]))
    log.upd(cursor("c", anchor=anchor("u1")), cursor("c", anchor=anchor("u1")))
    assert log.codes() == []
    events = log.upd(cursor("d", anchor={"type": "tool_call", "position": "after"}))
    assert isinstance(events[0], ev.UpdateRejected)
    assert [c["cursorId"] for c in log.session()["cursors"]] == ["c"]
    custom = {"type": "_region", "line": 3}
    log.upd(cursor("e", anchor=custom))
    assert log.session()["cursors"][-1] == {"cursorId": "e", "anchor": custom}


def test_p43_capabilities_patch_meta_patch_unresolved_creates_nothing() -> None:
    log = log_with(SID)
    log.upd(cursor("c", anchor=anchor("m", kind="session_message"), capabilities={"a": 1}))
    assert log.codes() == ["cursor-anchor-unresolved"]
    log.upd(cursor("c", capabilities={"b": 2}))
    assert log.session()["cursors"][0]["capabilities"] == {"b": 2}
    log.upd(cursor("c"))
    assert log.session()["cursors"][0]["capabilities"] == {"b": 2}
    assert log.timeline() == []


def test_p44_r86_cursors_not_announced_again_are_dropped_at_the_end_of_a_replay() -> None:
    log = log_with(SID)
    log.upd(msg("user", "u1", content=[text("x")]))
    log.upd(cursor("keep", anchor=anchor("u1")), cursor("drop", anchor=anchor("u1")))
    log.client(resume(9))
    log.upd(msg("user", "u1", content=[text("x")]))
    log.upd(cursor("keep", anchor=anchor("u1", "before")))  # compared to the stored anchor
    assert log.codes() == ["cursor-anchor-changed"]
    log.agent(response(9, {}))
    assert [c["cursorId"] for c in log.session()["cursors"]] == ["keep"]
    assert log.session()["cursors"][0]["anchor"] == anchor("u1")
    assert log.session()["unretained"] == []
    log.client(resume(10))
    log.agent(response(10, {}))
    assert log.session()["cursors"] == []  # seen once: the key stays, empty


# ------------------------------------------------------------------ unknown state


def test_b25_unknown_state() -> None:
    log = log_with(SID)
    log.upd(state("running"), state("unknown"))
    snap = log.session()
    assert snap["state"] == {"state": "unknown"}
    assert snap["lastKnownState"] == {"state": "running"}
    assert log.sess().idle is None
    events = log.upd(idle("end_turn"))
    assert events[0].turn_completed is True  # type: ignore[attr-defined]
    assert log.session()["completedTurns"] == ["end_turn"]
    assert "lastKnownState" not in log.session()
    log.upd(state("unknown"), idle("end_turn"))
    assert log.session()["completedTurns"] == ["end_turn"]


def test_p32_unknown_keeps_cancel_requested_and_the_first_last_known() -> None:
    log = log_with(SID)
    log.upd(state("running"))
    log.client({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": SID}})
    log.upd(state("unknown", background=[]), state("unknown"))
    assert log.sess().cancel_requested is True
    assert log.session()["lastKnownState"] == {"state": "running"}
    assert log.sess().background is None  # the second one reported none


def test_p33_r82_running_after_unknown_starts_work_only_after_idle() -> None:
    log = log_with(SID)
    log.upd(state("running"), state("unknown"), state("running"), idle("end_turn"))
    assert log.session()["completedTurns"] == ["end_turn"]
    log.upd(state("unknown"), state("requires_action"), idle("end_turn"))
    assert log.session()["completedTurns"] == ["end_turn", "end_turn"]
    log.upd(state("_busy"), state("unknown"), idle("end_turn"))
    assert len(log.session()["completedTurns"]) == 3


def test_p32_without_the_opt_in_unknown_is_a_custom_state() -> None:
    log = log_with(SID, unstable=())
    log.upd(state("running"), state("unknown", background=[]))
    snap = log.session()
    assert snap["state"] == {"state": "unknown", "background": []}
    assert "lastKnownState" not in snap


# --------------------------------------------------------------------- snapshots


def test_preview_snapshot_keys_load_back() -> None:
    log = log_with(SID, C)
    log.upd(msg("user", "u1", content=[text("x")]), state("running"), state("unknown"))
    log.upd(sm("sm", senderSessionId=C, content=[text("hi")], _meta={"k": 1}))
    log.upd(suggestions("a"), cursor("c", anchor=anchor("u1"), capabilities={}, _z=1))
    snap = log.session()
    assert {"promptSuggestions", "cursors", "lastKnownState"} <= snap.keys()
    loaded = load_session(snap, unstable=UNSTABLE)
    assert loaded.snapshot() == snap
    loaded.apply(decode_update(idle("end_turn")))
    assert loaded.completed_turns == ["end_turn"]  # the last known `running` decides


def test_x0_streams_without_preview_elements_have_no_new_keys() -> None:
    log = log_with(SID)
    log.upd(msg("user", "u", content=[text("x")]), state("running"), idle("end_turn"))
    assert not {"promptSuggestions", "cursors", "lastKnownState"} & log.session().keys()


# --------------------------------------------------------------------- properties

_ANCHORS = st.sampled_from(
    [anchor("u1"), anchor("u1", "before"), anchor("a1", kind="agent_message")]
)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {},
            optional={
                "anchor": _ANCHORS,
                "capabilities": st.none() | st.dictionaries(st.sampled_from("xy"), st.integers()),
                "_meta": st.none()
                | st.dictionaries(st.sampled_from("ab"), st.none() | st.integers()),
            },
        ),
        min_size=1,
        max_size=8,
    )
)
def test_p41_p42_p43_a_cursor_is_its_first_anchor_and_its_patched_fields(
    updates: list[dict[str, Any]],
) -> None:
    """Whatever the sequence of updates: the anchor is the first one sent (P41, P42), the
    capabilities the last value sent (P43), ``_meta`` the META-PATCH of every one (P43)."""
    log = log_with(SID)
    log.upd(*(cursor("c", **u) for u in updates))
    (got,) = log.session()["cursors"]
    anchors = [u["anchor"] for u in updates if "anchor" in u]
    assert got.get("anchor") == (anchors[0] if anchors else None)
    caps = [u["capabilities"] for u in updates if "capabilities" in u]
    assert got.get("capabilities") == (caps[-1] if caps else None)
    meta: dict[str, Any] | None = None
    for u in updates:
        if "_meta" not in u:
            continue
        if u["_meta"] is None:
            meta = None
        elif u["_meta"]:
            merged = {**(meta or {}), **u["_meta"]}
            meta = {k: v for k, v in merged.items() if v is not None} or None
    assert got.get("_meta") == meta
    changed = sum(1 for a in anchors[1:] if a != anchors[0])
    assert log.codes().count("cursor-anchor-changed") == changed


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.sampled_from(["p1", "p2", "p3"])), max_size=12))
def test_p45_plans_follow_updates_and_removals_in_order(ops: list[tuple[bool, str]]) -> None:
    """P45: the plans are those updated and not removed since, in the order each was
    (re)created; removing an unknown id changes nothing and reports nothing."""
    log = log_with(SID, unstable=())
    model: list[str] = []
    for remove, pid in ops:
        if remove:
            log.upd({"sessionUpdate": "plan_removed", "planId": pid})
            if pid in model:
                model.remove(pid)
        else:
            log.upd(plan_items(pid, "x"))
            if pid not in model:
                model.append(pid)
    assert [p["planId"] for p in log.session()["plans"]] == model
    assert log.codes() == []
