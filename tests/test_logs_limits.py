"""The log reader's limits under hostile input (LOG-FORMATS.md 1.12, issue 26).

Each test is the regression test of one finding: a line, a gzip stream or a document read
whole used to be held in memory however large (``/dev/zero``, a gzip bomb and a 1 GB line
ended in ``MemoryError``), blank lines cost microseconds each, and a first line holding a
value followed by junk made the reader apply that value and stop. The limits here are scaled
down; the README gives the figures at the defaults.
"""

from __future__ import annotations

import gzip
import json
import tracemalloc
import zlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_logs_input import INIT, INIT_OK, UPDATE, jl

from acp_client import replay_log
from acp_client.logs import LogReader, read_log
from acp_client.logs import _reader as reader_module
from acp_client.logs._input import ByteLines

ZED = {"_direction": "incoming", "_type": "notification", "method": "x", "params": {"n": 1}}


def where(result: Any) -> list[tuple[str, int | None]]:
    return [(d.code, d.line) for d in result.diagnostics]


class Endless:
    """A binary file that never ends (``/dev/zero``), counting what was read from it."""

    def __init__(self, block: bytes = b"\0" * 65536) -> None:
        self.block = block
        self.read_bytes = 0

    def read(self, size: int = -1) -> bytes:
        self.read_bytes += len(self.block)
        return self.block


def _read_in(data: bytes, cuts: list[int], **limits: int) -> list[Any]:
    reader = LogReader(**limits)  # type: ignore[arg-type]
    items: list[Any] = []
    start = 0
    for cut in sorted(cuts):
        items += reader.feed(data[start:cut])
        start = max(start, cut)
    return items + reader.feed(data[start:]) + reader.close()


# -- the longest line --------------------------------------------------------------------


def test_a_line_over_the_limit_is_skipped_and_reading_resumes_after_it() -> None:
    data = jl(INIT) + b'{"x":"' + b"y" * 500 + b'"}\n' + jl(INIT_OK, UPDATE)
    result = read_log(data, max_line=200)
    assert [r.line for r in result.records] == [1, 3, 4]
    assert where(result) == [("line-too-long", 2)]
    message = result.diagnostics[0].message
    assert "508 bytes" in message and "max_line=200" in message
    assert result.diagnostics[0].severity == "error" and not result.fatal


def test_a_line_over_the_limit_is_quoted_by_its_start_escaped() -> None:
    # The diagnostic quotes the dropped line's first 80 characters (issue 26: it quoted
    # nothing), as a JSON string: no control character of the line reaches a terminal.
    line = b'{"x":"\x1b]0;pwned\x07\x1b[2J\x7f\xc2\x9b' + b"y" * 500 + b'"}'
    result = read_log(jl(INIT) + line + b"\n" + jl(INIT_OK), max_line=200)
    assert where(result) == [("line-too-long", 2)]
    message = result.diagnostics[0].message
    start = json.dumps(line.decode()[:80]).replace("\x7f", "\\u007f")
    assert f"starting {start}…" in message
    assert not any(ord(c) < 32 or 127 <= ord(c) <= 159 for c in message)
    assert "y" * 81 not in message  # at most 80 characters of it


@settings(max_examples=40, deadline=None)
@given(
    head=st.binary(max_size=120),
    size=st.integers(0, 1400),  # under 16 times max_line: not a runaway line
    cuts=st.lists(st.integers(1, 700), max_size=5),
)
def test_the_quoted_start_of_a_long_line_is_the_same_whatever_the_reads(
    head: bytes, size: int, cuts: list[int]
) -> None:
    # The property: the quote is the escaped start of the line, cut at 80 characters,
    # whatever the reads (the reader kept the first bytes when it started skipping).
    line = (head + b"z" * size).replace(b"\n", b" ")
    data = jl(INIT) + line + b"\n"
    items = _read_in(data, cuts, max_line=96)  # the first line (85 bytes) is within it
    too_long = [i for i in items if getattr(i, "code", None) == "line-too-long"]
    if len(line) <= 96:
        assert too_long == []
        return
    (diagnostic,) = too_long
    text = line[:1024].decode("utf-8", "replace")
    quoted = json.dumps(text[:80]).replace("\x7f", "\\u007f")
    cut = len(line) > 1024 or len(text) > 80
    assert diagnostic.message.endswith(f"starting {quoted}{'…' if cut else ''}; skipped")
    assert not any(ord(c) < 32 or 127 <= ord(c) <= 159 for c in diagnostic.message)


