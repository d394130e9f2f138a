"""Lenient conversion of parsed JSON to the schema's Structs (ACP-V2-CLIENT-STATE.md 13.5).

Owns the annotation-driven recovery: :class:`Converter` walks a value and the schema's type
together, salvaging what the schema allows and refusing the rest.

* ``D`` — a present value that does not decode becomes the field's default ("omitted",
  ``UNSET``; ``[]`` for a required array) and a ``lenient-default`` diagnostic names it;
* ``S`` — array items that do not decode are dropped, one ``skipped-invalid-item``
  diagnostic each;
* ``N`` — an explicit ``null`` becomes ``[]``;
* an unknown field is kept in ``Wire.extra`` (and :data:`EXTRAS` notes that one was); an
  unknown variant of an open tagged union is kept as its raw ``dict``; a malformed *known*
  variant is an error, never demoted.

A value invalid where the schema is strict raises :class:`Invalid` (its JSON path and a
message); :func:`convert` turns that into a :class:`RemoteProtocolError` (-32602). Text is
decoded elsewhere (:mod:`acp_client._codec`): this module sees only parsed values.
"""

from __future__ import annotations

import functools
import types
from typing import Annotated, Any, Union, get_args, get_origin

import msgspec
from msgspec import NODEFAULT, UnsetType

from . import _schema as s
from ._diagnostics import Diagnostic
from ._errors import INVALID_PARAMS, RemoteProtocolError

__all__ = ["EXTRAS", "Converter", "Invalid", "convert", "convert_or_raise", "describe_json"]

_UNKNOWN_VARIANT_REQUIRED: dict[type[Any], tuple[str, ...]] = {
    s.PlanItems: ("planId",),
    s.SessionConfigSelect: ("configId", "name"),
    s.Command: ("name", "description"),
    s.AuthMethodAgent: ("methodId", "name"),
}
_BLOCK_UNIONS = frozenset({s.TextContent, s.Content})
_STATE_CLASSES = frozenset({s.StateSnapshot, s.StateUpdate, s.UnknownStateUpdate})


class Invalid(Exception):
    """A value invalid where the schema is strict: its JSON ``path`` and a ``message``."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def describe_json(value: object) -> str:
    """A JSON value's type in words ("a string", "an array", ...), for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _empty_on_error(tp: Any) -> bool:
    """D on an array that cannot be ``null`` defaults to ``[]`` (13.5), not "omitted"."""
    if get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    args = get_args(tp) if get_origin(tp) in (Union, types.UnionType) else (tp,)
    if type(None) in args:
        return False
    return any(get_origin(a) is list for a in args)


class _Field:
    __slots__ = ("default", "empty", "flags", "name", "required", "type", "wire")

    def __init__(self, info: msgspec.structs.FieldInfo) -> None:
        self.name = info.name
        self.wire = info.encode_name
        self.required = info.default is NODEFAULT and info.default_factory is NODEFAULT
        self.default = info.default
        self.flags = s.Lenient(0)
        tp = info.type
        if get_origin(tp) is Annotated:
            for meta in get_args(tp)[1:]:
                if isinstance(meta, s.Lenient):
                    self.flags |= meta
        self.type = tp
        self.empty = bool(self.flags & s.D) and _empty_on_error(tp)


_FIELDS: dict[type[Any], tuple[tuple[_Field, ...], str | None, Any]] = {}


def _struct_info(cls: type[Any]) -> tuple[tuple[_Field, ...], str | None, Any]:
    info = _FIELDS.get(cls)
    if info is None:
        fields = tuple(_Field(f) for f in msgspec.structs.fields(cls) if f.name != "extra")
        config = cls.__struct_config__
        info = (fields, config.tag_field, config.tag)
        _FIELDS[cls] = info
    return info


def _is_struct(tp: object) -> bool:
    return isinstance(tp, type) and issubclass(tp, msgspec.Struct)


@functools.cache
def _union_parts(tp: Any) -> tuple[bool, tuple[Any, ...], bool]:
    """A union type's: whether it holds ``None``, its other members, whether all are Structs."""
    args = get_args(tp)
    rest = tuple(a for a in args if a is not type(None) and a is not UnsetType)
    return type(None) in args, rest, all(_is_struct(a) for a in rest)


