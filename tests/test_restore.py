"""Connection.restore: a snapshot back into a live connection that goes on (R90, R91, R92).

Round trips (every transcript, generated conversations: the same bytes back), continuing
after a restore gives the state of never having stopped, and the examples of the rules:
prompts of unknown outcome (R90), stale permission requests (R91), the new connection the
first ``initialize`` starts, and the seeded v1 adapter (R92).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    INFO,
    SID,
    chunk,
    line,
    prompt_request,
    ready,
    request,
    response,
    update,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_client import Connection, LocalProtocolError, replay_log
from acp_client import schema as s
from acp_client._v1.restore import seed_adapter
from acp_client._v1.translate import initialize_result
from acp_client.testing.strategies import conversations, v1_streams
from acp_client.v1 import V1Adapter

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TRANSCRIPTS = Path(__file__).resolve().parent / "transcripts"
LOGS = sorted(
    p
    for p in TRANSCRIPTS.iterdir()
    if p.suffix in (".jsonl", ".json") and ".snapshot" not in p.name
)
RUNNING = {"sessionUpdate": "state_update", "state": "running"}
END_TURN = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
PERMISSION = {
    "sessionId": SID,
    "title": "t",
    "options": [{"optionId": "o", "name": "O", "kind": "allow_once"}],
    "subject": {"type": "tool_call", "toolCall": {"toolCallId": "c1"}},
}


def encoded(snapshot: dict[str, Any]) -> str:
    """The snapshot as JSON text, key order included (byte-identical means this)."""
    return json.dumps(snapshot, ensure_ascii=False)


# ------------------------------------------------------------------ round trips


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.stem)
@pytest.mark.parametrize("live", [True, False])
def test_every_transcript_restores_to_the_same_bytes(log: Path, live: bool) -> None:
    snap = replay_log(str(log)).snapshot()
    restored = Connection.restore(json.loads(encoded(snap)), live=live)
    assert encoded(restored.snapshot()) == encoded(snap)
    # and again: a restored connection's snapshot restores to itself
    again = Connection.restore(restored.snapshot(), live=live)
    assert encoded(again.snapshot()) == encoded(snap)


def _feed(conn: Connection, exchange: list[tuple[str, Any]]) -> None:
    for direction, message in exchange:
        conn.receive_message(message, direction)  # type: ignore[arg-type]


@SETTINGS
@given(conversations(resume=None, close=None))
def test_generated_conversations_restore_to_the_same_bytes(
    exchange: list[tuple[str, Any]],
) -> None:
    conn = Connection(live=False)
    _feed(conn, exchange)
    snap = conn.snapshot()
    assert encoded(Connection.restore(snap, live=False).snapshot()) == encoded(snap)
    assert encoded(Connection.restore(snap).snapshot()) == encoded(snap)


def _initialize_result(exchange: list[tuple[str, Any]]) -> Any:
    """The agent's answer to ``initialize`` in ``exchange`` (what a host keeps), if any."""
    asked = [m["id"] for d, m in exchange if d == "outgoing" and m.get("method") == "initialize"]
    for direction, message in exchange:
        if direction == "incoming" and "result" in message and message.get("id") in asked:
            return message["result"]
    return None


def _quiet_cuts(exchange: list[tuple[str, Any]]) -> list[int]:
    """The places where no request of either side awaits its answer (nothing in flight)."""
    waiting: set[tuple[str, Any]] = set()
    cuts = []
    for index, (direction, message) in enumerate(exchange):
        if not waiting:
            cuts.append(index)
        if "method" in message and "id" in message:
            waiting.add((direction, message["id"]))
        elif "method" not in message:
            asker = "incoming" if direction == "outgoing" else "outgoing"
            waiting.discard((asker, message.get("id")))
    if not waiting:
        cuts.append(len(exchange))
    return cuts


@SETTINGS
@given(conversations(resume=None, close=None, session_messages=True), st.data())
def test_continuing_after_a_restore_is_never_having_stopped(
    exchange: list[tuple[str, Any]], data: st.DataObject
) -> None:
    """R90-R92: cut where nothing is in flight, restore, feed the rest: the same state.

    (A request in flight at the cut is what a restore documents as lost: its answer has
    no request to match, R90.)
    """
    cut = data.draw(st.sampled_from(_quiet_cuts(exchange)))
    whole = Connection(live=False)
    _feed(whole, exchange)
    head = Connection(live=False)
    _feed(head, exchange[:cut])
    # a snapshot keeps the protocol version per session: before any, the host's
    # initialize result tells it
    result = _initialize_result(exchange[:cut])
    restored = Connection.restore(head.snapshot(), live=False, initialize_result=result)
    _feed(restored, exchange[cut:])
    mine, theirs = restored.snapshot(), whole.snapshot()
    if "refusal" in json.dumps(exchange[cut:]):
        # what a refusal excludes starts where the work started, which a snapshot does not
        # record (the README's caveat at load_session): that mark alone may differ
        for snap in (mine, theirs):
            for session in snap["sessions"]:
                session["timeline"] = _entities(session["timeline"])
    assert encoded(mine) == encoded(theirs)


