"""Where passphrases and key files come from: flag, file, environment, then a prompt."""

from __future__ import annotations

import getpass
import os
import sys
from pathlib import Path

from store.crypto import Identity, load_identity
from store.errors import KeyFileError

__all__ = ["load_key", "read_passphrase", "resolve_key_path"]


def read_passphrase(passphrase_file: Path | None, what: str = "key") -> bytes:
    if passphrase_file is not None:
        try:
            return passphrase_file.read_text(encoding="utf-8").rstrip("\r\n").encode("utf-8")
        except OSError as exc:
            raise KeyFileError(f"{passphrase_file}: cannot read passphrase file ({exc.strerror})") from exc
    env = os.environ.get("TRACER_PASSPHRASE")
    if env is not None:
        return env.encode("utf-8")
    if not sys.stdin.isatty():
        raise KeyFileError(
            f"no passphrase for the {what}: use --passphrase-file or TRACER_PASSPHRASE "
            "(no terminal to prompt on)"
        )
    return getpass.getpass(f"Passphrase for {what}: ").encode("utf-8")


def resolve_key_path(flag: Path | None) -> Path:
    if flag is not None:
        return flag
    env = os.environ.get("TRACER_KEY")
    if env:
        return Path(env)
    raise KeyFileError("no key file: use --key or set TRACER_KEY")


def load_key(path: Path, passphrase_file: Path | None) -> Identity:
    return load_identity(path, read_passphrase(passphrase_file, str(path)))
