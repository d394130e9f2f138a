"""Writing the snapshot (format ``acp-client/snapshot@1``, SNAPSHOT.md) of one session.

:func:`session_snapshot` writes a session as plain data (dicts, lists, str, int, float,
bool, None), exactly as SNAPSHOT.md names and orders it, through the session's public
read access only (``_snapshot`` loads it back). Snapshots are taken on demand, never per
update. This module does not import the session: ``Session.snapshot`` calls it.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from msgspec import UNSET

from . import _schema as s
from ._codec import to_builtins
from ._entities import (
    CompactionState,
    CursorState,
    MessageState,
    PlanState,
    SessionMessageState,
    TerminalState,
    TimelineEntry,
    ToolCallState,
    stored_blocks,
)
from ._foreground import Foreground
from ._preview import Preview
from ._prompts import PermissionState, PromptState
from ._timeline import Timeline
from ._tree import Node
from ._updates import SNAPSHOT_KEYS

__all__ = ["FORMAT", "Readable", "entry_snapshot", "session_snapshot"]

FORMAT = "acp-client/snapshot@1"


class Readable(Protocol):
    """What the writer reads of a session: the public read access of ``Session``."""

    session_id: str
    announced: bool
    protocol_version: int | None
    closed: bool
    close_succeeded: bool
    available_commands: list[Any] | None
    config_options: list[Any] | None
    session_info: dict[str, Any] | None
    usage: dict[str, Any] | None
    prompts: list[PromptState]
    tree: Node
    preview: Preview

    def parts(self) -> tuple[Timeline, Foreground]: ...
    @property
    def state(self) -> s.StateUpdate | None: ...
    @property
    def completed_turns(self) -> Sequence[str | None]: ...
    @property
    def timeline(self) -> Sequence[TimelineEntry]: ...
    @property
    def terminals(self) -> Mapping[str, TerminalState]: ...
    @property
    def plans(self) -> Mapping[str, PlanState]: ...
    @property
    def notices(self) -> Sequence[Any]: ...
    @property
    def permission_requests(self) -> Sequence[PermissionState]: ...
    @property
    def unknown_updates(self) -> Sequence[dict[str, Any]]: ...
    @property
    def unretained(self) -> Sequence[TimelineEntry]: ...


_plain = to_builtins
_ENTRY_OWNED = ("excludedFromContext", "truncatedBlocks")  # keys an entry may lack


def _payload(obj: Any) -> Any:
    out = _plain(obj)
    if isinstance(out, dict):
        out.pop("sessionUpdate", None)
    return out


def _notice_payload(notice: Any) -> Any:
    """A stored notice without its nullable fields sent as ``null`` (SNAPSHOT.md: absent)."""
    out = _payload(notice)
    if isinstance(out, dict):
        for key in ("description", "_meta"):
            if key in out and out[key] is None:
                del out[key]
    return out


def _state_payload(state: Any) -> Any:
    """The stored state payload; a known state's fields cleared with ``null`` are absent.

    ``background`` and ``_meta`` always, and on ``idle`` a ``stopReason`` (and the ``error``
    of the ``error`` stop reason); a field of another variant, or of a custom state, is
    raw data and written as received.
    """
    out = _payload(state)
    if isinstance(out, dict) and out.get("state") in s._KNOWN_STATES:
        keys = ["background", "_meta"]
        if out["state"] == "idle":
            keys.append("stopReason")
            if out.get("stopReason") == "error":
                keys.append("error")
        for key in keys:
            if key in out and out[key] is None:
                del out[key]
    return out


def _put_extra(
    out: dict[str, Any], extra: dict[str, Any] | None, owned: tuple[str, ...] = ()
) -> None:
    """Spread unknown fields into ``out``; the snapshot's own keys (and ``owned``) win."""
    if extra:
        for key, value in extra.items():
            if key not in owned:
                out.setdefault(key, value)


def _blocks(content: list[Any]) -> list[Any]:
    """Message content as plain data (compactly stored text becomes a text block again)."""
    out: list[Any] = _plain(content)
    for index, item in enumerate(out):
        if type(item) is str:
            out[index] = {"type": "text", "text": item}
    return out


