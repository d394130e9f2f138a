# Owns the `acp-client run --permission ask` question: a permission request asked on the
# controlling terminal (ACP-V2-CLIENT-STATE.md section 7, permission requests), its text
# sanitized. Moved out of the transport so that the transport does not import the CLI.
"""Ask the user to decide a permission request on the controlling terminal."""

from __future__ import annotations

import contextlib
import os
from typing import Any

import trio

from .. import _schema as s
from .._prompts import PermissionState
from ..transport import PermissionHandler
from ._lines import asking, say
from ._sanitize import sanitize_line

__all__ = ["ask_on_terminal"]


def ask_on_terminal(tty_path: str = "/dev/tty") -> PermissionHandler:
    """Policy: ask the user on the controlling terminal (cancel when there is none).

    The request's text is sanitized before it is shown. Questions are asked one at a time;
    waiting for the answer is cancellable (the agent withdrew the request, exited, timed
    out, or the user pressed Ctrl-C), and a question no longer pending is not asked.
    """
    lock = trio.Lock()

    async def handler(perm: PermissionState) -> str | None:
        async with lock:
            if perm.status != "pending":
                return None
            options = list(getattr(perm.request, "options", None) or [])
            question = _question(perm.request, options)
            try:
                fd = os.open(tty_path, os.O_RDWR | os.O_NOCTTY)
            except OSError:
                _no_terminal(perm.request)
                return None
            # An fd stream of its own (non-blocking): reading it is cancellable, and the
            # user's terminal file descriptors are not touched.
            async with trio.lowlevel.FdStream(fd) as stream:
                await stream.send_all(question.encode("utf-8", "replace"))
                try:
                    with asking():  # a message meanwhile starts on a new line (_lines.py)
                        answer = (await _read_line(stream)).strip()
                except trio.Cancelled:
                    # Closed while waiting (withdrawn, answered, Ctrl-C): end the line.
                    with trio.CancelScope(shield=True) as scope:
                        scope.deadline = trio.current_time() + 1
                        with contextlib.suppress(OSError, trio.BrokenResourceError):
                            await stream.send_all(b"(no longer asked)\n")
                    raise
        if answer.isdigit() and 1 <= int(answer) <= len(options):
            return str(options[int(answer) - 1].option_id)
        return None

    return handler


def _no_terminal(request: Any) -> None:
    """Say that a permission request is cancelled: there is no terminal to ask on."""
    title = sanitize_line(str(getattr(request, "title", None) or "a permission request"))
    with contextlib.suppress(OSError):
        say(
            f"acp-client run: no terminal to ask on: cancelled {title!r}"
            " (--permission allow or reject answers without one)"
        )


def _question(request: Any, options: list[Any]) -> str:
    r"""The text of a permission question: every agent-supplied field on a line of its own.

    Title, description, a command subject and option names are sanitized and kept to one line
    each (a newline in them is shown as ``\\n``), so agent text cannot draw options of its own.
    """
    title = sanitize_line(str(getattr(request, "title", "Permission requested")))
    lines = [f"\n{title}\n"]
    description = getattr(request, "description", None)
    if isinstance(description, str) and description:
        lines.append(f"  {sanitize_line(description, limit=500)}\n")
    subject = getattr(request, "subject", None)
    if type(subject) is s.CommandPermissionSubject:
        lines.append(f"  command: {sanitize_line(subject.command, limit=500)}\n")
        lines.append(f"  in: {sanitize_line(subject.cwd, limit=200)}\n")
    elif type(subject) is s.ToolCallPermissionSubject:
        call = subject.tool_call
        what = call.title if isinstance(call.title, str) else call.tool_call_id
        lines.append(f"  tool call: {sanitize_line(what, limit=200)}\n")
    for index, option in enumerate(options, 1):
        name = sanitize_line(str(option.name), limit=200)
        kind = sanitize_line(str(option.kind), limit=40)
        lines.append(f"  {index}. {name} [{kind}]\n")
    lines.append("  0. cancel\nchoice: ")
    return "".join(lines)


async def _read_line(stream: trio.lowlevel.FdStream) -> str:
    """One line typed on the terminal (without waiting past its newline)."""
    data = bytearray()
    while b"\n" not in data:
        chunk = await stream.receive_some(256)
        if not chunk:
            break
        data += chunk
    return data.split(b"\n", 1)[0].decode("utf-8", "replace")
