"""What compiling the core for a generic x86-64 CPU costs in speed: the same
runs with numba's code for this machine's CPU and for NUMBA_CPU_NAME=generic
(the target of the numba cache the FMU ships for any x86-64 machine,
fmu_wheelset/fmu/cache.py), each in a child process with a cache folder of its
own. The first child of each target compiles (its CPU time is printed); then
the two targets' children run from their caches in turns (ROUNDS rounds, so
that a change of the machine's load hits both alike), each child timing every
case best of 3.

Runs (the solver's current defaults: the Rosenbrock integrator, Polach,
multipoint): the default wheelset (3 mm initial lateral offset) and the Ren &
Jin curve (solver.scenarios 'ren-jin-r400-100'), 2 s of 1 ms advances on the
core (WheelsetModel.advance_vector). CPU time per 1 ms step; the ratio is
generic / this CPU, per round, then its median.

usage: python benchmarks/bench_numba_target.py [--rounds 4]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json
import time
t0 = time.process_time()
import solver.model as w
from solver.scenarios import load_scenario
def model(params):
    m = w.WheelsetModel(params)
    m.initialize()
    return m
cases = {"defaults": w.WheelsetParameters(initial_lateral=0.003),
         "ren-jin-r400-100": load_scenario("ren-jin-r400-100").params}
for name, params in cases.items():
    m = model(params)
    m.advance_vector(1e-3, m.arrays.inputs.copy())
result = {"first": time.process_time() - t0}
for name, params in cases.items():
    best = 1e9
    for _ in range(3):
        m = model(params)
        u = m.arrays.inputs.copy()
        t = time.process_time()
        for k in range(2000):
            m.advance_vector(1e-3, u)
        best = min(best, time.process_time() - t)
    result[name] = best / 2000 * 1e6
from numba.core.registry import cpu_target
result["target"] = cpu_target.target_context.codegen().magic_tuple()[1]
print(json.dumps(result))
"""

TARGETS = (("this CPU", {}), ("generic x86-64", {"NUMBA_CPU_NAME": "generic"}))
CASES = ("defaults", "ren-jin-r400-100")


def child(root: str, cache: str, extra: dict) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, **extra}
    env.pop("NUMBA_CPU_FEATURES", None)
    if "NUMBA_CPU_NAME" not in extra:
        env.pop("NUMBA_CPU_NAME", None)
    proc = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=root, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args(argv)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory(prefix="bench_numba_target_") as tmp:
        caches = {label: os.path.join(tmp, str(i)) for i, (label, _) in enumerate(TARGETS)}
        for label, extra in TARGETS:
            first = child(root, caches[label], extra)
            print(f"{label} ({first['target']}): import + first steps with an empty cache "
                  f"(compiling) {first['first']:.1f} s CPU")
        rounds = []
        for _ in range(max(1, args.rounds)):
            rounds.append({label: child(root, caches[label], extra) for label, extra in TARGETS})
    print(f"us CPU per 1 ms step, from the caches, {len(rounds)} rounds (load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores):")
    for case in CASES:
        cells = []
        for label, _ in TARGETS:
            values = [r[label][case] for r in rounds]
            cells.append(f"{label} {min(values):.1f}-{max(values):.1f} (median {statistics.median(values):.1f})")
        ratios = [r[TARGETS[1][0]][case] / r[TARGETS[0][0]][case] for r in rounds]
        print(f"  {case}: {'; '.join(cells)}; generic / this CPU: median {statistics.median(ratios):.3f} "
              f"(rounds {', '.join(f'{x:.3f}' for x in ratios)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
