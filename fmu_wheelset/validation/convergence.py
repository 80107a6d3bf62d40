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
  d  release: S1002/UIC60 1:40, the built-in quarter vehicle carrying 12 400 kg,
     40 m/s, released 4 mm off the centreline (onto the flange root), 1 s;
  e  the same with LMA/CHN60 1:40 released 6 mm (across the LMA's arc/line
     junction of the tread and onto its flange root), 1 s;
  f  case e with the LMA read from a file of the published coordinate table's
     points (`lma_table_file`: 0.1 mm apart and at the table's junctions, 8
     significant digits, a free-text header line), 1 s.
The converged runs (RK45 at tolerance 1e-10, checked against RK4 at 10 us) are
stored in reference_data/convergence/ by its make_references.py; the defaults
must stay within 2 % of the static wheel load in Q and within 1 um in y.
"""
from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np

from fmu_wheelset.validation.common import CaseResult, Row, figure, save

REFERENCES = Path(__file__).resolve().parent / "reference_data" / "convergence"
HOST_STEP = 1e-3
Q_TOLERANCE = 0.02       # of the static wheel load (the accuracy asked of the defaults)
Y_TOLERANCE = 1e-6       # m (the accuracy asked of the defaults)
TITLES = {"a": "loaded straight track, 2 mm offset", "b": "Ren & Jin R400, 100 km/h",
          "c": "hard flange contact, 100 kN lateral",
          "d": "S1002/UIC60 released 4 mm at 40 m/s", "e": "LMA/CHN60 released 6 mm at 40 m/s",
          "f": "LMA from the published table's points, released 6 mm"}
CASES = tuple(TITLES)
# the junctions of the public LMA table (docs/profiles.md): points of the table
LMA_TABLE_JUNCTIONS_MM = (-62.307692, -52.557372, -40.265268, -38.053345, -28.4709, 4.253514)


def lma_table_file(path=None) -> str:
    """Write the points of the public LMA coordinate table (the table the
    built-in LMA's chain reproduces within 9e-7 mm, docs/profiles.md) as a
    profile file, as a user would load it: s every 0.1 mm from -70 to 65 mm and
    at the table's junctions, F from the chain to 8 significant digits (the
    table's), a free-text header line. Returns its path (default: in the
    temporary directory)."""
    import os
    import tempfile
    from solver.profiles import definitions
    curve = definitions.lma_curve()
    s = sorted(set(np.round(np.arange(-700, 651) * 0.1, 1).tolist()) | set(LMA_TABLE_JUNCTIONS_MM))
    path = path or os.path.join(tempfile.gettempdir(), "wheelset-fmu-lma-table.txt")
    lines = ["# units: mm. columns: lateral height (LMA of CRH2/CRH380A/CR400AF, the public "
             "table's points)", "# flange_back_to_taping_line_mm: 70"]
    lines += [f"{v:.8g}\t{float(curve(np.array([v]))[0]):.8g}" for v in s]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path


def case(name, **overrides):
    """(WheelsetParameters, duration, lateral axle-box force per box, ramp time,
    static wheel load) of case a to f."""
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
    if name in ("d", "e", "f"):
        # the built-in quarter vehicle (its frame follows the wheelset)
        base = dict(bogie=True, suspended_mass=12400.0, speed=40.0, initial_lateral=0.004)
        if name != "d":
            base.update(wheel_profile="LMA" if name == "e" else lma_table_file(),
                        rail_profile="CHN60", rail_inclination=math.atan(1.0 / 40.0),
                        back_to_back=1.353, nominal_radius=0.43, initial_lateral=0.006)
        params = WheelsetParameters(**base)
        return dataclasses.replace(params, **overrides), 1.0, 0.0, 0.0, \
            (12400.0 + params.mass) * 9.81 / 2.0
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
                  for name in CASES}


def case_convergence(out, backend="fmu") -> CaseResult:
    """The defaults against the converged runs (the core: the FMU steps the same
    core, tests/test_fmu.py holds them equal)."""
    out = Path(out)
    meta, refs = references()
    rows, runs = [], {}
    name = "Convergence of the defaults"
    for key in CASES:
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
