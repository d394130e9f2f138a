"""Hypothesis strategies for ACP v1 traffic, the input of the V1-TO-V2 adapter.

Owns: :func:`v1_streams`, v1 exchanges valid against schema-v1.json (V1-TO-V2.md):
``initialize`` with ``protocolVersion: 1``, id-less chunks, ``tool_call`` with v1
``null`` "no change" fields, ``plan``, v1 permission requests and the v1 end of turn.
Private helpers of :mod:`acp_client.testing.strategies`.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ._strategies_content import plan_entries
from ._strategies_conversations import _texts
from ._strategies_splits import Exchange, Message, Pair, _check_session, _text_rechunkings

# -- v1 traffic (V1-TO-V2.md) -------------------------------------------------------------


def _v1_plan_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A v2 plan entry as schema-v1 has it: closed priority and status enums, no `_meta`."""
    priority = entry.get("priority")
    status = entry.get("status")
    return {
        "content": entry["content"],
        "priority": priority if priority in ("high", "medium", "low") else "medium",
        "status": status if status in ("pending", "in_progress", "completed") else "completed",
    }


def _v1_update(sid: str, update: Message) -> Pair:
    params = {"sessionId": sid, "update": update}
    return ("incoming", {"jsonrpc": "2.0", "method": "session/update", "params": params})


@st.composite
def _v1_streams(draw: st.DrawFn, session_id: str, max_turns: int) -> Exchange:
    sid = session_id
    out: Exchange = []

    def out_req(rid: int, method: str, params: Any) -> None:
        out.append(("outgoing", {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}))

    def result(direction: str, rid: int, value: Any) -> None:
        out.append((direction, {"jsonrpc": "2.0", "id": rid, "result": value}))

    def chunk(kind: str, text: str) -> None:
        out.append(
            _v1_update(sid, {"sessionUpdate": kind, "content": {"type": "text", "text": text}})
        )

    out_req(
        0,
        "initialize",
        {
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": {"readTextFile": True, "writeTextFile": True},
                "terminal": False,
            },
        },
    )
    result(
        "incoming",
        0,
        {
            "protocolVersion": 1,
            "agentCapabilities": {"loadSession": False, "promptCapabilities": {"image": False}},
            "authMethods": [],
        },
    )
    out_req(1, "session/new", {"cwd": "/work", "mcpServers": []})
    result("incoming", 1, {"sessionId": sid})
    rid, agent_rid, call = 2, 0, 0
    for _ in range(draw(st.integers(1, max_turns))):
        text = draw(_texts)
        out_req(
            rid, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
        )
        if draw(st.booleans()):
            chunk("user_message_chunk", text)  # many v1 agents echo the prompt, id-less
        cancelled = False
        for _ in range(draw(st.integers(1, 4))):
            step = draw(st.sampled_from(["thought", "text", "tool", "plan", "permission"]))
            if step == "thought":
                for piece in draw(_text_rechunkings(draw(_texts))):
                    chunk("agent_thought_chunk", piece)
            elif step == "text":
                for piece in draw(_text_rechunkings(draw(_texts))):
                    chunk("agent_message_chunk", piece)
            elif step == "plan":
                entries = draw(
                    st.lists(
                        plan_entries.map(_v1_plan_entry),
                        max_size=3,
                    )
                )
                out.append(_v1_update(sid, {"sessionUpdate": "plan", "entries": entries}))
            else:
                call += 1
                cid = f"call_{call}"
                out.append(
                    _v1_update(
                        sid,
                        {
                            "sessionUpdate": "tool_call",
                            "toolCallId": cid,
                            "title": draw(_texts),
                            "kind": "read",
                            "status": "pending",
                        },
                    )
                )
                if step == "permission":
                    options = [
                        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                        {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
                    ]
                    out.append(
                        (
                            "incoming",
                            {
                                "jsonrpc": "2.0",
                                "id": agent_rid,
                                "method": "session/request_permission",
                                "params": {
                                    "sessionId": sid,
                                    "toolCall": {"toolCallId": cid},
                                    "options": options,
                                },
                            },
                        )
                    )
                    result(
                        "outgoing",
                        agent_rid,
                        {
                            "outcome": {
                                "outcome": "selected",
                                "optionId": draw(st.sampled_from(["allow", "reject"])),
                            }
                        },
                    )
                    agent_rid += 1
                update: dict[str, Any] = {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": cid,
                    "status": "completed",
                    "content": [
                        {"type": "content", "content": {"type": "text", "text": draw(_texts)}}
                    ],
                }
                if draw(st.booleans()):
                    update["title"] = None  # v1: null means "no change"
                out.append(_v1_update(sid, update))
        if draw(st.integers(0, 3)) == 3:
            out.append(
                (
                    "outgoing",
                    {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}},
                )
            )
            cancelled = True
        stop = (
            "cancelled"
            if cancelled
            else draw(st.sampled_from(["end_turn", "max_tokens", "refusal"]))
        )
        result("incoming", rid, {"stopReason": stop})
        rid += 1
    return out


def v1_streams(*, session_id: str = "sess_1", max_turns: int = 3) -> st.SearchStrategy[Exchange]:
    """ACP v1 traffic (both directions) for the V1-TO-V2 adapter.

    ``initialize`` with ``protocolVersion: 1``, ``session/new``, then turns: a prompt,
    sometimes an id-less ``user_message_chunk`` echo, id-less thought and message chunks,
    ``tool_call`` / ``tool_call_update`` (with v1 ``null`` "no change" fields), ``plan``,
    v1 permission requests (``toolCall`` instead of ``subject``) with the client's
    answers, sometimes a ``session/cancel``, and the prompt result carrying
    ``stopReason`` (the v1 end of turn). Valid against schema-v1.json.

    Example::

        @given(v1_streams(max_turns=1))
        def test_v1(exchange):
            assert exchange[-1][1]["result"]["stopReason"] in (
                "end_turn", "max_tokens", "refusal", "cancelled")
    """
    _check_session(session_id, max_turns)
    return _v1_streams(session_id, max_turns)
