"""Diagnostics: problems in the input that acp_client resolved or skipped.

A diagnostic never stops the process. ``severity`` is ``"warning"`` when the input broke
a rule but was applied by a documented resolution, ``"error"`` when it could not be
applied and was kept raw or skipped (SNAPSHOT.md, DIAGNOSTIC). ``code`` is a stable
kebab-case identifier; the README lists them all.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["Diagnostic", "Severity"]

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
