"""`tracer import` and tracing an imported answer with sockets made to fail (the guard of
tests/cli/test_no_network.py): the ingest as the real console script, the rest in turn in
one guarded child, as test_no_network runs its commands."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import World
from tests.cli.test_no_network import GUARD, Guarded
from tests.imports.conftest import FIXTURES
from tests.producer.pipelines import REVISIONS


def test_import_and_trace_offline(vault_world: World, tmp_path: Path) -> None:
    w = vault_world
    guard_dir = tmp_path / "no-network"
    guard_dir.mkdir()
    (guard_dir / "sitecustomize.py").write_text(GUARD, encoding="utf-8")
    env = {"PYTHONPATH": str(guard_dir), "TRACER_KEY": str(w.key("ines"))}
    revs = []
    for rev in REVISIONS.values():
        doc = {
            "schema": "tracer.source_revision/v1", "document_id": rev.document_id, "revision": rev.revision,
            "source_system": rev.source_system, "source_revision": rev.source_revision, "path": rev.path,
            "title": rev.title, "uri": rev.uri, "backend": rev.backend, "collection": rev.collection,
            "committed_at": rev.committed_at, "content": rev.content,
        }  # fmt: skip
        revs.append(w.write(f"rev-{rev.document_id}.json", doc))
    r = w.spawn("ingest", w.vault, *revs, *w.cust(), env=env)
    assert r.code == 0, r
    export = FIXTURES / "langchain-openinference-0.1.80.jsonl"
    guarded = Guarded(w, env)
    try:
        r = guarded.run("import", w.vault, export, "--format", "otlp-json", "--collection", "support",
                        *w.cust(), "--json")  # fmt: skip
        assert r.code == 0 and "network disabled" not in r.err, r
        answers = json.loads(r.out)["answers"]
        assert [a["passages"] for a in answers] == [2, 2] and all(a["located"] == 2 for a in answers)
        r = guarded.run("trace", w.vault, answers[0]["answer_id"])
        assert r.code == 0, r
        assert "IMPORTED — NOT ATTESTED BY THE PRODUCER" in r.out and "[importer-computed]" in r.out
        r = guarded.run("verify", w.vault, "--json")
        assert r.code == 0 and json.loads(r.out)["ok"] is True, r
    finally:
        err = guarded.close()
    assert "network disabled" not in err and "Traceback" not in err, err
