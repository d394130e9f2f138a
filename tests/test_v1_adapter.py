"""Tests of the v1 -> v2 adapter (V1-TO-V2.md)."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_client import Connection, Replayer, encode, replay_log
from acp_client._v1.gitpatch import git_patch
from acp_client.v1 import AdapterOrigin, V1Adapter, detect_v1

Msg = dict[str, Any]
Out = list[tuple[str, Msg]]

S1 = "s1"
TEXT = {"type": "text", "text": "hi"}


def up(update: Msg, sid: str = S1) -> Msg:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": sid, "update": update},
    }


def v2up(update: Msg, sid: str = S1) -> tuple[str, Msg]:
    return ("incoming", up(update, sid))


def state(name: str, sid: str = S1, **extra: Any) -> tuple[str, Msg]:
    return v2up({"sessionUpdate": "state_update", "state": name, **extra}, sid)


def req(id_: Any, method: str, params: Any) -> Msg:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def res(id_: Any, result: Any) -> Msg:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def err(id_: Any, code: int = -32603, message: str = "boom") -> Msg:
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}


def prompt(id_: Any = 7, sid: str = S1, text: str = "Fix the test") -> Msg:
    return req(
        id_, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
    )


def chunk(role: str, text: str = "x", message_id: str | None = None, sid: str = S1) -> Msg:
    update: Msg = {"sessionUpdate": f"{role}_chunk", "content": {"type": "text", "text": text}}
    if message_id is not None:
        update["messageId"] = message_id
    return up(update, sid)


def run(stream: list[tuple[str, Msg]], adapter: V1Adapter | None = None) -> Out:
    adapter = adapter or V1Adapter()
    out: Out = []
    for direction, message in stream:
        out.extend(adapter.feed(direction, message))
    out.extend(adapter.finish())
    # An update kept raw comes as a Struct notification (V1-TO-V2 3.2): compared as JSON here.
    return [(d, m if isinstance(m, dict) else json.loads(encode(m))) for d, m in out]


def updates(out: Out) -> list[Msg]:
    return [
        m["params"]["update"]
        for d, m in out
        if d == "incoming" and m.get("method") == "session/update"
    ]


def chunk_ids(out: Out) -> list[str]:
    return [u["messageId"] for u in updates(out) if u["sessionUpdate"].endswith("_chunk")]


def inc(message: Msg) -> tuple[str, Msg]:
    return ("incoming", message)


def outg(message: Msg) -> tuple[str, Msg]:
    return ("outgoing", message)


# --- section 10: the worked example -----------------------------------------------------------


def test_worked_example_exact_output() -> None:
    entries = [{"content": "Read", "priority": "high", "status": "completed"}]
    options = [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]
    answer = res(3, {"outcome": {"outcome": "selected", "optionId": "allow"}})
    stream = [
        outg(prompt(7)),
        inc(chunk("agent_thought", "Looking…")),
        inc(chunk("agent_message", "I'll read")),
        inc(chunk("agent_message", " the file.")),
        inc(
            up(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "c1",
                    "title": "Read main.py",
                    "kind": "read",
                }
            )
        ),
        inc(
            req(
                3,
                "session/request_permission",
                {"sessionId": S1, "toolCall": {"toolCallId": "c1"}, "options": options},
            )
        ),
        outg(answer),
        inc(
            up(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "c1",
                    "status": "completed",
                    "title": None,
                }
            )
        ),
        inc(up({"sessionUpdate": "plan", "entries": entries})),
        inc(chunk("agent_message", "Done.")),
        inc(res(7, {"stopReason": "end_turn"})),
    ]

    def text(t: str) -> Msg:
        return {"type": "text", "text": t}

    expected: Out = [
        outg(prompt(7)),
        v2up(
            {
                "sessionUpdate": "user_message",
                "messageId": "acp-v1:user:1",
                "content": [text("Fix the test")],
            }
        ),
        inc(res(7, {"messageId": "acp-v1:user:1"})),
        state("running"),
        v2up(
            {
                "sessionUpdate": "agent_thought_chunk",
                "content": text("Looking…"),
                "messageId": "acp-v1:thought:2",
            }
        ),
        v2up(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": text("I'll read"),
                "messageId": "acp-v1:agent:3",
            }
        ),
        v2up(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": text(" the file."),
                "messageId": "acp-v1:agent:3",
            }
        ),
        v2up(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c1",
                "title": "Read main.py",
                "name": None,
                "kind": "read",
                "status": "pending",
                "content": [],
                "locations": [],
                "rawInput": None,
                "rawOutput": None,
                "_meta": None,
            }
        ),
        inc(
            req(
                3,
                "session/request_permission",
                {
                    "sessionId": S1,
                    "title": "Read main.py",
                    "subject": {"type": "tool_call", "toolCall": {"toolCallId": "c1"}},
                    "options": options,
                },
            )
        ),
        state("requires_action"),
        outg(answer),
        state("running"),
        v2up({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"}),
        v2up(
            {
                "sessionUpdate": "plan_update",
                "plan": {"type": "items", "planId": "main", "entries": entries},
            }
        ),
        v2up(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": text("Done."),
                "messageId": "acp-v1:agent:4",
            }
        ),
        state("idle", stopReason="end_turn"),
    ]
    adapter = V1Adapter()
    assert run(stream, adapter) == expected
    assert adapter.diagnostics == []


# --- section 3.1: methods and responses ------------------------------------------------------


def test_initialize_translated_to_v2_shape() -> None:
    request = req(
        0,
        "initialize",
        {
            "protocolVersion": 1,
            "clientInfo": {"name": "c", "version": "1"},
            "clientCapabilities": {
                "fs": {"readTextFile": True},
                "terminal": True,
                "auth": {"terminal": True},
            },
        },
    )
    result = {
        "protocolVersion": 1,
        "agentInfo": {"name": "a", "version": "2"},
        "authMethods": [],
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": True},
            "sessionCapabilities": {"delete": {}, "resume": {}},
        },
    }
    out = run([outg(request), inc(res(0, result))])
    assert out[0] == outg(
        req(
            0,
            "initialize",
            {
                "protocolVersion": 1,
                "info": {"name": "c", "version": "1"},
                "capabilities": {"auth": {"terminal": {}}},
            },
        )
    )
    assert out[1] == inc(
        res(
            0,
            {
                "protocolVersion": 1,
                "info": {"name": "a", "version": "2"},
                "authMethods": [],
                "capabilities": {
                    "session": {
                        "prompt": {"image": {}, "embeddedContext": {}},
                        # v2 has no sse transport: kept as an unknown field, so a v1 agent
                        # that offers it can still be sent an sse server (C6)
                        "mcp": {"stdio": {}, "http": {}, "sse": {}},
                        "delete": {},
                    }
                },
            },
        )
    )
    conn = Connection()
    rid, _ = conn.send_initialize()
    conn.receive_message(out[1][1] | {"id": rid}, "incoming")
    sse = {"type": "sse", "name": "old", "url": "https://mcp.example", "headers": []}
    conn.send_new_session("/w", mcp_servers=[sse])  # type: ignore[list-item]


def test_initialize_without_client_or_agent_info_is_still_valid_v2() -> None:
    # v1 makes clientInfo/agentInfo optional, v2 requires `info`: empty names stand in.
    request = req(0, "initialize", {"protocolVersion": 1})
    result = {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}}
    out = run([outg(request), inc(res(0, result))])
    assert out[0][1]["params"]["info"] == {"name": "", "version": ""}
    assert out[1][1]["result"]["info"] == {"name": "", "version": ""}
    conn = Connection(live=False)
    for direction, message in out:
        conn.receive_message(message, direction=direction)
    assert conn.diagnostics == []
    assert conn.protocol_version == 1
    assert conn.agent_capabilities is not None


@pytest.mark.parametrize("version", [1, 2])
def test_the_initialize_result_is_typed_for_v1_and_v2(version: int) -> None:
    # A live connection's ResponseReceived and accessors carry the v2 types either way.
    from acp_client import schema as s
    from acp_client.events import ResponseReceived

    conn = Connection()
    rid, _ = conn.send_initialize()
    info = {"name": "agent", "version": "1"}
    result: dict[str, Any] = (
        {"protocolVersion": 1, "agentInfo": info, "agentCapabilities": {"loadSession": True}}
        if version == 1
        else {"protocolVersion": 2, "info": info, "capabilities": {}}
    )
    events = conn.receive_data(json.dumps(res(rid, result)).encode() + b"\n")
    (answer,) = [e for e in events if isinstance(e, ResponseReceived)]
    assert isinstance(answer.result, s.InitializeResponse)
    assert answer.result.protocol_version == conn.protocol_version == version
    assert conn.agent_info == s.Implementation(name="agent", version="1") == answer.result.info
    assert isinstance(conn.agent_capabilities, s.AgentCapabilities)


def test_v1_auth_methods_take_v2s_shape() -> None:
    # schema-v1 AuthMethod: `id`, and no `type` means `agent`; terminal `env` is a map.
    # schema-v2: `methodId`, `type` required, `env` a list of EnvVariable.
    methods = [
        {"id": "login", "name": "Log in", "description": "d", "_meta": {"k": 1}},
        {"id": "tui", "name": "TUI", "type": "terminal", "args": ["-l"], "env": {"A": "1"}},
    ]
    result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": methods}
    out = run([outg(req(0, "initialize", {"protocolVersion": 1})), inc(res(0, result))])
    assert out[1][1]["result"]["authMethods"] == [
        {
            "methodId": "login",
            "name": "Log in",
            "description": "d",
            "_meta": {"k": 1},
            "type": "agent",
        },
        {
            "methodId": "tui",
            "name": "TUI",
            "type": "terminal",
            "args": ["-l"],
            "env": [{"name": "A", "value": "1"}],
        },
    ]
    conn = Connection(live=False)
    for direction, message in out:
        conn.receive_message(message, direction=direction)
    assert conn.diagnostics == []
    assert [m.method_id for m in conn.auth_methods] == ["login", "tui"]


@pytest.mark.parametrize(
    "stream",
    [
        [outg(req(1, "authenticate", {"methodId": "x"})), inc(res(1, {}))],
        [outg(req(1, "logout", {})), inc(res(1, {}))],
        [
            outg(req(1, "session/list", {})),
            inc(res(1, {"sessions": [{"sessionId": "a", "cwd": "/"}]})),
        ],
        [outg(req(1, "session/delete", {"sessionId": S1})), inc(res(1, {}))],
        [
            inc(req(1, "fs/read_text_file", {"sessionId": S1, "path": "/a"})),
            outg(res(1, {"content": "x"})),
        ],
        [
            inc(req(1, "fs/write_text_file", {"sessionId": S1, "path": "/a", "content": "x"})),
            outg(res(1, None)),
        ],
        [outg({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}})],
        [outg(req(1, "_x/thing", {"a": 1})), inc(res(1, {"b": 2}))],
        [inc({"jsonrpc": "2.0", "method": "_x/note", "params": {}})],
        [outg({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": S1}})],
        [inc(res(99, {"whatever": 1}))],
    ],
)
def test_pass_through_unchanged(stream: list[tuple[str, Msg]]) -> None:
    out = run(stream)
    assert len(out) == len(stream)
    for (d1, m1), (d2, m2) in zip(out, stream, strict=True):
        assert d1 == d2 and m1 is m2


def test_session_new_result_translated_with_mode_option() -> None:
    result = {
        "sessionId": S1,
        "modes": {
            "currentModeId": "ask",
            "availableModes": [
                {"id": "ask", "name": "Ask", "description": "asks first"},
                {"id": "code", "name": "Code"},
            ],
        },
        "configOptions": [
            {
                "id": "model",
                "name": "Model",
                "type": "select",
                "currentValue": "m1",
                "options": [
                    {"group": "g", "name": "G", "options": [{"value": "m1", "name": "M1"}]}
                ],
            }
        ],
    }
    out = run([outg(req(1, "session/new", {"cwd": "/w", "mcpServers": []})), inc(res(1, result))])
    assert out[1] == inc(
        res(
            1,
            {
                "sessionId": S1,
                "configOptions": [
                    {
                        "configId": "model",
                        "name": "Model",
                        "type": "select",
                        "currentValue": "m1",
                        "options": [
                            {
                                "groupId": "g",
                                "name": "G",
                                "options": [{"value": "m1", "name": "M1"}],
                            }
                        ],
                    },
                    {
                        "configId": "mode",
                        "name": "Mode",
                        "category": "mode",
                        "type": "select",
                        "currentValue": "ask",
                        "options": [
                            {"value": "ask", "name": "Ask", "description": "asks first"},
                            {"value": "code", "name": "Code"},
                        ],
                    },
                ],
            },
        )
    )


def test_stdio_mcp_servers_gain_type() -> None:
    servers = [
        {"name": "s", "command": "/s", "args": [], "env": []},
        {"type": "http", "name": "h", "url": "u"},
    ]
    out = run([outg(req(1, "session/new", {"cwd": "/w", "mcpServers": servers}))])
    assert out[0][1]["params"]["mcpServers"] == [{"type": "stdio", **servers[0]}, servers[1]]


def test_session_new_plain_result_keeps_shape() -> None:
    out = run([outg(req(1, "session/new", {"cwd": "/w"})), inc(res(1, {"sessionId": S1}))])
    assert out[1] == inc(res(1, {"sessionId": S1}))


def test_config_option_v2_names_are_kept() -> None:
    option = {"configId": "x", "name": "X", "type": "boolean", "currentValue": True}
    out = run([inc(up({"sessionUpdate": "config_option_update", "configOptions": [option]}))])
    assert updates(out) == [{"sessionUpdate": "config_option_update", "configOptions": [option]}]


def test_set_config_option_result_translated_and_mode_reappended() -> None:
    new = {
        "sessionId": S1,
        "modes": {"currentModeId": "a", "availableModes": [{"id": "a", "name": "A"}]},
    }
    stream = [
        outg(req(1, "session/new", {"cwd": "/w"})),
        inc(res(1, new)),
        outg(req(2, "session/set_config_option", {"sessionId": S1, "configId": "m", "value": "v"})),
        inc(
            res(
                2,
                {
                    "configOptions": [
                        {"id": "m", "name": "M", "type": "boolean", "currentValue": False}
                    ]
                },
            )
        ),
    ]
    out = run(stream)
    assert out[-1] == inc(
        res(
            2,
            {
                "configOptions": [
                    {"configId": "m", "name": "M", "type": "boolean", "currentValue": False},
                    {
                        "configId": "mode",
                        "name": "Mode",
                        "category": "mode",
                        "type": "select",
                        "currentValue": "a",
                        "options": [{"value": "a", "name": "A"}],
                    },
                ]
            },
        )
    )


# --- section 3.2: session/update variants -----------------------------------------------------


@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "usage_update", "used": 1, "size": 2},
        {"sessionUpdate": "notice", "severity": "info", "title": "t"},
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "k", "content": TEXT},
    ],
)
def test_updates_passed_through(update: Msg) -> None:
    message = up(update)
    out = run([inc(message)])
    assert out == [inc(message)] and out[0][1] is message


DRAFTS = [
    {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p", "entries": []}},
    {"sessionUpdate": "plan_removed", "planId": "p"},
    {"sessionUpdate": "subagent_update", "x": 1},
    {"sessionUpdate": "session_message", "x": 1},
    {"sessionUpdate": "session_message_chunk", "x": 1},
]
V2_ONLY = [
    {"sessionUpdate": "agent_message", "messageId": "m9", "content": [TEXT]},
    {"sessionUpdate": "state_update", "state": "running"},
    {"sessionUpdate": "terminal_update", "terminalId": "t1"},
    {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1", "content": TEXT},
    {"sessionUpdate": "_custom", "x": 1},
]


@pytest.mark.parametrize("update", DRAFTS + V2_ONLY)
def test_variants_v1_does_not_have_are_kept_raw_as_unknown_v2_variants(update: Msg) -> None:
    # 3.2: "draft v1 variants ... only with the matching v2 opt-in; else unknown"; "anything
    # else | passed through as an unknown v2 variant | raw kept" (also a name v2 knows).
    conn = Connection()
    for direction, message in V1Adapter().feed("incoming", up(update)):
        conn.receive_message(message, direction)
    snap = conn.snapshot()["sessions"][0]
    assert snap["unknownUpdates"] == [update]
    assert (snap["timeline"], snap["terminals"], snap["plans"]) == ([], [], [])
    assert "state" not in snap


@pytest.mark.parametrize("update", DRAFTS)
def test_draft_variants_pass_on_with_the_draft_surface_enabled(update: Msg) -> None:
    message = up(update)
    adapter = V1Adapter(unstable=True)
    out = adapter.feed("incoming", message)
    assert out == [inc(message)] and out[0][1] is message


def test_chunk_with_id_used_verbatim_and_roles_have_own_id_space() -> None:
    out = run(
        [inc(chunk("agent_thought", message_id="m1")), inc(chunk("agent_message", message_id="m1"))]
    )
    assert [(u["sessionUpdate"], u["messageId"]) for u in updates(out)] == [
        ("agent_thought_chunk", "m1"),
        ("agent_message_chunk", "m1"),
    ]


def test_tool_call_full_and_repeated_replaces_meta() -> None:
    first = {
        "sessionUpdate": "tool_call",
        "toolCallId": "c",
        "title": "T",
        "name": "read_file",
        "kind": "read",
        "status": "in_progress",
        "rawInput": {"p": 1},
        "_meta": {"a": 1, "b": 2},
        "locations": [{"path": "/a", "line": 0}, {"path": "/b", "line": 3}],
    }
    second = {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "T2", "_meta": {"b": 3}}
    third = {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "T3"}
    out = updates(run([inc(up(first)), inc(up(second)), inc(up(third))]))
    assert out[0] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "title": "T",
        "name": "read_file",
        "kind": "read",
        "status": "in_progress",
        "content": [],
        "locations": [{"path": "/a"}, {"path": "/b", "line": 3}],
        "rawInput": {"p": 1},
        "rawOutput": None,
        "_meta": {"a": 1, "b": 2},
    }
    assert out[1]["_meta"] == {"a": None, "b": 3}
    assert out[1]["kind"] == "other" and out[1]["status"] == "pending" and out[1]["name"] is None
    assert out[2]["_meta"] is None


def test_tool_call_update_nulls_removed_empty_lists_kept() -> None:
    update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "title": None,
        "kind": None,
        "status": None,
        "content": [],
        "locations": [],
        "rawOutput": None,
        "_meta": None,
    }
    assert updates(run([inc(up(update))])) == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": [], "locations": []}
    ]


def test_tool_call_update_meta_is_a_patch() -> None:
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "c", "_meta": {"k": 1}}
    assert updates(run([inc(up(update))]))[0]["_meta"] == {"k": 1}


def test_plan_meta_on_content() -> None:
    out = updates(run([inc(up({"sessionUpdate": "plan", "entries": [], "_meta": {"m": 1}}))]))
    assert out == [
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "main", "entries": [], "_meta": {"m": 1}},
        }
    ]


def test_v1_command_names_with_spaces_are_not_held_to_v2s_rule() -> None:
    # v2 forbids whitespace in a command name (A29); v1 does not, and Gemini CLI names its
    # subcommands `memory show`: kept, with no warning on a v1 session.
    commands = [{"name": "memory show", "description": "Show memory."}] * 2
    update = {"sessionUpdate": "available_commands_update", "availableCommands": commands}
    agent_only = b"".join(
        json.dumps(m).encode() + b"\n" for m in (chunk("agent_message"), up(update))
    )
    for log in (_v1_log(up(update)), agent_only):  # a log of the agent's side only too
        snap = replay_log(log).snapshot()
        names = [c["name"] for c in snap["sessions"][0]["availableCommands"]]
        assert names == ["memory show"] * 2
        assert [d["code"] for d in snap["diagnostics"] if d["code"] == "invalid-commands"] == []


def test_commands_gain_types() -> None:
    update = {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"name": "web", "description": "search", "input": {"hint": "query"}},
            {"name": "plain", "description": "p", "input": None},
            {
                "name": "v2",
                "description": "d",
                "type": "command",
                "input": {"type": "text", "hint": "h"},
            },
        ],
    }
    assert updates(run([inc(up(update))]))[0]["availableCommands"] == [
        {
            "name": "web",
            "description": "search",
            "input": {"type": "text", "hint": "query"},
            "type": "command",
        },
        {"name": "plain", "description": "p", "input": None, "type": "command"},
        {
            "name": "v2",
            "description": "d",
            "type": "command",
            "input": {"type": "text", "hint": "h"},
        },
    ]


def test_session_info_meta_replacement_patch() -> None:
    stream = [
        inc(up({"sessionUpdate": "session_info_update", "title": "a", "_meta": {"x": 1, "y": 2}})),
        inc(up({"sessionUpdate": "session_info_update", "title": "b"})),
        inc(up({"sessionUpdate": "session_info_update", "_meta": {"y": 3}})),
        inc(up({"sessionUpdate": "session_info_update", "_meta": None})),
    ]
    out = updates(run(stream))
    assert out[0] == {
        "sessionUpdate": "session_info_update",
        "title": "a",
        "_meta": {"x": 1, "y": 2},
    }
    assert out[1] == {"sessionUpdate": "session_info_update", "title": "b"}
    assert out[2]["_meta"] == {"y": 3, "x": None}
    assert out[3]["_meta"] is None


def test_compaction_meta_replacement_patch() -> None:
    def comp(meta: Any) -> tuple[str, Msg]:
        return inc(
            up(
                {
                    "sessionUpdate": "compaction_update",
                    "compactionId": "k",
                    "status": "completed",
                    "_meta": meta,
                }
            )
        )

    out = updates(run([comp({"a": 1}), comp({"b": 1})]))
    assert out[1]["_meta"] == {"b": 1, "a": None}


# --- section 3.4: tool-call content ---------------------------------------------------------


def tool_with(content: list[Any]) -> tuple[str, Msg]:
    return inc(up({"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": content}))


def test_diff_modify_add_delete() -> None:
    content = [
        {
            "type": "diff",
            "path": "/r/m.py",
            "oldText": "a\nb\n",
            "newText": "a\nc\n",
            "_meta": {"q": 1},
        },
        {"type": "diff", "path": "/r/n.py", "newText": "x\n"},
        {"type": "diff", "path": "/r/n2.py", "oldText": None, "newText": "x\n"},
        {"type": "diff", "path": "/r/d.py", "oldText": "gone\n", "newText": "", "deleted": True},
        {"type": "diff", "path": "rel.py", "oldText": "a", "newText": "b"},
        {"type": "diff", "path": "/r/same.py", "oldText": "a", "newText": "a"},
    ]
    items = updates(run([tool_with(content)]))[0]["content"]
    assert items[0] == {
        "type": "diff",
        "changes": [{"operation": "modify", "path": "/r/m.py", "fileType": "text"}],
        "patch": {
            "format": "git_patch",
            "text": "diff --git /r/m.py /r/m.py\n--- /r/m.py\n+++ /r/m.py\n"
            "@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
        },
        "_meta": {"q": 1},
    }
    assert items[1] == {
        "type": "diff",
        "changes": [{"operation": "add", "path": "/r/n.py", "fileType": "text"}],
        "patch": {
            "format": "git_patch",
            "text": "diff --git /r/n.py /r/n.py\nnew file mode 100644\n"
            "--- /dev/null\n+++ /r/n.py\n@@ -0,0 +1 @@\n+x\n",
        },
    }
    assert items[2]["changes"][0]["operation"] == "add"
    assert items[3] == {
        "type": "diff",
        "changes": [{"operation": "delete", "path": "/r/d.py", "fileType": "text"}],
        "patch": {
            "format": "git_patch",
            "text": "diff --git /r/d.py /r/d.py\ndeleted file mode 100644\n"
            "--- /r/d.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n",
        },
    }
    assert items[4] == {
        "type": "diff",
        "changes": [{"operation": "modify", "path": "rel.py", "fileType": "text"}],
    }
    assert "patch" not in items[5]


def test_diff_with_a_malformed_old_text_is_a_new_file() -> None:
    # schema-v1: `oldText` is ["string", "null"] with x-deserialize-default-on-error, so a
    # wrong type reads as absent (a new file), with a warning; the item is kept (3.4).
    content = [{"type": "diff", "path": "/r/n.py", "oldText": 5, "newText": "x\n"}]
    log = _v1_log(up({"sessionUpdate": "tool_call", "toolCallId": "c", "content": content}))
    snap = replay_log(log).snapshot()
    (item,) = snap["sessions"][0]["timeline"][0]["content"]
    assert item["changes"] == [{"operation": "add", "path": "/r/n.py", "fileType": "text"}]
    assert "new file mode" in item["patch"]["text"]
    (diag,) = snap["diagnostics"]
    assert (diag["line"], diag["code"]) == (3, "lenient-default") and "oldText" in diag["message"]


def test_malformed_content_items_dropped_custom_kept() -> None:
    content = [
        {"type": "content", "content": TEXT},
        {"type": "diff", "path": "/a"},
        {"type": "content"},
        "junk",
        {"type": "_custom", "x": 1},
        {"type": "terminal"},
    ]
    adapter = V1Adapter()
    items = updates(run([tool_with(content)], adapter))[0]["content"]
    assert items == [{"type": "content", "content": TEXT}, {"type": "_custom", "x": 1}]
    assert [d.code for d in adapter.diagnostics] == ["v1-tool-content-malformed"] * 4


def test_git_patch_details() -> None:
    assert git_patch("/f", "a\nb", "a\nc", "modify") == (
        "diff --git /f /f\n--- /f\n+++ /f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n"
        "+c\n\\ No newline at end of file\n"
    )
    assert git_patch("/e", "", "", "add") == "diff --git /e /e\nnew file mode 100644\n"
    assert git_patch("/x y/é", "", "1\n", "add") == (
        'diff --git "/x y/\\303\\251" "/x y/\\303\\251"\nnew file mode 100644\n'
        '--- /dev/null\n+++ "/x y/\\303\\251"\t\n@@ -0,0 +1 @@\n+1\n'
    )
    assert git_patch("/f", "same", "same", "modify") is None


# --- section 4: message ids -------------------------------------------------------------------


CLOSING: list[tuple[str, list[tuple[str, Msg]]]] = [
    ("other role", [inc(chunk("agent_thought"))]),
    ("explicit id", [inc(chunk("agent_message", message_id="explicit"))]),
    ("tool_call", [inc(up({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "T"}))]),
    ("new tool_call_update", [inc(up({"sessionUpdate": "tool_call_update", "toolCallId": "new"}))]),
    ("prompt", [outg(prompt(50))]),
    ("prompt result", [outg(prompt(50)), inc(res(50, {"stopReason": "end_turn"}))]),
    ("prompt error", [outg(prompt(50)), inc(err(50))]),
    ("load", [outg(req(60, "session/load", {"sessionId": S1, "cwd": "/", "mcpServers": []}))]),
    (
        "load result",
        [
            outg(req(60, "session/load", {"sessionId": S1, "cwd": "/", "mcpServers": []})),
            inc(res(60, None)),
        ],
    ),
    ("resume", [outg(req(60, "session/resume", {"sessionId": S1, "cwd": "/"}))]),
    (
        "new compaction",
        [
            inc(
                up(
                    {
                        "sessionUpdate": "compaction_update",
                        "compactionId": "k",
                        "status": "in_progress",
                    }
                )
            )
        ],
    ),
    (
        "new compaction chunk",
        [
            inc(
                up(
                    {
                        "sessionUpdate": "compaction_summary_chunk",
                        "compactionId": "k",
                        "content": TEXT,
                    }
                )
            )
        ],
    ),
]

NON_CLOSING: list[tuple[str, list[tuple[str, Msg]]]] = [
    (
        "known tool_call_update",
        [
            inc(
                up(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": "known",
                        "status": "completed",
                    }
                )
            )
        ],
    ),
    ("plan", [inc(up({"sessionUpdate": "plan", "entries": []}))]),
    (
        "commands",
        [inc(up({"sessionUpdate": "available_commands_update", "availableCommands": []}))],
    ),
    ("mode", [inc(up({"sessionUpdate": "current_mode_update", "currentModeId": "a"}))]),
    ("config", [inc(up({"sessionUpdate": "config_option_update", "configOptions": []}))]),
    ("info", [inc(up({"sessionUpdate": "session_info_update", "title": "t"}))]),
    ("usage", [inc(up({"sessionUpdate": "usage_update", "used": 1, "size": 2}))]),
    (
        "permission",
        [
            inc(
                req(
                    70,
                    "session/request_permission",
                    {"sessionId": S1, "toolCall": {"toolCallId": "p"}, "options": []},
                )
            ),
            outg(res(70, {"outcome": {"outcome": "cancelled"}})),
        ],
    ),
    ("cancel", [outg({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": S1}})]),
    ("notice", [inc(up({"sessionUpdate": "notice", "severity": "info", "title": "n"}))]),
    ("unknown", [inc(up({"sessionUpdate": "_x"}))]),
    (
        "known compaction",
        [
            inc(
                up(
                    {
                        "sessionUpdate": "compaction_update",
                        "compactionId": "old",
                        "status": "completed",
                    }
                )
            )
        ],
    ),
]

PRELUDE = [
    inc(up({"sessionUpdate": "tool_call", "toolCallId": "known", "title": "K"})),
    inc(up({"sessionUpdate": "compaction_update", "compactionId": "old", "status": "in_progress"})),
]


def _agent_ids(events: list[tuple[str, Msg]]) -> list[str]:
    out = run([*PRELUDE, inc(chunk("agent_message")), *events, inc(chunk("agent_message"))])
    return [u["messageId"] for u in updates(out) if u["sessionUpdate"] == "agent_message_chunk"]


@pytest.mark.parametrize(("name", "events"), CLOSING, ids=[c[0] for c in CLOSING])
def test_closing_events(name: str, events: list[tuple[str, Msg]]) -> None:
    ids = _agent_ids(events)
    assert ids[0] == "acp-v1:agent:1" and ids[-1] != ids[0]


@pytest.mark.parametrize(("name", "events"), NON_CLOSING, ids=[c[0] for c in NON_CLOSING])
def test_non_closing_events(name: str, events: list[tuple[str, Msg]]) -> None:
    ids = _agent_ids(events)
    assert ids == ["acp-v1:agent:1", "acp-v1:agent:1"]


def test_grouping_rule_example() -> None:
    stream = [
        inc(chunk("agent_thought")),
        inc(chunk("agent_thought")),
        inc(chunk("agent_message")),
        inc(chunk("agent_message")),
        inc(up({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "T"})),
        inc(chunk("agent_message")),
    ]
    assert chunk_ids(run(stream)) == [
        "acp-v1:thought:1",
        "acp-v1:thought:1",
        "acp-v1:agent:2",
        "acp-v1:agent:2",
        "acp-v1:agent:3",
    ]


def test_explicit_id_chunk_closes_the_open_message_and_opens_none() -> None:
    # 4.2 / 4.3: a chunk with an explicit id closes the open message; the next id-less chunk
    # starts a new one, even of the same role (only an adopted echo is continued, 5.2).
    stream = [
        inc(chunk("agent_message")),
        inc(chunk("agent_message", message_id="m9")),
        inc(chunk("agent_message")),
        inc(chunk("agent_message", message_id="m9")),
        inc(chunk("agent_message", message_id="m9")),
        inc(chunk("agent_message")),
    ]
    assert chunk_ids(run(stream)) == [
        "acp-v1:agent:1",
        "m9",
        "acp-v1:agent:2",
        "m9",
        "m9",
        "acp-v1:agent:3",
    ]


def test_minted_id_collision_gets_suffix() -> None:
    stream = [
        inc(chunk("agent_message", message_id="acp-v1:thought:1")),
        inc(chunk("agent_thought")),
        inc(chunk("agent_message", message_id="acp-v1:agent:2:2")),
        inc(chunk("agent_message", "y", "z")),
        inc(chunk("agent_thought")),
        inc(chunk("agent_message", message_id="acp-v1:agent:3")),
        inc(chunk("agent_thought")),
        inc(chunk("agent_message")),
    ]
    assert chunk_ids(run(stream)) == [
        "acp-v1:thought:1",
        "acp-v1:thought:1:2",
        "acp-v1:agent:2:2",
        "z",
        "acp-v1:thought:2",
        "acp-v1:agent:3",
        "acp-v1:thought:3",
        "acp-v1:agent:4",
    ]


def test_counters_are_per_session() -> None:
    stream = [
        inc(chunk("agent_message", sid="a")),
        inc(chunk("agent_message", sid="b")),
        inc(chunk("agent_thought", sid="a")),
    ]
    assert chunk_ids(run(stream)) == ["acp-v1:agent:1", "acp-v1:agent:1", "acp-v1:thought:2"]


# --- section 5: prompts -----------------------------------------------------------------------


def test_echo_adoption_without_id() -> None:
    out = run(
        [
            outg(prompt(7)),
            inc(chunk("user_message", "Fix")),
            inc(chunk("user_message", " it")),
            inc(chunk("agent_message", "ok")),
        ]
    )
    assert out[1] == v2up(
        {
            "sessionUpdate": "user_message_chunk",
            "content": {"type": "text", "text": "Fix"},
            "messageId": "acp-v1:user:1",
        }
    )
    assert out[2] == inc(res(7, {"messageId": "acp-v1:user:1"}))
    assert out[3] == state("running")
    assert chunk_ids(out) == ["acp-v1:user:1", "acp-v1:user:1", "acp-v1:agent:2"]
    assert not any(u["sessionUpdate"] == "user_message" for u in updates(out))


def test_echo_keeps_notification_meta() -> None:
    echo = chunk("user_message", "Fix")
    echo["params"]["_meta"] = {"trace": 1}
    out = run([outg(prompt(7)), inc(echo)])
    assert out[1][1]["params"]["_meta"] == {"trace": 1}
    assert out[1][1]["params"]["update"]["messageId"] == "acp-v1:user:1"


def test_non_list_config_options_pass_through() -> None:
    bad = up({"sessionUpdate": "config_option_update", "configOptions": None})
    assert run([inc(bad)])[0][1] is bad


def test_echo_adoption_with_id() -> None:
    out = run(
        [
            outg(prompt(7)),
            inc(chunk("user_message", "Fix", "u-9")),
            inc(chunk("user_message", "more")),
        ]
    )
    assert out[2] == inc(res(7, {"messageId": "u-9"}))
    assert chunk_ids(out) == ["u-9", "u-9"]


INSERT_TRIGGERS: list[tuple[str, tuple[str, Msg]]] = [
    ("agent chunk", inc(chunk("agent_message"))),
    ("thought", inc(chunk("agent_thought"))),
    ("tool_call", inc(up({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "T"}))),
    ("tool_call_update", inc(up({"sessionUpdate": "tool_call_update", "toolCallId": "t"}))),
    ("plan", inc(up({"sessionUpdate": "plan", "entries": []}))),
    ("usage", inc(up({"sessionUpdate": "usage_update", "used": 1, "size": 2}))),
    ("unknown", inc(up({"sessionUpdate": "_x"}))),
    (
        "permission",
        inc(
            req(
                3,
                "session/request_permission",
                {"sessionId": S1, "toolCall": {"toolCallId": "t"}, "options": []},
            )
        ),
    ),
]


@pytest.mark.parametrize(("name", "trigger"), INSERT_TRIGGERS, ids=[t[0] for t in INSERT_TRIGGERS])
def test_lazy_insertion_at_trigger(name: str, trigger: tuple[str, Msg]) -> None:
    out = run([outg(prompt(7)), trigger])
    assert out[:4] == [
        outg(prompt(7)),
        v2up(
            {
                "sessionUpdate": "user_message",
                "messageId": "acp-v1:user:1",
                "content": [{"type": "text", "text": "Fix the test"}],
            }
        ),
        inc(res(7, {"messageId": "acp-v1:user:1"})),
        state("running"),
    ]
    assert out[4][1].get("method") in ("session/update", "session/request_permission")


def test_update_of_another_session_does_not_insert() -> None:
    out = run([outg(prompt(7)), inc(chunk("agent_message", sid="other"))])
    assert len(out) == 2


def test_insertion_at_result() -> None:
    out = run([outg(prompt(7)), inc(res(7, {"stopReason": "refusal"}))])
    assert out[1:] == [
        v2up(
            {
                "sessionUpdate": "user_message",
                "messageId": "acp-v1:user:1",
                "content": [{"type": "text", "text": "Fix the test"}],
            }
        ),
        inc(res(7, {"messageId": "acp-v1:user:1"})),
        state("running"),
        state("idle", stopReason="refusal"),
    ]


def test_second_prompt_inserts_the_first() -> None:
    out = run(
        [outg(prompt(7, text="one")), outg(prompt(8, text="two")), inc(chunk("agent_message"))]
    )
    assert [m.get("id") for d, m in out if "result" in m] == [7, 8]
    assert [u["messageId"] for u in updates(out) if u["sessionUpdate"] == "user_message"] == [
        "acp-v1:user:1",
        "acp-v1:user:2",
    ]
    assert out[1] == v2up(
        {
            "sessionUpdate": "user_message",
            "messageId": "acp-v1:user:1",
            "content": [{"type": "text", "text": "one"}],
        }
    )
    assert out[4] == outg(prompt(8, text="two"))


def test_usage_on_idle_only_with_unstable() -> None:
    stream = [
        outg(prompt(7)),
        inc(chunk("agent_message")),
        inc(res(7, {"stopReason": "end_turn", "usage": {"totalTokens": 3}})),
    ]
    assert run(stream)[-1] == state("idle", stopReason="end_turn")
    assert run(stream, V1Adapter(unstable=True))[-1] == state(
        "idle", stopReason="end_turn", usage={"totalTokens": 3}
    )


def test_error_before_insertion_is_rejection() -> None:
    error = err(7, -32602, "bad")
    out = run([outg(prompt(7)), inc(error), inc(chunk("agent_message"))])
    assert out[:2] == [outg(prompt(7)), inc(error)]
    assert out[1][1] is error
    assert all(u["sessionUpdate"] != "user_message" for u in updates(out))
    assert all(u["sessionUpdate"] != "state_update" for u in updates(out))


def test_error_after_insertion_is_idle_error() -> None:
    error = err(7, -32603, "crash")
    out = run([outg(prompt(7)), inc(chunk("agent_message")), inc(error)])
    assert out[-1] == state("idle", stopReason="error", error={"code": -32603, "message": "crash"})
    assert [m.get("id") for d, m in out if d == "incoming" and "id" in m] == [7]


def test_cancellation() -> None:
    cancel = outg({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": S1}})
    out = run(
        [outg(prompt(7)), inc(chunk("agent_message")), cancel, inc(err(7, -32800, "aborted"))]
    )
    assert out[-2] == cancel and out[-1] == state("idle", stopReason="cancelled")
    out = run(
        [
            outg(prompt(7)),
            inc(chunk("agent_message")),
            cancel,
            inc(res(7, {"stopReason": "cancelled"})),
        ]
    )
    assert out[-1] == state("idle", stopReason="cancelled")


def test_cancel_in_earlier_turn_does_not_mark_next() -> None:
    cancel = outg({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": S1}})
    out = run(
        [
            outg(prompt(7)),
            inc(chunk("agent_message")),
            cancel,
            inc(res(7, {"stopReason": "cancelled"})),
            outg(prompt(8)),
            inc(chunk("agent_message")),
            inc(err(8)),
        ]
    )
    assert out[-1][1]["params"]["update"]["stopReason"] == "error"


def test_updates_after_result_pass_unchanged() -> None:
    late = up({"sessionUpdate": "usage_update", "used": 1, "size": 2})
    out = run([outg(prompt(7)), inc(res(7, {"stopReason": "end_turn"})), inc(late)])
    assert out[-1][1] is late


# --- section 9: load / resume -----------------------------------------------------------------


def test_session_load_replay_shape() -> None:
    load_params = {
        "sessionId": S1,
        "cwd": "/w",
        "mcpServers": [{"name": "m", "command": "/m", "args": []}],
    }
    result = {"modes": {"currentModeId": "a", "availableModes": [{"id": "a", "name": "A"}]}}
    stream = [
        inc(up({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "T"})),
        outg(req(5, "session/load", load_params)),
        inc(chunk("user_message", "old prompt")),
        inc(chunk("agent_message", "old answer")),
        inc(up({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"})),
        inc(chunk("agent_message", "after")),
        inc(res(5, result)),
    ]
    out = run(stream)
    server = {"type": "stdio", "name": "m", "command": "/m", "args": []}
    resume = {**load_params, "mcpServers": [server], "replayFrom": {"type": "start"}}
    assert out[1] == outg(req(5, "session/resume", resume))
    assert all(u.get("state") is None for u in updates(out)[:-1])
    assert chunk_ids(out) == ["acp-v1:user:1", "acp-v1:agent:2", "acp-v1:agent:3"]
    assert out[-2:] == [
        state("idle"),
        inc(
            res(
                5,
                {
                    "configOptions": [
                        {
                            "configId": "mode",
                            "name": "Mode",
                            "category": "mode",
                            "type": "select",
                            "currentValue": "a",
                            "options": [{"value": "a", "name": "A"}],
                        }
                    ]
                },
            )
        ),
    ]


def test_session_load_null_result_and_error() -> None:
    load = outg(req(5, "session/load", {"sessionId": S1, "cwd": "/w", "mcpServers": []}))
    assert run([load, inc(res(5, None))])[-2:] == [state("idle"), inc(res(5, {}))]
    error = err(5)
    out = run([load, inc(error)])
    assert out[-1][1] is error and len(out) == 2


def test_v1_resume() -> None:
    resume = req(5, "session/resume", {"sessionId": S1, "cwd": "/w"})
    out = run(
        [
            outg(resume),
            inc(
                res(
                    5,
                    {
                        "configOptions": [
                            {"id": "x", "name": "X", "type": "boolean", "currentValue": True}
                        ]
                    },
                )
            ),
        ]
    )
    assert out[0][1] is resume
    assert out[1:] == [
        state("idle"),
        inc(
            res(
                5,
                {
                    "configOptions": [
                        {"configId": "x", "name": "X", "type": "boolean", "currentValue": True}
                    ]
                },
            )
        ),
    ]


# --- section 6.2: modes -----------------------------------------------------------------------


def new_session(result: Msg) -> list[tuple[str, Msg]]:
    return [outg(req(1, "session/new", {"cwd": "/w"})), inc(res(1, {"sessionId": S1, **result}))]


MODES = {
    "currentModeId": "ask",
    "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}],
}


def _v1_log(*messages: Msg) -> bytes:
    head = _v1_connection()[:2]
    return "".join(json.dumps(m) + "\n" for m in (*head, *messages)).encode()


MODE_LIST = [{"value": "ask", "name": "Ask"}, {"value": "code", "name": "Code"}]


@pytest.mark.parametrize("method", ["session/new", "session/load"])
def test_a_mode_update_racing_the_setup_result_keeps_the_results_mode_names(method: str) -> None:
    # 6.2: the mode option lists the result's modes; R50: the update that came first is newer,
    # so its current value stays. The result's list alone would be dropped (R50), so the
    # complete list follows the result as an update.
    params = {"cwd": "/w", "mcpServers": [], **({"sessionId": S1} if "load" in method else {})}
    log = _v1_log(
        req(1, method, params),
        up({"sessionUpdate": "current_mode_update", "currentModeId": "code"}),
        res(1, {"sessionId": S1, "modes": MODES}),
    )
    snap = replay_log(log).snapshot()
    (session,) = snap["sessions"]
    (mode,) = session["configOptions"]
    assert (mode["configId"], mode["currentValue"], mode["options"]) == ("mode", "code", MODE_LIST)
    assert snap["diagnostics"] == []


def test_an_option_update_racing_a_load_result_keeps_both_lists() -> None:
    model = {"id": "model", "name": "Model", "type": "select", "currentValue": "a"}
    model["options"] = [{"value": "a", "name": "A"}]
    log = _v1_log(
        req(1, "session/new", {"cwd": "/w", "mcpServers": []}),
        res(1, {"sessionId": S1}),
        req(2, "session/load", {"sessionId": S1, "cwd": "/w", "mcpServers": []}),
        up({"sessionUpdate": "config_option_update", "configOptions": [model]}),
        res(2, {"modes": MODES}),
    )
    (session,) = replay_log(log).snapshot()["sessions"]
    options = session["configOptions"]
    assert [(o["configId"], o["currentValue"]) for o in options] == [
        ("model", "a"),
        ("mode", "ask"),
    ]
    assert options[1]["options"] == MODE_LIST


def test_a_setup_result_without_a_race_adds_no_update() -> None:
    out = run([*new_session({"modes": MODES}), inc(chunk("agent_message"))])
    assert [u["sessionUpdate"] for u in updates(out)] == ["agent_message_chunk"]
    stream = [
        *new_session({"modes": MODES}),
        inc(up({"sessionUpdate": "current_mode_update", "currentModeId": "code"})),
        outg(req(2, "session/load", {"sessionId": S1, "cwd": "/w", "mcpServers": []})),
        inc(res(2, {"modes": MODES})),
    ]
    kinds = [u["sessionUpdate"] for u in updates(run(stream))]
    assert kinds == ["config_option_update", "state_update"]  # the mode update, the idle


def test_mode_id_collision_uses_mode_v1() -> None:
    own = {"id": "mode", "name": "Agent's", "type": "boolean", "currentValue": True}
    options = run(new_session({"modes": MODES, "configOptions": [own]}))[1][1]["result"][
        "configOptions"
    ]
    assert [o["configId"] for o in options] == ["mode", "mode#v1"]


def test_real_mode_option_wins() -> None:
    real = {
        "id": "m",
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": "x",
        "options": [{"value": "x", "name": "X"}],
    }
    stream = [
        *new_session({"modes": MODES, "configOptions": [real]}),
        inc(up({"sessionUpdate": "current_mode_update", "currentModeId": "code"})),
        outg(req(2, "session/set_mode", {"sessionId": S1, "modeId": "ask"})),
        inc(res(2, {})),
    ]
    out = run(stream)
    assert [o["configId"] for o in out[1][1]["result"]["configOptions"]] == ["m"]
    assert updates(out) == []
    assert len(out) == 4


def test_current_mode_update_both_spellings_and_unknown_value() -> None:
    stream = [
        *new_session({"modes": MODES}),
        inc(up({"sessionUpdate": "current_mode_update", "currentModeId": "code"})),
        inc(up({"sessionUpdate": "current_mode_update", "modeId": "secret"})),
    ]
    ups = updates(run(stream))
    assert ups[0] == {
        "sessionUpdate": "config_option_update",
        "configOptions": [
            {
                "configId": "mode",
                "name": "Mode",
                "category": "mode",
                "type": "select",
                "currentValue": "code",
                "options": [{"value": "ask", "name": "Ask"}, {"value": "code", "name": "Code"}],
            }
        ],
    }
    assert ups[1]["configOptions"][0]["currentValue"] == "secret"
    assert ups[1]["configOptions"][0]["options"][-1] == {"value": "secret", "name": "secret"}


def test_set_mode_success_emits_config_update_and_failure_does_not() -> None:
    stream = [
        *new_session({"modes": MODES}),
        outg(req(2, "session/set_mode", {"sessionId": S1, "modeId": "code"})),
        inc(res(2, None)),
        outg(req(3, "session/set_mode", {"sessionId": S1, "modeId": "ask"})),
        inc(err(3)),
    ]
    out = run(stream)
    assert out[3] == inc(res(2, None))
    assert out[4][1]["params"]["update"]["configOptions"][0]["currentValue"] == "code"
    assert len(out) == 7


def test_config_option_update_reappends_mode_unless_real() -> None:
    plain = {"id": "model", "name": "Model", "type": "boolean", "currentValue": True}
    real = {"id": "m2", "name": "Mode", "category": "mode", "type": "boolean", "currentValue": True}
    stream = [
        *new_session({"modes": MODES}),
        inc(up({"sessionUpdate": "config_option_update", "configOptions": [plain]})),
        inc(up({"sessionUpdate": "config_option_update", "configOptions": [real]})),
        inc(up({"sessionUpdate": "config_option_update", "configOptions": []})),
    ]
    ups = updates(run(stream))
    assert [o["configId"] for o in ups[0]["configOptions"]] == ["model", "mode"]
    assert [o["configId"] for o in ups[1]["configOptions"]] == ["m2"]
    assert [o["configId"] for o in ups[2]["configOptions"]] == ["mode"]


# --- section 7: permission requests -----------------------------------------------------------


def perm(id_: Any, tool: Msg) -> tuple[str, Msg]:
    return inc(
        req(
            id_,
            "session/request_permission",
            {"sessionId": S1, "toolCall": tool, "options": ALLOW, "_meta": {"m": 1}},
        )
    )


ALLOW = [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]


@pytest.mark.parametrize("options", [[], None, "MISSING", "bogus", [{"optionId": "x"}]])
def test_permission_without_options_still_applies_its_tool_call(options: Any) -> None:
    # v1 allows `options: []`, v2 needs one: the request is rejected with its line, and its
    # tool call (the Agent's news) is applied on its own; no requires_action is synthesised.
    # So for any options v2 cannot read: nothing would ever answer that requires_action.
    ask = {"sessionId": S1, "toolCall": {"toolCallId": "c", "title": "Run ls"}}
    if options != "MISSING":
        ask["options"] = options
    log = _v1_log(
        req(1, "session/new", {"cwd": "/w", "mcpServers": []}),
        res(1, {"sessionId": S1}),
        prompt(2),
        req(9, "session/request_permission", ask),
    )
    snap = replay_log(log).snapshot()
    (session,) = snap["sessions"]
    tool = session["timeline"][1]
    assert (tool["toolCallId"], tool["title"]) == ("c", "Run ls")
    assert session["state"] == {"state": "running"} and session["permissionRequests"] == []
    (diag,) = snap["diagnostics"]
    assert (diag["line"], diag["code"]) == (6, "invalid-message")
    assert "$.params.options" in diag["message"]


def perm_params(out: Out) -> list[Msg]:
    return [m["params"] for d, m in out if m.get("method") == "session/request_permission"]


def test_permission_title_falls_back_past_a_title_a_tool_call_cleared() -> None:
    # 7: the stored title, else "Permission requested"; a full `tool_call` with `title: null`
    # (6.3) cleared the stored one, and an update's null (v1: not updated) keeps it.
    stream = [
        inc(up({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "Old"})),
        inc(up({"sessionUpdate": "tool_call", "toolCallId": "a", "title": None})),
        perm(1, {"toolCallId": "a"}),
        inc(up({"sessionUpdate": "tool_call", "toolCallId": "b", "title": "Kept"})),
        inc(up({"sessionUpdate": "tool_call_update", "toolCallId": "b", "title": None})),
        perm(2, {"toolCallId": "b"}),
    ]
    assert [p["title"] for p in perm_params(run(stream))] == ["Permission requested", "Kept"]


def test_permission_title_fallback() -> None:
    stream = [
        perm(1, {"toolCallId": "a", "title": "Allow edit?", "status": None}),
        inc(up({"sessionUpdate": "tool_call", "toolCallId": "b", "title": "Stored"})),
        perm(2, {"toolCallId": "b"}),
        perm(3, {"toolCallId": "c"}),
        perm(4, {"toolCallId": "a", "title": None}),
    ]
    params = perm_params(run(stream))
    assert [p["title"] for p in params] == [
        "Allow edit?",
        "Stored",
        "Permission requested",
        "Allow edit?",
    ]
    assert params[0] == {
        "sessionId": S1,
        "title": "Allow edit?",
        "options": ALLOW,
        "_meta": {"m": 1},
        "subject": {"type": "tool_call", "toolCall": {"toolCallId": "a", "title": "Allow edit?"}},
    }
    assert "description" not in params[0]


def test_permission_outside_a_turn_has_no_state() -> None:
    out = run([perm(1, {"toolCallId": "a"}), outg(res(1, {"outcome": {"outcome": "cancelled"}}))])
    assert updates(out) == []


def test_two_permissions_running_after_last_answer() -> None:
    stream = [
        outg(prompt(7)),
        inc(chunk("agent_message")),
        perm(1, {"toolCallId": "a"}),
        perm(2, {"toolCallId": "b"}),
        outg(res(1, {"outcome": {"outcome": "cancelled"}})),
        outg(res(2, {"outcome": {"outcome": "cancelled"}})),
    ]
    states = [u["state"] for u in updates(run(stream)) if u["sessionUpdate"] == "state_update"]
    assert states == ["running", "requires_action", "running"]


def test_no_running_after_answer_when_turn_ended() -> None:
    stream = [
        outg(prompt(7)),
        inc(chunk("agent_message")),
        perm(1, {"toolCallId": "a"}),
        inc(res(7, {"stopReason": "cancelled"})),
        outg(res(1, {"outcome": {"outcome": "cancelled"}})),
    ]
    states = [u["state"] for u in updates(run(stream)) if u["sessionUpdate"] == "state_update"]
    assert states == ["running", "requires_action", "idle"]


# --- section 8: terminals ---------------------------------------------------------------------


def test_terminal_synthesis() -> None:
    create = req(
        10,
        "terminal/create",
        {"sessionId": S1, "command": "npm", "args": ["run", "te st"], "cwd": "/w"},
    )
    adapter = V1Adapter()
    stream = [
        inc(create),
        outg(res(10, {"terminalId": "t1"})),
        inc(
            up(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "c",
                    "title": "Run",
                    "content": [
                        {"type": "terminal", "terminalId": "t1"},
                        {"type": "terminal", "terminalId": "ghost"},
                    ],
                }
            )
        ),
        inc(req(11, "terminal/output", {"sessionId": S1, "terminalId": "t1"})),
        outg(
            res(
                11,
                {
                    "output": "héllo\n",
                    "truncated": True,
                    "exitStatus": {"exitCode": 1, "signal": None},
                },
            )
        ),
        inc(req(12, "terminal/wait_for_exit", {"sessionId": S1, "terminalId": "t1"})),
        outg(res(12, {"exitCode": 0})),
        inc(req(13, "terminal/kill", {"sessionId": S1, "terminalId": "t1"})),
        outg(res(13, {})),
        inc(req(14, "terminal/release", {"sessionId": S1, "terminalId": "t1"})),
        outg(res(14, {})),
    ]
    out = run(stream, adapter)
    assert out[:3] == [
        inc(create),
        outg(res(10, {"terminalId": "t1"})),
        v2up(
            {
                "sessionUpdate": "terminal_update",
                "terminalId": "t1",
                "command": "npm run 'te st'",
                "cwd": "/w",
            }
        ),
    ]
    assert updates(out)[1]["content"] == [
        {"type": "terminal", "terminalId": "t1"},
        {"type": "_acp_v1_terminal", "terminalId": "ghost"},
    ]
    data = base64.b64encode("héllo\n".encode()).decode()
    assert out[6] == v2up(
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "t1",
            "output": {"data": data},
            "exitStatus": {"exitCode": 1, "signal": None},
        }
    )
    assert out[9] == v2up(
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "t1",
            "exitStatus": {"exitCode": 0, "signal": None},
        }
    )
    assert len(out) == 14
    assert adapter.truncated_terminals == {(S1, "t1")}


def test_malformed_fields_of_a_full_tool_call_are_reported_with_their_line() -> None:
    # 6.3 gives the defaults; as for a tool_call_update, a lenient field that does not fit
    # is reported, naming the field.
    bad = {"content": "oops", "locations": {"path": "/x"}, "kind": 7, "status": False}
    log = _v1_log(up({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "A", **bad}))
    snap = replay_log(log).snapshot()
    tool = snap["sessions"][0]["timeline"][0]
    assert (tool["kind"], tool["status"], tool["content"], tool["locations"]) == (
        "other",
        "pending",
        [],
        [],
    )
    found = {(d["line"], d["code"], d["message"].split("`")[1]) for d in snap["diagnostics"]}
    assert found == {(3, "lenient-default", key) for key in bad}


def test_terminal_without_traffic_is_custom_item() -> None:
    out = run(
        [
            inc(
                up(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": "c",
                        "content": [{"type": "terminal", "terminalId": "t1", "_meta": {"k": 1}}],
                    }
                )
            )
        ]
    )
    assert updates(out)[0]["content"] == [
        {"type": "_acp_v1_terminal", "terminalId": "t1", "_meta": {"k": 1}}
    ]


def test_terminal_traffic_after_the_reference_links_the_tool_call_to_it() -> None:
    # 3.4: the custom item stands in only when the log has no traffic for that terminal; a
    # log that starts mid-stream shows the traffic after the tool call named it.
    def tool(tool_id: str, *items: Msg, kind: str = "tool_call") -> tuple[str, Msg]:
        return inc(up({"sessionUpdate": kind, "toolCallId": tool_id, "content": list(items)}))

    t1 = {"type": "terminal", "terminalId": "t1", "_meta": {"k": 1}}
    diff = {"type": "content", "content": {"type": "text", "text": "x"}}
    stream = [
        tool("a", diff, t1),
        tool("b", t1),
        tool("b", diff, kind="tool_call_update"),  # b no longer names t1
        tool("c", {"type": "terminal", "terminalId": "t2"}),
        inc(req(11, "terminal/output", {"sessionId": S1, "terminalId": "t1"})),
        outg(res(11, {"output": "ok\n", "truncated": False})),
        inc(req(12, "terminal/output", {"sessionId": S1, "terminalId": "t1"})),
        outg(res(12, {"output": "ok\n", "truncated": False})),
    ]
    ups = updates(run(stream))
    assert [u["sessionUpdate"] for u in ups[4:]] == [
        "terminal_update",
        "tool_call_update",  # a, relinked once
        "terminal_update",
    ]
    assert ups[5] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "a",
        "content": [diff, {"type": "terminal", "terminalId": "t1", "_meta": {"k": 1}}],
    }
    log = _v1_log(*(m for _, m in stream))
    session = replay_log(log).snapshot()["sessions"][0]
    contents = {e["toolCallId"]: e["content"] for e in session["timeline"]}
    assert contents["a"][1] == {"type": "terminal", "terminalId": "t1", "_meta": {"k": 1}}
    assert contents["b"] == [diff]
    assert contents["c"] == [{"type": "_acp_v1_terminal", "terminalId": "t2"}]


def test_terminal_traffic_after_a_load_does_not_bring_back_a_tool_call_the_replay_dropped() -> None:
    # 3.4 relinks a tool call that names the terminal; a session/load replays history from the
    # start (5.3), so a tool call only the earlier, dropped history named is gone for good.
    t1 = {"type": "terminal", "terminalId": "t1"}
    stream = [
        inc(up({"sessionUpdate": "tool_call", "toolCallId": "old", "content": [t1]})),
        outg(req(5, "session/load", {"sessionId": S1, "cwd": "/w", "mcpServers": []})),
        inc(chunk("agent_message", "replayed")),
        inc(res(5, {})),
        inc(req(11, "terminal/output", {"sessionId": S1, "terminalId": "t1"})),
        outg(res(11, {"output": "ok\n", "truncated": False})),
    ]
    ups = updates(run(stream))
    assert [u.get("toolCallId") for u in ups if "tool_call" in u["sessionUpdate"]] == ["old"]
    session = replay_log(_v1_log(*(m for _, m in stream))).snapshot()["sessions"][0]
    assert [e.get("toolCallId") for e in session["timeline"] if e["entry"] != "message"] == []


# --- section 9: agent-only (degraded) mode ----------------------------------------------------


def test_agent_only_mode() -> None:
    adapter = V1Adapter(agent_only=True)
    stream = [
        inc(up({"sessionUpdate": "available_commands_update", "availableCommands": []})),
        inc(chunk("user_message", "echo")),
        inc(chunk("agent_message", "a")),
        inc(up({"sessionUpdate": "tool_call", "toolCallId": "c", "title": "T"})),
        inc(res(7, {"stopReason": "end_turn"})),
        inc(up({"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "completed"})),
    ]
    out = run(stream, adapter)
    kinds = [u["sessionUpdate"] + (":" + u["state"] if "state" in u else "") for u in updates(out)]
    assert kinds == [
        "available_commands_update",
        "state_update:running",
        "user_message_chunk",
        "agent_message_chunk",
        "tool_call_update",
        "state_update:idle",
        "state_update:running",
        "tool_call_update",
    ]
    assert updates(out)[5] == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "end_turn",
    }
    assert not any("result" in m for _, m in out)
    assert adapter.diagnostics == []


def test_unattributable_prompt_result_kept_raw() -> None:
    adapter = V1Adapter(agent_only=True)
    result = res(7, {"stopReason": "end_turn"})
    out = run(
        [inc(chunk("agent_message", sid="a")), inc(chunk("agent_message", sid="b")), inc(result)],
        adapter,
    )
    assert out[-1][1] is result
    assert [d.code for d in adapter.diagnostics] == ["v1-prompt-result-unattributed"]
    assert adapter.diagnostics[0].severity == "error"


def test_closed_sessions_do_not_count_for_attribution() -> None:
    stream = [
        inc(chunk("agent_message", sid="a")),
        outg(req(1, "session/close", {"sessionId": "a"})),
        inc(res(1, {})),
        inc(chunk("agent_message", sid="b")),
        inc(res(7, {"stopReason": "end_turn"})),
    ]
    assert run(stream)[-1] == state("idle", "b", stopReason="end_turn")


def test_agent_only_session_new_result_kept_raw_but_modes_remembered() -> None:
    result = res(1, {"sessionId": S1, "modes": MODES})
    stream = [
        inc(result),
        inc(up({"sessionUpdate": "current_mode_update", "currentModeId": "code"})),
    ]
    out = run(stream, V1Adapter(agent_only=True))
    assert out[0][1] is result
    options = updates(out)[0]["configOptions"][0]["options"]
    assert [o["value"] for o in options] == ["ask", "code"]


def test_diagnostics_carry_line_and_session() -> None:
    adapter = V1Adapter()
    adapter.feed("incoming", up({"sessionUpdate": "plan", "entries": "bad"}), line=12)
    (diagnostic,) = adapter.diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.session_id) == (
        "v1-plan-entries-invalid",
        12,
        S1,
    )


def test_full_mode_synthesises_no_state_before_first_prompt() -> None:
    out = run(
        [
            inc(chunk("agent_message")),
            inc(up({"sessionUpdate": "tool_call", "toolCallId": "c", "title": "T"})),
        ]
    )
    assert all(u["sessionUpdate"] != "state_update" for u in updates(out))


# --- detection --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("direction", "message", "expected"),
    [
        ("incoming", res(0, {"protocolVersion": 1}), True),
        ("incoming", res(0, {"protocolVersion": 2, "info": {}}), False),
        # the handshake's version decides, whatever the field names (1.3)
        ("incoming", res(0, {"protocolVersion": 2, "agentCapabilities": {}}), False),
        ("incoming", res(0, {"protocolVersion": "x", "agentCapabilities": {}}), True),
        # the request decides nothing (v1 field names are only a hint, below)
        ("outgoing", req(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}}), None),
        ("outgoing", req(0, "initialize", {"protocolVersion": 2, "capabilities": {}}), None),
        ("incoming", up({"sessionUpdate": "tool_call", "toolCallId": "c"}), True),
        ("incoming", up({"sessionUpdate": "plan", "entries": []}), True),
        ("incoming", up({"sessionUpdate": "current_mode_update", "currentModeId": "a"}), True),
        ("incoming", chunk("agent_message"), True),
        ("incoming", chunk("agent_message", message_id="m"), None),
        ("incoming", up({"sessionUpdate": "state_update", "state": "idle"}), False),
        ("incoming", up({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c"}), False),
        ("incoming", up({"sessionUpdate": "user_message", "messageId": "u"}), False),
        ("incoming", up({"sessionUpdate": "agent_message", "messageId": "u"}), False),
        ("incoming", up({"sessionUpdate": "agent_thought", "messageId": "u"}), False),
        ("incoming", up({"sessionUpdate": "usage_update", "used": 1, "size": 1}), None),
        ("incoming", res(7, {"stopReason": "end_turn"}), True),
        ("incoming", res(7, {"messageId": "m"}), False),
        ("outgoing", req(1, "session/load", {}), True),
        ("incoming", req(1, "fs/read_text_file", {}), True),
        ("incoming", req(1, "terminal/create", {}), True),
        ("outgoing", req(1, "terminal/cancel", {}), None),
        ("outgoing", prompt(1), None),
        ("incoming", req(1, "session/request_permission", {"toolCall": {}}), True),
        ("incoming", req(1, "session/request_permission", {"title": "t"}), False),
        ("incoming", "junk", None),
    ],
)
def test_detect_v1(direction: str, message: Any, expected: bool | None) -> None:
    assert detect_v1(direction, message) is expected


def _v2_turn() -> list[tuple[str, Any]]:
    return [
        ("incoming", res(1, {"sessionId": "s1"})),
        ("outgoing", prompt(2)),
        ("incoming", up({"sessionUpdate": "user_message", "messageId": "u1", "content": [TEXT]})),
        ("incoming", res(2, {"messageId": "u1"})),
        ("incoming", up({"sessionUpdate": "state_update", "state": "running"})),
        (
            "incoming",
            up({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}),
        ),
    ]


INFO = {"name": "x", "version": "1"}


@pytest.mark.parametrize(
    ("extra_request", "extra_result"),
    [({"clientCapabilities": {}}, {}), ({}, {"agentCapabilities": {}})],
)
def test_a_v2_handshake_wins_over_v1_field_names(extra_request: Msg, extra_result: Msg) -> None:
    # 1.3: "A stream is v1 when the initialize result has protocolVersion: 1"; the capability
    # field names mark v1 only without the handshake (a client may offer both shapes).
    from acp_client import Replayer

    replayer = Replayer()
    request = {"protocolVersion": 2, "capabilities": {}, "info": INFO, **extra_request}
    result = {"protocolVersion": 2, "capabilities": {}, "info": INFO, **extra_result}
    stream = [("outgoing", req(0, "initialize", request)), ("incoming", res(0, result))]
    stream += [("outgoing", req(1, "session/new", {"cwd": "/w", "mcpServers": []}))]
    for direction, message in stream + _v2_turn():
        replayer.feed(direction, message)
    replayer.finish()
    session = replayer.connection.snapshot()["sessions"][0]
    assert session["protocolVersion"] == 2
    assert [e["messageId"] for e in session["timeline"]] == ["u1"]
    assert session["completedTurns"] == ["end_turn"]
    assert replayer.connection.diagnostics == []


def test_v1_field_names_in_an_unanswered_initialize_mark_the_log_v1() -> None:
    from acp_client import Replayer

    replayer = Replayer()
    replayer.feed(
        "outgoing", req(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    )
    replayer.feed("outgoing", req(1, "session/new", {"cwd": "/w", "mcpServers": []}))
    replayer.finish()
    assert replayer.version == 1


def test_bad_direction_is_local_error() -> None:
    from acp_client._errors import LocalProtocolError

    with pytest.raises(LocalProtocolError):
        V1Adapter().feed("sideways", prompt())


# --- properties -------------------------------------------------------------------------------

SIDS = st.sampled_from(["s1", "s2"])
TOOL_IDS = st.sampled_from(["c1", "c2", "c3"])
MSG_IDS = st.one_of(st.none(), st.none(), st.sampled_from(["m1", "m2", "acp-v1:agent:2"]))

OPS = st.one_of(
    st.tuples(st.just("prompt"), SIDS),
    st.tuples(
        st.just("chunk"),
        SIDS,
        st.sampled_from(["user_message", "agent_message", "agent_thought"]),
        MSG_IDS,
    ),
    st.tuples(st.just("tool_call"), SIDS, TOOL_IDS, st.sampled_from([None, {"a": 1}, {"b": 2}])),
    st.tuples(st.just("tool_update"), SIDS, TOOL_IDS, st.sampled_from([None, "completed"])),
    st.tuples(st.just("plan"), SIDS),
    st.tuples(st.just("usage"), SIDS),
    st.tuples(st.just("perm"), SIDS, TOOL_IDS),
    st.tuples(st.just("answer")),
    st.tuples(st.just("result"), st.sampled_from(["end_turn", "cancelled"])),
    st.tuples(st.just("error")),
    st.tuples(st.just("cancel"), SIDS),
    st.tuples(st.just("load"), SIDS),
    st.tuples(st.just("load_result")),
    st.tuples(st.just("mode"), SIDS, st.sampled_from(["a", "b"])),
    st.tuples(st.just("compaction"), SIDS, st.sampled_from(["k1", "k2"])),
    st.tuples(st.just("terminal"), SIDS),
)


OPTIONS = [{"optionId": "ok", "name": "OK", "kind": "allow_once"}]


def build_stream(ops: list[tuple[Any, ...]]) -> list[tuple[str, Msg]]:
    stream: list[tuple[str, Msg]] = []
    next_id = 100
    prompts: list[int] = []
    perms: list[int] = []
    loads: list[int] = []
    for op in ops:
        kind = op[0]
        next_id += 1
        if kind == "prompt":
            prompts.append(next_id)
            stream.append(outg(prompt(next_id, op[1])))
        elif kind == "chunk":
            stream.append(inc(chunk(op[2], "t", op[3], op[1])))
        elif kind == "tool_call":
            update = {"sessionUpdate": "tool_call", "toolCallId": op[2], "title": "T"}
            if op[3] is not None:
                update["_meta"] = op[3]
            stream.append(inc(up(update, op[1])))
        elif kind == "tool_update":
            stream.append(
                inc(
                    up(
                        {
                            "sessionUpdate": "tool_call_update",
                            "toolCallId": op[2],
                            "status": op[3],
                            "title": None,
                        },
                        op[1],
                    )
                )
            )
        elif kind == "plan":
            stream.append(inc(up({"sessionUpdate": "plan", "entries": []}, op[1])))
        elif kind == "usage":
            stream.append(inc(up({"sessionUpdate": "usage_update", "used": 1, "size": 9}, op[1])))
        elif kind == "perm":
            perms.append(next_id)
            stream.append(
                inc(
                    req(
                        next_id,
                        "session/request_permission",
                        {"sessionId": op[1], "toolCall": {"toolCallId": op[2]}, "options": OPTIONS},
                    )
                )
            )
        elif kind == "answer" and perms:
            stream.append(outg(res(perms.pop(0), {"outcome": {"outcome": "cancelled"}})))
        elif kind == "result":
            stream.append(inc(res(prompts.pop(0) if prompts else next_id, {"stopReason": op[1]})))
        elif kind == "error" and prompts:
            stream.append(inc(err(prompts.pop(0))))
        elif kind == "cancel":
            stream.append(
                outg({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": op[1]}})
            )
        elif kind == "load":
            loads.append(next_id)
            stream.append(
                outg(
                    req(next_id, "session/load", {"sessionId": op[1], "cwd": "/", "mcpServers": []})
                )
            )
        elif kind == "load_result" and loads:
            stream.append(inc(res(loads.pop(0), None)))
        elif kind == "mode":
            stream.append(
                inc(up({"sessionUpdate": "current_mode_update", "currentModeId": op[2]}, op[1]))
            )
        elif kind == "compaction":
            stream.append(
                inc(
                    up(
                        {
                            "sessionUpdate": "compaction_update",
                            "compactionId": op[2],
                            "status": "completed",
                        },
                        op[1],
                    )
                )
            )
        elif kind == "terminal":
            stream.append(
                inc(req(next_id, "terminal/create", {"sessionId": op[1], "command": "ls"}))
            )
            stream.append(outg(res(next_id, {"terminalId": f"t{next_id}"})))
    return stream


STREAMS = st.lists(OPS, max_size=40).map(build_stream)


@settings(max_examples=200, deadline=None)
@given(STREAMS, st.booleans())
def test_property_deterministic_and_pure(stream: list[tuple[str, Msg]], agent_only: bool) -> None:
    if agent_only:
        stream = [(d, m) for d, m in stream if d == "incoming"]
    before = copy.deepcopy(stream)
    first = json.dumps(run(stream, V1Adapter(agent_only=agent_only)))
    second = json.dumps(run(copy.deepcopy(stream), V1Adapter(agent_only=agent_only)))
    assert first == second
    assert stream == before  # the input is never mutated


@settings(max_examples=200, deadline=None)
@given(STREAMS, st.booleans())
def test_property_chunks_have_ids_and_prompts_answered_once(
    stream: list[tuple[str, Msg]], agent_only: bool
) -> None:
    if agent_only:
        stream = [(d, m) for d, m in stream if d == "incoming"]
    out = run(stream, V1Adapter(agent_only=agent_only))
    for update in updates(out):
        if update["sessionUpdate"] in (
            "user_message_chunk",
            "agent_message_chunk",
            "agent_thought_chunk",
        ):
            assert isinstance(update["messageId"], str)
        assert update["sessionUpdate"] not in ("tool_call", "plan", "current_mode_update")
    prompt_ids = {
        m["id"] for d, m in out if d == "outgoing" and m.get("method") == "session/prompt"
    }
    answers = [
        m["id"]
        for d, m in out
        if d == "incoming" and "method" not in m and m.get("id") in prompt_ids
    ]
    assert len(answers) == len(set(answers))
    for _, message in out:
        assert message["jsonrpc"] == "2.0"


def _v1_connection() -> list[Msg]:
    return [
        req(0, "initialize", {"protocolVersion": 1, "clientInfo": {"name": "c", "version": "1"}}),
        res(0, {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}),
        req(1, "session/new", {"cwd": "/", "mcpServers": []}),
        res(1, {"sessionId": "s1"}),
        prompt(2, "s1", "a"),
        chunk("agent_message", "x", sid="s1"),
        res(2, {"stopReason": "end_turn"}),
    ]


def _v2_connection() -> list[Msg]:
    info = {"name": "c", "version": "1"}
    echo = {
        "sessionUpdate": "user_message",
        "messageId": "u1",
        "content": [{"type": "text", "text": "b"}],
    }
    return [
        req(0, "initialize", {"protocolVersion": 2, "capabilities": {}, "info": info}),
        res(0, {"protocolVersion": 2, "capabilities": {}, "info": info}),
        req(1, "session/new", {"cwd": "/", "mcpServers": []}),
        res(1, {"sessionId": "s2"}),
        prompt(2, "s2", "b"),
        res(2, {"messageId": "u1"}),
        up(echo, "s2"),
    ]


@pytest.mark.parametrize("v1_first", [True, False])
def test_each_connection_of_a_log_is_detected_on_its_own(v1_first: bool) -> None:
    # LOG-FORMATS.md 1.4: an initialize request starts a new connection; V1-TO-V2.md 1.3:
    # one connection speaks one version.
    parts = [_v1_connection(), _v2_connection()]
    if not v1_first:
        parts.reverse()
    log = "".join(json.dumps(m) + "\n" for part in parts for m in part).encode()
    snap = replay_log(log).snapshot()
    sessions = {s["sessionId"]: s for s in snap["sessions"]}
    assert snap["diagnostics"] == []
    assert (sessions["s1"]["protocolVersion"], sessions["s2"]["protocolVersion"]) == (1, 2)
    assert [e["messageId"] for e in sessions["s2"]["timeline"]] == ["u1"]
    assert sessions["s1"]["timeline"][0]["messageId"].startswith("acp-v1:user:")


def test_a_session_continued_in_a_second_v1_connection_keeps_counting_its_ids() -> None:
    # V1-TO-V2.md 4.1: one counter per session, in stream order; a reconnect (a second
    # initialize, LOG-FORMATS.md 1.4) does not restart it.
    def turn(rid: int, text: str, reply: str) -> list[Msg]:
        return [
            prompt(rid, "s1", text),
            chunk("agent_message", reply, sid="s1"),
            res(rid, {"stopReason": "end_turn"}),
        ]

    init = req(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    init_ok = res(0, {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}})
    stream = [
        init,
        init_ok,
        req(1, "session/new", {"cwd": "/", "mcpServers": []}),
        res(1, {"sessionId": "s1"}),
        *turn(7, "first", "a"),
        init,
        init_ok,
        req(1, "session/resume", {"sessionId": "s1", "cwd": "/"}),
        res(1, {}),
        *turn(2, "second", "b"),
    ]
    log = "".join(json.dumps(m) + "\n" for m in stream).encode()
    session = replay_log(log).snapshot()["sessions"][0]
    assert [(e["messageId"], e["content"][0]["text"]) for e in session["timeline"]] == [
        ("acp-v1:user:1", "first"),
        ("acp-v1:agent:2", "a"),
        ("acp-v1:user:3", "second"),
        ("acp-v1:agent:4", "b"),
    ]


@pytest.mark.parametrize(("value", "kind"), [("fast", "id"), (True, "boolean")])
def test_set_config_option_without_type_gets_v2s_required_type(value: Any, kind: str) -> None:
    # V1-TO-V2.md 3.1 (result list translated, REPLACE); v1 makes `type` optional (a select
    # value by default), v2 requires it.
    params = {"sessionId": S1, "configId": "model", "value": value}
    out = run([outg(req(6, "session/set_config_option", params))])
    assert out == [outg(req(6, "session/set_config_option", {**params, "type": kind}))]


def _agent_stdout() -> list[Msg]:
    """What a v1 agent wrote during two turns, without the client's side (V1-TO-V2.md 9)."""
    return [
        res(1, {"sessionId": S1}),
        chunk("agent_message", "a"),
        up({"sessionUpdate": "tool_call", "toolCallId": "c", "title": "T"}),
        res(2, {"stopReason": "end_turn"}),
        chunk("agent_message", "b"),
        res(3, {"stopReason": "cancelled"}),
    ]


