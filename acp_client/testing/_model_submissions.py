"""The reference model's prompt submissions, keyed ones included (spec 10; Preview P26-P30).

Owns: what reading a ``session/prompt`` and its answer does to the session's PROMPT
records. An unkeyed prompt is its own submission (spec 10.3-10.5, R8). A prompt carrying
an ``idempotencyKey`` the session already sent is an *attempt* of that submission, never
a second one (P26, P27: exact, case-sensitive, per session); the submission is accepted
once any attempt succeeded, rejected only when every attempt failed, pending otherwise,
with the last failure's error (P29); its first success binds the ``messageId`` and a later
one never rebinds it (P30). Part of :class:`~acp_client.testing.ReferenceModel`, written
against the Preview addendum (docs/preview.md), sharing nothing with the library's ``_prompts``.
"""

from __future__ import annotations

import copy
from typing import Any

from ._model_items import _is_obj, _is_str
from ._model_state import _is_idle, _Pending, _Session

__all__: list[str] = []


class _SubmissionRules:
    """Prompt submissions and their attempts, on the model's plain sessions."""

    def _prompt_sent(self, s: _Session, request_id: Any, params: Any, pending: _Pending) -> None:
        """A ``session/prompt`` was read going out (spec 10.3; P26, P27)."""
        key = params.get("idempotencyKey") if _is_obj(params) else None
        attempt: dict[str, Any] = {"requestId": request_id, "status": "pending"}
        if _is_str(key):
            for record in reversed(s.prompts):
                if record.get("idempotencyKey") == key:  # P27: another attempt
                    record["attempts"].append(attempt)
                    if record["status"] == "rejected":
                        record["status"] = "pending"  # P29: pending again
                        record.pop("error", None)
                    pending.record, pending.attempt = record, attempt
                    return
        pending.record = {"requestId": request_id, "status": "pending"}
        if _is_str(key):
            pending.record.update(idempotencyKey=key, attempts=[attempt])
            pending.attempt = attempt
        s.prompts.append(pending.record)
        if _is_idle(s):
            s.cancel_requested = False  # the next work's prompt (11.2)

    def _prompt_answered(self, pending: _Pending, ok: bool, result: Any, error: Any) -> bool:
        """Its answer; return whether the submission became accepted by it."""
        record, attempt = pending.record, pending.attempt
        assert record is not None
        message_id = result.get("messageId") if ok and _is_obj(result) else None
        if attempt is not None:
            attempt["status"] = "accepted" if ok else "rejected"
            if not ok:
                attempt["error"] = copy.deepcopy(error)
            elif _is_str(message_id):
                attempt["messageId"] = message_id
            if record["status"] != "pending":
                return False  # P29, P30: an earlier success decided it
            if not ok and any(a["status"] != "rejected" for a in record["attempts"]):
                return False  # P29: another attempt is pending
        if ok:
            record["status"] = "accepted"
            # R8: without a string messageId the prompt is accepted but cannot be linked.
            if _is_str(message_id):
                record["messageId"] = message_id
            return True
        record["status"] = "rejected"
        record["error"] = copy.deepcopy(error)
        return False
