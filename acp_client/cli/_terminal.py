r"""Render an agent-owned terminal's output bytes as a terminal would show them (spec 8.4).

The stored output (base64 in the snapshot) is decoded as UTF-8 (invalid bytes become U+FFFD)
and fed to an isolated ``pyte`` emulator at the terminal's ``size`` when known, else at
:data:`DEFAULT_COLS` columns and as many rows as lines are kept. Carriage returns, cursor
movement, erasing and SGR colours are interpreted by the emulator; lines that scroll off the
top are kept as scrollback. The resulting cells become ``rich.text.Text`` lines with the
colours and attributes of the cells, so no escape sequence from the output ever reaches the
console: OSC strings (titles, hyperlinks, clipboard writes) are consumed by the emulator,
stray controls are dropped, and bidi or other invisible format characters are drawn as
visible ``<U+XXXX>`` escapes (which can shift that line's columns). A line feed also returns
the carriage (new-line mode, as a pty's ``onlcr`` would), because agents often capture output
through pipes that send bare ``\n``.

Emulating is the expensive part, so emulators are cached per terminal (key: terminal id and
geometry) and fed only the bytes appended since the previous call, which keeps repeated
rendering of a growing terminal (the live view) cheap. A cached emulator is reused only when
the bytes it was fed are still the start of the output (or of the part of it still retained,
using ``truncatedBytes``); otherwise it is rebuilt. A fresh emulator gets only the output
from a line start near its last :data:`MAX_EMULATED_BYTES`.

Emulating has a time budget per render, shared by all the terminals of that render (one
:class:`EmulationBudget` of :data:`EMULATION_BUDGET` seconds: a few bytes can make a terminal
redraw its whole screen, and twenty such terminals must not stall ``run`` twenty times as
long). Once it is spent, a terminal that used at least half of it itself stops for good (it
is the expensive one); the others are only *behind*: their new bytes wait for the next render
(a live view catches up, a single render says how many bytes it did not emulate). An emulator
also stops for good once pyte failed on an input. Bytes not emulated are counted in
``unemulated_bytes``. The cache is not thread-safe.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import dataclasses
import re
import time
import unicodedata
from collections import OrderedDict, deque
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pyte
from pyte.screens import Char
from rich.color import Color
from rich.style import Style
from rich.text import Span, Text
from wcwidth import wcwidth

from ._sanitize import sanitize_text

__all__ = [
    "DEFAULT_COLS",
    "EMULATION_BUDGET",
    "EmulationBudget",
    "MAX_EMULATED_BYTES",
    "TerminalView",
    "clear_terminal_cache",
    "render_terminal_bytes",
    "terminal_view",
]

DEFAULT_COLS = 120
"""Columns used when the terminal's ``size`` is unknown."""

MAX_EMULATED_BYTES = 1 << 18
"""At most this many bytes from the end of an output are emulated on a fresh render."""

EMULATION_BUDGET = 2.0
"""Seconds one render may spend emulating new terminal bytes, all its terminals together."""

_FEED_SLICE = 4096  # bytes fed between two looks at the clock
_clock = time.monotonic  # the emulation budget's clock (tests put a fake one here)
_MAX_COLS = 1000
_MAX_ROWS = 1000
_CACHE_SIZE = 64

_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class TerminalView:
    """The rendered output of one terminal.

    Attributes:
        lines: the last lines of the screen (scrollback first), trailing blank lines removed.
        hidden_lines: lines that were emulated but are not in ``lines`` (over the limit).
        skipped_bytes: bytes at the start of the retained output that were not emulated.
        cols: emulator width in columns.
        rows: emulator height in rows.
        invalid_base64: the stored output was not valid base64 (``lines`` is empty).
        unemulated_bytes: bytes at the end that were not emulated (the emulator stopped:
            over :data:`EMULATION_BUDGET`, or an input it could not handle; or, with
            ``behind``, the render's budget was spent by other terminals).
        behind: the emulator did not stop: a later render emulates those bytes.
    """

    lines: tuple[Text, ...]
    hidden_lines: int
    skipped_bytes: int
    cols: int
    rows: int
    invalid_base64: bool = False
    unemulated_bytes: int = 0
    behind: bool = False

    def text(self) -> Text:
        """All lines joined with newlines, as a new ``Text`` the caller may modify."""
        return Text("\n").join(self.lines)


@lru_cache(maxsize=4096)
def _undrawable(ch: str) -> bool:
    """True for characters pyte's ``draw`` would stop at (zero-width, not combining)."""
    width = wcwidth(ch)
    return width < 0 or (width == 0 and not unicodedata.combining(ch))


