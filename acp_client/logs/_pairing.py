"""Directions and response pairing (LOG-FORMATS.md 1.9, 1.10, 1.11 and 2.2).

Theory of operation: every message record passes through :class:`Pairing` in file order.
It keeps one table of pending requests per direction (plus an ``unknown`` table for the
``jsonrpc`` format), keyed by request id. A request enters its direction's table (an
``initialize`` first empties them all); a response removes the matching entry of the other
direction. A response that pairs with nothing is *held*: a placeholder keeps its place in the
output while the next 8 records are examined; if one of them is its request (of the other
direction, with no other record of that direction in between), the response is moved just
behind it (``response-before-request``); otherwise it becomes an ``orphan-response`` in its
original place. Output is released in order up to the first unresolved placeholder.

For the ``jsonrpc`` format, which records no directions, the direction of each message is
inferred from the method-side table, the pending tables and the result signatures (2.2).

:class:`Perspective` sits in front of :class:`Pairing` for the ``acp-client`` and
``python-sdk`` formats: it buffers records until the first request or notification whose
method has a side, and swaps every direction of the file when that record contradicts it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import msgspec

from acp_client._diagnostics import Diagnostic
from acp_client.logs._message import Kind, valid_request_id
from acp_client.logs._records import FormatId, LogRecord, RecordDirection
from acp_client.logs._sides import SideTable, claimed_directions, fits

__all__ = ["LOOK_AHEAD", "Msg", "Pairing", "Perspective", "Sink", "warning"]

LOOK_AHEAD = 8
"""How many records after an unpaired response may hold its request (1.10)."""

_OTHER: dict[str, RecordDirection] = {"incoming": "outgoing", "outgoing": "incoming"}


def warning(code: str, line: int | None, message: str) -> Diagnostic:
    """A warning diagnostic."""
    return Diagnostic(code=code, message=message, severity="warning", line=line)


class Msg(msgspec.Struct, gc=False):
    """A message record under construction (mutable until it is released).

    Not tracked by the garbage collector (it never takes part in a cycle), which keeps the
    per-line cost of large logs low.
    """

    message: dict[str, Any]
    kind: Kind
    id: Any
    method: str | None
    line: int
    direction: RecordDirection | None
    batch: tuple[int, int] | None = None
    time: float | None = None
    clock: Literal["epoch", "relative"] | None = None
    origin: dict[str, Any] | None = None

    def record(self, fmt: FormatId) -> LogRecord:
        """The frozen record."""
        return LogRecord(
            kind="message",
            line=self.line,
            format=fmt,
            direction=self.direction or "unknown",
            message=self.message,
            batch=self.batch,
            time=self.time,
            clock=self.clock,
            origin=self.origin,
        )


Item = Diagnostic | LogRecord | Msg


class Sink:
    """Something that accepts items in order."""

    def push(self, item: Item) -> None:
        """Accept the next item."""
        raise NotImplementedError


class _Pending(NamedTuple):
    """A request awaiting its answer: its method, its line, its place in the log."""

    method: str
    line: int
    seq: int


class _Hold:
    """Placeholder of an unpaired response in the output queue."""

    __slots__ = ("batch_default", "count", "items", "msg", "seen")

    def __init__(self, msg: Msg) -> None:
        self.msg = msg
        self.count = 0
        self.seen: set[str] = set()
        self.items: list[Item] | None = None  # None while unresolved
        self.batch_default: RecordDirection | None = None


class Pairing(Sink):
    """Pending tables, the look-ahead, and (``jsonrpc``) direction inference."""

    def __init__(
        self,
        fmt: FormatId,
        sides: SideTable,
        *,
        infer: bool,
        fixed: RecordDirection | None = None,
    ) -> None:
        self.fmt = fmt
        self._sides = sides
        self._infer = infer
        self._fixed = fixed
        self._tables: dict[str, dict[Any, _Pending]] = {
            "outgoing": {},
            "incoming": {},
            "unknown": {},
        }
        self._seq = 0
        self._out: deque[Item | _Hold] = deque()
        self._holds: list[_Hold] = []
        self._warned_methods: set[str] = set()

    # -- public -------------------------------------------------------------------------

    def push(self, item: Item) -> None:
        """Process the next item in file order."""
        if isinstance(item, Msg):
            if self._fixed is not None:
                item.direction = self._fixed
                self._out.append(item)
            elif item.kind == "response":
                self._response(item)
            else:
                self._request(item)
        elif isinstance(item, LogRecord):
            if self._holds:
                self._observe(None, None)
            self._out.append(item)
        else:
            self._out.append(item)

    def direct_ok(self) -> bool:
        """Whether a final record may skip the queue logic (no held response, no inference)."""
        return not self._holds and not self._infer and self._fixed is None

    def side_of(self, method: str) -> str:
        """The direction ``method`` is sent in, per the side table (``"unknown"`` if none)."""
        return self._sides.get(method, "unknown")

    def emit(self, record: LogRecord) -> None:
        """Queue a record that needs no pairing (see :meth:`direct_ok`)."""
        self._out.append(record)

    def has_pending(self, direction: str, rid: Any) -> bool:
        """Whether a request with ``rid`` is pending in ``direction``'s table."""
        return valid_request_id(rid) and rid in self._tables[direction]

    def end_batch(self, line: int, elements: list[Msg]) -> None:
        """``jsonrpc``: give a batch's elements of unknown direction the batch's direction."""
        if not self._infer or self._fixed is not None:
            return
        known = {m.direction for m in elements if m.direction in ("incoming", "outgoing")}
        if len(known) > 1:
            self._warn(
                "batch-direction-conflict",
                line,
                "elements of one batch were inferred in different directions; each keeps its own",
            )
            return
        if not known:
            return
        direction = known.pop()
        unknown = self._tables["unknown"]
        for m in elements:
            if m.direction == "unknown":
                m.direction = direction
                if m.kind == "request" and m.id in unknown:
                    self._tables[direction][m.id] = unknown.pop(m.id)
            elif m.direction is None:
                for hold in self._holds:
                    if hold.msg is m:
                        hold.batch_default = direction

    def finish(self) -> None:
        """End of input: unresolved held responses become orphans."""
        for hold in self._holds:
            self._orphan(hold)
        self._holds = []

    def release(self) -> list[LogRecord | Diagnostic]:
        """Take the items that are final, in order."""
        out = self._out
        done: list[LogRecord | Diagnostic] = []
        fmt = self.fmt
        while out:
            head = out[0]
            if isinstance(head, _Hold):
                if head.items is None:
                    break
                for item in head.items:
                    done.append(item.record(fmt) if isinstance(item, Msg) else item)
            elif isinstance(head, Msg):
                done.append(head.record(fmt))
            else:
                done.append(head)
            out.popleft()
        return done

    # -- messages -----------------------------------------------------------------------

    def _request(self, msg: Msg) -> None:
        method = msg.method or ""
        side = self._sides.get(method, "unknown")
        if self._infer:
            msg.direction = self._infer_direction(msg, method, side)
        elif side != "unknown" and side != msg.direction:
            self._warn(
                "direction-mismatch",
                msg.line,
                f"{msg.kind} {method!r} is recorded as {msg.direction}, "
                f"but its method is sent {side}; the recorded direction is kept",
            )
        direction = msg.direction or "unknown"
        if msg.kind == "request" and method == "initialize":
            for table in self._tables.values():
                table.clear()
        matched = self._observe(direction, msg) if self._holds else None
        self._out.append(msg)
        if msg.kind != "request":
            return
        if matched is not None:
            self._move_behind(matched, msg)
            return
        table = self._tables[direction]
        if msg.id in table:
            self._warn(
                "duplicate-request-id",
                msg.line,
                f"{direction} request id {msg.id!r} ({method!r}) is already pending "
                f"(line {table[msg.id].line}); the newer request replaces it",
            )
        self._seq += 1
        table[msg.id] = _Pending(method, msg.line, self._seq)

    def _infer_direction(self, msg: Msg, method: str, side: RecordDirection) -> RecordDirection:
        if side != "unknown":
            return side
        if method == "$/cancel_request":
            params = msg.message.get("params")
            target = params.get("requestId") if type(params) is dict else None
            out = self._tables["outgoing"].get(target) if valid_request_id(target) else None
            inc = self._tables["incoming"].get(target) if valid_request_id(target) else None
            if out is not None and inc is not None:
                chosen: RecordDirection = "outgoing" if out.seq > inc.seq else "incoming"
                self._warn(
                    "ambiguous-direction",
                    msg.line,
                    f"$/cancel_request for id {target!r}: the id is pending on both sides "
                    f"(client line {out.line}, Agent line {inc.line}); taken as {chosen} "
                    "(the later request)",
                )
                return chosen
            if out is not None:
                return "outgoing"
            if inc is not None:
                return "incoming"
            self._warn(
                "unknown-direction",
                msg.line,
                f"$/cancel_request for id {target!r}: no pending request has that id; "
                "direction unknown",
            )
            return "unknown"
        if method not in self._warned_methods:
            self._warned_methods.add(method)
            self._warn(
                "unknown-direction",
                msg.line,
                f"method {method!r} has no known side; its messages have direction unknown "
                "(use --side to name it)",
            )
        return "unknown"

    def _response(self, msg: Msg) -> None:
        rid = msg.id
        if self._infer:
            paired = rid is not None and self._pair_inferred(msg)
            if self._holds:
                self._observe(msg.direction if paired else None, msg)
        else:
            if self._holds:
                self._observe(msg.direction, msg)
            table = self._tables[_OTHER[msg.direction or "incoming"]]
            paired = rid is not None and rid in table
            if paired:
                del table[rid]
        if paired:
            self._out.append(msg)
            return
        hold = _Hold(msg)
        self._out.append(hold)
        if rid is None:
            self._orphan(hold)
        else:
            self._holds.append(hold)

    def _pair_inferred(self, msg: Msg) -> bool:
        rid = msg.id
        client = self._tables["outgoing"].get(rid)
        agent = self._tables["incoming"].get(rid)
        if client is not None and agent is not None:
            if "result" in msg.message:
                result = msg.message["result"]
                fits_client = fits(client.method, result)
                fits_agent = fits(agent.method, result)
            else:
                fits_client = fits_agent = False
            if fits_client != fits_agent:
                to_client = fits_client
                why = "its result fits only that method"
            else:
                to_client = client.seq > agent.seq
                why = "the later request wins"
            chosen = client if to_client else agent
            self._warn(
                "ambiguous-response",
                msg.line,
                f"response id {rid!r} is pending on both sides: the client's {client.method!r} "
                f"(line {client.line}) and the Agent's {agent.method!r} (line {agent.line}); "
                f"paired with {chosen.method!r} (line {chosen.line}) because {why}",
            )
            if to_client:
                del self._tables["outgoing"][rid]
                msg.direction = "incoming"
            else:
                del self._tables["incoming"][rid]
                msg.direction = "outgoing"
            return True
        if client is not None:
            del self._tables["outgoing"][rid]
            msg.direction = "incoming"
            return True
        if agent is not None:
            del self._tables["incoming"][rid]
            msg.direction = "outgoing"
            return True
        if rid in self._tables["unknown"]:
            del self._tables["unknown"][rid]
            msg.direction = "unknown"
            return True
        return False

    # -- the look-ahead -----------------------------------------------------------------

    def _observe(self, direction: str | None, msg: Msg | None) -> _Hold | None:
        """Show a new record to every held response; return the hold it answers, if any."""
        matched: _Hold | None = None
        is_request = msg is not None and msg.kind == "request"
        for hold in list(self._holds):
            held = hold.msg
            if matched is None and is_request and msg is not None and self._answers(hold, msg):
                matched = hold
                self._holds.remove(hold)
                continue
            hold.count += 1
            blocked = False
            if direction is not None and direction != "unknown":
                if self._infer:
                    hold.seen.add(direction)
                else:
                    blocked = direction == _OTHER[held.direction or "incoming"]
            if blocked or hold.count >= LOOK_AHEAD:
                self._holds.remove(hold)
                self._orphan(hold)
        return matched

    def _answers(self, hold: _Hold, request: Msg) -> bool:
        held = hold.msg
        if held.id != request.id or type(held.id) is not type(request.id):
            return False
        direction = request.direction or "unknown"
        if self._infer:
            return direction not in hold.seen
        return direction == _OTHER[held.direction or "incoming"]

    def _move_behind(self, hold: _Hold, request: Msg) -> None:
        resp = hold.msg
        if self._infer:
            resp.direction = _OTHER.get(request.direction or "unknown", "unknown")
        hold.items = []
        self._out.append(
            warning(
                "response-before-request",
                resp.line,
                f"response id {resp.id!r} came before its request {request.method!r} "
                f"(line {request.line}); moved behind it",
            )
        )
        self._out.append(resp)

    def _orphan(self, hold: _Hold) -> None:
        msg = hold.msg
        if self._infer:
            # 2.4: a response with id null (about a request nobody could read) is `unknown`
            msg.direction = (
                "unknown"
                if msg.id is None
                else self._orphan_direction(msg) or hold.batch_default or "unknown"
            )
        what = "a response with id null" if msg.id is None else f"response id {msg.id!r}"
        hold.items = [
            warning(
                "orphan-response",
                msg.line,
                f"{what} pairs with no pending request; direction {msg.direction}",
            ),
            msg,
        ]

    def _orphan_direction(self, msg: Msg) -> RecordDirection | None:
        if "result" not in msg.message:
            return None
        claims = claimed_directions(msg.message["result"], self._sides)
        if claims == {"outgoing"}:
            return "incoming"
        if claims == {"incoming"}:
            return "outgoing"
        return None

    def _warn(self, code: str, line: int, message: str) -> None:
        self._out.append(warning(code, line, message))


