# Owns the byte pump of a live connection (ACP-V2-CLIENT-STATE.md sections 1 and 2.4, live
# mode): reading the agent's stdout into `Connection.receive_data` and its stderr into lines,
# writing what the client owes (answers, cancels) off the reader, waking the callers that wait
# for a response or a state change, and running the host's handlers (permission, agent
# requests, R87, R88). Protocol state, v1 included, lives in the sans-IO Connection; the
# request API is `transport.AgentConnection`. Runs on anyio: trio or asyncio alike.
"""The anyio pump under :class:`acp_client.transport.AgentConnection`, and its errors."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import msgspec
from anyio.streams.memory import MemoryObjectSendStream

from . import _events as ev
from . import _schema as s
from ._arguments import checked_limit
from ._connection import Connection, SentRequest
from ._errors import LocalProtocolError
from ._framing import DEFAULT_MAX_LINE, LineBuffer, head_text
from ._prompts import PermissionState
from ._recorder import Recorder
from ._streams import EventStream, reader, writer
from ._transport_errors import (
    DEFAULT_MAX_UNSENT,
    AgentError,
    AgentExited,
    AgentNotReading,
    Owed,
    RequestFailed,
    RequestTimeout,
)

__all__ = [
    "AgentError",
    "AgentExited",
    "AgentNotReading",
    "DEFAULT_MAX_UNSENT",
    "PermissionHandler",
    "RequestHandler",
    "Pump",
    "RequestFailed",
    "RequestTimeout",
]

PermissionHandler = Callable[[PermissionState], Awaitable[str | None]]
"""Decides a permission request: return an offered ``optionId``, or ``None`` (cancelled).

It runs in the connection's task group: if it raises, or returns an option the request did
not offer (:class:`~acp_client.LocalProtocolError`), that error ends the connection and
leaves :func:`open_agent` (a bug in the client, never a silent hang)."""

RequestHandler = Callable[[Any], Awaitable[Any]]
"""Answers one request of the agent's: called with its ``params``, returns the ``result``.

