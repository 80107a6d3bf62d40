"""FaStrip, the strip theory of Sichani, Enblom and Berg (2016)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...errors import CreepError
from .fastsim import FastsimResult, add_cell, fastsim_grid_kernel, uniform_grid_kernel
from .inputs import CreepPatch, check_finite, check_poisson
from .kalker import KALKER_TABLE, kalker_coefficients_from_table


# ----------------------------------------------------------------------------
# FaStrip (Sichani, Enblom & Berg 2016): strip theory + FASTSIM for the slip zone
# ----------------------------------------------------------------------------
# Source of the method: M. Sh. Sichani, R. Enblom, M. Berg, "An alternative to
# FASTSIM for tangential solution of the wheel-rail contact", Vehicle System
# Dynamics 54(6), 2016, 748-764, which amends Kalker's strip theory (J.J.
# Kalker, "A strip theory for rolling with slip and spin", Proc. KNAW B70,
# 1967) and takes the slip direction from FASTSIM. The equations below are
# those of the paper as transcribed in the open-source CONTACT program
# (E.A.H. Vollebregt; src/m_solvpt.f90, routines original_fastrip, "Original
# FaStrip method cf. Sichani", and modif_fastrip, CONTACT's recommended
# "Modified FaStrip", material option M = 5 of its user guide); the paper and
# thesis text themselves were not available here. Written anew for this
# project; no CONTACT code is used.
#
# 1. Creepages normalised so that the strip theory reproduces Kalker's linear
#    coefficients C11, C22, C23 (p0 the peak Hertz pressure, G, nu as in
#    creep_forces):
#      xi'  = -4(1-nu) C11 G xi  / (2 pi^2 mu p0)
#      eta' = -4(1-nu) C22 G eta / (2 pi^2 mu p0)
#      phi' = -3 sqrt(ab) C23 G phi / (2 pi mu p0)
# 2. Strip y (half length a_y = a sqrt(1 - y^2/b^2)): the adhesion zone is the
#    front part x > 2d - a_y (the leading edge is x = +a_y), d from
#      d = [sqrt(eta'^2 + (1-phi'^2) k^2) + eta' phi'] / (1 - phi'^2) * a/(1-nu),
#      k = xi' - phi' y/a;
#    the strip slides fully when d < 0, |phi'| = 1 exactly or the root is
#    imaginary (near phi' = -1 the formula has a finite limit when eta' > 0:
#    CONTACT's FASTSIM reference case has phi' = -1.003).
# 3. Traction in the adhesion zone (Carter-type difference of two half
#    ellipses), kappa, lambda the direction of (k, eta' + phi' d/a):
#      px = mu p0/a * kappa * (S_c - S_a),
#      py = mu p0/a * (lambda S_c - (lambda - phi') S_a),
#      S_c = sqrt(a_y^2 - x^2), S_a = sqrt((a_y - d)^2 - (x - d)^2).
# 4. Slip zone: |p| = mu p_n (elliptic Hertz pressure), in the direction of the
#    FASTSIM traction of the same cell.
# Variant (CONTACT's modified FaStrip, M = 5, with Kalker's flexibilities):
# the FASTSIM pass uses Kalker's three flexibilities L1, L2, L3 (1982) and the
# elliptic bound mu p_n (CONTACT M = 5 computes its own blended
# flexibilities); a strip whose strip-theory traction would exceed mu p0
# anywhere (|phi'| beyond the strip theory's range; Kalker 1967 states a
# limited range of spin) keeps its FASTSIM tractions, as in CONTACT M = 5.
# Without that check the total reaches 1.7 mu N (a/b ~ 8, phi' ~ -28).
# Linear limit (tests/test_creep.py): Fx = -f11 xi, Fy = -f22 eta - f23 phi
# in the continuum (the strip sums of steps 1-3). Grid: nx x ny equal cells
# over [-a, a] x [-b, b] (as FASTSIM_UNIFORM); cells whose centre lies inside
# the ellipse are in contact; p_n scaled so that sum(p_n dA) = N on the grid
# (so p0 -> 3N/(2 pi a b) as the grid is refined, and full sliding gives
# exactly mu N, as FASTSIM here).

FASTRIP_DEFAULT_N = 20


@njit(cache=True, error_model="numpy", _nrt=True)
def _fastrip_nb(patch, cells, out):
    """FaStrip forces (Fx, Fy, Mz, adhesion area, slip area) on a CreepPatch; see
    the block comment. cells (nx, ny); out (store, px, py, state): with store the
    tractions and states are written into the (ny, nx) arrays."""
    xi, eta, phi, a, b = patch.xi, patch.eta, patch.phi, patch.a, patch.b
    n, mu, g, nu = patch.normal_force, patch.friction, patch.shear_modulus, patch.poisson
    nx, ny = cells
    store, px_out, py_out, state_out = out
    c11, c22, c23, _ = kalker_coefficients_from_table(KALKER_TABLE, a / b, nu)
    l1 = 8.0 * a / (3.0 * c11 * g)
    l2 = 8.0 * a / (3.0 * c22 * g)
    l3 = math.pi * a * math.sqrt(a / b) / (4.0 * g * c23)
    pressure, x, y, x_leading = uniform_grid_kernel(a, b, n, nx, ny, 1)
    dx = 2.0 * a / nx
    dy = 2.0 * b / ny
    da = dx * dy
    # peak of the (normalised) elliptic pressure: p_n = p0 sqrt(1 - x^2/a^2 - y^2/b^2)
    total = 0.0
    for j in range(ny):
        for i in range(nx):
            s = 1.0 - (x[i] / a) ** 2 - (y[j] / b) ** 2
            if s > 0.0:
                total += math.sqrt(s)
    if not total > 0.0:
        return 0.0, 0.0, 0.0, 0.0, 0.0
    p0 = n / (total * da)
    mu_p0 = mu * p0
    fs_x = np.zeros((ny, nx))
    fs_y = np.zeros((ny, nx))
    fs_state = np.zeros((ny, nx), dtype=np.int8)
    # FASTSIM pass (elliptic bound): the traction direction in the slip zone
    fastsim_grid_kernel((pressure, x, y, x_leading), (xi, eta, phi), mu, (l1, l2, l3),
                        (fs_x, fs_y, fs_state))
    pi2 = math.pi * math.pi
    xi_s = -4.0 * (1.0 - nu) * c11 * g * xi / (2.0 * pi2 * mu_p0)
    eta_s = -4.0 * (1.0 - nu) * c22 * g * eta / (2.0 * pi2 * mu_p0)
    phi_s = -3.0 * math.sqrt(a * b) * c23 * g * phi / (2.0 * math.pi * mu_p0)
    one = 1.0 - phi_s * phi_s
    totals = (0.0, 0.0, 0.0, 0.0, 0.0)
    for j in range(ny):
        yj = y[j]
        aj = x_leading[j]
        # strip theory: slip length 2d at the trailing edge
        k = xi_s - phi_s * yj / a
        full_slip = False
        d = 0.0
        if abs(phi_s - 1.0) <= 1e-9 or abs(one) <= 1e-12:
            full_slip = True
        else:
            disc = eta_s * eta_s + one * k * k
            if disc < 0.0:
                full_slip = True
            else:
                d = (math.sqrt(disc) + eta_s * phi_s) / one * a / (1.0 - nu)
                if not d >= 0.0:
                    full_slip = True
        if full_slip:
            d = aj + dx          # -aj + 2d > aj: no cell of the strip adheres
        ky = eta_s + phi_s * d / a
        norm = math.sqrt(max(1e-40, k * k + ky * ky))
        kappa = k / norm
        lam = ky / norm
        lam_p = lam - phi_s
        x_adh = -aj + 2.0 * d
        # strip theory's traction within its range (CONTACT M = 5: |p| <= mu p0)
        use_strip = True
        for i in range(nx):
            if pressure[j, i] > 0.0 and x[i] > x_adh:
                s_c = math.sqrt(max(aj * aj - x[i] * x[i], 0.0)) / a
                s_a = math.sqrt(max((aj - d) ** 2 - (x[i] - d) ** 2, 0.0)) / a
                f_x = kappa * (s_c - s_a)
                f_y = lam * s_c - lam_p * s_a
                if f_x * f_x + f_y * f_y > 1.0:
                    use_strip = False
        for i in range(nx):
            xc = x[i]
            if not pressure[j, i] > 0.0:
                if store:
                    px_out[j, i] = 0.0
                    py_out[j, i] = 0.0
                    state_out[j, i] = 0
                continue
            if not use_strip:
                tx = fs_x[j, i]
                ty = fs_y[j, i]
                state = fs_state[j, i]
            elif xc > x_adh:
                s_c = math.sqrt(max(aj * aj - xc * xc, 0.0)) / a
                s_a = math.sqrt(max((aj - d) ** 2 - (xc - d) ** 2, 0.0)) / a
                tx = mu_p0 * kappa * (s_c - s_a)
                ty = mu_p0 * (lam * s_c - lam_p * s_a)
                state = 1
            else:
                bound = mu * pressure[j, i]
                t = math.hypot(fs_x[j, i], fs_y[j, i])
                if t > 0.0:
                    tx = fs_x[j, i] * bound / t
                    ty = fs_y[j, i] * bound / t
                else:
                    tx = 0.0
                    ty = 0.0
                state = 2
            totals = add_cell(totals, tx, ty, xc, yj, da, state)
            if store:
                px_out[j, i] = tx
                py_out[j, i] = ty
                state_out[j, i] = state
    return totals


def fastrip(xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson,
            nx=FASTRIP_DEFAULT_N, ny=FASTRIP_DEFAULT_N) -> FastsimResult:
    """FaStrip (Sichani, Enblom & Berg 2016) on the Hertz ellipse, with the
    traction field: nx x ny equal cells over [-a, a] x [-b, b]. Arguments,
    units and signs as `creep_forces`. Returns a `FastsimResult` whose
    pressure is the elliptic Hertz pressure and whose state is the strip
    theory's division into adhesion (1) and slip (2)."""
    vals = [float(v) for v in (xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson)]
    xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson = vals
    check_finite(xi=xi, eta=eta, phi=phi, a=a, b=b, normal_force=normal_force,
                  friction=friction, shear_modulus=shear_modulus, poisson=poisson)
    if not (a > 0.0 and b > 0.0):
        raise CreepError(f"semi-axes must be > 0, got a={a!r}, b={b!r}")
    if not shear_modulus > 0.0:
        raise CreepError(f"shear_modulus must be > 0, got {shear_modulus!r}")
    check_poisson(poisson)
    nx, ny = int(nx), int(ny)
    if nx < 1 or ny < 1:
        raise CreepError("nx and ny must be >= 1")
    px = np.zeros((ny, nx))
    py = np.zeros((ny, nx))
    state = np.zeros((ny, nx), dtype=np.int8)
    if normal_force > 0.0 and friction > 0.0:
        fx, fy, mz, adh, sl = _fastrip_nb(
            CreepPatch(xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson, 0.0),
            (nx, ny), (True, px, py, state))
    else:
        fx = fy = mz = adh = sl = 0.0
    dx, dy = 2.0 * a / nx, 2.0 * b / ny
    xs = -a + (np.arange(nx) + 0.5) * dx
    ys = -b + (np.arange(ny) + 0.5) * dy
    shape = np.sqrt(np.maximum(1.0 - (xs[None, :] / a) ** 2 - (ys[:, None] / b) ** 2, 0.0))
    total = shape.sum() * dx * dy
    p0 = max(normal_force, 0.0) / total if total > 0.0 else 0.0
    return FastsimResult(float(fx), float(fy), float(mz), np.repeat(xs[None, :], ny, axis=0),
                         ys, np.full((ny, nx), dx * dy), p0 * shape, px, py, state,
                         float(adh), float(sl))


@njit(cache=True, error_model="numpy", _nrt=True)
def fastrip_creep(patch, options):
    """FaStrip on a CreepPatch, options (nx, ny; below 1: FASTRIP_DEFAULT_N): (Fx, Fy, Mz)."""
    nx = int(options[0]) if options[0] >= 1.0 else 20
    ny = int(options[1]) if options[1] >= 1.0 else 20
    dummy = np.zeros((1, 1))
    dummy_state = np.zeros((1, 1), dtype=np.int8)
    fx, fy, mz, adh, sl = _fastrip_nb(patch, (nx, ny), (False, dummy, dummy, dummy_state))
    return fx, fy, mz


def fastrip_creep_reference(patch, options):
    """fastrip_creep as its kernel's plain Python."""
    nx = int(options[0]) if options[0] >= 1.0 else FASTRIP_DEFAULT_N
    ny = int(options[1]) if options[1] >= 1.0 else FASTRIP_DEFAULT_N
    dummy = np.zeros((1, 1))
    dummy_state = np.zeros((1, 1), dtype=np.int8)
    fx, fy, mz, *_ = _fastrip_nb.py_func(patch, (nx, ny), (False, dummy, dummy, dummy_state))
    return fx, fy, mz
