"""The human-readable view of a snapshot (``acp-client replay`` and ``acp-client run``).

Input is the plain-data snapshot of SNAPSHOT.md (format ``acp-client/snapshot@1``); output
is rich renderables. Rendering follows the spec's display rules: text blocks of a message
are joined for reading (4.5), other content blocks become placeholders (5), tool calls show
status, kind (unknown kinds as ``other``), title, content, diffs and locations (7), terminals
are emulated (8.4, :mod:`._terminal`), plans, compactions, notices and usage are listed (9).

Safety: every string taken from the snapshot passes through
:func:`._sanitize.sanitize_text` and is placed in a ``rich.text.Text`` (or, with
``markdown=True``, a ``rich.markdown.Markdown`` without hyperlinks); no markup string is ever
built from agent data, so ``[bold]`` or ``[link=...]`` in agent text shows literally and the
console only ever receives the SGR sequences rich emits itself.

The renderer never raises on unexpected shapes: a value of the wrong type is shown as
compact JSON or skipped. It keeps no state between calls apart from the terminal emulator
cache, so the live view can simply re-render the latest snapshot.

This module owns the public entry points and the order of the whole view (each session's
header, timeline, unretained entries and sections, then the failed requests and the
diagnostics). The parts: :mod:`._render_entities` (timeline entries and their content),
:mod:`._render_sections` (session-level sections and summaries), :mod:`._render_text`
(safe lines, gutters, bulk text, Markdown) and :mod:`._render_style` (styles).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypedDict, Unpack

from rich.console import Console, Group, RenderableType
from rich.text import Text

from . import _render_sections as sections
from ._console import CappedRule as Rule
from ._render_entities import _EntityRenderer, _Options, _SessionContext

# plain_text and its piece sizes are re-exported: they were importable from here
from ._render_text import _PIECE_CHARS as _PIECE_CHARS
from ._render_text import _PIECE_LINES as _PIECE_LINES
from ._render_text import _indent, _line, _s
from ._render_text import plain_text as plain_text
from ._values import Removals
from ._values import dicts as _dicts

__all__ = ["SNAPSHOT_FORMAT", "render_snapshot", "snapshot_renderable"]

SNAPSHOT_FORMAT = "acp-client/snapshot@1"
"""The snapshot format this view understands."""


class _Renderer(_EntityRenderer):
    """The whole view: every session with its timeline and sections, then the summaries."""

    def __init__(
        self,
        options: _Options,
        truncated: Iterable[Sequence[str]] = (),
        removed: Iterable[Sequence[object]] = (),
    ) -> None:
        super().__init__(options, truncated)
        self.removed = Removals(removed)

    def session(self, session: Mapping[str, Any]) -> list[RenderableType]:
        """Every section of one session."""
        session_id = _s(session.get("sessionId"))
        child = "parentSessionId" in session
        kind = "subagent " if child else "session "
        title = Text.assemble((kind, "bold"), (session_id, "bold cyan"))
        info = session.get("sessionInfo")
        subagent = session.get("subagent")
        if child and isinstance(subagent, Mapping) and subagent.get("title") is not None:
            title.append_text(_line(("  " + _s(subagent.get("title")), "bold")))
        elif isinstance(info, Mapping) and info.get("title") is not None:
            title.append_text(_line(("  " + _s(info.get("title")), "bold")))
        out: list[RenderableType] = [Rule(title, align="left")]
        out += sections.session_meta(session)
        out += sections.subagent(session)
        out += sections.replay(session)
        out += sections.state(session)
        terminals = {_s(t.get("terminalId")): t for t in _dicts(session.get("terminals"))}
        ctx = _SessionContext(session_id, terminals)
        out.append(Text())
        entries = list(_dicts(session.get("timeline")))
        limit = self.opt.last_entries
        hidden = 0
        if limit is not None and len(entries) > limit:
            hidden = len(entries) - limit
            entries = entries[hidden:] if limit > 0 else []
            out.append(Text(f"… {hidden} earlier timeline entries not shown", style="dim"))
        slots = self.removed.slots(session_id, len(entries), hidden)
        for entry, removed in zip(entries, slots, strict=False):
            out += [sections.removed_plan(plan_id) for plan_id in removed]  # P45, in place
            out += self.entry(entry, ctx)
        out += [sections.removed_plan(plan_id) for plan_id in slots[-1]]
        unretained = list(_dicts(session.get("unretained")))
        if unretained:
            out.append(Text())
            noun = "entry" if len(unretained) == 1 else "entries"
            out.append(
                Text(
                    f"{len(unretained)} {noun} not retained by the last history replay:",
                    style="bold dim",
                )
            )
            for entry in unretained:
                out.append(_indent(Group(*self.entry(entry, ctx)), 1))
        others = [t for tid, t in terminals.items() if tid not in ctx.shown_terminals]
        tail: list[RenderableType] = []
        for term in others:
            tail += self.terminal(term, ctx)
        tail += sections.plans(session.get("plans"), self.removed.unplaced.get(session_id, ()))
        tail += sections.suggestions(session)
        tail += sections.usage(session.get("usage"))
        tail += sections.notices(session.get("notices"))
        tail += sections.prompts(session.get("prompts"))
        tail += sections.permissions(session.get("permissionRequests"))
        unknown = list(_dicts(session.get("unknownUpdates")))
        if unknown:
            kinds = Counter(_s(u.get("sessionUpdate")) for u in unknown)
            summary = ", ".join(f"{kind}: {n}" for kind, n in kinds.most_common())
            tail.append(_line(("unknown updates: ", "bold"), f"{len(unknown)} ({summary})"))
        if tail:
            out.append(Text())
            out += tail
        return out

    def snapshot(
        self, snapshot: Mapping[str, Any], failed: Iterable[Mapping[str, Any]] = ()
    ) -> list[RenderableType]:
        """The whole snapshot: every session, the failed requests, the diagnostics summary."""
        out: list[RenderableType] = []
        if not isinstance(snapshot, Mapping):
            return [_line(("unexpected snapshot: not a JSON object", "bold red"))]  # type: ignore[unreachable]  # untyped callers
        fmt = snapshot.get("format")
        if fmt != SNAPSHOT_FORMAT:
            out.append(_line((f"unexpected snapshot format {_s(fmt)!r}", "bold red")))
        sessions = list(_dicts(snapshot.get("sessions")))
        if not sessions:
            out.append(Text("(no sessions)", style="dim"))
        for session, depth in sections.tree_order(sessions):
            parts = self.session(session)
            out += parts if depth == 0 else [_indent(Group(*parts), depth)]
        out += sections.failed_requests(failed)
        out += sections.diagnostics(snapshot.get("diagnostics"))
        return out


def snapshot_renderable(
    snapshot: Mapping[str, Any],
    *,
    show_thoughts: bool = True,
    markdown: bool = False,
    terminal_lines: int = 200,
    last_entries: int | None = None,
    text_lines: int | None = None,
    failed_requests: Iterable[Mapping[str, Any]] = (),
    truncated_terminals: Iterable[Sequence[str]] = (),
    removed_plans: Iterable[Sequence[object]] = (),
) -> Group:
    """The view of ``snapshot`` as one rich renderable (for ``rich.live.Live``).

    Args:
        snapshot: a snapshot dict (format ``acp-client/snapshot@1``).
        show_thoughts: include the agent's thought messages.
        markdown: render message text as Markdown (without hyperlinks) instead of plain text.
        terminal_lines: keep the last this many lines of each terminal's output.
        last_entries: show only the last this many timeline entries of each session.
        text_lines: show only about the last this many lines of each text (a live view's
            room), saying how much came before.
        failed_requests: the replay's failed requests (``FailedRequest.to_json()`` each),
            shown after the sessions.
        truncated_terminals: ``(sessionId, terminalId)`` pairs whose output the (v1)
            client cut at its byte limit: said above their output.
        removed_plans: ``(sessionId, planId, position)`` of the plans a ``plan_removed``
            deleted (ACP v2 Preview P45; not in the snapshot), as
            :func:`~acp_client.cli._values.removed_plans` reads them: each shown as "plan
            ... removed" in the timeline before the entry at ``position`` (a pair without
            a position: in the plans section).
    """
    options = _Options(show_thoughts, markdown, max(1, terminal_lines), last_entries, text_lines)
    renderer = _Renderer(options, truncated_terminals, removed_plans)
    return Group(*renderer.snapshot(snapshot, failed_requests))


class ViewOptions(TypedDict, total=False):
    """The options of :func:`render_snapshot`: those of :func:`snapshot_renderable`."""

    show_thoughts: bool
    markdown: bool
    terminal_lines: int
    last_entries: int | None
    failed_requests: Iterable[Mapping[str, Any]]
    truncated_terminals: Iterable[Sequence[str]]
    removed_plans: Iterable[Sequence[object]]


def render_snapshot(
    snapshot: Mapping[str, Any], console: Console, **options: Unpack[ViewOptions]
) -> None:
    """Print the human-readable view of ``snapshot`` to ``console``.

    Every agent-supplied string is sanitized and never parsed as markup; terminal output is
    emulated. See :func:`snapshot_renderable` for the options.
    """
    console.print(snapshot_renderable(snapshot, **options))
