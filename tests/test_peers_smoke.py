"""Smoke tests for the real peer agents in tests/peers/, driven with raw JSON lines.

The agents are started as subprocesses; messages go in as newline-delimited JSON
and come out through a reader thread into a queue. Every read has a timeout and
every test has a hard deadline, so a misbehaving agent fails the test instead of
hanging it. Nothing here uses acp_client: these tests pin down what the peers
send so that acp_client's transport tests can rely on it.

v2 messages are also validated against the v2 JSON schema shipped inside the
SDK package (tests/peers/node_modules/@agentclientprotocol/sdk/schema/v2).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

PEERS = Path(__file__).parent / "peers"
V2_AGENT = PEERS / "v2_agent.mjs"
V1_AGENT = PEERS / "v1_agent.py"
SDK_DIR = PEERS / "node_modules" / "@agentclientprotocol" / "sdk"
V2_SCHEMA = SDK_DIR / "schema" / "v2" / "schema.json"

# Upper bounds only (nothing waits for them to pass). Generous, because a
# loaded CI machine can take many seconds to start Node or import the Python SDK.
STARTUP_TIMEOUT = 60.0  # seconds for the first message of a process
READ_TIMEOUT = 20.0  # seconds for any later message
TEST_DEADLINE = 120.0  # seconds for a whole test

Message = dict[str, Any]

pytestmark = pytest.mark.peer


# ---------------------------------------------------------------------------
# Harness
# ---------------------------------------------------------------------------


class NotJson:
    """A stdout line that is not JSON."""

    def __init__(self, line: str) -> None:
        self.line = line

    def __repr__(self) -> str:
        return f"NotJson({self.line!r})"


class Peer:
    """A peer agent subprocess spoken to with raw JSON-RPC lines."""

    def __init__(self, argv: list[str], stderr: IO[bytes]) -> None:
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=PEERS.parent.parent,
        )
        self.deadline = time.monotonic() + TEST_DEADLINE
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._next_id = 0
        self.sent_methods: dict[int, str] = {}
        self.received: list[Message | NotJson] = []
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    # -- writing --------------------------------------------------------------

    def send(self, message: Message) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: Message) -> int:
        request_id = self._next_id
        self._next_id += 1
        self.sent_methods[request_id] = method
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    def notify(self, method: str, params: Message) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def respond(self, request_id: Any, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    # -- reading --------------------------------------------------------------

    def recv(self) -> Message | NotJson | None:
        """Next stdout message (None at end of stream); fails on timeout."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            pytest.fail("test deadline exceeded")
        timeout = READ_TIMEOUT if self.received else STARTUP_TIMEOUT
        try:
            raw = self._lines.get(timeout=min(timeout, remaining))
        except queue.Empty:
            pytest.fail(f"no message from the agent within the timeout; got {self.received!r}")
        if raw is None:
            return None
        try:
            item: Message | NotJson = json.loads(raw)
        except ValueError:
            item = NotJson(raw.decode("utf-8", "replace"))
        self.received.append(item)
        return item

    def recv_until(self, stop: Callable[[Message | NotJson], bool]) -> list[Message | NotJson]:
        """Messages up to and including the first one matching ``stop``."""
        out: list[Message | NotJson] = []
        while True:
            item = self.recv()
            if item is None:
                pytest.fail(f"agent closed stdout early; got {out!r}")
            out.append(item)
            if stop(item):
                return out

    def recv_until_all(
        self, *conditions: Callable[[Message | NotJson], bool]
    ) -> list[Message | NotJson]:
        """Messages until each condition has matched one of them, in any order."""
        pending = list(conditions)
        out: list[Message | NotJson] = []
        while pending:
            item = self.recv()
            if item is None:
                pytest.fail(f"agent closed stdout early; got {out!r}")
            out.append(item)
            pending = [c for c in pending if not c(item)]
        return out

    def call(self, method: str, params: Message) -> tuple[Any, list[Message | NotJson]]:
        """Sends a request; returns its result and the messages received before it."""
        request_id = self.request(method, params)
        got = self.recv_until(lambda m: is_response(m, request_id))
        response = got.pop()
        assert isinstance(response, dict)
        assert "result" in response, response
        return response["result"], got

    def close(self) -> int:
        """Closes stdin, waits for the agent to exit (killing it if needed)."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait(timeout=5)
        self._reader.join(timeout=5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return code


def is_response(item: Message | NotJson, request_id: Any) -> bool:
    return (
        isinstance(item, dict)
        and "method" not in item
        and item.get("id") == request_id
        and ("result" in item or "error" in item)
    )


def is_update(item: Message | NotJson, kind: str | None = None, **fields: Any) -> bool:
    if not isinstance(item, dict) or item.get("method") != "session/update":
        return False
    update = item["params"]["update"]
    if kind is not None and update.get("sessionUpdate") != kind:
        return False
    return all(update.get(k) == v for k, v in fields.items())


def is_idle(item: Message | NotJson) -> bool:
    return is_update(item, "state_update", state="idle")


def updates(items: list[Message | NotJson]) -> list[Message]:
    return [i["params"]["update"] for i in items if isinstance(i, dict) and is_update(i)]


def kinds(items: list[Message | NotJson]) -> list[str]:
    return [u["sessionUpdate"] for u in updates(items)]


def text_prompt(session_id: str, text: str) -> Message:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


# ---------------------------------------------------------------------------
# v2 agent
# ---------------------------------------------------------------------------


def _require_node() -> str:
    node = shutil.which("node")
    problem = None
    if node is None:
        problem = "node is not on PATH"
    elif not SDK_DIR.is_dir():
        problem = f"{SDK_DIR} is missing (run npm ci in tests/peers)"
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(f"v2 peer agent unavailable in CI: {problem}")
        pytest.skip(f"v2 peer agent unavailable: {problem}")
    assert node is not None
    return node


class SchemaChecker:
    """Validates v2 wire messages against the SDK's bundled JSON schema."""

    def __init__(self) -> None:
        import jsonschema  # type: ignore[import-untyped]

        schema = json.loads(V2_SCHEMA.read_text(encoding="utf-8"))
        self._validators: dict[str, Any] = {}
        self._schema = schema
        self._cls = jsonschema.Draft202012Validator

    def check(self, definition: str, value: Any) -> None:
        validator = self._validators.get(definition)
        if validator is None:
            ref_schema = {"$ref": f"#/$defs/{definition}", "$defs": self._schema["$defs"]}
            validator = self._validators[definition] = self._cls(ref_schema)
        validator.validate(value)


