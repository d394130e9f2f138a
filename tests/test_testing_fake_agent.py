"""FakeAgent: valid wire messages, wire bytes, and every stored-log format."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings

from acp_client.testing import LOG_FORMATS, FakeAgent, ReferenceModel, ScriptedAgent, log_lines
from acp_client.testing.strategies import conversations, stored_logs

SCHEMA = Path(__file__).parent / "peers/node_modules/@agentclientprotocol/sdk/schema/v2/schema.json"


@cache
def _validator() -> jsonschema.Draft202012Validator:
    if not SCHEMA.exists():
        if os.environ.get("CI"):
            pytest.fail(f"the official ACP schema is missing: {SCHEMA}")
        pytest.skip(f"the official ACP schema is not installed ({SCHEMA})")
    return jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))


def full_script() -> FakeAgent:
    """One call of every builder."""
    a = FakeAgent("sess_1")
    a.initialize(0).new_session(1, respond=False).commands([("help", "Help")])
    a.new_session_response(1, config_options=[], available_commands=[])
    a.prompt(2, "Fix it").user_chunk("u1", "Fix ").user_chunk("u1", "it").prompt_response(2, "u1")
    a.user_message("u1", [{"type": "text", "text": "Fix it"}])
    a.state("running").thought_chunk("th1", "hmm").thought("th1", "hmm!")
    a.agent_message("a1", "I will").agent_chunk("a1", " fix it.\u2028\u0085\r\n")
    a.tool_call("c1", title="Edit", kind="edit", status="pending", rawInput={"p": 1})
    a.tool_content_chunk("c1", "progress")
    a.terminal("t1", command="pytest", cwd="/w", output=b"\x1b[1mok")
    a.terminal_chunk("t1", "ü".encode()[:1]).terminal_chunk("t1", "ü".encode()[1:])
    a.plan("p1", ["step", {"content": "x", "priority": "high", "status": "completed"}])
    a.usage(10, 100).usage(20, 100, (0.25, "USD"))
    a.config_options([{"configId": "m", "name": "M", "type": "boolean", "currentValue": False}])
    a.session_info(title="T", updatedAt="2025-01-01T00:00:00Z")
    a.notice("info", "Heads up", "details")
    a.compaction("k1", "in_progress").compaction_chunk("k1", "sum").compaction("k1", "completed")
    a.custom("_acme_progress", pct=50)
    a.permission_request(0, "Allow edit?", "c1").state("requires_action")
    a.permission_answer(0, "allow-once").state("running")
    a.permission_request(1, "Again?").cancel_request(1).permission_answer(1, None)
    a.prompt(3, "second").prompt_error(3, -32602, "Invalid params")
    a.cancel().state("idle", "cancelled", background=[])
    a.resume(4).user_message("u1", "Fix it").state("idle", "end_turn").resume_response(4)
    a.close(5).close_response(5)
    return a


def test_every_builder_gives_valid_messages() -> None:
    validator = _validator()
    for direction, message in full_script().messages:
        assert direction in ("incoming", "outgoing")
        assert message["jsonrpc"] == "2.0"
        validator.validate(message)


def test_script_reconciles() -> None:
    model = ReferenceModel()
    model.feed_all(full_script().messages)
    (s,) = model.snapshot()["sessions"]
    assert s["closed"] is True and s["announced"] is True
    assert [p["status"] for p in s["prompts"]] == ["accepted", "rejected"]
    assert [p["status"] for p in s["permissionRequests"]] == ["answered", "withdrawn"]
    # R50 kept the early update over the session/new result; the resume result (no list,
    # R47) then stored [].
    assert s["availableCommands"] == []


def test_to_bytes_is_newline_delimited_compact_json() -> None:
    a = full_script()
    wire = a.to_bytes()
    lines = wire.split(b"\n")
    assert lines[-1] == b"" and b" " not in lines[0].split(b'"text"')[0]
    assert [msgspec.json.decode(line) for line in lines[:-1]] == [
        m for d, m in a.messages if d == "incoming"
    ]
    both = a.to_bytes(None)
    assert both.count(b"\n") == len(a.messages)
    assert a.to_bytes("outgoing").count(b"\n") == sum(d == "outgoing" for d, _ in a.messages)


def test_in_session_shares_the_script() -> None:
    a = FakeAgent("s1")
    a.in_session("s2").agent_chunk("m", "x")
    a.agent_chunk("m", "y")
    assert [m["params"]["sessionId"] for _, m in a.messages] == ["s2", "s1"]


def test_send_checks_direction_and_formats_are_checked() -> None:
    with pytest.raises(ValueError):
        FakeAgent().send("sideways", {})
    with pytest.raises(ValueError):
        FakeAgent().log_lines("csv")


# -- log formats: a tiny reader per format, enough to prove the writer right --------------


def _read(fmt: str, text: str) -> list[tuple[str, dict[str, Any]]]:
    if fmt == "zed":
        return _read_zed(json.loads(text))
    # Split on LF only: U+2028 and friends are legal inside JSON strings (LOG-FORMATS 1.1).
    records = [json.loads(line) for line in text.split("\n")[:-1]]
    if fmt == "jsonrpc":
        return [("?", r) for r in records]
    if fmt in ("acp-client", "python-sdk"):
        return [(r["direction"], r["message"]) for r in records]
    if fmt == "capture":
        return [({"in": "incoming", "out": "outgoing"}[r["dir"]], r["msg"]) for r in records]
    assert fmt == "conductor"
    out = []
    for r in records:
        direction = "outgoing" if r["from"] == "Client" else "incoming"
        if r["type"] == "response":
            m = {
                "jsonrpc": "2.0",
                "id": r["id"],
                ("error" if r["is_error"] else "result"): r["payload"],
            }
        else:
            m = {"jsonrpc": "2.0", **({"id": r["id"]} if r["type"] == "request" else {})}
            m["method"] = r["method"]
            if r["params"] is not None:
                m["params"] = r["params"]
        out.append((direction, m))
    return out


def _read_zed(entries: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for e in entries:
        m: dict[str, Any] = {"jsonrpc": "2.0"}
        if e["_type"] == "response":
            p = e["params"]
            is_error = (
                isinstance(p, dict)
                and set(p) <= {"code", "message", "data"}
                and (isinstance(p.get("code"), int) and isinstance(p.get("message"), str))
            )
            m.update(id=e["id"], **{("error" if is_error else "result"): p})
        else:
            if e["_type"] == "request":
                m["id"] = e["id"]
            m["method"] = e["method"]
            if e["params"] is not None:
                m["params"] = e["params"]
        out.append((e["_direction"], m))
    return out


def _expected(fmt: str, messages: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    if fmt == "jsonrpc":
        return [("?", m) for _, m in messages]
    return messages


@pytest.mark.parametrize("fmt", LOG_FORMATS)
def test_log_lines_round_trip(fmt: str) -> None:
    a = full_script()
    text = a.log_text(fmt)
    assert text == "".join(line + "\n" for line in log_lines(a.messages, fmt))
    assert _read(fmt, text) == _expected(fmt, a.messages)


def test_zed_names_the_paired_method() -> None:
    entries = json.loads(full_script().log_text("zed"))
    prompt_answers = [e for e in entries if e["_type"] == "response" and e["id"] == 2]
    assert prompt_answers[0]["method"] == "session/prompt"
    orphan = json.loads(FakeAgent().prompt_response(9, "u").log_text("zed"))
    assert orphan[0]["method"] == "[unrecognized response]"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stored_logs())
def test_stored_logs_read_back(log: Any) -> None:
    assert _read(log.format, log.text) == _expected(log.format, log.messages)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(max_turns=2))
def test_generated_exchanges_frame_cleanly(exchange: list[Any]) -> None:
    a = FakeAgent()
    for direction, message in exchange:
        a.send(direction, message)
    decoded = [msgspec.json.decode(line) for line in a.to_bytes(None).split(b"\n")[:-1]]
    assert decoded == [m for _, m in exchange]


def test_importing_the_kit_does_not_import_hypothesis() -> None:
    code = (
        "import sys, acp_client.testing; "
        "assert 'hypothesis' not in sys.modules; assert 'trio' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("split", [0, -1])
def test_loopback_refuses_a_split_that_is_no_positive_size(split: int) -> None:
    from acp_client import Connection
    from acp_client.testing import Loopback

    with pytest.raises(ValueError, match="split"):
        Loopback(Connection(live=False)).play(FakeAgent("s").state("running"), split=split)


def test_loopback_split_gives_the_same_state_as_whole_messages() -> None:
    from acp_client import Connection
    from acp_client.testing import Loopback

    script = FakeAgent("s").state("running").agent_chunk("m", "héllo").state("idle")
    whole, split = Loopback(Connection(live=False)), Loopback(Connection(live=False))
    whole.play(script)
    split.play(script, split=3)
    assert split.connection.snapshot() == whole.connection.snapshot()


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"garbage", -32700),
        (b"5", -32600),
        (b"[]", -32600),
        (b'[{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}},7]', -32600),
        (b'{"jsonrpc":"2.0","id":3,"method":"session/prompt"}', -32602),
    ],
)
def test_scripted_agent_answers_bad_client_bytes_like_an_agent(line: bytes, code: int) -> None:
    # A client's error paths can be tested against it: an error response, never a crash.
    agent = ScriptedAgent()
    out = [json.loads(x) for x in agent.receive_data(line + b"\n").splitlines()]
    errors = [m["error"]["code"] for m in out if "error" in m]
    assert errors == [code]
