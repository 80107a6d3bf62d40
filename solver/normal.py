"""Normal wheel-rail contact: Hertz, multipoint elastic compression, Kik-Piotrowski, exact BEM.

Conventions (docs/CONVENTIONS.md): curvature sums A (rolling direction x) and
B (lateral y), in 1/m, A = (k_wheel_x + k_rail_x)/2, B = (k_wheel_y + k_rail_y)/2,
convex curvatures positive. Semi-axis ``a`` lies along x (rolling), ``b`` is
lateral. Wheel and rail are of the same material (Young's modulus ``young`` in
Pa, Poisson's ratio ``poisson``); the combined modulus is
E* = E / (2 (1 - nu^2)), i.e. 1/E* = (1-nu1^2)/E1 + (1-nu2^2)/E2. The normal
force follows N = K * delta^1.5 (N, m).

Each hot loop is a numba kernel (``@njit(cache=True)``, names ending in
``_kernel``) with a plain NumPy/SciPy reference beside it; tests/test_normal.py
holds the two equal.

Sources (facts and formulas only; the code is written here):

* Hertz theory of the elliptic contact: K.L. Johnson, *Contact Mechanics*,
  Cambridge University Press 1985, sections 3.4 and 4.2 -- pressure
  p = p0 sqrt(1 - x^2/a^2 - y^2/b^2), with a >= b and e^2 = 1 - (b/a)^2:
  A_major = p0 b/(E* a^2 e^2) (K - E), B_minor = p0 b/(E* a^2 e^2) ((a/b)^2 E - K),
  approach delta = p0 b K / E*, load P = (2/3) pi a b p0. From these follow
  B/A = (E - k'^2 K)/(k'^2 (K - E)) with k' = b/a, p0 = E* b (A+B)/E(e),
  a^3 = 3 P E(e)/(2 pi k'^2 E* (A+B)) and delta = b^2 (A+B) K/E.
* The classical coefficients a = m c, b = n c, c = (3 P/(4 E* (A+B)))^(1/3),
  cos(theta) = (B - A)/(A + B) (Timoshenko & Goodier's table; m = n = 1 at
  theta = 90 deg), here m^3 = 2 E(e)/(pi k'^2) for the major axis.
* Complete elliptic integrals by the arithmetic-geometric mean: Abramowitz &
  Stegun, *Handbook of Mathematical Functions*, 17.6.1-17.6.4:
  K = pi/(2 a_N), E = K (1 - sum_{n>=0} 2^(n-1) c_n^2), c_0^2 = m.
* Hamrock & Brewe (1983), J. Lubrication Technology 105:171, approximate
  a/b ~ 1.0339 (B/A)^0.636 (used only as the starting guess).
* Multipoint normal forces by elastic compression, each point with its own
  penetration: Ren & Jin (2010), Eqs. 10-12; damping term C d(delta)/dt as in
  Kang (2012), Eq. 15.
* Kik & Piotrowski (1996); Piotrowski & Kik (2008), "A simplified model of
  wheel/rail contact mechanics for non-Hertzian problems and its application in
  rail vehicle dynamic simulations", Vehicle System Dynamics 46(1-2):27-48:
  the patch is the interpenetration region at the virtual penetration
  eps*delta (eps = 0.55), the pressure is semi-elliptic along x in every
  lateral strip, and the load follows from the condition that the elastic
  approach at the point of maximum penetration equals delta.
* Influence coefficients of a uniformly loaded rectangle on the half-space
  (Love 1929, Phil. Trans. R. Soc. A 228:377; Johnson 1985, section 3.9); the
  constrained conjugate-gradient method with the total load as constraint:
  Polonsky & Keer (1999), Wear 231:206-219; the matrix-vector product by
  discrete convolution and FFT with zero padding: Liu, Wang & Liu (2000),
  Wear 243:101-111.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, NamedTuple, Sequence

import numpy as np
from numba import njit
from scipy import fft as scipy_fft
from scipy import ndimage, optimize, special

from .errors import SolverError

__all__ = [
    "NormalContactError",
    "KIK_PIOTROWSKI_REDUCTION",
    "FLAG_HERTZ",
    "FLAG_CURVATURE_CLAMPED",
    "FLAG_INVALID_INPUT",
    "NON_CONVEX_CURVATURE_FLOOR",
    "MAX_CURVATURE_RATIO",
    "BOTH_NON_CONVEX_CURVATURE",
    "combined_modulus",
    "HertzEllipse",
    "hertz_ellipse",
    "hertz_stiffness",
    "hertz_force_from_penetration",
    "hertz_penetration_from_force",
    "elliptic_integrals_reference",
    "elliptic_integrals_kernel",
    "hertz_ellipse_kernel",
    "hertz_from_penetration_kernel",
    "MultipointNormalForces",
    "multipoint_normal_forces",
    "multipoint_normal_forces_kernel",
    "KikPiotrowskiResult",
    "kik_piotrowski",
    "kik_piotrowski_force_kernel",
    "influence_coefficients",
    "influence_coefficients_kernel",
    "ContactPatch",
    "ExactNormalResult",
    "exact_normal_contact",
    "GridLevel",
    "ExactConvergence",
    "converge_exact_normal",
    "plot_pressure_map",
]


class NormalContactError(SolverError):
    """Bad input to the normal contact layer (non-convex curvature, bad material, ...)."""


# ---------------------------------------------------------------------------
# constants
# ---------------------------------------------------------------------------

#: Kik & Piotrowski (1996), Piotrowski & Kik (2008): virtual penetration = 0.55 * delta.
KIK_PIOTROWSKI_REDUCTION = 0.55

#: numba Hertz kernels: flag values returned beside the force.
FLAG_HERTZ = 0  #: convex curvatures, plain Hertz
FLAG_CURVATURE_CLAMPED = 1  #: a curvature sum <= 0 (or a ratio > MAX_CURVATURE_RATIO) was clamped
FLAG_INVALID_INPUT = 2  #: non-finite input or result, or bad material: zero force returned

#: Largest curvature ratio max(A, B)/min(A, B) handled (flange contacts reach ~1e3);
#: beyond it the Python API raises and the numba kernels clamp the smaller sum.
MAX_CURVATURE_RATIO = 1e12

#: Non-Hertzian fallback of the numba kernels: a non-convex (<= 0) curvature sum
#: is replaced by this fraction of the other, convex sum. With B = 0.01 A the
#: patch is a long narrow ellipse, b/a ~ 20, the shape of a conformal (worn
#: hollow wheel on a matching rail) contact; use kik_piotrowski() or
#: exact_normal_contact() for its true shape.
NON_CONVEX_CURVATURE_FLOOR = 0.01
#: ... and when both sums are <= 0, both are set to this value (1/m).
BOTH_NON_CONVEX_CURVATURE = 0.1

# below this log(B/A) the eccentricity comes from the series log(B/A) = 3 m / 4
_SMALL_LOG_RATIO = 1e-7
_EPS = np.finfo(float).eps
# coefficients of the starting guess in _shape_kernel (a fit, not a table: the
# result comes from Newton's method on the exact AGM expressions)
_GUESS_P1, _GUESS_P2, _GUESS_P3 = 0.216611062038163, 0.0708930153909781, 0.003862459784401362
_GUESS_Q1, _GUESS_Q2, _GUESS_Q3 = 0.1625391801137085, 0.05761301574373642, 0.003816954152047816


def combined_modulus(young: float, poisson: float) -> float:
    """Combined plane-strain modulus E* = E/(2(1-nu^2)) (Pa) of two bodies of one material."""
    _check_material(young, poisson)
    return young / (2.0 * (1.0 - poisson * poisson))


def _check_material(young, poisson):
    if not (np.isfinite(young) and young > 0.0):
        raise NormalContactError(f"Young's modulus must be finite and > 0 Pa, got {young!r}")
    if not (np.isfinite(poisson) and -1.0 < poisson <= 0.5):
        raise NormalContactError(f"Poisson's ratio must lie in (-1, 0.5], got {poisson!r}")


def _check_curvatures(A, B):
    if not (np.isfinite(A) and np.isfinite(B)):
        raise NormalContactError(f"curvature sums must be finite, got A={A!r}, B={B!r} (1/m)")
    if A <= 0.0 or B <= 0.0:
        raise NormalContactError(
            "Hertz needs a convex combined contact, A > 0 and B > 0 (1/m); got "
            f"A={A!r}, B={B!r}. A worn hollow wheel on a matching rail is conformal "
            "there: use kik_piotrowski() or exact_normal_contact() instead."
        )
    if max(A, B) > MAX_CURVATURE_RATIO * min(A, B):
        raise NormalContactError(
            f"curvature ratio max(A, B)/min(A, B) = {max(A, B) / min(A, B):.3g} exceeds "
            f"{MAX_CURVATURE_RATIO:g}: the contact is a line contact, not a Hertz ellipse")


# ---------------------------------------------------------------------------
# Hertz: complete elliptic integrals and the eccentricity, reference (SciPy)
# ---------------------------------------------------------------------------

def elliptic_integrals_reference(complementary_parameter):
    """K and E (SciPy) for the complementary parameter p = 1 - m = k'^2 (m = e^2).

    scipy.special.ellipkm1(p) is ellipk(m) evaluated without the loss of digits
    near m -> 1; ellipe(m) takes the parameter itself.
    """
    p = np.asarray(complementary_parameter, dtype=float)
    return special.ellipkm1(p), special.ellipe(1.0 - p)


def _log_ratio_reference(t):
    """log(B/A) (B >= A) for the squared axis ratio k'^2 = exp(t), from SciPy's K and E."""
    kc2 = math.exp(t)
    K, E = elliptic_integrals_reference(kc2)
    K, E = float(K), float(E)
    return math.log((E - kc2 * K) / (kc2 * (K - E)))


def _shape_reference(ratio):
    """(k' = minor/major, K, E) for ratio = larger/smaller curvature sum >= 1 (SciPy + brentq)."""
    if ratio <= 1.0:
        return 1.0, math.pi / 2.0, math.pi / 2.0
    log_ratio = math.log(ratio)
    if log_ratio < _SMALL_LOG_RATIO:
        t = math.log1p(-4.0 * log_ratio / 3.0)
    else:
        t = optimize.brentq(
            lambda tt: _log_ratio_reference(tt) - log_ratio,
            -2.0 * log_ratio - 5.0,
            -0.5 * log_ratio,
            xtol=1e-16,
            rtol=4.0 * _EPS,
            maxiter=200,
        )
    kc2 = math.exp(t)
    K, E = elliptic_integrals_reference(kc2)
    return math.exp(0.5 * t), float(K), float(E)


class HertzEllipse(NamedTuple):
    """Hertz contact ellipse. SI units: m, Pa, N; stiffness in N/m^1.5.

    a: semi-axis along x (rolling); b: lateral semi-axis; peak_pressure: p0;
    approach: penetration delta (mutual approach of distant points);
    stiffness: K in N = K delta^1.5; eccentricity: sqrt(1 - (minor/major)^2);
    m, n: classical coefficients of a and b, a = m c, b = n c,
    c = (3 N/(4 E* (A+B)))^(1/3) (m >= n when A <= B, as in the table indexed
    by cos(theta) = (B-A)/(A+B)); normal_force: N.
    """

    a: float
    b: float
    peak_pressure: float
    approach: float
    stiffness: float
    eccentricity: float
    m: float
    n: float
    normal_force: float

    @property
    def p0(self) -> float:
        """Peak pressure (Pa), alias of peak_pressure."""
        return self.peak_pressure

    @property
    def area(self) -> float:
        """Contact area pi a b (m^2)."""
        return math.pi * self.a * self.b


def _hertz_coefficients(A, B, kc, K, E, e_star):
    """(m, n, stiffness, approach coefficient) from the shape; shared by all Hertz functions."""
    m_major = (2.0 * E / (math.pi * kc * kc)) ** (1.0 / 3.0)
    n_minor = kc * m_major
    stiffness = 4.0 * e_star / (3.0 * math.sqrt(A + B)) * (E / (n_minor * n_minor * K)) ** 1.5
    if A <= B:
        return m_major, n_minor, stiffness
    return n_minor, m_major, stiffness


def hertz_ellipse(A: float, B: float, normal_force: float, young: float, poisson: float) -> HertzEllipse:
    """Hertz contact ellipse under a normal force (reference, SciPy elliptic integrals).

    A, B: curvature sums (1/m) in the rolling and lateral directions, both > 0
    (any ratio, e.g. 1e-3 ... 1e3); normal_force: N >= 0 (N); young (Pa),
    poisson: the one material of wheel and rail. Raises NormalContactError for
    non-convex curvatures, a negative force or a bad material. A zero force
    gives a zero patch (a = b = p0 = approach = 0).
    """
    _check_material(young, poisson)
    _check_curvatures(A, B)
    if not (np.isfinite(normal_force) and normal_force >= 0.0):
        raise NormalContactError(f"normal force must be finite and >= 0 N, got {normal_force!r}")
    e_star = young / (2.0 * (1.0 - poisson * poisson))
    kc, K, E = _shape_reference(max(A, B) / min(A, B))
    m, n, stiffness = _hertz_coefficients(A, B, kc, K, E, e_star)
    eccentricity = math.sqrt((1.0 - kc) * (1.0 + kc))
    c = (3.0 * normal_force / (4.0 * e_star * (A + B))) ** (1.0 / 3.0)
    a, b = m * c, n * c
    if normal_force == 0.0:
        return HertzEllipse(0.0, 0.0, 0.0, 0.0, stiffness, eccentricity, m, n, 0.0)
    p0 = 3.0 * normal_force / (2.0 * math.pi * a * b)
    minor = min(a, b)
    approach = minor * minor * (A + B) * K / E
    return HertzEllipse(a, b, p0, approach, stiffness, eccentricity, m, n, float(normal_force))


def hertz_stiffness(A: float, B: float, young: float, poisson: float) -> float:
    """Hertz stiffness K (N/m^1.5) in N = K delta^1.5 for curvature sums A, B (1/m)."""
    _check_material(young, poisson)
    _check_curvatures(A, B)
    e_star = young / (2.0 * (1.0 - poisson * poisson))
    kc, K, E = _shape_reference(max(A, B) / min(A, B))
    return _hertz_coefficients(A, B, kc, K, E, e_star)[2]


def hertz_force_from_penetration(penetration, A, B, young, poisson):
    """(N, a, b): normal force (N) and semi-axes (m) for a penetration delta (m).

    N = K delta^1.5; N = a = b = 0 for delta <= 0 (no contact: a separating
    contact carries no force). Curvatures as in hertz_ellipse().
    """
    _check_material(young, poisson)
    _check_curvatures(A, B)
    if not np.isfinite(penetration):
        raise NormalContactError(f"penetration must be finite, got {penetration!r}")
    if penetration <= 0.0:
        return 0.0, 0.0, 0.0
    e_star = young / (2.0 * (1.0 - poisson * poisson))
    kc, K, E = _shape_reference(max(A, B) / min(A, B))
    stiffness = _hertz_coefficients(A, B, kc, K, E, e_star)[2]
    minor = math.sqrt(penetration * E / ((A + B) * K))
    major = minor / kc
    a, b = (major, minor) if A <= B else (minor, major)
    return stiffness * penetration ** 1.5, a, b


def hertz_penetration_from_force(normal_force, A, B, young, poisson):
    """(delta, a, b): penetration (m) and semi-axes (m) under a normal force N >= 0 (N).

    Inverse of hertz_force_from_penetration(); delta = (N/K)^(2/3).
    """
    ellipse = hertz_ellipse(A, B, normal_force, young, poisson)
    return ellipse.approach, ellipse.a, ellipse.b


# ---------------------------------------------------------------------------
# Hertz: numba kernels (AGM elliptic integrals, safeguarded Newton)
# ---------------------------------------------------------------------------

@njit(cache=True)
def _agm_kernel(kc):
    """AGM (Abramowitz & Stegun 17.6) for k' = kc in (0, 1]: returns (K, S1).

    S1 = sum_{n>=1} 2^(n-1) c_n^2, so that E = K (1 - m/2 - S1) with m = 1 - kc^2;
    also K - E = K (m/2 + S1) and E - kc^2 K = K (m/2 - S1), both without the
    cancellation of the difference of K and E.
    """
    a = 1.0
    b = kc
    s1 = 0.0
    weight = 1.0
    for _ in range(60):
        c = 0.5 * (a - b)
        s1 += weight * c * c
        if c <= 1e-17 * a:
            break
        a_next = 0.5 * (a + b)
        b = math.sqrt(a * b)
        a = a_next
        weight *= 2.0
    return math.pi / (2.0 * a), s1


@njit(cache=True)
def elliptic_integrals_kernel(complementary_parameter):
    """(K, E) by the AGM for the complementary parameter p = 1 - m = k'^2 in (0, 1]."""
    kc = math.sqrt(complementary_parameter)
    K, s1 = _agm_kernel(kc)
    m = 1.0 - complementary_parameter
    return K, K * (1.0 - 0.5 * m - s1)


@njit(cache=True)
def _shape_kernel(ratio):
    """(k' = minor/major, K, E) for ratio = larger/smaller curvature sum >= 1.

    Solves log((m/2 - S1)/(k'^2 (m/2 + S1))) = log(ratio) for t = log(k'^2) by
    Newton's method kept inside a bracket (bisection when a step leaves it).
    d log(ratio)/dm = K/(2 N1) - (3E/2 - K)/D1 with N1 = E - k'^2 K and
    D1 = k'^2 (K - E) (from dK/dm and dE/dm: dN1/dm = K/2, dD1/dm = 3E/2 - K).
    """
    if ratio <= 1.0:
        return 1.0, 0.5 * math.pi, 0.5 * math.pi
    log_ratio = math.log(ratio)
    if log_ratio < _SMALL_LOG_RATIO:
        t = math.log1p(-4.0 * log_ratio / 3.0)
    else:
        t_low = -2.0 * log_ratio - 5.0
        t_high = -0.5 * log_ratio
        # starting guess: rational fit of -t(L) made here from this solver's own
        # exact solutions on 0 <= L <= 14 (|error| < 7e-6; Hamrock & Brewe's
        # a/b ~ 1.0339 ratio^0.636 is off by up to 1.7 in t there), so that two
        # Newton steps reach machine precision
        L = log_ratio
        t = -L * (4.0 / 3.0 + L * (_GUESS_P1 + L * (_GUESS_P2 + L * _GUESS_P3))) / (
            1.0 + L * (_GUESS_Q1 + L * (_GUESS_Q2 + L * _GUESS_Q3)))
        if not (t_low < t < t_high):
            t = 0.5 * (t_low + t_high)
        for _ in range(100):
            kc2 = math.exp(t)
            m = -math.expm1(t)
            K, s1 = _agm_kernel(math.sqrt(kc2))
            half = 0.5 * m
            num = half - s1
            den = half + s1
            f = math.log(num) - t - math.log(den) - log_ratio
            if f == 0.0:
                break
            if f > 0.0:
                t_low = t
            else:
                t_high = t
            E = K * (1.0 - half - s1)
            dlog_dm = 0.5 / num - (1.5 * E - K) / (kc2 * K * den)
            slope = -kc2 * dlog_dm
            t_new = t - f / slope if slope < 0.0 else 0.5 * (t_low + t_high)
            if not (t_low <= t_new <= t_high):
                t_new = 0.5 * (t_low + t_high)
            if abs(t_new - t) <= 1e-9 * (1.0 + abs(t)):
                # quadratic convergence: the error after this step is ~ step^2
                t = t_new
                break
            t = t_new
    kc2 = math.exp(t)
    K, E = elliptic_integrals_kernel(kc2)
    return math.exp(0.5 * t), K, E


@njit(cache=True)
def _clamp_curvatures_kernel(A, B):
    """Documented fallback: (A, B, flag).

    A sum <= 0 (non-convex) becomes NON_CONVEX_CURVATURE_FLOOR times the other
    (both <= 0: both BOTH_NON_CONVEX_CURVATURE); a ratio above
    MAX_CURVATURE_RATIO is reduced to it by raising the smaller sum. flag is
    FLAG_CURVATURE_CLAMPED then, FLAG_INVALID_INPUT for non-finite sums.
    """
    if not (math.isfinite(A) and math.isfinite(B)):
        return A, B, FLAG_INVALID_INPUT
    flag = FLAG_HERTZ
    if not (A > 0.0 and B > 0.0):
        flag = FLAG_CURVATURE_CLAMPED
        if A > 0.0:
            B = NON_CONVEX_CURVATURE_FLOOR * A
        elif B > 0.0:
            A = NON_CONVEX_CURVATURE_FLOOR * B
        if not (A > 0.0 and B > 0.0):  # both non-convex, or the floor underflowed
            A = BOTH_NON_CONVEX_CURVATURE
            B = BOTH_NON_CONVEX_CURVATURE
    if A > MAX_CURVATURE_RATIO * B:
        B = A / MAX_CURVATURE_RATIO
        flag = FLAG_CURVATURE_CLAMPED
    elif B > MAX_CURVATURE_RATIO * A:
        A = B / MAX_CURVATURE_RATIO
        flag = FLAG_CURVATURE_CLAMPED
    return A, B, flag


@njit(cache=True)
def _material_ok_kernel(young, poisson):
    return math.isfinite(young) and young > 0.0 and math.isfinite(poisson) and -1.0 < poisson <= 0.5


@njit(cache=True)
def _ellipse_constants_kernel(A, B, young, poisson):
    """Load-independent Hertz constants for curvature sums A, B (convex, clamped):
    E*, the axis ratio kc = minor/major, K(e), E(e), the coefficients m, n of the
    major and minor semi-axes, and the stiffness K of N = K delta^1.5."""
    e_star = young / (2.0 * (1.0 - poisson * poisson))
    if A <= B:
        kc, K, E = _shape_kernel(B / A)
    else:
        kc, K, E = _shape_kernel(A / B)
    m_major = (2.0 * E / (math.pi * kc * kc)) ** (1.0 / 3.0)
    n_minor = kc * m_major
    stiffness = 4.0 * e_star / (3.0 * math.sqrt(A + B)) * (E / (n_minor * n_minor * K)) ** 1.5
    return e_star, kc, K, E, m_major, n_minor, stiffness


@njit(cache=True)
def hertz_ellipse_kernel(normal_force, A, B, young, poisson):
    """numba Hertz ellipse: (a, b, peak_pressure, approach, stiffness, flag).

    Same numbers as hertz_ellipse() for convex input. Never NaN: a curvature
    sum <= 0 is clamped (flag FLAG_CURVATURE_CLAMPED, see
    NON_CONVEX_CURVATURE_FLOOR); non-finite input, a bad material or a
    negative force give zeros with flag FLAG_INVALID_INPUT; N = 0 gives a zero
    patch.
    """
    A, B, flag = _clamp_curvatures_kernel(A, B)
    if (flag == FLAG_INVALID_INPUT or not _material_ok_kernel(young, poisson)
            or not (math.isfinite(normal_force) and normal_force >= 0.0)):
        return 0.0, 0.0, 0.0, 0.0, 0.0, FLAG_INVALID_INPUT
    e_star, kc, K, E, m_major, n_minor, stiffness = _ellipse_constants_kernel(A, B, young, poisson)
    if normal_force == 0.0:
        if not math.isfinite(stiffness):
            return 0.0, 0.0, 0.0, 0.0, 0.0, FLAG_INVALID_INPUT
        return 0.0, 0.0, 0.0, 0.0, stiffness, flag
    c = (3.0 * normal_force / (4.0 * e_star * (A + B))) ** (1.0 / 3.0)
    major = m_major * c
    minor = n_minor * c
    if not (minor > 0.0 and math.isfinite(major) and major * minor > 0.0):  # under/overflow
        return 0.0, 0.0, 0.0, 0.0, 0.0, FLAG_INVALID_INPUT
    p0 = 3.0 * normal_force / (2.0 * math.pi * major * minor)
    approach = minor * minor * (A + B) * K / E
    if not (math.isfinite(major) and math.isfinite(p0) and math.isfinite(approach) and math.isfinite(stiffness)
            and minor > 0.0):
        return 0.0, 0.0, 0.0, 0.0, 0.0, FLAG_INVALID_INPUT
    if A <= B:
        return major, minor, p0, approach, stiffness, flag
    return minor, major, p0, approach, stiffness, flag


@njit(cache=True)
def hertz_from_penetration_kernel(penetration, A, B, young, poisson):
    """numba Hertz from the penetration delta (m): (normal_force, a, b, flag).

    N = K delta^1.5, zero force and zero patch for delta <= 0. Flags as in
    hertz_ellipse_kernel(); never NaN.
    """
    A, B, flag = _clamp_curvatures_kernel(A, B)
    if (flag == FLAG_INVALID_INPUT or not _material_ok_kernel(young, poisson)
            or not math.isfinite(penetration)):
        return 0.0, 0.0, 0.0, FLAG_INVALID_INPUT
    if penetration <= 0.0:
        return 0.0, 0.0, 0.0, flag
    e_star, kc, K, E, m_major, n_minor, stiffness = _ellipse_constants_kernel(A, B, young, poisson)
    minor = math.sqrt(penetration * E / ((A + B) * K))
    major = minor / kc
    force = stiffness * penetration * math.sqrt(penetration)
    if not (math.isfinite(force) and math.isfinite(major)):
        return 0.0, 0.0, 0.0, FLAG_INVALID_INPUT
    if A <= B:
        return force, major, minor, flag
    return force, minor, major, flag


# ---------------------------------------------------------------------------
# Multipoint normal forces (Ren & Jin 2010, Eqs. 10-12; Kang 2012, Eq. 15)
# ---------------------------------------------------------------------------

class MultipointNormalForces(NamedTuple):
    """Per contact point (arrays of one shape): normal_force (N), a, b (m), stiffness (N/m^1.5).

    normal_force = max(0, K delta^1.5 + C d(delta)/dt) where delta > 0, else 0.
    """

    normal_force: np.ndarray
    a: np.ndarray
    b: np.ndarray
    stiffness: np.ndarray


def multipoint_normal_forces(penetrations, penetration_rates, A, B, young, poisson, damping=0.0):
    """Normal force of every contact point of a wheel by elastic compression (reference).

    penetrations: delta_i (m), one per contact point (Ren & Jin 2010, Eqs.
    10-12: each point carries its own penetration and Hertz stiffness K_i);
    penetration_rates: d(delta_i)/dt (m/s); A, B: curvature sums per point
    (1/m); damping: C (N s/m), scalar or per point (Kang 2012, Eq. 15:
    N = K delta^1.5 + C d(delta)/dt). The force is never negative: a contact
    that is separating fast cannot pull. Points with delta <= 0 carry no force
    and their curvatures are not checked; a point in contact with A <= 0 or
    B <= 0 raises NormalContactError.
    """
    _check_material(young, poisson)
    arrays = np.broadcast_arrays(
        np.asarray(penetrations, dtype=float), np.asarray(penetration_rates, dtype=float),
        np.asarray(A, dtype=float), np.asarray(B, dtype=float), np.asarray(damping, dtype=float),
    )
    delta, rate, curv_a, curv_b, damp = (np.array(arr, dtype=float) for arr in arrays)
    if not (np.all(np.isfinite(delta)) and np.all(np.isfinite(rate)) and np.all(np.isfinite(damp))):
        raise NormalContactError("penetrations, penetration rates and damping must be finite")
    if np.any(damp < 0.0):
        raise NormalContactError("damping must be >= 0 N s/m")
    force = np.zeros(delta.shape)
    semi_a = np.zeros(delta.shape)
    semi_b = np.zeros(delta.shape)
    stiffness = np.zeros(delta.shape)
    for index in zip(*np.nonzero(delta > 0.0)):
        stiffness[index] = hertz_stiffness(curv_a[index], curv_b[index], young, poisson)
        elastic, semi_a[index], semi_b[index] = hertz_force_from_penetration(
            delta[index], curv_a[index], curv_b[index], young, poisson)
        force[index] = max(0.0, elastic + damp[index] * rate[index])
    return MultipointNormalForces(force, semi_a, semi_b, stiffness)


@njit(cache=True)
def multipoint_normal_forces_kernel(penetrations, penetration_rates, A, B, young, poisson, damping,
                                    normal_force_out, a_out, b_out, flag_out):
    """numba multipoint normal forces, written into the *_out arrays (1-D, one per point).

    Same physics as multipoint_normal_forces(); damping is an array (N s/m).
    flag_out: FLAG_* per point (non-convex curvature is clamped as in
    hertz_from_penetration_kernel(), never NaN). Returns the total force (N).
    """
    total = 0.0
    for i in range(penetrations.shape[0]):
        elastic, semi_a, semi_b, flag = hertz_from_penetration_kernel(
            penetrations[i], A[i], B[i], young, poisson)
        force = 0.0
        if elastic > 0.0:
            rate = penetration_rates[i]
            damp = damping[i]
            if math.isfinite(rate) and math.isfinite(damp):
                force = max(0.0, elastic + damp * rate)
            else:
                flag = FLAG_INVALID_INPUT
        normal_force_out[i] = force
        a_out[i] = semi_a
        b_out[i] = semi_b
        flag_out[i] = flag
        total += force
    return total


# ---------------------------------------------------------------------------
# Influence coefficients of uniformly loaded rectangles (Love 1929)
# ---------------------------------------------------------------------------

def _rectangle_primitive(u, v):
    """Signed integral over [0,u] x [0,v] of 1/sqrt(x^2+y^2) (NumPy, vectorised)."""
    au = np.abs(u)
    av = np.abs(v)
    safe_u = np.where(au > 0.0, au, 1.0)
    safe_v = np.where(av > 0.0, av, 1.0)
    value = (np.where(au > 0.0, au * np.arcsinh(av / safe_u), 0.0)
             + np.where(av > 0.0, av * np.arcsinh(au / safe_v), 0.0))
    return np.sign(u) * np.sign(v) * value


def _rectangle_integral(x, y, half_x, half_y):
    """Integral of 1/r over the rectangle |xi| <= half_x, |eta| <= half_y seen from (x, y)."""
    return (_rectangle_primitive(x + half_x, y + half_y) - _rectangle_primitive(x - half_x, y + half_y)
            - _rectangle_primitive(x + half_x, y - half_y) + _rectangle_primitive(x - half_x, y - half_y))


def influence_coefficients(nx, ny, dx, dy, young, poisson):
    """Normal displacement (m per Pa) at the centre of element (i, j) offsets from a unit pressure.

    Returns an (nx, ny) array C[i, j] for element offsets i along x, j along y:
    the combined approach of both surfaces under 1 Pa on one dx x dy
    rectangle, C = (1/(pi E*)) * integral of 1/r over the rectangle (Love 1929).
    """
    _check_material(young, poisson)
    e_star = young / (2.0 * (1.0 - poisson * poisson))
    x = np.arange(nx, dtype=float)[:, None] * dx
    y = np.arange(ny, dtype=float)[None, :] * dy
    return _rectangle_integral(x, y, 0.5 * dx, 0.5 * dy) / (math.pi * e_star)


@njit(cache=True)
def _rectangle_primitive_kernel(u, v):
    au = abs(u)
    av = abs(v)
    value = 0.0
    if au > 0.0:
        value += au * math.asinh(av / au)
    if av > 0.0:
        value += av * math.asinh(au / av)
    if (u < 0.0) != (v < 0.0):
        return -value
    return value


@njit(cache=True)
def influence_coefficients_kernel(nx, ny, dx, dy, young, poisson):
    """numba version of influence_coefficients() (same (nx, ny) array, m/Pa)."""
    e_star = young / (2.0 * (1.0 - poisson * poisson))
    hx = 0.5 * dx
    hy = 0.5 * dy
    out = np.empty((nx, ny))
    for i in range(nx):
        x = i * dx
        for j in range(ny):
            y = j * dy
            out[i, j] = (_rectangle_primitive_kernel(x + hx, y + hy) - _rectangle_primitive_kernel(x - hx, y + hy)
                         - _rectangle_primitive_kernel(x + hx, y - hy)
                         + _rectangle_primitive_kernel(x - hx, y - hy)) / (math.pi * e_star)
    return out


# ---------------------------------------------------------------------------
# Kik-Piotrowski virtual penetration method
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class KikPiotrowskiResult:
    """Kik-Piotrowski non-elliptic patch. SI units (m, Pa, N).

    lateral: strip centres y (ny,); half_length: L(y), the half-length of the
    patch along x in each strip (0 outside); x: rolling coordinates (nx,) of
    the pressure grid; pressure: (nx, ny) grid, p = c sqrt(L(y)^2 - x^2);
    normal_force; area; peak_pressure (the largest pressure);
    penetration delta and virtual_penetration eps*delta; reduction eps;
    y_max_penetration: y of the point of maximum penetration (gap minimum);
    lateral_extent: (y_min, y_max) of the patch (linear zero of the
    interpenetration between the last strip in and the first out); dy: strip
    width.
    """

    lateral: np.ndarray
    half_length: np.ndarray
    x: np.ndarray
    pressure: np.ndarray
    normal_force: float
    area: float
    peak_pressure: float
    penetration: float
    virtual_penetration: float
    reduction: float
    y_max_penetration: float
    lateral_extent: tuple
    dy: float

    @property
    def semi_length(self) -> float:
        """Largest half-length of the patch along x (m) (Hertz a for an elliptic gap)."""
        return float(self.half_length.max()) if self.half_length.size else 0.0

    @property
    def semi_width(self) -> float:
        """Half the lateral extent of the patch (m) (Hertz b for an elliptic gap)."""
        return 0.5 * (self.lateral_extent[1] - self.lateral_extent[0])

    @property
    def y(self) -> np.ndarray:
        """Lateral coordinates of the pressure grid's columns (m), same as lateral."""
        return self.lateral


def _check_strips(lateral, gap, rolling_radius):
    y = np.asarray(lateral, dtype=float)
    h = np.asarray(gap, dtype=float)
    if y.ndim != 1 or h.shape != y.shape or y.size < 3:
        raise NormalContactError("lateral and gap must be 1-D arrays of one length >= 3")
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(h))):
        raise NormalContactError("lateral and gap must be finite")
    steps = np.diff(y)
    dy = float(steps.mean())
    if not (dy > 0.0 and np.allclose(steps, dy, rtol=1e-6, atol=0.0)):
        raise NormalContactError("lateral coordinates must increase with a uniform step")
    radius = np.broadcast_to(np.asarray(rolling_radius, dtype=float), y.shape).astype(float)
    if not (np.all(np.isfinite(radius)) and np.all(radius > 0.0)):
        raise NormalContactError("rolling radius must be finite and > 0 m")
    return y, h, radius, dy


