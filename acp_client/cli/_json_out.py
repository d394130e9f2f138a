r"""JSON on standard output: the snapshot (``replay --json``, ``run --json``) and every line.

Owns how the command line writes JSON (docs/snapshot.md: the snapshot as JSON text, the
command line's additions): :func:`dump_json` gives the text of one value as the standard
library's :func:`json.dumps` writes it, made safe for a terminal; :func:`write_json` writes
the same bytes a bounded piece at a time, and fast.

:func:`write_json` walks the value's big containers (the snapshot's sessions, a session's
timeline, a message's content blocks, a large raw value ...) and hands runs of their elements,
about 64 K characters of JSON each, to msgspec's encoder, writing the brackets, separators and
indentation itself. Memory is bounded by the run and the largest single string, not by the
snapshot; the text is byte for byte what :func:`dump_json` gives (``tests/test_json_out.py``
compares them over every transcript, sample log and generated snapshot):

* msgspec escapes strings exactly as ``json`` does (C0 controls, ``"`` and ``\``);
* a run holding a float (msgspec writes ``1e-05`` as ``0.00001``), a dict key that is not a
  string, a lone surrogate or anything else msgspec would write differently is written by
  ``json`` instead, non-finite floats as ``null`` (the decoder diagnosed them:
  ``number-beyond-double``);
* then, as for :func:`dump_json`: lone surrogates, DEL and the C1 controls as ``\u`` escapes,
  and every non-ASCII character too when standard output is a terminal.
"""

from __future__ import annotations

import re
import sys
from typing import IO, Any

import msgspec

__all__ = ["dump_json", "write_json"]

_DEL_C1 = re.compile("[\x7f-\x9f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_NOT_ASCII = re.compile("[^\x00-\x7e]")


def dump_json(value: object, *, indent: int | None = None) -> str:
    """JSON for standard output.

    UTF-8 when piped; on a terminal every non-ASCII character is escaped, so that bidi or
    invisible characters from the agent never reach it raw. Control characters are always
    escaped (json does it for C0; DEL and C1 are escaped here).
    """
    import json

    try:
        text = json.dumps(value, ensure_ascii=sys.stdout.isatty(), indent=indent, allow_nan=False)
    except ValueError:  # a number beyond a double, read as infinity: null, as encode() does
        value = _finite(value)
        text = json.dumps(value, ensure_ascii=sys.stdout.isatty(), indent=indent)
    return _safe_json_text(text)


def _safe_json_text(text: str) -> str:
    """JSON text as written out: lone surrogates, DEL and C1 controls as escapes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a lenient read: write its escape
        text = _SURROGATE.sub(_escape, text)
    return _no_del_c1(text)


_DEL_C1_ESCAPES = {chr(code): f"\\u{code:04x}" for code in range(0x7F, 0xA0)}


def _no_del_c1(text: str) -> str:
    r"""``text`` with DEL and the C1 controls written as their ``\u`` escapes.

    json escapes C0 controls but leaves DEL and the C1 controls (U+0080-U+009F, CSI and OSC
    among them) raw when piped; outside strings JSON has none, so their escapes are the same
    JSON text. Fast for the usual text: ASCII is known in O(1), one scan finds none.
    """
    if text.isascii():
        return text.replace("\x7f", "\\u007f") if "\x7f" in text else text
    if _DEL_C1.search(text) is None:
        return text
    for char, escape in _DEL_C1_ESCAPES.items():  # C speed, however many there are
        if char in text:
            text = text.replace(char, escape)
    return text


def _escape(match: re.Match[str]) -> str:
    r"""A character as json's ``ensure_ascii`` writes it: a ``\u`` escape, a pair past the BMP."""
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}"


def _finite(value: object) -> object:
    """``value`` with every non-finite float replaced by ``None``."""
    if isinstance(value, float):
        return value if value - value == 0 else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


_JSON_WRITE = 1 << 20  # characters of JSON text gathered per write
_RUN = 1 << 16  # characters of JSON (estimated) encoded in one call
_DEEPEST = 64  # containers nested deeper are encoded whole, however big
_INT_RANGE = range(-(1 << 63), 1 << 64)  # what msgspec writes as json does (and fast)


def _measure(value: object, budget: int) -> tuple[int, bool]:
    """``budget`` less an estimate of ``value``'s JSON size, and whether msgspec writes it.

    Stops as soon as the budget is spent (the result is then negative): a big container
    costs no more than the budget to measure. "Plain" is false when ``value`` holds a float,
    a key that is not a string, or a type other than the JSON ones.
    """
    plain = True
    stack: list[Any] = [value]
    pop, push = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is str:
            budget -= len(item) + 2
        elif kind is dict:
            budget -= 2 + 4 * len(item)
            try:
                budget -= sum(map(len, item))
            except TypeError:  # a key that is not a string: json's rules for it
                plain = False
            push(item.values())
        elif kind is list:
            budget -= 2 + 2 * len(item)
            push(item)
        elif kind is int:
            budget -= 8
            plain = plain and item in _INT_RANGE
        elif item is None or kind is bool:
            budget -= 5
        else:  # a float (msgspec writes 1e-05 as 0.00001), a tuple, a str subclass ...
            budget -= 24
            plain = False
        if budget < 0:
            break
    return budget, plain


