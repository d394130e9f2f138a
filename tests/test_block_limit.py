"""The retention limit of content blocks per entity: ``block_limit`` (issue 26; R93, 4.6).

Every chunk of a message is its own block (adjacent text blocks are never merged), so
nothing but this limit bounds what one long message holds. With ``block_limit=L`` each
message, tool call, compaction and session message keeps exactly its last ``L`` content
items after any update, however the updates were batched; the dropped ones move the
entity's first absolute index on (docs/events.md, E6) and are counted (``truncated_blocks``,
the snapshot's ``truncatedBlocks``, absent when 0); a replacing upsert starts the count
again. The first drop of each entity is one ``blocks-dropped`` warning, a terminal's first
dropped bytes one ``terminal-bytes-dropped``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from helpers import (
    SID,
    apply,
    chunk,
    line,
    msg,
    term,
    term_chunk,
    text,
    tool,
    tool_chunk,
    update,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_cli import run_cli as _cli
from test_replay_lane import _both, _Pieces, mixed_exchanges
from test_view import _runs, fold_every_read

from acp_client import Connection, MessageState, Session, load_session, replay_log
from acp_client.cli import RUN_BLOCK_LIMIT
from acp_client.testing.strategies import byte_stream_splits, conversations

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_ENC = msgspec.json.Encoder()
DROPPED = "blocks-dropped"


def _codes(conn: Connection) -> list[str]:
    return [d.code for d in conn.diagnostics]


def _message(session: Session, role: Any) -> MessageState:
    """The message ``m1`` of that role (it must exist)."""
    found = session.message(role, "m1")
    assert found is not None
    return found


def _feed(conn: Connection, updates: list[dict[str, Any]]) -> list[Any]:
    return conn.receive_data(b"".join(line(update(u)) for u in updates))


# ------------------------------------------------------------------ each kind of entity


@pytest.mark.parametrize("role", ["agent", "user", "thought"])
@pytest.mark.parametrize("one_read", [True, False])
def test_a_message_keeps_its_last_blocks_and_counts_the_rest(role: str, one_read: bool) -> None:
    conn = Connection(live=False, block_limit=3)
    chunks = [chunk(role, "m1", f"b{i}") for i in range(10)]
    if one_read:
        _feed(conn, chunks)
    else:
        for c in chunks:
            _feed(conn, [c])
    message = _message(conn.sessions[SID], role)
    assert [b.text for b in message.content] == ["b7", "b8", "b9"]  # type: ignore[union-attr]
    assert message.truncated_blocks == 7
    assert (message.content_start, message.content_end) == (7, 10)
    assert [b.text for b in message.content_since(0).blocks] == ["b7", "b8", "b9"]
    assert message.content_since(0).start == 7
    [entry] = conn.snapshot()["sessions"][0]["timeline"]
    assert entry["truncatedBlocks"] == 7
    assert entry["content"] == [text("b7"), text("b8"), text("b9")]
    assert _codes(conn) == [DROPPED]


def test_without_a_limit_nothing_is_dropped_and_no_key_is_written() -> None:
    conn = Connection(live=False)
    _feed(conn, [chunk("agent", "m1", f"b{i}") for i in range(50)])
    message = _message(conn.sessions[SID], "agent")
    assert len(message.content) == 50 and message.truncated_blocks == 0
    assert "truncatedBlocks" not in conn.snapshot()["sessions"][0]["timeline"][0]
    assert conn.diagnostics == []


def test_a_limit_of_zero_keeps_no_block_and_counts_every_one() -> None:
    conn = Connection(live=False, block_limit=0)
    _feed(conn, [chunk("agent", "m1", f"b{i}") for i in range(4)])
    message = _message(conn.sessions[SID], "agent")
    assert list(message.content) == [] and message.truncated_blocks == 4
    assert (message.content_start, message.content_end) == (4, 4)


def test_an_upsert_is_trimmed_and_a_replacing_or_clearing_one_resets_the_count() -> None:
    session = Session(SID, block_limit=2)
    apply(session, msg("agent", "m1", content=[text(f"b{i}") for i in range(5)]))
    message = _message(session, "agent")
    assert [b.text for b in message.content] == ["b3", "b4"]  # type: ignore[union-attr]
    assert message.truncated_blocks == 3 and message.content_start == 3
    apply(session, chunk("agent", "m1", "c"))
    assert message.truncated_blocks == 4
    apply(session, msg("agent", "m1", content=[text("new")]))  # replaced: counted afresh
    assert message.truncated_blocks == 0 and message.content_start == 6
    apply(session, msg("agent", "m1", content=[text(f"n{i}") for i in range(3)]))
    assert message.truncated_blocks == 1
    apply(session, msg("agent", "m1"))  # content omitted: unchanged, the count too
    assert message.truncated_blocks == 1
    apply(session, msg("agent", "m1", content=None))  # cleared
    assert message.truncated_blocks == 0 and list(message.content) == []
    # the first drop only was said
    assert [d.code for d in session.diagnostics] == [DROPPED]


def test_a_tool_calls_content_items_and_every_item_was_still_read() -> None:
    session = Session(SID, block_limit=1)
    anchor = {"type": "terminal", "terminalId": "t1"}
    apply(session, tool("c1", title="Run", content=[anchor, tool_chunk("c1", "x")["content"]]))
    call = session.tool_calls["c1"]
    assert len(call.content) == 1 and call.truncated_blocks == 1
    assert "t1" in session.terminals  # the dropped anchor created its terminal (R22)
    apply(session, tool_chunk("c1", "y"))
    apply(session, tool_chunk("c1", "z"))
    assert [item.content.text for item in call.content] == ["z"]  # type: ignore[union-attr]
    assert call.truncated_blocks == 3 and (call.content_start, call.content_end) == (3, 4)
    assert [d.message for d in session.diagnostics] == [
        "tool call 'c1' keeps its last 1 content blocks (block_limit); earlier blocks are"
        " dropped and counted in truncatedBlocks"
    ]


def test_a_compactions_summary_blocks() -> None:
    session = Session(SID, block_limit=2)
    for i in range(4):
        apply(
            session,
            {
                "sessionUpdate": "compaction_summary_chunk",
                "compactionId": "k",
                "content": text(f"s{i}"),
            },
        )
    comp = session.compactions["k"]
    assert [b.text for b in comp.summary] == ["s2", "s3"]  # type: ignore[union-attr]
    assert comp.truncated_blocks == 2 and comp.summary_since(0).start == 2
    summary = [text(f"w{i}") for i in range(3)]
    apply(
        session,
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "k",
            "status": "completed",
            "summary": summary,
        },
    )
    assert [b.text for b in comp.summary] == ["w1", "w2"]  # type: ignore[union-attr]
    assert comp.truncated_blocks == 1
    entry = session.snapshot()["timeline"][0]
    assert entry["truncatedBlocks"] == 1 and entry["summary"] == [text("w1"), text("w2")]


def test_a_session_messages_blocks() -> None:
    session = Session(SID, block_limit=1)
    apply(
        session,
        {"sessionUpdate": "session_message", "messageId": "sm", "content": [text("a"), text("b")]},
    )
    apply(
        session, {"sessionUpdate": "session_message_chunk", "messageId": "sm", "content": text("c")}
    )
    sm = session.parts()[0].session_messages["sm"]
    assert [b.text for b in sm.content] == ["c"]  # type: ignore[union-attr]
    assert sm.truncated_blocks == 2
    assert session.snapshot()["timeline"][0]["truncatedBlocks"] == 2
    assert [d.message.split(" keeps")[0] for d in session.diagnostics] == ["session message 'sm'"]


def test_chunk_meta_moves_with_its_block_and_goes_with_a_dropped_one() -> None:
    conn = Connection(live=False, block_limit=2)
    _feed(
        conn,
        [
            chunk("agent", "m1", "a", _meta={"n": 0}),
            chunk("agent", "m1", "b"),
            chunk("agent", "m1", "c", _meta={"n": 2}),
        ],
    )
    message = _message(conn.sessions[SID], "agent")
    assert message.chunk_meta == {1: {"n": 2}}  # "c" is now at position 1; "a"'s is gone
    _feed(conn, [chunk("agent", "m1", "d"), chunk("agent", "m1", "e")])
    assert message.chunk_meta is None


def test_every_kind_is_named_in_its_diagnostic_once() -> None:
    conn = Connection(live=False, block_limit=1)
    updates = []
    for _ in range(3):
        updates += [
            chunk("user", "u1", "x"),
            chunk("agent", "a1", "x"),
            chunk("thought", "t1", "x"),
            tool_chunk("c1", "x"),
            {
                "sessionUpdate": "compaction_summary_chunk",
                "compactionId": "k1",
                "content": text("x"),
            },
            {"sessionUpdate": "session_message_chunk", "messageId": "s1", "content": text("x")},
        ]
    _feed(conn, updates)
    named = [d.message.split(" keeps")[0] for d in conn.diagnostics]
    assert named == [
        "user message 'u1'",
        "agent message 'a1'",
        "agent thought 't1'",
        "tool call 'c1'",
        "compaction 'k1'",
        "session message 's1'",
    ]
    assert {d.severity for d in conn.diagnostics} == {"warning"}


# ------------------------------------------------------------- the diagnostic, its line


def _log(n: int) -> bytes:
    """A session's first update, then ``n`` chunks of one message (a run of the lane)."""
    head = line(update({"sessionUpdate": "state_update", "state": "running"}))
    return head + b"".join(line(update(chunk("agent", "m1", f"b{i}"))) for i in range(n))