class Converter:
    """Converts parsed JSON to Structs, leniently where the schema says so."""

    __slots__ = ("diagnostics",)

    def __init__(self, diagnostics: list[Diagnostic] | None) -> None:
        self.diagnostics = diagnostics

    def note(self, code: str, path: str, message: str) -> None:
        """Record a recovery at ``path`` (when diagnostics are collected)."""
        if self.diagnostics is not None:
            self.diagnostics.append(
                Diagnostic(code=code, message=f"{message} at `{path}`", path=path)
            )

    def convert(self, value: Any, tp: Any, path: str, skip_items: bool = False) -> Any:
        """``value`` as ``tp``; ``skip_items``: drop array items that do not convert (S)."""
        origin = get_origin(tp)
        if origin is Annotated:
            base, *metas = get_args(tp)
            flags = s.Lenient(0)
            constraints = False
            for meta in metas:
                if isinstance(meta, s.Lenient):
                    flags |= meta
                elif isinstance(meta, msgspec.Meta):
                    constraints = True
            if constraints and not _is_compound(base):
                return _leaf(value, tp, path)
            result = self.convert(value, base, path, skip_items or bool(flags & s.S))
            if constraints:
                for meta in metas:
                    if (
                        isinstance(meta, msgspec.Meta)
                        and meta.min_length is not None
                        and len(result) < meta.min_length
                    ):
                        raise Invalid(
                            path,
                            f"expected at least {meta.min_length} item(s), got {len(result)}",
                        )
            return result
        if origin is Union or origin is types.UnionType:
            nullable, rest, structs = _union_parts(tp)
            if value is None and nullable:
                return None
            if len(rest) == 1:
                return self.convert(value, rest[0], path, skip_items)
            if structs:
                return self.tagged(value, list(rest), path)
            return _leaf(value, Union[rest], path)  # noqa: UP007
        if origin is list:
            if not isinstance(value, list):
                raise Invalid(path, f"expected an array, got {describe_json(value)}")
            (item_type,) = get_args(tp)
            out = []
            for i, item in enumerate(value):
                item_path = f"{path}[{i}]"
                if skip_items:
                    try:
                        out.append(self.convert(item, item_type, item_path))
                    except Invalid as exc:
                        self.note(
                            "skipped-invalid-item",
                            exc.path,
                            f"dropped invalid item {item_path}: {exc.message}",
                        )
                else:
                    out.append(self.convert(item, item_type, item_path))
            return out
        if origin is dict:
            if not isinstance(value, dict):
                raise Invalid(path, f"expected an object, got {describe_json(value)}")
            return value
        if tp is Any:
            return value
        if _is_struct(tp):
            if tp.__struct_config__.tag_field is not None:
                return self.tagged(value, [tp], path)
            return self.struct(value, tp, path)
        return _leaf(value, tp, path)

    def tagged(self, value: Any, classes: list[Any], path: str) -> Any:
        """The variant of ``classes`` its tag names; an unknown variant kept raw."""
        if not isinstance(value, dict):
            raise Invalid(path, f"expected an object, got {describe_json(value)}")
        tag_field = classes[0].__struct_config__.tag_field
        tag = value.get(tag_field)
        if not isinstance(tag, str):
            raise Invalid(f"{path}.{tag_field}", f"expected a string `{tag_field}`")
        for cls in classes:
            if cls.__struct_config__.tag == tag and cls is not s._UnmatchedType:
                return self.struct(value, cls, path)
        for key in _UNKNOWN_VARIANT_REQUIRED.get(classes[0], ()):
            if not isinstance(value.get(key), str):
                raise Invalid(f"{path}.{key}", f"unknown `{tag}` variant without string `{key}`")
        if classes[0] in _BLOCK_UNIONS:  # a content block or item: its `.type` works too
            return s.UnknownContentBlock(value)
        return value  # an unknown or custom variant, kept raw

    def struct(self, value: Any, cls: Any, path: str) -> Any:
        """``value`` as the Struct ``cls``, field by field, unknown fields kept in ``extra``."""
        if not isinstance(value, dict):
            raise Invalid(path, f"expected an object, got {describe_json(value)}")
        fields, tag_field, _tag = _struct_info(cls)
        is_state = cls in _STATE_CLASSES
        state = value.get("state") if is_state else None
        if is_state and not (isinstance(state, str) and state in cls.known_states):
            if not isinstance(state, str):
                raise Invalid(f"{path}.state", "expected a string `state`")
            if cls is s.UnknownStateUpdate:
                raise Invalid(f"{path}.state", 'expected `"unknown"`')
            rest = {k: v for k, v in value.items() if k not in ("sessionUpdate", "state")}
            return cls(state=state, extra=rest) if rest else cls(state=state)
        kwargs: dict[str, Any] = {}
        known = {tag_field} if tag_field else set()
        raw_only = (
            _state_raw_fields(value)
            if is_state
            else _resource_raw_fields(value)
            if cls is s.ResourceContents
            else ()
        )
        moved: dict[str, Any] = {}
        for field in fields:
            known.add(field.wire)
            if field.wire not in value:
                if field.required:
                    raise Invalid(f"{path}.{field.wire}", f"missing required field `{field.wire}`")
                continue
            raw = value[field.wire]
            field_path = f"{path}.{field.wire}"
            if raw is None and field.flags & s.N:
                kwargs[field.name] = []
                continue
            try:
                kwargs[field.name] = self.convert(raw, field.type, field_path)
            except Invalid as exc:
                if field.wire in raw_only:
                    # Not a field of this state's variant: an unknown field, kept raw (R13).
                    moved[field.wire] = raw
                    continue
                if not field.flags & s.D:
                    raise
                if field.empty:
                    kwargs[field.name] = []
                self.note(
                    "lenient-default",
                    exc.path,
                    f"ignored invalid `{field.wire}` ({exc.message})",
                )
        extra = {k: v for k, v in value.items() if k not in known or k in moved}
        if extra:
            kwargs["extra"] = extra
            EXTRAS.seen = True
        if cls is s.SessionConfigSelect and isinstance(kwargs.get("options"), list):
            kwargs["options"] = _select_options(self, kwargs["options"], f"{path}.options")
        try:
            return cls(**kwargs)
        except (ValueError, TypeError) as exc:
            raise Invalid(path, str(exc)) from None


