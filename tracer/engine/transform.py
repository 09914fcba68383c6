"""The transformation trace: was the retained passage the text at its locator in the
revision it names?

This is integrity of the trace chain, not currency, so `verify` runs it too. Its verdict
is a pure function of content-addressed inputs (`store.records.TransformKey`: passage
digest, cited revision, normalizer, span), so a run computes it once per distinct key,
never per reference. Texts come through a `CurrencyEngine` (read and released only when
their digest verifies); the paging a long verification needs lives here, not there.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from store.queries import RevisionRow
from store.records import TransformKey
from tracer.engine.currency import CurrencyEngine
from tracer.engine.evidence import TextResult
from tracer.engine.memo import Memo
from tracer.engine.normalizers import NORM1, Normalizer, by_version
from tracer.engine.textnorm import normalize, normalize_quote
from tracer.engine.vocabulary import FINDINGS, Severity, TransformState

__all__ = ["TRANSFORM_FAILURES", "Transform", "TransformChecker", "derived_transform", "worst_failure"]

#: transform states that are a failure of the trace chain, alarms first: exactly those
#: `tracer verify` reports as a `transform_<state>` finding (the vocabulary's registry)
TRANSFORM_FAILURES: tuple[TransformState, ...] = tuple(
    TransformState(kind.value.removeprefix("transform_"))
    for severity in (Severity.ALARM, Severity.WARNING)
    for kind, term in FINDINGS.items()
    if kind.value.startswith("transform_") and term.severity is severity
)


def worst_failure(states: Iterable[TransformState]) -> TransformState | None:
    """The first of `TRANSFORM_FAILURES` among `states`; None when none failed."""
    found = set(states)
    return next((s for s in TRANSFORM_FAILURES if s in found), None)


@dataclass(frozen=True)
class Transform:
    """Was the retrieved text really at its locator in the revision it names?"""

    state: TransformState
    detail: str = ""


class TransformChecker:
    """Transform verdicts for one run, memoized by `TransformKey`.

    A long pass (verify) goes page by page through passages but keeps coming back to the
    same popular revisions: `next_page` pins the verified normalized revisions a page
    will use, so they are neither decrypted nor normalized again and a pin cannot be
    evicted by the page's other revisions before it is used.
    """

    def __init__(self, engine: CurrencyEngine, memo: int = 65536, pins: int = 4096):
        self.engine = engine
        self._memo: Memo[TransformKey, Transform] = Memo(memo)
        self._paging = False
        self._pinned: dict[tuple[str, str], str] = {}
        self._verified_norm: Memo[tuple[str, str], str] = Memo(pins)

    def known(self, key: TransformKey, memo: bool | None = None) -> Transform | None:
        """The verdict already computed for `key` in this run, if any. `memo` is
        `key.memoizable`, for callers that computed it once for many lookups."""
        if memo is None:
            memo = key.memoizable
        return self._memo.get(key) if memo else None

    def check(self, key: TransformKey, retrieved: TextResult, memo: bool | None = None) -> Transform:
        """The verdict for `key`, given its retrieved text as read in this run."""
        if memo is None:
            memo = key.memoizable
        found = self._memo.get(key) if memo else None
        if found is None:
            found = self._check(key, retrieved)
            if memo:
                self._memo.put(key, found)
        return found

    def next_page(self, revisions: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        """Start a page: passage texts are dropped, the page's (revision digest,
        collection) pairs whose verified normalized text is still cached are pinned for
        the whole page, and the pairs returned must be read."""
        self._paging = True
        self.engine.drop_texts()
        self._pinned = {}
        todo: list[tuple[str, str]] = []
        for pair in dict.fromkeys(revisions):
            norm = self._verified_norm.get(pair)
            if norm is None:
                todo.append(pair)
            else:
                self._pinned[pair] = norm
        return todo

    def _check(self, key: TransformKey, retrieved: TextResult) -> Transform:
        recorded = by_version(key.normalizer_version)
        if recorded is None:
            return Transform(
                TransformState.UNKNOWN_NORMALIZER, f"normalizer {key.normalizer_version!r} is not known here"
            )
        if recorded is not NORM1:
            return self._under(key, retrieved, recorded)
        engine = self.engine
        cited = engine.cited_revision(key.document_id, key.revision)
        if cited is None:
            return Transform(TransformState.REVISION_NOT_IMPORTED, "the cited revision was never imported")
        norm = self._cited_norm(cited, retrieved)
        if isinstance(norm, Transform):
            return norm
        if not retrieved.verified or retrieved.text is None:
            return Transform(TransformState.PASSAGE_UNREADABLE, f"retrieved text is {retrieved.state}")
        return _found(norm, normalize_quote(retrieved.text), key)

    def _cited_norm(self, cited: RevisionRow, retrieved: TextResult) -> str | Transform:
        """The cited revision's ``/1`` text: pinned by an earlier page, or read and normalized
        now (pinned when paging), once both texts are known readable; else why not."""
        pair = (cited.content_sha256, cited.collection)
        norm = self._pinned.get(pair)
        if norm is not None:
            return norm
        text = self.engine.revision_text(cited)
        if not text.verified or text.text is None:
            return Transform(TransformState.REVISION_UNREADABLE, f"cited revision text is {text.state}")
        if not retrieved.verified or retrieved.text is None:
            return Transform(TransformState.PASSAGE_UNREADABLE, f"retrieved text is {retrieved.state}")
        norm = self.engine.normalized(cited, text)
        if self._paging:
            self._pinned[pair] = self._verified_norm.put(pair, norm)
        return norm

    def _under(self, key: TransformKey, retrieved: TextResult, norm: Normalizer) -> Transform:
        """A passage recorded under another normalizer version than ``/1``."""
        engine = self.engine
        cited = engine.cited_revision(key.document_id, key.revision)
        if cited is None:
            return Transform(TransformState.REVISION_NOT_IMPORTED, "the cited revision was never imported")
        text = engine.revision_text(cited)
        if not text.verified or text.text is None:
            return Transform(TransformState.REVISION_UNREADABLE, f"cited revision text is {text.state}")
        if not retrieved.verified or retrieved.text is None:
            return Transform(TransformState.PASSAGE_UNREADABLE, f"retrieved text is {retrieved.state}")
        return _found(engine.normalized(cited, text, norm), norm.quote(retrieved.text), key)


def _found(norm_text: str, quote: str, key: TransformKey) -> Transform:
    if norm_text[key.char_start : key.char_end] == quote:
        return Transform(TransformState.FOUND_AT_LOCATOR)
    where = norm_text.find(quote) if quote else -1
    if where >= 0:
        return Transform(TransformState.FOUND_ELSEWHERE, f"found at characters {where}..{where + len(quote)}")
    return Transform(TransformState.NOT_FOUND, "the retrieved text does not occur in the cited revision")


def derived_transform(
    source_id: str, retrieved_sha256: str, retrieved: TextResult, source: TextResult | None
) -> Transform:
    """A passage derived from a note or answer: is it that source's stored text (or part of it)?"""
    if source is None:
        return Transform(TransformState.SOURCE_MISSING, f"{source_id!r} is not in this vault")
    if retrieved_sha256 == source.digest:
        return Transform(
            TransformState.MATCHES_SOURCE, "the passage is the source's stored text (same digest)"
        )
    if not source.verified or source.text is None:
        return Transform(TransformState.SOURCE_UNREADABLE, f"the source's text is {source.state}")
    if not retrieved.verified or retrieved.text is None:
        return Transform(TransformState.PASSAGE_UNREADABLE, f"retrieved text is {retrieved.state}")
    quote = normalize_quote(retrieved.text)
    if quote and quote in normalize(source.text):
        return Transform(TransformState.FOUND_IN_SOURCE, "the passage quotes the source's stored text")
    return Transform(TransformState.NOT_IN_SOURCE, "the passage does not occur in the source's stored text")
