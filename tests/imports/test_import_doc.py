"""Every block of docs/import.md, run verbatim and offline, with the producers guide's extractor.

The `sh` block runs under `bash -e` in a folder set up as its sentence says (the vault,
the custodian's key, `revisions/`, `traces.jsonl`, `TRACER_KEY`), on the committed
LangChain OpenInference export. Each `text` block is what `tracer import` prints for a
refused file: the file it names is made from the same export (the fault the block
describes, nothing else changed) and the block must appear verbatim in the output. A
block this test does not know how to run fails it, so a new example cannot go unchecked.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.imports.conftest import FIXTURES
from tests.producer.pipelines import REVISIONS
from tests.producer.test_doc_snippets import blocks

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "import.md"
EXPORT = FIXTURES / "langchain-openinference-0.1.80.jsonl"
PASSPHRASE = "import-doc-passphrase"


def _lines() -> list[str]:
    return EXPORT.read_text(encoding="utf-8").splitlines()


def _dump(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _duplicate_key() -> str:
    """Line 2's first retrieved document's metadata with a second `document_id` member."""
    first, second = _lines()
    d = json.loads(second)
    attr = d["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"][4]
    assert attr["key"] == "retrieval.documents.0.document.metadata"
    value = attr["value"]["stringValue"]
    attr["value"]["stringValue"] = '{"document_id": "returns", ' + value[1:]
    return f"{first}\n{_dump(d)}\n"


def _written_twice() -> str:
    first = _lines()[0]
    return f"{first}\n{first}\n"


def _newline_in_service_name() -> str:
    d = json.loads(_lines()[0])
    attr = d["resourceSpans"][0]["resource"]["attributes"][4]
    assert attr["key"] == "service.name"
    attr["value"]["stringValue"] = "northstar\nsupport"
    return f"{_dump(d)}\n"


REFUSED: dict[str, Callable[[], str]] = {
    "bad": _duplicate_key,
    "dup": _written_twice,
    "x": _newline_in_service_name,
}


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def _setup(root: Path, env: dict[str, str]) -> None:
    tracer = [sys.executable, "-m", "tracer.cli.main"]
    steps = [
        [*tracer, "keygen", "custodian", "--out", "."],
        [*tracer, "keygen", "ines", "--out", "."],
        [*tracer, "init", "vault", "--custodian-key", "custodian.key"],
        [
            *tracer,
            "investigators",
            "grant",
            "vault",
            "ines.pub",
            "--scope",
            "*",
            "--custodian-key",
            "custodian.key",
        ],
    ]
    for step in steps:
        r = _run(step, root, env)
        assert r.returncode == 0, (step, r.stdout, r.stderr)
    (root / "revisions").mkdir()
    for rev in REVISIONS.values():
        text = json.dumps(rev.to_input(), ensure_ascii=False)
        (root / "revisions" / f"{rev.document_id}-{rev.revision}.json").write_text(text, encoding="utf-8")
    (root / "traces.jsonl").write_bytes(EXPORT.read_bytes())


def test_the_page_has_the_blocks_this_test_expects() -> None:
    langs = [lang for lang, _, _ in blocks(DOC)]
    assert langs.count("sh") == 1 and langs.count("text") == len(REFUSED), langs


@pytest.mark.slow
def test_every_block_of_the_import_page_runs_verbatim(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),  # this tree's tracer, whichever checkout the venv points at
        "TRACER_PASSPHRASE": PASSPHRASE,
        "TRACER_HOME": str(tmp_path / "home"),
        "TRACER_KEY": "ines.key",
    }
    _setup(tmp_path, env)
    seen: set[str] = set()
    for lang, code, line in blocks(DOC):
        where = f"docs/import.md:{line}"
        if lang == "sh":
            r = _run(["bash", "-e", "-c", code], tmp_path, env)
            assert r.returncode == 0, f"{where} failed:\n{r.stdout}\n{r.stderr}"
            assert "would import imp-d2c6350bee759526 from traces.jsonl" in r.stdout, r.stdout
            assert "IMPORTED — NOT ATTESTED BY THE PRODUCER" in r.stdout, r.stdout
            continue
        m = re.match(r"REJECTED exports/(\w+)\.jsonl:", code)
        assert lang == "text" and m is not None and m.group(1) in REFUSED, (
            f"{where}: a block this test cannot run"
        )
        name = m.group(1)
        seen.add(name)
        export = tmp_path / "exports" / f"{name}.jsonl"
        export.parent.mkdir(exist_ok=True)
        export.write_text(REFUSED[name](), encoding="utf-8")
        args = [
            "import",
            "vault",
            f"exports/{name}.jsonl",
            "--format",
            "otlp-json",
            "--collection",
            "support",
        ]
        r = _run(["tracer", *args, "--custodian-key", "custodian.key"], tmp_path, env)
        assert r.returncode == 1, f"{where}: {r.stdout}\n{r.stderr}"
        assert code in r.stdout, f"{where}: the page says\n{code}\ntracer printed\n{r.stdout}"
    assert seen == set(REFUSED)
