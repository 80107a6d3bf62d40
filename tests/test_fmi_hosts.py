"""The wheelset FMU in two real co-simulation hosts from the package index:
libcosim (libcosimpy, the Open Simulation Platform's engine, via FMI Library)
and Ecos (ecospy). Each runs the FMU for 1 s with 1 ms steps and EVERY
parameter set by the host, the model choices (creep model, contact model,
integrator: Integer parameters, since these hosts ignore Enumerations) among
them, in its own process, and String parameters (the profiles) away from their
start, which it reads back; the outputs must equal FMPy's run of the same FMU
with the same values (an independent FMI importer), and the choices must take
effect.
"""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path


import pytest

fmpy = pytest.importorskip("fmpy")
from fmpy import read_model_description  # noqa: E402

HERE = Path(__file__).resolve().parent / "hosts"
READ = ["wheelset.distance", "wheelset.y", "wheelset.yaw", "wheel.left.Q", "wheel.right.Y",
        "contact.left.point[1].lateral_force", "wheel.left.active_points",
        "wheel.right.active_points"]
CHANGED = {"wheelset.speed": 20.0, "contact.creep_model": 1, "contact.model": 0,
           "solver.internal_step": 2.5e-4,
           "solver.integrator": 0, "wheelset.initial_lateral": 0.003,
           # String parameters away from their start (S1002 on UIC60): Ren & Jin's pair
           "wheel.profile": "LMA", "rail.profile": "CHN60"}
# the String parameters the hosts read back after the run (FMPy's result holds no Strings,
# so these are compared with the values the host set)
READ_STRINGS = ["wheel.profile", "rail.profile"]


@pytest.fixture(scope="module")
def every_parameter(wheelset_fmu):
    md = read_model_description(wheelset_fmu)
    values = {v.name: v.start for v in md.modelVariables if v.causality == "parameter"}
    cast = {"Real": float, "Integer": int, "Boolean": lambda x: x in (True, "true", "1", 1),
            "String": str}
    values = {v.name: cast[v.type](values[v.name]) for v in md.modelVariables
              if v.causality == "parameter"}
    values.update(CHANGED)
    return values


def fmpy_reference(fmu, values, stop):
    result = fmpy.simulate_fmu(fmu, stop_time=stop, output_interval=1e-3, step_size=1e-3,
                               start_values=values, output=READ)
    return {name: result[name][-1] for name in READ}, result["time"][-1]


def run_host(script, fmu, values):
    proc = subprocess.run([sys.executable, str(HERE / script), fmu, json.dumps(values),
                           json.dumps(READ + READ_STRINGS)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(l for l in proc.stdout.splitlines() if l.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def check_against_fmpy(got, fmu, values, stop):
    expected, t_end = fmpy_reference(fmu, values, stop)
    assert t_end == pytest.approx(stop, abs=1e-9)
    # 1e-9: the same FMU, the same steps; only the host differs
    for name in READ:
        assert float(got[name]) == pytest.approx(float(expected[name]), rel=1e-9, abs=1e-9), name
    # the host reads back the String parameters it set, unchanged
    for name in READ_STRINGS:
        assert got[name] == values[name], name
    # the choices took effect: single-point contact, and the creep model changes the motion
    assert got["wheel.left.active_points"] <= 1 and got["wheel.right.active_points"] <= 1
    polach, _ = fmpy_reference(fmu, {**values, "contact.creep_model": 2}, stop)
    assert abs(polach["wheelset.y"] - expected["wheelset.y"]) > 1e-7     # m
    # ... and so do the String parameters: the start pair S1002/UIC60 runs differently
    start_pair, _ = fmpy_reference(fmu, {**values, "wheel.profile": "S1002",
                                         "rail.profile": "UIC60"}, stop)
    assert abs(start_pair["wheelset.y"] - expected["wheelset.y"]) > 1e-7  # m
    # distance = V t with the host's speed
    assert got["wheelset.distance"] == pytest.approx(20.0 * stop, rel=1e-12)


def test_libcosim_runs_the_fmu_with_every_parameter(wheelset_fmu, every_parameter):
    if importlib.util.find_spec("libcosimpy") is None:
        pytest.skip("libcosimpy not installed")
    got = run_host("run_libcosim.py", wheelset_fmu, every_parameter)
    check_against_fmpy(got, wheelset_fmu, every_parameter, 1.0)


def test_ecos_runs_the_fmu_with_every_parameter(wheelset_fmu, every_parameter):
    # (not imported here: ecospy loads its library at import, see run_ecos.py)
    if importlib.util.find_spec("ecospy") is None:
        pytest.skip("ecospy not installed")
    got = run_host("run_ecos.py", wheelset_fmu, every_parameter)
    # Ecos accumulates its time in steps of 1e-3 and stops one step short of 1.0
    # (0.999000...): compare at the number of steps it made
    steps = int(round(got["time"] / 1e-3))
    assert steps in (999, 1000)
    check_against_fmpy(got, wheelset_fmu, every_parameter, steps * 1e-3)
