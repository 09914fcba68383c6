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
