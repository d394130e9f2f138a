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
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.markdown import Markdown
from rich.measure import Measurement
from rich.padding import Padding
from rich.rule import Rule
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from ._sanitize import sanitize_json, sanitize_line, sanitize_text
from ._terminal import terminal_view

__all__ = ["SNAPSHOT_FORMAT", "render_snapshot", "snapshot_renderable"]

SNAPSHOT_FORMAT = "acp-client/snapshot@1"
"""The snapshot format this view understands."""

_DIAGNOSTIC_EXAMPLES = 5

_ROLE_STYLE = {"user": "bold green", "agent": "bold blue", "thought": "bold magenta"}
_TOOL_STATUS_STYLE = {
    "pending": "yellow",
    "in_progress": "cyan",
    "paused": "yellow",
    "completed": "green",
    "failed": "bold red",
    "cancelled": "red",
}
_TOOL_KINDS = frozenset(
    [
        "read",
        "edit",
        "delete",
        "move",
        "search",
        "execute",
        "think",
        "fetch",
        "switch_mode",
        "other",
    ]
)
_PLAN_STATUS = {
    "pending": ("○", "yellow"),
    "in_progress": ("◐", "cyan"),
    "completed": ("●", "green"),
    "cancelled": ("✗", "red"),
}
_PRIORITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}
_SEVERITY_STYLE = {"info": "cyan", "warning": "yellow", "error": "bold red"}
_COMPACTION_STYLE = {
    "in_progress": "cyan",
    "completed": "green",
    "failed": "bold red",
    "cancelled": "red",
}
_STOP_REASON_NOTE = {
    "end_turn": "",
    "max_tokens": "token limit reached",
    "max_turn_requests": "model request limit reached",
    "refusal": "the agent refused",
    "cancelled": "stopped by the user or client",
}


_PIECE_LINES = 64
_LINE_CHARS = 400  # with text_lines: characters kept per kept line, at most
_PIECE_CHARS = 16_384


def plain_text(text: str, style: str = "") -> RenderableType:
    """Text as rich renders it in linear time: pieces of a few lines each.

    One ``Text`` of megabytes makes rich split its lines in quadratic time; pieces of at
    most :data:`_PIECE_LINES` lines and :data:`_PIECE_CHARS` characters render the same
    lines (a line longer than that is cut where a piece ends).
    """
    if len(text) <= _PIECE_CHARS:
        return Text(text, style=style)
    pieces: list[RenderableType] = []
    held: list[str] = []
    size = 0
    for line in text.split("\n"):
        while len(line) > _PIECE_CHARS:
            if held:
                pieces.append(Text("\n".join(held), style=style))
                held, size = [], 0
            pieces.append(Text(line[:_PIECE_CHARS], style=style))
            line = line[_PIECE_CHARS:]
        if len(held) == _PIECE_LINES or size + len(line) > _PIECE_CHARS:
            pieces.append(Text("\n".join(held), style=style))
            held, size = [], 0
        held.append(line)
        size += len(line) + 1
    pieces.append(Text("\n".join(held), style=style))
    return Group(*pieces)


def _s(value: object) -> str:
    """Display form of any snapshot value: sanitized text, or compact JSON for non-strings."""
    if isinstance(value, str):
        return sanitize_text(value)
    if value is None:
        return ""
    return sanitize_json(value)


class _Lines(str):
    """A :func:`_lines` part that may span lines (a message, a description)."""

    __slots__ = ()


def _line(*parts: str | tuple[str, str]) -> Text:
    r"""One line from plain parts or ``(text, style)`` pairs; every part is sanitized.

    A newline or tab in a part is shown as ``\n`` / ``\t``: agent text in a header (a
    title, an id, a plan entry) cannot draw lines of its own.
    """
    text = Text()
    for part in parts:
        if isinstance(part, tuple):
            text.append(sanitize_line(part[0]), style=part[1])
        else:
            text.append(sanitize_line(part))
    return text


