"""Kalker's linear theory: the creep coefficients C11, C22, C23, C33 of his
table and the linear creep forces."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...errors import CreepError
from .inputs import check_poisson


# ----------------------------------------------------------------------------
# Kalker's creepage and spin coefficients
# ----------------------------------------------------------------------------
# Source: J.J. Kalker, "Three-Dimensional Elastic Bodies in Rolling Contact",
# Kluwer 1990, Table E.3 (the table of his 1967 thesis). The C11, C22, C23
# columns were checked against the table as reproduced in the open-source
# CONTACT program (Vollebregt & Kalker, module m_hertz, routine linrol). The
# C33 column is the one of Table E.3 as reproduced in the railway literature
# (e.g. Iwnicki (ed.), Handbook of Railway Vehicle Dynamics); CONTACT does not
# carry it.
#
# KALKER_TABLE[branch, row, coefficient, nu]:
#   branch 0: g = a/b <= 1, branch 1: g = b/a < 1 (a/b > 1);
#   row k: g = 0.1*(k+1), k = 0..9 (g = 1.0 in both branches);
#   coefficient: C11, C22, C23, C33; nu = 0, 0.25, 0.5.
KALKER_TABLE = np.array([
    [  # a/b = g
        [[2.51, 3.31, 4.85], [2.51, 2.52, 2.53], [0.334, 0.473, 0.731], [6.42, 8.28, 11.7]],
        [[2.59, 3.37, 4.81], [2.59, 2.63, 2.66], [0.483, 0.603, 0.809], [3.46, 4.27, 5.66]],
        [[2.68, 3.44, 4.80], [2.68, 2.75, 2.81], [0.607, 0.715, 0.889], [2.49, 2.96, 3.72]],
        [[2.78, 3.53, 4.82], [2.78, 2.88, 2.98], [0.720, 0.823, 0.977], [2.02, 2.32, 2.77]],
        [[2.88, 3.62, 4.83], [2.88, 3.01, 3.14], [0.827, 0.929, 1.07], [1.74, 1.93, 2.22]],
        [[2.98, 3.72, 4.91], [2.98, 3.14, 3.31], [0.930, 1.03, 1.18], [1.56, 1.68, 1.86]],
        [[3.09, 3.81, 4.97], [3.09, 3.28, 3.48], [1.03, 1.14, 1.29], [1.43, 1.50, 1.60]],
        [[3.19, 3.91, 5.05], [3.19, 3.41, 3.65], [1.13, 1.25, 1.40], [1.34, 1.37, 1.42]],
        [[3.29, 4.01, 5.12], [3.29, 3.54, 3.82], [1.23, 1.36, 1.51], [1.27, 1.27, 1.27]],
        [[3.40, 4.12, 5.20], [3.40, 3.67, 3.98], [1.33, 1.47, 1.63], [1.21, 1.19, 1.16]],
    ],
    [  # b/a = g
        [[10.7, 11.7, 12.9], [10.7, 12.8, 16.0], [12.2, 14.6, 18.0], [0.795, 0.526, 0.228]],
        [[6.96, 7.78, 8.82], [6.96, 8.14, 9.79], [5.72, 6.63, 7.89], [0.828, 0.601, 0.341]],
        [[5.57, 6.34, 7.34], [5.57, 6.40, 7.51], [3.79, 4.32, 5.01], [0.868, 0.674, 0.446]],
        [[4.84, 5.57, 6.57], [4.84, 5.48, 6.31], [2.88, 3.24, 3.70], [0.912, 0.747, 0.549]],
        [[4.37, 5.10, 6.11], [4.37, 4.90, 5.56], [2.35, 2.62, 2.96], [0.958, 0.819, 0.650]],
        [[4.06, 4.78, 5.80], [4.06, 4.50, 5.04], [2.01, 2.23, 2.50], [1.01, 0.892, 0.751]],
        [[3.82, 4.54, 5.58], [3.82, 4.21, 4.67], [1.76, 1.95, 2.18], [1.05, 0.965, 0.852]],
        [[3.65, 4.36, 5.42], [3.65, 3.99, 4.39], [1.58, 1.75, 1.94], [1.10, 1.04, 0.954]],
        [[3.51, 4.22, 5.30], [3.51, 3.81, 4.16], [1.44, 1.59, 1.77], [1.16, 1.11, 1.06]],
        [[3.40, 4.12, 5.20], [3.40, 3.67, 3.98], [1.33, 1.47, 1.63], [1.21, 1.19, 1.16]],
    ],
], dtype=np.float64)

_G_MIN_TABLE = 0.1       # first table row
_G_FLOOR = 1e-12         # g = min(a/b, b/a) is clamped to this (a/b beyond 1e12 is a line contact)


# One implementation of each formula: the numba kernels below. Where a test
# needs a plain-Python run it uses a kernel's .py_func.

@njit(cache=True, error_model="numpy", _nrt=False)
def _asymptote(branch, coef, g, nu):
    """Kalker's asymptotic expressions for g -> 0 (Kalker 1990, Table E.3, first
    and last rows; also CONTACT linrol). Lambda = ln(16/g^2).

    branch 0 (a/b = g -> 0): C11 = pi^2/(4(1-nu)), C22 = pi^2/4,
        C23 = pi*sqrt(g)/(3(1-nu)) * (1 + nu*(ln(16/g) - 5)),
        C33 = pi^2/(16(1-nu)g).
    branch 1 (b/a = g -> 0): C11 = 2pi/((Lambda-2nu)g) * (1 + (3-ln4)/(Lambda-2nu)),
        C22 = 2pi/(((1-nu)Lambda+2nu)g) * (1 + (1-nu)(3-ln4)/((1-nu)Lambda+2nu)),
        C23 = 2pi/(3 g^1.5 ((1-nu)Lambda - 2 + 4nu)).
        No C33 asymptote is used on this branch (see kalker_coefficients).
    """
    pi = math.pi
    if branch == 0:
        if coef == 0:
            return pi * pi / (4.0 * (1.0 - nu))
        if coef == 1:
            return pi * pi / 4.0
        if coef == 2:
            return pi * math.sqrt(g) / (3.0 * (1.0 - nu)) * (1.0 + nu * (math.log(16.0 / g) - 5.0))
        return pi * pi / (16.0 * (1.0 - nu) * g)
    lam = math.log(16.0 / (g * g))
    ln4 = math.log(4.0)
    if coef == 0:
        d = lam - 2.0 * nu
        return 2.0 * pi / (d * g) * (1.0 + (3.0 - ln4) / d)
    if coef == 1:
        d = (1.0 - nu) * lam + 2.0 * nu
        return 2.0 * pi / (d * g) * (1.0 + (1.0 - nu) * (3.0 - ln4) / d)
    return 2.0 * pi / (3.0 * g ** 1.5 * ((1.0 - nu) * lam - 2.0 + 4.0 * nu))


@njit(cache=True, error_model="numpy", _nrt=False)
def _harmonic_in_nu(lo, hi, frac, w0, w1, w2):
    """One coefficient between two table rows lo, hi (its three columns nu = 0,
    0.25, 0.5): linear in g (fraction frac), then 1/C quadratic in nu (weights w):
    C = 1 / (w0/c0 + w1/c1 + w2/c2), written over the common denominator
    c0 c1 c2 (one division instead of four: 32 of the 64 ns of the four
    coefficients, measured; the same value to 7e-16 relative)."""
    c0 = (1.0 - frac) * lo[0] + frac * hi[0]
    c1 = (1.0 - frac) * lo[1] + frac * hi[1]
    c2 = (1.0 - frac) * lo[2] + frac * hi[2]
    return c0 * c1 * c2 / (w0 * (c1 * c2) + w1 * (c0 * c2) + w2 * (c0 * c1))


@njit(cache=True, error_model="numpy", _nrt=False)
def _table_interp(table, branch, g, nu):
    """(C11, C22, C23, C33) at g: linear interpolation in g between table rows
    (linear extrapolation of the first interval for g < 0.1), then quadratic
    interpolation of 1/C in nu through nu = 0, 0.25, 0.5 (Lagrange weights, as
    CONTACT's linrol does)."""
    t = (g - _G_MIN_TABLE) / 0.1
    row = int(math.floor(t))
    if row < 0:
        row = 0
    elif row > 8:
        row = 8
    frac = t - row
    w0 = 8.0 * (nu - 0.25) * (nu - 0.5)
    w1 = -16.0 * nu * (nu - 0.5)
    w2 = 8.0 * nu * (nu - 0.25)
    lo = table[branch, row]
    hi = table[branch, row + 1]
    return (_harmonic_in_nu(lo[0], hi[0], frac, w0, w1, w2),
            _harmonic_in_nu(lo[1], hi[1], frac, w0, w1, w2),
            _harmonic_in_nu(lo[2], hi[2], frac, w0, w1, w2),
            _harmonic_in_nu(lo[3], hi[3], frac, w0, w1, w2))


@njit(cache=True, error_model="numpy", _nrt=False)
def _coefficient_below_table(table, branch, coef, g, nu):
    """One coefficient at g < 0.1 (below the table's first row)."""
    if branch == 1 and coef == 3:
        # C33 for a/b > 10: linear extrapolation of the last table interval
        # (b/a = 0.2 ... 0.1) towards b/a = 0; bounded and positive on (0, 0.1).
        return _table_interp(table, branch, g, nu)[coef]
    # Blend into the asymptote: C = asym(g) * (1 + (r - 1) * g/0.1) with
    # r = table(0.1)/asym(0.1): continuous at g = 0.1, exact as g -> 0.
    r = _table_interp(table, branch, _G_MIN_TABLE, nu)[coef] / _asymptote(branch, coef, _G_MIN_TABLE, nu)
    return _asymptote(branch, coef, g, nu) * (1.0 + (r - 1.0) * g / _G_MIN_TABLE)


@njit(cache=True, error_model="numpy", _nrt=False)
def kalker_coefficients_from_table(table, a_over_b, poisson):
    if a_over_b <= 1.0:
        branch = 0
        g = a_over_b
    else:
        branch = 1
        g = 1.0 / a_over_b
    if g < _G_FLOOR:
        g = _G_FLOOR
    if g >= _G_MIN_TABLE:
        # inside the table (every contact of a wheel on a rail but the thinnest):
        # the four coefficients share the row, its fraction and the weights in nu
        return _table_interp(table, branch, g, poisson)
    return (_coefficient_below_table(table, branch, 0, g, poisson),
            _coefficient_below_table(table, branch, 1, g, poisson),
            _coefficient_below_table(table, branch, 2, g, poisson),
            _coefficient_below_table(table, branch, 3, g, poisson))


@njit(cache=True, error_model="numpy", _nrt=False)
def kalker_coefficients_kernel(a_over_b, poisson):
    """numba kernel of `kalker_coefficients` (no argument checks; g = min(a/b, b/a)
    is clamped to 1e-12)."""
    return kalker_coefficients_from_table(KALKER_TABLE, a_over_b, poisson)


def kalker_coefficients(a_over_b: float, poisson: float) -> tuple[float, float, float, float]:
    """Kalker's creepage and spin coefficients (C11, C22, C23, C33), dimensionless.

    Interpolated from Kalker (1990), Table E.3: linearly in g = min(a/b, b/a)
    between the tabulated rows 0.1 ... 1.0 of each branch (a/b <= 1 given as
    a/b, a/b > 1 as b/a), and, for a Poisson ratio other than 0, 0.25, 0.5,
    quadratically in nu through the three columns on 1/C (as CONTACT does).
    For g < 0.1 the coefficients blend continuously into Kalker's asymptotic
    expressions (see `_asymptote`): for a/b -> 0, C11 -> pi^2/(4(1-nu)),
    C22 -> pi^2/4, C23 -> pi*sqrt(g)/(3(1-nu))*(1+nu*(ln(16/g)-5)),
    C33 -> pi^2/(16(1-nu)g); for a/b -> infinity, C11, C22 ~ 1/(g ln(16/g^2))
    and C23 ~ g^-1.5/ln(16/g^2) (so f11, f22, f23, which carry the factor a*b,
    stay finite), and C33 follows the linear extrapolation of the last table
    interval (bounded: no published asymptote is used for it).

    a_over_b: semi-axis ratio a/b (> 0, a along the rolling direction).
    poisson: Poisson ratio in [0, 0.5]. The checked entry of
    `kalker_coefficients_kernel`.
    """
    a_over_b = float(a_over_b)
    poisson = float(poisson)
    if not (math.isfinite(a_over_b) and a_over_b > 0.0):
        raise CreepError(f"a_over_b must be finite and > 0, got {a_over_b!r}")
    check_poisson(poisson)
    return tuple(float(c) for c in kalker_coefficients_kernel(a_over_b, poisson))


def linear_creep_coefficients(a, b, shear_modulus, poisson):
    """Kalker's linear creep coefficients (f11, f22, f23, f33):
    f11 = G*a*b*C11, f22 = G*a*b*C22 (N), f23 = G*(a*b)^1.5*C23 (N*m),
    f33 = G*(a*b)^2*C33 (N*m^2)."""
    c11, c22, c23, c33 = kalker_coefficients(a / b, poisson)
    ab = a * b
    g = shear_modulus
    return g * ab * c11, g * ab * c22, g * ab ** 1.5 * c23, g * ab * ab * c33


def fastsim_flexibilities(a, b, shear_modulus, poisson):
    """FASTSIM flexibilities (m/Pa) of Kalker (1982): L1 = 8a/(3*C11*G),
    L2 = 8a/(3*C22*G), L3 = pi*a*sqrt(a/b)/(4*G*C23). With them the simplified
    theory reproduces f11, f22 and f23 of the linear theory exactly."""
    c11, c22, c23, _ = kalker_coefficients(a / b, poisson)
    g = shear_modulus
    return (8.0 * a / (3.0 * c11 * g), 8.0 * a / (3.0 * c22 * g),
            math.pi * a * math.sqrt(a / b) / (4.0 * g * c23))


# ----------------------------------------------------------------------------
# Analytic models: numba kernels (plain Python: their .py_func)
# ----------------------------------------------------------------------------

@njit(cache=True, error_model="numpy", _nrt=False)
def linear_coefficients_kernel(patch):
    """Kalker's linear creep coefficients of a CreepPatch: f11 = G ab C11,
    f22 = G ab C22, f23 = G (ab)^1.5 C23, f33 = G (ab)^2 C33."""
    c11, c22, c23, c33 = kalker_coefficients_from_table(KALKER_TABLE, patch.a / patch.b,
                                                        patch.poisson)
    g = patch.shear_modulus
    ab = patch.a * patch.b
    return g * ab * c11, g * ab * c22, g * ab ** 1.5 * c23, g * ab * ab * c33


@njit(cache=True, error_model="numpy", _nrt=False)
def kalker_creep(patch, options):
    """Kalker's linear theory on a CreepPatch: Fx = -f11 xi, Fy = -f22 eta - f23 phi,
    Mz = f23 eta - f33 phi. No options."""
    f11, f22, f23, f33 = linear_coefficients_kernel(patch)
    xi, eta, phi = patch.xi, patch.eta, patch.phi
    return -f11 * xi, -f22 * eta - f23 * phi, f23 * eta - f33 * phi


def kalker_creep_reference(patch, options):
    """kalker_creep in plain Python."""
    return kalker_creep.py_func(patch, options)
