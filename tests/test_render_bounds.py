"""Rendering huge agent text costs a bounded amount of work (issue 26).

A 100 MB message without newlines took minutes to render: rich splits one huge ``Text`` in
quadratic time, and cutting a long line into pieces copied the rest of it once per piece.
Now every view (the terminal view, the HTML page) shows at most ``TEXT_LIMIT`` characters of
one text (its first and last half, the rest counted in a note), and the work is counted here
rather than timed: the characters that reach the sanitizer and the output do not grow with
the text.
"""

from __future__ import annotations

import base64
import io
from typing import Any

import pyte
import pytest
from helpers import empty_session
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console, Group
from rich.text import Text

from acp_client.cli import _html_timeline, _render_entities, _render_text, _sanitize
from acp_client.cli import _terminal as terminal
from acp_client.cli._render import snapshot_renderable
from acp_client.cli._sanitize import clip_middle, sanitize_line, sanitize_text

LIMIT = 2_000


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_sanitize, "TEXT_LIMIT", LIMIT)


def _snapshot(text: str, markdown_error: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"entry": "message", "role": "agent", "messageId": "m"}
    message["content"] = [{"type": "text", "text": text}]
    session: dict[str, Any] = {"sessionId": "s", "timeline": [message]}
    if markdown_error is not None:
        session["state"] = {"state": "idle", "stopReason": "error"}
        session["state"]["error"] = {"code": 1, "message": markdown_error}
    return {"format": "acp-client/snapshot@1", "sessions": [session]}


def _rendered(renderable: Any, width: int = 100) -> str:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None, legacy_windows=False).print(renderable)
    return out.getvalue()


class _Counter:
    """Wraps sanitize_text where the renderer calls it: counts the characters it is given."""

    def __init__(self) -> None:
        self.chars = 0

    def __call__(self, text: str) -> str:
        self.chars += len(text)
        return sanitize_text(text)


