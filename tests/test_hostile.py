"""Hostile input to the sans-IO core: bounded, the library's own errors only, nothing lost.

Each test here is the regression test of one finding of issue 26 (the README's table of
hostile input lists them all): the memory an invalid message used to leave behind, the
bytes-like reads, a batch whose first entry is an empty array, a read that changed what
three crafted lines meant, and the limits an embedder sets.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Callable

import msgspec
import pytest

from acp_client import Connection, replay_log


def _update(session_id: str, update: object) -> bytes:
    return msgspec.json.encode(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": update},
        }
    )


#: One line of each kind of invalid message (each ends with its newline).
INVALID = {
    "malformed line": b"x\n",
    "rejected update": _update("s", {"sessionUpdate": "state_update", "state": 5}) + b"\n",
    "invalid batch entry": b"[1," + _update("s", {"sessionUpdate": "plan"}) + b"]\n",
    "malformed request": (
        b'{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":5}}\n'
    ),
    "malformed response": b'{"jsonrpc":"2.0","id":7,"result":1,"error":2}\n',
}


def _retained(run: Callable[[int], None], count: int) -> int:
    """Bytes still allocated after ``run(count)`` and a collection, over a warmed-up baseline."""
    run(3)  # caches, interned strings, first-use allocations
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        run(count)
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("live", [True, False], ids=["live", "passive"])
@pytest.mark.parametrize("kind", sorted(INVALID))
def test_memory_returns_to_its_baseline_after_a_connection_saw_invalid_lines(
    kind: str, live: bool
) -> None:
    """Each invalid message used to leave ~3.6 KB behind for ever: its error's traceback held
    the frames that built the events, and an event (a Struct the collector does not track)
    held the error, a cycle nothing could free. Counted in bytes, not seconds."""
    line = INVALID[kind]

    def run(count: int) -> None:
        conn = Connection(live=live)
        for _ in range(count):
            conn.receive_data(line)
        conn.data_to_send()
        del conn

    assert _retained(run, 400) < 4096  # was 400 * 3.6 KB = 1.4 MB


@pytest.mark.parametrize("kind", sorted(INVALID))
def test_memory_returns_to_its_baseline_after_replaying_invalid_lines(kind: str) -> None:
    """``replay_log`` leaked the same way."""
    data = INVALID[kind] * 400

    def run(count: int) -> None:
        result = replay_log(data[: len(INVALID[kind]) * count])
        del result

    assert _retained(run, 400) < 4096


def test_the_error_kept_in_an_event_holds_no_frames() -> None:
    """Where it went: the error is kept (message, path, code, raw), without a traceback."""
    conn = Connection()
    (event,) = conn.receive_data(b"x\n")
    error = event.error  # type: ignore[attr-defined]
    assert error.code == -32700 and error.__traceback__ is None and error.__context__ is None


@pytest.mark.parametrize("kind", [bytearray, memoryview])
def test_receive_data_takes_any_bytes_like_read(kind: Callable[[bytes], object]) -> None:
    """``receive_data(memoryview)`` raised a raw ``AttributeError``."""
    line = _update("s", {"sessionUpdate": "state_update", "state": "running"}) + b"\n"
    conn = Connection(live=False)
    events = conn.receive_data(kind(line[:10]))  # type: ignore[arg-type]
    events += conn.receive_data(kind(line[10:]))  # type: ignore[arg-type]
    assert [type(e).__name__ for e in events] == ["SessionCreated", "StateChanged"]


@pytest.mark.parametrize("data", ["text", 12, [1, 2]])
def test_receive_data_refuses_what_is_not_bytes_like_with_a_type_error(data: object) -> None:
    with pytest.raises(TypeError, match="receive_data takes"):
        Connection().receive_data(data)  # type: ignore[arg-type]


def test_a_batch_starting_with_an_empty_array_is_answered_with_one_array() -> None:
    """1.5: the replies to a batch go back as one array, even when its first entry is ``[]``
    (it used to be mistaken for the empty batch and each reply written alone)."""
    conn = Connection()
    conn.receive_data(b'[[],{"jsonrpc":"2.0","id":1,"method":"x/y"}]\n')
    replies = msgspec.json.decode(conn.data_to_send())
    assert isinstance(replies, list) and [r["id"] for r in replies] == [None, 1]
    assert [r["error"]["code"] for r in replies] == [-32600, -32601]


def test_an_empty_batch_alone_is_answered_alone() -> None:
    conn = Connection()
    conn.receive_data(b"[]\n")
    assert msgspec.json.decode(conn.data_to_send())["error"]["code"] == -32600


def _crafted_lines() -> list[bytes]:
    """Three invalid lines that, joined the way a whole read used to be decoded (newlines
    turned into commas of one array), made exactly three valid updates."""
    one = _update("s", {"sessionUpdate": "state_update", "state": "running"})
    idle = {"sessionUpdate": "state_update", "state": "idle", "_meta": {"a": 1, "b": 2}}
    meta = _update("s", idle)
    cut = meta.index(b',"b"')
    return [one + b"," + one, meta[:cut], meta[cut + 1 :]]


def test_crafted_lines_mean_the_same_in_one_read_and_split_across_reads() -> None:
    """A line holding two values and a message spread over two lines were applied in one
    read (three updates) and rejected when each line came in its own read."""
    lines = _crafted_lines()
    whole = Connection(live=False)
    together = whole.receive_data(b"".join(line + b"\n" for line in lines))
    apart = Connection(live=False)
    split: list[object] = []
    for line in lines:
        split += apart.receive_data(line + b"\n")
    assert [repr(e) for e in together] == [repr(e) for e in split]
    assert [type(e).__name__ for e in together] == ["InvalidMessageReceived"] * 3
    assert whole.snapshot() == apart.snapshot()


# ------------------------------------------------------------------- limits


def test_a_batch_over_max_batch_is_one_invalid_message_naming_the_limit_and_the_count() -> None:
    """One 5.7 MB batch of 3M ``{}`` ended in ``SystemError`` / ``MemoryError``."""
    conn = Connection(max_batch=100)
    events = conn.receive_data(b"[" + b",".join([b"{}"] * 101) + b"]\n")
    assert [type(e).__name__ for e in events] == ["InvalidMessageReceived"]
    assert "101 entries exceeds the limit max_batch=100" in conn.diagnostics[0].message
    reply = msgspec.json.decode(conn.data_to_send())  # one -32600 (not an array): none applied
    assert reply["id"] is None and reply["error"]["code"] == -32600
    within = Connection(max_batch=100)
    assert len(within.receive_data(b"[" + b",".join([b"{}"] * 100) + b"]\n")) == 100


def test_a_batch_of_30000_empty_objects_is_refused_at_the_default_limit() -> None:
    """The default limit (10,000) holds: the finding's 3M ``{}`` scaled down a hundredfold."""
    conn = Connection()
    (event,) = conn.receive_data(b"[" + b",".join([b"{}"] * 30_000) + b"]\n")
    assert "batch of 30000 entries exceeds the limit max_batch=10000" in event.error.message  # type: ignore[attr-defined]


