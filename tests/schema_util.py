"""The official ACP v2 JSON Schema, for the wire-layer tests.

The schema comes from the npm package the test setup installs
(``npm ci --prefix tests/peers``): ``tests/peers/node_modules/@agentclientprotocol/sdk/
schema/v2/schema.json``. When it is missing, tests that need it fail under CI (the ``CI``
environment variable is set) and are skipped otherwise.

Sub-schemas reference ``#/$defs/<Name>`` with the full ``$defs`` attached, and are validated
with ``jsonschema`` (Draft 2020-12). For generation with hypothesis-jsonschema the same
schemas are first inlined (references replaced, descriptions and ``x-`` annotations dropped,
integer ``format`` ranges such as ``int64`` turned into bounds) — the inlined form accepts
exactly the same instances but is far cheaper to generate from.
"""

from __future__ import annotations

import functools
import json
import os
import types
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, FormatChecker

SCHEMA_PATH = (
    Path(__file__).resolve().parent
    / "peers"
    / "node_modules"
    / "@agentclientprotocol"
    / "sdk"
    / "schema"
    / "v2"
    / "schema.json"
)

_INT_FORMATS = {
    "int8": (-(2**7), 2**7 - 1),
    "uint8": (0, 2**8 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint64": (0, 2**64 - 1),
}
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas"})
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples", "required"})


@functools.cache
def _load() -> dict[str, Any] | None:
    try:
        text = SCHEMA_PATH.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    schema: dict[str, Any] = json.loads(text)
    return schema


def official_schema() -> dict[str, Any]:
    """The whole official schema; fails (under CI) or skips the test when it is missing."""
    schema = _load()
    if schema is None:
        message = (
            f"official schema not installed ({SCHEMA_PATH}); run `npm ci --prefix tests/peers`"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return schema


def defs() -> dict[str, Any]:
    """The schema's ``$defs``."""
    result: dict[str, Any] = official_schema()["$defs"]
    return result


@functools.cache
def unstable_defs() -> dict[str, Any]:
    """The ``$defs`` of the official *unstable* v2 schema (the draft shapes the v2 Preview
    made stable or baseline are checked against it)."""
    official_schema()  # skips or fails the same way when the package is missing
    path = SCHEMA_PATH.with_name("schema.unstable.json")
    result: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))["$defs"]
    return result


def sub_schema(name: str) -> dict[str, Any]:
    """``#/$defs/<name>`` as a schema of its own (the full ``$defs`` attached)."""
    return {"$ref": f"#/$defs/{name}", "$defs": defs()}


def with_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (whose references point into ``#/$defs``) with the full ``$defs`` attached."""
    return {**schema, "$defs": defs()}


def _integer_formats() -> FormatChecker:
    checker = FormatChecker(formats=())
    for name, (low, high) in _INT_FORMATS.items():

        def check(value: object, low: int = low, high: int = high) -> bool:
            return not isinstance(value, int) or isinstance(value, bool) or low <= value <= high

        checker.checks(name)(check)
    return checker


FORMATS = _integer_formats()
"""Checks the integer formats (``int64``, ``uint16`` ...) that bound numbers; no other format."""


@functools.cache
def _validator_for_key(key: str) -> Draft202012Validator:
    schema = official_schema() if key == "" else sub_schema(key)
    return Draft202012Validator(schema, format_checker=FORMATS)


def validator(name: str | None = None) -> Draft202012Validator:
    """A Draft 2020-12 validator of ``#/$defs/<name>`` (the root schema when ``None``).

    Integer ``format`` ranges are checked (:data:`FORMATS`), other formats are not.
    """
    return _validator_for_key(name or "")


def validation_errors(instance: Any, name: str | None = None) -> list[str]:
    """Human-readable validation errors of ``instance`` (empty when it is valid)."""
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message[:300]}"
        for e in validator(name).iter_errors(instance)
    ]


