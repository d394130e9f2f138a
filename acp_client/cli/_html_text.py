r"""Agent text made safe for an HTML page: escaping, Markdown and terminal output.

Owns the three ways a string from a log reaches the transcript page of
``acp-client replay --html`` (issue 24):

* :func:`esc` — plain text: first the CLI's sanitizer (``_sanitize.py``: controls, bidi
  overrides and other invisible characters made visible), then HTML escaping (quotes too, so
  the result is also safe inside an attribute value).
* :func:`markdown_html` — message text as Markdown (``markdown-it-py``, which ``rich``
  requires) with raw HTML disabled (it shows as text), links only to ``http``, ``https`` and
  ``mailto`` (any other link stays literal text), images shown as their text and address
  (never loaded), and every text the parser produced sanitized again (it decodes character
  references such as ``&#x202E;`` after our first pass).
* :func:`terminal_html` — terminal bytes with their SGR colours as ``<span>`` elements;
  every other escape sequence (OSC titles and hyperlinks, cursor moves, DCS ...) is removed,
  a lone carriage return starts its line again, other controls are dropped.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from ._sanitize import sanitize_line, sanitize_text

__all__ = ["decode_output", "esc", "markdown_html", "terminal_html"]

_SAFE_SCHEMES = ("http:", "https:", "mailto:")


def esc(value: object) -> str:
    """``value`` as sanitized, HTML-escaped text (safe as element text and attribute value)."""
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    return html.escape(sanitize_text(text), quote=True)


# -- Markdown ---------------------------------------------------------------------------------


def _valid_link(url: str) -> bool:
    """Only absolute http, https and mailto links; the rest stays text."""
    return url.strip().lower().startswith(_SAFE_SCHEMES)


def _image(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """An image as text: ``[image: alt <url>]``; the page loads nothing."""
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env)
    src = str(token.attrGet("src") or "")
    return f'<span class="img">[image: {html.escape(alt)} &lt;{esc(src)}&gt;]</span>'


def _new_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table")
    md.enable("strikethrough")
    md.validateLink = _valid_link  # type: ignore[method-assign]
    md.add_render_rule("image", _image)
    return md


_MD = _new_parser()


def _sanitize_tokens(tokens: list[Token]) -> None:
    """Sanitize every text, info string and attribute the parser produced."""
    stack = list(tokens)
    while stack:
        token = stack.pop()
        if token.content:
            token.content = sanitize_text(token.content)
        token.info = ""  # a fence's language would become a class attribute: not needed
        if token.attrs:
            token.attrs = {
                key: sanitize_line(value) if isinstance(value, str) else value
                for key, value in token.attrs.items()
                if key in ("href", "src", "title", "alt", "style", "start")
            }
            if token.type == "link_open":
                token.attrs["rel"] = "noopener noreferrer nofollow"
        if token.children:
            stack.extend(token.children)


def markdown_html(text: str) -> str:
    """``text`` (Markdown from the agent or user) rendered as safe HTML."""
    env: dict[str, Any] = {}
    tokens = _MD.parse(sanitize_text(text), env)
    _sanitize_tokens(tokens)
    rendered: str = _MD.renderer.render(tokens, _MD.options, env)
    return rendered


# -- terminal output --------------------------------------------------------------------------

# Escape sequences (ECMA-48), 7-bit and 8-bit forms, and single controls. Group 1/2: a CSI's
# parameters and final byte. String sequences (OSC, DCS, SOS, PM, APC) run to their
# terminator, or to the end of the output when it never came.
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)([0-?]*)[ -/]*([@-~])"
    r"|(?:\x1b[\]P^_X]|[\x90\x98\x9d\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c|\Z)"
    r"|\x1b[ -/]*[0-~]?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]",
    re.S,
)
_BASIC = ("black", "red", "green", "yellow", "blue", "magenta", "cyan", "white")
_CUBE = (0, 95, 135, 175, 215, 255)


def _color256(n: int) -> str | None:
    if n < 0 or n > 255:
        return None
    if n < 16:
        return ("b" if n >= 8 else "") + _BASIC[n % 8]
    if n < 232:
        n -= 16
        r, g, b = _CUBE[n // 36], _CUBE[n // 6 % 6], _CUBE[n % 6]
    else:
        r = g = b = 8 + 10 * (n - 232)
    return f"#{r:02x}{g:02x}{b:02x}"


class _Style:
    """The SGR state: foreground, background and attributes."""

    __slots__ = ("bg", "bold", "dim", "fg", "italic", "underline")

    def __init__(self) -> None:
        self.fg: str | None = None
        self.bg: str | None = None
        self.bold = self.dim = self.italic = self.underline = False

    def reset(self) -> None:
        """SGR 0: back to the default state."""
        self.fg = self.bg = None
        self.bold = self.dim = self.italic = self.underline = False

    def apply(self, params: str) -> None:
        """Apply one SGR parameter list (``1;31``, ``38;5;208``, ``38;2;1;2;3`` ...)."""
        codes = [int(p) if p.isdigit() else 0 for p in params.replace(":", ";").split(";")]
        i = 0
        while i < len(codes):
            code = codes[i]
            i += 1
            if code == 0:
                self.reset()
            elif code in (1, 2, 3, 4):
                setattr(self, ("bold", "dim", "italic", "underline")[code - 1], True)
            elif code == 22:
                self.bold = self.dim = False
            elif code in (23, 24):
                setattr(self, "italic" if code == 23 else "underline", False)
            elif 30 <= code <= 37 or 90 <= code <= 97:
                self.fg = ("b" if code >= 90 else "") + _BASIC[code % 10]
            elif 40 <= code <= 47 or 100 <= code <= 107:
                self.bg = ("b" if code >= 100 else "") + _BASIC[code % 10]
            elif code in (39, 49):
                setattr(self, "fg" if code == 39 else "bg", None)
            elif code in (38, 48) and i < len(codes):
                color: str | None = None
                if codes[i] == 5 and i + 1 < len(codes):
                    color = _color256(codes[i + 1])
                    i += 2
                elif codes[i] == 2 and i + 3 < len(codes):
                    rgb = [min(c, 255) for c in codes[i + 1 : i + 4]]
                    color = "#{:02x}{:02x}{:02x}".format(*rgb)
                    i += 4
                else:
                    i = len(codes)
                setattr(self, "fg" if code == 38 else "bg", color)

    def open_tag(self) -> str:
        """The ``<span>`` for this state, or ``""`` for the default one."""
        classes: list[str] = []
        styles: list[str] = []
        for prefix, value, prop in (("f-", self.fg, "color"), ("g-", self.bg, "background")):
            if value is None:
                continue
            if value.startswith("#"):  # built here from numbers, never from the log's text
                styles.append(f"{prop}:{value}")
            else:
                classes.append(prefix + value)
        for name in ("bold", "dim", "italic", "underline"):
            if getattr(self, name):
                classes.append("t-" + name)
        if not classes and not styles:
            return ""
        attrs = f' class="{" ".join(classes)}"' if classes else ""
        if styles:
            attrs += f' style="{";".join(styles)}"'
        return f"<span{attrs}>"


def terminal_html(output: bytes) -> str:
    """Terminal bytes as HTML: text escaped, SGR colours as spans, other sequences removed."""
    text = output.decode("utf-8", errors="replace").replace("\r\n", "\n")
    lines: list[str] = []
    line: list[str] = []
    style = _Style()
    tag = ""

    def add(piece: str) -> None:
        if piece:
            safe = html.escape(sanitize_text(piece), quote=False)
            line.append(f"{tag}{safe}</span>" if tag else safe)

    def text_run(chunk: str) -> None:
        for n, part in enumerate(chunk.split("\n")):
            if n:
                lines.append("".join(line))
                line.clear()
            add(part)

    pos = 0
    for match in _SEQUENCE.finditer(text):
        text_run(text[pos : match.start()])
        pos = match.end()
        if match.group(2) == "m":
            style.apply(match.group(1) or "0")
            tag = style.open_tag()
        elif match.group() == "\r":
            line.clear()  # the line is written again (progress bars)
    text_run(text[pos:])
    lines.append("".join(line))
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def decode_output(b64: object) -> bytes | None:
    """A terminal's stored base64 output, or ``None`` when it is not valid base64."""
    if not isinstance(b64, str):
        return b""
    try:
        return base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        return None
