"""The state of one session's entities: messages, tool calls, terminals, plans, compactions.

These objects are owned and mutated by the session reducer (``_session``); users get
them through the reducer's read-only accessors and must treat them as read-only.
List-valued state is exposed as :class:`ListView` (no copy, no mutation).
"""

from __future__ import annotations

import binascii
import codecs
from typing import Any, Literal

from msgspec import UNSET

from . import _schema as s
from ._listview import ListView
from ._offsets import ContentRead, TerminalRead
from ._offsets import since as _since

__all__ = [
    "ListView",
    "compact",
    "text_block",
    "MessageState",
    "ToolCallState",
    "TerminalState",
    "PlanState",
    "CompactionState",
    "SessionMessageState",
    "CursorState",
    "TimelineEntry",
    "Role",
    "ContentRead",
    "TerminalRead",
    "bad_base64_shape",
    "decode_base64",
    "restore_truncated",
    "stored_blocks",
]

Role = Literal["user", "agent", "thought"]
"""A message's role, fixed by the variant that created it (each role has its own ids)."""
FINISHED_STATUSES = frozenset({"completed", "failed", "cancelled"})


def bad_base64_shape(data: str) -> bool:
    """Whether ``data`` has a bad shape that strict ``a2b_base64`` would still accept.

    That is a length that is not a multiple of 4, or excess padding after a whole quantum
    (``"YWJj===="``); strict decoding refuses every other misplaced ``=``.
    """
    return bool(len(data) & 3) or data.endswith("===")


def decode_base64(data: str) -> bytes:
    """Decode standard RFC 4648 base64 (padding required); raise ``ValueError`` if invalid.

    Strict mode still takes excess padding after a whole quantum (``"YWJj="``); the shape
    check refuses it. Non-ASCII text raises ``ValueError`` too.
    """
    if bad_base64_shape(data):
        raise ValueError("base64 padding: the length is not a multiple of 4, or `=` is early")
    try:
        return binascii.a2b_base64(data, strict_mode=True)
    except binascii.Error as exc:
        raise ValueError(str(exc)) from None


def text_block(item: Any) -> s.ContentBlock:
    """A stored content item as its block: plain text is kept compactly as a ``str``."""
    return s.TextContent(text=item) if type(item) is str else item


def compact(block: Any) -> Any:
    """What the reducer stores for ``block``: its text alone when nothing else is set."""
    if (
        type(block) is s.TextContent
        and block.annotations is UNSET
        and block.meta is UNSET
        and block.extra is UNSET
    ):
        return block.text
    return block


class _Entity:
    __slots__ = (
        "base",
        "excluded",
        "extra",
        "first_seen",
        "index",
        "last_changed",
        "limit_noted",
        "meta",
        "version",
    )

    def __init__(self, ordinal: int) -> None:
        self.first_seen = ordinal
        self.last_changed = ordinal
        self.meta: dict[str, Any] | None = None
        self.extra: dict[str, Any] | None = None
        self.excluded = False
        self.limit_noted = False  # a retention limit dropped some of it: said once (issue 26)
        # docs/events.md: the session's change count at the last change (E1), the place in
        # the timeline (E2; -1: none), the absolute index of the first item or byte (E5, E6)
        self.version, self.index, self.base = 0, -1, 0


class _Window(_Entity):
    """An entity whose ``_content`` has absolute indices (docs/events.md, E6)."""

    __slots__ = ("_dropped",)
    _as_block = False  # stored plain text comes back as a TextContent
    _window = "_content"  # the attribute holding the list

    def __init__(self, ordinal: int) -> None:
        super().__init__(ordinal)
        self._dropped = 0

    @property
    def truncated_blocks(self) -> int:
        """Items dropped from the front by the ``block_limit`` since the last replacing upsert."""
        return self._dropped

    def _items(self) -> list[Any]:
        items: list[Any] = getattr(self, self._window)
        return items

    @property
    def content_start(self) -> int:
        """The absolute index of the first item of ``content`` (docs/events.md, E6)."""
        return self.base

    @property
    def content_end(self) -> int:
        """The absolute index after the last item: every item ever appended is counted."""
        return self.base + len(self._items())

    def content_since(self, index: int) -> ContentRead:
        """The items from the absolute ``index`` on; costs the number of items returned.

        Raises:
            ValueError: ``index`` is negative or past :attr:`content_end`.
        """
        items = self._items()
        first, pos, end = _since(items, self.base, index, "content_since")
        items = items[pos:]
        return ContentRead(list(map(text_block, items)) if self._as_block else items, first, end)


