"""Connection rules of ACP-V2-CLIENT-STATE.md sections 1, 2.4, 10-12 and the
R-resolutions about prompts, permissions, cancellation, closing, setup, resume/replay and
unannounced sessions: one example test per rule, through the public API (live
``Connection`` with ``send_*`` + ``receive_data``, or passive ``Connection(live=False)``
fed both directions of a log), checked on ``snapshot()``, events and the bytes written.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest
from helpers import (
    INFO,
    PERM_OPTIONS,
    SID,
    Live,
    Log,
    chunk,
    empty_session,
    error,
    idle,
    line,
    message_entry,
    msg,
    notification,
    permission,
    plan_items,
    prompt_request,
    ready,
    request,
    response,
    state,
    term,
    term_chunk,
    text,
    tool,
    tool_chunk,
    tool_entry,
    update,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_client import Connection, LocalProtocolError, replay_log
from acp_client.events import (
    AgentRequestReceived,
    InvalidMessageReceived,
    PermissionRequested,
    PermissionWithdrawn,
    PromptAccepted,
    PromptEchoed,
    PromptRejected,
    ReplayFinished,
    ReplayStarted,
    SessionAnnounced,
    SessionClosed,
    SessionCreated,
    UnmatchedResponseReceived,
)
from acp_client.schema import (
    ClientCapabilities,
    ImageContent,
    McpServerStdio,
    ResourceLink,
    TextContent,
)
from acp_client.testing import FakeAgent, ReferenceModel

START = {"type": "start"}
CMD_X = {"type": "command", "name": "x", "description": "X"}
CMD_Y = {"type": "command", "name": "y", "description": "Y"}
OPT_B = {"type": "boolean", "configId": "b", "name": "B", "currentValue": True}
OPT_C = {"type": "boolean", "configId": "c", "name": "C", "currentValue": False}


def cmds(*items: dict[str, object]) -> dict[str, object]:
    return {"sessionUpdate": "available_commands_update", "availableCommands": list(items)}


def opts(*items: dict[str, object]) -> dict[str, object]:
    return {"sessionUpdate": "config_option_update", "configOptions": list(items)}


# ---------------------------------------------------------------- 1 transport / envelope


def test_1_1_bytes_split_anywhere_give_the_same_events() -> None:
    data = line(update(chunk("agent", "a", "héllo"))) + line(update(idle()))
    whole = Connection()
    expected = whole.receive_data(data)
    split = Connection()
    got = []
    for i in range(len(data)):
        got += split.receive_data(data[i : i + 1])
    assert got == expected
    assert split.snapshot() == whole.snapshot()


def test_1_8_non_json_line_is_skipped_with_diagnostic() -> None:
    """A22: what the agent writes that is no ACP message is skipped and diagnosed."""
    conn = Connection()
    events = conn.receive_data(b"{oops\n" + line(update(chunk("agent", "a", "x"))))
    assert isinstance(events[0], InvalidMessageReceived)
    assert conn.snapshot()["sessions"][0]["timeline"] == [message_entry("agent", "a", "x")]
    diagnostics = conn.snapshot()["diagnostics"]
    assert [(d["severity"], d["code"]) for d in diagnostics] == [
        ("error", "malformed-line"),
        ("warning", "unannounced-session"),  # live, and no session/new (12.5)
    ]


def test_1_8_a_rejected_update_names_the_field_in_its_diagnostic_path() -> None:
    conn = Connection(live=False)
    bad = {"sessionUpdate": "agent_message_chunk", "messageId": 5, "content": text("x")}
    conn.receive_data(line(update(bad)))
    (diagnostic,) = conn.diagnostics
    assert (diagnostic.code, diagnostic.path) == ("update-rejected", "$.params.update.messageId")


def test_r22_a_permission_subject_naming_a_terminal_announces_it_in_order() -> None:
    live = Live()
    live.new_session()
    terminal = {"type": "terminal", "terminalId": "t1"}
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "c1", "content": [terminal]}}
    events = live.agent(permission(7, subject=subject))
    names = [type(e).__name__ for e in events]
    assert names == ["ToolCallUpserted", "TerminalUpserted", "PermissionRequested"]
    after = live.upd(state("running"))  # nothing left over for the next update's events
    assert [type(e).__name__ for e in after] == ["StateChanged"]
    assert [t["terminalId"] for t in live.session()["terminals"]] == ["t1"]


def test_1_8_inbound_request_with_malformed_params_is_answered_invalid_params() -> None:
    live = Live()
    live.agent(request(9, "session/request_permission", {"sessionId": SID, "title": 3}))
    [answer] = live.answers(9)
    assert answer["error"]["code"] == -32602


def test_1_8_a_line_nested_too_deep_is_skipped_and_the_read_goes_on() -> None:
    conn = Connection()
    deep = b"[" * 5000 + b"]" * 5000 + b"\n"
    events = conn.receive_data(deep + line(update(chunk("agent", "a", "x"))))
    assert [d.code for d in conn.diagnostics] == ["malformed-line", "unannounced-session"]
    assert InvalidMessageReceived in {type(e) for e in events}
    assert conn.snapshot()["sessions"][0]["timeline"] == [message_entry("agent", "a", "x")]


def test_1_8_valid_json_msgspec_refuses_is_applied_live_as_in_a_replay() -> None:
    # A lone surrogate escape (also as a key), a number beyond a double and an integer of 5,000
    # digits are valid JSON.
    raw = (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        b'{"sessionUpdate":"tool_call_update","toolCallId":"c","title":"a\\ud800",'
        b'"rawInput":{"\\ud800":1e400,"n":' + b"7" * 5000 + b"}}}}\n"
    )
    live = Connection()
    live.receive_data(raw)
    # the numbers beyond a double are said to read as infinity (issue 26: never silently)
    assert [d.code for d in live.diagnostics] == ["number-beyond-double", "unannounced-session"]
    [entry] = live.snapshot()["sessions"][0]["timeline"]
    assert entry["title"] == "a\ud800"
    assert entry["rawInput"] == {"\ud800": float("inf"), "n": float("inf")}  # int() has limits
    assert replay_log(raw).snapshot()["sessions"] == live.snapshot()["sessions"]


def test_1_5_batch_entries_are_applied_in_array_order() -> None:
    conn = Connection()
    batch = [
        update(chunk("agent", "a", "1")),
        update(msg("agent", "a", content=[text("R")])),
        update(chunk("agent", "a", "2")),
    ]
    conn.receive_data(line(batch))
    assert conn.snapshot()["sessions"][0]["timeline"] == [message_entry("agent", "a", "R", "2")]


def test_1_5_invalid_batch_entry_does_not_stop_the_others() -> None:
    conn = Connection()
    conn.receive_data(line([update(chunk("agent", "a", "1")), 5, update(chunk("agent", "a", "2"))]))
    assert conn.snapshot()["sessions"][0]["timeline"] == [message_entry("agent", "a", "1", "2")]
    assert conn.diagnostics


def test_1_5_empty_batch_is_answered_with_one_invalid_request_error() -> None:
    conn = Connection()
    conn.receive_data(b"[]\n")
    out = conn.data_to_send()
    assert out
    assert b'"id":null' in out and b"-32600" in out


def test_1_5_invalid_batch_entry_is_answered_with_invalid_request() -> None:
    conn = Connection()
    conn.receive_data(line([update(chunk("agent", "a", "1")), 5]))
    out = conn.data_to_send()
    assert b"-32600" in out


def test_1_5_all_notification_batch_gets_no_reply() -> None:
    """C11: notifications are never answered, not even with an empty array."""
    conn = Connection()
    conn.receive_data(line([update(idle()), update(chunk("agent", "a", "x"))]))
    assert conn.data_to_send() == b""


def _batch_replies(out: bytes) -> dict[Any, dict[str, Any]]:
    """The replies of one written array, by id (``None`` for the id-null errors)."""
    assert out.endswith(b"\n") and out.count(b"\n") == 1, out
    replies = json.loads(out)
    assert isinstance(replies, list), out
    return {reply["id"]: reply for reply in replies}


def test_1_5_requests_of_a_batch_are_answered_in_one_array_once_all_are_answered() -> None:
    conn = Connection(extension_methods={"_acme/ask"})
    conn.receive_data(line([permission(1), request(2, "_acme/ask", {"q": 1}), 5, update(idle())]))
    assert conn.data_to_send() == b""  # the invalid entry's -32600 waits for the others
    assert conn.answer_method_not_found(2) == b""
    replies = _batch_replies(conn.answer_permission(1, "allow"))
    assert set(replies) == {1, 2, None}
    assert replies[1]["result"]["outcome"] == {"outcome": "selected", "optionId": "allow"}
    assert replies[2]["error"]["code"] == -32601
    assert replies[None]["error"]["code"] == -32600
    assert conn.data_to_send() == b""


def test_1_5_an_unknown_request_in_a_batch_is_answered_inside_its_array() -> None:
    conn = Connection()
    conn.receive_data(line([request(2, "_unknown/x"), permission(1)]))
    assert conn.data_to_send() == b""  # the -32601 waits for the permission's answer
    replies = _batch_replies(conn.answer_permission(1, None))
    assert replies[2]["error"]["code"] == -32601
    assert replies[1]["result"]["outcome"] == {"outcome": "cancelled"}


def test_1_5_a_batch_request_with_malformed_params_is_answered_inside_the_array() -> None:
    conn = Connection()
    conn.receive_data(line([request(3, "session/request_permission", {"title": 3}), 7]))
    replies = _batch_replies(conn.data_to_send())
    assert replies[3]["error"]["code"] == -32602
    assert replies[None]["error"]["code"] == -32600


def test_1_5_a_parsed_batch_given_to_receive_message_is_answered_in_one_array() -> None:
    conn = Connection(extension_methods={"_acme/a", "_acme/b"})
    conn.receive_message([request(4, "_acme/a"), request(5, "_acme/b"), "x"])
    assert conn.answer_request(5, {"ok": True}) == b""
    replies = _batch_replies(conn.answer_error(4, -32000, "no"))
    assert replies[5]["result"] == {"ok": True}
    assert replies[4]["error"] == {"code": -32000, "message": "no"}
    assert replies[None]["error"]["code"] == -32600


def test_1_5_replies_owed_to_requests_outside_the_batch_go_on_their_own() -> None:
    conn = Connection(extension_methods={"_x"})
    conn.receive_data(line(permission(1)))
    conn.receive_data(line([notification("$/cancel_request", {"requestId": 1}), request(2, "_x")]))
    withdrawn = json.loads(conn.data_to_send())
    assert withdrawn["id"] == 1 and withdrawn["result"]["outcome"] == {"outcome": "cancelled"}
    assert _batch_replies(conn.answer_method_not_found(2)).keys() == {2}


def test_1_5_a_batch_that_is_not_json_is_one_parse_failure_not_an_array() -> None:
    conn = Connection()
    events = conn.receive_data(b'[{"jsonrpc":"2.0","id":1,"method"]\n')
    assert [type(e) for e in events] == [InvalidMessageReceived]
    assert not conn.data_to_send().startswith(b"[")


def test_1_5_passive_replay_of_a_batch_writes_nothing() -> None:
    conn = Connection(live=False)
    conn.receive_data(line([permission(1), 5]))
    assert conn.data_to_send() == b""


@settings(max_examples=60, deadline=None)
@given(st.permutations(range(4)), st.integers(min_value=0, max_value=3))
def test_1_5_batch_array_is_written_once_after_the_last_answer_in_any_order(
    order: list[int], invalid: int
) -> None:
    conn = Connection(extension_methods={f"_acme/m{i}" for i in range(4)})
    conn.receive_data(line([request(i, f"_acme/m{i}") for i in range(4)] + [0] * invalid))
    written = [conn.answer_request(i, {"i": i}) for i in order]
    assert written[:-1] == [b""] * 3
    replies = json.loads(written[-1])
    assert sorted(r["id"] for r in replies if r["id"] is not None) == [0, 1, 2, 3]
    assert all(r["result"] == {"i": r["id"]} for r in replies if r["id"] is not None)
    assert sum(r["id"] is None for r in replies) == invalid


def test_12_5_a_malformed_prompt_in_a_log_creates_its_session_and_is_still_tracked() -> None:
    log = Log()
    log.client(request(3, "session/prompt", {"sessionId": "s4", "prompt": [{"type": "image"}]}))
    log.agent(error(3, -32602, "bad block"))
    [prompt] = log.session("s4")["prompts"]
    assert prompt["status"] == "rejected" and prompt["error"]["code"] == -32602
    assert "orphan-response" not in log.codes() and "invalid-message" in log.codes()


def test_12_5_a_malformed_agent_request_still_creates_its_session() -> None:
    live = Live()
    live.agent(permission(8, sid="s2", options=[]))
    assert live.session("s2")["announced"] is False
    [answer] = live.answers(8)
    assert answer["error"]["code"] == -32602


def test_1_3_elicitation_the_client_did_not_advertise_is_answered_method_not_found() -> None:
    live = Live()
    live.initialize()
    live.new_session()
    live.agent(request(9, "elicitation/create", {"sessionId": SID, "message": "m"}))
    [answer] = live.answers(9)
    assert answer["error"]["code"] == -32601


def test_1_4_initialize_is_repeatable_only_until_another_request_is_sent() -> None:
    conn = Connection()
    first, _ = conn.send_initialize()
    second, _ = conn.send_initialize()
    ok = {"protocolVersion": 2, "capabilities": {}, "info": INFO}
    conn.receive_data(line(response(first, ok)) + line(response(second, ok)))
    assert conn.diagnostics == []  # both answers matched (the latest success counts)
    assert conn.protocol_version == 2
    conn.send_new_session("/w")
    with pytest.raises(LocalProtocolError):
        conn.send_initialize()


def test_c2_an_answer_with_a_protocol_version_not_offered_is_an_error() -> None:
    """A23: the agent answers a version at or below the offer."""
    conn = Connection()
    rid, _ = conn.send_initialize(protocol_version=2)
    conn.receive_data(line(response(rid, {"protocolVersion": 3, "capabilities": {}, "info": INFO})))
    assert [(d.code, d.severity) for d in conn.diagnostics] == [
        ("protocol-version-mismatch", "error")
    ]


def test_12_5_an_unannounced_session_seen_live_is_a_diagnostic_but_replay_is_quiet() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"), sid="zz")
    assert "unannounced-session" in live.codes()
    log = Log()
    log.upd(state("running"), sid="zz")
    assert log.codes() == []


def test_12_5_updates_before_the_session_new_result_are_not_unannounced() -> None:
    live = Live()
    rid, _ = live.conn.send_new_session("/w")
    live.upd(state("idle"))
    live.agent(response(rid, {"sessionId": SID}))
    assert "unannounced-session" not in live.codes()


def _initialized(session_caps: dict[str, Any]) -> Connection:
    return ready(SID, agent_capabilities={"session": session_caps})


def test_c1_initialize_before_any_other_request() -> None:
    conn = Connection()
    for send in (lambda: conn.send_new_session("/w"), lambda: conn.send_request("x/y", {})):
        with pytest.raises(LocalProtocolError, match="C1"):
            send()
    conn.send_initialize()
    conn.send_new_session("/w")  # after initialize is sent (1.4: no longer repeatable)
    quiet = Connection(live=False)  # a log's client is not this library's to police
    quiet.send_new_session("/w")


def test_c1_prompt_only_after_initialization_and_session_setup() -> None:
    conn = Connection()
    init_id, _ = conn.send_initialize()
    with pytest.raises(LocalProtocolError, match="initialize"):
        conn.send_prompt(SID, "hi")  # initialize not answered yet
    conn.receive_data(line(error(init_id, -32603)))
    with pytest.raises(LocalProtocolError, match="initialize"):
        conn.send_prompt(SID, "hi")  # initialize failed
    conn = ready()
    new_id, _ = conn.send_new_session("/w")
    with pytest.raises(LocalProtocolError, match="not set up"):
        conn.send_prompt(SID, "hi")  # session/new not answered
    conn.receive_data(line(update({"sessionUpdate": "session_info_update"}, "other")))
    with pytest.raises(LocalProtocolError, match="not set up"):
        conn.send_prompt("other", "hi")  # known from an update only (R3), never set up
    conn.receive_data(line(response(new_id, {"sessionId": SID})))
    conn.send_prompt(SID, "hi")
    conn.send_resume("old", "/w", replay=False)
    conn.send_prompt("old", "hi")  # a resumed session counts as set up from the request
    close_id, _ = conn.send_close(SID)
    conn.receive_data(line(response(close_id, {})))
    with pytest.raises(LocalProtocolError, match="is closed"):
        conn.send_prompt(SID, "hi")  # closed


@pytest.mark.parametrize(
    "body",
    [
        {"error": {"code": "boom", "message": "boom"}},
        {"error": {"code": -32603}},
    ],
)
def test_1_2_a_malformed_response_is_not_answered_and_ends_its_request(
    body: dict[str, Any],
) -> None:
    live = Live()
    live.new_session()
    rid = live.prompt("hi")
    live.agent({"jsonrpc": "2.0", "id": rid, **body})
    assert [m for m in live.sent if "method" not in m] == []  # a response is never answered
    prompt = live.conn.prompt(rid)
    assert prompt.status == "rejected"
    assert prompt.error.code == -32603 and prompt.error.data == {
        "jsonrpc": "2.0",
        "id": rid,
        **body,
    }
    assert live.codes() == ["invalid-message"]


@pytest.mark.parametrize(
    "raw",
    [
        {"id": None, "error": {"code": -32700}},  # no message: malformed, id unreadable
        {"id": None, "error": {"code": 1.5, "message": "m"}},
        {"id": None, "result": {}},  # a success never has id null
    ],
)
def test_1_2_a_malformed_response_with_a_null_id_is_not_answered(raw: dict[str, Any]) -> None:
    live = Live()
    live.new_session()
    live.agent({"jsonrpc": "2.0", **raw})
    assert [m for m in live.sent if "method" not in m] == []
    assert live.codes() == ["invalid-message"]


@pytest.mark.parametrize(
    "body",
    [
        {"result": {"messageId": "u1"}, "error": {"code": 1, "message": "x"}},
        {},
        {"idf": True, "result": {"messageId": "u1"}},  # the id as a float: 2.0
    ],
)
def test_1_2_what_is_no_response_leaves_its_request_pending_as_a_replay_does(
    body: dict[str, Any],
) -> None:
    # LOG-FORMATS 1.7: both `result` and `error`, neither, or an id with a fraction part is
    # not a classifiable message; a replay of the recording skips it (invalid-jsonrpc), so
    # the live connection does not settle the request either (the transport fails the call).
    live = Live()
    live.new_session()
    rid = live.prompt("hi")
    body = dict(body)
    rid_sent: Any = float(rid) if body.pop("idf", False) else rid
    live.agent({"jsonrpc": "2.0", "id": rid_sent, **body})
    assert [m for m in live.sent if "method" not in m] == []  # a response is never answered
    assert live.conn.prompt(rid).status == "pending"
    assert live.codes() == ["invalid-message"]
    live.agent(response(rid, {"messageId": "u1"}))  # a valid answer still settles it
    assert live.conn.prompt(rid).status == "accepted"


def test_c5_a_block_type_that_is_no_string_is_refused_as_a_protocol_error() -> None:
    conn = _initialized({})
    with pytest.raises(LocalProtocolError, match="C5"):
        conn.send_prompt(SID, [{"type": ["x"]}])


def test_c5_prompt_blocks_need_the_agents_prompt_capabilities() -> None:
    image = ImageContent(data="aGk=", mime_type="image/png")
    link = ResourceLink(uri="file:///a", name="a")
    conn = _initialized({})
    conn.send_prompt(SID, [TextContent(text="t"), link])  # text and links always
    with pytest.raises(LocalProtocolError, match="image"):
        conn.send_prompt(SID, [TextContent(text="t"), image])
    _initialized({"prompt": {"image": {}}}).send_prompt(SID, [image])


def test_c5_blocks_given_as_plain_data_are_checked_by_their_type() -> None:
    image = {"type": "image", "data": "aGk=", "mimeType": "image/png"}
    resource = {"type": "resource", "resource": {"uri": "file:///a", "text": "x"}}
    conn = _initialized({})
    conn.send_prompt(SID, [{"type": "text", "text": "t"}, {"type": "resource_link", "uri": "u"}])
    for block in (image, {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"}, resource):
        with pytest.raises(LocalProtocolError, match="C5"):
            conn.send_prompt(SID, [block])
    with pytest.raises(LocalProtocolError, match="_acme"):
        conn.send_prompt(SID, [{"type": "_acme"}])  # no capability can have opted into it
    _initialized({"prompt": {"image": {}, "embeddedContext": {}}}).send_prompt(
        SID, [image, resource]
    )


@pytest.mark.parametrize(
    "result",
    [
        {"protocolVersion": 2, "capabilities": "bogus", "info": INFO},  # lenient-default
        {"protocolVersion": 2, "capabilities": {}},  # no info: an invalid result
        {"protocolVersion": 2, "info": INFO},  # capabilities omitted
    ],
)
def test_c3_capabilities_unreadable_or_omitted_in_the_answer_advertise_nothing(
    result: dict[str, Any],
) -> None:
    # C3: a capability the agent omitted is unsupported; an answer whose capabilities could
    # not be read advertises none either, so C5 and C6 still apply.
    conn = Connection()
    rid, _ = conn.send_initialize()
    conn.receive_message(response(rid, result), "incoming")
    new = conn.send_new_session("/w")
    conn.receive_message(response(new.request_id, {"sessionId": SID}), "incoming")
    conn.send_prompt(SID, [TextContent(text="t")])
    with pytest.raises(LocalProtocolError, match="image"):
        conn.send_prompt(SID, [ImageContent(data="aGk=", mime_type="image/png")])
    with pytest.raises(LocalProtocolError, match="additionalDirectories"):
        conn.send_new_session("/w", additional_directories=["/q"])


@pytest.mark.parametrize("path", ["relative/dir", "file:///w", ""])
def test_c6_paths_must_be_absolute(path: str) -> None:
    conn = _initialized({"additionalDirectories": {}})
    with pytest.raises(LocalProtocolError):
        conn.send_new_session(path)
    with pytest.raises(LocalProtocolError):
        conn.send_resume(SID, path)
    with pytest.raises(LocalProtocolError):
        conn.send_new_session("/w", additional_directories=[path])
    conn.send_new_session("/w")
    conn.send_new_session("C:\\work")


def test_c6_additional_directories_only_if_advertised() -> None:
    with pytest.raises(LocalProtocolError, match="additionalDirectories"):
        _initialized({}).send_new_session("/w", additional_directories=["/q"])
    _initialized({"additionalDirectories": {}}).send_new_session(
        "/w", additional_directories=["/q"]
    )


def test_c6_mcp_servers_only_with_an_advertised_transport() -> None:
    stdio = McpServerStdio(name="fs", command="/bin/fs")
    http = {"type": "http", "name": "web", "url": "https://mcp.example", "headers": []}
    sse = {"type": "sse", "name": "old", "url": "https://mcp.example"}
    conn = _initialized({"mcp": {"stdio": {}}})
    conn.send_new_session("/w", mcp_servers=[stdio])
    conn.send_resume(SID, "/w", mcp_servers=[stdio])
    for servers in ([http], [stdio, http], [sse]):
        with pytest.raises(LocalProtocolError, match="C6"):
            conn.send_new_session("/w", mcp_servers=servers)  # type: ignore[list-item]
        with pytest.raises(LocalProtocolError, match="C6"):
            conn.send_resume(SID, "/w", mcp_servers=servers)  # type: ignore[list-item]
    with pytest.raises(LocalProtocolError, match=r"session\.mcp\.stdio"):  # C3: null is no
        _initialized({"mcp": {"stdio": None, "http": {}}}).send_new_session(
            "/w", mcp_servers=[stdio]
        )
    both = _initialized({"mcp": {"stdio": {}, "http": {}, "sse": {}}})
    both.send_new_session("/w", mcp_servers=[stdio, http, sse])  # type: ignore[list-item]
    # raw params through send_request are checked the same way
    with pytest.raises(LocalProtocolError, match="C6"):
        _initialized({}).send_request("session/new", {"cwd": "/w", "mcpServers": [http]})
    _initialized({}).send_new_session("/w")  # no server needs nothing


def test_c4_auth_methods_only_when_the_agent_offers_some() -> None:
    def answered(**fields: Any) -> Connection:
        conn = Connection()
        rid, _ = conn.send_initialize()
        result = {"protocolVersion": 2, "capabilities": {}, "info": INFO, **fields}
        conn.receive_message(response(rid, result), "incoming")
        return conn

    for conn in (answered(), answered(authMethods=[]), answered(authMethods=None)):
        for method in ("auth/login", "auth/logout"):
            with pytest.raises(LocalProtocolError, match="C4"):
                conn.send_request(method, {"methodId": "key"})
    methods = [{"type": "agent", "methodId": "key", "name": "API key"}]
    conn = answered(authMethods=methods)
    conn.send_request("auth/login", {"methodId": "key"})
    conn.send_request("auth/logout", {})


def test_c7_session_delete_only_if_advertised() -> None:
    for caps in ({}, {"delete": None}):
        with pytest.raises(LocalProtocolError, match="C7"):
            _initialized(caps).send_request("session/delete", {"sessionId": SID})
    _initialized({"delete": {}}).send_request("session/delete", {"sessionId": SID})
    # before the answer is known, and in a replayed log, nothing is refused
    early = Connection()
    early.send_initialize()
    early.send_request("session/delete", {"sessionId": SID})
    Connection(live=False).send_request("session/delete", {"sessionId": SID})


@pytest.mark.parametrize("answer", ["ok", "error"])
def test_resuming_a_closed_session_opens_it_again_unless_the_resume_fails(answer: str) -> None:
    # 12.3 step 4: on the resume's success the lifecycle is `open` (its replay is no
    # update-after-close); step 5: a failed resume of a closed session leaves it closed.
    a = FakeAgent(SID).new_session(1).close(2).close_response(2)
    a.resume(3, replay=True).user_message("u1", "hi").state("idle", stop_reason="end_turn")
    if answer == "ok":
        a.resume_response(3)
    else:
        a.error(3, -32603, "cannot load")
    conn = Connection(live=False)
    for direction, message in a.messages:
        conn.receive_message(message, direction)  # type: ignore[arg-type]
    snap = conn.snapshot()
    (session,) = snap["sessions"]
    assert ("closed" in session) is (answer == "error")
    assert [d["code"] for d in snap["diagnostics"] if d["code"] == "update-after-close"] == []
    model = ReferenceModel()
    model.feed_all(a.messages)
    assert ("closed" in model.snapshot()["sessions"][0]) is (answer == "error")


def test_a_resume_of_a_closed_session_lost_with_its_connection_leaves_it_closed() -> None:
    # LOG-FORMATS 1.4: a new initialize drops the old connection's unanswered requests; the
    # resume that would have opened the session again is one of them.
    a = FakeAgent(SID).initialize(0).new_session(1).close(2).close_response(2)
    a.resume(3, replay=False).initialize(0).new_session(1)
    conn, model = Connection(live=False), ReferenceModel()
    for direction, message in a.messages:
        conn.receive_message(message, direction)  # type: ignore[arg-type]
    model.feed_all(a.messages)
    (session,) = [x for x in conn.snapshot()["sessions"] if x["sessionId"] == SID]
    assert session["closed"] is True
    assert model.snapshot()["sessions"][0]["closed"] is True


def test_an_initialize_answer_invalid_elsewhere_still_offers_what_it_lists() -> None:
    # No `info` makes the answer invalid, but its readable capabilities and authMethods are
    # what the agent offers: C4 and C7 must not refuse them, C6 still applies to the rest.
    conn = Connection()
    rid, _ = conn.send_initialize()
    result = {
        "protocolVersion": 2,
        "capabilities": {"session": {"delete": {}, "mcp": {"stdio": {}}}},
        "authMethods": [
            {"type": "agent", "methodId": 5, "name": "bad"},  # skipped alone, as when valid
            {"type": "agent", "methodId": "key", "name": "API key"},
        ],
    }
    conn.receive_message(response(rid, result), "incoming")
    assert [m.method_id for m in conn.auth_methods] == ["key"]
    conn.send_request("auth/login", {"methodId": "key"})
    conn.send_request("session/delete", {"sessionId": SID})
    conn.send_new_session("/w", mcp_servers=[McpServerStdio(name="fs", command="/bin/fs")])
    http = {"type": "http", "name": "web", "url": "https://mcp.example", "headers": []}
    with pytest.raises(LocalProtocolError, match="C6"):
        conn.send_new_session("/w", mcp_servers=[http])  # type: ignore[list-item]


def test_c21_set_only_listed_values_or_booleans() -> None:
    live = Live()
    live.new_session()
    grouped = [{"groupId": "g", "name": "G", "options": [{"value": "code", "name": "Code"}]}]
    mode = {"type": "select", "configId": "mode", "name": "M", "currentValue": "code"}
    live.upd(opts({**mode, "options": grouped}, OPT_B))
    conn = live.conn
    conn.send_set_config_option(SID, "mode", "code")
    conn.send_set_config_option(SID, "b", False)
    for config_id, value in [("mode", "zzz"), ("mode", True), ("b", "yes"), ("nope", "a")]:
        with pytest.raises(LocalProtocolError, match="C21"):
            conn.send_set_config_option(SID, config_id, value)


def test_a21_permission_options_offered_twice_and_relative_cwd_are_diagnosed() -> None:
    live = Live()
    live.new_session()
    options = [*PERM_OPTIONS, PERM_OPTIONS[0]]
    subject = {"type": "command", "command": "ls", "cwd": "rel"}
    live.agent(permission(4, options=options, subject=subject))
    assert live.codes() == ["invalid-permission-request", "relative-path"]
    assert live.session()["permissionRequests"][0]["status"] == "pending"


FORM = {"type": "object", "properties": {}}


@pytest.mark.parametrize(
    "params",
    [
        {"sessionId": SID, "mode": "form", "requestedSchema": FORM},  # no message
        {"sessionId": SID, "message": "m"},  # no mode
        {"sessionId": SID, "message": "m", "mode": "form"},  # no requestedSchema
        {"sessionId": SID, "message": "m", "mode": "url", "url": "https://x"},  # no id
        {"message": "m", "mode": "form", "requestedSchema": FORM},  # no scope
        {"sessionId": SID, "requestId": 1, "message": "m", "mode": "form", "requestedSchema": FORM},
    ],
)
def test_1_8_malformed_elicitation_is_answered_invalid_params(params: dict[str, Any]) -> None:
    live = Live()
    live.initialize(elicitation={"form": {}})
    live.new_session()
    live.agent(request(9, "elicitation/create", params))
    [answer] = live.answers(9)
    assert answer["error"]["code"] == -32602


@pytest.mark.parametrize(
    "params",
    [
        {"sessionId": SID, "message": "m", "mode": "form", "requestedSchema": FORM},
        {"requestId": 3, "message": "m", "mode": "url", "elicitationId": "e", "url": "https://x"},
        {"sessionId": SID, "message": "m", "mode": "_custom"},
    ],
)
def test_11_4_a_well_formed_elicitation_waits_for_the_embedder(params: dict[str, Any]) -> None:
    live = Live()
    live.initialize(elicitation={"form": {}, "url": {}})
    live.new_session()
    live.agent(request(9, "elicitation/create", params))
    assert live.answers(9) == []
    assert live.conn.pending_agent_requests() == {9: "elicitation/create"}


def test_1_3_unknown_notifications_are_ignored() -> None:
    log = Log()
    log.agent(
        notification("_acme/ping", {"x": 1}),
        notification("elicitation/complete", {"elicitationId": "e"}),
    )
    assert log.snap()["sessions"] == []
    assert log.conn.data_to_send() == b""


@pytest.mark.parametrize("method", ["_acme/ext", "fs/read_text_file", "terminal/create"])
def test_1_3_unknown_request_is_surfaced_and_answered_method_not_found_at_once(
    method: str,
) -> None:
    live = Live()
    events = live.agent(request(8, method, {"a": 1}))
    assert events == [AgentRequestReceived(request_id=8, method=method, params={"a": 1})]
    [answer] = live.answers(8)
    assert answer["error"]["code"] == -32601
    assert live.conn.pending_agent_requests() == {}
    with pytest.raises(LocalProtocolError):
        live.conn.answer_method_not_found(8)


def test_1_3_extension_methods_the_embedder_serves_wait_for_its_answer() -> None:
    conn = Connection(extension_methods={"_acme/ext"})
    conn.send_initialize(capabilities=ClientCapabilities(elicitation={"form": {}}))
    conn.receive_data(line(request(8, "_acme/ext", {"a": 1})))
    elicit = {"sessionId": SID, "message": "m", "mode": "form", "requestedSchema": FORM}
    conn.receive_data(line(request(9, "elicitation/create", elicit)))
    assert conn.data_to_send() == b""
    assert conn.pending_agent_requests() == {8: "_acme/ext", 9: "elicitation/create"}
    answer = json.loads(conn.answer_request(8, {"ok": 1}))
    assert answer == {"jsonrpc": "2.0", "id": 8, "result": {"ok": 1}}


def test_1_3_a_passive_replay_never_answers_unknown_requests() -> None:
    log = Log()
    log.agent(request(8, "_acme/ext"))
    assert log.conn.data_to_send() == b""
    assert log.conn.pending_agent_requests() == {8: "_acme/ext"}


def test_r62_response_to_unknown_request_is_kept_raw_with_diagnostic() -> None:
    log = Log()
    events = log.agent(response(77, {"messageId": "u"}))
    assert isinstance(events[-1], UnmatchedResponseReceived)
    assert len(log.conn.unmatched_responses) == 1
    assert "orphan-response" in log.codes()
    assert log.snap()["sessions"] == []


def test_c12_request_ids_are_distinct_while_pending() -> None:
    conn = ready(SID)
    ids = [conn.send_prompt(SID, "x").request_id for _ in range(5)]
    assert len(set(ids)) == 5


def test_c5_empty_prompt_is_refused_locally() -> None:
    with pytest.raises(LocalProtocolError):
        Connection().send_prompt(SID, [])


def test_2_1_initialize_result_sets_the_protocol_version() -> None:
    live = Live()
    rid, data = live.conn.send_initialize()
    live.wrote(data)
    assert live.sent[0]["params"]["protocolVersion"] == 2
    live.agent(
        response(
            rid, {"protocolVersion": 2, "info": {"name": "a", "version": "1"}, "capabilities": {}}
        )
    )
    live.new_session()
    assert live.session()["protocolVersion"] == 2


def test_2_1_protocol_version_absent_without_initialize() -> None:
    log = Log()
    log.upd(chunk("agent", "a", "x"))
    assert "protocolVersion" not in log.session()


# ---------------------------------------------------------------- 10 prompt tracker


def test_10_2_response_first_then_update_links_the_submission() -> None:
    live = Live()
    live.new_session()
    rid = live.prompt("hi")
    assert live.session()["prompts"] == [{"requestId": rid, "status": "pending", "echoed": False}]
    events = live.agent(response(rid, {"messageId": "u1"}))
    assert PromptAccepted(session_id=SID, request_id=rid, message_id="u1", echoed=False) in events
    assert live.session()["timeline"] == []  # 10.4: the response creates no entry
    events = live.upd(msg("user", "u1", content=[text("hi")]))
    assert PromptEchoed(session_id=SID, request_id=rid, message_id="u1") in events
    assert live.session()["prompts"] == [
        {"requestId": rid, "status": "accepted", "messageId": "u1", "echoed": True}
    ]


def test_10_4_update_first_then_response_creates_no_duplicate() -> None:
    live = Live()
    live.new_session()
    rid = live.prompt("hi")
    live.upd(chunk("user", "u1", "hi"))
    events = live.agent(response(rid, {"messageId": "u1"}))
    assert PromptAccepted(session_id=SID, request_id=rid, message_id="u1", echoed=True) in events
    snap = live.session()
    assert snap["timeline"] == [message_entry("user", "u1", "hi")]
    assert snap["prompts"][0]["echoed"] is True


def test_10_4_association_is_never_by_content_or_order() -> None:
    log = Log()
    log.client(prompt_request(1, t="same"))
    log.upd(chunk("user", "other", "same"))
    log.agent(response(1, {"messageId": "mine"}))
    assert log.session()["prompts"][0]["echoed"] is False
    log.upd(chunk("user", "mine", "expanded by the agent"))
    assert log.session()["prompts"][0]["echoed"] is True


def test_r42_agent_content_is_canonical_for_display() -> None:
    log = Log()
    log.client(prompt_request(1, t="/cmd"))
    log.agent(response(1, {"messageId": "u1"}))
    log.upd(msg("user", "u1", content=[text("expanded command")]))
    assert log.timeline() == [message_entry("user", "u1", "expanded command")]
    assert log.sess().prompts[0].prompt[0].text == "/cmd"


def test_10_5_error_response_rejects_without_history() -> None:
    live = Live()
    live.new_session()
    live.upd(idle())
    rid = live.prompt()
    err = {"code": -32602, "message": "bad"}
    events = live.agent(error(rid, -32602, "bad"))
    assert any(isinstance(e, PromptRejected) for e in events)
    snap = live.session()
    assert snap["prompts"] == [
        {"requestId": rid, "status": "rejected", "echoed": False, "error": err}
    ]
    assert snap["timeline"] == []
    assert snap["state"] == {"state": "idle", "stopReason": "end_turn"}


def test_10_6_rejected_prompt_is_never_linked() -> None:
    """A1: an error means not inserted, so a rejected prompt is never linked."""
    log = Log()
    log.client(prompt_request(1))
    log.agent(error(1, -32603, "x"))
    log.upd(chunk("user", "u1", "hello"))
    assert log.session()["prompts"][0] == {
        "requestId": 1,
        "status": "rejected",
        "echoed": False,
        "error": {"code": -32603, "message": "x"},
    }


def test_r2_accepted_but_never_echoed_stays_accepted_with_diagnostic_at_work_end() -> None:
    """A3: the inserted message must be reported live."""
    log = Log()
    log.client(prompt_request(1))
    log.agent(response(1, {"messageId": "u1"}))
    log.upd(state("running"), chunk("agent", "a", "x"))
    assert "prompt-not-echoed" not in log.codes()
    log.upd(idle())
    assert log.session()["prompts"] == [
        {"requestId": 1, "status": "accepted", "messageId": "u1", "echoed": False}
    ]
    assert "prompt-not-echoed" in log.codes()
    assert log.timeline() == [message_entry("agent", "a", "x")]
    log.upd(state("running"), idle("end_turn"), state("running"), idle("end_turn"))
    assert log.codes().count("prompt-not-echoed") == 1  # "diagnostic once" (10.5)


@pytest.mark.parametrize("stop", ["end_turn", "cancelled"])
def test_6_3_an_idle_while_idle_awaiting_a_prompts_work_is_no_turn_but_is_said(stop: str) -> None:
    """A7: work that skipped `running` is diagnosed."""
    # An agent that skips `running` (a locally handled command, a prompt cancelled before its
    # work started): the idle is no completion (6.3, R51), and wait_done() would wait on.
    live = Live()
    live.new_session()
    rid = live.prompt()
    live.agent(response(rid, {"messageId": "u1"}))
    live.upd(msg("user", "u1", content=[text("hello")]))
    live.upd(idle(None))  # a refresh without a stop reason: nothing to say
    assert live.codes() == []
    live.upd(idle(stop))
    assert live.session()["completedTurns"] == []
    assert not live.conn.prompt_finished(rid)
    assert live.codes() == ["idle-without-running"]
    live.upd(state("running"), idle("end_turn"))  # the work, reported late after all
    assert live.conn.prompt_finished(rid) and live.session()["completedTurns"] == ["end_turn"]
    live.upd(idle("end_turn"))  # nothing is awaited any more: a plain repeated idle
    assert live.codes() == ["idle-without-running"]


@pytest.mark.parametrize("result", [{}, {"messageId": None}, {"messageId": 5}, None, "ok", [1]])
def test_r8_response_without_string_message_id_is_accepted_unbound(result: object) -> None:
    """A2: the success result must carry a string `messageId`."""
    log = Log()
    log.client(prompt_request(1))
    log.agent(response(1, result))
    log.upd(chunk("user", "u1", "hello"))
    assert log.session()["prompts"] == [{"requestId": 1, "status": "accepted", "echoed": False}]
    assert log.sess().prompts[0].unbound
    assert log.timeline() == [message_entry("user", "u1", "hello")]
    # One diagnostic, a warning: the response was applied (accepted unbound), not skipped.
    assert [(d.code, d.severity) for d in log.conn.diagnostics] == [
        ("prompt-response-without-message-id", "warning")
    ]


def test_r9_prompt_while_running_stays_pending_until_answered() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"))
    rid = live.prompt("second")
    assert live.session()["prompts"][0]["status"] == "pending"
    live.upd(idle())
    live.agent(response(rid, {"messageId": "u2"}))
    assert live.session()["prompts"][0]["status"] == "accepted"


def test_r10_two_submissions_with_the_same_message_id_both_link() -> None:
    """A4: distinct submissions must get distinct message ids."""
    log = Log()
    log.client(prompt_request(1), prompt_request(2))
    log.agent(response(1, {"messageId": "u"}), response(2, {"messageId": "u"}))
    log.upd(chunk("user", "u", "x"))
    assert [p["echoed"] for p in log.session()["prompts"]] == [True, True]
    assert "duplicate-message-id" in log.codes()
    assert len(log.timeline()) == 1


def test_r65_response_id_naming_only_an_agent_message_does_not_link() -> None:
    log = Log()
    log.upd(chunk("agent", "m1", "A"), chunk("thought", "m1", "T"))
    log.client(prompt_request(1))
    log.agent(response(1, {"messageId": "m1"}))
    assert log.session()["prompts"][0]["echoed"] is False
    log.upd(chunk("user", "m1", "U"))
    assert log.session()["prompts"][0]["echoed"] is True


def test_r49_order_of_running_response_and_user_message_is_free() -> None:
    for order in ([0, 1, 2], [2, 1, 0], [1, 0, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1]):
        log = Log()
        log.client(prompt_request(1))
        steps = [
            lambda log=log: log.agent(response(1, {"messageId": "u"})),
            lambda log=log: log.upd(state("running")),
            lambda log=log: log.upd(chunk("user", "u", "x")),
        ]
        for i in order:
            steps[i]()
        log.upd(idle())
        snap = log.session()
        assert snap["prompts"][0]["echoed"] is True
        assert snap["completedTurns"] == ["end_turn"]
        assert snap["timeline"] == [message_entry("user", "u", "x")]


def test_10_5_connection_lost_leaves_pending_prompts_pending() -> None:
    live = Live()
    live.new_session()
    live.prompt()
    live.conn.connection_lost()
    assert live.session()["prompts"][0]["status"] == "pending"
    assert "prompt-uncertain" in live.codes()


def test_10_5_client_cancel_request_for_a_prompt_then_success_is_accepted() -> None:
    live = Live()
    live.new_session()
    rid = live.prompt()
    live.wrote(live.conn.send_cancel_request(rid))
    assert live.sent[-1] == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": rid},
    }
    live.agent(response(rid, {"messageId": "u"}))
    assert live.session()["prompts"][0]["status"] == "accepted"


def test_r63_held_prompt_withdrawn_by_cancel_is_rejected() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"))
    rid = live.prompt("held")
    live.cancel()
    assert live.session()["prompts"][0]["status"] == "pending"
    live.agent(error(rid, -32800, "withdrawn"))
    live.upd(idle("cancelled"))
    snap = live.session()
    assert snap["prompts"][0]["status"] == "rejected"
    assert snap["prompts"][0]["error"]["code"] == -32800
    assert snap["completedTurns"] == ["cancelled"]


# ---------------------------------------------------------------- 11.1 permissions


def test_11_1_tool_call_subject_is_applied_before_the_prompt() -> None:
    live = Live()
    live.new_session()
    live.upd(chunk("agent", "a", "x"))
    subject = {
        "type": "tool_call",
        "toolCall": {"toolCallId": "c1", "title": "Edit", "status": "pending", "_meta": {"k": 1}},
    }
    events = live.agent(permission(5, subject=subject, description="long text"))
    assert isinstance(events[-1], PermissionRequested)
    snap = live.session()
    assert snap["timeline"][1] == tool_entry("c1", title="Edit", _meta={"k": 1})
    assert snap["permissionRequests"] == [
        {
            "requestId": 5,
            "title": "Allow?",
            "description": "long text",
            "toolCallId": "c1",
            "status": "pending",
            "options": PERM_OPTIONS,
        }
    ]


def test_11_1_request_title_does_not_change_the_tool_call_title() -> None:
    log = Log()
    log.upd(tool("c1", title="Original"))
    log.agent(
        permission(
            5, title="Approve?", subject={"type": "tool_call", "toolCall": {"toolCallId": "c1"}}
        )
    )
    assert log.entry("c1")["title"] == "Original"


def test_r21_command_subject_creates_no_tool_call_or_terminal() -> None:
    log = Log()
    subject = {
        "type": "command",
        "command": "rm -rf x",
        "cwd": "/w",
        "toolCallId": "c9",
        "terminalId": "t9",
    }
    log.agent(permission(5, subject=subject))
    snap = log.session()
    assert snap["timeline"] == [] and snap["terminals"] == []
    assert snap["permissionRequests"][0]["toolCallId"] == "c9"


def test_11_1_unknown_subject_gives_a_generic_pending_request() -> None:
    live = Live()
    live.new_session()
    live.agent(permission(5, subject={"type": "_acme", "z": 1}))
    assert live.session()["permissionRequests"][0]["status"] == "pending"
    assert live.answers(5) == []


def test_11_1_answer_permission_selected_and_cancelled() -> None:
    live = Live()
    live.new_session()
    live.agent(permission(5), permission(6))
    live.wrote(live.conn.answer_permission(5, "allow"))
    live.wrote(live.conn.answer_permission(6, None))
    assert live.answers(5) == [
        {
            "jsonrpc": "2.0",
            "id": 5,
            "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
        }
    ]
    assert live.answers(6)[0]["result"] == {"outcome": {"outcome": "cancelled"}}
    perms = live.session()["permissionRequests"]
    assert [(p["status"], p["outcome"]) for p in perms] == [
        ("answered", {"outcome": "selected", "optionId": "allow"}),
        ("cancelled", {"outcome": "cancelled"}),
    ]


def test_1_2_a_permission_id_used_again_after_its_answer_is_a_second_request() -> None:
    # An id is never reused while its request is pending (1.2); afterwards it may be.
    live = Live()
    live.new_session()
    live.agent(permission(7))
    live.wrote(live.conn.answer_permission(7, "allow"))
    live.agent(permission(7))
    perms = live.session()["permissionRequests"]
    assert [(p["requestId"], p["status"]) for p in perms] == [(7, "answered"), (7, "pending")]
    assert len(live.conn.session(SID).permission_requests) == 2
    live.wrote(live.conn.answer_permission(7, None))
    perms = live.session()["permissionRequests"]
    assert [(p["requestId"], p["status"]) for p in perms] == [(7, "answered"), (7, "cancelled")]
    assert live.conn.diagnostics == []


def _recorded(live: Live, *agent: Any) -> bytes:
    """An ``acp-client`` log (directions recorded) of a ``Live`` set up with
    ``new_session()``: the setup, ``agent``'s messages, then what else the client wrote."""
    init, new, *rest = live.sent
    setup = [
        ("outgoing", init),
        (
            "incoming",
            response(init["id"], {"protocolVersion": 2, "capabilities": {}, "info": INFO}),
        ),
        ("outgoing", new),
        ("incoming", response(new["id"], {"sessionId": SID})),
    ]
    records = [*setup, *(("incoming", m) for m in agent), *(("outgoing", m) for m in rest)]
    return b"".join(line({"direction": d, "message": m}) for d, m in records)


