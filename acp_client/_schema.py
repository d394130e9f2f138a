"""msgspec Structs for the ACP v2 wire format (schema-v2.json of the TypeScript SDK 2.4.0).

Theory of operation
-------------------
Every object of the protocol is a :class:`Wire` Struct with the schema's own field names
(snake_case in Python, camelCase on the wire; ``_meta`` is ``meta``). Three things the
protocol needs and plain Structs would lose are kept as follows:

* **Three states.** A field that may be omitted defaults to ``msgspec.UNSET``; an explicit
  JSON ``null`` decodes to ``None``; a value to the value. Encoding writes them back as
  they came (``UNSET`` fields are left out).
* **Unknown fields.** Structs forbid unknown fields, so a message that carries one leaves
  msgspec's fast typed path; the lenient path (``_codec``) then keeps every unknown field in
  :attr:`Wire.extra`, and :func:`acp_client.encode` writes them back at their place.
* **Unknown variants.** Open tagged unions (content blocks, update kinds, plan types, ...)
  hold an unknown or custom variant as its raw JSON object (a ``dict``), in place.

Lenient decoding annotations of the schema are attached to fields with ``Annotated``:
``D`` (``x-deserialize-default-on-error``), ``S`` (``x-deserialize-skip-invalid-items``),
``N`` (``x-deserialize-default-on-null``). Only the lenient path reads them.
"""

import enum
import math
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Union, get_args

import msgspec
from msgspec import UNSET, Meta, UnsetType

__all__ = [
    "UNSET",
    "UnsetType",
    "Lenient",
    "D",
    "S",
    "N",
    "DS",
    "Wire",
    "EXTRA_KEY",
    "RequestId",
    # content
    "Annotations",
    "Icon",
    "TextContent",
    "ImageContent",
    "AudioContent",
    "ResourceLink",
    "ResourceContents",
    "EmbeddedResource",
    "ContentBlock",
    "KNOWN_CONTENT_BLOCKS",
    "UnknownContentBlock",
    # tool calls
    "ToolCallCancelCapabilities",
    "ToolCallCapabilities",
    "ToolCallLocation",
    "Content",
    "DiffPatch",
    "DiffAdd",
    "DiffDelete",
    "DiffModify",
    "DiffMove",
    "DiffCopy",
    "DiffChange",
    "Diff",
    "Terminal",
    "SessionReference",
    "ToolCallContent",
    "ToolCallFields",
    # terminals
    "TerminalOutput",
    "TerminalExitStatus",
    "TerminalSize",
    "TerminalCancelCapabilities",
    "TerminalCapabilities",
    # plans, commands, config, usage
    "PlanEntry",
    "PlanItems",
    "PlanMarkdown",
    "PlanFile",
    "PlanUpdateContent",
    "TextCommandInput",
    "AvailableCommandInput",
    "Command",
    "AvailableCommand",
    "SessionConfigSelect",
    "SessionConfigBoolean",
    "SessionConfigOption",
    "Cost",
    "Error",
    "BackgroundTerminal",
    "BackgroundToolCall",
    "BackgroundSubagent",
    "BackgroundWork",
    # session updates
    "ContentChunk",
    "UserMessageChunk",
    "UserMessage",
    "AgentMessageChunk",
    "AgentMessage",
    "AgentThoughtChunk",
    "AgentThought",
    "StateSnapshot",
    "StateUpdate",
    "UnknownStateUpdate",
    "ToolCallContentChunk",
    "ToolCallUpdate",
    "TerminalUpdate",
    "TerminalOutputChunk",
    "PlanUpdate",
    "AvailableCommandsUpdate",
    "ConfigOptionUpdate",
    "SessionInfoUpdate",
    "UsageUpdate",
    "Notice",
    "CompactionUpdate",
    "CompactionSummaryChunk",
    "PlanRemoved",
    "ReplayComplete",
    "SessionCancelCapabilities",
    "SubagentSessionCapabilities",
    "SubagentUpdate",
    "SessionMessage",
    "SessionMessageChunk",
    "PromptSuggestion",
    "PromptSuggestionsUpdate",
    "CursorMessageAnchor",
    "CursorUserMessageAnchor",
    "CursorAgentMessageAnchor",
    "CursorAgentThoughtAnchor",
    "CursorSessionMessageAnchor",
    "CursorToolCallAnchor",
    "CursorCompactionAnchor",
    "CursorAnchor",
    "CursorUpdate",
    "SessionUpdate",
    "KNOWN_SESSION_UPDATES",
    "UNSTABLE_SESSION_UPDATES",
    "UpdateSessionNotification",
    # setup and requests
    "Implementation",
    "PromptCapabilities",
    "McpCapabilities",
    "SessionCapabilities",
    "AgentCapabilities",
    "PromptSuggestionsCapabilities",
    "ClientSessionCapabilities",
    "ClientCapabilities",
    "AuthMethodAgent",
    "AuthMethodTerminal",
    "AuthMethod",
    "EnvVariable",
    "HttpHeader",
    "McpServerHttp",
    "McpServerStdio",
    "McpServer",
    "InitializeRequest",
    "InitializeResponse",
    "NewSessionRequest",
    "NewSessionResponse",
    "ReplayFromStart",
    "ReplayFrom",
    "ResumeSessionRequest",
    "ResumeSessionResponse",
    "SessionInfo",
    "ListSessionsRequest",
    "ListSessionsResponse",
    "CloseSessionRequest",
    "CloseSessionResponse",
    "DeleteSessionRequest",
    "DeleteSessionResponse",
    "SetSessionConfigOptionRequest",
    "SetSessionConfigOptionResponse",
    "LoginAuthRequest",
    "LoginAuthResponse",
    "LogoutAuthRequest",
    "LogoutAuthResponse",
    "PromptRequest",
    "PromptResponse",
    "CancelSessionNotification",
    "CancelRequestNotification",
    "CancelToolCallRequest",
    "CancelToolCallResponse",
    "CancelTerminalRequest",
    "CancelTerminalResponse",
    "PermissionOption",
    "ToolCallPermissionSubject",
    "CommandPermissionSubject",
    "RequestPermissionSubject",
    "SelectedPermissionOutcome",
    "CancelledPermissionOutcome",
    "RequestPermissionOutcome",
    "RequestPermissionRequest",
    "RequestPermissionResponse",
    "SessionNotFoundErrorData",
    "UnsupportedProtocolVersionErrorData",
    # envelope
    "Request",
    "Notification",
    "Response",
    "ErrorResponse",
    "Message",
]


class Lenient(enum.Flag):
    """Lenient-decoding annotations of the schema, attached to fields with ``Annotated``."""

    D = 1
    """``x-deserialize-default-on-error``: an invalid value decodes as its default."""
    S = 2
    """``x-deserialize-skip-invalid-items``: invalid array items are dropped."""
    N = 4
    """``x-deserialize-default-on-null``: an explicit ``null`` decodes as ``[]``."""


