"""``acp-client replay --follow``: keep reading a log that is still being written.

Owns the follow loop: a file followed by name as ``tail -F`` does (waited for, with a
message, when it does not exist yet; read again from its start when it is truncated (smaller,
or written again to any size: what was read is no longer there) or replaced by a new file,
with a ``log-truncated`` / ``log-replaced`` warning at the last line read) or standard
input (``-``, until it ends); the state shown live on a terminal (redrawn only when something
changed), streamed as JSON lines with ``--events`` (``_stream.py``), or only at the end
(``--json``, or piped); and the end: Ctrl-C or SIGTERM reads what was written until then and
shows the final state exactly once.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import signal
import stat
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from acp_client._diagnostics import DEFAULT_MAX_DIAGNOSTICS, Diagnostic
from acp_client._replay import Replayer
from acp_client.logs import LogReader

from . import EXIT_OK, EXIT_STRICT, EXIT_UNREADABLE, write_json
from ._stream import with_failed_requests

__all__ = ["follow"]

_POLL_SECONDS = 0.25
#: After this long without new bytes, what the reader holds back for later records is shown.
_SETTLE_SECONDS = 1.0
_BLOCK = 1 << 16
#: The first and the last bytes read that are checked at every read (the fingerprint).
_WINDOW = 1 << 12


class _Stopper:
    """Ctrl-C and SIGTERM, turned into a flag (and a byte that wakes the waits)."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_write, False)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.signal = signum
        with contextlib.suppress(OSError):
            os.write(self._wake_write, b"!")

    @contextlib.contextmanager
    def installed(self) -> Iterator[_Stopper]:
        previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield self
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            os.close(self._wake_read)
            os.close(self._wake_write)

    def wait(self, seconds: float, fd: int | None = None) -> bool:
        """Wait ``seconds`` or until ``fd`` is readable or a signal came; True if ``fd`` is."""
        if self.signal is not None:
            return False
        fds = [self._wake_read] if fd is None else [self._wake_read, fd]
        with contextlib.suppress(InterruptedError):
            ready, _, _ = select.select(fds, [], [], seconds)
            return fd is not None and fd in ready
        return False


class _Input:
    """The bytes of the followed log: a file by name, or standard input.

    A file is checked at every read: smaller than what was read (truncated), or its first or
    last :data:`_WINDOW` bytes before the read offset no longer what was read there (truncated
    and written again, to any size), it is read again from its start; when nothing new comes,
    a file of another identity under its name (replaced) is opened and read from its start.
    The check costs one ``fstat`` and two reads of at most 4 KiB, never a reread of the file.
    """

    def __init__(self, path: str, stopper: _Stopper) -> None:
        self.path = path
        self._stopper = stopper
        self._fd: int | None = None
        self._offset = 0  # bytes read from the file open now
        self._head = b""  # its first bytes read (at most _WINDOW)
        self._tail = b""  # the last bytes read before _offset (at most _WINDOW)
        self._regular = False  # a regular file: its size and bytes can be checked
        self.ended = False  # standard input closed: nothing more will come
        #: "truncated" / "rewritten" / "replaced": read again from the start
        self.restarted: str | None = None
        self.bytes_before = 0  # bytes read before the last restart

    def open(self) -> bool:
        """Open the log; a file that does not exist yet is waited for. False if stopped.

        Raises:
            OSError: the file cannot be read (not a missing file: a folder, no permission).
        """
        if self.path == "-":
            self._fd = sys.stdin.fileno()
            return True
        told = False
        while True:
            try:
                self._fd = self._open()
            except FileNotFoundError:
                if not told:
                    _say(f"waiting for {_safe(self.path)} to appear (Ctrl-C to stop)")
                    told = True
            else:
                if os.path.isdir(self.path):
                    os.close(self._fd)
                    self._fd = None
                    raise IsADirectoryError(21, "Is a directory")
                self._regular = stat.S_ISREG(os.fstat(self._fd).st_mode)
                return True
            if self._stopper.signal is not None:
                return False
            self._stopper.wait(_POLL_SECONDS)

    def read(self, wait: float) -> bytes:
        """The bytes written since the last read (``b""``: none within ``wait`` seconds)."""
        if self._fd is None or self.ended:
            return b""
        if self.path == "-":
            if not self._stopper.wait(wait, self._fd):
                return b""
            data = os.read(self._fd, _BLOCK)
            self.ended = not data
            return data
        if not self._regular and not self._stopper.wait(wait, self._fd):
            return b""  # a FIFO with nothing to read: waited for, as standard input is
        if self._regular and self._offset:
            self.restarted = self._rewritten()
            if self.restarted is not None:
                return b""
        data = os.read(self._fd, _BLOCK)
        if data:
            self._took(data)
            return data
        self.restarted = self._replaced()
        if self.restarted is None:
            self._stopper.wait(wait)
        return data

    def _open(self) -> int:
        """Open the path to read; a FIFO without a writer is opened at once, not waited on."""
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(self.path, flags)
        if flags != os.O_RDONLY:
            os.set_blocking(fd, True)  # a read waits again (after select says it may not)
        return fd

    def _took(self, data: bytes) -> None:
        """Keep the fingerprint of what was read: its first and its last bytes."""
        self._offset += len(data)
        if len(self._head) < _WINDOW:
            self._head += data[: _WINDOW - len(self._head)]
        self._tail = data[-_WINDOW:] if len(data) >= _WINDOW else (self._tail + data)[-_WINDOW:]

    def _rewritten(self) -> str | None:
        """Whether the file open now was truncated (then read again from its start)."""
        assert self._fd is not None
        fd, offset = self._fd, self._offset
        if os.fstat(fd).st_size >= offset:
            tail = self._tail
            if os.pread(fd, len(tail), offset - len(tail)) == tail:
                head = self._head
                if len(head) == offset or os.pread(fd, len(head), 0) == head:
                    return None  # what was read is still there: only appended to
            how = "rewritten"
        else:
            how = "truncated"
        os.lseek(fd, 0, os.SEEK_SET)
        self._restart(fd)
        return how

    def _replaced(self) -> str | None:
        """After all was read: whether another file has the name now (then opened)."""
        assert self._fd is not None
        try:
            named = os.stat(self.path)
            held = os.fstat(self._fd)
            if (named.st_ino, named.st_dev) == (held.st_ino, held.st_dev):
                return None
            fd = self._open()
        except OSError:
            return None  # deleted (or not readable now): wait for it to come back
        os.close(self._fd)
        self._regular = stat.S_ISREG(os.fstat(fd).st_mode)
        self._restart(fd)
        return "replaced"

    def _restart(self, fd: int) -> None:
        """Read ``fd`` (at its start) from now on; the bytes read before are counted."""
        self._fd = fd
        self.bytes_before, self._offset = self._offset, 0
        self._head = self._tail = b""

    def close(self) -> None:
        if self._fd is not None and self.path != "-":
            os.close(self._fd)
        self._fd = None


