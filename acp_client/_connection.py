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
from typing import Any, Generic, Literal, TypeVar

from msgspec import UNSET

from . import _agent_requests as agent
from . import _events as ev
from . import _schema as s
from ._codec import encode
from ._context import DEFAULT_MAX_SESSIONS, Context, Live, Passive
from ._diagnostics import DEFAULT_MAX_DIAGNOSTICS, Diagnostic, DiagnosticList
from ._framing import DEFAULT_MAX_LINE, LineTooLong
from ._inbound import DEFAULT_MAX_BATCH, DEFAULT_MAX_PENDING, Inbound
from ._limits import DEFAULT_MAX_ENTITIES
from ._methods import connection_lost, dispatch
from ._preflight import LivePreflight, Preflight
from ._restore import restore_into
from ._rpc import SentRequest
from ._session import Session
from ._snapshot import FORMAT, session_snapshot
from ._submissions import Submissions
from ._v1.switch import ProtocolSwitch
from ._version import __version__

__all__ = ["Connection", "Direction", "SentRequest"]

Direction = Literal["incoming", "outgoing"]
T = TypeVar("T")


class _Kept(Generic[T]):
    """An attribute of the connection kept by one of its parts (read and written there)."""

    def __init__(self, part: str, name: str, doc: str) -> None:
        self._part = part
        self._name = name
        self.__doc__ = doc

    def __get__(self, conn: Any, owner: type[Any]) -> T:
        if conn is None:
            return self  # type: ignore[return-value]  # the class's own: its doc
        return getattr(getattr(conn, self._part), self._name)  # type: ignore[no-any-return]

    def __set__(self, conn: Any, value: T) -> None:
        setattr(getattr(conn, self._part), self._name, value)


class _Retention:
    """The retention limits every new session of the connection gets (issue 26)."""

    terminal_limit: _Kept[int | None] = _Kept(
        "_registry", "terminal_limit", "Per-terminal byte retention limit."
    )
    block_limit: _Kept[int | None] = _Kept(
        "_registry", "block_limit", "Per-entity retention limit of content items (blocks)."
    )