EXTRA_KEY = "__acp_client_extra__"
"""Wire name of :attr:`Wire.extra` (never written: encoding spreads it in place)."""
D = Lenient.D
S = Lenient.S
N = Lenient.N
DS = Lenient.D | Lenient.S


def _wire_name(name: str) -> str:
    if name == "meta":
        return "_meta"
    if name == "extra":
        return EXTRA_KEY
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


Extra = Annotated[dict[str, Any], Meta(min_length=1, max_length=0)]
"""Unknown fields as received, in :attr:`Wire.extra`.

The constraint no object meets keeps the typed decoder from filling the holder from a wire
key spelled like it: such an object fails the typed decode and takes the general path, which
keeps that key as one more unknown field.
"""


class Wire(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    forbid_unknown_fields=True,
    rename=_wire_name,
    repr_omit_defaults=True,
    gc=False,
):
    """Base of every protocol object.

    ``extra`` holds the fields acp_client does not know, exactly as received; it is
    written back in place by :func:`acp_client.encode`.
    """

    extra: Extra | UnsetType = UNSET


Meta_ = Annotated[dict[str, Any] | None | UnsetType, D]
"""An optional, nullable, lenient ``_meta`` object."""
OptStr = Annotated[str | None | UnsetType, D]
Int64 = Annotated[int, Meta(ge=-(2**63), le=2**63 - 1)]
UInt16 = Annotated[int, Meta(ge=0, le=65535)]
UInt64 = Annotated[int, Meta(ge=0)]
"""An unsigned 64-bit integer: msgspec bounds only the low end (its bounds must fit an
int64), so the Structs holding one check the top in ``__post_init__`` (and the lenient
converter checks it per field)."""
UINT64_MAX = 2**64 - 1


def _check_uint64(name: str, value: object) -> None:
    if type(value) is int and value > UINT64_MAX:
        raise ValueError(f"`{name}` is out of the uint64 range (at most {UINT64_MAX})")


IdempotencyKey = Annotated[str, Meta(min_length=1, max_length=255)]
"""A ``session/prompt`` submission's key: 1-255 characters, opaque, case-sensitive."""
RequestId = Int64 | str
"""A JSON-RPC request id: a string or a signed 64-bit integer (never ``null``)."""

# --------------------------------------------------------------------------- content


class Annotations(Wire):
    """Display hints of a content block."""

    audience: Annotated[list[str] | None | UnsetType, DS] = UNSET
    last_modified: OptStr = UNSET
    # int | float: a number is kept as received (``1`` stays ``1``, SNAPSHOT.md).
    priority: Annotated[
        Annotated[int, Meta(ge=0, le=1)] | Annotated[float, Meta(ge=0, le=1)] | None | UnsetType,
        D,
    ] = UNSET
    meta: Meta_ = UNSET


class Icon(Wire):
    """An icon of a resource link."""

    src: str
    mime_type: OptStr = UNSET
    sizes: Annotated[list[str] | None | UnsetType, DS] = UNSET
    theme: OptStr = UNSET
    meta: Meta_ = UNSET


OptAnnotations = Annotated[Annotations | None | UnsetType, D]


class TextContent(Wire, tag_field="type", tag="text", kw_only=True):
    """Text (Markdown) content block."""

    type: ClassVar[str] = "text"
    """The wire tag of this variant."""

    text: str
    annotations: OptAnnotations = UNSET
    meta: Meta_ = UNSET


class ImageContent(Wire, tag_field="type", tag="image", kw_only=True):
    """Base64 image content block."""

    type: ClassVar[str] = "image"
    """The wire tag of this variant."""

    data: str
    mime_type: str
    uri: OptStr = UNSET
    annotations: OptAnnotations = UNSET
    meta: Meta_ = UNSET


class AudioContent(Wire, tag_field="type", tag="audio", kw_only=True):
    """Base64 audio content block."""

    type: ClassVar[str] = "audio"
    """The wire tag of this variant."""

    data: str
    mime_type: str
    annotations: OptAnnotations = UNSET
    meta: Meta_ = UNSET


class ResourceLink(Wire, tag_field="type", tag="resource_link", kw_only=True):
    """A link to a resource the receiver may or may not be able to read."""

    type: ClassVar[str] = "resource_link"
    """The wire tag of this variant."""

    name: str
    uri: str
    title: OptStr = UNSET
    description: OptStr = UNSET
    icons: Annotated[list[Icon] | None | UnsetType, DS] = UNSET
    mime_type: OptStr = UNSET
    size: Annotated[UInt64 | None | UnsetType, D] = UNSET
    annotations: OptAnnotations = UNSET
    meta: Meta_ = UNSET

    def __post_init__(self) -> None:
        _check_uint64("size", self.size)


class ResourceContents(Wire):
    """Text or blob contents of an embedded resource (``text`` or ``blob``; both are kept)."""

    uri: str
    text: str | UnsetType = UNSET
    blob: str | UnsetType = UNSET
    mime_type: OptStr = UNSET
    meta: Meta_ = UNSET

    def __post_init__(self) -> None:
        if self.text is UNSET and self.blob is UNSET:
            raise ValueError("expected `text` or `blob`")


class EmbeddedResource(Wire, tag_field="type", tag="resource", kw_only=True):
    """A resource embedded in the content."""

    type: ClassVar[str] = "resource"
    """The wire tag of this variant."""

    resource: ResourceContents
    annotations: OptAnnotations = UNSET
    meta: Meta_ = UNSET


KNOWN_CONTENT_BLOCKS = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)


class UnknownContentBlock(dict[str, Any]):
    """A content block (or tool-call content item) of an unknown or custom ``type``.

    The JSON object as received: a ``dict`` in every respect, and like every known block it
    has a :attr:`type` (the object's ``"type"``).
    """

    __slots__ = ()

    @property
    def type(self) -> Any:
        """The object's ``"type"`` (a string: decoding requires it)."""
        return self.get("type")


if TYPE_CHECKING:
    ContentBlock = Union[
        TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource, UnknownContentBlock
    ]
else:
    ContentBlock = Union[TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource]
"""A content block; an unknown or custom ``type`` is kept as its raw ``dict``."""

# ------------------------------------------------------------------------ tool calls


class ToolCallCancelCapabilities(Wire):
    """Marker: the tool call can be cancelled with ``tool_call/cancel``."""

    meta: Meta_ = UNSET


class ToolCallCapabilities(Wire):
    """Controls a tool call advertises."""

    cancel: Annotated[ToolCallCancelCapabilities | None | UnsetType, D] = UNSET
    meta: Meta_ = UNSET


