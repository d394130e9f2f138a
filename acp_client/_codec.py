"""Decoding and encoding of ACP v2 JSON-RPC messages.

Theory of operation
-------------------
The common case costs one typed msgspec pass: a ``session/update`` notification whose
payload is well-formed and carries no unknown field decodes straight into the Structs of
``_schema`` (decoders are built once, at import).

Anything else takes the lenient path: the line is parsed into plain Python values once,
the envelope is classified (ACP-V2-CLIENT-STATE.md section 1.2) and the params are
converted field by field, following the schema's annotations (section 13.5):

* ``D`` — a present value that does not decode becomes the field's default ("omitted",
  ``UNSET``; ``[]`` for a required array) and a ``lenient-default`` diagnostic names it;
* ``S`` — array items that do not decode are dropped, one ``skipped-invalid-item``
  diagnostic each;
* ``N`` — an explicit ``null`` becomes ``[]``;
* an unknown field is kept in ``Wire.extra``; an unknown variant of an open tagged union
  is kept as its raw ``dict``; a malformed *known* variant is an error, never demoted.

Errors are :class:`RemoteProtocolError` with the JSON path and the JSON-RPC code that fits
(-32700 parse error, -32600 invalid request, -32602 invalid params).
"""

from __future__ import annotations

import functools
import sys
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import msgspec
from msgspec import NODEFAULT, UNSET, UnsetType

from . import _schema as s
from ._diagnostics import Diagnostic
from ._errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, RemoteProtocolError
from ._lenient_json import decode_leniently

__all__ = [
    "Decoder",
    "NOTIFICATION_PARAMS",
    "REQUEST_PARAMS",
    "RESULT_TYPES",
    "convert",
    "encode",
    "to_builtins",
]

REQUEST_PARAMS: dict[str, type[Any]] = {
    "initialize": s.InitializeRequest,
    "auth/login": s.LoginAuthRequest,
    "auth/logout": s.LogoutAuthRequest,
    "session/new": s.NewSessionRequest,
    "session/resume": s.ResumeSessionRequest,
    "session/list": s.ListSessionsRequest,
    "session/close": s.CloseSessionRequest,
    "session/delete": s.DeleteSessionRequest,
    "session/prompt": s.PromptRequest,
    "session/set_config_option": s.SetSessionConfigOptionRequest,
    "tool_call/cancel": s.CancelToolCallRequest,
    "terminal/cancel": s.CancelTerminalRequest,
    "session/request_permission": s.RequestPermissionRequest,
}
"""Params Struct of every request method acp_client knows."""

NOTIFICATION_PARAMS: dict[str, type[Any]] = {
    "session/update": s.UpdateSessionNotification,
    "session/cancel": s.CancelSessionNotification,
    "$/cancel_request": s.CancelRequestNotification,
}
"""Params Struct of every notification method acp_client knows."""

RESULT_TYPES: dict[str, type[Any]] = {
    "initialize": s.InitializeResponse,
    "auth/login": s.LoginAuthResponse,
    "auth/logout": s.LogoutAuthResponse,
    "session/new": s.NewSessionResponse,
    "session/resume": s.ResumeSessionResponse,
    "session/list": s.ListSessionsResponse,
    "session/close": s.CloseSessionResponse,
    "session/delete": s.DeleteSessionResponse,
    "session/prompt": s.PromptResponse,
    "session/set_config_option": s.SetSessionConfigOptionResponse,
    "tool_call/cancel": s.CancelToolCallResponse,
    "terminal/cancel": s.CancelTerminalResponse,
    "session/request_permission": s.RequestPermissionResponse,
}
"""Result Struct of every request method acp_client knows."""

# Required keys of the "other" (unknown) variant of some open unions, per the schema.
_UNKNOWN_VARIANT_REQUIRED: dict[type[Any], tuple[str, ...]] = {
    s.PlanItems: ("planId",),
    s.SessionConfigSelect: ("configId", "name"),
    s.Command: ("name", "description"),
    s.AuthMethodAgent: ("methodId", "name"),
}
_KNOWN_STATES = s._KNOWN_STATES


class _Invalid(Exception):
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


