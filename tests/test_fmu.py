"""Host checks of the wheelset FMU.

The FMU is built once per session into a temporary directory. Runs are short
(0.1-0.2 s simulated, 1 ms communication steps, LMA-worn on CHN60 at 100 km/h,
curvature and cant ramped in through the inputs)."""
from __future__ import annotations

import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

fmpy = pytest.importorskip("fmpy")
from fmpy.fmi1 import FMICallException  # noqa: E402
from fmpy.fmi2 import FMU2Slave  # noqa: E402
from fmpy.validation import validate_fmu  # noqa: E402

from conftest import FmiLog, compile_c_host, md_start  # noqa: E402
from cosim.fmpy_host import set_variables  # noqa: E402
from solver.track.excitation import RailMotion  # noqa: E402
from fmu_wheelset.fmu import variables as fmu_variables  # noqa: E402
import solver.model as core_wheelset
from solver.model.outputs import WheelsetInputs  # noqa: E402
from solver.model.wheelset import WheelsetModel  # noqa: E402
from solver.model.parameters import WheelsetParameters  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
H = 1e-3                     # communication step (s)
SPEED = 100.0 / 3.6
PARAMS = {"wheel.profile": "LMA-worn", "rail.profile": "CHN60", "wheelset.speed": SPEED,
          "track.scenario": "straight", "track.curvature_from_input": True,
          "track.cant_from_input": True}
COMPARED = ["wheelset.y", "wheelset.z", "wheelset.roll", "wheelset.yaw", "wheelset.velocity.y",
            "wheel.left.Q", "wheel.right.Q", "wheel.left.Y", "wheel.right.Y",
            "wheel.left.force_on_rail.y", "contact.left.point[1].normal_force",
            "contact.left.point[1].lateral_creepage", "contact.right.point[1].contact_angle",
            "axlebox.left.position.z"]


def curvature(t):
    """A left curve R = 400 m ramped in over the first 0.1 s (clothoid in time)."""
    return (1.0 / 400.0) * np.minimum(np.asarray(t) / 0.1, 1.0)


def cant(t):
    return -0.08 * np.minimum(np.asarray(t) / 0.1, 1.0)      # rad, outer (right) rail raised


def lateral_force(t):
    return 4000.0 * np.minimum(np.asarray(t) / 0.05, 1.0)    # N per axle box, towards +y


def input_table(stop):
    t = np.arange(int(round(stop / H)) + 1) * H
    table = np.zeros(t.size, dtype=[("time", float), ("track.curvature", float),
                                    ("track.cant_angle", float),
                                    ("axlebox.left.force.y", float),
                                    ("axlebox.right.force.y", float)])
    table["time"] = t
    table["track.curvature"] = curvature(t)
    table["track.cant_angle"] = cant(t)
    table["axlebox.left.force.y"] = lateral_force(t)
    table["axlebox.right.force.y"] = lateral_force(t)
    return table


def core_inputs(t):
    force = np.zeros((2, 3))
    force[:, 1] = float(lateral_force(t))
    return WheelsetInputs(axle_box_force=force, rail_motion=RailMotion(),
                          curvature=float(curvature(t)), cant_angle=float(cant(t)))


def core_parameters(md, values=PARAMS):
    """WheelsetParameters with the FMU's start values (as its model description
    declares them) overridden by `values` (the core run takes the FMU's values)."""
    fmi = {v.name: values.get(v.name, md_start(v)) for v in md.modelVariables
           if v.causality == "parameter"}
    return WheelsetParameters(**fmu_variables.parameters_from_fmi(fmi, core_wheelset, check=False))


def slave(md, unzipped, name, params=PARAMS, log=None):
    """An instantiated and initialised FMU2Slave with `params` set."""
    s = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier="Wheelset",
                  instanceName=name)
    s.instantiate(loggingOn=True, callbacks=log.callbacks if log else None)
    set_values(s, md, params)
    s.setupExperiment(startTime=0.0)
    s.enterInitializationMode()
    s.exitInitializationMode()
    return s


