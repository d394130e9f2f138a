"""The rendered view of a snapshot: key information, hostile text, terminal emulation."""

from __future__ import annotations

import base64
import io
import re
import unicodedata
from typing import Any

import pytest
from helpers import empty_session
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from acp_client.cli._render import render_snapshot, snapshot_renderable
from acp_client.cli._terminal import (
    clear_terminal_cache,
    render_terminal_bytes,
    terminal_view,
)

SGR = re.compile(r"\x1b\[[0-9;]*m")

# Every kind of hostile sequence, plus rich markup that must show literally.
HOSTILE = (
    "A\x1b[2J\x1b[10;5H\x1b[3A"  # erase screen, cursor moves
    "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"  # OSC 8 hyperlink
    "\x1b]52;c;aGVsbG8=\x07"  # OSC 52 clipboard write
    "\x1b]0;title\x07"  # window title
    "\x07\x08\x00\r"  # bell, backspace, NUL, CR
    "\x9b31m\x9d0;t\x9c\x85"  # C1 CSI, OSC, ST, NEL
    "\u202eevil\u202c\u2066iso\u2069\u200e\u200f\u061c\u200b\ufeff"  # bidi and invisibles
    "[bold red]red[/bold red][link=http://x]l[/link]Z"  # rich markup
)
HOSTILE_BYTES = HOSTILE.encode("utf-8", "surrogatepass")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def console(width: int = 2000) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, color_system="truecolor", width=width), out


def render(snapshot: dict[str, Any], **kwargs: Any) -> str:
    con, out = console(kwargs.pop("width", 2000))
    render_snapshot(snapshot, con, **kwargs)
    return out.getvalue()


def plain(output: str) -> str:
    return SGR.sub("", output)


def assert_terminal_safe(output: str) -> None:
    """Only plain SGR sequences; no other ESC, no OSC, no BEL, no C1, no bidi or invisibles."""
    rest = SGR.sub("", output)
    assert "\x1b" not in rest
    assert "\x07" not in rest
    bad = [
        ch
        for ch in rest
        if (ord(ch) < 0x20 and ch != "\n")
        or 0x7F <= ord(ch) <= 0x9F
        or unicodedata.category(ch) in ("Cf", "Zl", "Zp", "Cs")
    ]
    assert bad == []


