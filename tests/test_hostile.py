"""Hostile input to the sans-IO core: bounded, the library's own errors only, nothing lost.

Each test here is the regression test of one finding of issue 26 (the README's table of
hostile input lists them all): the memory an invalid message used to leave behind, the
bytes-like reads, a batch whose first entry is an empty array, a read that changed what
three crafted lines meant, and the limits an embedder sets.
"""

from __future__ import annotations

import gc
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
