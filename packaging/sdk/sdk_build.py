"""A PEP 517 backend (standard library only) for the `tracer-evidence-sdk` wheel.

The SDK's modules live in the app's tree (`tracer/producer/`), beside the modules of
`store` and `tracer.engine` it imports. This backend starts from every module of
`tracer/producer/`, follows their `import` statements (read with `ast`, never run)
through `store` and `tracer`, and writes exactly those modules and their packages'
`__init__.py` into the wheel; a module the SDK stops importing leaves the wheel by
itself, and one it starts importing joins it. No build requirement is fetched, so the
wheel builds offline.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import tomllib
import zipfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TOP = ("store", "tracer")
START = "tracer/producer"
WHEEL = b"Wheel-Version: 1.0\nGenerator: sdk_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _project() -> dict[str, Any]:
    return dict(tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))["project"])


def _module_file(name: str) -> Path | None:
    base = ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imports(path: Path, package: str) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)
    return {m for m in found if m.split(".")[0] in TOP}


def sdk_files() -> list[Path]:
    """Every file the SDK needs: its modules, what they import, their packages' inits."""
    todo = sorted((ROOT / START).glob("*.py"))
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        rel = path.relative_to(ROOT).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        package = ".".join(rel.parts[:-1]) if rel.name != "__init__" else ".".join(parts)
        for i in range(1, len(parts)):  # the packages above it
            init = ROOT.joinpath(*parts[:i], "__init__.py")
            if init.is_file():
                todo.append(init)
        for name in _imports(path, package):
            target = _module_file(name)
            if target is not None:
                todo.append(target)
    return sorted(seen)


def _dist_name() -> str:
    return str(_project()["name"]).replace("-", "_")


def _metadata() -> str:
    p = _project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {p['version']}",
        f"Summary: {p['description']}",
        f"Requires-Python: {p['requires-python']}",
    ]
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    for extra, deps in p.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {d}; extra == "{extra}"' for d in deps]
    return "\n".join(lines) + "\n"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _dist_info() -> str:
    return f"{_dist_name()}-{_project()['version']}.dist-info"


def _meta_files() -> dict[str, bytes]:
    info = _dist_info()
    return {
        f"{info}/METADATA": _metadata().encode(),
        f"{info}/WHEEL": WHEEL,
        f"{info}/top_level.txt": ("\n".join(TOP) + "\n").encode(),
    }


def get_requires_for_build_wheel(config_settings: Any = None) -> list[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Any = None) -> str:
    for name, data in _meta_files().items():
        target = Path(metadata_directory) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return _dist_info()


def build_wheel(wheel_directory: str, config_settings: Any = None, metadata_directory: Any = None) -> str:
    name = f"{_dist_name()}-{_project()['version']}-py3-none-any.whl"
    files = {str(p.relative_to(ROOT).as_posix()): p.read_bytes() for p in sdk_files()}
    files.update(_meta_files())
    record = [_record_line(n, d) for n, d in files.items()]
    record.append(f"{_dist_info()}/RECORD,,")
    files[f"{_dist_info()}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(Path(wheel_directory) / name, "w", zipfile.ZIP_DEFLATED) as whl:
        for n, d in files.items():
            info = zipfile.ZipInfo(n, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            whl.writestr(info, d)
    return name
