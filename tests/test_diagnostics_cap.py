"""The diagnostics kept are bounded, and what is not kept is counted (issue 26).

A million junk lines used to keep a million diagnostics (about 276 MB): now the first
``max_diagnostics`` of each code are kept, and one ``diagnostics-dropped`` diagnostic per code
counts the rest (:class:`acp_client.DiagnosticList`).
"""

from __future__ import annotations

import tracemalloc

from hypothesis import given
from hypothesis import strategies as st

from acp_client import Connection, Diagnostic, DiagnosticList, replay_log

INIT = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}\n'


def diag(code: str, line: int | None = None, severity: str = "error") -> Diagnostic:
    return Diagnostic(code=code, message=f"{code} at {line}", line=line, severity=severity)  # type: ignore[arg-type]


def test_the_first_of_each_code_are_kept_and_the_rest_counted() -> None:
    kept = DiagnosticList(3)
    kept.extend(diag("a", n) for n in range(1, 11))
    kept.append(diag("b", 11, "warning"))
    assert [(d.code, d.line) for d in kept] == [
        ("a", 1),
        ("a", 2),
        ("a", 3),
        ("diagnostics-dropped", 4),
        ("b", 11),
    ]
    mark = kept[3]
    assert mark.severity == "error"
    assert mark.message == (
        "7 more a diagnostics (lines 4 to 10) were counted, not kept: "
        "max_diagnostics=3 of each code"
    )
    assert dict(kept.dropped) == {"a": 7}


@given(
    st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from([None, 1, 2])), max_size=60),
    st.integers(1, 5),
)
def test_every_diagnostic_is_kept_or_counted_in_order(
    codes: list[tuple[str, int | None]], limit: int
) -> None:
    kept = DiagnosticList(limit)
    for code, line in codes:
        kept.append(diag(code, line))
    own = [d for d in kept if d.code != "diagnostics-dropped"]
    expected = []
    seen: dict[str, int] = {}
    for code, line in codes:
        seen[code] = seen.get(code, 0) + 1
        if seen[code] <= limit:
            expected.append(diag(code, line))
    assert own == expected  # the first of each code, in their order
    for code, count in seen.items():
        assert len([d for d in own if d.code == code]) + kept.dropped[code] == count
    marks = [d for d in kept if d.code == "diagnostics-dropped"]
    assert len(marks) == sum(count > limit for count in seen.values())


def test_a_replay_of_junk_keeps_a_bounded_number_of_diagnostics() -> None:
    result = replay_log(INIT + b"x\n" * 5000, max_diagnostics=100)
    codes = [d.code for d in result.diagnostics]
    assert codes.count("malformed-line") == 100
    assert result.dropped_diagnostics == {"malformed-line": 4900}
    snap = result.snapshot()["diagnostics"]
    (mark,) = [d for d in snap if d["code"] == "diagnostics-dropped"]
    assert mark["line"] == 102 and "4,900 more malformed-line" in mark["message"]
    assert result.ok


def _peak(lines: int) -> int:
    tracemalloc.start()
    try:
        replay_log(INIT + b"x\n" * lines, max_diagnostics=50)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_memory_of_diagnostics_does_not_grow_with_the_junk() -> None:
    # a chunk of the file (64 KiB) at a time is in flight: the peak is that, not the file
    assert _peak(100_000) < 1.3 * _peak(35_000)


def test_a_connection_counts_what_it_does_not_keep() -> None:
    conn = Connection(live=False, max_diagnostics=2)
    conn.receive_data(b"x\n" * 5)
    assert [d.code for d in conn.diagnostics] == [
        "malformed-line",
        "malformed-line",
        "diagnostics-dropped",
    ]
    assert isinstance(conn.diagnostics, DiagnosticList)
    assert conn.diagnostics.dropped["malformed-line"] == 3
