"""``acp-client replay --html``: the self-contained transcript page (issue 24).

The page of every transcript and sample log is well-formed and shows every message text and
tool-call title of the snapshot; a hostile log (script tags, event-handler attributes,
``javascript:`` links, raw HTML, OSC sequences, bidi overrides) shows all of it as text and
yields no script, no handler attribute and no unsafe link. A real browser (headless Chromium)
opens a few pages: the texts are in its DOM, the hostile script never ran, and a screenshot
is taken. The browser tests are skipped when ``chromium`` is missing, but fail under ``CI``.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from acp_client import __version__, replay_log
from acp_client.cli import main
from acp_client.cli._html import CSP, LogPage, render_page
from acp_client.cli._html_text import markdown_html, terminal_html

HERE = Path(__file__).resolve().parent
LOGS = sorted(
    [
        p
        for p in (HERE / "transcripts").iterdir()
        if p.suffix in (".jsonl", ".json") and ".snapshot" not in p.name
    ]
    + [p for p in (HERE / "logs").iterdir() if p.name.startswith("sample.")]
)
_VOID = frozenset({"meta", "br", "img", "hr", "input", "link", "wbr"})


class _Page(HTMLParser):
    """Checks nesting while collecting the text, tags and attributes of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []
        self.title = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1] == "title":
            self.title += data
        elif "style" not in self.stack:
            self.text.append(data)


