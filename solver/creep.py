"""Tangential wheel-rail contact: creep forces.

Five models share one signature (docs/CONVENTIONS.md):

    creep_forces(model, xi, eta, phi, a, b, normal_force, friction,
                 shear_modulus, poisson, speed, options=None) -> (Fx, Fy, Mz)

- ``"kalker"``  Kalker's linear theory (Kalker 1967/1990):
  Fx = -f11*xi, Fy = -f22*eta - f23*phi, Mz = f23*eta - f33*phi,
  f11 = G*a*b*C11, f22 = G*a*b*C22, f23 = G*(a*b)^1.5*C23, f33 = G*(a*b)^2*C33.
- ``"she"``     Shen, Hedrick & Elkins (1983, VSD 12 suppl., 79-83): the linear
  resultant F = |(Fx, Fy)| is saturated by the cubic law
  F' = mu*N*[u - u^2/3 + u^3/27], u = F/(mu*N), for u < 3, F' = mu*N beyond;
  Fx, Fy are scaled by F'/F; Mz: see "Spin moment of the saturated models".
- ``"polach"``  Polach (1999, VSD 33 suppl., 728-739) with spin (corrected
  lateral creepage and the lateral spin force), extended by Polach (2005,
  Wear 258, 992-1000): adhesion reduction kA, kS and the falling friction
  mu = mu0*((1-A)*exp(-B*w) + A), w = slip velocity; Mz: see "Spin moment of
  the saturated models".
- ``"fastsim"`` Kalker's simplified theory, FASTSIM algorithm (Kalker 1982,
  VSD 11, 1-13) on the Hertz ellipse; flexibilities L1 = 8a/(3*C11*G),
  L2 = 8a/(3*C22*G), L3 = pi*a*sqrt(a/b)/(4*G*C23); traction bound mu*p with a
  parabolic (default, as in Kalker's FASTSIM) or elliptic (Hertz) pressure p.
- ``"fastrip"`` FaStrip (Sichani, Enblom & Berg 2016, VSD 54(6), 748-764):
  Kalker's strip theory with creepages normalised by C11, C22, C23 in the
  adhesion zone, mu*p (elliptic) in the slip zone in the FASTSIM direction
  (see the FaStrip block below for the equations and their source).

Units and signs (docs/CONVENTIONS.md)
-------------------------------------
- Creepages: xi (longitudinal), eta (lateral), dimensionless; phi (spin) in 1/m:
  velocity of the WHEEL relative to the RAIL at the contact point divided by
  the rolling speed V (spin: relative angular velocity about the contact
  normal / V). The rigid slip at a point (x, y) of the patch is therefore
  (xi - phi*y, eta + phi*x).
- Forces: those of the RAIL ON THE WHEEL in the contact frame: x rolling
  direction, y lateral in the contact plane, z = x cross y the contact normal
  (pointing from the rail into the wheel). N, and N*m for Mz.
- Mz is the moment of the tangential tractions about the contact normal z
  through the centre of the contact ellipse, Mz = integral(x*py - y*px) dA,
  positive counter-clockwise seen from the wheel (from +z). A positive spin
  (wheel turning counter-clockwise relative to the rail) gives a negative Mz.
- a is the semi-axis along x (rolling), b the lateral one (m); G the combined
  shear modulus (Pa), poisson the combined Poisson ratio (0 ... 0.5).

Edge cases (all models)
-----------------------
- normal_force <= 0 gives (0, 0, 0), no NaN, whatever a and b are.
- friction <= 0 gives (0, 0, 0): no tangential traction can be transmitted
  (this also applies to the linear theory, which is the limit mu -> infinity).
- speed only enters the Polach 2005 falling friction law through the slip
  velocity w = |speed| * s_C (s_C the corrected creepage magnitude). speed = 0
  gives w = 0, i.e. mu = mu0 (static friction): no NaN. The creepages
  themselves are inputs; regularising them at low speed is the caller's job.
- Non-finite input or a, b <= 0 with a load raises ValueError in the Python
  functions; the numba kernel assumes checked input (it returns zeros for
  a, b <= 0).

Numba kernels sit beside plain NumPy/Python reference versions of the same
algorithm (``*_reference``); tests/test_creep.py holds them equal.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .errors import CreepError
from numba import njit

__all__ = [
    "KALKER", "SHE", "POLACH", "FASTSIM", "FASTRIP", "MODEL_IDS",
    "POLACH_1999", "POLACH_2005_DRY", "POLACH_2005_WET",
    "POLACH_2005_DRY_MU0", "POLACH_2005_WET_MU0",
    "FASTSIM_DEFAULT_N", "FASTSIM_PARABOLIC", "FASTSIM_ELLIPTIC", "FASTSIM_UNIFORM", "FASTSIM_STRIPS",
    "kalker_coefficients", "kalker_coefficients_kernel", "linear_creep_coefficients",
    "fastsim_flexibilities",
    "creep_forces", "creep_forces_kernel", "creep_forces_reference", "kernel_parameters",
    "FastsimResult", "fastsim_ellipse", "fastsim_grid", "fastrip", "FASTRIP_DEFAULT_N",
]

# ----------------------------------------------------------------------------
# Model identifiers and parameter sets
# ----------------------------------------------------------------------------
KALKER = 0
SHE = 1
POLACH = 2
FASTSIM = 3
FASTRIP = 4
MODEL_IDS = {"kalker": KALKER, "she": SHE, "polach": POLACH, "fastsim": FASTSIM,
             "fastrip": FASTRIP}

# Polach options (kA, kS, A, B [s/m]). kA = kS = 1, A = 1 (constant friction)
# reproduces Polach 1999. The 2005 sets are those of Polach (2005, Wear 258,
# Table 2), as collected in docs/references.md; the friction argument is
# mu0 (dry 0.55, wet 0.3 in that paper).
POLACH_1999 = {"kA": 1.0, "kS": 1.0, "A": 1.0, "B": 0.0}
POLACH_2005_DRY = {"kA": 1.0, "kS": 0.4, "A": 0.4, "B": 0.6}
POLACH_2005_WET = {"kA": 0.3, "kS": 0.1, "A": 0.4, "B": 0.2}
POLACH_2005_DRY_MU0 = 0.55
POLACH_2005_WET_MU0 = 0.3

# FASTSIM options: elements per strip nx, strips ny, traction bound.
FASTSIM_DEFAULT_N = 20
FASTSIM_PARABOLIC = 0   # p = 2N/(pi a b) * (1 - x^2/a^2 - y^2/b^2)   (Kalker 1982)
FASTSIM_ELLIPTIC = 1    # p = 3N/(2 pi a b) * sqrt(1 - x^2/a^2 - y^2/b^2)  (Hertz)
# FASTSIM grids of creep_forces / the kernel:
FASTSIM_UNIFORM = 0     # nx x ny equal cells over the ellipse's bounding rectangle [-a, a] x [-b, b]
                        # (CONTACT's discretisation of the potential contact area; default)
FASTSIM_STRIPS = 1      # ny strips, each cut into nx equal cells of its own length (fastsim_ellipse)

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
# _KALKER_TABLE[branch, row, coefficient, nu]:
#   branch 0: g = a/b <= 1, branch 1: g = b/a < 1 (a/b > 1);
#   row k: g = 0.1*(k+1), k = 0..9 (g = 1.0 in both branches);
#   coefficient: C11, C22, C23, C33; nu = 0, 0.25, 0.5.
_KALKER_TABLE = np.array([
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
def _kalker_coefficients(table, a_over_b, poisson):
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
    return _kalker_coefficients(_KALKER_TABLE, a_over_b, poisson)


def _check_poisson(poisson):
    if not (math.isfinite(poisson) and 0.0 <= poisson <= 0.5):
        raise CreepError(f"poisson must be in [0, 0.5], got {poisson!r}")


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
    _check_poisson(poisson)
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
def _kalker(xi, eta, phi, a, b, g, nu):
    """Kalker's linear theory: Fx = -f11 xi, Fy = -f22 eta - f23 phi, Mz = f23 eta - f33 phi."""
    c11, c22, c23, c33 = _kalker_coefficients(_KALKER_TABLE, a / b, nu)
    ab = a * b
    f11 = g * ab * c11
    f22 = g * ab * c22
    f23 = g * ab ** 1.5 * c23
    f33 = g * ab * ab * c33
    return -f11 * xi, -f22 * eta - f23 * phi, f23 * eta - f33 * phi