class ToolCallLocation(Wire):
    """A file location a tool call touches (``line`` is 1-based)."""

    path: str
    line: Annotated[Annotated[int, Meta(ge=1, le=2**32 - 1)] | None | UnsetType, D] = UNSET
    meta: Meta_ = UNSET


class Content(Wire, tag_field="type", tag="content", kw_only=True):
    """Tool-call content item holding a content block."""

    type: ClassVar[str] = "content"
    """The wire tag of this variant."""

    content: ContentBlock
    meta: Meta_ = UNSET


class DiffPatch(Wire):
    """Patch text of a diff (``format`` ``git_patch`` or unknown)."""

    format: str
    text: str
    meta: Meta_ = UNSET


class _DiffChangeBase(Wire):
    file_type: OptStr = UNSET
    mime_type: OptStr = UNSET
    meta: Meta_ = UNSET


class DiffAdd(_DiffChangeBase, tag_field="operation", tag="add", kw_only=True):
    """A file was added."""

    path: str


class DiffDelete(_DiffChangeBase, tag_field="operation", tag="delete", kw_only=True):
    """A file was deleted."""

    path: str


class DiffModify(_DiffChangeBase, tag_field="operation", tag="modify", kw_only=True):
    """A file was modified."""

    path: str


class DiffMove(_DiffChangeBase, tag_field="operation", tag="move", kw_only=True):
    """A file was moved."""

    old_path: str
    path: str


class DiffCopy(_DiffChangeBase, tag_field="operation", tag="copy", kw_only=True):
    """A file was copied."""

    old_path: str
    path: str


if TYPE_CHECKING:
    DiffChange = Union[DiffAdd, DiffDelete, DiffModify, DiffMove, DiffCopy, dict[str, Any]]
else:
    DiffChange = Union[DiffAdd, DiffDelete, DiffModify, DiffMove, DiffCopy]
"""One change of a diff; an unknown ``operation`` is kept as its raw ``dict``."""


class Diff(Wire, tag_field="type", tag="diff", kw_only=True):
    """Tool-call content item describing file changes."""

    type: ClassVar[str] = "diff"
    """The wire tag of this variant."""

    changes: Annotated[list[DiffChange], S]
    patch: Annotated[DiffPatch | None | UnsetType, D] = UNSET
    meta: Meta_ = UNSET


class Terminal(Wire, tag_field="type", tag="terminal", kw_only=True):
    """Tool-call content item that anchors an Agent-owned display terminal."""

    type: ClassVar[str] = "terminal"
    """The wire tag of this variant."""

    terminal_id: str
    meta: Meta_ = UNSET


class SessionReference(Wire, tag_field="type", tag="session", kw_only=True):
    """Tool-call content item: a display-only reference to another session (Preview 2.8).

    It creates no session, establishes no ownership and grants no control (P9).
    """

    type: ClassVar[str] = "session"
    """The wire tag of this variant."""

    session_id: str
    meta: Meta_ = UNSET


if TYPE_CHECKING:
    ToolCallContent = Union[Content, Diff, Terminal, SessionReference, UnknownContentBlock]
else:
    ToolCallContent = Union[Content, Diff, Terminal, SessionReference]
"""A tool-call content item; an unknown ``type`` is kept as its raw ``dict``."""


TOOL_KINDS = (
    "read",
    "edit",
    "delete",
    "move",
    "search",
    "execute",
    "think",
    "fetch",
    "switch_mode",
    "other",
)
"""The tool kinds the spec names (7.3); ``kind`` stays an open string on the wire."""


class ToolCallFields(Wire):
    """The fields of a tool-call upsert (the schema's ``ToolCallUpdate`` object).

    Used bare as the ``toolCall`` of a permission subject; :class:`ToolCallUpdate` is the
    same object as a ``session/update`` variant.
    """

    tool_call_id: str
    name: OptStr = UNSET
    title: OptStr = UNSET
    kind: OptStr = UNSET
    status: OptStr = UNSET
    content: Annotated[list[ToolCallContent] | None | UnsetType, DS] = UNSET
    locations: Annotated[list[ToolCallLocation] | None | UnsetType, DS] = UNSET
    raw_input: Annotated[Any, D] = UNSET
    raw_output: Annotated[Any, D] = UNSET
    capabilities: Annotated[ToolCallCapabilities | None | UnsetType, D] = UNSET
    meta: Meta_ = UNSET


# ------------------------------------------------------------------------- terminals


class TerminalOutput(Wire):
    """A replacement snapshot of terminal output (base64 ``data``)."""

    data: str
    meta: Meta_ = UNSET


class TerminalExitStatus(Wire):
    """How a terminal's command exited; the object itself means "exited"."""

    exit_code: Annotated[Int64 | None | UnsetType, D] = UNSET
    signal: OptStr = UNSET
    meta: Meta_ = UNSET


class TerminalSize(Wire):
    """Columns and rows a terminal's command runs with."""

    cols: Annotated[int, Meta(ge=1, le=65535)]
    rows: Annotated[int, Meta(ge=1, le=65535)]
    meta: Meta_ = UNSET


class TerminalCancelCapabilities(Wire):
    """Marker: the terminal can be cancelled with ``terminal/cancel``."""

    meta: Meta_ = UNSET


class TerminalCapabilities(Wire):
    """Controls a terminal advertises."""

    cancel: Annotated[TerminalCancelCapabilities | None | UnsetType, D] = UNSET
    meta: Meta_ = UNSET


# ------------------------------------------------- plans, commands, config, usage


class PlanEntry(Wire):
    """One entry of an ``items`` plan."""

    content: str
    priority: str
    status: str
    meta: Meta_ = UNSET


class PlanItems(Wire, tag_field="type", tag="items", kw_only=True):
    """Plan content as a list of entries."""

    plan_id: str
    entries: Annotated[list[PlanEntry], S]
    meta: Meta_ = UNSET


class PlanMarkdown(Wire, tag_field="type", tag="markdown", kw_only=True):
    """Plan content as raw Markdown (stable in the v2 Preview, P46)."""

    plan_id: str
    content: str
    meta: Meta_ = UNSET


class PlanFile(Wire, tag_field="type", tag="file", kw_only=True):
    """Plan content as the URI of a file holding the plan (stable in the v2 Preview, P46)."""

    plan_id: str
    uri: str
    meta: Meta_ = UNSET


class _UnmatchedType(Wire, tag_field="type", tag="\x00", kw_only=True):
    """Never matches: makes msgspec require the ``type`` tag of one-variant open unions."""


if TYPE_CHECKING:
    PlanUpdateContent = Union[PlanItems, PlanMarkdown, PlanFile, dict[str, Any]]
else:
    PlanUpdateContent = Union[PlanItems, PlanMarkdown, PlanFile]
