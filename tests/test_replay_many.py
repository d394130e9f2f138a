"""``replay_many`` and ``acp-client replay --jobs``: many logs over processes, results in
input order, one combined status (issue 23)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from acp_client import ReplayResult, replay_log, replay_many
from acp_client._many import spread
from acp_client.testing import log_lines


def _log(path: Path, session: str, updates: int) -> Path:
    exchange: list[tuple[str, Any]] = [
        (
            "incoming",
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": session,
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "messageId": "m",
                        "content": {"type": "text", "text": f"{session} {i} "},
                    },
                },
            },
        )
        for i in range(updates)
    ]
    path.write_text("".join(line + "\n" for line in log_lines(exchange, "acp-client")))
    return path


def updates_of(result: ReplayResult) -> int:
    """A picklable summary (module level)."""
    return sum(result.replayer.update_kinds.values())


def test_results_in_input_order_with_the_snapshots_of_replay_log(tmp_path: Path) -> None:
    paths = [_log(tmp_path / f"{i}.jsonl", f"s{i}", 5 + i) for i in range(5)]
    batch = replay_many(paths, jobs=2)
    assert batch.status == 0
    assert [log.path for log in batch.logs] == [str(p) for p in paths]
    for path, log in zip(paths, batch.logs, strict=True):
        assert log.error is None and log.status == 0
        assert log.value == replay_log(str(path)).snapshot()
    counted = replay_many(paths, jobs=3, summary=updates_of)
    assert [log.value for log in counted.logs] == [5, 6, 7, 8, 9]


def test_one_combined_status_the_worst(tmp_path: Path) -> None:
    good = _log(tmp_path / "good.jsonl", "s", 3)
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text("hello\n")  # no known format: unreadable
    missing = tmp_path / "missing.jsonl"
    batch = replay_many([good, missing, unknown], jobs=2)
    assert [log.status for log in batch.logs] == [0, 3, 3]
    assert batch.logs[1].value is None and "missing.jsonl" in (batch.logs[1].error or "")
    assert batch.status == 3
    strict = tmp_path / "strict.jsonl"
    strict.write_text('{"direction":"incoming","message":{"jsonrpc":"2.0","id":1}}\n')
    assert replay_many([good, strict], jobs=1, strict=True).status == 1
    assert replay_many([], jobs=4) == (0, [])


def test_spread_keeps_order_in_and_out_of_processes() -> None:
    items = list(range(20))
    assert spread(str, items, 1) == spread(str, items, 3) == [str(i) for i in items]
    assert spread(str, items, None) == [str(i) for i in items]


def test_cli_jobs_prints_in_input_order(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    for i in range(4):
        _log(folder / f"{i}.jsonl", f"s{i}", 10 * (4 - i))
    outputs = []
    for jobs in ("1", "2", "0"):
        command = ["replay", "--stats", "--json", "--jobs", jobs, str(folder)]
        proc = subprocess.run(
            [sys.executable, "-m", "acp_client.cli", *command],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        lines = [json.loads(line) for line in proc.stdout.splitlines()]
        assert [Path(line["file"]).name for line in lines] == [f"{i}.jsonl" for i in range(4)]
        assert [line["updates"] for line in lines] == [40, 30, 20, 10]
        outputs.append([{k: v for k, v in x.items() if "econd" not in k} for x in lines])
    assert outputs[0] == outputs[1] == outputs[2]
