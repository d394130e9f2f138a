"""The protocol switch (acp_client/_v1/switch.py): one place decides v1 or v2 and routes v1.

A sans-IO :class:`~acp_client.Connection` talks to a v1 agent on its own (no transport), an
agent that claims one version and speaks the other is reported and adapted, and the
decision table is walked exhaustively.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from acp_client import Connection
from acp_client._v1.switch import TRANSITIONS, Mode, ProtocolSwitch, Signal, to_v1_wire
from acp_client.events import PermissionRequested, UpdateRejected
from acp_client.v1 import V1Adapter

V1_AGENT = Path(__file__).parent / "peers" / "v1_agent.py"
INFO = {"name": "agent", "version": "1"}
MODES: tuple[Mode, ...] = ("undecided", "watching", "v1?", "v2?", "v1", "v2")
SIGNALS: tuple[Signal, ...] = (
    "initialize-sent",
    "answer-v1",
    "answer-v2",
    "answer-other",
    "v1-marker",
    "v2-marker",
    "settle",
)


def _line(message: dict[str, Any]) -> bytes:
    return msgspec.json.encode({"jsonrpc": "2.0", **message}) + b"\n"


def _update(session_id: str, update: dict[str, Any]) -> bytes:
    params = {"sessionId": session_id, "update": update}
    return _line({"method": "session/update", "params": params})


def _switch(conn: Connection) -> ProtocolSwitch:
    switch: ProtocolSwitch = conn._switch
    return switch


# ----------------------------------------------------------------- (a) the real v1 peer


class _Peer:
    """The v1 peer over pipes, driven by a plain blocking read/write loop (no trio)."""

    def __init__(self, tmp: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(V1_AGENT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=tmp,
        )
        self.conn = Connection()
        self.events: list[Any] = []

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def until(self, done: Callable[[], bool], each: Callable[[Any], None] | None = None) -> None:
        """Read and feed the agent's output until ``done()``, writing what the client owes."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + 30
        while not done():
            left = deadline - time.monotonic()
            assert left > 0, "the v1 agent did not get there in time"
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            data = os.read(fd, 1 << 16)
            assert data, "the v1 agent closed its output"
            events = self.conn.receive_data(data)
            self.events += events
            if each is not None:
                for event in events:
                    each(event)
            owed = self.conn.data_to_send()
            if owed:
                self.send(owed)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture
def peer(tmp_path: Path) -> Any:
    pytest.importorskip("acp")
    one = _Peer(tmp_path)
    try:
        yield one
    finally:
        one.close()


def test_a_sans_io_connection_completes_a_turn_with_the_real_v1_agent(
    peer: _Peer, tmp_path: Path
) -> None:
    conn = peer.conn
    peer.send(conn.send_initialize().data)
    peer.until(lambda: conn.protocol_version is not None)
    assert conn.protocol_version == 1
    assert _switch(conn).mode == "v1?"

    peer.send(conn.send_new_session(str(tmp_path)).data)
    peer.until(lambda: bool(conn.sessions))
    (session_id,) = conn.sessions

    def allow(event: Any) -> None:
        if type(event) is PermissionRequested:
            peer.send(conn.answer_permission(event.request_id, "allow-once"))

    for turn, text in enumerate(["hello", "now with permission"], 1):
        sent = conn.send_prompt(session_id, text)
        peer.send(sent.data)
        peer.until(lambda rid=sent.request_id: conn.prompt_finished(rid), allow)  # type: ignore[misc]
        assert conn.prompt(sent.request_id).status == "accepted"
        assert conn.prompt_stop_reason(sent.request_id) == "end_turn"
        assert len(conn.session(session_id).completed_turns) == turn

    assert _switch(conn).mode == "v1"  # the traffic confirmed what initialize said
    assert not [e for e in peer.events if type(e) is UpdateRejected]
    snapshot = conn.snapshot()
    (session,) = snapshot["sessions"]
    assert session["protocolVersion"] == 1
    roles = [entry.get("role") for entry in session["timeline"] if "role" in entry]
    assert roles.count("user") == 2 and "agent" in roles
    assert snapshot["diagnostics"] == []


# ------------------------------------------------- (b) claims one version, speaks the other


def _setup(version: int, **setup: Any) -> tuple[Connection, int | str]:
    """A live connection whose agent answered initialize with ``version``; a prompt sent."""
    conn = Connection()
    rid = conn.send_initialize().request_id
    result = {"protocolVersion": version, "capabilities": {}, "info": INFO}
    conn.receive_data(_line({"id": rid, "result": result}))
    rid = conn.send_new_session("/work").request_id
    conn.receive_data(_line({"id": rid, "result": {"sessionId": "s", **setup}}))
    return conn, conn.send_prompt("s", "hello").request_id


