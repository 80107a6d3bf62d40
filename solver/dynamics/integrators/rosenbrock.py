"""The adaptive linearly implicit W-method (Rosenbrock type) with a kept Jacobian."""

import math

import numpy as np
from numba import njit

from ...layout import (
    C_ANGLE, C_CREEP_LAT, C_CREEP_LONG, C_NORMAL, JAC_AGE, JAC_CONTACT, JAC_COUNTS, JAC_KEY,
    JAC_MATRIX, JAC_NEXT_STEP, LOAD_ANGLE, LOAD_NORMAL, LOAD_TRACTION, MAX_POINTS, M_MAX_STEPS,
    M_SPEED, M_TOLERANCE, M_TRACK_MODEL, N_INPUT, N_JACOBIAN, N_LOAD, N_MODEL, N_STATE,
    N_WHEELSET_STATE, ROS_MEMO_END_F, STATE_IS_POSITION,
    ROS_MEMO_END_INPUTS, ROS_MEMO_END_MODEL, ROS_MEMO_END_STATE, ROS_MEMO_END_TRACK,
    ROS_MEMO_END_VALID, ROS_MEMO_LOADS, ROS_MEMO_RHS, ROS_MEMO_START_COUNTS, ROS_MEMO_START_KEY,
    ROS_MEMO_START_POINTS, ROS_MEMO_W, ROS_MEMO_W_DT, ROS_MEMO_W_PIVOTS, ROS_MEMO_W_JACOBIAN,
)
from ..acceptance import N_RHS_STEP_SIZE
from .embedded import MIN_STEP_FRACTION, judge_step, rms_scaled_error, step_factor
from .stages import copy_points, full_rhs, key_matches, track_at, update_rhs


# The linearly implicit W-method of Wolfbrandt in the form of Shampine &
# Reichelt (1997), The MATLAB ODE suite, SIAM J. Sci. Comput. 18(1) 1-22,
# section 3.1 (the formula of MATLAB's ode23s), with W = I - dt d J:
#   k1 = W^-1 f(y0),  f1 = f(y0 + dt/2 k1),  k2 = W^-1 (f1 - k1) + k1,
#   y1 = y0 + dt k2,  f2 = f(y1),  k3 = W^-1 (f2 - e32 (k2 - f1) - 2 (k1 - f(y0))),
#   local error estimate dt/6 (k1 - 2 k2 + k3).
# Second order for ANY matrix J (a W-method, Steihaug & Wolfbrandt 1979, Math.
# Comp. 33: the expansion of y1 matches the exact one to dt^2 whatever J is), so
# one Jacobian serves many steps; L-stable, so the stiff modes (the wheelset's
# vertical and roll bounce on its Hertz contacts, about 1200-1500 rad/s, and the
# creep damping of the spin, about 900 1/s on Ren & Jin) set no step limit. The
# time derivative of f (the track's curvature rate) is left out of W, which a
# W-method allows. f2 is the next step's f(y0) (first same as last).
ROS_D = 1.0 / (2.0 + math.sqrt(2.0))
ROS_E32 = 6.0 + math.sqrt(2.0)
ROS_EXPONENT = 1.0 / 3.0        # the error estimate is of third order
# The Rosenbrock's shortest step (accepted whatever its error, as MIN_STEP_FRACTION
# for the explicit pairs): absolute, the explicit pairs' floor at their default
# largest step of 1 ms, since its largest step is meant to be 10 ms (a floor of
# 1/64 of that, 156 us, accepted the flange impacts of the hard-flange case with
# errors that ended in a false derailment, measured)
ROS_MIN_STEP = 1e-7
# forward-difference increments of the Jacobian's columns: positions and angles
# (m, rad) 1e-8 (1e-4 of a typical 0.1 mm Hertz penetration: the force is
# smooth over it, and the rounding of f, ~1e-16 x 100 m/s^2, stays 1e-6 of the
# column), velocities (m/s, rad/s) 1e-6 (1e-5 of the creep saturation velocity
# at 1 % creepage and 10 m/s)
JACOBIAN_STEP = np.array([1e-8 if position else 1e-6 for position in STATE_IS_POSITION])
JACOBIAN_MAX_AGE = 0.2
JACOBIAN_STIFFNESS_CHANGE = 0.1
JACOBIAN_ANGLE_CHANGE = 0.05
JACOBIAN_TRACTION_CHANGE = 0.03
# The largest entry a kept Jacobian may have (a restored FMU state is checked
# for finite numbers only): the stiffest entries are the Hertz contact
# stiffness over the mass and inertia, measured at most 2.3e6 on Ren & Jin and
# 2.7e7 under the hard flange contact of the tests; a kept one beyond 1e10 is
# not used (computed anew)
JACOBIAN_BOUND = 1e10


