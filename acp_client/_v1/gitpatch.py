# Implements V1-TO-V2.md section 3.4 (the `patch` of a translated v1 diff) in the v2 form of
# ACP-V2-CLIENT-STATE.md section 7.6: native absolute paths, no `a/` / `b/` prefixes,
# `/dev/null` for the missing side, Git-style quoting, no commit envelope.
"""Synthesise a ``git_patch`` text from the old and new text of one v1 diff."""

from __future__ import annotations

import difflib
from typing import Literal

__all__ = ["Operation", "git_patch"]

Operation = Literal["add", "delete", "modify"]

_NO_NEWLINE = "\\ No newline at end of file\n"
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n"}
_ESCAPES.update({"\v": "\\v", "\f": "\\f", "\r": "\\r"})


def _quote(path: str) -> str:
    """Quote a path the way Git does (C-style, octal UTF-8 bytes) when it needs quoting."""
    if not any(ch in _ESCAPES or ord(ch) < 0x20 or ord(ch) >= 0x7F for ch in path):
        return path
    out: list[str] = []
    for ch in path:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) >= 0x7F:
            out.extend(f"\\{byte:03o}" for byte in ch.encode("utf-8", "surrogatepass"))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _lines(text: str) -> list[str]:
    """Split on newlines only (as Git does), keeping the line ends."""
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines


def git_patch(path: str, old_text: str, new_text: str, operation: Operation) -> str | None:
    """A one-file Git patch turning ``old_text`` into ``new_text`` at absolute ``path``.

    ``operation`` decides the header: ``add`` diffs from ``/dev/null`` (``old_text`` is
    ignored), ``delete`` to ``/dev/null`` (``new_text`` is ignored). Returns ``None`` for a
    ``modify`` whose texts are equal (Git prints nothing for an unchanged file).
    """
    if operation == "add":
        old_text = ""
    elif operation == "delete":
        new_text = ""
    elif old_text == new_text:
        return None
    quoted = _quote(path)
    parts = [f"diff --git {quoted} {quoted}\n"]
    if operation == "add":
        parts.append("new file mode 100644\n")
    elif operation == "delete":
        parts.append("deleted file mode 100644\n")
    old_lines = _lines(old_text)
    new_lines = _lines(new_text)
    if not old_lines and not new_lines:
        return "".join(parts)
    label = quoted + ("\t" if " " in path else "")  # Git ends a label with a space by a tab
    parts.append(f"--- {'/dev/null' if operation == 'add' else label}\n")
    parts.append(f"+++ {'/dev/null' if operation == 'delete' else label}\n")
    diff = difflib.unified_diff(old_lines, new_lines, n=3, lineterm="\n")
    for index, line in enumerate(diff):
        if index < 2:  # difflib's own ---/+++ header lines
            continue
        if line.endswith("\n"):  # hunk header, or a line with its newline
            parts.append(line)
        else:
            parts.append(line + "\n" + _NO_NEWLINE)
    return "".join(parts)
