"""The command line's JSON writer (``cli/_json_out.py``): bounded, fast, and byte for byte.

``write_json`` (``replay --json``, ``run --json``, the end line of ``--events``) writes a
run of elements at a time with msgspec; its text must stay exactly what ``dump_json`` (the
standard library's ``json.dumps``, made safe for a terminal) gives, for every snapshot: the
transcripts, the sample logs, generated conversations and arbitrary JSON-like values, piped
and on a terminal, indented and not, and with runs so small that every container is split.
"""

from __future__ import annotations

import io
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_client import replay_log
from acp_client.cli import _json_out, dump_json, main, write_json
from acp_client.testing import FakeAgent
from acp_client.testing.strategies import conversations, stored_logs

TESTS = Path(__file__).parent
LOGS = sorted(
    p
    for p in [*(TESTS / "transcripts").iterdir(), *(TESTS / "logs").iterdir()]
    if not p.name.endswith(".snapshot.json")
)

# runs of 1 character split every container down to its scalars; 64 some; the default none
# of these small snapshots
RUNS = [1, 64, _json_out._RUN]


class _Pieces(io.StringIO):
    """Standard output that counts its writes."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[int] = []

    def write(self, text: str) -> int:
        self.writes.append(len(text))
        return super().write(text)


def _written(value: object, indent: int | None) -> str:
    out = io.StringIO()
    write_json(value, out, indent=indent)
    return out.getvalue()


def _same(value: object) -> None:
    for indent in (2, None, 0, 1):
        assert _written(value, indent) == dump_json(value, indent=indent) + "\n"


@pytest.fixture(params=[False, True], ids=["piped", "terminal"])
def terminal(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Standard output a pipe or a terminal (every non-ASCII character escaped there)."""
    monkeypatch.setattr(sys.stdout, "isatty", lambda: request.param)
    return bool(request.param)


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_every_transcript_and_sample_is_written_as_dump_json_writes_it(
    log: Path, run: int, terminal: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_json_out, "_RUN", run)
    result = replay_log(str(log))
    snapshot = result.snapshot()
    _same(snapshot)
    _same({"file": str(log), **snapshot})  # a folder's line


