"""Full integrity verification, every finding pinned to its record.

One streaming pass over the raw log recomputes each leaf hash, checks each entry's
position and signature, and accumulates the Merkle root, comparing it with every signed
checkpoint on the way (`tracer.engine.logpass`, with worker processes for a large log).
The views are then rebuilt from the log and compared, every referenced digest is
accounted for (intact, mismatch, purged or missing: `tracer.engine.storecheck`), and
every retrieved passage is looked up at its locator in the revision it claims to come
from (`tracer.engine.transformpass`).

Structural checks (Merkle, signatures, views, presence) run for everyone; text
checksums run for what the viewer can decrypt, and the report says how much was not.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from store import audit
from store.gcpause import no_cycle_collection
from store.vault import Vault
from tracer.clock import now_iso
from tracer.engine.jsonshapes import VerifiedCheckpointJSON, VerifyJSON
from tracer.engine.logcheck import Finding
from tracer.engine.logpass import LogPass
from tracer.engine.receipt import Receipt, load_receipt, save_receipt
from tracer.engine.session import Session
from tracer.engine.storecheck import check_case_file, check_digests, check_views
from tracer.engine.transformpass import TransformPass
from tracer.engine.verifyrun import Progress, Sizes, Tally
from tracer.engine.vocabulary import INFO_KINDS

__all__ = ["INFO_KINDS", "Finding", "Progress", "Sizes", "VerifyReport", "verify"]


@dataclass
class VerifyReport:
    computed_at: str
    checkpoint: VerifiedCheckpointJSON
    counts: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    viewer: str | None = None
    #: "full", or "incremental" from a receipt covering entries before `verified_from`
    mode: str = "full"
    verified_from: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def checkpoint_covers_log(self) -> bool:
        return self.checkpoint["size"] == self.checkpoint["log_size"]

    @property
    def ok(self) -> bool:
        return not any(f.kind not in INFO_KINDS for f in self.findings)

    def to_json(self) -> VerifyJSON:
        return {
            "ok": self.ok,
            "computed_at": self.computed_at,
            "viewer": self.viewer,
            "mode": self.mode,
            "verified_from": self.verified_from,
            "warnings": self.warnings,
            "checkpoint": self.checkpoint,
            "counts": self.counts,
            "findings": [f.to_json() for f in self.findings],
        }


#: DuckDB's buffer pool during verification: the pass reads the whole log once and keeps
#: only compact tables, so cached pages of it are of no use and only add to the peak RSS
_VERIFY_MEMORY_LIMIT = "256MB"


def verify(
    vault: Vault,
    session: Session | None = None,
    progress: Progress | None = None,
    *,
    full: bool = False,
    sizes: Sizes | None = None,
) -> VerifyReport:
    """Check everything; with a session, start from this machine's receipt unless `full`.

    An incremental verification re-hashes every leaf and readable text, checks every
    checkpoint and statement, and proves the log extends the receipt's root and that the
    covered entries' view rows hash as the receipt says; only manifests after the
    receipt get the per-entry checks again.  Anything that does not match makes it full.
    A clean verification with a session leaves a new receipt (`tracer.engine.receipt`).
    """
    with (
        no_cycle_collection(),
        vault.memory_limit(_VERIFY_MEMORY_LIMIT),
        vault.blobs.index(),
        vault.views.unchecked(),
    ):
        warnings: list[str] = []
        receipt = None
        if session is not None and not full:
            receipt, warning = _usable_receipt(vault, session)
            if warning:
                warnings.append(warning)
        size = vault.size()
        # the view digests a new receipt needs are computed on a second DuckDB connection
        # while the log pass runs (DuckDB works without the GIL): those of the groups a
        # receipt does not already vouch for
        kept = (receipt.size // audit.DIGEST_GROUP) if receipt is not None else 0
        growing = audit.view_digests_meanwhile(vault, size, kept * audit.DIGEST_GROUP) if session else None
        report, start, covered = _from_receipt(vault, session, progress, receipt, sizes or Sizes(), warnings)
        grown = growing() if growing is not None else {}
        report.mode = "incremental" if start else "full"
        report.verified_from = start
        report.warnings = warnings
        if session is not None:
            _leave_receipt(vault, session, report, size, start, kept, covered, grown)
        return report


def _from_receipt(
    vault: Vault,
    session: Session | None,
    progress: Progress | None,
    receipt: Receipt | None,
    sizes: Sizes,
    warnings: list[str],
) -> tuple[VerifyReport, int, dict[str, dict[int, str]]]:
    """(report, first entry checked in full, the receipt's view digests kept): from the
    receipt when the covered views still hash as it says (hashed meanwhile), else in full."""
    if receipt is not None:
        digests = audit.view_digests_meanwhile(vault, receipt.size)
        report = _verify(vault, session, progress, receipt.size, sizes)
        if digests() == receipt.views:
            return report, receipt.size, receipt.views
        warnings.append("receipt: view rows of covered entries changed since; verifying in full")
    return _verify(vault, session, progress, 0, sizes), 0, {}


def _leave_receipt(
    vault: Vault,
    session: Session,
    report: VerifyReport,
    size: int,
    start: int,
    kept: int,
    covered: dict[str, dict[int, str]],
    grown: dict[str, dict[int, str]],
) -> None:
    """A clean verification of a whole, checkpointed log leaves a new receipt for this
    viewer (never in forensic mode)."""
    if not report.ok or session.status.forensic or not report.checkpoint_covers_log:
        return
    log_size = int(report.checkpoint["log_size"])
    if log_size != size or (not start and kept):
        # the log grew meanwhile (it cannot: this process holds it), or the receipt was
        # not used after all: hash every group again
        kept = 0
        grown = audit.view_digests(vault, log_size)
    views = {t: {g: h for g, h in covered.get(t, {}).items() if g < kept} | grown[t] for t in grown}
    save_receipt(
        session.trust.home,
        session,
        Receipt(
            origin=vault.origin,
            viewer=session.identity.key_id,
            scopes=tuple(session.scopes),
            size=log_size,
            root=str(report.checkpoint["recomputed_root"]),
            views=views,
            computed_at=report.computed_at,
        ),
    )


def _usable_receipt(vault: Vault, session: Session) -> tuple[Receipt | None, str]:
    """This viewer's receipt if the log still extends it, else (None, why not)."""
    receipt, warning = load_receipt(session.trust.home, session)
    if receipt is None:
        return None, warning
    size = vault.size()
    if receipt.size > size:
        return None, f"receipt: covers {receipt.size} entries but the log has {size}; verifying in full"
    if vault.root(receipt.size).hex() != receipt.root:
        return None, "receipt: the log no longer extends the root it vouches for; verifying in full"
    return receipt, ""


def _verify(
    vault: Vault, session: Session | None, progress: Progress | None, start: int, sizes: Sizes
) -> VerifyReport:
    tally = Tally(progress) if progress is not None else Tally()
    transforms = TransformPass(vault, session, tally, sizes)
    log = LogPass(
        vault, tally, transforms, start, sizes, list(session.scopes) if session is not None else None
    )
    log.run()
    diffs = log.rebuild.finish()
    latest = vault.checkpoints()[-1] if vault.checkpoints() else None
    check_views(vault, tally, diffs, log.gaps)
    check_case_file(vault, tally)
    changed = check_digests(vault, session, tally)
    transforms.finish(start, changed)
    return VerifyReport(
        computed_at=now_iso(),
        checkpoint={
            "size": latest.size if latest else 0,
            "signer": latest.signer if latest else None,
            "recomputed_root": log.final_root.hex(),
            "log_size": log.final_size,
        },
        counts=tally.counts,
        findings=tally.findings,
        viewer=session.who if session else None,
    )
