"""The renderer's session-level sections and the replay's summaries.

Owns: the foreground state, stop reason and completed turns (spec 6), JSON-RPC errors,
plans (9.1), usage (9.4), notices (9.6), prompts (10), permission requests (11.1), the
session's announcement, commands and config options (9.2, 9.3, 12), and the failed
requests and diagnostics summaries of a replay.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from ._console import CappedRule as Rule
from ._render_style import (
    _PLAN_STATUS,
    _PRIORITY_STYLE,
    _SEVERITY_STYLE,
    _STOP_REASON_NOTE,
)
from ._render_text import _indent, _line, _Lines, _lines, _s
from ._sanitize import sanitize_json
from ._values import dicts as _dicts
from ._values import session_status

_DIAGNOSTIC_EXAMPLES = 5


def tree_order(sessions: list[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], int]]:
    """Sessions with each child right after its parent, and its depth (ACP-V2-PREVIEW 3.1).

    A session naming a parent that is not in the snapshot (or a cycle) is a root.
    """
    ids = {_s(s.get("sessionId")) for s in sessions}
    children: dict[str, list[Mapping[str, Any]]] = {}
    roots = []
    for session in sessions:
        parent = session.get("parentSessionId")
        if isinstance(parent, str) and parent in ids and parent != session.get("sessionId"):
            children.setdefault(parent, []).append(session)
        else:
            roots.append(session)
    out: list[tuple[Mapping[str, Any], int]] = []
    seen: set[str] = set()

    def walk(session: Mapping[str, Any], depth: int) -> None:
        sid = _s(session.get("sessionId"))
        if sid in seen:
            return
        seen.add(sid)
        out.append((session, depth))
        for child in children.get(sid, ()):
            walk(child, depth + 1)

    for session in roots:
        walk(session, 0)
    for session in sessions:  # a cycle of parents has no root: shown flat
        walk(session, 0)
    return out


def subagent(session: Mapping[str, Any]) -> list[RenderableType]:
    """A child's parent, description and, without a state of its own, the parent's mirror."""
    parent = session.get("parentSessionId")
    if parent is None:
        return []
    assoc = session.get("subagent")
    assoc = assoc if isinstance(assoc, Mapping) else {}
    parts: list[str | tuple[str, str]] = [("child of ", "dim"), (_s(parent), "cyan")]
    if assoc.get("description") is not None:
        parts += ["  ", _s(assoc.get("description"))]
    out: list[RenderableType] = [_line(*parts)]
    mirror = assoc.get("state")
    if "state" not in session:
        if isinstance(mirror, Mapping):
            out.append(_line(("state (reported by the parent): ", "bold"), _s(mirror.get("state"))))
        else:
            out.append(_line(("state: ", "bold"), ("activity unknown", "dim")))
    return out


def replay(session: Mapping[str, Any]) -> list[RenderableType]:
    """The phase of the session's latest replay; a truncated one as a warning (P16-P21)."""
    data = session.get("replay")
    if not isinstance(data, Mapping):
        return []
    if data.get("truncated"):
        return [_line(("replay truncated: ", "bold red"), "history may be incomplete")]
    if data.get("phase") == "replaying":
        return [_line(("replay: ", "bold"), ("replaying history", "yellow"))]
    how = "complete" if data.get("complete") else "ended without replay_complete"
    return [_line(("replay: ", "bold"), ("live", "green"), (f" ({how})", "dim"))]