@njit(cache=True, error_model="numpy", _nrt=False)
def _copy_contact_loads(contact, loads):
    """loads (2, MAX_POINTS, N_LOAD) = each point's normal force, contact angle and
    traction ratio (the creep force over the normal force: how far into
    saturation its creep is, which sets the slope of the creep damping)."""
    for side in range(2):
        for i in range(MAX_POINTS):
            normal = contact[side, i, C_NORMAL]
            loads[side, i, LOAD_NORMAL] = normal
            loads[side, i, LOAD_ANGLE] = contact[side, i, C_ANGLE]
            traction = 0.0
            if normal > 0.0:
                traction = math.hypot(contact[side, i, C_CREEP_LONG],
                                      contact[side, i, C_CREEP_LAT]) / normal
            loads[side, i, LOAD_TRACTION] = traction


@njit(cache=True, error_model="numpy", _nrt=False)
def _contact_moved(jac_state, loads):
    """True if a contact point's Hertz stiffness, angle or traction ratio moved
    beyond the JACOBIAN_* bounds since the kept Jacobian was computed."""
    kept = jac_state[JAC_CONTACT:JAC_MATRIX].reshape((2, MAX_POINTS, N_LOAD))
    stiffest = 0.0
    for side in range(2):
        for i in range(MAX_POINTS):
            stiffest = max(stiffest, max(kept[side, i, LOAD_NORMAL], 0.0) ** (1.0 / 3.0))
    for side in range(2):
        for i in range(MAX_POINTS):
            change = abs(max(loads[side, i, LOAD_NORMAL], 0.0) ** (1.0 / 3.0)
                         - max(kept[side, i, LOAD_NORMAL], 0.0) ** (1.0 / 3.0))
            if change > JACOBIAN_STIFFNESS_CHANGE * stiffest:
                return True
            if loads[side, i, LOAD_NORMAL] > 0.0 and kept[side, i, LOAD_NORMAL] > 0.0:
                if (abs(loads[side, i, LOAD_ANGLE] - kept[side, i, LOAD_ANGLE])
                        > JACOBIAN_ANGLE_CHANGE):
                    return True
                if (abs(loads[side, i, LOAD_TRACTION] - kept[side, i, LOAD_TRACTION])
                        > JACOBIAN_TRACTION_CHANGE):
                    return True
    return False


@njit(cache=True, error_model="numpy", _nrt=True)
def _new_jacobian(state, f0, loads, track, model, step_inputs, contact, jac_state, y_work, f_work,
                  key):
    """Compute the kept Jacobian at `state` (f0 = f(state), the points of its full
    search in `search`, put back after each column): each column by a forward
    difference with the update RHS (the points re-located at the perturbed
    state; loads: the contact points' N and angle at `state`); the caller
    restarts its age. Returns the number of RHS evaluations."""
    search = contact.search
    jac_state[JAC_COUNTS] = search.counts[0]
    jac_state[JAC_COUNTS + 1] = search.counts[1]
    jac_state[JAC_CONTACT:JAC_MATRIX] = loads.reshape(2 * MAX_POINTS * N_LOAD)
    jac = jac_state[JAC_MATRIX:].reshape((N_STATE, N_STATE))
    points = search.points
    saved = points.copy()
    # the prescribed rails do not move: their columns are 0
    columns = N_STATE if model[M_TRACK_MODEL] > 0.5 else N_WHEELSET_STATE
    for j in range(columns, N_STATE):
        for i in range(N_STATE):
            jac[i, j] = 0.0
    for j in range(columns):
        y_work[:] = state
        y_work[j] += JACOBIAN_STEP[j]
        update_rhs(y_work, track, model, step_inputs, contact, f_work, key)
        for i in range(N_STATE):
            jac[i, j] = (f_work[i] - f0[i]) / JACOBIAN_STEP[j]
        points[:] = saved
    return columns


