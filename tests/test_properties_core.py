"""Hypothesis properties of the reducer and the connection (ACP-V2-CLIENT-STATE.md
sections 1.7, 2.3, 4, 7, 8, 10.4, 12.3 and SNAPSHOT.md), and a stateful comparison of
:class:`acp_client.Session` with a deliberately simple dict model.

The strategies here are this file's own (small id pools so that ids collide often); they
do not depend on ``acp_client.testing``.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import itertools
import json
import os
from typing import Any

import pytest
from helpers import (
    SID,
    apply,
    chunk,
    line,
    message_entry,
    prompt_request,
    ready,
    request,
    response,
    text,
    update,
)
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from acp_client import Connection, Session, load_session
from acp_client.events import NoticeReceived, UnknownUpdateReceived

# ACP_PROPERTY_SCALE=20 multiplies every example budget (a longer local bug hunt)
SCALE = int(os.environ.get("ACP_PROPERTY_SCALE", "1"))
FAST = settings(
    max_examples=60 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
SLOW = settings(
    max_examples=30 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

OMIT: Any = object()  # a field left out of the update

# load_session keeps terminal first-seen order and where the current work started, so the
# round-trip properties use terminal references and refusals freely.
LOAD_KEEPS_TERMINAL_ORDER = True
LOAD_KEEPS_TURN_START = True


def _names_terminal(u: dict[str, Any]) -> bool:
    content = u.get("content")
    items = content if isinstance(content, list) else [content]
    return any(isinstance(i, dict) and i.get("type") == "terminal" for i in items)


def snap_of(session: Session) -> dict[str, Any]:
    """The SESSION snapshot object of a bare Session."""
    return session.snapshot()


def session_snaps(conn: Connection) -> dict[str, dict[str, Any]]:
    return {s["sessionId"]: s for s in conn.snapshot()["sessions"]}


def feed(updates: list[dict[str, Any]], sid: str = SID) -> Connection:
    conn = Connection(live=False)
    for u in updates:
        conn.receive_message(update(u, sid))
    return conn


def drop_omitted(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not OMIT}


# ------------------------------------------------------------------ strategies

ROLES = ["user", "agent", "thought"]
MIDS = ["m1", "m2", "m3"]
TIDS = ["c1", "c2"]
TERMS = ["t1", "t2"]
PLANS = ["p1", "p2"]
CIDS = ["k1", "k2"]

safe_text = st.text(
    alphabet=st.characters(exclude_categories=("Cs",), max_codepoint=0x1F64F), max_size=4
)
blocks = st.one_of(
    st.builds(text, safe_text),
    st.builds(lambda v: {"type": "_blk", "v": v}, st.integers(0, 9)),
)
block_lists = st.lists(blocks, max_size=3)
meta_values = st.one_of(
    st.none(),
    st.integers(0, 3),
    st.dictionaries(st.sampled_from("xy"), st.one_of(st.none(), st.integers(0, 3)), max_size=2),
)
metas = st.dictionaries(st.sampled_from("abc"), meta_values, max_size=3)


def three(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Omitted, null or a value."""
    return st.one_of(st.just(OMIT), st.none(), values)


def msg_chunk() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda role, mid, block: chunk(role, mid, block),
        st.sampled_from(ROLES),
        st.sampled_from(MIDS),
        blocks,
    )


def msg_upsert() -> st.SearchStrategy[dict[str, Any]]:
    tags = {"user": "user_message", "agent": "agent_message", "thought": "agent_thought"}
    return st.builds(
        lambda role, mid, content, meta, fut: {
            "sessionUpdate": tags[role],
            "messageId": mid,
            **drop_omitted({"content": content, "_meta": meta, "futureX": fut}),
        },
        st.sampled_from(ROLES),
        st.sampled_from(MIDS),
        three(block_lists),
        three(metas),
        three(st.integers(0, 3)),
    )


tool_items = st.one_of(
    st.builds(lambda b: {"type": "content", "content": b}, blocks),
    st.builds(lambda t: {"type": "terminal", "terminalId": t}, st.sampled_from(TERMS)),
    st.builds(lambda v: {"type": "_item", "v": v}, st.integers(0, 9)),
)
locations = st.lists(
    st.one_of(
        st.builds(lambda n: {"path": "/a", "line": n}, st.integers(1, 9)),
        st.just({"path": "/b"}),
    ),
    max_size=2,
)
json_values = st.recursive(
    st.one_of(st.booleans(), st.integers(-3, 3), safe_text),
    lambda inner: st.one_of(
        st.lists(inner, max_size=2), st.dictionaries(st.sampled_from("pq"), inner, max_size=2)
    ),
    max_leaves=4,
)
TOOL_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "title": safe_text,
    "name": safe_text,
    "kind": st.sampled_from(["read", "edit", "other", "_kind"]),
    "status": st.sampled_from(
        ["pending", "in_progress", "paused", "completed", "failed", "cancelled", "_st"]
    ),
    "content": st.lists(tool_items, max_size=2),
    "locations": locations,
    "rawInput": json_values,
    "rawOutput": json_values,
    "_meta": metas,
    "futureX": st.integers(0, 3),
}


def tool_update() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda tid, fields: {
            "sessionUpdate": "tool_call_update",
            "toolCallId": tid,
            **drop_omitted(fields),
        },
        st.sampled_from(TIDS),
        st.fixed_dictionaries({k: three(v) for k, v in TOOL_FIELDS.items()}),
    )


