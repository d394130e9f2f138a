"""acp_client.transport on in-memory streams, against acp_client.testing.ScriptedAgent.

Every test runs on both of the transport's event loops, trio and asyncio (``backend``). No
processes and no sleeps: the fake agent answers synchronously through a pump task, and
time-based behaviour runs on trio's MockClock (asyncio has none: there the waits are real,
and only for what never comes). The terminal question's tests are the CLI's, on trio.
"""

from __future__ import annotations

import io
import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
import trio
from backends import BACKENDS, PipeReceive, PipeSend, pipe
from backends import run as run_on

from acp_client import LocalProtocolError, replay_log
from acp_client._recorder import Recorder
from acp_client.cli._ask import ask_on_terminal
from acp_client.testing import FakeAgent, ScriptedAgent
from acp_client.transport import (
    AgentConnection,
    AgentError,
    AgentExited,
    RequestFailed,
    RequestTimeout,
    allow_once,
    open_agent,
    reject,
)

Body = Callable[[AgentConnection], Awaitable[Any]]


BACKEND = ["trio"]


@pytest.fixture(params=BACKENDS, autouse=True)
def backend(request: pytest.FixtureRequest) -> str:
    """The event loop of this run (the terminal question's tests are trio's: the CLI's)."""
    if request.param != "trio" and request.node.get_closest_marker("trio_only"):
        pytest.skip("the CLI's terminal question runs on trio")
    BACKEND[0] = request.param
    return str(request.param)


def run(main: Callable[[], Awaitable[Any]], *, mock_clock: bool = False) -> Any:
    """Run ``main`` on the backend of this run."""
    return run_on(main, BACKEND[0], mock_clock=mock_clock)


async def _pump(
    agent: ScriptedAgent,
    inbox: PipeReceive,
    outbox: PipeSend,
    close_after: int | None,
    stop_reading_after: int | None = None,
) -> None:
    seen = 0
    async with outbox:
        while True:
            data = await inbox.read()
            if not data:
                return
            reply = agent.receive_data(data)
            if reply:
                await outbox.send(reply)
            seen += 1
            if close_after is not None and seen >= close_after:
                return
            if stop_reading_after is not None and seen >= stop_reading_after:
                await inbox.aclose()  # the client's next write fails; stdout stays open
                await anyio.sleep_forever()


def drive(
    agent: ScriptedAgent,
    body: Body,
    *,
    close_after: int | None = None,
    stop_reading_after: int | None = None,
    mock_clock: bool = False,
    **options: Any,
) -> tuple[Any, AgentConnection]:
    """Run ``body`` against ``agent`` over in-memory streams; return its result and the client."""
    holder: list[AgentConnection] = []

    async def main() -> Any:
        to_agent_send, to_agent_receive = pipe()
        to_client_send, to_client_receive = pipe()
        client = AgentConnection(to_agent_send, to_client_receive, **options)
        holder.append(client)
        try:
            async with anyio.create_task_group() as nursery:
                nursery.start_soon(
                    _pump, agent, to_agent_receive, to_client_send, close_after, stop_reading_after
                )
                await nursery.start(client.run)
                try:
                    return await body(client)
                finally:
                    await client.aclose()  # what the client still owes is written first
                    await anyio.wait_all_tasks_blocked()  # and the agent has read it
                    nursery.cancel_scope.cancel()
        finally:
            for end in (to_agent_receive, to_client_send, to_client_receive):
                await end.aclose()

    result = run(main, mock_clock=mock_clock)
    return result, holder[0]


async def setup(client: AgentConnection) -> str:
    await client.initialize()
    return await client.new_session("/work")


def test_prompt_returns_on_insertion_and_wait_done_on_idle() -> None:
    async def body(client: AgentConnection) -> tuple[Any, Any]:
        sid = await setup(client)
        handle = await client.prompt(sid, "hello")
        assert handle.message_id == "u2"
        return await handle.wait_done(), client.connection.snapshot()

    (reason, snap), _ = drive(ScriptedAgent(), body)
    assert reason == "end_turn"
    (session,) = snap["sessions"]
    assert session["prompts"] == [
        {"requestId": 2, "status": "accepted", "messageId": "u2", "echoed": True}
    ]
    assert [e.get("role") for e in session["timeline"]] == ["user", "agent"]


def test_echo_before_response_gives_one_message() -> None:
    def prompt(message: dict[str, Any], out: FakeAgent) -> None:
        rid = message["id"]
        out.user_message("early", "hello").prompt_response(rid, "early")
        out.state("running").state("idle", stop_reason="end_turn")

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        handle = await client.prompt(sid, "hello")
        assert handle.state.echoed
        await handle.wait_done()
        return client.connection.snapshot()

    snap, _ = drive(ScriptedAgent({"session/prompt": prompt}), body)
    assert len(snap["sessions"][0]["timeline"]) == 1


def _permission_prompt(message: dict[str, Any], out: FakeAgent) -> None:
    rid = message["id"]
    out.prompt_response(rid, "u").user_message("u", "go").state("running")
    out.tool_call("c1", title="Edit", status="pending").state("requires_action")
    out.permission_request(
        77,
        "Allow?",
        tool_call_id="c1",
        options=[
            {"optionId": "yes", "name": "Yes", "kind": "allow_once"},
            {"optionId": "no", "name": "No", "kind": "reject_once"},
        ],
    )


def _permission_answered(message: dict[str, Any], out: FakeAgent) -> None:
    outcome = message["result"]["outcome"]
    status = "completed" if outcome.get("optionId") == "yes" else "failed"
    out.state("running").tool_call("c1", status=status).state("idle", stop_reason="end_turn")


@pytest.mark.parametrize(("policy", "status"), [(allow_once, "completed"), (reject, "failed")])
def test_permission_requests_go_to_the_policy(policy: Any, status: str) -> None:
    agent = ScriptedAgent({"session/prompt": _permission_prompt}, on_response=_permission_answered)

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        handle = await client.prompt(sid, "go")
        assert await handle.wait_done() == "end_turn"
        return client.connection.snapshot()

    snap, _ = drive(agent, body, on_permission=policy)
    session = snap["sessions"][0]
    assert session["permissionRequests"][0]["status"] == "answered"
    assert session["timeline"][1]["status"] == status


