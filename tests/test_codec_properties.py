"""Property tests of the wire layer on generated Structs: ``decode(encode(x)) == x``.

The strategies below build every ``session/update`` variant by hand (with all three states of
optional fields, unknown fields in ``extra`` and unknown variants as raw dicts), and the main
requests and results. JSON generated from the official schema is tested in
test_schema_conformance.py.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_client import Decoder, Diagnostic, convert, encode, to_builtins
from acp_client import schema as s
from acp_client.schema import UNSET

DECODER = Decoder()

# ACP_PROPERTY_SCALE=20 multiplies every example budget (a longer local bug hunt)
SCALE = int(os.environ.get("ACP_PROPERTY_SCALE", "1"))
PROPS = settings(
    max_examples=120 * SCALE,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ------------------------------------------------------------------- basic strategies

txt = st.text(max_size=8)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | txt
)
json_values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(txt, inner, max_size=3),
    max_leaves=6,
)
meta_objects = st.dictionaries(st.text(max_size=6), json_values, max_size=3)


def opt(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Omitted, ``null`` or a value."""
    return st.just(UNSET) | st.none() | strategy


def omit_or(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Omitted or a value (fields that are not nullable)."""
    return st.just(UNSET) | strategy


meta = opt(meta_objects)
raw_json = st.just(UNSET) | json_values  # `rawInput`, `rawOutput`, `Error.data`


def wire_names(cls: type[Any]) -> frozenset[str]:
    names = {f.encode_name for f in msgspec.structs.fields(cls)}
    tag_field = cls.__struct_config__.tag_field
    if tag_field is not None:
        names.add(tag_field)
    return frozenset(names)


def extras(cls: type[Any]) -> st.SearchStrategy[Any]:
    """Unknown fields for ``cls``: names it does not know."""
    known = wire_names(cls)
    keys = st.text(min_size=1, max_size=6).filter(lambda k: k not in known)
    return st.just(UNSET) | st.dictionaries(keys, json_values, min_size=1, max_size=2)


def build(cls: type[Any], *, plain: bool = False, **fields: Any) -> st.SearchStrategy[Any]:
    """``cls`` from field strategies, with unknown fields unless ``plain``."""
    if plain:
        return st.builds(cls, **fields)
    return st.builds(cls, **fields, extra=extras(cls))


def raw_variant(tag_field: str, tags: list[str], **fields: Any) -> st.SearchStrategy[Any]:
    """An unknown variant of an open union, kept as a raw dict."""
    return st.fixed_dictionaries(
        {tag_field: st.sampled_from(tags), **fields},
        optional={"payload": json_values, "_meta": json_values},
    )


# ------------------------------------------------------------------------ content


def content_blocks(plain: bool = False) -> st.SearchStrategy[Any]:
    annotations = build(
        s.Annotations,
        plain=plain,
        audience=opt(st.lists(st.sampled_from(["user", "assistant", "_bot"]), max_size=3)),
        last_modified=opt(txt),
        priority=opt(st.floats(min_value=0, max_value=1)),
        meta=meta,
    )
    common = {"annotations": opt(annotations), "meta": meta}
    icon = build(
        s.Icon,
        plain=plain,
        src=txt,
        mime_type=opt(txt),
        sizes=opt(st.lists(txt, max_size=2)),
        theme=opt(st.sampled_from(["light", "dark", "_x"])),
        meta=meta,
    )
    resource = st.one_of(
        build(s.ResourceContents, plain=plain, uri=txt, text=txt, mime_type=opt(txt), meta=meta),
        build(s.ResourceContents, plain=plain, uri=txt, blob=txt, mime_type=opt(txt), meta=meta),
    )
    known = st.one_of(
        build(s.TextContent, plain=plain, text=txt, **common),
        build(s.ImageContent, plain=plain, data=txt, mime_type=txt, uri=opt(txt), **common),
        build(s.AudioContent, plain=plain, data=txt, mime_type=txt, **common),
        build(
            s.ResourceLink,
            plain=plain,
            name=txt,
            uri=txt,
            title=opt(txt),
            description=opt(txt),
            icons=opt(st.lists(icon, max_size=2)),
            mime_type=opt(txt),
            size=opt(st.integers(min_value=0, max_value=2**63)),
            **common,
        ),
        build(s.EmbeddedResource, plain=plain, resource=resource, **common),
    )
    if plain:
        return known
    return known | raw_variant("type", ["_acme/chart", "video"])


content_block = content_blocks()

# ----------------------------------------------------------------------- tool calls

_change_common = {"file_type": opt(txt), "mime_type": opt(txt), "meta": meta}
diff_change = st.one_of(
    build(s.DiffAdd, path=txt, **_change_common),
    build(s.DiffDelete, path=txt, **_change_common),
    build(s.DiffModify, path=txt, **_change_common),
    build(s.DiffMove, old_path=txt, path=txt, **_change_common),
    build(s.DiffCopy, old_path=txt, path=txt, **_change_common),
    raw_variant("operation", ["_chmod", "link"], path=txt),
)
tool_call_content = st.one_of(
    build(s.Content, content=content_block, meta=meta),
    build(
        s.Diff,
        changes=st.lists(diff_change, max_size=3),
        patch=opt(
            build(s.DiffPatch, format=st.sampled_from(["git_patch", "_svn"]), text=txt, meta=meta)
        ),
        meta=meta,
    ),
    build(s.Terminal, terminal_id=txt, meta=meta),
    build(s.SessionReference, session_id=txt, meta=meta),
    raw_variant("type", ["_acme/table", "image_diff"]),
)
tool_call_fields = {
    "tool_call_id": txt,
    "name": opt(txt),
    "title": opt(txt),
    "kind": opt(st.sampled_from(["read", "edit", "execute", "switch_mode", "other", "_x"])),
    "status": opt(st.sampled_from(["pending", "in_progress", "paused", "completed", "_x"])),
    "content": opt(st.lists(tool_call_content, max_size=3)),
    "locations": opt(
        st.lists(
            build(
                s.ToolCallLocation,
                path=txt,
                line=opt(st.integers(min_value=1, max_value=2**32 - 1)),
                meta=meta,
            ),
            max_size=2,
        )
    ),
    "raw_input": raw_json,
    "raw_output": raw_json,
    "capabilities": opt(
        build(
            s.ToolCallCapabilities,
            cancel=opt(build(s.ToolCallCancelCapabilities, meta=meta)),
            meta=meta,
        )
    ),
    "meta": meta,
}

# -------------------------------------------------------------------- session updates

background_item = st.one_of(
    build(s.BackgroundTerminal, terminal_id=txt, meta=meta),
    build(s.BackgroundToolCall, tool_call_id=txt, meta=meta),
    build(s.BackgroundSubagent, session_id=txt, meta=meta),
    raw_variant("type", ["_cron"]),
)
error_object = build(
    s.Error,
    code=st.integers(min_value=-(2**31), max_value=2**31 - 1),
    message=txt,
    data=raw_json,
)
known_state = build(
    s.StateUpdate,
    state=st.sampled_from(["running", "idle", "requires_action"]),
    background=opt(st.lists(background_item, max_size=3)),
    stop_reason=opt(st.sampled_from(["end_turn", "refusal", "cancelled", "error", "_x"])),
    error=opt(error_object),
    meta=meta,
)
# an unknown state keeps every other field raw, in `extra`
unknown_state = build(s.StateUpdate, state=st.sampled_from(["unknown", "_paused"]))

plan_entry = build(
    s.PlanEntry,
    content=txt,
    priority=st.sampled_from(["high", "low", "_x"]),
    status=st.sampled_from(["pending", "completed", "_x"]),
    meta=meta,
)
command = st.one_of(
    build(
        s.Command,
        name=txt,
        description=txt,
        input=opt(build(s.TextCommandInput, hint=txt, meta=meta) | raw_variant("type", ["_x"])),
        meta=meta,
    ),
    raw_variant("type", ["_macro"], name=txt, description=txt),
)
flat_option = st.fixed_dictionaries({"value": txt, "name": txt}, optional={"description": txt})
config_option = st.one_of(
    build(
        s.SessionConfigSelect,
        config_id=txt,
        name=txt,
        description=opt(txt),
        category=opt(st.sampled_from(["mode", "model", "_x"])),
        meta=meta,
        current_value=txt,
        options=st.lists(flat_option, min_size=1, max_size=2)
        | st.lists(
            st.fixed_dictionaries(
                {"groupId": txt, "name": txt, "options": st.lists(flat_option, min_size=1)}
            ),
            min_size=1,
            max_size=2,
        ),
    ),
    build(
        s.SessionConfigBoolean,
        config_id=txt,
        name=txt,
        description=opt(txt),
        category=opt(txt),
        meta=meta,
        current_value=st.booleans(),
    ),
    raw_variant("type", ["_slider"], configId=txt, name=txt),
)
uint64 = st.integers(min_value=0, max_value=2**64 - 1)

session_update: st.SearchStrategy[Any] = st.one_of(
    *[
        build(cls, message_id=txt, content=content_block, meta=meta)
        for cls in (s.UserMessageChunk, s.AgentMessageChunk, s.AgentThoughtChunk)
    ],
    *[
        build(cls, message_id=txt, content=opt(st.lists(content_block, max_size=3)), meta=meta)
        for cls in (s.UserMessage, s.AgentMessage, s.AgentThought)
    ],
    known_state,
    unknown_state,
    build(s.ToolCallContentChunk, tool_call_id=txt, content=tool_call_content, meta=meta),
    build(s.ToolCallUpdate, **tool_call_fields),
    build(
        s.TerminalUpdate,
        terminal_id=txt,
        command=opt(txt),
        cwd=opt(txt),
        output=opt(build(s.TerminalOutput, data=txt, meta=meta)),
        exit_status=opt(
            build(
                s.TerminalExitStatus,
                exit_code=opt(st.integers(min_value=-(2**63), max_value=2**63 - 1)),
                signal=opt(txt),
                meta=meta,
            )
        ),
        size=opt(
            build(
                s.TerminalSize,
                cols=st.integers(min_value=1, max_value=65535),
                rows=st.integers(min_value=1, max_value=65535),
                meta=meta,
            )
        ),
        capabilities=opt(
            build(
                s.TerminalCapabilities,
                cancel=opt(build(s.TerminalCancelCapabilities, meta=meta)),
                meta=meta,
            )
        ),
        meta=meta,
    ),
    build(s.TerminalOutputChunk, terminal_id=txt, data=txt, meta=meta),
    build(
        s.PlanUpdate,
        plan=build(s.PlanItems, plan_id=txt, entries=st.lists(plan_entry, max_size=3), meta=meta)
        | build(s.PlanMarkdown, plan_id=txt, content=txt, meta=meta)
        | build(s.PlanFile, plan_id=txt, uri=txt, meta=meta)
        | raw_variant("type", ["_board"], planId=txt),
        meta=meta,
    ),
    build(s.AvailableCommandsUpdate, available_commands=st.lists(command, max_size=3), meta=meta),
    build(s.ConfigOptionUpdate, config_options=st.lists(config_option, max_size=3), meta=meta),
    build(s.SessionInfoUpdate, title=opt(txt), updated_at=opt(txt), meta=meta),
    build(
        s.UsageUpdate,
        used=uint64,
        size=uint64,
        cost=opt(
            build(
                s.Cost,
                amount=st.floats(allow_nan=False, allow_infinity=False),
                currency=txt,
                meta=meta,
            )
        ),
        meta=meta,
    ),
    build(
        s.Notice,
        severity=st.sampled_from(["info", "warning", "error", "_x"]),
        title=st.text(min_size=1, max_size=8),
        description=opt(txt),
        meta=meta,
    ),
    build(
        s.CompactionUpdate,
        compaction_id=txt,
        status=st.sampled_from(["in_progress", "completed", "_x"]),
        summary=opt(st.lists(content_block, max_size=2)),
        error=opt(txt),
        meta=meta,
    ),
    build(s.CompactionSummaryChunk, compaction_id=txt, content=content_block, meta=meta),
    # the v2 Preview's stable additions (P0)
    build(s.PlanRemoved, plan_id=txt, meta=meta),
    build(s.ReplayComplete, meta=meta),
    build(
        s.SubagentUpdate,
        session_id=txt,
        title=opt(txt),
        description=opt(txt),
        capabilities=opt(
            build(
                s.SubagentSessionCapabilities,
                cancel=opt(build(s.SessionCancelCapabilities, meta=meta)),
                meta=meta,
            )
        ),
        state=opt(build(s.StateSnapshot, state=st.just("running"), meta=meta)),
        cwd=opt(txt),
        additional_directories=opt(st.lists(txt, max_size=2)),
        meta=meta,
    ),
    build(
        s.SessionMessage,
        message_id=txt,
        sender_session_id=opt(txt),
        recipient_session_id=opt(txt),
        sender_message_id=opt(txt),
        recipient_message_id=opt(txt),
        content=opt(st.lists(content_block, max_size=2)),
        meta=meta,
    ),
    build(s.SessionMessageChunk, message_id=txt, content=content_block, meta=meta),
    # unstable: raw unless opted in
    raw_variant("sessionUpdate", ["_acme/progress", "cursor_update", "tool_call"]),
)
update_params = build(s.UpdateSessionNotification, session_id=txt, update=session_update, meta=meta)
update_notification = st.builds(
    s.Notification, method=st.just("session/update"), params=update_params
)

# -------------------------------------------------------------- requests and results

permission_option = build(
    s.PermissionOption,
    option_id=txt,
    name=txt,
    kind=st.sampled_from(["allow_once", "reject_always", "_x"]),
    meta=meta,
)
permission_subject = st.one_of(
    build(
        s.ToolCallPermissionSubject,
        tool_call=build(s.ToolCallFields, **tool_call_fields),
        meta=meta,
    ),
    build(
        s.CommandPermissionSubject,
        command=txt,
        cwd=txt,
        tool_call_id=opt(txt),
        terminal_id=opt(txt),
        meta=meta,
    ),
    raw_variant("type", ["_browser", "mcp_tool"]),
)
permission_request = build(
    s.RequestPermissionRequest,
    session_id=txt,
    title=txt,
    options=st.lists(permission_option, min_size=1, max_size=3),
    description=opt(txt),
    subject=opt(permission_subject),
    meta=meta,
)
prompt_request = build(
    s.PromptRequest,
    session_id=txt,
    prompt=st.lists(content_block, min_size=1, max_size=3),
    idempotency_key=st.just(UNSET) | st.none() | st.text(min_size=1, max_size=255),
    meta=meta,
)
request_ids = st.integers(min_value=-(2**63), max_value=2**63 - 1) | txt
results: st.SearchStrategy[tuple[str, Any]] = st.one_of(
    st.tuples(st.just("session/prompt"), build(s.PromptResponse, message_id=txt, meta=meta)),
    st.tuples(
        st.just("session/request_permission"),
        build(
            s.RequestPermissionResponse,
            outcome=st.one_of(
                build(s.SelectedPermissionOutcome, option_id=txt, meta=meta),
                build(s.CancelledPermissionOutcome, meta=meta),
                raw_variant("outcome", ["_deferred"]),
            ),
            meta=meta,
        ),
    ),
    st.tuples(
        st.just("session/new"),
        build(
            s.NewSessionResponse,
            session_id=txt,
            config_options=omit_or(st.lists(config_option, max_size=2)),
            available_commands=omit_or(st.lists(command, max_size=2)),
            meta=meta,
        ),
    ),
)

# ------------------------------------------------------------------------- properties


def decode_clean(data: bytes) -> Any:
    diagnostics: list[Diagnostic] = []
    message = DECODER.decode(data, diagnostics=diagnostics)
    assert diagnostics == []
    return message


@PROPS
@given(update_notification)
def test_update_roundtrip(message: s.Notification) -> None:
    data = encode(message)
    decoded = decode_clean(data)
    assert isinstance(decoded, s.Notification)
    assert decoded.method == "session/update"
    assert decoded.params == message.params
    assert encode(decoded) == data


@PROPS
@given(update_params)
def test_update_roundtrip_through_builtins(params: s.UpdateSessionNotification) -> None:
    builtins = to_builtins(params)
    assert msgspec.json.decode(encode(params)) == builtins
    diagnostics: list[Diagnostic] = []
    assert convert(builtins, s.UpdateSessionNotification, diagnostics=diagnostics) == params
    assert diagnostics == []


@PROPS
@given(st.lists(update_notification, min_size=1, max_size=3))
def test_batch_roundtrip(messages: list[s.Notification]) -> None:
    data = b"[" + b",".join(encode(m) for m in messages) + b"]"
    decoded = decode_clean(data)
    assert isinstance(decoded, list)
    assert [m.params for m in decoded] == [m.params for m in messages]


@PROPS
@given(
    request_ids,
    st.one_of(
        st.tuples(st.just("session/request_permission"), permission_request),
        st.tuples(st.just("session/prompt"), prompt_request),
    ),
)
def test_request_roundtrip(rid: int | str, method_params: tuple[str, Any]) -> None:
    method, params = method_params
    data = encode(s.Request(id=rid, method=method, params=params))
    decoded = decode_clean(data)
    assert isinstance(decoded, s.Request)
    assert (decoded.id, decoded.method) == (rid, method)
    assert decoded.params == params
    assert encode(decoded) == data


@PROPS
@given(request_ids, results)
def test_result_roundtrip(rid: int | str, method_result: tuple[str, Any]) -> None:
    method, result = method_result
    data = encode(s.Response(id=rid, result=result))
    decoded = decode_clean(data)
    assert isinstance(decoded, s.Response)
    assert decoded.id == rid
    diagnostics: list[Diagnostic] = []
    assert DECODER.decode_result(method, decoded.result, diagnostics=diagnostics) == result
    assert diagnostics == []


@PROPS
@given(st.one_of(request_ids, st.none()), error_object)
def test_error_response_roundtrip(rid: int | str | None, error: s.Error) -> None:
    data = encode(s.ErrorResponse(id=rid, error=error))
    decoded = decode_clean(data)
    assert isinstance(decoded, s.ErrorResponse)
    assert (decoded.id, decoded.error) == (rid, error)


@PROPS
@given(update_params)
def test_decode_all_agrees_with_decode(params: s.UpdateSessionNotification) -> None:
    data = encode(s.Notification(method="session/update", params=params))
    (only,) = DECODER.decode_all(data)
    assert isinstance(only, s.Notification)
    assert only.params == params
    assert DECODER.decode(data.decode()) == DECODER.decode(data)
