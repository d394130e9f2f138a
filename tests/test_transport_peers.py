"""acp_client.transport against real agents: the TypeScript v2 agent and the Python v1 agent.

Each test starts the agent as a subprocess, drives it through the public async API, then checks
the reconciled snapshot and that the recording replays to the same snapshot.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from backends import BACKENDS
from backends import run as run_on

from acp_client import LocalProtocolError, replay_log
from acp_client.transport import (
    AgentConnection,
    AgentExited,
    RequestFailed,
    allow_once,
    open_agent,
    reject,
)

pytestmark = pytest.mark.peer

PEERS = Path(__file__).resolve().parent / "peers"
NODE = shutil.which("node")
HAVE_NODE = NODE is not None and (PEERS / "node_modules" / "@agentclientprotocol" / "sdk").is_dir()
V2 = [NODE or "node", str(PEERS / "v2_agent.mjs")]
V1 = [sys.executable, str(PEERS / "v1_agent.py")]


def need_node() -> None:
    if not HAVE_NODE:
        if os.environ.get("CI"):
            pytest.fail("node and tests/peers/node_modules are required in CI")
        pytest.skip("node or tests/peers/node_modules missing (npm ci --prefix tests/peers)")


BACKEND = ["trio"]


@pytest.fixture(params=BACKENDS, autouse=True)
def backend(request: pytest.FixtureRequest) -> str:
    """Every test against the real agents runs on trio and on asyncio."""
    BACKEND[0] = request.param
    return str(request.param)


def run(coro: Any, *args: Any) -> Any:
    async def main() -> Any:
        with anyio.fail_after(60):
            return await coro(*args)

    return run_on(main, BACKEND[0])


def session_of(snapshot: dict[str, Any]) -> dict[str, Any]:
    (session,) = snapshot["sessions"]
    return session


def assert_replays_same(record: Path, live: dict[str, Any]) -> None:
    replayed = replay_log(str(record)).snapshot()
    assert replayed == live


async def turn(agent: AgentConnection, session_id: str, text: str) -> str | None:
    handle = await agent.prompt(session_id, text)
    assert handle.message_id is not None
    return await handle.wait_done()


def test_v2_full_turn_snapshot_and_recording(tmp_path: Path) -> None:
    need_node()
    record = tmp_path / "rec.jsonl"

    async def main() -> dict[str, Any]:
        async with open_agent(V2, record=str(record), cwd=str(tmp_path)) as agent:
            init = await agent.initialize()
            assert init.protocol_version == 2
            sid = await agent.new_session(str(tmp_path))
            assert await turn(agent, sid, "hello") == "end_turn"
            return agent.connection.snapshot()

    snap = run(main)
    session = session_of(snap)
    assert session["announced"] is True
    assert session["protocolVersion"] == 2
    assert session["state"] == {"state": "idle", "stopReason": "end_turn"}
    assert session["completedTurns"] == ["end_turn"]
    kinds = [(e["entry"], e.get("role")) for e in session["timeline"]]
    assert kinds == [
        ("message", "user"),
        ("message", "agent"),
        ("message", "thought"),
        ("toolCall", None),
    ]
    user, agent_msg = session["timeline"][0], session["timeline"][1]
    assert user["messageId"] == "msg-user-1"
    assert user["content"] == [{"type": "text", "text": "hello"}]
    # agent_message [Hello], chunk, agent_message replacing, chunk: arrival order per id
    assert [b["text"] for b in agent_msg["content"]] == ["I will run the tests.", " Starting now."]
    tool = session["timeline"][3]
    assert tool["status"] == "completed"
    assert tool["content"][0]["content"]["text"] == "All tests passed."
    (terminal,) = session["terminals"]
    output = base64.b64decode(terminal["output"]).decode("utf-8")
    assert "🌍" in output and "\x1b[32m" in output and "\r" in output
    assert terminal["exitStatus"] == {"exitCode": 0}
    assert session["plans"][0]["plan"]["entries"][0]["status"] == "completed"
    assert session["usage"]["cost"] == {"amount": 0.01, "currency": "USD"}
    assert [u["sessionUpdate"] for u in session["unknownUpdates"]] == ["_acme_progress"]
    assert session["prompts"] == [
        {"requestId": 2, "status": "accepted", "messageId": "msg-user-1", "echoed": True}
    ]
    assert snap["diagnostics"] == []
    assert_replays_same(record, snap)


@pytest.mark.parametrize("text", ["echo-first please", "response first"])
def test_v2_both_echo_orders_give_one_linked_message(tmp_path: Path, text: str) -> None:
    need_node()

    async def main() -> dict[str, Any]:
        async with open_agent(V2) as agent:
            await agent.initialize()
            sid = await agent.new_session(str(tmp_path))
            assert await turn(agent, sid, text) == "end_turn"
            return agent.connection.snapshot()

    session = session_of(run(main))
    users = [e for e in session["timeline"] if e.get("role") == "user"]
    assert len(users) == 1
    assert session["prompts"][0]["echoed"] is True
    assert session["prompts"][0]["messageId"] == users[0]["messageId"]


@pytest.mark.parametrize(
    ("policy", "status", "outcome"),
    [(allow_once, "completed", "allow-once"), (reject, "failed", "reject-once")],
)
def test_v2_permission_policies(tmp_path: Path, policy: Any, status: str, outcome: str) -> None:
    need_node()
    record = tmp_path / "rec.jsonl"

    async def main() -> dict[str, Any]:
        async with open_agent(V2, on_permission=policy, record=str(record)) as agent:
            await agent.initialize()
            sid = await agent.new_session(str(tmp_path))
            assert await turn(agent, sid, "permission please") == "end_turn"
            return agent.connection.snapshot()

    snap = run(main)
    session = session_of(snap)
    (perm,) = session["permissionRequests"]
    assert perm["status"] == "answered"
    assert perm["outcome"] == {"outcome": "selected", "optionId": outcome}
    assert perm["toolCallId"] == "call-1"
    tool = next(e for e in session["timeline"] if e["entry"] == "toolCall")
    assert tool["status"] == status
    assert_replays_same(record, snap)


def test_v2_cancel_mid_turn(tmp_path: Path) -> None:
    need_node()
    record = tmp_path / "rec.jsonl"

    async def main() -> dict[str, Any]:
        async with open_agent(V2, record=str(record)) as agent:
            await agent.initialize()
            sid = await agent.new_session(str(tmp_path))
            events = agent.events()  # subscribed before the prompt: nothing is missed
            handle = await agent.prompt(sid, "slow please")
            async for event in events:  # wait until the tool call is running
                if type(event).__name__ == "ToolCallChunkAppended":
                    break
            await agent.cancel(sid)
            assert await handle.wait_done() == "cancelled"
            return agent.connection.snapshot()

    snap = run(main)
    session = session_of(snap)
    assert session["completedTurns"] == ["cancelled"]
    tool = next(e for e in session["timeline"] if e["entry"] == "toolCall")
    assert tool["status"] == "cancelled"
    assert_replays_same(record, snap)


def test_v2_cancel_answers_pending_permission(tmp_path: Path) -> None:
    need_node()

    async def never(perm: Any) -> str | None:
        await anyio.sleep_forever()
        return None

    async def main() -> dict[str, Any]:
        async with open_agent(V2, on_permission=never) as agent:
            await agent.initialize()
            sid = await agent.new_session(str(tmp_path))
            events = agent.events()  # subscribed before the prompt: nothing is missed
            handle = await agent.prompt(sid, "permission please")
            async for event in events:
                if type(event).__name__ == "PermissionRequested":
                    break
            await agent.cancel(sid)
            assert await handle.wait_done() == "cancelled"
            return agent.connection.snapshot()

    session = session_of(run(main))
    (perm,) = session["permissionRequests"]
    assert perm["outcome"] == {"outcome": "cancelled"}
    assert perm["status"] in ("cancelled", "withdrawn")


def test_v2_crash_keeps_everything_received(tmp_path: Path) -> None:
    need_node()
    record = tmp_path / "rec.jsonl"

    async def main() -> dict[str, Any]:
        async with open_agent(V2, record=str(record)) as agent:
            await agent.initialize()
            sid = await agent.new_session(str(tmp_path))
            handle = await agent.prompt(sid, "crash now")
            with pytest.raises(AgentExited):
                await handle.wait_done()
            with pytest.raises(AgentExited):
                await agent.new_session(str(tmp_path))
            return agent.connection.snapshot()

    snap = run(main)
    session = session_of(snap)
    assert session["state"] == {"state": "running"}
    agent_msgs = [e for e in session["timeline"] if e.get("role") == "agent"]
    assert agent_msgs and agent_msgs[0]["content"]
    assert_replays_same(record, snap)


def test_v2_garbage_line_is_a_diagnostic(tmp_path: Path) -> None:
    need_node()
    record = tmp_path / "rec.jsonl"

    async def main() -> dict[str, Any]:
        async with open_agent(V2, record=str(record)) as agent:
            await agent.initialize()
            sid = await agent.new_session(str(tmp_path))
            assert await turn(agent, sid, "garbage please") == "end_turn"
            return agent.connection.snapshot()

    snap = run(main)
    assert [d["code"] for d in snap["diagnostics"]] == ["malformed-line"]
    assert session_of(snap)["completedTurns"] == ["end_turn"]
    replayed = replay_log(str(record)).snapshot()
    assert [d["code"] for d in replayed["diagnostics"]] == ["agent-non-json-output"]
    assert replayed["sessions"] == snap["sessions"]


def test_v2_resume_with_replay_keeps_the_timeline(tmp_path: Path) -> None:
    need_node()

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with open_agent(V2) as agent:
            await agent.initialize()
            sid = await agent.new_session(str(tmp_path))
            assert await turn(agent, sid, "hello") == "end_turn"
            before = agent.connection.snapshot()
            await agent.resume_session(sid, str(tmp_path), replay=True)
            return before, agent.connection.snapshot()

    before, after = run(main)
    b, a = session_of(before), session_of(after)
    assert [(e["entry"], e.get("messageId") or e.get("toolCallId")) for e in a["timeline"]] == [
        (e["entry"], e.get("messageId") or e.get("toolCallId")) for e in b["timeline"]
    ]
    assert a["completedTurns"] == b["completedTurns"]  # replay never counts turns
    agent_b = next(e for e in b["timeline"] if e.get("role") == "agent")
    agent_a = next(e for e in a["timeline"] if e.get("role") == "agent")
    assert agent_a["content"] == agent_b["content"]  # chunked replay does not double


@pytest.mark.parametrize("replay", [False, True])
def test_v2_restored_connection_continues_after_a_restart(tmp_path: Path, replay: bool) -> None:
    """R92: the editor restarts with its last snapshot; the agent, started again (its
    sessions outlive it: ACP_TEST_AGENT_STORE), is resumed and the session goes on."""
    need_node()
    env = {"ACP_TEST_AGENT_STORE": str(tmp_path / "agent-sessions.json")}
    record = tmp_path / "second.jsonl"

    async def first() -> dict[str, Any]:
        async with open_agent(V2, env=env, on_permission=allow_once) as agent:
            await agent.initialize()
            sid = await agent.new_session(str(tmp_path))
            assert await turn(agent, sid, "hello permission") == "end_turn"
            return agent.connection.snapshot()

    async def second(snapshot: dict[str, Any]) -> dict[str, Any]:
        async with open_agent(V2, env=env, restore=snapshot, record=str(record)) as agent:
            init = await agent.initialize()
            assert init.protocol_version == 2
            (sid,) = agent.connection.sessions
            await agent.resume_session(sid, str(tmp_path), replay=replay)
            assert await turn(agent, sid, "and again") == "end_turn"
            return agent.connection.snapshot()

    snapshot = run(first)
    before = session_of(snapshot)
    after = session_of(run(second, json.loads(json.dumps(snapshot))))
    key = [(e["entry"], e.get("messageId") or e.get("toolCallId")) for e in after["timeline"]]
    old = [(e["entry"], e.get("messageId") or e.get("toolCallId")) for e in before["timeline"]]
    assert key[: len(old)] == old  # replayed or not, the restored timeline stays
    assert ("message", "msg-user-2") in key and ("message", "msg-agent-2") in key
    assert after["unretained"] == []
    assert after["completedTurns"] == ["end_turn", "end_turn"]
    assert [p["status"] for p in after["prompts"]] == ["accepted", "accepted"]
    assert all(p["echoed"] for p in after["prompts"])
    assert after["prompts"][1]["requestId"] > after["prompts"][0]["requestId"]
    assert after["permissionRequests"][0] == before["permissionRequests"][0]
    assert len(after["permissionRequests"]) == 1
    # the recording holds the new connection only: it replays to the new traffic's state
    replayed = session_of(replay_log(str(record)).snapshot())
    assert replayed["completedTurns"] == ["end_turn"]


def test_v2_rejected_prompt_raises(tmp_path: Path) -> None:
    need_node()

    async def main() -> None:
        async with open_agent(V2) as agent:
            await agent.initialize()
            with pytest.raises(LocalProtocolError, match="C1"):
                await agent.prompt("no-such-session", "hello")  # not set up: refused here
            params = {"sessionId": "no-such-session", "prompt": [{"type": "text", "text": "hi"}]}
            with pytest.raises(RequestFailed):
                await agent.request("session/prompt", params)  # the raw request goes out
            (state,) = agent.connection.session("no-such-session").prompts
            assert state.status == "rejected"
            assert state.error is not None

    run(main)


def test_v1_agent_lands_in_the_v2_model(tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"

    async def main() -> dict[str, Any]:
        async with open_agent(V1, record=str(record), on_permission=allow_once) as agent:
            init = await agent.initialize()
            assert init.protocol_version == 1
            sid = await agent.new_session(str(tmp_path))
            assert await turn(agent, sid, "hello permission") == "end_turn"
            return agent.connection.snapshot()

    snap = run(main)
    session = session_of(snap)
    assert session["protocolVersion"] == 1
    roles = [(e["entry"], e.get("role")) for e in session["timeline"]]
    assert roles[0] == ("message", "user")
    assert ("toolCall", None) in roles
    assert session["timeline"][0]["messageId"].startswith("acp-v1:user:")
    assert session["prompts"][0]["status"] == "accepted"
    assert session["prompts"][0]["echoed"] is True
    assert session["completedTurns"] == ["end_turn"]
    assert session["plans"][0]["planId"] == "main"
    assert session["permissionRequests"][0]["status"] == "answered"
    assert_replays_same(record, snap)


def test_v2_preview_child_replay_marker_and_keyed_retry(tmp_path: Path) -> None:
    """The v2 peer announces a child and streams its updates and a session message (P1,
    P8, P12), ends its resume replays with ``replay_complete`` on the child and the parent
    (P16, P18), and answers a retried prompt by its key (P27, P30); the recording replays
    to the same state."""
    need_node()
    record = tmp_path / "rec.jsonl"

    async def main() -> dict[str, Any]:
        async with open_agent(V2, record=str(record), cwd=str(tmp_path)) as agent:
            await agent.initialize()
            sid = await agent.new_session(str(tmp_path))
            first = await agent.prompt(sid, "subagent hello", idempotency_key="k1")
            assert await first.wait_done() == "end_turn"
            retry = await agent.prompt(sid, "subagent hello", idempotency_key="k1")
            assert retry.message_id == first.message_id
            await agent.resume_session(sid, str(tmp_path), replay=True)
            return agent.connection.snapshot()

    snap = run(main)
    parent, child = snap["sessions"]
    assert child["sessionId"] == "sess-1-child-1" and child["parentSessionId"] == "sess-1"
    assert parent["children"] == ["sess-1-child-1"]
    assert child["subagent"]["title"] == "Explorer"
    assert [e["entry"] for e in child["timeline"]] == ["sessionMessage", "message"]
    assert child["completedTurns"] == ["end_turn"] and child["unretained"] == []
    for session in (parent, child):
        assert session["replay"]["complete"] is True and session["replay"]["truncated"] is False
    (prompt,) = parent["prompts"]
    assert prompt["idempotencyKey"] == "k1" and prompt["status"] == "accepted"
    assert [a["status"] for a in prompt["attempts"]] == ["accepted", "accepted"]
    users = [e for e in parent["timeline"] if e.get("role") == "user"]
    assert len(users) == 1 and parent["completedTurns"] == ["end_turn"]
    assert snap["diagnostics"] == []
    assert_replays_same(record, snap)
