"""Legal holds as one viewer sees them: every hold, and those over an answer, a document
or an impact's evidence.

A hold is shown to whoever sees its subject (`CaseScope.hold_visible`), cut to what they
may read (`CaseScope.hold_view`); this module only decides which holds bear on what, so
the case desk, the TUI's hold panels and a case pack ask the same question one way.
"""

from __future__ import annotations

from collections.abc import Callable

from store import queries
from store.casefile import CaseFile, answer_digests
from store.records import MalformedRecordError
from tracer.engine.casescope import CaseScope, HoldView

__all__ = ["CaseHolds"]


class CaseHolds:
    """The holds of the case file `file` gives, as the viewer of `scope` sees them."""

    def __init__(self, scope: CaseScope, file: Callable[[], CaseFile]):
        self.scope = scope
        self._file = file

    def all(self, in_force_only: bool = False) -> list[HoldView]:
        """Every hold the viewer may see, in log order."""
        file = self._file()
        hs = file.holds_in_force() if in_force_only else list(file.holds.values())
        self.scope.prime(hs)
        sc = self.scope
        return [sc.hold_view(h) for h in sorted(hs, key=lambda h: h.seq) if sc.hold_visible(h)]

    def on_answer(self, answer_id: str) -> list[HoldView]:
        """Holds in force over an answer's evidence: the answer, a document it cites, a text."""
        found: list[HoldView] = []
        docs: set[str] | None = None
        digests: set[str] | None = None
        for h in self._file().holds_in_force():
            if h.subject_kind == "answer":
                hit = h.subject == answer_id
            elif h.subject_kind == "document":
                if docs is None:
                    docs = self._documents_of(answer_id)
                hit = h.subject in docs
            else:
                if digests is None:
                    digests = answer_digests(self.scope.s.vault, answer_id)
                hit = h.subject in digests
            if hit and self.scope.hold_visible(h):
                found.append(self.scope.hold_view(h))
        return found

    def on_document(self, document_id: str) -> list[HoldView]:
        """Holds in force the viewer sees on the document itself."""
        return [
            hv
            for hv in self.all(in_force_only=True)
            if hv.hold.subject_kind == "document" and hv.hold.subject == document_id
        ]

    def over(self, document_id: str | None, answer_ids: list[str]) -> list[tuple[HoldView, list[str]]]:
        """Holds in force over an impact's evidence, in log order: on the document itself
        and over each of `answer_ids` (by answer, a document it cites, or a text), each with
        the answers it covers."""
        found: dict[int, tuple[HoldView, list[str]]] = {}
        if document_id is not None:
            for hv in self.on_document(document_id):
                found[hv.hold.seq] = (hv, [])
        for aid in answer_ids:
            for hv in self.on_answer(aid):
                found.setdefault(hv.hold.seq, (hv, []))[1].append(aid)
        return [found[seq] for seq in sorted(found)]

    def _documents_of(self, answer_id: str) -> set[str]:
        found = queries.answer_entry(self.scope.s.vault, answer_id)
        if found is None:
            return set()
        try:
            m = found[1].answer_record()
        except MalformedRecordError:
            return set()  # a damaged entry: verify pins it
        return {str(ps.document.document_id) for ps in m.passages if ps.document.document_id}
