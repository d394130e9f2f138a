"""The README's Python examples run as written (those that need a real agent are skipped)."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    code = BLOCKS[index]
    if "my-agent" in code:
        pytest.skip("needs a real agent command (the transport tests cover it)")
    exec(compile(code, f"README block {index}", "exec"), {"__name__": "readme"})


def test_readme_commands_match_ci() -> None:
    text = README.read_text(encoding="utf-8")
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert ".venv/bin/python -m pytest" in text
    assert ".venv/bin/python -m pytest" in ci
    assert "npm ci --prefix tests/peers" in text and "npm ci --prefix tests/peers" in ci