def _answers(live: Live, rid: int) -> list[Any]:
    """What the client wrote in answer to ``rid``, inside a batch's array or not."""
    flat = [m for sent in live.sent for m in (sent if isinstance(sent, list) else [sent])]
    return [m for m in flat if "method" not in m and m.get("id") == rid]


def test_1_2_an_agent_reusing_a_pending_id_replaces_the_old_request_which_is_withdrawn() -> None:
    # 1.2 forbids it; the new request is the one an answer with that id answers (as a log's
    # reader pairs them, LOG-FORMATS 1.10), and nothing waits for the old one any more.
    live = Live()
    live.new_session()
    live.agent(permission(7), request(7, "_acme/ping"))
    assert _answers(live, 7) == [
        {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {"code": -32601, "message": "method not found: _acme/ping"},
        }
    ]
    perms = live.session()["permissionRequests"]
    assert [(p["requestId"], p["status"]) for p in perms] == [(7, "withdrawn")]
    assert PermissionWithdrawn(session_id=SID, request_id=7) in live.events
    assert live.codes() == ["duplicate-request-id"]
    live.cancel()  # nothing pending is left to answer
    assert _answers(live, 7)[1:] == []
    replayed = replay_log(_recorded(live, permission(7), request(7, "_acme/ping")))
    assert replayed.snapshot()["sessions"] == live.snap()["sessions"]