class _Converter:
    """Converts parsed JSON to Structs, leniently where the schema says so."""

    __slots__ = ("diagnostics",)

    def __init__(self, diagnostics: list[Diagnostic] | None) -> None:
        self.diagnostics = diagnostics

    def note(self, code: str, path: str, message: str) -> None:
        if self.diagnostics is not None:
            self.diagnostics.append(
                Diagnostic(code=code, message=f"{message} at `{path}`", path=path)
            )

    def convert(self, value: Any, tp: Any, path: str, skip_items: bool = False) -> Any:
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
                        raise _Invalid(
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
                raise _Invalid(path, f"expected an array, got {describe_json(value)}")
            (item_type,) = get_args(tp)
            out = []
            for i, item in enumerate(value):
                item_path = f"{path}[{i}]"
                if skip_items:
                    try:
                        out.append(self.convert(item, item_type, item_path))
                    except _Invalid as exc:
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
                raise _Invalid(path, f"expected an object, got {describe_json(value)}")
            return value
        if tp is Any:
            return value
        if _is_struct(tp):
            if tp.__struct_config__.tag_field is not None:
                return self.tagged(value, [tp], path)
            return self.struct(value, tp, path)
        return _leaf(value, tp, path)

    def tagged(self, value: Any, classes: list[Any], path: str) -> Any:
        if not isinstance(value, dict):
            raise _Invalid(path, f"expected an object, got {describe_json(value)}")
        tag_field = classes[0].__struct_config__.tag_field
        tag = value.get(tag_field)
        if not isinstance(tag, str):
            raise _Invalid(f"{path}.{tag_field}", f"expected a string `{tag_field}`")
        for cls in classes:
            if cls.__struct_config__.tag == tag and cls is not s._UnmatchedType:
                return self.struct(value, cls, path)
        for key in _UNKNOWN_VARIANT_REQUIRED.get(classes[0], ()):
            if not isinstance(value.get(key), str):
                raise _Invalid(f"{path}.{key}", f"unknown `{tag}` variant without string `{key}`")
        return value  # an unknown or custom variant, kept raw

    def struct(self, value: Any, cls: Any, path: str) -> Any:
        if not isinstance(value, dict):
            raise _Invalid(path, f"expected an object, got {describe_json(value)}")
        fields, tag_field, _tag = _struct_info(cls)
        state = value.get("state") if cls is s.StateUpdate else None
        if cls is s.StateUpdate and not (isinstance(state, str) and state in _KNOWN_STATES):
            if not isinstance(state, str):
                raise _Invalid(f"{path}.state", "expected a string `state`")
            rest = {k: v for k, v in value.items() if k not in ("sessionUpdate", "state")}
            return s.StateUpdate(state=state, extra=rest) if rest else s.StateUpdate(state=state)
        kwargs: dict[str, Any] = {}
        known = {tag_field} if tag_field else set()
        raw_only = (
            _state_raw_fields(value)
            if cls is s.StateUpdate
            else _resource_raw_fields(value)
            if cls is s.ResourceContents
            else ()
        )
        moved: dict[str, Any] = {}
        for field in fields:
            known.add(field.wire)
            if field.wire not in value:
                if field.required:
                    raise _Invalid(f"{path}.{field.wire}", f"missing required field `{field.wire}`")
                continue
            raw = value[field.wire]
            field_path = f"{path}.{field.wire}"
            if raw is None and field.flags & s.N:
                kwargs[field.name] = []
                continue
            try:
                kwargs[field.name] = self.convert(raw, field.type, field_path)
            except _Invalid as exc:
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
            _EXTRAS.seen = True
        if cls is s.SessionConfigSelect and isinstance(kwargs.get("options"), list):
            kwargs["options"] = _select_options(self, kwargs["options"], f"{path}.options")
        try:
            return cls(**kwargs)
        except (ValueError, TypeError) as exc:
            raise _Invalid(path, str(exc)) from None


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
    conv: _Converter,
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


def _select_options(self: _Converter, options: list[Any], path: str) -> list[Any]:
    """A select's ``options``: flat options, or groups whose ``options`` are D+S (9.3)."""
    if options and s._is_option_group(options[0]):
        groups = []
        for i, group in enumerate(options):
            if not _check_keys(group, _SELECT_GROUP) or "options" not in group:
                raise _Invalid(f"{path}[{i}]", "malformed option group")
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
            raise _Invalid(f"{path}[{i}]", "malformed select option")
        out.append(_lenient_option(self, item, f"{path}[{i}]"))
    return out


class _ExtrasFlag:
    """Set once any unknown field was kept: only then must encoding spread ``extra``."""

    __slots__ = ("seen",)

    def __init__(self) -> None:
        self.seen = False


_EXTRAS = _ExtrasFlag()


def _is_compound(tp: Any) -> bool:
    origin = get_origin(tp)
    return origin in (list, dict, Union, types.UnionType) or _is_struct(tp)


def _leaf(value: Any, tp: Any, path: str) -> Any:
    try:
        result = msgspec.convert(value, tp, strict=True)
    except UnicodeEncodeError:  # msgspec cannot even quote a lone surrogate in its message
        raise _Invalid(path, "Invalid value: a string with an unpaired surrogate") from None
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
        raise _Invalid(path, str(exc).split(" - at ")[0]) from None
    return _in_range(result, tp, path)


def _in_range(result: Any, tp: Any, path: str) -> Any:
    """The top of the uint64 range, which msgspec's bounds cannot express."""
    if tp == s.UInt64 and result > s.UINT64_MAX:
        raise _Invalid(path, f"Expected `int` <= {s.UINT64_MAX}")
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
    try:
        return _Converter(diagnostics).convert(value, tp, path)
    except _Invalid as exc:
        raise RemoteProtocolError(exc.message, path=exc.path, code=INVALID_PARAMS) from None


class _FastUpdate(s.Notification, forbid_unknown_fields=True, kw_only=True):
    """A ``session/update`` notification decoded in one typed pass.

    Internal: :class:`Decoder` hands it out as a plain ``Notification`` (same fields), and
    the connection's hot path takes only its params.
    """

    jsonrpc: Literal["2.0"]
    method: Literal["session/update"]
    params: s.UpdateSessionNotification


_FAST = msgspec.json.Decoder(_FastUpdate)


_NOTIFICATION = s.Notification
_PLAIN = msgspec.json.Decoder()
_INT64 = (-(2**63), 2**63 - 1)


def _valid_id(value: object, *, response: bool) -> bool:
    if isinstance(value, str):
        return True
    if isinstance(value, int) and not isinstance(value, bool):
        return _INT64[0] <= value <= _INT64[1]
    return response and value is None


class Decoder:
    """Decodes newline-free JSON-RPC text into :mod:`acp_client.schema` Structs.

    Build one and reuse it: it holds no per-message state.

    >>> Decoder().decode(b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}')
    Notification(method='session/cancel', params=CancelSessionNotification(session_id='s'))
    """

    __slots__ = ()

    def decode(
        self, data: bytes | str, *, diagnostics: list[Diagnostic] | None = None
    ) -> s.Message | list[s.Message]:
        """Decode one JSON-RPC message or batch.

        Lenient recoveries are appended to ``diagnostics`` when a list is given.

        Raises:
            RemoteProtocolError: not JSON (-32700), not a JSON-RPC message (-32600), or
                params of a known method invalid where the schema is strict (-32602). For a
                batch, the first invalid element raises; use :meth:`decode_all` to keep the
                valid ones.
        """
        try:
            message: s.Notification = _FAST.decode(data)
        except _FAST_FAILED:  # UnicodeEncodeError: a str holding a lone surrogate
            pass
        else:
            message.__class__ = _NOTIFICATION  # the same fields: a plain Notification
            return message
        obj = _parse(data)
        if isinstance(obj, list):
            if not obj:
                raise RemoteProtocolError("empty batch", code=INVALID_REQUEST, raw=obj)
            out: list[s.Message] = []
            for i, item in enumerate(obj):
                out.append(message_from_builtins(item, diagnostics, f"$[{i}]"))
            return out
        return message_from_builtins(obj, diagnostics, "$")

    def decode_all(
        self, data: bytes | str, diagnostics: list[Diagnostic] | None = None
    ) -> list[s.Message | RemoteProtocolError]:
        """Decode one line into its messages; an invalid one is returned as its error.

        Never raises: a line that is not JSON gives a single -32700 error, an empty batch a
        single -32600 error, and each invalid element of a batch its own error.
        """
        try:
            message: s.Notification = _FAST.decode(data)
        except _FAST_FAILED:  # UnicodeEncodeError: a str holding a lone surrogate
            pass
        else:
            message.__class__ = _NOTIFICATION
            return [message]
        try:
            obj = _parse(data)
        except RemoteProtocolError as exc:
            return [exc]
        if isinstance(obj, list):
            if not obj:
                return [RemoteProtocolError("empty batch", code=INVALID_REQUEST, raw=obj)]
            items: list[tuple[Any, str]] = [(item, f"$[{i}]") for i, item in enumerate(obj)]
        else:
            items = [(obj, "$")]
        out: list[s.Message | RemoteProtocolError] = []
        for item, path in items:
            try:
                out.append(message_from_builtins(item, diagnostics, path))
            except RemoteProtocolError as exc:
                out.append(exc)
        return out

    def decode_result(
        self, method: str, result: Any, *, diagnostics: list[Diagnostic] | None = None
    ) -> Any:
        """Convert the raw ``result`` of a response to the Struct of ``method``'s result.

        Unknown methods give the raw value back.

        Raises:
            RemoteProtocolError: the result is invalid where the schema is strict.
        """
        tp = RESULT_TYPES.get(method)
        if tp is None:
            return result
        return convert(result, tp, path="$.result", diagnostics=diagnostics)


_FAST_FAILED = (msgspec.ValidationError, msgspec.DecodeError, RecursionError, UnicodeEncodeError)


def _parse(data: bytes | str) -> Any:
    try:
        return _PLAIN.decode(data)
    # RecursionError: nested too deep; UnicodeEncodeError: a str holding a lone surrogate
    except (msgspec.DecodeError, RecursionError, UnicodeEncodeError) as exc:
        error = exc
    try:  # valid JSON msgspec refuses: a lone surrogate escape, a number beyond a double
        return decode_leniently(data)
    except (ValueError, RecursionError):
        raise RemoteProtocolError(f"not valid JSON: {error}", code=PARSE_ERROR) from None


_OWN_KEYS: dict[type[Any], frozenset[str]] = {
    s.Request: frozenset({"jsonrpc", "id", "method", "params"}),
    s.Notification: frozenset({"jsonrpc", "method", "params"}),
    s.Response: frozenset({"jsonrpc", "id", "result"}),
    s.ErrorResponse: frozenset({"jsonrpc", "id", "error"}),
}


def message_from_builtins(
    obj: Any, diagnostics: list[Diagnostic] | None = None, path: str = "$"
) -> s.Message:
    """Classify one parsed JSON-RPC object and convert its params (section 1.2).

    Raises:
        RemoteProtocolError: with code -32600 (not a JSON-RPC message) or -32602 (invalid
            params of a known method); ``raw`` holds the object, ``request_id`` its id.
    """
    message = _message_from_builtins(obj, diagnostics, path)
    # The members of its own kind are typed; any other (a `result` on a request, `params`
    # on a response, `method: null`...) is an unknown field, kept and written back.
    own = _OWN_KEYS[type(message)]
    if isinstance(obj, dict) and len(obj) > len(own & obj.keys()):
        message.extra = {k: v for k, v in obj.items() if k not in own}
        _EXTRAS.seen = True
    return message


def _message_from_builtins(
    obj: Any, diagnostics: list[Diagnostic] | None = None, path: str = "$"
) -> s.Message:
    """Classify one parsed JSON-RPC object and convert its params (section 1.2).

    Raises:
        RemoteProtocolError: with code -32600 (not a JSON-RPC message) or -32602 (invalid
            params of a known method); ``raw`` holds the object, ``request_id`` its id.
    """
    if not isinstance(obj, dict):
        raise RemoteProtocolError(
            f"expected a JSON-RPC object, got {describe_json(obj)}",
            path=path,
            code=INVALID_REQUEST,
            raw=obj,
        )
    version = obj.get("jsonrpc", UNSET)
    if version is not UNSET and version != "2.0":
        raise RemoteProtocolError(
            '`jsonrpc` must be "2.0"', path=f"{path}.jsonrpc", code=INVALID_REQUEST, raw=obj
        )
    method = obj.get("method")
    if method is not None:
        if not isinstance(method, str):
            raise RemoteProtocolError(
                "`method` must be a string", path=f"{path}.method", code=INVALID_REQUEST, raw=obj
            )
        params = obj.get("params", UNSET)  # null kept: an unknown method's params are raw
        if "id" in obj:
            rid = obj["id"]
            if not _valid_id(rid, response=False):
                raise RemoteProtocolError(
                    "a request id must be a string or a 64-bit integer (no fraction or exponent)",
                    path=f"{path}.id",
                    code=INVALID_REQUEST,
                    raw=obj,
                )
            tp = REQUEST_PARAMS.get(method)
            typed = _params(params, tp, obj, rid, diagnostics, path)
            return s.Request(id=rid, method=method, params=typed)
        tp = NOTIFICATION_PARAMS.get(method)
        typed = _params(params, tp, obj, None, diagnostics, path)
        return s.Notification(method=method, params=typed)
    if "id" in obj:
        rid = obj["id"]
        # 1.2: `id: null` only on an error answering an unreadable request
        if not _valid_id(rid, response="result" not in obj):
            raise RemoteProtocolError(
                "invalid response id", path=f"{path}.id", code=INVALID_REQUEST, raw=obj
            )
        # Not a response at all (LOG-FORMATS 1.7, as a replay reads it): no request is named,
        # and the one it meant stays pending.
        has_result = "result" in obj
        if has_result == ("error" in obj):
            raise RemoteProtocolError(
                "a response needs exactly one of `result` and `error`",
                path=path,
                code=INVALID_REQUEST,
                raw=obj,
            )
        # A malformed error still names its request (``request_id``): a response is never
        # answered, and the connection settles the request it answers.
        if has_result:
            return s.Response(id=rid, result=obj["result"])
        try:
            error = _Converter(diagnostics).convert(obj["error"], s.Error, f"{path}.error")
        except _Invalid as exc:
            raise RemoteProtocolError(
                exc.message, path=exc.path, code=INVALID_REQUEST, raw=obj, request_id=rid
            ) from None
        return s.ErrorResponse(id=rid, error=error)
    raise RemoteProtocolError(
        "neither a request, a notification nor a response", path=path, code=INVALID_REQUEST, raw=obj
    )


def _params(
    params: Any,
    tp: type[Any] | None,
    obj: dict[str, Any],
    rid: int | str | None,
    diagnostics: list[Diagnostic] | None,
    path: str,
) -> Any:
    if tp is None:
        return params
    try:
        if params is UNSET or params is None:
            # omitted or null: valid when every field is optional; kept as sent (omitted,
            # null and a value stay three things, also for params)
            _Converter(diagnostics).convert({}, tp, f"{path}.params")
            return params
        return _Converter(diagnostics).convert(params, tp, f"{path}.params")
    except _Invalid as exc:
        raise RemoteProtocolError(
            exc.message, path=exc.path, code=INVALID_PARAMS, raw=obj, request_id=rid
        ) from None


# ------------------------------------------------------------------------- encoding

_ENCODER = msgspec.json.Encoder()
_EXTRA_MARK = b'"' + s.EXTRA_KEY.encode() + b'"'


def _walk(value: Any) -> Any:
    """Plain data for Structs, written field by field with ``extra`` spread in place.

    Raw values (dicts, lists, scalars) are left as they are: a key that merely looks like
    the extra holder inside ``_meta`` or an unknown variant is data.
    """
    if isinstance(value, msgspec.Struct):
        out: dict[str, Any] = {}
        config = value.__struct_config__
        if config.tag_field is not None:
            out[config.tag_field] = config.tag
        extra = None
        for info in msgspec.structs.fields(value):
            item = getattr(value, info.name)
            if item is UNSET:
                continue
            if info.name == "extra" and isinstance(value, s.Wire | s._Envelope):
                extra = item
                continue
            out[info.encode_name] = _walk(item)
        if extra:
            for key, item in extra.items():
                out.setdefault(key, item)
        return out
    if isinstance(value, list | tuple):
        return [_walk(item) for item in value]
    if isinstance(value, dict):
        return {key: _walk(item) for key, item in value.items()}
    return value


def _walk_deep(obj: Any) -> Any:
    """:func:`_walk`, also for values nested deeper than Python's recursion limit allows.

    The decoder takes JSON nested up to its parser's limit (about a thousand levels), so
    encoding what it accepted may recurse that deep: the limit is raised for that walk only.
    """
    try:
        return _walk(obj)
    except RecursionError:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20_000))
        try:
            return _walk(obj)
        finally:
            sys.setrecursionlimit(limit)