def test_cancel_answers_pending_permission_and_idle_confirms() -> None:
    def prompt(message: dict[str, Any], out: FakeAgent) -> None:
        _permission_prompt(message, out)

    async def undecided(perm: Any) -> str | None:
        await anyio.sleep_forever()
        return None

    agent = ScriptedAgent({"session/prompt": prompt})

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        handle = await client.prompt(sid, "go")
        await anyio.wait_all_tasks_blocked()
        await client.cancel(sid)
        assert await handle.wait_done() == "cancelled"
        return client.connection.snapshot()

    snap, _ = drive(agent, body, on_permission=undecided)
    session = snap["sessions"][0]
    (perm,) = session["permissionRequests"]
    assert perm["status"] == "cancelled"
    assert perm["outcome"] == {"outcome": "cancelled"}
    assert session["timeline"][1]["status"] == "cancelled"  # local overlay, no later status
    answers = [m for m in agent.received if m.get("id") == 77]
    assert answers == [
        {"jsonrpc": "2.0", "id": 77, "result": {"outcome": {"outcome": "cancelled"}}}
    ]


def test_withdrawn_permission_is_answered_cancelled_once() -> None:
    def prompt(message: dict[str, Any], out: FakeAgent) -> None:
        _permission_prompt(message, out)
        out.cancel_request(77).state("idle", stop_reason="end_turn")

    async def undecided(perm: Any) -> str | None:
        await anyio.sleep_forever()
        return None

    agent = ScriptedAgent({"session/prompt": prompt})

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        await (await client.prompt(sid, "go")).wait_done()
        return client.connection.snapshot()

    snap, _ = drive(agent, body, on_permission=undecided)
    assert snap["sessions"][0]["permissionRequests"][0]["status"] == "withdrawn"
    assert len([m for m in agent.received if m.get("id") == 77]) == 1


def test_agent_exit_mid_turn_keeps_state_and_recording() -> None:
    def prompt(message: dict[str, Any], out: FakeAgent) -> None:
        rid = message["id"]
        out.prompt_response(rid, "u").user_message("u", "go").state("running")
        out.agent_chunk("a", "partial ")

    agent = ScriptedAgent({"session/prompt": prompt})
    record = io.BytesIO()

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        handle = await client.prompt(sid, "go")
        with pytest.raises(AgentExited):
            await handle.wait_done()
        with pytest.raises(AgentExited):
            await client.prompt(sid, "again")
        return client.connection.snapshot()

    snap, client = drive(agent, body, close_after=3, recorder=Recorder(record))
    session = snap["sessions"][0]
    assert session["state"] == {"state": "running"}
    assert session["timeline"][1]["content"] == [{"type": "text", "text": "partial "}]
    assert client.closed
    assert replay_log(record.getvalue()).snapshot()["sessions"] == snap["sessions"]


@pytest.mark.parametrize("version", [2, 1])
def test_a_prompt_whose_write_failed_is_in_the_state_as_in_the_recording(version: int) -> None:
    """The bytes are recorded before the write fails: the live state applied them too."""
    agent = ScriptedAgent() if version == 2 else _V1Agent(lambda b: b)
    record = io.BytesIO()

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        with pytest.raises(AgentExited):
            await client.prompt(sid, "go")
        return client.connection.snapshot()

    snap, client = drive(agent, body, stop_reading_after=2, recorder=Recorder(record))
    assert client.protocol_version == version
    assert snap["sessions"][0]["prompts"][0]["status"] == "pending"
    assert replay_log(record.getvalue()).snapshot()["sessions"] == snap["sessions"]


def test_faults_become_diagnostics() -> None:
    def prompt(message: dict[str, Any], out: FakeAgent) -> None:
        rid = message["id"]
        out.prompt_response(rid, "u").user_message("u", "go")
        out.send("incoming", {"jsonrpc": "2.0", "id": 999, "result": {}})  # unknown id
        out.state("running").state("idle", stop_reason="end_turn")

    class Noisy(ScriptedAgent):
        def receive_data(self, data: bytes) -> bytes:
            reply = super().receive_data(data)
            if b'"session/prompt"' in data:
                reply = b"not json at all\n" + b'{"x": "' + b"y" * 300 + b'"}\n' + reply
            return reply

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        assert await (await client.prompt(sid, "go")).wait_done() == "end_turn"
        return client.connection.snapshot()

    snap, _ = drive(Noisy({"session/prompt": prompt}), body, max_line=200)
    codes = [d["code"] for d in snap["diagnostics"]]
    assert codes == ["malformed-line", "line-too-long", "orphan-response"]


def test_a_line_over_the_limit_leaves_a_trace_in_the_recording() -> None:
    # 1.8: nothing the agent sent is discarded silently; the recording keeps its first bytes
    # (LOG-FORMATS 3.1 raw record, with the extra key lineTooLong) instead of 64 MiB.
    def prompt(message: dict[str, Any], out: FakeAgent) -> None:
        out.prompt_response(message["id"], "u").user_message("u", "go")
        out.state("running").state("idle", stop_reason="end_turn")

    class Long(ScriptedAgent):
        def receive_data(self, data: bytes) -> bytes:
            reply = super().receive_data(data)
            if b'"session/prompt"' in data:
                reply = b'{"x": "' + b"y" * 3000 + b'"}\n' + reply
            return reply

    record = io.BytesIO()

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        assert await (await client.prompt(sid, "go")).wait_done() == "end_turn"
        return client.connection.snapshot()

    snap, _ = drive(
        Long({"session/prompt": prompt}), body, max_line=2000, recorder=Recorder(record)
    )
    assert [d["code"] for d in snap["diagnostics"]] == ["line-too-long"]
    (trace,) = [r for r in map(json.loads, record.getvalue().splitlines()) if "raw" in r]
    assert trace["lineTooLong"] == 3009
    assert trace["raw"] == '{"x": "' + "y" * (1024 - 7) + "…"
    replayed = replay_log(record.getvalue())
    assert [d.code for d in replayed.diagnostics] == ["agent-non-json-output"]
    assert replayed.snapshot()["sessions"] == snap["sessions"]