@SETTINGS
@given(conversations(resume=False, close=False), st.data())
def test_restored_updates_apply_on_top_at_any_cut(
    exchange: list[tuple[str, Any]], data: st.DataObject
) -> None:
    """Any cut: the agent's updates after it build the same sessions' entities (R90)."""
    cut = data.draw(st.integers(0, len(exchange)))
    whole = Connection(live=False)
    _feed(whole, exchange)
    head = Connection(live=False)
    _feed(head, exchange[:cut])
    restored = Connection.restore(head.snapshot(), live=False)
    _feed(restored, exchange[cut:])
    for mine, theirs in zip(
        restored.snapshot()["sessions"], whole.snapshot()["sessions"], strict=False
    ):
        for key in ("timeline", "terminals", "plans", "completedTurns", "notices"):
            if mine["sessionId"] == theirs["sessionId"]:
                assert _entities(mine[key]) == _entities(theirs[key]), key


def _entities(items: list[Any]) -> list[Any]:
    # the refusal exclusion may differ where the snapshot cannot tell the work's start (R14)
    return [
        {k: v for k, v in item.items() if k != "excludedFromContext"}
        if isinstance(item, dict)
        else item
        for item in items
    ]


# ----------------------------------------------------------- R90: the prompts


def _prompted(accept: bool, echo: bool = False) -> tuple[Connection, int | str]:
    conn = ready(SID)
    rid, _ = conn.send_prompt(SID, "hi")
    if echo:
        conn.receive_data(line(update({"sessionUpdate": "user_message", "messageId": "u1"})))
    if accept:
        conn.receive_data(line(response(rid, {"messageId": "u1"})))
    return conn, rid


def test_r90_a_pending_prompt_has_an_unknown_outcome() -> None:
    conn, rid = _prompted(accept=False)
    restored = Connection.restore(conn.snapshot())
    prompt = restored.prompt(rid)
    assert prompt.status == "pending" and prompt.outcome_unknown
    # its answer could only come to the old connection: one here matches nothing
    restored.receive_data(line(response(rid, {"messageId": "u1"})))
    assert restored.prompt(rid).status == "pending"
    assert restored.diagnostics[-1].code == "orphan-response"
    # connection lost again: it was known lost, no second prompt-uncertain
    restored.connection_lost()
    assert "prompt-uncertain" not in [d.code for d in restored.diagnostics]


def test_r90_an_accepted_prompt_is_echoed_and_finished_after_the_restore() -> None:
    conn, rid = _prompted(accept=True)
    restored = Connection.restore(conn.snapshot())
    assert restored.prompt(rid).status == "accepted" and not restored.prompt(rid).echoed
    assert not restored.prompt_finished(rid)
    events = restored.receive_data(
        line(update(chunk("user", "u1", {"type": "text", "text": "hi"})))
        + line(update(RUNNING))
        + line(update(END_TURN))
    )
    assert "PromptEchoed" in [type(e).__name__ for e in events]
    assert restored.prompt(rid).echoed
    assert restored.prompt_finished(rid) and restored.prompt_stop_reason(rid) == "end_turn"


def test_r90_an_echoed_prompt_of_the_current_work_ends_with_it() -> None:
    conn, rid = _prompted(accept=True, echo=True)
    conn.receive_data(line(update(RUNNING)))
    restored = Connection.restore(conn.snapshot())
    assert not restored.prompt_finished(rid)
    restored.receive_data(line(update(END_TURN)))
    assert restored.prompt_stop_reason(rid) == "end_turn"


def test_r90_a_prompt_whose_turn_ended_before_the_snapshot_has_no_stop_reason() -> None:
    conn, rid = _prompted(accept=True, echo=True)
    conn.receive_data(line(update(RUNNING)) + line(update(END_TURN)))
    assert conn.prompt_stop_reason(rid) == "end_turn"
    restored = Connection.restore(conn.snapshot())
    assert restored.prompt_finished(rid)
    assert restored.prompt_stop_reason(rid) is None  # the snapshot does not tie them
    # the next turn is not taken for its own
    rid2, _ = restored.send_prompt(SID, "more")
    restored.receive_data(line(response(rid2, {"messageId": "u2"})))
    restored.receive_data(line(update(RUNNING)) + line(update(END_TURN)))
    assert restored.prompt_stop_reason(rid2) == "end_turn"
    assert restored.prompt_stop_reason(rid) is None


