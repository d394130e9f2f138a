"""Summaries of fleets of logs (issue 25): one ``SessionSummary`` per session.

The transcripts' summaries are checked against counts derived here from each transcript's
expected snapshot and its log lines, not by the summary code; generated conversations
against what the generator put in them; and ``summarize_many`` for order, error rows and
independence from ``jobs``.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_client import SessionSummary, replay_log, summarize_many
from acp_client._fleet import summarize_log
from acp_client.testing import FakeAgent

HERE = Path(__file__).resolve().parent / "transcripts"
TRANSCRIPTS = sorted(
    p for p in HERE.iterdir() if p.suffix in (".jsonl", ".json") and ".snapshot" not in p.name
)


# ------------------------------------------------------------ derived from the snapshot


def _outcome_key(perm: dict[str, Any]) -> str:
    if perm["status"] != "answered":
        return str(perm["status"])
    outcome = perm["outcome"]
    if outcome.get("outcome") != "selected":
        return str(outcome.get("outcome"))
    kinds = {o["optionId"]: o["kind"] for o in perm["options"]}
    return kinds.get(outcome["optionId"], "selected")


def _replay_key(session: dict[str, Any]) -> str | None:
    replay = session.get("replay")
    if replay is None:
        return None
    if replay["complete"]:
        return "complete"
    return "truncated" if replay["truncated"] else str(replay["phase"])


def _log_facts(log: Path) -> dict[str, Any]:
    """What the log's own lines say: format, agent, times (read here with json)."""
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]
    wrapped = "direction" in records[0]
    fmt = ("acp-client" if "time" in records[0] else "python-sdk") if wrapped else "jsonrpc"
    messages = [r.get("message") for r in records] if wrapped else records
    name = version = None
    for message in messages:
        result = message.get("result") if isinstance(message, dict) else None
        if isinstance(result, dict) and "protocolVersion" in result:
            info = result.get("info") or result.get("agentInfo")
            if info:
                name, version = info["name"], info["version"]
            break
    times = [r["time"] for r in records if "time" in r] if wrapped else []
    named: dict[str, list[float]] = {}  # session -> times of the records naming it
    for record, message in zip(records, messages, strict=True):
        for part in ("params", "result"):
            body = message.get(part) if isinstance(message, dict) else None
            if isinstance(body, dict) and isinstance(body.get("sessionId"), str):
                if wrapped and "time" in record:
                    named.setdefault(body["sessionId"], []).append(record["time"])
                break
    return {
        "format": fmt,
        "agent_name": name,
        "agent_version": version,
        "clock": "epoch" if times else None,
        "named": named,
    }


