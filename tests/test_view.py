"""The event contract (docs/events.md, E1-E9) and the view helper ``acp_client.view``.

The property: a view kept only through the contract and the shipped helper equals the
snapshot (its timeline, terminals, plans and state) after every read, for generated
conversations with refusals and replays, every chunking of the bytes, and terminal
retention limits on and off. Then one example per rule, and the five precautions of
issue 22 that no view needs any more.
"""

from __future__ import annotations

import base64
import subprocess
import sys
from typing import Any

import msgspec
import pytest
from helpers import (
    SID,
    Live,
    b64,
    chunk,
    idle,
    line,
    msg,
    plan_items,
    ready,
    response,
    state,
    term,
    term_chunk,
    text,
    tool,
    tool_chunk,
    update,
)
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from acp_client import Connection, Session, events
from acp_client import schema as s
from acp_client.testing.strategies import byte_stream_splits, content_blocks, conversations
from acp_client.view import ContentRead, ConversationView, SessionView, TerminalRead

_ENC = msgspec.json.Encoder()
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------- comparing to the snapshot


def _blocks(items: list[Any]) -> list[Any]:
    return msgspec.to_builtins(items)  # type: ignore[no-any-return]


def view_parts(view: SessionView) -> dict[str, Any]:
    """What the view shows, in the snapshot's terms."""
    timeline = []
    for row in view.entries:
        kind, key_id = row.key
        entry: dict[str, Any] = {"entry": row.kind, "id": key_id, "blocks": _blocks(row.blocks)}
        if row.kind == "message":
            entry["role"] = kind
        if row.kind in ("toolCall", "compaction"):
            entry["status"] = row.fields["status"]
        entry["excluded"] = row.excluded
        timeline.append(entry)
    return {
        "timeline": timeline,
        "terminals": {
            t: base64.b64encode(bytes(v.data)).decode() for t, v in view.terminals.items()
        },
        "plans": {p: msgspec.to_builtins(plan) for p, plan in view.plans.items()},
        "state": view.state,
    }


def snapshot_parts(session: dict[str, Any]) -> dict[str, Any]:
    """The same parts of a SESSION snapshot object."""
    timeline = []
    for e in session["timeline"]:
        key_id = e.get("messageId", e.get("toolCallId", e.get("compactionId")))
        entry: dict[str, Any] = {
            "entry": e["entry"],
            "id": key_id,
            "blocks": e.get("content", e.get("summary")),
        }
        if e["entry"] == "message":
            entry["role"] = e["role"]
        if e["entry"] in ("toolCall", "compaction"):
            entry["status"] = e["status"]
        entry["excluded"] = e.get("excludedFromContext", False)
        timeline.append(entry)
    return {
        "timeline": timeline,
        "terminals": {t["terminalId"]: t["output"] for t in session["terminals"]},
        "plans": {p["planId"]: p["plan"] for p in session["plans"]},
        "state": session.get("state", {}).get("state"),
    }


def assert_view_is_the_snapshot(conn: Connection, view: ConversationView) -> None:
    for session in conn.snapshot()["sessions"]:
        shown = view.sessions[session["sessionId"]]
        assert view_parts(shown) == snapshot_parts(session)
        assert shown.resyncs == 0  # kept by the contract alone, never read again whole


# ------------------------------------------------------------------------ the property


