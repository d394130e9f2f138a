"""The command line and the package as people meet them: the distribution name, the help, the
usage errors, ``python -m acp_client``, folder replay, piped output, the small messages, the
client's version, unknown auth kinds kept, an agent that claims v2 and speaks v1, failed
requests in ``--json``, and malformed agent lines named and quoted (issue 24)."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from cli_wait import read_until
from test_transport_peers import V2, need_node

import acp_client
from acp_client import Connection, encode, replay_log
from acp_client.cli import DISTRIBUTION
from acp_client.testing import FakeAgent

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPTS = Path(__file__).resolve().parent / "transcripts"
CLI = [sys.executable, "-m", "acp_client.cli"]


def cli(*args: str, **kw: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*CLI, *args], capture_output=True, check=False, timeout=120, **kw)


def _log(tmp_path: Path, name: str = "log.jsonl", text: str = "hello") -> Path:
    log = tmp_path / name
    lines = FakeAgent("s").state("running").agent_chunk("m", text).log_lines("jsonrpc")
    log.write_text("".join(line + "\n" for line in lines))
    return log


# ------------------------------------------------------------------ the distribution name


def test_the_distribution_name_is_used_everywhere() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == DISTRIBUTION == "acp-client-state"
    extras = project["optional-dependencies"]
    assert f"{DISTRIBUTION}[cli]" in extras["run"]
    assert f"{DISTRIBUTION}[all,dask,parquet]" in extras["test"]
    readme = (ROOT / "README.md").read_text()
    install = readme[readme.index("## Install") : readme.index("## The layers")]
    assert f"pip install {DISTRIBUTION} " in install
    assert f"pip install '{DISTRIBUTION}[cli]'" in install
    assert "pip install acp-client " not in readme
    # the extras of the distribution, however quoted (two spots said "acp-client[fuzz]")
    assert re.search(r"(?<![\w-])acp-client\[", readme) is None
    assert "unrelated project" in install and "module of the same name" in install


def test_the_missing_extra_message_names_the_distribution() -> None:
    script = (
        "import sys; sys.modules['rich'] = None; from acp_client.cli import main; "
        "raise SystemExit(main(['replay']))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, check=False)
    assert out.returncode == 2
    assert f"pip install '{DISTRIBUTION}[cli]'".encode() in out.stderr, out.stderr.decode()


def test_stats_and_json_need_no_rich(tmp_path: Path) -> None:
    """A summary or a snapshot imports no table library (issue 23: the process's start-up);
    --stats prints one plain ``key  value`` line per count, escaped."""
    log = str(_log(tmp_path, "a\tb.jsonl"))
    for args in (["--stats", log], ["--json", log], ["--stats", "--json", log]):
        script = (
            "import sys; sys.modules['rich'] = None; from acp_client.cli import main; "
            f"raise SystemExit(main(['replay', *{args!r}]))"
        )
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, check=False)
        assert out.returncode == 0, (args, out.stderr.decode())
    lines = cli("replay", "--stats", log).stdout.decode().splitlines()
    assert lines[0].endswith("a\\tb.jsonl")
    rows = [line.split(None, 1) for line in lines[1:]]
    assert ["updates", "2"] in rows and ["format", "jsonrpc"] in rows
    assert all(line.startswith("  ") for line in lines[1:])


# ------------------------------------------------------------------------ help and usage


def test_the_top_level_help_has_exit_codes_and_examples() -> None:
    out = cli("--help")
    assert out.returncode == 0
    text = out.stdout.decode()
    assert "exit status:" in text and "130" in text and "examples:" in text
    assert "acp-client replay --follow --events LOG" in text


@pytest.mark.parametrize(
    ("args", "usage", "said"),
    [
        (["run"], "usage: acp-client run", "run needs an agent command after --"),
        (["run", "--prompt", " ", "--", "x"], "usage: acp-client run", "a --prompt is empty"),
        (["replay", "--events", "x.jsonl"], "usage: acp-client replay", "goes with --follow"),
        (["replay", "--follow", "a", "b"], "usage: acp-client replay", "exactly one log"),
    ],
)
def test_a_subcommand_error_prints_the_subcommands_usage(
    args: list[str], usage: str, said: str
) -> None:
    out = cli(*args)
    assert out.returncode == 2
    err = out.stderr.decode()
    assert err.startswith(usage) and said in err, err
    assert "COMMAND ..." not in err  # not the top-level usage


def test_python_dash_m_acp_client_is_the_command(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "acp_client", "replay", "--json", str(_log(tmp_path))],
        capture_output=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr.decode()
    assert json.loads(out.stdout)["sessions"][0]["sessionId"] == "s"
    help_ = subprocess.run([sys.executable, "-m", "acp_client", "--help"], capture_output=True)
    assert help_.returncode == 0 and b"usage: acp-client" in help_.stdout


# --------------------------------------------------------------------------- folder replay


def test_folder_replay_takes_only_what_looks_like_a_log(tmp_path: Path) -> None:
    _log(tmp_path, "a.jsonl")
    data = _log(tmp_path, "b.jsonl").read_bytes()
    (tmp_path / "b.jsonl").unlink()
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress(data))
    (tmp_path / "README.md").write_text("# captures\n")
    (tmp_path / "run.sh").write_text("#!/bin/sh\nagent | tee log.jsonl\n")
    (tmp_path / "notes.json").write_text("not json at all\n")  # the name fits, the bytes not
    (tmp_path / "fake.jsonl.gz").write_text("{}")  # not gzip data
    out = cli("replay", "--json", str(tmp_path))
    assert out.returncode == 0, out.stderr.decode()
    names = [Path(json.loads(line)["file"]).name for line in out.stdout.splitlines()]
    assert names == ["a.jsonl", "b.jsonl.gz"]
    (line,) = out.stderr.decode().splitlines()  # one line for everything skipped
    assert line.startswith("acp-client replay: skipped 4 files that do not look like logs (")
    assert "and 1 more" in line


def test_looks_like_log_goes_by_name_and_first_bytes(tmp_path: Path) -> None:
    from acp_client.cli._replay_cmd import looks_like_log

    cases = {
        "a.jsonl": b'\xef\xbb\xbf  {"x": 1}\n',
        "b.json": b"[\n]",
        "c.log": b'{"jsonrpc": "2.0"}',
        "d.txt": b'{"jsonrpc": "2.0"}',
        "e.jsonl": b"hello",
        "f.ndjson.gz": gzip.compress(b"{}"),
        "g.jsonl": b"",
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    taken = sorted(name for name in cases if looks_like_log(tmp_path / name))
    assert taken == ["a.jsonl", "b.json", "c.log", "f.ndjson.gz"]


# --------------------------------------------------------------------------- piped output


def test_piped_output_is_neither_padded_nor_wrapped_at_80_columns(tmp_path: Path) -> None:
    text = "word " * 60 + "end-of-the-long-line"
    out = cli("replay", str(_log(tmp_path, text=text)), env={**os.environ, "COLUMNS": ""})
    assert out.returncode == 0, out.stderr.decode()
    lines = out.stdout.decode().splitlines()
    assert any(line.strip() == text.strip() for line in lines)  # one line, whole
    assert all(line == line.rstrip() for line in lines)
    assert max(len(line) for line in lines if set(line) <= {"─"} | set(line[:9])) < 400


def test_stats_keeps_a_long_file_name_on_one_line(tmp_path: Path) -> None:
    name = "a-rather-long-capture-name-" * 5 + ".jsonl"
    out = cli("replay", "--stats", str(_log(tmp_path, name)))
    assert out.returncode == 0, out.stderr.decode()
    assert any(name in line for line in out.stdout.decode().splitlines())


# ------------------------------------------------------------------- what run says first


@pytest.mark.skipif(sys.platform == "win32", reason="ptys")
def test_run_without_prompt_on_a_terminal_says_it_reads_stdin() -> None:
    main, follower = os.openpty()
    with subprocess.Popen(
        [*CLI, "run", "--", sys.executable, "-c", "pass"],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        os.close(follower)
        try:
            assert proc.stderr is not None
            said = read_until(proc.stderr, b"Ctrl-D on a line of its own\n")
            assert b"no --prompt: type the prompt" in said
            os.write(main, b"\x04")  # an empty prompt: a usage error
            _, err = proc.communicate(timeout=60)
        finally:
            os.close(main)
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 2 and b"give --prompt TEXT" in err


def test_run_with_a_prompt_on_stdin_from_a_pipe_says_nothing_about_it() -> None:
    out = cli("run", "--", sys.executable, "-c", "pass", input=b"")
    assert out.returncode == 2 and b"type the prompt" not in out.stderr


def test_permission_ask_without_a_terminal_says_it_cancels() -> None:
    need_node()
    out = subprocess.run(
        [*CLI, "run", "--json", "--prompt", "permission please", "--", *V2],
        capture_output=True,
        check=False,
        start_new_session=True,  # no controlling terminal
        timeout=120,
    )
    assert out.returncode == 4, out.stderr.decode()
    assert b"no terminal to ask on: cancelled" in out.stderr
    assert b"--permission allow or reject" in out.stderr


# ------------------------------------------------------------------------------ the core


def test_the_client_reports_its_real_version_in_initialize() -> None:
    import inspect

    from acp_client.transport import AgentConnection

    sent = json.loads(Connection().send_initialize().data)
    assert sent["params"]["info"] == {"name": "acp-client", "version": acp_client.__version__}
    assert acp_client.__version__ != "0"
    default = inspect.signature(AgentConnection.initialize).parameters["version"].default
    assert default == acp_client.__version__


def _initialized(version: int) -> Connection:
    conn = Connection()
    rid = conn.send_initialize().request_id
    if version == 2:
        result: dict[str, Any] = {
            "protocolVersion": 2,
            "info": {"name": "a", "version": "1"},
            "capabilities": {},
        }
    else:
        result = {"protocolVersion": 1, "agentCapabilities": {}, "agentInfo": {"name": "a"}}
    conn.receive_data(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode() + b"\n")
    return conn


@pytest.mark.parametrize("version", [2, 1])
@pytest.mark.parametrize("split", [False, True])
def test_a_malformed_agent_line_is_named_by_number_and_quoted_escaped(
    version: int, split: bool
) -> None:
    conn = _initialized(version)
    before = len(conn.diagnostics)
    note = b'{"jsonrpc": "2.0", "method": "_x/ping"}\n'
    bad = b"panic: \x1b]0;owned\x07 caf\xc3\xa9 " + b"x" * 300 + b"\n"
    if split:  # one read per line, and a line split over two reads
        for piece in (note, bad[:10], bad[10:]):
            conn.receive_data(piece)
    else:
        conn.receive_data(note + bad)
    (diag,) = [d for d in conn.diagnostics[before:] if d.code == "malformed-line"]
    assert diag.line is None
    assert diag.message.startswith("agent output line 3: not valid JSON")
    quoted = diag.message[diag.message.index(': "panic') + 2 :]
    assert quoted.startswith('"panic: \\u001b]0;owned\\u0007 caf\\u00e9 xxx')
    assert quoted.endswith('"…') and len(quoted) < 200
    assert all(ch.isprintable() for ch in diag.message)


def test_unknown_auth_method_kinds_are_kept_listed_and_re_encoded() -> None:
    result = replay_log(str(TRANSCRIPTS / "codex_acp_handshake.jsonl"))
    methods = result.connection.auth_methods
    kinds = [m.get("type") if isinstance(m, dict) else type(m).__name__ for m in methods]
    assert kinds == ["AuthMethodAgent", "env_var", "env_var"]
    assert [m["methodId"] for m in methods[1:]] == ["codex-api-key", "openai-api-key"]
    assert methods[2]["varName"] == "OPENAI_API_KEY"
    from acp_client.schema import AgentCapabilities, Implementation, InitializeResponse

    response = InitializeResponse(
        protocol_version=2,
        info=Implementation(name="codex-acp", version="0.16.0"),
        capabilities=AgentCapabilities(),
        auth_methods=methods,
    )
    wire = json.loads(encode(response))
    assert [m["methodId"] for m in wire["authMethods"]] == [
        "chatgpt",
        "codex-api-key",
        "openai-api-key",
    ]
    assert wire["authMethods"][1] == {
        "name": "Use CODEX_API_KEY",
        "description": "Requires setting the `CODEX_API_KEY` environment variable.",
        "type": "env_var",
        "varName": "CODEX_API_KEY",
        "methodId": "codex-api-key",
    }


def test_an_agent_that_claims_v2_and_speaks_v1_replays_as_v1_with_a_diagnostic() -> None:
    log = TRANSCRIPTS / "v1_agent_claims_v2.jsonl"
    result = replay_log(str(log))
    (session,) = result.snapshot()["sessions"]
    assert session["protocolVersion"] == 1
    texts = [[b["text"] for b in e["content"]] for e in session["timeline"]]
    assert texts == [["hello"], ["Hi", " there"]]
    assert session["completedTurns"] == ["end_turn"]
    (diag,) = result.diagnostics
    assert (diag.code, diag.line, diag.severity) == ("agent-speaks-v1", 6, "warning")
    assert "protocol version 2" in diag.message and "--protocol 1" in diag.message
    # Forced to v2, the updates are rejected; the command line hints at --protocol 1.
    forced = cli("replay", "--json", "--protocol", "2", str(log))
    assert forced.returncode == 0
    assert b"if the agent speaks ACP v1, replay with --protocol 1" in forced.stderr
    assert b"--protocol 1" not in cli("replay", "--json", str(log)).stderr


def test_a_v2_agent_keeps_replaying_as_v2_after_its_claim() -> None:
    result = replay_log(str(TRANSCRIPTS / "recorded_v2_agent.jsonl"))
    assert {s["protocolVersion"] for s in result.snapshot()["sessions"]} == {2}
    assert "agent-speaks-v1" not in {d.code for d in result.diagnostics}


def test_a_failed_initialize_is_in_the_json(tmp_path: Path) -> None:
    log = tmp_path / "failed.jsonl"
    messages = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}},
        {"jsonrpc": "2.0", "id": 0, "error": {"code": -32603, "message": "no model"}},
        *(json.loads(line) for line in FakeAgent("s").agent_chunk("m", "x").log_lines("jsonrpc")),
    ]
    log.write_text("".join(json.dumps(m) + "\n" for m in messages))
    out = cli("replay", "--json", str(log))
    assert out.returncode == 0, out.stderr.decode()
    assert json.loads(out.stdout)["failedRequests"] == [
        {"line": 2, "method": "initialize", "error": {"code": -32603, "message": "no model"}}
    ]


def test_folder_replay_reports_an_unreadable_folder_as_an_unreadable_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A folder replay used to pass over a folder it could not list and exit 0 (an unreadable
    # file exits 3). Tests may run as root, where chmod does not bite: the listing fails here.
    from acp_client.cli import main

    _log(tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir()
    _log(locked, "inside.jsonl")
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(locked))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert main(["replay", "--stats", "--json", str(tmp_path)]) == 3
    out, err = capsys.readouterr()
    assert f"cannot read {locked}: Permission denied" in err
    assert [json.loads(line)["file"] for line in out.splitlines()] == [str(tmp_path / "log.jsonl")]


def test_folder_replay_reports_a_link_to_nothing_and_skips_a_fifo(tmp_path: Path) -> None:
    _log(tmp_path)
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    os.mkfifo(tmp_path / "pipe.jsonl")  # opening it would wait for a writer forever
    out = cli("replay", "--stats", "--json", str(tmp_path))
    assert out.returncode == 3
    err = out.stderr.decode()
    assert "gone.jsonl: a link to nothing" in err and "skipped 1 file" in err
    assert len(out.stdout.splitlines()) == 1


def test_replay_of_dev_zero_ends_with_a_reason_and_status_3() -> None:
    # /dev/zero used to exhaust memory and end in a MemoryError traceback, exit 1
    out = cli("replay", "--max-line", "4096", "/dev/zero")
    assert out.returncode == 3
    (line,) = out.stderr.decode().splitlines()
    assert line.startswith("acp-client replay: /dev/zero: runaway-line: no line break in ")
    assert "max_line=4,096" in line


def test_replay_limits_from_the_command_line(tmp_path: Path) -> None:
    log = _log(tmp_path, text="x" * 3000)
    out = cli("replay", "--json", "--max-line", "1000", str(log))
    assert out.returncode == 0
    diagnostics = json.loads(out.stdout)["diagnostics"]
    assert [d["code"] for d in diagnostics] == ["line-too-long"]
    doc = tmp_path / "zed.json"
    entry = {"_direction": "incoming", "_type": "notification", "method": "x", "params": {}}
    doc.write_text(json.dumps([entry] * 200, indent=2))
    out = cli("replay", "--stats", "--json", "--max-document", "2000", str(doc))
    assert out.returncode == 3 and b"document-too-large" in out.stderr
    gz = tmp_path / "big.jsonl.gz"
    gz.write_bytes(gzip.compress(log.read_bytes() + b"\n" * 100_000))
    out = cli("replay", "--stats", "--json", "--max-decompressed", "1000", str(gz))
    assert out.returncode == 3 and b"decompressed-too-large" in out.stderr
    assert cli("replay", "--max-line", "0", str(log)).returncode == 2


def test_replay_max_diagnostics_and_max_ratio_from_the_command_line(tmp_path: Path) -> None:
    # Issue 26: max_diagnostics and max_ratio had no flag (only the library took them).
    log = _log(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"junk\n" * 5 + log.read_bytes())
    out = cli("replay", "--json", "--max-diagnostics", "2", str(bad))
    assert out.returncode == 0, out.stderr
    diagnostics = json.loads(out.stdout)["diagnostics"]
    assert [d["code"] for d in diagnostics] == ["malformed-line"] * 2 + ["diagnostics-dropped"]
    assert diagnostics[2]["message"].startswith("3 more malformed-line diagnostics (lines 3 to 5)")
    assert "max_diagnostics=2" in diagnostics[2]["message"]
    followed = cli(
        "replay", "--follow", "--json", "--max-diagnostics", "2", "-", input=bad.read_bytes()
    )
    assert followed.returncode == 0, followed.stderr
    assert json.loads(followed.stdout)["diagnostics"] == diagnostics
    gz = tmp_path / "big.jsonl.gz"
    gz.write_bytes(gzip.compress(log.read_bytes() + b"\n" * 100_000))  # about 500 times
    limits = ("--stats", "--json", "--max-decompressed", "1000")
    out = cli("replay", *limits, "--max-ratio", "100000", str(gz))
    assert out.returncode == 0, out.stderr
    out = cli("replay", "--json", "--max-decompressed", "1000", "--max-ratio", "2", str(gz))
    assert out.returncode == 3 and b"decompressed-too-large" in out.stderr
    (fatal,) = json.loads(out.stdout)["diagnostics"]
    assert "max_decompressed=1,000 and max_ratio=2 times" in fatal["message"]


@pytest.mark.parametrize("flag", ["--max-diagnostics", "--max-ratio"])
@pytest.mark.parametrize("value", ["0", "-3", "1.5", "many"])
def test_a_limit_that_is_not_a_whole_number_from_1_is_a_usage_error(flag: str, value: str) -> None:
    out = cli("replay", flag, value, "x.jsonl")
    assert out.returncode == 2
    assert f"argument {flag}: expected a whole number (1 or more), got {value!r}" in (
        out.stderr.decode()
    )


def test_run_max_line_and_max_diagnostics_from_the_command_line() -> None:
    junk = "for i in range(5): print('junk', i)\nprint('x' * 300)"
    agent = ("--", sys.executable, "-c", junk)  # junk, a long line, then exits
    limits = ("--max-diagnostics", "2", "--max-line", "100")
    out = cli("run", "--json", "--prompt", "hi", *limits, *agent)
    assert out.returncode == 5  # it exited before answering initialize
    diagnostics = json.loads(out.stdout)["diagnostics"]
    codes = [d["code"] for d in diagnostics]
    assert codes == ["malformed-line", "malformed-line", "diagnostics-dropped", "line-too-long"]
    assert "300 bytes exceeds the limit of 100" in diagnostics[3]["message"]
    for args in (("--max-diagnostics", "0"), ("--max-line", "none")):
        assert cli("run", *args, *agent).returncode == 2


def test_a_fleet_summary_gives_a_link_to_nothing_its_error_row(tmp_path: Path) -> None:
    # the folder walk is shared with summarize_many: what replay reports, it gives a row
    from acp_client import summarize_many

    _log(tmp_path)
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    rows = summarize_many([tmp_path], jobs=1)
    assert [(Path(r.path).name, r.error is None) for r in rows] == [
        ("log.jsonl", True),
        ("gone.jsonl", False),
    ]


def test_folder_replay_reports_a_file_it_may_not_look_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # `acp-client replay /` ended in a PermissionError traceback (exit 1): even root may not
    # stat /proc/1/cwd, and Path.is_file lets EACCES through. Now it is one unreadable file.
    from acp_client.cli import main

    _log(tmp_path)
    _log(tmp_path, "hidden-from-us.jsonl")
    guarded = str(tmp_path / "hidden-from-us.jsonl")
    real_stat = os.stat

    def stat(path: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(path) == guarded:
            raise PermissionError(13, "Permission denied", guarded)
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    assert main(["replay", "--stats", "--json", str(tmp_path)]) == 3
    out, err = capsys.readouterr()
    assert f"cannot read {guarded}: Permission denied" in err
    assert [json.loads(line)["file"] for line in out.splitlines()] == [str(tmp_path / "log.jsonl")]


def test_folder_replay_reports_a_loop_of_links(tmp_path: Path) -> None:
    _log(tmp_path)
    (tmp_path / "a.jsonl").symlink_to(tmp_path / "b.jsonl")
    (tmp_path / "b.jsonl").symlink_to(tmp_path / "a.jsonl")
    out = cli("replay", "--stats", "--json", str(tmp_path))
    assert out.returncode == 3
    err = out.stderr.decode()
    assert "a.jsonl: Too many levels of symbolic links" in err
    assert len(out.stdout.splitlines()) == 1


# ------------------------------------------------- output that cannot be written (a full disk)

_FULL = Path("/dev/full")
_needs_full = pytest.mark.skipif(not _FULL.exists(), reason="needs /dev/full")


def _to_full_disk(*args: str) -> subprocess.CompletedProcess[bytes]:
    with _FULL.open("wb") as full:
        return subprocess.run(
            [sys.executable, "-m", "acp_client.cli", *args],
            stdout=full,
            stderr=subprocess.PIPE,
            timeout=120,
            check=False,
        )


@_needs_full
@pytest.mark.parametrize("mode", [["--json"], [], ["--stats"]])
def test_replay_to_a_full_disk_says_so_and_exits_1(mode: list[str]) -> None:
    # It ended in an OSError traceback (ENOSPC from the last write or flush).
    out = _to_full_disk("replay", *mode)
    assert out.returncode == 1
    assert out.stderr.decode().splitlines() == [
        "acp-client replay: cannot write the output: [Errno 28] No space left on device"
    ]


@_needs_full
def test_summarize_to_a_full_disk_says_so_and_exits_1(tmp_path: Path) -> None:
    out = _to_full_disk("summarize", str(_log(tmp_path)))
    assert out.returncode == 1
    assert b"Traceback" not in out.stderr
    assert b"cannot write the output: [Errno 28]" in out.stderr


@_needs_full
@pytest.mark.parametrize("mode", [["--json"], []])
def test_run_to_a_full_disk_says_the_snapshot_is_cut_short_and_exits_1(mode: list[str]) -> None:
    # `run --json > file` on a full disk ended with status 0 as if the terminal had closed.
    from test_cli_run import TURN_STARTED

    agent = TURN_STARTED + (
        'update({"sessionUpdate": "agent_message_chunk", "messageId": "a1",'
        ' "content": {"type": "text", "text": "hello"}})\n'
        'update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})\n'
        "while recv() is not None:\n    pass\n"
    )
    out = _to_full_disk("run", *mode, "--prompt", "hi", "--", sys.executable, "-c", agent)
    assert out.returncode == 1, out.stderr.decode()
    assert out.stderr.decode().splitlines()[-1] == (
        "acp-client run: cannot write the final snapshot: [Errno 28] No space left on device"
    )


# ------------------------------------------- standard streams closed before the start (<&-)


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell closes the descriptors")
@pytest.mark.parametrize(
    ("closed", "args", "status"),
    [
        ("<&-", ["replay", "-"], 0),  # an empty input: the empty-input warning
        (">&-", ["replay", "--json"], 0),  # written nowhere, as into a pipe that is gone
        ("2>&-", ["replay", "nonexistent.jsonl"], 3),
        ("<&-", ["run", "--", sys.executable, "-c", "pass"], 2),  # no prompt on stdin
    ],
)
def test_a_closed_standard_stream_is_no_traceback(
    closed: str, args: list[str], status: int
) -> None:
    # Python sets sys.stdin (stdout, stderr) to None when its descriptor is closed: `replay -`
    # and `run` ended in an AttributeError traceback, exit 1.
    script = f'exec "$0" -m acp_client.cli "$@" {closed}'
    out = subprocess.run(
        ["sh", "-c", script, sys.executable, *args], capture_output=True, timeout=120, check=False
    )
    assert b"Traceback" not in out.stderr, out.stderr.decode()
    assert out.returncode == status, out.stderr.decode()