class _Writer:
    """Writes one value's JSON text to ``out``, a run of elements at a time."""

    def __init__(self, out: IO[str], indent: int | None) -> None:
        self.out = out
        self.indent = indent
        self.ascii = sys.stdout.isatty()
        self.held: list[str] = []
        self.size = 0
        self._encode = msgspec.json.Encoder().encode
        self._spaces = [""]

    def pad(self, depth: int) -> str:
        """The indentation of a line at ``depth``."""
        spaces = self._spaces
        while len(spaces) <= depth:
            spaces.append(" " * ((self.indent or 0) * len(spaces)))
        return spaces[depth]

    def emit(self, text: str) -> None:
        """Hold ``text`` for the next write; write once a megabyte is held."""
        self.held.append(text)
        self.size += len(text)
        if self.size >= _JSON_WRITE:
            self.flush()

    def flush(self) -> None:
        """Write what is held, made safe for the terminal or pipe."""
        text = "".join(self.held)
        self.held.clear()
        self.size = 0
        # on a terminal every non-ASCII character is escaped (DEL and C1 among them)
        text = _NOT_ASCII.sub(_escape, text) if self.ascii else _no_del_c1(text)
        self.out.write(text)

    def value(self, value: Any, depth: int) -> None:
        """``value`` at nesting ``depth``: whole when small, else element by element."""
        budget, plain = _measure(value, _RUN)
        if budget < 0 and depth < _DEEPEST and value:
            if type(value) is list:
                return self.container(value, "[]", depth)
            if type(value) is dict and all(type(key) is str for key in value):
                return self.container(value, "{}", depth)
        if budget < 0:  # one long string, a deep container, one json writes by its rules
            plain = _measure(value, sys.maxsize)[1]
        self.emit(self.text(value, plain, depth))
        return None

    def text(self, value: object, plain: bool, depth: int) -> str:
        """The JSON text of ``value`` as ``json.dumps`` indents it at ``depth``."""
        text = None
        if plain:
            try:
                raw = self._encode(value)
            except (UnicodeEncodeError, TypeError, ValueError):  # a lone surrogate ...
                pass
            else:
                if isinstance(value, list | dict):  # json's separators, and indentation
                    raw = msgspec.json.format(raw, indent=self.indent or 0)
                text = raw.decode()
        if text is None:
            text = _safe_json_text(_stdlib(value, self.indent))
        if self.indent and depth and "\n" in text:
            text = text.replace("\n", "\n" + self.pad(depth))
        return text

    def container(self, value: list[Any] | dict[str, Any], brackets: str, depth: int) -> None:
        """A list or dict too big for one run: runs of its elements, a big one on its own."""
        is_dict = brackets == "{}"
        items: list[Any] = list(value.items()) if isinstance(value, dict) else value
        indent, outer, inner = self.indent, self.pad(depth), self.pad(depth + 1)
        cut = 2 if indent else 1  # a run's brackets: "[\n" ... "\n]", or "[" ... "]"
        self.emit(brackets[0] + ("\n" if indent else ""))
        start, count = 0, len(items)
        while start < count:
            end, budget, plain = start, _RUN, True
            while end < count:
                if is_dict:
                    key, item = items[end]
                    left, fits = _measure(item, budget - len(key) - 8)
                else:
                    left, fits = _measure(items[end], budget - 8)
                if left < 0:
                    break
                budget, plain, end = left, plain and fits, end + 1
            if start:
                self.emit(",\n" if indent else ", ")
            if end > start:  # a run: encoded as one list or dict, its brackets cut off
                run = dict(items[start:end]) if is_dict else items[start:end]
                body = self.text(run, plain, 0)[cut:-cut]
                if indent and depth:
                    body = outer + body.replace("\n", "\n" + outer)
                self.emit(body)
                start = end
                continue
            self.emit(inner)
            if is_dict:
                key, item = items[start]
                self.emit(self.text(key, True, 0) + ": ")
                self.value(item, depth + 1)
            else:
                self.value(items[start], depth + 1)
            start += 1
        self.emit(("\n" + outer if indent else "") + brackets[1])


def _stdlib(value: object, indent: int | None) -> str:
    """``value`` as json writes it, non-ASCII raw (escaped later if need be)."""
    import json

    try:
        return json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=False)
    except ValueError:  # a number beyond a double, read as infinity: null, as encode() does
        return json.dumps(_finite(value), ensure_ascii=False, indent=indent)


def write_json(value: object, out: IO[str], *, indent: int | None = None) -> None:
    """:func:`dump_json` written to ``out`` a piece at a time, then a newline.

    Never holds the whole text (a snapshot of a gigabyte of agent output would need several
    copies of it): runs of about 64 K characters are encoded with msgspec and written about
    a megabyte at a time; the bytes are those :func:`dump_json` gives.
    """
    if indent is not None and indent < 1:  # json's lines without indentation: not msgspec's
        out.write(dump_json(value, indent=indent) + "\n")
        return
    writer = _Writer(out, indent)
    writer.value(value, 0)
    writer.emit("\n")
    writer.flush()