class _Screen(pyte.Screen):
    """A pyte screen that keeps the lines scrolled off its top and never stops drawing."""

    def __init__(self, columns: int, lines: int, keep: int) -> None:
        self.scrollback: deque[Any] = deque(maxlen=keep)
        self.scrolled = 0
        super().__init__(columns, lines)
        self.set_mode(pyte.modes.LNM)

    def index(self) -> None:
        """Move down one line, saving the top line when the whole screen scrolls."""
        margins = self.margins
        top, bottom = (0, self.lines - 1) if margins is None else margins
        if self.cursor.y == bottom and top == 0:
            self.scrollback.append(self.buffer[top])
            self.scrolled += 1
        super().index()

    def draw(self, data: str) -> None:
        """Draw text after neutralizing characters pyte cannot place.

        Bidi and other invisible format characters become visible ``<U+XXXX>`` escapes; stray
        controls (which a terminal ignores) and other zero-width characters are dropped,
        because pyte would otherwise silently discard the rest of ``data``.
        """
        if _CONTROLS.search(data) is not None:
            data = _CONTROLS.sub("", data)
        if not data.isascii():
            data = "".join(ch for ch in sanitize_text(data) if ch.isascii() or not _undrawable(ch))
        super().draw(data)

    def reset(self) -> None:
        """Reset the terminal (RIS), keeping line feeds as new lines."""
        super().reset()
        self.set_mode(pyte.modes.LNM)

    def write_process_input(self, data: str) -> None:
        """Replies to the program (device reports) go nowhere: the terminal is display-only."""

    def report_device_status(self, mode: int) -> None:
        """Nothing to report to (display-only); pyte's report fails in origin mode."""

    def cursor_to_line(self, line: int | None = None) -> None:
        """Move to a line; origin mode without a scroll region counts from the top.

        (pyte asserts a region there; a terminal takes the whole screen.)
        """
        if self.margins is None and pyte.modes.DECOM in self.mode:
            self.cursor.y = (line or 1) - 1
            self.ensure_vbounds()
            return
        super().cursor_to_line(line)

    def alignment_display(self) -> None:
        """DECALN's test pattern (every cell an ``E``) is not drawn.

        Three bytes would rewrite up to a million cells: a pattern for aligning a CRT is
        not worth the agent stalling the view.
        """


class EmulationBudget:
    """The emulation time of one render, shared by all its terminals.

    Made when the render starts; ``seconds`` defaults to :data:`EMULATION_BUDGET` (read then,
    so tests may change it). The first slice of the render is always emulated, so every render
    makes progress.
    """

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = EMULATION_BUDGET if seconds is None else seconds
        self.deadline = _clock() + self.seconds
        self._first = True

    def spent(self) -> bool:
        """Whether the render's emulation time is over (never before its first slice)."""
        if self._first:
            self._first = False
            return False
        return _clock() > self.deadline


class _Emulator:
    """One screen, its stream and UTF-8 decoder, and the bytes fed so far."""

    def __init__(
        self, cols: int, rows: int, keep: int, start: int, data: bytes, budget: EmulationBudget
    ) -> None:
        self.screen = _Screen(cols, rows, keep)
        self.stream = pyte.Stream(self.screen)
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.start = start  # absolute offset of the first byte emulated
        self.fed_from = start  # absolute offset of ``fed[0]``
        self.fed = bytearray()  # bytes fed, those before the retained output dropped
        self.view: TerminalView | None = None
        self.stopped_at: int | None = None  # absolute offset where emulating stopped
        self.done_at = start  # absolute offset just after the last byte emulated
        self.feed(data, budget)

    @property
    def fed_end(self) -> int:
        """Absolute offset just after the last byte fed."""
        return self.fed_from + len(self.fed)

    def continues(self, data: bytes, offset: int) -> bool:
        """Whether ``data`` (at absolute ``offset``) starts with what is left of ``fed``.

        Not when a retention limit dropped bytes this emulator was still behind on.
        """
        fed_end = self.fed_end
        if not (self.fed_from <= offset <= fed_end <= offset + len(data)):
            return False
        if self.stopped_at is None and offset > self.done_at:
            return False
        return data[: fed_end - offset] == self.fed[offset - self.fed_from :]

    def advance(self, data: bytes, offset: int, budget: EmulationBudget) -> None:
        """Feed the part of ``data`` past what was fed; forget bytes before ``offset``."""
        if offset > self.fed_from:
            del self.fed[: offset - self.fed_from]
            self.fed_from = offset
        self.feed(data[self.fed_end - offset :], budget)

    def feed(self, data: bytes, budget: EmulationBudget) -> None:
        """Keep ``data`` and emulate what is not emulated yet, within ``budget``.

        Nothing once the emulator stopped. When the render's budget is spent, the emulator
        stops for good if it used half of the budget itself this time (``stopped_at`` says
        from which byte), else it stays behind until a later render; when pyte fails on an
        input it stops for good too.
        """
        if data:
            self.fed += data
            self.view = None
        if self.stopped_at is not None or self.done_at == self.fed_end:
            return
        self.view = None
        clock = _clock
        start = clock()
        pending = memoryview(self.fed)[self.done_at - self.fed_from :]
        done = 0
        try:
            while done < len(pending) and not budget.spent():
                piece = bytes(pending[done : done + _FEED_SLICE])
                self.stream.feed(self.decoder.decode(piece))
                done += len(piece)
                self.done_at += len(piece)
        except Exception:  # pyte failed on an input: show what it drew before that piece
            self.stopped_at = self.done_at
        finally:
            pending.release()
        if self.done_at < self.fed_end and clock() - start >= budget.seconds / 2:
            self.stopped_at = self.done_at  # this terminal is the expensive one


