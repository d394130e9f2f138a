"""The ``summarize`` figure of issue 25: ``summarize_many`` over a fleet of small logs with
``jobs=1``, ``jobs=2`` and a two-worker ``dask.distributed`` LocalCluster, in one run.

The fleet is the harness's generated log (both directions, ``acp-client`` format) linked
``count`` times into a temporary folder: the same work per file as distinct logs, read
through the page cache. Wall clock always (CPU time cannot show a parallel gain); each
configuration's best of ``repeat``, alternating; the cluster's start-up is timed on its own
and not counted. The three results must be equal, row for row.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

Result = dict[str, Any]
FLEET = 1000
QUICK_FLEET = 100


def target_summarize(path: Path, repeat: int, count: int = FLEET) -> Result:
    """Seconds for ``summarize_many`` of ``count`` copies of ``path`` three ways."""
    from acp_client import summarize_many

    try:
        import distributed
    except ImportError as exc:
        distributed = None
        missing = f"{exc}"
    with tempfile.TemporaryDirectory() as folder:
        for i in range(count):
            target = Path(folder) / f"log{i:04}.jsonl"
            try:
                os.link(path, target)
            except OSError:
                shutil.copyfile(path, target)
        times: dict[str, list[float]] = {"jobs1": [], "jobs2": [], "dask": []}
        results: dict[str, Any] = {}

        def timed(name: str, **kw: Any) -> None:
            t0 = time.perf_counter()
            rows = summarize_many([folder], **kw)
            times[name].append(time.perf_counter() - t0)
            results[name] = rows

        t0 = time.perf_counter()
        cluster = client = None
        if distributed is not None:
            cluster = distributed.LocalCluster(
                n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0"
            )
            client = distributed.Client(cluster)
            client.run(lambda: __import__("acp_client._fleet"))  # warm, as a pool starts
        startup = time.perf_counter() - t0
        try:
            for _ in range(repeat):
                timed("jobs1", jobs=1)
                timed("jobs2", jobs=2)
                if client is not None:
                    timed("dask", client=client)
        finally:
            if client is not None:
                client.close()
                cluster.close()
    rows = results["jobs1"]
    same = all(results[name] == rows for name in results)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    out: Result = {
        "logs": count,
        "rows": len(rows),
        "bytes": path.stat().st_size * count,
        "jobs1": min(times["jobs1"]),
        "jobs2": min(times["jobs2"]),
        "dask": min(times["dask"]) if times["dask"] else None,
        "dask_startup": startup if client is not None else None,
        "dask_error": None if distributed is not None else f"not available: {missing}",
        "same": same,
        "times": times,
        "cpus": os.cpu_count(),
        "load": load,
    }
    return out
