"""Where the currency engine and the transform pass read texts and revisions from.

`tracer verify` reads them from an unlocked vault (`VaultSource`, through the session's
keys and `store.queries`); `tracer verify-dataset` reads them from an export
(`tracer.engine.dataset_texts.DatasetSource`: its text files, and the revision,
deletion and tombstone rows derived from the log).  Both give a text only through
`tracer.engine.evidence.text_result`, so a text is released only when its digest
verifies, whichever holds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from store import queries
from store.queries import RevisionRow, TombstoneRow
from tracer.engine.evidence import TextResult, read_text, read_texts

if TYPE_CHECKING:
    from tracer.engine.session import Session

__all__ = ["Deletion", "TextSource", "VaultSource"]

#: (seq, deleted_at, reason) of a document's deletion in force
Deletion = tuple[int, str, str]


class TextSource(Protocol):
    """Texts released only when their digest verifies, and the facts the log implies."""

    def can_read(self, collection: str) -> bool:
        """May this run's viewer read texts of `collection`?"""
        ...

    def text(self, digest: str, collection: str) -> TextResult:
        """`evidence.read_text`'s verdict on one text."""
        ...

    def texts(self, items: Sequence[tuple[str, str]]) -> dict[str, TextResult]:
        """`text` for many (digest, collection) pairs, keyed by digest (first pair wins)."""
        ...

    def revisions_of(self, document_ids: list[str]) -> dict[str, list[RevisionRow]]:
        """Each document's imported revisions, by commit instant then seq."""
        ...

    def deletions_of(self, document_ids: list[str]) -> dict[str, Deletion | None]:
        """Each document's latest deletion (latest `deleted_at`, then seq), or None."""
        ...

    def answer_text_ref(self, answer_id: str) -> tuple[str, str] | None:
        """(answer digest, collection) of the first manifest of `answer_id`, if any."""
        ...


class VaultSource:
    """A `TextSource` over an unlocked vault: what `tracer verify` and `trace` read."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._tombstones: dict[str, TombstoneRow] | None = None

    def _tombstone_map(self) -> dict[str, TombstoneRow]:
        if self._tombstones is None:
            self._tombstones = queries.tombstone_map(self.session.vault)
        return self._tombstones

    def can_read(self, collection: str) -> bool:
        return self.session.can_read(collection)

    def text(self, digest: str, collection: str) -> TextResult:
        return read_text(self.session, digest, collection, self._tombstone_map())

    def texts(self, items: Sequence[tuple[str, str]]) -> dict[str, TextResult]:
        return read_texts(self.session, items, self._tombstone_map())

    def revisions_of(self, document_ids: list[str]) -> dict[str, list[RevisionRow]]:
        if len(document_ids) == 1:
            return {document_ids[0]: queries.revisions_of(self.session.vault, document_ids[0])}
        return queries.revisions_of_many(self.session.vault, document_ids)

    def deletions_of(self, document_ids: list[str]) -> dict[str, Deletion | None]:
        if len(document_ids) == 1:
            return {document_ids[0]: queries.deletion_of(self.session.vault, document_ids[0])}
        return queries.deletions_of_many(self.session.vault, document_ids)

    def answer_text_ref(self, answer_id: str) -> tuple[str, str] | None:
        from store import audit  # verify's rebuilt tables (Arrow): a trace never loads it

        return audit.answer_text_ref(self.session.vault, answer_id)
