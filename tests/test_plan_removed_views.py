"""A removed plan in the views (ACP v2 Preview P45, docs/preview.md).

``plan_removed`` takes the plan out of the snapshot's ``plans``; the rendered view of
``acp-client replay`` / ``run`` and the HTML page still say that it was removed (a
"plan ... removed" line in the timeline, where the removal happened among the entries),
as long as no later update set it again. The snapshot itself (``--json``) is unchanged:
it carries no removed plans and no position (the connection's ordinals give it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import handshake_lines
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from acp_client import Connection, replay_log
from acp_client.cli import main
from acp_client.cli._render import snapshot_renderable
from acp_client.cli._values import Removals, removed_plans

_HEAD: list[dict[str, Any]] = handshake_lines("sess_p")


def _update(update: dict[str, Any]) -> dict[str, Any]:
    params = {"sessionId": "sess_p", "update": update}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


def _plan(plan_id: str, text: str) -> dict[str, Any]:
    plan = {"type": "markdown", "planId": plan_id, "content": text}
    return _update({"sessionUpdate": "plan_update", "plan": plan})


def _removed(plan_id: str) -> dict[str, Any]:
    return _update({"sessionUpdate": "plan_removed", "planId": plan_id})


# p1 removed, p2 kept, p3 removed then set again, p9 never existed (ignored, P45)
_UPDATES = [
    _plan("p1", "first plan"),
    _plan("p2", "second plan"),
    _plan("p3", "third plan"),
    _removed("p1"),
    _removed("p3"),
    _removed("p9"),
    _plan("p3", "third plan again"),
]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "plans.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in _HEAD + _UPDATES))
    return path


def test_rendered_replay_says_the_plan_was_removed(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(log)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "plan p1 removed" in out
    assert "first plan" not in out  # its content is gone
    assert "plan p2" in out and "second plan" in out
    assert "plan p3 removed" not in out and "third plan again" in out  # set again
    assert "p9" not in out  # an unknown id is ignored


def test_html_page_says_the_plan_was_removed(log: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    assert main(["replay", str(log), "--html", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert '<p class="dim">plan <span class="id">p1</span> removed</p>' in html
    assert "first plan" not in html
    assert '<span class="id">p3</span> removed' not in html and "third plan again" in html
    assert "p9" not in html


def test_json_snapshot_carries_no_removed_plans(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", "--json", str(log)]) == 0
    session = json.loads(capsys.readouterr().out)["sessions"][0]
    assert [p["planId"] for p in session["plans"]] == ["p2", "p3"]
    assert "removed" not in json.dumps(session)


def _connection(lines: list[dict[str, Any]]) -> Connection:
    return replay_log("".join(json.dumps(m) + "\n" for m in lines).encode()).connection


def test_run_view_says_the_plan_was_removed() -> None:
    """``run``'s view: what ``removed_plans`` collects from the live connection is shown."""
    conn = _connection(_HEAD + _UPDATES)
    assert removed_plans(conn.sessions) == [("sess_p", "p1", 0)]
    console = Console(record=True, width=100, markup=False)
    console.print(snapshot_renderable(conn.snapshot(), removed_plans=removed_plans(conn.sessions)))
    out = console.export_text()
    assert "plan p1  removed" in out or "plan p1 removed" in " ".join(out.split())


@given(st.lists(st.tuples(st.booleans(), st.sampled_from(["a", "b", "c"])), max_size=12))
def test_removed_plans_are_those_removed_and_not_set_again(ops: list[tuple[bool, str]]) -> None:
    """P45: a plan shows as removed exactly when its last operation removed an existing plan;
    the shown plans and the removed ones never overlap."""
    updates = [_removed(pid) if remove else _plan(pid, "x") for remove, pid in ops]
    conn = _connection(_HEAD + updates)
    present: dict[str, None] = {}
    expected: dict[str, None] = {}
    for remove, pid in ops:
        if remove:
            if pid in present:
                del present[pid]
                expected.pop(pid, None)
                expected[pid] = None
        else:
            present.setdefault(pid, None)
            expected.pop(pid, None)
    got = [pid for _, pid, _ in removed_plans(conn.sessions)]
    assert got == list(expected)
    assert set(got).isdisjoint(conn.session("sess_p").plans)


# -- where in the timeline ----------------------------------------------------------------


def _say(message_id: str, said: str) -> dict[str, Any]:
    content = [{"type": "text", "text": said}]
    return _update({"sessionUpdate": "agent_message", "messageId": message_id, "content": content})


# a1, plan p1, a2, p1 removed, a3, a2 again (no new entry): the removal is after a2
_PLACED = [
    _say("a1", "first words"),
    _plan("p1", "the plan"),
    _say("a2", "second words"),
    _removed("p1"),
    _say("a3", "third words"),
    _say("a2", "second words, edited"),
]


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_removal_is_shown_where_it_happened_in_the_replay_view(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "placed.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in _HEAD + _PLACED))
    assert main(["replay", str(path)]) == 0
    out = _flat(capsys.readouterr().out)
    assert out.index("second words") < out.index("plan p1 removed") < out.index("third words")
    assert out.count("plan p1 removed") == 1  # not again in the plans section
    page = tmp_path / "page.html"
    assert main(["replay", str(path), "--html", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    line = '<p class="dim">plan <span class="id">p1</span> removed</p>'
    assert html.index("second words") < html.index(line) < html.index("third words")
    assert html.count(line) == 1


def test_run_view_places_the_removal_and_respects_last_entries() -> None:
    conn = _connection(_HEAD + _PLACED)
    removed = removed_plans(conn.sessions)
    assert removed == [("sess_p", "p1", 2)]
    console = Console(record=True, width=100, markup=False)
    view = snapshot_renderable(conn.snapshot(), removed_plans=removed, last_entries=1)
    console.print(view)
    out = _flat(console.export_text())
    # a1 and a2 are hidden: the removal (after them) comes before the one entry shown
    assert out.index("2 earlier timeline entries") < out.index("plan p1 removed")
    assert out.index("plan p1 removed") < out.index("third words")


def test_a_pair_without_position_stays_in_the_plans_section() -> None:
    marks = Removals([("s", "p1"), ("s", "p2", 1), ["s", "p3", 9]])  # JSON gives lists
    assert marks.unplaced == {"s": ["p1"]}
    assert marks.slots("s", 2) == [[], ["p2"], ["p3"]]
    assert marks.slots("s", 2, start=1) == [["p2"], [], ["p3"]]
    assert marks.slots("other", 0) == [[]]


_OPS = st.lists(
    st.tuples(st.sampled_from(["say", "plan", "remove"]), st.sampled_from(["x", "y", "z"])),
    max_size=14,
)


@given(_OPS)
def test_a_removal_sits_after_the_entries_first_seen_before_it(
    ops: list[tuple[str, str]],
) -> None:
    """P45 in the views: each removal's position counts the distinct messages said before
    it (an entry said again later does not move), whatever the order of the operations."""
    updates = []
    for op, name in ops:
        if op == "say":
            updates.append(_say("m" + name, name))
        else:
            updates.append(_plan(name, "x") if op == "plan" else _removed(name))
    conn = _connection(_HEAD + updates)
    expected: dict[str, int] = {}
    said: set[str] = set()
    present: set[str] = set()
    for op, name in ops:
        if op == "say":
            said.add(name)
        elif op == "plan":
            present.add(name)
            expected.pop(name, None)
        elif name in present:
            present.discard(name)
            expected.pop(name, None)
            expected[name] = len(said)
    assert [(pid, pos) for _, pid, pos in removed_plans(conn.sessions)] == list(expected.items())