# ----------------------------------------------------------------------------
# Spin moment of the saturated models (Shen-Hedrick-Elkins, Polach)
# ----------------------------------------------------------------------------
# Neither SHE nor Polach gives a spin moment. Scaling Kalker's linear moment
# f23*eta - f33*phi by the force ratio F'/F keeps 0.53 mu N sqrt(ab) when the
# patch slides laterally (a/b = 2), where the full theory has none. The moment
# here is built from three published pieces, so that it is Kalker's linear
# moment in the linear range and Coulomb's full-slip moment when the patch
# slides:
#
#   Mz = f23*eta*k^3 + M_slip * g(f33 |phi| / |M_slip|)
#
# 1. Creepage coupling f23*eta: the traction of Vermeulen & Johnson (1964,
#    J. Appl. Mech. 31, 338-340), whose force law F'/(mu N) = 1 - k^3 is the
#    cubic law of Shen, Hedrick & Elkins (k = 1 - u/3), is mu (p - p_k) with
#    p_k the Hertz pressure of the adhesion ellipse, similar to the contact
#    ellipse, scale k, touching its leading edge; its moment about the patch
#    centre is mu N e a k^3 (1 - k), i.e. its linear value times k^3 (derived
#    here from their traction; docs/contact_mechanics.md). k^3 = 1 - F'/(mu N)
#    with F' the model's creep-force resultant (SHE's cubic; Polach's law of
#    the corrected creepage, without the spin force F_yS): the coupling
#    vanishes when the forces saturate.
# 2. M_slip: Coulomb's law on the Hertz ellipse in complete slip, the traction
#    -mu p s/|s| along the rigid slip s = (xi - phi y, eta + phi x) (Kalker
#    1990, Three-Dimensional Elastic Bodies in Rolling Contact, the limit of
#    full slip; for pure spin on a circle Lubkin 1951, J. Appl. Mech. 18,
#    183-187: 3 pi mu N a / 16, on an ellipse 3/8 mu N c E(1 - (c'/c)^2),
#    c >= c' the semi-axes). Its sign is always that of -phi (phi M_slip =
#    -mu int p (|s| - s_hat . (xi, eta)) <= 0). Evaluated by a fixed quadrature
#    of 3 x 12 points (Gauss-Jacobi in rho^2 for the weight sqrt(1 - rho^2),
#    midpoints in the angle), the slip direction smoothed near the spin pole
#    (_SLIP_SMOOTHING): within 0.013 mu N sqrt(ab) of the converged integral
#    for any creepage, 0.9-1.1 % below Lubkin's for pure spin (tests/test_creep.py).
# 3. The spin part -f33*phi goes over to M_slip by the model's own saturation
#    law, g(v) = 1 - (1 - v/3)^3 (v < 3; SHE) or
#    g(v) = 2/pi (e/(1 + e^2) + atan e), e = pi v / 4 (Polach 1999, kA = kS = 1),
#    both g(v) ~ v for small v: the linear moment is kept exactly.
# Checked against Kalker's full theory (CONTACT, tests/data/contact_reference/
# spin_moment.json): within 0.007 mu N sqrt(ab) in full sliding, 0.11 in
# partial slip (a/b = 0.5, moderate spin), exact in the linear range.

# quadrature of int p(x, y) f dA / N on the Hertz ellipse, p ~ sqrt(1 - rho^2):
# rho^2 = t at the Gauss-Jacobi nodes of the weight sqrt(1 - t) on [0, 1]
# (alpha = 1/2, beta = 0; scipy.special.roots_jacobi(3, 0.5, 0)), angles at
# the midpoints of 12 equal sectors; nodes (x/a, y/b) and weights flattened
def _slip_quadrature():
    from scipy.special import roots_jacobi
    nodes, weights = roots_jacobi(3, 0.5, 0.0)
    rho = np.sqrt(0.5 * (nodes + 1.0))
    angle = (np.arange(12) + 0.5) * (2.0 * math.pi / 12)
    x = (rho[:, None] * np.cos(angle)[None, :]).ravel()
    y = (rho[:, None] * np.sin(angle)[None, :]).ravel()
    w = np.repeat(weights / (weights.sum() * angle.size), angle.size)
    return x, y, w


_SLIP_X, _SLIP_Y, _SLIP_W = _slip_quadrature()


#: The slip direction s/|s| of the full-slip moment is taken as s/sqrt(|s|^2 + eps^2),
#: eps = _SLIP_SMOOTHING |phi| sqrt(ab): the spin pole (s = 0) passing a quadrature node
#: would otherwise turn that node's direction by 180 deg over a vanishing distance (a
#: near-jump of the moment that spoils the integrators' order); 0.1 keeps the accuracy
#: (1.1 % on pure spin, 0.012 mu N sqrt(ab) otherwise) and smooths the moment 20-fold.
_SLIP_SMOOTHING = 0.1


@njit(cache=True, error_model="numpy", _nrt=False)
def _full_slip_moment(xi, eta, phi, a, b):
    """Coulomb's full-slip spin moment on the Hertz ellipse per unit mu N (m):
    -int p (x s_y - y s_x)/|s| dA / N, s = (xi - phi y, eta + phi x), with the
    smoothed direction of _SLIP_SMOOTHING. Compiled without fastmath: with it
    the sum's rounding depended on the code around it (a fresh compile, a
    cached load and another CPU's code gave different last bits, which the
    adaptive integrators' step sequence amplified to 1e-7 of the outputs)."""
    eps2 = (_SLIP_SMOOTHING * phi) ** 2 * (a * b) + 1e-300
    total = 0.0
    for k in range(_SLIP_X.shape[0]):
        x = a * _SLIP_X[k]
        y = b * _SLIP_Y[k]
        sx = xi - phi * y
        sy = eta + phi * x
        total += _SLIP_W[k] * (x * sy - y * sx) / math.sqrt(sx * sx + sy * sy + eps2)
    return -total


@njit(cache=True, error_model="numpy", _nrt=False)
def _spin_law_she(v):
    """SHE's saturation 1 - (1 - v/3)^3 for v < 3, 1 beyond (slope 1 at 0)."""
    if v >= 3.0:
        return 1.0
    w = 1.0 - v / 3.0
    return 1.0 - w * w * w


