"""The transport with a restored connection (R92), and the typed ``initialize`` result.

On in-memory streams against ``acp_client.testing.ScriptedAgent``, on trio and asyncio (the
``backend`` fixture of test_transport). An editor that restarts passes its last snapshot
to the transport (``restore=``), which initializes the agent started again, resumes the
session and prompts on; ``initialize`` returns an ``InitializeResponse`` for a v1 agent
as for a v2 one.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_transport import backend, drive, setup

from acp_client import schema as s
from acp_client.testing import FakeAgent, ScriptedAgent
from acp_client.transport import AgentConnection

__all__ = ["backend"]  # the fixture: every test here runs on both event loops


def _v1_initialize(message: dict[str, Any], out: FakeAgent) -> None:
    out.result(
        message["id"],
        {
            "protocolVersion": 1,
            "agentInfo": {"name": "old", "version": "0.9"},
            "agentCapabilities": {"promptCapabilities": {"image": True}},
            "authMethods": [{"id": "key", "name": "API key"}],
        },
    )


def _v1_prompt(message: dict[str, Any], out: FakeAgent) -> None:
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi"}}
    out.update(chunk).result(message["id"], {"stopReason": "end_turn"})


def _odd_initialize(message: dict[str, Any], out: FakeAgent) -> None:
    # not an InitializeResponse (capabilities is no object): what can be read is kept
    out.result(message["id"], {"protocolVersion": 2, "capabilities": 5, "info": {"name": "x"}})


@pytest.mark.parametrize(
    ("handlers", "version", "name"),
    [({}, 2, "fake-agent"), ({"initialize": _v1_initialize}, 1, "old")],
    ids=["v2", "v1"],
)
def test_initialize_returns_a_typed_result_for_v1_and_v2(
    handlers: dict[str, Any], version: int, name: str
) -> None:
    async def body(client: AgentConnection) -> Any:
        return await client.initialize()

    result, client = drive(ScriptedAgent(handlers), body)
    assert isinstance(result, s.InitializeResponse)
    assert result.protocol_version == version
    assert isinstance(result.info, s.Implementation) and result.info.name == name
    assert isinstance(result.capabilities, s.AgentCapabilities)
    assert client.connection.agent_info == result.info
    assert client.connection.agent_capabilities == result.capabilities
    if version == 1:  # V1-TO-V2 3.1: v1 capabilities and auth methods in v2 shape
        prompt = result.capabilities.session.prompt  # type: ignore[union-attr]
        assert prompt.image is not s.UNSET  # type: ignore[union-attr]
        assert [m.method_id for m in result.auth_methods] == ["key"]  # type: ignore[union-attr]


def test_initialize_returns_a_typed_result_for_an_answer_off_the_schema() -> None:
    async def body(client: AgentConnection) -> Any:
        return await client.initialize()

    result, client = drive(ScriptedAgent({"initialize": _odd_initialize}), body)
    assert isinstance(result, s.InitializeResponse)
    assert result.protocol_version == 2
    assert result.capabilities == s.AgentCapabilities()
    assert "invalid-result" in [d.code for d in client.connection.diagnostics]


def _resume(message: dict[str, Any], out: FakeAgent) -> None:
    out.state("idle").result(message["id"], {})


@pytest.mark.parametrize("version", [2, 1])
def test_a_restored_connection_resumes_and_completes_a_turn(version: int) -> None:
    """R92: the editor restarts: the agent starts again, is resumed, and the turn goes on."""
    v1 = {"initialize": _v1_initialize, "session/prompt": _v1_prompt}
    handlers: dict[str, Any] = v1 if version == 1 else {}

    async def first(client: AgentConnection) -> Any:
        sid = await setup(client)
        assert await (await client.prompt(sid, "one")).wait_done() == "end_turn"
        return client.connection.snapshot()

    snap, _ = drive(ScriptedAgent(handlers), first)
    (before,) = snap["sessions"]
    sid = before["sessionId"]
    resumed = {**handlers, "session/resume": _resume}
    agent = ScriptedAgent(resumed)

    async def second(client: AgentConnection) -> Any:
        await client.initialize()
        await client.resume_session(sid, "/work", replay=False)
        handle = await client.prompt(sid, "two")
        assert await handle.wait_done() == "end_turn"
        return client.connection.snapshot()

    after_snap, _ = drive(agent, second, restore=json.loads(json.dumps(snap)))
    (after,) = after_snap["sessions"]
    assert after["timeline"][: len(before["timeline"])] == before["timeline"]
    assert after["completedTurns"] == ["end_turn", "end_turn"]
    assert len(after["prompts"]) == 2
    assert [p["status"] for p in after["prompts"]] == ["accepted", "accepted"]
    ids = [p["requestId"] for p in after["prompts"]]
    assert ids[1] > ids[0]  # no request id of the old connection is used again
    messages = [e["messageId"] for e in after["timeline"] if e["entry"] == "message"]
    assert len(messages) == len(set(messages)) == len(before["timeline"]) + 2
    sent = [m.get("method") for m in agent.received if "method" in m]
    assert sent[:2] == ["initialize", "session/resume"]  # without replay: v1's resume too