def set_values(s, md, values):
    set_variables(s, {v.name: v for v in md.modelVariables}, values)


def vrs(md, names):
    by_name = {v.name: v.valueReference for v in md.modelVariables}
    return [by_name[n] for n in names]


def run_steps(s, md, k0, k1, inputs=True):
    """doSteps k0..k1-1 (times k*H), applying the input functions; returns the
    COMPARED outputs after each step, shape (k1 - k0, len(COMPARED))."""
    out_vr = vrs(md, COMPARED)
    in_vr = vrs(md, ["track.curvature", "track.cant_angle", "axlebox.left.force.y",
                     "axlebox.right.force.y"])
    rows = []
    for k in range(k0, k1):
        t = k * H
        if inputs:
            f = float(lateral_force(t))
            s.setReal(in_vr, [float(curvature(t)), float(cant(t)), f, f])
        s.doStep(currentCommunicationPoint=t, communicationStepSize=H)
        rows.append(s.getReal(out_vr))
    return np.array(rows)


def core_value(out, name):
    side = {"left": 0, "right": 1}
    parts = name.split(".")
    if name.startswith("wheelset."):
        return {"wheelset.y": out.position[1], "wheelset.z": out.position[2],
                "wheelset.roll": out.orientation[0], "wheelset.yaw": out.orientation[1],
                "wheelset.velocity.y": out.velocity[1]}[name]
    if name.startswith("wheel."):
        i = side[parts[1]]
        if parts[2] == "Q":
            return out.vertical_force[i]
        if parts[2] == "Y":
            return out.lateral_force[i]
        return out.wheel_rail_force[i, "xyz".index(parts[3])]
    if name.startswith("contact."):
        i, k = side[parts[1]], int(parts[2][6:-1]) - 1
        attr = {"normal_force": "normal_force", "lateral_creepage": "creepage_lateral",
                "contact_angle": "contact_angle"}[parts[3]]
        return getattr(out, attr)[i, k] if out.contact_active[i, k] else 0.0
    if name.startswith("axlebox."):
        return out.axle_box_position[side[parts[1]], "xyz".index(parts[3])]
    raise KeyError(name)


def assert_close(actual, expected, rtol=1e-9):
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    scale = np.maximum(np.abs(expected).max(axis=0), 1e-300)
    err = np.abs(actual - expected) / scale
    assert err.max() <= rtol, f"max relative deviation {err.max():.3g} (column {err.max(axis=0).argmax()})"


# ---------------------------------------------------------------------------
def test_validate_no_problem(fmu):
    assert validate_fmu(fmu) == []


def test_every_variable_described_with_unit_and_start(md):
    assert md.coSimulation.canGetAndSetFMUstate and md.coSimulation.canSerializeFMUstate
    names = [v.name for v in md.modelVariables]
    assert len(names) == len(set(names))
    for v in md.modelVariables:
        assert v.description, v.name
        # outputs are calculated (initial="calculated": no start value)
        assert (v.start is None) == (v.causality == "output"), v.name
        if v.type == "Real":
            assert v.unit, v.name
            assert v.min is not None and v.max is not None, v.name
    assert {u.name for u in md.unitDefinitions} >= {"m", "rad", "N", "N.m", "m/s", "rad/s", "s",
                                                    "kg", "kg.m2", "Pa", "1"}
    outputs = {v for v in md.modelVariables if v.causality == "output"}
    assert {u.variable for u in md.outputs} == outputs
    assert {u.variable for u in md.initialUnknowns} == outputs
    for n in ("wheelset.y", "axlebox.left.force.y", "contact.left.point[1].normal_force",
              "contact.right.point[3].spin_moment", "wheel.right.Y_over_Q", "status.derailment",
              "rail.left.lateral_displacement", "contact.creep_model"):
        assert n in names, n


