"""Hypothesis strategies for ACP v2 Preview traffic (docs/preview.md).

Owns: :func:`session_message_traffic` (inter-session messages whole and chunked, their
participant fields set, kept, cleared, ``content`` reset; ``plan_update`` /
``plan_removed`` pairs with unknown ids now and then: P12-P15, P45),
:func:`child_sessions` (children announced by ``subagent_update`` on their parent, nested
ones, their own traffic on their own ids, some of it before the announcement, association
patches and refused announcements: P1-P9, P31) and the keyed prompt attempts of a turn
(``_keyed_attempts``: a retry after a lost response or an error, or two attempts in
flight, the agent inserting the prompt once: P26-P30), which
:func:`~acp_client.testing.strategies.conversations` mixes in with ``session_messages``,
``children`` and ``retries``. Replays with and without ``replay_complete`` are
``conversations(replay_markers=True)``'s. Private helpers of
:mod:`acp_client.testing.strategies`.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ._fake_agent import FakeAgent
from ._strategies_content import any_blocks, metas, text_blocks
from ._strategies_splits import Exchange, _merge, _text_rechunkings

__all__ = ["child_sessions", "session_message_traffic"]

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


# -- the session tree (P1-P9, P31) ----------------------------------------------------


def _text_block(text: str) -> dict[str, Any]:
    """A text content block."""
    return {"type": "text", "text": text}


_TITLES = st.text(min_size=1, max_size=12)
_MIRRORS = st.sampled_from(["running", "idle", "requires_action"]).map(lambda s: {"state": s})


@st.composite
def _association(draw: st.DrawFn, first: bool) -> dict[str, Any]:
    """The fields of a ``subagent_update``: each omitted, set or (after the first) ``null``."""
    fields: dict[str, Any] = {}
    values: dict[str, st.SearchStrategy[Any]] = {
        "title": _TITLES,
        "description": _TITLES,
        "capabilities": st.sampled_from([{}, {"cancel": {}}]),
        "state": _MIRRORS,
        "cwd": st.sampled_from(["/work/a", "/work/b"]),
        "additionalDirectories": st.lists(st.sampled_from(["/x", "/y"]), max_size=2),
        "_meta": metas,
    }
    for key, value in values.items():
        choice = draw(st.integers(0, 3))
        if choice == 1 and not first:
            fields[key] = None  # cleared (P5), the mirror removed (P31)
        elif choice >= 2:
            fields[key] = draw(value)
    return fields


@st.composite
def _child_work(draw: st.DrawFn, child_id: str, owner: str) -> Exchange:
    """A child's own traffic on its own id (P8).

    Turns of messages, thoughts, tool calls and messages from its parent, each between
    ``running`` and ``idle``.
    """
    a = FakeAgent(child_id)
    n = 0
    for _ in range(draw(st.integers(1, 2))):
        a.state("running")
        for _ in range(draw(st.integers(0, 3))):
            n += 1
            kind = draw(st.sampled_from(["text", "thought", "tool", "message"]))
            text = draw(st.text(min_size=1, max_size=12))
            if kind in ("text", "thought"):
                chunk = a.agent_chunk if kind == "text" else a.thought_chunk
                for piece in draw(_text_rechunkings(text)):
                    chunk(f"{kind[0]}{n}", piece)
            elif kind == "tool":
                a.tool_call(f"c{n}", title=text, status="in_progress")
                a.tool_call(f"c{n}", status=draw(st.sampled_from(["completed", "failed"])))
            else:  # P12, P14: the parent's message as the child received it
                update: dict[str, Any] = {"sessionUpdate": "session_message"}
                update.update(messageId=f"sm{n}", senderSessionId=owner)
                update.update(recipientSessionId=child_id, content=[_text_block(text)])
                a.update(update)
        a.state("idle", stop_reason=draw(st.sampled_from(["end_turn", "cancelled"])))
    return a.messages


@st.composite
def _child_streams(
    draw: st.DrawFn, parent_id: str, max_children: int, owners: dict[str, str] | None = None
) -> list[Exchange]:
    """The ordered pieces of a tree's traffic: each announcement's and each child's.

    ``owners`` (if given) is filled with each child's intended parent.
    """
    streams: list[Exchange] = []
    owners = {} if owners is None else owners
    for number in range(1, draw(st.integers(1, max_children)) + 1):
        child_id = f"{parent_id}.child{number}"
        nested = bool(owners) and draw(st.integers(0, 2)) == 0
        owner = draw(st.sampled_from(sorted(owners))) if nested else parent_id
        owners[child_id] = owner
        announcements = FakeAgent(owner).subagent(child_id, **draw(_association(True)))
        for _ in range(draw(st.integers(0, 2))):  # P5, P31: patches of the association
            announcements.subagent(child_id, **draw(_association(False)))
        streams += [announcements.messages, draw(_child_work(child_id, owner))]
    if draw(st.integers(0, 3)) == 0:  # P4: a child claims the root: a cycle, or a claim
        claimer = draw(st.sampled_from(sorted(owners)))
        streams.append(FakeAgent(claimer).subagent(parent_id, title="loop").messages)
    if len(owners) > 1 and draw(st.integers(0, 3)) == 0:  # P3: another parent, ignored
        child_id, other = draw(st.permutations(sorted(owners)))[:2]
        streams.append(FakeAgent(other).subagent(child_id, title="mine").messages)
    return streams


def child_sessions(
    parent_id: str = "sess_1", *, max_children: int = 3
) -> st.SearchStrategy[Exchange]:
    """Child sessions of ``parent_id`` and their traffic, in one interleaving.

    Each draw is a list of ``("incoming", session/update notification)`` pairs: 1 to
    ``max_children`` children, each announced by ``subagent_update`` on the parent or
    (nested) on an earlier child, its association patched afterwards (fields set or
    cleared, the mirrored ``state`` set or removed: P5, P31), and its own turns on its own
    ``sessionId`` (``running``, agent messages and thoughts in chunks, tool calls, a
    ``session_message`` from its parent, ``idle``: P8, P12). The pieces are interleaved in
    any order, so a child's traffic may come before its announcement (P2) and a
    grandchild's before its parent's; now and then a child announces the root (a cycle or
    a claim on a client's session, P4) or another child announces a child that has a
    parent (P3), both ignored. Child ids are ``f"{parent_id}.child{n}"``.
    """
    if not isinstance(parent_id, str) or not parent_id:
        raise InvalidArgument(f"parent_id must be a non-empty string, not {parent_id!r}")
    if not isinstance(max_children, int) or max_children < 1:
        raise InvalidArgument(f"max_children must be an int >= 1, not {max_children!r}")
    return _child_streams(parent_id, max_children).flatmap(lambda s: _merge(s))


@st.composite
def _children_replaying(
    draw: st.DrawFn, parent_id: str, replayed: Exchange, children: list[str]
) -> Exchange:
    """A parent's replayed traffic with some of its children joining the replay (P16).

    Each chosen child is announced again on the parent and replays a message of its own,
    then its own ``replay_complete`` or none (P18, P20); all interleaved with the
    parent's replayed traffic, so an announcement may also come after the parent's
    marker (the child does not join then) and a child's traffic before its announcement.
    """
    pieces = [replayed]
    for child_id in children:
        if draw(st.booleans()):
            child = FakeAgent(child_id).agent_message(f"r-{child_id}", draw(_TITLES))
            if draw(st.booleans()):
                child.replay_complete()
            pieces += [FakeAgent(parent_id).subagent(child_id).messages, child.messages]
    return draw(_merge(pieces))


# -- keyed prompt retries (P26-P30) -----------------------------------------------------


@st.composite
def _keyed_attempts(
    draw: st.DrawFn,
    session_id: str,
    key: str,
    text: str,
    request_ids: list[int],
    message_id: str | None,
) -> tuple[Exchange, Exchange]:
    """The attempts of one keyed submission: ``(requests, answers)``.

    ``requests`` holds each ``session/prompt`` of the submission, all with ``key`` (one
    the session has not used) and the same prompt, and the errors answered before the next
    attempt went out (none for a lost response); ``answers`` the last answer(s), to be
    placed anywhere before the turn ends: the success(es) with ``message_id`` (two
    attempts in flight are both answered with it, P30), or, with ``message_id=None``,
    an error (P29: rejected once every attempt failed, pending while one has no answer).
    ``request_ids`` is ``[next id]``, advanced for each attempt.
    """
    pattern = draw(st.sampled_from(["lost", "error", "concurrent", "once"]))
    count = 1 if pattern == "once" else draw(st.integers(2, 3))
    requests, answers = FakeAgent(session_id), FakeAgent(session_id)
    sent: list[int] = []
    for i in range(count):
        sent.append(request_ids[0])
        request_ids[0] += 1
        requests.prompt(sent[-1], text, idempotency_key=key)
        if pattern == "error" and (i < count - 1 or message_id is None):
            requests.error(sent[-1], -32603, "Internal error")  # then retried (P29)
    final = sent if pattern == "concurrent" else sent[-1:]
    for rid in final if pattern != "error" or message_id is not None else []:
        if message_id is None:
            answers.error(rid, -32602, "Invalid params")
        else:
            answers.prompt_response(rid, message_id)  # the agent inserts it once (P30)
    return requests.messages, answers.messages
