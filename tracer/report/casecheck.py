"""What a pack's case file and holds claim, held against the signed statements.

Each case item in report.json names the log entry it comes from; that entry travels in
`records` with its proof and its own signature (checked in `statements`).  Here every
field the report shows — the tag, the note's text, the hold's subject and reason, who
signed it and when — must be the one the signed statement says, and the signer must be
the person named beside it, with the key `keys.json` lists for that name.
"""

from __future__ import annotations

from typing import Any

from store.entries import EntryKind
from tracer.report.checks import PackVerification
from tracer.report.model import KEYS_FILE, REPORT_FILE

__all__ = ["check_case"]

Records = dict[int, dict[str, Any]]


class _Check:
    def __init__(self, v: PackVerification, records: Records, keys: Any):
        self.v, self.records = v, records
        people = [*(keys.get("investigators") or []), keys.get("exporter"), keys.get("custodian")]
        self.names = {str(k["key_id"]): str(k["name"]) for k in people if isinstance(k, dict)}
        #: holds already counted: one hold shown beside two answers and in the case is one
        self.counted: set[tuple[str, Any]] = set()

    def count(self, what: str, seq: Any) -> None:
        if (what, seq) not in self.counted:
            self.counted.add((what, seq))
            self.v.checked[what] += 1

    def entry(
        self, path: str, seq: Any, kind: EntryKind, answer_id: str = ""
    ) -> tuple[dict[str, Any], str] | None:
        rec = self.records.get(seq) if isinstance(seq, int) else None
        if rec is None or rec["body"].get("kind") != kind:
            self.v.fail(
                REPORT_FILE,
                path,
                f"cites log entry {seq} as {kind}, but the pack holds no such entry",
                answer_id,
            )
            return None
        signer = str(rec["body"]["envelope"]["signatures"][0].get("keyid", ""))
        return rec["stmt"], signer

    def person(self, path: str, by: dict[str, Any], signer: str, answer_id: str = "") -> None:
        if by.get("key_id") != signer:
            self.v.fail(
                REPORT_FILE,
                f"{path}.key_id",
                f"is not the key that signed the entry ({signer[:16]})",
                answer_id,
            )
        elif self.names.get(signer) != by.get("name"):
            self.v.fail(
                REPORT_FILE, f"{path}.name", f"is not the name {KEYS_FILE} gives key {signer[:16]}", answer_id
            )

    def person_named(self, path: str, by: dict[str, Any], answer_id: str = "") -> None:
        """A signer named without its entry: at least the name is the one keys.json gives."""
        if self.names.get(str(by.get("key_id"))) != by.get("name"):
            self.v.fail(REPORT_FILE, f"{path}.name", f"is not the name {KEYS_FILE} gives that key", answer_id)

    def same(
        self,
        path: str,
        claimed: dict[str, Any],
        stmt: dict[str, Any],
        fields: dict[str, str],
        answer_id: str = "",
    ) -> None:
        for mine, theirs in fields.items():
            if claimed.get(mine) != stmt.get(theirs):
                self.v.fail(REPORT_FILE, f"{path}.{mine}", "differs from its signed log entry", answer_id)

    def withheld(self, path: str, h: dict[str, Any], answer_id: str) -> set[str]:
        """The fields a hold shows as withheld (they must then be empty); each withheld
        entry is not in the pack, so what is said of it is stated, not checked."""
        withheld = set(h.get("withheld") or [])
        unknown = withheld - {"reason", "case_id", "release.reason"}
        if unknown:
            self.v.fail(REPORT_FILE, f"{path}.withheld", f"names unknown fields {sorted(unknown)}", answer_id)
        rel = h.get("release") or {}
        shown = {"reason": h.get("reason"), "case_id": h.get("case_id"), "release.reason": rel.get("reason")}
        for name in sorted(withheld & set(shown)):
            if shown[name] is not None:
                self.v.fail(REPORT_FILE, f"{path}.{name}", "is marked withheld but shown", answer_id)
        if "reason" in withheld:
            self.v.warnings.append(
                f"{path}: the hold at log entry {h.get('seq')} is shown without its reason (withheld from "
                "the exporter), so its entry is not in the pack: its subject, time and signer are stated, "
                "not checked"
            )
        elif "release.reason" in withheld:
            self.v.warnings.append(
                f"{path}: the release of the hold at log entry {h.get('seq')} is shown without its reason "
                "(withheld from the exporter), so its entry is not in the pack: its time and signer are "
                "stated, not checked"
            )
        return withheld

    def hold(self, path: str, h: dict[str, Any], answer_id: str = "") -> None:
        withheld = self.withheld(path, h, answer_id)
        rel = h.get("release")
        if "reason" in withheld:
            self.person_named(f"{path}.signer", h["signer"], answer_id)
            if rel is None and h.get("in_force") is not True:
                self.v.fail(
                    REPORT_FILE, f"{path}.in_force", "a hold without a release is in force", answer_id
                )
            self.count("holds shown without their reason", h.get("seq"))
            return
        got = self.entry(f"{path}.seq", h["seq"], EntryKind.HOLD, answer_id)
        if got is None:
            return
        stmt, signer = got
        fields = {"reason": "reason", "at": "at", "subject": "subject"}
        if "case_id" not in withheld:
            fields["case_id"] = "case_id"
        self.same(path, h, stmt, fields, answer_id)
        self.person(f"{path}.signer", h["signer"], signer, answer_id)
        if rel is not None and "release.reason" in withheld:
            self.person_named(f"{path}.release.signer", rel["signer"], answer_id)
        elif rel is not None:
            self.release(path, h, rel, answer_id)
        elif h.get("in_force") is not True:
            self.v.fail(REPORT_FILE, f"{path}.in_force", "a hold without a release is in force", answer_id)
        self.count("holds", h["seq"])

    def release(self, path: str, h: dict[str, Any], rel: dict[str, Any], answer_id: str) -> None:
        """A shown release is its signed entry, and that entry releases this very hold."""
        got = self.entry(f"{path}.release.seq", rel["seq"], EntryKind.HOLD_RELEASE, answer_id)
        if got is None:
            return
        stmt, signer = got
        if stmt.get("hold_seq") != h["seq"]:
            self.v.fail(REPORT_FILE, f"{path}.release", "releases another hold", answer_id)
        self.same(f"{path}.release", rel, stmt, {"reason": "reason", "at": "at"}, answer_id)
        self.person(f"{path}.release.signer", rel["signer"], signer, answer_id)

    def item(
        self, path: str, item: dict[str, Any], kind: EntryKind, fields: dict[str, str], case_id: str | None
    ) -> None:
        got = self.entry(f"{path}.seq", item["seq"], kind)
        if got is None:
            return
        stmt, signer = got
        self.same(path, item, stmt, fields)
        if case_id is not None and stmt.get("case_id") != case_id:
            self.v.fail(REPORT_FILE, path, f"its signed entry belongs to case {stmt.get('case_id')!r}")
        self.person(f"{path}.by", item["by"], signer)
        self.v.checked["case entries"] += 1

    def case(self, c: dict[str, Any]) -> None:
        cid = c["case_id"]
        opened = {"seq": c["opened"]["seq"], "case_id": cid, "title": c["title"], "purpose": c["purpose"]}
        self.item(
            "$.case",
            {**opened, "at": c["opened"]["at"], "by": c["opened"]["by"]},
            EntryKind.CASE_OPEN,
            {"case_id": "case_id", "title": "title", "purpose": "purpose", "at": "at"},
            None,
        )
        for j, t in enumerate(c["tags"]):
            fields = {"tag": "tag", "answer_id": "answer_id", "target": "target", "at": "at"}
            self.item(f"$.case.tags[{j}]", t, EntryKind.TAG, fields, cid)
        for j, n in enumerate(c["notes"]):
            self.item(
                f"$.case.notes[{j}]",
                n,
                EntryKind.NOTE,
                {"text": "text", "answer_id": "answer_id", "at": "at"},
                cid,
            )
        for j, f in enumerate(c["findings"]):
            fields = {"answer_id": "answer_id", "target": "target", "note": "note", "at": "at"}
            self.item(f"$.case.findings[{j}]", f, EntryKind.FINDING, fields, cid)
        for j, a in enumerate(c["activity"]):
            self.item(
                f"$.case.activity[{j}]",
                a,
                EntryKind.ACCESS,
                {"action": "action", "target": "target", "at": "at"},
                cid if a.get("under_case") else None,
            )
        for j, h in enumerate(c["holds"]):
            self.hold(f"$.case.holds[{j}]", h)
        if c["conclusion"] is not None:
            self.item(
                "$.case.conclusion",
                c["conclusion"],
                EntryKind.CASE_CONCLUSION,
                {"text": "text", "at": "at"},
                cid,
            )


def check_case(v: PackVerification, report: dict[str, Any], records: Records, keys: Any) -> None:
    """Every case item and every hold shown beside an answer, against its signed entry."""
    if not isinstance(keys, dict):
        return
    chk = _Check(v, records, keys)
    for i, a in enumerate(report.get("answers") or []):
        if isinstance(a, dict) and a.get("visible"):
            aid = str(a.get("answer_id", ""))
            for j, h in enumerate(a.get("holds") or []):
                with v.guard(REPORT_FILE, f"$.answers[{i}].holds[{j}]", aid):
                    chk.hold(f"$.answers[{i}].holds[{j}]", h, aid)
    case = report.get("case")
    if case is not None:
        with v.guard(REPORT_FILE, "$.case"):
            chk.case(case)
