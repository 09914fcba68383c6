"""`tracer open VAULT`: the investigator's TUI.

The key path comes from --key or TRACER_KEY; the passphrase from --passphrase-file or
TRACER_PASSPHRASE, and otherwise is typed into the unlock screen (never echoed, never
read from a prompt outside the TUI).  With both, the vault unlocks at once.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from tracer.cli.common import Sub, add_investigator, vault_arg

__all__ = ["register"]


def register(sub: Sub) -> None:
    p = sub.add_parser("open")
    vault_arg(p)
    add_investigator(p)
    p.add_argument(
        "--theme",
        choices=("default", "high-contrast"),
        default="default",
        help="high-contrast is monochrome: states are words, colour only repeats them",
    )
    p.set_defaults(handler=run_open)


def run_open(args: argparse.Namespace) -> int:
    from tracer.engine.session import peek
    from tracer.secrets import read_passphrase
    from tracer.tui.context import LaunchOptions
    from tracer.tui.opening import build_app  # Textual loads only for this command

    # a missing or damaged vault is said here, before any passphrase is asked for
    peek(args.vault)  # a StoreError is the CLI's plain error, exit 2
    key: Path | None = args.key
    if key is None and os.environ.get("TRACER_KEY"):
        key = Path(os.environ["TRACER_KEY"])
    passphrase = None
    if args.passphrase_file is not None or os.environ.get("TRACER_PASSPHRASE") is not None:
        passphrase = read_passphrase(args.passphrase_file, str(key))
    options = LaunchOptions(args.vault, key, passphrase, args.forensic, args.theme)
    app = build_app(options)
    app.run()
    return app.return_code or 0  # leaving a refused unlock is not success
