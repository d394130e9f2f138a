"""Talk to a live agent over stdio with trio (install the ``run`` extra).

This module only pumps bytes: all protocol state lives in the sans-IO
:class:`~acp_client.Connection`. :func:`open_agent` starts an agent process and yields an
:class:`AgentConnection`, an async API shaped for embedding in an editor::

    import trio
    from acp_client.transport import open_agent, allow_once

    async def main() -> None:
        async with open_agent(["my-agent", "--stdio"], on_permission=allow_once) as agent:
            await agent.initialize()
            session_id = await agent.new_session("/home/me/project")
            prompt = await agent.prompt(session_id, "Fix the failing test")  # inserted
            stop_reason = await prompt.wait_done()                            # turn ended
            print(stop_reason, agent.connection.snapshot())

    trio.run(main)

When the agent answers ``initialize`` with protocol version 1, the connection switches to
the v1 adapter (V1-TO-V2.md): the caller keeps seeing v2 state. Every message in both
directions, and every stderr line, can be recorded in the ``acp-client`` log format, flushed
as it goes, so that ``acp-client replay`` of the recording gives the same snapshot.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import IO, Any

import msgspec
import trio

from . import _events as ev
from . import _schema as s
from ._connection import Connection, SentRequest
from ._errors import ACPError, LocalProtocolError
from ._framing import DEFAULT_MAX_LINE, LineBuffer, head_text
from ._prompts import PermissionState, PromptState
from ._recorder import Recorder, RecordingError

__all__ = [
    "AgentConnection",
    "AgentError",
    "AgentExited",
    "PermissionHandler",
    "PromptHandle",
    "RecordingError",
    "RequestFailed",
    "RequestTimeout",
    "allow_once",
    "open_agent",
    "reject",
]

PermissionHandler = Callable[[PermissionState], Awaitable[str | None]]
"""Decides a permission request: return an offered ``optionId``, or ``None`` (cancelled).

It runs in the connection's nursery: if it raises, or returns an option the request did
not offer (:class:`~acp_client.LocalProtocolError`), that error ends the connection and
leaves :func:`open_agent` (a bug in the client, never a silent hang)."""

_READ_BLOCK = 1 << 16


class AgentError(ACPError):
    """The agent process failed: it exited, hung or broke the protocol."""


class AgentExited(AgentError):
    """The agent closed its stdout (exited or crashed) while something waited for it.

    Attributes:
        status: the process's exit status when it was known (a negative number is the
            signal that ended it), else ``None``.
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class RequestTimeout(AgentError):
    """A request got no response in time (the connection stays usable)."""


class RequestFailed(ACPError):
    """The agent answered a request with a JSON-RPC error.

    Attributes:
        method: the request's method.
        error: the :class:`acp_client.schema.Error` object.
    """

    def __init__(self, method: str, error: s.Error) -> None:
        self.method = method
        self.error = error
        super().__init__(f"{method} failed: {error.message} (code {error.code})")


def _pick(perm: PermissionState, kinds: Sequence[str]) -> str | None:
    options = getattr(perm.request, "options", None) or []
    for kind in kinds:
        for option in options:
            if option.kind == kind:
                return str(option.option_id)
    return None


async def allow_once(perm: PermissionState) -> str | None:
    """Policy: pick an ``allow_once`` option (else ``allow_always``), or cancel."""
    return _pick(perm, ("allow_once", "allow_always"))


async def reject(perm: PermissionState) -> str | None:
    """Policy: pick a ``reject_once`` option (else ``reject_always``), or cancel."""
    return _pick(perm, ("reject_once", "reject_always"))


class PromptHandle:
    """A prompt the agent inserted: await :meth:`wait_done` for the end of its turn.

    Attributes:
        request_id: the ``session/prompt`` request id.
        session_id: its session.
        state: the tracker's :class:`~acp_client.PromptState` (``message_id``, ``echoed``).
    """

    def __init__(self, agent: AgentConnection, state: PromptState, turns_before: int) -> None:
        self._agent = agent
        self.state = state
        self.request_id = state.request_id
        self.session_id = state.session_id
        self._turns_before = turns_before

    @property
    def message_id(self) -> str | None:
        """The inserted user message's id."""
        return self.state.message_id

    async def wait_done(self) -> str | None:
        """Wait until the session reports the end of this turn; return its stop reason.

        Raises:
            AgentExited: the agent went away first.
        """
        session = self._agent.connection.session(self.session_id)
        while len(session.completed_turns) <= self._turns_before:
            await self._agent._wait_change(self.session_id, "before the turn ended")
        reason: str | None = session.completed_turns[self._turns_before]
        return reason


