"""Document mode, format detection, one format per file, strict mode (LOG-FORMATS.md 1.2-1.5)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_client import replay_log
from acp_client.logs import read_log

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}}
INIT_OK = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 2}}
UPDATE = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s"}}


def jl(*values: Any) -> bytes:
    return b"".join(json.dumps(v).encode() + b"\n" for v in values)


def codes(result: Any) -> list[str]:
    return [d.code for d in result.diagnostics]


def where(result: Any) -> list[tuple[str, int | None]]:
    return [(d.code, d.line) for d in result.diagnostics]


def zed(direction: str, kind: str, rid: Any, method: str, params: Any) -> dict[str, Any]:
    return {"_direction": direction, "_type": kind, "id": rid, "method": method, "params": params}


ZED_INIT = zed("outgoing", "request", 0, "initialize", {"protocolVersion": 2})
ZED_INIT_OK = zed("incoming", "response", 0, "initialize", {"protocolVersion": 2})


@pytest.mark.parametrize(
    ("first", "fmt"),
    [
        (ZED_INIT, "zed"),
        ([ZED_INIT, ZED_INIT_OK], "zed"),
        (
            {
                "type": "request",
                "ts": 0,
                "from": "Client",
                "to": "Agent",
                "id": "a",
                "method": "initialize",
                "params": None,
            },
            "conductor",
        ),
        ({"t": 0, "dir": "out", "msg": INIT}, "capture"),
        ({"direction": "outgoing", "message": INIT, "time": 1.0}, "acp-client"),
        ({"direction": "outgoing", "message": INIT}, "python-sdk"),
        ({"direction": "stderr", "text": "hi"}, "python-sdk"),
        (INIT, "jsonrpc"),
        ({"method": "session/update"}, "jsonrpc"),
        ({"id": 3, "error": {"code": 1, "message": "x"}}, "jsonrpc"),
        ([INIT, UPDATE], "jsonrpc"),
        # the first passing test wins: a wrapper key beats JSON-RPC members
        ({"_direction": "stderr", "_type": "stderr", "params": "x", "jsonrpc": "2.0"}, "zed"),
        ({"dir": "out", "msg": INIT, "direction": "outgoing", "message": INIT}, "capture"),
    ],
)
def test_detection_table(first: Any, fmt: str) -> None:
    assert read_log(jl(first)).format == fmt


def test_unknown_lines_before_the_first_known_record_are_reported() -> None:
    data = b"garbage\n" + jl({"foo": 1}, 42) + b"\n" + jl(INIT, INIT_OK)
    result = read_log(data)
    assert result.format == "jsonrpc"
    assert where(result) == [
        ("malformed-line", 1),
        ("malformed-record", 2),
        ("malformed-record", 3),
    ]
    assert [r.line for r in result.records] == [5, 6]


def test_no_format_detected_is_fatal() -> None:
    result = read_log(b"hello\n" + jl({"foo": 1}, [1, 2]))
    assert result.fatal and result.format is None
    assert codes(result) == [
        "malformed-line",
        "malformed-record",
        "malformed-record",
        "no-format-detected",
    ]
    assert result.diagnostics[-1].severity == "error"


def test_conductor_debug_text_log_is_not_accepted() -> None:
    text = 'conductor debug log\nC → +0ms {"jsonrpc":"2.0"}\n0 ← +1ms {}\n'.encode()
    assert codes(read_log(text))[-1] == "no-format-detected"


def test_format_mismatch_and_malformed_record_after_detection() -> None:
    data = jl(
        {"direction": "outgoing", "message": INIT, "time": 1.0},
        INIT_OK,  # a bare message in an acp-client log
        {"t": 1, "dir": "in", "msg": INIT_OK},  # a capture record
        {"hello": "world"},  # no shape at all
        {"direction": "incoming", "message": INIT_OK, "time": 2.0},
    )
    result = read_log(data)
    assert result.format == "acp-client"
    assert where(result) == [
        ("format-mismatch", 2),
        ("format-mismatch", 3),
        ("malformed-record", 4),
    ]
    assert [r.line for r in result.records] == [1, 5]


def test_acp_client_and_python_sdk_share_records() -> None:
    data = jl(
        {"direction": "outgoing", "message": INIT},
        {"direction": "incoming", "message": INIT_OK, "time": 3.5},
    )
    result = read_log(data)
    assert result.format == "python-sdk" and codes(result) == []
    assert result.records[1].time == 3.5 and result.records[1].clock == "epoch"
    forced = read_log(data, format="acp-client")
    assert forced.format == "acp-client" and codes(forced) == []


def test_format_option_skips_detection() -> None:
    data = jl({"foo": 1}, {"direction": "outgoing", "message": INIT})
    result = read_log(data, format="python-sdk")
    assert where(result) == [("malformed-record", 1)]
    assert len(result.records) == 1
    wrong = read_log(jl(INIT), format="zed")
    assert where(wrong) == [("format-mismatch", 1)]
    assert not wrong.fatal and wrong.format == "zed"


def test_unknown_format_option() -> None:
    with pytest.raises(ValueError, match="unknown log format"):
        read_log(b"", format="json")


# -- document mode ---------------------------------------------------------------------


def test_pretty_printed_zed_export() -> None:
    text = json.dumps([ZED_INIT, ZED_INIT_OK], indent=2).encode()
    result = read_log(b"\n" + text.replace(b"\n", b"\r\n"))
    assert codes(result) == [] and result.format == "zed"
    # the blank first line is counted; each entry's line is that of its "{"
    assert [r.line for r in result.records] == [3, 12]


def test_document_of_several_values() -> None:
    text = (
        json.dumps(ZED_INIT, indent=2) + "\n" + json.dumps([ZED_INIT_OK], indent=2) + "\n[]\n"
    ).encode()
    result = read_log(text)
    assert codes(result) == []
    assert [r.line for r in result.records] == [1, 11]


def test_single_line_export_is_not_document_mode() -> None:
    result = read_log(jl([ZED_INIT, ZED_INIT_OK]) + jl(ZED_INIT))
    assert codes(result) == []
    assert [r.line for r in result.records] == [1, 1, 2]
    assert all(r.batch is None for r in result.records)


def test_malformed_document_keeps_records_before() -> None:
    text = json.dumps([ZED_INIT, ZED_INIT_OK, ZED_INIT], indent=2)
    cut = text[: text.rindex('"method"')]  # the third entry breaks off
    result = read_log(cut.encode())
    assert len(result.records) == 2
    assert codes(result) == ["malformed-document"]
    diagnostic = result.diagnostics[0]
    assert diagnostic.severity == "error"
    assert diagnostic.line == 20  # "[" on line 1, then 9 lines per entry
    assert not result.fatal


def test_unclosed_document_array() -> None:
    text = json.dumps([ZED_INIT], indent=2)[:-1]
    result = read_log(text.encode())
    assert len(result.records) == 1 and where(result) == [("malformed-document", 1)]


def test_document_garbage_after_an_element() -> None:
    text = "[\n" + json.dumps(ZED_INIT) + "\n oops ]"
    result = read_log(text.encode())
    assert len(result.records) == 1 and where(result) == [("malformed-document", 3)]


def test_broken_document_without_any_record_is_also_no_format() -> None:
    result = read_log(b"{\n  oops\n")
    assert codes(result) == ["malformed-document", "no-format-detected"]
    assert result.fatal


@pytest.mark.parametrize("terminated", [True, False])
def test_json_lines_with_a_broken_first_line_are_not_a_document(terminated: bool) -> None:
    # 1.2 would read the input as a document (the first line starts with "{" and does not
    # parse), but its first value does not decode and the lines after it are records: it is
    # JSON Lines (1.3: a line before the first record that does not parse is skipped).
    data = b'{"jsonrpc":"2.0","meth\n' + jl(INIT, INIT_OK, UPDATE)
    result = read_log(data if terminated else data[:-1])
    assert [r.line for r in result.records] == [2, 3, 4]
    assert where(result) == [("malformed-line", 1)]
    assert not result.fatal


def test_a_broken_first_line_nested_too_deep_does_not_lose_the_log() -> None:
    result = read_log(b"[" * 5000 + b"]" * 5000 + b"\n" + jl(INIT))
    assert [r.line for r in result.records] == [2]
    assert where(result) == [("malformed-line", 1)]


def test_document_invalid_utf8() -> None:
    text = json.dumps([ZED_INIT], indent=2).encode() + b"\n[\xff]"
    result = read_log(text)
    assert len(result.records) == 1 and codes(result) == ["malformed-document"]


def test_document_rejects_nan() -> None:
    result = read_log(b'{\n"_direction": "stderr", "_type": "stderr", "params": NaN}')
    assert codes(result)[0] == "malformed-document"


def test_document_elements_of_other_formats() -> None:
    text = json.dumps([ZED_INIT, INIT_OK], indent=2).encode()
    result = read_log(text)
    assert where(result) == [("format-mismatch", 11)]


# -- strict mode -------------------------------------------------------------------------


def test_strict_stops_at_first_error() -> None:
    data = jl(INIT) + b"broken\n" + jl(INIT_OK, UPDATE)
    result = read_log(data, strict=True)
    assert result.stopped_early and not result.fatal
    assert codes(result) == ["malformed-line"]
    assert [r.line for r in result.records] == [1]


def test_strict_stops_at_an_error_of_a_message_held_back_until_the_version_is_known() -> None:
    # LOG-FORMATS 1.5: the replay holds messages back while the protocol version is
    # undecided; an error found when they are applied later still stops it there.
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}  # invalid
    new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w"}}
    new_ok = {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}
    data = b"".join(json.dumps(m).encode() + b"\n" for m in (init, new, new_ok))
    lenient = replay_log(data)
    assert [s["sessionId"] for s in lenient.snapshot()["sessions"]] == ["s1"]
    for log in (data[: data.index(b"\n") + 1], data):  # the error found at the end, or later
        result = replay_log(log, strict=True)
        assert result.stopped_early and not result.ok
        assert [(d.line, d.code) for d in result.diagnostics] == [(1, "invalid-message")]
        assert result.snapshot()["sessions"] == []


def test_a_strict_replayer_fed_message_by_message_stops_at_the_first_error() -> None:
    from acp_client import Replayer

    bad = {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": {"type": "text"}}
    running = {"sessionUpdate": "state_update", "state": "running"}
    replayer = Replayer(protocol=2, strict=True)
    for update in (bad, running):
        params = {"sessionId": "s", "update": update}
        replayer.feed("incoming", {"jsonrpc": "2.0", "method": "session/update", "params": params})
    assert replayer.stopped
    assert replayer.connection.session("s").state is None


def test_strict_ignores_warnings() -> None:
    data = jl({"id": 0, "method": "initialize"}, INIT_OK)
    result = read_log(data, strict=True)
    assert codes(result) == ["missing-jsonrpc-version"]
    assert not result.stopped_early and len(result.records) == 2


def test_strict_flushes_held_responses() -> None:
    data = jl(INIT_OK) + b"broken\n"
    result = read_log(data, strict=True)
    assert codes(result) == ["orphan-response", "malformed-line"]  # in file order
    assert len(result.records) == 1


def test_strict_inside_a_batch() -> None:
    data = jl([UPDATE, {"jsonrpc": "2.0"}, UPDATE])
    result = read_log(data, strict=True)
    assert codes(result) == ["invalid-jsonrpc"]
    assert [r.batch for r in result.records] == [(0, 3)]


def test_default_mode_reads_on_after_errors() -> None:
    data = jl(INIT) + b"broken\n" + jl(INIT_OK, UPDATE)
    result = read_log(data)
    assert not result.stopped_early and len(result.records) == 3
