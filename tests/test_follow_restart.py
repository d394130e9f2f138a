"""``replay --follow`` when the followed file is truncated or replaced, and when it is idle.

Driven one poll at a time (``_Follower.step``) with a stopper that never sleeps and a fake
clock: no test here waits. Regression tests of issue 26: after a truncation 5 of 8 new
records were lost (one misreported as ``malformed-line``), a file deleted and created again
was never read again, and an idle follower rebuilt the whole view every 0.25 s.
"""

from __future__ import annotations

import argparse
import os
import select
from pathlib import Path
from typing import Any

import pytest
from fuzzing import watchdog
from helpers import handshake_lines, line
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_client.cli._follow import _Follower
from acp_client.testing import FakeAgent

OPENING = b"".join(line(m) for m in handshake_lines("s")).decode()  # decides v2


class Stopper:
    """A stopper that never sleeps; it counts the waits (the polls that found nothing).

    A descriptor it is given to wait on is polled without waiting (a FIFO's).
    """

    signal: int | None = None

    def __init__(self) -> None:
        self.waits = 0

    def wait(self, seconds: float, fd: int | None = None) -> bool:
        if fd is not None and select.select([fd], [], [], 0)[0]:
            return True  # readable: no wait
        self.waits += 1
        return False


def lines(first: int, count: int) -> str:
    agent = FakeAgent("s")
    for n in range(first, first + count):
        agent.agent_chunk(f"m{n}", f"r{n} ")
    return "".join(line + "\n" for line in agent.log_lines("jsonrpc"))


def follower(log: Path) -> _Follower:
    args = argparse.Namespace(json=True, events=False, no_thoughts=False, markdown=False)
    options: dict[str, Any] = dict.fromkeys(
        ("format", "perspective", "direction", "sides", "protocol", "terminal_limit")
    )
    options.update(strict=False, unstable=())
    follow = _Follower(str(log), args, options, Stopper())  # type: ignore[arg-type]
    assert follow.input.open()
    follow._last_data, follow._settled = 0.0, True
    follow.clock = lambda: 0.0
    return follow


def drain(follow: _Follower) -> None:
    """Poll until a poll finds nothing new."""
    stopper = follow.stopper
    waits = stopper.waits
    while stopper.waits == waits:
        follow.step(lambda: None)


def texts(follow: _Follower) -> list[str]:
    session = follow.replayer.connection.sessions["s"]
    return [block.text for entry in session.timeline for block in entry.content]


def codes(follow: _Follower) -> list[str]:
    return [d.code for d in follow.replayer.all_diagnostics()]