def _patch_edge(y, interpenetration, index, direction, dy):
    """Lateral edge of the patch beyond strip ``index`` (linear zero of the interpenetration)."""
    outer = index + direction
    if outer < 0 or outer >= y.size:
        return float(y[index] + 0.5 * direction * dy)
    inner_value = interpenetration[index]
    outer_value = interpenetration[outer]
    return float(y[index] + direction * dy * inner_value / (inner_value - outer_value))


def kik_piotrowski(lateral, gap, rolling_radius, penetration, young, poisson, *,
                   reduction=KIK_PIOTROWSKI_REDUCTION, cells_per_strip=32, rolling_points=41):
    """Kik-Piotrowski normal contact from the profiles' gap function (reference, NumPy).

    lateral: strip centres y (m), uniform step, across the contact region;
    gap: undeformed normal distance between the profiles at x = 0 (m) -- only
    its shape matters, it is shifted so that its minimum (first touch, the
    point of maximum penetration y0) is zero; rolling_radius: longitudinal
    radius of curvature of the wheel, scalar or per strip (m; r/cos(contact
    angle) for a contact on an inclined part of the profile, the rail being
    straight); penetration: delta (m), the approach beyond first touch (for the
    geometry's gap with negative = penetration pass -gap.min()); young (Pa),
    poisson; reduction: eps = 0.55 (Piotrowski & Kik 2008).

    The patch is where eps*delta - gap(y) - x^2/(2 R(y)) > 0, so its half-length
    is L(y) = sqrt(2 R (eps delta - gap(y))); the pressure is
    p = c sqrt(L(y)^2 - x^2), and c follows from the elastic approach at
    (0, y0) being delta: delta = (1/(pi E*)) int p/r dA, evaluated with the
    exact integral of 1/r over cells_per_strip cells in every strip (cell
    averages of the pressure). Several separated regions share the one
    condition at y0: call once per patch for separated contacts.
    Returns KikPiotrowskiResult; zero force for delta <= 0.
    """
    _check_material(young, poisson)
    y, h, radius, dy = _check_strips(lateral, gap, rolling_radius)
    if not np.isfinite(penetration):
        raise NormalContactError(f"penetration must be finite, got {penetration!r}")
    if not (0.0 < reduction <= 1.0):
        raise NormalContactError(f"reduction factor must lie in (0, 1], got {reduction!r}")
    cells = int(cells_per_strip)
    if cells < 2:
        raise NormalContactError("cells_per_strip must be >= 2")
    e_star = young / (2.0 * (1.0 - poisson * poisson))
    h = h - h.min()
    j0 = int(np.argmin(h))
    y0 = float(y[j0])
    virtual = reduction * max(float(penetration), 0.0)
    interpenetration = virtual - h
    inside = interpenetration > 0.0
    half_length = np.where(inside, np.sqrt(2.0 * radius * np.clip(interpenetration, 0.0, None)), 0.0)
    if penetration <= 0.0 or not np.any(inside):
        x = np.zeros(max(int(rolling_points), 1))
        return KikPiotrowskiResult(y, np.zeros_like(y), x, np.zeros((x.size, y.size)), 0.0, 0.0, 0.0,
                                   max(float(penetration), 0.0), virtual, reduction, y0, (y0, y0), dy)
    strips = np.nonzero(inside)[0]
    L = half_length[strips][:, None]
    edges = L * np.linspace(-1.0, 1.0, cells + 1)[None, :]
    # cell averages of sqrt(L^2 - x^2): primitive (x sqrt(L^2-x^2) + L^2 asin(x/L))/2
    ratio = np.clip(edges / L, -1.0, 1.0)
    primitive = 0.5 * (edges * np.sqrt(np.clip(L * L - edges * edges, 0.0, None)) + L * L * np.arcsin(ratio))
    widths = np.diff(edges, axis=1)
    average = np.diff(primitive, axis=1) / widths
    v_low = (y[strips] - 0.5 * dy - y0)[:, None]
    v_high = (y[strips] + 0.5 * dy - y0)[:, None]
    corner_high = _rectangle_primitive(edges, v_high)
    corner_low = _rectangle_primitive(edges, v_low)
    influence = np.diff(corner_high, axis=1) - np.diff(corner_low, axis=1)
    displacement_integral = float(np.sum(average * influence))
    coefficient = math.pi * e_star * float(penetration) / displacement_integral
    force = coefficient * float(np.sum(0.5 * math.pi * half_length[strips] ** 2)) * dy
    area = float(np.sum(2.0 * half_length[strips])) * dy
    peak = coefficient * float(half_length.max())
    x_max = float(half_length.max())
    x = np.linspace(-x_max, x_max, max(int(rolling_points), 2))
    pressure = coefficient * np.sqrt(np.clip(half_length[None, :] ** 2 - x[:, None] ** 2, 0.0, None))
    extent = (_patch_edge(y, interpenetration, strips[0], -1, dy), _patch_edge(y, interpenetration, strips[-1], 1, dy))
    return KikPiotrowskiResult(y, half_length, x, pressure, force, area, peak, float(penetration), virtual,
                               float(reduction), y0, extent, dy)


