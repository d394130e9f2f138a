"""Checks of the limits an embedder passes (issue 26): whole numbers, in range, named.

A limit given as text, a float or ``True`` used to be taken and fail later, in the middle of
reading (comparing a ``str`` with an ``int``), or never (a negative limit). Each constructor
that takes one checks it here, at once, with an error naming the keyword.
"""

from __future__ import annotations

__all__ = ["checked_limit", "checked_optional_limit"]


def checked_limit(name: str, value: object, minimum: int = 0) -> int:
    """``value`` if it is a whole number (``int``, not ``bool``) of at least ``minimum``.

    Raises:
        TypeError: it is not an ``int`` (or it is a ``bool``).
        ValueError: it is below ``minimum``.
    """
    if type(value) is bool or not isinstance(value, int):
        raise TypeError(f"{name} must be a whole number (int), not {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be {minimum} or more, not {value}")
    return value


def checked_optional_limit(name: str, value: object, minimum: int = 0) -> int | None:
    """As :func:`checked_limit`, ``None`` (no limit) allowed."""
    return None if value is None else checked_limit(name, value, minimum)