def test_r90_a_keyed_prompt_of_unknown_outcome_is_settled_by_its_retry() -> None:
    """ACP-V2-PREVIEW scenario 18, across a restore: one PROMPT, two attempts."""
    conn = ready(SID)
    rid, _ = conn.send_prompt(SID, "fix", idempotency_key="k1")
    restored = Connection.restore(conn.snapshot())
    assert restored.prompt(rid).outcome_unknown
    # the stored prompt is not in the snapshot: the host sends it again under its key
    again, _ = restored.send_prompt(SID, "fix", idempotency_key="k1")
    assert again != rid and restored.prompt(again) is restored.prompt(rid)
    restored.receive_data(line(response(again, {"messageId": "u7"})))
    restored.receive_data(line(update({"sessionUpdate": "user_message", "messageId": "u7"})))
    (prompt,) = restored.snapshot()["sessions"][0]["prompts"]
    assert prompt["status"] == "accepted" and prompt["echoed"] is True
    assert [a["status"] for a in prompt["attempts"]] == ["pending", "accepted"]
    assert not restored.prompt(rid).outcome_unknown


@given(st.lists(st.sampled_from([0, 3, 7, "x", 41]), min_size=1, max_size=6))
def test_r90_new_request_ids_follow_every_restored_one(ids: list[int | str]) -> None:
    conn = Connection(live=False)
    for rid in ids:
        conn.receive_message(prompt_request(rid), "outgoing")
    restored = Connection.restore(conn.snapshot(), live=False)
    sent = restored.send_prompt(SID, "go").request_id
    assert isinstance(sent, int)
    assert sent > max((i for i in ids if isinstance(i, int)), default=-1)
    assert restored.prompt(sent).request_id == sent


# ------------------------------------------------------- R91: the permissions


def test_r91_a_pending_permission_request_is_stale() -> None:
    conn = ready(SID)
    conn.receive_data(line(request(9, "session/request_permission", PERMISSION)))
    assert conn.session(SID).permissions[9].answerable
    restored = Connection.restore(conn.snapshot())
    perm = restored.session(SID).permissions[9]
    assert perm.stale and perm.pending and not perm.answerable
    assert restored.pending_agent_requests() == {}
    with pytest.raises(LocalProtocolError):
        restored.answer_permission(9, "o")
    # a cancel owes the old agent nothing: only the notification is written
    data = restored.send_cancel(SID)
    assert [json.loads(x)["method"] for x in data.splitlines()] == ["session/cancel"]
    assert perm.status == "pending"


def test_r91_the_agent_started_again_asks_again() -> None:
    conn = ready(SID)
    conn.receive_data(line(request(9, "session/request_permission", PERMISSION)))
    restored = Connection.restore(conn.snapshot())
    restored.receive_data(line(request(9, "session/request_permission", PERMISSION)))
    assert restored.session(SID).permissions[9].answerable
    assert b'"optionId":"o"' in restored.answer_permission(9, "o")
    statuses = [p["status"] for p in restored.snapshot()["sessions"][0]["permissionRequests"]]
    assert statuses == ["pending", "answered"]


def test_r91_an_answered_permission_request_stays_answered() -> None:
    conn = ready(SID)
    conn.receive_data(line(request(9, "session/request_permission", PERMISSION)))
    conn.answer_permission(9, "o")
    restored = Connection.restore(conn.snapshot())
    perm = restored.session(SID).permissions[9]
    assert perm.status == "answered" and not perm.stale


# ---------------------------------------------- R92: handshake, new connection


INIT = {"protocolVersion": 2, "capabilities": {"session": {"prompt": {"image": {}}}}, "info": INFO}


def test_r92_the_handshake_counts_as_done() -> None:
    conn = ready(SID)
    snap = conn.snapshot()
    restored = Connection.restore(snap)
    assert restored.protocol_version == 2
    # without the initialize result, what the agent offered is unknown: no images (C3, C5)
    image = s.ImageContent(data="aGk=", mime_type="image/png")
    with pytest.raises(LocalProtocolError):
        restored.send_prompt(SID, [image])
    kept = Connection.restore(snap, initialize_result=INIT)
    assert kept.agent_info is not None and kept.agent_info.name == "agent"
    kept.send_prompt(SID, [image])


def test_r92_an_initialize_result_that_is_none_is_refused() -> None:
    with pytest.raises(ValueError, match="initialize_result"):
        Connection.restore(ready(SID).snapshot(), initialize_result={"protocolVersion": "x"})


