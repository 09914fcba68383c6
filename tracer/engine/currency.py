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

from bisect import bisect_right
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar

from store.queries import RevisionRow
from store.records import Chain, Locator, Passage
from tracer.engine.answertime import AnswerTime, AnswerTimeReason, AnswerTimeState, answer_time_unknown
from tracer.engine.evidence import TextResult
from tracer.engine.normalizers import NORM1, RECORDED, Normalizer, by_version, carry_to_v2
from tracer.engine.relocate import Relocation, check_same_revision, relocate, still_says
from tracer.engine.session import Session
from tracer.engine.textnorm import CHUNKER_VERSION
from tracer.engine.textsource import TextSource, VaultSource
from tracer.engine.times import aware
from tracer.engine.vocabulary import Currency, CurrencyReason, Integrity

__all__ = ["COMPARED", "CurrencyEngine", "CurrencyResult", "Memo", "carry"]

#: the currency states in which the current revision's text is compared with the quote
COMPARED: frozenset[Currency] = frozenset({Currency.MOVED, Currency.STALE, Currency.AMBIGUOUS})

#: (digest, collection) pairs per `read_texts` call
_BATCH = 512

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
        self._instants: dict[str, list[datetime] | None] = {}
        self._cited_at: dict[tuple[str, str], int | None] = {}
        self._holds: Memo[tuple[Any, ...], bool] = Memo(16384)
        self._revs: dict[str, list[RevisionRow]] = {}
        self._deleted: dict[str, tuple[int, str, str] | None] = {}
        self._rev_texts: Memo[tuple[str, str], TextResult] = Memo(2048)
        self._normalized: Memo[str, str] = Memo(2048)
        self._texts: Memo[tuple[str, str], TextResult] = Memo(32768)
        self._verdicts: Memo[tuple[Any, ...], Relocation] = Memo(8192)
        #: a passage's currency by everything it depends on: popular chunks are retrieved
        #: by many answers, and revisions do not change during one engine's life
        self._currencies: Memo[tuple[Any, ...], CurrencyResult] = Memo(65536)
        #: answer-time facts of passages answered from a superseded revision, by passage
        #: and revision in force (`generated_at` is filled in per answer)
        self._superseded: Memo[tuple[Any, ...], AnswerTime] = Memo(65536)

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
        return _with_answer_time(cur, self._answer_time(ps, retrieved, key, cur, generated_at))

    def _norms(self, chain: Chain) -> tuple[Normalizer, Normalizer] | None:
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
        norms = self._norms(chain)
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
        s: _Scope,
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
        quote = self._quote(chain, retrieved, cited, cited_text, recorded)
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
        rel = self._verdict(chain, quote, cited, cited_text, latest, latest_text, recorded, norm)
        return CurrencyResult(rel.state, rel.reason, "", cited, latest, rel, cited_text, version)

    def _verdict(
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
                old = _stand_in(chain, quote, loc, norm)
            rel = relocate(quote, loc, old, later, norm)
        return self._verdicts.put(key, rel)

    def _quote(
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

    # -- answer time -------------------------------------------------------------------

    def _instants_of(self, document_id: str) -> list[datetime] | None:
        if document_id not in self._instants:
            found = [aware(r.committed_at) for r in self.revisions(document_id)]
            dated = [x for x in found if x is not None]
            self._instants[document_id] = dated if len(dated) == len(found) else None
        return self._instants[document_id]

    def _holds_quote(
        self,
        chain: Chain,
        quote: str,
        cited: RevisionRow,
        cited_text: TextResult | None,
        rev: RevisionRow,
        rev_text: str,
        recorded: Normalizer,
        norm: Normalizer,
    ) -> bool:
        loc = chain.locator
        key = (norm.version, quote, loc, cited.content_sha256, rev.content_sha256)
        found = self._holds.get(key)
        if found is None:
            old = cited_text.text if cited_text is not None and cited_text.verified else None
            q, carried = carry(quote, loc, old, recorded, norm)
            if old is None:
                old = _stand_in(chain, q, carried, norm)
            found = self._holds.put(key, still_says(q, carried, old, rev_text, norm))
        return found

    def _answer_time(
        self,
        ps: Passage,
        retrieved: TextResult,
        key: tuple[Any, ...] | None,
        cur: CurrencyResult,
        generated_at: str,
    ) -> AnswerTime:
        """Was the cited revision already superseded when the answer was generated?

        From the revisions' own commit instants: the revision in force at answer time is
        the last one committed at or before `generated_at` (commit instant, any offset,
        then log order). If it is a later one than the cited revision, the answer was
        given from a superseded revision; whether the quote still stood in it, and since
        which revision it had not, is decided by the same anchored search as `moved`.
        `key` is the passage's `_currency_key` (None: not memoized).
        """
        unknown = answer_time_unknown
        if cur.reason == CurrencyReason.OUT_OF_SCOPE:
            return unknown(AnswerTimeReason.OUT_OF_SCOPE, generated_at)
        if ps.derived_from:
            return unknown(AnswerTimeReason.DERIVED_TEXT, generated_at)
        chain = ps.located()
        if self._norms(chain) is None:
            return unknown(AnswerTimeReason.UNKNOWN_NORMALIZER, generated_at)
        doc = chain.document_id
        revs = self.revisions(doc)
        if not revs:
            return unknown(AnswerTimeReason.NO_REVISIONS_IMPORTED, generated_at)
        ci = self._cited_index(doc, chain.revision)
        if ci is None:
            return unknown(AnswerTimeReason.CITED_REVISION_NOT_IMPORTED, generated_at)
        cited = revs[ci]
        instants = self._instants_of(doc)
        when = aware(generated_at)
        if instants is None or when is None:
            return unknown(AnswerTimeReason.UNDATED, generated_at, cited=cited)
        if instants[ci] > when:
            return unknown(AnswerTimeReason.CITED_AFTER_ANSWER, generated_at, cited=cited)
        k = bisect_right(instants, when) - 1
        if k <= ci:
            return AnswerTime(
                AnswerTimeState.CURRENT,
                AnswerTimeReason.LATEST_AT_ANSWER,
                generated_at,
                cited=cited,
                in_force=cited,
            )
        # the rest depends on the answer's time only through the revision in force (k):
        # answers given from the same superseded revision share it
        return self._in_force_memo(key, chain, retrieved, cited, revs, instants, ci, k).at(generated_at)

    def _in_force_memo(
        self,
        key: tuple[Any, ...] | None,
        chain: Chain,
        retrieved: TextResult,
        cited: RevisionRow,
        revs: list[RevisionRow],
        instants: list[datetime],
        ci: int,
        k: int,
    ) -> AnswerTime:
        """`_in_force`, memoized per passage and revision in force (`key` None: not memoized)."""
        if key is None:
            return self._in_force(chain, retrieved, cited, revs, instants, ci, k)
        memo = self._superseded.get((*key, k))
        if memo is None:
            memo = self._superseded.put(
                (*key, k), self._in_force(chain, retrieved, cited, revs, instants, ci, k)
            )
        return memo

    def _cited_index(self, document_id: str, revision: str) -> int | None:
        """Where the cited revision stands in the document's ordered revisions (the first
        one of that name, as `cited_revision` finds it), memoized per run."""
        pair = (document_id, revision)
        if pair not in self._cited_at:
            revs = self.revisions(document_id)
            self._cited_at[pair] = next((i for i, r in enumerate(revs) if r.revision == revision), None)
        return self._cited_at[pair]

    def _in_force(
        self,
        chain: Chain,
        retrieved: TextResult,
        cited: RevisionRow,
        revs: list[RevisionRow],
        instants: list[datetime],
        ci: int,
        k: int,
    ) -> AnswerTime:
        """The answer-time fact when revision `k`, later than the cited `ci`, was in force
        (`generated_at` left empty: the caller fills it in)."""
        s = self.source
        norms = self._norms(chain)
        assert norms is not None  # noqa: S101 - the caller returned earlier otherwise
        recorded, norm = norms
        generated_at = ""
        in_force = revs[k]
        is_current = k == len(revs) - 1
        if not s.can_read(in_force.collection):
            return answer_time_unknown(AnswerTimeReason.OUT_OF_SCOPE, generated_at, cited=cited)
        cited_text = self.revision_text(cited)
        quote = self._quote(chain, retrieved, cited, cited_text, recorded)
        # every return below names its own reason
        base = AnswerTime(
            AnswerTimeState.SUPERSEDED,
            AnswerTimeReason.IN_FORCE_UNREADABLE,
            generated_at,
            cited=cited,
            in_force=in_force,
            in_force_is_current=is_current,
        )
        if quote is None:
            return base.but(AnswerTimeReason.IN_FORCE_UNREADABLE, "the historical quote cannot be read")
        text = self.revision_text(in_force)
        if not text.verified or text.text is None:
            return base.but(
                AnswerTimeReason.IN_FORCE_UNREADABLE, f"the revision in force at answer time is {text.state}"
            )
        if self._holds_quote(chain, quote, cited, cited_text, in_force, text.text, recorded, norm):
            return base.but(AnswerTimeReason.UNCHANGED_BEFORE_ANSWER)
        rel = self._verdict(chain, quote, cited, cited_text, in_force, text, recorded, norm)
        first = self._first_changed(s, chain, quote, cited, cited_text, revs, (ci, k), (recorded, norm))
        return base.but(
            AnswerTimeReason.CHANGED_BEFORE_ANSWER,
            relocation=rel,
            changed_in=revs[first],
            changed_at=instants[first],
        )

    def _first_changed(
        self,
        s: _Scope,
        chain: Chain,
        quote: str,
        cited: RevisionRow,
        cited_text: TextResult | None,
        revs: list[RevisionRow],
        span: tuple[int, int],
        norms: tuple[Normalizer, Normalizer],
    ) -> int:
        """The earliest revision since which, up to the answer (`k`), the quote had not
        stood: walking back towards the cited `ci`, until a revision cannot be read or
        still holds the quote."""
        recorded, norm = norms
        ci, k = span
        first = k
        for j in range(k - 1, ci, -1):
            t = self.revision_text(revs[j])
            if not t.verified or t.text is None or not s.can_read(revs[j].collection):
                break
            if self._holds_quote(chain, quote, cited, cited_text, revs[j], t.text, recorded, norm):
                break
            first = j
        return first


class _Scope(Protocol):
    """Whom the texts are read for: what they may read."""

    def can_read(self, collection: str) -> bool: ...


def carry(
    quote: str, loc: Locator, old: str | None, recorded: Normalizer, norm: Normalizer
) -> tuple[str, Locator]:
    """A recorded quote and locator in the coordinates of the normalizer compared under.

    `old` is the cited revision's text when it can be read. Only ``/1`` → ``/2`` is a
    carry; a passage recorded under the version compared under is returned as it is.
    """
    if recorded is norm:
        return quote, loc
    c = carry_to_v2(quote, loc.heading_path, loc.paragraph, loc.char_start, loc.char_end, old)
    return c.quote, Locator(c.heading_path, c.paragraph, c.char_start, c.char_end)


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


def _stand_in(chain: Chain, quote: str, loc: Locator, norm: Normalizer = NORM1) -> str:
    """What relocation may assume about a cited revision whose text is gone (purged).

    relocate.py anchors an occurrence as firmly as the quote was anchored in the cited
    revision: a whole paragraph must still be a whole paragraph, so a qualified sentence
    ("... 60 EUR for trips inside the EU only") never passes for the old one ("... 60
    EUR").  Without the cited text there is nothing to anchor from and any substring
    would match.  A chunk of the reference paragraph chunker is a whole paragraph by
    construction, so for it a stand-in text holding the quote as one block at its
    recorded offset restores exactly that anchoring; for other chunkers nothing can be
    assumed and an empty text (plain substring matching) is used.
    """
    if chain.chunk.pipeline_version != CHUNKER_VERSION or loc.char_start < 3:
        return ""
    stand_in = "x" * (loc.char_start - 2) + "\n\n" + quote
    normalized = norm.structure(stand_in).text
    return stand_in if normalized[loc.char_start : loc.char_start + len(quote)] == quote else ""


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
