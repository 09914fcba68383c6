"""Ids as people type them: exact, a unique prefix, or a miss with the closest known ids.

One implementation for the CLI (`trace`, `finding`, `impact`) and the TUI filter, so a
typo never reads as "nothing depends on this" and a short id works the same everywhere.
Only ids the viewer may see are suggested or resolved: a document outside the viewer's
scope is "not known" exactly like one that does not exist.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import TYPE_CHECKING

from store import queries
from store.casefile import collections_of_digests, digest_collections
from store.errors import StoreError
from store.queries import AnswerFilter

if TYPE_CHECKING:
    from store.vault import Vault
    from tracer.engine.session import Session

__all__ = [
    "UnknownIdError",
    "closest",
    "closest_answers",
    "known_digest",
    "resolve_answer",
    "resolve_document",
    "resolve_revision",
]

#: how many answers a prefix probe reads at most (a million-answer vault is never listed)
_PROBE = 500
#: how many suggestions a miss names
SUGGEST = 5


class UnknownIdError(StoreError):
    """No such id (or not one this viewer may see); `suggestions` are the closest known."""

    def __init__(self, kind: str, wanted: str, suggestions: list[str], where: str = "in this vault"):
        self.kind, self.wanted, self.suggestions = kind, wanted, suggestions
        text = f"no {kind} {wanted!r} {where}"
        if suggestions:
            text += "; closest known: " + ", ".join(suggestions)
        super().__init__(text)


def closest(wanted: str, known: Iterable[str], n: int = SUGGEST) -> list[str]:
    """Known ids nearest to `wanted`: those it is a prefix of first, then by similarity."""
    pool = sorted(set(known))
    low = wanted.lower()
    first = [k for k in pool if k.lower().startswith(low)] if low else []
    similar = difflib.get_close_matches(wanted, pool, n=n, cutoff=0.5)
    out = list(dict.fromkeys([*first, *similar]))
    if not out and low and pool:
        # nothing similar: the ids sharing the longest prefix with it, else simply the
        # first known ones (a short list of what exists beats "no such id" alone)
        best = max(_common(low, k.lower()) for k in pool)
        out = [k for k in pool if _common(low, k.lower()) == best] if best else pool
    return out[:n]


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _answers_containing(vault: Vault, fragment: str) -> list[str]:
    rows = queries.answer_rows(vault, AnswerFilter(text=fragment), _PROBE)
    return [r.answer_id for r in rows]


def closest_answers(vault: Vault, wanted: str, n: int = SUGGEST) -> list[str]:
    """Answer ids nearest to `wanted`, probing with ever shorter prefixes of it (bounded)."""
    for k in range(len(wanted), 0, -1):
        pool = _answers_containing(vault, wanted[:k])
        if pool:
            return closest(wanted, pool, n)
    return []


def resolve_answer(vault: Vault, wanted: str) -> str:
    """The answer id `wanted` names: itself, or the one answer it is a prefix of."""
    if queries.answer_entry(vault, wanted) is not None:
        return wanted
    matches = [a for a in _answers_containing(vault, wanted) if a.startswith(wanted)] if wanted else []
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        shown = matches[:SUGGEST]
        raise UnknownIdError("unique answer", wanted, shown, f"(the prefix fits {len(matches)}+ answers)")
    raise UnknownIdError("answer", wanted, closest_answers(vault, wanted))


def _documents(session: Session) -> list[str]:
    return [d.document_id for d in queries.documents(session.vault) if session.can_read(d.collection)]


def resolve_document(session: Session, wanted: str) -> str:
    """A document id the viewer may see: exact, or the one it is a unique prefix of."""
    known = _documents(session)
    if wanted in known:
        return wanted
    matches = [d for d in known if d.startswith(wanted)] if wanted else []
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        where = f"(the prefix fits {len(matches)} documents)"
        raise UnknownIdError("unique document", wanted, matches[:SUGGEST], where)
    raise UnknownIdError("document", wanted, closest(wanted, known), "you can see in this vault")


def resolve_revision(session: Session, document: str, wanted: str) -> str:
    known = [
        r.revision for r in queries.revisions_of(session.vault, document) if session.can_read(r.collection)
    ]
    if wanted in known:
        return wanted
    raise UnknownIdError(f"revision of {document}", wanted, closest(wanted, known), "in this vault")


def known_digest(session: Session, digest: str) -> None:
    """Raise unless `digest` is something the viewer may know of: a text logged under a
    collection they may read (cited, a revision, or purged under a tombstone). A digest
    known only under collections outside their scope answers exactly as an unknown one, so
    probing digests says nothing about what exists there. Suggests the nearest revision
    and tombstone digests they may see."""
    if any(session.can_read(c) for c in digest_collections(session.vault, digest)):
        return
    revisions = [
        r.content_sha256
        for doc in _documents(session)
        for r in queries.revisions_of(session.vault, doc)
        if session.can_read(r.collection)
    ]
    tombstoned = [t.digest for t in queries.tombstones(session.vault)]
    logged_under = collections_of_digests(session.vault, tombstoned)
    purged = [d for d, colls in logged_under.items() if any(session.can_read(c) for c in colls)]
    known = set(revisions) | set(purged)
    raise UnknownIdError("digest", digest, closest(digest, known, 3), "referenced in this vault")
