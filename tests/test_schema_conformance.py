"""The wire layer against the official ACP v2 JSON Schema (the npm package of the test peers).

* every Struct has exactly the schema's properties, required-ness, nullability and lenient
  annotations, and knows exactly the schema's variants of each open union;
* JSON generated from the schema's own definitions (hypothesis-jsonschema), wrapped in the
  matching message, decodes without error and without lenient recovery, re-encodes to the same
  JSON (unknown fields and variants included), and the encoder output validates (Draft 2020-12);
* the same JSON with one value replaced by arbitrary JSON never raises anything but
  ``RemoteProtocolError``; when it is still valid it decodes, and what decodes re-encodes to
  schema-valid JSON.
"""

from __future__ import annotations

import os
import types
from collections.abc import Callable
from typing import Annotated, Any, Union, get_args, get_origin

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from schema_util import (
    defs,
    json_equal,
    official_schema,
    strategy,
    unstable_defs,
    validation_errors,
    with_defs,
)

from acp_client import Decoder, Diagnostic, RemoteProtocolError, encode
from acp_client import schema as s
from acp_client.schema import UNSET

DECODER = Decoder()
SCALE = int(os.environ.get("ACP_PROPERTY_SCALE", "1"))
GENERATED = settings(
    max_examples=8 * SCALE,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)

# ------------------------------------------------------------------------ the schema


def test_schema_is_draft_2020_12_and_well_formed() -> None:
    schema = official_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def _tags(union: Any) -> set[str]:
    return {
        cls.__struct_config__.tag
        for cls in get_args(union) or (union,)
        if isinstance(cls, type)
        and issubclass(cls, msgspec.Struct)
        and not cls.__name__.startswith("_")  # private sentinels that never match
    }


# Variants the ACP v2 Preview added to the 2.4.0 schema (docs/preview.md, P0): the draft ones
# are checked against the unstable schema; `replay_complete` and `session` are in no schema
# file yet (Preview 2.2, 2.8).
_PREVIEW_TAGS: dict[str, set[str]] = {
    "SessionUpdate": {
        "plan_removed",
        "replay_complete",
        "subagent_update",
        "session_message",
        "session_message_chunk",
    },
    "ToolCallContent": {"session"},
    "BackgroundWork": {"subagent"},
    "PlanUpdateContent": {"markdown", "file"},
}
_IN_NO_SCHEMA = {"replay_complete", "session"}


def _schema_tags(name: str, field: str, unstable: bool = False) -> set[str]:
    out = set()
    for branch in (unstable_defs() if unstable else defs())[name]["anyOf"]:
        const = branch.get("properties", {}).get(field, {}).get("const")
        if const is not None:
            out.add(const)
    return out


@pytest.mark.parametrize(
    ("name", "field", "union"),
    [
        ("SessionUpdate", "sessionUpdate", s.SessionUpdate),
        ("ContentBlock", "type", s.ContentBlock),
        ("ToolCallContent", "type", s.ToolCallContent),
        ("DiffChange", "operation", s.DiffChange),
        ("BackgroundWork", "type", s.BackgroundWork),
        ("PlanUpdateContent", "type", s.PlanUpdateContent),
        ("AvailableCommand", "type", s.AvailableCommand),
        ("AvailableCommandInput", "type", s.AvailableCommandInput),
        ("SessionConfigOption", "type", s.SessionConfigOption),
        ("RequestPermissionSubject", "type", s.RequestPermissionSubject),
        ("RequestPermissionOutcome", "outcome", s.RequestPermissionOutcome),
        ("AuthMethod", "type", s.AuthMethod),
        ("McpServer", "type", s.McpServer),
        ("ReplayFrom", "type", s.ReplayFrom),
    ],
)
def test_known_variants_are_the_schemas(name: str, field: str, union: Any) -> None:
    preview = _PREVIEW_TAGS.get(name, set())
    assert _tags(union) - preview == _schema_tags(name, field)
    assert preview - _IN_NO_SCHEMA <= _schema_tags(name, field, unstable=True)


def test_known_session_updates_and_states() -> None:
    assert {c.__struct_config__.tag for c in s.KNOWN_SESSION_UPDATES} - _PREVIEW_TAGS[
        "SessionUpdate"
    ] == _schema_tags("SessionUpdate", "sessionUpdate")
    assert _schema_tags("StateUpdate", "state") == {"running", "idle", "requires_action"}
    assert {c.__struct_config__.tag for c in s.KNOWN_CONTENT_BLOCKS} == _schema_tags(
        "ContentBlock", "type"
    )


# ------------------------------------------------------------- Structs vs definitions

