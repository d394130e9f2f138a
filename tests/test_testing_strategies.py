"""acp_client.testing.strategies: generated values are valid, cover everything, and
arguments are checked when a strategy is built."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, event, find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from acp_client import Connection
from acp_client.testing import LOG_FORMATS, FakeAgent, ReferenceModel
from acp_client.testing.strategies import (
    CONTENT_BLOCK_KINDS,
    UPDATE_KINDS,
    byte_stream_splits,
    child_sessions,
    chunked_message_updates,
    content_blocks,
    conversations,
    damaged_update_pairs,
    prompt_echo_interleavings,
    rechunkings,
    stored_logs,
    terminal_byte_splits,
    updates,
    v1_streams,
)

SCHEMAS = (
    Path(__file__).parent / "peers" / "node_modules" / "@agentclientprotocol" / "sdk" / "schema"
)
FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@cache
def _schema(version: str) -> dict[str, Any]:
    path = SCHEMAS / version / "schema.json"
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"the official ACP schema is missing: {path}")
        pytest.skip(f"the official ACP schema is not installed ({path})")
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@cache
def _validator(version: str, definition: str | None = None) -> jsonschema.Draft202012Validator:
    schema = _schema(version)
    if definition is not None:
        schema = {"$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]}
    return jsonschema.Draft202012Validator(schema)


def validate_update(update: dict[str, Any]) -> None:
    _validator("v2", "UpdateSessionNotification").validate({"sessionId": "s", "update": update})


def validate_message(message: dict[str, Any], version: str = "v2") -> None:
    if message.get("method") == "session/update":
        # the root schema's params accept any extension notification: check the method's own
        definition = "UpdateSessionNotification" if version == "v2" else "SessionNotification"
        _validator(version, definition).validate(message["params"])
    _validator(version).validate(message)


# -- validity against the official schema -------------------------------------------------


@FAST
@given(updates())
def test_updates_are_valid(update: dict[str, Any]) -> None:
    event(update["sessionUpdate"] if update["sessionUpdate"] in UPDATE_KINDS else "custom")
    validate_update(update)


@FAST
@given(damaged_update_pairs())
def test_damaged_updates_break_the_schema_and_clean_ones_do_not(
    pair: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    damaged, clean = pair
    validate_update(clean)
    if damaged != clean:
        assert not _validator("v2", "UpdateSessionNotification").is_valid(
            {"sessionId": "s", "update": damaged}
        )


@FAST
@given(updates(damaged=True))
def test_damaged_option_keeps_variant(update: dict[str, Any]) -> None:
    assert isinstance(update["sessionUpdate"], str)


@FAST
@given(content_blocks())
def test_content_blocks_are_valid(block: dict[str, Any]) -> None:
    _validator("v2", "ContentBlock").validate(block)


@SLOW
@given(conversations())
def test_conversations_are_valid(exchange: list[tuple[str, dict[str, Any]]]) -> None:
    for direction, message in exchange:
        assert direction in ("incoming", "outgoing")
        validate_message(message)


@SLOW
@given(conversations(max_turns=1, close=True))
def test_a_closed_conversation_ends_closed(exchange: list[tuple[str, dict[str, Any]]]) -> None:
    # The last request is session/close; its answer (success or -32002) closes the session.
    for _, message in exchange:
        validate_message(message)
    assert exchange[-2][1]["method"] == "session/close"
    conn = Connection(live=False)
    for direction, message in exchange:
        conn.receive_message(message, direction)  # type: ignore[arg-type]
    (session,) = conn.snapshot()["sessions"]
    assert session["closed"] is True


@SLOW
@given(v1_streams())
def test_v1_streams_are_valid_v1(exchange: list[tuple[str, dict[str, Any]]]) -> None:
    for _, message in exchange:
        validate_message(message, "v1")
    assert exchange[0][1]["params"]["protocolVersion"] == 1
    assert "stopReason" in exchange[-1][1]["result"]


# -- coverage -----------------------------------------------------------------------------


def _coverage(examples: int) -> settings:
    """Deterministic draws for coverage counts (never flaky, never shrunk)."""
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )


def test_conversations_reach_every_variant_and_both_echo_orders() -> None:
    seen: set[str] = set()
    orders: set[str] = set()

    @_coverage(200)
    @given(conversations())
    def collect(exchange: list[tuple[str, dict[str, Any]]]) -> None:
        response_at: dict[str, int] = {}
        echo_at: dict[str, int] = {}
        prompt_ids = {m["id"] for d, m in exchange if m.get("method") == "session/prompt"}
        for i, (_, m) in enumerate(exchange):
            if m.get("method") == "session/update":
                u = m["params"]["update"]
                seen.add(u["sessionUpdate"])
                if u["sessionUpdate"] in ("user_message", "user_message_chunk"):
                    echo_at.setdefault(u["messageId"], i)
            elif m.get("id") in prompt_ids and isinstance(m.get("result"), dict):
                response_at.setdefault(m["result"].get("messageId"), i)
        for mid, at in response_at.items():
            if mid in echo_at:
                order = "response-first" if at < echo_at[mid] else "echo-first"
                orders.add(order)
                event(order)

    collect()
    assert set(UPDATE_KINDS) <= seen, set(UPDATE_KINDS) - seen
    assert any(k.startswith("_") for k in seen)  # custom variants too
    assert orders == {"response-first", "echo-first"}


def _updates_of(exchange: list[tuple[str, dict[str, Any]]]) -> list[tuple[int, dict[str, Any]]]:
    return [
        (i, m["params"]["update"])
        for i, (_, m) in enumerate(exchange)
        if m.get("method") == "session/update"
    ]


def _late_response_after_foreign(exchange: list[tuple[str, dict[str, Any]]]) -> bool:
    """A prompt response after agent output and after another client's user message."""
    updates_at = _updates_of(exchange)
    for i, (_, m) in enumerate(exchange):
        if isinstance(m.get("result"), dict) and "messageId" in m["result"]:
            before = [u for j, u in updates_at if j < i]
            foreign = any(
                u["sessionUpdate"].startswith("user_message") and u["messageId"].startswith("x")
                for u in before
            )
            output = {u["sessionUpdate"] for u in before} & {
                "agent_message_chunk",
                "agent_message",
                "tool_call_update",
            }
            if foreign and output:
                return True
    return False