def test_a_parsed_batch_over_max_batch_is_refused_too() -> None:
    conn = Connection(live=False, max_batch=2)
    (event,) = conn.receive_message([{}, {}, {}])
    assert "max_batch=2" in event.error.message  # type: ignore[attr-defined]


def test_a_session_over_max_sessions_is_kept_raw_with_a_diagnostic() -> None:
    """Sessions an agent names are created (12.5) up to the limit; then each message naming
    a new one is kept raw in ``LimitReached``; the sessions already there go on."""
    conn = Connection(live=False, max_sessions=2)
    state = {"sessionUpdate": "state_update", "state": "running"}
    data = b"".join(_update(f"s{i}", state) + b"\n" for i in range(3))
    events = conn.receive_data(data + _update("s0", state) + b"\n")
    assert list(conn.sessions) == ["s0", "s1"]
    [limit] = [e for e in events if type(e).__name__ == "LimitReached"]
    assert (limit.limit, limit.value, limit.session_id) == ("max_sessions", 2, "s2")  # type: ignore[attr-defined]
    assert limit.message.params.update.state == "running"  # type: ignore[attr-defined]
    [diag] = [d for d in conn.diagnostics if d.code == "limit-reached"]
    assert "session 's2' not created: the limit max_sessions=2 was reached" in diag.message
    assert diag.severity == "error"
    assert type(events[-1]).__name__ == "StateChanged"  # s0 still applies


