"""The v2 Preview's additions to the reducer's handler table, and the unstable opt-in.

Implements ACP-V2-PREVIEW.md 3.0 (P0): the variants the Preview made stable or baseline are
handled by default; the unstable ones (``prompt_suggestions_update``, ``cursor_update``, the
``unknown`` state) only for a session that opted in, else they stay unknown variants kept raw
(13.1). :func:`install_preview` adds the handlers to a session's table and returns the
handler for updates no table entry takes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _events as ev
from . import _schema as s
from ._codec import decode_unstable_update
from ._diagnostics import Diagnostic
from ._errors import RemoteProtocolError
from ._updates import EntityUpdates

__all__ = ["install_preview"]

Handler = Callable[[Any], ev.Event]


def install_preview(
    handlers: dict[type[Any], Handler],
    up: EntityUpdates,
    unstable: frozenset[str],
    diagnostics: list[Diagnostic],
) -> Handler:
    """Add the Preview's handlers to ``handlers``; return the handler for any other update."""
    handlers[s.PlanRemoved] = up.raw
    handlers[s.ReplayComplete] = up.raw
    handlers[s.SubagentUpdate] = up.raw
    handlers[s.SessionMessage] = up.raw
    handlers[s.SessionMessageChunk] = up.raw
    if not unstable:
        return up.unknown

    def convert(update: Any) -> Any:
        try:
            return decode_unstable_update(update, unstable, diagnostics)
        except RemoteProtocolError as exc:
            return exc

    def unknown(update: Any) -> ev.Event:
        """An unknown update, or an unstable one this session opted into."""
        typed = convert(update)
        if isinstance(typed, RemoteProtocolError):
            return up.reject(update, "update-rejected", str(typed))
        handler = handlers.get(type(typed)) if typed is not update else None
        return handler(typed) if handler is not None else up.unknown(update)

    if "unknown_state" in unstable:
        state = handlers[s.StateUpdate]

        def state_update(u: s.StateUpdate) -> ev.Event:
            """A ``state_update``; ``unknown`` decoded as the opt-in state (P32)."""
            if u.state != "unknown" or type(u) is not s.StateUpdate:
                return state(u)
            typed = convert(u)
            if isinstance(typed, RemoteProtocolError):
                return up.reject(u, "update-rejected", str(typed))
            return state(typed)

        handlers[s.StateUpdate] = state_update
    return unknown
