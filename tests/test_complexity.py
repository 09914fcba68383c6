"""No block is more complex than radon's rank C (20), but for those listed here, and the
list only shrinks; at most 1 % of the blocks are ranked C; no function nested in another
(which radon scores in no block) is worse than B. `scripts/complexity.py` counts as radon
counts (radon is not in the environment), and prints every block ranked C or worse."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: blocks ranked C or worse, as a share of all blocks (percent): issue 28 item 4 asked for 3 %;
#: with every branch of that issue merged the tree has 0.5 %, and this keeps it from growing back
C_SHARE_LIMIT = 1.0

# Worse than C when the rule was set (issue 28 item 4), each with its reason to wait; none is
# left, and a block that grows past C must be split, not listed
ALLOWED: set[str] = set()


@functools.cache
def _counter() -> ModuleType:
    spec = importlib.util.spec_from_file_location("complexity", ROOT / "scripts" / "complexity.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


def test_the_counter_counts_as_radon_does(tmp_path: Path) -> None:
    c = _counter()
    source = (
        "def f(a, b):\n"
        "    if a and b or a:\n"  # if +1, two boolean operators +2
        "        return [x for x in a if x]\n"  # comprehension +1, its if +1
        "    for x in b:\n"  # loop +1, its else +1
        "        pass\n"
        "    else:\n"
        "        pass\n"
        "    try:\n"
        "        pass\n"
        "    except ValueError:\n"  # +1
        "        pass\n"
        "    def inner():\n"  # a closure is not counted in f
        "        if a:\n"
        "            pass\n"
        "    return 1 if a else 2\n"  # +1
    )
    (tmp_path / "m.py").write_text(source, encoding="utf-8")
    (block,) = c.blocks_of(tmp_path / "m.py", tmp_path)
    assert (block.name, block.complexity, block.rank) == ("f", 10, "B")
    assert [c.rank(n) for n in (5, 6, 11, 21, 31, 41)] == ["A", "B", "C", "D", "E", "F"]


@functools.cache
def _all_blocks() -> tuple[Any, ...]:
    """Every block of the tree, counted once for the tests that read them all."""
    return tuple(_counter().all_blocks())


def test_no_block_is_worse_than_rank_c_but_the_listed() -> None:
    worse = {f"{b.path} {b.name}" for b in _all_blocks() if b.complexity > 20}
    assert worse - ALLOWED == set(), "split these along their seams"
    assert ALLOWED - worse == set(), "these are C or better now: drop them from ALLOWED"


def test_at_most_one_percent_of_the_blocks_are_rank_c_or_worse() -> None:
    blocks = _all_blocks()
    ranked_c = sorted(f"{b.complexity} {b.path} {b.name}" for b in blocks if b.complexity > 10)
    share = 100 * len(ranked_c) / len(blocks)
    assert share <= C_SHARE_LIMIT, f"{share:.1f} % of {len(blocks)} blocks are C or worse: {ranked_c}"


def test_no_nested_function_hides_complexity() -> None:
    # splitting a block must not move its branches into a closure, which no block counts
    nested = {f"{b.path} {b.name} {b.complexity}" for b in _counter().all_nested() if b.complexity > 10}
    assert nested == set(), "make these module functions or methods, split along their seams"


def test_nested_functions_are_found_and_scored(tmp_path: Path) -> None:
    c = _counter()
    source = "def f(a):\n    def g(b):\n        if b:\n            return 1\n        return 2\n    return g\n"
    (tmp_path / "m.py").write_text(source, encoding="utf-8")
    assert [(b.name, b.complexity) for b in c.nested_of(tmp_path / "m.py", tmp_path)] == [("f.g", 2)]