def tool_chunk_update() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda tid, item: {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": tid,
            "content": item,
        },
        st.sampled_from(TIDS),
        tool_items,
    )


TERM_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "command": safe_text,
    "cwd": st.sampled_from(["/w", "/x"]),
    "output": st.builds(lambda b: {"data": base64.b64encode(b).decode()}, st.binary(max_size=4)),
    "exitStatus": st.one_of(st.just({}), st.builds(lambda c: {"exitCode": c}, st.integers(-2, 2))),
    "size": st.builds(lambda c, r: {"cols": c, "rows": r}, st.integers(1, 3), st.integers(1, 3)),
    "_meta": metas,
}


def term_update() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda tid, fields: {
            "sessionUpdate": "terminal_update",
            "terminalId": tid,
            **drop_omitted(fields),
        },
        st.sampled_from(TERMS),
        st.fixed_dictionaries({k: three(v) for k, v in TERM_FIELDS.items()}),
    )


def term_chunk_update() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda tid, data: {
            "sessionUpdate": "terminal_output_chunk",
            "terminalId": tid,
            "data": base64.b64encode(data).decode(),
        },
        st.sampled_from(TERMS),
        st.binary(max_size=4),
    )


def plan_update() -> st.SearchStrategy[dict[str, Any]]:
    entry = st.builds(
        lambda c, p, s: {"content": c, "priority": p, "status": s},
        safe_text,
        st.sampled_from(["high", "low", "_p"]),
        st.sampled_from(["pending", "completed", "_s"]),
    )
    items = st.builds(
        lambda pid, entries: {"type": "items", "planId": pid, "entries": entries},
        st.sampled_from(PLANS),
        st.lists(entry, max_size=2),
    )
    raw = st.builds(lambda pid: {"type": "_plan", "planId": pid, "x": 1}, st.sampled_from(PLANS))
    return st.builds(lambda p: {"sessionUpdate": "plan_update", "plan": p}, st.one_of(items, raw))


def compaction_update() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda cid, status, summary, err, meta: {
            "sessionUpdate": "compaction_update",
            "compactionId": cid,
            "status": status,
            **drop_omitted({"summary": summary, "error": err, "_meta": meta}),
        },
        st.sampled_from(CIDS),
        st.sampled_from(["in_progress", "completed", "_c"]),
        three(block_lists),
        three(safe_text),
        three(metas),
    )


def compaction_chunk() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda cid, b: {
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": cid,
            "content": b,
        },
        st.sampled_from(CIDS),
        blocks,
    )


entity_updates = st.one_of(
    msg_chunk(),
    msg_upsert(),
    tool_update(),
    tool_chunk_update(),
    term_update(),
    term_chunk_update(),
    plan_update(),
    compaction_update(),
    compaction_chunk(),
)

