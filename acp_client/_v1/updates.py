# Owns the v1 adapter's notification rules (V1-TO-V2.md sections 3.2, 3.4, 4, 6): each v1
# `session/update` becomes its v2 update (chunks get message ids, tool calls their patches,
# modes the synthetic option), or is kept raw when v1 does not know its variant.
"""The v1 adapter's rules for notifications (``session/update``, ``session/cancel``)."""

from __future__ import annotations

from collections.abc import Callable

from .. import _schema as s
from . import translate as tr
from .core import AdapterCore
from .state import DRAFT_VARIANTS, ROLES, V2_VARIANTS, Message, Output, SessionState


class UpdateRules(AdapterCore):
    """How :class:`~acp_client.v1.V1Adapter` translates notifications."""

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
            and (kind in ROLES or kind in ("tool_call", "tool_call_update"))
        ):
            out.append(self._state(session, "running"))
        if kind not in V1_VARIANTS and not (self.unstable and kind in DRAFT_VARIANTS):
            # Unknown to v1: kept verbatim, even under a name v2 knows (V1-TO-V2 3.2).
            meta = params_dict.get("_meta", s.UNSET)
            if isinstance(kind, str) and kind not in V2_VARIANTS and meta is s.UNSET:
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

    def _rebuild_terminals(self, session: SessionState, tool: Message | None) -> Output:
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

    def _translate_update(self, session: SessionState, update: Message) -> Message | None:
        """The v2 update for one v1 update (``update`` itself if unchanged, ``None`` if none)."""
        translate = TRANSLATIONS.get(update["sessionUpdate"])
        return update if translate is None else translate(self, session, update)

    def _same(self, session: SessionState, update: Message) -> Message | None:
        return update

    def _role_chunk(self, session: SessionState, update: Message) -> Message | None:
        return self._chunk(session, ROLES[update["sessionUpdate"]], update)

    def _tool_call(self, session: SessionState, update: Message) -> Message | None:
        session.open = None
        tool = tr.tool_call_full(update, self._terminal_known(session), self._reporter(session))
        self._track_tool(session, tool, full=True)
        return tool

    def _tool_call_update(self, session: SessionState, update: Message) -> Message | None:
        tool_id = update.get("toolCallId")
        if isinstance(tool_id, str) and tool_id not in session.titles:
            session.open = None  # an unseen tool call (v2 rejects one without a string id)
        tool = tr.strip_nulls(update, self._terminal_known(session), self._reporter(session))
        self._track_tool(session, tool, full=False)
        return tool

    def _plan(self, session: SessionState, update: Message) -> Message | None:
        return tr.plan_update(update, self._reporter(session))

    def _commands(self, session: SessionState, update: Message) -> Message | None:
        return {**update, "availableCommands": tr.commands(update.get("availableCommands"))}

    def _current_mode(self, session: SessionState, update: Message) -> Message | None:
        mode = update.get("currentModeId", update.get("modeId"))
        if not isinstance(mode, str):
            self._diag("v1-mode-invalid", "current_mode_update without a mode id", "error")
            return update
        return self._set_mode(session, mode)

    def _config_options(self, session: SessionState, update: Message) -> Message | None:
        if not isinstance(update.get("configOptions"), list):
            return update  # the v2 side rejects it, as it would a v2 one
        session.agent_options = tr.config_options(update["configOptions"])
        return {**update, **self._config_update(session)}

    def _session_info(self, session: SessionState, update: Message) -> Message | None:
        patch, session.info_meta = tr.meta_replacement(
            session.info_meta, update.get("_meta", tr.MISSING), full=False
        )
        return self._with_meta(update, patch)

    def _compaction(self, session: SessionState, update: Message) -> Message | None:
        compaction_id = update.get("compactionId")
        if isinstance(compaction_id, str):
            if compaction_id not in session.compaction_meta:
                session.open = None
                session.compaction_meta[compaction_id] = None
            if update["sessionUpdate"] == "compaction_update":
                patch, session.compaction_meta[compaction_id] = tr.meta_replacement(
                    session.compaction_meta[compaction_id],
                    update.get("_meta", tr.MISSING),
                    full=False,
                )
                return self._with_meta(update, patch)
        return update

    def _chunk(self, session: SessionState, role: str, update: Message) -> Message:
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


Translate = Callable[[UpdateRules, SessionState, Message], Message | None]

#: V1-TO-V2 3.2, one row a v1 variant: how the adapter makes its v2 update. A variant not
#: here (v2-only names, draft variants without an opt-in, custom ones) is kept raw.
TRANSLATIONS: dict[str, Translate] = {
    "user_message_chunk": UpdateRules._role_chunk,
    "agent_message_chunk": UpdateRules._role_chunk,
    "agent_thought_chunk": UpdateRules._role_chunk,
    "tool_call": UpdateRules._tool_call,
    "tool_call_update": UpdateRules._tool_call_update,
    "plan": UpdateRules._plan,
    "available_commands_update": UpdateRules._commands,
    "current_mode_update": UpdateRules._current_mode,
    "config_option_update": UpdateRules._config_options,
    "session_info_update": UpdateRules._session_info,
    "usage_update": UpdateRules._same,
    "notice": UpdateRules._same,
    "compaction_update": UpdateRules._compaction,
    "compaction_summary_chunk": UpdateRules._compaction,
}
V1_VARIANTS = frozenset(TRANSLATIONS)
"""The v1 variants: those the adapter translates or passes on as the same v2 variant."""