@pytest.fixture(scope="module")
def schema() -> SchemaChecker:
    _require_node()
    return SchemaChecker()


@pytest.fixture
def v2(tmp_path: Path, schema: SchemaChecker) -> Iterator[Peer]:
    node = _require_node()
    with open(tmp_path / "v2_agent.stderr", "wb") as stderr:
        peer = Peer([node, str(V2_AGENT)], stderr)
        try:
            yield peer
        finally:
            peer.close()
    for item in peer.received:
        _check_v2_message(schema, item, peer.sent_methods)


RESPONSE_DEFS = {
    "initialize": "InitializeResponse",
    "session/new": "NewSessionResponse",
    "session/resume": "ResumeSessionResponse",
    "session/close": "CloseSessionResponse",
    "session/prompt": "PromptResponse",
    "session/set_config_option": "SetSessionConfigOptionResponse",
}


def _check_v2_message(
    schema: SchemaChecker, item: Message | NotJson, sent_methods: dict[int, str]
) -> None:
    if isinstance(item, NotJson):
        return
    method = item.get("method")
    if method is None and "result" in item:
        definition = RESPONSE_DEFS[sent_methods[item["id"]]]
        schema.check(definition, item["result"])
    if method == "session/update":
        update = item["params"]["update"]
        if not update["sessionUpdate"].startswith("_"):
            schema.check("UpdateSessionNotification", item["params"])
    elif method == "session/request_permission":
        schema.check("RequestPermissionRequest", item["params"])
    elif method == "$/cancel_request":
        schema.check("CancelRequestNotification", item["params"])


