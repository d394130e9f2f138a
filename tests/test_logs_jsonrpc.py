"""The ``jsonrpc`` format: direction inference (LOG-FORMATS.md 2.2) and result signatures (1.9)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_client import replay_log
from acp_client.logs import METHOD_SIDES, RESULT_SIGNATURES, read_log


def jl(*values: Any) -> bytes:
    return b"".join(json.dumps(v).encode() + b"\n" for v in values)


def req(rid: Any, method: str, params: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        out["params"] = params
    return out


def note(method: str, params: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        out["params"] = params
    return out


def ok(rid: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def err(rid: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": "boom"}}


def directions(result: Any) -> list[str]:
    return [r.direction for r in result.records]


def where(result: Any) -> list[tuple[str, int | None]]:
    return [(d.code, d.line) for d in result.diagnostics]


UPDATE = note("session/update", {"sessionId": "s", "update": {"sessionUpdate": "x"}})


def test_methods_give_directions_and_responses_pair() -> None:
    result = read_log(
        jl(
            req(0, "initialize"),
            ok(0, {"protocolVersion": 2}),
            req(0, "session/request_permission"),
            ok(0, {"outcome": {"outcome": "cancelled"}}),
        )
    )
    assert directions(result) == ["outgoing", "incoming", "incoming", "outgoing"]
    assert where(result) == []


def test_ambiguous_response_resolved_by_result_signature() -> None:
    data = jl(
        req(5, "session/prompt"),
        req(5, "session/request_permission"),
        ok(5, {"stopReason": "end_turn"}),  # only session/prompt fits
        ok(5, {"outcome": {"outcome": "cancelled"}}),  # now only the Agent's id 5 is pending
    )
    result = read_log(data)
    assert directions(result) == ["outgoing", "incoming", "incoming", "outgoing"]
    assert where(result) == [("ambiguous-response", 3)]
    message = result.diagnostics[0].message
    assert "session/prompt" in message and "session/request_permission" in message
    assert "fits" in message


def test_ambiguous_response_signature_picks_the_agent_request() -> None:
    data = jl(
        req(5, "session/prompt"),
        req(5, "session/request_permission"),
        ok(5, {"outcome": {"outcome": "cancelled"}}),
        ok(5, {"messageId": "m"}),
    )
    assert directions(read_log(data)) == ["outgoing", "incoming", "outgoing", "incoming"]


@pytest.mark.parametrize("answer", [ok(3, None), err(3), ok(3, {"extra": 1})])
def test_ambiguous_response_later_request_wins(answer: dict[str, Any]) -> None:
    # fs/write_text_file has no signature (it fits every object): {"extra": 1} fits it and
    # session/new does not, so for that one the signature decides -- also the Agent's.
    agent_later = read_log(jl(req(3, "session/new"), req(3, "fs/write_text_file"), answer))
    assert directions(agent_later) == ["outgoing", "incoming", "outgoing"]
    assert [d.code for d in agent_later.diagnostics] == ["ambiguous-response"]


@pytest.mark.parametrize("answer", [ok(3, None), err(3)])
def test_ambiguous_response_later_request_wins_for_the_client(answer: dict[str, Any]) -> None:
    client_later = read_log(jl(req(3, "fs/write_text_file"), req(3, "session/new"), answer))
    assert directions(client_later) == ["incoming", "outgoing", "incoming"]
    assert "later request" in client_later.diagnostics[0].message


def test_ambiguous_when_both_fit_uses_later_request() -> None:
    data = jl(req(1, "fs/write_text_file"), req(1, "session/new"), ok(1, {"sessionId": "s"}))
    assert directions(read_log(data)) == ["incoming", "outgoing", "incoming"]


def test_cancel_request_direction_from_pending_tables() -> None:
    cancel = note("$/cancel_request", {"requestId": 7})
    client_only = read_log(jl(req(7, "session/prompt"), cancel))
    assert directions(client_only) == ["outgoing", "outgoing"]
    assert where(client_only) == []
    agent_only = read_log(jl(req(7, "session/request_permission"), cancel))
    assert directions(agent_only) == ["incoming", "incoming"]
    both = read_log(jl(req(7, "session/prompt"), req(7, "session/request_permission"), cancel))
    assert directions(both) == ["outgoing", "incoming", "incoming"]
    assert where(both) == [("ambiguous-direction", 3)]
    neither = read_log(jl(cancel, cancel))
    assert directions(neither) == ["unknown", "unknown"]
    assert where(neither) == [("unknown-direction", 1), ("unknown-direction", 2)]


def test_cancel_request_with_string_id_does_not_match_integer() -> None:
    result = read_log(jl(req(7, "session/prompt"), note("$/cancel_request", {"requestId": "7"})))
    assert directions(result) == ["outgoing", "unknown"]


def test_unknown_method_warns_once_per_method() -> None:
    data = jl(note("_vendor/ping"), note("_vendor/ping"), note("_vendor/pong"), note("mcp/message"))
    result = read_log(data)
    assert directions(result) == ["unknown"] * 4
    assert where(result) == [
        ("unknown-direction", 1),
        ("unknown-direction", 3),
        ("unknown-direction", 4),
    ]


def test_side_option_names_extension_methods() -> None:
    data = jl(note("_vendor/ping"), req(1, "_vendor/ask"), ok(1, {}))
    result = read_log(data, sides={"_vendor/ping": "client", "_vendor/ask": "agent"})
    assert directions(result) == ["incoming", "outgoing", "incoming"]
    assert where(result) == []
    overridden = read_log(jl(note("session/update")), sides={"session/update": "agent"})
    assert directions(overridden) == ["outgoing"]
    with pytest.raises(ValueError, match="side"):
        read_log(b"", sides={"x": "server"})


def test_unknown_request_and_its_response() -> None:
    result = read_log(jl(req(9, "_vendor/ask"), ok(9, {"answer": 1})))
    assert directions(result) == ["unknown", "unknown"]
    assert [d.code for d in result.diagnostics] == ["unknown-direction"]


def test_batch_elements_share_the_known_direction() -> None:
    data = jl([note("_vendor/progress"), UPDATE, req(4, "_vendor/ask")], ok(4, {}))
    result = read_log(data)
    assert directions(result) == ["incoming", "incoming", "incoming", "outgoing"]
    assert [r.batch for r in result.records] == [(0, 3), (1, 3), (2, 3), None]
    # the request moved to the Agent's table: its answer pairs (no orphan)
    assert [d.code for d in result.diagnostics] == ["unknown-direction", "unknown-direction"]


def test_batch_direction_conflict() -> None:
    result = read_log(jl([req(0, "initialize"), UPDATE, note("_vendor/x")]))
    assert directions(result) == ["outgoing", "incoming", "unknown"]
    assert where(result) == [("unknown-direction", 1), ("batch-direction-conflict", 1)]


def test_empty_batch() -> None:
    result = read_log(jl([], UPDATE))
    assert where(result) == [("empty-batch", 1)]
    assert len(result.records) == 1


@pytest.mark.parametrize(
    ("answer", "direction"),
    [
        (ok(42, {"sessionId": "s"}), "incoming"),
        (ok(42, {"stopReason": "end_turn"}), "incoming"),
        (ok(42, {"outcome": {"outcome": "cancelled"}}), "outgoing"),
        (ok(42, {"output": "", "truncated": False}), "outgoing"),
        (ok(42, {"output": ""}), "unknown"),  # terminal/output needs both keys
        (ok(42, {}), "unknown"),
        (ok(42, {"sessionId": "s", "outcome": {}}), "unknown"),  # both sides claim it
        (ok(42, None), "unknown"),
        (err(42), "unknown"),
    ],
)
def test_orphan_direction_from_result_signatures(answer: dict[str, Any], direction: str) -> None:
    result = read_log(jl(answer))
    assert directions(result) == [direction]
    assert where(result) == [("orphan-response", 1)]


def test_orphan_in_a_batch_takes_the_batch_direction() -> None:
    result = read_log(jl([UPDATE, ok(77, {})]))
    assert directions(result) == ["incoming", "incoming"]
    assert [d.code for d in result.diagnostics] == ["orphan-response"]


def test_replay_reports_an_orphan_response_once() -> None:
    # LOG-FORMATS.md section 8: one `orphan-response` per record, though both the reader's
    # pairing and the connection's request tracking notice it.
    result = replay_log(jl(UPDATE, ok(77, {"messageId": "u"})))
    assert [(d.code, d.line) for d in result.diagnostics] == [("orphan-response", 2)]


def test_null_id_response_is_never_paired() -> None:
    result = read_log(jl(req(0, "initialize"), err(None)))
    assert directions(result) == ["outgoing", "unknown"]
    assert where(result) == [("orphan-response", 2)]


def test_response_before_request_is_moved_and_paired() -> None:
    data = jl(ok(3, {"sessionId": "s"}), UPDATE, req(3, "session/new"), UPDATE)
    result = read_log(data)
    assert [r.line for r in result.records] == [2, 3, 1, 4]
    assert directions(result) == ["incoming", "outgoing", "incoming", "incoming"]
    assert where(result) == [("response-before-request", 1)]


def test_initialize_starts_a_new_connection() -> None:
    data = jl(
        req(0, "initialize"),
        ok(0, {"protocolVersion": 2}),
        req(1, "session/prompt"),
        req(0, "initialize"),  # the client reconnects; id 1 is dropped silently
        ok(0, {"protocolVersion": 2}),
        ok(1, {"messageId": "m"}),
    )
    result = read_log(data)
    assert directions(result)[-1] == "incoming"
    assert where(result) == [("orphan-response", 6)]


def test_duplicate_request_id() -> None:
    result = read_log(jl(req(1, "session/new"), req(1, "session/list"), ok(1, {"sessions": []})))
    assert where(result) == [("duplicate-request-id", 2)]
    assert directions(result) == ["outgoing", "outgoing", "incoming"]


def test_direction_option_turns_inference_off() -> None:
    data = jl(req(0, "initialize"), ok(0, {}), note("_vendor/x"), [UPDATE, UPDATE], ok(5, {}))
    result = read_log(data, direction="incoming")
    assert directions(result) == ["incoming"] * 6
    assert where(result) == []
    with pytest.raises(ValueError):
        read_log(b"", direction="sideways")  # type: ignore[arg-type]


def test_no_direction_mismatch_in_jsonrpc() -> None:
    assert where(read_log(jl(UPDATE, req(0, "initialize")))) == []


def test_method_sides_table() -> None:
    assert METHOD_SIDES["session/prompt"] == "agent"
    assert METHOD_SIDES["session/update"] == "client"
    assert METHOD_SIDES["$/cancel_request"] == "either"
    assert METHOD_SIDES["authenticate"] == "agent"
    assert METHOD_SIDES["terminal/kill"] == "client"
    assert METHOD_SIDES["nes/reject"] == "agent"
    assert METHOD_SIDES["mcp/connect"] == "client"
    assert "_vendor/x" not in METHOD_SIDES
    assert len([m for m, s in METHOD_SIDES.items() if s == "agent"]) == 36
    assert len([m for m, s in METHOD_SIDES.items() if s == "client"]) == 14
    assert RESULT_SIGNATURES["terminal/output"] == (frozenset({"output", "truncated"}),)


@pytest.mark.parametrize("body", [{"result": {"stopReason": "end_turn"}}, {"error": {"code": 1}}])
def test_2_4_a_response_with_id_null_is_unknown_whatever_its_result(body: Any) -> None:
    # A result signature would say `incoming`; 2.4: id null pairs with nothing, `unknown`.
    data = jl(
        req(0, "initialize"), ok(0, {"protocolVersion": 2}), {"jsonrpc": "2.0", "id": None, **body}
    )
    result = read_log(data)
    assert directions(result)[-1] == "unknown"
    (diag,) = [d for d in result.diagnostics if d.code == "orphan-response"]
    assert "a response with id null pairs with no pending request" in diag.message
    third = [d for d in replay_log(data).snapshot()["diagnostics"] if d.get("line") == 3]
    assert third == [  # not applied as an answer of the agent's: no invalid-message error
        {"line": 3, "severity": "warning", "code": "orphan-response", "message": diag.message}
    ]
