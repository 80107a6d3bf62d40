"""Fixed-step integrators inside one communication step.

`WheelsetModel.advance(h)` splits the host step h into n = ceil(h / internal
step) equal substeps, so that it reaches exactly t + h for any host step (the
host step may vary from call to call), and runs one of these numba kernels
over the substeps. The state is the plain array of solver.wheelset (12
entries); the kernels update it in place.

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
the integrator, the acceptance check (solver.wheelset.step_problem) and the
output record (solver.wheelset.fill_record). `WheelsetModel.advance_vector`
calls it; only the messages of a discarded step are composed in Python.
"""
import math

import numpy as np
from numba import njit

from .track import track_state_kernel
from .wheelset import (M_BOX_SEMI_SPACING, M_SPEED, N_STATE, PROBLEM_BAD_INPUT,
                             PROBLEM_NONE, U_BOX_FORCE, U_BOX_MOMENT, U_CANT, U_CURVATURE,
                             U_RAIL_MOTION, U_RAIL_VELOCITY, U_TORQUE, fill_record,
                             state_is_finite, step_problem, wheelset_rhs)


def substeps(h: float, internal_step: float):
    """(n, dt): the number of equal substeps not longer than internal_step, and their size."""
    n = max(1, int(math.ceil(h / internal_step - 1e-9)))
    return n, h / n


@njit(cache=True)
def _contact_at_final_state(state, n_sub, curvature, curvature_rate, cant, wheel, rail, gparams,
                            model, rail_motion, rail_velocity, box_force, box_moment, axle_torque,
                            work, points, counts, contact, summary, deriv):
    """One RHS evaluation at the end of the step, so that the contact results
    (the outputs) belong to the final state."""
    wheelset_rhs(state, curvature[n_sub - 1], curvature_rate[n_sub - 1], cant[n_sub - 1],
                 wheel, rail, gparams, model, rail_motion, rail_velocity, box_force,
                 box_moment, axle_torque, work, points, counts, contact, summary, deriv)


@njit(cache=True)
def integrate_rk4(state, n_sub, dt, curvature, curvature_rate, cant, wheel, rail, gparams,
                  model, rail_motion, rail_velocity, box_force, box_moment, axle_torque,
                  work, points, counts, contact, summary, k1, k2, k3, k4, tmp):
    """n_sub classical RK4 steps of size dt (track values per substep in arrays).

    Returns the number of right-hand-side evaluations, or -1 if the state
    became non-finite (the caller restores the state and reports it)."""
    n_rhs = 0
    for step in range(n_sub):
        kap = curvature[step]
        kap_r = curvature_rate[step]
        ct = cant[step]
        wheelset_rhs(state, kap, kap_r, ct, wheel, rail, gparams, model, rail_motion,
                     rail_velocity, box_force, box_moment, axle_torque, work, points,
                     counts, contact, summary, k1)
        for j in range(N_STATE):
            tmp[j] = state[j] + 0.5 * dt * k1[j]
        wheelset_rhs(tmp, kap, kap_r, ct, wheel, rail, gparams, model, rail_motion,
                     rail_velocity, box_force, box_moment, axle_torque, work, points,
                     counts, contact, summary, k2, True)
        for j in range(N_STATE):
            tmp[j] = state[j] + 0.5 * dt * k2[j]
        wheelset_rhs(tmp, kap, kap_r, ct, wheel, rail, gparams, model, rail_motion,
                     rail_velocity, box_force, box_moment, axle_torque, work, points,
                     counts, contact, summary, k3, True)
        for j in range(N_STATE):
            tmp[j] = state[j] + dt * k3[j]
        wheelset_rhs(tmp, kap, kap_r, ct, wheel, rail, gparams, model, rail_motion,
                     rail_velocity, box_force, box_moment, axle_torque, work, points,
                     counts, contact, summary, k4, True)
        for j in range(N_STATE):
            state[j] += dt / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j])
        n_rhs += 4
        if not state_is_finite(state):
            return -1
    _contact_at_final_state(state, n_sub, curvature, curvature_rate, cant, wheel, rail, gparams,
                            model, rail_motion, rail_velocity, box_force, box_moment, axle_torque,
                            work, points, counts, contact, summary, k1)
    return n_rhs + 1


