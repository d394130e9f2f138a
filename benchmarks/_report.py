"""Figures and how they are printed: one line each, or JSON with ``--json``."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field
from typing import Any, TextIO


def size_label(n: int) -> str:
    """``10000`` -> ``10k``, ``1000000`` -> ``1M``, ``2500`` -> ``2.5k``."""
    for unit, scale in (("M", 1_000_000), ("k", 1_000)):
        if n >= scale:
            value = n / scale
            return f"{value:g}{unit}"
    return str(n)


def parse_size(text: str) -> int:
    """Inverse of :func:`size_label`; also accepts plain integers and ``1_000``."""
    t = text.strip().replace("_", "")
    scale = 1
    if t[-1:] in ("k", "K"):
        scale, t = 1_000, t[:-1]
    elif t[-1:] in ("m", "M"):
        scale, t = 1_000_000, t[:-1]
    value = int(float(t) * scale)
    if value < 1:
        raise ValueError(f"size must be positive: {text!r}")
    return value


@dataclass
class Figure:
    """One measured (or unavailable) figure."""

    name: str  # floor, decode, decode+reduce, scaling, memory, sdk, cli
    log: str  # e.g. "mixed 100k", "single 1M"
    value: float | None = None  # the judged number: a ratio (or seconds for the floor)
    unit: str = "ratio"
    target: float | None = None  # value must be <= target (>= with at_least)
    at_least: bool = False
    seconds: float | None = None
    updates: int | None = None
    bytes: int | None = None
    error: str | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str:
        """``OK``, ``OVER``, ``n/a`` (unavailable) or empty (no target)."""
        if self.error is not None:
            return "n/a"
        if self.target is None or self.value is None:
            return ""
        if self.at_least:
            return "OK" if self.value >= self.target else "UNDER"
        return "OK" if self.value <= self.target else "OVER"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, with derived rates and status."""
        d = asdict(self)
        d["status"] = self.status
        if self.seconds and self.updates:
            d["updates_per_s"] = self.updates / self.seconds
        if self.seconds and self.bytes:
            d["mb_per_s"] = self.bytes / self.seconds / 1e6
        return d


def _rate(f: Figure) -> str:
    parts = []
    if f.seconds is not None:
        parts.append(f"{f.seconds:9.4f} s")
    if f.seconds and f.updates:
        parts.append(f"{f.updates / f.seconds:12,.0f} updates/s")
    if f.seconds and f.bytes:
        parts.append(f"{f.bytes / f.seconds / 1e6:8.1f} MB/s")
    return "  ".join(parts)


def format_line(f: Figure) -> str:
    """The one-line human form of a figure."""
    head = f"{f.name:<14} {f.log:<12}"
    if f.error is not None:
        return f"{head} {f.error}"
    if f.name == "floor":
        return f"{head} {_rate(f)}  {f.note}".rstrip()
    value = "     -" if f.value is None else f"{f.value:6.2f}"
    label = {"ratio": "ratio", "x": "x log"}.get(f.unit, f.unit)
    sign = ">=" if f.at_least else "<="
    target = f"(target {sign} {f.target:.1f})" if f.target is not None else "(no target)"
    line = f"{head} {label} {value}  {target:<16} {f.status:<4}"
    rate = _rate(f)
    if rate:
        line += f"  {rate}"
    if f.note:
        line += f"  {f.note}"
    return line.rstrip()


class Reporter:
    """Prints figures as they come (text) or collects them for one JSON document."""

    def __init__(self, *, as_json: bool, out: TextIO = sys.stdout) -> None:
        self.as_json = as_json
        self.out = out
        self.figures: list[Figure] = []
        self.meta: dict[str, Any] = {}

    def info(self, text: str) -> None:
        """A header or note line: stdout in text mode, stderr in JSON mode."""
        stream = sys.stderr if self.as_json else self.out
        print(text, file=stream, flush=True)

    def add(self, figure: Figure) -> Figure:
        """Record a figure and print it (text mode)."""
        self.figures.append(figure)
        if not self.as_json:
            print(format_line(figure), file=self.out, flush=True)
        return figure

    def finish(self) -> None:
        """Emit the JSON document (JSON mode)."""
        if self.as_json:
            doc = {**self.meta, "figures": [f.to_dict() for f in self.figures]}
            json.dump(doc, self.out, indent=2)
            self.out.write("\n")
