"""The producer SDK as its own distribution (`tracer-evidence-sdk`, packaging/sdk).

Its wheel is built by a standard-library backend that follows the SDK's imports; these
tests build it here (offline, no pip) and check it holds every module the SDK loads,
none of the investigator's app, and only `cryptography` and `rfc8785` as requirements.
The slow test installs it into a fresh virtual environment, as a producer would.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from tests.test_layers import _imported

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "packaging" / "sdk"


def _backend() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sdk_build", SDK / "sdk_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _project(path: Path) -> dict[str, object]:
    return dict(tomllib.loads(path.read_text(encoding="utf-8"))["project"])


def test_the_two_distributions_have_free_names_and_one_version() -> None:
    app, sdk = _project(ROOT / "pyproject.toml"), _project(SDK / "pyproject.toml")
    # "tracer" on the package index is someone else's project
    assert (app["name"], sdk["name"]) == ("tracer-evidence", "tracer-evidence-sdk")
    assert app["version"] == sdk["version"]
    assert sdk["dependencies"] == ["cryptography>=44", "rfc8785>=0.1.4,<0.2"]
    app_extras = app["optional-dependencies"]
    sdk_extras = sdk["optional-dependencies"]
    assert isinstance(app_extras, dict) and isinstance(sdk_extras, dict)
    for extra in ("langchain", "llamaindex"):
        assert sdk_extras[extra] == app_extras[extra]


def test_the_wheel_holds_what_the_sdk_imports_and_nothing_of_the_app(tmp_path: Path) -> None:
    backend = _backend()
    name = backend.build_wheel(str(tmp_path))
    assert name == "tracer_evidence_sdk-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(tmp_path / name) as whl:
        names = set(whl.namelist())
        metadata = whl.read("tracer_evidence_sdk-0.1.0.dist-info/METADATA").decode()
        record = whl.read("tracer_evidence_sdk-0.1.0.dist-info/RECORD").decode()
    loaded = _imported(
        "import tracer.producer, tracer.producer.adapters, tracer.producer.langchain, "
        "tracer.producer.llamaindex"
    )
    ours = {m for m in loaded if m.split(".")[0] in ("store", "tracer")}
    for module in ours:
        base = module.replace(".", "/")
        assert f"{base}.py" in names or f"{base}/__init__.py" in names, module
    assert not {n for n in names if n.startswith(("tracer/cli/", "tracer/tui/", "tracer/report/"))}
    assert not {"store/vault.py", "store/ingest.py", "store/views.py"} & names
    assert "Requires-Dist: cryptography>=44" in metadata and "Requires-Dist: rfc8785>=0.1.4,<0.2" in metadata
    assert 'Requires-Dist: langchain-core>=1,<2; extra == "langchain"' in metadata
    assert {line.split(",")[0] for line in record.splitlines()} == names


@pytest.mark.slow
def test_a_fresh_environment_installs_the_sdk_wheel_and_imports_it(tmp_path: Path) -> None:
    """What docs/producers.md tells an air-gapped team: build the wheel, carry it over,
    install it with its two requirements, import the SDK (no Textual, no DuckDB)."""
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    subprocess.run([*pip, "wheel", "--no-deps", str(SDK), "-w", str(tmp_path / "wheels")], check=True)
    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / ("Scripts" if os.name == "nt" else "bin") / "python"
    (wheel,) = (tmp_path / "wheels").glob("tracer_evidence_sdk-*.whl")
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", str(wheel)], check=True)
    probe = (
        "import sys, tracer.producer, tracer.producer.adapters;"
        "print(sorted({m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names)))"
    )
    out = subprocess.run([str(py), "-c", probe], check=True, capture_output=True, text=True, cwd=tmp_path)
    top = set(eval(out.stdout))  # noqa: S307 - our own probe's printed list
    assert {"tracer", "store", "cryptography", "rfc8785"} <= top
    assert not top & {"textual", "duckdb", "pyarrow", "jsonschema", "rapidfuzz", "platformdirs"}
