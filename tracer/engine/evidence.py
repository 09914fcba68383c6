"""The one place historical text is released: only after its digest verifies.

Every caller that wants to show a retained text (passage, model input, answer,
question, revision) goes through `read_text`, which returns the text only when
SHA-256 over the decrypted bytes equals the digest the log committed to.  Otherwise it
returns the reason instead: a tombstone, a `missing` alarm, a checksum mismatch, or
"outside your scope" — never some other text in its place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from store import queries
from store.crypto import sha256_hex
from store.errors import UnwrapError
from store.queries import TombstoneRow
from tracer.engine.vocabulary import Integrity

if TYPE_CHECKING:
    from tracer.engine.session import Session

__all__ = ["TextResult", "read_text", "read_texts", "text_result"]


@dataclass(frozen=True)
class TextResult:
    """Integrity verdict for one recorded digest, with the text only when it verified."""

    digest: str
    state: Integrity
    text: str | None = None
    recomputed: str | None = None
    tombstone: TombstoneRow | None = None
    detail: str = ""

    @property
    def verified(self) -> bool:
        return self.state == Integrity.INTACT and self.text is not None


def read_text(
    session: Session,
    digest: str,
    collection: str,
    tombstones: Mapping[str, TombstoneRow] | None = None,
) -> TextResult:
    """The text under `digest` if it verifies, else the reason it cannot be shown.

    `tombstones` (digest -> tombstone, e.g. `queries.tombstone_map`) lets a run that
    reads many texts look tombstones up once instead of once per text.
    """
    if not session.can_read(collection):
        return TextResult(digest, Integrity.UNAVAILABLE, detail="outside your scope")
    tomb = tombstones.get(digest) if tombstones is not None else queries.tombstone_of(session.vault, digest)
    found: tuple[str, bytes] | UnwrapError | None
    try:
        found = session.keys.decrypt(digest)
    except UnwrapError as exc:
        found = exc
    return text_result(
        digest,
        found,
        tomb,
        lambda: queries.blob_present(session.vault, digest),
    )


def read_texts(
    session: Session,
    items: Sequence[tuple[str, str]],
    tombstones: Mapping[str, TombstoneRow] | None = None,
) -> dict[str, TextResult]:
    """`read_text` for many (digest, collection) pairs: one blob query, one tombstone query.

    Exactly the verdicts `read_text` gives one by one (text only when SHA-256 verifies).
    The result is keyed by digest; a digest listed under several collections gets the
    verdict of its first (digest, collection) pair.
    """
    first: dict[str, str] = {}
    for digest, collection in items:
        first.setdefault(digest, collection)
    out: dict[str, TextResult] = {}
    readable: list[str] = []
    for d, c in first.items():
        if session.can_read(c):
            readable.append(d)
        else:
            out[d] = TextResult(d, Integrity.UNAVAILABLE, detail="outside your scope")
    if not readable:
        return out
    vault = session.vault
    if tombstones is None:
        tombstones = vault.index.tombstone_rows_many(readable)
    rows = vault.blobs.rows_many(readable)
    found = session.keys.decrypt_many(readable, rows)
    for d in readable:
        out[d] = text_result(d, found.get(d), tombstones.get(d), partial(bool, rows.get(d)))
    return out


def text_result(
    digest: str,
    found: tuple[str, bytes] | UnwrapError | None,
    tomb: TombstoneRow | None,
    present: Callable[[], bool],
) -> TextResult:
    """The verdict on one digest given what decryption found (the shared core of read_text)."""
    if tomb is not None:
        # A purge is final: a text stored again under a tombstone (re-ingested, or put
        # back by someone with the file) is never shown as evidence; `verify` reports it.
        return TextResult(digest, Integrity.PURGED, tombstone=tomb, detail=f"purged under {tomb.policy}")
    if isinstance(found, UnwrapError):
        return TextResult(
            digest,
            Integrity.CHECKSUM_MISMATCH,
            detail="stored ciphertext fails authentication (altered after it was written)",
        )
    if found is None:
        if present():
            return TextResult(digest, Integrity.UNAVAILABLE, detail="no data key for this collection")
        return TextResult(
            digest, Integrity.MISSING, detail="absent and no tombstone explains it: evidence lost"
        )
    _coll, data = found
    actual = sha256_hex(data)
    if actual != digest:
        return TextResult(
            digest,
            Integrity.CHECKSUM_MISMATCH,
            recomputed=actual,
            detail=f"recorded {digest[:16]}…, recomputed {actual[:16]}…",
        )
    return TextResult(digest, Integrity.INTACT, text=data.decode("utf-8"), recomputed=actual)
