"""`tracer --help` and every command's `--help` load no heavy library; every option says
what it does; the help lists every command in one group.  Speed itself is measured in
bench/cli.py, never asserted here: what is asserted is which modules a run loads."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.helpers import manifest, new_case, passage, revision, signed
from tracer.cli.main import ALIASES, COMMAND_GROUPS, COMMANDS, _Commands, build_parser
from tracer.engine.normalizers import RECORDED

HEAVY = ("duckdb", "pyarrow", "numpy", "textual")

_PROBE = """
import json, sys
from tracer.cli.main import main
loaded = {}
for argv in json.loads(sys.argv[1]):
    try:
        main(argv)
    except SystemExit:
        pass
    loaded[" ".join(argv)] = sorted(
        m for m in sys.modules if m.split(".")[0] in json.loads(sys.argv[2])
    )
print(json.dumps(loaded))
"""


def _parsers(
    p: argparse.ArgumentParser, path: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, p
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            seen: set[int] = set()
            for name, sp in a.choices.items():
                if id(sp) not in seen:  # an alias names the same parser
                    seen.add(id(sp))
                    yield from _parsers(sp, (*path, name))


def _every_command() -> list[tuple[str, ...]]:
    return [path for path, _ in _parsers(build_parser(), ())]


def _heavy_loaded_by(argvs: list[list[str]]) -> dict[str, list[str]]:
    """Run each argv through `main` in turn, in one fresh interpreter; for each, the heavy
    modules loaded by then."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(argvs), json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded: dict[str, list[str]] = json.loads(out.stdout.splitlines()[-1])
    return loaded


def test_no_help_loads_a_heavy_library() -> None:
    """Each `--help` in turn, in one fresh interpreter: the modules they loaded between
    them, checked after each; one that loaded DuckDB, Arrow, NumPy or Textual is named."""
    argvs = [[*path, "--help"] for path in _every_command()]
    assert len(argvs) > 30
    assert _heavy_loaded_by(argvs) == {" ".join(a): [] for a in argvs}


def test_a_command_builds_only_its_own_options() -> None:
    """`tracer trace …` builds the trace parser; the other commands are only names."""
    parser = build_parser(selected="trace")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert isinstance(sub.choices["trace"], argparse.ArgumentParser)
    assert not isinstance(sub.choices["verify"], argparse.ArgumentParser)
    assert set(sub.choices) == set(
        next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    )


def test_every_option_and_argument_has_help() -> None:
    missing = [
        f"tracer {' '.join(path)}: {'/'.join(a.option_strings) or a.dest}"
        for path, p in _parsers(build_parser(), ())
        for a in p._actions
        if not isinstance(a, argparse._SubParsersAction | argparse._HelpAction) and not a.help
    ]
    assert missing == []


def test_the_table_names_every_command_its_module_registers() -> None:
    """COMMANDS (the --help list) and the modules agree: the same commands, aliases and,
    where a module still gives one, the same one-line help."""
    sub = next(a for a in build_parser()._actions if isinstance(a, _Commands))
    given = {name: aliases for name, (_, aliases) in sub.given.items()}
    assert sorted(given) == sorted(COMMANDS)
    assert {a: n for n, aliases in given.items() for a in aliases} == ALIASES
    assert [n for n, (h, _) in sub.given.items() if h is not None and h != COMMANDS[n][1]] == []


def test_help_imports_no_command_module_and_a_command_only_its_own() -> None:
    probe = (
        "import sys\nfrom tracer.cli.main import build_parser\n"
        "build_parser(selected=sys.argv[1]).format_help()\n"
        "print(sorted(m for m in sys.modules if m.startswith('tracer.cli.')))"
    )

    def loaded(selected: str) -> list[str]:
        out = subprocess.run(
            [sys.executable, "-c", probe, selected], capture_output=True, text=True, check=True
        )
        return list(json.loads(out.stdout.strip().replace("'", '"')))

    assert loaded("") == ["tracer.cli.main"]
    assert loaded("trace") == ["tracer.cli.common", "tracer.cli.engine_cmds", "tracer.cli.main"]
    assert loaded("finding") == [
        "tracer.cli.access_cmds", "tracer.cli.common", "tracer.cli.main"
    ]  # fmt: skip


def test_top_help_shows_groups_in_order_and_the_exit_codes() -> None:
    text = build_parser(selected="").format_help()
    heads = [text.index(f"\n{title}:\n") for title, _ in COMMAND_GROUPS]
    assert heads == sorted(heads)
    assert text.index("\nexit codes:\n") > heads[-1]
    assert "\n  annotate (finding)  " in text


def test_the_normalizer_default_is_the_engines(tmp_path: Path) -> None:
    (tmp_path / "vault.duckdb").write_bytes(b"\0" * 8 + b"DUCK")  # VAULT is checked as it is read
    args = build_parser(selected="trace").parse_args(["trace", str(tmp_path), "a"])
    assert args.normalizer == RECORDED


def test_commands_without_a_vault_never_load_duckdb(tmp_path: Path) -> None:
    """keygen, chunk and verify-pack need no vault: running them loads none of it."""
    (tmp_path / "doc.md").write_text("# Title\n\nA paragraph.\n", encoding="utf-8")
    (tmp_path / "pass").write_text("a passphrase", encoding="utf-8")
    (tmp_path / "not-a-pack").mkdir()
    argvs = [
        ["keygen", "probe", "--out", str(tmp_path / "keys"), "--passphrase-file", str(tmp_path / "pass")],
        ["chunk", str(tmp_path / "doc.md")],
        ["verify-pack", str(tmp_path / "not-a-pack")],
    ]
    assert _heavy_loaded_by(argvs) == {" ".join(a): [] for a in argvs}
    assert (tmp_path / "keys" / "probe.key").is_file()  # the commands did run


def test_a_trace_loads_neither_arrow_nor_pandas(tmp_path: Path) -> None:
    """`tracer trace` reads a few rows and appends two access entries: it needs DuckDB,
    not Arrow (whose first table makes it import pandas wherever pandas is installed)."""
    case = new_case(tmp_path / "vault")
    rev = revision("travel", "A", "Employees may claim up to 40 EUR per day.\n", "2026-01-05T00:00:00Z")
    assert case.ingest(rev, signed(case, manifest("ans-1", "Forty euros.", [passage(rev, "40 EUR")]))).ok
    key, _pub = case.investigators["ines"].save(tmp_path / "keys", b"probe-passphrase")
    case.close()
    argvs = [["trace", str(tmp_path / "vault"), "ans-1", "--key", str(key)]]
    env = {**os.environ, "TRACER_HOME": str(tmp_path / "home"), "TRACER_PASSPHRASE": "probe-passphrase"}
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(argvs), json.dumps([*HEAVY, "pandas"])],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    loaded: dict[str, list[str]] = json.loads(out.stdout.splitlines()[-1])
    assert "Forty euros." in out.stdout  # the trace did run
    assert {m.split(".")[0] for m in loaded[" ".join(argvs[0])]} == {"duckdb"}