# Struct -> the definitions whose properties it holds (default: its own name)
_DEFS_OF: dict[type[Any], list[str]] = {
    s.ToolCallFields: ["ToolCallUpdate"],
    s.UserMessageChunk: ["ContentChunk"],
    s.AgentMessageChunk: ["ContentChunk"],
    s.AgentThoughtChunk: ["ContentChunk"],
    s.DiffAdd: ["DiffChange", "DiffPathChange"],
    s.DiffDelete: ["DiffChange", "DiffPathChange"],
    s.DiffModify: ["DiffChange", "DiffPathChange"],
    s.DiffMove: ["DiffChange", "DiffPathPairChange"],
    s.DiffCopy: ["DiffChange", "DiffPathPairChange"],
    s.SessionConfigSelect: ["SessionConfigOption", "SessionConfigSelect"],
    s.SessionConfigBoolean: ["SessionConfigOption", "SessionConfigBoolean"],
    s.StateUpdate: [
        "RunningStateUpdate",
        "IdleStateUpdate",
        "RequiresActionStateUpdate",
        "ErrorStopReason",
    ],
    s.ResourceContents: ["TextResourceContents", "BlobResourceContents"],
}
_DEFS_OF[s.StateSnapshot] = _DEFS_OF[s.StateUpdate]
_DEFS_OF[s.SessionMessageChunk] = ["SessionMessageChunk"]
# Draft shapes of the 2.4.0 unstable schema the v2 Preview made stable or baseline (P0).
_UNSTABLE_DEFS = {
    s.PlanRemoved,
    s.PlanMarkdown,
    s.PlanFile,
    s.BackgroundSubagent,
    s.SubagentUpdate,
    s.SubagentSessionCapabilities,
    s.SessionCancelCapabilities,
    s.SessionMessage,
    s.SessionMessageChunk,
}
# Shapes newer than any schema file (ACP-V2-PREVIEW 2.2-2.5, 2.8, 2.11; docs/preview.md),
# and the opt-in `unknown` state (its Struct also keeps the other states' fields).
_IN_NO_SCHEMA_FILE = {
    s.ReplayComplete,
    s.SessionReference,
    s.PromptSuggestion,
    s.PromptSuggestionsUpdate,
    s.PromptSuggestionsCapabilities,
    s.ClientSessionCapabilities,
    s.CursorUpdate,
    s.CursorUserMessageAnchor,
    s.CursorAgentMessageAnchor,
    s.CursorAgentThoughtAnchor,
    s.CursorSessionMessageAnchor,
    s.CursorToolCallAnchor,
    s.CursorCompactionAnchor,
    s.CursorMessageAnchor,
    s.UnknownStateUpdate,
}
# Fields the v2 Preview added to 2.4.0 Structs (ACP-V2-PREVIEW 2.5, 2.11).
_PREVIEW_FIELDS = {(s.PromptRequest, "idempotencyKey"), (s.ClientCapabilities, "session")}
WIRE_CLASSES = sorted(
    (
        obj
        for name in s.__all__
        if isinstance(obj := getattr(s, name), type)
        and issubclass(obj, s.Wire)
        and obj is not s.Wire
    ),
    key=lambda c: c.__name__,
)


def _collect(name: str, props: dict[str, Any], required: set[str], unstable: bool = False) -> None:
    definition = (unstable_defs() if unstable else defs())[name]
    for key, value in definition.get("properties", {}).items():
        props.setdefault(key, value)
    required.update(definition.get("required", []))
    for sub in definition.get("allOf", []):
        if "$ref" in sub:
            _collect(sub["$ref"].rsplit("/", 1)[-1], props, required, unstable)


def _schema_fields(cls: type[Any]) -> tuple[dict[str, Any], set[str]]:
    props: dict[str, Any] = {}
    required: set[str] = set()
    for name in _DEFS_OF.get(cls, [cls.__name__]):
        _collect(name, props, required, cls in _UNSTABLE_DEFS)
    if cls is s.ResourceContents:  # exactly one of `text` / `blob`
        required = {"uri"}
    if cls is s.StateUpdate or cls is s.StateSnapshot:  # the `state` tag: a field
        props["state"] = {"type": "string"}
        required = {"state"}
    if cls is s.SetSessionConfigOptionRequest:  # every variant has `type` and `value`
        props.update(type={"type": "string"}, value={})
        required |= {"type", "value"}
    return props, required


def _annotations(prop: dict[str, Any]) -> s.Lenient:
    flags = s.Lenient(0)
    if prop.get("x-deserialize-default-on-error"):
        flags |= s.D
    if prop.get("x-deserialize-skip-invalid-items"):
        flags |= s.S
    if prop.get("x-deserialize-default-on-null"):
        flags |= s.N
    return flags


