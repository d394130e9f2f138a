"""`acp-client run` against the real peer agents: exit codes, --json, --record, --timeout."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_transport_peers import V1, V2, need_node

from acp_client import replay_log

pytestmark = pytest.mark.peer


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "acp_client.cli", "run", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_run_prints_the_snapshot_and_records_a_replayable_log(tmp_path: Path) -> None:
    need_node()
    record = tmp_path / "rec.jsonl"
    prompts = ["--prompt", "hello permission", "--prompt", "echo-first again"]
    out = run("--json", "--permission", "allow", "--record", str(record), *prompts, "--", *V2)
    assert out.returncode == 0, out.stderr.decode()
    snap = json.loads(out.stdout)
    session = snap["sessions"][0]
    assert session["completedTurns"] == ["end_turn", "end_turn"]
    assert [p["status"] for p in session["prompts"]] == ["accepted", "accepted"]
    assert replay_log(str(record)).snapshot() == snap


def test_run_exit_code_reflects_the_stop_reason(tmp_path: Path) -> None:
    need_node()
    out = run("--json", "--prompt", "permission please", "--permission", "ask", "--", *V2)
    # no terminal to ask on: the request is answered cancelled and the turn stops cancelled
    assert out.returncode == 4, out.stderr.decode()
    assert json.loads(out.stdout)["sessions"][0]["completedTurns"] == ["cancelled"]


def test_run_timeout_and_crash_are_agent_failures() -> None:
    need_node()
    slow = run("--timeout", "3", "--prompt", "slow please", "--", *V2)
    assert slow.returncode == 5
    assert b"did not end within" in slow.stderr
    crash = run("--prompt", "crash now", "--", *V2)
    assert crash.returncode == 5
    assert b"agent" in crash.stderr


def _run_on_a_terminal(*args: str) -> tuple[int, bytes]:
    """``acp-client run`` with a pseudo-terminal as stdout (the live view is on)."""
    import os

    main, follower = os.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "acp_client.cli", "run", *args],
            stdin=subprocess.DEVNULL,
            stdout=follower,
            stderr=subprocess.PIPE,
            start_new_session=True,  # no controlling terminal: a question is never asked
        )
        os.close(follower)
        shown = b""
        while True:  # drain the terminal so the child never blocks on it
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: the child closed its side
                break
            if not chunk:
                break
            shown += chunk
        _, err = proc.communicate(timeout=120)
    finally:
        os.close(main)
    return proc.returncode, err + shown


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--timeout", "3", "--prompt", "slow please"), b"did not end within"),
        (("--prompt", "crash now"), b"acp-client run:"),
    ],
)
def test_run_on_a_terminal_reports_agent_failures_with_exit_5(
    args: tuple[str, ...], said: bytes
) -> None:
    need_node()
    code, output = _run_on_a_terminal("--permission", "allow", *args, "--", *V2)
    assert code == 5, output.decode(errors="replace")[-2000:]
    assert said in output and b"Traceback" not in output
    if b"crash" in b" ".join(a.encode() for a in args):
        # the last frame is the state when the agent died: its message so far is shown
        assert b"Hello, world" in output, output.decode(errors="replace")[-2000:]


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_the_live_view_is_on_in_ask_mode_and_pauses_for_the_question() -> None:
    # The default --permission ask renders the conversation live too; the question (here:
    # no terminal to ask on, so cancelled) pauses the view and the turn goes on after it.
    need_node()
    code, output = _run_on_a_terminal("--prompt", "hello permission", "--", *V2)
    assert code == 4, output.decode(errors="replace")[-2000:]  # the turn stopped cancelled
    assert output.count(b"\x1b[?25l") >= 2  # the live view hid the cursor, and again after
    assert b"Traceback" not in output and b"cancelled" in output


def test_run_with_a_recording_it_cannot_write_names_the_file_and_shows_the_state(
    tmp_path: Path,
) -> None:
    need_node()
    out = run(
        "--json", "--permission", "allow", "--record", str(tmp_path), "--prompt", "hi", "--", *V2
    )
    assert out.returncode == 5
    assert b"cannot write the recording" in out.stderr and str(tmp_path).encode() in out.stderr
    assert b"Traceback" not in out.stderr


def test_a_prompt_on_stdin_that_is_not_utf8_is_a_usage_error() -> None:
    out = run("--", sys.executable, "-c", "pass", stdin=b"hi \xff there\n")
    assert out.returncode == 2
    assert b"not UTF-8" in out.stderr and b"Traceback" not in out.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_during_a_turn_cancels_it_with_session_cancel(tmp_path: Path) -> None:
    import signal
    import time

    need_node()
    record = tmp_path / "rec.jsonl"
    args = ["--json", "--record", str(record), "--prompt", "slow please", "--prompt", "again"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "acp_client.cli", "run", *args, "--", *V2],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while b'"running"' not in (record.read_bytes() if record.exists() else b""):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    assert b"cancelling the turn" in err and b"Traceback" not in err
    session = json.loads(out)["sessions"][0]
    assert session["completedTurns"] == ["cancelled"]  # and the second prompt was not sent
    sent = [json.loads(line) for line in record.read_bytes().splitlines()]
    methods = [r["message"].get("method") for r in sent if r["direction"] == "outgoing"]
    assert methods.count("session/cancel") == 1 and methods.count("session/prompt") == 1


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize(
    ("signum", "status", "said"),
    [
        ("SIGINT", 130, b"stopped (Ctrl-C)"),
        ("SIGTERM", 143, b"stopped (SIGTERM)"),
        ("SIGHUP", 129, b"stopped (SIGHUP)"),  # the terminal closed: the agent is stopped too
    ],
)
def test_a_signal_outside_a_turn_stops_the_run_and_the_agent(
    tmp_path: Path, signum: str, status: int, said: bytes
) -> None:
    import os
    import signal
    import time

    pid_file = tmp_path / "agent.pid"
    # An agent that never answers initialize and does not stop when its stdin closes.
    script = (
        f"import os, signal, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
    )
    command = ["run", "--prompt", "hi", "--", sys.executable, "-c", script]
    proc = subprocess.Popen(
        [sys.executable, "-m", "acp_client.cli", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    # The signals are watched from before the agent is started: no need to wait longer.
    proc.send_signal(getattr(signal, signum))  # no turn yet: stop at once
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == status, err.decode()
    assert said in err and b"Traceback" not in err
    with pytest.raises(ProcessLookupError):  # killed and reaped before `run` exited
        os.kill(int(pid_file.read_text()), 0)


@pytest.mark.parametrize("end", [b"\n", b"\r\n"])
def test_run_reads_the_prompt_from_stdin_with_a_v1_agent(end: bytes) -> None:
    # The line end a file or a Windows editor left is not part of the prompt.
    out = run("--json", "--", *V1, stdin=b"hello\r\nfrom stdin" + end)
    assert out.returncode == 0, out.stderr.decode()
    session = json.loads(out.stdout)["sessions"][0]
    assert session["protocolVersion"] == 1
    text = "hello\r\nfrom stdin"
    assert session["timeline"][0]["content"] == [{"type": "text", "text": text}]


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "0", "soon"])
def test_a_timeout_that_is_not_a_positive_number_is_a_usage_error(value: str) -> None:
    out = run("--timeout", value, "--prompt", "hi", "--", sys.executable, "-c", "pass")
    assert out.returncode == 2
    assert b"--timeout" in out.stderr and b"Traceback" not in out.stderr


def test_a_double_dash_among_the_agents_arguments_reaches_the_agent(tmp_path: Path) -> None:
    seen = tmp_path / "argv.json"
    script = f"import json, sys; open({str(seen)!r}, 'w').write(json.dumps(sys.argv[1:]))"
    out = run("--prompt", "hi", "--", sys.executable, "-c", script, "--", "--literal")
    assert out.returncode == 5  # the agent exits without answering: an agent failure
    assert json.loads(seen.read_text()) == ["--", "--literal"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--prompt", " "), b"empty"),
        (("--prompt", "hi", "--cwd", "/nonexistent/dir"), b"not a directory"),
        (("--prompt", "hi", "--record", "/nonexistent/dir/x.jsonl"), b"no such folder"),
    ],
)
def test_bad_run_options_are_usage_errors_naming_the_problem(
    args: tuple[str, ...], says: bytes
) -> None:
    out = run(*args, "--", sys.executable, "-c", "pass")
    assert out.returncode == 2 and says in out.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")
def test_children_of_an_agent_that_exited_are_stopped_with_its_group(tmp_path: Path) -> None:
    import os
    import time

    pid_file = tmp_path / "child.pid"
    # An agent that starts a long-running helper (an MCP server, a test run), then exits.
    script = (
        "import subprocess, sys; "
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))"
    )
    out = run("--prompt", "hi", "--", sys.executable, "-c", script)
    assert out.returncode == 5, out.stderr.decode()
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while True:  # its parent is gone: init reaps it once it is stopped
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        assert time.monotonic() < deadline, "the agent's child was left running"
        time.sleep(0.05)


def test_a_recording_is_not_touched_when_the_agent_cannot_start(tmp_path: Path) -> None:
    record = tmp_path / "precious.jsonl"
    record.write_bytes(b'{"keep":"me"}\n')
    out = run("--record", str(record), "--prompt", "hi", "--", str(tmp_path / "no-such-agent"))
    assert out.returncode == 5 and b"cannot start the agent" in out.stderr
    assert record.read_bytes() == b'{"keep":"me"}\n'


def test_a_relative_agent_path_is_taken_from_where_run_is_started(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    agent = tmp_path / "agent.py"
    agent.write_text(
        f'#!{sys.executable}\nimport runpy\nrunpy.run_path({V1[1]!r}, run_name="__main__")\n'
    )
    agent.chmod(0o755)
    command = ["run", "--json", "--cwd", "work", "--prompt", "hi", "--", "./agent.py"]
    out = subprocess.run(
        [sys.executable, "-m", "acp_client.cli", *command],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr.decode()
    assert json.loads(out.stdout)["sessions"][0]["completedTurns"] == ["end_turn"]


#: What an inline test agent starts with: one JSON message per line in and out.
AGENT_IO = """
import json, sys
def send(o):
    sys.stdout.write(json.dumps(o) + "\\n"); sys.stdout.flush()
