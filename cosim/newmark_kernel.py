"""numba kernels of the assembled track engine (cosim.track_fe.AssembledTrack).

One track step is one compiled call (``newmark_step``): the moving loads'
element and shape-function table, the Newmark right-hand side, the banded
Cholesky solve of the effective stiffness factorised once, the linearised
wheel-rail contact by a Woodbury update, the state update in place and the
rail motion interpolated at the loaded points. Nothing is allocated per step
but a few arrays of 3 m numbers (m = number of loaded points).

Woodbury update (contact springs S, dampers D at the points, G = the points'
consistent nodal load vectors, n x 3m): (K_eff + G S_eff G^T) u = r is
u = K_eff^-1 (r - G c) with (I + S_eff A) c = S_eff G^T K_eff^-1 r and
A = G^T K_eff^-1 G. The 10 x 10 block of K_eff^-1 at an element's ten dofs is
solved once per element on first use and kept (K_eff does not change, so the
blocks stay valid through the window shifts); two points on different
connected parts of the model (the two rails, which interact only through the
vehicle) have no coupling term; two points on different elements of the same
part take three extra solves (not the case of a wheelset, one point per rail).
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def profile_solve_inplace(forward, first_row, backward, last_col, inv_d2, x):
    """x <- (U^T U)^-1 x for the band Cholesky factor U, as U^T U = W^T D^2 W
    with W = D^-1 U unit upper triangular (D = diag U) and only the nonzero
    envelope of each row visited:
    forward[j, bw + i - j] = U[i, j] / U[i, i] for first_row[j] <= i < j
    (the rows of W^T), backward[i, k] = U[i, i + k] / U[i, i] for
    1 <= k <= last_col[i] (the rows of W), inv_d2 = 1 / U[i, i]^2. The term of
    the newest unknown comes last in each row (short dependency chain)."""
    bw = forward.shape[1] - 1
    n = x.shape[0]
    for j in range(n):                       # W^T z = b
        s = x[j]
        for i in range(first_row[j], j):
            s -= forward[j, bw + i - j] * x[i]
        x[j] = s
    for j in range(n):
        x[j] *= inv_d2[j]
    for i in range(n - 1, -1, -1):           # W x = D^-2 z
        s = x[i]
        for k in range(last_col[i], 0, -1):
            s -= backward[i, k] * x[i + k]
        x[i] = s


@njit(cache=True)
def permuted_solve(factor, perm, b, work, out):
    """out = K^-1 b for K = P^T U^T U P (P the band ordering: work[i] = b[perm[i]]);
    factor = (forward, first_row, backward, last_col, inv_d2) of profile_solve_inplace."""
    n = b.shape[0]
    for i in range(n):
        work[i] = b[perm[i]]
    profile_solve_inplace(factor[0], factor[1], factor[2], factor[3], factor[4], work)
    for i in range(n):
        out[perm[i]] = work[i]


@njit(cache=True)
def bending_shape(xi, length, phi):
    """The shape functions of cosim.track_fe.bending_shape (same formulas)."""
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
def _element_block(factor, perm, first, blocks, have, node, unit, work, column):
    """The 10 x 10 block of K^-1 at the dofs first..first+9, solved once."""
    if have[node]:
        return
    n = unit.shape[0]
    for j in range(10):
        for i in range(n):
            unit[i] = 0.0
        unit[first + j] = 1.0
        permuted_solve(factor, perm, unit, work, column)
        for k in range(10):
            blocks[node, k, j] = column[first + k]
    have[node] = True


@njit(cache=True)
def newmark_step(u, v, a, coefficients, mc_data, mc_indices, mc_indptr, factor, perm,
                 rail_first, component, element_length, n_nodes, phi_lateral, phi_vertical,
                 sides, xs, loads, stiffness, damping, blocks, have, work, axis):
    """One Newmark step (coefficients = h, gamma, a0..a5), state updated in place.

    sides (m,), xs (m,): the loaded points (rail, model coordinate); loads
    (m, 3): lateral, vertical force, torque at the end of the step; stiffness
    and damping (m, 3, 3): the linearised contact, load = F - S dw - D dw'
    (w = the axis' lateral, vertical, roll at the point; zero matrices: none);
    factor, perm: the effective stiffness' profile factor in its band ordering
    (permuted_solve); rail_first (2,): first dof of each rail; component
    (n,): connected part of each dof; blocks (n_rail_nodes, 10, 10), have:
    the element blocks of K_eff^-1 (filled on first use); work (7 n,):
    scratch. Writes into axis
    (m, 2, 3) the axis' (lateral, vertical, roll) and their rates at the points
    after the step."""
    n = u.shape[0]
    m = xs.shape[0]
    h, gamma = coefficients[0], coefficients[1]
    a0, a1, a2, a3, a4, a5 = (coefficients[2], coefficients[3], coefficients[4],
                              coefficients[5], coefficients[6], coefficients[7])
    wmc = work[0:2 * n]               # the M and C multipliers, one vector
    rhs = work[2 * n:3 * n]
    y = work[3 * n:4 * n]
    scratch = work[4 * n:5 * n]
    unit = work[5 * n:6 * n]
    column = work[6 * n:7 * n]
    # the points' elements and shape-function tables
    first = np.empty(m, dtype=np.int64)
    g = np.empty((m, 10, 3))
    for p in range(m):
        e = point_table(xs[p], element_length, n_nodes, phi_lateral, phi_vertical, g[p])
        first[p] = rail_first[sides[p]] + 5 * e
    # right-hand side: M (a0 u + a2 v + a3 a) + C (a1 u + a4 v + a5 a) + loads
    for i in range(n):
        wmc[i] = a0 * u[i] + a2 * v[i] + a3 * a[i]
        wmc[n + i] = a1 * u[i] + a4 * v[i] + a5 * a[i]
    for r in range(n):
        s = 0.0
        for k in range(mc_indptr[r], mc_indptr[r + 1]):
            s += mc_data[k] * wmc[mc_indices[k]]
        rhs[r] = s
    seff = np.empty((m, 3, 3))
    springs = False
    for p in range(m):
        f0 = first[p]
        wu = np.zeros(3)
        wr = np.zeros(3)
        for r in range(3):
            for k in range(10):
                wu[r] += g[p, k, r] * u[f0 + k]
                wr[r] += g[p, k, r] * ((a4 + 1.0) * v[f0 + k] + a5 * a[f0 + k])
        force = np.zeros(3)
        for r in range(3):
            force[r] = loads[p, r]
            for c in range(3):
                seff[p, r, c] = stiffness[p, r, c] + a1 * damping[p, r, c]
                if seff[p, r, c] != 0.0 or damping[p, r, c] != 0.0:
                    springs = True
                force[r] += seff[p, r, c] * wu[c] + damping[p, r, c] * wr[c]
        for k in range(10):
            s = 0.0
            for r in range(3):
                s += g[p, k, r] * force[r]
            rhs[f0 + k] += s
    permuted_solve(factor, perm, rhs, scratch, y)
    if springs:
        k3 = 3 * m
        gtkg = np.zeros((k3, k3))          # A = G^T K_eff^-1 G
        for p in range(m):
            node = first[p] // 5
            _element_block(factor, perm, first[p], blocks, have, node, unit, scratch,
                           column)
            for q in range(m):
                if component[first[q]] != component[first[p]]:
                    continue
                if first[q] == first[p]:
                    for r in range(3):
                        for c in range(3):
                            s = 0.0
                            for i in range(10):
                                for j in range(10):
                                    s += g[p, i, r] * blocks[node, i, j] * g[q, j, c]
                            gtkg[3 * p + r, 3 * q + c] = s
                else:                      # same part, other element: K^-1 G_q solved
                    for c in range(3):
                        for i in range(n):
                            unit[i] = 0.0
                        for j in range(10):
                            unit[first[q] + j] = g[q, j, c]
                        permuted_solve(factor, perm, unit, scratch, column)
                        for r in range(3):
                            s = 0.0
                            for i in range(10):
                                s += g[p, i, r] * column[first[p] + i]
                            gtkg[3 * p + r, 3 * q + c] = s
        mat = np.eye(k3)
        vec = np.zeros(k3)
        gty = np.zeros(k3)
        for p in range(m):
            for r in range(3):
                for k in range(10):
                    gty[3 * p + r] += g[p, k, r] * y[first[p] + k]
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
                rhs[first[p] + k] -= s
        permuted_solve(factor, perm, rhs, scratch, y)
    for i in range(n):
        un = y[i]
        an = a0 * (un - u[i]) - a2 * v[i] - a3 * a[i]
        v[i] = v[i] + h * ((1.0 - gamma) * a[i] + gamma * an)
        a[i] = an
        u[i] = un
    for p in range(m):
        f0 = first[p]
        for r in range(3):
            sd = 0.0
            sr = 0.0
            for k in range(10):
                sd += g[p, k, r] * u[f0 + k]
                sr += g[p, k, r] * v[f0 + k]
            axis[p, 0, r] = sd
            axis[p, 1, r] = sr


@njit(cache=True)
def interpolate_points(u, v, rail_first, element_length, n_nodes, phi_lateral, phi_vertical,
                       sides, xs, axis):
    """axis (m, 2, 3): the axis' (lateral, vertical, roll) and rates at the points."""
    g = np.empty((10, 3))
    for p in range(xs.shape[0]):
        e = point_table(xs[p], element_length, n_nodes, phi_lateral, phi_vertical, g)
        f0 = rail_first[sides[p]] + 5 * e
        for r in range(3):
            sd = 0.0
            sr = 0.0
            for k in range(10):
                sd += g[k, r] * u[f0 + k]
                sr += g[k, r] * v[f0 + k]
            axis[p, 0, r] = sd
            axis[p, 1, r] = sr
