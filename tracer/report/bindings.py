"""What report.json claims, held against the signed entries and against its own texts.

A valid signature on report.json only says who wrote it.  These checks tie each claim to
evidence a reader can check independently: every text hashes to its recorded digest,
every digest and chain element is the one the producer signed in the (proven) manifest,
and every tombstone, revision and finding is the one the (proven) log entry says.
"""

from __future__ import annotations

from typing import Any

from store.crypto import sha256_hex
from store.entries import EntryKind
from tracer.engine.times import utc
from tracer.engine.vocabulary import Currency, Integrity
from tracer.report.checks import PackVerification
from tracer.report.model import REPORT_FILE

__all__ = ["check_answers"]

Records = dict[int, dict[str, Any]]
#: the integrity word of an imported text the export did not hold whole (engine/imported.py)
_NOT_CAPTURED = Integrity.NOT_CAPTURED
#: the text state of a model input its producer signed `not_sent` (engine/trace.py)
_NOT_SENT = Integrity.NOT_SENT
_INTEGRITY: tuple[str, ...] = tuple(Integrity)
_CURRENCY: tuple[str, ...] = tuple(Currency)
_HIDDEN_KEYS = frozenset({"answer_id", "visible", "integrity", "currency"})
_CHAIN = ("document", "source", "chunk", "locator")


def _same_digest(text: dict[str, Any], signed: Any, imported: bool, not_sent: bool = False) -> bool:
    """Whether a reported text names the digest its entry signed.  An imported text the
    export did not hold whole is signed as null and reported as `not_captured` with an
    empty digest and no text; a model input its producer signed `not_sent` has no digest
    and is reported as `not_sent` likewise: that is the same claim (nothing was kept, or
    nothing was sent), and nothing else is."""
    if text.get("digest") == signed:
        return True
    absent = _NOT_CAPTURED if imported else _NOT_SENT if not_sent else None
    return (
        absent is not None
        and signed is None
        and text.get("digest") == ""
        and text.get("state") == absent
        and text.get("text") is None
    )