def _later_status_after_cancel(exchange: list[tuple[str, dict[str, Any]]]) -> bool:
    cancels = [i for i, (_, m) in enumerate(exchange) if m.get("method") == "session/cancel"]
    return bool(cancels) and any(
        j > cancels[0] and u.get("status") == "completed"
        for j, u in _updates_of(exchange)
        if u["sessionUpdate"] == "tool_call_update"
    )


def _empty_chunk(exchange: list[tuple[str, dict[str, Any]]]) -> bool:
    return any(
        u["sessionUpdate"].endswith("_chunk") and u.get("content") == {"type": "text", "text": ""}
        for _, u in _updates_of(exchange)
    )


def _held_prompt(exchange: list[tuple[str, dict[str, Any]]]) -> str | None:
    """A prompt sent while busy: later answered with its message, or withdrawn (-32800)."""
    state = None
    busy: set[Any] = set()
    for _, m in exchange:
        if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == (
            "state_update"
        ):
            state = m["params"]["update"]["state"]
        elif m.get("method") == "session/prompt" and state == "running":
            busy.add(m["id"])
        elif m.get("id") in busy and "method" not in m:
            return "withdrawn" if "error" in m else "inserted"
    return None


def test_conversations_reach_late_responses_later_statuses_and_empty_chunks() -> None:
    """10.4 / R49 / R17 / 10.2: what an order-linking or cancel-freezing client must meet."""
    cases = {"late-response": 0, "later-status": 0, "empty-chunk": 0, "inserted": 0}
    cases["withdrawn"] = 0

    @_coverage(300)
    @given(conversations())
    def collect(exchange: list[tuple[str, dict[str, Any]]]) -> None:
        cases["late-response"] += _late_response_after_foreign(exchange)
        cases["later-status"] += _later_status_after_cancel(exchange)
        cases["empty-chunk"] += _empty_chunk(exchange)
        held = _held_prompt(exchange)
        if held is not None:
            cases[held] += 1

    collect()
    assert all(cases.values()), cases


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations())
def test_conversations_list_unique_commands_and_config_ids(
    exchange: list[tuple[str, dict[str, Any]]],
) -> None:
    """A29 / A19: names and config ids are unique within a list, as the schema requires."""
    for _, u in _updates_of(exchange):
        for key, field in (("availableCommands", "name"), ("configOptions", "configId")):
            items = u.get(key)
            if isinstance(items, list):
                names = [item[field] for item in items]
                assert len(names) == len(set(names))


