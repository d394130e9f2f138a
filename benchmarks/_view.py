"""The ``view`` figures (issue 22): following chunks through ``acp_client.view``.

A log of one session's chunks, ``terminal`` (``terminal_output_chunk`` lines after one
``terminal_update``) or ``message`` (``agent_message_chunk`` lines of one message), is fed
to ``Connection.receive_data`` in 64 KiB reads, once by the library alone and once with a
``ConversationView`` folding every event; the two alternate in one subprocess. Figures:

* ``view`` (per kind, 32k chunks): view seconds / library seconds, target <= 2;
* ``view-scaling`` (per kind): the view's seconds per chunk at 100k over those at 10k,
  target <= 1.3 (linear: no copy of what was followed before).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._report import Figure, size_label

KINDS = ("terminal", "message")
SESSION = "sess_view"
RATIO_TARGET = 2.0
SCALING_TARGET = 1.3


def _line(update: dict[str, Any]) -> str:
    params = {"sessionId": SESSION, "update": update}
    return json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}) + "\n"


def write_log(path: Path, kind: str, n: int) -> Path:
    """``n`` chunks of ``kind`` (cached by name)."""
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    if kind == "terminal":
        lines.append(_line({"sessionUpdate": "terminal_update", "terminalId": "t1"}))
        for i in range(n):
            data = base64.b64encode(f"line {i:07d} of the build output\r\n".encode()).decode()
            update = {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": data}
            lines.append(_line(update))
    else:
        for i in range(n):
            block = {"type": "text", "text": f"word{i % 1000} "}
            update = {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": block}
            lines.append(_line(update))
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(lines), encoding="utf-8")
    tmp.replace(path)
    return path


def target_view(
    path: Path, repeat: int, use_gc: bool, clock: Callable[[], float]
) -> dict[str, Any]:
    """Library alone vs library + view over the same reads, alternating (best of each)."""
    from acp_client import Connection
    from acp_client.view import ConversationView

    from ._targets import alternate, read_blocks

    blocks = read_blocks(path)
    chunks = path.read_bytes().count(b"\n")

    def library() -> float:
        conn = Connection(live=False)
        receive = conn.receive_data
        t0 = clock()
        for block in blocks:
            receive(block)
        return clock() - t0

    def with_view() -> float:
        conn = Connection(live=False)
        view = ConversationView(conn)
        receive = conn.receive_data
        fold = view.apply_all
        t0 = clock()
        for block in blocks:
            fold(receive(block))
        elapsed = clock() - t0
        shown = view.sessions[SESSION]
        if shown.resyncs:
            raise RuntimeError("the view read the session again: the contract broke")
        return elapsed

    times = alternate(repeat, {"library": library, "view": with_view}, use_gc=use_gc)
    return {
        "seconds": min(times["view"]),
        "library_seconds": min(times["library"]),
        "chunks": chunks,
        "blocks": len(blocks),
    }


def run_view(runner: Any, data_dir: Path, quick: bool) -> None:
    """Add the ``view`` and ``view-scaling`` figures of both kinds to ``runner.report``."""
    sizes = (2_000, 8_000, 20_000) if quick else (10_000, 32_000, 100_000)
    small, ratio_size, big = sizes
    for kind in KINDS:
        results: dict[int, dict[str, Any]] = {}
        for n in sizes:
            log = write_log(data_dir / f"view-{kind}-{n}.jsonl", kind, n)
            results[n] = runner.run_target("view", _Log(log), runner.repeat_for(n, 5))
        r = results[ratio_size]
        fig = Figure("view", f"{kind} {size_label(ratio_size)}", target=RATIO_TARGET, extra=r)
        fig.error = r.get("error")
        if fig.error is None:
            fig.seconds = r["seconds"]
            fig.updates = r["chunks"]
            fig.value = r["seconds"] / r["library_seconds"]
            fig.note = (
                f"receive_data + ConversationView vs receive_data alone "
                f"{r['library_seconds']:.3f} s, 64 KiB reads"
            )
        runner.report.add(fig)
        a, b = results[small], results[big]
        label = f"{kind} {size_label(small)}-{size_label(big)}"
        scale = Figure("view-scaling", label, target=SCALING_TARGET, extra={"small": a, "big": b})
        scale.error = a.get("error") or b.get("error")
        if scale.error is None:
            per_small = a["seconds"] / a["chunks"]
            per_big = b["seconds"] / b["chunks"]
            scale.value = per_big / per_small
            scale.note = (
                f"with the view, per chunk: {per_small * 1e6:.2f} us at {size_label(small)}, "
                f"{per_big * 1e6:.2f} us at {size_label(big)}"
            )
        runner.report.add(scale)


class _Log:
    """What ``run_target`` reads of a log: its path."""

    def __init__(self, path: Path) -> None:
        self.path = path
