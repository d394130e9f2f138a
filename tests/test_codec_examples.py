"""Every JSON example of the Prompt Lifecycle page and of the client-state specification decodes
to the expected Structs; invalid inputs give ``RemoteProtocolError`` with the right code and
JSON path.

The examples are copied verbatim (the specification files are not read at run time).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from acp_client import Decoder, Diagnostic, RemoteProtocolError, encode, to_builtins
from acp_client import schema as s
from acp_client.schema import UNSET

DECODER = Decoder()


def decode_one(data: str | bytes) -> Any:
    """Decode one message, asserting it needed no lenient recovery."""
    diagnostics: list[Diagnostic] = []
    message = DECODER.decode(data, diagnostics=diagnostics)
    assert not isinstance(message, list)
    assert diagnostics == []
    return message


def update_of(data: str) -> Any:
    message = decode_one(data)
    assert isinstance(message, s.Notification)
    assert message.method == "session/update"
    assert isinstance(message.params, s.UpdateSessionNotification)
    return message.params.update


def assert_reencodes(data: str | bytes, message: Any) -> None:
    assert msgspec.json.decode(encode(message)) == json.loads(data)


# ------------------------------------------------------------ prompt-lifecycle-v2.md

PL_PROMPT_REQUEST = """
{
"jsonrpc": "2.0",
"id": 2,
"method": "session/prompt",
"params": {
"sessionId": "sess_abc123def456",
"prompt": [
{
"type": "text",
"text": "Can you analyze this code for potential issues?"
},
{
"type": "resource",
"resource": {
"uri": "file:///home/user/project/main.py",
"mimeType": "text/x-python",
"text": "def process_data(items):\\n for item in items:\\n print(item)"
}
}
]
}
}
"""

PL_PROMPT_RESPONSE = """
{
"jsonrpc": "2.0",
"id": 2,
"result": {
"messageId": "msg_user_8f7a1"
}
}
"""

PL_USER_MESSAGE = """
{
"jsonrpc": "2.0",
"method": "session/update",
"params": {
"sessionId": "sess_abc123def456",
"update": {
"sessionUpdate": "user_message",
"messageId": "msg_user_8f7a1",
"content": [
{
"type": "text",
"text": "Can you analyze this code for potential issues?"
}
]
}
}
}
"""

PL_STATE_RUNNING = """
{
"jsonrpc": "2.0",
"method": "session/update",
"params": {
"sessionId": "sess_abc123def456",
"update": {
"sessionUpdate": "state_update",
"state": "running"
}
}
}
"""

PL_PLAN_UPDATE = """
{
"jsonrpc": "2.0",
"method": "session/update",
"params": {
"sessionId": "sess_abc123def456",
"update": {
"sessionUpdate": "plan_update",
"plan": {
"type": "items",
"planId": "plan-1",
"entries": [
{
"content": "Check for syntax errors",
"priority": "high",
"status": "pending"
},
{
"content": "Identify potential type issues",
"priority": "medium",
"status": "pending"
},
{
"content": "Review error handling patterns",
"priority": "medium",
"status": "pending"
},
{
"content": "Suggest improvements",
"priority": "low",
"status": "pending"
}
]
}
}
}
}
"""

PL_AGENT_MESSAGE = """
{
"jsonrpc": "2.0",
"method": "session/update",
"params": {
"sessionId": "sess_abc123def456",
"update": {
"sessionUpdate": "agent_message",
"messageId": "msg_agent_c42b9",
"content": [
{
"type": "text",
"text": "I'll analyze your code for potential issues. Let me examine it..."
}
]
}
}
}
"""

PL_AGENT_MESSAGE_CHUNK = """
{
"jsonrpc": "2.0",
"method": "session/update",
"params": {
"sessionId": "sess_abc123def456",
"update": {
"sessionUpdate": "agent_message_chunk",
"messageId": "msg_agent_c42b9",
"content": {
"type": "text",
"text": " Let me examine it..."
}
}
}
}
"""

PL_AGENT_THOUGHT = """
{
"jsonrpc": "2.0",
"method": "session/update",
"params": {
"sessionId": "sess_abc123def456",
"update": {
"sessionUpdate": "agent_thought",
"messageId": "msg_thought_a12",
"content": [
{
"type": "text",
"text": "Need to inspect the loop body before suggesting a fix."
}
]
}
}
}
"""

PL_TOOL_CALL_PENDING = """
{
"jsonrpc": "2.0",
"method": "session/update",
"params": {
"sessionId": "sess_abc123def456",
"update": {
"sessionUpdate": "tool_call_update",
"toolCallId": "call_001",
"title": "Analyzing Python code",
"kind": "other",
"status": "pending"
}
}
}
"""

PL_USAGE_UPDATE = """
{
"jsonrpc": "2.0",
"method": "session/update",
"params": {
"sessionId": "sess_abc123def456",
"update": {
"sessionUpdate": "usage_update",
"used": 53000,
"size": 200000,
"cost": {
"amount": 0.045,
"currency": "USD"
}
}
}
}
"""

PL_STATE_IDLE = """
{
"jsonrpc": "2.0",
"method": "session/update",
"params": {
"sessionId": "sess_abc123def456",
"update": {
"sessionUpdate": "state_update",
"state": "idle",
"stopReason": "end_turn"
}
}
}
"""

PL_TOOL_CALL_IN_PROGRESS = """
{
"jsonrpc": "2.0",
"method": "session/update",
"params": {
"sessionId": "sess_abc123def456",
"update": {
"sessionUpdate": "tool_call_update",
"toolCallId": "call_001",
"status": "in_progress"
}
}
}
"""

PL_TOOL_CALL_CONTENT_CHUNK = """
{
"jsonrpc": "2.0",
"method": "session/update",
"params": {
"sessionId": "sess_abc123def456",
"update": {
"sessionUpdate": "tool_call_content_chunk",
"toolCallId": "call_001",
"content": {
"type": "content",
"content": {
"type": "text",
"text": "Checked syntax..."
}
}
}
}
}
"""

PL_TOOL_CALL_COMPLETED = """
{
"jsonrpc": "2.0",
"method": "session/update",
"params": {
"sessionId": "sess_abc123def456",
"update": {
"sessionUpdate": "tool_call_update",
"toolCallId": "call_001",
"status": "completed",
"content": [
{
"type": "content",
"content": {
"type": "text",
"text": "Analysis complete:\\n- No syntax errors found\\n- Consider adding type hints for better clarity\\n- The function could benefit from error handling for empty lists"
}
}
]
}
}
}
"""  # noqa: E501

PL_SESSION_CANCEL = """
{
"jsonrpc": "2.0",
"method": "session/cancel",
"params": {
"sessionId": "sess_abc123def456"
}
}
"""

PL_ALL = [
    PL_PROMPT_REQUEST,
    PL_PROMPT_RESPONSE,
    PL_USER_MESSAGE,
    PL_STATE_RUNNING,
    PL_PLAN_UPDATE,
    PL_AGENT_MESSAGE,
    PL_AGENT_MESSAGE_CHUNK,
    PL_AGENT_THOUGHT,
    PL_TOOL_CALL_PENDING,
    PL_USAGE_UPDATE,
    PL_STATE_IDLE,
    PL_TOOL_CALL_IN_PROGRESS,
    PL_TOOL_CALL_CONTENT_CHUNK,
    PL_TOOL_CALL_COMPLETED,
    PL_SESSION_CANCEL,
]

# ------------------------------------------------------------ ACP-V2-CLIENT-STATE.md

# section 1.6 (the "…" is part of the example)
CS_UPDATE_WITH_META = """
{
  "jsonrpc": "2.0",
  "method": "session/update",
  "params": {
    "sessionId": "sess_1",
    "update": { "sessionUpdate": "agent_message_chunk", "messageId": "m1",
                "content": { "type": "text", "text": "Hi" } },
    "_meta": { "traceparent": "00-…" }
  }
}
"""

# section 10.1
CS_PROMPT_REQUEST = """
{ "jsonrpc": "2.0", "id": 7, "method": "session/prompt",
  "params": { "sessionId": "sess_1",
              "prompt": [ { "type": "text", "text": "Fix the failing test" } ] } }
