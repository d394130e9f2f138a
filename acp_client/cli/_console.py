"""The rich console of the command line, on a terminal and piped.

On a terminal the console is rich's own: as wide as the terminal, redrawn in place. Piped
(a file, ``tee``, an editor's output pane, CI logs), lines are not wrapped at a guessed width
and carry no trailing spaces: the console is :data:`PIPED_WIDTH` columns wide, every line is
written without the spaces rich pads it with, and a rule (a section's title line) is at most
:data:`PIPED_RULE` columns.
"""

from __future__ import annotations

import sys
from typing import IO, Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.rule import Rule

__all__ = ["PIPED_RULE", "PIPED_WIDTH", "CappedRule", "make_console"]

#: Columns of a piped console: wide enough that no line of a conversation is wrapped.
PIPED_WIDTH = 100_000
#: Columns of a rule on a piped console.
PIPED_RULE = 80


class CappedRule(Rule):
    """A rule as wide as the terminal, or :data:`PIPED_RULE` columns when piped."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not console.is_terminal and options.max_width > PIPED_RULE:
            options = options.update_width(PIPED_RULE)
        yield from super().__rich_console__(console, options)


class _TrimmedLines:
    """A text stream writing each complete line to ``out`` without its trailing spaces."""

    def __init__(self, out: IO[str]) -> None:
        self._out = out
        self._tail = ""  # the line being written, until its newline
        self.encoding = getattr(out, "encoding", None) or "utf-8"

    def write(self, text: str) -> int:
        lines = (self._tail + text).split("\n")
        self._tail = lines.pop()
        if lines:
            self._out.write("".join(line.rstrip(" ") + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self._tail:  # a line without its newline (rich ends each print with one)
            self._out.write(self._tail)
            self._tail = ""
        self._out.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._out.fileno()


def make_console(out: IO[str] | None = None) -> Any:
    """The console writing to ``out`` (standard output): rich's on a terminal, trimmed piped."""
    stream = sys.stdout if out is None else out
    common: dict[str, Any] = {"markup": False, "highlight": False, "emoji": False}
    if stream.isatty():
        return Console(file=out, **common)
    trimmed: Any = _TrimmedLines(stream)  # a text stream as far as rich is concerned
    return Console(file=trimmed, width=PIPED_WIDTH, **common)