def test_unknown_agent_request_gets_method_not_found() -> None:
    def prompt(message: dict[str, Any], out: FakeAgent) -> None:
        rid = message["id"]
        out.prompt_response(rid, "u").user_message("u", "go")
        out.send("incoming", {"jsonrpc": "2.0", "id": 5, "method": "_acme/ask", "params": {}})
        out.state("running").state("idle", stop_reason="end_turn")

    agent = ScriptedAgent({"session/prompt": prompt})

    async def body(client: AgentConnection) -> None:
        sid = await setup(client)
        await (await client.prompt(sid, "go")).wait_done()

    drive(agent, body)
    (answer,) = [m for m in agent.received if m.get("id") == 5]
    assert answer["error"]["code"] == -32601


def test_request_timeout_leaves_the_connection_usable() -> None:
    agent = ScriptedAgent({"session/new": lambda message, out: None})

    async def body(client: AgentConnection) -> Any:
        await client.initialize()
        with pytest.raises(RequestTimeout):
            await client.new_session("/work")
        # the connection is still usable: the next request gets its (error) answer
        with pytest.raises(RequestFailed) as info:
            await client.request("_acme/ping")
        return info.value.error.code

    code, _ = drive(agent, body, request_timeout=5, mock_clock=True)
    assert code == -32601


def test_cancelled_caller_keeps_the_connection_consistent() -> None:
    held: list[dict[str, Any]] = []

    def hold(message: dict[str, Any], out: FakeAgent) -> None:
        held.append(message)

    agent = ScriptedAgent({"session/prompt": hold})

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        with anyio.move_on_after(1):
            await client.prompt(sid, "go")
        # the agent answers late: the connection still reconciles it
        late = FakeAgent(sid).prompt_response(held[0]["id"], "u").user_message("u", "go")
        client._incoming(late.to_bytes())  # as read from the agent's stdout
        return client.connection.snapshot()

    snap, _ = drive(agent, body, mock_clock=True)
    assert snap["sessions"][0]["prompts"][0]["status"] == "accepted"
    assert snap["sessions"][0]["prompts"][0]["echoed"] is True


def test_a_request_nobody_waits_for_any_more_is_withdrawn_with_cancel_request() -> None:
    """Cancelling the wait (or a timeout) sends ``$/cancel_request``; the answer still counts."""

    def hold(message: dict[str, Any], out: FakeAgent) -> None:
        pass  # a prompt held behind other work

    def withdrawn(message: dict[str, Any], out: FakeAgent) -> None:
        out.error(message["params"]["requestId"], -32800, "request cancelled")

    agent = ScriptedAgent({"session/prompt": hold, "$/cancel_request": withdrawn})

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        with anyio.move_on_after(1):
            await client.prompt(sid, "go")
        with pytest.raises(RequestTimeout):
            await client.prompt(sid, "again")
        await anyio.wait_all_tasks_blocked()
        return client.connection.snapshot()

    snap, _ = drive(agent, body, mock_clock=True, request_timeout=5)
    cancels = [m["params"] for m in agent.received if m.get("method") == "$/cancel_request"]
    assert cancels == [{"requestId": 2}, {"requestId": 3}]
    prompts = snap["sessions"][0]["prompts"]
    assert [(p["requestId"], p["status"]) for p in prompts] == [(2, "rejected"), (3, "rejected")]


def test_rejected_prompt_raises_request_failed() -> None:
    def prompt(message: dict[str, Any], out: FakeAgent) -> None:
        out.prompt_error(message["id"], -32602, "unsupported content")

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        with pytest.raises(RequestFailed) as info:
            await client.prompt(sid, "go")
        assert info.value.error.code == -32602
        return client.connection.snapshot()

    snap, _ = drive(ScriptedAgent({"session/prompt": prompt}), body)
    assert snap["sessions"][0]["prompts"][0]["status"] == "rejected"
    assert snap["sessions"][0]["timeline"] == []


def test_set_config_option_checks_the_listed_values_before_sending_c21() -> None:
    options = [
        {
            "configId": "model",
            "name": "Model",
            "type": "select",
            "currentValue": "fast",
            "options": [{"value": "fast", "name": "Fast"}, {"value": "slow", "name": "Slow"}],
        }
    ]

    def new_session(message: dict[str, Any], out: FakeAgent) -> None:
        out.result(message["id"], {"sessionId": "sess_1", "configOptions": options})

    def set_option(message: dict[str, Any], out: FakeAgent) -> None:
        current = [{**options[0], "currentValue": message["params"]["value"]}]
        out.result(message["id"], {"configOptions": current})

    agent = ScriptedAgent({"session/new": new_session, "session/set_config_option": set_option})

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        with pytest.raises(LocalProtocolError, match="C21"):
            await client.set_config_option(sid, "model", "huge")  # not a listed value
        with pytest.raises(LocalProtocolError, match="C21"):
            await client.set_config_option(sid, "effort", "high")  # not a listed option
        await client.set_config_option(sid, "model", "slow")
        return client.connection.snapshot()

    snap, _ = drive(agent, body)
    sent = [m for m in agent.received if m.get("method") == "session/set_config_option"]
    assert [m["params"]["value"] for m in sent] == ["slow"]  # nothing else was sent
    assert snap["sessions"][0]["configOptions"][0]["currentValue"] == "slow"


@pytest.mark.parametrize(
    "body",
    [
        {"id": 2.0, "result": {"messageId": "u"}},  # an id with a fraction part
        {"id": 2, "result": {"messageId": "u"}, "error": {"code": 1, "message": "x"}},
    ],
)
def test_a_prompt_answered_with_no_valid_response_fails_the_call_and_replays_alike(
    body: dict[str, Any],
) -> None:
    # LOG-FORMATS 1.7: not a classifiable response; the connection leaves the prompt
    # pending, as a replay of the recording does, and the waiting call fails (no hang).
    def prompt(message: dict[str, Any], out: FakeAgent) -> None:
        assert message["id"] == 2
        out.send("incoming", {"jsonrpc": "2.0", **body})

    record = io.BytesIO()

    async def body_(client: AgentConnection) -> Any:
        sid = await setup(client)
        with pytest.raises(RequestFailed, match="malformed response") as info:
            await client.prompt(sid, "go")
        assert info.value.error.code == -32603
        return client.connection.snapshot()

    snap, _ = drive(ScriptedAgent({"session/prompt": prompt}), body_, recorder=Recorder(record))
    pending = {"requestId": 2, "status": "pending", "echoed": False}
    assert snap["sessions"][0]["prompts"] == [pending]
    assert [d["code"] for d in snap["diagnostics"]] == ["invalid-message"]
    replayed = replay_log(record.getvalue()).snapshot()
    assert replayed["sessions"] == snap["sessions"]
    assert [d["code"] for d in replayed["diagnostics"]] == ["invalid-jsonrpc"]


