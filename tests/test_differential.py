"""The reducer and connection agree with the testing kit's reference model.

``acp_client.testing.ReferenceModel`` is a deliberately simple, independent implementation
of the state rules; every generated conversation (valid by construction, either prompt/echo
order, every update variant) must reduce to the same snapshot in both.
"""

from __future__ import annotations

import copy
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_client import Connection
from acp_client.testing import ReferenceModel
from acp_client.testing.strategies import conversations, updates


def reduce_with_connection(conversation: list[tuple[str, Any]]) -> dict[str, Any]:
    conn = Connection(live=False)
    for direction, message in copy.deepcopy(conversation):
        conn.receive_message(message, direction)
    snapshot = conn.snapshot()
    snapshot["diagnostics"] = []
    return snapshot


def reduce_with_model(conversation: list[tuple[str, Any]]) -> dict[str, Any]:
    model = ReferenceModel()
    model.feed_all(copy.deepcopy(conversation))
    return model.snapshot()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(close=None))
def test_connection_matches_reference_model(conversation: list[tuple[str, Any]]) -> None:
    ours, reference = reduce_with_connection(conversation), reduce_with_model(conversation)
    assert ours == reference, "\n".join(_diff(ours, reference))


def _diff(a: Any, b: Any, path: str = "$") -> list[str]:
    if type(a) is not type(b):
        return [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict):
        out: list[str] = []
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                out.append(
                    f"{path}.{key}: {a.get(key, '<absent>')!r} != {b.get(key, '<absent>')!r}"
                )
            else:
                out.extend(_diff(a[key], b[key], f"{path}.{key}"))
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: length {len(a)} != {len(b)}: {a!r} != {b!r}"]
        return [
            line
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for line in _diff(x, y, f"{path}[{i}]")
        ]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def reduce_with_reads(conversation: list[tuple[str, Any]]) -> dict[str, Any]:
    """The agent's consecutive messages as one read of wire bytes (the batch hot path)."""
    conn = Connection(live=False)
    pending: list[bytes] = []

    def flush() -> None:
        if pending:
            conn.receive_data(b"".join(pending))
            pending.clear()

    for direction, message in copy.deepcopy(conversation):
        if direction == "incoming":
            pending.append(msgspec.json.encode(message) + b"\n")
        else:
            flush()
            conn.receive_message(message, direction)
    flush()
    snapshot = conn.snapshot()
    snapshot["diagnostics"] = []
    return snapshot


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations())
def test_agent_bytes_in_reads_match_reference_model(conversation: list[tuple[str, Any]]) -> None:
    ours, reference = reduce_with_reads(conversation), reduce_with_model(conversation)
    assert ours == reference, "\n".join(_diff(ours, reference))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(updates(), updates(damaged=True)), min_size=1, max_size=8))
def test_any_updates_reduce_like_the_reference_model(batch: list[dict[str, Any]]) -> None:
    """Single updates of every kind, valid or damaged (incl. explicit nulls), not only the
    shapes a generated conversation sends."""
    conversation = [
        (
            "incoming",
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "s1", "update": update},
            },
        )
        for update in batch
    ]
    ours, reference = reduce_with_connection(conversation), reduce_with_model(conversation)
    assert ours == reference, "\n".join(_diff(ours, reference))


# -- hand-made traffic the generated conversations do not reach -------------------------

_SID = "s1"


