"""Currency of one retrieved passage, and its transformation trace.

Decides `unavailable` and `unchecked` (what relocate.py leaves to callers) from the
log: deletions, tombstones, scope, and which revisions were imported.  Revision texts
are read through the session, so they too are released only when their digest verifies.

One `CurrencyEngine` serves one run (a trace, a revalidation, a verification): revision
lists, revision texts, their normalized forms and relocation verdicts are computed once
per run and reused by every answer that cites the same revision, so revalidating many
answers over few documents does not re-read or re-normalize a revision per passage.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Generic, TypeVar

from store import queries
from store.queries import RevisionRow, TombstoneRow
from tracer.engine.answertime import AnswerTime, answer_time_unknown
from tracer.engine.evidence import TextResult, read_text, read_texts
from tracer.engine.normalizers import NORM1, RECORDED, Normalizer, by_version, carry_to_v2
from tracer.engine.relocate import Locator, Relocation, check_same_revision, relocate, still_says
from tracer.engine.session import Session
from tracer.engine.textnorm import CHUNKER_VERSION, normalize, normalize_quote

__all__ = ["LRU", "Currency", "CurrencyEngine", "Transform", "carry", "derived_transform", "locator_of"]

#: (digest, collection) pairs per `read_texts` call
_BATCH = 512

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A small bounded memo: a run over a million passages must not hold them all."""

    def __init__(self, size: int):
        self.size = size
        self._d: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._d.get(key)
        if value is not None:
            self._d.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> V:
        self._d[key] = value
        self._d.move_to_end(key)
        if len(self._d) > self.size:
            self._d.popitem(last=False)
        return value


@dataclass(frozen=True)
class Currency:
    """The currency verdict for one passage.

    `cited_text` is the integrity verdict of the cited revision's content (its text is
    historical and only present when it verified; a tombstone stands in its place when it
    was purged).  Current text of the source lives only in `relocation.current_excerpt`.
    """

    state: str
    reason: str
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


@dataclass(frozen=True)
class Transform:
    """Was the retrieved text really at its locator in the revision it names?"""

    state: str
    detail: str = ""


def locator_of(ps: dict[str, Any]) -> Locator:
    loc = ps["locator"]
    return Locator(tuple(loc["heading_path"]), loc["paragraph"], loc["char_start"], loc["char_end"])


def _instant(value: str) -> datetime | str:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value


def _not_before(a: str, b: str) -> bool:
    """a >= b as instants (RFC 3339 with any offset); falls back to string order."""
    x, y = _instant(a), _instant(b)
    if isinstance(x, datetime) and isinstance(y, datetime):
        try:
            return x >= y
        except TypeError:  # naive vs aware
            return a >= b
    return a >= b


def _aware(value: str) -> datetime | None:
    x = _instant(value)
    return x if isinstance(x, datetime) and x.tzinfo is not None else None


def _ordered(revs: list[RevisionRow]) -> list[RevisionRow]:
    """Oldest first by commit instant (any UTC offset), when every instant parses."""
    instants = [_instant(r.committed_at) for r in revs]
    if all(isinstance(i, datetime) and i.tzinfo is not None for i in instants):
        order = sorted(range(len(revs)), key=lambda k: (instants[k], revs[k].seq))
        revs = [revs[k] for k in order]
    return revs


