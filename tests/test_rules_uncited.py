"""Rules of docs/rules.md that no other test exercised: one test each, through the public API."""

from __future__ import annotations

import base64
import json

from helpers import SID, b64, line, ready, response, term, term_chunk, update

from acp_client import Connection
from acp_client.events import ResponseReceived


def _terminal_output(conn: Connection, terminal_id: str) -> bytes:
    (session,) = conn.snapshot()["sessions"]
    (terminal,) = [t for t in session["terminals"] if t["terminalId"] == terminal_id]
    return base64.b64decode(terminal["output"])


def test_c8_list_cursors_are_opaque_and_an_empty_string_is_a_cursor() -> None:
    """C8: a cursor goes out as given (also ``""``); ``nextCursor`` null ends, ``""`` goes on."""
    conn = ready(SID)
    for cursor in ("", "opaque/+= cursor"):
        rid, data = conn.send_list_sessions(cursor=cursor)
        assert json.loads(data)["params"] == {"cursor": cursor}
        conn.receive_data(line(response(rid, {"sessions": []})))
    rid, _ = conn.send_list_sessions()
    (ended,) = conn.receive_data(line(response(rid, {"sessions": [], "nextCursor": None})))
    rid, _ = conn.send_list_sessions()
    (more,) = conn.receive_data(line(response(rid, {"sessions": [], "nextCursor": ""})))
    assert isinstance(ended, ResponseReceived) and isinstance(more, ResponseReceived)
    assert ended.result.next_cursor is None
    assert more.result.next_cursor == ""
    assert conn.diagnostics == []


def test_a20_an_empty_session_list_is_a_valid_answer_and_listing_creates_no_session() -> None:
    """A20 / 12.4: ``sessions: []`` when nothing matches; listed sessions are not created."""
    conn = ready(SID)
    rid, _ = conn.send_list_sessions(cwd="/nowhere")
    (empty,) = conn.receive_data(line(response(rid, {"sessions": []})))
    assert isinstance(empty, ResponseReceived) and empty.result.sessions == []
    rid, _ = conn.send_list_sessions()
    listed = {"sessionId": "other", "cwd": "/w", "title": "T"}
    (found,) = conn.receive_data(line(response(rid, {"sessions": [listed]})))
    assert isinstance(found, ResponseReceived)
    assert [s.session_id for s in found.result.sessions] == ["other"]
    assert [s["sessionId"] for s in conn.snapshot()["sessions"]] == [SID]
    assert conn.diagnostics == []


def test_c10_the_client_writes_one_utf8_acp_message_per_line() -> None:
    """C10: every message the client writes is one UTF-8 JSON line, no raw newline inside."""
    conn = ready(SID)
    text = "line one\nline two\r\n\u2028 é 🎉"
    _, data = conn.send_prompt(SID, text)
    data += conn.send_cancel(SID)
    lines = data.split(b"\n")
    assert lines[-1] == b"" and len(lines) == 3
    prompt, cancel = (json.loads(raw.decode("utf-8")) for raw in lines[:2])
    assert prompt["method"] == "session/prompt" and prompt["jsonrpc"] == "2.0"
    assert prompt["params"]["prompt"] == [{"type": "text", "text": text}]
    assert cancel == {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": SID}}


def test_a14_order_dependent_terminal_updates_in_one_batch_apply_in_array_order() -> None:
    """A14 / R29: an agent should not batch them; if it does, the array order decides."""
    chunk, snapshot = term_chunk("t", b"+1"), term("t", output={"data": b64("SNAP")})
    first = Connection()
    first.receive_data(line([update(snapshot), update(chunk)]))
    assert _terminal_output(first, "t") == b"SNAP+1"
    second = Connection()
    second.receive_data(line([update(chunk), update(snapshot)]))
    assert _terminal_output(second, "t") == b"SNAP"
