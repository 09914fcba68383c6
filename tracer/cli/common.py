"""Small helpers shared by the CLI command modules."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.vault import Vault
from tracer.inert import json_inert

if TYPE_CHECKING:
    Sub = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    Sub = argparse._SubParsersAction


def vault_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("vault", type=Path, metavar="VAULT", help="vault directory")


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
