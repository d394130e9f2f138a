"""The format documents in ``docs/`` stay true to the code.

``docs/snapshot.md``, ``docs/log-formats.md`` and ``docs/v1-to-v2.md`` are the project's own
copies of the contracts the code cites (SNAPSHOT, LOG-FORMATS, V1-TO-V2). These checks tie
them to what the code does: every key a transcript's snapshot holds is documented under its
object, every format id and diagnostic code the log reader can emit is in the reader's
document (and nothing it no longer emits), the sample logs named there exist and are read as
the format the table says, and every section the code cites by number has a heading.
"""

from __future__ import annotations

import ast
import codecs
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_client import replay_log
from acp_client.logs import FORMATS, read_log

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
TRANSCRIPTS = sorted((ROOT / "tests" / "transcripts").glob("*.snapshot.json"))
SAMPLES = ROOT / "tests" / "logs"
# the log reader, and the replay that drives it (wherever the package keeps it)
READER_SOURCES = [
    *sorted((ROOT / "acp_client" / "logs").rglob("*.py")),
    *sorted((ROOT / "acp_client").rglob("_replay*.py")),
]

_KEBAB = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$", re.MULTILINE)
_FIRST_CELL = re.compile(r"^\|\s*`([^`]+)`", re.MULTILINE)


