"""Currency of one retrieved passage: is what it quoted still what its source says?

Decides `unavailable` and `unchecked` (what relocate.py leaves to callers) from the
log: deletions, tombstones, scope, and which revisions were imported.  Revision texts
are read through a `TextSource` (the session's vault, or an exported dataset), so they
too are released only when their digest verifies.

One `CurrencyEngine` serves one run (a trace, a revalidation, a verification): revision
lists, revision texts, their normalized forms and relocation verdicts are computed once
per run and reused by every answer that cites the same revision, so revalidating many
answers over few documents does not re-read or re-normalize a revision per passage.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from store.queries import RevisionRow
from store.records import Chain, Passage
from tracer.engine.answertime import AnswerTime
from tracer.engine.evidence import TextResult
from tracer.engine.inforce import AnswerTimeJudge
from tracer.engine.memo import Memo
from tracer.engine.normalizers import NORM1, RECORDED, Normalizer, by_version
from tracer.engine.quotes import carry, stand_in
from tracer.engine.relocate import Relocation, check_same_revision, relocate
from tracer.engine.session import Session
from tracer.engine.textsource import TextSource, VaultSource
from tracer.engine.times import aware
from tracer.engine.vocabulary import Currency, CurrencyReason, Integrity

__all__ = ["COMPARED", "CurrencyEngine", "CurrencyResult", "Scope", "carry"]

#: the currency states in which the current revision's text is compared with the quote
COMPARED: frozenset[Currency] = frozenset({Currency.MOVED, Currency.STALE, Currency.AMBIGUOUS})

#: (digest, collection) pairs per `read_texts` call
_BATCH = 512


@dataclass(frozen=True)
class CurrencyResult:
    """The currency verdict for one passage.

    `cited_text` is the integrity verdict of the cited revision's content (its text is
    historical and only present when it verified; a tombstone stands in its place when it
    was purged).  Current text of the source lives only in `relocation.current_excerpt`.
    """

    state: Currency
    reason: CurrencyReason
    detail: str = ""
    cited: RevisionRow | None = None
    current: RevisionRow | None = None
    relocation: Relocation | None = None
    cited_text: TextResult | None = None
    #: the normalizer version the verdict was computed under ("" when none applied)
    normalizer: str = ""
    #: was the cited revision already superseded when the answer was generated?
    answer_time: AnswerTime | None = None

    @property
    def current_excerpt(self) -> str | None:
        """Current text, for the separately labelled "current revision" pane only."""
        return self.relocation.current_excerpt if self.relocation else None

    @property
    def shows_current(self) -> bool:
        """Whether today's text is set beside the historical quote: only where the source
        changed or moved since (or the quote is ambiguous there) and a current excerpt
        exists. The one rule every screen, the CLI, the JSON and the reports follow."""
        return self.state in COMPARED and self.current is not None and self.current_excerpt is not None


def _not_before(a: str, b: str) -> bool:
    """a >= b as instants (RFC 3339 with any offset). Ingest refuses a time without an
    offset, so one that cannot be read is damage: it is taken as not earlier (a deletion
    that cannot be ordered stays in force), never compared as a string."""
    x, y = aware(a), aware(b)
    return x is None or y is None or x >= y


def _ordered(revs: list[RevisionRow]) -> list[RevisionRow]:
    """Oldest first by commit instant (any UTC offset), when every instant parses."""
    instants = [x for x in (aware(r.committed_at) for r in revs) if x is not None]
    if len(instants) == len(revs):
        order = sorted(range(len(revs)), key=lambda k: (instants[k], revs[k].seq))
        revs = [revs[k] for k in order]
    return revs


class CurrencyEngine:
    """Caches revision lists, texts and verdicts for one run (trace, revalidate or verify).

    `normalizer` is ``"recorded"`` (every passage checked under the version it names) or
    a version every passage recorded under ``tracer-norm/1`` is carried over to.
    """

    def __init__(self, source: Session | TextSource, normalizer: str = RECORDED):
        self.source: TextSource = VaultSource(source) if isinstance(source, Session) else source
        self.requested: Normalizer | None = None if normalizer == RECORDED else by_version(normalizer)
        if normalizer != RECORDED and self.requested is None:
            raise ValueError(f"unknown normalizer {normalizer!r}")
        self._revs: dict[str, list[RevisionRow]] = {}
        self._deleted: dict[str, tuple[int, str, str] | None] = {}
        self._rev_texts: Memo[tuple[str, str], TextResult] = Memo(2048)
        self._normalized: Memo[str, str] = Memo(2048)
        self._texts: Memo[tuple[str, str], TextResult] = Memo(32768)
        self._verdicts: Memo[tuple[Any, ...], Relocation] = Memo(8192)
        #: a passage's currency by everything it depends on: popular chunks are retrieved
        #: by many answers, and revisions do not change during one engine's life
        self._currencies: Memo[tuple[Any, ...], CurrencyResult] = Memo(65536)
        self.answer_time = AnswerTimeJudge(self)

    # -- cached reads ------------------------------------------------------------------

    def _read(self, digest: str, collection: str) -> TextResult:
        return self.source.text(digest, collection)

    def drop_texts(self) -> None:
        """Forget the passage texts read so far (a long pass moving on to its next page)."""
        self._texts = Memo(self._texts.size)

    def prefetch(self, items: Iterable[tuple[str, str]], batch: int = _BATCH) -> None:
        """Read every (digest, collection) not yet cached in one batch (`read_texts`).

        `read_texts` gives each digest the verdict `read_text` would; the collection only
        decides scope, so a digest asked for under several collections is read once and
        each pair gets that verdict, or "outside your scope" where the viewer may not read.
        """
        missing = {key for key in items if self._texts.get(key) is None}
        if not missing:
            return
        s = self.source
        wanted: dict[str, str] = {}
        for digest, collection in sorted(missing):
            if s.can_read(collection):
                wanted.setdefault(digest, collection)
        pairs = list(wanted.items())
        got: dict[str, TextResult] = {}
        for i in range(0, len(pairs), batch):
            got.update(s.texts(pairs[i : i + batch]))
        for digest, collection in missing:
            found = got.get(digest) if s.can_read(collection) else None
            if found is None:
                found = s.text(digest, collection)
            self._texts.put((digest, collection), found)

    def prefetch_revisions(self, document_ids: Collection[str]) -> None:
        """Revision lists and deletions of many documents, one query each."""
        todo = sorted({d for d in document_ids if d not in self._revs})
        if todo:
            for doc, revs in self.source.revisions_of(todo).items():
                self._revs[doc] = _ordered(revs)
        todo = sorted({d for d in document_ids if d not in self._deleted})
        if todo:
            self._deleted.update(self.source.deletions_of(todo))

    def text(self, digest: str, collection: str) -> TextResult:
        """`read_text` memoized for this run (the vault does not change under a run)."""
        key = (digest, collection)
        found = self._texts.get(key)
        return found if found is not None else self._texts.put(key, self._read(digest, collection))

    def revisions(self, document_id: str) -> list[RevisionRow]:
        """A document's imported revisions, oldest first by commit instant (any UTC offset)."""
        if document_id not in self._revs:
            self._revs[document_id] = _ordered(self.source.revisions_of([document_id])[document_id])
        return self._revs[document_id]

    def deletion(self, document_id: str) -> tuple[int, str, str] | None:
        if document_id not in self._deleted:
            self._deleted[document_id] = self.source.deletions_of([document_id])[document_id]
        return self._deleted[document_id]

    def revision_text(self, rev: RevisionRow) -> TextResult:
        key = (rev.content_sha256, rev.collection)
        found = self._rev_texts.get(key)
        if found is None:
            found = self._texts.get(key) or self._read(rev.content_sha256, rev.collection)
            self._rev_texts.put(key, found)
        return found

    def normalized(self, rev: RevisionRow, text: TextResult, norm: Normalizer = NORM1) -> str:
        """The normalized form of a verified revision text, computed once per run."""
        key = rev.content_sha256 if norm is NORM1 else f"{norm.version}:{rev.content_sha256}"
        found = self._normalized.get(key)
        if found is None:
            found = self._normalized.put(key, norm.structure(text.text or "").text)
        return found

    def cited_revision(self, document_id: str, revision: str) -> RevisionRow | None:
        for rev in self.revisions(document_id):
            if rev.revision == revision:
                return rev
        return None

    # -- verdicts ----------------------------------------------------------------------

    def _deleted_now(self, document_id: str, latest: RevisionRow) -> tuple[int, str, str] | None:
        """The deletion in force: one not followed by a revision committed after it."""
        deleted = self.deletion(document_id)
        if deleted is None or not _not_before(deleted[1], latest.committed_at):
            return None
        return deleted

    def currency(self, ps: Passage, retrieved: TextResult, generated_at: str | None = None) -> CurrencyResult:
        """The passage's currency today and, given the answer's `generated_at`, at answer time."""
        key = _currency_key(ps, retrieved)
        cur = self._currencies.get(key) if key is not None else None
        if cur is None:
            cur = self._currency(ps, retrieved)
            if key is not None:
                self._currencies.put(key, cur)
        if generated_at is None:
            return cur
        return _with_answer_time(cur, self.answer_time.judge(ps, retrieved, key, cur, generated_at))

    def norms(self, chain: Chain) -> tuple[Normalizer, Normalizer] | None:
        """(recorded, compared-under) normalizers of a passage; None for an unknown version."""
        recorded = by_version(str(chain.normalizer_version))
        if recorded is None:
            return None
        if self.requested is not None and recorded is NORM1:
            return recorded, self.requested
        return recorded, recorded

    def _currency(self, ps: Passage, retrieved: TextResult) -> CurrencyResult:
        s = self.source
        if not s.can_read(ps.collection):
            return CurrencyResult(Currency.UNAVAILABLE, CurrencyReason.OUT_OF_SCOPE)
        if ps.derived_from:
            return CurrencyResult(
                Currency.UNCHECKED, CurrencyReason.DERIVED_TEXT, "state comes from its lineage"
            )
        chain = ps.located()
        norms = self.norms(chain)
        if norms is None:
            return CurrencyResult(
                Currency.UNCHECKED,
                CurrencyReason.UNKNOWN_NORMALIZER,
                f"normalizer {chain.normalizer_version!r} is not known here",
            )
        recorded, norm = norms
        doc = chain.document_id
        revs = self.revisions(doc)
        if not revs:
            return CurrencyResult(
                Currency.UNCHECKED,
                CurrencyReason.NO_REVISIONS_IMPORTED,
                f"no revision of {doc} was imported",
                normalizer=norm.version,
            )
        return self._against_latest(s, chain, retrieved, revs[-1], (recorded, norm))

    def _against_latest(
        self,
        s: Scope,
        chain: Chain,
        retrieved: TextResult,
        latest: RevisionRow,
        norms: tuple[Normalizer, Normalizer],
    ) -> CurrencyResult:
        """The currency of a located passage against its document's latest revision: out of
        scope, deleted, cited revision not imported, latest text purged or unreadable, no
        historical quote, or the relocation verdict."""
        recorded, norm = norms
        version = norm.version
        doc = chain.document_id
        if not s.can_read(latest.collection):
            return CurrencyResult(Currency.UNAVAILABLE, CurrencyReason.OUT_OF_SCOPE)
        deleted = self._deleted_now(doc, latest)
        cited = self.cited_revision(doc, chain.revision)
        cited_text = self.revision_text(cited) if cited is not None else None
        if deleted is not None:
            return CurrencyResult(
                Currency.UNAVAILABLE,
                CurrencyReason.SOURCE_DELETED,
                f"deleted at {deleted[1]} (log entry {deleted[0]}): {deleted[2]}",
                cited,
                None,
                cited_text=cited_text,
                normalizer=version,
            )
        if cited is None:
            return CurrencyResult(
                Currency.UNCHECKED,
                CurrencyReason.CITED_REVISION_NOT_IMPORTED,
                f"revision {chain.revision!r} of {doc} was never imported",
                current=latest,
                normalizer=version,
            )
        latest_text = self.revision_text(latest)
        if latest_text.state == Integrity.PURGED:
            return CurrencyResult(
                Currency.UNAVAILABLE,
                CurrencyReason.LATEST_REVISION_PURGED,
                "purged by retention",
                cited,
                latest,
                None,
                cited_text,
                version,
            )
        if not latest_text.verified or latest_text.text is None:
            return CurrencyResult(
                Currency.UNCHECKED,
                CurrencyReason.LATEST_REVISION_UNREADABLE,
                f"the latest revision's text is {latest_text.state}",
                cited,
                latest,
                None,
                cited_text,
                version,
            )
        quote = self.quote(chain, retrieved, cited, cited_text, recorded)
        if quote is None:
            return CurrencyResult(
                Currency.UNCHECKED,
                CurrencyReason.HISTORICAL_TEXT_UNAVAILABLE,
                f"retrieved text is {retrieved.state}, cited revision text is {cited_text.state}"
                if cited_text
                else retrieved.state,
                cited,
                latest,
                None,
                cited_text,
                version,
            )
        rel = self.verdict(chain, quote, cited, cited_text, latest, latest_text, recorded, norm)
        return CurrencyResult(rel.state, rel.reason, "", cited, latest, rel, cited_text, version)

    def verdict(
        self,
        chain: Chain,
        quote: str,
        cited: RevisionRow,
        cited_text: TextResult | None,
        latest: RevisionRow,
        latest_text: TextResult,
        recorded: Normalizer = NORM1,
        norm: Normalizer = NORM1,
    ) -> Relocation:
        """relocate.py's verdict, memoized: many answers cite the same chunk of a revision."""
        loc = chain.locator
        key = (norm.version, quote, loc, cited.content_sha256, latest.content_sha256)
        found = self._verdicts.get(key)
        if found is not None:
            return found
        later = latest_text.text or ""
        old = cited_text.text if cited_text is not None and cited_text.verified else None
        quote, loc = carry(quote, loc, old, recorded, norm)
        if cited.revision == latest.revision:
            rel = check_same_revision(quote, loc, later, norm)
        else:
            if old is None:
                old = stand_in(chain, quote, loc, norm)
            rel = relocate(quote, loc, old, later, norm)
        return self._verdicts.put(key, rel)

    def quote(
        self,
        chain: Chain,
        retrieved: TextResult,
        cited: RevisionRow,
        cited_text: TextResult | None,
        recorded: Normalizer = NORM1,
    ) -> str | None:
        """The historical quote: the retained passage, else the cited revision at its locator."""
        if retrieved.verified and retrieved.text is not None:
            return recorded.quote(retrieved.text)
        if cited_text is not None and cited_text.verified and cited_text.text is not None:
            loc = chain.locator
            return self.normalized(cited, cited_text, recorded)[loc.char_start : loc.char_end] or None
        return None


class Scope(Protocol):
    """Whom the texts are read for: what they may read."""

    def can_read(self, collection: str) -> bool: ...


def _with_answer_time(cur: CurrencyResult, at: AnswerTime) -> CurrencyResult:
    return CurrencyResult(
        cur.state,
        cur.reason,
        cur.detail,
        cur.cited,
        cur.current,
        cur.relocation,
        cur.cited_text,
        cur.normalizer,
        at,
    )


def _currency_key(ps: Passage, retrieved: TextResult) -> tuple[Any, ...] | None:
    """What a passage's currency depends on, or None when it is not a plain shape (never
    memoized then).  Only exact str and int values count, so 1 and "1" never share a key."""
    chain = ps.chain
    if chain is None:
        return None
    loc = chain.locator
    values = (
        ps.collection,
        ps.derived_from or "",
        chain.normalizer_version,
        chain.document_id,
        chain.revision,
        loc.paragraph,
        loc.char_start,
        loc.char_end,
        retrieved.digest,
        retrieved.state,
    )
    if not all(type(v) is str or type(v) is int for v in values):
        return None
    return (*values, loc.heading_path)
