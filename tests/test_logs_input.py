"""Bytes to lines: compression, BOM, line breaks, blank lines, last line (LOG-FORMATS.md 1.1)."""

from __future__ import annotations

import gzip
import io
import json
import random
import zlib
from typing import Any

import pytest

from acp_client.logs import LogReader, read_log
from acp_client.logs._input import ByteLines

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}}
INIT_OK = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 2}}
UPDATE = {
    "jsonrpc": "2.0",
    "method": "session/update",
    "params": {"sessionId": "s", "update": {"sessionUpdate": "state_update", "state": "idle"}},
}


def jl(*values: Any) -> bytes:
    return b"".join(json.dumps(v).encode() + b"\n" for v in values)


def codes(result: Any) -> list[str]:
    return [d.code for d in result.diagnostics]


def test_multi_member_gzip_is_one_stream() -> None:
    data = gzip.compress(jl(INIT)) + gzip.compress(jl(INIT_OK, UPDATE))
    result = read_log(data)
    assert codes(result) == []
    assert [r.line for r in result.records] == [1, 2, 3]


def test_gzip_member_split_inside_a_line() -> None:
    text = jl(INIT, INIT_OK)
    data = gzip.compress(text[:10]) + gzip.compress(text[10:])
    assert [r.line for r in read_log(data).records] == [1, 2]


def test_gzip_zero_padding_is_ignored() -> None:
    data = gzip.compress(jl(INIT)) + b"\x00" * 16
    result = read_log(data)
    assert codes(result) == [] and len(result.records) == 1


def test_gzip_detected_by_magic_whatever_the_name(tmp_path: Any) -> None:
    path = tmp_path / "log.txt"
    path.write_bytes(gzip.compress(jl(INIT, INIT_OK)))
    assert len(read_log(path).records) == 2


