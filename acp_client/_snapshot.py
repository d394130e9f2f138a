"""The snapshot (format ``acp-client/snapshot@1``, SNAPSHOT.md): state out and back in.

:func:`session_snapshot` writes one session as plain data (dicts, lists, str, int, float,
bool, None), exactly as SNAPSHOT.md names and orders it; :func:`load_session` rebuilds a
live :class:`~acp_client.Session` from it, which then keeps applying updates to the same
result as if it had never stopped. Snapshots are taken on demand, never per update.
"""

from __future__ import annotations

import base64
from typing import Any

from msgspec import UNSET

from . import _schema as s
from ._codec import convert, to_builtins
from ._entities import CompactionState, MessageState, TerminalState, TimelineEntry, ToolCallState
from ._errors import RemoteProtocolError
from ._prompts import PermissionState, PromptState
from ._session import _SNAPSHOT_KEYS, Session

__all__ = ["FORMAT", "load_session", "session_snapshot"]

FORMAT = "acp-client/snapshot@1"
_plain = to_builtins


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


def _put_extra(out: dict[str, Any], extra: dict[str, Any] | None, owned: str = "") -> None:
    """Spread unknown fields into ``out``; the snapshot's own keys (and ``owned``) win."""
    if extra:
        for key, value in extra.items():
            if key != owned:
                out.setdefault(key, value)


def _blocks(content: list[Any]) -> list[Any]:
    """Message content as plain data (compactly stored text becomes a text block again)."""
    out: list[Any] = _plain(content)
    for index, item in enumerate(out):
        if type(item) is str:
            out[index] = {"type": "text", "text": item}
    return out


def entry_snapshot(entry: TimelineEntry) -> dict[str, Any]:
    """The MESSAGE, TOOL_CALL or COMPACTION object of one timeline entry."""
    out: dict[str, Any]
    if type(entry) is MessageState:
        out = {
            "entry": "message",
            "messageId": entry.message_id,
            "role": entry.role,
            "content": _blocks(entry._content),
        }
    elif type(entry) is ToolCallState:
        out = {"entry": "toolCall", "toolCallId": entry.tool_call_id}
        if entry.title is not None:
            out["title"] = entry.title
        if entry.name is not None:
            out["name"] = entry.name
        out["kind"] = entry.kind if entry.kind is not None else "other"
        out["status"] = entry.effective_status
        out["content"] = _plain(entry._content)
        out["locations"] = _plain(entry._locations)
        if entry.raw_input is not UNSET and entry.raw_input is not None:
            out["rawInput"] = entry.raw_input
        if entry.raw_output is not UNSET and entry.raw_output is not None:
            out["rawOutput"] = entry.raw_output
        if entry.capabilities is not None:
            out["capabilities"] = _plain(entry.capabilities)
    else:
        assert type(entry) is CompactionState
        out = {
            "entry": "compaction",
            "compactionId": entry.compaction_id,
            "status": entry.status,
            "summary": _plain(entry._summary),
        }
        if entry.error is not None:
            out["error"] = entry.error
    if entry.meta:
        out["_meta"] = entry.meta
    _put_extra(out, entry.extra, "excludedFromContext")  # written only when excluded
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
    _put_extra(out, term.extra, "truncatedBytes")
    out["truncatedBytes"] = term.truncated_bytes
    return out


def _prompt_snapshot(prompt: PromptState) -> dict[str, Any]:
    out: dict[str, Any] = {"requestId": prompt.request_id, "status": prompt.status}
    if prompt.message_id is not None and prompt.status == "accepted":
        out["messageId"] = prompt.message_id
    out["echoed"] = prompt.echoed
    if prompt.error is not None:
        out["error"] = _plain(prompt.error)
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
_PERMISSION_KEYS = _SNAPSHOT_KEYS["permission request"]