class CurrencyEngine:
    """Caches revision lists, texts and verdicts for one run (trace, revalidate or verify).

    `normalizer` is ``"recorded"`` (every passage checked under the version it names) or
    a version every passage recorded under ``tracer-norm/1`` is carried over to.
    """

    def __init__(self, session: Session, normalizer: str = RECORDED):
        self.session = session
        self.requested: Normalizer | None = None if normalizer == RECORDED else by_version(normalizer)
        if normalizer != RECORDED and self.requested is None:
            raise ValueError(f"unknown normalizer {normalizer!r}")
        self._instants: dict[str, list[datetime] | None] = {}
        self._holds: LRU[tuple[Any, ...], bool] = LRU(16384)
        self._revs: dict[str, list[RevisionRow]] = {}
        self._deleted: dict[str, tuple[int, str, str] | None] = {}
        self._rev_texts: LRU[tuple[str, str], TextResult] = LRU(2048)
        self._normalized: LRU[str, str] = LRU(2048)
        self._texts: LRU[tuple[str, str], TextResult] = LRU(32768)
        self._verdicts: LRU[tuple[Any, ...], Relocation] = LRU(8192)
        #: a passage's currency by everything it depends on: popular chunks are retrieved
        #: by many answers, and revisions do not change during one engine's life
        self._currencies: LRU[tuple[Any, ...], Currency] = LRU(65536)
        #: answer-time facts of passages answered from a superseded revision, by passage
        #: and revision in force (`generated_at` is filled in per answer)
        self._superseded: LRU[tuple[Any, ...], AnswerTime] = LRU(65536)
        self._tombstones: dict[str, TombstoneRow] | None = None
        # page-scoped pins of verified, normalized revisions (verify's page by page pass)
        self._pinning = False
        self._pinned: dict[tuple[str, str], str] = {}
        self._verified_norm: LRU[tuple[str, str], str] = LRU(4096)

    # -- cached reads ------------------------------------------------------------------

    def _tombstone_map(self) -> dict[str, TombstoneRow]:
        if self._tombstones is None:
            self._tombstones = queries.tombstone_map(self.session.vault)
        return self._tombstones

    def _read(self, digest: str, collection: str) -> TextResult:
        return read_text(self.session, digest, collection, self._tombstone_map())

    def next_page(self, revisions: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        """Start a page of a long pass (verify): passage texts are dropped, and the page's
        (revision digest, collection) pairs whose verified normalized text is still
        cached are pinned for the whole page; the pairs returned must be read.

        A pass moves on page by page through passages but keeps coming back to the same
        popular revisions: pinned, they are neither decrypted nor normalized again, and a
        pin cannot be evicted by the page's other revisions before it is used.
        """
        self._pinning = True
        self._texts = LRU(self._texts.size)
        self._pinned = {}
        todo: list[tuple[str, str]] = []
        for pair in dict.fromkeys(revisions):
            norm = self._verified_norm.get(pair)
            if norm is None:
                todo.append(pair)
            else:
                self._pinned[pair] = norm
        return todo

    def prefetch(self, items: Iterable[tuple[str, str]], batch: int = _BATCH) -> None:
        """Read every (digest, collection) not yet cached in one batch (`read_texts`).

        `read_texts` gives each digest the verdict `read_text` would; the collection only
        decides scope, so a digest asked for under several collections is read once and
        each pair gets that verdict, or "outside your scope" where the viewer may not read.
        """
        missing = {key for key in items if self._texts.get(key) is None}
        if not missing:
            return
        s = self.session
        wanted: dict[str, str] = {}
        for digest, collection in sorted(missing):
            if s.can_read(collection):
                wanted.setdefault(digest, collection)
        pairs = list(wanted.items())
        got: dict[str, TextResult] = {}
        for i in range(0, len(pairs), batch):
            got.update(read_texts(s, pairs[i : i + batch], self._tombstone_map()))
        for digest, collection in missing:
            found = got.get(digest) if s.can_read(collection) else None
            if found is None:
                found = read_text(s, digest, collection, self._tombstone_map())
            self._texts.put((digest, collection), found)

    def prefetch_revisions(self, document_ids: Collection[str]) -> None:
        """Revision lists and deletions of many documents, one query each."""
        todo = sorted({d for d in document_ids if d not in self._revs})
        if todo:
            for doc, revs in queries.revisions_of_many(self.session.vault, todo).items():
                self._revs[doc] = _ordered(revs)
        todo = sorted({d for d in document_ids if d not in self._deleted})
        if todo:
            self._deleted.update(queries.deletions_of_many(self.session.vault, todo))

    def text(self, digest: str, collection: str) -> TextResult:
        """`read_text` memoized for this run (the vault does not change under a run)."""
        key = (digest, collection)
        found = self._texts.get(key)
        return found if found is not None else self._texts.put(key, self._read(digest, collection))

    def revisions(self, document_id: str) -> list[RevisionRow]:
        """A document's imported revisions, oldest first by commit instant (any UTC offset)."""
        if document_id not in self._revs:
            self._revs[document_id] = _ordered(queries.revisions_of(self.session.vault, document_id))
        return self._revs[document_id]

    def deletion(self, document_id: str) -> tuple[int, str, str] | None:
        if document_id not in self._deleted:
            self._deleted[document_id] = queries.deletion_of(self.session.vault, document_id)
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

    def cited_revision(self, ps: dict[str, Any]) -> RevisionRow | None:
        wanted = ps["document"]["revision"]
        for rev in self.revisions(ps["document"]["document_id"]):
            if rev.revision == wanted:
                return rev
        return None

    # -- verdicts ----------------------------------------------------------------------

    def transform(self, ps: dict[str, Any], retrieved: TextResult) -> Transform:
        recorded = by_version(ps["normalizer_version"])
        if recorded is None:
            return Transform(
                "unknown_normalizer", f"normalizer {ps['normalizer_version']!r} is not known here"
            )
        if recorded is not NORM1:
            return self._transform_under(ps, retrieved, recorded)
        cited = self.cited_revision(ps)
        if cited is None:
            return Transform("revision_not_imported", "the cited revision was never imported")
        pair = (cited.content_sha256, cited.collection)
        norm = self._pinned.get(pair)
        if norm is None:
            text = self.revision_text(cited)
            if not text.verified or text.text is None:
                return Transform("revision_unreadable", f"cited revision text is {text.state}")
            if not retrieved.verified or retrieved.text is None:
                return Transform("passage_unreadable", f"retrieved text is {retrieved.state}")
            norm = self.normalized(cited, text)
            if self._pinning:
                self._pinned[pair] = self._verified_norm.put(pair, norm)
        elif not retrieved.verified or retrieved.text is None:
            return Transform("passage_unreadable", f"retrieved text is {retrieved.state}")
        loc = ps["locator"]
        quote = normalize_quote(retrieved.text)
        if norm[loc["char_start"] : loc["char_end"]] == quote:
            return Transform("found_at_locator")
        where = norm.find(quote) if quote else -1
        if where >= 0:
            return Transform("found_elsewhere", f"found at characters {where}..{where + len(quote)}")
        return Transform("not_found", "the retrieved text does not occur in the cited revision")

    def _transform_under(self, ps: dict[str, Any], retrieved: TextResult, norm: Normalizer) -> Transform:
        """The transformation trace of a passage recorded under another version than ``/1``."""
        cited = self.cited_revision(ps)
        if cited is None:
            return Transform("revision_not_imported", "the cited revision was never imported")
        text = self.revision_text(cited)
        if not text.verified or text.text is None:
            return Transform("revision_unreadable", f"cited revision text is {text.state}")
        if not retrieved.verified or retrieved.text is None:
            return Transform("passage_unreadable", f"retrieved text is {retrieved.state}")
        norm_text = self.normalized(cited, text, norm)
        loc = ps["locator"]
        quote = norm.quote(retrieved.text)
        if norm_text[loc["char_start"] : loc["char_end"]] == quote:
            return Transform("found_at_locator")
        where = norm_text.find(quote) if quote else -1
        if where >= 0:
            return Transform("found_elsewhere", f"found at characters {where}..{where + len(quote)}")
        return Transform("not_found", "the retrieved text does not occur in the cited revision")

    def _deleted_now(self, document_id: str, latest: RevisionRow) -> tuple[int, str, str] | None:
        """The deletion in force: one not followed by a revision committed after it."""
        deleted = self.deletion(document_id)
        if deleted is None or not _not_before(deleted[1], latest.committed_at):
            return None
        return deleted

    def currency(
        self, ps: dict[str, Any], retrieved: TextResult, generated_at: str | None = None
    ) -> Currency:
        """The passage's currency today and, given the answer's `generated_at`, at answer time."""
        key = _currency_key(ps, retrieved)
        cur = self._currencies.get(key) if key is not None else None
        if cur is None:
            cur = self._currency(ps, retrieved)
            if key is not None:
                self._currencies.put(key, cur)
        if generated_at is None:
            return cur
        return _with_answer_time(cur, self._answer_time(ps, retrieved, cur, generated_at))

    def _norms(self, ps: dict[str, Any]) -> tuple[Normalizer, Normalizer] | None:
        """(recorded, compared-under) normalizers of a passage; None for an unknown version."""
        recorded = by_version(str(ps["normalizer_version"]))
        if recorded is None:
            return None
        if self.requested is not None and recorded is NORM1:
            return recorded, self.requested
        return recorded, recorded

    def _currency(self, ps: dict[str, Any], retrieved: TextResult) -> Currency:
        s = self.session
        if not s.can_read(ps["collection"]):
            return Currency("unavailable", "out_of_scope")
        if ps.get("derived_from"):
            return Currency("unchecked", "derived_text", "state comes from its lineage")
        norms = self._norms(ps)
        if norms is None:
            return Currency(
                "unchecked",
                "unknown_normalizer",
                f"normalizer {ps['normalizer_version']!r} is not known here",
            )
        recorded, norm = norms
        version = norm.version
        doc = ps["document"]["document_id"]
        revs = self.revisions(doc)
        if not revs:
            return Currency(
                "unchecked", "no_revisions_imported", f"no revision of {doc} was imported", normalizer=version
            )
        latest = revs[-1]
        if not s.can_read(latest.collection):
            return Currency("unavailable", "out_of_scope")
        deleted = self._deleted_now(doc, latest)
        cited = self.cited_revision(ps)
        cited_text = self.revision_text(cited) if cited is not None else None
        if deleted is not None:
            return Currency(
                "unavailable",
                "source_deleted",
                f"deleted at {deleted[1]} (log entry {deleted[0]}): {deleted[2]}",
                cited,
                None,
                cited_text=cited_text,
                normalizer=version,
            )
        if cited is None:
            return Currency(
                "unchecked",
                "cited_revision_not_imported",
                f"revision {ps['document']['revision']!r} of {doc} was never imported",
                current=latest,
                normalizer=version,
            )
        latest_text = self.revision_text(latest)
        if latest_text.state == "purged":
            return Currency(
                "unavailable",
                "latest_revision_purged",
                "purged by retention",
                cited,
                latest,
                None,
                cited_text,
                version,
            )
        if not latest_text.verified or latest_text.text is None:
            return Currency(
                "unchecked",
                "latest_revision_unreadable",
                f"the latest revision's text is {latest_text.state}",
                cited,
                latest,
                None,
                cited_text,
                version,
            )
        quote = self._quote(ps, retrieved, cited, cited_text, recorded)
        if quote is None:
            return Currency(
                "unchecked",
                "historical_text_unavailable",
                f"retrieved text is {retrieved.state}, cited revision text is {cited_text.state}"
                if cited_text
                else retrieved.state,
                cited,
                latest,
                None,
                cited_text,
                version,
            )
        rel = self._verdict(ps, quote, cited, cited_text, latest, latest_text, recorded, norm)
        return Currency(rel.state, rel.reason, "", cited, latest, rel, cited_text, version)

    def _verdict(
        self,
        ps: dict[str, Any],
        quote: str,
        cited: RevisionRow,
        cited_text: TextResult | None,
        latest: RevisionRow,
        latest_text: TextResult,
        recorded: Normalizer = NORM1,
        norm: Normalizer = NORM1,
    ) -> Relocation:
        """relocate.py's verdict, memoized: many answers cite the same chunk of a revision."""
        loc = locator_of(ps)
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
                old = _stand_in(ps, quote, loc, norm)
            rel = relocate(quote, loc, old, later, norm)
        return self._verdicts.put(key, rel)

    def _quote(
        self,
        ps: dict[str, Any],
        retrieved: TextResult,
        cited: RevisionRow,
        cited_text: TextResult | None,
        recorded: Normalizer = NORM1,
    ) -> str | None:
        """The historical quote: the retained passage, else the cited revision at its locator."""
        if retrieved.verified and retrieved.text is not None:
            return recorded.quote(retrieved.text)
        if cited_text is not None and cited_text.verified and cited_text.text is not None:
            loc = ps["locator"]
            return self.normalized(cited, cited_text, recorded)[loc["char_start"] : loc["char_end"]] or None
        return None

    # -- answer time -------------------------------------------------------------------

    def _instants_of(self, document_id: str) -> list[datetime] | None:
        if document_id not in self._instants:
            found = [_aware(r.committed_at) for r in self.revisions(document_id)]
            dated = [x for x in found if x is not None]
            self._instants[document_id] = dated if len(dated) == len(found) else None
        return self._instants[document_id]

    def _holds_quote(
        self,
        ps: dict[str, Any],
        quote: str,
        cited: RevisionRow,
        cited_text: TextResult | None,
        rev: RevisionRow,
        rev_text: str,
        recorded: Normalizer,
        norm: Normalizer,
    ) -> bool:
        loc = locator_of(ps)
        key = (norm.version, quote, loc, cited.content_sha256, rev.content_sha256)
        found = self._holds.get(key)
        if found is None:
            old = cited_text.text if cited_text is not None and cited_text.verified else None
            q, carried = carry(quote, loc, old, recorded, norm)
            if old is None:
                old = _stand_in(ps, q, carried, norm)
            found = self._holds.put(key, still_says(q, carried, old, rev_text, norm))
        return found

    def _answer_time(
        self, ps: dict[str, Any], retrieved: TextResult, cur: Currency, generated_at: str
    ) -> AnswerTime:
        """Was the cited revision already superseded when the answer was generated?

        From the revisions' own commit instants: the revision in force at answer time is
        the last one committed at or before `generated_at` (commit instant, any offset,
        then log order). If it is a later one than the cited revision, the answer was
        given from a superseded revision; whether the quote still stood in it, and since
        which revision it had not, is decided by the same anchored search as `moved`.
        """
        unknown = answer_time_unknown
        if cur.reason == "out_of_scope":
            return unknown("out_of_scope", generated_at)
        if ps.get("derived_from"):
            return unknown("derived_text", generated_at)
        norms = self._norms(ps)
        if norms is None:
            return unknown("unknown_normalizer", generated_at)
        doc = ps["document"]["document_id"]
        revs = self.revisions(doc)
        if not revs:
            return unknown("no_revisions_imported", generated_at)
        cited = self.cited_revision(ps)
        if cited is None:
            return unknown("cited_revision_not_imported", generated_at)
        instants = self._instants_of(doc)
        when = _aware(generated_at)
        if instants is None or when is None:
            return unknown("undated", generated_at, cited=cited)
        ci = revs.index(cited)
        if instants[ci] > when:
            return unknown("cited_after_answer", generated_at, cited=cited)
        k = bisect_right(instants, when) - 1
        if k <= ci:
            return AnswerTime("current", "latest_at_answer", generated_at, cited=cited, in_force=cited)
        # the rest depends on the answer's time only through the revision in force (k):
        # answers given from the same superseded revision share it
        key = _currency_key(ps, retrieved)
        if key is not None:
            memo = self._superseded.get((*key, k))
            if memo is None:
                memo = self._superseded.put(
                    (*key, k), self._in_force(ps, retrieved, cited, revs, instants, ci, k)
                )
            return replace(memo, generated_at=generated_at)
        return replace(self._in_force(ps, retrieved, cited, revs, instants, ci, k), generated_at=generated_at)

    def _in_force(
        self,
        ps: dict[str, Any],
        retrieved: TextResult,
        cited: RevisionRow,
        revs: list[RevisionRow],
        instants: list[datetime],
        ci: int,
        k: int,
    ) -> AnswerTime:
        """The answer-time fact when revision `k`, later than the cited `ci`, was in force
        (`generated_at` left empty: the caller fills it in)."""
        s = self.session
        norms = self._norms(ps)
        assert norms is not None  # noqa: S101 - the caller returned earlier otherwise
        recorded, norm = norms
        generated_at = ""
        in_force = revs[k]
        is_current = k == len(revs) - 1
        if not s.can_read(in_force.collection):
            return answer_time_unknown("out_of_scope", generated_at, cited=cited)
        cited_text = self.revision_text(cited)
        quote = self._quote(ps, retrieved, cited, cited_text, recorded)
        base = AnswerTime(
            "superseded", "", generated_at, cited=cited, in_force=in_force, in_force_is_current=is_current
        )
        if quote is None:
            return base.but("in_force_unreadable", "the historical quote cannot be read")
        text = self.revision_text(in_force)
        if not text.verified or text.text is None:
            return base.but("in_force_unreadable", f"the revision in force at answer time is {text.state}")
        if self._holds_quote(ps, quote, cited, cited_text, in_force, text.text, recorded, norm):
            return base.but("unchanged_before_answer")
        rel = self._verdict(ps, quote, cited, cited_text, in_force, text, recorded, norm)
        # The earliest revision since which, up to the answer, the quote had not stood.
        first = k
        for j in range(k - 1, ci, -1):
            t = self.revision_text(revs[j])
            if not t.verified or t.text is None or not s.can_read(revs[j].collection):
                break
            if self._holds_quote(ps, quote, cited, cited_text, revs[j], t.text, recorded, norm):
                break
            first = j
        return base.but(
            "changed_before_answer", relocation=rel, changed_in=revs[first], changed_at=instants[first]
        )


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


def _with_answer_time(cur: Currency, at: AnswerTime) -> Currency:
    return Currency(
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


def _stand_in(ps: dict[str, Any], quote: str, loc: Locator, norm: Normalizer = NORM1) -> str:
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
    if ps["chunk"].get("pipeline_version") != CHUNKER_VERSION or loc.char_start < 3:
        return ""
    stand_in = "x" * (loc.char_start - 2) + "\n\n" + quote
    normalized = norm.structure(stand_in).text
    return stand_in if normalized[loc.char_start : loc.char_start + len(quote)] == quote else ""


def derived_transform(ps: dict[str, Any], retrieved: TextResult, source: TextResult | None) -> Transform:
    """A passage derived from a note or answer: is it that source's stored text (or part of it)?"""
    if source is None:
        return Transform("source_missing", f"{ps.get('derived_from')!r} is not in this vault")
    if ps["retrieved_sha256"] == source.digest:
        return Transform("matches_source", "the passage is the source's stored text (same digest)")
    if not source.verified or source.text is None:
        return Transform("source_unreadable", f"the source's text is {source.state}")
    if not retrieved.verified or retrieved.text is None:
        return Transform("passage_unreadable", f"retrieved text is {retrieved.state}")
    quote = normalize_quote(retrieved.text)
    if quote and quote in normalize(source.text):
        return Transform("found_in_source", "the passage quotes the source's stored text")
    return Transform("not_in_source", "the passage does not occur in the source's stored text")


def _currency_key(ps: dict[str, Any], retrieved: TextResult) -> tuple[Any, ...] | None:
    """What a passage's currency depends on, or None when it is not a plain shape (never
    memoized then).  Only exact str and int values count, so 1 and "1" never share a key."""
    doc, loc = ps.get("document"), ps.get("locator")
    if not isinstance(doc, dict) or not isinstance(loc, dict):
        return None
    heading = loc.get("heading_path")
    if not isinstance(heading, list) or not all(type(h) is str for h in heading):
        return None
    values = (
        ps.get("collection"),
        ps.get("derived_from") or "",
        ps.get("normalizer_version"),
        doc.get("document_id"),
        doc.get("revision"),
        loc.get("paragraph"),
        loc.get("char_start"),
        loc.get("char_end"),
        retrieved.digest,
        retrieved.state,
    )
    if not all(type(v) is str or type(v) is int for v in values):
        return None
    return (*values, tuple(heading))
