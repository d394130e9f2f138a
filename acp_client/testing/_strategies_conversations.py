"""Hypothesis strategies for whole ACP v2 conversations of one session, and stored logs.

Owns: :func:`conversations` (initialize, ``session/new``, turns with every kind of agent
activity, cancels, held prompts, resume with replay, close: spec 3-12, valid by
construction) and :func:`stored_logs` (a conversation in each LOG-FORMATS format).
Private helpers of :mod:`acp_client.testing.strategies`.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ._fake_agent import LOG_FORMATS, FakeAgent, StoredLog, log_lines
from ._strategies_content import (
    _CONFIG_ID,
    _NAME,
    absolute_paths,
    any_blocks,
    commands,
    config_options,
    custom_names,
    json_values,
    plan_entries,
)
from ._strategies_preview import (
    _child_streams,
    _children_replaying,
    _keyed_attempts,
    session_message_traffic,
)
from ._strategies_splits import (
    _WHOLE,
    Exchange,
    _byte_splits,
    _check_session,
    _merge,
    _text_rechunkings,
)

# -- conversations ------------------------------------------------------------------------


class _Ids:
    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def __call__(self, prefix: str) -> str:
        self.counts[prefix] = self.counts.get(prefix, 0) + 1
        return f"{prefix}{self.counts[prefix]}"


_texts = st.text(min_size=1, max_size=24)


def _chunks_or_whole(draw: st.DrawFn, a: FakeAgent, role: str, mid: str, text: str) -> None:
    style = draw(st.sampled_from(["chunks", "whole", "whole+chunks", "blocks", "reset"]))
    whole = {"user": a.user_message, "agent": a.agent_message, "thought": a.thought}[role]
    chunk = {"user": a.user_chunk, "agent": a.agent_chunk, "thought": a.thought_chunk}[role]
    if style == "reset":  # stale content cleared by `null` or `[]` (4.2), then the chunks
        whole(mid, draw(_texts))
        whole(mid, draw(st.sampled_from([None, []])))
        style = "chunks"
    if style == "whole":
        whole(mid, text)
    elif style == "blocks":
        whole(mid, draw(st.lists(any_blocks, min_size=1, max_size=3)))
    else:
        pieces = draw(_text_rechunkings(text))
        if draw(st.integers(0, 7)) == 7:  # an empty text block is a chunk too
            pieces.insert(draw(st.integers(0, len(pieces))), "")
        if style == "whole+chunks":
            whole(mid, pieces[0])
            pieces = pieces[1:]
        for piece in pieces:
            chunk(mid, piece)


def _activity(draw: st.DrawFn, sid: str, ids: _Ids, agent_rid: list[int]) -> Exchange:
    """One piece of agent activity inside a turn, as its own ordered script."""
    a = FakeAgent(sid)
    kind = draw(
        st.sampled_from(
            [
                "agent_text",
                "thought",
                "tool",
                "terminal",
                "plan",
                "usage",
                "commands",
                "config",
                "info",
                "notice",
                "compaction",
                "custom",
                "permission",
                "other_user",
            ]
        )
    )
    if kind == "agent_text":
        _chunks_or_whole(draw, a, "agent", ids("a"), draw(_texts))
    elif kind == "thought":
        _chunks_or_whole(draw, a, "thought", ids("th"), draw(_texts))
    elif kind == "other_user":  # another client's or a queued input: no prompt of ours
        _chunks_or_whole(draw, a, "user", ids("x"), draw(_texts))
    elif kind == "tool":
        cid = ids("c")
        a.tool_call(
            cid,
            title=draw(_texts),
            kind=draw(st.sampled_from(["read", "edit", "other"])),
            status="pending",
        )
        for _ in range(draw(st.integers(0, 2))):
            a.tool_content_chunk(cid, draw(_texts))
        a.tool_call(
            cid, status="in_progress", locations=[{"path": draw(absolute_paths), "line": 1}]
        )
        final: dict[str, Any] = {"status": draw(st.sampled_from(["completed", "failed"]))}
        if draw(st.booleans()):
            final["content"] = [{"type": "content", "content": draw(any_blocks)}]
        if draw(st.booleans()):
            final["rawOutput"] = draw(json_values)
        a.tool_call(cid, **final)
    elif kind == "terminal":
        cid, tid = ids("c"), ids("t")
        a.tool_call(
            cid,
            title="Run",
            kind="execute",
            status="in_progress",
            content=[{"type": "terminal", "terminalId": tid}],
        )
        a.terminal(tid, command=draw(_texts), cwd="/work")
        data = draw(st.text(max_size=20)).encode()
        for piece in draw(_byte_splits(data)):
            a.terminal_chunk(tid, piece)
        if draw(st.booleans()):
            a.terminal(tid, output=draw(st.binary(max_size=8)))
        a.terminal(tid, exitStatus={"exitCode": draw(st.integers(-1, 2))})
        a.tool_call(cid, status="completed")
    elif kind == "plan":
        a.plan(draw(st.sampled_from(["p1", "p2"])), draw(st.lists(plan_entries, max_size=3)))
    elif kind == "usage":
        cost = draw(st.one_of(st.none(), st.tuples(st.floats(0, 100), st.just("USD"))))
        a.usage(draw(st.integers(0, 10**6)), 10**6, cost)
    elif kind == "commands":
        a.commands(draw(st.lists(commands, max_size=2, unique_by=_NAME)))
    elif kind == "config":
        a.config_options(draw(st.lists(config_options(), max_size=2, unique_by=_CONFIG_ID)))
    elif kind == "info":
        a.session_info(title=draw(_texts), updatedAt="2025-06-01T12:00:00Z")
    elif kind == "notice":
        a.notice(draw(st.sampled_from(["info", "warning", "error"])), draw(_texts))
    elif kind == "compaction":
        kid = ids("k")
        a.compaction(kid, "in_progress")
        for _ in range(draw(st.integers(0, 2))):
            a.compaction_chunk(kid, draw(_texts))
        a.compaction(kid, "completed", summary=[{"type": "text", "text": draw(_texts)}])
    elif kind == "custom":
        a.custom(draw(custom_names), payload=draw(json_values))
    else:  # permission
        cid = ids("c")
        rid = agent_rid[0]
        agent_rid[0] += 1
        a.tool_call(cid, title=draw(_texts), kind="edit", status="pending")
        a.permission_request(rid, draw(_texts), cid)
        a.state("requires_action")
        a.permission_answer(rid, draw(st.sampled_from(["allow-once", "reject-once", None])))
        a.state("running")
        a.tool_call(cid, status=draw(st.sampled_from(["completed", "cancelled"])))
    return a.messages


@st.composite
def _turn(
    draw: st.DrawFn,
    sid: str,
    ids: _Ids,
    client_rid: list[int],
    agent_rid: list[int],
    history: list[tuple[str, str, str]],
    retries: bool = False,
) -> tuple[Exchange, tuple[int, int] | None]:
    """One turn, and where the next turn's prompt may be sent while this one is busy.

    The window is the stretch between ``running`` and the idle of a turn that ends normally:
    a prompt sent there is held, then inserted (answered) after the idle (10.2).
    """
    rid = client_rid[0]
    client_rid[0] += 1
    text = draw(_texts)
    outcome = draw(st.sampled_from(["end", "end", "rejected", "cancel"]))
    keyed = retries and draw(st.booleans())
    if keyed:  # ACP v2 Preview P26-P30: attempts under one key, numbered from rid
        client_rid[0] = rid
        uid = None if outcome == "rejected" else ids("u")
        requests, response = draw(_keyed_attempts(sid, ids("key-"), text, client_rid, uid))
    else:
        requests = FakeAgent(sid).prompt(rid, text).messages
    if outcome == "rejected":
        if keyed:
            return requests + response, None
        rejection = FakeAgent(sid).prompt_error(rid, -32602, "Invalid params").messages[0]
        return [*requests, rejection], None
    if not keyed:
        uid = ids("u")
        response = FakeAgent(sid).prompt_response(rid, uid).messages
    assert uid is not None
    history.append(("user", uid, text))
    echo = FakeAgent(sid)
    _chunks_or_whole(draw, echo, "user", uid, text)
    running = FakeAgent(sid).state("running").messages
    segments = [_activity(draw, sid, ids, agent_rid) for _ in range(draw(st.integers(1, 5)))]
    # The response, the echo and the work are independent (10.4, R49): the response may
    # come after agent output or another client's user message, never after the idle.
    work = running + draw(_merge(segments))
    out = [*requests, *draw(_merge([response, echo.messages, work]))]
    tail = FakeAgent(sid)
    if outcome == "cancel":
        cid = ids("c")
        tail.tool_call(cid, title="Slow", status="in_progress")
        pending = None
        if draw(st.booleans()):
            pending = agent_rid[0]
            agent_rid[0] += 1
            tail.permission_request(pending, "Continue?", cid)
        held = None
        if draw(st.integers(0, 3)) == 3:  # a prompt sent while busy, held by the agent
            held = client_rid[0]
            client_rid[0] += 1
            tail.prompt(held, draw(_texts))
        tail.cancel()
        if pending is not None:
            tail.permission_answer(pending, None)  # spec 11.2: every pending one, cancelled
        if held is not None:
            tail.prompt_error(held, -32800, "Request cancelled")  # 10.2: withdrawn
        if draw(st.booleans()):
            tail.agent_chunk(ids("a"), draw(_texts))  # output flushed after the cancel
        # R17: the agent's later status wins over the local mark, whatever it is.
        tail.tool_call(cid, status=draw(st.sampled_from(["cancelled", "completed", "failed"])))
        tail.state("idle", stop_reason="cancelled")
    else:
        reason = draw(
            st.sampled_from(
                ["end_turn", "max_tokens", "max_turn_requests", "refusal", "error", "_acme_stop"]
            )
        )
        if reason == "error":
            tail.update(
                {
                    "sessionUpdate": "state_update",
                    "state": "idle",
                    "stopReason": "error",
                    "error": {"code": -32603, "message": "timeout"},
                }
            )
        else:
            tail.state("idle", stop_reason=reason)
        if draw(st.booleans()):
            tail.state(
                "idle", stop_reason=reason if reason != "error" else "end_turn"
            )  # repeated snapshot
    if outcome == "cancel":
        return out + tail.messages, None
    running_at = next(i for i, m in enumerate(out) if m in running)
    return out + tail.messages, (running_at + 1, len(out))


@st.composite
def _replay(
    draw: st.DrawFn,
    sid: str,
    client_rid: list[int],
    history: list[tuple[str, str, str]],
    markers: bool = False,
    children: list[str] | None = None,
) -> Exchange:
    a = FakeAgent(sid)
    rid = client_rid[0]
    client_rid[0] += 1
    a.resume(rid, replay=True)
    kept = [h for h in history if draw(st.booleans())]  # the rest is not retained
    for role, mid, text in kept:
        if draw(st.booleans()):
            {"user": a.user_message, "agent": a.agent_message, "thought": a.thought}[role](
                mid, text
            )
        else:
            a.update({"sessionUpdate": _WHOLE[role], "messageId": mid, "content": []})
            for piece in draw(_text_rechunkings(text)):
                {"user": a.user_chunk, "agent": a.agent_chunk, "thought": a.thought_chunk}[role](
                    mid, piece
                )
    # ACP v2 Preview P18-P20: replay_complete before or after the current-state snapshot,
    # or none (an agent built on 2.4.0); "live": the snapshot says running and the work's
    # idle is flushed after the marker, before the response (P19: state only, no
    # completion). Only drawn with ``markers``.
    choices = ["before", "after", "live", "none"]
    marker = draw(st.sampled_from(choices)) if markers else "none"
    if marker == "before":
        a.update({"sessionUpdate": "replay_complete"})
    if marker == "live":
        a.state("running")
        a.update({"sessionUpdate": "replay_complete"})
    a.state("idle", stop_reason="end_turn")  # the current-state snapshot (spec 12.3)
    if marker == "after":
        a.update({"sessionUpdate": "replay_complete"})
    out = a.messages
    if children:  # ACP v2 Preview P16: children join the replay (only with markers)
        out[1:] = draw(_children_replaying(sid, out[1:], children))
    # P21, P22 (only with markers): an error answer, or a log whose connection ends and
    # starts again (a new initialize) before the answer: truncated unless marked
    end = draw(st.sampled_from(["ok", "ok", "ok", "error", "reconnect"])) if markers else "ok"
    if end == "error":
        return out + FakeAgent(sid).error(rid, -32603, "Internal error").messages
    if end == "reconnect":
        rid = client_rid[0]
        client_rid[0] += 1
        return out + FakeAgent(sid).initialize(rid).messages
    return out + FakeAgent(sid).resume_response(rid).messages


@st.composite
def _conversations(
    draw: st.DrawFn,
    session_id: str,
    max_turns: int,
    initialize: bool,
    resume: bool | None,
    close: bool | None = False,
    session_messages: bool = False,
    replay_markers: bool = False,
    children: bool = False,
    retries: bool = False,
) -> Exchange:
    ids = _Ids()
    client_rid, agent_rid = [0], [0]
    history: list[tuple[str, str, str]] = []
    a = FakeAgent(session_id)
    out: Exchange = []
    if initialize:
        out += a.initialize(0).messages
        client_rid[0] = 1
    new = FakeAgent(session_id)
    rid = client_rid[0]
    client_rid[0] += 1
    new.new_session(rid, respond=False)
    if draw(st.booleans()):
        # Scenario 15: an update may arrive before the session/new result (R50).
        new.commands([("help", "Show help")])
    new.new_session_response(
        rid, available_commands=[{"type": "command", "name": "init", "description": "Init"}]
    )
    out += new.messages
    if session_messages and draw(st.booleans()):
        out += draw(session_message_traffic(session_id))
    set_up = len(out)
    window: tuple[int, int] | None = None
    previous: Exchange = []
    for _ in range(draw(st.integers(1, max_turns))):
        turn, next_window = draw(_turn(session_id, ids, client_rid, agent_rid, history, retries))
        if window is not None and draw(st.integers(0, 3)) == 3:
            # Sent while the previous turn was busy: held, answered after its idle (10.2).
            previous.insert(draw(st.integers(*window)), turn.pop(0))
        out += previous
        previous, window = turn, next_window
    out += previous
    owners: dict[str, str] = {}
    if children:  # ACP v2 Preview P1-P9: the tree's traffic anywhere after the setup
        streams = draw(_child_streams(session_id, 3, owners))
        out[set_up:] = draw(_merge([out[set_up:], *streams]))
    if session_messages:  # between turns: the session is idle, nothing is held
        out += draw(session_message_traffic(session_id))
    if resume is True or (resume is None and draw(st.booleans())):
        direct = [c for c, owner in owners.items() if owner == session_id and replay_markers]
        out += draw(_replay(session_id, client_rid, history, replay_markers, direct))
    if close is True or (close is None and draw(st.booleans())):
        c = FakeAgent(session_id)
        rid = client_rid[0]
        client_rid[0] += 1
        c.close(rid)
        if draw(st.integers(0, 3)) == 0:
            c.error(rid, -32002, "Session not found")  # counts as closed (11.5)
        else:
            c.close_response(rid)
        out += c.messages
    return out


def conversations(
    *,
    session_id: str = "sess_1",
    max_turns: int = 3,
    initialize: bool = True,
    resume: bool | None = None,
    close: bool | None = False,
    session_messages: bool = False,
    replay_markers: bool = False,
    children: bool = False,
    retries: bool = False,
) -> st.SearchStrategy[Exchange]:
    """Whole conversations of one session, valid ACP v2 by construction.

    Each draw is a list of ``(direction, message)`` pairs: ``initialize`` (optional),
    ``session/new`` and its result (sometimes after an early update), then 1 to
    ``max_turns`` turns. A turn is a prompt, then either a rejection, or the response,
    the echo (whole, chunked, or whole then chunks, sometimes with an empty text chunk)
    and ``running`` followed by interleaved agent activity (agent messages, thoughts, tool
    calls with content chunks, terminals with output chunks, plans, usage, commands,
    config, session info, notices, compactions, custom updates, permission requests with
    the client's answers, user messages of another client), all three in any legal order
    (the response may come after agent output, never after the idle); then an ``idle``
    with a stop reason, or a ``session/cancel`` with a pending permission answered
    ``cancelled``, maybe output flushed after it, the agent's own final status for the
    interrupted tool call (``cancelled``, ``completed`` or ``failed``: R17) and ``idle`` +
    ``cancelled``. Now and then the next prompt is sent while a turn is busy: held, it is
    answered after that turn's idle, or withdrawn (-32800) by the cancel (spec 10.2). With
    ``resume`` (``None``: sometimes) it ends with a ``session/resume`` replaying some of
    the user messages. With ``close`` (``None``: sometimes) it ends with a
    ``session/close``, answered with success or -32002 (which also closes, spec 11.5).
    With ``session_messages=True`` (ACP v2 Preview) the agent's traffic also holds
    :func:`session_message_traffic` while the session is idle: inter-session messages,
    whole and chunked, and plan removals (P12-P15, P45); the default draws exactly what
    it always did. With ``replay_markers=True`` a resume's replay ends with the Preview's
    ``replay_complete`` marker before or after the current-state snapshot, or without one
    (an agent built on the 2.4.0 schema), or the current-state snapshot says ``running`` and
    the idle comes after the marker, before the response (P18-P20). With
    ``children=True`` the parent's children and their traffic (:func:`child_sessions`:
    announcements, nested children, association patches, refused announcements, each
    child's own turns, some before its announcement: P1-P9) are interleaved anywhere
    after the ``session/new`` result, before any resume or close; with ``replay_markers``
    too, the parent's children may join a resume's replay, announced again during it,
    each with a message and its own marker or none (P16). With ``replay_markers`` the
    resume is now and then answered with an error, or its log's connection ends before
    the answer (a new ``initialize``), truncating a replay not yet marked (P21, P22).
    With ``retries=True`` some prompts carry an ``idempotencyKey`` and are sent again
    under it after a lost response or an error, or twice in flight; the agent inserts the
    prompt once and echoes it once (P26-P30). Request ids are numbered from 0 on each
    side, as SDKs do.

    Example::

        @given(conversations(max_turns=2))
        def test_my_client(exchange):
            client = MyClient()
            for direction, message in exchange:
                client.feed(direction, message)
        # exchange[0] == ("outgoing", {"jsonrpc": "2.0", "id": 0, "method": "initialize", ...})
    """
    _check_session(session_id, max_turns)
    if not isinstance(initialize, bool):
        raise InvalidArgument(f"initialize must be a bool, not {initialize!r}")
    if resume is not None and not isinstance(resume, bool):
        raise InvalidArgument(f"resume must be a bool or None, not {resume!r}")
    if close is not None and not isinstance(close, bool):
        raise InvalidArgument(f"close must be a bool or None, not {close!r}")
    if not isinstance(session_messages, bool):
        raise InvalidArgument(f"session_messages must be a bool, not {session_messages!r}")
    for name, value in (
        ("replay_markers", replay_markers),
        ("children", children),
        ("retries", retries),
    ):
        if not isinstance(value, bool):
            raise InvalidArgument(f"{name} must be a bool, not {value!r}")
    return _conversations(
        session_id,
        max_turns,
        initialize,
        resume,
        close,
        session_messages,
        replay_markers,
        children,
        retries,
    )


# -- stored logs --------------------------------------------------------------------------


def _to_log(fmt: str, exchange: Exchange) -> StoredLog:
    text = "".join(line + "\n" for line in log_lines(exchange, fmt))
    return StoredLog(fmt, text, exchange)


def stored_logs(
    format: str | None = None, *, exchanges: st.SearchStrategy[Exchange] | None = None
) -> st.SearchStrategy[StoredLog]:
    r"""A conversation serialized as a stored log (LOG-FORMATS.md).

    Each draw is a :class:`~acp_client.testing.StoredLog` ``(format, text, messages)``:
    ``text`` is the file content in ``format`` (one of ``LOG_FORMATS``; ``None`` draws
    one) and ``messages`` the ``(direction, message)`` pairs a reader should produce.
    ``exchanges`` supplies the conversations (default: :func:`conversations`).

    Example::

        @given(stored_logs("zed"))
        def test_reader(log):
            # your reader; log.text is a str (acp_client's readers take bytes: a str is
            # a file name), so acp_client.logs.read_log(log.text.encode()) for ours
            assert read_log(log.text) == log.messages
            # log.text starts with '[\n  {\n    "_direction": "outgoing", ...'
    """
    if format is not None and format not in LOG_FORMATS:
        raise InvalidArgument(f"format must be one of {LOG_FORMATS} or None, not {format!r}")
    if exchanges is not None and not isinstance(exchanges, st.SearchStrategy):
        raise InvalidArgument("exchanges must be a hypothesis strategy of exchanges")
    formats = st.just(format) if format is not None else st.sampled_from(LOG_FORMATS)
    source = exchanges if exchanges is not None else conversations()
    return st.tuples(formats, source).map(lambda t: _to_log(t[0], t[1]))
