"""The layers point one way: store ← tracer engine ← TUI.  A contract a test enforces stays true."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _imported(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return set(out.stdout.split())


def test_store_imports_neither_tracer_nor_textual() -> None:
    mods = _imported(
        "import store.vault, store.ingest, store.admin, store.queries, store.audit, store.keyring"
    )
    assert not {m for m in mods if m == "tracer" or m.startswith(("tracer.", "textual"))}


def test_engine_does_not_import_textual() -> None:
    mods = _imported(
        "import tracer.engine.verify, tracer.engine.trace, tracer.engine.catalog, tracer.cli.main"
    )
    assert not {m for m in mods if m.startswith("textual")}


def _is_sql_handle(node: ast.Attribute) -> bool:
    """`x.con` anywhere, or `<something>vault.query(...)` (Textual's DOM `query` is fine)."""
    if node.attr == "con":
        return True
    if node.attr != "query":
        return False
    base = node.value
    name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else ""
    return name.endswith("vault")


def _sql_users(folder: Path) -> list[str]:
    bad = []
    for path in folder.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                if any(n.split(".")[0] == "duckdb" for n in names):
                    bad.append(str(path.relative_to(ROOT)))
            if isinstance(node, ast.Attribute) and _is_sql_handle(node):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno} .{node.attr}")
    return bad


def test_no_sql_outside_store() -> None:
    assert _sql_users(ROOT / "tracer") == []


def test_only_store_crypto_touches_primitives() -> None:
    users = [
        str(p.relative_to(ROOT))
        for folder in ("store", "tracer")
        for p in (ROOT / folder).rglob("*.py")
        if "cryptography" in p.read_text(encoding="utf-8")
    ]
    assert users == ["store/crypto.py"]


def test_the_tui_draws_its_first_frame_before_the_store_loads() -> None:
    """`tracer open` paints before DuckDB and pyarrow are imported (bench/open.py's
    first-frame ratio depends on it): the app's modules import the store lazily."""
    mods = _imported("import tracer.tui.app, tracer.tui.opening")
    assert not {m for m in mods if m.split(".")[0] in ("duckdb", "pyarrow", "numpy")}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _imports_of(path: Path, package: str | None = None) -> set[str]:
    """Every module `path` names in an import, at any depth (lazy and TYPE_CHECKING ones too)."""
    if package is None:
        package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names if _module_file(f"{base}.{a.name}"))
    return found


def _module_file(name: str) -> Path | None:
    base = ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _first_party(names: set[str]) -> set[str]:
    return {n for n in names if n.split(".")[0] in ("store", "tracer") and _module_file(n)}


def _within(name: str, allowed: tuple[str, ...]) -> bool:
    return any(name == a or name.startswith(f"{a}.") for a in allowed)


# package → what its modules may import of store and tracer (docs/architecture.md's table)
LAYERS: dict[str, tuple[str, ...]] = {
    "tracer.engine": ("store", "tracer.engine", "tracer.clock"),
    # beside the engine, above the store: readers of observability exports, written with
    # the producer's chunker so an imported locator is the one a producer would record
    "tracer.importers": ("store", "tracer.engine", "tracer.importers", "tracer.producer.locate"),
    # the SDK: what its wheel ships (packaging/sdk follows these imports), so only the
    # store's pure modules and the engine's text rules, never a vault
    "tracer.producer": (
        "store",
        "tracer.producer",
        "tracer.engine.normalizers",
        "tracer.engine.textnorm",
        "tracer.engine.textnorm2",
        "tracer.engine.times",
    ),
}


def _breaches(imports: set[str], allowed: tuple[str, ...]) -> list[str]:
    return sorted(
        n for n in _first_party(imports) if not _within(n, allowed) and n not in ("store", "tracer")
    )


def _layer_breaches(package: str, allowed: tuple[str, ...]) -> list[str]:
    folder = ROOT.joinpath(*package.split("."))
    return [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted(folder.rglob("*.py"))
        for name in _breaches(_imports_of(path), allowed)
    ]


def test_each_layer_imports_only_what_it_may() -> None:
    assert {p: _layer_breaches(p, allowed) for p, allowed in LAYERS.items()} == {p: [] for p in LAYERS}


def test_the_layer_rules_catch_an_upward_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from store import vault\nfrom . import trace\n\n\ndef f() -> None:\n"
        "    from tracer.importers import run\n",
        encoding="utf-8",
    )
    imports = _imports_of(probe, "tracer.engine")
    assert _breaches(imports, LAYERS["tracer.engine"]) == ["tracer.importers.run"]
    assert _breaches(imports, LAYERS["tracer.importers"]) == []


# the import names of packaging/sdk/pyproject.toml's dependencies and extras
# (cryptography, rfc8785; langchain-core; llama-index-core, which brings pydantic)
SDK_REQUIREMENTS = {"cryptography", "rfc8785", "langchain_core", "llama_index", "pydantic"}


def _loaded_on_import(module: str) -> set[str]:
    """The modules importing `module` loads: its module-level imports, not those inside
    a function or under `if TYPE_CHECKING:`."""
    path = _module_file(module)
    assert path is not None
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level:
                found.add(node.module or "")
            elif isinstance(node, ast.If) and not (
                isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
            ):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(
                    [*node.body, *node.orelse, *node.finalbody, *(s for h in node.handlers for s in h.body)]
                )

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return found


def _closure(paths: list[Path]) -> dict[str, set[str]]:
    """Each first-party module reachable from `paths` → every module it imports."""
    todo, seen = list(paths), {}
    while todo:
        path = todo.pop()
        name = _module_name(path)
        if name in seen:
            continue
        seen[name] = names = _imports_of(path)
        parts = name.split(".")
        todo += [p for i in range(1, len(parts)) if (p := _module_file(".".join(parts[:i])))]
        todo += [p for n in _first_party(names) if (p := _module_file(n))]
    return seen


def test_the_producer_needs_nothing_its_wheel_does_not_require() -> None:
    """Every module the SDK reaches (its wheel's contents) loads only the standard
    library, the SDK's own requirements, and modules of the wheel: no DuckDB, pyarrow or
    Textual, so no module that opens a vault.  (A function-local import is loaded only
    when its function runs: `store.errors.damage_of` names DuckDB for the app, and the
    SDK never calls it.)"""
    closure = _closure(sorted((ROOT / "tracer" / "producer").glob("*.py")))
    assert {"store.vault", "store.ingest", "store.queries"}.isdisjoint(closure)
    third_party = {
        (module, top)
        for module in closure
        for top in {n.split(".")[0] for n in _loaded_on_import(module)}
        if top not in sys.stdlib_module_names and top not in ("store", "tracer")
    }
    assert {(m, t) for m, t in third_party if t not in SDK_REQUIREMENTS} == set()
    packages = {m for m in closure if (ROOT.joinpath(*m.split(".")) / "__init__.py").is_file()}
    assert {
        m
        for m in closure.keys() - packages
        if m.startswith("tracer.") and not _within(m, LAYERS["tracer.producer"])
    } == set()
