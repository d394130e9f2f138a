"""The measured code: one target per subprocess, result printed as one JSON object.

Run as ``python -m benchmarks._targets NAME PATH --repeat N [--no-gc] [--clock cpu]``. Each
target prepares its input outside the timed loop (lines pre-split into a list, or the file
pre-cut into 64 KiB blocks), runs the loop ``--repeat`` times with :func:`time.perf_counter`
(or :func:`time.process_time` with ``--clock cpu``, steadier on a shared machine) and reports
the best time. Every repetition starts with ``gc.collect()``; the collector is enabled during
the loop (as in real use) unless ``--no-gc`` disables it, the same way for the floor and every
target.

``decode`` and ``sdk`` also time the floor in their own process, alternating with the target
(a busy machine then slows both alike); ``reduce`` builds state that a floor run would disturb
(and vice versa), so its floor is the separate ``floor`` subprocess.

A target whose API is missing reports ``{"error": "not available: ..."}``; one that fails while
running reports ``{"error": "failed: ..."}``. Neither is a crash: the harness prints the line
and goes on.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

BLOCK_SIZE = 64 * 1024
#: The clock of every timed loop: wall time by default, CPU time with ``--clock cpu``.
clock: Callable[[], float] = time.perf_counter

Result = dict[str, Any]


class NotAvailable(Exception):
    """The API a target calls does not exist (yet)."""


def read_lines(path: Path) -> list[bytes]:
    """The file's non-empty lines, without their newline."""
    return [line for line in path.read_bytes().split(b"\n") if line]


def read_blocks(path: Path) -> list[bytes]:
    """The file's bytes cut into ``BLOCK_SIZE`` blocks, as a transport would read them."""
    data = path.read_bytes()
    return [data[i : i + BLOCK_SIZE] for i in range(0, len(data), BLOCK_SIZE)]


def best_of(repeat: int, run: Callable[[], float], *, use_gc: bool) -> list[float]:
    """Run ``run`` (which times itself) ``repeat`` times under the same gc regime."""
    return alternate(repeat, {"run": run}, use_gc=use_gc)["run"]


def alternate(
    repeat: int, runs: dict[str, Callable[[], float]], *, use_gc: bool
) -> dict[str, list[float]]:
    """Run each of ``runs`` in turn, ``repeat`` rounds, under the same gc regime.

    Alternating the floor and a target in one process keeps their ratio steady on a busy
    machine: a slow spell hits both rather than one.
    """
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            gc.collect()
            if not use_gc:
                gc.disable()
            try:
                times[name].append(run())
            finally:
                gc.enable()
    return times


def _timed_loop(func: Callable[[bytes], object], items: list[bytes]) -> Callable[[], float]:
    """The loop shape shared by the floor and the decode targets."""

    def run() -> float:
        t0 = clock()
        for item in items:
            func(item)
        return clock() - t0

    return run


def _acp_client_attr(name: str) -> Any:
    try:
        module = importlib.import_module("acp_client")
        return getattr(module, name)
    except Exception as exc:  # ImportError, AttributeError, or a broken package
        raise NotAvailable(f"acp_client.{name}: {type(exc).__name__}: {exc}") from exc


def _new(cls: Any) -> Any:
    try:
        return cls()
    except Exception as exc:
        raise NotAvailable(f"{cls.__name__}(): {type(exc).__name__}: {exc}") from exc


def _timing(times: list[float], **extra: Any) -> Result:
    return {"seconds": min(times), "times": times, **extra}


# -- targets ----------------------------------------------------------------------------------


def target_floor(path: Path, repeat: int, use_gc: bool) -> Result:
    """``msgspec.json.decode(line)`` into plain Python objects, one line at a time."""
    import msgspec

    lines = read_lines(path)
    times = best_of(repeat, _timed_loop(msgspec.json.decode, lines), use_gc=use_gc)
    return _timing(times, lines=len(lines), bytes=sum(len(x) + 1 for x in lines))


def target_decode(path: Path, repeat: int, use_gc: bool) -> Result:
    """``acp_client.Decoder().decode(line)``, one line at a time (same loop as the floor).

    The floor is timed in the same process, alternating with the target.
    """
    import msgspec

    decode = _new(_acp_client_attr("Decoder")).decode
    lines = read_lines(path)
    times = alternate(
        repeat,
        {"floor": _timed_loop(msgspec.json.decode, lines), "target": _timed_loop(decode, lines)},
        use_gc=use_gc,
    )
    return _timing(times["target"], floor_seconds=min(times["floor"]), lines=len(lines))