@pytest.mark.parametrize("limit", [0, 1, 5, 9, 10])
@pytest.mark.parametrize("sizes", [[], [len(_log(0)), 1 << 16], [37]])
def test_the_diagnostic_names_the_line_that_passed_the_limit_in_any_reads(
    limit: int, sizes: list[int]
) -> None:
    # read first the session's line, then the chunks at once: the chunks are one run of the
    # lane (the session exists), which must still name the line of the chunk past the limit
    data = _log(10)
    fast, slow = _both(data, sizes, block_limit=limit)  # the lane and the per-record path
    assert fast == slow
    lines = [d["line"] for d in fast["snapshot"]["diagnostics"] if d["code"] == DROPPED]
    assert lines == ([limit + 2] if limit < 10 else [])  # chunk limit + 1, after line 1
    assert fast["snapshot"] == replay_log(data, block_limit=limit).snapshot()


def test_a_message_that_dropped_before_says_nothing_again() -> None:
    more = b"".join(line(update(chunk("agent", "m1", f"c{i}"))) for i in range(10))
    result = replay_log(_Pieces(_log(10) + more, [len(_log(0)), 1 << 16]), block_limit=3)
    assert [d.line for d in result.diagnostics] == [5]
    message = _message(result.replayer.connection.sessions[SID], "agent")
    assert message.truncated_blocks == 17


