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

from fmu_wheelset.validation.running_safety import HOST_STEP, brief, climb, drop, references
from solver.dynamics import derailment
from solver import layout as geo

REFERENCES = references()
INTEGRATORS = {
    "RK4 1 ms": {"integrator": "rk4", "internal_step": 1e-3},
    "RK4 0.2 ms": {"integrator": "rk4", "internal_step": 2e-4},
    "RK45 1e-6": {"integrator": "rk45", "tolerance": 1e-6},
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
        assert abs(out.position[1]) <= self.flange_passed, f"t = {model.time}: past the flange"
        loaded = out.contact_active & (out.normal_force > 0.0)
        assert not (loaded & (out.contact_y_wheel < self.tip + 0.003)).any(), \
            f"t = {model.time}: a loaded contact at the flange tip, accepted"


# the explicit RK4 at fixed steps is not stable through the impacts that follow
# a flange climb here (normal forces of 400-700 kN): its runs may end in a
# discarded step for excessive penetration or a non-finite state instead
EXPLICIT = ("RK4 1 ms", "RK4 0.2 ms")


@pytest.mark.parametrize("integrator", list(INTEGRATORS))
@pytest.mark.parametrize("rate", [5e3, 50e3])
def test_growing_lateral_force_warns_then_derails(rate, integrator):
    """The flange-climb warning comes first; derailment is reported at the end of
    the step in which a criterion first holds (no accepted step has one: the
    step check), never after a flight longer than the airborne limit. Its time
    is not compared with a converged run: none exists. From the first Nadal
    exceedance on, the flange contact oscillates with a growing amplitude, then
    bounces; RK45 at 1e-10 and RK4 at 10 us derail 0.75 s (5 kN/s) and 0.41 s
    (50 kN/s) apart (references.json). The warning's time is printed against
    the converged one (they agree to 0.5 ms there)."""
    reference = REFERENCES[f"climb_{rate:.0f}"]
    check = _StepCheck()
    warning, result, end = climb(rate, on_step=check, **INTEGRATORS[integrator])
    converged = reference["derailment_s"]
    print(f"{rate / 1e3:g} kN/s, {integrator}: warning at {warning:.3f} s (converged "
          f"{reference['first_warning_s']:.3f} s), end at {end + HOST_STEP:.3f} s "
          f"(converged runs derail at " + ", ".join(f"{k} {v:.3f} s" for k, v in converged.items())
          + f"), longest flight {check.worst_airborne * 1e3:.0f} ms: {result.message}")
    assert warning is not None and warning < end
    assert result.status == "discard"
    if integrator in EXPLICIT:
        assert result.reason in ("derailment", "excessive_penetration", "non_finite"), result.message
    else:
        assert result.reason == "derailment", result.message


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
