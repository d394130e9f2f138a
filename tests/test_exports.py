"""The public surface is pinned, and ``import acp_client`` stays light."""

import inspect
import subprocess
import sys

import acp_client


def test_public_names_are_exported_and_documented() -> None:
    for name in acp_client.__all__:
        obj = getattr(acp_client, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__doc__, f"{name} has no docstring"


def test_import_does_not_pull_heavy_dependencies() -> None:
    code = (
        "import sys, acp_client, acp_client.schema, acp_client.logs, acp_client.testing\n"
        "bad = [m for m in ('trio', 'hypothesis', 'rich', 'pyte') if m in sys.modules]\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
