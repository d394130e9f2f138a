"""Diagnostics: problems in the input that acp_client resolved or skipped.

A diagnostic never stops the process. ``severity`` is ``"warning"`` when the input broke
a rule but was applied by a documented resolution, ``"error"`` when it could not be
applied and was kept raw or skipped (SNAPSHOT.md, DIAGNOSTIC). ``code`` is a stable
kebab-case identifier; the README lists them all.

:class:`DiagnosticList` bounds what is kept (issue 26): the first ``max_diagnostics`` of each
code, and for the rest one ``diagnostics-dropped`` warning per code that counts them, so that
a million junk lines cost a bounded amount of memory and nothing is lost without a count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Literal

import msgspec

from ._arguments import checked_limit

__all__ = ["DEFAULT_MAX_DIAGNOSTICS", "Diagnostic", "DiagnosticList", "Severity"]

DEFAULT_MAX_DIAGNOSTICS = 1000
"""Diagnostics of one code kept (``max_diagnostics``); the later ones are only counted."""
DROPPED = "diagnostics-dropped"

Severity = Literal["warning", "error"]


class Diagnostic(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One problem found in the input.

    Attributes:
        code: stable kebab-case identifier, for example ``"chunk-invalid-base64"``.
        message: human-readable explanation, naming the field or JSON path.
        severity: ``"warning"`` (applied by a documented resolution) or ``"error"``
            (not applied: kept raw or skipped).
        line: 1-based line of the log that caused it; ``None`` outside log replay.
        path: JSON path of the offending value, when there is one.
        session_id: the session it concerns, when there is one.
    """

    code: str
    message: str
    severity: Severity = "warning"
    line: int | None = None
    path: str | None = None
    session_id: str | None = None

    def to_json(self) -> dict[str, object]:
        """The DIAGNOSTIC object of SNAPSHOT.md (``line`` absent when unknown)."""
        out: dict[str, object] = {}
        if self.line is not None:
            out["line"] = self.line
        out["severity"] = self.severity
        out["code"] = self.code
        out["message"] = self.message
        return out


class DiagnosticList(list[Diagnostic]):
    """A list of diagnostics that keeps the first ``limit`` of each code and counts the rest.

    The first diagnostic of a code past the limit is replaced by one ``diagnostics-dropped``
    (at its line, with its severity); every later one updates that one's count and last line.
    :attr:`dropped` counts them by code.
    """

    __slots__ = ("_kept", "_marks", "dropped", "limit")

    def __init__(self, limit: int = DEFAULT_MAX_DIAGNOSTICS, items: Iterable[Diagnostic] = ()):
        super().__init__()
        self.limit = checked_limit("max_diagnostics", limit, 1)
        self._kept: dict[str, int] = {}
        self._marks: dict[str, tuple[int, int | None, Severity]] = {}  # index, line, severity
        self.dropped: Counter[str] = Counter()
        self.extend(items)

    def append(self, diagnostic: Diagnostic) -> None:
        """Keep ``diagnostic``, or count it if its code has ``limit`` kept already."""
        code = diagnostic.code
        kept = self._kept.get(code, 0)
        if kept < self.limit or code == DROPPED:
            self._kept[code] = kept + 1
            super().append(diagnostic)
            return
        self.dropped[code] += 1
        count = self.dropped[code]
        line = diagnostic.line
        mark = self._marks.get(code)
        if mark is None:
            mark = self._marks[code] = (len(self), line, diagnostic.severity)
            super().append(diagnostic)  # its place, filled below
        index, first, severity = mark
        where = "" if line is None else f" (lines {first} to {line})"
        self[index] = Diagnostic(
            code=DROPPED,
            message=f"{count:,} more {code} diagnostics{where} were counted, not kept: "
            f"max_diagnostics={self.limit:,} of each code",
            severity=severity,  # that of the first one dropped
            line=first,
        )

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        """:meth:`append` each."""
        for diagnostic in diagnostics:
            self.append(diagnostic)

    def __iadd__(self, diagnostics: Iterable[Diagnostic]) -> DiagnosticList:  # type: ignore[override,misc]
        self.extend(diagnostics)
        return self
