"""ReferenceModel: a deliberately simple reading of the client-state rules.

Theory of operation
-------------------
This module is the *independent reference* for acp_client's reducer. It keeps the
whole reconciled state in plain dicts and lists, takes one JSON-RPC message (a dict,
or a batch list) at a time together with its direction, and produces the snapshot of
SNAPSHOT.md (``acp-client/snapshot@1``). It runs in passive mode only (spec section
2.4): prompts, cancels and permission answers are read from the outgoing side of the
log, never generated.

It is written for checking, not for speed: every rule is a few lines that can be read
against ACP-V2-CLIENT-STATE.md ("the spec"); the comments name the section. Where the
spec leaves a choice, the comment says which reading is taken. Nothing here is shared
with the real reducer (``acp_client._session`` / ``acp_client._connection``).

What it does not do: it records no diagnostics (``snapshot()["diagnostics"]`` is always
``[]``), it handles no v1 traffic, no draft (unstable) features and no elicitation state,
and its lenient decoding covers the annotations that are simple to check on dicts
(wrong-typed default-on-error fields, invalid items of skip-invalid-items arrays).
"""

from __future__ import annotations

import base64
import binascii
import copy
import math
from dataclasses import dataclass, field
from typing import Any, TypeGuard

__all__ = ["ReferenceModel"]

SNAPSHOT_FORMAT = "acp-client/snapshot@1"

# Spec section 3: the nineteen known `sessionUpdate` values.
UPDATE_KINDS = (
    "user_message_chunk",
    "user_message",
    "agent_message_chunk",
    "agent_message",
    "agent_thought_chunk",
    "agent_thought",
    "state_update",
    "tool_call_content_chunk",
    "tool_call_update",
    "terminal_update",
    "terminal_output_chunk",
    "plan_update",
    "available_commands_update",
    "config_option_update",
    "session_info_update",
    "usage_update",
    "notice",
    "compaction_update",
    "compaction_summary_chunk",
)
"""The nineteen known ``sessionUpdate`` values (spec section 3), in the spec's order."""
KNOWN_UPDATES = frozenset(UPDATE_KINDS)

_ROLE_OF_UPDATE = {
    "user_message_chunk": "user",
    "user_message": "user",
    "agent_message_chunk": "agent",
    "agent_message": "agent",
    "agent_thought_chunk": "thought",
    "agent_thought": "thought",
}

# Spec section 7.4: finished tool call statuses; anything else is not finished (R16).
_FINISHED = frozenset({"completed", "failed", "cancelled"})
_UINT64_MAX = 2**64 - 1
_KNOWN_STATES = frozenset({"running", "idle", "requires_action"})

# Keys of the patch payloads that have a meaning; every other key is an unknown field,
# kept on the entity with the PATCH rule (spec 13.2).
_MESSAGE_KEYS = frozenset({"sessionUpdate", "messageId", "content", "_meta"})
_TOOL_CALL_KEYS = frozenset(
    {
        "sessionUpdate",
        "toolCallId",
        "title",
        "name",
        "kind",
        "status",
        "content",
        "locations",
        "rawInput",
        "rawOutput",
        "capabilities",
        "_meta",
    }
)
_TERMINAL_KEYS = frozenset(
    {
        "sessionUpdate",
        "terminalId",
        "command",
        "cwd",
        "output",
        "exitStatus",
        "size",
        "capabilities",
        "_meta",
    }
)
_COMPACTION_KEYS = frozenset(
    {"sessionUpdate", "compactionId", "status", "summary", "error", "_meta"}
)
_INFO_KEYS = frozenset({"sessionUpdate", "title", "updatedAt", "_meta"})

Key = tuple[str, ...]


class _Rejected(Exception):
    """A known update that is malformed even after lenient decoding (spec 1.8)."""


# ---------------------------------------------------------------------------------------
# Small type checks. JSON booleans are Python bools, which are also ints: exclude them.


def _is_str(v: Any) -> TypeGuard[str]:
    return isinstance(v, str)


def _is_int(v: Any) -> TypeGuard[int]:
    """An integer as JSON Schema says: ``1000.0`` is one too."""
    if isinstance(v, float):
        return v.is_integer()
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _is_obj(v: Any) -> TypeGuard[dict[str, Any]]:
    return isinstance(v, dict)


def _request_key(v: Any) -> tuple[str, Any] | None:
    """Request ids: a string never equals an integer (LOG-FORMATS 1.8); null pairs nothing."""
    if isinstance(v, str):
        return ("s", v)
    if type(v) is int:  # LOG-FORMATS 1.7: no fraction or exponent part (2.0 is no id)
        return ("i", v)
    return None


def _drop_bad(obj: dict[str, Any], key: str, ok: Any) -> None:
    """Default-on-error for an optional field inside an item: wrong type -> absent."""
    if key in obj and obj[key] is not None and not ok(obj[key]):
        del obj[key]


# ---------------------------------------------------------------------------------------
# Item decoding (spec 5, 7.5-7.7, 6.4, 9.1-9.3). Each `_clean_*` returns the item as it
# is stored (default-on-error fields removed) or None when the item is invalid.


def _clean_list_of(value: Any, clean: Any) -> list[Any]:
    """Skip-invalid-items: keep the items that decode, in order (spec 13.5 S)."""
    out = []
    for item in value:
        cleaned = clean(item)
        if cleaned is not None:
            out.append(cleaned)
    return out


def _clean_annotations(a: dict[str, Any]) -> dict[str, Any]:
    a = dict(a)
    if isinstance(a.get("audience"), list):
        a["audience"] = [r for r in a["audience"] if _is_str(r)]
    else:
        _drop_bad(a, "audience", lambda v: False)
    _drop_bad(a, "lastModified", _is_str)
    _drop_bad(a, "priority", _is_number)
    _drop_bad(a, "_meta", _is_obj)
    return a


def _clean_icon(i: object) -> dict[str, Any] | None:
    if not _is_obj(i) or not _is_str(i.get("src")):
        return None
    i = dict(i)
    _drop_bad(i, "mimeType", _is_str)
    _drop_bad(i, "theme", _is_str)
    _drop_bad(i, "_meta", _is_obj)
    if isinstance(i.get("sizes"), list):
        i["sizes"] = [s for s in i["sizes"] if _is_str(s)]
    else:
        _drop_bad(i, "sizes", lambda v: False)
    return i