def test_a_terminal_says_once_that_its_limit_dropped_bytes() -> None:
    conn = Connection(live=False, terminal_limit=4)
    _feed(conn, [term_chunk("t1", b"abc"), term_chunk("t1", b"def")])
    assert _codes(conn) == ["terminal-bytes-dropped"]
    _feed(conn, [term_chunk("t1", b"ghi"), term("t1", output={"data": "YWJjZGVmZ2g="})])
    assert _codes(conn) == ["terminal-bytes-dropped"]  # once per terminal
    _feed(conn, [term("t2", output={"data": "YWJjZGVmZ2g="})])  # a snapshot over the limit
    assert _codes(conn) == ["terminal-bytes-dropped"] * 2
    assert "'t2' keeps its last 4 bytes (terminal_limit)" in conn.diagnostics[1].message
    quiet = Connection(live=False, terminal_limit=100)
    _feed(quiet, [term_chunk("t1", b"abc")] * 3)
    assert quiet.diagnostics == []


# ------------------------------------------- properties: a model of what is kept, and batching

KINDS = ["agent", "user", "thought", "tool", "compaction", "session"]


def _item(kind: str, n: int) -> dict[str, Any]:
    block = text(f"i{n}")
    return {"type": "content", "content": block} if kind == "tool" else block