session_level_updates = st.one_of(
    st.sampled_from(
        [
            {"sessionUpdate": "state_update", "state": "running"},
            {"sessionUpdate": "state_update", "state": "requires_action"},
            {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
            {"sessionUpdate": "state_update", "state": "idle", "stopReason": "refusal"},
            {"sessionUpdate": "state_update", "state": "idle"},
            {"sessionUpdate": "state_update", "state": "_custom", "x": 1},
            {"sessionUpdate": "state_update", "state": "running", "background": []},
            {"sessionUpdate": "notice", "severity": "info", "title": "n"},
            {"sessionUpdate": "_acme_unknown", "v": [1, None]},
            {
                "sessionUpdate": "available_commands_update",
                "availableCommands": [{"type": "command", "name": "x", "description": "X"}],
            },
            {
                "sessionUpdate": "config_option_update",
                "configOptions": [
                    {"type": "boolean", "configId": "b", "name": "B", "currentValue": True}
                ],
            },
        ]
    ),
    st.builds(
        lambda t, m: {
            "sessionUpdate": "session_info_update",
            **drop_omitted({"title": t, "_meta": m}),
        },
        three(safe_text),
        three(metas),
    ),
    st.builds(
        lambda used, cost: {
            "sessionUpdate": "usage_update",
            "used": used,
            "size": 100,
            **drop_omitted({"cost": cost}),
        },
        st.integers(0, 100),
        three(st.just({"amount": 1.5, "currency": "USD"})),
    ),
)

any_update = st.one_of(entity_updates, entity_updates, session_level_updates)
conversations = st.lists(any_update, max_size=20)


# ------------------------------------------------------------------ the dict model


def model_meta(stored: dict[str, Any], value: Any) -> dict[str, Any]:
    if value is OMIT:
        return stored
    if value is None:
        return {}
    out = dict(stored)
    for key, item in value.items():
        if item is None:
            out.pop(key, None)
        else:
            out[key] = item
    return out


class Model:
    """Plain dicts: timeline keys in first-seen order, entities by key, terminals, plans."""

    def __init__(self) -> None:
        self.order: list[tuple[str, str]] = []
        self.entities: dict[tuple[str, str], dict[str, Any]] = {}
        self.terminals: dict[str, dict[str, Any]] = {}
        self.plans: dict[str, Any] = {}

    def _entity(self, key: tuple[str, str], **init: Any) -> dict[str, Any]:
        if key not in self.entities:
            self.order.append(key)
            self.entities[key] = {"meta": {}, "extra": {}, **init}
        return self.entities[key]

    def _terminal(self, tid: str) -> dict[str, Any]:
        if tid not in self.terminals:
            self.terminals[tid] = {"fields": {}, "out": b"", "meta": {}}
        return self.terminals[tid]

    def _refs(self, items: list[Any]) -> None:
        for item in items:
            if item.get("type") == "terminal":
                self._terminal(item["terminalId"])

    def apply(self, u: dict[str, Any]) -> None:
        kind = u["sessionUpdate"]
        get = lambda k: u.get(k, OMIT)  # noqa: E731
        if kind.endswith("_chunk") and kind.startswith(("user", "agent")):
            role = {"user_message_chunk": "user", "agent_message_chunk": "agent"}.get(
                kind, "thought"
            )
            self._entity((role, u["messageId"]), content=[])["content"].append(u["content"])
        elif kind in ("user_message", "agent_message", "agent_thought"):
            role = {"user_message": "user", "agent_message": "agent"}.get(kind, "thought")
            e = self._entity((role, u["messageId"]), content=[])
            if get("content") is not OMIT:
                e["content"] = list(u["content"] or [])
            e["meta"] = model_meta(e["meta"], get("_meta"))
            if get("futureX") is not OMIT:
                if u["futureX"] is None:
                    e["extra"].pop("futureX", None)
                else:
                    e["extra"]["futureX"] = u["futureX"]
        elif kind == "tool_call_update":
            e = self._entity(("toolCall", u["toolCallId"]), fields={}, content=[], locations=[])
            for f in ("title", "name", "kind", "status", "rawInput", "rawOutput", "futureX"):
                if get(f) is OMIT:
                    continue
                if u[f] is None:
                    e["fields"].pop(f, None)
                else:
                    e["fields"][f] = u[f]
            if get("content") is not OMIT:
                e["content"] = list(u["content"] or [])
                self._refs(e["content"])
            if get("locations") is not OMIT:
                e["locations"] = list(u["locations"] or [])
            e["meta"] = model_meta(e["meta"], get("_meta"))
        elif kind == "tool_call_content_chunk":
            e = self._entity(("toolCall", u["toolCallId"]), fields={}, content=[], locations=[])
            e["content"].append(u["content"])
            self._refs([u["content"]])
        elif kind == "terminal_update":
            t = self._terminal(u["terminalId"])
            for f in ("command", "cwd", "exitStatus", "size"):
                if get(f) is OMIT:
                    continue
                if u[f] is None:
                    t["fields"].pop(f, None)
                else:
                    t["fields"][f] = u[f]
            if get("output") is not OMIT:
                t["out"] = base64.b64decode(u["output"]["data"]) if u["output"] else b""
            t["meta"] = model_meta(t["meta"], get("_meta"))
        elif kind == "terminal_output_chunk":
            self._terminal(u["terminalId"])["out"] += base64.b64decode(u["data"])
        elif kind == "plan_update":
            self.plans[u["plan"]["planId"]] = u["plan"]
        elif kind == "compaction_update":
            e = self._entity(("compaction", u["compactionId"]), summary=[], fields={})
            e["fields"]["status"] = u["status"]
            if get("summary") is not OMIT:
                e["summary"] = list(u["summary"] or [])
            if get("error") is not OMIT:
                if u["error"] is None:
                    e["fields"].pop("error", None)
                else:
                    e["fields"]["error"] = u["error"]
            e["meta"] = model_meta(e["meta"], get("_meta"))
        elif kind == "compaction_summary_chunk":
            e = self._entity(
                ("compaction", u["compactionId"]), summary=[], fields={"status": "in_progress"}
            )
            e["summary"].append(u["content"])

    def timeline(self) -> list[dict[str, Any]]:
        out = []
        for key in self.order:
            e = self.entities[key]
            if key[0] == "toolCall":
                f = e["fields"]
                d: dict[str, Any] = {"entry": "toolCall", "toolCallId": key[1]}
                for name in ("title", "name"):
                    if name in f:
                        d[name] = f[name]
                d["kind"] = f.get("kind", "other")
                d["status"] = f.get("status", "pending")
                d["content"] = e["content"]
                d["locations"] = e["locations"]
                for name in ("rawInput", "rawOutput", "futureX"):
                    if name in f:
                        d[name] = f[name]
            elif key[0] == "compaction":
                d = {
                    "entry": "compaction",
                    "compactionId": key[1],
                    **e["fields"],
                    "summary": e["summary"],
                }
            else:
                d = {
                    "entry": "message",
                    "messageId": key[1],
                    "role": key[0],
                    "content": e["content"],
                    **e["extra"],
                }
            if e["meta"]:
                d["_meta"] = e["meta"]
            out.append(d)
        return out

    def terminal_list(self) -> list[dict[str, Any]]:
        out = []
        for tid, t in self.terminals.items():
            d = {
                "terminalId": tid,
                **t["fields"],
                "output": base64.b64encode(t["out"]).decode(),
                "truncatedBytes": 0,
            }
            if t["meta"]:
                d["_meta"] = t["meta"]
            out.append(d)
        return out

    def plan_list(self) -> list[dict[str, Any]]:
        return [{"planId": pid, "plan": plan} for pid, plan in self.plans.items()]


def check_against_model(session: Session, model: Model) -> None:
    snap = snap_of(session)
    # the model does not follow foreground state, so not the refusal exclusion (R14) either
    timeline = [
        {k: v for k, v in e.items() if k != "excludedFromContext"} for e in snap["timeline"]
    ]
    assert timeline == model.timeline()
    assert snap["terminals"] == model.terminal_list()
    assert snap["plans"] == model.plan_list()


class SessionVersusModel(RuleBasedStateMachine):
    """Random entity updates applied to a Session and to the dict model, compared each step."""

    def __init__(self) -> None:
        super().__init__()
        self.session = Session(SID)
        self.model = Model()
        self.terminal_referenced = False

    @rule(u=entity_updates)
    def apply_update(self, u: dict[str, Any]) -> None:
        apply(self.session, u)
        self.model.apply(u)
        self.terminal_referenced |= _names_terminal(u)

    @rule(u=session_level_updates)
    def apply_session_level(self, u: dict[str, Any]) -> None:
        apply(self.session, u)

    @precondition(lambda self: LOAD_KEEPS_TERMINAL_ORDER or not self.terminal_referenced)
    @rule()
    def reload(self) -> None:
        self.session = load_session(copy.deepcopy(snap_of(self.session)))

    @invariant()
    def same_as_model(self) -> None:
        check_against_model(self.session, self.model)


SessionVersusModel.TestCase.settings = settings(
    max_examples=40 * SCALE,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_session_matches_the_dict_model = SessionVersusModel.TestCase


@FAST
@given(conversations)
def test_model_agrees_on_whole_conversations(convo: list[dict[str, Any]]) -> None:
    session = Session(SID)
    model = Model()
    for u in convo:
        apply(session, u)
        model.apply(u)
    check_against_model(session, model)


# ------------------------------------------------------------------ chunking


@FAST
@given(st.lists(blocks, min_size=1, max_size=6), st.data())
def test_any_chunking_of_message_content_gives_the_same_content(
    content: list[Any], data: st.DataObject
) -> None:
    role = data.draw(st.sampled_from(ROLES))
    whole = feed(
        [
            {
                "sessionUpdate": {
                    "user": "user_message",
                    "agent": "agent_message",
                    "thought": "agent_thought",
                }[role],
                "messageId": "m",
                "content": content,
            }
        ]
    )
    prefix = data.draw(st.integers(0, len(content)))
    head = (
        [
            {
                "sessionUpdate": {
                    "user": "user_message",
                    "agent": "agent_message",
                    "thought": "agent_thought",
                }[role],
                "messageId": "m",
                "content": content[:prefix],
            }
        ]
        if data.draw(st.booleans())
        else []
    )
    rest = content[len(head) and prefix :]
    chunked = feed(head + [chunk(role, "m", b) for b in rest])
    expected = message_entry(role, "m", *content)
    assert session_snaps(chunked)[SID]["timeline"] == [expected]
    assert session_snaps(whole)[SID]["timeline"] == [expected]


@FAST
@given(safe_text.filter(bool), st.lists(st.integers(0, 100), max_size=5))
def test_splitting_text_across_chunks_keeps_the_text(body: str, cuts: list[int]) -> None:
    points = sorted({c % (len(body) + 1) for c in cuts} | {0, len(body)})
    pieces = [body[a:b] for a, b in itertools.pairwise(points)] or [body]
    session = Session(SID)
    for piece in pieces:
        apply(session, chunk("agent", "m", piece))
    m = session.message("agent", "m")
    assert m is not None and m.text() == body
    assert len(m.content) == len(pieces)


@FAST
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("chunk"), blocks),
            st.tuples(st.just("replace"), st.one_of(st.none(), block_lists)),
            st.tuples(st.just("meta"), metas),
        ),
        max_size=12,
    )
)
def test_replace_and_append_follow_arrival_order(ops: list[tuple[str, Any]]) -> None:
    expected: list[Any] = []
    updates = []
    for op, value in ops:
        if op == "chunk":
            updates.append(chunk("agent", "m", value))
            expected.append(value)
        elif op == "replace":
            updates.append({"sessionUpdate": "agent_message", "messageId": "m", "content": value})
            expected = list(value or [])
        else:
            updates.append({"sessionUpdate": "agent_message", "messageId": "m", "_meta": value})
    conn = feed(updates)
    if ops:
        assert session_snaps(conn)[SID]["timeline"][0]["content"] == expected