def _text(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _sections(text: str) -> dict[str, str]:
    """Heading title -> the text under it, up to the next heading of any level."""
    marks = list(_HEADING.finditer(text))
    out: dict[str, str] = {}
    for mark, after in zip(marks, [*marks[1:], None], strict=True):
        end = after.start() if after is not None else len(text)
        out[mark.group(2)] = text[mark.end() : end]
    return out


def _numbers(text: str) -> set[str]:
    """The section numbers of a document's headings (``## 1.10 Pending ...`` -> ``1.10``)."""
    out = set()
    for mark in _HEADING.finditer(text):
        number = re.match(r"(\d+(?:\.\d+)*)\.?\s", mark.group(2) + " ")
        if number:
            out.add(number.group(1))
    return out


def _table_keys(section: str) -> set[str]:
    """The backticked names in the first column of a section's tables."""
    return set(_FIRST_CELL.findall(section))


def _mentioned(section: str) -> set[str]:
    return set(re.findall(r"`([^`]+)`", section))


# ------------------------------------------------------------------------ snapshot.md

#: SNAPSHOT's object names, as headings of docs/snapshot.md.
OBJECTS = (
    "Top level",
    "SESSION",
    "MESSAGE",
    "TOOL_CALL",
    "COMPACTION",
    "TERMINAL",
    "PLAN",
    "PROMPT",
    "PERMISSION",
    "DIAGNOSTIC",
)
_ENTRY_OBJECT = {"message": "MESSAGE", "toolCall": "TOOL_CALL", "compaction": "COMPACTION"}


def _snapshot_keys(snapshot: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """``(object name, key)`` for every key of every object in a snapshot."""
    for key in snapshot:
        yield "Top level", key
    for diagnostic in snapshot["diagnostics"]:
        for key in diagnostic:
            yield "DIAGNOSTIC", key
    for session in snapshot["sessions"]:
        for key in session:
            yield "SESSION", key
        # the keys of the session's plain objects are named in the SESSION section
        for field in ("state", "sessionInfo", "usage"):
            for key in session.get(field) or {}:
                yield "SESSION", key
        for entry in [*session["timeline"], *session["unretained"]]:
            for key in entry:
                yield _ENTRY_OBJECT[entry["entry"]], key
        for name, field in (
            ("TERMINAL", "terminals"),
            ("PLAN", "plans"),
            ("PROMPT", "prompts"),
            ("PERMISSION", "permissionRequests"),
        ):
            for item in session[field]:
                for key in item:
                    yield name, key


def test_snapshot_doc_has_every_object() -> None:
    sections = _sections(_text("snapshot.md"))
    assert set(OBJECTS) <= set(sections), set(OBJECTS) - set(sections)
    assert "acp-client/snapshot@1" in sections["Top level"]


def test_the_transcripts_are_there() -> None:
    assert len(TRANSCRIPTS) >= 10


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.name.split(".")[0])
def test_every_snapshot_key_of_a_transcript_is_documented(path: Path) -> None:
    sections = _sections(_text("snapshot.md"))
    snapshot = json.loads(path.read_text(encoding="utf-8"))
    missing = set()
    for name, key in _snapshot_keys(snapshot):
        section = sections[name]
        # object keys are table rows; the keys inside state/sessionInfo/usage are named
        # in the SESSION rows' text
        known = _table_keys(section) if name != "SESSION" else _mentioned(section)
        if key not in known:
            missing.add((name, key))
    assert not missing, f"{path.name}: keys not documented in docs/snapshot.md: {missing}"


def test_every_session_key_is_a_table_row() -> None:
    rows = _table_keys(_sections(_text("snapshot.md"))["SESSION"])
    for path in TRANSCRIPTS:
        for session in json.loads(path.read_text(encoding="utf-8"))["sessions"]:
            assert set(session) <= rows, (path.name, set(session) - rows)


@pytest.mark.parametrize("path", sorted(SAMPLES.iterdir()), ids=lambda p: p.name)
def test_the_sample_logs_replay_to_documented_keys(path: Path) -> None:
    sections = _sections(_text("snapshot.md"))
    snapshot = replay_log(str(path)).snapshot()
    for name, key in _snapshot_keys(snapshot):
        known = _table_keys(sections[name]) if name != "SESSION" else _mentioned(sections[name])
        assert key in known, (path.name, name, key)


# --------------------------------------------------------------------- log-formats.md


def _reader_codes() -> tuple[set[str], dict[str, str]]:
    """Diagnostic codes in the reader's source, and the severities of its code tables.

    A code is a kebab-case string given as the first argument or ``code=`` of a call (the
    reader's ``warn``/``error``/``_fail``, ``InputFatal``, ``Diagnostic``, ...), or a key of
    a ``*CODES*`` table; format ids and encoding names are not codes.
    """
    codes: set[str] = set()
    severities: dict[str, str] = {}

    def add(node: ast.AST | None) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            value = node.value
            if _KEBAB.fullmatch(value) and value not in FORMATS and not _is_encoding(value):
                codes.add(value)

    for path in READER_SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                add(node.args[0] if node.args else None)
                for keyword in node.keywords:
                    if keyword.arg == "code":
                        add(keyword.value)
            target = value = None
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign):
                target, value = node.target, node.value
            if isinstance(target, ast.Name) and "CODES" in target.id:
                if isinstance(value, ast.Dict):
                    for key, severity in zip(value.keys, value.values, strict=True):
                        add(key)
                        if isinstance(key, ast.Constant) and isinstance(severity, ast.Constant):
                            severities[str(key.value)] = str(severity.value)
                elif isinstance(value, ast.Call):  # frozenset({...})
                    for arg in value.args:
                        for item in getattr(arg, "elts", []):
                            add(item)
    return codes, severities


def _is_encoding(name: str) -> bool:
    try:
        codecs.lookup(name)
    except LookupError:
        return False
    return True


def _diagnostics_table() -> dict[str, str]:
    """docs/log-formats.md section 8: code -> severity cell."""
    section = _sections(_text("log-formats.md"))["8. Diagnostics"]
    rows = re.findall(r"^\|\s*`([^`]+)`\s*\|\s*([^|]+?)\s*\|", section, re.MULTILINE)
    return dict(rows)


def test_every_format_id_is_documented() -> None:
    sections = _sections(_text("log-formats.md"))
    overview = _table_keys(sections["0. Overview"])
    assert set(FORMATS) == overview
    detection = sections["1.3 Detection"]
    for name in FORMATS:
        assert f"`{name}`" in detection, name


