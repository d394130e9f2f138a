"""The live view of `acp-client run`: cropped to the terminal, paused for questions."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from rich.text import Text

from acp_client.cli._live import LiveView

CURSOR_UP = re.compile(r"\x1b\[\d*A")


def _console(height: int = 6) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=40, height=height, color_system=None)
    return console, out


def _tall(lines: int) -> Text:
    return Text("\n".join(f"line {i}" for i in range(lines)))


def test_a_view_back_after_a_question_is_still_cropped_and_leaves_the_question() -> None:
    console, out = _console()
    view = LiveView(console, lambda: _tall(50))
    view.start()
    view.refresh()
    view.pause()
    console.file.write("QUESTION?\n")  # what the question wrote
    view.resume()
    after = out.getvalue().split("QUESTION?\n", 1)[1]
    # The new frame starts below the question (nothing moves up over it) ...
    assert not CURSOR_UP.search(after.split("line 0")[0])
    view.refresh()
    # ... and, like the first one, fits the terminal: 6 rows, the last an ellipsis.
    frames = out.getvalue().split("QUESTION?\n", 1)[1]
    assert "line 40" not in frames and "line 4" in frames
    view.stop()
    assert "line 49" in out.getvalue()  # the last state is left whole


def test_a_view_stopped_while_a_question_is_asked_still_shows_the_last_state() -> None:
    console, out = _console()
    state = ["first"]
    view = LiveView(console, lambda: Text(state[0]))
    view.start()
    view.pause()
    state[0] = "last"
    view.stop()
    assert "last" in out.getvalue()


class _Gone(io.StringIO):
    def write(self, text: str) -> int:
        raise OSError(5, "Input/output error")


def test_a_terminal_that_went_away_turns_the_view_off(monkeypatch: pytest.MonkeyPatch) -> None:
    console = Console(file=_Gone(), force_terminal=True, width=40, height=6)
    view = LiveView(console, lambda: Text("x"))
    import acp_client.cli._live as live_module

    detached: list[int] = []
    monkeypatch.setattr(live_module, "detach_dead_terminal", detached.append)
    view.start()
    view.refresh()
    view.stop()
    assert view.failed and detached == [1]  # stdout only: stderr may be a file
    assert console._live_stack == []  # rich gave stdout and stderr back


def test_a_slow_redraw_makes_the_next_one_wait_longer() -> None:
    # The live view redraws the whole visible state; on a big session that costs, so the
    # pause grows with it and drawing never takes more than a quarter of the time.
    console, _ = _console()
    now = [0.0]
    cost = [0.01]

    def render() -> Text:
        now[0] += cost[0]
        return Text("x")

    view = LiveView(console, render, clock=lambda: now[0])
    view.start()
    view.refresh()
    assert view.interval == LiveView.PERIOD
    cost[0] = 0.5
    view.refresh()
    assert view.interval == 0.5 / LiveView.SHARE
    view.stop()


def test_the_last_frame_is_the_whole_view_though_live_frames_show_the_end() -> None:
    # `run` draws its live frames from the last 30 entries; the frame left on screen when it
    # ends is the whole conversation, as the README says (it used to be cropped silently).
    console, out = _console()
    view = LiveView(console, lambda: _tall(50), last=lambda: Text("WHOLE\n") + _tall(80))
    view.start()
    view.refresh()
    assert "WHOLE" not in out.getvalue()
    view.stop()
    shown = out.getvalue()
    assert "WHOLE" in shown and "line 79" in shown
