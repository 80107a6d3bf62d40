"""Adaptive embedded explicit Runge-Kutta pairs: RK23 (Bogacki & Shampine 1989)
and RK45 (Dormand & Prince 1980), first same as last, under a local error test."""

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ...layout import (
    M_MAX_STEPS, M_SPEED, M_TOLERANCE, N_STATE, ROS_MEMO_RHS, STATE_IS_POSITION, STAT_FORCED,
    S_RAIL_RATE,
    STAT_FORCED_ERROR, ROS_MEMO_START_COUNTS, ROS_MEMO_START_KEY,
    ROS_MEMO_START_POINTS,
)
from ..acceptance import N_RHS_STEP_SIZE
from .stages import copy_points, full_rhs, track_at, update_rhs


# Embedded explicit Runge-Kutta pairs, coefficients as data: a (s, s) stage
# coefficients, b (s,) weights of the solution, b_hat (s,) weights of the
# embedded lower-order solution, c (s,) stage times as fractions of the step.
# Both pairs are "first same as last": the last row of a is b, so the last
# stage is evaluated at the new state.
class Tableau(NamedTuple):
    a: np.ndarray
    b: np.ndarray
    error: np.ndarray     # b - b_hat: the local error estimate is dt * sum(error_i k_i)
    c: np.ndarray
    exponent: float       # 1 / (order of the embedded solution + 1), for the step-size rule


def _tableau(a, b, b_hat, c, embedded_order):
    a = np.array(a, dtype=np.float64)
    b = np.array(b, dtype=np.float64)
    if not np.array_equal(a[-1], b):
        raise ValueError("the adaptive kernel needs a first-same-as-last tableau")
    return Tableau(a, b, b - np.array(b_hat, dtype=np.float64), np.array(c, dtype=np.float64),
                   1.0 / (embedded_order + 1))


# Bogacki & Shampine (1989), A 3(2) pair of Runge-Kutta formulas, Appl. Math.
# Lett. 2(4) 321-325: third order, second-order estimate.
RK23 = _tableau(
    a=[[0, 0, 0, 0],
       [1 / 2, 0, 0, 0],
       [0, 3 / 4, 0, 0],
       [2 / 9, 1 / 3, 4 / 9, 0]],
    b=[2 / 9, 1 / 3, 4 / 9, 0],
    b_hat=[7 / 24, 1 / 4, 1 / 3, 1 / 8],
    c=[0, 1 / 2, 3 / 4, 1], embedded_order=2)

