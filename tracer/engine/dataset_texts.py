"""An export as a `TextSource`, so `verify-dataset` runs `verify`'s transform pass.

The exporter, named in the signed manifest, is the viewer: its scopes decide what may
be read and its data keys which stored copy is its text, as the vault's keys decide for
`tracer verify`.  A text comes out only through `evidence.text_result`, the function
`read_text` uses, from what the export holds: a plaintext row (SHA-256 checked here), a
row the exporter's key failed to open (`unreadable`: tampered ciphertext), a tombstone
the log holds, or nothing (`missing`).  Revision lists and deletions are the rows the
verifier derived from the log's own entries, never a table of the export.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from store.errors import UnwrapError
from store.keyring import in_scope
from store.queries import RevisionRow, TombstoneRow
from tracer.engine.evidence import TextResult, text_result
from tracer.engine.textsource import Deletion
from tracer.engine.vocabulary import Integrity

__all__ = ["DatasetSource"]

#: what a held copy of a text is, as the export says: its bytes, or the failure to open it
_Copy = tuple[str, bytes] | UnwrapError | None


class DatasetSource:
    """The export's texts for the exporter, and the revisions, deletions and tombstones
    derived from its log."""

    def __init__(
        self,
        scopes: Sequence[str] | None,
        held: Iterable[str],
        texts: Mapping[str, list[Any]],
        derived: dict[str, list[tuple[Any, ...]]],
        answer_ref: Callable[[str], tuple[str, str] | None],
    ) -> None:
        self._scopes = list(scopes) if scopes is not None else None
        self._copies, self._present = _copies(texts, set(held))
        self._tombstones: dict[str, TombstoneRow] = {}
        for row in sorted(derived.get("v_tombstones", []), key=lambda r: r[0]):
            self._tombstones.setdefault(str(row[1]), TombstoneRow(*row))
        self._revisions: dict[str, list[RevisionRow]] = {}
        for r in sorted(derived.get("v_revisions", []), key=lambda r: (str(r[10]), r[0])):
            self._revisions.setdefault(str(r[1]), []).append(_revision(r))
        self._deletions: dict[str, Deletion] = {}
        for seq, doc, at, reason in sorted(derived.get("v_deletions", []), key=lambda r: (str(r[2]), r[0])):
            self._deletions[str(doc)] = (int(seq), str(at), str(reason))
        self._answer_ref = answer_ref

    def can_read(self, collection: str) -> bool:
        return self._scopes is not None and in_scope(self._scopes, collection)

    def text(self, digest: str, collection: str) -> TextResult:
        if not self.can_read(collection):
            return TextResult(digest, Integrity.UNAVAILABLE, detail="outside your scope")
        present = digest in self._present
        return text_result(digest, self._copies.get(digest), self._tombstones.get(digest), lambda: present)

    def texts(self, items: Sequence[tuple[str, str]]) -> dict[str, TextResult]:
        first: dict[str, str] = {}
        for digest, collection in items:
            first.setdefault(digest, collection)
        return {d: self.text(d, c) for d, c in first.items()}

    def revisions_of(self, document_ids: list[str]) -> dict[str, list[RevisionRow]]:
        return {d: list(self._revisions.get(d, [])) for d in document_ids}

    def deletions_of(self, document_ids: list[str]) -> dict[str, Deletion | None]:
        return {d: self._deletions.get(d) for d in document_ids}

    def answer_text_ref(self, answer_id: str) -> tuple[str, str] | None:
        return self._answer_ref(answer_id)


def _revision(r: tuple[Any, ...]) -> RevisionRow:
    """A `v_revisions` row (seq first) as `store.queries` reads it (seq last)."""
    return RevisionRow(
        document_id=r[1],
        revision=r[2],
        source_system=r[3],
        source_revision=r[4],
        path=r[5],
        title=r[6],
        uri=r[7],
        backend=r[8],
        collection=r[9],
        committed_at=r[10],
        content_sha256=r[11],
        seq=r[0],
    )


def _copies(cols: Mapping[str, list[Any]], held: set[str]) -> tuple[dict[str, _Copy], set[str]]:
    """Per digest, its first stored copy (collections in name order) under a data key the
    exporter held, as `DataKeys.decrypt` picks it; and every digest stored at all
    (`cols`: the text files' digest, collection, dk_id, state and text columns)."""
    order = sorted(range(len(cols["digest"])), key=lambda i: (str(cols["collection"][i]), i))
    copies: dict[str, _Copy] = {}
    present: set[str] = set()
    for i in order:
        digest = str(cols["digest"][i])
        present.add(digest)
        if digest in copies or cols["dk_id"][i] not in held:
            continue
        state, text = cols["state"][i], cols["text"][i]
        if state == "plaintext" and text is not None:
            copies[digest] = (str(cols["collection"][i]), bytes(text))
        elif state == "unreadable":
            copies[digest] = UnwrapError(f"{digest}: the exporter's key did not open it")
    return copies, present
