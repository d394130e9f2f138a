# Implements V1-TO-V2.md: the adapter that turns an ACP v1 JSON-RPC stream into the equivalent
# v2 stream the v2 connection consumes.
#
# Theory of operation. `V1Adapter.feed(direction, message)` takes one JSON-RPC object as seen on
# the wire ("incoming" = Agent -> client, "outgoing" = client -> Agent) and returns the v2
# JSON-RPC objects, with their directions, in the order the v2 connection must see them. It
# does no I/O and never raises on bad input: what it cannot translate passes through unchanged
# (the v2 side keeps it raw), with a diagnostic when the input broke a rule.
#
# What is synthesised, and where (section numbers of V1-TO-V2.md):
#   - message ids for id-less chunks, grouped per session by one "open message" (section 4);
#   - the user message of a prompt, inserted lazily at the first update after the request
#     (echo adoption, or a `user_message` at any other update / the result), followed by a
#     synthetic success response `{messageId}` and `state_update running` (section 5.2);
#   - `state_update idle` from the v1 prompt result (consumed) or from an error after insertion
#     (sections 5.3, 5.4); `requires_action` / `running` around permission requests (section 7);
#   - `session/load` becomes `session/resume` with `replayFrom: start`; load and resume results
#     are preceded by an `idle` snapshot (section 9);
#   - the mode config option standing for v1 modes (section 6.2);
#   - `terminal_update`s rebuilt from the client's answers to `terminal/*` calls (section 8).
# Provenance is never written into `_meta` or any protocol field.
"""The v1 adapter: a sans-IO transducer from an ACP v1 JSON-RPC stream to a v2 stream."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from . import _schema as s
from . import _v1_translate as tr
from ._codec import convert
from ._diagnostics import Diagnostic, Severity
from ._errors import LocalProtocolError, RemoteProtocolError
from ._v1_detect import detect_v1

__all__ = ["Direction", "V1Adapter", "detect_v1"]

Direction = Literal["incoming", "outgoing"]
"""``"incoming"``: Agent -> client; ``"outgoing"``: client -> Agent."""

JSON = Any
Message = dict[str, Any]
Output = list[tuple[str, Any]]
"""``(direction, message)`` pairs: plain JSON-RPC dicts, or a Struct notification that keeps an
update the v2 reducer must not interpret (V1-TO-V2 3.2: "passed through as an unknown v2
variant")."""

# Draft v1 variants: the same shapes in v2, but only with the draft surface enabled.
_DRAFT_VARIANTS = frozenset(
    {"plan_update", "plan_removed", "subagent_update", "session_message", "session_message_chunk"}
)
# Every name v2 gives an update variant (stable and draft): one v1 lacks is wrapped raw.
_V2_VARIANTS = (
    frozenset(
        cls.__struct_config__.tag
        for cls in s.KNOWN_SESSION_UPDATES
        if hasattr(cls, "__struct_config__")
    )
    | _DRAFT_VARIANTS
)
# V1-TO-V2 3.2: the v1 variants the adapter translates or passes on as the same v2 variant;
# any other (v2-only names, draft variants without an opt-in, custom ones) is kept raw.
_V1_VARIANTS = frozenset(
    {
        "user_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
        "available_commands_update",
        "current_mode_update",
        "config_option_update",
        "session_info_update",
        "usage_update",
        "notice",
        "compaction_update",
        "compaction_summary_chunk",
    }
)

_ROLES = {"user_message_chunk": "user", "agent_message_chunk": "agent"}
_ROLES["agent_thought_chunk"] = "thought"


def _is_placeholder(item: JSON, terminal_id: str | None = None) -> bool:
    """Whether a translated content item stands in for a terminal with no traffic (3.4)."""
    return (
        isinstance(item, dict)
        and item.get("type") == "_acp_v1_terminal"
        and (terminal_id is None or item.get("terminalId") == terminal_id)
    )


def _key(request_id: JSON) -> str:
    """A hashable key for a JSON-RPC id (``1`` and ``"1"`` stay distinct)."""
    return json.dumps(request_id, sort_keys=True)


def _notification(method: str, params: JSON) -> Message:
    return {"jsonrpc": "2.0", "method": method, "params": params}


@dataclass
class _Turn:
    """One v1 `session/prompt` request, from the request to its answer."""

    request_id: JSON
    session_id: str
    prompt: JSON
    inserted: bool = False
    cancel_sent: bool = False
    closed: bool = False  # a session/close ended it (A18): its result adds nothing


@dataclass
class _Session:
    """What the adapter remembers about one session."""

    session_id: str
    open: tuple[str, str] | None = None  # (role, v2 messageId) of the open message
    minted: int = 0
    agent_ids: set[str] = field(default_factory=set)
    pending: _Turn | None = None  # prompt awaiting insertion
    active: dict[str, _Turn] = field(default_factory=dict)  # inserted, not ended
    state: str | None = None  # last foreground state the adapter emitted
    replaying: bool = False
    closed: bool = False
    titles: dict[str, JSON] = field(default_factory=dict)  # known tool calls -> title
    tool_meta: dict[str, JSON] = field(default_factory=dict)
    compaction_meta: dict[str, JSON] = field(default_factory=dict)
    info_meta: JSON = None
    permissions: set[str] = field(default_factory=set)  # pending permission request keys
    terminals: set[str] = field(default_factory=set)  # terminal ids with rebuilt data
    # what the terminal updates synthesised so far say of each terminal (merged snapshot)
    terminal_data: dict[str, dict[str, JSON]] = field(default_factory=dict)
    # terminals a load's replay reset on the v2 side: rebuilt again when next named
    stale_terminals: set[str] = field(default_factory=set)
    # tool calls whose latest content names a terminal without traffic yet: id -> content
    placeholders: dict[str, list[JSON]] = field(default_factory=dict)
    agent_options: list[JSON] | None = None
    modes: list[dict[str, JSON]] | None = None
    mode_current: str | None = None
    config_emitted: int = 0  # config_option_updates emitted (R50: a setup result yields)


def _valid_v2(value: JSON, tp: Any) -> bool:
    """Whether the v2 connection will accept ``value`` as ``tp`` (else it rejects it)."""
    try:
        convert(value, tp)
    except RemoteProtocolError:
        return False
    return True


class V1Adapter:
    """Translate one ACP v1 JSON-RPC stream into the v2 stream the v2 connection expects.

    Feed every message of the stream, in wire order, to :meth:`feed`; pass what it returns to
    the v2 connection in order. One adapter serves one connection (or one log); it is
    deterministic: the same input always yields the same output.

    Args:
        agent_only: the stream holds only Agent -> client traffic (degraded mode,
            V1-TO-V2.md section 9): ``running`` is synthesised at a session's first message
            chunk or tool-call update after its last ``idle``.
        unstable: the draft v2 surface is enabled: a v1 prompt result's ``usage`` is copied
            onto the synthesised ``idle`` update, and the draft update variants
            (``plan_update``, ``plan_removed``, ...) pass on as the same v2 variants; without
            it they are kept raw, like every variant v1 does not have.

    Attributes:
        diagnostics: problems found in the v1 input, in the order found.
        truncated_terminals: ``(sessionId, terminalId)`` pairs whose latest output snapshot
            the client reported as truncated at source (v2 has no field for it).
    """

    def __init__(self, *, agent_only: bool = False, unstable: bool = False) -> None:
        self.agent_only = agent_only
        self.unstable = unstable
        self.diagnostics: list[Diagnostic] = []
        self.truncated_terminals: set[tuple[str, str]] = set()
        self._sessions: dict[str, _Session] = {}
        self._sent: dict[str, tuple[str, JSON]] = {}  # client requests: key -> (method, params)
        # session/load and session/resume requests: key -> config_emitted when sent
        self._config_marks: dict[str, int] = {}
        self._received: dict[str, tuple[str, JSON]] = {}  # Agent requests awaiting answers
        self._turns: dict[str, _Turn] = {}
        self._line: int | None = None

    # --- public surface -----------------------------------------------------------------

    def feed(self, direction: str, message: Message, *, line: int | None = None) -> Output:
        """Translate one v1 JSON-RPC object; return the v2 objects with their directions.

        ``line`` (1-based log line) is stamped on the diagnostics this message causes.
        Messages passed through unchanged are returned as the same objects.
        """
        if direction not in ("incoming", "outgoing"):
            raise LocalProtocolError(
                f"direction must be 'incoming' or 'outgoing', not {direction!r}"
            )
        self._line = line
        raw: object = message  # callers may hand over anything decoded from a log line
        if not isinstance(raw, dict):
            self._diag("v1-message-invalid", "not a JSON-RPC object; passed through", "error")
            return [(direction, message)]
        if isinstance(message.get("method"), str):
            if "id" in message:
                return self._request(direction, message)
            return self._notification(direction, message)
        if "result" in message or "error" in message:
            return self._response(direction, message)
        return [(direction, message)]

    def finish(self) -> Output:
        """Flush at end of stream (nothing is held back today, so this returns ``[]``)."""
        return []

    # --- helpers ------------------------------------------------------------------------

    def _new_connection(self) -> None:
        """An ``initialize`` request starts a new connection: drop what the old one left.

        Requests left unanswered are dropped (LOG-FORMATS 1.10), so no prompt of the old
        connection is inserted later.
        """
        self._sent.clear()
        self._config_marks.clear()
        self._received.clear()
        self._turns.clear()
        for session in self._sessions.values():
            session.pending = None
            session.active.clear()
            session.permissions.clear()

    def _diag(
        self, code: str, text: str, severity: Severity = "warning", session_id: str | None = None
    ) -> None:
        self.diagnostics.append(
            Diagnostic(
                code=code, message=text, severity=severity, line=self._line, session_id=session_id
            )
        )

    def _session(self, session_id: JSON) -> _Session | None:
        if not isinstance(session_id, str):
            return None
        session = self._sessions.get(session_id)
        if session is None:
            session = self._sessions[session_id] = _Session(session_id)
        return session

    def _update(self, session: _Session, update: Message) -> tuple[str, Message]:
        params = {"sessionId": session.session_id, "update": update}
        return ("incoming", _notification("session/update", params))

    def _state(self, session: _Session, state: str, **extra: JSON) -> tuple[str, Message]:
        session.state = state
        if state == "idle":
            session.permissions.clear()
        return self._update(session, {"sessionUpdate": "state_update", "state": state, **extra})

    def _mint(self, session: _Session, role: str) -> str:
        session.minted += 1
        base = candidate = f"acp-v1:{role}:{session.minted}"
        k = 1
        while candidate in session.agent_ids:
            k += 1
            candidate = f"{base}:{k}"
        return candidate

    def _terminal_known(self, session: _Session) -> Callable[[str], bool]:
        return session.terminals.__contains__

    def _reporter(self, session: _Session) -> tr.Report:
        def report(code: str, text: str, path: str) -> None:
            self._diag(code, f"{text} (at `{path}`)", "warning", session.session_id)

        return report

    def _options(self, session: _Session) -> list[JSON]:
        agent = session.agent_options or []
        if session.mode_current is None or tr.has_real_mode_option(agent):
            return list(agent)
        return [*agent, tr.mode_option(session.mode_current, session.modes or [], agent)]

    # --- prompt insertion (section 5) -----------------------------------------------------

    def _insert(
        self, session: _Session, echo: Message | None = None, envelope: Message | None = None
    ) -> Output:
        """Insert the pending prompt (section 5.2).

        Emits the user message (or the adopted ``echo`` chunk, in its notification
        ``envelope``), the synthetic acceptance, then ``running``.
        """
        turn = session.pending
        assert turn is not None
        session.pending = None
        out: Output = []
        if echo is not None:
            message_id = echo.get("messageId")
            if isinstance(message_id, str):
                session.agent_ids.add(message_id)
            else:
                message_id = self._mint(session, "user")
            session.open = ("user", message_id)
            params = envelope["params"] if envelope is not None else {}
            update = {**echo, "messageId": message_id}
            notification = _notification("session/update", {**params, "update": update})
            out.append(("incoming", {**(envelope or {}), **notification}))
        else:
            message_id = self._mint(session, "user")
            session.open = None
            content = turn.prompt if isinstance(turn.prompt, list) else []
            update = {"sessionUpdate": "user_message", "messageId": message_id, "content": content}
            out.append(self._update(session, update))
        turn.inserted = True
        session.active[_key(turn.request_id)] = turn
        response = {"jsonrpc": "2.0", "id": turn.request_id, "result": {"messageId": message_id}}
        out.append(("incoming", response))
        out.append(self._state(session, "running"))
        return out

    def _end_turn(self, session: _Session, turn: _Turn) -> None:
        session.active.pop(_key(turn.request_id), None)
        session.open = None

    # --- requests -----------------------------------------------------------------------

    def _request(self, direction: str, message: Message) -> Output:
        method: str = message["method"]
        params = message.get("params")
        params_dict = params if isinstance(params, dict) else {}
        key = _key(message["id"])
        if direction == "incoming":
            self._received[key] = (method, params)
            if method == "session/request_permission":
                return self._permission(message, params_dict)
            return [(direction, message)]
        if method == "initialize":
            self._new_connection()
        self._sent[key] = (method, params)
        session = self._session(params_dict.get("sessionId"))
        if method == "initialize" and isinstance(params, dict):
            return [(direction, {**message, "params": tr.client_initialize_params(params)})]
        if method == "session/prompt" and session is not None:
            return self._prompt(session, message, params_dict)
        if method in ("session/new", "session/load", "session/resume"):
            fixed = tr.mcp_servers(params_dict)
            if session is not None and method != "session/new":
                session.closed = False  # loading or resuming a closed session opens it again
                self._config_marks[key] = session.config_emitted
                session.open = None
                session.pending = None  # after a load, no turn is in flight (section 9)
                session.active.clear()
            if method == "session/load" and session is not None:
                session.replaying = True
                session.titles.clear()
                session.tool_meta.clear()
                session.compaction_meta.clear()
                session.placeholders.clear()  # the replay drops the tool calls they name
                session.stale_terminals = set(session.terminal_data)  # and its terminals
                resume = {**fixed, "replayFrom": {"type": "start"}}
                return [(direction, {**message, "method": "session/resume", "params": resume})]
            if fixed is not params_dict:
                return [(direction, {**message, "params": fixed})]
        if method == "session/set_config_option" and "type" not in params_dict and params_dict:
            # v1 leaves out `type` for a select value (its default); v2 requires it.
            kind = "boolean" if isinstance(params_dict.get("value"), bool) else "id"
            return [(direction, {**message, "params": {**params_dict, "type": kind}})]
        return [(direction, message)]

    def _prompt(self, session: _Session, message: Message, params: dict[str, JSON]) -> Output:
        out: Output = []
        if session.pending is not None:
            out.extend(self._insert(session))
        session.open = None
        turn = _Turn(message["id"], session.session_id, params.get("prompt"))
        session.pending = turn
        self._turns[_key(message["id"])] = turn
        out.append(("outgoing", message))
        return out

    def _permission(self, message: Message, params: dict[str, JSON]) -> Output:
        session = self._session(params.get("sessionId"))
        if session is None:
            self._diag("v1-permission-invalid", "permission request without sessionId", "error")
            return [("incoming", message)]
        out: Output = []
        if session.pending is not None and not session.replaying:
            out.extend(self._insert(session))
        v2: dict[str, JSON] = {"sessionId": session.session_id}
        tool = params.get("toolCall")
        title: JSON = None
        if isinstance(tool, dict):
            tool = tr.strip_nulls(tool, self._terminal_known(session), self._reporter(session))
            title = self._track_tool(session, tool, full=False)
            v2["title"] = title if isinstance(title, str) else "Permission requested"
            v2["subject"] = {"type": "tool_call", "toolCall": tool}
        else:
            self._diag("v1-permission-invalid", "permission request without toolCall", "warning")
            v2["title"] = "Permission requested"
        v2.update({k: v for k, v in params.items() if k not in ("sessionId", "toolCall")})
        if not _valid_v2(v2, s.RequestPermissionRequest):
            # v1 allows what v2 does not (no options, say), so the request itself is rejected
            # (with its line) and nothing waits on it. Its tool call is still the Agent's
            # news: applied on its own (7).
            if isinstance(tool, dict):
                update = {**tool, "sessionUpdate": "tool_call_update"}
                out.append(self._update(session, update))
            out.append(("incoming", {**message, "params": v2}))
            return out
        out.append(("incoming", {**message, "params": v2}))
        if session.active and not session.replaying:
            session.permissions.add(_key(message["id"]))
            if session.state != "requires_action":
                out.append(self._state(session, "requires_action"))
        return out

    def _track_tool(self, session: _Session, tool: dict[str, JSON], *, full: bool) -> JSON:
        """Remember a tool call's title and `_meta`; set `_meta` on ``tool``; return the title."""
        tool_id = tool.get("toolCallId")
        if not isinstance(tool_id, str):
            return tool.get("title")
        stored = session.tool_meta.get(tool_id)
        if full:
            patch, session.tool_meta[tool_id] = tr.meta_replacement(
                stored, tool.get("_meta", tr.MISSING), full=True
            )
            tool["_meta"] = patch
        elif "_meta" in tool:
            session.tool_meta[tool_id] = tr.meta_stored_after_patch(stored, tool["_meta"])
        content = tool.get("content")
        if "content" in tool or full:
            if isinstance(content, list) and any(map(_is_placeholder, content)):
                session.placeholders[tool_id] = content
            else:
                session.placeholders.pop(tool_id, None)
        title = tool.get("title", tr.MISSING)
        if isinstance(title, str) or title is None:  # null clears the stored title
            session.titles[tool_id] = title
        else:  # omitted, or invalid (read as omitted): the stored title stays
            session.titles.setdefault(tool_id, None)
        return session.titles[tool_id]

    # --- notifications ------------------------------------------------------------------

    def _notification(self, direction: str, message: Message) -> Output:
        method: str = message["method"]
        params = message.get("params")
        params_dict = params if isinstance(params, dict) else {}
        if direction == "outgoing":
            if method == "session/cancel":
                session = self._session(params_dict.get("sessionId"))
                if session is not None:
                    for turn in [session.pending, *session.active.values()]:
                        if turn is not None:
                            turn.cancel_sent = True
            return [(direction, message)]
        if method != "session/update":
            return [(direction, message)]
        session = self._session(params_dict.get("sessionId"))
        update = params_dict.get("update")
        if session is None or not isinstance(update, dict):
            self._diag("v1-update-invalid", "session/update without sessionId or update", "error")
            return [(direction, message)]
        kind = update.get("sessionUpdate")
        if not isinstance(kind, str):  # no update of either version: v2 rejects it, kept raw
            return [(direction, message)]
        out: Output = []
        if session.pending is not None and not session.replaying:
            if kind == "user_message_chunk":
                return self._insert(session, echo=update, envelope=message)
            out.extend(self._insert(session))
        if (
            self.agent_only
            and not session.replaying
            and session.state in (None, "idle")
            and (kind in _ROLES or kind in ("tool_call", "tool_call_update"))
        ):
            out.append(self._state(session, "running"))
        if kind not in _V1_VARIANTS and not (self.unstable and kind in _DRAFT_VARIANTS):
            # Unknown to v1: kept verbatim, even under a name v2 knows (V1-TO-V2 3.2).
            meta = params_dict.get("_meta", s.UNSET)
            if isinstance(kind, str) and kind not in _V2_VARIANTS and meta is s.UNSET:
                out.append((direction, message))  # unknown to v2 too: passed on as it is
                return out
            if meta is not None and not isinstance(meta, dict):
                meta = s.UNSET
            raw = s.UpdateSessionNotification(
                session_id=session.session_id, update=update, meta=meta
            )
            out.append((direction, s.Notification(method="session/update", params=raw)))
            return out
        translated = self._translate_update(session, update)
        if translated is update:
            out.append((direction, message))
        elif translated is not None:
            out.append(("incoming", {**message, "params": {**params_dict, "update": translated}}))
        if session.stale_terminals and kind in ("tool_call", "tool_call_update"):
            out.extend(self._rebuild_terminals(session, translated))
        return out

    def _rebuild_terminals(self, session: _Session, tool: Message | None) -> Output:
        """A terminal a load's replay reset on the v2 side, named again: its data again (3.4).

        The v2 replay starts the session's terminals afresh, but the adapter still has what
        the earlier ``terminal/*`` traffic said; without it the reference would name a v2
        terminal with no data.
        """
        content = tool.get("content") if isinstance(tool, dict) else None
        out: Output = []
        for item in content if isinstance(content, list) else ():
            if not isinstance(item, dict) or item.get("type") != "terminal":
                continue
            terminal_id = item.get("terminalId")
            if isinstance(terminal_id, str) and terminal_id in session.stale_terminals:
                session.stale_terminals.discard(terminal_id)
                data = session.terminal_data[terminal_id]
                update = {"sessionUpdate": "terminal_update", "terminalId": terminal_id, **data}
                out.append(self._update(session, update))
        return out

    def _translate_update(self, session: _Session, update: Message) -> Message | None:
        """The v2 update for one v1 update (``update`` itself if unchanged, ``None`` if none)."""
        kind = update.get("sessionUpdate")
        known = self._terminal_known(session)
        report = self._reporter(session)
        if isinstance(kind, str) and kind in _ROLES:
            return self._chunk(session, _ROLES[kind], update)
        if kind == "tool_call":
            session.open = None
            tool = tr.tool_call_full(update, known, report)
            self._track_tool(session, tool, full=True)
            return tool
        if kind == "tool_call_update":
            tool_id = update.get("toolCallId")
            if isinstance(tool_id, str) and tool_id not in session.titles:
                session.open = None  # an unseen tool call (v2 rejects one without a string id)
            tool = tr.strip_nulls(update, known, report)
            self._track_tool(session, tool, full=False)
            return tool
        if kind == "plan":
            return tr.plan_update(update, report)
        if kind == "available_commands_update":
            return {**update, "availableCommands": tr.commands(update.get("availableCommands"))}
        if kind == "current_mode_update":
            mode = update.get("currentModeId", update.get("modeId"))
            if not isinstance(mode, str):
                self._diag("v1-mode-invalid", "current_mode_update without a mode id", "error")
                return update
            return self._set_mode(session, mode)
        if kind == "config_option_update":
            if not isinstance(update.get("configOptions"), list):
                return update  # the v2 side rejects it, as it would a v2 one
            session.agent_options = tr.config_options(update["configOptions"])
            return {**update, **self._config_update(session)}
        if kind == "session_info_update":
            patch, session.info_meta = tr.meta_replacement(
                session.info_meta, update.get("_meta", tr.MISSING), full=False
            )
            return self._with_meta(update, patch)
        if kind in ("compaction_update", "compaction_summary_chunk"):
            compaction_id = update.get("compactionId")
            if isinstance(compaction_id, str):
                if compaction_id not in session.compaction_meta:
                    session.open = None
                    session.compaction_meta[compaction_id] = None
                if kind == "compaction_update":
                    patch, session.compaction_meta[compaction_id] = tr.meta_replacement(
                        session.compaction_meta[compaction_id],
                        update.get("_meta", tr.MISSING),
                        full=False,
                    )
                    return self._with_meta(update, patch)
        return update

    @staticmethod
    def _with_meta(update: Message, patch: JSON) -> Message:
        if patch is tr.MISSING:
            return update
        return {**update, "_meta": patch}

    def _chunk(self, session: _Session, role: str, update: Message) -> Message:
        message_id = update.get("messageId")
        if isinstance(message_id, str):
            # 4.2: it closes the open message unless it continues it (an adopted echo, 5.2);
            # the next id-less chunk starts a new one (4.3).
            session.agent_ids.add(message_id)
            if session.open != (role, message_id):
                session.open = None
            return update
        if message_id is not None:
            self._diag(
                "v1-message-id-invalid",
                "non-string messageId ignored",
                "warning",
                session.session_id,
            )
        if session.open is not None and session.open[0] == role:
            message_id = session.open[1]
        else:
            message_id = self._mint(session, role)
            session.open = (role, message_id)
        return {**update, "messageId": message_id}

    def _set_mode(self, session: _Session, mode: str) -> Message | None:
        """Record the current v1 mode; the `config_option_update` to emit, if any."""
        session.mode_current = mode
        modes = session.modes = session.modes if session.modes is not None else []
        if not any(value.get("value") == mode for value in modes):
            modes.append({"value": mode, "name": mode})
        if tr.has_real_mode_option(session.agent_options or []):
            return None
        return self._config_update(session)

    def _config_update(self, session: _Session) -> Message:
        """The complete option list, as the `config_option_update` to emit."""
        session.config_emitted += 1
        return {"sessionUpdate": "config_option_update", "configOptions": self._options(session)}

    # --- responses ------------------------------------------------------------------------

    def _response(self, direction: str, message: Message) -> Output:
        key = _key(message.get("id"))
        if direction == "outgoing":
            method, params = self._received.pop(key, (None, None))
            return self._answer(message, method, params if isinstance(params, dict) else {})
        sent = self._sent.pop(key, None)
        if sent is None:
            return self._unmatched(message)
        method, params = sent
        params_dict = params if isinstance(params, dict) else {}
        session = self._session(params_dict.get("sessionId"))
        result = message.get("result")
        ok = "error" not in message
        if method == "session/prompt" and key in self._turns:
            return self._prompt_answer(message, self._turns.pop(key))
        if method == "initialize" and ok and isinstance(result, dict):
            return [(direction, {**message, "result": tr.initialize_result(result)})]
        if method == "session/new" and ok and isinstance(result, dict):
            new = self._session(result.get("sessionId"))
            out: Output = [(direction, {**message, "result": self._setup(new, result, 0)})]
            return out + self._raced(new, 0)
        if method in ("session/load", "session/resume") and session is not None:
            mark = self._config_marks.pop(key, session.config_emitted)
            session.replaying = False
            session.open = None
            if not ok:
                return [(direction, message)]
            snapshot = self._state(session, "idle")
            setup = self._setup(session, result if isinstance(result, dict) else {}, mark)
            return [
                snapshot,
                (direction, {**message, "result": setup}),
                *self._raced(session, mark),
            ]
        if method == "session/set_mode" and ok and session is not None:
            mode = params_dict.get("modeId")
            update = self._set_mode(session, mode) if isinstance(mode, str) else None
            if update is None:
                return [(direction, message)]
            return [(direction, message), self._update(session, update)]
        if (
            method == "session/set_config_option"
            and session is not None
            and isinstance(result, dict)
            and isinstance(result.get("configOptions"), list)
        ):
            session.agent_options = tr.config_options(result["configOptions"])
            fixed = {**result, "configOptions": self._options(session)}
            return [(direction, {**message, "result": fixed})]
        if method == "session/close" and session is not None:
            error = message.get("error")
            if not ok and not (isinstance(error, dict) and error.get("code") == -32002):
                return [(direction, message)]
            # v1 may answer the close before the prompts it cancelled; in v2 the work ends
            # with idle `cancelled` before the close succeeds (-32002 counts as success, C9),
            # held prompts are answered, and nothing follows (A18).
            ended: Output = []
            for turn in [*session.active.values(), session.pending]:
                if turn is not None:
                    turn.closed = True
            session.pending = None
            session.active.clear()  # nothing of them runs on: a later request starts no work
            if session.state in ("running", "requires_action"):
                ended.append(self._state(session, "idle", stopReason="cancelled"))
            session.closed = True
            return [*ended, (direction, message)]
        return [(direction, message)]

    def _setup(
        self, session: _Session | None, result: dict[str, JSON], mark: int | None = None
    ) -> dict[str, JSON]:
        """A v1 `session/new` / `load` / `resume` result in v2 shape (modes -> config option).

        ``mark`` is the count of option lists emitted when the request was sent; when more
        were emitted since (a mode or option update raced the result), what they said is
        newer and stays (R50), and the result adds the mode names only it knows.
        """
        out = {k: v for k, v in result.items() if k != "modes"}
        if "availableCommands" in out:
            out["availableCommands"] = tr.commands(out["availableCommands"])
        if session is None:
            return out
        raced = mark is not None and session.config_emitted > mark
        modes = result.get("modes")
        options = result.get("configOptions")
        if not raced or (isinstance(options, list) and session.agent_options is None):
            session.agent_options = tr.config_options(options)
        modes = modes if isinstance(modes, dict) else {}
        current = modes.get("currentModeId")
        if isinstance(current, str):
            listed = tr.modes_list(modes.get("availableModes"))
            if raced and session.mode_current is not None:
                known = {value.get("value") for value in listed}
                listed += [v for v in session.modes or [] if v.get("value") not in known]
                current = session.mode_current  # the update's value is the newer one
            session.modes = listed
            session.mode_current = current
        elif not raced:
            session.modes = session.mode_current = None
        if isinstance(current, str) or isinstance(options, list):
            out["configOptions"] = self._options(session)
        return out

    def _raced(self, session: _Session | None, mark: int) -> Output:
        """After a setup result an option update raced: the complete list, as an update.

        The v2 side keeps the raced update's list over the result's (R50), so what only the
        result told (the mode names, say) would otherwise be lost.
        """
        if session is None or session.config_emitted <= mark:
            return []
        return [self._update(session, self._config_update(session))]

    def _prompt_answer(self, message: Message, turn: _Turn) -> Output:
        session = self._sessions[turn.session_id]
        if "error" in message:
            if not turn.inserted:
                if session.pending is turn:
                    session.pending = None
                session.open = None
                return [("incoming", message)]
            self._end_turn(session, turn)
            if turn.closed:
                return []  # the close ended the work already (A18)
            if turn.cancel_sent:
                return [self._state(session, "idle", stopReason="cancelled")]
            return [self._state(session, "idle", stopReason="error", error=message["error"])]
        if turn.closed and not turn.inserted:
            # Held when the session closed: v2 answers such a prompt -32800, never inserted.
            error = {"code": -32800, "message": "the session was closed before the prompt ran"}
            return [("incoming", {"jsonrpc": "2.0", "id": message["id"], "error": error})]
        out: Output = []
        if not turn.inserted and session.pending is turn:
            out.extend(self._insert(session))
        self._end_turn(session, turn)
        if not turn.closed:  # else the close ended the work already (A18)
            out.append(self._idle_from_result(session, message.get("result")))
        return out

    def _idle_from_result(self, session: _Session, result: JSON) -> tuple[str, Message]:
        extra: dict[str, JSON] = {}
        result = result if isinstance(result, dict) else {}
        if isinstance(result.get("stopReason"), str):
            extra["stopReason"] = result["stopReason"]
        else:
            self._diag(
                "v1-stop-reason-missing",
                "prompt result without stopReason",
                "warning",
                session.session_id,
            )
        if self.unstable and "usage" in result:
            extra["usage"] = result["usage"]
        return self._state(session, "idle", **extra)

    def _unmatched(self, message: Message) -> Output:
        """An Agent response whose request is not in the stream (degraded mode, section 9).

        A prompt result is attributed when exactly one session is open. A result that looks
        like a `session/new` one is kept raw, but its modes and options are remembered so later
        mode updates produce complete option lists.
        """
        result = message.get("result")
        if not (isinstance(result, dict) and "stopReason" in result):
            if isinstance(result, dict) and ("modes" in result or "configOptions" in result):
                self._setup(self._session(result.get("sessionId")), result)
            return [("incoming", message)]
        open_sessions = [one for one in self._sessions.values() if not one.closed]
        if len(open_sessions) != 1:
            self._diag(
                "v1-prompt-result-unattributed",
                "prompt result without its request cannot be attributed to one session; kept raw",
                "error",
            )
            return [("incoming", message)]
        session = open_sessions[0]
        session.open = None
        return [self._idle_from_result(session, result)]

    def _answer(self, message: Message, method: str | None, params: dict[str, JSON]) -> Output:
        """The client's answer to an Agent request, plus what it synthesises."""
        out: Output = [("outgoing", message)]
        session = self._session(params.get("sessionId"))
        result = message.get("result")
        if session is None or method is None:
            return out
        if method == "session/request_permission":
            session.permissions.discard(_key(message.get("id")))
            if not session.permissions and session.state == "requires_action" and session.active:
                out.append(self._state(session, "running"))
            return out
        if not isinstance(result, dict) or "error" in message:
            return out
        update, truncated = tr.terminal_update(method, params, result)
        if update is None:
            return out
        pair = (session.session_id, update["terminalId"])
        if truncated is True:
            self.truncated_terminals.add(pair)
        elif truncated is False:
            self.truncated_terminals.discard(pair)
        terminal_id = update["terminalId"]
        first = terminal_id not in session.terminals
        session.terminals.add(terminal_id)
        data = session.terminal_data.setdefault(terminal_id, {})
        data.update((k, v) for k, v in update.items() if k not in ("sessionUpdate", "terminalId"))
        if terminal_id in session.stale_terminals:  # reset by a replay: all it knows, again
            session.stale_terminals.discard(terminal_id)
            update = {"sessionUpdate": "terminal_update", "terminalId": terminal_id, **data}
        out.append(self._update(session, update))
        if first:
            out.extend(self._link_terminal(session, terminal_id))
        return out

    def _link_terminal(self, session: _Session, terminal_id: str) -> Output:
        """Traffic for a terminal a tool call named before it: the reference, after all (3.4).

        The custom ``_acp_v1_terminal`` item stands in only while the log has no traffic for
        that terminal; once it has, each tool call still naming it gets its content again
        with a v2 terminal reference in its place.
        """
        out: Output = []
        for tool_id, content in list(session.placeholders.items()):
            if not any(_is_placeholder(item, terminal_id) for item in content):
                continue
            fixed = [
                {**item, "type": "terminal"} if _is_placeholder(item, terminal_id) else item
                for item in content
            ]
            update = {"sessionUpdate": "tool_call_update", "toolCallId": tool_id, "content": fixed}
            self._track_tool(session, update, full=False)
            out.append(self._update(session, update))
        return out