class Connection(Submissions, _Retention):
    r"""Client-side state of one ACP connection.

    Args:
        live: ``True`` when attached to a real agent (the connection answers what the
            client owes automatically, see :meth:`data_to_send`); ``False`` to replay a
            recorded log of both directions.
        terminal_limit / block_limit: the bytes each terminal keeps / the content items each
            message, tool call, compaction and session message keeps (``None``: all).
        max_line: the longest incoming line accepted, in bytes.
        extension_methods: agent request methods the embedder answers itself (with
            :meth:`answer_request` or :meth:`answer_error`). In live mode every other
            request the connection does not handle is answered -32601 at once (1.3, 2.4);
            ``session/request_permission`` always waits for the embedder, and so does
            ``elicitation/create`` when ``initialize`` advertised elicitation (else it is
            answered -32601 too).
        unstable: unstable (draft) features every session applies: ``"prompt_suggestions"``,
            ``"cursors"``, ``"unknown_state"`` (ACP v2 Preview P0); without one its updates
            are unknown variants, kept raw. The Preview's stable additions need no opt-in.
        max_batch / max_sessions / max_pending / max_entities: limits (10,000 each; 100,000
            entities per session); what reaching one does: the README's "Hostile input".
        max_diagnostics: the diagnostics of one code kept in :attr:`diagnostics` (1,000);
            the later ones are counted in one ``diagnostics-dropped`` diagnostic.

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

    protocol_version: _Kept[int | None] = _Kept(
        "_offer", "protocol_version", "The protocol version ``initialize`` negotiated, once known."
    )
    agent_info: _Kept[s.Implementation | None] = _Kept(
        "_offer", "agent_info", "The agent's ``info`` from its ``initialize`` answer."
    )
    agent_capabilities: _Kept[s.AgentCapabilities | None] = _Kept(
        "_offer", "agent_capabilities", "The capabilities the agent's ``initialize`` offered."
    )
    auth_methods: _Kept[list[Any]] = _Kept(
        "_offer", "auth_methods", "The ``authMethods`` the agent's ``initialize`` offered."
    )
    line: _Kept[int | None] = _Kept(
        "_notes", "line", "The log line being applied (for diagnostics)."
    )
    extension_methods: _Kept[frozenset[str]] = _Kept(
        "_ctx",
        "extension_methods",
        "Agent request methods the embedder answers itself (see the class docs).",
    )

    def __init__(
        self,
        *,
        live: bool = True,
        terminal_limit: int | None = None,
        block_limit: int | None = None,
        max_line: int = DEFAULT_MAX_LINE,
        extension_methods: Collection[str] = (),
        unstable: Collection[str] = (),
        max_batch: int = DEFAULT_MAX_BATCH,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        max_pending: int = DEFAULT_MAX_PENDING,
        max_entities: int = DEFAULT_MAX_ENTITIES,
        max_diagnostics: int = DEFAULT_MAX_DIAGNOSTICS,
    ) -> None:
        self.live = live
        # The parts, each with one job; live and passive differ in the mode and preflight.
        ctx = Context(
            Live if live else Passive,
            terminal_limit=terminal_limit,
            block_limit=block_limit,
            extension_methods=extension_methods,
            unstable=unstable,
            max_sessions=max_sessions,
            max_entities=max_entities,
            diagnostics=DiagnosticList(max_diagnostics),
        )
        self._ctx: Context = ctx
        self._offer = ctx.offer
        self._notes = ctx.notes
        self._registry = ctx.sessions
        self._inbound = Inbound(ctx, max_line, max_batch, max_pending)
        self._rpc = ctx.rpc
        self._sessions = ctx.sessions.by_id
        self._preflight: Preflight = (LivePreflight if live else Preflight)(
            ctx.offer, self._sessions, ctx.rpc.pending_out
        )
        """The client's pre-send checks (C-rules): every sending path goes through it."""
        self.diagnostics: list[Diagnostic] = ctx.notes.diagnostics
        """What the input broke, in order: a :class:`DiagnosticList` (``max_diagnostics``)."""
        self._sent_events: list[ev.Event] = []
        self._switch = ProtocolSwitch(self, live=live)
        """v1 or v2: decided from ``initialize`` and the traffic; routes v1 (V1-TO-V2.md)."""
        self.record_sends = True
        """Whether ``send_*`` record what they build (a transport that translates the
        messages, to v1 say, turns this off and records the translation instead)."""

    @classmethod
    def restore(
        cls,
        snapshot: Mapping[str, Any],
        *,
        initialize_result: s.InitializeResponse | dict[str, Any] | None = None,
        client_capabilities: s.ClientCapabilities | None = None,
        **options: Any,
    ) -> Connection:
        """A connection that goes on from a snapshot (SNAPSHOT.md; R90-R92).

        ``snapshot`` is what :meth:`snapshot` returned: every session and the diagnostics
        come back, the handshake done in its protocol version. ``initialize_result`` (kept
        by the host: a snapshot has no ``initialize``) restores what the agent offered,
        ``client_capabilities`` what the client advertised; ``options`` go to ``__init__``.

        The old connection's requests are gone: a prompt restored ``pending`` has an unknown
        outcome (R90), a permission request restored ``pending`` is stale and cannot be
        answered (R91), and new request ids follow every id the snapshot names. Updates
        apply on top and prompts can be sent at once; the first ``initialize`` sent starts
        a new connection (an agent started again, R92), after which ``session/resume``
        (with replay, a v1 agent's ``session/load``) picks the session up.

        Raises:
            ValueError: no ``acp-client/snapshot@1`` document, naming where.
        """
        conn = cls(**options)
        version = restore_into(conn._ctx, snapshot, initialize_result, client_capabilities)
        conn._switch.restored(version)
        return conn

    # ----------------------------------------------------------------- accessors

    @property
    def sessions(self) -> Mapping[str, Session]:
        """Every session seen, by id, in first-seen order."""
        return self._sessions

    def session(self, session_id: str) -> Session:
        """The session with that id (``KeyError`` if never seen)."""
        return self._sessions[session_id]

    @property
    def unmatched_responses(self) -> Sequence[Any]:
        """Responses whose request was never seen (raw)."""
        return tuple(self._rpc.unmatched)

    def pending_agent_requests(self) -> dict[int | str, str]:
        """The agent's requests still waiting for the client's answer: id -> method."""
        return {rid: method for rid, (method, _p, _sid) in self._rpc.pending_in.items()}

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

    # -------------------------------------------------------------------- receive

    def receive_data(self, data: bytes | bytearray | memoryview) -> list[ev.Event]:
        """Feed bytes read from the agent's stdout (split anywhere); return the events.

        ``data`` is any bytes-like object; anything else (text, say) raises ``TypeError``.
        """
        data = data if type(data) is bytes else _bytes_of(data)
        if self._switch.routing:  # a v1 agent, or one not yet known to speak v2
            return self._switch.receive_lines(self._inbound.lines.feed(data))
        return self._inbound.data(data)

    def receive_eof(self) -> list[ev.Event]:
        """The agent closed its stdout: handle a last line without a newline."""
        if self._switch.routing:
            return self._switch.receive_lines(self._inbound.lines.flush(), eof=True)
        return self._inbound.eof()

    def receive_update(
        self, params: s.UpdateSessionNotification, *, line: int | None = None
    ) -> list[ev.Event]:
        """Apply the params of one decoded ``session/update`` (the agent's notification)."""
        return self._inbound.update(params, line)

    def receive_line(self, line: bytes) -> list[ev.Event]:
        """Feed one complete line read from the agent (without its newline)."""
        return self._inbound.line(line)

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
        return self._inbound.message(message, direction == "incoming", line)

    def _line_too_long(self, marker: LineTooLong, events: list[ev.Event]) -> None:
        self._inbound.line_too_long(marker, events)

    # ------------------------------------------------------------------- sending

    def next_request_id(self) -> int:
        """Allocate a request id (never reused) without sending anything."""
        return self._rpc.new_id()

    def take_sent_events(self) -> list[ev.Event]:
        """The events of what the client sent since the last call, then forgets them.

        ``send_*`` and ``answer_*`` return bytes; their events (``PromptSent``,
        ``CancelRequested``, ``ReplayStarted``, ``PermissionAnswered`` ...) wait here.
        """
        events, self._sent_events = self._sent_events, []
        return events

    def _send(self, message: s.Message) -> bytes:
        """Encode, then record what was sent: what cannot be encoded is not recorded."""
        data = encode(message) + b"\n"
        if self.record_sends:
            self._ctx.notes.line = None
            dispatch(self._ctx, message, False, self._sent_events)
        return self._switch.sent(message, data) if self._switch.watching else data

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
        self._preflight.request(method, params)
        if method == "initialize" and self._ctx.offer.restored:
            self._switch.new_connection()  # R92
        rid = self._rpc.new_id()
        return SentRequest(rid, self._send(s.Request(id=rid, method=method, params=params)))

    def send_notification(self, method: str, params: Any = UNSET) -> bytes:
        """Build, record and encode a notification."""
        return self._send(s.Notification(method=method, params=params))

    def send_initialize(
        self,
        *,
        name: str = "acp-client",
        version: str = __version__,
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
        self._preflight.roots(cwd, additional_directories)
        params = s.NewSessionRequest(cwd=cwd, mcp_servers=list(mcp_servers))
        return self._send_in("session/new", params, additional_directories)

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
            LocalProtocolError: as :meth:`send_new_session` (C6).
        """
        self._preflight.roots(cwd, additional_directories)
        params = s.ResumeSessionRequest(
            session_id=session_id, cwd=cwd, mcp_servers=list(mcp_servers)
        )
        if replay:
            params.replay_from = s.ReplayFromStart()
        return self._send_in("session/resume", params, additional_directories)

    def _send_in(
        self,
        method: str,
        params: s.NewSessionRequest | s.ResumeSessionRequest,
        additional_directories: Iterable[str] | None,
    ) -> SentRequest:
        """Send a request setting a session up, with its additional directories if any."""
        if additional_directories is not None:
            params.additional_directories = list(additional_directories)
        return self.send_request(method, params)

    def send_cancel(self, session_id: str) -> bytes:
        """``session/cancel``; also answers the session's pending permission requests.

        Returns every byte to write: the notification and the ``cancelled`` answers.

        Raises:
            LocalProtocolError: live, a child session whose association does not allow
                cancel (ACP-V2-PREVIEW P10).
        """
        self._preflight.session_cancel(session_id)
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
        self._preflight.config_value(session_id, config_id, value)
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
        self._preflight.cancel(session_id, "tool call", tool_call_id)
        return self.send_request(
            "tool_call/cancel",
            s.CancelToolCallRequest(session_id=session_id, tool_call_id=tool_call_id),
        )

    def send_cancel_terminal(self, session_id: str, terminal_id: str) -> SentRequest:
        """``terminal/cancel``, only while the terminal advertises it (C29)."""
        self._preflight.cancel(session_id, "terminal", terminal_id)
        return self.send_request(
            "terminal/cancel",
            s.CancelTerminalRequest(session_id=session_id, terminal_id=terminal_id),
        )

    def send_cancel_request(self, request_id: int | str) -> bytes:
        """``$/cancel_request`` for one of the client's pending requests."""
        self._preflight.cancel_request(request_id)
        return self.send_notification(
            "$/cancel_request", s.CancelRequestNotification(request_id=request_id)
        )

    # ------------------------------------------------------------------ answering

    def answer_permission(self, request_id: int | str, option_id: str | None) -> bytes:
        """Answer a permission request: an offered ``option_id``, or ``None`` for cancelled.

        Like every ``answer_*`` method, it returns the bytes to write: for a request that came
        in a batch, ``b""`` until the batch's last request is answered, then the whole array.

        Raises:
            LocalProtocolError: no such pending request, or the option was not offered.
        """
        agent.answer_chosen(self._ctx, request_id, option_id, self._sent_events)
        return self.data_to_send()

    def answer_method_not_found(self, request_id: int | str) -> bytes:
        """Answer an agent request the client does not handle with -32601."""
        agent.answer_unknown(self._ctx, request_id)
        return self.data_to_send()

    def answer_request(self, request_id: int | str, result: Any) -> bytes:
        """Answer any pending agent request with a result."""
        agent.answer_result(self._ctx, request_id, result)
        return self.data_to_send()

    def answer_unhandled(self, request_id: int | str, failure: str | None = None) -> bytes:
        """No handler: elicitation declined (R87), else -32601; a ``failure``: -32603 (R88)."""
        agent.answer_unhandled(self._ctx, request_id, failure)
        return self.data_to_send()

    def answer_error(self, request_id: int | str, code: int, message: str) -> bytes:
        """Answer a pending agent request with an error."""
        agent.answer_error(self._ctx, request_id, code, message)
        return self.data_to_send()

    def data_to_send(self) -> bytes:
        """Bytes the connection owes the agent (automatic answers), then forgets them."""
        data = self._rpc.take()
        return self._switch.owed(data) if self._switch.routing else data

    def connection_lost(self) -> None:
        """The agent went away: see :func:`._methods.connection_lost` (10.5, P21)."""
        connection_lost(self._ctx, self._sent_events)

    def __repr__(self) -> str:
        return f"Connection(sessions={len(self._sessions)}, live={self.live})"


def _bytes_of(data: object) -> bytes:
    """A read as bytes: any bytes-like object (the buffer protocol), never text."""
    if isinstance(data, str):
        raise TypeError("receive_data takes the bytes read from the agent, not str")
    try:
        return memoryview(data).tobytes()  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"receive_data takes bytes-like data, not {type(data).__name__}") from None
