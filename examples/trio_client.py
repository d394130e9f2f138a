"""Embed acp_client in a trio program: stream, answer a permission question, cancel, snapshot.

Run it with an agent's command line, for example::

    python examples/trio_client.py python tests/peers/v1_agent.py

The same transport as ``asyncio_client.py`` (anyio runs it on either loop): it streams the
agent's text, allows the permission question once, cancels a second, slow turn once its
text flows, and prints the final snapshot. Agent text is escaped before it is printed.
"""

from __future__ import annotations

import json
import sys

import trio

from acp_client import PermissionState
from acp_client import events as ev
from acp_client.transport import AgentConnection, EventStream, allow_once, open_agent


def safe(text: str) -> str:
    """Agent text made printable (control characters escaped)."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


async def on_permission(perm: PermissionState) -> str | None:
    """The permission question: shown, then answered "allow once"."""
    print(f"permission: {safe(str(getattr(perm.request, 'title', '')))}", flush=True)
    return await allow_once(perm)


async def stream(events: EventStream[ev.Event], seen: list[trio.Event]) -> None:
    """Print the agent's text as it arrives (``seen[0]`` is set at each piece)."""
    async for event in events:
        if isinstance(event, ev.MessageChunkAppended) and event.role == "agent":
            text = getattr(event.block, "text", None)
            if isinstance(text, str):
                print(f"agent: {safe(text)}", flush=True)
                seen[0].set()


async def converse(agent: AgentConnection) -> None:
    """Two turns: one answered through, one cancelled mid-way."""
    await agent.initialize()
    session_id = await agent.new_session(".")
    seen = [trio.Event()]
    with agent.events() as events:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stream, events, seen)
            prompt = await agent.prompt(session_id, "Run the tests (permission)")
            print(f"stop: {await prompt.wait_done()}", flush=True)
            seen[0] = trio.Event()
            prompt = await agent.prompt(session_id, "Take your time (slow)")
            await seen[0].wait()  # the turn is under way: cancel it
            await agent.cancel(session_id)
            print(f"stop: {await prompt.wait_done()}", flush=True)
            nursery.cancel_scope.cancel()
    print(json.dumps(agent.connection.snapshot(), indent=1, sort_keys=True))


async def main(command: list[str]) -> None:
    """Start the agent and talk to it."""
    async with open_agent(command, on_permission=on_permission) as agent:
        with trio.fail_after(60):
            await converse(agent)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: trio_client.py AGENT-COMMAND...")
    trio.run(main, sys.argv[1:])
