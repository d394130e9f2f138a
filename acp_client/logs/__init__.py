"""Reading stored logs of ACP traffic (LOG-FORMATS.md).

:func:`read_log` turns a stored log (``jsonrpc``, ``acp-client``, ``capture``, ``python-sdk``,
``zed`` or ``conductor`` format, optionally gzip-compressed) into an ordered list of
:class:`LogRecord` values, each JSON-RPC message tagged with its direction as seen from the
client, plus :class:`~acp_client.Diagnostic` values for every problem found. :func:`iter_log`
does the same lazily; :class:`LogReader` is the sans-IO core (``feed`` bytes, ``close``).

Example::

    from acp_client.logs import read_log

    result = read_log("session.jsonl.gz")
    for record in result.records:
        if record.kind == "message":
            print(record.line, record.direction, record.message)
"""

from __future__ import annotations

from acp_client.logs._reader import LogReader
from acp_client.logs._records import FORMATS, FormatId, LogReadResult, LogRecord
from acp_client.logs._sides import METHOD_SIDES, RESULT_SIGNATURES
from acp_client.logs._source import LogIterator, LogSource, iter_log, read_log

__all__ = [
    "FORMATS",
    "METHOD_SIDES",
    "RESULT_SIGNATURES",
    "FormatId",
    "LogIterator",
    "LogReadResult",
    "LogReader",
    "LogRecord",
    "LogSource",
    "iter_log",
    "read_log",
]
