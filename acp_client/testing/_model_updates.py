"""The reference model's session part: every known ``session/update`` (spec 3-9).

Owns: the rule of each of the nineteen update kinds on one session's plain state, from
first-seen placement (spec 2.3) through messages (4), the foreground state and turn
completion (6), tool calls (7), terminals (8), plans, commands, config options, session
info, usage and notices (9) to compactions (9.5). Mixed into
:class:`~acp_client.testing.ReferenceModel`, which dispatches to the ``_u_<kind>`` methods.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from ._model_items import (
    _UINT64_MAX,
    _clean_command,
    _clean_config_option,
    _clean_list_of,
    _clean_location,
    _clean_plan_entry,
    _decode_b64,
    _drop_bad,
    _is_int,
    _is_number,
    _is_obj,
    _is_str,
    _patch_capabilities,
    _patch_extras,
    _patch_field,
    _patch_list,
    _patch_meta,
    _valid_background_item,
    _valid_error,
    clean_content_block,
    clean_tool_call_content,
)
from ._model_state import (
    _COMPACTION_KEYS,
    _INFO_KEYS,
    _KNOWN_STATES,
    _MESSAGE_KEYS,
    _ROLE_OF_UPDATE,
    _TERMINAL_KEYS,
    _TOOL_CALL_KEYS,
    Key,
    _Entity,
    _Rejected,
    _Session,
)


class _UpdateRules:
    """The per-session update rules; the model supplies ``_seq``, its message counter."""

    _seq: int  # the global sequence number of the message being applied (R50)
    _unstable: frozenset[str] = frozenset()  # the opted-in unstable features (Preview P0)

    def _touch(self, s: _Session, key: Key, make: Any) -> _Entity:
        """UPSERT lookup with first-seen placement (spec 2.3)."""
        entity = s.entities.get(key)
        if entity is None:
            entity = _Entity(fields=make(), first_seen=s.ordinal)
            s.entities[key] = entity
            s.timeline.append(key)
        entity.last_changed = s.ordinal
        return entity

    # messages (spec 4)

    def _message(self, s: _Session, role: str, message_id: str) -> _Entity:
        if role == "user":
            s.user_ids_seen.add(message_id)  # SNAPSHOT.md PROMPT `echoed`
        return self._touch(
            s,
            ("message", role, message_id),
            lambda: {"messageId": message_id, "role": role, "content": []},
        )

    def _append_chunk(
        self, s: _Session, u: dict[str, Any], id_key: str, key: str, entity: Any
    ) -> None:
        """A chunk: UPSERT ``entity(u[id_key])`` and APPEND the one block to its ``key``.

        Spec 4.1, 9.5, Preview P13: no lenient decoding of the id or the block; the
        chunk's ``_meta`` is chunk-scoped, never stored.
        """
        block = clean_content_block(u.get("content"))
        if not _is_str(u.get(id_key)) or block is None:
            raise _Rejected
        s.ordinal += 1
        entity(u[id_key]).fields[key].append(block)

    def _chunk(self, s: _Session, u: dict[str, Any]) -> None:
        role = _ROLE_OF_UPDATE[u["sessionUpdate"]]
        self._append_chunk(s, u, "messageId", "content", lambda i: self._message(s, role, i))

    def _whole_message(self, s: _Session, u: dict[str, Any]) -> None:
        if not _is_str(u.get("messageId")):
            raise _Rejected
        s.ordinal += 1
        msg = self._message(s, _ROLE_OF_UPDATE[u["sessionUpdate"]], u["messageId"])
        # Spec 4.2: content D+S: non-array -> omitted; null or [] -> clear; array -> replace.
        _patch_list(msg.fields, u, "content", clean_content_block)
        _patch_meta(msg.fields, u)
        _patch_extras(msg.extra, u, _MESSAGE_KEYS)

    _u_user_message_chunk = _chunk
    _u_agent_message_chunk = _chunk
    _u_agent_thought_chunk = _chunk
    _u_user_message = _whole_message
    _u_agent_message = _whole_message
    _u_agent_thought = _whole_message

    # foreground state (spec 6)

    def _u_state_update(self, s: _Session, u: dict[str, Any]) -> None:
        state = u.get("state")
        if not _is_str(state):
            raise _Rejected
        s.ordinal += 1
        payload = copy.deepcopy({k: v for k, v in u.items() if k != "sessionUpdate"})
        opted_unknown = state == "unknown" and "unknown_state" in self._unstable  # P32
        if state in _KNOWN_STATES or opted_unknown:
            bg = payload.get("background")
            # Spec 6.4: null, non-array or any malformed item -> not reported (D, no S).
            if "background" in payload and (
                not isinstance(bg, list) or not all(_valid_background_item(i) for i in bg)
            ):
                del payload["background"]
            _drop_bad(payload, "_meta", _is_obj)
            if payload.get("_meta", 0) is None:
                del payload["_meta"]
            if state == "idle":
                # Spec 6.2: omitted, null and malformed all mean "no stop reason".
                if not _is_str(payload.get("stopReason")):
                    payload.pop("stopReason", None)
                elif (
                    payload["stopReason"] == "error"
                    and "error" in payload
                    and not _valid_error(payload["error"])
                ):
                    del payload["error"]  # R60
            for item in payload.get("background", []):
                if item.get("type") == "terminal":
                    self._terminal(s, item["terminalId"])  # R22 / R53
        last = s.last_known if s.state_unknown else s.state  # P33: the last known decides
        previous = last.get("state") if last is not None else None
        repeated = (previous == "idle" or (last is None and s.created_by_new)) and not s.resuming
        s.state = payload
        s.state_unknown = opted_unknown
        s.last_known = last if opted_unknown else None
        if opted_unknown:
            return  # P32, P33: neither starts nor ends work; cancelRequested kept
        # R31 / R51 / A27: snapshots during replay, or before a resume's response, record no
        # completion and start no work.
        if not s.replaying and not s.resuming:
            if state == "idle" and previous is not None and previous != "idle":
                reason = payload.get("stopReason")
                s.completed.append(reason)
                if reason == "refusal":
                    self._exclude_refused(s)
                s.work_start = None
            elif state in ("running", "requires_action") and previous in (None, "idle"):
                s.work_start = s.idle_ordinal if s.work_awaited else s.ordinal  # R49, R15
        if state == "idle" and not s.replaying:
            if repeated and (s.work_awaited or self._user_message_waits(s)):
                pass  # a repeated idle neither starts nor ends work (6.3); R49 keeps waiting
            else:
                # an idle ends what came before (R14 marks after it)
                s.last_work_end = s.ordinal
                s.work_awaited = False
                s.idle_ordinal = s.ordinal
        if state == "idle":
            s.cancel_requested = False

    def _user_message_waits(self, s: _Session) -> bool:
        """Whether a user message first seen since the last idle ends the timeline."""
        if not s.timeline:
            return False
        key = s.timeline[-1]
        return key[:2] == ("message", "user") and s.entities[key].first_seen > s.last_work_end

    def _exclude_refused(self, s: _Session) -> None:
        # R14, as read here: from the first user message placed since the last idle (the
        # prompt that started this work) to the end of the timeline.
        marking = False
        for key in s.timeline:
            entity = s.entities[key]
            if key[:2] == ("message", "user") and entity.first_seen > s.last_work_end:
                marking = True
            if marking:
                entity.excluded = True

    # tool calls (spec 7)

    def _tool_call(self, s: _Session, tool_call_id: str) -> _Entity:
        return self._touch(
            s,
            ("toolCall", tool_call_id),
            lambda: {"toolCallId": tool_call_id, "content": [], "locations": []},
        )

    def _tool_call_update(self, s: _Session, u: dict[str, Any]) -> None:
        tc = self._tool_call(s, u["toolCallId"])
        f = tc.fields
        for key in ("title", "name", "kind", "status"):
            # `kind: null` resets to `other`, `status: null` to `pending`: absent here,
            # the default is written by the snapshot (spec 7.1).
            _patch_field(f, u, key, _is_str)
        if "status" in u and (u["status"] is None or _is_str(u["status"])):
            s.locally_cancelled.discard(u["toolCallId"])  # R17: a later agent status wins
        _patch_list(f, u, "content", clean_tool_call_content)
        _patch_list(f, u, "locations", _clean_location)
        for key in ("rawInput", "rawOutput"):
            _patch_field(f, u, key, lambda v: True)  # untyped: cannot fail
        _patch_capabilities(f, u)
        _patch_meta(f, u)
        _patch_extras(tc.extra, u, _TOOL_CALL_KEYS)
        self._terminals_referenced(s, f["content"])

    def _terminals_referenced(self, s: _Session, items: list[dict[str, Any]]) -> None:
        for item in items:
            if item.get("type") == "terminal":
                self._terminal(s, item["terminalId"])  # R22: a reference creates it

    def _u_tool_call_update(self, s: _Session, u: dict[str, Any]) -> None:
        if not _is_str(u.get("toolCallId")):
            raise _Rejected
        s.ordinal += 1
        self._tool_call_update(s, u)

    def _u_tool_call_content_chunk(self, s: _Session, u: dict[str, Any]) -> None:
        item = clean_tool_call_content(u.get("content"))
        if not _is_str(u.get("toolCallId")) or item is None:
            raise _Rejected
        s.ordinal += 1
        tc = self._tool_call(s, u["toolCallId"])
        tc.fields["content"].append(item)  # spec 7.2: APPEND, chunk `_meta` not stored
        self._terminals_referenced(s, [item])

    # terminals (spec 8)

    def _terminal(self, s: _Session, terminal_id: str) -> _Entity:
        term = s.terminals.get(terminal_id)
        if term is None:
            term = _Entity(fields={"terminalId": terminal_id}, first_seen=s.ordinal)
            s.terminals[terminal_id] = term
        return term

    def _u_terminal_update(self, s: _Session, u: dict[str, Any]) -> None:
        if not _is_str(u.get("terminalId")):
            raise _Rejected
        s.ordinal += 1
        term = self._terminal(s, u["terminalId"])
        f = term.fields
        _patch_field(f, u, "command", _is_str)
        _patch_field(f, u, "cwd", _is_str)
        if "output" in u:
            v = u["output"]
            if v is None:
                term.output = bytearray()  # R24: cleared; later chunks append to empty
            elif _is_obj(v) and _is_str(v.get("data")):
                data = _decode_b64(v["data"])
                if data is not None:  # R25: invalid base64 -> treated as omitted
                    term.output = bytearray(data)  # SNAPSHOT: replaces everything
        if "exitStatus" in u:
            v = u["exitStatus"]
            if v is None:
                f.pop("exitStatus", None)  # R24: not exited / unknown
            elif _is_obj(v):
                v = copy.deepcopy(v)
                _drop_bad(v, "exitCode", _is_int)
                _drop_bad(v, "signal", _is_str)
                _drop_bad(v, "_meta", _is_obj)
                f["exitStatus"] = v

        def size_ok(v: Any) -> bool:
            return _is_obj(v) and all(
                _is_int(v.get(k)) and 1 <= v[k] <= 65535 for k in ("cols", "rows")
            )

        _patch_field(f, u, "size", size_ok)
        _patch_capabilities(f, u)
        _patch_meta(f, u)
        _patch_extras(term.extra, u, _TERMINAL_KEYS)

    def _u_terminal_output_chunk(self, s: _Session, u: dict[str, Any]) -> None:
        if not (_is_str(u.get("terminalId")) and _is_str(u.get("data"))):
            raise _Rejected
        s.ordinal += 1
        data = _decode_b64(u["data"])  # spec 8.3: each chunk decoded on its own
        if data is not None:  # R25: invalid base64 -> the whole chunk is dropped: it
            self._terminal(s, u["terminalId"]).output.extend(data)  # creates nothing either

    # plans, commands, config, info, usage, notices (spec 9)

    def _u_plan_update(self, s: _Session, u: dict[str, Any]) -> None:
        plan = u.get("plan")
        if not _is_obj(plan) or not _is_str(plan.get("type")) or not _is_str(plan.get("planId")):
            raise _Rejected
        plan = copy.deepcopy(plan)
        if plan["type"] == "items":
            if not isinstance(plan.get("entries"), list):
                raise _Rejected  # `entries` is S only: must be an array
            plan["entries"] = _clean_list_of(plan["entries"], _clean_plan_entry)
            _drop_bad(plan, "_meta", _is_obj)
        s.ordinal += 1
        entity = s.plans.get(plan["planId"])
        if entity is None:
            entity = _Entity(fields={}, first_seen=s.ordinal)
            s.plans[plan["planId"]] = entity
        entity.fields = {"planId": plan["planId"], "plan": plan}  # REPLACE (R28)

    def _u_available_commands_update(self, s: _Session, u: dict[str, Any]) -> None:
        if not isinstance(u.get("availableCommands"), list):
            raise _Rejected  # R34: S only, a non-array rejects the update
        s.ordinal += 1
        s.commands = _clean_list_of(copy.deepcopy(u["availableCommands"]), _clean_command)
        s.commands_seq = self._seq

    def _u_config_option_update(self, s: _Session, u: dict[str, Any]) -> None:
        if not isinstance(u.get("configOptions"), list):
            raise _Rejected
        s.ordinal += 1
        s.config = _clean_list_of(copy.deepcopy(u["configOptions"]), _clean_config_option)
        s.config_seq = self._seq

    def _u_session_info_update(self, s: _Session, u: dict[str, Any]) -> None:
        s.ordinal += 1
        if s.info is None:
            s.info = _Entity(fields={})
        _patch_field(s.info.fields, u, "title", _is_str)
        _patch_field(s.info.fields, u, "updatedAt", _is_str)
        _patch_meta(s.info.fields, u)
        _patch_extras(s.info.extra, u, _INFO_KEYS)

    def _u_usage_update(self, s: _Session, u: dict[str, Any]) -> None:
        used, size = u.get("used"), u.get("size")
        if not (_is_int(used) and 0 <= used <= _UINT64_MAX and _is_int(size)):
            raise _Rejected  # `used` / `size` are strict uint64
        if not 0 <= size <= _UINT64_MAX:
            raise _Rejected
        s.ordinal += 1
        usage: dict[str, Any] = {"used": used, "size": size}
        old_cost = s.usage.get("cost") if s.usage is not None else None
        cost = u.get("cost", "omitted")
        valid_cost = (
            _is_obj(cost)
            and _is_number(cost.get("amount"))
            and math.isfinite(cost["amount"])  # 1e400 is out of range (13.5)
            and _is_str(cost.get("currency"))
        )
        if valid_cost:
            cost = copy.deepcopy(cost)
            _drop_bad(cost, "_meta", _is_obj)
            usage["cost"] = cost
        elif cost is not None and old_cost is not None:
            usage["cost"] = old_cost  # R33: omitted (or malformed, D) keeps the last cost
        if _is_obj(u.get("_meta")):
            usage["_meta"] = copy.deepcopy(u["_meta"])  # replaced with each update
        s.usage = usage

    def _u_notice(self, s: _Session, u: dict[str, Any]) -> None:
        title = u.get("title")
        if not _is_str(u.get("severity")) or not _is_str(title) or title == "":
            raise _Rejected  # spec 9.6: severity and a non-empty title are required
        s.ordinal += 1
        notice = copy.deepcopy({k: v for k, v in u.items() if k != "sessionUpdate"})
        _drop_bad(notice, "description", _is_str)
        _drop_bad(notice, "_meta", _is_obj)
        for key in ("description", "_meta"):
            if key in notice and notice[key] is None:
                del notice[key]  # a field cleared with null is absent (SNAPSHOT.md)
        s.notices.append(notice)

    # compactions (spec 9.5)

    def _compaction(self, s: _Session, compaction_id: str, status: str) -> _Entity:
        return self._touch(
            s,
            ("compaction", compaction_id),
            lambda: {"compactionId": compaction_id, "status": status, "summary": []},
        )

    def _u_compaction_update(self, s: _Session, u: dict[str, Any]) -> None:
        if not (_is_str(u.get("compactionId")) and _is_str(u.get("status"))):
            raise _Rejected  # R56: status is required
        s.ordinal += 1
        c = self._compaction(s, u["compactionId"], u["status"])
        c.fields["status"] = u["status"]
        _patch_list(c.fields, u, "summary", clean_content_block)
        _patch_field(c.fields, u, "error", _is_str)
        _patch_meta(c.fields, u)
        _patch_extras(c.extra, u, _COMPACTION_KEYS)

    def _u_compaction_summary_chunk(self, s: _Session, u: dict[str, Any]) -> None:
        def compaction(compaction_id: str) -> _Entity:
            return self._compaction(s, compaction_id, "in_progress")  # R56

        self._append_chunk(s, u, "compactionId", "summary", compaction)