def test_a_last_line_over_the_limit_without_a_line_break() -> None:
    result = read_log(jl(INIT) + b"[" * 300, max_line=200)
    assert [r.line for r in result.records] == [1]
    assert where(result) == [("line-too-long", 2)]


def test_a_line_over_the_limit_is_never_held() -> None:
    lines = ByteLines(max_line=4 << 20)
    block = b"x" * 65536
    tracemalloc.start()
    try:
        for _ in range(800):  # 50 MiB without a line break, as a file is read
            assert list(lines.pieces(block)) == [[]]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 << 20  # at most max_line held before it is known to be too long
    assert [[type(x).__name__ for x in p] for p in lines.pieces(b"\nok\n")] == [
        ["LineTooLong", "bytes"]
    ]


def test_endless_input_without_a_line_break_ends_reading() -> None:
    source = Endless()
    result = read_log(source, max_line=4096)  # type: ignore[arg-type]
    assert result.fatal and where(result) == [("runaway-line", 1)]
    assert "16 times max_line=4,096" in result.diagnostics[0].message
    assert source.read_bytes <= 16 * 4096 + 2 * 65536  # stopped right after the limit


def test_endless_input_after_records_keeps_them() -> None:
    class Source(Endless):
        def __init__(self) -> None:
            super().__init__()
            self.first = jl(INIT, INIT_OK) + b'{"half'

        def read(self, size: int = -1) -> bytes:
            first, self.first = self.first, b""
            return first or super().read(size)

    result = read_log(Source(), max_line=1000)  # type: ignore[arg-type]
    assert [r.line for r in result.records] == [1, 2]
    assert where(result) == [("runaway-line", 3)] and result.fatal


@settings(max_examples=40, deadline=None)
@given(
    size=st.integers(1000, 3000),
    gz=st.booleans(),
    cuts=st.lists(st.integers(0, 4000), max_size=4),
)
def test_whether_a_line_runs_away_does_not_depend_on_the_reads(
    size: int, gz: bool, cuts: list[int]
) -> None:
    # Found by the fuzzer at tiny limits: a line past 16 times max_line that does end with
    # an LF was a runaway line when its LF came in a later read, and only too long (reading
    # went on) when it came in the same one; the message counted the bytes of the reads.
    data = jl(INIT) + b"x" * size + b"\n" + jl(INIT_OK)
    if gz:
        data = gzip.compress(data)
    whole = _read_in(data, [], max_line=100)
    assert _read_in(data, cuts, max_line=100) == whole
    codes = [(i.code, i.line) for i in whole if getattr(i, "code", None)]
    assert codes == ([("runaway-line", 2)] if size > 1600 else [("line-too-long", 2)])
    assert len(whole) == 2 if size > 1600 else 4  # the records before it, or all of them


def test_a_runaway_line_in_gzip_input_keeps_the_records_before_it() -> None:
    data = gzip.compress(jl(*[INIT] * 50) + b"x" * 100_000)
    result = read_log(data, max_line=1000)
    assert [r.line for r in result.records] == list(range(1, 51))
    assert where(result) == [("runaway-line", 51)] and result.fatal


def test_a_line_over_the_limit_inside_a_document_ends_it() -> None:
    text = json.dumps([ZED, ZED], indent=2).encode()
    cut = text.rindex(b'"params"')
    data = text[:cut] + b'"big": "' + b"z" * 300 + b'",\n' + text[cut:]
    result = read_log(data, max_line=200)
    assert len(result.records) == 1
    assert [code for code, _ in where(result)] == ["line-too-long"]
    assert "the document ends here" in result.diagnostics[0].message


