"""The reference model's session tree and replay boundary (ACP v2 Preview, docs/preview.md).

Owns, on the model's plain sessions: ``subagent_update`` (a child registered at its
announcement, early traffic attached, the first parent kept, cycles and claims on a
client-created session refused, the association patched: P1-P5, P31's mirror; a child
announced while its parent replays joins that replay: P16), ``replay_complete`` (P18,
P23, P25) and the life of a replay request: started when the ``session/resume`` is read,
ended at its marker, or at the response (complete history of an older agent, or
truncated by an error), or by a new ``initialize`` (P19-P22), with the snapshot's
``replay`` key only on a connection speaking the Preview (P21's reading). Written against
the Preview addendum (docs/preview.md), sharing nothing with the library's ``_tree``.

Not here: the client's refusals before sending (P10: the model is passive) and cancel
cascades (P11: there are none, so nothing to do).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._model_items import _is_obj, _is_str, _request_key, meta_patch
from ._model_state import Key, _Rejected, _Session

__all__: list[str] = []

_NOT_ASSOCIATION = frozenset({"sessionUpdate", "sessionId", "_meta"})


class _TreeRules:
    """The tree and replay-phase part of :class:`~acp_client.testing.ReferenceModel`."""

    _sessions: dict[str, _Session]
    _session: Callable[[str], _Session]  # the connection part's: get or create by id
    _end_replay: Callable[[_Session], None]  # the connection part's (12.3 steps 4, 5)
    _cursors_replayed: Callable[[_Session], None]  # the opt-in part's (P44)

    def _tree_init(self) -> None:
        self._preview = False  # the connection speaks the Preview (P21's reading)
        self._replays: dict[tuple[str, Any], list[_Session]] = {}  # requests in flight
        self._marks: dict[tuple[str, Any], dict[str, int]] = {}  # ordinals at sending

    # -- the tree (P1-P5, P31) --------------------------------------------------------

    def _u_subagent_update(self, s: _Session, u: dict[str, Any]) -> None:
        child_id = u.get("sessionId")
        if not _is_str(child_id):
            raise _Rejected  # the child's id is required
        s.ordinal += 1
        self._preview = True
        if child_id == s.session_id or self._ancestor(child_id, s):
            return  # P4: a cycle, refused
        child = self._sessions.get(child_id)
        if child is not None and child.parent not in (None, s.session_id):
            return  # P3: the first parent stays
        if child is not None and child.parent is None and child.created_by_new:
            return  # P4: a session this client created is nobody's child
        if child is None or child.parent is None:  # P1, P2: registered or attached now
            child = self._session(child_id)
            child.parent = s.session_id
            child.subagent = {}
            s.children.append(child_id)
        self._associate(child, u)
        if s.replay is not None and s.replay["phase"] == "replaying":
            self._join(child, s.replay["requestId"])  # P16

    def _ancestor(self, candidate: str, s: _Session) -> bool:
        seen = {s.session_id}
        parent = s.parent
        while parent is not None and parent not in seen:
            if parent == candidate:
                return True
            seen.add(parent)
            above = self._sessions.get(parent)
            parent = above.parent if above is not None else None
        return False

    @staticmethod
    def _associate(child: _Session, u: dict[str, Any]) -> None:
        """P5, P31: each field omitted keeps, ``null`` clears, a value replaces whole."""
        assert child.subagent is not None
        for key, value in u.items():
            if key in _NOT_ASSOCIATION:
                continue
            if value is None:
                child.subagent.pop(key, None)
            elif key == "state" and _is_obj(value):
                child.subagent[key] = {k: v for k, v in value.items() if k != "sessionUpdate"}
            else:
                child.subagent[key] = value
        if "_meta" in u:
            meta = meta_patch(child.subagent.pop("_meta", None), u["_meta"])
            if meta is not None:
                child.subagent["_meta"] = meta

    # -- replays (P16-P25) ------------------------------------------------------------

    def _replay_sent(self, s: _Session, request_id: Any) -> None:
        """A ``session/resume`` with ``replayFrom`` was read: ``s`` replays (P16)."""
        key = _request_key(request_id)
        assert key is not None
        self._marks[key] = {sid: one.ordinal for sid, one in self._sessions.items()}
        self._begin(s, request_id, None)

    def _join(self, child: _Session, request_id: Any) -> None:
        """P16: a child announced on a replaying session replays for the same request."""
        key = _request_key(request_id)
        assert key is not None
        if child in self._replays.get(key, []):
            return
        mark = self._marks.get(key, {}).get(child.session_id)
        self._begin(child, request_id, -1 if mark is None else mark)

    def _begin(self, s: _Session, request_id: Any, keep_after: int | None) -> None:
        s.announced = True
        s.replaying = True
        kept: list[Key] = [
            k
            for k in s.timeline
            if keep_after is not None and s.entities[k].first_seen > keep_after
        ]
        # Spec 12.3 step 1: the rest moves into the previous generation.
        s.previous = {k: e for k, e in s.entities.items() if k not in kept}
        s.previous_order = [k for k in s.timeline if k not in kept]
        s.entities = {k: s.entities[k] for k in kept}
        s.timeline = kept
        s.terminals = {}
        s.plans = {}
        s.locally_cancelled = set()  # step 3: local overlays are dropped
        self._cursors_replayed(s)  # P44
        s.replay = {"phase": "replaying", "complete": False, "truncated": False}
        s.replay["requestId"] = request_id
        s.replay_shown = self._preview
        key = _request_key(request_id)
        assert key is not None
        self._replays.setdefault(key, []).append(s)

    def _u_replay_complete(self, s: _Session, u: dict[str, Any]) -> None:
        """P18: the replay ends at the marker; P19: the resume window stays open."""
        s.ordinal += 1
        self._preview = True
        if s.replay is None or s.replay["phase"] != "replaying":
            return  # P23: unexpected or duplicate (a diagnostic in the library)
        s.replay.update(phase="live", complete=True)
        s.replay_shown = True
        self._end_replay(s)
        s.resuming += 1  # until the response, a state update is a resume snapshot

    def _replay_answered(self, key: tuple[str, Any] | None, ok: bool) -> None:
        """The replay request was answered (or never will be): its replays end (P19-P21)."""
        for s in self._replays.pop(key, []) if key is not None else []:
            if s.replay is None or _request_key(s.replay["requestId"]) != key:
                continue
            if s.replay["phase"] == "live":  # its marker came: the window closes
                s.resuming = max(0, s.resuming - 1)
                continue
            s.replay["phase"] = "live"
            s.replay["truncated"] = not ok  # P20 (older agent) or P21 (cut short)
            self._end_replay(s)
        if key is not None:
            self._marks.pop(key, None)

    def _connection_ended(self) -> None:
        """A new ``initialize`` in the log: every replay in flight is truncated (P22)."""
        for key in list(self._replays):
            self._replay_answered(key, False)