@FAST
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("chunk"), tool_items),
            st.tuples(st.just("replace"), st.one_of(st.none(), st.lists(tool_items, max_size=2))),
        ),
        min_size=1,
        max_size=10,
    )
)
def test_tool_call_replace_and_append_follow_arrival_order(ops: list[tuple[str, Any]]) -> None:
    expected: list[Any] = []
    updates = []
    for op, value in ops:
        if op == "chunk":
            updates.append(
                {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c", "content": value}
            )
            expected.append(value)
        else:
            updates.append(
                {"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": value}
            )
            expected = list(value or [])
    assert session_snaps(feed(updates))[SID]["timeline"][0]["content"] == expected


def _interleave(seqs: list[list[Any]], order: list[int]) -> list[Any]:
    iters = [iter(s) for s in seqs]
    return [next(iters[i]) for i in order]


def _by_id(snap: dict[str, Any]) -> dict[str, Any]:
    out = dict(snap)
    out["timeline"] = {
        (
            e["entry"],
            e.get("role"),
            e.get("messageId") or e.get("toolCallId") or e.get("compactionId"),
        ): e
        for e in snap["timeline"]
    }
    out["terminals"] = {t["terminalId"]: t for t in snap["terminals"]}
    out["plans"] = {p["planId"]: p for p in snap["plans"]}
    return out


def _entity_key(u: dict[str, Any]) -> tuple[str, str]:
    kind = u["sessionUpdate"]
    if "messageId" in u:
        role = "user" if kind.startswith("user") else ("thought" if "thought" in kind else "agent")
        return (role, u["messageId"])
    if "toolCallId" in u:
        return ("tool", u["toolCallId"])
    if "terminalId" in u:
        return ("term", u["terminalId"])
    if "compactionId" in u:
        return ("comp", u["compactionId"])
    return ("plan", u["plan"]["planId"])


@FAST
@given(st.lists(entity_updates, max_size=16), st.randoms(use_true_random=False))
def test_updates_for_different_ids_commute(updates: list[dict[str, Any]], rnd: Any) -> None:
    # tool content may name terminals: keep terminal references out of this property,
    # since a reference and a terminal update are two entities touching one terminal
    updates = [
        u
        for u in updates
        if "terminal" not in repr(u.get("content", ""))
        and "terminal" not in repr(u.get("content", []))
    ]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for u in updates:
        groups.setdefault(_entity_key(u), []).append(u)
    seqs = list(groups.values())
    order = [i for i, s in enumerate(seqs) for _ in s]
    rnd.shuffle(order)
    a = session_snaps(feed(updates))
    b = session_snaps(feed(_interleave(seqs, order)))
    assert {k: _by_id(v) for k, v in a.items()} == {k: _by_id(v) for k, v in b.items()}


# ------------------------------------------------------------------ terminals


@FAST
@given(
    st.one_of(
        st.binary(max_size=24),
        safe_text.map(str.encode),
        st.text(max_size=8).map(lambda t: t.encode("utf-8", "surrogatepass")),
    ),
    st.lists(st.integers(0, 200), max_size=8),
    st.booleans(),
)
def test_any_chunking_of_terminal_bytes_gives_the_same_bytes_and_text(
    data: bytes, cuts: list[int], with_snapshot: bool
) -> None:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    pieces = [data[a:b] for a, b in itertools.pairwise(points)] or [data]
    one = Session(SID)
    many = Session(SID)
    if with_snapshot:
        for s in (one, many):
            apply(
                s,
                {
                    "sessionUpdate": "terminal_output_chunk",
                    "terminalId": "t",
                    "data": base64.b64encode(b"\xf0\x9f").decode(),
                },
            )
            apply(
                s,
                {
                    "sessionUpdate": "terminal_update",
                    "terminalId": "t",
                    "output": {"data": base64.b64encode(b"S").decode()},
                },
            )
    apply(
        one,
        {
            "sessionUpdate": "terminal_output_chunk",
            "terminalId": "t",
            "data": base64.b64encode(data).decode(),
        },
    )
    for piece in pieces:
        apply(
            many,
            {
                "sessionUpdate": "terminal_output_chunk",
                "terminalId": "t",
                "data": base64.b64encode(piece).decode(),
            },
        )
        many.terminals["t"].text()  # decode incrementally between chunks
    prefix = b"S" if with_snapshot else b""
    assert many.terminals["t"].output == one.terminals["t"].output == prefix + data
    assert many.terminals["t"].text() == one.terminals["t"].text()
    # an incomplete sequence at the very end is held back (the next chunk may complete it)
    assert (prefix + data).decode("utf-8", "replace").startswith(one.terminals["t"].text())
    with contextlib.suppress(UnicodeDecodeError):
        assert one.terminals["t"].text() == (prefix + data).decode("utf-8")
    assert snap_of(many)["terminals"] == snap_of(one)["terminals"]


# ------------------------------------------------------------------ patch rule


@FAST
@given(
    st.fixed_dictionaries({k: three(v) for k, v in TOOL_FIELDS.items()}),
    st.fixed_dictionaries({k: three(v) for k, v in TOOL_FIELDS.items()}),
)
def test_omitted_field_changes_nothing_and_null_clears(
    first: dict[str, Any], second: dict[str, Any]
) -> None:
    base = {"sessionUpdate": "tool_call_update", "toolCallId": "c"}
    conn = feed([{**base, **drop_omitted(first)}])
    before = session_snaps(conn)[SID]["timeline"][0]
    conn.receive_message(update({**base, **drop_omitted(second)}))
    after = session_snaps(conn)[SID]["timeline"][0]
    defaults = {"kind": "other", "status": "pending", "content": [], "locations": []}
    for field, value in second.items():
        if value is OMIT:
            assert after.get(field) == before.get(field), field
        elif value is None:
            assert after.get(field) == defaults.get(field), field
        elif field == "_meta":
            expected = model_meta(before.get("_meta", {}), value)
            assert after.get("_meta", {}) == expected
        else:
            assert after[field] == value, field


@FAST
@given(
    st.fixed_dictionaries({k: three(v) for k, v in TERM_FIELDS.items()}),
    st.fixed_dictionaries({k: three(v) for k, v in TERM_FIELDS.items()}),
)
def test_terminal_omitted_field_changes_nothing_and_null_clears(
    first: dict[str, Any], second: dict[str, Any]
) -> None:
    base = {"sessionUpdate": "terminal_update", "terminalId": "t"}
    conn = feed([{**base, **drop_omitted(first)}])
    before = session_snaps(conn)[SID]["terminals"][0]
    conn.receive_message(update({**base, **drop_omitted(second)}))
    after = session_snaps(conn)[SID]["terminals"][0]
    for field, value in second.items():
        if value is OMIT:
            assert after.get(field) == before.get(field), field
        elif value is None:
            assert after.get(field) == ("" if field == "output" else None), field
        elif field == "output":
            assert after["output"] == value["data"]
        elif field == "_meta":
            assert after.get("_meta", {}) == model_meta(before.get("_meta", {}), value)
        else:
            assert after[field] == value, field


# ------------------------------------------------------------------ snapshot round trip


def _with_prompts_and_permissions(convo: list[dict[str, Any]], data: st.DataObject) -> Connection:
    conn = Connection(live=False)
    rid = 0
    for u in convo:
        conn.receive_message(update(u))
        extra = data.draw(st.sampled_from(["none", "none", "prompt", "answer", "perm"]))
        if extra == "prompt":
            rid += 1
            conn.receive_message(prompt_request(rid), "outgoing")
            mid = data.draw(st.sampled_from(MIDS))
            if data.draw(st.booleans()):
                conn.receive_message(response(rid, {"messageId": mid}))
            else:
                conn.receive_message(
                    {"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "no"}}
                )
        elif extra == "perm":
            rid += 1
            conn.receive_message(
                request(
                    1000 + rid,
                    "session/request_permission",
                    {
                        "sessionId": SID,
                        "title": "t",
                        "options": [{"optionId": "o", "name": "O", "kind": "allow_once"}],
                        "subject": {"type": "tool_call", "toolCall": {"toolCallId": "c1"}},
                    },
                )
            )
            if data.draw(st.booleans()):
                conn.receive_message(
                    response(1000 + rid, {"outcome": {"outcome": "selected", "optionId": "o"}}),
                    "outgoing",
                )
    return conn


reloadable = conversations.map(
    lambda c: c if LOAD_KEEPS_TERMINAL_ORDER else [u for u in c if not _names_terminal(u)]
)


@given(st.lists(st.one_of(entity_updates, session_level_updates), max_size=25))
def test_notices_and_unknown_updates_keep_the_ordinal_they_arrived_at(
    updates: list[dict[str, Any]],
) -> None:
    # 2.2 / 9.6 / 13.1: each is recorded with its ordinal, whatever came between them; the
    # ordinal of an update is its place in the stream (every applied update takes one).
    session = Session(SID)
    notices: list[int] = []
    unknown: list[int] = []
    for place, u in enumerate(updates, 1):
        event = apply(session, u)
        if isinstance(event, NoticeReceived):
            notices.append(place)
        elif isinstance(event, UnknownUpdateReceived):
            unknown.append(place)
    assert list(session.notice_ordinals) == notices
    assert list(session.unknown_update_ordinals) == unknown
    assert len(session.notices) == len(notices) and len(session.unknown_updates) == len(unknown)
    loaded = load_session(copy.deepcopy(snap_of(session)))
    # a snapshot keeps no ordinals: they are placed after everything the load rebuilt
    assert list(loaded.notice_ordinals) == [loaded.ordinal] * len(notices)
    assert list(loaded.unknown_update_ordinals) == [loaded.ordinal] * len(unknown)


@SLOW
@given(reloadable, st.data())
def test_snapshot_load_snapshot_is_the_identity(
    convo: list[dict[str, Any]], data: st.DataObject
) -> None:
    conn = _with_prompts_and_permissions(convo, data)
    original = session_snaps(conn).get(SID)
    if original is None:
        return
    restored = snap_of(load_session(copy.deepcopy(original)))
    assert restored == original


def test_load_session_keeps_the_current_work_start() -> None:
    original = Session(SID)
    for u in ({"sessionUpdate": "state_update", "state": "running"}, chunk("user", "u1", "x")):
        apply(original, u)
    loaded = load_session(copy.deepcopy(snap_of(original)))
    refusal = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "refusal"}
    apply(original, refusal)
    apply(loaded, refusal)
    assert snap_of(original)["timeline"][0]["excludedFromContext"] is True
    assert snap_of(loaded) == snap_of(original)


RUNNING = {"sessionUpdate": "state_update", "state": "running"}
REFUSAL = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "refusal"}
END_TURN = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}


