"""The `tracer` command: one parser, subcommands registered by small modules.

Startup is paid on every run, `--help` included, so it stays cheap three ways: the
commands, their groups and one-line help are a table here (`COMMAND_GROUPS`), so
`tracer --help` imports no command module; `tracer CMD` imports only CMD's module, and
only CMD gets its options built (`_Commands`); and command modules import little at
their top (`tracer.cli.common`).  The exit codes are `EXIT_CODES`, printed by `tracer
--help` and listed in docs/cli.md; `tests/cli/test_exit_codes.py` runs a command for each.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import Any, cast

from store.errors import StoreError, damage_of, database_error_types

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

#: every exit code and what it means, in the words `--help` and docs/cli.md use
EXIT_CODES: tuple[tuple[int, str], ...] = (
    (
        EXIT_OK,
        "success; for verify: nothing wrong was found; for verify-pack: the pack is authentic "
        "(findings its evidence records are printed beside, apart)",
    ),
    (
        EXIT_FINDINGS,
        "the command ran and a check failed: verify found something, verify-pack found the "
        "pack not authentic, "
        "ingest, ingest-outbox or import refused an input file (each one named), "
        "export matched no answer you may read, revalidate --fail-on found an answer in one "
        "of the states named",
    ),
    (
        EXIT_USAGE,
        "the command could not do what was asked: bad flags or arguments, an unknown or "
        "ambiguous id, a refused operation (no hold right, a purge of held evidence, a "
        "duplicate key, not the custodian …), an unreadable key or wrong passphrase, a vault "
        "missing, in use, damaged or rolled back",
    ),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C)"),
)

Handler = Callable[[argparse.Namespace], int]

#: every command, in the groups and order `tracer --help` lists them: its name, the
#: module under tracer.cli that registers it, and its one line in that list.  Only the
#: module of the command being run is imported; `tracer --help` imports none of them.
COMMAND_GROUPS: tuple[tuple[str, tuple[tuple[str, str, str], ...]], ...] = (
    (
        "investigate (an investigator's key: --key or TRACER_KEY)",
        (
            ("open", "ui_cmds", "investigate a vault in the terminal UI (keyboard only)"),
            ("verify", "engine_cmds", "check the whole vault; every finding pinned to its record"),
            ("trace", "engine_cmds", "trace one answer to its passages and source revisions"),
            ("revalidate", "engine_cmds", "currency of every answer against later revisions"),
            ("impact", "engine_cmds", "every answer that depends on a document, revision or digest"),
            ("access", "access_cmds", "who looked at what, when"),
            (
                "annotate",
                "access_cmds",
                "sign an investigator note on an answer, a claim or a passage ('finding' is its old name)",
            ),
        ),
    ),
    (
        "case file (signed by the investigator)",
        (
            ("case", "case_cmds", "open, list, show and conclude cases"),
            ("tag", "case_cmds", "tag an answer, a claim or a passage"),
            ("tags", "case_cmds", "tags in force, or the answers carrying one"),
            ("note", "case_cmds", "add a signed case note (multi-line with --file)"),
            ("hold", "case_cmds", "place a legal hold: a purge of the held evidence is refused"),
            ("release", "case_cmds", "release a legal hold (by its log entry)"),
            ("holds", "case_cmds", "legal holds you can see"),
        ),
    ),
    (
        "custodian (the vault, its keyring, roster and log)",
        (
            ("init", "store_cmds", "create a vault and its first signed checkpoint"),
            ("keys", "store_cmds", "producer keyring (custodian-signed)"),
            ("investigators", "access_cmds", "grant, revoke or list investigators"),
            ("ingest", "store_cmds", "append manifests, source revisions and deletions"),
            (
                "ingest-outbox",
                "outbox_cmds",
                "ingest the files a producer left in an outbox, then move them aside",
            ),
            ("purge", "store_cmds", "retention purge: append a tombstone, delete the text"),
            (
                "checkpoint",
                "store_cmds",
                "print the latest signed checkpoint note exactly; or recover an uncovered tail (custodian)",
            ),
            (
                "quarantine",
                "store_cmds",
                "list the entries a recovery moved aside (VAULT/quarantine/*.jsonl)",
            ),
            ("log", "store_cmds", "list log entries"),
            ("proof", "store_cmds", "inclusion or consistency proof"),
        ),
    ),
    (
        "producers (keys and signed input files)",
        (
            ("keygen", "store_cmds", "create an identity: NAME.key (encrypted) and NAME.pub"),
            ("sign", "store_cmds", "wrap a file's exact bytes in a DSSE envelope"),
            ("pack", "store_cmds", "turn draft manifests with inline texts into signed input files"),
            ("chunk", "chunk_cmds", "print a document's blocks, heading paths and locators"),
        ),
    ),
    (
        "import/export",
        (
            (
                "import",
                "import_cmds",
                "import OTLP trace exports (OpenInference, GenAI) as custodian-signed imported traces",
            ),
            (
                "export",
                "export_cmds",
                "write an evidence pack (report.json signed, md, html, PROV, proofs)",
            ),
            ("verify-pack", "export_cmds", "check an evidence pack offline, with nothing but the pack"),
            (
                "export-dataset",
                "dataset_cmds",
                "write the vault as Parquet + C2SP tlog-tiles + a DSSE-signed manifest (for DuckDB or Spark)",
            ),
            (
                "verify-dataset",
                "dataset_cmds",
                "re-verify an exported dataset, with DuckDB (default) or Spark",
            ),
        ),
    ),
)

#: name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    name: (module, line) for _, commands in COMMAND_GROUPS for name, module, line in commands
}
#: old names that still work -> the command's name
ALIASES: dict[str, str] = {"finding": "annotate"}

#: every module under tracer.cli that registers commands
COMMAND_MODULES: tuple[str, ...] = tuple(dict.fromkeys(module for module, _ in COMMANDS.values()))


class _Unbuilt:
    """Stands in for the parser of a command that is not being run: every call that
    would add an option, a group or a sub-command is accepted and dropped."""

    def __getattr__(self, name: str) -> Callable[..., _Unbuilt]:
        return lambda *args, **kwargs: self


class _Commands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """Sub-commands where only `selected` is built in full (all of them when it is None).

    The one-line help of every command is `COMMANDS`'s; what a module passes as `help`
    is kept in `given` so that a test can hold the two equal.
    """

    selected: str | None = None
    #: name -> (the help and aliases its module passed)
    given: dict[str, tuple[str | None, tuple[str, ...]]]

    def listed(self, name: str) -> None:
        """Register `name` for the listing and "invalid choice", without its parser:
        building thirty parsers is most of what `tracer --help` would cost."""
        if name in self._name_parser_map:
            return
        aliases = tuple(a for a, n in ALIASES.items() if n == name)
        self._choices_actions.append(self._ChoicesPseudoAction(name, aliases, COMMANDS[name][1]))
        unbuilt = cast(argparse.ArgumentParser, _Unbuilt())
        for n in (name, *aliases):
            self._name_parser_map[n] = unbuilt

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        self.given[name] = (kwargs.get("help"), tuple(kwargs.get("aliases", ())))
        if self.selected is not None and self.selected not in (name, *kwargs.get("aliases", ())):
            self.listed(name)
            return cast(argparse.ArgumentParser, self._name_parser_map[name])
        kwargs["help"] = COMMANDS[name][1]
        return cast(argparse.ArgumentParser, super().add_parser(name, **kwargs))


def _wrapped(head: str, text: str, width: int = 79, indent: int = 22) -> list[str]:
    lines = textwrap.wrap(text, width - indent, break_on_hyphens=False) or [""]
    first = f"  {head:<{indent - 3}} {lines[0]}" if len(head) < indent - 3 else f"  {head}"
    rest = lines[1:] if len(head) < indent - 3 else lines
    return [first, *(" " * indent + line for line in rest)]


def _epilog() -> str:
    out: list[str] = []
    for title, commands in COMMAND_GROUPS:
        out += ["", f"{title}:"]
        for name, _, line in commands:
            aliases = ", ".join(a for a, n in ALIASES.items() if n == name)
            out += _wrapped(f"{name} ({aliases})" if aliases else name, line)
    out += ["", "exit codes:"]
    for code, meaning in EXIT_CODES:
        out += _wrapped(str(code), meaning)
    out += ["", "`tracer COMMAND --help` describes a command and every option it takes."]
    return "\n".join(out[1:])


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with `selected` (a command line's first word), only that
    command's module is imported and only its options are built (a command line names
    one command).  `tracer --help` selects none: it imports no command module."""
    parser = argparse.ArgumentParser(
        prog="tracer",
        usage="tracer [-h] COMMAND ...",
        description="Verify what an AI assistant answered, from which exact source text,\n"
        "and whether that evidence is still intact.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_epilog(),
    )
    sub = cast(
        _Commands,
        parser.add_subparsers(
            dest="command",
            required=True,
            metavar="COMMAND",
            prog="tracer",
            action=_Commands,
            help=argparse.SUPPRESS,
        ),
    )
    sub.selected, sub.given = selected, {}
    name = ALIASES.get(selected, selected) if selected is not None else None
    if name is None:
        modules: tuple[str, ...] = COMMAND_MODULES
    else:
        modules = (COMMANDS[name][0],) if name in COMMANDS else ()
        for other in COMMANDS:
            if other != name:
                sub.listed(other)
    for module in modules:
        importlib.import_module(f"tracer.cli.{module}").register(sub)
    return parser


def _selected(args: Sequence[str]) -> str:
    """The command a command line names: its first word (the top level takes only -h)."""
    return args[0] if args and not args[0].startswith("-") else ""


def main(argv: Sequence[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(selected=_selected(args_in))
    args = parser.parse_args(args_in)
    handler: Handler = args.handler
    from tracer.cli.common import check_vault_paths  # loaded by every command module anyway
    from tracer.inert import inert  # an error can quote the vault: never let it steer the terminal

    try:
        check_vault_paths(args)
        return handler(args)
    except StoreError as exc:
        print(f"tracer: error: {inert(exc.diagnostics())}", file=sys.stderr)
        return EXIT_USAGE
    except database_error_types() as exc:
        damage = damage_of(exc)
        if damage is None:
            raise  # a bug in a query, not a damaged file: the traceback is what to report
        print(f"tracer: error: {inert(damage.diagnostics())}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("tracer: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