def hostile_snapshot() -> dict[str, Any]:
    h = HOSTILE
    text = {"type": "text", "text": h}
    blocks = [
        text,
        {"type": "image", "data": "aGk=", "mimeType": h, "uri": h},
        {"type": "audio", "data": "aGk=", "mimeType": h},
        {"type": "resource_link", "name": h, "uri": h, "title": h, "description": h},
        {"type": "resource", "resource": {"uri": h, "text": h, "mimeType": h}},
        {"type": "resource", "resource": {"uri": h, "blob": "aGk="}},
        {"type": h, "field": h},
        text,
    ]
    tool_call = {
        "entry": "toolCall",
        "toolCallId": h,
        "title": h,
        "name": h,
        "kind": h,
        "status": h,
        "content": [
            {"type": "content", "content": text},
            {
                "type": "diff",
                "changes": [
                    {"operation": "modify", "path": h, "fileType": h, "mimeType": h},
                    {"operation": "move", "oldPath": h, "path": h},
                    {"operation": h, "path": h},
                ],
                "patch": {"format": "git_patch", "text": f"diff --git {h} {h}\n-{h}\n+{h}\n"},
            },
            {"type": "diff", "changes": [], "patch": {"format": h, "text": h}},
            {"type": "terminal", "terminalId": h},
            {"type": h, "x": h},
        ],
        "locations": [{"path": h, "line": 3}, {"path": h}],
        "rawInput": {h: h},
        "rawOutput": h,
        "excludedFromContext": True,
    }
    timeline = [
        {"entry": "message", "messageId": h, "role": "user", "content": blocks},
        {"entry": "message", "messageId": h, "role": "agent", "content": blocks},
        {"entry": "message", "messageId": h, "role": "thought", "content": blocks},
        {"entry": "message", "messageId": h, "role": h, "content": blocks},
        tool_call,
        {
            "entry": "compaction",
            "compactionId": h,
            "status": h,
            "summary": blocks,
            "error": h,
        },
        {"entry": h, "x": h},
    ]
    terminal = {
        "terminalId": h,
        "command": h,
        "cwd": h,
        "output": b64(HOSTILE_BYTES + b"\n" + HOSTILE_BYTES),
        "exitStatus": {"exitCode": 1, "signal": h},
        "size": {"cols": 80, "rows": 24},
        "truncatedBytes": 0,
    }
    session = {
        "sessionId": h,
        "announced": True,
        "protocolVersion": 2,
        "state": {
            "state": "idle",
            "stopReason": "error",
            "error": {"code": -32603, "message": h, "data": {h: h}},
            "background": [{"type": "terminal", "terminalId": h}],
        },
        "completedTurns": [h, None, "error"],
        "sessionInfo": {"title": h, "updatedAt": h},
        "availableCommands": [{"type": "command", "name": h, "description": h}],
        "configOptions": [
            {
                "type": "select",
                "configId": h,
                "name": h,
                "currentValue": h,
                "options": [{"value": h, "name": h}],
            },
            {"type": "boolean", "configId": "b", "name": h, "currentValue": True},
        ],
        "timeline": timeline,
        "terminals": [terminal, {**terminal, "terminalId": "other", "command": h}],
        "plans": [
            {
                "planId": h,
                "plan": {
                    "type": "items",
                    "planId": h,
                    "entries": [{"content": h, "priority": h, "status": h}],
                },
            },
            {"planId": "p2", "plan": {"type": h, "planId": "p2", "body": h}},
        ],
        "usage": {"used": 10, "size": 100, "cost": {"amount": 1.5, "currency": h}},
        "notices": [{"severity": h, "title": h, "description": h}],
        "prompts": [
            {
                "requestId": h,
                "status": "rejected",
                "echoed": False,
                "error": {"code": 1, "message": h},
            }
        ],
        "permissionRequests": [
            {
                "requestId": h,
                "title": h,
                "description": h,
                "toolCallId": h,
                "status": "pending",
                "options": [{"optionId": h, "name": h, "kind": h}],
            },
            {
                "requestId": 2,
                "title": h,
                "status": h,
                "outcome": {"outcome": "selected", "optionId": h},
                "options": [{"optionId": h, "name": h, "kind": h}],
            },
        ],
        "unknownUpdates": [{"sessionUpdate": h, "x": h}],
        "unretained": timeline,
    }
    custom_state = {
        **session,
        "sessionId": "s2",
        "state": {"state": h, "extra": h},
        "completedTurns": [],
    }
    unknown_reason = {**session, "sessionId": "s3", "state": {"state": "idle", "stopReason": h}}
    return {
        "format": "acp-client/snapshot@1",
        "sessions": [session, custom_state, unknown_reason],
        "diagnostics": [
            {"line": 1, "severity": "warning", "code": h, "message": h},
            {"severity": h, "code": "x", "message": h},
        ],
    }


@pytest.mark.parametrize("markdown", [False, True])
def test_hostile_text_never_reaches_the_console(markdown: bool) -> None:
    clear_terminal_cache()
    output = render(hostile_snapshot(), markdown=markdown)
    assert_terminal_safe(output)
    text = plain(output)
    # neutralized sequences stay visible, markup shows literally
    assert "\\x1b]8;;http://x" in text
    assert "<U+202E>evil" in text
    assert "[bold red]red[/bold red][link=http://x]l[/link]Z" in text
    # the emulated terminal consumed the OSC strings and shows the rest of the text
    assert "link" in text


def test_hostile_text_at_a_narrow_width() -> None:
    clear_terminal_cache()
    assert_terminal_safe(render(hostile_snapshot(), width=40))


