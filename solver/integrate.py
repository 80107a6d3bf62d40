"""Fixed-step integrators inside one communication step.

`WheelsetModel.advance(h)` splits the host step h into n = ceil(h / internal
step) equal substeps, so that it reaches exactly t + h for any host step (the
host step may vary from call to call), and runs one of these numba kernels
over the substeps. The state is the plain array of solver.dynamics (N_STATE
entries, S_*); the kernels update it in place.

- `integrate_rk4`: classical 4th-order Runge-Kutta, 4 RHS evaluations per
  substep (default). The full multipoint contact search runs at the first
  stage of every substep; stages 2-4 keep that set of contact points and
  re-locate each one on the profiles at the stage's state (a new contact
  point thus enters at the next substep, at most one internal step later,
  when its penetration is still nil). The default internal step of 1 ms was chosen by
  measurement on the Ren & Jin R400 and Kang R320 scenarios: lateral
  displacement, outer-wheel Q, Y and flange force are the same to 4-5
  significant digits for 0.25, 0.5, 1 and 1.25 ms, while 2 ms is unstable
  (the stiff flange contact makes the wheelset bounce off the rails); 1 ms
  keeps a factor 2 from that limit.
- `integrate_semi_implicit`: semi-implicit (symplectic) Euler, velocities
  first, then positions with the new velocities; one RHS per substep, for
  stiff flange contact at small steps.
Both return the number of RHS evaluations, or -1 if the state became
non-finite (the caller restores the state and reports a discarded step).

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

from .dynamics import (M_BOX_SEMI_SPACING, M_SPEED, N_STATE, PROBLEM_BAD_INPUT, PROBLEM_NONE,
                       S_ROLL, S_Y, S_YAW, S_Z,
                       U_BOX_FORCE, U_BOX_MOMENT, U_CANT, U_CURVATURE, U_RAIL_MOTION,
                       U_RAIL_VELOCITY, U_TORQUE, ContactResults, StepInputs, StepLimits,
                       TrackPoint, fill_record, state_is_finite, step_problem, wheelset_rhs)
from .geometry import ContactBuffers, ContactTables
from .geometry_table import TableArrays, TableScratch, TableSearch
from .track import track_state_kernel

INTEGRATOR_IDS = {"rk4": 0, "semi-implicit": 1}

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
    lift_tolerance: float
    flange_tip: float
    work: np.ndarray              # geometry.ContactBuffers fields
    points: np.ndarray
    counts: np.ndarray
    contact: np.ndarray           # dynamics.ContactResults fields
    summary: np.ndarray
    stages: np.ndarray            # (5, N_STATE): RK4 stages k1..k4 and the stage state
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


@njit(cache=True)
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


@njit(cache=True)
def _set_key(key, state, rail_motion):
    key[K_VALID] = 1.0
    key[K_POSE] = state[S_Y]
    key[K_POSE + 1] = state[S_Z]
    key[K_POSE + 2] = state[S_ROLL]
    key[K_POSE + 3] = state[S_YAW]
    for side in range(2):
        for c in range(3):
            key[K_RAIL + 3 * side + c] = rail_motion[side, c]


@njit(cache=True)
def _full_rhs(state, track, tables, model, inputs, search, results, deriv, table_search, key):
    """wheelset_rhs with the full contact search, or with the points already in the
    buffers when `key` says they belong to this pose and rail motion (the same
    points bit for bit: the search is a function of them only). key None: always search."""
    if key is None:
        wheelset_rhs(state, track, tables, model, inputs, search, results, deriv, False, table_search)
        return
    reuse = _key_matches(key, state, inputs.rail_motion)
    wheelset_rhs(state, track, tables, model, inputs, search, results, deriv, False, table_search,
                 reuse)
    if not reuse:
        _set_key(key, state, inputs.rail_motion)


@njit(cache=True)
def _update_rhs(state, track, tables, model, inputs, search, results, deriv, key):
    """wheelset_rhs with the contact update (the points re-located: the key no longer holds)."""
    if key is not None:
        key[K_VALID] = 0.0
    wheelset_rhs(state, track, tables, model, inputs, search, results, deriv, True)


@njit(cache=True)
def _track_point(samples, step):
    return TrackPoint(samples.curvature[step], samples.curvature_rate[step], samples.cant[step])


@njit(cache=True)
def integrate_rk4(state, n_sub, dt, samples, tables, model, inputs, search, results, stages,
                  table_search=None, key=None):
    """n_sub classical RK4 steps of size dt (TrackSamples per substep; stages a
    (5, N_STATE) scratch array: k1..k4 and the stage state; key the search key
    K_* or None).

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
        _full_rhs(state, track, tables, model, inputs, search, results, k1, table_search, key)
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
              table_search, key)
    return n_rhs + 1


