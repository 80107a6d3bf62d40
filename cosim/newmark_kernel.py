"""numba kernels of the assembled track engine (cosim.track_fe.AssembledTrack):
the banded Cholesky solve and one whole Newmark step with the linearised
wheel-rail contact (Woodbury update), so that a step is one compiled call."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def band_solve(abt, b):
    """x with U^T U x = b, U upper triangular, given abt = the TRANSPOSE of
    LAPACK's upper band storage (abt[j, bw + i - j] = U[i, j], row j holds
    column j of U: the forward sweep reads it contiguously)."""
    bw = abt.shape[1] - 1
    n = b.shape[0]
    y = np.empty(n)
    for j in range(n):
        s = b[j]
        i0 = max(0, j - bw)
        for i in range(i0, j):
            s -= abt[j, bw + i - j] * y[i]
        y[j] = s / abt[j, bw]
    x = np.empty(n)
    for i in range(n - 1, -1, -1):
        s = y[i]
        for j in range(i + 1, min(n, i + bw + 1)):
            s -= abt[j, bw + i - j] * x[j]
        x[i] = s / abt[i, bw]
    return x


@njit(cache=True)
def permuted_solve(abt, perm, inverse, b):
    return band_solve(abt, b[perm])[inverse]


@njit(cache=True)
def csr_matvec(data, indices, indptr, x, out):
    for r in range(out.shape[0]):
        s = 0.0
        for k in range(indptr[r], indptr[r + 1]):
            s += data[k] * x[indices[k]]
        out[r] += s


@njit(cache=True)
def newmark_step(u, v, a, coefficients, mc_data, mc_indices, mc_indptr, abt, perm, inverse,
                 dofs, g, loads, stiffness, damping, z):
    """One Newmark step (gamma, beta of `coefficients` = h, gamma, a0..a5).

    dofs (m, 10), g (m, 10, 3): the points' element dofs and consistent nodal
    loads of a unit (lateral, vertical, torque); loads (m, 3); stiffness and
    damping (m, 3, 3): the linearised contact, load = F - S dw - D dw'
    (zero matrices: none); z (n, 3m): K_eff^-1 of the points' unit loads.
    Returns (u, v, a) at the end of the step."""
    n = u.shape[0]
    m = dofs.shape[0]
    h, gamma = coefficients[0], coefficients[1]
    a0, a1, a2, a3, a4, a5 = (coefficients[2], coefficients[3], coefficients[4],
                              coefficients[5], coefficients[6], coefficients[7])
    w = np.empty(2 * n)
    for i in range(n):
        w[i] = a0 * u[i] + a2 * v[i] + a3 * a[i]
        w[n + i] = a1 * u[i] + a4 * v[i] + a5 * a[i]
    rhs = np.zeros(n)
    csr_matvec(mc_data, mc_indices, mc_indptr, w, rhs)
    seff = np.zeros((m, 3, 3))
    for p in range(m):
        for r in range(3):
            for c in range(3):
                seff[p, r, c] = stiffness[p, r, c] + a1 * damping[p, r, c]
        wu = np.zeros(3)
        wr = np.zeros(3)
        for r in range(3):
            for k in range(10):
                wu[r] += g[p, k, r] * u[dofs[p, k]]
                wr[r] += g[p, k, r] * ((a4 + 1.0) * v[dofs[p, k]] + a5 * a[dofs[p, k]])
        force = np.zeros(3)
        for r in range(3):
            force[r] = loads[p, r]
            for c in range(3):
                force[r] += seff[p, r, c] * wu[c] + damping[p, r, c] * wr[c]
        for k in range(10):
            s = 0.0
            for r in range(3):
                s += g[p, k, r] * force[r]
            rhs[dofs[p, k]] += s
    y = permuted_solve(abt, perm, inverse, rhs)
    k3 = 3 * m
    mat = np.eye(k3)
    vec = np.zeros(k3)
    utz = np.zeros((k3, k3))
    uty = np.zeros(k3)
    for p in range(m):
        for r in range(3):
            for k in range(10):
                d = dofs[p, k]
                uty[3 * p + r] += g[p, k, r] * y[d]
                for c in range(k3):
                    utz[3 * p + r, c] += g[p, k, r] * z[d, c]
    for p in range(m):
        for r in range(3):
            for c in range(3):
                vec[3 * p + r] += seff[p, r, c] * uty[3 * p + c]
                for q in range(k3):
                    mat[3 * p + r, q] += seff[p, r, c] * utz[3 * p + c, q]
    coef = np.linalg.solve(mat, vec)
    u_new = y - z @ coef
    a_new = np.empty(n)
    v_new = np.empty(n)
    for i in range(n):
        a_new[i] = a0 * (u_new[i] - u[i]) - a2 * v[i] - a3 * a[i]
        v_new[i] = v[i] + h * ((1.0 - gamma) * a[i] + gamma * a_new[i])
    return u_new, v_new, a_new
