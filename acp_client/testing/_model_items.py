"""The reference model's item decoding and patch rules, on plain dicts.

Owns: the small JSON type checks, the decoding of every item kind that lenient decoding
reads inside an update (content blocks, spec 5; tool call content, locations and
capabilities, 7.1 and 7.5-7.7; background items, 6.4; plan entries, commands and config
options, 9.1-9.3) and the patch rules (PATCH, META-PATCH and unknown fields, spec 0.4,
13.2-13.3). Part of :class:`~acp_client.testing.ReferenceModel`; nothing here is shared
with the real reducer.
"""

from __future__ import annotations

import base64
import binascii
import copy
from typing import Any, TypeGuard

_UINT64_MAX = 2**64 - 1

# ---------------------------------------------------------------------------------------
# Small type checks. JSON booleans are Python bools, which are also ints: exclude them.


def _is_str(v: Any) -> TypeGuard[str]:
    return isinstance(v, str)


def _is_int(v: Any) -> TypeGuard[int]:
    """An integer as JSON Schema says: ``1000.0`` is one too."""
    if isinstance(v, float):
        return v.is_integer()
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _is_obj(v: Any) -> TypeGuard[dict[str, Any]]:
    return isinstance(v, dict)


def _request_key(v: Any) -> tuple[str, Any] | None:
    """Request ids: a string never equals an integer (LOG-FORMATS 1.8); null pairs nothing."""
    if isinstance(v, str):
        return ("s", v)
    if type(v) is int:  # LOG-FORMATS 1.7: no fraction or exponent part (2.0 is no id)
        return ("i", v)
    return None


def _drop_bad(obj: dict[str, Any], key: str, ok: Any) -> None:
    """Default-on-error for an optional field inside an item: wrong type -> absent."""
    if key in obj and obj[key] is not None and not ok(obj[key]):
        del obj[key]


def _copy_if(v: object, *required: str) -> dict[str, Any] | None:
    """A copy of ``v`` when it is an object whose ``required`` fields are all strings."""
    if not _is_obj(v) or not all(_is_str(v.get(k)) for k in required):
        return None
    return dict(v)


def _optional(obj: dict[str, Any], *strings: str) -> dict[str, Any]:
    """Default-on-error for the optional string fields ``strings`` and ``_meta``; ``obj``."""
    for key in strings:
        _drop_bad(obj, key, _is_str)
    _drop_bad(obj, "_meta", _is_obj)
    return obj


def _string_list(obj: dict[str, Any], key: str) -> None:
    """A list of strings with the non-strings skipped; any other value -> absent."""
    if isinstance(obj.get(key), list):
        obj[key] = [s for s in obj[key] if _is_str(s)]
    else:
        _drop_bad(obj, key, lambda v: False)


# ---------------------------------------------------------------------------------------
# Item decoding (spec 5, 7.5-7.7, 6.4, 9.1-9.3). Each `_clean_*` returns the item as it
# is stored (default-on-error fields removed) or None when the item is invalid.


def _clean_list_of(value: Any, clean: Any) -> list[Any]:
    """Skip-invalid-items: keep the items that decode, in order (spec 13.5 S)."""
    out = []
    for item in value:
        cleaned = clean(item)
        if cleaned is not None:
            out.append(cleaned)
    return out


def _clean_annotations(a: dict[str, Any]) -> dict[str, Any]:
    a = dict(a)
    _string_list(a, "audience")
    _drop_bad(a, "priority", _is_number)
    return _optional(a, "lastModified")


def _clean_icon(i: object) -> dict[str, Any] | None:
    i = _copy_if(i, "src")
    if i is None:
        return None
    _string_list(i, "sizes")
    return _optional(i, "mimeType", "theme")


