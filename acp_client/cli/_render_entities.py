"""The renderer's view of timeline entries and what they hold (``acp-client replay``).

Owns: content blocks (spec 4.5: text joined for reading; 5: other blocks as
placeholders), messages (4), tool calls with their content, diffs and locations (7),
terminals through the emulator (8.4, :mod:`._terminal`) and compactions (9.5).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from ._render_style import (
    _COMPACTION_STYLE,
    _ROLE_STYLE,
    _TOOL_KINDS,
    _TOOL_STATUS_STYLE,
)
from ._render_text import (
    _LINE_CHARS,
    _indent,
    _line,
    _Lines,
    _lines,
    _nbytes,
    _s,
    _safe_markdown,
    plain_text,
)
from ._sanitize import clip_middle, sanitize_json, sanitize_text
from ._terminal import EmulationBudget, terminal_view
from ._values import PatchLine, patch_lines
from ._values import dicts as _dicts

_PATCH_STYLES: dict[PatchLine, str] = {
    "head": "bold",
    "hunk": "cyan",
    "add": "green",
    "del": "red",
    "": "",
}


@dataclass
class _Options:
    """The view's options (see :func:`~acp_client.cli._render.snapshot_renderable`)."""

    show_thoughts: bool
    markdown: bool
    terminal_lines: int
    last_entries: int | None
    text_lines: int | None = None


@dataclass
class _SessionContext:
    """One session's terminals, and which of them a tool call has shown already."""

    session_id: str
    terminals: dict[str, Mapping[str, Any]]
    shown_terminals: set[str] = field(default_factory=set)


def _dropped(entry: Mapping[str, Any]) -> list[RenderableType]:
    """A line saying how many earlier blocks the block limit dropped (``truncatedBlocks``)."""
    count = entry.get("truncatedBlocks")
    if type(count) is int and count > 0:
        return [Text(f"… {count:,} earlier blocks dropped (--block-limit)", style="dim")]
    return []


class _EntityRenderer:
    """Renders timeline entries and their content with the view's options."""

    def __init__(self, options: _Options, truncated: Iterable[Sequence[str]] = ()) -> None:
        self.opt = options
        self.truncated = {(str(sid), str(tid)) for sid, tid in truncated}
        self.budget = EmulationBudget()  # one render's emulation time, all terminals together

    # -- content blocks (spec 5) -------------------------------------------------------------

    def _text_body(self, text: str, style: str | None) -> RenderableType:
        """Agent text (not sanitized yet): what the view has room for, the cuts said."""
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
        head, hidden, tail = clip_middle(text)  # any text costs TEXT_LIMIT characters at most
        if hidden:
            said = f"… {hidden:,} more characters not shown (`replay --json` has them all)"
            body = self._text_body_whole(head, style)
            return Group(body, Text(said, style="dim"), self._text_body_whole(tail, style))
        return self._text_body_whole(text, style)

    def _text_body_whole(self, text: str, style: str | None) -> RenderableType:
        text = sanitize_text(text)
        if self.opt.markdown:
            return _safe_markdown(text, style or "none")
        return plain_text(text, style or "")

    def blocks(self, blocks: object, style: str | None = None) -> list[RenderableType]:
        """Content blocks: adjacent text blocks joined, others as placeholders."""
        out: list[RenderableType] = []
        pending: list[str] = []

        def flush() -> None:
            if pending:
                out.append(self._text_body("".join(pending), style))
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
        if kind == "sessionMessage":
            return self.session_message(entry)
        return [_line((f"[{_s(kind)} entry] ", "dim"), sanitize_json(entry))]

    def session_message(self, msg: Mapping[str, Any]) -> list[RenderableType]:
        """An inter-session message with its sender and recipient (ACP v2 Preview, P12)."""
        header: list[str | tuple[str, str]] = [("session message", "bold blue")]
        for key, label in (("senderSessionId", "from"), ("recipientSessionId", "to")):
            if msg.get(key) is not None:
                header += [(f" {label} ", "dim"), (_s(msg.get(key)), "cyan")]
        header += [("  " + _s(msg.get("messageId")), "dim"), *self._excluded(msg)]
        body = self.blocks(msg.get("content")) or [Text("(empty)", style="dim")]
        return [_line(*header), _indent(Group(*_dropped(msg), *body))]

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
        return [header, _indent(Group(*_dropped(msg), *body))]

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
        body += _dropped(call)
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
        if kind == "session":
            return [_line(("→ session ", "dim"), (_s(item.get("sessionId")), "cyan"))]
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
        head, hidden, tail = clip_middle(patch)
        for i, (kind, line) in enumerate(patch_lines(sanitize_text(head))):
            if i:
                text.append("\n")
            text.append(line, style=_PATCH_STYLES[kind])
        if hidden:
            text.append(f"\n… {hidden:,} more characters not shown\n", style="dim")
            text.append(sanitize_text(tail))
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
            budget=self.budget,
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
        if view.unemulated_bytes and view.behind:
            body.append(
                Text(
                    f"… the last {view.unemulated_bytes:,} bytes not shown yet: this view's"
                    " emulation time went to other terminals (`replay --json` has every byte)",
                    style="dim",
                )
            )
        elif view.unemulated_bytes:
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
        body += _dropped(cmp)
        body.extend(self.blocks(cmp.get("summary"), "dim"))
        return [header, _indent(Group(*body))] if body else [header]