"""Plan content; an unknown plan ``type`` is kept as its raw ``dict``."""


class TextCommandInput(Wire, tag_field="type", tag="text", kw_only=True):
    """Free-text input of a slash command."""

    hint: str
    meta: Meta_ = UNSET


if TYPE_CHECKING:
    AvailableCommandInput = Union[TextCommandInput, dict[str, Any]]
else:
    AvailableCommandInput = Union[TextCommandInput, _UnmatchedType]


class Command(Wire, tag_field="type", tag="command", kw_only=True):
    """A slash command."""

    name: str
    description: str
    input: Annotated[AvailableCommandInput | None | UnsetType, D] = UNSET
    meta: Meta_ = UNSET


if TYPE_CHECKING:
    AvailableCommand = Union[Command, dict[str, Any]]
else:
    AvailableCommand = Union[Command, _UnmatchedType]


def _is_option_group(item: Any) -> bool:
    """Whether a select's first entry makes its ``options`` a list of groups.

    By shape: a ``groupId`` and no string ``value`` (an option with an unknown ``groupId``
    member is still an option; the schema's ``anyOf`` allows extra members).
    """
    return isinstance(item, dict) and "groupId" in item and not isinstance(item.get("value"), str)


def _option_ok(item: Any, key: str) -> bool:
    """A well-formed select option (``key`` ``value``) or group (``key`` ``groupId``).

    A group has no ``description`` field: there it is an unknown field, whatever its value.
    """
    if not isinstance(item, dict):
        return False
    if not isinstance(item.get(key), str) or not isinstance(item.get("name"), str):
        return False
    description = item.get("description") if key == "value" else None
    meta = item.get("_meta")
    return (description is None or isinstance(description, str)) and (
        meta is None or isinstance(meta, dict)
    )


class _ConfigOptionBase(Wire):
    config_id: str
    name: str
    description: OptStr = UNSET
    category: OptStr = UNSET
    meta: Meta_ = UNSET


class SessionConfigSelect(_ConfigOptionBase, tag_field="type", tag="select", kw_only=True):
    """A select config option; ``options`` is a flat list of options or a list of groups."""

    current_value: str
    options: list[dict[str, Any]]

    def __post_init__(self) -> None:
        # Strict here; anything imperfect takes the lenient path, which drops invalid group
        # items (D+S) and invalid optional fields with diagnostics (section 9.3).
        if not self.options:
            raise ValueError("a select option needs at least one entry in `options`")
        grouped = _is_option_group(self.options[0])
        for item in self.options:
            if grouped:
                inner = item.get("options")
                if (
                    not _option_ok(item, "groupId")
                    or not isinstance(inner, list)
                    or not all(_option_ok(o, "value") for o in inner)
                ):
                    raise ValueError("malformed option group in `options`")
            elif not _option_ok(item, "value"):
                raise ValueError("malformed option in `options`")


class SessionConfigBoolean(_ConfigOptionBase, tag_field="type", tag="boolean", kw_only=True):
    """A boolean config option."""

    current_value: bool


if TYPE_CHECKING:
    SessionConfigOption = Union[SessionConfigSelect, SessionConfigBoolean, dict[str, Any]]
else:
    SessionConfigOption = Union[SessionConfigSelect, SessionConfigBoolean]


class Cost(Wire):
    """Cumulative session cost; ``currency`` is the unit of ``amount``."""

    amount: int | float  # kept as received: 1 stays 1 (SNAPSHOT.md)
    currency: str
    meta: Meta_ = UNSET

    def __post_init__(self) -> None:
        # JSON has no infinity: a number beyond a double (1e400) is out of range (13.5)
        if type(self.amount) is float and not math.isfinite(self.amount):
            raise ValueError("`amount` is out of range (beyond a double)")


class Error(Wire):
    """A JSON-RPC error object."""

    code: int
    message: str
    data: Annotated[Any, D] = UNSET


class BackgroundTerminal(Wire, tag_field="type", tag="terminal", kw_only=True):
    """Background work backed by a display terminal."""

    terminal_id: str
    meta: Meta_ = UNSET


class BackgroundToolCall(Wire, tag_field="type", tag="tool_call", kw_only=True):
    """Background work that is a tool call."""

    tool_call_id: str
    meta: Meta_ = UNSET


class BackgroundSubagent(Wire, tag_field="type", tag="subagent", kw_only=True):
    """Background work that is a detached subagent session with anything running.

    A reference: it never creates a session (P9).
    """

    session_id: str
    meta: Meta_ = UNSET


if TYPE_CHECKING:
    BackgroundWork = Union[
        BackgroundTerminal, BackgroundToolCall, BackgroundSubagent, dict[str, Any]
    ]
else:
    BackgroundWork = Union[BackgroundTerminal, BackgroundToolCall, BackgroundSubagent]

# ------------------------------------------------------------------- session updates


class _Marker(Wire):
    meta: Meta_ = UNSET


_UPDATE = "sessionUpdate"
_KNOWN_STATES = frozenset({"running", "idle", "requires_action"})


class ContentChunk(Wire):
    """Fields shared by the three message-chunk variants."""

    message_id: str
    content: ContentBlock
    meta: Meta_ = UNSET


class UserMessageChunk(ContentChunk, tag_field=_UPDATE, tag="user_message_chunk", kw_only=True):
    """``user_message_chunk``: append one block to a user message."""

    role: ClassVar[str] = "user"


class AgentMessageChunk(ContentChunk, tag_field=_UPDATE, tag="agent_message_chunk", kw_only=True):
    """``agent_message_chunk``: append one block to an agent message."""

    role: ClassVar[str] = "agent"


class AgentThoughtChunk(ContentChunk, tag_field=_UPDATE, tag="agent_thought_chunk", kw_only=True):
    """``agent_thought_chunk``: append one block to a thought."""

    role: ClassVar[str] = "thought"


class _MessageUpsert(Wire):
    message_id: str
    content: Annotated[list[ContentBlock] | None | UnsetType, DS] = UNSET
    meta: Meta_ = UNSET


class UserMessage(_MessageUpsert, tag_field=_UPDATE, tag="user_message", kw_only=True):
    """``user_message``: upsert a user message."""

    role: ClassVar[str] = "user"


class AgentMessage(_MessageUpsert, tag_field=_UPDATE, tag="agent_message", kw_only=True):
    """``agent_message``: upsert an agent message."""

    role: ClassVar[str] = "agent"


class AgentThought(_MessageUpsert, tag_field=_UPDATE, tag="agent_thought", kw_only=True):
    """``agent_thought``: upsert a thought."""

    role: ClassVar[str] = "thought"


