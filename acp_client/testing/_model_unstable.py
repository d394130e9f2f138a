"""The reference model's opt-in unstable features of the ACP v2 Preview (docs/preview.md).

Owns, for a model built with ``unstable=``: prompt suggestions (``"prompt_suggestions"``:
the list replaced whole, malformed items dropped, ``[]`` withdraws, not applied while
replaying, cleared when a resume is sent or a close succeeds: P34-P39) and cursors
(``"cursors"``: their own id space outside the timeline, the first anchor kept,
``capabilities`` and ``_meta`` patched, moved aside by a replay and dropped at its end
unless announced again: P40-P44). The ``unknown`` state (``"unknown_state"``, P32-P33) is
part of the state rule in :mod:`._model_updates`. Without an opt-in these updates are
unknown variants, kept raw. Written against the Preview addendum (docs/preview.md), sharing
nothing with the library's ``_preview``.
"""

from __future__ import annotations

import copy
from typing import Any

from ._model_items import _is_obj, _is_str, _patch_extras, _patch_meta, clean_content_block
from ._model_state import _Rejected, _Session

__all__ = ["UNSTABLE_FEATURES"]

UNSTABLE_FEATURES = frozenset({"prompt_suggestions", "cursors", "unknown_state"})
"""The opt-in names :class:`~acp_client.testing.ReferenceModel` accepts (Preview P0)."""
_UPDATE_OF_FEATURE = {
    "prompt_suggestions": "prompt_suggestions_update",
    "cursors": "cursor_update",
}
_CURSOR_KEYS = frozenset({"sessionUpdate", "cursorId", "anchor", "capabilities", "_meta"})


def opted_updates(features: frozenset[str]) -> frozenset[str]:
    """The update kinds the opted-in ``features`` make known."""
    return frozenset(_UPDATE_OF_FEATURE[f] for f in features if f in _UPDATE_OF_FEATURE)


def _suggestion(item: Any) -> dict[str, Any] | None:
    """A suggestion as kept: ``prompt`` a non-empty list of valid blocks (else dropped)."""
    if not _is_obj(item) or not isinstance(item.get("prompt"), list) or not item["prompt"]:
        return None
    if any(clean_content_block(block) is None for block in item["prompt"]):
        return None
    kept = copy.deepcopy(item)
    if "_meta" in kept and not _is_obj(kept["_meta"]):
        del kept["_meta"]  # default-on-error
    return kept


class _UnstableRules:
    """Suggestions and cursors on the model's plain sessions (opt-in)."""

    def _u_prompt_suggestions_update(self, s: _Session, u: dict[str, Any]) -> None:
        items = u.get("suggestions")
        if not isinstance(items, list):
            raise _Rejected  # P34: a non-array list rejects the update
        s.ordinal += 1
        if s.replaying:
            return  # P37: stale, not applied
        s.suggestions = [kept for kept in map(_suggestion, items) if kept is not None]

    def _u_cursor_update(self, s: _Session, u: dict[str, Any]) -> None:
        cursor_id = u.get("cursorId")
        anchor = u.get("anchor")
        if not _is_str(cursor_id) or (anchor is not None and not _is_obj(anchor)):
            raise _Rejected  # the id and the anchor are strict
        s.ordinal += 1
        if s.cursors is None:
            s.cursors = {}
        cursor = s.cursors.get(cursor_id)
        if cursor is None:  # P40; P44: one a replay moved aside comes back with its anchor
            cursor = s.previous_cursors.pop(cursor_id, None) or {"cursorId": cursor_id}
            s.cursors[cursor_id] = cursor
        if anchor is not None and "anchor" not in cursor:
            cursor["anchor"] = copy.deepcopy(anchor)  # P41, P42: the first anchor stays
        if "capabilities" in u:  # P43: null clears, an object replaces the whole
            if u["capabilities"] is None:
                cursor.pop("capabilities", None)
            elif _is_obj(u["capabilities"]):
                cursor["capabilities"] = copy.deepcopy(u["capabilities"])
        _patch_meta(cursor, u)
        extra = {k: v for k, v in cursor.items() if k not in _CURSOR_KEYS}
        _patch_extras(extra, u, _CURSOR_KEYS)
        for key in [k for k in cursor if k not in _CURSOR_KEYS]:
            del cursor[key]
        cursor.update(extra)

    @staticmethod
    def _cursors_replayed(s: _Session) -> None:
        """P44: a replay starts; the cursors move aside."""
        if s.cursors is not None:
            s.previous_cursors, s.cursors = s.cursors, {}

    @staticmethod
    def _cursors_settled(s: _Session) -> None:
        """P44: the replay ended; cursors not announced again are dropped, not unretained."""
        s.previous_cursors = {}
