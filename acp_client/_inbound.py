"""Reading: inbound framing and decoding, and what cannot be read (ACP-V2-CLIENT-STATE.md 1).

Owns: the agent's bytes split into lines (:class:`~._framing.LineBuffer`), the batched fast
path of ``session/update`` reads, decoding lines and messages already parsed (a log's,
either direction), and invalid messages: each is reported, answered where live (1.2, 1.5,
1.8) and, when it still names a session or an id, followed up (12.5; a malformed response
ends its request failed). Decoded messages go to :func:`._methods.dispatch`.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from typing import Any

import msgspec
from msgspec import UNSET

from . import _events as ev
from . import _schema as s
from ._agent_requests import apply_update, displace
from ._arguments import checked_limit
from ._codec import (
    Decoder,
    _FastUpdate,
    batch_too_large,
    decode_update_line,
    message_from_builtins,
)
from ._context import Context, session_id_of
from ._errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    LimitExceeded,
    RemoteProtocolError,
    detached,
)
from ._framing import LineBuffer, LineTooLong
from ._limits import entity_count
from ._methods import dispatch, request_sent, response_received
from ._session import Session, runs_of

__all__ = ["DEFAULT_MAX_BATCH", "DEFAULT_MAX_PENDING", "Inbound"]

DEFAULT_MAX_BATCH = 10_000
"""Entries a received batch may hold (``Connection(max_batch=...)``); a longer one is invalid."""
DEFAULT_MAX_PENDING = 10_000
"""The agent's requests waiting for an answer at most (``Connection(max_pending=...)``)."""

Events = list[ev.Event]
_FAST_ERRORS = (msgspec.ValidationError, msgspec.DecodeError, TypeError, RecursionError)
_UPDATE_PARAMS = s.UpdateSessionNotification


def _parsed_batch(first: s.Message | RemoteProtocolError) -> bool:
    """Whether a line starting with ``[`` held a non-empty array (not a parse error, 1.5).

    Both of those give one error about the whole line (at ``$``); an entry's error is at
    ``$[i]``, even when the entry is itself an empty array.
    """
    return not (isinstance(first, RemoteProtocolError) and first.path == "$")


