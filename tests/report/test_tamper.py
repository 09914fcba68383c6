"""Alter each kind of file in a pack: each alteration is caught and pinned to its place."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tracer.report import Failure, verify_pack
from tracer.report.export import dump_json

Edit = Callable[[Path], None]


def _edit_json(pack: Path, name: str, change: Callable[[Any], None]) -> None:
    value = json.loads((pack / name).read_text("utf-8"))
    change(value)
    (pack / name).write_bytes(dump_json(value))


def _answer(r: dict[str, Any], aid: str) -> dict[str, Any]:
    return next(a for a in r["answers"] if a["answer_id"] == aid)


def _record(r: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(rec for rec in r["records"] if rec["kind"] == kind)


def report_text(pack: Path) -> None:
    def change(r: Any) -> None:
        t = _answer(r, "ans-stale")["trace"]
        t["answer"]["text"] = t["answer"]["text"].replace("thirty", "forty")

    _edit_json(pack, "report.json", change)


def report_text_byte(pack: Path) -> None:
    data = (pack / "report.json").read_bytes()
    (pack / "report.json").write_bytes(data.replace(b"within thirty days", b"within thirty dayz", 1))


def digest(pack: Path) -> None:
    def change(r: Any) -> None:
        p = _answer(r, "ans-hostile")["trace"]["passages"][0]
        p["retrieved"]["digest"] = "0" * 64

    _edit_json(pack, "report.json", change)


def text_and_digest(pack: Path) -> None:
    """Text rewritten and its digest recomputed: only the signed manifest catches it."""
    import hashlib

    def change(r: Any) -> None:
        t = _answer(r, "ans-stale")["trace"]
        t["answer"]["text"] = "Refunds are accepted for ninety days."
        t["answer"]["digest"] = hashlib.sha256(t["answer"]["text"].encode()).hexdigest()

    _edit_json(pack, "report.json", change)


def citation_span(pack: Path) -> None:
    def change(r: Any) -> None:
        _answer(r, "ans-stale")["trace"]["citations"][0]["span"] = "Refunds are accepted for ninety days."

    _edit_json(pack, "report.json", change)


def proof_hash(pack: Path) -> None:
    def change(r: Any) -> None:
        h = _record(r, "manifest")["inclusion"]["hashes"]
        h[0] = ("f" if h[0][0] != "f" else "e") + h[0][1:]

    _edit_json(pack, "report.json", change)


def _altered_entry(rec: dict[str, Any]) -> bytes:
    """The tombstone entry with one word of its signed statement changed."""
    body = json.loads(base64.b64decode(rec["entry"]))
    payload = base64.b64decode(body["envelope"]["payload"]).replace(b"expired", b"expirex")
    body["envelope"]["payload"] = base64.b64encode(payload).decode()
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def entry(pack: Path) -> None:
    def change(r: Any) -> None:
        rec = _record(r, "tombstone")
        rec["entry"] = base64.b64encode(_altered_entry(rec)).decode()

    _edit_json(pack, "report.json", change)


def entry_and_leaf(pack: Path) -> None:
    """Entry altered and its leaf hash recomputed: only the inclusion proof catches it."""
    import hashlib

    def change(r: Any) -> None:
        rec = _record(r, "tombstone")
        data = _altered_entry(rec)
        rec["entry"] = base64.b64encode(data).decode()
        rec["leaf_hash"] = hashlib.sha256(b"\x00" + data).hexdigest()

    _edit_json(pack, "report.json", change)


def tombstone_claim(pack: Path) -> None:
    def change(r: Any) -> None:
        _answer(r, "ans-purged")["tombstones"][0]["authorizer"] = "nobody"

    _edit_json(pack, "report.json", change)


def checkpoint_byte(pack: Path) -> None:
    note = (pack / "checkpoint.note").read_bytes()
    lines = note.split(b"\n")
    lines[1] = str(int(lines[1]) + 1).encode()
    (pack / "checkpoint.note").write_bytes(b"\n".join(lines))


def keys_custodian(pack: Path) -> None:
    def change(k: Any) -> None:
        raw = bytearray(base64.b64decode(k["custodian"]["ed25519"]))
        raw[0] ^= 1
        k["custodian"]["ed25519"] = base64.b64encode(bytes(raw)).decode()

    _edit_json(pack, "keys.json", change)


def keys_exporter(pack: Path) -> None:
    def change(k: Any) -> None:
        raw = bytearray(base64.b64decode(k["exporter"]["ed25519"]))
        raw[5] ^= 1
        k["exporter"]["ed25519"] = base64.b64encode(bytes(raw)).decode()

    _edit_json(pack, "keys.json", change)


def dsse_signature(pack: Path) -> None:
    def change(env: Any) -> None:
        sig = bytearray(base64.b64decode(env["signatures"][0]["sig"]))
        sig[10] ^= 1
        env["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()

    _edit_json(pack, "report.dsse.json", change)


def html_byte(pack: Path) -> None:
    data = (pack / "report.html").read_bytes()
    (pack / "report.html").write_bytes(data.replace(b"fourteen", b"fifteen", 1))


def prov_byte(pack: Path) -> None:
    data = (pack / "lineage.prov.json").read_bytes()
    (pack / "lineage.prov.json").write_bytes(data.replace(b"wasRevisionOf", b"wasRevisionOx", 1))


def keys_missing(pack: Path) -> None:
    (pack / "keys.json").unlink()


# (edit, file, JSON path prefix, answer id) of the failure that must be among those found
CASES: list[tuple[Edit, str, str, str]] = [
    (report_text, "report.json", "$.answers[0].trace.answer.text", "ans-stale"),
    (report_text_byte, "report.json", "$", ""),
    (digest, "report.json", "$.answers[2].trace.passages[0].retrieved.digest", "ans-hostile"),
    (text_and_digest, "report.json", "$.answers[0].trace.answer.digest", "ans-stale"),
    (citation_span, "report.json", "$.answers[0].trace.citations[0].span", "ans-stale"),
    (proof_hash, "report.json", "$.records[", ""),
    (entry, "report.json", "$.records[", ""),
    (entry_and_leaf, "report.json", "$.records[", ""),
    (entry_and_leaf, "report.json", "$.answers[1].tombstones", "ans-purged"),
    (tombstone_claim, "report.json", "$.answers[1].tombstones[0].authorizer", "ans-purged"),
    (checkpoint_byte, "checkpoint.note", "$", ""),
    (keys_custodian, "keys.json", "$.custodian", ""),
    (keys_exporter, "keys.json", "$.exporter.key_id", ""),
    (dsse_signature, "report.dsse.json", "$.signatures[0].sig", ""),
    (html_byte, "report.html", "$", ""),
    (prov_byte, "lineage.prov.json", "$", ""),
    (keys_missing, "keys.json", "$", ""),
]


def _pinned(failures: list[Failure], file: str, path: str, answer_id: str) -> bool:
    return any(
        f.file == file and f.path.startswith(path) and (not answer_id or f.answer_id == answer_id)
        for f in failures
    )


@pytest.mark.parametrize(("edit", "file", "path", "answer_id"), CASES, ids=[c[0].__name__ for c in CASES])
def test_alteration_is_caught_and_pinned(
    pack: Path, edit: Edit, file: str, path: str, answer_id: str
) -> None:
    assert verify_pack(pack).ok
    edit(pack)
    v = verify_pack(pack)
    assert not v.ok
    assert _pinned(v.failures, file, path, answer_id), [f.line() for f in v.failures]


def test_report_edit_also_breaks_the_signature(pack: Path) -> None:
    report_text(pack)
    v = verify_pack(pack)
    assert _pinned(v.failures, "report.json", "$", "")
    assert any("signed in report.dsse.json" in f.message for f in v.failures)


def test_custodian_key_swap_breaks_the_checkpoint(pack: Path) -> None:
    keys_custodian(pack)
    v = verify_pack(pack)
    assert any(f.file in {"keys.json", "checkpoint.note"} for f in v.failures)


def test_garbage_does_not_crash_the_checker(pack: Path) -> None:
    (pack / "report.json").write_text('{"schema": "tracer.report/v1", "answers": [1, {"visible": true}]}')
    v = verify_pack(pack)
    assert not v.ok
    assert any(f.path.startswith("$.answers[1]") for f in v.failures), [f.line() for f in v.failures]


def test_malformed_records_do_not_crash_the_checker(pack: Path) -> None:
    def change(r: Any) -> None:
        r["records"][0]["entry"] = base64.b64encode(b'{"kind": "vault_init", "seq": 0}').decode()
        r["records"][1]["entry"] = "not base64!"
        r["records"][2]["inclusion"] = {"tree_size": "x"}
        del r["records"][3]["seq"]

    _edit_json(pack, "report.json", change)
    v = verify_pack(pack)
    assert not v.ok
    paths = {f.path.split(".")[1] for f in v.failures if f.path.startswith("$.records[")}
    assert {"records[0]", "records[1]", "records[2]", "records[3]"} <= paths, [f.line() for f in v.failures]


def test_extra_file_is_a_warning(pack: Path) -> None:
    (pack / "notes.txt").write_text("mine")
    v = verify_pack(pack)
    assert v.ok
    assert any("notes.txt" in w for w in v.warnings)