def _runs(exchange: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Consecutive incoming messages joined into one byte run (one read may hold many)."""
    out: list[tuple[str, Any]] = []
    for direction, message in exchange:
        if direction == "incoming":
            data = _ENC.encode(message) + b"\n"
            if out and out[-1][0] == "incoming":
                out[-1] = ("incoming", out[-1][1] + data)
            else:
                out.append(("incoming", data))
        else:
            out.append((direction, message))
    return out


@PROPERTY
@given(
    conversations(resume=None, max_turns=3, replay_markers=True),
    st.sampled_from([None, 1, 7, 64]),
    st.data(),
)
def test_e8_a_view_kept_by_events_equals_the_snapshot_after_every_read(
    exchange: list[tuple[str, Any]], limit: int | None, data: st.DataObject
) -> None:
    fold_every_read(Connection(live=False, terminal_limit=limit), exchange, data)


def fold_every_read(conn: Connection, exchange: list[tuple[str, Any]], data: st.DataObject) -> None:
    """Feed ``exchange`` in reads drawn anywhere; the view is the snapshot after each one."""
    view = ConversationView(conn)
    for direction, item in _runs(exchange):
        if direction == "outgoing":
            view.apply_all(conn.receive_message(item, "outgoing"))
            assert_view_is_the_snapshot(conn, view)
            continue
        for read in data.draw(byte_stream_splits(item)):
            view.apply_all(conn.receive_data(read))
            assert_view_is_the_snapshot(conn, view)


@PROPERTY
@given(
    conversations(resume=None, max_turns=3, session_messages=True),
    st.sampled_from([None, 5]),
    st.lists(st.booleans(), min_size=1),
)
def test_e1_e8_a_view_that_folds_late_catches_up(
    exchange: list[tuple[str, Any]], limit: int | None, folds: list[bool]
) -> None:
    """A transport's event stream may lag: the state is then ahead of the events folded
    (several reads, a replay begun, entries a later read excluded); once every event is
    folded, the view is the snapshot."""
    conn = Connection(live=False, terminal_limit=limit)
    view = ConversationView(conn)
    waiting: list[Any] = []
    for n, (direction, item) in enumerate(_runs(exchange)):
        if direction == "outgoing":
            waiting += conn.receive_message(item, "outgoing")
        else:
            waiting += conn.receive_data(item)
        if folds[n % len(folds)]:
            view.apply_all(waiting)
            waiting.clear()
            assert_view_is_the_snapshot(conn, view)
    view.apply_all(waiting)
    assert_view_is_the_snapshot(conn, view)


@PROPERTY
@given(conversations(resume=True, max_turns=2, session_messages=True), st.sampled_from([None, 3]))
def test_e4_e7_replays_read_whole_keep_the_view_equal(
    exchange: list[tuple[str, Any]], limit: int | None
) -> None:
    """Each run of the agent's messages in one read: a replay's removals and re-creations
    and the updates around them all come back from one ``receive_data``."""
    conn = Connection(live=False, terminal_limit=limit)
    view = ConversationView(conn)
    for direction, item in _runs(exchange):
        if direction == "outgoing":
            view.apply_all(conn.receive_message(item, "outgoing"))
        else:
            view.apply_all(conn.receive_data(item))
        assert_view_is_the_snapshot(conn, view)


# ----------------------------------------------------------------------- E1 versions


def test_e1_every_change_gives_the_entity_a_newer_version_that_its_event_carries() -> None:
    conn = ready(SID)
    got = conn.receive_data(
        b"".join(
            line(update(u))
            for u in (chunk("agent", "a", "x"), chunk("agent", "a", "y"), msg("agent", "a"))
        )
    )
    message = conn.session(SID).message("agent", "a")
    assert message is not None
    versions = [
        e.version
        for e in got
        if isinstance(e, events.MessageChunkAppended | events.MessageUpserted)
    ]
    assert versions == sorted(versions) and len(set(versions)) == 3
    assert versions[-1] == message.version  # the last event is the entity as it is now


def test_e1_a_run_and_one_by_one_give_the_same_versions() -> None:
    updates = [chunk("agent", "a", str(n)) for n in range(5)] + [
        term_chunk("t", f"{n}".encode()) for n in range(5)
    ]
    whole, one = ready(SID), ready(SID)
    one.receive_data(line(update(term("t"))))
    whole.receive_data(line(update(term("t"))))
    batch = whole.receive_data(b"".join(line(update(u)) for u in updates))
    single = [e for u in updates for e in one.receive_data(line(update(u)))]
    assert batch == single


def test_e1_versions_grow_across_a_replay_for_the_same_key() -> None:
    live = Live()
    live.new_session()
    live.upd(chunk("agent", "a", "before"))
    old = live.conn.session(SID).message("agent", "a")
    assert old is not None
    _, data = live.conn.send_resume(SID, "/w")
    live.wrote(data)
    live.upd(chunk("agent", "a", "again"))
    new = live.conn.session(SID).message("agent", "a")
    assert new is not None and new is not old and new.version > old.version


def test_e1_the_cancel_mark_is_a_change_named_by_cancel_requested() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"), tool("c1", status="in_progress"))
    call = live.conn.session(SID).tool_calls["c1"]
    before = call.version
    live.cancel()
    sent = live.conn.take_sent_events()
    assert events.CancelRequested(session_id=SID, tool_call_ids=("c1",)) in sent
    assert call.version > before and call.effective_status == "cancelled"


# ---------------------------------------------------------------------- E2 positions


def test_e2_events_name_the_entry_position() -> None:
    conn = ready(SID)
    got = conn.receive_data(
        b"".join(
            line(update(u))
            for u in (
                msg("user", "u", content=[text("hi")]),
                tool("c1"),
                chunk("agent", "a", "x"),
                tool_chunk("c1", {"type": "content", "content": text("out")}),
            )
        )
    )
    assert [(type(e).__name__, e.index, e.created) for e in got] == [
        ("MessageUpserted", 0, True),
        ("ToolCallUpserted", 1, True),
        ("MessageChunkAppended", 2, True),
        ("ToolCallChunkAppended", 1, False),
    ]
    assert [e.index for e in conn.session(SID).timeline] == [0, 1, 2]


# -------------------------------------------------------------- E3 entries changed


def test_e3_a_refusal_names_the_range_it_excluded_not_what_came_after() -> None:
    """Precaution 1: the refusal's range ends where the timeline ended at the refusal."""
    conn = ready(SID)
    view = ConversationView(conn)
    got = conn.receive_data(
        b"".join(
            line(update(u))
            for u in (
                chunk("user", "u1", "do it"),
                state("running"),
                chunk("agent", "a1", "no"),
                idle("refusal"),
                chunk("user", "u2", "later"),  # same read, after the refusal
            )
        )
    )
    changed = [e for e in got if isinstance(e, events.EntriesChanged)]
    assert changed == [events.EntriesChanged(SID, 0, 2, "refusal")]
    assert (
        got.index(changed[0])
        == got.index(next(e for e in got if isinstance(e, events.StateChanged) and e.stop_reason))
        + 1
    )
    view.apply_all(got)
    assert [row.excluded for row in view.sessions[SID].entries] == [True, True, False]
    assert_view_is_the_snapshot(conn, view)


# -------------------------------------------------------------- E4 entries removed


def _resumed_in_one_read(
    view_first: bool,
) -> tuple[Connection, ConversationView, list[Any], list[Any]]:
    live = Live()
    live.new_session()
    live.upd(
        chunk("user", "u1", "hi"),
        chunk("agent", "a1", "hello"),
        term("t1", output={"data": b64("$ ")}),
        plan_items("p1", "step"),
    )
    view = ConversationView(live.conn)
    rid, _ = live.conn.send_resume(SID, "/w")
    sent = live.conn.take_sent_events()
    if view_first:
        view.apply_all(sent)
    replay = [chunk("user", "u1", "hi"), chunk("agent", "a1", "hello"), idle()]
    got = live.conn.receive_data(
        b"".join(line(update(u)) for u in replay) + line(response(rid, {}))
    )
    return live.conn, view, sent + got if not view_first else got, sent


def test_e4_a_replay_removes_the_entries_terminals_and_plans_before_it_starts() -> None:
    conn, view, got, sent = _resumed_in_one_read(view_first=True)
    removed = [e for e in sent if isinstance(e, events.EntriesRemoved)]
    assert removed == [events.EntriesRemoved(SID, 0, 2, "replay", ("t1",), ("p1",))]
    view.apply_all(got)
    assert_view_is_the_snapshot(conn, view)
    assert [row.text for row in view.sessions[SID].entries] == ["hi", "hello"]
    assert view.sessions[SID].terminals == {} and view.sessions[SID].plans == {}


def test_e4_removed_comes_just_before_replay_started() -> None:
    live = Live()
    live.new_session()
    live.upd(chunk("user", "u1", "hi"), term("t1"))
    live.conn.send_resume(SID, "/w")
    sent = live.conn.take_sent_events()
    at = next(i for i, e in enumerate(sent) if isinstance(e, events.ReplayStarted))
    assert sent[at - 1] == events.EntriesRemoved(SID, 0, 1, "replay", ("t1",), ())


# ----------------------------------------------------------------- E5 terminal offsets


def test_e5_offsets_are_absolute_and_keep_counting_past_the_retention_limit() -> None:
    """Precaution 3: ``len(output)`` freezes at the limit; ``end`` keeps counting."""
    session = Session(SID, terminal_limit=8)
    decoder = _decoder()
    offset = 0
    for n in range(200):
        session.apply(decoder(term_chunk("t", f"{n:03d}".encode())))
        terminal = session.terminals["t"]
        read = terminal.read(offset)
        assert read.data == f"{n:03d}".encode() and read.start == offset
        offset = read.end
    assert offset == terminal.end == 600 and len(terminal.output) == 8
    assert terminal.start == 592 and terminal.read(0) == TerminalRead(terminal.output, 592, 600)


def test_e5_a_snapshot_takes_new_offsets_and_a_bad_offset_is_an_error() -> None:
    session = Session(SID)
    decoder = _decoder()
    session.apply(decoder(term_chunk("t", b"abc")))
    session.apply(decoder(term("t", output={"data": b64("XY")})))
    terminal = session.terminals["t"]
    assert (terminal.start, terminal.end) == (3, 5)
    assert terminal.read(3) == TerminalRead(b"XY", 3, 5)
    assert terminal.read(1).start == 3  # what came before 3 is gone
    with pytest.raises(ValueError, match="offset 6"):
        terminal.read(6)


def test_e5_following_a_terminal_copies_each_byte_once() -> None:
    """Counting, not timing: the view's reads return every byte exactly once."""
    conn = ready(SID)
    view = ConversationView(conn)
    conn.receive_data(line(update(term("t"))))
    copied = 0
    original = type(conn.session(SID).terminals["t"]).read

    def counting(self: Any, since: int = 0) -> TerminalRead:
        nonlocal copied
        read = original(self, since)
        copied += len(read.data)
        return read

    type(conn.session(SID).terminals["t"]).read = counting  # type: ignore[method-assign]
    try:
        for batch in range(50):
            data = b"".join(
                line(update(term_chunk("t", f"{batch}:{n};".encode()))) for n in range(40)
            )
            view.apply_all(conn.receive_data(data))
    finally:
        type(conn.session(SID).terminals["t"]).read = original  # type: ignore[method-assign]
    assert copied == conn.session(SID).terminals["t"].end
    assert_view_is_the_snapshot(conn, view)


# ----------------------------------------------------------------- E6 content indices


def test_e6_content_since_counts_every_block_and_a_replacement_starts_after() -> None:
    session = Session(SID)
    decoder = _decoder()
    for piece in ("a", "b", "c"):
        session.apply(decoder(chunk("agent", "m", piece)))
    message = session.message("agent", "m")
    assert message is not None
    assert message.content_since(1) == ContentRead(
        [s.TextContent(text="b"), s.TextContent(text="c")], 1, 3
    )
    session.apply(decoder(msg("agent", "m", content=[text("Z")])))
    assert (message.content_start, message.content_end) == (3, 4)
    assert message.content_since(2) == ContentRead([s.TextContent(text="Z")], 3, 4)
    session.apply(decoder(msg("agent", "m", content=[])))
    assert (message.content_start, message.content_end) == (4, 4)
    with pytest.raises(ValueError, match="index 5"):
        message.content_since(5)


def test_e6_a_compaction_summary_has_the_same_indices() -> None:
    session = Session(SID)
    decoder = _decoder()
    summary = {"sessionUpdate": "compaction_summary_chunk", "compactionId": "k"}
    for piece in ("a", "b"):
        session.apply(decoder({**summary, "content": text(piece)}))
    update = {"sessionUpdate": "compaction_update", "compactionId": "k", "status": "completed"}
    session.apply(decoder({**update, "summary": [text("short")]}))
    compaction = session.compactions["k"]
    assert compaction.summary_since(0) == ContentRead([s.TextContent(text="short")], 2, 3)
    view = SessionView(session)
    assert view.entries[0].blocks == [s.TextContent(text="short")]
    assert view.entries[0].fields == {"status": "completed", "error": None}


def test_e6_the_replace_then_append_read_gives_the_right_text() -> None:
    """The issue's wrong texts: one read with a chunk, a replacing upsert and chunks."""
    conn = ready(SID)
    view = ConversationView(conn)
    view.apply_all(conn.receive_data(line(update(chunk("agent", "m", "Hello")))))
    got = conn.receive_data(
        b"".join(
            line(update(u))
            for u in (
                chunk("agent", "m", " world"),
                msg("agent", "m", content=[text("(replaced)")]),
                chunk("agent", "m", " + appended"),
            )
        )
    )
    view.apply_all(got)
    assert view.sessions[SID].entries[0].text == "(replaced) + appended"
    assert_view_is_the_snapshot(conn, view)


# -------------------------------------------------------------------- E7 creation


def test_e7_created_never_names_a_row_the_view_has() -> None:
    """Precaution 2: after a replay, created=True comes for rows the view removed."""
    conn, view, got, _ = _resumed_in_one_read(view_first=False)
    seen = 0
    for event in got:
        if getattr(event, "created", False) and hasattr(event, "index"):
            rows = view.sessions[SID].entries
            assert event.index == len(rows)
            assert all(row.key[1] != getattr(event, "message_id", None) for row in rows)
            seen += 1
        view.apply(event)
    assert seen == 2
    assert_view_is_the_snapshot(conn, view)


# ----------------------------------------------------------------- E9 typed payloads


@given(content_blocks())
@example({"type": "_acme/chart", "series": [1]})
def test_e9_every_content_block_answers_its_type(block: dict[str, Any]) -> None:
    """Precaution 4: known and unknown blocks alike."""
    session = Session(SID)
    event = session.apply(_decoder()(chunk("agent", "m", block)))
    assert isinstance(event, events.MessageChunkAppended)
    assert event.block.type == block["type"]
    assert session.message("agent", "m").content[0].type == block["type"]  # type: ignore[union-attr]


def test_e9_tool_call_items_answer_their_type() -> None:
    session = Session(SID)
    decoder = _decoder()
    items = [
        {"type": "content", "content": text("x")},
        {"type": "terminal", "terminalId": "t"},
        {"type": "_custom", "x": 1},
    ]
    for item in items:
        session.apply(decoder(tool_chunk("c", item)))
    assert [i.type for i in session.tool_calls["c"].content] == ["content", "terminal", "_custom"]


def test_e9_the_schema_module_is_bound_after_import() -> None:
    """Precaution 5: ``acp_client.schema`` after a bare ``import acp_client``."""
    code = "import acp_client\nprint(acp_client.schema.TextContent(text='x').type)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "text"


# ---------------------------------------------------------------------- the helper


def test_e8_a_session_view_alone_and_the_public_surface() -> None:
    session = Session(SID)
    view = SessionView(session)
    decoder = _decoder()
    for u in (chunk("agent", "m", "a"), tool("c", title="Run", status="completed")):
        view.apply(session.apply(decoder(u)))
    assert [row.kind for row in view.entries] == ["message", "toolCall"]
    assert view.entries[1].fields == {"title": "Run", "kind": None, "status": "completed"}
    import acp_client

    assert acp_client.view.ConversationView is ConversationView  # type: ignore[attr-defined]


def test_e8_a_view_built_mid_way_reads_the_state_once() -> None:
    conn = ready(SID)
    conn.receive_data(line(update(chunk("agent", "m", "early"))))
    view = ConversationView(conn)
    view.apply_all(conn.receive_data(line(update(chunk("agent", "m", " late")))))
    assert view.sessions[SID].entries[0].text == "early late"
    assert_view_is_the_snapshot(conn, view)


def _decoder() -> Any:
    from acp_client import Decoder

    dec = Decoder()

    def one(upd: dict[str, Any]) -> Any:
        return dec.decode(_ENC.encode(update(upd))).params.update

    return one


def test_e4_a_child_joining_its_parents_replay_keeps_its_last_entries_in_the_view() -> None:
    """P16: the entries a child keeps are its last ones; they move to the front."""
    from test_preview_replay import MARKER, C, S, child_setup, preview_log, resume

    log = preview_log()
    child_setup(log)
    view = ConversationView(log.conn)
    start = len(log.events)
    resume(log)
    log.upd(msg("agent", "c1", content=[text("early")]), sid=C)  # after the request
    log.upd({"sessionUpdate": "subagent_update", "sessionId": C}, sid=S)
    log.upd(MARKER, sid=C)
    new = log.events[start:]
    assert events.EntriesRemoved(C, 0, 1, "replay") in new  # c0 left, c1 stayed
    view.apply_all(new)
    assert [row.key for row in view.sessions[C].entries] == [("agent", "c1")]
    assert_view_is_the_snapshot(log.conn, view)