@njit(cache=True, error_model="numpy", _nrt=False)
def lu_factor(lu, n, pivots):
    """The LU factors of the leading n x n block of `lu`, in place, by
    Doolittle's elimination with partial pivoting (row exchanges in `pivots`).
    Written out rather than numpy.linalg: that one raises on a singular matrix
    (nothing may raise inside the FMU's compiled step), and it runs whichever
    LAPACK kernel the host's environment selects (the results must not depend on
    it). Returns False if the block is singular or its factors not finite."""
    for col in range(n):
        pivot = col
        largest = abs(lu[col, col])
        for r in range(col + 1, n):
            if abs(lu[r, col]) > largest:
                largest = abs(lu[r, col])
                pivot = r
        if not (largest > 1e-300 and math.isfinite(largest)):
            return False
        pivots[col] = pivot
        if pivot != col:
            for j in range(n):
                lu[col, j], lu[pivot, j] = lu[pivot, j], lu[col, j]
        scale = 1.0 / lu[col, col]
        for r in range(col + 1, n):
            factor = lu[r, col] * scale
            lu[r, col] = factor
            if factor != 0.0:
                for j in range(col + 1, n):
                    lu[r, j] -= factor * lu[col, j]
    for i in range(n):
        for j in range(n):
            if not math.isfinite(lu[i, j]):
                return False
    return True


@njit(cache=True, error_model="numpy", _nrt=False)
def lu_solve(lu, pivots, n, vector, out):
    """out = M^-1 vector from the LU factors of M's leading n x n block
    (lu_factor): the row exchanges, then forward and back substitution on the
    leading n entries; beyond them M is the identity (out copies vector)."""
    for i in range(out.shape[0]):
        out[i] = vector[i]
    for i in range(n):
        p = int(pivots[i])
        if p != i:
            out[i], out[p] = out[p], out[i]
    for i in range(n):
        acc = out[i]
        for k in range(i):
            acc -= lu[i, k] * out[k]
        out[i] = acc
    for i in range(n - 1, -1, -1):
        acc = out[i]
        for k in range(i + 1, n):
            acc -= lu[i, k] * out[k]
        out[i] = acc / lu[i, i]


@njit(cache=True, error_model="numpy", _nrt=False)
def _factor_iteration_matrix(jac, dt, n, lu, pivots):
    """The LU factors of W = I - dt d J (its leading n x n block; the rest of W is
    the identity: the prescribed rails' rows and columns of J are 0) into `lu`
    (lu_factor): a third of the work of an inverse, and each stage then costs
    two triangular solves (lu_solve). Returns False if W is singular or its
    factors not finite (the caller then shortens the step, which changes W)."""
    for i in range(n):
        for j in range(n):
            lu[i, j] = -dt * ROS_D * jac[i, j]
        lu[i, i] += 1.0
    return lu_factor(lu, n, pivots)


@njit(cache=True, error_model="numpy", _nrt=False)
def _continues(jac_state, state):
    """True if the last host step ended at this very state (bit for bit)."""
    for j in range(N_STATE):
        if jac_state[JAC_KEY + j] != state[j]:
            return False
    return True


@njit(cache=True, error_model="numpy", _nrt=False)
def _jacobian_usable(jac_state, state, counts, loads):
    """True if the kept Jacobian (JAC_*) was left by the host step that ended at
    this very state, is younger than JACOBIAN_MAX_AGE and was computed with the
    same number of contact points per wheel, stiffness, angles and traction
    within the JACOBIAN_* bounds."""
    if not (jac_state[JAC_AGE] >= 0.0 and jac_state[JAC_AGE] < JACOBIAN_MAX_AGE):
        return False
    if not _continues(jac_state, state):
        return False
    for j in range(JAC_MATRIX, N_JACOBIAN):
        if not abs(jac_state[j]) <= JACOBIAN_BOUND:
            return False
    if jac_state[JAC_COUNTS] != counts[0] or jac_state[JAC_COUNTS + 1] != counts[1]:
        return False
    return not _contact_moved(jac_state, loads)


@njit(cache=True, error_model="numpy", _nrt=False)
def _same(a, b):
    """a == b bit for bit, NaN equal to NaN (an input left to the track is NaN)."""
    return a == b or (a != a and b != b)


@njit(cache=True, error_model="numpy", _nrt=False)
def _end_rhs_holds(memo, state, track, inputs, model, key, rail_motion):
    """True if the derivative kept by the last host step (ROS_MEMO_END_*) is
    f(state) now: the same state, track point, inputs and model, and the contact
    points in the buffers still those of its full search (the key: any other
    evaluation since has changed or cleared it)."""
    if memo[ROS_MEMO_END_VALID] != 1.0 or not key_matches(key, state, rail_motion):
        return False
    for j in range(N_STATE):
        if memo[ROS_MEMO_END_STATE + j] != state[j]:
            return False
    if not (_same(memo[ROS_MEMO_END_TRACK], track.curvature)
            and _same(memo[ROS_MEMO_END_TRACK + 1], track.curvature_rate)
            and _same(memo[ROS_MEMO_END_TRACK + 2], track.cant)):
        return False
    for j in range(N_INPUT):
        if not _same(memo[ROS_MEMO_END_INPUTS + j], inputs[j]):
            return False
    for j in range(N_MODEL):
        if not _same(memo[ROS_MEMO_END_MODEL + j], model[j]):
            return False
    return True


