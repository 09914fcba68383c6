#!/usr/bin/env python3
"""One entry point for a fresh machine: set up, then demo, test, check or bench.

    python3 scripts/dev.py demo    # venv + install + build sample vault + open it
    python3 scripts/dev.py test    # venv + install (with test extras) + test suite, all cores, no slow tests
    python3 scripts/dev.py check   # ruff check, ruff format --check, mypy --strict (code and tests)

Installing is the only step that may reach the package index; everything after runs
offline.  The venv lives in .venv beside this repository and is reused when the
project's dependencies have not changed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
DEMO_HOME = ROOT / ".tracer-home"


def _run(*cmd: str | Path, env: dict[str, str] | None = None) -> int:
    return subprocess.call([str(c) for c in cmd], cwd=ROOT, env=env)


def setup(extras: str) -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - this script may run under an older python3
        sys.exit("tracer needs Python 3.11 or newer")
    if not PY.exists():
        print("creating .venv ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    stamp = VENV / f".installed-{extras or 'base'}"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return
    target = f".[{extras}]" if extras else "."
    print(f"installing {target} into .venv ...", flush=True)
    rc = _run(PY, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e", target)
    if rc != 0:
        sys.exit(rc)
    stamp.write_text(digest)


def _vault_sources_digest() -> str:
    """What the sample vault is made from: the store (its formats) and the builder."""
    h = hashlib.sha256()
    for folder in ("store", "sample_vault"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".json") and "__pycache__" not in path.parts:
                h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def sample_vault() -> None:
    """Build the sample vault on first use, and again when the code that defines its
    format or its content changed (a vault from an older checkout would be refused)."""
    stamp = ROOT / "sample_vault" / ".built-from"
    digest = _vault_sources_digest()
    db = ROOT / "sample_vault" / "vault.duckdb"
    if db.exists() and stamp.exists() and stamp.read_text() == digest:
        return
    print("building the sample vault (deterministic, offline) ...", flush=True)
    rc = _run(PY, "-m", "sample_vault.build", *(["--force"] if db.exists() else []))
    if rc != 0:
        sys.exit(rc)
    stamp.write_text(digest)
    # the demo's own memory of the previous build would refuse the new one as a rollback
    shutil.rmtree(DEMO_HOME, ignore_errors=True)


def demo(args: list[str]) -> int:
    setup("")
    sample_vault()
    print(
        "\nUnlock as the demo investigator: key sample_vault/keys/ines.key, passphrase 'ines-demo'"
        " (see sample_vault/README.md)\n",
        flush=True,
    )
    tracer = BIN / "tracer"
    cmd = [str(tracer), "open", "sample_vault", "--key", "sample_vault/keys/ines.key", *args]
    os.chdir(ROOT)
    # a demo home beside the checkout unless you chose one: rebuilding the sample vault
    # resets it, so a rebuilt (shorter) vault is not refused as a rollback of the last one
    os.environ.setdefault("TRACER_HOME", str(DEMO_HOME))
    os.execv(cmd[0], cmd)  # noqa: S606 - replace this process with the TUI


def test(args: list[str]) -> int:
    """pytest on every core (pytest-xdist) unless the caller chose `-n` itself; every test
    has its own TRACER_HOME and tmp_path, session fixtures are built once per worker.

    One worker more than there are cores: a Pilot test waits on its app's threads and a
    CLI test on the processes it starts, so with one worker per core a core often idles
    (`docs/benchmarks.md`, issue 28 item 8).

    A test file goes to one worker whole (`--dist loadfile`), so a module's shared set-up
    (an exported dataset, a pack, verify's worker processes) is made once, not once per
    worker.  Files are handed out in the order `tests/xdist_order.py` gives (longest first,
    Pilot files spread among the others), not xdist's own (most tests first), which ended
    the run on one worker's long file.  PYTHONDONTWRITEBYTECODE is dropped for the run:
    without its bytecode cache every worker compiles and assertion-rewrites every test
    module again."""
    setup("dev")
    chosen = any(a == "-n" or a.startswith("-n") for a in args)
    workers = (
        []
        if chosen
        else ["-n", str((os.cpu_count() or 1) + 1), "--dist", "loadfile", "--no-loadscope-reorder"]
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return _run(PY, "-m", "pytest", *workers, *args, env=env)


def check() -> int:
    setup("dev")
    rc = 0
    for cmd in (
        (BIN / "ruff", "check", "store", "tracer", "tests", "sample_vault", "bench", "scripts"),
        (BIN / "ruff", "format", "--check", "store", "tracer", "tests", "sample_vault", "bench", "scripts"),
        (BIN / "mypy", "--strict", "store", "tracer", "tests"),
    ):
        print("$ " + " ".join([Path(cmd[0]).name, *map(str, cmd[1:])]), flush=True)
        rc |= _run(*cmd)
    return rc


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in ("demo", "test", "check", "setup"):
        print(__doc__)
        return 2
    cmd, rest = sys.argv[1], sys.argv[2:]
    if cmd == "demo":
        return demo(rest)
    if cmd == "test":
        return test(rest)
    if cmd == "setup":
        setup("dev")
        return 0
    return check()


if __name__ == "__main__":
    sys.exit(main())
