"""``acp-client replay`` on a log with the v2 Preview's elements (docs/preview.md).

The rendered view shows inter-session messages with sender and recipient, a tool call's link
to a session, the opt-in suggestions, cursors and the ``unknown`` state; a removed plan is
gone from the plans; ``--json`` carries the new keys; the HTML page shows the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import handshake_lines

from acp_client.cli import main

LINES: list[dict[str, Any]] = handshake_lines("sess_p")


def _update(sid: str, update: dict[str, Any]) -> dict[str, Any]:
    params = {"sessionId": sid, "update": update}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


def _text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


UPDATES = [
    _update(
        "sess_c",
        {
            "sessionUpdate": "session_message",
            "messageId": "sm1",
            "senderSessionId": "sess_p",
            "recipientSessionId": "sess_c",
            "content": [_text("Explore the parser")],
        },
    ),
    _update(
        "sess_p",
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t1",
            "title": "Spawn explorer",
            "content": [{"type": "session", "sessionId": "sess_c"}],
        },
    ),
    _update(
        "sess_p",
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "markdown", "planId": "old", "content": "# gone"},
        },
    ),
    _update("sess_p", {"sessionUpdate": "plan_removed", "planId": "old"}),
    _update(
        "sess_p",
        {
            "sessionUpdate": "prompt_suggestions_update",
            "suggestions": [{"prompt": [_text("Run the suite")]}],
        },
    ),
    _update(
        "sess_p",
        {
            "sessionUpdate": "cursor_update",
            "cursorId": "cur1",
            "anchor": {"type": "tool_call", "toolCallId": "t1", "position": "after"},
        },
    ),
    _update("sess_p", {"sessionUpdate": "state_update", "state": "running"}),
    _update("sess_p", {"sessionUpdate": "state_update", "state": "unknown"}),
]
OPT_IN = [
    "--unstable",
    "prompt_suggestions",
    "--unstable",
    "cursors",
    "--unstable",
    "unknown_state",
]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "preview.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in LINES + UPDATES))
    return path


def test_replay_json_carries_the_preview_keys(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", "--json", *OPT_IN, str(log)]) == 0
    sessions = {s["sessionId"]: s for s in json.loads(capsys.readouterr().out)["sessions"]}
    parent, child = sessions["sess_p"], sessions["sess_c"]
    assert child["timeline"][0]["entry"] == "sessionMessage"
    assert child["timeline"][0]["senderSessionId"] == "sess_p"
    assert parent["plans"] == []
    assert parent["promptSuggestions"] == [{"prompt": [_text("Run the suite")]}]
    assert parent["cursors"][0]["cursorId"] == "cur1"
    assert parent["lastKnownState"] == {"state": "running"}


def test_replay_without_opt_in_keeps_unstable_updates_unknown(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", "--json", str(log)]) == 0
    parent = json.loads(capsys.readouterr().out)["sessions"][0]
    kinds = [u["sessionUpdate"] for u in parent["unknownUpdates"]]
    assert kinds == ["prompt_suggestions_update", "cursor_update"]
    assert not {"promptSuggestions", "cursors", "lastKnownState"} & parent.keys()
    assert parent["state"] == {"state": "unknown"}


def test_rendered_view_shows_sender_recipient_and_opt_in_features(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", *OPT_IN, str(log)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "session message from sess_p to sess_c sm1" in out
    assert "Explore the parser" in out
    assert "→ session sess_c" in out
    assert "prompt suggestions: 1" in out and "Run the suite" in out
    assert "cursor cur1" in out
    assert "not confirmed (last known: running)" in out
    assert "# gone" not in out  # the removed plan


def test_html_page_shows_the_preview_elements(log: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    assert main(["replay", *OPT_IN, str(log), "--html", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert 'session message from <span class="id">sess_p</span>' in html
    assert 'to <span class="id">sess_c</span>' in html
    assert "→ session" in html and "prompt suggestions" in html and "Run the suite" in html
    assert "<h4>cursors</h4>" in html and "not confirmed; last known" in html


def test_run_passes_the_opt_in_to_its_live_connection() -> None:
    """``acp-client run --unstable`` reaches the transport's live connection."""
    from trio.testing import memory_stream_one_way_pair

    from acp_client.transport import AgentConnection

    send, receive = memory_stream_one_way_pair()
    agent = AgentConnection(send, receive, unstable=("cursors",))
    cursor = {"sessionUpdate": "cursor_update", "cursorId": "c1"}
    agent.connection.receive_data((json.dumps(_update("s", cursor)) + "\n").encode())
    assert agent.connection.snapshot()["sessions"][0]["cursors"] == [{"cursorId": "c1"}]


def test_run_accepts_the_unstable_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", "--help"])
    assert info.value.code == 0
    assert "--unstable FEATURE" in capsys.readouterr().out
