"""The reference model's rules for the ACP v2 Preview updates it follows (docs/preview.md).

Owns: inter-session messages (``session_message`` UPSERT with the four participant fields
PATCHed, ``content`` D+S and ``_meta`` META-PATCHed; ``session_message_chunk`` UPSERT +
APPEND; their own id space, never a user message: P12-P15), ``plan_removed`` (the plan
leaves the session, an unknown id is ignored: P45) Written against ACP-V2-PREVIEW.md
section 3 like the rest of :class:`~acp_client.testing.ReferenceModel`, sharing nothing
with the library's reducer.

and the replay boundary's ``replay_complete`` on a resumed session (P18-P20: the replay ends
at the marker, the resume window stays open until the response, the snapshot's ``replay``
key appears once a marker was seen).

Not followed here (the model stays single-session and passive): the session tree
(P1-P11), children's replays, truncated replays and their diagnostics (P21-P25),
idempotent submissions (P26-P30) and the opt-in features (P32-P44).
"""

from __future__ import annotations

from collections.abc import Callable
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
        block = clean_content_block(u.get("content"))
        if not _is_str(u.get("messageId")) or block is None:
            raise _Rejected
        s.ordinal += 1
        # P13: an unseen id creates the message, participants unset; chunk `_meta` not stored
        self._session_message(s, u["messageId"]).fields["content"].append(block)

    _end_replay: Callable[[_Session], None]  # the connection part's (ReferenceModel, 12.3)

    def _u_replay_complete(self, s: _Session, u: dict[str, Any]) -> None:
        """P18: the replay ends at the marker, not at the response.

        P19: until the response, a state update is still the resume snapshot (no completion).
        """
        if not s.replaying:
            return  # P23: unexpected (a diagnostic in the library), no state change
        s.ordinal += 1
        self._end_replay(s)
        s.marked = True
        s.resuming += 1
        s.replay = {
            "phase": "live",
            "complete": True,
            "truncated": False,
            "requestId": s.replay_request,
        }

    def _u_plan_removed(self, s: _Session, u: dict[str, Any]) -> None:
        if not _is_str(u.get("planId")):
            raise _Rejected
        s.ordinal += 1
        s.plans.pop(u["planId"], None)  # P45: an unknown id changes nothing