class AgentConnection:
    """An ACP connection over a pair of byte streams (an agent's stdin/stdout).

    Use :func:`open_agent` to start a process; tests can pass in-memory trio streams.
    Reading never waits on writing: what the client owes the agent (answers to its
    requests) is written by a task of :meth:`run`, so end with :meth:`aclose`, which
    writes what is still owed, before cancelling it.

    Args:
        send_stream: the agent's stdin.
        receive_stream: the agent's stdout.
        stderr_stream: the agent's stderr (optional).
        recorder: where to record the traffic (optional).
        on_permission: decides permission requests (default: cancel them).
        request_timeout: seconds to wait for each response (``None``: no limit). Waiting for
            a turn (:meth:`PromptHandle.wait_done`, :meth:`wait_idle`) is not a request:
            bound it with ``trio.fail_after`` or ``trio.move_on_after``.
        max_line: the longest line accepted from the agent.
        terminal_limit: per-terminal byte retention limit (``None``: keep every byte).

    Attributes:
        stderr_lines: the agent's stderr lines; past twice :attr:`STDERR_LINES_KEPT`,
            the older ones are dropped down to that many (the recording keeps them all).
    """

    STDERR_LINES_KEPT = 1000
    """How many of the agent's latest stderr lines :attr:`stderr_lines` keeps at least."""

    def __init__(
        self,
        send_stream: trio.abc.SendStream,
        receive_stream: trio.abc.ReceiveStream,
        *,
        stderr_stream: trio.abc.ReceiveStream | None = None,
        recorder: Recorder | None = None,
        on_permission: PermissionHandler | None = None,
        request_timeout: float | None = None,
        max_line: int = DEFAULT_MAX_LINE,
        terminal_limit: int | None = None,
    ) -> None:
        self.connection = Connection(live=True, terminal_limit=terminal_limit, max_line=max_line)
        self.stderr_lines: list[str] = []
        self._send = send_stream
        self._receive = receive_stream
        self._stderr = stderr_stream
        self._recorder = recorder
        self._on_permission = on_permission
        self._timeout = request_timeout
        self._max_line = max_line
        self._write_lock = trio.Lock()
        self._kick = trio.Event()  # what the reader owes the agent waits for the writer
        self._responses: dict[int | str, ev.ResponseReceived] = {}
        self._owed: list[bytes] = []
        self._waiting: dict[int | str, trio.Event] = {}
        self._changed: dict[str, trio.Event] = {}
        self._deciding: dict[int, tuple[PermissionState, trio.CancelScope]] = {}
        self._subscribers: list[trio.MemorySendChannel[ev.Event]] = []
        self._closed = trio.Event()
        self._exited = trio.Event()  # set by the process watcher of open_agent
        self._process_watched = False
        self._nursery: trio.Nursery | None = None
        self.exit_error: AgentError | None = None
        self.exit_status: int | None = None
        """The agent process's exit status once it exited (``None`` before, or with no process)."""

    # ------------------------------------------------------------------ running

    async def run(self, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Pump the streams until the agent closes its stdout (run it in a nursery)."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            if self._stderr is not None:
                nursery.start_soon(self._read_stderr)
            task_status.started()
            async with trio.open_nursery() as pump:
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

    def events(self) -> trio.MemoryReceiveChannel[ev.Event]:
        """A stream of every event from now on (each call is a new subscriber).

        It ends when the agent's output ends (at once if it already has). Close it (``with
        agent.events() as events:``, or ``events.close()``) to unsubscribe: a subscriber
        nobody reads keeps every event it is sent.
        """
        send, receive = trio.open_memory_channel[ev.Event](math.inf)
        if self._closed.is_set():
            send.close()  # nothing more will come
        else:
            self._subscribers.append(send)
        return receive

    async def _read_stdout(self) -> None:
        ended = False
        try:
            while True:
                try:
                    data = await self._receive.receive_some(_READ_BLOCK)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                self._incoming(bytes(data))
                if not data:
                    break
            ended = True  # the output ended (not a cancellation of the reader)
        finally:
            self.connection.connection_lost()
            if ended and self._process_watched and not self._exited.is_set():
                # Output ends as the process exits: wait a moment to name its status.
                with trio.CancelScope(shield=True) as scope:
                    scope.deadline = trio.current_time() + 0.5
                    await self._exited.wait()
            status = self.exit_status
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
            try:
                data = await self._stderr.receive_some(_READ_BLOCK)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            items = lines.feed(bytes(data)) if data else lines.flush()
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
        self._kick.set()  # before the events wake anyone: what is owed goes out first
        self._dispatch(events)

    async def _writer(self) -> None:
        """Write what reading owes the agent (answers, cancels), in order, off the reader."""
        while True:
            await self._kick.wait()
            self._kick = trio.Event()
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
                rid = event.request_id  # type: ignore[attr-defined]
                if rid in self.connection.pending_agent_requests():
                    self._owed.append(self.connection.answer_method_not_found(rid))
            for channel in self._subscribers:
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    channel.send_nowait(event)
        self._subscribers = [c for c in self._subscribers if not _is_closed(c)]

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
            event = self._changed[session_id] = trio.Event()
        await event.wait()

    def _permission(self, event: ev.PermissionRequested) -> None:
        session = self.connection.session(event.session_id)
        perm = session.permissions.get(event.request_id)
        if perm is None or perm.status != "pending" or self._nursery is None:
            return
        self._nursery.start_soon(self._decide_permission, perm)

    async def _decide_permission(self, perm: PermissionState) -> None:
        option: str | None = None
        if perm.status != "pending":
            return  # answered or withdrawn before this task started
        if self._on_permission is not None:
            with trio.CancelScope() as scope:
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
            self._owed.append(self.connection.answer_permission(perm.request_id, option))
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
        try:
            await self._send.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            raise AgentExited(f"cannot write to the agent: {exc}") from exc

    async def _write_owed_locked(self) -> None:
        """Write what is owed already (the caller holds the write lock, about to build)."""
        while data := self._take_owed():
            await self._send_locked(data)

    def _take_owed(self) -> bytes:
        """What reading owes the agent, in order; forgotten here (the caller writes it)."""
        data = b"".join(self._owed) + self.connection.data_to_send()
        self._owed.clear()
        return data

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
        waiter = trio.Event()
        sent: SentRequest | None = None
        written = False
        try:
            async with self._write_lock:
                await self._write_owed_locked()
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
                with trio.move_on_after(self._timeout) as scope:
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
            self._owed.append(self.connection.send_cancel_request(rid))
        except LocalProtocolError:
            return  # answered meanwhile
        self._kick.set()

    # --------------------------------------------------------------- the API

    async def initialize(
        self,
        *,
        name: str = "acp-client",
        version: str = "0",
        protocol_version: int = 2,
        capabilities: s.ClientCapabilities | None = None,
    ) -> Any:
        """``initialize`` (protocol version 2); switches to the v1 adapter if the agent says 1.

        Returns the decoded result (an ``InitializeResponse``).
        """

        def build() -> SentRequest:
            return self.connection.send_initialize(
                name=name,
                version=version,
                protocol_version=protocol_version,
                capabilities=capabilities,
            )

        _, result = await self._send_request("initialize", build)
        negotiated = self.connection.protocol_version
        if negotiated is None:
            # an answer that is no InitializeResponse: the connection's diagnostic says why
            why = next(
                (
                    d.message
                    for d in reversed(self.connection.diagnostics)
                    if "initialize" in d.message
                ),
                "no protocolVersion",
            )
            raise AgentError(f"the agent's initialize result is not valid: {why}")
        if not 1 <= negotiated <= protocol_version:
            # C2: the client checks the answer; it does not speak another version.
            raise AgentError(
                f"the agent answered initialize with protocol version {negotiated!r};"
                f" acp_client speaks 1 to {protocol_version}"
            )
        return result

    async def login(self, method_id: str) -> None:
        """``auth/login`` with one of the agent's ``authMethods`` (``authenticate`` in v1).

        Returns once the agent accepted (its empty result is not returned: a v1 agent's
        ``authenticate`` answer has no v2 type).

        Raises:
            LocalProtocolError: the agent offered no ``authMethods`` (C4).
            RequestFailed: the agent refused.
        """
        await self._call("auth/login", s.LoginAuthRequest(method_id=method_id))

    async def new_session(self, cwd: str, *, mcp_servers: Sequence[Any] = ()) -> str:
        """``session/new`` (a relative ``cwd`` is made absolute, C6); return the new id."""
        params = s.NewSessionRequest(cwd=os.path.abspath(cwd), mcp_servers=list(mcp_servers))
        result = await self._call("session/new", params)
        if isinstance(result, s.NewSessionResponse):
            return result.session_id
        raise AgentError(f"session/new returned no session id: {result!r}")

    async def resume_session(self, session_id: str, cwd: str, *, replay: bool = True) -> Any:
        """``session/resume`` (with ``replay``, the agent replays its retained history).

        A relative ``cwd`` is made absolute (C6).
        """
        params = s.ResumeSessionRequest(
            session_id=session_id, cwd=os.path.abspath(cwd), mcp_servers=[]
        )
        if replay:
            params.replay_from = s.ReplayFromStart()
        return await self._call("session/resume", params)

    async def prompt(self, session_id: str, prompt: str | Sequence[s.ContentBlock]) -> PromptHandle:
        """Send a prompt; return once the agent inserted it (with its ``messageId``).

        Raises:
            RequestFailed: the agent rejected the prompt (it was not inserted).
            LocalProtocolError: the session is not set up, or closed (nothing was sent).
            AgentExited: the agent went away before answering.
            RequestTimeout: no answer within ``request_timeout``.
        """
        blocks = [s.TextContent(text=prompt)] if isinstance(prompt, str) else list(prompt)
        sent, _ = await self._send_request(
            "session/prompt", lambda: self.connection.send_prompt(session_id, blocks)
        )
        state = self.connection.prompt(sent.request_id)
        session = self.connection.session(session_id)
        turns = state.turns_before
        return PromptHandle(
            self, state, turns if turns is not None else len(session.completed_turns)
        )

    async def wait_idle(self, session_id: str) -> None:
        """Wait until the session's state is ``idle``.

        Raises:
            LocalProtocolError: no such session.
            AgentExited: the agent went away first.
        """
        try:
            session = self.connection.session(session_id)
        except KeyError:
            raise LocalProtocolError(f"no session {session_id!r}") from None
        while session.state_name not in ("idle", None):
            await self._wait_change(session_id, "before the session was idle")

    async def cancel(self, session_id: str) -> None:
        """``session/cancel`` (pending permission requests are answered ``cancelled``)."""
        async with self._write_lock:  # built right before it is written, as requests are
            await self._write_owed_locked()
            await self._send_locked(self.connection.send_cancel(session_id))
        await self._flush()

    async def close_session(self, session_id: str) -> None:
        """``session/close``."""
        await self._call("session/close", s.CloseSessionRequest(session_id=session_id))

    async def set_config_option(self, session_id: str, config_id: str, value: str | bool) -> Any:
        """``session/set_config_option``.

        Raises:
            LocalProtocolError: the session lists config options and ``value`` is not one
                of this option's values, or the option is not listed (C21; nothing is sent).
        """
        _, result = await self._send_request(
            "session/set_config_option",
            lambda: self.connection.send_set_config_option(session_id, config_id, value),
        )
        return result

    async def request(self, method: str, params: Any = None) -> Any:
        """Send any request (an extension method, say) and return its raw result."""
        return await self._call(method, params if params is not None else msgspec.UNSET)

    async def aclose(self) -> None:
        """Close the agent's stdin (the agent should exit).

        What reading still owes the agent (answers to its last requests) is written first,
        for at most a second (an agent that no longer reads cannot hold the close up).
        """
        try:
            # Shielded: a cancelled caller still writes what is owed (bounded), then closes.
            deadline = trio.current_time() + 1.0
            with trio.CancelScope(deadline=deadline, shield=True), contextlib.suppress(AgentExited):
                await self._flush()  # under the write lock: a write in progress ends first
        finally:
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await self._send.aclose()


def _is_closed(channel: trio.MemorySendChannel[ev.Event]) -> bool:
    return bool(channel.statistics().open_receive_channels == 0)


@asynccontextmanager
async def _unwrapped() -> AsyncIterator[None]:
    """Re-raise a lone exception out of nurseries' groups (what the caller raised).

    Groups nest when nurseries do (a caller's own nursery inside ``open_agent``'s).
    """
    try:
        yield
    except BaseExceptionGroup as group:
        lone: BaseException = group
        while isinstance(lone, BaseExceptionGroup) and len(lone.exceptions) == 1:
            lone = lone.exceptions[0]
        if lone is group:
            raise
        raise lone from None


async def _watch_exit(process: trio.Process, agent: AgentConnection, grace: float = 1.0) -> None:
    """When the agent process exits, end its streams after ``grace`` seconds.

    A child the agent started may still hold its stdout (or stderr) open; without this the
    connection would wait for output that never comes instead of reporting the exit.
    """
    await process.wait()
    agent.exit_status = process.returncode
    agent._exited.set()
    with trio.move_on_after(grace):
        await agent._closed.wait()
    if not agent.closed:
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                await stream.aclose()


@asynccontextmanager
async def open_agent(
    command: Sequence[str],
    *,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    record: str | IO[bytes] | None = None,
    on_permission: PermissionHandler | None = None,
    request_timeout: float | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    terminal_limit: int | None = None,
    exit_timeout: float = 5.0,
    own_session: bool = False,
) -> AsyncIterator[AgentConnection]:
    """Start an agent process and yield the :class:`AgentConnection` speaking to it.

    ``record`` names a file (or gives a binary file object) that receives every message in
    both directions and every stderr line, in the ``acp-client`` format. With
    ``own_session`` (POSIX) the agent runs in a session of its own, so a Ctrl-C on the
    terminal reaches the client only (which may cancel the turn with ``session/cancel``). On
    exit the agent's stdin is closed; a process still running after ``exit_timeout`` seconds
    is killed. With its own session, whatever is left of its process group when the
    connection ends (children of an agent that exited too) is stopped: ``SIGTERM``, then
    ``SIGKILL`` a second later. The recording file is opened once the agent has started, so
    a command that cannot start leaves an earlier recording as it was.
    """
    group = own_session and os.name == "posix"
    process = await trio.lowlevel.open_process(
        list(command),
        stdin=-1,
        stdout=-1,
        stderr=-1,
        cwd=cwd,
        env={**os.environ, **env} if env is not None else None,
        # With its own session the terminal's Ctrl-C reaches the client only (which can
        # cancel the turn with session/cancel); stopping kills the agent's process group.
        start_new_session=own_session and os.name == "posix",
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        recorder = Recorder(record) if record is not None else None
    except BaseException:
        _kill(process, group)
        with trio.CancelScope(shield=True):
            await process.wait()
        raise
    agent = AgentConnection(
        process.stdin,
        process.stdout,
        stderr_stream=process.stderr,
        recorder=recorder,
        on_permission=on_permission,
        request_timeout=request_timeout,
        max_line=max_line,
        terminal_limit=terminal_limit,
    )
    agent._process_watched = True  # _watch_exit reports the exit status
    try:
        async with _unwrapped(), trio.open_nursery() as nursery:
            await nursery.start(agent.run)
            nursery.start_soon(_watch_exit, process, agent)
            try:
                yield agent
            finally:
                await agent.aclose()
                with trio.move_on_after(exit_timeout):
                    await process.wait()
                if process.returncode is None:
                    _kill(process, group)
                    await process.wait()
                nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            if process.returncode is None:
                _kill(process, group)
                # Reaped even when leaving by cancellation (a killed process exits at once).
                with trio.move_on_after(exit_timeout):
                    await process.wait()
            if group:
                await _stop_group(process.pid)
        if recorder is not None:
            recorder.close()


async def _stop_group(pgid: int, grace: float = 1.0) -> None:
    """Stop what is left of the agent's own process group: SIGTERM, SIGKILL after ``grace``.

    The group outlives the agent while a child it started runs (an MCP server, a test run);
    started in a session of its own, nothing else would ever stop it.
    """
    if not _signal_group(pgid, signal.SIGTERM):
        return
    with trio.move_on_after(grace):
        while _signal_group(pgid, 0):
            await trio.sleep(0.05)
        return
    _signal_group(pgid, signal.SIGKILL)


def _signal_group(pgid: int, signum: int) -> bool:
    """Send ``signum`` to a process group; whether it still had a member."""
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):  # none left, or none of ours
        return False
    return True


def _kill(process: trio.Process, group: bool) -> None:
    """Kill the agent and, when it leads its own process group, its children with it."""
    if group:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    process.kill()
