"""`wheelset-fmu simulate`: run a scenario through the core (no FMU).

Example (Ren & Jin's curve: 100 m of straight, a 100 m transition, R 400 m):

  wheelset-fmu simulate --scenario ren-jin-r400 --duration 9 --out run.csv --plot run.png

The scenario names are the FMU's track names (track.scenario): each runs its
paper's wheelset on that track. Exit status 1 when the run stops early (a
derailment, a wheel lift, an excessive penetration): the CSV holds the run
up to there.
"""
from __future__ import annotations

import argparse
import os
import sys

from fmu_wheelset.fmu.variables import model_names


def track_name(text: str) -> str:
    """An argparse type: a built-in track name or an existing track file, whose
    path is passed on absolute (a scenario file is refused when it loads)."""
    from fmu_wheelset.fmu.registries import TRACKS
    names = [name for name, _ in TRACKS]
    if text in names:
        return text
    if not os.path.isfile(text):
        raise argparse.ArgumentTypeError(f"{text}: not a built-in track ({', '.join(names)}) "
                                         "and no such file")
    return os.path.abspath(text)


def register(subparsers):
    from fmu_wheelset.cli.args import number, output_file, preset, scenario, scenario_help
    p = subparsers.add_parser("simulate", help="run a wheelset scenario with the core (no FMU)",
                              description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", default="ren-jin-r400", type=scenario,
                   help=scenario_help() + "; default %(default)s")
    p.add_argument("--preset", type=preset,
                   help="a preset (presets/<name>.toml, or a preset file): its parameter values "
                        "replace the scenario's; the options below replace both")
    p.add_argument("--duration", type=number(0.0, 3600.0, lo_open=True, unit="s"),
                   help="simulated time (s; default: the scenario's)")
    # the range of the FMU's wheelset.speed (fmu_wheelset/fmu/variables.py)
    p.add_argument("--speed", type=number(0.0, 150.0, lo_open=True, unit="m/s"),
                   help="forward speed (m/s; default: the scenario's)")
    p.add_argument("--track", type=track_name,
                   help="the track instead of the scenario's: a built-in name (straight, "
                        "ren-jin-r400, kang-r320) or a track file (TOML/CSV, e.g. "
                        "scenarios/kang-r320.toml)")
    p.add_argument("--out", default="run.csv", type=output_file(), help="CSV of the time histories")
    p.add_argument("--plot", type=output_file(),
                   help="PNG with lateral displacement, normal forces and Y/Q")
    p.add_argument("--contact-geometry", choices=model_names("ContactGeometry"),
                   help="contact geometry: online (profiles scanned, minima tracked between "
                        "scans) or table (precomputed at initialisation, the same points); "
                        "default: the scenario's")
    p.add_argument("--integrator", choices=model_names("Integrator"),
                   help="internal integrator: rk4 or semi-implicit (fixed steps of at most "
                        "--internal-step), rk23, rk45 or rosenbrock (adaptive steps of at most "
                        "--internal-step under --tolerance; rosenbrock is linearly implicit, "
                        "the fastest with --internal-step 0.01 --tolerance 1e-4); "
                        "default: the scenario's")
    p.add_argument("--internal-step", type=number(1e-7, 0.01, unit="s"),
                   help="largest internal step (s; default: the scenario's)")
    p.add_argument("--tolerance", type=number(1e-12, 0.1),
                   help="local error tolerance of the adaptive integrators (default: the scenario's)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    from fmu_wheelset.cli.args import RunFailed, load_scenario
    from solver.scenarios import simulate
    overrides = {}
    if args.duration is not None:        # 0 is refused by the type, never "the default"
        overrides["duration"] = args.duration
    for key in ("contact_geometry", "integrator", "internal_step", "tolerance", "speed",
                "track"):
        if getattr(args, key, None) is not None:
            overrides[key] = getattr(args, key)
    # a scenario file that does not load (TOML, keys, values) or a model the core
    # refuses to build or initialise (profiles, track, parameters) is a
    # ValueError: one line and exit 2 (cli.args.run_command); a step the core
    # does not complete is the result's status (exit 1 below)
    scenario = load_scenario(args.scenario, preset=args.preset, **overrides)
    result = simulate(scenario, progress=not args.no_progress)
    result.write_csv(args.out)
    simulated = result.columns["time"][-1]
    from solver.scenarios import short_of_the_curve
    short = short_of_the_curve(scenario, float(result.columns["wheelset.distance"][-1]))
    if short:
        print(f"wheelset-fmu simulate: note: {short}", file=sys.stderr)
    print(f"{scenario.name}: {simulated:.2f} s simulated in {result.wall_time:.1f} s wall "
          f"(real-time factor {simulated / max(result.wall_time, 1e-9):.1f}), "
          f"{result.rhs_evaluations} RHS evaluations, internal step {result.internal_step * 1e3:.3g} ms "
          f"(largest allowed {scenario.params.internal_step * 1e3:g} ms)")
    print(f"wrote {args.out}")
    if args.plot:
        plot_run(result, args.plot, "(the run ends before the curve)" if short else "")
        print(f"wrote {args.plot}")
    if result.status != "ok":
        raise RunFailed(f"the run stopped ({result.status}) at {result.message}; {args.out} "
                        "holds it up to there")
    return 0


def plot_run(result, path, remark=""):
    from matplotlib.figure import Figure
    c = result.columns
    fig = Figure(figsize=(9, 9))
    ax = fig.subplots(3, 1, sharex=True)
    ax[0].plot(c["wheelset.distance"], c["wheelset.y"] * 1e3)
    ax[0].set_ylabel("lateral displacement (mm)")
    ax[0].set_title("lateral displacement y of the wheelset (+ left)", fontsize=9)
    for side in ("left", "right"):
        for i in range(1, 4):
            n = c[f"contact.{side}.point[{i}].normal_force"]
            if (n > 0).any():
                ax[1].plot(c["wheelset.distance"], n / 1e3, label=f"{side} point {i}")
        ax[2].plot(c["wheelset.distance"], c[f"wheel.{side}.Y_over_Q"], label=side)
    ax[1].set_ylabel("normal force (kN)")
    ax[1].set_title("normal force of each contact point (in a left curve the right wheel is the "
                    "outer one)", fontsize=9)
    ax[1].legend(fontsize=7)
    ax[2].set_ylabel("Y/Q")
    ax[2].set_title("derailment quotient Y/Q of each wheel (Y + towards the field side)",
                    fontsize=9)
    ax[2].set_xlabel("distance (m)")
    ax[2].legend(fontsize=7)
    fig.suptitle(" ".join(filter(None, (result.scenario.description, remark))))
    fig.savefig(path, dpi=110)
