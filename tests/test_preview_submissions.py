"""Idempotent prompt submissions of the v2 Preview (docs/preview.md P26-P30; B18-B22).

A ``session/prompt`` carrying an ``idempotencyKey`` already used in its session is an
attempt of that submission, never a second one: one PROMPT with its attempts in send
order, an aggregate status, the first success's ``messageId``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers import INFO, Live, Log, error, msg, request, response, text
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_client import Connection, LocalProtocolError, load_session
from acp_client.testing import ReferenceModel
from acp_client.testing.strategies import conversations

S = "sess_s"


def keyed(rid: int, key: str, t: str = "fix", sid: str = S) -> dict[str, Any]:
    """A keyed ``session/prompt`` as the client sent it."""
    params = {"sessionId": sid, "prompt": [text(t)], "idempotencyKey": key}
    return request(rid, "session/prompt", params)


def connect(log: Log, rid: int = 0) -> None:
    init = {"protocolVersion": 2, "capabilities": {"session": {}}, "info": INFO}
    log.client(request(rid, "initialize", init))
    log.agent(response(rid, {"protocolVersion": 2, "capabilities": {}, "info": INFO}))


def setup() -> Log:
    log = Log()
    connect(log)
    log.client(request(1, "session/new", {"cwd": "/tmp", "mcpServers": []}))
    log.agent(response(1, {"sessionId": S}))
    return log


def user(mid: str, t: str = "fix") -> dict[str, Any]:
    return msg("user", mid, content=[text(t)])


def test_b18_retry_after_lost_response() -> None:
    """P27: a retry on a new connection is an attempt of the same submission."""
    log = setup()
    log.client(keyed(3, "k1"))
    connect(log, 100)  # a new connection: the old one's requests are gone
    resume = {"sessionId": S, "cwd": "/tmp", "mcpServers": []}
    log.client(request(101, "session/resume", resume))
    log.agent(response(101, {}))
    log.client(keyed(1, "k1"))
    log.agent(response(1, {"messageId": "u7"}))
    log.upd(user("u7"), sid=S)
    prompts = log.session(S)["prompts"]
    assert prompts == [
        {
            "requestId": 3,
            "status": "accepted",
            "messageId": "u7",
            "echoed": True,
            "idempotencyKey": "k1",
            "attempts": [
                {"requestId": 3, "status": "pending"},
                {"requestId": 1, "status": "accepted", "messageId": "u7"},
            ],
        }
    ]
    assert [e["messageId"] for e in log.session(S)["timeline"]] == ["u7"]


def test_b19_concurrent_retry() -> None:
    log = setup()
    log.client(keyed(3, "k1"), keyed(4, "k1"))
    log.agent(response(4, {"messageId": "u7"}), response(3, {"messageId": "u7"}))
    log.upd(user("u7"), sid=S)
    (prompt,) = log.session(S)["prompts"]
    assert prompt["status"] == "accepted" and prompt["messageId"] == "u7"
    assert [(a["requestId"], a["status"], a["messageId"]) for a in prompt["attempts"]] == [
        (3, "accepted", "u7"),
        (4, "accepted", "u7"),
    ]
    assert "duplicate-message-id" not in log.codes() and log.codes() == []


def test_b20_changed_prompt_under_the_same_key_live() -> None:
    """P28 / R78: refused locally, nothing sent."""
    live = Live()
    live.new_session(S)
    rid, _ = live.conn.send_prompt(S, "fix A", idempotency_key="k1")
    with pytest.raises(LocalProtocolError, match="P28"):
        live.conn.send_prompt(S, "fix B", idempotency_key="k1")
    assert live.conn.take_sent_events()[-1].request_id == rid  # nothing else was sent


def test_b20_changed_prompt_under_the_same_key_in_a_log() -> None:
    """R80: in a log, reported; still the same submission."""
    log = setup()
    log.client(keyed(3, "k1", "fix A"), keyed(4, "k1", "fix B"))
    assert log.codes() == ["idempotency-key-prompt-mismatch"]
    (prompt,) = log.session(S)["prompts"]
    assert len(prompt["attempts"]) == 2


def test_b21_two_message_ids_for_one_key() -> None:
    """P30 / R79: the first success binds; another id is an error, left unlinked."""
    log = setup()
    log.client(keyed(3, "k1"), keyed(4, "k1"))
    log.agent(response(3, {"messageId": "u7"}), response(4, {"messageId": "u8"}))
    log.upd(user("u7"), user("u8"), sid=S)
    assert log.codes() == ["idempotency-key-message-mismatch"]
    assert log.conn.diagnostics[0].severity == "error"
    (prompt,) = log.session(S)["prompts"]
    assert prompt["messageId"] == "u7"
    assert prompt["attempts"][1]["messageId"] == "u8"
    assert [e["messageId"] for e in log.session(S)["timeline"]] == ["u7", "u8"]
    assert log.conn.session(S).prompts_by_message.get("u8") is None  # unlinked


def test_b22_key_scope_is_the_session() -> None:
    log = setup()
    log.client(request(2, "session/new", {"cwd": "/tmp", "mcpServers": []}))
    log.agent(response(2, {"sessionId": "sess_2"}))
    log.client(keyed(3, "k1"), keyed(4, "k1", sid="sess_2"))
    assert len(log.session(S)["prompts"]) == 1 and len(log.session("sess_2")["prompts"]) == 1


def test_b22_error_then_success_is_accepted() -> None:
    log = setup()
    log.client(keyed(3, "k1"))
    log.agent(error(3, -32603, "boom"))
    assert log.session(S)["prompts"][0]["status"] == "rejected"
    log.client(keyed(4, "k1"))
    assert log.session(S)["prompts"][0]["status"] == "pending"
    assert "error" not in log.session(S)["prompts"][0]
    log.agent(response(4, {"messageId": "u7"}))
    assert log.session(S)["prompts"][0]["status"] == "accepted"


def test_b22_success_then_cancelled_attempt_stays_accepted() -> None:
    log = setup()
    log.client(keyed(3, "k1"), keyed(4, "k1"))
    log.agent(response(3, {"messageId": "u7"}), error(4, -32800, "cancelled"))
    (prompt,) = log.session(S)["prompts"]
    assert prompt["status"] == "accepted" and "error" not in prompt
    assert prompt["attempts"][1]["status"] == "rejected"


def test_p29_rejected_only_when_every_attempt_failed() -> None:
    log = setup()
    log.client(keyed(3, "k1"), keyed(4, "k1"))
    log.agent(error(3, -32603, "first"))
    assert log.session(S)["prompts"][0]["status"] == "pending"
    log.agent(error(4, -32603, "second"))
    prompt = log.session(S)["prompts"][0]
    assert prompt["status"] == "rejected" and prompt["error"]["message"] == "second"


def test_p26_a_prompt_without_key_is_unchanged() -> None:
    log = setup()
    log.client(request(3, "session/prompt", {"sessionId": S, "prompt": [text("x")]}))
    assert set(log.session(S)["prompts"][0]) == {"requestId", "status", "echoed"}


def test_p28_live_keys_and_retries() -> None:
    live = Live()
    live.new_session(S)
    rid, _ = live.conn.send_prompt(S, "fix", idempotency_key=True)
    live.wrote(_)
    key = live.sent[-1]["params"]["idempotencyKey"]
    assert isinstance(key, str) and 1 <= len(key) <= 255
    retry, data = live.conn.retry_prompt(rid)
    live.wrote(data)
    assert live.sent[-1]["params"] == live.sent[-2]["params"]  # the stored prompt, unchanged
    assert live.conn.prompt(retry) is live.conn.prompt(rid)
    for bad in ("", "x" * 256):
        with pytest.raises(LocalProtocolError, match="255"):
            live.conn.send_prompt(S, "fix", idempotency_key=bad)
    plain, _ = live.conn.send_prompt(S, "no key")
    with pytest.raises(LocalProtocolError, match="no idempotency key"):
        live.conn.retry_prompt(plain)
    live.agent(response(retry, {"messageId": "u1"}))
    assert live.conn.prompt(rid).status == "accepted"


def test_section_4_keyed_prompt_round_trips() -> None:
    log = setup()
    log.client(keyed(3, "k1"), keyed(4, "k1"))
    log.agent(error(3, -32603, "boom"), response(4, {"messageId": "u7"}))
    data = log.session(S)
    assert load_session(data).snapshot() == data


# ------------------------------------------------------------------ property

_OUTCOME = st.sampled_from(["u7", "error", "none"])


@settings(max_examples=80, deadline=None)
@given(st.lists(_OUTCOME, min_size=1, max_size=6), st.booleans())
def test_property_retries_under_one_key_give_one_submission(
    outcomes: list[str], echo: bool
) -> None:
    """Any number of attempts under one key: one submission, at most one user message."""
    log = setup()
    for rid, outcome in enumerate(outcomes, start=10):
        log.client(keyed(rid, "k1"))
        if outcome == "u7":
            log.agent(response(rid, {"messageId": "u7"}))
        elif outcome == "error":
            log.agent(error(rid, -32603, "boom"))
        if echo and outcome == "u7":
            log.upd(user("u7"), sid=S)
    snap = log.session(S)
    (prompt,) = snap["prompts"]
    assert [a["requestId"] for a in prompt["attempts"]] == list(range(10, 10 + len(outcomes)))
    check_keyed_submissions(snap)
    assert log.codes() == []


def check_keyed_submissions(session: dict[str, Any]) -> None:
    """One snapshot session's keyed PROMPTs: one per key, the status their attempts give
    (P29), the bound id one of theirs (P30), at most one user message for the key."""
    keyed = [p for p in session["prompts"] if "idempotencyKey" in p]
    assert len({p["idempotencyKey"] for p in keyed}) == len(keyed)  # P26, P27
    users = [e["messageId"] for e in session["timeline"] if e.get("role") == "user"]
    for prompt in keyed:
        statuses = [a["status"] for a in prompt["attempts"]]
        assert prompt["requestId"] == prompt["attempts"][0]["requestId"]
        expected = (
            "accepted"
            if "accepted" in statuses
            else "rejected"
            if all(s == "rejected" for s in statuses)
            else "pending"
        )
        assert prompt["status"] == expected
        ids = {a["messageId"] for a in prompt["attempts"] if "messageId" in a}
        if expected == "accepted" and ids:
            assert prompt["messageId"] in ids
        assert sum(users.count(i) for i in ids) <= 1


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(session_id=S, retries=True, close=None))
def test_property_generated_retries_give_one_submission_per_key(
    conversation: list[tuple[str, Any]],
) -> None:
    """The same for the testing kit's conversations with keyed retries (a lost response,
    an error, two attempts in flight; an echo once): one submission per key, at most one
    user message, no idempotency diagnostic, and the reference model agrees (P26-P30)."""
    conn = Connection(live=False)
    for direction, message in copy.deepcopy(conversation):
        conn.receive_message(message, direction)
    snapshot = conn.snapshot()
    check_keyed_submissions(snapshot["sessions"][0])
    sent = [m for d, m in conversation if d == "outgoing" and m.get("method") == "session/prompt"]
    keys = {m["params"].get("idempotencyKey") for m in sent} - {None}
    plain = [m for m in sent if "idempotencyKey" not in m["params"]]
    assert len(snapshot["sessions"][0]["prompts"]) == len(keys) + len(plain)
    assert not [d for d in snapshot["diagnostics"] if d["code"].startswith("idempotency")]
    model = ReferenceModel()
    model.feed_all(copy.deepcopy(conversation))
    snapshot["diagnostics"] = []
    assert snapshot == model.snapshot()
