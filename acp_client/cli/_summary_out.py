r"""Writing summary rows (docs/summary.md): JSON Lines, CSV or Parquet, by the file's name.

JSON Lines keeps each row as :class:`~acp_client.SessionSummary` encodes it (the count maps
nested). CSV has one column per field in the Struct's order, with a header; a count map is
its compact JSON text in one cell (``{"end_turn":3}``), ``null`` an empty cell, booleans
``true``/``false``. Parquet (pyarrow, the ``parquet`` extra) has typed columns: the count
maps are ``map<string, int64>``, ``cost_amount`` a double.

Text that is not valid Unicode (a lone surrogate kept from a lenient read of the log) is
written as its escape: ``\ud800`` inside a JSON string (which reads back as the same text),
the six characters ``\ud800`` in CSV and Parquet, whose text must be UTF-8.

A CSV text cell (a session id, an agent's name, an error ...: text taken from the log or its
name) that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading
``'``, as OWASP recommends against CSV injection: a spreadsheet would run it as a formula
(``=HYPERLINK(...)``). Numbers and the count maps' JSON (``{...}``) are never changed.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable
from typing import IO, Any

import msgspec

from acp_client._summary import COUNT_FIELDS, SessionSummary

__all__ = ["FIELDS", "OUT_SUFFIXES", "out_kind", "write_rows"]

FIELDS: tuple[str, ...] = SessionSummary.__struct_fields__
#: The output files by name: what ``--out`` accepts.
OUT_SUFFIXES = {".jsonl": "jsonl", ".csv": "csv", ".parquet": "parquet"}

_encode = msgspec.json.Encoder().encode


def out_kind(name: str) -> str | None:
    """``jsonl``, ``csv`` or ``parquet`` for an output file's name; ``None``: unknown."""
    for suffix, kind in OUT_SUFFIXES.items():
        if name.lower().endswith(suffix):
            return kind
    return None


def write_rows(name: str, rows: Iterable[SessionSummary]) -> None:
    """Write ``rows`` to the file ``name`` in the format its suffix names."""
    kind = out_kind(name)
    if kind == "parquet":
        _write_parquet(name, list(rows))
        return
    with open(name, "w", encoding="utf-8", newline="") as out:
        if kind == "csv":
            _write_csv(out, rows)
        else:
            for row in rows:
                out.write(_json_line(row) + "\n")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _json_line(row: SessionSummary) -> str:
    try:
        return _encode(row).decode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: its JSON escape reads back the same
        text = json.dumps(msgspec.to_builtins(row), ensure_ascii=False, separators=(",", ":"))
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _text(value: str) -> str:
    r"""``value`` as valid UTF-8 text: a lone surrogate becomes its ``\uXXXX`` escape."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


#: What makes a spreadsheet take a cell for a formula (OWASP, CSV injection).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return _text(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    if isinstance(value, str):
        text = _text(value)  # from the log: never a formula (OWASP's leading quote)
        return "'" + text if text.startswith(_FORMULA_STARTS) else text
    return value


def _write_csv(out: IO[str], rows: Iterable[SessionSummary]) -> None:
    writer = csv.writer(out)
    writer.writerow(FIELDS)
    for row in rows:
        writer.writerow([_cell(getattr(row, field)) for field in FIELDS])


def _arrow_schema() -> Any:
    import pyarrow as pa

    counts = pa.map_(pa.string(), pa.int64())
    types = {
        bool: pa.bool_(),
        int: pa.int64(),
        float: pa.float64(),
        str: pa.string(),
    }
    fields = []
    for field in msgspec.structs.fields(SessionSummary):
        if field.name in COUNT_FIELDS:
            fields.append(pa.field(field.name, counts))
            continue
        args = getattr(field.type, "__args__", (field.type,))
        plain = [t for t in args if t is not type(None)]
        arrow = pa.float64() if float in plain else types[plain[0]]
        fields.append(pa.field(field.name, arrow))
    return pa.schema(fields)


def _write_parquet(name: str, rows: list[SessionSummary]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _arrow_schema()
    columns: dict[str, list[Any]] = {field: [] for field in FIELDS}
    for row in rows:
        for field in FIELDS:
            value = getattr(row, field)
            if field in COUNT_FIELDS:
                value = [(_text(key), count) for key, count in value.items()]
            elif isinstance(value, str):
                value = _text(value)
            columns[field].append(value)
    pq.write_table(pa.table(columns, schema=schema), name)