def _upsert(kind: str, eid: str, items: Any = msgspec.UNSET) -> dict[str, Any]:
    """An upsert replacing the content with ``items`` (``None`` clears it; unset: omitted)."""
    fields = (
        {} if items is msgspec.UNSET else {"summary" if kind == "compaction" else "content": items}
    )
    if kind in ("agent", "user", "thought"):
        return msg(kind, eid, **fields)
    if kind == "tool":
        return tool(eid, **fields)
    if kind == "compaction":
        return {"sessionUpdate": "compaction_update", "compactionId": eid, "status": "x", **fields}
    return {"sessionUpdate": "session_message", "messageId": eid, **fields}


def _chunk(kind: str, eid: str, item: dict[str, Any], meta: Any) -> dict[str, Any]:
    extra = {"_meta": meta} if meta else {}
    if kind in ("agent", "user", "thought"):
        return chunk(kind, eid, item, **extra)
    if kind == "tool":
        return tool_chunk(eid, item, **extra)
    if kind == "compaction":
        return {
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": eid,
            "content": item,
            **extra,
        }
    return {"sessionUpdate": "session_message_chunk", "messageId": eid, "content": item, **extra}


Op = tuple[str, str, str, int, Any]


@st.composite
def histories(draw: st.DrawFn) -> list[Op]:
    """Operations ``(op, kind, id, n, meta)``: chunks (mostly), replacing, clearing and
    content-less upserts, over two entities of each kind."""
    ops = st.tuples(
        st.sampled_from(["chunk"] * 6 + ["replace", "clear", "touch"]),
        st.sampled_from(KINDS),
        st.sampled_from(["e1", "e2"]),
        st.integers(0, 6),
        st.sampled_from([None, None, {"k": 1}]),
    )
    return draw(st.lists(ops, max_size=60))


class _Model:
    """What one entity keeps under the limit, computed one operation at a time."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.items: list[tuple[dict[str, Any], Any]] = []  # (item, its chunk's _meta)
        self.dropped = 0
        self.ever_dropped = False
        self.end = 0  # every index ever taken (E6)

    def append(self, item: dict[str, Any], meta: Any) -> None:
        self.items.append((item, meta))
        self.end += 1
        if len(self.items) > self.limit:
            self.items.pop(0)
            self.dropped += 1
            self.ever_dropped = True

    def replace(self, items: list[dict[str, Any]]) -> None:
        self.end += len(items)
        kept = items[max(0, len(items) - self.limit) :] if self.limit else []
        self.items = [(item, None) for item in kept]
        self.dropped = len(items) - len(kept)
        self.ever_dropped = self.ever_dropped or self.dropped > 0


def _entity(session: Session, kind: str, eid: str) -> Any:
    tl = session.parts()[0]
    if kind in ("agent", "user", "thought"):
        return tl.messages[kind][eid]
    store: dict[str, Any] = {
        "tool": tl.tool_calls,
        "compaction": tl.compactions,
        "session": tl.session_messages,
    }
    return store[kind][eid]


def _items(entity: Any) -> list[Any]:
    items = entity.summary if hasattr(entity, "summary") else entity.content
    return msgspec.to_builtins(list(items))  # type: ignore[no-any-return]


def _play(history: list[Op], limit: int) -> tuple[list[bytes], dict[tuple[str, str], _Model]]:
    """The history as wire lines, and each entity's model under ``limit``."""
    models: dict[tuple[str, str], _Model] = {}
    lines: list[bytes] = []
    for n_op, (op, kind, eid, n, meta) in enumerate(history):
        model = models.setdefault((kind, eid), _Model(limit))
        if op == "chunk":
            item = _item(kind, n_op)
            model.append(item, meta)
            lines.append(line(update(_chunk(kind, eid, item, meta))))
        elif op == "replace":
            items = [_item(kind, 100 * n_op + i) for i in range(n)]
            model.replace(items)
            lines.append(line(update(_upsert(kind, eid, items))))
        elif op == "clear":
            model.replace([])
            lines.append(line(update(_upsert(kind, eid, None))))
        else:
            lines.append(line(update(_upsert(kind, eid))))
    return lines, models