def test_every_start_value_is_the_core_default(md):
    """Defaults live in one place, the core: every FMU parameter that carries a
    WheelsetParameters field declares the core's default as its start (exactly:
    the model description writes repr(float), which round-trips), and the
    enumerations list the core's model names in id order."""
    defaults = WheelsetParameters()
    by_name = {v.name: v for v in md.modelVariables}
    checked = 0
    from solver.contact.creep.models import CREEP_MODELS
    for var in fmu_variables.PARAMETERS:
        if var.core is None:
            continue
        if var.core == fmu_variables.CREEP_OPTION:      # the option's default in its registry
            model, option = var.component
            assert md_start(by_name[var.name]) == CREEP_MODELS.get(model).option(option).default
            checked += 1
            continue
        default = getattr(defaults, var.core)
        if var.component is not None:
            default = default[var.component]
        start = md_start(by_name[var.name])
        if var.type == "Enumeration":
            names = getattr(core_wheelset, fmu_variables.ENUMERATION_BY_NAME[var.declared_type].core_names)
            assert start == names.index(default), var.name
            # an Integer holding the core's id (libcosim and Ecos ignore Enumerations),
            # every id and its model named in the description
            v = by_name[var.name]
            assert v.type == "Integer" and (int(v.min), int(v.max)) == (0, len(names) - 1)
            for i in range(len(names)):
                assert f"{i} " in v.description, (var.name, i)
        else:
            assert start == default, (var.name, start, default)
        checked += 1
    assert checked == sum(v.core is not None for v in fmu_variables.PARAMETERS) >= 33


def test_simulate_fmu_matches_core(fmu, md, unzipped):
    stop = 0.2
    n = int(round(stop / H))
    result = fmpy.simulate_fmu(unzipped, start_time=0.0, stop_time=stop, output_interval=H,
                               start_values=PARAMS, input=input_table(stop), output=COMPARED)
    assert result.size == n + 1
    # the core with the same communication points as FMPy (t_k = k * H) and the
    # inputs FMPy applies at the start of each step
    model = WheelsetModel(core_parameters(md))
    model.initialize()
    rows = [[core_value(model.outputs(), c) for c in COMPARED]]
    t = 0.0
    for k in range(n):
        t_next = (k + 1) * H
        r = model.advance(t_next - t, core_inputs(t))
        assert r.status == "ok", r.message
        t = t_next
        rows.append([core_value(model.outputs(), c) for c in COMPARED])
    fmu_rows = np.column_stack([result[c] for c in COMPARED])
    assert_close(fmu_rows, rows, rtol=1e-9)
    # it did go into the curve: flange-side load transfer and lateral shift
    assert result["wheelset.y"][-1] != 0.0
    assert abs(result["wheel.right.Q"][-1] - result["wheel.left.Q"][-1]) > 10.0


POINT_ATTRIBUTES = {"wheel_lateral": "contact_y_wheel", "rail_lateral": "contact_y_rail",
                    "contact_angle": "contact_angle", "rolling_radius": "rolling_radius",
                    "longitudinal_creepage": "creepage_longitudinal",
                    "lateral_creepage": "creepage_lateral", "spin_creepage": "creepage_spin",
                    "normal_force": "normal_force", "longitudinal_force": "creep_force_longitudinal",
                    "lateral_force": "creep_force_lateral", "spin_moment": "spin_moment"}


