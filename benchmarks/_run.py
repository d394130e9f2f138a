"""The harness: generate (or reuse) logs, run each target in its own subprocess, print ratios.

Every acp_client figure is a ratio against the floor, ``msgspec.json.decode`` of the same lines
into plain Python objects, timed in the same subprocess (alternating with the target, so a busy
machine slows both). The standalone ``floor`` line gives the absolute numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import _generate
from ._report import Figure, Reporter, parse_size, size_label

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
QUICK_SIZES = (1_000, 4_000)
NAMES = (
    "floor", "decode", "decode+reduce", "single", "scaling", "memory", "sdk", "cli",
    "replay", "cli-floor", "import", "example", "jobs", "sdk-state", "summarize",
    "view",
)  # fmt: skip
ALIASES = {"reduce": "decode+reduce"}
TARGETS = {
    "decode": 1.0,
    "decode+reduce": 2.0,  # mixed logs (issue 23); one message: SINGLE_TARGET
    "scaling": 1.3,
    "memory": 0.6,
    "cli": 1.2,
    "replay": 1.3,
    "cli-floor": 3.0,
    "import": 2.5,
    "example": 3.0,
    "jobs": 1.7,  # at least
    "sdk-state": 10.0,  # at least
}
SINGLE_TARGET = 1.5
REPLAY_FORMATS = ("jsonrpc", "acp-client", "capture")


@dataclass
class Log:
    """A generated input file."""

    kind: str
    updates: int
    path: Path

    @property
    def label(self) -> str:
        """e.g. ``mixed 100k``."""
        return f"{self.kind} {size_label(self.updates)}"

    @property
    def size(self) -> int:
        """Its size in bytes."""
        return self.path.stat().st_size


class Harness:
    """Runs the selected figures; one instance per invocation."""

    def __init__(self, args: argparse.Namespace, report: Reporter) -> None:
        self.args = args
        self.report = report
        self.reduce_results: dict[str, Figure] = {}
        self.floors: dict[str, Figure] = {}

    # -- plumbing ---------------------------------------------------------------------------

    def repeat_for(self, n: int, cap: int | None = None) -> int:
        if self.args.repeat is not None:
            r = int(self.args.repeat)
        elif self.args.quick:
            r = 1
        else:
            r = 7 if n <= 100_000 else 3
        return max(1, min(r, cap) if cap is not None else r)

    def log(self, kind: str, n: int, fmt: str = "jsonrpc", *, full: bool | None = None) -> Log:
        args = self.args
        t0 = time.perf_counter()
        path, info = _generate.cached_log(
            n,
            args.seed,
            kind=kind,
            sessions=args.sessions,
            full=args.full_logs if full is None else full,
            data_dir=args.data_dir,
            fmt=fmt,
        )
        log = Log(kind if fmt == "jsonrpc" else f"{kind} {fmt}", n, path)
        if info is not None:
            mix = ", ".join(f"{k} {v / info.updates:.1%}" for k, v in info.kinds.most_common(6))
            self.report.info(
                f"# generated {log.label}: {info.bytes / 1e6:.1f} MB in "
                f"{time.perf_counter() - t0:.1f} s ({mix}, ...)"
            )
        return log

    def run_target(self, target: str, log: Log, repeat: int) -> dict[str, Any]:
        cmd = [
            sys.executable,
            "-m",
            "benchmarks._targets",
            target,
            str(log.path),
            "--repeat",
            str(repeat),
        ]
        if self.args.no_gc:
            cmd.append("--no-gc")
        cmd += ["--clock", self.args.clock]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        if self.args.quick:
            env["ACP_BENCH_SDK_BUDGET"] = "0.2"
        proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, check=False)
        try:
            result: dict[str, Any] = json.loads(proc.stdout.decode().strip().splitlines()[-1])
        except (IndexError, ValueError):
            tail = " | ".join(proc.stderr.decode(errors="replace").strip().splitlines()[-3:])
            return {"error": f"failed: subprocess exit {proc.returncode}: {tail}"}
        return result

    # -- figures ----------------------------------------------------------------------------

    def _floor_figure(self, log: Log, r: dict[str, Any]) -> Figure:
        fig = Figure(
            "floor",
            log.label,
            value=r.get("seconds"),
            unit="s",
            seconds=r.get("seconds"),
            updates=log.updates,
            bytes=log.size,
            error=r.get("error"),
            note="msgspec.json.decode, one line at a time",
            extra=r,
        )
        self.floors[log.label] = fig
        return self.report.add(fig)

    def floor(self, log: Log) -> Figure:
        """The floor on its own, best of N in one subprocess."""
        return self._floor_figure(log, self.run_target("floor", log, self.repeat_for(log.updates)))

    def decode(self, log: Log) -> Figure:
        """``decode``: the floor is timed alternately with it in the same subprocess."""
        r = self.run_target("decode", log, self.repeat_for(log.updates))
        fig = Figure(
            "decode",
            log.label,
            target=TARGETS["decode"],
            updates=log.updates,
            bytes=log.size,
            error=r.get("error"),
            extra=r,
        )
        if fig.error is None:
            fig.seconds = r["seconds"]
            fig.value = r["seconds"] / r["floor_seconds"]
        return self.report.add(fig)

    def reduce(self, log: Log) -> Figure:
        """``decode+reduce`` and the floor, alternating, one fresh subprocess per repetition.

        Separate processes keep the reducer's state and the floor's garbage out of each
        other's heap; alternating them makes a slow spell of a busy machine hit both.
        """
        name = "decode+reduce"
        floor_times: list[float] = []
        times: list[float] = []
        error: str | None = None
        for _ in range(self.repeat_for(log.updates)):
            f = self.run_target("floor", log, 1)
            if f.get("error") is not None:
                self._floor_figure(log, f)
                return self.report.add(Figure(name, log.label, error=f"no floor: {f['error']}"))
            floor_times.append(f["seconds"])
            if error is None:
                t = self.run_target("reduce", log, 1)
                error = t.get("error")
                if error is None:
                    times.append(t["seconds"])
        floor = min(floor_times)
        self._floor_figure(log, {"seconds": floor, "times": floor_times})
        fig = Figure(
            name,
            log.label,
            target=SINGLE_TARGET if log.kind == "single" else TARGETS[name],
            updates=log.updates,
            bytes=log.size,
            error=error,
            extra={"times": times, "floor_seconds": floor},
        )
        if error is None:
            fig.seconds = min(times)
            fig.value = fig.seconds / floor
        return self.report.add(fig)

    def scaling(self, small: Figure, big: Figure) -> None:
        name = "scaling"
        label = f"{size_label(big.updates or 0)}/{size_label(small.updates or 0)}"
        fig = Figure(
            name,
            label,
            unit="cost",
            target=TARGETS[name],
            note="decode+reduce seconds per update, largest log / smallest log",
        )
        if small.error or big.error or not (small.seconds and big.seconds):
            fig.error = f"not available: needs decode+reduce at {small.log} and {big.log}"
        else:
            per_small = small.seconds / (small.updates or 1)
            per_big = big.seconds / (big.updates or 1)
            fig.value = per_big / per_small
            fig.extra = {"us_per_update_small": per_small * 1e6, "us_per_update_big": per_big * 1e6}
            fig.note += f" ({per_big * 1e6:.2f} us vs {per_small * 1e6:.2f} us)"
        self.report.add(fig)

    def memory(self, log: Log) -> None:
        r = self.run_target("memory", log, 1)
        fig = Figure(
            "memory",
            log.label,
            unit="x",
            target=TARGETS["memory"],
            bytes=log.size,
            error=r.get("error"),
            extra=r,
        )
        if fig.error is None:
            held = r["held_bytes"]
            fig.value = held / log.size
            fig.note = (
                f"tracemalloc: {held / 1e6:.1f} MB held after feeding a "
                f"{log.size / 1e6:.1f} MB log (peak {r['peak_bytes'] / 1e6:.1f} MB)"
            )
            rss = self.run_target("memory-rss", log, 1)
            if rss.get("error") is None:
                fig.extra["rss_delta_bytes"] = rss["held_bytes"]
                fig.note += f"; RSS delta {rss['held_bytes'] / log.size:.2f} x (informational)"
        self.report.add(fig)

    def sdk(self, log: Log) -> None:
        cap = 3 if log.updates <= 100_000 else 1
        r = self.run_target("sdk", log, self.repeat_for(log.updates, cap))
        fig = Figure("sdk", log.label, error=r.get("error"), extra=r)
        if fig.error is None:
            fig.seconds = r["seconds"]
            fig.updates = r["accepted"]
            fig.bytes = r["accepted_bytes"]
            fig.value = r["seconds"] / r["floor_seconds"]
            rejected = ", ".join(f"{k} {v}" for k, v in r["rejected"].items())
            fig.note = (
                f"agent-client-protocol (v1 models), json.loads + "
                f"SessionNotification.model_validate, measured on the "
                f"{r['accepted']:,} of {r['lines']:,} lines it accepts; rejected: "
                f"{rejected or 'none'}"
            )
        self.report.add(fig)

    def cli(self, log: Log) -> None:
        name = "cli"
        r = self.run_target(
            "cli", log, self.repeat_for(log.updates, 3 if log.updates <= 100_000 else 2)
        )
        fig = Figure(
            name,
            log.label,
            target=TARGETS[name],
            updates=log.updates,
            bytes=log.size,
            error=r.get("error"),
            extra=r,
        )
        if fig.error is None:
            fig.seconds = r["seconds"]
            lib = self.run_target(
                "replay", log, self.repeat_for(log.updates, 3 if log.updates <= 100_000 else 2)
            )
            inproc = self.reduce_results.get(log.label)
            wire = (
                f"; {r['seconds'] / inproc.seconds:.2f}x the raw-wire decode+reduce"
                f" ({inproc.seconds:.3f} s)"
                if inproc is not None and inproc.seconds
                else ""
            )
            if "error" in lib:
                fig.note = f"no in-process replay to compare with ({lib['error']}){wire}"
            else:
                fig.value = r["seconds"] / lib["seconds"]
                fig.note = (
                    f"acp-client replay --stats ({self.args.clock} time, startup included) vs "
                    f"the library's own replay_log of the same file {lib['seconds']:.3f} s{wire}"
                )
        self.report.add(fig)

    # -- issue 23 ---------------------------------------------------------------------------

    def _ratio(self, name: str, label: str, log: Log | None, repeat: int, note: Any) -> None:
        """A whole-process figure: ``seconds / base_seconds``; ``note(result)`` explains it."""
        path = log.path if log is not None else REPO_ROOT / "acp_client" / "data" / "example.jsonl"
        r = self.run_target(name, Log("-", 0, path), repeat)
        figure = Figure(name, label, target=TARGETS[name], error=r.get("error"), extra=r)
        if figure.error is None:
            figure.seconds = r["seconds"]
            figure.value = r["seconds"] / r["base_seconds"]
            figure.note = note(r)
        self.report.add(figure)

    def replay(self, n: int) -> None:
        """``replay_log`` of a generated log against ``receive_data`` of its updates, in one
        process, for each format (``--full-logs``: the log holds both directions)."""
        for fmt in REPLAY_FORMATS:
            log = self.log("mixed", n, fmt)
            r = self.run_target("replay-wire", log, self.repeat_for(n, 5 if n <= 100_000 else 2))
            fig = Figure(
                "replay", log.label, target=TARGETS["replay"], error=r.get("error"), extra=r
            )
            if fig.error is None:
                fig.seconds = r["seconds"]
                fig.updates = r["updates"]
                fig.bytes = log.size
                fig.value = r["seconds"] / r["wire_seconds"]
                fig.note = f"replay_log vs receive_data of its updates {r['wire_seconds']:.3f} s"
            self.report.add(fig)

    def cli_floor(self, n: int) -> None:
        log = self.log("mixed", n)
        self._ratio(
            "cli-floor",
            log.label,
            log,
            self.repeat_for(n, 5),
            lambda r: (
                "acp-client replay FILE --stats vs a msgspec process decoding every line "
                f"{r['base_seconds']:.3f} s (best of each)"
            ),
        )

    def import_time(self) -> None:
        self._ratio(
            "import",
            "-",
            None,
            7,
            lambda r: (
                f"import acp_client vs import msgspec {r['base_seconds']:.3f} s, medians of "
                f"7 processes; with a first Connection() "
                f"{r['first_call_seconds'] / r['base_seconds']:.2f}x"
            ),
        )

    def example(self) -> None:
        self._ratio(
            "example",
            "bundled",
            None,
            7,
            lambda r: (
                "acp-client replay --json of the bundled example vs msgspec decoding it "
                f"{r['base_seconds']:.3f} s, medians of 7"
            ),
        )

    def jobs(self, n: int) -> None:
        log = self.log("mixed", n)
        r = self.run_target("jobs", log, self.repeat_for(n, 3))
        fig = Figure("jobs", f"8x {size_label(n)}", target=TARGETS["jobs"], at_least=True, extra=r)
        fig.error = r.get("error")
        if fig.error is None:
            fig.seconds = r["seconds"]
            fig.value = r["base_seconds"] / r["seconds"]
            fig.note = (
                f"--jobs 1 {r['base_seconds']:.2f} s / --jobs 2 {r['seconds']:.2f} s, wall "
                f"clock, {r['cpus']} CPUs, load {r['load']:.1f}"
            )
        self.report.add(fig)

    def summarize(self) -> None:
        """Issue 25: ``summarize_many`` of a fleet of small logs three ways, in one run."""
        from ._fleet import FLEET, QUICK_FLEET

        per_log = 200 if self.args.quick else 1000
        log = self.log("mixed", per_log, "acp-client", full=True)
        count = QUICK_FLEET if self.args.quick else FLEET
        os.environ["ACP_BENCH_FLEET"] = str(count)
        r = self.run_target("summarize", log, 1 if self.args.quick else 2)
        label = f"{count}x {size_label(per_log)}"
        if "error" in r:
            self.report.add(Figure("summarize", label, error=r["error"]))
            return
        same = "rows equal" if r["same"] else "ROWS DIFFER"
        note = f"{r['logs']} logs, {r['rows']} rows, {r['cpus']} CPUs, load {r['load']:.1f}"
        self.report.add(
            Figure(
                "summarize",
                f"{label} jobs 1",
                value=r["jobs1"],
                unit="s",
                seconds=r["jobs1"],
                note=note,
            )
        )
        speed = r["jobs1"] / r["jobs2"]
        self.report.add(
            Figure(
                "summarize",
                f"{label} jobs 2",
                value=speed,
                unit="x faster",
                seconds=r["jobs2"],
                note=same,
            )
        )
        if r["dask"] is None:
            self.report.add(Figure("summarize", f"{label} dask", error=r["dask_error"]))
            return
        self.report.add(
            Figure(
                "summarize",
                f"{label} dask 2w",
                value=r["jobs1"] / r["dask"],
                unit="x faster",
                seconds=r["dask"],
                note=f"LocalCluster of 2 worker processes, started in {r['dask_startup']:.1f} s"
                f" (not counted); {same}",
            )
        )

    def sdk_state(self, n: int) -> None:
        log = self.log("mixed", n)
        r = self.run_target("sdk-state", log, self.repeat_for(n, 3))
        fig = Figure("sdk-state", log.label, target=TARGETS["sdk-state"], at_least=True, extra=r)
        fig.error = r.get("error")
        if fig.error is None:
            fig.value = r["sdk_per_update"] / r["ours_per_update"]
            fig.note = (
                f"per update: SDK json.loads + model_validate + SessionAccumulator.apply on the "
                f"v1 form {r['sdk_per_update'] * 1e3:.2f} ms (last {r['sdk_updates']} of "
                f"{r['v1_updates']:,}), ours {r['ours_per_update'] * 1e6:.2f} us"
            )
        self.report.add(fig)

    # -- the plan ---------------------------------------------------------------------------

    def run(self) -> None:
        args = self.args
        only: set[str] = args.only
        sizes: list[int] = sorted(set(args.sizes or (QUICK_SIZES if args.quick else DEFAULT_SIZES)))
        small, big = sizes[0], sizes[-1]

        def want(name: str) -> bool:
            return not only or name in only

        reduce_sizes = set(sizes) if want("decode+reduce") else set()
        if want("scaling") and len(sizes) > 1:
            reduce_sizes |= {small, big}
        if want("cli"):
            reduce_sizes.add(big)

        for n in sizes:
            if not (want("floor") or want("decode") or want("sdk") or n in reduce_sizes):
                continue
            log = self.log("mixed", n)
            if n in reduce_sizes:
                self.reduce_results[log.label] = self.reduce(log)
            elif want("floor"):
                self.floor(log)
            if want("decode"):
                self.decode(log)
            if want("sdk"):
                self.sdk(log)
        if want("decode+reduce") or want("single"):
            self.reduce(self.log("single", big))
        if want("scaling"):
            if len(sizes) > 1:
                self.scaling(
                    self.reduce_results[f"mixed {size_label(small)}"],
                    self.reduce_results[f"mixed {size_label(big)}"],
                )
            else:
                self.report.add(Figure("scaling", "-", error="not available: needs two --sizes"))
        if want("memory"):
            self.memory(self.log("mixed", big))
        if want("cli"):
            self.cli(self.log("mixed", big))
        self.run_issue23(sizes, want)

    def run_issue23(self, sizes: list[int], want: Any) -> None:
        """The figures of issue 23 (stored logs, import, example, jobs, the SDK)."""
        quick = self.args.quick
        replay_sizes = [n for n in sizes if n >= 100_000] or sizes[-1:]
        mid = 100_000 if not quick and 100_000 in sizes else sizes[-1]
        if want("replay"):
            for n in replay_sizes:
                self.replay(n)
        if want("cli-floor"):
            self.cli_floor(mid)
        if want("import"):
            self.import_time()
        if want("example"):
            self.example()
        if want("jobs"):
            self.jobs(mid)
        if want("sdk-state"):
            for n in sorted({sizes[0] if quick else 10_000, mid}):
                self.sdk_state(n)
        if want("summarize"):
            self.summarize()
        if want("view"):  # issue 22: following chunks through acp_client.view
            from ._view import run_view

            run_view(self, self.args.data_dir, quick)


def _parse_only(values: Sequence[str]) -> set[str]:
    names = set()
    for value in values:
        for name in value.split(","):
            name = ALIASES.get(name.strip(), name.strip())
            if name not in NAMES:
                raise argparse.ArgumentTypeError(f"unknown benchmark {name!r}; one of {NAMES}")
            names.add(name)
    return names


def _parse_sizes(values: Sequence[str]) -> list[int]:
    return [parse_size(v) for value in values for v in value.split(",") if v.strip()]


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m benchmarks``."""
    p = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="acp_client benchmarks: every figure is a ratio against msgspec.json.decode "
        "of the same lines, measured in the same run.",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"tiny logs ({', '.join(map(size_label, QUICK_SIZES))}), one repetition",
    )
    p.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help=f"run only these (repeatable or comma-separated): {', '.join(NAMES)}",
    )
    p.add_argument(
        "--sizes",
        action="append",
        default=[],
        metavar="N[,N...]",
        help="mixed-log sizes in updates, e.g. 10k,100k,1M (default)",
    )
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.add_argument("--repeat", type=int, help="repetitions per figure (best is kept)")
    p.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    p.add_argument(
        "--sessions", type=int, default=1, help="sessions interleaved in the mixed logs (default 1)"
    )
    p.add_argument(
        "--full-logs",
        action="store_true",
        help="feed both directions (setup, prompts, responses), not only session/update lines",
    )
    p.add_argument(
        "--no-gc",
        action="store_true",
        help="disable the cyclic gc inside every timed loop (floor and targets)",
    )
    p.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall (time.perf_counter, default) or cpu (time.process_time: ignores time the "
        "process spent descheduled, steadier on a busy machine)",
    )
    p.add_argument(
        "--data-dir",
        type=Path,
        default=_generate.DATA_DIR,
        help="where generated logs are cached (default benchmarks/.data)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="exit 1 unless every figure with a target is available and OK",
    )
    g = p.add_argument_group("writing a log instead of benchmarking")
    g.add_argument("--write", type=Path, metavar="PATH", help="write a generated log and exit")
    g.add_argument(
        "--updates",
        type=parse_size,
        default=10_000,
        metavar="N",
        help="session/update lines in the written log (default 10k)",
    )
    g.add_argument(
        "--format",
        choices=(*_generate.FORMATS, "both"),
        default="both",
        help="jsonrpc, acp-client, capture, or both: every format (PATH gets .jsonrpc / "
        ".acp-client / .capture before its suffix); default both",
    )
    g.add_argument("--kind", choices=_generate.KINDS, default="mixed")
    g.add_argument(
        "--updates-only",
        action="store_true",
        help="only session/update lines (default: both directions)",
    )
    return p


