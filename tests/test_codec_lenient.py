"""Lenient decoding (ACP-V2-CLIENT-STATE.md sections 13.1-13.6).

One case per annotated property kind: ``D`` on plain fields (absent), on patch fields (omitted,
never ``null``), on arrays (``[]``); ``S`` (invalid items dropped); ``D+S``; ``N`` (``null`` is
``[]``). Each names the JSON path in a diagnostic. Strict fields reject; a malformed known
variant is an error (or a dropped item), never an unknown variant; unknown variants and unknown
fields are kept and re-encoded exactly.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import msgspec
import pytest

from acp_client import Decoder, Diagnostic, RemoteProtocolError, encode
from acp_client import schema as s
from acp_client.schema import UNSET

DECODER = Decoder()
U = "$.params.update"


def notification(update: Any, **params: Any) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s", "update": update, **params},
        }
    )


def request(method: str, params: Any, rid: int = 1) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})


def decode(line: str) -> tuple[Any, list[Diagnostic]]:
    diagnostics: list[Diagnostic] = []
    message = DECODER.decode(line, diagnostics=diagnostics)
    return message, diagnostics


def decode_update(update: Any, **params: Any) -> tuple[Any, list[Diagnostic]]:
    message, diagnostics = decode(notification(update, **params))
    assert isinstance(message, s.Notification)
    return message.params.update, diagnostics


def decode_params(method: str, params: Any) -> tuple[Any, list[Diagnostic]]:
    message, diagnostics = decode(request(method, params))
    assert isinstance(message, s.Request)
    return message.params, diagnostics


def decode_result(method: str, result: Any) -> tuple[Any, list[Diagnostic]]:
    diagnostics: list[Diagnostic] = []
    return DECODER.decode_result(method, result, diagnostics=diagnostics), diagnostics


def at(obj: Any, *steps: str | int) -> Any:
    for step in steps:
        obj = obj[step] if isinstance(step, int) else getattr(obj, step)
    return obj


def names(path: str, field: str) -> bool:
    """``path`` is ``field`` or a value inside it."""
    return path == field or path.startswith((field + ".", field + "["))


def assert_one_diagnostic(diagnostics: list[Diagnostic], code: str, field: str) -> None:
    assert len(diagnostics) == 1, diagnostics
    (diag,) = diagnostics
    assert diag.code == code
    assert diag.path is not None and names(diag.path, field), (diag.path, field)
    assert field.rsplit(".", 1)[-1].split("[")[0] in diag.message or diag.path in diag.message


def assert_reencodes_exactly(line: str | bytes, message: Any) -> None:
    assert msgspec.json.decode(encode(message)) == msgspec.json.decode(line)


def text(t: str = "x") -> dict[str, Any]:
    return {"type": "text", "text": t}


def chunk(content: Any, kind: str = "agent_message_chunk") -> dict[str, Any]:
    return {"sessionUpdate": kind, "messageId": "m", "content": content}


def tool(**fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": "t", **fields}


def terminal(**fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "terminal_update", "terminalId": "t", **fields}


def link(**fields: Any) -> dict[str, Any]:
    return {"type": "resource_link", "name": "n", "uri": "file:///a", **fields}


def diff(*changes: Any, **fields: Any) -> dict[str, Any]:
    return {"type": "diff", "changes": list(changes), **fields}


def tool_chunk(content: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t", "content": content}


def select(**fields: Any) -> dict[str, Any]:
    base = {"type": "select", "configId": "c", "name": "n", "currentValue": "a"}
    return {**base, "options": [{"value": "a", "name": "A"}], **fields}


def config(*options: Any) -> dict[str, Any]:
    return {"sessionUpdate": "config_option_update", "configOptions": list(options)}


PERMISSION = {
    "sessionId": "s",
    "title": "Run?",
    "options": [{"optionId": "o", "name": "Once", "kind": "allow_once"}],
}

# ------------------------------------------------------------------ D on plain fields

PLAIN_D = [
    # (update, steps to the value, JSON path of the field)
    (chunk(text(), "user_message_chunk") | {"_meta": 5}, ("meta",), f"{U}._meta"),
    (chunk(text() | {"annotations": 5}), ("content", "annotations"), f"{U}.content.annotations"),
    (chunk(text() | {"_meta": []}), ("content", "meta"), f"{U}.content._meta"),
    (
        chunk({"type": "image", "data": "", "mimeType": "image/png", "uri": 5}),
        ("content", "uri"),
        f"{U}.content.uri",
    ),
    (
        chunk({"type": "audio", "data": "", "mimeType": "audio/wav", "annotations": "x"}),
        ("content", "annotations"),
        f"{U}.content.annotations",
    ),
    (chunk(link(title=1)), ("content", "title"), f"{U}.content.title"),
    (chunk(link(description=[])), ("content", "description"), f"{U}.content.description"),
    (chunk(link(mimeType={})), ("content", "mime_type"), f"{U}.content.mimeType"),
    (chunk(link(size=-1)), ("content", "size"), f"{U}.content.size"),
    (chunk(link(size=1.5)), ("content", "size"), f"{U}.content.size"),
    (chunk(link(size=2**64)), ("content", "size"), f"{U}.content.size"),  # over uint64
    (chunk(link(size="\ud800")), ("content", "size"), f"{U}.content.size"),
    (chunk(link(size=1.8446744073709552e19)), ("content", "size"), f"{U}.content.size"),
    (chunk(link(size="7")), ("content", "size"), f"{U}.content.size"),
    (
        chunk({"type": "resource", "resource": {"uri": "u", "blob": "", "mimeType": 5}}),
        ("content", "resource", "mime_type"),
        f"{U}.content.resource.mimeType",
    ),
    (
        chunk(text() | {"annotations": {"lastModified": 5}}),
        ("content", "annotations", "last_modified"),
        f"{U}.content.annotations.lastModified",
    ),
    (
        chunk(text() | {"annotations": {"priority": "high"}}),
        ("content", "annotations", "priority"),
        f"{U}.content.annotations.priority",
    ),
    (
        chunk(text() | {"annotations": {"_meta": 1}}),
        ("content", "annotations", "meta"),
        f"{U}.content.annotations._meta",
    ),
    (
        chunk(link(icons=[{"src": "data:,", "mimeType": 1}])),
        ("content", "icons", 0, "mime_type"),
        f"{U}.content.icons[0].mimeType",
    ),
    (
        chunk(link(icons=[{"src": "data:,", "theme": 1}])),
        ("content", "icons", 0, "theme"),
        f"{U}.content.icons[0].theme",
    ),
    (
        tool(locations=[{"path": "/a", "line": 0}]),
        ("locations", 0, "line"),
        f"{U}.locations[0].line",
    ),
    (
        tool(locations=[{"path": "/a", "line": "3"}]),
        ("locations", 0, "line"),
        f"{U}.locations[0].line",
    ),
    (
        tool(locations=[{"path": "/a", "_meta": 3}]),
        ("locations", 0, "meta"),
        f"{U}.locations[0]._meta",
    ),
    (
        tool_chunk({"type": "content", "content": text(), "_meta": 1}),
        ("content", "meta"),
        f"{U}.content._meta",
    ),
    (
        tool_chunk({"type": "terminal", "terminalId": "x", "_meta": 1}),
        ("content", "meta"),
        f"{U}.content._meta",
    ),
    (tool_chunk(diff(patch={"format": "git_patch"})), ("content", "patch"), f"{U}.content.patch"),
    (tool_chunk(diff(patch=5)), ("content", "patch"), f"{U}.content.patch"),
    (tool_chunk(diff(_meta=5)), ("content", "meta"), f"{U}.content._meta"),
    (
        tool_chunk(diff(patch={"format": "git_patch", "text": "", "_meta": 1})),
        ("content", "patch", "meta"),
        f"{U}.content.patch._meta",
    ),
    (
        tool_chunk(diff({"operation": "add", "path": "/a", "fileType": 5})),
        ("content", "changes", 0, "file_type"),
        f"{U}.content.changes[0].fileType",
    ),
    (
        tool_chunk(diff({"operation": "move", "oldPath": "/a", "path": "/b", "mimeType": 5})),
        ("content", "changes", 0, "mime_type"),
        f"{U}.content.changes[0].mimeType",
    ),
    (
        tool_chunk(diff({"operation": "delete", "path": "/a", "_meta": 5})),
        ("content", "changes", 0, "meta"),
        f"{U}.content.changes[0]._meta",
    ),
    (tool(capabilities={"cancel": 5}), ("capabilities", "cancel"), f"{U}.capabilities.cancel"),
    (
        tool(capabilities={"cancel": {"_meta": 5}}),
        ("capabilities", "cancel", "meta"),
        f"{U}.capabilities.cancel._meta",
    ),
    (
        terminal(exitStatus={"exitCode": "1"}),
        ("exit_status", "exit_code"),
        f"{U}.exitStatus.exitCode",
    ),
    (
        terminal(exitStatus={"exitCode": 2**63}),
        ("exit_status", "exit_code"),
        f"{U}.exitStatus.exitCode",
    ),
    (terminal(exitStatus={"signal": 9}), ("exit_status", "signal"), f"{U}.exitStatus.signal"),
    (terminal(size={"cols": 1, "rows": 1, "_meta": 1}), ("size", "meta"), f"{U}.size._meta"),
    (terminal(output={"data": "", "_meta": 1}), ("output", "meta"), f"{U}.output._meta"),
    (terminal(capabilities={"cancel": []}), ("capabilities", "cancel"), f"{U}.capabilities.cancel"),
    (
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "", "_meta": 1},
        ("meta",),
        f"{U}._meta",
    ),
    (
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": 7},
        ("stop_reason",),
        f"{U}.stopReason",
    ),
    (
        {
            "sessionUpdate": "state_update",
            "state": "idle",
            "stopReason": "error",
            "error": {"code": 1},
        },
        ("error",),
        f"{U}.error",
    ),
    ({"sessionUpdate": "state_update", "state": "running", "_meta": "x"}, ("meta",), f"{U}._meta"),
    (
        {
            "sessionUpdate": "state_update",
            "state": "requires_action",
            "background": [{"type": "terminal", "terminalId": "x", "_meta": 1}],
        },
        ("background", 0, "meta"),
        f"{U}.background[0]._meta",
    ),
    (
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "p", "entries": []},
            "_meta": 1,
        },
        ("meta",),
        f"{U}._meta",
    ),
    (
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "p", "entries": [], "_meta": 1},
        },
        ("plan", "meta"),
        f"{U}.plan._meta",
    ),
    (
        {
            "sessionUpdate": "plan_update",
            "plan": {
                "type": "items",
                "planId": "p",
                "entries": [{"content": "c", "priority": "low", "status": "pending", "_meta": 1}],
            },
        },
        ("plan", "entries", 0, "meta"),
        f"{U}.plan.entries[0]._meta",
    ),
    (
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [
                {"type": "command", "name": "n", "description": "d", "input": {"type": "text"}}
            ],
        },
        ("available_commands", 0, "input"),
        f"{U}.availableCommands[0].input",
    ),
    (
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [{"type": "command", "name": "n", "description": "d", "input": 5}],
        },
        ("available_commands", 0, "input"),
        f"{U}.availableCommands[0].input",
    ),
    (
        {"sessionUpdate": "available_commands_update", "availableCommands": [], "_meta": 1},
        ("meta",),
        f"{U}._meta",
    ),
    (
        config(select(description=5)),
        ("config_options", 0, "description"),
        f"{U}.configOptions[0].description",
    ),
    (
        config(select(category=5)),
        ("config_options", 0, "category"),
        f"{U}.configOptions[0].category",
    ),
    (
        config({"type": "boolean", "configId": "b", "name": "B", "currentValue": True, "_meta": 1}),
        ("config_options", 0, "meta"),
        f"{U}.configOptions[0]._meta",
    ),
    (
        {
            "sessionUpdate": "usage_update",
            "used": 1,
            "size": 2,
            "cost": {"amount": "1", "currency": "USD"},
        },
        ("cost",),
        f"{U}.cost",
    ),
    (
        {"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": {"amount": 1}},
        ("cost",),
        f"{U}.cost",
    ),
    (
        {
            "sessionUpdate": "usage_update",
            "used": 1,
            "size": 2,
            "cost": {"amount": 1, "currency": "USD", "_meta": 1},
        },
        ("cost", "meta"),
        f"{U}.cost._meta",
    ),
    (
        {"sessionUpdate": "notice", "severity": "info", "title": "t", "description": 5},
        ("description",),
        f"{U}.description",
    ),
    (
        {"sessionUpdate": "notice", "severity": "info", "title": "t", "_meta": 5},
        ("meta",),
        f"{U}._meta",
    ),
    (
        {
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": "c",
            "content": text(),
            "_meta": [],
        },
        ("meta",),
        f"{U}._meta",
    ),
]


@pytest.mark.parametrize(("update", "steps", "field"), PLAIN_D)
def test_default_on_error_plain_field_is_absent(
    update: dict[str, Any], steps: tuple[str | int, ...], field: str
) -> None:
    decoded, diagnostics = decode_update(update)
    assert at(decoded, *steps) is UNSET
    assert_one_diagnostic(diagnostics, "lenient-default", field)


def test_default_on_error_notification_meta() -> None:
    message, diagnostics = decode(notification(chunk(text()), _meta="trace"))
    assert message.params.meta is UNSET
    assert message.params.update == s.AgentMessageChunk(
        message_id="m", content=s.TextContent(text="x")
    )
    assert_one_diagnostic(diagnostics, "lenient-default", "$.params._meta")


@pytest.mark.parametrize(
    ("method", "params", "steps", "field"),
    [
        (
            "session/request_permission",
            PERMISSION | {"description": 5},
            ("description",),
            "$.params.description",
        ),
        ("session/request_permission", PERMISSION | {"_meta": 5}, ("meta",), "$.params._meta"),
        (
            "session/request_permission",
            PERMISSION
            | {"subject": {"type": "command", "command": "ls", "cwd": "/", "toolCallId": 1}},
            ("subject", "tool_call_id"),
            "$.params.subject.toolCallId",
        ),
        (
            "session/request_permission",
            PERMISSION
            | {"subject": {"type": "command", "command": "ls", "cwd": "/", "terminalId": 1}},
            ("subject", "terminal_id"),
            "$.params.subject.terminalId",
        ),
        (
            "session/request_permission",
            PERMISSION
            | {"subject": {"type": "tool_call", "toolCall": {"toolCallId": "t"}, "_meta": 1}},
            ("subject", "meta"),
            "$.params.subject._meta",
        ),
        (
            "session/prompt",
            {"sessionId": "s", "prompt": [text()], "_meta": 5},
            ("meta",),
            "$.params._meta",
        ),
        ("session/new", {"cwd": "/", "_meta": 5}, ("meta",), "$.params._meta"),
        (
            "initialize",
            {"protocolVersion": 2, "info": {"name": "c", "version": "1", "title": 5}},
            ("info", "title"),
            "$.params.info.title",
        ),
        (
            "initialize",
            {"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": 5},
            ("capabilities",),
            "$.params.capabilities",
        ),
        (
            "session/resume",
            {"sessionId": "s", "cwd": "/", "replayFrom": {"type": "start", "_meta": 1}},
            ("replay_from", "meta"),
            "$.params.replayFrom._meta",
        ),
    ],
)
def test_default_on_error_in_requests(
    method: str, params: dict[str, Any], steps: tuple[str | int, ...], field: str
) -> None:
    decoded, diagnostics = decode_params(method, params)
    assert at(decoded, *steps) is UNSET
    assert_one_diagnostic(diagnostics, "lenient-default", field)


@pytest.mark.parametrize(
    ("method", "result", "steps", "field"),
    [
        ("session/prompt", {"messageId": "m", "_meta": 5}, ("meta",), "$.result._meta"),
        (
            "session/request_permission",
            {"outcome": {"outcome": "selected", "optionId": "o", "_meta": 5}},
            ("outcome", "meta"),
            "$.result.outcome._meta",
        ),
        (
            "session/request_permission",
            {"outcome": {"outcome": "cancelled"}, "_meta": 5},
            ("meta",),
            "$.result._meta",
        ),
        (
            "initialize",
            {
                "protocolVersion": 2,
                "info": {"name": "a", "version": "1"},
                "capabilities": {"session": {"prompt": {"image": 5}}},
            },
            ("capabilities", "session", "prompt", "image"),
            "$.result.capabilities.session.prompt.image",
        ),
        (
            "session/list",
            {"sessions": [{"sessionId": "s", "cwd": "/", "title": 5}]},
            ("sessions", 0, "title"),
            "$.result.sessions[0].title",
        ),
        (
            "session/list",
            {"sessions": [{"sessionId": "s", "cwd": "/", "updatedAt": 5}]},
            ("sessions", 0, "updated_at"),
            "$.result.sessions[0].updatedAt",
        ),
    ],
)
def test_default_on_error_in_results(
    method: str, result: dict[str, Any], steps: tuple[str | int, ...], field: str
) -> None:
    decoded, diagnostics = decode_result(method, result)
    assert at(decoded, *steps) is UNSET
    assert_one_diagnostic(diagnostics, "lenient-default", field)


@pytest.mark.parametrize("data", [5, "x", [1], {"a": None}, None, True])
def test_untyped_fields_cannot_fail(data: Any) -> None:
    decoded, diagnostics = decode_update(tool(rawInput=data, rawOutput=data))
    assert decoded.raw_input == data and decoded.raw_output == data
    message, diagnostics2 = decode(
        json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "m", "data": data}})
    )
    assert message.error.data == data
    assert diagnostics == diagnostics2 == []


def test_annotation_priority_out_of_range_is_absent() -> None:
    decoded, diagnostics = decode_update(chunk(text() | {"annotations": {"priority": 1.5}}))
    assert decoded.content.annotations.priority is UNSET
    assert_one_diagnostic(diagnostics, "lenient-default", f"{U}.content.annotations.priority")


# ------------------------------------------------------------------ D on patch fields

PATCH_D = [
    (tool(name=5), "name", f"{U}.name"),
    (tool(title=["t"]), "title", f"{U}.title"),
    (tool(kind=1), "kind", f"{U}.kind"),
    (tool(status={}), "status", f"{U}.status"),
    (tool(content={"type": "content"}), "content", f"{U}.content"),
    (tool(locations="here"), "locations", f"{U}.locations"),
    (tool(capabilities=5), "capabilities", f"{U}.capabilities"),
    (tool(capabilities={"_meta": 5}), None, f"{U}.capabilities._meta"),
    (tool(_meta=[]), "meta", f"{U}._meta"),
    (terminal(command=5), "command", f"{U}.command"),
    (terminal(cwd=False), "cwd", f"{U}.cwd"),
    (terminal(output={"data": 5}), "output", f"{U}.output"),
    (terminal(output="aGk="), "output", f"{U}.output"),
    (terminal(exitStatus=0), "exit_status", f"{U}.exitStatus"),
    (terminal(size={"cols": 0, "rows": 24}), "size", f"{U}.size"),
    (terminal(size={"cols": 80}), "size", f"{U}.size"),
    (terminal(size={"cols": 80, "rows": 65536}), "size", f"{U}.size"),
    (terminal(capabilities=5), "capabilities", f"{U}.capabilities"),
    (terminal(_meta="x"), "meta", f"{U}._meta"),
    ({"sessionUpdate": "session_info_update", "title": 5}, "title", f"{U}.title"),
    ({"sessionUpdate": "session_info_update", "updatedAt": 5}, "updated_at", f"{U}.updatedAt"),
    ({"sessionUpdate": "session_info_update", "_meta": 5}, "meta", f"{U}._meta"),
    (
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "c",
            "status": "completed",
            "summary": "s",
        },
        "summary",
        f"{U}.summary",
    ),
    (
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "c",
            "status": "completed",
            "error": 5,
        },
        "error",
        f"{U}.error",
    ),
    (
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "c",
            "status": "completed",
            "_meta": 5,
        },
        "meta",
        f"{U}._meta",
    ),
    *[
        ({"sessionUpdate": kind, "messageId": "m", field: value}, attr, f"{U}.{field}")
        for kind in ("user_message", "agent_message", "agent_thought")
        for field, attr, value in (
            ("content", "content", "x"),
            ("content", "content", text()),
            ("_meta", "meta", 5),
        )
    ],
]


@pytest.mark.parametrize(("update", "attr", "field"), PATCH_D)
def test_default_on_error_patch_field_is_omitted_not_null(
    update: dict[str, Any], attr: str | None, field: str
) -> None:
    decoded, diagnostics = decode_update(update)
    if attr is not None:
        assert at(decoded, attr) is UNSET  # "no change", never None ("clear")
    else:
        assert decoded.capabilities == s.ToolCallCapabilities()
    assert_one_diagnostic(diagnostics, "lenient-default", field)


def test_patch_fields_still_distinguish_null() -> None:
    decoded, diagnostics = decode_update(tool(title=None, content=None, capabilities=None))
    assert decoded.title is None and decoded.content is None and decoded.capabilities is None
    assert diagnostics == []


def test_background_malformed_is_not_reported() -> None:
    for background in ("x", [{"type": "tool_call"}], [{"type": "terminal", "terminalId": 5}], [1]):
        decoded, diagnostics = decode_update(
            {"sessionUpdate": "state_update", "state": "running", "background": background}
        )
        assert decoded.background is UNSET  # D without S: one bad item drops the whole list
        assert_one_diagnostic(diagnostics, "lenient-default", f"{U}.background")
    decoded, diagnostics = decode_update(
        {"sessionUpdate": "state_update", "state": "idle", "background": None}
    )
    assert decoded.background is None and diagnostics == []


# ------------------------------------------------------------------ D on arrays -> []


def test_default_on_error_required_array_is_empty() -> None:
    decoded, diagnostics = decode_result("session/list", {"sessions": {"a": 1}})
    assert decoded.sessions == []
    assert decoded.next_cursor is UNSET
    assert_one_diagnostic(diagnostics, "lenient-default", "$.result.sessions")


@pytest.mark.parametrize(
    ("method", "result", "attr", "field"),
    [
        (
            "session/new",
            {"sessionId": "s", "configOptions": "x"},
            "config_options",
            "$.result.configOptions",
        ),
        (
            "session/new",
            {"sessionId": "s", "availableCommands": 5},
            "available_commands",
            "$.result.availableCommands",
        ),
        ("session/resume", {"configOptions": {}}, "config_options", "$.result.configOptions"),
        (
            "session/resume",
            {"availableCommands": 7},
            "available_commands",
            "$.result.availableCommands",
        ),
        (
            "initialize",
            {"protocolVersion": 2, "info": {"name": "a", "version": "1"}, "authMethods": "x"},
            "auth_methods",
            "$.result.authMethods",
        ),
    ],
)
def test_default_on_error_setup_arrays_are_empty(
    method: str, result: dict[str, Any], attr: str, field: str
) -> None:
    decoded, diagnostics = decode_result(method, result)
    assert at(decoded, attr) == []
    assert_one_diagnostic(diagnostics, "lenient-default", field)


def test_setup_arrays_omitted_stay_omitted() -> None:
    decoded, diagnostics = decode_result("session/new", {"sessionId": "s"})
    assert decoded.config_options is UNSET and decoded.available_commands is UNSET
    assert diagnostics == []


def test_setup_arrays_null_means_none_advertised() -> None:
    # section 12.1: omitted, null and [] all mean "none advertised" (null is not an error)
    for method, base in (("session/new", {"sessionId": "s"}), ("session/resume", {})):
        result = {**base, "configOptions": None, "availableCommands": None}
        decoded, diagnostics = decode_result(method, result)
        assert decoded.config_options == [] and decoded.available_commands == []
        assert diagnostics == []


def test_default_on_error_select_group_options() -> None:
    group = {"groupId": "g", "name": "G", "options": "bad"}
    decoded, diagnostics = decode_update(config(select(options=[group])))
    assert len(decoded.config_options) == 1
    option = decoded.config_options[0]
    groups = option.options
    assert [g["options"] if isinstance(g, dict) else g.options for g in groups] == [[]]
    assert_one_diagnostic(
        diagnostics, "lenient-default", f"{U}.configOptions[0].options[0].options"
    )


@pytest.mark.parametrize(
    ("options", "kept", "field"),
    [
        (
            [{"groupId": "g", "name": "G", "options": [{"value": 1}, {"value": "a", "name": "A"}]}],
            [{"groupId": "g", "name": "G", "options": [{"value": "a", "name": "A"}]}],
            f"{U}.configOptions[0].options[0].options[0]",
        ),
        (
            [{"value": "a", "name": "A", "description": 5}],
            [{"value": "a", "name": "A"}],
            f"{U}.configOptions[0].options[0].description",
        ),
    ],
)
def test_select_option_items_are_lenient(options: Any, kept: Any, field: str) -> None:
    decoded, diagnostics = decode_update(config(select(options=options)))
    (option,) = decoded.config_options
    assert msgspec.json.decode(encode(option))["options"] == kept
    assert len(diagnostics) == 1 and diagnostics[0].path is not None
    assert names(diagnostics[0].path, field)


def test_a_select_group_has_no_description_field_so_it_is_kept_raw() -> None:
    group = {
        "groupId": "g",
        "name": "G",
        "description": 5,
        "options": [{"value": "v", "name": "V"}],
    }
    decoded, diagnostics = decode_update(config(select(options=[group])))
    (option,) = decoded.config_options
    assert msgspec.json.decode(encode(option))["options"] == [group]
    assert diagnostics == []


def test_a_select_group_without_its_required_options_is_an_invalid_item() -> None:
    # SessionConfigSelectGroup requires `options` (D relaxes a wrong value, not absence).
    group = {"groupId": "g", "name": "G"}
    decoded, diagnostics = decode_update(config(select(options=[group])))
    assert decoded.config_options == []
    assert [d.code for d in diagnostics] == ["skipped-invalid-item"]
    assert names(diagnostics[0].path, f"{U}.configOptions[0]")


# ------------------------------------------------------------ S: invalid items dropped

SKIP = [
    # (update, steps to the list, expected kept items (compared to the decoded list),
    #  JSON paths of the dropped items)
    (
        {
            "sessionUpdate": "user_message",
            "messageId": "m",
            "content": [text("a"), {"type": "text"}, text("b"), {"text": "untyped"}, 5],
        },
        ("content",),
        [s.TextContent(text="a"), s.TextContent(text="b")],
        [f"{U}.content[1]", f"{U}.content[3]", f"{U}.content[4]"],
    ),
    (
        tool(
            content=[
                {"type": "terminal"},
                {"type": "content", "content": text()},
                {"type": "content", "content": {"type": "image"}},
            ]
        ),
        ("content",),
        [s.Content(content=s.TextContent(text="x"))],
        [f"{U}.content[0]", f"{U}.content[2]"],
    ),
    (
        tool(locations=[{"line": 3}, {"path": "/a"}, {"path": 5}]),
        ("locations",),
        [s.ToolCallLocation(path="/a")],
        [f"{U}.locations[0]", f"{U}.locations[2]"],
    ),
    (
        tool_chunk(
            diff(
                {"operation": "add"},
                {"operation": "copy", "path": "/b"},
                {"operation": "modify", "path": "/m"},
                {"path": "/x"},
            )
        ),
        ("content", "changes"),
        [s.DiffModify(path="/m")],
        [f"{U}.content.changes[0]", f"{U}.content.changes[1]", f"{U}.content.changes[3]"],
    ),
    (
        {
            "sessionUpdate": "plan_update",
            "plan": {
                "type": "items",
                "planId": "p",
                "entries": [
                    {"content": "a", "priority": "high"},
                    {"content": "b", "priority": "_p", "status": "_s"},
                    {"content": 1, "priority": "low", "status": "pending"},
                ],
            },
        },
        ("plan", "entries"),
        [s.PlanEntry(content="b", priority="_p", status="_s")],
        [f"{U}.plan.entries[0]", f"{U}.plan.entries[2]"],
    ),
    (
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [
                {"name": "untyped", "description": "d"},
                {"type": "command", "name": "ok", "description": "d"},
                {"type": "command", "name": "nodesc"},
                {"type": "_future", "description": "no name"},
            ],
        },
        ("available_commands",),
        [s.Command(name="ok", description="d")],
        [f"{U}.availableCommands[0]", f"{U}.availableCommands[2]", f"{U}.availableCommands[3]"],
    ),
    (
        config(
            {"type": "boolean", "configId": "b", "name": "B", "currentValue": "yes"},
            {"type": "boolean", "configId": "b", "name": "B", "currentValue": False},
            select(options=[]),
            {"configId": "untyped", "name": "n"},
        ),
        ("config_options",),
        [s.SessionConfigBoolean(config_id="b", name="B", current_value=False)],
        [f"{U}.configOptions[0]", f"{U}.configOptions[2]", f"{U}.configOptions[3]"],
    ),
    (
        chunk(text() | {"annotations": {"audience": ["user", 5, "_bot", None]}}),
        ("content", "annotations", "audience"),
        ["user", "_bot"],
        [f"{U}.content.annotations.audience[1]", f"{U}.content.annotations.audience[3]"],
    ),
    (
        chunk(link(icons=[{"src": 5}, {"src": "https://i/x.png"}, {}])),
        ("content", "icons"),
        [s.Icon(src="https://i/x.png")],
        [f"{U}.content.icons[0]", f"{U}.content.icons[2]"],
    ),
    (
        chunk(link(icons=[{"src": "data:,", "sizes": ["16x16", 32, "any"]}])),
        ("content", "icons", 0, "sizes"),
        ["16x16", "any"],
        [f"{U}.content.icons[0].sizes[1]"],
    ),
    (
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "c",
            "status": "completed",
            "summary": [{"type": "audio"}, text("kept")],
        },
        ("summary",),
        [s.TextContent(text="kept")],
        [f"{U}.summary[0]"],
    ),
]


@pytest.mark.parametrize(("update", "steps", "kept", "dropped"), SKIP)
def test_skip_invalid_items(
    update: dict[str, Any], steps: tuple[str | int, ...], kept: list[Any], dropped: list[str]
) -> None:
    decoded, diagnostics = decode_update(update)
    assert at(decoded, *steps) == kept
    assert [d.code for d in diagnostics] == ["skipped-invalid-item"] * len(dropped)
    for diag, field in zip(diagnostics, dropped, strict=True):
        assert diag.path is not None and names(diag.path, field), (diag.path, field)


@pytest.mark.parametrize(
    ("method", "result", "attr", "kept", "dropped"),
    [
        (
            "session/list",
            {"sessions": [{"sessionId": "s"}, {"sessionId": "a", "cwd": "/"}]},
            "sessions",
            [s.SessionInfo(session_id="a", cwd="/")],
            ["$.result.sessions[0]"],
        ),
        (
            "session/set_config_option",
            {"configOptions": [{"type": "boolean"}, {"type": "_x", "configId": "c", "name": "n"}]},
            "config_options",
            [{"type": "_x", "configId": "c", "name": "n"}],
            ["$.result.configOptions[0]"],
        ),
        (
            "session/new",
            {"sessionId": "s", "availableCommands": [{"type": "command"}]},
            "available_commands",
            [],
            ["$.result.availableCommands[0]"],
        ),
        (
            "initialize",
            {
                "protocolVersion": 2,
                "info": {"name": "a", "version": "1"},
                "authMethods": [
                    {"type": "agent", "name": "n"},
                    {"type": "agent", "methodId": "m", "name": "n"},
                ],
            },
            "auth_methods",
            [s.AuthMethodAgent(method_id="m", name="n")],
            ["$.result.authMethods[0]"],
        ),
    ],
)
def test_skip_invalid_items_in_results(
    method: str, result: dict[str, Any], attr: str, kept: list[Any], dropped: list[str]
) -> None:
    decoded, diagnostics = decode_result(method, result)
    assert at(decoded, attr) == kept
    assert [d.code for d in diagnostics] == ["skipped-invalid-item"] * len(dropped)
    for diag, field in zip(diagnostics, dropped, strict=True):
        assert diag.path is not None and names(diag.path, field)


@pytest.mark.parametrize(
    ("update", "field"),
    [
        (
            {"sessionUpdate": "available_commands_update", "availableCommands": {}},
            f"{U}.availableCommands",
        ),
        ({"sessionUpdate": "available_commands_update"}, f"{U}.availableCommands"),
        (config(), None),
        ({"sessionUpdate": "config_option_update", "configOptions": None}, f"{U}.configOptions"),
        (
            {
                "sessionUpdate": "plan_update",
                "plan": {"type": "items", "planId": "p", "entries": "x"},
            },
            f"{U}.plan.entries",
        ),
        (tool_chunk({"type": "diff", "changes": None}), f"{U}.content.changes"),
    ],
)
def test_skip_only_arrays_must_be_arrays(update: dict[str, Any], field: str | None) -> None:
    if field is None:  # an empty list is fine
        decoded, diagnostics = decode_update(update)
        assert decoded.config_options == [] and diagnostics == []
        return
    with pytest.raises(RemoteProtocolError) as info:
        decode_update(update)
    assert (info.value.code, info.value.path) == (-32602, field)


def test_skip_in_a_diff_inside_a_skip_array() -> None:
    # a diff whose `changes` is not an array is itself an invalid item of `content` (S)
    decoded, diagnostics = decode_update(tool(content=[{"type": "diff", "changes": "x"}, diff()]))
    assert decoded.content == [s.Diff(changes=[])]
    assert_one_diagnostic(diagnostics, "skipped-invalid-item", f"{U}.content[0]")


# ---------------------------------------------------------------------------- D + S


@pytest.mark.parametrize(
    ("value", "expected", "code", "field"),
    [
        ("text", UNSET, "lenient-default", f"{U}.content"),
        ({"0": text()}, UNSET, "lenient-default", f"{U}.content"),
        (
            [text("a"), {"type": "image"}],
            [s.TextContent(text="a")],
            "skipped-invalid-item",
            f"{U}.content[1]",
        ),
    ],
)
def test_default_then_skip(value: Any, expected: Any, code: str, field: str) -> None:
    for kind in ("user_message", "agent_message", "agent_thought"):
        decoded, diagnostics = decode_update(
            {"sessionUpdate": kind, "messageId": "m", "content": value}
        )
        if expected is UNSET:
            assert decoded.content is UNSET
        else:
            assert decoded.content == expected
        assert_one_diagnostic(diagnostics, code, field)


# -------------------------------------------------------------------------------- N

NULLABLE_N = [
    (
        "session/new",
        {"cwd": "/", "additionalDirectories": None},
        ("additional_directories",),
        "$.params.additionalDirectories",
    ),
    ("session/new", {"cwd": "/", "mcpServers": None}, ("mcp_servers",), "$.params.mcpServers"),
    (
        "session/resume",
        {"sessionId": "s", "cwd": "/", "additionalDirectories": None},
        ("additional_directories",),
        "$.params.additionalDirectories",
    ),
    (
        "session/resume",
        {"sessionId": "s", "cwd": "/", "mcpServers": None},
        ("mcp_servers",),
        "$.params.mcpServers",
    ),
    (
        "session/new",
        {
            "cwd": "/",
            "mcpServers": [
                {"type": "stdio", "name": "m", "command": "/bin/m", "args": None, "env": None}
            ],
        },
        ("mcp_servers", 0, "args"),
        "$.params.mcpServers[0].args",
    ),
    (
        "session/new",
        {
            "cwd": "/",
            "mcpServers": [{"type": "stdio", "name": "m", "command": "/bin/m", "env": None}],
        },
        ("mcp_servers", 0, "env"),
        "$.params.mcpServers[0].env",
    ),
    (
        "session/new",
        {
            "cwd": "/",
            "mcpServers": [{"type": "http", "name": "m", "url": "https://x", "headers": None}],
        },
        ("mcp_servers", 0, "headers"),
        "$.params.mcpServers[0].headers",
    ),
]


@pytest.mark.parametrize(("method", "params", "steps", "field"), NULLABLE_N)
def test_default_on_null_is_empty(
    method: str, params: dict[str, Any], steps: tuple[str | int, ...], field: str
) -> None:
    decoded, diagnostics = decode_params(method, params)
    assert at(decoded, *steps) == []
    assert all(d.path is not None and names(d.path, field) for d in diagnostics)
    # omitted stays omitted
    omitted = {k: v for k, v in params.items() if v is not None}
    if steps[0] != "mcp_servers" or len(steps) == 1:
        decoded, _ = decode_params(method, omitted)
        assert at(decoded, steps[0]) is UNSET


@pytest.mark.parametrize(
    ("result", "steps", "field"),
    [
        (
            {"sessions": [{"sessionId": "s", "cwd": "/", "additionalDirectories": None}]},
            ("sessions", 0, "additional_directories"),
            "$.result.sessions[0].additionalDirectories",
        ),
    ],
)
def test_default_on_null_in_results(
    result: dict[str, Any], steps: tuple[str | int, ...], field: str
) -> None:
    decoded, diagnostics = decode_result("session/list", result)
    assert at(decoded, *steps) == []
    assert all(d.path is not None and names(d.path, field) for d in diagnostics)


def test_default_on_null_auth_terminal() -> None:
    method = {"type": "terminal", "methodId": "m", "name": "n", "args": None, "env": None}
    decoded, _ = decode_result(
        "initialize",
        {"protocolVersion": 2, "info": {"name": "a", "version": "1"}, "authMethods": [method]},
    )
    (auth,) = decoded.auth_methods
    assert isinstance(auth, s.AuthMethodTerminal)
    assert auth.args == [] and auth.env == []


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"cwd": "/", "additionalDirectories": "x"}, "$.params.additionalDirectories"),
        ({"cwd": "/", "additionalDirectories": [5]}, "$.params.additionalDirectories[0]"),
        ({"cwd": "/", "mcpServers": {}}, "$.params.mcpServers"),
        (
            {
                "cwd": "/",
                "mcpServers": [{"type": "stdio", "name": "m", "command": "/m", "args": 5}],
            },
            "$.params.mcpServers[0].args",
        ),
    ],
)
def test_default_on_null_other_malformed_values_are_strict(
    params: dict[str, Any], field: str
) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decode_params("session/new", params)
    assert (info.value.code, info.value.path) == (-32602, field)


# ------------------------------------------------------------------------ strict fields

STRICT = [
    # (update, JSON path of the failure): the enclosing update is rejected
    (chunk(None), f"{U}.content"),
    (chunk(text(5)), f"{U}.content.text"),  # type: ignore[arg-type]
    (chunk({"type": "image", "mimeType": "image/png"}), f"{U}.content.data"),
    (chunk({"type": "resource", "resource": {"text": "t"}}), f"{U}.content.resource.uri"),
    (chunk({"type": "resource", "resource": {"uri": "u"}}), f"{U}.content.resource"),
    (chunk(link(name=None)), f"{U}.content.name"),
    (tool_chunk({"type": "content"}), f"{U}.content.content"),
    (tool_chunk({"type": "terminal", "terminalId": None}), f"{U}.content.terminalId"),
    (tool_chunk(None), f"{U}.content"),
    ({"sessionUpdate": "terminal_output_chunk", "terminalId": "t"}, f"{U}.data"),
    ({"sessionUpdate": "usage_update", "used": 1.5, "size": 2}, f"{U}.used"),
    ({"sessionUpdate": "usage_update", "used": "1", "size": 2}, f"{U}.used"),
    ({"sessionUpdate": "usage_update", "used": 2**64, "size": 2**64}, f"{U}.used"),
    ({"sessionUpdate": "usage_update", "used": 1, "size": 2**70}, f"{U}.size"),
    ({"sessionUpdate": "usage_update", "used": "\ud800", "size": 2}, f"{U}.used"),  # lone surrogate
    ({"sessionUpdate": "notice", "severity": 1, "title": "t"}, f"{U}.severity"),
    ({"sessionUpdate": "compaction_update", "compactionId": "c", "status": None}, f"{U}.status"),
    (
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": 1, "content": text()},
        f"{U}.compactionId",
    ),
    (
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "entries": []}},
        f"{U}.plan.planId",
    ),
    ({"sessionUpdate": "state_update", "state": 3}, f"{U}.state"),
]


def test_the_top_of_the_uint64_range_is_kept() -> None:
    top = 2**64 - 1
    usage, diagnostics = decode_update({"sessionUpdate": "usage_update", "used": top, "size": top})
    assert (usage.used, usage.size, diagnostics) == (top, top, [])
    block, diagnostics = decode_update(chunk(link(size=top)))
    assert (block.content.size, diagnostics) == (top, [])


@pytest.mark.parametrize(("update", "field"), STRICT)
def test_strict_fields_reject_the_update(update: dict[str, Any], field: str) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decode_update(update)
    assert (info.value.code, info.value.path) == (-32602, field)


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("session/request_permission", PERMISSION | {"title": None}, "$.params.title"),
        (
            "session/request_permission",
            PERMISSION | {"options": [{"optionId": "o", "name": "n"}]},
            "$.params.options[0].kind",
        ),
        ("session/request_permission", PERMISSION | {"subject": 5}, "$.params.subject"),
        (
            "session/request_permission",
            PERMISSION | {"subject": {"type": "command"}},
            "$.params.subject.command",
        ),
        (
            "session/request_permission",
            PERMISSION | {"subject": {"toolCall": {}}},
            "$.params.subject.type",
        ),
        ("session/resume", {"sessionId": "s", "cwd": "/", "replayFrom": 5}, "$.params.replayFrom"),
        ("session/prompt", {"sessionId": "s", "prompt": text()}, "$.params.prompt"),
        ("session/cancel_x", {}, None),
    ],
)
def test_strict_request_fields(method: str, params: dict[str, Any], field: str | None) -> None:
    if field is None:  # unknown method: raw params, nothing is strict
        decoded, _ = decode_params(method, params)
        assert decoded == params
        return
    with pytest.raises(RemoteProtocolError) as info:
        decode_params(method, params)
    assert (info.value.code, info.value.path) == (-32602, field)
    assert info.value.request_id == 1


def test_strict_result_fields() -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decode_result("session/list", {"sessions": [], "nextCursor": 5})
    assert (info.value.code, info.value.path) == (-32602, "$.result.nextCursor")
    with pytest.raises(RemoteProtocolError) as info:
        decode_result("session/request_permission", {"outcome": {"outcome": "selected"}})
    assert (info.value.code, info.value.path) == (-32602, "$.result.outcome.optionId")
    with pytest.raises(RemoteProtocolError) as info:
        decode_result("session/request_permission", {})
    assert (info.value.code, info.value.path) == (-32602, "$.result.outcome")


# --------------------------------------------------- malformed known variants stay errors

MALFORMED_KNOWN_IN_ARRAYS = [
    # a malformed known variant inside an S array is dropped, never kept as an unknown dict
    (
        {"sessionUpdate": "agent_message", "messageId": "m", "content": [{"type": "text"}]},
        ("content",),
    ),
    (tool(content=[{"type": "diff"}, {"type": "terminal"}, {"type": "content"}]), ("content",)),
    (tool_chunk(diff({"operation": "move", "path": "/b"})), ("content", "changes")),
    (
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [{"type": "command", "name": "x"}],
        },
        ("available_commands",),
    ),
    (config({"type": "select", "configId": "c", "name": "n"}), ("config_options",)),
    (
        config({"type": "boolean", "configId": "c", "name": "n", "currentValue": 1}),
        ("config_options",),
    ),
]


@pytest.mark.parametrize(("update", "steps"), MALFORMED_KNOWN_IN_ARRAYS)
def test_malformed_known_item_is_dropped_not_demoted(
    update: dict[str, Any], steps: tuple[str | int, ...]
) -> None:
    decoded, diagnostics = decode_update(update)
    assert at(decoded, *steps) == []
    assert diagnostics and all(d.code == "skipped-invalid-item" for d in diagnostics)


@pytest.mark.parametrize(
    "update",
    [
        chunk({"type": "audio", "data": "x"}),
        tool_chunk({"type": "terminal"}),
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p"}},
        {"sessionUpdate": "tool_call_update"},
        {"sessionUpdate": "usage_update"},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": None},
    ],
)
def test_malformed_known_variant_is_an_error(update: dict[str, Any]) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decode_update(update)
    assert info.value.code == -32602


def test_malformed_known_background_item_is_not_demoted() -> None:
    decoded, _ = decode_update(
        {
            "sessionUpdate": "state_update",
            "state": "idle",
            "background": [{"type": "tool_call", "terminalId": "x"}],
        }
    )
    assert decoded.background is UNSET


def test_malformed_known_permission_subject_and_outcome_are_errors() -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decode_params("session/request_permission", PERMISSION | {"subject": {"type": "tool_call"}})
    assert info.value.path == "$.params.subject.toolCall"
    with pytest.raises(RemoteProtocolError):
        decode_result(
            "session/request_permission", {"outcome": {"outcome": "selected", "optionId": None}}
        )


# ---------------------------------------------------------- unknown variants kept raw

UNKNOWN_BLOCK = {"type": "_acme/chart", "series": [1, 2], "_meta": {"v": 1}}
FUTURE_BLOCK = {"type": "video", "url": "https://v"}

UNKNOWN_VARIANTS = [
    # (update, steps to the raw value, raw value)
    (chunk(UNKNOWN_BLOCK), ("content",), UNKNOWN_BLOCK),
    (chunk(FUTURE_BLOCK, "user_message_chunk"), ("content",), FUTURE_BLOCK),
    (
        {
            "sessionUpdate": "agent_message",
            "messageId": "m",
            "content": [text("a"), FUTURE_BLOCK, text("b")],
        },
        ("content", 1),
        FUTURE_BLOCK,
    ),
    (
        {
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": "c",
            "content": UNKNOWN_BLOCK,
        },
        ("content",),
        UNKNOWN_BLOCK,
    ),
    (
        tool_chunk({"type": "content", "content": FUTURE_BLOCK}),
        ("content", "content"),
        FUTURE_BLOCK,
    ),
    (
        tool_chunk({"type": "_acme/table", "rows": []}),
        ("content",),
        {"type": "_acme/table", "rows": []},
    ),
    (
        tool(content=[{"type": "image_diff", "a": 1}, diff()]),
        ("content", 0),
        {"type": "image_diff", "a": 1},
    ),
    (
        tool_chunk(
            diff(
                {"operation": "add", "path": "/a"},
                {"operation": "_chmod", "path": "/a", "mode": 493},
            )
        ),
        ("content", "changes", 1),
        {"operation": "_chmod", "path": "/a", "mode": 493},
    ),
    (
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "_acme_board", "planId": "p", "content": "# plan"},
        },
        ("plan",),
        {"type": "_acme_board", "planId": "p", "content": "# plan"},
    ),
    (
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [{"type": "_macro", "name": "m", "description": "d", "steps": 3}],
        },
        ("available_commands", 0),
        {"type": "_macro", "name": "m", "description": "d", "steps": 3},
    ),
    (
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [
                {"type": "command", "name": "m", "description": "d", "input": {"type": "_choice"}}
            ],
        },
        ("available_commands", 0, "input"),
        {"type": "_choice"},
    ),
    (
        config({"type": "_slider", "configId": "c", "name": "n", "min": 0}),
        ("config_options", 0),
        {"type": "_slider", "configId": "c", "name": "n", "min": 0},
    ),
    (
        {
            "sessionUpdate": "state_update",
            "state": "running",
            "background": [
                {"type": "_cron", "sessionId": "child"},
                {"type": "terminal", "terminalId": "t"},
            ],
        },
        ("background", 0),
        {"type": "_cron", "sessionId": "child"},
    ),
    (  # unstable in the v2 Preview: raw unless a session opts in (P0)
        {"sessionUpdate": "prompt_suggestions_update", "suggestions": []},
        (),
        {"sessionUpdate": "prompt_suggestions_update", "suggestions": []},
    ),
    (
        {"sessionUpdate": "_acme/progress", "pct": 0.5, "nested": {"a": [None]}},
        (),
        {"sessionUpdate": "_acme/progress", "pct": 0.5, "nested": {"a": [None]}},
    ),
    (
        {"sessionUpdate": "tool_call", "toolCallId": "v1"},
        (),
        {"sessionUpdate": "tool_call", "toolCallId": "v1"},
    ),
]


@pytest.mark.parametrize(("update", "steps", "raw"), UNKNOWN_VARIANTS)
def test_unknown_variants_are_kept_raw_in_place(
    update: dict[str, Any], steps: tuple[str | int, ...], raw: dict[str, Any]
) -> None:
    line = notification(update)
    message, diagnostics = decode(line)
    value = at(message.params.update, *steps)
    # a plain dict, or for a content block or tool-call item the dict subclass that also
    # answers `.type` (issue 22: every block exposes its type)
    assert type(value) in (dict, s.UnknownContentBlock)
    if type(value) is s.UnknownContentBlock:
        assert value.type == raw["type"]
    assert value == raw
    assert diagnostics == []
    assert_reencodes_exactly(line, message)


@pytest.mark.parametrize(
    ("update", "state", "extra"),
    [
        (
            {"sessionUpdate": "state_update", "state": "unknown", "background": [], "x": 1},
            "unknown",
            {"background": [], "x": 1},
        ),
        (
            {"sessionUpdate": "state_update", "state": "_paused", "why": "x", "background": "bad"},
            "_paused",
            {"why": "x", "background": "bad"},
        ),
        ({"sessionUpdate": "state_update", "state": "_plain"}, "_plain", UNSET),
    ],
)
def test_unknown_state_is_kept_raw(update: dict[str, Any], state: str, extra: Any) -> None:
    line = notification(update)
    message, diagnostics = decode(line)
    decoded = message.params.update
    assert isinstance(decoded, s.StateUpdate)
    assert decoded.state == state
    assert decoded.extra == extra
    assert decoded.background is UNSET and decoded.stop_reason is UNSET
    assert diagnostics == []
    assert_reencodes_exactly(line, message)


@pytest.mark.parametrize(
    "fields", [{"stopReason": "end_turn"}, {"background": []}, {"_meta": {"a": 1}}]
)
def test_unknown_state_fields_are_not_decoded_on_the_fast_path(fields: dict[str, Any]) -> None:
    decoded, _ = decode_update({"sessionUpdate": "state_update", "state": "_x", **fields})
    assert decoded.stop_reason is UNSET and decoded.background is UNSET
    assert decoded.meta is UNSET
    assert decoded.extra == fields


@pytest.mark.parametrize(
    ("update", "check"),
    [
        ({"sessionUpdate": "plan_update", "plan": {"planId": "p", "entries": []}}, "error"),
        (
            {
                "sessionUpdate": "available_commands_update",
                "availableCommands": [{"name": "x", "description": "d"}],
            },
            "dropped",
        ),
        (
            {
                "sessionUpdate": "available_commands_update",
                "availableCommands": [
                    {"type": "command", "name": "x", "description": "d", "input": {"hint": "h"}}
                ],
            },
            "input",
        ),
    ],
)
def test_missing_tag_of_single_variant_union(update: dict[str, Any], check: str) -> None:
    if check == "error":
        with pytest.raises(RemoteProtocolError) as info:
            decode_update(update)
        assert info.value.path == f"{U}.plan.type"
        return
    decoded, diagnostics = decode_update(update)
    if check == "dropped":
        assert decoded.available_commands == []
        assert_one_diagnostic(diagnostics, "skipped-invalid-item", f"{U}.availableCommands[0]")
    else:
        assert decoded.available_commands[0].input is UNSET
        assert_one_diagnostic(diagnostics, "lenient-default", f"{U}.availableCommands[0].input")


def test_custom_stop_reason_keeps_its_fields() -> None:
    line = notification(
        {
            "sessionUpdate": "state_update",
            "state": "idle",
            "stopReason": "_rate_limited",
            "retryAfter": 30,
        }
    )
    message, diagnostics = decode(line)
    update = message.params.update
    assert update.stop_reason == "_rate_limited"
    assert update.extra == {"retryAfter": 30}
    assert diagnostics == []
    assert_reencodes_exactly(line, message)


@pytest.mark.parametrize(
    ("subject", "kind"),
    [
        ({"type": "_browser", "url": "https://x"}, dict),
        ({"type": "mcp_tool", "server": "s"}, dict),
        ({"type": "command", "command": "ls", "cwd": "/"}, s.CommandPermissionSubject),
        (
            {"type": "tool_call", "toolCall": {"toolCallId": "t", "title": "T"}},
            s.ToolCallPermissionSubject,
        ),
    ],
)
def test_permission_subjects(subject: dict[str, Any], kind: type) -> None:
    line = request("session/request_permission", PERMISSION | {"subject": subject})
    message, diagnostics = decode(line)
    assert type(message.params.subject) is kind
    if kind is dict:
        assert message.params.subject == subject
    assert diagnostics == []
    assert_reencodes_exactly(line, message)


@pytest.mark.parametrize("outcome", [{"outcome": "_deferred", "until": 3}, {"outcome": "expired"}])
def test_unknown_permission_outcome_is_raw(outcome: dict[str, Any]) -> None:
    decoded, diagnostics = decode_result("session/request_permission", {"outcome": outcome})
    assert type(decoded.outcome) is dict and decoded.outcome == outcome
    assert diagnostics == []
    assert msgspec.json.decode(encode(decoded)) == {"outcome": outcome}


def test_unknown_replay_from_and_mcp_server_are_raw() -> None:
    params = {
        "sessionId": "s",
        "cwd": "/",
        "replayFrom": {"type": "after", "messageId": "m"},
        "mcpServers": [{"type": "sse", "name": "x", "url": "https://x"}],
    }
    decoded, diagnostics = decode_params("session/resume", params)
    assert decoded.replay_from == params["replayFrom"]
    assert decoded.mcp_servers == params["mcpServers"]
    assert diagnostics == []


# ---------------------------------------------------------- unknown fields round-trip

UNKNOWN_FIELDS = [
    notification(chunk(text() | {"future": {"a": [1, 2.5, None, True]}}), futureParam="p"),
    notification(
        {
            "sessionUpdate": "agent_message",
            "messageId": "m",
            "pinned": True,
            "content": [
                text() | {"lang": "en"},
                {"type": "image", "data": "", "mimeType": "image/png", "alt": "x"},
            ],
        }
    ),
    notification(
        tool(
            title="t",
            progress=0.5,
            content=[
                {"type": "content", "content": link(extra=1), "x": 2},
                diff(
                    {"operation": "add", "path": "/a", "hunks": 3},
                    patch={"format": "git_patch", "text": "", "stats": {}},
                ),
                {"type": "terminal", "terminalId": "term", "cols": 80},
            ],
            locations=[{"path": "/a", "column": 4}],
            capabilities={"cancel": {"soft": True}, "pause": {}},
        )
    ),
    notification(
        terminal(
            exitStatus={"exitCode": 1, "core": True},
            size={"cols": 80, "rows": 24, "px": 9},
            output={"data": "", "encoding": "b64"},
            pid=42,
        )
    ),
    notification(
        {
            "sessionUpdate": "state_update",
            "state": "idle",
            "stopReason": "error",
            "error": {"code": 1, "message": "m", "retryable": True},
            "background": [{"type": "tool_call", "toolCallId": "t", "since": 1}],
            "usage": {"totalTokens": 5},
        }
    ),
    notification(
        {
            "sessionUpdate": "plan_update",
            "plan": {
                "type": "items",
                "planId": "p",
                "title": "Plan",
                "entries": [
                    {"content": "c", "priority": "high", "status": "pending", "owner": "me"}
                ],
            },
            "v": 2,
        }
    ),
    notification(
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [
                {
                    "type": "command",
                    "name": "n",
                    "description": "d",
                    "aliases": ["x"],
                    "input": {"type": "text", "hint": "h", "multiline": True},
                }
            ],
        }
    ),
    notification(
        config(
            select(
                options=[
                    {
                        "groupId": "g",
                        "name": "G",
                        "icon": "x",
                        "options": [{"value": "a", "name": "A", "badge": "new"}],
                    }
                ],
                locked=True,
            ),
            {"type": "boolean", "configId": "b", "name": "B", "currentValue": True, "scope": "s"},
        )
    ),
    notification({"sessionUpdate": "session_info_update", "title": "T", "archived": False}),
    notification(
        {
            "sessionUpdate": "usage_update",
            "used": 1,
            "size": 2,
            "window": "x",
            "cost": {"amount": 1.25, "currency": "credits", "estimate": True},
        }
    ),
    notification({"sessionUpdate": "notice", "severity": "_debug", "title": "t", "link": "x"}),
    notification(
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "c",
            "status": "_queued",
            "savedTokens": 10,
            "summary": [text() | {"x": 1}],
        }
    ),
    notification(
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "t",
            "seq": 1,
            "content": {"type": "content", "content": text()},
        }
    ),
    notification(
        {
            "sessionUpdate": "terminal_output_chunk",
            "terminalId": "t",
            "data": "",
            "stream": "stderr",
        }
    ),
    request(
        "session/request_permission",
        PERMISSION
        | {
            "options": [{"optionId": "o", "name": "n", "kind": "allow_once"}],
            "subject": {"type": "tool_call", "toolCall": {"toolCallId": "t", "eta": 1}, "why": "x"},
            "urgency": "high",
        },
    ),
    request(
        "session/request_permission",
        PERMISSION | {"subject": {"type": "command", "command": "ls", "cwd": "/", "shell": "sh"}},
    ),
    request(
        "session/new",
        {
            "cwd": "/",
            "mcpServers": [
                {
                    "type": "stdio",
                    "name": "m",
                    "command": "/m",
                    "env": [{"name": "A", "value": "1", "secret": True}],
                    "x": 1,
                }
            ],
            "profile": "p",
        },
    ),
    request("session/prompt", {"sessionId": "s", "prompt": [text()], "mode": "fast"}),
    json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "m", "extra": [1]}}),
    json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"messageId": "m", "queued": False}}),
]


@pytest.mark.parametrize("line", UNKNOWN_FIELDS)
def test_unknown_fields_survive_decode_encode(line: str) -> None:
    message, diagnostics = decode(line)
    assert diagnostics == []
    assert_reencodes_exactly(line, message)


@pytest.mark.parametrize(
    ("method", "result"),
    [
        ("session/prompt", {"messageId": "m", "queued": False}),
        (
            "session/request_permission",
            {"outcome": {"outcome": "selected", "optionId": "o", "remember": True}, "x": 1},
        ),
        (
            "session/new",
            {
                "sessionId": "s",
                "models": [],
                "availableCommands": [{"type": "command", "name": "n", "description": "d", "x": 1}],
            },
        ),
        (
            "session/list",
            {"sessions": [{"sessionId": "s", "cwd": "/", "pinned": True}], "total": 1},
        ),
        (
            "initialize",
            {
                "protocolVersion": 2,
                "info": {"name": "a", "version": "1", "build": 7},
                "capabilities": {"session": {"fork": {}}, "x": 1},
                "authMethods": [{"type": "agent", "methodId": "m", "name": "n", "x": 1}],
            },
        ),
    ],
)
def test_unknown_fields_of_results_survive(method: str, result: dict[str, Any]) -> None:
    decoded, diagnostics = decode_result(method, result)
    assert diagnostics == []
    assert msgspec.json.decode(encode(decoded)) == result


@pytest.mark.parametrize(
    "line",
    [
        request("session/prompt", {"sessionId": "s", "prompt": [UNKNOWN_BLOCK]}),
        request("session/prompt", {"sessionId": "s", "prompt": [text() | {"lang": "en"}]}),
        request(
            "session/request_permission",
            PERMISSION
            | {"options": [{"optionId": "o", "name": "n", "kind": "allow_once", "hotkey": "y"}]},
        ),
    ],
)
def test_unknown_content_in_constrained_lists(line: str) -> None:
    message, diagnostics = decode(line)
    assert diagnostics == []
    assert_reencodes_exactly(line, message)


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        (
            "session/prompt",
            {"sessionId": "s", "prompt": [text() | {"annotations": 5}]},
            "$.params.prompt[0].annotations",
        ),
        (
            "session/request_permission",
            PERMISSION | {"options": [{"optionId": "o", "name": "n", "kind": "x", "_meta": 5}]},
            "$.params.options[0]._meta",
        ),
    ],
)
def test_default_on_error_inside_constrained_lists(
    method: str, params: dict[str, Any], field: str
) -> None:
    decoded, diagnostics = decode_params(method, params)
    assert_one_diagnostic(diagnostics, "lenient-default", field)
    assert decoded is not None


@pytest.mark.parametrize(
    "update",
    [
        {"state": "running", "stopReason": 5},
        {"state": "requires_action", "error": "boom"},
        {"state": "idle", "stopReason": "end_turn", "error": "boom"},
        {"state": "idle", "stopReason": "_mine", "error": {"code": "x"}},
    ],
)
def test_r13_a_field_of_another_state_variant_is_kept_raw(update: dict[str, Any]) -> None:
    # The schema has stopReason only on idle and error only on the error stop reason:
    # elsewhere they are unknown fields (R13), kept as received, not dropped as invalid.
    line = notification({"sessionUpdate": "state_update", **update})
    message, diagnostics = decode(line)
    assert diagnostics == []
    assert_reencodes_exactly(line, message)


@pytest.mark.parametrize("value", [{"foo": 1}, {}, 5, None])
@pytest.mark.parametrize("where", ["update", "block", "envelope"])
def test_unknown_field_named_like_the_extra_holder(where: str, value: Any) -> None:
    # The typed decoder must not take the key for its own holder (it would spread the
    # object's members in place of the key when encoding).
    block: dict[str, Any] = {"type": "text", "text": "hi"}
    update: dict[str, Any] = {"sessionUpdate": "agent_message_chunk", "messageId": "m"}
    if where == "block":
        block[s.EXTRA_KEY] = value
    elif where == "update":
        update[s.EXTRA_KEY] = value
    obj: dict[str, Any] = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": {**update, "content": block}},
    }
    if where == "envelope":
        obj[s.EXTRA_KEY] = value
    line = json.dumps(obj)
    message, _ = decode(line)
    assert_reencodes_exactly(line, message)


@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "agent_message", "messageId": "m", "_meta": {s.EXTRA_KEY: {"a": 1}}},
        tool(rawInput={s.EXTRA_KEY: {"a": 1}}, other=1),
        {"sessionUpdate": "_custom", s.EXTRA_KEY: {"a": 1}},
    ],
)
def test_raw_values_with_an_extra_key_survive(update: dict[str, Any]) -> None:
    line = notification(update)
    message, _ = decode(line)
    assert_reencodes_exactly(line, message)


def test_unknown_envelope_members_survive() -> None:
    line = json.dumps(
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}, "traceId": "t"}
    )
    message, _ = decode(line)
    assert_reencodes_exactly(line, message)


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "_x/y", "params": {}, "result": {"a": 1}},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}, "error": 1},
        {"jsonrpc": "2.0", "id": 1, "result": {"a": 1}, "params": {"x": 1}},
        {"jsonrpc": "2.0", "id": 1, "method": None, "error": {"code": 1, "message": "m"}},
    ],
)
def test_envelope_members_of_another_message_kind_are_kept(message: dict[str, Any]) -> None:
    # A `result` on a request, `params` or `method: null` on a response: not members of its
    # kind, so unknown fields, kept and written back (nothing is discarded silently, 1.8).
    line = json.dumps(message)
    decoded, diagnostics = decode(line)
    assert diagnostics == []
    assert_reencodes_exactly(line, decoded)


@pytest.mark.parametrize(
    "resource",
    [
        {"uri": "file:///a", "text": "hello", "blob": None},
        {"uri": "file:///a", "blob": "YQ==", "text": 5},
    ],
)
def test_a_resource_keeps_a_member_its_schema_variant_lacks(resource: dict[str, Any]) -> None:
    # EmbeddedResourceResource is anyOf [TextResourceContents, BlobResourceContents], extra
    # members allowed: the other variant's member, when it does not fit, is an unknown field.
    line = notification(chunk({"type": "resource", "resource": resource}))
    message, diagnostics = decode(line)
    assert diagnostics == []
    contents = message.params.update.content.resource
    assert (contents.text, contents.blob) == (
        (resource["text"], UNSET) if "hello" in resource.values() else (UNSET, resource["blob"])
    )
    assert_reencodes_exactly(line, message)


def test_a_flat_select_option_with_an_unknown_group_id_member_stays_an_option() -> None:
    option = {"value": "a", "name": "A", "groupId": "g"}
    select = {
        "type": "select",
        "configId": "c",
        "name": "n",
        "currentValue": "a",
        "options": [option],
    }
    update, diagnostics = decode_update(
        {"sessionUpdate": "config_option_update", "configOptions": [select]}
    )
    assert diagnostics == []
    assert update.config_options[0].options == [option]


def test_a_request_id_inside_params_takes_no_fraction_either() -> None:
    # 1.2: as the envelope's `id` (a response with "id": 2.0 names no request).
    line = '{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":2.0}}'
    with pytest.raises(RemoteProtocolError) as info:
        DECODER.decode(line)
    assert info.value.path == "$.params.requestId"
    message, _ = decode('{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":2}}')
    assert message.params.request_id == 2


def test_a_str_holding_a_lone_surrogate_is_read_not_raised() -> None:
    # What Python writes when it re-serialises a message the lenient reader read.
    line = json.dumps({"jsonrpc": "2.0", "method": "_x", "params": "\ud800"}, ensure_ascii=False)
    assert [m.params for m in DECODER.decode_all(line)] == ["\ud800"]  # type: ignore[union-attr]
    assert DECODER.decode(line).params == "\ud800"  # type: ignore[union-attr]


@pytest.mark.parametrize("plan", [{"type": "markdown"}, {"type": "_x", "planId": 5}])
# markdown is a known type since the v2 Preview (P46): without ``planId`` it is malformed
def test_unknown_plan_type_still_needs_a_plan_id(plan: dict[str, Any]) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decode_update({"sessionUpdate": "plan_update", "plan": plan})
    assert (info.value.code, info.value.path) == (-32602, f"{U}.plan.planId")


@pytest.mark.parametrize("state", [[], {"a": 1}])
def test_unhashable_state_is_invalid_params(state: Any) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decode_update({"sessionUpdate": "state_update", "state": state})
    assert (info.value.code, info.value.path) == (-32602, f"{U}.state")


def test_to_builtins_spreads_extra_in_a_fresh_process() -> None:
    code = (
        "from acp_client import to_builtins; from acp_client import schema as s\n"
        "print(sorted(to_builtins(s.TextContent(text='x', extra={'a': 1}))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['a', 'text', 'type']"
