"""The v2 Preview's additions to one session's reducer (docs/preview.md; ACP-V2-PREVIEW.md 3).

Theory of operation
-------------------
A :class:`Preview` is one more part of a ``Session``, with one owner: what the v2 Preview
added to a session's state beyond the base reducer's entities.

* P0: the variants the Preview made stable or baseline are handled by default; the unstable
  ones (``prompt_suggestions_update``, ``cursor_update``, the ``unknown`` state) only for a
  session that opted in (``Session(unstable=...)``); otherwise they stay unknown variants
  kept raw (13.1). :meth:`Preview.install` puts the handlers into the session's table and
  returns the handler for updates no entry takes.
* Inter-session messages (P12-P15): timeline entities of their own id space, stored by the
  ``Timeline``; participants are patched, content replaced by upserts and appended by chunks.
* References to sessions (P9): a sender, a recipient or a tool call's ``session`` content
  naming a session the connection does not know is kept, with a diagnostic; it creates none.
* ``plan_removed`` (P45): the plan leaves the session; an unknown id is ignored.
* Prompt suggestions (P34-P39) and cursors (P40-P44), opt-in. Cursors live in the
  ``Timeline`` (they follow its replay generations, P44); the suggestion list here.

``subagent_update`` and ``replay_complete`` (the session tree and the replay boundary) are
kept as raw updates here until their own parts take them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec import UNSET

from . import _events as ev
from . import _schema as s
from ._codec import decode_unstable_update, to_builtins
from ._diagnostics import Diagnostic
from ._entities import compact
from ._errors import RemoteProtocolError
from ._patch import meta_patch, patch_extra
from ._timeline import Timeline
from ._updates import EntityUpdates, append_chunk, replaced_content

__all__ = ["Preview"]

Handler = Callable[[Any], ev.Event]
_PARTICIPANTS = (
    "sender_session_id",
    "recipient_session_id",
    "sender_message_id",
    "recipient_message_id",
)
# The store a cursor anchor's ``type`` names, and the anchor field holding the id (P43).
_ANCHOR_STORES: dict[type[Any], Callable[[Timeline], dict[str, Any]]] = {
    s.CursorUserMessageAnchor: lambda tl: tl.user,
    s.CursorAgentMessageAnchor: lambda tl: tl.agent,
    s.CursorAgentThoughtAnchor: lambda tl: tl.thought,
    s.CursorSessionMessageAnchor: lambda tl: tl.session_messages,
    s.CursorToolCallAnchor: lambda tl: tl.tool_calls,
    s.CursorCompactionAnchor: lambda tl: tl.compactions,
}


def _anchor_id(anchor: Any) -> str:
    for name in ("message_id", "tool_call_id", "compaction_id"):
        value = getattr(anchor, name, None)
        if isinstance(value, str):
            return value
    return ""


class Preview:
    """The v2 Preview's part of one session: its handlers, suggestions and checks.

    Attributes:
        suggestions: the current prompt-suggestion list (``None``: none received yet;
            ``[]``: withdrawn), items as decoded (opt-in ``prompt_suggestions``).
        known: ``known(session_id)``: whether the connection knows that session (the
            connection's registry sets it; a bare session knows only itself).
        advertised: live: whether the client's ``initialize`` advertised
            ``capabilities.session.promptSuggestions`` (``None``: not checked, passive).
    """

    __slots__ = (
        "_diagnostics",
        "_note",
        "_replaying",
        "_up",
        "advertised",
        "known",
        "session_id",
        "suggestions",
        "tl",
        "unstable",
    )

    def __init__(
        self,
        session_id: str,
        timeline: Timeline,
        updates: EntityUpdates,
        note: Callable[..., None],
        unstable: frozenset[str],
        diagnostics: list[Diagnostic],
        replaying: Callable[[], bool],
    ) -> None:
        self.session_id = session_id
        self.tl = timeline
        self.unstable = unstable
        self._up = updates
        self._note = note
        self._diagnostics = diagnostics
        self._replaying = replaying
        self.suggestions: list[Any] | None = None
        self.known: Callable[[str], bool] = session_id.__eq__
        self.advertised: Callable[[], bool] | None = None
        updates.refer = self.refer

    # ------------------------------------------------------------------ wiring

    def install(self, handlers: dict[type[Any], Handler]) -> Handler:
        """Add the Preview's handlers to ``handlers``; return the one for any other update."""
        up = self._up
        handlers[s.PlanRemoved] = self.plan_removed
        handlers[s.SessionMessage] = self.session_message
        handlers[s.SessionMessageChunk] = self.session_message_chunk
        handlers[s.PromptSuggestionsUpdate] = self.suggestions_update
        handlers[s.CursorUpdate] = self.cursor_update
        handlers[s.ReplayComplete] = up.raw
        handlers[s.SubagentUpdate] = up.raw
        if not self.unstable:
            return up.unknown
        if "unknown_state" in self.unstable:
            state = handlers[s.StateUpdate]

            def state_update(u: s.StateUpdate) -> ev.Event:
                """A ``state_update``; ``unknown`` decoded as the opt-in state (P32)."""
                if u.state != "unknown" or type(u) is not s.StateUpdate:
                    return state(u)
                typed = self._convert(u)
                if isinstance(typed, RemoteProtocolError):
                    return up.reject(u, "update-rejected", str(typed))
                return state(typed)

            handlers[s.StateUpdate] = state_update

        def unknown(update: Any) -> ev.Event:
            """An unknown update, or an unstable one this session opted into."""
            typed = self._convert(update)
            if isinstance(typed, RemoteProtocolError):
                return up.reject(update, "update-rejected", str(typed))
            handler = handlers.get(type(typed)) if typed is not update else None
            return handler(typed) if handler is not None else up.unknown(update)

        return unknown

    def _convert(self, update: Any) -> Any:
        try:
            return decode_unstable_update(update, self.unstable, self._diagnostics)
        except RemoteProtocolError as exc:
            return exc

    def refer(self, session_id: str, what: str) -> None:
        """P9: a reference to a session never creates it; an unknown one is reported."""
        if not self.known(session_id):
            self._note(
                "reference-to-unknown-session",
                f"{what} names session {session_id!r}, which is not known: kept as received;"
                " no session is created (P9)",
            )

    # ------------------------------------------------------------------- plans

    def plan_removed(self, u: s.PlanRemoved) -> ev.Event:
        """``plan_removed``: the plan leaves the session; an unknown id is ignored (P45)."""
        removed = self.tl.remove_plan(u.plan_id)
        return ev.PlanRemoved(session_id=self.session_id, plan_id=u.plan_id, removed=removed)

    # --------------------------------------------------- inter-session messages

    def session_message(self, u: s.SessionMessage) -> ev.Event:
        """``session_message``: upsert the message; participants and content patched (P12)."""
        msg, created = self.tl.session_message(u.message_id)
        for name in _PARTICIPANTS:
            value = getattr(u, name)
            if value is UNSET:
                continue
            setattr(msg, name, value)
            if value is not None and name.endswith("session_id"):
                self.refer(value, f"session message {u.message_id!r}")
        change: ev.ContentChange = "unchanged"
        if u.content is not UNSET:
            msg._content, change = replaced_content(msg, msg._content, u.content)
            self._up.retain(msg, msg._content)
        self._up.patched(msg, u, "session message", u.message_id)
        return ev.SessionMessageUpserted(
            self.session_id, u.message_id, created, change, msg.index, msg.version
        )

    def session_message_chunk(self, u: s.SessionMessageChunk) -> ev.Event:
        """``session_message_chunk``: append one block; an unseen id creates it (P13)."""
        msg, created = self.tl.session_message(u.message_id)
        append_chunk(msg, msg._content, compact(u.content), u.meta)
        self._up.retain(msg, msg._content)
        msg.last_changed = self.tl.ordinal
        version = self.tl.stamp(msg)
        return ev.SessionMessageChunkAppended(
            self.session_id, u.message_id, u.content, created, msg.index, version
        )

    # ------------------------------------------------------ prompt suggestions

    def suggestions_update(self, u: s.PromptSuggestionsUpdate) -> ev.Event:
        """Replace the suggestion list (P34, P36); not during a replay (P37)."""
        if self._replaying():
            self._note(
                "suggestions-during-replay",
                "prompt_suggestions_update during a replay: stale, not applied (P37, R83)",
            )
            return ev.PromptSuggestionsUpdated(self.session_id, len(u.suggestions), applied=False)
        if self.advertised is not None and not self.advertised():
            self._note(
                "suggestions-not-advertised",
                "prompt_suggestions_update although the client did not advertise"
                " `capabilities.session.promptSuggestions`: applied (P39, R85)",
            )
        self.suggestions = list(u.suggestions)
        return ev.PromptSuggestionsUpdated(self.session_id, len(u.suggestions))

    def clear_suggestions(self) -> None:
        """A ``session/resume`` was sent or a ``session/close`` succeeded (P38, R84)."""
        self.suggestions = None

    # ----------------------------------------------------------------- cursors

    def cursor_update(self, u: s.CursorUpdate) -> ev.Event:
        """Upsert a cursor: the anchor fixed once set, the rest patched (P40-P43)."""
        cursor, created = self.tl.cursor(u.cursor_id)
        anchor = u.anchor if u.anchor is not UNSET else None
        if anchor is not None:
            if cursor.anchor is None:
                cursor.anchor = anchor
                self._check_anchor(u.cursor_id, anchor)
            elif to_builtins(anchor) != to_builtins(cursor.anchor):
                self._note(
                    "cursor-anchor-changed",
                    f"cursor {u.cursor_id!r}: a different anchor is ignored; the anchor is"
                    " fixed by the first one (P42)",
                )
        elif cursor.anchor is None:
            self._note(
                "cursor-without-anchor",
                f"cursor {u.cursor_id!r} has no anchor yet: kept anchorless (P41)",
            )
        if u.capabilities is not UNSET:
            cursor.capabilities = u.capabilities
        cursor.meta = meta_patch(cursor.meta, u.meta)
        if u.extra is not UNSET:
            self._up.check_shadowed(u.extra, "cursor", u.cursor_id)
            cursor.extra = patch_extra(cursor.extra, u.extra)
        self.tl.changes += 1
        cursor.version = self.tl.changes
        return ev.CursorUpserted(self.session_id, u.cursor_id, created, cursor.version)

    def _check_anchor(self, cursor_id: str, anchor: Any) -> None:
        store = _ANCHOR_STORES.get(type(anchor))
        if store is not None and _anchor_id(anchor) not in store(self.tl):
            self._note(
                "cursor-anchor-unresolved",
                f"cursor {cursor_id!r} is anchored to {_anchor_id(anchor)!r}, which this"
                " session does not hold: stored, nothing created (P43)",
            )
