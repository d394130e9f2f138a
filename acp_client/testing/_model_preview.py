"""The reference model's rules for the ACP v2 Preview's session messages and plan removal.

Owns: inter-session messages (``session_message`` UPSERT with the four participant fields
PATCHed, ``content`` D+S and ``_meta`` META-PATCHed; ``session_message_chunk`` UPSERT +
APPEND; their own id space, never a user message: P12-P15) and ``plan_removed`` (the plan
leaves the session, an unknown id is ignored: P45). Written against ACP-V2-PREVIEW.md
section 3 like the rest of :class:`~acp_client.testing.ReferenceModel`, sharing nothing
with the library's reducer. The tree and the replay boundary are :mod:`._model_tree`'s,
keyed submissions :mod:`._model_submissions`'.
"""

from __future__ import annotations

from typing import Any

from ._model_items import _is_str, _patch_extras, _patch_field, _patch_list, _patch_meta
from ._model_items import clean_content_block as clean_content_block
from ._model_state import _Entity, _Rejected, _Session
from ._model_updates import _UpdateRules

__all__: list[str] = []

_PARTICIPANTS = ("senderSessionId", "recipientSessionId", "senderMessageId", "recipientMessageId")
_SESSION_MESSAGE_KEYS = frozenset(
    {"sessionUpdate", "messageId", "content", "_meta", *_PARTICIPANTS}
)


class _PreviewRules(_UpdateRules):
    """``session_message`` / ``session_message_chunk`` / ``plan_removed`` (P12-P15, P45)."""

    def _session_message(self, s: _Session, message_id: str) -> _Entity:
        # P12: an id space of its own, beside user/agent/thought messages
        return self._touch(
            s, ("sessionMessage", message_id), lambda: {"messageId": message_id, "content": []}
        )

    def _u_session_message(self, s: _Session, u: dict[str, Any]) -> None:
        if not _is_str(u.get("messageId")):
            raise _Rejected
        s.ordinal += 1
        entity = self._session_message(s, u["messageId"])
        for key in _PARTICIPANTS:  # P12: three-state PATCH each
            _patch_field(entity.fields, u, key, _is_str)
        _patch_list(entity.fields, u, "content", clean_content_block)  # null/[] clear
        _patch_meta(entity.fields, u)
        _patch_extras(entity.extra, u, _SESSION_MESSAGE_KEYS)

    def _u_session_message_chunk(self, s: _Session, u: dict[str, Any]) -> None:
        # P13: an unseen id creates the message, participants unset; chunk `_meta` not stored
        self._append_chunk(s, u, "messageId", "content", lambda i: self._session_message(s, i))

    def _u_plan_removed(self, s: _Session, u: dict[str, Any]) -> None:
        if not _is_str(u.get("planId")):
            raise _Rejected
        s.ordinal += 1
        s.plans.pop(u["planId"], None)  # P45: an unknown id changes nothing
