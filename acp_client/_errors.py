"""Exceptions of acp_client: one root, and whose fault it was.

A :class:`LocalProtocolError` is a mistake of the caller (this process): sending a
request that the protocol does not allow in the current state, answering a request
twice, and so on. A :class:`RemoteProtocolError` is a mistake of the peer (the
Agent, or the log being replayed): it names where the bad input was (a JSON path,
and a line when known) and the JSON-RPC error code that fits it.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

__all__ = [
    "ACPError",
    "LocalProtocolError",
    "RemoteProtocolError",
    "LimitExceeded",
    "PARSE_ERROR",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "INVALID_PARAMS",
    "INTERNAL_ERROR",
    "REQUEST_CANCELLED",
    "AUTH_REQUIRED",
    "RESOURCE_NOT_FOUND",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "detached",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002
UNSUPPORTED_PROTOCOL_VERSION = -32022


class ACPError(Exception):
    """Root of every exception acp_client raises on purpose."""


class LocalProtocolError(ACPError):
    """The caller asked for something the protocol does not allow."""


@dataclass(eq=False, repr=False)
class RemoteProtocolError(ACPError):
    """The peer sent something that cannot be understood.

    Attributes:
        message: a short human-readable explanation.
        path: the JSON path of the offending value (``$.params.update.content``), or ``"$"``.
        code: the JSON-RPC error code that fits (-32700, -32600 or -32602).
        line: the 1-based input line, when known.
        excerpt: a short excerpt of the offending input, when available.
        raw: the offending JSON value as parsed (a dict for a message), when it parsed.
        request_id: the id of the offending request, so that it can be answered.
    """

    message: str
    _: KW_ONLY
    path: str = "$"
    code: int = INVALID_PARAMS
    line: int | None = None
    excerpt: str | None = None
    raw: object = None
    request_id: int | str | None = None

    def __post_init__(self) -> None:
        where = f"line {self.line}, " if self.line is not None else ""
        super().__init__(f"{self.message} ({where}at `{self.path}`, JSON-RPC code {self.code})")


class LimitExceeded(ACPError):
    """A limit the embedder set on the connection was reached (``max_sessions`` and so on).

    Reading the agent's messages never raises it: what would pass the limit is kept raw in
    a :class:`~acp_client.events.LimitReached` event with a ``limit-reached`` diagnostic.
    Only a call of the caller's own can (a ``send_*`` naming one session too many).

    Attributes:
        limit: the keyword of the limit (``"max_sessions"``, ``"max_pending"``).
        value: its value, the count that was reached.
        message: what was not done.
    """

    def __init__(self, limit: str, value: int, what: str) -> None:
        self.limit = limit
        self.value = value
        self.message = f"{what}: the limit {limit}={value} was reached"
        super().__init__(self.message)


def detached(error: RemoteProtocolError) -> RemoteProtocolError:
    """``error`` without its traceback and chained exceptions, to be kept in an event.

    A caught exception's traceback holds the frames it passed through, and their locals hold
    the list of events being built: an event holding the error would close a reference
    cycle through an event Struct the collector does not track (``gc=False``), which is
    never freed. What the error says is in its message, path and code; nothing is lost.
    """
    error.__traceback__ = None
    error.__context__ = None
    error.__cause__ = None
    return error
