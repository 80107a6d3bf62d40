"""Benchmark of the contact-geometry kernel (solver/contact/geometry/).

One full geometry evaluation = both wheels, multipoint detection, 0.1 mm
profile step, a yawed and rolled pose, S1002 / UIC60 1:40 (gauge 1435,
back-to-back 1360). Prints microseconds per pose for
  - the numba kernel `wheelset_contact_kernel` called from Python,
  - the same kernel inside a jitted loop (the cost the integrator sees),
  - the NumPy reference `wheel_distance_minima_reference` for both wheels,
and the speed-ups. Targets: <= 20 us per pose, >= 30x. Measured figures
only: no pass/fail on time.

Run: .venv/bin/python benchmarks/bench_geometry.py
"""
from __future__ import annotations

import os
import sys

import numpy as np
from numba import njit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from solver.contact.geometry.setup import ContactSetup, WheelsetPose
from solver.contact.geometry.points import static_contact
from solver.contact.geometry.reference import wheel_distance_minima_reference
from solver.contact.geometry.search import wheelset_contact_kernel
from benchmarks.common import best_time  # noqa: E402

EPSILON = 1e-4


@njit(cache=True)
def _loop(tables, ys, z, roll, yaw, motion, epsilon, buffers):
    total = 0.0
    out, counts = buffers.points, buffers.counts
    for i in range(ys.size):
        wheelset_contact_kernel(tables, WheelsetPose(ys[i], z, roll, yaw), motion, epsilon, buffers)
        total += out[0, 0, 5] + out[1, 0, 5] + counts[0] + counts[1]
    return total


def main() -> None:
    setup = ContactSetup.from_names("S1002", "UIC60", step=1e-4, inclination_ratio=40,
                                    gauge=1.435, back_to_back=1.360, nominal_radius=0.46)
    yaw = 5e-3
    sc = static_contact(setup, 0.004, yaw=yaw)
    z, roll = sc.z - 2e-5, sc.roll          # slight penetration, rolled pose
    tables = setup.tables
    wheel, rail = tables.wheel, tables.rail
    motion = np.zeros((2, 3))
    buffers = setup.buffers()
    counts = buffers.counts
    n_loop = 20000
    ys = 0.004 + 1e-5 * np.sin(np.arange(n_loop))
    _loop(tables, ys[:10], z, roll, yaw, motion, EPSILON, buffers)  # compile

    t_loop = best_time(lambda: _loop(tables, ys, z, roll, yaw, motion, EPSILON, buffers)) / n_loop

    n_call = 5000

    def calls():
        for i in range(n_call):
            wheelset_contact_kernel(tables, WheelsetPose(float(ys[i]), z, roll, yaw), motion,
                                    EPSILON, buffers)

    t_call = best_time(calls) / n_call

    n_ref = 100

    def reference():
        for i in range(n_ref):
            y = float(ys[i])
            wheel_distance_minima_reference(tables, WheelsetPose(y, z, roll, yaw), epsilon=EPSILON)
            wheel_distance_minima_reference(tables, WheelsetPose(-y, z, -roll, -yaw), epsilon=EPSILON)

    t_ref = best_time(reference, repeats=3) / n_ref
    print(f"S1002/UIC60 1:40, wheel grid {wheel.shape[0]} points (0.1 mm), rail grid {rail.shape[0]}, "
          f"y = 4 mm, yaw = {yaw * 1e3:g} mrad, roll = {roll * 1e3:.3f} mrad, points {counts.tolist()}")
    print(f"numba, jitted loop      : {t_loop * 1e6:8.2f} us per pose (target <= 20 us)")
    print(f"numba, call from Python : {t_call * 1e6:8.2f} us per pose")
    print(f"NumPy reference         : {t_ref * 1e6:8.2f} us per pose")
    print(f"speed-up (jitted loop)  : {t_ref / t_loop:8.1f}x (target >= 30x)")
    print(f"speed-up (Python call)  : {t_ref / t_call:8.1f}x")


if __name__ == "__main__":
    main()
