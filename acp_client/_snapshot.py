"""The snapshot (format ``acp-client/snapshot@1``, SNAPSHOT.md): state out and back in.

``_snapshot_write`` writes one session as plain data, exactly as SNAPSHOT.md names and
orders it; :func:`load_session` here rebuilds a live :class:`~acp_client.Session` from it,
which then keeps applying updates to the same result as if it had never stopped. Loading
replays the entities as updates and restores the rest through the session's public
methods and its documented internal parts (``Session.parts``: the timeline's stores and
the foreground), never its private attributes.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from msgspec import UNSET

from . import _schema as s
from ._codec import convert
from ._diagnostics import Diagnostic
from ._entities import CursorState, TimelineEntry, restore_truncated
from ._errors import RemoteProtocolError
from ._prompts import Attempt, PermissionState, PromptState
from ._session import Session
from ._snapshot_write import FORMAT, entry_snapshot, session_snapshot
from ._tree import load_tree
from ._updates import SNAPSHOT_KEYS

__all__ = ["FORMAT", "entry_snapshot", "load_session", "session_snapshot"]

# ------------------------------------------------------------------------- loading

_ENTRY_KEYS = {"entry", "excludedFromContext", "truncatedBlocks"}


def _dropped_blocks(data: dict[str, Any]) -> int:
    """An entry's ``truncatedBlocks``: 0 when absent (issue 26)."""
    count = data.get("truncatedBlocks", 0)
    if type(count) is not int or count < 0:
        raise ValueError("truncatedBlocks: expected a whole number, 0 or more")
    return count


_MESSAGE_TAGS = {"user": "user_message", "agent": "agent_message", "thought": "agent_thought"}
#: What the writer writes as a terminal's ``output`` (RFC 4648 base64 with padding).
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


def _load_entry(session: Session, data: dict[str, Any]) -> TimelineEntry:
    kind = data.get("entry")
    body = {k: v for k, v in data.items() if k not in _ENTRY_KEYS}
    entry: TimelineEntry
    if kind == "message":
        role = body.pop("role", "agent")
        tag = _MESSAGE_TAGS.get(role) if isinstance(role, str) else None
        if tag is None:
            raise ValueError(f"role: expected 'user', 'agent' or 'thought', not {role!r}")
        update = convert({**body, "sessionUpdate": tag}, s.SessionUpdate)
        session.apply(update)
        entry = session.messages(role)[body["messageId"]]
    elif kind == "toolCall":
        update = convert({**body, "sessionUpdate": "tool_call_update"}, s.SessionUpdate)
        session.apply(update)
        entry = session.tool_calls[body["toolCallId"]]
    elif kind == "sessionMessage":
        update = convert({**body, "sessionUpdate": "session_message"}, s.SessionUpdate)
        session.apply(update)
        entry = session.parts()[0].session_messages[body["messageId"]]
    elif kind == "compaction":
        update = convert({**body, "sessionUpdate": "compaction_update"}, s.SessionUpdate)
        session.apply(update)
        entry = session.compactions[body["compactionId"]]
    else:
        raise ValueError(f"unknown timeline entry {kind!r}")
    entry.excluded = bool(data.get("excludedFromContext"))
    restore_truncated(entry, _dropped_blocks(data))
    return entry


def _load_attempts(prompt: PromptState, item: dict[str, Any]) -> None:
    """A keyed PROMPT's key and ATTEMPT objects (ACP-V2-PREVIEW section 4)."""
    key = item["idempotencyKey"]
    if not isinstance(key, str):
        raise TypeError("idempotencyKey: expected a string")
    prompt.keyed(key)
    prompt.attempts = []
    for data in item["attempts"]:
        attempt = Attempt(data["requestId"])
        attempt.status = data["status"]
        attempt.message_id = data.get("messageId")
        attempt.error = data.get("error")
        prompt.attempts.append(attempt)


def _load_preview(session: Session, data: dict[str, Any], where: list[str]) -> None:
    """The v2 Preview's opt-in keys: suggestions and cursors (docs/preview.md)."""
    where[0] = "promptSuggestions"
    if "promptSuggestions" in data:
        suggestions = convert(data["promptSuggestions"], list[s.PromptSuggestion])
        session.preview.suggestions = suggestions
    tl = session.parts()[0]
    where[0] = "cursors"
    if "cursors" in data:
        tl.cursors_seen = True
        for i, item in enumerate(data["cursors"]):
            where[0] = f"cursors[{i}]"
            cursor = CursorState(item["cursorId"], tl.ordinal)
            if "anchor" in item:
                cursor.anchor = convert(item["anchor"], s.CursorAnchor)
            cursor.capabilities = item.get("capabilities")
            cursor.meta = item.get("_meta")
            extra = {k: v for k, v in item.items() if k not in SNAPSHOT_KEYS["cursor"]}
            cursor.extra = extra or None
            tl.cursors[cursor.cursor_id] = cursor


