"""Every rule the code cites is in docs/, and every documented rule is cited by a test.

The code and the tests cite the project's rules reference (docs/rules.md) by id: ``R8``
(resolutions), ``C21`` (client obligations), ``A19`` (Agent obligations), the v2 Preview
addendum (docs/preview.md) by ``P12`` (its rules), ``R66``-``R86`` (its resolutions) and
``B7`` (its scenarios, each a test named ``test_b7_...``), the event contract
(docs/events.md) by ``E4``, and by section
(``section 6.3``, ``ACP-V2-CLIENT-STATE.md 12.5``, ``spec section 2.4``). The other documents
of docs/ are cited by name and section: ``V1-TO-V2 8`` / ``V1-TO-V2.md section 3.2``
(docs/v1-to-v2.md), ``LOG-FORMATS 1.10`` (docs/log-formats.md), ``SNAPSHOT.md PERMISSION``
(docs/snapshot.md). A section number also counts without the word "section" where it opens a
comment or string (``# 6.3: ...``) or is chained with a rule id (``(12.3, A17)``, ``3.2/R4``),
and in a test's name (``test_1_5_...`` is section 1.5). docs/README.md describes the
conventions.

Only comments, string literals and test names (``test_r8_...``) are read, so ``V1 = [...]`` or
``R2 = ...`` in code is no citation; a string that is nothing but an id (``"name": "A2"``) is
data, unless it is a ``match=`` pattern. A bare ``section n`` is read against the document
named just before it in the same comment block or string, else against V1-TO-V2.md in the v1
adapter's modules and LOG-FORMATS.md in the log reader's (by path, or when a file's opening
text names the document first or says it implements it), else against docs/rules.md. The
tests of Appendix A are named by scenario (``test_a10_...``), not by rule.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

DOC_FILES = {
    "rules": "rules.md",
    "v1-to-v2": "v1-to-v2.md",
    "log-formats": "log-formats.md",
    "snapshot": "snapshot.md",
    "preview": "preview.md",
    "events": "events.md",
}

# A rule id: R1..R93, C1..C30, A1..A29, P0..P46, B1..B25, E1..E9 (not part of a longer word
# or number).
RULE_ID = re.compile(r"(?<![\w\-.+])(?:[RCABE][1-9][0-9]?|P(?:0|[1-9][0-9]?))(?![\w\-+]|\.\d)")
# String literal tokens (Python 3.12 splits f-strings into parts).
STRING_TOKENS = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
# A rule id as part of a test's name: ``test_r5_chunk_...``.
TEST_NAME_ID = re.compile(r"[rcabe][1-9][0-9]?|p(?:0|[1-9][0-9]?)")
# "C1" also names the C1 control characters (U+0080-U+009F): not a rule there.
CONTROL_CONTEXT = re.compile(r"\bC0\b|\bDEL\b|\bESC\b|\bCSI\b|\bOSC\b|U\+00[89]|control")

_NUM = r"\d{1,2}(?:\.\d{1,2})?"
_NUM_LIST = rf"{_NUM}(?:(?:\s*,\s*|\s+and\s+|\s*/\s*|\s*[-\u2013]\s*){_NUM}(?![\w.]\d))*"
# A document name, as the code spells it.
DOC_NAME = re.compile(
    r"(?P<name>ACP-V2-CLIENT-STATE(?:\.md)?|V1-TO-V2(?:\.md)?|LOG-FORMATS(?:\.md)?"
    r"|SNAPSHOT\.md|SNAPSHOT(?=[ ,]+[A-Z_]{4,}\b)|\bspec(?= section))"
)
# "<document> [section[s]] 1.2, 1.3 and 2" right after a document name.
SECTIONS_AFTER_NAME = re.compile(rf"\A(?:\s+sections?)?\s+(?P<nums>{_NUM_LIST})(?![\w.]\d|\.\d)")
# "section[s] 1.2" anywhere.
BARE_SECTIONS = re.compile(rf"\b[Ss]ections?\s+(?P<nums>{_NUM_LIST})(?![\w.]\d|\.\d)")
# Section numbers without the word "section": at the opening of a comment or string
# ("# 6.3: ...", "# 10.5 / 12.3 step 5:"), or chained with a rule id ("(12.3, A17)", "3.2/R4").
_DOTTED = r"(?<![\w.])\d{1,2}\.\d{1,2}(?![\w.]\d|\.\d)"
DOTTED = re.compile(_DOTTED)
LEADING_NUMBERS = re.compile(rf"\A\s*{_DOTTED}(?:(?: step \d)?\s*/\s*{_DOTTED})*(?: step \d)?\s*:")
_ITEM = rf"(?:[RCA][1-9]\d?\b|{_DOTTED}(?: step \d)?)"
ID_CHAIN = re.compile(rf"{_ITEM}(?:\s*[/,]\s*{_ITEM})+")
# "SNAPSHOT.md PERMISSION": an object of the snapshot format.
SNAPSHOT_OBJECT = re.compile(r"\A[ ,]+(?P<obj>[A-Z_]{4,})\b")
APPENDIX = re.compile(r"\bAppendix A\b")


def _doc_key(name: str) -> str:
    if name.startswith(("ACP-V2", "spec")):
        return "rules"
    if name.startswith("V1-TO-V2"):
        return "v1-to-v2"
    if name.startswith("LOG-FORMATS"):
        return "log-formats"
    return "snapshot"


@dataclass(frozen=True)
class Citation:
    """One citation found in a source file."""

    path: str
    line: int
    doc: str  # a key of DOC_FILES, or "id" for a rule id
    target: str  # section number, snapshot object, "appendix-a", or the rule id

    def __str__(self) -> str:
        where = "rule" if self.doc == "id" else DOC_FILES[self.doc]
        return f"{self.path}:{self.line}: {where} {self.target}"


def _python_files(*dirs: Path) -> list[Path]:
    return sorted(
        p
        for d in dirs
        for p in d.rglob("*.py")
        if "node_modules" not in p.parts and "__pycache__" not in p.parts
    )


def _unquote(literal: str) -> str:
    """The text of a string literal token, without its prefix and quotes."""
    return re.sub(r"\A[rbfuRBFU]*(\"\"\"|'''|\"|')|(\"\"\"|'''|\"|')\Z", "", literal)


def _test_name_citations(name: str) -> str:
    """The citations a test's name carries, as text: ``test_1_5_x_r29`` -> ``section 1.5 R29``."""
    ids = [seg.upper() for seg in name.split("_") if TEST_NAME_ID.fullmatch(seg)]
    section = re.match(r"test_(\d{1,2})(?:_(\d{1,2}))?_", name)
    if section:
        ids.insert(0, "section " + ".".join(n for n in section.groups() if n))
    return " ".join(ids)


