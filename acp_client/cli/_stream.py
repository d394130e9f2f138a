"""``--events``: the conversation as JSON lines while it happens (``acp-client/events@1``).

Owns the stream format documented in ``docs/events-stream.md``: a ``start`` line, one line
per event of :mod:`acp_client.events` (its class name in ``event``, its fields in camelCase,
wire objects as on the wire), a ``diagnostic`` line per diagnostic as it is raised, and one
``end`` line carrying the final snapshot (SNAPSHOT.md). Every line is flushed when written,
so a pipe sees each change at once.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import IO, Any

__all__ = ["EVENTS_FORMAT", "EventStream", "event_json", "streaming", "with_failed_requests"]

#: The format name and version of the stream; a change that breaks readers bumps the number.
EVENTS_FORMAT = "acp-client/events@1"


def with_failed_requests(snapshot: dict[str, Any], failed: Sequence[Any]) -> dict[str, Any]:
    """``snapshot`` with the command line's ``failedRequests`` (docs/snapshot.md), if any.

    ``failed`` holds :class:`acp_client.FailedRequest` values; the key is added only when
    there are some, so a log without them prints exactly its snapshot.
    """
    if failed:
        snapshot["failedRequests"] = [request.to_json() for request in failed]
    return snapshot


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _value(value: Any) -> Any:
    """A field of an event as JSON data: wire objects as on the wire, errors as text."""
    from acp_client._codec import to_builtins

    if isinstance(value, BaseException):
        return {"error": type(value).__name__, "message": str(value)}
    try:
        return to_builtins(value)
    except (TypeError, ValueError):
        return repr(value)


def event_json(event: Any) -> dict[str, Any]:
    """One event of :mod:`acp_client.events` as a line of the stream (without the newline)."""
    out: dict[str, Any] = {"event": type(event).__name__}
    for field in event.__struct_fields__:
        out[_camel(field)] = _value(getattr(event, field))
    return out


class EventStream:
    """Writes the stream to ``out`` (standard output), one flushed JSON line at a time."""

    def __init__(self, out: IO[str] | None = None) -> None:
        self._out = out
        self._written: dict[str, int] = {}  # per list of diagnostics: how many were written

    def _write(self, obj: dict[str, Any]) -> None:
        from . import dump_json

        out = sys.stdout if self._out is None else self._out
        out.write(dump_json(obj) + "\n")
        out.flush()

    def start(self, **about: Any) -> None:
        """The first line: the format, and what is streamed (``source``, ``command``...)."""
        self._write({"event": "start", "format": EVENTS_FORMAT, **about})

    def events(self, events: Iterable[Any]) -> None:
        """A line per event, in order."""
        for event in events:
            self._write(event_json(event))

    def diagnostics(self, name: str, diagnostics: Sequence[Any]) -> None:
        """A line per diagnostic of the list ``name`` not written yet (each list only grows)."""
        done = self._written.get(name, 0)
        for diag in diagnostics[done:]:
            self._write({"event": "diagnostic", **diag.to_json()})
        self._written[name] = max(done, len(diagnostics))

    def end(self, snapshot: dict[str, Any], **about: Any) -> None:
        """The last line: the final state (a snapshot, SNAPSHOT.md) and how the run ended.

        Written a piece at a time (:func:`~acp_client.cli.write_json`): a snapshot may hold a
        gigabyte of agent output, and one string of it several times over would not fit.
        """
        from . import write_json

        out = sys.stdout if self._out is None else self._out
        write_json({"event": "end", **about, "snapshot": snapshot}, out)
        out.flush()


@contextlib.asynccontextmanager
async def streaming(agent: Any, stream: EventStream | None) -> AsyncIterator[None]:
    """While the body runs, write every event of ``agent`` (a live connection) to ``stream``.

    Events are written as they arrive, with the connection's new diagnostics after them;
    what is still queued when the body ends is written before this returns. Nothing when
    ``stream`` is ``None``.
    """
    if stream is None:
        yield
        return
    import anyio
    import trio

    from acp_client._process import unwrapped

    events = agent.events()
    diagnostics = agent.connection.diagnostics

    def write(event: Any) -> None:
        stream.events((event,))
        stream.diagnostics("connection", diagnostics)

    async def pump() -> None:
        async for event in events:
            write(event)

    try:
        async with unwrapped(), trio.open_nursery() as nursery:
            nursery.start_soon(pump)
            try:
                yield
            finally:
                nursery.cancel_scope.cancel()
    finally:
        while True:  # what arrived after the last wake-up of pump()
            try:
                event = events.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                break
            write(event)
        events.close()
        stream.diagnostics("connection", diagnostics)
