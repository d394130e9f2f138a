# Implements the stateless value mappings of V1-TO-V2.md: section 3.3 (values), 3.4 (tool-call
# content), 6.0 (`_meta` replacement patches), 6.1 (config options), 6.2 (the synthetic mode
# option), 6.3 (tool calls), 6.4 (commands, plans), 7 (permission requests) and the capability
# row of 3.1. Everything here is a pure function of its arguments; the stateful parts live in
# `adapter.py`.
"""Pure v1 -> v2 value translations used by the v1 adapter."""

from __future__ import annotations

import base64
import shlex
from collections.abc import Callable
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from .gitpatch import Operation, git_patch

__all__ = [
    "MISSING",
    "agent_capabilities",
    "client_initialize_params",
    "commands",
    "config_options",
    "has_real_mode_option",
    "initialize_result",
    "locations",
    "mcp_servers",
    "meta_replacement",
    "meta_stored_after_patch",
    "mode_option",
    "modes_list",
    "plan_update",
    "strip_nulls",
    "terminal_update",
    "tool_call_content",
    "tool_call_full",
]

JSON = Any
"""Any decoded JSON value."""

MISSING: Any = object()
"""Marks an absent key (as opposed to a JSON ``null``)."""

# Called with (code, message, path) for input that was dropped or defaulted.
Report = Callable[[str, str, str], None]


def _ignore(code: str, message: str, path: str) -> None:
    return None


def _each(items: JSON, translate: Callable[[JSON], JSON]) -> JSON:
    """An array with ``translate`` applied to each item; any other value unchanged."""
    if not isinstance(items, list):
        return items
    return [translate(item) for item in items]


# --- section 6.0: `_meta` as a replacement patch -------------------------------------------


def meta_replacement(
    stored: dict[str, JSON] | None, new: JSON, *, full: bool
) -> tuple[JSON, dict[str, JSON] | None]:
    """Turn a v1 replacing ``_meta`` into a v2 META-PATCH value.

    Returns ``(patch, stored_afterwards)``; ``patch`` is :data:`MISSING` when the key must be
    omitted. On a full replacement (``full``) an absent or ``null`` ``_meta`` clears
    (``null``); otherwise absent leaves it unchanged and ``null`` clears.
    """
    if isinstance(new, dict):
        patch = dict(new)
        for key in stored or {}:
            if key not in new:
                patch[key] = None
        return patch, dict(new)
    if new is MISSING and not full:
        return MISSING, stored
    return None, None


def meta_stored_after_patch(stored: dict[str, JSON] | None, patch: JSON) -> dict[str, JSON] | None:
    """The ``_meta`` a v2 reducer holds after applying ``patch`` by top-level key."""
    if patch is None:
        return None
    if not isinstance(patch, dict):
        return stored
    merged = dict(stored or {})
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


# --- section 3.1: initialize --------------------------------------------------------------


def agent_capabilities(v1: JSON) -> dict[str, JSON]:
    """v1 ``agentCapabilities`` -> v2 ``capabilities`` (presence-style objects)."""
    caps = v1 if isinstance(v1, dict) else {}
    prompt_v1 = caps.get("promptCapabilities")
    prompt_v1 = prompt_v1 if isinstance(prompt_v1, dict) else {}
    prompt: dict[str, JSON] = {
        k: {} for k in ("image", "audio", "embeddedContext") if prompt_v1.get(k) is True
    }
    mcp_v1 = caps.get("mcpCapabilities")
    mcp: dict[str, JSON] = {"stdio": {}}  # v1 stdio MCP is implicit
    for transport in ("http", "sse"):  # v2 has no `sse`: kept as an unknown field (C6)
        if isinstance(mcp_v1, dict) and mcp_v1.get(transport) is True:
            mcp[transport] = {}
    session: dict[str, JSON] = {"prompt": prompt, "mcp": mcp}
    session_v1 = caps.get("sessionCapabilities")
    if isinstance(session_v1, dict):
        for key in ("delete", "additionalDirectories"):
            value = session_v1.get(key)
            if isinstance(value, dict):
                session[key] = value
    out: dict[str, JSON] = {"session": session}
    if isinstance(caps.get("_meta"), dict):
        out["_meta"] = caps["_meta"]
    return out


