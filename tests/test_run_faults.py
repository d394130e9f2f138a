"""`acp-client run` and the transport against hostile or broken agents (issue 26).

Each fault is a tiny inline Python agent (the helpers of ``test_cli_run``): the client must
stay responsive, say what happened (a diagnostic, a one-line reason, an exit status) and end
within its timeout. Wall-clock bounds here are generous ceilings against a hang, never a
measure of speed.
"""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from test_cli_run import SESSION_STARTED, TURN_STARTED, _run_on_a_terminal, run

from acp_client import replay_log
from acp_client.cli import dump_json, write_json
from acp_client.transport import AgentExited, AgentNotReading, open_agent

END_TURN = """
update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
while recv() is not None:
    pass
"""


def _agent(body: str) -> list[str]:
    return [sys.executable, "-c", TURN_STARTED + body]


def _timed_run(*args: str, ceiling: float = 60) -> tuple[subprocess.CompletedProcess[bytes], float]:
    started = time.monotonic()
    out = run(*args)
    elapsed = time.monotonic() - started
    assert elapsed < ceiling
    return out, elapsed


# -- an agent that floods output faster than the client renders ------------------------------

FLOOD = (
    """
for i in range(20000):
    update({"sessionUpdate": "agent_message_chunk", "messageId": "a1",
            "content": {"type": "text", "text": f"c{i} "}})
"""
    + END_TURN
)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_a_flood_of_updates_drops_frames_never_updates(tmp_path: Path) -> None:
    # On a terminal the live view redraws at most every PERIOD seconds: 20,000 updates make
    # far fewer frames, and the state (the recording replayed, the last frame) has them all.
    record = tmp_path / "flood.jsonl"
    args = ["--permission", "allow", "--record", str(record), "--prompt", "hi", "--"]
    code, output = _run_on_a_terminal(*args, *_agent(FLOOD))
    assert code == 0, output.decode(errors="replace")[-2000:]
    frames = output.count(b"\x1b[?25l") + output.count(b"\x1b[2K")
    assert b"c19999" in output and b"Traceback" not in output
    assert frames < 20000
    content = replay_log(str(record)).snapshot()["sessions"][0]["timeline"][-1]["content"]
    assert "".join(block["text"] for block in content) == "".join(f"c{i} " for i in range(20000))


def test_the_last_frame_shows_every_entry_not_the_last_30(tmp_path: Path) -> None:
    many = (
        """
for i in range(45):
    update({"sessionUpdate": "agent_message_chunk", "messageId": f"m{i}",
            "content": {"type": "text", "text": f"message number {i}"}})
"""
        + END_TURN
    )
    code, output = _run_on_a_terminal("--prompt", "hi", "--", *_agent(many))
    assert code == 0, output.decode(errors="replace")[-2000:]
    final = output.rsplit(b"\x1b[?25h", 1)[0]  # up to the cursor shown again: the last frame
    assert b"message number 0" in final and b"message number 44" in final
    assert b"earlier timeline entries not shown" not in final.rsplit(b"\x1b[2K", 1)[-1]


# -- unbounded stderr --------------------------------------------------------------------------

STDERR_FLOOD = (
    """
for i in range(200000):
    sys.stderr.write(f"noise {i}\\n")
sys.stderr.write("x" * 3_000_000)  # one line over the line limit, no newline yet
sys.stderr.write("\\nlast words\\n")
sys.stderr.flush()
"""
    + END_TURN
)


