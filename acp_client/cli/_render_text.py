"""The renderer's building blocks: safe lines, gutters, indentation and bulk text.

Owns: how an agent-supplied string becomes a rich renderable without ever being parsed as
markup (``_line``, ``_lines`` behind a ``│`` gutter), long text in linear time
(:func:`plain_text`), Markdown without hyperlinks whose parsed text is sanitized again
(:func:`_safe_markdown`), and the display form of snapshot values (``_s``).
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.markdown import Markdown
from rich.measure import Measurement
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from ._sanitize import clip_middle, sanitize_json, sanitize_line, sanitize_text

_PIECE_LINES = 64
_LINE_CHARS = 400  # with text_lines: characters kept per kept line, at most
_PIECE_CHARS = 16_384
_PART_CHARS = 10_000  # one part of a one-line header (a title, a command), at most


def plain_text(text: str, style: str = "") -> RenderableType:
    """Text as rich renders it in linear time: pieces of a few lines each.

    One ``Text`` of megabytes makes rich split its lines in quadratic time; pieces of at
    most :data:`_PIECE_LINES` lines and :data:`_PIECE_CHARS` characters render the same
    lines (a line longer than that is cut where a piece ends).
    """
    if len(text) <= _PIECE_CHARS:
        return Text(text, style=style)
    pieces: list[RenderableType] = []
    held: list[str] = []
    size = 0
    for line in text.split("\n"):
        if len(line) > _PIECE_CHARS:
            if held:
                pieces.append(Text("\n".join(held), style=style))
                held, size = [], 0
            # by index: cutting the head off the rest each time would copy it again and again
            last = len(line) - (len(line) - 1) % _PIECE_CHARS - 1
            for start in range(0, last, _PIECE_CHARS):
                pieces.append(Text(line[start : start + _PIECE_CHARS], style=style))
            line = line[last:]
        if len(held) == _PIECE_LINES or size + len(line) > _PIECE_CHARS:
            pieces.append(Text("\n".join(held), style=style))
            held, size = [], 0
        held.append(line)
        size += len(line) + 1
    pieces.append(Text("\n".join(held), style=style))
    return Group(*pieces)


def _s(value: object) -> str:
    """Display form of any snapshot value: sanitized text, or compact JSON for non-strings."""
    if isinstance(value, str):
        return sanitize_text(value)
    if value is None:
        return ""
    return sanitize_json(value)


class _Lines(str):
    """A :func:`_lines` part that may span lines (a message, a description)."""

    __slots__ = ()


def _line(*parts: str | tuple[str, str]) -> Text:
    r"""One line from plain parts or ``(text, style)`` pairs; every part is sanitized.

    A newline or tab in a part is shown as ``\n`` / ``\t``: agent text in a header (a
    title, an id, a plan entry) cannot draw lines of its own.
    """
    text = Text()
    for part in parts:
        if isinstance(part, tuple):
            text.append(sanitize_line(part[0], limit=_PART_CHARS), style=part[1])
        else:
            text.append(sanitize_line(part, limit=_PART_CHARS))
    return text


def _lines(*parts: str | tuple[str, str]) -> RenderableType:
    """:func:`_line`, but a :class:`_Lines` part keeps its lines (the middle of a huge one cut).

    Every row after the first, wrapped ones included, is drawn behind a ``│`` gutter, so no
    line of the agent's text can pass for a line of the view.
    """
    text = Text()
    for part in parts:
        if isinstance(part, _Lines):
            head, hidden, tail = clip_middle(part)
            text.append(sanitize_text(head))
            if hidden:
                text.append(f" … {hidden:,} more characters not shown … ", style="dim")
                text.append(sanitize_text(tail))
        elif isinstance(part, tuple):
            text.append(sanitize_line(part[0], limit=_PART_CHARS), style=part[1])
        else:
            text.append(sanitize_line(part, limit=_PART_CHARS))
    return _Gutter(text)


class _Gutter:
    """Text whose rows after the first (wrapped ones too) are drawn behind a dim ``│``."""

    GUTTER = "  │ "

    def __init__(self, text: Text) -> None:
        self.text = text

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        measured = Measurement.get(console, options, self.text)
        extra = len(self.GUTTER)  # the rows are laid out that much narrower
        wide = Measurement(measured.minimum + extra, measured.maximum + extra)
        return wide.clamp(max_width=options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(options.max_width - len(self.GUTTER), 1)
        gutter = Segment(self.GUTTER, Style(dim=True))
        rows = console.render_lines(self.text, options.update_width(width), pad=False)
        for index, row in enumerate(rows):
            if index:
                yield gutter
            yield from row
            yield Segment.line()


def _indent(renderable: RenderableType, level: int = 1) -> Padding:
    return Padding(renderable, (0, 0, 0, 2 * level), expand=False)


def _nbytes(b64: object) -> str:
    if not isinstance(b64, str):
        return "?"
    size = len(b64) * 3 // 4 - b64[-2:].count("=")
    return f"{size:,} bytes"


def _safe_markdown(text: str, style: str) -> Markdown:
    """Markdown whose parsed text is sanitized too.

    ``text`` is sanitized already, but the parser decodes character references after that
    (``&#x202E;``, ``&rlm;``), so every text it produced is sanitized again.
    """
    md = Markdown(text, style=style, hyperlinks=False)
    tokens = list(md.parsed)
    while tokens:
        token = tokens.pop()
        if token.content:
            token.content = sanitize_text(token.content)
        if token.info:
            token.info = sanitize_line(token.info)
        if token.attrs:
            token.attrs = {
                key: sanitize_line(value) if isinstance(value, str) else value
                for key, value in token.attrs.items()
            }
        if token.children:
            tokens.extend(token.children)
    return md
