"""Shared builders for the reducer / connection rule tests.

Messages are built as plain JSON-RPC dicts. :class:`Log` feeds them to a passive
``Connection(live=False)`` (log replay: both directions come from the "log"); :class:`Live`
drives a live ``Connection()`` with ``send_*`` and agent bytes, and collects what the
client wrote. :func:`apply` runs one update dict through the decoder into a bare
:class:`acp_client.Session`.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from acp_client import Connection, Decoder, Session
from acp_client._events import Event
from acp_client.schema import ClientCapabilities

SID = "sess_1"
INFO = {"name": "agent", "version": "1"}


# ------------------------------------------------------------------ builders


def text(t: str, **extra: Any) -> dict[str, Any]:
    """A text content block."""
    return {"type": "text", "text": t, **extra}


def b64(data: bytes | str) -> str:
    """Standard base64 of bytes (or of a str's UTF-8)."""
    raw = data.encode() if isinstance(data, str) else data
    return base64.b64encode(raw).decode("ascii")


def update(upd: dict[str, Any], sid: str = SID, **params: Any) -> dict[str, Any]:
    """A ``session/update`` notification."""
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": sid, "update": upd, **params},
    }


def request(rid: int | str, method: str, params: Any = None) -> dict[str, Any]:
    """A JSON-RPC request."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification(method: str, params: Any = None) -> dict[str, Any]:
    """A JSON-RPC notification."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def response(rid: int | str, result: Any) -> dict[str, Any]:
    """A success response."""
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def error(rid: int | str | None, code: int, message: str = "err", **extra: Any) -> dict[str, Any]:
    """An error response."""
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message, **extra}}


def line(msg: Any) -> bytes:
    """One wire line."""
    return json.dumps(msg, separators=(",", ":")).encode() + b"\n"


# ---------------------------------------------------------- update builders


def chunk(role: str, mid: str, block: Any, **extra: Any) -> dict[str, Any]:
    """``user_message_chunk`` / ``agent_message_chunk`` / ``agent_thought_chunk``."""
    tag = {"user": "user_message_chunk", "agent": "agent_message_chunk"}.get(
        role, "agent_thought_chunk"
    )
    if isinstance(block, str):
        block = text(block)
    return {"sessionUpdate": tag, "messageId": mid, "content": block, **extra}


def msg(role: str, mid: str, **fields: Any) -> dict[str, Any]:
    """``user_message`` / ``agent_message`` / ``agent_thought`` (fields as given)."""
    tag = {"user": "user_message", "agent": "agent_message"}.get(role, "agent_thought")
    return {"sessionUpdate": tag, "messageId": mid, **fields}


def tool(tcid: str, **fields: Any) -> dict[str, Any]:
    """``tool_call_update``."""
    return {"sessionUpdate": "tool_call_update", "toolCallId": tcid, **fields}


def tool_chunk(tcid: str, item: Any, **extra: Any) -> dict[str, Any]:
    """``tool_call_content_chunk`` (a str becomes a ``content`` text item)."""
    if isinstance(item, str):
        item = {"type": "content", "content": text(item)}
    return {
        "sessionUpdate": "tool_call_content_chunk",
        "toolCallId": tcid,
        "content": item,
        **extra,
    }


def term(tid: str, **fields: Any) -> dict[str, Any]:
    """``terminal_update``."""
    return {"sessionUpdate": "terminal_update", "terminalId": tid, **fields}


def term_chunk(tid: str, data: bytes | str, **extra: Any) -> dict[str, Any]:
    """``terminal_output_chunk`` with ``data`` base64-encoded (a str is sent verbatim)."""
    enc = data if isinstance(data, str) else b64(data)
    return {"sessionUpdate": "terminal_output_chunk", "terminalId": tid, "data": enc, **extra}


def state(st: str, **fields: Any) -> dict[str, Any]:
    """``state_update``."""
    return {"sessionUpdate": "state_update", "state": st, **fields}


def idle(stop: Any = "end_turn", **fields: Any) -> dict[str, Any]:
    """``state_update`` idle with a stop reason (``None`` omits it)."""
    if stop is None:
        return state("idle", **fields)
    return state("idle", stopReason=stop, **fields)


def plan_items(pid: str, *entries: str, **extra: Any) -> dict[str, Any]:
    """``plan_update`` of type ``items``."""
    return {
        "sessionUpdate": "plan_update",
        "plan": {
            "type": "items",
            "planId": pid,
            "entries": [{"content": e, "priority": "high", "status": "pending"} for e in entries],
            **extra,
        },
    }


