"""The readers of snapshot values that the terminal and the HTML renderers share.

Owns what both views read the same way, leaving only the styling to each (no rich here,
so the HTML export does not need it): the objects of a list value (:func:`dicts`), the
parts of a session's status line (:func:`session_status`), what each line of a git
patch is (:func:`patch_lines`) and which plans a session removed and where in its
timeline (:func:`removed_plans` and :class:`Removals`, ACP v2 Preview P45: not in the
snapshot, so the commands collect them from the connection).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal

__all__ = ["PatchLine", "Removals", "dicts", "patch_lines", "removed_plans", "session_status"]

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


def removed_plans(sessions: Mapping[str, Any]) -> list[tuple[str, str, int]]:
    """``(sessionId, planId, position)`` of every plan a ``plan_removed`` deleted (P45).

    ``position`` is where the removal happened in the session's timeline: how many of its
    entries were first seen before it (the snapshot keeps no such place, so it is read
    from the connection's ordinals). In session order, then removal order; ``sessions``
    is ``Connection.sessions``.
    """
    out: list[tuple[str, str, int]] = []
    for session_id, session in sessions.items():
        removed: Mapping[str, int] = session.removed_plans
        seen = [entry.first_seen for entry in session.timeline]
        for plan_id in sorted(removed, key=removed.__getitem__):
            position = sum(1 for first in seen if first < removed[plan_id])
            out.append((session_id, plan_id, position))
    return out


class Removals:
    """The removed plans a view shows, by session (P45).

    A ``(sessionId, planId, position)`` triple is shown in the timeline before the entry
    at ``position``; a ``(sessionId, planId)`` pair (no place known) in the plans section.
    """

    __slots__ = ("placed", "unplaced")

    def __init__(self, removed: Iterable[Sequence[object]] = ()) -> None:
        self.unplaced: dict[str, list[str]] = {}
        self.placed: dict[str, list[tuple[int, str]]] = {}
        for item in removed:
            session_id, plan_id = str(item[0]), str(item[1])
            where = item[2] if len(item) > 2 else None
            if isinstance(where, int) and not isinstance(where, bool):
                self.placed.setdefault(session_id, []).append((where, plan_id))
            else:
                self.unplaced.setdefault(session_id, []).append(plan_id)

    def slots(self, session_id: str, count: int, start: int = 0) -> list[list[str]]:
        """The plan ids removed before each of ``count`` shown entries, then after the last.

        ``start``: how many earlier entries are not shown (their removals come first).
        """
        out: list[list[str]] = [[] for _ in range(count + 1)]
        for position, plan_id in self.placed.get(session_id, ()):
            out[min(max(position - start, 0), count)].append(plan_id)
        return out