def v2_setup(peer: Peer) -> str:
    result, _ = peer.call(
        "initialize",
        {"protocolVersion": 2, "info": {"name": "smoke", "version": "0"}, "capabilities": {}},
    )
    assert result["protocolVersion"] == 2
    assert result["info"]["name"] == "acp-client-test-v2-agent"
    result, early = peer.call("session/new", {"cwd": "/tmp/project", "mcpServers": []})
    assert early == []
    assert [c["name"] for c in result["availableCommands"]] == ["test", "plan"]
    assert [o["configId"] for o in result["configOptions"]] == ["model", "verbose"]
    session_id: str = result["sessionId"]
    return session_id


FULL_TURN = [
    "state_update",
    "agent_message",
    "agent_message_chunk",
    "agent_message",
    "agent_message_chunk",
    "agent_thought_chunk",
    "agent_thought_chunk",
    "plan_update",
    "tool_call_update",
    "tool_call_update",
    "tool_call_content_chunk",
    "tool_call_content_chunk",
    "tool_call_content_chunk",
    "terminal_update",
    "terminal_output_chunk",
    "terminal_output_chunk",
    "terminal_output_chunk",
    "terminal_update",
    "tool_call_update",
    "plan_update",
    "usage_update",
    "_acme_progress",
    "state_update",
]


def test_v2_full_turn_response_before_user_message(v2: Peer) -> None:
    sid = v2_setup(v2)
    assert sid == "sess-1"
    prompt_id = v2.request("session/prompt", text_prompt(sid, "hello there"))
    got = v2.recv_until(is_idle)

    assert is_response(got[0], prompt_id)
    assert got[0]["result"] == {"messageId": "msg-user-1"}  # type: ignore[index]
    assert is_update(got[1], "user_message", messageId="msg-user-1")
    assert updates(got)[0]["content"] == [{"type": "text", "text": "hello there"}]
    assert kinds(got)[1:] == FULL_TURN
    _check_full_turn(updates(got)[1:], n=1)


def test_v2_echo_first_sends_user_message_before_response(v2: Peer) -> None:
    sid = v2_setup(v2)
    result, before = v2.call("session/prompt", text_prompt(sid, "please echo-first"))
    assert result == {"messageId": "msg-user-1"}
    assert kinds(before) == ["user_message"]
    assert updates(before)[0]["messageId"] == "msg-user-1"
    rest = v2.recv_until(is_idle)
    assert kinds(rest) == FULL_TURN
    _check_full_turn(updates(rest), n=1)