class _Answer:
    """Checks for one answer; `fail` pins every failure to this answer."""

    def __init__(
        self,
        v: PackVerification,
        records: Records,
        revisions: dict[tuple[str, str], dict[str, Any]],
        i: int,
        a: dict[str, Any],
    ):
        self.v, self.records, self.revisions, self.a = v, records, revisions, a
        self.path = f"$.answers[{i}]"
        self.aid = str(a.get("answer_id", ""))

    def fail(self, path: str, message: str, passage_id: str = "") -> None:
        self.v.fail(REPORT_FILE, path, message, self.aid, passage_id)

    def entry(self, seq: Any, kind: EntryKind, path: str, passage_id: str = "") -> dict[str, Any] | None:
        rec = self.records.get(seq) if isinstance(seq, int) else None
        if rec is None or rec["body"].get("kind") != kind:
            self.fail(path, f"cites log entry {seq} as {kind}, but the pack holds no such entry", passage_id)
            return None
        stmt: dict[str, Any] = rec["stmt"]
        return stmt

    def hidden(self) -> None:
        a = self.a
        if (
            set(a) - _HIDDEN_KEYS
            or a.get("integrity") != Integrity.UNAVAILABLE
            or a.get("currency") != Currency.UNAVAILABLE
        ):
            self.fail(self.path, "an out-of-scope answer must appear as `unavailable` only")

    def texts(self, node: Any, path: str, passage_id: str = "") -> None:
        """SHA-256 of every text equals the digest recorded beside it."""
        if isinstance(node, dict):
            if isinstance(node.get("text"), str) and "digest" in node:
                if sha256_hex(node["text"].encode("utf-8")) != node["digest"]:
                    self.fail(
                        f"{path}.text", "SHA-256 of the text differs from its recorded digest", passage_id
                    )
                else:
                    self.v.checked["text digests"] += 1
            for key, value in node.items():
                pid = str(node.get("passage_id", passage_id)) if key != "passage_id" else passage_id
                self.texts(value, f"{path}.{key}", pid)
        elif isinstance(node, list):
            for j, item in enumerate(node):
                self.texts(item, f"{path}[{j}]", passage_id)

    def states(self, t: dict[str, Any]) -> None:
        """Every state is one of the known words, and the answer's match its trace's."""
        if self.a["integrity"] != t["integrity"] or self.a["currency"] != t["currency"]:
            self.fail(self.path, "the answer's states differ from its trace's")
        tp = f"{self.path}.trace"
        words = [
            (f"{tp}.integrity", t["integrity"], _INTEGRITY, ""),
            (f"{tp}.currency", t["currency"], _CURRENCY, ""),
        ]
        for j, c in enumerate(t["citations"]):
            words += [
                (f"{tp}.citations[{j}].integrity", c["integrity"], _INTEGRITY, ""),
                (f"{tp}.citations[{j}].currency", c["currency"], _CURRENCY, ""),
            ]
        for j, p in enumerate(t["passages"]):
            pid = str(p["passage_id"])
            words += [
                (f"{tp}.passages[{j}].integrity", p["integrity"], _INTEGRITY, pid),
                (f"{tp}.passages[{j}].currency.state", p["currency"]["state"], _CURRENCY, pid),
            ]
        for path, word, known, pid in words:
            if word not in known:
                self.fail(path, f"{word!r} is not a state", pid)

    def manifest(self, t: dict[str, Any]) -> None:
        """Bind the answer to the signed entry it came from: the producer's manifest, or
        for an imported trace the importer's `imported_trace` statement (whose passages
        carry their located chain, or none)."""
        tp = f"{self.path}.trace"
        imported = bool(t.get("imported"))
        m = self.entry(t["seq"], EntryKind.IMPORTED_TRACE if imported else EntryKind.MANIFEST, f"{tp}.seq")
        if m is None:
            return
        # the report echoes times in UTC (`utc`), so the signed time is compared as that instant
        for field, want in (
            ("answer_id", m["answer_id"]),
            ("run_id", m["run_id"]),
            ("generated_at", utc(str(m["generated_at"]))),
        ):
            if t[field] != want:
                self.fail(f"{tp}.{field}", f"differs from the signed manifest (entry {t['seq']})")
        signer = "importer" if imported else "producer"
        for field in ("question", "answer"):
            if not _same_digest(t[field], m[f"{field}_sha256"], imported):
                self.fail(f"{tp}.{field}.digest", f"is not the {field} digest the {signer} signed")
        for j, c in enumerate(t["citations"]):
            self.citation(f"{tp}.citations[{j}]", c, m["citations"][j], t["answer"].get("text"))
        for j, p in enumerate(t["passages"]):
            self.passage(f"{tp}.passages[{j}]", p, m["passages"][p["index"]])
        self.v.checked["bound to manifests"] += 1

    def citation(self, path: str, c: dict[str, Any], mc: dict[str, Any], text: object) -> None:
        """A citation's range and passages are the signed ones, its span the answer's text there."""
        if [c["answer_start"], c["answer_end"], c["passage_ids"]] != [
            mc["answer_start"],
            mc["answer_end"],
            mc["passage_ids"],
        ]:
            self.fail(path, "differs from the signed manifest's citation")
        if (
            isinstance(text, str)
            and c["span"] is not None
            and c["span"] != text[mc["answer_start"] : mc["answer_end"]]
        ):
            self.fail(f"{path}.span", "is not the answer's text at the signed range")

    def passage(self, path: str, p: dict[str, Any], mp: dict[str, Any]) -> None:
        pid = str(p["passage_id"])
        if pid != mp["passage_id"]:
            self.fail(f"{path}.passage_id", "differs from the signed manifest", pid)
        if not p["visible"]:
            return
        imported = bool(p.get("imported"))
        # a v2 manifest signs each passage's model input state; a v1 passage was sent
        signed_state = mp.get("model_input", "sent") if not imported else None
        # a pack written before the state was reported holds only v1 passages: sent
        if not imported and p.get("model_input_state", "sent") != signed_state:
            self.fail(f"{path}.model_input_state", "differs from the signed manifest", pid)
        not_sent = signed_state == _NOT_SENT
        signer = "importer" if imported else "producer"
        for field, signed in (("retrieved", "retrieved_sha256"), ("model_input", "model_input_sha256")):
            if not _same_digest(p[field], mp.get(signed), imported, not_sent):
                self.fail(f"{path}.{field}.digest", f"is not the digest the {signer} signed", pid)
        self.chain(path, p, mp.get("chain") if imported else mp, pid)

    def chain(self, path: str, p: dict[str, Any], signed_chain: dict[str, Any] | None, pid: str) -> None:
        """A visible passage's chain is the signed one (or both are absent), and the
        revisions its currency names are the ones the log holds."""
        if p["chain"] is None or signed_chain is None:
            if p["chain"] != signed_chain:
                self.fail(f"{path}.chain", "differs from the signed entry (located vs not located)", pid)
            return
        for part in _CHAIN:
            if p["chain"][part] != signed_chain[part]:
                self.fail(f"{path}.chain.{part}", "differs from the signed manifest", pid)
        cur = p["currency"]
        for role in ("cited_revision", "current_revision"):
            if role in cur:
                self.revision(f"{path}.currency.{role}", cur[role], p["chain"]["document"], pid)

    def revision(self, path: str, claimed: dict[str, Any], doc: dict[str, Any], pid: str) -> None:
        stmt = self.revisions.get((doc["document_id"], claimed["revision"]))
        if stmt is None:
            self.fail(path, f"revision {claimed['revision']!r} has no log entry in the pack", pid)
            return
        if stmt["content_sha256"] != claimed["content_sha256"]:
            self.fail(f"{path}.content_sha256", "differs from the revision's log entry", pid)

    def tombstones(self) -> None:
        for j, tb in enumerate(self.a.get("tombstones", [])):
            path = f"{self.path}.tombstones[{j}]"
            pid = str(tb.get("passage_id") or "")
            stmt = self.entry(tb["seq"], EntryKind.TOMBSTONE, f"{path}.seq", pid)
            if stmt is None:
                continue
            for field in ("digest", "policy", "reason", "authorizer", "effective_at"):
                if tb[field] != stmt[field]:
                    self.fail(f"{path}.{field}", f"differs from tombstone entry {tb['seq']}", pid)

    def findings(self, t: dict[str, Any]) -> None:
        for j, f in enumerate(t["findings"]):
            path = f"{self.path}.trace.findings[{j}]"
            stmt = self.entry(f["seq"], EntryKind.FINDING, f"{path}.seq")
            if stmt is None:
                continue
            rec = self.records[f["seq"]]
            signer = rec["body"]["envelope"]["signatures"][0].get("keyid")
            if [stmt["answer_id"], stmt["target"], stmt["note"], signer] != [
                self.aid,
                f["target"],
                f["note"],
                f["investigator"],
            ]:
                self.fail(path, f"differs from finding entry {f['seq']}")

    def check(self) -> None:
        if not self.a.get("visible"):
            self.hidden()
            return
        t = self.a["trace"]
        if t["answer_id"] != self.aid:
            self.fail(f"{self.path}.trace.answer_id", "differs from the answer's id")
        self.states(t)
        self.texts(t, f"{self.path}.trace")
        self.manifest(t)
        self.tombstones()
        self.findings(t)


def check_answers(v: PackVerification, report: dict[str, Any], records: Records) -> None:
    """Every claim of every answer, each failure pinned to its answer and passage."""
    answers = report.get("answers")
    if not isinstance(answers, list):
        v.fail(REPORT_FILE, "$.answers", "expected a list of answers")
        return
    revisions = {
        (str(r["stmt"].get("document_id")), str(r["stmt"].get("revision"))): r["stmt"]
        for r in records.values()
        if r["body"].get("kind") == EntryKind.REVISION and isinstance(r["stmt"], dict)
    }
    for i, a in enumerate(answers):
        aid = str(a.get("answer_id", "")) if isinstance(a, dict) else ""
        with v.guard(REPORT_FILE, f"$.answers[{i}]", aid):
            _Answer(v, records, revisions, i, a).check()
            v.checked["answers"] += 1