def test_v1_agent_is_adapted() -> None:
    def initialize(message: dict[str, Any], out: FakeAgent) -> None:
        out.result(message["id"], {"protocolVersion": 1, "agentCapabilities": {}})

    def prompt(message: dict[str, Any], out: FakeAgent) -> None:
        chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi"}}
        out.update(chunk).result(message["id"], {"stopReason": "end_turn"})

    agent = ScriptedAgent({"initialize": initialize, "session/prompt": prompt})

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        assert client.protocol_version == 1
        handle = await client.prompt(sid, "hello")
        assert handle.message_id == "acp-v1:user:1"
        assert await handle.wait_done() == "end_turn"
        return client.connection.snapshot()

    snap, _ = drive(agent, body)
    session = snap["sessions"][0]
    assert session["protocolVersion"] == 1
    assert [(e["role"], e["messageId"]) for e in session["timeline"]] == [
        ("user", "acp-v1:user:1"),
        ("agent", "acp-v1:agent:2"),
    ]
    assert session["completedTurns"] == ["end_turn"]


def test_events_stream_every_event() -> None:
    async def body(client: AgentConnection) -> list[str]:
        sid = await setup(client)
        events = client.events()
        await (await client.prompt(sid, "go")).wait_done()
        names = []
        async for event in events:
            names.append(type(event).__name__)
            if names[-1] == "StateChanged" and getattr(event, "turn_completed", False):
                break
        return names

    names, _ = drive(ScriptedAgent(), body)
    assert names.index("PromptSent") < names.index("PromptAccepted")
    assert names.index("PromptAccepted") < names.index("MessageChunkAppended")


@pytest.mark.trio_only
@pytest.mark.skipif(not hasattr(__import__("os"), "openpty"), reason="needs a pseudo-terminal")
@pytest.mark.parametrize(("typed", "expected"), [(b"2\n", "reject"), (b"0\n", None)])
def test_ask_on_terminal_asks_on_a_real_terminal(typed: bytes, expected: str | None) -> None:
    import os

    from acp_client import PermissionState
    from acp_client import schema as s

    main, follower = os.openpty()
    request = s.RequestPermissionRequest(
        session_id="s",
        title="Run \x1b[31mrm\x1b[0m?",
        subject=s.CommandPermissionSubject(command="rm", cwd="/"),
        options=[
            s.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
            s.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
        ],
    )
    os.write(main, typed)  # the user's answer, waiting in the terminal's input
    try:
        handler = ask_on_terminal(os.ttyname(follower))
        answer = trio.run(handler, PermissionState(1, "s", request, None))
        shown = _drain(main)
    finally:
        os.close(main)
        os.close(follower)
    assert answer == expected
    assert b"2. Reject [reject_once]" in shown and b"\x1b[31m" not in shown


def _drain(fd: int) -> bytes:
    """All a pseudo-terminal has to show now (its echo and output may come in pieces)."""
    import os
    import select

    shown = b""
    while select.select([fd], [], [], 0.2)[0]:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        shown += chunk
    return shown


@pytest.mark.trio_only
def test_the_recorder_writes_compact_messages_and_stderr_without_its_terminator() -> None:
    # LOG-FORMATS.md 3.1: compact lines; `text` is a stderr line without its terminator.
    out = io.BytesIO()
    recorder = Recorder(out, clock=lambda: 1.5)
    recorder.message("incoming", b'{ "jsonrpc": "2.0", "id": 1, "result": { "a": [1, 2] } }\r')
    recorder.message("incoming", b"not json")
    recorder.stderr("warning: disk full\r")
    assert out.getvalue().decode().splitlines() == [
        '{"direction":"incoming","message":{"jsonrpc":"2.0","id":1,"result":{"a":[1,2]}},'
        '"time":1.5}',
        '{"direction":"incoming","raw":"not json","time":1.5}',
        '{"direction":"stderr","text":"warning: disk full","time":1.5}',
    ]


def test_an_agent_that_exits_while_its_child_holds_its_stdout_is_reported_not_awaited() -> None:
    import sys

    # The agent reads the initialize request, starts a child that inherits its stdout and
    # exits without answering: stdout never ends, but the agent is gone.
    script = (
        "import subprocess, sys; sys.stdin.readline(); "
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(8)']); sys.exit(3)"
    )

    async def main() -> str:
        async with open_agent([sys.executable, "-c", script], request_timeout=30) as agent:
            with anyio.fail_after(6):
                try:
                    await agent.initialize()
                except AgentExited as exc:
                    return str(exc)
        return "answered"

    assert run(main) == "the agent exited with status 3 before answering initialize"


def test_a_permission_policy_still_deciding_is_cancelled_when_the_request_is_withdrawn() -> None:
    def prompt(message: dict[str, Any], out: FakeAgent) -> None:
        _permission_prompt(message, out)

    def withdraw(message: dict[str, Any], out: FakeAgent) -> None:
        out.result(message["id"], {}).cancel_request(77).state("idle", stop_reason="end_turn")

    deciding: list[int] = []

    async def undecided(perm: Any) -> str | None:
        deciding.append(perm.request_id)
        try:
            await anyio.sleep_forever()
        finally:
            deciding.remove(perm.request_id)
        return None

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        handle = await client.prompt(sid, "go")
        while not deciding:
            await anyio.sleep(0)
        asked = list(deciding)
        await client.request("_test/withdraw", {})  # the agent withdraws request 77 now
        await handle.wait_done()
        for _ in range(3):
            await anyio.sleep(0)  # let the cancelled policy task run its cleanup
        return client.connection.snapshot(), asked, list(deciding)  # before the teardown

    agent = ScriptedAgent({"session/prompt": prompt, "_test/withdraw": withdraw})
    (snap, asked, after), _ = drive(agent, body, on_permission=undecided)
    assert (asked, after) == ([77], [])
    assert snap["sessions"][0]["permissionRequests"][0]["status"] == "withdrawn"


