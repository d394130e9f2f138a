"""Talk to a live agent over stdio with anyio, on trio or asyncio (install the ``run`` extra).

This module only pumps bytes: all protocol state lives in the sans-IO
:class:`~acp_client.Connection`. :func:`open_agent` starts an agent process and yields an
:class:`AgentConnection`, an async API shaped for embedding in an editor; the same code runs
under ``trio.run`` and ``asyncio.run`` (anyio picks the running loop)::

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

When the agent answers ``initialize`` with protocol version 1 (or speaks v1 after claiming
v2), the connection itself switches to the v1 adapter (V1-TO-V2.md; ``acp_client.v1``): the
caller keeps seeing v2 state. The host answers the agent's other requests with ``handlers``
(``elicitation/create``, extension methods, a v1 agent's ``fs/*`` and ``terminal/*``; R87,
R88). Reading feeds :meth:`~acp_client.Connection.receive_data`, the
connection's batched fast path. The terminal permission question of ``acp-client run`` is
the CLI's (``acp_client.cli``), not this module's. Every message in both
directions, and every stderr line, can be recorded in the ``acp-client`` log format, flushed
as it goes, so that ``acp-client replay`` of the recording gives the same snapshot.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import IO, Any

import anyio
import anyio.lowlevel
import msgspec

from . import _schema as s
from ._connection import SentRequest
from ._errors import LocalProtocolError
from ._framing import DEFAULT_MAX_LINE
from ._process import kill, stop_group, unwrapped, watch_exit
from ._prompts import PermissionState, PromptState
from ._pump import (
    DEFAULT_MAX_UNSENT,
    AgentError,
    AgentExited,
    AgentNotReading,
    PermissionHandler,
    Pump,
    RequestFailed,
    RequestHandler,
    RequestTimeout,
)
from ._recorder import Recorder, RecordingError
from ._streams import EventStream
from ._version import __version__

__all__ = [
    "AgentConnection",
    "AgentError",
    "AgentExited",
    "AgentNotReading",
    "DEFAULT_MAX_UNSENT",
    "EventStream",
    "PermissionHandler",
    "PromptHandle",
    "RecordingError",
    "RequestFailed",
    "RequestHandler",
    "RequestTimeout",
    "allow_once",
    "open_agent",
    "reject",
]


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


class AgentConnection(Pump):
    """An ACP connection over a pair of byte streams (an agent's stdin/stdout).

    Use :func:`open_agent` to start a process; tests can pass in-memory streams (anyio byte
    streams, or trio's).
    Reading never waits on writing: what the client owes the agent (answers to its
    requests) is written by a task of :meth:`run`, so end with :meth:`aclose`, which
    writes what is still owed, before cancelling it.

    Args:
        send_stream: the agent's stdin.
        receive_stream: the agent's stdout.
        stderr_stream: the agent's stderr (optional).
        recorder: where to record the traffic (optional).
        on_permission: decides permission requests (default: cancel them).
        handlers: the host's answers to the agent's other requests, by method (see
            :data:`RequestHandler`): ``elicitation/create`` (advertised by
            :meth:`initialize` when given), extension methods (``_editor/buffer``), a v1
            agent's ``fs/*`` and ``terminal/*``. A method without one gets -32601, but an
            advertised elicitation is declined (R87).
        request_timeout: seconds to wait for each response (``None``: no limit). Waiting for
            a turn (:meth:`PromptHandle.wait_done`, :meth:`wait_idle`) is not a request:
            bound it with ``anyio.fail_after`` (or trio's, or ``asyncio.timeout``).
        max_line: the longest line accepted from the agent.
        terminal_limit: per-terminal byte retention limit (``None``: keep every byte).
        block_limit: the content items (blocks) each message, tool call, compaction and
            session message keeps, the last ones (``None``: keep every one).
        max_unsent: bytes the client may owe the agent unread (answers to its requests,
            cancels) before the connection ends with :class:`AgentNotReading` (an agent that
            never reads its stdin would make them grow without end).
        unstable: opt-in (unstable) features of the ACP v2 Preview the sessions apply
            (``"prompt_suggestions"``, ``"cursors"``, ``"unknown_state"``; see ``Connection``).
        restore: a snapshot (``Connection.snapshot()``) to go on from: the connection is
            ``Connection.restore(restore, ...)``; :meth:`initialize` then starts the new
            connection (R92) and :meth:`resume_session` picks a session up (with replay,
            a v1 agent's ``session/load``), after which prompts go on in the restored
            sessions.

    Attributes:
        stderr_lines: the agent's stderr lines; past twice :attr:`STDERR_LINES_KEPT`,
            the older ones are dropped down to that many (the recording keeps them all).
    """

    # --------------------------------------------------------------- the API

    async def initialize(
        self,
        *,
        name: str = "acp-client",
        version: str = __version__,
        protocol_version: int = 2,
        capabilities: s.ClientCapabilities | None = None,
    ) -> s.InitializeResponse:
        """``initialize`` (protocol version 2); switches to the v1 adapter if the agent says 1.

        Returns the result as an ``InitializeResponse``, for a v1 agent too (its answer in
        v2 shape, V1-TO-V2 3.1); an answer that does not fit the schema gives what the
        connection could read of it (``Connection.agent_info`` and the rest). With an
        ``elicitation/create`` handler and no ``capabilities`` given, elicitation (form and
        url) is advertised.
        """
        if capabilities is None and "elicitation/create" in self._handlers:
            capabilities = s.ClientCapabilities(elicitation={"form": {}, "url": {}})

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
        if isinstance(result, s.InitializeResponse):
            return result
        conn = self.connection  # salvaged from an answer that is no InitializeResponse
        return s.InitializeResponse(
            protocol_version=negotiated,
            info=conn.agent_info or s.Implementation(name="", version=""),
            capabilities=conn.agent_capabilities or s.AgentCapabilities(),
            auth_methods=list(conn.auth_methods),
        )

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

    async def prompt(
        self,
        session_id: str,
        prompt: str | Sequence[s.ContentBlock],
        *,
        idempotency_key: str | bool | None = None,
    ) -> PromptHandle:
        """Send a prompt; return once the agent inserted it (with its ``messageId``).

        ``idempotency_key``: as :meth:`Connection.send_prompt` (v2 Preview): sent again with
        the same key and content, the prompt is a retry the agent inserts at most once.

        Raises:
            RequestFailed: the agent rejected the prompt (it was not inserted).
            LocalProtocolError: the session is not set up, or closed (nothing was sent).
            AgentExited: the agent went away before answering.
            RequestTimeout: no answer within ``request_timeout``.
        """
        blocks = [s.TextContent(text=prompt)] if isinstance(prompt, str) else list(prompt)
        sent, _ = await self._send_request(
            "session/prompt",
            lambda: self.connection.send_prompt(
                session_id, blocks, idempotency_key=idempotency_key
            ),
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
            await anyio.lowlevel.checkpoint_if_cancelled()  # cancelled by now: nothing sent
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


@asynccontextmanager
async def open_agent(
    command: Sequence[str],
    *,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    record: str | IO[bytes] | None = None,
    on_permission: PermissionHandler | None = None,
    handlers: Mapping[str, RequestHandler] | None = None,
    request_timeout: float | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    terminal_limit: int | None = None,
    block_limit: int | None = None,
    max_unsent: int = DEFAULT_MAX_UNSENT,
    exit_timeout: float = 5.0,
    own_session: bool = False,
    unstable: Collection[str] = (),
    restore: Mapping[str, Any] | None = None,
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
    a command that cannot start leaves an earlier recording as it was. It runs on trio and
    on asyncio alike (anyio picks the running loop); ``handlers`` are the host's answers to
    the agent's requests, and ``unstable`` opts the sessions into unstable features (as
    :class:`AgentConnection`'s). With ``restore`` (a snapshot) the connection goes on from
    it: an editor that restarts starts the agent again, initializes, resumes the session
    and prompts on (:class:`AgentConnection`'s ``restore``); the recording then holds the
    new connection's traffic only.
    """
    group = own_session and os.name == "posix"
    process = await anyio.open_process(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
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
        kill(process, group)
        with anyio.CancelScope(shield=True):
            await process.aclose()
        raise
    agent = AgentConnection(
        process.stdin,
        process.stdout,
        stderr_stream=process.stderr,
        recorder=recorder,
        on_permission=on_permission,
        handlers=handlers,
        request_timeout=request_timeout,
        max_line=max_line,
        terminal_limit=terminal_limit,
        block_limit=block_limit,
        unstable=unstable,
        restore=restore,
        max_unsent=max_unsent,
    )
    agent._process_watched = True  # _watch_exit reports the exit status
    try:
        async with unwrapped(), anyio.create_task_group() as tasks:
            await tasks.start(agent.run)
            tasks.start_soon(watch_exit, process, agent)
            try:
                yield agent
            finally:
                await agent.aclose()
                with anyio.move_on_after(exit_timeout):
                    await process.wait()
                if process.returncode is None:
                    kill(process, group)
                    await process.wait()
                tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                kill(process, group)
                # Reaped even when leaving by cancellation (a killed process exits at once).
                with anyio.move_on_after(exit_timeout):
                    await process.wait()
            if group:
                await stop_group(process.pid)
            if process.returncode is not None:
                with (
                    anyio.move_on_after(1),
                    contextlib.suppress(OSError, anyio.BrokenResourceError),
                ):
                    await process.aclose()  # the pipes (asyncio warns of unclosed ones)
        if recorder is not None:
            recorder.close()
