"""The patch rules, in one place (ACP-V2-CLIENT-STATE.md sections 0.4 and 13.3).

* PATCH: omitted (``UNSET``) keeps the stored value, ``null`` clears it, a value replaces
  it whole.
* META-PATCH: for the top-level ``_meta`` of upserts: omitted keeps, ``null`` clears, an
  object patches by top-level key (a ``null`` key is removed, other keys replaced whole,
  ``{}`` changes nothing, an object left without keys is "no metadata").
* Unknown fields of upserted entities follow PATCH per key.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

__all__ = ["meta_patch", "patch", "patch_extra"]


def patch(stored: Any, value: Any) -> Any:
    """PATCH one three-state field: ``UNSET`` keeps ``stored``, anything else replaces it."""
    return stored if value is UNSET else value


def meta_patch(stored: dict[str, Any] | None, value: Any) -> dict[str, Any] | None:
    """META-PATCH a stored ``_meta`` object (``None`` means no metadata)."""
    if value is UNSET:
        return stored
    if value is None:
        return None
    if not value:
        return stored
    out = dict(stored) if stored else {}
    for key, item in value.items():
        if item is None:
            out.pop(key, None)
        else:
            out[key] = item
    return out or None


def patch_extra(stored: dict[str, Any] | None, extra: Any) -> dict[str, Any] | None:
    """PATCH each unknown field of an upsert by key (``null`` removes the key)."""
    if extra is UNSET or not extra:
        return stored
    # An object of unknown fields patches like a ``_meta`` object (META-PATCH past null).
    return meta_patch(stored, extra)
