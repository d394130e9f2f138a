"""The replay's fast lane (issue 23): runs of agent notifications skip the per-record work.

The lane must be invisible: on generated logs of every format, with unusual records and
updates that give diagnostics mixed in and the file read in pieces of any size, a replay
with the lane gives the same snapshot, diagnostics (with their lines), counts and failed
requests as the per-record path (``lane=False``).
"""

from __future__ import annotations

import io
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_client import replay_log
from acp_client._replay import Replayer, ReplayResult, _replay
from acp_client.testing import LOG_FORMATS, log_lines
from acp_client.testing.strategies import conversations

FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SID = "sess_1"


def _update(update: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": SID, "update": update},
        **extra,
    }


def _chunk(text: str, message_id: str = "m_lane", **more: Any) -> dict[str, Any]:
    return _update(
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": message_id,
            "content": {"type": "text", "text": text},
            **more,
        }
    )


# Notifications from the agent: ordinary ones (the lane's), and unusual ones or ones that
# give diagnostics, which must keep their own lines.
ODD: list[dict[str, Any]] = [
    _chunk("plain"),
    _chunk("другой", "m_other"),
    _chunk("meta", _meta={"k": 1}),
    _update({"sessionUpdate": "terminal_output_chunk", "terminalId": "t_x", "data": "QUJD"}),
    _update({"sessionUpdate": "terminal_output_chunk", "terminalId": "t_x", "data": "###"}),
    _update({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "nope", "content": {}}),
    _update({"sessionUpdate": "state_update", "state": "running"}),
    _update({"sessionUpdate": "no_such_kind", "x": 1}),
    _update({"sessionUpdate": "agent_message_chunk"}),  # malformed: rejected
    _chunk("unknown field", surprise=True),
    {"method": "session/update", "params": {"sessionId": SID, "update": {"sessionUpdate": "x"}}},
    _update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}),
    {**_chunk("other session"), "params": {**_chunk("x")["params"], "sessionId": "sess_2"}},
]


@st.composite
def mixed_exchanges(draw: st.DrawFn) -> list[tuple[str, Any]]:
    initialize = draw(st.booleans())
    exchange = list(draw(conversations(session_id=SID, max_turns=3, initialize=initialize)))
    for _ in range(draw(st.integers(0, 12))):
        at = draw(st.integers(0, len(exchange)))
        burst = draw(st.lists(st.sampled_from(ODD), min_size=1, max_size=6))
        exchange[at:at] = [("incoming", m) for m in burst]
    return exchange


