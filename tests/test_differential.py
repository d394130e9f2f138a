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
@given(conversations())
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