# Dormand & Prince (1980), A family of embedded Runge-Kutta formulae, J. Comput.
# Appl. Math. 6(1) 19-26 (RK5(4)7M): fifth order, fourth-order estimate.
RK45 = _tableau(
    a=[[0, 0, 0, 0, 0, 0, 0],
       [1 / 5, 0, 0, 0, 0, 0, 0],
       [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
       [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
       [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
       [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
       [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]],
    b=[35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0],
    b_hat=[5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40],
    c=[0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1, 1], embedded_order=4)

# Scale of each state entry in the error test of the adaptive integrators: an
# entry's local error is held to tolerance * (ERROR_SCALE + |entry|), i.e. a
# tolerance of 1e-6 allows 1 nm and 1 nrad on the positions and angles (the
# wheelset's and the rail bodies'), 1e-7 m/s and rad/s on the velocities (plus
# 1e-6 of the entry itself: the spin rate, the travelled spin angle).
# the rail bodies' rates: lateral and vertical (m/s), roll (rad/s) of each rail
RAIL_RATE_ERROR_SCALE = np.array([1.0, 1.0, 10.0, 1.0, 1.0, 10.0])
ERROR_SCALE = np.array([1e-3 if position else 1e-1 for position in STATE_IS_POSITION])
ERROR_SCALE[S_RAIL_RATE:S_RAIL_RATE + 6] = RAIL_RATE_ERROR_SCALE
# The shortest adaptive step, as a fraction of the largest: a step of this
# length is accepted whatever its error estimate. The contact model has
# discontinuities the error test cannot resolve by shrinking the step: the
# multipoint selection takes or drops a point, or moves the contact from one
# minimum of the distance function to another within one patch (a jump of the
# contact angle), and the wheelset may chatter on such a boundary; there a step
# this short locates the switch to within it (at the default 1 ms, 15.6 us).
# Across such jumps no integrator converges faster than at first order: under
# the flange impacts of a 100 kN step load RK4 at 6.25 and 12.5 us is 17 um
# apart after 50 ms, and whether the run then settles, bounces or derails
# depends on the trajectory (tests/test_adaptive_integrator.py, docs/limits_and_failures.md).
MIN_STEP_FRACTION = 1.0 / 64.0
STEP_GROWTH_MAX = 5.0        # the step-size rule of Hairer, Norsett & Wanner (Solving ODE I,
STEP_SHRINK_MAX = 0.2        # II.4): dt * min(5, max(0.2, 0.9 err^(-exponent)))
STEP_SAFETY = 0.9


@njit(cache=True, error_model="numpy", _nrt=False)
def scaled_error(e, j, state, y_new, tolerance):
    """The local error estimate e of state entry j over what the error test allows
    it: tolerance * (ERROR_SCALE[j] + the entry's size before or after the step)."""
    return e / (tolerance * (ERROR_SCALE[j] + max(abs(state[j]), abs(y_new[j]))))


@njit(cache=True, error_model="numpy", _nrt=False)
def rms_scaled_error(estimate, state, y_new, tolerance):
    """The error test's measure of a step from `state` to `y_new` with the local
    error estimate `estimate` (N_STATE,): the root mean square of scaled_error
    over the state (<= 1 passes)."""
    err = 0.0
    for j in range(N_STATE):
        r = scaled_error(estimate[j], j, state, y_new, tolerance)
        err += r * r
    return math.sqrt(err / N_STATE)


@njit(cache=True, error_model="numpy", _nrt=False)
def judge_step(err, dt, dt_min, step_stats):
    """The error test of an adaptive step of dt with the error `err`
    (rms_scaled_error): (accepted, failed). A step within the tolerance is
    accepted; so is one of the shortest length dt_min that fails it (a forced
    step: counted in step_stats, STAT_*, with its error, and reported by the
    FMU's output solver.forced_steps); a non-finite error at the shortest
    length fails the host step (the caller returns -1); otherwise the step is
    rejected (a NaN error fails the test)."""
    shortest = dt <= dt_min * (1.0 + 1e-9)
    if err <= 1.0:
        return True, False
    if not shortest:
        return False, False
    if not math.isfinite(err):
        return False, True
    step_stats[STAT_FORCED] += 1.0
    step_stats[STAT_FORCED_ERROR] = max(step_stats[STAT_FORCED_ERROR], err)
    return True, False


@njit(cache=True, error_model="numpy", _nrt=False)
def step_factor(err, exponent):
    """The next step over this one, from the error `err` of this one (relative
    to the tolerance; accepted or not): dt * min(5, max(0.2, 0.9 err^(-exponent))),
    the largest growth for no error, the largest cut for a non-finite one."""
    if err == 0.0:
        return STEP_GROWTH_MAX
    if not math.isfinite(err):
        return STEP_SHRINK_MAX
    return min(STEP_GROWTH_MAX, max(STEP_SHRINK_MAX, STEP_SAFETY * err ** (-exponent)))


@njit(cache=True, error_model="numpy", _nrt=True)
def integrate_embedded(state, step, tableau, data, inputs, step_inputs, contact):
    """Adaptive steps of an embedded first-same-as-last pair (`tableau`, a
    Tableau) over the host step h, none longer than dt_max (see the module
    docstring). The track is evaluated at each stage's distance; data the
    StepData, inputs the flat input vector (U_*).

    Returns the number of RHS evaluations (rejected steps included), -1 if a
    step of the shortest length (MIN_STEP_FRACTION * dt_max) gave a non-finite
    state, or N_RHS_STEP_SIZE if more than model[M_MAX_STEPS] steps were
    needed; the state is then partly advanced (the caller restores it)."""
    h, dt_max, distance = step.h, step.dt, step.distance
    search = contact.search
    key = data.search_key
    model = data.model
    a = tableau.a
    weights_error = tableau.error
    c = tableau.c
    n_stage = c.shape[0]
    k = data.stages[:n_stage]
    y_new = data.stages[n_stage]
    speed = model[M_SPEED]
    tolerance = model[M_TOLERANCE]
    max_steps = int(model[M_MAX_STEPS])
    points = search.points
    counts = search.counts
    # the contact points of the full search at the current step's start, put back
    # after a rejected step (its stages moved them)
    full_rhs(state, track_at(data, distance, inputs), model, step_inputs, contact, k[0], key,
             bool(True))
    n_rhs = 1
    memo = data.rosenbrock_memo     # (its scratch rows, ROS_MEMO_START_*, serve here too)
    start_points = memo[ROS_MEMO_START_POINTS:ROS_MEMO_START_KEY].reshape(points.shape)
    start_key = memo[ROS_MEMO_START_KEY:ROS_MEMO_START_COUNTS]
    start_counts = memo[ROS_MEMO_START_COUNTS:ROS_MEMO_START_COUNTS + 2]     # (as floats)
    estimate = memo[ROS_MEMO_RHS:ROS_MEMO_RHS + N_STATE]
    copy_points(points, counts, key, start_points, start_counts, start_key)
    t = 0.0
    dt = dt_max
    dt_min = dt_max * MIN_STEP_FRACTION
    n_steps = 0
    while True:
        if n_steps >= max_steps:
            return N_RHS_STEP_SIZE
        n_steps += 1
        last = t + dt * (1.0 + 1e-9) >= h
        if last:
            dt = h - t
        for i in range(1, n_stage):
            for j in range(N_STATE):
                acc = 0.0
                for m in range(i):
                    acc += a[i, m] * k[m, j]
                y_new[j] = state[j] + dt * acc
            track = track_at(data, distance + speed * (t + c[i] * dt), inputs)
            if i < n_stage - 1:
                update_rhs(y_new, track, model, step_inputs, contact, k[i], key)
            else:       # the new state: the full search (a point born in the step enters here)
                full_rhs(y_new, track, model, step_inputs, contact, k[i], key, bool(True))
        n_rhs += n_stage - 1
        for j in range(N_STATE):
            e = 0.0
            for m in range(n_stage):
                e += weights_error[m] * k[m, j]
            estimate[j] = dt * e
        err = rms_scaled_error(estimate, state, y_new, tolerance)
        accepted, failed = judge_step(err, dt, dt_min, data.step_stats)
        if failed:
            return -1
        if accepted:
            state[:] = y_new
            k[0][:] = k[n_stage - 1]
            if last:
                return n_rhs
            t += dt
            copy_points(points, counts, key, start_points, start_counts, start_key)
            factor = step_factor(err, tableau.exponent)
        else:
            copy_points(start_points, start_counts, start_key, points, counts, key)
            factor = step_factor(err, tableau.exponent)
        dt = min(max(dt * factor, dt_min), dt_max)


@njit(cache=True, error_model="numpy", _nrt=True)
def integrate_rk23(state, step, data, inputs, step_inputs, contact):
    """Adaptive RK23 (Bogacki & Shampine 1989) steps over the host step."""
    return integrate_embedded(state, step, RK23, data, inputs, step_inputs, contact)


@njit(cache=True, error_model="numpy", _nrt=True)
def integrate_rk45(state, step, data, inputs, step_inputs, contact):
    """Adaptive RK45 (Dormand & Prince 1980) steps over the host step."""
    return integrate_embedded(state, step, RK45, data, inputs, step_inputs, contact)