def text_item(t: str) -> dict[str, Any]:
    """A tool-call ``content`` item holding a text block."""
    return {"type": "content", "content": text(t)}


PERM_OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "deny", "name": "Deny", "kind": "reject_once"},
]


def permission(rid: int | str, sid: str = SID, **params: Any) -> dict[str, Any]:
    """A ``session/request_permission`` request from the agent."""
    body = {"sessionId": sid, "title": "Allow?", "options": PERM_OPTIONS, **params}
    return request(rid, "session/request_permission", body)


def prompt_request(rid: int | str, sid: str = SID, t: str = "hello") -> dict[str, Any]:
    """A ``session/prompt`` request (as the client sent it)."""
    return request(rid, "session/prompt", {"sessionId": sid, "prompt": [text(t)]})


# ------------------------------------------------------------------- drivers


class Log:
    """A passive connection fed one message at a time, like a log replay."""

    def __init__(self) -> None:
        self.conn = Connection(live=False)
        self.events: list[Event] = []
        self._line = 0

    def agent(self, *msgs: Any) -> list[Event]:
        """Messages the agent sent."""
        out: list[Event] = []
        for m in msgs:
            self._line += 1
            out += self.conn.receive_message(m, "incoming", line=self._line)
        self.events += out
        return out

    def client(self, *msgs: Any) -> list[Event]:
        """Messages the client sent."""
        out: list[Event] = []
        for m in msgs:
            self._line += 1
            out += self.conn.receive_message(m, "outgoing", line=self._line)
        self.events += out
        return out

    def upd(self, *upds: dict[str, Any], sid: str = SID) -> list[Event]:
        """``session/update`` notifications for one session."""
        return self.agent(*(update(u, sid) for u in upds))

    def snap(self) -> dict[str, Any]:
        """The whole snapshot."""
        return self.conn.snapshot()

    def session(self, sid: str = SID) -> dict[str, Any]:
        """One session's snapshot object."""
        for s in self.snap()["sessions"]:
            if s["sessionId"] == sid:
                return s
        raise KeyError(sid)

    def timeline(self, sid: str = SID) -> list[dict[str, Any]]:
        """One session's timeline."""
        return self.session(sid)["timeline"]

    def entry(self, key: str, sid: str = SID) -> dict[str, Any]:
        """The timeline entry with that id (messageId / toolCallId / compactionId)."""
        for e in self.timeline(sid):
            if key in (e.get("messageId"), e.get("toolCallId"), e.get("compactionId")):
                return e
        raise KeyError(key)

    def terminal(self, tid: str, sid: str = SID) -> dict[str, Any]:
        """One terminal's snapshot object."""
        for t in self.session(sid)["terminals"]:
            if t["terminalId"] == tid:
                return t
        raise KeyError(tid)

    def codes(self) -> list[str]:
        """Diagnostic codes so far."""
        return [d.code for d in self.conn.diagnostics]

    def sess(self, sid: str = SID) -> Session:
        """The live Session object."""
        return self.conn.session(sid)


def ready(
    *sids: str, agent_capabilities: dict[str, Any] | None = None, **conn_args: Any
) -> Connection:
    """A live ``Connection`` past initialization and the setup of ``sids`` (C1).

    The agent answers ``initialize`` with ``agent_capabilities`` and ``session/new`` with each
    id in turn; the send events and bytes of the setup are dropped.
    """
    conn = Connection(**conn_args)
    rid, _ = conn.send_initialize()
    result = {"protocolVersion": 2, "capabilities": agent_capabilities or {}, "info": INFO}
    conn.receive_data(line(response(rid, result)))
    for sid in sids:
        rid, _ = conn.send_new_session("/tmp")
        conn.receive_data(line(response(rid, {"sessionId": sid})))
    conn.data_to_send()
    conn.take_sent_events()
    return conn


