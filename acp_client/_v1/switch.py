# Owns the live protocol switch (V1-TO-V2.md sections 1.3 and 2, ACP-V2-CLIENT-STATE.md 1.4):
# which protocol a live agent speaks, decided from the `initialize` answer and confirmed or
# corrected by its traffic, and the routing both ways once it speaks v1 (incoming v1 messages
# through the adapter into the v2 connection; outgoing v2 messages in their v1 wire form, their
# record taken from the adapter). The decision is the table `TRANSITIONS`. The passive
# counterpart, for logs, is `LogSwitch` in `logswitch.py`.
"""The protocol switch of a live connection: v1 or v2, and the routing of v1 traffic."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol

from .. import _events as ev
from .. import _schema as s
from .._codec import encode, loads
from .._diagnostics import Diagnostic
from .._framing import LineTooLong
from .detect import detect_v1

if TYPE_CHECKING:  # imported when a v1 agent is met: a v2 one never loads the adapter
    from .adapter import V1Adapter


class Connection(Protocol):
    """What the switches use of :class:`acp_client.Connection` (typed here: no import circle)."""

    diagnostics: list[Diagnostic]
    protocol_version: int | None
    record_sends: bool
    _sent_events: list[ev.Event]
    _inbound: Any  # its ``agent_lines`` counts the agent's lines (malformed-line names them)

    @property
    def sessions(self) -> Mapping[str, Any]: ...

    def receive_line(self, line: bytes) -> list[ev.Event]: ...

    def receive_message(
        self, message: Any, direction: Any = "incoming", *, line: int | None = None
    ) -> list[ev.Event]: ...

    def _line_too_long(self, marker: LineTooLong, events: list[ev.Event]) -> None: ...


__all__ = ["Mode", "ProtocolSwitch", "Signal", "TRANSITIONS", "to_v1_wire"]

Mode = Literal["undecided", "watching", "v1?", "v2?", "v1", "v2"]
"""Where the switch is:

- ``undecided``: no ``initialize`` sent yet (v2 traffic, nothing routed);
- ``watching``: ``initialize`` sent, its answer awaited (traffic taken as v2);
- ``v1?`` / ``v2?``: the answer named that version; the traffic has not confirmed it yet
  (``v1?`` routes through the adapter; ``v2?`` keeps a shadow adapter in step, unapplied);