def test_a_request_naming_a_session_over_the_limit_is_answered_live() -> None:
    conn = Connection(max_sessions=0, extension_methods=["x/y"])
    request = b'{"jsonrpc":"2.0","id":3,"method":"x/y","params":{"sessionId":"s"}}\n'
    (event,) = conn.receive_data(request)
    assert type(event).__name__ == "LimitReached"
    reply = msgspec.json.decode(conn.data_to_send())
    assert reply["id"] == 3 and reply["error"]["code"] == -32603
    assert "max_sessions=0" in reply["error"]["message"]


def test_the_agents_pending_requests_stop_at_max_pending() -> None:
    """Requests the embedder answers itself wait; past the limit they are refused at once."""
    conn = Connection(max_pending=2, extension_methods=["x/y"])
    for rid in range(3):
        conn.receive_data(b'{"jsonrpc":"2.0","id":%d,"method":"x/y"}\n' % rid)
    reply = msgspec.json.decode(conn.data_to_send())
    assert reply["id"] == 2 and reply["error"]["code"] == -32603
    assert "max_pending=2" in reply["error"]["message"]
    assert [d.code for d in conn.diagnostics] == ["limit-reached"]
    conn.answer_request(0, {})  # answering frees a place
    conn.data_to_send()
    (event,) = conn.receive_data(b'{"jsonrpc":"2.0","id":5,"method":"x/y"}\n')
    assert type(event).__name__ == "AgentRequestReceived"