def _check_full_turn(turn: list[Message], n: int) -> None:
    by_kind: dict[str, list[Message]] = {}
    for u in turn:
        by_kind.setdefault(u["sessionUpdate"], []).append(u)
    assert turn[0] == {"sessionUpdate": "state_update", "state": "running"}
    assert turn[-1] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    # replace, append, replace, append on one agent message id
    agent = [u for u in turn if u["sessionUpdate"].startswith("agent_message")]
    assert {u["messageId"] for u in agent} == {f"msg-agent-{n}"}
    assert agent[0]["content"] == [{"type": "text", "text": "Hello"}]
    assert agent[1]["content"] == {"type": "text", "text": ", world"}
    assert agent[2]["content"] == [{"type": "text", "text": "I will run the tests."}]
    assert {u["messageId"] for u in by_kind["agent_thought_chunk"]} == {f"msg-thought-{n}"}
    # tool call: created with title/kind/status, chunks, then content replaced
    tools = by_kind["tool_call_update"]
    assert {u["toolCallId"] for u in tools} == {f"call-{n}"}
    assert tools[0]["title"] == "Run the test suite"
    assert tools[0]["kind"] == "execute"
    assert [t["status"] for t in tools] == ["pending", "in_progress", "completed"]
    assert tools[-1]["content"][0]["content"]["text"] == "All tests passed."
    assert tools[-1]["content"][1] == {"type": "terminal", "terminalId": f"term-{n}"}
    # terminal: command/cwd/size, split UTF-8 in base64 chunks, exit status
    term_updates = by_kind["terminal_update"]
    assert term_updates[0]["terminalId"] == f"term-{n}"
    assert term_updates[0]["command"] == "pytest -q"
    assert term_updates[0]["cwd"] == "/tmp/project"
    assert term_updates[0]["size"] == {"cols": 80, "rows": 24}
    assert term_updates[1]["exitStatus"] == {"exitCode": 0}
    chunks = [base64.b64decode(u["data"]) for u in by_kind["terminal_output_chunk"]]
    with pytest.raises(UnicodeDecodeError):
        chunks[0].decode("utf-8")  # ends inside the emoji
    text = b"".join(chunks).decode("utf-8")
    assert "héllo 🌍" in text
    assert "\x1b[32m" in text
    assert "\r" in text.replace("\r\n", "")
    # plan replaced, usage with cost, custom update kept as-is
    plans = by_kind["plan_update"]
    assert {p["plan"]["planId"] for p in plans} == {f"plan-{n}"}
    assert [e["status"] for e in plans[-1]["plan"]["entries"]] == ["completed"] * 3
    assert by_kind["usage_update"][0]["cost"] == {"amount": 0.01 * n, "currency": "USD"}
    assert by_kind["_acme_progress"][0]["percent"] == 100


def test_v2_second_prompt_uses_next_ids(v2: Peer) -> None:
    sid = v2_setup(v2)
    v2.call("session/prompt", text_prompt(sid, "one echo-first"))
    v2.recv_until(is_idle)
    result, _ = v2.call("session/prompt", text_prompt(sid, "two echo-first"))
    assert result == {"messageId": "msg-user-2"}
    rest = v2.recv_until(is_idle)
    _check_full_turn(updates(rest), n=2)


@pytest.mark.parametrize(
    ("option_id", "statuses"),
    [
        ("allow-once", ["pending", "in_progress", "completed"]),
        ("reject-once", ["pending", "failed"]),
    ],
)
def test_v2_permission(v2: Peer, option_id: str, statuses: list[str]) -> None:
    sid = v2_setup(v2)
    v2.request("session/prompt", text_prompt(sid, "needs permission"))
    got = v2.recv_until(
        lambda m: isinstance(m, dict) and m.get("method") == "session/request_permission"
    )
    request = got[-1]
    assert isinstance(request, dict)
    assert kinds(got)[-1] == "state_update"
    assert updates(got)[-1]["state"] == "requires_action"
    params = request["params"]
    assert params["subject"]["type"] == "tool_call"
    assert params["subject"]["toolCall"]["toolCallId"] == "call-1"
    assert [o["optionId"] for o in params["options"]] == ["allow-once", "reject-once"]
    v2.respond(request["id"], {"outcome": {"outcome": "selected", "optionId": option_id}})
    rest = v2.recv_until(is_idle)
    assert updates(rest)[0] == {"sessionUpdate": "state_update", "state": "running"}
    tools = [u for u in updates(got + rest) if u["sessionUpdate"] == "tool_call_update"]
    assert [t["status"] for t in tools] == statuses
    assert updates(rest)[-1]["stopReason"] == "end_turn"


def test_v2_permission_cancelled_outcome_stops(v2: Peer) -> None:
    sid = v2_setup(v2)
    v2.request("session/prompt", text_prompt(sid, "needs permission"))
    got = v2.recv_until(
        lambda m: isinstance(m, dict) and m.get("method") == "session/request_permission"
    )
    request = got[-1]
    assert isinstance(request, dict)
    v2.respond(request["id"], {"outcome": {"outcome": "cancelled"}})
    rest = v2.recv_until(is_idle)
    assert updates(rest) == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "cancelled"},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"},
    ]