@njit(cache=True, error_model="numpy", _nrt=False)
def _spin_law_polach(v):
    """Polach's (1999) law 2/pi (e/(1 + e^2) + atan e), e = pi v / 4 (slope 1 at 0)."""
    e = 0.25 * math.pi * v
    return 2.0 / math.pi * (e / (1.0 + e * e) + math.atan(e))


@njit(cache=True, error_model="numpy", _nrt=False)
def _saturated_spin_moment(xi, eta, phi, a, b, mu_n, f23, f33, k3, polach_law):
    """Mz of the saturated models (block comment above): f23 eta k^3 + M_slip g(f33 |phi| / |M_slip|)."""
    mz = f23 * eta * k3
    if phi == 0.0:
        return mz
    m_slip = mu_n * _full_slip_moment(xi, eta, phi, a, b)
    if m_slip == 0.0:
        return mz
    v = f33 * abs(phi) / abs(m_slip)
    if polach_law:
        return mz + m_slip * _spin_law_polach(v)
    return mz + m_slip * _spin_law_she(v)


@njit(cache=True, error_model="numpy", _nrt=False)
def _she(xi, eta, phi, a, b, n, mu, g, nu):
    """Shen, Hedrick & Elkins (1983): Kalker's linear forces scaled by F'/F =
    1 - u/3 + u^2/27 (u < 3), 1/u beyond, u = F/(mu N); the spin moment of the
    block comment above with k = 1 - u/3 (Vermeulen & Johnson's adhesion ellipse)."""
    c11, c22, c23, c33 = _kalker_coefficients(_KALKER_TABLE, a / b, nu)
    ab = a * b
    f11 = g * ab * c11
    f22 = g * ab * c22
    f23 = g * ab ** 1.5 * c23
    f33 = g * ab * ab * c33
    fx = -f11 * xi
    fy = -f22 * eta - f23 * phi
    mu_n = mu * n
    u = math.sqrt(fx * fx + fy * fy) / mu_n
    if u < 3.0:
        scale = 1.0 - u / 3.0 + u * u / 27.0
        k = 1.0 - u / 3.0
    else:
        scale = 1.0 / u
        k = 0.0
    mz = _saturated_spin_moment(xi, eta, phi, a, b, mu_n, f23, f33, k * k * k, False)
    return scale * fx, scale * fy, mz


@njit(cache=True, error_model="numpy", _nrt=False)
def _polach(xi, eta, phi, a, b, n, mu0, g, nu, speed, k_a, k_s, big_a, big_b):
    """Polach (1999) with spin, Polach (2005) adhesion reduction and falling friction.

    Polach 1999: corrected lateral creepage s_yC = eta + phi*a if
    |eta + phi*a| > |eta|, else eta; s_C = sqrt(xi^2 + s_yC^2);
    eps = pi*G*a*b*c_jj*s_C/(4*Q*mu), c_jj = sqrt((C11*xi/s)^2 + (C22*eta/s)^2),
    s = sqrt(xi^2 + eta^2) (c_jj = C22 for s = 0, when it multiplies zero).
    Polach 2005: F = 2*Q*mu/pi*[kA*eps/(1+(kA*eps)^2) + arctan(kS*eps)]
    (kA = kS = 1 is the 1999 law), mu = mu0*((1-A)*exp(-B*w) + A), w = |V|*s_C.
    Spin (Polach 1999): F_yS = -(9/16)*a*Q*mu*K_M*(1 + 6.3*(1 - exp(-a/b)))*phi/s_C,
    K_M = |eps_M|*(d^3/3 - d^2/2 + 1/6) - sqrt((1-d^2)^3)/3,
    d = (eps_M^2-1)/(eps_M^2+1),
    eps_M = 8/3 * G*b*sqrt(a*b)/(Q*mu) * C23*|s_yC| / (1 + 6.3*(1 - exp(-a/b))).
    K_M is evaluated in the algebraically identical, cancellation-free form
    K_M = -(2/3)*|eps_M|/(1 + eps_M^2)^2.
    Polach writes the forces in the direction of the creepages; here they act
    on the wheel, so Fx = -F*xi/s_C, Fy = -(F*eta/s_C + F_yS).
    The tangential resultant is limited to mu*Q (the spin term can push the
    published formulas slightly past it).
    Mz (not given by Polach): the spin moment of the block comment above, with
    k^3 = 1 - F/(mu Q) (F Polach's creep force, without the spin force) and
    Polach's law for the spin part.
    """
    a_over_b = a / b
    c11, c22, c23, c33 = _kalker_coefficients(_KALKER_TABLE, a_over_b, nu)
    sy_c = eta + phi * a
    if not abs(sy_c) > abs(eta):
        sy_c = eta
    # sqrt(x^2 + y^2) rather than hypot (creepages are far from overflow; hypot's
    # extra care costs ~15 ns a call)
    s_c = math.sqrt(xi * xi + sy_c * sy_c)
    if s_c <= 0.0:
        # xi = eta = 0 and phi * a = 0: no creepage at all
        return 0.0, 0.0, 0.0
    w = abs(speed) * s_c
    decay = math.exp(-big_b * w) if big_b != 0.0 else 1.0    # B = 0 (Polach 1999): exp(0) = 1
    mu = mu0 * ((1.0 - big_a) * decay + big_a)
    if mu <= 0.0:
        return 0.0, 0.0, 0.0
    s = math.sqrt(xi * xi + eta * eta)
    if s > 0.0:
        c_jj = math.sqrt((c11 * xi) ** 2 + (c22 * eta) ** 2) / s
    else:
        c_jj = c22
    # (the divisions shared where the formulas share a denominator: Q mu, s_C)
    n_mu = n * mu
    f_lin = g * a * b * c_jj * s_c
    eps = math.pi * f_lin / (4.0 * n_mu)
    ka_eps = k_a * eps
    f_res = 2.0 * n_mu / math.pi * (ka_eps / (1.0 + ka_eps * ka_eps) + math.atan(k_s * eps))
    spin_factor = 1.0 + 6.3 * (1.0 - math.exp(-a_over_b))
    ab = a * b
    root_ab = math.sqrt(ab)
    eps_m = 8.0 / 3.0 * g * b * root_ab / (n_mu * spin_factor) * c23 * abs(sy_c)
    k_m = -2.0 / 3.0 * eps_m / (1.0 + eps_m * eps_m) ** 2
    inv_s_c = 1.0 / s_c
    f_spin = -9.0 / 16.0 * a * n_mu * k_m * spin_factor * phi * inv_s_c
    fx = -f_res * xi * inv_s_c
    fy = -(f_res * eta * inv_s_c + f_spin)
    total = math.sqrt(fx * fx + fy * fy)
    limit = n_mu
    if total > limit:
        r = limit / total
        fx *= r
        fy *= r
    k3 = 1.0 - f_res / n_mu
    if k3 < 0.0:
        k3 = 0.0
    mz = _saturated_spin_moment(xi, eta, phi, a, b, n_mu, g * ab * root_ab * c23, g * ab * ab * c33, k3, True)
    return fx, fy, mz



