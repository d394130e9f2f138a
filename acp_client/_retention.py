"""The retention limits of one session's entities: content blocks and terminal bytes (R93, 8.5).

Owns what a limit does once an update went past it: :func:`trim` keeps the last
``block_limit`` items of a message's content, a tool call's content or a compaction's
summary, moves the entity's first absolute index on by as many (docs/events.md, E6), counts
them (``truncated_blocks``, the snapshot's ``truncatedBlocks``) and keys the chunks'
``_meta`` again; the first drop of each entity is said once (``blocks-dropped``), and so is
a terminal's first (:func:`note_terminal`, ``terminal-bytes-dropped``). The handlers
(``_updates``, ``_preview``) call them after an append or a replacing upsert, only when a
limit is set and passed: a session without one pays a single ``is None`` test per update.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._entities import MessageState, TerminalState

__all__ = ["describe", "note_terminal", "trim"]

_ROLE_NAMES = {"user": "user message", "agent": "agent message", "thought": "agent thought"}
_ENTRY_NAMES = {"toolCall": "tool call", "compaction": "compaction"}


def describe(entity: Any) -> str:
    """How a diagnostic names a timeline entry: ``agent message 'm1'``, ``tool call 'c1'``."""
    if type(entity) is MessageState:
        return f"{_ROLE_NAMES[entity.role]} {entity.message_id!r}"
    return f"{_ENTRY_NAMES.get(entity.entry, 'session message')} {entity.key[1]!r}"


def trim(entity: Any, items: list[Any], limit: int, note: Callable[..., None]) -> None:
    """Keep the last ``limit`` of ``items`` (the entity's window); count what goes (E6).

    Costs the length of ``items`` once per call: the handlers call it once per run.
    """
    extra = len(items) - limit
    if extra <= 0:
        return
    del items[:extra]
    entity.base += extra
    entity._dropped += extra
    meta = entity.chunk_meta
    if meta:  # keyed by position in the list: the kept ones move down by ``extra``
        entity.chunk_meta = {i - extra: m for i, m in meta.items() if i >= extra} or None
    if not entity.limit_noted:
        entity.limit_noted = True
        note(
            "blocks-dropped",
            f"{describe(entity)} keeps its last {limit:,} content blocks (block_limit);"
            " earlier blocks are dropped and counted in truncatedBlocks",
        )


def note_terminal(term: TerminalState, note: Callable[..., None]) -> None:
    """Say once per terminal that its ``terminal_limit`` dropped bytes (when it has)."""
    if not term.limit_noted and term.truncated_bytes:
        term.limit_noted = True
        note(
            "terminal-bytes-dropped",
            f"terminal {term.terminal_id!r} keeps its last {term.limit:,} bytes"
            " (terminal_limit); earlier bytes are dropped and counted in truncatedBytes",
        )