@njit(cache=True)
def kik_piotrowski_force_kernel(lateral, gap, rolling_radius, penetration, young, poisson, reduction,
                                cells_per_strip):
    """numba Kik-Piotrowski: (normal_force, area, peak_pressure, y_max_penetration, flag).

    Same numbers as kik_piotrowski() (lateral uniform, gap and rolling_radius
    arrays of the same length, rolling_radius per strip). flag: 0 contact,
    1 no contact (delta <= 0 or empty patch: zeros), 2 invalid input (zeros).
    Never NaN.
    """
    n = lateral.shape[0]
    if (n < 3 or gap.shape[0] != n or rolling_radius.shape[0] != n or cells_per_strip < 2
            or not _material_ok_kernel(young, poisson) or not math.isfinite(penetration)
            or not (0.0 < reduction <= 1.0)):
        return 0.0, 0.0, 0.0, 0.0, 2
    dy = (lateral[n - 1] - lateral[0]) / (n - 1)
    if not dy > 0.0:
        return 0.0, 0.0, 0.0, 0.0, 2
    gap_min = gap[0]
    j0 = 0
    for j in range(n):
        if not (math.isfinite(gap[j]) and math.isfinite(lateral[j]) and rolling_radius[j] > 0.0):
            return 0.0, 0.0, 0.0, 0.0, 2
        if gap[j] < gap_min:
            gap_min = gap[j]
            j0 = j
    y0 = lateral[j0]
    if penetration <= 0.0:
        return 0.0, 0.0, 0.0, y0, 1
    e_star = young / (2.0 * (1.0 - poisson * poisson))
    virtual = reduction * penetration
    displacement_integral = 0.0
    force_integral = 0.0
    length_sum = 0.0
    length_max = 0.0
    for j in range(n):
        interpenetration = virtual - (gap[j] - gap_min)
        if interpenetration <= 0.0:
            continue
        L = math.sqrt(2.0 * rolling_radius[j] * interpenetration)
        length_sum += 2.0 * L
        force_integral += 0.5 * math.pi * L * L
        if L > length_max:
            length_max = L
        v_low = lateral[j] - 0.5 * dy - y0
        v_high = lateral[j] + 0.5 * dy - y0
        # the cells are symmetric about x = 0 (the primitive is odd in x): sum
        # the right half twice, the middle cell of an odd count once
        first = (cells_per_strip + 1) // 2
        if cells_per_strip % 2 == 1:
            x_half = L / cells_per_strip
            average = (0.5 * (x_half * math.sqrt(max(L * L - x_half * x_half, 0.0)) + L * L * math.asin(
                x_half / L))) / x_half
            displacement_integral += average * 2.0 * (_rectangle_primitive_kernel(x_half, v_high)
                                                      - _rectangle_primitive_kernel(x_half, v_low))
        x_prev = L * (-1.0 + 2.0 * first / cells_per_strip)
        root = L * L - x_prev * x_prev
        prim_prev = 0.5 * (x_prev * math.sqrt(root if root > 0.0 else 0.0) + L * L * math.asin(x_prev / L))
        high_prev = _rectangle_primitive_kernel(x_prev, v_high)
        low_prev = _rectangle_primitive_kernel(x_prev, v_low)
        for k in range(first + 1, cells_per_strip + 1):
            x_next = L * (-1.0 + 2.0 * k / cells_per_strip)
            r = x_next / L
            if r > 1.0:
                r = 1.0
            root = L * L - x_next * x_next
            prim_next = 0.5 * (x_next * math.sqrt(root if root > 0.0 else 0.0) + L * L * math.asin(r))
            high_next = _rectangle_primitive_kernel(x_next, v_high)
            low_next = _rectangle_primitive_kernel(x_next, v_low)
            average = (prim_next - prim_prev) / (x_next - x_prev)
            displacement_integral += 2.0 * average * ((high_next - high_prev) - (low_next - low_prev))
            x_prev = x_next
            prim_prev = prim_next
            high_prev = high_next
            low_prev = low_next
    if length_sum == 0.0 or not displacement_integral > 0.0:
        return 0.0, 0.0, 0.0, y0, 1
    coefficient = math.pi * e_star * penetration / displacement_integral
    return coefficient * force_integral * dy, length_sum * dy, coefficient * length_max, y0, 0


