"""The connection's hot path applies a read exactly as one update at a time would.

``Connection.receive_data`` decodes each line of a read once and applies runs of
consecutive chunks for one message or terminal in one step (``Session._apply_run``).
``Connection.receive_line`` takes the general path: one line, one decode, one handler. For
any stream of updates, in any reads, both must give the same events, in the same order,
the same snapshot and the same diagnostics.
"""

from __future__ import annotations

import base64
from typing import Any

import msgspec
import pytest
from helpers import ready
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_client import Connection
from acp_client._entities import decode_base64
from acp_client._framing import LineBuffer
from acp_client.schema import EXTRA_KEY
from acp_client.testing.strategies import byte_stream_splits, updates

#: The kinds the hot path batches, drawn more often so that runs form.
HOT = ["agent_message_chunk", "agent_thought_chunk", "terminal_output_chunk"]


def _line(session_id: str, update: dict[str, Any]) -> bytes:
    return msgspec.json.encode(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": update},
        }
    )


@st.composite
def _segment(draw: st.DrawFn, sessions: list[str]) -> list[bytes]:
    """One update, or a run of 2-8 chunks of one kind for one id (some of them odd)."""
    session_id = draw(st.sampled_from(sessions))
    if draw(st.booleans()):
        return [_line(session_id, draw(updates()))]
    kind = draw(st.sampled_from(HOT))
    key = "terminalId" if kind == "terminal_output_chunk" else "messageId"
    ident = draw(st.sampled_from(["t1", "t2"] if key == "terminalId" else ["m1", "m2"]))
    run = draw(st.lists(updates([kind]), min_size=2, max_size=8))
    out = []
    for update in run:
        update[key] = ident
        if kind == "terminal_output_chunk" and draw(st.integers(0, 9)) == 0:
            # invalid base64: bad characters, missing or excess padding, non-ASCII text
            update["data"] = draw(st.sampled_from(["!!", "QQ", "QUJD=x", "YWJj=", "é"]))
        out.append(_line(session_id, update))
    return out


@st.composite
def streams(draw: st.DrawFn) -> list[bytes]:
    """Lines of ``session/update`` notifications for one or two sessions."""
    sessions = draw(st.sampled_from([["s1"], ["s1", "s2"]]))
    segments = draw(st.lists(_segment(sessions), min_size=1, max_size=12))
    return [line for segment in segments for line in segment]


def _outcome(conn: Connection, events: list[Any]) -> tuple[list[str], dict[str, Any], list[Any]]:
    """Events (as reprs: errors in them compare by identity), snapshot, diagnostics."""
    snapshot = conn.snapshot()
    diagnostics = [(d.code, d.message, d.session_id) for d in conn.diagnostics]
    snapshot.pop("diagnostics", None)
    return [repr(e) for e in events], snapshot, diagnostics


def _connection(prompts: int, **options: Any) -> tuple[Connection, list[Any]]:
    """A connection with ``prompts`` accepted prompts (user messages m1, m2) on s1."""
    conn = ready("s1", **options)
    events: list[Any] = []
    for message_id in ["m1", "m2"][:prompts]:
        rid = conn.send_prompt("s1", "hi").request_id
        events += conn.receive_line(
            msgspec.json.encode({"jsonrpc": "2.0", "id": rid, "result": {"messageId": message_id}})
        )
    return conn, events


def one_at_a_time(lines: list[bytes], prompts: int = 0, **options: Any) -> Any:
    conn, events = _connection(prompts, **options)
    for line in lines:
        events += conn.receive_line(line)
    return _outcome(conn, events)


def in_reads(reads: list[bytes], prompts: int = 0, **options: Any) -> Any:
    conn, events = _connection(prompts, **options)
    for read in reads:
        events += conn.receive_data(read)
    events += conn.receive_eof()
    return _outcome(conn, events)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), st.sampled_from([None, 3]), st.integers(0, 2))
