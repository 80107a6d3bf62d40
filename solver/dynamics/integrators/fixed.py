"""Fixed-step integrators: classical RK4 and semi-implicit Euler."""

from typing import NamedTuple

import numpy as np
from numba import njit

from ...layout import M_SPEED, N_STATE, S_RAIL, S_RAIL_RATE, S_VX, S_X
from ..acceptance import state_is_finite
from ..rhs import TrackPoint
from .stages import full_rhs, track_at, update_rhs


class TrackSamples(NamedTuple):
    """The track layout at the start of each substep of a host step, (n_sub,) arrays."""

    curvature: np.ndarray        # 1/m
    curvature_rate: np.ndarray   # d kappa / ds (1/m^2)
    cant: np.ndarray             # rad


@njit(cache=True, error_model="numpy", _nrt=False)
def _track_point(samples, step):
    return TrackPoint(samples.curvature[step], samples.curvature_rate[step], samples.cant[step])


@njit(cache=True, error_model="numpy", _nrt=True)
def _track_samples(step, data, inputs):
    """The TrackSamples at the start of each of the step's n_sub substeps."""
    samples = TrackSamples(np.empty(step.n_sub), np.empty(step.n_sub), np.empty(step.n_sub))
    speed = data.model[M_SPEED]
    for i in range(step.n_sub):
        samples.curvature[i], samples.curvature_rate[i], samples.cant[i] = track_at(
            data, step.distance + speed * step.dt * i, inputs)
    return samples


@njit(cache=True, error_model="numpy", _nrt=True)
def integrate_rk4(state, step, data, inputs, step_inputs, contact):
    """n_sub classical RK4 steps of size dt (the stages k1..k4 and the stage state
    in data.stages); returns as every integrator (solver.dynamics.integrators.stages)."""
    n_sub, dt = step.n_sub, step.dt
    samples = _track_samples(step, data, inputs)
    model = data.model
    key = data.search_key
    st = data.stages
    k1, k2, k3, k4, tmp = st[0], st[1], st[2], st[3], st[4]
    n_rhs = 0
    for sub in range(n_sub):
        track = _track_point(samples, sub)
        # (the stages' contact rows are not read: only the last RHS below fills them)
        full_rhs(state, track, model, step_inputs, contact, k1, key, bool(False))
        for j in range(N_STATE):
            tmp[j] = state[j] + 0.5 * dt * k1[j]
        update_rhs(tmp, track, model, step_inputs, contact, k2, key)
        for j in range(N_STATE):
            tmp[j] = state[j] + 0.5 * dt * k2[j]
        update_rhs(tmp, track, model, step_inputs, contact, k3, key)
        for j in range(N_STATE):
            tmp[j] = state[j] + dt * k3[j]
        update_rhs(tmp, track, model, step_inputs, contact, k4, key)
        for j in range(N_STATE):
            state[j] += dt / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j])
        n_rhs += 4
        if not state_is_finite(state):
            return -1
    # one RHS evaluation at the end of the step, so that the contact results
    # (the outputs) belong to the final state; its contact points serve the
    # first stage of the next step (same pose, key)
    full_rhs(state, _track_point(samples, n_sub - 1), model, step_inputs, contact, k1, key,
             bool(True))
    return n_rhs + 1


@njit(cache=True, error_model="numpy", _nrt=True)
def integrate_semi_implicit(state, step, data, inputs, step_inputs, contact):
    """n_sub semi-implicit (symplectic) Euler steps: velocities first, then
    positions with the new velocities. One RHS evaluation per step; stable for
    stiff contact springs at steps where explicit Euler is not."""
    n_sub, dt = step.n_sub, step.dt
    samples = _track_samples(step, data, inputs)
    model = data.model
    key = data.search_key
    k1 = data.stages[0]
    n_rhs = 0
    for sub in range(n_sub):
        full_rhs(state, _track_point(samples, sub), model, step_inputs, contact, k1, key,
                 bool(True))
        for j in range(6):
            state[S_VX + j] += dt * k1[S_VX + j]
            state[S_RAIL_RATE + j] += dt * k1[S_RAIL_RATE + j]
        for j in range(6):
            state[S_X + j] += dt * state[S_VX + j]
            state[S_RAIL + j] += dt * state[S_RAIL_RATE + j]
        n_rhs += 1
        if not state_is_finite(state):
            return -1
    full_rhs(state, _track_point(samples, n_sub - 1), model, step_inputs, contact, k1, key,
             bool(True))
    return n_rhs + 1
