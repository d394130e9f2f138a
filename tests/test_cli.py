"""The acp-client command line: replay modes, exit codes, the shipped example, safety."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_client import replay_log
from acp_client.cli import main
from acp_client.testing import FakeAgent

LOGS = Path(__file__).resolve().parent / "logs"


def run_cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "acp_client.cli", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )


def snapshot_of(*args: str) -> dict[str, Any]:
    out = run_cli("replay", "--json", *args)
    assert out.returncode == 0, out.stderr.decode()
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def test_replay_without_log_uses_the_shipped_example() -> None:
    out = run_cli("replay")
    assert out.returncode == 0, out.stderr.decode()
    text = out.stdout.decode()
    assert "Run the test suite" in text and "end_turn" in text
    snap = snapshot_of()
    assert snap["format"] == "acp-client/snapshot@1"
    assert snap["diagnostics"] == []
    assert snap["sessions"][0]["completedTurns"] == ["end_turn", "end_turn"]


def test_every_sample_format_replays_to_the_same_snapshot() -> None:
    samples = sorted(p for p in LOGS.glob("sample.*") if p.is_file())
    assert len(samples) == 7
    snaps = {p.name: snapshot_of(str(p)) for p in samples}
    reference = snaps["sample.acp-client.jsonl"]
    assert reference["diagnostics"] == []
    for name, snap in snaps.items():
        session, ref = snap["sessions"][0], reference["sessions"][0]
        if name == "sample.conductor.jsons":  # hop ids are UUID strings (LOG-FORMATS 7)
            session = {**session, "prompts": [{**p, "requestId": 2} for p in session["prompts"]]}
            session["permissionRequests"] = [
                {**p, "requestId": 0} for p in session["permissionRequests"]
            ]
        assert session == ref, name


def test_stdin_and_gzip() -> None:
    data = (LOGS / "sample.jsonrpc.jsonl").read_bytes()
    out = run_cli("replay", "--json", "-", stdin=gzip.compress(data))
    assert out.returncode == 0
    assert json.loads(out.stdout)["sessions"][0]["sessionId"] == "sess-1"


def test_several_logs_print_json_lines_with_file_names(tmp_path: Path) -> None:
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_bytes((LOGS / "sample.jsonrpc.jsonl").read_bytes())
    out = run_cli("replay", "--json", "--jobs", "2", str(tmp_path))
    assert out.returncode == 0, out.stderr.decode()
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [Path(line["file"]).name for line in lines] == ["a.jsonl", "b.jsonl"]
    assert all(line["format"] == "acp-client/snapshot@1" for line in lines)


def test_stats_reports_counts() -> None:
    out = run_cli("replay", "--stats", "--json", str(LOGS / "sample.acp-client.jsonl"))
    assert out.returncode == 0
    stats = json.loads(out.stdout)
    assert stats["updates"] == 8
    assert stats["updateKinds"]["state_update"] == 4
    assert stats["stderrLines"] == 2
    assert stats["updatesPerSecond"] > 0


def test_exit_codes(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"jsonrpc":"2.0","method":"session/cancel","params":{}}\nnot json\n')
    assert run_cli("replay", "--json", str(bad)).returncode == 0  # diagnostics: still 0
    strict = run_cli("replay", "--json", "--strict", str(bad))
    assert strict.returncode == 1
    assert run_cli("replay", str(tmp_path / "missing.jsonl")).returncode == 3
    text = tmp_path / "text.log"
    text.write_text("hello\nworld\n")
    assert run_cli("replay", str(text)).returncode == 3
    assert run_cli("replay", "--format", "nope").returncode == 2
    assert "exit status" in run_cli("replay", "--help").stdout.decode()


def test_malformed_line_is_a_diagnostic_with_its_line(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    lines = FakeAgent("s").state("running").agent_chunk("m", "hi").log_lines("jsonrpc")
    log.write_text(lines[0] + "\n{broken\n" + lines[1] + "\n")
    snap = snapshot_of(str(log))
    assert [(d["line"], d["code"]) for d in snap["diagnostics"]] == [(2, "malformed-line")]
    assert snap["sessions"][0]["timeline"][0]["content"] == [{"type": "text", "text": "hi"}]


@pytest.mark.parametrize(
    "update",
    [
        '{"sessionUpdate":"agent_message","messageId":"m",'
        '"content":[{"type":"text","text":"a\\ud800b"}]}',
        '{"sessionUpdate":"_x","v":"a\\ud800b"}',
    ],
)
def test_a_lone_surrogate_escape_is_kept_and_written_back_escaped(
    tmp_path: Path, update: str
) -> None:
    # JSON's grammar allows "\ud800" (JSON.stringify writes it for a broken string); a
    # one-line log read as a document keeps it. The output must not crash on it.
    log = tmp_path / "log.jsonl"
    log.write_text(
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        + update
        + "}}\n"
    )
    snap = snapshot_of(str(log))
    assert "a\\ud800b" in json.dumps(snap["sessions"][0])
    plain = run_cli("replay", str(log))
    assert plain.returncode == 0, plain.stderr.decode()


def test_a_lenient_fix_in_a_response_result_names_its_line(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(
        '{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/p","mcpServers":[]}}\n'
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":'
        '{"sessionUpdate":"tool_call_update","toolCallId":"c","title":5}}}\n'
        '{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1","configOptions":"bad"}}\n'
    )
    snap = snapshot_of(str(log))
    found = [(d["line"], d["code"], d["message"].split("`")[1]) for d in snap["diagnostics"]]
    assert found == [(2, "lenient-default", "title"), (3, "lenient-default", "configOptions")]


def test_a_number_beyond_a_double_is_read_and_written_as_null(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        '{"sessionUpdate":"state_update","state":"running"}}}\n'
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        '{"sessionUpdate":"tool_call_update","toolCallId":"c","rawInput":{"x":1e400}}}}\n'
    )
    snap = snapshot_of(str(log))  # strict JSON: json.loads would take Infinity too, so:
    assert run_cli("replay", "--json", str(log)).stdout.count(b"Infinity") == 0
    assert snap["sessions"][0]["timeline"][0]["rawInput"] == {"x": None}
    # never silently (issue 26): said at its line, as a live connection says it
    assert [(d["code"], d["line"]) for d in snap["diagnostics"]] == [("number-beyond-double", 2)]


HOSTILE = (
    "\x1b[2J\x1b[H\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\"
    "\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07\x9b31m\u202eevil\u2066[bold red]markup[/]\x07"
)


def test_hostile_agent_text_never_reaches_the_terminal_raw(tmp_path: Path) -> None:
    agent = FakeAgent("s").state("running")
    agent.agent_chunk("m", HOSTILE).thought_chunk("t", HOSTILE)
    agent.tool_call("c", title=HOSTILE, kind="execute", status="in_progress")
    agent.tool_call("c", locations=[{"path": "/x/" + HOSTILE}])
    agent.terminal("term", command=HOSTILE, cwd="/" + HOSTILE)
    agent.terminal_chunk("term", HOSTILE.encode())
    agent.tool_content_chunk("c", {"type": "terminal", "terminalId": "term"})
    agent.plan("p", [{"content": HOSTILE, "priority": "high", "status": "pending"}])
    agent.notice("warning", HOSTILE).state("idle", stop_reason="end_turn")
    log = tmp_path / "hostile.jsonl"
    log.write_text(agent.log_text("jsonrpc"))
    out = run_cli("replay", str(log))
    assert out.returncode == 0
    rendered = out.stdout.decode()
    for bad in ("\x1b", "\x07", "\x9b", "\u202e", "\u2066"):
        assert bad not in rendered
    assert "[bold red]markup[/]" in rendered  # shown literally, not interpreted


@pytest.mark.parametrize("tty", [True, False])
def test_json_output_escapes_del_and_c1_controls_from_agent_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tty: bool
) -> None:
    # json.dumps escapes C0 controls but leaves DEL and C1 raw when piped: --json must not.
    agent = FakeAgent("s").agent_chunk("m", "a\x7fb\x1bc\x9b31m\x9d0;t")
    log = tmp_path / "del.jsonl"
    log.write_text(agent.log_text("jsonrpc"))
    monkeypatch.setattr(sys.stdout, "isatty", lambda: tty)
    assert main(["replay", "--json", str(log)]) == 0
    out = capsys.readouterr().out
    assert not any(ch in out for ch in "\x7f\x1b\x9b\x9d")  # DEL, ESC, CSI, OSC
    entry = json.loads(out)["sessions"][0]["timeline"][0]
    assert entry["content"] == [{"type": "text", "text": "a\x7fb\x1bc\x9b31m\x9d0;t"}]


def test_main_can_be_called_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "--json", str(LOGS / "sample.zed.json")]) == 0
    assert json.loads(capsys.readouterr().out)["sessions"][0]["sessionId"] == "sess-1"


def test_v1_log_replays_into_v2_state(tmp_path: Path) -> None:
    log = tmp_path / "v1.jsonl"
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "session/prompt",
            "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "Fix the test"}]},
        },
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s1",
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "Done"},
                },
            },
        },
        {"jsonrpc": "2.0", "id": 7, "result": {"stopReason": "end_turn"}},
    ]
    log.write_text("".join(json.dumps(m) + "\n" for m in messages))
    session = snapshot_of(str(log))["sessions"][0]
    assert session["protocolVersion"] == 1
    assert [(e["role"], e["messageId"]) for e in session["timeline"]] == [
        ("user", "acp-v1:user:1"),
        ("agent", "acp-v1:agent:2"),
    ]
    assert session["completedTurns"] == ["end_turn"]
    assert session["prompts"][0]["status"] == "accepted"


def _follow(
    log: Path, *options: str, meanwhile: Any = None, stop: int | None = None
) -> tuple[int, bytes, bytes]:
    """Run ``replay --follow`` on ``log``, do ``meanwhile()`` once it follows, then Ctrl-C it
    (or send ``stop``). What was written before the signal is read before the end."""
    import signal

    from cli_wait import read_until

    proc = subprocess.Popen(
        [sys.executable, "-m", "acp_client.cli", "replay", "--follow", *options, str(log)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None
        said = read_until(proc.stderr, b"(Ctrl-C or SIGTERM to stop)\n")
        if meanwhile is not None:
            meanwhile()
        if stop != 0:  # 0: it ends by itself (--strict stops at its first error)
            proc.send_signal(signal.SIGINT if stop is None else stop)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out, said + err


def test_follow_applies_lines_appended_while_running(tmp_path: Path) -> None:
    log = tmp_path / "growing.jsonl"
    first = FakeAgent("s").state("running").agent_chunk("m", "one ").log_lines("jsonrpc")
    log.write_text("".join(line + "\n" for line in first))

    def append() -> None:
        more = FakeAgent("s").agent_chunk("m", "two").state("idle", stop_reason="end_turn")
        with log.open("a") as handle:
            handle.write("".join(line + "\n" for line in more.log_lines("jsonrpc")))

    status, out, err = _follow(log, "--json", meanwhile=append)
    assert status == 0, err.decode()
    session = json.loads(out)["sessions"][0]
    assert session["timeline"][0]["content"] == [
        {"type": "text", "text": "one "},
        {"type": "text", "text": "two"},
    ]
    assert session["completedTurns"] == ["end_turn"]


def test_follow_ends_on_sigterm_like_on_ctrl_c(tmp_path: Path) -> None:
    import signal

    log = tmp_path / "log.jsonl"
    lines = FakeAgent("s").state("running").agent_chunk("m", "one").log_lines("jsonrpc")
    log.write_text("".join(line + "\n" for line in lines))
    status, out, err = _follow(log, "--json", stop=signal.SIGTERM)
    assert status == 0, err.decode()
    assert json.loads(out)["sessions"][0]["timeline"][0]["messageId"] == "m"


def test_follow_strict_stops_at_the_first_error_of_the_state_rules(tmp_path: Path) -> None:
    # LOG-FORMATS 1.5: strict stops at the first error, an update-rejected included (line 2);
    # the state_update after it is not applied and the status is 1, as without --follow.
    log = tmp_path / "log.jsonl"
    bad = {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": {"type": "text"}}
    lines = [
        *FakeAgent("s").agent_chunk("m", "hi").log_lines("jsonrpc"),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "s", "update": bad},
            }
        ),
        *FakeAgent("s").state("running").log_lines("jsonrpc"),
    ]
    log.write_text("".join(line + "\n" for line in lines))
    plain = run_cli("replay", "--json", "--strict", str(log))
    status, out, err = _follow(log, "--json", "--strict", stop=0)
    for code, stdout in ((plain.returncode, plain.stdout), (status, out)):
        assert code == 1, err.decode()
        session = json.loads(stdout)["sessions"][0]
        assert "state" not in session
        assert [d["code"] for d in json.loads(stdout)["diagnostics"]] == ["update-rejected"]


def test_stats_with_jobs_reports_stats_per_log(tmp_path: Path) -> None:
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_bytes((LOGS / "sample.jsonrpc.jsonl").read_bytes())
    out = run_cli("replay", "--stats", "--json", "--jobs", "2", str(tmp_path))
    assert out.returncode == 0, out.stderr.decode()
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [line["updates"] for line in lines] == [8, 8]


def test_stats_of_a_log_with_diagnostics(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    lines = FakeAgent("s").agent_chunk("m", "hi").log_lines("jsonrpc")
    log.write_text(lines[0] + "\nnot json\n")
    for extra in ((), ("--json",)):
        out = run_cli("replay", "--stats", *extra, str(log))
        assert out.returncode == 0, out.stderr.decode()
        assert b"malformed-line" in out.stdout
    text = tmp_path / "text.log"
    text.write_text("x\n")
    unreadable = run_cli("replay", "--stats", str(text))
    assert unreadable.returncode == 3 and b"Traceback" not in unreadable.stderr
    assert b"no-format-detected" in unreadable.stderr


def test_a_negative_terminal_limit_is_a_usage_error() -> None:
    out = run_cli("replay", "--terminal-limit", "-3")
    assert out.returncode == 2 and b"--terminal-limit" in out.stderr


def test_usage_at_the_top_of_uint64_renders_and_beyond_it_is_rejected(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    agent = FakeAgent("s").usage(2**64 - 1, 3).usage(10**400, 3)
    log.write_text("".join(agent.log_lines("jsonrpc")) + "\n")
    out = run_cli("replay", str(log))
    assert out.returncode == 0, out.stderr.decode()
    assert b"%)" in out.stdout
    assert b"update-rejected" in out.stdout


def test_a_line_nested_too_deep_is_one_malformed_line(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    lines = FakeAgent("s").agent_chunk("m", "hi").log_lines("jsonrpc")
    deep = '{"a":' * 5000 + "1" + "}" * 5000
    log.write_text(lines[0] + "\n" + deep + "\n" + lines[0] + "\n")
    snap = snapshot_of(str(log))
    assert [(d["line"], d["code"]) for d in snap["diagnostics"]] == [(2, "malformed-line")]
    assert len(snap["sessions"][0]["timeline"][0]["content"]) == 2


def test_follow_shows_what_the_end_of_the_log_completed(tmp_path: Path) -> None:
    log = tmp_path / "nolf.jsonl"
    lines = FakeAgent("s").state("running").state("idle", stop_reason="end_turn")
    log.write_text("\n".join(lines.log_lines("jsonrpc")))  # the last line has no newline
    status, out, err = _follow(log)
    assert status == 0, err.decode()
    assert b"end_turn" in out


def test_a_folder_of_one_log_prints_a_json_line_with_its_file_name(tmp_path: Path) -> None:
    # README: "a folder: one JSON line per log, with "file"" (also when it holds one)
    (tmp_path / "one.jsonl").write_bytes((LOGS / "sample.jsonrpc.jsonl").read_bytes())
    out = run_cli("replay", "--json", str(tmp_path))
    assert out.returncode == 0, out.stderr.decode()
    (line,) = out.stdout.decode().splitlines()
    assert Path(json.loads(line)["file"]).name == "one.jsonl"


@pytest.mark.parametrize(
    ("args", "status"),
    [
        (["replay", "--json", "/nonexistent/log.jsonl"], 3),
        (["replay", "--stats", "--json"], 0),
        (["replay", "--json"], 0),
    ],
)
def test_replay_json_needs_no_rich(args: list[str], status: int) -> None:
    # The library extra alone: `replay --json` (errors and --stats included) works.
    code = (
        "import sys; sys.modules['rich'] = None; sys.modules['pyte'] = None\n"
        "from acp_client.cli import main\n"
        f"sys.exit(main({args!r}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False)
    assert out.returncode == status, out.stderr.decode()
    assert b"extra" not in out.stderr


def test_a_folder_skips_hidden_files_and_folders(tmp_path: Path) -> None:
    sample = (LOGS / "sample.jsonrpc.jsonl").read_bytes()
    (tmp_path / "a.jsonl").write_bytes(sample)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.jsonl").write_bytes(sample)
    for hidden in (tmp_path / ".cache" / "state", tmp_path / ".hidden.jsonl"):
        hidden.parent.mkdir(exist_ok=True)
        hidden.write_bytes(b"not a log")
    out = run_cli("replay", "--json", str(tmp_path))
    assert out.returncode == 0, out.stderr.decode()
    names = [Path(json.loads(line)["file"]).name for line in out.stdout.splitlines()]
    assert names == ["a.jsonl", "b.jsonl"]


def _failed_setup_log(tmp_path: Path) -> Path:
    """A v2 log whose ``session/new`` the agent refused, then a second try that worked."""
    log = tmp_path / "failed.jsonl"
    messages = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}},
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 2}},
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "API key\x1b[2J missing"}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/w"}},
        {"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "s1"}},
        {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": "s1"}},
        {"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "no prompt"}},
    ]
    log.write_text("".join(json.dumps(m) + "\n" for m in messages))
    return log


def test_the_rendered_view_and_json_show_a_refused_session_new(tmp_path: Path) -> None:
    log = _failed_setup_log(tmp_path)
    out = run_cli("replay", str(log))
    assert out.returncode == 0, out.stderr.decode()
    text = out.stdout.decode()
    assert "failed requests" in text
    assert "line 4 session/new: error -32000: API key" in text
    assert "missing" in text and "\x1b[2J" not in text
    assert "no prompt" in text  # the prompt's own error, under its session
    assert text.count("-32602") == 1  # not listed again as a failed request
    # --json: the snapshot plus the command line's failedRequests (docs/snapshot.md)
    snapshot = snapshot_of(str(log))
    assert set(snapshot) == {"format", "sessions", "diagnostics", "failedRequests"}
    assert snapshot["failedRequests"] == [
        {
            "line": 4,
            "method": "session/new",
            "error": {"code": -32000, "message": "API key\x1b[2J missing"},
        }
    ]
    assert replay_log(str(log)).snapshot() == {
        k: v for k, v in snapshot.items() if k != "failedRequests"
    }  # the library's snapshot does not carry them


def test_a_log_of_only_a_refused_session_new_says_why_it_has_no_sessions(tmp_path: Path) -> None:
    log = tmp_path / "refused.jsonl"
    log.write_text("".join(_failed_setup_log(tmp_path).read_text().splitlines(keepends=True)[:4]))
    text = run_cli("replay", str(log)).stdout.decode()
    assert "(no sessions)" in text
    assert "session/new: error -32000" in text


def test_a_v1_terminal_cut_by_the_client_says_so_in_the_rendered_view(tmp_path: Path) -> None:
    sid = "s1"
    messages = [
        ("outgoing", {"id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
        ("incoming", {"id": 0, "result": {"protocolVersion": 1}}),
        ("outgoing", {"id": 1, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}),
        ("incoming", {"id": 1, "result": {"sessionId": sid}}),
        ("outgoing", {"id": 2, "method": "session/prompt", "params": {"sessionId": sid}}),
        (
            "incoming",
            {"id": 0, "method": "terminal/create", "params": {"sessionId": sid, "command": "make"}},
        ),
        ("outgoing", {"id": 0, "result": {"terminalId": "t1"}}),
        (
            "incoming",
            {
                "id": 1,
                "method": "terminal/output",
                "params": {"sessionId": sid, "terminalId": "t1"},
            },
        ),
        ("outgoing", {"id": 1, "result": {"output": "tail of it\n", "truncated": True}}),
        ("incoming", {"id": 2, "result": {"stopReason": "end_turn"}}),
    ]
    log = tmp_path / "v1.jsonl"
    log.write_text(
        "".join(
            json.dumps({"direction": d, "message": {"jsonrpc": "2.0", **m}}) + "\n"
            for d, m in messages
        )
    )
    text = run_cli("replay", str(log)).stdout.decode()
    assert "cut by the client at its byte limit" in text
    assert text.index("cut by the client") < text.index("tail of it")
    assert "cut by the client" not in run_cli("replay", "--json", str(log)).stdout.decode()
    assert replay_log(log.read_bytes()).replayer.truncated_terminals == {(sid, "t1")}


def test_stats_keep_one_line_per_row_whatever_the_file_or_update_kind(tmp_path: Path) -> None:
    agent = FakeAgent("s").custom("_x\ny\tz", v=1)
    log = tmp_path / "a\nb.jsonl"
    log.write_text(agent.log_text("jsonrpc"))
    env = {**os.environ, "COLUMNS": "400"}
    proc = subprocess.run(
        [sys.executable, "-m", "acp_client.cli", "replay", "--stats", str(log)],
        capture_output=True,
        env=env,
        check=True,
    )
    squeezed = "".join(proc.stdout.decode().split())  # rich wraps the title at its width
    assert "a\\nb.jsonl" in squeezed and "_x\\ny\\tz1" in squeezed


def test_follow_names_an_unreadable_path_escaped(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")  # a path below a file: an error, not waited for
    proc = run_cli("replay", "--follow", str(tmp_path / "file" / "nope\x1b]0;T\x07.jsonl"))
    assert proc.returncode != 0
    assert b"\x1b" not in proc.stderr and b"\x07" not in proc.stderr
    assert b"nope" in proc.stderr


def test_stats_with_follow_is_a_usage_error() -> None:
    # --follow used to ignore --stats and print the snapshot
    out = run_cli("replay", "--follow", "--stats", "x.jsonl")
    assert out.returncode == 2 and b"--stats does not go with --follow" in out.stderr