# ----------------------------------------------------------------------------
# FASTSIM (Kalker 1982): strip algorithm
# ----------------------------------------------------------------------------
# Along each strip y = const the material enters the patch at the leading edge
# (largest x: the rolling direction is +x) and is carried backwards. The
# elastic traction predictor between two points x_prev > x is
#   px <- px - (x_prev - x) * (xi/L1 - phi*y/L3)
#   py <- py - (x_prev - x) * (eta/L2 + phi*x_mid/L3),  x_mid = (x_prev + x)/2
# (the integral of the rigid slip (xi - phi*y, eta + phi*x) divided by the
# flexibility; the midpoint is exact for the linear slip), so that in full
# adhesion p = -(1/L) * integral_x^{x_lead} slip dx', the simplified-theory
# solution whose total forces are -f11*xi, -f22*eta - f23*phi by the choice of
# L1, L2, L3. Where |p| exceeds the bound mu*p_n the point slips and p is
# scaled back onto the bound (the traction then opposes the slip). Tractions
# are evaluated at cell centres; a cell is "adhesion" when the predictor is
# within the bound, "slip" otherwise.

_EXTERIOR = 0
_ADHESION = 1
_SLIP = 2


@njit(cache=True, error_model="numpy", _nrt=False)
def _fastsim_ellipse_nb(xi, eta, phi, a, b, n, mu, l1, l2, l3, nx, ny, bound_kind,
                        store, x_out, p_out, px_out, py_out, state_out):
    dy = 2.0 * b / ny
    # normalisation of the discrete pressure so that sum(p dA) = N exactly
    total_shape = 0.0
    for j in range(ny):
        y = -b + (j + 0.5) * dy
        aj = a * math.sqrt(max(1.0 - (y / b) ** 2, 0.0))
        dxj = 2.0 * aj / nx
        for i in range(nx):
            x = aj - (i + 0.5) * dxj
            s = 1.0 - (x / a) ** 2 - (y / b) ** 2
            if s < 0.0:
                s = 0.0
            if bound_kind == 1:
                s = math.sqrt(s)
            total_shape += s * dxj * dy
    p_scale = n / total_shape
    fx = 0.0
    fy = 0.0
    mz = 0.0
    adh = 0.0
    slip_area = 0.0
    for j in range(ny):
        y = -b + (j + 0.5) * dy
        aj = a * math.sqrt(max(1.0 - (y / b) ** 2, 0.0))
        dxj = 2.0 * aj / nx
        da = dxj * dy
        wx = xi / l1 - phi * y / l3
        px = 0.0
        py = 0.0
        x_prev = aj
        for i in range(nx):
            x = aj - (i + 0.5) * dxj
            h = x_prev - x
            xm = 0.5 * (x_prev + x)
            px = px - h * wx
            py = py - h * (eta / l2 + phi * xm / l3)
            s = 1.0 - (x / a) ** 2 - (y / b) ** 2
            if s < 0.0:
                s = 0.0
            if bound_kind == 1:
                s = math.sqrt(s)
            pn = p_scale * s
            bound = mu * pn
            t = math.hypot(px, py)
            if t > bound:
                if t > 0.0:
                    r = bound / t
                    px = px * r
                    py = py * r
                state = 2
                slip_area += da
            else:
                state = 1
                adh += da
            fx += px * da
            fy += py * da
            mz += (x * py - y * px) * da
            if store:
                x_out[j, i] = x
                p_out[j, i] = pn
                px_out[j, i] = px
                py_out[j, i] = py
                state_out[j, i] = state
            x_prev = x
    return fx, fy, mz, adh, slip_area


def _fastsim_ellipse_reference(xi, eta, phi, a, b, n, mu, l1, l2, l3, nx, ny, bound_kind):
    """NumPy reference of `_fastsim_ellipse_nb`: the same march, vectorised over
    the strips. Returns (fx, fy, mz, adhesion_area, slip_area, x, p, px, py, state)."""
    dy = 2.0 * b / ny
    y = -b + (np.arange(ny) + 0.5) * dy
    aj = a * np.sqrt(np.maximum(1.0 - (y / b) ** 2, 0.0))
    dxj = 2.0 * aj / nx
    x = aj[:, None] - (np.arange(nx)[None, :] + 0.5) * dxj[:, None]
    shape = np.maximum(1.0 - (x / a) ** 2 - (y[:, None] / b) ** 2, 0.0)
    if bound_kind == 1:
        shape = np.sqrt(shape)
    da = (dxj * dy)[:, None] * np.ones((1, nx))
    p = n / np.sum(shape * da) * shape
    px_all = np.zeros((ny, nx))
    py_all = np.zeros((ny, nx))
    state = np.zeros((ny, nx), dtype=np.int8)
    wx = xi / l1 - phi * y / l3
    px = np.zeros(ny)
    py = np.zeros(ny)
    x_prev = aj.copy()
    for i in range(nx):
        xc = x[:, i]
        h = x_prev - xc
        xm = 0.5 * (x_prev + xc)
        px = px - h * wx
        py = py - h * (eta / l2 + phi * xm / l3)
        bound = mu * p[:, i]
        t = np.hypot(px, py)
        slip = t > bound
        r = np.where(slip & (t > 0.0), bound / np.where(t > 0.0, t, 1.0), 1.0)
        px = px * r
        py = py * r
        px_all[:, i] = px
        py_all[:, i] = py
        state[:, i] = np.where(slip, _SLIP, _ADHESION)
        x_prev = xc
    fx = float(np.sum(px_all * da))
    fy = float(np.sum(py_all * da))
    mz = float(np.sum((x * py_all - y[:, None] * px_all) * da))
    adh = float(np.sum(da[state == _ADHESION]))
    sl = float(np.sum(da[state == _SLIP]))
    return fx, fy, mz, adh, sl, x, p, px_all, py_all, state


@njit(cache=True, error_model="numpy", _nrt=False)
def _fastsim_grid_nb(pressure, x, y, x_leading, xi, eta, phi, mu, l1, l2, l3,
                     px_out, py_out, state_out):
    ny, nx = pressure.shape
    dx = x[1] - x[0] if nx > 1 else 1.0
    dy = y[1] - y[0] if ny > 1 else 1.0
    da = dx * dy
    fx = 0.0
    fy = 0.0
    mz = 0.0
    adh = 0.0
    slip_area = 0.0
    for j in range(ny):
        yj = y[j]
        xl = x_leading[j]
        wx = xi / l1 - phi * yj / l3
        px = 0.0
        py = 0.0
        x_prev = xl
        for i in range(nx - 1, -1, -1):
            xc = x[i]
            pn = pressure[j, i]
            if xc >= xl or pn <= 0.0:
                # outside the patch: no traction; a new leading edge starts at
                # the front boundary of the next cell (or at x_leading)
                px = 0.0
                py = 0.0
                x_prev = min(xl, xc - 0.5 * dx)
                px_out[j, i] = 0.0
                py_out[j, i] = 0.0
                state_out[j, i] = 0
                continue
            h = x_prev - xc
            xm = 0.5 * (x_prev + xc)
            px = px - h * wx
            py = py - h * (eta / l2 + phi * xm / l3)
            bound = mu * pn
            t = math.hypot(px, py)
            if t > bound:
                if t > 0.0:
                    r = bound / t
                    px = px * r
                    py = py * r
                state = 2
                slip_area += da
            else:
                state = 1
                adh += da
            fx += px * da
            fy += py * da
            mz += (xc * py - yj * px) * da
            px_out[j, i] = px
            py_out[j, i] = py
            state_out[j, i] = state
            x_prev = xc
    return fx, fy, mz, adh, slip_area


