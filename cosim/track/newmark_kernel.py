"""numba kernels of the assembled track engine (cosim.track.engines.AssembledTrack).

The two rails (each with its pads and half-sleepers) are the same system and
are joined only through the vehicle, so the engine keeps ONE rail's matrices
and steps both rails as the two columns of (n1, 2) arrays (n1 = unknowns of
one rail), ordered by the band (reverse Cuthill-McKee) ordering of that
rail's effective stiffness: the factor, the mass and damping products and
every loop serve both rails at once, without any permutation per step.

One track step is one compiled call (``newmark_step``): the moving loads'
element and shape-function table, the Newmark right-hand side, the solve with
the effective stiffness factorised once, the linearised wheel-rail contact by
a Woodbury update, the state updated in place and the rail motion
interpolated at the loaded points. Nothing of size n1 is allocated per step.

Woodbury update (contact springs S, dampers D at the points, G = the points'
consistent nodal load vectors): (K_eff + G S_eff G^T) u = r is
u = K_eff^-1 (r - G c) with (I + S_eff A) c = S_eff G^T K_eff^-1 r and
A = G^T K_eff^-1 G. The 10 x 10 block of K_eff^-1 at an element's ten dofs is
solved once per element on first use and kept (K_eff does not change, so the
blocks stay valid through the window shifts, and both rails share them);
points on different rails have no coupling term; two points on different
elements of one rail take three extra solves (not the case of a wheelset,
one point per rail).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit


@njit(cache=True)
def profile_solve_pair(forward, first_row, backward, last_col, inv_d2, x):
    """x (n1, 2) <- (U^T U)^-1 x, both columns, for the band Cholesky factor U
    written as U^T U = W^T D^2 W with W = D^-1 U unit upper triangular
    (D = diag U), each row's nonzero envelope only:
    forward[j, bw + i - j] = U[i, j] / U[i, i] for first_row[j] <= i < j
    (the rows of W^T), backward[i, k] = U[i, i + k] / U[i, i] for
    1 <= k <= last_col[i] (the rows of W), inv_d2 = 1 / U[i, i]^2."""
    bw = forward.shape[1] - 1
    n = x.shape[0]
    for j in range(n):                       # W^T z = b
        s0 = x[j, 0]
        s1 = x[j, 1]
        for i in range(first_row[j], j):
            f = forward[j, bw + i - j]
            s0 -= f * x[i, 0]
            s1 -= f * x[i, 1]
        x[j, 0] = s0
        x[j, 1] = s1
    for i in range(n - 1, -1, -1):           # W x = D^-2 z
        s0 = x[i, 0] * inv_d2[i]
        s1 = x[i, 1] * inv_d2[i]
        for k in range(last_col[i], 0, -1):
            f = backward[i, k]
            s0 -= f * x[i + k, 0]
            s1 -= f * x[i + k, 1]
        x[i, 0] = s0
        x[i, 1] = s1


@njit(cache=True)
def _solve(factor, x):
    profile_solve_pair(factor[0], factor[1], factor[2], factor[3], factor[4], x)


@njit(cache=True)
def bending_shape(xi, length, phi):
    """The shape functions of cosim.track.fe_model.bending_shape (same formulas)."""
    x2 = xi * xi
    x3 = x2 * xi
    d = 1.0 + phi
    n1 = (1.0 - 3.0 * x2 + 2.0 * x3 + phi * (1.0 - xi)) / d
    n2 = length * (xi - 2.0 * x2 + x3 + 0.5 * phi * (xi - x2)) / d
    n3 = (3.0 * x2 - 2.0 * x3 + phi * xi) / d
    n4 = length * (-x2 + x3 + 0.5 * phi * (x2 - xi)) / d
    return n1, n2, n3, n4


@njit(cache=True)
def point_table(x, element_length, n_nodes, phi_lateral, phi_vertical, g):
    """Element index of the point x (m, model coordinate, inside the model) and
    in g (10, 3) the consistent nodal loads of a unit lateral force, vertical
    force and torque on the element's ten dofs (uy uz rx ry rz of both nodes;
    lateral slope = rz, vertical slope = -ry); g.T interpolates the axis'
    lateral, vertical displacement and roll at x."""
    e = min(int(x / element_length), n_nodes - 2)
    xi = (x - e * element_length) / element_length
    l1, l2, l3, l4 = bending_shape(xi, element_length, phi_lateral)
    v1, v2, v3, v4 = bending_shape(xi, element_length, phi_vertical)
    g[:, :] = 0.0
    g[0, 0] = l1
    g[4, 0] = l2
    g[5, 0] = l3
    g[9, 0] = l4
    g[1, 1] = v1
    g[3, 1] = -v2
    g[6, 1] = v3
    g[8, 1] = -v4
    g[2, 2] = 1.0 - xi
    g[7, 2] = xi
    return e


@njit(cache=True)
def _element_block(factor, element_dofs, e, blocks, have, unit):
    """The 10 x 10 block of K_eff^-1 at element e's ten dofs, solved once."""
    if have[e]:
        return
    for j in range(10):
        unit[:, :] = 0.0
        unit[element_dofs[e, j], 0] = 1.0
        _solve(factor, unit)
        for k in range(10):
            blocks[e, k, j] = unit[element_dofs[e, k], 0]
    have[e] = True