def test_unbounded_stderr_keeps_a_bounded_tail() -> None:
    async def main() -> tuple[list[str], Any]:
        command = _agent(STDERR_FLOOD)
        async with open_agent(command, max_line=1 << 20) as agent:
            with anyio.fail_after(60):
                await agent.initialize()
                sid = await agent.new_session(os.getcwd())
                handle = await agent.prompt(sid, "hi")
                reason = await handle.wait_done()
                while not agent.stderr_lines or agent.stderr_lines[-1] != "last words":
                    await anyio.sleep(0.05)
            return list(agent.stderr_lines), reason

    lines, reason = anyio.run(main)
    assert reason == "end_turn"
    assert len(lines) <= 2 * 1000  # Pump.STDERR_LINES_KEPT, at least that many kept
    assert lines[-1] == "last words"
    assert lines[-2].startswith("[a stderr line of 3,000,000 bytes, dropped: ") or lines[
        -2
    ].startswith("[a stderr line of 3000000 bytes, dropped: ")
    assert lines[-3] == "noise 199999"


# -- an agent that closes its stdout but keeps running ----------------------------------------

CLOSES_STDOUT = """
import os, time
os.close(1)
time.sleep(60)
"""


def test_an_agent_that_closes_its_stdout_but_runs_on_ends_the_run() -> None:
    out, elapsed = _timed_run("--timeout", "20", "--prompt", "hi", "--", *_agent(CLOSES_STDOUT))
    assert out.returncode == 5, out.stderr.decode()
    assert b"closed its output" in out.stderr or b"exited" in out.stderr
    assert b"Traceback" not in out.stderr
    assert elapsed < 20  # not the agent's 60 s: its stdin is closed, then it is killed


# -- an agent that exits in the middle of a line -----------------------------------------------

MID_LINE = """
sys.stdout.write('{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1"')
sys.stdout.flush()
os._exit(3)
"""


def test_an_agent_that_exits_mid_line_is_reported_with_its_status_and_the_partial_line() -> None:
    out, _ = _timed_run("--json", "--prompt", "hi", "--", *_agent("import os\n" + MID_LINE))
    assert out.returncode == 5, out.stderr.decode()
    assert b"status 3" in out.stderr and b"Traceback" not in out.stderr
    snapshot = json.loads(out.stdout)
    codes = [d["code"] for d in snapshot["diagnostics"]]
    assert "malformed-line" in codes  # the cut line is reported, not silently dropped
    assert snapshot["sessions"][0]["timeline"][0]["messageId"] == "u1"  # what came before


# -- an agent that dies with a permission question open ----------------------------------------

DIES_ASKING = (
    TURN_STARTED
    + """
options = [{"optionId": "ok", "name": "OK", "kind": "allow_once"}]
params = {"sessionId": "s1", "title": "Run it?", "options": options}
send({"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": params})
import os, time
time.sleep(0.5)  # the question is open
os._exit(9)
"""
)


def test_an_agent_that_dies_with_a_question_open_cancels_the_question() -> None:
    asked: list[str] = []

    async def main() -> str:
        async def undecided(perm: Any) -> str | None:
            asked.append("asked")
            try:
                await anyio.sleep_forever()
            finally:
                asked.append("closed")
            return None

        command = [sys.executable, "-c", DIES_ASKING]
        async with open_agent(command, on_permission=undecided) as agent:
            with anyio.fail_after(30):
                await agent.initialize()
                sid = await agent.new_session(os.getcwd())
                handle = await agent.prompt(sid, "hi")
                try:
                    await handle.wait_done()
                except AgentExited as exc:
                    return str(exc)
        return "turn ended"

    said = anyio.run(main)
    assert "exited with status 9" in said
    assert asked == ["asked", "closed"]  # the question was closed, not left waiting


def test_run_reports_an_agent_that_dies_with_a_question_open() -> None:
    out, _ = _timed_run(
        "--json",
        "--permission",
        "ask",
        "--prompt",
        "hi",
        "--",
        *[sys.executable, "-c", DIES_ASKING],
    )
    assert out.returncode == 5, out.stderr.decode()
    said = out.stderr.decode().splitlines()
    assert said[-1] == "acp-client run: the agent exited with status 9 before the turn ended"
    assert "Traceback" not in out.stderr.decode()


# -- an agent that reuses the client's request ids ---------------------------------------------