def test_a_permission_id_reused_while_pending_does_not_crash_the_decision() -> None:
    def prompt(message: dict[str, Any], out: FakeAgent) -> None:
        out.prompt_response(message["id"], "u").state("running")
        for option_id in ("a1", "a2"):
            option = {"optionId": option_id, "name": option_id, "kind": "allow_once"}
            out.permission_request(5, "Allow?", options=[option])
        out.state("idle", stop_reason="end_turn")

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        await (await client.prompt(sid, "go")).wait_done()
        for _ in range(5):
            await anyio.sleep(0)
        return client.connection.snapshot()

    snap, _ = drive(ScriptedAgent({"session/prompt": prompt}), body, on_permission=allow_once)
    assert len(snap["sessions"][0]["permissionRequests"]) == 2


@pytest.mark.parametrize("version", [3, 0])
def test_an_initialize_answer_in_a_version_not_offered_is_an_agent_error(version: int) -> None:
    def initialize(message: dict[str, Any], out: FakeAgent) -> None:
        out.initialize_response(message["id"], protocol_version=version)

    async def body(client: AgentConnection) -> Any:
        with pytest.raises(AgentError, match="protocol version"):
            await client.initialize()

    drive(ScriptedAgent({"initialize": initialize}), body)


def test_the_recorder_keeps_valid_json_msgspec_refuses_so_a_replay_matches() -> None:
    import io

    line = (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        b'{"sessionUpdate":"agent_message_chunk","messageId":"a","content":'
        b'{"type":"text","text":"half \\ud83d"},"_meta":{"n":1e400}}}}'
    )
    out = io.BytesIO()
    recorder = Recorder(out, clock=lambda: 0.0)
    recorder.message("incoming", line)
    snap = replay_log(out.getvalue()).snapshot()
    # the number beyond a double is said, as the live connection said it
    assert [d["code"] for d in snap["diagnostics"]] == ["number-beyond-double"]
    [entry] = snap["sessions"][0]["timeline"]
    assert entry["content"] == [{"type": "text", "text": "half \ud83d"}]


@pytest.mark.trio_only
@pytest.mark.skipif(not hasattr(__import__("os"), "openpty"), reason="needs a pseudo-terminal")
def test_ask_on_terminal_sanitizes_kinds_asks_one_question_at_a_time_and_can_be_cancelled() -> None:
    import os

    from acp_client import PermissionState
    from acp_client import schema as s

    def request(title: str) -> Any:
        return s.RequestPermissionRequest(
            session_id="s",
            title=title,
            options=[
                s.PermissionOption(option_id="a", name="A", kind="_x\x1b]0;PWNED\x07"),
                s.PermissionOption(option_id="b", name="B", kind="reject_once"),
            ],
        )

    main, follower = os.openpty()
    answers: dict[str, str | None] = {}
    try:
        handler = ask_on_terminal(os.ttyname(follower))

        async def ask(title: str) -> None:
            answers[title] = await handler(PermissionState(1, "s", request(title), None))

        async def scenario() -> bytes:
            async with anyio.create_task_group() as nursery:
                nursery.start_soon(ask, "first")
                nursery.start_soon(ask, "second")
                await anyio.sleep(0.3)
                shown = os.read(main, 4096)  # only the first question is on screen
                os.write(main, b"1\n")
                await anyio.sleep(0.3)
                shown += os.read(main, 4096)
                os.write(main, b"2\n")
            with anyio.move_on_after(0.3):  # nobody answers: cancelling ends the wait
                await handler(PermissionState(2, "s", request("third"), None))
            return shown

        shown = trio.run(scenario)
    finally:
        os.close(main)
        os.close(follower)
    asked = sorted(answers, key=lambda title: shown.index(title.encode()))
    assert answers == {asked[0]: "a", asked[1]: "b"}
    # the second question shows only after the first was answered
    assert shown.index(b"choice:") < shown.index(asked[1].encode())
    assert b"\x1b]0;" not in shown and b"\x07" not in shown


@pytest.mark.trio_only
def test_a_permission_question_keeps_every_agent_field_on_its_own_line() -> None:
    # An option name with a newline must not draw an option of its own (README: agent text
    # never reaches the terminal raw); the description and a command subject are shown.
    from acp_client import schema as s
    from acp_client.cli._ask import _question

    request = s.RequestPermissionRequest(
        session_id="s",
        title="Delete?\n  1. fine",
        description="rm -rf build\tnow",
        subject=s.CommandPermissionSubject(command="rm -rf build\n", cwd="/w"),
        options=[
            s.PermissionOption(
                option_id="always",
                name="No, keep it [reject_once]\n  2. Yes, delete",
                kind="allow_always",
            ),
            s.PermissionOption(option_id="no", name="(details)", kind="reject_once"),
        ],
    )
    lines = _question(request, list(request.options)).split("\n")
    assert lines == [
        "",
        "Delete?\\n  1. fine",
        "  rm -rf build\\tnow",
        "  command: rm -rf build\\n",
        "  in: /w",
        "  1. No, keep it [reject_once]\\n  2. Yes, delete [allow_always]",
        "  2. (details) [reject_once]",
        "  0. cancel",
        "choice: ",
    ]


def test_a_recording_that_cannot_be_written_is_a_recording_error_naming_the_file(
    tmp_path: Any,
) -> None:
    from acp_client.transport import RecordingError

    with pytest.raises(RecordingError, match="cannot write the recording") as info:
        Recorder(str(tmp_path))  # a folder
    assert str(tmp_path) in str(info.value) and info.value.errno is not None

    class Full(io.BytesIO):
        def write(self, data: Any) -> int:
            raise OSError(28, "No space left on device")

    with pytest.raises(RecordingError, match="No space left"):
        Recorder(Full()).stderr("x")


def test_stderr_lines_keep_the_last_ones_and_the_recording_all() -> None:
    import sys

    script = "import sys\nfor i in range(2500): print(i, file=sys.stderr)\nsys.stdin.read()"
    record = io.BytesIO()

    async def main() -> list[str]:
        async with open_agent([sys.executable, "-c", script], record=record) as agent:
            with anyio.fail_after(30):
                while not agent.stderr_lines or agent.stderr_lines[-1] != "2499":
                    await anyio.sleep(0.05)
            return list(agent.stderr_lines)

    lines = run(main)
    kept = AgentConnection.STDERR_LINES_KEPT
    assert kept <= len(lines) <= 2 * kept
    assert lines == [str(i) for i in range(2500 - len(lines), 2500)]
    recorded = [r for r in map(json.loads, record.getvalue().splitlines()) if "text" in r]
    assert [r["text"] for r in recorded] == [str(i) for i in range(2500)]


