"""Lateral stability of the wheelset core (solver/stability.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from solver import stability as st
from solver.layout import C_RADIUS, C_Y
from solver.model.wheelset import WheelsetModel
from solver.model.parameters import WheelsetParameters

# Wickens' single suspended wheelset: the built-in suspension's frame on the track centreline
SUSPENDED = dict(bogie=True, frame_on_centreline=True, suspended_mass=9307.5, creep_model="kalker",
                 suspension_stiffness=(1.0e6, 3.884e6, 1.22e6))


def test_eigenvalue_matches_the_decay_of_a_small_perturbation():
    """Cone 0.15 on UIC60, Kalker, suspended wheelset (kx 1 MN/m, ky 3.884 MN/m
    per box) at 95 m/s, below its linear critical speed (102.9 m/s): a 0.1 mm
    lateral displacement from the steady run decays with the rate and the
    frequency of the hunting eigenvalue (fitted from the peaks of y(t) after
    0.3 s, when the faster modes have died out). Agreement within 1 % for both
    (a linear response: the residual is the fit; measured 1e-4)."""
    params = WheelsetParameters(wheel_profile="cone:0.15", **SUSPENDED)
    e = st.eigen(params, 95.0)
    assert -5.0 < e.hunting.real < 0.0 and e.frequency > 5.0
    t, y = st.perturbed_run(params, 95.0, 1e-4, 2.0)
    late = t > 0.3
    sigma, omega = st.fit_damped_oscillation(t[late], y[late])
    assert sigma == pytest.approx(e.hunting.real, rel=0.01)
    assert omega == pytest.approx(e.hunting.imag, rel=0.01)


def test_linear_critical_speed_is_where_the_hunting_mode_crosses_zero():
    """The bisection result has the hunting eigenvalue stable just below and
    unstable just above it, with a hunting frequency of a few Hz; a softer
    yaw suspension hunts earlier (Wickens: the critical speed grows with the
    yaw stiffness)."""
    params = WheelsetParameters(wheel_profile="cone:0.15", **SUSPENDED)
    crit = st.linear_critical_speed(params, 60.0, 140.0, scan=5, tolerance=0.1)
    lo, hi = crit.bracket
    assert hi - lo <= 0.1
    assert st.eigen(params, lo - 0.5).hunting.real < 0 < st.eigen(params, hi + 0.5).hunting.real
    assert 5.0 < crit.frequency < 15.0
    softer = WheelsetParameters(wheel_profile="cone:0.15",
                                **{**SUSPENDED, "suspension_stiffness": (0.5e6, 3.884e6, 1.22e6)})
    assert st.linear_critical_speed(softer, 60.0, 140.0, scan=5, tolerance=0.5).speed < crit.speed


def test_free_wheelset_kinematic_mode_tends_to_klingel():
    """Free coned wheelset (cone 0.05 on UIC60, no suspension) at 2 m/s: the
    hunting mode is Klingel's kinematic oscillation, omega = V sqrt(lambda /
    (r0 l0)), with r0 and l0 the rolling radius and the half distance of the
    contact points of the centred run. Its frequency is proportional to V
    (2 vs 5 m/s within 0.1 %) and within 2 % of Klingel's with the cone's
    conicity: the wheelset's roll (the contact points move over the rail
    crown) and the roll-rate term of the lateral creepage shift it (measured
    +0.95 %; see also test_linear_controls for the textbook switches)."""
    params = WheelsetParameters(wheel_profile="cone:0.05", creep_model="kalker")
    model = WheelsetModel(params)
    model.rhs(st.steady_run(model))
    contact = model.arrays.contact
    l0 = (contact[0, 0, C_Y] - contact[1, 0, C_Y]) / 2
    r0 = contact[0, 0, C_RADIUS]
    slow, fast = st.eigen(params, 2.0), st.eigen(params, 5.0)
    assert fast.hunting.imag / 5.0 == pytest.approx(slow.hunting.imag / 2.0, rel=1e-3)
    klingel = 2.0 * math.sqrt(0.05 / (r0 * l0))
    assert slow.hunting.imag == pytest.approx(klingel, rel=0.02)
    assert abs(slow.hunting.real) < 0.01 * slow.hunting.imag     # nearly undamped at low speed


def test_nonlinear_critical_speed_s1002_by_bisection():
    """S1002/UIC60 1:40, Polach, suspended wheelset (kx 0.5 MN/m): the
    nonlinear critical speed found by bisection on perturbed runs (6 mm) is a
    speed at which the oscillation dies out just below and lasts just above
    (`oscillation_lasts`: the last second's amplitude above 0.05 mm and at least
    0.9 times the second before's). It lies below the linear critical speed of
    the same wheelset (measured: nonlinear 57.5, linear 61.1 m/s): the cycle
    starts subcritically, as the equivalent conicity of the pair is larger at
    1 mm of amplitude than for the centred run and falls beyond (EN 15302
    method: 0.36 at 1 mm, 0.18 at 3 mm), so a cycle of about 1 mm is less
    stable than the centred run; the cycle's amplitude then grows with the
    speed."""
    from solver.contact.geometry import setup as geo
    from solver.contact.geometry.analysis import equivalent_conicity
    setup = geo.ContactSetup.from_names("S1002", "UIC60")
    assert equivalent_conicity(setup, amplitude=1e-3) > equivalent_conicity(setup, amplitude=3e-3)
    params = WheelsetParameters(bogie=True, frame_on_centreline=True, suspended_mass=9307.5,
                                suspension_stiffness=(0.5e6, 3.884e6, 1.22e6))
    crit = st.nonlinear_critical_speed(params, 20.0, 115.0, tolerance=1.0)
    lo, hi = crit.bracket
    assert not st.hunts(params, lo) and st.hunts(params, hi)
    linear = st.linear_critical_speed(params, 20.0, 130.0, scan=6, tolerance=0.5)
    assert crit.speed < linear.speed
    assert crit.frequency > 1.0


def test_stability_rejects_bad_requests():
    params = WheelsetParameters(wheel_profile="cone:0.15", **SUSPENDED)
    with pytest.raises(st.StabilityError, match="speed"):
        st.eigen(params, -3.0)
    with pytest.raises(st.StabilityError, match="v_min"):
        st.linear_critical_speed(params, 50.0, 10.0)
    with pytest.raises(st.StabilityError, match="straight"):
        st.eigen(WheelsetParameters(track="ren-jin-r400"), 20.0)


# ---------------------------------------------------------------------------
# the linear-study controls of the core
# ---------------------------------------------------------------------------

def test_klingel_with_the_textbook_creepages():
    """With the roll-rate term of the creepages switched off (the textbook
    creepages, `roll_rate_creepage=False`), the free coned wheelset's kinematic
    frequency at 2 m/s is Klingel's omega = V sqrt(lambda_e / (r0 l0)) with the
    equivalent conicity lambda_e = d(r_left - r_right)/(2 dy) of the rigid
    contact geometry (cone 0.05 on UIC60: 0.0526, the roll of the wheelset on
    the rail crown adds 5 %), r0 and l0 of the centred contact points, within
    0.3 % (measured 0.08 %: the remaining inertia and creep terms are O(V^2)).
    The gyroscopic switch does not change it (at 2 m/s, measured < 1e-7)."""
    from solver.contact.geometry.analysis import rolling_radius_difference
    params = WheelsetParameters(wheel_profile="cone:0.05", creep_model="kalker",
                                roll_rate_creepage=False)
    model = WheelsetModel(params)
    model.rhs(st.steady_run(model))
    contact = model.arrays.contact
    l0 = (contact[0, 0, C_Y] - contact[1, 0, C_Y]) / 2
    r0 = contact[0, 0, C_RADIUS]
    dy = 1e-4
    dr = rolling_radius_difference(model.setup, [dy, -dy])
    conicity = (dr[0] - dr[1]) / (4 * dy)
    assert conicity == pytest.approx(0.05, rel=0.08)
    e = st.eigen(params, 2.0)
    assert e.hunting.imag == pytest.approx(2.0 * math.sqrt(conicity / (r0 * l0)), rel=0.003)
    no_gyro = st.eigen(WheelsetParameters(wheel_profile="cone:0.05", creep_model="kalker",
                                          roll_rate_creepage=False, gyroscopic=False), 2.0)
    assert no_gyro.hunting.imag == pytest.approx(e.hunting.imag, rel=1e-6)


def _rhs_at(params, **state):
    model = WheelsetModel(params)
    x = st.steady_run(model)
    for name, value in state.items():
        x[st.STATE_NAMES.index(name)] += value
    deriv = model.rhs(x)
    return model, x, deriv


def test_creep_coefficient_overrides_give_kalkers_linear_forces():
    """Overridden f11, f22, f23, f33 (coefficients of a wheel's whole load): every
    active point's creep forces are exactly Kalker's linear ones with the
    coefficients scaled to the point's share s of its wheel's load as Kalker's own
    scale with a Hertz patch (f11, f22 by s^(2/3), f23 by s, f33 by s^(4/3)):
    -f11 xi, -f22 eta - f23 phi, f23 eta - f33 phi; the coefficients not
    overridden (0) come from Kalker's table as before."""
    from solver.layout import (
        C_ACTIVE, C_CREEP_LAT, C_CREEP_LONG, C_ETA, C_NORMAL, C_SPIN, C_SPIN_MOMENT, C_XI,
    )
    f = (8.0e6, 7.0e6, 3.0e3, 50.0)
    params = WheelsetParameters(creep_model="kalker", creep_coefficients=f, speed=20.0,
                                hunt_crossley=0.0)
    model, _, _ = _rhs_at(params, vy=0.05, yaw_rate=0.02, vx=0.01)
    contact = model.arrays.contact
    # no contact damping: the normal force is the elastic one
    share = contact[..., C_NORMAL] / contact[..., C_NORMAL].sum(axis=1, keepdims=True)
    rows = contact.reshape(-1, contact.shape[-1])
    share = share.reshape(-1)
    active = rows[:, C_ACTIVE] > 0.5
    share, rows = share[active], rows[active]
    assert len(rows) >= 2
    xi, eta, phi = rows[:, C_XI], rows[:, C_ETA], rows[:, C_SPIN]
    assert np.abs(eta).max() > 1e-4
    area = share ** (2.0 / 3.0)
    f11, f22, f23, f33 = f[0] * area, f[1] * area, f[2] * share, f[3] * area ** 2
    assert rows[:, C_CREEP_LONG] == pytest.approx(-f11 * xi, rel=1e-12, abs=1e-9)
    assert rows[:, C_CREEP_LAT] == pytest.approx(-f22 * eta - f23 * phi, rel=1e-12, abs=1e-9)
    assert rows[:, C_SPIN_MOMENT] == pytest.approx(f23 * eta - f33 * phi, rel=1e-12, abs=1e-9)
    # f22 only: f11 from the table, unchanged from the plain Kalker model
    plain, _, _ = _rhs_at(WheelsetParameters(creep_model="kalker", speed=20.0), vy=0.05, vx=0.01)
    part, _, _ = _rhs_at(WheelsetParameters(creep_model="kalker", speed=20.0,
                                            creep_coefficients=(0.0, 7.0e6, 0.0, 0.0)),
                         vy=0.05, vx=0.01)
    a = plain.arrays.contact[..., C_CREEP_LONG]
    b = part.arrays.contact[..., C_CREEP_LONG]
    assert b == pytest.approx(a, rel=1e-12, abs=1e-9)
    with pytest.raises(Exception, match="kalker"):
        WheelsetModel(WheelsetParameters(creep_model="polach", creep_coefficients=f))
    with pytest.raises(Exception, match="creep_coefficients"):
        WheelsetModel(WheelsetParameters(creep_model="kalker", creep_coefficients=(1.0, -2.0, 0, 0)))


def test_gyroscopic_and_roll_rate_switches():
    """The gyroscopic switch removes exactly J_y Omega (yaw rate) / J_x from the
    roll acceleration and J_y Omega (roll rate) / J_z from the yaw acceleration;
    the roll-rate switch changes the lateral creepages of a rolling wheelset
    (by roll_rate (z_contact - z) / V on the lateral axis) and nothing else."""
    from solver.layout import C_ETA, C_XI, S_ROLL_RATE, S_SPIN_RATE, S_YAW_RATE
    base = dict(creep_model="kalker", speed=20.0)
    on, x, d_on = _rhs_at(WheelsetParameters(**base), yaw_rate=0.03, roll_rate=0.02)
    off, _, d_off = _rhs_at(WheelsetParameters(**base, gyroscopic=False), yaw_rate=0.03,
                            roll_rate=0.02)
    p = on.params
    spin = x[S_SPIN_RATE]
    assert d_on[S_ROLL_RATE] - d_off[S_ROLL_RATE] == pytest.approx(
        p.inertia_spin * spin * x[S_YAW_RATE] / p.inertia_roll, rel=1e-9)
    assert d_on[S_YAW_RATE] - d_off[S_YAW_RATE] == pytest.approx(
        -p.inertia_spin * spin * x[S_ROLL_RATE] / p.inertia_yaw, rel=1e-9)
    textbook, _, _ = _rhs_at(WheelsetParameters(**base, roll_rate_creepage=False),
                             yaw_rate=0.03, roll_rate=0.02)
    assert np.abs(textbook.arrays.contact[..., C_ETA] - on.arrays.contact[..., C_ETA]).max() > 1e-4
    assert textbook.arrays.contact[..., C_XI] == pytest.approx(on.arrays.contact[..., C_XI], abs=1e-12)


def test_single_suspended_wheelset_matches_wickens_with_the_extra_terms_off():
    """Cone 0.15 on UIC60 1:40, Kalker's linear creep (f11 8 MN, f22 7 MN, no
    spin), the suspended wheelset of Wickens (kx 1 MN/m, ky 3.884 MN/m per box,
    its frame on the track centreline), with the tool's extra terms off (no
    gyroscopic moments, the rigid track, no Hunt & Crossley damping): the
    linear critical speed within 1 % of Wickens' single suspended wheelset
    written separately (fmu_wheelset/validation/vehicle.py
    reference_wheelset_eigenvalues, with the contact-plane creepage and the
    load transfer of the bogie's check; measured -0.12 %: the tool's roll and
    vertical freedom, which the two-degree-of-freedom model lacks). Each term
    switched on alone moves it by (measured): the gyroscopic moments +5.4 %,
    the lumped rail bodies 0.0 % (their modes lie three decades above hunting:
    the frequency -0.6 %), Hunt & Crossley's damping 0.0 % (no normal motion in
    the hunting mode); all three, the default interface, +5.7 %."""
    from dataclasses import replace

    from fmu_wheelset.validation import vehicle as check
    f11, f22 = check.BOGIE_F11, check.BOGIE_F22
    base = WheelsetParameters(wheel_profile="cone:0.15", creep_model="kalker",
                              creep_coefficients=(f11, f22, 1e-9, 1e-9), gyroscopic=False,
                              track_model="prescribed", hunt_crossley=0.0, bogie=True,
                              frame_on_centreline=True, suspended_mass=9307.5,
                              suspension_stiffness=(1.0e6, 3.884e6, 1.22e6))
    g = check.contact_geometry_terms(base, (base.mass + base.suspended_mass) * 9.81)
    reference, frequency = check.critical_speed_of(
        lambda v: check.reference_wheelset_eigenvalues(base, f11, f22, g, v))
    tool = st.linear_critical_speed(base, 60.0, 140.0, scan=5, tolerance=0.05)
    print(f"tool {tool.speed:.2f} m/s {tool.frequency:.3f} Hz, Wickens {reference:.2f} m/s "
          f"{frequency:.3f} Hz")
    assert tool.speed == pytest.approx(reference, rel=0.01)
    assert tool.frequency == pytest.approx(frequency, rel=0.01)
    default = st.linear_critical_speed(replace(base, gyroscopic=True, track_model="lumped",
                                               hunt_crossley=0.2), 60.0, 140.0, scan=5,
                                       tolerance=0.05)
    gyro = st.linear_critical_speed(replace(base, gyroscopic=True), 60.0, 140.0, scan=5,
                                    tolerance=0.05)
    # the gyroscopic moments raise it by some 5 %; the rails and the damping barely move it
    assert 1.03 < gyro.speed / tool.speed < 1.08
    assert default.speed == pytest.approx(gyro.speed, rel=0.01)
