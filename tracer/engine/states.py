"""The two axes of `docs/states.md`, as words, with their order of strictness.

Integrity asks whether a record is exactly what was captured; currency asks whether the
source still says it today.  They are never folded into one another.  "Strictest" means
least trustworthy: derived text takes the strictest state found anywhere in its lineage.
"""

from __future__ import annotations

from collections.abc import Iterable

from store.words import Currency, Integrity

__all__ = ["strictest_currency", "strictest_integrity"]

# Least strict first, in the enums' order.  "unavailable" on the integrity axis means
# "outside your scope": nothing about that record, not even whether it was purged, is
# revealed to the viewer.
_INTEGRITY = tuple(Integrity)
_CURRENCY = tuple(Currency)
_INTEGRITY_RANK = {s: i for i, s in enumerate(_INTEGRITY)}
_CURRENCY_RANK = {s: i for i, s in enumerate(_CURRENCY)}


def strictest_integrity(states: Iterable[Integrity]) -> Integrity:
    return _INTEGRITY[max(map(_INTEGRITY_RANK.__getitem__, states), default=0)]


def strictest_currency(states: Iterable[Currency]) -> Currency:
    return _CURRENCY[max(map(_CURRENCY_RANK.__getitem__, states), default=_CURRENCY_RANK[Currency.UNCHECKED])]