def _info(v1: dict[str, JSON], v1_key: str) -> JSON:
    """v2's required ``info``: v1's optional ``clientInfo``/``agentInfo``, else empty names.

    A v1 peer that does not say who it is still speaks valid v1; its ``initialize`` must not
    turn into an invalid v2 message (whose capabilities would then be lost).
    """
    for key in ("info", v1_key):
        if isinstance(v1.get(key), dict):
            return v1[key]
    return {"name": "", "version": ""}


def auth_method(item: JSON) -> JSON:
    """A v1 ``AuthMethod`` in v2 shape.

    ``id`` becomes ``methodId``, no ``type`` means ``agent`` (schema-v1 ``AuthMethod``), and
    a terminal method's ``env`` map becomes a list of ``EnvVariable``s.
    """
    if not isinstance(item, dict):
        return item
    out = dict(item)
    if "methodId" not in out and "id" in out:
        out["methodId"] = out.pop("id")
    out.setdefault("type", "agent")
    env = out.get("env")
    if isinstance(env, dict):
        out["env"] = [{"name": name, "value": value} for name, value in env.items()]
    return out


def _initialize_shape(v1: dict[str, JSON], v1_info: str, v1_capabilities: str) -> dict[str, JSON]:
    """An ``initialize`` message's keys as they are, but for v2's ``info`` and capabilities."""
    out: dict[str, JSON] = {
        k: v for k, v in v1.items() if k not in (v1_capabilities, v1_info, "capabilities", "info")
    }
    out["info"] = _info(v1, v1_info)
    return out


def initialize_result(result: dict[str, JSON]) -> dict[str, JSON]:
    """A v1 ``initialize`` result in v2 shape; ``protocolVersion`` is kept as received."""
    out = _initialize_shape(result, "agentInfo", "agentCapabilities")
    methods = result.get("authMethods")
    if isinstance(methods, list):
        out["authMethods"] = [auth_method(item) for item in methods]
    if isinstance(result.get("capabilities"), dict):
        out["capabilities"] = result["capabilities"]
    else:
        out["capabilities"] = agent_capabilities(result.get("agentCapabilities"))
    return out


def client_initialize_params(params: dict[str, JSON]) -> dict[str, JSON]:
    """v1 ``initialize`` params (``clientInfo``, ``clientCapabilities``) in v2 shape."""
    out = _initialize_shape(params, "clientInfo", "clientCapabilities")
    if isinstance(params.get("capabilities"), dict):
        out["capabilities"] = params["capabilities"]
        return out
    v1 = params.get("clientCapabilities")
    if not isinstance(v1, dict):
        return out
    caps: dict[str, JSON] = {}
    auth = v1.get("auth")
    if isinstance(auth, dict) and auth.get("terminal") is True:
        caps["auth"] = {"terminal": {}}
    if isinstance(v1.get("elicitation"), dict):
        caps["elicitation"] = v1["elicitation"]
    if isinstance(v1.get("_meta"), dict):
        caps["_meta"] = v1["_meta"]
    out["capabilities"] = caps
    return out


def mcp_servers(params: dict[str, JSON]) -> dict[str, JSON]:
    """Setup params with v1's untagged stdio MCP servers tagged ``type: "stdio"`` (v2 form)."""
    servers = params.get("mcpServers")
    if not isinstance(servers, list):
        return params
    tagged = [
        {"type": "stdio", **server} if isinstance(server, dict) and "type" not in server else server
        for server in servers
    ]
    return {**params, "mcpServers": tagged}


# --- sections 6.1 and 6.2: config options and modes -----------------------------------------


def _config_option(option: JSON) -> JSON:
    if not isinstance(option, dict):
        return option
    out = dict(option)
    if "configId" not in out and "id" in out:
        out["configId"] = out.pop("id")
    if "options" in out:
        out["options"] = _each(out["options"], _option_group)
    return out


def _option_group(item: JSON) -> JSON:
    if isinstance(item, dict) and "groupId" not in item and "group" in item:
        item = dict(item)
        item["groupId"] = item.pop("group")
    return item


def config_options(options: JSON) -> list[JSON]:
    """Translate a v1 ``configOptions`` list (``id`` -> ``configId``, ``group`` -> ``groupId``)."""
    if not isinstance(options, list):
        return []
    return [_config_option(option) for option in options]


def has_real_mode_option(options: list[JSON]) -> bool:
    """Whether the Agent's own options contain one with ``category: "mode"``."""
    return any(isinstance(o, dict) and o.get("category") == "mode" for o in options)


