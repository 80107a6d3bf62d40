"""Tests of solver/contact/creep/ against published and analytic numbers.

Sources of the expected values:
- Kalker, "Three-Dimensional Elastic Bodies in Rolling Contact" (1990), Table E.3
  (creepage and spin coefficients C11, C22, C23, C33; a/b <= 1 given as a/b,
  a/b > 1 as b/a), and its asymptotes for a/b -> 0.
- CONTACT's FASTSIM reference case (its examples/fastsim), collected in
  docs/references.md.
- Shen, Hedrick & Elkins (1983); Polach (1999, VSD 33 suppl.); Polach (2005,
  Wear 258).
- CONTACT's published example outputs (E.A.H. Vollebregt, open-source CONTACT,
  examples/fastsim.ref_out and examples/tractcurv.ref_out): its FaStrip on the
  FASTSIM reference case and its full-theory longitudinal creep curve.
- Kalker's full theory with spin, from the linear range to full sliding, run
  by hand with CONTACT: tests/data/contact_reference/spin_moment.json (how:
  README.md there); Lubkin (1951) for the full-slip torque of pure spin.
"""
import json
import math
from pathlib import Path

import numpy as np
import pytest

from solver.contact.creep import models as creep
from solver.contact.creep.inputs import CreepPatch
from solver.contact.creep.models import FASTRIP, FASTSIM, KALKER, POLACH, SHE
from solver.contact.creep.forces import (
    creep_forces, creep_forces_kernel, creep_forces_reference, kernel_parameters,
)
from solver.contact.creep.saturated import (
    POLACH_2005_DRY, POLACH_2005_DRY_MU0, POLACH_2005_WET, POLACH_2005_WET_MU0,
)
from solver.contact.creep.fastrip import fastrip
from solver.contact.creep.fastsim import fastsim_ellipse, fastsim_grid
from solver.contact.creep.kalker import (
    fastsim_flexibilities, kalker_coefficients, kalker_coefficients_kernel,
    linear_creep_coefficients,
)

# A wheel-rail contact of typical size.
A, B = 6.0e-3, 5.0e-3
N = 100e3
G = 80e9
NU = 0.28
MU = 0.3
V = 20.0


# ---------------------------------------------------------------------------
# Kalker coefficients
# ---------------------------------------------------------------------------

# (a/b, nu, C11, C22, C23, C33) from Kalker (1990), Table E.3.
TABLE_E3 = [
    (0.2, 0.25, 3.37, 2.63, 0.603, 4.27),
    (0.5, 0.25, 3.62, 3.01, 0.929, 1.93),
    (1.0, 0.25, 4.12, 3.67, 1.47, 1.19),
    (1.0, 0.5, 5.20, 3.98, 1.63, 1.16),
    (0.7, 0.5, 4.97, 3.48, 1.29, 1.60),
    (2.0, 0.25, 5.10, 4.90, 2.62, 0.819),     # b/a = 0.5
    (5.0, 0.5, 8.82, 9.79, 7.89, 0.341),      # b/a = 0.2
    (10.0, 0.25, 11.7, 12.8, 14.6, 0.526),    # b/a = 0.1
    (1.0, 0.0, 3.40, 3.40, 1.33, 1.21),
]


@pytest.mark.parametrize("a_over_b, nu, c11, c22, c23, c33", TABLE_E3)
def test_kalker_table_entries(a_over_b, nu, c11, c22, c23, c33):
    got = kalker_coefficients(a_over_b, nu)
    for value, expected in zip(got, (c11, c22, c23, c33)):
        assert value == pytest.approx(expected, rel=0.01)


def test_kalker_between_rows_is_between_table_values():
    # a/b = 0.45, nu = 0.25 lies between the rows 0.4 (3.53, 2.88, .823, 2.32)
    # and 0.5 (3.62, 3.01, .929, 1.93).
    c = kalker_coefficients(0.45, 0.25)
    for value, lo, hi in zip(c, (3.53, 2.88, 0.823, 1.93), (3.62, 3.01, 0.929, 2.32)):
        assert lo < value < hi


def test_kalker_nu_interpolation_sanity():
    # nu = 0.3 lies between the 0.25 and 0.5 columns, nearer the 0.25 one.
    c_25 = kalker_coefficients(1.0, 0.25)
    c_50 = kalker_coefficients(1.0, 0.5)
    c_30 = kalker_coefficients(1.0, 0.3)
    for lo, mid, hi in zip(c_25, c_30, c_50):
        low, high = min(lo, hi), max(lo, hi)
        assert low < mid < high
        assert abs(mid - lo) < abs(hi - mid)
    # At a/b = 0.1 C11 is already near its asymptote pi^2/(4(1-nu)); the
    # interpolation in nu must reproduce its nu dependence (3.525 for 0.3).
    assert kalker_coefficients(0.1, 0.3)[0] == pytest.approx(math.pi ** 2 / (4 * 0.7), rel=0.01)


@pytest.mark.parametrize("nu", [0.0, 0.25, 0.3, 0.5])
def test_kalker_limits_a_over_b_to_zero(nu):
    g = 1e-5
    c11, c22, c23, c33 = kalker_coefficients(g, nu)
    assert c11 == pytest.approx(math.pi ** 2 / (4 * (1 - nu)), rel=0.01)
    assert c22 == pytest.approx(math.pi ** 2 / 4, rel=0.01)
    c23_limit = math.pi * math.sqrt(g) / (3 * (1 - nu)) * (1 + nu * (math.log(16 / g) - 5))
    assert c23 == pytest.approx(c23_limit, rel=0.01)
    assert c33 * g == pytest.approx(math.pi ** 2 / (16 * (1 - nu)), rel=0.01)


