"""Where one right-hand side of the wheelset core spends its time.

At the Ren & Jin R400 100 km/h curve state (t = 9 s, outer wheel in two-point
flange contact) this times, each in its own numba loop (CPU time, min of
REPEATS): the online full contact search of both wheels, the online tracked
search (the minima of the last full scan re-located, as the dynamics calls it),
the table search, the contact update (re-location of the points), Hertz and the
creep law for the points of that state, and the whole RHS with the tracked
search / the table / the update. The rest of an RHS (contact frames,
creepages, assembly) is the difference.
Printed figures only, no pass/fail.

Run: PYTHONPATH=. python benchmarks/profile_rhs.py [repeats]
"""
import sys
import time

import numpy as np
from numba import njit, typed

from solver.contact.geometry.search import wheelset_contact_kernel
from solver.contact.geometry.setup import WheelsetPose
from solver.contact.geometry.tracked import wheelset_contact_tracked
from solver.contact.geometry.update import wheelset_contact_update
from solver.layout import P_GAP, P_RADIUS, P_RAIL_SLOPE, P_RAIL_Z2, P_WHEEL_F2, P_WHEEL_SLOPE
from solver.contact.geometry import table as geometry_table
from solver.contact.creep.forces import creep_forces_kernel
from solver.contact.creep.inputs import CreepPatch
from solver.layout import (
    C_A, C_B, C_ETA, C_NORMAL, C_PENETRATION, C_SPIN, C_XI, M_CREEP_OPTIONS, N_CREEP_OPTIONS,
    M_CREEP_MODEL, M_FRICTION, M_POISSON, M_SPEED, M_YOUNG, S_ROLL, S_Y, S_YAW, S_Z,
)
from solver.dynamics.rhs import StepContact, StepInputs, TrackPoint, wheelset_rhs
from solver.contact.normal.hertz import (
    hertz_from_penetration_fit_kernel, hertz_from_penetration_kernel,
)
from solver.scenarios import load_scenario
from solver.model.wheelset import WheelsetModel

SCENARIO = "ren-jin-r400-100"


@njit
def _full_loop(n, tables, pose, motion, buffers):
    for _ in range(n):
        wheelset_contact_kernel(tables, pose, motion, -1.0, buffers)


@njit
def _tracked_loop(n, tables, pose, motion, buffers):
    for _ in range(n):
        wheelset_contact_tracked(tables, pose, motion, -1.0, buffers)


@njit
def _table_loop(n, tables, table, pose, motion, buffers, scratch):
    for _ in range(n):
        geometry_table.wheelset_table_kernel(tables, table, pose, motion, -1.0, buffers, scratch)


@njit
def _update_loop(n, tables, pose, motion, buffers):
    for _ in range(n):
        wheelset_contact_update(tables, pose, motion, buffers)


@njit
def _hertz_loop(n, pens, A, B, young, nu):
    acc = 0.0
    for _ in range(n):
        for i in range(pens.size):
            f, a, b, flag = hertz_from_penetration_kernel(pens[i], A[i], B[i], young, nu)
            acc += f
    return acc


@njit
def _hertz_fit_loop(n, pens, A, B, young, nu):
    acc = 0.0
    for _ in range(n):
        for i in range(pens.size):
            f, a, b, flag = hertz_from_penetration_fit_kernel(pens[i], A[i], B[i], young, nu)
            acc += f
    return acc


@njit
def _creep_loop(n, model_id, points, options):
    acc = 0.0
    for _ in range(n):
        for i in range(len(points)):
            fx, fy, mz = creep_forces_kernel(model_id, points[i], options)
            acc += fx
    return acc


@njit
def _rhs_loop(n, state, model, zero, contact, d, update_only):
    track = TrackPoint(1.0 / 400.0, 0.0, -0.08)
    inputs = StepInputs(zero, zero, zero, zero, 0.0)
    for _ in range(n):
        # as the integrator's stages call it: the contact rows not filled (record=False)
        wheelset_rhs(state, track, model, inputs, contact, d, update_only, False, False)