# ---------------------------------------------------------------------------
# Exact (boundary-element) normal contact on a rectangular grid
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ContactPatch:
    """One connected contact patch of an exact solution. SI units.

    label: its number in ExactNormalResult.labels (1, 2, ...; largest force
    first); area (m^2); normal_force (N); peak_pressure (Pa); centroid_x,
    centroid_y: centre of pressure (m); length, width: extents along x and y
    (m, whole elements); elements: number of elements in contact.
    """

    label: int
    area: float
    normal_force: float
    peak_pressure: float
    centroid_x: float
    centroid_y: float
    length: float
    width: float
    elements: int


@dataclass(frozen=True)
class ExactNormalResult:
    """Exact normal solution on a grid. SI units (m, Pa, N).

    pressure: (nx, ny) element pressures (x = axis 0, rolling; y = axis 1,
    lateral); x, y: element centres; dx, dy; approach: rigid approach delta0
    (the deformed gap gap - delta0 + u is 0 in contact, >= 0 outside);
    surface_displacement: u (m), the combined elastic approach of both
    surfaces; total_force; area; peak_pressure; labels: (nx, ny) int patch
    labels (0 = out of contact); patches: ContactPatch per label;
    iterations, converged, error (relative change of the pressure in the last
    iteration); method: "fft", "numba" or "numpy".
    """

    pressure: np.ndarray
    x: np.ndarray
    y: np.ndarray
    dx: float
    dy: float
    approach: float
    surface_displacement: np.ndarray
    total_force: float
    area: float
    peak_pressure: float
    labels: np.ndarray
    patches: tuple
    iterations: int
    converged: bool
    error: float
    method: str

    @property
    def contact_mask(self) -> np.ndarray:
        return self.labels > 0