``params`` is the request's ``params`` as plain JSON (dicts, lists, strings...), for
``elicitation/create``, an extension method or a v1 agent's ``fs/*`` and ``terminal/*``
request alike; the result must encode as JSON. It runs in the
connection's task group; if it raises (an ``Exception``) the agent gets a -32603 error and
the connection a diagnostic, and the connection goes on (R88)."""

_READ_BLOCK = 1 << 16
_APPLY_SLICE = 1 << 14  # bytes of a read applied between two checkpoints


def _connection(
    restore: Mapping[str, Any] | None,
    limits: tuple[int | None, int | None],
    max_line: int,
    extension_methods: set[str],
    unstable: Collection[str],
) -> Connection:
    """The pump's live connection: a new one, or one restored from a snapshot (R92).

    ``limits``: the connection's ``terminal_limit`` and ``block_limit``.
    """
    options: dict[str, Any] = {
        "terminal_limit": limits[0],
        "block_limit": limits[1],
        "max_line": max_line,
        "extension_methods": extension_methods,
        "unstable": unstable,
    }
    if restore is None:
        return Connection(**options)
    return Connection.restore(restore, **options)


class Pump:
    """Moves bytes between an agent's streams and a :class:`~acp_client.Connection`.

    See :class:`acp_client.transport.AgentConnection` (the arguments are its own).
    """

    STDERR_LINES_KEPT = 1000
    """How many of the agent's latest stderr lines :attr:`stderr_lines` keeps at least."""

    def __init__(
        self,
        send_stream: Any,
        receive_stream: Any,
        *,
        stderr_stream: Any = None,
        recorder: Recorder | None = None,
        on_permission: PermissionHandler | None = None,
        handlers: Mapping[str, RequestHandler] | None = None,
        request_timeout: float | None = None,
        max_line: int = DEFAULT_MAX_LINE,
        terminal_limit: int | None = None,
        unstable: Collection[str] = (),
        restore: Mapping[str, Any] | None = None,
        max_unsent: int = DEFAULT_MAX_UNSENT,
        block_limit: int | None = None,
    ) -> None:
        checked_limit("max_unsent", max_unsent, 1)
        self._handlers = dict(handlers or {})
        if "session/request_permission" in self._handlers:
            raise ValueError("permission requests are decided by on_permission, not a handler")
        served = set(self._handlers) - {"elicitation/create"}
        limits = (terminal_limit, block_limit)
        self.connection = _connection(restore, limits, max_line, served, unstable)
        self.stderr_lines: list[str] = []
        self._send = writer(send_stream)
        self._receive = reader(receive_stream)
        self._stderr = reader(stderr_stream) if stderr_stream is not None else None
        self._recorder = recorder
        self._on_permission = on_permission
        self._timeout = request_timeout
        self._max_line = max_line
        self._write_lock = anyio.Lock()
        self._kick = anyio.Event()  # what the reader owes the agent waits for the writer
        self._responses: dict[int | str, ev.ResponseReceived] = {}
        self._owed = Owed(max_unsent)
        self._waiting: dict[int | str, anyio.Event] = {}
        self._changed: dict[str, anyio.Event] = {}
        self._deciding: dict[int, tuple[PermissionState, anyio.CancelScope]] = {}
        self._subscribers: list[MemoryObjectSendStream[ev.Event]] = []
        self._closed = anyio.Event()
        self._exited = anyio.Event()  # set by the process watcher of open_agent
        self._process_watched = False
        self._tasks: anyio.abc.TaskGroup | None = None
        self.exit_error: AgentError | None = None
        self.exit_status: int | None = None
        """The agent process's exit status once it exited (``None`` before, or with no process)."""

    # ------------------------------------------------------------------ running

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Pump the streams until the agent closes its stdout.

        Run it in a task group with ``await group.start(agent.run)`` (a trio nursery's
        ``start`` works too).
        """
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            if self._stderr is not None:
                tasks.start_soon(self._read_stderr)
            task_status.started()
            async with anyio.create_task_group() as pump:
                # The reader never waits on a write: an agent that sends many requests
                # before it reads the answers would otherwise block both sides for good.
                pump.start_soon(self._writer)
                await self._read_stdout()
                pump.cancel_scope.cancel()

    @property
    def closed(self) -> bool:
        """Whether the agent's stdout has ended."""
        return self._closed.is_set()

    @property
    def protocol_version(self) -> int | None:
        """The negotiated protocol version (1 means the v1 adapter is in use)."""
        return self.connection.protocol_version

    def events(self) -> EventStream[ev.Event]:
        """A stream of every event from now on (each call is a new subscriber).

        It is an :class:`~acp_client.transport.EventStream` (``async for event in events``,
        ``receive()``, ``receive_nowait()``, ``close()``; the same on trio and asyncio). It
        ends when the agent's output ends (at once if it already has). Close it (``with
        agent.events() as events:``, or ``events.close()``) to unsubscribe: a subscriber
        nobody reads keeps every event it is sent.
        """
        send, receive = anyio.create_memory_object_stream[ev.Event](math.inf)
        if self._closed.is_set():
            send.close()  # nothing more will come
        else:
            self._subscribers.append(send)
        return EventStream(receive)

    async def _read_stdout(self) -> None:
        ended = False
        try:
            while True:
                data = await self._receive.read(_READ_BLOCK)
                # A read of short junk lines is thousands of diagnostics: applied in slices,
                # so the live view, the signals and the writer get their turns in between.
                for start in range(_APPLY_SLICE, len(data), _APPLY_SLICE):
                    self._incoming(data[start - _APPLY_SLICE : start])
                    await anyio.lowlevel.checkpoint()
                self._incoming(data[(len(data) - 1) // _APPLY_SLICE * _APPLY_SLICE :])
                if not data:
                    break
            ended = True  # the output ended (not a cancellation of the reader)
        except AgentNotReading as exc:
            self.exit_error = exc
            raise
        finally:
            self.connection.connection_lost()
            if ended and self._process_watched and not self._exited.is_set():
                # Output ends as the process exits: wait a moment to name its status.
                with anyio.CancelScope(shield=True) as scope:
                    scope.deadline = anyio.current_time() + 0.5
                    await self._exited.wait()
            status = self.exit_status
            if not isinstance(self.exit_error, AgentNotReading):
                self.exit_error = AgentExited(
                    "the agent closed its output"
                    if status is None
                    else f"the agent exited with status {status}",
                    status,
                )
            self._closed.set()
            for event in self._waiting.values():
                event.set()
            for event in self._changed.values():
                event.set()
            for channel in self._subscribers:
                channel.close()
            self._subscribers = []

    async def _read_stderr(self) -> None:
        assert self._stderr is not None
        lines = LineBuffer(self._max_line)
        while True:
            data = await self._stderr.read(_READ_BLOCK)
            items = lines.feed(data) if data else lines.flush()
            for line in items:
                if isinstance(line, bytes):
                    text = line.decode("utf-8", errors="replace")
                else:  # too long to keep: a trace of it, so nothing vanishes unseen
                    text = f"[a stderr line of {line.size} bytes, dropped: {head_text(line.head)}]"
                self.stderr_lines.append(text)
                if len(self.stderr_lines) > 2 * self.STDERR_LINES_KEPT:
                    del self.stderr_lines[: -self.STDERR_LINES_KEPT]  # amortised O(1)
                if self._recorder is not None:
                    self._recorder.stderr(text)
            if not data:
                return

    def _incoming(self, data: bytes) -> None:
        """Bytes the agent wrote (``b""``: its output ended), recorded, into the connection."""
        if self._recorder is not None:
            self._recorder.incoming(data, self._max_line)
        conn = self.connection
        events = conn.receive_data(data) if data else conn.receive_eof()
        self._owed.add(conn.data_to_send())
        self._kick.set()  # before the events wake anyone: what is owed goes out first
        self._dispatch(events)
        self._owed.check(conn)

    async def _writer(self) -> None:
        """Write what reading owes the agent (answers, cancels), in order, off the reader."""
        while True:
            await self._kick.wait()
            self._kick = anyio.Event()
            try:
                await self._flush()
            except AgentExited:
                return  # the agent stopped reading; the reader reports how it ended

    def _dispatch(self, events: list[ev.Event]) -> None:
        for event in events:
            kind = type(event)
            if kind is ev.ResponseReceived:
                rid = event.request_id  # type: ignore[attr-defined]
                waiter = self._waiting.get(rid)
                if waiter is not None:
                    self._responses[rid] = event  # type: ignore[assignment]
                    waiter.set()
            elif kind is ev.InvalidMessageReceived:
                self._malformed_response(event)  # type: ignore[arg-type]
            elif kind is ev.StateChanged or kind is ev.PromptAccepted:
                self._notify(event.session_id)  # type: ignore[attr-defined]
            elif kind is ev.PermissionRequested:
                self._permission(event)  # type: ignore[arg-type]
            elif kind is ev.PermissionWithdrawn or kind is ev.PermissionAnswered:
                self._close_decided()
            elif kind is ev.AgentRequestReceived:
                self._agent_request(event)  # type: ignore[arg-type]
            for channel in self._subscribers:
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    channel.send_nowait(event)
        if any(_is_closed(c) for c in self._subscribers):
            self._unsubscribe()

    def _unsubscribe(self) -> None:
        """Forget the subscribers that closed their stream (closing the sending side too)."""
        kept = []
        for channel in self._subscribers:
            if _is_closed(channel):
                channel.close()
            else:
                kept.append(channel)
        self._subscribers = kept

    def _malformed_response(self, event: ev.InvalidMessageReceived) -> None:
        """Not a response (LOG-FORMATS 1.7), but meant for a call that waits: fail that call.

        The connection leaves the request pending, as a replay of the recording does (both
        ``result`` and ``error``, neither, or an id like ``2.0``); the caller must not hang.
        """
        raw = event.error.raw
        if not isinstance(raw, dict) or "method" in raw:
            return
        rid = raw.get("id")
        if type(rid) is float and rid.is_integer():
            rid = int(rid)
        if not isinstance(rid, int | str) or isinstance(rid, bool) or rid in self._responses:
            return
        waiter = self._waiting.get(rid)
        if waiter is None:
            return
        error = s.Error(code=-32603, message=f"malformed response: {event.error}", data=raw)
        self._responses[rid] = ev.ResponseReceived(
            request_id=rid, method="", result=None, error=error, session_id=None
        )
        waiter.set()

    def _notify(self, session_id: str) -> None:
        event = self._changed.pop(session_id, None)
        if event is not None:
            event.set()

    def _gone(self, when: str) -> AgentExited:
        """The agent is gone: say how (exit status, when known) and what it interrupted."""
        reason = str(self.exit_error) if self.exit_error is not None else "the agent is gone"
        return AgentExited(f"{reason} {when}", self.exit_status)

    async def _wait_change(self, session_id: str, when: str) -> None:
        """Wait for the session's next state change (the caller checks its condition again).

        Raises:
            AgentExited: the agent is gone (checked before waiting: the last lines it sent
                may have met the caller's condition).
        """
        if self._closed.is_set():
            raise self._gone(when)
        event = self._changed.get(session_id)
        if event is None:
            event = self._changed[session_id] = anyio.Event()
        await event.wait()

    def _permission(self, event: ev.PermissionRequested) -> None:
        session = self.connection.session(event.session_id)
        perm = session.permissions.get(event.request_id)
        if perm is None or perm.status != "pending" or self._tasks is None:
            return
        self._tasks.start_soon(self._decide_permission, perm)

    def _agent_request(self, event: ev.AgentRequestReceived) -> None:
        """A request the connection left to the host: its handler answers it (R87)."""
        rid = event.request_id
        if rid not in self.connection.pending_agent_requests():
            return  # answered by the connection already (-32601, -32602)
        handler = self._handlers.get(event.method)
        if handler is None or self._tasks is None:
            self._owed.add(self.connection.answer_unhandled(rid))
        else:
            self._tasks.start_soon(_serve, self, handler, event)

    async def _decide_permission(self, perm: PermissionState) -> None:
        option: str | None = None
        if perm.status != "pending":
            return  # answered or withdrawn before this task started
        if self._on_permission is not None:
            with anyio.CancelScope() as scope:
                self._deciding[id(perm)] = (perm, scope)
                try:
                    option = await self._on_permission(perm)
                finally:
                    self._deciding.pop(id(perm), None)
            if scope.cancelled_caught:
                return  # the request was answered or withdrawn meanwhile
        if (
            perm.status != "pending"
            or perm.request_id not in self.connection.pending_agent_requests()
        ):
            return
        offered = [o.option_id for o in getattr(perm.request, "options", [])]
        if option is not None and option not in offered:
            # A bug of the handler's: fail loudly rather than leave the agent waiting.
            raise LocalProtocolError(
                f"on_permission returned {option!r} for permission request "
                f"{perm.request_id!r}, which offered {offered!r}"
            )
        try:
            self._owed.add(self.connection.answer_permission(perm.request_id, option))
        except LocalProtocolError:
            return  # the agent reused the id for another request: that one is decided on its own
        with contextlib.suppress(AgentExited):  # it stopped reading: the reader says how it ended
            await self._flush()

    def _close_decided(self) -> None:
        """Stop deciding permission requests that are no longer pending (answered, withdrawn)."""
        for perm, scope in list(self._deciding.values()):
            if perm.status != "pending":
                scope.cancel()

    # ------------------------------------------------------------------ writing

    async def _send_locked(self, data: bytes) -> None:
        """Record and write ``data`` (the caller holds the write lock)."""
        if self._recorder is not None:
            for line in data.splitlines():
                if line:
                    self._recorder.message("outgoing", line)
        self._owed.in_flight = len(data)
        try:
            await self._send.write(data)
        except anyio.BrokenResourceError as exc:
            raise AgentExited(f"cannot write to the agent: {exc}") from exc
        finally:
            self._owed.in_flight = 0

    async def _write_owed_locked(self) -> None:
        """Write what is owed already (the caller holds the write lock, about to build)."""
        while data := self._take_owed():
            await self._send_locked(data)

    def _take_owed(self) -> bytes:
        """What reading owes the agent, in order; forgotten here (the caller writes it)."""
        return self._owed.take() + self.connection.data_to_send()

    async def _flush(self) -> None:
        """Write everything owed, in order.

        The bytes are taken under the write lock, so a flush that finds nothing knows that
        whatever was owed before it has been written.
        """
        while True:
            sent = self.connection.take_sent_events()
            if sent:
                self._dispatch(sent)
            async with self._write_lock:
                data = self._take_owed()
                if not data:
                    return
                await self._send_locked(data)

    async def _call(self, method: str, params: Any) -> Any:
        _, result = await self._send_request(
            method, lambda: self.connection.send_request(method, params)
        )
        return result

    async def _send_request(
        self, method: str, build: Callable[[], SentRequest]
    ) -> tuple[SentRequest, Any]:
        """Build a request with ``build``, write it and wait for its result.

        The request is built under the write lock, right before it is written: a call
        cancelled while it waits for the lock has sent nothing, and the connection's state
        (a pending prompt, a session) and the recording agree. What was owed before goes
        out first; what building it owes (a close's permission answers) follows it.
        """
        if self._closed.is_set():
            raise self._gone(f"before {method} was sent")
        waiter = anyio.Event()
        sent: SentRequest | None = None
        written = False
        try:
            async with self._write_lock:
                await self._write_owed_locked()
                # asyncio's lock is no checkpoint: a caller cancelled by now sends nothing
                await anyio.lowlevel.checkpoint_if_cancelled()
                sent = build()
                self._waiting[sent.request_id] = waiter
                await self._send_locked(sent.data)
            written = True
            await self._flush()
            if self._closed.is_set():
                waiter.set()
            if self._timeout is None:
                await waiter.wait()
            else:
                with anyio.move_on_after(self._timeout) as scope:
                    await waiter.wait()
                if scope.cancelled_caught:
                    raise RequestTimeout(f"no response to {method} within {self._timeout} s")
        finally:
            if sent is not None:
                self._waiting.pop(sent.request_id, None)
                if written and not waiter.is_set():
                    self._withdraw(sent.request_id)  # never one the agent did not get
        response = self._responses.pop(sent.request_id, None)
        if response is None:
            raise self._gone(f"before answering {method}")
        if response.error is not None:
            raise RequestFailed(method, response.error)
        return sent, response.result

    def _withdraw(self, rid: int | str) -> None:
        """Nobody waits for ``rid`` any more (cancelled, timed out): ``$/cancel_request`` it.

        The agent may still answer (a prompt it inserted anyway, say); the connection
        reconciles whatever comes (section 10.5). Queued for the writer: no waiting here.
        """
        if self._closed.is_set():
            return
        try:
            self._owed.add(self.connection.send_cancel_request(rid))
        except LocalProtocolError:
            return  # answered meanwhile
        self._kick.set()

    async def aclose(self) -> None:
        """Close the agent's stdin (the agent should exit).

        What reading still owes the agent (answers to its last requests) is written first,
        for at most a second (an agent that no longer reads cannot hold the close up).
        """
        try:
            # Shielded: a cancelled caller still writes what is owed (bounded), then closes.
            deadline = anyio.current_time() + 1.0
            with (
                anyio.CancelScope(deadline=deadline, shield=True),
                contextlib.suppress(AgentExited),
            ):
                await self._flush()  # under the write lock: a write in progress ends first
        finally:
            await self._send.aclose()


async def _serve(pump: Pump, handler: RequestHandler, event: ev.AgentRequestReceived) -> None:
    """Await the host's handler and owe its answer; a failure is a -32603 (R88)."""
    rid = event.request_id
    conn = pump.connection
    result: Any = None
    failure: str | None = None
    try:
        result = await handler(event.params)
    except Exception as exc:  # the host's bug: the agent gets an error, never a hang
        failure = f"{type(exc).__name__}: {exc}"
    if rid not in conn.pending_agent_requests():
        return  # withdrawn meanwhile (its answer was sent then)
    try:
        if failure is None:
            data = conn.answer_request(rid, result)
        else:
            data = conn.answer_unhandled(rid, failure)
    except (TypeError, ValueError, msgspec.EncodeError) as exc:
        data = conn.answer_unhandled(rid, f"its result cannot be encoded: {exc}")
    pump._owed.add(data)
    with contextlib.suppress(AgentExited):  # it stopped reading: the reader says how it ended
        await pump._flush()


def _is_closed(channel: MemoryObjectSendStream[ev.Event]) -> bool:
    return bool(channel.statistics().open_receive_streams == 0)
