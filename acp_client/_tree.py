"""The session tree and each session's replay boundary (ACP-V2-PREVIEW 3.1, 3.3, 3.5).

Owns:

* :class:`Node`, a session's place: its parent, its children in announcement order, its
  association (``subagent``, the parent's view of a child after the patch rules, P5,
  P31) and the phase of its latest replay (:class:`ReplayPhase`, P16-P21);
* :class:`Forest`, the connection's tree: ``subagent_update`` registers and patches
  children (P1-P5: no buffering, fixed ownership, cycles refused), children entering the
  replay of their parent's ``session/resume`` (P16), the ``replay_complete`` marker
  (P18, P23, P25), and the end of a replay request (P19-P22: the resume window, the
  missing marker of an agent built on 2.4.0, truncated replays).

Every association value is kept as received (wire names, plain data); effective
``cwd`` / ``additionalDirectories`` are derived (:func:`effective`), never stored (P6).
Nothing here reads other modules' private state: a :class:`Session` is driven through
its public methods.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from . import _events as ev
from ._codec import to_builtins
from ._patch import meta_patch, patch_extra

if TYPE_CHECKING:
    from ._session import Session

__all__ = ["Forest", "Node", "ReplayPhase", "effective", "load_tree", "plain_update"]

RequestId = int | str
Note = Callable[..., None]


def plain_update(update: Any) -> dict[str, Any]:
    """A decoded update as plain wire data (omitted fields absent, ``null`` kept)."""
    return update if isinstance(update, dict) else to_builtins(update)


class ReplayPhase:
    """The latest replay of one session (snapshot ``replay``, P16-P22).

    Attributes:
        phase: ``replaying`` until the marker or the end of the request, then ``live``.
        complete: the marker arrived (P18).
        truncated: the request failed or its connection ended before the marker (P21).
        request_id: the id of the ``session/resume`` whose replay this is, as sent.
        current: no later ``session/resume`` was sent for the session (P23).
        shown: the connection speaks the v2 Preview (see :attr:`Forest.preview`): the
            snapshot has a ``replay`` key, and a missing marker is reported (P20).
    """

    __slots__ = ("complete", "current", "phase", "request_id", "shown", "truncated")

    def __init__(self, request_id: RequestId, shown: bool = True) -> None:
        self.shown = shown
        self.phase: Literal["replaying", "live"] = "replaying"
        self.complete = False
        self.truncated = False
        self.request_id = request_id
        self.current = True

    def snapshot(self) -> dict[str, Any]:
        """The snapshot's ``replay`` object (section 4)."""
        return {
            "phase": self.phase,
            "complete": self.complete,
            "truncated": self.truncated,
            "requestId": self.request_id,
        }


class Node:
    """A session's place in the tree, and its replay phase.

    Attributes:
        parent_id: the immediate parent's id, for a child (``None``: a root).
        children: the child session ids, in announcement order.
        subagent: the association after the patch rules (wire names; ``None`` for roots).
        replay: the latest replay (``None``: never in one).
        hook: the forest's handler of tree updates (``None``: a session on its own).
    """

    __slots__ = ("children", "hook", "parent_id", "replay", "subagent")

    def __init__(self) -> None:
        self.parent_id: str | None = None
        self.children: list[str] = []
        self.subagent: dict[str, Any] | None = None
        self.replay: ReplayPhase | None = None
        self.hook: Callable[[Session, str, dict[str, Any]], None] | None = None


def effective(sessions: dict[str, Session], session_id: str, key: str) -> Any:
    """The effective ``cwd`` / ``additionalDirectories`` of a session (P6).

    Its own value, else its parent's effective value, recursively; ``None`` when no
    ancestor sets it.
    """
    seen: set[str] = set()
    session = sessions.get(session_id)
    while session is not None and session.session_id not in seen:
        seen.add(session.session_id)
        own = (session.tree.subagent or {}).get(key)
        if own is not None:
            return own
        parent = session.tree.parent_id
        session = sessions.get(parent) if parent is not None else None
    return None