def target_reduce(path: Path, repeat: int, use_gc: bool) -> Result:
    """``acp_client.Connection().receive_data(block)`` over the file in 64 KiB blocks.

    A fresh Connection per repetition, created before the clock starts and freed after it
    stops. This process holds nothing else (no pre-split lines), so the floor is measured in
    its own subprocess: a floor run in here would leave its freed heap to the target.
    """
    connection_cls = _acp_client_attr("Connection")
    _new(connection_cls)
    blocks = read_blocks(path)

    def run() -> float:
        conn = connection_cls()
        receive = conn.receive_data
        t0 = clock()
        for block in blocks:
            receive(block)
        elapsed = clock() - t0
        del conn, receive  # the state is freed outside the timed region
        return elapsed

    times = best_of(repeat, run, use_gc=use_gc)
    return _timing(times, blocks=len(blocks))


def _feed_from_file(conn: Any, path: Path) -> None:
    receive = conn.receive_data
    with open(path, "rb", buffering=0) as f:
        while block := f.read(BLOCK_SIZE):
            receive(block)


def target_memory(path: Path, repeat: int, use_gc: bool) -> Result:
    """Bytes still allocated (tracemalloc, after ``gc.collect()``) by a fed Connection."""
    import tracemalloc

    connection_cls = _acp_client_attr("Connection")
    _new(connection_cls)
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    conn = connection_cls()
    _feed_from_file(conn, path)
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del conn
    return {
        "held_bytes": current - base,
        "peak_bytes": peak - base,
        "log_bytes": path.stat().st_size,
        "method": "tracemalloc",
    }


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def target_memory_rss(path: Path, repeat: int, use_gc: bool) -> Result:
    """Resident-set growth while a Connection is fed the file (Linux ``/proc``; informational)."""
    if not os.path.exists("/proc/self/statm"):
        raise NotAvailable("RSS needs /proc/self/statm (Linux)")
    connection_cls = _acp_client_attr("Connection")
    _new(connection_cls)
    gc.collect()
    before = _rss()
    conn = connection_cls()
    _feed_from_file(conn, path)
    gc.collect()
    after = _rss()
    del conn
    return {"held_bytes": after - before, "log_bytes": path.stat().st_size, "method": "rss"}


def _update_kind(line: bytes) -> str:
    try:
        return str(json.loads(line)["params"]["update"]["sessionUpdate"])
    except Exception:
        return "(not a session/update)"


def target_sdk(path: Path, repeat: int, use_gc: bool) -> Result:
    """The official Python SDK's own decode path on the lines its v1 models accept.

    Its stdio transport does ``json.loads(line)``, and its router then calls
    ``SessionNotification.model_validate(params)`` for ``session/update``. The floor is
    measured again, here, on the same accepted subset, so the ratio compares like with like.
    """
    import msgspec

    try:
        from acp.schema import SessionNotification
        from pydantic import ValidationError
    except Exception as exc:
        raise NotAvailable(f"acp.schema: {type(exc).__name__}: {exc}") from exc
    validate = SessionNotification.model_validate
    loads = json.loads
    lines = read_lines(path)
    accepted: list[bytes] = []
    rejected: Counter[str] = Counter()
    for line in lines:
        try:
            validate(loads(line)["params"])
        except (ValidationError, KeyError, TypeError):
            rejected[_update_kind(line)] += 1
        else:
            accepted.append(line)
    if not accepted:
        return {
            "error": "failed: the SDK rejected every line",
            "lines": len(lines),
            "rejected": dict(rejected),
        }

    def sdk_decode(line: bytes) -> object:
        return validate(loads(line)["params"])

    floor = best_of(repeat, _timed_loop(msgspec.json.decode, accepted), use_gc=use_gc)
    times = best_of(repeat, _timed_loop(sdk_decode, accepted), use_gc=use_gc)
    return _timing(
        times,
        floor_seconds=min(floor),
        lines=len(lines),
        accepted=len(accepted),
        accepted_bytes=sum(len(x) + 1 for x in accepted),
        rejected=dict(rejected.most_common()),
    )


def process_env() -> dict[str, str]:
    """The environment of a measured whole process: as an installed package runs.

    ``pip install`` compiles every module to bytecode, and Python caches it on first use;
    an environment that forbids writing it (``PYTHONDONTWRITEBYTECODE``, as some sandboxes
    set) would make every timed process compile acp_client from source while msgspec loads
    its installed bytecode. The bytecode goes to a cache of its own
    (``PYTHONPYCACHEPREFIX``, never into the source tree), written by an untimed first run
    of each command (:func:`warm`).
    """
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), f"acp-bench-pyc-{os.getuid()}")
    return env


