"""``acp-client run``: start an agent, send prompts, render the conversation live."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from typing import Any

from . import (
    EXIT_AGENT_FAILED,
    EXIT_HANGUP,
    EXIT_INTERRUPTED,
    EXIT_NOT_WRITTEN,
    EXIT_OK,
    EXIT_STOPPED,
    EXIT_TERMINATED,
    EXIT_USAGE,
    FULL_ERRNOS,
    UsageError,
    write_json,
)
from ._lines import say, tracking_stdout
from ._live import detach_dead_terminal

__all__ = ["run_command"]

#: Signals that stop the run (a first Ctrl-C during a turn only cancels it), and how.
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_STOPPED_BY: dict[int, tuple[str, int]] = {
    signal.SIGINT: ("Ctrl-C", EXIT_INTERRUPTED),
    signal.SIGTERM: ("SIGTERM", EXIT_TERMINATED),
    signal.SIGHUP: ("SIGHUP", EXIT_HANGUP),
}


def run_command(args: argparse.Namespace) -> int:
    """Run ``acp-client run`` with parsed arguments; return the exit status."""
    import trio

    prompts = list(args.prompt)
    if args.events and args.json:
        raise UsageError("--events and --json do not go together")
    if any(not text.strip() for text in prompts):
        raise UsageError("a --prompt is empty (the protocol forbids it)")
    if args.cwd is not None and not os.path.isdir(args.cwd):
        raise UsageError(f"--cwd {args.cwd!r} is not a directory")
    if args.record is not None:
        folder = os.path.dirname(os.path.abspath(args.record))
        if not os.path.isdir(folder):
            raise UsageError(f"cannot record to {args.record!r}: no such folder")
    if not prompts:
        if sys.stdin.isatty():
            say("acp-client run: no --prompt: type the prompt, then Ctrl-D on a line of its own")
        try:
            text = sys.stdin.buffer.read().decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as exc:
            raise UsageError(
                f"the prompt on standard input is not UTF-8 (byte {exc.start})"
            ) from None
        if text.strip():
            prompts = [text]
    if not prompts:
        raise UsageError("give --prompt TEXT or a prompt on standard input")
    with tracking_stdout():  # a message to stderr starts on a line of its own (_lines.py)
        return trio.run(_run, args, prompts)


#: Seconds an agent gets to exit once its stdin is closed, before it is killed: with
#: ``--timeout`` (an agent that may be hung) a short grace, so the run ends about on time.
EXIT_GRACE = 5.0
EXIT_GRACE_WITH_TIMEOUT = 1.0


def _exit_grace(timeout: float | None) -> float:
    """The ``exit_timeout`` of the agent: shorter when ``--timeout`` bounds the run."""
    return EXIT_GRACE if timeout is None else min(EXIT_GRACE_WITH_TIMEOUT, timeout)


def _say(text: str) -> None:
    """Write to stderr on lines of its own; when that fails (the terminal closed), go on."""
    if not text:
        return
    try:
        say(text)
    except OSError:
        # While the live view is on, rich sends stderr to the terminal it draws on (stdout).
        detach_dead_terminal(1 if hasattr(sys.stderr, "rich_proxied_file") else 2)


class _Stop:
    """What the signals asked for: a turn cancelled (first Ctrl-C), or the run stopped."""

    def __init__(self) -> None:
        self.signal: int | None = None  # the signal that stopped the run
        self.cancel_turn: Callable[[], Awaitable[None]] | None = None  # during a turn
        self.cancelling = False  # a first Ctrl-C sent session/cancel


@contextlib.asynccontextmanager
async def _signals() -> AsyncIterator[_Stop]:
    """Ctrl-C during a turn sends ``session/cancel``; a second one, or SIGTERM, stops the run.

    Stopping cancels the body, so the agent is stopped and reaped on the way out.
    """
    import trio

    from acp_client._process import unwrapped as _unwrapped

    stop = _Stop()
    # A signal ignored when the run started stays ignored (``nohup acp-client run ...``).
    wanted = [s for s in _STOP_SIGNALS if signal.getsignal(s) is not signal.SIG_IGN]
    if not wanted:  # every one ignored: nothing to watch
        yield stop
        return
    with trio.open_signal_receiver(*wanted) as signals:
        async with _unwrapped(), trio.open_nursery() as nursery:

            async def watch() -> None:
                async for signum in signals:
                    cancel = stop.cancel_turn
                    if signum == signal.SIGINT and cancel is not None and not stop.cancelling:
                        stop.cancelling = True
                        _say("acp-client run: cancelling the turn (Ctrl-C again to stop)\n")
                        nursery.start_soon(cancel)
                        continue
                    stop.signal = signum
                    body.cancel()
                    return

            nursery.start_soon(watch)
            try:
                with trio.CancelScope() as body:
                    yield stop
            finally:
                nursery.cancel_scope.cancel()


#: JSON-RPC error code: the agent needs the client to log in first.
AUTH_REQUIRED = -32000


def _auth_methods(agent: Any) -> list[tuple[str, str, str | None]]:
    """The agent's ``authMethods`` as ``(methodId, name, unknown kind)`` triples.

    Every listed method, whatever its kind: one of a kind this library does not know (Codex's
    ``env_var``, say) is kept raw by the connection and carries its ``type`` as the third item
    (``None`` for the known kinds), so that ``--auth`` can warn before using it.
    """
    out: list[tuple[str, str, str | None]] = []
    for method in agent.connection.auth_methods:
        if isinstance(method, dict):  # an unknown kind, kept raw
            method_id, name = method.get("methodId"), method.get("name")
            if isinstance(method_id, str):
                kind = method.get("type")
                out.append((method_id, str(name or ""), str(kind) if kind else "?"))
        else:
            out.append((method.method_id, method.name, None))
    return out


def _auth_hint(agent: Any) -> str:
    """What to do about "authentication required": the ``--auth`` choices, if any."""
    from ._sanitize import sanitize_line

    methods = _auth_methods(agent)
    if not methods:
        return "the agent asks for authentication but offers no method acp-client can use\n"
    lines = ["the agent asks for authentication: run again with --auth METHOD_ID, one of\n"]
    lines += [f"  {sanitize_line(m)}  ({sanitize_line(name)})\n" for m, name, _ in methods]
    return "".join(lines)


def _stderr_tail(agent: Any, lines: int = 8) -> str:
    """The agent's last stderr lines, sanitized, for a failure report ("" if none)."""
    from ._sanitize import sanitize_line

    tail = agent.stderr_lines[-lines:]
    if not tail:
        return ""
    return "last lines of the agent's stderr:\n" + "".join(
        f"  {sanitize_line(line)}\n" for line in tail
    )


