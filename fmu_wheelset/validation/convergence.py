"""The accuracy of the defaults: three cases against converged runs.

Cases (the Manchester benchmark wheelset unless named), 1 ms communication steps:
  a  loaded straight track: S1002/UIC60 1:40, built-in suspension (its frame
     on the track centreline) carrying 12 400 kg, released 2 mm off the
     centreline, 0.5 s;
  b  Ren & Jin R = 400 m at 100 km/h (solver.scenarios "ren-jin-r400-100",
     including the flange-root impact near 5.8 s), 12 s;
  c  hard flange contact: built-in suspension (its frame on the track
     centreline) carrying 100 kN per axle box,
     a lateral axle-box force raised linearly to 50 kN per box (100 kN on the
     wheelset) over 0.5 s, 2 s. (The same load applied as a step throws the
     wheelset against its flange in a series of impacts and lifts whose
     trajectory no integrator here converges: RK45 at 1e-9 and 1e-10 differ
     by 0.67 mm, RK4 at 5 and 10 us by 1.4 mm: no reference exists for it.)
The converged runs (RK45 at tolerance 1e-10, checked against RK4 at 10 us) are
stored in reference_data/convergence/ by its make_references.py; the defaults
must stay within 2 % of the static wheel load in Q and within 1 um in y.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from fmu_wheelset.validation.common import CaseResult, Row, figure, save

REFERENCES = Path(__file__).resolve().parent / "reference_data" / "convergence"
HOST_STEP = 1e-3
Q_TOLERANCE = 0.02       # of the static wheel load (the accuracy asked of the defaults)
Y_TOLERANCE = 1e-6       # m (the accuracy asked of the defaults)
TITLES = {"a": "loaded straight track, 2 mm offset", "b": "Ren & Jin R400, 100 km/h",
          "c": "hard flange contact, 100 kN lateral"}


def case(name, **overrides):
    """(WheelsetParameters, duration, lateral axle-box force per box, ramp time,
    static wheel load) of case a, b or c."""
    from solver.scenarios import load_scenario
    from solver.model.parameters import WheelsetParameters
    # a and c: the built-in suspension with its frame on the track centreline (the
    # integrators' accuracy on the model their references were made with)
    if name == "a":
        params = WheelsetParameters(bogie=True, frame_on_centreline=True, suspended_mass=12400.0,
                                    initial_lateral=0.002)
        return dataclasses.replace(params, **overrides), 0.5, 0.0, 0.0, \
            (12400.0 + params.mass) * 9.81 / 2.0
    if name == "b":
        params = load_scenario("ren-jin-r400-100").params
        return dataclasses.replace(params, **overrides), 12.0, 0.0, 0.0, \
            (params.suspended_mass + params.mass) * 9.81 / 2.0
    if name == "c":
        params = WheelsetParameters(bogie=True, frame_on_centreline=True,
                                    suspended_mass=2 * 100e3 / 9.81)
        return dataclasses.replace(params, **overrides), 2.0, 50e3, 0.5, \
            (2 * 100e3 + params.mass * 9.81) / 2.0
    raise ValueError(f"no convergence case {name!r}")


def run(name, **overrides):
    """y, Q left, Q right at the end of every 1 ms communication step (n, 3),
    the core with the case's parameters (and `overrides`)."""
    from solver.layout import S_Y
    from solver.model.outputs import WheelsetInputs
    from solver.model.wheelset import WheelsetModel
    params, duration, lateral, ramp, _ = case(name, **overrides)
    model = WheelsetModel(params)
    inputs = WheelsetInputs()
    model.initialize(inputs)
    steps = int(round(duration / HOST_STEP))
    out = np.empty((steps, 3))
    for i in range(steps):
        if lateral:
            inputs.axle_box_force[:, 1] = lateral * min(1.0, (i + 0.5) * HOST_STEP / ramp)
        result = model.advance(HOST_STEP, inputs)
        if result.status != "ok":
            raise RuntimeError(f"case {name} {overrides}: {result.message}")
        loads = model.outputs().vertical_force
        out[i] = (model.state[S_Y], loads[0], loads[1])
    return out


def references():
    """(metadata, {case: the stored converged (n, 3) array})."""
    meta = json.loads((REFERENCES / "references.json").read_text())
    return meta, {name: np.load(REFERENCES / f"case_{name}.npz")["y_q"].astype(float)
                  for name in "abc"}


def case_convergence(out, backend="fmu") -> CaseResult:
    """The defaults against the converged runs (the core: the FMU steps the same
    core, tests/test_fmu.py holds them equal)."""
    out = Path(out)
    meta, refs = references()
    rows, runs = [], {}
    name = "Convergence of the defaults"
    for key in "abc":
        got = runs[key] = run(key)
        static = meta[key]["static_wheel_load_N"]
        dq = float(np.abs(got[:, 1:] - refs[key][:, 1:]).max())
        dy = float(np.abs(got[:, 0] - refs[key][:, 0]).max())
        why = ("the accuracy asked of the defaults; the converged runs (RK45 1e-10 and RK4 10 us) agree to "
               f"{meta[key]['rk45_vs_rk4_max_dQ_N'] / static * 100:.2g} % and "
               f"{meta[key]['rk45_vs_rk4_max_dy_m'] * 1e6:.2g} um")
        rows.append(Row(name, f"case {key} ({TITLES[key]}): max |Q - Q_converged| / static load",
                        "within 2 %", dq / static * 100, "%", 0.0, Q_TOLERANCE * 100, "core", why=why))
        rows.append(Row(name, f"case {key}: max |y - y_converged|", "within 1 um", dy * 1e6,
                        "um", 0.0, Y_TOLERANCE * 1e6, "core", why=why))
    fig, axes = figure(2, 1, (7.5, 6.0))
    axes = axes[:, 0]
    t = HOST_STEP * np.arange(1, len(runs["b"]) + 1)
    axes[0].plot(t, refs["b"][:, 1] / 1e3, label="converged (RK45 1e-10)")
    axes[0].plot(t, runs["b"][:, 1] / 1e3, "--", label="defaults (Rosenbrock 1e-5)")
    axes[0].set(title="Ren & Jin R400, 100 km/h: left (outer) wheel load",
                xlabel="time (s)", ylabel="Q (kN)")
    axes[0].legend()
    t = HOST_STEP * np.arange(1, len(runs["a"]) + 1)
    axes[1].plot(t, refs["a"][:, 1] / 1e3, label="converged, left wheel")
    axes[1].plot(t, runs["a"][:, 1] / 1e3, "--", label="defaults, left wheel")
    axes[1].set(title="loaded straight track, 2 mm offset: the tread jump crossed repeatedly",
                xlabel="time (s)", ylabel="Q (kN)")
    axes[1].legend()
    path = save(fig, out / "convergence.png")
    return CaseResult("convergence", "Convergence of the defaults", rows,
                      [("wheel loads of the defaults against the converged runs [core]", path)],
                      [], "core")