@pytest.mark.parametrize("pending_first", [False, True])
def test_1_8_the_answer_to_a_malformed_agent_request_pairs_with_it_in_a_replay(
    pending_first: bool,
) -> None:
    live = Live()
    live.new_session()
    bad = request(7, "session/request_permission", {"sessionId": SID, "title": 3})
    agent = [permission(7), bad] if pending_first else [bad]
    live.agent(*agent)
    assert [a["error"]["code"] for a in _answers(live, 7)] == [-32602]
    statuses = [p["status"] for p in live.session()["permissionRequests"]]
    assert statuses == (["withdrawn"] if pending_first else [])  # its id was taken over
    replayed = replay_log(_recorded(live, *agent))
    assert replayed.snapshot()["sessions"] == live.snap()["sessions"]
    codes = [d["code"] for d in replayed.snapshot()["diagnostics"]]
    assert "orphan-response" not in codes
    assert codes.count("duplicate-request-id") == live.codes().count("duplicate-request-id")


@pytest.mark.parametrize("second", ["permission", "unknown"])
def test_1_5_a_batch_reusing_a_pending_id_is_still_answered(second: str) -> None:
    # Two requests of a batch under one id: only one answer can be made, and the batch's
    # array went out only once every request was answered: it never did (a deadlock).
    live = Live()
    live.new_session()
    batch = [permission(7), permission(7) if second == "permission" else request(7, "_x/y")]
    live.conn.receive_data(line(batch))
    if second == "permission":
        assert live.conn.data_to_send() == b""
        live.wrote(live.conn.answer_permission(7, "allow"))
    else:
        live.wrote(live.conn.data_to_send())
        with pytest.raises(LocalProtocolError):
            live.conn.answer_permission(7, "allow")  # it was replaced by the unknown request
    assert len(_answers(live, 7)) == 1
    statuses = [p["status"] for p in live.session()["permissionRequests"]]
    assert statuses == (["withdrawn", "answered"] if second == "permission" else ["withdrawn"])
    replayed = replay_log(_recorded(live, batch))
    assert replayed.snapshot()["sessions"] == live.snap()["sessions"]