def test_rechunkings_reach_every_piece_count() -> None:
    text = "x" * 20
    for count in (1, 7, 15, 19, 20):
        parts = find(
            rechunkings(text),
            lambda p, n=count: len(p) == n,
            settings=_coverage(5000),  # deterministic, no health check under load
        )
        assert "".join(parts) == text


@pytest.mark.parametrize("kind", UPDATE_KINDS)
def test_updates_reach_every_variant(kind: str) -> None:
    # One search per kind: a shared budget of 300 draws reached every kind in a full run
    # but missed compaction_summary_chunk when the file ran alone.
    found = find(
        updates(),
        lambda update: update["sessionUpdate"] == kind,
        settings=settings(max_examples=5000, database=None, deadline=None),
    )
    assert found["sessionUpdate"] == kind


# -- splits and chunkings -----------------------------------------------------------------


@FAST
@given(st.binary(max_size=40).flatmap(lambda d: st.tuples(st.just(d), byte_stream_splits(d))))
def test_byte_stream_splits_cover_the_data(case: tuple[bytes, list[bytes]]) -> None:
    data, pieces = case
    assert b"".join(pieces) == data and all(pieces)


def test_terminal_byte_splits_cut_inside_utf8() -> None:
    data = "a🌍b€".encode()

    def inside(pieces: list[bytes]) -> bool:
        return any(p[:1] and p[0] & 0xC0 == 0x80 for p in pieces)

    pieces = find(terminal_byte_splits(data), inside, settings=settings(database=None))
    assert b"".join(pieces) == data


@FAST
@given(st.text().flatmap(lambda t: st.tuples(st.just(t), rechunkings(t))))
def test_text_rechunkings(case: tuple[str, list[str]]) -> None:
    text, pieces = case
    assert "".join(pieces) == text
    assert all(pieces) or pieces == [""]


@FAST
@given(
    st.lists(content_blocks(["text"]), max_size=4).flatmap(
        lambda b: st.tuples(st.just(b), rechunkings(b))
    )
)
def test_block_rechunkings(case: tuple[list[Any], list[list[Any]]]) -> None:
    blocks, groups = case
    assert [b for g in groups for b in g] == blocks and all(groups)


def _prompt_parts() -> tuple[Any, Any, list[Any]]:
    a = FakeAgent().prompt(1, "hi").prompt_response(1, "u1").user_chunk("u1", "h")
    a.user_chunk("u1", "i")
    req, resp, *echo = a.messages
    return req, resp, echo


@FAST
@given(prompt_echo_interleavings(*_prompt_parts(), others=FakeAgent().state("running").messages))
def test_interleavings_keep_each_order(exchange: list[Any]) -> None:
    req, resp, echo = _prompt_parts()
    assert exchange[0] == req and resp in exchange and len(exchange) == 5
    positions = [exchange.index(e) for e in echo]
    assert positions == sorted(positions)


@FAST
@given(stored_logs())
def test_stored_logs_are_text(log: Any) -> None:
    assert log.format in LOG_FORMATS and log.text.endswith("\n") and log.messages