@pytest.mark.parametrize("nu", [0.0, 0.28, 0.5])
def test_kalker_continuous_at_table_ends(nu):
    for edge in (0.1, 10.0):
        inside = kalker_coefficients(edge * (1 + 1e-9) if edge < 1 else edge * (1 - 1e-9), nu)
        outside = kalker_coefficients(edge * (1 - 1e-9) if edge < 1 else edge * (1 + 1e-9), nu)
        assert np.allclose(inside, outside, rtol=1e-6)


@pytest.mark.parametrize("nu", [0.0, 0.28, 0.5])
def test_kalker_large_a_over_b_no_blow_up(nu):
    # For b/a -> 0 the linear coefficients at a fixed a stay finite and decrease
    # with b (Kalker's asymptotes: f11 ~ 2*pi*G*a^2/ln(16 a^2/b^2)).
    a = 0.01
    previous = None
    for ratio in (10.0, 30.0, 100.0, 1e3, 1e4, 1e6):
        c = kalker_coefficients(ratio, nu)
        assert all(math.isfinite(v) and v > 0 for v in c)
        f = linear_creep_coefficients(a, a / ratio, 1.0, nu)
        assert all(math.isfinite(v) and v > 0 for v in f)
        if previous is not None:
            assert all(fn < fp for fn, fp in zip(f, previous))
        previous = f
    # near the asymptote f11 approaches 2*pi*G*a^2/(Lambda - 2 nu) * (1 + (3-ln4)/(Lambda - 2 nu))
    g = 1e-6
    lam = math.log(16 / g ** 2)
    f11_limit = 2 * math.pi * a ** 2 / (lam - 2 * nu) * (1 + (3 - math.log(4)) / (lam - 2 * nu))
    assert linear_creep_coefficients(a, a * g, 1.0, nu)[0] == pytest.approx(f11_limit, rel=0.01)


def test_kalker_invalid_input():
    with pytest.raises(ValueError):
        kalker_coefficients(0.0, 0.3)
    with pytest.raises(ValueError):
        kalker_coefficients(1.0, 0.6)
    with pytest.raises(ValueError):
        kalker_coefficients(float("nan"), 0.3)


def test_kalker_coefficients_numba_equals_reference():
    rng = np.random.default_rng(1)
    for ratio in np.concatenate([10 ** rng.uniform(-4, 4, 40), [0.1, 1.0, 10.0, 0.5, 2.0]]):
        nu = float(rng.uniform(0, 0.5))
        ref = kalker_coefficients(float(ratio), nu)
        got = kalker_coefficients_kernel(float(ratio), nu)
        np.testing.assert_allclose(got, ref, rtol=1e-12)


# ---------------------------------------------------------------------------
# Kalker linear theory: the sign conventions of docs/CONVENTIONS.md
# ---------------------------------------------------------------------------

def test_kalker_linear_signs():
    f11, f22, f23, f33 = linear_creep_coefficients(A, B, G, NU)
    xi, eta, phi = 1e-4, -2e-4, 0.3
    fx, fy, mz = creep_forces("kalker", xi, eta, phi, A, B, N, MU, G, NU, V)
    assert fx == pytest.approx(-f11 * xi, rel=1e-12)
    assert fy == pytest.approx(-f22 * eta - f23 * phi, rel=1e-12)
    assert mz == pytest.approx(f23 * eta - f33 * phi, rel=1e-12)


# ---------------------------------------------------------------------------
# FASTSIM
# ---------------------------------------------------------------------------

def test_fastsim_small_creepage_equals_linear_theory():
    f11, f22, f23, _ = linear_creep_coefficients(A, B, G, NU)
    tiny = 1e-7
    r = fastsim_ellipse(tiny, 0, 0, A, B, N, MU, G, NU)
    assert r.fx == pytest.approx(-f11 * tiny, rel=0.02)
    r = fastsim_ellipse(0, tiny, 0, A, B, N, MU, G, NU)
    assert r.fy == pytest.approx(-f22 * tiny, rel=0.02)
    r = fastsim_ellipse(0, 0, tiny * 100, A, B, N, MU, G, NU)
    assert r.fy == pytest.approx(-f23 * tiny * 100, rel=0.02)
    assert r.slip_area == 0.0
    assert r.adhesion_area == pytest.approx(math.pi * A * B, rel=0.02)


@pytest.mark.parametrize("bound", ["parabolic", "elliptic"])
def test_fastsim_saturates_to_mu_n(bound):
    r = fastsim_ellipse(0.05, 0, 0, A, B, N, MU, G, NU, bound=bound)
    assert -r.fx == pytest.approx(MU * N, rel=0.01)
    r = fastsim_ellipse(0, 0.05, 0, A, B, N, MU, G, NU, bound=bound)
    assert -r.fy == pytest.approx(MU * N, rel=0.01)
    assert r.adhesion_area == 0.0