def _nullable(prop: dict[str, Any]) -> bool:
    kind = prop.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_nullable(branch) for branch in prop.get("anyOf", []))


def _struct_field(tp: Any) -> tuple[s.Lenient, tuple[Any, ...]]:
    flags = s.Lenient(0)
    while get_origin(tp) is Annotated:
        tp, *metas = get_args(tp)
        for meta in metas:
            if isinstance(meta, s.Lenient):
                flags |= meta
    union = get_origin(tp) in (Union, types.UnionType)
    return flags, get_args(tp) if union else (tp,)


# Annotations the library adds on purpose, with the specification's reason.
_ADDED_FLAGS: dict[tuple[type[Any], str], s.Lenient] = {
    # section 12.1 / R47: omitted, `null` and `[]` all mean "none advertised"
    (s.NewSessionResponse, "configOptions"): s.N,
    (s.NewSessionResponse, "availableCommands"): s.N,
    (s.ResumeSessionResponse, "configOptions"): s.N,
    (s.ResumeSessionResponse, "availableCommands"): s.N,
}


@pytest.mark.parametrize("cls", WIRE_CLASSES, ids=lambda c: c.__name__)
def test_struct_matches_its_definition(cls: type[Any]) -> None:
    if cls in _IN_NO_SCHEMA_FILE:
        pytest.skip("a v2 Preview shape newer than every schema file (docs/preview.md)")
    props, required = _schema_fields(cls)
    fields = {
        f.encode_name: f
        for f in msgspec.structs.fields(cls)
        if f.name != "extra" and (cls, f.encode_name) not in _PREVIEW_FIELDS
    }
    assert set(fields) == set(props)
    for wire, info in fields.items():
        prop = props[wire]
        is_required = (
            info.default is msgspec.NODEFAULT and info.default_factory is msgspec.NODEFAULT
        )
        assert is_required == (wire in required), wire
        flags, args = _struct_field(info.type)
        assert flags == _annotations(prop) | _ADDED_FLAGS.get((cls, wire), s.Lenient(0)), wire
        if Any not in args:
            assert (type(None) in args) == _nullable(prop), wire
            assert is_required or msgspec.UnsetType in args, wire


# ------------------------------------------------------- generated from the schema

SID = "sess_1"


def _notification(update: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": SID, "update": update},
    }


class Target:
    """A schema definition to generate from, and how to wrap and read back an instance."""

    def __init__(
        self,
        name: str,
        schema: dict[str, Any],
        wrap: Callable[[Any], dict[str, Any]],
        part: Callable[[dict[str, Any]], Any],
        part_schema: str,
        result_of: str | None = None,
        body_schema: str = "UpdateSessionNotification",
        envelope: str = "AgentNotification",
    ) -> None:
        self.name = name
        self.schema = schema
        self.wrap = wrap
        self.part = part  # the wrapped instance, found in the (re-)encoded message
        self.part_schema = part_schema
        self.result_of = result_of
        self.body_schema = body_schema  # the definition of `params` / `result`
        self.envelope = envelope  # the definition of the message (the root one is too loose)

    def errors(self, message: Any) -> list[str]:
        """Validation errors of a whole message, its params or result included."""
        errors = validation_errors(message) + validation_errors(message, self.envelope)
        key = "result" if self.result_of else "params"
        if not isinstance(message, dict) or key not in message:
            return [*errors, f"no {key}"]
        return errors + validation_errors(message[key], self.body_schema)

    def __repr__(self) -> str:
        return self.name


def _update_targets() -> list[Target]:
    out = []
    tags = {c.__struct_config__.tag for c in s.KNOWN_SESSION_UPDATES} - _PREVIEW_TAGS[
        "SessionUpdate"
    ]
    for tag in [*sorted(tags), "other"]:
        out.append(
            Target(
                f"SessionUpdate[{tag}]",
                {"$ref": "#/$defs/SessionUpdate", "_branch": tag},
                _notification,
                lambda m: m["params"]["update"],
                "SessionUpdate",
            )
        )
    return out


