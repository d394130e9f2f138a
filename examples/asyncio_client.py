"""Embed acp_client in an asyncio program: stream, answer the agent, cancel, snapshot.

Run it with an agent's command line, for example::

    python examples/asyncio_client.py node tests/peers/v2_agent.mjs

It streams the agent's text as it arrives, answers the permission question (allow once),
the agent's ``_editor/buffer`` extension request and its ``elicitation/create`` form (host
handlers), cancels a second, slow turn once its text flows, and prints the final snapshot.
Agent text is escaped before it is printed: it never reaches the terminal raw.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

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


async def editor_buffer(params: Any) -> dict[str, Any]:
    """The agent's extension request ``_editor/buffer``: the editor's buffer text."""
    return {"path": params.get("path"), "text": "# Hello from the editor"}


async def elicit(params: Any) -> dict[str, Any]:
    """``elicitation/create``: the form answered as a user would."""
    print(f"elicitation: {safe(str(params.get('message')))}", flush=True)
    return {"action": "accept", "content": {"name": "Ada"}}


async def stream(events: EventStream[ev.Event], text_seen: asyncio.Event) -> None:
    """Print the agent's text as it arrives."""
    async for event in events:
        if isinstance(event, ev.MessageChunkAppended) and event.role == "agent":
            text = getattr(event.block, "text", None)
            if isinstance(text, str):
                print(f"agent: {safe(text)}", flush=True)
                text_seen.set()


async def converse(agent: AgentConnection) -> None:
    """Two turns: one answered through, one cancelled mid-way."""
    await agent.initialize()
    session_id = await agent.new_session(".")
    text_seen = asyncio.Event()
    with agent.events() as events:
        streaming = asyncio.create_task(stream(events, text_seen))
        prompt = await agent.prompt(session_id, "Run the tests (permission host-requests)")
        print(f"stop: {await prompt.wait_done()}", flush=True)
        text_seen.clear()
        prompt = await agent.prompt(session_id, "Take your time (slow)")
        await text_seen.wait()  # the turn is under way: cancel it
        await agent.cancel(session_id)
        print(f"stop: {await prompt.wait_done()}", flush=True)
        streaming.cancel()
    print(json.dumps(agent.connection.snapshot(), indent=1, sort_keys=True))


async def main(command: list[str]) -> None:
    """Start the agent and talk to it."""
    handlers = {"_editor/buffer": editor_buffer, "elicitation/create": elicit}
    async with open_agent(command, on_permission=on_permission, handlers=handlers) as agent:
        await asyncio.wait_for(converse(agent), timeout=60)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: asyncio_client.py AGENT-COMMAND...")
    asyncio.run(main(sys.argv[1:]))
