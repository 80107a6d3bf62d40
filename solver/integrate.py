"""Fixed-step integrators inside one communication step.

`WheelsetModel.advance(h)` splits the host step h into n = ceil(h / internal
step) equal substeps, so that it reaches exactly t + h for any host step (the
host step may vary from call to call), and runs one of these numba kernels
over the substeps. The state is the plain array of solver.dynamics (N_STATE
entries, S_*); the kernels update it in place.

- `integrate_rk4`: classical 4th-order Runge-Kutta, 4 RHS evaluations per
  substep. The full multipoint contact search runs at the first
  stage of every substep; stages 2-4 keep that set of contact points and
  re-locate each one on the profiles at the stage's state (a new contact
  point thus enters at the next substep, at most one internal step later,
  when its penetration is still nil). In the steady curve of Ren & Jin R400
  and Kang R320 lateral displacement, outer-wheel Q, Y and flange force are
  the same to 4-5 significant digits for 0.25 to 1.25 ms, while 2 ms is
  unstable (the stiff flange contact makes the wheelset bounce off the rails).
  At a contact onset the late entry makes RK4 first order: at the Ren & Jin
  flange-root impact (5.8 s) RK4 at 1 ms is 9.8 kN (14 % of the wheel load)
  off the converged run, at 0.1 ms still 2.1 kN (docs/convergence.md).
- `integrate_semi_implicit`: semi-implicit (symplectic) Euler, velocities
  first, then positions with the new velocities; one RHS per substep, for
  stiff flange contact at small steps.
- `integrate_embedded` with the tableau RK23 (Bogacki & Shampine 1989) or
  RK45 (Dormand & Prince 1980): adaptive steps under a local error tolerance
  (model M_TOLERANCE), the internal step being the largest step. For hard
  flange contact, impacts and low speeds (stiff creep damping), where a fixed
  step must be cut for the worst moment of a run, and for long smooth stretches,
  where it may grow. The first stage of every step reuses the last stage of the
  step before (first same as last), which is evaluated at the step's end with
  the full contact search: a contact point born within the step enters that
  stage and its error estimate, so a step over a contact onset is repeated
  shorter until the onset's force jump is within the tolerance. Each host step
  starts with the largest step (nothing of the step-size history is carried
  over, so a host step depends on the state and the inputs only, as with the
  fixed-step integrators, and the FMU state needs nothing more).
- `integrate_rosenbrock`: adaptive steps of the linearly implicit W-method of
  Wolfbrandt / Shampine & Reichelt (ode23s), second order with a third-order
  error estimate, under the same error test. Each step solves with W = I -
  dt d J, J the Jacobian of the RHS by finite differences, kept from step to
  step (JAC_*; in the model's state, so the FMU state carries it), and so are
  W^-1 and the derivative at the host step's end (ROS_MEMO_*, scratch): a host
  step that starts where the last one ended, with the same inputs, reuses
  them bit for bit instead of evaluating them again. Being
  L-stable it is not held near 1 ms by the stiff modes that bound the
  explicit integrators (the vertical and roll bounce of the wheelset on its
  Hertz contacts, about 1300 rad/s; the creep damping of the spin, 900 1/s on
  Ren & Jin), so its steps grow to what the accuracy asks. The default: at
  tolerance 1e-5 it stays within 0.7 % of the wheel load and 0.08 um of the
  converged runs of docs/convergence.md, including the impacts.
The fixed-step kernels return the number of RHS evaluations, or -1 if the
state became non-finite; the adaptive one also -2 (N_RHS_STEP_SIZE) if it
needed more than model[M_MAX_STEPS] steps (the caller restores the state and
reports a discarded step).

`advance_kernel` is the whole host step in one numba call: the input check,
the track's curvature and cant at each substep (solver.track.track_state_kernel),
the integrator, the acceptance check (solver.dynamics.step_problem) and the
output record (solver.dynamics.fill_record). `WheelsetModel.advance_vector`
calls it; only the messages of a discarded step are composed in Python.
"""
import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .dynamics import (C_ANGLE, C_CREEP_LAT, C_CREEP_LONG, C_NORMAL, M_BOX_SEMI_SPACING,
                       M_MAX_STEPS, M_SPEED, M_TOLERANCE, N_INPUT, N_MODEL,
                       N_RHS_STEP_SIZE, N_STATE, O_MAX_PENETRATION,
                       PROBLEM_BAD_INPUT, PROBLEM_NONE, PROBLEM_PENETRATION, S_ROLL, S_Y, S_YAW, S_Z,
                       U_BOX_FORCE, U_BOX_MOMENT, U_CANT, U_CURVATURE, U_RAIL_MOTION,
                       U_RAIL_VELOCITY, U_TORQUE, ContactResults, StepInputs, StepLimits,
                       TrackPoint, fill_record, state_is_finite, step_problem, wheelset_rhs)
