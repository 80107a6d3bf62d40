"""Whether a step is accepted: the problems the step check finds (non-finite
state, excessive penetration, derailment, a wheel off its rail, a flight too long)."""

import math
from typing import NamedTuple

from numba import njit

from ..layout import C_ACTIVE, C_S_WHEEL, O_MAX_PENETRATION, O_RAIL_ON_WHEEL_LEFT


PROBLEM_NONE, PROBLEM_NON_FINITE, PROBLEM_PENETRATION = 0, 1, 2
PROBLEM_DERAILMENT = 4   # a loaded contact at the flange tip: the wheel has climbed its rail
PROBLEM_BAD_INPUT = 5    # a non-finite entry in the input vector (checked before integrating)
PROBLEM_STEP_SIZE = 6    # the adaptive integrator needed more than M_MAX_STEPS steps (accepted
                         # or rejected) in one host step
PROBLEM_OFF_RAIL = 7     # derailment: a wheel has dropped off its rail head inside the gauge
PROBLEM_AIRBORNE = 8     # derailment: both wheels off the rails longer than the airborne limit
                         # (solver/dynamics/derailment.py airborne_limit; checked by the step's bookkeeping)
N_RHS_STEP_SIZE = -2     # the RHS count an integrator returns for PROBLEM_STEP_SIZE
CLIMB_MARGIN = 0.003     # a loaded contact within 3 mm of the flange tip: the wheel climbs


class StepLimits(NamedTuple):
    """What an accepted step may not exceed."""

    max_penetration: float   # m
    tread_end: float         # lateral coordinate of the wheel profile's field-side end (m)
    flange_tip: float        # lateral coordinate of the flange tip on the wheel profile (m)


@njit(cache=True, error_model="numpy", _nrt=False)
def state_is_finite(state):
    """True if every entry of the state vector is finite."""
    for j in range(state.shape[0]):
        if not math.isfinite(state[j]):
            return False
    return True


@njit(cache=True, error_model="numpy", _nrt=False)
def step_problem(state, n_rhs, results, limits):
    """Why a step cannot be accepted: (PROBLEM_* code, side). `results` the
    ContactResults at the end of the step, `limits` the StepLimits. Checked in
    this order: the adaptive integrator out of steps, non-finite
    state, penetration above limits.max_penetration, a loaded contact point within
    CLIMB_MARGIN of the flange tip (derailment: the wheel has climbed over the
    rail, risen by the flange height), a wheel whose rail head's centre lies
    beyond the field-side end of its profile (derailment: the wheel has dropped
    off the rail head inside the gauge)."""
    summary = results.summary
    contact = results.contact
    max_penetration = limits.max_penetration
    flange_tip = limits.flange_tip
    if n_rhs == N_RHS_STEP_SIZE:
        return PROBLEM_STEP_SIZE, -1
    if n_rhs < 0 or not state_is_finite(state):
        return PROBLEM_NON_FINITE, -1
    if summary[O_MAX_PENETRATION] > max_penetration:
        return PROBLEM_PENETRATION, -1
    for side in range(2):
        for i in range(contact.shape[1]):
            if contact[side, i, C_ACTIVE] > 0.5 and contact[side, i, C_S_WHEEL] < flange_tip + CLIMB_MARGIN:
                return PROBLEM_DERAILMENT, side
    for side in range(2):
        if not summary[O_RAIL_ON_WHEEL_LEFT + side] <= limits.tread_end:
            return PROBLEM_OFF_RAIL, side
    return PROBLEM_NONE, -1