def mode_option(
    current: str, modes: list[dict[str, JSON]], agent_options: list[JSON]
) -> dict[str, JSON]:
    """The synthetic select option standing for v1 session modes (section 6.2)."""
    taken = any(isinstance(o, dict) and o.get("configId") == "mode" for o in agent_options)
    values = [dict(mode) for mode in modes]
    if not any(v.get("value") == current for v in values):
        values.append({"value": current, "name": current})
    return {
        "configId": "mode#v1" if taken else "mode",
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": current,
        "options": values,
    }


def modes_list(available: JSON) -> list[dict[str, JSON]]:
    """v1 ``availableModes`` as select values ``{value, name, description?}``."""
    out: list[dict[str, JSON]] = []
    for mode in available if isinstance(available, list) else []:
        if not isinstance(mode, dict) or not isinstance(mode.get("id"), str):
            continue
        if any(v["value"] == mode["id"] for v in out):
            continue
        name = mode.get("name")
        value: dict[str, JSON] = {
            "value": mode["id"],
            "name": name if isinstance(name, str) else mode["id"],
        }
        if isinstance(mode.get("description"), str):
            value["description"] = mode["description"]
        out.append(value)
    return out


# --- section 6.4: commands and plans --------------------------------------------------------


def _command(command: JSON) -> JSON:
    if isinstance(command, dict):
        command = dict(command)
        command.setdefault("type", "command")
        hint = command.get("input")
        if isinstance(hint, dict) and "type" not in hint:
            command["input"] = {"type": "text", **hint}
    return command


def commands(available: JSON) -> JSON:
    """Give each v1 command ``type: "command"`` and each input ``type: "text"``."""
    return _each(available, _command)


def plan_update(update: dict[str, JSON], report: Report = _ignore) -> dict[str, JSON]:
    """A v1 ``plan`` update as a v2 ``plan_update`` of the plan ``main``."""
    entries = update.get("entries")
    if not isinstance(entries, list):
        report("v1-plan-entries-invalid", "plan `entries` is not an array; used []", "entries")
        entries = []
    plan: dict[str, JSON] = {"type": "items", "planId": "main", "entries": entries}
    if "_meta" in update:
        plan["_meta"] = update["_meta"]
    return {"sessionUpdate": "plan_update", "plan": plan}


# --- sections 3.3, 3.4 and 6.3: tool calls --------------------------------------------------


def _is_absolute(path: str) -> bool:
    return PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute()


def _diff(item: dict[str, JSON]) -> dict[str, JSON]:
    path: str = item["path"]
    old_text = item.get("oldText")
    new_text = item["newText"]
    operation: Operation
    if old_text is None:
        operation = "add"
    elif item.get("deleted") is True:
        operation = "delete"
    else:
        operation = "modify"
    out: dict[str, JSON] = {
        "type": "diff",
        "changes": [{"operation": operation, "path": path, "fileType": "text"}],
    }
    if _is_absolute(path) and (old_text is None or isinstance(old_text, str)):
        text = git_patch(path, old_text or "", new_text, operation)
        if text is not None:
            out["patch"] = {"format": "git_patch", "text": text}
    if "_meta" in item:
        out["_meta"] = item["_meta"]
    return out


def tool_call_content(
    items: JSON, terminal_known: Callable[[str], bool], report: Report = _ignore
) -> list[JSON]:
    """Translate v1 tool-call content items (section 3.4); malformed items are dropped."""
    out: list[JSON] = []
    for index, item in enumerate(items if isinstance(items, list) else []):
        kind = item.get("type") if isinstance(item, dict) else None
        valid = isinstance(item, dict) and isinstance(kind, str)
        if kind == "content":
            valid = isinstance(item.get("content"), dict)
        elif kind == "diff":
            valid = isinstance(item.get("path"), str) and isinstance(item.get("newText"), str)
            old = item.get("oldText")
            if valid and old is not None and not isinstance(old, str):
                # v1's `oldText` decodes leniently (default on error): absent, a new file
                report(
                    "lenient-default",
                    "malformed `oldText` ignored",
                    f"content[{index}].oldText",
                )
                item = {k: v for k, v in item.items() if k != "oldText"}
        elif kind == "terminal":
            valid = isinstance(item.get("terminalId"), str)
        if not valid:
            report(
                "v1-tool-content-malformed",
                "malformed tool-call content item dropped",
                f"content[{index}]",
            )
            continue
        if kind == "diff":
            out.append(_diff(item))
        elif kind == "terminal" and not terminal_known(item["terminalId"]):
            out.append({**item, "type": "_acp_v1_terminal"})
        else:
            out.append(item)
    return out