def clean_content_block(b: object) -> dict[str, Any] | None:
    """A ContentBlock as stored, or None if it is a malformed known block (spec 5)."""
    if not _is_obj(b) or not _is_str(b.get("type")):
        return None
    t = b["type"]
    b = dict(b)
    if t == "text":
        if not _is_str(b.get("text")):
            return None
    elif t in ("image", "audio"):
        if not (_is_str(b.get("data")) and _is_str(b.get("mimeType"))):
            return None
        if t == "image":
            _drop_bad(b, "uri", _is_str)
    elif t == "resource_link":
        if not (_is_str(b.get("name")) and _is_str(b.get("uri"))):
            return None
        for k in ("title", "description", "mimeType"):
            _drop_bad(b, k, _is_str)
        _drop_bad(b, "size", lambda v: _is_int(v) and 0 <= v <= _UINT64_MAX)
        if isinstance(b.get("icons"), list):
            b["icons"] = _clean_list_of(b["icons"], _clean_icon)
        else:
            _drop_bad(b, "icons", lambda v: False)
    elif t == "resource":
        r = b.get("resource")
        if not _is_obj(r) or not _is_str(r.get("uri")):
            return None
        if not (_is_str(r.get("text")) or _is_str(r.get("blob"))):
            return None
        r = dict(r)
        _drop_bad(r, "mimeType", _is_str)
        _drop_bad(r, "_meta", _is_obj)
        b["resource"] = r
    else:
        return b  # custom or future block: kept raw (spec 5, R4)
    _drop_bad(b, "_meta", _is_obj)
    if _is_obj(b.get("annotations")):
        b["annotations"] = _clean_annotations(b["annotations"])
    else:
        _drop_bad(b, "annotations", _is_obj)
    return b


def _clean_diff_change(c: object) -> dict[str, Any] | None:
    if not _is_obj(c) or not _is_str(c.get("operation")):
        return None
    op = c["operation"]
    if op in ("add", "delete", "modify") and not _is_str(c.get("path")):
        return None
    if op in ("move", "copy") and not (_is_str(c.get("path")) and _is_str(c.get("oldPath"))):
        return None
    c = dict(c)
    for k in ("fileType", "mimeType"):
        _drop_bad(c, k, _is_str)
    _drop_bad(c, "_meta", _is_obj)
    return c


def _valid_patch(p: Any) -> bool:
    return _is_obj(p) and _is_str(p.get("format")) and _is_str(p.get("text"))


def clean_tool_call_content(item: object) -> dict[str, Any] | None:
    """A ToolCallContent item as stored, or None if malformed (spec 7.5, 7.6)."""
    if not _is_obj(item) or not _is_str(item.get("type")):
        return None
    t = item["type"]
    item = dict(item)
    if t == "content":
        block = clean_content_block(item.get("content"))
        if block is None:
            return None
        item["content"] = block
    elif t == "diff":
        if not isinstance(item.get("changes"), list):
            return None  # `changes` is S only: it must be an array
        item["changes"] = _clean_list_of(item["changes"], _clean_diff_change)
        _drop_bad(item, "patch", _valid_patch)
    elif t == "terminal":
        if not _is_str(item.get("terminalId")):
            return None
    else:
        return item  # custom or future item: raw
    _drop_bad(item, "_meta", _is_obj)
    return item


def _clean_location(loc: object) -> dict[str, Any] | None:
    if not _is_obj(loc) or not _is_str(loc.get("path")):
        return None
    loc = dict(loc)
    # Spec 7.7: `line` is 1-based; 0 or a wrong type decodes as absent.
    _drop_bad(loc, "line", lambda v: _is_int(v) and v >= 1)
    _drop_bad(loc, "_meta", _is_obj)
    return loc


def _valid_background_item(i: Any) -> bool:
    if not _is_obj(i) or not _is_str(i.get("type")):
        return False
    if i["type"] == "terminal":
        return _is_str(i.get("terminalId"))
    if i["type"] == "tool_call":
        return _is_str(i.get("toolCallId"))
    return True  # unknown kind: raw, still running work (spec 6.4)


def _clean_plan_entry(e: object) -> dict[str, Any] | None:
    if not _is_obj(e):
        return None
    if not (_is_str(e.get("content")) and _is_str(e.get("priority")) and _is_str(e.get("status"))):
        return None
    e = dict(e)
    _drop_bad(e, "_meta", _is_obj)
    return e


def _clean_command(c: object) -> dict[str, Any] | None:
    # Spec 9.2: `type`, `name` and `description` are required for every kind (R61).
    if not _is_obj(c) or not _is_str(c.get("type")):
        return None
    if not (_is_str(c.get("name")) and _is_str(c.get("description"))):
        return None
    if c["type"] != "command":
        return c
    c = dict(c)

    def input_ok(v: Any) -> bool:
        if not _is_obj(v) or not _is_str(v.get("type")):
            return False
        return v["type"] != "text" or _is_str(v.get("hint"))

    _drop_bad(c, "input", input_ok)
    _drop_bad(c, "_meta", _is_obj)
    return c


def _clean_select_option(o: object) -> dict[str, Any] | None:
    if not _is_obj(o) or not (_is_str(o.get("value")) and _is_str(o.get("name"))):
        return None
    o = dict(o)
    _drop_bad(o, "description", _is_str)
    _drop_bad(o, "_meta", _is_obj)
    return o


def _clean_select_group(g: object) -> dict[str, Any] | None:
    if not _is_obj(g) or not (_is_str(g.get("groupId")) and _is_str(g.get("name"))):
        return None
    g = dict(g)
    opts = g.get("options")
    g["options"] = _clean_list_of(opts, _clean_select_option) if isinstance(opts, list) else []
    _drop_bad(g, "_meta", _is_obj)
    return g


def _clean_config_option(o: object) -> dict[str, Any] | None:
    if not _is_obj(o):
        return None
    if not (_is_str(o.get("configId")) and _is_str(o.get("name")) and _is_str(o.get("type"))):
        return None
    o = dict(o)
    if o["type"] == "select":
        opts = o.get("options")
        if not _is_str(o.get("currentValue")) or not isinstance(opts, list) or not opts:
            return None
        flat = [_clean_select_option(x) for x in opts]
        if all(x is not None for x in flat):
            o["options"] = flat
        else:
            groups = [_clean_select_group(x) for x in opts]
            if not all(x is not None for x in groups):
                return None  # neither shape (spec 9.3)
            o["options"] = groups
    elif o["type"] == "boolean":
        if not isinstance(o.get("currentValue"), bool):
            return None
    else:
        return o  # unknown type: raw
    _drop_bad(o, "description", _is_str)
    _drop_bad(o, "category", _is_str)
    _drop_bad(o, "_meta", _is_obj)
    return o


def _valid_error(e: Any) -> bool:
    return _is_obj(e) and _is_int(e.get("code")) and _is_str(e.get("message"))