def _load_midway(
    head: list[dict[str, Any]], tail: list[dict[str, Any]], *, skip_guessed: bool = False
) -> None:
    """Apply ``head``, snapshot, load, apply ``tail`` to both: the same snapshot.

    ``skip_guessed``: pass over a head whose current work started somewhere the load cannot
    know (see the xfail tests below): the load guesses the last user message.
    """
    original = Session(SID)
    for u in head:
        apply(original, u)
    if skip_guessed:
        assume(not _defeats_the_guess(original))
    loaded = load_session(copy.deepcopy(snap_of(original)))
    for u in tail:
        apply(original, u)
        apply(loaded, u)
    assert snap_of(loaded) == snap_of(original)


def _defeats_the_guess(session: Session) -> bool:
    """Whether a refusal would mark from another user message than the load guesses (R14).

    During work the load takes the last user message as where the work started; a work
    that started before an older user message (no state before ``running``: the whole
    timeline is the work; or chunks of an old prompt echoed again) marks from the first.
    """
    tl, fg = session.parts()
    if session.state is None or session.state.state == "idle":
        return False
    return tl.first_user_index(fg.turn_start) != tl.last_user_index()


def test_load_session_without_a_state_keeps_the_whole_timeline_as_current_work() -> None:
    # No state_update yet (a session/new session's first prompt, echoed before running):
    # live, nothing has ended, so the refusal marks from the first user message.
    _load_midway(
        [chunk("agent", "a0", "hello"), chunk("user", "u1", "x")],
        [RUNNING, chunk("agent", "a1", "y"), REFUSAL],
    )


