"""``acp-client summarize`` (issue 25): JSON Lines, CSV and Parquet round trips, the exit
statuses, the progress bar on a terminal only, and agent text kept off the terminal raw."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_client import SessionSummary, summarize_many
from acp_client._summary import COUNT_FIELDS
from acp_client.cli import main
from acp_client.testing import FakeAgent

CLI = [sys.executable, "-m", "acp_client.cli"]


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    one = FakeAgent("s1").initialize(0).new_session(1)
    one.prompt(2, "hi").prompt_response(2, "u1").user_message("u1", "hi").state("running")
    one.tool_call("c1", title="Run", kind="execute", status="failed")
    one.usage(5, 100, (0.25, "USD")).state("idle", stop_reason="refusal")
    child = one.in_session("s2")
    child.state("running").agent_message("a", "ünïcode ✓").state("idle", stop_reason="end_turn")
    (folder / "a.jsonl").write_text(one.log_text("acp-client"), encoding="utf-8")
    (folder / "b.jsonl").write_text(FakeAgent("s3").state("running").log_text("capture"))
    (folder / "c.jsonl").write_bytes(b"{ this is not json\n")
    return folder


def _rows(folder: Path) -> list[dict[str, Any]]:
    return [msgspec.to_builtins(row) for row in summarize_many([folder], jobs=1)]


def _from_csv(path: Path) -> list[dict[str, Any]]:
    """CSV back into rows: the Struct's types, count maps from their JSON text, '' as null."""
    with path.open(newline="", encoding="utf-8") as handle:
        found = list(csv.DictReader(handle))
    out = []
    for raw in found:
        row: dict[str, Any] = {}
        for key, text in raw.items():
            if key in COUNT_FIELDS:
                row[key] = json.loads(text)
            elif text != "":
                row[key] = text
        out.append(msgspec.to_builtins(msgspec.convert(row, SessionSummary, strict=False)))
    return out


def test_jsonl_to_stdout_by_default_and_exit_3_for_the_unreadable_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path)
    (folder / "notes.txt").write_text("not a log")
    assert main(["summarize", str(folder)]) == 3
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows == _rows(folder)
    assert [(Path(r["path"]).name, r["session_id"]) for r in rows] == [
        ("a.jsonl", "s1"),
        ("a.jsonl", "s2"),
        ("b.jsonl", "s3"),
        ("c.jsonl", None),
    ]
    assert rows[0]["stop_reasons"] == {"refusal": 1} and rows[0]["cost_amount"] == 0.25
    assert rows[0]["tool_calls_by_status"] == {"failed": 1}
    assert rows[2]["clock"] == "relative" and rows[0]["clock"] == "epoch"
    lines = err.splitlines()
    assert lines[0].startswith("acp-client summarize: skipped 1 file")
    assert lines[1].startswith(f"acp-client summarize: {folder / 'c.jsonl'}: ")
    assert len(lines) == 2  # no progress bar when standard error is not a terminal
    good = [str(folder / "a.jsonl"), str(folder / "b.jsonl")]
    assert main(["summarize", "--jobs", "2", *good]) == 0


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_out_file_round_trips(
    tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path)
    out = tmp_path / f"fleet{suffix}"
    assert main(["summarize", "--jobs", "2", str(folder), "--out", str(out)]) == 3
    assert capsys.readouterr().out == ""
    if suffix == ".jsonl":
        back = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    elif suffix == ".csv":
        back = _from_csv(out)
    else:
        import pyarrow.parquet as pq

        back = pq.read_table(out).to_pylist()
        for row in back:
            for key in COUNT_FIELDS:
                row[key] = dict(row[key])
    assert back == _rows(folder)


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _folder(tmp_path)
    assert main(["summarize", str(folder), "--out", str(tmp_path / "x.xlsx")]) == 2
    assert "--out FILE must end in .jsonl, .csv, .parquet" in capsys.readouterr().err
    assert main(["summarize", str(folder), "--jobs", "2", "--dask", "tcp://x:1"]) == 2
    assert main(["summarize", str(tmp_path / "empty")]) == 3  # a missing file: its row
    empty = tmp_path / "nothing"
    empty.mkdir()
    assert main(["summarize", str(empty)]) == 3
    assert "no log files found" in capsys.readouterr().err


def test_a_missing_pyarrow_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import fails as if not installed
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    folder = _folder(tmp_path)
    assert main(["summarize", str(folder), "--out", str(tmp_path / "f.parquet")]) == 2
    err = capsys.readouterr().err
    assert err == (
        "acp-client summarize: this needs the 'parquet' extra (pyarrow is not installed):"
        " pip install 'acp-client-state[parquet]'\n"
    )
    assert not (tmp_path / "f.parquet").exists()