class RailGeometry(NamedTuple):
    """The rail's elements as point_table reads them."""

    element_length: float
    n_nodes: int
    phi_lateral: np.ndarray
    phi_vertical: np.ndarray


class NewmarkSystem(NamedTuple):
    """One rail's Newmark system (both rails share it)."""

    coefficients: np.ndarray   # h, gamma, a0..a5
    mc_data: np.ndarray        # CSR of [M C] of one rail (n1 x 2 n1, band order)
    mc_indices: np.ndarray
    mc_indptr: np.ndarray
    factor: np.ndarray         # the profile factor of its effective stiffness (profile_solve_pair)
    element_dofs: np.ndarray   # (n_nodes - 1, 10): the band-order rows of each element's dofs


class PointLoads(NamedTuple):
    """The loaded points of a step and the linearised contact at each."""

    sides: np.ndarray          # (m,) rail 0/1
    xs: np.ndarray             # (m,) model coordinate
    loads: np.ndarray          # (m, 3) lateral, vertical force, torque at the end of the step
    stiffness: np.ndarray      # (m, 3, 3): load = F - S dw - D dw' (zero matrices: none)
    damping: np.ndarray        # (m, 3, 3)


@njit(cache=True)
def newmark_step(state, system, geometry, points, scratch, axis):
    """One Newmark step of both rails; the state (u, v, a: (n1, 2) each, one
    column per rail, band order) is updated in place.

    system: the NewmarkSystem; geometry: the RailGeometry; points: the
    PointLoads (w = the axis' lateral, vertical, roll at the point); scratch:
    (blocks (n_nodes - 1, 10, 10), have: the element blocks of K_eff^-1, filled
    on first use; work (6 n1, 2)). Writes into axis (m, 2, 3) the axis'
    (lateral, vertical, roll) and their rates at the points after the step.
    Returns False (state untouched) when a load, stiffness or damping value is
    not finite, else True."""
    u, v, a = state
    coefficients, mc_data, mc_indices, mc_indptr, factor, element_dofs = system
    element_length, n_nodes, phi_lateral, phi_vertical = geometry
    sides, xs, loads, stiffness, damping = points
    blocks, have, work = scratch
    n = u.shape[0]
    m = xs.shape[0]
    for p in range(m):
        for r in range(3):
            if not np.isfinite(loads[p, r]):
                return False
            for q in range(3):
                if not (np.isfinite(stiffness[p, r, q]) and np.isfinite(damping[p, r, q])):
                    return False
    h, gamma = coefficients[0], coefficients[1]
    a0, a1, a2, a3, a4, a5 = (coefficients[2], coefficients[3], coefficients[4],
                              coefficients[5], coefficients[6], coefficients[7])
    wmc = work[0:2 * n]               # the M and C multipliers, stacked
    rhs = work[2 * n:3 * n]
    y = work[3 * n:4 * n]
    unit = work[4 * n:5 * n]
    # the points' elements and shape-function tables
    elem = np.empty(m, dtype=np.int64)
    g = np.empty((m, 10, 3))
    for p in range(m):
        elem[p] = point_table(xs[p], element_length, n_nodes, phi_lateral, phi_vertical, g[p])
    # right-hand side: M (a0 u + a2 v + a3 a) + C (a1 u + a4 v + a5 a) + loads
    for i in range(n):
        for c in range(2):
            wmc[i, c] = a0 * u[i, c] + a2 * v[i, c] + a3 * a[i, c]
            wmc[n + i, c] = a1 * u[i, c] + a4 * v[i, c] + a5 * a[i, c]
    for r in range(n):
        s0 = 0.0
        s1 = 0.0
        for k in range(mc_indptr[r], mc_indptr[r + 1]):
            j = mc_indices[k]
            s0 += mc_data[k] * wmc[j, 0]
            s1 += mc_data[k] * wmc[j, 1]
        rhs[r, 0] = s0
        rhs[r, 1] = s1
    seff = np.empty((m, 3, 3))
    springs = False
    for p in range(m):
        e, c = elem[p], sides[p]
        wu = np.zeros(3)
        wr = np.zeros(3)
        for r in range(3):
            for k in range(10):
                d = element_dofs[e, k]
                wu[r] += g[p, k, r] * u[d, c]
                wr[r] += g[p, k, r] * ((a4 + 1.0) * v[d, c] + a5 * a[d, c])
        force = np.zeros(3)
        for r in range(3):
            force[r] = loads[p, r]
            for q in range(3):
                seff[p, r, q] = stiffness[p, r, q] + a1 * damping[p, r, q]
                if seff[p, r, q] != 0.0 or damping[p, r, q] != 0.0:
                    springs = True
                force[r] += seff[p, r, q] * wu[q] + damping[p, r, q] * wr[q]
        for k in range(10):
            s = 0.0
            for r in range(3):
                s += g[p, k, r] * force[r]
            rhs[element_dofs[e, k], c] += s
    y[:, :] = rhs
    _solve(factor, y)
    if springs:
        k3 = 3 * m
        gtkg = np.zeros((k3, k3))          # A = G^T K_eff^-1 G
        for p in range(m):
            _element_block(factor, element_dofs, elem[p], blocks, have, unit)
        for p in range(m):
            ep = elem[p]
            for q in range(m):
                if sides[q] != sides[p]:
                    continue               # the rails are joined only through the vehicle
                if elem[q] == ep:
                    for r in range(3):
                        for c in range(3):
                            s = 0.0
                            for i in range(10):
                                for j in range(10):
                                    s += g[p, i, r] * blocks[ep, i, j] * g[q, j, c]
                            gtkg[3 * p + r, 3 * q + c] = s
                else:                      # same rail, other element: K^-1 G_q solved
                    for c in range(3):
                        unit[:, :] = 0.0
                        for j in range(10):
                            unit[element_dofs[elem[q], j], 0] = g[q, j, c]
                        _solve(factor, unit)
                        for r in range(3):
                            s = 0.0
                            for i in range(10):
                                s += g[p, i, r] * unit[element_dofs[ep, i], 0]
                            gtkg[3 * p + r, 3 * q + c] = s
        mat = np.eye(k3)
        vec = np.zeros(k3)
        gty = np.zeros(k3)
        for p in range(m):
            for r in range(3):
                for k in range(10):
                    gty[3 * p + r] += g[p, k, r] * y[element_dofs[elem[p], k], sides[p]]
        for p in range(m):
            for r in range(3):
                for c in range(3):
                    vec[3 * p + r] += seff[p, r, c] * gty[3 * p + c]
                    for q in range(k3):
                        mat[3 * p + r, q] += seff[p, r, c] * gtkg[3 * p + c, q]
        coef = np.linalg.solve(mat, vec)
        for p in range(m):                 # u_new = K_eff^-1 (rhs - G c)
            for k in range(10):
                s = 0.0
                for r in range(3):
                    s += g[p, k, r] * coef[3 * p + r]
                rhs[element_dofs[elem[p], k], sides[p]] -= s
        y[:, :] = rhs
        _solve(factor, y)
    for i in range(n):
        for c in range(2):
            un = y[i, c]
            an = a0 * (un - u[i, c]) - a2 * v[i, c] - a3 * a[i, c]
            v[i, c] = v[i, c] + h * ((1.0 - gamma) * a[i, c] + gamma * an)
            a[i, c] = an
            u[i, c] = un
    for p in range(m):
        e, c = elem[p], sides[p]
        for r in range(3):
            sd = 0.0
            sr = 0.0
            for k in range(10):
                d = element_dofs[e, k]
                sd += g[p, k, r] * u[d, c]
                sr += g[p, k, r] * v[d, c]
            axis[p, 0, r] = sd
            axis[p, 1, r] = sr
    return True


@njit(cache=True)
def interpolate_points(u, v, element_dofs, geometry, sides, xs, axis):
    """axis (m, 2, 3): the axis' (lateral, vertical, roll) and rates at the points
    (geometry: the RailGeometry)."""
    element_length, n_nodes, phi_lateral, phi_vertical = geometry
    g = np.empty((10, 3))
    for p in range(xs.shape[0]):
        e = point_table(xs[p], element_length, n_nodes, phi_lateral, phi_vertical, g)
        c = sides[p]
        for r in range(3):
            sd = 0.0
            sr = 0.0
            for k in range(10):
                d = element_dofs[e, k]
                sd += g[k, r] * u[d, c]
                sr += g[k, r] * v[d, c]
            axis[p, 0, r] = sd
            axis[p, 1, r] = sr
