"""Replies to a received batch go back together, as one array (ACP-V2-CLIENT-STATE.md 1.5).

The agent may send a JSON array of messages. The client answers the requests in it (and
reports each invalid entry with its own -32600, ``id: null``) in one array, written once
every request of the batch has been answered; a batch of notifications only gets no reply
at all. Replies to requests that did not come in a batch are written on their own.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["BatchReplies"]

RequestId = int | str


class _Batch:
    __slots__ = ("open", "replies", "waiting")

    def __init__(self, request_ids: Iterable[RequestId]) -> None:
        self.open = True
        self.replies: list[bytes] = []
        self.waiting: set[RequestId] = set(request_ids)


class BatchReplies:
    """Routes each encoded reply to its batch, and hands out what is ready to write."""

    __slots__ = ("_current", "_of")

    def __init__(self) -> None:
        self._current: _Batch | None = None
        self._of: dict[RequestId, _Batch] = {}

    def begin(self, request_ids: Iterable[RequestId]) -> None:
        """A batch arrived holding requests with these ids; replies made now belong to it."""
        batch = _Batch(request_ids)
        for request_id in batch.waiting:
            self._of[request_id] = batch
        self._current = batch

    def end(self) -> bytes:
        """The batch's entries are all applied: its array if nothing is left to answer."""
        batch = self._current
        self._current = None
        if batch is None:
            return b""
        batch.open = False
        return b"" if batch.waiting else _array(batch.replies)

    def route(self, request_id: RequestId | None, reply: bytes) -> bytes:
        """Take one encoded reply (no newline); return the bytes to write now, maybe none.

        A reply to a request of a batch waits for the batch's other replies; an ``id: null``
        error made while a batch is applied belongs to that batch.
        """
        batch = self._of.pop(request_id, None) if request_id is not None else None
        if batch is None:
            if request_id is not None or self._current is None:
                return reply + b"\n"
            batch = self._current
        batch.replies.append(reply)
        batch.waiting.discard(request_id)
        if batch.open or batch.waiting:
            return b""
        return _array(batch.replies)


def _array(replies: list[bytes]) -> bytes:
    return b"[" + b",".join(replies) + b"]\n" if replies else b""
