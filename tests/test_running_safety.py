"""Running safety: the flange-climb warning, derailment and wheel drop
follow the physics, the same with every integrator and step.

Cases: fmu_wheelset/validation/running_safety.py; converged references:
reference_data/running_safety/ beside it.
Criteria (solver/dynamics/derailment.py): the warning when a flange contact's Y/Q is
above Nadal's limit; derailment at the end of the first communication step in
which a loaded contact reaches the flange tip, a wheel is off its rail head
(past the gauge face, or dropped inside the gauge), or both wheels have been
off their rails longer than 2 sqrt(2 h / g) (0.151 s for the 28 mm flange of
S1002).
"""
from __future__ import annotations

import pytest

from fmu_wheelset.validation.running_safety import (
    HOST_STEP, RATES, brief, climb, drop, references, same_event,
)
from solver.dynamics import derailment
from solver import layout as geo

REFERENCES = references()
# RK4 at its default step (held by the model to half its stability limit on the
# rail bodies' fastest mode, about 25 us) and at 20 us; the adaptive ones
INTEGRATORS = {
    "RK4 default step": {"integrator": "rk4"},
    "RK4 20 us": {"integrator": "rk4", "internal_step": 2e-5},
    "RK45 1e-6": {"integrator": "rk45", "tolerance": 1e-6},
    "Rosenbrock 1e-4": {"tolerance": 1e-4},
    "Rosenbrock (default)": {},
}
ONE_STEP = HOST_STEP + 1e-9      # flagged within one 1 ms communication step


class _StepCheck:
    """Called after every accepted step: no derailment criterion may hold there
    (the step in which one first holds must be the one reported)."""

    def __init__(self):
        self.limit = None
        self.worst_airborne = 0.0

    def __call__(self, model):
        setup = model.setup
        if self.limit is None:
            self.limit = derailment.airborne_limit(setup)
            self.flange_passed = derailment.flange_passed_lateral(setup)
            self.tip = float(setup.wheel_table[0, geo.T_LAT])
        out = model.outputs()
        self.worst_airborne = max(self.worst_airborne, out.airborne_time)
        assert out.airborne_time <= self.limit, f"t = {model.time}: airborne too long, accepted"
        # past the flange relative to the rail (the lumped rail bodies move)
        towards = derailment.lateral_towards_flange(model.state, model.arrays.inputs)
        assert towards <= self.flange_passed, f"t = {model.time}: past the flange"
        loaded = out.contact_active & (out.normal_force > 0.0)
        assert not (loaded & (out.contact_y_wheel < self.tip + 0.003)).any(), \
            f"t = {model.time}: a loaded contact at the flange tip, accepted"


@pytest.mark.parametrize("integrator", list(INTEGRATORS))
@pytest.mark.parametrize("rate", RATES)
def test_growing_lateral_force_warns_at_the_converged_time(rate, integrator):
    """The first flange-climb warning (the flanging wheel's Y/Q above Nadal's
    limit) within one 1 ms communication step of the converged runs' (RK4 at
    5 and 10 us, which agree to the step: references.json), with
    every integrator; no derailment before it. 5 kN/s is the quasi-static
    limit: its warning force lies within 1 % of the quasi-static Nadal
    estimate (the lateral axle-box force at which the quasi-static run's ratio
    reaches 1)."""
    reference = REFERENCES[f"climb_{rate:.0f}"]
    warning, result, _ = climb(rate, on_step=_StepCheck(), until_warning=True,
                               **INTEGRATORS[integrator])
    print(f"{rate / 1e3:g} kN/s, {integrator}: warning at {warning:.3f} s (converged "
          f"{reference['first_warning_s']:.3f} s)")
    assert result.status == "ok", result.message
    assert abs(warning - reference["first_warning_s"]) <= ONE_STEP
    if rate == 5e3:
        nadal = REFERENCES["quasi_static_nadal_force_N"]
        assert rate * warning == pytest.approx(nadal, rel=0.01)


# the runs to the derailment at 50 kN/s (7.7 s of simulation; at 5 kN/s 77 s:
# its converged time is in references.json, docs/running_safety.md)
DERAILING = ("RK4 default step", "RK45 1e-6", "Rosenbrock 1e-4")


@pytest.mark.parametrize("integrator", DERAILING)
def test_growing_lateral_force_derails_at_the_converged_time(integrator):
    """50 kN/s per axle box: derailment is reported at the end of the step in
    which a criterion first holds (no accepted step has one: the step check),
    within max(one 1 ms step, 1 % of the time) of the converged runs', with the
    same criterion. The wheel does not climb (a pure lateral push holds the
    wheelset square: its friction opposes the climb, docs/running_safety.md):
    the lumped rail bodies yield until the flange passes the rail's gauge face."""
    rate = 50e3
    reference = REFERENCES[f"climb_{rate:.0f}"]
    check = _StepCheck()
    warning, result, end = climb(rate, on_step=check, **INTEGRATORS[integrator])
    print(f"{integrator}: derailment at {end + HOST_STEP:.3f} s (converged "
          f"{reference['derailment_s']:.3f} s): {result.message}")
    assert warning is not None and warning < end
    assert result.status == "discard" and result.reason == "derailment", result.message
    assert same_event(end + HOST_STEP, reference["derailment_s"])
    assert result.message.split(":")[1] == reference["end"].split(":")[1]


@pytest.mark.parametrize("integrator", list(INTEGRATORS))
def test_rail_moved_away_drops_the_wheel(integrator):
    result, end = drop(on_step=_StepCheck(), **INTEGRATORS[integrator])
    print(f"{integrator}: {end:.3f} s, {result.message}")
    assert result.reason == "derailment" and "dropped off its rail head" in result.message
    assert abs(end - REFERENCES["drop"]["wheel_drop_s"]) <= ONE_STEP


def test_brief_nadal_exceedance_warns_without_derailment():
    """30 kN per axle box, and for 10 ms 40 kN more: the flange's Y/Q exceeds
    Nadal's limit for a few ms (the warning, with its duration), and the
    wheelset stays on its rails."""
    results, warned, longest, flags = brief()
    assert all(r.status == "ok" for r in results), results[-1].message
    print(f"warning from {warned[0]:.3f} to {warned[-1]:.3f} s ({len(warned)} steps), "
          f"longest exceedance {longest * 1e3:.0f} ms")
    assert warned and warned[-1] < 0.7 and 0.0 < longest <= 0.02
    assert all(flag == 1.0 for flag in flags)