def write(args: argparse.Namespace) -> int:
    """``--write PATH``: write one generated log in one or both formats."""
    path: Path = args.write
    formats = _generate.FORMATS if args.format == "both" else (args.format,)
    for fmt in formats:
        target = path if len(formats) == 1 else path.with_name(f"{path.stem}.{fmt}{path.suffix}")
        info = _generate.write_log(
            target,
            args.updates,
            args.seed,
            kind=args.kind,
            sessions=args.sessions,
            fmt=fmt,
            full=not args.updates_only,
        )
        print(
            f"{target}: {fmt}, {info.lines:,} lines, {info.updates:,} updates, "
            f"{info.bytes / 1e6:.1f} MB"
        )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m benchmarks``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        args.only = _parse_only(args.only)
        args.sizes = _parse_sizes(args.sizes)
    except (argparse.ArgumentTypeError, ValueError) as exc:
        parser.error(str(exc))
    if args.write is not None:
        return write(args)

    report = Reporter(as_json=args.json)
    import msgspec

    report.meta = {
        "python": platform.python_version(),
        "msgspec": msgspec.__version__,
        "platform": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "seed": args.seed,
        "gc": not args.no_gc,
        "clock": args.clock,
        "quick": args.quick,
    }
    m = report.meta
    report.info(
        f"# acp_client benchmarks: Python {m['python']}, msgspec {m['msgspec']}, "
        f"{m['platform']}, {m['cpus']} CPUs; seed {args.seed}; best of "
        f"{args.repeat or (1 if args.quick else '7 (3 from 1M)')}; gc "
        f"{'off' if args.no_gc else 'on'} in every timed loop; {args.clock} clock"
    )
    report.info(
        "# ratio = best time / best msgspec.json.decode time of the same lines, same run "
        "(decode, sdk: alternating in one subprocess; decode+reduce: alternating with the "
        "floor line above it, one subprocess per repetition)"
    )
    Harness(args, report).run()
    report.finish()
    if args.check:
        judged = [f for f in report.figures if f.target is not None]
        return 0 if judged and all(f.status == "OK" for f in judged) else 1
    return 0
