"""`wheelset-fmu cosim-track`: the wheelset FMU on the OpenSees track model
(cosim.track.master, cosim.track.fe_model), fixed-step Gauss-Seidel through FMPy."""
from __future__ import annotations


def _fmu_or_new(text):
    """An argparse type: an existing wheelset FMU, or a new .fmu file that can be
    written (the FMU is built there)."""
    import os
    from fmu_wheelset.cli.args import fmu_file, output_file
    return fmu_file(text) if os.path.exists(text) else output_file(".fmu", may_create=True)(text)


_fmu_or_new.__name__ = "FMU file"


def _parameter(text):
    """An argparse type: NAME=VALUE of a parameter of the FMU (its declared type
    and range, fmu_wheelset/fmu/variables.py); (name, typed value)."""
    import argparse
    from fmu_wheelset.fmu import variables
    name, sep, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not name or not value:
        raise argparse.ArgumentTypeError(f"{text!r}: NAME=VALUE expected, e.g. "
                                         "contact.friction_coefficient=0.3")
    var = variables.BY_NAME.get(name)
    if var is None or var.causality != "parameter":
        raise argparse.ArgumentTypeError(f"{name!r} is not a parameter of the FMU "
                                         "(docs/variables.md lists them)")
    typed = _typed({name: value})[name]
    try:
        if var.type == "Enumeration":
            import solver.model as wheelset
            variables.core_value(var, typed, wheelset)
        elif var.type in ("Real", "Integer"):
            variables.core_value(var, typed, None)
        elif var.type == "Boolean" and not isinstance(typed, bool):
            raise ValueError(f"parameter {name} = {value!r} is not true or false")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(" ".join(str(exc).split())) from None
    return name, typed


_parameter.__name__ = "parameter"


def register(subparsers):
    from fmu_wheelset.cli.args import number, output_file
    p = subparsers.add_parser("cosim-track",
                              help="co-simulate the FMU with the OpenSees flexible track")
    p.add_argument("--fmu", default="dist/Wheelset.fmu", type=_fmu_or_new,
                   help="the FMU (built there if missing; default %(default)s)")
    p.add_argument("--duration", type=number(0.0, 3600.0, lo_open=True, unit="s"), default=1.0,
                   help="simulated time (s)")
    p.add_argument("--step", type=number(0.0, 0.01, lo_open=True, unit="s"), default=1e-3,
                   help="communication step (s)")
    p.add_argument("--order", choices=("fmu-first", "track-first"), default="fmu-first")
    p.add_argument("--extrapolation", choices=("none", "linear"), default="none")
    p.add_argument("--engine", choices=("assembled", "opensees"), default="assembled")
    p.add_argument("--no-jacobian", action="store_true",
                   help="plain Gauss-Seidel (no contact Jacobian in the track step)")
    p.add_argument("--rail", default="UIC60", help="rail section: UIC60 (60E1) or CHN60")
    p.add_argument("--beam", choices=("timoshenko", "euler-bernoulli"), default="timoshenko")
    p.add_argument("--sleeper-spacing", type=number(0.1, 2.0, unit="m"), default=0.6)
    p.add_argument("--bays", type=number(20, 5000, integer=True), default=100,
                   help="model length in sleeper bays")
    p.add_argument("--speed", type=number(1.0, 540.0, unit="km/h"), default=100.0, help="km/h")
    p.add_argument("--wheel-load", type=number(1e3, 1e6, unit="N"), default=100e3,
                   help="static wheel load (N), from the suspended mass")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", type=_parameter,
                   help="extra FMU parameter (repeatable)")
    p.add_argument("--out", default="cosim-track.csv", type=output_file(".csv"),
                   help="CSV of the time histories")
    p.set_defaults(func=run)


def run(args) -> int:
    import csv
    import os
    import sys
    from cosim.track.fe_model import opensees
    from cosim.track.parameters import TrackParameters
    try:
        opensees()
    except ImportError as exc:
        print(f"wheelset-fmu cosim-track: error: {exc}", file=sys.stderr)
        return 2
    from cosim.track.master import run_track_cosim
    from cosim.track.options import CosimOptions
    params = {"suspension.builtin": True, "wheelset.speed": args.speed / 3.6,
              "suspension.suspended_mass": max(2 * args.wheel_load / 9.81 - 1813.0, 0.0),
              "suspension.stiffness.z": 0.0}
    params.update(dict(args.param))
    # checked before any work: an unknown rail section is a ValueError (exit 2)
    track = TrackParameters(rail=args.rail, beam=args.beam, sleeper_spacing=args.sleeper_spacing,
                            bays=args.bays)
    if not os.path.isfile(args.fmu):
        from fmu_wheelset.packaging.build import build_fmu
        build_fmu(args.fmu)
    options = CosimOptions(duration=args.duration, step=args.step, order=args.order,
                           extrapolation=args.extrapolation, engine=args.engine,
                           interface_jacobian=not args.no_jacobian,
                           track=track,
                           fmu_parameters=params)
    from cosim.track.options import CosimError
    try:
        result = run_track_cosim(args.fmu, options)
    except CosimError as exc:
        print(f"wheelset-fmu cosim-track: the co-simulation stopped: {' '.join(str(exc).split())}",
              file=sys.stderr)
        return 1
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        names = list(result.columns)
        w.writerow(names)
        for row in zip(*(result.columns[n] for n in names)):
            w.writerow([f"{v:.9g}" for v in row])
    print(f"{result.simulated:g} s simulated in {result.wall_total:.1f} s wall (real-time factor "
          f"{result.real_time_factor:.2f}; stepping FMU {result.wall_fmu:.1f} s, track "
          f"{result.wall_track:.1f} s; set-up FMU {result.wall_fmu_setup:.1f} s, track "
          f"{result.wall_track_setup:.1f} s)")
    print(f"wrote {args.out}")
    return 0


def _typed(params):
    out = {}
    for k, v in params.items():
        if isinstance(v, str):
            low = v.lower()
            if low in ("true", "false"):
                v = low == "true"
            else:
                try:
                    v = float(v) if any(c in v for c in ".eE") else int(v)
                except ValueError:
                    pass
        out[k] = v
    return out
