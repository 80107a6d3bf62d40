"""Real-time factor of the wheelset core.

Runs the Ren & Jin R = 400 m, 100 km/h scenario (LMA-worn/CHN60, online
multipoint geometry, Polach creep, RK4) for its full 12 s and prints the
simulated seconds per wall second, the internal step and the number of
right-hand-side evaluations, plus the cost of one RHS evaluation and of one
contact-geometry evaluation inside numba. Target: >= 20x real time.
"""
import time

import numpy as np
from numba import njit

from solver.contact.geometry.search import wheelset_contact_kernel
from solver.contact.geometry.setup import WheelsetPose
from solver.dynamics.rhs import StepInputs, TrackPoint, wheelset_rhs
from solver.scenarios import load_scenario, simulate
from solver.model.wheelset import WheelsetModel


@njit
def _rhs_loop(n, state, model, zero, contact, d):
    track = TrackPoint(1.0 / 400.0, 0.0, -0.08)
    inputs = StepInputs(zero, zero, zero, zero, 0.0)
    for _ in range(n):
        wheelset_rhs(state, track, model, inputs, contact, d)


@njit
def _geometry_loop(n, tables, pose, zero, buffers):
    for _ in range(n):
        wheelset_contact_kernel(tables, pose, zero, -1.0, buffers)


def main():
    scenario = load_scenario("ren-jin-r400-100")
    simulate(load_scenario("ren-jin-r400-100", duration=0.05))      # compile / load the cache
    best = None
    for _ in range(3):
        result = simulate(scenario)
        if best is None or result.wall_time < best.wall_time:
            best = result
    simulated = best.columns["time"][-1]
    print(f"scenario ren-jin-r400-100: {simulated:.1f} s simulated, internal step "
          f"{scenario.params.internal_step * 1e3:g} ms (RK4), output every "
          f"{scenario.output_interval * 1e3:g} ms")
    print(f"  with the time histories recorded (simulate): wall time {best.wall_time:.2f} s, "
          f"real-time factor {simulated / best.wall_time:.1f}x, {best.rhs_evaluations} RHS evaluations "
          f"({best.wall_time / best.rhs_evaluations * 1e6:.1f} us per RHS incl. Python overhead)")
    best_core = None
    for _ in range(3):
        core = WheelsetModel(scenario.params)
        core.initialize()
        n_out = int(round(scenario.duration / scenario.output_interval))
        t0 = time.perf_counter()
        for _ in range(n_out):
            core.advance(scenario.output_interval)
        wall = time.perf_counter() - t0
        best_core = wall if best_core is None else min(best_core, wall)
    print(f"  core alone (advance only, no recording): {best_core:.2f} s wall, real-time factor "
          f"{scenario.duration / best_core:.1f}x (target >= 20x)")
    model = WheelsetModel(scenario.params)
    model.initialize()
    for _ in range(900):
        model.advance(0.01)
    su = model.setup
    zero = np.zeros((2, 3))
    state = model.state.copy()
    args = (state, model.model, zero, model.step_contact, model.arrays.deriv)
    _rhs_loop(2, *args)
    gargs = (su.tables, WheelsetPose(state[1], state[2], state[3], state[4]), zero, model.arrays.search)
    _geometry_loop(2, *gargs)
    n = 20000
    t0 = time.perf_counter()
    _rhs_loop(n, *args)
    t1 = time.perf_counter()
    _geometry_loop(n, *gargs)
    t2 = time.perf_counter()
    print(f"  in the curve (outer wheel {int(model.arrays.search.counts[1])} points): one RHS {(t1 - t0) / n * 1e6:.1f} us, "
          f"of which contact geometry {(t2 - t1) / n * 1e6:.1f} us")


if __name__ == "__main__":
    main()
