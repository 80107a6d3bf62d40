"""Running safety (docs/running_safety.md): the flange-climb warning,
derailment and wheel drop, on the loaded wheelset of the convergence cases
(S1002/UIC60 1:40, built-in suspension carrying 12 400 kg, 100 km/h), 1 ms
communication steps.

Cases:
  climb 5 / 50 kN/s: a lateral force on each axle box growing at 5 or 50 kN/s
      pushes the left flange onto its rail until the wheelset derails;
  drop: the left rail moved outwards by 0.1 m at 0.1 m/s: the left wheel drops
      off its rail head inside the gauge;
  brief: 30 kN per axle box and for 10 ms 40 kN more: a brief Nadal
      exceedance (the warning) without derailment.
Converged event times: reference_data/running_safety/ (make_references.py).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from fmu_wheelset.validation.common import CaseResult, Row

REFERENCES = Path(__file__).resolve().parent / "reference_data" / "running_safety"
HOST_STEP = 1e-3
RATES = (5e3, 50e3)                         # N/s per axle box: the growing-force cases
CLIMB_DURATION = {5e3: 90.0, 50e3: 9.0}     # s: longer than any run takes to derail
EVENT_TOLERANCE = 0.01                      # of the time: two runs see the same event


def same_event(a: float, b: float) -> bool:
    """Two event times agree: within max(one communication step, 1 % of the time)
    (the accuracy the event times are asked for)."""
    return abs(a - b) <= max(HOST_STEP, EVENT_TOLERANCE * max(abs(a), abs(b))) + 1e-9


def quasi_static_nadal_force(params, low=0.0, high=200e3, tolerance=10.0) -> float:
    """The lateral force per axle box (N) at which the larger flange-climb ratio
    (flange Y/Q over Nadal's limit, solver.dynamics.derailment) of the
    quasi-static run (solver.contact_modes.quasi_static_state: every
    acceleration zero under the force) reaches 1: bisection to `tolerance` N,
    each equilibrium from the last one below."""
    from solver.contact_modes import ContactModeError, quasi_static_state
    from solver.model.wheelset import WheelsetModel
    model = WheelsetModel(params)
    model.initialize()

    def ratio(force, start):
        state = quasi_static_state(model, force, start)
        model.state[:] = state
        model.rhs(state)
        model.refresh_record()
        return float(model.outputs().flange_climb_ratio.max()), state

    below, state = ratio(low, None)
    if below >= 1.0:
        raise ValueError("the flange-climb ratio is above 1 without a lateral force")
    forces = np.arange(low, high + 1.0, 5e3)
    for force in forces[1:]:
        try:
            r, trial = ratio(float(force), state)
        except ContactModeError:
            r, trial = float("inf"), None
        if r >= 1.0:
            high = float(force)
            break
        low, state = float(force), trial
    else:
        raise ValueError(f"the flange-climb ratio stays below 1 up to {high:g} N")
    while high - low > tolerance:
        mid = 0.5 * (low + high)
        try:
            r, trial = ratio(mid, state)
        except ContactModeError:
            r, trial = float("inf"), None
        if r >= 1.0:
            high = mid
        else:
            low, state = mid, trial
    return 0.5 * (low + high)


def loaded(**overrides):
    """The loaded wheelset of the cases: the built-in suspension with its frame on
    the track centreline (the model the stored event times were made with; the
    lateral springs hold the wheelset against the growing lateral force until
    its flange takes it)."""
    from solver.model.parameters import WheelsetParameters
    return WheelsetParameters(bogie=True, frame_on_centreline=True, suspended_mass=12400.0,
                              **overrides)


def _model(**overrides):
    from solver.model.outputs import WheelsetInputs
    from solver.model.wheelset import WheelsetModel
    model = WheelsetModel(loaded(**overrides))
    inputs = WheelsetInputs()
    model.initialize(inputs)
    return model, inputs


def climb(rate, on_step=None, until_warning=False, **overrides):
    """The growing-force case; on_step(model) after every accepted step; with
    `until_warning`, only until the first warning. Returns (time of the first
    warning or None, the StepResult that ended it, the time at its start)."""
    model, inputs = _model(**overrides)
    warning = None
    result = None
    for i in range(int(round(CLIMB_DURATION[rate] / HOST_STEP))):
        inputs.axle_box_force[:, 1] = rate * (i + 0.5) * HOST_STEP
        result = model.advance(HOST_STEP, inputs)
        if result.status != "ok":
            break
        if warning is None and model.outputs().flange_climb_ratio.max() > 1.0:
            warning = model.time
            if until_warning:
                break
        if on_step is not None:
            on_step(model)
    return warning, result, model.time


def drop(on_step=None, **overrides):
    """The moving-rail case: (the StepResult that ended it, the end time of that step)."""
    model, inputs = _model(**overrides)
    result = None
    for i in range(2000):
        inputs.rail_motion.lateral[0] = 0.1 * min(1.0, (i + 1) * HOST_STEP / 1.0)
        result = model.advance(HOST_STEP, inputs)
        if result.status != "ok":
            return result, model.time + HOST_STEP
        if on_step is not None:
            on_step(model)
    return result, model.time


def brief(**overrides):
    """The brief exceedance: (the StepResults, the times with the warning on, the
    longest exceedance time reported (s), the warning flag of the record at those times)."""
    from solver.model.outputs import RECORD_INDEX
    model, inputs = _model(**overrides)
    results, warned, flags, longest = [], [], [], 0.0
    for i in range(1500):
        t = (i + 0.5) * HOST_STEP
        inputs.axle_box_force[:, 1] = 30e3 * min(1.0, t / 0.3) + (40e3 if 0.6 <= t < 0.61 else 0.0)
        result = model.advance(HOST_STEP, inputs)
        results.append(result)
        if result.status != "ok":
            break
        out = model.outputs()
        if out.flange_climb_ratio.max() > 1.0:
            warned.append(model.time)
            flags.append(model.record[RECORD_INDEX["status.flange_climb_warning"]])
        longest = max(longest, float(out.flange_climb_time.max()))
    return results, warned, longest, flags


def references() -> dict:
    return json.loads((REFERENCES / "references.json").read_text())


def case_running_safety(out, backend="fmu") -> CaseResult:
    """The default integrator on the cases (the core; the FMU steps the same core)."""
    ref = references()
    name = "Running safety (defaults)"
    rows = []
    result, end = drop()
    rows.append(Row(name, "left rail moved 0.1 m outwards: wheel drop reported at", "the converged "
                    f"run's {ref['drop']['wheel_drop_s']:.3f} s", end, "s",
                    ref["drop"]["wheel_drop_s"], HOST_STEP + 1e-9, "core",
                    passed=result.reason == "derailment" and abs(end - ref["drop"]["wheel_drop_s"])
                    <= HOST_STEP + 1e-9,
                    why="1 ms: flagged in the communication step in which it happens",
                    note=result.message))
    results, warned, longest, _ = brief()
    ok = all(r.status == "ok" for r in results)
    rows.append(Row(name, "brief Nadal exceedance (40 kN for 10 ms on 30 kN per box): the "
                    "warning's longest duration", "a warning, no derailment", longest * 1e3, "ms",
                    float("nan"), float("nan"), "core", passed=bool(ok and warned),
                    why="criterion: the warning raised, every step accepted",
                    note=f"warning from {warned[0]:.3f} to {warned[-1]:.3f} s" if warned else ""))
    nadal = ref["quasi_static_nadal_force_N"]
    for rate in RATES:
        conv = ref[f"climb_{rate:.0f}"]
        tolerance = max(HOST_STEP, EVENT_TOLERANCE * conv["derailment_s"])
        # 5 kN/s: the default until its warning (its derailment takes 77 s of
        # simulation: the converged runs' time is the row's, not re-run here)
        slow = rate < 10e3
        warning, result, end = climb(rate, until_warning=slow)
        rows.append(Row(name, f"lateral force growing at {rate / 1e3:g} kN/s per box: first "
                        "flange-climb warning", f"converged {conv['first_warning_s']:.3f} s",
                        warning if warning is not None else float("nan"), "s",
                        conv["first_warning_s"], HOST_STEP + 1e-9, "core",
                        why="1 ms: flagged in the communication step in which it happens",
                        note=f"at {rate * (warning or 0.0) / 1e3:.1f} kN per box; the quasi-static "
                             f"Nadal estimate {nadal / 1e3:.1f} kN"))
        if slow:
            rows.append(Row(name, f"lateral force growing at {rate / 1e3:g} kN/s per box: "
                            "derailment (the converged runs)", "RK4 at 5 and 10 us agree",
                            conv["derailment_s"], "s", float("nan"), float("nan"), "core",
                            compared=False, why="not re-run: 77 s of simulation (make_references.py)",
                            note=f"at {conv['derailment_force_N'] / 1e3:.0f} kN per box: "
                                 + conv["end"]))
            continue
        rows.append(Row(name, f"lateral force growing at {rate / 1e3:g} kN/s per box: derailment "
                        "reported at", f"converged {conv['derailment_s']:.3f} s", end + HOST_STEP,
                        "s", conv["derailment_s"], tolerance, "core",
                        passed=result.reason == "derailment"
                        and same_event(end + HOST_STEP, conv["derailment_s"]),
                        why="max(1 ms, 1 % of the time): the accuracy asked of the event times",
                        note=f"at {rate * (end + HOST_STEP) / 1e3:.0f} kN per box, "
                             f"{rate * (end + HOST_STEP) / nadal:.1f} times the quasi-static Nadal "
                             "estimate: " + result.message))
    return CaseResult("running_safety", "Running safety: warning, derailment, wheel drop",
                      rows, [], [], "core")
