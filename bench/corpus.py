"""A deterministic synthetic corpus: documents with revisions, and what an assistant answered.

Everything derives from fixed seeds, so the same `--passages` always yields the same
documents, revisions, questions, answers and signed manifests (only the AES-GCM nonces
and data keys the vault draws at ingest differ between builds).

Proportions (per 10 passages = 1 manifest):
  * one document per 100 passages; ~12 paragraphs of 0.7-1.4 KB under 3-4 headings;
  * 1-4 revisions per document (mean ~2): word edits (-> stale), an inserted intro
    (-> moved), whitespace-only re-wraps (must stay verified), a duplicated paragraph in
    an appendix (-> ambiguous);
  * 1 % of documents deleted in the second half of the timeline (-> unavailable);
  * 2 % of manifests are memory notes with lineage; 3 % of answers cite a note through a
    passage `derived_from` it;
  * 15 % of passages have a model input that differs from the retrieved text (truncated);
  * tombstones (chosen by bench/gen.py): 3 % of superseded revisions and one retrieved
    text per 500 manifests.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from store.producer import draft_to_input
from tracer.engine.textnorm import CHUNKER_VERSION, NORMALIZER_VERSION, Chunk, chunk_document

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SPAN = timedelta(days=180)
COLLECTIONS = (("support", 0.6), ("ops", 0.3), ("legal", 0.1))
PRODUCER_OF = {"support": "support-assistant", "ops": "ops-assistant", "legal": "support-assistant"}
PASSAGES_PER_MANIFEST = 10
MANIFESTS_PER_BATCH = 1000

_SYLL = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "de", "pa", "qu", "ber", "str", "ion", "al", "en")


def _vocab() -> list[str]:
    rng = random.Random(7)
    words = {"".join(rng.choice(_SYLL) for _ in range(rng.randint(1, 4))) for _ in range(6000)}
    return sorted(words)


VOCAB = _vocab()


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def sentences(rng: random.Random, target: int) -> str:
    out: list[str] = []
    n = 0
    while n < target:
        words = rng.choices(VOCAB, k=rng.randint(8, 16))
        s = " ".join(words)
        s = s[0].upper() + s[1:] + "."
        out.append(s)
        n += len(s) + 1
    return " ".join(out)


@lru_cache(maxsize=65536)
def paragraph(seed: int) -> str:
    rng = random.Random(seed)
    return sentences(rng, rng.randint(700, 1400))


Block = tuple[str, int, str] | tuple[str, int]  # ("h", level, title) | ("p", seed)


@dataclass
class Revision:
    label: str
    committed_at: datetime
    blocks: tuple[Any, ...]
    rewrap: bool = False
    edit: str = "initial"


@dataclass
class Document:
    index: int
    document_id: str
    collection: str
    title: str
    revisions: list[Revision] = field(default_factory=list)
    deleted_at: datetime | None = None


def _rewrap(text: str, width: int = 72) -> str:
    lines: list[str] = []
    line = ""
    for w in text.split(" "):
        if line and len(line) + 1 + len(w) > width:
            lines.append(line + " ")
            line = w
        else:
            line = f"{line} {w}" if line else w
    lines.append(line)
    return "\r\n".join(lines)


def render(rev: Revision) -> str:
    parts: list[str] = []
    for b in rev.blocks:
        if b[0] == "h":
            parts.append("#" * b[1] + " " + b[2])
        else:
            text = paragraph(b[1])
            parts.append(_rewrap(text) if rev.rewrap else text)
    sep = "\r\n\r\n\r\n" if rev.rewrap else "\n\n"
    return sep.join(parts) + ("\r\n" if rev.rewrap else "\n")


def _new_document(i: int) -> Document:
    rng = random.Random(1_000_003 * (i + 1))
    r = rng.random()
    collection = "support" if r < 0.6 else "ops" if r < 0.9 else "legal"
    title = " ".join(w.capitalize() for w in rng.choices(VOCAB, k=3))
    doc = Document(i, f"doc-{i:06d}", collection, title)
    blocks: list[Any] = [("h", 1, title)]
    seed = i * 1000
    for s in range(rng.randint(3, 4)):
        blocks.append(("h", 2, f"Section {s + 1} {rng.choice(VOCAB)}"))
        for _ in range(rng.randint(2, 4)):
            seed += 1
            blocks.append(("p", seed))
    first = T0 - timedelta(days=60) + timedelta(seconds=37 * i)
    doc.revisions.append(Revision("r1", first, tuple(blocks)))
    extra = rng.choices((0, 1, 2, 3), weights=(40, 30, 20, 10))[0]
    times = sorted(T0 + timedelta(seconds=rng.randrange(int(SPAN.total_seconds()))) for _ in range(extra))
    for k, when in enumerate(times, start=2):
        prev = doc.revisions[-1]
        new = list(prev.blocks)
        edit = rng.choices(("edit", "insert", "rewrap", "duplicate"), weights=(50, 25, 15, 10))[0]
        paras = [j for j, b in enumerate(new) if b[0] == "p"]
        if edit == "edit":
            for j in rng.sample(paras, min(len(paras), rng.randint(1, 2))):
                seed += 1
                new[j] = ("p", seed)
        elif edit == "insert":
            seed += 1
            new.insert(1, ("p", seed))
        elif edit == "duplicate":
            new.extend([("h", 2, "Appendix"), new[rng.choice(paras)]])
        doc.revisions.append(Revision(f"r{k}", when, tuple(new), rewrap=(edit == "rewrap"), edit=edit))
    if rng.random() < 0.01:
        doc.deleted_at = T0 + SPAN / 2 + timedelta(seconds=rng.randrange(int(SPAN.total_seconds() / 2)))
    return doc


@lru_cache(maxsize=4096)
def _chunks(doc_index: int, rev_index: int, corpus_id: int) -> tuple[Chunk, ...]:
    doc = _CORPORA[corpus_id].documents[doc_index]
    return tuple(chunk_document(render(doc.revisions[rev_index])))


_CORPORA: dict[int, Corpus] = {}


def revision_input(doc: Document, rev: Revision) -> dict[str, Any]:
    return {
        "schema": "tracer.source_revision/v1",
        "document_id": doc.document_id,
        "revision": rev.label,
        "source_system": "northwind-wiki",
        "source_revision": f"{doc.document_id}-{rev.label}-{rev.committed_at:%Y%m%d%H%M}",
        "path": f"wiki/{doc.collection}/{doc.document_id}.md",
        "title": doc.title,
        "uri": f"docstore://{doc.collection}/{doc.document_id}",
        "backend": "docstore",
        "collection": doc.collection,
        "committed_at": iso(rev.committed_at),
        "content": render(rev),
    }


def deletion_input(doc: Document) -> dict[str, Any]:
    assert doc.deleted_at is not None
    return {
        "schema": "tracer.document_deletion/v1",
        "document_id": doc.document_id,
        "deleted_at": iso(doc.deleted_at),
        "reason": "page removed from the wiki",
    }


@dataclass
class Batch:
    """One ingest call's worth of inputs, in time order."""

    index: int
    now: str
    revisions: list[dict[str, Any]]
    deletions: list[dict[str, Any]]
    manifests: list[dict[str, Any]]  # signed input files {"envelope", "contents"}
    purge_passages: list[str]  # retrieved digests chosen for retention purges