def test_v2_cancel_mid_turn(v2: Peer) -> None:
    sid = v2_setup(v2)
    v2.request("session/prompt", text_prompt(sid, "slow please"))
    got = v2.recv_until(lambda m: is_update(m, "tool_call_content_chunk"))
    v2.notify("session/cancel", {"sessionId": sid})
    rest = v2.recv_until(is_idle)
    tail = updates(rest)
    assert tail[-2:] == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "cancelled"},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"},
    ]
    # only the update already in flight may precede the cancellation
    assert set(kinds(rest)[:-2]) <= {"tool_call_content_chunk"}
    assert "terminal_update" not in kinds(got + rest)
    # the agent is still usable afterwards
    result, _ = v2.call("session/prompt", text_prompt(sid, "again echo-first"))
    assert result == {"messageId": "msg-user-2"}
    assert updates(v2.recv_until(is_idle))[-1]["stopReason"] == "end_turn"


def test_v2_cancel_withdraws_pending_permission(v2: Peer) -> None:
    sid = v2_setup(v2)
    v2.request("session/prompt", text_prompt(sid, "needs permission"))
    got = v2.recv_until(
        lambda m: isinstance(m, dict) and m.get("method") == "session/request_permission"
    )
    request = got[-1]
    assert isinstance(request, dict)
    v2.notify("session/cancel", {"sessionId": sid})
    rest = v2.recv_until(is_idle)
    assert rest[0] == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": request["id"]},
    }
    assert updates(rest) == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "cancelled"},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"},
    ]
    # the client still answers the withdrawn request; the agent ignores the answer
    v2.respond(request["id"], {"outcome": {"outcome": "cancelled"}})
    result, _ = v2.call("session/prompt", text_prompt(sid, "again echo-first"))
    assert result == {"messageId": "msg-user-2"}
    v2.recv_until(is_idle)


def test_v2_cancel_withdraws_held_prompt(v2: Peer) -> None:
    sid = v2_setup(v2)
    first = v2.request("session/prompt", text_prompt(sid, "slow"))
    before = v2.recv_until(lambda m: is_update(m, "agent_message_chunk"))
    assert is_response(before[0], first)
    held = v2.request("session/prompt", text_prompt(sid, "held"))
    v2.notify("session/cancel", {"sessionId": sid})
    # the idle update and the held prompt's error may come in either order
    got = v2.recv_until_all(is_idle, lambda m: is_response(m, held))
    responses = [m for m in got if is_response(m, held)]
    assert len(responses) == 1
    assert responses[0]["error"]["code"] == -32800  # type: ignore[index]
    assert [u for u in updates(got) if u["sessionUpdate"] == "state_update"] == [
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}
    ]


