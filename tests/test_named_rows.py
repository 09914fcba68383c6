"""Rows have names: no positional tuple of four or more fields crosses a module boundary.

A 6-tuple read by index in one module and unpacked in another is an interface nobody
wrote down; a frozen dataclass or a named tuple (`store/rows.py`) is the interface.  The
boundary is what another module can use: the annotations of public functions and
methods (of public classes), public class fields and public module-level aliases.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 4


def wide_tuples(annotation: ast.expr) -> list[str]:
    """Every `tuple[...]` of `WIDTH` or more fixed fields inside an annotation."""
    found = []
    for node in ast.walk(annotation):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("tuple", "Tuple")
            and isinstance(node.slice, ast.Tuple)
            and len(node.slice.elts) >= WIDTH
        ):
            found.append(ast.unparse(node))
    return found


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _annotations(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    args = node.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return [a for a in [node.returns, *(x.annotation for x in every if x is not None)] if a is not None]


def offenders_in(source: str, where: str) -> list[str]:
    out: list[str] = []

    def visit(body: list[ast.stmt], prefix: str, module_level: bool) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _public(node.name):
                out.extend(
                    f"{where}:{node.lineno} {prefix}{node.name}: {t}"
                    for a in _annotations(node)
                    for t in wide_tuples(a)
                )
            elif isinstance(node, ast.ClassDef) and _public(node.name):
                visit(node.body, f"{prefix}{node.name}.", False)
            elif isinstance(node, ast.AnnAssign) and _public(ast.unparse(node.target)):
                annotation = node.value if module_level and _is_alias(node) else node.annotation
                if annotation is not None:
                    out.extend(
                        f"{where}:{node.lineno} {prefix}{ast.unparse(node.target)}: {t}"
                        for t in wide_tuples(annotation)
                    )
            elif module_level and isinstance(node, ast.Assign):
                names = [ast.unparse(t) for t in node.targets]
                if all(_public(n) for n in names):
                    out.extend(
                        f"{where}:{node.lineno} {', '.join(names)}: {t}" for t in wide_tuples(node.value)
                    )

    visit(ast.parse(source).body, "", True)
    return out


def _is_alias(node: ast.AnnAssign) -> bool:
    return isinstance(node.annotation, ast.Name | ast.Attribute) and ast.unparse(node.annotation).endswith(
        "TypeAlias"
    )


def test_the_checker_finds_wide_tuples_at_the_boundary_only() -> None:
    source = """
Row = tuple[int, str, str, str]
Pair = tuple[int, str]
Alias: TypeAlias = list[tuple[int, int, int, int, int]]
def rows() -> list[tuple[int, str, bytes, bytes]]: ...
def many(x: dict[str, tuple[int, int, int, int]]) -> None: ...
def _private() -> tuple[int, int, int, int]: ...
class Public:
    field: tuple[int, int, int, int]
    def method(self) -> Iterator[tuple[int, int, int, int]]: ...
    def _own(self) -> tuple[int, int, int, int]: ...
class _Private:
    def method(self) -> tuple[int, int, int, int]: ...
def named() -> list[EntryRow]: ...
def variadic() -> tuple[str, ...]: ...
"""
    assert [o.split(" ")[1] for o in offenders_in(source, "m.py")] == [
        "Row:",
        "Alias:",
        "rows:",
        "many:",
        "Public.field:",
        "Public.method:",
    ]


def test_no_positional_tuple_of_four_or_more_fields_crosses_a_module() -> None:
    found = [
        o
        for pkg in ("store", "tracer")
        for path in sorted((ROOT / pkg).rglob("*.py"))
        for o in offenders_in(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert found == [], "give these rows a name (a frozen dataclass, or a NamedTuple for hot rows)"
