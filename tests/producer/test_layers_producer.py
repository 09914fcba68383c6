"""tracer.producer is cheap to depend on: no Textual, DuckDB, pyarrow or jsonschema."""

from __future__ import annotations

from tests.test_layers import _imported

HEAVY = ("textual", "duckdb", "pyarrow", "jsonschema", "rapidfuzz", "platformdirs", "rich")


def test_the_sdk_imports_nothing_heavy() -> None:
    mods = _imported("import tracer.producer, tracer.producer.recorder, tracer.producer.locate")
    assert "tracer.producer.recorder" in mods  # the import really ran
    assert not {m for m in mods if m.split(".")[0] in HEAVY}
    third_party = {m.split(".")[0] for m in mods} - {"store", "tracer"}
    assert {"rfc8785", "cryptography"} <= third_party
    assert not {m for m in mods if m.startswith(("tracer.cli", "tracer.tui", "store.vault", "store.ingest"))}


def test_the_adapters_are_not_imported_by_the_sdk() -> None:
    mods = _imported("import tracer.producer")
    assert not {m for m in mods if m.split(".")[0] in ("langchain_core", "llama_index", "pydantic")}
