"""The two event loops the transport runs on, and in-memory byte pipes for either.

``BACKENDS`` parametrizes the transport tests: every test runs on trio and on asyncio.
:func:`run` runs a coroutine function on one, with trio's ``MockClock`` when asked (asyncio
has no fake clock: those tests run on the real one, and only wait for what never comes).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

T = TypeVar("T")

BACKENDS = ["trio", "asyncio"]


def run(main: Callable[[], Awaitable[T]], backend: str, *, mock_clock: bool = False) -> T:
    """Run ``main`` on ``backend`` (``mock_clock``: trio's autojumping fake clock)."""
    options: dict[str, Any] = {}
    if backend == "trio" and mock_clock:
        import trio.testing

        options["clock"] = trio.testing.MockClock(autojump_threshold=0)
    return anyio.run(main, backend=backend, backend_options=options)


class PipeSend(anyio.abc.ByteSendStream):
    """The writing end of an in-memory byte pipe (unbounded: a write never waits)."""

    def __init__(self, stream: MemoryObjectSendStream[bytes]) -> None:
        self._stream = stream

    async def send(self, item: bytes) -> None:
        """Write ``item`` (``anyio.BrokenResourceError`` once the reader closed)."""
        await self._stream.send(bytes(item))

    async def aclose(self) -> None:
        """End the pipe: the reader sees the end once it read what was written."""
        self._stream.close()

    def __del__(self) -> None:
        self._stream.close()


class PipeReceive(anyio.abc.ByteReceiveStream):
    """The reading end of an in-memory byte pipe."""

    def __init__(self, stream: MemoryObjectReceiveStream[bytes]) -> None:
        self._stream = stream
        self._rest = b""

    async def receive(self, max_bytes: int = 65536) -> bytes:
        """At most ``max_bytes`` (``anyio.EndOfStream`` at the end)."""
        data = self._rest or await self._stream.receive()
        self._rest = data[max_bytes:]
        return data[:max_bytes]

    async def read(self) -> bytes:
        """What comes next; ``b""`` at the end (as trio's ``receive_some``)."""
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return b""

    async def aclose(self) -> None:
        """Stop reading: the writer's next write fails."""
        self._stream.close()

    def __del__(self) -> None:
        self._stream.close()


def pipe() -> tuple[PipeSend, PipeReceive]:
    """A one-way in-memory byte pipe."""
    send, receive = anyio.create_memory_object_stream[bytes](math.inf)
    return PipeSend(send), PipeReceive(receive)