def _location(item: JSON) -> JSON:
    line = item.get("line") if isinstance(item, dict) else None
    if isinstance(line, int) and not isinstance(line, bool) and line < 1:
        return {k: v for k, v in item.items() if k != "line"}
    return item


def locations(items: JSON) -> JSON:
    """Drop ``line: 0`` (v2 lines are 1-based); everything else unchanged."""
    return _each(items, _location)


def strip_nulls(
    update: dict[str, JSON], terminal_known: Callable[[str], bool], report: Report = _ignore
) -> dict[str, JSON]:
    """A v1 ``tool_call_update`` body with ``null`` fields removed and content translated."""
    out = {k: v for k, v in update.items() if v is not None or k == "toolCallId"}
    if isinstance(out.get("content"), list):
        # not an array: left for the v2 decoder, whose default-on-error keeps the content
        out["content"] = tool_call_content(out["content"], terminal_known, report)
    if "locations" in out:
        out["locations"] = locations(out["locations"])
    return out


_FULL_FIELD_TYPES = (("kind", str), ("status", str), ("content", list), ("locations", list))


def tool_call_full(
    update: dict[str, JSON], terminal_known: Callable[[str], bool], report: Report = _ignore
) -> dict[str, JSON]:
    """A v1 ``tool_call`` with every field explicit (``_meta`` is set by the caller)."""
    for key, fits in _FULL_FIELD_TYPES:
        value = update.get(key)
        if value is not None and not isinstance(value, fits):
            # as the v2 side reports a lenient field of a tool_call_update
            report(
                "lenient-default",
                f"malformed `{key}` replaced by its default",
                f"$.params.update.{key}",
            )
    out = dict(update)
    out["sessionUpdate"] = "tool_call_update"
    out["title"] = update.get("title")
    out["name"] = update.get("name")
    out["kind"] = update.get("kind") if isinstance(update.get("kind"), str) else "other"
    status = update.get("status")
    out["status"] = status if isinstance(status, str) else "pending"
    out["content"] = tool_call_content(update.get("content"), terminal_known, report)
    located = update.get("locations")
    out["locations"] = locations(located) if isinstance(located, list) else []
    out["rawInput"] = update.get("rawInput")
    out["rawOutput"] = update.get("rawOutput")
    return out


# --- section 8: display terminals rebuilt from the client's `terminal/*` answers -------------


def _exit_status(value: dict[str, JSON]) -> dict[str, JSON]:
    return {"exitCode": value.get("exitCode"), "signal": value.get("signal")}


def terminal_update(
    method: str, params: dict[str, JSON], result: dict[str, JSON]
) -> tuple[dict[str, JSON] | None, bool | None]:
    """The ``terminal_update`` for the client's success ``result`` to a v1 ``terminal/*`` call.

    Returns ``(update or None, truncated)``; ``truncated`` is the ``terminal/output`` result's
    flag (``None`` for other methods or without output).
    """
    update: dict[str, JSON] = {"sessionUpdate": "terminal_update"}
    if method == "terminal/create":
        if not isinstance(result.get("terminalId"), str):
            return None, None
        command = params.get("command")
        args = params.get("args")
        args = [a for a in args if isinstance(a, str)] if isinstance(args, list) else []
        update["terminalId"] = result["terminalId"]
        if isinstance(command, str):
            update["command"] = shlex.join([command, *args]) if args else command
        cwd = params.get("cwd")
        update["cwd"] = cwd if isinstance(cwd, str) else None
        return update, None
    terminal_id = params.get("terminalId")
    if not isinstance(terminal_id, str):
        return None, None
    update["terminalId"] = terminal_id
    if method == "terminal/wait_for_exit":
        update["exitStatus"] = _exit_status(result)
        return update, None
    if method != "terminal/output":
        return None, None
    truncated: bool | None = None
    text = result.get("output")
    if isinstance(text, str):
        data = base64.b64encode(text.encode("utf-8", "replace")).decode("ascii")
        update["output"] = {"data": data}
        truncated = result.get("truncated") is True
    status = result.get("exitStatus")
    if isinstance(status, dict):
        update["exitStatus"] = _exit_status(status)
    return update, truncated
