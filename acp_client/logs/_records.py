"""What the stored-log reader produces: records, the read result, the format ids.

Implements the record shape of LOG-FORMATS.md section 1.6 and the code/severity table of
section 8.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec

from acp_client._diagnostics import Diagnostic, Severity

__all__ = [
    "CODES",
    "FATAL_CODES",
    "FORMATS",
    "Clock",
    "FormatId",
    "LogReadResult",
    "LogRecord",
    "RecordDirection",
]

FormatId: TypeAlias = Literal["jsonrpc", "acp-client", "capture", "python-sdk", "zed", "conductor"]
RecordDirection: TypeAlias = Literal["incoming", "outgoing", "unknown"]
Clock: TypeAlias = Literal["epoch", "relative"]

FORMATS: tuple[FormatId, ...] = (
    "jsonrpc",
    "acp-client",
    "capture",
    "python-sdk",
    "zed",
    "conductor",
)
"""Every format id the reader knows (LOG-FORMATS.md section 0), in documentation order."""

CODES: dict[str, Severity] = {
    "unsupported-compression": "error",
    "gzip-error": "error",
    "decompressed-too-large": "error",
    "runaway-line": "error",
    "document-too-large": "error",
    "no-format-detected": "error",
    "line-too-long": "error",
    "malformed-document": "error",
    "empty-input": "warning",
    "malformed-line": "error",
    "truncated-final-line": "warning",
    "number-beyond-double": "warning",
    "malformed-record": "error",
    "format-mismatch": "error",
    "invalid-jsonrpc": "error",
    "missing-jsonrpc-version": "warning",
    "empty-batch": "warning",
    "bad-time": "warning",
    "agent-non-json-output": "warning",
    "unknown-direction": "warning",
    "ambiguous-direction": "warning",
    "ambiguous-response": "warning",
    "batch-direction-conflict": "warning",
    "duplicate-request-id": "warning",
    "response-before-request": "warning",
    "orphan-response": "warning",
    "perspective-swapped": "warning",
    "direction-mismatch": "warning",
    "zed-unknown-type": "warning",
}
"""Every diagnostic code of LOG-FORMATS.md section 8 with its severity."""

FATAL_CODES = frozenset(
    {
        "unsupported-compression",
        "gzip-error",
        "decompressed-too-large",
        "runaway-line",
        "document-too-large",
        "no-format-detected",
    }
)
"""Codes that end reading in every mode."""


class LogRecord(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One record read from a stored log (LOG-FORMATS.md section 1.6).

    Attributes:
        kind: ``"message"`` (a JSON-RPC message) or ``"stderr"`` (a piece of Agent stderr).
        direction: seen from the client: ``"incoming"`` (Agent -> client), ``"outgoing"``
            (client -> Agent) or ``"unknown"`` (must not be applied as either side);
            ``None`` for stderr records.
        message: exactly one JSON-RPC object, as a plain dict exactly as in the file (the
            ``zed`` and ``conductor`` readers rebuild it with ``"jsonrpc": "2.0"``);
            ``None`` for stderr records.
        text: the stderr text, verbatim (may hold control sequences: sanitise before
            display); ``None`` for message records.
        line: 1-based line where the record (or the batch holding the message) starts.
        batch: ``(index, size)`` for a message taken from a batch array, else ``None``.
        time: seconds when the format has a clock, else ``None``.
        clock: ``"epoch"`` or ``"relative"`` when ``time`` is set, else ``None``.
        format: the format id of the file.
        origin: format-specific provenance (Zed's ``_type`` and ``method`` label, the
            conductor's ``from``/``to``, the original method name when it was renamed).
    """

    kind: Literal["message", "stderr"]
    line: int
    format: FormatId
    direction: RecordDirection | None = None
    message: dict[str, Any] | None = None
    text: str | None = None
    batch: tuple[int, int] | None = None
    time: float | None = None
    clock: Clock | None = None
    origin: dict[str, Any] | None = None


class LogReadResult(msgspec.Struct, kw_only=True):
    """Everything :func:`read_log` read from one log.

    Attributes:
        records: the records, in file order (except LOG-FORMATS.md 1.10's reordering).
        diagnostics: every problem found, in the order it was found.
        format: the detected (or given) format id; ``None`` when none was detected.
        fatal: reading ended on a fatal error (one of :data:`FATAL_CODES`).
        stopped_early: strict mode stopped reading at the first error diagnostic.
    """

    records: list[LogRecord]
    diagnostics: list[Diagnostic]
    format: FormatId | None = None
    fatal: bool = False
    stopped_early: bool = False
