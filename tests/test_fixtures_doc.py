"""docs/fixtures.md names, for each of the five fixtures, the tests that pin it: every test
it names must exist, and every fixture test file must cite the page, so a reader of a test
finds the fixture it belongs to and a reader of the page finds the tests."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "fixtures.md"
REF = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")
TRACER_TESTS = ROOT / "tests" / "tracer"
FIXTURE_FILES = [*sorted(TRACER_TESTS.glob("test_fixture_*.py")), TRACER_TESTS / "test_tamper.py"]


def functions_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}


def test_the_reference_pattern_reads_file_and_test() -> None:
    assert REF.findall("- `tests/a/b.py::test_x` and `tests/c.py::test_y`") == [
        ("tests/a/b.py", "test_x"),
        ("tests/c.py", "test_y"),
    ]


def test_every_named_test_exists() -> None:
    refs = REF.findall(DOC.read_text(encoding="utf-8"))
    assert len(refs) >= 5
    missing = [f"{f}::{t}" for f, t in refs if not (ROOT / f).is_file() or t not in functions_of(ROOT / f)]
    assert missing == []


def test_every_fixture_file_is_on_the_page_and_cites_it() -> None:
    text = DOC.read_text(encoding="utf-8")
    for path in FIXTURE_FILES:
        rel = path.relative_to(ROOT).as_posix()
        assert f"`{rel}::" in text, rel
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        assert "docs/fixtures.md" in doc, rel