def entry_snapshot(entry: TimelineEntry) -> dict[str, Any]:
    """The MESSAGE, TOOL_CALL, COMPACTION or SESSION_MESSAGE object of one timeline entry."""
    out: dict[str, Any]
    if type(entry) is MessageState:
        out = {
            "entry": "message",
            "messageId": entry.message_id,
            "role": entry.role,
            "content": _blocks(stored_blocks(entry)),
        }
    elif type(entry) is ToolCallState:
        out = {"entry": "toolCall", "toolCallId": entry.tool_call_id}
        if entry.title is not None:
            out["title"] = entry.title
        if entry.name is not None:
            out["name"] = entry.name
        out["kind"] = entry.kind if entry.kind is not None else "other"
        out["status"] = entry.effective_status
        out["content"] = _plain(list(entry.content))
        out["locations"] = _plain(list(entry.locations))
        if entry.raw_input is not UNSET and entry.raw_input is not None:
            out["rawInput"] = entry.raw_input
        if entry.raw_output is not UNSET and entry.raw_output is not None:
            out["rawOutput"] = entry.raw_output
        if entry.capabilities is not None:
            out["capabilities"] = _plain(entry.capabilities)
    elif type(entry) is SessionMessageState:
        out = {"entry": "sessionMessage", "messageId": entry.message_id}
        for key, value in (
            ("senderSessionId", entry.sender_session_id),
            ("recipientSessionId", entry.recipient_session_id),
            ("senderMessageId", entry.sender_message_id),
            ("recipientMessageId", entry.recipient_message_id),
        ):
            if value is not None:
                out[key] = value
        out["content"] = _blocks(stored_blocks(entry))
    else:
        assert type(entry) is CompactionState
        out = {
            "entry": "compaction",
            "compactionId": entry.compaction_id,
            "status": entry.status,
            "summary": _plain(list(entry.summary)),
        }
        if entry.error is not None:
            out["error"] = entry.error
    if entry.truncated_blocks:  # written only when the block limit dropped some (issue 26)
        out["truncatedBlocks"] = entry.truncated_blocks
    if entry.meta:
        out["_meta"] = entry.meta
    _put_extra(out, entry.extra, _ENTRY_OWNED)  # written only when excluded, truncated
    if entry.excluded:
        out["excludedFromContext"] = True
    return out


def _terminal_snapshot(term: TerminalState) -> dict[str, Any]:
    out: dict[str, Any] = {"terminalId": term.terminal_id}
    if term.command is not None:
        out["command"] = term.command
    if term.cwd is not None:
        out["cwd"] = term.cwd
    out["output"] = base64.b64encode(term.output).decode("ascii")
    if term.exit_status is not None:
        out["exitStatus"] = _plain(term.exit_status)
    if term.size is not None:
        out["size"] = _plain(term.size)
    if term.capabilities is not None:
        out["capabilities"] = _plain(term.capabilities)
    if term.meta:
        out["_meta"] = term.meta
    _put_extra(out, term.extra, ("truncatedBytes",))
    out["truncatedBytes"] = term.truncated_bytes
    return out


def _prompt_snapshot(prompt: PromptState) -> dict[str, Any]:
    out: dict[str, Any] = {"requestId": prompt.request_id, "status": prompt.status}
    if prompt.message_id is not None and prompt.status == "accepted":
        out["messageId"] = prompt.message_id
    out["echoed"] = prompt.echoed
    if prompt.error is not None:
        out["error"] = _plain(prompt.error)
    if prompt.attempts is not None:  # ACP-V2-PREVIEW section 4: only for a keyed one
        out["idempotencyKey"] = prompt.idempotency_key
        out["attempts"] = [_plain(attempt.snapshot()) for attempt in prompt.attempts]
    return out


def _permission_snapshot(perm: PermissionState) -> dict[str, Any]:
    request = perm.request
    out: dict[str, Any] = {"requestId": perm.request_id}
    if isinstance(request, s.RequestPermissionRequest):
        out["title"] = request.title
        if isinstance(request.description, str):
            out["description"] = request.description
        options = _plain(request.options)
    else:
        raw = request if isinstance(request, dict) else {}
        if "title" in raw:
            out["title"] = raw["title"]
        if isinstance(raw.get("description"), str):
            out["description"] = raw["description"]
        options = raw.get("options", [])
    if perm.tool_call_id is not None:
        out["toolCallId"] = perm.tool_call_id
    out["status"] = perm.status
    if perm.outcome is not None:
        out["outcome"] = _plain(perm.outcome)
    out["options"] = options
    if isinstance(request, s.RequestPermissionRequest):
        # What is not understood stays: a subject of an unknown type (11.1: kept raw) and
        # unknown fields of the request, beside the PERMISSION object's own keys.
        if isinstance(request.subject, dict):
            out["subject"] = request.subject
        if request.extra:
            for key, value in request.extra.items():
                if key not in _PERMISSION_KEYS:
                    out.setdefault(key, value)
    return out


