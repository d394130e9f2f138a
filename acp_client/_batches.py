"""Replies to a received batch go back together, as one array (ACP-V2-CLIENT-STATE.md 1.5).

The agent may send a JSON array of messages. The client answers the requests in it (and
reports each invalid entry with its own -32600, ``id: null``) in one array, written once
every request of the batch has been answered; a batch of notifications only gets no reply
at all. Replies to requests that did not come in a batch are written on their own.
"""

from __future__ import annotations

__all__ = ["BatchReplies"]

RequestId = int | str


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