def _text_blocks(source: str, test_names: bool = True) -> Iterator[tuple[int, str]]:
    """(first line, text) of each comment block and string literal of a Python source.

    Comments alone on consecutive lines form one block, so a citation may wrap. A string that is
    exactly a rule id is data (``"name": "A2"``) unless it is a ``match=`` pattern. With
    ``test_names``, the rule ids in the name of a test function (``test_r5_...``,
    ``test_a29_a19_...``) are read too, as upper-case ids.
    """
    block: list[str] = []
    block_start = block_end = 0
    previous: list[tokenize.TokenInfo] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            line = tok.start[0]
            alone = not tok.line[: tok.start[1]].strip()
            if block and (line != block_end + 1 or not alone):
                yield block_start, " ".join(block)
                block = []
            if not alone:
                yield line, tok.string
                continue
            if not block:
                block_start = line
            block.append(tok.string.lstrip("#"))
            block_end = line
        elif tok.type == tokenize.NAME and test_names and previous and previous[-1].string == "def":
            if tok.string.startswith("test_"):
                yield tok.start[0], _test_name_citations(tok.string)
        elif tok.type in STRING_TOKENS:
            body = tok.string
            is_match = [t.string for t in previous] == ["match", "="]
            if not RULE_ID.fullmatch(_unquote(body)) or is_match:
                yield tok.start[0], body
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            previous = [*previous[-1:], tok]
    if block:
        yield block_start, " ".join(block)


