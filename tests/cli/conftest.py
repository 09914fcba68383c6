"""CLI fixtures: run `tracer` in-process (fast) or as a real subprocess (exit codes, stderr)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import HOME, manifest, passage, revision
from tests.templates import copy_of
from tracer.cli.main import main
from tracer.engine.trust import TrustStore

REPO = Path(__file__).resolve().parents[2]
TRACER = Path(sys.executable).parent / "tracer"
PASSPHRASE = "correct horse battery staple"
CLOCK = "2026-06-01T00:00:00Z"
DOC = (
    "# Returns policy\n\n## Refund window\n\n"
    "Customers may request a refund within thirty days of delivery.\n\n"
    "## Exceptions\n\nGift cards are never refunded.\n"
)
ANSWER = "Refunds are accepted within thirty days."


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@dataclass
class World:
    """A directory with keys, a vault and input files, driven through the CLI."""

    root: Path
    capsys: pytest.CaptureFixture[str]
    env: dict[str, str] = field(default_factory=dict)

    @property
    def keys(self) -> Path:
        return self.root / "keys"

    @property
    def vault(self) -> Path:
        return self.root / "vault"

    def key(self, name: str) -> Path:
        return self.keys / f"{name}.key"

    def pub(self, name: str) -> Path:
        return self.keys / f"{name}.pub"

    def run(self, *args: str | Path, env: dict[str, str] | None = None) -> Result:
        """`tracer ARGS` in this process (its environment as the test left it), with `env`
        set for this call only; SystemExit from argparse becomes the code.  What the
        console script adds is `sys.exit` of the same code: a test needs `spawn` only where
        the process itself is the point."""
        self.capsys.readouterr()
        with pytest.MonkeyPatch.context() as mp:
            for name, value in (env or {}).items():
                mp.setenv(name, value)
            try:
                code = main([str(a) for a in args])
            except SystemExit as exc:
                code = int(exc.code or 0)
        captured = self.capsys.readouterr()
        return Result(code, captured.out, captured.err)

    def ok(self, *args: str | Path) -> Result:
        r = self.run(*args)
        assert r.code == 0, (args, r)
        return r

    def spawn(
        self,
        *args: str | Path,
        env: dict[str, str] | None = None,
        unset: tuple[str, ...] = (),
        timeout: float = 60,
    ) -> Result:
        """The real console script in a child process (no terminal: stdin is /dev/null)."""
        full_env = {**os.environ, **self.env, **(env or {})}
        for name in unset:
            full_env.pop(name, None)
        p = subprocess.run(
            [str(TRACER), *[str(a) for a in args]],
            capture_output=True,
            text=True,
            env=full_env,
            cwd=self.root,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        return Result(p.returncode, p.stdout, p.stderr)

    def write(self, name: str, obj: Any) -> Path:
        path = self.root / "inputs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
        return path

    def cust(self) -> list[str | Path]:
        return ["--custodian-key", self.key("custodian")]


def revision_input(rev: str = "A") -> dict[str, Any]:
    return revision("returns", rev, DOC, "2026-01-05T00:00:00Z")


def draft(answer_id: str = "ans-1", **kw: Any) -> dict[str, Any]:
    return manifest(answer_id, ANSWER, [passage(revision_input(), "thirty days")], **kw)


def _build_template(root: Path) -> None:
    """Keys, a vault (producer key, ines granted '*', one revision and one answer) and inputs."""
    sink = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(sink):
        mp.setenv("TRACER_PASSPHRASE", PASSPHRASE)
        mp.setenv("TRACER_CLOCK", CLOCK)
        mp.setenv("TRACER_HOME", str(root / "home"))
        keys, vault, inputs = root / "keys", root / "vault", root / "inputs"
        inputs.mkdir(parents=True)

        def tracer(*args: str | Path) -> None:
            assert main([str(a) for a in args]) == 0, (args, sink.getvalue())

        for name in ("custodian", "producer", "ines"):
            tracer("keygen", name, "--out", keys)
        cust: list[str | Path] = ["--custodian-key", keys / "custodian.key"]
        tracer("init", vault, *cust, "--origin", "tracer.test/cli")
        tracer("keys", "add", vault, keys / "producer.pub", "--role", "producer", *cust)
        tracer("investigators", "grant", vault, keys / "ines.pub", "--scope", "*", *cust)
        (inputs / "draft.json").write_text(json.dumps(draft()), encoding="utf-8")
        tracer("pack", inputs / "draft.json", "--key", keys / "producer.key", "--out", inputs / "ans-1.json")
        (inputs / "rev-A.json").write_text(json.dumps(revision_input()), encoding="utf-8")
        tracer("ingest", vault, inputs / "rev-A.json", inputs / "ans-1.json", *cust)


@pytest.fixture(scope="session")
def cli_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli-template")
    _build_template(root)
    return root


def _world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> World:
    monkeypatch.setenv("TRACER_PASSPHRASE", PASSPHRASE)
    monkeypatch.setenv("TRACER_CLOCK", CLOCK)
    w = World(tmp_path, capsys, {"TRACER_PASSPHRASE": PASSPHRASE, "TRACER_CLOCK": CLOCK})
    w.env["TRACER_HOME"] = os.environ["TRACER_HOME"]
    return w


@pytest.fixture
def world(
    cli_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> World:
    """Keys for custodian, producer and ines (passphrase in TRACER_PASSPHRASE); no vault yet."""
    shutil.copytree(cli_template / "keys", tmp_path / "keys")
    return _world(tmp_path, monkeypatch, capsys)


@pytest.fixture
def vault_world(
    cli_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Iterator[World]:
    """`world` plus a vault with the producer key, ines granted '*', and one answer ingested."""
    for part in ("keys", "vault", "inputs"):
        shutil.copytree(cli_template / part, tmp_path / part)
    yield _world(tmp_path, monkeypatch, capsys)


def world_copy(
    name: str,
    build: Callable[[World], object],
    cli_template: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> World:
    """`vault_world` after `build(world)` ran on it: built once per process under `name`
    (its TRACER_HOME too: pins, remembered checkpoints) and copied to `tmp_path`.  The one
    path the home records is rewritten to the copy's."""

    def make(d: Path) -> None:
        for part in ("keys", "vault", "inputs"):
            shutil.copytree(cli_template / part, d / part)
        home = d / HOME
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("TRACER_PASSPHRASE", PASSPHRASE)
            mp.setenv("TRACER_CLOCK", CLOCK)
            mp.setenv("TRACER_HOME", str(home))
            build(
                World(
                    d,
                    capsys,
                    {"TRACER_PASSPHRASE": PASSPHRASE, "TRACER_CLOCK": CLOCK, "TRACER_HOME": str(home)},
                )
            )

    src = copy_of(name, make, tmp_path)
    trust = TrustStore(tmp_path / HOME).path
    if trust.exists():
        text = trust.read_text(encoding="utf-8")
        trust.write_text(text.replace(str(src.resolve()), str(tmp_path.resolve())), encoding="utf-8")
    return _world(tmp_path, monkeypatch, capsys)


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The TUI's fixture vault (several answers and documents), opened as ines."""
    from tests.helpers import PASSPHRASE as FIXTURE_PASSPHRASE
    from tests.tui.fixture_vault import make_vault

    keys = make_vault(tmp_path)
    monkeypatch.setenv("TRACER_KEY", str(keys.ines))
    monkeypatch.setenv("TRACER_PASSPHRASE", FIXTURE_PASSPHRASE.decode())
    return tmp_path / "vault"


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`tracer ARGS` in this process: (exit code, stdout, stderr)."""
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err