from .geometry import MAX_POINTS, N_POINT_FIELDS, ContactBuffers, ContactTables
from .geometry_table import TableArrays, TableScratch, TableSearch
from .track import track_state_kernel

INTEGRATOR_IDS = {"rk4": 0, "semi-implicit": 1, "rk23": 2, "rk45": 3, "rosenbrock": 4}
ADAPTIVE_INTEGRATORS = ("rk23", "rk45", "rosenbrock")


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
# tolerance of 1e-6 allows 1 nm and 1 nrad on the positions and angles, 1e-7
# m/s and rad/s on the velocities (plus 1e-6 of the entry itself: the spin rate,
# the travelled spin angle).
ERROR_SCALE = np.array([1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3,
                        1e-1, 1e-1, 1e-1, 1e-1, 1e-1, 1e-1])
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
# rows of StepData.stages: the fixed-step kernels use 5, the adaptive one s + 1
N_STAGE_ROWS = RK45.b.shape[0] + 1

# The search key (StepData.search_key): the pose and rail motion of the full
# contact search whose points are in the contact buffers, so that the next full
# search at the bitwise same pose and rail motion (the end-of-step evaluation
# for the outputs, then the first stage of the next step) reuses them.
K_VALID = 0              # 1.0: the points in the buffers belong to the key below
K_POSE = 1               # y, z, roll, yaw (S_Y, S_Z, S_ROLL, S_YAW)
K_RAIL = 5               # rail motion (2, 3), row-major
N_SEARCH_KEY = 11


class TrackSamples(NamedTuple):
    """The track layout at the start of each substep of a host step, (n_sub,) arrays."""

    curvature: np.ndarray        # 1/m
    curvature_rate: np.ndarray   # d kappa / ds (1/m^2)
    cant: np.ndarray             # rad


class StepData(NamedTuple):
    """Everything `advance_kernel` works on besides the state, the step and the
    inputs: the track table, the contact tables, the model, and the scratch and
    result arrays it fills. All fields are arrays or numbers (no nested tuples),
    so that the plain tuple of a StepData is what `advance_kernel` takes."""

    track_table: np.ndarray       # Track.segment_table()
    rail_distance: float          # m, between the rail centres (Track.rail_distance)
    track_length: float           # m (Track.length)
    wheel_table: np.ndarray       # geometry.ContactTables fields
    rail_table: np.ndarray
    geometry_params: np.ndarray
    model: np.ndarray             # M_* parameter vector
    integrator_id: int            # INTEGRATOR_IDS
    max_penetration: float        # dynamics.StepLimits fields
    tread_end: float
    flange_tip: float
    work: np.ndarray              # geometry.ContactBuffers fields
    points: np.ndarray
    counts: np.ndarray
    contact: np.ndarray           # dynamics.ContactResults fields
    summary: np.ndarray
    stages: np.ndarray            # (N_STAGE_ROWS, N_STATE): the stages k1.. and the stage state
    saved_state: np.ndarray       # the state, contact rows and summary before the step
    saved_contact: np.ndarray
    saved_summary: np.ndarray
    derived: np.ndarray           # (N_DERIVED,) scratch of fill_record
    record: np.ndarray            # (N_RECORD,) the output record, rebuilt after an accepted step
    table_params: np.ndarray      # geometry_table.TableArrays fields (tparams empty: online search)
    table_flags: np.ndarray
    table_nodes: np.ndarray
    table_rows: np.ndarray        # geometry_table.TableScratch fields
    table_index: np.ndarray
    search_key: np.ndarray        # (N_SEARCH_KEY,) K_*: pose and rail motion of the points in `points`
    jacobian: np.ndarray          # (N_JACOBIAN,) JAC_*: the Rosenbrock integrator's kept Jacobian
    rosenbrock_memo: np.ndarray   # (N_ROS_MEMO,) ROS_MEMO_*: its kept W^-1 and end derivative


@njit(cache=True, error_model="numpy", _nrt=False)
def _key_matches(key, state, rail_motion):
    """True if the contact points in the buffers are those of a full search at
    this state's pose and this rail motion (bit for bit)."""
    if key[K_VALID] != 1.0:
        return False
    if (key[K_POSE] != state[S_Y] or key[K_POSE + 1] != state[S_Z]
            or key[K_POSE + 2] != state[S_ROLL] or key[K_POSE + 3] != state[S_YAW]):
        return False
    for side in range(2):
        for c in range(3):
            if key[K_RAIL + 3 * side + c] != rail_motion[side, c]:
                return False
    return True


@njit(cache=True, error_model="numpy", _nrt=False)
def _set_key(key, state, rail_motion):
    key[K_VALID] = 1.0
    key[K_POSE] = state[S_Y]
    key[K_POSE + 1] = state[S_Z]
    key[K_POSE + 2] = state[S_ROLL]
    key[K_POSE + 3] = state[S_YAW]
    for side in range(2):
        for c in range(3):
            key[K_RAIL + 3 * side + c] = rail_motion[side, c]


