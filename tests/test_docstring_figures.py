"""No benchmark figures in docstrings: they go stale in the code and belong in
`docs/benchmarks.md`, where each figure stands beside its command, commit and load."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# a quantity with a unit of time or size, a speed-up, or a share of a measured run
FIGURE = re.compile(
    r"\d[\d.,]*\s*(?:ns|µs|us|ms|s|sec|seconds|KB|kB|KiB|MB|MiB|GB|GiB|TB)\b"
    r"|\d[\d.,]*\s*(?:x|×|times)\s+(?:faster|slower|fewer|more)\b"
    r"|\bseveral times (?:faster|slower)\b"
    r"|\d[\d.,]*\s*%\s+of\b",
)
# literals inside a docstring are examples of arguments ('256MB'), not measurements
LITERAL = re.compile(r"`[^`]*`|(?<!\w)'[^'\n]*'")


def figures_in(text: str) -> list[str]:
    return [m.group(0) for m in FIGURE.finditer(LITERAL.sub("", text))]


def _docstrings(path: Path) -> list[tuple[str, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                doc = ast.get_docstring(child, clean=False)
                if doc:
                    found.append((name, doc))
                visit(child, f"{name}.")

    module_doc = ast.get_docstring(tree, clean=False)
    if module_doc:
        found.append(("<module>", module_doc))
    visit(tree, "")
    return found


def _offenders() -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for pkg in ("store", "tracer"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            for name, doc in _docstrings(path):
                hits = figures_in(doc)
                if hits:
                    out[(rel, name)] = hits
    return out


def test_the_pattern_finds_figures_and_passes_words() -> None:
    assert figures_in("stalls a keystroke by 50-130 ms at a million passages") == ["130 ms"]
    assert figures_in("reads ~1.3 GB of entry bytes") == ["1.3 GB"]
    assert figures_in("first frame 0.43 s -> 0.21 s") == ["0.43 s", "0.21 s"]
    assert figures_in("verify 10x faster") == ["10x faster"]
    assert figures_in("hashes several times faster") == ["several times faster"]
    assert figures_in("~12 % of a 10k revalidation") == ["12 % of"]
    assert figures_in("cap it (e.g. '256MB'), progress every 1%, a second writer, 80×24") == []


def test_no_benchmark_figures_in_docstrings() -> None:
    assert _offenders() == {}, "move these figures to docs/benchmarks.md"