def _blocks(source: str, test_names: bool = True) -> list[tuple[int, str]]:
    """:func:`_text_blocks` in source order."""
    return sorted(_text_blocks(source, test_names), key=lambda b: b[0])


def _expand(nums: str) -> list[str]:
    """The section numbers of ``1.2, 1.3 and 2`` or ``2-7`` (integer ranges expanded)."""
    out: list[str] = []
    for part in re.split(r"\s*,\s*|\s+and\s+|\s*/\s*", nums):
        m = re.fullmatch(r"(\d+)\s*[-\u2013]\s*(\d+)", part)
        if m and int(m[1]) < int(m[2]):
            out += [str(n) for n in range(int(m[1]), int(m[2]) + 1)]
        else:
            out += [p.strip() for p in re.split(r"\s*[-\u2013]\s*", part) if p.strip()]
    return out


# Modules whose bare section numbers are those of another document, by path.
PATH_DOCS = {"acp_client/_v1": "v1-to-v2", "acp_client/logs/": "log-formats"}


def _file_default_doc(rel: str, blocks: list[tuple[int, str]]) -> str:
    """The document a file's bare section numbers refer to.

    V1-TO-V2.md for the v1 adapter's modules and LOG-FORMATS.md for the log reader's (by
    path), or the one of them a file's opening text names on its first line or says it
    implements (``# Implements V1-TO-V2.md ...``); docs/rules.md otherwise.
    """
    for prefix, doc in PATH_DOCS.items():
        if rel.startswith(prefix):
            return doc
    if not blocks:
        return "rules"
    text = blocks[0][1]
    first_line = _unquote(text.strip()).lstrip().split("\n", 1)[0]
    for m in DOC_NAME.finditer(text):
        doc = _doc_key(m["name"])
        implements = re.search(r"Implements\b[^.]*\Z", text[: m.start()])
        if m["name"] in first_line or implements:
            return doc if doc in ("v1-to-v2", "log-formats") else "rules"
    return "rules"


def citations_in(path: Path) -> list[Citation]:
    """Every rule id and document section cited in one Python file."""
    return citations_in_source(path.relative_to(ROOT).as_posix(), path.read_text("utf-8"))


def citations_in_source(rel: str, source: str) -> list[Citation]:
    """Every rule id and document section cited in the Python source of file ``rel``."""
    # The tests of Appendix A are named by scenario (``test_a10_cancel_...``), not by rule.
    blocks = _blocks(source, not rel.endswith("test_appendix_a.py"))
    default = _file_default_doc(rel, blocks)
    found: list[Citation] = []
    for start, text in blocks:

        def line_of(pos: int, start: int = start, text: str = text) -> int:
            return start + text.count("\n", 0, pos)

        for m in RULE_ID.finditer(text):
            window = text[max(0, m.start() - 40) : m.end() + 40]
            if m[0] == "C1" and CONTROL_CONTEXT.search(window):
                continue
            found.append(Citation(rel, line_of(m.start()), "id", m[0]))
        names = list(DOC_NAME.finditer(text))
        for m in names:
            doc = _doc_key(m["name"])
            rest = text[m.end() :]
            if doc == "snapshot":
                obj = SNAPSHOT_OBJECT.match(rest)
                if obj:
                    found.append(Citation(rel, line_of(m.start()), doc, obj["obj"]))
                continue
            after = SECTIONS_AFTER_NAME.match(rest)
            if after:
                for num in _expand(after["nums"]):
                    found.append(Citation(rel, line_of(m.start()), doc, num))
            elif doc == "rules" and APPENDIX.match(rest.lstrip()):
                found.append(Citation(rel, line_of(m.start()), doc, "appendix-a"))

        def doc_at(pos: int, names: list[re.Match[str]] = names) -> str:
            before = [n for n in names if n.end() <= pos]
            doc = _doc_key(before[-1]["name"]) if before else default
            return "rules" if doc == "snapshot" else doc

        for m in BARE_SECTIONS.finditer(text):
            if any(n.start() < m.start() <= n.end() + 1 for n in names):
                continue  # "<document> section n": read above
            for num in _expand(m["nums"]):
                found.append(Citation(rel, line_of(m.start()), doc_at(m.start()), num))
        # "# 6.3: ..." opening a comment or string; "(12.3, A17)", "10.4 / R49": next to an id.
        bare = [LEADING_NUMBERS.match(_unquote(text))]
        bare += [c for c in ID_CHAIN.finditer(text) if RULE_ID.search(c[0])]
        for m in filter(None, bare):
            for num in DOTTED.findall(m[0]):
                found.append(Citation(rel, line_of(m.start()), doc_at(m.start()), num))
    return found


