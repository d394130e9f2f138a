"""The live view of ``acp-client run``: redrawn in place, paused while a question is asked."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from typing import Any

__all__ = ["LiveView", "detach_dead_terminal"]


def detach_dead_terminal(fd: int) -> None:
    """Point ``fd`` (1: stdout, 2: stderr) at the null device: writing to it failed.

    A closed terminal, say. Without this, Python's own flush at exit fails too and turns the
    exit status into 120. Only that one is detached: the other may be a file or a pipe.
    """
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    with contextlib.suppress(OSError):
        os.dup2(null, fd)
    os.close(null)


class LiveView:
    """A rich ``Live`` showing ``render()``, cropped to the terminal's height.

    :meth:`stop` draws ``last()`` (by default ``render()``) as the final frame, whole: the
    live frames may show only the end of a long conversation, the last one shows it all.
    A question pauses it: its last frame stays above the question, and a new ``Live``
    starts below the answer (a restarted one would draw uncropped, or over the question).
    A write that fails (the terminal went away) turns the view off for good.
    """

    #: Seconds between redraws at least, and at most this share of the time spent drawing.
    PERIOD = 0.2
    SHARE = 0.25

    def __init__(
        self,
        console: Any,
        render: Callable[[], Any],
        clock: Callable[[], float] = time.monotonic,
        last: Callable[[], Any] | None = None,
    ) -> None:
        self._console = console
        self._render = render
        self._last = render if last is None else last
        self._clock = clock
        self._cost = 0.0  # seconds the last redraw took
        self._live: Any = None  # the rich Live on screen, if any
        self._paused = 0  # questions being asked (or waiting to be)
        self._on = False  # wanted on screen (between start() and stop())
        self.failed = False  # a write to the terminal failed

    def start(self) -> None:
        """Put the view on screen."""
        self._on = True
        self._show()

    def refresh(self) -> None:
        """Redraw with the current state (nothing while paused or stopped)."""
        if self._live is not None:
            started = self._clock()
            live = self._live
            self._guard(live, lambda: live.update(self._render(), refresh=True))
            self._cost = self._clock() - started

    @property
    def interval(self) -> float:
        """Seconds to wait before the next :meth:`refresh`.

        :attr:`PERIOD`, or longer when drawing a big session takes long: redrawing never
        takes more than :attr:`SHARE` of the time (the agent's traffic keeps the rest).
        """
        return max(self.PERIOD, self._cost / self.SHARE)

    def pause(self) -> None:
        """Leave the last frame above what comes next (a question); nest as questions do."""
        self._paused += 1
        if self._paused == 1:
            self._hide()

    def resume(self) -> None:
        """End one :meth:`pause`; after the last one the view comes back below."""
        self._paused -= 1
        if self._paused == 0 and self._on:
            self._show()

    def stop(self) -> None:
        """Leave the last state on screen, whole (also when paused: it is printed then)."""
        self._on = False
        if self._live is None and not self.failed:
            self._show()
        self._hide(self._last)

    def _show(self) -> None:
        from rich.live import Live

        if self._live is not None or self.failed:
            return
        live = Live(self._render(), console=self._console, auto_refresh=False)
        self._live = live
        self._guard(live, lambda: live.start(refresh=True))

    def _hide(self, render: Callable[[], Any] | None = None) -> None:
        live, self._live = self._live, None
        if live is None:
            return
        frame = self._render if render is None else render

        def last_frame() -> None:
            live.update(frame(), refresh=True)
            live.stop()  # the last frame drawn whole (rich: vertical overflow visible)

        self._guard(live, last_frame)

    def _guard(self, live: Any, draw: Callable[[], None]) -> None:
        """Run ``draw`` on ``live``; if the terminal is gone, stop drawing for good."""
        try:
            draw()
        except OSError:
            self.failed = True
            self._live = None
            detach_dead_terminal(1)  # the view draws on stdout
            with contextlib.suppress(Exception):  # give stdout and stderr back (rich took them)
                live.stop()
