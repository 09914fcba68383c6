"""Write an evidence pack: report.json, its DSSE signature, keys, checkpoint, PROV, views.

The people-facing files (report.md, report.html) and lineage.prov.json are rendered
from the report dict itself, so they say exactly what the signed JSON says; their
SHA-256 digests are then written into report.json before it is signed, so the one
signature covers every file in the pack.  The pack is written to a temporary sibling
directory and renamed into place, so a failed export never leaves half a pack.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from store.crypto import sha256_hex
from store.dsse import sign_envelope
from tracer.clock import now_iso
from tracer.engine.normalizers import RECORDED
from tracer.engine.session import Session
from tracer.report.casepack import CaseSelection
from tracer.report.collect import collect
from tracer.report.model import (
    CHECKPOINT_FILE,
    DSSE_FILE,
    FORMATS,
    HTML_FILE,
    KEYS_FILE,
    MD_FILE,
    PAYLOAD_TYPE,
    PROV_FILE,
    REPORT_FILE,
    ReportError,
)
from tracer.report.prov import prov_json
from tracer.report.render_html import render_html
from tracer.report.render_md import render_md

__all__ = ["dump_json", "export_pack"]


def dump_json(value: Any) -> bytes:
    """Pretty, ASCII-only JSON: no byte of it can act on a terminal or hide a bidi override."""
    return (json.dumps(value, indent=2, ensure_ascii=True) + "\n").encode("ascii")


def _check_target(out_dir: Path) -> None:
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise ReportError(f"{out_dir}: already exists and is not an empty directory; choose a new --out")


def _files(report: dict[str, Any], keys: dict[str, Any], note: str, formats: set[str]) -> dict[str, bytes]:
    files = {
        CHECKPOINT_FILE: note.encode("utf-8"),
        KEYS_FILE: dump_json(keys),
        PROV_FILE: dump_json(prov_json(report)),
    }
    if "md" in formats:
        files[MD_FILE] = render_md(report).encode("utf-8")
    if "html" in formats:
        files[HTML_FILE] = render_html(report).encode("utf-8")
    return files


def export_pack(
    session: Session,
    answer_ids: list[str],
    out_dir: Path,
    formats: set[str],
    selection: str = "",
    case: CaseSelection | None = None,
    normalizer: str = RECORDED,
) -> Path:
    """Export `answer_ids` as an evidence pack in `out_dir` (created; must not hold files).

    The export is recorded as an access entry before anything is read.  Returns the pack
    directory.  Raises ReportError (unknown answer, damaged log, occupied target).
    """
    unknown = set(formats) - FORMATS
    if unknown:
        raise ReportError(f"unknown format(s) {', '.join(sorted(unknown))}; choose from md, html, json")
    _check_target(out_dir)
    collected = collect(session, answer_ids, now_iso(), selection, case, normalizer)
    report = collected.report
    files = _files(report, collected.keys, collected.note, set(formats))
    report["files"] = {name: sha256_hex(data) for name, data in sorted(files.items())}
    files[REPORT_FILE] = dump_json(report)
    envelope = sign_envelope(files[REPORT_FILE], PAYLOAD_TYPE, session.identity)
    files[DSSE_FILE] = dump_json(envelope.to_json())
    return _write(out_dir, files)


def _write(out_dir: Path, files: dict[str, bytes]) -> Path:
    parent = out_dir.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=parent))
    try:
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        if out_dir.exists():
            out_dir.rmdir()
        os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir
