"""Properties: how a log is split into bytes, lines and chunks does not change what is read."""

from __future__ import annotations

import gzip
from pathlib import Path

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_client.logs import LogReader, LogRecord, read_log

LOGS = Path(__file__).parent / "logs"
SAMPLES = sorted(p.name for p in LOGS.glob("sample.*") if not p.name.endswith(".gz"))
BLANK = st.text(alphabet=" \t\r", max_size=3)


def without_line(record: LogRecord) -> LogRecord:
    return msgspec.structs.replace(record, line=0)


@st.composite
def reshaped(draw: st.DrawFn) -> tuple[str, bytes, dict[int, int]]:
    """A sample log with CRLF/LF endings and blank lines added; old line -> new line."""
    name = draw(st.sampled_from(SAMPLES))
    lines = (LOGS / name).read_bytes().split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    out: list[bytes] = []
    mapping: dict[int, int] = {}
    for number, line in enumerate(lines, start=1):
        for blank in draw(st.lists(BLANK, max_size=2)):
            out.append(blank.encode())
        mapping[number] = len(out) + 1
        out.append(line + (b"\r" if draw(st.booleans()) else b""))
    out.extend(blank.encode() for blank in draw(st.lists(BLANK, max_size=2)))
    data = b"\n".join(out)
    if draw(st.booleans()):
        data += b"\n"
    return name, data, mapping


@settings(max_examples=60, deadline=None)
@given(reshaped(), st.booleans(), st.booleans())
def test_line_breaks_and_blank_lines_change_only_line_numbers(
    case: tuple[str, bytes, dict[int, int]], bom: bool, compress: bool
) -> None:
    name, data, mapping = case
    original = read_log(LOGS / name)
    if bom:
        data = b"\xef\xbb\xbf" + data
    if compress:
        data = gzip.compress(data)
    result = read_log(data)
    assert result.diagnostics == []
    assert result.format == original.format
    assert [without_line(r) for r in result.records] == [without_line(r) for r in original.records]
    assert [r.line for r in result.records] == [mapping[r.line] for r in original.records]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([*SAMPLES, "sample.acp-client.jsonl.gz"]), st.data())
def test_chunking_does_not_change_the_items(name: str, data: st.DataObject) -> None:
    raw = (LOGS / name).read_bytes()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=12)))
    reader = LogReader()
    items = []
    start = 0
    for cut in [*cuts, len(raw)]:
        items.extend(reader.feed(raw[start:cut]))
        start = cut
    items.extend(reader.close())
    whole = read_log(raw)
    assert items == [*whole.records]  # the samples produce no diagnostics