class StateSnapshot(Wire):
    """A foreground-state snapshot without the ``sessionUpdate`` tag.

    The schema's ``StateUpdate`` object as the ``state`` mirror of a ``subagent_update``
    (Preview 2.6, P31); :class:`StateUpdate` is the same object as a ``session/update``
    variant. ``state`` is ``running``, ``idle``, ``requires_action`` or a custom/future
    string (then every other field is kept raw in ``extra``). ``stop_reason`` and ``error``
    belong to ``idle``; a custom stop reason's added fields are kept in ``extra``.
    """

    state: str
    background: Annotated[list[BackgroundWork] | None | UnsetType, D] = UNSET
    stop_reason: OptStr = UNSET
    error: Annotated[Error | None | UnsetType, D] = UNSET
    meta: Meta_ = UNSET

    known_states: ClassVar[frozenset[str]] = _KNOWN_STATES

    def __post_init__(self) -> None:
        if self.state not in self.known_states and (
            self.background is not UNSET
            or self.stop_reason is not UNSET
            or self.error is not UNSET
            or self.meta is not UNSET
        ):
            # A custom or future state's fields are kept raw (in ``extra``), undecoded.
            raise ValueError("fields of an unrecognized state are not decoded")


class StateUpdate(StateSnapshot, tag_field=_UPDATE, tag="state_update", kw_only=True):
    """``state_update``: a snapshot of the foreground state (see :class:`StateSnapshot`)."""


class UnknownStateUpdate(StateUpdate, kw_only=True):
    """``state_update`` with ``state: "unknown"`` (opt-in, unstable; Preview 2.10, P32).

    Never produced by the default decoders (there ``unknown`` is a custom state, its fields
    kept raw): a session that opted in (``unstable={"unknown_state"}``) decodes it.
    """

    known_states: ClassVar[frozenset[str]] = frozenset({"unknown"})


class ToolCallContentChunk(Wire, tag_field=_UPDATE, tag="tool_call_content_chunk", kw_only=True):
    """``tool_call_content_chunk``: append one content item to a tool call."""

    tool_call_id: str
    content: ToolCallContent
    meta: Meta_ = UNSET


class ToolCallUpdate(ToolCallFields, tag_field=_UPDATE, tag="tool_call_update", kw_only=True):
    """``tool_call_update``: upsert a tool call (patch semantics per field)."""


class TerminalUpdate(Wire, tag_field=_UPDATE, tag="terminal_update", kw_only=True):
    """``terminal_update``: upsert a display-only terminal."""

    terminal_id: str
    command: OptStr = UNSET
    cwd: OptStr = UNSET
    output: Annotated[TerminalOutput | None | UnsetType, D] = UNSET
    exit_status: Annotated[TerminalExitStatus | None | UnsetType, D] = UNSET
    size: Annotated[TerminalSize | None | UnsetType, D] = UNSET
    capabilities: Annotated[TerminalCapabilities | None | UnsetType, D] = UNSET
    meta: Meta_ = UNSET


class TerminalOutputChunk(Wire, tag_field=_UPDATE, tag="terminal_output_chunk", kw_only=True):
    """``terminal_output_chunk``: append base64-decoded bytes to a terminal."""

    terminal_id: str
    data: str
    meta: Meta_ = UNSET


class PlanUpdate(Wire, tag_field=_UPDATE, tag="plan_update", kw_only=True):
    """``plan_update``: replace the content of the plan ``plan.planId``."""

    plan: PlanUpdateContent
    meta: Meta_ = UNSET


class AvailableCommandsUpdate(
    Wire, tag_field=_UPDATE, tag="available_commands_update", kw_only=True
):
    """``available_commands_update``: replace the command list."""

    available_commands: Annotated[list[AvailableCommand], S]
    meta: Meta_ = UNSET


class ConfigOptionUpdate(Wire, tag_field=_UPDATE, tag="config_option_update", kw_only=True):
    """``config_option_update``: replace the config option list."""

    config_options: Annotated[list[SessionConfigOption], S]
    meta: Meta_ = UNSET


class SessionInfoUpdate(Wire, tag_field=_UPDATE, tag="session_info_update", kw_only=True):
    """``session_info_update``: patch title / updatedAt / _meta."""

    title: OptStr = UNSET
    updated_at: OptStr = UNSET
    meta: Meta_ = UNSET


class UsageUpdate(Wire, tag_field=_UPDATE, tag="usage_update", kw_only=True):
    """``usage_update``: context usage and cumulative cost."""

    used: UInt64
    size: UInt64
    cost: Annotated[Cost | None | UnsetType, D] = UNSET
    meta: Meta_ = UNSET

    def __post_init__(self) -> None:
        _check_uint64("used", self.used)
        _check_uint64("size", self.size)


class Notice(Wire, tag_field=_UPDATE, tag="notice", kw_only=True):
    """``notice``: fire-and-forget information for the user (not history)."""

    severity: str
    title: Annotated[str, Meta(min_length=1)]
    description: OptStr = UNSET
    meta: Meta_ = UNSET


class CompactionUpdate(Wire, tag_field=_UPDATE, tag="compaction_update", kw_only=True):
    """``compaction_update``: upsert a compaction timeline entry."""

    compaction_id: str
    status: str
    summary: Annotated[list[ContentBlock] | None | UnsetType, DS] = UNSET
    error: OptStr = UNSET
    meta: Meta_ = UNSET


class CompactionSummaryChunk(Wire, tag_field=_UPDATE, tag="compaction_summary_chunk", kw_only=True):
    """``compaction_summary_chunk``: append one block to a compaction's summary."""

    compaction_id: str
    content: ContentBlock
    meta: Meta_ = UNSET


class PlanRemoved(Wire, tag_field=_UPDATE, tag="plan_removed", kw_only=True):
    """``plan_removed``: delete the plan ``planId`` (stable in the v2 Preview, P45)."""

    plan_id: str
    meta: Meta_ = UNSET


class ReplayComplete(Wire, tag_field=_UPDATE, tag="replay_complete", kw_only=True):
    """``replay_complete``: the end of a ``session/resume`` replay (Preview 2.2, P16-P25).

    An event only: no entity, no timeline entry; ``_meta`` is never stored.
    """

    meta: Meta_ = UNSET


class SessionCancelCapabilities(_Marker):
    """Marker: the client may ``session/cancel`` this child's current work."""


class SubagentSessionCapabilities(Wire):
    """Client-initiated mutations a child session permits (an object ``cancel``: cancellable)."""

    cancel: Annotated[SessionCancelCapabilities | None | UnsetType, D] = UNSET
    meta: Meta_ = UNSET


