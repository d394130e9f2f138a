"""acp_client: exact, fast client-side conversation state for the Agent Client Protocol v2.

Layers, each usable alone:

* decode — :class:`Decoder`, :func:`encode` and the Structs of :mod:`acp_client.schema`;
* reduce — :class:`Session`, the pure per-session reducer, and its events;
* track — :class:`Connection`, the sans-IO connection (prompts, permissions, cancel, replay);
* run — :mod:`acp_client.transport` (trio, extra ``run``);
* replay — :mod:`acp_client.logs` and the ``acp-client`` command;
* test — :mod:`acp_client.testing` (strategies: extra ``testing``).
"""

from __future__ import annotations

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
from ._errors import ACPError, LocalProtocolError, RemoteProtocolError
from ._events import (
    AgentRequestReceived,
    AvailableCommandsUpdated,
    CancelRequested,
    CompactionChunkAppended,
    CompactionUpserted,
    ConfigOptionsUpdated,
    Event,
    InvalidMessageReceived,
    MessageChunkAppended,
    MessageUpserted,
    NoticeReceived,
    PermissionAnswered,
    PermissionRequested,
    PermissionWithdrawn,
    PlanUpdated,
    PromptAccepted,
    PromptEchoed,
    PromptRejected,
    PromptSent,
    ReplayFinished,
    ReplayStarted,
    ResponseReceived,
    SessionAnnounced,
    SessionClosed,
    SessionCreated,
    SessionInfoUpdated,
    StateChanged,
    TerminalOutputAppended,
    TerminalUpserted,
    ToolCallChunkAppended,
    ToolCallUpserted,
    UnknownUpdateReceived,
    UnmatchedResponseReceived,
    UpdateRejected,
    UsageUpdated,
)
from ._prompts import PermissionState, PromptState
from ._replay import AdapterOrigin, FailedRequest, Replayer, ReplayResult, replay_log
from ._session import Session
from ._snapshot import FORMAT as SNAPSHOT_FORMAT
from ._snapshot import load_session
from .v1 import V1Adapter, detect_v1

__version__ = "0.1.0"

__all__ = [
    "SNAPSHOT_FORMAT",
    "ACPError",
    "AdapterOrigin",
    "AgentRequestReceived",
    "AvailableCommandsUpdated",
    "CancelRequested",
    "CompactionChunkAppended",
    "CompactionState",
    "CompactionUpserted",
    "ConfigOptionsUpdated",
    "Connection",
    "Decoder",
    "Diagnostic",
    "Direction",
    "Event",
    "FailedRequest",
    "InvalidMessageReceived",
    "ListView",
    "LocalProtocolError",
    "MessageChunkAppended",
    "MessageState",
    "MessageUpserted",
    "NoticeReceived",
    "PermissionAnswered",
    "PermissionRequested",
    "PermissionState",
    "PermissionWithdrawn",
    "PlanState",
    "PlanUpdated",
    "PromptAccepted",
    "PromptEchoed",
    "PromptRejected",
    "PromptSent",
    "PromptState",
    "RemoteProtocolError",
    "ReplayFinished",
    "ReplayResult",
    "Replayer",
    "ReplayStarted",
    "ResponseReceived",
    "Role",
    "SentRequest",
    "Session",
    "SessionAnnounced",
    "SessionClosed",
    "SessionCreated",
    "SessionInfoUpdated",
    "StateChanged",
    "TerminalOutputAppended",
    "TerminalState",
    "TerminalUpserted",
    "TimelineEntry",
    "ToolCallChunkAppended",
    "ToolCallState",
    "ToolCallUpserted",
    "UnknownUpdateReceived",
    "UnmatchedResponseReceived",
    "UpdateRejected",
    "UsageUpdated",
    "V1Adapter",
    "__version__",
    "convert",
    "detect_v1",
    "encode",
    "load_session",
    "replay_log",
    "to_builtins",
]
