"""Fixed-step integrators: classical RK4 and semi-implicit Euler."""

from typing import NamedTuple

import numpy as np
from numba import njit

from ...layout import N_STATE
from ..acceptance import state_is_finite
from ..rhs import TrackPoint
from .stages import _full_rhs, _update_rhs


class TrackSamples(NamedTuple):
    """The track layout at the start of each substep of a host step, (n_sub,) arrays."""

    curvature: np.ndarray        # 1/m
    curvature_rate: np.ndarray   # d kappa / ds (1/m^2)
    cant: np.ndarray             # rad


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
