"""What compiling the core for a generic x86-64 CPU costs in speed: the same
runs with numba's code for this machine's CPU and for NUMBA_CPU_NAME=generic
(the target a numba cache shipped for any x86-64 machine would need), each in
a child process with a cache folder of its own (so the first run compiles:
that time is printed too, then the run is repeated from the cache).

Runs: the default wheelset (RK4, Polach, multipoint) and the Ren & Jin curve
(solver.scenarios 'ren-jin-r400-100'), 2 s of 1 ms steps on the core
(WheelsetModel.advance_vector). CPU time, best of 3.

usage: python benchmarks/bench_numba_target.py
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

CHILD = r"""
import time
import numpy as np
t0 = time.process_time()
import solver.wheelset as w
from solver.scenarios import load_scenario
def model(params):
    m = w.WheelsetModel(params)
    m.initialize()
    return m
cases = {"defaults": w.WheelsetParameters(initial_lateral=0.003),
         "ren-jin-r400-100": load_scenario("ren-jin-r400-100").params}
for name, params in cases.items():
    m = model(params)
    m.advance_vector(1e-3, m._u.copy())
print(f"import and first steps (compiling when the cache is empty): {time.process_time() - t0:.1f} s CPU")
for name, params in cases.items():
    best = 1e9
    for _ in range(3):
        m = model(params)
        u = m._u.copy()
        t = time.process_time()
        for k in range(2000):
            m.advance_vector(1e-3, u)
        best = min(best, time.process_time() - t)
    print(f"{name}: {best / 2000 * 1e6:.1f} us CPU per 1 ms step")
from numba.core.registry import cpu_target
print("numba target:", cpu_target.target_context.codegen().magic_tuple()[1])
"""


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for label, extra in (("this machine's CPU", {}), ("generic x86-64", {"NUMBA_CPU_NAME": "generic"})):
        with tempfile.TemporaryDirectory(prefix="bench_numba_target_") as cache:
            env = {**os.environ, "NUMBA_CACHE_DIR": cache, **extra}
            env.pop("NUMBA_CPU_FEATURES", None)
            print(f"== {label}")
            for attempt in ("empty cache", "from the cache"):
                print(f"-- {attempt}")
                proc = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=root,
                                      capture_output=True, text=True)
                print(proc.stdout.strip() or proc.stderr[-2000:])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
