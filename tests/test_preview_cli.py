"""The command line's views of the v2 Preview: children under their parent, the replay phase.

``acp-client replay`` / ``run`` show a child indented under its parent, titled by the
association, with its own state (or the parent's mirror, else "activity unknown"); a
resumed session shows its replay phase, a truncated replay as a warning (ACP-V2-PREVIEW
3.1, 3.3). The HTML page nests children by ``parentSessionId`` and shows the same phase.
"""

from __future__ import annotations

import io
import re
from typing import Any

from helpers import empty_session
from rich.console import Console

from acp_client.cli._html import LogPage, render_page
from acp_client.cli._render import render_snapshot
from acp_client.cli._render_sections import tree_order

SGR = re.compile(r"\x1b\[[0-9;]*m")


def render(snapshot: dict[str, Any]) -> str:
    out = io.StringIO()
    render_snapshot(snapshot, Console(file=out, force_terminal=True, width=120))
    return SGR.sub("", out.getvalue())


def snapshot(*sessions: dict[str, Any]) -> dict[str, Any]:
    return {"format": "acp-client/snapshot@1", "sessions": list(sessions), "diagnostics": []}


PARENT = empty_session("sess_p", children=["sess_c"])
CHILD = empty_session(
    "sess_c",
    parentSessionId="sess_p",
    subagent={"title": "Explorer", "description": "reads code", "state": {"state": "running"}},
)
OTHER = empty_session("sess_o")


def test_children_are_indented_under_their_parent_and_titled() -> None:
    text = render(snapshot(CHILD, OTHER, PARENT))  # snapshot order: child first
    lines = text.splitlines()
    heads = [i for i, line in enumerate(lines) if "sess_" in line and "─" in line]
    order = [re.search(r"sess_\w", lines[i]).group(0) for i in heads]  # type: ignore[union-attr]
    assert order == ["sess_o", "sess_p", "sess_c"]
    child_head = lines[heads[2]]
    assert child_head.startswith("  ") and "subagent sess_c" in child_head
    assert "Explorer" in child_head
    assert "child of sess_p" in text and "reads code" in text
    assert "state (reported by the parent): running" in text


def test_a_child_without_any_state_is_activity_unknown() -> None:
    bare = empty_session("sess_c", parentSessionId="sess_p", subagent={})
    assert "activity unknown" in render(snapshot(PARENT, bare))


def test_tree_order_survives_cycles_and_missing_parents() -> None:
    a = empty_session("a", parentSessionId="b")
    b = empty_session("b", parentSessionId="a")
    orphan = empty_session("x", parentSessionId="gone")
    assert [(s["sessionId"], d) for s, d in tree_order([a, b, orphan])] == [
        ("x", 0),
        ("a", 0),
        ("b", 1),
    ]


def test_replay_phase_and_truncation_warning() -> None:
    live = empty_session(
        "s1", replay={"phase": "live", "complete": True, "truncated": False, "requestId": 9}
    )
    cut = empty_session(
        "s2", replay={"phase": "live", "complete": False, "truncated": True, "requestId": 4}
    )
    going = empty_session(
        "s3", replay={"phase": "replaying", "complete": False, "truncated": False, "requestId": 5}
    )
    text = render(snapshot(live, cut, going))
    assert "replay: live (complete)" in text
    assert "replay truncated" in text
    assert "replaying history" in text


def test_html_nests_children_and_shows_the_replay_phase() -> None:
    cut = {**PARENT, "replay": {"phase": "live", "complete": False, "truncated": True}}
    page = render_page([LogPage("log", snapshot(cut, CHILD))])
    parent_at = page.index('<span class="id">sess_p</span>')
    child_at = page.index('<span class="id">sess_c</span>')
    assert parent_at < child_at < page.index("</section>", child_at)
    assert "<h3>Explorer" in page
    assert "replay truncated" in page
