"""`acp-client run`'s messages on standard error start and end lines of their own (issue 26).

Standard output (the view, ``--json``, ``--events``) and standard error often end up in one
place: a terminal, ``2>&1`` into a file or an editor's pane. A message must never continue a
line the view left open, nor leave one open for the view (``cli/_lines.py``).
"""

from __future__ import annotations

import io
import os
import signal
import sys
from typing import Any

import pytest
from cli_wait import read_all, read_until, started
from hypothesis import given
from hypothesis import strategies as st
from test_cli_run import TURN_STARTED

from acp_client.cli import _lines, main

END_TURN = """
update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
while recv() is not None:
    pass
"""
AGENT = [sys.executable, "-c", TURN_STARTED + END_TURN]
OOM = "acp-client run: out of memory writing the final snapshot: it is cut short"


def _out_of_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    from acp_client.cli import _run_cmd

    def no_memory(value: object, out: Any, *, indent: int | None = None) -> None:
        out.write('{\n  "format": ')  # the view's line left open
        raise MemoryError

    monkeypatch.setattr(_run_cmd, "write_json", no_memory)


def test_a_message_after_an_open_line_of_the_view_starts_a_line_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `run --json 2>&1`: both streams in one place
    _out_of_memory(monkeypatch)
    both = io.StringIO()
    monkeypatch.setattr(sys, "stdout", both)
    monkeypatch.setattr(sys, "stderr", both)
    assert main(["run", "--json", "--prompt", "hi", "--", *AGENT]) == 1
    assert both.getvalue().endswith('{\n  "format": \n' + OOM + "\n")


def test_a_message_on_its_own_stream_gets_no_blank_line(monkeypatch: pytest.MonkeyPatch) -> None:
    # stdout to a file, stderr elsewhere: the open line of the file is not the message's
    # concern (it began with a blank line)
    _out_of_memory(monkeypatch)
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["run", "--json", "--prompt", "hi", "--", *AGENT]) == 1
    assert err.getvalue() == OOM + "\n"
    assert out.getvalue() == '{\n  "format": '


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@given(
    writes=st.lists(st.sampled_from(["x", "view line\n", "", "partial", "\n", "a\nb"])),
    message=st.sampled_from(["acp-client run: m", "acp-client run: m\n", "two\nlines\n"]),
    shared=st.booleans(),
    question=st.booleans(),
)
def test_every_message_starts_and_ends_a_line(
    writes: list[str], message: str, shared: bool, question: bool
) -> None:
    out = _Terminal()
    err = out if shared else _Terminal()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        with _lines.tracking_stdout():
            for text in writes:
                sys.stdout.write(text)
            before = err.getvalue()
            if question:
                err.write("choice: ")  # the terminal the question is asked on
                before += "choice: "
                with _lines.asking():
                    _lines.say(message)
            else:
                _lines.say(message)
    finally:
        sys.stdout, sys.stderr = saved
    said = err.getvalue()[len(before) :]
    assert said.endswith("\n") and said.strip("\n") == message.strip("\n")
    start = len(before) + said.startswith("\n")  # where the message's text begins
    shown = err.getvalue()
    assert start == 0 or shown[start - 1] == "\n"  # on a line of its own
    if said.startswith("\n"):  # ending a line left open, never adding a blank one
        assert before and not before.endswith("\n")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_ctrl_c_while_a_question_waits_says_so_on_a_line_of_its_own() -> None:
    # `run` on a terminal asks the permission question there; a Ctrl-C while the question
    # waits cancels the turn, and the message said so right after "choice: " on its line.
    import fcntl
    import termios

    agent = (
        TURN_STARTED
        + """update({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "Edit",
        "status": "pending"})
send({"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": {
    "sessionId": "s1", "title": "Allow the edit?",
    "subject": {"type": "tool_call", "toolCall": {"toolCallId": "c1"}},
    "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]}})
while (m := recv()) is not None:
    if m.get("method") == "session/cancel":
        update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"})
"""
    )
    main_fd, follower = os.openpty()

    def controlling_terminal() -> None:  # the pty is the child's /dev/tty
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    command = [sys.executable, "-m", "acp_client.cli", "run", "--prompt", "hi", "--"]
    try:
        with started(
            [*command, sys.executable, "-c", agent],
            stdin=follower,
            stdout=follower,
            stderr=follower,
            start_new_session=True,
            preexec_fn=controlling_terminal,
        ) as proc:
            os.close(follower)
            shown = read_until(main_fd, b"choice: ")
            proc.send_signal(signal.SIGINT)
            shown += read_all(main_fd)
            assert proc.wait(timeout=60) == 130
    finally:
        os.close(main_fd)
    text = shown.decode(errors="replace").replace("\r\n", "\n")
    said = "acp-client run: cancelling the turn (Ctrl-C again to stop)\n"
    assert "\nchoice: \n" + said in text, text[-2000:]