def test_every_reader_diagnostic_code_is_documented() -> None:
    codes, severities = _reader_codes()
    assert len(codes) >= 20, codes  # the scan still finds the reader's codes
    table = _diagnostics_table()
    assert codes <= set(table), codes - set(table)
    assert set(table) <= codes, f"documented but never emitted: {set(table) - codes}"
    for code, severity in severities.items():
        assert table[code].startswith(severity), (code, severity, table[code])


def test_the_sample_logs_named_in_the_doc_exist() -> None:
    section = _sections(_text("log-formats.md"))["10. Sample files (`tests/logs/`)"]
    rows = re.findall(r"^\|\s*`(sample\.[^`]+)`\s*\|\s*`([^`]+)`", section, re.MULTILINE)
    named = dict(rows)
    assert named, "section 10 names no sample"
    assert set(named) == {p.name for p in SAMPLES.iterdir()}
    for name, format_id in named.items():
        assert read_log(str(SAMPLES / name)).format == format_id, name
    every_mention = set(re.findall(r"sample\.[\w.-]*\w", _text("log-formats.md")))
    assert every_mention <= set(named), every_mention - set(named)


# ------------------------------------------------------------------ cited section numbers

_CITATION = re.compile(
    r"(LOG-FORMATS|V1-TO-V2)(?:\.md)?(?:'s)?,?\s+(?:sections?\s+|§\s*)?(\d+(?:\.\d+)*)"
)
_DOC = {"LOG-FORMATS": "log-formats.md", "V1-TO-V2": "v1-to-v2.md"}


def _citing_files() -> list[Path]:
    files = sorted((ROOT / "acp_client").rglob("*.py")) + sorted((ROOT / "tests").rglob("*.py"))
    files += [p for p in (ROOT / "README.md", ROOT / "CHANGELOG.md") if p.exists()]
    files += sorted(DOCS.glob("*.md"))
    return files


def test_every_cited_section_has_a_heading() -> None:
    numbers = {name: _numbers(_text(doc)) for name, doc in _DOC.items()}
    unresolved = set()
    cited = 0
    for path in _citing_files():
        for match in _CITATION.finditer(path.read_text(encoding="utf-8")):
            cited += 1
            if match.group(2) not in numbers[match.group(1)]:
                unresolved.add((path.relative_to(ROOT).as_posix(), match.group(0)))
    assert cited > 20
    assert not unresolved, unresolved


def test_the_v1_doc_keeps_the_source_numbering() -> None:
    numbers = _numbers(_text("v1-to-v2.md"))
    expected = {"1", "1.1", "1.2", "1.3", "2", "3", "3.1", "3.2", "3.3", "3.4", "4", "4.1"}
    expected |= {"4.2", "4.3", "5", "5.1", "5.2", "5.3", "5.4", "5.5", "6", "6.0", "6.1"}
    expected |= {"6.2", "6.3", "6.4", "7", "8", "9", "10", "11"}
    assert expected <= numbers, expected - numbers
    log_numbers = _numbers(_text("log-formats.md"))
    expected = {f"1.{n}" for n in range(1, 12)} | {f"{n}" for n in range(12)}
    expected |= {"2.1", "2.2", "2.3", "2.4", "3.1", "3.2", "3.3", "3.4"}
    assert expected <= log_numbers, expected - log_numbers


_OBJECT_CITATION = re.compile(
    r"SNAPSHOT(?:\.md)?(?:'s)?,?\s+([A-Z][A-Z_]{2,})\b|\b([A-Z][A-Z_]{3,}) object\b"
)


def test_every_cited_snapshot_object_has_a_section() -> None:
    objects = set(_sections(_text("snapshot.md"))) - {"Top level"}
    cited = set()
    for path in _citing_files():
        for match in _OBJECT_CITATION.finditer(path.read_text(encoding="utf-8")):
            name = match.group(1) or match.group(2)
            if name not in ("LOG", "JSON"):  # "SNAPSHOT, LOG-FORMATS", "JSON object"
                cited.add(name)
    assert {"SESSION", "PERMISSION", "TOOL_CALL"} <= cited
    assert cited <= objects, cited - objects