TARGETS = [
    *_update_targets(),
    Target(
        "ContentBlock",
        {"$ref": "#/$defs/ContentBlock"},
        lambda b: _notification(
            {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": b}
        ),
        lambda m: m["params"]["update"]["content"],
        "ContentBlock",
    ),
    Target(
        "ToolCallUpdate",
        {"$ref": "#/$defs/ToolCallUpdate"},
        lambda t: _notification({**t, "sessionUpdate": "tool_call_update"}),
        lambda m: {k: v for k, v in m["params"]["update"].items() if k != "sessionUpdate"},
        "ToolCallUpdate",
    ),
    Target(
        "ToolCallUpdate(permission subject)",
        {"$ref": "#/$defs/ToolCallUpdate"},
        lambda t: {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/request_permission",
            "params": {
                "sessionId": SID,
                "title": "Allow?",
                "options": [{"optionId": "o", "name": "Once", "kind": "allow_once"}],
                "subject": {"type": "tool_call", "toolCall": t},
            },
        },
        lambda m: m["params"]["subject"]["toolCall"],
        "ToolCallUpdate",
        body_schema="RequestPermissionRequest",
        envelope="AgentRequest",
    ),
    Target(
        "RequestPermissionRequest",
        {"$ref": "#/$defs/RequestPermissionRequest"},
        lambda p: {"jsonrpc": "2.0", "id": 4, "method": "session/request_permission", "params": p},
        lambda m: m["params"],
        "RequestPermissionRequest",
        body_schema="RequestPermissionRequest",
        envelope="AgentRequest",
    ),
    Target(
        "PromptRequest",
        {"$ref": "#/$defs/PromptRequest"},
        lambda p: {"jsonrpc": "2.0", "id": 5, "method": "session/prompt", "params": p},
        lambda m: m["params"],
        "PromptRequest",
        body_schema="PromptRequest",
        envelope="ClientRequest",
    ),
    Target(
        "PromptResponse",
        {"$ref": "#/$defs/PromptResponse"},
        lambda r: {"jsonrpc": "2.0", "id": 5, "result": r},
        lambda m: m["result"],
        "PromptResponse",
        result_of="session/prompt",
        body_schema="PromptResponse",
        envelope="AgentResponse",
    ),
    Target(
        "RequestPermissionResponse",
        {"$ref": "#/$defs/RequestPermissionResponse"},
        lambda r: {"jsonrpc": "2.0", "id": "p-1", "result": r},
        lambda m: m["result"],
        "RequestPermissionResponse",
        result_of="session/request_permission",
        body_schema="RequestPermissionResponse",
        envelope="ClientResponse",
    ),
]


def _generation_schema(target: Target) -> dict[str, Any]:
    schema = dict(target.schema)
    branch = schema.pop("_branch", None)
    if branch is None:
        return schema
    for candidate in defs()["SessionUpdate"]["anyOf"]:
        const = candidate.get("properties", {}).get("sessionUpdate", {}).get("const")
        if const == branch or (branch == "other" and const is None):
            return dict(candidate)
    raise AssertionError(branch)


def _strategy(target: Target) -> st.SearchStrategy[Any]:
    official_schema()  # skip or fail here when the schema is missing
    return strategy(_generation_schema(target))


def _known_bug(message: Any) -> str | None:
    """The open bug a generated message would hit, if any (none are open now)."""
    return None


def _part(target: Target, message: Any) -> Any:
    try:
        return target.part(message)
    except (KeyError, IndexError, TypeError, AttributeError):
        return None


def _decode(target: Target, message: dict[str, Any], diagnostics: list[Diagnostic]) -> Any:
    """Decode the wrapped message; a response's result is decoded for its method."""
    decoded = DECODER.decode(msgspec.json.encode(message), diagnostics=diagnostics)
    assert not isinstance(decoded, list)
    if target.result_of is not None:
        assert isinstance(decoded, s.Response)
        result = DECODER.decode_result(target.result_of, decoded.result, diagnostics=diagnostics)
        return s.Response(id=decoded.id, result=result)
    return decoded


def _check_valid(target: Target, instance: Any) -> None:
    message = target.wrap(instance)
    assert target.errors(message) == []  # the wrapped instance is a valid message
    diagnostics: list[Diagnostic] = []
    decoded = _decode(target, message, diagnostics)
    assert diagnostics == []
    out = msgspec.json.decode(encode(decoded))
    # unknown fields, unknown variants and the three states all survive
    assert json_equal(target.part(out), target.part(message))
    assert json_equal(out, message)
    assert target.errors(out) == []
    assert validation_errors(target.part(out), target.part_schema) == []
    again: list[Diagnostic] = []
    assert _decode(target, out, again) == decoded


json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=5,
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_paths(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(_paths(item, (*path, index)))
    return out


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, *rest = path
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], tuple(rest), new)}
    copy = list(value)
    copy[head] = _replace(copy[head], tuple(rest), new)
    return copy