def test_v2_resume_replays_history(v2: Peer) -> None:
    sid = v2_setup(v2)
    v2.call("session/prompt", text_prompt(sid, "first echo-first"))
    live = v2.recv_until(is_idle)
    result, replay = v2.call(
        "session/resume", {"sessionId": sid, "cwd": "/tmp/project", "replayFrom": {"type": "start"}}
    )
    assert [o["configId"] for o in result["configOptions"]] == ["model", "verbose"]
    assert kinds(replay) == [
        "user_message",
        "agent_message",
        "agent_message_chunk",
        "agent_message_chunk",
        "agent_thought",
        "tool_call_update",
        "terminal_update",
        "plan_update",
        "usage_update",
        "replay_complete",  # the v2 Preview's end of the replayed history (P18)
        "state_update",
    ]
    upd = updates(replay)
    assert upd[0] == {
        "sessionUpdate": "user_message",
        "messageId": "msg-user-1",
        "content": [{"type": "text", "text": "first echo-first"}],
    }
    assert upd[1] == {"sessionUpdate": "agent_message", "messageId": "msg-agent-1", "content": []}
    assert [u["content"]["text"] for u in upd[2:4]] == ["I will run the tests.", " Starting now."]
    assert upd[4]["messageId"] == "msg-thought-1"
    assert upd[4]["content"] == [
        {"type": "text", "text": "The user wants"},
        {"type": "text", "text": " the tests run."},
    ]
    assert upd[5]["toolCallId"] == "call-1"
    assert upd[5]["status"] == "completed"
    live_term = b"".join(
        base64.b64decode(u["data"])
        for u in updates(live)
        if u["sessionUpdate"] == "terminal_output_chunk"
    )
    assert base64.b64decode(upd[6]["output"]["data"]) == live_term
    assert upd[6]["exitStatus"] == {"exitCode": 0}
    assert upd[-1] == {"sessionUpdate": "state_update", "state": "idle"}
    # without replay: only the snapshot
    _, snapshot = v2.call("session/resume", {"sessionId": sid, "cwd": "/tmp/project"})
    assert updates(snapshot) == [{"sessionUpdate": "state_update", "state": "idle"}]


def test_v2_config_and_close(v2: Peer) -> None:
    sid = v2_setup(v2)
    result, _ = v2.call(
        "session/set_config_option",
        {"sessionId": sid, "configId": "model", "type": "id", "value": "smart"},
    )
    assert result["configOptions"][0]["currentValue"] == "smart"
    bad = v2.request(
        "session/set_config_option",
        {"sessionId": sid, "configId": "model", "type": "id", "value": "nope"},
    )
    err = v2.recv_until(lambda m: is_response(m, bad))[-1]
    assert err["error"]["code"] == -32602  # type: ignore[index]
    # closing mid-turn: idle + cancelled comes before the close response
    v2.request("session/prompt", text_prompt(sid, "slow"))
    v2.recv_until(lambda m: is_update(m, "agent_message_chunk"))
    result, before = v2.call("session/close", {"sessionId": sid})
    assert result == {}
    assert updates(before)[-1] == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "cancelled",
    }
    gone = v2.request("session/prompt", text_prompt(sid, "hello"))
    err = v2.recv_until(lambda m: is_response(m, gone))[-1]
    assert err["error"]["code"] == -32002  # type: ignore[index]


def test_v2_crash_exits_mid_turn(v2: Peer) -> None:
    sid = v2_setup(v2)
    v2.call("session/prompt", text_prompt(sid, "crash echo-first"))
    got: list[Message | NotJson] = []
    while (item := v2.recv()) is not None:
        got.append(item)
    assert kinds(got) == ["state_update", "agent_message", "agent_message_chunk"]
    assert v2.proc.wait(timeout=READ_TIMEOUT) == 42


def test_v2_garbage_line_mid_turn(v2: Peer) -> None:
    sid = v2_setup(v2)
    v2.call("session/prompt", text_prompt(sid, "garbage echo-first"))
    got = v2.recv_until(is_idle)
    garbage = [i for i, m in enumerate(got) if isinstance(m, NotJson)]
    assert len(garbage) == 1
    assert got[garbage[0] - 1] == {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": sid,
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "msg-agent-1",
                "content": {"type": "text", "text": ", world"},
            },
        },
    }
    assert kinds(got) == FULL_TURN
    assert updates(got)[-1]["stopReason"] == "end_turn"


# ---------------------------------------------------------------------------
# v1 agent
# ---------------------------------------------------------------------------


@pytest.fixture
def v1(tmp_path: Path) -> Iterator[Peer]:
    with open(tmp_path / "v1_agent.stderr", "wb") as stderr:
        peer = Peer([sys.executable, str(V1_AGENT)], stderr)
        try:
            yield peer
        finally:
            peer.close()