class Inbound:
    """Takes what was read (bytes, lines, parsed messages) and routes each message.

    Limits (issue 26): a batch of more than ``max_batch`` entries is one invalid message
    (-32600, none of it applied); a message naming a session past the registry's
    ``max_sessions``, or a request of the agent's past ``max_pending`` waiting, is not
    applied but kept raw in a ``LimitReached`` event with a ``limit-reached`` diagnostic (a
    request answered -32603 live). Nothing raises past this part.
    """

    __slots__ = (
        "_bad_line",
        "_by_id",
        "_ctx",
        "_decoder",
        "_notes",
        "agent_lines",
        "lines",
        "max_batch",
        "max_pending",
    )

    def __init__(
        self,
        ctx: Context,
        max_line: int,
        max_batch: int = DEFAULT_MAX_BATCH,
        max_pending: int = DEFAULT_MAX_PENDING,
    ) -> None:
        self._ctx = ctx
        self.max_batch = checked_limit("max_batch", max_batch)
        self.max_pending = checked_limit("max_pending", max_pending)
        self._notes = ctx.notes  # the hot path's two collaborators, at hand
        self._by_id = ctx.sessions.by_id
        self.lines = LineBuffer(checked_limit("max_line", max_line, 1))
        self._decoder = Decoder()
        #: Lines of the agent's output taken so far (a malformed one's diagnostic names it).
        self.agent_lines = 0
        self._bad_line: tuple[int, bytes] | None = None  # the line being reported malformed

    # ------------------------------------------------------------------- bytes

    def data(self, data: bytes) -> Events:
        """Bytes read from the agent (split anywhere): their events."""
        events: Events = []
        if self._notes.line is not None:
            self._forget_lines()
        # Each line is decoded on its own (1.1: a line is one message), so that what a line
        # means never depends on its neighbours or on where the reads were cut; consecutive
        # session/update lines are still applied together (_receive_lines).
        self._receive_lines(self.lines.feed(data), events)
        return events

    def _receive_lines(self, lines: list[bytes | LineTooLong], events: Events) -> None:
        """Take lines one by one; consecutive ``session/update`` lines are applied together.

        Each line is decoded on its own. The common read, nothing but updates, is decoded by
        one ``map`` (no Python loop per line); at the first line that is no update, the lines
        before it keep their decoded values (``list.extend`` keeps what the iterator gave
        before it raised) and the rest go one at a time.
        """
        notes: list[_FastUpdate] = []
        try:
            notes.extend(map(decode_update_line, lines))  # type: ignore[arg-type]
            start = len(lines)
        except _FAST_ERRORS:
            start = len(notes)  # lines[start] is the first that is no update
        self.agent_lines += start
        for line in islice(lines, start, None):
            self.agent_lines += 1
            try:
                notes.append(decode_update_line(line))  # type: ignore[arg-type]
                continue
            except _FAST_ERRORS:
                pass
            if notes:
                self._apply_notes(notes, events)
                notes = []
            if type(line) is not bytes:
                self.line_too_long(line, events)  # type: ignore[arg-type]
            elif line.strip():
                self._receive_line(line, events)
        if notes:
            self._apply_notes(notes, events)

    def _apply_notes(self, notes: list[_FastUpdate], events: Events) -> None:
        """Apply decoded ``session/update`` notifications in order, a session's run at a time."""
        session_ids = [n.params.session_id for n in notes]
        if session_ids.count(session_ids[0]) == len(notes):
            runs: Iterable[tuple[str, list[_FastUpdate]]] = ((session_ids[0], notes),)
        else:
            runs = runs_of(session_ids, notes)
        sessions = self._by_id
        limit = self._ctx.sessions.max_entities
        for session_id, run in runs:
            session = sessions.get(session_id)
            if session is None:
                self._apply_one(run[0].params, events)  # creates the session (or cannot)
                session = sessions.get(session_id)
                run = run[1:]
            if session is None or session.closed or entity_count(session) + len(run) > limit:
                for one in run:  # one at a time, each checked against the limits
                    self._apply_one(one.params, events)
            elif run:
                session.apply_run([n.params.update for n in run], events)

    def _apply_one(self, params: s.UpdateSessionNotification, events: Events) -> None:
        """Apply one ``session/update``; one past a limit is kept raw instead."""
        try:
            apply_update(self._ctx, params, events)
        except LimitExceeded as exc:
            message = s.Notification(method="session/update", params=params)
            self._limit_reached(exc, message, False, events)

    def _forget_lines(self) -> None:
        """Leaving log replay for live bytes: diagnostics no longer have a log line."""
        self._ctx.notes.line = None
        for session in self._ctx.sessions.by_id.values():
            session.line = None

    def eof(self) -> Events:
        """The agent closed its stdout: a last line without a newline."""
        events: Events = []
        for line in self.lines.flush():
            self.agent_lines += 1
            if type(line) is bytes:
                if line.strip():
                    self._receive_line(line, events)
            else:
                self.line_too_long(line, events)  # type: ignore[arg-type]
        return events

    def line(self, line: bytes) -> Events:
        """One complete line read from the agent (without its newline)."""
        events: Events = []
        self.agent_lines += 1
        if len(line) > self.lines.max_line:
            self.line_too_long(LineTooLong(len(line)), events)
        elif line.strip():
            self._receive_line(line, events)
        return events

    def update(self, params: s.UpdateSessionNotification, line: int | None) -> Events:
        """The params of one decoded ``session/update`` of the agent's (at a log's line)."""
        self._notes.line = line
        events: Events = []
        self._apply_one(params, events)
        return events

    def line_too_long(self, marker: LineTooLong, events: Events) -> None:
        """A line over the limit: reported, never decoded."""
        error = RemoteProtocolError(
            f"line of {marker.size} bytes exceeds the limit of {self.lines.max_line}",
            code=INVALID_REQUEST,
        )
        self._ctx.notes.note("line-too-long", error.message, "error")
        events.append(ev.InvalidMessageReceived(error=error))

    def _receive_line(self, line: bytes, events: Events) -> None:
        ctx = self._ctx
        notes = ctx.notes
        start = len(notes.diagnostics)
        items = self._decoder.decode_all(line, notes.diagnostics, max_batch=self.max_batch)
        if b'"jsonrpc"' not in line and items and not isinstance(items[0], RemoteProtocolError):
            # 1.2: every object carries it; accepted without (as the log reader does)
            notes.note("missing-jsonrpc-version", 'no "jsonrpc" member; accepted as 2.0')
        if len(notes.diagnostics) > start:
            notes.stamp(start, session_id_of(getattr(items[0], "params", None)))
        batch = line.lstrip()[:1] == b"[" and _parsed_batch(items[0])
        if batch:
            ctx.mode.begin_batch()
        self._bad_line = (self.agent_lines, line)
        try:
            for item in items:
                if isinstance(item, RemoteProtocolError):
                    self._invalid(item, events, True)
                else:
                    self._dispatch(item, True, events)
        finally:
            self._bad_line = None
            if batch:
                ctx.mode.end_batch()

    # ------------------------------------------------------------------ messages

    def message(self, message: Any, incoming: bool, line: int | None) -> Events:
        """One message already parsed (a Struct or plain JSON data; a batch allowed)."""
        self._notes.line = line
        events: Events = []
        if not isinstance(message, list):
            self._receive_one(message, incoming, events)
        elif not message:
            error = RemoteProtocolError("empty batch", code=INVALID_REQUEST, raw=message)
            self._invalid(error, events, incoming)
        elif len(message) > self.max_batch:
            self._invalid(batch_too_large(len(message), self.max_batch), events, incoming)
        elif incoming:
            mode = self._ctx.mode
            mode.begin_batch()
            try:
                for item in message:
                    self._receive_one(item, incoming, events)
            finally:
                mode.end_batch()
        else:
            for item in message:
                self._receive_one(item, incoming, events)
        return events

    def _receive_one(self, item: Any, incoming: bool, events: Events) -> None:
        if isinstance(item, dict):
            parsed = self._from_builtins(item, events, incoming)
            if parsed is None:
                return
        elif isinstance(item, s.Request | s.Notification | s.Response | s.ErrorResponse):
            parsed = item
        else:
            kind = type(item).__name__
            error = RemoteProtocolError(
                f"expected a JSON-RPC object, got {kind}", code=INVALID_REQUEST, raw=item
            )
            self._invalid(error, events, incoming)
            return
        self._dispatch(parsed, incoming, events)

    # ------------------------------------------------------------------ limits

    def _dispatch(self, message: s.Message, incoming: bool, events: Events) -> None:
        """Route one decoded message, unless it would pass a limit: then it is kept raw."""
        ctx = self._ctx
        try:
            if type(message) is s.Request or type(message) is s.Notification:
                sid = session_id_of(message.params)
                full = len(self._by_id) >= ctx.sessions.max_sessions
                if full and sid is not None and sid not in self._by_id:
                    raise _session_limit(ctx, sid)
                pending = ctx.rpc.pending_in
                waiting = len(pending) >= self.max_pending
                if (
                    waiting
                    and incoming
                    and type(message) is s.Request
                    and message.id not in pending
                ):
                    raise LimitExceeded(
                        "max_pending",
                        self.max_pending,
                        f"the agent's {message.method} request {message.id!r} not taken",
                    )
            dispatch(ctx, message, incoming, events)
        except LimitExceeded as exc:
            self._limit_reached(exc, message, incoming, events)

    def _limit_reached(
        self, exc: LimitExceeded, message: Any, incoming: bool, events: Events
    ) -> None:
        """Keep a message a limit stopped: its diagnostic, its event; a request is refused."""
        sid = session_id_of(getattr(message, "params", None))
        self._notes.note("limit-reached", exc.message, "error", sid)
        events.append(
            ev.LimitReached(limit=exc.limit, value=exc.value, message=message, session_id=sid)
        )
        if incoming and type(message) is s.Request:
            self._ctx.mode.refuse(message.id, INTERNAL_ERROR, exc.message)

    def _from_builtins(self, obj: dict[str, Any], events: Events, incoming: bool) -> Any:
        if obj.get("method") == "session/update" and "id" not in obj:
            params = obj.get("params")
            try:
                typed = msgspec.convert(params, _UPDATE_PARAMS)
            except (msgspec.ValidationError, UnicodeEncodeError):  # a lone surrogate key
                pass
            else:
                return s.Notification(method="session/update", params=typed)
        notes = self._ctx.notes
        start = len(notes.diagnostics)
        try:
            return message_from_builtins(obj, notes.diagnostics)
        except RemoteProtocolError as exc:
            self._invalid(exc, events, incoming)
            return None
        finally:
            if len(notes.diagnostics) > start:
                notes.stamp(start, session_id_of(obj.get("params")))

    # ------------------------------------------------------------ invalid messages

    def _invalid(self, error: RemoteProtocolError, events: Events, incoming: bool) -> None:
        ctx = self._ctx
        notes = ctx.notes
        detached(error)  # kept in an event: no frames with it (they would never be freed)
        error.line = notes.line
        raw = error.raw
        if isinstance(raw, dict) and raw.get("method") == "session/update":
            params = raw.get("params")
            sid = params.get("sessionId") if isinstance(params, dict) else None
            if isinstance(sid, str):
                try:
                    session: Session | None = ctx.sessions.session(sid, events)
                except LimitExceeded as exc:
                    notes.note("limit-reached", exc.message, "error", sid)
                    session = None
                update = params.get("update") if isinstance(params, dict) else None
                notes.note(
                    "update-rejected",
                    f"session/update rejected: {error.message} at `{error.path}`",
                    "error",
                    sid,
                    error.path,
                )
                if session is not None:
                    session.side_events.clear()
                events.append(ev.UpdateRejected(session_id=sid, error=error, raw=update))
                if incoming and error.request_id is not None:
                    ctx.mode.refuse(error.request_id, error.code, error.message)
                return
        if isinstance(raw, dict) and isinstance(raw.get("method"), str):
            sid = session_id_of(raw.get("params"))
            if sid is not None:  # 12.5: any message naming a session creates it
                try:
                    if incoming:
                        ctx.mode.agent_session(sid, events)
                    else:
                        ctx.sessions.session(sid, events)
                except LimitExceeded as exc:
                    notes.note("limit-reached", exc.message, "error", sid)
            rid = raw.get("id")
            if not incoming and isinstance(rid, int | str) and not isinstance(rid, bool):
                # The client's own request, malformed (a log): tracked with its raw params,
                # so that its answer is matched and nothing it started is lost (1.8).
                request = s.Request(id=rid, method=raw["method"], params=raw.get("params", UNSET))
                request_sent(ctx, request, events)
        if incoming and isinstance(raw, dict) and "method" in raw and error.request_id is not None:
            rid = error.request_id
            if rid in ctx.rpc.pending_in:
                displace(ctx, rid, events)  # an answer to the id can only be this one's
            # live, answered -32602 (1.8); in a log, the client's answer follows
            ctx.mode.malformed_request(rid, raw["method"], error.code, error.message)
        # A malformed response is never answered (1.2); the request it answers (when its id
        # is readable) ends failed, below.
        response = isinstance(raw, dict) and "method" not in raw and "id" in raw
        if not response and incoming and error.code == INVALID_REQUEST and error.request_id is None:
            # 1.5: an invalid entry (or an empty batch) gets its own -32600 with id null.
            ctx.mode.invalid_entry(error.message)
        code = "invalid-message" if error.code != -32700 else "malformed-line"
        text = f"{error.message} at `{error.path}`"
        if code == "malformed-line" and self._bad_line is not None and notes.line is None:
            number, line = self._bad_line  # live: the agent's output line, and what it held
            text = f"agent output line {number}: {text}: {excerpt(line)}"
        notes.note(code, text, "error", path=error.path)
        events.append(ev.InvalidMessageReceived(error=error))
        if response and isinstance(raw, dict):
            self._settle_malformed_response(error, raw, events, incoming)

    def _settle_malformed_response(
        self, error: RemoteProtocolError, raw: dict[str, Any], events: Events, incoming: bool
    ) -> None:
        """The request a malformed response answers ends failed: -32603, the raw in ``data``."""
        rid = error.request_id
        rpc = self._ctx.rpc
        pending = rpc.pending_out if incoming else rpc.pending_in
        if rid is None or rid not in pending:
            return
        settled = s.ErrorResponse(
            id=rid,
            error=s.Error(
                code=INTERNAL_ERROR, message=f"malformed response: {error.message}", data=raw
            ),
        )
        if incoming:
            response_received(self._ctx, settled, events)
        else:
            dispatch(self._ctx, settled, False, events)


def _session_limit(ctx: Context, session_id: str) -> LimitExceeded:
    limit = ctx.sessions.max_sessions
    return LimitExceeded("max_sessions", limit, f"session {session_id!r} not created")


#: How much of a malformed line its diagnostic quotes.
EXCERPT_CHARS = 120


def excerpt(line: bytes) -> str:
    """The start of ``line`` for a diagnostic, quoted and escaped.

    A JSON string literal, so every control and non-ASCII character is escaped (nothing in
    it can drive a terminal): at most :data:`EXCERPT_CHARS` characters of the line, with
    ``…`` when it was longer.
    """
    import json

    text = line.decode("utf-8", "replace")
    cut = text[:EXCERPT_CHARS]
    return json.dumps(cut) + ("…" if len(text) > EXCERPT_CHARS else "")
