# Owns the protocol switch of a replayed log (V1-TO-V2.md sections 1.3 and 9, LOG-FORMATS.md
# 1.4): each connection of a log speaks its own version, decided from the `initialize` answer
# or the first message only one version has (messages are held back until then), a v1
# connection without client traffic in its first records is replayed in degraded mode, and
# every v1 message is routed through the adapter, which leaves an `AdapterOrigin` for each
# message it produced or changed when asked to. The live counterpart is `switch.py`.
"""The protocol switch of a log replay: which version each connection speaks, and v1 routing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from .. import _events as ev
from .._diagnostics import Diagnostic
from .detect import detect_v1, v1_hint
from .switch import Connection, _describe, _verdict

if TYPE_CHECKING:  # imported when a v1 log is met: a v2 one never loads the adapter
    from .adapter import V1Adapter

__all__ = ["DECIDE_WITHIN", "AdapterOrigin", "LogSwitch", "Replay"]

DECIDE_WITHIN = 10_000
"""Messages held back at most while a connection's version (or degraded mode) is undecided."""


class Replay(Protocol):
    """What the switch needs of the replay driving it (:class:`acp_client.Replayer`)."""

    @property
    def connection(self) -> Connection: ...

    diagnostics: list[Diagnostic]
    stopped: bool

    def error_mark(self) -> tuple[int, int]: ...

    def _stop_on_error(self, mark: tuple[int, int]) -> None: ...

    def _note_failures(self, events: list[ev.Event], line: int | None) -> None: ...


def _claims_v2(message: Any) -> bool:
    """Whether ``message`` is an ``initialize`` answer saying protocol version 2."""
    result = message.get("result") if isinstance(message, dict) else None
    return isinstance(result, dict) and result.get("protocolVersion") == 2


def _changed(out: Any, message: Any) -> bool:
    """Whether the v1 adapter changed ``message`` (a rebuilt equal dict is no change)."""
    return out is not message and not (type(out) is dict and out == message)


class AdapterOrigin(msgspec.Struct, frozen=True, gc=False):
    """Where events of a v1 replay came from (V1-TO-V2.md 1.2): the adapter, not the Agent.

    One per v2 message the v1 adapter produced or changed that gave events; messages it
    passed through unchanged have none.

    Attributes:
        events: the events that message gave, in order.
        message: the v2 message the adapter produced (translated or made up).
        source: the raw v1 message it came from; ``None`` for what the adapter made up at
            the end of a connection.
        line: the log line of ``source``.
        tag: always ``"v1-adapter"``.
    """

    events: tuple[ev.Event, ...]
    message: Any
    source: Any
    line: int | None
    tag: str = "v1-adapter"


