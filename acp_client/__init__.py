"""acp_client: exact, fast client-side conversation state for the Agent Client Protocol v2.

Layers, each usable alone:

* decode — :class:`Decoder`, :func:`encode` and the Structs of :mod:`acp_client.schema`;
* reduce — :class:`Session`, the pure per-session reducer, and the events of
  :mod:`acp_client.events`;
* track — :class:`Connection`, the sans-IO connection (prompts, permissions, cancel, replay;
  v1 agents through :mod:`acp_client.v1`, switched to on its own);
* run — :mod:`acp_client.transport` (trio, extra ``run``);
* replay — :func:`replay_log`, :mod:`acp_client.logs` and the ``acp-client`` command;
* test — :mod:`acp_client.testing` (strategies: extra ``testing``).

The rules the code cites (``R8``, ``C21``, ``6.3`` ...) are in the repository's ``docs/``.
"""

from __future__ import annotations

from . import events as events
from . import schema as schema
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
from ._prompts import PermissionState, PromptState
from ._replay import FailedRequest, Replayer, ReplayResult, replay_log
from ._session import Session
from ._snapshot import FORMAT as SNAPSHOT_FORMAT
from ._snapshot import load_session
from ._version import __version__

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
    "ReplayResult",
    "Replayer",
    "Role",
    "SentRequest",
    "Session",
    "TerminalState",
    "TimelineEntry",
    "ToolCallState",
    "__version__",
    "convert",
    "encode",
    "events",
    "load_session",
    "replay_log",
    "schema",
    "to_builtins",
]