def recv():
    line = sys.stdin.readline()
    return json.loads(line) if line else None
def answer_initialize(name):
    m = recv()
    result = {"protocolVersion": 2, "info": {"name": name, "version": "1"}, "capabilities": {}}
    send({"jsonrpc": "2.0", "id": m["id"], "result": result})
"""

HELD_AGENT = (
    AGENT_IO
    + """answer_initialize("held")
m = recv()
send({"jsonrpc": "2.0", "id": m["id"], "result": {"sessionId": "s1"}})
prompt = recv()  # held: the agent is still busy before it takes it
open(sys.argv[1], "w").write("held")
while (m := recv()) is not None:
    if m.get("method") == "session/cancel":
        error = {"code": -32800, "message": "request cancelled"}
        send({"jsonrpc": "2.0", "id": prompt["id"], "error": error})
"""
)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_withdrawing_a_held_prompt_is_an_interruption(tmp_path: Path) -> None:
    # 11.2 / R63: a prompt the agent had not taken is answered -32800 after session/cancel;
    # that is the Ctrl-C's doing, not an agent failure.
    import signal
    import time

    marker = tmp_path / "held"
    command = ["run", "--json", "--prompt", "hi", "--", sys.executable, "-c", HELD_AGENT]
    proc = subprocess.Popen(
        [sys.executable, "-m", "acp_client.cli", *command, str(marker)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while not marker.exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err.decode()
    assert b"withdrawn" in err and b"failed" not in err
    assert json.loads(out)["sessions"][0]["prompts"][0]["status"] == "rejected"


#: An inline v2 agent up to its session s1 (``update(u)`` sends one of its updates).
SESSION_STARTED = (
    AGENT_IO
    + """def update(u):
    send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": u}})