def test_one_read_equals_one_line_at_a_time(
    lines: list[bytes], limit: int | None, prompts: int
) -> None:
    """Prompts awaiting their echo (R14, 10.4) make user messages add PromptEchoed."""
    wire = b"".join(line + b"\n" for line in lines)
    expected = one_at_a_time(lines, prompts, terminal_limit=limit)
    assert in_reads([wire], prompts, terminal_limit=limit) == expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams().flatmap(lambda lines: st.tuples(st.just(lines), _splits(lines))))
def test_any_reads_equal_one_line_at_a_time(case: tuple[list[bytes], list[bytes]]) -> None:
    lines, reads = case
    assert in_reads(reads) == one_at_a_time(lines)


def _second_pass(lines: list[bytes], how: str, by_line: bool) -> Any:
    """Feed ``lines``, then resume with replay (or close s1), then feed them again."""
    conn = ready()
    events: list[Any] = []

    def feed(chunk: list[bytes]) -> None:
        nonlocal events
        if by_line:
            for line in chunk:
                events += conn.receive_line(line)
        else:
            events += conn.receive_data(b"".join(line + b"\n" for line in chunk))

    def answer(rid: int | str) -> None:
        nonlocal events
        events += conn.receive_line(
            msgspec.json.encode({"jsonrpc": "2.0", "id": rid, "result": {}})
        )

    feed(lines)
    if how == "replay":
        rid = conn.send_resume("s1", "/work", replay=True).request_id
        feed(lines)  # the agent replays its history before answering (12.3)
        answer(rid)
    else:
        answer(conn.send_close("s1").request_id)
        feed(lines)  # updates after close are applied with a diagnostic (R38)
    return _outcome(conn, events)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), st.sampled_from(["replay", "close"]))
def test_replayed_history_and_updates_after_close_match_line_at_a_time(
    lines: list[bytes], how: str
) -> None:
    """Replaying history twice (12.3) and a closed session (R38) through the batch path."""
    assert _second_pass(lines, how, by_line=False) == _second_pass(lines, how, by_line=True)


def _splits(lines: list[bytes]) -> st.SearchStrategy[list[bytes]]:
    return byte_stream_splits(b"".join(line + b"\n" for line in lines))


def test_a_run_of_chunks_is_one_event_each_in_order() -> None:
    """Spec 4.3/R4: a chunk appends one block; ten chunks in one read are ten events."""
    words = [f"w{i} " for i in range(10)]
    lines = [
        _line(
            "s1",
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m1",
                "content": {"type": "text", "text": word},
            },
        )
        for word in words
    ]
    conn = Connection()
    events = conn.receive_data(b"".join(line + b"\n" for line in lines))
    chunk_events = [e for e in events if type(e).__name__ == "MessageChunkAppended"]
    assert [e.block.text for e in chunk_events] == words
    assert [e.created for e in chunk_events] == [True] + [False] * 9
    message = conn.session("s1").message("agent", "m1")
    assert message.text() == "".join(words)
    assert message.last_changed == conn.session("s1").ordinal == 10


def test_a_run_of_chunks_for_several_messages_fills_each_in_order() -> None:
    """4.3/R4 per message id: one read holding m1's chunks, then m2's, then m1's again."""
    plan = [("m1", "a"), ("m1", "b"), ("m2", "c"), ("m2", "d"), ("m2", "e"), ("m1", "f")]
    lines = [
        _line(
            "s1",
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": message_id,
                "content": {"type": "text", "text": word},
            },
        )
        for message_id, word in plan
    ]
    conn = Connection()
    events = conn.receive_data(b"".join(line + b"\n" for line in lines))
    chunk_events = [e for e in events if type(e).__name__ == "MessageChunkAppended"]
    assert [(e.message_id, e.block.text, e.created) for e in chunk_events] == [
        (m, w, i in (0, 2)) for i, (m, w) in enumerate(plan)
    ]
    session = conn.session("s1")
    assert session.message("agent", "m1").text() == "abf"
    assert session.message("agent", "m2").text() == "cde"
    assert session.message("agent", "m1").last_changed == session.ordinal == 6
    assert session.message("agent", "m2").last_changed == 5
    assert in_reads([b"".join(line + b"\n" for line in lines)]) == one_at_a_time(lines)