class Corpus:
    def __init__(self, passages: int):
        self.passages = passages
        self.n_manifests = max(1, passages // PASSAGES_PER_MANIFEST)
        self.n_docs = max(10, passages // 100)
        self.documents = [_new_document(i) for i in range(self.n_docs)]
        self.by_collection: dict[str, list[Document]] = {}
        for d in self.documents:
            self.by_collection.setdefault(d.collection, []).append(d)
        _CORPORA[id(self)] = self
        self.stats: dict[str, int] = {
            "documents": self.n_docs,
            "revisions": sum(len(d.revisions) for d in self.documents),
            "deleted_documents": sum(1 for d in self.documents if d.deleted_at),
            "manifests": 0,
            "passages": 0,
            "notes": 0,
            "derived_passages": 0,
        }
        self._notes: deque[tuple[str, str, str]] = deque(maxlen=64)
        self._recent_answers: deque[str] = deque(maxlen=64)

    # -- timeline ----------------------------------------------------------------------

    def manifest_time(self, i: int) -> datetime:
        return T0 + SPAN * (i / self.n_manifests)

    def superseded_revisions(self) -> Iterator[tuple[Document, Revision]]:
        for d in self.documents:
            for rev in d.revisions[:-1]:
                yield d, rev

    def batches(self) -> Iterator[Batch]:
        """Initial revisions first (1,000 per batch), then 1,000 manifests per batch with
        the revisions and deletions that fall in the batch's time window."""
        initial = [(d, d.revisions[0]) for d in self.documents]
        index = 0
        for lo in range(0, len(initial), MANIFESTS_PER_BATCH):
            revs = [revision_input(d, r) for d, r in initial[lo : lo + MANIFESTS_PER_BATCH]]
            yield Batch(index, iso(T0 - timedelta(days=1)), revs, [], [], [])
            index += 1
        later = sorted(
            ((r.committed_at, d.index, k) for d in self.documents for k, r in enumerate(d.revisions) if k),
        )
        deletions = sorted((d.deleted_at, d.index) for d in self.documents if d.deleted_at)
        ri = di = 0
        for lo in range(0, self.n_manifests, MANIFESTS_PER_BATCH):
            hi = min(self.n_manifests, lo + MANIFESTS_PER_BATCH)
            end = self.manifest_time(hi) if hi < self.n_manifests else T0 + SPAN + timedelta(days=1)
            revs: list[dict[str, Any]] = []
            while ri < len(later) and later[ri][0] < end:
                _t, dix, k = later[ri]
                doc = self.documents[dix]
                revs.append(revision_input(doc, doc.revisions[k]))
                ri += 1
            dels: list[dict[str, Any]] = []
            while di < len(deletions) and deletions[di][0] < end:
                dels.append(deletion_input(self.documents[deletions[di][1]]))
                di += 1
            purge: list[str] = []
            mans = [self.manifest(i, purge) for i in range(lo, hi)]
            yield Batch(index, iso(end), revs, dels, mans, purge)
            index += 1

    # -- one manifest --------------------------------------------------------------------

    def _pick_revision(self, doc: Document, t: datetime, rng: random.Random) -> int:
        idx = 0
        for k, rev in enumerate(doc.revisions):
            if rev.committed_at + timedelta(days=1) <= t:  # the index picks it up a day later
                idx = k
        if idx and rng.random() < 0.1:  # a stale retrieval index
            idx -= 1
        return idx

    def _pick_doc(self, collection: str, t: datetime, rng: random.Random) -> Document:
        docs = self.by_collection.get(collection) or self.documents
        for _ in range(8):
            d = docs[int(len(docs) * rng.random() ** 2)]  # some documents are asked about far more
            if d.deleted_at is None or d.deleted_at > t:
                return d
        return d

    def passage(
        self, doc: Document, rev_index: int, chunk: Chunk, pid: str, rank: int, t: datetime, query: str
    ) -> dict[str, Any]:
        rev = doc.revisions[rev_index]
        text = chunk.text
        model_input = text[:600] if (chunk.chunk_index % 7 == 3 and len(text) > 600) else text
        return {
            "passage_id": pid,
            "collection": doc.collection,
            "source": {
                "system": "northwind-wiki",
                "path": f"wiki/{doc.collection}/{doc.document_id}.md",
                "revision": f"{doc.document_id}-{rev.label}-{rev.committed_at:%Y%m%d%H%M}",
            },
            "document": {
                "document_id": doc.document_id,
                "uri": f"docstore://{doc.collection}/{doc.document_id}",
                "revision": rev.label,
                "backend": "docstore",
            },
            "chunk": {
                "chunk_id": f"{doc.document_id}#{chunk.chunk_index}",
                "pipeline_version": CHUNKER_VERSION,
                "parameters": {"max_chars": 2000},
            },
            "locator": {
                "heading_path": list(chunk.heading_path),
                "paragraph": chunk.paragraph,
                "char_start": chunk.start,
                "char_end": chunk.end,
            },
            "retrieved_text": text,
            "model_input_text": model_input,
            "normalizer_version": NORMALIZER_VERSION,
            "retrieved_at": iso(t - timedelta(seconds=1)),
            "rank": rank,
            "score": round(0.95 - rank * 0.03, 4),
            "query": query,
        }

    def manifest(self, i: int, purge: list[str]) -> dict[str, Any]:
        rng = random.Random(9_000_011 * (i + 1))
        t = self.manifest_time(i)
        r = rng.random()
        collection = "support" if r < 0.6 else "ops" if r < 0.9 else "legal"
        is_note = rng.random() < 0.02
        answer_id = f"{'note' if is_note else 'ans'}-{i:07d}"
        question = f"Question {i}: " + sentences(rng, rng.randint(60, 180))[:-1] + "?"
        passages: list[dict[str, Any]] = []
        n_docs = rng.choice((1, 2, 2, 3, 3, 4))
        per = [PASSAGES_PER_MANIFEST // n_docs] * n_docs
        per[0] += PASSAGES_PER_MANIFEST - sum(per)
        used: set[tuple[int, int]] = set()
        for count in per:
            doc = self._pick_doc(
                collection if rng.random() < 0.95 else rng.choice(("support", "ops")), t, rng
            )
            k = self._pick_revision(doc, t, rng)
            chunks = _chunks(doc.index, k, id(self))
            for c in rng.sample(chunks, min(count, len(chunks))):
                if (doc.index, c.chunk_index) in used:
                    continue
                used.add((doc.index, c.chunk_index))
                rank = len(passages) + 1
                passages.append(self.passage(doc, k, c, f"p{rank}", rank, t, question))
        while len(passages) < PASSAGES_PER_MANIFEST:  # a small document ran out of chunks
            doc = self._pick_doc(collection, t, rng)
            k = self._pick_revision(doc, t, rng)
            c = rng.choice(_chunks(doc.index, k, id(self)))
            rank = len(passages) + 1
            passages.append(self.passage(doc, k, c, f"p{rank}", rank, t, question))
        lineage: list[str] = []
        if is_note and self._recent_answers:
            lineage = rng.sample(list(self._recent_answers), min(2, len(self._recent_answers)))
        elif self._notes and rng.random() < 0.03:
            nid, ntext, ncoll = rng.choice(list(self._notes))
            ps = passages[-1]
            ps.update(
                collection=ncoll,
                source={"system": "memory", "path": f"notes/{nid}", "revision": "1"},
                document={
                    "document_id": "memory",
                    "uri": f"memory://{nid}",
                    "revision": "1",
                    "backend": "memory",
                },
                chunk={"chunk_id": f"{nid}#0", "pipeline_version": CHUNKER_VERSION, "parameters": {}},
                locator={"heading_path": [], "paragraph": 0, "char_start": 0, "char_end": len(ntext)},
                retrieved_text=ntext,
                model_input_text=ntext,
                derived_from=nid,
            )
            lineage = [nid]
            self.stats["derived_passages"] += 1
        answer = sentences(rng, rng.randint(400, 900))
        cites: list[dict[str, Any]] = []
        bounds = [0] + [j + 1 for j, ch in enumerate(answer) if ch == "."]
        step = max(1, (len(bounds) - 1) // rng.randint(2, 4))
        for j in range(0, len(bounds) - 1, step):
            lo, hi = bounds[j], bounds[min(j + step, len(bounds) - 1)]
            pids = sorted({f"p{rng.randint(1, PASSAGES_PER_MANIFEST)}" for _ in range(rng.randint(1, 3))})
            cites.append({"answer_start": lo, "answer_end": hi, "passage_ids": pids})
        producer = PRODUCER_OF[collection]
        draft: dict[str, Any] = {
            "run_id": f"run-{i // 3:07d}",
            "answer_id": answer_id,
            "kind": "note" if is_note else "answer",
            "generated_at": iso(t),
            "producer": {"system": producer, "version": f"2.{i * 4 // self.n_manifests}.0"},
            "runtime": {
                "model": "model-x-2026-01",
                "prompt_template_version": f"{collection}-v{3 + i * 3 // self.n_manifests}",
                "pipeline_version": "rag-4.2",
                "parameters": {"temperature": 0.2, "top_k": PASSAGES_PER_MANIFEST},
            },
            "authorization": {
                "principal": f"user:{rng.randint(1, 400):04d}",
                "policy_version": "acl-12",
                "decision": "allow",
            },
            "collection": collection,
            "question": question,
            "answer": answer,
            "passages": passages,
            "citations": cites,
            "lineage": lineage,
        }
        if is_note:
            self._notes.append((answer_id, answer, collection))
            self.stats["notes"] += 1
        else:
            self._recent_answers.append(answer_id)
        self.stats["manifests"] += 1
        self.stats["passages"] += len(passages)
        from bench.common import producer as producer_identity

        signed = draft_to_input(draft, _producer(producer, producer_identity))
        if i % 500 == 250:
            purge.append(signed_digest(signed, 0))
        return signed


_PRODUCERS: dict[str, Any] = {}


def _producer(name: str, make: Any) -> Any:
    if name not in _PRODUCERS:
        _PRODUCERS[name] = make(name)
    return _PRODUCERS[name]


def signed_digest(signed: dict[str, Any], passage_index: int) -> str:
    """The retrieved_sha256 of one passage of a signed input (read back from the payload)."""
    import base64
    import json

    payload = json.loads(base64.b64decode(signed["envelope"]["payload"]))
    return str(payload["passages"][passage_index]["retrieved_sha256"])