answer_initialize("agent")
m = recv()
send({"jsonrpc": "2.0", "id": m["id"], "result": {"sessionId": "s1"}})
"""
)

#: An inline v2 agent up to a turn that runs: session s1, prompt u1 accepted and echoed.
TURN_STARTED = (
    SESSION_STARTED
    + """m = recv()
send({"jsonrpc": "2.0", "id": m["id"], "result": {"messageId": "u1"}})
update({"sessionUpdate": "user_message", "messageId": "u1", "content": m["params"]["prompt"]})
update({"sessionUpdate": "state_update", "state": "running"})
"""
)

FLOOD_AGENT = (
    TURN_STARTED
    + """for i in range(5000):  # every request first, the answers read afterwards
    send({"jsonrpc": "2.0", "id": 1000 + i, "method": "_vendor/telemetry", "params": {"i": i}})
for _ in range(5000):
    assert recv()["error"]["code"] == -32601
update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
while recv() is not None:
    pass
"""
)


def test_an_agent_sending_many_requests_before_reading_answers_does_not_stall_the_run() -> None:
    # Reading never waits on writing: the answers (-32601, far more than a pipe holds)
    # are written while the agent's requests keep being read.
    out = run(
        "--json", "--timeout", "30", "--prompt", "hi", "--", sys.executable, "-c", FLOOD_AGENT
    )
    assert out.returncode == 0, out.stderr.decode()
    assert json.loads(out.stdout)["sessions"][0]["completedTurns"] == ["end_turn"]


def _hang_up(
    tmp_path: Path,
    agent: list[str],
    ready: Path,
    *,
    options: tuple[str, ...] = (),
    stdout: Path | None = None,
    stderr: Path | None = None,
    signum: str = "SIGHUP",
) -> int:
    """Run on a pseudo-terminal, close it once ``ready`` exists, then send ``signum``.

    ``stdout`` / ``stderr``: a file instead of the terminal for that stream.
    """
    import os
    import signal
    import time

    main, follower = os.openpty()
    with (
        open(stdout, "wb") if stdout else contextlib.nullcontext(follower) as out,
        open(stderr, "wb") if stderr else contextlib.nullcontext(follower) as err,
    ):
        proc = subprocess.Popen(
            [sys.executable, "-m", "acp_client.cli", "run", *options, "--prompt=hi", "--", *agent],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,  # by default both gone with the terminal, as in real life
            start_new_session=True,
        )
    os.close(follower)
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() or not ready.read_text():
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        # The live view (when on) drew its first frame before the prompt went out, and
        # the agent writes `ready` only once it has the prompt: no need to wait longer.
    finally:
        os.close(main)  # the terminal closes: every later write to it fails
    proc.send_signal(getattr(signal, signum))
    return proc.wait(timeout=60)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("during", ["setup", "live view"])
def test_a_closed_terminal_ends_the_run_with_129_though_nothing_can_be_written(
    tmp_path: Path, during: str
) -> None:
    # SIGHUP means the terminal is gone: "stopped (SIGHUP)", the live view's last frame and
    # Python's own flush at exit all fail; the status must still say what happened.
    ready = tmp_path / "ready"
    if during == "setup":
        script = f"open({str(ready)!r}, 'w').write('up'); import time; time.sleep(60)"
    else:
        script = HELD_AGENT
    code = _hang_up(tmp_path, [sys.executable, "-c", script, str(ready)], ready)
    assert code == 129


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_run_started_with_sighup_ignored_keeps_ignoring_it(tmp_path: Path) -> None:
    # `nohup acp-client run ...`: the hangup is ignored; here the run goes on until the agent,
    # which never answers, makes --timeout end it (5), instead of stopping at once (129).
    import signal
    import time

    ready = tmp_path / "ready"
    script = f"open({str(ready)!r}, 'w').write('up'); import time; time.sleep(60)"
    command = ["run", "--timeout", "2", "--prompt", "hi", "--", sys.executable, "-c", script]
    proc = subprocess.Popen(
        [sys.executable, "-m", "acp_client.cli", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),  # what nohup does
    )
    deadline = time.monotonic() + 30
    while not ready.exists() or not ready.read_text():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 5, err.decode()
    assert b"stopped" not in err


#: An agent that wants auth/login (v2) or authenticate (v1) before session/new.
AUTH_AGENT = (
    AGENT_IO
    + """version = int(sys.argv[1])