def v1_setup(peer: Peer) -> str:
    result, _ = peer.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    assert result["protocolVersion"] == 1
    result, _ = peer.call("session/new", {"cwd": "/tmp/project", "mcpServers": []})
    assert result["modes"]["currentModeId"] == "ask"
    assert [m["id"] for m in result["modes"]["availableModes"]] == ["ask", "code"]
    session_id: str = result["sessionId"]
    return session_id


V1_TURN = [
    "agent_thought_chunk",
    "agent_thought_chunk",
    "agent_message_chunk",
    "agent_message_chunk",
    "plan",
    "tool_call",
    "tool_call_update",
    "tool_call_update",
    "plan",
    "agent_message_chunk",
]


def test_v1_turn(v1: Peer) -> None:
    sid = v1_setup(v1)
    assert sid == "sess-1"
    result, got = v1.call("session/prompt", text_prompt(sid, "hello"))
    assert result == {"stopReason": "end_turn"}
    assert kinds(got) == V1_TURN
    upd = updates(got)
    assert all("messageId" not in u for u in upd)
    assert upd[5]["toolCallId"] == "call-1"
    assert upd[5]["status"] == "pending"
    assert upd[7]["status"] == "completed"
    assert upd[7]["content"][0]["content"]["text"] == "All tests passed."
    assert [e["status"] for e in upd[8]["entries"]] == ["completed", "completed"]


@pytest.mark.parametrize(
    ("option_id", "statuses"),
    [("allow-once", ["in_progress", "completed"]), ("reject-once", ["failed"])],
)
def test_v1_permission(v1: Peer, option_id: str, statuses: list[str]) -> None:
    sid = v1_setup(v1)
    prompt_id = v1.request("session/prompt", text_prompt(sid, "needs permission"))
    got = v1.recv_until(
        lambda m: isinstance(m, dict) and m.get("method") == "session/request_permission"
    )
    request = got[-1]
    assert isinstance(request, dict)
    assert kinds(got)[-1] == "tool_call"
    assert request["params"]["toolCall"]["toolCallId"] == "call-1"
    assert [o["optionId"] for o in request["params"]["options"]] == ["allow-once", "reject-once"]
    v1.respond(request["id"], {"outcome": {"outcome": "selected", "optionId": option_id}})
    rest = v1.recv_until(lambda m: is_response(m, prompt_id))
    assert rest[-1]["result"] == {"stopReason": "end_turn"}  # type: ignore[index]
    assert [
        u["status"] for u in updates(rest) if u["sessionUpdate"] == "tool_call_update"
    ] == statuses


def test_v1_cancel_pending_permission(v1: Peer) -> None:
    sid = v1_setup(v1)
    prompt_id = v1.request("session/prompt", text_prompt(sid, "needs permission"))
    got = v1.recv_until(
        lambda m: isinstance(m, dict) and m.get("method") == "session/request_permission"
    )
    request = got[-1]
    assert isinstance(request, dict)
    v1.notify("session/cancel", {"sessionId": sid})
    v1.respond(request["id"], {"outcome": {"outcome": "cancelled"}})
    rest = v1.recv_until(lambda m: is_response(m, prompt_id))
    assert rest[-1]["result"] == {"stopReason": "cancelled"}  # type: ignore[index]
    assert updates(rest) == []


def test_v1_cancel_mid_turn(v1: Peer) -> None:
    sid = v1_setup(v1)
    prompt_id = v1.request("session/prompt", text_prompt(sid, "slow"))
    v1.recv_until(lambda m: is_update(m, "agent_message_chunk"))
    v1.notify("session/cancel", {"sessionId": sid})
    rest = v1.recv_until(lambda m: is_response(m, prompt_id))
    assert rest[-1]["result"] == {"stopReason": "cancelled"}  # type: ignore[index]
    assert set(kinds(rest)) <= {"agent_message_chunk"}
    # a later prompt runs normally
    result, got = v1.call("session/prompt", text_prompt(sid, "again"))
    assert result == {"stopReason": "end_turn"}
    assert updates(got)[5]["toolCallId"] == "call-2"
