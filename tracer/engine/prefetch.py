"""Reading ahead for `tracer.engine.trace`: the texts and revisions a page of answers
will need, in a few batched queries instead of one per passage.

Only a cache fill: which text is released to whom is still decided per passage by the
tracer (scope, lineage) exactly as without it.  One object owns what was read ahead, so
the tracer asks whether an answer is ready and never tracks pages itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from store.queries import AnswerRow
from tracer.engine.currency import CurrencyEngine
from tracer.engine.manifests import ManifestReader, SignedManifest

__all__ = ["Prefetch"]


class Prefetch:
    """The manifests and texts read ahead for one tracer's pages and single answers."""

    def __init__(self, manifests: ManifestReader, currency: CurrencyEngine):
        self.manifests = manifests
        self.currency = currency
        #: answers of the last primed page, whose texts were read in one batch
        self._fetched: set[str] = set()

    def page(self, rows: Sequence[AnswerRow]) -> None:
        """Read the log entries of a page of answers in one go, then their texts."""
        wanted = [r for r in rows if not self.manifests.cached(r.answer_id)]
        manifests = self.manifests.page(wanted)
        if manifests is None:
            return  # a damaged entry: let each answer report it on its own
        self._texts(manifests)
        self._fetched = {r.answer_id for r in wanted}

    def answer(self, answer_id: str, m: SignedManifest) -> None:
        """For an answer whose page was not primed (a single trace, a source): its texts and
        those of the manifests its lineage names."""
        if answer_id in self._fetched:
            return
        sources = self.manifests.lineage(m)
        self._texts([m, *sources])
        self._fetched.update(s.record.answer_id for s in sources)

    def _texts(self, manifests: list[SignedManifest]) -> None:
        """Read every text these manifests refer to, and their documents' revisions, in batches."""
        items: list[tuple[str, str]] = []
        docs: dict[str, set[str]] = {}
        for m in manifests:
            p = m.record
            coll = p.collection
            items += [(str(p.question_sha256), coll), (str(p.answer_sha256), coll)]
            for ps in p.passages:
                c = ps.collection
                items += [(str(ps.retrieved_sha256), c), (str(ps.model_input_sha256), c)]
                if ps.chain is not None:
                    docs.setdefault(str(ps.chain.document_id), set()).add(str(ps.chain.revision))
        cur = self.currency
        cur.prefetch_revisions(docs)
        for doc, cited in docs.items():
            revs = cur.revisions(doc)
            if revs:
                items.append((revs[-1].content_sha256, revs[-1].collection))
            items += [(r.content_sha256, r.collection) for r in revs if r.revision in cited]
        cur.prefetch([(d, c) for d, c in items if d != "None"])  # an import may keep no text
