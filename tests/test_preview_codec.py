"""The decode layer of the ACP v2 Preview additions (docs/preview.md, P0).

Round trips (decode, re-encode: the same JSON, unknown fields kept in place), the three
states (omitted / ``null`` / value), the lenient cases the addendum assumes, and the opt-in of
the unstable kinds (raw by default, typed for a session that enabled them).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_client import Decoder, Diagnostic, RemoteProtocolError, encode
from acp_client import schema as s
from acp_client._codec import decode_unstable_update
from acp_client.schema import UNSET

DECODER = Decoder()
U = "$.params.update"
ALL = frozenset({"prompt_suggestions", "cursors", "unknown_state"})
TEXT = {"type": "text", "text": "hi"}


def line(update: Any) -> str:
    params = {"sessionId": "s", "update": update}
    return json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params})


def decode_update(update: Any) -> tuple[Any, list[Diagnostic]]:
    diagnostics: list[Diagnostic] = []
    message = DECODER.decode(line(update), diagnostics=diagnostics)
    assert isinstance(message, s.Notification)
    return message.params.update, diagnostics


def round_trips(update: dict[str, Any]) -> Any:
    """Decoded update; its encoding is the same JSON as the input."""
    decoded, _ = decode_update(update)
    assert json.loads(encode(decoded)) == update
    return decoded


STABLE = [
    ({"sessionUpdate": "replay_complete"}, s.ReplayComplete),
    ({"sessionUpdate": "replay_complete", "_meta": {"a": 1}}, s.ReplayComplete),
    ({"sessionUpdate": "plan_removed", "planId": "p1"}, s.PlanRemoved),
    (
        {
            "sessionUpdate": "subagent_update",
            "sessionId": "c",
            "title": "Explorer",
            "description": None,
            "capabilities": {"cancel": {}},
            "state": {"state": "idle", "stopReason": "end_turn"},
            "cwd": "/w",
            "additionalDirectories": ["/x"],
            "_meta": {"a": None},
        },
        s.SubagentUpdate,
    ),
    ({"sessionUpdate": "subagent_update", "sessionId": "c", "state": None}, s.SubagentUpdate),
    (
        {
            "sessionUpdate": "session_message",
            "messageId": "sm1",
            "senderSessionId": "p",
            "recipientSessionId": None,
            "senderMessageId": "pm9",
            "content": [TEXT],
        },
        s.SessionMessage,
    ),
    (
        {"sessionUpdate": "session_message_chunk", "messageId": "sm1", "content": TEXT},
        s.SessionMessageChunk,
    ),
    (
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "markdown", "planId": "p", "content": "#"},
        },
        s.PlanUpdate,
    ),
    (
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "file", "planId": "p", "uri": "file:///p"},
        },
        s.PlanUpdate,
    ),
]


@pytest.mark.parametrize(("update", "cls"), STABLE)
def test_p0_r66_preview_variants_decode_by_default_and_round_trip(
    update: dict[str, Any], cls: type[Any]
) -> None:
    assert type(round_trips(update)) is cls


@pytest.mark.parametrize(("update", "cls"), STABLE)
def test_p0_unknown_fields_of_preview_variants_kept_in_place(
    update: dict[str, Any], cls: type[Any]
) -> None:
    with_extra = {**update, "_acme": {"x": [1]}}
    decoded = round_trips(with_extra)
    assert type(decoded) is cls and decoded.extra == {"_acme": {"x": [1]}}


def test_subagent_update_three_states() -> None:
    omitted = round_trips({"sessionUpdate": "subagent_update", "sessionId": "c"})
    cleared = round_trips(
        {"sessionUpdate": "subagent_update", "sessionId": "c", "title": None, "state": None}
    )
    assert omitted.title is UNSET and omitted.state is UNSET
    assert cleared.title is None and cleared.state is None
    valued = round_trips(
        {"sessionUpdate": "subagent_update", "sessionId": "c", "state": {"state": "running"}}
    )
    assert valued.state == s.StateSnapshot(state="running")


def test_subagent_state_mirror_of_a_custom_state_keeps_its_fields_raw() -> None:
    decoded = round_trips(
        {"sessionUpdate": "subagent_update", "sessionId": "c", "state": {"state": "_x", "n": 1}}
    )
    assert decoded.state == s.StateSnapshot(state="_x", extra={"n": 1})


def test_subagent_malformed_capabilities_and_state_default_with_diagnostic() -> None:
    decoded, diagnostics = decode_update(
        {"sessionUpdate": "subagent_update", "sessionId": "c", "capabilities": 5, "state": []}
    )
    assert decoded.capabilities is UNSET and decoded.state is UNSET
    assert [d.code for d in diagnostics] == ["lenient-default", "lenient-default"]


def test_subagent_cwd_is_strict() -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decode_update({"sessionUpdate": "subagent_update", "sessionId": "c", "cwd": 5})
    assert (info.value.code, info.value.path) == (-32602, f"{U}.cwd")


def test_session_message_content_skips_invalid_items() -> None:
    decoded, diagnostics = decode_update(
        {"sessionUpdate": "session_message", "messageId": "m", "content": [TEXT, 5]}
    )
    assert decoded.content == [s.TextContent(text="hi")]
    assert [d.code for d in diagnostics] == ["skipped-invalid-item"]


def test_session_message_chunk_needs_one_block() -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decode_update({"sessionUpdate": "session_message_chunk", "messageId": "m"})
    assert info.value.path == f"{U}.content"


def test_tool_call_session_content_and_subagent_background() -> None:
    call = round_trips(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t",
            "content": [{"type": "session", "sessionId": "c", "_meta": {}}],
        }
    )
    assert call.content == [s.SessionReference(session_id="c", meta={})]
    state = round_trips(
        {
            "sessionUpdate": "state_update",
            "state": "running",
            "background": [{"type": "subagent", "sessionId": "c"}],
        }
    )
    assert state.background == [s.BackgroundSubagent(session_id="c")]


def _prompt(**extra: Any) -> str:
    params = {"sessionId": "s", "prompt": [TEXT], **extra}
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": params})


def test_idempotency_key_round_trips_and_is_strict() -> None:
    message = DECODER.decode(_prompt(idempotencyKey="K-1"))
    assert isinstance(message, s.Request) and message.params.idempotency_key == "K-1"
    assert json.loads(encode(message)) == json.loads(_prompt(idempotencyKey="K-1"))
    null = DECODER.decode(_prompt(idempotencyKey=None))
    assert isinstance(null, s.Request) and null.params.idempotency_key is None
    for bad in ("", "k" * 256, 5):
        with pytest.raises(RemoteProtocolError) as info:
            DECODER.decode(_prompt(idempotencyKey=bad))
        assert (info.value.code, info.value.path) == (-32602, "$.params.idempotencyKey")
    assert DECODER.decode(_prompt(idempotencyKey="k" * 255))


def test_client_session_capabilities() -> None:
    params = {
        "protocolVersion": 2,
        "info": {"name": "c", "version": "1"},
        "capabilities": {"session": {"promptSuggestions": {"image": {}}, "cursors": {}}},
    }
    text = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
    message = DECODER.decode(text)
    assert isinstance(message, s.Request)
    session = message.params.capabilities.session
    assert session.prompt_suggestions.image.meta is UNSET
    assert session.cursors == {}
    assert json.loads(encode(message)) == json.loads(text)


# ------------------------------------------------------------------ unstable (opt-in)

SUGGESTIONS = {"sessionUpdate": "prompt_suggestions_update", "suggestions": [{"prompt": [TEXT]}]}
CURSOR = {
    "sessionUpdate": "cursor_update",
    "cursorId": "c1",
    "anchor": {"type": "user_message", "messageId": "u1", "position": "after"},
    "capabilities": {"methods": ["x"]},
}
UNKNOWN_STATE = {"sessionUpdate": "state_update", "state": "unknown", "background": []}


@pytest.mark.parametrize("update", [SUGGESTIONS, CURSOR])
def test_unstable_kinds_are_raw_by_default(update: dict[str, Any]) -> None:
    decoded = round_trips(update)
    assert decoded == update
    assert decode_unstable_update(decoded, frozenset()) is decoded


def test_unknown_state_is_a_custom_state_by_default() -> None:
    decoded = round_trips(UNKNOWN_STATE)
    assert decoded == s.StateUpdate(state="unknown", extra={"background": []})
    assert decode_unstable_update(decoded, frozenset({"cursors"})) is decoded


def test_opt_in_decodes_each_unstable_kind() -> None:
    suggestions = decode_unstable_update(round_trips(SUGGESTIONS), ALL)
    assert suggestions == s.PromptSuggestionsUpdate(
        suggestions=[s.PromptSuggestion(prompt=[s.TextContent(text="hi")])]
    )
    cursor = decode_unstable_update(round_trips(CURSOR), ALL)
    assert cursor.anchor == s.CursorUserMessageAnchor(message_id="u1", position="after")
    assert json.loads(encode(cursor)) == CURSOR
    state = decode_unstable_update(round_trips(UNKNOWN_STATE), ALL)
    assert type(state) is s.UnknownStateUpdate and state.background == []
    assert json.loads(encode(state)) == UNKNOWN_STATE


def test_suggestions_skip_malformed_items_and_reject_a_non_array() -> None:
    diagnostics: list[Diagnostic] = []
    bad = {**SUGGESTIONS, "suggestions": [{"prompt": []}, {"prompt": [TEXT]}]}
    out = decode_unstable_update(bad, ALL, diagnostics)
    assert len(out.suggestions) == 1 and [d.code for d in diagnostics] == ["skipped-invalid-item"]
    with pytest.raises(RemoteProtocolError):
        decode_unstable_update({**SUGGESTIONS, "suggestions": {}}, ALL)


def test_cursor_anchor_strict_unknown_type_raw_capabilities_lenient() -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decode_unstable_update({**CURSOR, "anchor": {"type": "tool_call"}}, ALL)
    assert info.value.path == f"{U}.anchor.toolCallId"
    custom = {"type": "_region", "from": 1}
    assert decode_unstable_update({**CURSOR, "anchor": custom}, ALL).anchor == custom
    diagnostics: list[Diagnostic] = []
    out = decode_unstable_update({**CURSOR, "capabilities": 7}, ALL, diagnostics)
    assert out.capabilities is UNSET and [d.code for d in diagnostics] == ["lenient-default"]


@settings(max_examples=50, deadline=None)
@given(
    st.fixed_dictionaries(
        {"sessionUpdate": st.just("session_message"), "messageId": st.text()},
        optional={
            "senderSessionId": st.none() | st.text(),
            "recipientSessionId": st.none() | st.text(),
            "senderMessageId": st.none() | st.text(),
            "recipientMessageId": st.none() | st.text(),
            "content": st.none()
            | st.lists(st.builds(lambda t: {"type": "text", "text": t}, st.text())),
            "_meta": st.none() | st.dictionaries(st.text(), st.integers()),
            "_x": st.integers(),
        },
    )
)
def test_session_message_round_trips_any_field_states(update: dict[str, Any]) -> None:
    decoded = round_trips(update)
    assert type(decoded) is s.SessionMessage
    for wire, name in (("senderSessionId", "sender_session_id"), ("content", "content")):
        if wire not in update:
            assert getattr(decoded, name) is UNSET
        elif update[wire] is None:
            assert getattr(decoded, name) is None