# SNAPSHOT@1 has no position for the start of the current work, so load_session guesses it:
# after everything when idle, the last user message during work. These cuts (and a third,
# after the property below) defeat the guess (a field in the snapshot format would fix them;
# the README says so at load_session).
@pytest.mark.xfail(strict=True, reason="snapshot@1 does not record where the work started")
def test_load_session_idle_between_an_echo_and_its_running() -> None:
    _load_midway(
        [chunk("user", "u0", "x"), RUNNING, END_TURN, chunk("user", "u1", "x")],
        [RUNNING, chunk("agent", "a1", "y"), REFUSAL],
    )


@pytest.mark.xfail(strict=True, reason="snapshot@1 does not record where the work started")
def test_load_session_during_work_the_agent_started_after_a_turn() -> None:
    _load_midway(
        [chunk("user", "u0", "x"), RUNNING, chunk("agent", "a0", "y"), END_TURN, RUNNING],
        [chunk("agent", "a1", "z"), REFUSAL],
    )


continuations = conversations.map(
    lambda c: c if LOAD_KEEPS_TURN_START else [u for u in c if u.get("stopReason") != "refusal"]
)


@SLOW
@given(reloadable, continuations)
def test_loaded_session_keeps_applying_like_the_original(
    head: list[dict[str, Any]], tail: list[dict[str, Any]]
) -> None:
    _load_midway(head, tail, skip_guessed=True)


