"""sanitize_text / sanitize_json: every control and spoofing character becomes visible."""

from __future__ import annotations

import sys
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from acp_client.cli._sanitize import sanitize_json, sanitize_text

BIDI = [
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u200e",
    "\u200f",
    "\u061c",
]


def is_unsafe(ch: str) -> bool:
    code = ord(ch)
    if ch in "\n\t":
        return False
    return (
        code < 0x20
        or 0x7F <= code <= 0x9F
        or unicodedata.category(ch) in ("Cf", "Zl", "Zp", "Cs")
        or ch in "\u115f\u1160\u3164\uffa0"
    )


def test_safe_text_is_returned_unchanged() -> None:
    text = "plain text, ünïcödé, 中文, emoji 🎉, tab\tand\nnewline [bold]markup[/bold]"
    assert sanitize_text(text) is text


def test_c0_del_and_c1_controls_become_hex_escapes() -> None:
    for code in [*range(0x20), 0x7F, *range(0x80, 0xA0)]:
        ch = chr(code)
        if ch in "\n\t":
            assert sanitize_text(ch) == ch
        else:
            assert sanitize_text(f"a{ch}b") == f"a\\x{code:02x}b"


def test_escape_sequences_lose_their_esc() -> None:
    hostile = "\x1b[2J\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\x1b]52;c;aGk=\x07\x9b31m"
    out = sanitize_text(hostile)
    assert out == (
        "\\x1b[2J\\x1b]8;;http://x\\x1b\\link\\x1b]8;;\\x1b\\\\x1b]52;c;aGk=\\x07\\x9b31m"
    )


def test_crlf_becomes_lf_but_lone_cr_is_escaped() -> None:
    assert sanitize_text("a\r\nb\rc") == "a\nb\\x0dc"


def test_bidi_controls_become_code_point_escapes() -> None:
    for ch in BIDI:
        assert sanitize_text(f"x{ch}y") == f"x<U+{ord(ch):04X}>y"


def test_every_format_character_of_this_python_is_escaped() -> None:
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        if unicodedata.category(ch) in ("Cf", "Zl", "Zp", "Cs"):
            assert sanitize_text(ch) == f"<U+{code:04X}>", hex(code)


def test_zero_width_joiner_kept_only_inside_emoji_sequences() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    assert sanitize_text(family) == family
    thumbs = "\U0001f44d\U0001f3fd\u200d\u2642\ufe0f"  # modifier before the joiner
    assert sanitize_text(thumbs) == thumbs
    assert sanitize_text("pay\u200dpal") == "pay<U+200D>pal"
    assert sanitize_text("\u200d\U0001f469") == "<U+200D>\U0001f469"


def test_lone_surrogates_and_hangul_fillers_are_escaped() -> None:
    assert sanitize_text("a\ud800b") == "a<U+D800>b"
    assert sanitize_text("\u3164") == "<U+3164>"


@given(st.text())
def test_output_never_contains_unsafe_characters(text: str) -> None:
    out = sanitize_text(text)
    bad = [ch for ch in out if is_unsafe(ch)]
    # a kept zero-width joiner sits between two emoji-like characters
    assert all(ch == "\u200d" for ch in bad)
    assert sanitize_text(out) == out


@given(st.text(st.characters(codec="utf-8").filter(lambda ch: not is_unsafe(ch))))
def test_safe_text_property(text: str) -> None:
    assert sanitize_text(text) == text


def test_sanitize_json_is_compact_cut_and_safe() -> None:
    assert sanitize_json({"a": [1, None]}) == '{"a":[1,null]}'
    assert sanitize_json("x" * 500, limit=10) == '"xxxxxxxx…'
    assert sanitize_json({"k": "\u202e\x1b"}) == '{"k":"<U+202E>\\u001b"}'
    assert sanitize_json(object(), limit=None).startswith("<object object")
