"""``acp-client run --events``: one JSON line per change while the agent works, flushed, so
a pipe sees it live; then one ``end`` line with the final snapshot (docs/events-stream.md).
And ``run --timeout`` ends about on time against an agent that never answers."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from cli_wait import read_until, started
from test_cli_run import TURN_STARTED

#: An agent that streams a first chunk, then waits for the file argv[1] before the rest.
STREAMING_AGENT = (
    TURN_STARTED
    + """import os, time
update({"sessionUpdate": "agent_message_chunk", "messageId": "a1",
        "content": {"type": "text", "text": "first-chunk "}})
while not os.path.exists(sys.argv[1]):  # the test has seen the first chunk
    time.sleep(0.02)
update({"sessionUpdate": "agent_message_chunk", "messageId": "a1",
        "content": {"type": "text", "text": "second-chunk"}})
update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
recv()
"""
)


def test_run_events_streams_each_change_before_the_turn_ends(tmp_path: Path) -> None:
    go = tmp_path / "go"
    agent = [sys.executable, "-c", STREAMING_AGENT, str(go)]
    with started(
        [sys.executable, "-m", "acp_client.cli", "run", "--events", "--prompt", "hi", "--", *agent],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdout is not None
        seen = read_until(proc.stdout, b"first-chunk")  # the turn is still running
        assert proc.poll() is None
        go.write_text("go")
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    lines = [json.loads(line) for line in (seen + out).splitlines()]
    assert lines[0]["event"] == "start" and lines[0]["format"] == "acp-client/events@1"
    assert lines[0]["command"] == "run" and lines[0]["agent"] == agent
    names = [line["event"] for line in lines]
    assert names.count("end") == 1 and names[-1] == "end" and lines[-1]["status"] == 0
    chunks = [line["block"]["text"] for line in lines if line["event"] == "MessageChunkAppended"]
    assert chunks == ["first-chunk ", "second-chunk"]
    assert names.index("PromptAccepted") < names.index("MessageChunkAppended")
    timeline = lines[-1]["snapshot"]["sessions"][0]["timeline"]
    assert [e["messageId"] for e in timeline] == ["u1", "a1"]


def test_run_events_and_json_do_not_go_together() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "acp_client.cli", "run", "--events", "--json", "--", "true"],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 2 and b"--events and --json" in proc.stderr


def test_run_timeout_against_a_silent_agent_ends_about_on_time(tmp_path: Path) -> None:
    # The agent never answers and ignores the end of its stdin: after --timeout 3 it gets a
    # 1 s grace, then is killed. The old fixed 5 s wait made the run last at least 3 + 5 s
    # from the agent's start; the bound is that, so a slow machine cannot fail it.
    from acp_client.cli._run_cmd import EXIT_GRACE

    started = tmp_path / "started"
    script = (
        f"import signal, time; open({str(started)!r}, 'w').write(repr(time.time())); "
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
    )
    command = ["run", "--timeout", "3", "--prompt", "hi", "--", sys.executable, "-c", script]
    proc = subprocess.run(
        [sys.executable, "-m", "acp_client.cli", *command],
        capture_output=True,
        check=False,
        timeout=60,
    )
    took = time.time() - float(started.read_text())
    assert proc.returncode == 5, proc.stderr.decode()
    assert b"no response to initialize within 3.0 s" in proc.stderr, proc.stderr.decode()
    assert took < 3 + EXIT_GRACE, took


def test_the_exit_grace_is_short_with_a_timeout() -> None:
    from acp_client.cli._run_cmd import EXIT_GRACE, _exit_grace

    assert _exit_grace(None) == EXIT_GRACE
    assert _exit_grace(3.0) == 1.0 and _exit_grace(0.2) == 0.2