@pytest.mark.xfail(strict=True, reason="snapshot@1 does not record where the work started")
def test_load_session_during_work_that_began_before_the_last_user_message() -> None:
    # Drawn by the property above (it failed there before skip_guessed): no state before
    # `running`, so the work is the whole timeline and a refusal marks from m1; the
    # snapshot says only "running", and the load marks from m2, the last user message.
    head = [chunk("user", "m1", "a"), chunk("user", "m2", "b"), RUNNING, chunk("user", "m1", "c")]
    _load_midway(head, [REFUSAL])


def test_load_session_keeps_terminal_first_seen_order() -> None:
    session = Session(SID)
    apply(session, {"sessionUpdate": "terminal_update", "terminalId": "t2"})
    apply(
        session,
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "c1",
            "content": {"type": "terminal", "terminalId": "t1"},
        },
    )
    original = snap_of(session)
    assert [t["terminalId"] for t in original["terminals"]] == ["t2", "t1"]
    assert snap_of(load_session(copy.deepcopy(original))) == original


# ------------------------------------------------------------------ byte stream


@SLOW
@given(conversations, st.lists(st.integers(0, 10_000), max_size=12))
def test_splitting_the_byte_stream_anywhere_gives_the_same_events(
    convo: list[dict[str, Any]], cuts: list[int]
) -> None:
    data = b"".join(line(update(u)) for u in convo)
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    whole = Connection()
    expected = whole.receive_data(data)
    split = Connection()
    got = []
    for a, b in itertools.pairwise(points):
        got += split.receive_data(data[a:b])
    assert got == expected
    assert split.snapshot() == whole.snapshot()


# ------------------------------------------------------------------ prompt echo order


@SLOW
@given(st.lists(entity_updates, max_size=8), st.data())
def test_prompt_response_and_user_message_in_either_order(
    others: list[dict[str, Any]], data: st.DataObject
) -> None:
    echo_at = data.draw(st.integers(0, len(others)))
    stream: list[Any] = [update(u) for u in others]
    stream.insert(echo_at, update(chunk("user", "u_p", "hi")))
    snaps = []
    for resp_at in range(len(stream) + 1):
        conn = Connection(live=False)
        conn.receive_message(prompt_request(1), "outgoing")
        msgs = list(stream)
        msgs.insert(resp_at, response(1, {"messageId": "u_p"}))
        for m in msgs:
            conn.receive_message(m)
        snaps.append(session_snaps(conn)[SID])
    assert all(s == snaps[0] for s in snaps)
    assert snaps[0]["prompts"] == [
        {"requestId": 1, "status": "accepted", "messageId": "u_p", "echoed": True}
    ]


# ------------------------------------------------------------------ several sessions


@SLOW
@given(st.lists(conversations, min_size=2, max_size=3), st.randoms(use_true_random=False))
def test_interleaved_sessions_equal_each_session_alone(
    convos: list[list[dict[str, Any]]], rnd: Any
) -> None:
    sids = [f"s{i}" for i in range(len(convos))]
    alone = {}
    for sid, convo in zip(sids, convos, strict=True):
        snaps = session_snaps(feed(convo, sid))
        if sid in snaps:
            alone[sid] = snaps[sid]
    order = [i for i, c in enumerate(convos) for _ in c]
    rnd.shuffle(order)
    mixed = Connection(live=False)
    tagged = [[(sids[i], u) for u in c] for i, c in enumerate(convos)]
    for sid, u in _interleave(tagged, order):
        mixed.receive_message(update(u, sid))
    assert session_snaps(mixed) == alone


# ------------------------------------------------------------------ replay