def test_r92_the_first_initialize_starts_a_new_connection() -> None:
    conn = ready(SID)
    rid, _ = conn.send_resume(SID, "/tmp")  # in flight at the snapshot: gone with it
    restored = Connection.restore(conn.snapshot())
    restored.send_prompt(SID, "one")  # goes on with the same agent first
    init, _ = restored.send_initialize()  # then a new connection (repeatable once more)
    restored.receive_data(line(response(init, {**INIT, "protocolVersion": 2})))
    resume, _ = restored.send_resume(SID, "/tmp", replay=False)
    restored.receive_data(line(update(END_TURN)) + line(response(resume, {})))
    assert restored.session(SID).announced
    prompt, _ = restored.send_prompt(SID, "two")
    restored.receive_data(line(response(prompt, {"messageId": "u2"})))
    assert restored.prompt(prompt).status == "accepted"
    # the next initialize is no longer that of a restore: 1.4 as ever
    with pytest.raises(LocalProtocolError):
        restored.send_initialize()
    assert rid not in [p.request_id for p in restored.session(SID).prompts]


def test_r92_a_restored_v1_connection_mints_new_message_ids() -> None:
    log = TRANSCRIPTS / "recorded_v1_agent.jsonl"
    snap = replay_log(str(log)).snapshot()
    (session,) = snap["sessions"]
    assert session["protocolVersion"] == 1
    sid = session["sessionId"]
    restored = Connection.restore(snap)
    before = {e.get("messageId") for e in session["timeline"]}
    # the same v1 agent goes on: an id-less chunk is a new message, not a restored one's
    later = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "later"}}
    restored.receive_data(line(update(later, sid)))
    timeline = restored.snapshot()["sessions"][0]["timeline"]
    new = [e for e in timeline if e.get("messageId") not in before]
    assert len(new) == 1 and new[0]["content"] == [{"type": "text", "text": "later"}]
    assert new[0]["messageId"].startswith("acp-v1:agent:")
    assert [e for e in timeline if e.get("messageId") in before] == session["timeline"]


def test_r92_a_restored_v1_connection_speaks_v1_to_the_agent() -> None:
    snap = replay_log(str(TRANSCRIPTS / "recorded_v1_agent.jsonl")).snapshot()
    sid = snap["sessions"][0]["sessionId"]
    restored = Connection.restore(snap)
    _, data = restored.send_resume(sid, "/tmp")  # v1: session/load
    assert json.loads(data)["method"] == "session/load"
    assert restored.session(sid).replaying


# --------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        ({"format": "other", "sessions": []}, "format"),
        ({"format": "acp-client/snapshot@1", "sessions": {}}, "sessions"),
        ({"format": "acp-client/snapshot@1", "sessions": [{"sessionId": 3}]}, "sessions\\[0\\]"),
        (
            {"format": "acp-client/snapshot@1", "sessions": [{"sessionId": "a", "timeline": [1]}]},
            "timeline\\[0\\]",
        ),
        (
            {"format": "acp-client/snapshot@1", "sessions": [], "diagnostics": [{"code": 1}]},
            "diagnostics\\[0\\]",
        ),
        (
            {"format": "acp-client/snapshot@1", "sessions": [{"sessionId": "a"}] * 2},
            "sessions\\[1\\]",
        ),
    ],
)
def test_a_document_that_is_no_snapshot_is_refused_naming_where(
    doc: dict[str, Any], where: str
) -> None:
    with pytest.raises(ValueError, match=where):
        Connection.restore(doc)


# ------------------------------------------------- R92: the v1 adapter, seeded


def _play_v1(conn: Connection, adapter: V1Adapter, exchange: list[tuple[str, Any]]) -> None:
    for direction, message in exchange:
        for translated_direction, translated in adapter.feed(direction, message):
            conn.receive_message(translated, translated_direction)  # type: ignore[arg-type]


@SETTINGS
@given(v1_streams(), st.data())
def test_r92_a_v1_stream_goes_on_after_a_restore_as_if_never_stopped(
    exchange: list[tuple[str, Any]], data: st.DataObject
) -> None:
    """Cut where nothing is in flight; a new adapter seeded from the restored sessions
    translates the rest into the same state (new ids never continue restored messages)."""
    cut = data.draw(st.sampled_from(_quiet_cuts(exchange)))
    whole = Connection(live=False)
    _play_v1(whole, V1Adapter(), exchange)
    head = Connection(live=False)
    _play_v1(head, V1Adapter(), exchange[:cut])
    result = _initialize_result(exchange[:cut])  # in v2 shape, as the host saw it
    kept = None if result is None else initialize_result(result)
    restored = Connection.restore(head.snapshot(), live=False, initialize_result=kept)
    adapter = V1Adapter()
    seed_adapter(adapter, restored.sessions)
    _play_v1(restored, adapter, exchange[cut:])
    assert encoded(restored.snapshot()) == encoded(whole.snapshot())
