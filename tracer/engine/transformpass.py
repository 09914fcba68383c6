"""Verification's transform pass: each retained passage at its locator in its revision.

Passages are checked during the log pass, a page of manifests at a time, on the payloads
that pass already decoded: the texts a page needs (retrieved texts and cited revisions)
come from one batched read, and the page's passages are checked grouped by cited
revision so each is normalized once per page. Passages derived from an answer or note
wait until the end (their source may come later in the log). Findings are reported in
log order, as a one-by-one pass would.

Texts, revision lists and deletions come from a `TextSource`: the session's vault for
`tracer verify`, an export for `tracer verify-dataset`, so both run this one pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Unpack

from store import audit
from store.records import TransformKey
from store.vault import Vault
from tracer.engine.currency import CurrencyEngine
from tracer.engine.jsonshapes import FindingRecord
from tracer.engine.logcheck import Finding, Task, finding, manifest_tasks
from tracer.engine.memo import Memo
from tracer.engine.session import Session
from tracer.engine.textsource import TextSource, VaultSource
from tracer.engine.transform import Transform, TransformChecker, derived_transform
from tracer.engine.verifyrun import Sizes, Tally
from tracer.engine.vocabulary import FindingKind

__all__ = ["TRANSFORM_FINDINGS", "TransformPass"]

#: transformation-trace verdicts that are findings (the others are counted only)
#: transformation-trace verdicts that are findings, and the kind each is reported as
TRANSFORM_FINDINGS: dict[str, FindingKind] = {
    "found_elsewhere": FindingKind.TRANSFORM_FOUND_ELSEWHERE,
    "not_found": FindingKind.TRANSFORM_NOT_FOUND,
    "unknown_normalizer": FindingKind.TRANSFORM_UNKNOWN_NORMALIZER,
    "not_in_source": FindingKind.TRANSFORM_NOT_IN_SOURCE,
    "source_missing": FindingKind.TRANSFORM_SOURCE_MISSING,
}


class TransformPass:
    """Collects passages' transform tasks and checks them; without a session or source
    (nobody to read texts as) it collects nothing.  Covered manifests are traced again
    (an incremental verification, `finish` with a start) only on a vault."""

    def __init__(
        self, vault: Vault | None, session: Session | TextSource | None, tally: Tally, sizes: Sizes
    ) -> None:
        self.vault = vault
        self.scopes: list[str] = list(session.scopes) if isinstance(session, Session) else []
        self.source: TextSource | None = VaultSource(session) if isinstance(session, Session) else session
        self.tally = tally
        self.sizes = sizes
        self._sources: Memo[str, tuple[str, str]] = Memo(4096)
        self._page: list[Task] = []
        self._keys: dict[TransformKey, TransformKey] = {}
        self._deferred: list[Task] = []
        self._found: list[tuple[int, int, Finding]] = []
        # verdicts by everything a non-derived passage's transform depends on: popular
        # chunks are retrieved by many answers and are checked once
        self._checker: TransformChecker | None = None

    def add(self, tasks: Iterable[Task]) -> None:
        """Passages of manifests just read; a full page is checked at once."""
        if self.source is None:
            return
        # one key object per distinct passage key on a page: each run's are separate
        # copies after pickling, and a page holds many repeats of popular chunks
        keys = self._keys
        for task in tasks:
            if task.memo:
                same = keys.setdefault(task.key, task.key)
                if same is not task.key:
                    task = task.with_key(same)
            self._page.append(task)
        if len(self._page) >= self.sizes.transform_page:
            self._check(self._page)
            self._page = []
            self._keys = {}

    def defer(self, tasks: Iterable[Task]) -> None:
        """Passages derived from an answer or note: checked at the end."""
        if self.source is None:
            return
        self._deferred.extend(tasks)

    def finish(self, start: int, changed: set[str]) -> None:
        """Check what is left, and covered manifests (before `start`) whose trace reads a
        text in `changed` or purged since; add the findings in log order."""
        if self.source is None:
            return
        if start:
            self._retrace_covered(start, changed)
        self._check(self._page)
        self._page = []
        self._check(self._deferred)
        self._deferred = []
        self._found.sort(key=lambda t: (t[0], t[1]))
        self.tally.findings.extend(f for _seq, _pos, f in self._found)
        self._found = []
        self.tally.progress("trace", 1, 1)

    def _retrace_covered(self, start: int, changed: set[str]) -> None:
        """Covered manifests whose transformation trace reads a text that is no longer
        intact (altered, lost or purged since): traced again, as a full pass would."""
        vault = self.vault
        if vault is None:
            raise ValueError("covered manifests are traced again only on a vault")
        changed = changed | set(audit.tombstoned_digests(vault, since=start))
        scopes = self.scopes
        for seq in audit.covered_manifests_citing(vault, sorted(changed), start):
            for _seq, _kind, data, _leaf in vault.raw_entries(seq, seq + 1):
                tasks, deferred = manifest_tasks(scopes, seq, data)
                self._page.extend(tasks)
                self._deferred.extend(deferred)

    def _check(self, tasks: list[Task]) -> None:
        if self.source is None or not tasks:
            return
        checker = self._checker
        if checker is None:
            # one checker (and engine) for the whole pass: popular revisions stay
            # normalized across pages, and each distinct key is checked once
            checker = self._checker = TransformChecker(CurrencyEngine(self.source), memo=32768)
        pending = self._pending(checker, tasks)
        if not pending:
            return
        checker.engine.prefetch_revisions(
            {t.key.document_id for t in pending if type(t.key.document_id) is str}
        )
        for chunk in self._chunks(pending):
            self._check_chunk(checker, chunk)

    def _pending(self, checker: TransformChecker, tasks: list[Task]) -> list[Task]:
        """Verdicts already known (popular chunks are retrieved by many answers) are
        recorded before any text is read: the tasks returned need their texts."""
        pending: list[Task] = []
        for task in tasks:
            known = checker.known(task.key, task.memo)
            if known is None:
                pending.append(task)
            else:
                self._verdict(task, known)
        return pending

    def _chunks(self, pending: list[Task]) -> Iterator[list[Task]]:
        """The tasks by cited revision, a chunk of `text_chunk` revisions at a time, so a
        page can hold many passages (each revision normalized once per page) while few
        texts are held at once."""
        ranked = sorted(((_revision_key(t), i) for i, t in enumerate(pending)))
        chunk: list[Task] = []
        revisions = 0
        last: tuple[str, str] | None = None
        for rk, i in ranked:
            if rk != last:
                if revisions >= self.sizes.text_chunk:
                    yield chunk
                    chunk, revisions = [], 0
                revisions += 1
                last = rk
            chunk.append(pending[i])
        if chunk:
            yield chunk

    def _check_chunk(self, checker: TransformChecker, chunk: list[Task]) -> None:
        engine = checker.engine
        seen: set[tuple[TransformKey, str | None]] = set()
        unique = []
        for task in chunk:
            mark = (task.key, task.derived_from)
            if mark not in seen:
                seen.add(mark)
                unique.append(task)
        passages, revisions = self._page_texts(engine, unique)
        # one blob scan per chunk: DuckDB reads texts by scanning, however few are asked
        engine.prefetch(passages + checker.next_page(revisions), batch=len(unique) * 2 + 1)
        for task in chunk:
            try:
                t = self._transform(checker, task)
            except (KeyError, TypeError, ValueError) as exc:
                self._find(
                    task.seq,
                    task.pos,
                    FindingKind.ENTRY_MALFORMED,
                    f"passage unreadable: {exc!r}",
                    kind=task.kind,
                )
                continue
            if t is not None:
                self._verdict(task, t)

    def _verdict(self, task: Task, t: Transform) -> None:
        self.tally.bump(f"transform_{t.state}")
        kind = TRANSFORM_FINDINGS.get(t.state)
        if kind is not None:
            self._find(
                task.seq,
                task.pos,
                kind,
                t.detail,
                answer_id=task.answer_id,
                passage_id=task.passage_id,
                document_id=task.key.document_id,
                revision=task.key.revision,
            )

    def _find(
        self, seq: int, pos: int, kind: FindingKind, detail: str, /, **record: Unpack[FindingRecord]
    ) -> None:
        self._found.append((seq, pos, finding(kind, seq, detail, **record)))

    def _source_ref(self, source: str) -> tuple[str, str] | None:
        """(digest, collection) of the stored text of the answer or note `source`."""
        src = self._sources.get(source)
        if src is None:
            found = self.source.answer_text_ref(source) if self.source is not None else None
            if found is not None:
                src = self._sources.put(source, found)
        return src

    def _page_texts(
        self, engine: CurrencyEngine, tasks: list[Task]
    ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """(digest, collection) of every readable text a page's passages will ask for:
        the passages' own texts and their sources', then the cited revisions'."""
        assert self.source is not None  # noqa: S101 - checked by the caller
        can_read = self.source.can_read
        items: list[tuple[str, str]] = []
        revisions: list[tuple[str, str]] = []
        for task in tasks:
            try:
                self._task_texts(engine, task, items, revisions)
            except (KeyError, TypeError, ValueError, AttributeError):
                continue  # reported when the passage itself is checked
        return [(d, c) for d, c in items if can_read(c)], [(d, c) for d, c in revisions if can_read(c)]

    def _task_texts(
        self,
        engine: CurrencyEngine,
        task: Task,
        items: list[tuple[str, str]],
        revisions: list[tuple[str, str]],
    ) -> None:
        """The texts one passage asks for: its own and its source's, or its cited revision's."""
        assert self.source is not None  # noqa: S101 - checked by the caller
        key = task.key
        coll = str(key.collection)
        if not self.source.can_read(coll):
            return
        items.append((str(key.retrieved_sha256), coll))
        if task.derived_from:
            src = self._source_ref(str(task.derived_from))
            if src is not None:
                items.append(src)
            return
        cited = engine.cited_revision(key.document_id, key.revision)
        if cited is not None:
            revisions.append((cited.content_sha256, cited.collection))

    def _transform(self, checker: TransformChecker, task: Task) -> Transform | None:
        assert self.source is not None  # noqa: S101 - checked by the caller
        key, source = task.key, task.derived_from
        if not source:
            known = checker.known(key, task.memo)
            if known is not None:
                return known
        retrieved = checker.engine.text(key.retrieved_sha256, key.collection)
        if not source:
            return checker.check(key, retrieved, task.memo)
        src = self._source_ref(str(source))
        if src is not None and not self.source.can_read(src[1]):
            return None
        return derived_transform(
            str(source), key.retrieved_sha256, retrieved, checker.engine.text(*src) if src else None
        )


def _revision_key(task: Task) -> tuple[str, str]:
    return (str(task.key.document_id), str(task.key.revision))