def clean_content_block(b: object) -> dict[str, Any] | None:
    """A ContentBlock as stored, or None if it is a malformed known block (spec 5)."""
    b = _copy_if(b, "type")
    if b is None:
        return None
    t = b["type"]
    if t == "text":
        if not _is_str(b.get("text")):
            return None
    elif t in ("image", "audio"):
        if not (_is_str(b.get("data")) and _is_str(b.get("mimeType"))):
            return None
        if t == "image":
            _drop_bad(b, "uri", _is_str)
    elif t == "resource_link":
        if not (_is_str(b.get("name")) and _is_str(b.get("uri"))):
            return None
        _optional(b, "title", "description", "mimeType")
        _drop_bad(b, "size", lambda v: _is_int(v) and 0 <= v <= _UINT64_MAX)
        if isinstance(b.get("icons"), list):
            b["icons"] = _clean_list_of(b["icons"], _clean_icon)
        else:
            _drop_bad(b, "icons", lambda v: False)
    elif t == "resource":
        r = _copy_if(b.get("resource"), "uri")
        if r is None or not (_is_str(r.get("text")) or _is_str(r.get("blob"))):
            return None
        b["resource"] = _optional(r, "mimeType")
    else:
        return b  # custom or future block: kept raw (spec 5, R4)
    if _is_obj(b.get("annotations")):
        b["annotations"] = _clean_annotations(b["annotations"])
    else:
        _drop_bad(b, "annotations", _is_obj)
    return _optional(b)


def _clean_diff_change(c: object) -> dict[str, Any] | None:
    c = _copy_if(c, "operation")
    if c is None:
        return None
    op = c["operation"]
    if op in ("add", "delete", "modify") and not _is_str(c.get("path")):
        return None
    if op in ("move", "copy") and not (_is_str(c.get("path")) and _is_str(c.get("oldPath"))):
        return None
    return _optional(c, "fileType", "mimeType")


def _valid_patch(p: Any) -> bool:
    return _copy_if(p, "format", "text") is not None


def clean_tool_call_content(item: object) -> dict[str, Any] | None:
    """A ToolCallContent item as stored, or None if malformed (spec 7.5, 7.6)."""
    item = _copy_if(item, "type")
    if item is None:
        return None
    t = item["type"]
    if t == "content":
        block = clean_content_block(item.get("content"))
        if block is None:
            return None
        item["content"] = block
    elif t == "diff":
        if not isinstance(item.get("changes"), list):
            return None  # `changes` is S only: it must be an array
        item["changes"] = _clean_list_of(item["changes"], _clean_diff_change)
        _drop_bad(item, "patch", _valid_patch)
    elif t == "terminal":
        if not _is_str(item.get("terminalId")):
            return None
    else:
        return item  # custom or future item: raw
    return _optional(item)


def _clean_location(loc: object) -> dict[str, Any] | None:
    loc = _copy_if(loc, "path")
    if loc is None:
        return None
    # Spec 7.7: `line` is 1-based; 0 or a wrong type decodes as absent.
    _drop_bad(loc, "line", lambda v: _is_int(v) and v >= 1)
    return _optional(loc)


def _valid_background_item(i: Any) -> bool:
    if not _is_obj(i) or not _is_str(i.get("type")):
        return False
    if i["type"] == "terminal":
        return _is_str(i.get("terminalId"))
    if i["type"] == "tool_call":
        return _is_str(i.get("toolCallId"))
    return True  # unknown kind: raw, still running work (spec 6.4)


def _clean_plan_entry(e: object) -> dict[str, Any] | None:
    e = _copy_if(e, "content", "priority", "status")
    return None if e is None else _optional(e)


def _clean_command(c: object) -> dict[str, Any] | None:
    # Spec 9.2: `type`, `name` and `description` are required for every kind (R61).
    c = _copy_if(c, "type", "name", "description")
    if c is None or c["type"] != "command":
        return c

    def input_ok(v: Any) -> bool:
        if not _is_obj(v) or not _is_str(v.get("type")):
            return False
        return v["type"] != "text" or _is_str(v.get("hint"))

    _drop_bad(c, "input", input_ok)
    return _optional(c)


def _clean_select_option(o: object) -> dict[str, Any] | None:
    o = _copy_if(o, "value", "name")
    return None if o is None else _optional(o, "description")


