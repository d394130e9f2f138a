"""``acp-client summarize``: one summary row per session of many logs (docs/summary.md).

The rows come from :func:`acp_client.summarize_many` (over ``--jobs`` processes, or on a
Dask cluster with ``--dask``); they go to standard output as JSON Lines, or to ``--out``
as JSON Lines, CSV or Parquet by the file's suffix. A progress bar goes to standard error
on a terminal only. Exit status as ``acp-client replay``'s: 0 every log read, 3 one could
not be (its row has the ``error``), 2 wrong usage, 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from typing import Any

from . import DISTRIBUTION, EXIT_OK, EXIT_UNREADABLE, EXIT_USAGE, UsageError, dump_json

__all__ = ["add_summarize_parser", "summarize_command"]

SUMMARIZE_EPILOG = """\
exit status:
  0    every log was read to its end (diagnostics do not change this)
  1    the output could not be written (a full disk)
  2    wrong usage, --out FILE cannot be written, an extra is missing, or the Dask
       scheduler cannot be reached
  3    a log could not be read: its row has the "error" (the others are written)
  130  interrupted

Output: JSON Lines on standard output, or --out FILE: .jsonl, .csv (count maps as JSON
text in a cell) or .parquet (pyarrow: the 'parquet' extra). The fields are described in
docs/summary.md in the repository.
"""


def add_summarize_parser(commands: Any) -> None:
    """The ``summarize`` subcommand's parser."""
    summarize = commands.add_parser(
        "summarize",
        help="one summary row per session of many logs (JSON Lines, CSV or Parquet)",
        description=(
            "Summarise stored ACP logs (files or folders): one row per session with its turns,"
            " stop reasons, prompts, messages, tool calls, permissions, terminals, usage and"
            " diagnostics; on all cores or on a Dask cluster."
        ),
        epilog=SUMMARIZE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    summarize.add_argument("paths", nargs="+", metavar="PATH", help="log files or folders")
    summarize.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="summarise N logs at once, each in its own process (0: one per core)",
    )
    summarize.add_argument(
        "--out",
        metavar="FILE",
        help="write the rows to FILE: .jsonl, .csv or .parquet (default: JSON Lines on"
        " standard output)",
    )
    summarize.add_argument(
        "--dask",
        metavar="SCHEDULER_ADDRESS",
        help="run one task per log on this dask.distributed scheduler (tcp://host:8786);"
        " the workers must be able to read the paths (the 'dask' extra)",
    )
    summarize.add_argument(
        "--format",
        choices=["jsonrpc", "acp-client", "capture", "python-sdk", "zed", "conductor"],
        help="skip format detection",
    )
    summarize.add_argument(
        "--protocol", type=int, choices=[1, 2], help="force the protocol version of the logs"
    )


def _missing(extra: str, module: str) -> int:
    sys.stderr.write(
        f"acp-client summarize: this needs the '{extra}' extra ({module} is not installed):"
        f" pip install '{DISTRIBUTION}[{extra}]'\n"
    )
    return EXIT_USAGE


def summarize_command(args: argparse.Namespace) -> int:
    """Run ``acp-client summarize`` with parsed arguments; return the exit status."""
    from acp_client._fleet import summarize_many
    from acp_client._logfiles import expand_logs

    from ._replay_cmd import safe, say_skipped
    from ._summary_out import OUT_SUFFIXES, out_kind, write_rows

    if args.out is not None and out_kind(args.out) is None:
        raise UsageError(f"--out FILE must end in {', '.join(OUT_SUFFIXES)}")
    if args.jobs < 0:
        raise UsageError("--jobs takes 0 (one per core) or more")
    if args.dask is not None and args.jobs != 1:
        raise UsageError("--jobs and --dask do not go together (the cluster has its workers)")
    if args.out is not None and out_kind(args.out) == "parquet":
        try:
            import pyarrow.parquet  # noqa: F401  (before the work, not after it)
        except ModuleNotFoundError:
            return _missing("parquet", "pyarrow")
    logs, skipped, unreadable = expand_logs(args.paths)
    say_skipped(skipped, "summarize")
    logs += (name for name, _ in unreadable)  # each an error row (status 3), as a bad file
    if not logs:
        sys.stderr.write("acp-client summarize: no log files found\n")
        return EXIT_UNREADABLE
    options = {"format": args.format, "protocol": args.protocol}
    with ExitStack() as stack:
        client = None
        if args.dask is not None:
            try:
                from distributed import Client
            except ModuleNotFoundError:
                return _missing("dask", "distributed")
            try:
                client = stack.enter_context(Client(args.dask))
            except (OSError, ValueError) as exc:  # unreachable, refused, a malformed address
                sys.stderr.write(
                    f"acp-client summarize: cannot use the Dask scheduler {safe(args.dask)}:"
                    f" {safe(str(exc))}\n"
                )
                return EXIT_USAGE
        progress = stack.enter_context(_progress(len(logs)))
        jobs = args.jobs if args.jobs > 0 else None  # 0: one process per core
        rows = summarize_many(logs, jobs=jobs, client=client, progress=progress, **options)

    for row in rows:
        if row.error is not None:
            sys.stderr.write(f"acp-client summarize: {safe(row.path)}: {safe(row.error)}\n")
    if args.out is None:
        for row in rows:  # escaped on a terminal (dump_json): agent text is never raw there
            sys.stdout.write(dump_json(_plain(row)) + "\n")
        sys.stdout.flush()
    else:
        try:
            write_rows(args.out, rows)
        except OSError as exc:
            sys.stderr.write(f"acp-client summarize: cannot write {safe(args.out)}: {exc}\n")
            return EXIT_USAGE
    return EXIT_UNREADABLE if any(row.error is not None for row in rows) else EXIT_OK


def _plain(row: Any) -> Any:
    import msgspec

    return msgspec.to_builtins(row)


class _NoProgress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _progress(total: int) -> Any:
    """A rich progress bar on standard error when it is a terminal, else nothing."""
    if not sys.stderr.isatty():
        return _NoProgress()
    from contextlib import contextmanager

    @contextmanager
    def bar() -> Any:
        from rich.console import Console
        from rich.progress import Progress

        with Progress(console=Console(stderr=True), transient=True) as shown:
            task = shown.add_task("summarizing", total=total)

            def report(done: int, _total: int) -> None:
                shown.update(task, completed=done)

            yield report

    return bar()
