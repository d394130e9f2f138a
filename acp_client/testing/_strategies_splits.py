"""Hypothesis strategies for the ways to cut and order traffic: splits, chunkings, orders.

Owns: byte splits of terminal output and of a byte stream (at and inside UTF-8
sequences), rechunkings of a text or block list and chunked message updates (spec 4.1,
4.5), the legal orders of a prompt response and its echo (spec 10.2), the shared types of
an exchange and the argument checks of the conversation strategies. Private helpers of
:mod:`acp_client.testing.strategies`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ._strategies_content import any_blocks

Message = dict[str, Any]
Pair = tuple[str, Message]
Exchange = list[Pair]

ROLES = ("user", "agent", "thought")


def _check_session(session_id: Any, max_turns: Any) -> None:
    """Validate the ``session_id`` and ``max_turns`` arguments of a conversation strategy."""
    if not isinstance(session_id, str) or not session_id:
        raise InvalidArgument(f"session_id must be a non-empty str, not {session_id!r}")
    if not isinstance(max_turns, int) or isinstance(max_turns, bool) or not 1 <= max_turns <= 50:
        raise InvalidArgument(f"max_turns must be an int from 1 to 50, not {max_turns!r}")


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