def state(session: Mapping[str, Any]) -> list[RenderableType]:
    """The foreground state, stop reason (with its error) and completed turns."""
    out: list[RenderableType] = []
    state = session.get("state")
    if isinstance(state, Mapping):
        name = state.get("state")
        parts: list[str | tuple[str, str]] = [("state: ", "bold")]
        if name == "idle":
            parts.append(("idle", "green"))
            reason = state.get("stopReason")
            if isinstance(reason, str):
                parts += [("  stop reason: ", "bold"), _s(reason)]
                if reason in _STOP_REASON_NOTE:
                    note = _STOP_REASON_NOTE[reason]
                    if note:
                        parts.append((f" ({note})", "yellow"))
                elif reason != "error":
                    parts.append((" (stopped)", "yellow"))
        elif name == "running":
            parts.append(("running", "cyan"))
        elif name == "requires_action":
            parts.append(("requires action (waiting for the user)", "bold yellow"))
        elif name == "unknown" and isinstance(session.get("lastKnownState"), Mapping):
            last = _s(session["lastKnownState"].get("state"))
            parts.append((f"not confirmed (last known: {last})", "yellow"))
        else:
            parts.append((_s(name), "magenta"))
            extra = {k: v for k, v in state.items() if k not in ("state", "background")}
            if extra:
                parts.append(("  " + sanitize_json(extra), "dim"))
        out.append(_line(*parts))
        if name == "idle" and state.get("stopReason") == "error":
            out.append(_indent(_lines(*error_parts(state.get("error")))))
        background = [
            f"{_s(b.get('type'))} "
            f"{_s(b.get('terminalId') or b.get('toolCallId') or b.get('sessionId'))}".strip()
            for b in _dicts(state.get("background"))
        ]
        if background:
            out.append(_line(("background: ", "bold"), ", ".join(background)))
    else:
        out.append(_line(("state: ", "bold"), ("none reported", "dim")))
    turns = session.get("completedTurns")
    if isinstance(turns, list) and turns:
        reasons = Counter("none" if t is None else _s(t) for t in turns)
        summary = ", ".join(f"{reason}: {n}" for reason, n in reasons.items())
        out.append(_line(("completed turns: ", "bold"), f"{len(turns)} ({summary})"))
    return out


def error_parts(error: object) -> list[str | tuple[str, str]]:
    """A JSON-RPC error object as :func:`_lines` parts (its message may span lines)."""
    if not isinstance(error, Mapping):
        return [("error", "bold red"), (" (no details)" if error is None else ": ", "dim")]
    parts: list[str | tuple[str, str]] = [("error", "bold red")]
    if error.get("code") is not None:
        parts.append((" " + _s(error.get("code")), "bold red"))
    parts += [": ", _Lines(_s(error.get("message")))]
    if error.get("data") is not None:
        parts.append(("  data: " + sanitize_json(error.get("data")), "dim"))
    return parts


def plans(plans: object, removed: Sequence[str] = ()) -> list[RenderableType]:
    """Every plan with its entries' status and priority, then each removed plan's line.

    ``removed``: the ids of the plans a ``plan_removed`` deleted (ACP v2 Preview P45).
    """
    out: list[RenderableType] = []
    for plan in _dicts(plans):
        content = plan.get("plan")
        header = _line(("plan ", "bold"), (_s(plan.get("planId")), "dim"))
        out.append(header)
        if not isinstance(content, Mapping) or content.get("type") != "items":
            kind = content.get("type") if isinstance(content, Mapping) else None
            out.append(
                _indent(_line((f"[{_s(kind)} plan] ", "dim"), (sanitize_json(content), "dim")))
            )
            continue
        entries = list(_dicts(content.get("entries")))
        if not entries:
            out.append(_indent(Text("(empty plan)", style="dim")))
        for entry in entries:
            status = _s(entry.get("status"))
            icon, style = _PLAN_STATUS.get(status, ("?", "cyan"))
            priority = _s(entry.get("priority"))
            out.append(
                _indent(
                    _line(
                        (f"{icon} ", style),
                        _s(entry.get("content")),
                        (f"  [{status}]", style),
                        (f" {priority}", _PRIORITY_STYLE.get(priority, "dim")),
                    )
                )
            )
    out += [removed_plan(plan_id) for plan_id in removed]
    return out


def removed_plan(plan_id: str) -> Text:
    """The line saying a ``plan_removed`` deleted that plan (ACP v2 Preview P45)."""
    return _line(("plan ", "bold"), (_s(plan_id), "dim"), ("  removed", "dim"))


