"""The one place historical text is released: only after its digest verifies.

Every caller that wants to show a retained text (passage, model input, answer,
question, revision) goes through `read_text`, which returns the text only when
SHA-256 over the decrypted bytes equals the digest the log committed to.  Otherwise it
returns the reason instead: a tombstone, a `missing` alarm, a checksum mismatch, or
"outside your scope" — never some other text in its place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from store import queries
from store.crypto import sha256_hex
from store.errors import UnwrapError
from store.queries import TombstoneRow

if TYPE_CHECKING:
    from tracer.engine.session import Session

__all__ = ["TextResult", "read_text"]


@dataclass(frozen=True)
class TextResult:
    """Integrity verdict for one recorded digest, with the text only when it verified."""

    digest: str
    state: str
    text: str | None = None
    recomputed: str | None = None
    tombstone: TombstoneRow | None = None
    detail: str = ""

    @property
    def verified(self) -> bool:
        return self.state == "intact" and self.text is not None


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
        return TextResult(digest, "unavailable", detail="outside your scope")
    tomb = tombstones.get(digest) if tombstones is not None else queries.tombstone_of(session.vault, digest)
    try:
        found = session.keys.decrypt(digest)
    except UnwrapError:
        return TextResult(
            digest,
            "checksum_mismatch",
            detail="stored ciphertext fails authentication (altered after it was written)",
        )
    if found is None:
        if tomb is not None:
            return TextResult(digest, "purged", tombstone=tomb, detail=f"purged under {tomb.policy}")
        if queries.blob_present(session.vault, digest):
            return TextResult(digest, "unavailable", detail="no data key for this collection")
        return TextResult(digest, "missing", detail="absent and no tombstone explains it: evidence lost")
    _coll, data = found
    actual = sha256_hex(data)
    if actual != digest:
        return TextResult(
            digest,
            "checksum_mismatch",
            recomputed=actual,
            detail=f"recorded {digest[:16]}…, recomputed {actual[:16]}…",
        )
    return TextResult(digest, "intact", text=data.decode("utf-8"), recomputed=actual, tombstone=tomb)