def test_only_a_line_over_the_limit_is_no_log() -> None:
    data = b"{" + b" " * 5000 + b"}\n"
    assert where(read_log(data, max_line=1000)) == [
        ("line-too-long", 1),
        ("no-format-detected", None),
    ]
    result = replay_log(data, max_line=1000)
    assert result.fatal and not result.ok


PAD = b'{"pad":"' + b"p" * 300 + b'"}'


@settings(max_examples=60, deadline=None)
@given(
    records=st.lists(st.sampled_from([INIT, INIT_OK, UPDATE, ZED]), min_size=1, max_size=12),
    long_at=st.sets(st.integers(0, 12), max_size=4),
    cuts=st.lists(st.integers(1, 400), max_size=6),
)
def test_a_long_line_reads_as_a_blank_one_plus_its_diagnostic(
    records: list[Any], long_at: set[int], cuts: list[int]
) -> None:
    # The property: whatever the reads, a log with lines over the limit gives the records of
    # the same log with those lines blank, and one line-too-long at each of them, in order.
    lines = [json.dumps(r).encode() for r in records]
    for index in sorted(long_at):
        lines.insert(min(index, len(lines)), PAD)
    data = b"\n".join(lines) + b"\n"
    blanked = b"\n".join(b"" if x is PAD else x for x in lines) + b"\n"
    reader = LogReader(max_line=180)
    items: list[Any] = []
    start = 0
    for cut in sorted(cuts):
        items += reader.feed(data[start : start + cut])
        start += cut
    items += reader.feed(data[start:]) + reader.close()
    whole = LogReader(max_line=180)
    expected = whole.feed(blanked) + whole.close()
    long_lines = [i + 1 for i, x in enumerate(lines) if x is PAD]
    too_long = [i.line for i in items if getattr(i, "code", None) == "line-too-long"]
    assert too_long == long_lines
    assert [i for i in items if getattr(i, "code", None) != "line-too-long"] == expected


# -- decompressed input ------------------------------------------------------------------


def test_a_gzip_bomb_stops_at_the_limit() -> None:
    bomb = gzip.compress(b"\0" * (64 << 20), 9)  # 64 MiB of zeros in about 64 KB
    result = read_log(bomb, max_decompressed=4 << 20, max_ratio=10)
    assert result.fatal
    assert [code for code, _ in where(result)][-1] == "decompressed-too-large"
    message = result.diagnostics[-1].message
    assert "max_decompressed=4,194,304" in message and "max_ratio=10" in message


def test_a_gzip_bomb_of_lines_keeps_what_came_before_the_limit() -> None:
    text = jl(INIT, INIT_OK) + jl(UPDATE) * 100_000
    data = gzip.compress(text, 9)
    result = read_log(data, max_decompressed=1 << 20, max_ratio=1)
    assert result.fatal and where(result)[-1][0] == "decompressed-too-large"
    assert 0 < len(result.records) < 100_002
    assert [r.line for r in result.records] == list(range(1, len(result.records) + 1))


def test_decompression_is_bounded_in_memory() -> None:
    bomb = gzip.compress(b"\n" * (32 << 20), 9)  # 32 MiB of blank lines in 32 KB
    lines = ByteLines()
    sizes = [len(piece) for piece in lines.pieces(bomb)]
    assert sum(sizes) == 32 << 20
    assert max(sizes) <= (1 << 18) + 1  # a bounded piece at a time (else one list of 32M)


def test_compressed_input_within_the_ratio_passes_the_floor() -> None:
    text = jl(INIT, INIT_OK) + b"\n" * 50_000 + jl(UPDATE)
    result = read_log(gzip.compress(text), max_decompressed=1000, max_ratio=1000)
    assert not result.fatal and [r.line for r in result.records] == [1, 2, 50_003]


def test_blank_lines_are_not_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def counting(raw: bytes) -> Any:
        calls.append(raw)
        return json.loads(raw)

    monkeypatch.setattr(reader_module, "decode_plain", counting)
    for lane in (True, False):
        calls.clear()
        text = jl(INIT, INIT_OK) + b"\n" * 10_000 + jl(UPDATE) + b"\n" * 10_000
        result = replay_log(gzip.compress(text)) if lane else read_log(text)
        assert not result.fatal
        assert b"" not in calls