def suggestions(session: Mapping[str, Any]) -> list[RenderableType]:
    """The current prompt suggestions (opt-in, ACP v2 Preview P34), then the cursors (P40)."""
    out: list[RenderableType] = []
    items = session.get("promptSuggestions")
    if isinstance(items, list):
        out.append(_line(("prompt suggestions: ", "bold"), str(len(items)) if items else "none"))
        for item in _dicts(items):
            texts = [_s(b.get("text")) for b in _dicts(item.get("prompt")) if "text" in b]
            out.append(_indent(_lines("• ", _Lines(" ".join(texts) or sanitize_json(item)))))
    for cursor in _dicts(session.get("cursors")):
        anchor = cursor.get("anchor")
        where = sanitize_json(anchor) if anchor is not None else "(no anchor)"
        out.append(_line(("cursor ", "bold"), (_s(cursor.get("cursorId")), "dim"), "  ", where))
    return out


def usage(usage: object) -> list[RenderableType]:
    """Context usage and cost."""
    if not isinstance(usage, Mapping):
        return []
    used, size = usage.get("used"), usage.get("size")
    parts: list[str | tuple[str, str]] = [("usage: ", "bold")]
    if isinstance(used, int) and isinstance(size, int):
        parts.append(f"{used:,} / {size:,} tokens")
        if size > 0:  # integer arithmetic: any size of int, no float overflow
            parts.append((f" ({(200 * used + size) // (2 * size)}%)", "dim"))
    else:
        parts.append(f"{_s(used)} / {_s(size)} tokens")
    cost = usage.get("cost")
    if isinstance(cost, Mapping):
        parts += [("  cost: ", "bold"), f"{_s(cost.get('amount'))} {_s(cost.get('currency'))}"]
    return [_line(*parts)]


def notices(notices: object) -> list[RenderableType]:
    """Every notice with its severity."""
    out: list[RenderableType] = []
    for notice in _dicts(notices):
        severity = _s(notice.get("severity"))
        parts: list[str | tuple[str, str]] = [
            (f"[{severity}] ", _SEVERITY_STYLE.get(severity, "cyan")),
            (_s(notice.get("title")), "bold"),
        ]
        if notice.get("description") is not None:
            parts += [": ", _Lines(_s(notice.get("description")))]
        out.append(_lines(("notice ", "bold"), *parts))
    return out


def prompts(prompts: object) -> list[RenderableType]:
    """A summary of the prompts sent, with the error of every rejected one."""
    items = list(_dicts(prompts))
    if not items:
        return []
    counts = Counter(_s(p.get("status")) for p in items)
    summary = ", ".join(f"{n} {status}" for status, n in counts.items())
    out: list[RenderableType] = [_line(("prompts: ", "bold"), f"{len(items)} sent ({summary})")]
    for prompt in items:
        if prompt.get("status") == "rejected":
            rejected: list[str | tuple[str, str]] = [("prompt ", "dim")]
            rejected += [_s(prompt.get("requestId")), " rejected: "]
            out.append(_indent(_lines(*rejected, *error_parts(prompt.get("error")))))
    return out


def permissions(requests: object) -> list[RenderableType]:
    """Permission requests: pending ones with their options, others on one line."""
    out: list[RenderableType] = []
    for req in _dicts(requests):
        status = _s(req.get("status"))
        options = list(_dicts(req.get("options")))
        head: list[str | tuple[str, str]] = [
            ("permission ", "bold"),
            (_s(req.get("requestId")), "dim"),
            " ",
            (f"[{status}]", "bold yellow" if status == "pending" else "dim"),
            " ",
            (_s(req.get("title")), "bold"),
        ]
        if req.get("toolCallId") is not None:
            head.append(("  tool " + _s(req.get("toolCallId")), "dim"))
        outcome = req.get("outcome")
        if isinstance(outcome, Mapping):
            chosen = _s(outcome.get("outcome"))
            if outcome.get("outcome") == "selected":
                option_id = outcome.get("optionId")
                names = [o.get("name") for o in options if o.get("optionId") == option_id]
                chosen = f"selected {_s(option_id)}"
                if names:
                    chosen += f" ({_s(names[0])})"
            head.append(("  → " + chosen, "green"))
        out.append(_line(*head))
        if status != "pending":
            continue
        body: list[RenderableType] = []
        if req.get("description") is not None:
            body.append(Text(_s(req.get("description"))))
        for option in options:
            body.append(
                _line(
                    "• ",
                    (_s(option.get("name")), "bold"),
                    (f"  [{_s(option.get('optionId'))}]", "dim"),
                    (f" {_s(option.get('kind'))}", "magenta"),
                )
            )
        if body:
            out.append(_indent(Group(*body)))
    return out