def test_the_command_prints_the_snapshot_as_before(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # replay --json used to print dump_json(payload, indent=2); a folder, dump_json(line)
    from acp_client.cli._replay_cmd import _replay_one

    monkeypatch.setattr(_json_out, "_RUN", 64)
    for log in LOGS:
        assert main(["replay", "--json", str(log)]) in (0, 3)
        _, _, payload = _replay_one(str(log), {}, "json")
        assert capsys.readouterr().out == dump_json(payload, indent=2) + "\n"
    assert main(["replay", "--json", str(TESTS / "logs")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(list((TESTS / "logs").iterdir()))
    for line in lines:
        name = json.loads(line)["file"]
        _, _, payload = _replay_one(name, {}, "json")
        assert line == dump_json({"file": name, **payload})


# Values json and msgspec might write differently: floats of every size (msgspec writes
# 1e-05 as 0.00001 and 1e16 as 1e16), non-finite ones (null), big integers, keys that are
# not strings, lone surrogates, C0, DEL, C1, astral characters, tuples, nesting.
_TEXT = st.text(
    st.one_of(
        st.characters(),
        st.sampled_from(["\x00", "\x1b", "\x7f", "\x85", "\x9b", "\u2028", "\ud800", "😀"]),
    ),
    max_size=12,
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.sampled_from([1e-05, 1e16, 1.5e-07, 1e300, 0.0001, 123456789012345678.0]),
    _TEXT,
)
_KEYS = st.one_of(_TEXT, st.integers(), st.sampled_from([1.5, 1e16, True, None]))
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(_TEXT, inner, max_size=6),
        st.dictionaries(_KEYS, inner, max_size=3),
    ),
    max_leaves=40,
)


@given(value=_VALUES, run=st.sampled_from(RUNS))
@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_json_like_value_is_written_as_dump_json_writes_it(
    value: Any, run: int, terminal: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_json_out, "_RUN", run)
    _same(value)


@given(log=stored_logs(exchanges=conversations(close=None, session_messages=True)))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_generated_conversations_are_written_as_dump_json_writes_them(log: Any) -> None:
    snapshot = replay_log(log.text.encode()).snapshot()
    for run in RUNS:
        _json_out._RUN, saved = run, _json_out._RUN
        try:
            _same(snapshot)
        finally:
            _json_out._RUN = saved


def test_json_and_msgspec_disagree_on_these_floats_and_json_wins() -> None:
    value = {"small": [1e-05, 1.5e-07], "big": 1e16, "inf": math.inf, "nan": [math.nan]}
    text = _written(value, None)
    assert text == ('{"small": [1e-05, 1.5e-07], "big": 1e+16, "inf": null, "nan": [null]}\n')


def test_a_deep_and_big_value_is_written_whole_past_the_deepest_split(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_json_out, "_RUN", 1)
    value: Any = ["x" * 10]
    for _ in range(_json_out._DEEPEST + 30):
        value = [value, "y"]
    _same(value)


def _big_snapshot(messages: int, chunks: int) -> dict[str, Any]:
    block = {"type": "text", "text": "some agent text \u00e9\u0085 " * 8}
    entry = {"entry": "message", "role": "agent", "content": [block] * chunks}
    timeline = [dict(entry, messageId=f"m{i}") for i in range(messages)]
    session = {"sessionId": "s", "timeline": timeline}
    return {"format": "acp-client/snapshot@1", "sessions": [session], "diagnostics": []}


def test_a_snapshot_is_written_without_the_standard_library_encoder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the stdlib's indenting encoder is pure Python: a 140 MB log took 6 s to print; a
    # snapshot of only JSON types and no floats goes through msgspec alone
    snapshot = _big_snapshot(20, 200)
    expected = dump_json(snapshot, indent=2) + "\n"

    def refuse(*args: object, **kwargs: object) -> Any:
        raise AssertionError("the standard library's encoder was used")

    monkeypatch.setattr(json, "dumps", refuse)
    monkeypatch.setattr(json.JSONEncoder, "iterencode", refuse)
    monkeypatch.setattr(json.JSONEncoder, "encode", refuse)
    out = io.StringIO()
    write_json(snapshot, out, indent=2)
    assert out.getvalue() == expected


def test_replay_json_writes_a_big_snapshot_a_bounded_piece_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # replay --json built the whole text (several copies of the snapshot) and wrote it once
    agent = FakeAgent("s")
    for i in range(4000):
        agent.agent_chunk(f"m{i // 500}", f"chunk {i} " + "word " * 200)
    log = tmp_path / "big.jsonl"
    log.write_text(agent.log_text("jsonrpc"))
    out = _Pieces()
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["replay", "--json", str(log)]) == 0
    total = sum(out.writes)
    assert total > 4_000_000
    assert max(out.writes) <= 2 * _json_out._JSON_WRITE  # about a megabyte a write
    assert out.getvalue().endswith("}\n")
    assert json.loads(out.getvalue())["sessions"][0]["timeline"][7]["messageId"] == "m7"


def test_one_long_string_is_one_piece_and_the_rest_stays_bounded() -> None:
    # memory follows the largest single string, not the snapshot
    snapshot = _big_snapshot(4, 2000)
    snapshot["sessions"][0]["timeline"].append({"entry": "terminal", "output": "z" * 3_000_000})
    out = _Pieces()
    write_json(snapshot, out, indent=2)
    assert out.getvalue() == dump_json(snapshot, indent=2) + "\n"
    assert sorted(out.writes)[-1] > 3_000_000  # the long string
    assert sorted(out.writes)[-2] <= 2 * _json_out._JSON_WRITE


_BEYOND = (
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
    b'{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text",'
    b'"text":"x","_meta":{"n":1e400,"small":1e-05,"big":1e16}}}}}'
)


@pytest.mark.parametrize("ending", [b"\n", b""], ids=["line", "last line without LF"])
def test_a_number_beyond_a_double_in_a_log_is_null_in_json_and_said(
    ending: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Live, a connection says number-beyond-double; replay_log read the same line silently
    # (the reader decodes it leniently and hands the connection the value).
    log = tmp_path / "beyond.jsonl"
    log.write_bytes(_BEYOND + ending)
    assert main(["replay", "--json", str(log)]) == 0
    snapshot = json.loads(capsys.readouterr().out)
    meta = snapshot["sessions"][0]["timeline"][0]["content"][0]["_meta"]
    assert meta == {"n": None, "small": 1e-05, "big": 1e16}
    assert [(d["code"], d["line"]) for d in snapshot["diagnostics"]] == [
        ("number-beyond-double", 1)
    ]


def test_a_number_beyond_a_double_in_a_zed_document_is_said_at_its_line() -> None:
    text = (TESTS / "logs" / "sample.zed.json").read_text()
    text = text.replace('"protocolVersion": 2,', '"protocolVersion": 2, "_meta": {"n": -1e400},', 1)
    result = replay_log(text.encode())
    assert result.format == "zed"
    assert [(d.code, d.line) for d in result.diagnostics] == [("number-beyond-double", 2)]
