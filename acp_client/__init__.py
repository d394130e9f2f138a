"""acp_client: exact, fast client-side conversation state for the Agent Client Protocol v2.

Layers, each usable alone:

* decode — :class:`Decoder`, :func:`encode` and the Structs of :mod:`acp_client.schema`;
* reduce — :class:`Session`, the pure per-session reducer, and the events of
  :mod:`acp_client.events`;
* track — :class:`Connection`, the sans-IO connection (prompts, permissions, cancel, replay;
  v1 agents through :mod:`acp_client.v1`, switched to on its own);
* run — :mod:`acp_client.transport` (anyio: trio or asyncio, extra ``run``);
* replay — :func:`replay_log`, :func:`replay_many` (many logs on all cores),
  :func:`summarize_many` (a :class:`SessionSummary` per session of fleets of logs),
  :mod:`acp_client.logs` and the ``acp-client`` command;
* test — :mod:`acp_client.testing` (strategies: extra ``testing``).

The rules the code cites (``R8``, ``C21``, ``6.3`` ...) are in the repository's ``docs/``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:  # the names below are imported on first use (module ``__getattr__``)
    from . import events as events
    from . import schema as schema
    from . import view as view
    from ._codec import Decoder, convert, encode, to_builtins
    from ._connection import Connection, Direction, SentRequest
    from ._diagnostics import Diagnostic
    from ._entities import (
        CompactionState,
        ListView,
        MessageState,
        PlanState,
        Role,
        TerminalState,
        TimelineEntry,
        ToolCallState,
    )
    from ._errors import ACPError, LimitExceeded, LocalProtocolError, RemoteProtocolError
    from ._fleet import summarize_many
    from ._many import ReplayBatch, ReplayedLog, replay_many
    from ._prompts import PermissionState, PromptState
    from ._replay import FailedRequest, Replayer, ReplayResult, replay_log
    from ._session import Session
    from ._snapshot import FORMAT as SNAPSHOT_FORMAT
    from ._snapshot import load_session
    from ._summary import SessionSummary

# Where each public name lives: ``import acp_client`` imports none of these modules; the first
# use of a name imports its module (a decoder, the connection, the replayer ...), so an editor
# or a one-off command pays only for what it touches.
_LAZY: dict[str, tuple[str, str | None]] = {
    "events": (".events", None),
    "schema": (".schema", None),
    "view": (".view", None),
    "Decoder": ("._codec", "Decoder"),
    "convert": ("._codec", "convert"),
    "encode": ("._codec", "encode"),
    "to_builtins": ("._codec", "to_builtins"),
    "Connection": ("._connection", "Connection"),
    "Direction": ("._connection", "Direction"),
    "SentRequest": ("._connection", "SentRequest"),
    "Diagnostic": ("._diagnostics", "Diagnostic"),
    "CompactionState": ("._entities", "CompactionState"),
    "ListView": ("._entities", "ListView"),
    "MessageState": ("._entities", "MessageState"),
    "PlanState": ("._entities", "PlanState"),
    "Role": ("._entities", "Role"),
    "TerminalState": ("._entities", "TerminalState"),
    "TimelineEntry": ("._entities", "TimelineEntry"),
    "ToolCallState": ("._entities", "ToolCallState"),
    "ACPError": ("._errors", "ACPError"),
    "LimitExceeded": ("._errors", "LimitExceeded"),
    "LocalProtocolError": ("._errors", "LocalProtocolError"),
    "RemoteProtocolError": ("._errors", "RemoteProtocolError"),
    "ReplayBatch": ("._many", "ReplayBatch"),
    "ReplayedLog": ("._many", "ReplayedLog"),
    "replay_many": ("._many", "replay_many"),
    "PermissionState": ("._prompts", "PermissionState"),
    "PromptState": ("._prompts", "PromptState"),
    "FailedRequest": ("._replay", "FailedRequest"),
    "Replayer": ("._replay", "Replayer"),
    "ReplayResult": ("._replay", "ReplayResult"),
    "replay_log": ("._replay", "replay_log"),
    "Session": ("._session", "Session"),
    "SessionSummary": ("._summary", "SessionSummary"),
    "summarize_many": ("._fleet", "summarize_many"),
    "SNAPSHOT_FORMAT": ("._snapshot", "FORMAT"),
    "load_session": ("._snapshot", "load_session"),
}


def __getattr__(name: str) -> Any:
    """Import the module of a public name on its first use (PEP 562)."""
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'acp_client' has no attribute {name!r}") from None
    module = importlib.import_module(module_name, __name__)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value  # later uses are plain attribute reads
    return value


def __dir__() -> list[str]:
    """The public names, imported or not."""
    return sorted({*globals(), *_LAZY})


__all__ = [
    "SNAPSHOT_FORMAT",
    "ACPError",
    "CompactionState",
    "Connection",
    "Decoder",
    "Diagnostic",
    "Direction",
    "FailedRequest",
    "LimitExceeded",
    "ListView",
    "LocalProtocolError",
    "MessageState",
    "PermissionState",
    "PlanState",
    "PromptState",
    "RemoteProtocolError",
    "ReplayBatch",
    "ReplayResult",
    "ReplayedLog",
    "Replayer",
    "Role",
    "SentRequest",
    "Session",
    "SessionSummary",
    "TerminalState",
    "TimelineEntry",
    "ToolCallState",
    "__version__",
    "convert",
    "encode",
    "events",
    "load_session",
    "replay_log",
    "replay_many",
    "schema",
    "summarize_many",
    "to_builtins",
    "view",
]