def test_c23_answer_must_name_an_offered_option() -> None:
    live = Live()
    live.new_session()
    live.agent(permission(5))
    with pytest.raises(LocalProtocolError):
        live.conn.answer_permission(5, "nope")
    with pytest.raises(LocalProtocolError):
        live.conn.answer_permission(99, "allow")


def test_11_1_passive_log_records_the_clients_answer() -> None:
    log = Log()
    log.agent(permission(5))
    log.client(response(5, {"outcome": {"outcome": "selected", "optionId": "deny"}}))
    perm = log.session()["permissionRequests"][0]
    assert perm["status"] == "answered"
    assert perm["outcome"] == {"outcome": "selected", "optionId": "deny"}


@pytest.mark.parametrize(
    "params",
    [
        {"sessionId": SID, "title": "x", "options": []},
        {"sessionId": SID, "title": "x", "options": PERM_OPTIONS, "subject": {"type": "tool_call"}},
    ],
)
def test_r41_zero_options_or_malformed_subject_is_answered_invalid_params(
    params: dict[str, object],
) -> None:
    live = Live()
    live.new_session()
    live.agent(request(9, "session/request_permission", params))
    [answer] = live.answers(9)
    assert answer["error"]["code"] == -32602


def test_r40_idle_with_pending_permission_keeps_it_pending_with_diagnostic() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"))
    live.agent(permission(5))
    before = len(live.conn.diagnostics)
    live.upd(idle())
    assert live.session()["permissionRequests"][0]["status"] == "pending"
    assert len(live.conn.diagnostics) > before


def test_r40_idle_keeps_pending_permission_pending() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"))
    live.agent(permission(5))
    live.upd(idle())
    assert live.session()["permissionRequests"][0]["status"] == "pending"
    assert live.answers(5) == []
    # Reported once: a later idle with the same request still pending says nothing new.
    live.upd(state("running"), idle())
    codes = [d.code for d in live.conn.diagnostics]
    assert codes.count("permission-pending-at-idle") == 1
    # A new request under the same id (the first answered) is reported again.
    live.conn.answer_permission(5, None)
    live.upd(state("running"))
    live.agent(permission(5))
    live.upd(idle())
    codes = [d.code for d in live.conn.diagnostics]
    assert codes.count("permission-pending-at-idle") == 2


def test_r40_a_pending_permission_about_background_work_gives_no_diagnostic_at_idle() -> None:
    live = Live()
    live.new_session()
    live.upd(term("tb"), state("running"))
    live.agent(
        permission(7, subject={"type": "command", "command": "x", "cwd": "/", "terminalId": "tb"})
    )
    live.upd(idle(background=[{"type": "terminal", "terminalId": "tb"}]))
    assert live.session()["permissionRequests"][0]["status"] == "pending"
    assert "permission-pending-at-idle" not in [d.code for d in live.conn.diagnostics]


def test_r39_requires_action_synthesises_no_request() -> None:
    log = Log()
    log.upd(state("requires_action"))
    assert log.session()["permissionRequests"] == []


# ---------------------------------------------------------------- 11.2 session/cancel


def test_11_2_cancel_sets_flag_marks_tools_and_answers_pending_permissions() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"), tool("c1", status="in_progress"), tool("c2", status="completed"))
    live.agent(permission(5))
    live.cancel()
    assert live.sent[-2] == {
        "jsonrpc": "2.0",
        "method": "session/cancel",
        "params": {"sessionId": SID},
    }
    assert live.answers(5) == [
        {"jsonrpc": "2.0", "id": 5, "result": {"outcome": {"outcome": "cancelled"}}}
    ]
    snap = live.session()
    assert [e["status"] for e in snap["timeline"]] == ["cancelled", "completed"]
    assert snap["permissionRequests"][0]["status"] == "cancelled"
    assert live.conn.session(SID).cancel_requested


def test_r18_permission_arriving_after_cancel_before_idle_is_answered_cancelled() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"))
    live.cancel()
    live.agent(permission(6))
    assert live.answers(6)[0]["result"] == {"outcome": {"outcome": "cancelled"}}
    live.upd(idle("cancelled"))
    live.agent(permission(7))
    assert _answers(live, 7) == []


def test_r18_permission_about_background_work_after_cancel_stays_pending() -> None:
    live = Live()
    live.new_session()
    live.upd(tool("bg", status="in_progress"), term("tb"))
    live.upd(
        state(
            "running",
            background=[
                {"type": "tool_call", "toolCallId": "bg"},
                {"type": "terminal", "terminalId": "tb"},
            ],
        )
    )
    live.cancel()
    live.agent(permission(6, subject={"type": "tool_call", "toolCall": {"toolCallId": "bg"}}))
    live.agent(
        permission(7, subject={"type": "command", "command": "x", "cwd": "/", "terminalId": "tb"})
    )
    assert live.answers(6) == [] and live.answers(7) == []
    assert live.session()["timeline"][0]["status"] == "in_progress"


def test_r19_cancel_answers_pending_elicitation_with_cancel_action() -> None:
    live = Live()
    live.initialize(elicitation={"form": {}})
    live.new_session()
    live.agent(
        request(
            6,
            "elicitation/create",
            {
                "sessionId": SID,
                "message": "m",
                "mode": "form",
                "requestedSchema": {"type": "object", "properties": {}},
            },
        )
    )
    live.cancel()
    assert live.answers(6) == [{"jsonrpc": "2.0", "id": 6, "result": {"action": "cancel"}}]


def test_11_2_updates_after_cancel_are_still_applied() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"), tool("c1", status="in_progress"))
    live.cancel()
    live.upd(chunk("agent", "a", "flush"), tool("c1", status="failed"), idle("cancelled"))
    snap = live.session()
    assert snap["timeline"] == [
        tool_entry("c1", status="failed"),
        message_entry("agent", "a", "flush"),
    ]
    assert not live.conn.session(SID).cancel_requested


def test_r46_cancel_while_idle_marks_nothing_and_awaits_no_idle() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"), tool("c1", status="in_progress"), idle())
    live.cancel()
    assert live.session()["timeline"][0]["status"] == "in_progress"
    assert live.session()["completedTurns"] == ["end_turn"]


@pytest.mark.parametrize("before", [[], [idle()]])
def test_r46_a_cancel_while_idle_leaves_the_next_works_permissions_alone(
    before: list[dict[str, Any]],
) -> None:
    # Idle by report, or by default for a session/new session before any snapshot (6.3).
    live = Live()
    live.new_session()
    live.upd(*before, tool("c0", status="in_progress"))
    live.agent(permission(5))
    live.cancel()
    assert live.answers(5)[0]["result"] == {"outcome": {"outcome": "cancelled"}}
    assert live.session()["timeline"][0]["status"] == "in_progress"  # nothing marked
    assert not live.conn.session(SID).cancel_requested
    live.upd(state("running"))
    live.agent(permission(6))
    assert live.answers(6) == []  # left to the user, not taken for a cancelled turn's
    assert live.session()["permissionRequests"][-1]["status"] == "pending"