@njit(cache=True)
def integrate_semi_implicit(state, n_sub, dt, curvature, curvature_rate, cant, wheel, rail,
                            gparams, model, rail_motion, rail_velocity, box_force, box_moment,
                            axle_torque, work, points, counts, contact, summary, k1, k2, k3, k4,
                            tmp):
    """n_sub semi-implicit (symplectic) Euler steps: velocities first, then
    positions with the new velocities. One RHS evaluation per step; stable for
    stiff contact springs at steps where explicit Euler is not."""
    n_rhs = 0
    for step in range(n_sub):
        wheelset_rhs(state, curvature[step], curvature_rate[step], cant[step], wheel, rail,
                     gparams, model, rail_motion, rail_velocity, box_force, box_moment,
                     axle_torque, work, points, counts, contact, summary, k1)
        for j in range(6):
            state[6 + j] += dt * k1[6 + j]
        for j in range(6):
            state[j] += dt * state[6 + j]
        n_rhs += 1
        if not state_is_finite(state):
            return -1
    _contact_at_final_state(state, n_sub, curvature, curvature_rate, cant, wheel, rail, gparams,
                            model, rail_motion, rail_velocity, box_force, box_moment, axle_torque,
                            work, points, counts, contact, summary, k1)
    return n_rhs + 1


INTEGRATORS = {"rk4": integrate_rk4, "semi-implicit": integrate_semi_implicit}
INTEGRATOR_IDS = {"rk4": 0, "semi-implicit": 1}


@njit(cache=True)
def advance_kernel(state, h, n_sub, distance, inputs, track_table, rail_distance, track_length,
                   wheel, rail, gparams, model, integrator_id, limits, work, points, counts,
                   contact, summary, k, saved_state, saved_contact, saved_summary, derived,
                   record):
    """Advance the state by h in n_sub equal substeps (see the module docstring).

    inputs: the input vector of solver.wheelset (U_*); limits: max penetration,
    lift tolerance, lateral position of the flange tip on the wheel. The state,
    contact rows and summary before the step are copied into saved_*; on a
    problem they are NOT restored here (the caller composes its message from the
    rejected step's values, then restores). Returns (problem code, side or the
    index of a bad input, RHS evaluations); the record is rebuilt only for an
    accepted step."""
    for j in range(U_CURVATURE):
        if not math.isfinite(inputs[j]):
            return PROBLEM_BAD_INPUT, j, 0
    for j in (U_CURVATURE, U_CANT):
        if math.isinf(inputs[j]):
            return PROBLEM_BAD_INPUT, j, 0
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
    dt = h / n_sub
    curvature = np.empty(n_sub)
    curvature_rate = np.empty(n_sub)
    cant = np.empty(n_sub)
    speed = model[M_SPEED]
    for i in range(n_sub):
        curvature[i], curvature_rate[i], cant[i] = track_state_kernel(
            track_table, rail_distance, track_length, distance + speed * dt * i)
        if math.isfinite(inputs[U_CURVATURE]):
            curvature[i] = inputs[U_CURVATURE]
            curvature_rate[i] = 0.0
        if math.isfinite(inputs[U_CANT]):
            cant[i] = inputs[U_CANT]
    saved_state[:] = state
    saved_contact[:] = contact
    saved_summary[:] = summary
    if integrator_id == 0:
        n_rhs = integrate_rk4(state, n_sub, dt, curvature, curvature_rate, cant, wheel, rail,
                              gparams, model, rail_motion, rail_velocity, box_force, box_moment,
                              inputs[U_TORQUE], work, points, counts, contact, summary,
                              k[0], k[1], k[2], k[3], k[4])
    else:
        n_rhs = integrate_semi_implicit(state, n_sub, dt, curvature, curvature_rate, cant,
                                        wheel, rail, gparams, model, rail_motion, rail_velocity,
                                        box_force, box_moment, inputs[U_TORQUE], work, points,
                                        counts, contact, summary, k[0], k[1], k[2], k[3], k[4])
    code, side = step_problem(state, n_rhs, summary, contact, limits[0], limits[1], limits[2])
    if code != PROBLEM_NONE:
        return code, side, n_rhs
    fill_record(state, contact, summary, model[M_BOX_SEMI_SPACING], derived, record)
    return PROBLEM_NONE, -1, n_rhs
