# Owns the streams of the pump: the agent's byte streams, anyio's (a process's pipes on either
# backend) or trio's (in-memory test streams, a caller's own), seen through one small
# interface; and the stream of events a subscriber reads (`AgentConnection.events`).
"""The agent's byte streams as the pump reads and writes them; the subscribers' event stream."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Generic, Protocol, TypeVar

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream

__all__ = ["ByteReader", "ByteWriter", "EventStream", "reader", "writer"]

T = TypeVar("T")


class ByteReader(Protocol):
    """Reads the agent's output."""

    async def read(self, max_bytes: int) -> bytes:
        """The next bytes; ``b""`` once the stream ended (closed or broken)."""
        ...


class ByteWriter(Protocol):
    """Writes the agent's input."""

    async def write(self, data: bytes) -> None:
        """Write all of ``data``.

        Raises:
            anyio.BrokenResourceError: the agent stopped reading (or the stream is closed).
        """
        ...

    async def aclose(self) -> None:
        """Close the stream (the agent sees the end of its input); never raises."""
        ...


_GONE: tuple[type[BaseException], ...] = (
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    anyio.EndOfStream,
    OSError,
)


def _trio_gone() -> tuple[type[BaseException], ...]:
    import trio  # only for a trio stream, so trio is there

    return (trio.BrokenResourceError, trio.ClosedResourceError, OSError)


class _Reader:
    """Reads with ``receive`` (anyio's ``receive``, trio's ``receive_some``)."""

    __slots__ = ("_gone", "_receive")

    def __init__(
        self, receive: Callable[[int], Awaitable[Any]], gone: tuple[type[BaseException], ...]
    ) -> None:
        self._receive = receive
        self._gone = gone

    async def read(self, max_bytes: int) -> bytes:
        try:
            return bytes(await self._receive(max_bytes))
        except self._gone:
            return b""


class _Writer:
    """Writes with ``send`` (anyio's ``send``, trio's ``send_all``); closes with ``close``."""

    __slots__ = ("_close", "_gone", "_send")

    def __init__(
        self,
        send: Callable[[bytes], Awaitable[Any]],
        close: Callable[[], Awaitable[Any]],
        gone: tuple[type[BaseException], ...],
    ) -> None:
        self._send = send
        self._close = close
        self._gone = gone

    async def write(self, data: bytes) -> None:
        try:
            await self._send(data)
        except self._gone as exc:
            raise anyio.BrokenResourceError(str(exc) or type(exc).__name__) from exc

    async def aclose(self) -> None:
        with contextlib.suppress(*self._gone):
            await self._close()


def reader(stream: Any) -> ByteReader:
    """Read an anyio ``ByteReceiveStream`` or a trio ``ReceiveStream``."""
    if hasattr(stream, "receive_some"):
        return _Reader(stream.receive_some, _trio_gone())
    if hasattr(stream, "receive"):
        return _Reader(stream.receive, _GONE)
    raise TypeError(f"not a byte receive stream (anyio or trio): {stream!r}")


def writer(stream: Any) -> ByteWriter:
    """Write an anyio ``ByteSendStream`` or a trio ``SendStream``."""
    if hasattr(stream, "send_all"):
        return _Writer(stream.send_all, stream.aclose, _trio_gone())
    if hasattr(stream, "send"):
        return _Writer(stream.send, stream.aclose, _GONE)
    raise TypeError(f"not a byte send stream (anyio or trio): {stream!r}")


class EventStream(Generic[T]):
    """The events of one subscriber, on trio and asyncio alike.

    ``async for event in stream`` reads until the agent's output ends; ``receive()`` waits
    for the next (``anyio.EndOfStream`` at the end), ``receive_nowait()`` takes one already
    there (``anyio.WouldBlock`` if none). Close it (``with stream:``, ``close()``) to
    unsubscribe; a stream read to its end, or forgotten, closes itself.
    """

    __slots__ = ("_stream",)

    def __init__(self, stream: MemoryObjectReceiveStream[T]) -> None:
        self._stream = stream

    async def receive(self) -> T:
        """The next event (``anyio.EndOfStream`` once the agent's output ended)."""
        try:
            return await self._stream.receive()
        except anyio.EndOfStream:
            self._stream.close()
            raise

    def receive_nowait(self) -> T:
        """An event already there (``anyio.WouldBlock`` if none yet, ``anyio.EndOfStream``)."""
        return self._stream.receive_nowait()

    def __aiter__(self) -> EventStream[T]:
        return self

    async def __anext__(self) -> T:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    def close(self) -> None:
        """Unsubscribe: no more events are kept for this stream."""
        self._stream.close()

    async def aclose(self) -> None:
        """Unsubscribe (as :meth:`close`)."""
        self._stream.close()

    def __enter__(self) -> EventStream[T]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stream.close()

    async def __aenter__(self) -> EventStream[T]:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.__exit__(*exc_info)

    def __del__(self) -> None:
        self._stream.close()  # a forgotten subscriber is no leak to warn about