# -- argument validation ------------------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        lambda: content_blocks(["nope"]),
        lambda: content_blocks("text"),
        lambda: content_blocks([]),
        lambda: updates(["tool_call"]),
        lambda: updates(damaged="yes"),
        lambda: damaged_update_pairs(["nope"]),
        lambda: conversations(max_turns=0),
        lambda: conversations(session_id=""),
        lambda: conversations(resume="yes"),
        lambda: conversations(close="yes"),
        lambda: conversations(children=1),
        lambda: conversations(retries="yes"),
        lambda: child_sessions(""),
        lambda: child_sessions(max_children=0),
        lambda: rechunkings(42),
        lambda: chunked_message_updates("system", "m", []),
        lambda: chunked_message_updates("agent", "m", "text"),
        lambda: terminal_byte_splits("text"),
        lambda: byte_stream_splits(None),
        lambda: prompt_echo_interleavings({"method": "x"}, {}, []),
        lambda: prompt_echo_interleavings(*_prompt_parts()[:2], []),
        lambda: v1_streams(max_turns=True),
        lambda: stored_logs("csv"),
        lambda: stored_logs(exchanges=[1]),
        lambda: content_blocks(kinds=5),  # type: ignore[arg-type]
        lambda: updates(kinds=5),  # type: ignore[arg-type]
        lambda: damaged_update_pairs(kinds=5),  # type: ignore[arg-type]
        lambda: chunked_message_updates("agent", "m", None),  # type: ignore[arg-type]
        lambda: prompt_echo_interleavings(*_prompt_parts()[:2], 5),  # type: ignore[arg-type]
        lambda: prompt_echo_interleavings(*_prompt_parts(), None),  # type: ignore[arg-type]
        lambda: prompt_echo_interleavings(
            *_prompt_parts()[:2], [{"method": "session/update", "params": 5}]
        ),
        # a rejected prompt is echoed by nothing; an echo names the response's message and
        # comes from the agent
        lambda: prompt_echo_interleavings(
            _prompt_parts()[0],
            FakeAgent().prompt_error(1, -32602, "no").messages[0],
            _prompt_parts()[2],
        ),
        lambda: prompt_echo_interleavings(
            *_prompt_parts()[:2], FakeAgent().user_chunk("u2", "h").messages
        ),
        lambda: prompt_echo_interleavings(
            *_prompt_parts()[:2], [("outgoing", _prompt_parts()[2][0][1])]
        ),
    ],
)
def test_bad_arguments_fail_when_built(build: Any) -> None:
    with pytest.raises(InvalidArgument):
        build()


def test_kind_constants() -> None:
    assert len(UPDATE_KINDS) == 19 and "unknown" in CONTENT_BLOCK_KINDS


# -- the README's "Property-test your client" example, verbatim ---------------------------


def render(snapshot: dict[str, Any]) -> str:
    """Your UI: one line per message, its text blocks joined."""
    lines = []
    for session in snapshot["sessions"]:
        for entry in session["timeline"]:
            if entry["entry"] == "message":
                text = "".join(block.get("text", "") for block in entry["content"])
                lines.append(f"{entry['role']}: {text}")
    return "\n".join(lines)


@st.composite
def exchanges(draw: st.DrawFn) -> tuple[str, list[Any]]:
    reply = draw(st.text(min_size=1))
    agent = FakeAgent("s1").prompt(1, "hi").prompt_response(1, "u1").user_message("u1", "hi")
    request, response, echo = agent.messages
    running = FakeAgent("s1").state("running").messages
    start = draw(prompt_echo_interleavings(request, response, [echo], running))
    output = FakeAgent("s1")
    for piece in draw(rechunkings(reply)):  # every way to stream the reply
        output.agent_chunk("a1", piece)
    output.state("idle", stop_reason="end_turn")
    return reply, start + output.messages


@given(exchanges())
def test_render_ignores_chunking_and_arrival_order(case: tuple[str, list[Any]]) -> None:
    reply, exchange = case
    model = ReferenceModel()  # or your own client, fed the same messages
    model.feed_all(exchange)
    assert render(model.snapshot()) == f"user: hi\nagent: {reply}"


def test_splits_reach_one_piece_per_element_for_long_inputs() -> None:
    # "All ways to split": one character (or byte) per chunk, also past 13 pieces.
    from acp_client.testing.strategies import byte_stream_splits, rechunkings

    assert find(rechunkings("a" * 30), lambda parts: len(parts) == 30) == ["a"] * 30
    assert find(byte_stream_splits(b"x" * 30), lambda parts: len(parts) == 30) == [b"x"] * 30


def test_conversations_shrink_to_plain_turns() -> None:
    # Held prompts and empty chunks are edge cases: a minimal example has neither, so a
    # failing property shows what matters (the features are on at the top of their draw).
    def prompts(c: list[tuple[str, dict[str, Any]]]) -> int:
        return sum(1 for _, m in c if m.get("method") == "session/prompt")

    minimal = find(
        conversations(initialize=False, resume=False),
        lambda c: prompts(c) >= 2,
        settings=settings(  # derandomized: shrinking is a search, it must not vary by run
            database=None,
            derandomize=True,
            max_examples=2000,
            suppress_health_check=list(HealthCheck),
        ),
    )
    methods = [m.get("method") for _, m in minimal]
    first = methods.index("session/prompt")
    first_id = minimal[first][1]["id"]
    # the first prompt's work ends with an idle, or at once with its error (a rejected prompt)
    first_ended = next(
        i
        for i, (_, m) in enumerate(minimal)
        if (m.get("method") == "session/update" and m["params"]["update"].get("state") == "idle")
        or ("error" in m and m.get("id") == first_id)
    )
    assert methods.index("session/prompt", first + 1) > first_ended  # the second is not held
    texts = [
        m["params"]["update"]["content"].get("text")
        for _, m in minimal
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"].endswith("_chunk")
    ]
    assert "" not in texts


