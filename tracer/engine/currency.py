"""Currency of one retrieved passage, and its transformation trace.

Decides `unavailable` and `unchecked` (what relocate.py leaves to callers) from the
log: deletions, tombstones, scope, and which revisions were imported.  Revision texts
are read through the session, so they too are released only when their digest verifies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store import queries
from store.queries import RevisionRow
from tracer.engine.evidence import TextResult
from tracer.engine.relocate import Locator, Relocation, check_same_revision, relocate
from tracer.engine.session import Session
from tracer.engine.textnorm import NORMALIZER_VERSION, normalize, normalize_quote

__all__ = ["Currency", "CurrencyEngine", "Transform"]


@dataclass(frozen=True)
class Currency:
    state: str
    reason: str
    detail: str = ""
    cited: RevisionRow | None = None
    current: RevisionRow | None = None
    relocation: Relocation | None = None

    @property
    def current_excerpt(self) -> str | None:
        """Current text, for the separately labelled "current revision" pane only."""
        return self.relocation.current_excerpt if self.relocation else None


@dataclass(frozen=True)
class Transform:
    """Was the retrieved text really at its locator in the revision it names?"""

    state: str
    detail: str = ""


def locator_of(ps: dict[str, Any]) -> Locator:
    loc = ps["locator"]
    return Locator(tuple(loc["heading_path"]), loc["paragraph"], loc["char_start"], loc["char_end"])


class CurrencyEngine:
    """Caches revision lists and texts for one run (trace, revalidate or verify)."""

    def __init__(self, session: Session):
        self.session = session
        self._revs: dict[str, list[RevisionRow]] = {}
        self._texts: dict[str, TextResult] = {}
        self._deleted: dict[str, tuple[int, str, str] | None] = {}

    def revisions(self, document_id: str) -> list[RevisionRow]:
        if document_id not in self._revs:
            self._revs[document_id] = queries.revisions_of(self.session.vault, document_id)
        return self._revs[document_id]

    def deletion(self, document_id: str) -> tuple[int, str, str] | None:
        if document_id not in self._deleted:
            self._deleted[document_id] = queries.deletion_of(self.session.vault, document_id)
        return self._deleted[document_id]

    def revision_text(self, rev: RevisionRow) -> TextResult:
        if rev.content_sha256 not in self._texts:
            self._texts[rev.content_sha256] = self.session.text(rev.content_sha256, rev.collection)
        return self._texts[rev.content_sha256]

    def cited_revision(self, ps: dict[str, Any]) -> RevisionRow | None:
        wanted = ps["document"]["revision"]
        for rev in self.revisions(ps["document"]["document_id"]):
            if rev.revision == wanted:
                return rev
        return None

    def transform(self, ps: dict[str, Any], retrieved: TextResult) -> Transform:
        if ps["normalizer_version"] != NORMALIZER_VERSION:
            return Transform(
                "unknown_normalizer", f"normalizer {ps['normalizer_version']!r} is not known here"
            )
        cited = self.cited_revision(ps)
        if cited is None:
            return Transform("revision_not_imported", "the cited revision was never imported")
        text = self.revision_text(cited)
        if not text.verified or text.text is None:
            return Transform("revision_unreadable", f"cited revision text is {text.state}")
        if not retrieved.verified or retrieved.text is None:
            return Transform("passage_unreadable", f"retrieved text is {retrieved.state}")
        norm = normalize(text.text)
        loc = ps["locator"]
        quote = normalize_quote(retrieved.text)
        if norm[loc["char_start"] : loc["char_end"]] == quote:
            return Transform("found_at_locator")
        where = norm.find(quote) if quote else -1
        if where >= 0:
            return Transform("found_elsewhere", f"found at characters {where}..{where + len(quote)}")
        return Transform("not_found", "the retrieved text does not occur in the cited revision")

    def currency(self, ps: dict[str, Any], retrieved: TextResult) -> Currency:
        s = self.session
        if not s.can_read(ps["collection"]):
            return Currency("unavailable", "out_of_scope")
        if ps.get("derived_from"):
            return Currency("unchecked", "derived_text", "state comes from its lineage")
        doc = ps["document"]["document_id"]
        revs = self.revisions(doc)
        if not revs:
            return Currency("unchecked", "no_revisions_imported", f"no revision of {doc} was imported")
        deleted = self.deletion(doc)
        if deleted is not None:
            return Currency("unavailable", "source_deleted", f"deleted at {deleted[1]}")
        cited = self.cited_revision(ps)
        latest = revs[-1]
        if not s.can_read(latest.collection):
            return Currency("unavailable", "out_of_scope")
        if cited is None:
            return Currency("unchecked", "cited_revision_not_imported", current=latest)
        latest_text = self.revision_text(latest)
        if latest_text.state == "purged":
            return Currency("unavailable", "latest_revision_purged", "purged by retention", cited, latest)
        if not latest_text.verified or latest_text.text is None:
            return Currency("unchecked", "latest_revision_unreadable", latest_text.state, cited, latest)
        cited_text = self.revision_text(cited)
        quote = self._quote(ps, retrieved, cited_text)
        if quote is None:
            return Currency("unchecked", "historical_text_unavailable", retrieved.state, cited, latest)
        if cited.revision == latest.revision:
            rel = check_same_revision(quote, locator_of(ps), latest_text.text)
        else:
            rel = relocate(quote, locator_of(ps), cited_text.text or "", latest_text.text)
        return Currency(rel.state, rel.reason, "", cited, latest, rel)

    @staticmethod
    def _quote(ps: dict[str, Any], retrieved: TextResult, cited: TextResult) -> str | None:
        """The historical quote: the retained passage, else the cited revision at its locator."""
        if retrieved.verified and retrieved.text is not None:
            return normalize_quote(retrieved.text)
        if cited.verified and cited.text is not None:
            loc = ps["locator"]
            return normalize(cited.text)[loc["char_start"] : loc["char_end"]] or None
        return None
