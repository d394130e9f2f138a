# Owns the v1 adapter's response rules (V1-TO-V2.md sections 5.3, 5.4, 6.2, 8, 9): prompt
# results end turns, setup results carry the mode option, the client's answers to terminal
# calls become terminal updates, and responses without their request are attributed.
"""The v1 adapter's rules for responses, in both directions."""

from __future__ import annotations

from . import translate as tr
from .core import AdapterCore
from .state import JSON, Message, Output, SessionState, Turn, id_key, is_placeholder


class ResponseRules(AdapterCore):
    """How :class:`~acp_client.v1.V1Adapter` translates responses."""

    def _response(self, direction: str, message: Message) -> Output:
        key = id_key(message.get("id"))
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
        self, session: SessionState | None, result: dict[str, JSON], mark: int | None = None
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

    def _raced(self, session: SessionState | None, mark: int) -> Output:
        """After a setup result an option update raced: the complete list, as an update.

        The v2 side keeps the raced update's list over the result's (R50), so what only the
        result told (the mode names, say) would otherwise be lost.
        """
        if session is None or session.config_emitted <= mark:
            return []
        return [self._update(session, self._config_update(session))]

    def _prompt_answer(self, message: Message, turn: Turn) -> Output:
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

    def _idle_from_result(self, session: SessionState, result: JSON) -> tuple[str, Message]:
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
            session.permissions.discard(id_key(message.get("id")))
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

    def _link_terminal(self, session: SessionState, terminal_id: str) -> Output:
        """Traffic for a terminal a tool call named before it: the reference, after all (3.4).

        The custom ``_acp_v1_terminal`` item stands in only while the log has no traffic for
        that terminal; once it has, each tool call still naming it gets its content again
        with a v2 terminal reference in its place.
        """
        out: Output = []
        for tool_id, content in list(session.placeholders.items()):
            if not any(is_placeholder(item, terminal_id) for item in content):
                continue
            fixed = [
                {**item, "type": "terminal"} if is_placeholder(item, terminal_id) else item
                for item in content
            ]
            update = {"sessionUpdate": "tool_call_update", "toolCallId": tool_id, "content": fixed}
            self._track_tool(session, update, full=False)
            out.append(self._update(session, update))
        return out
