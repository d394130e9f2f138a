"""The official Python SDK side by side: its decode + ``SessionAccumulator`` per update.

The SDK (``agent-client-protocol``, ACP v1) decodes a line with ``json.loads``, validates
``session/update`` params with pydantic (``SessionNotification.model_validate``) and keeps
state with ``acp.contrib.session_state.SessionAccumulator``, whose ``apply`` returns a
snapshot that deep-copies every message, plan entry and tool call so far: the cost of one
update grows with the conversation. It runs on :func:`v1_form` of our generated v2
conversations (the same turns, each v2 update as the v1 update that says the same).

Timing the whole 100k conversation through ``apply`` would take hours (quadratic), so the
cost per update at a size is measured where it is paid: the accumulator is brought to the
state of the first ``n - WINDOW`` updates through its own merge (``_apply_update``, no
snapshot, untimed), then the last ``WINDOW`` updates go through the SDK's full path
(decode, validate, ``apply``), timed. Ours is decode + reduce of the whole v2 log through
``Connection.receive_data``, per update.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

WINDOW = 300
"""Updates at most timed through the SDK's full path at the end of each conversation."""
BUDGET = float(os.environ.get("ACP_BENCH_SDK_BUDGET", "2.0"))
"""Seconds after which the window stops (at least 3 updates are timed; --quick: 0.2)."""


def v1_form(update: dict[str, Any], seen_tools: set[str]) -> dict[str, Any] | None:
    """The v1 ``session/update`` payload saying what the v2 ``update`` says (``None``: none).

    Chunks lose ``messageId``; ``user_message`` becomes its first block as a chunk; a tool
    call's first upsert is a ``tool_call``, the next ones, its content chunks, terminals
    and their output ``tool_call_update``; ``plan_update`` is ``plan``; ``state_update``
    has no v1 update (v1 ends a turn with the prompt's response).
    """
    kind = update.get("sessionUpdate")
    if kind in ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk"):
        return {"sessionUpdate": kind, "content": update["content"]}
    if kind == "user_message":
        content = update.get("content") or [{"type": "text", "text": ""}]
        return {"sessionUpdate": "user_message_chunk", "content": content[0]}
    if kind == "tool_call_update":
        tool_id = update["toolCallId"]
        out = {k: v for k, v in update.items() if k in ("toolCallId", "title", "kind", "status")}
        if tool_id not in seen_tools:
            seen_tools.add(tool_id)
            return {"sessionUpdate": "tool_call", "title": "", **out}
        return {**out, "sessionUpdate": "tool_call_update"}
    if kind == "tool_call_content_chunk":
        block = {"type": "content", "content": update["content"]}
        return {"sessionUpdate": "tool_call_update", "toolCallId": update["toolCallId"]} | {
            "content": [block]
        }
    if kind in ("terminal_update", "terminal_output_chunk"):
        raw = {"terminalId": update.get("terminalId"), "data": update.get("data")}
        return {"sessionUpdate": "tool_call_update", "toolCallId": "terminal", "rawOutput": raw}
    if kind == "plan_update":
        entries = [
            {
                "content": e.get("content", ""),
                "priority": e.get("priority", "medium"),
                "status": e.get("status", "pending"),
            }
            for e in update.get("entries", [])
        ]
        return {"sessionUpdate": "plan", "entries": entries}
    if kind == "state_update":
        return None
    return update  # commands, config options, session info, usage: the same in v1


def v1_lines(path: Path) -> tuple[list[bytes], list[bytes]]:
    """The v2 update lines of a generated log, and their v1 form (one line per v1 update)."""
    v2: list[bytes] = []
    v1: list[bytes] = []
    seen: set[str] = set()
    seen.add("terminal")
    for line in path.read_bytes().splitlines():
        message = json.loads(line)
        if message.get("method") != "session/update":
            continue
        v2.append(line)
        params = message["params"]
        update = v1_form(params["update"], seen)
        if update is not None:
            v1_message = {**message, "params": {**params, "update": update}}
            v1.append(json.dumps(v1_message, ensure_ascii=False).encode())
    return v2, v1


def sdk_per_update(v1: list[bytes], clock: Callable[[], float]) -> dict[str, Any]:
    """Seconds per update of the SDK's path over the last ``WINDOW`` updates of ``v1``."""
    from acp.contrib.session_state import SessionAccumulator
    from acp.schema import SessionNotification

    validate = SessionNotification.model_validate
    loads = json.loads
    accepted: list[tuple[bytes, Any]] = []
    for line in v1:
        try:
            accepted.append((line, validate(loads(line)["params"])))
        except ValueError:  # pydantic's ValidationError is one
            continue
    cut = max(1, len(accepted) - WINDOW)
    acc = SessionAccumulator()
    acc.apply(accepted[0][1])
    refused = 0
    for _, note in accepted[1:cut]:
        try:
            acc._apply_update(note.update)  # the untimed fill, no snapshot
        except Exception:
            refused += 1
    window = [line for line, _ in accepted[cut:]]
    timed = 0
    t0 = clock()
    for line in window:
        note = validate(loads(line)["params"])
        try:
            acc.apply(note)
        except Exception:
            refused += 1  # refused by the accumulator: its decode was still paid
        timed += 1
        if timed >= 3 and clock() - t0 > BUDGET:
            break  # at 100k one update costs most of a second
    elapsed = clock() - t0
    return {
        "sdk_seconds": elapsed,
        "sdk_updates": timed,
        "v1_updates": len(v1),
        "v1_accepted": len(accepted),
        "accumulator_refused": refused,
    }