def full_snapshot() -> dict[str, Any]:
    return {
        "format": "acp-client/snapshot@1",
        "sessions": [
            {
                "sessionId": "sess_1",
                "announced": True,
                "protocolVersion": 2,
                "state": {"state": "idle", "stopReason": "max_tokens"},
                "completedTurns": ["end_turn", "max_tokens"],
                "sessionInfo": {"title": "Fix the tests"},
                "timeline": [
                    {
                        "entry": "message",
                        "messageId": "u1",
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "Please "},
                            {"type": "text", "text": "run the tests"},
                        ],
                    },
                    {
                        "entry": "message",
                        "messageId": "t1",
                        "role": "thought",
                        "content": [{"type": "text", "text": "secret reasoning"}],
                    },
                    {
                        "entry": "toolCall",
                        "toolCallId": "call_1",
                        "title": "Run pytest",
                        "kind": "execute",
                        "status": "failed",
                        "content": [{"type": "terminal", "terminalId": "term_1"}],
                        "locations": [{"path": "/p/test_x.py", "line": 12}],
                    },
                    {
                        "entry": "toolCall",
                        "toolCallId": "call_2",
                        "kind": "_custom_kind",
                        "status": "_custom_status",
                        "content": [],
                        "locations": [],
                    },
                    {
                        "entry": "compaction",
                        "compactionId": "cmp_1",
                        "status": "completed",
                        "summary": [{"type": "text", "text": "context summarized"}],
                    },
                ],
                "terminals": [
                    {
                        "terminalId": "term_1",
                        "command": "pytest -q",
                        "output": b64(b"\x1b[31m1 failed\x1b[0m\r\n"),
                        "exitStatus": {"exitCode": 1},
                        "truncatedBytes": 0,
                    }
                ],
                "plans": [
                    {
                        "planId": "plan_1",
                        "plan": {
                            "type": "items",
                            "planId": "plan_1",
                            "entries": [
                                {"content": "write fix", "priority": "high", "status": "completed"},
                                {"content": "rerun", "priority": "low", "status": "in_progress"},
                            ],
                        },
                    }
                ],
                "usage": {
                    "used": 50000,
                    "size": 200000,
                    "cost": {"amount": 0.42, "currency": "USD"},
                },
                "notices": [{"severity": "error", "title": "Quota low"}],
                "prompts": [{"requestId": 1, "status": "accepted", "echoed": True}],
                "permissionRequests": [
                    {
                        "requestId": 9,
                        "title": "Allow running pytest?",
                        "toolCallId": "call_1",
                        "status": "pending",
                        "options": [
                            {"optionId": "ok", "name": "Allow once", "kind": "allow_once"},
                            {"optionId": "no", "name": "Reject", "kind": "reject_once"},
                        ],
                    }
                ],
                "unknownUpdates": [{"sessionUpdate": "_vendor_thing", "x": 1}],
                "unretained": [],
            }
        ],
        "diagnostics": [
            {
                "line": 4,
                "severity": "warning",
                "code": "chunk-for-unknown-message",
                "message": "m1",
            },
            {
                "line": 5,
                "severity": "warning",
                "code": "chunk-for-unknown-message",
                "message": "m2",
            },
            {"line": 6, "severity": "error", "code": "invalid-json", "message": "bad line"},
        ],
    }


def test_key_information_appears() -> None:
    text = plain(render(full_snapshot(), width=120))
    for expected in [
        "sess_1",
        "Fix the tests",
        "Please run the tests",  # adjacent text blocks joined
        "secret reasoning",
        "Run pytest",
        "[failed]",
        "execute",
        "/p/test_x.py:12",
        "$ pytest -q",
        "exit code 1",
        "1 failed",
        "[_custom_status] (in progress)",
        "(untitled)",
        "context summarized",
        "write fix",
        "[completed] high",
        "rerun",
        "[in_progress] low",
        "50,000 / 200,000 tokens (25%)",
        "cost: 0.42 USD",
        "stop reason: max_tokens (token limit reached)",
        "completed turns: 2",
        "Quota low",
        "Allow running pytest?",
        "Allow once",
        "[ok]",
        "Reject",
        "unknown updates: 1 (_vendor_thing: 1)",
        "3 (2 warning, 1 error)",
        "chunk-for-unknown-message: 2",
        "line 6 error invalid-json: bad line",
    ]:
        assert expected in text, expected
    # an unknown kind is displayed as other
    assert "other  call_2" in text