# numba compiles a function once per literal value of an argument written as a
# constant (True, False, None) but once for all values of a plain bool, and
# wheelset_rhs inlines the whole contact model (3-4 s of compiling each time,
# measured). So the integrators call it in two versions only: the
# full search with `record` a plain bool (callers of _full_rhs pass bool(...)),
# and the update of the inner stages, whose constant flags let numba leave the
# search and the contact rows out of that version.
@njit(cache=True, error_model="numpy", _nrt=False)
def _full_rhs(state, track, tables, model, inputs, search, results, deriv, table_search, key,
              record):
    """wheelset_rhs with the full contact search, or with the points already in the
    buffers when `key` says they belong to this pose and rail motion (the same
    points bit for bit: the search is a function of them only).
    record: wheelset_rhs's (False: the contact rows are not filled), a plain bool."""
    reuse = _key_matches(key, state, inputs.rail_motion)
    wheelset_rhs(state, track, tables, model, inputs, search, results, deriv, False, table_search,
                 reuse, record)
    if not reuse:
        _set_key(key, state, inputs.rail_motion)


@njit(cache=True, error_model="numpy", _nrt=False)
def _update_rhs(state, track, tables, model, inputs, search, results, deriv, key):
    """wheelset_rhs with the contact update (the points re-located: the key no longer holds),
    at an inner stage: its contact rows are not filled (no caller reads them)."""
    key[K_VALID] = 0.0
    wheelset_rhs(state, track, tables, model, inputs, search, results, deriv, True, None, False,
                 False)


@njit(cache=True, error_model="numpy", _nrt=False)
def _track_point(samples, step):
    return TrackPoint(samples.curvature[step], samples.curvature_rate[step], samples.cant[step])


@njit(cache=True, error_model="numpy", _nrt=False)
def integrate_rk4(state, n_sub, dt, samples, tables, model, inputs, search, results, stages,
                  table_search, key):
    """n_sub classical RK4 steps of size dt (TrackSamples per substep; stages a
    (5, N_STATE) scratch array: k1..k4 and the stage state; table_search the
    geometry_table.TableSearch, an empty one for the online search; key the search
    key K_*).

    Returns the number of right-hand-side evaluations, or -1 if the state
    became non-finite (the caller restores the state and reports it)."""
    k1 = stages[0]
    k2 = stages[1]
    k3 = stages[2]
    k4 = stages[3]
    tmp = stages[4]
    n_rhs = 0
    for step in range(n_sub):
        track = _track_point(samples, step)
        # (the stages' contact rows are not read: only the last RHS below fills them)
        _full_rhs(state, track, tables, model, inputs, search, results, k1, table_search, key,
                  bool(False))
        for j in range(N_STATE):
            tmp[j] = state[j] + 0.5 * dt * k1[j]
        _update_rhs(tmp, track, tables, model, inputs, search, results, k2, key)
        for j in range(N_STATE):
            tmp[j] = state[j] + 0.5 * dt * k2[j]
        _update_rhs(tmp, track, tables, model, inputs, search, results, k3, key)
        for j in range(N_STATE):
            tmp[j] = state[j] + dt * k3[j]
        _update_rhs(tmp, track, tables, model, inputs, search, results, k4, key)
        for j in range(N_STATE):
            state[j] += dt / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j])
        n_rhs += 4
        if not state_is_finite(state):
            return -1
    # one RHS evaluation at the end of the step, so that the contact results
    # (the outputs) belong to the final state; its contact points serve the
    # first stage of the next step (same pose, key)
    _full_rhs(state, _track_point(samples, n_sub - 1), tables, model, inputs, search, results, k1,
              table_search, key, bool(True))
    return n_rhs + 1


@njit(cache=True, error_model="numpy", _nrt=False)
def integrate_semi_implicit(state, n_sub, dt, samples, tables, model, inputs, search, results,
                            stages, table_search, key):
    """n_sub semi-implicit (symplectic) Euler steps: velocities first, then
    positions with the new velocities. One RHS evaluation per step; stable for
    stiff contact springs at steps where explicit Euler is not."""
    k1 = stages[0]
    n_rhs = 0
    for step in range(n_sub):
        _full_rhs(state, _track_point(samples, step), tables, model, inputs, search, results, k1,
                  table_search, key, bool(True))
        for j in range(6):
            state[6 + j] += dt * k1[6 + j]
        for j in range(6):
            state[j] += dt * state[6 + j]
        n_rhs += 1
        if not state_is_finite(state):
            return -1
    _full_rhs(state, _track_point(samples, n_sub - 1), tables, model, inputs, search, results, k1,
              table_search, key, bool(True))
    return n_rhs + 1