"""

# section 10.2
CS_PROMPT_RESPONSE = """
  { "jsonrpc": "2.0", "id": 7, "result": { "messageId": "msg_user_8f7a1" } }
"""

# section 11.1
CS_PERMISSION_RESPONSE = """
{ "jsonrpc": "2.0", "id": 5,
  "result": { "outcome": { "outcome": "selected", "optionId": "allow-once" } } }
"""

# section 11.2 (inline): the cancelled outcome, and the session/cancel params
CS_CANCELLED_OUTCOME = '{ "outcome": { "outcome": "cancelled" } }'
CS_CANCEL_PARAMS = '{ "sessionId": "sess_1" }'

CS_ALL = [CS_UPDATE_WITH_META, CS_PROMPT_REQUEST, CS_PROMPT_RESPONSE, CS_PERMISSION_RESPONSE]


# ------------------------------------------------------------------------------ tests


def test_prompt_request() -> None:
    message = decode_one(PL_PROMPT_REQUEST)
    assert isinstance(message, s.Request)
    assert message.id == 2
    assert message.method == "session/prompt"
    params = message.params
    assert isinstance(params, s.PromptRequest)
    assert params.session_id == "sess_abc123def456"
    assert params.meta is UNSET
    first, second = params.prompt
    assert first == s.TextContent(text="Can you analyze this code for potential issues?")
    assert first.annotations is UNSET and first.meta is UNSET and first.extra is UNSET
    assert isinstance(second, s.EmbeddedResource)
    assert second.annotations is UNSET
    resource = second.resource
    assert isinstance(resource, s.ResourceContents)
    assert resource.uri == "file:///home/user/project/main.py"
    assert resource.mime_type == "text/x-python"
    assert resource.text == "def process_data(items):\n for item in items:\n print(item)"
    assert resource.blob is UNSET
    assert resource.meta is UNSET


@pytest.mark.parametrize("data", [PL_PROMPT_RESPONSE, CS_PROMPT_RESPONSE])
def test_prompt_response(data: str) -> None:
    message = decode_one(data)
    assert isinstance(message, s.Response)
    assert message.id == json.loads(data)["id"]
    result = DECODER.decode_result("session/prompt", message.result)
    assert result == s.PromptResponse(message_id="msg_user_8f7a1")
    assert result.meta is UNSET and result.extra is UNSET


def test_user_message() -> None:
    message = decode_one(PL_USER_MESSAGE)
    assert message.params.session_id == "sess_abc123def456"
    assert message.params.meta is UNSET
    update = message.params.update
    assert isinstance(update, s.UserMessage)
    assert update.role == "user"
    assert update.message_id == "msg_user_8f7a1"
    assert update.content == [s.TextContent(text="Can you analyze this code for potential issues?")]
    assert update.meta is UNSET


def test_state_running() -> None:
    update = update_of(PL_STATE_RUNNING)
    assert update == s.StateUpdate(state="running")
    assert update.background is UNSET
    assert update.stop_reason is UNSET
    assert update.error is UNSET
    assert update.meta is UNSET
    assert update.extra is UNSET


def test_state_idle_end_turn() -> None:
    update = update_of(PL_STATE_IDLE)
    assert isinstance(update, s.StateUpdate)
    assert update.state == "idle"
    assert update.stop_reason == "end_turn"
    assert update.background is UNSET
    assert update.error is UNSET


def test_plan_update() -> None:
    update = update_of(PL_PLAN_UPDATE)
    assert isinstance(update, s.PlanUpdate)
    assert update.meta is UNSET
    plan = update.plan
    assert isinstance(plan, s.PlanItems)
    assert plan.plan_id == "plan-1"
    assert plan.meta is UNSET
    assert [(e.content, e.priority, e.status) for e in plan.entries] == [
        ("Check for syntax errors", "high", "pending"),
        ("Identify potential type issues", "medium", "pending"),
        ("Review error handling patterns", "medium", "pending"),
        ("Suggest improvements", "low", "pending"),
    ]
    assert all(isinstance(e, s.PlanEntry) and e.meta is UNSET for e in plan.entries)


def test_agent_message_and_chunk() -> None:
    update = update_of(PL_AGENT_MESSAGE)
    assert isinstance(update, s.AgentMessage)
    assert update.role == "agent"
    assert update.message_id == "msg_agent_c42b9"
    assert update.content == [
        s.TextContent(text="I'll analyze your code for potential issues. Let me examine it...")
    ]
    chunk = update_of(PL_AGENT_MESSAGE_CHUNK)
    assert isinstance(chunk, s.AgentMessageChunk)
    assert chunk.role == "agent"
    assert chunk.message_id == "msg_agent_c42b9"
    assert chunk.content == s.TextContent(text=" Let me examine it...")
    assert chunk.meta is UNSET


def test_agent_thought() -> None:
    update = update_of(PL_AGENT_THOUGHT)
    assert isinstance(update, s.AgentThought)
    assert update.role == "thought"
    assert update.message_id == "msg_thought_a12"
    assert update.content == [
        s.TextContent(text="Need to inspect the loop body before suggesting a fix.")
    ]


def test_tool_call_pending() -> None:
    update = update_of(PL_TOOL_CALL_PENDING)
    assert isinstance(update, s.ToolCallUpdate)
    assert update.tool_call_id == "call_001"
    assert update.title == "Analyzing Python code"
    assert update.kind == "other"
    assert update.status == "pending"
    for name in ("name", "content", "locations", "raw_input", "raw_output", "capabilities"):
        assert getattr(update, name) is UNSET, name
    assert update.meta is UNSET


def test_tool_call_in_progress_leaves_the_rest_omitted() -> None:
    update = update_of(PL_TOOL_CALL_IN_PROGRESS)
    assert update == s.ToolCallUpdate(tool_call_id="call_001", status="in_progress")
    assert update.title is UNSET and update.kind is UNSET and update.content is UNSET


def test_tool_call_content_chunk() -> None:
    update = update_of(PL_TOOL_CALL_CONTENT_CHUNK)
    assert isinstance(update, s.ToolCallContentChunk)
    assert update.tool_call_id == "call_001"
    assert update.content == s.Content(content=s.TextContent(text="Checked syntax..."))
    assert update.meta is UNSET


def test_tool_call_completed() -> None:
    update = update_of(PL_TOOL_CALL_COMPLETED)
    assert isinstance(update, s.ToolCallUpdate)
    assert update.status == "completed"
    assert update.content is not UNSET and update.content is not None
    (item,) = update.content
    assert isinstance(item, s.Content)
    assert isinstance(item.content, s.TextContent)
    assert item.content.text.startswith("Analysis complete:\n- No syntax errors found\n")
    assert update.title is UNSET


def test_usage_update() -> None:
    update = update_of(PL_USAGE_UPDATE)
    assert update == s.UsageUpdate(
        used=53000, size=200000, cost=s.Cost(amount=0.045, currency="USD")
    )
    assert update.meta is UNSET


def test_session_cancel() -> None:
    message = decode_one(PL_SESSION_CANCEL)
    assert isinstance(message, s.Notification)
    assert message.method == "session/cancel"
    assert message.params == s.CancelSessionNotification(session_id="sess_abc123def456")
    assert message.params.meta is UNSET


def test_update_with_notification_meta() -> None:
    message = decode_one(CS_UPDATE_WITH_META)
    params = message.params
    assert params.session_id == "sess_1"
    assert params.meta == {"traceparent": "00-…"}
    assert params.update == s.AgentMessageChunk(message_id="m1", content=s.TextContent(text="Hi"))
    assert params.update.meta is UNSET


def test_prompt_request_of_the_tracker_section() -> None:
    message = decode_one(CS_PROMPT_REQUEST)
    assert isinstance(message, s.Request)
    assert message.id == 7
    assert message.params == s.PromptRequest(
        session_id="sess_1", prompt=[s.TextContent(text="Fix the failing test")]
    )


def test_permission_responses() -> None:
    message = decode_one(CS_PERMISSION_RESPONSE)
    assert isinstance(message, s.Response)
    assert message.id == 5
    result = DECODER.decode_result("session/request_permission", message.result)
    assert result == s.RequestPermissionResponse(
        outcome=s.SelectedPermissionOutcome(option_id="allow-once")
    )
    cancelled = DECODER.decode_result(
        "session/request_permission", json.loads(CS_CANCELLED_OUTCOME)
    )
    assert cancelled == s.RequestPermissionResponse(outcome=s.CancelledPermissionOutcome())


def test_cancel_params() -> None:
    line = f'{{"jsonrpc": "2.0", "method": "session/cancel", "params": {CS_CANCEL_PARAMS}}}'
    assert decode_one(line).params == s.CancelSessionNotification(session_id="sess_1")


@pytest.mark.parametrize("data", PL_ALL + CS_ALL)
def test_examples_reencode_exactly(data: str) -> None:
    assert_reencodes(data, decode_one(data))


@pytest.mark.parametrize("data", PL_ALL + CS_ALL)
def test_examples_decode_as_bytes_and_str_alike(data: str) -> None:
    assert DECODER.decode(data.encode()) == DECODER.decode(data)


# ---------------------------------------------- three states (sections 0.3, 4.3, 7.1, 8.2)

SID = '"sessionId": "s"'


def upd(update: str) -> str:
    head = '{"jsonrpc": "2.0", "method": "session/update", "params": {' + SID
    return head + ', "update": ' + update + "}}"


def test_message_table_of_section_4_3() -> None:
    a = update_of(
        upd(
            '{"sessionUpdate": "agent_message", "messageId": "m",'
            ' "content": [{"type": "text", "text": "A"}]}'
        )
    )
    assert a.content == [s.TextContent(text="A")] and a.meta is UNSET
    b = update_of(
        upd(
            '{"sessionUpdate": "agent_message_chunk", "messageId": "m",'
            ' "content": {"type": "text", "text": "B"}}'
        )
    )
    assert b.content == s.TextContent(text="B")
    meta_only = update_of(
        upd('{"sessionUpdate": "agent_message", "messageId": "m", "_meta": {"k": 1}}')
    )
    assert meta_only.content is UNSET and meta_only.meta == {"k": 1}
    cleared = update_of(
        upd('{"sessionUpdate": "agent_message", "messageId": "m", "content": null}')
    )
    assert cleared.content is None
    emptied = update_of(upd('{"sessionUpdate": "agent_message", "messageId": "m", "content": []}'))
    assert emptied.content == []


@pytest.mark.parametrize(
    ("fragment", "field", "expected"),
    [
        ("", "status", UNSET),
        (', "status": null', "status", None),
        (', "status": "paused"', "status", "paused"),
        (', "kind": null', "kind", None),
        (', "title": null', "title", None),
        (', "rawInput": null', "raw_input", None),
        (', "rawOutput": {"a": [1, null]}', "raw_output", {"a": [1, None]}),
        (', "rawInput": 0', "raw_input", 0),
        (', "locations": null', "locations", None),
        (', "locations": []', "locations", []),
        (', "capabilities": null', "capabilities", None),
        (
            ', "capabilities": {"cancel": {}}',
            "capabilities",
            s.ToolCallCapabilities(cancel=s.ToolCallCancelCapabilities()),
        ),
        (', "capabilities": {"cancel": null}', "capabilities", s.ToolCallCapabilities(cancel=None)),
        (', "_meta": null', "meta", None),
        (', "_meta": {}', "meta", {}),
    ],
)
def test_tool_call_three_states(fragment: str, field: str, expected: Any) -> None:
    update = update_of(upd(f'{{"sessionUpdate": "tool_call_update", "toolCallId": "t"{fragment}}}'))
    value = getattr(update, field)
    if expected is UNSET or expected is None:
        assert value is expected
    else:
        assert value == expected


@pytest.mark.parametrize(
    ("fragment", "field", "expected"),
    [
        (', "exitStatus": {}', "exit_status", s.TerminalExitStatus()),
        (', "exitStatus": null', "exit_status", None),
        (
            ', "exitStatus": {"exitCode": -1, "signal": null}',
            "exit_status",
            s.TerminalExitStatus(exit_code=-1, signal=None),
        ),
        (', "output": {"data": "aGk="}', "output", s.TerminalOutput(data="aGk=")),
        (', "output": null', "output", None),
        (', "size": {"cols": 80, "rows": 24}', "size", s.TerminalSize(cols=80, rows=24)),
        (', "command": null', "command", None),
        (', "cwd": "/home/u"', "cwd", "/home/u"),
        ("", "command", UNSET),
    ],
)
def test_terminal_three_states(fragment: str, field: str, expected: Any) -> None:
    update = update_of(upd(f'{{"sessionUpdate": "terminal_update", "terminalId": "t"{fragment}}}'))
    value = getattr(update, field)
    if expected is UNSET or expected is None:
        assert value is expected
    else:
        assert value == expected


def test_terminal_content_item_anchor() -> None:
    # section 8.1: a `{ "type": "terminal", "terminalId": … }` content item
    update = update_of(
        upd(
            '{"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t",'
            ' "content": {"type": "terminal", "terminalId": "term_1"}}'
        )
    )
    assert update.content == s.Terminal(terminal_id="term_1")


def test_idle_error_stop_reason() -> None:
    update = update_of(
        upd(
            '{"sessionUpdate": "state_update", "state": "idle", "stopReason": "error",'
            ' "error": {"code": -32603, "message": "boom", "data": {"k": 1}}, "background": []}'
        )
    )
    assert update.stop_reason == "error"
    assert update.error == s.Error(code=-32603, message="boom", data={"k": 1})
    assert update.background == []


def test_error_responses_and_their_data() -> None:
    message = decode_one(
        '{"jsonrpc": "2.0", "id": 3, "error": {"code": -32002, "message": "Resource not found",'
        ' "data": {"sessionId": "sess_1"}}}'
    )
    assert isinstance(message, s.ErrorResponse)
    assert message.id == 3
    assert message.error == s.Error(
        code=-32002, message="Resource not found", data={"sessionId": "sess_1"}
    )
    no_data = decode_one(
        '{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "x"}}'
    )
    assert no_data.id is None and no_data.error.data is UNSET
    null_data = decode_one(
        '{"jsonrpc": "2.0", "id": "a", "error": {"code": 1, "message": "x", "data": null}}'
    )
    assert null_data.id == "a" and null_data.error.data is None


def test_string_and_int64_request_ids() -> None:
    for rid in ('"req-1"', "0", str(2**63 - 1), str(-(2**63))):
        message = decode_one(
            f'{{"jsonrpc": "2.0", "id": {rid}, "method": "session/cancel_x", "params": {{}}}}'
        )
        assert isinstance(message, s.Request)
        assert message.id == json.loads(rid)


def test_unknown_methods_keep_raw_params() -> None:
    request = decode_one('{"jsonrpc": "2.0", "id": 1, "method": "_x/y", "params": [1, {"a": 2}]}')
    assert isinstance(request, s.Request) and request.params == [1, {"a": 2}]
    note = decode_one('{"jsonrpc": "2.0", "method": "_x/z"}')
    assert isinstance(note, s.Notification) and note.params is UNSET


def test_batch_entries_in_order() -> None:
    line = "[{}, {}]".format(
        PL_STATE_RUNNING.strip(),
        '{"jsonrpc": "2.0", "id": 9, "result": {}}',
    )
    decoded = DECODER.decode(line)
    assert isinstance(decoded, list)
    first, second = decoded
    assert first.params.update == s.StateUpdate(state="running")
    assert isinstance(second, s.Response) and second.id == 9 and second.result == {}


# --------------------------------------------------------------------- invalid inputs

UPDATE_ERRORS = [
    # (params, JSON path)
    ('{"update": {"sessionUpdate": "state_update", "state": "idle"}}', "$.params.sessionId"),
    (
        '{"sessionId": null, "update": {"sessionUpdate": "state_update", "state": "idle"}}',
        "$.params.sessionId",
    ),
    ('{"sessionId": "s"}', "$.params.update"),
    ('{"sessionId": "s", "update": null}', "$.params.update"),
    ('{"sessionId": "s", "update": {"state": "idle"}}', "$.params.update.sessionUpdate"),
    ('{"sessionId": "s", "update": {"sessionUpdate": 5}}', "$.params.update.sessionUpdate"),
    ('{"sessionId": "s", "update": {"sessionUpdate": "state_update"}}', "$.params.update.state"),
    (
        '{"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk",'
        ' "content": {"type": "text", "text": "x"}}}',
        "$.params.update.messageId",
    ),
    (
        '{"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk", "messageId": "m",'
        ' "content": [{"type": "text", "text": "x"}]}}',
        "$.params.update.content",
    ),
    (
        '{"sessionId": "s", "update": {"sessionUpdate": "user_message_chunk", "messageId": "m",'
        ' "content": {"type": "text"}}}',
        "$.params.update.content.text",
    ),
    (
        '{"sessionId": "s", "update": {"sessionUpdate": "agent_thought_chunk", "messageId": "m",'
        ' "content": {"text": "no type"}}}',
        "$.params.update.content.type",
    ),
    (
        '{"sessionId": "s", "update": {"sessionUpdate": "user_message", "messageId": null}}',
        "$.params.update.messageId",
    ),
    (
        '{"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", "toolCallId": 5}}',
        "$.params.update.toolCallId",
    ),
    (
        '{"sessionId": "s", "update": {"sessionUpdate": "tool_call_content_chunk",'
        ' "toolCallId": "t", "content": {"type": "diff"}}}',
        "$.params.update.content.changes",
    ),
    (
        '{"sessionId": "s", "update": {"sessionUpdate": "terminal_output_chunk", "terminalId": "t",'
        ' "data": 5}}',
        "$.params.update.data",
    ),
    (
        '{"sessionId": "s", "update": {"sessionUpdate": "terminal_update"}}',
        "$.params.update.terminalId",
    ),
    ('{"sessionId": "s", "update": {"sessionUpdate": "plan_update"}}', "$.params.update.plan"),
    (
        '{"sessionId": "s", "update": {"sessionUpdate": "plan_update",'
        ' "plan": {"type": "items", "planId": "p", "entries": {}}}}',
        "$.params.update.plan.entries",
    ),
    (
        '{"sessionId": "s", "update": {"sessionUpdate": "available_commands_update",'
        ' "availableCommands": null}}',
        "$.params.update.availableCommands",
    ),
    (
        '{"sessionId": "s", "update": {"sessionUpdate": "config_option_update",'
        ' "configOptions": "x"}}',
        "$.params.update.configOptions",
    ),
    (
        '{"sessionId": "s", "update": {"sessionUpdate": "usage_update", "used": -1, "size": 2}}',
        "$.params.update.used",
    ),
    (
        '{"sessionId": "s", "update": {"sessionUpdate": "usage_update", "used": 1}}',
        "$.params.update.size",
    ),
    (
        '{"sessionId": "s", "update": {"sessionUpdate": "notice", "severity": "info",'
        ' "title": ""}}',
        "$.params.update.title",
    ),
    (
        '{"sessionId": "s", "update": {"sessionUpdate": "notice", "title": "t"}}',
        "$.params.update.severity",
    ),
    (
        '{"sessionId": "s", "update": {"sessionUpdate": "compaction_update", "compactionId": "c"}}',
        "$.params.update.status",
    ),
    (
        '{"sessionId": "s", "update": {"sessionUpdate": "compaction_summary_chunk",'
        ' "compactionId": "c"}}',
        "$.params.update.content",
    ),
]


@pytest.mark.parametrize(("params", "path"), UPDATE_ERRORS)
def test_malformed_update_is_invalid_params(params: str, path: str) -> None:
    line = f'{{"jsonrpc": "2.0", "method": "session/update", "params": {params}}}'
    with pytest.raises(RemoteProtocolError) as info:
        DECODER.decode(line)
    assert info.value.code == -32602
    assert info.value.path == path
    assert info.value.raw == json.loads(line)
    assert info.value.request_id is None


@pytest.mark.parametrize(
    ("data", "code", "path"),
    [
        ("not json", -32700, "$"),
        ('{"jsonrpc": "2.0", "method": ', -32700, "$"),
        ("", -32700, "$"),
        ("[]", -32600, "$"),
        ("5", -32600, "$"),
        ('"x"', -32600, "$"),
        ("null", -32600, "$"),
        ("[1]", -32600, "$[0]"),
        (
            '{"jsonrpc": "1.0", "method": "session/cancel", "params": {"sessionId": "s"}}',
            -32600,
            "$.jsonrpc",
        ),
        ('{"jsonrpc": "2.0", "method": 5}', -32600, "$.method"),
        ('{"jsonrpc": "2.0", "id": null, "method": "session/cancel_x"}', -32600, "$.id"),
        ('{"jsonrpc": "2.0", "id": true, "method": "x"}', -32600, "$.id"),
        ('{"jsonrpc": "2.0", "id": 1.5, "method": "x"}', -32600, "$.id"),
        ('{"jsonrpc": "2.0", "id": 9223372036854775808, "method": "x"}', -32600, "$.id"),
        ('{"jsonrpc": "2.0", "id": [1], "result": {}}', -32600, "$.id"),
        ('{"jsonrpc": "2.0", "id": 1}', -32600, "$"),
        (
            '{"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}}',
            -32600,
            "$",
        ),
        ('{"jsonrpc": "2.0", "id": 1, "error": {"code": 1}}', -32600, "$.error.message"),
        (
            '{"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}',
            -32600,
            "$.error.code",
        ),
        ('{"jsonrpc": "2.0"}', -32600, "$"),
        ('{"jsonrpc": "2.0", "method": "session/update", "params": [1]}', -32602, "$.params"),
        (
            '{"jsonrpc": "2.0", "id": 7, "method": "session/prompt",'
            ' "params": {"sessionId": "s", "prompt": []}}',
            -32602,
            "$.params.prompt",
        ),
        (
            '{"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {"sessionId": "s"}}',
            -32602,
            "$.params.prompt",
        ),
        (
            '{"jsonrpc": "2.0", "id": 7, "method": "session/prompt",'
            ' "params": {"sessionId": "s", "prompt": [{"type": "image", "data": "x"}]}}',
            -32602,
            "$.params.prompt[0].mimeType",
        ),
        (
            '{"jsonrpc": "2.0", "id": 4, "method": "session/request_permission",'
            ' "params": {"sessionId": "s", "title": "t"}}',
            -32602,
            "$.params.options",
        ),
        (
            '{"jsonrpc": "2.0", "id": 4, "method": "session/request_permission",'
            ' "params": {"sessionId": "s", "title": "t", "options": []}}',
            -32602,
            "$.params.options",
        ),
        (
            '{"jsonrpc": "2.0", "id": 4, "method": "session/request_permission",'
            ' "params": {"sessionId": "s", "title": "t", "options": [{"optionId": "o", "name": "n",'
            ' "kind": "allow_once"}], "subject": {"type": "command", "command": "ls"}}}',
            -32602,
            "$.params.subject.cwd",
        ),
        (
            '{"jsonrpc": "2.0", "id": 4, "method": "session/request_permission",'
            ' "params": {"sessionId": "s", "title": "t", "options": [{"optionId": "o", "name": "n",'
            ' "kind": "allow_once"}], "subject": {"type": "tool_call", "toolCall": {}}}}',
            -32602,
            "$.params.subject.toolCall.toolCallId",
        ),
        (
            '{"jsonrpc": "2.0", "id": 4, "method": "session/new", "params": {"cwd": "/",'
            ' "mcpServers": 5}}',
            -32602,
            "$.params.mcpServers",
        ),
    ],
)
def test_invalid_inputs(data: str, code: int, path: str) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        DECODER.decode(data)
    assert (info.value.code, info.value.path) == (code, path)
    (error,) = DECODER.decode_all(data)
    assert isinstance(error, RemoteProtocolError)
    assert (error.code, error.path) == (code, path)


@pytest.mark.parametrize(
    ("data", "rid"),
    [
        ('{"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {"prompt": []}}', 7),
        (
            '{"jsonrpc": "2.0", "id": "r", "method": "session/request_permission", "params": {}}',
            "r",
        ),
    ],
)
def test_invalid_params_name_the_request(data: str, rid: int | str) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        DECODER.decode(data)
    assert info.value.code == -32602
    assert info.value.request_id == rid
    assert info.value.raw == json.loads(data)


@pytest.mark.parametrize(
    ("result", "path"),
    [
        ({}, "$.result.messageId"),
        ({"messageId": None}, "$.result.messageId"),
        ({"messageId": 5}, "$.result.messageId"),
        ([], "$.result"),
        (None, "$.result"),
    ],
)
def test_invalid_prompt_response(result: Any, path: str) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        DECODER.decode_result("session/prompt", result)
    assert (info.value.code, info.value.path) == (-32602, path)


def test_decode_result_of_unknown_method_is_raw() -> None:
    assert DECODER.decode_result("_x/y", {"a": 1}) == {"a": 1}


def test_batch_errors_name_the_element() -> None:
    line = "[{}, {}]".format(
        PL_STATE_RUNNING.strip(),
        '{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s"}}',
    )
    with pytest.raises(RemoteProtocolError) as info:
        DECODER.decode(line)
    assert (info.value.code, info.value.path) == (-32602, "$[1].params.update")
    first, second = DECODER.decode_all(line)
    assert isinstance(first, s.Notification)
    assert first.params.update == s.StateUpdate(state="running")
    assert isinstance(second, RemoteProtocolError)
    assert (second.code, second.path) == (-32602, "$[1].params.update")
    (empty,) = DECODER.decode_all("[]")
    assert isinstance(empty, RemoteProtocolError) and empty.code == -32600


def test_error_message_names_path_and_code() -> None:
    with pytest.raises(RemoteProtocolError) as info:
        DECODER.decode(upd('{"sessionUpdate": "tool_call_update"}'))
    assert "$.params.update.toolCallId" in str(info.value)
    assert "-32602" in str(info.value)


def test_a_decoded_update_is_a_plain_notification_equal_to_one_built_by_hand() -> None:
    line = (
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        '{"sessionUpdate":"agent_message_chunk","messageId":"m",'
        '"content":{"type":"text","text":"hi"}}}}'
    )
    built = s.Notification(
        method="session/update",
        params=s.UpdateSessionNotification(
            session_id="s",
            update=s.AgentMessageChunk(message_id="m", content=s.TextContent(text="hi")),
        ),
    )
    for decoded in (Decoder().decode(line), Decoder().decode_all(line)[0]):
        assert type(decoded) is s.Notification
        assert decoded == built
        assert repr(decoded).startswith("Notification(")


def test_a_lone_surrogate_is_encoded_as_its_escape() -> None:
    # A lenient JSON reader (Python's json, a log read as one document) keeps "\ud800".
    block = s.TextContent(text="a\ud800b", meta={"k": "\udc00"})
    assert encode(block) == b'{"type":"text","text":"a\\ud800b","_meta":{"k":"\\udc00"}}'
    assert json.loads(encode(block)) == {
        "type": "text",
        "text": "a\ud800b",
        "_meta": {"k": "\udc00"},
    }


@pytest.mark.parametrize("with_id", [False, True])
def test_null_params_of_an_unknown_method_are_written_back(with_id: bool) -> None:
    """1.2 / schema: an extension method's ``params`` may be ``null``; kept, not dropped."""
    wire = {"jsonrpc": "2.0", "method": "_acme/ping", "params": None}
    if with_id:
        wire["id"] = 7
    message = Decoder().decode(json.dumps(wire).encode())
    assert message.params is None
    assert json.loads(encode(message)) == wire