def test_thoughts_can_be_hidden_and_entries_limited() -> None:
    text = plain(render(full_snapshot(), show_thoughts=False, width=120))
    assert "secret reasoning" not in text
    text = plain(render(full_snapshot(), last_entries=1, width=120))
    assert "4 earlier timeline entries not shown" in text
    assert "context summarized" in text
    assert "Run pytest" not in text
    # the terminal of a hidden tool call is still shown, in the terminals list
    assert "1 failed" in text


def test_error_stop_reason_shows_the_error() -> None:
    snap = full_snapshot()
    snap["sessions"][0]["state"] = {
        "state": "idle",
        "stopReason": "error",
        "error": {"code": -32000, "message": "upstream timed out"},
    }
    text = plain(render(snap, width=120))
    assert "stop reason: error" in text
    assert "error -32000: upstream timed out" in text


def test_terminal_output_colours_reach_the_console_as_sgr() -> None:
    output = render(full_snapshot(), width=120)
    assert "\x1b[31m1 failed" in output


def test_malformed_shapes_do_not_crash() -> None:
    snap: dict[str, Any] = {
        "format": "something-else",
        "sessions": [
            {
                "sessionId": 5,
                "state": "idle",
                "timeline": [
                    "junk",
                    {"entry": "message", "role": "agent", "content": "notalist"},
                    {"entry": "message", "role": "agent", "content": [1, None, {"type": "text"}]},
                    {"entry": "toolCall", "content": {"a": 1}, "locations": "x", "status": 3},
                    {"entry": "toolCall", "content": [{"type": "terminal"}, 7]},
                    {"entry": "compaction"},
                ],
                "terminals": [{"terminalId": "t", "output": "!!notbase64", "size": "big"}],
                "plans": [{"planId": "p", "plan": None}, {"plan": {"type": "items", "entries": 3}}],
                "usage": {"used": "many", "size": None, "cost": "free"},
                "notices": [3, {"severity": None}],
                "prompts": [{"status": "rejected"}],
                "permissionRequests": [{"status": "pending", "options": None, "outcome": 3}],
                "unknownUpdates": [{}],
                "unretained": None,
            },
            "not a session",
        ],
        "diagnostics": [{"code": None}, 4],
    }
    text = plain(render(snap, width=80))
    assert "unexpected snapshot format 'something-else'" in text
    assert "(stored output is not valid base64)" in text


def test_snapshot_renderable_is_a_reusable_group() -> None:
    group = snapshot_renderable(full_snapshot())
    con, out = console(120)
    con.print(group)
    con.print(group)
    assert plain(out.getvalue()).count("Run pytest") == 2


# -- terminal emulation ------------------------------------------------------------------------


def lines(data: bytes, **kwargs: Any) -> list[str]:
    return [line.plain for line in render_terminal_bytes(data, **kwargs).lines]


def test_carriage_return_overwrites() -> None:
    assert lines(b"abc\rX") == ["Xbc"]


def test_bare_line_feed_starts_a_new_line() -> None:
    assert lines(b"one\ntwo\r\nthree\n\n\n") == ["one", "two", "three"]


def test_cursor_movement_and_erase_are_interpreted() -> None:
    assert lines(b"hello\x1b[2D\x1b[K!") == ["hel!"]
    assert lines(b"1\r\n2\r\n3\x1b[2A\rX") == ["X", "2", "3"]
    assert lines(b"progress 10%\r\x1b[2Kprogress 100%\r\n") == ["progress 100%"]


def test_sgr_colours_become_styled_text() -> None:
    view = render_terminal_bytes(b"\x1b[1;32mok\x1b[0m and \x1b[38;2;1;2;3mtc\x1b[44mbg\x1b[0m")
    (line,) = view.lines
    assert line.plain == "ok and tcbg"
    styles = {line.plain[s.start : s.end]: s.style for s in line.spans}
    ok = styles["ok"]
    assert not isinstance(ok, str)
    assert ok.bold and ok.color is not None and ok.color.name == "green"
    tc = styles["tc"]
    assert not isinstance(tc, str) and tc.color is not None
    assert tc.color.triplet is not None and tuple(tc.color.triplet) == (1, 2, 3)
    bg = styles["bg"]
    assert not isinstance(bg, str) and bg.bgcolor is not None and bg.bgcolor.name == "blue"