REUSES_IDS = (
    SESSION_STARTED
    + """prompt = recv()
# a request of the agent's with the id of the client's pending prompt: ids are per direction
send({"jsonrpc": "2.0", "id": prompt["id"], "method": "_vendor/ask", "params": {}})
answer = recv()
assert answer["id"] == prompt["id"] and answer["error"]["code"] == -32601, answer
send({"jsonrpc": "2.0", "id": prompt["id"], "result": {"messageId": "u1"}})
update({"sessionUpdate": "user_message", "messageId": "u1", "content": prompt["params"]["prompt"]})
update({"sessionUpdate": "state_update", "state": "running"})
"""
    + END_TURN
)


def test_an_agent_reusing_the_clients_request_ids_keeps_both_directions_apart() -> None:
    out, _ = _timed_run(
        "--json", "--timeout", "30", "--prompt", "hi", "--", *[sys.executable, "-c", REUSES_IDS]
    )
    assert out.returncode == 0, out.stderr.decode()
    session = json.loads(out.stdout)["sessions"][0]
    assert session["completedTurns"] == ["end_turn"]
    assert session["prompts"][0]["status"] == "accepted"


# -- an agent that never reads its stdin -------------------------------------------------------

NEVER_READS = """
import time
line = "".join(
    json.dumps({"jsonrpc": "2.0", "id": 10**6 + i, "method": "_vendor/ping", "params": {}}) + "\\n"
    for i in range(N)
)
sys.stdout.write(line)
sys.stdout.flush()
time.sleep(60)  # never reads the answers
"""


def test_answers_to_an_agent_that_never_reads_are_bounded() -> None:
    async def main() -> tuple[str, list[str]]:
        command = _agent(NEVER_READS.replace("N)", "20000)"))
        try:
            async with open_agent(command, max_unsent=64 << 10, exit_timeout=1) as agent:
                with anyio.fail_after(30):
                    await agent.initialize()
                    sid = await agent.new_session(os.getcwd())
                    handle = await agent.prompt(sid, "hi")
                    await handle.wait_done()
        except AgentNotReading as exc:
            return str(exc), [d.code for d in agent.connection.diagnostics]
        return "not stopped", []

    said, codes = anyio.run(main)
    assert "the agent does not read its input" in said and "max_unsent 65,536" in said
    assert "agent-not-reading" in codes


def test_run_stops_an_agent_that_never_reads_with_exit_5() -> None:
    # 200,000 requests at the default bound (16 MiB of answers): the run ends, says why.
    body = NEVER_READS.replace("N)", "200000)")
    out, _ = _timed_run("--timeout", "60", "--prompt", "hi", "--", *_agent(body), ceiling=90)
    assert out.returncode == 5, out.stderr.decode()[-2000:]
    assert b"does not read its input" in out.stderr and b"Traceback" not in out.stderr


# -- --terminal-limit --------------------------------------------------------------------------

TERMINAL_FLOOD = (
    """
update({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "Run",
        "content": [{"type": "terminal", "terminalId": "t1"}]})
chunk = base64.b64encode(b"0123456789abcdef" * 4096).decode()  # 64 KiB
for _ in range(160):  # 10 MiB
    update({"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": chunk})
"""
    + END_TURN
)


@pytest.mark.parametrize(("limit", "kept"), [(None, 4 << 20), ("100000", 100_000)])
def test_run_keeps_the_last_terminal_limit_bytes_of_each_terminal(
    limit: str | None, kept: int
) -> None:
    args = ["--json", "--prompt", "hi"] + (["--terminal-limit", limit] if limit else [])
    out, _ = _timed_run(*args, "--", *_agent("import base64\n" + TERMINAL_FLOOD))
    assert out.returncode == 0, out.stderr.decode()
    [term] = json.loads(out.stdout)["sessions"][0]["terminals"]
    assert len(base64.b64decode(term["output"])) == kept
    assert term["truncatedBytes"] == 160 * 65536 - kept


