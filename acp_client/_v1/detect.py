# Implements V1-TO-V2.md section 1.3 (detecting a v1 stream) for the replay driver, which picks
# the v1 adapter or the plain v2 pipeline from the first message that decides.
"""Tell ACP v1 traffic from v2 traffic, one JSON-RPC object at a time."""

from __future__ import annotations

from typing import Any

__all__ = ["detect_v1", "v1_hint"]

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
            # The request decides nothing: the negotiated version is the one in the result
            # (a client may offer v1 field names and still speak v2). Its v1 capability names
            # are a hint for a log without the result: see :func:`v1_hint`.
            return None
        if method == "session/request_permission":
            if "toolCall" in params:
                return True
            return False if "title" in params or "subject" in params else None
        if method == "session/update" and isinstance(params.get("update"), dict):
            update = params["update"]
            kind = update.get("sessionUpdate")
            if not isinstance(kind, str):
                return None  # no update of either version
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
        version = result["protocolVersion"]
        if version == 1 or version == 2:
            return bool(version == 1)  # the handshake decides (1.3), whatever the field names
        if "agentCapabilities" in result or "agentInfo" in result:
            return True
        return None
    if "stopReason" in result and "messageId" not in result:
        return True
    if "messageId" in result and "stopReason" not in result:
        return False
    return None


def v1_hint(direction: str, message: Any) -> bool:
    """Whether an ``initialize`` request uses v1 capability field names (V1-TO-V2.md 1.3).

    Only a hint: it marks the stream v1 when no ``initialize`` result (nor another marker)
    decides.
    """
    if direction != "outgoing" or not isinstance(message, dict):
        return False
    params = message.get("params")
    return (
        message.get("method") == "initialize"
        and isinstance(params, dict)
        and ("clientCapabilities" in params or "clientInfo" in params)
    )