def test_a_stderr_line_too_long_to_keep_leaves_a_trace() -> None:
    # Past max_line a stderr line is not kept, but it does not vanish unseen either: its
    # size and first bytes stand in for it, in stderr_lines and in the recording.
    import sys

    script = "import sys\nprint('é' * 3000, file=sys.stderr)\nprint('next', file=sys.stderr)"
    script += "\nsys.stdin.read()"
    record = io.BytesIO()

    async def main() -> list[str]:
        command = [sys.executable, "-c", script]
        async with open_agent(command, record=record, max_line=4096) as agent:
            with anyio.fail_after(30):
                while "next" not in agent.stderr_lines:
                    await anyio.sleep(0.05)
            return list(agent.stderr_lines)

    first, second = run(main)
    assert first.startswith("[a stderr line of 6000 bytes, dropped: éé") and first.endswith("…]")
    assert second == "next"
    recorded = [r["text"] for r in map(json.loads, record.getvalue().splitlines()) if "text" in r]
    assert recorded == [first, "next"]


def test_agent_exited_names_the_exit_status_of_an_agent_that_crashes_mid_turn() -> None:
    import sys

    # Answers initialize, then exits with status 3 when the next request comes.
    script = (
        "import json, sys\n"
        "msg = json.loads(sys.stdin.readline())\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': msg['id'], 'result': {"
        "'protocolVersion': 2, 'capabilities': {}, 'info': {'name': 'a', 'version': '1'}}}),"
        " flush=True)\n"
        "sys.stdin.readline(); sys.exit(3)"
    )

    async def main() -> AgentExited:
        async with open_agent([sys.executable, "-c", script]) as agent:
            await agent.initialize()
            with anyio.fail_after(10), pytest.raises(AgentExited) as info:
                await agent.new_session("/work")
            return info.value

    error = run(main)
    assert error.status == 3
    assert str(error) == "the agent exited with status 3 before answering session/new"


@pytest.mark.trio_only
def test_a_dropped_lines_trace_is_cut_at_a_character_boundary() -> None:
    out = io.BytesIO()
    Recorder(out, clock=lambda: 0).too_long("é".encode() * 3 + b"\xc3", 9999)
    record = json.loads(out.getvalue())
    assert record["raw"] == "ééé…" and record["lineTooLong"] == 9999


def test_an_answer_reading_owes_goes_out_before_the_clients_next_request() -> None:
    # The agent asks something (here an unknown method) just before answering session/new;
    # the answer is owed before anything the client sends after seeing the session/new result.
    def new_session(message: dict[str, Any], out: FakeAgent) -> None:
        out.send("incoming", {"jsonrpc": "2.0", "id": 900, "method": "x/unknown", "params": {}})
        out.new_session_response(message["id"])

    async def body(client: AgentConnection) -> None:
        sid = await setup(client)
        await client.prompt(sid, "hello")

    for _ in range(24):  # the scheduler's order varies between runs
        agent = ScriptedAgent({"session/new": new_session})
        drive(agent, body)
        order = [m.get("method") or ("answer", m.get("id")) for m in agent.received]
        assert order.index(("answer", 900)) < order.index("session/prompt"), order


def test_aclose_in_a_cancelled_scope_still_ends_the_agents_input() -> None:
    # A caller cancelled while closing (a Ctrl-C on the way out) must not leave the agent
    # waiting for input that never comes.
    async def main() -> bytes:
        to_agent, agent_reads = pipe()
        agent_writes, client_reads = pipe()
        client = AgentConnection(to_agent, client_reads)
        with anyio.CancelScope() as scope:
            scope.cancel()
            await client.aclose()
        try:
            with anyio.move_on_after(5):
                return await agent_reads.read()
            return b"still open"
        finally:
            for end in (agent_reads, agent_writes, client_reads):
                await end.aclose()

    assert run(main) == b""  # end of input


def test_a_close_goes_out_before_the_permission_answers_it_causes() -> None:
    # session/close answers the pending permission request `cancelled` (as send_close does):
    # the close first, then the answer it caused, never the other way round.
    def close(message: dict[str, Any], out: FakeAgent) -> None:
        out.result(message["id"], {})

    async def undecided(perm: Any) -> str | None:
        await anyio.sleep_forever()
        return None

    async def body(client: AgentConnection) -> None:
        sid = await setup(client)
        await client.prompt(sid, "go")
        await anyio.wait_all_tasks_blocked()  # the permission request is pending
        await client.close_session(sid)

    for _ in range(12):  # the scheduler's order varies between runs
        agent = ScriptedAgent({"session/prompt": _permission_prompt, "session/close": close})
        drive(agent, body, on_permission=undecided)
        order = [m.get("method") or ("answer", m.get("id")) for m in agent.received]
        assert order[-2:] == ["session/close", ("answer", 77)], order


def test_a_turn_ended_by_the_last_line_before_the_agent_exits_is_done_not_lost() -> None:
    """The final idle comes as a last line without a newline, then the output ends."""
    agent = ScriptedAgent()

    async def main() -> tuple[Any, Any]:
        to_agent_send, to_agent_receive = pipe()
        to_client_send, to_client_receive = pipe()
        client = AgentConnection(to_agent_send, to_client_receive)

        async def pump() -> None:
            while data := await to_agent_receive.read():
                reply = agent.receive_data(data)
                if b'"session/prompt"' not in data:
                    await to_client_send.send(reply)
                    continue
                *turn, last = reply.rstrip(b"\n").split(b"\n")
                answer = turn.pop(0)
                await to_client_send.send(answer + b"\n")
                await anyio.wait_all_tasks_blocked()  # the client waits in wait_done
                await to_client_send.send(b"".join(x + b"\n" for x in turn) + last)
                await to_client_send.aclose()  # the output ends right after the turn
                return

        async with anyio.create_task_group() as nursery:
            nursery.start_soon(pump)
            await nursery.start(client.run)
            sid = await setup(client)
            handle = await client.prompt(sid, "go")
            reason = await handle.wait_done()
            await client.wait_idle(sid)  # also fine once the agent is gone: it is idle
            nursery.cancel_scope.cancel()
        await client.aclose()
        for end in (to_agent_receive, to_client_receive):
            await end.aclose()
        return reason, client.closed

    assert run(main) == ("end_turn", True)


