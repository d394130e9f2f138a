"""Pending tables, the look-ahead and perspective in formats with directions (1.10, 1.11)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_client.logs import LogReader, read_log


def jl(*values: Any) -> bytes:
    return b"".join(json.dumps(v).encode() + b"\n" for v in values)


def req(rid: Any, method: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": None}


def note(method: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": {"sessionId": "s"}}


def ok(rid: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def sdk(direction: str, message: Any) -> dict[str, Any]:
    return {"direction": direction, "message": message}


def out(message: Any) -> dict[str, Any]:
    return sdk("outgoing", message)


def inc(message: Any) -> dict[str, Any]:
    return sdk("incoming", message)


def where(result: Any) -> list[tuple[str, int | None]]:
    return [(d.code, d.line) for d in result.diagnostics]


def lines(result: Any) -> list[int]:
    return [r.line for r in result.records]


UPDATE = note("session/update")
INIT = req(0, "initialize")
INIT_OK = ok(0, {"protocolVersion": 2})


def test_response_before_request_is_moved_behind_it() -> None:
    data = jl(
        out(INIT),
        inc(INIT_OK),
        inc(ok(1, {"sessionId": "s"})),  # the SDK reports the answer first ...
        inc(UPDATE),
        out(req(1, "session/new")),  # ... then its own request, once written
        inc(UPDATE),
    )
    result = read_log(data)
    assert lines(result) == [1, 2, 4, 5, 3, 6]
    assert where(result) == [("response-before-request", 3)]
    moved = result.records[4]
    assert moved.direction == "incoming"
    assert moved.message == ok(1, {"sessionId": "s"})


def test_moved_response_pairs_so_the_request_is_not_pending() -> None:
    data = jl(out(INIT), inc(ok(1, {})), out(req(1, "session/new")), inc(ok(1, {})))
    result = read_log(data)
    assert [d.code for d in result.diagnostics] == ["response-before-request", "orphan-response"]


@pytest.mark.parametrize(("gap", "moved"), [(0, True), (7, True), (8, False)])
def test_look_ahead_spans_8_records(gap: int, moved: bool) -> None:
    data = jl(out(INIT), inc(ok(1, {})), *[inc(UPDATE)] * gap, out(req(1, "session/new")))
    result = read_log(data)
    codes = [d.code for d in result.diagnostics]
    assert codes == (["response-before-request"] if moved else ["orphan-response"])


def test_stderr_records_count_in_the_look_ahead() -> None:
    stderr = {"direction": "stderr", "text": "x"}
    data = jl(out(INIT), inc(ok(1, {})), *[stderr] * 8, out(req(1, "session/new")))
    assert [d.code for d in read_log(data).diagnostics] == ["orphan-response"]


def test_other_record_of_the_request_direction_in_between_blocks_the_move() -> None:
    data = jl(
        out(INIT),
        inc(ok(1, {})),
        out(note("session/cancel")),
        out(req(1, "session/new")),
    )
    result = read_log(data)
    assert where(result) == [("orphan-response", 2)]
    assert lines(result) == [1, 2, 3, 4]


def test_request_of_the_same_direction_never_answers() -> None:
    data = jl(out(INIT), inc(ok(1, {})), inc(req(1, "session/request_permission")))
    assert [d.code for d in read_log(data).diagnostics] == ["orphan-response"]


def test_string_and_integer_ids_differ() -> None:
    data = jl(out(INIT), out(req("1", "session/new")), inc(ok(1, {"sessionId": "s"})))
    assert where(read_log(data)) == [("orphan-response", 3)]


def test_orphan_keeps_recorded_direction() -> None:
    result = read_log(jl(out(INIT), out(ok(9, {"outcome": {}}))))
    assert result.records[1].direction == "outgoing"
    assert where(result) == [("orphan-response", 2)]


def test_incoming_response_pairs_only_with_outgoing_request() -> None:
    data = jl(
        out(INIT),
        inc(INIT_OK),
        inc(req(0, "session/request_permission")),  # Agent's id 0, not the client's
        out(ok(0, {"outcome": {"outcome": "cancelled"}})),
    )
    assert where(read_log(data)) == []


def test_duplicate_request_id_replaces_the_older() -> None:
    data = jl(out(req(1, "session/new")), out(req(1, "session/list")), inc(ok(1, {})))
    assert where(read_log(data)) == [("duplicate-request-id", 2)]


def test_initialize_empties_the_tables() -> None:
    data = jl(
        out(INIT),
        inc(INIT_OK),
        out(req(1, "session/prompt")),
        out(INIT),
        inc(INIT_OK),
        inc(ok(1, {"messageId": "m"})),
    )
    assert where(read_log(data)) == [("orphan-response", 6)]


def test_held_responses_wait_for_initialize() -> None:
    # python-sdk client-side dump: the initialize result is observed before the request
    data = jl(inc(INIT_OK), out(INIT), inc(UPDATE))
    result = read_log(data)
    assert lines(result) == [2, 1, 3]
    assert where(result) == [("response-before-request", 1)]


# -- perspective ---------------------------------------------------------------------------


AGENT_SIDE_DUMP = [
    inc(INIT),
    out(INIT_OK),
    inc(req(1, "session/new")),
    out(ok(1, {"sessionId": "s"})),
    out(UPDATE),
    out(req(0, "session/request_permission")),
    inc(ok(0, {"outcome": {"outcome": "cancelled"}})),
    inc(note("session/cancel")),
]
CLIENT_VIEW = [
    "outgoing",
    "incoming",
    "outgoing",
    "incoming",
    "incoming",
    "incoming",
    "outgoing",
    "outgoing",
]


def test_python_sdk_agent_side_dump_is_swapped() -> None:
    result = read_log(jl(*AGENT_SIDE_DUMP))
    assert result.format == "python-sdk"
    assert [r.direction for r in result.records] == CLIENT_VIEW
    assert where(result) == [("perspective-swapped", 1)]


def test_records_before_the_decisive_one_are_swapped_too() -> None:
    data = jl(out(ok(5, {})), out(note("_vendor/x")), inc(note("session/cancel")), out(UPDATE))
    result = read_log(data)
    assert [r.direction for r in result.records] == ["incoming", "incoming", "outgoing", "incoming"]
    assert where(result) == [("orphan-response", 1), ("perspective-swapped", 3)]


def test_acp_client_logs_are_checked_too() -> None:
    data = jl({"direction": "incoming", "message": INIT, "time": 1.0})
    result = read_log(data)
    assert result.records[0].direction == "outgoing"
    assert where(result) == [("perspective-swapped", 1)]


def test_no_decisive_record_means_client_side() -> None:
    data = jl(inc(ok(5, {})), out(note("_vendor/x")), out(note("$/cancel_request")))
    result = read_log(data)
    assert [r.direction for r in result.records] == ["incoming", "outgoing", "outgoing"]
    assert [d.code for d in result.diagnostics] == ["orphan-response"]


def test_perspective_option() -> None:
    forced_client = read_log(jl(*AGENT_SIDE_DUMP), perspective="client")
    assert [r.direction for r in forced_client.records][:2] == ["incoming", "outgoing"]
    assert ("perspective-swapped", 1) not in where(forced_client)
    assert ("direction-mismatch", 1) in where(forced_client)
    forced_agent = read_log(jl(*AGENT_SIDE_DUMP), perspective="agent")
    assert [r.direction for r in forced_agent.records] == CLIENT_VIEW
    assert where(forced_agent) == []
    with pytest.raises(ValueError):
        read_log(b"", perspective="server")  # type: ignore[arg-type]


def test_direction_mismatch_after_perspective_is_settled() -> None:
    data = jl(out(INIT), inc(note("session/cancel")), out(UPDATE), out(note("_vendor/x")))
    result = read_log(data)
    assert [r.direction for r in result.records] == ["outgoing", "incoming", "outgoing", "outgoing"]
    assert where(result) == [("direction-mismatch", 2), ("direction-mismatch", 3)]


def test_capture_has_no_perspective_check() -> None:
    data = jl({"t": 0, "dir": "in", "msg": INIT})
    result = read_log(data)
    assert result.records[0].direction == "incoming"
    assert where(result) == [("direction-mismatch", 1)]


def test_stream_direction_spellings() -> None:
    spellings = ["StreamDirection.OUTGOING", "OUTGOING", "streamdirection.outgoing", "Outgoing"]
    data = jl(*[sdk(s, note("session/cancel")) for s in spellings])
    result = read_log(data)
    assert [r.direction for r in result.records] == ["outgoing"] * 4
    assert where(result) == []


def test_reader_releases_records_as_soon_as_they_are_final() -> None:
    reader = LogReader()
    first = reader.feed(jl(out(INIT)))
    assert [getattr(i, "line", None) for i in first] == [1]
    held = reader.feed(jl(inc(ok(1, {}))))
    assert held == []  # waiting for its request
    rest = reader.feed(jl(out(req(1, "session/new"))))
    assert [getattr(i, "code", None) for i in rest] == [None, "response-before-request", None]
    assert reader.close() == []


def test_settle_gives_out_what_the_look_ahead_holds_and_reading_goes_on() -> None:
    # A follower (replay --follow) whose log paused after an unpaired response: the records
    # after it waited for 8 more records or the end, so the live view stayed behind.
    reader = LogReader()
    fed = reader.feed(jl(out(INIT), inc(INIT_OK), inc(ok(7, {"messageId": "u"})), inc(UPDATE)))
    assert [getattr(r, "line", None) for r in fed] == [1, 2]  # held: the response and after
    settled = reader.settle()
    assert [(getattr(r, "line", None), getattr(r, "code", None)) for r in settled] == [
        (3, "orphan-response"),
        (3, None),
        (4, None),
    ]
    assert reader.settle() == [] and not reader.done
    later = reader.feed(jl(inc(UPDATE), out(req(7, "session/prompt")), inc(ok(7, {}))))
    assert [getattr(r, "line", None) for r in later] == [5, 6, 7]  # 7 pairs with line 6
    assert reader.close() == []