def core_output(out, name):
    """The value of FMU output `name` from the core's WheelsetOutputs (a mapping
    written independently of the slave's record index)."""
    side = {"left": 0, "right": 1}
    p = name.split(".")
    if name == "wheelset.axle_sum_Y_over_Q":         # Weinstock: |Y/Q| of both wheels
        return float(np.abs(out.derailment_quotient).sum())
    if name in ("wheelset.weinstock_ratio", "wheelset.airborne_time"):
        return getattr(out, p[1])
    if p[0] == "wheelset":
        vectors = {"x": (out.position, 0), "y": (out.position, 1), "z": (out.position, 2),
                   "roll": (out.orientation, 0), "yaw": (out.orientation, 1),
                   "pitch": (out.orientation, 2), "roll_rate": (out.angular_velocity, 0),
                   "yaw_rate": (out.angular_velocity, 1), "spin_rate": (out.angular_velocity, 2)}
        if p[1] == "distance":
            return out.distance
        if p[1] == "velocity":
            return out.velocity["xyz".index(p[2])]
        arr, j = vectors[p[1]]
        return arr[j]
    if p[0] == "axlebox":
        arr = out.axle_box_position if p[2] == "position" else out.axle_box_velocity
        return arr[side[p[1]], "xyz".index(p[3])]
    if p[0] == "wheel" and p[2] == "flange_climb_ratio":
        # Nadal (1908): (tan d - mu) / (1 + mu tan d), over the flange contacts (>= 45 deg)
        i, mu = side[p[1]], 0.3
        ratios = [out.point_derailment_quotient[i, k] * (1 + mu * math.tan(d)) / (math.tan(d) - mu)
                  for k, d in enumerate(out.contact_angle[i])
                  if out.contact_active[i, k] and d >= math.radians(45.0)]
        return max([0.0] + ratios)
    if p[0] == "wheel":
        i = side[p[1]]
        if p[2] in ("lift_height", "flange_climb_time", "flange_climb_distance"):
            return getattr(out, p[2])[i]
        if p[2] == "wear_number":     # T gamma summed over the wheel's active points
            return sum(abs(out.creep_force_longitudinal[i, k] * out.creepage_longitudinal[i, k])
                       + abs(out.creep_force_lateral[i, k] * out.creepage_lateral[i, k])
                       for k in range(3) if out.contact_active[i, k])
        return {"Y": out.lateral_force, "Q": out.vertical_force,
                "Y_over_Q": out.derailment_quotient, "active_points": out.contact_count,
                "lift": out.wheel_lift}[p[2]][i] if p[2] != "force_on_rail" else \
            out.wheel_rail_force[i, "xyz".index(p[3])]
    if p[0] == "contact":
        i, k = side[p[1]], int(p[2][6:-1]) - 1
        on = out.contact_active[i, k]
        if p[3] == "active":
            return on
        if p[3] == "position":
            return out.contact_position[i, k, "xyz".index(p[4])] if on else 0.0
        return getattr(out, POINT_ATTRIBUTES[p[3]])[i, k] if on else 0.0
    if name == "status.wheel_lift":
        return bool(out.wheel_lift.any())
    if name == "status.flange_climb_warning":
        return bool(out.flange_climb_ratio.max() > 1.0)
    if name in ("status.derailment", "status.excessive_penetration"):
        return False
    raise KeyError(name)