_cache: OrderedDict[Hashable, _Emulator] = OrderedDict()


def clear_terminal_cache() -> None:
    """Forget every cached emulator."""
    _cache.clear()


_NAMED = {
    "black": "black",
    "red": "red",
    "green": "green",
    "brown": "yellow",
    "yellow": "yellow",
    "blue": "blue",
    "magenta": "magenta",
    "cyan": "cyan",
    "white": "white",
}
_HEX = re.compile(r"[0-9a-fA-F]{6}")


@lru_cache(maxsize=1024)
def _color(name: str) -> Color | None:
    if name == "default":
        return None
    if _HEX.fullmatch(name):
        return Color.parse("#" + name.lower())
    bright = name.startswith(("bright", "bfight"))
    base = _NAMED.get(name[6:] if bright else name)
    if base is None:
        return None
    return Color.parse(("bright_" if bright else "") + base)


@lru_cache(maxsize=1024)
def _style(
    fg: str,
    bg: str,
    bold: bool,
    italics: bool,
    underscore: bool,
    strikethrough: bool,
    reverse: bool,
    blink: bool,
) -> Style | None:
    if (fg, bg) == ("default", "default") and not (
        bold or italics or underscore or strikethrough or reverse or blink
    ):
        return None
    return Style(
        color=_color(fg),
        bgcolor=_color(bg),
        bold=bold or None,
        italic=italics or None,
        underline=underscore or None,
        strike=strikethrough or None,
        reverse=reverse or None,
        blink=blink or None,
    )


def _blank(cell: Char) -> bool:
    return cell.data in (" ", "") and cell.bg == "default" and not cell.reverse


def _line_text(row: Mapping[int, Char]) -> Text | None:
    """Convert one screen row to ``Text``; ``None`` when the row is blank."""
    if not row:
        return None
    last = -1
    for x, cell in row.items():
        if x > last and not _blank(cell):
            last = x
    if last < 0:
        return None
    parts: list[str] = []
    spans: list[Span] = []
    pos = 0
    run_start = 0
    run_style: Style | None = None
    default = Char(" ")
    for x in range(last + 1):
        cell = row.get(x, default)
        data = cell.data
        if not data:
            continue  # the stub after a wide character
        style = _style(*cell[1:])
        if style is not run_style:
            if run_style is not None and pos > run_start:
                spans.append(Span(run_start, pos, run_style))
            run_start, run_style = pos, style
        parts.append(data)
        pos += len(data)
    if run_style is not None and pos > run_start:
        spans.append(Span(run_start, pos, run_style))
    plain = sanitize_text("".join(parts))
    if len(plain) != pos:  # defence in depth; cannot happen after ``_Screen.draw``
        return Text(plain)
    return Text(plain, spans=spans)