def _state_raw_fields(value: dict[str, Any]) -> tuple[str, ...]:
    """The flattened ``StateUpdate`` fields that this state's schema variant does not have.

    ``stopReason`` belongs to ``idle`` and ``error`` to the ``error`` stop reason; anywhere
    else they are unknown fields with no meaning (R13): a value that fits the field is stored
    there (as the typed decoder does), any other is kept raw, never dropped as invalid.
    """
    if value.get("state") != "idle":
        return ("stopReason", "error")
    if value.get("stopReason") != "error":
        return ("error",)
    return ()


def _resource_raw_fields(value: dict[str, Any]) -> tuple[str, ...]:
    """The ``ResourceContents`` member that the schema variant the contents match lacks.

    A string ``text`` makes them ``TextResourceContents``, a string ``blob``
    ``BlobResourceContents`` (schema: ``anyOf``, extra members allowed): the other member,
    when it is no string (``"blob": null``, say), is an unknown field kept raw.
    """
    if isinstance(value.get("text"), str):
        return ("blob",)
    if isinstance(value.get("blob"), str):
        return ("text",)
    return ()


_SELECT_OPTION = {"value": str, "name": str}
_SELECT_GROUP = {"groupId": str, "name": str}


def _check_keys(item: Any, required: dict[str, type[Any]]) -> bool:
    return isinstance(item, dict) and all(
        isinstance(item.get(key), kind) for key, kind in required.items()
    )


def _lenient_option(
    conv: Converter,
    item: dict[str, Any],
    path: str,
    keys: tuple[str, ...] = ("description", "_meta"),
) -> dict[str, Any]:
    """``item`` without its invalid lenient ``keys`` (a group has no ``description``)."""
    out = dict(item)
    for key in keys:
        if key in out and out[key] is not None:
            ok = isinstance(out[key], str) if key == "description" else isinstance(out[key], dict)
            if not ok:
                del out[key]
                conv.note("lenient-default", f"{path}.{key}", f"ignored invalid `{key}`")
    return out