def test_every_output_equals_the_core(md, unzipped):
    # all 149 outputs 1 s into the Ren & Jin R400 run at 100 km/h (the worn
    # hollow's two tread points on each wheel: every point slot in use on both),
    # read through getReal / getInteger / getBoolean in one call each, against the
    # core run directly
    from fmu_wheelset.validation.common import fmu_start_values
    from solver.scenarios import load_scenario
    scenario = load_scenario("ren-jin-r400-100")
    start, missing = fmu_start_values(scenario.params, {v.name for v in md.modelVariables})
    assert missing == []
    n = 1000
    s = slave(md, unzipped, "all-outputs", params=start)
    try:
        for k in range(n):
            s.doStep(currentCommunicationPoint=k * H, communicationStepSize=H)   # raises unless OK
        outputs = [v for v in md.modelVariables if v.causality == "output"]
        got = {}
        for kind, getter in (("Real", s.getReal), ("Integer", s.getInteger),
                             ("Boolean", s.getBoolean)):
            chosen = [v for v in outputs if v.type == kind]
            got.update(zip([v.name for v in chosen], getter([v.valueReference for v in chosen])))
        # a parameter, an output and an input in one call
        mixed = vrs(md, ["wheelset.speed", "wheelset.y", "axlebox.left.force.y"])
        assert s.getReal(mixed) == [scenario.params.speed, got["wheelset.y"], 0.0]
    finally:
        s.terminate()
        s.freeInstance()
    model = WheelsetModel(scenario.params)
    model.initialize()
    for k in range(n):
        assert model.advance(H).status == "ok"
    out = model.outputs()
    # 128 + the two wheels' wear numbers and flange-climb ratios + the running-safety
    # outputs (lift heights, climb times and distances, Weinstock, airborne time, warning)
    # + the forced steps + the two rail bodies' deflections (3 each)
    assert len(got) == 149
    assert got["wheel.left.active_points"] == 2 and got["wheel.right.active_points"] == 2
    from solver.layout import S_RAIL
    for name, value in got.items():
        if name == "solver.forced_steps":
            expected = model.forced_steps
        elif name.startswith("rail."):      # rail.<side>.deflection.<dof>: the rail body's state
            _, side, _, dof = name.split(".")
            expected = model.state[S_RAIL + 3 * ("left", "right").index(side)
                                   + ("lateral", "vertical", "roll").index(dof)]
        else:
            expected = core_output(out, name)
        if isinstance(value, bool) or isinstance(expected, (bool, np.bool_)):
            assert value == bool(expected), name
        else:
            assert value == pytest.approx(float(expected), rel=1e-9, abs=1e-12), name


def test_state_rollback_and_serialisation_bit_identical(md, unzipped):
    s = slave(md, unzipped, "rollback")
    try:
        run_steps(s, md, 0, 30)
        state = s.getFMUstate()
        first = run_steps(s, md, 30, 60)
        s.setFMUstate(state)
        again = run_steps(s, md, 30, 60)
        assert np.array_equal(first, again)
        blob = s.serializeFMUstate(state)
        s.freeFMUstate(state)
        restored = s.deSerializeFMUstate(blob)
        s.setFMUstate(restored)
        third = run_steps(s, md, 30, 60)
        assert np.array_equal(first, third)
        s.freeFMUstate(restored)
        assert np.any(first[:, 0] != 0.0)
    finally:
        s.terminate()
        s.freeInstance()


def test_two_instances_independent(md, unzipped):
    solo = slave(md, unzipped, "solo")
    try:
        reference = run_steps(solo, md, 0, 25)
    finally:
        solo.terminate()
        solo.freeInstance()
    a = slave(md, unzipped, "a")
    b = slave(md, unzipped, "b", params={**PARAMS, "wheelset.speed": 60.0 / 3.6,
                                          "contact.creep_model": 0})
    try:
        rows_a, rows_b = [], []
        for k in range(25):
            rows_a.append(run_steps(a, md, k, k + 1)[0])
            rows_b.append(run_steps(b, md, k, k + 1)[0])
        assert np.array_equal(np.array(rows_a), reference)
        assert not np.array_equal(np.array(rows_b), reference)
    finally:
        for s in (a, b):
            s.terminate()
            s.freeInstance()


def test_nan_input_discards_step_with_logged_error(md, unzipped):
    log = FmiLog()
    s = slave(md, unzipped, "nan", log=log)
    try:
        run_steps(s, md, 0, 3)
        before = s.getReal(vrs(md, COMPARED))
        s.setReal(vrs(md, ["axlebox.left.force.y"]), [math.nan])
        with pytest.raises(FMICallException) as info:
            s.doStep(currentCommunicationPoint=3 * H, communicationStepSize=H)
        assert info.value.status == 2          # fmi2Discard (pythonfmu: do_step -> False)
        errors = [m for st, cat, m in log.messages if st == 3]
        assert any("axlebox.left.force.y" in m and "not finite" in m for m in errors), log.messages
        assert s.getReal(vrs(md, COMPARED)) == before          # state unchanged
        s.setReal(vrs(md, ["axlebox.left.force.y"]), [math.inf])
        with pytest.raises(FMICallException):
            s.doStep(currentCommunicationPoint=3 * H, communicationStepSize=H)
        run_steps(s, md, 3, 5)                 # good inputs again: it goes on
    finally:
        s.terminate()
        s.freeInstance()