@njit(cache=True, error_model="numpy", _nrt=False)
def _track_at(data, s, inputs):
    """The TrackPoint at travelled distance s: the track's layout, or the host's
    curvature and cant where the inputs give them (finite)."""
    curvature, curvature_rate, cant = track_state_kernel(data.track_table, data.rail_distance,
                                                         data.track_length, s)
    if math.isfinite(inputs[U_CURVATURE]):
        curvature = inputs[U_CURVATURE]
        curvature_rate = 0.0
    if math.isfinite(inputs[U_CANT]):
        cant = inputs[U_CANT]
    return TrackPoint(curvature, curvature_rate, cant)


@njit(cache=True, error_model="numpy", _nrt=False)
def _scaled_error(e, j, state, y_new, tolerance):
    """The local error estimate e of state entry j over what the error test allows
    it: tolerance * (ERROR_SCALE[j] + the entry's size before or after the step)."""
    return e / (tolerance * (ERROR_SCALE[j] + max(abs(state[j]), abs(y_new[j]))))


@njit(cache=True, error_model="numpy", _nrt=True)
def _copy_points(points, counts, key, to_points, to_counts, to_key):
    """Copy the contact points of a search, their counts and their search key
    (counts between integer and float arrays: small whole numbers, exact)."""
    to_points[:] = points
    for side in range(2):
        to_counts[side] = int(counts[side])
    to_key[:] = key


@njit(cache=True, error_model="numpy", _nrt=False)
def _step_factor(err, exponent):
    """The next step over this one, from the error `err` of this one (relative
    to the tolerance; accepted or not): dt * min(5, max(0.2, 0.9 err^(-exponent))),
    the largest growth for no error, the largest cut for a non-finite one."""
    if err == 0.0:
        return STEP_GROWTH_MAX
    if not math.isfinite(err):
        return STEP_SHRINK_MAX
    return min(STEP_GROWTH_MAX, max(STEP_SHRINK_MAX, STEP_SAFETY * err ** (-exponent)))


@njit(cache=True, error_model="numpy", _nrt=True)
def integrate_embedded(state, h, dt_max, tableau, distance, data, inputs, tables, step_inputs,
                       search, results, table_search, key):
    """Adaptive steps of an embedded first-same-as-last pair (`tableau`, a
    Tableau) over the host step h, none longer than dt_max (see the module
    docstring). The track is evaluated at each stage's distance; data the
    StepData, inputs the flat input vector (U_*).

    Returns the number of RHS evaluations (rejected steps included), -1 if a
    step of the shortest length (MIN_STEP_FRACTION * dt_max) gave a non-finite
    state, or N_RHS_STEP_SIZE if more than model[M_MAX_STEPS] steps were
    needed; the state is then partly advanced (the caller restores it)."""
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
    _full_rhs(state, _track_at(data, distance, inputs), tables, model, step_inputs, search,
              results, k[0], table_search, key, bool(True))
    n_rhs = 1
    memo = data.rosenbrock_memo     # (its scratch rows, ROS_MEMO_START_*, serve here too)
    start_points = memo[ROS_MEMO_START_POINTS:ROS_MEMO_START_KEY].reshape(points.shape)
    start_key = memo[ROS_MEMO_START_KEY:ROS_MEMO_START_COUNTS]
    start_counts = memo[ROS_MEMO_START_COUNTS:ROS_MEMO_START_COUNTS + 2]     # (as floats)
    _copy_points(points, counts, key, start_points, start_counts, start_key)
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
            track = _track_at(data, distance + speed * (t + c[i] * dt), inputs)
            if i < n_stage - 1:
                _update_rhs(y_new, track, tables, model, step_inputs, search, results, k[i], key)
            else:       # the new state: the full search (a point born in the step enters here)
                _full_rhs(y_new, track, tables, model, step_inputs, search, results, k[i],
                          table_search, key, bool(True))
        n_rhs += n_stage - 1
        err = 0.0
        for j in range(N_STATE):
            e = 0.0
            for m in range(n_stage):
                e += weights_error[m] * k[m, j]
            r = _scaled_error(dt * e, j, state, y_new, tolerance)
            err += r * r
        err = math.sqrt(err / N_STATE)
        shortest = dt <= dt_min * (1.0 + 1e-9)
        if shortest and not math.isfinite(err):
            return -1
        if err <= 1.0 or shortest:          # (a NaN fails the test)
            state[:] = y_new
            k[0][:] = k[n_stage - 1]
            if last:
                return n_rhs
            t += dt
            _copy_points(points, counts, key, start_points, start_counts, start_key)
            factor = _step_factor(err, tableau.exponent)
        else:
            _copy_points(start_points, start_counts, start_key, points, counts, key)
            factor = _step_factor(err, tableau.exponent)
        dt = min(max(dt * factor, dt_min), dt_max)


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
ROS_MIN_STEP = 1e-3 * MIN_STEP_FRACTION
# forward-difference increments of the Jacobian's columns: positions and angles
# (m, rad) 1e-8 (1e-4 of a typical 0.1 mm Hertz penetration: the force is
# smooth over it, and the rounding of f, ~1e-16 x 100 m/s^2, stays 1e-6 of the
# column), velocities (m/s, rad/s) 1e-6 (1e-5 of the creep saturation velocity
# at 1 % creepage and 10 m/s)
JACOBIAN_STEP = np.array([1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8,
                          1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6])
