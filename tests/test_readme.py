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


def test_every_diagnostic_code_is_listed_in_the_readme() -> None:
    # SNAPSHOT.md: `code` is a stable identifier listed in the project's documentation.
    package = README.parent / "acp_client"
    source = "".join(p.read_text(encoding="utf-8") for p in sorted(package.rglob("*.py")))
    emitted = set(
        re.findall(r'(?:_note|_diag|note|report|diag)\(\s*"([a-z0-9]+(?:-[a-z0-9]+)+)"', source)
    )
    emitted |= set(re.findall(r'\bcode="([a-z0-9]+(?:-[a-z0-9]+)+)"', source))
    assert len(emitted) > 30  # the patterns still find the codes
    text = README.read_text(encoding="utf-8")
    assert sorted(code for code in emitted if f"`{code}`" not in text) == []