class LogSwitch:
    """Decides per connection of a log whether it speaks v1, and routes its messages.

    Args:
        replay: the replay it serves (its connection, diagnostics and strictness).
        protocol: ``1`` or ``2`` to force the version, ``None`` to detect it.
        origins: where to keep an :class:`AdapterOrigin` for each message the adapter
            produced or changed (``None``: not kept).
    """

    def __init__(
        self, replay: Replay, *, protocol: int | None, origins: list[AdapterOrigin] | None
    ) -> None:
        self._replay = replay
        if protocol is not None and (type(protocol) is not int or protocol not in (1, 2)):
            raise ValueError(f"protocol must be 1, 2 or None (detect it), not {protocol!r}")
        self.version = protocol
        """The version of the current connection (``None`` while undecided)."""
        self._forced = protocol
        self._origins = origins
        self.buffer: list[tuple[str, Any, int | None]] = []
        """Messages held back until the version (or degraded mode) is decided."""
        self.adapter: V1Adapter | None = None  # the current connection's, when it is v1
        self._v1: V1Adapter | None = None  # one for every v1 connection of the log
        self._client_seen = False  # the current connection has a client message
        self._probing = False  # v1 without client traffic so far: an agent-only log?
        self._hint = False  # the undecided connection's initialize used v1 field names
        # the connection's initialize answer claimed v2: held until a message tells (as the
        # live switch's probation does), since an agent may claim v2 and speak v1
        self._claimed = False
        self._spoke_v1 = False  # ...and then spoke v1: its sessions say protocol version 1
        # v1 requests the adapter renamed (session/load is a session/resume), by id: a
        # failure is reported under the method the log holds
        self._renamed: dict[Any, str] = {}
        if protocol == 1:
            self._decide(1)

    @property
    def truncated_terminals(self) -> frozenset[tuple[str, str]]:
        """The v1 client terminals whose latest output the client cut at its byte limit."""
        if self._v1 is None:
            return frozenset()
        return frozenset(self._v1.truncated_terminals)

    def logged_method(self, request_id: Any, method: str) -> str:
        """The method a response's request has in the log (``session/load`` in v1)."""
        if self._renamed and method == "session/resume":
            return self._renamed.pop(request_id, method)
        return method

    # ------------------------------------------------------------------- feeding

    def feed(self, direction: str, message: Any, line: int | None) -> list[ev.Event]:
        """One message of the log (counted already): held back, or applied with what waits."""
        events: list[ev.Event] = []
        if (
            self.version is not None
            and self._forced is None
            and direction == "outgoing"
            and isinstance(message, dict)
            and message.get("method") == "initialize"
            and "id" in message
        ):
            # A new connection (LOG-FORMATS.md 1.4): it speaks its own version.
            events = self.end_connection()
            self.version = None
            self._client_seen = False
            self._claimed = self._spoke_v1 = False
        if direction == "outgoing":
            self._client_seen = True
            if self._v1 is not None and self._v1.agent_only and not self._probing:
                # Degraded mode was chosen after many agent-only records; the client's own
                # traffic shows from here: no more made-up states (V1-TO-V2.md 9).
                self._v1.agent_only = False
        if self.version is None:
            if self._claimed and direction == "incoming":
                verdict = _verdict(message, 2)  # as the live switch reads a claimed v2
            else:
                verdict = detect_v1(direction, message)
            self._hint = self._hint or v1_hint(direction, message)
            if verdict is False and not self._claimed and _claims_v2(message):
                self._claimed = True  # a claim, not yet a verdict: what follows tells
                verdict = None
            elif verdict and self._claimed:
                self._speaks_v1(message, line)
            if verdict is None and len(self.buffer) < DECIDE_WITHIN:
                self.buffer.append((direction, message, line))
                return events
            claimed = self._claimed and verdict is None  # nothing told: as it claimed
            self._decide(1 if verdict or (verdict is None and self._hint and not claimed) else 2)
        if self._probing:
            if not self._client_seen and len(self.buffer) < DECIDE_WITHIN:
                self.buffer.append((direction, message, line))
                return events
            self._settle_probe()
        events.extend(self._flush())
        if not self._replay.stopped:
            events.extend(self.apply(direction, message, line))
        if self._spoke_v1:
            self.settle_v1()
        return events

    def _speaks_v1(self, message: Any, line: int | None) -> None:
        """The agent claimed v2 and sent a v1 message: say so; the log is read as v1."""
        text = (
            "the agent speaks ACP v1: it answered initialize with protocol version 2 but sent"
            f" {_describe(message)}; its traffic is read as v1 (--protocol 1 forces it)"
        )
        self._replay.diagnostics.append(
            Diagnostic(code="agent-speaks-v1", message=text, severity="warning", line=line)
        )
        self._spoke_v1 = True

    def _settle_probe(self) -> None:
        """Decide whether the v1 connection is an agent-only log (V1-TO-V2.md 9).

        Without a client message in its first records, the adapter's degraded mode
        synthesises the ``running`` states the missing prompts would have caused.
        """
        self._probing = False
        if self._v1 is not None:
            self._v1.agent_only = not self._client_seen

    def _decide(self, version: int) -> None:
        self.version = version
        if version == 1 and self._v1 is None:
            # One adapter for every v1 connection of the log: a session that continues in a
            # later connection keeps counting its synthetic ids (V1-TO-V2.md 4.1).
            from .adapter import V1Adapter

            self._v1 = V1Adapter()
        self.adapter = self._v1 if version == 1 else None
        if self._v1 is not None:
            self._v1.agent_only = False
        self.settle_v1()  # known from here on, also before the log's initialize answer
        # A v1 connection waits for its first client message (or the end of its records)
        # before anything is applied: without one, it is replayed in degraded mode.
        self._probing = version == 1 and not self._client_seen

    def _flush(self) -> list[ev.Event]:
        replay = self._replay
        events: list[ev.Event] = []
        buffered, self.buffer = self.buffer, []
        for direction, message, line in buffered:
            mark = replay.error_mark()
            events.extend(self.apply(direction, message, line))
            replay._stop_on_error(mark)
            if replay.stopped:
                break
        return events

    def apply(self, direction: str, message: Any, line: int | None) -> list[ev.Event]:
        """Apply one message to the connection, through the adapter in a v1 connection."""
        replay = self._replay
        conn = replay.connection
        adapter = self.adapter
        if adapter is None:
            got = conn.receive_message(message, direction, line=line)
            replay._note_failures(got, line)
            return got
        events: list[ev.Event] = []
        before = len(adapter.diagnostics)
        if (
            direction == "outgoing"
            and type(message) is dict
            and message.get("method") == "session/load"
        ):
            rid = message.get("id")
            if isinstance(rid, int | str) and not isinstance(rid, bool):
                self._renamed[rid] = "session/load"
        for out_direction, out_message in adapter.feed(direction, message, line=line):
            got = conn.receive_message(out_message, out_direction, line=line)
            if self._origins is not None and got and _changed(out_message, message):
                self._origins.append(AdapterOrigin(tuple(got), out_message, message, line))
            events.extend(got)
        replay._note_failures(events, line)
        self._collect(before)
        return events

    def _collect(self, before: int) -> None:
        adapter = self.adapter
        if adapter is not None and len(adapter.diagnostics) > before:
            self._replay.diagnostics.extend(adapter.diagnostics[before:])

    def end_connection(self) -> list[ev.Event]:
        """The end of a connection's traffic (a new ``initialize`` or the end of the log)."""
        replay = self._replay
        events: list[ev.Event] = []
        if self.version is None:
            self._decide(1 if self._hint and not self._claimed else 2)
        self._hint = False
        if self._probing:
            self._settle_probe()
        events.extend(self._flush())
        adapter = self.adapter
        if adapter is not None and not replay.stopped:
            mark = replay.error_mark()
            before = len(adapter.diagnostics)
            for out_direction, out_message in adapter.finish():
                got = replay.connection.receive_message(out_message, out_direction)
                if self._origins is not None and got:
                    self._origins.append(AdapterOrigin(tuple(got), out_message, None, None))
                replay._note_failures(got, None)
                events.extend(got)
            self._collect(before)
            replay._stop_on_error(mark)
        self.settle_v1()
        return events

    def settle_v1(self) -> None:
        """A v1 connection's sessions (and the connection) say protocol version 1."""
        if self.adapter is None:
            return
        conn = self._replay.connection
        spoke = self._spoke_v1  # it claimed v2: what it claimed gives way to what it spoke
        if conn.protocol_version is None or spoke:
            conn.protocol_version = 1
        for session in conn.sessions.values():
            if session.protocol_version is None or spoke:
                session.protocol_version = 1
