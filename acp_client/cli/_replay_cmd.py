"""``acp-client replay``: stored logs shown, exported as snapshots, or summarised."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

from acp_client._logfiles import expand_logs, looks_like_log
from acp_client._many import spread
from acp_client._replay import ReplayResult, iter_kinds, replay_log
from acp_client.logs._records import FATAL_CODES as _FATAL_CODES

from . import EXIT_OK, EXIT_STRICT, EXIT_UNREADABLE, UsageError, write_json
from ._stream import with_failed_requests
from ._values import removed_plans

__all__ = ["looks_like_log", "replay_command", "safe", "say_skipped"]

_PROGRESS_BYTES = 8 * 1024 * 1024
_EXTRAS = "renderExtras"  # what only the rendered view shows, carried beside the snapshot
_PAGE = "pageExtras"  # what the --html page shows beside the snapshot


def _example_log() -> bytes:
    beside = Path(__file__).resolve().parent.parent / "data" / "example.jsonl"
    if beside.is_file():  # installed as files: no importlib.resources (it imports zipfile)
        return beside.read_bytes()
    from importlib import resources

    return (resources.files("acp_client") / "data" / "example.jsonl").read_bytes()


def say_skipped(skipped: list[str], command: str = "replay") -> None:
    """One line for the files of folders that were not taken as logs."""
    if not skipped:
        return
    names = ", ".join(safe(Path(name).name) for name in skipped[:3])
    more = f" and {len(skipped) - 3} more" if len(skipped) > 3 else ""
    count = f"{len(skipped)} file{'s' if len(skipped) > 1 else ''}"
    sys.stderr.write(
        f"acp-client {command}: skipped {count} that do not look like logs ({names}{more})\n"
    )


def _options(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "format": args.format,
        "strict": args.strict,
        "perspective": args.perspective,
        "direction": args.direction,
        "sides": dict(args.side) if args.side else None,
        "protocol": args.protocol,
        "terminal_limit": args.terminal_limit,
        "block_limit": args.block_limit,
        "unstable": tuple(args.unstable),
        **{
            limit: value
            for limit in (
                "max_line",
                "max_document",
                "max_decompressed",
                "max_ratio",
                "max_diagnostics",
            )
            if (value := getattr(args, limit)) is not None
        },
    }


def _status(result: ReplayResult) -> int:
    if result.fatal:
        return EXIT_UNREADABLE
    if result.stopped_early:
        return EXIT_STRICT
    return EXIT_OK


def _stats(result: ReplayResult, elapsed: float, size: int | None) -> dict[str, Any]:
    replayer = result.replayer
    conn = replayer.connection
    sessions = conn.sessions.values()
    updates = sum(replayer.update_kinds.values())
    diag_codes: Counter[str] = Counter(f"{d.severity}:{d.code}" for d in result.diagnostics)
    terminal_bytes = sum(len(t.output) for s in sessions for t in s.terminals.values())
    out: dict[str, Any] = {
        "format": result.format,
        "protocol": replayer.version,
        "records": replayer.messages + replayer.stderr_lines,
        "messages": replayer.messages,
        "stderrLines": replayer.stderr_lines,
        "updates": updates,
        "updateKinds": dict(iter_kinds(replayer.update_kinds)),
        "sessions": len(conn.sessions),
        "messagesInTimeline": sum(
            1 for s in sessions for e in s.timeline if getattr(e, "entry", "") == "message"
        ),
        "toolCalls": sum(len(s.tool_calls) for s in sessions),
        "terminals": sum(len(s.terminals) for s in sessions),
        "plans": sum(len(s.plans) for s in sessions),
        "compactions": sum(len(s.compactions) for s in sessions),
        "terminalBytes": terminal_bytes,
        "diagnostics": dict(sorted(diag_codes.items())),
        "seconds": round(elapsed, 6),
        "updatesPerSecond": round(updates / elapsed, 1) if elapsed > 0 else None,
    }
    if size is not None:
        out["bytes"] = size
        out["megabytesPerSecond"] = round(size / elapsed / 1e6, 3) if elapsed > 0 else None
    return out


def _replay_one(
    name: str, options: dict[str, Any], mode: str, quiet: bool = False
) -> tuple[str, int, Any]:
    """Replay one log in this process; return (name, exit status, payload)."""
    source: Any = _example_log() if name == "" else name
    size = None
    if isinstance(source, str) and source != "-":
        try:
            size = os.path.getsize(source)
        except OSError as exc:
            return name, EXIT_UNREADABLE, f"cannot read {name}: {exc.strerror or exc}"
    elif isinstance(source, bytes):
        size = len(source)
    progress = None
    if not quiet and size is not None and size > _PROGRESS_BYTES and sys.stderr.isatty():
        progress = _progress_printer(name)
    start = time.perf_counter()
    try:
        result = replay_log(source, progress=progress, **options)
    except OSError as exc:
        return name, EXIT_UNREADABLE, f"cannot read {name}: {exc.strerror or exc}"
    elapsed = time.perf_counter() - start
    if progress is not None:
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()
    if mode == "stats":
        return name, _status(result), _stats(result, elapsed, size)
    snapshot = result.snapshot()
    if mode.startswith("json"):  # the command line's JSON adds them (docs/snapshot.md)
        with_failed_requests(snapshot, result.failed_requests)
    if mode != "json":  # not part of the snapshot: the rendered views show them
        extras = {
            "failed_requests": [failed.to_json() for failed in result.failed_requests],
            "truncated_terminals": sorted(result.replayer.truncated_terminals),
            "removed_plans": removed_plans(result.connection.sessions),
        }
        if mode == "render":
            snapshot[_EXTRAS] = extras
        else:  # --html
            snapshot[_PAGE] = {"format": result.format, "protocol": result.replayer.version}
            snapshot[_PAGE].update(extras)
    return name, _status(result), snapshot


def _progress_printer(name: str) -> Any:
    label = name if len(name) < 40 else "..." + name[-37:]
    safe = "".join(ch if ch.isprintable() else "?" for ch in label)

    def report(count: int) -> None:
        sys.stderr.write(f"\rreplaying {safe}: {count:,} records")
        sys.stderr.flush()

    return report


def _print_stats(name: str, stats: dict[str, Any]) -> None:
    r"""The counts as plain lines, ``key  value``: no table library to import for a summary.

    One line each: a file name or an agent's update kind cannot add lines (``\n``, ``\t``
    and control characters escaped).
    """
    from ._sanitize import sanitize_line

    width = max(map(len, stats), default=0)
    out = [sanitize_line(name or "example log")]
    for key, value in stats.items():
        if isinstance(value, dict):
            value = ", ".join(f"{sanitize_line(str(k))} {v}" for k, v in value.items()) or "-"
        out.append(f"  {key:<{width}}  {sanitize_line(str(value))}")
    sys.stdout.write("\n".join(out) + "\n")


def _looks_v1(payload: Any) -> bool:
    """Whether a v2 replay rejected updates for the ``messageId`` a v1 agent never sends."""
    diagnostics = payload.get("diagnostics", ()) if isinstance(payload, dict) else ()
    if isinstance(diagnostics, dict):  # --stats: counts only
        return False
    return any(
        d.get("code") == "update-rejected" and "`messageId`" in str(d.get("message"))
        for d in diagnostics
    ) and any(s.get("protocolVersion") == 2 for s in payload.get("sessions", ()))


def _fatal_message(payload: Any) -> str | None:
    if isinstance(payload, dict):
        diagnostics = payload.get("diagnostics", ())
        if isinstance(diagnostics, dict):  # --stats: counts by "severity:code"
            for key in diagnostics:
                code = str(key).rpartition(":")[2]
                if code in _FATAL_CODES:
                    return code
            return None
        for diag in diagnostics:
            if diag.get("code") in _FATAL_CODES:
                return f"{diag.get('code')}: {diag.get('message')}"
    return None


def replay_command(args: argparse.Namespace) -> int:
    """Run ``acp-client replay`` with parsed arguments; return the exit status."""
    logs, skipped, unreadable = expand_logs(args.logs) if args.logs else ([""], [], [])
    say_skipped(skipped)
    for name, why in unreadable:
        sys.stderr.write(f"acp-client replay: cannot read {safe(name)}: {safe(why)}\n")
    if not logs:
        sys.stderr.write("acp-client replay: no log files found\n")
        return EXIT_UNREADABLE
    options = _options(args)
    if args.html is not None and (args.stats or args.follow):
        raise UsageError("--html does not go with --stats or --follow")
    if args.events and args.json:
        raise UsageError("--events and --json do not go together")
    if args.stats and args.follow:  # it was ignored: the snapshot came out instead
        raise UsageError("--stats does not go with --follow (it times a read to the end)")
    if args.events and not args.follow:
        raise UsageError("--events goes with --follow (a stored log: --json)")
    if args.follow:
        if len(args.logs) != 1 or logs != args.logs or skipped:
            raise UsageError("--follow takes exactly one log file (or '-', standard input)")
        from ._follow import follow

        return follow(logs[0], args, options)
    mode = "stats" if args.stats else ("json" if args.json else "render")
    if args.html is not None:
        mode = "json+html" if args.json else "html"
    results: list[tuple[str, int, Any]]
    jobs = args.jobs if args.jobs > 0 else None  # 0: one process per core
    if jobs != 1 and len(logs) > 1:  # spread over processes as replay_many does
        work = partial(_replay_one, options=options, mode=mode, quiet=True)
        results = spread(work, logs, jobs)
    else:
        results = [_replay_one(name, options, mode) for name in logs]
    status = _output(results, args, mode)
    return max(status, EXIT_UNREADABLE) if unreadable else status


def _output(results: list[tuple[str, int, Any]], args: argparse.Namespace, mode: str) -> int:
    worst = EXIT_OK
    # a folder gives one JSON line per log, with "file", however many logs it holds
    many = len(results) > 1 or any(os.path.isdir(name) for name in args.logs or ())
    console = None
    if mode == "render":  # rich only to render
        from ._console import make_console

        console = make_console()
    pages = []
    for name, status, payload in results:
        worst = max(worst, status)
        if isinstance(payload, str):
            sys.stderr.write(f"acp-client replay: {safe(payload)}\n")
            continue
        if _PAGE in payload:
            from ._html import LogPage

            pages.append(LogPage(name, payload, **payload.pop(_PAGE)))
        if _looks_v1(payload):
            sys.stderr.write(
                f"acp-client replay: {safe(name or 'example')}: updates without a messageId"
                " were rejected; if the agent speaks ACP v1, replay with --protocol 1\n"
            )
        fatal = _fatal_message(payload)
        if fatal and status == EXIT_UNREADABLE:
            sys.stderr.write(f"acp-client replay: {safe(name or 'example')}: {safe(fatal)}\n")
        if mode.startswith("json"):  # a bounded piece at a time (a snapshot may be huge)
            if many:
                write_json({"file": name, **payload}, sys.stdout)
            else:
                write_json(payload, sys.stdout, indent=2)
        elif mode == "stats":
            if args.json:
                write_json({"file": name, **payload}, sys.stdout)
            else:
                _print_stats(name, payload)
        elif mode == "render":
            from ._render import render_snapshot

            assert console is not None
            if many:
                from ._console import CappedRule

                console.print(CappedRule(safe(name)))
            extras = payload.pop(_EXTRAS, {})
            render_snapshot(
                payload,
                console,
                **extras,
                show_thoughts=not args.no_thoughts,
                markdown=args.markdown,
            )
    sys.stdout.flush()
    if args.html is not None:
        from ._html import write_page

        worst = max(worst, write_page(args.html, pages))
    return worst


def safe(text: str) -> str:
    """``text`` with every unprintable character written as its visible hex escape."""
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in text)