def _decode_b64(data: str) -> bytes | None:
    body = data.rstrip("=")
    if len(data) % 4 or len(data) - len(body) > 2:
        return None  # RFC 4648: whole quanta, at most two `=` (Python accepts more)
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _clean_capabilities(c: dict[str, Any]) -> dict[str, Any]:
    # Spec 7.1 / R55: a malformed `cancel` advertises nothing (D inside the object).
    c = dict(c)
    _drop_bad(c, "cancel", _is_obj)
    _drop_bad(c, "_meta", _is_obj)
    return c


# ---------------------------------------------------------------------------------------
# The patch rules (spec 0.4).


def meta_patch(stored: dict[str, Any] | None, value: Any) -> dict[str, Any] | None:
    """META-PATCH of a present `_meta` value (spec 0.4, 13.3); returns the new stored value."""
    if value is None:
        return None
    if not _is_obj(value):
        return stored  # non-object `_meta` decodes as omitted (13.3)
    new = dict(stored or {})
    for k, v in value.items():
        if v is None:
            new.pop(k, None)
        else:
            new[k] = v  # whole value, no nested merge
    return new or None


def _patch_field(entity: dict[str, Any], update: dict[str, Any], key: str, ok: Any) -> None:
    """PATCH one three-state field: omitted keeps, null clears, a value replaces.

    A wrong-typed value is treated as omitted (default-on-error, spec 7.1 "lenient").
    """
    if key not in update:
        return
    v = update[key]
    if v is None:
        entity.pop(key, None)
    elif ok(v):
        entity[key] = copy.deepcopy(v)


def _patch_meta(entity: dict[str, Any], update: dict[str, Any]) -> None:
    if "_meta" in update:
        new = meta_patch(entity.get("_meta"), update["_meta"])
        if new is None:
            entity.pop("_meta", None)
        else:
            entity["_meta"] = new


def _patch_extras(extra: dict[str, Any], update: dict[str, Any], known: frozenset[str]) -> None:
    """Unknown top-level fields: kept on the entity with the PATCH rule (spec 13.2)."""
    for k, v in update.items():
        if k in known:
            continue
        if v is None:
            extra.pop(k, None)
        else:
            extra[k] = copy.deepcopy(v)


# ---------------------------------------------------------------------------------------
# State containers.


@dataclass
class _Entity:
    """A timeline entity, terminal or plan: its stored fields plus unknown extra fields."""

    fields: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)
    first_seen: int = 0
    last_changed: int = 0
    excluded: bool = False
    output: bytearray = field(default_factory=bytearray)  # terminals only


@dataclass
class _Session:
    session_id: str
    announced: bool = False
    created_by_new: bool = False
    closed: bool = False
    close_succeeded: bool = False  # the snapshot's `closed`: a session/close succeeded
    reopening: bool = False  # spec 12.3: a resume of this closed session is under way
    replaying: bool = False
    resuming: int = 0
    ordinal: int = 0
    state: dict[str, Any] | None = None
    completed: list[str | None] = field(default_factory=list)
    work_start: int | None = None
    last_work_end: int = 0
    # an accepted prompt's work is awaited until the next idle (R49); the last idle's ordinal
    work_awaited: bool = False
    idle_ordinal: int = 0
    cancel_requested: bool = False
    timeline: list[Key] = field(default_factory=list)
    entities: dict[Key, _Entity] = field(default_factory=dict)
    terminals: dict[str, _Entity] = field(default_factory=dict)
    plans: dict[str, _Entity] = field(default_factory=dict)
    commands: list[Any] | None = None
    config: list[Any] | None = None
    commands_seq: int = -1  # global sequence number of the last update of that kind (R50)
    config_seq: int = -1
    info: _Entity | None = None
    usage: dict[str, Any] | None = None
    notices: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    permissions: list[dict[str, Any]] = field(default_factory=list)
    unknown: list[dict[str, Any]] = field(default_factory=list)
    unretained: list[_Entity] = field(default_factory=list)
    user_ids_seen: set[str] = field(default_factory=set)
    locally_cancelled: set[str] = field(default_factory=set)
    previous: dict[Key, _Entity] = field(default_factory=dict)
    previous_order: list[Key] = field(default_factory=list)


#: The fields of ``session/request_permission`` params, and the keys of a PERMISSION object.
_PERMISSION_PARAMS = frozenset({"sessionId", "title", "description", "options", "subject", "_meta"})
_PERMISSION_KEYS = frozenset(
    {"requestId", "title", "description", "toolCallId", "status", "outcome", "options", "subject"}
)


@dataclass
class _Pending:
    method: str
    params: Any
    seq: int
    record: dict[str, Any] | None = None  # the prompt or permission record it feeds