def test_utf8_split_across_chunks_decodes_and_invalid_bytes_are_replaced() -> None:
    data = "héllo → 中文".encode()
    assert data[2:3] == b"\xa9"  # the first two bytes end inside "é"
    # the snapshot holds the joined bytes, whatever the chunk boundaries were
    terminal = {"terminalId": "t", "output": b64(data)}
    assert [line.plain for line in terminal_view(terminal).lines] == ["héllo → 中文"]
    # a live view that saw the output end inside the sequence continues it correctly
    clear_terminal_cache()
    assert [x.plain for x in render_terminal_bytes(data[:2], cache_key="u").lines] == ["h"]
    assert [x.plain for x in render_terminal_bytes(data, cache_key="u").lines] == ["héllo → 中文"]
    assert lines(b"a\xffb") == ["a\ufffdb"]
    assert lines(b"a\xff\xfeb\xc3(") == ["a\ufffd\ufffdb\ufffd("]


def test_size_is_respected() -> None:
    assert lines(b"x" * 25, size={"cols": 10, "rows": 5}) == ["x" * 10, "x" * 10, "x" * 5]
    view = render_terminal_bytes(b"a\r\n" * 3, size={"cols": 10, "rows": 5})
    assert (view.cols, view.rows) == (10, 5)
    # absolute cursor positioning lands inside the 10x5 screen
    assert lines(b"\x1b[5;10HZ", size={"cols": 10, "rows": 5}) == ["", "", "", "", " " * 9 + "Z"]
    # lines that scroll off a small screen are kept as scrollback
    data = b"".join(b"line %d\r\n" % i for i in range(10))
    assert lines(data, size={"cols": 20, "rows": 3}) == [f"line {i}" for i in range(10)]


def test_unknown_size_uses_120_columns() -> None:
    assert lines(b"y" * 130) == ["y" * 120, "y" * 10]


def test_only_the_last_lines_are_kept() -> None:
    data = b"".join(b"line %d\n" % i for i in range(50))
    view = render_terminal_bytes(data, max_lines=5)
    assert [line.plain for line in view.lines] == [f"line {i}" for i in range(45, 50)]
    assert view.hidden_lines == 45
    view = render_terminal_bytes(data, size={"cols": 20, "rows": 4}, max_lines=5)
    assert [line.plain for line in view.lines] == [f"line {i}" for i in range(45, 50)]


def test_terminal_escape_strings_are_consumed_and_invisibles_escaped() -> None:
    data = (
        b"\x1b]0;title\x07\x1b]52;c;aGk=\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ "
        + "\u202eevil\x85\x01z".encode()
    )
    assert lines(data) == ["link <U+202E>evilz"]


def test_invalid_base64_is_reported() -> None:
    view = terminal_view({"terminalId": "t", "output": "@@@"})
    assert view.invalid_base64 and view.lines == ()


FRAGMENTS = [
    b"a",
    b"bc",
    b"\r",
    b"\n",
    b"\r\n",
    b"\t",
    b"\x1b[31m",
    b"\x1b[0m",
    b"\x1b[2K",
    b"\x1b[A",
    b"\x1b[3D",
    b"\x1b]0;t\x07",
    b"\xc3",
    b"\xa9",
    b"\xe4\xb8\xad",
    b"\x1b",
    b"[",
    b"1",
    b"m",
]


@given(
    st.lists(st.sampled_from(FRAGMENTS), max_size=60),
    st.lists(st.integers(0, 200), max_size=5),
    st.sampled_from([None, {"cols": 7, "rows": 3}]),
)
def test_incremental_rendering_matches_a_fresh_render(
    parts: list[bytes], cuts: list[int], size: dict[str, int] | None
) -> None:
    data = b"".join(parts)
    clear_terminal_cache()
    for cut in sorted(cuts):
        render_terminal_bytes(data[:cut], size=size, max_lines=8, cache_key="t")
    incremental = render_terminal_bytes(data, size=size, max_lines=8, cache_key="t")
    clear_terminal_cache()
    fresh = render_terminal_bytes(data, size=size, max_lines=8)
    assert incremental.lines == fresh.lines
    assert all(isinstance(line, Text) for line in fresh.lines)


