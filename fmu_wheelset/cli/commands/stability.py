"""`wheelset-fmu stability`: hunting stability of a wheelset, a bogie or the whole
vehicle: linearised eigenvalues per speed, the linear critical speed and hunting
frequency, a root-locus plot, and the nonlinear critical speed by bisection on
perturbed runs (of the wheelset core; of the vehicle over four FMUs).

  wheelset-fmu stability                                   # one suspended wheelset (solver.stability)
  wheelset-fmu stability --system bogie --wheel-profile cone:0.15 --creep-model kalker
  wheelset-fmu stability --system bogie --creep-model kalker --set vehicle.primary_stiffness=[15e6,3.884e6,1.22e6] \\
      --set wheelset.creep_coefficients=[8e6,7e6,1e-9,1e-9] --set wheelset.gyroscopic=false
  wheelset-fmu stability --system bogie --params examples/stability_bogie.toml   # [wheelset], [vehicle]
  wheelset-fmu stability --list-parameters

(`--system vehicle --nonlinear --v-min 40 --v-max 110` bisects on runs of the
vehicle over four FMUs: minutes.)

Systems: `wheelset` (the core with its built-in primary suspension to a frame
on the track centreline, Wickens' single suspended wheelset, or --free), `bogie` (a bogie of the Manchester vehicle
under a carbody fixed to the track frame, cosim/vehicle/stability.py), `vehicle` (the
whole vehicle: carbody, two bogies, four wheelsets). Every parameter of the API
can be set: any field of solver.model.parameters.WheelsetParameters as
`--set wheelset.NAME=VALUE`, any field of cosim.vehicle.parameters.VehicleParameters as
`--set vehicle.NAME=VALUE` (VALUE in TOML syntax: 3.2e6, true, "S1002",
[1, 2, 3]), or both in a TOML file (--params) with tables [wheelset] and
[vehicle]; --set wins over --params, which wins over the named options below.
The equivalent conicity of the profile pair is printed first.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from fmu_wheelset.fmu.variables import builtin_profile_names, model_names

SYSTEMS = ("wheelset", "bogie", "vehicle")


def register(subparsers):
    from fmu_wheelset.cli.args import input_file, number, output_file
    p = subparsers.add_parser(
        "stability", help="hunting stability of a wheelset, a bogie or the vehicle: eigenvalues, "
                          "critical speeds", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--system", choices=SYSTEMS, default="wheelset",
                   help="what is analysed (default: wheelset)")
    p.add_argument("--wheel-profile", default="S1002",
                   help=", ".join(builtin_profile_names("wheel"))
                   + ", cone:<conicity>, a file (.txt, .prw)")
    p.add_argument("--rail-profile", default="UIC60",
                   help=", ".join(builtin_profile_names("rail")) + ", a file (.txt, .prr)")
    p.add_argument("--creep-model", default="polach", choices=model_names("CreepModel"))
    p.add_argument("--friction", type=number(0.0, 2.0), default=None, help="coefficient of friction")
    for name in ("f11", "f22", "f23", "f33"):
        p.add_argument(f"--{name}", type=number(0.0, 1e12), default=None,
                       help=f"Kalker's linear coefficient {name} per contact point (N, N m, N m^2; "
                            "creep model kalker; default: from Kalker's table)")
    p.add_argument("--no-roll-rate-creepage", action="store_true",
                   help="the textbook creepages, without the roll-rate term")
    p.add_argument("--no-gyroscopic", action="store_true", help="without the gyroscopic moments")
    p.add_argument("--free", action="store_true", help="system wheelset: a free wheelset (no suspension)")
    p.add_argument("--kx", type=number(0.0, 10000000000.0, unit="N/m"), default=1.0e6,
                   help="system wheelset: longitudinal stiffness per axle box (N/m; Manchester vehicle 1: "
                        "31.391e6)")
    p.add_argument("--ky", type=number(0.0, 10000000000.0, unit="N/m"), default=3.884e6,
                   help="system wheelset: lateral stiffness per axle box (N/m)")
    p.add_argument("--suspended-mass", type=number(0.0, 100000.0, unit="kg"), default=9307.5,
                   help="system wheelset: mass carried by the wheelset (kg; Manchester vehicle 1: 9307.5)")
    p.add_argument("--params", type=input_file, help="TOML file with [wheelset] and [vehicle] tables")
    p.add_argument("--set", action="append", default=[], metavar="GROUP.NAME=VALUE",
                   help="any wheelset.* or vehicle.* parameter (repeatable)")
    p.add_argument("--list-parameters", action="store_true",
                   help="list every wheelset.* and vehicle.* parameter with its default and exit")
    p.add_argument("--speeds", type=speed_list, default=speed_list("10,20,30,40,50,60,70,80,90,100,110,120,130,140"),
                   help="comma-separated speeds of the table and root locus (m/s)")
    p.add_argument("--v-min", type=number(0.0, 150.0, unit="m/s"), default=5.0)
    p.add_argument("--v-max", type=number(0.0, 150.0, unit="m/s"), default=150.0)
    p.add_argument("--nonlinear", action="store_true",
                   help="also the nonlinear critical speed: wheelset: perturbed runs of the core (6 mm, "
                        "3 s); vehicle: runs over four FMUs (30 kN push on the leading wheelset for 50 ms)")
    p.add_argument("--fmu", type=input_file, help="system vehicle, --nonlinear: Wheelset.fmu (default: build one)")
    p.add_argument("--plot", type=output_file(".png"), help="PNG of the root locus")
    p.set_defaults(func=run)


# ---------------------------------------------------------------------------
# parameters
# ---------------------------------------------------------------------------

def _field_types(cls):
    return {f.name: f for f in dataclasses.fields(cls)}


def _parse_value(text: str):
    """A TOML value (never evaluated as Python)."""
    import tomllib
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        raise ValueError(f"{text!r} is not a TOML value (e.g. 3.2e6, true, \"S1002\", [1, 2, 3])") from None


def _coerce(cls_name, name, value, default):
    """`value` shaped like the field's default (tuples from lists, floats from ints)."""
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ValueError(f"{cls_name}.{name} must be true or false, got {value!r}")
        return value
    if isinstance(default, tuple):
        if not isinstance(value, list) or len(value) != len(default):
            raise ValueError(f"{cls_name}.{name} must be a list of {len(default)} numbers, got {value!r}")
        return tuple(float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v
                     for v in value)
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{cls_name}.{name} must be a number, got {value!r}")
        return float(value)
    if isinstance(default, int) and not isinstance(default, bool):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{cls_name}.{name} must be an integer, got {value!r}")
        return value
    if isinstance(default, dict):
        if not isinstance(value, dict):
            raise ValueError(f"{cls_name}.{name} must be a table, got {value!r}")
        return value
    return value


