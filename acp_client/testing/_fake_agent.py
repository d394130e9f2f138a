"""FakeAgent: a scripted ACP v2 exchange, built one message at a time.

Each builder call appends one ``(direction, message)`` pair, where ``direction`` is
``"incoming"`` (agent to client) or ``"outgoing"`` (client to agent) and ``message`` is
a JSON-RPC object as a plain dict. The script can then be played into a reducer, turned
into newline-delimited wire bytes, or written in every stored-log format that the
replay reader accepts (LOG-FORMATS.md).
"""

from __future__ import annotations

import base64
import json
from typing import Any, NamedTuple, Self

import msgspec

__all__ = ["LOG_FORMATS", "FakeAgent", "StoredLog", "log_lines"]

Message = dict[str, Any]
Exchange = list[tuple[str, Message]]

LOG_FORMATS = ("jsonrpc", "acp-client", "capture", "python-sdk", "zed", "conductor")
"""Format ids of LOG-FORMATS.md, in the order of that document."""

_EPOCH = 1796083200.0
_DEFAULT_OPTIONS = (
    {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
)


class StoredLog(NamedTuple):
    """A conversation written in one stored-log format.

    Attributes:
        format: the LOG-FORMATS.md format id (``"zed"``, ``"conductor"``, ...).
        text: the file content.
        messages: the ``(direction, message)`` pairs the file encodes, in order; what a
            replay reader should produce from ``text``.
    """

    format: str
    text: str
    messages: Exchange


def _text_blocks(content: Any) -> list[Any] | None:
    """A ``str`` becomes one text block; lists and ``None`` pass through."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content  # type: ignore[no-any-return]


def _block(content: Any) -> Any:
    if isinstance(content, str):
        return {"type": "text", "text": content}
    return content


class FakeAgent:
    """A scripted conversation of one session, both directions, valid ACP v2 by default.

    Example::

        agent = FakeAgent("sess_1")
        agent.prompt(1, "Fix the test").prompt_response(1, "u1")
        agent.user_message("u1", "Fix the test").state("running")
        agent.agent_chunk("a1", "Done.").state("idle", stop_reason="end_turn")
        agent.messages[0]
        # ('outgoing', {'jsonrpc': '2.0', 'id': 1, 'method': 'session/prompt', ...})
        agent.to_bytes()  # the agent's stdout, newline-delimited compact JSON

    Builder methods return ``self`` so calls chain. :meth:`in_session` gives a builder
    for another session that appends to the same script.
    """

    def __init__(self, session_id: str = "sess_1", *, _messages: Exchange | None = None) -> None:
        self.session_id = session_id
        self._messages: Exchange = _messages if _messages is not None else []

    # -- plumbing ------------------------------------------------------------------------

    @property
    def messages(self) -> Exchange:
        """The ``(direction, message)`` pairs appended so far (a new list)."""
        return list(self._messages)

    def in_session(self, session_id: str) -> FakeAgent:
        """A builder for ``session_id`` that appends to this same script."""
        return FakeAgent(session_id, _messages=self._messages)

    def send(self, direction: str, message: Message) -> Self:
        """Append any raw message (for traffic the builders do not cover)."""
        if direction not in ("incoming", "outgoing"):
            raise ValueError(f"direction must be 'incoming' or 'outgoing', not {direction!r}")
        self._messages.append((direction, message))
        return self

    def _in(self, message: Message) -> Self:
        return self.send("incoming", {"jsonrpc": "2.0", **message})

    def _out(self, message: Message) -> Self:
        return self.send("outgoing", {"jsonrpc": "2.0", **message})

    def to_bytes(self, direction: str | None = "incoming") -> bytes:
        """Newline-delimited compact JSON of one direction (``None``: both, in order)."""
        return b"".join(
            msgspec.json.encode(m) + b"\n"
            for d, m in self._messages
            if direction is None or d == direction
        )

    def log_lines(self, format: str) -> list[str]:
        """The exchange as the lines of a stored log in ``format`` (see :func:`log_lines`)."""
        return log_lines(self._messages, format)

    def log_text(self, format: str) -> str:
        """The exchange as the text of a stored log file in ``format``."""
        return "".join(line + "\n" for line in self.log_lines(format))

    # -- agent -> client: session/update -------------------------------------------------

    def update(self, update: Message, *, meta: Any = None) -> Self:
        """Append a ``session/update`` notification carrying ``update`` verbatim."""
        params: Message = {"sessionId": self.session_id, "update": update}
        if meta is not None:
            params["_meta"] = meta
        return self._in({"method": "session/update", "params": params})

    def _message(self, kind: str, message_id: str, content: Any) -> Self:
        """A message update of ``kind`` carrying ``content`` as it is."""
        return self.update({"sessionUpdate": kind, "messageId": message_id, "content": content})

    def user_message(self, message_id: str, content: Any) -> Self:
        """``user_message`` (``content``: a ``str``, a block list, or ``None`` to clear)."""
        return self._message("user_message", message_id, _text_blocks(content))

    def user_chunk(self, message_id: str, content: Any) -> Self:
        """``user_message_chunk`` (``content``: a ``str`` or one block)."""
        return self._message("user_message_chunk", message_id, _block(content))

    def agent_message(self, message_id: str, content: Any) -> Self:
        """``agent_message`` with the whole content."""
        return self._message("agent_message", message_id, _text_blocks(content))

    def agent_chunk(self, message_id: str, text: Any) -> Self:
        """``agent_message_chunk`` (``text``: a ``str`` or one block)."""
        return self._message("agent_message_chunk", message_id, _block(text))

    def thought(self, message_id: str, content: Any) -> Self:
        """``agent_thought`` with the whole content."""
        return self._message("agent_thought", message_id, _text_blocks(content))

    def thought_chunk(self, message_id: str, text: Any) -> Self:
        """``agent_thought_chunk``."""
        return self._message("agent_thought_chunk", message_id, _block(text))

    def tool_call(self, tool_call_id: str, **fields: Any) -> Self:
        """``tool_call_update``; ``fields`` use wire names (``title``, ``rawInput`` ...)."""
        return self.update(
            {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, **fields}
        )

    def tool_content_chunk(self, tool_call_id: str, content: Any) -> Self:
        """``tool_call_content_chunk``; a ``str`` becomes a ``content`` text item."""
        if isinstance(content, str):
            content = {"type": "content", "content": {"type": "text", "text": content}}
        u = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": tool_call_id}
        return self.update({**u, "content": content})

    def terminal(self, terminal_id: str, **fields: Any) -> Self:
        """``terminal_update``; ``output=b"..."`` becomes a base64 output snapshot."""
        if isinstance(fields.get("output"), bytes | bytearray):
            fields["output"] = {"data": base64.b64encode(fields["output"]).decode("ascii")}
        return self.update(
            {"sessionUpdate": "terminal_update", "terminalId": terminal_id, **fields}
        )

    def terminal_chunk(self, terminal_id: str, data: bytes) -> Self:
        """``terminal_output_chunk`` carrying ``data`` base64-encoded on its own."""
        return self.update(
            {
                "sessionUpdate": "terminal_output_chunk",
                "terminalId": terminal_id,
                "data": base64.b64encode(data).decode("ascii"),
            }
        )

    def plan(self, plan_id: str, entries: list[Any]) -> Self:
        """``plan_update`` of type ``items``; ``str`` entries become pending medium entries."""
        items = [
            {"content": e, "priority": "medium", "status": "pending"} if isinstance(e, str) else e
            for e in entries
        ]
        plan = {"type": "items", "planId": plan_id, "entries": items}
        return self.update({"sessionUpdate": "plan_update", "plan": plan})

    def usage(self, used: int, size: int, cost: Any = None) -> Self:
        """``usage_update``; ``cost`` is a Cost dict or ``(amount, currency)``; ``None`` omits."""
        u: Message = {"sessionUpdate": "usage_update", "used": used, "size": size}
        if isinstance(cost, tuple):
            cost = {"amount": cost[0], "currency": cost[1]}
        if cost is not None:
            u["cost"] = cost
        return self.update(u)

    def state(self, state: str, stop_reason: str | None = None, background: Any = None) -> Self:
        """``state_update``; ``stop_reason`` and ``background`` are omitted when ``None``."""
        u: Message = {"sessionUpdate": "state_update", "state": state}
        if stop_reason is not None:
            u["stopReason"] = stop_reason
        if background is not None:
            u["background"] = background
        return self.update(u)

    def commands(self, commands: list[Any]) -> Self:
        """``available_commands_update``; ``(name, description)`` pairs become commands."""
        items = [
            {"type": "command", "name": c[0], "description": c[1]} if isinstance(c, tuple) else c
            for c in commands
        ]
        return self.update(
            {"sessionUpdate": "available_commands_update", "availableCommands": items}
        )

    def config_options(self, options: list[Any]) -> Self:
        """``config_option_update`` with the complete option list."""
        return self.update({"sessionUpdate": "config_option_update", "configOptions": options})

    def session_info(self, **fields: Any) -> Self:
        """``session_info_update`` (``title=``, ``updatedAt=``, ``_meta=`` ...)."""
        return self.update({"sessionUpdate": "session_info_update", **fields})

    def notice(self, severity: str, title: str, description: str | None = None) -> Self:
        """``notice``."""
        u: Message = {"sessionUpdate": "notice", "severity": severity, "title": title}
        if description is not None:
            u["description"] = description
        return self.update(u)

    def compaction(self, compaction_id: str, status: str, **fields: Any) -> Self:
        """``compaction_update`` (``summary=``, ``error=``, ``_meta=``)."""
        u = {"sessionUpdate": "compaction_update", "compactionId": compaction_id}
        return self.update({**u, "status": status, **fields})

    def compaction_chunk(self, compaction_id: str, content: Any) -> Self:
        """``compaction_summary_chunk``."""
        u = {"sessionUpdate": "compaction_summary_chunk", "compactionId": compaction_id}
        return self.update({**u, "content": _block(content)})

    def subagent(self, child_id: str, **fields: Any) -> Self:
        """``subagent_update`` announcing (or patching) the child session ``child_id``.

        ACP v2 Preview P1-P5: ``title=``, ``description=``, ``capabilities=``, ``state=``
        (a state snapshot), ``cwd=``, ``additionalDirectories=``, ``_meta=``, as given.
        """
        return self.update({"sessionUpdate": "subagent_update", "sessionId": child_id, **fields})

    def replay_complete(self) -> Self:
        """``replay_complete``: this session's replayed history ends here (Preview P18)."""
        return self.update({"sessionUpdate": "replay_complete"})

    def custom(self, kind: str, **fields: Any) -> Self:
        """An update of a custom or future variant: ``{"sessionUpdate": kind, **fields}``."""
        return self.update({"sessionUpdate": kind, **fields})

    # -- agent -> client: requests and responses -----------------------------------------

    def permission_request(
        self,
        request_id: int | str,
        title: str,
        tool_call_id: str | None = None,
        options: list[Any] | None = None,
    ) -> Self:
        """``session/request_permission``, with a ``tool_call`` subject when an id is given."""
        params: Message = {
            "sessionId": self.session_id,
            "title": title,
            "options": list(options)
            if options is not None
            else [dict(o) for o in _DEFAULT_OPTIONS],
        }
        if tool_call_id is not None:
            params["subject"] = {"type": "tool_call", "toolCall": {"toolCallId": tool_call_id}}
        return self._in(
            {"id": request_id, "method": "session/request_permission", "params": params}
        )

    def cancel_request(self, request_id: int | str) -> Self:
        """The agent's ``$/cancel_request`` withdrawing its own request ``request_id``."""
        return self._in({"method": "$/cancel_request", "params": {"requestId": request_id}})

    def result(self, request_id: int | str, result: Any) -> Self:
        """A success response from the agent."""
        return self._in({"id": request_id, "result": result})

    def error(self, request_id: int | str, code: int, message: str) -> Self:
        """An error response from the agent."""
        return self._in({"id": request_id, "error": {"code": code, "message": message}})

    def prompt_response(self, request_id: int | str, message_id: str) -> Self:
        """Success for ``session/prompt``: the inserted user message's id."""
        return self.result(request_id, {"messageId": message_id})

    def prompt_error(self, request_id: int | str, code: int, message: str) -> Self:
        """Rejection of ``session/prompt`` (not inserted)."""
        return self.error(request_id, code, message)

    def initialize_response(self, request_id: int | str = 0, protocol_version: int = 2) -> Self:
        """The agent's ``initialize`` result."""
        info = {"name": "fake-agent", "version": "1.0.0"}
        result = {
            "protocolVersion": protocol_version,
            "info": info,
            "capabilities": {"session": {}},
        }
        return self.result(request_id, result)

    def new_session_response(
        self,
        request_id: int | str,
        *,
        config_options: list[Any] | None = None,
        available_commands: list[Any] | None = None,
    ) -> Self:
        """The ``session/new`` result naming this builder's session."""
        result: Message = {"sessionId": self.session_id}
        if config_options is not None:
            result["configOptions"] = config_options
        if available_commands is not None:
            result["availableCommands"] = available_commands
        return self.result(request_id, result)

    def resume_response(
        self,
        request_id: int | str,
        *,
        config_options: list[Any] | None = None,
        available_commands: list[Any] | None = None,
    ) -> Self:
        """The ``session/resume`` result."""
        result: Message = {}
        if config_options is not None:
            result["configOptions"] = config_options
        if available_commands is not None:
            result["availableCommands"] = available_commands
        return self.result(request_id, result)

    def close_response(self, request_id: int | str) -> Self:
        """The ``session/close`` result ``{}``."""
        return self.result(request_id, {})

    # -- client -> agent -----------------------------------------------------------------

    def initialize(self, request_id: int | str = 0, *, respond: bool = True) -> Self:
        """The client's ``initialize`` (protocol 2), and the agent's answer if ``respond``."""
        info = {"name": "fake-client", "version": "1.0.0"}
        params = {"protocolVersion": 2, "info": info, "capabilities": {}}
        self._out({"id": request_id, "method": "initialize", "params": params})
        return self.initialize_response(request_id) if respond else self

    def new_session(
        self, request_id: int | str, *, cwd: str = "/work", respond: bool = True
    ) -> Self:
        """``session/new``, and its result naming this session if ``respond``."""
        params = {"cwd": cwd, "mcpServers": []}
        self._out({"id": request_id, "method": "session/new", "params": params})
        return self.new_session_response(request_id) if respond else self

    def resume(self, request_id: int | str, replay: bool = True, *, cwd: str = "/work") -> Self:
        """``session/resume`` (with ``replayFrom: {type: start}`` when ``replay``).

        The response is separate (:meth:`resume_response`) because the replayed updates
        come before it.
        """
        params: Message = {"sessionId": self.session_id, "cwd": cwd}
        if replay:
            params["replayFrom"] = {"type": "start"}
        return self._out({"id": request_id, "method": "session/resume", "params": params})

    def close(self, request_id: int | str) -> Self:
        """``session/close``."""
        params = {"sessionId": self.session_id}
        return self._out({"id": request_id, "method": "session/close", "params": params})

    def prompt(
        self, request_id: int | str, text: Any, *, idempotency_key: str | None = None
    ) -> Self:
        """``session/prompt`` (``text``: a ``str`` or a non-empty block list).

        ``idempotency_key``: sent as ``idempotencyKey`` (ACP v2 Preview P26-P30); send the
        same text under the same key again to script a retry.
        """
        params = {"sessionId": self.session_id, "prompt": _text_blocks(text)}
        if idempotency_key is not None:
            params["idempotencyKey"] = idempotency_key
        return self._out({"id": request_id, "method": "session/prompt", "params": params})

    def cancel(self) -> Self:
        """The client's ``session/cancel`` notification."""
        return self._out({"method": "session/cancel", "params": {"sessionId": self.session_id}})

    def permission_answer(self, request_id: int | str, option_id: str | None) -> Self:
        """The client's answer: ``selected`` ``option_id``, or ``cancelled`` for ``None``."""
        outcome: Message = (
            {"outcome": "cancelled"}
            if option_id is None
            else {"outcome": "selected", "optionId": option_id}
        )
        return self._out({"id": request_id, "result": {"outcome": outcome}})


# ---------------------------------------------------------------------------------------
# Stored-log writers (LOG-FORMATS.md sections 2-7).


def _compact(value: Any) -> str:
    return msgspec.json.encode(value).decode("utf-8")


def _kind(message: Message) -> str:
    if "method" in message:
        return "request" if "id" in message else "notification"
    return "response"


def log_lines(messages: Exchange, format: str) -> list[str]:
    """Write ``(direction, message)`` pairs as the lines of a stored log in ``format``.

    ``format`` is one of :data:`LOG_FORMATS`. For ``zed`` the result is the lines of one
    pretty-printed JSON array (document mode); for the others, one JSON record per line.
    A replay reader given the joined lines should produce ``messages`` again (with the
    format's own losses: ``zed`` cannot tell an absent ``params`` or ``result`` from
    ``null``).

    Example::

        log_lines([("outgoing", {"jsonrpc": "2.0", "method": "session/cancel",
                                 "params": {"sessionId": "s"}})], "capture")
        # ['{"t":0.0,"dir":"out","msg":{"jsonrpc":"2.0","method":"session/cancel",...}}']
    """
    if format == "jsonrpc":
        return [_compact(m) for _, m in messages]
    if format == "acp-client":
        return [
            _compact({"direction": d, "message": m, "time": round(_EPOCH + i * 0.01, 3)})
            for i, (d, m) in enumerate(messages)
        ]
    if format == "capture":
        return [
            _compact({"t": round(i * 0.01, 3), "dir": "in" if d == "incoming" else "out", "msg": m})
            for i, (d, m) in enumerate(messages)
        ]
    if format == "python-sdk":
        return [json.dumps({"direction": d, "message": m}, ensure_ascii=False) for d, m in messages]
    if format == "zed":
        text = json.dumps(_zed_entries(messages), indent=2, ensure_ascii=False)
        return text.split("\n")
    if format == "conductor":
        return [_compact(e) for e in _conductor_events(messages)]
    raise ValueError(f"unknown log format {format!r}; expected one of {', '.join(LOG_FORMATS)}")


def _zed_entries(messages: Exchange) -> list[Message]:
    pending: dict[tuple[str, str, Any], str] = {}  # (direction, id type, id) -> method
    entries = []
    for d, m in messages:
        kind = _kind(m)
        entry: Message = {"_direction": d, "_type": kind}
        rid = m.get("id")
        if kind == "request":
            pending[(d, type(rid).__name__, rid)] = m["method"]
            entry.update(id=rid, method=m["method"], params=m.get("params"))
        elif kind == "notification":
            entry.update(id=None, method=m["method"], params=m.get("params"))
        else:
            other = "outgoing" if d == "incoming" else "incoming"
            method = pending.pop((other, type(rid).__name__, rid), "[unrecognized response]")
            params: Any
            if "error" in m:
                err = m["error"]
                params = {"code": err["code"], "message": err["message"]}
                if err.get("data") is not None:
                    params["data"] = err["data"]
            else:
                params = m.get("result")
            entry.update(id=rid, method=method, params=params)
        entries.append(entry)
    return entries


def _conductor_events(messages: Exchange) -> list[Message]:
    events = []
    for i, (d, m) in enumerate(messages):
        ends = ("Client", "Agent") if d == "outgoing" else ("Agent", "Client")
        ts = round(i * 0.01, 6)
        kind = _kind(m)
        if kind == "response":
            is_error = "error" in m
            events.append(
                {
                    "type": "response",
                    "ts": ts,
                    "from": ends[0],
                    "to": ends[1],
                    "id": m["id"],
                    "is_error": is_error,
                    "payload": m["error"] if is_error else m.get("result"),
                }
            )
            continue
        event: Message = {"type": kind, "ts": ts, "protocol": "acp", "from": ends[0], "to": ends[1]}
        if kind == "request":
            event["id"] = m["id"]
        event["method"] = m["method"]
        event["params"] = m.get("params")
        events.append(event)
    return events