def test_cache_is_rebuilt_when_the_output_is_replaced() -> None:
    clear_terminal_cache()
    assert [x.plain for x in render_terminal_bytes(b"first", cache_key="k").lines] == ["first"]
    assert [x.plain for x in render_terminal_bytes(b"other", cache_key="k").lines] == ["other"]
    # bytes dropped from the front by a retention limit: the emulator continues
    render_terminal_bytes(b"0123\r\n", cache_key="r")
    view = render_terminal_bytes(b"23\r\nmore", offset=2, cache_key="r")
    assert [x.plain for x in view.lines] == ["0123", "more"]


def _rendered(renderable: Any, width: int = 30) -> str:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None, legacy_windows=False).print(renderable)
    return out.getvalue()


@given(
    st.lists(st.text(st.sampled_from("ab c\t"), max_size=24), max_size=40),
    st.integers(1, 5),
)
def test_long_text_in_pieces_renders_the_same_lines(lines: list[str], per_piece: int) -> None:
    # One huge rich Text splits its lines in quadratic time; the pieces must not show it.
    from acp_client.cli import _render_text

    text = "\n".join(lines)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_render_text, "_PIECE_LINES", per_piece)
        patch.setattr(_render_text, "_PIECE_CHARS", 25)  # every line here fits in a piece
        pieces = _render_text.plain_text(text, "bold")
    assert _rendered(pieces) == _rendered(Text(text, style="bold"))


def test_a_line_longer_than_a_piece_is_shown_whole_in_order() -> None:
    from acp_client.cli._render import _PIECE_CHARS, plain_text

    line = "".join(chr(ord("a") + i % 26) for i in range(3 * _PIECE_CHARS + 5))
    shown = _rendered(plain_text(f"start\n{line}\nend"), width=200).split("\n")
    assert shown[0] == "start" and shown[-2] == "end"
    assert "".join(shown[1:-2]) == line


def test_a_live_view_shows_the_end_of_long_text_and_says_what_it_left_out() -> None:
    lines = [f"line {i}" for i in range(1000)]
    message = {"entry": "message", "role": "agent", "messageId": "m"}
    message["content"] = [{"type": "text", "text": "\n".join(lines)}]
    snap = {"format": "acp-client/snapshot@1", "sessions": [{"sessionId": "s"}]}
    snap["sessions"][0]["timeline"] = [message]
    shown = [
        row.strip() for row in _rendered(snapshot_renderable(snap, text_lines=50), 100).split("\n")
    ]
    assert lines[950:] == shown[shown.index("line 950") : shown.index("line 999") + 1]
    assert "line 949" not in shown and "line 0" not in shown
    hidden = len("\n".join(lines[:950])) + 1
    assert f"… {hidden:,} earlier characters not shown" in shown
    whole = [row.strip() for row in _rendered(snapshot_renderable(snap), 100).split("\n")]
    assert "line 0" in whole and not any("not shown" in row for row in whole)
    wide = {**message, "content": [{"type": "text", "text": "x" * 100_000}]}
    snap["sessions"][0]["timeline"] = [wide]
    assert "… 80,000 earlier characters not shown" in _rendered(
        snapshot_renderable(snap, text_lines=50), 100
    )


def test_agent_text_in_a_header_cannot_draw_lines_of_its_own() -> None:
    # A newline in a title or plan entry would let the agent fake a line of the view.
    call = {"entry": "toolCall", "toolCallId": "c", "title": "Run\n  ✓ FAKE done"}
    call.update(status="in_progress", kind="other", content=[], locations=[])
    entry = {"content": "a\nFAKE", "priority": "high", "status": "pending"}
    session: dict[str, Any] = {"sessionId": "s", "timeline": [call]}
    session["plans"] = [
        {"planId": "p", "plan": {"type": "items", "planId": "p", "entries": [entry]}}
    ]
    session["sessionInfo"] = {"title": "T\nFAKE"}
    shown = _rendered(snapshot_renderable({"sessions": [session]}), 120)
    rows = [row.strip() for row in shown.split("\n")]
    assert not any(row.startswith(("✓ FAKE", "FAKE")) for row in rows), shown
    assert "Run\\n  ✓ FAKE done" in shown and "a\\nFAKE" in shown and "T\\nFAKE" in shown


