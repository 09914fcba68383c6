"""Verification's second pass: the derived views, every referenced digest and stored
text, the data keys and the case file, each against what the log pass established.

Structural checks run for everyone; text checksums run for what the viewer can decrypt,
and the findings say how much was not.
"""

from __future__ import annotations

import json
from typing import Any, cast

from store import audit, queries
from store.casefile import load_casefile
from store.errors import UnwrapError
from store.vault import Vault
from store.words import TextVerdict
from tracer.engine.jsonshapes import FindingRecord
from tracer.engine.session import Session
from tracer.engine.verdicts import (
    data_key_findings,
    digest_findings,
    duplicate_findings,
    gap_findings,
    text_problem,
    unreferenced_findings,
)
from tracer.engine.verifyrun import Tally
from tracer.engine.vocabulary import FindingKind

__all__ = ["check_case_file", "check_digests", "check_views"]

_GAP_HINTS = ("answer_id", "run_id", "document_id", "revision", "digest")
#: views with one row per log entry: what they say about a missing entry names it
_ENTRY_TABLES = frozenset({"v_answers", "v_revisions", "v_deletions", "v_tombstones", "v_findings"})
_VIEW_RECORD_FIELDS = ("answer_id", "run_id", "passage_id", "digest", "document_id", "revision")


def _view_record(table: str, values: dict[str, Any]) -> FindingRecord:
    """The record fields a view row names (its revision's digest as `digest`), after `table`."""
    named = {k: values.get(k) for k in _VIEW_RECORD_FIELDS if values.get(k) is not None}
    rec = cast("FindingRecord", {"table": table, **named})
    if table == "v_revisions":
        rec["digest"] = values.get("content_sha256")
    return rec


def _view_problem(word: str) -> FindingKind:
    """The kind of a recorded mend (`view_mends` is an unsigned table: a word edited into
    it is read as the row having been altered, never as a kind of its own)."""
    if word == FindingKind.VIEW_ROW_MISSING_OR_ALTERED:
        return FindingKind.VIEW_ROW_MISSING_OR_ALTERED
    return FindingKind.VIEW_ROW_ALTERED_OR_EXTRA


def check_views(vault: Vault, tally: Tally, diffs: list[audit.ViewDiff], gaps: list[int]) -> None:
    """Stored view rows that the log does not derive (or derives and they lack), rows
    this process mended before verify looked, duplicate answers, and missing entries
    pinned by what the stored views still say they were."""
    tally.progress("views", 0, 1)
    hints: dict[int, FindingRecord] = {}
    for d in diffs:
        rec = _view_record(d.table, d.values)
        if (
            d.problem == FindingKind.VIEW_ROW_ALTERED_OR_EXTRA
            and d.table in _ENTRY_TABLES
            and d.seq is not None
        ):
            hints.setdefault(d.seq, {}).update(rec)
        tally.find(d.problem, d.seq, f"{d.table} row does not match the log: {d.row}", **rec)
    # rows found edited and derived again in place, by this process or an earlier one
    for mend in vault.views.recorded():
        diff = mend.diff
        shown = json.dumps(diff.values, default=str, ensure_ascii=False)[:400]
        detail = (
            f"{mend.table} row did not match the log and was derived again from it when the log "
            f"had {mend.log_size} entries: {shown}"
        )
        record = _view_record(mend.table, diff.values)
        tally.find(_view_problem(diff.problem), diff.seq, detail, **record)
    tally.findings.extend(duplicate_findings(audit.duplicate_answers(vault)))
    # What the (untrusted) stored views still say an absent entry was, to pin the loss.
    gap_hints = {seq: {k: v for k, v in hints.get(seq, {}).items() if k in _GAP_HINTS} for seq in gaps}
    tally.findings.extend(gap_findings(gaps, gap_hints))
    tally.progress("views", 1, 1)


def check_digests(vault: Vault, session: Session | None, tally: Tally) -> set[str]:
    """Every referenced digest accounted for; each stored text decrypted and hashed once.

    One streaming pass over the blobs the viewer holds keys for records only the digests
    that do not verify; SQL then classifies every reference (counts per verdict, and the
    references that are findings), so no per-reference object is ever built in Python.
    Returns the digests whose texts no longer read as intact (covered passages reading
    them are traced again).
    """
    bad: dict[str, tuple[TextVerdict, str]] = {}
    dk_ids: list[str] = []
    if session is not None:
        dk_ids = sorted(session.keys.keys)
        bad = _unreadable_texts(vault, session, dk_ids, tally)
    scopes = list(session.scopes) if session is not None else None
    counts, found = audit.digest_verdicts(vault, bad, dk_ids, scopes)
    changed = set(bad) | {f.digest for f in found}
    for verdict, n in audit.ordered_counts(counts):
        tally.bump(verdict, n)
    tally.findings.extend(digest_findings(found))
    tally.progress("texts", 1, 1)
    if session is not None:
        _check_data_keys(vault, session, tally)
    tally.findings.extend(unreferenced_findings(audit.blob_digests_unreferenced(vault)))
    return changed


def _unreadable_texts(
    vault: Vault, session: Session, dk_ids: list[str], tally: Tally
) -> dict[str, tuple[TextVerdict, str]]:
    """The digests whose first stored copy (by collection name, as `decrypt` reads it) does
    not decrypt and hash to its digest, with the problem; one streaming pass."""
    keys = session.keys
    bad: dict[str, tuple[TextVerdict, str]] = {}
    first = vault.blobs.first_copies(dk_ids)
    done = 0
    for batch in vault.blobs.batches(dk_ids):
        tally.progress("texts", done, 0)
        done += len(batch)
        for digest, collection, dk_id, nonce, ct in batch:
            if first and first.get(digest, collection) != collection:
                continue  # `decrypt` reads the first copy by collection name
            try:
                data: bytes | None = keys.open_row(digest, collection, dk_id, nonce, ct)
            except UnwrapError:
                data = None
            problem = text_problem(digest, data)
            if problem is not None:
                bad[digest] = problem
    return bad


def check_case_file(vault: Vault, tally: Tally) -> None:
    """Validly signed case-file statements that break its rules (a case opened twice, a
    release of a hold that is not in force, an item of an unknown case): each is left
    out of the case file, and named here.  Signature and place problems of the same
    entries are the log pass's findings already."""
    for p in load_casefile(vault).problems:
        if p.code == FindingKind.CASE_STATEMENT_REFUSED:
            tally.find(FindingKind.CASE_STATEMENT_REFUSED, p.seq, p.detail, kind=p.kind)


def _check_data_keys(vault: Vault, session: Session, tally: Tally) -> None:
    """`data_key_findings` for the viewer's keys (verify-dataset computes the same from an export)."""
    tally.findings.extend(
        data_key_findings(
            queries.blob_data_keys(vault), session.can_read, set(session.keys.keys), session.keys.failed
        )
    )
