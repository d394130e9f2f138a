"""Many stored logs on all cores: :func:`replay_many` (and the spreading the CLI shares).

Each log is replayed in a worker process (:func:`replay_log` with the same options) and
reduced there to a picklable summary (its snapshot by default), so only that crosses back;
results come in the order of the paths, with one combined status (the worst), as
``acp-client replay --jobs N`` prints them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, NamedTuple, TypeVar

__all__ = ["ReplayBatch", "ReplayedLog", "replay_many", "spread"]

T = TypeVar("T")
R = TypeVar("R")

STATUS_OK = 0
"""Read to its end (diagnostics do not change this)."""
STATUS_STRICT = 1
"""``strict`` stopped at the first error diagnostic."""
STATUS_UNREADABLE = 3
"""The log could not be read (missing file, broken compression, no known format)."""


def spread(
    func: Callable[[T], R],
    items: Sequence[T],
    jobs: int | None,
    done: Callable[[R], None] | None = None,
) -> list[R]:
    """``[func(item) for item in items]``, over ``jobs`` processes (``None``: every core).

    In input order. One job, or one item, runs here without a process pool. ``done`` is
    called with each result as it comes, in input order (a progress bar).
    """
    count = (os.cpu_count() or 1) if jobs is None else max(1, jobs)
    out: list[R] = []
    if count <= 1 or len(items) <= 1:
        for item in items:
            out.append(func(item))
            if done is not None:
                done(out[-1])
        return out
    from concurrent.futures import ProcessPoolExecutor  # only when it spreads

    workers = min(count, len(items))
    # many small logs: a few items per trip to a worker, still a dozen trips per worker
    chunk = max(1, len(items) // (workers * 12))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for result in pool.map(func, items, chunksize=chunk):
            out.append(result)
            if done is not None:
                done(result)
    return out


class ReplayedLog(NamedTuple):
    """One log of :func:`replay_many`.

    Attributes:
        path: the path as given.
        status: 0 read to its end, 1 ``strict`` stopped early, 3 unreadable (the exit
            statuses of ``acp-client replay``).
        value: what ``summary`` returned for its :class:`~acp_client.ReplayResult` (``None``
            when the file could not be opened).
        error: why the file could not be opened, else ``None``.
    """

    path: str
    status: int
    value: Any
    error: str | None


class ReplayBatch(NamedTuple):
    """The outcome of :func:`replay_many`: every log in input order, and the worst status."""

    status: int
    logs: list[ReplayedLog]


def _snapshot(result: Any) -> dict[str, Any]:
    snapshot: dict[str, Any] = result.snapshot()
    return snapshot


def _one(path: str, summary: Callable[[Any], Any], options: dict[str, Any]) -> ReplayedLog:
    from ._replay import replay_log

    try:
        result = replay_log(path, **options)
    except OSError as exc:
        return ReplayedLog(path, STATUS_UNREADABLE, None, f"cannot read {path}: {exc}")
    status = (
        STATUS_UNREADABLE if result.fatal else STATUS_STRICT if result.stopped_early else STATUS_OK
    )
    return ReplayedLog(path, status, summary(result), None)


def replay_many(
    paths: Sequence[str | os.PathLike[str]],
    *,
    jobs: int | None = None,
    summary: Callable[[Any], Any] = _snapshot,
    **options: Any,
) -> ReplayBatch:
    """Replay many log files over ``jobs`` processes (``None``: every core).

    Each file goes through :func:`~acp_client.replay_log` with ``options`` (``format``,
    ``strict``, ``protocol`` ...) in a worker, which returns ``summary(result)`` — the
    snapshot by default; a function of your module for less (it must be picklable: defined
    at module level). Results come in the order of ``paths``; ``status`` is the worst of
    them (0 all read, 1 one stopped by ``strict``, 3 one unreadable).

    Example:
        >>> from acp_client import replay_many
        >>> batch = replay_many([], jobs=2)
        >>> batch.status, batch.logs
        (0, [])
    """
    work = partial(_one, summary=summary, options=options)
    logs = spread(work, [os.fspath(p) for p in paths], jobs)
    return ReplayBatch(max((log.status for log in logs), default=STATUS_OK), logs)