def test_a_multi_line_message_keeps_its_lines_behind_a_gutter() -> None:
    # An error message or notice description may have several lines: they stay lines (not
    # `\n` escapes), each after the first behind a gutter, so none passes for a line of its own.
    session: dict[str, Any] = {"sessionId": "s", "timeline": []}
    session["state"] = {
        "state": "idle",
        "stopReason": "error",
        "error": {"code": -32000, "message": "Traceback:\nstate: running"},
    }
    session["notices"] = [{"severity": "info", "title": "N", "description": "one\ntwo"}]
    shown = _rendered(snapshot_renderable({"sessions": [session]}), 120)
    rows = [row.strip() for row in shown.split("\n")]
    assert "\\n" not in shown, shown
    assert "│ state: running" in rows and "│ two" in rows, shown
    assert not any(row.startswith(("state: running", "two")) for row in rows), shown
    # A long line wraps: its wrapped rows keep the gutter too.
    session["state"]["error"]["message"] = "short\n" + "y" * 56 + "✓ FAKE tool done"
    narrow = [
        r.strip() for r in _rendered(snapshot_renderable({"sessions": [session]}), 60).split("\n")
    ]
    ours = [row for row in narrow if "yyyy" in row or "FAKE" in row]
    assert len(ours) >= 2 and all(row.startswith("│") for row in ours), narrow
    # So does a message of one line too long for its row.
    session["state"]["error"]["message"] = "y" * 70 + "✓ FAKE tool done"
    narrow_view = _rendered(snapshot_renderable({"sessions": [session]}), 60)
    fake = [row.strip() for row in narrow_view.split("\n") if "FAKE" in row]
    assert fake and all(row.startswith("│") for row in fake), narrow_view


@pytest.mark.parametrize("snapshot", [1.0, "x", [], None])
def test_a_snapshot_that_is_no_object_is_said_not_raised(snapshot: Any) -> None:
    console = Console(file=io.StringIO(), width=80)
    render_snapshot(snapshot, console)
    assert "not a JSON object" in console.file.getvalue()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "data",
    [b"hello\r\n\x1b[?6h\x1b[5d world\r\n", b"\x1b[?6h\x1b[6n ok", b"\x1b[?6h\x1b[d\x1b[3d x"],
)
def test_origin_mode_without_a_scroll_region_is_emulated_not_raised(data: bytes) -> None:
    # pyte asserts a scroll region under DECOM (VPA, DSR 6); a terminal uses the screen.
    view = render_terminal_bytes(data, size={"cols": 20, "rows": 10})
    assert view.unemulated_bytes == 0
    assert any(line.plain.strip() for line in view.lines)


def test_screen_alignment_pattern_costs_nothing() -> None:
    # 3 bytes of DECALN rewrote every cell: 60 of them at 1000x1000 took 40 s.
    view = render_terminal_bytes(b"\x1b#8" * 60 + b"ok", size={"cols": 1000, "rows": 1000})
    assert [line.plain for line in view.lines] == ["ok"] and view.unemulated_bytes == 0


def test_emulation_stops_at_its_budget_and_says_how_much_it_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import acp_client.cli._terminal as terminal

    monkeypatch.setattr(terminal, "EMULATION_BUDGET", 0.0)  # any feeding is over it
    monkeypatch.setattr(terminal, "_FEED_SLICE", 10)
    data = b"0123456789" * 100
    view = render_terminal_bytes(data, size={"cols": 20, "rows": 10})
    assert view.unemulated_bytes == len(data) - 10  # one slice went in
    assert [line.plain for line in view.lines] == ["0123456789"]
    out = io.StringIO()
    snap = _snapshot_with_terminal(data)
    Console(file=out, width=100, color_system=None).print(snapshot_renderable(snap))
    assert "990 bytes not shown: emulating them took too long or failed" in out.getvalue()