class _Blocks(_Window):
    """A message-like entity's content: blocks as received, plain text kept as ``str``."""

    __slots__ = ("_content", "chunk_meta")
    _as_block = True

    def __init__(self, ordinal: int) -> None:
        super().__init__(ordinal)
        self._content: list[Any] = []
        self.chunk_meta: dict[int, dict[str, Any]] | None = None

    @property
    def content(self) -> ListView[s.ContentBlock]:
        """The content blocks, as received (adjacent text blocks are not merged)."""
        return ListView(self._content, text_block)

    def text(self) -> str:
        """The message's text for display: its text blocks joined."""
        parts: list[str] = []
        for block in self._content:
            if type(block) is str:
                parts.append(block)
            elif type(block) is s.TextContent:
                parts.append(block.text)
        return "".join(parts)


class MessageState(_Blocks):
    """A user message, agent message or thought, keyed by (role, ``messageId``).

    Attributes:
        role: ``"user"``, ``"agent"`` or ``"thought"`` (fixed by the variant that created it).
        message_id: the agent's opaque id.
        meta: stored ``_meta`` after META-PATCH (``None`` when none).
        extra: unknown fields, patched by key.
        first_seen / last_changed: ordinals of the updates that created / last changed it.
        excluded: ``True`` once a ``refusal`` excluded it from the agent's next context.
    """

    __slots__ = ("message_id", "role")
    entry = "message"

    def __init__(self, role: Role, message_id: str, ordinal: int) -> None:
        super().__init__(ordinal)
        self.role = role
        self.message_id = message_id

    @property
    def key(self) -> tuple[str, str]:
        """The timeline key: (role, message id)."""
        return (self.role, self.message_id)

    def __repr__(self) -> str:
        return f"MessageState({self.role!r}, {self.message_id!r}, blocks={len(self._content)})"


class ToolCallState(_Window):
    """A tool call keyed by ``toolCallId``, with the agent's stored fields.

    ``kind`` and ``status`` are ``None`` when unset or reset (displayed ``other`` and
    ``pending``); :attr:`effective_status` adds the local cancellation overlay.
    """

    __slots__ = (
        "_content",
        "_locations",
        "cancel_pending",
        "capabilities",
        "chunk_meta",
        "kind",
        "locally_cancelled",
        "name",
        "raw_input",
        "raw_output",
        "status",
        "title",
        "tool_call_id",
    )
    entry = "toolCall"

    def __init__(self, tool_call_id: str, ordinal: int) -> None:
        super().__init__(ordinal)
        self.tool_call_id = tool_call_id
        self.title: str | None = None
        self.name: str | None = None
        self.kind: str | None = None
        self.status: str | None = None
        self._content: list[Any] = []
        self._locations: list[Any] = []
        self.raw_input: Any = UNSET
        self.raw_output: Any = UNSET
        self.capabilities: s.ToolCallCapabilities | None = None
        self.chunk_meta: dict[int, dict[str, Any]] | None = None
        self.locally_cancelled = False
        self.cancel_pending = False

    @property
    def key(self) -> tuple[str, str]:
        """The timeline key: ("toolCall", id)."""
        return ("toolCall", self.tool_call_id)

    @property
    def content(self) -> ListView[s.ToolCallContent]:
        """The content items (content blocks, diffs, terminal anchors, unknown raw items)."""
        return ListView(self._content)

    @property
    def locations(self) -> ListView[s.ToolCallLocation]:
        """The file locations."""
        return ListView(self._locations)

    @property
    def effective_status(self) -> str:
        """The status to display: ``cancelled`` under the local overlay, else the agent's."""
        if self.locally_cancelled:
            return "cancelled"
        return self.status if self.status is not None else "pending"

    @property
    def finished(self) -> bool:
        """Whether the agent's status is final (completed, failed, cancelled)."""
        return self.status in FINISHED_STATUSES

    @property
    def cancellable(self) -> bool:
        """Whether the latest capabilities advertise ``tool_call/cancel``."""
        caps = self.capabilities
        return caps is not None and caps.cancel is not UNSET and caps.cancel is not None

    def __repr__(self) -> str:
        return f"ToolCallState({self.tool_call_id!r}, status={self.effective_status!r})"


