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

from .. import _schema as s
from .._errors import LocalProtocolError
from . import translate as tr
from .responses import ResponseRules
from .state import JSON, Direction, Message, Output, SessionState, Turn, id_key, valid_v2
from .updates import UpdateRules

__all__ = ["Direction", "V1Adapter"]


class V1Adapter(UpdateRules, ResponseRules):
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

    def mode_options(self) -> Output:
        """For each session with v1 modes, its option list with the mode option (6.2).

        What a v2 reader of the same traffic missed: used when an agent that claimed v2
        turns out to speak v1 (its setup results' ``modes`` were read as v2, i.e. ignored).
        """
        out: Output = []
        for session in self._sessions.values():
            if (
                session.mode_current is not None
                and not session.closed
                and not tr.has_real_mode_option(session.agent_options or [])
            ):
                out.append(self._update(session, self._config_update(session)))
        return out

    def finish(self) -> Output:
        """Flush at end of stream (nothing is held back today, so this returns ``[]``)."""
        return []

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

    def _request(self, direction: str, message: Message) -> Output:
        method: str = message["method"]
        params = message.get("params")
        params_dict = params if isinstance(params, dict) else {}
        key = id_key(message["id"])
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

    def _prompt(self, session: SessionState, message: Message, params: dict[str, JSON]) -> Output:
        out: Output = []
        if session.pending is not None:
            out.extend(self._insert(session))
        session.open = None
        turn = Turn(message["id"], session.session_id, params.get("prompt"))
        session.pending = turn
        self._turns[id_key(message["id"])] = turn
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
        if not valid_v2(v2, s.RequestPermissionRequest):
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
            session.permissions.add(id_key(message["id"]))
            if session.state != "requires_action":
                out.append(self._state(session, "requires_action"))
        return out