class Live:
    """A live connection: the client sends through ``send_*``; the agent's bytes go in."""

    def __init__(self, *, initialize: bool = True) -> None:
        self.conn = Connection()
        self.sent: list[Any] = []
        self.events: list[Event] = []
        if initialize:  # C1: a live client's first request (a test may send its own again)
            self.initialize()

    def wrote(self, data: bytes) -> None:
        """Record bytes the client wrote (one JSON message per line)."""
        for raw in data.splitlines():
            if raw.strip():
                self.sent.append(json.loads(raw))

    def agent(self, *msgs: Any) -> list[Event]:
        """Messages from the agent, as bytes; whatever the client owes is collected."""
        out: list[Event] = []
        for m in msgs:
            out += self.conn.receive_data(line(m))
        self.wrote(self.conn.data_to_send())
        self.events += out
        return out

    def upd(self, *upds: dict[str, Any], sid: str = SID) -> list[Event]:
        """``session/update`` notifications for one session."""
        return self.agent(*(update(u, sid) for u in upds))

    def initialize(self, **capabilities: Any) -> int | str:
        """``initialize`` advertising ``capabilities`` (e.g. ``elicitation={"form": {}}``)."""
        rid, data = self.conn.send_initialize(capabilities=ClientCapabilities(**capabilities))
        self.wrote(data)
        self.agent(response(rid, {"protocolVersion": 2, "capabilities": {}, "info": INFO}))
        return rid

    def new_session(self, sid: str = SID, result: dict[str, Any] | None = None) -> int | str:
        """``session/new`` answered with ``sid``."""
        rid, data = self.conn.send_new_session("/tmp")
        self.wrote(data)
        self.agent(response(rid, {"sessionId": sid, **(result or {})}))
        return rid

    def prompt(self, t: str = "hello", sid: str = SID) -> int | str:
        """Send a prompt; return its request id."""
        rid, data = self.conn.send_prompt(sid, t)
        self.wrote(data)
        return rid

    def cancel(self, sid: str = SID) -> None:
        """Send ``session/cancel``."""
        self.wrote(self.conn.send_cancel(sid))

    def answers(self, rid: int | str) -> list[Any]:
        """Everything the client wrote in answer to request ``rid``."""
        return [m for m in self.sent if "method" not in m and m.get("id") == rid]

    def snap(self) -> dict[str, Any]:
        """The whole snapshot."""
        return self.conn.snapshot()

    def session(self, sid: str = SID) -> dict[str, Any]:
        """One session's snapshot object."""
        for s in self.snap()["sessions"]:
            if s["sessionId"] == sid:
                return s
        raise KeyError(sid)

    def codes(self) -> list[str]:
        """Diagnostic codes so far."""
        return [d.code for d in self.conn.diagnostics]


_DECODER = Decoder()


def decode_update(upd: dict[str, Any], sid: str = SID) -> Any:
    """Decode one update dict (leniently) into the Struct ``Session.apply`` takes."""
    message = _DECODER.decode(line(update(upd, sid)).strip())
    return message.params.update  # type: ignore[union-attr]


def apply(session: Session, upd: dict[str, Any]) -> Event:
    """Decode and apply one update to a bare Session."""
    return session.apply(decode_update(upd, session.session_id))


def empty_session(sid: str = SID, **overrides: Any) -> dict[str, Any]:
    """An expected SESSION object with the defaults of an empty session, then overrides."""
    base: dict[str, Any] = {
        "sessionId": sid,
        "announced": False,
        "completedTurns": [],
        "timeline": [],
        "terminals": [],
        "plans": [],
        "notices": [],
        "prompts": [],
        "permissionRequests": [],
        "unknownUpdates": [],
        "unretained": [],
    }
    base.update(overrides)
    return base


def message_entry(role: str, mid: str, *blocks: Any, **extra: Any) -> dict[str, Any]:
    """An expected MESSAGE entry (str blocks become text blocks)."""
    content = [text(b) if isinstance(b, str) else b for b in blocks]
    return {"entry": "message", "messageId": mid, "role": role, "content": content, **extra}


def tool_entry(tcid: str, **fields: Any) -> dict[str, Any]:
    """An expected TOOL_CALL entry with the effective defaults."""
    out: dict[str, Any] = {
        "entry": "toolCall",
        "toolCallId": tcid,
        "kind": "other",
        "status": "pending",
        "content": [],
        "locations": [],
    }
    out.update(fields)
    return out


def handshake_lines(sid: str = SID) -> list[dict[str, Any]]:
    """A v2 log's opening: initialize and its answer, session/new answered with ``sid``."""
    caps: dict[str, Any] = {"capabilities": {}}
    return [
        request(
            0, "initialize", {"protocolVersion": 2, "info": {"name": "c", "version": "1"}, **caps}
        ),
        response(0, {"protocolVersion": 2, "info": {"name": "a", "version": "1"}, **caps}),
        request(1, "session/new", {"cwd": "/w", "mcpServers": []}),
        response(1, {"sessionId": sid}),
    ]