@PROPERTY
@given(histories(), st.integers(0, 5), st.data())
def test_each_entity_keeps_exactly_what_the_model_keeps_however_the_reads_fall(
    history: list[Op], limit: int, data: st.DataObject
) -> None:
    lines, models = _play(history, limit)
    wire = b"".join(lines)
    split = Connection(live=False, block_limit=limit)
    for read in data.draw(byte_stream_splits(wire)) if wire else []:
        split.receive_data(read)
    whole = Connection(live=False, block_limit=limit)  # runs: the batched path
    whole.receive_data(wire)
    singly = Connection(live=False, block_limit=limit)  # one chunk at a time
    for each in lines:
        singly.receive_data(each)
    for conn in (split, whole, singly):
        for (kind, eid), model in models.items():
            entity = _entity(conn.sessions[SID], kind, eid)
            assert _items(entity) == [item for item, _ in model.items]
            assert entity.truncated_blocks == model.dropped
            start = model.end - len(model.items)
            assert (entity.content_start, entity.content_end) == (start, model.end)
            metas = {i: m for i, (_, m) in enumerate(model.items) if m}
            assert entity.chunk_meta == (metas or None)
        named = [d.message.split(" keeps")[0] for d in conn.diagnostics if d.code == DROPPED]
        assert len(named) == len(set(named)) == sum(m.ever_dropped for m in models.values())
    assert split.snapshot() == whole.snapshot() == singly.snapshot()
    replayed = replay_log(wire, block_limit=limit).snapshot()
    assert replayed["sessions"] == whole.snapshot()["sessions"]


# --------------------------------------------- generated conversations: limited = cut


def _cut(entry: dict[str, Any], limit: int) -> dict[str, Any]:
    """An unlimited snapshot's entry as the limit keeps it: the last ``limit`` items, and
    how many went (since the last replacing upsert, that is every item it holds now)."""
    key = "summary" if entry["entry"] == "compaction" else "content"
    items = entry[key]
    if len(items) <= limit:
        return entry
    out = dict(entry)
    out[key] = items[len(items) - limit :] if limit else []
    out["truncatedBlocks"] = len(items) - limit
    return out


def _expected(snapshot: dict[str, Any], limit: int) -> dict[str, Any]:
    out = copy.deepcopy(snapshot)
    for session in out["sessions"]:
        session["timeline"] = [_cut(e, limit) for e in session["timeline"]]
        session["unretained"] = [_cut(e, limit) for e in session["unretained"]]
    return out


def _feed_exchange(conn: Connection, exchange: list[tuple[str, Any]]) -> None:
    for direction, item in _runs(copy.deepcopy(exchange)):
        if direction == "outgoing":
            conn.receive_message(item, "outgoing")
        else:
            conn.receive_data(item)


@PROPERTY
@given(
    conversations(resume=None, close=None, session_messages=True, max_turns=3),
    st.integers(0, 5),
)
def test_a_limited_snapshot_is_the_unlimited_one_cut_to_the_last_blocks(
    exchange: list[tuple[str, Any]], limit: int
) -> None:
    free = Connection(live=False)
    _feed_exchange(free, exchange)
    kept = Connection(live=False, block_limit=limit)
    _feed_exchange(kept, exchange)
    mine, free_snap = kept.snapshot(), free.snapshot()
    mine["diagnostics"] = [d for d in mine["diagnostics"] if d["code"] != DROPPED]
    assert json.dumps(mine, sort_keys=True) == json.dumps(
        _expected(free_snap, limit), sort_keys=True
    )


@PROPERTY
@given(mixed_exchanges(), st.integers(0, 3), st.lists(st.integers(1, 4096), max_size=4))
def test_a_replay_under_a_limit_is_the_same_in_the_lane_and_record_by_record(
    exchange: list[tuple[str, Any]], limit: int, sizes: list[int]
) -> None:
    data = b"".join(_ENC.encode(m) + b"\n" for _, m in exchange)
    fast, slow = _both(data, sizes, block_limit=limit)
    assert fast == slow


