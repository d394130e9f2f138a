"""The client's own checks before it sends (ACP-V2-CLIENT-STATE.md 1.4, C1-C7, C21, C29; P10).

Owns the C-rules: what the client must not send given the handshake (``initialize``
first and repeatable only until another request, C1, 1.4; ``authMethods`` C4; MCP
transports and roots C6; ``session.delete`` C7; prompt content types C5), the state of a
session (set up before prompting, C1; a listed config value, C21; cancel only what
advertises it, C29; no session mutation for a child session, and its cancel only
while its association allows it, ACP-V2-PREVIEW P10). A failed check raises
:class:`~._errors.LocalProtocolError` (or ``TypeError`` for a value of the wrong type)
and nothing is sent or recorded.

Every sending path goes through one :class:`Preflight`: the connection's ``send_*``
methods, and a transport that builds its own messages (``preflight.request(method,
params)`` is the entry for any request). :class:`LivePreflight` adds the rules that hold
only when attached to an agent (a log's client may have done anything).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from msgspec import UNSET

from . import _schema as s
from ._checks import relative_path, select_values
from ._context import Offer, field, session_id_of
from ._errors import LocalProtocolError
from ._rpc import Pending, RequestId
from ._session import Session

__all__ = ["LivePreflight", "Preflight"]

#: Requests that need something the agent's initialize answer offers (C4, C6, C7).
#: Client-initiated session mutations never sent for a child (P10; the list is assumed).
_CHILD_RESTRICTED = frozenset(
    {
        "session/prompt",
        "session/set_config_option",
        "session/close",
        "session/resume",
        "session/delete",
        "session/fork",
    }
)
_GATED = frozenset({"auth/login", "auth/logout", "session/delete", "session/new", "session/resume"})
_MCP_TRANSPORTS: dict[type[Any], str] = {s.McpServerHttp: "http", s.McpServerStdio: "stdio"}
_PROMPT_CAPABILITY: dict[type[Any], str] = {
    s.ImageContent: "image",
    s.AudioContent: "audio",
    s.EmbeddedResource: "embedded_context",
}
#: The prompt block types by wire name: the capability each needs (None: always accepted).
_PROMPT_BLOCK_TYPES: dict[Any, str | None] = {
    "text": None,
    "resource_link": None,
    "image": "image",
    "audio": "audio",
    "resource": "embedded_context",
}


def _check_mcp_transports(servers: list[Any], mcp: Any) -> None:
    """C6: MCP servers only with a transport the agent advertises (``session.mcp``)."""
    extra = getattr(mcp, "extra", None)
    for server in servers:
        kind = _MCP_TRANSPORTS.get(type(server))
        if kind is None and isinstance(server, dict):
            kind = server.get("type")
        if kind in ("http", "stdio"):
            offered = getattr(mcp, kind, None) not in (None, UNSET)
        else:  # a transport this library does not know: offered only by a field of that name
            offered = isinstance(extra, dict) and extra.get(kind) is not None
        if not offered:
            raise LocalProtocolError(
                f"MCP server transport {kind!r}: the agent does not advertise"
                f" session.mcp.{kind} (C6)"
            )


def _check_config_value(options: Sequence[Any] | None, config_id: str, value: str | bool) -> None:
    """C21: set only a listed value of a select, or a boolean of a boolean option."""
    if not options:
        return  # no list reported: nothing to check against
    for option in options:
        listed = option.get("configId") if isinstance(option, dict) else option.config_id
        if listed != config_id:
            continue
        if type(option) is s.SessionConfigBoolean:
            if not isinstance(value, bool):
                raise LocalProtocolError(f"config option {config_id!r} takes a boolean (C21)")
        elif type(option) is s.SessionConfigSelect and (
            isinstance(value, bool) or value not in select_values(option.options)
        ):
            raise LocalProtocolError(
                f"{value!r} is not a value of config option {config_id!r} (C21)"
            )
        return
    raise LocalProtocolError(f"the session lists no config option {config_id!r} (C21)")


class Preflight:
    """The checks of what the client is about to send, for a log's connection.

    Args:
        offer: the handshake (what the agent's ``initialize`` answer offers).
        sessions: the connection's sessions, by id.
        pending: the client's requests waiting for their response, by id.
    """

    __slots__ = ("_offer", "_pending", "_sessions")

    def __init__(
        self,
        offer: Offer,
        sessions: Mapping[str, Session],
        pending: Mapping[RequestId, Pending],
    ) -> None:
        self._offer = offer
        self._sessions = sessions
        self._pending = pending

    def request(self, method: str, params: Any) -> None:
        """Any request: ``initialize`` is repeatable only until another request (1.4).

        After a restore the first ``initialize`` is a new connection's (R92).
        """
        if method == "initialize" and self._offer.requests_sent and not self._offer.restored:
            raise LocalProtocolError(
                "initialize is repeatable only until another request is sent (1.4)"
            )

    def set_up(self, session_id: str) -> None:
        """A prompt's session is set up (checked live only)."""

    def prompt(self, session_id: str, prompt: str | Sequence[s.ContentBlock]) -> list[Any]:
        """A prompt's content blocks, once checked (C1 live, C5).

        Raises:
            TypeError: ``prompt`` is bytes.
            LocalProtocolError: empty, or a block the agent's prompt capabilities refuse.
        """
        if isinstance(prompt, bytes | bytearray | memoryview):
            raise TypeError("a prompt is text (str) or a sequence of content blocks, not bytes")
        if isinstance(prompt, str) and not prompt:
            raise LocalProtocolError("a prompt needs some text: the empty string is no prompt")
        blocks: list[s.ContentBlock] = (
            [s.TextContent(text=prompt)] if isinstance(prompt, str) else list(prompt)
        )
        if not blocks:
            raise LocalProtocolError("a prompt needs at least one content block")
        self.set_up(session_id)
        self._check_prompt_blocks(blocks)
        return blocks

    def _check_prompt_blocks(self, blocks: list[s.ContentBlock]) -> None:
        """C5: only content types the agent's prompt capabilities allow (once known)."""
        if not self._offer.answered:
            return  # not initialized here: nothing to check against
        session = getattr(self._offer.agent_capabilities, "session", None)
        caps = getattr(session, "prompt", None)
        if not isinstance(caps, s.PromptCapabilities):
            caps = None
        for block in blocks:
            if isinstance(block, dict):  # a block given as plain data: checked by its type
                kind = block.get("type")
                if not isinstance(kind, str) or kind not in _PROMPT_BLOCK_TYPES:
                    raise LocalProtocolError(
                        f"prompt block type {kind!r} is none the agent can accept (C5)"
                    )
                need = _PROMPT_BLOCK_TYPES[kind]
                name = f"{kind!r} blocks"
            else:
                need = _PROMPT_CAPABILITY.get(type(block))
                name = type(block).__name__
            if need is not None and getattr(caps, need, None) in (None, UNSET):
                raise LocalProtocolError(
                    f"the agent does not accept {name} in prompts"
                    f" (session.prompt.{need} not advertised, C5)"
                )

    def roots(self, cwd: str, additional: Iterable[str] | None) -> None:
        """C6: absolute paths only; additional directories only if advertised."""
        extra = [] if additional is None else list(additional)
        for path in (cwd, *extra):
            if not isinstance(path, str):
                raise TypeError(f"a directory is a str path, not {type(path).__name__}")
            if relative_path(path):
                raise LocalProtocolError(f"{path!r} is not an absolute path (C6)")
        if extra and self._offer.answered:
            session = getattr(self._offer.agent_capabilities, "session", None)
            if getattr(session, "additional_directories", None) in (None, UNSET):
                raise LocalProtocolError(
                    "the agent does not advertise session.additionalDirectories (C6)"
                )

    def config_value(self, session_id: str, config_id: str, value: str | bool) -> None:
        """C21: a value the session's option lists (when it lists options)."""
        if not isinstance(value, str | bool):
            raise TypeError(f"a config value is a str (a value id) or a bool, not {value!r}")
        session = self._sessions.get(session_id)
        _check_config_value(session.config_options if session else None, config_id, value)

    def cancel(self, session_id: str, what: Literal["tool call", "terminal"], ident: str) -> None:
        """C29: ``tool_call/cancel`` / ``terminal/cancel`` only while it advertises cancel.

        Raises:
            KeyError: no such session.
        """
        session = self._sessions[session_id]
        entity = (session.tool_calls if what == "tool call" else session.terminals).get(ident)
        if entity is None or not entity.cancellable:
            raise LocalProtocolError(f"{what} {ident!r} does not advertise cancel")

    def session_cancel(self, session_id: str) -> None:
        """``session/cancel`` (checked live only: P10 for a child)."""

    def cancel_request(self, request_id: RequestId) -> None:
        """``$/cancel_request`` only for one of the client's pending requests."""
        if request_id not in self._pending:
            raise LocalProtocolError(f"no pending request {request_id!r}")


class LivePreflight(Preflight):
    """The checks for a connection attached to an agent: the set-up rules too (C1, C4-C7)."""

    __slots__ = ()

    def request(self, method: str, params: Any) -> None:
        """Also: ``initialize`` first (C1); once answered, what it must offer (C4, C6, C7)."""
        offer = self._offer
        if method in _CHILD_RESTRICTED:
            self._check_not_child(method, session_id_of(params))
        if method == "initialize":
            super().request(method, params)
        elif not offer.initialize_sent:
            raise LocalProtocolError(f"{method}: send initialize before any other request (C1)")
        elif method in _GATED and offer.answered:
            self._check_offered(method, params)

    def _check_offered(self, method: str, params: Any) -> None:
        """C4, C6, C7: what the agent's initialize answer must offer (C3: omitted is no)."""
        session = getattr(self._offer.agent_capabilities, "session", None)
        if method in ("session/new", "session/resume"):
            servers = field(params, "mcp_servers", "mcpServers")
            if isinstance(servers, list):
                _check_mcp_transports(servers, getattr(session, "mcp", None))
        elif method == "session/delete":
            if getattr(session, "delete", None) in (None, UNSET):
                raise LocalProtocolError(
                    "session/delete: the agent does not advertise session.delete (C7)"
                )
        elif not self._offer.auth_methods:
            raise LocalProtocolError(f"{method}: the agent offered no authMethods (C4)")

    def _check_not_child(self, method: str, session_id: str | None) -> None:
        """P10: no client-initiated session mutation for a child session."""
        session = self._sessions.get(session_id) if session_id is not None else None
        if session is not None and session.tree.parent_id is not None:
            raise LocalProtocolError(
                f"{method}: {session_id!r} is a child session of"
                f" {session.tree.parent_id!r}; the client may not send that for it (P10)"
            )

    def session_cancel(self, session_id: str) -> None:
        """P10: ``session/cancel`` for a child only while its association allows it."""
        session = self._sessions.get(session_id)
        if session is None or session.tree.parent_id is None:
            return
        caps = (session.tree.subagent or {}).get("capabilities")
        if not isinstance(caps, dict) or not isinstance(caps.get("cancel"), dict):
            raise LocalProtocolError(
                f"session/cancel: child session {session_id!r} does not allow cancel"
                " (its subagent capabilities.cancel is unset, P10)"
            )

    def set_up(self, session_id: str) -> None:
        """C1 / the Prompt Lifecycle page: initialization and session setup come first."""
        if self._offer.protocol_version is None:
            raise LocalProtocolError("session/prompt before initialize succeeded (C1)")
        session = self._sessions.get(session_id)
        if session is not None and session.closed:
            raise LocalProtocolError(
                f"session {session_id!r} is closed: resume it (session/resume) before prompting"
            )
        if session is None or not session.announced:
            raise LocalProtocolError(
                f"session {session_id!r} is not set up: create it with session/new or resume"
                " it before prompting (C1)"
            )
