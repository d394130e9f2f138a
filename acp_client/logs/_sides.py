"""Which side sends each ACP method, and which results each method can produce.

Implements LOG-FORMATS.md section 1.9: the method-side table (union of the v1, v2 and unstable
v2 schemas plus the draft methods) and the result signatures used to guess which request a
success response answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

__all__ = [
    "METHOD_SIDES",
    "RESULT_SIGNATURES",
    "Direction",
    "Side",
    "SideTable",
    "claimed_directions",
    "fits",
    "make_side_table",
]

Side: TypeAlias = Literal["agent", "client", "either"]
"""``agent``: the Agent implements it, the client sends it (``outgoing``); ``client``: the
client implements it, the Agent sends it (``incoming``); ``either``: both sides send it."""

Direction: TypeAlias = Literal["incoming", "outgoing", "unknown"]

_CLIENT_SENT = (
    "initialize",
    "authenticate",
    "logout",
    "auth/login",
    "auth/logout",
    "auth/status",
    "session/new",
    "session/load",
    "session/resume",
    "session/list",
    "session/close",
    "session/delete",
    "session/fork",
    "session/prompt",
    "session/cancel",
    "session/set_mode",
    "session/set_config_option",
    "session/set_title",
    "session/status",
    "session/archive",
    "session/unarchive",
    "providers/list",
    "providers/set",
    "providers/disable",
    "terminal/cancel",
    "tool_call/cancel",
    "document/didOpen",
    "document/didChange",
    "document/didClose",
    "document/didFocus",
    "document/didSave",
    "nes/start",
    "nes/suggest",
    "nes/close",
    "nes/accept",
    "nes/reject",
)
_AGENT_SENT = (
    "session/update",
    "session/request_permission",
    "elicitation/create",
    "elicitation/complete",
    "fs/read_text_file",
    "fs/write_text_file",
    "terminal/create",
    "terminal/output",
    "terminal/release",
    "terminal/wait_for_exit",
    "terminal/kill",
    "auth/status_update",
    "mcp/connect",
    "mcp/disconnect",
)
_EITHER = (
    "$/cancel_request",
    "mcp/message",
    "proxy/initialize",
    "proxy/successor",
    "_proxy/initialize",
    "_proxy/successor",
)

METHOD_SIDES: Mapping[str, Side] = MappingProxyType(
    {
        **{m: "agent" for m in _CLIENT_SENT},
        **{m: "client" for m in _AGENT_SENT},
        **{m: "either" for m in _EITHER},
    }
)
"""Method name -> ``x-side`` (LOG-FORMATS.md 1.9): ``"agent"`` methods are sent by the client
(direction ``outgoing``), ``"client"`` methods by the Agent (``incoming``), ``"either"`` by both.
Methods not listed (including every ``_``-prefixed extension method) have no side."""

RESULT_SIGNATURES: Mapping[str, tuple[frozenset[str], ...]] = MappingProxyType(
    {
        "initialize": (frozenset({"protocolVersion"}),),
        "session/new": (frozenset({"sessionId"}),),
        "session/fork": (frozenset({"sessionId"}),),
        "session/prompt": (frozenset({"stopReason"}), frozenset({"messageId"})),
        "session/list": (frozenset({"sessions"}),),
        "session/set_config_option": (frozenset({"configOptions"}),),
        "session/set_title": (frozenset({"title"}),),
        "session/status": (frozenset({"status"}),),
        "auth/status": (frozenset({"state"}),),
        "providers/list": (frozenset({"providers"}),),
        "session/request_permission": (frozenset({"outcome"}),),
        "elicitation/create": (frozenset({"action"}),),
        "fs/read_text_file": (frozenset({"content"}),),
        "terminal/create": (frozenset({"terminalId"}),),
        "terminal/output": (frozenset({"output", "truncated"}),),
    }
)
"""Method name -> its alternative sets of required result keys (LOG-FORMATS.md 1.9)."""

SideTable: TypeAlias = Mapping[str, Direction]
"""Method -> the direction its requests and notifications travel in (``unknown`` = either)."""

_DIRECTION_OF_SIDE: dict[str, Direction] = {
    "agent": "outgoing",
    "client": "incoming",
    "either": "unknown",
}


def make_side_table(overrides: Mapping[str, str] | None) -> dict[str, Direction]:
    """Build the method -> direction table, applying ``--side METHOD=agent|client`` overrides.

    Raises:
        ValueError: an override names a side other than ``agent`` or ``client``.
    """
    table = {method: _DIRECTION_OF_SIDE[side] for method, side in METHOD_SIDES.items()}
    for method, side in (overrides or {}).items():
        if side not in ("agent", "client"):
            raise ValueError(f"side of {method!r} must be 'agent' or 'client', not {side!r}")
        table[method] = _DIRECTION_OF_SIDE[side]
    return table


def fits(method: str, result: Any) -> bool:
    """Whether ``method`` fits a result: an object with every key of one required-key set.

    A method without a signature fits every object result; nothing fits a non-object.
    """
    if type(result) is not dict:
        return False
    signatures = RESULT_SIGNATURES.get(method)
    if signatures is None:
        return True
    return any(keys <= result.keys() for keys in signatures)


def claimed_directions(result: Any, sides: SideTable) -> set[Direction]:
    """Directions of the requests whose methods *claim* ``result`` (listed and fitting)."""
    if type(result) is not dict:
        return set()
    keys = result.keys()
    found: set[Direction] = set()
    for method, signatures in RESULT_SIGNATURES.items():
        if any(required <= keys for required in signatures):
            found.add(sides.get(method, "unknown"))
    return found
