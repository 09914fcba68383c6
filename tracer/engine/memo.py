"""A bounded memo for one run of the engine (a trace, a revalidation, a verification)."""

from __future__ import annotations

from typing import Generic, TypeVar

__all__ = ["Memo"]

K = TypeVar("K")
V = TypeVar("V")


class Memo(Generic[K, V]):
    """A bounded memo for one run: a pass over a million passages must not hold them all.

    Two generations of plain dicts instead of an exact LRU: a hit is one dict lookup
    (an `OrderedDict` re-ordered on every hit cost a measurable share of a revalidation,
    `docs/benchmarks.md`), a hit in the
    older generation is carried into the newer, and when the newer one is full the older
    is dropped whole. At most `size` entries are held, and whatever was used within the
    last `size // 2` insertions is kept.
    """

    def __init__(self, size: int):
        self.size = size
        self._half = max(1, size // 2)
        self._new: dict[K, V] = {}
        self._old: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        value = self._new.get(key)
        if value is None:
            value = self._old.get(key)
            if value is not None:
                self.put(key, value)
        return value

    def put(self, key: K, value: V) -> V:
        new = self._new
        new[key] = value
        if len(new) >= self._half:
            self._old, self._new = new, {}
        return value