class TerminalState(_Entity):
    """A display-only terminal: stored fields and the retained output bytes.

    ``limit`` (bytes) caps retention: older bytes are dropped from the front and counted
    in :attr:`truncated_bytes`. Offsets are absolute (docs/events.md, E5): every byte ever
    appended or set by a snapshot counts, so the retained bytes are ``[start, end)`` and
    :meth:`read` returns those after an offset.
    """

    __slots__ = (
        "_buf",
        "_decoded",
        "_decoded_from",
        "_decoded_upto",
        "_decoder",
        "_dropped",
        "cancel_pending",
        "capabilities",
        "command",
        "cwd",
        "exit_status",
        "limit",
        "size",
        "terminal_id",
    )

    def __init__(self, terminal_id: str, ordinal: int, limit: int | None = None) -> None:
        super().__init__(ordinal)
        self.terminal_id = terminal_id
        self.command: str | None = None
        self.cwd: str | None = None
        self.size: s.TerminalSize | None = None
        self.capabilities: s.TerminalCapabilities | None = None
        self.exit_status: s.TerminalExitStatus | None = None
        self.limit = limit
        self.cancel_pending = False
        self._buf = bytearray()
        self._dropped = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._decoded: list[str] = []
        self._decoded_from = 0  # where in the buffer the decoded text starts
        self._decoded_upto = 0

    def append(self, data: bytes) -> None:
        """Append bytes (amortised constant time per byte, retention applied lazily)."""
        buf = self._buf
        buf += data
        limit = self.limit
        if limit is not None and len(buf) > 2 * limit + 4096:
            drop = len(buf) - limit
            del buf[:drop]
            self._dropped += drop
            self.base += drop
            self._reset_text()

    def replace(self, data: bytes) -> None:
        """Replace all output with a snapshot (clears local truncation).

        The snapshot's bytes take the offsets after every byte before: none is reused.
        """
        self.base += len(self._buf)
        self._buf = bytearray(data)
        self._dropped = 0
        self._reset_text()
        if self.limit is not None and len(self._buf) > self.limit:
            self.append(b"")

    def _reset_text(self) -> None:
        self._decoder.reset()
        self._decoded = []
        self._decoded_from = 0
        self._decoded_upto = 0

    @property
    def output(self) -> bytes:
        """Every retained byte: the last snapshot and the chunks after it."""
        buf = self._buf
        if self.limit is not None and len(buf) > self.limit:
            return bytes(buf[len(buf) - self.limit :])
        return bytes(buf)

    @property
    def start(self) -> int:
        """The absolute offset of the first retained byte (that of ``output[0]``)."""
        buf = self._buf
        if self.limit is not None and len(buf) > self.limit:
            return self.base + len(buf) - self.limit
        return self.base

    @property
    def end(self) -> int:
        """The absolute offset after the last byte: every byte ever received counts."""
        return self.base + len(self._buf)

    def read(self, since: int = 0) -> TerminalRead:
        """The retained bytes from the absolute offset ``since`` on (docs/events.md, E5).

        Costs the size of what is returned. A ``since`` before :attr:`start` returns the
        retained bytes, from :attr:`start`: the bytes in between are gone.

        Raises:
            ValueError: ``since`` is negative or past :attr:`end`.
        """
        end = self.base + len(self._buf)
        if type(since) is not int or since < 0 or since > end:
            raise ValueError(f"read: offset {since!r} is not in [0, {end}] (the end so far)")
        first = self.start
        if since > first:
            first = since
        return TerminalRead(bytes(memoryview(self._buf)[first - self.base :]), first, end)

    @property
    def received_bytes(self) -> int:
        """Bytes kept and dropped: ``len(output) + truncated_bytes``, without the copy."""
        return len(self._buf) + self._dropped

    @property
    def truncated_bytes(self) -> int:
        """Bytes dropped from the front by the local retention limit."""
        extra = 0
        if self.limit is not None and len(self._buf) > self.limit:
            extra = len(self._buf) - self.limit
        return self._dropped + extra

    def text(self) -> str:
        """The output decoded as UTF-8, incrementally (a split sequence decodes correctly).

        Invalid bytes become U+FFFD; control sequences are left in (render them with a
        terminal emulator, or strip them, before display). With a retention limit, the text
        is that of the retained bytes (decoded again after the limit cut some).
        """
        buf = self._buf
        start = 0
        if self.limit is not None and len(buf) > self.limit:
            start = len(buf) - self.limit
        if start != self._decoded_from:
            # The retention limit moved the first retained byte: decode the retained bytes
            # again (at most ``limit`` of them), so no cut byte shows in the text.
            self._reset_text()
            self._decoded_from = self._decoded_upto = start
        if self._decoded_upto < len(buf):
            self._decoded.append(self._decoder.decode(bytes(buf[self._decoded_upto :])))
            self._decoded_upto = len(buf)
        if len(self._decoded) > 1:
            self._decoded = ["".join(self._decoded)]
        return self._decoded[0] if self._decoded else ""

    @property
    def exited(self) -> bool:
        """Whether an ``exitStatus`` object is stored."""
        return self.exit_status is not None

    @property
    def cancellable(self) -> bool:
        """Whether the latest capabilities advertise ``terminal/cancel``."""
        caps = self.capabilities
        return caps is not None and caps.cancel is not UNSET and caps.cancel is not None

    def __repr__(self) -> str:
        return f"TerminalState({self.terminal_id!r}, bytes={len(self._buf)})"


