"""``acp-client replay --html``: the conversation as one self-contained HTML page (issue 24).

Owns the page: built only from the snapshot (``acp-client/snapshot@1``, SNAPSHOT.md) plus
what the replay knows about the log (its path, detected format, protocol version), so it
does not depend on the library's internals. Every section of SNAPSHOT.md is shown: each
session with its title and state, its timeline in order (messages as Markdown, thoughts
folded, tool calls with kind, status, locations, content, diffs and terminals, compactions),
the other terminals, plans, usage and cost, notices, prompts, permission requests, unknown
updates; then the failed requests and every diagnostic of the log.

Safety: no text from the log reaches the page unescaped (``_html_text.esc``); Markdown has no
raw HTML and only http, https and mailto links; classes and inline styles come from fixed
tables, never from the log; a Content-Security-Policy forbids scripts and every load except
``data:`` images. The page has no JavaScript (``<details>`` folds).

Sessions nest: a session whose ``parentSessionId`` names another session of the snapshot is
shown inside it (the snapshot does not carry the field yet; when it does, nothing changes here).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._html_text import esc
from ._html_timeline import (
    SEVERITIES,
    Context,
    badge,
    dicts,
    entry,
    error_html,
    json_pre,
    terminal,
    value_html,
)
from ._values import Removals, session_status

__all__ = ["LogPage", "render_page", "write_page"]

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_CSS = """
body{font:15px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header.page{background:#1d2330;color:#eef;padding:12px 24px}
header.page h1{margin:0 0 4px;font-size:20px}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:0 12px;margin:0;font-size:13px}
dl.meta dt{color:#667}dl.meta dd{margin:0;font-family:ui-monospace,monospace}
main{max-width:1000px;margin:0 auto;padding:12px 24px}
section.log>h2{font-size:16px;border-bottom:2px solid #1d2330}
section.session{background:#fff;border:1px solid #d5d9e0;border-radius:8px;padding:8px 16px;
margin:16px 0}
section.session section.session{margin-left:8px;border-left:4px solid #8ab}
h3{margin:4px 0;font-size:17px}h4{margin:12px 0 4px;font-size:14px;color:#445}
.warning{color:#a12b2b}
.dim,.id{color:#778;font-size:12px}.id{font-family:ui-monospace,monospace}
.badge{display:inline-block;border-radius:4px;padding:0 6px;font-size:12px;
background:#e4e7ec;margin-left:4px}
.st-idle,.st-completed,.st-answered,.st-accepted{background:#d8f0dc;color:#185c26}
.st-running,.st-in_progress,.st-pending{background:#dbe8fb;color:#1d4c8f}
.st-requires_action{background:#fdf0c8;color:#7a5800}
.st-failed,.st-rejected,.st-error,.st-cancelled,.st-withdrawn{background:#fbdada;color:#8f1d1d}
.sev-warning{background:#fdf0c8;color:#7a5800}.sev-error{background:#fbdada;color:#8f1d1d}
.sev-info{background:#dbe8fb;color:#1d4c8f}
.entry{margin:10px 0;padding:6px 10px;border-radius:6px;border:1px solid #e2e5ea}
.role-user{background:#eef4ff}.role-agent{background:#fff}
.role-thought{background:#fafafa;color:#556;font-style:italic}
.tool{background:#fbfaf5}.compaction{background:#f5f3fb}
.who{font-weight:600;font-size:13px}.excluded{color:#a33;font-size:12px}
.body>p:first-child{margin-top:2px}.body>p:last-child{margin-bottom:2px}
pre{overflow-x:auto;padding:6px 8px;border-radius:4px;background:#f0f1f4;font-size:13px;
white-space:pre-wrap;word-break:break-word}
code{font-family:ui-monospace,monospace;font-size:13px}
pre.term{background:#16181d;color:#d8dbe0}
pre.diff .add{color:#17692b;background:#e3f6e6}pre.diff .del{color:#9a1c1c;background:#fbe5e5}
pre.diff .hunk{color:#1b6b8a}pre.diff .head{font-weight:600}
table{border-collapse:collapse;font-size:13px;margin:4px 0}
td,th{border:1px solid #d5d9e0;padding:2px 6px;text-align:left;vertical-align:top}
ul.plan{list-style:none;padding-left:4px}summary{cursor:pointer}
.f-black{color:#555}.f-red{color:#e05555}.f-green{color:#4cbb5a}.f-yellow{color:#d6b13c}
.f-blue{color:#5b8fe0}.f-magenta{color:#c061c9}.f-cyan{color:#3fb5c4}.f-white{color:#ddd}
.f-bblack{color:#888}.f-bred{color:#ff7b7b}.f-bgreen{color:#7fe08a}.f-byellow{color:#ffe27a}
.f-bblue{color:#8fb6ff}.f-bmagenta{color:#f09af7}.f-bcyan{color:#7fe7f3}.f-bwhite{color:#fff}
.g-black{background:#000}.g-red{background:#a12b2b}.g-green{background:#2b7a35}
.g-yellow{background:#8a7214}.g-blue{background:#2b4f96}.g-magenta{background:#7d2f86}
.g-cyan{background:#1f7480}.g-white{background:#bbb}.g-bblack{background:#555}
.g-bred{background:#d44}.g-bgreen{background:#4b4}.g-byellow{background:#cc4}
.g-bblue{background:#66f}.g-bmagenta{background:#c5c}.g-bcyan{background:#4cc}
.g-bwhite{background:#eee}
.t-bold{font-weight:700}.t-dim{opacity:.65}.t-italic{font-style:italic}
.t-underline{text-decoration:underline}
"""


# Classes come from these sets only: a value from the log outside them gets "other".
@dataclass
class LogPage:
    """One replayed log to show: its name, what the replay detected, and its snapshot."""

    name: str
    snapshot: Mapping[str, Any]
    format: str | None = None
    protocol: int | None = None
    failed_requests: Sequence[Mapping[str, Any]] = ()
    truncated_terminals: Iterable[Sequence[str]] = ()
    removed_plans: Iterable[Sequence[object]] = ()
    """``(sessionId, planId, position)`` of the plans a ``plan_removed`` deleted (ACP v2
    Preview P45): shown in the timeline before the entry at ``position`` (a pair without
    one: in the plans section)."""


@dataclass
class _Marks:
    """What the page shows beside the snapshot: cut terminals, removed plans (by session)."""

    truncated: set[tuple[str, str]]
    removed: Removals


# -- the rest of a session --------------------------------------------------------------------


def _state(session: Mapping[str, Any]) -> str:
    state = session.get("state")
    if not isinstance(state, Mapping):
        return '<span class="badge">no state reported</span>'
    out = badge(state.get("state"))
    if state.get("stopReason") is not None:
        out += f' <span class="dim">stop reason</span> {esc(state.get("stopReason"))}'
    if state.get("error") is not None:
        out += " " + error_html(state.get("error"))
    last = session.get("lastKnownState")
    if isinstance(last, Mapping):  # the opt-in `unknown` state (ACP v2 Preview P32)
        out += f' <span class="dim">not confirmed; last known</span> {badge(last.get("state"))}'
    background = [
        f"{esc(b.get('type'))} "
        f"{esc(b.get('terminalId') or b.get('toolCallId') or b.get('sessionId'))}"
        for b in dicts(state.get("background"))
    ]
    if background:
        out += f' <span class="dim">background:</span> {", ".join(background)}'
    return out


def _meta(session: Mapping[str, Any]) -> str:
    parts = session_status(session, esc)
    turns = session.get("completedTurns")
    if isinstance(turns, list) and turns:
        reasons = Counter("none" if t is None else str(t) for t in turns)
        parts.append(
            f"{len(turns)} completed turns ("
            + ", ".join(f"{esc(r)}: {n}" for r, n in reasons.items())
            + ")"
        )
    out = f'<p class="dim">{" · ".join(parts)}</p>'
    commands = [esc(c.get("name")) for c in dicts(session.get("availableCommands"))]
    if commands:
        out += "<p><b>commands:</b> " + " ".join(f"<code>/{c}</code>" for c in commands) + "</p>"
    options = [
        f"{esc(o.get('name'))} = <code>{value_html(o.get('currentValue'))}</code>"
        for o in dicts(session.get("configOptions"))
    ]
    if options:
        out += "<p><b>config:</b> " + ", ".join(options) + "</p>"
    return out


def _plans(plans: object, removed: Sequence[str] = ()) -> str:
    """Every plan with its entries; then a line per plan a ``plan_removed`` deleted (P45)."""
    out: list[str] = []
    for plan in dicts(plans):
        content = plan.get("plan")
        out.append(f'<h4>plan <span class="id">{esc(plan.get("planId"))}</span></h4>')
        if not isinstance(content, Mapping) or content.get("type") != "items":
            out.append(json_pre(content))
            continue
        items = [
            f"<li>{badge(e.get('status'))} {esc(e.get('content'))}"
            + (f' <span class="dim">{esc(e.get("priority"))}</span>' if e.get("priority") else "")
            + "</li>"
            for e in dicts(content.get("entries"))
        ]
        out.append(f'<ul class="plan">{"".join(items)}</ul>' if items else "<p>(empty plan)</p>")
    out += [_removed_plan(plan_id) for plan_id in removed]
    return "".join(out)


def _removed_plan(plan_id: str) -> str:
    """The line saying a ``plan_removed`` deleted that plan (P45)."""
    return f'<p class="dim">plan <span class="id">{esc(plan_id)}</span> removed</p>'


def _usage(usage: object) -> str:
    if not isinstance(usage, Mapping):
        return ""
    used, size = usage.get("used"), usage.get("size")
    text = f"{esc(used)} / {esc(size)} tokens"
    if isinstance(used, int) and isinstance(size, int) and size > 0:
        text = f"{used:,} / {size:,} tokens ({(200 * used + size) // (2 * size)}%)"
    cost = usage.get("cost")
    if isinstance(cost, Mapping):
        text += f" · cost {esc(cost.get('amount'))} {esc(cost.get('currency'))}"
    return f"<h4>usage</h4><p>{text}</p>"


def _suggestions(session: Mapping[str, Any]) -> str:
    """Prompt suggestions and cursors (opt-in, ACP v2 Preview P34, P40), when present."""
    out = ""
    items = session.get("promptSuggestions")
    if isinstance(items, list):
        texts = [
            esc(" ".join(str(b.get("text")) for b in dicts(i.get("prompt")) if "text" in b))
            for i in dicts(items)
        ]
        out += "<h4>prompt suggestions</h4>" + (
            "<ul>" + "".join(f"<li>{x}</li>" for x in texts) + "</ul>"
            if texts
            else '<p class="dim">none</p>'
        )
    cursors = list(dicts(session.get("cursors")))
    if cursors:
        out += "<h4>cursors</h4>" + "".join(
            f'<div><span class="id">{esc(c.get("cursorId"))}</span>'
            f"{json_pre(c.get('anchor'))}</div>"
            for c in cursors
        )
    return out


def _notices(notices: object) -> str:
    items = [
        f"<li>{badge(n.get('severity'), 'sev-', SEVERITIES)} <b>{esc(n.get('title'))}</b>"
        + (f": {esc(n.get('description'))}" if n.get("description") is not None else "")
        + "</li>"
        for n in dicts(notices)
    ]
    return f"<h4>notices</h4><ul>{''.join(items)}</ul>" if items else ""


def _table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    if not rows:
        return ""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<h4>{title}</h4><table><tr>{head}</tr>{body}</table>"


def _prompts(prompts: object) -> str:
    rows = [
        (
            esc(p.get("requestId")),
            badge(p.get("status")),
            esc(p.get("messageId")),
            "yes" if p.get("echoed") else "no",
            error_html(p["error"]) if p.get("error") is not None else "",
        )
        for p in dicts(prompts)
    ]
    return _table("prompts", ("request", "status", "message", "echoed", "error"), rows)


def _outcome(req: Mapping[str, Any]) -> str:
    outcome = req.get("outcome")
    if not isinstance(outcome, Mapping):
        return ""
    if outcome.get("outcome") != "selected":
        return esc(outcome.get("outcome"))
    option_id = outcome.get("optionId")
    names = [o.get("name") for o in dicts(req.get("options")) if o.get("optionId") == option_id]
    return f"selected <code>{esc(option_id)}</code>" + (f" ({esc(names[0])})" if names else "")


def _permissions(requests: object) -> str:
    rows = [
        (
            esc(r.get("requestId")),
            f"<b>{esc(r.get('title'))}</b>"
            + (f"<br>{esc(r.get('description'))}" if r.get("description") is not None else "")
            + (
                f'<br><span class="dim">tool {esc(r.get("toolCallId"))}</span>'
                if r.get("toolCallId")
                else ""
            ),
            ", ".join(
                f'{esc(o.get("name"))} <span class="dim">{esc(o.get("kind"))}</span>'
                for o in dicts(r.get("options"))
            ),
            badge(r.get("status")),
            _outcome(r),
        )
        for r in dicts(requests)
    ]
    return _table("permission requests", ("request", "asked", "options", "status", "outcome"), rows)


def _replay(session: Mapping[str, Any]) -> str:
    """The phase of the session's latest replay (ACP-V2-PREVIEW 3.3); truncated: a warning."""
    data = session.get("replay")
    if not isinstance(data, Mapping):
        return ""
    if data.get("truncated"):
        return '<p class="warning"><b>replay truncated:</b> history may be incomplete</p>'
    if data.get("phase") == "replaying":
        return "<p><b>replay:</b> replaying history</p>"
    how = "complete" if data.get("complete") else "ended without replay_complete"
    return f'<p><b>replay:</b> live <span class="dim">({how})</span></p>'


def _session(
    session: Mapping[str, Any],
    children: Mapping[str, list[Mapping[str, Any]]],
    marks: _Marks,
    seen: set[str],
) -> str:
    session_id = str(session.get("sessionId"))
    seen.add(session_id)
    info = session.get("sessionInfo")
    title = info.get("title") if isinstance(info, Mapping) else None
    assoc = session.get("subagent")
    if isinstance(assoc, Mapping) and assoc.get("title") is not None:
        title = assoc.get("title")  # a child: the title its parent gave it (Preview 3.1)
    kind = "subagent" if "parentSessionId" in session else "session"
    out = [
        f'<section class="session"><h3>{esc(title) if title is not None else kind}'
        f' <span class="id">{esc(session_id)}</span></h3>',
        f"<p><b>state:</b> {_state(session)}</p>",
        _replay(session),
        _meta(session),
    ]
    terminals = {str(t.get("terminalId")): t for t in dicts(session.get("terminals"))}
    ctx = Context(terminals, {tid for sid, tid in marks.truncated if sid == session_id})
    items = list(dicts(session.get("timeline")))
    slots = marks.removed.slots(session_id, len(items))
    for item, removed in zip(items, slots, strict=False):
        out += [_removed_plan(plan_id) for plan_id in removed]  # P45, where it happened
        out.append(entry(item, ctx))
    out += [_removed_plan(plan_id) for plan_id in slots[-1]]
    unretained = [entry(item, ctx) for item in dicts(session.get("unretained"))]
    if unretained:
        out.append(
            f"<details><summary>{len(unretained)} entries not retained by the last history"
            f" replay</summary>{''.join(unretained)}</details>"
        )
    others = [terminal(t, ctx) for tid, t in terminals.items() if tid not in ctx.shown]
    if others:
        out.append("<h4>terminals</h4>" + "".join(others))
    out.append(_plans(session.get("plans"), marks.removed.unplaced.get(session_id, ())))
    out.append(_suggestions(session))
    out.append(_usage(session.get("usage")))
    out.append(_notices(session.get("notices")))
    out.append(_prompts(session.get("prompts")))
    out.append(_permissions(session.get("permissionRequests")))
    unknown = list(dicts(session.get("unknownUpdates")))
    if unknown:
        out.append(
            f"<details><summary>{len(unknown)} unknown updates</summary>"
            + "".join(json_pre(u) for u in unknown)
            + "</details>"
        )
    for child in children.get(session_id, ()):
        if str(child.get("sessionId")) not in seen:
            out.append(_session(child, children, marks, seen))
    out.append("</section>")
    return "".join(out)


def _sessions(sessions: list[Mapping[str, Any]], marks: _Marks) -> str:
    """Every session; one naming a known ``parentSessionId`` inside its parent."""
    ids = {str(s.get("sessionId")) for s in sessions}
    children: dict[str, list[Mapping[str, Any]]] = {}
    roots = []
    for session in sessions:
        parent = session.get("parentSessionId")
        if parent is not None and str(parent) in ids and parent != session.get("sessionId"):
            children.setdefault(str(parent), []).append(session)
        else:
            roots.append(session)
    seen: set[str] = set()
    out = [_session(s, children, marks, seen) for s in roots]
    # a cycle of parents has no root: show what nesting could not reach
    out += [
        _session(s, children, marks, seen) for s in sessions if str(s.get("sessionId")) not in seen
    ]
    return "".join(out) or '<p class="dim">(no sessions)</p>'


def _failed(failed: Sequence[Mapping[str, Any]]) -> str:
    rows = [
        (
            esc(f.get("line")),
            f"<code>{esc(f.get('method'))}</code>",
            esc(f.get("sessionId")),
            error_html(f.get("error")),
        )
        for f in dicts(list(failed))
    ]
    return _table("failed requests", ("line", "method", "session", "error"), rows)


def _diagnostics(diagnostics: object) -> str:
    items = list(dicts(diagnostics))
    if not items:
        return '<p class="dim">no diagnostics</p>'
    counts = Counter(str(d.get("severity")) for d in items)
    summary = ", ".join(f"{n} {esc(sev)}" for sev, n in counts.most_common())
    rows = "".join(
        f"<tr><td>{esc(d.get('line'))}</td>"
        f"<td>{badge(d.get('severity'), 'sev-', SEVERITIES)}</td>"
        f"<td><code>{esc(d.get('code'))}</code></td><td>{esc(d.get('message'))}</td></tr>"
        for d in items
    )
    return (
        f"<details open><summary><b>diagnostics</b>: {len(items)} ({summary})</summary>"
        f"<table><tr><th>line</th><th>severity</th><th>code</th><th>message</th></tr>"
        f"{rows}</table></details>"
    )


def _log(page: LogPage, version: str) -> str:
    snapshot = page.snapshot
    sessions = list(dicts(snapshot.get("sessions")))
    truncated = {(str(sid), str(tid)) for sid, tid in page.truncated_terminals}
    marks = _Marks(truncated, Removals(page.removed_plans))
    protocol = f"v{page.protocol}" if page.protocol is not None else "not detected"
    meta = (
        f"<dt>log</dt><dd>{esc(page.name or 'example log (shipped in the package)')}</dd>"
        f"<dt>format</dt><dd>{esc(page.format or 'not detected')}</dd>"
        f"<dt>protocol</dt><dd>{esc(protocol)}</dd>"
        f"<dt>acp_client</dt><dd>{esc(version)}</dd>"
    )
    return (
        f'<section class="log"><dl class="meta">{meta}</dl>'
        f"{_sessions(sessions, marks)}{_failed(page.failed_requests)}"
        f"{_diagnostics(snapshot.get('diagnostics'))}</section>"
    )


def render_page(pages: Sequence[LogPage]) -> str:
    """The whole HTML document for the replayed logs (one section each)."""
    from acp_client import __version__

    names = ", ".join(page.name or "example log" for page in pages)
    body = "".join(_log(page, __version__) for page in pages)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>acp-client transcript: {esc(names)}</title><style>{_CSS}</style></head>"
        f'<body><header class="page"><h1>ACP conversation transcript</h1>'
        f'<p class="dim">acp-client {esc(__version__)} · replay --html</p></header>'
        f"<main>{body}</main></body></html>\n"
    )


def write_page(path: str, pages: Sequence[LogPage]) -> int:
    """Write the page to ``path``; return 0, or 2 (wrong usage) when it cannot be written."""
    import sys

    try:
        with open(path, "w", encoding="utf-8", errors="replace") as out:
            out.write(render_page(pages))
    except OSError as exc:
        name = "".join(ch if ch.isprintable() else "?" for ch in path)
        sys.stderr.write(f"acp-client replay: cannot write {name}: {exc.strerror or exc}\n")
        return 2
    return 0
