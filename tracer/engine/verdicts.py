"""Verification's log-wide findings as pure functions, shared by `tracer verify` and
`tracer verify-dataset`.

`tracer.engine.logcheck` checks one entry at a time; what is decided over the whole log
(a signed checkpoint against the root recomputed at its size, checkpoints beyond the
log, entries no checkpoint covers, replayed answers, gaps, every referenced text's
verdict) is decided here, from facts either verifier gathered its own way (a vault
read through DuckDB, or an exported dataset read row group by row group).  One
function per rule, so both report the same record with the same words in the same
order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from store.audit import DigestVerdict
from store.errors import InputError, SignatureError
from store.guarded import signed_commitment
from store.note import Checkpoint, Verifiers, open_note
from store.words import TextVerdict
from tracer.engine.jsonshapes import FindingRecord
from tracer.engine.logcheck import Finding, finding
from tracer.engine.vocabulary import FindingKind

__all__ = [
    "AUTH_FAILED",
    "CheckpointState",
    "beyond_log_findings",
    "checkpoint_findings",
    "data_key_findings",
    "digest_findings",
    "duplicate_findings",
    "gap_findings",
    "text_problem",
    "uncheckpointed_findings",
    "unreferenced_findings",
]

AUTH_FAILED = "stored ciphertext fails authentication (altered after it was written)"


@dataclass
class CheckpointState:
    """What the checkpoints checked so far say: the size up to which the log matched a
    signed checkpoint, and whether a root mismatch was seen (later ones then cannot
    narrow the damage)."""

    last_good: int = 0
    root_broken: bool = False


def checkpoint_findings(
    cps: Sequence[Any],
    root: bytes,
    size: int,
    guard: str,
    verifiers: Verifiers,
    origin: str,
    state: CheckpointState,
) -> list[Finding]:
    """The stored checkpoints of one tree size against the root recomputed there, the
    guarded-entry commitment up to it, and the log's origin; updates `state`."""
    out: list[Finding] = []
    good = False
    for cp in cps:
        try:
            text, _names = open_note(cp.note, verifiers)
            parsed = Checkpoint.parse(text)
        except (SignatureError, InputError) as exc:
            out.append(
                finding(
                    FindingKind.CHECKPOINT_SIGNATURE_INVALID, None, str(exc), checkpoint=cp.id, size=cp.size
                )
            )
            continue
        if signed_commitment(parsed.extensions) != guard:
            out.append(
                finding(
                    FindingKind.CHECKPOINT_GUARD_MISMATCH,
                    None,
                    f"checkpoint {cp.id} (size {cp.size}) commits to other revocations, tombstones and legal "
                    "holds than the log holds: one was hidden (relabelled or rewritten) or forged",
                    checkpoint=cp.id,
                    size=cp.size,
                )
            )
        if parsed.origin != origin:
            out.append(
                finding(
                    FindingKind.CHECKPOINT_ORIGIN_MISMATCH,
                    None,
                    f"origin {parsed.origin!r}",
                    checkpoint=cp.id,
                )
            )
        if parsed.size != cp.size:
            out.append(
                finding(
                    FindingKind.CHECKPOINT_SIZE_MISMATCH, None, f"note says {parsed.size}", checkpoint=cp.id
                )
            )
        if parsed.root != root:
            state.root_broken = True
            lo = state.last_good
            out.append(
                finding(
                    FindingKind.CHECKPOINT_ROOT_MISMATCH,
                    None,
                    f"signed root {parsed.root.hex()[:16]}… != recomputed {root.hex()[:16]}… at size "
                    f"{cp.size}: an entry in seq {lo}..{cp.size - 1} was changed, removed or reordered "
                    f"(entries before {lo} match an earlier signed checkpoint)",
                    checkpoint=cp.id,
                    size=cp.size,
                    first_seq=lo,
                    last_seq=cp.size - 1,
                )
            )
        elif parsed.size == cp.size:
            good = True
        else:
            state.root_broken = True
    if good and not state.root_broken:
        state.last_good = size
    return out


def beyond_log_findings(by_size: Mapping[int, Sequence[Any]], log_size: int) -> list[Finding]:
    """Checkpoints left over once the log was read: they claim more entries than it has."""
    out: list[Finding] = []
    for size, cps in sorted(by_size.items()):
        for cp in cps:
            out.append(
                finding(
                    FindingKind.CHECKPOINT_BEYOND_LOG,
                    None,
                    f"checkpoint {cp.id} claims size {size} but the log has {log_size} entries: truncated?",
                    checkpoint=cp.id,
                    size=size,
                )
            )
    return out


