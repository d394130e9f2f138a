"""Hypothesis strategies for ACP v2 Preview traffic of one session (docs/preview.md).

Owns: :func:`session_message_traffic` (inter-session messages whole and chunked, their
participant fields set, kept, cleared, ``content`` reset; ``plan_update`` /
``plan_removed`` pairs with unknown ids now and then: ACP-V2-PREVIEW P12-P15, P45), which
:func:`~acp_client.testing.strategies.conversations` mixes in with
``session_messages=True``. Private helpers of :mod:`acp_client.testing.strategies`.

Not generated here (yet): child sessions and their announcements (P1-P11), resumes whose
replay ends in ``replay_complete`` (P16-P25), keyed prompt retries (P26-P30).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ._strategies_content import any_blocks, metas, text_blocks
from ._strategies_splits import Exchange

__all__ = ["session_message_traffic"]

_SESSIONS = st.sampled_from(["sess_parent", "sess_child", "sess_other"])
_PARTICIPANTS = ("senderSessionId", "recipientSessionId", "senderMessageId", "recipientMessageId")


def _notify(session_id: str, update: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    params = {"sessionId": session_id, "update": update}
    return ("incoming", {"jsonrpc": "2.0", "method": "session/update", "params": params})


@st.composite
def _upsert(draw: st.DrawFn, message_id: str) -> dict[str, Any]:
    """A ``session_message``: each participant field omitted, set, or ``null`` (P12)."""
    update: dict[str, Any] = {"sessionUpdate": "session_message", "messageId": message_id}
    for key in _PARTICIPANTS:
        choice = draw(st.integers(0, 3))
        if choice == 1:
            update[key] = None
        elif choice >= 2:
            update[key] = draw(_SESSIONS) if key.endswith("SessionId") else draw(_ids("pm"))
    choice = draw(st.integers(0, 4))
    if choice == 1:
        update["content"] = draw(st.sampled_from([None, []]))  # clears, chunks included
    elif choice >= 2:
        update["content"] = draw(st.lists(any_blocks, max_size=2))  # replaces whole
    if draw(st.integers(0, 3)) == 0:
        update["_meta"] = draw(st.one_of(st.none(), metas))
    return update


def _ids(prefix: str) -> st.SearchStrategy[str]:
    return st.integers(1, 3).map(lambda n: f"{prefix}{n}")


@st.composite
def _session_message_traffic(draw: st.DrawFn, session_id: str, max_updates: int) -> Exchange:
    out: Exchange = []
    plans: list[str] = []
    for _ in range(draw(st.integers(1, max_updates))):
        kind = draw(st.sampled_from(["whole", "chunk", "chunk", "plan", "removed"]))
        if kind == "whole":
            update = draw(_upsert(draw(_ids("sm"))))
        elif kind == "chunk":  # P13: before, between or after the upserts of its id
            update = {
                "sessionUpdate": "session_message_chunk",
                "messageId": draw(_ids("sm")),
                "content": draw(text_blocks),
            }
            if draw(st.booleans()):
                update["_meta"] = draw(metas)  # chunk-scoped: never stored
        elif kind == "plan":
            plan_id = draw(_ids("pp"))
            plans.append(plan_id)
            plan = {"type": "markdown", "planId": plan_id, "content": draw(st.text(max_size=8))}
            update = {"sessionUpdate": "plan_update", "plan": plan}
        else:  # P45: a known plan, or an id never seen (ignored)
            known = bool(plans) and draw(st.booleans())
            plan_id = draw(st.sampled_from(plans)) if known else "pp9"
            update = {"sessionUpdate": "plan_removed", "planId": plan_id}
        out.append(_notify(session_id, update))
    return out


def session_message_traffic(
    session_id: str = "sess_1", *, max_updates: int = 8
) -> st.SearchStrategy[Exchange]:
    """Agent traffic of the ACP v2 Preview for one session, valid by construction.

    Each draw is a list of ``("incoming", session/update notification)`` pairs mixing
    ``session_message`` upserts (each participant field omitted, set or ``null``;
    ``content`` omitted, replaced or cleared; ``_meta`` patched) with
    ``session_message_chunk`` appends of the same few ids in any order (P12-P15), and
    markdown ``plan_update`` / ``plan_removed`` pairs, now and then removing an id never
    seen (P45). Safe between turns: none of it changes the session's state.
    """
    if not isinstance(session_id, str) or not session_id:
        raise InvalidArgument(f"session_id must be a non-empty string, not {session_id!r}")
    if not isinstance(max_updates, int) or max_updates < 1:
        raise InvalidArgument(f"max_updates must be an int >= 1, not {max_updates!r}")
    return _session_message_traffic(session_id, max_updates)
