"""Fleets of logs: :func:`summarize_many`, one :class:`SessionSummary` row per session.

Folders are expanded as ``acp-client replay DIR`` expands them (``_logfiles``); each log is
replayed and summarised by :func:`summarize_log` where it is read — here, in the worker
processes of ``_many.spread`` (the one pool the replay's ``--jobs`` uses), or as one task
per log on the workers of a ``dask.distributed`` client — and only its rows come back.
Rows keep the input order (log order, then each log's session order); a log that fails
becomes a row with its ``error``, never an exception and never a lost row.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from ._logfiles import expand_logs
from ._many import spread
from ._summary import SessionSummary, error_row

__all__ = ["summarize_log", "summarize_many"]


def summarize_log(path: str, options: dict[str, Any] | None = None) -> list[SessionSummary]:
    """Replay one log (``replay_log`` with ``options``) and return its rows; never raises.

    A file that cannot be opened or read gives one row with its ``error``; so does any
    other failure of the replay (named by its exception), so that a fleet never loses a log.
    """
    from ._replay import replay_log
    from ._summary import summarize_result

    try:
        result = replay_log(path, **(options or {}))
        return summarize_result(path, result)
    except OSError as exc:
        return [error_row(path, f"cannot read: {exc.strerror or exc}")]
    except Exception as exc:  # a fleet's row, not a failed job
        return [error_row(path, f"{type(exc).__name__}: {exc}")]


def summarize_many(
    paths: Sequence[str | os.PathLike[str]],
    *,
    jobs: int | None = None,
    client: Any = None,
    progress: Callable[[int, int], None] | None = None,
    **options: Any,
) -> list[SessionSummary]:
    """One :class:`SessionSummary` per session of every log, in input order.

    ``paths`` are log files or folders (a folder stands for the files below it that look
    like logs, as for ``acp-client replay DIR``). The logs are summarised over ``jobs``
    processes (``None``: every core), or, given a ``dask.distributed.Client`` as ``client``,
    one task per log on the cluster's workers (they must be able to read the paths; the
    result is the same, in the same order). ``options`` go to
    :func:`~acp_client.replay_log` (``format``, ``protocol``, ``terminal_limit``,
    ``block_limit`` ...).
    ``progress(done, total)`` is called as each log's rows arrive (in input order).

    Example:
        >>> from acp_client import summarize_many
        >>> summarize_many([], jobs=2)
        []
    """
    found = expand_logs([os.fspath(p) for p in paths])
    logs = [*found.logs, *(name for name, _ in found.unreadable)]  # their rows: the error
    total = len(logs)
    counted = [0]

    def done(_rows: list[SessionSummary]) -> None:
        counted[0] += 1
        if progress is not None:
            progress(counted[0], total)

    if client is not None:
        per_log = _on_cluster(client, logs, options, done)
    else:
        per_log = spread(partial(summarize_log, options=options), logs, jobs, done)
    return [row for rows in per_log for row in rows]


def _on_cluster(
    client: Any,
    logs: list[str],
    options: dict[str, Any],
    done: Callable[[list[SessionSummary]], None],
) -> list[list[SessionSummary]]:
    """One task per log on a ``dask.distributed`` client; a task that fails is an error row."""
    futures = client.map(summarize_log, logs, options=options, pure=False)
    out: list[list[SessionSummary]] = []
    try:
        for path, future in zip(logs, futures, strict=True):
            try:
                rows: list[SessionSummary] = future.result()
            except Exception as exc:  # a worker lost, a task cancelled: the log's row says so
                rows = [error_row(path, f"dask: {type(exc).__name__}: {exc}")]
            out.append(rows)
            done(rows)
    finally:
        client.cancel(futures)  # nothing left running on the cluster after an interrupt
    return out
