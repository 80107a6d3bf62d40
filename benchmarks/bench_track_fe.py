"""Benchmark of the wheelset FMU coupled with the OpenSees track (the set-up
of docs/flexible_track.md): a 100 km/h run on straight track, 1 ms communication steps, both
rails over 60 m (100 bays of 0.6 m, 2 Timoshenko elements per bay, moving
window), the contact Jacobian probed once. Prints the real-time factor and the
shares of the FMU (setReal + doStep + getReal + probes), of the OpenSees track
(the "assembled" engine: the FMU's forces as rail loads, Newmark on the
OpenSees element matrices, moving loads, interpolation, window shifts) and of
the master's own loop, and the
set-up apart (FMU instantiation, OpenSees matrices, factorisation, loading the
compiled kernels; on a cold numba cache the first run also compiles them).
Also the same master on a rigid track (FMU alone) and the track's
``ops.analyze`` engine for a few steps (OpenSees' own transient analysis).

Times: wall clock and the process' CPU time (time.process_time; the FMU runs
in this process), which waiting for a shared core does not inflate; each
figure is the minimum over ``--repeat`` runs.

The contact Jacobian (the implicit coupling's contact stiffness and damping) is
probed every ``--jacobian-every`` steps, by ``--jacobian-method``: the FMU's
fmi2GetDirectionalDerivative (default) or perturbed short doSteps from a saved
FMU state; its CPU time per probe and per step is printed.

usage: python benchmarks/bench_track_fe.py [--fmu dist/Wheelset.fmu] [--duration 10] [--repeat 3]
       [--jacobian-every 10] [--jacobian-method derivative|step]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cosim.track.engines import make_track  # noqa: E402
from cosim.track.fe_model import RailLoad  # noqa: E402
from cosim.track.master import run_track_cosim  # noqa: E402
from cosim.track.options import CosimOptions  # noqa: E402
from cosim.track.parameters import UIC60, TrackParameters  # noqa: E402

SPEED = 100.0 / 3.6
PARAMS = {"suspension.builtin": True, "suspension.suspended_mass": 2 * 1e5 / 9.81 - 1813.0,
          "suspension.stiffness.z": 0.0, "wheelset.speed": SPEED,
          "wheel.profile": "S1002", "rail.profile": "UIC60"}


def figures(r):
    """Per-run figures: seconds (totals) and microseconds per step."""
    per = 1e6 / r.steps
    cpu_loop = r.cpu_total - r.cpu_fmu_setup - r.cpu_track_setup - r.cpu_master_setup
    wall_loop = r.wall_total - r.wall_fmu_setup - r.wall_track_setup - r.wall_master_setup
    return {
        "wall_total": r.wall_total, "cpu_total": r.cpu_total,
        "wall_loop": wall_loop, "cpu_loop": cpu_loop,
        "wall_fmu": r.wall_fmu * per, "cpu_fmu": r.cpu_fmu * per,
        "wall_track": r.wall_track * per, "cpu_track": r.cpu_track * per,
        "cpu_master": (cpu_loop - r.cpu_fmu - r.cpu_track) * per,
        "wall_master": (wall_loop - r.wall_fmu - r.wall_track) * per,
        "setup_fmu": r.cpu_fmu_setup, "setup_track": r.cpu_track_setup,
        "setup_master": r.cpu_master_setup,
    }


def best(runs):
    return {k: min(f[k] for f in runs) for k in runs[0]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fmu", default=str(ROOT / "dist" / "Wheelset.fmu"))
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jacobian-every", type=int, default=10 ** 9,
                    help="steps between two contact-Jacobian probes (default: once)")
    ap.add_argument("--jacobian-method", choices=("derivative", "step"), default="derivative",
                    help="fmi2GetDirectionalDerivative, or perturbed doSteps from a saved state")
    args = ap.parse_args(argv)
    if not Path(args.fmu).is_file():
        from fmu_wheelset.packaging.build import build_fmu
        build_fmu(args.fmu, quiet=True)
    track = TrackParameters(rail=UIC60, bays=100, elements_per_bay=2)
    print(f"track: 2 rails x {track.length:g} m, {track.bays} bays of {track.sleeper_spacing} m, "
          f"{track.elements_per_bay} {track.beam} elements per bay")

    o = CosimOptions(duration=args.duration, step=1e-3, fmu_parameters=PARAMS, track=track,
                     start_position=15.0, window_margin=20.0, jacobian_every=args.jacobian_every,
                     jacobian_method=args.jacobian_method)
    runs = []
    probe_costs = []
    for k in range(max(args.repeat, 1)):
        r = run_track_cosim(args.fmu, o)
        runs.append(figures(r))
        probe_costs.append(r.cpu_probe / max(r.jacobian_probes, 1))
        f = runs[-1]
        print(f"  run {k + 1}: {f['wall_total']:.2f} s wall, {f['cpu_total']:.2f} s CPU; set-up CPU "
              f"FMU {f['setup_fmu']:.2f} s, track {f['setup_track']:.2f} s; per step CPU FMU "
              f"{f['cpu_fmu']:.0f} us, track {f['cpu_track']:.0f} us, master {f['cpu_master']:.0f} us",
              flush=True)
    b = best(runs)
    sim = r.simulated
    step_cpu = b["cpu_fmu"] + b["cpu_track"] + b["cpu_master"]
    print(f"coupled {sim:g} s at 1 ms ({r.window_shifts} window shifts), minimum of {len(runs)} runs:")
    print(f"  whole run incl. set-up: {b['wall_total']:.2f} s wall (real-time factor "
          f"{sim / b['wall_total']:.2f}), {b['cpu_total']:.2f} s CPU (CPU real-time factor "
          f"{sim / b['cpu_total']:.2f})")
    print(f"  set-up (CPU): FMU {b['setup_fmu']:.2f} s, track {b['setup_track']:.2f} s, master "
          f"{b['setup_master']:.2f} s")
    print(f"  stepping (CPU per 1 ms step): {step_cpu:.0f} us, real-time factor "
          f"{1e3 / step_cpu:.2f}")
    for name, key in (("FMU", "fmu"), ("OpenSees track", "track"), ("master loop", "master")):
        print(f"    {name:15s} {b['cpu_' + key]:6.0f} us ({100 * b['cpu_' + key] / step_cpu:4.1f} %; "
              f"wall {b['wall_' + key]:.0f} us)")
    print(f"  contact-Jacobian probes ({args.jacobian_method}, every {args.jacobian_every} steps, "
          f"{r.jacobian_probes} per run): {1e6 * min(probe_costs):.0f} us CPU per probe, "
          f"{1e6 * min(probe_costs) * r.jacobian_probes / r.steps:.0f} us per step (in the FMU's share)")

    rigid_runs = []
    for _ in range(max(args.repeat, 1)):
        rigid = run_track_cosim(args.fmu, CosimOptions(duration=min(args.duration, 2.0), step=1e-3,
                                                       fmu_parameters=PARAMS, rigid_track=True))
        rigid_runs.append(figures(rigid))
    rb = best(rigid_runs)
    print(f"rigid track (FMU alone, same master): FMU {rb['cpu_fmu']:.0f} us/step CPU "
          f"(wall {rb['wall_fmu']:.0f} us), master loop {rb['cpu_master']:.0f} us/step CPU")

    n = 200
    ops_track = make_track("opensees", track, 1e-3)
    t0 = time.perf_counter()
    c0 = time.process_time()
    for k in range(n):
        x = 15.0 + SPEED * (k + 1) * 1e-3
        ops_track.step([(0, x, RailLoad(vertical=-1e5)), (1, x, RailLoad(vertical=-1e5))])
        ops_track.rail_state(0, x)
        ops_track.rail_state(1, x)
    per = (time.perf_counter() - t0) / n
    per_cpu = (time.process_time() - c0) / n
    print(f"OpenSees ops.analyze engine (same model, no contact springs): {1e6 * per_cpu:.0f} us/step "
          f"CPU (wall {1e6 * per:.0f} us)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