def _in(upd: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "incoming", {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": _SID, "update": upd},
    }


def _user(mid: str, text: str = "hi") -> tuple[str, dict[str, Any]]:
    return _in({"sessionUpdate": "user_message", "messageId": mid, "content": [_text(text)]})


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _state(state: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return _in({"sessionUpdate": "state_update", "state": state, **fields})


def _tool(cid: str, status: str) -> tuple[str, dict[str, Any]]:
    return _in({"sessionUpdate": "tool_call_update", "toolCallId": cid, "status": status})


def _out(rid: int, method: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "outgoing", {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def _answer(rid: int, result: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "incoming", {"jsonrpc": "2.0", "id": rid, "result": result}


_CANCEL = (
    "outgoing",
    {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": _SID}},
)
_SETUP = [
    _out(0, "initialize", {"protocolVersion": 2}),
    _answer(0, {"protocolVersion": 2, "capabilities": {}, "info": {"name": "a", "version": "1"}}),
    _out(1, "session/new", {"cwd": "/w", "mcpServers": []}),
    _answer(1, {"sessionId": _SID}),
]


def _prompt(rid: int) -> tuple[str, dict[str, Any]]:
    return _out(rid, "session/prompt", {"sessionId": _SID, "prompt": [_text("hi")]})


def _resume(rid: int) -> tuple[str, dict[str, Any]]:
    return _out(
        rid, "session/resume", {"sessionId": _SID, "cwd": "/w", "replayFrom": {"type": "start"}}
    )


HAND_MADE = {
    # R49: cancel after the acceptance, before running: the work's tool call is marked
    "cancel-before-running": [
        *_SETUP,
        _tool("old", "in_progress"),
        _state("idle", stopReason="end_turn"),
        _prompt(2),
        _answer(2, {"messageId": "u1"}),
        _user("u1"),
        _tool("c1", "pending"),
        _CANCEL,
        _state("running"),
        _state("idle", stopReason="cancelled"),
    ],
    # the response after its own idle: the cancel is one while idle (R46)
    "response-after-idle": [
        *_SETUP,
        _prompt(2),
        _user("u1"),
        _state("running"),
        _tool("c0", "in_progress"),
        _state("idle", stopReason="end_turn"),
        _answer(2, {"messageId": "u1"}),
        _tool("c1", "pending"),
        _CANCEL,
    ],
    # a prompt sent while idle drops a cancel whose work never came
    "prompt-drops-cancel": [
        *_SETUP,
        _prompt(2),
        _answer(2, {"messageId": "u1"}),
        _user("u1"),
        _CANCEL,
        _prompt(3),
        _state("running"),
        _tool("c1", "pending"),
    ],
    # an entry one replay dropped and the next reported again leaves unretained
    "replayed-again": [
        *_SETUP,
        _user("u1"),
        _in({"sessionUpdate": "agent_message", "messageId": "a1", "content": [_text("A")]}),
        _resume(2),
        _in({"sessionUpdate": "agent_message", "messageId": "a1", "content": [_text("A")]}),
        _state("idle", stopReason="end_turn"),
        _answer(2, {}),
        _resume(3),
        _user("u1", "again"),
        _state("idle", stopReason="end_turn"),
        _answer(3, {}),
    ],
    # JSON Schema's integer holds 1000.0
    "whole-number-floats": [
        *_SETUP,
        _in({"sessionUpdate": "usage_update", "used": 1000.0, "size": 2e5}),
        _in(
            {
                "sessionUpdate": "terminal_update",
                "terminalId": "t1",
                "exitStatus": {"exitCode": 0.0},
                "size": {"rows": 24.0, "cols": 80.0},
            }
        ),
    ],
}


def test_hand_made_traffic_reduces_like_the_reference_model() -> None:
    for name, conversation in HAND_MADE.items():
        ours, reference = reduce_with_connection(conversation), reduce_with_model(conversation)
        assert ours == reference, name + "\n" + "\n".join(_diff(ours, reference))
    ours = reduce_with_connection(HAND_MADE["cancel-before-running"])
    timeline = ours["sessions"][0]["timeline"]
    assert [(e.get("toolCallId"), e.get("status")) for e in timeline if "toolCallId" in e] == [
        ("old", "in_progress"),
        ("c1", "cancelled"),
    ]
    ours = reduce_with_connection(HAND_MADE["response-after-idle"])
    assert [e.get("status") for e in ours["sessions"][0]["timeline"] if "toolCallId" in e] == [
        "in_progress",
        "pending",
    ]
    ours = reduce_with_connection(HAND_MADE["replayed-again"])
    assert [e["messageId"] for e in ours["sessions"][0]["unretained"]] == ["a1"]  # not u1
    ours = reduce_with_connection(HAND_MADE["whole-number-floats"])
    assert ours["sessions"][0]["usage"]["used"] == 1000


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(close=None, session_messages=True))
def test_preview_session_messages_match_reference_model(
    conversation: list[tuple[str, Any]],
) -> None:
    """ACP v2 Preview P12-P15, P45: inter-session messages (whole, chunked, participants
    patched, content reset) and plan removals reduce as the reference model reads them,
    also through a resume's replay and in agent reads of wire bytes."""
    reference = reduce_with_model(conversation)
    for ours in (reduce_with_connection(conversation), reduce_with_reads(conversation)):
        assert ours == reference, "\n".join(_diff(ours, reference))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(resume=True, replay_markers=True, session_messages=True))
def test_preview_replay_markers_match_reference_model(
    conversation: list[tuple[str, Any]],
) -> None:
    """ACP v2 Preview P18-P20: a resume's replay ending at ``replay_complete`` (before or
    after the current-state snapshot) or at the response (no marker) reduces as the
    reference model reads it: unretained at the marker, no completion in the window, the
    snapshot's ``replay`` key."""
    ours, reference = reduce_with_connection(conversation), reduce_with_model(conversation)
    assert ours == reference, "\n".join(_diff(ours, reference))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    conversations(
        close=None, children=True, retries=True, session_messages=True, replay_markers=True
    )
)
def test_preview_trees_and_retries_match_reference_model(
    conversation: list[tuple[str, Any]],
) -> None:
    """ACP v2 Preview P1-P9, P16-P21, P26-P30: child sessions (nested, announced after
    their own traffic, patched, refused announcements, joining a resume's replay with or
    without their own marker) and keyed prompt retries reduce as the reference model
    reads them, message by message and in agent reads of wire bytes."""
    reference = reduce_with_model(conversation)
    for ours in (reduce_with_connection(conversation), reduce_with_reads(conversation)):
        assert ours == reference, "\n".join(_diff(ours, reference))
