"""A read-only, zero-copy view of a list the reducer owns (:class:`ListView`).

The entities (``_entities``) and the session's read access (``_session_view``) hand their
lists out through it, so a caller can read them without a copy and cannot change them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar, overload

__all__ = ["ListView"]

T = TypeVar("T")


class ListView(Sequence[T]):
    """A read-only, zero-copy view of a list owned by the reducer (items of type ``T``)."""

    __slots__ = ("_items", "_wrap")

    def __init__(self, items: list[Any], wrap: Callable[[Any], T] | None = None) -> None:
        self._items = items
        self._wrap = wrap

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        item = self._items[index]
        if self._wrap is None:
            return item
        if isinstance(index, slice):
            return [self._wrap(x) for x in item]
        return self._wrap(item)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[T]:
        if self._wrap is None:
            return iter(self._items)
        return map(self._wrap, self._items)

    def __repr__(self) -> str:
        return f"ListView({list(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ListView | list | tuple):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]