def expected_rows(log: Path, snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    """The summary rows of a log, derived from its expected snapshot and its lines."""
    facts = _log_facts(log)
    named = facts.pop("named")
    diagnostics = snapshot["diagnostics"]
    rows = []
    for s in snapshot["sessions"]:
        timeline = s["timeline"]
        messages = Counter(e["role"] for e in timeline if e["entry"] == "message")
        calls = [e for e in timeline if e["entry"] == "toolCall"]
        usage = s.get("usage") or {}
        cost = usage.get("cost") or {}
        rows.append(
            {
                "path": str(log),
                "session_id": s["sessionId"],
                "parent_session_id": s.get("parentSessionId"),
                **facts,
                "first_time": named[s["sessionId"]][0] if s["sessionId"] in named else None,
                "last_time": named[s["sessionId"]][-1] if s["sessionId"] in named else None,
                "protocol_version": s.get("protocolVersion"),
                "v1": s.get("protocolVersion") == 1,
                "state": (s.get("state") or {}).get("state"),
                "turns_completed": len(s["completedTurns"]),
                "stop_reasons": dict(
                    Counter("(none)" if r is None else r for r in s["completedTurns"])
                ),
                "prompts_accepted": sum(p["status"] == "accepted" for p in s["prompts"]),
                "prompts_rejected": sum(p["status"] == "rejected" for p in s["prompts"]),
                "prompts_pending": sum(p["status"] == "pending" for p in s["prompts"]),
                "user_messages": messages["user"],
                "agent_messages": messages["agent"],
                "thoughts": messages["thought"],
                "tool_calls": len(calls),
                "tool_calls_by_kind": dict(Counter(c["kind"] for c in calls)),
                "tool_calls_by_status": dict(Counter(c["status"] for c in calls)),
                "permission_requests": len(s["permissionRequests"]),
                "permissions_by_outcome": dict(
                    Counter(_outcome_key(p) for p in s["permissionRequests"])
                ),
                "terminals": len(s["terminals"]),
                "terminal_bytes": sum(
                    len(base64.b64decode(t["output"])) + t["truncatedBytes"] for t in s["terminals"]
                ),
                "usage_used": usage.get("used"),
                "usage_size": usage.get("size"),
                "cost_amount": cost.get("amount"),
                "cost_currency": cost.get("currency"),
                "history_replay": _replay_key(s),
                "diagnostics_by_code": dict(Counter(d["code"] for d in diagnostics)),
                "diagnostics_by_severity": dict(Counter(d["severity"] for d in diagnostics)),
                "complete": True,
                "error": None,
            }
        )
    return rows


@pytest.mark.parametrize("log", TRANSCRIPTS, ids=lambda p: p.stem)
def test_each_transcript_summarises_to_what_its_snapshot_says(log: Path) -> None:
    snapshot = json.loads((HERE / f"{log.stem}.snapshot.json").read_text(encoding="utf-8"))
    rows = [msgspec.to_builtins(row) for row in summarize_many([log], jobs=1)]
    assert rows == expected_rows(log, snapshot)


def test_the_transcripts_cover_the_fields() -> None:
    """The corpus exercises the counts (so the comparison above can fail on each)."""
    rows = summarize_many(TRANSCRIPTS, jobs=1)
    assert any(r.v1 for r in rows) and any(not r.v1 for r in rows)
    assert any(r.terminal_bytes for r in rows) and any(r.permissions_by_outcome for r in rows)
    assert any(r.tool_calls_by_status for r in rows) and any(r.diagnostics_by_code for r in rows)
    assert any(r.first_time for r in rows) and any(r.first_time is None for r in rows)
    assert any(r.agent_name for r in rows) and any(r.thoughts for r in rows)


# ------------------------------------------------------------ generated conversations


@st.composite
def turns(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "prompt": draw(st.sampled_from(["accepted", "rejected", "pending", None])),
        "agent": draw(st.integers(0, 3)),
        "thoughts": draw(st.integers(0, 2)),
        "calls": draw(
            st.lists(
                st.tuples(
                    st.sampled_from(["read", "edit", "execute", "_custom"]),
                    st.sampled_from(["pending", "in_progress", "completed", "failed"]),
                ),
                max_size=3,
            )
        ),
        "permission": draw(
            st.sampled_from([None, "allow-once", "reject-once", "unknown", "cancel", "withdraw"])
        ),
        "stop": draw(st.sampled_from(["end_turn", "max_tokens", "refusal", "cancelled", None])),
        "terminal": draw(st.binary(max_size=40)),
        "usage": draw(st.none() | st.tuples(st.integers(0, 10**6), st.floats(0, 100))),
    }


def build(
    sessions: list[list[dict[str, Any]]], spans: list[tuple[int, int]] | None = None
) -> FakeAgent:
    """A log of ``sessions`` (each a list of turns), one after another; ``spans`` gets, per
    session, the index of the first and last message naming it."""
    agent = FakeAgent("s0")
    agent.initialize(0)
    rid = 100
    for index, session_turns in enumerate(sessions):
        one = agent.in_session(f"s{index}")
        rid += 1
        one.new_session(rid)  # its response is the first message naming the session
        first = len(agent.messages) - 1
        for t, turn in enumerate(session_turns):
            user = f"u{index}-{t}"
            rid += 1
            if turn["prompt"] is not None:
                one.prompt(rid, "go")
            if turn["prompt"] == "accepted":
                one.prompt_response(rid, user).user_message(user, "go")
            elif turn["prompt"] == "rejected":
                one.prompt_error(rid, -32000, "no")
            one.state("running")
            for m in range(turn["agent"]):
                one.agent_message(f"a{t}-{m}", "text")
            for m in range(turn["thoughts"]):
                one.thought(f"th{t}-{m}", "hmm")
            for c, (kind, status) in enumerate(turn["calls"]):
                one.tool_call(f"c{t}-{c}", title="x", kind=kind, status=status)
            if turn["terminal"]:
                one.terminal_chunk(f"term{t}", turn["terminal"])
            permission = turn["permission"]
            if permission is not None:
                rid += 1
                one.permission_request(rid, "Allow?")
                if permission == "withdraw":
                    one.cancel_request(rid)
                one.permission_answer(
                    rid, None if permission in ("cancel", "withdraw") else permission
                )
            if turn["usage"] is not None:
                used, amount = turn["usage"]
                one.usage(used, 10**6, (amount, "USD"))
            one.state("idle", stop_reason=turn["stop"])
        if spans is not None:  # the last message is the session's own (new or idle)
            spans.append((first, len(agent.messages) - 1))
    return agent


def implied(sessions: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The counts each generated session implies, straight from the generator's choices."""
    out = []
    for session_turns in sessions:
        calls = [call for turn in session_turns for call in turn["calls"]]
        permissions = [t["permission"] for t in session_turns if t["permission"] is not None]
        outcome = {
            "allow-once": "allow_once",
            "reject-once": "reject_once",
            "unknown": "selected",
            "cancel": "cancelled",
            "withdraw": "withdrawn",
        }
        usages = [t["usage"] for t in session_turns if t["usage"] is not None]
        prompts = Counter(t["prompt"] for t in session_turns)
        out.append(
            {
                "turns_completed": len(session_turns),
                "stop_reasons": dict(
                    Counter("(none)" if t["stop"] is None else t["stop"] for t in session_turns)
                ),
                "prompts_accepted": prompts["accepted"],
                "prompts_rejected": prompts["rejected"],
                "prompts_pending": prompts["pending"],
                "user_messages": prompts["accepted"],
                "agent_messages": sum(t["agent"] for t in session_turns),
                "thoughts": sum(t["thoughts"] for t in session_turns),
                "tool_calls": len(calls),
                "tool_calls_by_kind": dict(Counter(kind for kind, _ in calls)),
                "tool_calls_by_status": dict(Counter(status for _, status in calls)),
                "permission_requests": len(permissions),
                "permissions_by_outcome": dict(Counter(outcome[p] for p in permissions)),
                "terminals": sum(1 for t in session_turns if t["terminal"]),
                "terminal_bytes": sum(len(t["terminal"]) for t in session_turns),
                "usage_used": usages[-1][0] if usages else None,
                "cost_amount": usages[-1][1] if usages else None,
                "state": "idle" if session_turns else None,
            }
        )
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sessions=st.lists(st.lists(turns(), max_size=4), min_size=1, max_size=3),
    fmt=st.sampled_from(["acp-client", "capture", "jsonrpc", "python-sdk"]),
)
def test_generated_logs_count_what_the_conversation_implies(
    tmp_path_factory: pytest.TempPathFactory, sessions: list[list[dict[str, Any]]], fmt: str
) -> None:
    spans: list[tuple[int, int]] = []
    agent = build(sessions, spans)
    path = tmp_path_factory.mktemp("gen") / "log.jsonl"
    lines = agent.log_lines(fmt)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    rows = summarize_log(str(path))
    # the log's diagnostics: each turn that ended without a stop reason is a warning
    unreasoned = sum(t["stop"] is None for turns in sessions for t in turns)
    diagnostics = {"missing-stop-reason": unreasoned} if unreasoned else {}
    assert [r.session_id for r in rows] == [f"s{i}" for i in range(len(sessions))]
    for row, want, span in zip(rows, implied(sessions), spans, strict=True):
        got = msgspec.to_builtins(row)
        assert {key: got[key] for key in want} == want
        assert row.agent_name == "fake-agent" and row.protocol_version == 2 and not row.v1
        assert row.complete and row.error is None and row.format == fmt
        assert row.diagnostics_by_code == diagnostics
        assert row.diagnostics_by_severity == ({"warning": unreasoned} if unreasoned else {})
        first, last = json.loads(lines[span[0]]), json.loads(lines[span[1]])
        clock = {"acp-client": ("time", "epoch"), "capture": ("t", "relative")}.get(fmt)
        if clock is None:
            assert (row.first_time, row.last_time, row.clock) == (None, None, None)
        else:
            assert (row.first_time, row.last_time, row.clock) == (
                first[clock[0]],
                last[clock[0]],
                clock[1],
            )


# ------------------------------------------------------------ summarize_many


def _fleet(folder: Path) -> list[Path]:
    """A folder of logs: good ones of several formats, gzip, a corrupt one, a stray file."""
    folder.mkdir()
    paths = []
    for i, fmt in enumerate(["acp-client", "jsonrpc", "capture", "acp-client"]):
        sessions = [[{**_TURN, "agent": i}] * (i + 1)] * (1 + i % 2)
        path = folder / f"log{i}.jsonl"
        path.write_text("".join(line + "\n" for line in build(sessions).log_lines(fmt)))
        paths.append(path)
    gz = folder / "log4.jsonl.gz"
    gz.write_bytes(gzip.compress(paths[0].read_bytes()))
    corrupt = folder / "log5.jsonl"
    corrupt.write_bytes(b'{"jsonrpc": "2.0", "not a log\n\x00\xff')
    empty = folder / "log6.jsonl"
    empty.write_text("{}\n")
    (folder / "README.txt").write_text("not a log")
    return [*paths, gz, corrupt, empty]


_TURN: dict[str, Any] = {
    "prompt": "accepted",
    "agent": 1,
    "thoughts": 1,
    "calls": [("read", "completed")],
    "permission": "allow-once",
    "stop": "end_turn",
    "terminal": b"ok\n",
    "usage": (10, 0.5),
}


def test_rows_in_input_order_an_error_row_per_failed_log_whatever_the_jobs(
    tmp_path: Path,
) -> None:
    logs = _fleet(tmp_path / "fleet")
    one = summarize_many([tmp_path / "fleet"], jobs=1)
    assert summarize_many([tmp_path / "fleet"], jobs=2) == one
    assert summarize_many([str(p) for p in logs], jobs=3) == one
    # log order, then session order within a log; the README is not a log
    assert [(Path(r.path).name, r.session_id) for r in one] == [
        ("log0.jsonl", "s0"),
        ("log1.jsonl", "s0"),
        ("log1.jsonl", "s1"),
        ("log2.jsonl", "s0"),
        ("log3.jsonl", "s0"),
        ("log3.jsonl", "s1"),
        ("log4.jsonl.gz", "s0"),
        ("log5.jsonl", None),
        ("log6.jsonl", None),
    ]
    corrupt, empty = one[-2], one[-1]
    assert (corrupt.error or "").startswith("line 2: malformed-document: ")  # where, and why
    assert not corrupt.complete and corrupt.turns_completed == 0
    assert empty.error is not None  # "{}" is no record of any known format
    assert all(r.error is None and r.complete for r in one[:-2])
    assert one[6].turns_completed == one[0].turns_completed == 1
    assert one[5].agent_messages == 3 * 4  # log3: 4 turns of 3 agent messages


def test_a_missing_file_and_a_log_without_sessions_still_give_a_row(tmp_path: Path) -> None:
    quiet = tmp_path / "quiet.jsonl"
    quiet.write_text(FakeAgent().initialize(0).log_text("acp-client"))
    rows = summarize_many([tmp_path / "missing.jsonl", quiet], jobs=2)
    assert [r.path for r in rows] == [str(tmp_path / "missing.jsonl"), str(quiet)]
    assert rows[0].error is not None and rows[0].error.startswith("cannot read")
    assert rows[1].error is None and rows[1].session_id is None and rows[1].complete
    assert rows[1].agent_name == "fake-agent" and rows[1].first_time is not None


def test_a_replay_that_raises_becomes_an_error_row(monkeypatch: pytest.MonkeyPatch) -> None:
    import acp_client._replay

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RecursionError("too deep")

    monkeypatch.setattr(acp_client._replay, "replay_log", broken)
    (row,) = summarize_log("any.jsonl")
    assert row == SessionSummary(path="any.jsonl", error="RecursionError: too deep")


def test_progress_is_called_once_per_log_in_order(tmp_path: Path) -> None:
    logs = _fleet(tmp_path / "fleet")
    seen: list[tuple[int, int]] = []
    summarize_many(logs, jobs=2, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(i + 1, len(logs)) for i in range(len(logs))]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fleet=st.lists(
        st.one_of(st.integers(0, 3), st.sampled_from(["broken", "missing"])), max_size=6
    ),
    jobs=st.sampled_from([1, 2]),
)
def test_rows_follow_the_logs_then_their_sessions(
    tmp_path_factory: pytest.TempPathFactory, fleet: list[int | str], jobs: int
) -> None:
    """The ordering rule: log order, then each log's session order; one row for a failed
    log, one for a log without sessions; the same whatever ``jobs``."""
    folder = tmp_path_factory.mktemp("order")
    paths, want = [], []
    for i, item in enumerate(fleet):
        path = folder / f"{i}.jsonl"
        if item == "missing":
            want.append((str(path), None, True))
        elif item == "broken":
            path.write_bytes(b"\x00\x01 not json\n")
            want.append((str(path), None, True))
        else:
            assert isinstance(item, int)
            agent = FakeAgent("x").initialize(0)
            for k in reversed(range(item)):  # first seen order, not sorted order
                agent.in_session(f"s{k}").state("running")
            path.write_text(agent.log_text("jsonrpc"))
            want += [(str(path), f"s{k}", False) for k in reversed(range(item))] or [
                (str(path), None, False)
            ]
        paths.append(path)
    rows = summarize_many(paths, jobs=jobs)
    assert [(r.path, r.session_id, r.error is not None) for r in rows] == want