# The kept Jacobian and step history (StepData.jacobian, flat; part of the
# model's state: the FMU state carries it, so a restored instance continues bit
# for bit): the Jacobian's age (s of simulated time since it was computed; -1:
# none or due), the step the error control proposed for the next host step, the
# state at which the last host step ended (both serve the next host step only
# from that very state: after a discarded or undone step, or a state set from
# outside, the first step is the largest and a new Jacobian is computed), the
# contact points per wheel, the normal force, angle and traction ratio of each
# point when the Jacobian was computed (LOAD_*), and the matrix (row-major).
# A new Jacobian is computed
#   - when it is older than JACOBIAN_MAX_AGE;
#   - when a wheel's number of contact points changed (a point born or lost
#     changes the contact stiffness by a factor of order 2);
#   - when a point's Hertz stiffness (proportional to N^(1/3)) moved by more
#     than JACOBIAN_STIFFNESS_CHANGE of the stiffest point's, its contact angle
#     by more than JACOBIAN_ANGLE_CHANGE, or its traction ratio (how far into
#     saturation its creep is: the slope of the creep damping) by more than
#     JACOBIAN_TRACTION_CHANGE;
#   - after a step whose error asked for a shorter next step, and after a
#     rejected step if it was not computed at that step's start.
# The stiff modes are those of the contact; a Jacobian that no longer holds
# them leaves them to an explicit-like treatment, unstable at these steps.
# Measured on the hard-flange case (100 kN lateral axle-box step load at exactly
# 50 kN per box, tolerances 1e-3 ... 1e-6): the age and count rules alone let
# the wheelset bounce on the flange (0.2-0.5 mm) or end in a derailment at some
# tolerances; with all the rules it settled at every tolerance, with 1 ms host
# steps. (That run's end is not a function of the integrator's accuracy alone:
# the converged RK4 itself bounces or derails for some loads within +-500 N,
# tests/test_adaptive_integrator.py.)
LOAD_NORMAL, LOAD_ANGLE, LOAD_TRACTION = 0, 1, 2     # N (N), angle (rad), |creep force| / N
N_LOAD = 3
JAC_AGE = 0
JAC_NEXT_STEP = 1               # s, the step the error control proposed for the next host step
JAC_KEY = 2
JAC_COUNTS = JAC_KEY + N_STATE
JAC_CONTACT = JAC_COUNTS + 2                # (2, MAX_POINTS, N_LOAD): LOAD_*
JAC_MATRIX = JAC_CONTACT + 2 * MAX_POINTS * N_LOAD
N_JACOBIAN = JAC_MATRIX + N_STATE * N_STATE
# What the Rosenbrock integrator remembers from one host step to the next besides
# its Jacobian (StepData.rosenbrock_memo; scratch, not part of a saved state):
# - W^-1 (ROS_MEMO_W_INV) with the dt (ROS_MEMO_W_DT; -1: none) and the Jacobian
#   it was made of: a host step that starts with the same Jacobian and step (the
#   common case in 1 ms communication steps) does not invert W again (about
#   1.2 us of the 7.5 us of such a host step, measured on Ren & Jin);
# - the derivative at the end of the last host step (ROS_MEMO_END_*) with all it
#   depends on (state, track point, inputs, model; the contact points by the
#   search key): the next host step that starts there takes it as its f(y0)
#   instead of evaluating it again (about 1 us). Both are bit-identical reuses.
ROS_MEMO_W_DT = 0
ROS_MEMO_W = 1                                          # (N_STATE, N_STATE) scratch: W
ROS_MEMO_W_INV = ROS_MEMO_W + N_STATE * N_STATE
ROS_MEMO_W_JACOBIAN = ROS_MEMO_W_INV + N_STATE * N_STATE
ROS_MEMO_END_VALID = ROS_MEMO_W_JACOBIAN + N_STATE * N_STATE   # 1.0: the END_* rows hold
ROS_MEMO_END_F = ROS_MEMO_END_VALID + 1
ROS_MEMO_END_STATE = ROS_MEMO_END_F + N_STATE
ROS_MEMO_END_TRACK = ROS_MEMO_END_STATE + N_STATE       # curvature, its rate, cant
ROS_MEMO_END_INPUTS = ROS_MEMO_END_TRACK + 3
ROS_MEMO_END_MODEL = ROS_MEMO_END_INPUTS + N_INPUT
# scratch of one host step (kept here rather than allocated in every host step):
ROS_MEMO_RHS = ROS_MEMO_END_MODEL + N_MODEL              # (N_STATE,) a stage's right-hand side
ROS_MEMO_LOADS = ROS_MEMO_RHS + N_STATE                  # (2, MAX_POINTS, N_LOAD) LOAD_*
ROS_MEMO_START_POINTS = ROS_MEMO_LOADS + 2 * MAX_POINTS * N_LOAD   # the step start's points,
ROS_MEMO_START_KEY = ROS_MEMO_START_POINTS + 2 * MAX_POINTS * N_POINT_FIELDS  # their key
ROS_MEMO_START_COUNTS = ROS_MEMO_START_KEY + N_SEARCH_KEY                    # and counts (2)
N_ROS_MEMO = ROS_MEMO_START_COUNTS + 2
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
def _new_jacobian(state, f0, loads, track, tables, model, step_inputs, search, results, jac_state,
                  y_work, f_work, key):
    """Compute the kept Jacobian at `state` (f0 = f(state), the points of its full
    search in `search`, put back after each column): each column by a forward
    difference with the update RHS (the points re-located at the perturbed
    state; loads: the contact points' N and angle at `state`); the caller
    restarts its age. Returns the number of RHS evaluations."""
    jac_state[JAC_COUNTS] = search.counts[0]
    jac_state[JAC_COUNTS + 1] = search.counts[1]
    jac_state[JAC_CONTACT:JAC_MATRIX] = loads.reshape(2 * MAX_POINTS * N_LOAD)
    jac = jac_state[JAC_MATRIX:].reshape((N_STATE, N_STATE))
    points = search.points
    saved = points.copy()
    for j in range(N_STATE):
        y_work[:] = state
        y_work[j] += JACOBIAN_STEP[j]
        _update_rhs(y_work, track, tables, model, step_inputs, search, results, f_work, key)
        for i in range(N_STATE):
            jac[i, j] = (f_work[i] - f0[i]) / JACOBIAN_STEP[j]
        points[:] = saved
    return N_STATE