def _clean_select_group(g: object) -> dict[str, Any] | None:
    g = _copy_if(g, "groupId", "name")
    if g is None:
        return None
    opts = g.get("options")
    g["options"] = _clean_list_of(opts, _clean_select_option) if isinstance(opts, list) else []
    return _optional(g)


def _clean_config_option(o: object) -> dict[str, Any] | None:
    o = _copy_if(o, "configId", "name", "type")
    if o is None:
        return None
    if o["type"] == "select":
        opts = o.get("options")
        if not _is_str(o.get("currentValue")) or not isinstance(opts, list) or not opts:
            return None
        flat = [_clean_select_option(x) for x in opts]
        if all(x is not None for x in flat):
            o["options"] = flat
        else:
            groups = [_clean_select_group(x) for x in opts]
            if not all(x is not None for x in groups):
                return None  # neither shape (spec 9.3)
            o["options"] = groups
    elif o["type"] == "boolean":
        if not isinstance(o.get("currentValue"), bool):
            return None
    else:
        return o  # unknown type: raw
    return _optional(o, "description", "category")


def _valid_error(e: Any) -> bool:
    return _is_obj(e) and _is_int(e.get("code")) and _is_str(e.get("message"))


def _decode_b64(data: str) -> bytes | None:
    body = data.rstrip("=")
    if len(data) % 4 or len(data) - len(body) > 2:
        return None  # RFC 4648: whole quanta, at most two `=` (Python accepts more)
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _clean_capabilities(c: dict[str, Any]) -> dict[str, Any]:
    # Spec 7.1 / R55: a malformed `cancel` advertises nothing (D inside the object).
    c = dict(c)
    _drop_bad(c, "cancel", _is_obj)
    return _optional(c)


# ---------------------------------------------------------------------------------------
# The patch rules (spec 0.4).


def meta_patch(stored: dict[str, Any] | None, value: Any) -> dict[str, Any] | None:
    """META-PATCH of a present `_meta` value (spec 0.4, 13.3); returns the new stored value."""
    if value is None:
        return None
    if not _is_obj(value):
        return stored  # non-object `_meta` decodes as omitted (13.3)
    new = dict(stored or {})
    for k, v in value.items():
        if v is None:
            new.pop(k, None)
        else:
            new[k] = v  # whole value, no nested merge
    return new or None


def _patch_field(entity: dict[str, Any], update: dict[str, Any], key: str, ok: Any) -> None:
    """PATCH one three-state field: omitted keeps, null clears, a value replaces.

    A wrong-typed value is treated as omitted (default-on-error, spec 7.1 "lenient").
    """
    if key not in update:
        return
    v = update[key]
    if v is None:
        entity.pop(key, None)
    elif ok(v):
        entity[key] = copy.deepcopy(v)


def _patch_meta(entity: dict[str, Any], update: dict[str, Any]) -> None:
    if "_meta" in update:
        new = meta_patch(entity.get("_meta"), update["_meta"])
        if new is None:
            entity.pop("_meta", None)
        else:
            entity["_meta"] = new


def _patch_extras(extra: dict[str, Any], update: dict[str, Any], known: frozenset[str]) -> None:
    """Unknown top-level fields: kept on the entity with the PATCH rule (spec 13.2)."""
    for k, v in update.items():
        if k in known:
            continue
        if v is None:
            extra.pop(k, None)
        else:
            extra[k] = copy.deepcopy(v)


def _patch_list(entity: dict[str, Any], update: dict[str, Any], key: str, clean: Any) -> None:
    """A list field (D+S): null clears, an array replaces with its valid items, else omitted."""
    if key in update:
        v = update[key]
        if v is None:
            entity[key] = []
        elif isinstance(v, list):
            entity[key] = _clean_list_of(v, clean)


def _patch_capabilities(entity: dict[str, Any], update: dict[str, Any]) -> None:
    """PATCH of ``capabilities``; inside it, a malformed ``cancel`` is dropped (spec 7.1)."""
    if "capabilities" in update:
        v = update["capabilities"]
        if v is None:
            entity.pop("capabilities", None)
        elif _is_obj(v):
            entity["capabilities"] = _clean_capabilities(copy.deepcopy(v))