def test_truncated_gzip_keeps_records_before() -> None:
    text = jl(*([UPDATE] * 200))
    data = gzip.compress(text)
    result = read_log(data[: len(data) - 8])  # only the trailer is missing
    assert result.fatal
    assert codes(result) == ["gzip-error"]
    error = result.diagnostics[-1]
    assert error.severity == "error"
    assert len(result.records) == 200
    assert error.line == 201
    cut = read_log(data[: len(data) // 2])
    assert codes(cut) == ["gzip-error"]
    assert 0 < len(cut.records) < 200
    assert cut.diagnostics[0].line == len(cut.records) + 1


def test_gzip_checksum_error_is_fatal_and_keeps_records() -> None:
    data = bytearray(gzip.compress(jl(INIT, INIT_OK, UPDATE)))
    data[-8] ^= 0xFF  # corrupt the CRC32
    result = read_log(bytes(data))
    assert result.fatal and codes(result) == ["gzip-error"]
    assert [r.line for r in result.records] == [1, 2, 3]
    assert result.diagnostics[0].line == 4


def test_a_gzip_break_keeps_a_complete_last_line_without_lf() -> None:
    # 1.1: "records read before it are kept"; the last line was decoded whole.
    data = gzip.compress(jl(INIT, INIT_OK).rstrip(b"\n"))
    result = read_log(data[:-8])
    assert codes(result) == ["gzip-error"]
    assert [r.line for r in result.records] == [1, 2]
    assert result.diagnostics[0].line == 3


def test_a_gzip_break_in_a_document_keeps_the_records_read_before_it() -> None:
    # 1.1 with document mode (1.2, a pretty-printed Zed export): the break is the only error.
    document = json.dumps([INIT, INIT_OK, UPDATE], indent=2).encode()
    lines = document.count(b"\n") + 1
    data = gzip.compress(document)
    intact = [r.line for r in read_log(data).records]
    assert len(intact) == 3
    whole = read_log(data[:-8])  # every byte decoded, the trailer missing
    assert codes(whole) == ["gzip-error"]
    assert [r.line for r in whole.records] == intact
    assert whole.diagnostics[0].line == lines + 1
    cut = read_log(gzip.compress(document[: document.index(b'"session/update"')])[:-8])
    assert codes(cut) == ["gzip-error"]
    assert [r.line for r in cut.records] == intact[:2]


def test_a_gzip_break_keeps_the_same_records_however_the_bytes_are_fed() -> None:
    noise = random.Random(7)
    text = jl(*({**UPDATE, "params": {"n": noise.randbytes(48).hex()}} for _ in range(8000)))
    data = bytearray(gzip.compress(text, compresslevel=1))
    assert len(data) > 4 * 65536
    at = len(data) * 3 // 4  # past several 64 KiB slices of one feed() call
    data[at : at + 20] = bytes(20)

    def records(step: int) -> list[Any]:
        reader = LogReader()
        items = []
        for start in range(0, len(data), step):
            items.extend(reader.feed(bytes(data[start : start + step])))
        items.extend(reader.close())
        return [i for i in items if getattr(i, "kind", None) == "message"]

    whole = records(len(data))
    assert len(whole) > 4000
    assert [r.line for r in whole] == [r.line for r in records(65536)]


def test_gzip_garbage_after_member_is_fatal() -> None:
    data = gzip.compress(jl(INIT)) + b"not gzip at all"
    result = read_log(data)
    assert result.fatal and codes(result) == ["gzip-error"]
    assert len(result.records) == 1


@pytest.mark.parametrize(
    ("magic", "name"),
    [(b"\x28\xb5\x2f\xfd", "zstd"), (b"\xfd7zXZ\x00", "xz"), (b"BZh", "bzip2")],
)
def test_unsupported_compression_is_fatal(magic: bytes, name: str) -> None:
    result = read_log(magic + b"\x00" * 40)
    assert result.fatal
    assert codes(result) == ["unsupported-compression"]
    assert name in result.diagnostics[0].message
    assert result.records == []


def test_tiny_bzip2_magic_only() -> None:
    assert codes(read_log(b"BZh")) == ["unsupported-compression"]


def test_bom_is_ignored_once() -> None:
    result = read_log(b"\xef\xbb\xbf" + jl(INIT, INIT_OK))
    assert codes(result) == [] and len(result.records) == 2


def test_bom_inside_gzip() -> None:
    result = read_log(gzip.compress(b"\xef\xbb\xbf" + jl(INIT)))
    assert codes(result) == [] and len(result.records) == 1


def test_crlf_and_blank_lines_are_counted() -> None:
    data = b"\r\n  \t\r\n" + jl(INIT).replace(b"\n", b"\r\n") + b"\n\n" + jl(INIT_OK)
    result = read_log(data)
    assert codes(result) == []
    assert [r.line for r in result.records] == [3, 6]


def test_only_lf_ends_a_line() -> None:
    text = "a\u2028b\u2029c\u0085d"
    update = {**UPDATE, "params": {"sessionId": "s", "update": {"sessionUpdate": "x", "t": text}}}
    line = json.dumps(update, ensure_ascii=False).encode()  # the separators stay raw
    garbage = b"not\x0cjson\x0bat\rall"  # FF, VT and a lone CR do not end the line
    result = read_log(jl(INIT) + line + b"\n" + garbage + b"\n" + jl(INIT_OK))
    assert [r.line for r in result.records] == [1, 2, 4]
    assert [(d.code, d.line) for d in result.diagnostics] == [("malformed-line", 3)]
    message = result.records[1].message
    assert message is not None
    assert message["params"]["update"]["t"] == text


def test_unicode_separators_unescaped_inside_strings() -> None:
    line = '{"jsonrpc":"2.0","method":"session/update","params":{"t":"x\u2028y\u2029z"}}'
    result = read_log(line.encode() + b"\n")
    assert codes(result) == [] and result.records[0].line == 1


def test_invalid_utf8_line_is_malformed() -> None:
    bad = b'{"jsonrpc":"2.0","method":"session/update","params":{"t":"\xff"}}\n'
    result = read_log(jl(INIT) + bad + jl(INIT_OK))
    assert codes(result) == ["malformed-line"]
    assert result.diagnostics[0].line == 2 and result.diagnostics[0].severity == "error"
    assert [r.line for r in result.records] == [1, 3]


def test_malformed_line_then_reading_goes_on() -> None:
    result = read_log(jl(INIT) + b"this is not json\n" + jl(INIT_OK))
    assert codes(result) == ["malformed-line"]
    assert len(result.records) == 2


def test_last_line_without_lf_is_read() -> None:
    data = jl(INIT) + json.dumps(INIT_OK).encode()
    result = read_log(data)
    assert codes(result) == [] and [r.line for r in result.records] == [1, 2]


def test_truncated_final_line_is_a_warning() -> None:
    data = jl(INIT, INIT_OK) + b'{"jsonrpc":"2.0","method":"session/up'
    result = read_log(data)
    assert codes(result) == ["truncated-final-line"]
    assert result.diagnostics[0].severity == "warning" and result.diagnostics[0].line == 3
    assert len(result.records) == 2


def test_truncated_final_line_with_cut_multibyte_character() -> None:
    data = jl(INIT) + '{"jsonrpc":"2.0","method":"x","params":"é'.encode()[:-1]
    assert codes(read_log(data)) == ["truncated-final-line"]


@pytest.mark.parametrize("data", [b"", b"\n\n", b"  \r\n\t\n", gzip.compress(b"")])
def test_empty_input(data: bytes) -> None:
    result = read_log(data)
    assert codes(result) == ["empty-input"]
    assert result.diagnostics[0].severity == "warning"
    assert result.records == [] and not result.fatal and result.format is None


def test_very_long_line_fed_in_small_chunks() -> None:
    big = {**UPDATE, "params": {"blob": "x" * 300_000}}
    data = jl(INIT) + jl(big)
    reader = LogReader()
    items = []
    for start in range(0, len(data), 4096):
        items.extend(reader.feed(data[start : start + 4096]))
    items.extend(reader.close())
    assert [getattr(i, "line", None) for i in items] == [1, 2]


def test_byte_lines_splitting() -> None:
    lines = ByteLines()
    assert lines.feed(b"\xef") == []
    assert lines.feed(b"\xbb\xbfab") == []
    assert lines.feed(b"c\nde\r\n\nf") == [b"abc", b"de\r", b""]
    assert lines.close() == ([], b"f")


def test_feeding_byte_by_byte_gives_the_same_items() -> None:
    data = gzip.compress(jl(INIT, INIT_OK) + b"bad\n" + jl(UPDATE))
    whole = LogReader()
    expected = whole.feed(data) + whole.close()
    reader = LogReader()
    items = []
    for i in range(len(data)):
        items.extend(reader.feed(data[i : i + 1]))
    items.extend(reader.close())
    assert items == expected


def test_file_object_read_in_chunks() -> None:
    data = jl(*([UPDATE] * 5000))
    result = read_log(io.BufferedReader(io.BytesIO(data), buffer_size=1000))  # type: ignore[arg-type]
    assert len(result.records) == 5000 and result.records[-1].line == 5000


def test_text_file_object_is_refused() -> None:
    with pytest.raises(TypeError):
        read_log(io.StringIO("{}"))  # type: ignore[arg-type]


def test_zlib_error_path_salvages_previous_lines() -> None:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    data = compressor.compress(jl(INIT, INIT_OK)) + compressor.flush()
    broken = data[:-8] + b"\x00\x00\x00\x00" + data[-4:]
    result = read_log(broken)
    assert result.fatal and [r.line for r in result.records] == [1, 2]
