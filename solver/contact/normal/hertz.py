"""Normal wheel-rail contact: Hertz per contact point, multipoint normal forces.

Conventions (docs/CONVENTIONS.md): curvature sums A (rolling direction x) and
B (lateral y), in 1/m, A = (k_wheel_x + k_rail_x)/2, B = (k_wheel_y + k_rail_y)/2,
convex curvatures positive. Semi-axis ``a`` lies along x (rolling), ``b`` is
lateral. Wheel and rail are of the same material (Young's modulus ``young`` in
Pa, Poisson's ratio ``poisson``); the combined modulus is
E* = E / (2 (1 - nu^2)), i.e. 1/E* = (1-nu1^2)/E1 + (1-nu2^2)/E2. The normal
force follows N = K * delta^1.5 (N, m).

Each hot loop is a numba kernel (``@njit(cache=True, error_model="numpy",
_nrt=False)``, docs/CONVENTIONS.md; names ending in ``_kernel``) with a plain
NumPy/SciPy reference beside it; tests/test_normal.py holds the two equal.
The non-Hertzian methods (Kik-Piotrowski, the exact boundary-element
solution, pressure maps) are in solver.contact.normal.

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
  penetration: Ren & Jin (2010), Eqs. 10-12, shared between the points of one
  interpenetration region along its merge tree (merged_patch_forces_kernel);
  damping term C d(delta)/dt as in Kang (2012), Eq. 15 (solver.dynamics).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from scipy import optimize, special

from ...errors import SolverError


class NormalContactError(SolverError):
    """Bad input to the normal contact layer (non-convex curvature, bad material, ...)."""


# ---------------------------------------------------------------------------
# constants
# ---------------------------------------------------------------------------

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
    check_material(young, poisson)
    return young / (2.0 * (1.0 - poisson * poisson))


def check_material(young, poisson):
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
    check_material(young, poisson)
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
    check_material(young, poisson)
    _check_curvatures(A, B)
    e_star = young / (2.0 * (1.0 - poisson * poisson))
    kc, K, E = _shape_reference(max(A, B) / min(A, B))
    return _hertz_coefficients(A, B, kc, K, E, e_star)[2]


def hertz_force_from_penetration(penetration, A, B, young, poisson):
    """(N, a, b): normal force (N) and semi-axes (m) for a penetration delta (m).

    N = K delta^1.5; N = a = b = 0 for delta <= 0 (no contact: a separating
    contact carries no force). Curvatures as in hertz_ellipse().
    """
    check_material(young, poisson)
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

@njit(cache=True, error_model="numpy", _nrt=False)
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


@njit(cache=True, error_model="numpy", _nrt=False)
def elliptic_integrals_kernel(complementary_parameter):
    """(K, E) by the AGM for the complementary parameter p = 1 - m = k'^2 in (0, 1]."""
    kc = math.sqrt(complementary_parameter)
    K, s1 = _agm_kernel(kc)
    m = 1.0 - complementary_parameter
    return K, K * (1.0 - 0.5 * m - s1)


@njit(cache=True, error_model="numpy", _nrt=False)
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


@njit(cache=True, error_model="numpy", _nrt=False)
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


@njit(cache=True, error_model="numpy", _nrt=False)
def material_ok_kernel(young, poisson):
    return math.isfinite(young) and young > 0.0 and math.isfinite(poisson) and -1.0 < poisson <= 0.5


@njit(cache=True, error_model="numpy", _nrt=False)
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