@PROPERTY
@given(
    conversations(resume=None, max_turns=3, session_messages=True),
    st.integers(0, 3),
    st.data(),
)
def test_e8_a_view_equals_the_snapshot_after_every_read_under_a_block_limit(
    exchange: list[tuple[str, Any]], limit: int, data: st.DataObject
) -> None:
    fold_every_read(Connection(live=False, block_limit=limit), exchange, data)


# --------------------------------------------------------------- snapshot and restore


@PROPERTY
@given(conversations(resume=None, close=None, session_messages=True), st.integers(0, 3))
def test_a_snapshot_restores_with_its_counts(exchange: list[tuple[str, Any]], limit: int) -> None:
    conn = Connection(live=False, block_limit=limit)
    _feed_exchange(conn, exchange)
    snap = conn.snapshot()
    again = Connection.restore(json.loads(json.dumps(snap)), live=False, block_limit=limit)
    assert again.snapshot() == snap
    # no limit when restored: the counts come back all the same
    assert Connection.restore(snap, live=False).snapshot() == snap


def test_a_restored_entity_goes_on_counting_from_its_count_and_index() -> None:
    conn = Connection(live=False, block_limit=2)
    _feed(conn, [chunk("agent", "m1", f"b{i}") for i in range(5)])
    restored = Connection.restore(conn.snapshot(), live=False, block_limit=2)
    message = _message(restored.sessions[SID], "agent")
    assert message.truncated_blocks == 3 and message.content_start == 3
    _feed(restored, [chunk("agent", "m1", "b5")])
    _feed(conn, [chunk("agent", "m1", "b5")])
    assert restored.snapshot() == conn.snapshot()  # no second diagnostic: it was said
    assert message.truncated_blocks == 4 and message.content_end == 6


def test_a_smaller_limit_on_load_drops_more_and_adds_to_the_count() -> None:
    conn = Connection(live=False, block_limit=3)
    _feed(conn, [chunk("agent", "m1", f"b{i}") for i in range(5)])
    session = load_session(conn.snapshot()["sessions"][0], block_limit=1)
    message = _message(session, "agent")
    assert message.truncated_blocks == 4 and [b.text for b in message.content] == ["b4"]  # type: ignore[union-attr]


@pytest.mark.parametrize("bad", [-1, "3", 1.5, None])
def test_a_bad_count_in_a_snapshot_is_an_error_naming_where(bad: Any) -> None:
    conn = Connection(live=False, block_limit=1)
    _feed(conn, [chunk("agent", "m1", "a"), chunk("agent", "m1", "b")])
    data = conn.snapshot()["sessions"][0]
    data["timeline"][0]["truncatedBlocks"] = bad
    with pytest.raises(ValueError, match=r"timeline\[0\].*truncatedBlocks"):
        load_session(data)


def test_an_agents_field_named_truncated_blocks_is_never_read_as_the_count() -> None:
    conn = Connection(live=False)
    _feed(conn, [msg("agent", "m1", content=[text("a")], truncatedBlocks=7)])
    assert _codes(conn) == ["unknown-field-shadowed"]
    [entry] = conn.snapshot()["sessions"][0]["timeline"]
    assert "truncatedBlocks" not in entry  # left out: it would read back as a count
    assert _message(conn.sessions[SID], "agent").extra == {"truncatedBlocks": 7}


# ------------------------------------------------------------------------- memory


@pytest.mark.parametrize("how", ["reads", "replay"])
def test_a_message_of_200000_chunks_keeps_1000_blocks(how: str) -> None:
    one = line(update(chunk("agent", "m1", "x")))
    if how == "replay":
        result = replay_log(one * 200_000, block_limit=1000)
        session = result.replayer.connection.sessions[SID]
    else:
        conn = Connection(live=False, block_limit=1000)
        for _ in range(200):
            conn.receive_data(one * 1000)
        session = conn.sessions[SID]
    message = _message(session, "agent")
    assert len(message.content) == 1000 and len(message._content) == 1000
    assert message.truncated_blocks == 199_000 and message.content_end == 200_000


# ----------------------------------------------------------------- command line, views