def _parse(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    parser.close()
    return parser


def _words(text: str) -> str:
    return " ".join(text.split())


def _dicts(value: object) -> Iterator[dict[str, Any]]:
    for item in value if isinstance(value, list) else ():
        if isinstance(item, dict):
            yield item


def _expected_texts(snapshot: dict[str, Any]) -> Iterator[str]:
    """Every message's text lines and every tool call's title, whitespace collapsed."""
    for session in _dicts(snapshot["sessions"]):
        for entry in _dicts(session["timeline"]):
            if entry.get("entry") == "toolCall" and isinstance(entry.get("title"), str):
                yield _words(entry["title"])
            if entry.get("entry") != "message":
                continue
            text = "".join(
                b["text"] for b in _dicts(entry.get("content")) if isinstance(b.get("text"), str)
            )
            for line in text.splitlines():
                if line.strip():
                    yield _words(line)


def _page_for(log: Path) -> tuple[str, dict[str, Any]]:
    result = replay_log(str(log))
    snapshot = result.snapshot()
    page = render_page([LogPage(str(log), snapshot, result.format, result.replayer.version)])
    return page, snapshot


# -- every transcript and sample ------------------------------------------------------------


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_page_is_well_formed_and_shows_every_message_and_tool_call(log: Path) -> None:
    page, snapshot = _page_for(log)
    parsed = _parse(page)
    assert parsed.errors == []
    assert parsed.stack == []
    assert page.startswith("<!DOCTYPE html>")
    text = _words(" ".join(parsed.text))
    expected = list(_expected_texts(snapshot))
    assert expected or log.stem == "unknown_variants"  # that one has only unknown content
    assert page.count('<section class="session">') == len(snapshot["sessions"]) > 0
    for item in expected:
        assert item in text
    # the log, the format detected, the protocol version and the acp_client version
    result = replay_log(str(log))
    assert str(log) in text
    assert f"format {result.format}" in text
    assert f"protocol v{result.replayer.version}" in text
    assert f"acp_client {__version__}" in text
    # self-contained: no external resource, no script, the policy in place
    assert f'content="{CSP}"' in page
    for tag, attrs in parsed.tags:
        assert tag not in ("script", "link", "iframe", "object", "embed")
        for name, value in attrs:
            assert not name.startswith("on")
            if name == "src":
                assert (value or "").startswith("data:")


def test_page_shows_state_tool_calls_terminals_plans_usage_and_permissions() -> None:
    page, _ = _page_for(HERE / "transcripts" / "recorded_v2_agent.jsonl")
    text = _words(" ".join(_parse(page).text))
    for part in (
        "state: idle stop reason end_turn",
        "tool Run the test suite completed execute call-1",
        "$ pytest -q",
        "exited: exit code 0",
        "progress 100%",
        "completed Read the failing test high",
        "2,400 / 200,000 tokens (1%) · cost 0.02 USD",
        "Allow running the test suite?",
        "selected allow-once (Allow)",
        "no diagnostics",
    ):
        assert part in text
    assert '<details class="entry role-thought">' in page  # thoughts folded
    assert '<span class="f-green">' in page  # the terminal's colour


def test_diagnostics_are_listed_with_line_severity_code_and_message() -> None:
    snapshot = {
        "format": "acp-client/snapshot@1",
        "sessions": [],
        "diagnostics": [
            {
                "line": 17,
                "severity": "warning",
                "code": "chunk-for-unknown-message",
                "message": "m<1>",
            }
        ],
    }
    page = render_page([LogPage("x.jsonl", snapshot, "jsonrpc", 2)])
    text = _words(" ".join(_parse(page).text))
    assert "17 warning chunk-for-unknown-message m<1>" in text
    assert "(no sessions)" in text


def test_sessions_nest_under_their_parent() -> None:
    def session(sid: str, **extra: Any) -> dict[str, Any]:
        return {"sessionId": sid, "announced": True, "timeline": [], **extra}

    snapshot = {
        "format": "acp-client/snapshot@1",
        "sessions": [
            session("child", parentSessionId="root"),
            session("root"),
            session("loop-a", parentSessionId="loop-b"),
            session("loop-b", parentSessionId="loop-a"),
        ],
        "diagnostics": [],
    }
    page = render_page([LogPage("x", snapshot)])
    assert _parse(page).errors == []
    root = page.index(">root<")
    child = page.index(">child<")
    assert root < child < page.index("</section>", child) < page.index("</section>", root) + 1
    assert page.count('<section class="session">') == 4  # a parent cycle is still shown


# -- hostile agent text ---------------------------------------------------------------------

_SCRIPT = (
    "<script>document.title='PWNED';"
    "document.body.insertAdjacentHTML('beforeend','<p id=\"pwned\">x</p>')</script>"
)
_IMG = "<img src=x onerror=alert(1)>"
_LINK = "[click me](javascript:alert(1))"
_RAW = '<div onclick="alert(2)">raw block</div>'
_BIDI = "abc\u202eevil\u202c"
_TERMINAL = (
    b"\x1b]0;EVIL-TITLE\x07"
    b"\x1b[31mred text\x1b[0m plain "
    b"\x1b]8;;https://evil.example/osc8\x1b\\hyperlinked\x1b]8;;\x1b\\"
    b" \x1b[2J\x1b[Hcleared <b>bold?</b>\r\n"
)


def _hostile_log(path: Path) -> Path:
    sid = "s<1>"

    def update(update: dict[str, Any]) -> dict[str, Any]:
        return {"method": "session/update", "params": {"sessionId": sid, "update": update}}

    text = f"{_SCRIPT}\n\n{_IMG}\n\n{_LINK}\n\n{_RAW}\n\n{_BIDI}\n\n&#x202E;entity"
    messages: list[tuple[str, dict[str, Any]]] = [
        ("outgoing", {"id": 0, "method": "initialize", "params": {"protocolVersion": 2}}),
        ("incoming", {"id": 0, "result": {"protocolVersion": 2, "capabilities": {}}}),
        ("outgoing", {"id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}),
        ("incoming", {"id": 1, "result": {"sessionId": sid}}),
        ("incoming", update({"sessionUpdate": "session_info_update", "title": _SCRIPT})),
        (
            "incoming",
            update(
                {
                    "sessionUpdate": "agent_message",
                    "messageId": "m1",
                    "content": [{"type": "text", "text": text}],
                }
            ),
        ),
        (
            "incoming",
            update(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "c1",
                    "title": f"tool {_IMG}",
                    "kind": 'execute" onmouseover="alert(3)',
                    "status": "completed",
                    "content": [{"type": "terminal", "terminalId": "t1"}],
                    "locations": [{"path": "/x/<script>y</script>", "line": 3}],
                }
            ),
        ),
        (
            "incoming",
            update({"sessionUpdate": "terminal_update", "terminalId": "t1", "command": _IMG}),
        ),
        (
            "incoming",
            update(
                {
                    "sessionUpdate": "terminal_output_chunk",
                    "terminalId": "t1",
                    "data": base64.b64encode(_TERMINAL).decode(),
                }
            ),
        ),
        (
            "incoming",
            update({"sessionUpdate": "notice", "severity": 'error"x', "title": _BIDI}),
        ),
    ]
    lines = [json.dumps({"direction": d, "message": {"jsonrpc": "2.0", **m}}) for d, m in messages]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _assert_nothing_active(page: str) -> None:
    parsed = _parse(page)
    assert parsed.errors == []
    assert "<script" not in page.lower()
    for tag, attrs in parsed.tags:
        assert tag not in ("script", "iframe", "object", "embed", "link", "base", "form")
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name)
            if name == "href":
                assert (value or "").startswith(("http:", "https:", "mailto:"))
            if name == "src":
                assert (value or "").startswith("data:")
            if name == "class":
                assert re.fullmatch(r"[a-z0-9_ -]+", value or ""), value
    assert not re.search(r"javascript:", " ".join(str(a) for _, a in parsed.tags))


def test_hostile_log_shows_everything_as_text_and_nothing_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _hostile_log(tmp_path / "hostile.jsonl")
    out = tmp_path / "page.html"
    assert main(["replay", str(log), "--html", str(out)]) == 0
    assert capsys.readouterr().out == ""  # --html alone: the page instead of the view
    page = out.read_text(encoding="utf-8")
    _assert_nothing_active(page)
    text = " ".join(_parse(page).text)
    for shown in (_SCRIPT, _IMG, _LINK, "raw block", "/x/<script>y</script>:3", "<b>bold?</b>"):
        assert shown in text
    assert "red text" in text and "hyperlinked" in text and "cleared" in text
    assert '<span class="f-red">red text</span>' in page
    # every escape sequence is gone: the title, the OSC 8 target, the screen clear
    assert "\x1b" not in page and "EVIL-TITLE" not in page and "evil.example" not in page
    # bidi overrides (also written as a character reference) are made visible
    assert "\u202e" not in page and "\u202c" not in page
    assert "abc<U+202E>evil<U+202C>" in text
    assert "<U+202E>entity" in text


def test_markdown_links_only_to_safe_schemes_and_no_raw_html() -> None:
    html = markdown_html(
        "[ok](https://example.com/a?b=1&c=2) [mail](mailto:a@b.c) [bad](javascript:alert(1))"
        " [data](data:text/html,x) [rel](../etc/passwd) ![pic](https://example.com/p.png)\n\n"
        '<iframe src=x></iframe>\n\n```js" onload="x\ncode <b>\n```'
    )
    assert '<a href="https://example.com/a?b=1&amp;c=2" rel="noopener noreferrer nofollow">' in html
    assert '<a href="mailto:a@b.c"' in html
    assert html.count("<a ") == 2
    assert "[bad](javascript:alert(1))" in html
    assert "<img" not in html and "[image: pic &lt;https://example.com/p.png&gt;]" in html
    assert "&lt;iframe src=x&gt;" in html
    assert "<pre><code>code &lt;b&gt;\n</code></pre>" in html  # the fence info is dropped


def test_terminal_colours_and_controls() -> None:
    assert terminal_html(b"\x1b[1;32mok\x1b[0m done") == (
        '<span class="f-green t-bold">ok</span> done'
    )
    assert terminal_html(b"\x1b[38;5;208ma\x1b[48;2;1;2;300mb") == (
        '<span style="color:#ff8700">a</span>'
        '<span style="color:#ff8700;background:#0102ff">b</span>'
    )
    assert terminal_html(b"10%\r50%\r100%\nnext\x07\x08") == "100%\nnext"
    assert terminal_html(b"a\x1b]0;title never ended") == "a"
    c1 = "\u009b31mc1\u009bm <&>".encode()  # the 8-bit CSI, as UTF-8
    assert terminal_html(c1) == '<span class="f-red">c1</span> &lt;&amp;&gt;'


# -- the command line -----------------------------------------------------------------------


def test_html_with_json_prints_the_snapshot_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = HERE / "transcripts" / "cancellation.jsonl"
    out = tmp_path / "page.html"
    assert main(["replay", str(log), "--json", "--html", str(out)]) == 0
    assert json.loads(capsys.readouterr().out) == replay_log(str(log)).snapshot()
    assert "pageExtras" not in out.read_text(encoding="utf-8")
    assert _parse(out.read_text(encoding="utf-8")).errors == []


def test_html_usage_errors_and_unreadable_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = str(HERE / "transcripts" / "cancellation.jsonl")
    out = tmp_path / "page.html"
    assert main(["replay", log, "--stats", "--html", str(out)]) == 2
    assert main(["replay", log, "--follow", "--html", str(out)]) == 2
    assert not out.exists()
    assert main(["replay", log, "--html", str(tmp_path / "missing" / "page.html")]) == 2
    assert "cannot write" in capsys.readouterr().err
    # a log that cannot be read: exit 3 as for the other outputs; the page says what it read
    assert main(["replay", log, str(tmp_path / "nope.jsonl"), "--html", str(out)]) == 3
    assert "cancellation.jsonl" in out.read_text(encoding="utf-8")


# -- a real browser -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is required in CI (apt-get install chromium)")
        pytest.skip("chromium is not installed")
    return path


def _browser(chromium: str, tmp_path: Path, *args: str) -> str:
    run = subprocess.run(
        [
            chromium,
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            f"--user-data-dir={tmp_path / 'chromium-profile'}",
            *args,
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    return run.stdout.decode("utf-8")


@pytest.mark.parametrize(
    "name", ["recorded_v2_agent.jsonl", "recorded_v1_agent.jsonl", "v1_worked_example.jsonl"]
)
def test_browser_shows_every_message_and_tool_call(
    chromium: str, tmp_path: Path, name: str
) -> None:
    log = HERE / "transcripts" / name
    out = tmp_path / "page.html"
    assert main(["replay", str(log), "--html", str(out)]) == 0
    dom = _browser(chromium, tmp_path, "--dump-dom", out.as_uri())
    text = _words(" ".join(_parse(dom).text))
    for item in _expected_texts(replay_log(str(log)).snapshot()):
        assert item in text
    shot = tmp_path / "page.png"
    _browser(chromium, tmp_path, f"--screenshot={shot}", "--window-size=1000,1400", out.as_uri())
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 10_000


def test_browser_never_runs_the_hostile_script(chromium: str, tmp_path: Path) -> None:
    log = _hostile_log(tmp_path / "hostile.jsonl")
    out = tmp_path / "page.html"
    assert main(["replay", str(log), "--html", str(out)]) == 0
    dom = _browser(chromium, tmp_path, "--dump-dom", out.as_uri())
    parsed = _parse(dom)
    assert parsed.title.startswith("acp-client transcript")  # the script would set "PWNED"
    assert not any(("id", "pwned") in attrs for _, attrs in parsed.tags)  # nor add its element
    assert not any(tag == "script" for tag, _ in parsed.tags)
    text = " ".join(parsed.text)
    assert _SCRIPT in text and _IMG in text and _LINK in text


_PATCH = (
    "diff --git /p/a.py /p/a.py\n--- /p/a.py\n+++ /p/a.py\n@@ -1,2 +1,2 @@\n"
    " keep\n-old line\n+new line\n"
)
FULL: dict[str, Any] = {
    "format": "acp-client/snapshot@1",
    "sessions": [
        {
            "sessionId": "s1",
            "announced": False,
            "protocolVersion": 2,
            "closed": True,
            "state": {"state": "idle", "stopReason": "refusal"},
            "completedTurns": ["end_turn", None],
            "sessionInfo": {"title": "Fix **it**", "updatedAt": "2026-01-01T00:00:00Z"},
            "timeline": [
                {
                    "entry": "message",
                    "messageId": "u1",
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "look at "},
                        {"type": "text", "text": "**this**"},
                        {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
                        {"type": "resource", "resource": {"uri": "file:///r", "text": "res <t>"}},
                    ],
                },
                {
                    "entry": "toolCall",
                    "toolCallId": "c1",
                    "title": "Edit a.py",
                    "kind": "edit",
                    "status": "failed",
                    "content": [
                        {
                            "type": "diff",
                            "changes": [
                                {"operation": "modify", "path": "/p/a.py"},
                                {"operation": "move", "oldPath": "/p/b", "path": "/p/c"},
                            ],
                            "patch": {"format": "git_patch", "text": _PATCH},
                        },
                        {"type": "diff", "changes": [], "patch": {"format": "other", "text": ""}},
                    ],
                    "locations": [{"path": "/p/a.py", "line": 2}],
                    "rawInput": {"path": "/p/a.py"},
                    "excludedFromContext": True,
                },
                {
                    "entry": "compaction",
                    "compactionId": "k1",
                    "status": "failed",
                    "summary": [{"type": "text", "text": "summary text"}],
                    "error": "too long",
                },
                {"entry": "future", "x": 1},
            ],
            "unretained": [{"entry": "message", "messageId": "a0", "role": "agent", "content": []}],
            "terminals": [
                {
                    "terminalId": "t9",
                    "command": "make",
                    "exitStatus": {"signal": "SIGKILL"},
                    "output": "not base64!",
                    "truncatedBytes": 10,
                },
            ],
            "plans": [
                {
                    "planId": "p1",
                    "plan": {
                        "type": "items",
                        "entries": [
                            {"content": "step one", "status": "in_progress", "priority": "high"}
                        ],
                    },
                },
                {"planId": "p2", "plan": {"type": "graph"}},
            ],
            "usage": {"used": 5, "size": 10, "cost": {"amount": 1.5, "currency": "EUR"}},
            "notices": [{"severity": "warning", "title": "slow", "description": "mcp down"}],
            "prompts": [
                {
                    "requestId": 3,
                    "status": "rejected",
                    "echoed": False,
                    "error": {"code": -32602, "message": "bad prompt", "data": {"k": 1}},
                },
            ],
            "permissionRequests": [
                {
                    "requestId": 7,
                    "title": "Edit?",
                    "description": "a.py",
                    "toolCallId": "c1",
                    "status": "pending",
                    "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}],
                },
                {
                    "requestId": 8,
                    "title": "Again?",
                    "status": "cancelled",
                    "outcome": {"outcome": "cancelled"},
                    "options": [],
                },
            ],
            "unknownUpdates": [{"sessionUpdate": "future_update", "v": 1}],
            "availableCommands": [{"name": "test"}],
            "configOptions": [{"name": "Verbose", "currentValue": False}],
        }
    ],
    "diagnostics": [],
}


def test_every_section_of_a_full_snapshot(tmp_path: Path) -> None:
    failed = [{"line": 4, "method": "session/new", "error": {"code": -1, "message": "no"}}]
    page = render_page([LogPage("full", FULL, "jsonrpc", 2, failed, [("s1", "t9")])])
    parsed = _parse(page)
    assert parsed.errors == [] and parsed.stack == []
    text = _words(" ".join(parsed.text))
    for part in (
        "Fix **it** s1",  # the title is plain text, not Markdown
        "state: idle stop reason refusal",
        "protocol v2 · not announced (log mid-stream) · closed · updated 2026-01-01T00:00:00Z",
        "2 completed turns (end_turn: 1, none: 1)",
        "commands: /test",
        "config: Verbose = false",
        "look at this",
        "[image image/png]",
        "[resource file:///r ] res <t>",
        "tool Edit a.py failed edit c1 (excluded from context)",
        "/p/a.py:2",
        "modify /p/a.py",
        "move /p/b → /p/c",
        "(patch in format other not shown)",
        "raw input",
        "compaction k1 failed",
        "summary text",
        "too long",
        'future entry {"entry":"future","x":1}',
        "1 entries not retained",
        "$ make",
        "exited: signal SIGKILL",
        "cut by the client at its byte limit",
        "10 earlier bytes dropped",
        "(stored output is not valid base64)",
        "in_progress step one high",
        '{"type":"graph"}',
        "5 / 10 tokens (50%) · cost 1.5 EUR",
        "warning slow : mcp down",
        "3 rejected no error -32602 bad prompt",
        "7 Edit? a.py tool c1 Allow allow_once pending",
        "8 Again? cancelled cancelled",
        "1 unknown updates",
        "4 session/new error -1 no",
    ):
        assert part in text, part
    assert "<strong>this</strong>" in page
    assert '<img alt="image" src="data:image/png;base64,iVBORw0KGgo=">' in page
    assert '<span class="add">+new line</span>' in page
    assert '<span class="del">-old line</span>' in page
    assert '<span class="hunk">@@ -1,2 +1,2 @@</span>' in page
    assert '<details class="entry compaction">' in page
    (tmp_path / "full.html").write_text(page, encoding="utf-8")


def test_html_of_the_example_log_and_of_many_logs_at_once(tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    assert main(["replay", "--html", str(out)]) == 0
    assert "example log (shipped in the package)" in out.read_text(encoding="utf-8")
    logs = [str(HERE / "transcripts" / n) for n in ("cancellation.jsonl", "unknown_variants.jsonl")]
    assert main(["replay", "--jobs", "2", *logs, "--html", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.count('<section class="log">') == 2
    assert all(log in page for log in logs)
