"""Cyclomatic complexity of every block under store/ and tracer/, counted as radon counts it.

radon is not in the project's environment, so this is its `ComplexityVisitor` rule set
re-stated over `ast` (a function starts at 1; +1 per `if`, conditional expression,
`assert`, loop (+1 more for its `else`), comprehension and its `if`s, `except` handler
and `try`'s `else`, each `and`/`or` operand after the first, each `match` case but a
bare `_`; a nested function's body is its own block, not its parent's; a class scores
the mean of its methods, plus one when it has more than one). Ranks are radon's:
A 1-5, B 6-10, C 11-20, D 21-30, E 31-40, F 41+.

    python scripts/complexity.py            # summary, and every block ranked C or worse
    python scripts/complexity.py --worst 20 # the twenty most complex blocks
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("store", "tracer")
RANKS = ((5, "A"), (10, "B"), (20, "C"), (30, "D"), (40, "E"))


@dataclass(frozen=True, slots=True)
class Block:
    """One function, method or class with its complexity."""

    path: str
    line: int
    name: str
    complexity: int

    @property
    def rank(self) -> str:
        return rank(self.complexity)


def rank(complexity: int) -> str:
    """radon's letter for a complexity."""
    for limit, letter in RANKS:
        if complexity <= limit:
            return letter
    return "F"


_Function = ast.FunctionDef | ast.AsyncFunctionDef


def _decisions(node: ast.AST) -> int:
    """The decision points in `node` and below, not entering nested functions or classes."""
    total = 0
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _Function | ast.ClassDef | ast.Lambda):
            continue
        total += _own(child) + _decisions(child)
    return total


def _own(node: ast.AST) -> int:
    if isinstance(node, ast.Try | ast.TryStar):
        return len(node.handlers) + bool(node.orelse)
    if isinstance(node, ast.BoolOp):
        return len(node.values) - 1
    if isinstance(node, ast.If | ast.IfExp | ast.Assert):
        return 1
    if isinstance(node, ast.Match):
        wildcard = any(
            isinstance(case.pattern, ast.MatchAs) and case.pattern.pattern is None for case in node.cases
        )
        return max(0, len(node.cases) - wildcard)
    if isinstance(node, ast.For | ast.AsyncFor | ast.While):
        return 1 + bool(node.orelse)
    if isinstance(node, ast.comprehension):
        return 1 + len(node.ifs)
    return 0


def _function_complexity(node: _Function) -> int:
    return 1 + sum(
        _own(child) + _decisions(child)
        for child in node.body
        if not isinstance(child, _Function | ast.ClassDef)
    )


def blocks_of(path: Path, root: Path = ROOT) -> list[Block]:
    """Top-level functions, classes and their methods in one file (closures count in no block)."""
    rel = path.relative_to(root).as_posix()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[Block] = []

    def visit_class(node: ast.ClassDef, prefix: str) -> None:
        methods: list[int] = []
        for child in node.body:
            if isinstance(child, _Function):
                score = _function_complexity(child)
                methods.append(score)
                found.append(Block(rel, child.lineno, f"{prefix}{node.name}.{child.name}", score))
            elif isinstance(child, ast.ClassDef):
                visit_class(child, f"{prefix}{node.name}.")
        body = 1 + sum(methods)
        score = int(body / len(methods) + (len(methods) > 1)) if methods else body
        found.append(Block(rel, node.lineno, f"{prefix}{node.name}", score))

    for node in tree.body:
        if isinstance(node, _Function):
            found.append(Block(rel, node.lineno, node.name, _function_complexity(node)))
        elif isinstance(node, ast.ClassDef):
            visit_class(node, "")
    return found


def all_blocks(root: Path = ROOT) -> list[Block]:
    """Every block of the product packages, in path order."""
    return [b for pkg in PACKAGES for p in sorted((root / pkg).rglob("*.py")) for b in blocks_of(p, root)]


def nested_of(path: Path, root: Path = ROOT) -> list[Block]:
    """Functions defined inside functions, each scored on its own: radon leaves them out of
    every block, so complexity moved into one would vanish from the figures."""
    rel = path.relative_to(root).as_posix()
    found: list[Block] = []

    def visit(node: ast.AST, owner: str, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _Function):
                name = f"{owner}.{child.name}" if owner else child.name
                if inside:
                    found.append(Block(rel, child.lineno, name, _function_complexity(child)))
                visit(child, name, True)
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{owner}.{child.name}" if owner else child.name, inside)
            else:
                visit(child, owner, inside)

    visit(ast.parse(path.read_text(encoding="utf-8")), "", False)
    return found


def all_nested(root: Path = ROOT) -> list[Block]:
    """`nested_of` over the product packages."""
    return [b for pkg in PACKAGES for p in sorted((root / pkg).rglob("*.py")) for b in nested_of(p, root)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worst", type=int, default=0, help="list the N most complex blocks instead")
    args = parser.parse_args(argv)
    blocks = all_blocks()
    counts = {letter: 0 for _, letter in RANKS} | {"F": 0}
    for b in blocks:
        counts[b.rank] += 1
    shown = sorted(blocks, key=lambda b: -b.complexity)
    shown = shown[: args.worst] if args.worst else [b for b in shown if b.rank >= "C"]
    for b in shown:
        print(f"{b.rank} {b.complexity:3d}  {b.path}:{b.line} {b.name}")
    c_or_worse = sum(counts[r] for r in "CDEF")
    print(
        f"{len(blocks)} blocks; "
        + ", ".join(f"{r} {n}" for r, n in counts.items())
        + f"; C or worse {c_or_worse} ({100 * c_or_worse / max(1, len(blocks)):.1f} %),"
        + f" worse than C {c_or_worse - counts['C']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
