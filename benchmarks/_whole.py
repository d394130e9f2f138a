"""Targets of issue 23: replay in process against the raw wire, whole processes against
msgspec (the CLI, the import, the bundled example), ``--jobs``, and the SDK side by side.

Registered in :data:`benchmarks._targets.TARGETS`; each prints one JSON object.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from ._targets import _children_cpu, alternate, process_env, warm

Result = dict[str, Any]
BLOCK_SIZE = 64 * 1024
FLOOR_CODE = (
    "import sys, msgspec\n"
    "d = msgspec.json.decode\n"
    "for line in open(sys.argv[1], 'rb'):\n"
    "    if line.strip(): d(line)\n"
)


def _updates_as_jsonrpc(path: Path) -> bytes:
    """The agent's ``session/update`` messages of a log of any generated format, as lines."""
    out = []
    for line in path.read_bytes().splitlines():
        value = msgspec.json.decode(line)
        message = value.get("message", value.get("msg", value))
        if isinstance(message, dict) and message.get("method") == "session/update":
            out.append(msgspec.json.encode(message))
    return b"\n".join(out) + b"\n"


def target_replay_wire(path: Path, repeat: int, use_gc: bool, clock: Callable[[], float]) -> Result:
    """``replay_log(path)`` against ``receive_data`` of the same updates, alternating."""
    from acp_client import Connection, replay_log

    data = _updates_as_jsonrpc(path)
    blocks = [data[i : i + BLOCK_SIZE] for i in range(0, len(data), BLOCK_SIZE)]

    def wire() -> float:
        conn = Connection()
        receive = conn.receive_data
        t0 = clock()
        for block in blocks:
            receive(block)
        return clock() - t0

    def replay() -> float:
        t0 = clock()
        replay_log(str(path))
        return clock() - t0

    wire()  # warm up: imports and the decoders' first use, untimed
    replay()
    times = alternate(repeat, {"wire": wire, "replay": replay}, use_gc=use_gc)
    return {
        "seconds": min(times["replay"]),
        "wire_seconds": min(times["wire"]),
        "times": times,
        "updates": data.count(b"\n"),
    }


def _process(cmd: list[str], cpu: bool) -> float:
    env = process_env()
    t0, c0 = time.perf_counter(), _children_cpu()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = (_children_cpu() - c0) if cpu else time.perf_counter() - t0
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-3:]
        raise RuntimeError(f"{' '.join(cmd[1:4])}: exit {proc.returncode}: {' | '.join(tail)}")
    return elapsed


def _processes(commands: dict[str, list[str]], repeat: int, cpu: bool) -> dict[str, list[float]]:
    """Each command ``repeat`` times, alternating (a busy spell slows all alike), after one
    untimed run of each that caches its bytecode as an installed package has it."""
    for cmd in commands.values():
        warm(cmd)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, cmd in commands.items():
            times[name].append(_process(cmd, cpu))
    return times


def _best_result(times: dict[str, list[float]], target: str, base: str, **extra: Any) -> Result:
    return {
        "seconds": min(times[target]),
        "base_seconds": min(times[base]),
        "times": times,
        **extra,
    }


def _median_result(times: dict[str, list[float]], target: str, base: str, **extra: Any) -> Result:
    return {
        "seconds": statistics.median(times[target]),
        "base_seconds": statistics.median(times[base]),
        "times": times,
        **extra,
    }


PY = sys.executable


def target_cli_floor(path: Path, repeat: int, cpu: bool) -> Result:
    """``acp-client replay FILE --stats`` against a msgspec process decoding every line."""
    times = _processes(
        {
            "cli": [PY, "-m", "acp_client.cli", "replay", "--stats", str(path)],
            "floor": [PY, "-c", FLOOR_CODE, str(path)],
        },
        repeat,
        cpu,
    )
    return _best_result(times, "cli", "floor")


def target_import(path: Path, repeat: int, cpu: bool) -> Result:
    """``import acp_client`` against ``import msgspec``, whole processes, medians."""
    times = _processes(
        {
            "msgspec": [PY, "-c", "import msgspec"],
            "acp_client": [PY, "-c", "import acp_client"],
            "first_call": [PY, "-c", "import acp_client; acp_client.Connection()"],
        },
        repeat,
        cpu,
    )
    first = statistics.median(times["first_call"])
    return _median_result(times, "acp_client", "msgspec", first_call_seconds=first)


def target_example(path: Path, repeat: int, cpu: bool) -> Result:
    """``acp-client replay --json`` of the bundled example against msgspec decoding it."""
    example = Path(__file__).resolve().parent.parent / "acp_client" / "data" / "example.jsonl"
    times = _processes(
        {
            "floor": [PY, "-c", FLOOR_CODE, str(example)],
            "cli": [PY, "-m", "acp_client.cli", "replay", "--json"],
        },
        repeat,
        cpu,
    )
    return _median_result(times, "cli", "floor")


def target_jobs(path: Path, repeat: int, cpu: bool) -> Result:
    """``acp-client replay --stats --jobs 1`` against ``--jobs 2`` over 8 copies of the log.

    Wall clock always (CPU time cannot show a parallel gain).
    """
    with tempfile.TemporaryDirectory() as folder:
        for i in range(8):
            target = Path(folder) / f"log{i}.jsonl"
            try:
                os.link(path, target)
            except OSError:
                shutil.copyfile(path, target)
        base = [PY, "-m", "acp_client.cli", "replay", "--stats", "--json"]
        times = _processes(
            {"jobs1": [*base, "--jobs", "1", folder], "jobs2": [*base, "--jobs", "2", folder]},
            repeat,
            False,
        )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return _best_result(times, "jobs2", "jobs1", cpus=os.cpu_count(), load=load)


def target_sdk_state(path: Path, repeat: int, use_gc: bool, clock: Callable[[], float]) -> Result:
    """Per update: the SDK's decode + ``SessionAccumulator`` on the v1 form of the log,
    ours decode + reduce (``receive_data``) of its v2 form."""
    from acp_client import Connection

    from . import _sdk

    try:
        import acp.contrib.session_state  # noqa: F401
    except Exception as exc:
        return {"error": f"not available: acp.contrib.session_state: {exc}"}
    v2, v1 = _sdk.v1_lines(path)
    data = b"\n".join(v2) + b"\n"
    blocks = [data[i : i + BLOCK_SIZE] for i in range(0, len(data), BLOCK_SIZE)]
    warm = Connection()
    warm.receive_data(blocks[0])  # the decoders' first use, untimed
    ours = []
    for _ in range(repeat):
        conn = Connection()
        t0 = clock()
        for block in blocks:
            conn.receive_data(block)
        ours.append(clock() - t0)
        del conn
    sdk = _sdk.sdk_per_update(v1, clock)
    per_ours = min(ours) / len(v2)
    per_sdk = sdk["sdk_seconds"] / max(1, sdk["sdk_updates"])
    return {
        "seconds": per_sdk,
        "ours_per_update": per_ours,
        "sdk_per_update": per_sdk,
        "v2_updates": len(v2),
        **sdk,
    }
