"""Applying a run of one session's decoded updates in one step (ACP-V2-CLIENT-STATE.md 4-8).

Owns the hot path shared by ``Connection.receive_data`` and a log replay's fast lane: a run
of consecutive agent or thought chunks for one message, or of output chunks for one
terminal, is applied at once (``EntityUpdates.message_run`` / ``terminal_run``), everything
else update by update, with the same state and the same one event per update as
``Session.apply`` one at a time. Given the log ``lines`` of the updates, every diagnostic
names the line of the update that gave it, as applying them one by one would: a merged run
is taken only where it can give no diagnostic but at its first update (so not for a run in
which a message first passes the ``block_limit``: its ``blocks-dropped`` names that line).
"""

from __future__ import annotations

from itertools import groupby
from typing import TYPE_CHECKING, Any

from . import _events as ev
from . import _schema as s
from ._entities import Role

if TYPE_CHECKING:
    from ._session import Session
    from ._timeline import Timeline

__all__ = ["apply_run"]

_TERMINAL_CHUNK = s.TerminalOutputChunk
_RUN_ROLES: dict[type[Any], Role] = {
    s.AgentMessageChunk: "agent",
    s.AgentThoughtChunk: "thought",
}


def _one_message(run: list[Any]) -> bool:
    """Chunks of one message, none with ``_meta``: only the first can give a diagnostic."""
    ids = [u.message_id for u in run]
    return ids.count(ids[0]) == len(ids) and not any([u.meta for u in run])


def _first_drop(tl: Timeline, role: Role, run: list[Any]) -> bool:
    """Whether the run makes its message drop blocks for the first time (a diagnostic)."""
    limit = tl.block_limit
    assert limit is not None
    msg = tl.messages[role].get(run[0].message_id)
    if msg is None:
        return len(run) > limit
    return not msg.limit_noted and len(msg._content) + len(run) > limit


def apply_run(
    session: Session, updates: list[Any], events: list[ev.Event], lines: list[int] | None = None
) -> None:
    """Apply ``updates`` (all for ``session``) in order, as ``session.apply`` would each.

    One event per update is appended to ``events``, each followed by its side events.
    ``lines``: the log line of each update (``session.line`` follows them).
    """
    append = events.append
    handlers = session._handlers
    side = session.side_events
    tl = session._tl
    up = session._updates
    pos = 0
    for cls, group in groupby(updates, type):
        if cls in _RUN_ROLES or cls is _TERMINAL_CHUNK:
            run = list(group)
            n = len(run)
            if n > 1:
                if lines is not None:
                    session.line = lines[pos]
                if cls is _TERMINAL_CHUNK:
                    run = up.terminal_run(run, events)  # all of it, or none when not taken
                    if not run:
                        pos += n
                        continue
                elif lines is None or (
                    _one_message(run)
                    and (tl.block_limit is None or not _first_drop(tl, _RUN_ROLES[cls], run))
                ):
                    up.message_run(_RUN_ROLES[cls], run, events)
                    pos += n
                    continue
            group = iter(run)
        for update in group:
            if lines is not None:
                session.line = lines[pos]
            pos += 1
            tl.ordinal += 1
            handler = handlers.get(cls)
            append(handler(update) if handler is not None else session._unknown(update))
            if side:
                events.extend(side)
                side.clear()
    if lines is not None and pos:
        session.line = lines[pos - 1]
