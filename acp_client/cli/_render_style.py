"""The renderer's styles and the spec's display vocabulary (no rich needed to import).

Owns: the style of each role (spec 4), tool call status and the known tool kinds (7.3,
7.4), plan entry status and priority (9.1), notice severity (9.6), compaction status
(9.5) and the note shown for each stop reason (6.2).
"""

from __future__ import annotations

from .._schema import TOOL_KINDS

_ROLE_STYLE = {"user": "bold green", "agent": "bold blue", "thought": "bold magenta"}
_TOOL_STATUS_STYLE = {
    "pending": "yellow",
    "in_progress": "cyan",
    "paused": "yellow",
    "completed": "green",
    "failed": "bold red",
    "cancelled": "red",
}
_TOOL_KINDS = frozenset(TOOL_KINDS)
"""The tool kinds the spec names (7.3); the view shows any other kind as ``other``."""
_PLAN_STATUS = {
    "pending": ("○", "yellow"),
    "in_progress": ("◐", "cyan"),
    "completed": ("●", "green"),
    "cancelled": ("✗", "red"),
}
_PRIORITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}
_SEVERITY_STYLE = {"info": "cyan", "warning": "yellow", "error": "bold red"}
# a compaction's statuses are styled as the tool call statuses of the same name
_COMPACTION_STYLE = {
    status: _TOOL_STATUS_STYLE[status]
    for status in ("in_progress", "completed", "failed", "cancelled")
}
_STOP_REASON_NOTE = {
    "end_turn": "",
    "max_tokens": "token limit reached",
    "max_turn_requests": "model request limit reached",
    "refusal": "the agent refused",
    "cancelled": "stopped by the user or client",
}