def test_a_run_of_terminal_chunks_appends_each_piece() -> None:
    """Spec 8 (R27): each chunk is decoded on its own and its bytes appended in order."""
    pieces = [b"caf\xc3", b"\xa9 ", b"ok\n"]
    updates_ = [
        {"sessionUpdate": "terminal_update", "terminalId": "t1"},
        *[
            {
                "sessionUpdate": "terminal_output_chunk",
                "terminalId": "t1",
                "data": base64.b64encode(p).decode(),
            }
            for p in pieces
        ],
    ]
    conn = Connection()
    events = conn.receive_data(b"".join(_line("s1", u) + b"\n" for u in updates_))
    appended = [e for e in events if type(e).__name__ == "TerminalOutputAppended"]
    assert [e.data for e in appended] == pieces
    terminal = conn.session("s1").terminals["t1"]
    assert terminal.output == b"caf\xc3\xa9 ok\n"
    assert terminal.text() == "café ok\n"


def _odd_lines() -> st.SearchStrategy[list[bytes]]:
    """Lines a read may hold beside updates: framing faults and other messages."""
    update = _line(
        "s1",
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m1",
            "content": {"type": "text", "text": "x"},
        },
    )
    cut = update.index(b'"params"')
    return st.lists(
        st.sampled_from(
            [
                [b""],  # blank line
                [b"  \t"],  # whitespace only
                [update + b"\r"],  # CRLF
                [update[:cut], update[cut:]],  # one message spread over two lines
                [update[:cut] + b",", update[cut:]],
                [update + b"," + update],  # two values on one line
                [update + b" ," + update],  # ... joined the way the batch joins lines
                [update[: cut - 1], update[cut:]],  # spread where a comma was missing
                [b"[" + update + b"]"],  # a batch
                [b"not json"],
                [b'{"jsonrpc":"2.0","id":7,"result":{}}'],  # a response nobody asked for
                [update.replace(b'"text":"x"', b'"text":"x","extra":1')],  # unknown field
            ]
        ),
        min_size=1,
        max_size=4,
    ).map(lambda groups: [line for group in groups for line in group])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), _odd_lines(), st.integers(0, 40))
def test_framing_faults_in_a_read_are_taken_line_by_line(
    lines: list[bytes], odd: list[bytes], at: int
) -> None:
    """1.1/1.8: each line is one message; a bad line is skipped on its own, in any read."""
    at = min(at, len(lines))
    mixed = lines[:at] + odd + lines[at:]
    wire = b"".join(line + b"\n" for line in mixed)
    assert in_reads([wire]) == one_at_a_time(mixed)