@pytest.mark.parametrize(
    ("response", "names"),
    [
        ({"error": {"code": "boom", "message": "boom"}}, True),
        ({"error": {"code": -32603}}, True),
        # not classifiable as a response at all (LOG-FORMATS 1.7): no request is named
        ({"result": {}, "error": {"code": 1, "message": "x"}}, False),
        ({}, False),
    ],
)
def test_a_malformed_response_names_its_request(response: dict[str, Any], names: bool) -> None:
    """1.2: a response is never answered; a malformed error keeps the id it names."""
    raw = {"jsonrpc": "2.0", "id": 4, **response}
    with pytest.raises(RemoteProtocolError) as info:
        Decoder().decode(json.dumps(raw).encode())
    assert info.value.request_id == (4 if names else None) and info.value.raw == raw


def test_a_whole_number_float_is_an_integer() -> None:
    """JSON Schema's ``integer`` holds ``1000.0``: accepted where the schema says integer."""
    usage = {"sessionUpdate": "usage_update", "used": 1000.0, "size": 2e5}
    exited = {
        "sessionUpdate": "terminal_update",
        "terminalId": "t",
        "exitStatus": {"exitCode": 0.0},
    }
    diagnostics: list[Diagnostic] = []
    for update, want in ((usage, (1000, 200000)), (exited, 0)):
        line = json.dumps(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "s", "update": update},
            }
        )
        got = Decoder().decode(line.encode(), diagnostics=diagnostics).params.update
        if isinstance(want, tuple):
            assert (got.used, got.size) == want and type(got.used) is int
        else:
            assert got.exit_status.exit_code == 0
    assert diagnostics == []
    half = {"sessionUpdate": "usage_update", "used": 1000.5, "size": 1}
    with pytest.raises(RemoteProtocolError, match="float"):
        Decoder().decode(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {"sessionId": "s", "update": half},
                }
            ).encode()
        )