@cache
def _all_citations() -> tuple[Citation, ...]:
    """The citations of acp_client/ and tests/ (but not this file's examples)."""
    files = _python_files(ROOT / "acp_client", ROOT / "tests")
    return tuple(c for p in files if p != Path(__file__).resolve() for c in citations_in(p))


_HEADING = re.compile(r"^#{1,6}\s+(?:Section\s+)?(\d{1,2}(?:\.\d{1,2})*)\.?(?:\s|$)", re.M)
_HEADING_WORD = re.compile(r"^#{1,6}\s+(?:`?)([A-Z_]{4,})\b", re.M)
_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


@cache
def entries(doc: str) -> frozenset[str]:
    """The entries of one document of docs/: section numbers, anchors, object headings."""
    text = (DOCS / DOC_FILES[doc]).read_text(encoding="utf-8")
    found = set(_HEADING.findall(text)) | set(_ANCHOR.findall(text))
    found |= set(_HEADING_WORD.findall(text))
    if re.search(r"^#{1,6}\s+Appendix A\b", text, re.M):
        found.add("appendix-a")
    return frozenset(found)


def documented_rule_ids(name: str = "rules.md") -> list[str]:
    """The ids a document of docs/ defines, in document order (R, C and A in rules.md;
    P, R66-R86 and B in preview.md)."""
    text = (DOCS / name).read_text(encoding="utf-8")
    return [m for m in _ANCHOR.findall(text) if RULE_ID.fullmatch(m)]


def _id_entries() -> frozenset[str]:
    """Every rule id docs/ defines (rules.md, the Preview addendum, the event contract)."""
    return (
        entries("rules")
        | frozenset(documented_rule_ids("preview.md"))
        | frozenset(documented_rule_ids("events.md"))
    )


def test_the_docs_exist() -> None:
    for name in (*DOC_FILES.values(), "README.md"):
        assert (DOCS / name).is_file(), name


def test_rules_md_defines_every_rule_id_once() -> None:
    ids = documented_rule_ids()
    assert len(ids) == len(set(ids))
    expected = (
        [f"C{n}" for n in range(1, 31)]
        + [f"A{n}" for n in range(1, 30)]
        + [f"R{n}" for n in range(1, 66)]
        + [f"R{n}" for n in range(87, 94)]  # after the Preview's R66-R86 (preview.md)
    )
    assert ids == expected


def test_rules_md_and_the_preview_never_define_the_same_id() -> None:
    # Both number resolutions R...: one id must mean one rule (R66-R86 are the Preview's).
    assert set(documented_rule_ids()) & set(documented_rule_ids("preview.md")) == set()


def _anchors(text: str) -> set[str]:
    """The link targets of a Markdown text: explicit anchors and GitHub's heading slugs."""
    slugs = {
        re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        for heading in re.findall(r"^#{1,6}\s+(.+)$", text, re.M)
    }
    return slugs | set(_ANCHOR.findall(text))


