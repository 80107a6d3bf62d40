"""Benchmark of solver/contact/normal/: numba kernels against their NumPy/SciPy references.

Prints measured figures only (no pass/fail on time). Targets: Hertz ellipse +
force <= 2 us per call (numba), exact normal solver on ~2000 elements <= 50 ms.
Run: .venv/bin/python benchmarks/bench_normal.py
"""
from __future__ import annotations

import math
import os
import sys
import time

import numpy as np
from numba import njit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from solver.contact.normal.hertz import (
    hertz_ellipse, hertz_ellipse_kernel, hertz_force_from_penetration,
    hertz_from_penetration_kernel,
)  # noqa: E402
from solver.contact.normal.load_sharing import (
    merged_patch_forces, merged_patch_forces_kernel,
)  # noqa: E402
from solver.contact.normal.boundary_element import exact_normal_contact  # noqa: E402
from solver.contact.normal.kik_piotrowski import (
    kik_piotrowski, kik_piotrowski_force_kernel,
)  # noqa: E402

YOUNG, POISSON = 210e9, 0.3


def best_time(function, repeats, inner=1):
    """Best wall time of one call (s) over `repeats` rounds of `inner` calls."""
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            function()
        best = min(best, (time.perf_counter() - start) / inner)
    return best


@njit(cache=True)
def _hertz_loop(penetrations, A, B, young, poisson):
    total = 0.0
    for i in range(penetrations.shape[0]):
        force, a, b, flag = hertz_from_penetration_kernel(penetrations[i], A[i], B[i], young, poisson)
        total += force + a + b
    return total


def report(name, numba_seconds, reference_seconds, unit, fast_label="numba"):
    scale = 1e6 if unit == "us" else 1e3
    print(f"{name:<44s} {fast_label:>5s} {numba_seconds * scale:10.3f} {unit}   reference {reference_seconds * scale:10.3f} {unit}"
          f"   speed-up {reference_seconds / numba_seconds:8.1f}x")


def bench_hertz():
    A, B, delta = 1.087, 1.667, 1e-4  # S1002-like tread on a 300 mm crown
    hertz_from_penetration_kernel(delta, A, B, YOUNG, POISSON)
    hertz_ellipse_kernel(8e4, A, B, YOUNG, POISSON)
    t_kernel = best_time(lambda: hertz_from_penetration_kernel(delta, A, B, YOUNG, POISSON), 5, 20000)
    t_reference = best_time(lambda: hertz_force_from_penetration(delta, A, B, YOUNG, POISSON), 3, 300)
    report("Hertz force from penetration (call)", t_kernel, t_reference, "us")
    t_kernel = best_time(lambda: hertz_ellipse_kernel(8e4, A, B, YOUNG, POISSON), 5, 20000)
    t_reference = best_time(lambda: hertz_ellipse(A, B, 8e4, YOUNG, POISSON), 3, 300)
    report("Hertz ellipse from force (call)", t_kernel, t_reference, "us")
    rng = np.random.default_rng(1)
    count = 20000
    ratios = 10.0 ** rng.uniform(-3, 3, count)
    penetrations = rng.uniform(1e-5, 2e-4, count)
    curv_a = np.full(count, 1.1)
    curv_b = curv_a * ratios
    _hertz_loop(penetrations[:10], curv_a[:10], curv_b[:10], YOUNG, POISSON)
    t_loop = best_time(lambda: _hertz_loop(penetrations, curv_a, curv_b, YOUNG, POISSON), 5) / count
    print(f"{'Hertz from penetration inside a numba loop':<44s} numba {t_loop * 1e6:10.3f} us per point"
          f" (B/A 1e-3..1e3)")


def bench_multipoint():
    # three points of one wheel joined by penetrating saddles (the merged patch)
    points = 3
    depth = np.array([9e-5, 6e-5, 8e-5])
    saddle = np.array([5e-5, 4e-5, -1.0])
    stiffness = np.array([8.2e10, 1.6e11, 4.1e10])
    force, shared = np.zeros(points), np.zeros(points)
    merged_patch_forces_kernel(depth, saddle, stiffness, points, force, shared)
    t_kernel = best_time(lambda: merged_patch_forces_kernel(
        depth, saddle, stiffness, points, force, shared), 5, 5000)
    t_reference = best_time(lambda: merged_patch_forces(depth, saddle[:2], stiffness), 3, 100)
    report("merged-patch normal forces, 3 points (call)", t_kernel, t_reference, "us")


def bench_kik_piotrowski():
    A, B, delta = 1.087, 1.667, 1e-4
    half = math.sqrt(delta / B)
    y = np.linspace(-1.5 * half, 1.5 * half, 201)
    gap = B * y ** 2
    radius = np.full(y.size, 0.5 / A)
    kik_piotrowski_force_kernel(y, gap, radius, delta, YOUNG, POISSON, 0.55, 32)
    t_kernel = best_time(lambda: kik_piotrowski_force_kernel(y, gap, radius, delta, YOUNG, POISSON, 0.55, 32), 5, 200)
    t_reference = best_time(lambda: kik_piotrowski(y, gap, radius, delta, YOUNG, POISSON), 3, 50)
    report("Kik-Piotrowski force, 201 strips x 32 cells", t_kernel, t_reference, "us")


def bench_exact():
    A, B, load = 1.087, 1.667, 8e4
    hertz = hertz_ellipse(A, B, load, YOUNG, POISSON)
    nx = ny = 45  # 2025 elements
    x = np.linspace(-1.3 * hertz.a, 1.3 * hertz.a, nx)
    y = np.linspace(-1.3 * hertz.b, 1.3 * hertz.b, ny)
    gap = A * x[:, None] ** 2 + B * y[None, :] ** 2
    dx, dy = x[1] - x[0], y[1] - y[0]
    runs = {}
    for method in ("numba", "numpy", "fft"):
        exact_normal_contact(gap[:8, :8], dx, dy, load / 20, YOUNG, POISSON, method=method)  # compile
        result = exact_normal_contact(gap, dx, dy, load, YOUNG, POISSON, method=method)
        repeats = 2 if method == "numpy" else 5
        runs[method] = (best_time(lambda m=method: exact_normal_contact(gap, dx, dy, load, YOUNG, POISSON, method=m),
                                  repeats), result)
    label = f"exact BEM {nx}x{ny}={nx * ny} elements"
    report(label + " (dense)", runs["numba"][0], runs["numpy"][0], "ms")
    print("  (reference: NumPy loop with the dense N x N matrix; fft: NumPy loop, scipy.fft convolution)")
    report(label + " (FFT vs dense)", runs["fft"][0], runs["numpy"][0], "ms", fast_label="fft")
    result = runs["numba"][1]
    print(f"  {result.iterations} CG iterations, {result.area / (nx * ny * dx * dy):.0%} of the grid in contact;"
          f" peak {result.peak_pressure / 1e6:.0f} MPa (Hertz {hertz.p0 / 1e6:.0f}), area {result.area * 1e6:.1f}"
          f" mm^2 (Hertz {hertz.area * 1e6:.1f})")


def main():
    print("solver/contact/normal/ benchmark (best of several runs; numba compile excluded)")
    bench_hertz()
    bench_multipoint()
    bench_kik_piotrowski()
    bench_exact()
    return 0


if __name__ == "__main__":
    sys.exit(main())
