"""The seven sample logs of LOG-FORMATS.md section 10 (copies in tests/logs/)."""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import Any

import pytest

from acp_client.logs import FORMATS, LogRecord, iter_log, read_log

LOGS = Path(__file__).parent / "logs"

SAMPLES = {
    "sample.jsonrpc.jsonl": ("jsonrpc", []),
    "sample.acp-client.jsonl": ("acp-client", [1, 17]),
    "sample.acp-client.jsonl.gz": ("acp-client", [1, 17]),
    "sample.capture.jsonl": ("capture", [17]),
    "sample.python-sdk.jsonl": ("python-sdk", []),
    "sample.zed.json": ("zed", [1, 17]),
    "sample.conductor.jsons": ("conductor", []),
}
"""File -> (format, positions of the stderr records among all records)."""

# Section 10's table: (direction, kind, id, method or update summary)
EXPECTED: list[tuple[str, str, Any, str]] = [
    ("outgoing", "request", 0, "initialize"),
    ("incoming", "response", 0, "protocolVersion"),
    ("outgoing", "request", 1, "session/new"),
    ("incoming", "response", 1, "sessionId"),
    ("outgoing", "request", 2, "session/prompt"),
    ("incoming", "response", 2, "messageId"),
    ("incoming", "notification", None, "user_message"),
    ("incoming", "notification", None, "state_update:running"),
    ("incoming", "notification", None, "agent_message_chunk"),
    ("incoming", "notification", None, "tool_call_update:pending"),
    ("incoming", "notification", None, "state_update:requires_action"),
    ("incoming", "request", 0, "session/request_permission"),
    ("outgoing", "response", 0, "outcome"),
    ("incoming", "notification", None, "state_update:running"),
    ("incoming", "notification", None, "tool_call_update:in_progress"),
    ("outgoing", "notification", None, "session/cancel"),
    ("incoming", "notification", None, "state_update:idle"),
]

CONDUCTOR_IDS = [
    "6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e01",
    "6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e01",
    "6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e02",
    "6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e02",
    "6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e03",
    "6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e03",
    "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c01",
    "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c01",
]


def summarize(record: LogRecord) -> tuple[str, str, Any, str]:
    message = record.message
    assert message is not None
    assert record.direction is not None
    if "method" in message:
        kind = "request" if "id" in message else "notification"
        method = message["method"]
        if method == "session/update":
            update = message["params"]["update"]
            summary = update["sessionUpdate"]
            if summary == "state_update":
                summary += ":" + update["state"]
            elif summary == "tool_call_update":
                summary += ":" + update["status"]
            return (record.direction, kind, message.get("id"), summary)
        return (record.direction, kind, message.get("id"), method)
    result = message["result"]
    key = next(k for k in ("protocolVersion", "sessionId", "messageId", "outcome") if k in result)
    return (record.direction, "response", message["id"], key)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_yields_the_17_messages(name: str) -> None:
    fmt, stderr_positions = SAMPLES[name]
    result = read_log(LOGS / name)
    assert result.diagnostics == []
    assert result.format == fmt
    assert not result.fatal and not result.stopped_early
    kinds = [r.kind for r in result.records]
    assert [i for i, k in enumerate(kinds) if k == "stderr"] == stderr_positions
    messages = [r for r in result.records if r.kind == "message"]
    got = [summarize(r) for r in messages]
    expected = EXPECTED
    if fmt == "conductor":
        ids = iter(CONDUCTOR_IDS)
        expected = [(d, k, next(ids) if i is not None else None, s) for d, k, i, s in EXPECTED]
    assert got == expected
    assert all(r.format == fmt for r in result.records)
    for record in messages:
        assert record.message is not None and record.message["jsonrpc"] == "2.0"
        assert record.text is None


def test_idle_update_carries_stop_reason() -> None:
    result = read_log(LOGS / "sample.jsonrpc.jsonl")
    last = result.records[-1].message
    assert last is not None
    assert last["params"]["update"]["stopReason"] == "cancelled"