- ``v1``: every message goes through the adapter; ``v2``: nothing to do (the fast path).
"""

Signal = Literal[
    "initialize-sent", "answer-v1", "answer-v2", "answer-other", "v1-marker", "v2-marker", "settle"
]
"""What moves the switch: the client's ``initialize``, its answer (by protocol version, or
another / unreadable one), a message only one version has (V1-TO-V2.md 1.3), and ``settle``
(the traffic stayed ambiguous for too long, or ended)."""

Effect = Literal[
    "start-adapter", "start-shadow", "adopt-shadow", "drop-shadow", "drop-adapter", None
]

TRANSITIONS: dict[tuple[Mode, Signal], tuple[Effect, Mode]] = {
    ("undecided", "initialize-sent"): (None, "watching"),
    ("watching", "initialize-sent"): (None, "watching"),  # repeated before any other (1.4)
    ("watching", "answer-v1"): ("start-adapter", "v1?"),
    ("watching", "answer-v2"): ("start-shadow", "v2?"),
    ("watching", "answer-other"): (None, "v2"),  # the connection reports the answer (C2)
    ("v2?", "v1-marker"): ("adopt-shadow", "v1"),  # claimed v2, speaks v1: diagnostic
    ("v2?", "v2-marker"): ("drop-shadow", "v2"),
    ("v2?", "settle"): ("drop-shadow", "v2"),
    ("v1?", "v1-marker"): (None, "v1"),
    ("v1?", "v2-marker"): ("drop-adapter", "v2"),  # claimed v1, speaks v2: diagnostic
    ("v1?", "settle"): (None, "v1"),
}
"""``(mode, signal) -> (effect, next mode)``; a pair not listed changes nothing."""

_PROBATION: frozenset[Mode] = frozenset({"v1?", "v2?"})
_ADAPTED: frozenset[Mode] = frozenset({"v1?", "v1"})
_SETTLE_AFTER = 1_000  # messages without a marker before the claimed version is taken
_HOLD_AT_MOST = 1_000  # ambiguous messages held back while a prompt awaits its insertion
_NOT_JSON: Any = object()

#: v2 methods v1 names differently (same params).
_V1_METHODS = {"auth/login": "authenticate", "auth/logout": "logout"}


def to_v1_wire(message: dict[str, Any]) -> dict[str, Any]:
    """The v1 wire form of a message the v2 connection built (V1-TO-V2.md 3.1, 9)."""
    renamed = _V1_METHODS.get(message.get("method"))  # type: ignore[arg-type]
    if renamed is not None:
        return {**message, "method": renamed}
    if message.get("method") == "session/resume":
        params = dict(message.get("params") or {})
        if params.pop("replayFrom", None) is not None:
            params.pop("additionalDirectories", None)
            return {**message, "method": "session/load", "params": params}
    return message


def _parse(line: bytes) -> Any:
    try:
        return loads(line)
    except (ValueError, RecursionError):
        return _NOT_JSON


# v1 update names a v2 agent may send as variants of its own (kept as unknown ones, 3.2):
# no evidence on a live connection that answered initialize with version 2.
_UNKNOWN_IN_V2 = frozenset({"tool_call", "plan", "current_mode_update"})


_CHUNKS = frozenset({"user_message_chunk", "agent_message_chunk", "agent_thought_chunk"})


def _verdict(obj: Any, claimed: int) -> bool | None:
    """Whether an incoming message (or batch) marks v1 (True), v2 (False) or neither.

    ``claimed`` is the version the agent's ``initialize`` answer named: for an agent that
    claimed v2, a chunk with its ``messageId`` is v2 as claimed (v1 allows one too).
    """
    for item in obj if isinstance(obj, list) else (obj,):
        verdict = detect_v1("incoming", item)
        if verdict is None and claimed == 2 and _update_kind(item) in _CHUNKS:
            verdict = False  # one without its messageId is v1 (detect_v1 says so)
        elif verdict and _update_kind(item) in _UNKNOWN_IN_V2:
            verdict = None
        if verdict is not None:
            return verdict
    return None


def _update_kind(item: Any) -> Any:
    params = item.get("params") if isinstance(item, dict) else None
    update = params.get("update") if isinstance(params, dict) else None
    return update.get("sessionUpdate") if isinstance(update, dict) else None


class ProtocolSwitch:
    """Decides whether a live connection's agent speaks v1 or v2, and routes v1 traffic.

    The connection calls it where bytes come in and go out while :attr:`routing` (or
    :attr:`watching`, for what it sends) is true; once the agent is known to speak v2 it is
    never called again, and reading takes the connection's fast path.

    Attributes:
        mode: where the decision stands (see :data:`Mode`).
        adapter: the v1 adapter in use (or kept in step, in mode ``v2?``), else ``None``.
    """

    def __init__(self, conn: Connection, *, live: bool) -> None:
        self._conn = conn
        self.mode: Mode = "v2"
        self.watching = False
        """Whether what the connection sends must go through :meth:`sent`."""
        self.routing = False
        """Whether what the connection reads and owes must go through the switch."""
        self.adapter: V1Adapter | None = None
        self._initialize: dict[str, Any] | None = None  # the client's initialize request
        self._held: list[tuple[bytes | LineTooLong, Any]] = []
        self._unsettled = 0  # messages seen on probation
        self._restored = False  # restored from a snapshot: adapters start seeded (R92)
        self._enter("undecided" if live else "v2")

    def _enter(self, mode: Mode) -> None:
        # Plain attributes, read on every call of the connection's hot paths.
        self.mode = mode
        self.watching = mode != "v2"
        self.routing = mode != "v2" and mode != "undecided"

    @property
    def truncated_terminals(self) -> frozenset[tuple[str, str]]:
        """The v1 client terminals whose latest output was cut at source (see the adapter)."""
        adapter = self.adapter if self.mode in _ADAPTED else None
        return frozenset(adapter.truncated_terminals) if adapter is not None else frozenset()

    # ------------------------------------------------------------------ restoring

    def restored(self, version: int | None) -> None:
        """The connection was restored from a snapshot of a ``version`` agent (R92).

        Live, it goes on in that version (v1: through an adapter seeded from the restored
        sessions) until :meth:`new_connection`; an unknown version stays undecided.
        """
        if self.mode != "undecided":
            return  # passive: a log's switch is the reader's
        self._restored = True
        if version == 1:
            from .adapter import V1Adapter
            from .restore import seed_adapter

            self.adapter = V1Adapter()
            seed_adapter(self.adapter, self._conn.sessions)
            self._conn.record_sends = False
            self._enter("v1")
        elif version == 2:
            self._enter("v2")

    def new_connection(self) -> None:
        """The first ``initialize`` after a restore: decided again, from its answer (R92)."""
        if self._restored:
            self.adapter = None
            self._initialize = None
            self._held = []
            self._unsettled = 0
            self._conn.record_sends = True
            self._enter("undecided")

    # --------------------------------------------------------------- the decision

    def signal(self, signal: Signal, why: str = "") -> None:
        """Move by :data:`TRANSITIONS` and carry out the effect (``why`` names the marker)."""
        step = TRANSITIONS.get((self.mode, signal))
        if step is None:
            return
        effect, mode = step
        self._enter(mode)
        conn = self._conn
        if effect == "start-adapter" or effect == "start-shadow":
            from .adapter import V1Adapter

            self.adapter = V1Adapter()
            if self._restored:
                from .restore import seed_adapter

                seed_adapter(self.adapter, conn.sessions)
            if self._initialize is not None:  # in step from the client's first message
                self.adapter.feed("outgoing", self._initialize)
            conn.record_sends = effect == "start-shadow"
        elif effect == "adopt-shadow":
            conn.record_sends = False
            self._speaks(1, f"it answered initialize with protocol version 2 but sent {why}")
        elif effect == "drop-adapter":
            conn.record_sends = True
            self.adapter = None
            self._speaks(2, f"it answered initialize with protocol version 1 but sent {why}")
        elif effect == "drop-shadow":
            self.adapter = None

    def _speaks(self, version: int, why: str) -> None:
        """The agent speaks another version than it claimed: say so, and take it as spoken."""
        conn = self._conn
        code = f"agent-speaks-v{version}"
        text = f"the agent speaks ACP v{version}: {why}; its traffic is read as v{version}"
        conn.diagnostics.append(Diagnostic(code=code, message=text, severity="warning"))
        conn.protocol_version = version
        for session in conn.sessions.values():
            session.protocol_version = version

    def _answer(self, obj: Any) -> None:
        """The answer to the client's ``initialize`` (if ``obj`` is it) decides the mode."""
        request = self._initialize
        if (
            request is None
            or not isinstance(obj, dict)
            or "method" in obj
            or obj.get("id") != request.get("id")
            or "error" in obj
        ):
            return
        result = obj.get("result")
        self._answered(result.get("protocolVersion") if isinstance(result, dict) else None)

    def _answered(self, version: Any) -> None:
        self.signal(
            "answer-v1" if version == 1 else "answer-v2" if version == 2 else "answer-other"
        )

    # ------------------------------------------------------------------- reading

    def receive_lines(
        self, lines: Iterable[bytes | LineTooLong], *, eof: bool = False
    ) -> list[ev.Event]:
        """Lines the connection framed; with ``eof`` the traffic ended (nothing held back)."""
        events: list[ev.Event] = []
        conn = self._conn
        if self.mode == "watching" and conn.protocol_version is not None:
            self._answered(conn.protocol_version)  # answered through receive_line/_message
        for line in lines:
            if type(line) is not bytes:
                conn._inbound.agent_lines += 1  # counted here: the connection never sees it
                if self._held:  # in order with what is held back
                    self._held.append((line, _NOT_JSON))
                else:
                    conn._line_too_long(line, events)  # type: ignore[arg-type]
            elif line.strip():
                self._line(line, events)
            else:
                conn._inbound.agent_lines += 1  # a blank line, skipped
        if eof and self._held:
            self.signal("settle")
            self._release(events)
        return events

    def _line(self, line: bytes, events: list[ev.Event]) -> None:
        mode = self.mode
        if mode == "v2":  # decided earlier in this read
            events.extend(self._conn.receive_line(line))
            return
        obj = _parse(line)
        if mode == "watching":
            self._answer(obj)
        elif mode in _PROBATION:
            verdict = _verdict(obj, 2 if mode == "v2?" else 1)
            if verdict is None:
                self._unsettled += 1
                adapter = self.adapter
                if (
                    _is_update(obj)
                    and len(self._held) < _HOLD_AT_MOST
                    and (self._held or (adapter is not None and adapter.awaiting_insertion))
                ):
                    # An update after a prompt the agent has not inserted: only the next
                    # marker can tell whether v1's rules insert it here. Held until then.
                    self._held.append((line, obj))
                    self._conn._inbound.agent_lines += 1  # its place; routed later (_release)
                    return
                if self._held or self._unsettled >= _SETTLE_AFTER:
                    self.signal("settle")  # nothing more to wait for: as the agent claimed
            else:
                self.signal("v1-marker" if verdict else "v2-marker", _describe(obj))
                if mode == "v2?" and self.mode == "v1" and self.adapter is not None:
                    for _, update in self.adapter.mode_options():  # lose nothing (6.2)
                        events.extend(self._conn.receive_message(update, "incoming"))
            if self._held and self.mode not in _PROBATION:
                self._release(events)
        self._route(line, obj, events)

    def _release(self, events: list[ev.Event]) -> None:
        held, self._held = self._held, []
        inbound = self._conn._inbound
        for line, obj in held:
            if type(line) is bytes:  # counted when held: routing counts it again
                inbound.agent_lines -= 1
            self._route(line, obj, events)

    def _route(self, line: bytes | LineTooLong, obj: Any, events: list[ev.Event]) -> None:
        conn = self._conn
        if type(line) is not bytes:
            conn._line_too_long(line, events)  # type: ignore[arg-type]
            return
        adapter = self.adapter
        if adapter is None or self.mode not in _ADAPTED:
            events.extend(conn.receive_line(line))
            if adapter is not None and isinstance(obj, dict | list):  # the shadow, in step
                for item in obj if isinstance(obj, list) else (obj,):
                    if isinstance(item, dict):
                        adapter.feed("incoming", item)
            return
        if not isinstance(obj, list | dict):
            events.extend(conn.receive_line(line))  # not a message: the connection says so
            return
        conn._inbound.agent_lines += 1  # a line of the agent's, taken here and not there
        # A batch stays one: its translated messages (and entries that are no message, each
        # answered -32600) go to the connection as one batch, whose replies are one array
        # (JSON-RPC 6, spec 1.5), as a v2 agent's are.
        out: list[tuple[str, Any]] = []
        for item in obj if isinstance(obj, list) else (obj,):
            if isinstance(item, dict):
                out.extend(adapter.feed("incoming", item))
            else:
                out.append(("incoming", item))
        batch = isinstance(obj, list) and (bool(out) or not obj)  # [] is an (empty) batch
        if batch and all(direction == "incoming" for direction, _ in out):
            events.extend(conn.receive_message([message for _, message in out], "incoming"))
            return
        for direction, message in out:
            events.extend(conn.receive_message(message, direction))

    # ------------------------------------------------------------------- sending

    def sent(self, message: s.Message, data: bytes) -> bytes:
        """A message the connection built (``data`` encoded): the bytes to send.

        In v1 they are the message's v1 wire form and its record is the adapter's
        translation (the connection does not record it itself then).
        """
        mode = self.mode
        if mode == "undecided" or mode == "watching":
            if type(message) is s.Request and message.method == "initialize":
                self._initialize = loads(data)
                self.signal("initialize-sent")
            return data
        return self._outgoing(data, responses=False)

    def owed(self, data: bytes) -> bytes:
        """What the connection owes the agent (answers): the bytes to send."""
        return self._outgoing(data, responses=True) if data else data

    def _outgoing(self, data: bytes, *, responses: bool) -> bytes:
        adapter = self.adapter
        if adapter is None:
            return data
        if self.mode not in _ADAPTED:  # the shadow, in step
            for line in data.splitlines():
                obj = _parse(line)
                for item in obj if isinstance(obj, list) else (obj,):
                    if isinstance(item, dict):
                        adapter.feed("outgoing", item)
            return data
        conn = self._conn
        events = conn._sent_events
        out: list[bytes] = []
        for line in data.splitlines():
            if not line:
                continue
            message = loads(line)  # the connection's own encoding (a batch stays one line)
            items = [
                to_v1_wire(item) if isinstance(item, dict) else item
                for item in (message if isinstance(message, list) else [message])
            ]
            # Recorded before the write, as a v2 message is built before it: a write that
            # fails (the agent stopped reading) leaves the state the recording shows.
            for item in items:
                if not isinstance(item, dict):
                    continue
                for direction, translated in adapter.feed("outgoing", item):
                    if responses and direction == "outgoing":
                        continue  # the connection recorded its own answer already
                    events.extend(conn.receive_message(translated, direction))
            out.append(encode(items if isinstance(message, list) else items[0]) + b"\n")
        return b"".join(out)


def _is_update(obj: Any) -> bool:
    """Whether ``obj`` is a ``session/update`` notification (the messages held back)."""
    return isinstance(obj, dict) and obj.get("method") == "session/update" and "id" not in obj


def _describe(obj: Any) -> str:
    """A few words naming a marker message (for the diagnostic)."""
    item = obj[0] if isinstance(obj, list) and obj else obj
    if not isinstance(item, dict):
        return "a message of the other version"
    method = item.get("method")
    params = item.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    if method == "session/update" and isinstance(update, dict):
        return f"a {update.get('sessionUpdate')!r} update"
    if isinstance(method, str):
        return f"a {method!r} message"
    return "a prompt result" if isinstance(item.get("result"), dict) else "a response"
