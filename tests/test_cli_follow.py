"""``acp-client replay --follow`` as people run it: on a terminal (a pseudo-terminal here),
through a pipe, from standard input, on a file that does not exist yet; ended by Ctrl-C
(SIGINT) or SIGTERM with exactly one final state. Every wait is on output the command wrote
(``cli_wait``), never a guessed sleep."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cli_wait import read_all, read_until, started

from acp_client.testing import FakeAgent

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and ptys")

COMMAND = [sys.executable, "-m", "acp_client.cli", "replay", "--follow"]
STOPS = [signal.SIGINT, signal.SIGTERM]


def _lines(agent: FakeAgent) -> str:
    return "".join(line + "\n" for line in agent.log_lines("jsonrpc"))


def _first() -> str:
    return _lines(FakeAgent("s").state("running").agent_chunk("m", "alpha-one "))


def _more() -> str:
    return _lines(FakeAgent("s").agent_chunk("m", "beta-two").state("idle", stop_reason="end_turn"))


def _append(log: Path, text: str) -> None:
    with log.open("a") as handle:
        handle.write(text)


@pytest.mark.parametrize("stop", STOPS, ids=lambda s: signal.Signals(s).name)
def test_on_a_terminal_the_live_frame_gives_way_to_one_final_state(
    tmp_path: Path, stop: int
) -> None:
    import fcntl
    import struct
    import termios

    import pyte

    log = tmp_path / "log.jsonl"
    log.write_text(_first())
    main, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "40"}
    with started(
        [*COMMAND, str(log)],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env=env,
        start_new_session=True,
    ) as proc:
        os.close(follower)
        try:
            seen = read_until(main, b"alpha-one")  # the live frame is on screen
            _append(log, _more())
            seen += read_until(main, b"beta-two")  # and it follows the file
            proc.send_signal(stop)
            assert proc.wait(timeout=60) == 0
            seen += read_all(main)
        finally:
            os.close(main)
    screen = pyte.Screen(100, 40)
    pyte.ByteStream(screen).feed(seen)
    text = "\n".join(line.rstrip() for line in screen.display)
    assert text.count("session s") == 1, text  # the frozen live frame was wiped
    assert text.count("alpha-one beta-two") == 1, text
    assert "end_turn" in text


@pytest.mark.parametrize("stop", STOPS, ids=lambda s: signal.Signals(s).name)
def test_through_a_pipe_the_final_state_is_printed_once(tmp_path: Path, stop: int) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(_first())
    with started([*COMMAND, str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stderr is not None
        said = read_until(proc.stderr, b"(Ctrl-C or SIGTERM to stop)\n")
        assert b"following" in said
        _append(log, _more())  # written before the signal: read before the end
        proc.send_signal(stop)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    text = out.decode()
    assert text.count("session s") == 1, text
    assert text.count("alpha-one beta-two") == 1
    assert text.endswith("\n") and "\x1b" not in text
    assert not any(line != line.rstrip() for line in text.splitlines())  # no padding


@pytest.mark.parametrize("stop", STOPS, ids=lambda s: signal.Signals(s).name)
def test_events_stream_each_change_live_and_end_with_one_snapshot(
    tmp_path: Path, stop: int
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(_first())
    with started(
        [*COMMAND, "--events", str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as proc:
        assert proc.stdout is not None
        seen = read_until(proc.stdout, b"alpha-one")  # flushed per line: seen while it runs
        _append(log, _more())
        seen += read_until(proc.stdout, b"beta-two")
        proc.send_signal(stop)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    lines = [json.loads(line) for line in (seen + out).splitlines()]
    assert lines[0] == {
        "event": "start",
        "format": "acp-client/events@1",
        "source": str(log),
        "command": "replay --follow",
    }
    names = [line["event"] for line in lines]
    assert names.count("end") == 1 and names[-1] == "end"
    assert "MessageChunkAppended" in names and "StateChanged" in names
    end = lines[-1]
    assert end["status"] == 0 and end["stoppedBy"] == signal.Signals(stop).name
    session = end["snapshot"]["sessions"][0]
    assert [b["text"] for b in session["timeline"][0]["content"]] == ["alpha-one ", "beta-two"]
    chunk = next(line for line in lines if line["event"] == "MessageChunkAppended")
    assert chunk == {
        "event": "MessageChunkAppended",
        "sessionId": "s",
        "role": "agent",
        "messageId": "m",
        "block": {"type": "text", "text": "alpha-one "},
        "created": True,
        "index": 0,  # its place in the timeline, and its version (docs/events.md E1, E2)
        "version": 1,
    }


def test_dash_follows_standard_input_until_it_ends() -> None:
    with started(
        [*COMMAND, "--events", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(_first().encode())
        proc.stdin.flush()
        seen = read_until(proc.stdout, b"alpha-one")  # read while stdin is still open
        proc.stdin.write(_more().encode())
        proc.stdin.close()  # the end of the input ends the run, no signal needed
        seen += read_all(proc.stdout.fileno())
        assert proc.wait(timeout=60) == 0
    lines = [json.loads(line) for line in seen.splitlines()]
    assert lines[-1]["event"] == "end" and lines[-1]["stoppedBy"] is None
    assert lines[-1]["snapshot"]["sessions"][0]["completedTurns"] == ["end_turn"]


def test_a_file_that_does_not_exist_yet_is_waited_for(tmp_path: Path) -> None:
    log = tmp_path / "later.jsonl"
    with started(
        [*COMMAND, "--json", str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as proc:
        assert proc.stderr is not None
        said = read_until(proc.stderr, b"to appear (Ctrl-C to stop)\n")
        assert f"waiting for {log}".encode() in said
        log.write_text(_first())
        said += read_until(proc.stderr, b"(Ctrl-C or SIGTERM to stop)\n")  # found, followed
        _append(log, _more())
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, (said + err).decode()
    assert json.loads(out)["sessions"][0]["completedTurns"] == ["end_turn"]


def test_stopped_while_waiting_for_the_file_shows_the_empty_state(tmp_path: Path) -> None:
    with started(
        [*COMMAND, "--json", str(tmp_path / "never.jsonl")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stderr is not None
        read_until(proc.stderr, b"to appear (Ctrl-C to stop)\n")
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert json.loads(out)["sessions"] == []


def test_events_without_follow_is_a_usage_error(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(_first())
    proc = subprocess.run(
        [sys.executable, "-m", "acp_client.cli", "replay", "--events", str(log)],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 2 and b"--events goes with --follow" in proc.stderr
