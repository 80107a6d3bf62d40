"""Derailment is detected with every contact and creep model and told apart from
a wheel lift (solver/dynamics/derailment.py, docs/running_safety.md).

A flange slam that makes the wheelset jump off its rail on the flange is a
derailment of that wheel (its flange contact reached the tip, or it passed the
gauge face), or, if both wheels fly longer than the airborne limit, a
derailment by flight; a wheel lift is not a discarded step.

Scenario: the Manchester benchmark wheelset (defaults) on straight track, 60 kN
per axle box downwards (~70 kN wheel loads), then a lateral force per box
(pushing towards the left rail); internal step 0.2 ms, which resolves the flange
impact (docs/limits_and_failures.md). Numbers checked analytically: Nadal's
limit and the flange's lateral reach.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from solver.dynamics import derailment
from solver.layout import C_ACTIVE, C_ANGLE, D_PYQ, N_CONTACT, N_DERIVED
from solver.layout import MAX_POINTS
from solver.contact.geometry.setup import ContactSetup
from solver.model.outputs import WheelsetInputs
from solver.model.wheelset import WheelsetModel
from solver.model.parameters import WheelsetParameters

BOX_LOAD = -6.0e4
MODELS = [(c, k) for c in ("kalker", "she", "polach", "fastsim") for k in ("single", "multipoint")]


def test_nadal_limit_analytic():
    # Nadal (1908): (tan d - mu) / (1 + mu tan d); by hand with tan 70 deg =
    # 2.747477, tan 60 deg = 1.732051: 2.447477 / 1.824243 = 1.34164 and
    # 1.432051 / 1.519615 = 0.94238 (tolerance: the 6 digits of the tangents)
    assert derailment.nadal_limit(math.radians(70.0), 0.3) == pytest.approx(1.34164, abs=1e-5)
    assert derailment.nadal_limit(math.radians(60.0), 0.3) == pytest.approx(0.94238, abs=1e-5)


def test_flange_climb_ratio_of_a_flange_contact():
    contact = np.zeros((2, MAX_POINTS, N_CONTACT))
    derived = np.zeros(N_DERIVED)
    contact[0, 0, C_ACTIVE], contact[0, 0, C_ANGLE] = 1.0, math.radians(2.0)    # tread
    derived[D_PYQ + 0] = 0.9
    contact[0, 1, C_ACTIVE], contact[0, 1, C_ANGLE] = 1.0, math.radians(70.0)   # flange
    derived[D_PYQ + 1] = 2.0
    contact[1, 0, C_ACTIVE], contact[1, 0, C_ANGLE] = 1.0, math.radians(30.0)   # not a flange
    derived[D_PYQ + MAX_POINTS] = 5.0
    out = np.zeros(2)
    derailment.flange_climb_ratios(contact, derived, 0.3, out)
    assert out[0] == pytest.approx(2.0 / 1.34164, rel=1e-5)
    assert out[1] == 0.0


def test_flange_reach_s1002_uic60():
    # 1435 / 2 - (1360 / 2 + 70 - 55) = 22.5 mm: the flange tip of S1002 lies 55 mm
    # inside the taping line, which is 70 mm outside the flange back (EN 13715)
    setup = ContactSetup.from_names("S1002", "UIC60", gauge=1.435, back_to_back=1.360)
    assert derailment.flange_passed_lateral(setup) == pytest.approx(0.0225, abs=1e-9)


def _run(creep, contact, lateral=0.0, vertical=BOX_LOAD, step=2e-4, steps=400, hold_step=False,
         integrator="rosenbrock"):
    model = WheelsetModel(WheelsetParameters(creep_model=creep, contact_model=contact,
                                             internal_step=step, integrator=integrator))
    force = np.zeros((2, 3))
    force[:, 2] = BOX_LOAD
    model.initialize(WheelsetInputs(axle_box_force=force))
    if hold_step:
        # the model holds its internal step to half the creep-damping stability
        # limit (WheelsetModel.stable_internal_step); hold_step uses `step` as given
        assert model.internal_step < step
        model.internal_step = step
    force[:, 1], force[:, 2] = lateral, vertical
    inputs = WheelsetInputs(axle_box_force=force)
    ratios = []
    for k in range(steps):
        before = model.get_state()
        result = model.advance(1e-3, inputs)
        if result.status != "ok":
            return model, result, before, ratios
        ratios.append(model.outputs().flange_climb_ratio.copy())
    raise AssertionError(f"{creep}/{contact}: no discard in {steps} steps")


@pytest.mark.parametrize("creep, contact", MODELS)
def test_flange_slam_is_a_derailment_with_every_model(creep, contact):
    """150 kN per box against ~70 kN wheel loads: the left flange climbs; the step
    is discarded as a derailment of the left wheel, never as a wheel lift."""
    model, result, before, ratios = _run(creep, contact, lateral=1.5e5)
    assert result.reason == "derailment", result.message
    assert "right wheel" not in result.message
    assert ("the left wheel has climbed its rail" in result.message
            or "the left wheel is off its rail head on the field side" in result.message
            or "both wheels have been off their rails" in result.message), result.message
    assert model.get_state()["state"].tobytes() == before["state"].tobytes()   # rolled back
    # the flange climbed first: a flange contact's Y/Q above Nadal's limit
    assert max(r[0] for r in ratios) > 1.0


def test_flange_slam_to_the_right_names_the_right_wheel():
    """The mirror of the slam above (150 kN per box towards -y): the right flange
    climbs (its Nadal ratio above 1) and the message names the right wheel. (It
    named the left one: the side was taken from the climb ratios of the step
    that lost contact, which are all 0.)"""
    model, result, before, ratios = _run("polach", "multipoint", lateral=-1.5e5)
    assert result.reason == "derailment", result.message
    assert "left wheel" not in result.message
    assert max(r[1] for r in ratios) > 1.0 and max(r[0] for r in ratios) <= 1.0


@pytest.mark.parametrize("creep, contact", MODELS)
def test_upward_load_is_a_wheel_lift_not_a_derailment(creep, contact):
    """1 MN per box upwards: both wheels leave the rails without any flange
    contact: steps go on, with the wheel lift and its height reported, until
    both wheels are higher above their rails than the flange (28 mm on S1002),
    well before the airborne limit (2 sqrt(2 h / g), 151 ms): a derailment by flight."""
    model, result, _, ratios = _run(creep, contact, vertical=1.0e6)
    assert result.reason == "derailment", result.message
    assert "both wheels are more than the flange height (28.0 mm) above their rails" in result.message
    assert max(max(r) for r in ratios) == 0.0        # no flange ever climbed
    out = model.outputs()
    assert out.wheel_lift.all() and (out.lift_height > 0.0).all()
    assert (out.lift_height <= derailment.flange_height(model.setup)).all()
    assert 0.0 < out.airborne_time <= derailment.airborne_limit(model.setup)


def test_state_far_past_the_flange_in_one_step_is_an_instability():
    """Kalker's unbounded creep with RK4 at a 1 ms internal step (above the creep-damping
    stability limit, which the model would avoid by itself: hold_step) and 80 kN
    per box: the lateral displacement jumps from before the flange to more than a
    metre in one step: a numerical instability (with the hint to reduce the
    internal step), not a derailment."""
    _, result, before, _ = _run("kalker", "single", lateral=8.0e4, step=1e-3, hold_step=True,
                                integrator="rk4")
    # the blown-up step is caught by whichever check sees it first: a penetration
    # beyond any contact, a state past the flange in one step or not finite
    assert result.reason in ("non_finite", "excessive_penetration"), result.message
    assert "reduce the internal step" in result.message


# ---------------------------------------------------------------------------
# through the FMU, default models (Polach, multipoint)
# ---------------------------------------------------------------------------
fmpy = pytest.importorskip("fmpy")
from test_security_state import Host  # noqa: E402


@pytest.fixture(scope="module")
def md(wheelset_fmu_unzipped):
    return fmpy.read_model_description(wheelset_fmu_unzipped)


def test_fmu_reports_derailment_with_the_default_models(md, wheelset_fmu_unzipped):
    h = Host(md, wheelset_fmu_unzipped, "derail", params={}, initialize=False)
    try:
        h.s.setReal([h.vr["solver.internal_step"]], [2e-4])
        h.initialize()                      # default creep (Polach) and contact (multipoint)
        h.step()
        saved = h.s.getFMUstate()
        h.s.setReal([h.vr["axlebox.left.force.y"], h.vr["axlebox.right.force.y"]], [1.5e5, 1.5e5])
        n = len(h.messages)
        peak = 0.0
        with pytest.raises(fmpy.fmi1.FMICallException) as info:
            for _ in range(400):
                h.step()
                peak = max(peak, h.s.getReal([h.vr["wheel.left.flange_climb_ratio"]])[0])
        assert info.value.status == 2
        text = " ".join(m for status, *_, m in h.messages[n:] if status >= 3)
        assert "derailment: the left wheel" in text or "derailment: both wheels" in text, text
        assert "fmi2Terminated" in text
        # status.derailment names the cause; status.wheel_lift may also be set (the
        # other wheel is in the air when the flange climbs): the two are told apart
        # by status.derailment and the logged reason
        assert h.s.getBoolean([h.vr["status.derailment"]]) == [True]
        assert peak > 1.0                   # the indicator said so before the jump
        # roll back, smaller lateral force: goes on
        h.s.setFMUstate(saved)
        h.s.freeFMUstate(saved)
        h.t = H_AFTER_ONE
        h.s.setReal([h.vr["axlebox.left.force.y"], h.vr["axlebox.right.force.y"]], [1.0e4, 1.0e4])
        h.step(5)
        assert h.s.getBoolean([h.vr["status.derailment"]]) == [False]
    finally:
        h.s.freeInstance()


H_AFTER_ONE = 1e-3
