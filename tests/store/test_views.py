"""View-row helpers: the fast paths write what the plain ones wrote."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from store.views import _j

_reference = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode

# lone surrogates included
_text = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=12)
_scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), _text)
_json = st.recursive(
    _scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_text, inner, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(value=st.one_of(st.lists(_text, max_size=6), _json))
def test_view_json_equals_the_encoder(value: Any) -> None:
    assert _j(value) == _reference(value)


def test_view_json_str_subclass_takes_the_encoder() -> None:
    class Tag(str):
        pass

    assert _j([Tag("a"), "b"]) == _reference([Tag("a"), "b"])


def test_ingest_leaves_the_collector_as_it_found_it(tmp_path: Path) -> None:
    from store.crypto import Identity
    from store.ingest import ingest
    from store.vault import Vault

    custodian = Identity.from_seed("custodian", b"views-gc")
    vault = Vault.create(tmp_path / "v", custodian, "2026-01-01T00:00:00Z")
    try:
        assert gc.isenabled()
        ingest(vault, [tmp_path / "missing.json"], custodian, "2026-01-01T00:00:00Z")
        assert gc.isenabled()
        gc.disable()
        try:
            ingest(vault, [tmp_path / "missing.json"], custodian, "2026-01-01T00:00:00Z")
            assert not gc.isenabled()
        finally:
            gc.enable()
    finally:
        vault.close()


_DIGESTS = ["0" * 64, "f" * 64, "F" * 64, "0" * 63, "0" * 65, "0" * 64 + "\n", "\n" + "0" * 64, "g" * 64]
_DIGESTS += ["\u0663" * 64, "0" * 32 + " " + "0" * 31, ""]


def test_compiled_digest_check_agrees_with_jsonschema() -> None:
    import copy

    from store.schemacheck import validators as _validators
    from tests.store.test_ingest import _schema_docs

    payload = dict(_schema_docs())["manifest-v1"]
    validator, fast = _validators("manifest-v1")
    for digest in _DIGESTS:
        for where in ("question_sha256", "passages"):
            doc = copy.deepcopy(payload)
            if where == "passages":
                doc["passages"][0]["retrieved_sha256"] = digest
            else:
                doc[where] = digest
            assert fast(doc) == validator.is_valid(doc), (where, digest)
