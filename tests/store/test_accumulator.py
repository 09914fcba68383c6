"""`Vault.adopt_accumulator`: unlock's tree is reused for the first append, never a wrong one."""

from __future__ import annotations

from store import merkle
from tests.helpers import Case, revision
from tracer.engine.verify import verify


def test_unlock_hands_its_tree_to_the_first_append(case: Case) -> None:
    assert case.ingest(revision("policy", "A", "# P\n\nText.\n", "2026-01-05T00:00:00Z")).ok
    s = case.session("ines")  # unlock checks history, then appends its access entry
    try:
        leaves = s.vault.leaf_hashes()
        latest = s.vault.checkpoints()[-1]
        assert latest.size == len(leaves)
        assert s.vault.tree.cached is not None and s.vault.tree.cached.root() == merkle.root(leaves)
        report = verify(s.vault, None)
        assert report.ok, report.findings
    finally:
        s.close()


def test_a_tree_that_does_not_cover_the_log_is_ignored(case: Case) -> None:
    assert case.ingest(revision("policy", "A", "# P\n\nText.\n", "2026-01-05T00:00:00Z")).ok
    vault = case.reopen()
    short = merkle.RootAccumulator()
    for leaf in vault.leaf_hashes()[:-1]:
        short.append(leaf)
    vault.tree.adopt(short)
    assert vault.tree.cached is None
    whole = merkle.RootAccumulator()
    for leaf in vault.leaf_hashes():
        whole.append(leaf)
    vault.tree.adopt(whole)
    assert vault.tree.cached is not None and vault.tree.cached.root() == whole.root()
    assert vault.tree.cached is not whole  # a copy: a failed batch must not move the caller's tree
