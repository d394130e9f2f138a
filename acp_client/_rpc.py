"""JSON-RPC bookkeeping of one connection: request ids, pending tables, batches, the outbox.

Owns (ACP-V2-CLIENT-STATE.md 1.2-1.5): the ids the client allocates (never reused while
pending), the client's requests waiting for their response, the agent's requests waiting
for the client's answer, responses nobody asked for, and the bytes owed to the agent.
Replies to a received batch go back together, as one array (1.5): the client answers the
requests in it (and reports each invalid entry with its own -32600, ``id: null``) in one
array, written once every request of the batch has been answered; a batch of
notifications only gets no reply at all. Replies to other requests are written alone.

This part knows no session and no method: what a response or request changes is
:mod:`._methods`' job.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from . import _schema as s
from ._codec import encode

__all__ = ["AgentRequest", "BatchReplies", "Pending", "Rpc", "SentRequest"]

RequestId = int | str
#: An agent request waiting for the client's answer: (method, params, session id).
AgentRequest = tuple[str, Any, "str | None"]


class SentRequest(NamedTuple):
    """A request built by the connection: its id and the bytes to write."""

    request_id: int | str
    data: bytes


class Pending:
    """One of the client's requests waiting for its response, with the counts R50 needs."""

    __slots__ = (
        "commands_mark",
        "config_mark",
        "marks",
        "method",
        "params",
        "request_id",
        "session_id",
        "state_mark",
    )

    def __init__(
        self, request_id: RequestId, method: str, params: Any, session_id: str | None
    ) -> None:
        self.request_id = request_id
        self.method = method
        self.params = params
        self.session_id = session_id
        self.commands_mark = -1
        self.config_mark = -1
        self.state_mark = -1
        # session/new names no session: every known session's (commands, config) counts
        self.marks: dict[str, tuple[int, int]] | None = None


class _Batch:
    __slots__ = ("open", "replies", "waiting")

    def __init__(self) -> None:
        self.open = True
        self.replies: list[bytes] = []
        self.waiting = 0  # requests of the batch not answered yet


class BatchReplies:
    """Routes each encoded reply to its batch, and hands out what is ready to write."""

    __slots__ = ("_current", "_of")

    def __init__(self) -> None:
        self._current: _Batch | None = None
        # request id -> the batches waiting for a reply to it, oldest first (an id may repeat)
        self._of: dict[RequestId, list[_Batch]] = {}

    def begin(self) -> None:
        """A batch arrived: the requests :meth:`expect`-ed until :meth:`end` belong to it."""
        self._current = _Batch()

    def expect(self, request_id: RequestId) -> None:
        """A request of the batch being applied will be answered (now or later)."""
        batch = self._current
        if batch is not None:
            batch.waiting += 1
            self._of.setdefault(request_id, []).append(batch)

    def end(self) -> bytes:
        """The batch's entries are all applied: its array if nothing is left to answer."""
        batch = self._current
        self._current = None
        if batch is None:
            return b""
        batch.open = False
        return b"" if batch.waiting else _array(batch.replies)

    def forget(self, request_id: RequestId) -> bytes:
        """Stop waiting for the oldest request under this id: it will never be answered.

        (The agent reused its id.) Returns its batch's array if that was the last reply due.
        """
        batch = self._take(request_id)
        return b"" if batch is None else _ready(batch)

    def route(self, request_id: RequestId | None, reply: bytes) -> bytes:
        """Take one encoded reply (no newline); return the bytes to write now, maybe none.

        A reply to a request of a batch waits for the batch's other replies; an ``id: null``
        error made while a batch is applied belongs to that batch.
        """
        batch = self._take(request_id) if request_id is not None else None
        if batch is None:
            if request_id is not None or self._current is None:
                return reply + b"\n"
            batch = self._current
        batch.replies.append(reply)
        return _ready(batch)

    def _take(self, request_id: RequestId) -> _Batch | None:
        """The batch waiting for a reply to ``request_id`` (oldest first), no longer waiting."""
        waiting = self._of.get(request_id)
        if not waiting:
            return None
        batch = waiting.pop(0)
        if not waiting:
            del self._of[request_id]
        batch.waiting -= 1
        return batch


def _ready(batch: _Batch) -> bytes:
    """A closed batch's array once no reply is due any more, else nothing yet."""
    return b"" if batch.open or batch.waiting else _array(batch.replies)


def _array(replies: list[bytes]) -> bytes:
    return b"[" + b",".join(replies) + b"]\n" if replies else b""


class Rpc:
    """Ids, the two pending tables, unmatched responses and the outbox of one connection."""

    __slots__ = ("_batches", "next_id", "outbox", "pending_in", "pending_out", "unmatched")

    def __init__(self) -> None:
        self.pending_out: dict[RequestId, Pending] = {}
        """The client's requests waiting for their response, by id."""
        self.pending_in: dict[RequestId, AgentRequest] = {}
        """The agent's requests waiting for the client's answer, by id."""
        self.unmatched: list[Any] = []
        """Responses whose request was never seen (raw)."""
        self.next_id = 0
        self.outbox: list[bytes] = []
        self._batches = BatchReplies()

    def new_id(self) -> int:
        """Allocate a request id never used by a pending request."""
        rid = self.next_id
        self.next_id += 1
        while rid in self.pending_out:
            rid = self.next_id
            self.next_id += 1
        return rid

    def track(self, rid: RequestId, pending: Pending) -> None:
        """The client sent request ``rid``: it waits for its response (ids go on above it)."""
        self.pending_out[rid] = pending
        if isinstance(rid, int) and rid >= self.next_id:
            self.next_id = rid + 1

    def forget_requests(self) -> None:
        """A new connection (a log's, 1.4): the old one's requests are gone, both ways."""
        self.pending_out.clear()
        self.pending_in.clear()

    # ------------------------------------------------------------------- replies

    def respond(self, request_id: RequestId, result: Any) -> None:
        """Owe the agent a result for its request."""
        self._reply(request_id, s.Response(id=request_id, result=result))

    def respond_error(self, request_id: RequestId | None, code: int, message: str) -> None:
        """Owe the agent an error for its request (``None``: an invalid entry, 1.5)."""
        self._reply(
            request_id, s.ErrorResponse(id=request_id, error=s.Error(code=code, message=message))
        )

    def _reply(self, request_id: RequestId | None, reply: s.Message) -> None:
        """Owe ``reply``; one to a request of a received batch waits for the batch (1.5)."""
        data = self._batches.route(request_id, encode(reply))
        if data:
            self.outbox.append(data)

    def begin_batch(self) -> None:
        """A received batch is being applied: replies to its requests go together."""
        self._batches.begin()

    def end_batch(self) -> None:
        """The received batch is applied: its array is owed once nothing is left to answer."""
        self.outbox.append(self._batches.end())

    def expect(self, request_id: RequestId) -> None:
        """The agent's request ``request_id`` will be answered (in a batch: in its array)."""
        self._batches.expect(request_id)

    def forget(self, request_id: RequestId) -> None:
        """The agent's request ``request_id`` will never be answered (its id was reused)."""
        data = self._batches.forget(request_id)
        if data:
            self.outbox.append(data)

    def take(self) -> bytes:
        """The bytes owed to the agent, then forgets them."""
        if not self.outbox:
            return b""
        data = b"".join(self.outbox)
        self.outbox.clear()
        return data
