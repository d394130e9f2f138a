"""The package as people meet it: the wheel built from this tree, installed with pip into a
fresh virtual environment (no system site packages; msgspec, rich and pyte come from the
package index), gives a working ``acp-client`` and ``python -m acp_client``.

Marked ``wheel`` (``-m "not wheel"`` leaves it out); it runs in the default suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from acp_client.cli import DISTRIBUTION

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.wheel


def _run(*args: str | Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert out.returncode == 0, f"{args}: {out.stdout}\n{out.stderr}"
    return out


def test_the_built_wheel_installs_and_runs_in_a_fresh_virtual_environment(
    tmp_path: Path,
) -> None:
    # Nothing of this tree or of the test run may leak in: no PYTHONPATH, another cwd.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", dist, ROOT, cwd=tmp_path,
         env=env)  # fmt: skip
    (wheel,) = dist.glob("*.whl")
    assert wheel.name.startswith(DISTRIBUTION.replace("-", "_") + "-")
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=tmp_path, env=env)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / "python"
    _run(python, "-m", "pip", "install", "-q", f"{wheel}[cli]", cwd=tmp_path, env=env)
    where = _run(python, "-c", "import acp_client; print(acp_client.__file__)", cwd=tmp_path,
                 env=env)  # fmt: skip
    assert Path(where.stdout.strip()).is_relative_to(venv)  # the installed copy, not this tree
    shown = _run(bindir / "acp-client", "--help", cwd=tmp_path, env=env)
    assert "exit status:" in shown.stdout and "examples:" in shown.stdout
    replayed = _run(bindir / "acp-client", "replay", cwd=tmp_path, env=env)
    assert "session sess-1" in replayed.stdout  # the example log shipped in the wheel
    snapshot = _run(bindir / "acp-client", "replay", "--json", cwd=tmp_path, env=env)
    assert json.loads(snapshot.stdout)["format"] == "acp-client/snapshot@1"
    module = _run(python, "-m", "acp_client", "--help", cwd=tmp_path, env=env)
    assert module.stdout.startswith("usage: acp-client")
    version = _run(bindir / "acp-client", "--version", cwd=tmp_path, env=env)
    import acp_client

    assert version.stdout.strip() == f"acp-client {acp_client.__version__}"
