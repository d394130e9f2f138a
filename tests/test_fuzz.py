"""Fuzz harness (issue 26): hostile bytes into the core and the log reader.

Hypothesis draws raw bytes, near-JSON-RPC token soup and mutations of the valid transcripts
of ``tests/transcripts/`` (and of the log samples of ``tests/logs/``), and feeds them to
``Connection.receive_data`` (live and passive) and to the log reader in every format. The
properties:

* only the library's own exceptions: ``receive_data`` raises nothing at all for any bytes;
  the log reader and ``replay_log`` raise nothing but :class:`~acp_client.ACPError`;
* no hang: a watchdog fails an example after :data:`fuzzing.HANG_SECONDS` (no deadline:
  a slow machine never fails a test);
* memory within the configured limits (small ones here: :data:`fuzzing.LIMITS`);
* the result never depends on how the bytes are split into reads (events, state,
  diagnostics and the bytes owed to the agent; records and diagnostics of the reader);
* encode -> decode of anything accepted is lossless (a number beyond a double is the one
  value that cannot be, and it is diagnosed).

``ACP_FUZZ_EXAMPLES`` sets the examples per property (see :mod:`fuzzing` and the README).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from fuzzing import (
    FUZZ,
    LIMITS,
    SAMPLES,
    TINY,
    TINY_READER,
    diagnostics_bounded,
    feed,
    hostile_bytes,
    mutated,
    mutated_transcript,
    outcome,
    splits,
    terminals_bounded,
    watchdog,
    within_limits,
)
from hypothesis import given
from hypothesis import strategies as st

from acp_client import ACPError, Decoder, RemoteProtocolError, encode, replay_log
from acp_client._diagnostics import Diagnostic
from acp_client.logs import FORMATS, LogReader, read_log

CUTS = st.lists(st.integers(0, 1 << 20), max_size=12)


def _core_properties(
    data: bytes, cuts: list[int], live: bool, limits: dict[str, int] = LIMITS
) -> tuple[Any, list[Any]]:
    """Check the connection's properties; return it and its events (the whole read)."""
    with watchdog():
        whole, events = feed([data], live=live, **limits)
        within_limits(whole, limits)
        expected = outcome(whole, events)
        split, split_events = feed(splits(data, cuts), live=live, **limits)
        assert outcome(split, split_events) == expected
        lines, line_events = feed(
            splits(data, [i + 1 for i, b in enumerate(data) if b == 10]), live=live, **limits
        )
        assert outcome(lines, line_events) == expected
    return whole, events


@pytest.mark.parametrize("live", [True, False], ids=["live", "passive"])
@FUZZ
@given(data=hostile_bytes(), cuts=CUTS)
def test_any_bytes_into_the_connection(live: bool, data: bytes, cuts: list[int]) -> None:
    _core_properties(data, cuts, live)


@pytest.mark.parametrize("live", [True, False], ids=["live", "passive"])
@FUZZ
@given(data=mutated_transcript(), cuts=CUTS)
def test_mutated_transcripts_into_the_connection(live: bool, data: bytes, cuts: list[int]) -> None:
    _core_properties(data, cuts, live)


def _lossless(data: bytes) -> None:
    decoder = Decoder()
    for line in data.split(b"\n"):
        diagnostics: list[Diagnostic] = []
        try:
            decoded = decoder.decode(line, diagnostics=diagnostics)
        except RemoteProtocolError:
            continue
        if any(d.code == "number-beyond-double" for d in diagnostics):
            continue  # the one value JSON text holds that no double can: said, not silent
        messages = decoded if isinstance(decoded, list) else [decoded]
        for message in messages:
            again = decoder.decode(encode(message))
            assert again == message, (line, encode(message))
            assert encode(again) == encode(message)


@FUZZ
@given(data=st.one_of(hostile_bytes(), mutated_transcript()))
def test_encode_decode_of_anything_accepted_is_lossless(data: bytes) -> None:
    with watchdog():
        _lossless(data)


class _Reads:
    """A binary file whose reads return the given pieces, one per call."""

    def __init__(self, pieces: list[bytes]) -> None:
        self._pieces = [p for p in pieces if p]

    def read(self, size: int = -1) -> bytes:
        return self._pieces.pop(0) if self._pieces else b""


def _records(items: list[Any]) -> list[str]:
    return [repr(item) for item in items]


def _reader_properties(data: bytes, cuts: list[int], fmt: str | None) -> None:
    with watchdog():
        try:
            whole = read_log(data, format=fmt)
        except ACPError:
            return
        reader = LogReader(format=fmt)
        items: list[Any] = []
        for piece in splits(data, cuts):
            items += reader.feed(piece)
        items += reader.close()
        records = [item for item in items if not isinstance(item, Diagnostic)]
        diagnostics = [item for item in items if isinstance(item, Diagnostic)]
        assert _records(records) == _records(whole.records)
        assert _records(diagnostics) == _records(whole.diagnostics)
        try:
            result = replay_log(data, format=fmt)
        except ACPError:
            return
        again = replay_log(_Reads(splits(data, cuts)), format=fmt)
        assert again.snapshot() == result.snapshot()


