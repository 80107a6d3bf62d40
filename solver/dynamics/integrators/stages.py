"""What every integrator's stages share: the right-hand side with the full
contact search or the update, the search key, the track point of a stage, and
the arguments every integrator takes (HostStep; the StepContact of
solver.dynamics.rhs).

An integrator's kernel (solver.dynamics.integrators.methods) is
    integrate(state, step, data, inputs, step_inputs, contact) -> RHS evaluations
state the N_STATE vector (advanced in place), step a HostStep, data the
StepData, inputs the flat input vector (U_*), step_inputs its StepInputs,
contact a StepContact. It returns the number of RHS evaluations, -1 if the
state became non-finite or N_RHS_STEP_SIZE if it needed more than
model[M_MAX_STEPS] steps (the caller restores the state and reports it). Its
last RHS is a full one (full_rhs with record True) at the step's end: the
outputs are that evaluation's contact rows.
"""

import math
from typing import NamedTuple

from numba import njit

from ...layout import (
    KEY_POSE, KEY_RAIL, KEY_VALID, S_RAIL, S_ROLL, S_Y, S_YAW, S_Z, U_CANT, U_CURVATURE,
)
from ...track.alignment import track_state_kernel
from ..rhs import TrackPoint, wheelset_rhs


class HostStep(NamedTuple):
    """One communication step as an integrator takes it."""

    h: float          # the step (s), as integrated (integrate.quantized_step)
    n_sub: int        # the number of substeps of a fixed-step integrator
    dt: float         # h / n_sub: the fixed step, or an adaptive integrator's largest step
    distance: float   # distance travelled at the step's start (m)


@njit(cache=True, error_model="numpy", _nrt=False)
def key_matches(key, state, rail_motion):
    """True if the contact points in the buffers are those of a full search at
    this state's pose and rails (bit for bit): the rail inputs `rail_motion`
    plus the lumped rail bodies' displacements (solver.dynamics.rhs
    rails_under_wheels)."""
    if key[KEY_VALID] != 1.0:
        return False
    if (key[KEY_POSE] != state[S_Y] or key[KEY_POSE + 1] != state[S_Z]
            or key[KEY_POSE + 2] != state[S_ROLL] or key[KEY_POSE + 3] != state[S_YAW]):
        return False
    for side in range(2):
        for c in range(3):
            if key[KEY_RAIL + 3 * side + c] != rail_motion[side, c] + state[S_RAIL + 3 * side + c]:
                return False
    return True


@njit(cache=True, error_model="numpy", _nrt=False)
def set_key(key, state, rail_motion):
    key[KEY_VALID] = 1.0
    key[KEY_POSE] = state[S_Y]
    key[KEY_POSE + 1] = state[S_Z]
    key[KEY_POSE + 2] = state[S_ROLL]
    key[KEY_POSE + 3] = state[S_YAW]
    for side in range(2):
        for c in range(3):
            key[KEY_RAIL + 3 * side + c] = rail_motion[side, c] + state[S_RAIL + 3 * side + c]


# numba compiles a function once per literal value of an argument written as a
# constant (True, False, None) but once for all values of a plain bool, and
# wheelset_rhs inlines the whole contact model (3-4 s of compiling each time,
# measured). So the integrators call it in two versions only: the
# full search with `record` a plain bool (callers of _full_rhs pass bool(...)),
# and the update of the inner stages, whose constant flags let numba leave the
# search and the contact rows out of that version.
@njit(cache=True, error_model="numpy", _nrt=False)
def full_rhs(state, track, model, inputs, contact, deriv, key, record):
    """wheelset_rhs with the full contact search, or with the points already in the
    buffers when `key` says they belong to this pose and rail motion (the same
    points bit for bit: the search is a function of them only).
    contact: a StepContact; record: wheelset_rhs's (False: the contact rows are
    not filled), a plain bool."""
    reuse = key_matches(key, state, inputs.rail_motion)
    wheelset_rhs(state, track, model, inputs, contact, deriv, False, reuse, record)
    if not reuse:
        set_key(key, state, inputs.rail_motion)


@njit(cache=True, error_model="numpy", _nrt=False)
def update_rhs(state, track, model, inputs, contact, deriv, key):
    """wheelset_rhs with the contact update (the points re-located: the key no longer holds),
    at an inner stage: its contact rows are not filled (no caller reads them)."""
    key[KEY_VALID] = 0.0
    wheelset_rhs(state, track, model, inputs, contact, deriv, True, False, False)


@njit(cache=True, error_model="numpy", _nrt=False)
def track_at(data, s, inputs):
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


@njit(cache=True, error_model="numpy", _nrt=True)
def copy_points(points, counts, key, to_points, to_counts, to_key):
    """Copy the contact points of a search, their counts and their search key
    (counts between integer and float arrays: small whole numbers, exact)."""
    to_points[:] = points
    for side in range(2):
        to_counts[side] = int(counts[side])
    to_key[:] = key
