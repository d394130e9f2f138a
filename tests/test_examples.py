"""The examples in examples/ run against the real agents of tests/peers/, on both loops.

Each example is started as a subprocess with a peer's command line, as a user would run
it; its output must show the streamed text, the permission question, the host handlers'
answers (asyncio, v2 peer), a turn ended and a turn cancelled, and a final snapshot.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_transport_peers import V1, V2, need_node

pytestmark = pytest.mark.peer

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_example(name: str, peer: list[str]) -> tuple[list[str], dict[str, Any]]:
    """Run an example against a peer; its output lines and final snapshot."""
    env = {**os.environ, "PYTHONPATH": str(EXAMPLES.parent)}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *peer],
        capture_output=True,
        text=True,
        timeout=120,  # an upper bound only: nothing waits for it to pass
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = lines.index("{")
    return lines[:start], json.loads("\n".join(lines[start:]))


@pytest.mark.parametrize("name", ["asyncio_client.py", "trio_client.py"])
@pytest.mark.parametrize("peer", ["v2", "v1"])
def test_an_example_streams_answers_cancels_and_prints_the_snapshot(name: str, peer: str) -> None:
    if peer == "v2":
        need_node()
    lines, snapshot = run_example(name, V2 if peer == "v2" else V1)
    assert [line for line in lines if line.startswith("stop:")] == [
        "stop: end_turn",
        "stop: cancelled",
    ]
    assert any(line.startswith("permission: ") for line in lines)
    assert any(line.startswith("agent: ") for line in lines)  # streamed as it came
    (session,) = snapshot["sessions"]
    assert session["completedTurns"] == ["end_turn", "cancelled"]
    assert [p["status"] for p in session["permissionRequests"]] == ["answered"]
    assert snapshot["diagnostics"] == []


def test_the_asyncio_host_answers_an_elicitation_and_an_extension_method() -> None:
    """R87: the host's handlers answer what the client serves; the agent reports the answers."""
    need_node()
    lines, snapshot = run_example("asyncio_client.py", V2)
    assert "elicitation: Who are you?" in lines
    assert "agent:  buffer: # Hello from the editor" in lines
    assert "agent:  elicitation: accept Ada" in lines
    (session,) = snapshot["sessions"]
    text = json.dumps(session["timeline"])
    assert "buffer: # Hello from the editor" in text and "elicitation: accept Ada" in text


def test_the_restart_example_goes_on_in_the_saved_session(tmp_path: Path) -> None:
    """examples/restart.py, run twice: the second run restores, resumes and adds a turn."""
    need_node()
    state = tmp_path / "editor-state.json"
    env = {
        **os.environ,
        "PYTHONPATH": str(EXAMPLES.parent),
        "ACP_TEST_AGENT_STORE": str(tmp_path / "agent-sessions.json"),
    }
    runs = [
        subprocess.run(
            [sys.executable, str(EXAMPLES / "restart.py"), str(state), *V2],
            capture_output=True,
            text=True,
            timeout=120,  # an upper bound only
            env=env,
            check=False,
            cwd=tmp_path,
        )
        for _ in range(2)
    ]
    assert [done.returncode for done in runs] == [0, 0], runs[-1].stderr
    assert runs[0].stdout.splitlines() == ["stop: end_turn"]
    lines = runs[1].stdout.splitlines()
    assert lines[0] == "stop: end_turn"
    (session,) = json.loads("\n".join(lines[1:]))["sessions"]
    assert session["completedTurns"] == ["end_turn", "end_turn"]
    assert [p["status"] for p in session["prompts"]] == ["accepted", "accepted"]
