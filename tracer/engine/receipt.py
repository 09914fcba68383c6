"""The signed local receipt of a clean verification, so the next one checks only what is new.

After `tracer verify` finds nothing wrong, this machine keeps a receipt signed by the
investigator: the tree size and root it checked, the viewer's scopes, and a SHA-256 per
derived view over the rows it compared.  The next verification by the same investigator
re-hashes every leaf and every readable text (cheap), proves the log still extends the
receipt's root, checks that the stored view rows of the covered entries still hash as
the receipt says, and runs the per-entry checks (JSON, signatures, view derivation,
transformation trace) only on entries after it.

The receipt is evidence too: it is a DSSE envelope over RFC 8785 JSON, signed with the
investigator's Ed25519 key.  One that does not verify, names another vault, viewer or
scope, or disagrees with the log is ignored with a warning, and the verification is full.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from store.canonical import canonical
from store.dsse import Envelope, sign_envelope, verify_envelope
from store.errors import InputError, SignatureError

__all__ = ["RECEIPT_TYPE", "Receipt", "load_receipt", "receipt_path", "save_receipt"]

RECEIPT_TYPE = "application/vnd.tracer.verify-receipt.v1+json"

if TYPE_CHECKING:
    from tracer.engine.session import Session


class ReceiptJSON(TypedDict):
    """The signed receipt's payload (canonical JSON; `views` keyed by group as a string)."""

    type: str
    origin: str
    viewer: str
    scopes: list[str]
    size: int
    root: str
    views: dict[str, dict[str, str]]
    computed_at: str


@dataclass(frozen=True)
class Receipt:
    origin: str
    viewer: str
    scopes: tuple[str, ...]
    size: int
    root: str
    #: view -> group of entries -> SHA-256 of that view's rows of the group
    views: dict[str, dict[int, str]]
    computed_at: str

    def to_json(self) -> ReceiptJSON:
        return {
            "type": "tracer.verify_receipt/v1",
            "origin": self.origin,
            "viewer": self.viewer,
            "scopes": list(self.scopes),
            "size": self.size,
            "root": self.root,
            "views": {t: {str(g): h for g, h in sorted(gs.items())} for t, gs in sorted(self.views.items())},
            "computed_at": self.computed_at,
        }


def receipt_path(home: Path, origin: str, viewer: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in origin)
    return home / "receipts" / safe / f"{viewer}.json"


def save_receipt(home: Path, session: Session, receipt: Receipt) -> Path:
    """Sign and write atomically (a crash leaves the previous receipt or none)."""
    env = sign_envelope(canonical(receipt.to_json()), RECEIPT_TYPE, session.identity)
    path = receipt_path(home, receipt.origin, receipt.viewer)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(env.to_json(), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def _signed_receipt(path: Path, raw: str, viewer: str, public: bytes) -> Receipt:
    """The receipt in `raw`, its envelope signed by the viewer's own key; raises when not."""
    env = Envelope.from_json(json.loads(raw), str(path), "$")
    if env.payload_type != RECEIPT_TYPE:
        raise InputError(str(path), "$.payloadType", f"expected {RECEIPT_TYPE}")
    verify_envelope(env, {viewer: public})
    body = json.loads(env.payload)
    return Receipt(
        origin=str(body["origin"]),
        viewer=str(body["viewer"]),
        scopes=tuple(str(s) for s in body["scopes"]),
        size=int(body["size"]),
        root=str(body["root"]),
        views={str(t): {int(g): str(h) for g, h in gs.items()} for t, gs in body["views"].items()},
        computed_at=str(body["computed_at"]),
    )


def load_receipt(home: Path, session: Session) -> tuple[Receipt | None, str]:
    """(the receipt, '') or (None, why it is ignored); (None, '') when there is none."""
    origin, viewer = session.vault.origin, session.identity.key_id
    path = receipt_path(home, origin, viewer)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, ""
    except OSError as exc:
        return None, f"{path}: unreadable ({exc.strerror}); verifying in full"
    try:
        receipt = _signed_receipt(path, raw, viewer, session.identity.public.ed25519)
    except SignatureError:
        return None, f"{path}: the receipt's signature does not verify (edited?); verifying in full"
    except (InputError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return None, f"{path}: not a readable receipt ({exc}); verifying in full"
    if (receipt.origin, receipt.viewer) != (origin, viewer):
        return None, f"{path}: the receipt names another vault or viewer; verifying in full"
    if tuple(sorted(receipt.scopes)) != tuple(sorted(session.scopes)):
        return None, f"{path}: your scopes changed since the receipt; verifying in full"
    return receipt, ""
