"""Small helpers shared by the CLI command modules.

Everything a command module imports at its top is loaded for every `tracer` run,
`--help` included, so command modules import only the standard library, this module and
`tracer.inert` there; what a command needs (DuckDB, the engine, Textual) is imported
inside its handler, and `tests/cli/test_startup.py` keeps it so."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracer.inert import json_inert

if TYPE_CHECKING:
    from store.vault import Vault

    Sub = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    Sub = argparse._SubParsersAction


class LazyChoices:
    """An option's `choices`, computed on first use.

    Some vocabularies live beside the code that needs them (the normalizers, the roster's
    rights); listing or checking them loads that code, registering the option does not.
    """

    def __init__(self, load: Callable[[], Iterable[str]]) -> None:
        self._load = load
        self._values: tuple[str, ...] | None = None

    def _all(self) -> tuple[str, ...]:
        if self._values is None:
            self._values = tuple(self._load())
        return self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __contains__(self, value: object) -> bool:
        return value in self._all()


#: the first bytes of every DuckDB database file: 8 bytes of checksum, then this
_DUCKDB_MAGIC = (8, b"DUCK")


class VaultPath(type(Path())):  # type: ignore[misc]
    """A VAULT given on the command line: `check_vault_paths` checks it before the command
    runs (a subclass, so argparse hands it on as any path)."""


def existing_vault(text: str) -> Path:
    """VAULT as argparse reads it; checked by `check_vault_paths` once the command line is
    read, before any passphrase is asked for."""
    return VaultPath(text)


def check_vault_paths(args: argparse.Namespace) -> None:
    """Every VAULT of the command line is a vault directory holding a database file:
    a missing path, a file where a vault belongs or a vault file that is not a database is
    said plainly (exit 2, as any refusal) before a passphrase is asked for. A database
    damaged inside is found when it is opened."""
    for value in vars(args).values():
        if isinstance(value, VaultPath):
            _check_vault_path(value)


def _check_vault_path(path: Path) -> None:
    from store.errors import VaultDamagedError, VaultError
    from store.schema import DB_FILE

    if not path.exists():
        raise VaultError(f"{path}: no such vault directory (nothing at this path)")
    if not path.is_dir():
        raise VaultError(f"{path}: not a vault directory (a file is at this path)")
    db = path / DB_FILE
    if not db.is_file():
        raise VaultError(f"{path}: not a vault ({DB_FILE} is missing)")
    at, magic = _DUCKDB_MAGIC
    try:
        with db.open("rb") as fh:
            head = fh.read(at + len(magic))
    except OSError as exc:
        raise VaultError(f"{db}: the vault file cannot be read ({exc.strerror})") from exc
    if head[at:] != magic:
        raise VaultDamagedError(f"{path}: damaged vault ({DB_FILE} is not a database file)")


def vault_arg(p: argparse.ArgumentParser, existing: bool = True) -> None:
    """The VAULT argument; `existing=False` only where the command creates the vault."""
    kind: Callable[[str], Path] = existing_vault if existing else Path
    p.add_argument("vault", type=kind, metavar="VAULT", help="vault directory")


def json_arg(p: argparse.ArgumentParser, what: str = "the result") -> None:
    p.add_argument(
        "--json",
        action="store_true",
        help=f"print {what} as one JSON document on stdout (fields in docs/cli.md)",
    )


def add_custodian(p: argparse.ArgumentParser) -> None:
    p.add_argument("--custodian-key", type=Path, required=True, help="custodian NAME.key")
    p.add_argument("--passphrase-file", type=Path, help="else TRACER_PASSPHRASE, else a prompt")


def add_investigator(p: argparse.ArgumentParser, required: bool = False) -> None:
    p.add_argument("--key", type=Path, help="investigator NAME.key (else TRACER_KEY)")
    p.add_argument("--passphrase-file", type=Path, help="else TRACER_PASSPHRASE, else a prompt")
    p.add_argument(
        "--forensic",
        action="store_true",
        help="open a vault that failed the rollback/fork check anyway, labelled forensic",
    )


def open_vault(path: Path, read_only: bool | None = None) -> Vault:
    """The vault for a command that opens it without an investigator's unlock; unless read
    only, it must extend every checkpoint this machine saw of it (`refuse_if_rolled_back`),
    and every checkpoint it signs is remembered here (`remember_writes`)."""
    from store.vault import Vault
    from tracer.engine.session import refuse_if_rolled_back, remember_writes
    from tracer.engine.trust import TrustStore

    vault = Vault.open(path, read_only=read_only)
    if read_only is not True:
        try:
            trust = TrustStore()
            refuse_if_rolled_back(vault, trust)
            remember_writes(vault, trust)
        except BaseException:
            vault.close()
            raise
    return vault


def emit_json(value: Any) -> None:
    """`--json` output: readable UTF-8, every hidden character escaped (`json_inert`)."""
    sys.stdout.write(json_inert(value) + "\n")