def _command(argv: list[str]) -> list[str]:
    """The agent command, a relative path to it taken from here (``--cwd`` is the agent's)."""
    program = argv[0]
    if os.sep in program and not os.path.isabs(program):
        program = os.path.abspath(program)
    return [program, *argv[1:]]


async def _turns(
    agent: Any, session_id: str, prompts: list[str], timeout: float | None, stop: _Stop
) -> str | None:
    """Send the prompts one turn at a time; return the last turn's stop reason.

    Each turn is bounded by ``--timeout``. Only during a turn does a Ctrl-C cancel it
    (``session/cancel``) instead of stopping; after a cancelled turn no prompt is sent.
    """
    import trio

    reason: str | None = None
    for text in prompts:
        stop.cancel_turn = partial(agent.cancel, session_id)
        try:
            with trio.fail_after(timeout) if timeout is not None else contextlib.nullcontext():
                handle = await agent.prompt(session_id, text)
                reason = await handle.wait_done()
        finally:
            stop.cancel_turn = None
        if stop.cancelling:
            break
    return reason


async def _run(args: argparse.Namespace, prompts: list[str]) -> int:
    import msgspec
    import trio

    from acp_client._diagnostics import DEFAULT_MAX_DIAGNOSTICS
    from acp_client._framing import DEFAULT_MAX_LINE
    from acp_client._process import unwrapped as _unwrapped
    from acp_client.transport import (
        AgentError,
        RecordingError,
        RequestFailed,
        allow_once,
        open_agent,
        reject,
    )

    from ._ask import ask_on_terminal
    from ._console import make_console
    from ._live import LiveView
    from ._render import render_snapshot, snapshot_renderable
    from ._sanitize import sanitize_json, sanitize_line
    from ._stream import EventStream, streaming
    from ._values import removed_plans

    cwd = os.path.abspath(args.cwd or os.getcwd())
    console = make_console()
    status = EXIT_OK
    agent_ref: list[Any] = []

    def truncated() -> Any:
        # a v1 agent's client terminals may be cut at their limit (the protocol switch knows)
        return agent_ref[0].connection._switch.truncated_terminals

    def view(whole: bool = False) -> Any:
        """The live frame: its last 30 entries and texts' last 200 lines; or everything."""
        snapshot = agent_ref[0].connection.snapshot()
        return snapshot_renderable(
            snapshot,
            last_entries=None if whole else 30,
            text_lines=None if whole else 200,
            truncated_terminals=truncated(),
            removed_plans=removed_plans(agent_ref[0].connection.sessions),
        )

    stream = EventStream() if args.events else None
    if stream is not None:
        stream.start(command="run", agent=args.agent)
    view_on = not args.json and stream is None and console.is_terminal
    live = LiveView(console, view, last=partial(view, whole=True)) if view_on else None
    asker = ask_on_terminal()

    async def ask(perm: Any) -> str | None:
        """Ask with the live view paused: the conversation so far stays above the question."""
        if live is None:
            return await asker(perm)
        live.pause()
        try:
            return await asker(perm)
        finally:
            live.resume()

    policy = {"allow": allow_once, "reject": reject, "ask": ask}[args.permission]

    stop = _Stop()
    try:
        async with (
            _signals() as stop,
            open_agent(
                _command(args.agent),
                own_session=True,  # the terminal's Ctrl-C is ours: it cancels the turn
                cwd=cwd,
                record=args.record,
                terminal_limit=args.terminal_limit,
                block_limit=args.block_limit,
                on_permission=policy,
                request_timeout=args.timeout,
                unstable=tuple(args.unstable),
                exit_timeout=_exit_grace(args.timeout),
                max_line=args.max_line or DEFAULT_MAX_LINE,  # given, or the default
                max_diagnostics=args.max_diagnostics or DEFAULT_MAX_DIAGNOSTICS,
            ) as agent,
            streaming(agent, stream),
        ):
            agent_ref.append(agent)
            await agent.initialize()
            if args.auth is not None:
                offered = {method_id: kind for method_id, _, kind in _auth_methods(agent)}
                if args.auth not in offered:
                    listed = ", ".join(map(repr, offered)) or "none"
                    _say(
                        f"acp-client run: --auth {sanitize_line(args.auth)!r}: not one of the"
                        f" agent's authMethods ({sanitize_line(listed)})\n"
                    )
                    return EXIT_USAGE
                kind = offered[args.auth]
                if kind is not None:
                    _say(
                        f"acp-client run: warning: --auth {sanitize_line(args.auth)!r} is of a"
                        f" kind acp-client does not know ({sanitize_line(kind)!r}); asking the"
                        " agent to log in with it anyway\n"
                    )
                await agent.login(args.auth)
            session_id = await agent.new_session(cwd)
            reason: str | None = None
            if live is not None:
                live.start()
                try:
                    async with _unwrapped(), trio.open_nursery() as nursery:

                        async def refresh() -> None:
                            while True:
                                live.refresh()
                                await trio.sleep(live.interval)

                        nursery.start_soon(refresh)
                        reason = await _turns(agent, session_id, prompts, args.timeout, stop)
                        nursery.cancel_scope.cancel()
                finally:
                    live.stop()  # the last state, also on failure
            else:
                reason = await _turns(agent, session_id, prompts, args.timeout, stop)
            status = EXIT_OK if reason == "end_turn" else EXIT_STOPPED
            if stop.cancelling:
                status = EXIT_INTERRUPTED
    except trio.TooSlowError:
        _say(f"acp-client run: the turn did not end within {args.timeout} s\n")
        status = EXIT_AGENT_FAILED
    except RequestFailed as exc:
        if stop.cancelling:  # the Ctrl-C withdrew a prompt the agent had not taken yet
            _say("acp-client run: the prompt was withdrawn before the agent took it\n")
            status = EXIT_INTERRUPTED
        else:
            _say(f"acp-client run: {sanitize_line(str(exc))}\n")
            data = getattr(exc.error, "data", None)
            if data is not None and data is not msgspec.UNSET:
                _say(f"  data: {sanitize_json(msgspec.to_builtins(data), limit=2000)}\n")
            if agent_ref:
                _say(_stderr_tail(agent_ref[0]))
                if exc.error.code == AUTH_REQUIRED and args.auth is None:
                    _say(_auth_hint(agent_ref[0]))
            status = EXIT_AGENT_FAILED
    except RecordingError as exc:
        _say(f"acp-client run: {sanitize_line(str(exc))}\n")
        status = EXIT_AGENT_FAILED
    except AgentError as exc:
        _say(f"acp-client run: {sanitize_line(str(exc))}\n")
        if agent_ref:
            _say(_stderr_tail(agent_ref[0]))
        status = EXIT_AGENT_FAILED
    except OSError as exc:
        _say(f"acp-client run: cannot start the agent: {exc}\n")
        return EXIT_AGENT_FAILED
    if stop.signal is not None:
        name, status = _STOPPED_BY.get(stop.signal, ("Ctrl-C", EXIT_INTERRUPTED))
        _say(f"acp-client run: stopped ({name})\n")
    if not agent_ref:
        return status if stop.signal is not None else EXIT_AGENT_FAILED
    snapshot = agent_ref[0].connection.snapshot()
    try:
        if stream is not None:
            stream.end(snapshot, status=status)
        elif args.json:
            write_json(snapshot, sys.stdout, indent=2)
            sys.stdout.flush()
        elif live is None:
            render_snapshot(
                snapshot,
                console,
                truncated_terminals=truncated(),
                removed_plans=removed_plans(agent_ref[0].connection.sessions),
            )
    except OSError as exc:
        detach_dead_terminal(1)
        if exc.errno in FULL_ERRNOS:  # a file that can take no more: the snapshot is cut short
            _say(f"acp-client run: cannot write the final snapshot: {exc}\n")
            return EXIT_NOT_WRITTEN
        # else nowhere to show it (the terminal closed): the status still tells
    except SystemExit:  # rich's answer to a closed pipe (stdout already detached): the same
        pass
    except MemoryError:  # what was written stays; the rest would need more memory than there is
        _say("acp-client run: out of memory writing the final snapshot: it is cut short\n")
        return EXIT_NOT_WRITTEN
    return status