@pytest.mark.parametrize("fmt", [None, *FORMATS])
@FUZZ
@given(data=st.one_of(hostile_bytes(), mutated_transcript()), cuts=CUTS)
def test_any_bytes_into_the_log_reader(fmt: str | None, data: bytes, cuts: list[int]) -> None:
    _reader_properties(data, cuts, fmt)


@FUZZ
@given(data=mutated(SAMPLES, ("delete", "insert", "flip", "cut"), most=4), cuts=CUTS)
def test_mutated_log_samples_into_the_log_reader(data: bytes, cuts: list[int]) -> None:
    """Every format's sample (gzip and the Zed document too), mutated."""
    _reader_properties(data, cuts, None)


# -- tiny limits ---------------------------------------------------------------------------
# Every limit at a few units (``fuzzing.TINY``): each is reached by short inputs, and what it
# drops is counted. The properties above hold, and every count is within its limit.

_UNBOUNDED_DIAGNOSTICS = {**TINY, "max_diagnostics": 1 << 30}


def _tiny_core_properties(data: bytes, cuts: list[int], live: bool) -> None:
    whole, events = _core_properties(data, cuts, live, TINY)
    with watchdog():
        terminals_bounded(whole, TINY["terminal_limit"])
        kept = whole.diagnostics
        seen = diagnostics_bounded(kept, kept.dropped, TINY["max_diagnostics"])
        # what was counted and not kept is exactly what an unbounded list keeps
        every, every_events = feed([data], live=live, **_UNBOUNDED_DIAGNOSTICS)
        assert Counter(d.code for d in every.diagnostics) == seen
        assert [repr(e) for e in every_events] == [repr(e) for e in events]


@pytest.mark.parametrize("live", [True, False], ids=["live", "passive"])
@FUZZ
@given(data=st.one_of(hostile_bytes(), mutated_transcript()), cuts=CUTS)
def test_any_bytes_into_the_connection_at_tiny_limits(
    live: bool, data: bytes, cuts: list[int]
) -> None:
    _tiny_core_properties(data, cuts, live)


@pytest.mark.parametrize("live", [True, False], ids=["live", "passive"])
@FUZZ
@given(data=mutated_transcript(), cuts=CUTS)
def test_mutated_transcripts_into_the_connection_at_tiny_limits_but_the_line(
    live: bool, data: bytes, cuts: list[int]
) -> None:
    """As above with lines of any length: the other limits are reached by whole messages."""
    limits = {**TINY, "max_line": 1 << 20}
    whole, _ = _core_properties(data, cuts, live, limits)
    terminals_bounded(whole, limits["terminal_limit"])
    diagnostics_bounded(whole.diagnostics, whole.diagnostics.dropped, 3)


def _tiny_reader_properties(data: bytes, cuts: list[int]) -> None:
    with watchdog():
        try:
            whole = read_log(data, **TINY_READER)
        except ACPError:
            return
        reader = LogReader(**TINY_READER)
        items: list[Any] = []
        for piece in splits(data, cuts):
            items += reader.feed(piece)
        items += reader.close()
        assert _records([i for i in items if not isinstance(i, Diagnostic)]) == _records(
            whole.records
        )
        assert _records([i for i in items if isinstance(i, Diagnostic)]) == _records(
            whole.diagnostics
        )
        limits: dict[str, Any] = {
            **TINY_READER,
            "max_diagnostics": TINY["max_diagnostics"],
            "terminal_limit": TINY["terminal_limit"],
            "block_limit": TINY["block_limit"],
        }
        try:
            result = replay_log(data, **limits)
        except ACPError:
            return
        kept = result.replayer.diagnostics
        diagnostics_bounded(kept, kept.dropped, 3)
        conn = result.replayer.connection
        diagnostics_bounded(conn.diagnostics, conn.diagnostics.dropped, 3)
        terminals_bounded(conn, TINY["terminal_limit"])
        replayed = {"max_sessions": 10_000, "max_pending": 10_000, "max_entities": 100_000}
        within_limits(conn, {**replayed, "block_limit": TINY["block_limit"]})  # the defaults
        assert sum(result.dropped_diagnostics.values()) == sum(kept.dropped.values()) + sum(
            conn.diagnostics.dropped.values()
        )
        again = replay_log(_Reads(splits(data, cuts)), **limits)
        assert again.snapshot() == result.snapshot()


@FUZZ
@given(
    data=st.one_of(
        hostile_bytes(),
        mutated_transcript(),
        mutated(SAMPLES, ("delete", "insert", "flip", "cut"), most=4),
    ),
    cuts=CUTS,
)
def test_any_bytes_into_the_log_reader_at_tiny_limits(data: bytes, cuts: list[int]) -> None:
    _tiny_reader_properties(data, cuts)
