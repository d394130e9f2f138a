"""Hypothesis strategies for whole exchanges, chunkings, splits, v1 traffic and logs.

Private helpers of :mod:`acp_client.testing.strategies`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
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

Message = dict[str, Any]
Pair = tuple[str, Message]
Exchange = list[Pair]

ROLES = ("user", "agent", "thought")


# -- generic helpers ----------------------------------------------------------------------


@st.composite
def _merge(draw: st.DrawFn, seqs: Sequence[Sequence[Any]]) -> list[Any]:
    """One interleaving of ``seqs`` that keeps the order inside each sequence."""
    position = [0] * len(seqs)
    out: list[Any] = []
    while True:
        live = [i for i, s in enumerate(seqs) if position[i] < len(s)]
        if not live:
            return out
        i = live[0] if len(live) == 1 else draw(st.sampled_from(live))
        out.append(seqs[i][position[i]])
        position[i] += 1


def _split_points(draw: st.DrawFn, length: int, favoured: Sequence[int] = ()) -> list[int]:
    if length < 2:
        return []
    if draw(st.integers(0, 9)) == 9:  # now and then every point: one element per piece
        return list(range(1, length))
    if length <= 65 and draw(st.booleans()):  # a cut or not at each point: any count
        cuts = draw(st.lists(st.booleans(), min_size=length - 1, max_size=length - 1))
        return [i for i, cut in enumerate(cuts, 1) if cut]
    inner = st.integers(1, length - 1)
    if favoured:
        inner = st.one_of(st.sampled_from(list(favoured)), inner)
    return sorted(draw(st.sets(inner, max_size=min(length - 1, 12))))


def _cut(data: Any, points: list[int]) -> list[Any]:
    if len(data) == 0:
        return []
    bounds = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


# -- splits -------------------------------------------------------------------------------


def _utf8_interior(data: bytes) -> list[int]:
    """Offsets that fall inside a multi-byte UTF-8 sequence (after a lead byte)."""
    return [i for i in range(1, len(data)) if data[i] & 0xC0 == 0x80]


@st.composite
def _byte_splits(draw: st.DrawFn, data: bytes) -> list[bytes]:
    return _cut(data, _split_points(draw, len(data), _utf8_interior(data)))


def _check_bytes(data: Any, name: str) -> bytes:
    if not isinstance(data, bytes | bytearray):
        raise InvalidArgument(f"{name} needs bytes, not {type(data).__name__}")
    return bytes(data)


def terminal_byte_splits(data: bytes) -> st.SearchStrategy[list[bytes]]:
    r"""Ways to split terminal output into ``terminal_output_chunk`` payloads.

    Each draw is a list of non-empty ``bytes`` whose concatenation is ``data`` (``[]``
    for ``b""``). Split points inside multi-byte UTF-8 sequences are drawn often, since a
    chunk may end in the middle of a character (spec 8.4).

    Example::

        @given(terminal_byte_splits("héllo 🌍".encode()))
        def test_split(pieces):
            assert b"".join(pieces) == "héllo 🌍".encode()
            # e.g. [b"h\xc3", b"\xa9llo \xf0\x9f", b"\x8c\x8d"]
    """
    return _byte_splits(_check_bytes(data, "terminal_byte_splits"))


def byte_stream_splits(data: bytes) -> st.SearchStrategy[list[bytes]]:
    r"""Ways a transport may deliver ``data`` (wire bytes) in reads.

    Each draw is a list of non-empty ``bytes`` whose concatenation is ``data``: splits
    fall anywhere, including inside a JSON message, between ``\r`` and ``\n`` and
    inside multi-byte UTF-8 sequences. Feed the pieces one by one to a framer and check
    it yields the same messages as the whole.

    Example::

        wire = FakeAgent().agent_chunk("a1", "hi").to_bytes()

        @given(byte_stream_splits(wire))
        def test_framing(reads):
            assert b"".join(reads) == wire
    """
    return _byte_splits(_check_bytes(data, "byte_stream_splits"))


# -- rechunking ---------------------------------------------------------------------------


@st.composite
def _text_rechunkings(draw: st.DrawFn, text: str) -> list[str]:
    if text == "":
        return [""]
    return _cut(text, _split_points(draw, len(text)))


@st.composite
def _block_rechunkings(draw: st.DrawFn, blocks: list[Any]) -> list[list[Any]]:
    return _cut(blocks, _split_points(draw, len(blocks)))


def rechunkings(text_or_blocks: str | Sequence[dict[str, Any]]) -> st.SearchStrategy[Any]:
    """All ways to split a message into chunks.

    - For a ``str``: lists of non-empty strings that concatenate to it (``[""]`` for
      ``""``); send each piece as one text chunk.
    - For a list of content blocks: partitions into consecutive non-empty groups
      (``[]`` for ``[]``); block boundaries are kept, since each chunk carries whole
      blocks. :func:`chunked_message_updates` turns a partition into updates.

    Example::

        @given(rechunkings("Hello, world"))
        def test_pieces(pieces):
            assert "".join(pieces) == "Hello, world"  # e.g. ["Hel", "lo, w", "orld"]
    """
    if isinstance(text_or_blocks, str):
        return _text_rechunkings(text_or_blocks)
    if isinstance(text_or_blocks, Sequence) and all(isinstance(b, dict) for b in text_or_blocks):
        return _block_rechunkings(list(text_or_blocks))
    raise InvalidArgument("rechunkings needs a str or a sequence of content block dicts")


_WHOLE = {"user": "user_message", "agent": "agent_message", "thought": "agent_thought"}
_CHUNK = {
    "user": "user_message_chunk",
    "agent": "agent_message_chunk",
    "thought": "agent_thought_chunk",
}


@st.composite
def _chunked_updates(
    draw: st.DrawFn, role: str, message_id: str, blocks: list[Any]
) -> list[Message]:
    whole = {"sessionUpdate": _WHOLE[role], "messageId": message_id}
    prefix = draw(st.sampled_from(["none", "reset", "null-reset", "stale"]))
    out: list[Message] = []
    if prefix in ("reset", "null-reset"):
        # A reset clears content that is there (a client reading `null` as "no change",
        # v1's meaning, keeps it and fails), before the chunks that build `blocks`.
        out.append({**whole, "content": draw(st.lists(any_blocks, min_size=1, max_size=2))})
        out.append({**whole, "content": [] if prefix == "reset" else None})
    elif prefix == "stale":
        out.append({**whole, "content": draw(st.lists(any_blocks, max_size=2))})
    groups = draw(_block_rechunkings(blocks))
    if not groups and (prefix == "stale" or not out):
        out.append({**whole, "content": []})  # the message exists, empty
    for i, group in enumerate(groups):
        if i == 0 and (prefix == "stale" or draw(st.booleans())):
            out.append({**whole, "content": group})
        else:
            out += [
                {"sessionUpdate": _CHUNK[role], "messageId": message_id, "content": b}
                for b in group
            ]
    if draw(st.booleans()):
        # A metadata-only patch anywhere changes no content (spec 4.3).
        meta = {**whole, "_meta": {"k": draw(st.integers(0, 9))}}
        out.insert(draw(st.integers(0, len(out))), meta)
    return out


def chunked_message_updates(
    role: str, message_id: str, blocks: Sequence[dict[str, Any]]
) -> st.SearchStrategy[list[Message]]:
    """Update sequences that all leave message ``message_id`` with content ``blocks``.

    Mixes chunks (one block each), a first whole-message update, a reset
    (``content: []`` or ``null`` clearing earlier content) or a stale whole update that a
    later one replaces, and a metadata-only patch. ``role`` is ``"user"``, ``"agent"`` or
    ``"thought"``. Applying any draw to an empty session must give the same content:
    ``blocks``.

    Example::

        blocks = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]

        @given(chunked_message_updates("agent", "m1", blocks))
        def test_same(updates): ...
        # e.g. [{"sessionUpdate": "agent_message", "messageId": "m1", "content": []},
        #       {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": {...a}},
        #       {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": {...b}}]
    """
    if role not in ROLES:
        raise InvalidArgument(f"role must be one of {ROLES}, not {role!r}")
    if not isinstance(message_id, str):
        raise InvalidArgument(f"message_id must be a str, not {message_id!r}")
    checked: Any = blocks
    if (
        isinstance(checked, str)
        or not isinstance(checked, Sequence)
        or not all(isinstance(b, dict) for b in checked)
    ):
        raise InvalidArgument("blocks must be a sequence of content block dicts")
    return _chunked_updates(role, message_id, list(blocks))


# -- prompt / echo interleavings ----------------------------------------------------------


def _as_pair(item: Any, default: str, name: str) -> Pair:
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], dict):
        return item[0], item[1]
    if isinstance(item, dict):
        return default, item
    raise InvalidArgument(f"{name}: expected a message dict or a (direction, message) pair")


def prompt_echo_interleavings(
    request: Any, response: Any, echo: Sequence[Any], others: Sequence[Any] = ()
) -> st.SearchStrategy[Exchange]:
    """The legal orders of a prompt's response, its echo and the surrounding updates.

    ``request`` is the outgoing ``session/prompt``, ``response`` the agent's answer to it,
    ``echo`` the user-message updates reporting the inserted message (in order), and
    ``others`` further incoming messages in their own order (``running``, agent output).
    Messages are dicts or ``(direction, message)`` pairs. Each draw starts with the
    request; the rest is an interleaving that keeps each sequence's order, so the
    response comes before, inside or after the echo (spec 10.4, R49).

    Example::

        agent = FakeAgent()
        agent.prompt(1, "hi").prompt_response(1, "u1").user_message("u1", "hi")
        req, resp, echo = agent.messages

        @given(prompt_echo_interleavings(req, resp, [echo]))
        def test_orders(exchange):
            ...  # [req, resp, echo] or [req, echo, resp]
    """
    req = _as_pair(request, "outgoing", "request")
    resp = _as_pair(response, "incoming", "response")
    if req[0] != "outgoing" or req[1].get("method") != "session/prompt" or "id" not in req[1]:
        raise InvalidArgument("request must be an outgoing session/prompt request")
    if resp[0] != "incoming" or resp[1].get("id") != req[1]["id"] or "method" in resp[1]:
        raise InvalidArgument("response must be the incoming response with the request's id")
    result = resp[1].get("result")
    message_id = result.get("messageId") if isinstance(result, dict) else None
    if not isinstance(message_id, str):
        # a rejected prompt was not inserted: nothing echoes it (10.6)
        raise InvalidArgument("response must accept the prompt: a result with its messageId")
    if isinstance(echo, dict | str) or not isinstance(echo, Sequence) or not echo:
        raise InvalidArgument("echo must be a non-empty sequence of user-message updates")
    if isinstance(others, dict | str) or not isinstance(others, Sequence):
        raise InvalidArgument("others must be a sequence of messages")
    echo_pairs = [_as_pair(e, "incoming", "echo") for e in echo]
    for direction, m in echo_pairs:
        params = m.get("params")
        update = params.get("update") if isinstance(params, dict) else None
        kind = update.get("sessionUpdate") if isinstance(update, dict) else None
        if (
            direction != "incoming"
            or m.get("method") != "session/update"
            or kind not in ("user_message", "user_message_chunk")
        ):
            raise InvalidArgument(
                "echo items must be incoming user_message / user_message_chunk updates"
            )
        if update.get("messageId") != message_id:  # type: ignore[union-attr]
            raise InvalidArgument(
                f"echo items must report the inserted message {message_id!r}, the response's"
            )
    other_pairs = [_as_pair(o, "incoming", "others") for o in others]
    return _merge([[resp], echo_pairs, other_pairs]).map(lambda rest: [req, *rest])


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
) -> tuple[Exchange, tuple[int, int] | None]:
    """One turn, and where the next turn's prompt may be sent while this one is busy.

    The window is the stretch between ``running`` and the idle of a turn that ends normally:
    a prompt sent there is held, then inserted (answered) after the idle (10.2).
    """
    a = FakeAgent(sid)
    rid = client_rid[0]
    client_rid[0] += 1
    text = draw(_texts)
    a.prompt(rid, text)
    request = a.messages[0]
    outcome = draw(st.sampled_from(["end", "end", "rejected", "cancel"]))
    if outcome == "rejected":
        rejection = FakeAgent(sid).prompt_error(rid, -32602, "Invalid params").messages[0]
        return [request, rejection], None
    uid = ids("u")
    history.append(("user", uid, text))
    echo = FakeAgent(sid)
    _chunks_or_whole(draw, echo, "user", uid, text)
    response = FakeAgent(sid).prompt_response(rid, uid).messages
    running = FakeAgent(sid).state("running").messages
    segments = [_activity(draw, sid, ids, agent_rid) for _ in range(draw(st.integers(1, 5)))]
    # The response, the echo and the work are independent (10.4, R49): the response may
    # come after agent output or another client's user message, never after the idle.
    work = running + draw(_merge(segments))
    out = [request, *draw(_merge([response, echo.messages, work]))]
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
    draw: st.DrawFn, sid: str, client_rid: list[int], history: list[tuple[str, str, str]]
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
    a.state("idle", stop_reason="end_turn")  # the current-state snapshot (spec 12.3)
    a.resume_response(rid)
    return a.messages


@st.composite
def _conversations(
    draw: st.DrawFn,
    session_id: str,
    max_turns: int,
    initialize: bool,
    resume: bool | None,
    close: bool | None = False,
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
    window: tuple[int, int] | None = None
    previous: Exchange = []
    for _ in range(draw(st.integers(1, max_turns))):
        turn, next_window = draw(_turn(session_id, ids, client_rid, agent_rid, history))
        if window is not None and draw(st.integers(0, 3)) == 3:
            # Sent while the previous turn was busy: held, answered after its idle (10.2).
            previous.insert(draw(st.integers(*window)), turn.pop(0))
        out += previous
        previous, window = turn, next_window
    out += previous
    if resume is True or (resume is None and draw(st.booleans())):
        out += draw(_replay(session_id, client_rid, history))
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
    Request ids are numbered from 0 on each side, as SDKs do.

    Example::

        @given(conversations(max_turns=2))
        def test_my_client(exchange):
            client = MyClient()
            for direction, message in exchange:
                client.feed(direction, message)
        # exchange[0] == ("outgoing", {"jsonrpc": "2.0", "id": 0, "method": "initialize", ...})
    """
    if not isinstance(session_id, str) or not session_id:
        raise InvalidArgument(f"session_id must be a non-empty str, not {session_id!r}")
    if not isinstance(max_turns, int) or isinstance(max_turns, bool) or not 1 <= max_turns <= 50:
        raise InvalidArgument(f"max_turns must be an int from 1 to 50, not {max_turns!r}")
    if not isinstance(initialize, bool):
        raise InvalidArgument(f"initialize must be a bool, not {initialize!r}")
    if resume is not None and not isinstance(resume, bool):
        raise InvalidArgument(f"resume must be a bool or None, not {resume!r}")
    if close is not None and not isinstance(close, bool):
        raise InvalidArgument(f"close must be a bool or None, not {close!r}")
    return _conversations(session_id, max_turns, initialize, resume, close)