def test_the_budget_is_per_render_so_a_long_live_stream_is_never_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A cached emulator fed a little at a time (the live view) spends more than the budget
    # in all, never in one render. A fake clock: every look at it is 10 ms later, so one
    # render (a few slices) stays under the 0.1 s budget and sixty renders are far over it.
    import itertools

    import acp_client.cli._terminal as terminal

    ticks = itertools.count()
    monkeypatch.setattr(terminal, "_clock", lambda: next(ticks) * 0.01)
    monkeypatch.setattr(terminal, "EMULATION_BUDGET", 0.1)
    data = b""
    for _ in range(60):
        data += b"".join(b"building module %d\r\n" % n for n in range(400))  # > 1 slice
        view = render_terminal_bytes(data, size={"cols": 40, "rows": 5}, cache_key="live")
    assert next(ticks) * 0.01 > 10 * terminal.EMULATION_BUDGET  # the stream did outlast it
    assert view.unemulated_bytes == 0
    assert view.lines[-1].plain == data.split(b"\r\n")[-2].decode()


def test_the_budget_stops_one_render_that_outlasts_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same fake clock with a budget one slice cannot meet: that render stops, says so.
    import itertools

    import acp_client.cli._terminal as terminal

    ticks = itertools.count()
    monkeypatch.setattr(terminal, "_clock", lambda: next(ticks) * 1.0)
    monkeypatch.setattr(terminal, "EMULATION_BUDGET", 0.5)
    data = b"".join(b"building module %d\r\n" % n for n in range(4000))
    view = render_terminal_bytes(data, size={"cols": 40, "rows": 5}, cache_key="slow")
    assert 0 < view.unemulated_bytes < len(data)


def test_bytes_not_shown_are_counted_in_bytes_also_when_they_are_not_utf8(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import acp_client.cli._terminal as terminal

    monkeypatch.setattr(terminal, "EMULATION_BUDGET", -1.0)
    monkeypatch.setattr(terminal, "_FEED_SLICE", 10)
    view = render_terminal_bytes(b"\xe9" * 100, size={"cols": 20, "rows": 10})  # Latin-1
    assert view.unemulated_bytes == 90


def test_an_emulator_failure_keeps_what_was_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    import acp_client.cli._terminal as terminal

    def boom(self: Any, *args: Any) -> None:
        raise RuntimeError("pyte bug")

    monkeypatch.setattr(terminal._Screen, "bell", boom)
    view = render_terminal_bytes(b"drawn\r\n\x07 lost", size={"cols": 20, "rows": 10})
    assert [line.plain for line in view.lines] == ["drawn"] and view.unemulated_bytes > 0


def _snapshot_with_terminal(data: bytes) -> dict[str, Any]:
    term = {
        "terminalId": "t",
        "output": base64.b64encode(data).decode(),
        "size": {"cols": 20, "rows": 10},
    }
    session = empty_session("s", announced=True, terminals=[term])
    return {"format": "acp-client/snapshot@1", "sessions": [session], "diagnostics": []}


def test_markdown_character_references_never_become_raw_invisible_characters() -> None:
    # The parser decodes `&#x202E;` and `&rlm;` after the text was sanitized.
    text = "invoice_&#x202E;fdp.exe &rlm; &zwj;&ZeroWidthSpace; [l&#x202E;](http://x/&#x202E;)"
    text += "\n\n```py&#x202E;\ncode &#x202E;\n```\n`&#x2066;`"
    snap = _snapshot_with_terminal(b"")
    snap["sessions"][0]["terminals"] = []
    entry = {"entry": "message", "messageId": "m", "role": "agent"}
    snap["sessions"][0]["timeline"] = [{**entry, "content": [{"type": "text", "text": text}]}]
    out = io.StringIO()
    render_snapshot(snap, Console(file=out, width=100, color_system=None), markdown=True)
    shown = out.getvalue()
    assert "invoice_<U+202E>fdp.exe" in shown
    for ch in shown:
        assert unicodedata.category(ch) not in ("Cf", "Zl", "Zp", "Cc") or ch == "\n", repr(ch)