def test_an_agent_that_claims_v2_and_speaks_v1_is_reported_and_adapted() -> None:
    modes = {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}]}
    conn, rid = _setup(2, modes=modes)  # v1's modes: no field of v2's
    assert _switch(conn).mode == "v2?"
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi"}}
    info = {"sessionUpdate": "session_info_update", "title": "Greeting"}
    events = conn.receive_data(
        _update("s", info)  # ambiguous: held until the next message tells
        + _update("s", chunk)  # no messageId: v1
        + _update("s", {**chunk, "content": {"type": "text", "text": " there"}})
        + _line({"id": rid, "result": {"stopReason": "end_turn"}})
    )
    assert _switch(conn).mode == "v1"
    assert not [e for e in events if type(e) is UpdateRejected]
    assert [d.code for d in conn.diagnostics] == ["agent-speaks-v1"]
    assert "'agent_message_chunk' update" in conn.diagnostics[0].message
    assert conn.prompt(rid).status == "accepted"  # inserted by the v1 rules (5.2)
    assert conn.prompt_stop_reason(rid) == "end_turn"
    snapshot = conn.snapshot()
    (session,) = snapshot["sessions"]
    assert session["protocolVersion"] == 1
    assert session["sessionInfo"] == {"title": "Greeting"}  # nothing was lost
    assert [option["currentValue"] for option in session["configOptions"]] == ["ask"]  # 6.2
    texts = [
        "".join(block["text"] for block in entry["content"])
        for entry in session["timeline"]
        if entry.get("role") == "agent"
    ]
    assert texts == ["Hi there"]


def test_an_agent_that_claims_v1_and_speaks_v2_is_reported_and_read_as_v2() -> None:
    conn, rid = _setup(1)
    assert _switch(conn).mode == "v1?"
    hello = [{"type": "text", "text": "hello"}]
    events = conn.receive_data(
        _line({"id": rid, "result": {"messageId": "u1"}})  # a v2 prompt result
        + _update("s", {"sessionUpdate": "user_message", "messageId": "u1", "content": hello})
        + _update("s", {"sessionUpdate": "state_update", "state": "running"})
        + _update(
            "s",
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "a1",
                "content": {"type": "text", "text": "Hi"},
            },
        )
        + _update("s", {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
    )
    assert _switch(conn).mode == "v2"
    assert not _switch(conn).routing  # back on the fast path
    assert not [e for e in events if type(e) is UpdateRejected]
    assert [d.code for d in conn.diagnostics] == ["agent-speaks-v2"]
    assert conn.prompt(rid).message_id == "u1"
    assert conn.prompt_stop_reason(rid) == "end_turn"
    assert conn.snapshot()["sessions"][0]["protocolVersion"] == 2


def test_a_v2_agent_confirms_v2_and_leaves_the_fast_path_alone() -> None:
    conn, rid = _setup(2)
    conn.receive_data(_line({"id": rid, "result": {"messageId": "u1"}}))
    switch = _switch(conn)
    assert (switch.mode, switch.routing, switch.watching, switch.adapter) == (
        "v2",
        False,
        False,
        None,
    )
    assert conn.diagnostics == []


def test_in_v1_what_the_client_sends_is_in_its_v1_wire_form() -> None:
    conn, _ = _setup(1)
    (message,) = [msgspec.json.decode(conn.send_resume("s", "/work", replay=True).data)]
    assert message["method"] == "session/load"
    assert "replayFrom" not in message["params"]
    assert to_v1_wire({"method": "auth/login", "params": {}})["method"] == "authenticate"
    assert to_v1_wire({"method": "auth/logout"})["method"] == "logout"


# ------------------------------------------------------------------ (c) the decision table


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("signal", SIGNALS)
def test_every_pair_of_the_decision_table(mode: Mode, signal: Signal) -> None:
    conn = Connection()
    switch = ProtocolSwitch(conn, live=True)
    switch._enter(mode)  # as the connection would be in that mode:
    if mode in ("v1?", "v2?", "v1"):
        switch.adapter = V1Adapter()
    conn.record_sends = mode not in ("v1?", "v1")
    switch.signal(signal, "a marker")
    effect, target = TRANSITIONS.get((mode, signal), (None, mode))
    assert switch.mode == target
    assert switch.routing == (target not in ("undecided", "v2"))
    assert switch.watching == (target != "v2")
    assert (switch.adapter is not None) == (target in ("v1?", "v2?", "v1"))
    assert conn.record_sends == (target not in ("v1?", "v1"))
    codes = [d.code for d in conn.diagnostics]
    assert codes == {"adopt-shadow": ["agent-speaks-v1"], "drop-adapter": ["agent-speaks-v2"]}.get(
        str(effect), []
    )


def test_the_table_only_names_modes_and_signals_that_exist() -> None:
    for (mode, signal), (_, target) in TRANSITIONS.items():
        assert mode in MODES and target in MODES and signal in SIGNALS


@pytest.mark.parametrize(
    ("answer", "mode", "version"),
    [
        ({"result": {"protocolVersion": 1, "agentCapabilities": {}}}, "v1?", 1),
        ({"result": {"protocolVersion": 2, "capabilities": {}, "info": INFO}}, "v2?", 2),
        ({"result": {"protocolVersion": 3, "capabilities": {}, "info": INFO}}, "v2", 3),
        ({"error": {"code": -32603, "message": "not now"}}, "watching", None),
    ],
)
def test_the_initialize_exchange_decides(
    answer: dict[str, Any], mode: Mode, version: int | None
) -> None:
    conn = Connection()
    assert _switch(conn).mode == "undecided"
    rid = conn.send_initialize(protocol_version=3).request_id
    assert _switch(conn).mode == "watching"
    conn.receive_data(_line({"id": rid, **answer}))
    assert _switch(conn).mode == mode
    assert conn.protocol_version == version


def test_a_passive_connection_has_nothing_to_switch() -> None:
    switch = _switch(Connection(live=False))
    assert (switch.mode, switch.routing, switch.watching) == ("v2", False, False)