def test_a_broken_gzip_stream_still_salvages_in_pieces() -> None:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    data = compressor.compress(jl(*[UPDATE] * 20_000)) + compressor.flush()
    broken = data[:-8] + b"\x00\x00\x00\x00" + data[-4:]
    result = read_log(broken)
    assert result.fatal and len(result.records) == 20_000


# -- documents read whole ----------------------------------------------------------------


def zed_export(count: int) -> bytes:
    return json.dumps([ZED] * count, indent=2).encode()


def test_a_document_over_the_limit_ends_reading() -> None:
    data = zed_export(2000)
    result = read_log(data, max_document=20_000)
    assert result.fatal
    assert [code for code, _ in where(result)] == ["document-too-large"]
    assert "max_document=20,000" in result.diagnostics[0].message
    assert 0 < len(result.records) < 2000  # those before the limit
    assert not read_log(data).fatal  # within the default


@settings(max_examples=40, deadline=None)
@given(
    count=st.integers(1, 60),
    broken=st.booleans(),
    cuts=st.lists(st.integers(0, 8000), max_size=4),
)
def test_a_document_over_the_limit_ends_at_the_same_line_whatever_the_reads(
    count: int, broken: bool, cuts: list[int]
) -> None:
    # Found by the fuzzer at tiny limits: the document took every line of the read that
    # passed max_document, so its end (the diagnostic's line, the records read) depended
    # on where the reads ended. JSON Lines with a broken first line (read as a document
    # until the limit) read the same records too.
    data = (
        b'{"jsonrpc":"2.0","meth\n' + jl(INIT, *[UPDATE] * count) if broken else zed_export(count)
    )
    whole = _read_in(data, [], max_document=2048)
    assert _read_in(data, cuts, max_document=2048) == whole
    if not broken and len(data) > 2048:
        (fatal,) = [i for i in whole if getattr(i, "code", None) == "document-too-large"]
        lines = data.split(b"\n")
        assert sum(len(x) + 1 for x in lines[: fatal.line - 1]) <= 2048
        assert sum(len(x) + 1 for x in lines[: fatal.line]) > 2048  # the line that passed it


def _peak_reading(data: bytes, **limits: int) -> int:
    tracemalloc.start()
    try:
        result = read_log(data, **limits)  # type: ignore[arg-type]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.fatal
    return peak


def test_a_document_over_the_limit_is_not_collected() -> None:
    # memory follows the limit, not the document: 8 times the document, the same peak
    small = _peak_reading(zed_export(2_500), max_document=128 << 10)
    large = _peak_reading(zed_export(20_000), max_document=128 << 10)
    assert large < small * 1.25


def test_json_lines_with_a_broken_first_line_over_the_document_limit() -> None:
    # 1.2 reads it as a document until the limit; the lines after the first are records,
    # so it is JSON Lines and every one of them is read.
    data = b'{"jsonrpc":"2.0","meth\n' + jl(INIT, INIT_OK) + jl(UPDATE) * 3000
    result = read_log(data, max_document=10_000)
    assert where(result) == [("malformed-line", 1)] and not result.fatal
    assert len(result.records) == 3002 and result.records[-1].line == 3003


# -- a bad first line --------------------------------------------------------------------


@pytest.mark.parametrize("junk", [b" junk", b"}", b'"more', b"\x00", b"], 1"])
def test_a_value_then_junk_on_the_first_line_does_not_drop_the_rest(junk: bytes) -> None:
    first = json.dumps(INIT).encode() + junk + b"\n"
    data = first + jl(INIT_OK) + jl(UPDATE) * 999
    result = replay_log(data)
    assert result.ok
    assert result.replayer.messages == 1000
    assert [(d.code, d.line) for d in result.diagnostics][:1] == [("malformed-line", 1)]
    read = read_log(data)
    assert len(read.records) == 1000 and read.records[0].line == 2


def test_a_document_still_starts_with_an_open_value() -> None:
    data = b"[" + json.dumps(ZED).encode() + b",\n" + json.dumps(ZED).encode() + b"]\n"
    result = read_log(data)
    assert [r.line for r in result.records] == [1, 2] and result.format == "zed"