@pytest.mark.parametrize("protocol", [None, 1])
def test_replay_of_an_agent_only_v1_log_synthesises_running_and_counts_turns(
    protocol: int | None,
) -> None:
    log = "".join(json.dumps(m) + "\n" for m in _agent_stdout()).encode()
    session = replay_log(log, protocol=protocol).snapshot()["sessions"][0]
    assert session["completedTurns"] == ["end_turn", "cancelled"]
    assert session["state"] == {"state": "idle", "stopReason": "cancelled"}


def test_replay_of_a_v1_log_with_client_traffic_synthesises_no_running_before_a_prompt() -> None:
    # V1-TO-V2.md 9: a log that starts mid-turn applies the updates before the first prompt
    # request without synthesised state; only an agent-only log gets degraded mode.
    stream = [chunk("agent_message", "early"), res(2, {"stopReason": "end_turn"}), prompt(3)]
    stream += [chunk("agent_message", "b"), res(3, {"stopReason": "end_turn"})]
    log = "".join(json.dumps(m) + "\n" for m in stream).encode()
    session = replay_log(log, protocol=1).snapshot()["sessions"][0]
    assert session["completedTurns"] == ["end_turn"]


def test_client_traffic_after_many_agent_only_records_ends_degraded_mode() -> None:
    # The probe settles after _DECIDE_WITHIN records; a client message later still counts.
    stream = [chunk("agent_message", "x") for _ in range(10_001)]
    stream += [prompt(1), chunk("agent_message", "b"), res(1, {"stopReason": "end_turn"})]
    stream += [up({"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "completed"})]
    log = "".join(json.dumps(m) + "\n" for m in stream).encode()
    session = replay_log(log, protocol=1).snapshot()["sessions"][0]
    assert session["state"] == {"state": "idle", "stopReason": "end_turn"}


def test_a_prompt_left_unanswered_by_a_dead_connection_is_dropped_at_the_next_one() -> None:
    # LOG-FORMATS 1.10: "An initialize request first empties all tables (a new connection;
    # requests left unanswered are dropped)"; V1-TO-V2 9: after a load no turn is in flight.
    init = {"protocolVersion": 1, "clientCapabilities": {}}
    new = {"cwd": "/p", "mcpServers": []}
    commands = up({"sessionUpdate": "available_commands_update", "availableCommands": []})
    stream = [
        ("outgoing", req(0, "initialize", init)),
        ("incoming", res(0, {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}})),
        ("outgoing", req(1, "session/new", new)),
        ("incoming", res(1, {"sessionId": "s1"})),
        ("outgoing", prompt(2)),  # the agent dies: never answered
        ("outgoing", req(0, "initialize", init)),
        ("incoming", res(0, {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}})),
        ("outgoing", req(1, "session/load", {"sessionId": "s1", **new})),
        ("incoming", res(1, None)),
        ("incoming", commands),
    ]
    updates_out = updates(run(stream))
    assert [u["sessionUpdate"] for u in updates_out] == [
        "state_update",
        "available_commands_update",
    ]
    assert updates_out[0]["state"] == "idle"


def test_strict_replay_stops_at_the_v1_adapters_first_error() -> None:
    # LOG-FORMATS 1.5: strict stops at the first `error` diagnostic, the adapter's included.
    lines = [
        {"direction": "outgoing", "message": req(0, "initialize", {"protocolVersion": 1})},
        {"direction": "incoming", "message": res(0, {"protocolVersion": 1})},
        {"direction": "incoming", "message": up({"sessionUpdate": "current_mode_update"})},
        {"direction": "incoming", "message": chunk("agent_message", "after")},
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    lenient = replay_log(data)
    assert [d.code for d in lenient.diagnostics if d.severity == "error"] == ["v1-mode-invalid"]
    assert lenient.snapshot()["sessions"][0]["timeline"] != []
    strict = replay_log(data, strict=True)
    assert strict.stopped_early and not strict.ok
    assert strict.snapshot()["sessions"][0]["timeline"] == []
    assert strict.snapshot()["sessions"][0]["protocolVersion"] == 1
    # the error found while flushing what was held back (no initialize: undecided till
    # the end): still a v1 session
    agent_only = b"".join(json.dumps(line).encode() + b"\n" for line in lines[2:])
    held = replay_log(agent_only, strict=True)
    assert held.stopped_early
    assert [s["protocolVersion"] for s in held.snapshot()["sessions"]] == [1]


def test_a_tool_call_update_whose_content_is_no_array_leaves_the_content_alone() -> None:
    # schema-v1 ToolCallUpdate.content: x-deserialize-default-on-error (an invalid value is
    # "no change"), as for `locations`; 6.3: present values are copied.
    item = {"type": "content", "content": TEXT}
    stream = [
        inc(
            up({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "t", "content": [item]})
        ),
        inc(up({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "content": "oops"})),
    ]
    conn = Connection(live=False)
    for direction, message in run(stream):
        conn.receive_message(message, direction)
    (entry,) = conn.snapshot()["sessions"][0]["timeline"]
    assert entry["content"] == [item]
    assert [d.code for d in conn.diagnostics] == ["lenient-default"]


def test_provenance_tells_the_adapters_events_from_the_agents() -> None:
    # V1-TO-V2 1.2: everything the adapter produced or changed carries `v1-adapter` and the
    # raw v1 message it came from, outside the protocol fields; a pass-through carries none.
    messages = [
        *_v1_connection()[:5],  # handshake, session/new, the prompt
        chunk("agent_message", "x", sid="s1"),
        up({"sessionUpdate": "session_info_update", "title": "T"}, "s1"),  # the same in v2
        up({"sessionUpdate": "x_custom", "v": 1}, "s1"),  # unknown to both: passed on
        up({"sessionUpdate": "state_update", "state": "idle"}, "s1"),  # v2-only name: wrapped
        res(2, {"stopReason": "end_turn"}),
    ]
    replayer = Replayer(provenance=True)
    events = []
    for line, message in enumerate(messages, 1):
        direction = (
            "outgoing"
            if "method" in message
            and "params" in message
            and (message["method"] in ("initialize", "session/new", "session/prompt"))
            else "incoming"
        )
        events += replayer.feed(direction, message, line=line)
    events += replayer.finish()
    origins = replayer.origins
    assert origins is not None and all(isinstance(o, AdapterOrigin) for o in origins)
    assert {o.tag for o in origins} == {"v1-adapter"}
    tagged = [e for o in origins for e in o.events]
    assert set(map(id, tagged)) <= set(map(id, events))
    by_kind = {type(e).__name__: o for o in origins for e in o.events}
    # the minted id of the agent's chunk, the synthetic acceptance, echo and states
    assert by_kind["MessageChunkAppended"].source is messages[5]
    assert by_kind["MessageChunkAppended"].line == 6
    assert by_kind["PromptAccepted"].source is messages[5]  # inserted when the chunk came
    assert "StateChanged" in by_kind
    # the info update went through untouched: no origin
    assert "SessionInfoUpdated" not in by_kind
    # nor the custom update, nor the session/new result the adapter rebuilt unchanged
    assert {o.line for o in origins}.isdisjoint({4, 8})
    assert 9 in {o.line for o in origins}  # kept raw although v2 knows the name (3.2)
    assert any(type(e).__name__ == "SessionInfoUpdated" for e in events)
    assert Replayer().origins is None  # off by default


@pytest.mark.parametrize("result_first", [True, False])
def test_a_v1_close_answered_before_the_prompt_result_ends_the_work_cancelled(
    result_first: bool,
) -> None:
    # v1 lets the close answer come before the cancelled prompt's result; in v2 the work
    # ends with idle `cancelled` before the close succeeds (A18), and nothing follows it.
    close = req(3, "session/close", {"sessionId": S1})
    ended = [res(2, {"stopReason": "cancelled"}), res(3, {})]
    log = _v1_log(
        prompt(2, S1, "a"),
        chunk("agent_message", "x"),
        close,
        *(ended if result_first else ended[::-1]),
    )
    snap = replay_log(log).snapshot()
    (session,) = snap["sessions"]
    assert snap["diagnostics"] == []
    assert session["completedTurns"] == ["cancelled"]
    assert session["state"]["state"] == "idle" and session["closed"] is True


def test_a_v1_close_answered_not_found_also_ends_the_work() -> None:
    # -32002 counts as a successful close (C9): the work ends the same way.
    log = _v1_log(
        prompt(2, S1, "a"),
        chunk("agent_message", "x"),
        req(3, "session/close", {"sessionId": S1}),
        err(3, -32002, "no such session"),
        res(2, {"stopReason": "cancelled"}),
    )
    snap = replay_log(log).snapshot()
    (session,) = snap["sessions"]
    assert session["completedTurns"] == ["cancelled"] and session["closed"] is True
    assert session["state"]["state"] == "idle" and snap["diagnostics"] == []


def test_a_prompt_held_when_its_session_closed_is_answered_not_run() -> None:
    # Nothing of the prompt had arrived when the close succeeded: v2 answers such a held
    # prompt -32800 (A18); it is never inserted, and nothing follows the close.
    log = _v1_log(
        prompt(2, S1, "a"),
        req(3, "session/close", {"sessionId": S1}),
        res(3, {}),
        res(2, {"stopReason": "cancelled"}),
    )
    snap = replay_log(log).snapshot()
    (session,) = snap["sessions"]
    assert [p["status"] for p in session["prompts"]] == ["rejected"]
    assert session["timeline"] == [] and session["closed"] is True
    assert session.get("state", {"state": "idle"})["state"] == "idle"
    assert snap["diagnostics"] == []


def test_a_session_loaded_again_after_its_close_runs_turns_as_before() -> None:
    log = _v1_log(
        prompt(2, S1, "a"),
        chunk("agent_message", "x"),
        res(2, {"stopReason": "end_turn"}),
        req(3, "session/close", {"sessionId": S1}),
        res(3, {}),
        req(4, "session/load", {"sessionId": S1, "cwd": "/", "mcpServers": []}),
        res(4, {}),
        prompt(5, S1, "b"),
        chunk("agent_message", "y"),
        res(5, {"stopReason": "end_turn"}),
    )
    snap = replay_log(log).snapshot()
    (session,) = snap["sessions"]
    assert session["state"] == {"state": "idle", "stopReason": "end_turn"}
    assert session["completedTurns"][-1] == "end_turn"
    assert "closed" not in session and snap["diagnostics"] == []  # open again (12.3)


def test_a_permission_request_after_a_v1_close_starts_no_work() -> None:
    # The close ended the turn; a permission request the agent still sends after it (a
    # violation, kept) does not make the closed session wait for the user again.
    log = _v1_log(
        prompt(2, S1, "a"),
        chunk("agent_message", "x"),
        req(3, "session/close", {"sessionId": S1}),
        res(3, {}),
        req(
            9,
            "session/request_permission",
            {
                "sessionId": S1,
                "toolCall": {"toolCallId": "c"},
                "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
            },
        ),
    )
    (session,) = replay_log(log).snapshot()["sessions"]
    assert session["state"]["state"] == "idle" and session["closed"] is True


def _terminal_then_load(*after_load: Msg) -> bytes:
    run_tool = {
        "sessionUpdate": "tool_call",
        "toolCallId": "t",
        "title": "Run",
        "content": [{"type": "terminal", "terminalId": "T1"}],
    }
    return _v1_log(
        req(1, "session/new", {"cwd": "/w", "mcpServers": []}),
        res(1, {"sessionId": S1}),
        req(2, "session/prompt", {"sessionId": S1, "prompt": [TEXT]}),
        req(10, "terminal/create", {"sessionId": S1, "command": "ls", "cwd": "/w"}),
        res(10, {"terminalId": "T1"}),
        up(run_tool),
        req(11, "terminal/output", {"sessionId": S1, "terminalId": "T1"}),
        res(11, {"output": "x", "truncated": False, "exitStatus": {"exitCode": 0}}),
        res(2, {"stopReason": "end_turn"}),
        req(3, "session/load", {"sessionId": S1, "cwd": "/w", "mcpServers": []}),
        up({"sessionUpdate": "user_message_chunk", "content": TEXT}),
        *after_load,
        up(run_tool),
        res(3, None),
    )


@pytest.mark.parametrize(
    "after_load",
    [
        [],  # the replayed tool call names the terminal again
        [  # new traffic for it first: all that is known, not only the new output
            req(12, "terminal/output", {"sessionId": S1, "terminalId": "T1"}),
            res(12, {"output": "x", "truncated": False, "exitStatus": {"exitCode": 0}}),
        ],
    ],
)
def test_a_terminal_a_load_replayed_keeps_the_data_its_traffic_gave(after_load: list[Msg]) -> None:
    # 3.4: never a v2 terminal with no data; the replay reset it on the v2 side, but the
    # adapter still knows what `terminal/create` and `terminal/output` said (section 8).
    snap = replay_log(_terminal_then_load(*after_load)).snapshot()
    (session,) = snap["sessions"]
    (terminal,) = session["terminals"]
    assert terminal == {
        "terminalId": "T1",
        "command": "ls",
        "cwd": "/w",
        "output": base64.b64encode(b"x").decode(),
        "exitStatus": {"exitCode": 0, "signal": None},
        "truncatedBytes": 0,
    }
    (tool,) = [e for e in session["timeline"] if e["entry"] == "toolCall"]
    assert tool["content"] == [{"type": "terminal", "terminalId": "T1"}]
    assert snap["diagnostics"] == []


@pytest.mark.parametrize("bad", [{}, [], 5, None])
def test_a_tool_call_update_with_a_tool_call_id_of_another_type_is_left_to_v2(bad: Any) -> None:
    log = _v1_log(up({"sessionUpdate": "tool_call_update", "toolCallId": bad, "status": "failed"}))
    snap = replay_log(log).snapshot()
    assert [d["code"] for d in snap["diagnostics"]] == ["update-rejected"]