class SubagentUpdate(Wire, tag_field=_UPDATE, tag="subagent_update", kw_only=True):
    """``subagent_update`` on a parent: announce the child ``sessionId`` or patch it (P1-P7).

    Every field but ``sessionId`` is three-state (omitted: unchanged, ``null``: cleared);
    ``_meta`` patches by top-level key; ``state`` mirrors the child's state (P31).
    """

    session_id: str
    title: OptStr = UNSET
    description: OptStr = UNSET
    capabilities: Annotated[SubagentSessionCapabilities | None | UnsetType, D] = UNSET
    state: Annotated[StateSnapshot | None | UnsetType, D] = UNSET
    cwd: str | None | UnsetType = UNSET
    additional_directories: list[str] | None | UnsetType = UNSET
    meta: Meta_ = UNSET


class SessionMessage(Wire, tag_field=_UPDATE, tag="session_message", kw_only=True):
    """``session_message``: upsert an inter-session message (its own id space, P12).

    Participant fields and ``content`` are three-state; ``_meta`` patches by top-level key.
    """

    message_id: str
    sender_session_id: OptStr = UNSET
    recipient_session_id: OptStr = UNSET
    sender_message_id: OptStr = UNSET
    recipient_message_id: OptStr = UNSET
    content: Annotated[list[ContentBlock] | None | UnsetType, DS] = UNSET
    meta: Meta_ = UNSET


class SessionMessageChunk(
    ContentChunk, tag_field=_UPDATE, tag="session_message_chunk", kw_only=True
):
    """``session_message_chunk``: append one block to an inter-session message (P13)."""

    role: ClassVar[str] = "session"


class PromptSuggestion(Wire):
    """One suggested prompt: content the client may send unchanged as a prompt."""

    prompt: Annotated[list[ContentBlock], Meta(min_length=1)]
    meta: Meta_ = UNSET


class PromptSuggestionsUpdate(
    Wire, tag_field=_UPDATE, tag="prompt_suggestions_update", kw_only=True
):
    """``prompt_suggestions_update`` (opt-in, unstable): replace the suggestion list (P34)."""

    suggestions: Annotated[list[PromptSuggestion], S]
    meta: Meta_ = UNSET


class CursorMessageAnchor(Wire):
    """Fields of a cursor anchor naming a message (wire names assumed, Preview 2.4 [U])."""

    message_id: str
    position: str | UnsetType = UNSET
    meta: Meta_ = UNSET


class CursorUserMessageAnchor(
    CursorMessageAnchor, tag_field="type", tag="user_message", kw_only=True
):
    """A cursor anchored before or after a user message."""


class CursorAgentMessageAnchor(
    CursorMessageAnchor, tag_field="type", tag="agent_message", kw_only=True
):
    """A cursor anchored before or after an agent message."""


class CursorAgentThoughtAnchor(
    CursorMessageAnchor, tag_field="type", tag="agent_thought", kw_only=True
):
    """A cursor anchored before or after a thought."""


class CursorSessionMessageAnchor(
    CursorMessageAnchor, tag_field="type", tag="session_message", kw_only=True
):
    """A cursor anchored before or after an inter-session message."""


class CursorToolCallAnchor(Wire, tag_field="type", tag="tool_call", kw_only=True):
    """A cursor anchored before or after a tool call."""

    tool_call_id: str
    position: str | UnsetType = UNSET
    meta: Meta_ = UNSET


class CursorCompactionAnchor(Wire, tag_field="type", tag="compaction", kw_only=True):
    """A cursor anchored before or after a compaction."""

    compaction_id: str
    position: str | UnsetType = UNSET
    meta: Meta_ = UNSET


if TYPE_CHECKING:
    CursorAnchor = Union[
        CursorUserMessageAnchor,
        CursorAgentMessageAnchor,
        CursorAgentThoughtAnchor,
        CursorSessionMessageAnchor,
        CursorToolCallAnchor,
        CursorCompactionAnchor,
        dict[str, Any],
    ]
else:
    CursorAnchor = Union[
        CursorUserMessageAnchor,
        CursorAgentMessageAnchor,
        CursorAgentThoughtAnchor,
        CursorSessionMessageAnchor,
        CursorToolCallAnchor,
        CursorCompactionAnchor,
    ]
"""Where a cursor sits; an unknown anchor ``type`` is kept as its raw ``dict``."""


class CursorUpdate(Wire, tag_field=_UPDATE, tag="cursor_update", kw_only=True):
    """``cursor_update`` (opt-in, unstable): upsert the cursor ``cursorId`` (P40-P44).

    ``anchor`` is strict (a malformed known anchor rejects the update); ``capabilities``
    (shape not yet published) is kept raw, three-state.
    """

    cursor_id: str
    anchor: CursorAnchor | None | UnsetType = UNSET
    capabilities: Annotated[dict[str, Any] | None | UnsetType, D] = UNSET
    meta: Meta_ = UNSET


_KnownSessionUpdate = Union[
    UserMessageChunk,
    UserMessage,
    AgentMessageChunk,
    AgentMessage,
    AgentThoughtChunk,
    AgentThought,
    StateUpdate,
    ToolCallContentChunk,
    ToolCallUpdate,
    TerminalUpdate,
    TerminalOutputChunk,
    PlanUpdate,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    SessionInfoUpdate,
    UsageUpdate,
    Notice,
    CompactionUpdate,
    CompactionSummaryChunk,
    PlanRemoved,
    ReplayComplete,
    SubagentUpdate,
    SessionMessage,
    SessionMessageChunk,
]
KNOWN_SESSION_UPDATES: tuple[type[Wire], ...] = get_args(_KnownSessionUpdate)
"""The Struct of every ``sessionUpdate`` kind decoded by default, in the schema's order
(then the kinds the v2 Preview made stable or baseline, P0)."""
UNSTABLE_SESSION_UPDATES: tuple[type[Wire], ...] = (PromptSuggestionsUpdate, CursorUpdate)
"""The unstable ``sessionUpdate`` kinds: raw ``dict`` updates unless a session opted in."""
if TYPE_CHECKING:
    SessionUpdate = Union[_KnownSessionUpdate, dict[str, Any]]
else:
    SessionUpdate = _KnownSessionUpdate
"""One ``session/update`` payload; an unknown ``sessionUpdate`` is kept as its raw ``dict``."""


class UpdateSessionNotification(Wire):
    """Params of ``session/update``."""

    session_id: str
    update: SessionUpdate
    meta: Meta_ = UNSET


# --------------------------------------------------------------- setup and requests


class Implementation(Wire):
    """Name and version of a client or agent."""

    name: str
    version: str
    title: OptStr = UNSET
    meta: Meta_ = UNSET


class PromptCapabilities(Wire):
    """Prompt content types the agent accepts beyond text and resource links."""

    image: Annotated[_Marker | None | UnsetType, D] = UNSET
    audio: Annotated[_Marker | None | UnsetType, D] = UNSET
    embedded_context: Annotated[_Marker | None | UnsetType, D] = UNSET
    meta: Meta_ = UNSET


