"""Every command that opens a vault checks its path before anything else: a missing
path, a file where the vault directory belongs, or a vault file that is not a database
exits 2 with a plain message, and no passphrase is ever asked for.

The commands are read from the parser itself (every positional or option whose metavar
is VAULT), so a command added later is covered without being listed here.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import REPO
from tracer.cli.main import build_parser, main


def _vault_commands() -> list[tuple[list[str], bool]]:
    """(words before VAULT and a filler for every other positional, VAULT is an option)."""
    out: list[tuple[list[str], bool]] = []

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*words, name])
                return
        positionals = [a for a in parser._actions if not a.option_strings and a.dest != "help"]
        options = [a for a in parser._actions if a.option_strings and a.metavar == "VAULT"]

        # what the command line must hold besides VAULT, so only VAULT is wrong in it
        def value(a: argparse.Action) -> list[str]:
            return [] if a.nargs == 0 else [str(next(iter(a.choices)))] if a.choices else ["1"]

        required: list[str] = []
        for a in parser._actions:
            if a.option_strings and a.required and a.metavar != "VAULT":
                required += [a.option_strings[0], *value(a)]
        for group in parser._mutually_exclusive_groups:
            if group.required:
                first = group._group_actions[0]
                required += [first.option_strings[0], *value(first)]
        if any(a.metavar == "VAULT" for a in positionals):
            args = [words, ["{VAULT}" if a.metavar == "VAULT" else "1" for a in positionals]]
            out.append(([*args[0], *args[1], *required], False))
        for opt in options:
            fill = ["1" for _ in positionals]
            out.append(([*words, *fill, *required, opt.option_strings[0], "{VAULT}"], True))

    walk(build_parser(), [])
    return [(w, o) for w, o in out if w[0] != "init"]  # init makes the vault: none there yet


COMMANDS = _vault_commands()


def _bad_paths(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    junk_file = tmp_path / "junk"
    junk_file.write_bytes(b"not a vault\n")
    junk_vault = tmp_path / "junk-vault"
    junk_vault.mkdir()
    (junk_vault / "vault.duckdb").write_bytes(b"\x00" * 4096)
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    return {
        "missing": (tmp_path / "no-such-vault", "no such vault"),
        "junk file": (junk_file, "not a vault"),
        "empty directory": (empty_dir, "not a vault (vault.duckdb is missing)"),
        "junk vault file": (junk_vault, "damaged vault"),
    }


def test_the_parser_names_the_vault_commands() -> None:
    names = {" ".join(w[:2]) if w[0] in ("case", "keys", "investigators") else w[0] for w, _o in COMMANDS}
    for expected in ("verify", "trace", "open", "export", "ingest", "case open", "hold", "access", "purge"):
        assert expected in names, (expected, sorted(names))


@pytest.mark.parametrize("words", [w for w, _o in COMMANDS], ids=lambda w: " ".join(w))
def test_a_bad_vault_path_exits_2_before_any_prompt(
    words: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRACER_PASSPHRASE", raising=False)
    monkeypatch.delenv("TRACER_KEY", raising=False)

    def no_prompt(*_a: object, **_k: object) -> str:
        raise AssertionError("a passphrase was asked for before the vault was checked")

    monkeypatch.setattr("getpass.getpass", no_prompt)
    for label, (path, says) in _bad_paths(tmp_path).items():
        argv = [str(path) if w == "{VAULT}" else w for w in words]
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main(argv)
        assert code == 2, (label, argv, err.getvalue())
        assert says in err.getvalue(), (label, err.getvalue())
        assert "Traceback" not in err.getvalue()


def test_a_real_command_line_says_so_on_stderr_with_exit_2(tmp_path: Path) -> None:
    """As an investigator types it, with a terminal's stdin closed: no prompt, no traceback."""
    proc = subprocess.run(
        [sys.executable, "-m", "tracer.cli.main", "verify", str(tmp_path / "missing")],
        cwd=REPO,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, proc
    # one plain line, as every refusal: no usage text, no prompt before it
    assert proc.stderr.startswith("tracer: error: ") and "no such vault" in proc.stderr, proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
