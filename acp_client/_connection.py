"""The sans-IO connection: all traffic of one client-agent connection, both directions.

Theory of operation (ACP-V2-CLIENT-STATE.md sections 1, 10-12; prompt-lifecycle-v2.md)
------------------------------------------------------------------------------------
A :class:`Connection` does no I/O. Bytes read from the agent go to
:meth:`Connection.receive_data`; messages already parsed (a stored log, either direction)
go to :meth:`Connection.receive_message`. Both return events. What the client sends is
built by the ``send_*`` / ``answer_*`` methods, which record it and return the bytes to
write. In *live* mode the connection also produces the answers the protocol makes the
client owe (``cancelled`` outcomes after ``session/cancel``, answers to withdrawn
requests); :meth:`Connection.data_to_send` hands them out. In *passive* mode (log replay)
it never produces anything: the client's messages come from the log.

Routing: ``session/update`` goes to that session's reducer (a session named for the first
time is created, not announced); responses are matched by id with the receiver's own
pending requests; the agent's requests are tracked until answered. Sessions are isolated.

Prompt tracking (section 10): a prompt is ``pending`` until its response; success with a
``messageId`` makes it ``accepted`` and links it to the user message with that id, in
either order (``echoed``); an error makes it ``rejected``. Nothing is matched by content
or order, and completion is the session's ``idle`` state, never the response.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Literal, NamedTuple

import msgspec
from msgspec import UNSET

from . import _events as ev
from . import _schema as s
from ._batches import BatchReplies
from ._checks import (
    command_problems,
    config_problems,
    elicitation_problem,
    option_problems,
    relative_path,
    select_values,
)
from ._codec import Decoder, _FastUpdate, convert, encode, message_from_builtins
from ._codec import decode_update_batch as _BATCH_DECODE
from ._codec import decode_update_line as _FAST_DECODE
from ._diagnostics import Diagnostic
from ._entities import MessageState, TerminalState, ToolCallState
from ._errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
    LocalProtocolError,
    RemoteProtocolError,
)
from ._framing import DEFAULT_MAX_LINE, LineBuffer, LineTooLong
from ._prompts import PermissionState, PromptState
from ._session import Session, runs_of
from ._snapshot import FORMAT, session_snapshot

__all__ = ["Connection", "Direction", "SentRequest"]

Direction = Literal["incoming", "outgoing"]
_FAST_ERRORS = (msgspec.ValidationError, msgspec.DecodeError, TypeError, RecursionError)
_BUSY = frozenset({"running", "requires_action"})
#: Requests that need something the agent's initialize answer offers (C4, C6, C7).
_GATED = frozenset({"auth/login", "auth/logout", "session/delete", "session/new", "session/resume"})
_MCP_TRANSPORTS: dict[type[Any], str] = {s.McpServerHttp: "http", s.McpServerStdio: "stdio"}
_UPDATE_PARAMS = s.UpdateSessionNotification


def _r8_result(method: str, result: Any) -> bool:
    """A prompt result without a string ``messageId`` (R8: accepted unbound, one warning).

    That is also a result that is no object at all (``null``, ``"ok"``): it has no id either.
    """
    return method == "session/prompt" and not (
        isinstance(result, dict) and isinstance(result.get("messageId"), str)
    )


class SentRequest(NamedTuple):
    """A request built by the connection: its id and the bytes to write."""

    request_id: int | str
    data: bytes


class _Pending:
    __slots__ = (
        "commands_mark",
        "config_mark",
        "marks",
        "method",
        "params",
        "session_id",
        "state_mark",
    )

    def __init__(self, method: str, params: Any, session_id: str | None) -> None:
        self.method = method
        self.params = params
        self.session_id = session_id
        self.commands_mark = -1
        self.config_mark = -1
        self.state_mark = -1
        # session/new names no session: every known session's (commands, config) counts
        self.marks: dict[str, tuple[int, int]] | None = None


def _parsed_batch(first: s.Message | RemoteProtocolError) -> bool:
    """Whether a line starting with ``[`` held a non-empty array (not a parse error, 1.5)."""
    return not (
        isinstance(first, RemoteProtocolError) and (first.code == PARSE_ERROR or first.raw == [])
    )


def _cancelled_entity(session: Session, params: Any) -> ToolCallState | TerminalState | None:
    """The tool call or terminal a ``tool_call/cancel`` / ``terminal/cancel`` names."""
    tool_call_id = getattr(params, "tool_call_id", None)
    if isinstance(tool_call_id, str):
        return session.tool_calls.get(tool_call_id)
    terminal_id = getattr(params, "terminal_id", None)
    if isinstance(terminal_id, str):
        return session.terminals.get(terminal_id)
    return None


_PROMPT_CAPABILITY: dict[type[Any], str] = {
    s.ImageContent: "image",
    s.AudioContent: "audio",
    s.EmbeddedResource: "embedded_context",
}
#: The prompt block types by wire name: the capability each needs (None: always accepted).
_PROMPT_BLOCK_TYPES: dict[Any, str | None] = {
    "text": None,
    "resource_link": None,
    "image": "image",
    "audio": "audio",
    "resource": "embedded_context",
}


def _check_config_value(options: Sequence[Any] | None, config_id: str, value: str | bool) -> None:
    """C21: set only a listed value of a select, or a boolean of a boolean option."""
    if not options:
        return  # no list reported: nothing to check against
    for option in options:
        listed = option.get("configId") if isinstance(option, dict) else option.config_id
        if listed != config_id:
            continue
        if type(option) is s.SessionConfigBoolean:
            if not isinstance(value, bool):
                raise LocalProtocolError(f"config option {config_id!r} takes a boolean (C21)")
        elif type(option) is s.SessionConfigSelect and (
            isinstance(value, bool) or value not in select_values(option.options)
        ):
            raise LocalProtocolError(
                f"{value!r} is not a value of config option {config_id!r} (C21)"
            )
        return
    raise LocalProtocolError(f"the session lists no config option {config_id!r} (C21)")


def _field(obj: Any, name: str, wire_name: str | None = None) -> Any:
    """A field of a decoded Struct, or of raw params (by its wire name); ``UNSET`` if absent."""
    if isinstance(obj, dict):
        return obj.get(wire_name or name, UNSET)
    return getattr(obj, name, UNSET)


def _check_mcp_transports(servers: list[Any], mcp: Any) -> None:
    """C6: MCP servers only with a transport the agent advertises (``session.mcp``)."""
    extra = getattr(mcp, "extra", None)
    for server in servers:
        kind = _MCP_TRANSPORTS.get(type(server))
        if kind is None and isinstance(server, dict):
            kind = server.get("type")
        if kind in ("http", "stdio"):
            offered = getattr(mcp, kind, None) not in (None, UNSET)
        else:  # a transport this library does not know: offered only by a field of that name
            offered = isinstance(extra, dict) and extra.get(kind) is not None
        if not offered:
            raise LocalProtocolError(
                f"MCP server transport {kind!r}: the agent does not advertise"
                f" session.mcp.{kind} (C6)"
            )


def _salvage(value: Any, tp: Any) -> Any:
    """``value`` (part of an answer that failed validation) as ``tp`` if readable, else ``None``."""
    if value is None:
        return None
    try:
        return convert(value, tp)
    except RemoteProtocolError:
        return None


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _replays(params: Any) -> bool:
    """Whether ``session/resume`` params (or raw ones) ask for a replay (``replayFrom``, 12.3)."""
    replay_from = _field(params, "replay_from", "replayFrom")
    return replay_from is not UNSET and replay_from is not None


def _session_id_of(params: Any) -> str | None:
    sid = getattr(params, "session_id", None)
    if sid is None and isinstance(params, dict):
        sid = params.get("sessionId")
    return sid if isinstance(sid, str) else None


class Connection:
    r"""Client-side state of one ACP connection.

    Args:
        live: ``True`` when attached to a real agent (the connection answers what the
            client owes automatically, see :meth:`data_to_send`); ``False`` to replay a
            recorded log of both directions.
        terminal_limit: per-terminal byte retention limit for every session.
        max_line: the longest incoming line accepted, in bytes.
        extension_methods: agent request methods the embedder answers itself (with
            :meth:`answer_request` or :meth:`answer_error`). In live mode every other
            request the connection does not handle is answered -32601 at once (1.3, 2.4);
            ``session/request_permission`` always waits for the embedder, and so does
            ``elicitation/create`` when ``initialize`` advertised elicitation (else it is
            answered -32601 too).

    Example:
        >>> from acp_client import Connection
        >>> conn = Connection()
        >>> _ = conn.send_initialize()  # C1: initialize, then set up the session, then prompt
        >>> _ = conn.receive_data(b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,'
        ...     b'"capabilities":{},"info":{"name":"agent","version":"1"}}}\n')
        >>> _ = conn.send_new_session("/work")
        >>> _ = conn.receive_data(b'{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}\n')
        >>> request_id, data = conn.send_prompt("s1", "Hello")
        >>> events = conn.receive_data(b'{"jsonrpc":"2.0","id":2,"result":{"messageId":"u1"}}\n')
        >>> events[0].message_id, conn.prompt(request_id).status, conn.diagnostics
        ('u1', 'accepted', [])
    """

    def __init__(
        self,
        *,
        live: bool = True,
        terminal_limit: int | None = None,
        max_line: int = DEFAULT_MAX_LINE,
        extension_methods: Collection[str] = (),
    ) -> None:
        self.live = live
        self.extension_methods = frozenset(extension_methods)
        """Agent request methods the embedder answers itself (see the class docs)."""
        self.terminal_limit = terminal_limit
        self.diagnostics: list[Diagnostic] = []
        self.protocol_version: int | None = None
        self.agent_info: s.Implementation | None = None
        self.agent_capabilities: s.AgentCapabilities | None = None
        # Set once this connection saw initialize answered: from then on, capabilities the
        # agent omitted or sent unreadable are not supported (C3), so the checks apply.
        self._capabilities_answered = False
        self.auth_methods: list[Any] = []
        self._sessions: dict[str, Session] = {}
        self._pending_out: dict[int | str, _Pending] = {}
        self._pending_in: dict[int | str, tuple[str, Any, str | None]] = {}
        self._prompts: dict[int | str, PromptState] = {}
        self._next_id = 0
        self._lines = LineBuffer(max_line)
        self._decoder = Decoder()
        self._outbox: list[bytes] = []
        self._batches = BatchReplies()
        self._unmatched: list[Any] = []
        self.line: int | None = None
        self._sent_events: list[ev.Event] = []
        self._requests_sent = False  # a request other than initialize was sent (1.4)
        self._initialize_sent = False
        self._elicitation = False  # the client's initialize advertised elicitation
        self.record_sends = True
        """Whether ``send_*`` record what they build (a transport that translates the
        messages, to v1 say, turns this off and records the translation instead)."""

    # ----------------------------------------------------------------- accessors

    @property
    def sessions(self) -> Mapping[str, Session]:
        """Every session seen, by id, in first-seen order."""
        return self._sessions

    def session(self, session_id: str) -> Session:
        """The session with that id (``KeyError`` if never seen)."""
        return self._sessions[session_id]

    def prompt(self, request_id: int | str) -> PromptState:
        """The prompt submission sent with that request id."""
        return self._prompts[request_id]

    def prompt_finished(self, request_id: int | str) -> bool:
        """Whether the turn of an accepted prompt has ended (an ``idle`` completed it)."""
        prompt = self._prompts[request_id]
        if prompt.turns_before is None:
            return False
        session = self._sessions[prompt.session_id]
        return len(session.completed_turns) > prompt.turns_before

    def prompt_stop_reason(self, request_id: int | str) -> str | None:
        """The stop reason of the prompt's turn once it ended (``None`` if not reported).

        Raises:
            LocalProtocolError: the turn has not ended (see :meth:`prompt_finished`).
        """
        if not self.prompt_finished(request_id):
            raise LocalProtocolError(f"the turn of prompt {request_id!r} has not ended")
        prompt = self._prompts[request_id]
        reason: str | None = self._sessions[prompt.session_id].completed_turns[
            prompt.turns_before  # type: ignore[index]
        ]
        return reason

    def prompt_message(self, request_id: int | str) -> MessageState | None:
        """The user message the prompt was inserted as, once its update was applied."""
        prompt = self._prompts[request_id]
        if prompt.message_id is None:
            return None
        return self._sessions[prompt.session_id].message("user", prompt.message_id)

    @property
    def unmatched_responses(self) -> Sequence[Any]:
        """Responses whose request was never seen (raw)."""
        return tuple(self._unmatched)

    def pending_agent_requests(self) -> dict[int | str, str]:
        """The agent's requests still waiting for the client's answer: id -> method."""
        return {rid: method for rid, (method, _p, _sid) in self._pending_in.items()}

    def snapshot(self) -> dict[str, Any]:
        """The reconciled state as plain data (SNAPSHOT.md, ``acp-client/snapshot@1``)."""
        sessions = []
        for session in self._sessions.values():
            if session.protocol_version is None:
                session.protocol_version = self.protocol_version
            sessions.append(session_snapshot(session))
        return {
            "format": FORMAT,
            "sessions": sessions,
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }

    # ------------------------------------------------------------------ internals

    def _note(
        self,
        code: str,
        message: str,
        severity: Literal["warning", "error"] = "warning",
        session_id: str | None = None,
        path: str | None = None,
    ) -> None:
        self.diagnostics.append(
            Diagnostic(
                code=code,
                message=message,
                severity=severity,
                line=self.line,
                path=path,
                session_id=session_id,
            )
        )

    def _agent_session(self, session_id: str, events: list[ev.Event]) -> Session:
        """The session an agent message names; live, one never announced is unusual (12.5)."""
        if (
            self.live
            and session_id not in self._sessions
            and not any(p.method == "session/new" for p in self._pending_out.values())
        ):
            self._note(
                "unannounced-session",
                f"the agent named session {session_id!r}, which no session/new or"
                " session/resume announced (12.5); it is created",
                session_id=session_id,
            )
        return self._session(session_id, events)

    def _session(self, session_id: str, events: list[ev.Event] | None = None) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            session = Session(
                session_id, terminal_limit=self.terminal_limit, diagnostics=self.diagnostics
            )
            session.protocol_version = self.protocol_version  # the connection's, if known
            self._sessions[session_id] = session
            if events is not None:
                events.append(ev.SessionCreated(session_id=session_id, announced=False))
        session.line = self.line
        return session

    def _apply_update(self, params: s.UpdateSessionNotification, events: list[ev.Event]) -> None:
        session = self._sessions.get(params.session_id)
        if session is None:
            session = self._agent_session(params.session_id, events)
        session.line = self.line
        if session.closed:
            self._note(
                "update-after-close",
                "session/update for a closed session (applied, R38)",
                session_id=session.session_id,
            )
        events.append(session.apply(params.update))
        if session.side_events:
            events.extend(session.side_events)
            session.side_events.clear()

    # -------------------------------------------------------------------- receive

    def receive_data(self, data: bytes) -> list[ev.Event]:
        """Feed bytes read from the agent's stdout (split anywhere); return the events.

        Raises:
            TypeError: ``data`` is text (``str``), not bytes.
        """
        if isinstance(data, str):  # type: ignore[unreachable]  # untyped callers
            raise TypeError("receive_data takes the bytes read from the agent, not str")
        events: list[ev.Event] = []
        if self.line is not None:
            self._forget_lines()
        span = self._lines.feed_span(data)
        if span is None:  # a line may be over the limit: the line-by-line framer decides
            self._receive_lines(self._lines.feed(data), events)
            return events
        head, start, end = span
        if head is not None:
            self._receive_lines((head,), events)
        if start >= end:
            return events
        # The common read holds only session/update lines: decode them all in one pass as
        # the items of one array (each newline becomes " ,"), then apply them in order. A
        # line that is not exactly one JSON value (nothing, two values, or a message spread
        # over lines) fails the batch or changes the count of items, and the read is taken
        # line by line. (Only a line crafted to hold "},{" between two values could make up
        # for a spread message in the same read; either way the updates are the agent's own.)
        # The whole read is wrapped (before ``start`` and after ``end`` there is one newline
        # at most) and the array cut from that copy through a view: two copies in all.
        wrapped = data.replace(b"\n", b" ,")
        after = len(data) - end + 1  # in wrapped: the last newline's " ," and what follows
        cut = memoryview(wrapped)[start + (start > 0) : -after]
        try:
            batch = _BATCH_DECODE(b"".join((b"[", cut, b"]")))
        except _FAST_ERRORS:
            batch = None
        # the lines of data[start:end]: the newlines of the read but the one before start
        if batch is None or len(batch) != len(wrapped) - len(data) - (start > 0):
            self._receive_lines(data[start:end].split(b"\n"), events)
        else:
            self._apply_notes(batch, events)
        return events

    def _receive_lines(self, lines: Iterable[bytes | LineTooLong], events: list[ev.Event]) -> None:
        """Take lines one by one; consecutive ``session/update`` lines are applied together."""
        notes: list[_FastUpdate] = []
        for line in lines:
            try:
                notes.append(_FAST_DECODE(line))  # type: ignore[arg-type]
                continue
            except _FAST_ERRORS:
                pass
            if notes:
                self._apply_notes(notes, events)
                notes = []
            if type(line) is not bytes:
                self._line_too_long(line, events)  # type: ignore[arg-type]
            elif line.strip():
                self._receive_line(line, events)
        if notes:
            self._apply_notes(notes, events)

    def _apply_notes(self, notes: list[_FastUpdate], events: list[ev.Event]) -> None:
        """Apply decoded ``session/update`` notifications in order, a session's run at a time."""
        session_ids = [n.params.session_id for n in notes]
        if session_ids.count(session_ids[0]) == len(notes):
            runs: Iterable[tuple[str, list[_FastUpdate]]] = ((session_ids[0], notes),)
        else:
            runs = runs_of(session_ids, notes)
        sessions = self._sessions
        for session_id, run in runs:
            session = sessions.get(session_id)
            if session is None:
                self._apply_update(run[0].params, events)  # creates the session
                session = sessions[session_id]
                run = run[1:]
            if session.closed:
                for one in run:
                    self._apply_update(one.params, events)
            elif run:
                session.apply_run([n.params.update for n in run], events)

    def _forget_lines(self) -> None:
        """Leaving log replay for live bytes: diagnostics no longer have a log line."""
        self.line = None
        for session in self._sessions.values():
            session.line = None

    def receive_eof(self) -> list[ev.Event]:
        """The agent closed its stdout: handle a last line without a newline."""
        events: list[ev.Event] = []
        for line in self._lines.flush():
            if type(line) is bytes:
                if line.strip():
                    self._receive_line(line, events)
            else:
                self._line_too_long(line, events)  # type: ignore[arg-type]
        return events

    def receive_update(
        self, params: s.UpdateSessionNotification, *, line: int | None = None
    ) -> list[ev.Event]:
        """Apply the params of one decoded ``session/update`` (the agent's notification)."""
        self.line = line
        events: list[ev.Event] = []
        self._apply_update(params, events)
        return events

    def receive_line(self, line: bytes) -> list[ev.Event]:
        """Feed one complete line read from the agent (without its newline)."""
        events: list[ev.Event] = []
        if len(line) > self._lines.max_line:
            self._line_too_long(LineTooLong(len(line)), events)
        elif line.strip():
            self._receive_line(line, events)
        return events

    def next_request_id(self) -> int:
        """Allocate a request id (never reused) without sending anything."""
        return self._new_id()

    def _line_too_long(self, marker: LineTooLong, events: list[ev.Event]) -> None:
        error = RemoteProtocolError(
            f"line of {marker.size} bytes exceeds the limit of {self._lines.max_line}",
            code=INVALID_REQUEST,
        )
        self._note("line-too-long", error.message, "error")
        events.append(ev.InvalidMessageReceived(error=error))

    def _stamp(self, start: int, session_id: str | None) -> None:
        """Give diagnostics added by decoding the current line/message their place."""
        diags = self.diagnostics
        for index in range(start, len(diags)):
            diag = diags[index]
            if diag.line is None and (self.line is not None or session_id is not None):
                diags[index] = msgspec.structs.replace(
                    diag, line=self.line, session_id=diag.session_id or session_id
                )

    def _receive_line(self, line: bytes, events: list[ev.Event]) -> None:
        start = len(self.diagnostics)
        items = self._decoder.decode_all(line, self.diagnostics)
        if b'"jsonrpc"' not in line and items and not isinstance(items[0], RemoteProtocolError):
            # 1.2: every object carries it; accepted without (as the log reader does)
            self._note("missing-jsonrpc-version", 'no "jsonrpc" member; accepted as 2.0')
        if len(self.diagnostics) > start:
            self._stamp(start, _session_id_of(getattr(items[0], "params", None)))
        batch = self.live and line.lstrip()[:1] == b"[" and _parsed_batch(items[0])
        if batch:
            self._batches.begin()
        try:
            for item in items:
                if isinstance(item, RemoteProtocolError):
                    self._invalid(item, events, "incoming")
                else:
                    self._dispatch(item, "incoming", events)
        finally:
            if batch:
                self._outbox.append(self._batches.end())

    def receive_message(
        self,
        message: s.Message | dict[str, Any] | list[Any],
        direction: Direction = "incoming",
        *,
        line: int | None = None,
    ) -> list[ev.Event]:
        """Apply one message already parsed: a Struct, or plain JSON data (a batch allowed).

        ``direction`` is ``"incoming"`` for what the agent sent and ``"outgoing"`` for what
        the client sent (log replay). ``line`` is the log line, for diagnostics.
        """
        self.line = line
        events: list[ev.Event] = []
        if not isinstance(message, list):
            self._receive_one(message, direction, events)
        elif not message:
            self._invalid(
                RemoteProtocolError("empty batch", code=INVALID_REQUEST, raw=message),
                events,
                direction,
            )
        elif self.live and direction == "incoming":
            self._batches.begin()
            try:
                for item in message:
                    self._receive_one(item, direction, events)
            finally:
                self._outbox.append(self._batches.end())
        else:
            for item in message:
                self._receive_one(item, direction, events)
        return events

    def _receive_one(self, item: Any, direction: Direction, events: list[ev.Event]) -> None:
        if isinstance(item, dict):
            parsed = self._from_builtins(item, events, direction)
            if parsed is None:
                return
        elif isinstance(item, s.Request | s.Notification | s.Response | s.ErrorResponse):
            parsed = item
        else:
            kind = type(item).__name__
            error = RemoteProtocolError(
                f"expected a JSON-RPC object, got {kind}", code=INVALID_REQUEST, raw=item
            )
            self._invalid(error, events, direction)
            return
        self._dispatch(parsed, direction, events)

    def _from_builtins(
        self, obj: dict[str, Any], events: list[ev.Event], direction: Direction
    ) -> s.Message | None:
        if obj.get("method") == "session/update" and "id" not in obj:
            params = obj.get("params")
            try:
                typed = msgspec.convert(params, _UPDATE_PARAMS)
            except (msgspec.ValidationError, UnicodeEncodeError):  # a lone surrogate key
                pass
            else:
                return s.Notification(method="session/update", params=typed)
        start = len(self.diagnostics)
        try:
            return message_from_builtins(obj, self.diagnostics)
        except RemoteProtocolError as exc:
            self._invalid(exc, events, direction)
            return None
        finally:
            if len(self.diagnostics) > start:
                self._stamp(start, _session_id_of(obj.get("params")))

    def _invalid(self, error: RemoteProtocolError, events: list[ev.Event], direction: str) -> None:
        error.line = self.line
        raw = error.raw
        if isinstance(raw, dict) and raw.get("method") == "session/update":
            params = raw.get("params")
            sid = params.get("sessionId") if isinstance(params, dict) else None
            if isinstance(sid, str):
                session = self._session(sid, events)
                update = params.get("update") if isinstance(params, dict) else None
                self._note(
                    "update-rejected",
                    f"session/update rejected: {error.message} at `{error.path}`",
                    "error",
                    sid,
                    error.path,
                )
                session.side_events.clear()
                events.append(ev.UpdateRejected(session_id=sid, error=error, raw=update))
                if self.live and direction == "incoming" and error.request_id is not None:
                    self._batches.expect(error.request_id)
                    self._respond_error(error.request_id, error.code, error.message)
                return
        if isinstance(raw, dict) and isinstance(raw.get("method"), str):
            sid = _session_id_of(raw.get("params"))
            if sid is not None:  # 12.5: any message naming a session creates it
                if direction == "incoming":
                    self._agent_session(sid, events)
                else:
                    self._session(sid, events)
            rid = raw.get("id")
            if direction == "outgoing" and isinstance(rid, int | str) and not isinstance(rid, bool):
                # The client's own request, malformed (a log): tracked with its raw params,
                # so that its answer is matched and nothing it started is lost (1.8).
                request = s.Request(id=rid, method=raw["method"], params=raw.get("params", UNSET))
                self._outgoing_request(request, events)
        if (
            direction == "incoming"
            and isinstance(raw, dict)
            and "method" in raw
            and error.request_id is not None
        ):
            rid = error.request_id
            if rid in self._pending_in:
                self._displace(rid, events)  # an answer to the id can only be this one's
            if self.live:
                # An inbound request with malformed params is answered -32602 (section 1.8).
                self._batches.expect(rid)
                self._respond_error(rid, error.code, error.message)
            else:
                # A log: the client's answer follows; it pairs with this request, as live.
                method = raw["method"]
                self._pending_in[rid] = (method if isinstance(method, str) else "", None, None)
        # A malformed response is never answered (1.2); the request it answers (when its id
        # is readable) ends failed, below.
        response = isinstance(raw, dict) and "method" not in raw and "id" in raw
        if (
            not response
            and self.live
            and direction == "incoming"
            and error.code == INVALID_REQUEST
            and error.request_id is None
        ):
            # 1.5: an invalid entry (or an empty batch) gets its own -32600 with id null.
            self._respond_error(None, INVALID_REQUEST, error.message)
        code = "invalid-message" if error.code != -32700 else "malformed-line"
        self._note(code, f"{error.message} at `{error.path}`", "error", path=error.path)
        events.append(ev.InvalidMessageReceived(error=error))
        if response and isinstance(raw, dict):
            self._settle_malformed_response(error, raw, events, direction)

    def _settle_malformed_response(
        self,
        error: RemoteProtocolError,
        raw: dict[str, Any],
        events: list[ev.Event],
        direction: str,
    ) -> None:
        """The request a malformed response answers ends failed: -32603, the raw in ``data``."""
        rid = error.request_id
        pending = self._pending_out if direction == "incoming" else self._pending_in
        if rid is None or rid not in pending:
            return
        settled = s.ErrorResponse(
            id=rid,
            error=s.Error(
                code=INTERNAL_ERROR, message=f"malformed response: {error.message}", data=raw
            ),
        )
        if direction == "incoming":
            self._incoming_response(settled, events)
        else:
            self._outgoing_response(settled, events)

    def _dispatch(self, message: s.Message, direction: Direction, events: list[ev.Event]) -> None:
        kind = type(message)
        if direction == "incoming":
            if kind is s.Notification:
                self._incoming_notification(message, events)  # type: ignore[arg-type]
            elif kind is s.Request:
                self._incoming_request(message, events)  # type: ignore[arg-type]
            else:
                self._incoming_response(message, events)  # type: ignore[arg-type]
        elif kind is s.Request:
            self._outgoing_request(message, events)  # type: ignore[arg-type]
        elif kind is s.Notification:
            self._outgoing_notification(message, events)  # type: ignore[arg-type]
        else:
            self._outgoing_response(message, events)  # type: ignore[arg-type]

    # ------------------------------------------------------------ agent -> client

    def _incoming_notification(self, message: s.Notification, events: list[ev.Event]) -> None:
        method = message.method
        params = message.params
        if method == "session/update":
            self._apply_update(params, events)
        elif method == "$/cancel_request":
            self._agent_cancel_request(params.request_id, events)
        # other notifications (elicitation/complete, extensions) change no state

    def _agent_cancel_request(self, request_id: int | str, events: list[ev.Event]) -> None:
        pending = self._pending_in.get(request_id)
        if pending is None:
            return  # unknown or answered: ignored (R62)
        method, _params, sid = pending
        if method == "session/request_permission" and sid is not None:
            perm = self._sessions[sid].permissions.get(request_id)
            if perm is not None and perm.status == "pending":
                perm.advance("withdraw")
                events.append(ev.PermissionWithdrawn(session_id=sid, request_id=request_id))
                if self.live:
                    self._answer_permission(perm, None, events)
        elif method == "elicitation/create" and self.live:
            self._respond(request_id, {"action": "cancel"})
            self._pending_in.pop(request_id, None)

    def _displace(self, rid: int | str, events: list[ev.Event]) -> None:
        """The agent reused the id of a request still pending (1.2 forbids it).

        The new request replaces the old one, as a log's reader pairs them (LOG-FORMATS
        1.10): an answer with that id can only be read as the new request's. The old one
        can no longer be answered on its own, so nothing waits for it: a pending permission
        request is ``withdrawn`` (the agent gave it up), and a batch it came in no longer
        waits for its reply (else the batch's answers would never be written).
        """
        method, _params, sid = self._pending_in.pop(rid)
        self._note(
            "duplicate-request-id",
            f"the agent reused pending request id {rid!r}: its new request replaces"
            f" the {method} request, which can no longer be answered",
            session_id=sid,
        )
        if self.live:
            data = self._batches.forget(rid)
            if data:
                self._outbox.append(data)
        session = self._sessions.get(sid) if sid is not None else None
        perm = session.permissions.get(rid) if session is not None else None
        if method == "session/request_permission" and perm is not None and perm.status == "pending":
            perm.advance("withdraw")
            events.append(ev.PermissionWithdrawn(session_id=perm.session_id, request_id=rid))

    def _incoming_request(self, message: s.Request, events: list[ev.Event]) -> None:
        rid = message.id
        if rid in self._pending_in:
            self._displace(rid, events)
        method = message.method
        params = message.params
        sid = _session_id_of(params)
        self._pending_in[rid] = (method, params, sid)
        if self.live:
            self._batches.expect(rid)  # in a batch, its answer joins the batch's array
        if method == "session/request_permission":
            session = self._agent_session(params.session_id, events)
            subject = params.subject
            tool_call_id = None
            if type(subject) is s.ToolCallPermissionSubject:
                events.append(session.apply(subject.tool_call))
                if session.side_events:  # a terminal its content created
                    events.extend(session.side_events)
                    session.side_events.clear()
                tool_call_id = subject.tool_call.tool_call_id
            elif type(subject) is s.CommandPermissionSubject and isinstance(
                subject.tool_call_id, str
            ):
                tool_call_id = subject.tool_call_id
            for problem in option_problems(params.options):
                self._note("invalid-permission-request", problem, session_id=session.session_id)
            if params.extra:
                session.check_shadowed(params.extra, "permission request", rid)
            if type(subject) is s.CommandPermissionSubject and relative_path(subject.cwd):
                self._note(
                    "relative-path",
                    f"permission request {rid!r}: command cwd {subject.cwd!r} (A21)",
                    session_id=session.session_id,
                )
            perm = PermissionState(rid, session.session_id, params, tool_call_id)
            session.add_permission(perm)
            events.append(
                ev.PermissionRequested(
                    session_id=session.session_id, request_id=rid, request=params
                )
            )
            if self.live and (
                session.lifecycle == "closing"  # 11.5: the close cancels the work
                or (
                    session.cancel_requested
                    and not session.in_background(tool_call_id, perm.terminal_id)
                )
            ):
                self._answer_permission(perm, None, events)
        else:
            if sid is not None:
                self._agent_session(sid, events)
            events.append(ev.AgentRequestReceived(request_id=rid, method=method, params=params))
            served = method in self.extension_methods or (
                method == "elicitation/create" and self._elicitation
            )
            malformed = elicitation_problem(params) if method == "elicitation/create" else None
            if self.live and served and malformed is not None:
                del self._pending_in[rid]  # 1.8: malformed params are answered -32602
                self._respond_error(rid, INVALID_PARAMS, f"elicitation/create: {malformed}")
            elif self.live and not served:
                del self._pending_in[rid]  # 1.3: an unknown request is answered -32601
                self._respond_error(rid, METHOD_NOT_FOUND, f"method not found: {method}")

    def _incoming_response(
        self, message: s.Response | s.ErrorResponse, events: list[ev.Event]
    ) -> None:
        rid = message.id
        pending = self._pending_out.pop(rid, None) if rid is not None else None
        if pending is None:
            self._unmatched.append(message)
            self._note("orphan-response", f"response to unknown request id {rid!r} (kept raw)")
            events.append(ev.UnmatchedResponseReceived(message=message))
            return
        method = pending.method
        error = message.error if type(message) is s.ErrorResponse else None
        result: Any = None
        if error is None:
            start = len(self.diagnostics)
            try:
                result = self._decoder.decode_result(
                    method,
                    message.result,  # type: ignore[union-attr]
                    diagnostics=self.diagnostics,
                )
            except RemoteProtocolError as exc:
                result = message.result  # type: ignore[union-attr]
                if not _r8_result(method, result):  # R8 has its own diagnostic
                    self._note(
                        "invalid-result",
                        f"{method} result: {exc.message} at `{exc.path}`",
                        "error",
                        pending.session_id,
                        exc.path,
                    )
            if len(self.diagnostics) > start:
                self._stamp(start, pending.session_id)
        handler = _RESPONSE_HANDLERS.get(method)
        if handler is not None:
            handler(self, rid, pending, result, error, events)
        events.append(
            ev.ResponseReceived(
                request_id=rid,  # type: ignore[arg-type]
                method=method,
                result=result,
                error=error,
                session_id=pending.session_id,
            )
        )

    def _on_initialize(
        self, rid: Any, pending: _Pending, result: Any, error: Any, events: list[ev.Event]
    ) -> None:
        version = _field(result, "protocol_version", "protocolVersion")
        asked = _field(pending.params, "protocol_version", "protocolVersion")
        if type(version) is int and type(asked) is int and not 1 <= version <= asked:
            self._note(
                "protocol-version-mismatch",
                f"initialize asked for protocol {asked}; the agent answered {version},"
                " which is not a version the client offered (C2)",
                "error",
            )
        if error is None and isinstance(result, (s.InitializeResponse, dict)):
            self._capabilities_answered = True
        if isinstance(result, s.InitializeResponse):
            self.protocol_version = result.protocol_version
            self.agent_info = result.info
            caps = result.capabilities
            self.agent_capabilities = caps if isinstance(caps, s.AgentCapabilities) else None
            methods = result.auth_methods
            self.auth_methods = list(methods) if isinstance(methods, list) else []
        elif isinstance(result, dict):
            # An answer that does not fit the schema still tells the negotiated version, and
            # what it offers where that part can be read (C4, C6, C7 go by it).
            if type(result.get("protocolVersion")) is int:
                self.protocol_version = result["protocolVersion"]
            self.agent_capabilities = _salvage(result.get("capabilities"), s.AgentCapabilities)
            readable = (_salvage(m, s.AuthMethod) for m in _items(result.get("authMethods")))
            self.auth_methods = [m for m in readable if m is not None]  # the field skips the rest

    def _setup_lists(self, session: Session, pending: _Pending, result: Any) -> None:
        commands = getattr(result, "available_commands", UNSET)
        config = getattr(result, "config_options", UNSET)
        self._check_lists(session, commands, config)
        # R50: only if no update of that kind was applied since the request was sent (a
        # session unknown at send time had none before it).
        if session.commands_updates == max(pending.commands_mark, 0):
            session.available_commands = list(commands) if isinstance(commands, list) else []
        if session.config_updates == max(pending.config_mark, 0):
            session.config_options = list(config) if isinstance(config, list) else []

    def _on_new_session(
        self, rid: Any, pending: _Pending, result: Any, error: Any, events: list[ev.Event]
    ) -> None:
        if error is not None or not isinstance(result, s.NewSessionResponse):
            return
        existed = result.session_id in self._sessions
        session = self._session(result.session_id)
        if not existed:
            events.append(ev.SessionCreated(session_id=session.session_id, announced=True))
        session.announced = True
        session.created_by_new = True
        if pending.marks is not None:  # the counts when the request was sent (R50)
            marks = pending.marks.get(session.session_id, (0, 0))
            pending.commands_mark, pending.config_mark = marks
        self._setup_lists(session, pending, result)
        events.append(ev.SessionAnnounced(session_id=session.session_id))

    def _on_resume(
        self, rid: Any, pending: _Pending, result: Any, error: Any, events: list[ev.Event]
    ) -> None:
        sid = pending.session_id
        if sid is None:
            return
        session = self._session(sid, events)
        # (a session/close sent meanwhile changed the lifecycle, not the replay under way)
        replay = session.replaying
        if not _replays(pending.params):
            session.end_resume()
        if error is None:
            if session.state_updates == pending.state_mark:
                self._note(
                    "resume-without-snapshot",
                    "session/resume succeeded without a state_update before its response"
                    " (12.3, A17); the state stays as it was",
                    session_id=sid,
                )
            session.announced = True
            if isinstance(result, s.ResumeSessionResponse):
                self._setup_lists(session, pending, result)
            events.append(ev.SessionAnnounced(session_id=sid))
        if replay:
            unretained = session.end_replay(error is None)
            events.append(
                ev.ReplayFinished(session_id=sid, ok=error is None, unretained=unretained)
            )
        reopening = session.take_reopening()
        # 10.5 / 12.3 step 5: -32002 says the session is gone; a closed session whose resume
        # failed stays closed (it was closed when the resume was sent: nothing new).
        gone = error is not None and (
            reopening or getattr(error, "code", None) == RESOURCE_NOT_FOUND
        )
        if gone and session.set_closed() and not reopening:
            events.append(ev.SessionClosed(session_id=sid))

    def _on_prompt(
        self, rid: Any, pending: _Pending, result: Any, error: Any, events: list[ev.Event]
    ) -> None:
        prompt = self._prompts.get(rid)
        sid = pending.session_id
        if prompt is None or sid is None:
            return
        session = self._session(sid, events)
        if error is not None:
            prompt.advance("reject")
            prompt.error = error
            events.append(ev.PromptRejected(session_id=sid, request_id=rid, error=error))
            return
        prompt.advance("accept")
        prompt.turns_before = len(session.completed_turns)
        echo = (
            session.message("user", result.message_id)
            if isinstance(result, s.PromptResponse)
            else None
        )
        session.prompt_accepted(None if echo is None else echo.first_seen)
        if isinstance(result, s.PromptResponse):
            if echo is not None:  # placed before the response: its turn is the one it was in
                prompt.turns_before = session.turns_completed_before(echo.first_seen)
            if result.message_id in session.prompts_by_message:
                self._note(
                    "duplicate-message-id",
                    f"two prompts were answered with messageId {result.message_id!r} (R10)",
                    session_id=sid,
                )
            echoed = session.link_prompt(prompt, result.message_id)
            events.append(
                ev.PromptAccepted(
                    session_id=sid, request_id=rid, message_id=result.message_id, echoed=echoed
                )
            )
        else:
            prompt.advance("unbind")
            self._note(
                "prompt-response-without-message-id",
                "session/prompt result without a string `messageId` (R8)",
                session_id=sid,
            )
            events.append(
                ev.PromptAccepted(session_id=sid, request_id=rid, message_id=None, echoed=False)
            )

    def _on_close(
        self, rid: Any, pending: _Pending, result: Any, error: Any, events: list[ev.Event]
    ) -> None:
        sid = pending.session_id
        if sid is None:
            return
        session = self._session(sid, events)
        if error is None and session.state is not None and session.state.state in _BUSY:
            self._note(
                "close-while-working",
                f"session/close of {sid!r} succeeded while its work was still"
                f" {session.state.state!r}: it must end with idle `cancelled` first (A18)",
                session_id=sid,
            )
        if error is None or error.code == RESOURCE_NOT_FOUND:
            if session.set_closed(by_close=True):  # a second close of a closed one is no news
                events.append(ev.SessionClosed(session_id=sid))
        elif session.lifecycle == "closing":
            session.lifecycle = "open"

    def _on_set_config(
        self, rid: Any, pending: _Pending, result: Any, error: Any, events: list[ev.Event]
    ) -> None:
        sid = pending.session_id
        if sid is not None and isinstance(result, s.SetSessionConfigOptionResponse):
            session = self._session(sid, events)
            self._check_lists(session, UNSET, result.config_options)
            session.config_options = list(result.config_options)

    def _check_lists(self, session: Session, commands: Any, config: Any) -> None:
        """A29 and A19 hold for the lists of a result as for those of an update."""
        sid = session.session_id
        if isinstance(commands, list) and session.protocol_version != 1:
            for problem in command_problems(commands):
                self._note("invalid-commands", problem, "warning", sid)
        if isinstance(config, list):
            for problem in config_problems(config):
                self._note("invalid-config", problem, "warning", sid)

    def _on_entity_cancel(
        self, rid: Any, pending: _Pending, result: Any, error: Any, events: list[ev.Event]
    ) -> None:
        sid = pending.session_id
        if sid is None or sid not in self._sessions:
            return
        entity = _cancelled_entity(self._sessions[sid], pending.params)
        if entity is not None:
            done = entity.finished if isinstance(entity, ToolCallState) else entity.exited
            entity.cancel_pending = error is None and not done

    # ------------------------------------------------------------ client -> agent

    def _outgoing_request(self, message: s.Request, events: list[ev.Event]) -> None:
        rid = message.id
        method = message.method
        params = message.params
        if method == "initialize":
            if self._requests_sent:
                # A log's new connection (LOG-FORMATS.md 1.4): the old one's requests are gone,
                # and so are the resumes it left unanswered.
                self._pending_out.clear()
                self._pending_in.clear()
                self._requests_sent = False
                for session in self._sessions.values():
                    session.end_resume(all_of_them=True)
                    if session.replaying:
                        # a replay the old connection left unanswered ends here, unconfirmed
                        # (R45: what it did not report again is kept, as unretained)
                        unretained = session.end_replay(
                            False, why="got no answer (its connection ended)"
                        )
                        events.append(
                            ev.ReplayFinished(
                                session_id=session.session_id, ok=False, unretained=unretained
                            )
                        )
                    if session.reopening:  # its resume died with the connection: still closed
                        session.set_closed()
            self._initialize_sent = True
            elicitation = _field(_field(params, "capabilities"), "elicitation")
            self._elicitation = elicitation is not UNSET and elicitation is not None
        elif rid in self._pending_out:
            self._note("duplicate-request-id", f"the client reused pending request id {rid!r}")
        if method != "initialize":
            self._requests_sent = True
        sid = _session_id_of(params)
        pending = _Pending(method, params, sid)
        self._pending_out[rid] = pending
        if isinstance(rid, int) and rid >= self._next_id:
            self._next_id = rid + 1
        if sid is None:
            if method == "session/new":
                pending.marks = {
                    known: (one.commands_updates, one.config_updates)
                    for known, one in self._sessions.items()
                }
            return
        session = self._session(sid, events)
        pending.commands_mark = session.commands_updates
        pending.config_mark = session.config_updates
        pending.state_mark = session.state_updates
        if method == "session/prompt":
            prompt_blocks = getattr(params, "prompt", None)
            prompt = PromptState(rid, sid, prompt_blocks)
            self._prompts[rid] = prompt
            session.add_prompt(prompt)
            events.append(ev.PromptSent(session_id=sid, request_id=rid))
        elif method == "session/resume":
            if session.closed:
                session.reopen()
            if _replays(params):
                session.begin_replay()
                events.append(ev.ReplayStarted(session_id=sid))
            else:
                session.begin_resume()
        elif method in ("tool_call/cancel", "terminal/cancel"):
            entity = _cancelled_entity(session, params)
            if entity is not None:
                entity.cancel_pending = True  # 11.6: "cancelling…" until confirmed or refused
        elif method == "session/close":
            session.lifecycle = "closing"
            if self.live:
                self._cancel_permissions(session, events)

    def _outgoing_notification(self, message: s.Notification, events: list[ev.Event]) -> None:
        if message.method == "session/cancel":
            sid = _session_id_of(message.params)
            if sid is None:
                return
            session = self._session(sid, events)
            marked = session.request_cancel()
            events.append(ev.CancelRequested(session_id=sid, tool_call_ids=marked))
            if self.live:
                self._cancel_permissions(session, events)

    def _outgoing_response(
        self, message: s.Response | s.ErrorResponse, events: list[ev.Event]
    ) -> None:
        rid = message.id
        pending = self._pending_in.pop(rid, None) if rid is not None else None
        if pending is None:
            self._note("orphan-response", f"client response to unknown agent request {rid!r}")
            events.append(ev.UnmatchedResponseReceived(message=message))
            return
        method, _params, sid = pending
        if method != "session/request_permission" or sid is None:
            return
        perm = self._sessions[sid].permissions.get(rid) if rid is not None else None
        if perm is None:
            return
        outcome: Any = None
        if type(message) is s.Response:
            result = message.result
            outcome = result.get("outcome") if isinstance(result, dict) else None
            if outcome is None and isinstance(result, s.RequestPermissionResponse):
                outcome = result.outcome
        self._record_answer(perm, outcome, events)

    def _record_answer(self, perm: PermissionState, outcome: Any, events: list[ev.Event]) -> None:
        plain = msgspec.to_builtins(outcome) if isinstance(outcome, msgspec.Struct) else outcome
        perm.outcome = plain
        if perm.status != "withdrawn":
            cancelled = isinstance(plain, dict) and plain.get("outcome") == "cancelled"
            perm.advance("cancel" if cancelled else "answer")
        events.append(
            ev.PermissionAnswered(
                session_id=perm.session_id, request_id=perm.request_id, outcome=plain
            )
        )

    # ------------------------------------------------------------------- sending

    def _write(self, message: s.Message) -> bytes:
        return encode(message) + b"\n"

    def _record(self, message: s.Message) -> list[ev.Event]:
        events = self._sent_events
        if not self.record_sends:
            return events
        self.line = None
        self._dispatch(message, "outgoing", events)
        return events

    def take_sent_events(self) -> list[ev.Event]:
        """The events of what the client sent since the last call, then forgets them.

        ``send_*`` and ``answer_*`` return bytes; their events (``PromptSent``,
        ``CancelRequested``, ``ReplayStarted``, ``PermissionAnswered`` ...) wait here.
        """
        events, self._sent_events = self._sent_events, []
        return events

    def _new_id(self) -> int:
        rid = self._next_id
        self._next_id += 1
        while rid in self._pending_out:
            rid = self._next_id
            self._next_id += 1
        return rid

    def send_request(self, method: str, params: Any = UNSET) -> SentRequest:
        """Build, record and encode a request (any method; extension methods too).

        Raises:
            LocalProtocolError: ``initialize`` after another request was sent (it is
                repeatable only until then, section 1.4); live, any other request before
                ``initialize`` was sent (C1); live, once the ``initialize`` answer is in:
                ``auth/login`` / ``auth/logout`` when it listed no ``authMethods`` (C4),
                ``session/delete`` unless ``session.delete`` is advertised (C7), MCP
                servers of a transport ``session.mcp`` does not advertise (C6).
        """
        if method == "initialize":
            if self._requests_sent:
                raise LocalProtocolError(
                    "initialize is repeatable only until another request is sent (1.4)"
                )
        elif self.live and not self._initialize_sent:
            raise LocalProtocolError(f"{method}: send initialize before any other request (C1)")
        elif method in _GATED and self.live and self._capabilities_answered:
            self._check_offered(method, params)
        rid = self._new_id()
        message = s.Request(id=rid, method=method, params=params)
        data = self._write(message)  # what cannot be encoded is not recorded as sent
        self._record(message)
        return SentRequest(rid, data)

    def _check_offered(self, method: str, params: Any) -> None:
        """C4, C6, C7: what the agent's initialize answer must offer (C3: omitted is no)."""
        session = getattr(self.agent_capabilities, "session", None)
        if method in ("session/new", "session/resume"):
            servers = _field(params, "mcp_servers", "mcpServers")
            if isinstance(servers, list):
                _check_mcp_transports(servers, getattr(session, "mcp", None))
        elif method == "session/delete":
            if getattr(session, "delete", None) in (None, UNSET):
                raise LocalProtocolError(
                    "session/delete: the agent does not advertise session.delete (C7)"
                )
        elif not self.auth_methods:
            raise LocalProtocolError(f"{method}: the agent offered no authMethods (C4)")

    def send_notification(self, method: str, params: Any = UNSET) -> bytes:
        """Build, record and encode a notification."""
        message = s.Notification(method=method, params=params)
        data = self._write(message)
        self._record(message)
        return data

    def send_initialize(
        self,
        *,
        name: str = "acp-client",
        version: str = "0",
        protocol_version: int = 2,
        capabilities: s.ClientCapabilities | None = None,
    ) -> SentRequest:
        """``initialize``: ask for ``protocol_version`` and advertise the client.

        Raises:
            LocalProtocolError: another request was sent already (initialize is repeatable
                only until then, section 1.4).
        """
        params = s.InitializeRequest(
            protocol_version=protocol_version,
            info=s.Implementation(name=name, version=version),
            capabilities=capabilities if capabilities is not None else s.ClientCapabilities(),
        )
        return self.send_request("initialize", params)

    def send_new_session(
        self,
        cwd: str,
        *,
        mcp_servers: Iterable[s.McpServer] = (),
        additional_directories: Iterable[str] | None = None,
    ) -> SentRequest:
        """``session/new`` in the absolute directory ``cwd``.

        Raises:
            LocalProtocolError: a relative path, ``additional_directories`` or an MCP
                server transport the agent did not advertise (C6).
        """
        self._check_roots(cwd, additional_directories)
        params = s.NewSessionRequest(cwd=cwd, mcp_servers=list(mcp_servers))
        if additional_directories is not None:
            params.additional_directories = list(additional_directories)
        return self.send_request("session/new", params)

    def send_resume(
        self,
        session_id: str,
        cwd: str,
        *,
        replay: bool = True,
        mcp_servers: Iterable[s.McpServer] = (),
        additional_directories: Iterable[str] | None = None,
    ) -> SentRequest:
        """``session/resume``; with ``replay`` the agent replays its retained history.

        Raises:
            LocalProtocolError: a relative path, ``additional_directories`` or an MCP
                server transport the agent did not advertise (C6).
        """
        self._check_roots(cwd, additional_directories)
        params = s.ResumeSessionRequest(
            session_id=session_id, cwd=cwd, mcp_servers=list(mcp_servers)
        )
        if additional_directories is not None:
            params.additional_directories = list(additional_directories)
        if replay:
            params.replay_from = s.ReplayFromStart()
        return self.send_request("session/resume", params)

    def send_prompt(self, session_id: str, prompt: str | Sequence[s.ContentBlock]) -> SentRequest:
        """``session/prompt`` with text or content blocks; the returned id tracks it.

        Raises:
            TypeError: ``prompt`` is bytes.
            LocalProtocolError: the prompt is empty (no block, or ``""``), or holds a
                block the agent's prompt capabilities do not allow (C5); live, before a
                successful ``initialize`` or for a session not set up here (by a
                ``session/new`` answer or a ``session/resume``) or closed (C1).
        """
        if isinstance(prompt, bytes | bytearray | memoryview):
            raise TypeError("a prompt is text (str) or a sequence of content blocks, not bytes")
        if isinstance(prompt, str) and not prompt:
            raise LocalProtocolError("a prompt needs some text: the empty string is no prompt")
        blocks: list[s.ContentBlock] = (
            [s.TextContent(text=prompt)] if isinstance(prompt, str) else list(prompt)
        )
        if not blocks:
            raise LocalProtocolError("a prompt needs at least one content block")
        if self.live:
            self._check_set_up(session_id)
        self._check_prompt_blocks(blocks)
        return self.send_request(
            "session/prompt", s.PromptRequest(session_id=session_id, prompt=blocks)
        )

    def _check_set_up(self, session_id: str) -> None:
        """C1 / the Prompt Lifecycle page: initialization and session setup come first."""
        if self.protocol_version is None:
            raise LocalProtocolError("session/prompt before initialize succeeded (C1)")
        session = self._sessions.get(session_id)
        if session is not None and session.closed:
            raise LocalProtocolError(
                f"session {session_id!r} is closed: resume it (session/resume) before prompting"
            )
        if session is None or not session.announced:
            raise LocalProtocolError(
                f"session {session_id!r} is not set up: create it with session/new or resume"
                " it before prompting (C1)"
            )

    def _prompt_capabilities(self) -> s.PromptCapabilities | None:
        session = getattr(self.agent_capabilities, "session", None)
        prompt = getattr(session, "prompt", None)
        return prompt if isinstance(prompt, s.PromptCapabilities) else None

    def _check_prompt_blocks(self, blocks: list[s.ContentBlock]) -> None:
        """C5: only content types the agent's prompt capabilities allow (once known)."""
        if not self._capabilities_answered:
            return  # not initialized here: nothing to check against
        caps = self._prompt_capabilities()
        for block in blocks:
            if isinstance(block, dict):  # a block given as plain data: checked by its type
                kind = block.get("type")
                if not isinstance(kind, str) or kind not in _PROMPT_BLOCK_TYPES:
                    raise LocalProtocolError(
                        f"prompt block type {kind!r} is none the agent can accept (C5)"
                    )
                field = _PROMPT_BLOCK_TYPES[kind]
                name = f"{kind!r} blocks"
            else:
                field = _PROMPT_CAPABILITY.get(type(block))
                name = type(block).__name__
            if field is not None and getattr(caps, field, None) in (None, UNSET):
                raise LocalProtocolError(
                    f"the agent does not accept {name} in prompts"
                    f" (session.prompt.{field} not advertised, C5)"
                )

    def _check_roots(self, cwd: str, additional: Iterable[str] | None) -> None:
        """C6: absolute paths only; additional directories only if advertised."""
        extra = [] if additional is None else list(additional)
        for path in (cwd, *extra):
            if not isinstance(path, str):
                raise TypeError(f"a directory is a str path, not {type(path).__name__}")
            if relative_path(path):
                raise LocalProtocolError(f"{path!r} is not an absolute path (C6)")
        if extra and self._capabilities_answered:
            session = getattr(self.agent_capabilities, "session", None)
            if getattr(session, "additional_directories", None) in (None, UNSET):
                raise LocalProtocolError(
                    "the agent does not advertise session.additionalDirectories (C6)"
                )

    def send_cancel(self, session_id: str) -> bytes:
        """``session/cancel``; also answers the session's pending permission requests.

        Returns every byte to write: the notification and the ``cancelled`` answers.
        """
        data = self.send_notification(
            "session/cancel", s.CancelSessionNotification(session_id=session_id)
        )
        return data + self.data_to_send()

    def send_close(self, session_id: str) -> SentRequest:
        """``session/close`` (pending permission requests are answered ``cancelled``)."""
        sent = self.send_request("session/close", s.CloseSessionRequest(session_id=session_id))
        return SentRequest(sent.request_id, sent.data + self.data_to_send())

    def send_set_config_option(
        self, session_id: str, config_id: str, value: str | bool
    ) -> SentRequest:
        """``session/set_config_option`` (a select value id, or a boolean).

        Raises:
            LocalProtocolError: the session lists config options and ``value`` is not one
                of this option's values (select) or not a boolean (boolean), or the option
                is not listed (C21).
            TypeError: ``value`` is neither a ``str`` nor a ``bool``.
        """
        if not isinstance(value, str | bool):
            raise TypeError(f"a config value is a str (a value id) or a bool, not {value!r}")
        session = self._sessions.get(session_id)
        _check_config_value(session.config_options if session else None, config_id, value)
        params = s.SetSessionConfigOptionRequest(
            session_id=session_id,
            config_id=config_id,
            type="boolean" if isinstance(value, bool) else "id",
            value=value,
        )
        return self.send_request("session/set_config_option", params)

    def send_list_sessions(
        self, *, cwd: str | None = None, cursor: str | None = None
    ) -> SentRequest:
        """``session/list``."""
        params = s.ListSessionsRequest()
        if cwd is not None:
            params.cwd = cwd
        if cursor is not None:
            params.cursor = cursor
        return self.send_request("session/list", params)

    def send_cancel_tool_call(self, session_id: str, tool_call_id: str) -> SentRequest:
        """``tool_call/cancel``, only while the tool call advertises it (C29)."""
        call = self.session(session_id).tool_calls.get(tool_call_id)
        if call is None or not call.cancellable:
            raise LocalProtocolError(f"tool call {tool_call_id!r} does not advertise cancel")
        return self.send_request(
            "tool_call/cancel",
            s.CancelToolCallRequest(session_id=session_id, tool_call_id=tool_call_id),
        )

    def send_cancel_terminal(self, session_id: str, terminal_id: str) -> SentRequest:
        """``terminal/cancel``, only while the terminal advertises it (C29)."""
        term = self.session(session_id).terminals.get(terminal_id)
        if term is None or not term.cancellable:
            raise LocalProtocolError(f"terminal {terminal_id!r} does not advertise cancel")
        return self.send_request(
            "terminal/cancel",
            s.CancelTerminalRequest(session_id=session_id, terminal_id=terminal_id),
        )

    def send_cancel_request(self, request_id: int | str) -> bytes:
        """``$/cancel_request`` for one of the client's pending requests."""
        if request_id not in self._pending_out:
            raise LocalProtocolError(f"no pending request {request_id!r}")
        return self.send_notification(
            "$/cancel_request", s.CancelRequestNotification(request_id=request_id)
        )

    def answer_permission(self, request_id: int | str, option_id: str | None) -> bytes:
        """Answer a permission request: an offered ``option_id``, or ``None`` for cancelled.

        Like every ``answer_*`` method, it returns the bytes to write: for a request that came
        in a batch, ``b""`` until the batch's last request is answered, then the whole array.

        Raises:
            LocalProtocolError: no such pending request, or the option was not offered.
        """
        pending = self._pending_in.get(request_id)
        if pending is None or pending[0] != "session/request_permission" or pending[2] is None:
            raise LocalProtocolError(f"no pending permission request {request_id!r}")
        perm = self._sessions[pending[2]].permissions[request_id]
        if option_id is not None:
            offered = [o.option_id for o in getattr(perm.request, "options", [])]
            if option_id not in offered:
                raise LocalProtocolError(f"option {option_id!r} was not offered")
        self._answer_permission(perm, option_id, self._sent_events)
        return self.data_to_send()

    def _answer_permission(
        self, perm: PermissionState, option_id: str | None, events: list[ev.Event]
    ) -> None:
        outcome: s.RequestPermissionOutcome = (
            s.CancelledPermissionOutcome()
            if option_id is None
            else s.SelectedPermissionOutcome(option_id=option_id)
        )
        self._pending_in.pop(perm.request_id, None)
        self._respond(perm.request_id, s.RequestPermissionResponse(outcome=outcome))
        self._record_answer(perm, outcome, events)

    def _cancel_permissions(self, session: Session, events: list[ev.Event]) -> None:
        for perm in list(session.permissions.values()):
            if perm.status == "pending" and perm.request_id in self._pending_in:
                self._answer_permission(perm, None, events)
        for rid, (method, _params, sid) in list(self._pending_in.items()):
            if method == "elicitation/create" and sid == session.session_id:
                del self._pending_in[rid]
                self._respond(rid, {"action": "cancel"})  # R19

    def answer_method_not_found(self, request_id: int | str) -> bytes:
        """Answer an agent request the client does not handle with -32601."""
        if request_id not in self._pending_in:
            raise LocalProtocolError(f"no pending agent request {request_id!r}")
        method = self._pending_in.pop(request_id)[0]
        self._respond_error(request_id, METHOD_NOT_FOUND, f"method not found: {method}")
        return self.data_to_send()

    def answer_request(self, request_id: int | str, result: Any) -> bytes:
        """Answer any pending agent request with a result."""
        pending = self._pending_in.get(request_id)
        if pending is None:
            raise LocalProtocolError(f"no pending agent request {request_id!r}")
        if pending[0] == "session/request_permission":
            raise LocalProtocolError("use answer_permission for permission requests")
        self._pending_in.pop(request_id)
        self._respond(request_id, result)
        return self.data_to_send()

    def answer_error(self, request_id: int | str, code: int, message: str) -> bytes:
        """Answer a pending agent request with an error."""
        pending = self._pending_in.pop(request_id, None)
        if pending is None:
            raise LocalProtocolError(f"no pending agent request {request_id!r}")
        if pending[0] == "session/request_permission" and pending[2] is not None:
            perm = self._sessions[pending[2]].permissions.get(request_id)
            if perm is not None and perm.status == "pending":
                perm.advance("answer")
        self._respond_error(request_id, code, message)
        return self.data_to_send()

    def _respond(self, request_id: int | str, result: Any) -> None:
        self._reply(request_id, s.Response(id=request_id, result=result))

    def _respond_error(self, request_id: int | str | None, code: int, message: str) -> None:
        self._reply(
            request_id, s.ErrorResponse(id=request_id, error=s.Error(code=code, message=message))
        )

    def _reply(self, request_id: int | str | None, reply: s.Message) -> None:
        """Owe ``reply``; one to a request of a received batch waits for the batch (1.5)."""
        data = self._batches.route(request_id, encode(reply))
        if data:
            self._outbox.append(data)

    def data_to_send(self) -> bytes:
        """Bytes the connection owes the agent (automatic answers), then forgets them."""
        if not self._outbox:
            return b""
        data = b"".join(self._outbox)
        self._outbox.clear()
        return data

    def connection_lost(self) -> None:
        """The agent went away: prompts still pending stay pending (never retried)."""
        for prompt in self._prompts.values():
            if prompt.status == "pending":
                self._note(
                    "prompt-uncertain",
                    f"connection lost before the response to prompt {prompt.request_id!r}",
                    session_id=prompt.session_id,
                )

    def __repr__(self) -> str:
        return f"Connection(sessions={len(self._sessions)}, live={self.live})"


_RESPONSE_HANDLERS = {
    "initialize": Connection._on_initialize,
    "session/new": Connection._on_new_session,
    "session/resume": Connection._on_resume,
    "session/prompt": Connection._on_prompt,
    "session/close": Connection._on_close,
    "session/set_config_option": Connection._on_set_config,
    "tool_call/cancel": Connection._on_entity_cancel,
    "terminal/cancel": Connection._on_entity_cancel,
}