@pytest.mark.parametrize("bad, expected", [
    ({"wheel.profile": "no-such-profile"}, "no-such-profile"),
    ({"rail.profile": "/nonexistent/rail.txt"}, "rail.txt"),
    ({"contact.friction_coefficient": 5.0}, "out of range"),
    ({"track.scenario": "nowhere"}, "nowhere"),
])
def test_bad_parameter_is_logged_and_steps_discarded(md, unzipped, bad, expected):
    # the native front end: fmi2ExitInitializationMode returns fmi2Error with the
    # reason logged, and the instance stays in the error state (doStep refused)
    log = FmiLog()
    s = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier="Wheelset",
                  instanceName="bad")
    s.instantiate(loggingOn=True, callbacks=log.callbacks)
    try:
        set_values(s, md, {name: value for name, value in PARAMS.items() if name not in bad})
        if "contact.friction_coefficient" in bad:
            # outside its declared [0, 2]: refused at the set already (fmi2Error,
            # the value kept so that initialization fails too)
            with pytest.raises(FMICallException) as info:
                set_values(s, md, bad)
            assert info.value.status == 3
            assert any("contact.friction_coefficient = 5.0 is outside its declared range [0, 2]"
                       in m for st, cat, m in log.messages if st == 3), log.messages
        else:
            set_values(s, md, bad)
        s.setupExperiment(startTime=0.0)
        s.enterInitializationMode()
        with pytest.raises(FMICallException) as info:
            s.exitInitializationMode()
        assert info.value.status == 3          # fmi2Error
        assert any(expected in m for st, cat, m in log.messages if st == 3), log.messages
        with pytest.raises(FMICallException) as info:
            s.doStep(currentCommunicationPoint=0.0, communicationStepSize=H)
        assert info.value.status == 3          # not allowed in the error state
        assert any("fmi2DoStep" in m and "error" in m for st, cat, m in log.messages if st == 3)
    finally:
        s.freeInstance()


def test_c_host_matches_fmpy(fmu, md, unzipped, tmp_path):
    exe = compile_c_host(tmp_path)
    # no environment set-up: the FMU finds its Python from its resources
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "PYTHONPATH", "PYTHONHOME", "LD_LIBRARY_PATH")}
    n, names = 100, COMPARED[:6]
    by_name = {v.name: v.valueReference for v in md.modelVariables}
    lateral = 3000.0
    args = [str(exe), unzipped, md.guid, repr(H), str(n),
            f"s:{by_name['wheel.profile']}=LMA-worn", f"s:{by_name['rail.profile']}=CHN60",
            f"r:{by_name['wheelset.speed']}={SPEED!r}",
            f"r:{by_name['axlebox.left.force.y']}={lateral!r}",
            f"r:{by_name['axlebox.right.force.y']}={lateral!r}"]
    args += [f"o:{by_name[c]}" for c in names]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=180,
                          cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    c_rows = np.array([[float(x) for x in line.split()] for line in proc.stdout.splitlines()])
    result = fmpy.simulate_fmu(unzipped, stop_time=n * H, output_interval=H, output=names,
                               start_values={"wheel.profile": "LMA-worn",
                                             "rail.profile": "CHN60", "wheelset.speed": SPEED,
                                             "axlebox.left.force.y": lateral,
                                             "axlebox.right.force.y": lateral})
    py_rows = np.column_stack([result["time"]] + [result[c] for c in names])
    assert c_rows.shape == py_rows.shape
    assert_close(c_rows[:, 1:], py_rows[:, 1:], rtol=1e-12)
    assert np.any(c_rows[1:, 1] != 0.0)
