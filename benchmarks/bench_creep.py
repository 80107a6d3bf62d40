"""Benchmark of the creep-force kernels (solver/contact/creep/).

Prints microseconds per call for
  - Polach with spin (numba kernel; target <= 2 us),
  - FASTSIM on a 20 x 20 Hertz grid (numba kernel; target <= 50 us),
  - FaStrip on a 20 x 20 Hertz grid (numba kernel; no target: a FASTSIM pass
    plus the strip theory, so about twice FASTSIM),
each against its plain NumPy/Python reference, with the speed-up. The numba
figure is measured inside a jitted loop (the cost of the kernel as the
wheelset integrator sees it); the cost of one call from Python, dispatch
included, is printed as well. Measured figures only: no pass/fail on time.

Run: .venv/bin/python benchmarks/bench_creep.py
"""
from __future__ import annotations


import numpy as np
from numba import njit

from solver.contact.creep.inputs import CreepPatch
from solver.contact.creep.forces import (
    creep_forces_kernel, creep_forces_reference, kernel_parameters,
)
from solver.contact.creep.saturated import POLACH_2005_DRY
from benchmarks.common import best_time

A, B = 6.0e-3, 5.0e-3
N = 100e3
MU = 0.4
G = 80e9
NU = 0.28
V = 20.0


@njit(cache=True)
def _loop(model_id, xi, eta, phi, options):
    total = 0.0
    for k in range(xi.size):
        fx, fy, mz = creep_forces_kernel(
            model_id, CreepPatch(xi[k], eta[k], phi[k], 6.0e-3, 5.0e-3, 100e3, 0.4, 80e9, 0.28, 20.0),
            options)
        total += fx + fy + mz
    return total


def _inputs(count, seed=0):
    rng = np.random.default_rng(seed)
    xi = rng.normal(0.0, 2e-3, count)
    eta = rng.normal(0.0, 2e-3, count)
    phi = rng.normal(0.0, 0.5, count)
    return xi, eta, phi


def bench(name, model, options, n_numba, n_reference):
    model_id, vector = kernel_parameters(model, options)
    xi, eta, phi = _inputs(n_numba)
    _loop(model_id, xi[:10], eta[:10], phi[:10], vector)          # compile / load cache
    creep_forces_kernel(model_id, CreepPatch(1e-3, 1e-3, 0.1, A, B, N, MU, G, NU, V), vector)
    t_numba = best_time(lambda: _loop(model_id, xi, eta, phi, vector)) / n_numba

    m = min(n_numba, 20000)

    def from_python():
        for k in range(m):
            creep_forces_kernel(model_id, CreepPatch(xi[k], eta[k], phi[k], A, B, N, MU, G, NU, V),
                                vector)
    t_dispatch = best_time(from_python, repeats=3) / m

    def reference():
        for k in range(n_reference):
            creep_forces_reference(model_id, CreepPatch(float(xi[k]), float(eta[k]), float(phi[k]),
                                                        A, B, N, MU, G, NU, V), vector)
    t_ref = best_time(reference, repeats=3) / n_reference
    print(f"{name:38s} numba {t_numba * 1e6:8.3f} us/call (jitted loop), "
          f"{t_dispatch * 1e6:7.3f} us/call from Python | "
          f"NumPy reference {t_ref * 1e6:9.2f} us/call | speed-up {t_ref / t_numba:7.0f}x")


def main():
    print(f"contact a = {A * 1e3} mm, b = {B * 1e3} mm, N = {N / 1e3} kN, mu = {MU}, "
          f"G = {G / 1e9} GPa, nu = {NU}, V = {V} m/s; random creepages with spin")
    bench("Polach 1999 with spin", "polach", {}, 200_000, 20_000)
    bench("Polach 2005 (dry set) with spin", "polach", POLACH_2005_DRY, 200_000, 20_000)
    bench("FASTSIM 20x20 Hertz grid", "fastsim", {"nx": 20, "ny": 20}, 20_000, 300)
    bench("FaStrip 20x20 Hertz grid", "fastrip", {"nx": 20, "ny": 20}, 20_000, 100)


if __name__ == "__main__":
    main()