@njit(cache=True, error_model="numpy", _nrt=False)
def _invert_iteration_matrix(jac, dt, w, w_inv):
    """w_inv = (I - dt d J)^-1 by Gauss-Jordan elimination with partial pivoting.
    Written out (12 x 12) rather than numpy.linalg.inv: that one raises on a
    singular matrix, and nothing may raise inside the FMU's compiled step.
    Returns False if W is singular or the inverse not finite (the caller then
    shortens the step, which changes W)."""
    n = N_STATE
    for i in range(n):
        for j in range(n):
            w[i, j] = -dt * ROS_D * jac[i, j]
            w_inv[i, j] = 0.0
        w[i, i] += 1.0
        w_inv[i, i] = 1.0
    for col in range(n):
        pivot = col
        largest = abs(w[col, col])
        for r in range(col + 1, n):
            if abs(w[r, col]) > largest:
                largest = abs(w[r, col])
                pivot = r
        if not (largest > 1e-300 and math.isfinite(largest)):
            return False
        if pivot != col:
            for j in range(n):
                w[col, j], w[pivot, j] = w[pivot, j], w[col, j]
                w_inv[col, j], w_inv[pivot, j] = w_inv[pivot, j], w_inv[col, j]
        scale = 1.0 / w[col, col]
        for j in range(n):
            w[col, j] *= scale
            w_inv[col, j] *= scale
        for r in range(n):
            if r != col and w[r, col] != 0.0:
                factor = w[r, col]
                for j in range(n):
                    w[r, j] -= factor * w[col, j]
                    w_inv[r, j] -= factor * w_inv[col, j]
    for i in range(n):
        for j in range(n):
            if not math.isfinite(w_inv[i, j]):
                return False
    return True