@pytest.mark.parametrize("echo_first", [False, True])
def test_r49_a_cancel_after_acceptance_before_running_aims_at_the_prompts_work(
    echo_first: bool,
) -> None:
    # The page's order: response, user_message, then running (R49: running may come later).
    # A cancel sent in between cancels that work (11.2, R15, R18), not "a cancel while idle".
    live = Live()
    live.new_session()
    live.upd(tool("old", status="in_progress"), idle())  # earlier work, left as reported
    rid = live.prompt("do it")
    if echo_first:
        live.upd(msg("user", "u1", content=[text("do it")]))
    live.agent(response(rid, {"messageId": "u1"}))
    if not echo_first:
        live.upd(msg("user", "u1", content=[text("do it")]))
    live.upd(tool("c1", status="pending"))
    live.cancel()
    assert live.conn.session(SID).cancel_requested
    live.upd(state("running"))
    live.agent(permission(200, subject={"type": "tool_call", "toolCall": {"toolCallId": "c1"}}))
    assert live.answers(200)[0]["result"] == {"outcome": {"outcome": "cancelled"}}
    live.upd(idle("cancelled"))
    snap = live.session()
    assert [(e.get("toolCallId"), e.get("status")) for e in snap["timeline"]] == [
        ("old", "in_progress"),
        (None, None),
        ("c1", "cancelled"),
    ]
    assert snap["completedTurns"] == ["cancelled"]
    assert live.codes() == []


def test_r49_a_repeated_idle_before_running_keeps_the_accepted_prompts_work_awaited() -> None:
    # 6.3: an idle while idle (the background list changed) ends no work: a cancel sent
    # after it still aims at the accepted prompt's work, not "a cancel while idle" (R46).
    live = Live()
    live.new_session()
    live.upd(idle(background=[]))
    rid = live.prompt("do it")
    live.upd(msg("user", "u1", content=[text("do it")]))
    live.agent(response(rid, {"messageId": "u1"}))
    live.upd(idle(None, background=[]))
    live.cancel()
    assert live.conn.session(SID).cancel_requested
    live.upd(state("running", background=[]), tool("c1", status="pending"))
    live.agent(permission(200, subject={"type": "tool_call", "toolCall": {"toolCallId": "c1"}}))
    assert live.answers(200)[0]["result"] == {"outcome": {"outcome": "cancelled"}}
    live.upd(idle("cancelled", background=[]))
    assert live.session()["completedTurns"] == ["cancelled"]
    assert live.codes() == []


def test_r49_a_repeated_idle_before_the_echo_keeps_the_accepted_prompts_work_awaited() -> None:
    # 6.3 with the response first and no echo yet: the background report's idle ends no
    # work, so the cancel still aims at the accepted prompt's (R15, R18).
    live = Live()
    live.new_session()
    live.upd(idle(background=[]))
    rid = live.prompt("do it")
    live.agent(response(rid, {"messageId": "u1"}))
    live.upd(idle(None, background=[]))
    live.cancel()
    assert live.conn.session(SID).cancel_requested
    live.upd(msg("user", "u1", content=[text("do it")]), state("running", background=[]))
    live.upd(tool("c1", status="pending"))
    live.agent(permission(200, subject={"type": "tool_call", "toolCall": {"toolCallId": "c1"}}))
    assert live.answers(200)[0]["result"] == {"outcome": {"outcome": "cancelled"}}
    assert live.codes() == []


@pytest.mark.parametrize("running_first", [False, True])
def test_r15_a_tool_call_between_insertion_and_running_pertains_to_the_work(
    running_first: bool,
) -> None:
    # R49/R15: the accepted prompt's work began with its acceptance; a tool call reported
    # before `running` is marked whichever side of `running` the cancel falls on.
    live = Live()
    live.new_session()
    live.upd(tool("old", status="in_progress"), state("running"), idle("end_turn"))
    rid = live.prompt("do it")
    live.agent(response(rid, {"messageId": "u1"}))
    live.upd(msg("user", "u1", content=[text("do it")]), tool("c1", status="pending"))
    if running_first:
        live.upd(state("running"))
    live.cancel()
    statuses = {e.get("toolCallId"): e.get("status") for e in live.session()["timeline"]}
    assert statuses == {"old": "in_progress", None: None, "c1": "cancelled"}


def test_r14_a_background_entry_and_a_repeated_idle_before_running_keep_the_prompt() -> None:
    # Echo, response, an agent message while idle, a repeated idle, then the work: its
    # refusal marks from the prompt, as without the repeated idle (6.3, R14).
    live = Live()
    live.new_session()
    live.upd(idle())
    rid = live.prompt("do it")
    live.upd(msg("user", "u1", content=[text("do it")]))
    live.agent(response(rid, {"messageId": "u1"}))
    live.upd(msg("agent", "bg1", content=[text("meanwhile")]), idle(None))
    live.upd(state("running"), msg("agent", "a1", content=[text("no")]), idle("refusal"))
    flags = {e["messageId"]: e.get("excludedFromContext") for e in live.session()["timeline"]}
    assert flags == {"u1": True, "bg1": True, "a1": True}
    assert live.conn.prompt_stop_reason(rid) == "refusal"


def test_r51_a_repeated_idle_repeating_the_stop_reason_leaves_the_waiting_prompt() -> None:
    # A full state snapshot re-sent while idle repeats the last stop reason: context only
    # (6.3, R51), so the accepted prompt's work still comes, and its refusal marks it (R14).
    live = Live()
    live.new_session()
    live.upd(state("running"), idle("end_turn"))
    rid = live.prompt("do it")
    live.agent(response(rid, {"messageId": "u2"}))
    live.upd(msg("user", "u2", content=[text("do it")]), idle("end_turn"))
    assert not live.conn.prompt_finished(rid)
    live.upd(state("running"), msg("agent", "a2", content=[text("no")]), idle("refusal"))
    assert live.conn.prompt_stop_reason(rid) == "refusal"
    flags = {e["messageId"]: e.get("excludedFromContext") for e in live.session()["timeline"]}
    assert flags == {"u2": True, "a2": True}
    assert live.session()["completedTurns"] == ["end_turn", "refusal"]


def test_r46_a_cancel_after_the_accepted_prompts_work_ended_is_a_cancel_while_idle() -> None:
    live = Live()
    live.new_session()
    rid = live.prompt("do it")
    live.agent(response(rid, {"messageId": "u1"}))
    live.upd(msg("user", "u1", content=[text("do it")]), state("running"), idle())
    live.upd(tool("c0", status="in_progress"))
    live.cancel()
    assert not live.conn.session(SID).cancel_requested
    assert live.session()["timeline"][-1]["status"] == "in_progress"


def test_11_2_a_prompt_sent_while_idle_drops_a_cancel_whose_work_never_came() -> None:
    # An accepted prompt without work (a locally handled command) leaves the awaited work
    # open; a cancel then set the flag, and the next prompt's work must not inherit it.
    live = Live()
    live.new_session()
    rid = live.prompt("/local")
    live.agent(response(rid, {"messageId": "u1"}))
    live.upd(msg("user", "u1", content=[text("/local")]))
    live.cancel()
    assert live.conn.session(SID).cancel_requested
    live.prompt("next")
    assert not live.conn.session(SID).cancel_requested
    live.upd(state("running"))
    live.agent(permission(6))
    assert live.answers(6) == []


def test_r58_idle_cancelled_not_asked_for_is_a_normal_end() -> None:
    log = Log()
    log.upd(state("running"), idle("cancelled"))
    assert log.session()["completedTurns"] == ["cancelled"]
    assert log.conn.diagnostics == []


def test_2_4_passive_cancel_applies_local_effects_but_writes_nothing() -> None:
    log = Log()
    log.upd(state("running"), tool("c1", status="in_progress"))
    log.agent(permission(5))
    log.client(notification("session/cancel", {"sessionId": SID}))
    assert log.entry("c1")["status"] == "cancelled"
    assert log.session()["permissionRequests"][0]["status"] == "pending"
    assert log.conn.data_to_send() == b""
    log.client(response(5, {"outcome": {"outcome": "cancelled"}}))
    assert log.session()["permissionRequests"][0]["status"] == "cancelled"


# ---------------------------------------------------------------- 11.3 $/cancel_request


def test_r20_agent_cancel_request_withdraws_and_answers_once() -> None:
    live = Live()
    live.new_session()
    live.agent(permission(5))
    events = live.agent(notification("$/cancel_request", {"requestId": 5}))
    assert PermissionWithdrawn(session_id=SID, request_id=5) in events
    live.agent(notification("$/cancel_request", {"requestId": 5}))
    assert live.answers(5) == [
        {"jsonrpc": "2.0", "id": 5, "result": {"outcome": {"outcome": "cancelled"}}}
    ]
    perm = live.session()["permissionRequests"][0]
    assert perm["status"] == "withdrawn" and perm["outcome"] == {"outcome": "cancelled"}


def test_r62_cancel_request_for_answered_or_unknown_id_is_ignored() -> None:
    live = Live()
    live.new_session()
    live.agent(permission(5))
    live.wrote(live.conn.answer_permission(5, "allow"))
    live.agent(
        notification("$/cancel_request", {"requestId": 5}),
        notification("$/cancel_request", {"requestId": 404}),
    )
    assert len(live.answers(5)) == 1
    assert live.session()["permissionRequests"][0]["status"] == "answered"


def test_r20_cancel_request_for_elicitation_answers_cancel() -> None:
    live = Live()
    live.initialize(elicitation={"form": {}})
    live.new_session()
    live.agent(
        request(
            6,
            "elicitation/create",
            {
                "sessionId": SID,
                "message": "m",
                "mode": "form",
                "requestedSchema": {"type": "object", "properties": {}},
            },
        )
    )
    live.agent(notification("$/cancel_request", {"requestId": 6}))
    assert live.answers(6) == [{"jsonrpc": "2.0", "id": 6, "result": {"action": "cancel"}}]


def test_r20_passive_withdrawn_stays_withdrawn_after_the_logged_answer() -> None:
    log = Log()
    log.agent(permission(5), notification("$/cancel_request", {"requestId": 5}))
    log.client(response(5, {"outcome": {"outcome": "cancelled"}}))
    perm = log.session()["permissionRequests"][0]
    assert perm["status"] == "withdrawn" and perm["outcome"] == {"outcome": "cancelled"}


# ---------------------------------------------------------------- 11.5 close


def test_11_5_close_answers_permissions_and_closes_on_success() -> None:
    live = Live()
    live.new_session()
    live.agent(permission(5))
    rid, data = live.conn.send_close(SID)
    live.wrote(data)
    assert live.answers(5)[0]["result"] == {"outcome": {"outcome": "cancelled"}}
    assert "closed" not in live.session()
    events = live.agent(response(rid, {}))
    assert SessionClosed(session_id=SID) in events
    assert live.session()["closed"] is True
    # Closing it again, or a failed resume of it, is no news: no second SessionClosed.
    again, _ = live.conn.send_close(SID)
    assert not any(type(e) is SessionClosed for e in live.agent(response(again, {})))
    resume, _ = live.conn.send_resume(SID, "/w")
    events = live.agent(error(resume, -32603, "cannot load"))
    assert not any(type(e) is SessionClosed for e in events)
    assert live.session()["closed"] is True


@pytest.mark.parametrize("ended", [True, False])
def test_a18_a_close_succeeding_while_work_is_active_is_diagnosed(ended: bool) -> None:
    # A18: a close cancels like session/cancel and, if work was active, sends idle
    # `cancelled` before its success.
    live = Live()
    live.new_session()
    live.upd(state("running"))
    rid, data = live.conn.send_close(SID)
    live.wrote(data)
    if ended:
        live.upd(idle("cancelled"))
    live.agent(response(rid, {}))
    assert live.session()["closed"] is True
    assert ("close-while-working" in live.codes()) is not ended


def test_c9_close_answered_resource_not_found_counts_as_closed() -> None:
    live = Live()
    live.new_session()
    rid, _data = live.conn.send_close(SID)
    live.agent(error(rid, -32002, "gone", data={"sessionId": SID}))
    assert live.session()["closed"] is True


def test_11_5_close_failure_leaves_the_session_open() -> None:
    live = Live()
    live.new_session()
    rid, _ = live.conn.send_close(SID)
    live.agent(error(rid, -32603, "nope"))
    assert "closed" not in live.session()
    assert live.conn.session(SID).lifecycle == "open"


def test_11_5_a_permission_request_while_closing_is_answered_cancelled() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"))
    _, data = live.conn.send_close(SID)
    live.wrote(data)
    live.agent(permission(7))
    [answer] = live.answers(7)
    assert answer["result"]["outcome"] == {"outcome": "cancelled"}


@pytest.mark.parametrize("before", ["running", "_custom"])
def test_6_3_a_close_sent_during_a_replay_does_not_end_the_replay_for_the_state(
    before: str,
) -> None:
    # The close moves the lifecycle to `closing`, but the replay runs until the resume's
    # response: a snapshot meanwhile is still no completion (6.3, R51).
    live = Live()
    live.new_session()
    resume, data = live.conn.send_resume(SID, "/w", replay=True)
    live.wrote(data)
    live.upd(msg("user", "u1", content=[text("hi")]), state(before))
    close, data = live.conn.send_close(SID)
    live.wrote(data)
    live.upd(idle("cancelled"))  # 11.5: the work ends before the close's answer
    live.agent(response(resume, {}), response(close, {}))
    session = live.session()
    assert session["completedTurns"] == [] and session["closed"] is True
    assert [e["messageId"] for e in session["timeline"]] == ["u1"]


@pytest.mark.parametrize("replay", [True, False])
def test_10_5_a_resume_answered_session_not_found_closes_the_session(replay: bool) -> None:
    live = Live()
    live.new_session()
    rid, data = live.conn.send_resume(SID, "/w", replay=replay)
    live.wrote(data)
    events = live.agent(error(rid, -32002, "gone", data={"sessionId": SID}))
    assert SessionClosed(session_id=SID) in events
    session = live.conn.session(SID)
    assert session.closed and session.lifecycle == "closed"
    # SNAPSHOT.md: `closed` is for a session/close that succeeded; this was none (a v1 agent
    # answers a load of a missing session this way)
    assert "closed" not in live.session()