class Forest:
    """The tree of a connection's sessions and the replays in flight.

    Args:
        sessions: the registry's sessions by id (shared, not copied).
        create: makes (and registers) a session first named now, given the events list.
        note: the diagnostics sink's ``note``.
    """

    __slots__ = ("_create", "_note", "marks", "preview", "replays", "sessions")

    def __init__(
        self,
        sessions: dict[str, Session],
        create: Callable[[str, list[ev.Event]], Session],
        note: Note,
    ) -> None:
        self.sessions = sessions
        self._create = create
        self._note = note
        self.replays: dict[RequestId, list[Session]] = {}
        """The sessions replaying for each ``session/resume`` in flight (P16)."""
        self.marks: dict[RequestId, dict[str, int]] = {}
        """Each session's ordinal when that request was sent (P16)."""
        self.preview = False
        """Whether the connection speaks the v2 Preview: the client's ``initialize``
        advertised ``capabilities.session`` (new in the Preview) or a tree update came.
        Until then a replay is that of an agent built on 2.4.0 and leaves the snapshot
        as it always was (X0): no ``replay`` key, no ``replay-complete-missing``."""

    # ------------------------------------------------------------ tree updates

    def update(self, session: Session, tag: str, update: dict[str, Any]) -> None:
        """A tree update applied on ``session``: ``subagent_update`` or ``replay_complete``."""
        self.preview = True
        if tag == "subagent_update":
            self.announce(session, update)
        else:
            self.marker(session)

    def announce(self, parent: Session, update: dict[str, Any]) -> None:
        """``subagent_update`` on ``parent`` (P1-P5, P16 for a child of a replay)."""
        pid = parent.session_id
        cid = update.get("sessionId")
        if not isinstance(cid, str):
            self._note("malformed-update", "subagent_update without a string sessionId", pid)
            return
        if cid == pid or self._is_ancestor(cid, pid):
            self._note("subagent-cycle", f"{pid!r} announced {cid!r}: a cycle (P4)", pid)
            return
        child = self.sessions.get(cid)
        if child is not None and child.tree.parent_id not in (None, pid):
            self._note(
                "subagent-reparent-ignored",
                f"{pid!r} announced {cid!r}, a child of {child.tree.parent_id!r}: ignored (P3)",
                pid,
            )
            return
        if child is not None and child.created_by_new and child.tree.parent_id is None:
            self._note(
                "subagent-claims-client-session",
                f"{pid!r} announced {cid!r}, which this client created with session/new (P4)",
                pid,
            )
            return
        if child is None:
            child = self._create(cid, parent.side_events)
            self._attach(parent, child)
        elif child.tree.parent_id is None:
            self._note(
                "subagent-announced-after-traffic",
                f"{cid!r} was seen before {pid!r} announced it; attached now (P2)",
                cid,
            )
            self._attach(parent, child)
        _patch(child.tree, update)
        self._join_replay(parent, child)

    def _is_ancestor(self, candidate: str, of: str) -> bool:
        seen: set[str] = set()
        current: str | None = of
        while current is not None and current not in seen:
            seen.add(current)
            session = self.sessions.get(current)
            current = session.tree.parent_id if session is not None else None
            if current == candidate:
                return True
        return False

    @staticmethod
    def _attach(parent: Session, child: Session) -> None:
        child.tree.parent_id = parent.session_id
        child.tree.subagent = {}
        parent.tree.children.append(child.session_id)

    def _join_replay(self, parent: Session, child: Session) -> None:
        """P16: a child announced while its parent replays for q replays for q too."""
        replay = parent.tree.replay
        if replay is None or replay.phase != "replaying":
            return
        rid = replay.request_id
        joined = self.replays.setdefault(rid, [])
        if child in joined:
            return
        mark = self.marks.get(rid, {}).get(child.session_id)
        self.begin(child, rid, parent.side_events, keep_after=-1 if mark is None else mark)

    # ---------------------------------------------------------------- replays

    def begin(
        self,
        session: Session,
        rid: RequestId,
        events: list[ev.Event],
        *,
        keep_after: int | None = None,
    ) -> None:
        """``session`` replays for the request ``rid`` from now on (P16)."""
        removed = session.begin_replay(keep_after=keep_after)
        session.tree.replay = ReplayPhase(rid, self.preview)
        self.replays.setdefault(rid, []).append(session)
        events.append(removed)
        events.append(ev.ReplayStarted(session_id=session.session_id))

    def sent(self, session: Session, rid: RequestId, replays: bool, events: list[ev.Event]) -> None:
        """A ``session/resume`` ``rid`` of ``session`` was sent (or read from a log)."""
        if session.tree.replay is not None:
            session.tree.replay.current = False
        if replays:
            self.marks[rid] = {sid: one.ordinal for sid, one in self.sessions.items()}
            self.begin(session, rid, events)

    def marker(self, session: Session) -> None:
        """``replay_complete`` on ``session`` (P18, P23)."""
        sid = session.session_id
        replay = session.tree.replay
        if replay is not None and replay.phase == "replaying":
            replay.shown = True
            replay.phase = "live"
            replay.complete = True
            unretained = session.end_replay(True, window=True)
            session.side_events.append(
                ev.ReplayFinished(session_id=sid, ok=True, unretained=unretained)
            )
        elif replay is not None and replay.complete and replay.current:
            self._note("duplicate-replay-complete", "a second replay_complete (P23)", sid)
        else:
            self._note(
                "unexpected-replay-complete",
                "replay_complete for a session that is not replaying (P23)",
                sid,
            )

    def finish(self, rid: RequestId, ok: bool, events: list[ev.Event], why: str = "failed") -> bool:
        """The request ``rid`` was answered (or will never be): end its replays (P19-P21).

        Returns whether ``rid`` was a replay request.
        """
        sessions = self.replays.pop(rid, None)
        self.marks.pop(rid, None)
        if sessions is None:
            return False
        for session in sessions:
            replay = session.tree.replay
            sid = session.session_id
            if replay is None or replay.request_id != rid:
                continue
            if replay.phase == "live":
                session.end_resume()  # the resume window (P19) closes
                continue
            replay.phase = "live"
            if ok and replay.shown:
                self._note(
                    "replay-complete-missing",
                    "session/resume succeeded without replay_complete (P20)",
                    sid,
                )
            elif not ok:
                replay.truncated = True
                if replay.shown:
                    self._note("replay-truncated", f"the replay {why} before its marker (P21)", sid)
            unretained = session.end_replay(ok, why=why)
            events.append(ev.ReplayFinished(session_id=sid, ok=ok, unretained=unretained))
        return True

    def finish_all(self, events: list[ev.Event], why: str) -> None:
        """The connection ended: every replay in flight is truncated (P21, P22)."""
        for rid in list(self.replays):
            self.finish(rid, False, events, why)


