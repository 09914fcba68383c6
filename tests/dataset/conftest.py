"""An export of the sample vault, made once per module and copied per tamper."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.templates import copy_of
from tracer.cli.main import main
from tracer.engine.trust import TrustStore

if TYPE_CHECKING:
    from sample_vault.build import BuildInfo


@dataclass(frozen=True)
class Exported:
    vault: Path
    dataset: Path
    verify_json: dict[str, Any]
    key: Path
    passphrase: Path


def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(list(argv))
    return rc, out.getvalue()


def export(vault: Path, out: Path, key: Path, passphrase: Path, *extra: str) -> None:
    rc, _ = run_cli(
        "export-dataset",
        str(vault),
        str(out),
        "--key",
        str(key),
        "--passphrase-file",
        str(passphrase),
        *extra,
    )
    assert rc == 0


@pytest.fixture(scope="module")
def exported(sample_build: BuildInfo, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Exported]:
    """`tracer verify --json --full` on a copy of the sample vault, then an export of the
    very log it verified (the export unlocks read-only, so it appends nothing): made once
    per process, copied per module (the tests copy again before they tamper)."""
    base = tmp_path_factory.mktemp("dataset")
    src = copy_of("dataset-exported", lambda d: _export_sample(sample_build, d), base)
    trust = TrustStore(base / "home").path
    trust.write_text(
        trust.read_text(encoding="utf-8").replace(str(src.resolve()), str(base.resolve())), encoding="utf-8"
    )
    verify_json = json.loads((base / "verify.json").read_text(encoding="utf-8"))
    with pytest.MonkeyPatch.context() as mp:
        # as before: the module's own fixtures, set up before each test's home, share this one
        mp.setenv("TRACER_HOME", str(base / "home"))
        yield Exported(
            base / "vault",
            base / "export",
            verify_json,
            base / "vault" / "keys" / "omar.key",
            base / "omar.pass",
        )


def _export_sample(sample_build: BuildInfo, base: Path) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRACER_HOME", str(base / "home"))
        vault = base / "vault"
        shutil.copytree(sample_build.out_dir, vault)
        key = vault / "keys" / "omar.key"
        passphrase = base / "omar.pass"
        passphrase.write_text("omar-demo")
        rc, out = run_cli(
            "verify", str(vault), "--key", str(key), "--passphrase-file", str(passphrase), "--json", "--full"
        )
        assert rc == 1
        (base / "verify.json").write_text(out, encoding="utf-8")
        export(vault, base / "export", key, passphrase, "--row-group", "64")