def _pk_iterations(matvec, gap, total_load, cell_area, tolerance, max_iterations, pressure):
    """Polonsky & Keer (1999) constrained CG with the total load as constraint (NumPy loop).

    matvec(v) -> displacement grid of the pressure grid v. Returns (pressure,
    displacement, approach, iterations, error, converged).
    """
    conj = np.zeros_like(gap)
    restart_factor = 0.0
    g_norm_old = 1.0
    error = np.inf
    converged = False
    iterations = 0
    for iterations in range(1, max_iterations + 1):
        displacement = matvec(pressure)
        contact = pressure > 0.0
        residual = displacement + gap
        residual -= residual[contact].mean()
        g_norm = float(np.sum(residual[contact] ** 2))
        conj = np.where(contact, residual + restart_factor * (g_norm / g_norm_old) * conj, 0.0)
        g_norm_old = g_norm
        response = matvec(conj)
        response -= response[contact].mean()
        denominator = float(np.sum(response[contact] * conj[contact]))
        if denominator == 0.0:
            converged = True
            break
        step = float(np.sum(residual[contact] * conj[contact])) / denominator
        previous = pressure
        pressure = np.where(contact, pressure - step * conj, 0.0)
        pressure[pressure < 0.0] = 0.0
        overlap = (pressure == 0.0) & (residual < 0.0)
        if np.any(overlap):
            restart_factor = 0.0
            pressure[overlap] -= step * residual[overlap]
        else:
            restart_factor = 1.0
        pressure *= total_load / (float(pressure.sum()) * cell_area)
        error = cell_area * float(np.abs(pressure - previous).sum()) / total_load
        if error < tolerance:
            converged = True
            break
    displacement = matvec(pressure)
    contact = pressure > 0.0
    approach = float((displacement + gap)[contact].mean())
    return pressure, displacement, approach, iterations, error, converged


