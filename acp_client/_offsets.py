"""Absolute offsets of terminal bytes and content blocks (docs/events.md, E5 and E6).

Owns the values a delta read returns (:class:`TerminalRead`, :class:`ContentRead`) and the
check of an absolute offset against a retained window ``[start, end)``; the entities
(``_entities``) keep the windows.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["ContentRead", "TerminalRead", "since"]


class ContentRead(NamedTuple):
    """What :meth:`MessageState.content_since` returns (docs/events.md, E6).

    ``blocks`` are the blocks at absolute indices ``[start, end)``; ``start`` is greater
    than the index asked for when the blocks between them are gone (an upsert replaced or
    cleared the content): then what the caller kept before ``start`` is gone too.
    """

    blocks: list[Any]
    start: int
    end: int


class TerminalRead(NamedTuple):
    """What :meth:`TerminalState.read` returns (docs/events.md, E5).

    ``data`` holds the bytes at absolute offsets ``[start, end)``; ``start`` is greater than
    the offset asked for when the bytes between them are gone (dropped by the retention
    limit, or replaced by an output snapshot).
    """

    data: bytes
    start: int
    end: int


def since(items: list[Any], base: int, index: int, what: str) -> tuple[int, int, int]:
    """Check an absolute ``index`` against the window ``[base, base + len(items))``.

    Returns ``(first, position, end)``: the first absolute index to return, its position in
    ``items`` and the window's end.
    """
    end = base + len(items)
    if type(index) is not int or index < 0 or index > end:
        raise ValueError(f"{what}: index {index!r} is not in [0, {end}] (the end so far)")
    first = index if index > base else base
    return first, first - base, end
