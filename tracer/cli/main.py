"""The `tracer` command: one parser, subcommands registered by small modules.

Startup is paid on every run, `--help` included, so two things stay cheap: the command
modules import little at their top (`tracer.cli.common`), and only the command being run
gets its options built; every other one is registered by name and one-line help
(`_Commands`).  The exit codes are `EXIT_CODES`, printed by `tracer --help` and listed in
docs/cli.md; `tests/cli/test_exit_codes.py` runs a command for each.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import Any, cast

from store.errors import StoreError, damage_of, database_error_types
from tracer.inert import inert

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
        "export matched no answer you may read",
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

#: modules under tracer.cli that register subcommands
COMMAND_MODULES = (
    "store_cmds",
    "outbox_cmds",
    "import_cmds",
    "chunk_cmds",
    "engine_cmds",
    "access_cmds",
    "case_cmds",
    "ui_cmds",
    "export_cmds",
    "dataset_cmds",
)

#: how `tracer --help` lists the commands; every command is in exactly one group
COMMAND_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "investigate (an investigator's key: --key or TRACER_KEY)",
        ("open", "verify", "trace", "revalidate", "impact", "access", "annotate"),
    ),
    ("case file (signed by the investigator)", ("case", "tag", "tags", "note", "hold", "release", "holds")),
    (
        "custodian (the vault, its keyring, roster and log)",
        (
            "init",
            "keys",
            "investigators",
            "ingest",
            "ingest-outbox",
            "purge",
            "checkpoint",
            "quarantine",
            "log",
            "proof",
        ),
    ),
    ("producers (keys and signed input files)", ("keygen", "sign", "pack", "chunk")),
    ("import/export", ("import", "export", "verify-pack", "export-dataset", "verify-dataset")),
)


class _Unbuilt:
    """Stands in for the parser of a command that is not being run: every call that
    would add an option, a group or a sub-command is accepted and dropped."""

    def __getattr__(self, name: str) -> Callable[..., _Unbuilt]:
        return lambda *args, **kwargs: self


class _Commands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """Sub-commands where only `selected` is built in full (all of them when it is None)."""

    selected: str | None = None

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        names = (name, *kwargs.get("aliases", ()))
        if self.selected is None or self.selected in names:
            return cast(argparse.ArgumentParser, super().add_parser(name, **kwargs))
        # what `add_parser` records of a command for the listing and for "invalid choice",
        # without the parser: building thirty of them is most of `tracer --help`'s time
        unbuilt = cast(argparse.ArgumentParser, _Unbuilt())
        if kwargs.get("help") is not None:
            self._choices_actions.append(self._ChoicesPseudoAction(name, names[1:], kwargs["help"]))
        for n in names:
            self._name_parser_map[n] = unbuilt
        return unbuilt


def _wrapped(head: str, text: str, width: int = 79, indent: int = 22) -> list[str]:
    lines = textwrap.wrap(text, width - indent, break_on_hyphens=False) or [""]
    first = f"  {head:<{indent - 3}} {lines[0]}" if len(head) < indent - 3 else f"  {head}"
    rest = lines[1:] if len(head) < indent - 3 else lines
    return [first, *(" " * indent + line for line in rest)]


def command_helps(sub: argparse._SubParsersAction) -> dict[str, tuple[str, str]]:  # type: ignore[type-arg]
    """Each registered command's label (with its aliases) and one-line help, by name."""
    return {str(a.dest): (str(a.metavar or a.dest), str(a.help or "")) for a in sub._get_subactions()}


def _epilog(sub: argparse._SubParsersAction) -> str:  # type: ignore[type-arg]
    helps = command_helps(sub)
    out: list[str] = []
    for title, names in COMMAND_GROUPS:
        out += ["", f"{title}:"]
        for name in names:
            out += _wrapped(*helps.get(name, (name, "")))
    out += ["", "exit codes:"]
    for code, meaning in EXIT_CODES:
        out += _wrapped(str(code), meaning)
    out += ["", "`tracer COMMAND --help` describes a command and every option it takes."]
    return "\n".join(out[1:])


def build_parser(
    modules: Sequence[str] = COMMAND_MODULES, selected: str | None = None
) -> argparse.ArgumentParser:
    """The whole parser; with `selected`, only that command's options are built (a
    command line names one command, and building the other thirty costs more than
    importing Python)."""
    parser = argparse.ArgumentParser(
        prog="tracer",
        usage="tracer [-h] COMMAND ...",
        description="Verify what an AI assistant answered, from which exact source text,\n"
        "and whether that evidence is still intact.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
    sub.selected = selected
    for name in modules:
        importlib.import_module(f"tracer.cli.{name}").register(sub)
    parser.epilog = _epilog(sub)
    return parser


def _selected(args: Sequence[str]) -> str:
    """The command a command line names: its first word (the top level takes only -h)."""
    return args[0] if args and not args[0].startswith("-") else ""


def main(argv: Sequence[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(selected=_selected(args_in))
    args = parser.parse_args(args_in)
    handler: Handler = args.handler
    try:
        return handler(args)
    except StoreError as exc:
        # an error can quote the vault or the trust store: never let it steer the terminal
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
