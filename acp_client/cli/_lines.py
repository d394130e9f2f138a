"""The lines of ``acp-client run``'s two outputs: a message never shares a line with the view.

``run`` writes the conversation to standard output (the live view, the final render,
``--json``, ``--events``) and what happened to standard error; both often end up in one
place: a terminal, or ``2>&1`` into a file, a pipe, an editor's output pane. :func:`say`
writes a message on lines of its own: standard output is flushed first (a shared pipe keeps
the order), the message starts with a newline when the line before it is still open there
(standard output's last line not ended, on the same file, pipe or terminal; or a permission
question waiting for its answer on the terminal, :func:`asking`), and it always ends with a
newline. :func:`tracking_stdout` puts the watch on standard output while ``run`` runs.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import IO, Any, cast

__all__ = ["asking", "say", "tracking_stdout"]

_question = [False]  # a permission question waits for its answer on the terminal


class _LineEnd:
    """Standard output, remembering whether its last line is ended (all else passed on)."""

    def __init__(self, inner: IO[str]) -> None:
        self.inner = inner
        self.open = False  # the last write did not end its line

    def write(self, text: str) -> int:
        """Write ``text``; a write that fails leaves the line counted as open."""
        if text:
            self.open = True
            written = self.inner.write(text)
            self.open = text[-1] != "\n"
            return written
        return self.inner.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@contextlib.contextmanager
def tracking_stdout() -> Iterator[None]:
    """While the body runs, :func:`say` knows whether standard output's line is ended."""
    tracked = _LineEnd(sys.stdout)
    sys.stdout = cast(Any, tracked)
    try:
        yield
    finally:
        if sys.stdout is cast(Any, tracked):
            sys.stdout = tracked.inner


@contextlib.contextmanager
def asking() -> Iterator[None]:
    """While the body runs, a question waits for its answer on the terminal (its line open)."""
    _question[0] = True
    try:
        yield
    finally:
        _question[0] = False


def _same_place(out: _LineEnd, err: Any) -> bool:
    """Whether standard output and standard error go to one file, pipe or terminal."""
    try:
        a, b = os.fstat(out.inner.fileno()), os.fstat(err.fileno())
    except (OSError, ValueError, AttributeError):  # not files (a test's buffer): the same one?
        return out.inner is err
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def say(text: str) -> None:
    """Write ``text`` to standard error starting and ending a line of its own."""
    out, err = sys.stdout, sys.stderr
    if not text.endswith("\n"):
        text += "\n"
    if getattr(err, "rich_proxied_file", None) is None:  # (the live view prints it above)
        with contextlib.suppress(OSError, ValueError):
            out.flush()
        if isinstance(out, _LineEnd) and out.open and _same_place(out, err):
            text = "\n" + text
            out.open = False
        elif _question[0] and err.isatty():
            text = "\n" + text
            _question[0] = False  # its line is ended now
    err.write(text)
    err.flush()