@njit(cache=True, error_model="numpy", _nrt=False)
def _multiply(matrix, vector, out):
    for i in range(N_STATE):
        acc = 0.0
        for j in range(N_STATE):
            acc += matrix[i, j] * vector[j]
        out[i] = acc


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
    if memo[ROS_MEMO_END_VALID] != 1.0 or not _key_matches(key, state, rail_motion):
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
def integrate_rosenbrock(state, h, dt_max, distance, data, inputs, tables, step_inputs, search,
                         results, table_search, key):
    """Adaptive steps of the W-method ROS_* over the host step h, none longer than
    dt_max, under the error test of integrate_embedded (ERROR_SCALE, tolerance;
    the shortest step ROS_MIN_STEP). The stages: f(y0) with the full contact search (the
    points of the step before reused at the same pose), f1 with the update
    (re-location), f2 at the new state with the full search (a point born in
    the step enters the error estimate). The Jacobian and the step size are
    kept from step to step and from host step to host step (JAC_*:
    data.jacobian). Returns as integrate_embedded."""
    model = data.model
    memo = data.rosenbrock_memo
    st = data.stages
    f0 = st[0]
    k1 = st[1]
    f1 = st[2]
    k2 = st[3]
    f2 = st[4]
    k3 = st[5]
    y_stage = st[6]
    y_new = st[7]
    jac_state = data.jacobian
    jac = jac_state[JAC_MATRIX:].reshape((N_STATE, N_STATE))
    speed = model[M_SPEED]
    tolerance = model[M_TOLERANCE]
    max_steps = int(model[M_MAX_STEPS])
    points = search.points
    counts = search.counts
    track = _track_at(data, distance, inputs)
    n_rhs = 0
    if _end_rhs_holds(memo, state, track, inputs, model, key, step_inputs.rail_motion):
        f0[:] = memo[ROS_MEMO_END_F:ROS_MEMO_END_F + N_STATE]
    else:
        _full_rhs(state, track, tables, model, step_inputs, search, results, f0, table_search,
                  key, bool(True))
        n_rhs = 1
    memo[ROS_MEMO_END_VALID] = 0.0
    # the contact points of the full search at the current step's start, put back
    # after a rejected step and after each Jacobian (their stages move them)
    start_points = memo[ROS_MEMO_START_POINTS:ROS_MEMO_START_KEY].reshape(points.shape)
    start_key = memo[ROS_MEMO_START_KEY:ROS_MEMO_START_COUNTS]
    start_counts = memo[ROS_MEMO_START_COUNTS:ROS_MEMO_START_COUNTS + 2]     # (as floats)
    _copy_points(points, counts, key, start_points, start_counts, start_key)
    w = memo[ROS_MEMO_W:ROS_MEMO_W_INV].reshape((N_STATE, N_STATE))
    w_inv = memo[ROS_MEMO_W_INV:ROS_MEMO_W_JACOBIAN].reshape((N_STATE, N_STATE))
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
            n_rhs += _new_jacobian(state, f0, loads, _track_at(data, distance + speed * t, inputs),
                                   tables, model, step_inputs, search, results, jac_state, y_stage,
                                   f1, key)
            age = 0.0
            _copy_points(start_points, start_counts, start_key, points, counts, key)
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
            if _invert_iteration_matrix(jac, dt, w, w_inv):
                dt_inverted = dt
                memo[ROS_MEMO_W_DT] = dt
                w_jacobian[:, :] = jac
        if dt == dt_inverted:
            _multiply(w_inv, f0, k1)                                # k1 = W^-1 f0
            for j in range(N_STATE):
                y_stage[j] = state[j] + 0.5 * dt * k1[j]
            _update_rhs(y_stage, _track_at(data, distance + speed * (t + 0.5 * dt), inputs),
                        tables, model, step_inputs, search, results, f1, key)
            for j in range(N_STATE):
                rhs[j] = f1[j] - k1[j]
            _multiply(w_inv, rhs, k2)                               # k2 = W^-1 (f1 - k1) + k1
            for j in range(N_STATE):
                k2[j] += k1[j]
                y_new[j] = state[j] + dt * k2[j]
            # (the last step's end at distance + speed * h, where the next host step begins)
            track = _track_at(data, distance + speed * (h if last else t + dt), inputs)
            _full_rhs(y_new, track, tables, model, step_inputs, search, results, f2,
                      table_search, key, bool(True))
            for j in range(N_STATE):
                rhs[j] = f2[j] - ROS_E32 * (k2[j] - f1[j]) - 2.0 * (k1[j] - f0[j])
            _multiply(w_inv, rhs, k3)                               # k3, for the estimate
            n_rhs += 2
            err = 0.0
            for j in range(N_STATE):
                r = _scaled_error(dt / 6.0 * (k1[j] - 2.0 * k2[j] + k3[j]), j, state, y_new,
                                  tolerance)
                err += r * r
            err = math.sqrt(err / N_STATE)
        shortest = dt <= dt_min * (1.0 + 1e-9)
        if shortest and not math.isfinite(err):
            return -1
        if err <= 1.0 or shortest:          # (a NaN fails the test)
            state[:] = y_new
            f0[:] = f2
            age += dt
            factor = _step_factor(err, ROS_EXPONENT)
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
            _copy_points(points, counts, key, start_points, start_counts, start_key)
            fresh = False
        else:
            _copy_points(start_points, start_counts, start_key, points, counts, key)
            factor = _step_factor(err, ROS_EXPONENT)
            refresh = not fresh
        dt = min(max(dt * factor, dt_min), dt_max)


@njit(cache=True, error_model="numpy", _nrt=True)
def _step_inputs(inputs):
    """The StepInputs of the flat input vector (U_*): (2, 3) views of its parts."""
    return StepInputs(inputs[U_RAIL_MOTION:U_RAIL_MOTION + 6].reshape((2, 3)),
                      inputs[U_RAIL_VELOCITY:U_RAIL_VELOCITY + 6].reshape((2, 3)),
                      inputs[U_BOX_FORCE:U_BOX_FORCE + 6].reshape((2, 3)),
                      inputs[U_BOX_MOMENT:U_BOX_MOMENT + 6].reshape((2, 3)), inputs[U_TORQUE])