@pytest.mark.parametrize("name", ["rules.md", "README.md", "preview.md", "events.md"])
def test_links_of_the_rules_docs_resolve(name: str) -> None:
    text = (DOCS / name).read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert links
    for link in links:
        target, _, anchor = link.partition("#")
        assert not target.startswith("http"), link
        path = DOCS / target if target else DOCS / name
        assert path.is_file(), link
        if anchor:
            assert anchor in _anchors(path.read_text(encoding="utf-8")), link


def test_rules_md_keeps_the_spec_section_numbers() -> None:
    sections = entries("rules")
    chapters = {str(n) for n in range(16)}
    assert chapters <= sections
    for sub in ("0.4", "1.8", "2.3", "4.4", "6.3", "7.8", "8.5", "9.6", "10.7", "11.6", "12.5"):
        assert sub in sections
    assert {"13.7", "14.1", "14.2", "appendix-a"} <= sections


PROBE = '''"""Theory (ACP-V2-CLIENT-STATE.md sections 1, 10-12; V1-TO-V2 8, LOG-FORMATS 1.10)."""
V1 = [R2]  # C0 and C1 controls; R8/R9 and section 6.3 (Python 3.11)
x = {"name": "A2", "id": "R3"}  # SNAPSHOT.md PERMISSION
pytest.raises(E, match="C21")
def test_r5_a29_chunk() -> None:
    # wraps: see
    # LOG-FORMATS.md section 2-3 and
    # section 1.4 there
    return f"answered twice (R10)"
'''
PROBE_FOUND = {
    *((1, "rules", n) for n in ("1", "10", "11", "12")),
    (1, "v1-to-v2", "8"),
    (1, "log-formats", "1.10"),
    (2, "id", "R8"),
    (2, "id", "R9"),
    (2, "rules", "6.3"),
    (3, "snapshot", "PERMISSION"),
    (4, "id", "C21"),
    (5, "id", "R5"),
    (5, "id", "A29"),
    *((6, "log-formats", n) for n in ("2", "3", "1.4")),
    (9, "id", "R10"),
}
BARE = """# 10.5 / 12.3 step 5: a resume error
x = 1  # version 3.11, see (12.4, A17) and 3.2/R4
def test_1_5_batch_r29() -> None:
    \"\"\"A float 0.5 or 2.0 is no section.\"\"\"
"""
BARE_FOUND = {
    *((1, "rules", n) for n in ("10.5", "12.3")),
    *((2, "rules", n) for n in ("12.4", "3.2")),
    *((2, "id", r) for r in ("A17", "R4")),
    (3, "rules", "1.5"),
    (3, "id", "R29"),
}
IMPLEMENTS = '# Implements V1-TO-V2.md: the adapter\n"""A docstring (section 4.1)."""\n'
MENTIONS = '"""Talk to an agent.\n\nv1: see V1-TO-V2.md."""\n# It reconciles (section 10.5).\n'
LOGS = '"""The log reader (LOG-FORMATS.md)."""\ndef test_2_2_directions() -> None: ...\n'


@pytest.mark.parametrize(
    ("rel", "source", "expected"),
    [
        ("acp_client/_x.py", PROBE, PROBE_FOUND),
        ("acp_client/_x.py", BARE, BARE_FOUND),
        # a file that implements another document, or sits where its modules are, cites it
        ("acp_client/_x.py", IMPLEMENTS, {(2, "v1-to-v2", "4.1")}),
        ("acp_client/_v1/_x.py", '"""Prompts (section 5.2)."""', {(1, "v1-to-v2", "5.2")}),
        ("acp_client/logs/_x.py", "# 1.10: pairing", {(1, "log-formats", "1.10")}),
        ("acp_client/_x.py", MENTIONS, {(4, "rules", "10.5")}),  # only mentioning it: no
        ("tests/test_logs.py", LOGS, {(2, "log-formats", "2.2")}),
    ],
)
def test_the_scanner_reads_citations_and_skips_lookalikes(
    rel: str, source: str, expected: set[tuple[int, str, str]]
) -> None:
    assert {(c.line, c.doc, c.target) for c in citations_in_source(rel, source)} == expected