def _fastsim_grid_reference(pressure, x, y, x_leading, xi, eta, phi, mu, l1, l2, l3):
    """NumPy reference of `_fastsim_grid_nb`, vectorised over the strips."""
    ny, nx = pressure.shape
    dx = x[1] - x[0] if nx > 1 else 1.0
    dy = y[1] - y[0] if ny > 1 else 1.0
    da = dx * dy
    px_all = np.zeros((ny, nx))
    py_all = np.zeros((ny, nx))
    state = np.zeros((ny, nx), dtype=np.int8)
    wx = xi / l1 - phi * y / l3
    px = np.zeros(ny)
    py = np.zeros(ny)
    x_prev = np.array(x_leading, dtype=float)
    for i in range(nx - 1, -1, -1):
        xc = x[i]
        pn = pressure[:, i]
        outside = (xc >= x_leading) | (pn <= 0.0)
        h = x_prev - xc
        xm = 0.5 * (x_prev + xc)
        px = px - h * wx
        py = py - h * (eta / l2 + phi * xm / l3)
        bound = mu * pn
        t = np.hypot(px, py)
        slip = t > bound
        r = np.where(slip & (t > 0.0), bound / np.where(t > 0.0, t, 1.0), 1.0)
        px = np.where(outside, 0.0, px * r)
        py = np.where(outside, 0.0, py * r)
        px_all[:, i] = px
        py_all[:, i] = py
        state[:, i] = np.where(outside, _EXTERIOR, np.where(slip, _SLIP, _ADHESION))
        x_prev = np.where(outside, np.minimum(x_leading, xc - 0.5 * dx), xc)
    fx = float(np.sum(px_all) * da)
    fy = float(np.sum(py_all) * da)
    mz = float(np.sum(x[None, :] * py_all - y[:, None] * px_all) * da)
    adh = float(np.count_nonzero(state == _ADHESION) * da)
    sl = float(np.count_nonzero(state == _SLIP) * da)
    return fx, fy, mz, adh, sl, px_all, py_all, state


@dataclass(frozen=True)
class FastsimResult:
    """Detailed FASTSIM result (SI units).

    fx, fy, mz: total forces (N) and moment (N*m) of the rail on the wheel,
        contact frame, as in `creep_forces`.
    x: (ny, nx) cell-centre x (m); y: (ny,) strip-centre y (m).
    cell_area: (ny, nx) area of each cell (m^2).
    pressure: (ny, nx) normal pressure p_n used for the bound mu*p_n (Pa).
    traction_x, traction_y: (ny, nx) tangential traction on the wheel (Pa).
    state: (ny, nx) int8: 0 outside the patch, 1 adhesion, 2 slip.
    adhesion_area, slip_area: areas of the adhesion and slip zones (m^2).
    """
    fx: float
    fy: float
    mz: float
    x: np.ndarray
    y: np.ndarray
    cell_area: np.ndarray
    pressure: np.ndarray
    traction_x: np.ndarray
    traction_y: np.ndarray
    state: np.ndarray
    adhesion_area: float
    slip_area: float


def _bound_kind(bound) -> int:
    if bound in ("parabolic", FASTSIM_PARABOLIC):
        return FASTSIM_PARABOLIC
    if bound in ("elliptic", "hertz", FASTSIM_ELLIPTIC):
        return FASTSIM_ELLIPTIC
    raise CreepError(f"FASTSIM bound must be 'parabolic' or 'elliptic', got {bound!r}")


def _check_finite(**values):
    for name, v in values.items():
        if not math.isfinite(v):
            raise CreepError(f"{name} must be finite, got {v!r}")


def fastsim_ellipse(xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson,
                    nx=FASTSIM_DEFAULT_N, ny=FASTSIM_DEFAULT_N, bound="parabolic",
                    flexibilities=None, backend="numba") -> FastsimResult:
    """FASTSIM on the Hertz ellipse x^2/a^2 + y^2/b^2 <= 1.

    ny strips of equal width 2b/ny, each cut into nx cells of equal length
    2*a(y)/nx, a(y) = a*sqrt(1 - y^2/b^2) at the strip centre. The traction
    bound is friction * p_n with p_n parabolic (Kalker's FASTSIM, default) or
    elliptic (Hertz), scaled so that sum(p_n dA) = normal_force exactly.
    flexibilities: (L1, L2, L3) in m/Pa; default `fastsim_flexibilities`.
    backend: "numba" (default) or "numpy" (the reference implementation).
    Zero normal force or friction <= 0 gives zero tractions.
    """
    xi, eta, phi, a, b = float(xi), float(eta), float(phi), float(a), float(b)
    normal_force, friction = float(normal_force), float(friction)
    _check_finite(xi=xi, eta=eta, phi=phi, a=a, b=b, normal_force=normal_force,
                  friction=friction, shear_modulus=float(shear_modulus))
    if not (a > 0.0 and b > 0.0):
        raise CreepError(f"semi-axes must be > 0, got a={a!r}, b={b!r}")
    nx, ny = int(nx), int(ny)
    if nx < 1 or ny < 1:
        raise CreepError("nx and ny must be >= 1")
    kind = _bound_kind(bound)
    if flexibilities is None:
        if not shear_modulus > 0.0:
            raise CreepError("shear_modulus must be > 0")
        _check_poisson(float(poisson))
        flexibilities = fastsim_flexibilities(a, b, shear_modulus, poisson)
    l1, l2, l3 = (float(v) for v in flexibilities)
    n_eff = max(normal_force, 0.0)
    mu_eff = max(friction, 0.0)
    if backend == "numba":
        x = np.zeros((ny, nx))
        p = np.zeros((ny, nx))
        px = np.zeros((ny, nx))
        py = np.zeros((ny, nx))
        state = np.zeros((ny, nx), dtype=np.int8)
        fx, fy, mz, adh, sl = _fastsim_ellipse_nb(xi, eta, phi, a, b, n_eff, mu_eff, l1, l2, l3,
                                                  nx, ny, kind, True, x, p, px, py, state)
    elif backend == "numpy":
        fx, fy, mz, adh, sl, x, p, px, py, state = _fastsim_ellipse_reference(
            xi, eta, phi, a, b, n_eff, mu_eff, l1, l2, l3, nx, ny, kind)
    else:
        raise CreepError(f"backend must be 'numba' or 'numpy', got {backend!r}")
    dy = 2.0 * b / ny
    y = -b + (np.arange(ny) + 0.5) * dy
    aj = a * np.sqrt(np.maximum(1.0 - (y / b) ** 2, 0.0))
    cell_area = np.repeat((2.0 * aj / nx * dy)[:, None], nx, axis=1)
    return FastsimResult(fx, fy, mz, x, y, cell_area, p, px, py, state, adh, sl)