@pytest.mark.usefixtures("small_limit")
@pytest.mark.parametrize("markdown", [False, True])
def test_the_work_of_rendering_a_text_does_not_grow_with_its_length(
    monkeypatch: pytest.MonkeyPatch, markdown: bool
) -> None:
    shown: list[int] = []
    for size in (10 * LIMIT, 100 * LIMIT):
        counter = _Counter()
        monkeypatch.setattr(_render_entities, "sanitize_text", counter)
        text = "kv" * (size // 2)  # one line, no newline
        out = _rendered(snapshot_renderable(_snapshot(text), markdown=markdown))
        assert counter.chars <= LIMIT
        shown.append(out.count("k") + out.count("v"))
        assert f"… {size - LIMIT:,} more characters not shown" in out
    assert shown[0] == shown[1] == LIMIT  # the first and the last half, every time


@pytest.mark.usefixtures("small_limit")
def test_the_head_and_the_tail_of_a_huge_text_are_shown_in_order() -> None:
    text = "HEAD" + "x" * (5 * LIMIT) + "TAIL"
    rows = _rendered(snapshot_renderable(_snapshot(text)), width=80).split("\n")
    joined = "".join(row.strip() for row in rows)
    assert joined.index("HEAD") < joined.index("more characters not shown") < joined.index("TAIL")


@pytest.mark.usefixtures("small_limit")
def test_a_text_under_the_limit_is_shown_whole() -> None:
    text = "y" * LIMIT
    out = _rendered(snapshot_renderable(_snapshot(text)))
    assert out.count("y") == LIMIT and "not shown" not in out


@pytest.mark.usefixtures("small_limit")
def test_a_huge_error_message_and_header_part_are_cut_too() -> None:
    huge = "e" * (50 * LIMIT)
    out = _rendered(snapshot_renderable(_snapshot("hi", markdown_error=huge)))
    assert out.count("e") < 2 * LIMIT and f"{50 * LIMIT - LIMIT:,} more characters" in out
    title = _render_text._line(("t" * 10 * _render_text._PART_CHARS, "bold"))
    assert len(title.plain) == _render_text._PART_CHARS and title.plain.endswith("…")


@pytest.mark.usefixtures("small_limit")
def test_a_huge_patch_is_cut_in_the_middle() -> None:
    patch = "+added\n" * (10 * LIMIT)
    text = _render_entities._EntityRenderer.git_patch(patch)
    assert len(text.plain) < 2 * LIMIT and "more characters not shown" in text.plain


@pytest.mark.usefixtures("small_limit")
def test_the_html_page_shows_the_same_bounded_part() -> None:
    sizes = []
    for size in (10 * LIMIT, 100 * LIMIT):
        page = _html_timeline._blocks([{"type": "text", "text": "z" * size}])
        sizes.append(page.count("z"))
        assert f"… {size - LIMIT:,} more characters not shown" in page
    assert sizes[0] == sizes[1] == LIMIT


def test_a_line_longer_than_a_piece_is_cut_by_index_into_equal_pieces() -> None:
    # The pieces of one long line: each a full piece but the last, none copied twice.
    size = 7 * _render_text._PIECE_CHARS + 3
    group = _render_text.plain_text("q" * size)
    assert isinstance(group, Group)
    pieces = [len(piece.plain) for piece in group.renderables if isinstance(piece, Text)]
    assert pieces == [_render_text._PIECE_CHARS] * 7 + [3]


@given(st.text(max_size=60), st.integers(0, 30))
def test_clip_middle_keeps_a_prefix_and_a_suffix_and_counts_the_rest(text: str, limit: int) -> None:
    head, hidden, tail = clip_middle(text, limit)
    assert text.startswith(head) and text.endswith(tail)
    assert len(head) + hidden + len(tail) == len(text)
    assert len(head) + len(tail) <= max(limit, 0) or hidden == 0
    assert (hidden == 0) == (len(text) <= limit)
    if hidden == 0:
        assert (head, tail) == (text, "")


@given(st.text(alphabet=st.sampled_from("a\r\n\t\x1b\u202e"), max_size=40), st.integers(1, 20))
def test_a_cut_line_is_the_cut_of_the_whole_line(text: str, limit: int) -> None:
    # Sanitizing only the part that can be shown gives the line that was shown before.
    whole = sanitize_line(text)
    cut = sanitize_line(text, limit=limit)
    assert len(cut) <= limit
    if len(text) <= limit and len(whole) <= limit:
        assert cut == whole
    else:
        assert cut.endswith("…") and whole.startswith(cut[:-1])


# -- the terminal emulation budget is per render, all terminals together ------------------------


class _FakeClock:
    """Time that passes only while the emulator works: ``tick`` seconds per slice fed."""

    def __init__(self, tick: float) -> None:
        self.now = 0.0
        self.tick = tick

    def __call__(self) -> float:
        return self.now

    def install(self, patch: pytest.MonkeyPatch) -> None:
        feed = pyte.Stream.feed

        def slow_feed(stream: pyte.Stream, data: str) -> None:
            self.now += self.tick
            feed(stream, data)

        patch.setattr(pyte.Stream, "feed", slow_feed)
        patch.setattr(terminal, "_clock", self)


def _terminals_snapshot(outputs: list[bytes]) -> dict[str, Any]:
    terminals = [
        {
            "terminalId": f"t{i}",
            "output": base64.b64encode(data).decode(),
            "size": {"cols": 20, "rows": 10},
        }
        for i, data in enumerate(outputs)
    ]
    session = empty_session("s", announced=True, terminals=terminals)
    return {"format": "acp-client/snapshot@1", "sessions": [session], "diagnostics": []}


@pytest.fixture
def fake_emulation_clock(monkeypatch: pytest.MonkeyPatch) -> _FakeClock:
    clock = _FakeClock(0.01)
    clock.install(monkeypatch)
    monkeypatch.setattr(terminal, "EMULATION_BUDGET", 0.1)
    monkeypatch.setattr(terminal, "_FEED_SLICE", 10)
    terminal.clear_terminal_cache()
    return clock


def test_twenty_hostile_terminals_share_one_render_budget(
    fake_emulation_clock: _FakeClock,
) -> None:
    # 20 terminals of 100 slices each: with a budget per terminal one render spent 20 times
    # the budget (41 s in `run` for real); now the render spends about one budget in all.
    outputs = [b"0123456789" * 100 for _ in range(20)]
    started = fake_emulation_clock.now
    out = _rendered(snapshot_renderable(_terminals_snapshot(outputs)))
    spent = fake_emulation_clock.now - started
    assert spent <= terminal.EMULATION_BUDGET + 2 * fake_emulation_clock.tick
    assert out.count("emulating them took too long or failed") == 1  # the expensive one
    assert out.count("not shown yet: this view's emulation time went to other terminals") == 19


def test_a_terminal_left_behind_catches_up_in_a_later_render(
    fake_emulation_clock: _FakeClock,
) -> None:
    hostile, quiet = b"0123456789" * 100, b"line one\r\nline two\r\n"
    snap = _terminals_snapshot([hostile, quiet])
    key = ("s", "t1")
    first = terminal.terminal_view(
        snap["sessions"][0]["terminals"][1], max_lines=200, cache_key=key
    )  # its own render: the whole budget
    terminal.clear_terminal_cache()
    budget = terminal.EmulationBudget()
    views = [
        terminal.terminal_view(t, max_lines=200, cache_key=("s", t["terminalId"]), budget=budget)
        for t in snap["sessions"][0]["terminals"]
    ]
    assert views[0].unemulated_bytes > 0 and not views[0].behind  # stopped for good
    assert views[1].behind and views[1].unemulated_bytes == len(quiet)
    later = terminal.terminal_view(snap["sessions"][0]["terminals"][1], cache_key=key)
    assert not later.behind and later.unemulated_bytes == 0
    assert [line.plain for line in later.lines] == [line.plain for line in first.lines]
    assert [line.plain for line in later.lines] == ["line one", "line two"]


@given(st.lists(st.integers(0, 60), min_size=1, max_size=6), st.integers(1, 4))
def test_renders_in_any_budget_show_what_one_unbudgeted_render_shows(
    sizes: list[int], renders: int
) -> None:
    # However the budget is split, a terminal that is never stopped ends up showing exactly
    # what a fresh render without any budget shows: behind is only ever late, never wrong.
    with pytest.MonkeyPatch.context() as patch:
        _FakeClock(0.01).install(patch)
        patch.setattr(terminal, "EMULATION_BUDGET", 0.05)
        patch.setattr(terminal, "_FEED_SLICE", 7)
        terminal.clear_terminal_cache()
        outputs = [b"".join(b"row %d\r\n" % n for n in range(size)) for size in sizes]
        views: list[terminal.TerminalView] = []
        for _ in range(renders + 20):  # enough renders for a terminal behind to catch up
            budget = terminal.EmulationBudget()
            views = [
                terminal.render_terminal_bytes(data, cache_key=i, budget=budget)
                for i, data in enumerate(outputs)
            ]
        expected = []
        for data in outputs:
            patch.setattr(terminal, "EMULATION_BUDGET", 1e9)
            expected.append([line.plain for line in terminal.render_terminal_bytes(data).lines])
    for view, lines in zip(views, expected, strict=True):
        if not view.behind and view.unemulated_bytes == 0:
            assert [line.plain for line in view.lines] == lines
        else:
            assert view.unemulated_bytes > 0
