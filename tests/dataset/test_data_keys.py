"""Data-key findings: what verify-dataset recomputes from each `--texts` choice.

The exporter's wrapped keys for one collection it may read are deleted from a copy of
the sample vault: `tracer verify` says `data_key_missing`; a plaintext export (whose
signed manifest lists the keys the exporter held) and a ciphertext export (which
carries the wrapped keys) give the same finding; a digests-only export names no keys,
so nothing is recomputed from it (docs/scale.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from store.crypto import load_identity
from tests.dataset.conftest import Exported, export, run_cli
from tracer.engine.dataset_verify import verify_dataset


@pytest.fixture(scope="module")
def lost_key(
    exported: Exported, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[dict[str, object]]]:
    """A vault whose exporter lost its wrapped keys for one collection, and verify's findings on it."""
    base = tmp_path_factory.mktemp("lostkey")
    vault = base / "vault"
    shutil.copytree(exported.vault, vault)
    me = load_identity(exported.key, exported.passphrase.read_bytes()).key_id
    con = duckdb.connect(str(vault / "vault.duckdb"))
    collection = con.execute(
        "SELECT min(collection) FROM data_keys WHERE recipient = ? AND collection <> 'legal'", [me]
    ).fetchone()
    assert collection is not None and collection[0]
    con.execute("DELETE FROM data_keys WHERE recipient = ? AND collection = ?", [me, collection[0]])
    con.close()
    rc, out = run_cli(
        "verify",
        str(vault),
        "--key",
        str(exported.key),
        "--passphrase-file",
        str(exported.passphrase),
        "--json",
        "--full",
    )
    assert rc == 1
    findings = json.loads(out)["findings"]
    assert [f["record"]["collection"] for f in findings if f["kind"] == "data_key_missing"] == [collection[0]]
    return vault, findings


def _data_key(findings: list[dict[str, object]]) -> list[dict[str, object]]:
    return [f for f in findings if str(f["kind"]).startswith("data_key_")]


def test_plaintext_export_recomputes_every_finding_verify_made(
    exported: Exported, lost_key: tuple[Path, list[dict[str, object]]], tmp_path: Path
) -> None:
    vault, expected = lost_key
    export(vault, tmp_path / "ds", exported.key, exported.passphrase, "--row-group", "64")
    report = verify_dataset(tmp_path / "ds")
    assert [f.to_json() for f in report.findings] == expected


def test_ciphertext_export_recomputes_the_data_key_findings(
    exported: Exported, lost_key: tuple[Path, list[dict[str, object]]], tmp_path: Path
) -> None:
    vault, expected = lost_key
    export(vault, tmp_path / "ds", exported.key, exported.passphrase, "--texts", "ciphertext")
    found = [f.to_json() for f in verify_dataset(tmp_path / "ds").findings]
    assert _data_key(found) == _data_key(expected) != []


def test_digests_export_cannot_say_which_keys_were_held(
    exported: Exported, lost_key: tuple[Path, list[dict[str, object]]], tmp_path: Path
) -> None:
    vault, _expected = lost_key
    export(vault, tmp_path / "ds", exported.key, exported.passphrase, "--texts", "digests")
    assert _data_key([f.to_json() for f in verify_dataset(tmp_path / "ds").findings]) == []


def test_a_clean_ciphertext_export_has_no_data_key_finding(exported: Exported, tmp_path: Path) -> None:
    export(exported.vault, tmp_path / "ds", exported.key, exported.passphrase, "--texts", "ciphertext")
    assert _data_key([f.to_json() for f in verify_dataset(tmp_path / "ds").findings]) == []