def _defaults(cls):
    instance = cls()
    return {name: getattr(instance, name) for name in _field_types(cls)}


def collect_overrides(args):
    """{"wheelset": {...}, "vehicle": {...}} from --params and --set (--set last)."""
    from cosim.vehicle.parameters import VehicleParameters
    from solver.model.parameters import WheelsetParameters
    classes = {"wheelset": WheelsetParameters, "vehicle": VehicleParameters}
    out = {"wheelset": {}, "vehicle": {}}
    raw = []
    if args.params:
        import tomllib

        from solver.data_files import read_text
        data = tomllib.loads(read_text(args.params))
        for group, table in data.items():
            if group not in classes or not isinstance(table, dict):
                raise ValueError(f"{args.params}: unknown table [{group}] (wheelset, vehicle)")
            raw += [(group, k, v) for k, v in table.items()]
    for item in args.set:
        key, sep, text = item.partition("=")
        group, dot, name = key.strip().partition(".")
        if not sep or not dot or group not in classes:
            raise ValueError(f"--set {item!r}: expected wheelset.NAME=VALUE or vehicle.NAME=VALUE")
        raw.append((group, name.strip(), _parse_value(text.strip())))
    for group, name, value in raw:
        defaults = _defaults(classes[group])
        if name not in defaults:
            raise ValueError(f"unknown parameter {group}.{name} (see --list-parameters)")
        out[group][name] = _coerce(group, name, value, defaults[name])
    return out


def list_parameters() -> str:
    from cosim.vehicle.parameters import VehicleParameters
    from solver.model.parameters import WheelsetParameters
    lines = []
    for group, cls in (("wheelset", WheelsetParameters), ("vehicle", VehicleParameters)):
        for name, value in _defaults(cls).items():
            lines.append(f"{group}.{name} = {value!r}")
    return "\n".join(lines)