@njit(cache=True, error_model="numpy", _nrt=False)
def _keep_end_rhs(memo, state, f, track, inputs, model):
    """Keep f = f(state) of the last step's full search with what it depends on."""
    for j in range(N_STATE):
        memo[ROS_MEMO_END_F + j] = f[j]
        memo[ROS_MEMO_END_STATE + j] = state[j]
    memo[ROS_MEMO_END_TRACK] = track.curvature
    memo[ROS_MEMO_END_TRACK + 1] = track.curvature_rate
    memo[ROS_MEMO_END_TRACK + 2] = track.cant
    for j in range(N_INPUT):
        memo[ROS_MEMO_END_INPUTS + j] = inputs[j]
    for j in range(N_MODEL):
        memo[ROS_MEMO_END_MODEL + j] = model[j]
    memo[ROS_MEMO_END_VALID] = 1.0


@njit(cache=True, error_model="numpy", _nrt=True)
def integrate_rosenbrock(state, step, data, inputs, step_inputs, contact):
    """Adaptive steps of the W-method ROS_* over the host step h, none longer than
    dt_max, under the error test of integrate_embedded (ERROR_SCALE, tolerance;
    the shortest step ROS_MIN_STEP). The stages: f(y0) with the full contact search (the
    points of the step before reused at the same pose), f1 with the update
    (re-location), f2 at the new state with the full search (a point born in
    the step enters the error estimate). The Jacobian and the step size are
    kept from step to step and from host step to host step (JAC_*:
    data.jacobian). Returns as integrate_embedded."""
    h, dt_max, distance = step.h, step.dt, step.distance
    search, results = contact.search, contact.results
    key = data.search_key
    model = data.model
    memo = data.rosenbrock_memo
    st = data.stages
    f0, k1, f1, k2, f2, k3, y_stage, y_new = st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7]
    jac_state = data.jacobian
    jac = jac_state[JAC_MATRIX:].reshape((N_STATE, N_STATE))
    speed = model[M_SPEED]
    tolerance = model[M_TOLERANCE]
    max_steps = int(model[M_MAX_STEPS])
    points = search.points
    counts = search.counts
    track = track_at(data, distance, inputs)
    n_rhs = 0
    if _end_rhs_holds(memo, state, track, inputs, model, key, step_inputs.rail_motion):
        f0[:] = memo[ROS_MEMO_END_F:ROS_MEMO_END_F + N_STATE]
    else:
        full_rhs(state, track, model, step_inputs, contact, f0, key, bool(True))
        n_rhs = 1
    memo[ROS_MEMO_END_VALID] = 0.0
    # the contact points of the full search at the current step's start, put back
    # after a rejected step and after each Jacobian (their stages move them)
    start_points = memo[ROS_MEMO_START_POINTS:ROS_MEMO_START_KEY].reshape(points.shape)
    start_key = memo[ROS_MEMO_START_KEY:ROS_MEMO_START_COUNTS]
    start_counts = memo[ROS_MEMO_START_COUNTS:ROS_MEMO_START_COUNTS + 2]     # (as floats)
    copy_points(points, counts, key, start_points, start_counts, start_key)
    lu = memo[ROS_MEMO_W:ROS_MEMO_W_PIVOTS].reshape((N_STATE, N_STATE))
    pivots = memo[ROS_MEMO_W_PIVOTS:ROS_MEMO_W_JACOBIAN]
    # the states W acts on: the prescribed rails' stay 0 (their rows and columns of J too)
    n = N_STATE if model[M_TRACK_MODEL] > 0.5 else N_WHEELSET_STATE
    w_jacobian = memo[ROS_MEMO_W_JACOBIAN:ROS_MEMO_END_VALID].reshape((N_STATE, N_STATE))
    rhs = memo[ROS_MEMO_RHS:ROS_MEMO_RHS + N_STATE]
    t = 0.0
    dt_min = min(dt_max * MIN_STEP_FRACTION, ROS_MIN_STEP)
    # the dt of w_inv (-1: none): the kept one if it was made of this Jacobian
    dt_inverted = memo[ROS_MEMO_W_DT]
    for i in range(N_STATE):
        for j in range(N_STATE):
            if w_jacobian[i, j] != jac[i, j]:
                dt_inverted = -1.0
    loads = memo[ROS_MEMO_LOADS:ROS_MEMO_START_POINTS].reshape((2, MAX_POINTS, N_LOAD))
    # (LOAD_* of the points at the step's start)
    _copy_contact_loads(results.contact, loads)
    refresh = not _jacobian_usable(jac_state, state, counts, loads)
    # the step-size history goes on from the host step before (from the same state)
    dt = dt_max
    if _continues(jac_state, state):
        dt = min(max(jac_state[JAC_NEXT_STEP], dt_min), dt_max)
    # the kept Jacobian counts as none until this host step ends accepted (a
    # discarded step leaves none: the retry computes its own)
    age = jac_state[JAC_AGE]
    jac_state[JAC_AGE] = -1.0
    fresh = False               # the Jacobian was computed at the current step's start
    n_steps = 0
    while True:
        if refresh:
            n_rhs += _new_jacobian(state, f0, loads, track_at(data, distance + speed * t, inputs),
                                   model, step_inputs, contact, jac_state, y_stage, f1, key)
            age = 0.0
            copy_points(start_points, start_counts, start_key, points, counts, key)
            dt_inverted = -1.0
            fresh = True
            refresh = False
        if n_steps >= max_steps:
            return N_RHS_STEP_SIZE
        n_steps += 1
        planned = dt
        last = t + dt * (1.0 + 1e-9) >= h
        if last:
            dt = h - t
        err = math.nan
        if dt != dt_inverted:
            memo[ROS_MEMO_W_DT] = -1.0
            if _factor_iteration_matrix(jac, dt, n, lu, pivots):
                dt_inverted = dt
                memo[ROS_MEMO_W_DT] = dt
                w_jacobian[:, :] = jac
        if dt == dt_inverted:
            lu_solve(lu, pivots, n, f0, k1)                        # k1 = W^-1 f0
            for j in range(N_STATE):
                y_stage[j] = state[j] + 0.5 * dt * k1[j]
            update_rhs(y_stage, track_at(data, distance + speed * (t + 0.5 * dt), inputs),
                       model, step_inputs, contact, f1, key)
            for j in range(N_STATE):
                rhs[j] = f1[j] - k1[j]
            lu_solve(lu, pivots, n, rhs, k2)                       # k2 = W^-1 (f1 - k1) + k1
            for j in range(N_STATE):
                k2[j] += k1[j]
                y_new[j] = state[j] + dt * k2[j]
            # (the last step's end at distance + speed * h, where the next host step begins)
            track = track_at(data, distance + speed * (h if last else t + dt), inputs)
            full_rhs(y_new, track, model, step_inputs, contact, f2, key, bool(True))
            for j in range(N_STATE):
                rhs[j] = f2[j] - ROS_E32 * (k2[j] - f1[j]) - 2.0 * (k1[j] - f0[j])
            lu_solve(lu, pivots, n, rhs, k3)                       # k3, for the estimate
            n_rhs += 2
            for j in range(N_STATE):
                rhs[j] = dt / 6.0 * (k1[j] - 2.0 * k2[j] + k3[j])
            err = rms_scaled_error(rhs, state, y_new, tolerance)
        accepted, failed = judge_step(err, dt, dt_min, data.step_stats)
        if failed:
            return -1
        if accepted:
            state[:] = y_new
            f0[:] = f2
            age += dt
            factor = step_factor(err, ROS_EXPONENT)
            _copy_contact_loads(results.contact, loads)     # of f2: the new state's
            refresh = (age >= JACOBIAN_MAX_AGE or factor < 1.0
                       or jac_state[JAC_COUNTS] != counts[0]
                       or jac_state[JAC_COUNTS + 1] != counts[1]
                       or _contact_moved(jac_state, loads))
            if last:
                # kept for the next host step from this state, unless it is due;
                # after a last step cut short to end the host step, the planned one
                jac_state[JAC_AGE] = -1.0 if refresh else age
                jac_state[JAC_NEXT_STEP] = (planned if dt < planned and factor >= 1.0
                                            else dt * factor)
                for j in range(N_STATE):
                    jac_state[JAC_KEY + j] = state[j]
                _keep_end_rhs(memo, state, f2, track, inputs, model)
                return n_rhs
            t += dt
            copy_points(points, counts, key, start_points, start_counts, start_key)
            fresh = False
        else:
            copy_points(start_points, start_counts, start_key, points, counts, key)
            factor = step_factor(err, ROS_EXPONENT)
            refresh = not fresh
        dt = min(max(dt * factor, dt_min), dt_max)
