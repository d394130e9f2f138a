# Owns the errors of a live connection (ACP-V2-CLIENT-STATE.md 2.4, live mode) and the
# bound on what the client owes an agent that does not read (`Owed`): used by `_pump.Pump`,
# the errors re-exported by `transport`.
"""The transport's errors: the agent failed, exited, timed out, stopped reading, refused."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _schema as s
from ._diagnostics import Diagnostic
from ._errors import ACPError

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = [
    "DEFAULT_MAX_UNSENT",
    "AgentError",
    "AgentExited",
    "AgentNotReading",
    "Owed",
    "RequestFailed",
    "RequestTimeout",
]

DEFAULT_MAX_UNSENT = 16 << 20
"""Bytes the client may owe an agent that does not read them (answers, cancels) at most."""


class AgentError(ACPError):
    """The agent process failed: it exited, hung or broke the protocol."""


class AgentExited(AgentError):
    """The agent closed its stdout (exited or crashed) while something waited for it.

    Attributes:
        status: the process's exit status when it was known (a negative number is the
            signal that ended it), else ``None``.
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class RequestTimeout(AgentError):
    """A request got no response in time (the connection stays usable)."""


class AgentNotReading(AgentError):
    """The agent did not read what the client owed it, past ``max_unsent`` bytes.

    An agent that sends requests but never reads the answers would make the client buffer
    them without end; the connection ends instead (diagnostic ``agent-not-reading``).
    """


class RequestFailed(ACPError):
    """The agent answered a request with a JSON-RPC error.

    Attributes:
        method: the request's method.
        error: the :class:`acp_client.schema.Error` object.
    """

    def __init__(self, method: str, error: s.Error) -> None:
        self.method = method
        self.error = error
        super().__init__(f"{method} failed: {error.message} (code {error.code})")


class Owed:
    """The bytes a live connection owes its agent and has not written, bounded.

    ``in_flight`` is what a write that has not returned yet took; with what is queued it is
    what the agent has not read, which may not pass ``max_unsent``.
    """

    __slots__ = ("_parts", "_size", "in_flight", "max_unsent")

    def __init__(self, max_unsent: int) -> None:
        self._parts: list[bytes] = []
        self._size = 0
        self.in_flight = 0
        self.max_unsent = max_unsent

    def add(self, data: bytes) -> None:
        """Queue ``data`` for the agent, after what is queued already."""
        if data:
            self._parts.append(data)
            self._size += len(data)

    def take(self) -> bytes:
        """Everything queued, in order; forgotten here (the caller writes it)."""
        data = b"".join(self._parts)
        self._parts.clear()
        self._size = 0
        return data

    def check(self, connection: Connection) -> None:
        """End the connection when the agent left more than ``max_unsent`` bytes unread.

        Raises:
            AgentNotReading: after the diagnostic ``agent-not-reading`` on ``connection``.
        """
        unsent = self._size + self.in_flight
        if unsent <= self.max_unsent:
            return
        message = (
            f"the agent does not read its input: {unsent:,} bytes owed to it are unsent"
            f" (max_unsent {self.max_unsent:,}); the connection ends"
        )
        connection.diagnostics.append(
            Diagnostic(code="agent-not-reading", message=message, severity="error")
        )
        raise AgentNotReading(message)