def test_r38_updates_after_close_are_applied_with_diagnostic() -> None:
    live = Live()
    live.new_session()
    rid, _ = live.conn.send_close(SID)
    live.upd(chunk("agent", "flush", "x"))  # while closing: no violation
    assert "update-after-close" not in live.codes()
    live.agent(response(rid, {}))
    live.upd(chunk("agent", "late", "y"))
    snap = live.session()
    assert [e["messageId"] for e in snap["timeline"]] == ["flush", "late"]
    assert snap["closed"] is True
    assert "update-after-close" in live.codes()


# ---------------------------------------------------------------- 11.6 entity cancels


def test_c29_entity_cancel_only_while_advertised() -> None:
    live = Live()
    live.new_session()
    live.upd(tool("c1"), term("t1"))
    with pytest.raises(LocalProtocolError):
        live.conn.send_cancel_tool_call(SID, "c1")
    with pytest.raises(LocalProtocolError):
        live.conn.send_cancel_terminal(SID, "t1")
    with pytest.raises(LocalProtocolError):
        live.conn.send_cancel_tool_call(SID, "unknown")


def test_11_6_tool_call_cancel_accepted_then_confirmed() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"), tool("c1", status="in_progress", capabilities={"cancel": {}}))
    rid, data = live.conn.send_cancel_tool_call(SID, "c1")
    live.wrote(data)
    assert live.sent[-1]["params"] == {"sessionId": SID, "toolCallId": "c1"}
    call = live.conn.session(SID).tool_calls["c1"]
    assert call.cancel_pending  # 2.2: "in flight or accepted"
    live.agent(response(rid, {}))
    assert call.cancel_pending and call.status == "in_progress"
    live.upd(tool("c1", status="cancelled"))
    assert not call.cancel_pending
    assert live.session()["state"] == {"state": "running"}


def test_11_6_terminal_cancel_is_pending_while_in_flight() -> None:
    live = Live()
    live.new_session()
    live.upd(term("t1", capabilities={"cancel": {}}))
    rid, _ = live.conn.send_cancel_terminal(SID, "t1")
    assert live.conn.session(SID).terminals["t1"].cancel_pending
    live.agent(error(rid, -32602, "already exited"))
    assert not live.conn.session(SID).terminals["t1"].cancel_pending


def test_r59_tool_call_cancel_rejected_clears_the_mark() -> None:
    live = Live()
    live.new_session()
    live.upd(tool("c1", status="in_progress", capabilities={"cancel": {}}))
    rid, _ = live.conn.send_cancel_tool_call(SID, "c1")
    live.agent(error(rid, -32602, "not cancellable"))
    assert not live.conn.session(SID).tool_calls["c1"].cancel_pending
    assert live.session()["timeline"][0]["status"] == "in_progress"


def test_r59_terminal_cancel_accepted_marks_the_terminal_until_exit() -> None:
    live = Live()
    live.new_session()
    live.upd(term("t1", capabilities={"cancel": {}}))
    rid, _ = live.conn.send_cancel_terminal(SID, "t1")
    live.agent(response(rid, {}))
    terminal = live.conn.session(SID).terminals["t1"]
    assert getattr(terminal, "cancel_pending", False) is True
    live.upd(term("t1", exitStatus={"signal": "SIGTERM"}))
    assert getattr(terminal, "cancel_pending", True) is False


# ---------------------------------------------------------------- 12 setup / resume


def test_12_1_new_session_announces_with_lists_and_default_idle() -> None:
    live = Live()
    rid, data = live.conn.send_new_session("/w")
    live.wrote(data)
    events = live.agent(
        response(rid, {"sessionId": SID, "availableCommands": [CMD_X], "configOptions": [OPT_B]})
    )
    assert SessionCreated(session_id=SID, announced=True) in events
    assert SessionAnnounced(session_id=SID) in events
    assert live.session() == empty_session(
        announced=True, availableCommands=[CMD_X], configOptions=[OPT_B], protocolVersion=2
    )
    assert live.conn.session(SID).idle


@pytest.mark.parametrize("value", [None, []])
def test_r47_setup_result_with_null_or_empty_lists_stores_empty(value: object) -> None:
    live = Live()
    live.new_session(result={"availableCommands": value, "configOptions": value})
    snap = live.session()
    assert snap["availableCommands"] == [] and snap["configOptions"] == []


def test_r47_setup_result_without_lists_stores_empty() -> None:
    live = Live()
    live.new_session()
    snap = live.session()
    assert snap["availableCommands"] == [] and snap["configOptions"] == []


def test_r34_malformed_setup_list_decodes_as_empty_with_diagnostic() -> None:
    live = Live()
    live.new_session(
        result={"availableCommands": "x", "configOptions": [OPT_B, {"type": "select"}]}
    )
    snap = live.session()
    assert snap["availableCommands"] == [] and snap["configOptions"] == [OPT_B]
    assert live.conn.diagnostics


def test_r50_setup_result_does_not_override_newer_update_for_new_session() -> None:
    live = Live()
    rid, _ = live.conn.send_new_session("/w")
    live.upd(cmds(CMD_X), opts(OPT_B))
    live.agent(
        response(rid, {"sessionId": SID, "availableCommands": [CMD_Y], "configOptions": [OPT_C]})
    )
    snap = live.session()
    assert snap["availableCommands"] == [CMD_X]
    assert snap["configOptions"] == [OPT_B]


def test_r50_setup_result_does_not_override_newer_update_for_resume() -> None:
    live = Live()
    rid, _ = live.conn.send_resume(SID, "/w", replay=False)
    live.upd(cmds(CMD_X), idle())
    live.agent(response(rid, {"availableCommands": [CMD_Y], "configOptions": [OPT_C]}))
    snap = live.session()
    assert snap["availableCommands"] == [CMD_X]
    assert snap["configOptions"] == [OPT_C]


def test_r50_updates_before_the_request_do_not_block_the_result() -> None:
    live = Live()
    live.upd(cmds(CMD_X))
    rid, _ = live.conn.send_resume(SID, "/w", replay=False)
    live.upd(idle())
    live.agent(response(rid, {"availableCommands": [CMD_Y]}))
    assert live.session()["availableCommands"] == [CMD_Y]


def test_r50_updates_before_a_new_session_request_do_not_block_its_result() -> None:
    live = Live()
    live.upd(cmds(CMD_X), opts(OPT_B))  # the session id was already in use (a log)
    rid, _ = live.conn.send_new_session("/w")
    live.agent(
        response(rid, {"sessionId": SID, "availableCommands": [CMD_Y], "configOptions": [OPT_C]})
    )
    snap = live.session()
    assert (snap["availableCommands"], snap["configOptions"]) == ([CMD_Y], [OPT_C])


def test_c28_new_session_result_never_overwrites_a_reported_state() -> None:
    live = Live()
    rid, _ = live.conn.send_new_session("/w")
    live.upd(state("running"))
    live.agent(response(rid, {"sessionId": SID}))
    assert live.session()["state"] == {"state": "running"}
    assert not live.conn.session(SID).idle


def test_9_3_set_config_option_result_replaces_the_list() -> None:
    live = Live()
    live.new_session(result={"configOptions": [OPT_B]})
    rid, data = live.conn.send_set_config_option(SID, "b", False)
    live.wrote(data)
    assert live.sent[-1]["params"] == {
        "sessionId": SID,
        "configId": "b",
        "type": "boolean",
        "value": False,
    }
    new = {**OPT_B, "currentValue": False}
    live.agent(response(rid, {"configOptions": [new, OPT_C]}))
    assert live.session()["configOptions"] == [new, OPT_C]


def test_9_3_set_config_option_error_changes_nothing() -> None:
    live = Live()
    live.new_session(result={"configOptions": [OPT_B]})
    rid, _ = live.conn.send_set_config_option(SID, "b", False)
    live.agent(error(rid, -32602, "bad value"))
    assert live.session()["configOptions"] == [OPT_B]


def test_12_2_resume_without_replay_keeps_state_and_applies_snapshot() -> None:
    live = Live()
    live.upd(chunk("agent", "a", "old"))
    rid, data = live.conn.send_resume(SID, "/w", replay=False)
    live.wrote(data)
    assert "replayFrom" not in live.sent[-1]["params"]
    live.upd(state("running"))
    events = live.agent(response(rid, {}))
    assert SessionAnnounced(session_id=SID) in events
    snap = live.session()
    assert snap["announced"] is True
    assert snap["timeline"] == [message_entry("agent", "a", "old")]
    assert snap["state"] == {"state": "running"}
    assert snap["unretained"] == []


def test_a27_resume_snapshot_without_replay_is_not_a_completed_turn() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"))
    rid, data = live.conn.send_resume(SID, "/w", replay=False)
    live.wrote(data)
    live.upd(idle("end_turn"))
    live.agent(response(rid, {}))
    snap = live.session()
    assert snap["state"] == {"state": "idle", "stopReason": "end_turn"}
    assert snap["completedTurns"] == []
    live.upd(state("running"), idle("end_turn"))  # after the response: live work again
    assert live.session()["completedTurns"] == ["end_turn"]


def test_12_2_a_failed_resume_announces_the_session_as_a_failed_replay_does() -> None:
    log = Log()
    log.upd(chunk("agent", "a", "x"), sid="s9")
    log.upd(chunk("agent", "a", "x"), sid="s8")
    log.client(request(3, "session/resume", {"sessionId": "s9", "cwd": "/w"}))
    log.client(request(4, "session/resume", {"sessionId": "s8", "cwd": "/w", "replayFrom": START}))
    log.agent(error(3, -32002, "gone"), error(4, -32002, "gone"))
    assert log.session("s9")["announced"] is log.session("s8")["announced"] is True


def test_r11_resumed_session_without_snapshot_is_not_presumed_idle() -> None:
    live = Live()
    rid, _ = live.conn.send_resume(SID, "/w", replay=False)
    live.agent(response(rid, {}))
    assert "state" not in live.session()
    assert not live.conn.session(SID).idle


def test_r11_unannounced_session_is_not_presumed_idle() -> None:
    log = Log()
    log.upd(chunk("agent", "a", "x"))
    assert not log.sess().idle


def test_12_3_missing_resume_snapshot_is_a_diagnostic() -> None:
    """A17: a resume sends a current `state_update` before its response."""
    live = Live()
    live.new_session()
    live.upd(state("running"))
    rid, _ = live.conn.send_resume(SID, "/w")
    before = len(live.conn.diagnostics)
    live.agent(response(rid, {}))
    assert live.session()["state"] == {"state": "running"}
    assert len(live.conn.diagnostics) > before


def test_6_3_a_replayed_idle_clears_cancel_requested() -> None:
    live = Live()
    live.new_session()
    live.upd(state("running"))
    live.cancel()
    rid, data = live.conn.send_resume(SID, "/w")
    live.wrote(data)
    live.upd(idle("cancelled"))
    live.agent(response(rid, {}))
    assert live.conn.session(SID).cancel_requested is False
    live.upd(state("running"))
    live.agent(permission(9, title="new work"))
    assert live.answers(9) == []
    assert live.session()["permissionRequests"][0]["status"] == "pending"


@pytest.mark.parametrize("new_first", [False, True])
def test_r15_after_a_replay_cancel_marks_the_replayed_unfinished_tool_calls(
    new_first: bool,
) -> None:
    # The replayed `running` snapshot does not start work (6.3): where the current work
    # started is unknown, so every unfinished tool call is marked.
    log = Log()
    if new_first:
        log.client(request(1, "session/new", {"cwd": "/w"}))
        log.agent(response(1, {"sessionId": SID}))
    log.client(request(4, "session/resume", {"sessionId": SID, "cwd": "/w", "replayFrom": START}))
    log.upd(tool("c1", status="in_progress"), state("running"))
    log.agent(response(4, {}))
    log.client(notification("session/cancel", {"sessionId": SID}))
    assert log.entry("c1")["status"] == "cancelled"


@pytest.mark.parametrize("response_after_replay", [False, True])
def test_r10_a_prompt_answered_after_its_message_left_in_a_replay_is_echoed(
    response_after_replay: bool,
) -> None:
    # SNAPSHOT.md: echoed once its user message was applied in this session, whichever came
    # first; it never returns to false when a later replay does not retain the message.
    log = Log()
    log.client(request(1, "session/new", {"cwd": "/w"}))
    log.agent(response(1, {"sessionId": SID}))
    log.client(prompt_request(2))
    log.upd(msg("user", "u1", content=[]))
    log.client(request(4, "session/resume", {"sessionId": SID, "cwd": "/w", "replayFrom": START}))
    if not response_after_replay:
        log.agent(response(2, {"messageId": "u1"}))
    log.upd(idle())
    log.agent(response(4, {}))
    if response_after_replay:
        log.agent(response(2, {"messageId": "u1"}))
    [prompt] = log.session()["prompts"]
    assert (prompt["messageId"], prompt["echoed"]) == ("u1", True)


def _live_with_history() -> tuple[Live, int | str, int | str]:
    live = Live()
    live.new_session()
    p1 = live.prompt("one")
    live.agent(response(p1, {"messageId": "u1"}))
    live.upd(
        chunk("user", "u1", "one"),
        state("running"),
        chunk("agent", "a1", "A"),
        chunk("agent", "a1", "B"),
        tool("c1", status="in_progress", title="T"),
        term_chunk("t1", b"out"),
        idle(),
    )
    p2 = live.prompt("two")
    live.agent(response(p2, {"messageId": "u2"}))
    live.upd(chunk("user", "u2", "two"), state("running"), idle())
    return live, p1, p2


def test_12_3_replay_rebuilds_without_duplicates_and_moves_the_rest_to_unretained() -> None:
    live, p1, p2 = _live_with_history()
    live.upd(cmds(CMD_X))
    rid, data = live.conn.send_resume(SID, "/w")
    live.wrote(data)
    assert live.sent[-1]["params"]["replayFrom"] == {"type": "start"}
    assert live.conn.session(SID).lifecycle == "replaying"
    live.upd(
        chunk("user", "u1", "one"),
        msg("agent", "a1", content=[]),  # reset before chunked replay
        chunk("agent", "a1", "A"),
        chunk("agent", "a1", "B"),
        tool("c1", status="completed", title="T"),
        term("t1", output={"data": base64.b64encode(b"out").decode()}),
        state("running"),
        idle("end_turn"),
    )
    events = live.agent(response(rid, {"availableCommands": [CMD_Y]}))
    assert ReplayFinished(session_id=SID, ok=True, unretained=1) in events
    snap = live.session()
    assert snap["timeline"] == [
        message_entry("user", "u1", "one"),
        message_entry("agent", "a1", "A", "B"),
        tool_entry("c1", title="T", status="completed"),
    ]
    assert snap["unretained"] == [message_entry("user", "u2", "two")]
    assert snap["completedTurns"] == ["end_turn", "end_turn"]
    assert snap["state"] == {"state": "idle", "stopReason": "end_turn"}
    assert snap["prompts"] == [
        {"requestId": p1, "status": "accepted", "messageId": "u1", "echoed": True},
        {"requestId": p2, "status": "accepted", "messageId": "u2", "echoed": True},
    ]
    assert live.conn.prompt(p2).not_retained and not live.conn.prompt(p1).not_retained
    assert snap["availableCommands"] == [CMD_Y]
    assert base64.b64decode(snap["terminals"][0]["output"]) == b"out"
    assert live.conn.session(SID).lifecycle == "open"


