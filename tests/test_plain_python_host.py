"""A Python host without the FMU's packages: FMPy in a new virtual environment
with only `pip install fmpy` (numpy comes with it; scipy and numba do not),
run with an empty environment (`env -i PATH=/usr/bin:/bin HOME=...`).

The FMU joins the host's interpreter; it used to neither add the site-packages
recorded at build time nor check for them, and fmi2ExitInitializationMode
failed with fmi2Error ("No module named 'scipy'"). Now the recorded
site-packages are appended to the host's sys.path when packages are missing
(same Python version), and what still cannot be imported is a clean
fmi2Instantiate failure naming each missing package and the out-of-process
mode (fmu_wheelset/fmu/native/fmi2_frontend_python.c, BOOTSTRAP).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

fmpy = pytest.importorskip("fmpy")

pytestmark = pytest.mark.fmu        # the FMU in an FMPy-only environment

HERE = Path(__file__).resolve().parent / "hosts"
READ = ["wheelset.distance", "wheelset.y", "wheelset.z", "wheel.left.Q", "wheel.right.Y",
        "contact.left.point[1].normal_force"]
STOP = 0.2


def empty_environment(**extra):
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")}
    for key in ("WHEELSET_FMU_CACHE", "XDG_CACHE_HOME"):
        if key in os.environ:
            env[key] = os.environ[key]
    env.update(extra)
    return env


def run_plain(python, fmu, **extra):
    return subprocess.run([python, str(HERE / "run_fmpy.py"), fmu, repr(STOP), json.dumps(READ)],
                          env=empty_environment(**extra), capture_output=True, text=True,
                          timeout=600)


def result_of(proc):
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    line = next(l for l in proc.stdout.splitlines() if l.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


@pytest.fixture(scope="module")
def reference(wheelset_fmu):
    """FMPy in this session's own environment (which has every package)."""
    result = fmpy.simulate_fmu(wheelset_fmu, stop_time=STOP, output_interval=1e-3, output=READ)
    return {name: float(result[name][-1]) for name in READ}


@pytest.mark.slow       # a new virtual environment and `pip install fmpy`: about 10 s
def test_the_plain_environment_lacks_the_packages(plain_fmpy_python):
    # what the tests below mean: this host really has no scipy and no numba
    code = ("import importlib.util as u; print([m for m in ('numpy', 'scipy', 'numba') "
            "if u.find_spec(m) is None])")
    out = subprocess.run([plain_fmpy_python, "-c", code], env=empty_environment(),
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['scipy', 'numba']"


def test_fmpy_without_the_packages_runs_the_fmu(plain_fmpy_python, wheelset_fmu, reference):
    got = result_of(run_plain(plain_fmpy_python, wheelset_fmu))
    assert got["time"] == pytest.approx(STOP, abs=1e-12)
    for name in READ:
        # 1e-9: the same FMU and core, only the host's environment differs
        assert got[name] == pytest.approx(reference[name], rel=1e-9, abs=1e-12), name


def test_what_cannot_be_found_is_named_with_the_way_out(plain_fmpy_python, wheelset_fmu,
                                                        tmp_path, reference):
    # the recorded site-packages overridden by an empty folder: nothing to add
    empty = tmp_path / "no-packages"
    empty.mkdir()
    proc = run_plain(plain_fmpy_python, wheelset_fmu, WHEELSET_FMU_SITE_PACKAGES=str(empty))
    assert proc.returncode != 0
    text = proc.stdout + proc.stderr
    line = next(l for l in text.splitlines() if "fmi2Instantiate" in l)
    assert "lacks the package(s) the FMU needs" in line
    assert "scipy (ModuleNotFoundError" in line and "numba (ModuleNotFoundError" in line
    assert "numpy" not in line.split("needs:")[1].split(".")[0]       # the host has numpy
    assert "WHEELSET_FMU_OUT_OF_PROCESS=1" in line and str(empty) in line
    # the documented way out: the FMU in its own worker Python (the recorded one)
    got = result_of(run_plain(plain_fmpy_python, wheelset_fmu, WHEELSET_FMU_OUT_OF_PROCESS="1"))
    for name in READ:
        assert got[name] == pytest.approx(reference[name], rel=1e-9, abs=1e-12), name
