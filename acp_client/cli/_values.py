"""The readers of snapshot values that the terminal and the HTML renderers share.

Owns what both views read the same way, leaving only the styling to each (no rich here,
so the HTML export does not need it): the objects of a list value (:func:`dicts`), the
parts of a session's status line (:func:`session_status`) and what each line of a git
patch is (:func:`patch_lines`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal

__all__ = ["PatchLine", "dicts", "patch_lines", "session_status"]

PatchLine = Literal["head", "hunk", "add", "del", ""]
"""A git patch line's kind: a file header, a hunk header, added, removed, or context."""


def dicts(value: object) -> Iterator[Mapping[str, Any]]:
    """The objects of a list value; anything else is skipped."""
    if isinstance(value, list):
        for item in value:
            if isinstance(item, Mapping):
                yield item


def session_status(session: Mapping[str, Any], show: Callable[[object], str]) -> list[str]:
    """Protocol version, announcement, closed flag and last update, each value ``show``-n."""
    parts: list[str] = []
    if session.get("protocolVersion") is not None:
        parts.append(f"protocol v{show(session.get('protocolVersion'))}")
    parts.append("announced" if session.get("announced") else "not announced (log mid-stream)")
    if session.get("closed") is True:
        parts.append("closed")
    info = session.get("sessionInfo")
    if isinstance(info, Mapping) and info.get("updatedAt") is not None:
        parts.append(f"updated {show(info.get('updatedAt'))}")
    return parts


def patch_lines(text: str) -> list[tuple[PatchLine, str]]:
    """The lines of git patch ``text`` (no trailing empty line), each with its kind."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out: list[tuple[PatchLine, str]] = []
    for line in lines:
        kind: PatchLine
        if line.startswith(("+++", "---", "diff --git", "index ")):
            kind = "head"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = ""
        out.append((kind, line))
    return out
