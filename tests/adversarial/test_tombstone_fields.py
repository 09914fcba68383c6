"""A tombstone stands where the text would: its fields cannot smuggle a line of output.

Before, `tracer purge --reason $'R\\nRESULT OK: no findings'` was signed into the log and
`trace` printed the newline raw, a fake result line; a digest argument with a newline
was echoed raw in the refusal and never checked as a SHA-256."""

from __future__ import annotations

import pytest

from store import admin, queries
from store.crypto import sha256_hex
from store.errors import InputError
from store.queries import TombstoneRow
from tests.cli.conftest import World
from tests.helpers import Case, manifest, passage, revision, signed
from tracer.cli import render

FAKE = "R\nRESULT      OK: no findings"


def _setup(case: Case) -> str:
    rev = revision("travel", "A", "Employees may claim up to 40 EUR per day.\n", "2026-01-05T00:00:00Z")
    ps = passage(rev, "40 EUR")
    assert case.ingest(rev, signed(case, manifest("ans-1", "Forty euros.", [ps]))).ok
    return sha256_hex(ps["retrieved_text"].encode())


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("reason", FAKE),
        ("policy", "P\x1b[31m"),
        ("authorizer", "A\u202e"),
        ("reason", "  "),
        ("policy", "a\u2028b"),
    ],
)
def test_a_tombstone_field_that_is_not_one_printable_line_is_refused(
    case: Case, field: str, value: str
) -> None:
    digest = _setup(case)
    fields = {"policy": "RET-6M", "reason": "superseded", "authorizer": "HR"} | {field: value}
    size = case.vault.size()
    with pytest.raises(InputError, match=rf"\$\.{field}"):
        admin.purge(case.vault, case.custodian, digest, effective_at="2026-05-01T00:00:00Z", **fields)
    assert case.vault.size() == size and queries.blob_present(case.vault, digest)


@pytest.mark.parametrize("digest", ["a" * 64 + "\n", "A" * 64, "a" * 63, "a" * 64 + "\nRESULT OK"])
def test_a_purge_digest_must_be_sha256_hex(case: Case, digest: str) -> None:
    _setup(case)
    with pytest.raises(InputError, match="not a SHA-256 digest"):
        admin.purge(case.vault, case.custodian, digest, "RET-6M", "superseded", "HR", "2026-05-01T00:00:00Z")


def test_the_cli_refuses_a_newline_digest_with_exit_2_and_no_raw_newline(vault_world: World) -> None:
    w = vault_world
    r = w.run(
        "purge",
        w.vault,
        "a" * 64 + "\nRESULT      OK: no findings",
        "--policy",
        "P",
        "--reason",
        "R",
        *w.cust(),
    )
    assert r.code == 2 and "not a SHA-256 digest" in r.err, r
    assert "\nRESULT" not in r.err, r.err


def test_a_tombstone_is_rendered_on_one_line_whatever_it_holds() -> None:
    """A vault written before this check may hold such a tombstone: it still prints as one line."""
    tb = TombstoneRow(7, "a" * 64, "P\nX", FAKE, "A\nB", "2026-05-01T00:00:00Z")
    line = render._tombstone_line(tb)
    assert line.startswith("\n    TOMBSTONE") and line.count("\n") == 1, line
    assert "RESULT" in line and "\nRESULT" not in line