# A communication step is integrated over h rounded to 40 significant bits
# (relative change at most 2^-40, 9e-13): hosts compute the same step in
# different ways (FMPy as (n + 1) h - n h, libcosim from integer nanoseconds,
# Ecos by summing), which differ in the last bits, and the adaptive
# integrator's step sequence turns such differences into output differences far
# above rounding (measured on the Klingel run: 2e-5 of Q and 1e-3 of Y after
# 8 s). Rounded, every host's step is the same number (unless it straddles a
# rounding boundary: a chance of about 1e-3 per distinct step value). The
# model's time goes on by h (the host's clock, exactly), its distance by the
# rounded step (where the step's integration ended: the next step's track
# point, bit for bit), within 9e-13 of speed times time, relative.
STEP_BITS = 40


@njit(cache=True, error_model="numpy", _nrt=False)
def quantized_step(h):
    """h (s, > 0 and finite) rounded to STEP_BITS significant bits."""
    mantissa, exponent = math.frexp(h)
    return math.ldexp(round(math.ldexp(mantissa, STEP_BITS)), exponent - STEP_BITS)


@njit(cache=True, error_model="numpy", _nrt=True)
def advance_kernel(state, h, n_sub, distance, inputs, step_data):
    """Advance the state by h in n_sub equal substeps (the adaptive integrators:
    in steps of at most h / n_sub; see the module docstring).

    inputs: the input vector of solver.dynamics (U_*); step_data: the plain
    tuple of a StepData (numba types a plain tuple from its fast fingerprint,
    a named tuple passed from Python through a slow path: about 6 us more per
    call, measured; so the per-step entry takes the plain tuple and names it
    here). The state, contact rows and summary before the step are copied into
    saved_*; on a problem they are NOT restored here (the caller composes its
    message from the rejected step's values, then restores). Returns (problem
    code, side or the index of a bad input, RHS evaluations); the record is
    rebuilt only for an accepted step."""
    data = StepData(*step_data)
    for j in range(U_CURVATURE):
        if not math.isfinite(inputs[j]):
            return PROBLEM_BAD_INPUT, j, 0
    for j in (U_CURVATURE, U_CANT):
        if math.isinf(inputs[j]):
            return PROBLEM_BAD_INPUT, j, 0
    step_inputs = _step_inputs(inputs)
    tables = ContactTables(data.wheel_table, data.rail_table, data.geometry_params)
    search = ContactBuffers(data.work, data.points, data.counts)
    results = ContactResults(data.contact, data.summary)
    table_search = TableSearch(TableArrays(data.table_params, data.table_flags, data.table_nodes),
                               TableScratch(data.table_rows, data.table_index))
    model = data.model
    dt = h / n_sub
    speed = model[M_SPEED]
    data.saved_state[:] = state
    data.saved_contact[:] = data.contact
    data.saved_summary[:] = data.summary
    if not _key_matches(data.search_key, state, step_inputs.rail_motion):
        # the rails moved (or the pose was set) since the last contact search: the
        # penetration at the step's start, with the rails where the inputs put them
        # (a rail jumped into the wheel beyond max_penetration is refused here, not
        # integrated through: Hertz's half-space no longer holds)
        _full_rhs(state, _track_at(data, distance, inputs), tables, model, step_inputs, search,
                  results, data.stages[0], table_search, data.search_key, bool(False))
        if data.summary[O_MAX_PENETRATION] > data.max_penetration:
            data.search_key[K_VALID] = 0.0      # a retry of this step checks again
            return PROBLEM_PENETRATION, -1, 1
    if data.integrator_id == 4:
        n_rhs = integrate_rosenbrock(state, h, dt, distance, data, inputs, tables, step_inputs,
                                     search, results, table_search, data.search_key)
    elif data.integrator_id >= 2:         # adaptive: dt is the largest step
        tableau = RK23 if data.integrator_id == 2 else RK45
        n_rhs = integrate_embedded(state, h, dt, tableau, distance, data, inputs, tables,
                                   step_inputs, search, results, table_search, data.search_key)
    else:
        samples = TrackSamples(np.empty(n_sub), np.empty(n_sub), np.empty(n_sub))
        for i in range(n_sub):
            samples.curvature[i], samples.curvature_rate[i], samples.cant[i] = _track_at(
                data, distance + speed * dt * i, inputs)
        if data.integrator_id == 0:
            n_rhs = integrate_rk4(state, n_sub, dt, samples, tables, model, step_inputs, search,
                                  results, data.stages, table_search, data.search_key)
        else:
            n_rhs = integrate_semi_implicit(state, n_sub, dt, samples, tables, model, step_inputs,
                                            search, results, data.stages, table_search,
                                            data.search_key)
    limits = StepLimits(data.max_penetration, data.tread_end, data.flange_tip)
    code, side = step_problem(state, n_rhs, results, limits)
    if code != PROBLEM_NONE:
        return code, side, n_rhs
    fill_record(state, results, model[M_BOX_SEMI_SPACING], data.derived, data.record)
    return PROBLEM_NONE, -1, n_rhs