def test_an_id_with_a_fraction_is_invalid_and_a_success_never_has_a_null_id() -> None:
    """1.2 / LOG-FORMATS 1.7: ids are strings or integers without a fraction or exponent
    part (``3.0`` is not one, as a replay reads it); ``id: null`` only on an error."""
    for raw in (
        b'{"jsonrpc":"2.0","id":3.0,"method":"_x/y","params":{}}',
        b'{"jsonrpc":"2.0","id":3.0,"result":{}}',
        b'{"jsonrpc":"2.0","id":3e0,"error":{"code":1,"message":"m"}}',
    ):
        with pytest.raises(RemoteProtocolError, match="id") as info:
            Decoder().decode(raw)
        assert info.value.request_id is None
    assert (
        Decoder().decode(b'{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}').id is None
    )
    with pytest.raises(RemoteProtocolError, match="id"):
        Decoder().decode(b'{"jsonrpc":"2.0","id":null,"result":{}}')


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"session/list"}',
        b'{"jsonrpc":"2.0","id":1,"method":"session/list","params":null}',
        b'{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}',
        b'{"jsonrpc":"2.0","id":2,"method":"auth/logout"}',
    ],
)
def test_params_omitted_null_or_empty_are_written_back_as_received(line: bytes) -> None:
    # Omitted, null and a value are three things, for a request's params too (all of
    # session/list's fields are optional, so each form is valid).
    assert encode(Decoder().decode(line)) == line