def _drop(value: Any, path: tuple[Any, ...]) -> Any:
    head, *rest = path
    if rest:
        copy = dict(value) if isinstance(value, dict) else list(value)
        copy[head] = _drop(value[head], tuple(rest))
        return copy
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k != head}
    return [v for i, v in enumerate(value) if i != head]


def _inexact_in_the_validator(value: Any) -> bool:
    """A float past 2**53: the schema validator compares it with an integer bound as a float,
    so 1.8446744073709552e19 (2**64) passes a uint64 maximum it exceeds; the library, exact,
    rightly rejects it. Such a rejection is no "valid input rejected"."""
    if isinstance(value, float):
        return abs(value) >= 2.0**53
    if isinstance(value, dict):
        return any(_inexact_in_the_validator(v) for v in value.values())
    if isinstance(value, list):
        return any(_inexact_in_the_validator(v) for v in value)
    return False


def _float_id(exc: RemoteProtocolError, message: Any) -> bool:
    """An id written as a float (``0.0``, ``1e3``): JSON Schema counts an integral float an
    integer, but ACP ids are integers written without fraction or exponent
    (docs/log-formats.md 1.7, ACP-V2-CLIENT-STATE 2), so rejecting one is the contract, not
    "valid input rejected"."""
    return exc.path == "$.id" and isinstance(message, dict) and type(message.get("id")) is float


def _check_mutated(target: Target, mutated: Any) -> None:
    """Decoding raises only RemoteProtocolError, and only for invalid input; a decoded message
    re-encodes to valid JSON (lenient decoding normalises)."""
    diagnostics: list[Diagnostic] = []
    try:
        decoded = _decode(target, mutated, diagnostics)
    except RemoteProtocolError as exc:
        assert exc.code in (-32700, -32600, -32602)
        assert exc.path.startswith("$")
        assert (
            target.errors(mutated) != []
            or _inexact_in_the_validator(mutated)
            or _float_id(exc, mutated)
        ), f"valid input rejected: {exc}"
        return
    for diag in diagnostics:
        assert diag.path is not None and diag.path.startswith("$"), diag
    out = msgspec.json.decode(encode(decoded))
    expected = {"AgentRequest": s.Request, "ClientRequest": s.Request}.get(
        target.envelope, s.Response if target.result_of else s.Notification
    )
    original = target.wrap({}) if target.result_of is None else {}
    if not isinstance(decoded, expected) or getattr(decoded, "method", None) != original.get(
        "method"
    ):
        return  # e.g. a request without `id` is a notification of an unknown method: raw
    assert target.errors(out) == []


@pytest.mark.parametrize("target", TARGETS, ids=repr)
def test_generated_messages(target: Target) -> None:
    @GENERATED
    @given(_strategy(target), st.data())
    def check(instance: Any, data: st.DataObject) -> None:
        message = target.wrap(instance)
        if _known_bug(message) is None:
            _check_valid(target, instance)
        path = data.draw(st.sampled_from(_paths(message)[1:]), label="path")
        if data.draw(st.booleans(), label="drop"):
            mutated = _drop(message, path)
        else:
            mutated = _replace(message, path, data.draw(json_values, label="value"))
        if _known_bug(mutated) is None:
            _check_mutated(target, mutated)

    check()


# --------------------------------------------------------------- known deviations


@pytest.mark.parametrize("value", [0.0, 7.0, 1e3])
def test_integral_float_id_is_rejected_by_contract(value: float) -> None:
    """Seen in a generated mutation: the schema takes ``"id": 0.0`` as an integer; the wire
    contract does not, and the decoder says where."""
    (target,) = [t for t in TARGETS if t.name == "ToolCallUpdate(permission subject)"]
    message = target.wrap({"toolCallId": "t"})
    message["id"] = value
    assert target.errors(message) == []  # the schema's reading
    with pytest.raises(RemoteProtocolError) as info:
        DECODER.decode(msgspec.json.encode(message))
    assert info.value.path == "$.id"
    assert _float_id(info.value, message)


def test_resource_with_text_and_blob_is_valid() -> None:
    block = {"type": "resource", "resource": {"uri": "file:///a", "text": "t", "blob": "YQ=="}}
    (target,) = [t for t in TARGETS if t.name == "ContentBlock"]
    _check_valid(target, block)


def test_targets_cover_the_brief() -> None:
    names = {t.name for t in TARGETS}
    assert {"ContentBlock", "ToolCallUpdate", "PromptResponse", "RequestPermissionRequest"} <= names
    assert sum(n.startswith("SessionUpdate[") for n in names) == 20
    assert with_defs({"$ref": "#/$defs/ContentBlock"})["$defs"] is defs()
    assert UNSET is msgspec.UNSET