def test_a_truncated_file_is_read_again_from_its_start(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(OPENING + lines(0, 8))
    follow = follower(log)
    drain(follow)
    log.write_text("")  # truncated
    drain(follow)
    with log.open("a") as handle:
        handle.write(lines(8, 8))
    drain(follow)
    assert texts(follow) == [f"r{n} " for n in range(16)]
    assert codes(follow) == ["log-truncated"]


def test_a_file_truncated_and_rewritten_shorter_between_two_polls(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(OPENING + lines(0, 8))
    follow = follower(log)
    drain(follow)
    log.write_text(lines(8, 3))  # shorter than what was read: a truncation
    drain(follow)
    assert texts(follow) == [f"r{n} " for n in range(11)]
    assert codes(follow) == ["log-truncated"]


def rewrite(log: Path, text: str) -> None:
    """Truncate ``log`` and write ``text``, padded with blank lines to at least its size."""
    size = log.stat().st_size
    log.write_text(text + "\n" * (size - len(text)))


def warnings(follow: _Follower) -> list[tuple[str, int | None]]:
    return [(d.code, d.line) for d in follow.replayer.all_diagnostics()]


@pytest.mark.parametrize("count", [12, 2], ids=["larger", "same-size"])
def test_a_file_rewritten_between_two_polls_is_read_again(tmp_path: Path, count: int) -> None:
    # Issue 26: only a smaller file was taken for a truncated one; a file truncated and
    # written again to its old size or past it was read on from the old offset (records
    # lost, or misread as malformed-line).
    log = tmp_path / "log.jsonl"
    before = OPENING + lines(0, 4)
    log.write_text(before)
    follow = follower(log)
    drain(follow)
    rewrite(log, lines(4, count))
    size = log.stat().st_size
    assert size > len(before) if count == 12 else size == len(before)
    drain(follow)
    assert texts(follow) == [f"r{n} " for n in range(4 + count)]
    assert warnings(follow) == [("log-truncated", before.count("\n"))]
    (warning,) = follow.replayer.all_diagnostics()
    assert f"after line {before.count(chr(10))} ({len(before):,} bytes read)" in warning.message
    assert "written again" in warning.message and "line 1" in warning.message


def test_a_file_whose_first_bytes_changed_is_read_again(tmp_path: Path) -> None:
    # Past the 4 KiB windows: the last bytes read are as they were, the first are not.
    log = tmp_path / "log.jsonl"
    before = OPENING + lines(0, 60)
    assert len(before) > 2 * 4096
    log.write_text(before)
    follow = follower(log)
    drain(follow)
    changed = before.replace('"version":"1"', '"version":"2"', 1)  # in the first line
    assert changed != before and changed[-4096:] == before[-4096:]
    log.write_text(changed + lines(60, 1))
    drain(follow)
    assert warnings(follow) == [("log-truncated", before.count("\n"))]
    assert texts(follow)[-1] == "r60 "


def test_a_file_only_appended_to_is_never_read_again(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(OPENING + lines(0, 60))
    follow = follower(log)
    for n in range(60, 70):
        drain(follow)
        with log.open("a") as handle:
            handle.write(lines(n, 1)[:30])  # a line written in two pieces
        drain(follow)
        with log.open("a") as handle:
            handle.write(lines(n, 1)[30:])
    drain(follow)
    assert texts(follow) == [f"r{n} " for n in range(70)]
    assert warnings(follow) == []


def test_a_line_cut_by_the_truncation_is_reported_as_cut(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    text = lines(0, 2)
    log.write_text(OPENING + text + text[:40])  # a writer caught mid-line
    follow = follower(log)
    drain(follow)
    log.write_text(lines(2, 1))
    drain(follow)
    assert texts(follow) == ["r0 ", "r1 ", "r2 "]
    assert codes(follow) == ["log-truncated", "truncated-final-line"]


def test_a_file_deleted_and_created_again_is_read_again(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(OPENING + lines(0, 4))
    follow = follower(log)
    drain(follow)
    log.unlink()
    drain(follow)  # gone: waited for
    log.write_text(lines(4, 4) + lines(8, 4))  # longer than the old one: same name, new file
    drain(follow)
    assert texts(follow) == [f"r{n} " for n in range(12)]
    assert codes(follow) == ["log-replaced"]
    (warning,) = follow.replayer.all_diagnostics()
    read = OPENING + lines(0, 4)
    assert warning.line == read.count("\n")  # where it was: the last line read before
    assert f"replaced by a new file after line {warning.line} ({len(read):,} bytes" in (
        warning.message
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_a_fifo_is_followed_across_its_writers(tmp_path: Path) -> None:
    # A FIFO has no size: it was taken for a truncated file once its writer closed (then
    # seeking it failed with ESPIPE, a traceback). Each writer's records are read, in order.
    # (It also waited for ever to open the FIFO again when its writer had gone.)
    log = tmp_path / "log.fifo"
    os.mkfifo(log)
    with watchdog(30):  # a hang fails, never blocks the suite
        follow = follower(log)  # no writer yet: opened at once
        first = os.open(log, os.O_WRONLY)
        os.write(first, (OPENING + lines(0, 2)).encode())
        os.close(first)  # the writer goes: the FIFO reads empty, and nothing more
        drain(follow)
        drain(follow)
        second = os.open(log, os.O_WRONLY)
        os.write(second, lines(2, 2).encode())
        os.close(second)
        drain(follow)
    assert texts(follow) == [f"r{n} " for n in range(4)]
    assert warnings(follow) == []


def test_an_idle_follower_does_not_rebuild_the_view(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(OPENING + lines(0, 2))
    follow = follower(log)
    drawn = []
    for _ in range(10):
        follow.step(lambda: drawn.append(1))
    assert len(drawn) == 1  # the first state, then nothing changed
    with log.open("a") as handle:
        handle.write(lines(2, 1))
    for _ in range(10):
        follow.step(lambda: drawn.append(1))
    assert len(drawn) == 2


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["append", "truncate", "rewrite", "replace", "poll"]),
            st.integers(1, 4),
        ),
        max_size=10,
    )
)
def test_every_record_written_is_applied_once_whatever_the_file_does(
    tmp_path: Path, steps: list[tuple[str, int]]
) -> None:
    # The property: records appended, the file truncated (and written again), rewritten to
    # the same size or larger without a poll between, or replaced, polled at any point:
    # every record written is applied exactly once, in order.
    log = tmp_path / f"log{os.getpid()}-{len(os.listdir(tmp_path))}.jsonl"
    log.write_text(OPENING)
    follow = follower(log)
    drain(follow)
    written = 0
    expected: list[str] = []
    for action, count in steps:
        text = lines(written, count)
        if action == "append":
            with log.open("a") as handle:
                handle.write(text)
        elif action == "truncate":
            log.write_text("")
            drain(follow)
            log.write_text(text)
        elif action == "rewrite":  # truncated and written again, not smaller, unpolled
            rewrite(log, text)
        elif action == "replace":
            log.unlink()
            log.write_text(text)
        else:
            drain(follow)
            continue
        expected += [f"r{n} " for n in range(written, written + count)]
        written += count
        drain(follow)
    drain(follow)
    got = texts(follow) if expected else []
    assert got == expected