def test_params_omitted_where_a_field_is_required_is_still_invalid() -> None:
    with pytest.raises(RemoteProtocolError) as info:
        Decoder().decode(b'{"jsonrpc":"2.0","id":1,"method":"session/new"}')
    assert info.value.code == -32602 and "cwd" in info.value.message


@pytest.mark.parametrize(
    ("kind", "value", "ok"),
    [
        ("boolean", True, True),
        ("boolean", "yes", False),
        ("id", "fast", True),
        ("id", 5, False),
        ("_custom", {"any": 1}, True),
    ],
)
def test_set_config_option_value_matches_its_known_type(kind: str, value: Any, ok: bool) -> None:
    # schema: `type: "boolean"` carries a boolean, `type: "id"` a value id (string)
    params = {"sessionId": "s", "configId": "c", "type": kind, "value": value}
    line = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "session/set_config_option", "params": params}
    )
    if ok:
        assert encode(Decoder().decode(line.encode())) == line.replace(" ", "").encode()
    else:
        with pytest.raises(RemoteProtocolError) as info:
            Decoder().decode(line.encode())
        assert info.value.code == -32602 and "value" in info.value.message


def test_what_the_decoder_accepts_however_deep_encodes_back() -> None:
    # JSON nested ~900 deep in a raw field of a message with an unknown field (the walk that
    # writes unknown fields back in place recursed past Python's limit: RecursionError).
    deep = b"[" * 900 + b"]" * 900
    line = (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        b'{"sessionUpdate":"tool_call_update","toolCallId":"c","futureField":1,"rawInput":'
        + deep
        + b"}}}"
    )
    message = Decoder().decode(line)
    assert msgspec.json.decode(encode(message)) == msgspec.json.decode(line)
    assert to_builtins(message)["params"]["update"]["futureField"] == 1


def test_every_json_decoder_of_the_package_is_built_in_the_codec() -> None:
    # Issue 20: one owner of every decoder; other modules import _codec's functions.
    from pathlib import Path

    import acp_client

    package = Path(acp_client.__file__).parent
    builders = ("msgspec.json.Decoder(", "msgspec.json.decode(", "json.JSONDecoder(")
    found = [
        f"{path.relative_to(package)}: {builder}"
        for path in sorted(package.rglob("*.py"))
        if path.name != "_codec.py" or path.parent != package
        for builder in builders
        if builder in path.read_text(encoding="utf-8")
    ]
    assert found == []