def load_tree(node: Node, data: dict[str, Any]) -> None:
    """Restore a snapshot's tree and replay keys (section 4) into ``node``.

    Raises:
        TypeError: a key of the wrong type.
    """
    parent = data.get("parentSessionId")
    if parent is not None:
        if not isinstance(parent, str):
            raise TypeError("parentSessionId: expected a string")
        subagent = data.get("subagent", {})
        if not isinstance(subagent, dict):
            raise TypeError("subagent: expected an object")
        node.parent_id = parent
        node.subagent = dict(subagent)
    children = data.get("children", [])
    if not isinstance(children, list) or not all(isinstance(c, str) for c in children):
        raise TypeError("children: expected an array of strings")
    node.children = list(children)
    replay = data.get("replay")
    if replay is not None:
        if not isinstance(replay, dict) or replay.get("phase") not in ("replaying", "live"):
            raise TypeError("replay: expected an object with phase replaying or live")
        phase = node.replay = ReplayPhase(replay["requestId"])
        phase.phase = replay["phase"]
        phase.complete = bool(replay.get("complete"))
        phase.truncated = bool(replay.get("truncated"))


def _patch(node: Node, update: dict[str, Any]) -> None:
    """PATCH the association (P5, P31): ``null`` clears, a value replaces whole.

    ``_meta`` is META-PATCHed; unknown fields are PATCHed by key (13.2).
    """
    fields = {k: v for k, v in update.items() if k not in _NOT_PATCHED}
    state = fields.get("state")
    if isinstance(state, dict):  # the mirror is stored without its tag
        fields["state"] = {k: v for k, v in state.items() if k != "sessionUpdate"}
    assoc = patch_extra(node.subagent, fields) or {}
    if "_meta" in update:
        meta = meta_patch(assoc.pop("_meta", None), update["_meta"])
        if meta is not None:
            assoc["_meta"] = meta
    node.subagent = assoc


_NOT_PATCHED = frozenset({"_meta", "sessionId", "sessionUpdate"})
