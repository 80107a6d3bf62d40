"""Accuracy and speed of the integrators on the convergence cases, in one run.

    PYTHONPATH=. python benchmarks/bench_convergence.py [--fmu dist/Wheelset.fmu] [--repeats 3]

1. The convergence table: for each integrator configuration, on the six cases
   of fmu_wheelset/validation/reference_data/convergence/make_references.py (a loaded straight track, b Ren
   & Jin R400 with its flange-root impact, c hard flange contact, d-f releases of 4 and 6 mm
   at 40 m/s on S1002/UIC60, LMA/CHN60 and the LMA from a file), 1 ms
   communication steps: the largest |Q - Q_converged| (in % of the static wheel
   load; the defaults must stay within 2 %) and |y - y_converged| (um; within
   1 um), and the RHS evaluations of case b. The converged runs are the stored
   references (RK45 at 1e-10, agreeing with RK4 at 10 us).
2. The core's real-time factor on the Ren & Jin scenario (12 s) with the
   defaults, CPU time, best of --repeats: through fast_step.core_step (the
   numba step without Python per step) and through WheelsetModel.advance, in
   1 ms and 10 ms communication steps (target: >= 150x).
3. With --fmu: the plain C host of tests/c_host with the fast doStep, 1 ms
   communication steps, every output read after every step, the FMU's defaults
   on the Ren & Jin case (target: >= 100x); from benchmarks/bench_fmu.py.
Measured figures only, no pass/fail. The machine may be shared: CPU time.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from solver.model import fast_step  # noqa: E402
from solver.scenarios import load_scenario  # noqa: E402
from solver.model.wheelset import WheelsetModel  # noqa: E402
from fmu_wheelset.validation.convergence import CASES, case, run  # noqa: E402

DATA = ROOT / "fmu_wheelset" / "validation" / "reference_data" / "convergence"
CONFIGURATIONS = (
    ("Rosenbrock 1e-5, <= 1 ms (default)", {}),
    ("Rosenbrock 1e-4, <= 1 ms", {"tolerance": 1e-4}),
    ("Rosenbrock 1e-5, <= 10 ms", {"internal_step": 1e-2}),
    ("RK45 1e-5, <= 1 ms", {"integrator": "rk45", "tolerance": 1e-5}),
    ("RK23 1e-6, <= 1 ms", {"integrator": "rk23", "tolerance": 1e-6}),
    ("RK4 1 ms", {"integrator": "rk4", "internal_step": 1e-3}),
    ("RK4 0.25 ms", {"integrator": "rk4", "internal_step": 2.5e-4}),
    ("RK4 0.1 ms", {"integrator": "rk4", "internal_step": 1e-4}),
)


def convergence_table():
    meta = json.loads((DATA / "references.json").read_text())
    refs = {name: np.load(DATA / f"case_{name}.npz")["y_q"].astype(float) for name in CASES}
    print("1. largest difference to the converged run, 1 ms communication steps "
          "(Q in % of the static wheel load; y in um)")
    print(f"   {'':38s}" + "".join(f"{'case ' + n + ' Q':>11s}{'y':>8s}" for n in CASES)
          + f"{'RHS (b)':>10s}")
    for label, overrides in CONFIGURATIONS:
        row = f"   {label:38s}"
        rhs = 0
        for name in CASES:
            got = run(name, **overrides)
            ref = refs[name]
            dq = np.abs(got[:, 1:] - ref[:, 1:]).max() / meta[name]["static_wheel_load_N"]
            dy = np.abs(got[:, 0] - ref[:, 0]).max()
            row += f"{dq * 100:10.3f}%{dy * 1e6:8.3f}"
            if name == "b":
                params = dataclasses.replace(case("b")[0], **overrides)
                model = WheelsetModel(params)
                model.initialize()
                for _ in range(12000):
                    model.advance(1e-3)
                rhs = model.rhs_evaluations
        print(row + f"{rhs:10d}", flush=True)
    for name in CASES:
        print(f"   (converged runs: RK45 1e-10 against RK4 10 us, case {name}: "
              f"{meta[name]['rk45_vs_rk4_max_dQ_N'] / meta[name]['static_wheel_load_N'] * 100:.3f} %, "
              f"{meta[name]['rk45_vs_rk4_max_dy_m'] * 1e6:.3f} um)")


def core_speed(repeats):
    scenario = load_scenario("ren-jin-r400-100")
    print("2. core on Ren & Jin (12 s), defaults, CPU time, best of", repeats)
    per_step = math.nan
    for host in (1e-3, 1e-2):
        steps = int(round(scenario.duration / host))
        best_core = best_advance = math.inf
        for _ in range(repeats):
            model = WheelsetModel(scenario.params)
            model.initialize()
            u = model.arrays.inputs.copy()                                                      
            block = model.core_step_block()                                              
            speed, passed = float(scenario.params.speed), model.flange_passed       
            t0 = time.process_time()
            for _ in range(steps):
                fast_step.core_step(host, u, speed, passed, *block)
            best_core = min(best_core, time.process_time() - t0)
            model = WheelsetModel(scenario.params)
            model.initialize()
            t0 = time.process_time()
            for _ in range(steps):
                model.advance(host)
            best_advance = min(best_advance, time.process_time() - t0)
        print(f"   {host * 1e3:4.0f} ms steps: core_step {scenario.duration / best_core:7.1f}x, "
              f"WheelsetModel.advance {scenario.duration / best_advance:7.1f}x real time", flush=True)
        if host == 1e-3:
            per_step = best_core / steps          # s of CPU per 1 ms step of the core
    return per_step


def c_host_speed(fmu, duration, core_per_step):
    from benchmarks import bench_fmu
    print("3. plain C host, fast doStep, 1 ms communication steps, defaults, Ren & Jin "
          "(against the core's own step above)")
    with tempfile.TemporaryDirectory() as tmp:
        core_total = core_per_step * round(duration / 1e-3)      # the core's CPU for the same run
        bench_fmu.c_host_section(fmu, duration, core_total, core_total, tmp)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fmu", help="the built FMU, for the C host figure")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--duration", type=float, default=10.0, help="C host run (s)")
    args = parser.parse_args(argv)
    convergence_table()
    per_step = core_speed(args.repeats)
    if args.fmu:
        c_host_speed(args.fmu, args.duration, per_step)
    return 0


if __name__ == "__main__":
    sys.exit(main())
