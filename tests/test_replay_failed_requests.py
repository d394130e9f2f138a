"""A replay keeps the client's requests that the agent refused (prompts aside)."""

from __future__ import annotations

import json
from typing import Any

from acp_client import FailedRequest, Replayer, replay_log


def _log(*messages: dict[str, Any]) -> bytes:
    return "".join(json.dumps(m) + "\n" for m in messages).encode()


def test_a_refused_session_new_is_kept_with_its_line_and_error() -> None:
    result = replay_log(
        _log(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}},
            {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 2}},
            {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w"}},
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "no key", "data": 1}},
        )
    )
    assert result.snapshot()["sessions"] == []
    [failed] = result.failed_requests
    assert (failed.line, failed.method, failed.session_id) == (4, "session/new", None)
    assert (failed.error.code, failed.error.message, failed.error.data) == (-32000, "no key", 1)
    assert failed.to_json() == {
        "line": 4,
        "method": "session/new",
        "error": {"code": -32000, "message": "no key", "data": 1},
    }


def test_a_refused_prompt_is_left_to_its_prompt_object() -> None:
    result = replay_log(
        _log(
            {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w"}},
            {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s"}},
            {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "s"}},
            {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "bad"}},
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "session/set_config_option",
                "params": {"sessionId": "s", "configId": "mode", "value": "x"},
            },
            {"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "no such value"}},
        )
    )
    assert [(f.line, f.method, f.session_id) for f in result.failed_requests] == [
        (6, "session/set_config_option", "s")
    ]
    assert result.snapshot()["sessions"][0]["prompts"][0]["status"] == "rejected"


def test_a_refused_v1_session_new_is_kept_too() -> None:
    replayer = Replayer()
    messages = [
        ("outgoing", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}),
        ("incoming", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}),
        ("outgoing", {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}}),
        ("incoming", {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "x"}}),
    ]
    for line, (direction, message) in enumerate(messages, 1):
        replayer.feed(direction, message, line=line)
    replayer.finish()
    assert replayer.version == 1
    assert [(f.line, f.method) for f in replayer.failed_requests] == [(4, "session/new")]
    assert isinstance(replayer.failed_requests[0], FailedRequest)


def test_a_refused_v1_session_load_is_named_as_the_log_has_it() -> None:
    # The v1 adapter reads session/load as a session/resume with replay; the failure is the
    # load the log holds (a Codex load of a missing session: -32002).
    replayer = Replayer()
    load = {"sessionId": "gone", "cwd": "/", "mcpServers": []}
    messages = [
        ("outgoing", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}),
        ("incoming", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}),
        ("outgoing", {"jsonrpc": "2.0", "id": 1, "method": "session/load", "params": load}),
        ("incoming", {"jsonrpc": "2.0", "id": 1, "error": {"code": -32002, "message": "nf"}}),
    ]
    for line, (direction, message) in enumerate(messages, 1):
        replayer.feed(direction, message, line=line)
    replayer.finish()
    assert [(f.line, f.method) for f in replayer.failed_requests] == [(4, "session/load")]


def test_a_close_answered_with_session_not_found_closed_the_session_and_did_not_fail() -> None:
    result = replay_log(
        _log(
            {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w"}},
            {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s"}},
            {"jsonrpc": "2.0", "id": 2, "method": "session/close", "params": {"sessionId": "s"}},
            {"jsonrpc": "2.0", "id": 2, "error": {"code": -32002, "message": "gone"}},
            {"jsonrpc": "2.0", "id": 3, "method": "session/close", "params": {"sessionId": "t"}},
            {"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "broken"}},
        )
    )
    assert result.snapshot()["sessions"][0]["closed"] is True
    assert [(f.line, f.method, f.session_id) for f in result.failed_requests] == [
        (6, "session/close", "t")
    ]
