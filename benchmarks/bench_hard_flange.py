"""How the flange impacts of the hard-flange case end, over loads.

    python benchmarks/bench_hard_flange.py [--loads 21] [--span 500]

The case of tests/test_adaptive_integrator.py: a wheelset on the built-in
suspension (100 kN static load per axle box) pushed into the left flange by a
lateral axle-box force applied as a step at t = 0, 2 s. Its end state is not
a smooth function of the load: the multipoint contact force jumps where the
deepest point of a patch moves from one minimum of the distance function to
another (flange root to flange), so runs that differ by a few newtons of load
or by their integration error settle on the flange, keep bouncing or derail.
This benchmark counts, for the fixed-step RK4 at two steps and for the
adaptive integrators at their default settings, how many of `--loads` loads
spread over 50 kN +- `--span` N per box end in each state, and their mean RHS
count. A contact force that does not jump would make every converged run
settle; this is the figure that would show it.

States (the last 0.5 s of y): settled (std < 1 um), bouncing (std >= 1 um),
derailed (a host step reported a derailment), failed (any other discard).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.test_adaptive_integrator import _hard_flange_run  # noqa: E402  (the test's case, not a copy)

RUNS = (("RK4 25 us", "rk4", 2.5e-5, {}),
        ("RK4 6.25 us", "rk4", 6.25e-6, {}),
        ("RK4 1 ms (default)", "rk4", 1e-3, {}),
        ("RK23 1e-6, <= 1 ms", "rk23", 1e-3, {}),
        ("RK45 1e-6, <= 1 ms", "rk45", 1e-3, {}),
        ("Rosenbrock 1e-4, <= 1 ms", "rosenbrock", 1e-3, {"tolerance": 1e-4}))


def end_state(y, result) -> str:
    if result.status != "ok":
        return "derailed" if result.reason == "derailment" else "failed"
    return "settled" if y[1500:].std() < 1e-6 else "bouncing"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=21)
    parser.add_argument("--span", type=float, default=500.0, help="N per axle box either side of 50 kN")
    args = parser.parse_args()
    if args.loads < 1 or not 0.0 <= args.span < 50e3:
        parser.error("--loads must be >= 1 and --span within [0, 50 kN)")
    loads = 50e3 + np.linspace(-args.span, args.span, args.loads)
    print(f"hard flange, step load: {args.loads} loads from {loads[0] / 1e3:.3f} to "
          f"{loads[-1] / 1e3:.3f} kN per axle box, 2 s each")
    for label, integrator, step, params in RUNS:
        counts = {"settled": 0, "bouncing": 0, "derailed": 0, "failed": 0}
        rhs = []
        started = time.process_time()
        for lateral in loads:
            y, model, result = _hard_flange_run(integrator, step, lateral=float(lateral), **params)
            counts[end_state(y, result)] += 1
            rhs.append(model.rhs_evaluations)
        cpu = time.process_time() - started
        print(f"  {label:26s} settled {counts['settled']:3d}, bouncing {counts['bouncing']:3d}, "
              f"derailed {counts['derailed']:3d}, failed {counts['failed']:3d}; "
              f"settled share {counts['settled'] / len(loads):.2f}; mean {np.mean(rhs):9.0f} RHS; "
              f"CPU {cpu:.1f} s")


if __name__ == "__main__":
    main()
