"""The timeline of the ``--html`` page: content blocks, messages, tool calls, compactions.

Owns how one timeline entry of the snapshot (SNAPSHOT.md MESSAGE, TOOL_CALL, COMPACTION; the
TERMINAL a tool call shows) becomes HTML, and the small markup helpers the page shares:
badges whose class comes from a fixed set, JSON shown as text, JSON-RPC errors. Every string
from the log goes through ``_html_text`` (escaped, sanitized, Markdown made safe).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._html_text import decode_output, esc, markdown_html, terminal_html
from ._sanitize import clip_middle, sanitize_json
from ._values import dicts, patch_lines

__all__ = [
    "SEVERITIES",
    "Context",
    "badge",
    "dicts",
    "entry",
    "error_html",
    "json_pre",
    "terminal",
    "value_html",
]

_STATES = frozenset(
    {"idle", "running", "requires_action", "completed", "in_progress", "pending", "failed"}
    | {"answered", "accepted", "rejected", "cancelled", "withdrawn", "error"}
)
_ROLES = frozenset({"user", "agent", "thought"})
SEVERITIES = frozenset({"info", "warning", "error"})
_EXAMPLE_MIMES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def _cls(prefix: str, value: object, known: frozenset[str]) -> str:
    """A class name for ``value`` when it is a known one, else ``prefix + "other"``."""
    return prefix + (value if isinstance(value, str) and value in known else "other")


def badge(value: object, prefix: str = "st-", known: frozenset[str] = _STATES) -> str:
    """``value`` as a badge; its class only when ``value`` is in ``known``."""
    return f'<span class="badge {_cls(prefix, value, known)}">{esc(value)}</span>'


def json_pre(value: object) -> str:
    """``value`` as JSON text in a ``<pre>`` (unknown or raw data)."""
    return f"<pre>{esc(sanitize_json(value, limit=None))}</pre>"


def value_html(value: object) -> str:
    """A string as itself, any other value as JSON (``false``, ``3``, ``null``)."""
    return esc(value if isinstance(value, str) else sanitize_json(value, limit=None))


def error_html(error: object) -> str:
    """A JSON-RPC error object: code, message, data."""
    if not isinstance(error, Mapping):
        return '<span class="badge st-error">error</span>'
    out = f'<span class="badge st-error">error {esc(error.get("code"))}</span> '
    out += esc(error.get("message"))
    if error.get("data") is not None:
        out += json_pre(error.get("data"))
    return out


@dataclass
class Context:
    """Per-session rendering state: its terminals and which ones a tool call showed."""

    terminals: dict[str, Mapping[str, Any]]
    truncated: set[str]
    shown: set[str] = field(default_factory=set)


# -- content blocks ---------------------------------------------------------------------------


def _blocks(blocks: object) -> str:
    """Content blocks: adjacent text blocks joined as Markdown, others described."""
    out: list[str] = []
    pending: list[str] = []

    def flush() -> None:
        if pending:
            head, hidden, tail = clip_middle("".join(pending))  # Markdown of TEXT_LIMIT at most
            out.append(markdown_html(head))
            if hidden:
                note = f"… {hidden:,} more characters not shown (`replay --json` has them all)"
                out.append(f'<p class="dim">{note}</p>' + markdown_html(tail))
            pending.clear()

    for block in blocks if isinstance(blocks, list) else ():
        if isinstance(block, Mapping) and block.get("type") == "text":
            text = block.get("text")
            pending.append(text if isinstance(text, str) else "")
            continue
        flush()
        out.append(_block(block))
    flush()
    return "".join(out)


def _block(block: object) -> str:
    """A non-text content block."""
    if not isinstance(block, Mapping):
        return json_pre(block)
    kind = block.get("type")
    if kind == "image":
        mime, data = block.get("mimeType"), block.get("data")
        desc = f'<span class="dim">[image {esc(mime)}]</span>'
        if mime in _EXAMPLE_MIMES and isinstance(data, str) and _BASE64.fullmatch(data):
            return f'<p><img alt="image" src="data:{mime};base64,{data}"> {desc}</p>'
        return f"<p>{desc}</p>"
    if kind == "audio":
        return f'<p class="dim">[audio {esc(block.get("mimeType"))}]</p>'
    if kind == "resource_link":
        return (
            f'<p class="dim">[link <b>{esc(block.get("name"))}</b>'
            f" <code>{esc(block.get('uri'))}</code>]</p>"
        )
    if kind == "resource":
        res = block.get("resource")
        if not isinstance(res, Mapping):
            return json_pre(block)
        head = f'<p class="dim">[resource <code>{esc(res.get("uri"))}</code>]</p>'
        if isinstance(res.get("text"), str):
            return head + f"<pre>{esc(res.get('text'))}</pre>"
        return head
    return f'<div class="dim">[{esc(kind)} block]</div>' + json_pre(block)


# -- timeline ---------------------------------------------------------------------------------


def _dropped(entry: Mapping[str, Any]) -> str:
    """How many earlier blocks the block limit dropped (``truncatedBlocks``), if any."""
    count = entry.get("truncatedBlocks")
    if type(count) is int and count > 0:
        return f'<p class="dim">… {count:,} earlier blocks dropped (--block-limit)</p>'
    return ""


def _excluded(entry: Mapping[str, Any]) -> str:
    if entry.get("excludedFromContext") is True:
        return ' <span class="excluded">(excluded from context)</span>'
    return ""


def entry(item: Mapping[str, Any], ctx: Context) -> str:
    """One timeline entry: a message, a tool call, a compaction, or an unknown kind as JSON."""
    kind = item.get("entry")
    if kind == "message":
        return _message(item)
    if kind == "toolCall":
        return _tool_call(item, ctx)
    if kind == "compaction":
        return _compaction(item)
    if kind == "sessionMessage":
        return _session_message(item)
    return f'<div class="entry"><div class="who">{esc(kind)} entry</div>{json_pre(item)}</div>'


def _session_message(msg: Mapping[str, Any]) -> str:
    """An inter-session message with its sender and recipient (ACP v2 Preview, P12)."""
    head = "session message"
    for key, label in (("senderSessionId", "from"), ("recipientSessionId", "to")):
        if msg.get(key) is not None:
            head += f' {label} <span class="id">{esc(msg.get(key))}</span>'
    head += f' <span class="id">{esc(msg.get("messageId"))}</span>{_excluded(msg)}'
    body = _dropped(msg) + (_blocks(msg.get("content")) or '<p class="dim">(empty)</p>')
    return (
        f'<div class="entry role-session"><div class="who">{head}</div>'
        f'<div class="body">{body}</div></div>'
    )


def _message(msg: Mapping[str, Any]) -> str:
    role = msg.get("role")
    cls = _cls("role-", role, _ROLES)
    head = f'{esc(role)} <span class="id">{esc(msg.get("messageId"))}</span>{_excluded(msg)}'
    body = _dropped(msg) + (_blocks(msg.get("content")) or '<p class="dim">(empty)</p>')
    if role == "thought":
        return (
            f'<details class="entry {cls}"><summary class="who">{head}</summary>'
            f'<div class="body">{body}</div></details>'
        )
    return (
        f'<div class="entry {cls}"><div class="who">{head}</div>'
        f'<div class="body">{body}</div></div>'
    )


def _tool_call(call: Mapping[str, Any], ctx: Context) -> str:
    title = call.get("title")
    head = (
        f"tool <b>{esc(title) if title is not None else '(untitled)'}</b>"
        f' {badge(call.get("status"))} <span class="badge">{esc(call.get("kind"))}</span>'
        f' <span class="id">{esc(call.get("toolCallId"))}</span>'
    )
    if call.get("name") is not None:
        head += f' <span class="dim">name: {esc(call.get("name"))}</span>'
    body: list[str] = []
    locations = [
        esc(loc.get("path")) + (f":{esc(loc.get('line'))}" if loc.get("line") is not None else "")
        for loc in dicts(call.get("locations"))
    ]
    if locations:
        body.append("<ul>" + "".join(f"<li><code>{loc}</code></li>" for loc in locations) + "</ul>")
    content = call.get("content")
    body.append(_dropped(call))
    for item in content if isinstance(content, list) else ():
        body.append(_tool_content(item, ctx))
    for key, label in (("rawInput", "raw input"), ("rawOutput", "raw output")):
        if call.get(key) is not None:
            body.append(f"<details><summary>{label}</summary>{json_pre(call[key])}</details>")
    return (
        f'<div class="entry tool"><div class="who">{head}{_excluded(call)}</div>'
        f'<div class="body">{"".join(body)}</div></div>'
    )


def _tool_content(item: object, ctx: Context) -> str:
    if not isinstance(item, Mapping):
        return json_pre(item)
    kind = item.get("type")
    if kind == "content":
        return _blocks([item.get("content")])
    if kind == "diff":
        return _diff(item)
    if kind == "terminal":
        terminal_id = str(item.get("terminalId"))
        ctx.shown.add(terminal_id)
        return terminal(ctx.terminals.get(terminal_id, {"terminalId": terminal_id}), ctx)
    if kind == "session":
        return (
            f'<div class="dim">→ session <span class="id">{esc(item.get("sessionId"))}</span></div>'
        )
    return f'<div class="dim">[{esc(kind)} content]</div>' + json_pre(item)


def _diff(diff: Mapping[str, Any]) -> str:
    out: list[str] = []
    for change in dicts(diff.get("changes")):
        op = change.get("operation")
        where = esc(change.get("path"))
        if op in ("move", "copy"):
            where = f"{esc(change.get('oldPath'))} → {where}"
        out.append(f"<li><b>{esc(op)}</b> <code>{where}</code></li>")
    html = f"<ul>{''.join(out)}</ul>" if out else ""
    patch = diff.get("patch")
    if isinstance(patch, Mapping):
        if patch.get("format") == "git_patch" and isinstance(patch.get("text"), str):
            html += _git_patch(patch["text"])
        else:
            html += f'<p class="dim">(patch in format {esc(patch.get("format"))} not shown)</p>'
    return html


def _git_patch(text: str) -> str:
    """Patch text with added lines green, removed lines red, headers and hunks marked."""
    out = [
        f'<span class="{kind}">{esc(line)}</span>' if kind else esc(line)
        for kind, line in patch_lines(text)
    ]
    return '<pre class="diff">' + "\n".join(out) + "</pre>"


def terminal(term: Mapping[str, Any], ctx: Context) -> str:
    """A terminal: command, cwd, exit status, notes on dropped bytes, coloured output."""
    head = f'terminal <span class="id">{esc(term.get("terminalId"))}</span>'
    if term.get("command") is not None:
        head += f" <code>$ {esc(term.get('command'))}</code>"
    if term.get("cwd") is not None:
        head += f' <span class="dim">in</span> <code>{esc(term.get("cwd"))}</code>'
    exit_status = term.get("exitStatus")
    if isinstance(exit_status, Mapping):
        code, signal = exit_status.get("exitCode"), exit_status.get("signal")
        desc = ", ".join(
            f"{label} {esc(value)}"
            for label, value in (("exit code", code), ("signal", signal))
            if value is not None
        )
        state = "completed" if code == 0 and signal is None else "failed"
        head += f' <span class="badge st-{state}">exited{": " + desc if desc else ""}</span>'
    elif "command" in term:
        head += ' <span class="badge st-running">running</span>'
    notes: list[str] = []
    if str(term.get("terminalId")) in ctx.truncated:
        notes.append("earlier output cut by the client at its byte limit (v1 truncated)")
    dropped = term.get("truncatedBytes")
    if isinstance(dropped, int) and dropped > 0:
        notes.append(f"{dropped:,} earlier bytes dropped by the retention limit")
    body = "".join(f'<p class="dim">… {note}</p>' for note in notes)
    output = decode_output(term.get("output"))
    if output is None:
        body += '<p class="excluded">(stored output is not valid base64)</p>'
    elif output:
        body += f'<pre class="term">{terminal_html(output)}</pre>'
    else:
        body += '<p class="dim">(no output)</p>'
    return f'<div class="terminal"><div class="who">{head}</div>{body}</div>'


def _compaction(cmp: Mapping[str, Any]) -> str:
    head = (
        f'compaction <span class="id">{esc(cmp.get("compactionId"))}</span>'
        f" {badge(cmp.get('status'))}{_excluded(cmp)}"
    )
    body = _dropped(cmp) + _blocks(cmp.get("summary"))
    if cmp.get("error") is not None:
        body += f'<p class="excluded">{esc(cmp.get("error"))}</p>'
    return (
        f'<details class="entry compaction"><summary class="who">{head}</summary>'
        f'<div class="body">{body or "<p class=dim>(no summary)</p>"}</div></details>'
    )