class Perspective(Sink):
    """Settle the recording side of an ``acp-client`` / ``python-sdk`` log (1.11)."""

    def __init__(self, sink: Sink, sides: SideTable, fixed: Literal["client", "agent"] | None):
        self._sink = sink
        self._sides = sides
        self._decided = fixed is not None
        self._swap = fixed == "agent"
        self._buffer: list[Item] = []
        self.on_settled: Callable[[Sink], None] | None = None
        """Called with the next sink once the log is known to be client-side."""

    def push(self, item: Item) -> None:
        """Accept the next item; pass it on once the perspective is settled."""
        if self._decided:
            if self._swap and isinstance(item, Msg) and item.direction in _OTHER:
                item.direction = _OTHER[item.direction]
            self._sink.push(item)
            return
        if isinstance(item, Msg) and item.kind != "response":
            side = self._sides.get(item.method or "", "unknown")
            if side != "unknown":
                self._decided = True
                self._swap = side != item.direction
                self._flush()
                if not self._swap and self.on_settled is not None:
                    self.on_settled(self._sink)
                if self._swap:
                    self._sink.push(
                        warning(
                            "perspective-swapped",
                            item.line,
                            f"{item.method!r} is recorded as {item.direction} but is sent "
                            f"{side}: the log was recorded on the Agent's side; every "
                            "direction is swapped",
                        )
                    )
                self.push(item)
                return
        self._buffer.append(item)

    def finish(self) -> None:
        """End of input: with no decisive record, the log is taken as client-side."""
        self._decided = True
        self._flush()

    def _flush(self) -> None:
        buffer, self._buffer = self._buffer, []
        for item in buffer:
            self.push(item)
