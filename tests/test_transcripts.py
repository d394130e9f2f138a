"""The transcript corpus: stored logs, each replayed to its expected snapshot.

Each ``tests/transcripts/NAME.jsonl`` (or ``.json``) holds one scenario of the spec, written
from its rules (prompt response before and after its echo, replace-then-append, tool-call
chunks then replacement, terminal chunks splitting UTF-8, cancellation, resume with replay,
unknown variants, the V1-TO-V2 worked example) or recorded from the real peer agents;
``NAME.snapshot.json`` is the state it must replay to, exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acp_client import replay_log

HERE = Path(__file__).resolve().parent / "transcripts"
CASES = sorted(
    p for p in HERE.iterdir() if p.suffix in (".jsonl", ".json") and ".snapshot" not in p.name
)


def test_the_corpus_is_there() -> None:
    names = {p.stem for p in CASES}
    assert {
        "prompt_response_before_echo",
        "prompt_echo_before_response",
        "replace_then_append",
        "tool_call_chunks_then_replacement",
        "terminal_chunks_split_utf8",
        "cancellation",
        "resume_with_replay",
        "unknown_variants",
        "v1_worked_example",
        "recorded_v2_agent",
        "recorded_v1_agent",
    } <= names


@pytest.mark.parametrize("log", CASES, ids=lambda p: p.stem)
def test_transcript_replays_to_its_expected_snapshot(log: Path) -> None:
    expected = json.loads((HERE / f"{log.stem}.snapshot.json").read_text(encoding="utf-8"))
    assert expected["sessions"], "a transcript must hold a conversation"
    result = replay_log(str(log))
    assert result.ok
    assert result.snapshot() == expected