def test_fastsim_curve_monotone_and_areas():
    creepages = np.linspace(0, 0.01, 41)
    forces = []
    adhesion = []
    for xi in creepages:
        r = fastsim_ellipse(xi, 0, 0, A, B, N, MU, G, NU)
        forces.append(-r.fx)
        adhesion.append(r.adhesion_area)
        assert r.adhesion_area + r.slip_area == pytest.approx(float(np.sum(r.cell_area)), rel=1e-12)
    forces = np.array(forces)
    rising = forces[1:] < 0.999 * MU * N
    assert np.all(np.diff(forces) >= 0)
    assert np.all(np.diff(forces)[rising] > 0)
    assert forces[-1] == pytest.approx(MU * N, rel=1e-9)
    assert np.all(np.diff(adhesion) <= 0)
    assert max(forces) <= MU * N * (1 + 1e-12)


def test_fastsim_contact_reference_case():
    """CONTACT reference case (docs/references.md): a = 8 mm, b = 4 mm, Fn = 82 kN,
    G = 82 GPa, nu = 0.28, mu = 0.3, eta = -6.25e-4, phi = 6.25e-4 /mm.
    Full theory Fy/(mu Fn) = -0.6074; FASTSIM, parabolic bound: -0.61 ... -0.64
    depending on the mesh (the published band, not widened here).

    Variant matched: Kalker's three flexibilities L1, L2, L3, parabolic bound
    mu*p, CONTACT's uniform grid of nx x ny cells over [-a, a] x [-b, b] (the
    default grid of creep_forces and of the dynamics kernel). Measured:
    10x10 -0.628, 20x20 -0.636 (inside the band); the method converges to
    -0.644 (40x40 -0.642, 80x80 -0.644): the finest grids are 0.3-0.7 % beyond
    the band's end, a difference reported in the validation report, not
    asserted away. The strip grid of fastsim_ellipse (20x20 -0.654) is not
    the published discretisation and is not held to the band.
    """
    a, b, fn, g, nu, mu = 8e-3, 4e-3, 82e3, 82e9, 0.28, 0.3
    eta, phi = -6.25e-4, 6.25e-4 * 1e3
    for n in (10, 20):
        ratio = creep_forces("fastsim", 0.0, eta, phi, a, b, fn, mu, g, nu, 0.0,
                             {"nx": n, "ny": n, "backend": "numba"})[1] / (mu * fn)
        assert -0.64 <= ratio <= -0.61, (n, ratio)
    default = creep_forces("fastsim", 0.0, eta, phi, a, b, fn, mu, g, nu, 0.0)[1] / (mu * fn)
    assert -0.64 <= default <= -0.61
    linear = creep_forces("kalker", 0.0, eta, phi, a, b, fn, mu, g, nu, 0.0)[1] / (mu * fn)
    assert linear < default < -0.6074


