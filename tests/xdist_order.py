"""The order in which pytest-xdist hands whole test files to its workers.

`scripts/dev.py test` runs `--dist loadfile --no-loadscope-reorder`: a worker takes the
next file in collection order whenever it is nearly done with its own.  xdist's own
reorder (most tests first) ends the run on the files with one or two long tests (the
screenshot check, the nothing-cut walk) while the other workers have nothing left; and
the Pilot files, which wait on their apps about half their wall time, bunch up so that
every worker waits at once while a core is free.  Here the longest files go first, and
Pilot files and the others are handed out in proportion to the time each kind takes.

The seconds are only for ordering (a file's wall time at -n 3 on a quiet 2-core machine,
issue 28 item 8); a file not listed is estimated from its tests.  A stale figure makes the
run end a little later, never a test fail.
"""

from __future__ import annotations

import inspect

import pytest

__all__ = ["order"]

#: measured wall seconds of the files that take 3 s or more (a quiet run at -n 3)
SECONDS: dict[str, float] = {
    "case/test_tui.py": 49,
    "tui/test_flows.py": 35,
    "tracer/test_tamper.py": 23,
    "tui/test_engine_follow.py": 18,
    "tui/test_layout.py": 18,
    "adversarial/test_review.py": 18,
    "tui/test_nothing_cut.py": 16,
    "store/test_canonical.py": 16,
    "adversarial/test_derived.py": 14,
    "tui/test_snapshots.py": 14,
    "tui/test_unlock.py": 13,
    "tui/test_answer_time.py": 13,
    "tui/test_imported.py": 11,
    "test_sample_vault_build.py": 9,
    "cli/test_store_cli.py": 9,
    "tui/test_record.py": 9,
    "tui/test_screenshots.py": 8,
    "tracer/test_norm2_properties.py": 8,
    "store/test_ingest.py": 7,
    "tracer/test_relocate.py": 7,
    "tracer/test_session.py": 7,
    "tracer/test_receipt.py": 6,
    "tracer/test_engine_cli.py": 6,
    "case/test_adversarial.py": 6,
    "case/test_cli.py": 5,
    "tracer/test_never_substitute.py": 5,
    "dataset/test_tamper_matrix.py": 5,
    "adversarial/test_replay.py": 5,
    "tui/test_answer_fits.py": 5,
    "tui/test_copy_id.py": 5,
    "store/test_vault.py": 5,
    "tracer/test_fixture_refund.py": 4,
    "tui/test_tombstones.py": 4,
    "dataset/test_data_keys.py": 4,
    "adversarial/test_inputs.py": 4,
    "store/test_view_compare_skips.py": 4,
    "producer/test_offline.py": 4,
    "tracer/test_lineage.py": 4,
    "case/test_hold_views.py": 4,
    "dataset/test_verify_dataset.py": 4,
    "adversarial/test_damaged.py": 4,
    "dataset/test_reference_diff.py": 4,
    "tracer/test_answer_time.py": 4,
    "producer/test_llamaindex.py": 4,
    "tracer/test_fixture_travel.py": 4,
    "imports/test_adversarial.py": 3,
    "producer/test_langchain.py": 3,
    "cli/test_no_network.py": 3,
    "test_complexity.py": 3,
    "cli/test_notes_and_export_ids.py": 3,
    "tracer/test_fixture_memory_note.py": 3,
    "report/test_cli.py": 3,
    "tui/test_collector.py": 3,
    "test_layers.py": 3,
}

#: a file not listed: seconds per Pilot test (`async def`: an app driven and waited on)
#: and per other test
PILOT_TEST_S = 2.0
OTHER_TEST_S = 0.1


def _is_pilot(item: pytest.Item) -> bool:
    return isinstance(item, pytest.Function) and inspect.iscoroutinefunction(item.obj)


def order(items: list[pytest.Item]) -> list[pytest.Item]:
    """`items` with each file's tests kept together and in their order, files ordered as
    the module's docstring says."""
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    seconds: dict[str, float] = {}
    for name, tests in files.items():
        known = SECONDS.get(name.removeprefix("tests/"))
        guess = sum(PILOT_TEST_S if _is_pilot(t) else OTHER_TEST_S for t in tests)
        seconds[name] = guess if known is None else known
    pilot = [f for f in files if f.startswith("tests/tui/") or any(map(_is_pilot, files[f]))]
    other = [f for f in files if f not in pilot]
    pilot.sort(key=lambda f: -seconds[f])
    other.sort(key=lambda f: -seconds[f])
    share = sum(seconds[f] for f in pilot) / max(sum(seconds.values()), 1e-9)
    out: list[str] = []
    given = {True: 0.0, False: 0.0}  # seconds handed out so far: Pilot files, the others
    while pilot or other:
        # the kind that is behind its share of what was handed out so far goes next
        take = bool(pilot) and (not other or given[True] <= share * (given[True] + given[False]))
        name = (pilot if take else other).pop(0)
        given[take] += seconds[name]
        out.append(name)
    return [item for name in out for item in files[name]]
