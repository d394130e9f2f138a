r"""Neutralize agent-supplied strings before they reach a terminal.

Every string acp_client displays that came from the agent (message text, titles, commands,
paths, option names, notice text, error messages, JSON shown for unknown data) goes through
:func:`sanitize_text` first. The rule, applied the same way everywhere:

- ``\r\n`` becomes ``\n``; ``\n`` and ``\t`` are kept.
- Every other C0 control (U+0000-U+001F, so also ESC, BEL and a lone ``\r``), DEL and every
  C1 control (U+0080-U+009F) is replaced by the four visible characters ``\xNN`` (lowercase
  hex). An escape sequence therefore loses its ESC and shows as harmless text, for example
  ``\x1b[2J``.
- Invisible characters that can reorder or hide what is shown are replaced by ``<U+XXXX>``:
  every format character (Unicode category Cf: the bidi embeddings, overrides and isolates
  U+202A-U+202E and U+2066-U+2069, the marks U+200E, U+200F and U+061C, zero-width space and
  joiners, word joiner and invisible operators, the byte order mark, soft hyphen, tag
  characters, ...), the line and paragraph separators U+2028 and U+2029, the Hangul filler
  characters and lone surrogates. One exception keeps emoji sequences intact: a zero-width
  joiner (U+200D) between two emoji-like characters (a non-ASCII symbol, modifier or variation
  selector before it, a symbol after it) is kept.

A literal backslash is not escaped, so agent text that spells ``\x1b`` looks like an escaped
ESC: the view is unambiguous about safety, not about provenance.

The module has no third-party imports; rich markup is never an issue here because the
renderer builds ``rich.text.Text`` objects from sanitized strings and never parses markup.
"""

from __future__ import annotations

import json
import re
import unicodedata

__all__ = ["TEXT_LIMIT", "clip_middle", "sanitize_json", "sanitize_line", "sanitize_text"]

TEXT_LIMIT = 1_000_000
"""Characters of one text a view shows at most: the first and last half; the rest is counted."""

# Unicode category Cf as of Unicode 15.1, plus separators, Hangul fillers and surrogates.
_INVISIBLE_RANGES = (
    "\u00ad",
    "\u0600-\u0605",
    "\u061c",
    "\u06dd",
    "\u070f",
    "\u0890-\u0891",
    "\u08e2",
    "\u115f-\u1160",
    "\u180e",
    "\u200b-\u200f",
    "\u2028-\u202e",
    "\u2060-\u2064",
    "\u2066-\u206f",
    "\u3164",
    "\ud800-\udfff",
    "\ufeff",
    "\uffa0",
    "\ufff9-\ufffb",
    "\U000110bd",
    "\U000110cd",
    "\U00013430-\U0001343f",
    "\U0001bca0-\U0001bca3",
    "\U0001d173-\U0001d17a",
    "\U000e0001",
    "\U000e0020-\U000e007f",
)

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f" + "".join(_INVISIBLE_RANGES) + "]",
)
_ZWJ = "\u200d"


def _emoji_like_before(ch: str) -> bool:
    return not ch.isascii() and unicodedata.category(ch) in ("So", "Sk", "Mn")


def _replace(match: re.Match[str]) -> str:
    ch = match.group()
    code = ord(ch)
    if code <= 0x9F:
        return f"\\x{code:02x}"
    if ch == _ZWJ:
        text = match.string
        pos = match.start()
        if (
            0 < pos < len(text) - 1
            and _emoji_like_before(text[pos - 1])
            and unicodedata.category(text[pos + 1]) == "So"
        ):
            return ch
    return f"<U+{code:04X}>"


def sanitize_text(s: str) -> str:
    r"""Return ``s`` with every control and spoofing-capable invisible character made visible.

    The result contains no C0 control other than ``\n`` and ``\t``, no DEL, no C1 control, no
    bidi control and no other format character (except a zero-width joiner inside an emoji
    sequence); see the module docstring for the exact replacements. Safe text is returned
    unchanged (the same object).
    """
    if "\r\n" in s:
        s = s.replace("\r\n", "\n")
    if _UNSAFE.search(s) is None:
        return s
    return _UNSAFE.sub(_replace, s)


def sanitize_line(s: str, *, limit: int | None = None) -> str:
    r""":func:`sanitize_text` on one line: ``\n`` and ``\t`` shown as escapes too.

    For text that must stay on its line (a question's title or option names), so that agent
    text cannot draw lines of its own. A text cut to ``limit`` characters ends with ``…``.
    """
    cut = limit is not None and len(s) > limit
    if cut:
        s = s[:limit]  # what is past the limit is never shown: never sanitized either
    text = sanitize_text(s)
    if "\n" in text or "\t" in text:
        text = text.replace("\n", "\\n").replace("\t", "\\t")
    if limit is not None and (cut or len(text) > limit):
        text = text[: max(limit - 1, 0)] + "…"
    return text


def sanitize_json(value: object, *, limit: int | None = 200) -> str:
    """Compact JSON text of ``value``, sanitized and cut to ``limit`` characters.

    Used to show unknown or raw data (unknown content blocks, custom states, raw tool input).
    Values JSON cannot encode are shown with ``repr``. A cut text ends with ``…``.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
    except (TypeError, ValueError):
        text = repr(value)
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)] + "…"
    return sanitize_text(text)


def clip_middle(text: str, limit: int | None = None) -> tuple[str, int, str]:
    """``(head, hidden, tail)``: ``text`` cut to its first and last ``limit // 2`` characters.

    ``limit`` is :data:`TEXT_LIMIT` unless given. A text of at most ``limit`` characters is
    ``(text, 0, "")``. The views show the head, a
    note of the ``hidden`` characters and the tail, so showing a text of any size costs at most
    ``limit`` characters of work (sanitizing, wrapping, Markdown) after this linear cut.
    """
    if limit is None:
        limit = TEXT_LIMIT
    if len(text) <= limit:
        return text, 0, ""
    half = limit // 2
    return text[:half], len(text) - 2 * half, text[len(text) - half :]