def warm(cmd: list[str]) -> None:
    """Run ``cmd`` once, untimed, so that its bytecode is cached (see :func:`process_env`)."""
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=process_env())


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def target_cli(path: Path, repeat: int, use_gc: bool) -> Result:
    """Time of ``python -m acp_client.cli replay --stats PATH`` (startup included).

    Wall time, or the child's user+system CPU time with ``--clock cpu``.
    """
    try:
        found = importlib.util.find_spec("acp_client.cli") is not None
    except Exception as exc:
        raise NotAvailable(f"acp_client.cli: {type(exc).__name__}: {exc}") from exc
    if not found:
        raise NotAvailable("acp_client.cli does not exist yet")
    cmd = [sys.executable, "-m", "acp_client.cli", "replay", "--stats", str(path)]
    warm(cmd)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        c0 = _children_cpu()
        proc = subprocess.run(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, env=process_env()
        )
        elapsed = time.perf_counter() - t0
        if clock is time.process_time:
            elapsed = _children_cpu() - c0
        if proc.returncode != 0:
            tail = proc.stderr.decode(errors="replace").strip().splitlines()[-3:]
            kind = "not available" if b"No module named" in proc.stderr else "failed"
            return {"error": f"{kind}: exit {proc.returncode}: {' | '.join(tail)}"}
        times.append(elapsed)
    return _timing(times, command=" ".join(cmd[1:]))


def target_replay(path: Path, repeat: int, use_gc: bool) -> Result:
    """``acp_client.replay_log(PATH)`` in this process: the library's own replay of the file
    the command line reads (reader, decode and reduce), to isolate what the CLI adds."""
    import gc

    replay_log = _acp_client_attr("replay_log")
    times = []
    for _ in range(repeat):
        gc.collect()
        if not use_gc:
            gc.disable()
        t0 = clock()
        replay_log(str(path))
        times.append(clock() - t0)
        gc.enable()
    return _timing(times)


def _issue23(name: str) -> Callable[[Path, int, bool], Result]:
    """A target of :mod:`benchmarks._whole`, given this run's clock."""

    def run(path: Path, repeat: int, use_gc: bool) -> Result:
        from . import _whole

        cpu = clock is time.process_time
        if name == "replay-wire":
            return _whole.target_replay_wire(path, repeat, use_gc, clock)
        if name == "sdk-state":
            return _whole.target_sdk_state(path, repeat, use_gc, clock)
        if name == "view":
            from . import _view

            return _view.target_view(path, repeat, use_gc, clock)
        whole: dict[str, Callable[[Path, int, bool], Result]] = {
            "cli-floor": _whole.target_cli_floor,
            "import": _whole.target_import,
            "example": _whole.target_example,
            "jobs": _whole.target_jobs,
        }
        return whole[name](path, repeat, cpu)

    return run


def target_summarize(path: Path, repeat: int, use_gc: bool) -> Result:
    """``summarize_many`` of 1,000 copies of the log: jobs 1, jobs 2, a LocalCluster."""
    from . import _fleet

    count = int(os.environ.get("ACP_BENCH_FLEET", _fleet.FLEET))
    return _fleet.target_summarize(path, repeat, count)


TARGETS: dict[str, Callable[[Path, int, bool], Result]] = {
    "floor": target_floor,
    "decode": target_decode,
    "reduce": target_reduce,
    "memory": target_memory,
    "memory-rss": target_memory_rss,
    "sdk": target_sdk,
    "cli": target_cli,
    "replay": target_replay,
    "summarize": target_summarize,
    **{
        name: _issue23(name)
        for name in ("replay-wire", "sdk-state", "cli-floor", "import", "example", "jobs", "view")
    },
}


def main(argv: Iterable[str] | None = None) -> int:
    """Run one target and print its result as JSON on stdout."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks._targets")
    parser.add_argument("target", choices=sorted(TARGETS))
    parser.add_argument("path", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-gc", action="store_true")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = parser.parse_args(None if argv is None else list(argv))
    global clock
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    try:
        result = TARGETS[args.target](args.path, max(1, args.repeat), not args.no_gc)
    except NotAvailable as exc:
        result = {"error": f"not available: {exc}"}
    except Exception as exc:
        result = {"error": f"failed: {type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