@njit(cache=True, error_model="numpy", _nrt=False)
def hertz_ellipse_kernel(normal_force, A, B, young, poisson):
    """numba Hertz ellipse: (a, b, peak_pressure, approach, stiffness, flag).

    Same numbers as hertz_ellipse() for convex input. Never NaN: a curvature
    sum <= 0 is clamped (flag FLAG_CURVATURE_CLAMPED, see
    NON_CONVEX_CURVATURE_FLOOR); non-finite input, a bad material or a
    negative force give zeros with flag FLAG_INVALID_INPUT; N = 0 gives a zero
    patch.
    """
    A, B, flag = _clamp_curvatures_kernel(A, B)
    if (flag == FLAG_INVALID_INPUT or not material_ok_kernel(young, poisson)
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


@njit(cache=True, error_model="numpy", _nrt=False)
def hertz_from_penetration_kernel(penetration, A, B, young, poisson):
    """numba Hertz from the penetration delta (m): (normal_force, a, b, flag).

    N = K delta^1.5, zero force and zero patch for delta <= 0. Flags as in
    hertz_ellipse_kernel(); never NaN.
    """
    A, B, flag = _clamp_curvatures_kernel(A, B)
    if (flag == FLAG_INVALID_INPUT or not material_ok_kernel(young, poisson)
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
# Hertz from the penetration by a smooth fit of the shape terms (the RHS path)
# ---------------------------------------------------------------------------
# The load-independent Hertz terms depend on the curvature ratio r = max/min
# only: k' = minor/major, E/K (minor semi-axis b^2 = delta (E/K)/(A+B)) and
# S = (E/(n^2 K))^1.5 (stiffness 4 E* S/(3 sqrt(A+B))). _shape_kernel finds them
# by Newton's method on the AGM (~0.35 us per point); here they are Chebyshev
# interpolants in L = log(r), one per interval of width _FIT_WIDTH over
# [0, log(MAX_CURVATURE_RATIO)], through _shape_kernel's values at the
# Chebyshev nodes (computed at import). Their difference from _shape_kernel is
# below 1e-13 relative for r >= 1.1 and 7e-12 for r >= 1.001 (tests/test_normal.py
# holds it < 1e-10 and against the SciPy reference); nearer r = 1, where
# _shape_kernel's Newton equation loses digits to cancellation (up to ~1e-8 at
# r - 1 ~ 1e-6), the fit is the smoother of the two. Narrow intervals and a low
# degree rather than the reverse: the same accuracy (measured, r >= 1.1: width
# 0.5 / degree 12 8.2e-14, width 0.0625 / degree 5 6.8e-14) in half the time
# (38 -> 18 ns a point; the RHS evaluates it for every loaded contact point).
_FIT_WIDTH = 0.0625
_FIT_DEGREE = 5


def _shape_terms_exact(ratio):
    """(k', E/K, S) of _shape_kernel for ratio >= 1 (the values the fit interpolates)."""
    kc, K, E = _shape_kernel(ratio)
    m_major = (2.0 * E / (math.pi * kc * kc)) ** (1.0 / 3.0)
    n_minor = kc * m_major
    return kc, E / K, (E / (n_minor * n_minor * K)) ** 1.5


def _shape_fit_coefficients():
    """(n_intervals, 3, _FIT_DEGREE + 1) Chebyshev coefficients of (k', E/K, S) per
    interval: the interpolant through the values at the Chebyshev nodes, whose
    coefficients are the values times the inverse of the Chebyshev-Vandermonde
    matrix of the nodes (the same matrix for every interval)."""
    n_intervals = int(math.ceil(math.log(MAX_CURVATURE_RATIO) / _FIT_WIDTH))
    nodes = np.cos(np.pi * (np.arange(_FIT_DEGREE + 1) + 0.5) / (_FIT_DEGREE + 1))
    to_coefficients = np.linalg.inv(np.polynomial.chebyshev.chebvander(nodes, _FIT_DEGREE))
    ratios = np.exp(_FIT_WIDTH * (np.arange(n_intervals)[:, None] + 0.5 * (nodes[None, :] + 1.0)))
    values = np.array([[_shape_terms_exact(ratio) for ratio in row] for row in ratios])
    # values[i, node, term] -> coefficients[i, term, j] = sum over nodes of M[j, node] values
    # (C-contiguous: numba freezes it into the compiled code, which can then be cached)
    return np.ascontiguousarray(np.einsum("jn,inf->ifj", to_coefficients, values))


_SHAPE_FIT = _shape_fit_coefficients()


@njit(cache=True, error_model="numpy", _nrt=False)
def shape_terms_fit_kernel(ratio):
    """(k', E/K, S) for ratio = larger/smaller curvature sum in [1, MAX_CURVATURE_RATIO]
    from the Chebyshev fit (Clenshaw's recurrence)."""
    if ratio <= 1.0:
        ratio = 1.0
    coefficients = _SHAPE_FIT
    n_intervals = coefficients.shape[0]
    L = math.log(ratio)
    i = min(int(L / _FIT_WIDTH), n_intervals - 1)
    x = 2.0 * (L / _FIT_WIDTH - i) - 1.0
    x2 = 2.0 * x
    b1_0 = 0.0
    b2_0 = 0.0
    b1_1 = 0.0
    b2_1 = 0.0
    b1_2 = 0.0
    b2_2 = 0.0
    for j in range(_FIT_DEGREE, 0, -1):
        b1_0, b2_0 = x2 * b1_0 - b2_0 + coefficients[i, 0, j], b1_0
        b1_1, b2_1 = x2 * b1_1 - b2_1 + coefficients[i, 1, j], b1_1
        b1_2, b2_2 = x2 * b1_2 - b2_2 + coefficients[i, 2, j], b1_2
    return (x * b1_0 - b2_0 + coefficients[i, 0, 0], x * b1_1 - b2_1 + coefficients[i, 1, 0],
            x * b1_2 - b2_2 + coefficients[i, 2, 0])


@njit(cache=True, error_model="numpy", _nrt=False)
def hertz_from_penetration_fit_kernel(penetration, A, B, young, poisson):
    """hertz_from_penetration_kernel with the shape terms from the fit
    (shape_terms_fit_kernel): the same (normal_force, a, b, flag) to ~1e-13
    relative, about ten times faster. Flags and fallbacks as there."""
    A, B, flag = _clamp_curvatures_kernel(A, B)
    if (flag == FLAG_INVALID_INPUT or not material_ok_kernel(young, poisson)
            or not math.isfinite(penetration)):
        return 0.0, 0.0, 0.0, FLAG_INVALID_INPUT
    if penetration <= 0.0:
        return 0.0, 0.0, 0.0, flag
    e_star = young / (2.0 * (1.0 - poisson * poisson))
    kc, e_over_k, s_term = shape_terms_fit_kernel(B / A if A <= B else A / B)
    minor = math.sqrt(penetration * e_over_k / (A + B))
    major = minor / kc
    stiffness = 4.0 * e_star / (3.0 * math.sqrt(A + B)) * s_term
    force = stiffness * penetration * math.sqrt(penetration)
    if not (math.isfinite(force) and math.isfinite(major)):
        return 0.0, 0.0, 0.0, FLAG_INVALID_INPUT
    if A <= B:
        return force, major, minor, flag
    return force, minor, major, flag