# -- the final snapshot is written a piece at a time -------------------------------------------


class _Pieces(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.largest = 0

    def write(self, text: str) -> int:
        self.largest = max(self.largest, len(text))
        return super().write(text)


@pytest.mark.parametrize("indent", [2, None])  # run --json; the end line of --events
def test_the_final_snapshot_is_written_in_bounded_pieces_as_dump_json_writes_it(
    indent: int | None,
) -> None:
    value: dict[str, Any] = {
        "sessions": [
            {"n": i, "text": "t\u0085\ud800" * 10, "inf": float("inf")} for i in range(100000)
        ]
    }
    out = _Pieces()
    write_json(value, out, indent=indent)
    assert out.getvalue() == dump_json(value, indent=indent) + "\n"
    # about a megabyte of JSON a write (more once escaped), never the whole text
    assert 4 * out.largest < len(out.getvalue())


# -- memory after a flood of junk --------------------------------------------------------------


def test_a_connection_that_read_a_flood_of_junk_lines_frees_it_all() -> None:
    # Scaled down from 1M lines (the leak this guards against was 3.6 KB a line).
    import gc
    import tracemalloc

    from acp_client import Connection

    def flood() -> None:
        conn = Connection(live=True)
        for _ in range(4):
            conn.receive_data(b"x\n" * 5000)
        assert len(conn.diagnostics) == 20000
        del conn

    flood()  # the first call warms caches (decoders, interned strings)
    gc.collect()
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        flood()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert after - baseline < 64 * 1024  # 20,000 lines kept would be megabytes


JUNK = (
    """
sys.stdout.write("x\\n" * 200_000)  # 400 KB of lines that are not JSON, read 64 KiB at a time
sys.stdout.flush()
"""
    + END_TURN
)


def test_a_read_of_junk_is_applied_in_slices_with_checkpoints_between(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each junk line is a diagnostic (tens of µs): a 64 KiB read of them applied at once kept
    # the loop (the live view, Ctrl-C, the writer) waiting for a second or more.
    from acp_client import _pump

    applied: list[int] = []
    checkpoints: list[int] = []
    incoming = _pump.Pump._incoming
    checkpoint = anyio.lowlevel.checkpoint

    def counted(self: _pump.Pump, data: bytes) -> None:
        applied.append(len(data))
        incoming(self, data)

    async def counted_checkpoint() -> None:
        checkpoints.append(len(applied))
        await checkpoint()

    monkeypatch.setattr(_pump.Pump, "_incoming", counted)
    monkeypatch.setattr(anyio.lowlevel, "checkpoint", counted_checkpoint)

    async def main() -> int:
        async with open_agent(_agent(JUNK)) as agent:
            with anyio.fail_after(120):
                await agent.initialize()
                sid = await agent.new_session(os.getcwd())
                handle = await agent.prompt(sid, "hi")
                assert await handle.wait_done() == "end_turn"
            return sum(d.code == "malformed-line" for d in agent.connection.diagnostics)

    assert anyio.run(main) == 200_000
    assert max(applied) <= _pump._APPLY_SLICE
    assert sum(applied) > 400_000
    # between two slices of one read there is always a checkpoint
    assert len(checkpoints) >= 400_000 // (4 * _pump._APPLY_SLICE)


def test_out_of_memory_writing_the_final_snapshot_is_one_line_and_exit_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from acp_client.cli import _run_cmd, main

    def no_memory(value: object, out: Any, *, indent: int | None = None) -> None:
        out.write('{\n  "format": ')
        raise MemoryError

    monkeypatch.setattr(_run_cmd, "write_json", no_memory)
    status = main(["run", "--json", "--prompt", "hi", "--", *_agent(END_TURN)])
    err = capsys.readouterr().err
    assert status == 1
    assert err.splitlines()[-1] == (
        "acp-client run: out of memory writing the final snapshot: it is cut short"
    )
