"""The ``acp-client`` command line: ``replay`` and ``summarize`` stored logs, ``run`` an agent.

Exit codes (also in ``acp-client replay --help`` and the README):

* 0 — every log was read to its end (diagnostics do not change this);
* 1 — ``--strict`` stopped at the first error diagnostic;
* 2 — wrong usage;
* 3 — a log could not be read (missing file, unsupported compression, broken gzip, no
  known format);
* 130 — interrupted (Ctrl-C).

``run`` exits 0 when the last turn ended with ``end_turn``, 4 for another stop reason
(``cancelled``, ``refusal``, ``max_tokens``, ...), 5 when the agent failed or exited.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
from collections.abc import Callable, Sequence
from typing import TypeVar

from ._json_out import dump_json, write_json

__all__ = ["DISTRIBUTION", "UsageError", "build_parser", "dump_json", "main", "write_json"]

_N = TypeVar("_N", int, float)

#: The distribution on the package index (the module stays ``acp_client``; the name
#: ``acp-client`` there belongs to an unrelated project).
DISTRIBUTION = "acp-client-state"

EXIT_OK = 0
EXIT_STRICT = 1
EXIT_NOT_WRITTEN = 1  # the output could not be written (out of memory, a full disk)
EXIT_USAGE = 2
EXIT_UNREADABLE = 3
EXIT_STOPPED = 4
EXIT_AGENT_FAILED = 5
EXIT_HANGUP = 129
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

_MAIN_EPILOG = """\
exit status:
  0    done (replay: every log read to its end; run: the last turn ended with end_turn)
  1    replay --strict stopped at the first error diagnostic; the output could not be
       written (a full disk)
  2    wrong usage
  3    replay, summarize: a log could not be read
  4    run: the last turn ended with another stop reason
  5    run: the agent failed, exited or hung
  129  stopped by SIGHUP, 130 interrupted (Ctrl-C), 143 stopped by SIGTERM
  (each command's --help has the details)

examples:
  acp-client replay                          the example log shipped inside the package
  acp-client replay session.jsonl            show how a stored conversation ended up
  acp-client replay --json logs/ > out.ndjson one snapshot per log of a folder, as JSON lines
  acp-client replay --follow --events LOG    a log still being written, one JSON line per change
  acp-client replay LOG --html page.html     the conversation as one self-contained web page
  acp-client summarize --jobs 0 logs/ --out fleet.parquet   one row per session of every log
  acp-client run --prompt 'hello' -- AGENT   start an agent over stdio and talk to it
"""

_REPLAY_EPILOG = """\
exit status:
  0    every log was read to its end (diagnostics do not change this)
  1    --strict stopped at the first error diagnostic; the output could not be written
       (a full disk)
  2    wrong usage
  3    a log could not be read (missing file, unsupported compression,
       broken gzip stream, no known format)
  130  interrupted

With no LOG, the example log shipped inside the package is replayed.
"""

_RUN_EPILOG = """\
exit status:
  0    the last turn ended with stop reason end_turn
  1    the final snapshot (the view, --json, --events) could not be written whole: out of
       memory, or a full disk
  4    it ended with another stop reason (cancelled, refusal, max_tokens, ...)
  5    the agent failed, exited, hung or did not read its input, or the recording could
       not be written
  2    wrong usage
  129  stopped by SIGHUP (the terminal closed)
  130  interrupted (a first Ctrl-C during a turn cancels it with session/cancel;
       also when that cancel withdrew a prompt the agent had not taken yet)
  143  stopped by SIGTERM
"""


RUN_TERMINAL_LIMIT = 4 << 20
"""``run --terminal-limit``'s default: bytes of each terminal's output kept (4 MiB)."""
RUN_BLOCK_LIMIT = 100_000
"""``run --block-limit``'s default: content blocks each message (tool call ...) keeps."""


class UsageError(Exception):
    """Wrong usage of a subcommand found after parsing: its usage and the message, exit 2."""


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The parser of the subcommand ``name`` (its usage goes with its errors)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser = action.choices[name]
            return found
    raise KeyError(name)


def _side(value: str) -> tuple[str, str]:
    method, sep, side = value.partition("=")
    if not sep or side not in ("agent", "client") or not method:
        raise argparse.ArgumentTypeError("expected METHOD=agent or METHOD=client")
    return method, side


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``acp-client``."""
    parser = argparse.ArgumentParser(
        prog="acp-client",
        description="Client-side state of Agent Client Protocol (ACP) v2 conversations.",
        epilog=_MAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from acp_client import __version__

    parser.add_argument("--version", action="version", version=f"acp-client {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    replay = commands.add_parser(
        "replay",
        help="replay stored session logs and show or export the reconciled state",
        description=(
            "Replay stored ACP logs (jsonrpc, acp-client, capture, python-sdk, zed, conductor;"
            " gzip or not; v2, and v1 from today's agents) and show the conversation as it"
            " ended up, or export the reconciled state."
        ),
        epilog=_REPLAY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument(
        "logs", nargs="*", metavar="LOG", help="log files or folders; '-' reads standard input"
    )
    replay.add_argument(
        "--json",
        action="store_true",
        help="print the snapshot as JSON (the snapshot format is documented in docs/snapshot.md"
        " in the repository); with --stats, the counts as JSON",
    )
    replay.add_argument("--stats", action="store_true", help="print counts and throughput")
    replay.add_argument(
        "--follow",
        action="store_true",
        help="keep reading a log that is still being written, as tail -F does (a file that"
        " does not exist yet is waited for; '-' follows standard input until it ends);"
        " Ctrl-C or SIGTERM shows the final state once and exits 0",
    )
    replay.add_argument(
        "--events",
        action="store_true",
        help="with --follow: write one JSON object per change as it happens, then the final"
        " snapshot (format acp-client/events@1, docs/events-stream.md in the repository)",
    )
    replay.add_argument(
        "--strict", action="store_true", help="stop at the first error diagnostic (exit 1)"
    )
    replay.add_argument(
        "--format",
        choices=["jsonrpc", "acp-client", "capture", "python-sdk", "zed", "conductor"],
        help="skip format detection",
    )
    replay.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="replay N logs at once, each in its own process (0: one per core)",
    )
    replay.add_argument(
        "--perspective",
        choices=["client", "agent"],
        help="acp-client / python-sdk logs: the side that recorded them (default: detected)",
    )
    replay.add_argument(
        "--direction",
        choices=["incoming", "outgoing"],
        help="jsonrpc logs: take every message as sent in this direction (no inference, no "
        "pairing of responses with requests)",
    )
    replay.add_argument(
        "--side",
        action="append",
        type=_side,
        default=[],
        metavar="METHOD=agent|client",
        help="which side implements an extension method (repeatable)",
    )
    replay.add_argument(
        "--protocol", type=int, choices=[1, 2], help="force the protocol version of the log"
    )
    replay.add_argument(
        "--terminal-limit",
        type=_byte_count,
        metavar="BYTES",
        help="retain at most BYTES per terminal",
    )
    replay.add_argument(
        "--block-limit",
        type=_block_count,
        metavar="N",
        help="retain the last N content blocks of each message, tool call, compaction and"
        " session message (the count of dropped blocks is kept)",
    )
    replay.add_argument(
        "--max-line",
        type=_positive_bytes,
        metavar="BYTES",
        help="skip a longer line (default 64 MiB; one without a line break for 16 times as"
        " long ends reading, exit 3)",
    )
    replay.add_argument(
        "--max-document",
        type=_positive_bytes,
        metavar="BYTES",
        help="the largest log read whole as one JSON document, a Zed export (default 32 MiB;"
        " a larger one ends reading, exit 3)",
    )
    replay.add_argument(
        "--max-decompressed",
        type=_positive_bytes,
        metavar="BYTES",
        help="gzip input may expand to BYTES or 200 times its compressed size, whichever is"
        " larger (default 1 GiB; past it reading ends, exit 3)",
    )
    replay.add_argument(
        "--max-ratio",
        type=_positive_count,
        metavar="N",
        help="gzip input may expand to N times its compressed size past --max-decompressed"
        " (default 200)",
    )
    _add_max_diagnostics(replay)
    _add_unstable(replay)
    replay.add_argument("--no-thoughts", action="store_true", help="hide the agent's thoughts")
    replay.add_argument("--markdown", action="store_true", help="render message text as Markdown")
    replay.add_argument(
        "--html",
        metavar="FILE",
        help="write the conversation as one self-contained HTML page (no scripts, nothing"
        " loaded) to FILE instead of showing it; with --json the snapshot is printed too;"
        " not with --stats or --follow; exit status as above, 2 if FILE cannot be written",
    )

    from ._summarize_cmd import add_summarize_parser

    add_summarize_parser(commands)

    run = commands.add_parser(
        "run",
        help="start an agent, send prompts and show the conversation live",
        description="Start an ACP agent over stdio, send prompts, render the conversation.",
        epilog=_RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("--prompt", action="append", default=[], metavar="TEXT", help="repeatable")
    run.add_argument("--record", metavar="FILE", help="record the traffic (acp-client format)")
    run.add_argument(
        "--events",
        action="store_true",
        help="write one JSON object per change as it happens, then the final snapshot"
        " (format acp-client/events@1, docs/events-stream.md in the repository); no view",
    )
    run.add_argument(
        "--json",
        action="store_true",
        help="print the final snapshot as JSON (the snapshot format is documented in"
        " docs/snapshot.md in the repository)",
    )
    run.add_argument(
        "--permission",
        choices=["ask", "allow", "reject"],
        default="ask",
        help="answer permission requests: ask on the terminal (cancel without one), allow"
        " (allow_once, else allow_always) or reject (reject_once, else reject_always);"
        " none offered: cancelled",
    )
    run.add_argument(
        "--auth",
        metavar="METHOD_ID",
        help="log in first (auth/login; authenticate in v1) with one of the agent's authMethods",
    )
    run.add_argument("--cwd", metavar="DIR", help="working directory of the session")
    run.add_argument(
        "--terminal-limit",
        type=_byte_count,
        default=RUN_TERMINAL_LIMIT,
        metavar="BYTES",
        help=f"retain the last BYTES of each terminal's output (default {RUN_TERMINAL_LIMIT:,};"
        " the count of dropped bytes is kept)",
    )
    run.add_argument(
        "--block-limit",
        type=_block_count,
        default=RUN_BLOCK_LIMIT,
        metavar="N",
        help="retain the last N content blocks of each message, tool call, compaction and"
        f" session message (default {RUN_BLOCK_LIMIT:,}; the count of dropped blocks is kept)",
    )
    _add_unstable(run)
    run.add_argument(
        "--timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="give up on a request, or a prompt's turn, after SECONDS (exit 5)",
    )
    run.add_argument(
        "--max-line",
        type=_positive_bytes,
        metavar="BYTES",
        help="skip a longer line of the agent's, with a diagnostic (default 64 MiB)",
    )
    _add_max_diagnostics(run)
    run.add_argument("agent", nargs=argparse.REMAINDER, metavar="-- AGENT_COMMAND [ARGS...]")
    return parser


def _checked(
    convert: Callable[[str], _N], ok: Callable[[_N], bool], expected: str
) -> Callable[[str], _N]:
    """An argparse ``type``: ``convert`` the text and check it, else a usage error."""

    def parse(text: str) -> _N:
        try:
            value = convert(text)
        except ValueError:
            pass
        else:
            if ok(value):
                return value
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")

    return parse


# `--timeout`: a positive, finite number of seconds
_seconds = _checked(float, lambda v: 0 < v < float("inf"), "a positive number of seconds")
# `--terminal-limit`: a whole number of bytes, 0 or more
_byte_count = _checked(int, lambda v: v >= 0, "a number of bytes (0 or more)")
# `--block-limit`: a whole number of content blocks, 0 or more
_block_count = _checked(int, lambda v: v >= 0, "a number of blocks (0 or more)")
# `--max-line`, `--max-document`, `--max-decompressed`: a whole number of bytes, 1 or more
_positive_bytes = _checked(int, lambda v: v > 0, "a number of bytes (1 or more)")
# `--max-ratio`, `--max-diagnostics`: a whole number, 1 or more
_positive_count = _checked(int, lambda v: v > 0, "a whole number (1 or more)")


def _add_max_diagnostics(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-diagnostics",
        type=_positive_count,
        metavar="N",
        help="keep the first N diagnostics of each code, count the rest (one"
        " diagnostics-dropped per code; default 1,000)",
    )


def _add_unstable(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--unstable",
        action="append",
        default=[],
        choices=["prompt_suggestions", "cursors", "unknown_state"],
        metavar="FEATURE",
        help="apply an unstable ACP v2 Preview feature: prompt_suggestions, cursors or"
        " unknown_state (repeatable; otherwise such updates are kept as unknown)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``acp-client`` command; return its exit status."""
    _fill_closed_streams()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "replay":
            from ._replay_cmd import replay_command

            return replay_command(args)
        if args.command == "summarize":
            from ._summarize_cmd import summarize_command

            return summarize_command(args)
        from ._run_cmd import run_command

        agent = list(args.agent or [])
        if agent[:1] == ["--"]:  # the separator; a "--" among the agent's arguments stays
            agent = agent[1:]
        if not agent:
            raise UsageError("run needs an agent command after --")
        args.agent = agent
        return run_command(args)
    except UsageError as exc:  # as argparse says it, with the subcommand's usage
        sub = _subparser(parser, args.command)
        sub.print_usage(sys.stderr)
        sys.stderr.write(f"{sub.prog}: error: {exc}\n")
        return EXIT_USAGE
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").partition(".")[0]
        if missing not in ("rich", "pyte", "trio", "anyio", "markdown_it"):
            raise
        extra = "run" if missing in ("trio", "anyio") or args.command == "run" else "cli"
        sys.stderr.write(
            f"acp-client: this needs the '{extra}' extra ({missing} is not installed):"
            f" pip install '{DISTRIBUTION}[{extra}]'"
            + ("; replay --json works without it\n" if extra == "cli" else "\n")
        )
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        sys.stderr.close()
        return EXIT_OK
    except OSError as exc:  # the output cannot be written: a full disk, an I/O error
        if exc.errno not in _OUTPUT_ERRNOS:
            raise
        from ._live import detach_dead_terminal  # what is still buffered cannot fail again

        detach_dead_terminal(1)
        with contextlib.suppress(OSError):
            sys.stderr.write(f"acp-client {args.command}: cannot write the output: {exc}\n")
            sys.stderr.flush()
        return EXIT_NOT_WRITTEN


FULL_ERRNOS = frozenset(
    getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EFBIG") if hasattr(errno, name)
)
"""What writing to a file that can take no more fails with (a full disk, a quota, a size cap)."""


def _fill_closed_streams() -> None:
    """A standard stream closed before the start (``<&-``, ``>&-``) reads empty, writes nowhere.

    Python leaves ``sys.stdin`` (and the others) ``None`` then; the null device takes the
    lowest free descriptor, which is the closed one, so the agent started by ``run`` inherits
    ordinary descriptors too.
    """
    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:
            with contextlib.suppress(OSError):
                setattr(sys, name, open(os.devnull, mode, encoding="utf-8"))  # noqa: SIM115


#: What writing standard output may fail with, short of a closed pipe (handled apart).
_OUTPUT_ERRNOS = FULL_ERRNOS | {errno.EIO}