@njit(cache=True, fastmath=True)
def _convolve_dense_kernel(kernel_full, values, out, mask, masked_only):
    """out[i] = sum_k C(i - k) values[k] on an (nx, ny) grid; kernel_full is (2nx-1, 2ny-1).

    Scatter form over the nonzeros of ``values``: each adds a contiguous,
    vectorisable slice of the kernel to every output row (C is symmetric, so
    C(i - k) = C(k - i) and the slice runs forwards). With masked_only, only
    each output row's span of mask == True is computed (the rest is 0) -- the
    CG needs the response on the contact set only. fastmath lets the slices
    vectorise; results differ from the NumPy reference by rounding only.
    """
    nx, ny = values.shape
    low = np.zeros(nx, dtype=np.int64)
    high = np.full(nx, ny, dtype=np.int64)
    if masked_only:
        for ix in range(nx):
            low[ix] = ny
            high[ix] = 0
            for iy in range(ny):
                if mask[ix, iy]:
                    if iy < low[ix]:
                        low[ix] = iy
                    high[ix] = iy + 1
    out[:, :] = 0.0
    for kx in range(nx):
        for ky in range(ny):
            value = values[kx, ky]
            if value == 0.0:
                continue
            for ix in range(nx):
                start = low[ix]
                stop = high[ix]
                if stop <= start:
                    continue
                row = kx - ix + nx - 1 if kx >= ix else ix - kx + nx - 1
                source = kernel_full[row, ny - 1 - ky + start:ny - 1 - ky + stop]
                target = out[ix, start:stop]
                for i in range(stop - start):
                    target[i] += value * source[i]


