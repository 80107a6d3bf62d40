"""The `wheelset-fmu` command: one subcommand per module in fmu_wheelset/cli/commands.

Exit status and error messages: fmu_wheelset/cli/args.py (0 done, 2 invalid
command line or input file, 1 a valid run that failed)."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from fmu_wheelset.cli import commands
from fmu_wheelset.cli.args import Parser, run_command, silence_stderr_at_exit


def build_parser() -> argparse.ArgumentParser:
    # one-line errors, exit 2, no abbreviated options, for every subcommand too
    # (the subparsers are of the same class: fmu_wheelset/cli/args.py)
    parser = Parser(
        prog="wheelset-fmu",
        description="Railway wheelset with multipoint wheel-rail contact (solver and FMU).",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{module_info.name}")
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        names = ", ".join(sorted(parser._subparsers._group_actions[0].choices))
        print(f"{parser.prog}: error: a command is needed: {names} "
              f"({parser.prog} --help says what each does)", file=sys.stderr)
        return 2
    status = run_command(f"{parser.prog} {args.command}", args.func, args)
    if argv is None and any(name.startswith("openseespy") for name in sys.modules):
        silence_stderr_at_exit()        # OpenSees's exit banner (a real command line only)
    return status


if __name__ == "__main__":
    sys.exit(main())