def test_a_permission_handler_answering_an_option_not_offered_fails_loudly() -> None:
    agent = ScriptedAgent({"session/prompt": _permission_prompt}, on_response=_permission_answered)

    async def typo(perm: Any) -> str:
        return "allow_once"  # the option's kind, not its optionId

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        handle = await client.prompt(sid, "go")
        with anyio.fail_after(5):  # never a hang
            return await handle.wait_done()

    with pytest.raises(BaseExceptionGroup) as info:  # raw nurseries here; open_agent unwraps
        drive(agent, body, on_permission=typo)
    matched, _ = info.value.split(LocalProtocolError)
    assert matched is not None
    error = matched
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    assert "'allow_once' for permission request 77, which offered ['yes', 'no']" in str(error)


def test_events_after_the_agent_left_end_at_once_and_a_closed_subscriber_is_dropped() -> None:
    async def body(client: AgentConnection) -> tuple[int, list[Any]]:
        sid = await setup(client)
        with client.events() as dropped:  # closed on leaving: unsubscribed
            pass
        kept = client.events()
        handle = await client.prompt(sid, "go")
        # the closed one was pruned at the next event (all are gone once the output ended)
        assert len(client._subscribers) == (0 if client.closed else 1)
        with pytest.raises(AgentExited):
            await handle.wait_done()
        subscribers = len(client._subscribers)
        with anyio.fail_after(5):
            late = [event async for event in client.events()]
            seen = [event async for event in kept]
        assert dropped is not kept and seen
        return subscribers, late

    def prompt(message: dict[str, Any], out: FakeAgent) -> None:
        out.prompt_response(message["id"], "u").user_message("u", "go").state("running")

    (subscribers, late), _ = drive(ScriptedAgent({"session/prompt": prompt}), body, close_after=3)
    assert (subscribers, late) == (0, [])


class _V1Agent(ScriptedAgent):
    """A v1 agent whose output passes through ``mutate`` (valid JSON msgspec refuses).

    ``SURR`` in anything it writes becomes a lone surrogate escape on the wire.
    """

    def __init__(self, mutate: Callable[[bytes], bytes], session_id: str = "s") -> None:
        def init(m: dict[str, Any], out: FakeAgent) -> None:
            out.result(m["id"], {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []})

        def new(m: dict[str, Any], out: FakeAgent) -> None:
            out.result(m["id"], {"sessionId": session_id})

        def prompt(m: dict[str, Any], out: FakeAgent) -> None:
            text = {"type": "text", "text": "ok"}
            update = {"sessionUpdate": "agent_message_chunk", "content": text}
            params = {"sessionId": session_id, "update": update}
            out.send("incoming", {"jsonrpc": "2.0", "method": "session/update", "params": params})
            out.send("incoming", {"jsonrpc": "2.0", "id": "SURR", "method": "x/SURR"})
            out.send("incoming", {"jsonrpc": "2.0", "id": 9, "result": 1})  # an orphan
            out.result(m["id"], {"stopReason": "end_turn"})

        super().__init__({"initialize": init, "session/new": new, "session/prompt": prompt})
        self._mutate = mutate

    def receive_data(self, data: bytes) -> bytes:
        return self._mutate(super().receive_data(data)).replace(b"SURR", b"\\ud800")


#: A v1 agent chunk: inside a batch inside a batch it is an invalid request (JSON-RPC 6), not
#: an update, live as in replay.
_V1_CHUNK = json.dumps(
    {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s",
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m",  # v2's shape, so that only the nesting makes it invalid
                "content": {"type": "text", "text": "NESTED"},
            },
        },
    }
).encode()


@pytest.mark.parametrize(
    ("mutate", "session_id"),
    [
        (lambda b: b.replace(b'"end_turn"', b'"end_turn","_meta":{"n":1e400}'), "s"),
        (lambda b: b.replace(b'"authMethods":[]', b'"authMethods":[],"_meta":{"n":1e400}'), "s"),
        (lambda b: b.replace(b'"text":"ok"', b'"text":"okSURR"'), "s"),
        (lambda b: b.replace(b'"result":1}', b'"result":1}\n[[1]]'), "s"),
        (lambda b: b.replace(b'"result":1}', b'"result":1}\n[[' + _V1_CHUNK + b"]]"), "s"),
        (lambda b: b, "sSURR"),
    ],
    ids=[
        "bignum-result",
        "bignum-init",
        "surrogate-text",
        "nested-batch",
        "nested-batch-update",
        "surrogate-session",
    ],
)
def test_a_v1_agent_writing_json_msgspec_refuses_is_adapted_like_its_replay(
    mutate: Callable[[bytes], bytes], session_id: str
) -> None:
    record = io.BytesIO()

    async def body(client: AgentConnection) -> tuple[Any, Any]:
        sid = await setup(client)
        handle = await client.prompt(sid, "go")
        with anyio.fail_after(30):
            reason = await handle.wait_done()
        await anyio.wait_all_tasks_blocked()  # the -32601 answer to `x/...` is written
        return reason, client.connection.snapshot()

    (reason, snap), client = drive(
        _V1Agent(mutate, session_id), body, mock_clock=True, recorder=Recorder(record)
    )
    assert reason == "end_turn" and client.protocol_version == 1
    (session,) = snap["sessions"]
    assert session["sessionId"] == session_id.replace("SURR", "\ud800")
    agent = [e for e in session["timeline"] if e.get("role") == "agent"]
    assert len(agent) == 1 and agent[0]["content"][0]["text"].startswith("ok"), agent
    assert "NESTED" not in json.dumps(snap)
    assert replay_log(record.getvalue()).snapshot()["sessions"] == snap["sessions"]


def test_wait_idle_for_a_session_never_seen_is_a_local_protocol_error() -> None:
    async def body(client: AgentConnection) -> None:
        await setup(client)
        with pytest.raises(LocalProtocolError, match="no session 'nope'"):
            await client.wait_idle("nope")

    drive(ScriptedAgent(), body)


