"""The saturated analytic creep models: Shen-Hedrick-Elkins and Polach, with a
spin moment that saturates with the forces."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .kalker import KALKER_TABLE, kalker_coefficients_from_table, linear_coefficients_kernel


# Polach options (kA, kS, A, B [s/m]). kA = kS = 1, A = 1 (constant friction)
# reproduces Polach 1999. The 2005 sets are those of Polach (2005, Wear 258,
# Table 2), as collected in docs/references.md; the friction argument is
# mu0 (dry 0.55, wet 0.3 in that paper).
POLACH_1999 = {"kA": 1.0, "kS": 1.0, "A": 1.0, "B": 0.0}
POLACH_2005_DRY = {"kA": 1.0, "kS": 0.4, "A": 0.4, "B": 0.6}
POLACH_2005_WET = {"kA": 0.3, "kS": 0.1, "A": 0.4, "B": 0.2}
POLACH_2005_DRY_MU0 = 0.55
POLACH_2005_WET_MU0 = 0.3


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
def _saturated_spin_moment(patch, mu_n, f23, f33, k3, polach_law):
    """Mz of the saturated models (block comment above): f23 eta k^3 + M_slip g(f33 |phi| / |M_slip|)."""
    xi, eta, phi, a, b = patch.xi, patch.eta, patch.phi, patch.a, patch.b
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
def she_creep(patch, options):
    """Shen, Hedrick & Elkins (1983): Kalker's linear forces scaled by F'/F =
    1 - u/3 + u^2/27 (u < 3), 1/u beyond, u = F/(mu N); the spin moment of the
    block comment above with k = 1 - u/3 (Vermeulen & Johnson's adhesion
    ellipse). No options."""
    xi, eta, phi = patch.xi, patch.eta, patch.phi
    n, mu = patch.normal_force, patch.friction
    f11, f22, f23, f33 = linear_coefficients_kernel(patch)
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
    mz = _saturated_spin_moment(patch, mu_n, f23, f33, k * k * k, False)
    return scale * fx, scale * fy, mz


@njit(cache=True, error_model="numpy", _nrt=False)
def polach_creep(patch, options):
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
    patch: a CreepPatch (friction is mu0); options: (kA, kS, A, B).
    """
    xi, eta, phi, a, b = patch.xi, patch.eta, patch.phi, patch.a, patch.b
    n, mu0, g, nu, speed = (patch.normal_force, patch.friction, patch.shear_modulus,
                            patch.poisson, patch.speed)
    k_a, k_s, big_a, big_b = options[0], options[1], options[2], options[3]
    a_over_b = a / b
    c11, c22, c23, c33 = kalker_coefficients_from_table(KALKER_TABLE, a_over_b, nu)
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
    mz = _saturated_spin_moment(patch, n_mu, g * ab * root_ab * c23, g * ab * ab * c33, k3, True)
    return fx, fy, mz


def she_creep_reference(patch, options):
    """she_creep in plain Python."""
    return she_creep.py_func(patch, options)


def polach_creep_reference(patch, options):
    """polach_creep in plain Python."""
    return polach_creep.py_func(patch, options)