@njit(cache=True)
def integrate_semi_implicit(state, n_sub, dt, samples, tables, model, inputs, search, results,
                            stages, table_search=None, key=None):
    """n_sub semi-implicit (symplectic) Euler steps: velocities first, then
    positions with the new velocities. One RHS evaluation per step; stable for
    stiff contact springs at steps where explicit Euler is not."""
    k1 = stages[0]
    n_rhs = 0
    for step in range(n_sub):
        _full_rhs(state, _track_point(samples, step), tables, model, inputs, search, results, k1,
                  table_search, key)
        for j in range(6):
            state[6 + j] += dt * k1[6 + j]
        for j in range(6):
            state[j] += dt * state[6 + j]
        n_rhs += 1
        if not state_is_finite(state):
            return -1
    _full_rhs(state, _track_point(samples, n_sub - 1), tables, model, inputs, search, results, k1,
              table_search, key)
    return n_rhs + 1


@njit(cache=True)
def _step_inputs(inputs):
    """The StepInputs of the flat input vector (U_*)."""
    rail_motion = np.empty((2, 3))
    rail_velocity = np.empty((2, 3))
    box_force = np.empty((2, 3))
    box_moment = np.empty((2, 3))
    for side in range(2):
        for c in range(3):
            j = 3 * side + c
            rail_motion[side, c] = inputs[U_RAIL_MOTION + j]
            rail_velocity[side, c] = inputs[U_RAIL_VELOCITY + j]
            box_force[side, c] = inputs[U_BOX_FORCE + j]
            box_moment[side, c] = inputs[U_BOX_MOMENT + j]
    return StepInputs(rail_motion, rail_velocity, box_force, box_moment, inputs[U_TORQUE])


@njit(cache=True)
def advance_kernel(state, h, n_sub, distance, inputs, step_data):
    """Advance the state by h in n_sub equal substeps (see the module docstring).

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
    samples = TrackSamples(np.empty(n_sub), np.empty(n_sub), np.empty(n_sub))
    speed = model[M_SPEED]
    for i in range(n_sub):
        samples.curvature[i], samples.curvature_rate[i], samples.cant[i] = track_state_kernel(
            data.track_table, data.rail_distance, data.track_length, distance + speed * dt * i)
        if math.isfinite(inputs[U_CURVATURE]):
            samples.curvature[i] = inputs[U_CURVATURE]
            samples.curvature_rate[i] = 0.0
        if math.isfinite(inputs[U_CANT]):
            samples.cant[i] = inputs[U_CANT]
    data.saved_state[:] = state
    data.saved_contact[:] = data.contact
    data.saved_summary[:] = data.summary
    if data.integrator_id == 0:
        n_rhs = integrate_rk4(state, n_sub, dt, samples, tables, model, step_inputs, search,
                              results, data.stages, table_search, data.search_key)
    else:
        n_rhs = integrate_semi_implicit(state, n_sub, dt, samples, tables, model, step_inputs,
                                        search, results, data.stages, table_search, data.search_key)
    limits = StepLimits(data.max_penetration, data.lift_tolerance, data.flange_tip)
    code, side = step_problem(state, n_rhs, results, limits)
    if code != PROBLEM_NONE:
        return code, side, n_rhs
    fill_record(state, results, model[M_BOX_SEMI_SPACING], data.derived, data.record)
    return PROBLEM_NONE, -1, n_rhs
