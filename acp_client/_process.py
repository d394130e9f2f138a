# Owns the agent process of `open_agent` (POSIX process groups, exit watching, stopping):
# what is left when the connection ends is stopped, and an exit is reported, not awaited.
"""Start, watch and stop the agent process behind :func:`acp_client.transport.open_agent`."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc

from ._pump import Pump

__all__ = ["kill", "stop_group", "unwrapped", "watch_exit"]


@asynccontextmanager
async def unwrapped() -> AsyncIterator[None]:
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


async def watch_exit(process: anyio.abc.Process, agent: Pump, grace: float = 1.0) -> None:
    """When the agent process exits, end its streams after ``grace`` seconds.

    A child the agent started may still hold its stdout (or stderr) open; without this the
    connection would wait for output that never comes instead of reporting the exit.
    """
    await process.wait()
    agent.exit_status = process.returncode
    agent._exited.set()
    with anyio.move_on_after(grace):
        await agent._closed.wait()
    if not agent.closed:
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError, anyio.BrokenResourceError):
                    await stream.aclose()


async def stop_group(pgid: int, grace: float = 1.0) -> None:
    """Stop what is left of the agent's own process group: SIGTERM, SIGKILL after ``grace``.

    The group outlives the agent while a child it started runs (an MCP server, a test run);
    started in a session of its own, nothing else would ever stop it.
    """
    if not _signal_group(pgid, signal.SIGTERM):
        return
    with anyio.move_on_after(grace):
        while _signal_group(pgid, 0):
            await anyio.sleep(0.05)
        return
    _signal_group(pgid, signal.SIGKILL)


def _signal_group(pgid: int, signum: int) -> bool:
    """Send ``signum`` to a process group; whether it still had a member."""
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):  # none left, or none of ours
        return False
    return True


def kill(process: anyio.abc.Process, group: bool) -> None:
    """Kill the agent and, when it leads its own process group, its children with it."""
    if group:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):  # asyncio's, once it was reaped
        process.kill()