def session_meta(session: Mapping[str, Any]) -> list[RenderableType]:
    """Announcement, protocol version, closed flag, commands and config options."""
    parts = session_status(session, _s)
    out: list[RenderableType] = [_line((" · ".join(parts), "dim"))]
    commands = [_s(c.get("name")) for c in _dicts(session.get("availableCommands"))]
    if commands:
        out.append(_line(("commands: ", "bold"), " ".join("/" + c for c in commands)))
    options = []
    for option in _dicts(session.get("configOptions")):
        current = option.get("currentValue")
        shown = _s(current)
        for choice in _flat_choices(option.get("options")):
            if choice.get("value") == current and choice.get("name") is not None:
                shown = _s(choice.get("name"))
                break
        options.append(f"{_s(option.get('name'))} = {shown}")
    if options:
        out.append(_line(("config: ", "bold"), ", ".join(options)))
    return out


def _where(item: Mapping[str, Any]) -> str:
    """``line N `` for an item that names its line in the log, else nothing."""
    return f"line {_s(item.get('line'))} " if item.get("line") is not None else ""


def _summary(
    title: str,
    items: list[Mapping[str, Any]],
    head: list[RenderableType],
    example: Callable[[Mapping[str, Any]], RenderableType],
) -> list[RenderableType]:
    """A titled summary: ``head``, then the first few ``items`` and how many more there are."""
    out: list[RenderableType] = [Rule(Text(title, style="bold"), align="left"), *head]
    for item in items[:_DIAGNOSTIC_EXAMPLES]:
        out.append(_indent(example(item)))
    if len(items) > _DIAGNOSTIC_EXAMPLES:
        out.append(_indent(Text(f"… {len(items) - _DIAGNOSTIC_EXAMPLES} more", style="dim")))
    return out


def diagnostics(diagnostics: object) -> list[RenderableType]:
    """Counts per code and the first few messages."""
    items = list(_dicts(diagnostics))
    if not items:
        return []
    severities = Counter(_s(d.get("severity")) for d in items)
    codes = Counter(_s(d.get("code")) for d in items)
    summary = ", ".join(f"{n} {sev}" for sev, n in severities.most_common())
    head: list[RenderableType] = [_line(f"{len(items)} ({summary})")]
    for code, n in codes.most_common():
        head.append(_indent(_line((code, "yellow"), f": {n}")))

    def example(diag: Mapping[str, Any]) -> RenderableType:
        severity = _s(diag.get("severity"))
        return _line(
            (_where(diag), "dim"),
            (severity, "bold red" if severity == "error" else "yellow"),
            " ",
            (_s(diag.get("code")), "bold"),
            ": ",
            _s(diag.get("message")),
        )

    return _summary("diagnostics", items, head, example)


def failed_requests(failed: Iterable[Mapping[str, Any]]) -> list[RenderableType]:
    """The requests the agent refused (a failed ``session/new`` leaves no session)."""
    items = list(_dicts(list(failed)))
    if not items:
        return []

    def example(item: Mapping[str, Any]) -> RenderableType:
        parts: list[str | tuple[str, str]] = [
            (_where(item), "dim"),
            (_s(item.get("method")), "bold"),
        ]
        if item.get("sessionId") is not None:
            parts.append((f" (session {_s(item.get('sessionId'))})", "dim"))
        parts.append(": ")
        return _lines(*parts, *error_parts(item.get("error")))

    return _summary("failed requests", items, [], example)


def _flat_choices(options: object) -> Iterator[Mapping[str, Any]]:
    """The values of a select option, flat or grouped."""
    for item in _dicts(options):
        if "groupId" in item and "value" not in item:
            yield from _dicts(item.get("options"))
        else:
            yield item
