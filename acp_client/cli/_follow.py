"""``acp-client replay --follow``: keep reading a log that is still being written."""

from __future__ import annotations

import argparse
import signal
import sys
import time
from typing import Any

from acp_client._replay import Replayer
from acp_client.logs import LogReader

from . import EXIT_OK, EXIT_STRICT, EXIT_UNREADABLE, dump_json

__all__ = ["follow"]

_POLL_SECONDS = 0.25
#: After this long without new bytes, what the reader holds back for later records is shown.
_SETTLE_SECONDS = 1.0
_BLOCK = 1 << 16


class _Terminated(Exception):
    """SIGTERM arrived: stop following, as Ctrl-C does."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated


def follow(path: str, args: argparse.Namespace, options: dict[str, Any]) -> int:
    """Replay ``path`` and keep applying what is appended to it until Ctrl-C or SIGTERM.

    Either ends the run normally: the final state is printed and the status is 0.
    """
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return _follow(path, args, options)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _follow(path: str, args: argparse.Namespace, options: dict[str, Any]) -> int:
    reader = LogReader(
        format=options["format"],
        strict=options["strict"],
        perspective=options["perspective"],
        direction=options["direction"],
        sides=options["sides"],
    )
    replayer = Replayer(
        protocol=options["protocol"],
        terminal_limit=options["terminal_limit"],
        strict=options["strict"],
        unstable=options["unstable"],
    )
    console: Any = None
    if not args.json:  # rich only to render
        from rich.console import Console

        console = Console(markup=False, highlight=False, emoji=False)
    try:
        handle = open(path, "rb")  # noqa: SIM115 - kept open while following
    except OSError as exc:
        from ._sanitize import sanitize_line

        reason = sanitize_line(str(exc.strerror or exc))
        sys.stderr.write(f"acp-client replay: cannot read {sanitize_line(path)}: {reason}\n")
        return EXIT_UNREADABLE

    def view() -> Any:
        from ._render import snapshot_renderable

        return snapshot_renderable(
            replayer.snapshot(),
            show_thoughts=not args.no_thoughts,
            markdown=args.markdown,
            last_entries=40,
            failed_requests=[f.to_json() for f in replayer.failed_requests],
            truncated_terminals=replayer.truncated_terminals,
        )

    status = EXIT_OK

    def pump(refresh: Any) -> None:
        last_data = time.monotonic()
        settled = True
        while not reader.done and not replayer.stopped:
            block = handle.read(_BLOCK)
            if block:
                for item in reader.feed(block):
                    _apply(replayer, item)
                last_data = time.monotonic()
                settled = False
                continue
            if not settled and time.monotonic() - last_data >= _SETTLE_SECONDS:
                # the log paused: a response held back for its request is shown now
                for item in reader.settle():
                    _apply(replayer, item)
                settled = True
            refresh()
            time.sleep(_POLL_SECONDS)

    try:
        with handle:
            if args.json:  # stdout carries only the final snapshot
                pump(lambda: None)
            else:
                from rich.live import Live

                with Live(view(), console=console, auto_refresh=False) as live:
                    pump(lambda: live.update(view(), refresh=True))
    except (KeyboardInterrupt, _Terminated):
        pass
    for item in reader.close():
        _apply(replayer, item)
    replayer.finish()
    if not args.json:  # what the end of the log completed (a last line, a document)
        console.print(view())
    if reader.fatal:
        status = EXIT_UNREADABLE
    elif reader.stopped_early or replayer.stopped:
        status = EXIT_STRICT
    if args.json:
        sys.stdout.write(dump_json(replayer.snapshot(), indent=2) + "\n")
    return status


def _apply(replayer: Replayer, item: Any) -> None:
    if getattr(item, "kind", None) is not None:
        replayer.apply_record(item)  # in strict mode, stops at the first error
    else:
        replayer.diagnostics.append(item)