class _Pieces(io.RawIOBase):
    """A binary file that hands out its bytes in pieces of the given sizes."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self._data = data
        self._sizes = sizes or [1 << 16]
        self._at = 0
        self._turn = 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        size = self._sizes[self._turn % len(self._sizes)]
        self._turn += 1
        piece = self._data[self._at : self._at + min(size, n if n > 0 else size)]
        self._at += len(piece)
        return piece


def _outcome(result: ReplayResult) -> dict[str, Any]:
    replayer = result.replayer
    return {
        "snapshot": result.snapshot(),
        "kinds": replayer.update_kinds,
        "messages": replayer.messages,
        "stderr": replayer.stderr_lines,
        "failed": [f.to_json() for f in result.failed_requests],
        "format": result.format,
        "ok": (result.ok, result.fatal, result.stopped_early),
        "version": replayer.version,
        # the record times of the summaries (issue 25), per log and per session
        "times": (replayer.first_time, replayer.last_time, replayer.clock),
        "session_times": replayer.session_times,
    }


def _both(data: bytes, sizes: list[int], **options: Any) -> tuple[Any, Any]:
    settings_: dict[str, Any] = {
        "protocol": None,
        "terminal_limit": None,
        "progress": None,
        "format": None,
        "strict": False,
        "perspective": None,
        "direction": None,
        "sides": None,
        **options,
    }
    fast = _replay(_Pieces(data, sizes), lane=True, **settings_)
    slow = _replay(_Pieces(data, sizes), lane=False, **settings_)
    return _outcome(fast), _outcome(slow)


@FAST
@given(
    mixed_exchanges(),
    st.sampled_from(LOG_FORMATS),
    st.lists(st.integers(1, 4096), max_size=4),
    st.sampled_from([None, "client"]),
)
def test_the_lane_gives_what_the_per_record_path_gives(
    exchange: list[tuple[str, Any]], fmt: str, sizes: list[int], perspective: str | None
) -> None:
    text = "".join(line + "\n" for line in log_lines(exchange, fmt))
    options = {"perspective": perspective} if fmt in ("acp-client", "python-sdk") else {}
    fast, slow = _both(text.encode(), sizes, **options)
    assert fast == slow


@FAST
@given(
    mixed_exchanges(),
    st.sampled_from(["jsonrpc", "acp-client", "capture"]),
    st.lists(st.sampled_from([b"", b"not json", b"[]", b'{"odd": 1}', b"\r"]), max_size=3),
    st.integers(0, 10_000),
)
def test_the_lane_with_broken_lines_and_options(
    exchange: list[tuple[str, Any]], fmt: str, junk: list[bytes], seed: int
) -> None:
    lines = [line.encode() for line in log_lines(exchange, fmt)]
    for i, bad in enumerate(junk):
        lines.insert((seed * (i + 7)) % (len(lines) + 1), bad)
    data = b"".join(line + b"\n" for line in lines)
    for options in ({}, {"sides": {"session/update": "client"}}, {"protocol": 2}):
        fast, slow = _both(data, [seed % 700 + 1], **options)
        assert fast == slow, options
    if fmt == "jsonrpc":
        fast, slow = _both(data, [], direction="incoming")
        assert fast == slow


def test_the_lane_takes_the_runs_of_agent_notifications(monkeypatch: Any) -> None:
    """Not vacuous: on an ordinary log nearly every update goes through the lane."""
    taken: list[int] = []
    apply_updates = Replayer.apply_updates

    def spy(self: Replayer, first_line: int, notes: list[Any], *times: Any) -> None:
        taken.append(len(notes))
        apply_updates(self, first_line, notes, *times)

    monkeypatch.setattr(Replayer, "apply_updates", spy)
    chunks = [("incoming", _chunk(f"piece {i} ")) for i in range(500)]
    setup = [
        ("outgoing", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}),
        ("incoming", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 2}}),
    ]
    for fmt in ("jsonrpc", "acp-client", "capture", "python-sdk"):
        taken.clear()
        text = "".join(line + "\n" for line in log_lines(setup + chunks, fmt))
        result = replay_log(text.encode())
        assert sum(taken) >= 490, fmt
        message = result.snapshot()["sessions"][0]["timeline"][0]
        text = "".join(block["text"] for block in message["content"])
        assert text.startswith("piece 0 piece 1 ") and text.endswith("piece 499 ")


def test_strict_replays_take_no_lane(monkeypatch: Any) -> None:
    """A strict replay stops at the first error: each update is applied on its own."""
    monkeypatch.setattr(Replayer, "apply_updates", None)  # would fail if called
    text = "".join(line + "\n" for line in log_lines([("incoming", _chunk("x"))] * 50, "jsonrpc"))
    assert replay_log(text.encode(), strict=True).ok


def test_records_with_unusable_times_take_the_per_record_path() -> None:
    """No time check of the lane's own: msgspec refuses a number beyond a float (1e999), so
    such a record, like one whose time is no number, is read per record (its ``bad-time``
    or ``malformed-line``), between runs that the lane takes."""
    chunk = msgspec.json.encode(_chunk("x")).decode()
    for fmt, line in (
        ("acp-client", '{"direction":"incoming","message":%s,"time":%s}'),
        ("capture", '{"dir":"in","msg":%s,"t":%s}'),
    ):
        for time in ("1e999", "-1e999", '"soon"', "null"):
            good = [line % (chunk, "1.5")] * 3
            data = "\n".join([*good, line % (chunk, time), *good, ""]).encode()
            fast, slow = _both(data, [])
            assert fast == slow, (fmt, time)
            assert fast["messages"] >= 6, (fmt, time)
