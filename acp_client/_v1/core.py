# Owns the v1 adapter's shared machinery (V1-TO-V2.md): diagnostics, the per-session state
# lookup, synthesised updates and states, synthetic message ids (section 4), prompt insertion
# (section 5.2), tool-call tracking (6.3, 3.4) and the synthetic mode option (6.2). The rules
# for updates (`updates.py`) and responses (`responses.py`) build on it.
"""The v1 adapter's core: state and the helpers every rule uses."""

from __future__ import annotations

from collections.abc import Callable

from .._diagnostics import Diagnostic, Severity
from . import translate as tr
from .state import (
    JSON,
    Message,
    Output,
    SessionState,
    Turn,
    id_key,
    is_placeholder,
    make_notification,
)


class AdapterCore:
    """State and shared helpers of :class:`~acp_client.v1.V1Adapter` (see there)."""

    def __init__(self, *, agent_only: bool = False, unstable: bool = False) -> None:
        self.agent_only = agent_only
        self.unstable = unstable
        self.diagnostics: list[Diagnostic] = []
        self.truncated_terminals: set[tuple[str, str]] = set()
        self._sessions: dict[str, SessionState] = {}
        self._sent: dict[str, tuple[str, JSON]] = {}  # client requests: key -> (method, params)
        # session/load and session/resume requests: key -> config_emitted when sent
        self._config_marks: dict[str, int] = {}
        self._received: dict[str, tuple[str, JSON]] = {}  # Agent requests awaiting answers
        self._turns: dict[str, Turn] = {}
        self._line: int | None = None

    @property
    def awaiting_insertion(self) -> bool:
        """Whether a prompt was sent that no update has inserted yet (section 5.2)."""
        return any(session.pending is not None for session in self._sessions.values())

    def _diag(
        self, code: str, text: str, severity: Severity = "warning", session_id: str | None = None
    ) -> None:
        self.diagnostics.append(
            Diagnostic(
                code=code, message=text, severity=severity, line=self._line, session_id=session_id
            )
        )

    def _session(self, session_id: JSON) -> SessionState | None:
        if not isinstance(session_id, str):
            return None
        session = self._sessions.get(session_id)
        if session is None:
            session = self._sessions[session_id] = SessionState(session_id)
        return session

    def _update(self, session: SessionState, update: Message) -> tuple[str, Message]:
        params = {"sessionId": session.session_id, "update": update}
        return ("incoming", make_notification("session/update", params))

    def _state(self, session: SessionState, state: str, **extra: JSON) -> tuple[str, Message]:
        session.state = state
        if state == "idle":
            session.permissions.clear()
        return self._update(session, {"sessionUpdate": "state_update", "state": state, **extra})

    def _mint(self, session: SessionState, role: str) -> str:
        session.minted += 1
        base = candidate = f"acp-v1:{role}:{session.minted}"
        k = 1
        while candidate in session.agent_ids:
            k += 1
            candidate = f"{base}:{k}"
        return candidate

    def _terminal_known(self, session: SessionState) -> Callable[[str], bool]:
        return session.terminals.__contains__

    def _reporter(self, session: SessionState) -> tr.Report:
        def report(code: str, text: str, path: str) -> None:
            self._diag(code, f"{text} (at `{path}`)", "warning", session.session_id)

        return report

    def _options(self, session: SessionState) -> list[JSON]:
        agent = session.agent_options or []
        if session.mode_current is None or tr.has_real_mode_option(agent):
            return list(agent)
        return [*agent, tr.mode_option(session.mode_current, session.modes or [], agent)]

    def _insert(
        self, session: SessionState, echo: Message | None = None, envelope: Message | None = None
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
            notification = make_notification("session/update", {**params, "update": update})
            out.append(("incoming", {**(envelope or {}), **notification}))
        else:
            message_id = self._mint(session, "user")
            session.open = None
            content = turn.prompt if isinstance(turn.prompt, list) else []
            update = {"sessionUpdate": "user_message", "messageId": message_id, "content": content}
            out.append(self._update(session, update))
        turn.inserted = True
        session.active[id_key(turn.request_id)] = turn
        response = {"jsonrpc": "2.0", "id": turn.request_id, "result": {"messageId": message_id}}
        out.append(("incoming", response))
        out.append(self._state(session, "running"))
        return out

    def _end_turn(self, session: SessionState, turn: Turn) -> None:
        session.active.pop(id_key(turn.request_id), None)
        session.open = None

    def _track_tool(self, session: SessionState, tool: dict[str, JSON], *, full: bool) -> JSON:
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
            if isinstance(content, list) and any(map(is_placeholder, content)):
                session.placeholders[tool_id] = content
            else:
                session.placeholders.pop(tool_id, None)
        title = tool.get("title", tr.MISSING)
        if isinstance(title, str) or title is None:  # null clears the stored title
            session.titles[tool_id] = title
        else:  # omitted, or invalid (read as omitted): the stored title stays
            session.titles.setdefault(tool_id, None)
        return session.titles[tool_id]

    @staticmethod
    def _with_meta(update: Message, patch: JSON) -> Message:
        if patch is tr.MISSING:
            return update
        return {**update, "_meta": patch}

    def _set_mode(self, session: SessionState, mode: str) -> Message | None:
        """Record the current v1 mode; the `config_option_update` to emit, if any."""
        session.mode_current = mode
        modes = session.modes = session.modes if session.modes is not None else []
        if not any(value.get("value") == mode for value in modes):
            modes.append({"value": mode, "name": mode})
        if tr.has_real_mode_option(session.agent_options or []):
            return None
        return self._config_update(session)

    def _config_update(self, session: SessionState) -> Message:
        """The complete option list, as the `config_option_update` to emit."""
        session.config_emitted += 1
        return {"sessionUpdate": "config_option_update", "configOptions": self._options(session)}