#: Keys of a PERMISSION object, also those it may lack (an unknown field never takes them).
_PERMISSION_KEYS = SNAPSHOT_KEYS["permission request"]


def session_snapshot(session: Readable) -> dict[str, Any]:
    """The SESSION object of SNAPSHOT.md (unknown fields not yet spread: see :func:`finish`)."""
    out: dict[str, Any] = {"sessionId": session.session_id, "announced": session.announced}
    if session.protocol_version is not None:
        out["protocolVersion"] = session.protocol_version
    if session.state is not None:
        out["state"] = _state_payload(session.state)
    if session.closed and session.close_succeeded:  # SNAPSHOT.md: after a session/close
        out["closed"] = True
    out["completedTurns"] = list(session.completed_turns)
    out["timeline"] = [entry_snapshot(entry) for entry in session.timeline]
    out["terminals"] = [_terminal_snapshot(term) for term in session.terminals.values()]
    out["plans"] = [
        {"planId": plan.plan_id, "plan": _plain(plan.plan)} for plan in session.plans.values()
    ]
    if session.available_commands is not None:
        out["availableCommands"] = _plain(session.available_commands)
    if session.config_options is not None:
        out["configOptions"] = _plain(session.config_options)
    if session.session_info is not None:
        info = session.session_info
        data: dict[str, Any] = {}
        for key in ("title", "updatedAt", "_meta"):
            if info.get(key) is not None:
                data[key] = info[key]
        _put_extra(data, info.get("extra"))
        out["sessionInfo"] = data
    if session.usage is not None:
        usage = session.usage
        data = {"used": usage["used"], "size": usage["size"]}
        if usage["cost"] is not None:
            data["cost"] = _plain(usage["cost"])
        if usage["_meta"] is not None:
            data["_meta"] = usage["_meta"]
        _put_extra(data, usage["extra"])
        out["usage"] = data
    out["notices"] = [_notice_payload(notice) for notice in session.notices]
    out["prompts"] = [_prompt_snapshot(prompt) for prompt in session.prompts]
    out["permissionRequests"] = [_permission_snapshot(p) for p in session.permission_requests]
    out["unknownUpdates"] = list(session.unknown_updates)
    out["unretained"] = [entry_snapshot(entry) for entry in session.unretained]
    _tree_keys(session.tree, out)
    _preview_keys(session, out)
    return out


def _preview_keys(session: Readable, out: dict[str, Any]) -> None:
    """The v2 Preview's opt-in SESSION keys, each absent when unused (docs/preview.md)."""
    suggestions = session.preview.suggestions
    if suggestions is not None:
        out["promptSuggestions"] = _plain(suggestions)
    tl, fg = session.parts()
    if tl.cursors_seen:
        out["cursors"] = [_cursor_snapshot(cursor) for cursor in tl.cursors.values()]
    if fg.last_known is not None and type(fg.state) is s.UnknownStateUpdate:
        out["lastKnownState"] = _state_payload(fg.last_known)


def _cursor_snapshot(cursor: CursorState) -> dict[str, Any]:
    out: dict[str, Any] = {"cursorId": cursor.cursor_id}
    if cursor.anchor is not None:
        out["anchor"] = _plain(cursor.anchor)
    if cursor.capabilities is not None:
        out["capabilities"] = cursor.capabilities
    if cursor.meta:
        out["_meta"] = cursor.meta
    _put_extra(out, cursor.extra)
    return out


def _tree_keys(node: Node, out: dict[str, Any]) -> None:
    """ACP-V2-PREVIEW section 4: the tree and replay keys, each absent when unused (X0)."""
    if node.parent_id is not None:
        out["parentSessionId"] = node.parent_id
        out["subagent"] = _plain(node.subagent or {})
    if node.children:
        out["children"] = list(node.children)
    if node.replay is not None and node.replay.shown:
        out["replay"] = node.replay.snapshot()
