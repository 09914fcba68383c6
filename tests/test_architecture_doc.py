"""docs/architecture.md's module map names every module, under its own package's heading,
so a newcomer reading the map finds each file the tree holds (and no file that is gone)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
HEADING = re.compile(r"^`((?:store|tracer)(?:/\w+)*/)`")
NAME = re.compile(r"`(\w+\.py)`")


def module_map(text: str) -> dict[str, set[str]]:
    """Package folder (`tracer/cli/`) → the module file names its section of the map names."""
    section = text.split("## Module map", 1)[1].split("\n## ", 1)[0]
    found: dict[str, set[str]] = {}
    current: set[str] | None = None
    for line in section.splitlines():
        heading = HEADING.match(line)
        if heading:
            current = found.setdefault(heading.group(1), set())
        elif current is not None:
            current.update(NAME.findall(line))
    return found


def modules() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for pkg in ("store", "tracer"):
        for path in (ROOT / pkg).rglob("*.py"):
            if path.name != "__init__.py":
                out.setdefault(f"{path.parent.relative_to(ROOT).as_posix()}/", set()).add(path.name)
    return out


def test_the_map_reader_reads_headings_and_names() -> None:
    text = (
        "## Module map\n\n`store/`\n\n- `a.py`, `b.py` — x `c.py`\n\n"
        "`tracer/cli/` (y)\n\n- `d.py`\n\n## Next\n- `e.py`\n"
    )
    assert module_map(text) == {"store/": {"a.py", "b.py", "c.py"}, "tracer/cli/": {"d.py"}}


def test_every_module_is_in_the_module_map_and_nothing_else() -> None:
    named, present = module_map(DOC.read_text(encoding="utf-8")), modules()
    missing = {pkg: sorted(names - named.get(pkg, set())) for pkg, names in present.items()}
    stale = {pkg: sorted(names - present.get(pkg, set())) for pkg, names in named.items()}
    assert {k: v for k, v in missing.items() if v} == {}, "add these to docs/architecture.md"
    assert {k: v for k, v in stale.items() if v} == {}, "these are gone: drop them from the map"
