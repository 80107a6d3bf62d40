"""Kalker's exact three-dimensional theory of steady rolling contact, discretised
(boundary elements on the elastic half-space), as an independent reference for
the approximate creep models (FASTSIM, FaStrip, Polach, ...).

Problem (Kalker 1990, Three-Dimensional Elastic Bodies in Rolling Contact,
ch. 2 and 5): a Hertz ellipse x^2/a^2 + y^2/b^2 <= 1 with the elliptic
pressure p_n = 3N/(2 pi a b) sqrt(1 - x^2/a^2 - y^2/b^2); identical materials
(quasi-identity: the tangential problem does not feed back on the pressure);
steady rolling in +x, so that the material flows through the patch in -x and
enters at the leading edge x = a(y). Unknown: the tangential traction p on the
wheel (Pa). Slip of the wheel relative to the rail, divided by the speed:

    s(x, y) = w(x, y) + (u(x, y) - u(x + dx, y)) / dx,    w = (xi - phi*y, eta + phi*x)

(the displacement difference u is carried with the material; the backward
difference over one element is Kalker's discretisation of -du/dx along the
flow, first order in dx), with Coulomb's law: |p| <= mu*p_n; |p| < mu*p_n =>
s = 0 (adhesion); s != 0 => p = -mu*p_n * s/|s| (slip, the traction on the
wheel opposes its slip).

Elasticity: the displacement difference of two identical half-spaces under a
surface point force Q at the origin, with the combined shear modulus G and
Poisson ratio nu as Kalker defines them (Johnson 1985, Contact Mechanics,
eq. 3.86, for one body; doubled for the pair):

    u_x = Q_x/(pi G) * [(1 - nu)/r + nu x^2/r^3] + Q_y/(pi G) * nu x y / r^3
    u_y = Q_y/(pi G) * [(1 - nu)/r + nu y^2/r^3] + Q_x/(pi G) * nu x y / r^3

integrated exactly over rectangular elements of uniform traction
(primitives: int int 1/r = x asinh(y/|x|) + y asinh(x/|y|),
int int x^2/r^3 = y asinh(x/|y|), int int x y/r^3 = -r).

Solution: the steady state as the limit of Kalker's transient rolling (the
material moves on by one element per step; every step is a convex
quasi-static problem with the symmetric positive definite matrix A, solved by
block Gauss-Seidel with the exact local 2x2 Coulomb solution, warm-started),
marched until the traction changes by less than tol * max|p| per step.
(A Gauss-Seidel on the steady operator (A - A_shift)/dx itself does not
converge: it is far from diagonally dominant.)

Checks (tests/test_exact_rolling.py): in full adhesion (tiny creepages) the
forces reproduce Kalker's creep coefficients C11, C22, C23 of the linear
theory (Kalker 1990, Table E.3; solver.contact.creep.kalker.kalker_coefficients), and on
CONTACT's reference case (a = 8 mm, b = 4 mm, Fn = 82 kN, G = 82 GPa,
nu = 0.28, mu = 0.3, eta = -6.25e-4, phi = 0.625 1/m) Fy/(mu Fn) approaches
the published full-theory value -0.6074 as the grid is refined.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ...errors import CreepError


@njit(cache=True)
def _primitive_xx(x, y, nu):
    """Corner primitive of int int [(1-nu)/r + nu x^2/r^3] dx dy."""
    t1 = 0.0 if x == 0.0 else x * math.asinh(y / abs(x))
    t2 = 0.0 if y == 0.0 else y * math.asinh(x / abs(y))
    return (1.0 - nu) * t1 + t2


@njit(cache=True)
def _primitive_yy(x, y, nu):
    """Corner primitive of int int [(1-nu)/r + nu y^2/r^3] dx dy."""
    t1 = 0.0 if x == 0.0 else x * math.asinh(y / abs(x))
    t2 = 0.0 if y == 0.0 else y * math.asinh(x / abs(y))
    return t1 + (1.0 - nu) * t2


@njit(cache=True)
def _influence(xf, yf, xs, ys, hx, hy, nu):
    """(Axx, Axy, Ayy) * pi*G: displacement difference at the field point
    (xf, yf) per unit uniform traction on the element centred at (xs, ys)
    with half sizes hx, hy."""
    axx = 0.0
    ayy = 0.0
    axy = 0.0
    for cx in range(2):
        x = xf - xs + (hx if cx == 0 else -hx)     # field - source corner
        for cy in range(2):
            y = yf - ys + (hy if cy == 0 else -hy)
            sign = 1.0 if cx == cy else -1.0
            axx += sign * _primitive_xx(x, y, nu)
            ayy += sign * _primitive_yy(x, y, nu)
            axy += sign * (-nu * math.sqrt(x * x + y * y))
    return axx, axy, ayy


@njit(cache=True)
def _assemble(xc, yc, hx, hy, nu, shift):
    """Influence matrices (n, n) of u at the element centres (shift = 0) or at
    the centres moved by `shift` in x, per unit traction (times pi*G)."""
    n = xc.size
    axx = np.empty((n, n))
    axy = np.empty((n, n))
    ayy = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            a, b, c = _influence(xc[i] + shift, yc[i], xc[j], yc[j], hx, hy, nu)
            axx[i, j] = a
            axy[i, j] = b
            ayy[i, j] = c
    return axx, axy, ayy


@njit(cache=True)
def _local(rx, ry, cxx, cxy, cyy, g):
    """Traction q of one element: the minimiser of q.C q/2 + r.q over |q| <= g
    (C the element's own 2x2 SPD influence block), i.e. s = r + C q = 0 inside
    the bound, s = -lambda q (lambda >= 0, slip opposite to the traction) on
    it. On the bound q(lambda) = -(C + lambda I)^-1 r with |q(lambda)| = g,
    |q| decreasing in lambda: solved by bisection on lambda."""
    det = cxx * cyy - cxy * cxy
    qx = -(cyy * rx - cxy * ry) / det
    qy = -(-cxy * rx + cxx * ry) / det
    if math.hypot(qx, qy) <= g:
        return qx, qy, 1
    if g <= 0.0:
        return 0.0, 0.0, 2
    lo = 0.0
    hi = math.hypot(rx, ry) / g          # |q(hi)| <= |r| / hi = g
    for _ in range(200):
        lam = 0.5 * (lo + hi)
        dxx = cxx + lam
        dyy = cyy + lam
        d = dxx * dyy - cxy * cxy
        qx = -(dyy * rx - cxy * ry) / d
        qy = -(-cxy * rx + dxx * ry) / d
        if math.hypot(qx, qy) > g:
            lo = lam
        else:
            hi = lam
        if hi - lo <= 1e-14 * hi:
            break
    # exactly on the bound, in the direction found
    t = math.hypot(qx, qy)
    return qx * g / t, qy * g / t, 2


@njit(cache=True)
def _march(axx, axy, ayy, sxx, sxy, syy, wx, wy, bound, tol, max_steps, max_sweeps):
    """Steady rolling as the limit of Kalker's transient rolling: at every step
    the material moves on by one element length dx and
        s = w + (A p_new - A_shift p_old) / dx
    (A, A_shift already divided by dx), a convex quasi-static problem per step
    (A symmetric positive definite) solved by block Gauss-Seidel, warm-started
    from the previous step. Marches until the traction changes by less than
    tol * max|p| from one step to the next.
    Returns (px, py, state, steps, converged)."""
    n = wx.size
    px = np.zeros(n)
    py = np.zeros(n)
    state = np.ones(n, dtype=np.int8)
    cx = np.zeros(n)
    cy = np.zeros(n)
    sx = np.zeros(n)
    sy = np.zeros(n)
    gmax = 0.0
    for i in range(n):
        gmax = max(gmax, bound[i])
    steps = 0
    converged = False
    for step in range(max_steps):
        # displacement of the previous traction, carried one element downstream
        for i in range(n):
            ux = 0.0
            uy = 0.0
            for j in range(n):
                ux += sxx[i, j] * px[j] + sxy[i, j] * py[j]
                uy += sxy[i, j] * px[j] + syy[i, j] * py[j]
            cx[i] = wx[i] - ux
            cy[i] = wy[i] - uy
        old_x = px.copy()
        old_y = py.copy()
        # s = c + A p, kept current during the sweeps
        for i in range(n):
            ux = 0.0
            uy = 0.0
            for j in range(n):
                ux += axx[i, j] * px[j] + axy[i, j] * py[j]
                uy += axy[i, j] * px[j] + ayy[i, j] * py[j]
            sx[i] = cx[i] + ux
            sy[i] = cy[i] + uy
        scale_in = 0.0
        for i in range(n):
            scale_in = max(scale_in, math.hypot(px[i], py[i]))
        if scale_in <= 0.0:
            scale_in = gmax
        for sweep in range(max_sweeps):
            change = 0.0
            for i in range(n):
                rx = sx[i] - axx[i, i] * px[i] - axy[i, i] * py[i]
                ry = sy[i] - axy[i, i] * px[i] - ayy[i, i] * py[i]
                qx, qy, st = _local(rx, ry, axx[i, i], axy[i, i], ayy[i, i], bound[i])
                dx = qx - px[i]
                dy = qy - py[i]
                if dx != 0.0 or dy != 0.0:
                    for j in range(n):
                        sx[j] += axx[j, i] * dx + axy[j, i] * dy
                        sy[j] += axy[j, i] * dx + ayy[j, i] * dy
                    px[i] = qx
                    py[i] = qy
                state[i] = st
                change = max(change, abs(dx), abs(dy))
            if change <= 0.01 * tol * scale_in:
                break
        step_change = 0.0
        scale = 0.0
        for i in range(n):
            step_change = max(step_change, abs(px[i] - old_x[i]), abs(py[i] - old_y[i]))
            scale = max(scale, math.hypot(px[i], py[i]))
        steps = step + 1
        if step_change <= tol * scale:
            converged = True
            break
    return px, py, state, steps, converged


@dataclass(frozen=True)
class ExactRollingResult:
    """Forces of the rail on the wheel (N, N*m), contact frame as solver.contact.creep."""
    fx: float
    fy: float
    mz: float
    x: np.ndarray           # element centres (m)
    y: np.ndarray
    traction_x: np.ndarray  # Pa
    traction_y: np.ndarray
    pressure: np.ndarray
    state: np.ndarray       # 1 adhesion, 2 slip
    element_area: float
    iterations: int         # transient steps to the steady state
    converged: bool


def exact_rolling(xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson,
                  mx=24, my=24, tol=1e-6, max_steps=2000, max_sweeps=200) -> ExactRollingResult:
    """Kalker's exact steady rolling solution on the Hertz ellipse (semi-axes a
    along x (rolling), b), on a uniform mx x my grid over [-a, a] x [-b, b]
    (elements whose centre lies inside the ellipse are in contact). Creepages as
    solver.contact.creep: xi, eta (-), phi (1/m); forces of the rail on the wheel."""
    for name, v in (("xi", xi), ("eta", eta), ("phi", phi), ("a", a), ("b", b),
                    ("normal_force", normal_force), ("friction", friction),
                    ("shear_modulus", shear_modulus), ("poisson", poisson)):
        if not math.isfinite(float(v)):
            raise CreepError(f"{name} must be finite, got {v!r}")
    if not (a > 0 and b > 0 and normal_force > 0 and friction > 0 and shear_modulus > 0):
        raise CreepError("a, b, normal_force, friction and shear_modulus must be > 0")
    if not 0.0 <= poisson < 0.5:
        raise CreepError("poisson must be in [0, 0.5)")
    mx, my = int(mx), int(my)
    if mx < 2 or my < 2:
        raise CreepError("mx and my must be >= 2")
    dx, dy = 2.0 * a / mx, 2.0 * b / my
    xs = -a + (np.arange(mx) + 0.5) * dx
    ys = -b + (np.arange(my) + 0.5) * dy
    gx, gy = np.meshgrid(xs, ys)                      # (my, mx)
    inside = (gx / a) ** 2 + (gy / b) ** 2 < 1.0
    xc, yc = gx[inside], gy[inside]
    shape = np.sqrt(np.maximum(1.0 - (xc / a) ** 2 - (yc / b) ** 2, 0.0))
    area = dx * dy
    pn = float(normal_force) / (shape.sum() * area) * shape   # sum(p dA) = N exactly
    scale = 1.0 / (math.pi * float(shear_modulus))
    a0 = _assemble(xc, yc, 0.5 * dx, 0.5 * dy, float(poisson), 0.0)
    a1 = _assemble(xc, yc, 0.5 * dx, 0.5 * dy, float(poisson), dx)
    f = scale / dx
    axx, axy, ayy = (m * f for m in a0)
    sxx, sxy, syy = (m * f for m in a1)
    wx = float(xi) - float(phi) * yc
    wy = float(eta) + float(phi) * xc
    px, py, state, iterations, converged = _march(axx, axy, ayy, sxx, sxy, syy, wx, wy,
                                                  float(friction) * pn, float(tol),
                                                  int(max_steps), int(max_sweeps))
    fx = float(px.sum() * area)
    fy = float(py.sum() * area)
    mz = float(((xc * py) - (yc * px)).sum() * area)
    if not converged:
        raise ArithmeticError(f"exact rolling solution not steady after {iterations} steps")
    return ExactRollingResult(fx, fy, mz, xc, yc, px, py, pn, state, area, int(iterations), True)


def exact_rolling_extrapolated(xi, eta, phi, a, b, normal_force, friction, shear_modulus,
                               poisson, n_coarse=24, n_fine=48):
    """(Fx, Fy, Mz) from two grids n_coarse^2 and n_fine^2 (n_fine = 2 n_coarse),
    Richardson-extrapolated for the first-order error of the rolling difference
    (F = 2 F_fine - F_coarse), and the fine-grid result (for the spread)."""
    coarse = exact_rolling(xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson,
                           n_coarse, n_coarse)
    fine = exact_rolling(xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson,
                         n_fine, n_fine)
    extrap = tuple(2.0 * f - c for f, c in zip((fine.fx, fine.fy, fine.mz),
                                              (coarse.fx, coarse.fy, coarse.mz)))
    return extrap, fine