def uncheckpointed_findings(covered: int, log_size: int) -> list[Finding]:
    """Entries after the largest signed checkpoint (the first thousand)."""
    return [
        finding(
            FindingKind.ENTRY_NOT_CHECKPOINTED,
            seq,
            f"log entry {seq} is beyond the latest signed checkpoint (size {covered}): "
            "appended without a signature over it",
        )
        for seq in range(covered, min(log_size, covered + 1000))
    ]


def duplicate_findings(dups: Iterable[tuple[str, list[int]]]) -> list[Finding]:
    out: list[Finding] = []
    for answer_id, seqs in dups:
        for seq in seqs[1:]:
            out.append(
                finding(
                    FindingKind.ANSWER_DUPLICATED,
                    seq,
                    f"answer {answer_id!r} was already logged at entry {seqs[0]}: a replayed manifest",
                    answer_id=answer_id,
                    first_seq=seqs[0],
                )
            )
    return out


def gap_findings(gaps: Iterable[int], hints: Mapping[int, Mapping[str, Any]]) -> list[Finding]:
    """Absent sequence numbers, each pinned by what (untrusted) hints still say it was."""
    return [
        finding(
            FindingKind.ENTRY_MISSING,
            seq,
            f"log entry {seq} is absent (the log must be dense)",
            **hints.get(seq, {}),
        )
        for seq in gaps
    ]


def text_problem(digest: str, data: bytes | None) -> tuple[TextVerdict, str] | None:
    """(state, detail) when a readable text does not verify against its digest; `data`
    None means its ciphertext failed authentication."""
    if data is None:
        return (TextVerdict.CHECKSUM_MISMATCH, AUTH_FAILED)
    actual = hashlib.sha256(data).hexdigest()
    if actual != digest:
        return (TextVerdict.CHECKSUM_MISMATCH, f"recorded {digest[:16]}…, recomputed {actual[:16]}…")
    return None


def digest_findings(found: Iterable[DigestVerdict]) -> list[Finding]:
    out: list[Finding] = []
    for f in found:
        rec: FindingRecord = {
            "digest": f.digest,
            "role": f.role,
            "answer_id": f.answer_id,
            "passage_id": f.passage_id,
            "document_id": f.document_id,
            "revision": f.revision,
        }
        if f.verdict == TextVerdict.PURGED:
            out.append(
                finding(
                    FindingKind.PURGED_BLOB_STILL_PRESENT,
                    f.seq,
                    "a tombstone exists but the text is still stored",
                    **rec,
                )
            )
        elif f.verdict == TextVerdict.MISSING:
            out.append(
                finding(
                    FindingKind.MISSING,
                    f.seq,
                    "text absent and no tombstone explains it: evidence lost",
                    **rec,
                )
            )
        else:
            # the one other verdict the query passes on: `text_problem`'s, read back through SQL
            out.append(finding(FindingKind(f.verdict), f.seq, f.detail or "", **rec))
    return out


def unreferenced_findings(digests: Iterable[str]) -> list[Finding]:
    return [
        finding(FindingKind.BLOB_UNREFERENCED, None, "stored text no log entry refers to", digest=d)
        for d in digests
    ]


def data_key_findings(
    stored: Iterable[tuple[str, str, int]],
    can_read: Callable[[str], bool],
    held: Collection[str],
    failed: Iterable[str],
) -> list[Finding]:
    """Texts of a collection the viewer is granted but holds no data key for, and keys
    wrapped to the viewer that do not unwrap.

    `stored` is (collection, dk_id, texts stored under it) for every data key that
    encrypts a text; `held` the data keys the viewer holds, `failed` those wrapped to the
    viewer that did not unwrap.  Deleting the wrapped keys (which live outside the log)
    cannot forge a text, but it would make every text of the collection read as
    "outside your scope" and verify look clean; here it is a finding that names the
    collection and how much is hidden.
    """
    missing: dict[str, int] = {}
    for collection, dk_id, texts in stored:
        if can_read(collection) and dk_id not in held:
            missing[collection] = missing.get(collection, 0) + texts
    out = [
        finding(
            FindingKind.DATA_KEY_MISSING,
            None,
            f"you are granted {collection!r} but no data key for {texts} of its stored texts is "
            "wrapped to you (the wrapped keys were deleted or never shared): they cannot be read "
            "or checked",
            collection=collection,
        )
        for collection, texts in sorted(missing.items())
    ]
    out.extend(
        finding(
            FindingKind.DATA_KEY_UNREADABLE,
            None,
            f"the data key {dk_id} wrapped to you does not unwrap with your key (altered)",
            collection=dk_id.split("#", 1)[0],
        )
        for dk_id in failed
    )
    return out