def test_progress_bar_only_on_a_terminal_and_no_raw_agent_text_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "evil.jsonl"
    evil = FakeAgent("s\x1b]0;pwned\x07\u202e").state("running")
    evil.state("idle", stop_reason="\x1b[2Jend\x9b")
    log.write_text(evil.log_text("jsonrpc"), encoding="utf-8")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(["summarize", str(log)]) == 0
    out, err = capsys.readouterr()
    for raw in ("\x1b", "\x07", "\u202e", "\x9b"):
        assert raw not in out
    (row,) = [json.loads(line) for line in out.splitlines()]
    assert row["session_id"] == "s\x1b]0;pwned\x07\u202e"  # escaped, not lost
    assert row["stop_reasons"] == {"\x1b[2Jend\x9b": 1}
    assert "summarizing" in err


def test_the_command_runs_as_a_process(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    done = subprocess.run(
        [*CLI, "summarize", "--jobs", "0", str(folder / "a.jsonl")],
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["session_id"] for line in done.stdout.splitlines()] == ["s1", "s2"]
    assert done.stderr == b""


def test_an_unreachable_scheduler_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    distributed = pytest.importorskip("distributed")

    def refused(address: str) -> Any:
        raise OSError(f"Timed out trying to connect to {address}")

    monkeypatch.setattr(distributed, "Client", refused)
    folder = _folder(tmp_path)
    assert main(["summarize", "--dask", "tcp://nowhere:8786", str(folder)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "acp-client summarize: cannot use the Dask scheduler tcp://nowhere:8786:"
        " Timed out trying to connect to tcp://nowhere:8786\n"
    )


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_text_that_is_not_unicode_is_written_escaped(
    tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A lone surrogate a lenient read kept (a session id, a stop reason) never fails a
    file: JSON escapes it (read back the same), CSV and Parquet get its escape as text."""
    log = tmp_path / "odd.jsonl"
    log.write_text(
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s\\ud800x",'
        '"update":{"sessionUpdate":"state_update","state":"running"}}}\n'
    )
    out = tmp_path / f"rows{suffix}"
    assert main(["summarize", str(log), "--out", str(out)]) == 0
    if suffix == ".jsonl":
        (row,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert row["session_id"] == "s\ud800x"
    elif suffix == ".csv":
        (row,) = _from_csv(out)
        assert row["session_id"] == "s\\ud800x"
    else:
        import pyarrow.parquet as pq

        assert pq.read_table(out).to_pylist()[0]["session_id"] == "s\\ud800x"


# -- CSV injection (issue 26) ------------------------------------------------------------------


def test_csv_text_cells_from_the_log_never_start_a_formula(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A text cell from the log (or its name) starting with = + - @ tab or CR gets OWASP's
    leading quote, which spreadsheets show as text; numbers and count maps stay as they
    are. A spreadsheet ran such a session id as a formula."""
    agent = FakeAgent('=HYPERLINK("http://x","y")').send(
        "outgoing",
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}},
    )
    agent.result(
        0,
        {
            "protocolVersion": 2,
            "info": {"name": "@SUM(1+1)*cmd|' /C calc'!A0", "version": "-2+3"},
            "capabilities": {"session": {}},
        },
    )
    agent.state("\tX").usage(5, 100, (0.25, "+1"))
    agent.in_session("\rr").state("running")
    agent.in_session("plain=ok").state("running")
    monkeypatch.chdir(tmp_path)
    Path("-rows.jsonl").write_text(agent.log_text("acp-client"), encoding="utf-8")
    assert main(["summarize", "--out", "rows.csv", "--", "-rows.jsonl"]) == 0
    with open("rows.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["session_id"] for row in rows] == [
        '\'=HYPERLINK("http://x","y")',
        "'\rr",
        "plain=ok",
    ]
    first = rows[0]
    assert first["path"] == "'-rows.jsonl"
    assert first["agent_name"] == "'@SUM(1+1)*cmd|' /C calc'!A0"
    assert first["agent_version"] == "'-2+3"
    assert first["state"] == "'\tX"
    assert first["cost_currency"] == "'+1"
    assert first["usage_used"] == "5" and first["cost_amount"] == "0.25"
    assert first["format"] == "acp-client" and first["stop_reasons"] == "{}"
    # every text cell of every row: none starts a formula
    for row in rows:
        for key, text in row.items():
            assert not text.startswith(("=", "+", "@", "\t", "\r")), (key, text)
            if text.startswith("-"):
                float(text)  # only a number may start with a minus
    # the JSON Lines of the same log keep the text as it is
    assert main(["summarize", "--", "-rows.jsonl"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0]["session_id"] == '=HYPERLINK("http://x","y")'
    assert lines[0]["path"] == "-rows.jsonl"


@given(st.text())
def test_a_csv_text_cell_is_the_text_or_the_quoted_text(text: str) -> None:
    from acp_client.cli._summary_out import _cell

    cell = _cell(text)
    plain = text.encode("utf-8", "backslashreplace").decode("utf-8")
    assert cell == ("'" + plain if plain[:1] in ("=", "+", "-", "@", "\t", "\r") else plain)
    assert cell[:1] not in ("=", "+", "-", "@", "\t", "\r")


def test_numbers_in_csv_are_never_quoted() -> None:
    from acp_client.cli._summary_out import _cell

    assert [_cell(-5), _cell(-0.25), _cell(True)] == [-5, -0.25, "true"]
    assert _cell({"-x": 1}) == '{"-x":1}'
