"""Per-format record mapping and the message checks (LOG-FORMATS.md 1.7, sections 3-7)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_client.logs import read_log


def jl(*values: Any) -> bytes:
    return b"".join(json.dumps(v).encode() + b"\n" for v in values)


def where(result: Any) -> list[tuple[str, int | None]]:
    return [(d.code, d.line) for d in result.diagnostics]


def severities(result: Any) -> list[str]:
    return [d.severity for d in result.diagnostics]


INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}}
INIT_OK = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 2}}
CANCEL = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}


def acp(direction: str, **fields: Any) -> dict[str, Any]:
    return {"direction": direction, **fields, "time": 1.5}


FIRST = acp("outgoing", message=INIT)


# -- 1.7: the message inside a record ---------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        42,
        "text",
        None,
        {"foo": 1},
        {"jsonrpc": "1.0", "id": 1, "method": "x"},
        {"jsonrpc": None, "method": "x"},
        {"jsonrpc": "2.0", "method": 5},
        {"jsonrpc": "2.0", "id": 1, "result": 1, "error": {"code": 1, "message": "x"}},
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0", "id": 1.0, "method": "x"},
        {"jsonrpc": "2.0", "id": 1e3, "method": "x"},
        {"jsonrpc": "2.0", "id": 2**63, "method": "x"},
        {"jsonrpc": "2.0", "id": -(2**63) - 1, "method": "x"},
        {"jsonrpc": "2.0", "id": True, "method": "x"},
        {"jsonrpc": "2.0", "id": None, "method": "x"},
        {"jsonrpc": "2.0", "id": {"a": 1}, "result": {}},
        [7],
    ],
)
def test_invalid_jsonrpc(message: Any) -> None:
    result = read_log(jl(FIRST, acp("incoming", message=message)))
    assert where(result) == [("invalid-jsonrpc", 2)]
    assert severities(result) == ["error"]
    assert len(result.records) == 1


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 2**63 - 1, "method": "_x"},
        {"jsonrpc": "2.0", "id": -(2**63), "method": "_x"},
        {"jsonrpc": "2.0", "id": "", "method": "_x"},
        {"jsonrpc": "2.0", "method": "_x", "params": None},
    ],
)
def test_valid_edge_messages(message: Any) -> None:
    result = read_log(jl(FIRST, acp("outgoing", message=message)))
    assert where(result) == []
    assert result.records[1].message == message  # exactly as in the file


def test_missing_jsonrpc_version_is_accepted() -> None:
    message = {"method": "session/cancel", "params": {"sessionId": "s"}}
    result = read_log(jl(FIRST, acp("outgoing", message=message)))
    assert where(result) == [("missing-jsonrpc-version", 2)]
    assert severities(result) == ["warning"]
    assert result.records[1].message == message


def test_batch_elements_are_checked_one_by_one() -> None:
    batch = [CANCEL, {"jsonrpc": "2.0"}, {"method": "session/cancel"}]
    result = read_log(jl(FIRST, acp("outgoing", message=batch)))
    assert where(result) == [("invalid-jsonrpc", 2), ("missing-jsonrpc-version", 2)]
    assert "batch element 1" in result.diagnostics[0].message
    assert [r.batch for r in result.records] == [None, (0, 3), (2, 3)]
    assert all(r.line == 2 and r.time == 1.5 for r in result.records[1:])


def test_empty_batch_in_a_wrapped_record() -> None:
    result = read_log(jl(FIRST, acp("incoming", message=[])))
    assert where(result) == [("empty-batch", 2)]


# -- acp-client ------------------------------------------------------------------------


def test_acp_client_raw_output() -> None:
    result = read_log(jl(FIRST, acp("incoming", raw="Debugger listening on port 9229")))
    assert where(result) == [("agent-non-json-output", 2)]
    assert "Debugger listening" in result.diagnostics[0].message
    assert len(result.records) == 1


@pytest.mark.parametrize(
    "record",
    [
        acp("outgoing", raw="x"),
        acp("incoming", raw=5),
        acp("sideways", message=CANCEL),
        acp("stderr", raw="x"),
        acp("stderr", text=5),
        {"direction": 3, "message": CANCEL},
    ],
)
def test_acp_client_malformed_records(record: dict[str, Any]) -> None:
    result = read_log(jl(FIRST, record))
    assert where(result) == [("malformed-record", 2)]
    assert len(result.records) == 1


@pytest.mark.parametrize("number", [b"1e309", b"-1e999"])
def test_a_time_beyond_a_double_is_bad_time_not_a_malformed_line(number: bytes) -> None:
    # Valid JSON that msgspec refuses ("number out of range"): Python's json reads it as an
    # infinite float, which the time rule then drops.
    data = b'{"direction":"stderr","text":"hi","time":' + number + b"}\n"
    result = read_log(jl(FIRST) + data + data)
    assert where(result) == [("bad-time", 2), ("bad-time", 3)]
    assert [r.text for r in result.records[1:]] == ["hi", "hi"]


def test_an_integer_past_ints_digit_limit_reads_as_infinity() -> None:
    # Valid JSON; Python's int() refuses more than 4,300 digits: read like 1e309.
    data = b'{"direction":"stderr","text":"hi","time":' + b"9" * 5000 + b"}\n"
    result = read_log(jl(FIRST) + data)
    assert where(result) == [("bad-time", 2)]
    assert result.records[1].text == "hi"


def test_a_lone_surrogate_escape_is_read_in_line_mode_too() -> None:
    data = b'{"direction":"stderr","text":"a\\ud800b","time":2}\n'
    result = read_log(jl(FIRST) + data)
    assert where(result) == []
    assert result.records[1].text == "a\ud800b"


def test_acp_client_without_message_is_no_record_shape() -> None:
    result = read_log(jl(FIRST, {"direction": "incoming", "time": 2.0}))
    assert where(result) == [("malformed-record", 2)]


@pytest.mark.parametrize("bad", ["soon", None, True, 10**400, [1]])
def test_bad_time_is_dropped(bad: Any) -> None:
    data = json.dumps({"direction": "stderr", "text": "hi", "time": bad}).encode() + b"\n"
    result = read_log(jl(FIRST) + data)
    assert where(result) == [("bad-time", 2)]
    assert result.records[1].time is None and result.records[1].clock is None
    assert result.records[1].text == "hi"


def test_integer_and_zero_times() -> None:
    result = read_log(jl({"direction": "outgoing", "message": INIT, "time": 0}))
    assert result.records[0].time == 0.0 and result.records[0].clock == "epoch"
    assert isinstance(result.records[0].time, float)


def test_extra_keys_are_ignored() -> None:
    result = read_log(jl({**FIRST, "session": "abc", "v": 2}))
    assert where(result) == [] and len(result.records) == 1


def test_stderr_text_is_verbatim() -> None:
    text = "\x1b[31mred\x1b[0m\ttab\u2028sep"
    result = read_log(jl(FIRST, acp("stderr", text=text)))
    assert result.records[1].text == text and result.records[1].kind == "stderr"


# -- capture ---------------------------------------------------------------------------


def test_capture_mapping() -> None:
    data = jl(
        {"t": 0.5, "dir": "out", "msg": INIT},
        {"t": 1, "dir": "in", "msg": [INIT_OK]},
        {"t": "x", "dir": "stderr", "msg": "a\nb\n"},
        {"dir": "in", "msg": CANCEL},
    )
    result = read_log(data)
    assert result.format == "capture"
    records = result.records
    assert [(r.direction, r.time, r.clock) for r in records] == [
        ("outgoing", 0.5, "relative"),
        ("incoming", 1.0, "relative"),
        (None, None, None),
        ("incoming", None, None),
    ]
    assert records[1].batch == (0, 1)
    assert records[2].text == "a\nb\n"
    assert where(result) == [("bad-time", 3), ("direction-mismatch", 4)]


@pytest.mark.parametrize(
    "record",
    [
        {"t": 0, "dir": "incoming", "msg": CANCEL},
        {"t": 0, "dir": "stderr", "msg": {"text": "x"}},
        {"t": 0, "dir": None, "msg": CANCEL},
    ],
)
def test_capture_malformed(record: dict[str, Any]) -> None:
    result = read_log(jl({"t": 0, "dir": "out", "msg": INIT}, record))
    assert where(result) == [("malformed-record", 2)]


# -- zed -------------------------------------------------------------------------------


def zed(direction: str, kind: Any, rid: Any, method: Any, params: Any) -> dict[str, Any]:
    entry = {"_direction": direction, "_type": kind, "id": rid, "method": method, "params": params}
    if kind is None:
        del entry["_type"]
    return entry


def zed_doc(*entries: Any) -> bytes:
    return json.dumps(list(entries), indent=2).encode()


def messages(result: Any) -> list[Any]:
    return [r.message for r in result.records]


def test_zed_request_notification_params_null_dropped() -> None:
    result = read_log(
        jl(
            zed("outgoing", "request", 0, "initialize", None),
            zed("outgoing", "notification", None, "session/cancel", {"sessionId": "s"}),
        )
    )
    assert messages(result) == [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize"},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}},
    ]
    assert where(result) == []


def test_zed_responses_error_shape() -> None:
    error = {"code": -32602, "message": "Invalid params"}
    with_data = {"code": 1, "message": "m", "data": {"x": 1}}
    not_error = {"code": 1, "message": "m", "extra": True}
    result = read_log(
        zed_doc(
            zed("outgoing", "request", 1, "session/new", {}),
            zed("incoming", "response", 1, "session/new", error),
            zed("outgoing", "request", 2, "_x", {}),
            zed("incoming", "response", 2, "_x", with_data),
            zed("outgoing", "request", 3, "_x", {}),
            zed("incoming", "response", 3, "_x", not_error),
            zed("outgoing", "request", 4, "_x", {}),
            zed("incoming", "response", 4, "_x", None),
            zed("outgoing", "request", 5, "_x", {}),
            zed("incoming", "response", 5, "_x", {"code": "1", "message": "m"}),
        )
    )
    got = messages(result)[1::2]
    assert got == [
        {"jsonrpc": "2.0", "id": 1, "error": error},
        {"jsonrpc": "2.0", "id": 2, "error": with_data},
        {"jsonrpc": "2.0", "id": 3, "result": not_error},
        {"jsonrpc": "2.0", "id": 4, "result": None},
        {"jsonrpc": "2.0", "id": 5, "result": {"code": "1", "message": "m"}},
    ]
    assert where(result) == []


def test_zed_example_of_the_spec_orphan_error() -> None:
    entry = zed(
        "incoming", "response", 7, "[unrecognized response]", {"code": -32602, "message": "x"}
    )
    result = read_log(zed_doc(entry))
    assert result.records[0].direction == "incoming"
    assert result.records[0].origin == {"_type": "response", "method": "[unrecognized response]"}
    assert where(result) == [("orphan-response", 2)]


def test_zed_unknown_type_classified_by_content() -> None:
    result = read_log(
        jl(
            zed("outgoing", "request", 4, "session/new", {}),
            zed("stderr", None, None, "stderr", "oops"),
            zed("incoming", "weird", None, "session/update", {"sessionId": "s"}),
            zed("incoming", None, 4, "session/new", {"sessionId": "s"}),  # pending: response
            zed("incoming", None, 9, "session/request_permission", {}),  # not pending: request
        )
    )
    assert where(result) == [
        ("zed-unknown-type", 2),
        ("zed-unknown-type", 3),
        ("zed-unknown-type", 4),
        ("zed-unknown-type", 5),
    ]
    kinds = [r.kind for r in result.records]
    assert kinds == ["message", "stderr", "message", "message", "message"]
    assert messages(result)[2:] == [
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s"}},
        {"jsonrpc": "2.0", "id": 4, "result": {"sessionId": "s"}},
        {"jsonrpc": "2.0", "id": 9, "method": "session/request_permission", "params": {}},
    ]


@pytest.mark.parametrize(
    "entry",
    [
        zed("stderr", "stderr", None, "stderr", None),
        zed("sideways", "request", 1, "x", None),
        {"_direction": "outgoing", "_type": "request", "method": "x"},
        {"_direction": "outgoing", "_type": "notification", "params": None},
        {"_direction": "incoming", "_type": "response", "params": {}},
    ],
)
def test_zed_malformed_entries(entry: dict[str, Any]) -> None:
    result = read_log(jl(zed("outgoing", "request", 0, "initialize", None), entry))
    assert where(result) == [("malformed-record", 2)]


def test_zed_invalid_id_is_invalid_jsonrpc() -> None:
    result = read_log(jl(zed("outgoing", "request", 1.5, "initialize", None)))
    assert where(result) == [("invalid-jsonrpc", 1)]


def test_zed_stderr_empty_line_and_old_builds() -> None:
    result = read_log(jl(zed("stderr", "stderr", None, "stderr", "")))
    assert result.records[0].text == "" and result.records[0].kind == "stderr"


def test_zed_line_array_with_foreign_element() -> None:
    result = read_log(jl([zed("outgoing", "request", 0, "initialize", None), INIT_OK, 5]))
    assert where(result) == [("format-mismatch", 1), ("malformed-record", 1)]


# -- conductor -------------------------------------------------------------------------


def event(kind: str, sender: str, receiver: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "ts": fields.pop("ts", 1.0), "from": sender, "to": receiver, **fields}


def test_conductor_without_proxies() -> None:
    data = jl(
        event(
            "request",
            "Client",
            "Agent",
            protocol="acp",
            id="a",
            method="initialize",
            params={"protocolVersion": 2},
        ),
        event(
            "response", "Agent", "Client", id="a", is_error=False, payload={"protocolVersion": 2}
        ),
        event(
            "notification",
            "Agent",
            "Client",
            protocol="acp",
            method="session/update",
            params={"sessionId": "s"},
        ),
        event(
            "request",
            "Agent",
            "Client",
            protocol="acp",
            id="b",
            method="session/request_permission",
            params={},
        ),
        event(
            "response",
            "Client",
            "Agent",
            id="b",
            is_error=True,
            payload={"code": -32800, "message": "cancelled"},
        ),
        event(
            "notification", "Client", "Agent", protocol="acp", method="session/cancel", params=None
        ),
    )
    result = read_log(data)
    assert where(result) == []
    assert [r.direction for r in result.records] == [
        "outgoing",
        "incoming",
        "incoming",
        "incoming",
        "outgoing",
        "outgoing",
    ]
    assert result.records[4].message == {
        "jsonrpc": "2.0",
        "id": "b",
        "error": {"code": -32800, "message": "cancelled"},
    }
    assert result.records[5].message == {"jsonrpc": "2.0", "method": "session/cancel"}
    assert result.records[0].origin == {"from": "Client", "to": "Agent"}


def test_conductor_skips_mcp_and_deeper_hops() -> None:
    data = jl(
        event(
            "request", "Client", "Proxy(0)", protocol="acp", id="a", method="session/new", params={}
        ),
        event(
            "request",
            "Proxy(0)",
            "Proxy(1)",
            protocol="acp",
            id="b",
            method="session/new",
            params={},
        ),  # deeper hop
        event(
            "response", "Proxy(1)", "Proxy(0)", id="b", is_error=False, payload={"sessionId": "s"}
        ),  # deeper hop
        event(
            "request",
            "Proxy(1)",
            "Proxy(0)",
            protocol="mcp",
            id="m",
            method="tools/list",
            params={},
        ),
        event("response", "Proxy(0)", "Proxy(1)", id="m", is_error=False, payload={}),
        event("notification", "Proxy(0)", "Client", protocol="mcp", method="notify"),
        event("response", "Proxy(0)", "Client", id="a", is_error=False, payload={"sessionId": "s"}),
        event("request", "Proxy(1)", "Proxy(2)", protocol="acp", method="x"),  # deeper, no id
        event("response", "Proxy(2)", "Proxy(1)", is_error=False, payload={}),  # deeper, no id
        event(
            "request",
            "Client",
            "Proxy(0)",
            protocol="acp",
            id="c",
            method="initialize/proxy",
            params=None,
            session="s",
        ),
    )
    result = read_log(data)
    assert where(result) == []
    assert [r.line for r in result.records] == [1, 7, 10]  # section 7: skipped, no diagnostic
    last = result.records[2]
    assert last.message == {"jsonrpc": "2.0", "id": "c", "method": "initialize"}
    assert last.origin == {"from": "Client", "to": "Proxy(0)", "method": "initialize/proxy"}


@pytest.mark.parametrize(
    "record",
    [
        event("request", 0, "Agent", protocol="acp", id="a", method="x"),
        event("request", "Client", "Agent", protocol="acp", method="x"),
        event("request", "Client", "Agent", protocol="acp", id="a", method=5),
        event("response", "Agent", "Client", id="a", payload={}),
        event("response", "Agent", "Client", id="a", is_error=False),
        event("response", "Agent", "Client", is_error=False, payload={}),
    ],
)
def test_conductor_malformed(record: dict[str, Any]) -> None:
    first = event("notification", "Client", "Agent", protocol="acp", method="session/cancel")
    result = read_log(jl(first, record))
    assert where(result) == [("malformed-record", 2)]


def test_conductor_bad_ts() -> None:
    result = read_log(jl(event("notification", "Client", "Agent", ts="x", method="session/cancel")))
    assert where(result) == [("bad-time", 1)]
    assert result.records[0].time is None