authed = False
while (m := recv()) is not None:
    method, rid = m.get("method"), m.get("id")
    if method == "initialize":
        key = {"methodId": "key"} if version == 2 else {"id": "key"}
        methods = [{"type": "agent", "name": "API key", **key}, {"type": "agent", "name": "SSO",
                   **{k: "sso" for k in key}},
                   # a kind the schema does not name (Codex's ACP adapter lists two)
                   {"type": "env_var", "name": "Env key", "varName": "ENV_KEY",
                    **{k: "env-key" for k in key}}]
        if version == 2:
            result = {"protocolVersion": 2, "info": {"name": "a", "version": "1"},
                      "capabilities": {"session": {}}, "authMethods": methods}
        else:
            result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": methods}
        send({"jsonrpc": "2.0", "id": rid, "result": result})
    elif method == ("auth/login" if version == 2 else "authenticate"):
        authed = m["params"]["methodId"] in ("key", "env-key")
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    elif method == "session/new":
        if not authed:
            error = {"code": -32000, "message": "Authentication required"}
            send({"jsonrpc": "2.0", "id": rid, "error": error})
        else:
            send({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": "s1"}})
    elif method == "session/prompt":
        if version == 2:
            send({"jsonrpc": "2.0", "id": rid, "result": {"messageId": "u1"}})
            for update in ({"sessionUpdate": "user_message", "messageId": "u1",
                            "content": m["params"]["prompt"]},
                           {"sessionUpdate": "state_update", "state": "running"},
                           {"sessionUpdate": "state_update", "state": "idle",
                            "stopReason": "end_turn"}):
                send({"jsonrpc": "2.0", "method": "session/update",
                      "params": {"sessionId": "s1", "update": update}})
        else:
            send({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}})
    elif rid is not None:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": method}})
"""
)


@pytest.mark.parametrize("version", ["2", "1"])
def test_auth_logs_in_before_the_session_and_its_absence_is_explained(
    tmp_path: Path, version: str
) -> None:
    agent = ["--", sys.executable, "-c", AUTH_AGENT, version]
    record = tmp_path / "rec.jsonl"
    out = run("--json", "--auth", "key", "--record", str(record), "--prompt", "hi", *agent)
    assert out.returncode == 0, out.stderr.decode()
    assert json.loads(out.stdout)["sessions"][0]["completedTurns"] == ["end_turn"]
    sent = [json.loads(line)["message"] for line in record.read_bytes().splitlines()]
    login = "auth/login" if version == "2" else "authenticate"  # v1's name for it
    assert [m.get("method") for m in sent if "method" in m][:3] == [
        "initialize",
        login,
        "session/new",
    ]
    # Without --auth: the agent's refusal, then the methods --auth can name.
    plain = run("--prompt", "hi", *agent)
    assert plain.returncode == 5
    assert b"Authentication required" in plain.stderr
    assert b"--auth METHOD_ID" in plain.stderr and b"key  (API key)" in plain.stderr
    assert b"sso  (SSO)" in plain.stderr
    # A method the agent does not offer is a usage error naming the ones it does.
    wrong = run("--auth", "nope", "--prompt", "hi", *agent)
    assert wrong.returncode == 2, wrong.stderr.decode()
    assert b"'key', 'sso', 'env-key'" in wrong.stderr, wrong.stderr.decode()
    # A method of a kind acp-client does not know is listed, and usable with a warning.
    assert b"env-key  (Env key)" in plain.stderr
    env = run("--json", "--auth", "env-key", "--prompt", "hi", *agent)
    assert env.returncode == 0, env.stderr.decode()
    assert b"warning: --auth 'env-key' is of a kind acp-client does not know ('env_var')" in (
        env.stderr
    )
    assert json.loads(env.stdout)["sessions"][0]["completedTurns"] == ["end_turn"]
    # Logged in with a method that did not satisfy the agent: not told to use --auth again.
    again = run("--auth", "sso", "--prompt", "hi", *agent)
    assert again.returncode == 5 and b"Authentication required" in again.stderr
    assert b"--auth METHOD_ID" not in again.stderr, again.stderr.decode()


def test_a_failed_request_shows_the_errors_data_and_the_agents_last_words() -> None:
    # What a real agent's "Internal error" means is in its `data` and on its stderr.
    script = (
        AGENT_IO
        + """answer_initialize("a")
m = recv()
print("query closed: no model \\x1b[31mconfigured", file=sys.stderr, flush=True)
error = {"code": -32603, "message": "Internal error\\nacp-client run: all good",
         "data": {"details": "Query closed"}}
send({"jsonrpc": "2.0", "id": m["id"], "error": error})
recv()
"""
    )
    out = run("--prompt", "hi", "--", sys.executable, "-c", script)
    assert out.returncode == 5
    err = out.stderr.decode()
    assert "Internal error\\nacp-client run: all good (code -32603)" in err  # kept on its line
    assert "\nacp-client run: all good" not in err
    assert 'data: {"details":"Query closed"}' in err
    assert "last lines of the agent's stderr:\n  query closed: no model" in err
    assert "\x1b" not in err  # the agent's escape is shown, not obeyed


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_closed_terminal_loses_only_what_went_to_it(tmp_path: Path) -> None:
    # The terminal held one stream; the other went to a file and keeps what was said there.
    ready = tmp_path / "ready"
    agent = [sys.executable, "-c", HELD_AGENT, str(ready)]
    snapshot = tmp_path / "out.json"
    code = _hang_up(tmp_path, agent, ready, options=("--json",), stdout=snapshot)
    assert code == 129
    assert json.loads(snapshot.read_bytes())["sessions"][0]["prompts"][0]["requestId"] == 2
    ready.unlink()
    said = tmp_path / "run.log"
    assert _hang_up(tmp_path, agent, ready, stderr=said) == 129  # the live view on the terminal
    assert b"stopped (SIGHUP)" in said.read_bytes()
    # A Ctrl-C while the live view is on: its "cancelling" line goes through the view (whose
    # terminal is gone); the log file still gets what follows.
    ready.unlink()
    assert _hang_up(tmp_path, agent, ready, stderr=said, signum="SIGINT") == 130
    assert b"the prompt was withdrawn" in said.read_bytes()


def test_a_reader_that_goes_away_does_not_change_the_exit_status() -> None:
    # `acp-client run ... | head -c 0`: the final render meets a closed pipe; the turn still
    # ended with end_turn, so the status is 0.
    proc = subprocess.Popen(
        [sys.executable, "-m", "acp_client.cli", "run", "--prompt", "hi", "--", *V1],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # nobody reads the output
    with proc.stderr:
        err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, err.decode()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_run_with_every_stop_signal_ignored_still_runs() -> None:
    import signal

    def ignore_all() -> None:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)

    out = subprocess.run(
        [sys.executable, "-m", "acp_client.cli", "run", "--json", "--prompt", "hi", "--", *V1],
        capture_output=True,
        timeout=120,
        check=False,
        preexec_fn=ignore_all,
    )
    assert out.returncode == 0, out.stderr.decode()


def test_run_and_replay_agree_on_a_child_session(tmp_path: Path) -> None:
    """ACP-V2-PREVIEW 3.1: ``run`` and ``replay`` of its recording give the same tree."""
    need_node()
    record = tmp_path / "rec.jsonl"
    out = run("--json", "--record", str(record), "--prompt", "subagent hello", "--", *V2)
    assert out.returncode == 0, out.stderr.decode()
    snap = json.loads(out.stdout)
    assert [s["sessionId"] for s in snap["sessions"]] == ["sess-1", "sess-1-child-1"]
    assert snap["sessions"][1]["parentSessionId"] == "sess-1"
    assert replay_log(str(record)).snapshot() == snap
    shown = subprocess.run(
        [sys.executable, "-m", "acp_client.cli", "replay", str(record)],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert b"subagent sess-1-child-1" in shown.stdout and b"child of sess-1" in shown.stdout
