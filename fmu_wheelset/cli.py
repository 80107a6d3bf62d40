"""The `wheelset-fmu` command: one subcommand per module in fmu_wheelset/commands."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from fmu_wheelset import commands
from fmu_wheelset.cli_args import Parser, run_command


def build_parser() -> argparse.ArgumentParser:
    # one-line errors, exit 2, for every subcommand too (fmu_wheelset/cli_args.py)
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
        parser.print_help()
        return 2
    return run_command(f"{parser.prog} {args.command}", args.func, args)


if __name__ == "__main__":
    sys.exit(main())