def _mixed_log(tmp_path: Path) -> Path:
    log = tmp_path / "blocks.jsonl"
    updates = [chunk("agent", "m1", f"b{i}") for i in range(12)]
    updates += [tool_chunk("c1", f"x{i}") for i in range(5)]
    updates += [
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "k", "content": text(f"s{i}")}
        for i in range(4)
    ]
    log.write_bytes(b"".join(line(update(u)) for u in updates))
    return log


def test_replay_block_limit(tmp_path: Path) -> None:
    log = _mixed_log(tmp_path)
    out = _cli("replay", "--json", "--block-limit", "2", str(log))
    assert out.returncode == 0, out.stderr.decode()
    timeline = json.loads(out.stdout)["sessions"][0]["timeline"]
    assert [e["truncatedBlocks"] for e in timeline] == [10, 3, 2]
    assert timeline[0]["content"] == [text("b10"), text("b11")]
    plain = json.loads(_cli("replay", "--json", str(log)).stdout)["sessions"][0]["timeline"]
    assert all("truncatedBlocks" not in e for e in plain) and len(plain[0]["content"]) == 12


def test_replay_views_say_how_many_blocks_were_dropped(tmp_path: Path) -> None:
    log = _mixed_log(tmp_path)
    shown = _cli("replay", "--block-limit", "2", str(log))
    assert shown.returncode == 0, shown.stderr.decode()
    said = shown.stdout.decode()
    for count in (10, 3, 2):
        assert f"… {count:,} earlier blocks dropped (--block-limit)" in said
    assert said.index("10 earlier blocks dropped") < said.index("b10b11")
    page = tmp_path / "page.html"
    assert _cli("replay", "--block-limit", "2", "--html", str(page), str(log)).returncode == 0
    html = page.read_text()
    assert html.count("earlier blocks dropped (--block-limit)") == 3
    assert "earlier blocks dropped" not in _cli("replay", str(log)).stdout.decode()


def test_a_view_of_a_crafted_count_shows_a_number_only(tmp_path: Path) -> None:
    from acp_client.cli._html_timeline import entry as html_entry

    item = {"entry": "message", "messageId": "m", "role": "agent", "content": []}
    assert "dropped" not in html_entry({**item, "truncatedBlocks": "<b>9</b>"}, None)  # type: ignore[arg-type]
    assert "dropped" not in html_entry({**item, "truncatedBlocks": True}, None)  # type: ignore[arg-type]
    assert "1,234 earlier blocks" in html_entry({**item, "truncatedBlocks": 1234}, None)  # type: ignore[arg-type]


@pytest.mark.parametrize("command", ["replay", "run"])
def test_a_negative_block_limit_is_a_usage_error(command: str) -> None:
    out = _cli(command, "--block-limit", "-3")
    assert out.returncode == 2 and b"--block-limit" in out.stderr
    assert b"expected a number of blocks (0 or more)" in out.stderr


def test_run_keeps_100000_blocks_by_default() -> None:
    from acp_client.cli import build_parser

    args = build_parser().parse_args(["run", "--", "agent"])
    assert args.block_limit == RUN_BLOCK_LIMIT == 100_000
    assert build_parser().parse_args(["replay"]).block_limit is None


@pytest.mark.parametrize(("limit", "kept"), [("5", 5), ("0", 0)])
def test_run_block_limit_against_an_agent(limit: str, kept: int) -> None:
    from test_run_faults import END_TURN, _agent

    body = (
        """
for i in range(50):
    update({"sessionUpdate": "agent_message_chunk", "messageId": "a1",
            "content": {"type": "text", "text": f"c{i} "}})
"""
        + END_TURN
    )
    out = _cli("run", "--json", "--block-limit", limit, "--prompt", "hi", "--", *_agent(body))
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    snap = json.loads(out.stdout)
    [message] = [e for e in snap["sessions"][0]["timeline"] if e.get("messageId") == "a1"]
    assert len(message["content"]) == kept and message["truncatedBlocks"] == 50 - kept
    said = [d["message"] for d in snap["diagnostics"] if d["code"] == DROPPED]
    assert [m for m in said if "'a1'" in m] == [
        f"agent message 'a1' keeps its last {kept} content blocks (block_limit); earlier"
        " blocks are dropped and counted in truncatedBlocks"
    ]
