"""Record shapes and the per-format mapping to message and stderr records.

Implements LOG-FORMATS.md 1.3 (the shape tests), 1.7 (checking the unwrapped message, batch
splitting) and sections 2-7 (each format's record -> ``(direction, message)`` mapping).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any, Literal, Protocol, TypeAlias

from acp_client.logs._message import classify
from acp_client.logs._pairing import Item, Msg, Pairing, Sink
from acp_client.logs._records import FormatId, LogRecord, RecordDirection

__all__ = ["SHAPE_OF_FORMAT", "Host", "Mapper", "Shape", "detect_format", "shape"]

Shape: TypeAlias = Literal["zed", "conductor", "capture", "acp", "jsonrpc"]

SHAPE_OF_FORMAT: dict[FormatId, Shape] = {
    "jsonrpc": "jsonrpc",
    "acp-client": "acp",
    "python-sdk": "acp",
    "capture": "capture",
    "zed": "zed",
    "conductor": "conductor",
}

_CONDUCTOR_TYPES = frozenset({"request", "response", "notification"})
_ZED_TYPES = frozenset({"request", "response", "notification", "stderr"})
_PROXY_INITIALIZE = frozenset({"_proxy/initialize", "proxy/initialize", "initialize/proxy"})
_OTHER: dict[str, RecordDirection] = {"incoming": "outgoing", "outgoing": "incoming"}
_CAPTURE_DIRS: dict[str, RecordDirection] = {"in": "incoming", "out": "outgoing"}
_MISSING: Any = object()


def _is_message(value: dict[str, Any]) -> bool:
    """Shape test 6: looks like a bare JSON-RPC message."""
    return (
        "jsonrpc" in value
        or type(value.get("method")) is str
        or ("id" in value and ("result" in value or "error" in value))
    )


def shape(value: Any) -> Shape | None:
    """The shape of a JSON value by the tests of LOG-FORMATS.md 1.3, or ``None``."""
    if type(value) is dict:
        if "_direction" in value:
            return "zed"
        kind = value.get("type")
        if type(kind) is str and kind in _CONDUCTOR_TYPES and "from" in value and "to" in value:
            return "conductor"
        if "dir" in value and "msg" in value:
            return "capture"
        if "direction" in value and ("message" in value or "text" in value or "raw" in value):
            return "acp"
        return "jsonrpc" if _is_message(value) else None
    if type(value) is list:
        if value and type(value[0]) is dict and "_direction" in value[0]:
            return "zed"
        if all(type(e) is dict and _is_message(e) for e in value):
            return "jsonrpc"
    return None


def detect_format(value: Any, found: Shape) -> FormatId:
    """The format id a first record of shape ``found`` selects."""
    if found == "acp":
        return "acp-client" if "time" in value else "python-sdk"
    if found == "capture":
        return "capture"
    return found


def _describe_shape(found: Shape) -> str:
    return {
        "zed": "a zed entry",
        "conductor": "a conductor event",
        "capture": "a capture record",
        "acp": "an acp-client/python-sdk record",
        "jsonrpc": "a bare JSON-RPC message",
    }[found]


class Host(Protocol):
    """What the mapper needs from the reader."""

    pairing: Pairing

    def push(self, item: Item) -> None:
        """Hand an item to the pipeline (perspective, then pairing)."""

    def error(self, code: str, line: int | None, message: str) -> None:
        """Report an error diagnostic (may stop reading in strict mode)."""

    def warn(self, code: str, line: int | None, message: str) -> None:
        """Report a warning diagnostic."""


class Mapper:
    """Turns the records of one format into message and stderr records."""

    def __init__(self, host: Host, fmt: FormatId) -> None:
        self._host = host
        self._fmt = fmt
        self._shape = SHAPE_OF_FORMAT[fmt]
        self._check_version = self._shape not in ("zed", "conductor")
        self._mcp_requests: set[tuple[Any, str, str]] = set()
        handlers: dict[Shape, Callable[[int, Any], None]] = {
            "jsonrpc": self._jsonrpc,
            "acp": self._acp,
            "capture": self._capture,
            "zed": self._zed,
            "conductor": self._conductor,
        }
        self.handler = handlers[self._shape]
        """Map one record known to have the file's shape: ``handler(line, value)``."""
        self.shape = self._shape
        self._push: Callable[[Item], None] = host.push
        self._bypassed = False

    def bypass(self, sink: Sink) -> None:
        """Hand items straight to ``sink`` from now on (a settled perspective stage)."""
        self._push = sink.push
        self._bypassed = True

    def passes_updates(self, pairing: Pairing) -> bool:
        """Whether a well-formed agent ``session/update`` record needs no per-record step now.

        Formats with a direction per record (and the jsonrpc one, inferred or fixed) only;
        an acp-client or python-sdk log once its perspective is settled client-side.
        """
        shape = self._shape
        if shape == "acp":
            return self._bypassed and pairing.passes_through()
        return shape in ("jsonrpc", "capture") and pairing.passes_through()

    def record(self, line: int, value: Any, found: Shape | None) -> None:
        """Map one record (a parsed line, or a document-mode value) of shape ``found``."""
        if found == self._shape:
            self.handler(line, value)
        else:
            self._wrong_shape(line, found)

    def _wrong_shape(self, line: int, found: Shape | None) -> None:
        if found is None:
            self._host.error(
                "malformed-record", line, f"not a record of any known format (expected {self._fmt})"
            )
        else:
            self._host.error(
                "format-mismatch",
                line,
                f"{_describe_shape(found)} in a {self._fmt} log (first line of another log?)",
            )

    # -- shared ---------------------------------------------------------------------------

    def _messages(
        self,
        value: Any,
        line: int,
        direction: RecordDirection | None,
        time: float | None = None,
        clock: Literal["epoch", "relative"] | None = None,
        origin: dict[str, Any] | None = None,
    ) -> None:
        """Check and hand on one message, or each message of a batch (1.7)."""
        if type(value) is not list:
            self._message(value, line, direction, None, time, clock, origin)
            return
        if not value:
            self._host.warn("empty-batch", line, "empty batch [] holds no message")
            return
        size = len(value)
        kept: list[Msg] = []
        for index, element in enumerate(value):
            msg = self._message(element, line, direction, (index, size), time, clock, origin)
            if msg is not None:
                kept.append(msg)
        if direction is None:
            self._host.pairing.end_batch(line, kept)

    def _message(
        self,
        value: Any,
        line: int,
        direction: RecordDirection | None,
        batch: tuple[int, int] | None,
        time: float | None,
        clock: Literal["epoch", "relative"] | None,
        origin: dict[str, Any] | None,
    ) -> Msg | None:
        """Check one message (1.7); hand it on and return it, or report why not."""
        version = value.get("jsonrpc", _MISSING) if type(value) is dict else _MISSING
        if version is not _MISSING and version != "2.0":
            self._invalid(line, batch, f'"jsonrpc" is {version!r}, expected "2.0"')
            return None
        kind_id = classify(value)
        if isinstance(kind_id, str):
            self._invalid(line, batch, kind_id)
            return None
        kind, rid = kind_id
        if version is _MISSING and self._check_version:
            where = "" if batch is None else f"batch element {batch[0]}: "
            self._host.warn(
                "missing-jsonrpc-version", line, f'{where}no "jsonrpc" member; accepted as 2.0'
            )
        method = value["method"] if kind != "response" else None
        msg = Msg(value, kind, rid, method, line, direction, batch, time, clock, origin)
        self._push(msg)
        return msg

    def _invalid(self, line: int, batch: tuple[int, int] | None, why: str) -> None:
        where = "" if batch is None else f"batch element {batch[0]}: "
        self._host.error("invalid-jsonrpc", line, where + why)

    def _time(self, record: dict[str, Any], key: str, line: int) -> float | None:
        if key not in record:
            return None
        value = record[key]
        if type(value) is float and math.isfinite(value):
            return value
        if type(value) is int:
            try:
                return float(value)
            except OverflowError:
                pass
        self._host.warn("bad-time", line, f'"{key}" is {value!r}, not a finite number; dropped')
        return None

    def _stderr(
        self,
        text: str,
        line: int,
        time: float | None,
        clock: Literal["epoch", "relative"] | None,
        origin: dict[str, Any] | None = None,
    ) -> None:
        self._push(
            LogRecord(
                kind="stderr",
                line=line,
                format=self._fmt,
                text=text,
                time=time,
                clock=clock if time is not None else None,
                origin=origin,
            )
        )

    # -- formats --------------------------------------------------------------------------

    def _jsonrpc(self, line: int, value: Any) -> None:
        self._messages(value, line, None)

    def _acp(self, line: int, record: dict[str, Any]) -> None:
        raw_direction = record["direction"]
        message = record.get("message")
        if (
            raw_direction == "incoming"
            and type(message) is dict
            and message.get("method") == "session/update"
            and "id" not in message
            and message.get("jsonrpc") == "2.0"
        ):
            # The bulk of every log: a well-formed notification from the agent. It needs
            # none of the checks below (1.7 classification gives "notification").
            value = record.get("time")
            if type(value) is float and math.isfinite(value):
                time: float | None = value
            else:
                time = self._time(record, "time", line)
            pairing = getattr(self._push, "__self__", None)
            if (
                type(pairing) is Pairing
                and pairing.direct_ok()
                and pairing.side_of("session/update") == "incoming"
            ):
                # Settled client-side and nothing held for the look-ahead: the record is
                # final as it is (what the pairing would do with it, without the steps).
                pairing.emit(
                    LogRecord(
                        kind="message",
                        line=line,
                        format=self._fmt,
                        direction="incoming",
                        message=message,
                        time=time,
                        clock="epoch" if time is not None else None,
                    )
                )
                return
            self._push(
                Msg(
                    message,
                    "notification",
                    None,
                    "session/update",
                    line,
                    "incoming",
                    None,
                    time,
                    "epoch" if time is not None else None,
                )
            )
            return
        host = self._host
        if raw_direction == "stderr":
            text = record.get("text", _MISSING)
            if type(text) is not str:
                host.error("malformed-record", line, 'stderr record without a string "text"')
                return
            time = self._time(record, "time", line)
            self._stderr(text, line, time, "epoch")
            return
        direction = _acp_direction(raw_direction)
        if direction is None:
            host.error(
                "malformed-record",
                line,
                f'"direction" is {raw_direction!r}, not "incoming", "outgoing" or "stderr"',
            )
            return
        if "message" in record:
            time = self._time(record, "time", line)
            self._messages(
                record["message"], line, direction, time, "epoch" if time is not None else None
            )
            return
        raw = record.get("raw", _MISSING)
        if direction == "incoming" and type(raw) is str:
            self._time(record, "time", line)
            host.warn("agent-non-json-output", line, f"the Agent wrote a non-JSON line: {raw!r}")
            return
        if raw is not _MISSING:
            what = (
                '"raw" on an outgoing record' if direction == "outgoing" else '"raw" not a string'
            )
            host.error("malformed-record", line, f'{what} (and no "message")')
            return
        host.error("malformed-record", line, f'{direction} record without "message"')

    def _capture(self, line: int, record: dict[str, Any]) -> None:
        host = self._host
        raw_direction = record["dir"]
        msg = record["msg"]
        if raw_direction == "stderr":
            if type(msg) is not str:
                host.error("malformed-record", line, 'stderr record whose "msg" is not a string')
                return
            self._stderr(msg, line, self._time(record, "t", line), "relative")
            return
        direction = _CAPTURE_DIRS.get(raw_direction) if type(raw_direction) is str else None
        if direction is None:
            host.error(
                "malformed-record", line, f'"dir" is {raw_direction!r}, not "in", "out" or "stderr"'
            )
            return
        time = self._time(record, "t", line)
        self._messages(msg, line, direction, time, "relative" if time is not None else None)

    def _zed(self, line: int, value: Any) -> None:
        if type(value) is list:  # the export on one line: each element is a record
            for element in value:
                found = shape(element)
                if found == "zed" and type(element) is dict:
                    self._zed_entry(line, element)
                else:
                    self._wrong_shape(line, found)
        else:
            self._zed_entry(line, value)

    def _zed_entry(self, line: int, entry: dict[str, Any]) -> None:
        host = self._host
        direction = entry["_direction"]
        kind = entry.get("_type", _MISSING)
        origin: dict[str, Any] = {k: entry[k] for k in ("_type", "method") if k in entry}
        if type(kind) is not str or kind not in _ZED_TYPES:
            label = "missing" if kind is _MISSING else repr(kind)
            rid = entry.get("id")
            if direction == "stderr":
                kind = "stderr"
            elif rid is None:
                kind = "notification"
            elif direction in _OTHER and host.pairing.has_pending(_OTHER[direction], rid):
                kind = "response"
            else:
                kind = "request"
            host.warn("zed-unknown-type", line, f'"_type" is {label}; read as {kind} by content')
        params = entry.get("params")
        if kind == "stderr":
            if type(params) is not str:
                host.error("malformed-record", line, 'zed stderr entry whose "params" is not text')
                return
            self._stderr(params, line, None, None, origin)
            return
        if direction != "incoming" and direction != "outgoing":
            host.error(
                "malformed-record",
                line,
                f'zed {kind} entry with "_direction" {direction!r} '
                '(expected "incoming" or "outgoing")',
            )
            return
        message: dict[str, Any] = {"jsonrpc": "2.0"}
        if kind != "notification":
            if "id" not in entry:
                host.error("malformed-record", line, f'zed {kind} entry without "id"')
                return
            message["id"] = entry["id"]
        if kind == "response":
            message["error" if _is_error_object(params) else "result"] = params
        else:
            if "method" not in entry:
                host.error("malformed-record", line, f'zed {kind} entry without "method"')
                return
            message["method"] = entry["method"]
            if params is not None:
                message["params"] = params
        self._messages(message, line, direction, origin=origin)

    def _conductor(self, line: int, event: dict[str, Any]) -> None:
        host = self._host
        sender = event["from"]
        receiver = event["to"]
        if type(sender) is not str or type(receiver) is not str:
            host.error("malformed-record", line, 'conductor event whose "from"/"to" are not text')
            return
        kind = event["type"]
        rid = event.get("id")
        if kind == "response":
            if _forget_mcp(self._mcp_requests, rid, receiver, sender):
                return
            if sender == "Client" or (sender == "Proxy(0)" and receiver != "Client"):
                direction: RecordDirection = "outgoing"
            elif receiver == "Client":
                direction = "incoming"
            else:
                return  # a hop deeper in the chain: skipped, no diagnostic (7)
            if "id" not in event:
                host.error("malformed-record", line, 'conductor response without "id"')
                return
            is_error = event.get("is_error")
            if type(is_error) is not bool or "payload" not in event:
                host.error(
                    "malformed-record",
                    line,
                    'conductor response without boolean "is_error" and "payload"',
                )
                return
            message = {
                "jsonrpc": "2.0",
                "id": rid,
                "error" if is_error else "result": event["payload"],
            }
            origin: dict[str, Any] = {"from": sender, "to": receiver}
        else:
            if event.get("protocol") == "mcp":
                if kind == "request":
                    _remember_mcp(self._mcp_requests, rid, sender, receiver)
                return
            if sender == "Client":
                direction = "outgoing"
            elif receiver == "Client" or receiver == "Proxy(0)":
                direction = "incoming"
            else:
                return  # a hop deeper in the chain: skipped, no diagnostic (7)
            if "id" not in event and kind != "notification":
                host.error("malformed-record", line, f'conductor {kind} without "id"')
                return
            method = event.get("method")
            if type(method) is not str:
                host.error("malformed-record", line, f'conductor {kind} without a string "method"')
                return
            origin = {"from": sender, "to": receiver}
            if method in _PROXY_INITIALIZE:
                origin["method"] = method
                method = "initialize"
            message = {"jsonrpc": "2.0"}
            if kind == "request":
                message["id"] = rid
            message["method"] = method
            params = event.get("params")
            if params is not None:
                message["params"] = params
        time = self._time(event, "ts", line)
        self._messages(
            message, line, direction, time, "relative" if time is not None else None, origin
        )


def _acp_direction(value: Any) -> RecordDirection | None:
    if value == "incoming" or value == "outgoing":
        return value  # type: ignore[no-any-return]
    if type(value) is not str:
        return None
    low = value.lower()
    if low.startswith("streamdirection."):
        low = low[len("streamdirection.") :]
    if low == "incoming":
        return "incoming"
    if low == "outgoing":
        return "outgoing"
    return None


def _is_error_object(value: Any) -> bool:
    """Zed's error test: ``{code: int, message: str, data?}`` and nothing else."""
    return (
        type(value) is dict
        and type(value.get("code")) is int
        and type(value.get("message")) is str
        and value.keys() <= {"code", "message", "data"}
    )


def _remember_mcp(known: set[tuple[Any, str, str]], rid: Any, sender: str, receiver: str) -> None:
    with contextlib.suppress(TypeError):  # an unhashable id is never answered validly
        known.add((rid, sender, receiver))


def _forget_mcp(known: set[tuple[Any, str, str]], rid: Any, sender: str, receiver: str) -> bool:
    try:
        key = (rid, sender, receiver)
        if key in known:
            known.discard(key)
            return True
    except TypeError:
        pass
    return False