def test_a_child_session_is_its_own_row_with_its_parent(tmp_path: Path) -> None:
    """The v2 Preview's session tree: the child has its row, after its parent (first seen)."""
    agent = FakeAgent("sess_p").initialize(0).new_session(1)
    agent.update({"sessionUpdate": "subagent_update", "sessionId": "sess_c", "title": "Explorer"})
    child = agent.in_session("sess_c")
    child.state("running").agent_message("a1", "found it").state("idle", stop_reason="end_turn")
    path = tmp_path / "tree.jsonl"
    path.write_text(agent.log_text("acp-client"))
    parent_row, child_row = summarize_many([path], jobs=1)
    assert (parent_row.session_id, parent_row.parent_session_id) == ("sess_p", None)
    assert (child_row.session_id, child_row.parent_session_id) == ("sess_c", "sess_p")
    assert child_row.agent_messages == 1 and child_row.stop_reasons == {"end_turn": 1}
    assert parent_row.turns_completed == 0 and parent_row.agent_messages == 0


def test_history_replay_is_the_snapshots_replay_phase(tmp_path: Path) -> None:
    done = FakeAgent("s").initialize(0)
    done.resume(5).user_message("u1", "hi").update({"sessionUpdate": "replay_complete"})
    done.resume_response(5)
    plain = FakeAgent("s").initialize(0).resume(5).user_message("u1", "hi")  # no Preview element
    for name, agent, want in (("done", done, "complete"), ("plain", plain, None)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text(agent.log_text("acp-client"))
        (row,) = summarize_many([path], jobs=1)
        assert row.history_replay == want
        snapshot = replay_log(str(path)).snapshot()
        assert [msgspec.to_builtins(row)] == expected_rows(path, snapshot)
