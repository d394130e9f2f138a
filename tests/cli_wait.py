"""Waits on real conditions for the command-line tests: output seen, never a guessed sleep."""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import time
from collections.abc import Iterator
from typing import IO, Any

#: A bound against a hung command, not a guess of how long anything takes.
DEADLINE_SECONDS = 60.0


def read_until(stream: IO[bytes] | int, marker: bytes, deadline: float = DEADLINE_SECONDS) -> bytes:
    """Read ``stream`` (a pipe, a pty: a file or a descriptor) until ``marker`` was seen.

    Returns everything read. Fails if the stream ends or ``deadline`` seconds pass first.
    """
    fd = stream if isinstance(stream, int) else stream.fileno()
    seen = b""
    end = time.monotonic() + deadline
    while marker not in seen:
        left = end - time.monotonic()
        assert left > 0, f"{marker!r} not seen in time; got {seen[-2000:]!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:  # a pty whose other side closed
            data = b""
        assert data, f"the output ended before {marker!r}; got {seen[-2000:]!r}"
        seen += data
    return seen


def read_all(fd: int, deadline: float = DEADLINE_SECONDS) -> bytes:
    """Read the descriptor ``fd`` (a pipe or a pty) until it ends (EOF or EIO)."""
    seen = b""
    end = time.monotonic() + deadline
    while True:
        left = end - time.monotonic()
        assert left > 0, "the output did not end in time"
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the pty's other side closed
            return seen
        if not data:
            return seen
        seen += data


@contextlib.contextmanager
def started(args: list[str], **popen: Any) -> Iterator[subprocess.Popen[bytes]]:
    """A command started with ``subprocess.Popen``, killed if still running at the end."""
    with subprocess.Popen(args, **popen) as proc:
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
