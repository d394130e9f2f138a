"""ReferenceModel: a deliberately simple reading of the client-state rules.

Theory of operation
-------------------
This module is the *independent reference* for acp_client's reducer. It keeps the
whole reconciled state in plain dicts and lists, takes one JSON-RPC message (a dict,
or a batch list) at a time together with its direction, and produces the snapshot of
SNAPSHOT.md (``acp-client/snapshot@1``). It runs in passive mode only (spec section
2.4): prompts, cancels and permission answers are read from the outgoing side of the
log, never generated.

It is written for checking, not for speed: every rule is a few lines that can be read
against ACP-V2-CLIENT-STATE.md ("the spec"); the comments name the section. Where the
spec leaves a choice, the comment says which reading is taken. Nothing here is shared
with the real reducer (``acp_client._session`` / ``acp_client._connection``).

This module is the model's connection part: it reads each message's direction and kind,
pairs requests with responses (spec 1.2, LOG-FORMATS 1.7-1.10), follows prompts (10),
session setup, resume and replay (12), permission requests and cancellation (11), and
hands every ``session/update`` to the session part (:mod:`._model_updates`). The
vocabulary and containers are in :mod:`._model_state`, item decoding and the patch rules
in :mod:`._model_items`, the snapshot writer in :mod:`._model_snapshot`.

Of the ACP v2 Preview it follows the session tree and the replay boundary
(:mod:`._model_tree`: P1-P9, P16-P25), inter-session messages and plan removal
(:mod:`._model_preview`: P12-P15, P45) and keyed submissions (:mod:`._model_submissions`:
P26-P30); not the opt-in unstable features (P32-P44: their updates stay unknown variants,
as in a connection without the opt-in).

What it does not do: it records no diagnostics
(``snapshot()["diagnostics"]`` is always ``[]``), it handles no v1 traffic, no draft
(unstable) features and no elicitation state,
and its lenient decoding covers the annotations that are simple to check on dicts
(wrong-typed default-on-error fields, invalid items of skip-invalid-items arrays).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ._model_items import (
    _clean_command,
    _clean_config_option,
    _clean_list_of,
    _is_int,
    _is_obj,
    _is_str,
    _request_key,
)

# re-exported (`x as x`): the vocabulary and item readers were importable from here
from ._model_items import clean_content_block as clean_content_block
from ._model_items import clean_tool_call_content as clean_tool_call_content
from ._model_items import meta_patch as meta_patch
from ._model_preview import _PreviewRules
from ._model_snapshot import session_snapshot
from ._model_state import (
    _FINISHED,
    _PERMISSION_KEYS,
    _PERMISSION_PARAMS,
    KNOWN_UPDATES,
    SNAPSHOT_FORMAT,
    _background_ids,
    _is_idle,
    _key_of_entity,
    _Pending,
    _Rejected,
    _Session,
)
from ._model_state import UPDATE_KINDS as UPDATE_KINDS
from ._model_submissions import _SubmissionRules
from ._model_tree import _TreeRules
from ._model_unstable import UNSTABLE_FEATURES, _UnstableRules, opted_updates

__all__ = ["ReferenceModel"]


class ReferenceModel(_TreeRules, _SubmissionRules, _UnstableRules, _PreviewRules):
    """A plain-dict model of acp_client's reconciled state, for tests.

    Feed it a conversation in passive mode (both directions, as a log would hold them)
    and compare its :meth:`snapshot` with the real reducer's, or use it directly to know
    what a conversation should reconcile to. ``diagnostics`` in the snapshot is always
    empty: the model reports no diagnostics.

    Example::

        model = ReferenceModel()
        model.feed("outgoing", {"jsonrpc": "2.0", "id": 1, "method": "session/prompt",
                                "params": {"sessionId": "s", "prompt": [
                                    {"type": "text", "text": "hi"}]}})
        model.feed("incoming", {"jsonrpc": "2.0", "id": 1, "result": {"messageId": "u1"}})
        model.snapshot()["sessions"][0]["prompts"]
        # [{'requestId': 1, 'status': 'accepted', 'messageId': 'u1', 'echoed': False}]
    """

    def __init__(self, *, unstable: Iterable[str] = ()) -> None:
        """A model with no sessions yet.

        ``unstable``: the ACP v2 Preview's opt-in features it applies, as
        ``Connection(unstable=...)`` takes them: ``"prompt_suggestions"``, ``"cursors"``,
        ``"unknown_state"`` (P32-P44); without them those updates are unknown variants.

        Raises:
            ValueError: an unknown feature name.
        """
        wanted = frozenset(unstable)
        if not wanted <= UNSTABLE_FEATURES:
            raise ValueError(f"unknown unstable features: {sorted(wanted - UNSTABLE_FEATURES)}")
        self._unstable = wanted
        self._known = KNOWN_UPDATES | opted_updates(wanted)
        self._sessions: dict[str, _Session] = {}
        self._out: dict[tuple[str, Any], _Pending] = {}  # client requests awaiting the agent
        self._sent_since_initialize = False  # a client request other than initialize was sent
        self._in: dict[tuple[str, Any], _Pending] = {}  # agent requests awaiting the client
        self._protocol_version: int | None = None
        self._seq = 0
        self._tree_init()

    # -- input ---------------------------------------------------------------------------

    def feed(self, direction: str, message: Any) -> None:
        """Apply one JSON-RPC message (or a batch list) read in ``direction``.

        ``direction`` is ``"incoming"`` (agent to client) or ``"outgoing"`` (client to
        agent); ``"unknown"`` (a log reader could not tell) is ignored, as are messages
        that are not JSON-RPC objects.
        """
        if direction == "unknown":
            return  # LOG-FORMATS 1.6: records of unknown direction are never applied
        if direction not in ("incoming", "outgoing"):
            raise ValueError(f"direction must be 'incoming' or 'outgoing', not {direction!r}")
        if isinstance(message, list):
            for element in message:  # spec 1.5: batch entries in array order
                self.feed(direction, element)
            return
        if not _is_obj(message):
            return
        self._seq += 1
        has_method = _is_str(message.get("method"))
        if has_method and "id" in message:
            self._request(direction, message)
        elif has_method:
            self._notification(direction, message)
        elif "id" in message and (("result" in message) != ("error" in message)):
            self._response(direction, message)

    def feed_all(self, messages: Any) -> None:
        """Apply ``(direction, message)`` pairs in order."""
        for direction, message in messages:
            self.feed(direction, message)

    # -- output --------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The reconciled state as a SNAPSHOT.md structure (fresh plain data)."""
        return {
            "format": SNAPSHOT_FORMAT,
            "sessions": [
                session_snapshot(s, self._protocol_version) for s in self._sessions.values()
            ],
            "diagnostics": [],
        }

    # -- dispatch ------------------------------------------------------------------------

    def _session(self, session_id: str) -> _Session:
        """Get, or create on first sight, a session (spec 12.5: not announced)."""
        if session_id not in self._sessions:
            self._sessions[session_id] = _Session(session_id)
        return self._sessions[session_id]

    def _request(self, direction: str, msg: dict[str, Any]) -> None:
        key = _request_key(msg["id"])
        method = msg["method"]
        params = msg.get("params")
        if key is None:
            return
        pending = _Pending(method, params, self._seq)
        if direction == "outgoing":
            if method == "initialize" and self._sent_since_initialize:
                # A new connection: earlier pending requests are dropped (LOG-FORMATS 1.10),
                # and the resumes it left unanswered with them. (Spec 1.4: initialize may be
                # repeated until another request is sent; those repeats are one connection.)
                self._out.clear()
                self._in.clear()
                self._sent_since_initialize = False
                self._connection_ended()  # its replays are truncated (Preview P22)
                for session in self._sessions.values():
                    session.resuming = 0
                    if session.reopening:  # its resume died with the connection
                        session.reopening, session.closed = False, True
            if method == "initialize" and _is_obj(params):
                if _is_int(params.get("protocolVersion")):
                    self._protocol_version = params["protocolVersion"]
                caps = params.get("capabilities")
                if _is_obj(caps):  # Preview P21: the client speaks it if it has the group
                    self._preview = caps.get("session") is not None
            self._out[key] = pending
            if method != "initialize":
                self._sent_since_initialize = True
            sid = params.get("sessionId") if _is_obj(params) else None
            if _is_str(sid):
                s = self._session(sid)  # spec 12.5: any message naming a session creates it
                if method == "session/prompt":
                    self._prompt_sent(s, msg["id"], params, pending)
                elif method == "session/resume" and _is_obj(params):
                    self._resume_sent(s, msg["id"], params)
        else:
            old = self._in.get(key)
            if old is not None and old.record is not None and old.record["status"] == "pending":
                old.record["status"] = "withdrawn"  # 1.2: a reused pending id replaces it
            self._in[key] = pending
            if method == "session/request_permission":
                self._permission_request(msg["id"], params, pending)
            elif _is_obj(params) and _is_str(params.get("sessionId")):
                self._session(params["sessionId"])  # elicitation: creates the session only

    def _notification(self, direction: str, msg: dict[str, Any]) -> None:
        method = msg["method"]
        params = msg.get("params")
        if direction == "incoming" and method == "session/update":
            self._session_update(params)
        elif direction == "outgoing" and method == "session/cancel":
            if _is_obj(params) and _is_str(params.get("sessionId")):
                self._cancel(self._session(params["sessionId"]))
        elif direction == "incoming" and method == "$/cancel_request":
            # Spec 11.3 / R20: the agent withdraws one of its own pending requests.
            key = _request_key(params.get("requestId")) if _is_obj(params) else None
            pending = self._in.get(key) if key is not None else None
            record = pending.record if pending is not None else None
            if record is not None and record["status"] == "pending":
                record["status"] = "withdrawn"

    def _response(self, direction: str, msg: dict[str, Any]) -> None:
        key = _request_key(msg["id"])
        table = self._out if direction == "incoming" else self._in
        pending = table.pop(key, None) if key is not None else None
        if pending is None:
            return  # spec 12.5: unmatched responses are never matched by guessing
        result = msg.get("result")
        error = msg.get("error")
        ok = "result" in msg
        params = pending.params if _is_obj(pending.params) else {}
        if direction == "outgoing":
            if pending.record is not None:
                self._permission_answered(pending.record, result if ok else None)
            return
        method = pending.method
        if method == "initialize" and ok and _is_obj(result):
            if _is_int(result.get("protocolVersion")):
                self._protocol_version = result["protocolVersion"]
        elif method == "session/prompt" and pending.record is not None:
            if self._prompt_answered(pending, ok, result, error):
                # Its work is awaited until the next idle, unless its message was placed
                # before the last idle (the response came after that work: R49).
                s = self._session(params["sessionId"])
                mid = result.get("messageId") if _is_obj(result) else None
                echo = s.entities.get(("message", "user", mid)) if _is_str(mid) else None
                if echo is None or echo.first_seen > s.idle_ordinal:
                    s.work_awaited = True
        elif method == "session/new" and ok and _is_obj(result):
            if _is_str(result.get("sessionId")):
                s = self._session(result["sessionId"])
                s.announced = True
                s.created_by_new = True
                self._apply_setup_lists(s, result, pending.seq)
        elif method == "session/resume" and _is_str(params.get("sessionId")):
            s = self._session(params["sessionId"])
            if params.get("replayFrom") is None:
                s.resuming = max(0, s.resuming - 1)
            if ok and _is_obj(result):
                self._apply_setup_lists(s, result, pending.seq)
            if params.get("replayFrom") is not None:  # Preview P18-P21
                self._replay_answered(key, ok)
            reopening, s.reopening = s.reopening, False
            if not ok and (reopening or (_is_obj(error) and error.get("code") == -32002)):
                s.closed = True  # step 5: gone (-32002), or a closed session stays closed
        elif method == "session/close" and _is_str(params.get("sessionId")):
            # Spec 11.5: success, or -32002, closes the session.
            if ok or (_is_obj(error) and error.get("code") == -32002):
                closing = self._session(params["sessionId"])
                closing.closed = closing.close_succeeded = True
                closing.suggestions = None  # Preview P38
        elif (
            method == "session/set_config_option"
            and _is_obj(result)
            and _is_str(params.get("sessionId"))
            and isinstance(result.get("configOptions"), list)
        ):
            s = self._session(params["sessionId"])
            s.config = _clean_list_of(result["configOptions"], _clean_config_option)

    # -- session setup, resume, replay (spec 12) -------------------------------------------

    def _apply_setup_lists(self, s: _Session, result: dict[str, Any], sent_seq: int) -> None:
        # R47: omitted, null, [] and a malformed list all store []; R50: an update of the
        # same kind applied since the request was sent stands.
        if s.commands_seq < sent_seq:
            v = result.get("availableCommands")
            s.commands = _clean_list_of(v, _clean_command) if isinstance(v, list) else []
        if s.config_seq < sent_seq:
            v = result.get("configOptions")
            s.config = _clean_list_of(v, _clean_config_option) if isinstance(v, list) else []

    def _resume_sent(self, s: _Session, request_id: Any, params: dict[str, Any]) -> None:
        s.announced = True
        s.suggestions = None  # Preview P38: either mode
        if s.closed:  # spec 12.3 step 4: resumed, the session is open again
            s.closed, s.reopening = False, True
        if params.get("replayFrom") is None:
            s.resuming += 1  # spec 12.2: no replay, keep everything; A27: resume snapshot
            return
        self._replay_sent(s, request_id)  # spec 12.3 step 1, Preview P16

    def _end_replay(self, s: _Session) -> None:
        # Spec 12.3 steps 4/5: what was not replayed becomes unretained, in its old order.
        s.replaying = False
        self._cursors_settled(s)  # Preview P44
        # An entry an earlier replay lost and this one reported again is back in the
        # timeline (12.3 step 3: its key keeps its identity); it is no longer unretained.
        s.unretained = [e for e in s.unretained if _key_of_entity(e) not in s.entities]
        for key in s.previous_order:
            if key not in s.entities:
                s.unretained.append(s.previous[key])
        s.previous = {}
        s.previous_order = []
        # The replayed history is earlier work, unless work is still going on: then it
        # started at the last user message, the prompt that a later refusal marks from.
        s.last_work_end = s.ordinal
        if s.state is not None and s.state.get("state") != "idle":
            users = [s.entities[k].first_seen for k in s.timeline if k[:2] == ("message", "user")]
            if users:
                s.last_work_end = users[-1] - 1

    # -- permissions and cancellation (spec 11) ------------------------------------------

    def _permission_request(self, request_id: Any, params: Any, pending: _Pending) -> None:
        if not _is_obj(params) or not _is_str(params.get("sessionId")):
            return
        options = params.get("options")
        valid_options = (
            isinstance(options, list)
            and options
            and all(
                _is_obj(o)
                and _is_str(o.get("optionId"))
                and _is_str(o.get("name"))
                and _is_str(o.get("kind"))
                for o in options
            )
        )
        if not _is_str(params.get("title")) or not valid_options:
            return  # R41: answered -32602, never recorded
        subject = params.get("subject")
        tool_call_id = None
        if subject is not None:
            if not _is_obj(subject) or not _is_str(subject.get("type")):
                return  # the subject is strict (spec 13.6)
            if subject["type"] == "tool_call":
                tc = subject.get("toolCall")
                if not _is_obj(tc) or not _is_str(tc.get("toolCallId")):
                    return
                tool_call_id = tc["toolCallId"]
            elif subject["type"] == "command":
                if not (_is_str(subject.get("command")) and _is_str(subject.get("cwd"))):
                    return
                if _is_str(subject.get("toolCallId")):
                    tool_call_id = subject["toolCallId"]  # links only, creates nothing (R21)
        s = self._session(params["sessionId"])
        if subject is not None and subject["type"] == "tool_call":
            # Spec 11.1: applied as if a tool_call_update had arrived at this point.
            s.ordinal += 1
            self._tool_call_update(s, subject["toolCall"])
        record: dict[str, Any] = {"requestId": request_id, "title": params["title"]}
        if _is_str(params.get("description")):
            record["description"] = params["description"]
        if tool_call_id is not None:
            record["toolCallId"] = tool_call_id
        record["status"] = "pending"
        record["options"] = copy.deepcopy(options)
        if subject is not None and subject["type"] not in ("tool_call", "command"):
            record["subject"] = copy.deepcopy(subject)  # 11.1: an unknown subject, kept raw
        for key, value in params.items():  # unknown fields, beside the object's own keys
            if key not in _PERMISSION_PARAMS and key not in _PERMISSION_KEYS:
                record.setdefault(key, copy.deepcopy(value))
        pending.record = record
        s.permissions.append(record)

    def _permission_answered(self, record: dict[str, Any], result: Any) -> None:
        outcome = result.get("outcome") if _is_obj(result) else None
        if outcome is not None:
            record["outcome"] = copy.deepcopy(outcome)
        if record["status"] == "withdrawn":
            return  # SNAPSHOT.md PERMISSION: withdrawn is final
        cancelled = _is_obj(outcome) and outcome.get("outcome") == "cancelled"
        record["status"] = "cancelled" if cancelled else "answered"

    def _cancel(self, s: _Session) -> None:
        """session/cancel sent (spec 11.2).

        Passive mode: the permission answers come from the log as outgoing responses, so
        only the local effects apply here.
        """
        if _is_idle(s):
            if not s.work_awaited:
                return  # R46 / R11: no active work, no tool call is marked, no idle awaited
            since: int | None = s.idle_ordinal  # R49: an accepted prompt's work, not yet running
        else:
            since = s.work_start
        s.cancel_requested = True
        listed_calls, listed_terms = _background_ids(s)
        for key in s.timeline:
            if key[0] != "toolCall":
                continue
            tc = s.entities[key]
            tool_call_id = key[1]
            if tc.fields.get("status", "pending") in _FINISHED:
                continue
            # R15: those first seen or changed since the current work started (all
            # not-finished ones if that is unknown) ...
            if since is not None and tc.last_changed < since:
                continue
            # ... minus listed background work, directly or through a listed terminal.
            if tool_call_id in listed_calls:
                continue
            refs = {
                c.get("terminalId")
                for c in tc.fields.get("content", [])
                if c.get("type") == "terminal"
            }
            if refs & listed_terms:
                continue
            s.locally_cancelled.add(tool_call_id)

    # -- session/update (spec 1.6, 3) ----------------------------------------------------

    def _session_update(self, params: Any) -> None:
        if not _is_obj(params) or not _is_str(params.get("sessionId")):
            return  # rejected (spec 1.8)
        update = params.get("update")
        if not _is_obj(update) or not _is_str(update.get("sessionUpdate")):
            return
        sid = params["sessionId"]
        created = sid not in self._sessions
        s = self._session(sid)
        kind = update["sessionUpdate"]
        try:
            if kind not in self._known:
                s.ordinal += 1
                s.unknown.append(copy.deepcopy(update))  # spec 13.1: kept verbatim
                return
            handler = getattr(self, "_u_" + kind)
            handler(s, update)
        except _Rejected:
            if created:
                del self._sessions[sid]  # a rejected update is not applied at all