def session_snapshot(session: Session) -> dict[str, Any]:
    """The SESSION object of SNAPSHOT.md (unknown fields not yet spread: see :func:`finish`)."""
    out: dict[str, Any] = {"sessionId": session.session_id, "announced": session.announced}
    if session.protocol_version is not None:
        out["protocolVersion"] = session.protocol_version
    if session.state is not None:
        out["state"] = _state_payload(session.state)
    if session.closed and session.close_succeeded:  # SNAPSHOT.md: after a session/close
        out["closed"] = True
    out["completedTurns"] = list(session._completed)
    out["timeline"] = [entry_snapshot(entry) for entry in session._timeline]
    out["terminals"] = [_terminal_snapshot(term) for term in session._terminals.values()]
    out["plans"] = [
        {"planId": plan.plan_id, "plan": _plain(plan.plan)} for plan in session._plans.values()
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
    out["notices"] = [_notice_payload(notice) for notice in session._notices]
    out["prompts"] = [_prompt_snapshot(prompt) for prompt in session.prompts]
    out["permissionRequests"] = [_permission_snapshot(p) for p in session._permission_log]
    out["unknownUpdates"] = list(session._unknown)
    out["unretained"] = [entry_snapshot(entry) for entry in session._unretained]
    return out


# ------------------------------------------------------------------------- loading

_ENTRY_KEYS = {"entry", "excludedFromContext"}


def _load_entry(session: Session, data: dict[str, Any]) -> TimelineEntry:
    kind = data.get("entry")
    body = {k: v for k, v in data.items() if k not in _ENTRY_KEYS}
    entry: TimelineEntry
    if kind == "message":
        role = body.pop("role", "agent")
        tag = {"user": "user_message", "agent": "agent_message", "thought": "agent_thought"}[role]
        update = convert({**body, "sessionUpdate": tag}, s.SessionUpdate)
        session.apply(update)
        entry = session._messages[role][body["messageId"]]
    elif kind == "toolCall":
        update = convert({**body, "sessionUpdate": "tool_call_update"}, s.SessionUpdate)
        session.apply(update)
        entry = session._tool_calls[body["toolCallId"]]
    elif kind == "compaction":
        update = convert({**body, "sessionUpdate": "compaction_update"}, s.SessionUpdate)
        session.apply(update)
        entry = session._compactions[body["compactionId"]]
    else:
        raise ValueError(f"unknown timeline entry {kind!r}")
    entry.excluded = bool(data.get("excludedFromContext"))
    return entry


def load_session(data: dict[str, Any], *, terminal_limit: int | None = None) -> Session:
    """Rebuild a live session from its SESSION snapshot object.

    Raises:
        ValueError: ``data`` is not a SESSION object of ``acp-client/snapshot@1`` (a missing
            or malformed field); the message names where, as ``timeline[3]``, say.
    """
    where = ["sessionId"]
    try:
        return _load(data, terminal_limit, where)
    except (
        KeyError,
        TypeError,
        AttributeError,
        ValueError,
        OverflowError,
        UnicodeEncodeError,
        RecursionError,
        RemoteProtocolError,
    ) as exc:
        detail = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        raise ValueError(f"not a snapshot@1 SESSION object: at `{where[0]}`: {detail}") from exc


def _load(data: dict[str, Any], terminal_limit: int | None, where: list[str]) -> Session:
    """:func:`load_session`, keeping in ``where`` the field it is reading."""
    if not isinstance(data.get("sessionId"), str):
        raise TypeError("expected a string")
    session = Session(
        data["sessionId"], announced=bool(data.get("announced")), terminal_limit=terminal_limit
    )
    session.protocol_version = data.get("protocolVersion")
    where[0] = "terminals"
    for i, item in enumerate(data.get("terminals", [])):
        where[0] = f"terminals[{i}]"
        body = {k: v for k, v in item.items() if k not in ("output", "truncatedBytes")}
        body["output"] = {"data": item.get("output", "")}
        session.apply(convert({**body, "sessionUpdate": "terminal_update"}, s.SessionUpdate))
        session._terminals[item["terminalId"]]._dropped = int(item.get("truncatedBytes", 0))
    where[0] = "timeline"
    for i, item in enumerate(data.get("timeline", [])):
        where[0] = f"timeline[{i}]"
        _load_entry(session, item)
    where[0] = "plans"
    for i, item in enumerate(data.get("plans", [])):
        where[0] = f"plans[{i}]"
        session.apply(
            convert({"sessionUpdate": "plan_update", "plan": item["plan"]}, s.SessionUpdate)
        )
    where[0] = "availableCommands"
    if "availableCommands" in data:
        session.available_commands = convert(data["availableCommands"], list[s.AvailableCommand])
    where[0] = "configOptions"
    if "configOptions" in data:
        session.config_options = convert(data["configOptions"], list[s.SessionConfigOption])
    where[0] = "sessionInfo"
    if "sessionInfo" in data:
        session.apply(
            convert(
                {**data["sessionInfo"], "sessionUpdate": "session_info_update"}, s.SessionUpdate
            )
        )
    where[0] = "usage"
    if "usage" in data:
        session.apply(convert({**data["usage"], "sessionUpdate": "usage_update"}, s.SessionUpdate))
    # A snapshot keeps no ordinals: its notices and unknown updates are placed where the load
    # has come to (after every entity), in their order.
    where[0] = "notices"
    for i, item in enumerate(data.get("notices", [])):
        where[0] = f"notices[{i}]"
        session._notices.append(convert({**item, "sessionUpdate": "notice"}, s.SessionUpdate))
    where[0] = "unknownUpdates"
    session._unknown = list(data.get("unknownUpdates", []))
    session._notice_ordinals = [session._ordinal] * len(session._notices)
    session._unknown_ordinals = [session._ordinal] * len(session._unknown)
    where[0] = "state"
    if "state" in data:
        session.state = convert({**data["state"], "sessionUpdate": "state_update"}, s.SessionUpdate)
        background = session.state.background if session.state is not None else UNSET
        if isinstance(background, list):
            session.background = background
            session._background_reported = True
        if session.state is not None and session.state.state in ("running", "requires_action"):
            session._work_start = 0
    where[0] = "completedTurns"
    session._completed = list(data.get("completedTurns", []))
    session._completed_at = [0] * len(session._completed)  # all before what comes next
    session.closed = session.close_succeeded = bool(data.get("closed"))
    if session.closed:
        session.lifecycle = "closed"
    where[0] = "prompts"
    for i, item in enumerate(data.get("prompts", [])):
        where[0] = f"prompts[{i}]"
        prompt = PromptState(item["requestId"], session.session_id, None)
        prompt.status = item.get("status", "pending")
        prompt.echoed = bool(item.get("echoed"))
        prompt.error = item.get("error")
        message_id = item.get("messageId")
        session.add_prompt(prompt)
        if isinstance(message_id, str):
            prompt.message_id = message_id
            session.prompts_by_message.setdefault(message_id, prompt)
            if not prompt.echoed:
                session._awaiting_echo.setdefault(message_id, []).append(prompt)
    where[0] = "permissionRequests"
    for i, item in enumerate(data.get("permissionRequests", [])):
        where[0] = f"permissionRequests[{i}]"
        # the request's own fields, an unknown subject and unknown fields (what the
        # snapshot writer kept of it); the rest is the PERMISSION object's
        owned = ("requestId", "toolCallId", "status", "outcome")
        raw = {k: v for k, v in item.items() if k not in owned}
        raw["sessionId"] = session.session_id
        try:
            request: Any = convert(raw, s.RequestPermissionRequest)
        except Exception:
            request = raw
        perm = PermissionState(
            item["requestId"], session.session_id, request, item.get("toolCallId")
        )
        perm.status = item.get("status", "pending")
        perm.outcome = item.get("outcome")
        session.add_permission(perm)
    where[0] = "unretained"
    for i, item in enumerate(data.get("unretained") or []):
        where[0] = f"unretained[{i}]"
        # each on its own: two replays can leave two entries of one id here
        session._unretained.append(_load_entry(Session(session.session_id), item))
    where[0] = "$"
    session._settle_turn_start()
    session.side_events.clear()  # rebuilding the state is no news
    if session.state is None:
        # No state_update was ever applied: live, no idle has ended anything, so the
        # current work spans the whole timeline (a refusal marks from its first user
        # message, R14). Only a replay the agent ended without its state snapshot (a
        # diagnostic, 12.3) differs, and a snapshot does not say whether one happened.
        session._turn_start_index = 0
    return session
