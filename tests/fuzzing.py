"""Helpers of the fuzz harness (``tests/test_fuzz.py``): inputs, limits, outcomes, a watchdog.

The harness feeds hostile bytes to the sans-IO core and to the log reader and checks the
properties of issue 26: only the library's own exceptions, no hang, memory within the
configured limits, a result that never depends on how the bytes are split into reads, and
encode -> decode of anything accepted is lossless.

How long it runs: ``ACP_FUZZ_EXAMPLES`` (examples per property; 40 by default, a few seconds
in the normal suite). The long run the README documents::

    ACP_FUZZ_EXAMPLES=5000 PYTHONPATH=$PWD .venv/bin/python -m pytest -q tests/test_fuzz.py \
        -p no:cacheprovider --hypothesis-seed=26 --hypothesis-show-statistics
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from acp_client import Connection
from acp_client._limits import entity_count

EXAMPLES = int(os.environ.get("ACP_FUZZ_EXAMPLES", "40"))
"""Examples per property (``ACP_FUZZ_EXAMPLES``)."""

HANG_SECONDS = 30
"""One example running this long is a hang (inputs are a few KB; each takes milliseconds)."""

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,  # a hang is caught by the watchdog, never a slow machine by a deadline
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: Small limits, so that the fuzzer reaches them with short inputs.
LIMITS: dict[str, int] = {
    "max_batch": 8,
    "max_sessions": 4,
    "max_pending": 4,
    "max_entities": 12,
    "block_limit": 3,
}

TRANSCRIPTS = sorted((Path(__file__).parent / "transcripts").glob("*.jsonl"))
SAMPLES = sorted((Path(__file__).parent / "logs").glob("sample.*"))


@contextmanager
def watchdog(seconds: int = HANG_SECONDS) -> Iterator[None]:
    """Fail an example that runs ``seconds`` (a hang), wherever it is stuck."""

    def _hang(signum: int, frame: FrameType | None) -> None:
        raise AssertionError(f"no result after {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, _hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# ------------------------------------------------------------------- inputs

_UPDATE = (
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
    b'{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text",'
    b'"text":"x"}}}}'
)
#: Pieces of JSON-RPC text: the fuzzer glues them into near-messages.
TOKENS = [
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b" ",
    b"\n",
    b"\r\n",
    b"\n\n",
    b"[]",
    b"{}",
    b"null",
    b"true",
    b"0",
    b"-1",
    b"1e400",
    b"9" * 30,
    b'"x"',
    b'"\\ud800"',
    b"\xff",
    b"\xc3",
    b'"jsonrpc":"2.0"',
    b'"jsonrpc":"1.0"',
    b'"id":1',
    b'"id":"a"',
    b'"id":null',
    b'"id":1.5',
    b'"method":"session/update"',
    b'"method":"session/request_permission"',
    b'"method":"$/cancel_request"',
    b'"method":"x/y"',
    b'"params":',
    b'"result":',
    b'"error":{"code":-32600,"message":"m"}',
    b'"sessionId":"s"',
    b'"sessionId":"t"',
    b'"sessionId":7',
    b'"update":',
    b'"sessionUpdate":"agent_message_chunk"',
    b'"sessionUpdate":"state_update","state":"idle"',
    b'"sessionUpdate":"tool_call_update","toolCallId":"c"',
    b'"sessionUpdate":"terminal_output_chunk","terminalId":"t","data":"QQ=="',
    b'"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","entries":[]}',
    b'"sessionUpdate":"notice"',
    b'"sessionUpdate":"zz"',
    b'"messageId":"m"',
    b'"content":{"type":"text","text":"x"}',
    b'"requestId":1',
    _UPDATE,
    b'{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}',
    b'{"jsonrpc":"2.0","id":3,"method":"x/y","params":{"sessionId":"s"}}',
]


def token_soup() -> st.SearchStrategy[bytes]:
    """Near-JSON-RPC bytes: tokens and random bytes glued together."""
    piece = st.one_of(st.sampled_from(TOKENS), st.binary(max_size=8))
    return st.lists(piece, max_size=60).map(b"".join)


def hostile_bytes() -> st.SearchStrategy[bytes]:
    """Random bytes, token soup, or lines of either."""
    return st.one_of(st.binary(max_size=400), token_soup())


MUTATIONS = ("delete", "insert", "flip", "duplicate", "token", "cut")


@st.composite
def mutated(
    draw: st.DrawFn, files: list[Path], kinds: tuple[str, ...] = MUTATIONS, most: int = 6
) -> bytes:
    """One of ``files`` with 1 to ``most`` mutations of the given kinds applied."""
    data = bytearray(draw(st.sampled_from(files)).read_bytes())
    for _ in range(draw(st.integers(1, most))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(kinds))
        if kind == "delete":
            del data[at : at + draw(st.integers(1, 40))]
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "flip" and at < len(data):
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "duplicate":
            end = min(len(data), at + draw(st.integers(1, 300)))
            data[at:at] = data[at:end]
        elif kind == "token":
            data[at:at] = draw(st.sampled_from(TOKENS))
        elif kind == "cut":
            del data[at:]
    return bytes(data)


def mutated_transcript() -> st.SearchStrategy[bytes]:
    """A valid transcript of ``tests/transcripts/`` with a few mutations applied."""
    return mutated(TRANSCRIPTS)


def splits(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` cut at the given offsets (taken modulo its length, sorted)."""
    points = sorted({c % (len(data) + 1) for c in cuts})
    out, start = [], 0
    for point in points:
        out.append(data[start:point])
        start = point
    out.append(data[start:])
    return out


# ------------------------------------------------------------------ outcomes


def feed(reads: list[bytes], *, live: bool, **limits: int) -> tuple[Connection, list[Any]]:
    """A connection fed the reads (and the end of the stream); its events."""
    conn = Connection(live=live, **limits)
    events: list[Any] = []
    for read in reads:
        events += conn.receive_data(read)
    events += conn.receive_eof()
    return conn, events


def outcome(conn: Connection, events: list[Any]) -> tuple[Any, ...]:
    """What a connection made of its input: events, state, diagnostics, bytes owed."""
    return (
        [repr(e) for e in events],
        conn.snapshot(),
        [(d.code, d.message, d.session_id) for d in conn.diagnostics],
        conn.data_to_send(),
    )


def within_limits(conn: Connection, limits: dict[str, int]) -> None:
    """Every count the limits bound is within them."""
    assert len(conn.sessions) <= limits["max_sessions"]
    assert len(conn._rpc.pending_in) <= limits["max_pending"]
    for session in conn.sessions.values():
        # a tool call may name terminals it references (8): they come with it
        assert entity_count(session) <= limits["max_entities"] + len(session.terminals)
        if "block_limit" in limits:  # each entry keeps its last blocks only (R93)
            for entry in [*session.timeline, *session.unretained]:
                held = entry.summary if hasattr(entry, "summary") else entry.content
                assert len(held) <= limits["block_limit"]
