"""`wheelset-fmu build [--out dist/Wheelset.fmu]`: build the FMU."""
from __future__ import annotations


def register(subparsers):
    parser = subparsers.add_parser(
        "build", help="build the FMI 2.0 co-simulation FMU (pythonfmu) with the solver bundled",
        description="Build Wheelset.fmu: pythonfmu slave + bundled solver, with units, "
                    "ranges and InitialUnknowns added to modelDescription.xml.")
    from fmu_wheelset.cli.args import output_file
    parser.add_argument("--out", default="dist/Wheelset.fmu", type=output_file(".fmu", may_create=True),
                        help="FMU file (default %(default)s)")
    parser.add_argument("--platforms", default="linux64",
                        help="binaries: 'all' or a comma list of linux64, win64, darwin64 "
                             "(win64/darwin64 cross-compiled with zig cc; default %(default)s)")
    from fmu_wheelset.packaging.build import add_standalone_options
    add_standalone_options(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    from fmu_wheelset.packaging.build import build_fmu, parse_numba_targets
    from fmu_wheelset.packaging.cross_build import parse_platforms
    build_fmu(args.out, platforms=parse_platforms(args.platforms), standalone=args.standalone,
              numba_targets=parse_numba_targets(args.numba_targets))
    return 0