@pytest.mark.parametrize(
    "odd",
    [
        # found by the property above: an empty or null block _meta was dropped
        [{"type": "text", "text": "b", "_meta": {}}, {"type": "text", "text": "c", "_meta": None}],
        # an unknown field spelled like acp_client's own holder for unknown fields
        [
            {"type": "text", "text": "b", EXTRA_KEY: {"x": 1}},
            {"type": "text", "text": "c", EXTRA_KEY: {}},
        ],
    ],
)
def test_a_later_chunk_keeps_its_block_as_received(odd: list[dict[str, Any]]) -> None:
    """SNAPSHOT.md: content blocks exactly as received, on the run path and one at a time."""
    blocks = [{"type": "text", "text": "a"}, *odd, {"type": "text", "text": "d"}]
    lines = [
        _line("s1", {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": block})
        for block in blocks
    ]
    for outcome in (one_at_a_time(lines), in_reads([b"".join(x + b"\n" for x in lines)])):
        message = outcome[1]["sessions"][0]["timeline"][0]
        assert message["content"] == blocks


#: Lines of any length up to 3,000 bytes (st.binary alone rarely passes 64): a drawn start,
#: then every byte value but LF.
_LINES = st.tuples(st.binary(max_size=64), st.integers(0, 3000)).map(
    lambda p: (p[0] + bytes(range(256)) * 12)[: len(p[0]) + p[1]].replace(b"\n", b"")
)


@pytest.mark.parametrize("limit", [1500, 64])  # over and under HEAD_KEPT (issue 26: under,
@settings(max_examples=200, deadline=None)  # the head was cut at the first read's end)
@given(st.lists(_LINES, max_size=5), st.data())
def test_a_line_over_the_limit_is_marked_with_its_size_and_first_bytes(
    limit: int, lines: list[bytes], data: st.DataObject
) -> None:
    """1.1 / 1.8: however the bytes are read, a dropped line keeps its size and its head."""
    from acp_client._framing import HEAD_KEPT, LineTooLong

    wire = b"".join(line + b"\n" for line in lines)
    buffer = LineBuffer(limit)
    out: list[Any] = []
    for read in data.draw(byte_stream_splits(wire)) if wire else []:
        out += buffer.feed(read)
    out += buffer.flush()
    assert len(out) == len(lines)
    for line, got in zip(lines, out, strict=True):
        if len(line) <= limit:
            assert got == line
        else:
            assert type(got) is LineTooLong
            assert (got.size, got.head) == (len(line), line[:HEAD_KEPT])


def test_a_run_of_terminal_chunks_with_a_non_ascii_one_keeps_the_good_ones() -> None:
    """8.3/R25: an invalid chunk is dropped with a diagnostic; the read goes on."""
    datas = ["b2s=", "é", "YWJj=", "IQ=="]  # "ok", non-ASCII, excess padding, "!"
    lines = [_line("s1", {"sessionUpdate": "terminal_update", "terminalId": "t1"})]
    lines += [
        _line("s1", {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": d})
        for d in datas
    ]
    conn = Connection(live=False)
    conn.receive_data(b"".join(line + b"\n" for line in lines))
    assert conn.session("s1").terminals["t1"].output == b"ok!"
    assert [d.code for d in conn.diagnostics] == ["invalid-base64", "invalid-base64"]
    assert in_reads([b"".join(x + b"\n" for x in lines)]) == one_at_a_time(lines)


_B64ISH = st.one_of(
    st.text(alphabet="YWJjQ=A", max_size=12),
    # valid base64 with 0-5 more "=" (excess padding, "YWJj====", is what strict lets in)
    st.builds(
        lambda raw, extra: base64.b64encode(raw).decode() + "=" * extra,
        st.binary(max_size=7),
        st.integers(0, 5),
    ),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_B64ISH, min_size=2, max_size=8))
def test_a_run_of_terminal_chunks_checks_padding_as_each_chunk_alone_does(
    datas: list[str],
) -> None:
    """8.3/R25: the run's shape check refuses exactly the chunks the handler refuses."""
    lines = [_line("s1", {"sessionUpdate": "terminal_update", "terminalId": "t1"})]
    lines += [
        _line("s1", {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": d})
        for d in datas
    ]
    assert in_reads([b"".join(x + b"\n" for x in lines)]) == one_at_a_time(lines)


@given(_B64ISH)
def test_decode_base64_takes_exactly_the_padded_rfc_4648_shapes(data: str) -> None:
    """8.3: length a multiple of 4, ``=`` only as the last one or two characters."""
    try:
        decode_base64(data)
        accepted = True
    except ValueError:
        accepted = False
    body = data.rstrip("=")
    shaped = len(data) % 4 == 0 and "=" not in body and len(data) - len(body) <= 2
    assert accepted == shaped