@njit(cache=True)
def _pk_kernel(kernel_full, gap, total_load, cell_area, tolerance, max_iterations, pressure):
    """numba Polonsky & Keer constrained CG, dense convolution product; pressure is updated in place.

    Returns (displacement, approach, iterations, error, converged), the same
    algorithm step by step as _pk_iterations().
    """
    nx, ny = gap.shape
    displacement = np.empty((nx, ny))
    residual = np.empty((nx, ny))
    conj = np.zeros((nx, ny))
    response = np.empty((nx, ny))
    previous = np.empty((nx, ny))
    contact = np.zeros((nx, ny), dtype=np.bool_)
    restart_factor = 0.0
    g_norm_old = 1.0
    error = np.inf
    converged = False
    iterations = 0
    for it in range(1, max_iterations + 1):
        iterations = it
        _convolve_dense_kernel(kernel_full, pressure, displacement, contact, False)
        total = 0.0
        count = 0
        for i in range(nx):
            for j in range(ny):
                residual[i, j] = displacement[i, j] + gap[i, j]
                contact[i, j] = pressure[i, j] > 0.0
                if contact[i, j]:
                    total += residual[i, j]
                    count += 1
        mean = total / count
        g_norm = 0.0
        for i in range(nx):
            for j in range(ny):
                residual[i, j] -= mean
                if pressure[i, j] > 0.0:
                    g_norm += residual[i, j] * residual[i, j]
        factor = restart_factor * (g_norm / g_norm_old)
        for i in range(nx):
            for j in range(ny):
                if pressure[i, j] > 0.0:
                    conj[i, j] = residual[i, j] + factor * conj[i, j]
                else:
                    conj[i, j] = 0.0
        g_norm_old = g_norm
        _convolve_dense_kernel(kernel_full, conj, response, contact, True)
        total = 0.0
        for i in range(nx):
            for j in range(ny):
                if pressure[i, j] > 0.0:
                    total += response[i, j]
        mean = total / count
        numerator = 0.0
        denominator = 0.0
        for i in range(nx):
            for j in range(ny):
                if pressure[i, j] > 0.0:
                    denominator += (response[i, j] - mean) * conj[i, j]
                    numerator += residual[i, j] * conj[i, j]
        if denominator == 0.0:
            converged = True
            break
        step = numerator / denominator
        overlap = False
        load = 0.0
        for i in range(nx):
            for j in range(ny):
                old = pressure[i, j]
                previous[i, j] = old
                new = old - step * conj[i, j] if old > 0.0 else 0.0
                if new < 0.0:
                    new = 0.0
                if new == 0.0 and residual[i, j] < 0.0:
                    overlap = True
                    new -= step * residual[i, j]
                pressure[i, j] = new
                load += new
        restart_factor = 0.0 if overlap else 1.0
        scale = total_load / (load * cell_area)
        change = 0.0
        for i in range(nx):
            for j in range(ny):
                pressure[i, j] *= scale
                change += abs(pressure[i, j] - previous[i, j])
        error = cell_area * change / total_load
        if error < tolerance:
            converged = True
            break
    _convolve_dense_kernel(kernel_full, pressure, displacement, contact, False)
    total = 0.0
    count = 0
    for i in range(nx):
        for j in range(ny):
            if pressure[i, j] > 0.0:
                total += displacement[i, j] + gap[i, j]
                count += 1
    return displacement, total / count, iterations, error, converged


def _full_kernel(coefficients):
    """(2nx-1, 2ny-1) kernel C(i-k) from the offset coefficients (nx, ny) (symmetric)."""
    nx, ny = coefficients.shape
    ix = np.abs(np.arange(-(nx - 1), nx))
    iy = np.abs(np.arange(-(ny - 1), ny))
    return np.ascontiguousarray(coefficients[ix[:, None], iy[None, :]])


def _fft_matvec(coefficients):
    """Discrete-convolution FFT product (Liu, Wang & Liu 2000): zero padding to (2nx, 2ny)."""
    nx, ny = coefficients.shape
    circulant = np.zeros((2 * nx, 2 * ny))
    circulant[:nx, :ny] = coefficients
    circulant[nx + 1:, :ny] = coefficients[:0:-1, :]
    circulant[:nx, ny + 1:] = coefficients[:, :0:-1]
    circulant[nx + 1:, ny + 1:] = coefficients[:0:-1, :0:-1]
    spectrum = scipy_fft.rfft2(circulant)
    shape = (2 * nx, 2 * ny)

    def matvec(values):
        product = scipy_fft.irfft2(spectrum * scipy_fft.rfft2(values, s=shape), s=shape)
        return product[:nx, :ny]

    return matvec


def _dense_matvec(coefficients):
    """Plain dense matrix (N x N, N = nx*ny) product with NumPy (reference)."""
    nx, ny = coefficients.shape
    ix, iy = np.divmod(np.arange(nx * ny), ny)
    matrix = coefficients[np.abs(ix[:, None] - ix[None, :]), np.abs(iy[:, None] - iy[None, :])]

    def matvec(values):
        return (matrix @ values.ravel()).reshape(nx, ny)

    return matvec


_DENSE_NUMPY_LIMIT = 6000


def _label_patches(pressure, x, y, dx, dy):
    """Label 8-connected contact patches (scipy.ndimage.label) and summarise them."""
    contact = pressure > 0.0
    raw_labels, count = ndimage.label(contact, structure=np.ones((3, 3), dtype=int))
    cell_area = dx * dy
    summaries = []
    for label in range(1, count + 1):
        mask = raw_labels == label
        p = np.where(mask, pressure, 0.0)
        force = float(p.sum()) * cell_area
        ix, iy = np.nonzero(mask)
        summaries.append((force, label, mask, p, ix, iy))
    summaries.sort(key=lambda item: -item[0])
    labels = np.zeros(pressure.shape, dtype=int)
    patches = []
    for new_label, (force, _, mask, p, ix, iy) in enumerate(summaries, start=1):
        labels[mask] = new_label
        weights = p[ix, iy]
        total = weights.sum()
        patches.append(ContactPatch(
            label=new_label,
            area=float(mask.sum()) * cell_area,
            normal_force=force,
            peak_pressure=float(p.max()),
            centroid_x=float(np.dot(weights, x[ix]) / total) if total > 0 else float(x[ix].mean()),
            centroid_y=float(np.dot(weights, y[iy]) / total) if total > 0 else float(y[iy].mean()),
            length=float(ix.max() - ix.min() + 1) * dx,
            width=float(iy.max() - iy.min() + 1) * dy,
            elements=int(mask.sum()),
        ))
    return labels, tuple(patches)