class McpCapabilities(Wire):
    """MCP transports the agent supports."""

    stdio: Annotated[_Marker | None | UnsetType, D] = UNSET
    http: Annotated[_Marker | None | UnsetType, D] = UNSET
    meta: Meta_ = UNSET


class SessionCapabilities(Wire):
    """Session features the agent supports."""

    prompt: Annotated[PromptCapabilities | None | UnsetType, D] = UNSET
    mcp: Annotated[McpCapabilities | None | UnsetType, D] = UNSET
    delete: Annotated[_Marker | None | UnsetType, D] = UNSET
    additional_directories: Annotated[_Marker | None | UnsetType, D] = UNSET
    meta: Meta_ = UNSET


class AgentCapabilities(Wire):
    """Capabilities an agent advertises in its ``initialize`` result."""

    session: Annotated[SessionCapabilities | None | UnsetType, D] = UNSET
    auth: Annotated[_Marker | None | UnsetType, D] = UNSET
    meta: Meta_ = UNSET


class PromptSuggestionsCapabilities(PromptCapabilities):
    """Block types the client's prompt suggestions may hold beyond text and resource links."""


class ClientSessionCapabilities(Wire):
    """The client's ``capabilities.session`` group (Preview 2.11); ``{}`` advertises nothing."""

    prompt_suggestions: Annotated[PromptSuggestionsCapabilities | None | UnsetType, D] = UNSET
    commands: Annotated[dict[str, Any] | None | UnsetType, D] = UNSET
    cursors: Annotated[dict[str, Any] | None | UnsetType, D] = UNSET
    meta: Meta_ = UNSET


class ClientCapabilities(Wire):
    """Capabilities the client advertises in ``initialize``."""

    auth: Annotated[dict[str, Any] | None | UnsetType, D] = UNSET
    elicitation: Annotated[dict[str, Any] | None | UnsetType, D] = UNSET
    session: Annotated[ClientSessionCapabilities | None | UnsetType, D] = UNSET
    meta: Meta_ = UNSET


class EnvVariable(Wire):
    """An environment variable."""

    name: str
    value: str
    meta: Meta_ = UNSET


class HttpHeader(Wire):
    """An HTTP header."""

    name: str
    value: str
    meta: Meta_ = UNSET


class AuthMethodAgent(Wire, tag_field="type", tag="agent", kw_only=True):
    """Authentication handled by the agent."""

    method_id: str
    name: str
    description: OptStr = UNSET
    meta: Meta_ = UNSET


class AuthMethodTerminal(Wire, tag_field="type", tag="terminal", kw_only=True):
    """Authentication through a terminal command."""

    method_id: str
    name: str
    description: OptStr = UNSET
    args: Annotated[list[str] | UnsetType, N] = UNSET
    env: Annotated[list[EnvVariable] | UnsetType, N] = UNSET
    meta: Meta_ = UNSET


if TYPE_CHECKING:
    AuthMethod = Union[AuthMethodAgent, AuthMethodTerminal, dict[str, Any]]
else:
    AuthMethod = Union[AuthMethodAgent, AuthMethodTerminal]


class McpServerHttp(Wire, tag_field="type", tag="http", kw_only=True):
    """An MCP server reached over HTTP."""

    name: str
    url: str
    headers: Annotated[list[HttpHeader] | UnsetType, N] = UNSET
    meta: Meta_ = UNSET


class McpServerStdio(Wire, tag_field="type", tag="stdio", kw_only=True):
    """An MCP server started over stdio."""

    name: str
    command: str
    args: Annotated[list[str] | UnsetType, N] = UNSET
    env: Annotated[list[EnvVariable] | UnsetType, N] = UNSET
    meta: Meta_ = UNSET


if TYPE_CHECKING:
    McpServer = Union[McpServerHttp, McpServerStdio, dict[str, Any]]
else:
    McpServer = Union[McpServerHttp, McpServerStdio]


class InitializeRequest(Wire):
    """Params of ``initialize``."""

    protocol_version: UInt16
    info: Implementation
    capabilities: Annotated[ClientCapabilities | UnsetType, D] = UNSET
    meta: Meta_ = UNSET


class InitializeResponse(Wire):
    """Result of ``initialize``."""

    protocol_version: UInt16
    info: Implementation
    capabilities: Annotated[AgentCapabilities | UnsetType, D] = UNSET
    auth_methods: Annotated[list[AuthMethod] | UnsetType, DS] = UNSET
    meta: Meta_ = UNSET


class NewSessionRequest(Wire):
    """Params of ``session/new``."""

    cwd: str
    additional_directories: Annotated[list[str] | UnsetType, N] = UNSET
    mcp_servers: Annotated[list[McpServer] | UnsetType, N] = UNSET
    meta: Meta_ = UNSET


class NewSessionResponse(Wire):
    """Result of ``session/new`` (omitted, ``null`` and ``[]`` lists all mean none, R47)."""

    session_id: str
    config_options: Annotated[list[SessionConfigOption] | UnsetType, DS | N] = UNSET
    available_commands: Annotated[list[AvailableCommand] | UnsetType, DS | N] = UNSET
    meta: Meta_ = UNSET


class ReplayFromStart(Wire, tag_field="type", tag="start", kw_only=True):
    """Replay cursor: all retained history."""

    meta: Meta_ = UNSET


if TYPE_CHECKING:
    ReplayFrom = Union[ReplayFromStart, dict[str, Any]]
else:
    ReplayFrom = Union[ReplayFromStart, _UnmatchedType]


class ResumeSessionRequest(Wire):
    """Params of ``session/resume``."""

    session_id: str
    cwd: str
    additional_directories: Annotated[list[str] | UnsetType, N] = UNSET
    mcp_servers: Annotated[list[McpServer] | UnsetType, N] = UNSET
    replay_from: ReplayFrom | None | UnsetType = UNSET
    meta: Meta_ = UNSET


class ResumeSessionResponse(Wire):
    """Result of ``session/resume`` (omitted, ``null`` and ``[]`` lists all mean none, R47)."""

    config_options: Annotated[list[SessionConfigOption] | UnsetType, DS | N] = UNSET
    available_commands: Annotated[list[AvailableCommand] | UnsetType, DS | N] = UNSET
    meta: Meta_ = UNSET


class SessionInfo(Wire):
    """One session of a ``session/list`` result."""

    session_id: str
    cwd: str
    additional_directories: Annotated[list[str] | UnsetType, N] = UNSET
    title: OptStr = UNSET
    updated_at: OptStr = UNSET
    meta: Meta_ = UNSET


class ListSessionsRequest(Wire):
    """Params of ``session/list``."""

    cwd: str | None | UnsetType = UNSET
    cursor: str | None | UnsetType = UNSET
    meta: Meta_ = UNSET