#: How the followed file changed, as its restart warning says it.
_HOW = {
    "truncated": "truncated",
    "rewritten": "truncated and written again (what was read is no longer there)",
    "replaced": "replaced by a new file",
}


def _say(text: str) -> None:
    sys.stderr.write(f"acp-client replay: {text}\n")
    sys.stderr.flush()


def _safe(text: str) -> str:
    from ._sanitize import sanitize_line

    return sanitize_line(text)


def follow(path: str, args: argparse.Namespace, options: dict[str, Any]) -> int:
    """Replay ``path`` (``-``: standard input) and keep applying what is appended to it.

    Ctrl-C or SIGTERM ends the run normally (so does the end of standard input): what was
    written until then is read, the final state is shown once, and the status is 0.
    """
    with _Stopper().installed() as stopper:
        return _Follower(path, args, options, stopper).run()


class _Follower:
    """One ``--follow`` run: the input, the replay and the output mode."""

    def __init__(
        self, path: str, args: argparse.Namespace, options: dict[str, Any], stopper: _Stopper
    ) -> None:
        self.args = args
        self.stopper = stopper
        self.input = _Input(path, stopper)
        self._reader_options = {
            key: options[key] for key in ("format", "strict", "perspective", "direction", "sides")
        }
        self._reader_options.update(
            (k, v) for k, v in options.items() if k.startswith("max_") and k != "max_diagnostics"
        )
        self.reader = LogReader(**self._reader_options)
        self.clock = time.monotonic
        self.changed = True  # the view is behind the state: redraw it at the next poll
        self.replayer = Replayer(
            protocol=options["protocol"],
            terminal_limit=options["terminal_limit"],
            block_limit=options.get("block_limit"),
            strict=options["strict"],
            unstable=options["unstable"],
            max_diagnostics=options.get("max_diagnostics", DEFAULT_MAX_DIAGNOSTICS),
        )
        self.stream: Any = None
        if args.events:
            from ._stream import EventStream

            self.stream = EventStream()
        self.console: Any = None
        if not args.json and not args.events:  # rich only to render
            from ._console import make_console

            self.console = make_console()

    def view(self, last_entries: int | None) -> Any:
        from ._render import snapshot_renderable
        from ._values import removed_plans

        replayer = self.replayer
        return snapshot_renderable(
            replayer.snapshot(),
            show_thoughts=not self.args.no_thoughts,
            markdown=self.args.markdown,
            last_entries=last_entries,
            failed_requests=[f.to_json() for f in replayer.failed_requests],
            truncated_terminals=replayer.truncated_terminals,
            removed_plans=removed_plans(replayer.connection.sessions),
        )

    def apply(self, items: Any) -> None:
        replayer = self.replayer
        self.changed = self.changed or bool(items)
        for item in items:
            if getattr(item, "kind", None) is None:
                replayer.diagnostics.append(item)  # the reader's
            elif self.stream is None:
                replayer.apply_record(item)  # in strict mode, stops at the first error
            else:
                self.stream.events(replayer.feed_record(item))
        if self.stream is not None:
            self.stream.diagnostics("reader", replayer.diagnostics)
            self.stream.diagnostics("connection", replayer.connection.diagnostics)

    def pump(self, refresh: Callable[[], None]) -> None:
        """Read and apply until stopped, the input ends, or strict mode stopped the replay."""
        self._last_data = self.clock()
        self._settled = True
        while not self.done and self.stopper.signal is None:
            self.step(refresh)
        while not self.done:  # stopped: what was written until now is read, then the end
            block = self.input.read(0)
            if not block:
                if self.input.restarted is None:
                    break
                self.restart()
                continue
            self.apply(self.reader.feed(block))

    def step(self, refresh: Callable[[], None]) -> None:
        """One poll: apply what was written (or start over), else redraw if anything changed."""
        block = self.input.read(_POLL_SECONDS)
        if block:
            self.apply(self.reader.feed(block))
            self._last_data = self.clock()
            self._settled = False
            return
        if self.input.restarted is not None:
            self.restart()
            return
        if not self._settled and self.clock() - self._last_data >= _SETTLE_SECONDS:
            # the log paused: a response held back for its request is shown now
            self.apply(self.reader.settle())
            self._settled = True
        if self.changed:  # idle: nothing is rebuilt
            self.changed = False
            refresh()

    def restart(self) -> None:
        """The file was truncated or replaced: end what was read, read the new start."""
        how, self.input.restarted = self.input.restarted, None
        assert how is not None
        read = self.reader.line  # the last whole line read; a line cut after it is reported
        self.replayer.diagnostics.append(  # at its own line (the next), by the reader's close
            Diagnostic(
                code="log-replaced" if how == "replaced" else "log-truncated",
                message=f"the followed file was {_HOW[how]} after line {read:,}"
                f" ({self.input.bytes_before:,} bytes read): read again from its line 1"
                " (the line numbers after this count from there; the state carries on)",
                line=read or None,
            )
        )
        self.apply(self.reader.close())
        self.changed = True
        self.reader = LogReader(**self._reader_options)
        self._settled = True

    @property
    def done(self) -> bool:
        return self.reader.done or self.replayer.stopped or self.input.ended

    def run(self) -> int:
        args, live_on = self.args, self.console is not None and self.console.is_terminal
        if self.stream is not None:
            self.stream.start(source=self.input.path, command="replay --follow")
        try:
            opened = self.input.open()
        except OSError as exc:
            reason = _safe(str(exc.strerror or exc))
            _say(f"cannot read {_safe(self.input.path)}: {reason}")
            return EXIT_UNREADABLE
        if not opened:
            pass  # stopped while waiting for the file: the final (empty) state below
        elif live_on:
            from rich.live import Live

            # transient: the live frame is wiped at the end, the final state drawn once below
            live = Live(self.view(40), console=self.console, auto_refresh=False, transient=True)
            with live:
                self.pump(lambda: live.update(self.view(40), refresh=True))
        else:
            _say(f"following {_safe(self.input.path)} (Ctrl-C or SIGTERM to stop)")
            self.pump(lambda: None)
        self.input.close()
        self.apply(self.reader.close())
        finished = self.replayer.finish()
        if self.stream is not None:
            self.stream.events(finished)
            self.apply(())  # the diagnostics the end raised
        status = self.status()
        snapshot = with_failed_requests(self.replayer.snapshot(), self.replayer.failed_requests)
        if self.stream is not None:
            self.stream.end(snapshot, status=status, stoppedBy=self.stopped_by())
        elif args.json:
            write_json(snapshot, sys.stdout, indent=2)
        else:
            self.console.print(self.view(None))
        return status

    def stopped_by(self) -> str | None:
        """``"SIGINT"`` or ``"SIGTERM"`` when a signal ended the run, else ``None``."""
        signum = self.stopper.signal
        return None if signum is None else signal.Signals(signum).name

    def status(self) -> int:
        if self.reader.fatal:
            return EXIT_UNREADABLE
        if self.reader.stopped_early or self.replayer.stopped:
            return EXIT_STRICT
        return EXIT_OK