def _lines(*parts: str | tuple[str, str]) -> RenderableType:
    """:func:`_line`, but a :class:`_Lines` part keeps its lines.

    Every row after the first, wrapped ones included, is drawn behind a ``│`` gutter, so no
    line of the agent's text can pass for a line of the view.
    """
    text = Text()
    for part in parts:
        if isinstance(part, _Lines):
            text.append(sanitize_text(part))
        elif isinstance(part, tuple):
            text.append(sanitize_line(part[0]), style=part[1])
        else:
            text.append(sanitize_line(part))
    return _Gutter(text)


class _Gutter:
    """Text whose rows after the first (wrapped ones too) are drawn behind a dim ``│``."""

    GUTTER = "  │ "

    def __init__(self, text: Text) -> None:
        self.text = text

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        measured = Measurement.get(console, options, self.text)
        extra = len(self.GUTTER)  # the rows are laid out that much narrower
        wide = Measurement(measured.minimum + extra, measured.maximum + extra)
        return wide.clamp(max_width=options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(options.max_width - len(self.GUTTER), 1)
        gutter = Segment(self.GUTTER, Style(dim=True))
        rows = console.render_lines(self.text, options.update_width(width), pad=False)
        for index, row in enumerate(rows):
            if index:
                yield gutter
            yield from row
            yield Segment.line()


def _indent(renderable: RenderableType, level: int = 1) -> Padding:
    return Padding(renderable, (0, 0, 0, 2 * level), expand=False)


def _dicts(value: object) -> Iterator[Mapping[str, Any]]:
    """The objects of a list value; anything else is skipped."""
    if isinstance(value, list):
        for item in value:
            if isinstance(item, Mapping):
                yield item


def _nbytes(b64: object) -> str:
    if not isinstance(b64, str):
        return "?"
    size = len(b64) * 3 // 4 - b64[-2:].count("=")
    return f"{size:,} bytes"


def _safe_markdown(text: str, style: str) -> Markdown:
    """Markdown whose parsed text is sanitized too.

    ``text`` is sanitized already, but the parser decodes character references after that
    (``&#x202E;``, ``&rlm;``), so every text it produced is sanitized again.
    """
    md = Markdown(text, style=style, hyperlinks=False)
    tokens = list(md.parsed)
    while tokens:
        token = tokens.pop()
        if token.content:
            token.content = sanitize_text(token.content)
        if token.info:
            token.info = sanitize_line(token.info)
        if token.attrs:
            token.attrs = {
                key: sanitize_line(value) if isinstance(value, str) else value
                for key, value in token.attrs.items()
            }
        if token.children:
            tokens.extend(token.children)
    return md


@dataclass
class _Options:
    show_thoughts: bool
    markdown: bool
    terminal_lines: int
    last_entries: int | None
    text_lines: int | None = None


@dataclass
class _SessionContext:
    session_id: str
    terminals: dict[str, Mapping[str, Any]]
    shown_terminals: set[str] = field(default_factory=set)


class _Renderer:
    def __init__(self, options: _Options, truncated: Iterable[Sequence[str]] = ()) -> None:
        self.opt = options
        self.truncated = {(str(sid), str(tid)) for sid, tid in truncated}

    # -- content blocks (spec 5) -------------------------------------------------------------

    def _text_body(self, text: str, style: str | None) -> RenderableType:
        keep = self.opt.text_lines
        if keep is not None and len(text) > keep:
            # only the end (what a live view has room for); the cut is said
            parts = text.rsplit("\n", keep)  # scans the end only
            shown = "\n".join(parts[1:]) if len(parts) > keep else text
            shown = shown[-keep * _LINE_CHARS :]
            if len(shown) < len(text):
                hidden = len(text) - len(shown)
                note = Text(f"… {hidden:,} earlier characters not shown", style="dim")
                return Group(note, self._text_body_whole(shown, style))
        return self._text_body_whole(text, style)

    def _text_body_whole(self, text: str, style: str | None) -> RenderableType:
        if self.opt.markdown:
            return _safe_markdown(text, style or "none")
        return plain_text(text, style or "")

    def blocks(self, blocks: object, style: str | None = None) -> list[RenderableType]:
        """Content blocks: adjacent text blocks joined, others as placeholders."""
        out: list[RenderableType] = []
        pending: list[str] = []

        def flush() -> None:
            if pending:
                out.append(self._text_body(sanitize_text("".join(pending)), style))
                pending.clear()

        if not isinstance(blocks, list):
            return out
        for block in blocks:
            if isinstance(block, Mapping) and block.get("type") == "text":
                text = block.get("text")
                pending.append(text if isinstance(text, str) else _s(text))
                continue
            flush()
            out.extend(self.block_placeholder(block))
        flush()
        return out

    def block_placeholder(self, block: object) -> list[RenderableType]:
        """A non-text content block as a one-line placeholder (plus text of a resource)."""
        if not isinstance(block, Mapping):
            return [_line(("[invalid content block] ", "dim"), sanitize_json(block))]
        kind = block.get("type")
        if kind == "image":
            parts: list[str | tuple[str, str]] = [
                ("[image ", "dim"),
                _s(block.get("mimeType")),
                (f", {_nbytes(block.get('data'))}", "dim"),
            ]
            if block.get("uri") is not None:
                parts += [(", ", "dim"), _s(block.get("uri"))]
            return [_line(*parts, ("]", "dim"))]
        if kind == "audio":
            return [
                _line(
                    ("[audio ", "dim"),
                    _s(block.get("mimeType")),
                    (f", {_nbytes(block.get('data'))}]", "dim"),
                )
            ]
        if kind == "resource_link":
            parts = [("[link ", "dim"), (_s(block.get("name")), "bold"), " ", _s(block.get("uri"))]
            for key in ("title", "description", "mimeType"):
                if block.get(key) is not None:
                    parts += [(f" {key}: ", "dim"), _s(block.get(key))]
            return [_line(*parts, ("]", "dim"))]
        if kind == "resource":
            res = block.get("resource")
            if not isinstance(res, Mapping):
                return [_line(("[resource] ", "dim"), sanitize_json(res))]
            head: list[str | tuple[str, str]] = [("[resource ", "dim"), _s(res.get("uri"))]
            if res.get("mimeType") is not None:
                head += [(" ", "dim"), _s(res.get("mimeType"))]
            if "blob" in res and "text" not in res:
                return [_line(*head, (f", {_nbytes(res.get('blob'))}]", "dim"))]
            out: list[RenderableType] = [_line(*head, ("]", "dim"))]
            out.append(_indent(Text(_s(res.get("text")))))
            return out
        return [
            _line(
                ("[", "dim"),
                (f"{_s(kind) or 'untyped'} block", "dim"),
                ("] ", "dim"),
                (sanitize_json(block), "dim"),
            )
        ]

    # -- timeline ----------------------------------------------------------------------------

    def entry(self, entry: Mapping[str, Any], ctx: _SessionContext) -> list[RenderableType]:
        """One timeline entry (message, tool call, compaction or unknown)."""
        kind = entry.get("entry")
        if kind == "message":
            return self.message(entry)
        if kind == "toolCall":
            return self.tool_call(entry, ctx)
        if kind == "compaction":
            return self.compaction(entry)
        return [_line((f"[{_s(kind)} entry] ", "dim"), sanitize_json(entry))]

    @staticmethod
    def _excluded(entry: Mapping[str, Any]) -> list[str | tuple[str, str]]:
        if entry.get("excludedFromContext") is True:
            return [("  (excluded from context)", "dim red")]
        return []

    def message(self, msg: Mapping[str, Any]) -> list[RenderableType]:
        """A user, agent or thought message."""
        role = msg.get("role")
        if role == "thought" and not self.opt.show_thoughts:
            return []
        role_text = _s(role) or "message"
        header = _line(
            (role_text, _ROLE_STYLE.get(role_text, "bold")),
            ("  " + _s(msg.get("messageId")), "dim"),
            *self._excluded(msg),
        )
        body = self.blocks(msg.get("content"), "italic dim" if role == "thought" else None)
        if not body:
            body = [Text("(empty)", style="dim")]
        return [header, _indent(Group(*body))]

    def tool_call(self, call: Mapping[str, Any], ctx: _SessionContext) -> list[RenderableType]:
        """A tool call: header, locations, content, raw input/output."""
        status = _s(call.get("status")) or "pending"
        kind = call.get("kind")
        kind_text = kind if isinstance(kind, str) and kind in _TOOL_KINDS else "other"
        title = call.get("title")
        header_parts: list[str | tuple[str, str]] = [
            ("tool ", "bold"),
            (_s(title) if title is not None else "(untitled)", "bold"),
            "  ",
            (f"[{status}]", _TOOL_STATUS_STYLE.get(status, "cyan")),
        ]
        if status not in _TOOL_STATUS_STYLE:
            header_parts.append((" (in progress)", "dim"))
        header_parts += [" ", (kind_text, "magenta"), ("  " + _s(call.get("toolCallId")), "dim")]
        if call.get("name") is not None:
            header_parts.append(("  name: " + _s(call.get("name")), "dim"))
        header_parts += self._excluded(call)
        body: list[RenderableType] = []
        for loc in _dicts(call.get("locations")):
            where = _s(loc.get("path"))
            if loc.get("line") is not None:
                where += ":" + _s(loc.get("line"))
            body.append(_line(("at ", "dim"), where))
        content = call.get("content")
        for item in content if isinstance(content, list) else []:
            body.extend(self.tool_content(item, ctx))
        for key, label in (("rawInput", "input"), ("rawOutput", "output")):
            if key in call and call[key] is not None:
                body.append(_line((f"raw {label}: ", "dim"), (sanitize_json(call[key]), "dim")))
        out: list[RenderableType] = [_line(*header_parts)]
        if body:
            out.append(_indent(Group(*body)))
        return out

    def tool_content(self, item: object, ctx: _SessionContext) -> list[RenderableType]:
        """One ToolCallContent item (spec 7.5)."""
        if not isinstance(item, Mapping):
            return [_line(("[invalid tool content] ", "dim"), sanitize_json(item))]
        kind = item.get("type")
        if kind == "content":
            return self.blocks([item.get("content")])
        if kind == "diff":
            return self.diff(item)
        if kind == "terminal":
            terminal_id = _s(item.get("terminalId"))
            ctx.shown_terminals.add(terminal_id)
            terminal = ctx.terminals.get(terminal_id, {"terminalId": terminal_id})
            return self.terminal(terminal, ctx)
        return [_line((f"[{_s(kind)} content] ", "dim"), (sanitize_json(item), "dim"))]

    def diff(self, diff: Mapping[str, Any]) -> list[RenderableType]:
        """A diff: the list of changes, then the patch when its format is understood."""
        out: list[RenderableType] = []
        for change in _dicts(diff.get("changes")):
            op = change.get("operation")
            op_text = _s(op)
            parts: list[str | tuple[str, str]] = [(f"{op_text} ", "bold yellow")]
            if op in ("move", "copy"):
                parts += [_s(change.get("oldPath")), " → ", _s(change.get("path"))]
            elif op in ("add", "delete", "modify"):
                parts.append(_s(change.get("path")))
            else:
                parts.append((sanitize_json(change), "dim"))
            extra = [_s(change.get(k)) for k in ("fileType", "mimeType") if change.get(k)]
            if extra:
                parts.append((f" ({', '.join(extra)})", "dim"))
            out.append(_line(*parts))
        patch = diff.get("patch")
        if isinstance(patch, Mapping):
            fmt = patch.get("format")
            if fmt == "git_patch" and isinstance(patch.get("text"), str):
                out.append(_indent(self.git_patch(patch["text"])))
            else:
                out.append(_line((f"(patch in format {_s(fmt)!r} not shown)", "dim")))
        return out

    @staticmethod
    def git_patch(patch: str) -> Text:
        """Git patch text with added lines green, removed lines red, headers emphasised."""
        text = Text()
        lines = sanitize_text(patch).split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for i, line in enumerate(lines):
            if i:
                text.append("\n")
            if line.startswith(("+++", "---", "diff --git", "index ")):
                style = "bold"
            elif line.startswith("@@"):
                style = "cyan"
            elif line.startswith("+"):
                style = "green"
            elif line.startswith("-"):
                style = "red"
            else:
                style = ""
            text.append(line, style=style)
        return text

    def terminal(self, term: Mapping[str, Any], ctx: _SessionContext) -> list[RenderableType]:
        """A terminal's header and emulated output."""
        parts: list[str | tuple[str, str]] = [
            ("terminal ", "bold"),
            (_s(term.get("terminalId")), "dim"),
        ]
        if term.get("command") is not None:
            parts += ["  $ ", (_s(term.get("command")), "bold")]
        if term.get("cwd") is not None:
            parts += [("  in ", "dim"), _s(term.get("cwd"))]
        exit_status = term.get("exitStatus")
        if isinstance(exit_status, Mapping):
            code, signal = exit_status.get("exitCode"), exit_status.get("signal")
            style = "green" if code == 0 and signal is None else "red"
            desc = []
            if code is not None:
                desc.append(f"exit code {_s(code)}")
            if signal is not None:
                desc.append(f"signal {_s(signal)}")
            parts.append((f"  [exited{': ' + ', '.join(desc) if desc else ''}]", style))
        elif "command" in term or "exitStatus" in term:
            parts.append(("  [running]", "cyan"))
        size = term.get("size")
        if isinstance(size, Mapping):
            parts.append((f"  {_s(size.get('cols'))}x{_s(size.get('rows'))}", "dim"))
        out: list[RenderableType] = [_line(*parts)]
        view = terminal_view(
            term,
            max_lines=self.opt.terminal_lines,
            cache_key=(ctx.session_id, _s(term.get("terminalId"))),
        )
        notes: list[str] = []
        if (ctx.session_id, _s(term.get("terminalId"))) in self.truncated:
            notes.append("earlier output cut by the client at its byte limit (v1 `truncated`)")
        truncated = term.get("truncatedBytes")
        if isinstance(truncated, int) and truncated > 0:
            notes.append(f"{truncated:,} earlier bytes dropped by the retention limit")
        if view.skipped_bytes:
            notes.append(f"{view.skipped_bytes:,} earlier bytes not shown")
        if view.hidden_lines:
            notes.append(f"{view.hidden_lines:,} earlier lines not shown")
        body: list[RenderableType] = [Text(f"… {note}", style="dim") for note in notes]
        if view.invalid_base64:
            body.append(Text("(stored output is not valid base64)", style="red"))
        elif view.lines:
            body.append(view.text())
        else:
            body.append(Text("(no output)", style="dim"))
        if view.unemulated_bytes:
            body.append(
                Text(
                    f"… the last {view.unemulated_bytes:,} bytes not shown: emulating them"
                    " took too long or failed (`replay --json` has every byte)",
                    style="dim",
                )
            )
        out.append(_indent(Group(*body)))
        return out

    def compaction(self, cmp: Mapping[str, Any]) -> list[RenderableType]:
        """A compaction with its status, error and summary."""
        status = _s(cmp.get("status"))
        header = _line(
            ("compaction", "bold"),
            ("  " + _s(cmp.get("compactionId")), "dim"),
            "  ",
            (f"[{status}]", _COMPACTION_STYLE.get(status, "cyan")),
            *self._excluded(cmp),
        )
        body: list[RenderableType] = []
        if cmp.get("error") is not None:
            body.append(_lines(("error: ", "bold red"), _Lines(_s(cmp.get("error")))))
        body.extend(self.blocks(cmp.get("summary"), "dim"))
        return [header, _indent(Group(*body))] if body else [header]

    # -- session-level sections --------------------------------------------------------------

    def state(self, session: Mapping[str, Any]) -> list[RenderableType]:
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
            else:
                parts.append((_s(name), "magenta"))
                extra = {k: v for k, v in state.items() if k not in ("state", "background")}
                if extra:
                    parts.append(("  " + sanitize_json(extra), "dim"))
            out.append(_line(*parts))
            if name == "idle" and state.get("stopReason") == "error":
                out.append(_indent(_lines(*self.error_parts(state.get("error")))))
            background = [
                f"{_s(b.get('type'))} {_s(b.get('terminalId') or b.get('toolCallId'))}".strip()
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

    @staticmethod
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

    def plans(self, plans: object) -> list[RenderableType]:
        """Every plan with its entries' status and priority."""
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
        return out

    @staticmethod
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

    @staticmethod
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

    def prompts(self, prompts: object) -> list[RenderableType]:
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
                out.append(_indent(_lines(*rejected, *self.error_parts(prompt.get("error")))))
        return out

    def permissions(self, requests: object) -> list[RenderableType]:
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

    @staticmethod
    def session_meta(session: Mapping[str, Any]) -> list[RenderableType]:
        """Announcement, protocol version, closed flag, commands and config options."""
        parts: list[str] = []
        if session.get("protocolVersion") is not None:
            parts.append(f"protocol v{_s(session.get('protocolVersion'))}")
        parts.append("announced" if session.get("announced") else "not announced (log mid-stream)")
        if session.get("closed") is True:
            parts.append("closed")
        info = session.get("sessionInfo")
        if isinstance(info, Mapping) and info.get("updatedAt") is not None:
            parts.append(f"updated {_s(info.get('updatedAt'))}")
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

    # -- whole snapshot ----------------------------------------------------------------------

    def session(self, session: Mapping[str, Any]) -> list[RenderableType]:
        """Every section of one session."""
        session_id = _s(session.get("sessionId"))
        title = Text.assemble(("session ", "bold"), (session_id, "bold cyan"))
        info = session.get("sessionInfo")
        if isinstance(info, Mapping) and info.get("title") is not None:
            title.append_text(_line(("  " + _s(info.get("title")), "bold")))
        out: list[RenderableType] = [Rule(title, align="left")]
        out += self.session_meta(session)
        out += self.state(session)
        terminals = {_s(t.get("terminalId")): t for t in _dicts(session.get("terminals"))}
        ctx = _SessionContext(session_id, terminals)
        out.append(Text())
        entries = list(_dicts(session.get("timeline")))
        limit = self.opt.last_entries
        if limit is not None and len(entries) > limit:
            hidden = len(entries) - limit
            entries = entries[hidden:] if limit > 0 else []
            out.append(Text(f"… {hidden} earlier timeline entries not shown", style="dim"))
        for entry in entries:
            out += self.entry(entry, ctx)
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
        tail += self.plans(session.get("plans"))
        tail += self.usage(session.get("usage"))
        tail += self.notices(session.get("notices"))
        tail += self.prompts(session.get("prompts"))
        tail += self.permissions(session.get("permissionRequests"))
        unknown = list(_dicts(session.get("unknownUpdates")))
        if unknown:
            kinds = Counter(_s(u.get("sessionUpdate")) for u in unknown)
            summary = ", ".join(f"{kind}: {n}" for kind, n in kinds.most_common())
            tail.append(_line(("unknown updates: ", "bold"), f"{len(unknown)} ({summary})"))
        if tail:
            out.append(Text())
            out += tail
        return out

    @staticmethod
    def diagnostics(diagnostics: object) -> list[RenderableType]:
        """Counts per code and the first few messages."""
        items = list(_dicts(diagnostics))
        if not items:
            return []
        severities = Counter(_s(d.get("severity")) for d in items)
        codes = Counter(_s(d.get("code")) for d in items)
        summary = ", ".join(f"{n} {sev}" for sev, n in severities.most_common())
        out: list[RenderableType] = [
            Rule(Text("diagnostics", style="bold"), align="left"),
            _line(f"{len(items)} ({summary})"),
        ]
        for code, n in codes.most_common():
            out.append(_indent(_line((code, "yellow"), f": {n}")))
        for diag in items[:_DIAGNOSTIC_EXAMPLES]:
            severity = _s(diag.get("severity"))
            where = f"line {_s(diag.get('line'))} " if diag.get("line") is not None else ""
            out.append(
                _indent(
                    _line(
                        (where, "dim"),
                        (severity, "bold red" if severity == "error" else "yellow"),
                        " ",
                        (_s(diag.get("code")), "bold"),
                        ": ",
                        _s(diag.get("message")),
                    )
                )
            )
        if len(items) > _DIAGNOSTIC_EXAMPLES:
            out.append(_indent(Text(f"… {len(items) - _DIAGNOSTIC_EXAMPLES} more", style="dim")))
        return out

    def failed_requests(self, failed: Iterable[Mapping[str, Any]]) -> list[RenderableType]:
        """The requests the agent refused (a failed ``session/new`` leaves no session)."""
        items = list(_dicts(list(failed)))
        if not items:
            return []
        out: list[RenderableType] = [Rule(Text("failed requests", style="bold"), align="left")]
        for item in items[:_DIAGNOSTIC_EXAMPLES]:
            where = f"line {_s(item.get('line'))} " if item.get("line") is not None else ""
            parts: list[str | tuple[str, str]] = [(where, "dim"), (_s(item.get("method")), "bold")]
            if item.get("sessionId") is not None:
                parts.append((f" (session {_s(item.get('sessionId'))})", "dim"))
            parts.append(": ")
            out.append(_indent(_lines(*parts, *self.error_parts(item.get("error")))))
        if len(items) > _DIAGNOSTIC_EXAMPLES:
            out.append(_indent(Text(f"… {len(items) - _DIAGNOSTIC_EXAMPLES} more", style="dim")))
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
        for session in sessions:
            out += self.session(session)
        out += self.failed_requests(failed)
        out += self.diagnostics(snapshot.get("diagnostics"))
        return out


def _flat_choices(options: object) -> Iterator[Mapping[str, Any]]:
    """The values of a select option, flat or grouped."""
    for item in _dicts(options):
        if "groupId" in item and "value" not in item:
            yield from _dicts(item.get("options"))
        else:
            yield item


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
    """
    options = _Options(show_thoughts, markdown, max(1, terminal_lines), last_entries, text_lines)
    renderer = _Renderer(options, truncated_terminals)
    return Group(*renderer.snapshot(snapshot, failed_requests))


def render_snapshot(
    snapshot: Mapping[str, Any],
    console: Console,
    *,
    show_thoughts: bool = True,
    markdown: bool = False,
    terminal_lines: int = 200,
    last_entries: int | None = None,
    failed_requests: Iterable[Mapping[str, Any]] = (),
    truncated_terminals: Iterable[Sequence[str]] = (),
) -> None:
    """Print the human-readable view of ``snapshot`` to ``console``.

    Every agent-supplied string is sanitized and never parsed as markup; terminal output is
    emulated. See :func:`snapshot_renderable` for the options.
    """
    console.print(
        snapshot_renderable(
            snapshot,
            show_thoughts=show_thoughts,
            markdown=markdown,
            terminal_lines=terminal_lines,
            last_entries=last_entries,
            failed_requests=failed_requests,
            truncated_terminals=truncated_terminals,
        )
    )
