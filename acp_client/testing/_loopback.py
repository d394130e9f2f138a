"""Playing scripted agents against a client connection, without processes or sockets.

* :class:`Loopback` plays a :class:`~acp_client.testing.FakeAgent` script into a
  :class:`~acp_client.Connection`: the agent's messages as wire bytes through
  ``receive_data`` (the byte path a live client uses), the client's as recorded messages.
* :class:`ScriptedAgent` is a sans-IO agent that *reacts*: it takes the bytes a client
  writes and returns the bytes the agent answers with, built by per-method handlers that
  return FakeAgent scripts. Pump it with in-memory streams to test a transport.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import msgspec

from .._codec import loads
from .._connection import Connection
from .._events import Event
from ._fake_agent import FakeAgent

__all__ = ["Handler", "Loopback", "ScriptedAgent"]

Message = dict[str, Any]
Handler = Callable[[Message, FakeAgent], None]
"""Reacts to one client message by appending the agent's answer to a ``FakeAgent``."""

_ENC = msgspec.json.Encoder()


class Loopback:
    """Connects a scripted exchange to a client connection.

    Args:
        connection: the connection under test (default: a passive one, since the client's
            messages come from the script too).

    Example:
        >>> from acp_client.testing import FakeAgent, Loopback
        >>> script = FakeAgent("s1").prompt(1, "hi").prompt_response(1, "u1")
        >>> loop = Loopback()
        >>> _ = loop.play(script.user_message("u1", "hi"))
        >>> loop.connection.prompt(1).echoed
        True
    """

    def __init__(self, connection: Connection | None = None) -> None:
        self.connection = connection if connection is not None else Connection(live=False)

    def play(
        self,
        script: FakeAgent | Iterable[tuple[str, Message]],
        *,
        split: int | None = None,
    ) -> list[Event]:
        """Apply every message of ``script`` in order; return the events.

        Incoming messages go through ``receive_data`` as newline-delimited bytes (cut into
        pieces of ``split`` bytes when given, to exercise framing); outgoing ones through
        ``receive_message``.

        Raises:
            ValueError: ``split`` is given and not a positive number of bytes.
        """
        if split is not None and split < 1:
            raise ValueError(f"split must be a positive number of bytes, not {split!r}")
        pairs = script.messages if isinstance(script, FakeAgent) else list(script)
        events: list[Event] = []
        for direction, message in pairs:
            if direction == "incoming":
                data = _ENC.encode(message) + b"\n"
                step = split or len(data)
                for start in range(0, len(data), step):
                    events.extend(self.connection.receive_data(data[start : start + step]))
            else:
                events.extend(self.connection.receive_message(message, "outgoing"))
        return events


def _initialize(message: Message, agent: FakeAgent) -> None:
    agent.initialize_response(message["id"])


def _new_session(message: Message, agent: FakeAgent) -> None:
    agent.new_session_response(message["id"])


def _prompt(message: Message, agent: FakeAgent) -> None:
    rid = message["id"]
    params = message.get("params")
    prompt = params.get("prompt") if isinstance(params, dict) else None
    if not isinstance(prompt, list):
        agent.error(rid, -32602, "session/prompt: `prompt` must be an array of content blocks")
        return
    user_id = f"u{rid}"
    agent.prompt_response(rid, user_id).user_message(user_id, prompt)
    agent.state("running").agent_chunk(f"a{rid}", "OK").state("idle", stop_reason="end_turn")


def _cancel(message: Message, agent: FakeAgent) -> None:
    agent.state("idle", stop_reason="cancelled")


def _close(message: Message, agent: FakeAgent) -> None:
    agent.close_response(message["id"])


DEFAULT_HANDLERS: Mapping[str, Handler] = {
    "initialize": _initialize,
    "session/new": _new_session,
    "session/prompt": _prompt,
    "session/cancel": _cancel,
    "session/close": _close,
}


def _error(code: int, message: str) -> Message:
    """An error response with ``id: null`` (a message whose id could not be read)."""
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}


class ScriptedAgent:
    """A sans-IO fake agent: client bytes in, agent bytes out.

    Args:
        handlers: per method, a function that appends the agent's reaction to a
            ``FakeAgent``; merged over sensible defaults (``initialize``, ``session/new``,
            ``session/prompt`` answered and echoed then a short turn ending ``end_turn``,
            ``session/cancel`` ending the turn ``cancelled``, ``session/close``). A request
            with no handler is answered -32601; a line that is not JSON -32700, an entry
            that is no object -32600 (``id: null``), a prompt without a ``prompt`` array
            -32602.
        session_id: the session id the defaults create.
        on_response: called with each response the client sends (permission answers).

    Attributes:
        received: every message the client sent, parsed, in order.
    """

    def __init__(
        self,
        handlers: Mapping[str, Handler] | None = None,
        *,
        session_id: str = "sess_1",
        on_response: Handler | None = None,
    ) -> None:
        self.handlers = {**DEFAULT_HANDLERS, **(handlers or {})}
        self.session_id = session_id
        self.on_response = on_response
        self.received: list[Message] = []
        self._pending = b""

    def receive_data(self, data: bytes) -> bytes:
        """Feed bytes the client wrote; return the bytes the agent writes back."""
        data = self._pending + data
        *lines, self._pending = data.split(b"\n")
        out = FakeAgent(self.session_id)
        for line in lines:
            if not line.strip():
                continue
            try:
                message = loads(line)  # also what msgspec refuses: a lone surrogate escape
            except (ValueError, RecursionError):
                out.send("incoming", _error(-32700, "Parse error: the line is not JSON"))
                continue
            items = message if isinstance(message, list) else [message]
            if not items:
                out.send("incoming", _error(-32600, "Invalid Request: an empty batch"))
            for item in items:
                if isinstance(item, dict):
                    self._react(item, out)
                else:
                    out.send("incoming", _error(-32600, "Invalid Request: not an object"))
        return out.to_bytes("incoming")

    def _react(self, message: Message, out: FakeAgent) -> None:
        self.received.append(message)
        method = message.get("method")
        if method is None:
            if self.on_response is not None:
                self.on_response(message, out)
            return
        handler = self.handlers.get(method)
        if handler is not None:
            handler(message, out)
        elif "id" in message:
            out.error(message["id"], -32601, f"method not found: {method}")