def exact_normal_contact(gap_grid, dx, dy, total_load, young, poisson, *, x0=None, y0=None, method="fft",
                         tolerance=1e-9, max_iterations=2000):
    """Exact frictionless normal contact of elastic half-spaces on a rectangular grid.

    gap_grid: undeformed gap h (m) at the element centres, shape (nx, ny),
    axis 0 = x (rolling, step dx), axis 1 = y (lateral, step dy); one patch or
    several. total_load: N >= 0 (N), the constraint; the rigid approach delta0
    is the unknown (deformed gap h - delta0 + u: zero where p > 0, >= 0
    elsewhere, p >= 0). young (Pa), poisson: the one material of both bodies.
    x0, y0: coordinates of element [0, 0]'s centre (default: grid centred on 0).
    method: "fft" (default: NumPy loop, FFT convolution), "numba" (numba loop,
    dense convolution) or "numpy" (reference: NumPy loop, dense matrix; small
    grids). Influence coefficients: uniform pressure on each rectangle (Love
    1929); iteration: Polonsky & Keer (1999) constrained conjugate gradients,
    stopped when sum|p_new - p_old| dA / N < tolerance.
    Returns ExactNormalResult with the patches labelled by scipy.ndimage.label.
    """
    _check_material(young, poisson)
    gap = np.array(gap_grid, dtype=float)
    if gap.ndim != 2 or min(gap.shape) < 1:
        raise NormalContactError("gap_grid must be a 2-D array (nx, ny)")
    if not np.all(np.isfinite(gap)):
        raise NormalContactError("gap_grid must be finite")
    if not (np.isfinite(dx) and np.isfinite(dy) and dx > 0.0 and dy > 0.0):
        raise NormalContactError("element sizes dx, dy must be finite and > 0 m")
    if not (np.isfinite(total_load) and total_load >= 0.0):
        raise NormalContactError(f"total load must be finite and >= 0 N, got {total_load!r}")
    if method not in ("fft", "numba", "numpy"):
        raise NormalContactError(f"method must be 'fft', 'numba' or 'numpy', got {method!r}")
    nx, ny = gap.shape
    x_start = -(nx - 1) * dx / 2.0 if x0 is None else float(x0)
    y_start = -(ny - 1) * dy / 2.0 if y0 is None else float(y0)
    x = x_start + dx * np.arange(nx)
    y = y_start + dy * np.arange(ny)
    cell_area = dx * dy
    if total_load == 0.0:
        zero = np.zeros_like(gap)
        return ExactNormalResult(zero, x, y, dx, dy, float(gap.min()), zero.copy(), 0.0, 0.0, 0.0,
                                 np.zeros(gap.shape, dtype=int), (), 0, True, 0.0, method)
    pressure = np.full(gap.shape, total_load / (gap.size * cell_area))
    if method == "numba":
        coefficients = influence_coefficients_kernel(nx, ny, float(dx), float(dy), float(young), float(poisson))
        displacement, approach, iterations, error, converged = _pk_kernel(
            _full_kernel(coefficients), gap, float(total_load), cell_area, float(tolerance),
            int(max_iterations), pressure)
    else:
        coefficients = influence_coefficients(nx, ny, dx, dy, young, poisson)
        if method == "numpy":
            if gap.size > _DENSE_NUMPY_LIMIT:
                raise NormalContactError(
                    f"method='numpy' builds a dense {gap.size}^2 matrix; use 'fft' above {_DENSE_NUMPY_LIMIT} elements")
            matvec = _dense_matvec(coefficients)
        else:
            matvec = _fft_matvec(coefficients)
        pressure, displacement, approach, iterations, error, converged = _pk_iterations(
            matvec, gap, float(total_load), cell_area, float(tolerance), int(max_iterations), pressure)
    labels, patches = _label_patches(pressure, x, y, dx, dy)
    return ExactNormalResult(
        pressure=pressure, x=x, y=y, dx=float(dx), dy=float(dy), approach=float(approach),
        surface_displacement=displacement, total_force=float(pressure.sum()) * cell_area,
        area=float(np.count_nonzero(pressure > 0.0)) * cell_area, peak_pressure=float(pressure.max()),
        labels=labels, patches=patches, iterations=int(iterations), converged=bool(converged),
        error=float(error), method=method)


class GridLevel(NamedTuple):
    """One grid of a convergence study: cells, sizes (m) and the main results."""

    nx: int
    ny: int
    dx: float
    dy: float
    peak_pressure: float
    area: float
    approach: float
    total_force: float
    patches: int
    change: float  # relative change of the peak pressure from the previous grid (nan on the first)


class ExactConvergence(NamedTuple):
    """converge_exact_normal() result: the finest result, the history of grids, converged flag."""

    result: ExactNormalResult
    history: tuple
    converged: bool


def converge_exact_normal(gap_function: Callable, x_limits: Sequence[float], y_limits: Sequence[float],
                          total_load, young, poisson, *, cells=(16, 16), refinement=1.5, tolerance=0.01,
                          max_levels=6, max_elements=200_000, method="fft", solver_tolerance=1e-9):
    """Refine the grid of exact_normal_contact() until the peak pressure changes by < tolerance.

    gap_function(x, y) -> gap (m) for arrays x (rolling) and y (lateral) of one
    shape (m); x_limits, y_limits: (min, max) of the potential contact area
    (m); cells: starting (nx, ny); refinement: factor on the cell counts per
    level; tolerance: relative change of the peak pressure between two grids
    (0.01 = 1 %); stops also at max_levels or when a grid would exceed
    max_elements. Returns ExactConvergence(result, history, converged); the
    history lists every grid with its peak pressure, area, approach, force.
    """
    x_low, x_high = map(float, x_limits)
    y_low, y_high = map(float, y_limits)
    if not (x_high > x_low and y_high > y_low):
        raise NormalContactError("limits must be increasing (min, max) pairs")
    if refinement <= 1.0:
        raise NormalContactError("refinement must be > 1")
    nx, ny = (int(c) for c in cells)
    history = []
    result = None
    previous_peak = None
    converged = False
    for _ in range(int(max_levels)):
        dx = (x_high - x_low) / nx
        dy = (y_high - y_low) / ny
        x = x_low + dx * (np.arange(nx) + 0.5)
        y = y_low + dy * (np.arange(ny) + 0.5)
        gap = np.asarray(gap_function(x[:, None] + 0.0 * y[None, :], y[None, :] + 0.0 * x[:, None]), dtype=float)
        result = exact_normal_contact(gap, dx, dy, total_load, young, poisson, x0=x[0], y0=y[0], method=method,
                                      tolerance=solver_tolerance)
        change = (float("nan") if previous_peak is None
                  else abs(result.peak_pressure - previous_peak) / max(result.peak_pressure, 1e-300))
        history.append(GridLevel(nx, ny, dx, dy, result.peak_pressure, result.area, result.approach,
                                 result.total_force, len(result.patches), change))
        if previous_peak is not None and change < tolerance:
            converged = True
            break
        previous_peak = result.peak_pressure
        nx_next = int(math.ceil(nx * refinement))
        ny_next = int(math.ceil(ny * refinement))
        if nx_next * ny_next > max_elements:
            break
        nx, ny = nx_next, ny_next
    return ExactConvergence(result, tuple(history), converged)


# ---------------------------------------------------------------------------
# pressure map
# ---------------------------------------------------------------------------

def plot_pressure_map(result, path, *, title=None):
    """Draw the pressure map of an ExactNormalResult or KikPiotrowskiResult to an image file.

    Lateral y across (mm), rolling x up (mm), pressure in MPa as colour, each
    labelled patch outlined and marked with its number, force and peak
    pressure. Uses matplotlib's Agg canvas (no display, no global backend
    change). Returns the path.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    pressure = np.asarray(result.pressure, dtype=float)
    x = np.asarray(result.x, dtype=float)
    y = np.asarray(result.y, dtype=float)
    if isinstance(result, ExactNormalResult):
        labels, patches = result.labels, result.patches
        kind = f"exact BEM ({result.method}, {pressure.shape[0]}x{pressure.shape[1]} elements)"
    else:
        dx = float(x[1] - x[0]) if x.size > 1 else 1.0
        labels, patches = _label_patches(pressure, x, y, dx, float(result.dy))
        grid_total = sum(patch.normal_force for patch in patches)
        if grid_total > 0.0:  # report the KP quadrature's forces, not the plotting grid's sums
            scale = result.normal_force / grid_total
            patches = tuple(replace(patch, normal_force=patch.normal_force * scale) for patch in patches)
        kind = f"Kik-Piotrowski (eps = {result.reduction:g})"
    figure = Figure(figsize=(8.0, 5.0), dpi=110)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    mesh = axes.pcolormesh(y * 1e3, x * 1e3, pressure / 1e6, shading="nearest", cmap="viridis")
    colorbar = figure.colorbar(mesh, ax=axes)
    colorbar.set_label("pressure (MPa)")
    if patches and min(pressure.shape) > 1:
        for patch in patches:
            axes.contour(y * 1e3, x * 1e3, (labels == patch.label).astype(float), levels=[0.5],
                         colors="white", linewidths=1.0)
            axes.annotate(f"{patch.label}: {patch.normal_force / 1e3:.1f} kN\n{patch.peak_pressure / 1e6:.0f} MPa",
                          (patch.centroid_y * 1e3, patch.centroid_x * 1e3), color="white", fontsize=8,
                          ha="center", va="center")
    axes.set_xlabel("lateral y (mm)")
    axes.set_ylabel("rolling x (mm)")
    total = getattr(result, "total_force", None)
    if total is None:
        total = result.normal_force
    axes.set_title(title or f"{kind}: N = {total / 1e3:.2f} kN, {len(patches)} patch(es)")
    axes.set_aspect("equal", adjustable="box")
    figure.tight_layout()
    figure.savefig(str(path))
    return path