class PlanState:
    """A plan keyed by ``planId``: its last content (a ``PlanItems`` or a raw dict).

    ``version`` grows with every change (docs/events.md, E1).
    """

    __slots__ = ("first_seen", "plan", "plan_id", "version")

    def __init__(self, plan_id: str, plan: Any, ordinal: int) -> None:
        self.plan_id = plan_id
        self.plan = plan
        self.first_seen = ordinal
        self.version = 0

    def __repr__(self) -> str:
        return f"PlanState({self.plan_id!r})"


class CompactionState(_Window):
    """A compaction timeline entry keyed by ``compactionId``.

    Its summary blocks have absolute indices as a message's content (E6):
    :meth:`summary_since` (also spelled ``content_since``).
    """

    __slots__ = ("_summary", "chunk_meta", "compaction_id", "error", "status")
    entry = "compaction"
    _window = "_summary"
    summary_since = _Window.content_since

    def __init__(self, compaction_id: str, ordinal: int) -> None:
        super().__init__(ordinal)
        self.compaction_id = compaction_id
        self.status = "in_progress"
        self._summary: list[Any] = []
        self.error: str | None = None
        self.chunk_meta: dict[int, dict[str, Any]] | None = None

    @property
    def key(self) -> tuple[str, str]:
        """The timeline key: ("compaction", id)."""
        return ("compaction", self.compaction_id)

    @property
    def summary(self) -> ListView[s.ContentBlock]:
        """The summary blocks."""
        return ListView(self._summary)

    def __repr__(self) -> str:
        return f"CompactionState({self.compaction_id!r}, status={self.status!r})"


class SessionMessageState(_Blocks):
    """An inter-session message keyed by ``messageId`` in its own id space (P12-P15).

    The participant fields are ``None`` when unset or cleared; ``content`` holds the blocks
    of ``session_message`` upserts and ``session_message_chunk`` appends, as received.
    """

    __slots__ = (
        "message_id",
        "recipient_message_id",
        "recipient_session_id",
        "sender_message_id",
        "sender_session_id",
    )
    entry = "sessionMessage"

    def __init__(self, message_id: str, ordinal: int) -> None:
        super().__init__(ordinal)
        self.message_id = message_id
        self.sender_session_id: str | None = None
        self.recipient_session_id: str | None = None
        self.sender_message_id: str | None = None
        self.recipient_message_id: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        """The timeline key: ("sessionMessage", message id)."""
        return ("sessionMessage", self.message_id)

    def __repr__(self) -> str:
        return f"SessionMessageState({self.message_id!r}, blocks={len(self._content)})"


class CursorState:
    """An Agent-owned cursor keyed by ``cursorId`` (opt-in, P40-P44); not a timeline entry.

    ``anchor`` is fixed by the first update that carries one (``None`` until then);
    ``capabilities`` is patched, ``meta`` patched by top-level key, ``extra`` by key.
    """

    __slots__ = ("anchor", "capabilities", "cursor_id", "extra", "first_seen", "meta", "version")

    def __init__(self, cursor_id: str, ordinal: int) -> None:
        self.version = 0
        self.cursor_id = cursor_id
        self.anchor: Any = None
        self.capabilities: dict[str, Any] | None = None
        self.meta: dict[str, Any] | None = None
        self.extra: dict[str, Any] | None = None
        self.first_seen = ordinal

    def __repr__(self) -> str:
        return f"CursorState({self.cursor_id!r})"


TimelineEntry = MessageState | ToolCallState | CompactionState | SessionMessageState
"""One entry of a session's timeline."""


def stored_blocks(message: MessageState | SessionMessageState) -> list[Any]:
    """A message's content as stored (plain text kept as ``str``): the snapshot writes it."""
    return message._content


def restore_truncated(entity: TerminalState | TimelineEntry, count: int) -> None:
    """Add what a retention limit dropped (a snapshot being loaded says how many).

    A terminal's bytes or an entry's blocks; an entry's first index moves on by as many.
    """
    if count:
        entity._dropped += count
        entity.limit_noted = True  # the snapshot's diagnostics said it already
        if not isinstance(entity, TerminalState):
            entity.base += count