def test_appendix_a_scenario_names_are_no_rule_ids() -> None:
    source = "# scenario 3 of ACP-V2-CLIENT-STATE.md Appendix A\ndef test_a10_x() -> None: ...\n"
    got = {(c.doc, c.target) for c in citations_in_source("tests/test_appendix_a.py", source)}
    assert got == {("rules", "appendix-a")}
    got = {(c.doc, c.target) for c in citations_in_source("tests/test_other.py", source)}
    assert got == {("rules", "appendix-a"), ("id", "A10")}


def test_every_cited_rule_and_section_exists_in_docs() -> None:
    citations = _all_citations()
    assert len(citations) > 300  # the scanner sees the citations at all
    ids = _id_entries()
    missing = [
        str(c) for c in citations if c.target not in (ids if c.doc == "id" else entries(c.doc))
    ]
    assert missing == [], "\n".join(missing)


# Obligations that bind the host application, not the library: nothing in acp_client can
# be tested for them (the library opens no URL and fetches no icon).
HOST_ONLY = {
    "C26": "elicitation UI: the host names the Agent, shows answers, asks before opening a URL",
    "C30": "icons: the host fetches them; the library keeps icon objects as data",
}


def test_every_documented_rule_is_cited_by_a_test() -> None:
    cited = {
        c.target for c in _all_citations() if c.doc == "id" and c.path.startswith("tests/test_")
    }
    uncited = [r for r in documented_rule_ids() if r not in cited and r not in HOST_ONLY]
    assert uncited == []


def test_events_md_defines_e1_to_e9_once_in_order_each_cited_by_a_test() -> None:
    assert documented_rule_ids("events.md") == [f"E{n}" for n in range(1, 10)]
    cited = {
        c.target for c in _all_citations() if c.doc == "id" and c.path.startswith("tests/test_")
    }
    assert [r for r in documented_rule_ids("events.md") if r not in cited] == []


def test_preview_md_defines_its_ids_once_in_order() -> None:
    assert documented_rule_ids("preview.md") == (
        [f"P{n}" for n in range(47)]
        + [f"R{n}" for n in range(66, 87)]
        + [f"B{n}" for n in range(1, 26)]
    )


# Every id of wt-preview-b is cited by its tests now.
PENDING_PREVIEW_B: frozenset[str] = frozenset()


def _test_names() -> set[str]:
    names: set[str] = set()
    for path in _python_files(ROOT / "tests"):
        names |= set(re.findall(r"^\s*(?:async\s+)?def (test_\w+)", path.read_text("utf-8"), re.M))
    return names


def test_every_preview_rule_is_cited_by_a_test() -> None:
    cited = {
        c.target for c in _all_citations() if c.doc == "id" and c.path.startswith("tests/test_")
    }
    rules = [r for r in documented_rule_ids("preview.md") if not r.startswith("B")]
    assert [r for r in rules if r not in cited and r not in PENDING_PREVIEW_B] == []


def test_every_preview_scenario_has_a_test_named_after_it() -> None:
    names = _test_names()
    scenarios = [b for b in documented_rule_ids("preview.md") if b.startswith("B")]
    missing = [
        b
        for b in scenarios
        if b not in PENDING_PREVIEW_B and not any(n.startswith(f"test_{b.lower()}_") for n in names)
    ]
    assert missing == []


@pytest.mark.parametrize("rule", sorted(HOST_ONLY))
def test_host_only_rules_say_so_in_rules_md(rule: str) -> None:
    text = (DOCS / "rules.md").read_text(encoding="utf-8")
    entry = text.split(f'<a id="{rule}"></a>', 1)[1].split("<a id=", 1)[0]
    assert "host" in entry
