"""An editor that restarts and goes on where it was: snapshot out, restore in.

Run it twice with a state file and an agent's command line, for example::

    python examples/restart.py /tmp/editor-state.json node tests/peers/v2_agent.mjs

The first run (no state file yet) starts a session, runs one turn and saves the
connection's snapshot. The next run restores the connection from it, starts the agent
again, initializes (a new connection), resumes the saved session without replay, runs
another turn in it and prints the snapshot: both turns, one session. (The test peer keeps
its sessions across processes with ``ACP_TEST_AGENT_STORE``, as real agents keep theirs.)
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from acp_client.transport import open_agent


async def first_run(state: Path, command: list[str]) -> None:
    """A new session, one turn, and the snapshot saved as the editor quits."""
    async with open_agent(command) as agent:
        await agent.initialize()
        session_id = await agent.new_session(os.getcwd())
        print("stop:", await (await agent.prompt(session_id, "hello")).wait_done())
        state.write_text(json.dumps(agent.connection.snapshot()), encoding="utf-8")


async def next_run(state: Path, command: list[str]) -> None:
    """The saved state restored over an agent started again; the session goes on."""
    saved = json.loads(state.read_text(encoding="utf-8"))
    async with open_agent(command, restore=saved) as agent:
        await agent.initialize()  # the agent started again: a new connection (R92)
        (session_id,) = agent.connection.sessions
        await agent.resume_session(session_id, os.getcwd(), replay=False)
        print("stop:", await (await agent.prompt(session_id, "where were we?")).wait_done())
        print(json.dumps(agent.connection.snapshot(), indent=1))


def main() -> None:
    """``restart.py STATE_FILE AGENT_COMMAND...``."""
    state, command = Path(sys.argv[1]), sys.argv[2:]
    asyncio.run((next_run if state.exists() else first_run)(state, command))


if __name__ == "__main__":
    main()