def test_chunked_message_updates_catch_a_client_reading_null_as_no_change() -> None:
    # 4.2: `content: null` clears; v1 read it as "no change". A reset must clear something.
    def ignores_null(updates: list[dict[str, Any]]) -> list[Any]:
        content: list[Any] = []
        for u in updates:
            if u["sessionUpdate"].endswith("_chunk"):
                content.append(u["content"])
            elif u.get("content") is not None:
                content[:] = u["content"]
        return content

    blocks = [{"type": "text", "text": "a"}]
    found = find(
        chunked_message_updates("agent", "m", blocks),
        lambda ups: ignores_null(ups) != blocks,
        settings=_coverage(5000),
    )
    assert None in [u.get("content", "-") for u in found]  # the null reset it missed


# -- ACP v2 Preview: child sessions and keyed retries -----------------------------------


def _tree_updates(exchange: list[tuple[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (m["params"]["sessionId"], m["params"]["update"])
        for _, m in exchange
        if m.get("method") == "session/update"
    ]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(child_sessions("sess_p", max_children=3))
def test_child_sessions_are_valid_and_announced(exchange: list[tuple[str, Any]]) -> None:
    """Every child is announced by ``subagent_update`` and has turns of its own; every
    message is a ``session/update`` from the agent (the Preview's variants are past the
    2.4.0 schema the other tests validate against)."""
    assert all(direction == "incoming" for direction, _ in exchange)
    assert all(m["method"] == "session/update" and "id" not in m for _, m in exchange)
    announced = {
        u["sessionId"]
        for _, u in _tree_updates(exchange)
        if u["sessionUpdate"] == "subagent_update" and u["sessionId"] != "sess_p"
    }
    talking = {sid for sid, _ in _tree_updates(exchange)} - {"sess_p"}
    assert announced and talking <= announced | {"sess_p"}
    assert len(announced) <= 3
    for child in announced:  # its own turns end idle
        states = [
            u
            for sid, u in _tree_updates(exchange)
            if sid == child and u["sessionUpdate"] == "state_update"
        ]
        assert states[0]["state"] == "running" and states[-1]["state"] == "idle"


def test_child_sessions_cover_the_tree_rules() -> None:
    """The draws include nested children and traffic before an announcement (P2)."""
    seen: set[str] = set()

    @settings(max_examples=150, deadline=None, database=None)
    @given(child_sessions("sess_p"))
    def collect(exchange: list[tuple[str, Any]]) -> None:
        first: dict[str, int] = {}
        announced_at: dict[str, int] = {}
        for i, (sid, u) in enumerate(_tree_updates(exchange)):
            first.setdefault(sid, i)
            if u["sessionUpdate"] == "subagent_update":
                announced_at.setdefault(u["sessionId"], i)
                if sid != "sess_p":
                    seen.add("nested")
        if any(first.get(c, 1 << 30) < at for c, at in announced_at.items()):
            seen.add("early")

    collect()
    assert seen == {"nested", "early"}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(retries=True, max_turns=3))
def test_retries_resend_the_same_prompt_under_one_key(exchange: list[tuple[str, Any]]) -> None:
    """Keyed attempts carry one key and one prompt, and every other message stays valid
    v2 (the key itself is past the 2.4.0 schema)."""
    by_key: dict[str, list[Any]] = {}
    for _, message in exchange:
        params = message.get("params") or {}
        if message.get("method") == "session/prompt" and "idempotencyKey" in params:
            by_key.setdefault(params["idempotencyKey"], []).append(params["prompt"])
        else:
            validate_message(message)
    for prompts in by_key.values():
        assert all(p == prompts[0] for p in prompts)