def _history_of(snap: dict[str, Any]) -> list[dict[str, Any]]:
    """The retained history of a SESSION snapshot, as one upsert per entity."""
    tags = {"user": "user_message", "agent": "agent_message", "thought": "agent_thought"}
    out: list[dict[str, Any]] = []
    for e in snap["timeline"]:
        # (a live refusal's mark is local state, not a field the agent sends: R14)
        body = {k: v for k, v in e.items() if k not in ("entry", "role", "excludedFromContext")}
        if e["entry"] == "message":
            out.append({"sessionUpdate": tags[e["role"]], **body})
        elif e["entry"] == "toolCall":
            out.append({"sessionUpdate": "tool_call_update", **body})
        else:
            out.append({"sessionUpdate": "compaction_update", **body})
    for t in snap["terminals"]:
        body = {k: v for k, v in t.items() if k not in ("output", "truncatedBytes")}
        out.append({"sessionUpdate": "terminal_update", **body, "output": {"data": t["output"]}})
    for p in snap["plans"]:
        out.append({"sessionUpdate": "plan_update", "plan": p["plan"]})
    return out


def _without_exclusion(timeline: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "excludedFromContext"} for e in timeline]


@SLOW
@given(conversations, st.booleans(), st.booleans())
@example(  # a refusal excluded the user message (found by this property)
    [
        chunk("user", "m1", ""),
        {"sessionUpdate": "state_update", "state": "running"},
        chunk("user", "m1", ""),
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "refusal"},
    ],
    False,
    False,
)
@example(  # the same, replayed from the snapshot's compact history (found by this property)
    [
        {"sessionUpdate": "state_update", "state": "running"},
        chunk("user", "m1", ""),
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "refusal"},
    ],
    True,
    False,
)
def test_full_replay_after_a_live_session_leaves_the_timeline_unchanged(
    convo: list[dict[str, Any]], compact: bool, reset: bool
) -> None:
    conn = ready(SID)
    conn.receive_data(b"".join(line(update(u)) for u in convo))
    before = session_snaps(conn)[SID]
    if compact:
        history = _history_of(before)
    else:
        history = [
            u
            for u in convo
            if u["sessionUpdate"]
            not in (
                "state_update",
                "notice",
                "usage_update",
                "session_info_update",
                "available_commands_update",
                "config_option_update",
            )
            and not u["sessionUpdate"].startswith("_")
        ]
        if reset:  # the agent's own reset before each chunked message
            tags = {
                "user_message_chunk": "user_message",
                "agent_message_chunk": "agent_message",
                "agent_thought_chunk": "agent_thought",
            }
            seen: set[tuple[str, str]] = set()
            with_reset = []
            for u in history:
                tag = tags.get(u["sessionUpdate"])
                if tag and (tag, u["messageId"]) not in seen:
                    seen.add((tag, u["messageId"]))
                    with_reset.append(
                        {"sessionUpdate": tag, "messageId": u["messageId"], "content": []}
                    )
                with_reset.append(u)
            history = with_reset
    rid, _ = conn.send_resume(SID, "/w")
    resume_snapshot = (
        [{"sessionUpdate": "state_update", **before["state"]}] if "state" in before else []
    )
    conn.receive_data(b"".join(line(update(u)) for u in history + resume_snapshot))
    conn.receive_data(line(response(rid, {})))
    after = session_snaps(conn)[SID]
    # A live refusal's exclusion marks (R14) are not restored: the replayed state is
    # authoritative (12.3 step 3) and a replayed idle records nothing (6.3).
    assert after["timeline"] == _without_exclusion(before["timeline"])
    assert after["unretained"] == []
    if compact:  # the compact history re-sends terminals after the tool calls naming them
        assert _by_id(after)["terminals"] == _by_id(before)["terminals"]
    else:
        assert after["terminals"] == before["terminals"]
    assert after["plans"] == before["plans"]
    assert after["completedTurns"] == before["completedTurns"]
    assert after.get("state") == before.get("state")


def test_a_loaded_snapshot_keeps_the_truncation_count() -> None:
    # SNAPSHOT.md: "a snapshot read back restores the same state" (truncatedBytes)
    import base64

    from acp_client import Decoder, Session, load_session

    session = Session("s", terminal_limit=10)
    data = base64.b64encode(b"x" * 5000).decode()
    line = {
        "sessionId": "s",
        "update": {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": data},
    }
    raw = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": line})
    session.apply(Decoder().decode(raw.encode()).params.update)
    snap = session.snapshot()
    assert snap["terminals"][0]["truncatedBytes"] == 4990
    loaded = load_session(snap, terminal_limit=10)
    assert loaded.terminals["t"].truncated_bytes == 4990
    assert loaded.snapshot() == snap


def test_a_loaded_snapshot_still_waits_for_an_accepted_prompts_echo() -> None:
    # 10.4 response first: the first update for the id links the submission (placed),
    # also when the state was saved and loaded in between.
    from acp_client import Connection, Decoder, load_session
    from acp_client.events import PromptEchoed

    conn = Connection(live=False)
    request = {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}
    conn.receive_message(
        {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": request}, "outgoing"
    )
    conn.receive_message({"jsonrpc": "2.0", "id": 1, "result": {"messageId": "u1"}})
    loaded = load_session(conn.session("s").snapshot())
    echo = {
        "sessionUpdate": "user_message",
        "messageId": "u1",
        "content": [{"type": "text", "text": "hi"}],
    }
    raw = json.dumps(
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": echo}}
    )
    loaded.apply(Decoder().decode(raw.encode()).params.update)
    assert loaded.snapshot()["prompts"][0]["echoed"] is True
    assert [type(e) for e in loaded.side_events] == [PromptEchoed]
