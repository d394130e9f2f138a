"""Replaying stored logs: any format gives the state of the conversation it holds, and no
input, however broken, makes the replay raise."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_client import Connection, replay_log
from acp_client.testing import ReferenceModel, StoredLog
from acp_client.testing.strategies import conversations, stored_logs, v1_streams

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def live_state(messages: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    conn = Connection(live=False)
    for direction, message in copy.deepcopy(messages):
        conn.receive_message(message, direction)
    sessions: list[dict[str, Any]] = conn.snapshot()["sessions"]
    return sessions


@FAST
@given(stored_logs(exchanges=conversations()))
def test_every_format_replays_to_the_state_of_its_messages(log: StoredLog) -> None:
    result = replay_log(log.text.encode("utf-8"))
    assert result.ok
    replayed = result.snapshot()["sessions"]
    expected = live_state(log.messages)
    if log.format == "conductor":  # hop ids are strings: compare without request ids
        for sessions in (replayed, expected):
            for session in sessions:
                for item in session["prompts"] + session["permissionRequests"]:
                    item.pop("requestId")
    assert replayed == expected


def _without_request_ids(sessions: list[dict[str, Any]]) -> None:
    """Conductor hop ids are strings: drop every request id before comparing."""
    for session in sessions:
        for item in session["prompts"] + session["permissionRequests"]:
            item.pop("requestId")
            for attempt in item.get("attempts", ()):
                attempt.pop("requestId")
        session.get("replay", {}).pop("requestId", None)


@FAST
@given(
    stored_logs(
        exchanges=conversations(
            children=True, retries=True, session_messages=True, replay_markers=True
        )
    )
)
def test_preview_logs_replay_to_the_reference_model_state(log: StoredLog) -> None:
    """ACP v2 Preview traffic (child sessions, keyed retries, marked, unmarked and
    truncated replays, session messages) stored in any format replays to the state the
    reference model gives its messages."""
    replayed = replay_log(log.text.encode("utf-8")).snapshot()["sessions"]
    model = ReferenceModel()
    model.feed_all(copy.deepcopy(log.messages))
    expected = model.snapshot()["sessions"]
    if log.format == "conductor":
        _without_request_ids(replayed)
        _without_request_ids(expected)
    assert replayed == expected


@FAST
@given(v1_streams())
def test_v1_streams_replay_without_errors(exchange: list[tuple[str, Any]]) -> None:
    from acp_client.testing import log_lines

    text = "".join(line + "\n" for line in log_lines(exchange, "acp-client"))
    result = replay_log(text.encode("utf-8"))
    assert result.ok
    snapshot = result.snapshot()
    for session in snapshot["sessions"]:
        assert session.get("protocolVersion", 1) == 1
        for entry in session["timeline"]:
            if entry["entry"] == "message":
                assert isinstance(entry["messageId"], str)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
keys = st.sampled_from(
    [
        "jsonrpc",
        "id",
        "method",
        "params",
        "result",
        "error",
        "sessionId",
        "update",
        "sessionUpdate",
        "messageId",
        "content",
        "toolCallId",
        "terminalId",
        "data",
        "state",
    ]
)
messages = st.recursive(
    json_values,
    lambda inner: st.dictionaries(keys, inner, max_size=6),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(messages, st.binary(max_size=40)), max_size=12))
def test_garbage_never_raises(items: list[Any]) -> None:
    import json

    lines = [item if isinstance(item, bytes) else json.dumps(item).encode() for item in items]
    result = replay_log(b"\n".join(lines) + b"\n")
    snapshot = result.snapshot()
    assert snapshot["format"] == "acp-client/snapshot@1"
    for diagnostic in snapshot["diagnostics"]:
        assert diagnostic["severity"] in ("warning", "error")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages, min_size=1, max_size=12))
def test_session_update_shaped_garbage_never_raises(items: list[Any]) -> None:
    conn = Connection(live=False)
    for item in items:
        params = item if isinstance(item, dict) else {"x": item}
        message = {"jsonrpc": "2.0", "method": "session/update", "params": params}
        conn.receive_message(message, "incoming")
        live = Connection()
        live.receive_data(__import__("json").dumps(message).encode() + b"\n")
    conn.snapshot()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["incoming", "outgoing"]), messages), max_size=12))
def test_either_direction_garbage_never_raises(items: list[tuple[str, Any]]) -> None:
    passive, live = Connection(live=False), Connection()
    for direction, item in items:
        passive.receive_message(item if isinstance(item, dict) else {"x": item}, direction)  # type: ignore[arg-type]
        if direction == "incoming":
            live.receive_data(__import__("json").dumps(item).encode() + b"\n")
    passive.snapshot()
    live.snapshot()
    live.data_to_send()


V1_HANDSHAKE = [
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
    {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}},
    {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}},
    {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s"}},
]
update_fields = st.dictionaries(keys, json_values, max_size=5)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([[], V1_HANDSHAKE, V1_HANDSHAKE[:2]]),
    st.lists(st.tuples(json_values, update_fields), min_size=1, max_size=6),
)
def test_updates_of_any_shape_never_raise_in_detection_or_the_v1_adapter(
    head: list[dict[str, Any]], updates: list[tuple[Any, dict[str, Any]]]
) -> None:
    """``sessionUpdate`` may be any JSON value (an object or array crashed the v1 path)."""
    import json

    lines = [json.dumps(m) for m in head]
    for kind, fields in updates:
        update = {**fields, "sessionUpdate": kind}
        params = {"sessionId": "s", "update": update}
        lines.append(json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}))
    for agent_only in (False, True):
        kept = [x for x in lines if not agent_only or '"initialize"' not in x]
        snapshot = replay_log(("\n".join(kept) + "\n").encode()).snapshot()
        assert snapshot["format"] == "acp-client/snapshot@1"