def _replay(live: Live, *upds: dict[str, Any]) -> None:
    rid, data = live.conn.send_resume(SID, "/w")
    live.wrote(data)
    live.upd(*upds, idle())
    live.agent(response(rid, {}))


def test_12_3_an_entry_a_later_replay_reports_again_leaves_unretained() -> None:
    # SNAPSHOT unretained: entries a replay did not report again; the next one did (step 3).
    live, _, p2 = _live_with_history()
    _replay(live, chunk("user", "u1", "one"))
    c1 = tool_entry("c1", title="T", status="in_progress")
    assert live.session()["unretained"] == [
        message_entry("agent", "a1", "A", "B"),
        c1,
        message_entry("user", "u2", "two"),
    ]
    assert live.conn.prompt(p2).not_retained
    _replay(live, chunk("user", "u1", "one"), msg("user", "u2", content=[text("two again")]))
    snap = live.session()
    assert snap["timeline"] == [
        message_entry("user", "u1", "one"),
        message_entry("user", "u2", "two again"),
    ]
    assert snap["unretained"] == [message_entry("agent", "a1", "A", "B"), c1]
    assert not live.conn.prompt(p2).not_retained  # 10.5: the later replay places it


def test_r2_a_full_replay_without_a_never_echoed_message_makes_it_not_retained() -> None:
    live = Live()
    live.new_session()
    rid = live.prompt("lost")
    live.agent(response(rid, {"messageId": "u9"}))
    live.upd(state("running"), idle())
    assert not live.conn.prompt(rid).not_retained
    _replay(live, msg("agent", "a1", content=[text("hi")]))
    assert live.conn.prompt(rid).not_retained and not live.conn.prompt(rid).echoed


def test_r2_a_prompt_answered_during_a_replay_is_not_judged_by_it() -> None:
    live = Live()
    live.new_session()
    rid, data = live.conn.send_resume(SID, "/w")
    live.wrote(data)
    p = live.prompt("live")
    live.agent(response(p, {"messageId": "u5"}))  # answered while the replay runs
    live.upd(idle())
    live.agent(response(rid, {}))
    assert not live.conn.prompt(p).not_retained
    live.upd(msg("user", "u5", content=[text("live")]))
    assert live.conn.prompt(p).echoed and not live.conn.prompt(p).not_retained


def test_12_3_terminals_and_plans_reported_again_leave_the_unretained_side() -> None:
    live = Live()
    live.new_session()
    live.upd(term("t1"), plan_items("p1", "step"))
    _replay(live)
    session = live.conn.session(SID)
    assert set(session.unretained_terminals) == {"t1"} and set(session.unretained_plans) == {"p1"}
    _replay(live, term("t1"), plan_items("p1", "step"))
    assert session.unretained_terminals == {} and session.unretained_plans == {}
    assert [t["terminalId"] for t in live.session()["terminals"]] == ["t1"]


def test_r30_replay_without_reset_does_not_duplicate_chunks() -> None:
    live, _, _ = _live_with_history()
    rid, _ = live.conn.send_resume(SID, "/w")
    live.upd(
        chunk("user", "u1", "one"),
        chunk("agent", "a1", "A"),
        chunk("agent", "a1", "B"),
        term_chunk("t1", b"out"),
        idle(),
    )
    live.agent(response(rid, {}))
    snap = live.session()
    assert snap["timeline"][1] == message_entry("agent", "a1", "A", "B")
    assert base64.b64decode(snap["terminals"][0]["output"]) == b"out"


def test_12_3_replay_drops_local_overlays_and_keeps_session_values() -> None:
    live = Live()
    live.new_session(result={"availableCommands": [CMD_X]})
    live.upd(
        state("running"),
        tool("c1", status="in_progress"),
        {"sessionUpdate": "notice", "severity": "info", "title": "n"},
        {"sessionUpdate": "usage_update", "used": 1, "size": 2},
    )
    live.cancel()
    assert live.session()["timeline"][0]["status"] == "cancelled"
    rid, _ = live.conn.send_resume(SID, "/w")
    live.upd(tool("c1", title="again"), state("running"))
    live.agent(response(rid, {"availableCommands": [CMD_X]}))
    snap = live.session()
    assert snap["timeline"] == [tool_entry("c1", title="again")]
    assert snap["notices"] == [{"severity": "info", "title": "n"}]
    assert snap["usage"] == {"used": 1, "size": 2}


def test_r31_snapshots_during_replay_record_no_completion() -> None:
    live = Live()
    live.new_session()
    rid, _ = live.conn.send_resume(SID, "/w")
    live.upd(state("running"), chunk("agent", "a", "x"), idle("end_turn"), idle("refusal"))
    live.agent(response(rid, {}))
    snap = live.session()
    assert snap["completedTurns"] == []
    assert snap["state"] == {"state": "idle", "stopReason": "refusal"}
    assert "excludedFromContext" not in snap["timeline"][0]


def test_12_3_a_replay_does_not_carry_over_a_live_refusal_exclusion() -> None:
    live = Live()
    live.new_session()
    live.upd(chunk("user", "u", "hi"), state("running"), chunk("agent", "a", "x"))
    live.upd(idle("refusal"))
    assert [e.get("excludedFromContext") for e in live.session()["timeline"]] == [True, True]
    rid, _ = live.conn.send_resume(SID, "/w")
    live.upd(chunk("user", "u", "hi"), chunk("agent", "a", "x"), idle("refusal"))
    live.agent(response(rid, {}))
    # The replayed state is authoritative; nothing else of the previous generation is
    # merged in (12.3 step 3), and the replayed idle records no completion (6.3).
    assert [e.get("excludedFromContext") for e in live.session()["timeline"]] == [None, None]


@pytest.mark.parametrize("working", [False, True])
def test_r14_after_a_replay_a_refusal_marks_from_the_work_in_progress(working: bool) -> None:
    live = Live()
    live.new_session()
    rid, _ = live.conn.send_resume(SID, "/w")
    current = state("running") if working else idle("end_turn")
    live.upd(chunk("user", "u0", "old"), chunk("agent", "a0", "ok"), current)
    live.agent(response(rid, {}))
    # The replayed history is earlier work, unless the snapshot says work is going on:
    # then the replayed prompt started it, and the refusal that ends it marks from there.
    if not working:
        live.upd(chunk("user", "u1", "new"), state("running"))
    live.upd(chunk("agent", "a1", "no"), idle("refusal"))
    flags = [e.get("excludedFromContext") for e in live.session()["timeline"]]
    assert flags == ([True, True, True] if working else [None, None, True, True])


def test_r45_resume_error_after_partial_replay_keeps_both_generations() -> None:
    live, _, _ = _live_with_history()
    rid, _ = live.conn.send_resume(SID, "/w")
    live.upd(chunk("user", "u1", "one"))
    events = live.agent(error(rid, -32603, "boom"))
    assert ReplayFinished(session_id=SID, ok=False, unretained=3) in events
    snap = live.session()
    assert snap["timeline"] == [message_entry("user", "u1", "one")]
    assert [e.get("messageId") or e.get("toolCallId") for e in snap["unretained"]] == [
        "a1",
        "c1",
        "u2",
    ]
    assert "resume-failed" in live.codes()
    (failed,) = [d for d in live.conn.diagnostics if d.code == "resume-failed"]
    assert "after a partial replay" in failed.message


def test_r45_a_resume_failing_before_any_replay_says_so() -> None:
    live, _, _ = _live_with_history()
    rid, _ = live.conn.send_resume(SID, "/w")
    live.agent(error(rid, -32603, "boom"))
    (failed,) = [d for d in live.conn.diagnostics if d.code == "resume-failed"]
    assert "before replaying anything" in failed.message


def test_12_3_passive_resume_from_a_log_replays_the_same_way() -> None:
    log = Log()
    log.client(prompt_request(1))
    log.agent(response(1, {"messageId": "u1"}))
    log.upd(chunk("user", "u1", "x"), chunk("agent", "a", "y"))
    events = log.client(
        request(
            2, "session/resume", {"sessionId": SID, "cwd": "/w", "replayFrom": {"type": "start"}}
        )
    )
    assert ReplayStarted(session_id=SID) in events
    log.upd(chunk("user", "u1", "x"), idle())
    log.agent(response(2, {}))
    snap = log.session()
    assert snap["announced"] is True
    assert snap["timeline"] == [message_entry("user", "u1", "x")]
    assert snap["unretained"] == [message_entry("agent", "a", "y")]


# ---------------------------------------------------------------- 12.5 unannounced


@pytest.mark.parametrize(
    "first",
    [
        update(chunk("agent", "a", "x"), "s9"),
        permission(3, "s9"),
    ],
)
def test_r3_first_incoming_message_naming_a_session_creates_it_unannounced(
    first: dict[str, object],
) -> None:
    log = Log()
    events = log.agent(first)
    assert SessionCreated(session_id="s9", announced=False) in events
    snap = log.session("s9")
    assert snap["announced"] is False and "state" not in snap


@pytest.mark.parametrize(
    "first",
    [prompt_request(1, "s9"), notification("session/cancel", {"sessionId": "s9"})],
)
def test_r3_logged_client_message_naming_a_session_creates_it(first: dict[str, object]) -> None:
    log = Log()
    log.client(first)
    assert log.session("s9")["announced"] is False


def test_12_5_later_new_session_result_announces_and_keeps_what_was_applied() -> None:
    log = Log()
    log.client(request(0, "session/new", {"cwd": "/w", "mcpServers": []}))
    log.upd(chunk("agent", "a", "early"), sid="s9")
    log.agent(response(0, {"sessionId": "s9"}))
    snap = log.session("s9")
    assert snap["announced"] is True
    assert snap["timeline"] == [message_entry("agent", "a", "early")]


def test_r44_sessions_are_isolated() -> None:
    log = Log()
    log.upd(chunk("agent", "m", "one"), state("running"), sid="s1")
    log.upd(chunk("agent", "m", "two"), sid="s2")
    log.upd(idle(), sid="s1")
    assert log.session("s1")["timeline"] == [message_entry("agent", "m", "one")]
    assert log.session("s2")["timeline"] == [message_entry("agent", "m", "two")]
    assert log.session("s1")["completedTurns"] == ["end_turn"]
    assert log.session("s2")["completedTurns"] == []
    assert [s["sessionId"] for s in log.snap()["sessions"]] == ["s1", "s2"]


def test_snapshot_top_level_shape() -> None:
    log = Log()
    log.agent({"jsonrpc": "2.0", "params": {}})
    snap = log.snap()
    assert set(snap) == {"format", "sessions", "diagnostics"}
    assert snap["format"] == "acp-client/snapshot@1"
    d = snap["diagnostics"][0]
    assert set(d) <= {"line", "severity", "code", "message"}
    assert d["line"] == 1 and d["severity"] == "error"


def test_diagnostic_line_numbers_follow_the_log() -> None:
    conn = Connection(live=False)
    conn.receive_message(update(chunk("agent", "a", "x")), line=4)
    conn.receive_message(update({"sessionUpdate": "agent_message_chunk"}), line=9)
    conn.receive_message(response(3, {}), line=11)
    assert [d.get("line") for d in conn.snapshot()["diagnostics"]] == [9, 11]


def test_decoding_diagnostics_carry_the_log_line() -> None:
    conn = Connection(live=False)
    conn.receive_message(update(tool("c", title=5)), line=9)
    conn.receive_message(update(msg("agent", "a", content=[text("x"), {"type": "image"}])), line=12)
    assert [d.get("line") for d in conn.snapshot()["diagnostics"]] == [9, 12]


def test_tool_chunk_for_unknown_session_in_live_mode() -> None:
    live = Live()
    live.upd(tool_chunk("c1", "x"), sid="s7")
    assert live.session("s7")["timeline"][0]["toolCallId"] == "c1"


def test_r57_notices_during_replay_and_for_unknown_sessions_are_kept() -> None:
    live = Live()
    live.upd({"sessionUpdate": "notice", "severity": "info", "title": "early"}, sid="s5")
    assert live.session("s5")["notices"] == [{"severity": "info", "title": "early"}]
    rid, _ = live.conn.send_resume("s5", "/w")
    live.upd({"sessionUpdate": "notice", "severity": "warning", "title": "during"}, sid="s5")
    live.upd(idle(), sid="s5")
    live.agent(response(rid, {}))
    snap = live.session("s5")
    assert snap["notices"] == [
        {"severity": "info", "title": "early"},
        {"severity": "warning", "title": "during"},
    ]
    assert snap["timeline"] == [] and snap["unretained"] == []


def test_10_prompt_progress_is_observable_insertion_place_and_turn_end() -> None:
    from acp_client.testing import FakeAgent, Loopback

    conn = ready("s1")
    request_id, _ = conn.send_prompt("s1", "hello")
    assert not conn.prompt_finished(request_id)
    loop = Loopback(conn)
    loop.play(
        (d, m)
        for d, m in FakeAgent("s1")
        .prompt_response(request_id, "u1")
        .state("running")
        .user_message("u1", "hello")
        .messages
    )
    assert conn.prompt(request_id).status == "accepted"
    message = conn.prompt_message(request_id)
    assert message is not None and message.text() == "hello"
    assert list(conn.session("s1").timeline).index(message) == 0
    assert not conn.prompt_finished(request_id)
    loop.play(FakeAgent("s1").state("idle", stop_reason="max_tokens").messages)
    assert conn.prompt_finished(request_id)
    assert conn.prompt_stop_reason(request_id) == "max_tokens"


