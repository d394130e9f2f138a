"""``summarize_many`` on a ``dask.distributed`` cluster (issue 25): a LocalCluster of two
worker processes on this machine gives exactly the local result, a corrupt log included.

Marked ``dask`` (``-m "not dask"`` leaves it out); it starts its own cluster and stops it,
so the rest of the suite is unaffected. It needs the ``dask`` extra (in the ``test`` extra).
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

from acp_client import summarize_many
from acp_client.cli import main
from acp_client.testing import FakeAgent

distributed = pytest.importorskip("distributed")

pytestmark = [
    pytest.mark.dask,
    # the cluster's own noise (ports, closing comms) is not the library's
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.filterwarnings("ignore:Port .* is already in use"),
]


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "fleet"
    folder.mkdir()
    for i in range(6):
        agent = FakeAgent(f"s{i}").initialize(0).new_session(1)
        for t in range(i + 1):
            agent.prompt(10 + t, "go").prompt_response(10 + t, f"u{t}")
            agent.user_message(f"u{t}", "go").state("running")
            agent.tool_call(f"c{t}", title="t", kind="read", status="completed")
            agent.state("idle", stop_reason="end_turn" if t % 2 else "max_tokens")
        text = agent.log_text("acp-client" if i % 2 else "capture")
        if i == 3:
            (folder / f"log{i}.jsonl.gz").write_bytes(gzip.compress(text.encode()))
        else:
            (folder / f"log{i}.jsonl").write_text(text)
    (folder / "log9.jsonl").write_bytes(b'{"broken": \n\xff\xfe')  # corrupt
    return folder


def test_a_local_cluster_gives_exactly_the_local_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path)
    local = summarize_many([folder], jobs=1)
    assert local[-1].error is not None and local[-1].session_id is None
    assert [r.turns_completed for r in local[:-1]] == [1, 2, 3, 4, 5, 6]
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        seen: list[int] = []
        on_cluster = summarize_many([folder], client=client, progress=lambda d, _t: seen.append(d))
        assert on_cluster == local
        assert seen == list(range(1, 8))
        # the tasks ran in the two worker processes: each imported the summary there
        ran = client.run(lambda: "acp_client._summary" in sys.modules)
        assert len(ran) == 2 and any(ran.values())
        # the command line against the same scheduler, by its address
        assert main(["summarize", "--dask", cluster.scheduler_address, str(folder)]) == 3
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert [r["path"] for r in rows] == [r.path for r in local]
        assert rows[-1]["error"] == local[-1].error