def _select_options(self: Converter, options: list[Any], path: str) -> list[Any]:
    """A select's ``options``: flat options, or groups whose ``options`` are D+S (9.3)."""
    if options and s._is_option_group(options[0]):
        groups = []
        for i, group in enumerate(options):
            if not _check_keys(group, _SELECT_GROUP) or "options" not in group:
                raise Invalid(f"{path}[{i}]", "malformed option group")
            inner = group["options"]
            if not isinstance(inner, list):
                self.note("lenient-default", f"{path}[{i}].options", "ignored invalid `options`")
                inner = []
            kept = []
            for j, item in enumerate(inner):
                if _check_keys(item, _SELECT_OPTION):
                    kept.append(_lenient_option(self, item, f"{path}[{i}].options[{j}]"))
                else:
                    self.note(
                        "skipped-invalid-item",
                        f"{path}[{i}].options[{j}]",
                        f"dropped invalid item {path}[{i}].options[{j}]",
                    )
            groups.append(
                _lenient_option(self, {**group, "options": kept}, f"{path}[{i}]", ("_meta",))
            )
        return groups
    out = []
    for i, item in enumerate(options):
        if not _check_keys(item, _SELECT_OPTION):
            raise Invalid(f"{path}[{i}]", "malformed select option")
        out.append(_lenient_option(self, item, f"{path}[{i}]"))
    return out


class _ExtrasFlag:
    """Set once any unknown field was kept: only then must encoding spread ``extra``."""

    __slots__ = ("seen",)

    def __init__(self) -> None:
        self.seen = False


EXTRAS = _ExtrasFlag()


def _is_compound(tp: Any) -> bool:
    origin = get_origin(tp)
    return origin in (list, dict, Union, types.UnionType) or _is_struct(tp)


def _leaf(value: Any, tp: Any, path: str) -> Any:
    try:
        result = msgspec.convert(value, tp, strict=True)
    except UnicodeEncodeError:  # msgspec cannot even quote a lone surrogate in its message
        raise Invalid(path, "Invalid value: a string with an unpaired surrogate") from None
    except msgspec.ValidationError as exc:
        # A request id keeps its spelling rule (1.2: no fraction or exponent part), as the
        # envelope's `id` does; every other integer takes a whole-number float.
        whole = value if tp == s.RequestId else _integral(value)
        if whole is not value:
            try:
                result = msgspec.convert(whole, tp, strict=True)
            except msgspec.ValidationError:
                pass
            else:
                return _in_range(result, tp, path)
        raise Invalid(path, str(exc).split(" - at ")[0]) from None
    return _in_range(result, tp, path)


def _in_range(result: Any, tp: Any, path: str) -> Any:
    """The top of the uint64 range, which msgspec's bounds cannot express."""
    if tp == s.UInt64 and result > s.UINT64_MAX:
        raise Invalid(path, f"Expected `int` <= {s.UINT64_MAX}")
    return result


def _integral(value: Any) -> Any:
    """A whole-number float as the integer it is; any other value as it is.

    JSON Schema's ``integer`` holds ``1000.0``, and the official SDK accepts it.
    """
    if type(value) is float and value.is_integer():
        return int(value)
    return value


def convert(
    value: Any, tp: Any, *, path: str = "$", diagnostics: list[Diagnostic] | None = None
) -> Any:
    """Convert parsed JSON to ``tp`` with the schema's lenient rules.

    Raises:
        RemoteProtocolError: the value is invalid where the schema is strict (code -32602).
    """
    return convert_or_raise(value, tp, path, diagnostics)


def convert_or_raise(
    value: Any,
    tp: Any,
    path: str,
    diagnostics: list[Diagnostic] | None,
    code: int = INVALID_PARAMS,
    raw: object = None,
    request_id: int | str | None = None,
) -> Any:
    """:func:`convert`; its error carries ``code``, ``raw`` and ``request_id``."""
    try:
        return Converter(diagnostics).convert(value, tp, path)
    except Invalid as exc:
        raise RemoteProtocolError(
            exc.message, path=exc.path, code=code, raw=raw, request_id=request_id
        ) from None