def test_r49_a_prompt_answered_after_its_turn_ended_gets_that_turn() -> None:
    # The echo and the whole turn arrive before the response (a locally handled command):
    # the prompt's turn is the one its user message was placed in, not the next one.
    live = Live()
    live.new_session()
    first = live.prompt("first")
    live.upd(chunk("user", "u1", "first"), state("running"), idle("end_turn"))
    live.agent(response(first, {"messageId": "u1"}))
    assert live.conn.prompt_finished(first)
    assert live.conn.prompt_stop_reason(first) == "end_turn"
    second = live.prompt("second")
    live.agent(response(second, {"messageId": "u2"}))
    assert not live.conn.prompt_finished(second)
    live.upd(chunk("user", "u2", "second"), state("running"), idle("cancelled"))
    assert live.conn.prompt_stop_reason(second) == "cancelled"
    assert live.conn.prompt_stop_reason(first) == "end_turn"


def test_events_of_sends_are_kept_for_the_caller() -> None:
    from acp_client import Connection
    from acp_client.events import CancelRequested, PromptSent

    conn = Connection()
    rid, _ = conn.send_initialize()
    conn.send_new_session("/w")
    assert conn.take_sent_events() == []  # nothing to say until the agent answers
    conn.receive_data(line(response(rid, {"protocolVersion": 2, "capabilities": {}})))
    conn.receive_data(line(response(rid + 1, {"sessionId": "s1"})))
    assert conn.take_sent_events() == []  # the session came with the answer, a received event
    request_id, _ = conn.send_prompt("s1", "hi")
    conn.send_cancel("s1")
    events = conn.take_sent_events()
    assert [type(e) for e in events] == [PromptSent, CancelRequested]
    assert events[0].request_id == request_id
    assert conn.take_sent_events() == []


def test_result_that_does_not_fit_its_method_is_an_invalid_result_diagnostic() -> None:

    conn = ready()
    request_id, _ = conn.send_new_session("/work")
    conn.receive_data(b'{"jsonrpc":"2.0","id":%d,"result":{"noSessionId":true}}\n' % request_id)
    assert [d.code for d in conn.diagnostics] == ["invalid-result"]
    assert conn.sessions == {}


# ------------------------------------------------------- review of the session-4 changes


def test_1_5_a_parsed_batch_with_invalid_entries_is_answered_in_one_array() -> None:
    conn = Connection()
    conn.receive_message(
        [
            {"jsonrpc": "2.0", "id": 5, "method": 5},
            {"jsonrpc": "2.0", "id": True, "method": "x/a"},
            request(2, "x/b"),
        ]
    )
    replies = json.loads(conn.data_to_send())
    assert [r.get("id") for r in replies].count(None) == 2
    assert [r["id"] for r in replies if r.get("id") is not None] == [2]


def test_1_5_two_requests_of_a_batch_with_one_id_are_answered_in_one_array() -> None:
    conn = Connection()
    conn.receive_data(line([request(1, "x/a"), request(1, "x/b")]))
    out = conn.data_to_send()
    assert out.count(b"\n") == 1
    assert [r["id"] for r in json.loads(out)] == [1, 1]


def _resume(rid: int, replay: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"sessionId": SID, "cwd": "/w"}
    if replay:
        params["replayFrom"] = START
    return request(rid, "session/resume", params)


def test_a27_a_resume_left_unanswered_by_a_lost_connection_does_not_stop_completions() -> None:
    log = Log()
    log.client(request(0, "initialize", {"protocolVersion": 2}))
    log.client(_resume(1))  # never answered: the connection ends
    log.client(request(0, "initialize", {"protocolVersion": 2}))
    log.client(_resume(1))
    log.upd(idle())
    log.agent(response(1, {}))
    log.upd(state("running"), idle("end_turn"))
    assert log.session()["completedTurns"] == ["end_turn"]


def test_r14_after_a_resume_snapshot_a_refusal_marks_only_the_new_turn() -> None:
    log = Log()
    log.upd(msg("user", "u1", content=[text("one")]), state("running"))
    log.upd(msg("agent", "a1", content=[text("A")]))
    log.client(_resume(7))
    log.upd(idle("end_turn"))
    log.agent(response(7, {}))
    log.upd(msg("user", "u2", content=[text("two")]), state("running"))
    log.upd(msg("agent", "a2", content=[text("B")]), idle("refusal"))
    excluded = {e["messageId"]: e.get("excludedFromContext", False) for e in log.timeline()}
    assert excluded == {"u1": False, "a1": False, "u2": True, "a2": True}


def test_1_4_a_new_connection_in_a_log_forgets_the_agents_unanswered_requests() -> None:
    log = Log()
    log.client(request(0, "initialize", {"protocolVersion": 2}))
    log.client(request(1, "session/new", {"cwd": "/w"}))
    log.agent(response(1, {"sessionId": SID}), request(0, "_acme/ping"))
    log.client(request(0, "initialize", {"protocolVersion": 2}))
    log.agent(request(0, "_acme/ping"))
    assert "duplicate-request-id" not in log.codes()


def test_1_4_send_request_refuses_initialize_after_another_request() -> None:
    conn = _initialized({})
    conn.send_new_session("/w")
    with pytest.raises(LocalProtocolError):
        conn.send_request("initialize", {"protocolVersion": 2})


def test_c21_an_option_of_an_unknown_type_can_still_be_set() -> None:
    live = Live()
    live.new_session()
    custom = {"type": "_slider", "configId": "temp", "name": "T", "currentValue": "0.5"}
    live.upd(opts(custom))
    live.conn.send_set_config_option(SID, "temp", "0.7")


def test_misused_sends_are_refused_and_leave_no_pending_request() -> None:
    conn = _initialized({})
    with pytest.raises(LocalProtocolError, match="empty string"):
        conn.send_prompt(SID, "")
    with pytest.raises(TypeError, match="bytes"):
        conn.send_prompt(SID, b"hi")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="str path"):
        conn.send_new_session(123)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not str"):
        conn.receive_data('{"jsonrpc":"2.0"}\n')  # type: ignore[arg-type]
    # a request whose params cannot be encoded is not recorded as sent
    conn.take_sent_events()
    unsent = conn.next_request_id() + 1  # the id the refused request takes
    with pytest.raises(TypeError):
        conn.send_set_config_option(SID, "mode", object())  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError, match="no pending request"):
        conn.send_cancel_request(unsent)
    assert conn.take_sent_events() == []
    assert conn.diagnostics == []


# ------------------------------------------- rules that mutation testing found unpinned


def _sent_prompt(log: Log, rid: int = 1) -> None:
    log.client(prompt_request(rid, SID, "hi"))


def test_r49_a_prompts_turn_is_found_from_where_its_message_was_first_seen() -> None:
    # 2.3 / 10.4: the response may come after the work ended (A28); a later patch of the
    # user message does not move it into the next turn.
    log = Log()
    _sent_prompt(log)
    log.upd(state("running"), msg("user", "u1", content=[text("hi")]), idle("end_turn"))
    log.upd(msg("user", "u1", _meta={"x": 1}))
    log.agent(response(1, {"messageId": "u1"}))
    assert log.conn.prompt_finished(1)


def test_11_6_a_cancel_confirmed_after_the_final_status_leaves_no_cancelling_mark() -> None:
    # 11.6: "cancelling..." shows until the confirming update or a failure (R59)
    log = Log()
    log.upd(tool("c1", status="in_progress", capabilities={"cancel": {}}))
    log.client(request(1, "tool_call/cancel", {"sessionId": SID, "toolCallId": "c1"}))
    log.upd(tool("c1", status="completed"))
    log.agent(response(1, {}))
    assert not log.sess().tool_calls["c1"].cancel_pending


def test_r45_a_failed_replay_marks_the_prompts_it_lost_not_retained() -> None:
    # 12.3 step 5 / R45: on an error the previous generation goes to `unretained`; a
    # submission linked to a message that went there is `not_retained` (step 4).
    log = Log()
    _sent_prompt(log)
    log.upd(msg("user", "u1", content=[text("hi")]))
    log.agent(response(1, {"messageId": "u1"}))
    resume = {"sessionId": SID, "cwd": "/w", "mcpServers": [], "replayFrom": {"type": "start"}}
    log.client(request(2, "session/resume", resume))
    log.upd(idle(None))
    log.agent(error(2, -32603, "boom"))
    assert [e["messageId"] for e in log.session()["unretained"]] == ["u1"]
    assert log.conn.prompt(1).not_retained


def _library_and_model(agent: FakeAgent) -> list[dict[str, Any]]:
    conn = Connection(live=False)
    for direction, message in copy.deepcopy(agent.messages):
        conn.receive_message(message, direction)
    model = ReferenceModel()
    model.feed_all(copy.deepcopy(agent.messages))
    return [conn.snapshot()["sessions"][0], model.snapshot()["sessions"][0]]


def test_12_3_a_close_sent_during_a_replay_still_ends_the_replay() -> None:
    # Step 4 on the resume's success: what the replay did not report again is unretained,
    # also when the user closed the session while the replay was under way (11.5).
    agent = FakeAgent(SID).initialize(0).new_session(1)
    agent.prompt(2, "go").prompt_response(2, "u1").user_message("u1", "go").state("running")
    agent.tool_call("c1", title="Read", status="completed").state("idle", stop_reason="end_turn")
    agent.resume(3).close(4).user_message("u1", "go").state("idle", stop_reason="end_turn")
    agent.resume_response(3).close_response(4)
    for session in _library_and_model(agent):
        assert [e["messageId"] for e in session["timeline"]] == ["u1"]
        assert [e["toolCallId"] for e in session["unretained"]] == ["c1"]


def test_12_3_a_replay_drops_the_local_cancellation_overlay() -> None:
    # Step 3: overlays are dropped; an unretained tool call keeps the agent's own status.
    agent = FakeAgent(SID).initialize(0).new_session(1)
    agent.prompt(2, "go").prompt_response(2, "u1").user_message("u1", "go").state("running")
    agent.tool_call("c1", title="Run", status="in_progress")
    agent.cancel().state("idle", stop_reason="cancelled")  # no later status for c1
    agent.resume(3).user_message("u1", "go").state("idle", stop_reason="cancelled")
    agent.resume_response(3)
    for session in _library_and_model(agent):
        assert [(e["toolCallId"], e["status"]) for e in session["unretained"]] == [
            ("c1", "in_progress")
        ]


def test_1_2_a_message_without_jsonrpc_is_accepted_with_a_warning() -> None:
    # 1.2: every object carries "jsonrpc": "2.0"; one without it is applied, and said (the
    # log reader's code, missing-jsonrpc-version); another value is rejected.
    conn = Connection(live=False)
    bare = {"method": "session/update", "params": update(state("running"))["params"]}
    conn.receive_data(json.dumps(bare).encode() + b"\n")
    assert [d.code for d in conn.diagnostics if d.code != "unannounced-session"] == [
        "missing-jsonrpc-version"
    ]
    assert conn.snapshot()["sessions"][0]["state"] == {"state": "running"}
    conn.receive_data(json.dumps({**bare, "jsonrpc": "2.0"}).encode() + b"\n")
    assert [d.code for d in conn.diagnostics].count("missing-jsonrpc-version") == 1
    conn.receive_data(json.dumps({**bare, "jsonrpc": "1.0"}).encode() + b"\n")
    assert "update-rejected" in [d.code for d in conn.diagnostics]


# ------------------------------------- the per-method tables, walked exhaustively

#: Valid params of each request whose response or sending has an effect.
_TABLED_PARAMS: dict[str, dict[str, Any]] = {
    "initialize": {"protocolVersion": 2, "capabilities": {}, "info": INFO},
    "session/new": {"cwd": "/w", "mcpServers": []},
    "session/resume": {"sessionId": SID, "cwd": "/w", "mcpServers": [], "replayFrom": START},
    "session/prompt": {"sessionId": SID, "prompt": [text("hi")]},
    "session/close": {"sessionId": SID},
    "session/set_config_option": {
        "sessionId": SID,
        "configId": "b",
        "type": "boolean",
        "value": True,
    },
    "tool_call/cancel": {"sessionId": SID, "toolCallId": "t1"},
    "terminal/cancel": {"sessionId": SID, "terminalId": "x1"},
}
_OUTCOMES = [
    {"result": {}},
    {"result": None},
    {"error": {"code": -32603, "message": "failed"}},
    {"error": {"code": -32002, "message": "gone"}},
]


def _tabled_methods() -> list[str]:
    from acp_client._methods import REQUEST_EFFECTS, RESPONSE_EFFECTS, SESSION_RESPONSE_EFFECTS

    methods = RESPONSE_EFFECTS.keys() | SESSION_RESPONSE_EFFECTS.keys() | REQUEST_EFFECTS.keys()
    assert methods == _TABLED_PARAMS.keys()  # a new entry of a table gets a case here
    return sorted(methods)


def _with_entities(conn: Connection) -> None:
    conn.receive_message(update(tool("t1", status="in_progress")))
    conn.receive_message(update(term("x1", capabilities={"cancel": {}})))
    conn.take_sent_events()


@pytest.mark.parametrize("method", _tabled_methods())
@pytest.mark.parametrize("outcome", _OUTCOMES, ids=["ok", "null", "error", "gone"])
@pytest.mark.parametrize("live", [True, False], ids=["live", "log"])
def test_every_tabled_response_ends_its_request_with_one_response_event(
    method: str, outcome: dict[str, Any], live: bool
) -> None:
    conn = Connection(live=live)
    _with_entities(conn)
    conn.receive_message(request(7, method, _TABLED_PARAMS[method]), "outgoing")
    events = conn.receive_message({"jsonrpc": "2.0", "id": 7, **outcome})
    last = events[-1]
    assert type(last).__name__ == "ResponseReceived"
    assert (last.request_id, last.method) == (7, method)  # type: ignore[attr-defined]
    assert sum(type(e).__name__ == "ResponseReceived" for e in events) == 1
    with pytest.raises(LocalProtocolError, match="no pending request"):
        conn.send_cancel_request(7)  # answered: no longer pending
    assert conn.unmatched_responses == ()
    assert conn.data_to_send() == b""  # no permission was pending: nothing owed


@pytest.mark.parametrize("method", _tabled_methods())
def test_every_tabled_request_has_the_same_effect_sent_live_or_read_from_a_log(
    method: str,
) -> None:
    outcomes = []
    for live in (True, False):
        conn = Connection(live=live)
        _with_entities(conn)  # live, its session is unannounced (a diagnostic)
        before = len(conn.diagnostics)
        events = conn.receive_message(request(7, method, _TABLED_PARAMS[method]), "outgoing")
        sessions = conn.snapshot()["sessions"]
        outcomes.append(([repr(e) for e in events], sessions, conn.diagnostics[before:]))
    assert outcomes[0] == outcomes[1]