def fastsim_grid(pressure, x, y, xi, eta, phi, friction, flexibilities, x_leading=None,
                 backend="numba") -> FastsimResult:
    """FASTSIM strip algorithm on an arbitrary (non-Hertzian) pressure grid.

    pressure: (ny, nx) normal pressure at the cell centres (Pa), >= 0; cells
        with p <= 0 are outside the contact (a strip may hold several patches).
    x: (nx,) increasing, uniformly spaced cell-centre x (m, rolling direction);
    y: (ny,) uniformly spaced strip-centre y (m). Grid spacing dx = x[1]-x[0],
        dy = y[1]-y[0].
    x_leading: (ny,) x of the leading edge of each strip (m); the traction
        starts from zero there. Default: the front boundary (x + dx/2) of the
        foremost loaded cell of the strip. Loaded cells ahead of x_leading are
        treated as outside.
    flexibilities: (L1, L2, L3) in m/Pa (e.g. `fastsim_flexibilities` of an
        equivalent ellipse).
    Returns a `FastsimResult` (forces of the rail on the wheel, adhesion and
    slip areas, traction grids).
    """
    pressure = np.ascontiguousarray(pressure, dtype=np.float64)
    x = np.ascontiguousarray(x, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    if pressure.ndim != 2 or pressure.shape != (y.size, x.size):
        raise CreepError(f"pressure must have shape (len(y), len(x)) = {(y.size, x.size)}, "
                         f"got {pressure.shape}")
    if not (np.all(np.isfinite(pressure)) and np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise CreepError("pressure, x and y must be finite")
    for name, arr in (("x", x), ("y", y)):
        if arr.size > 1:
            d = np.diff(arr)
            if not (d[0] > 0.0 and np.allclose(d, d[0], rtol=1e-9, atol=0.0)):
                raise CreepError(f"{name} must be increasing with a uniform step")
    xi, eta, phi, friction = float(xi), float(eta), float(phi), float(friction)
    _check_finite(xi=xi, eta=eta, phi=phi, friction=friction)
    l1, l2, l3 = (float(v) for v in flexibilities)
    if not (l1 > 0.0 and l2 > 0.0 and l3 > 0.0):
        raise CreepError("flexibilities must be > 0")
    ny, nx = pressure.shape
    dx = x[1] - x[0] if nx > 1 else 1.0
    if x_leading is None:
        x_leading = np.full(ny, -np.inf)
        for j in range(ny):
            loaded = np.nonzero(pressure[j] > 0.0)[0]
            if loaded.size:
                x_leading[j] = x[loaded[-1]] + 0.5 * dx
    x_leading = np.ascontiguousarray(x_leading, dtype=np.float64)
    if x_leading.shape != (ny,):
        raise CreepError(f"x_leading must have shape ({ny},)")
    mu_eff = max(friction, 0.0)
    if backend == "numba":
        px = np.zeros((ny, nx))
        py = np.zeros((ny, nx))
        state = np.zeros((ny, nx), dtype=np.int8)
        fx, fy, mz, adh, sl = _fastsim_grid_nb(pressure, x, y, x_leading, xi, eta, phi,
                                               mu_eff, l1, l2, l3, px, py, state)
    elif backend == "numpy":
        fx, fy, mz, adh, sl, px, py, state = _fastsim_grid_reference(
            pressure, x, y, x_leading, xi, eta, phi, mu_eff, l1, l2, l3)
    else:
        raise CreepError(f"backend must be 'numba' or 'numpy', got {backend!r}")
    dy = y[1] - y[0] if ny > 1 else 1.0
    xx = np.repeat(x[None, :], ny, axis=0)
    cell_area = np.full((ny, nx), dx * dy)
    return FastsimResult(fx, fy, mz, xx, y.copy(), cell_area, pressure.copy(), px, py, state, adh, sl)


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
def _fastrip_nb(xi, eta, phi, a, b, n, mu, g, nu, nx, ny, store, px_out, py_out, state_out):
    """FaStrip forces (Fx, Fy, Mz, adhesion area, slip area); see the block comment.
    store: write tractions/state into the (ny, nx) output arrays."""
    c11, c22, c23, _ = _kalker_coefficients(_KALKER_TABLE, a / b, nu)
    l1 = 8.0 * a / (3.0 * c11 * g)
    l2 = 8.0 * a / (3.0 * c22 * g)
    l3 = math.pi * a * math.sqrt(a / b) / (4.0 * g * c23)
    pressure, x, y, x_leading = _uniform_grid_nb(a, b, n, nx, ny, 1)
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
    _fastsim_grid_nb(pressure, x, y, x_leading, xi, eta, phi, mu, l1, l2, l3,
                     fs_x, fs_y, fs_state)
    pi2 = math.pi * math.pi
    xi_s = -4.0 * (1.0 - nu) * c11 * g * xi / (2.0 * pi2 * mu_p0)
    eta_s = -4.0 * (1.0 - nu) * c22 * g * eta / (2.0 * pi2 * mu_p0)
    phi_s = -3.0 * math.sqrt(a * b) * c23 * g * phi / (2.0 * math.pi * mu_p0)
    one = 1.0 - phi_s * phi_s
    fx = 0.0
    fy = 0.0
    mz = 0.0
    adh = 0.0
    slip_area = 0.0
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
            if state == 1:
                adh += da
            else:
                slip_area += da
            fx += tx * da
            fy += ty * da
            mz += (xc * ty - yj * tx) * da
            if store:
                px_out[j, i] = tx
                py_out[j, i] = ty
                state_out[j, i] = state
    return fx, fy, mz, adh, slip_area


def fastrip(xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson,
            nx=FASTRIP_DEFAULT_N, ny=FASTRIP_DEFAULT_N) -> FastsimResult:
    """FaStrip (Sichani, Enblom & Berg 2016) on the Hertz ellipse, with the
    traction field: nx x ny equal cells over [-a, a] x [-b, b]. Arguments,
    units and signs as `creep_forces`. Returns a `FastsimResult` whose
    pressure is the elliptic Hertz pressure and whose state is the strip
    theory's division into adhesion (1) and slip (2)."""
    vals = [float(v) for v in (xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson)]
    xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson = vals
    _check_finite(xi=xi, eta=eta, phi=phi, a=a, b=b, normal_force=normal_force,
                  friction=friction, shear_modulus=shear_modulus, poisson=poisson)
    if not (a > 0.0 and b > 0.0):
        raise CreepError(f"semi-axes must be > 0, got a={a!r}, b={b!r}")
    if not shear_modulus > 0.0:
        raise CreepError(f"shear_modulus must be > 0, got {shear_modulus!r}")
    _check_poisson(poisson)
    nx, ny = int(nx), int(ny)
    if nx < 1 or ny < 1:
        raise CreepError("nx and ny must be >= 1")
    px = np.zeros((ny, nx))
    py = np.zeros((ny, nx))
    state = np.zeros((ny, nx), dtype=np.int8)
    if normal_force > 0.0 and friction > 0.0:
        fx, fy, mz, adh, sl = _fastrip_nb(xi, eta, phi, a, b, normal_force, friction,
                                          shear_modulus, poisson, nx, ny, True, px, py, state)
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


# ----------------------------------------------------------------------------
# One kernel, one signature
# ----------------------------------------------------------------------------

@njit(cache=True, error_model="numpy", _nrt=True)
def creep_forces_kernel(model_id, xi, eta, phi, a, b, normal_force, friction,
                        shear_modulus, poisson, speed, p1, p2, p3, p4, p5):
    """numba kernel of `creep_forces`; returns (Fx, Fy, Mz) (rail on wheel, contact frame).

    model_id: KALKER=0, SHE=1, POLACH=2, FASTSIM=3, FASTRIP=4. Extra parameters:
      KALKER, SHE: p1..p5 unused.
      POLACH: p1 = kA, p2 = kS (adhesion reduction, Polach 2005), p3 = A
        (mu_inf/mu0), p4 = B (s/m, friction decay with slip velocity); p5 unused.
        (1, 1, 1, 0) is Polach 1999; POLACH_2005_DRY / _WET hold the 2005 sets.
        friction is mu0; the slip velocity is w = |speed|*s_C (speed = 0 -> mu0).
      FASTSIM: p1 = nx (cells along x), p2 = ny (strips), values < 1 select
        the default 20; p3 = traction bound (0 parabolic, 1 elliptic Hertz);
        p4 = grid (0 uniform over [-a, a] x [-b, b], CONTACT's discretisation,
        default; 1 strips of their own length, as fastsim_ellipse); p5 unused.
        Variant: Kalker's (1982) three flexibilities L1, L2, L3, traction bound
        mu*p. On CONTACT's reference case (a = 8 mm, b = 4 mm, Fn = 82 kN,
        eta = -6.25e-4, phi = 0.625 1/m; published FASTSIM -0.61 ... -0.64
        by mesh, full theory -0.6074) the uniform 20 x 20 grid gives
        Fy/(mu Fn) = -0.636 (10 x 10 -0.628); refined grids converge to
        -0.644 (80 x 80), 0.7 % beyond the published band's end.
      FASTRIP: p1 = nx, p2 = ny (cells over [-a, a] x [-b, b]; values < 1
        select the default 20); p3..p5 unused.
    normal_force <= 0, friction <= 0 or a, b <= 0 give (0, 0, 0). The kernel
    does not check for NaN/inf input (the Python wrapper does).
    """
    if not (normal_force > 0.0) or not (friction > 0.0) or not (a > 0.0) or not (b > 0.0):
        return 0.0, 0.0, 0.0
    if model_id == 0:
        return _kalker(xi, eta, phi, a, b, shear_modulus, poisson)
    if model_id == 1:
        return _she(xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson)
    if model_id == 2:
        return _polach(xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson,
                       speed, p1, p2, p3, p4)
    if model_id == 4:
        nx = int(p1) if p1 >= 1.0 else 20
        ny = int(p2) if p2 >= 1.0 else 20
        dummy = np.zeros((1, 1))
        dummy_state = np.zeros((1, 1), dtype=np.int8)
        fx, fy, mz, adh, sl = _fastrip_nb(xi, eta, phi, a, b, normal_force, friction,
                                          shear_modulus, poisson, nx, ny, False,
                                          dummy, dummy, dummy_state)
        return fx, fy, mz
    # FASTSIM
    nx = int(p1) if p1 >= 1.0 else 20
    ny = int(p2) if p2 >= 1.0 else 20
    kind = 1 if p3 == 1.0 else 0
    c11, c22, c23, c33 = _kalker_coefficients(_KALKER_TABLE, a / b, poisson)
    l1 = 8.0 * a / (3.0 * c11 * shear_modulus)
    l2 = 8.0 * a / (3.0 * c22 * shear_modulus)
    l3 = math.pi * a * math.sqrt(a / b) / (4.0 * shear_modulus * c23)
    if p4 == 1.0:
        dummy = np.zeros((1, 1))
        dummy_state = np.zeros((1, 1), dtype=np.int8)
        fx, fy, mz, adh, sl = _fastsim_ellipse_nb(xi, eta, phi, a, b, normal_force, friction,
                                                  l1, l2, l3, nx, ny, kind, False,
                                                  dummy, dummy, dummy, dummy, dummy_state)
        return fx, fy, mz
    pressure, x, y, x_leading = _uniform_grid_nb(a, b, normal_force, nx, ny, kind)
    px = np.zeros((ny, nx))
    py = np.zeros((ny, nx))
    state = np.zeros((ny, nx), dtype=np.int8)
    fx, fy, mz, adh, sl = _fastsim_grid_nb(pressure, x, y, x_leading, xi, eta, phi, friction,
                                           l1, l2, l3, px, py, state)
    return fx, fy, mz


@njit(cache=True, error_model="numpy", _nrt=True)
def _uniform_grid_nb(a, b, normal_force, nx, ny, bound_kind):
    """CONTACT-style FASTSIM grid: nx x ny equal cells over [-a, a] x [-b, b];
    parabolic (0) or elliptic (1) pressure at the cell centres, scaled so that
    sum(p dA) = N exactly; the leading edge of each strip at the ellipse,
    x_lead = a sqrt(1 - y^2/b^2)."""
    dx = 2.0 * a / nx
    dy = 2.0 * b / ny
    x = np.empty(nx)
    y = np.empty(ny)
    for i in range(nx):
        x[i] = -a + (i + 0.5) * dx
    x_leading = np.empty(ny)
    for j in range(ny):
        y[j] = -b + (j + 0.5) * dy
        x_leading[j] = a * math.sqrt(max(1.0 - (y[j] / b) ** 2, 0.0))
    pressure = np.zeros((ny, nx))
    total = 0.0
    for j in range(ny):
        for i in range(nx):
            s = 1.0 - (x[i] / a) ** 2 - (y[j] / b) ** 2
            if s > 0.0:
                pressure[j, i] = math.sqrt(s) if bound_kind == 1 else s
                total += pressure[j, i]
    if total > 0.0:
        scale = normal_force / (total * dx * dy)
        for j in range(ny):
            for i in range(nx):
                pressure[j, i] *= scale
    return pressure, x, y, x_leading


def creep_forces_reference(model_id, xi, eta, phi, a, b, normal_force, friction,
                           shear_modulus, poisson, speed, p1, p2, p3, p4, p5):
    """Plain Python/NumPy reference of `creep_forces_kernel` (same arguments): the
    analytic models' kernels run as plain Python (.py_func), FASTSIM by its
    independent NumPy formulation, FaStrip as its kernel's plain Python (.py_func)."""
    if not (normal_force > 0.0) or not (friction > 0.0) or not (a > 0.0) or not (b > 0.0):
        return 0.0, 0.0, 0.0
    if model_id == KALKER:
        return _kalker.py_func(xi, eta, phi, a, b, shear_modulus, poisson)
    if model_id == SHE:
        return _she.py_func(xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson)
    if model_id == POLACH:
        return _polach.py_func(xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson,
                               speed, p1, p2, p3, p4)
    if model_id == FASTSIM:
        nx = int(p1) if p1 >= 1.0 else FASTSIM_DEFAULT_N
        ny = int(p2) if p2 >= 1.0 else FASTSIM_DEFAULT_N
        kind = 1 if p3 == 1.0 else 0
        l1, l2, l3 = fastsim_flexibilities(a, b, shear_modulus, poisson)
        if p4 == 1.0:
            fx, fy, mz, *_ = _fastsim_ellipse_reference(xi, eta, phi, a, b, normal_force, friction,
                                                        l1, l2, l3, nx, ny, kind)
            return fx, fy, mz
        pressure, x, y, x_leading = _uniform_grid_nb.py_func(a, b, normal_force, nx, ny, kind)
        fx, fy, mz, *_ = _fastsim_grid_reference(pressure, x, y, x_leading, xi, eta, phi,
                                                 friction, l1, l2, l3)
        return fx, fy, mz
    if model_id == FASTRIP:
        nx = int(p1) if p1 >= 1.0 else FASTRIP_DEFAULT_N
        ny = int(p2) if p2 >= 1.0 else FASTRIP_DEFAULT_N
        dummy = np.zeros((1, 1))
        dummy_state = np.zeros((1, 1), dtype=np.int8)
        fx, fy, mz, *_ = _fastrip_nb.py_func(xi, eta, phi, a, b, normal_force, friction,
                                             shear_modulus, poisson, nx, ny, False,
                                             dummy, dummy, dummy_state)
        return fx, fy, mz
    raise CreepError(f"unknown model id {model_id!r}")


_OPTION_KEYS = {
    KALKER: set(),
    SHE: set(),
    POLACH: {"kA", "kS", "A", "B"},
    FASTSIM: {"nx", "ny", "bound", "grid"},
    FASTRIP: {"nx", "ny"},
}


def _model_id(model) -> int:
    if isinstance(model, str):
        key = model.strip().lower()
        if key not in MODEL_IDS:
            raise CreepError(f"unknown creep model {model!r}; choose one of {sorted(MODEL_IDS)}")
        return MODEL_IDS[key]
    if isinstance(model, (int, np.integer)) and int(model) in MODEL_IDS.values():
        return int(model)
    raise CreepError(f"unknown creep model {model!r}; choose one of {sorted(MODEL_IDS)}")


def kernel_parameters(model, options=None):
    """(model_id, p1, p2, p3, p4, p5) for `creep_forces_kernel` from a model name and
    the options dict of `creep_forces` (the key "backend" is ignored here)."""
    model_id = _model_id(model)
    opts = dict(options or {})
    opts.pop("backend", None)
    unknown = set(opts) - _OPTION_KEYS[model_id]
    if unknown:
        raise CreepError(f"unknown option(s) {sorted(unknown)} for model {model!r}; "
                         f"allowed: {sorted(_OPTION_KEYS[model_id]) + ['backend']}")
    params = [0.0, 0.0, 0.0, 0.0, 0.0]
    if model_id == POLACH:
        merged = dict(POLACH_1999)
        merged.update(opts)
        k_a, k_s, big_a, big_b = (float(merged[k]) for k in ("kA", "kS", "A", "B"))
        _check_finite(kA=k_a, kS=k_s, A=big_a, B=big_b)
        if not (k_a > 0.0 and k_s > 0.0):
            raise CreepError(f"Polach kA and kS must be > 0, got kA={k_a}, kS={k_s}")
        if not (0.0 <= big_a <= 1.0) or big_b < 0.0:
            raise CreepError(f"Polach A must be in [0, 1] and B >= 0, got A={big_a}, B={big_b}")
        params[:4] = [k_a, k_s, big_a, big_b]
    elif model_id == FASTSIM:
        nx = int(opts.get("nx", FASTSIM_DEFAULT_N))
        ny = int(opts.get("ny", FASTSIM_DEFAULT_N))
        if nx < 1 or ny < 1:
            raise CreepError("FASTSIM nx and ny must be >= 1")
        grid = opts.get("grid", "uniform")
        if grid not in ("uniform", "strips"):
            raise CreepError(f"FASTSIM grid must be 'uniform' or 'strips', got {grid!r}")
        params[:4] = [float(nx), float(ny), float(_bound_kind(opts.get("bound", "parabolic"))),
                      float(FASTSIM_STRIPS if grid == "strips" else FASTSIM_UNIFORM)]
    elif model_id == FASTRIP:
        nx = int(opts.get("nx", FASTRIP_DEFAULT_N))
        ny = int(opts.get("ny", FASTRIP_DEFAULT_N))
        if nx < 1 or ny < 1:
            raise CreepError("FaStrip nx and ny must be >= 1")
        params[:2] = [float(nx), float(ny)]
    return (model_id, *params)


def creep_forces(model, xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson,
                 speed, options=None):
    """Creep forces (Fx, Fy, Mz) of the rail on the wheel, contact frame.

    model: "kalker", "she", "polach", "fastsim" or "fastrip" (or the integer ids).
    xi, eta: longitudinal and lateral creepage (-); phi: spin (1/m);
    a, b: semi-axes of the contact ellipse along x (rolling) and y (m);
    normal_force: N (N); friction: mu (for Polach: mu0); shear_modulus: G (Pa);
    poisson: nu (0 ... 0.5); speed: rolling speed V (m/s, used by Polach's
    slip velocity only). Any of them may be arrays (broadcast); then Fx, Fy,
    Mz are arrays of the broadcast shape.
    options: dict; "backend": "numba" (default, the kernel, as everywhere) or
        "numpy" (`creep_forces_reference`); for "polach": "kA", "kS", "A", "B"
        (default POLACH_1999; see POLACH_2005_DRY / _WET); for "fastsim":
        "nx", "ny" (default 20), "bound" ("parabolic" default, "elliptic") and
        "grid" ("uniform" default: CONTACT's nx x ny cells over the bounding
        rectangle; "strips": fastsim_ellipse's strips); for "fastrip": "nx", "ny"
        (default 20, cells over [-a, a] x [-b, b]).
    See the module docstring for signs, the Mz definition and the edge cases.
    """
    opts = dict(options or {})
    backend = opts.get("backend", "numba")
    if backend not in ("numpy", "numba"):
        raise CreepError(f"backend must be 'numpy' or 'numba', got {backend!r}")
    model_id, p1, p2, p3, p4, p5 = kernel_parameters(model, opts)
    arrays = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in
                                   (xi, eta, phi, a, b, normal_force, friction,
                                    shear_modulus, poisson, speed)))
    names = ("xi", "eta", "phi", "a", "b", "normal_force", "friction",
             "shear_modulus", "poisson", "speed")
    for name, arr in zip(names, arrays):
        if not np.all(np.isfinite(arr)):
            raise CreepError(f"{name} must be finite")
    shape = arrays[0].shape
    out = np.zeros((3,) + shape)
    func = creep_forces_kernel if backend == "numba" else creep_forces_reference
    for idx in np.ndindex(shape):
        vals = [float(arr[idx]) for arr in arrays]
        xi_, eta_, phi_, a_, b_, n_, mu_, g_, nu_, v_ = vals
        if n_ <= 0.0 or mu_ <= 0.0:
            continue
        if not (a_ > 0.0 and b_ > 0.0):
            raise CreepError(f"semi-axes must be > 0 under load, got a={a_!r}, b={b_!r}")
        if not g_ > 0.0:
            raise CreepError(f"shear_modulus must be > 0, got {g_!r}")
        _check_poisson(nu_)
        out[(slice(None),) + idx] = func(model_id, xi_, eta_, phi_, a_, b_, n_, mu_, g_, nu_, v_,
                                         p1, p2, p3, p4, p5)
    if shape == ():
        return float(out[0]), float(out[1]), float(out[2])
    return out[0], out[1], out[2]