def test_fastsim_grid_matches_ellipse_and_non_hertzian_patch():
    flex = fastsim_flexibilities(A, B, G, NU)
    n = 60
    x = -A + (np.arange(n) + 0.5) * 2 * A / n
    y = -B + (np.arange(n) + 0.5) * 2 * B / n
    p = 2 * N / (math.pi * A * B) * np.maximum(1 - (x[None, :] / A) ** 2 - (y[:, None] / B) ** 2, 0)
    for xi, eta, phi in ((2e-4, 0, 0), (0, 3e-4, 0), (1e-4, -1e-4, 0.5)):
        grid = fastsim_grid(p, x, y, xi, eta, phi, MU, flex, x_leading=A * np.sqrt(1 - (y / B) ** 2))
        ell = fastsim_ellipse(xi, eta, phi, A, B, N, MU, G, NU, nx=60, ny=60)
        scale = MU * N
        assert abs(grid.fx - ell.fx) < 0.02 * scale
        assert abs(grid.fy - ell.fy) < 0.02 * scale
    # A non-Hertzian patch: two separate loaded zones in the same strips.
    p2 = p.copy()
    p2[:, n // 2 - 3:n // 2 + 3] = 0.0
    total = float(np.sum(p2) * (x[1] - x[0]) * (y[1] - y[0]))
    # (a large creepage: behind the gap the traction restarts from zero)
    r = fastsim_grid(p2, x, y, 1.0, 0, 0, MU, flex)
    assert -r.fx == pytest.approx(MU * total, rel=1e-9)
    assert r.adhesion_area == 0.0
    assert np.all(r.state[:, n // 2 - 3:n // 2 + 3] == 0)
    small = fastsim_grid(p2, x, y, 1e-7, 0, 0, MU, flex)
    assert small.slip_area == 0.0
    assert small.adhesion_area == pytest.approx(np.count_nonzero(p2 > 0) * (x[1] - x[0]) * (y[1] - y[0]))


def test_fastsim_numba_equals_reference():
    rng = np.random.default_rng(7)
    flex = fastsim_flexibilities(A, B, G, NU)
    for _ in range(8):
        xi, eta = rng.normal(0, 2e-3, 2)
        phi = rng.normal(0, 1.0)
        kind = str(rng.choice(["parabolic", "elliptic"]))
        r1 = fastsim_ellipse(xi, eta, phi, A, B, N, MU, G, NU, nx=13, ny=17, bound=kind)
        r2 = fastsim_ellipse(xi, eta, phi, A, B, N, MU, G, NU, nx=13, ny=17, bound=kind, backend="numpy")
        scale = MU * N
        for f1, f2 in ((r1.fx, r2.fx), (r1.fy, r2.fy), (r1.mz / A, r2.mz / A)):
            assert abs(f1 - f2) <= 1e-12 * scale
        np.testing.assert_allclose(r1.traction_x, r2.traction_x, rtol=0, atol=1e-12 * r1.pressure.max())
        np.testing.assert_array_equal(r1.state, r2.state)
        assert r1.adhesion_area == pytest.approx(r2.adhesion_area, rel=1e-12, abs=1e-18)
        x = np.linspace(-A, A, 25)
        y = np.linspace(-B, B, 21)
        p = rng.uniform(0, 1e9, (21, 25)) * (rng.uniform(size=(21, 25)) > 0.2)
        g1 = fastsim_grid(p, x, y, xi, eta, phi, MU, flex)
        g2 = fastsim_grid(p, x, y, xi, eta, phi, MU, flex, backend="numpy")
        total = float(np.sum(p) * (x[1] - x[0]) * (y[1] - y[0])) * MU
        assert abs(g1.fx - g2.fx) <= 1e-12 * total
        assert abs(g1.fy - g2.fy) <= 1e-12 * total
        assert abs(g1.mz - g2.mz) <= 1e-12 * total * A
        np.testing.assert_array_equal(g1.state, g2.state)


# ---------------------------------------------------------------------------
# Shen-Hedrick-Elkins
# ---------------------------------------------------------------------------

def test_she_small_creep_linear_and_saturation():
    f11, f22, f23, _ = linear_creep_coefficients(A, B, G, NU)
    tiny = 1e-10
    assert creep_forces("she", tiny, 0, 0, A, B, N, MU, G, NU, V)[0] == pytest.approx(-f11 * tiny, rel=1e-6)
    assert creep_forces("she", 0, tiny, 0, A, B, N, MU, G, NU, V)[1] == pytest.approx(-f22 * tiny, rel=1e-6)
    for xi in (0.02, 0.1, 1.0):
        fx, fy, _ = creep_forces("she", xi, 0.5 * xi, 0, A, B, N, MU, G, NU, V)
        assert math.hypot(fx, fy) == pytest.approx(MU * N, rel=1e-12)
    # The cubic law reaches mu N exactly at u = 3 and is 19/27 mu N at u = 1.
    u1 = MU * N / f11
    fx = creep_forces("she", u1, 0, 0, A, B, N, MU, G, NU, V)[0]
    assert -fx == pytest.approx(MU * N * (1 - 1 / 3 + 1 / 27), rel=1e-12)
    fx = creep_forces("she", 3 * u1, 0, 0, A, B, N, MU, G, NU, V)[0]
    assert -fx == pytest.approx(MU * N, rel=1e-12)


# ---------------------------------------------------------------------------
# Polach
# ---------------------------------------------------------------------------

def test_polach_small_creep_slope():
    """At small creep Polach's F = 2 Q mu/pi * (kA + kS) * eps, eps = pi G a b c s/(4 Q mu):
    the slope is (kA + kS)/2 times Kalker's linear coefficient (exactly Kalker's
    for the 1999 law, kA = kS = 1)."""
    f11, f22, f23, _ = linear_creep_coefficients(A, B, G, NU)
    tiny = 1e-8
    assert creep_forces("polach", tiny, 0, 0, A, B, N, MU, G, NU, V)[0] == pytest.approx(-f11 * tiny, rel=1e-6)
    assert creep_forces("polach", 0, tiny, 0, A, B, N, MU, G, NU, V)[1] == pytest.approx(-f22 * tiny, rel=1e-6)
    # pure spin: the lateral spin force is f23*phi at small spin
    assert creep_forces("polach", 0, 0, 1e-5, A, B, N, MU, G, NU, V)[1] == pytest.approx(-f23 * 1e-5, rel=1e-6)
    for opts in (POLACH_2005_DRY, POLACH_2005_WET):
        fx = creep_forces("polach", tiny, 0, 0, A, B, N, MU, G, NU, V, opts)[0]
        assert fx == pytest.approx(-f11 * tiny * (opts["kA"] + opts["kS"]) / 2, rel=1e-6)


def test_polach_1999_saturation_and_closed_form():
    # F = 2 Q mu/pi * (eps/(1+eps^2) + atan eps) at eps = 1: Q mu (1/pi + 1/2)
    f11 = linear_creep_coefficients(A, B, G, NU)[0]
    xi = 4 * N * MU / (math.pi * f11)
    fx = creep_forces("polach", xi, 0, 0, A, B, N, MU, G, NU, V)[0]
    assert -fx == pytest.approx(N * MU * (1 / math.pi + 0.5), rel=1e-12)
    fx = creep_forces("polach", 10.0, 0, 0, A, B, N, MU, G, NU, V)[0]
    assert -fx == pytest.approx(N * MU, rel=1e-3)


def test_polach_spin_coefficient_closed_form():
    # K_M of Polach (1999) equals -(2/3)|eps|/(1+eps^2)^2 (the form the code uses).
    for eps in (1e-3, 0.1, 0.577, 1.0, 3.0, 50.0):
        d = (eps ** 2 - 1) / (eps ** 2 + 1)
        k_m = abs(eps) * (d ** 3 / 3 - d ** 2 / 2 + 1 / 6) - math.sqrt((1 - d ** 2) ** 3) / 3
        assert k_m == pytest.approx(-2 / 3 * eps / (1 + eps ** 2) ** 2, rel=1e-9, abs=1e-15)


def test_polach_2005_maximum_and_falling_branch():
    """Polach (2005) dry set (mu0 0.55, kA 1, kS 0.4, A 0.4, B 0.6 s/m) at 20 m/s:
    the adhesion curve rises to a maximum at a creepage of a few per cent (the
    order shown in the paper's figures; here ~3 %) and falls beyond it."""
    s = np.geomspace(1e-4, 0.4, 300)
    for opts, mu0, window in ((POLACH_2005_DRY, POLACH_2005_DRY_MU0, (0.005, 0.06)),
                              (POLACH_2005_WET, POLACH_2005_WET_MU0, (0.01, 0.2))):
        fx = -creep_forces("polach", s, 0, 0, A, B, N, mu0, G, NU, V, opts)[0]
        k = int(np.argmax(fx))
        assert window[0] < s[k] < window[1]
        assert np.all(np.diff(fx[:k + 1]) > 0)
        assert np.all(np.diff(fx[k:]) < 0)
        assert fx[-1] < 0.8 * fx[k]
        assert fx[k] < mu0 * N


def test_polach_bounded_by_mu_n():
    rng = np.random.default_rng(3)
    for opts in ({}, POLACH_2005_DRY, POLACH_2005_WET, {"kA": 0.2, "kS": 1.0}):
        for _ in range(300):
            xi, eta = rng.normal(0, 1, 2) * 10 ** rng.uniform(-5, 0)
            phi = rng.normal(0, 1) * 10 ** rng.uniform(-3, 2)
            fx, fy, mz = creep_forces("polach", xi, eta, phi, A, B, N, MU, G, NU, V, opts)
            assert math.hypot(fx, fy) <= MU * N * (1 + 1e-12)
            assert all(math.isfinite(v) for v in (fx, fy, mz))


# ---------------------------------------------------------------------------
# FaStrip (Sichani, Enblom & Berg 2016)
# ---------------------------------------------------------------------------

def test_fastrip_small_creepage_equals_linear_theory():
    """The normalised creepages of FaStrip make the strip theory reproduce
    Kalker's f11, f22, f23 in the continuum (derivation in the FaStrip block
    of solver/contact/creep/). Measured on the default 20 x 20 grid: C11 and C22
    -3.0 %, C23 +0.2 %, for a/b = 0.5, 1.2 and 2 alike. Tolerance 4 % for the
    default grid only: the error is the midpoint sample of the strip theory's
    inverse-square-root traction at the trailing edge and varies erratically
    with the grid (C11: 0.91 at 24 x 24, 1.07 at 30 x 30, 0.99 at 160 x 160)."""
    tiny = 1e-8
    for a, b in ((A, B), (3e-3, 6e-3), (8e-3, 4e-3)):
        f11, f22, f23, _ = linear_creep_coefficients(a, b, G, NU)
        assert fastrip(tiny, 0, 0, a, b, N, MU, G, NU).fx == pytest.approx(-f11 * tiny, rel=0.04)
        assert fastrip(0, tiny, 0, a, b, N, MU, G, NU).fy == pytest.approx(-f22 * tiny, rel=0.04)
        r = fastrip(0, 0, tiny * 100, a, b, N, MU, G, NU)
        assert r.fy == pytest.approx(-f23 * tiny * 100, rel=0.01)
        assert r.slip_area < 0.05 * (r.slip_area + r.adhesion_area)


def test_fastrip_saturation_and_bound():
    """Full sliding gives mu N exactly (the pressure is normalised to N on the
    grid); no input gives a resultant beyond mu N or a non-finite value
    (strips outside the strip theory's range of spin keep FASTSIM's traction)."""
    r = fastrip(0.05, 0, 0, A, B, N, MU, G, NU)
    assert -r.fx == pytest.approx(MU * N, rel=1e-9)
    assert r.adhesion_area == 0.0
    assert -fastrip(0, 0.05, 0, A, B, N, MU, G, NU).fy == pytest.approx(MU * N, rel=1e-9)
    rng = np.random.default_rng(3)
    for _ in range(300):
        xi, eta = rng.normal(0, 1, 2) * 10 ** rng.uniform(-5, -1)
        phi = rng.normal(0, 1) * 10 ** rng.uniform(-2, 1.5)
        a = rng.uniform(2e-3, 10e-3)
        b = a / 10 ** rng.uniform(-1.3, 1.3)
        fx, fy, mz = creep_forces("fastrip", xi, eta, phi, a, b, N, MU, G, rng.uniform(0, 0.5), V)
        assert all(math.isfinite(v) for v in (fx, fy, mz))
        assert math.hypot(fx, fy) <= MU * N * (1 + 1e-9)
    forces = [-creep_forces("fastrip", x, 0, 0, A, B, N, MU, G, NU, V)[0]
              for x in np.linspace(0, 0.01, 41)]
    assert np.all(np.diff(forces) >= -1e-9 * MU * N)


def test_fastrip_on_contact_fastsim_case():
    """CONTACT's FASTSIM reference case (a = 8, b = 4 mm, 82 kN, G = 82 GPa,
    nu = 0.28, mu = 0.3, eta = -6.25e-4, phi = 0.625 1/m; full theory
    Fy/(mu Fn) = -0.6074). CONTACT's own FaStrip (examples/fastsim.ref_out,
    its recommended variant M = 5) gives -0.6435 on 40 x 40 cells in the
    ellipse and -0.6442 on 200 x 200. Ours on the same 40 x 40 cell lattice:
    -0.6491 (+0.9 %), 200 x 200 -0.6462 (+0.3 %). Tolerance 1.5 %: CONTACT's
    variant differs in its FASTSIM pass (its blended flexibilities, implicit
    Euler from the cell front), which changes the slip-zone direction only.

    Against the full theory FaStrip is +6.9 % (20 x 20) / +6.4 % (200 x 200),
    as CONTACT's FaStrip (+5.9 %): the 2 % target is not met by the
    published method on this case, whose normalised spin phi' = -1.003 sits
    at the edge of the strip theory's range. Reported, not asserted away."""
    a, b, fn, g, nu, mu = 8e-3, 4e-3, 82e3, 82e9, 0.28, 0.3
    ratio = creep_forces("fastrip", 0.0, -6.25e-4, 0.625, a, b, fn, mu, g, nu, 0.0,
                         {"nx": 40, "ny": 40})[1] / (mu * fn)
    assert ratio == pytest.approx(-0.6435, rel=0.015)
    default = creep_forces("fastrip", 0.0, -6.25e-4, 0.625, a, b, fn, mu, g, nu, 0.0)[1] / (mu * fn)
    assert default == pytest.approx(-0.6435, rel=0.015)
    assert default < -0.6074


# CONTACT examples/tractcurv.ref_out, first series: full theory (half-space,
# Coulomb friction) on a Hertz ellipse a = 6.304 mm, b = 12.61 mm (a/b = 0.5),
# Fn = 106.7 kN, mu = 0.33, G = 82 GPa, nu = 0.28: (xi, Fx/(mu Fn)).
CONTACT_TRACTION_CURVE = ((4e-4, -0.2588), (8e-4, -0.4742), (1.2e-3, -0.6482),
                          (1.6e-3, -0.7831), (2.0e-3, -0.8816), (2.4e-3, -0.9467),
                          (2.8e-3, -0.9832), (3.2e-3, -0.9976))


def test_fastrip_on_contact_full_theory_creep_curve():
    """FaStrip against CONTACT's full-theory longitudinal creep curve over the
    whole transition to saturation: measured within 0.7 % (20 x 20), where
    FASTSIM (parabolic bound) is off by up to -6.5 %. Tolerance 2 %: the
    reference's own discretisation (48 x 44 cells; its value at xi = 1e-5 is
    2.4 % above Kalker's linear theory)."""
    a, b, fn, mu, g, nu = 6.304e-3, 12.61e-3, 106.7e3, 0.33, 82e9, 0.28
    worst_fastrip = worst_fastsim = 0.0
    for xi, ref in CONTACT_TRACTION_CURVE:
        fr = creep_forces("fastrip", xi, 0, 0, a, b, fn, mu, g, nu, 0.0)[0] / (mu * fn)
        fs = creep_forces("fastsim", xi, 0, 0, a, b, fn, mu, g, nu, 0.0)[0] / (mu * fn)
        assert fr == pytest.approx(ref, rel=0.02), xi
        worst_fastrip = max(worst_fastrip, abs(fr / ref - 1))
        worst_fastsim = max(worst_fastsim, abs(fs / ref - 1))
    assert worst_fastrip < worst_fastsim


def test_fastrip_field_and_areas():
    r = fastrip(2e-4, -3e-4, 0.4, A, B, N, MU, G, NU, nx=16, ny=12)
    assert r.traction_x.shape == (12, 16) and r.state.shape == (12, 16)
    inside = r.pressure > 0
    assert np.all(r.state[~inside] == 0) and np.all(r.state[inside] > 0)
    assert r.adhesion_area + r.slip_area == pytest.approx(np.count_nonzero(inside) * r.cell_area[0, 0])
    assert float(np.sum(r.traction_x * r.cell_area)) == pytest.approx(r.fx, rel=1e-12)
    # slip cells carry mu p_n
    slip = r.state == 2
    assert np.allclose(np.hypot(r.traction_x, r.traction_y)[slip], MU * r.pressure[slip], rtol=1e-12)
    with pytest.raises(ValueError):
        fastrip(0, 0, 0, A, -B, N, MU, G, NU)
    with pytest.raises(ValueError):
        creep_forces("fastrip", 0, 0, 0, A, B, N, MU, G, NU, V, {"bound": "elliptic"})


# ---------------------------------------------------------------------------
# One signature: kernels, references and edge cases
# ---------------------------------------------------------------------------

MODEL_OPTIONS = [
    ("kalker", {}), ("she", {}), ("polach", {}), ("polach", POLACH_2005_DRY),
    ("fastsim", {"nx": 12, "ny": 14}), ("fastsim", {"bound": "elliptic"}),
    ("fastrip", {"nx": 12, "ny": 14}), ("fastrip", {}),
]


@pytest.mark.parametrize("model, opts", MODEL_OPTIONS)
def test_kernel_equals_reference(model, opts):
    rng = np.random.default_rng(11)
    model_id, options = kernel_parameters(model, opts)
    rtol = 1e-12 if model_id == FASTSIM.id else 1e-9
    for _ in range(25):
        xi, eta = rng.normal(0, 1, 2) * 10 ** rng.uniform(-5, -1)
        phi = rng.normal(0, 1) * 10 ** rng.uniform(-2, 1)
        a = rng.uniform(2e-3, 10e-3)
        b = a / 10 ** rng.uniform(-1.3, 1.3)
        nu = rng.uniform(0, 0.5)
        speed = rng.uniform(0, 40)
        patch = CreepPatch(xi, eta, phi, a, b, N, MU, G, nu, speed)
        ref = creep_forces_reference(model_id, patch, options)
        got = creep_forces_kernel(model_id, patch, options)
        scale = MU * N
        for r, g_, s in zip(ref, got, (scale, scale, scale * a)):
            assert abs(r - g_) <= rtol * max(abs(r), 1e-3 * s)


@pytest.mark.parametrize("model", creep.CREEP_MODELS.names())
def test_edge_cases_no_nan(model):
    for backend in ("numpy", "numba"):
        opts = {"backend": backend}
        assert creep_forces(model, 1e-3, 1e-3, 0.1, A, B, 0.0, MU, G, NU, V, opts) == (0.0, 0.0, 0.0)
        assert creep_forces(model, 1e-3, 1e-3, 0.1, 0.0, 0.0, 0.0, MU, G, NU, V, opts) == (0.0, 0.0, 0.0)
        assert creep_forces(model, 1e-3, 1e-3, 0.1, A, B, N, 0.0, G, NU, V, opts) == (0.0, 0.0, 0.0)
        assert creep_forces(model, 1e-3, 1e-3, 0.1, A, B, N, -0.1, G, NU, V, opts) == (0.0, 0.0, 0.0)
        forces = creep_forces(model, 1e-3, 1e-3, 0.1, A, B, N, MU, G, NU, 0.0, opts)
        assert all(math.isfinite(f) for f in forces) and forces[0] < 0
        assert creep_forces(model, 0.0, 0.0, 0.0, A, B, N, MU, G, NU, V, opts) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        creep_forces(model, float("nan"), 0, 0, A, B, N, MU, G, NU, V)
    with pytest.raises(ValueError):
        creep_forces(model, 1e-3, 0, 0, 0.0, B, N, MU, G, NU, V)


def test_zero_speed_polach_uses_static_friction():
    # speed 0 -> slip velocity 0 -> mu = mu0 (no falling friction)
    fx0 = creep_forces("polach", 0.05, 0, 0, A, B, N, 0.55, G, NU, 0.0, POLACH_2005_DRY)[0]
    fx1 = creep_forces("polach", 0.05, 0, 0, A, B, N, 0.55, G, NU, 0.0, {"kA": 1.0, "kS": 0.4})[0]
    assert fx0 == pytest.approx(fx1, rel=1e-12)


def test_mz_sign_positive_spin_gives_negative_moment():
    for model in creep.CREEP_MODELS.names():
        mz = creep_forces(model, 0, 0, 0.2, A, B, N, MU, G, NU, V)[2]
        assert mz < 0, model


# ---------------------------------------------------------------------------
# Spin moment of the saturated models against Kalker's full theory (CONTACT)
# ---------------------------------------------------------------------------

SPIN_REFERENCE = Path(__file__).parent / "data" / "contact_reference" / "spin_moment.json"
FULL_SLIDING = ("full lateral sliding", "full lateral sliding + spin",
                "full lateral sliding, eta = -0.1, + spin", "full longitudinal sliding + spin")
CONTACT_G, CONTACT_NU = 82e9, 0.28


def _spin_cases():
    return json.loads(SPIN_REFERENCE.read_text())["cases"]


def _moment_error(model, case):
    """(Mz - Mz_full theory) / (mu N sqrt(ab)) of a model on one CONTACT case."""
    mz = creep_forces(model, case["xi"], case["eta"], case["phi"], case["a"], case["b"], case["normal_force"],
                      case["friction"], CONTACT_G, CONTACT_NU, 0.0)[2]
    return (mz - case["mz"]) / (case["friction"] * case["normal_force"] * math.sqrt(case["a"] * case["b"]))


@pytest.mark.parametrize("model", ["she", "polach"])
def test_spin_moment_at_full_sliding_against_full_theory(model):
    """Full sliding (|F| = mu N in the full theory within 0.2 %), lateral or longitudinal, with and
    without spin, a/b = 2 and 0.5: the moment within 0.02 mu N sqrt(ab) of the full theory (the
    required figure; measured 0.007). Scaling Kalker's linear moment by F'/F instead gives
    0.53 mu N sqrt(ab) here (a/b = 2, pure lateral sliding; the full theory: 0)."""
    cases = [c for c in _spin_cases() if c["label"] in FULL_SLIDING]
    assert len(cases) == 8
    for case in cases:
        assert abs(_moment_error(model, case)) <= 0.02, (case["ellipse"], case["label"])


@pytest.mark.parametrize("model", ["she", "polach"])
def test_spin_moment_in_linear_range_against_full_theory(model):
    """Tiny creepages: the models give Kalker's linear moment f23 eta - f33 phi (to 0.1 %: their
    saturation u = F/(mu N) is 5e-4 at these creepages, and the moment's departure from linear is
    of order u), which is within 3 % of the full theory's (CONTACT on 40, 80, 160 elements, Aitken-extrapolated; Kalker's
    C23 is 0.3 % and C33 1.2-1.9 % below it: the tabulated coefficients, interpolated in nu)."""
    for case in _spin_cases():
        if case["label"] not in ("linear eta", "linear phi"):
            continue
        a, b, n, mu = case["a"], case["b"], case["normal_force"], case["friction"]
        _, _, f23, f33 = linear_creep_coefficients(a, b, CONTACT_G, CONTACT_NU)
        linear = f23 * case["eta"] - f33 * case["phi"]
        mz = creep_forces(model, case["xi"], case["eta"], case["phi"], a, b, n, mu, CONTACT_G, CONTACT_NU, 0.0)[2]
        assert mz == pytest.approx(linear, rel=1e-3)
        assert mz == pytest.approx(case["extrapolated"]["mz"], rel=0.03), (case["ellipse"], case["label"])


@pytest.mark.parametrize("model", ["she", "polach"])
def test_spin_moment_everywhere_against_full_theory(model):
    """All 36 cases (linear, partial slip, large spin, full sliding): within 0.13 mu N sqrt(ab).
    Measured: SHE 0.106, Polach 0.096, on a/b = 0.5 in partial slip with moderate spin, where the
    full theory saturates more slowly than the models' laws; before (Mz scaled by F'/F): SHE 2.1,
    Polach 0.66. A bound of the heuristic's accuracy, not a target."""
    worst = max(abs(_moment_error(model, case)) for case in _spin_cases())
    assert worst <= 0.13


def test_full_slip_moment_quadrature():
    """Coulomb's full-slip moment on the Hertz ellipse (the saturated models' limit): pure spin gives
    Lubkin's torque generalised to the ellipse, 3/8 c E(1 - (c'/c)^2) mu N (c the larger semi-axis;
    3 pi a/16 on a circle; measured within 1.1 %: tolerance 1.5 %), any creepage within
    0.02 mu N sqrt(ab) of a 200 x 400 midpoint sum (measured 0.013: the 3 x 12 points of the
    quadrature and its smoothing of the slip direction near the spin pole). Smoothness: the pole
    swept across the patch, the moment's second difference stays bounded (measured 3 mu N / c
    with the smoothing, 66 without)."""
    from scipy.special import ellipe

    from solver.contact.creep.saturated import _full_slip_moment
    for a, b in ((8e-3, 4e-3), (6.3e-3, 12.6e-3), (5e-3, 5e-3), (2e-3, 10e-3)):
        c, c2 = max(a, b), min(a, b)
        lubkin = 3.0 / 8.0 * c * ellipe(1.0 - (c2 / c) ** 2)
        assert _full_slip_moment(0.0, 0.0, 2.0, a, b) == pytest.approx(-lubkin, rel=0.015)
        assert _full_slip_moment(0.0, 0.0, -2.0, a, b) == pytest.approx(lubkin, rel=0.015)
        root = math.sqrt(a * b)
        poles = np.linspace(-c, c, 2001)      # the spin pole x = -eta/phi swept across (phi = 1/m)
        moment = np.array([_full_slip_moment(0.05 * c, -p, 1.0, a, b) for p in poles]) / root
        second = np.abs(np.diff(moment, 2)).max() / ((poles[1] - poles[0]) / root) ** 2
        assert second < 10.0
        r = (np.arange(200) + 0.5) / 200
        t = (np.arange(400) + 0.5) / 400 * 2 * math.pi
        R, T = np.meshgrid(r, t, indexing="ij")
        x, y = a * R * np.cos(T), b * R * np.sin(T)
        weight = np.sqrt(1 - R ** 2) * R
        for angle in (0.0, 0.7, math.pi / 2):
            for ratio in (0.03, 0.3, 1.0, 3.0, 30.0):
                xi, eta = 1e-3 * math.cos(angle), -1e-3 * math.sin(angle)
                phi = ratio * 1e-3 / math.sqrt(a * b)
                sx, sy = xi - phi * y, eta + phi * x
                fine = -np.sum(weight * (x * sy - y * sx) / np.hypot(sx, sy)) / np.sum(weight)
                assert abs(_full_slip_moment(xi, eta, phi, a, b) - fine) <= 0.02 * math.sqrt(a * b)
                assert _full_slip_moment(xi, eta, phi, a, b) * phi <= 0.0


def test_creep_forces_arrays_and_options():
    xi = np.linspace(0, 1e-2, 7)
    fx, fy, mz = creep_forces("she", xi, 0, 0, A, B, N, MU, G, NU, V)
    assert fx.shape == (7,) and np.all(np.diff(-fx) > 0)
    fx2 = creep_forces("she", xi, 0, 0, A, B, N, MU, G, NU, V, {"backend": "numba"})[0]
    np.testing.assert_allclose(fx, fx2, rtol=1e-9)
    with pytest.raises(ValueError):
        creep_forces("unknown", 0, 0, 0, A, B, N, MU, G, NU, V)
    with pytest.raises(ValueError):
        creep_forces("polach", 0, 0, 0, A, B, N, MU, G, NU, V, {"kk": 1})
    with pytest.raises(ValueError):
        creep_forces("fastsim", 0, 0, 0, A, B, N, MU, G, NU, V, {"bound": "square"})
    # the ids are the FMU's enumeration values: fixed once published (a new model
    # is appended)
    assert creep.CREEP_MODELS.names()[:5] == ("kalker", "she", "polach", "fastsim", "fastrip")
    assert tuple(m.id for m in (KALKER, SHE, POLACH, FASTSIM, FASTRIP)) == (0, 1, 2, 3, 4)


def test_plot_creep_curves(tmp_path):
    from fmu_wheelset.plots import plot_creep_curves
    path = tmp_path / "creep.png"
    plot_creep_curves(A, B, N, MU, G, NU, V, str(path), points=15)
    assert path.stat().st_size > 5000
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