def load_session(
    data: dict[str, Any],
    *,
    terminal_limit: int | None = None,
    block_limit: int | None = None,
    unstable: Collection[str] = (),
    diagnostics: list[Diagnostic] | None = None,
) -> Session:
    """Rebuild a live session from its SESSION snapshot object.

    ``terminal_limit`` and ``block_limit``: the rebuilt session's retention limits (as
    ``Session``'s); the counts of what they dropped (``truncatedBytes``,
    ``truncatedBlocks``) come back with the entities.
    ``unstable``: the opt-in features the rebuilt session applies from then on (as
    ``Session``'s); the snapshot's own opt-in keys are loaded back either way.
    ``diagnostics``: the list the rebuilt session appends its diagnostics to (as
    ``Session``'s); rebuilding itself adds none to it.

    Raises:
        ValueError: ``data`` is not a SESSION object of ``acp-client/snapshot@1`` (a missing
            or malformed field); the message names where, as ``timeline[3]``, say.
    """
    where = ["sessionId"]
    sink = diagnostics if diagnostics is not None else []
    start = len(sink)
    try:
        limits = (terminal_limit, block_limit)
        return _load(data, limits, where, frozenset(unstable), sink)
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
    finally:
        del sink[start:]  # what the rebuild found was found when the state was made


def _load(
    data: dict[str, Any],
    limits: tuple[int | None, int | None],
    where: list[str],
    unstable: frozenset[str],
    diagnostics: list[Diagnostic],
) -> Session:
    """:func:`load_session`, keeping in ``where`` the field it is reading."""
    if not isinstance(data, dict) or not isinstance(data.get("sessionId"), str):
        raise TypeError("expected a string")
    session = Session(
        data["sessionId"],
        announced=bool(data.get("announced")),
        terminal_limit=limits[0],
        block_limit=limits[1],
        unstable=unstable,
        diagnostics=diagnostics,
    )
    session.protocol_version = data.get("protocolVersion")
    where[0] = "parentSessionId"
    load_tree(session.tree, data)
    tl, fg = session.parts()
    where[0] = "terminals"
    for i, item in enumerate(data.get("terminals", [])):
        where[0] = f"terminals[{i}]"
        body = {k: v for k, v in item.items() if k not in ("output", "truncatedBytes")}
        output = item.get("output", "")
        if not isinstance(output, str) or not _BASE64.fullmatch(output):
            # a terminal update would decode it leniently, with a diagnostic the load drops
            raise ValueError("output: expected standard base64 with padding")
        body["output"] = {"data": output}
        session.apply(convert({**body, "sessionUpdate": "terminal_update"}, s.SessionUpdate))
        restore_truncated(tl.terminals[item["terminalId"]], int(item.get("truncatedBytes", 0)))
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
        tl.notices.append(convert({**item, "sessionUpdate": "notice"}, s.SessionUpdate))
    where[0] = "unknownUpdates"
    tl.unknown = list(data.get("unknownUpdates", []))
    tl.notice_ordinals = [tl.ordinal] * len(tl.notices)
    tl.unknown_ordinals = [tl.ordinal] * len(tl.unknown)
    where[0] = "state"
    if "state" in data:
        state = {**data["state"], "sessionUpdate": "state_update"}
        fg.state = convert(state, s.SessionUpdate)
        if "lastKnownState" in data:  # the opt-in `unknown` state and what it replaced (P32)
            where[0] = "lastKnownState"
            fg.state = convert(state, s.UnknownStateUpdate)
            last = {**data["lastKnownState"], "sessionUpdate": "state_update"}
            fg.last_known = convert(last, s.SessionUpdate)
        background = fg.state.background if fg.state is not None else UNSET
        if isinstance(background, list):
            fg.background = background
            fg.background_reported = True
        known = fg.last_known if fg.last_known is not None else fg.state
        if known is not None and known.state in ("running", "requires_action"):
            fg.work_start = 0
    where[0] = "completedTurns"
    fg.completed = list(data.get("completedTurns", []))
    fg.completed_at = [0] * len(fg.completed)  # all before what comes next
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
        if "idempotencyKey" in item:
            _load_attempts(prompt, item)
        message_id = item.get("messageId")
        session.add_prompt(prompt)
        if isinstance(message_id, str):
            session.link_prompt(prompt, message_id, restored=True)
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
        tl.unretained.append(_load_entry(Session(session.session_id), item))
    _load_preview(session, data, where)
    where[0] = "$"
    fg.settle_turn_start()
    session.side_events.clear()  # rebuilding the state is no news
    if session.state is None:
        # No state_update was ever applied: live, no idle has ended anything, so the
        # current work spans the whole timeline (a refusal marks from its first user
        # message, R14). Only a replay the agent ended without its state snapshot (a
        # diagnostic, 12.3) differs, and a snapshot does not say whether one happened.
        fg.turn_start = 0
    return session
