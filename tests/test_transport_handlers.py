"""Host handlers: the transport answers the agent's requests with the host's functions.

On trio and asyncio (the ``backend`` fixture of ``test_transport``), over in-memory streams
against ``acp_client.testing.ScriptedAgent``: what the client serves is never -32601
(R87), a handler that fails is a -32603 and a diagnostic, never a crash (R88).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_transport import backend, drive, setup  # noqa: F401  (backend: every test on both)

from acp_client import schema as s
from acp_client.testing import FakeAgent, ScriptedAgent
from acp_client.transport import AgentConnection

ELICITATION = {
    "sessionId": "sess_1",
    "mode": "form",
    "message": "Who are you?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
}


def asking(*requests: tuple[int, str, Any]) -> ScriptedAgent:
    """An agent that asks ``requests`` (id, method, params) during its turn."""

    def prompt(message: dict[str, Any], out: FakeAgent) -> None:
        out.prompt_response(message["id"], "u").user_message("u", "go").state("running")
        for rid, method, params in requests:
            out.send("incoming", {"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        out.state("idle", stop_reason="end_turn")

    def done(message: dict[str, Any], out: FakeAgent) -> None:
        out.result(message["id"], {})

    return ScriptedAgent({"session/prompt": prompt, "_test/done": done})


async def turn(client: AgentConnection) -> Any:
    sid = await setup(client)
    reason = await (await client.prompt(sid, "go")).wait_done()
    await client.request("_test/done", {})  # the handlers' answers went out before it
    return reason


def answers(agent: ScriptedAgent) -> dict[Any, dict[str, Any]]:
    return {m["id"]: m for m in agent.received if "method" not in m}


def test_handlers_answer_an_extension_method_and_an_elicitation_they_advertise() -> None:
    seen: list[Any] = []

    async def buffer(params: Any) -> Any:
        seen.append(params)
        return {"text": "# buffer"}

    async def elicit(params: Any) -> Any:
        seen.append(params["message"])
        return {"action": "accept", "content": {"name": "Ada"}}

    agent = asking((5, "_editor/buffer", {"path": "a.py"}), (6, "elicitation/create", ELICITATION))
    handlers = {"_editor/buffer": buffer, "elicitation/create": elicit}
    reason, client = drive(agent, turn, handlers=handlers)
    assert reason == "end_turn"  # the handlers run concurrently, in either order
    assert sorted(map(str, seen)) == ["Who are you?", "{'path': 'a.py'}"]
    got = answers(agent)
    assert got[5]["result"] == {"text": "# buffer"}
    assert got[6]["result"] == {"action": "accept", "content": {"name": "Ada"}}
    init = agent.received[0]
    assert init["params"]["capabilities"]["elicitation"] == {"form": {}, "url": {}}
    assert client.connection.diagnostics == []


def test_R66_an_advertised_elicitation_without_a_handler_is_declined_never_32601() -> None:
    agent = asking((6, "elicitation/create", ELICITATION), (7, "_acme/other", {}))

    async def body(client: AgentConnection) -> Any:
        await client.initialize(capabilities=s.ClientCapabilities(elicitation={"form": {}}))
        sid = await client.new_session("/work")
        await (await client.prompt(sid, "go")).wait_done()
        return await client.request("_test/done", {})

    drive(agent, body)
    got = answers(agent)
    assert got[6]["result"] == {"action": "decline"}
    assert got[7]["error"]["code"] == -32601  # not advertised, no handler: unknown


@pytest.mark.parametrize("result", ["raise", "unencodable"])
def test_R67_a_failing_handler_is_a_32603_and_a_diagnostic_not_a_crash(result: str) -> None:
    async def broken(params: Any) -> Any:
        if result == "raise":
            raise RuntimeError("secret path /home/me")
        return object()

    async def fine(params: Any) -> Any:
        return {"ok": True}

    agent = asking((5, "_editor/buffer", {}), (6, "_editor/fine", {}))
    reason, client = drive(agent, turn, handlers={"_editor/buffer": broken, "_editor/fine": fine})
    assert reason == "end_turn"  # the connection went on
    got = answers(agent)
    assert got[5]["error"]["code"] == -32603
    assert "secret" not in json.dumps(got[5]) and "_editor/buffer" in got[5]["error"]["message"]
    assert got[6]["result"] == {"ok": True}
    (diag,) = client.connection.diagnostics
    assert diag.code == "host-handler-failed" and "R88" in diag.message
    assert ("secret path" in diag.message) is (result == "raise")


def test_a_permission_handler_is_not_a_request_handler() -> None:
    async def nothing(params: Any) -> Any:
        return None

    with pytest.raises(ValueError, match="on_permission"):
        AgentConnection(None, None, handlers={"session/request_permission": nothing})


@settings(max_examples=15, deadline=None)
@given(
    requests=st.lists(
        st.tuples(
            st.sampled_from(["_x/ok", "_x/raise", "_x/unknown", "elicitation/create"]),
            st.booleans(),
        ),
        max_size=5,
    ),
    advertise=st.booleans(),
)
def test_R66_R67_property_every_agent_request_gets_exactly_the_answer_its_rule_says(
    requests: list[tuple[str, bool]], advertise: bool
) -> None:
    """Any mix of served, failing, unknown and elicitation requests: one answer each, the
    rule's (handler result, -32603, -32601, decline), in any order of arrival."""

    async def ok(params: Any) -> Any:
        return {"echo": params}

    async def fail(params: Any) -> Any:
        raise ValueError("no")

    async def elicit(params: Any) -> Any:
        return {"action": "cancel"}

    handlers: dict[str, Any] = {"_x/ok": ok, "_x/raise": fail}
    with_elicitation = [method == "elicitation/create" and own for method, own in requests]
    if any(with_elicitation):
        handlers["elicitation/create"] = elicit
    agent = asking(
        *[
            (100 + i, method, ELICITATION if method == "elicitation/create" else {"i": i})
            for i, (method, _own) in enumerate(requests)
        ]
    )

    async def body(client: AgentConnection) -> Any:
        caps = s.ClientCapabilities(elicitation={"form": {}}) if advertise else None
        await client.initialize(capabilities=caps)
        sid = await client.new_session("/work")
        await (await client.prompt(sid, "go")).wait_done()
        return await client.request("_test/done", {})

    _, client = drive(agent, body, handlers=handlers)
    got = answers(agent)
    served = advertise or "elicitation/create" in handlers
    for i, (method, _own) in enumerate(requests):
        answer = got[100 + i]
        if method == "_x/ok":
            assert answer["result"] == {"echo": {"i": i}}
        elif method == "_x/raise":
            assert answer["error"]["code"] == -32603
        elif method == "_x/unknown" or not served:
            assert answer["error"]["code"] == -32601
        elif "elicitation/create" in handlers:
            assert answer["result"] == {"action": "cancel"}
        else:
            assert answer["result"] == {"action": "decline"}
    assert len([m for m in agent.received if m.get("id", -1) >= 100]) == len(requests)
    failed = [d for d in client.connection.diagnostics if d.code == "host-handler-failed"]
    assert len(failed) == sum(method == "_x/raise" for method, _ in requests)


