"""`wheelset-fmu conicity`: equivalent conicity (EN 15302) of a wheel/rail pair.

Example (S1002 on UIC60 at 1:40, EN 15302's 3 mm amplitude; prints 0.1772):

  wheelset-fmu conicity --wheel S1002 --rail UIC60 --inclination 40 --gauge 1435 --back-to-back 1360 --amplitude 3

Prints tan(gamma_e) at the lateral amplitude (mm) alone on stdout (a sentence
saying what it is on stderr). --method harmonic gives the harmonic
linearisation instead of EN 15302 Annex B's integration. --wheel and --rail
take built-in names or profile files in mm (e.g. profiles/S1002.txt). For a
coned wheel (`cone:<conicity>`) the cone's own conicity is printed beside it:
on a crowned, inclined rail the wheelset rolls as it moves sideways, which
raises the equivalent conicity (cone:0.15 on UIC60 1:40: 0.168).
"""
from __future__ import annotations

import argparse
import sys

from fmu_wheelset.cli.commands.geometry import add_setup_arguments, build_setup


def register(subparsers) -> None:
    p = subparsers.add_parser("conicity", help="equivalent conicity (EN 15302)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_setup_arguments(p)
    from fmu_wheelset.cli.args import number
    p.add_argument("--amplitude", type=number(0.0, 20.0, lo_open=True, unit="mm"), default=3.0,
                   help="lateral amplitude y_hat, mm (default 3)")
    p.add_argument("--method", choices=("integration", "harmonic"), default="integration",
                   help="EN 15302 Annex B integration (default) or harmonic linearisation")
    p.set_defaults(func=run)


def run(args) -> int:
    from solver.contact.geometry.analysis import equivalent_conicity

    # GeometryError, ProfileError: ValueErrors, one line and exit 2 (cli.args.run_command)
    setup = build_setup(args)
    value = equivalent_conicity(setup, args.amplitude * 1e-3, method=args.method)
    print(f"{value:.4f}")
    print(f"equivalent conicity ({args.method}, EN 15302) of {args.wheel}/{args.rail} at "
          f"{args.amplitude:g} mm: {value:.4f}", file=sys.stderr)
    name = setup.wheel.name
    if name.startswith("cone:"):
        print(f"the cone's own conicity is {name.split(':', 1)[1]}: the wheelset rolls on the crowned, "
              f"inclined rail as it moves sideways, which raises the equivalent conicity to {value:.4f}",
              file=sys.stderr)
    return 0