def _build_view(emulator: _Emulator, max_lines: int) -> TerminalView:
    screen = emulator.screen
    buffer = screen.buffer
    used = [y for y, row in buffer.items() if row]
    rows: list[Any] = list(emulator.screen.scrollback)
    if used:
        rows.extend(buffer.get(y, {}) for y in range(max(used) + 1))
    lines: list[Text | None] = [_line_text(row) for row in rows[-max_lines:]] if rows else []
    while lines and lines[-1] is None:
        lines.pop()
    total = screen.scrolled + (max(used) + 1 if used else 0)
    shown = tuple(line if line is not None else Text() for line in lines)
    hidden = max(0, total - min(len(rows), max_lines))
    stopped = emulator.stopped_at
    behind = stopped is None and emulator.done_at < emulator.fed_end
    return TerminalView(
        lines=shown,
        hidden_lines=hidden,
        skipped_bytes=emulator.start,
        cols=screen.columns,
        rows=screen.lines,
        unemulated_bytes=max(
            0, emulator.fed_end - (emulator.done_at if stopped is None else stopped)
        ),
        behind=behind,
    )


def _geometry(size: object, max_lines: int) -> tuple[int, int]:
    cols = rows = None
    if isinstance(size, Mapping):
        c, r = size.get("cols"), size.get("rows")
        if isinstance(c, int) and not isinstance(c, bool) and c >= 1:
            cols = min(c, _MAX_COLS)
        if isinstance(r, int) and not isinstance(r, bool) and r >= 1:
            rows = min(r, _MAX_ROWS)
    if cols is None or rows is None:
        return DEFAULT_COLS, max(1, min(max_lines, _MAX_ROWS))
    return cols, rows


def _fresh_start(data: bytes) -> int:
    """Offset from which a fresh emulator starts: all of it, or a line start near the end."""
    if len(data) <= MAX_EMULATED_BYTES:
        return 0
    cut = len(data) - MAX_EMULATED_BYTES
    newline = data.find(b"\n", cut)
    return cut if newline < 0 else newline + 1


def render_terminal_bytes(
    data: bytes,
    *,
    size: Mapping[str, object] | None = None,
    max_lines: int = 200,
    offset: int = 0,
    cache_key: Hashable | None = None,
    budget: EmulationBudget | None = None,
) -> TerminalView:
    """Emulate ``data`` and return its last ``max_lines`` screen lines.

    ``size`` is the terminal's ``{"cols", "rows"}`` (unknown when ``None`` or malformed).
    ``offset`` is the absolute position of ``data[0]`` in the terminal's byte stream (the
    snapshot's ``truncatedBytes``): with ``cache_key``, a cached emulator fed from an earlier,
    shorter version of the same stream is continued instead of rebuilt. ``budget`` is the
    render's emulation time, shared with its other terminals (a new one when ``None``).
    """
    budget = EmulationBudget() if budget is None else budget
    max_lines = max(1, max_lines)
    cols, rows = _geometry(size, max_lines)
    key = None if cache_key is None else (cache_key, cols, rows, max_lines)
    emulator = None if key is None else _cache.get(key)
    if emulator is not None and key is not None and emulator.continues(data, offset):
        emulator.advance(data, offset, budget)
        _cache.move_to_end(key)
    else:
        emulator = None
    if emulator is None:
        start = _fresh_start(data)
        emulator = _Emulator(cols, rows, max_lines, offset + start, data[start:], budget)
        if key is not None:
            _cache[key] = emulator
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
    if emulator.view is None:
        emulator.view = _build_view(emulator, max_lines)
    # ``skipped_bytes`` counts from the start of ``data``, not from the stream's origin.
    view = emulator.view
    skipped = max(0, emulator.start - offset)
    if skipped != view.skipped_bytes:
        view = dataclasses.replace(view, skipped_bytes=skipped)
    return view


def terminal_view(
    terminal: Mapping[str, object],
    *,
    max_lines: int = 200,
    cache_key: Hashable | None = None,
    budget: EmulationBudget | None = None,
) -> TerminalView:
    """Render a TERMINAL object of the snapshot (``output`` base64, ``size``, ``truncatedBytes``).

    Invalid base64 yields an empty view with ``invalid_base64`` set.
    """
    output = terminal.get("output")
    raw = output if isinstance(output, str) else ""
    try:
        data = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        cols, rows = _geometry(terminal.get("size"), max(1, max_lines))
        return TerminalView((), 0, 0, cols, rows, invalid_base64=True)
    truncated = terminal.get("truncatedBytes")
    offset = truncated if isinstance(truncated, int) and truncated > 0 else 0
    size = terminal.get("size")
    return render_terminal_bytes(
        data,
        size=size if isinstance(size, Mapping) else None,
        max_lines=max_lines,
        offset=offset,
        cache_key=cache_key,
        budget=budget,
    )