def test_a_v1_agents_file_system_request_goes_to_the_hosts_handler() -> None:
    """V1-TO-V2: ``fs/*`` and ``terminal/*`` of a v1 agent are the host's to answer."""

    def init(m: dict[str, Any], out: FakeAgent) -> None:
        out.result(m["id"], {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []})

    def new(m: dict[str, Any], out: FakeAgent) -> None:
        out.result(m["id"], {"sessionId": "s"})

    def prompt(m: dict[str, Any], out: FakeAgent) -> None:
        params = {"sessionId": "s", "path": "/w/a.py"}
        out.send(
            "incoming", {"jsonrpc": "2.0", "id": 5, "method": "fs/read_text_file", "params": params}
        )
        out.send("incoming", {"jsonrpc": "2.0", "id": 6, "method": "terminal/create", "params": {}})
        out.result(m["id"], {"stopReason": "end_turn"})

    def done(message: dict[str, Any], out: FakeAgent) -> None:
        out.result(message["id"], {})

    agent = ScriptedAgent(
        {"initialize": init, "session/new": new, "session/prompt": prompt, "_test/done": done}
    )

    async def read(params: Any) -> Any:
        return {"content": f"text of {params['path']}"}

    reason, client = drive(agent, turn, handlers={"fs/read_text_file": read})
    assert client.protocol_version == 1 and reason == "end_turn"
    got = answers(agent)
    assert got[5]["result"] == {"content": "text of /w/a.py"}
    assert got[6]["error"]["code"] == -32601  # no handler for it