class ListSessionsResponse(Wire):
    """Result of ``session/list``."""

    sessions: Annotated[list[SessionInfo], DS]
    next_cursor: str | None | UnsetType = UNSET
    meta: Meta_ = UNSET


class _SessionScoped(Wire):
    session_id: str
    meta: Meta_ = UNSET


class CloseSessionRequest(_SessionScoped):
    """Params of ``session/close``."""


class CloseSessionResponse(_Marker):
    """Result of ``session/close``."""


class DeleteSessionRequest(_SessionScoped):
    """Params of ``session/delete``."""


class DeleteSessionResponse(_Marker):
    """Result of ``session/delete``."""


class SetSessionConfigOptionRequest(Wire):
    """Params of ``session/set_config_option`` (``type`` ``id``/``boolean``/other + ``value``)."""

    session_id: str
    config_id: str
    type: str
    value: Any
    meta: Meta_ = UNSET

    def __post_init__(self) -> None:
        # the known value types fix the value's JSON type; other types carry any value
        if self.type == "boolean" and type(self.value) is not bool:
            raise ValueError('`value` must be a boolean for `type` "boolean"')
        if self.type == "id" and type(self.value) is not str:
            raise ValueError('`value` must be a string (a value id) for `type` "id"')


class SetSessionConfigOptionResponse(Wire):
    """Result of ``session/set_config_option``: the complete option list."""

    config_options: Annotated[list[SessionConfigOption], S]
    meta: Meta_ = UNSET


class LoginAuthRequest(Wire):
    """Params of ``auth/login``."""

    method_id: str
    meta: Meta_ = UNSET


class LoginAuthResponse(_Marker):
    """Result of ``auth/login``."""


class LogoutAuthRequest(_Marker):
    """Params of ``auth/logout``."""


class LogoutAuthResponse(_Marker):
    """Result of ``auth/logout``."""


class PromptRequest(Wire):
    """Params of ``session/prompt``: at least one content block."""

    session_id: str
    prompt: Annotated[list[ContentBlock], Meta(min_length=1)]
    idempotency_key: IdempotencyKey | None | UnsetType = UNSET
    meta: Meta_ = UNSET


class PromptResponse(Wire):
    """Result of ``session/prompt``: the inserted user message's id."""

    message_id: str
    meta: Meta_ = UNSET


class CancelSessionNotification(_SessionScoped):
    """Params of ``session/cancel``."""


class CancelRequestNotification(Wire):
    """Params of ``$/cancel_request``."""

    request_id: RequestId
    meta: Meta_ = UNSET


class CancelToolCallRequest(Wire):
    """Params of ``tool_call/cancel``."""

    session_id: str
    tool_call_id: str
    meta: Meta_ = UNSET


class CancelToolCallResponse(_Marker):
    """Result of ``tool_call/cancel``."""


class CancelTerminalRequest(Wire):
    """Params of ``terminal/cancel``."""

    session_id: str
    terminal_id: str
    meta: Meta_ = UNSET


class CancelTerminalResponse(_Marker):
    """Result of ``terminal/cancel``."""


class PermissionOption(Wire):
    """One choice of a permission request."""

    option_id: str
    name: str
    kind: str
    meta: Meta_ = UNSET


class ToolCallPermissionSubject(Wire, tag_field="type", tag="tool_call", kw_only=True):
    """Permission subject: a tool call, applied as an upsert before prompting."""

    tool_call: ToolCallFields
    meta: Meta_ = UNSET


class CommandPermissionSubject(Wire, tag_field="type", tag="command", kw_only=True):
    """Permission subject: a command the agent wants to run (creates nothing)."""

    command: str
    cwd: str
    tool_call_id: OptStr = UNSET
    terminal_id: OptStr = UNSET
    meta: Meta_ = UNSET


if TYPE_CHECKING:
    RequestPermissionSubject = Union[
        ToolCallPermissionSubject, CommandPermissionSubject, dict[str, Any]
    ]
else:
    RequestPermissionSubject = Union[ToolCallPermissionSubject, CommandPermissionSubject]


class SelectedPermissionOutcome(Wire, tag_field="outcome", tag="selected", kw_only=True):
    """Outcome: the user picked ``option_id``."""

    option_id: str
    meta: Meta_ = UNSET


class CancelledPermissionOutcome(Wire, tag_field="outcome", tag="cancelled", kw_only=True):
    """Outcome: not approved, no option chosen."""

    meta: Meta_ = UNSET


if TYPE_CHECKING:
    RequestPermissionOutcome = Union[
        SelectedPermissionOutcome, CancelledPermissionOutcome, dict[str, Any]
    ]
else:
    RequestPermissionOutcome = Union[SelectedPermissionOutcome, CancelledPermissionOutcome]


class RequestPermissionRequest(Wire):
    """Params of ``session/request_permission`` (Agent -> client)."""

    session_id: str
    title: str
    options: Annotated[list[PermissionOption], Meta(min_length=1)]
    description: OptStr = UNSET
    subject: RequestPermissionSubject | None | UnsetType = UNSET
    meta: Meta_ = UNSET


class RequestPermissionResponse(Wire):
    """Result of ``session/request_permission``."""

    outcome: RequestPermissionOutcome
    meta: Meta_ = UNSET


class SessionNotFoundErrorData(Wire):
    """``data`` of a -32002 error about a session."""

    session_id: str
    meta: Meta_ = UNSET


class UnsupportedProtocolVersionErrorData(Wire):
    """``data`` of a -32022 error."""

    requested: UInt16
    supported: list[UInt16]
    meta: Meta_ = UNSET


# ------------------------------------------------------------------------- envelope


class _Envelope(
    msgspec.Struct,
    kw_only=True,
    gc=False,
    repr_omit_defaults=True,
    rename={"extra": EXTRA_KEY},
):
    jsonrpc: str = "2.0"
    extra: Extra | UnsetType = UNSET
    """Unknown members of the JSON-RPC object itself, kept and written back in place."""


class Request(_Envelope, kw_only=True):
    """A JSON-RPC request; ``params`` is the method's Struct when the method is known."""

    id: RequestId
    method: str
    params: Any = UNSET


class Notification(_Envelope, kw_only=True):
    """A JSON-RPC notification; ``params`` is the method's Struct when the method is known."""

    method: str
    params: Any = UNSET


class Response(_Envelope, kw_only=True):
    """A JSON-RPC success response (``result`` decoded by whoever knows the request)."""

    id: RequestId | None
    result: Any = None


class ErrorResponse(_Envelope, kw_only=True):
    """A JSON-RPC error response."""

    id: RequestId | None
    error: Error


Message = Union[Request, Notification, Response, ErrorResponse]
"""Any JSON-RPC 2.0 message."""
