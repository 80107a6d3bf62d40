"""The host matrix of docs/hosts.md, kept true: the FMU with its DEFAULT
parameters (nothing set by the host, the String parameters at their start
values) in every host the package registries give, each run 10 times in a new
process with an empty environment (`env -i PATH=/usr/bin:/bin HOME=...`):
every run must exit 0 and its outputs after 1 s (1 ms steps) equal FMPy's
within 1e-9 relative (the same FMU and core; only the importer differs).

* libcosim (libcosimpy; FMI Library inside), with a last-value observer,
  which reads every variable after every step (Strings too);
* Ecos (ecospy);
* FMPy in a virtual environment with only `pip install fmpy` (no scipy,
  numba or anything of this project: the FMU adds its recorded site-packages);
* the project's C host tests/c_host/host.c (dlopen and the FMI 2.0 C API, like
  a Modelica tool's or Simulink's import).

fmusim (the FMI project's reference importer) is not on the registries: it is
run by hand (tests/hosts/fmusim_by_hand.sh, results in docs/hosts.md).
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

fmpy = pytest.importorskip("fmpy")
from fmpy import read_model_description  # noqa: E402
from conftest import compile_c_host  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HOSTS = ROOT / "tests" / "hosts"
RUNS = 10
STOP, H = 1.0, 1e-3
READ = ["wheelset.distance", "wheelset.y", "wheelset.z", "wheelset.yaw", "wheel.left.Q",
        "wheel.right.Q", "wheel.left.Y", "contact.left.point[1].normal_force",
        "contact.right.point[1].lateral_force"]


def empty_environment():
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")}
    for key in ("WHEELSET_FMU_CACHE", "XDG_CACHE_HOME"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


@pytest.fixture(scope="module")
def reference(wheelset_fmu):
    """FMPy in this process: the default parameters, 1 s of 1 ms steps."""
    result = fmpy.simulate_fmu(wheelset_fmu, stop_time=STOP, output_interval=H, output=READ)
    return {name: np.asarray(result[name], dtype=float) for name in ["time", *READ]}


def assert_equal_to_fmpy(got, reference, steps, label):
    for name in READ:
        want = float(reference[name][steps])
        # 1e-9 relative: only the importer differs
        assert float(got[name]) == pytest.approx(want, rel=1e-9, abs=1e-12), (label, name)


def runs_of(command, label):
    """RUNS runs of `command` in an empty environment: their RESULT lines."""
    results = []
    for k in range(RUNS):
        proc = subprocess.run(command, env=empty_environment(), capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, f"{label} run {k}: exit {proc.returncode}\n{proc.stderr[-3000:]}"
        line = next(l for l in proc.stdout.splitlines() if l.startswith("RESULT "))
        results.append(json.loads(line[len("RESULT "):]))
    return results


def test_libcosim_with_default_parameters(wheelset_fmu, reference):
    if importlib.util.find_spec("libcosimpy") is None:
        pytest.skip("libcosimpy not installed")
    for got in runs_of([sys.executable, str(HOSTS / "run_libcosim.py"), wheelset_fmu, "{}",
                        json.dumps(READ)], "libcosim"):
        assert_equal_to_fmpy(got, reference, int(round(STOP / H)), "libcosim")


def test_ecos_with_default_parameters(wheelset_fmu, reference):
    if importlib.util.find_spec("ecospy") is None:
        pytest.skip("ecospy not installed")
    for got in runs_of([sys.executable, str(HOSTS / "run_ecos.py"), wheelset_fmu, "{}",
                        json.dumps(READ)], "Ecos"):
        # Ecos accumulates its time in steps of 1e-3 and may stop one step short
        steps = int(round(got["time"] / H))
        assert steps in (999, 1000)
        assert_equal_to_fmpy(got, reference, steps, "Ecos")


def test_fmpy_without_the_projects_packages(plain_fmpy_python, wheelset_fmu, reference):
    for got in runs_of([plain_fmpy_python, str(HOSTS / "run_fmpy.py"), wheelset_fmu, repr(STOP),
                        json.dumps(READ)], "FMPy (plain venv)"):
        assert got["time"] == pytest.approx(STOP, abs=1e-12)
        assert_equal_to_fmpy(got, reference, int(round(STOP / H)), "FMPy (plain venv)")


def test_the_projects_c_host(wheelset_fmu_unzipped, reference, tmp_path):
    exe = compile_c_host(tmp_path)
    md = read_model_description(wheelset_fmu_unzipped)
    vr = {v.name: v.valueReference for v in md.modelVariables}
    steps = int(round(STOP / H))
    command = [str(exe), wheelset_fmu_unzipped, md.guid, repr(H), str(steps),
               *[f"o:{vr[name]}" for name in READ]]
    for k in range(RUNS):
        proc = subprocess.run(command, env=empty_environment(), capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, f"C host run {k}: exit {proc.returncode}\n{proc.stderr[-3000:]}"
        last = [line for line in proc.stdout.splitlines() if line and line[0].isdigit()][-1]
        values = [float(x) for x in last.split()]
        assert values[0] == pytest.approx(STOP, abs=1e-9)
        assert_equal_to_fmpy(dict(zip(READ, values[1:])), reference, steps, "C host")