class ReferenceModel:
    """A plain-dict model of acp_client's reconciled state, for tests.

    Feed it a conversation in passive mode (both directions, as a log would hold them)
    and compare its :meth:`snapshot` with the real reducer's, or use it directly to know
    what a conversation should reconcile to. ``diagnostics`` in the snapshot is always
    empty: the model reports no diagnostics.

    Example::

        model = ReferenceModel()
        model.feed("outgoing", {"jsonrpc": "2.0", "id": 1, "method": "session/prompt",
                                "params": {"sessionId": "s", "prompt": [
                                    {"type": "text", "text": "hi"}]}})
        model.feed("incoming", {"jsonrpc": "2.0", "id": 1, "result": {"messageId": "u1"}})
        model.snapshot()["sessions"][0]["prompts"]
        # [{'requestId': 1, 'status': 'accepted', 'messageId': 'u1', 'echoed': False}]
    """

    def __init__(self) -> None:
        self._sessions: dict[str, _Session] = {}
        self._out: dict[tuple[str, Any], _Pending] = {}  # client requests awaiting the agent
        self._sent_since_initialize = False  # a client request other than initialize was sent
        self._in: dict[tuple[str, Any], _Pending] = {}  # agent requests awaiting the client
        self._protocol_version: int | None = None
        self._seq = 0

    # -- input ---------------------------------------------------------------------------

    def feed(self, direction: str, message: Any) -> None:
        """Apply one JSON-RPC message (or a batch list) read in ``direction``.

        ``direction`` is ``"incoming"`` (agent to client) or ``"outgoing"`` (client to
        agent); ``"unknown"`` (a log reader could not tell) is ignored, as are messages
        that are not JSON-RPC objects.
        """
        if direction == "unknown":
            return  # LOG-FORMATS 1.6: records of unknown direction are never applied
        if direction not in ("incoming", "outgoing"):
            raise ValueError(f"direction must be 'incoming' or 'outgoing', not {direction!r}")
        if isinstance(message, list):
            for element in message:  # spec 1.5: batch entries in array order
                self.feed(direction, element)
            return
        if not _is_obj(message):
            return
        self._seq += 1
        has_method = _is_str(message.get("method"))
        if has_method and "id" in message:
            self._request(direction, message)
        elif has_method:
            self._notification(direction, message)
        elif "id" in message and (("result" in message) != ("error" in message)):
            self._response(direction, message)

    def feed_all(self, messages: Any) -> None:
        """Apply ``(direction, message)`` pairs in order."""
        for direction, message in messages:
            self.feed(direction, message)

    # -- output --------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The reconciled state as a SNAPSHOT.md structure (fresh plain data)."""
        return {
            "format": SNAPSHOT_FORMAT,
            "sessions": [self._session_snapshot(s) for s in self._sessions.values()],
            "diagnostics": [],
        }

    # -- dispatch ------------------------------------------------------------------------

    def _session(self, session_id: str) -> _Session:
        """Get, or create on first sight, a session (spec 12.5: not announced)."""
        if session_id not in self._sessions:
            self._sessions[session_id] = _Session(session_id)
        return self._sessions[session_id]

    def _request(self, direction: str, msg: dict[str, Any]) -> None:
        key = _request_key(msg["id"])
        method = msg["method"]
        params = msg.get("params")
        if key is None:
            return
        pending = _Pending(method, params, self._seq)
        if direction == "outgoing":
            if method == "initialize" and self._sent_since_initialize:
                # A new connection: earlier pending requests are dropped (LOG-FORMATS 1.10),
                # and the resumes it left unanswered with them. (Spec 1.4: initialize may be
                # repeated until another request is sent; those repeats are one connection.)
                self._out.clear()
                self._in.clear()
                self._sent_since_initialize = False
                for session in self._sessions.values():
                    session.resuming = 0
                    if session.replaying:  # its replay ends unconfirmed with the connection
                        self._end_replay(session)
                    if session.reopening:  # its resume died with the connection
                        session.reopening, session.closed = False, True
            if (
                method == "initialize"
                and _is_obj(params)
                and _is_int(params.get("protocolVersion"))
            ):
                self._protocol_version = params["protocolVersion"]
            self._out[key] = pending
            if method != "initialize":
                self._sent_since_initialize = True
            sid = params.get("sessionId") if _is_obj(params) else None
            if _is_str(sid):
                s = self._session(sid)  # spec 12.5: any message naming a session creates it
                if method == "session/prompt":
                    pending.record = {"requestId": msg["id"], "status": "pending"}
                    s.prompts.append(pending.record)
                    if _is_idle(s):
                        s.cancel_requested = False  # the next work's prompt (11.2)
                elif method == "session/resume" and _is_obj(params):
                    self._resume_sent(s, params)
        else:
            old = self._in.get(key)
            if old is not None and old.record is not None and old.record["status"] == "pending":
                old.record["status"] = "withdrawn"  # 1.2: a reused pending id replaces it
            self._in[key] = pending
            if method == "session/request_permission":
                self._permission_request(msg["id"], params, pending)
            elif _is_obj(params) and _is_str(params.get("sessionId")):
                self._session(params["sessionId"])  # elicitation: creates the session only

    def _notification(self, direction: str, msg: dict[str, Any]) -> None:
        method = msg["method"]
        params = msg.get("params")
        if direction == "incoming" and method == "session/update":
            self._session_update(params)
        elif direction == "outgoing" and method == "session/cancel":
            if _is_obj(params) and _is_str(params.get("sessionId")):
                self._cancel(self._session(params["sessionId"]))
        elif direction == "incoming" and method == "$/cancel_request":
            # Spec 11.3 / R20: the agent withdraws one of its own pending requests.
            key = _request_key(params.get("requestId")) if _is_obj(params) else None
            pending = self._in.get(key) if key is not None else None
            record = pending.record if pending is not None else None
            if record is not None and record["status"] == "pending":
                record["status"] = "withdrawn"

    def _response(self, direction: str, msg: dict[str, Any]) -> None:
        key = _request_key(msg["id"])
        table = self._out if direction == "incoming" else self._in
        pending = table.pop(key, None) if key is not None else None
        if pending is None:
            return  # spec 12.5: unmatched responses are never matched by guessing
        result = msg.get("result")
        error = msg.get("error")
        ok = "result" in msg
        params = pending.params if _is_obj(pending.params) else {}
        if direction == "outgoing":
            if pending.record is not None:
                self._permission_answered(pending.record, result if ok else None)
            return
        method = pending.method
        if method == "initialize" and ok and _is_obj(result):
            if _is_int(result.get("protocolVersion")):
                self._protocol_version = result["protocolVersion"]
        elif method == "session/prompt" and pending.record is not None:
            self._prompt_answered(pending.record, ok, result, error)
            if ok:
                # Its work is awaited until the next idle, unless its message was placed
                # before the last idle (the response came after that work: R49).
                s = self._session(params["sessionId"])
                mid = result.get("messageId") if _is_obj(result) else None
                echo = s.entities.get(("message", "user", mid)) if _is_str(mid) else None
                if echo is None or echo.first_seen > s.idle_ordinal:
                    s.work_awaited = True
        elif method == "session/new" and ok and _is_obj(result):
            if _is_str(result.get("sessionId")):
                s = self._session(result["sessionId"])
                s.announced = True
                s.created_by_new = True
                self._apply_setup_lists(s, result, pending.seq)
        elif method == "session/resume" and _is_str(params.get("sessionId")):
            s = self._session(params["sessionId"])
            if params.get("replayFrom") is None:
                s.resuming = max(0, s.resuming - 1)
            elif s.replaying:
                self._end_replay(s)
            if ok and _is_obj(result):
                self._apply_setup_lists(s, result, pending.seq)
            reopening, s.reopening = s.reopening, False
            if not ok and (reopening or (_is_obj(error) and error.get("code") == -32002)):
                s.closed = True  # step 5: gone (-32002), or a closed session stays closed
        elif method == "session/close" and _is_str(params.get("sessionId")):
            # Spec 11.5: success, or -32002, closes the session.
            if ok or (_is_obj(error) and error.get("code") == -32002):
                closing = self._session(params["sessionId"])
                closing.closed = closing.close_succeeded = True
        elif (
            method == "session/set_config_option"
            and _is_obj(result)
            and _is_str(params.get("sessionId"))
            and isinstance(result.get("configOptions"), list)
        ):
            s = self._session(params["sessionId"])
            s.config = _clean_list_of(result["configOptions"], _clean_config_option)

    # -- prompts (spec 10) ---------------------------------------------------------------

    def _prompt_answered(self, record: dict[str, Any], ok: bool, result: Any, error: Any) -> None:
        if ok:
            record["status"] = "accepted"
            # R8: without a string messageId the prompt is accepted but cannot be linked.
            if _is_obj(result) and _is_str(result.get("messageId")):
                record["messageId"] = result["messageId"]
        else:
            record["status"] = "rejected"
            record["error"] = copy.deepcopy(error)

    # -- session setup, resume, replay (spec 12) -------------------------------------------

    def _apply_setup_lists(self, s: _Session, result: dict[str, Any], sent_seq: int) -> None:
        # R47: omitted, null, [] and a malformed list all store []; R50: an update of the
        # same kind applied since the request was sent stands.
        if s.commands_seq < sent_seq:
            v = result.get("availableCommands")
            s.commands = _clean_list_of(v, _clean_command) if isinstance(v, list) else []
        if s.config_seq < sent_seq:
            v = result.get("configOptions")
            s.config = _clean_list_of(v, _clean_config_option) if isinstance(v, list) else []

    def _resume_sent(self, s: _Session, params: dict[str, Any]) -> None:
        s.announced = True
        if s.closed:  # spec 12.3 step 4: resumed, the session is open again
            s.closed, s.reopening = False, True
        if params.get("replayFrom") is None:
            s.resuming += 1  # spec 12.2: no replay, keep everything; A27: resume snapshot
            return
        # Spec 12.3 step 1: move entities into the previous generation, empty timeline.
        s.replaying = True
        s.previous = dict(s.entities)
        s.previous_order = list(s.timeline)
        s.entities = {}
        s.timeline = []
        s.terminals = {}
        s.plans = {}
        s.locally_cancelled = set()  # step 3: local overlays are dropped

    def _end_replay(self, s: _Session) -> None:
        # Spec 12.3 steps 4/5: what was not replayed becomes unretained, in its old order.
        s.replaying = False
        # An entry an earlier replay lost and this one reported again is back in the
        # timeline (12.3 step 3: its key keeps its identity); it is no longer unretained.
        s.unretained = [e for e in s.unretained if _key_of_entity(e) not in s.entities]
        for key in s.previous_order:
            if key not in s.entities:
                s.unretained.append(s.previous[key])
        s.previous = {}
        s.previous_order = []
        # The replayed history is earlier work, unless work is still going on: then it
        # started at the last user message, the prompt that a later refusal marks from.
        s.last_work_end = s.ordinal
        if s.state is not None and s.state.get("state") != "idle":
            users = [s.entities[k].first_seen for k in s.timeline if k[:2] == ("message", "user")]
            if users:
                s.last_work_end = users[-1] - 1

    # -- permissions and cancellation (spec 11) ------------------------------------------

    def _permission_request(self, request_id: Any, params: Any, pending: _Pending) -> None:
        if not _is_obj(params) or not _is_str(params.get("sessionId")):
            return
        options = params.get("options")
        valid_options = (
            isinstance(options, list)
            and options
            and all(
                _is_obj(o)
                and _is_str(o.get("optionId"))
                and _is_str(o.get("name"))
                and _is_str(o.get("kind"))
                for o in options
            )
        )
        if not _is_str(params.get("title")) or not valid_options:
            return  # R41: answered -32602, never recorded
        subject = params.get("subject")
        tool_call_id = None
        if subject is not None:
            if not _is_obj(subject) or not _is_str(subject.get("type")):
                return  # the subject is strict (spec 13.6)
            if subject["type"] == "tool_call":
                tc = subject.get("toolCall")
                if not _is_obj(tc) or not _is_str(tc.get("toolCallId")):
                    return
                tool_call_id = tc["toolCallId"]
            elif subject["type"] == "command":
                if not (_is_str(subject.get("command")) and _is_str(subject.get("cwd"))):
                    return
                if _is_str(subject.get("toolCallId")):
                    tool_call_id = subject["toolCallId"]  # links only, creates nothing (R21)
        s = self._session(params["sessionId"])
        if subject is not None and subject["type"] == "tool_call":
            # Spec 11.1: applied as if a tool_call_update had arrived at this point.
            s.ordinal += 1
            self._tool_call_update(s, subject["toolCall"])
        record: dict[str, Any] = {"requestId": request_id, "title": params["title"]}
        if _is_str(params.get("description")):
            record["description"] = params["description"]
        if tool_call_id is not None:
            record["toolCallId"] = tool_call_id
        record["status"] = "pending"
        record["options"] = copy.deepcopy(options)
        if subject is not None and subject["type"] not in ("tool_call", "command"):
            record["subject"] = copy.deepcopy(subject)  # 11.1: an unknown subject, kept raw
        for key, value in params.items():  # unknown fields, beside the object's own keys
            if key not in _PERMISSION_PARAMS and key not in _PERMISSION_KEYS:
                record.setdefault(key, copy.deepcopy(value))
        pending.record = record
        s.permissions.append(record)

    def _permission_answered(self, record: dict[str, Any], result: Any) -> None:
        outcome = result.get("outcome") if _is_obj(result) else None
        if outcome is not None:
            record["outcome"] = copy.deepcopy(outcome)
        if record["status"] == "withdrawn":
            return  # SNAPSHOT.md PERMISSION: withdrawn is final
        cancelled = _is_obj(outcome) and outcome.get("outcome") == "cancelled"
        record["status"] = "cancelled" if cancelled else "answered"

    def _cancel(self, s: _Session) -> None:
        """session/cancel sent (spec 11.2).

        Passive mode: the permission answers come from the log as outgoing responses, so
        only the local effects apply here.
        """
        if _is_idle(s):
            if not s.work_awaited:
                return  # R46 / R11: no active work, no tool call is marked, no idle awaited
            since: int | None = s.idle_ordinal  # R49: an accepted prompt's work, not yet running
        else:
            since = s.work_start
        s.cancel_requested = True
        listed_calls, listed_terms = _background_ids(s.state)
        for key in s.timeline:
            if key[0] != "toolCall":
                continue
            tc = s.entities[key]
            tool_call_id = key[1]
            if tc.fields.get("status", "pending") in _FINISHED:
                continue
            # R15: those first seen or changed since the current work started (all
            # not-finished ones if that is unknown) ...
            if since is not None and tc.last_changed < since:
                continue
            # ... minus listed background work, directly or through a listed terminal.
            if tool_call_id in listed_calls:
                continue
            refs = {
                c.get("terminalId")
                for c in tc.fields.get("content", [])
                if c.get("type") == "terminal"
            }
            if refs & listed_terms:
                continue
            s.locally_cancelled.add(tool_call_id)

    # -- session/update (spec 1.6, 3) ----------------------------------------------------

    def _session_update(self, params: Any) -> None:
        if not _is_obj(params) or not _is_str(params.get("sessionId")):
            return  # rejected (spec 1.8)
        update = params.get("update")
        if not _is_obj(update) or not _is_str(update.get("sessionUpdate")):
            return
        sid = params["sessionId"]
        created = sid not in self._sessions
        s = self._session(sid)
        kind = update["sessionUpdate"]
        try:
            if kind not in KNOWN_UPDATES:
                s.ordinal += 1
                s.unknown.append(copy.deepcopy(update))  # spec 13.1: kept verbatim
                return
            handler = getattr(self, "_u_" + kind)
            handler(s, update)
        except _Rejected:
            if created:
                del self._sessions[sid]  # a rejected update is not applied at all

    def _touch(self, s: _Session, key: Key, make: Any) -> _Entity:
        """UPSERT lookup with first-seen placement (spec 2.3)."""
        entity = s.entities.get(key)
        if entity is None:
            entity = _Entity(fields=make(), first_seen=s.ordinal)
            s.entities[key] = entity
            s.timeline.append(key)
        entity.last_changed = s.ordinal
        return entity

    # messages (spec 4)

    def _message(self, s: _Session, role: str, message_id: str) -> _Entity:
        if role == "user":
            s.user_ids_seen.add(message_id)  # SNAPSHOT.md PROMPT `echoed`
        return self._touch(
            s,
            ("message", role, message_id),
            lambda: {"messageId": message_id, "role": role, "content": []},
        )

    def _chunk(self, s: _Session, u: dict[str, Any]) -> None:
        block = clean_content_block(u.get("content"))
        if not _is_str(u.get("messageId")) or block is None:
            raise _Rejected  # spec 4.1: no lenient decoding of messageId / content
        s.ordinal += 1
        msg = self._message(s, _ROLE_OF_UPDATE[u["sessionUpdate"]], u["messageId"])
        msg.fields["content"].append(block)  # APPEND; chunk `_meta` is chunk-scoped

    def _whole_message(self, s: _Session, u: dict[str, Any]) -> None:
        if not _is_str(u.get("messageId")):
            raise _Rejected
        s.ordinal += 1
        msg = self._message(s, _ROLE_OF_UPDATE[u["sessionUpdate"]], u["messageId"])
        # Spec 4.2: content D+S: non-array -> omitted; null or [] -> clear; array -> replace.
        if "content" in u:
            v = u["content"]
            if v is None:
                msg.fields["content"] = []
            elif isinstance(v, list):
                msg.fields["content"] = _clean_list_of(v, clean_content_block)
        _patch_meta(msg.fields, u)
        _patch_extras(msg.extra, u, _MESSAGE_KEYS)

    _u_user_message_chunk = _chunk
    _u_agent_message_chunk = _chunk
    _u_agent_thought_chunk = _chunk
    _u_user_message = _whole_message
    _u_agent_message = _whole_message
    _u_agent_thought = _whole_message

    # foreground state (spec 6)

    def _u_state_update(self, s: _Session, u: dict[str, Any]) -> None:
        state = u.get("state")
        if not _is_str(state):
            raise _Rejected
        s.ordinal += 1
        payload = copy.deepcopy({k: v for k, v in u.items() if k != "sessionUpdate"})
        if state in _KNOWN_STATES:
            bg = payload.get("background")
            # Spec 6.4: null, non-array or any malformed item -> not reported (D, no S).
            if "background" in payload and (
                not isinstance(bg, list) or not all(_valid_background_item(i) for i in bg)
            ):
                del payload["background"]
            _drop_bad(payload, "_meta", _is_obj)
            if payload.get("_meta", 0) is None:
                del payload["_meta"]
            if state == "idle":
                # Spec 6.2: omitted, null and malformed all mean "no stop reason".
                if not _is_str(payload.get("stopReason")):
                    payload.pop("stopReason", None)
                elif (
                    payload["stopReason"] == "error"
                    and "error" in payload
                    and not _valid_error(payload["error"])
                ):
                    del payload["error"]  # R60
            for item in payload.get("background", []):
                if item.get("type") == "terminal":
                    self._terminal(s, item["terminalId"])  # R22 / R53
        previous = s.state.get("state") if s.state is not None else None
        repeated = _is_idle(s) and not s.resuming
        s.state = payload
        # R31 / R51 / A27: snapshots during replay, or before a resume's response, record no
        # completion and start no work.
        if not s.replaying and not s.resuming:
            if state == "idle" and previous is not None and previous != "idle":
                reason = payload.get("stopReason")
                s.completed.append(reason)
                if reason == "refusal":
                    self._exclude_refused(s)
                s.work_start = None
            elif state in ("running", "requires_action") and previous in (None, "idle"):
                s.work_start = s.idle_ordinal if s.work_awaited else s.ordinal  # R49, R15
        if state == "idle" and not s.replaying:
            if repeated and (s.work_awaited or self._user_message_waits(s)):
                pass  # a repeated idle neither starts nor ends work (6.3); R49 keeps waiting
            else:
                # an idle ends what came before (R14 marks after it)
                s.last_work_end = s.ordinal
                s.work_awaited = False
                s.idle_ordinal = s.ordinal
        if state == "idle":
            s.cancel_requested = False

    def _user_message_waits(self, s: _Session) -> bool:
        """Whether a user message first seen since the last idle ends the timeline."""
        if not s.timeline:
            return False
        key = s.timeline[-1]
        return key[:2] == ("message", "user") and s.entities[key].first_seen > s.last_work_end

    def _exclude_refused(self, s: _Session) -> None:
        # R14, as read here: from the first user message placed since the last idle (the
        # prompt that started this work) to the end of the timeline.
        marking = False
        for key in s.timeline:
            entity = s.entities[key]
            if key[:2] == ("message", "user") and entity.first_seen > s.last_work_end:
                marking = True
            if marking:
                entity.excluded = True

    # tool calls (spec 7)

    def _tool_call(self, s: _Session, tool_call_id: str) -> _Entity:
        return self._touch(
            s,
            ("toolCall", tool_call_id),
            lambda: {"toolCallId": tool_call_id, "content": [], "locations": []},
        )

    def _tool_call_update(self, s: _Session, u: dict[str, Any]) -> None:
        tc = self._tool_call(s, u["toolCallId"])
        f = tc.fields
        for key in ("title", "name", "kind", "status"):
            # `kind: null` resets to `other`, `status: null` to `pending`: absent here,
            # the default is written by the snapshot (spec 7.1).
            _patch_field(f, u, key, _is_str)
        if "status" in u and (u["status"] is None or _is_str(u["status"])):
            s.locally_cancelled.discard(u["toolCallId"])  # R17: a later agent status wins
        for key, clean in (("content", clean_tool_call_content), ("locations", _clean_location)):
            if key in u:
                v = u[key]
                if v is None:
                    f[key] = []
                elif isinstance(v, list):
                    f[key] = _clean_list_of(v, clean)
        for key in ("rawInput", "rawOutput"):
            _patch_field(f, u, key, lambda v: True)  # untyped: cannot fail
        if "capabilities" in u:
            v = u["capabilities"]
            if v is None:
                f.pop("capabilities", None)
            elif _is_obj(v):
                f["capabilities"] = _clean_capabilities(copy.deepcopy(v))
        _patch_meta(f, u)
        _patch_extras(tc.extra, u, _TOOL_CALL_KEYS)
        self._terminals_referenced(s, f["content"])

    def _terminals_referenced(self, s: _Session, items: list[dict[str, Any]]) -> None:
        for item in items:
            if item.get("type") == "terminal":
                self._terminal(s, item["terminalId"])  # R22: a reference creates it

    def _u_tool_call_update(self, s: _Session, u: dict[str, Any]) -> None:
        if not _is_str(u.get("toolCallId")):
            raise _Rejected
        s.ordinal += 1
        self._tool_call_update(s, u)

    def _u_tool_call_content_chunk(self, s: _Session, u: dict[str, Any]) -> None:
        item = clean_tool_call_content(u.get("content"))
        if not _is_str(u.get("toolCallId")) or item is None:
            raise _Rejected
        s.ordinal += 1
        tc = self._tool_call(s, u["toolCallId"])
        tc.fields["content"].append(item)  # spec 7.2: APPEND, chunk `_meta` not stored
        self._terminals_referenced(s, [item])

    # terminals (spec 8)

    def _terminal(self, s: _Session, terminal_id: str) -> _Entity:
        term = s.terminals.get(terminal_id)
        if term is None:
            term = _Entity(fields={"terminalId": terminal_id}, first_seen=s.ordinal)
            s.terminals[terminal_id] = term
        return term

    def _u_terminal_update(self, s: _Session, u: dict[str, Any]) -> None:
        if not _is_str(u.get("terminalId")):
            raise _Rejected
        s.ordinal += 1
        term = self._terminal(s, u["terminalId"])
        f = term.fields
        _patch_field(f, u, "command", _is_str)
        _patch_field(f, u, "cwd", _is_str)
        if "output" in u:
            v = u["output"]
            if v is None:
                term.output = bytearray()  # R24: cleared; later chunks append to empty
            elif _is_obj(v) and _is_str(v.get("data")):
                data = _decode_b64(v["data"])
                if data is not None:  # R25: invalid base64 -> treated as omitted
                    term.output = bytearray(data)  # SNAPSHOT: replaces everything
        if "exitStatus" in u:
            v = u["exitStatus"]
            if v is None:
                f.pop("exitStatus", None)  # R24: not exited / unknown
            elif _is_obj(v):
                v = copy.deepcopy(v)
                _drop_bad(v, "exitCode", _is_int)
                _drop_bad(v, "signal", _is_str)
                _drop_bad(v, "_meta", _is_obj)
                f["exitStatus"] = v

        def size_ok(v: Any) -> bool:
            return _is_obj(v) and all(
                _is_int(v.get(k)) and 1 <= v[k] <= 65535 for k in ("cols", "rows")
            )

        _patch_field(f, u, "size", size_ok)
        if "capabilities" in u:
            v = u["capabilities"]
            if v is None:
                f.pop("capabilities", None)
            elif _is_obj(v):
                f["capabilities"] = _clean_capabilities(copy.deepcopy(v))
        _patch_meta(f, u)
        _patch_extras(term.extra, u, _TERMINAL_KEYS)

    def _u_terminal_output_chunk(self, s: _Session, u: dict[str, Any]) -> None:
        if not (_is_str(u.get("terminalId")) and _is_str(u.get("data"))):
            raise _Rejected
        s.ordinal += 1
        data = _decode_b64(u["data"])  # spec 8.3: each chunk decoded on its own
        if data is not None:  # R25: invalid base64 -> the whole chunk is dropped: it
            self._terminal(s, u["terminalId"]).output.extend(data)  # creates nothing either

    # plans, commands, config, info, usage, notices (spec 9)

    def _u_plan_update(self, s: _Session, u: dict[str, Any]) -> None:
        plan = u.get("plan")
        if not _is_obj(plan) or not _is_str(plan.get("type")) or not _is_str(plan.get("planId")):
            raise _Rejected
        plan = copy.deepcopy(plan)
        if plan["type"] == "items":
            if not isinstance(plan.get("entries"), list):
                raise _Rejected  # `entries` is S only: must be an array
            plan["entries"] = _clean_list_of(plan["entries"], _clean_plan_entry)
            _drop_bad(plan, "_meta", _is_obj)
        s.ordinal += 1
        entity = s.plans.get(plan["planId"])
        if entity is None:
            entity = _Entity(fields={}, first_seen=s.ordinal)
            s.plans[plan["planId"]] = entity
        entity.fields = {"planId": plan["planId"], "plan": plan}  # REPLACE (R28)

    def _u_available_commands_update(self, s: _Session, u: dict[str, Any]) -> None:
        if not isinstance(u.get("availableCommands"), list):
            raise _Rejected  # R34: S only, a non-array rejects the update
        s.ordinal += 1
        s.commands = _clean_list_of(copy.deepcopy(u["availableCommands"]), _clean_command)
        s.commands_seq = self._seq

    def _u_config_option_update(self, s: _Session, u: dict[str, Any]) -> None:
        if not isinstance(u.get("configOptions"), list):
            raise _Rejected
        s.ordinal += 1
        s.config = _clean_list_of(copy.deepcopy(u["configOptions"]), _clean_config_option)
        s.config_seq = self._seq

    def _u_session_info_update(self, s: _Session, u: dict[str, Any]) -> None:
        s.ordinal += 1
        if s.info is None:
            s.info = _Entity(fields={})
        _patch_field(s.info.fields, u, "title", _is_str)
        _patch_field(s.info.fields, u, "updatedAt", _is_str)
        _patch_meta(s.info.fields, u)
        _patch_extras(s.info.extra, u, _INFO_KEYS)

    def _u_usage_update(self, s: _Session, u: dict[str, Any]) -> None:
        used, size = u.get("used"), u.get("size")
        if not (_is_int(used) and 0 <= used <= _UINT64_MAX and _is_int(size)):
            raise _Rejected  # `used` / `size` are strict uint64
        if not 0 <= size <= _UINT64_MAX:
            raise _Rejected
        s.ordinal += 1
        usage: dict[str, Any] = {"used": used, "size": size}
        old_cost = s.usage.get("cost") if s.usage is not None else None
        cost = u.get("cost", "omitted")
        valid_cost = (
            _is_obj(cost)
            and _is_number(cost.get("amount"))
            and math.isfinite(cost["amount"])  # 1e400 is out of range (13.5)
            and _is_str(cost.get("currency"))
        )
        if valid_cost:
            cost = copy.deepcopy(cost)
            _drop_bad(cost, "_meta", _is_obj)
            usage["cost"] = cost
        elif cost is not None and old_cost is not None:
            usage["cost"] = old_cost  # R33: omitted (or malformed, D) keeps the last cost
        if _is_obj(u.get("_meta")):
            usage["_meta"] = copy.deepcopy(u["_meta"])  # replaced with each update
        s.usage = usage

    def _u_notice(self, s: _Session, u: dict[str, Any]) -> None:
        title = u.get("title")
        if not _is_str(u.get("severity")) or not _is_str(title) or title == "":
            raise _Rejected  # spec 9.6: severity and a non-empty title are required
        s.ordinal += 1
        notice = copy.deepcopy({k: v for k, v in u.items() if k != "sessionUpdate"})
        _drop_bad(notice, "description", _is_str)
        _drop_bad(notice, "_meta", _is_obj)
        for key in ("description", "_meta"):
            if key in notice and notice[key] is None:
                del notice[key]  # a field cleared with null is absent (SNAPSHOT.md)
        s.notices.append(notice)

    # compactions (spec 9.5)

    def _compaction(self, s: _Session, compaction_id: str, status: str) -> _Entity:
        return self._touch(
            s,
            ("compaction", compaction_id),
            lambda: {"compactionId": compaction_id, "status": status, "summary": []},
        )

    def _u_compaction_update(self, s: _Session, u: dict[str, Any]) -> None:
        if not (_is_str(u.get("compactionId")) and _is_str(u.get("status"))):
            raise _Rejected  # R56: status is required
        s.ordinal += 1
        c = self._compaction(s, u["compactionId"], u["status"])
        c.fields["status"] = u["status"]
        if "summary" in u:
            v = u["summary"]
            if v is None:
                c.fields["summary"] = []
            elif isinstance(v, list):
                c.fields["summary"] = _clean_list_of(v, clean_content_block)
        _patch_field(c.fields, u, "error", _is_str)
        _patch_meta(c.fields, u)
        _patch_extras(c.extra, u, _COMPACTION_KEYS)

    def _u_compaction_summary_chunk(self, s: _Session, u: dict[str, Any]) -> None:
        block = clean_content_block(u.get("content"))
        if not _is_str(u.get("compactionId")) or block is None:
            raise _Rejected
        s.ordinal += 1
        c = self._compaction(s, u["compactionId"], "in_progress")  # R56
        c.fields["summary"].append(block)

    # -- snapshot ------------------------------------------------------------------------

    def _session_snapshot(self, s: _Session) -> dict[str, Any]:
        out: dict[str, Any] = {"sessionId": s.session_id, "announced": s.announced}
        if self._protocol_version is not None:
            out["protocolVersion"] = self._protocol_version
        if s.state is not None:
            out["state"] = s.state
        if s.closed and s.close_succeeded:
            out["closed"] = True
        out["completedTurns"] = list(s.completed)
        out["timeline"] = [self._entry(s, key, s.entities[key]) for key in s.timeline]
        out["terminals"] = [
            {
                **t.extra,
                **t.fields,
                "output": base64.b64encode(bytes(t.output)).decode("ascii"),
                "truncatedBytes": 0,
            }
            for t in s.terminals.values()
        ]
        out["plans"] = [p.fields for p in s.plans.values()]
        if s.commands is not None:
            out["availableCommands"] = s.commands
        if s.config is not None:
            out["configOptions"] = s.config
        if s.info is not None:
            out["sessionInfo"] = {**s.info.extra, **s.info.fields}
        if s.usage is not None:
            out["usage"] = s.usage
        out["notices"] = s.notices
        prompts = []
        for p in s.prompts:
            prompt = dict(p)
            prompt["echoed"] = prompt.get("messageId") in s.user_ids_seen
            prompts.append(prompt)
        out["prompts"] = prompts
        out["permissionRequests"] = s.permissions
        out["unknownUpdates"] = s.unknown
        out["unretained"] = [self._entry(s, _key_of_entity(e), e) for e in s.unretained]
        return copy.deepcopy(out)

    def _entry(self, s: _Session, key: Key, e: _Entity) -> dict[str, Any]:
        if key[0] == "message":
            entry: dict[str, Any] = {**e.extra, "entry": "message", **e.fields}
        elif key[0] == "toolCall":
            entry = {**e.extra, "entry": "toolCall", **e.fields}
            entry.setdefault("kind", "other")  # SNAPSHOT.md: effective defaults
            entry.setdefault("status", "pending")
            if key[1] in s.locally_cancelled:
                entry["status"] = "cancelled"  # spec 7.8: local overlay, shown only
        else:
            entry = {**e.extra, "entry": "compaction", **e.fields}
        entry.pop("excludedFromContext", None)  # the snapshot's own key, never an extra (R35)
        if e.excluded:
            entry["excludedFromContext"] = True
        return entry


def _key_of_entity(e: _Entity) -> Key:
    f = e.fields
    if "role" in f:
        return ("message", f["role"], f["messageId"])
    if "toolCallId" in f:
        return ("toolCall", f["toolCallId"])
    return ("compaction", f["compactionId"])


def _is_idle(s: _Session) -> bool:
    """Idle by the last snapshot, or a ``session/new`` session before any (R11)."""
    state = s.state.get("state") if s.state is not None else None
    return state == "idle" or (state is None and s.created_by_new)


def _background_ids(state: dict[str, Any] | None) -> tuple[set[str], set[str]]:
    """Tool call ids and terminal ids listed in the latest `background` list."""
    calls: set[str] = set()
    terms: set[str] = set()
    if state is None or state.get("state") not in _KNOWN_STATES:
        return calls, terms  # R64: an unrecognized state reports no background
    for item in state.get("background") or []:
        if item.get("type") == "tool_call":
            calls.add(item["toolCallId"])
        elif item.get("type") == "terminal":
            terms.add(item["terminalId"])
    return calls, terms