def to_builtins(obj: Any) -> Any:
    """Plain JSON-compatible Python data for a Struct (unknown fields written in place)."""
    if not _EXTRAS.seen:
        try:
            if _EXTRA_MARK not in _ENCODER.encode(obj):
                return msgspec.to_builtins(obj)
        except UnicodeEncodeError:
            return _walk_deep(obj)  # a lone surrogate (see ``encode``): no JSON to look into
        _EXTRAS.seen = True  # a Struct was built with ``extra`` by hand
    return _walk_deep(obj)


def encode(obj: Any) -> bytes:
    r"""Compact JSON for a message or any schema Struct, unknown fields written in place.

    A string holding a lone surrogate (JSON allows the escape ``\ud800``, and a lenient
    reader such as Python's ``json`` keeps it) is written back as that escape.
    """
    try:
        out = _ENCODER.encode(obj)
    except UnicodeEncodeError:
        import json

        return json.dumps(_walk_deep(obj), separators=(",", ":")).encode()
    if _EXTRA_MARK in out:
        out = _ENCODER.encode(_walk_deep(obj))
    return out


# ---- the connection's hot path (acp_client._inbound): the typed session/update decoders.
# One line holding one notification, and a read's lines joined as the items of one array.
decode_fast_update = _FAST.decode
decode_fast_updates = msgspec.json.Decoder(list[_FastUpdate]).decode