def _cpu(fn, *args, n=20000, repeats=5):
    fn(2, *args)
    best = np.inf
    for _ in range(repeats):
        c0 = time.process_time()
        fn(n, *args)
        best = min(best, (time.process_time() - c0) / n * 1e6)
    return best


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    scenario = load_scenario(SCENARIO, contact_geometry="table")
    model = WheelsetModel(scenario.params)
    model.initialize()
    for _ in range(900):
        model.advance(0.01)
    st = model.state.copy()
    su = model.setup
    pose = WheelsetPose(st[S_Y], st[S_Z], st[S_ROLL], st[S_YAW])
    motion = np.zeros((2, 3))
    buffers = su.buffers()
    model.rhs(st)
    counts = [int(c) for c in model.arrays.search.counts]
    contact = model.arrays.contact
    rows = [contact[s, i] for s in range(2) for i in range(counts[s]) if contact[s, i, C_PENETRATION] > 0]
    n_pts = len(rows)
    m = model.model
    young, nu = m[M_YOUNG], m[M_POISSON]
    # the Hertz curvature sums of the points, recomputed as wheelset_rhs does
    pts = model.arrays.search.points
    A, B, pens = [], [], []
    for s in range(2):
        for i in range(counts[s]):
            p = pts[s, i]
            wq = 1 + p[P_WHEEL_SLOPE] ** 2
            rq = 1 + p[P_RAIL_SLOPE] ** 2
            A.append(0.5 / (np.sqrt(wq) * p[P_RADIUS]))
            B.append(0.5 * (-p[P_WHEEL_F2] / wq ** 1.5 - p[P_RAIL_Z2] / rq ** 1.5))
            pens.append(-p[P_GAP] / np.sqrt(rq))
    A, B, pens = np.array(A), np.array(B), np.array(pens)
    arr = lambda col: np.array([r[col] for r in rows])   # noqa: E731
    shear = young / (2 * (1 + nu))
    zero = np.zeros((2, 3))
    table_contact = model.step_contact
    online_contact = StepContact(su.tables, model.arrays.search, table_contact.results,
                                 geometry_table.TableSearch(geometry_table.empty_table_arrays(),
                                                            geometry_table.table_scratch()))
    n = 20000
    print(f"state at t = 9 s: points per wheel {counts}, {n_pts} loaded; CPU us per call, "
          f"min of {repeats} (measured under load if the machine is shared)")
    t_full = _cpu(_full_loop, su.tables, pose, motion, buffers, n=n, repeats=repeats)
    t_tracked = _cpu(_tracked_loop, su.tables, pose, motion, buffers, n=n, repeats=repeats)
    t_table = _cpu(_table_loop, su.tables, table_contact.table_search.arrays, pose, motion, buffers,
                   table_contact.table_search.scratch, n=n, repeats=repeats)
    wheelset_contact_kernel(su.tables, pose, motion, -1.0, buffers)
    t_upd = _cpu(_update_loop, su.tables, pose, motion, buffers, n=n, repeats=repeats)
    t_hertz = _cpu(_hertz_loop, pens, A, B, young, nu, n=n, repeats=repeats)
    t_fit = _cpu(_hertz_fit_loop, pens, A, B, young, nu, n=n, repeats=repeats)
    points = typed.List([CreepPatch(*row, m[M_FRICTION], shear, nu, m[M_SPEED])
                         for row in zip(arr(C_XI), arr(C_ETA), arr(C_SPIN), arr(C_A), arr(C_B),
                                        arr(C_NORMAL))])
    t_creep = _cpu(_creep_loop, int(m[M_CREEP_MODEL]), points,
                   m[M_CREEP_OPTIONS:M_CREEP_OPTIONS + N_CREEP_OPTIONS].copy(), n=n, repeats=repeats)
    deriv = model.arrays.deriv
    t_rhs_full = _cpu(_rhs_loop, st, m, zero, online_contact, deriv, False, n=n, repeats=repeats)
    t_rhs_table = _cpu(_rhs_loop, st, m, zero, table_contact, deriv, False, n=n, repeats=repeats)
    model.rhs(st)
    t_rhs_upd = _cpu(_rhs_loop, st, m, zero, online_contact, deriv, True, n=n, repeats=repeats)
    physics = t_fit + t_creep     # the RHS uses the fitted Hertz
    print(f"  geometry: online full scan (both wheels) {t_full:.2f} us, tracked search "
          f"{t_tracked:.2f} us, table search {t_table:.2f} us, update of the points {t_upd:.2f} us")
    print(f"  Hertz ({len(pens)} points): AGM/Newton {t_hertz:.2f} us ({t_hertz / max(len(pens), 1):.2f} per point), "
          f"fitted shape terms (the RHS's) {t_fit:.2f} us ({t_fit / max(len(pens), 1):.2f} per point)")
    print(f"  "
          f"creep ({n_pts} points) {t_creep:.2f} us ({t_creep / max(n_pts, 1):.2f} per point)")
    print(f"  whole RHS: online tracked search {t_rhs_full:.2f} us, "
          f"table {t_rhs_table:.2f} us, update {t_rhs_upd:.2f} us")
    print(f"  rest of an RHS (frames, creepages, assembly, call): online tracked search "
          f"{t_rhs_full - t_tracked - physics:.2f} us, "
          f"table {t_rhs_table - t_table - physics:.2f} us, update {t_rhs_upd - t_upd - physics:.2f} us")


if __name__ == "__main__":
    main()