# -- v1 traffic (V1-TO-V2.md) -------------------------------------------------------------


def _v1_plan_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A v2 plan entry as schema-v1 has it: closed priority and status enums, no `_meta`."""
    priority = entry.get("priority")
    status = entry.get("status")
    return {
        "content": entry["content"],
        "priority": priority if priority in ("high", "medium", "low") else "medium",
        "status": status if status in ("pending", "in_progress", "completed") else "completed",
    }


def _v1_update(sid: str, update: Message) -> Pair:
    params = {"sessionId": sid, "update": update}
    return ("incoming", {"jsonrpc": "2.0", "method": "session/update", "params": params})


@st.composite
def _v1_streams(draw: st.DrawFn, session_id: str, max_turns: int) -> Exchange:
    sid = session_id
    out: Exchange = []

    def out_req(rid: int, method: str, params: Any) -> None:
        out.append(("outgoing", {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}))

    def result(direction: str, rid: int, value: Any) -> None:
        out.append((direction, {"jsonrpc": "2.0", "id": rid, "result": value}))

    def chunk(kind: str, text: str) -> None:
        out.append(
            _v1_update(sid, {"sessionUpdate": kind, "content": {"type": "text", "text": text}})
        )

    out_req(
        0,
        "initialize",
        {
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": {"readTextFile": True, "writeTextFile": True},
                "terminal": False,
            },
        },
    )
    result(
        "incoming",
        0,
        {
            "protocolVersion": 1,
            "agentCapabilities": {"loadSession": False, "promptCapabilities": {"image": False}},
            "authMethods": [],
        },
    )
    out_req(1, "session/new", {"cwd": "/work", "mcpServers": []})
    result("incoming", 1, {"sessionId": sid})
    rid, agent_rid, call = 2, 0, 0
    for _ in range(draw(st.integers(1, max_turns))):
        text = draw(_texts)
        out_req(
            rid, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
        )
        if draw(st.booleans()):
            chunk("user_message_chunk", text)  # many v1 agents echo the prompt, id-less
        cancelled = False
        for _ in range(draw(st.integers(1, 4))):
            step = draw(st.sampled_from(["thought", "text", "tool", "plan", "permission"]))
            if step == "thought":
                for piece in draw(_text_rechunkings(draw(_texts))):
                    chunk("agent_thought_chunk", piece)
            elif step == "text":
                for piece in draw(_text_rechunkings(draw(_texts))):
                    chunk("agent_message_chunk", piece)
            elif step == "plan":
                entries = draw(
                    st.lists(
                        plan_entries.map(_v1_plan_entry),
                        max_size=3,
                    )
                )
                out.append(_v1_update(sid, {"sessionUpdate": "plan", "entries": entries}))
            else:
                call += 1
                cid = f"call_{call}"
                out.append(
                    _v1_update(
                        sid,
                        {
                            "sessionUpdate": "tool_call",
                            "toolCallId": cid,
                            "title": draw(_texts),
                            "kind": "read",
                            "status": "pending",
                        },
                    )
                )
                if step == "permission":
                    options = [
                        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                        {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
                    ]
                    out.append(
                        (
                            "incoming",
                            {
                                "jsonrpc": "2.0",
                                "id": agent_rid,
                                "method": "session/request_permission",
                                "params": {
                                    "sessionId": sid,
                                    "toolCall": {"toolCallId": cid},
                                    "options": options,
                                },
                            },
                        )
                    )
                    result(
                        "outgoing",
                        agent_rid,
                        {
                            "outcome": {
                                "outcome": "selected",
                                "optionId": draw(st.sampled_from(["allow", "reject"])),
                            }
                        },
                    )
                    agent_rid += 1
                update: dict[str, Any] = {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": cid,
                    "status": "completed",
                    "content": [
                        {"type": "content", "content": {"type": "text", "text": draw(_texts)}}
                    ],
                }
                if draw(st.booleans()):
                    update["title"] = None  # v1: null means "no change"
                out.append(_v1_update(sid, update))
        if draw(st.integers(0, 3)) == 3:
            out.append(
                (
                    "outgoing",
                    {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}},
                )
            )
            cancelled = True
        stop = (
            "cancelled"
            if cancelled
            else draw(st.sampled_from(["end_turn", "max_tokens", "refusal"]))
        )
        result("incoming", rid, {"stopReason": stop})
        rid += 1
    return out


def v1_streams(*, session_id: str = "sess_1", max_turns: int = 3) -> st.SearchStrategy[Exchange]:
    """ACP v1 traffic (both directions) for the V1-TO-V2 adapter.

    ``initialize`` with ``protocolVersion: 1``, ``session/new``, then turns: a prompt,
    sometimes an id-less ``user_message_chunk`` echo, id-less thought and message chunks,
    ``tool_call`` / ``tool_call_update`` (with v1 ``null`` "no change" fields), ``plan``,
    v1 permission requests (``toolCall`` instead of ``subject``) with the client's
    answers, sometimes a ``session/cancel``, and the prompt result carrying
    ``stopReason`` (the v1 end of turn). Valid against schema-v1.json.

    Example::

        @given(v1_streams(max_turns=1))
        def test_v1(exchange):
            assert exchange[-1][1]["result"]["stopReason"] in (
                "end_turn", "max_tokens", "refusal", "cancelled")
    """
    if not isinstance(session_id, str) or not session_id:
        raise InvalidArgument(f"session_id must be a non-empty str, not {session_id!r}")
    if not isinstance(max_turns, int) or isinstance(max_turns, bool) or not 1 <= max_turns <= 50:
        raise InvalidArgument(f"max_turns must be an int from 1 to 50, not {max_turns!r}")
    return _v1_streams(session_id, max_turns)


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