def wheelset_parameters(args, overrides):
    from solver.model.parameters import WheelsetParameters
    values = dict(wheel_profile=args.wheel_profile, rail_profile=args.rail_profile,
                  creep_model=args.creep_model, roll_rate_creepage=not args.no_roll_rate_creepage,
                  gyroscopic=not args.no_gyroscopic)
    if args.friction is not None:
        values["friction"] = args.friction
    coefficients = [getattr(args, n) for n in ("f11", "f22", "f23", "f33")]
    if any(c is not None for c in coefficients):
        values["creep_coefficients"] = tuple(0.0 if c is None else c for c in coefficients)
    if args.system == "wheelset" and args.free:
        values.update(bogie=False)
    elif args.system == "wheelset":
        # Wickens' single suspended wheelset: the springs to a frame on the track
        # centreline (solver/stability.py)
        values.update(bogie=True, frame_on_centreline=True,
                      suspension_stiffness=(args.kx, args.ky, 1.22e6),
                      suspended_mass=args.suspended_mass)
    values.update(overrides["wheelset"])
    params = WheelsetParameters(**values)
    params.validate()
    return params


# the options of the single suspended wheelset and their defaults
WHEELSET_ONLY = {"kx": 1.0e6, "ky": 3.884e6, "suspended_mass": 9307.5}


def ineffective_options(args) -> str:
    """One sentence naming the options given that have no effect with the
    chosen --system / --free, or '' (a silent no-op would mislead)."""
    given = [f"--{name.replace('_', '-')}" for name, default in WHEELSET_ONLY.items()
             if getattr(args, name, default) != default]
    if args.system != "wheelset":
        given += ["--free"] if args.free else []
        if given:
            return (f"{', '.join(given)} set the single wheelset's suspension: no effect with "
                    f"--system {args.system} (use --set vehicle.NAME=VALUE)")
    elif args.free and given:
        return f"{', '.join(given)} set the suspension, which --free leaves out: no effect"
    return ""


def parameters(args):
    """The single-wheelset parameters of the named options (kept for callers of
    the earlier interface)."""
    return wheelset_parameters(args, {"wheelset": {}, "vehicle": {}})


# ---------------------------------------------------------------------------
# run
def speed_list(text: str) -> list:
    """An argparse type: comma-separated positive finite speeds (m/s)."""
    speeds = []
    for item in text.split(","):
        if not item.strip():
            continue
        try:
            value = float(item)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{item.strip()!r} is not a number (m/s)") from None
        if not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(f"{item.strip()!r}: a speed must be positive and finite")
        speeds.append(value)
    if not speeds:
        raise argparse.ArgumentTypeError("no speed given")
    return speeds


speed_list.__name__ = "speed list"


# ---------------------------------------------------------------------------

