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


# An example of each command that has none in its description: run from the
# repository's folder as it stands (after `make fmu` where it names
# dist/Wheelset.fmu); tests/test_cli_examples.py runs every example line of
# every command's --help.
EXAMPLES = {
    "build": ("the FMU for this machine, as `make fmu` (without --numba-targets it also "
              "carries the generic numba cache, for other x86-64 CPUs)",
              "wheelset-fmu build --out dist/Wheelset.fmu --numba-targets build-cpu"),
    "check": ("what this machine lacks to run an FMU",
              "wheelset-fmu check dist/Wheelset.fmu"),
    "compat": ("three cases in the FMI Cross-Check layout",
               "wheelset-fmu compat results/compat"),
    "cosim-track": ("the FMU on the OpenSees track, 0.2 s at 100 km/h, writes cosim-track.csv",
                    "wheelset-fmu cosim-track --fmu dist/Wheelset.fmu --duration 0.2"),
    "demo": ("the static geometry and the profiles only (without --cases: the whole suite, "
             "as `make demo`)",
             "wheelset-fmu demo --out demo-output --cases geometry,profiles"),
    "env": ("the lines a C host's shell needs", "wheelset-fmu env --shell"),
    "report": ("two cases, into report/ (exit 1 when one of their rows fails)",
               "wheelset-fmu report --out report --backend core --cases profiles,creep_models"),
    "system": ("the vehicle as an SSP archive over the FMU `make fmu` built",
               "wheelset-fmu system vehicle --fmu dist/Wheelset.fmu --out vehicle.ssp"),
    "vehicle": ("the Manchester vehicle on R 600 m with 150 mm cant at 31.3 m/s",
                "wheelset-fmu vehicle --fmu dist/Wheelset.fmu --speed 31.3 --radius 600 --cant 0.15 "
                "--duration 12 --average-last 4"),
}


class ExampleHelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, but a paragraph with an indented line (an example
    command) is printed as written, so that it pastes."""

    def _fill_text(self, text, width, indent):
        paragraphs = []
        for paragraph in text.split("\n\n"):
            if any(line.startswith("  ") for line in paragraph.splitlines()):
                paragraphs.append("\n".join(indent + line for line in paragraph.splitlines()))
            else:
                paragraphs.append(super()._fill_text(paragraph, width, indent))
        return "\n\n".join(paragraphs)


def build_parser() -> argparse.ArgumentParser:
    # one-line errors, exit 2, no abbreviated options, for every subcommand too
    # (the subparsers are of the same class: fmu_wheelset/cli/args.py)
    parser = Parser(
        prog="wheelset-fmu",
        description="Railway wheelset with multipoint wheel-rail contact (solver and FMU).",
    )
    parser.add_argument("--version", action="version", version=version_text(),
                        help="print the version of wheelset-fmu and of the Python it runs on")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{module_info.name}")
        module.register(subparsers)
    for name, sub in subparsers.choices.items():
        if name in EXAMPLES:
            caption, line = EXAMPLES[name]
            sub.epilog = f"Example ({caption}):\n\n  {line}"
            if sub.formatter_class is argparse.HelpFormatter:
                sub.formatter_class = ExampleHelpFormatter
    return parser


def version_text() -> str:
    """'wheelset-fmu 0.1.0 (Python 3.11.7)': the installed distribution's
    version, or the source tree's pyproject.toml when it is not installed."""
    import platform
    try:
        from importlib.metadata import PackageNotFoundError, version
        number = version("wheelset-fmu")
    except PackageNotFoundError:
        import tomllib
        from pathlib import Path
        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        number = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
    return f"wheelset-fmu {number} (Python {platform.python_version()})"


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