@pytest.mark.parametrize("reads", [1, 7], ids=["one-read", "split"])
def test_a_line_over_max_line_is_quoted_by_its_start_escaped(reads: int) -> None:
    # Issue 26: the diagnostic gave only the size; its start (kept in LineTooLong.head) is
    # quoted now, as a JSON string, so that no control character of it reaches a terminal.
    line = b'{"x":"\x1b]0;pwned\x07\x9b' + b"y" * 500 + b'"}\n'
    conn = Connection(max_line=100)
    size = -(-len(line) // reads)
    for start in range(0, len(line), size):
        conn.receive_data(line[start : start + size])
    (diagnostic,) = conn.diagnostics
    assert diagnostic.code == "line-too-long"
    start = json.dumps(line.decode("utf-8", "replace")[:80])
    assert diagnostic.message == (
        f"line of {len(line) - 1} bytes exceeds the limit of 100, starting {start}…"
    )
    assert not any(ord(c) < 32 or 127 <= ord(c) <= 159 for c in diagnostic.message)


@pytest.mark.parametrize("live", [True, False], ids=["live", "passive"])
def test_malformed_requests_of_the_agents_stop_at_max_pending_too(live: bool) -> None:
    # Found by the fuzzer at tiny limits: in a log, a request with malformed params waits
    # for the client's answer, and it was taken past max_pending (any number of them).
    conn = Connection(live=live, max_pending=2)
    for rid in range(50):
        conn.receive_data(
            b'{"jsonrpc":"2.0","id":%d,"method":"session/request_permission","params":5}\n' % rid
        )
    assert len(conn._rpc.pending_in) <= 2
    limited = [d.message for d in conn.diagnostics if d.code == "limit-reached"]
    if live:  # each answered -32602 at once: none waits
        assert limited == [] and not conn._rpc.pending_in
        return
    assert len(limited) == 48
    assert (
        limited[0]
        == "the agent's malformed request 2 not taken: the limit max_pending=2 was reached"
    )


@pytest.mark.parametrize("live", [True, False], ids=["live", "passive"])
def test_many_sessions_stay_within_the_limit_and_memory(live: bool) -> None:
    """1M sessions in a log ran out of memory (5 KB each): the count stops at the limit."""
    conn = Connection(live=live, max_sessions=50)
    state = {"sessionUpdate": "state_update", "state": "running"}
    data = b"".join(_update(f"s{i}", state) + b"\n" for i in range(2000))
    conn.receive_data(data)
    assert len(conn.sessions) == 50
    kept = sum(d.code == "limit-reached" for d in conn.diagnostics)
    counted = conn.diagnostics.dropped["limit-reached"]  # type: ignore[attr-defined]
    assert (kept, counted) == (1000, 950)  # max_diagnostics: every one kept or counted


# --------------------------------------------------------- nothing silently lost


def test_an_unknown_notification_is_kept_raw_with_a_diagnostic() -> None:
    """Unknown notifications left no event and no diagnostic."""
    conn = Connection(live=False)
    (event,) = conn.receive_data(b'{"jsonrpc":"2.0","method":"ext/x","params":{"sessionId":1}}\n')
    assert type(event).__name__ == "UnknownNotificationReceived"
    assert (event.method, event.params) == ("ext/x", {"sessionId": 1})  # type: ignore[attr-defined]
    assert [d.code for d in conn.diagnostics] == ["unknown-notification"]


def test_a_known_notification_that_changes_nothing_is_not_reported_as_unknown() -> None:
    conn = Connection(live=False)
    assert conn.receive_data(b'{"jsonrpc":"2.0","method":"elicitation/complete"}\n') == []
    assert conn.diagnostics == []


@pytest.mark.parametrize(
    "number", [b"1e400", b"-1e309", b"9" * 5000], ids=["1e400", "-1e309", "5000 digits"]
)
def test_a_number_beyond_a_double_is_never_written_back_silently(number: bytes) -> None:
    """``1e400`` and ``10**5000`` became ``null`` in ``encode()`` without a diagnostic."""
    conn = Connection(live=False)
    (event,) = conn.receive_data(
        b'{"jsonrpc":"2.0","method":"ext/x","params":{"n":' + number + b"}}\n"
    )
    assert [d.code for d in conn.diagnostics] == ["number-beyond-double", "unknown-notification"]
    assert "written back as null" in conn.diagnostics[0].message
    assert event.params["n"] in (float("inf"), float("-inf"))  # type: ignore[attr-defined]


def test_a_number_a_double_holds_gives_no_diagnostic() -> None:
    conn = Connection(live=False)
    conn.receive_data(
        b'{"jsonrpc":"2.0","method":"ext/x","params":{"n":1e300,"m":' + b"9" * 400 + b"}}\n"
    )
    assert [d.code for d in conn.diagnostics] == ["unknown-notification"]


def _chunk(message_id: str) -> dict[str, object]:
    return {
        "sessionUpdate": "agent_message_chunk",
        "messageId": message_id,
        "content": {"type": "text", "text": "x"},
    }


@pytest.mark.parametrize("reads", ["one read", "line by line", "parsed"])
def test_entities_past_max_entities_are_kept_raw_and_existing_ones_still_apply(
    reads: str,
) -> None:
    """A session stops growing at the limit; what would add to it is kept raw (hot path,
    line by line and parsed messages alike); updates to what it holds still apply."""
    conn = Connection(live=False, max_entities=3)
    updates = [_chunk(f"m{i}") for i in range(5)] + [_chunk("m0"), {"sessionUpdate": "zz"}]
    lines = [_update("s", u) for u in updates]
    events: list[object] = []
    if reads == "one read":
        events += conn.receive_data(b"".join(line + b"\n" for line in lines))
    elif reads == "line by line":
        for line in lines:
            events += conn.receive_line(line)
    else:
        for line in lines:
            events += conn.receive_message(msgspec.json.decode(line))
    session = conn.session("s")
    assert list(session.messages("agent")) == ["m0", "m1", "m2"]
    assert len(session.message("agent", "m0").content) == 2  # type: ignore[union-attr]
    kept = [e for e in events if type(e).__name__ == "LimitReached"]
    assert [e.message.params.update.message_id for e in kept[:2]] == ["m3", "m4"]  # type: ignore[attr-defined]
    assert len(kept) == 3 and kept[2].message.params.update == {"sessionUpdate": "zz"}  # type: ignore[attr-defined]
    first = next(d.message for d in conn.diagnostics if d.code == "limit-reached")
    assert first == (
        "an update adding an entity to session 's' not applied:"
        " the limit max_entities=3 was reached"
    )


@pytest.mark.parametrize("live", [True, False], ids=["live", "passive"])
def test_a_million_entities_cannot_be_made(live: bool) -> None:
    """Memory stays bounded by the limit, however many distinct ids arrive (a count, not a
    time: the session holds ``max_entities`` at most)."""
    conn = Connection(live=live, max_entities=100)
    data = b"".join(_update("s", _chunk(f"m{i}")) + b"\n" for i in range(3000))
    conn.receive_data(data)
    assert len(conn.session("s").messages("agent")) == 100
