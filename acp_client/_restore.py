"""Restoring a snapshot into a live connection: the state goes on where it stopped (R90-R92).

Owns what ``Connection.restore`` does with an ``acp-client/snapshot@1`` document (SNAPSHOT.md)
beyond rebuilding each session (:func:`._snapshot.load_session` does that): the sessions join
the connection's registry (and its session tree), the diagnostics come back, the handshake is
taken as done (the negotiated protocol version, and what an ``initialize`` result the host
kept offers), the client's next request ids come after every id the snapshot names, and the
requests of the old connection are marked for what they are now:

* R90: a prompt restored ``pending`` has an unknown outcome (``PromptState.outcome_unknown``,
  10.5 ``uncertain``); a restored accepted prompt is linked to its ``messageId`` as before
  (a later user message echoes it) and its turn is the current work's or one already ended.
* R91: a permission request restored ``pending`` is stale (``PermissionState.stale``): the
  agent that asked went with the old connection; it cannot be answered.
* R92: the first ``initialize`` sent after the restore starts a new connection (1.4).

Nothing here reads the wire: the v1 adapter's part of a restore is :mod:`._v1.restore`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec import UNSET

from . import _schema as s
from ._codec import convert
from ._context import Context
from ._diagnostics import Diagnostic
from ._errors import RemoteProtocolError
from ._prompts import PromptState
from ._session import Session
from ._snapshot import FORMAT, load_session

__all__ = ["restore_into"]

_SEVERITIES = ("warning", "error")


def restore_into(
    ctx: Context,
    data: Any,
    initialize_result: s.InitializeResponse | dict[str, Any] | None,
    client_capabilities: s.ClientCapabilities | None,
) -> int | None:
    """Load the snapshot ``data`` into the fresh connection ``ctx``; return its protocol version.

    Raises:
        ValueError: ``data`` is no ``acp-client/snapshot@1`` document, or an
            ``initialize_result`` that is no ``initialize`` result; the message names where
            (``sessions[1]: at `timeline[3]`: ...``).
    """
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        raise ValueError(f"not an {FORMAT} document: `format` is not {FORMAT!r}")
    sessions = data.get("sessions")
    notes = data.get("diagnostics", [])
    if not isinstance(sessions, list) or not isinstance(notes, list):
        raise ValueError("not a snapshot document: `sessions` and `diagnostics` are arrays")
    registry = ctx.sessions
    loaded: list[Session] = []
    for i, item in enumerate(sessions):
        try:
            session = load_session(
                item,
                terminal_limit=registry.terminal_limit,
                block_limit=registry.block_limit,
                unstable=registry.unstable,
                diagnostics=ctx.notes.diagnostics,
            )
            registry.adopt(session)
        except ValueError as exc:
            raise ValueError(f"sessions[{i}]: {exc}") from exc
        loaded.append(session)
    for i, note in enumerate(notes):
        ctx.notes.diagnostics.append(_diagnostic(note, i))
    version = _handshake(ctx, loaded, initialize_result, client_capabilities)
    top = -1
    for session in loaded:
        top = max(top, _requests(ctx, session))
        if session.tree.replay is not None or session.tree.parent_id is not None:
            registry.forest.preview = True  # it spoke the Preview (X0)
    ctx.rpc.next_id = top + 1
    return version


def _diagnostic(data: Any, index: int) -> Diagnostic:
    """A DIAGNOSTIC object back as a :class:`Diagnostic`."""
    ok = (
        isinstance(data, dict)
        and isinstance(data.get("code"), str)
        and isinstance(data.get("message"), str)
        and data.get("severity", "warning") in _SEVERITIES
        and (data.get("line") is None or type(data.get("line")) is int)
    )
    if not ok:
        raise ValueError(f"diagnostics[{index}]: not a DIAGNOSTIC object")
    return Diagnostic(
        code=data["code"],
        message=data["message"],
        severity=data.get("severity", "warning"),
        line=data.get("line"),
    )


def _handshake(
    ctx: Context,
    sessions: list[Session],
    initialize_result: s.InitializeResponse | dict[str, Any] | None,
    client_capabilities: s.ClientCapabilities | None,
) -> int | None:
    """The handshake, taken as done: the version the sessions (or the result) name (R92)."""
    offer = ctx.offer
    offer.restored = True
    versions = {one.protocol_version for one in sessions} - {None}
    version = versions.pop() if len(versions) == 1 else None
    if initialize_result is not None:
        try:
            result = convert(initialize_result, s.InitializeResponse)
        except RemoteProtocolError as exc:
            raise ValueError(f"initialize_result: {exc.message} at `{exc.path}`") from exc
        version = result.protocol_version
        offer.agent_info = result.info
        caps = result.capabilities
        offer.agent_capabilities = caps if isinstance(caps, s.AgentCapabilities) else None
        methods = result.auth_methods
        offer.auth_methods = list(methods) if isinstance(methods, list) else []
    offer.protocol_version = version
    offer.initialize_sent = offer.answered = version is not None
    if client_capabilities is not None:
        offer.elicitation = client_capabilities.elicitation not in (None, UNSET)
        session_caps = getattr(client_capabilities, "session", None)
        suggestions = getattr(session_caps, "prompt_suggestions", None)
        offer.offers_suggestions = suggestions not in (None, UNSET)
        ctx.sessions.forest.preview |= session_caps not in (None, UNSET)
    return version


def _requests(ctx: Context, session: Session) -> int:
    """The session's prompts (R90) and permission requests (R91); the highest client id."""
    top = -1
    tl, fg = session.parts()
    busy = fg.state is not None and fg.state.state != "idle"
    where = {id(entry): index for index, entry in enumerate(tl.entries)}
    for prompt in session.prompts:
        for rid in [prompt.request_id, *(a.request_id for a in prompt.attempts or ())]:
            ctx.prompts[rid] = prompt  # a later request under a used id wins, as live
            if type(rid) is int:
                top = max(top, rid)
        if prompt.status == "pending":
            prompt.outcome_unknown = True
        elif prompt.status == "accepted":
            _turn(session, prompt, busy, fg.turn_start, where)
    for perm in session.permission_requests:
        perm.stale = perm.status == "pending"
    replay = session.tree.replay
    if replay is not None and type(replay.request_id) is int:
        top = max(top, replay.request_id)
    return top


def _turn(
    session: Session, prompt: PromptState, busy: bool, start: int, where: dict[int, int]
) -> None:
    """R90: an accepted prompt's turn is the current work's, or one the snapshot ended.

    Its turn is the next to complete when the session has no state yet, when its message
    is awaited (not echoed; while idle, only if it has a ``messageId`` to be echoed by), or
    when the session works and its message is at or after where the current work starts.
    Otherwise its turn ended before the snapshot, with a stop reason the snapshot does not
    tie to it (``turns_before`` ``-1``).
    """
    completed = len(session.completed_turns)
    echo = session.message("user", prompt.message_id) if prompt.message_id else None
    if echo is None:  # awaiting its echo: while idle, only one it can link to (not R8's)
        current = busy or prompt.message_id is not None
    else:
        current = busy and where.get(id(echo), -1) >= start
    current = current or session.state is None
    prompt.turns_before = completed if current else -1
    if current and not busy:
        session.prompt_accepted(None)  # its work is awaited (R49)