def inline(schema: Any, stack: tuple[str, ...] = ()) -> Any:
    """``schema`` with every ``#/$defs`` reference replaced by its target (for generation)."""
    if isinstance(schema, list):
        return [inline(item, stack) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in stack:
            raise ValueError(f"recursive reference to {name}")
        target = inline(defs()[name], (*stack, name))
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        return {"allOf": [target, inline(rest, stack)]} if rest else target
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("description", "title", "$defs") or key.startswith("x-"):
            continue
        if key in _SCHEMA_MAPS:
            out[key] = {name: inline(sub, stack) for name, sub in value.items()}
        elif key in _DATA_KEYWORDS:
            out[key] = value
        else:
            out[key] = inline(value, stack)
    bounds = _INT_FORMATS.get(out.get("format", ""))
    if bounds is not None:
        out["minimum"] = max(out.get("minimum", bounds[0]), bounds[0])
        out["maximum"] = min(out.get("maximum", bounds[1]), bounds[1])
    return out


def _patch_hypothesis_jsonschema() -> None:
    """Make hypothesis-jsonschema 0.23 work with recent Hypothesis releases.

    hypothesis-jsonschema drives ``hypothesis.internal.conjecture.utils.many`` with the old
    ``while elements.more(): ...`` protocol; newer Hypothesis only offers the context-manager
    form. This adapter gives the old protocol on top of the new one (a no-op where ``more``
    still exists). It also memoises the strategy built for each sub-schema, which
    hypothesis-jsonschema otherwise rebuilds (canonicalising again) on every draw.
    """
    import hypothesis_jsonschema._from_schema as hjs
    from hypothesis.internal.conjecture import utils as cu

    if getattr(hjs, "_acp_patched", False):
        return
    if not hasattr(cu.many, "more"):
        end = object()

        class _OldMany:
            def __init__(
                self, data: Any, min_size: int, max_size: float, average_size: float
            ) -> None:
                self._many = cu.many(
                    data, min_size=min_size, max_size=max_size, average_size=average_size
                )
                self._many.__enter__()
                self._elements = iter(self._many)

            def more(self) -> bool:
                if next(self._elements, end) is end:
                    self._many.__exit__(None)
                    return False
                return True

            def reject(self, why: str | None = None) -> None:
                self._many.reject(why)

        hjs.cu = types.SimpleNamespace(many=_OldMany)  # type: ignore[assignment]

    memo: dict[tuple[str, int, bool], Any] = {}
    build = hjs.__dict__["__from_schema"]
    merge = hjs.merged_as_strategies

    def memo_build(schema: Any, *, alphabet: Any, custom_formats: Any) -> Any:
        key = ("b" + json.dumps(schema, sort_keys=True), id(alphabet), custom_formats is None)
        if key not in memo:
            memo[key] = build(schema, alphabet=alphabet, custom_formats=custom_formats)
        return memo[key]

    def memo_merge(schemas: Any, *, alphabet: Any, custom_formats: Any) -> Any:
        key = ("m" + json.dumps(schemas, sort_keys=True), id(alphabet), custom_formats is None)
        if key not in memo:
            memo[key] = merge(schemas, alphabet=alphabet, custom_formats=custom_formats)
        return memo[key]

    hjs.__dict__["__from_schema"] = memo_build
    hjs.merged_as_strategies = memo_merge  # type: ignore[assignment]
    hjs._acp_patched = True  # type: ignore[attr-defined]


_STRATEGIES: dict[str, st.SearchStrategy[Any]] = {}


def strategy(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Valid JSON instances of ``schema`` (references into ``#/$defs``).

    Generated with hypothesis-jsonschema from the inlined schema; cached per schema.
    """
    key = json.dumps(schema, sort_keys=True)
    if key not in _STRATEGIES:
        _patch_hypothesis_jsonschema()
        from hypothesis_jsonschema import from_schema

        _STRATEGIES[key] = from_schema(inline(schema))
    return _STRATEGIES[key]


def def_strategy(name: str) -> st.SearchStrategy[Any]:
    """Valid JSON instances of ``#/$defs/<name>``."""
    return strategy({"$ref": f"#/$defs/{name}"})


def json_equal(a: Any, b: Any) -> bool:
    """Equality of parsed JSON that also tells ``true`` from ``1`` and ``1`` from ``1.0``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
