# Implements V1-TO-V2.md section 1.3 (detecting a v1 stream) for the replay driver, which picks
# the v1 adapter or the plain v2 pipeline from the first message that decides.
"""Tell ACP v1 traffic from v2 traffic, one JSON-RPC object at a time."""

from __future__ import annotations

from typing import Any

__all__ = ["detect_v1"]

_CHUNKS = frozenset({"user_message_chunk", "agent_message_chunk", "agent_thought_chunk"})
_V2_ONLY_UPDATES = frozenset(
    {"state_update", "tool_call_content_chunk", "user_message", "agent_message", "agent_thought"}
    | {"terminal_update", "terminal_output_chunk"}
)
_V1_ONLY_UPDATES = frozenset({"tool_call", "plan", "current_mode_update"})
_V1_ONLY_METHODS = frozenset({"session/load", "session/set_mode"})


def detect_v1(direction: str, message: Any) -> bool | None:
    """Whether one JSON-RPC object marks its stream as v1 (True), v2 (False) or neither (None).

    Markers follow V1-TO-V2.md section 1.3: an ``initialize`` result's ``protocolVersion``,
    v1-only update names and methods, id-less message chunks, a prompt result carrying
    ``stopReason``, v1 capability field names; v2-only updates and a prompt result carrying
    ``messageId`` mark v2.
    """
    if not isinstance(message, dict):
        return None
    method = message.get("method")
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    if isinstance(method, str):
        if method in _V1_ONLY_METHODS or method.startswith("fs/"):
            return True
        if method.startswith("terminal/") and method != "terminal/cancel":
            return True
        if method == "initialize":
            if "clientCapabilities" in params or "clientInfo" in params:
                return True
            # A v2-shaped request decides nothing: a v1 agent may answer it with version 1,
            # and the negotiated version is the one in the result.
            return None
        if method == "session/request_permission":
            if "toolCall" in params:
                return True
            return False if "title" in params or "subject" in params else None
        if method == "session/update" and isinstance(params.get("update"), dict):
            update = params["update"]
            kind = update.get("sessionUpdate")
            if kind in _V1_ONLY_UPDATES:
                return True
            if kind in _V2_ONLY_UPDATES:
                return False
            if kind in _CHUNKS:
                return not isinstance(update.get("messageId"), str) or None
        return None
    result = message.get("result")
    if direction != "incoming" or not isinstance(result, dict):
        return None
    if "protocolVersion" in result:
        if "agentCapabilities" in result or "agentInfo" in result:
            return True
        version = result["protocolVersion"]
        return True if version == 1 else False if version == 2 else None
    if "stopReason" in result and "messageId" not in result:
        return True
    if "messageId" in result and "stopReason" not in result:
        return False
    return None