def run(args) -> int:
    if args.list_parameters:
        print(list_parameters())
        return 0
    from cosim.vehicle import stability as vstab
    from cosim.vehicle.parameters import VehicleError, VehicleParameters
    from solver import stability
    problem = ineffective_options(args)
    if problem:
        print(f"wheelset-fmu stability: error: {problem}", file=sys.stderr)
        return 2
    try:
        overrides = collect_overrides(args)
        params = wheelset_parameters(args, overrides)
        vehicle = VehicleParameters(**overrides["vehicle"])
        vehicle.validate()
        speeds = args.speeds
    except (ValueError, TypeError, VehicleError) as exc:
        print(f"wheelset-fmu stability: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    if not 0.0 < args.v_min < args.v_max:
        print(f"wheelset-fmu stability: error: --v-min {args.v_min:g} must be below --v-max "
              f"{args.v_max:g} (and above 0)", file=sys.stderr)
        return 2
    if args.system != "wheelset" and overrides["wheelset"].keys() & {"mass", "inertia_roll", "inertia_spin",
                                                                     "inertia_yaw", "nominal_radius",
                                                                     "axle_box_semi_spacing"}:
        print("note: the vehicle's wheelset_mass, wheelset_inertia, wheel_radius and "
              "primary_semi_spacing set these for the bogie and the vehicle")
    analysed = params if args.system == "wheelset" else vstab.wheelset_parameters(vehicle, params)
    try:
        print("profile pair: " + vstab.describe_conicity(vstab.profile_pair_conicity(analysed)))
    except ValueError as exc:
        print(f"wheelset-fmu stability: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    errors = (stability.StabilityError, vstab.VehicleStabilityError, ValueError)
    fixed = args.system == "bogie"
    try:
        if args.system == "wheelset":
            locus = stability.root_locus(params, speeds)
        else:
            locus = vstab.root_locus(vehicle, params, speeds, fixed_carbody=fixed)
    except errors as exc:
        print(f"wheelset-fmu stability: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    what = {"wheelset": "wheelset", "bogie": "bogie (carbody fixed)", "vehicle": "vehicle"}[args.system]
    print(f"{what}: hunting eigenvalue per speed")
    head = f"{'V (m/s)':>8} {'Re (1/s)':>10} {'Im (rad/s)':>11} {'f (Hz)':>7} {'damping':>8}"
    print(head + ("" if args.system == "wheelset" else f" {'least stable lateral mode (1/s)':>34}"))
    for e in locus:
        line = (f"{e.speed:8.1f} {e.hunting.real:10.3f} {e.hunting.imag:11.3f} {e.frequency:7.3f} "
                f"{e.damping_ratio:8.4f}")
        if args.system != "wheelset":
            ls = e.least_stable
            line += f" {ls.real:12.3f} {ls.imag / (2 * math.pi):7.3f} Hz" + (
                "" if ls == e.hunting else "  (carbody)")
        print(line)
    status = 0
    try:
        if args.system == "wheelset":
            crit = stability.linear_critical_speed(params, args.v_min, args.v_max)
        else:
            crit = vstab.linear_critical_speed(vehicle, params, args.v_min, args.v_max, fixed_carbody=fixed)
        print(f"linear critical speed {crit.speed:.2f} m/s ({crit.speed * 3.6:.1f} km/h), "
              f"hunting frequency {crit.frequency:.3f} Hz")
    except errors as exc:
        print(f"wheelset-fmu stability: linear critical speed: {exc}", file=sys.stderr)
        status = 1
    if args.nonlinear:
        status = max(status, _nonlinear(args, params, vehicle))
    if args.plot:
        plot_root_locus(locus, args.plot, f"{what}: {args.wheel_profile} / {args.rail_profile}, "
                        f"{params.creep_model}")
        print(f"wrote {args.plot}")
    return status


def _nonlinear(args, params, vehicle) -> int:
    from cosim.vehicle import stability as vstab
    from solver import stability
    if args.system == "bogie":
        print("nonlinear critical speed: not for --system bogie (the co-simulation carries the "
              "carbody: use --system vehicle)")
        return 1
    try:
        if args.system == "wheelset":
            crit = stability.nonlinear_critical_speed(params, args.v_min, args.v_max)
            print(f"nonlinear critical speed {crit.speed:.2f} m/s ({crit.speed * 3.6:.1f} km/h), "
                  f"limit-cycle frequency {crit.frequency:.3f} Hz (6 mm perturbation)")
            return 0
        fmu = args.fmu
        if fmu is None:
            import tempfile
            from pathlib import Path

            from fmu_wheelset.packaging.build import build_fmu
            fmu = str(build_fmu(Path(tempfile.mkdtemp(prefix="wheelset-fmu-")) / "Wheelset.fmu", quiet=True,
                                 numba_targets=("build-cpu",),
                                 progress=lambda line: print(line, file=sys.stderr, flush=True)))

        def show(r):
            print(f"  {r.speed:7.2f} m/s: last/first lateral amplitude {r.ratio:.3f} "
                  f"({'hunts' if r.hunts else 'decays'})")
        print("nonlinear: vehicle over four FMUs, 30 kN lateral push on the leading wheelset for 50 ms, 3 s")
        crit, _ = vstab.nonlinear_critical_speed(fmu, vehicle, params, args.v_min, args.v_max,
                                                 progress=show)
        print(f"nonlinear critical speed {crit.speed:.2f} m/s ({crit.speed * 3.6:.1f} km/h), "
              f"limit-cycle frequency {crit.frequency:.3f} Hz")
        return 0
    except (stability.StabilityError, vstab.VehicleStabilityError, ValueError) as exc:
        print(f"wheelset-fmu stability: nonlinear critical speed: {exc}", file=sys.stderr)
        return 1


def plot_root_locus(locus, path, title):
    import numpy as np
    from matplotlib.figure import Figure
    fig = Figure(figsize=(8, 6))
    ax = fig.subplots()
    speeds = np.array([e.speed for e in locus])
    for e in locus:
        w = e.eigenvalues
        keep = (np.abs(w) < 400) & (w.imag >= 0)
        ax.scatter(w.real[keep], w.imag[keep] / (2 * np.pi), s=8, c="0.7")
    hunting = np.array([e.hunting for e in locus])
    sc = ax.scatter(hunting.real, hunting.imag / (2 * np.pi), c=speeds, cmap="viridis", s=30,
                    label="hunting mode")
    ax.plot(hunting.real, hunting.imag / (2 * np.pi), "-", color="C0", lw=0.8)
    fig.colorbar(sc, ax=ax, label="speed (m/s)")
    ax.axvline(0.0, color="k", lw=0.8)
    ax.set_xlabel("real part (1/s)")
    ax.set_ylabel("frequency (Hz)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.savefig(path, dpi=110)