def test_sample_line_numbers_batches_and_clocks() -> None:
    jsonrpc = read_log(LOGS / "sample.jsonrpc.jsonl").records
    assert [r.line for r in jsonrpc][:9] == [1, 2, 3, 4, 5, 6, 7, 8, 8]
    assert [r.batch for r in jsonrpc[7:9]] == [(0, 2), (1, 2)]
    assert all(r.time is None and r.clock is None for r in jsonrpc)

    acp = read_log(LOGS / "sample.acp-client.jsonl").records
    assert acp[0].time == 1796083200.0 and acp[0].clock == "epoch"
    assert acp[1].kind == "stderr" and acp[1].text == "example-agent 0.3.0 starting"
    assert acp[1].direction is None and acp[1].message is None
    assert [r.batch for r in acp if r.line == 9] == [(0, 2), (1, 2)]

    capture = read_log(LOGS / "sample.capture.jsonl").records
    assert capture[-1].kind == "stderr"
    assert capture[-1].text == (
        "example-agent 0.3.0 starting\nexample-agent: turn cancelled by client\n"
    )
    assert capture[-1].clock == "relative" and capture[-1].time == 5.1
    assert all(r.batch is None for r in capture)

    zed = read_log(LOGS / "sample.zed.json").records
    assert zed[0].line == 2  # the line of the entry's "{"
    assert zed[0].origin == {"_type": "request", "method": "initialize"}
    assert zed[2].origin == {"_type": "response", "method": "initialize"}
    assert all(r.time is None for r in zed)


def test_conductor_hops_and_renamed_initialize() -> None:
    records = read_log(LOGS / "sample.conductor.jsons").records
    first = records[0]
    assert first.message is not None
    assert first.message["method"] == "initialize"
    assert first.origin == {"from": "Client", "to": "Proxy(0)", "method": "_proxy/initialize"}
    assert first.clock == "relative" and first.time == pytest.approx(0.000137)
    permission = records[11]
    assert permission.origin == {"from": "Proxy(1)", "to": "Proxy(0)"}
    assert permission.direction == "incoming"
    answer = records[12]
    assert answer.origin == {"from": "Proxy(0)", "to": "Proxy(1)"}
    assert answer.direction == "outgoing"
    assert answer.message == {
        "jsonrpc": "2.0",
        "id": "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c01",
        "result": {"outcome": {"outcome": "selected", "optionId": "allow-once"}},
    }


def test_gzip_sample_equals_plain() -> None:
    plain = read_log(LOGS / "sample.acp-client.jsonl")
    packed = read_log(LOGS / "sample.acp-client.jsonl.gz")
    assert packed.records == plain.records


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_source_kind_reads_the_same(name: str) -> None:
    path = LOGS / name
    expected = read_log(path)
    data = path.read_bytes()
    assert read_log(data) == expected
    assert read_log(str(path)) == expected
    assert read_log(io.BytesIO(data)) == expected
    assert read_log(memoryview(data)) == expected


def test_stdin_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    data = gzip.compress((LOGS / "sample.python-sdk.jsonl").read_bytes())

    class FakeStdin:
        buffer = io.BufferedReader(io.BytesIO(data))  # type: ignore[arg-type]

    monkeypatch.setattr("sys.stdin", FakeStdin)
    result = read_log("-")
    assert result.format == "python-sdk"
    assert len(result.records) == 17


def test_iter_log_streams_in_order() -> None:
    path = LOGS / "sample.acp-client.jsonl"
    with iter_log(path) as items:
        assert items.format is None
        streamed = list(items)
        assert items.format == "acp-client"
    assert streamed == read_log(path).records


def test_formats_constant() -> None:
    assert FORMATS == ("jsonrpc", "acp-client", "capture", "python-sdk", "zed", "conductor")