def test_a_request_cancelled_before_it_was_written_is_not_withdrawn() -> None:
    agent = ScriptedAgent()

    async def body(client: AgentConnection) -> None:
        sid = await setup(client)
        with anyio.move_on_after(0):  # cancelled at the write lock: nothing went out
            await client.prompt(sid, "go")
        await anyio.wait_all_tasks_blocked()

    drive(agent, body, mock_clock=True)
    methods = [m.get("method") for m in agent.received]
    assert "$/cancel_request" not in methods and "session/prompt" not in methods


@pytest.mark.parametrize("call", ["prompt", "close_session", "cancel", "unknown_close"])
def test_a_call_cancelled_before_it_was_written_leaves_no_trace_in_the_state(call: str) -> None:
    """Built under the write lock: the live state agrees with the recording (nothing sent)."""
    record = io.BytesIO()
    agent = ScriptedAgent()

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        with anyio.move_on_after(0):  # cancelled at the write lock
            if call == "prompt":
                await client.prompt(sid, "go")
            elif call == "close_session":
                await client.close_session(sid)
            elif call == "cancel":
                await client.cancel(sid)
            else:
                await client.close_session("ghost")
        await anyio.wait_all_tasks_blocked()
        return client.connection.snapshot()

    snap, _ = drive(agent, body, mock_clock=True, recorder=Recorder(record))
    assert [m.get("method") for m in agent.received] == ["initialize", "session/new"]
    (session,) = snap["sessions"]
    assert session["prompts"] == [] and "closed" not in session
    assert replay_log(record.getvalue()).snapshot()["sessions"] == snap["sessions"]


class _RawV1Agent(_V1Agent):
    """A :class:`_V1Agent` that keeps the bytes the client wrote, as written."""

    def __init__(self, mutate: Callable[[bytes], bytes]) -> None:
        super().__init__(mutate)
        self.raw = bytearray()

    def receive_data(self, data: bytes) -> bytes:
        self.raw += data
        return super().receive_data(data)


def test_a_v1_agents_batch_is_answered_in_one_array_as_a_v2_agents() -> None:
    # JSON-RPC 6 / spec 1.5: the replies to a batch go back as one array, whatever the version.
    batch = (
        b'[{"jsonrpc":"2.0","id":"a","method":"x/a"},{"jsonrpc":"2.0","id":"b","method":"x/b"}'
        b',"junk"]'
    )
    agent = _RawV1Agent(lambda b: b.replace(b'{"jsonrpc":"2.0","id":9,"result":1}', batch))
    record = io.BytesIO()

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        handle = await client.prompt(sid, "go")
        with anyio.fail_after(30):
            await handle.wait_done()
        await anyio.wait_all_tasks_blocked()
        return client.connection.snapshot()

    snap, client = drive(agent, body, mock_clock=True, recorder=Recorder(record))
    assert client.protocol_version == 1
    arrays = [json.loads(x) for x in bytes(agent.raw).splitlines() if x.startswith(b"[")]
    assert len(arrays) == 1
    assert sorted((r["id"] or "", r["error"]["code"]) for r in arrays[0]) == [
        ("", -32600),
        ("a", -32601),
        ("b", -32601),
    ]
    assert replay_log(record.getvalue()).snapshot()["sessions"] == snap["sessions"]


def test_a_permission_answer_the_agent_no_longer_reads_fails_nothing() -> None:
    # The agent stopped reading right after asking: the answer's write fails in the task
    # that decided it. That failure crashed the connection's nursery (two AgentExited in a
    # group out of `acp-client run`); the reader reports how the agent ended instead.
    agent = ScriptedAgent({"session/prompt": _permission_prompt})

    async def body(client: AgentConnection) -> Any:
        sid = await setup(client)
        handle = await client.prompt(sid, "go")
        with anyio.move_on_after(5):
            await handle.wait_done()
        return client.connection.snapshot()

    async def slow_allow(perm: Any) -> str:
        await anyio.sleep(1)  # the user thinks; the decision's own task writes the answer
        return "yes"

    snap, _ = drive(agent, body, on_permission=slow_allow, stop_reading_after=3, mock_clock=True)
    assert snap["sessions"][0]["permissionRequests"][0]["status"] == "answered"


def test_an_initialize_result_without_a_valid_version_is_named_in_the_error() -> None:
    def init(message: dict[str, Any], out: FakeAgent) -> None:
        out.result(message["id"], {"protocolVersion": "two", "agentCapabilities": {}})

    async def body(client: AgentConnection) -> None:
        with pytest.raises(AgentError) as info:
            await client.initialize()
        assert "initialize result is not valid" in str(info.value)
        assert "protocolVersion" in str(info.value)  # the field, not "version None"

    drive(ScriptedAgent({"initialize": init}), body)


@pytest.mark.trio_only
def test_the_transport_does_not_import_the_cli() -> None:
    """The terminal permission question is the CLI's (cli/_ask.py): the pump needs none of it."""
    import subprocess
    import sys

    code = (
        "import sys, acp_client.transport;"
        "print([m for m in sys.modules if m.startswith('acp_client.cli')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.skipif(not hasattr(__import__("os"), "killpg"), reason="needs POSIX process groups")
def test_own_session_stops_what_is_left_of_the_agents_process_group() -> None:
    """``own_session``: a child the agent left running is stopped when the connection ends."""
    import os
    import sys

    script = (
        "import json, os, subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(os.getpid(), file=sys.stderr, flush=True)\n"
        "msg = json.loads(sys.stdin.readline())\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': msg['id'], 'result': {"
        "'protocolVersion': 2, 'capabilities': {}, 'info': {'name': 'a', 'version': '1'}}}),"
        " flush=True)\n"
        "sys.stdin.readline()\n"  # until its input ends; the child lives on
    )

    def alive(pgid: int) -> bool:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        return True

    async def main() -> tuple[bool, bool]:
        async with open_agent([sys.executable, "-c", script], own_session=True) as agent:
            await agent.initialize()
            with anyio.fail_after(30):
                while not agent.stderr_lines:
                    await anyio.sleep(0.05)
            pgid = int(agent.stderr_lines[0])
            before = alive(pgid)
        with anyio.fail_after(30):  # an upper bound only: SIGTERM ends it at once
            while alive(pgid):
                await anyio.sleep(0.05)
        return before, agent.exit_status == 0

    assert run(main) == (True, True)
