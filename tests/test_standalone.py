"""The self-contained FMU (build_fmu.py --standalone): a Python runtime of its
own in resources/wheelset_python (fmu_wheelset/packaging/standalone.py).

What these tests can check with what pip installs: the interpreter record names
no path of the build machine; the project's C host runs the FMU from a moved
extraction under an environment that names other Pythons and a hostile
PYTHONPATH (isolation: nothing of it is imported, the outputs equal FMPy's on
the ordinary FMU within 1e-9 relative), on "another CPU" it installs the generic
numba cache and compiles nothing; a Python host (FMPy) runs it in a worker
process of the FMU's own runtime, with the same outputs. That the FMU runs with
every Python directory of the machine hidden needs root (a mount namespace):
tests/hosts/standalone_by_hand.py, results in docs/hosts.md.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

fmpy = pytest.importorskip("fmpy")
from fmpy import read_model_description  # noqa: E402

from fmu_wheelset.fmu import cache as fmu_cache  # noqa: E402
from fmu_wheelset.packaging.standalone import RUNTIME_DIR, check_interpreter  # noqa: E402
from conftest import compile_c_host  # noqa: E402

pytestmark = pytest.mark.fmu        # builds the self-contained FMU

ROOT = Path(__file__).resolve().parent.parent
STOP, H = 1.0, 1e-3
READ = ["wheelset.distance", "wheelset.y", "wheelset.z", "wheelset.yaw", "wheel.left.Q",
        "wheel.right.Q", "wheel.left.Y", "contact.left.point[1].normal_force",
        "contact.right.point[1].lateral_force"]
START = {"wheelset.initial_lateral": 0.003}      # a wheelset that moves: every output changes


@pytest.fixture(scope="module")
def standalone_fmu(wheelset_fmu, tmp_path_factory):
    # after the session's ordinary FMU: its build has compiled both numba targets
    # into the per-user cache, so this build only collects (measured: 33 s)
    problem = check_interpreter()
    if problem:
        pytest.skip(f"this interpreter cannot be bundled: {problem}")
    from fmu_wheelset.packaging.build import build_fmu
    return str(build_fmu(tmp_path_factory.mktemp("standalone") / "Wheelset.fmu", quiet=True,
                         standalone=True))


@pytest.fixture(scope="module")
def reference(wheelset_fmu):
    """The ORDINARY FMU in FMPy in this process (the project's environment: its
    numpy, scipy, numba), 1 s of 1 ms steps."""
    result = fmpy.simulate_fmu(wheelset_fmu, stop_time=STOP, output_interval=H, output=READ,
                               start_values=START)
    return np.array([[row[name] for name in ["time", *READ]] for row in result])


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    return compile_c_host(tmp_path_factory.mktemp("c_host_standalone"))


def max_relative_difference(rows: np.ndarray, reference: np.ndarray) -> float:
    assert rows.shape == reference.shape, (rows.shape, reference.shape)
    scale = np.maximum(np.abs(reference), 1e-12 / 1e-9)    # abs 1e-12 below 1e-3 of magnitude
    return float(np.max(np.abs(rows - reference) / scale))


def test_record_and_runtime(standalone_fmu):
    with zipfile.ZipFile(standalone_fmu) as z:
        names = z.namelist()
        config = z.read("resources/wheelset_native.cfg").decode()
    values = dict(line.split("=", 1) for line in config.splitlines() if "=" in line and not line.startswith("#"))
    assert values["standalone"] == "1" and values["runtime"] == RUNTIME_DIR
    # no path of the build machine: every path relative to the runtime
    for key in ("libpython", "home", "site_packages", "worker", "preload"):
        for path in filter(None, values[key].split(",")):
            assert not path.startswith("/") and ".." not in path.split("/"), (key, path)
    for build_path in {sys.prefix, sys.base_prefix, str(ROOT)}:
        assert build_path not in config
    prefix = f"resources/{RUNTIME_DIR}/"
    assert f"{prefix}{values['libpython']}" in names and f"{prefix}{values['worker']}" in names
    site = f"{prefix}{values['site_packages']}/"
    packages = {n[len(site):].split("/")[0] for n in names if n.startswith(site)}
    assert {"numpy", "scipy", "numba", "llvmlite"} <= packages
    assert not [p for p in packages if p.split("-")[0].split(".")[0] not in ("numpy", "scipy", "numba", "llvmlite")]
    # what the model never imports is left out: tests, C headers, unused scipy subpackages
    assert not [n for n in names if n.startswith(prefix) and ("/tests/" in n or n.endswith(".h"))]
    assert not [n for n in names if n.startswith(f"{site}scipy/stats/") or n.startswith(f"{site}scipy/signal/")]
    # both numba caches
    for variant in fmu_cache.SHIPPED_VARIANTS:
        assert f"resources/{fmu_cache.SHIPPED_CACHE_DIR}/{variant}/{fmu_cache.SHIPPED_MANIFEST}" in names
    # the size aimed at (docs/hosts.md: below 200 MB)
    assert os.path.getsize(standalone_fmu) < 200e6


def hostile_environment(tmp_path: Path) -> tuple[dict, Path]:
    """An environment naming other Pythons and a PYTHONPATH whose sitecustomize,
    numpy and startup file would each leave a marker file when imported."""
    evil = tmp_path / "evil"
    evil.mkdir()
    marker = tmp_path / "imported-from-outside"
    for name in ("sitecustomize.py", "numpy.py", "usercustomize.py", "startup.py"):
        (evil / name).write_text(f"open({str(marker)!r}, 'a').write({name!r})\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"),
           "PYTHONPATH": str(evil), "PYTHONHOME": "/nonexistent/python", "PYTHONSTARTUP": str(evil / "startup.py"),
           "PYTHONNOUSERSITE": "", "PYTHONUSERBASE": str(evil),
           "WHEELSET_FMU_LIBPYTHON": "/nonexistent/libpython3.11.so", "WHEELSET_FMU_PYTHONHOME": "/nonexistent",
           "WHEELSET_FMU_SITE_PACKAGES": str(evil), "WHEELSET_FMU_PYTHON": "/bin/false"}
    (tmp_path / "home").mkdir()
    return env, marker


def run_c_host(host: str, folder: Path, env: dict, start: dict = START) -> tuple[np.ndarray, str]:
    md = read_model_description(str(folder / "modelDescription.xml"))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    command = [host, str(folder), md.guid, repr(H), str(int(round(STOP / H))),
               *[f"s:{vr[name]}={value}" if isinstance(value, str) else f"r:{vr[name]}={value!r}"
                 for name, value in start.items()],
               *[f"o:{vr[name]}" for name in READ]]
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = np.array([[float(x) for x in line.split()] for line in proc.stdout.splitlines()
                     if line and line[0].isdigit()])
    return rows, proc.stderr


def test_c_host_runs_a_moved_extraction_isolated(standalone_fmu, host, reference, tmp_path):
    extracted = tmp_path / "first-place"
    with zipfile.ZipFile(standalone_fmu) as z:
        z.extractall(extracted)
    moved = tmp_path / "moved elsewhere"      # a space too: the paths are the host's URI's
    extracted.rename(moved)
    env, marker = hostile_environment(tmp_path)
    rows, log = run_c_host(host, moved, env)
    assert "embedded Python 3" in log, log[-2000:]
    assert not marker.exists(), f"imported from the environment: {marker.read_text()}"
    # same sources, same package versions, another interpreter instance: within
    # 1e-9 relative (only the runtime differs; measured identical)
    assert max_relative_difference(rows, reference) <= 1e-9


# A loaded wheelset (the Manchester vehicle's, 54.5 kN per wheel) 1 mm off the
# centreline at 30 m/s: its run is smooth in the last bits (an initial y moved by
# 1e-18 m changes y by 4e-11 of itself over the second, measured with the core),
# where the free wheelset of START bounces on its flanges and turns a 1e-18 m
# change into 4e-4 of y: there two targets' roundings could not be compared.
LOADED = {"preset": "loaded-passenger", "wheelset.speed": 30.0, "wheelset.initial_lateral": 0.001}


def test_another_cpu_gets_the_generic_cache_and_compiles_nothing(standalone_fmu, wheelset_fmu, host,
                                                                  tmp_path):
    extracted = tmp_path / "fmu"
    with zipfile.ZipFile(standalone_fmu) as z:
        z.extractall(extracted)
    shipped = extracted / "resources" / fmu_cache.SHIPPED_CACHE_DIR
    path = shipped / fmu_cache.BUILD_CPU_VARIANT / fmu_cache.SHIPPED_MANIFEST
    doc = json.loads(path.read_text())
    doc["cpu"][1] = "skylake-avx512"           # the build machine, as another CPU sees it
    path.write_text(json.dumps(doc))
    env, marker = hostile_environment(tmp_path)
    rows, log = run_c_host(host, extracted, env, LOADED)
    assert "numba target: generic x86-64" in log and "shipped numba cache (generic) installed" in log, log[-2000:]
    # the solver copy holds exactly the generic cache's files: nothing compiled
    entries = list((tmp_path / "home" / ".cache" / "wheelset-fmu").glob("native-solver-*"))
    assert len(entries) == 1
    solver_copy = entries[0] / "solver"
    found = {p.relative_to(solver_copy).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in solver_copy.rglob("*") if p.suffix in (".nbi", ".nbc")}
    generic = json.loads((shipped / fmu_cache.GENERIC_VARIANT / fmu_cache.SHIPPED_MANIFEST).read_text())
    assert found == generic["files"]
    # the generic code gives the same results as this CPU's (the ordinary FMU in
    # FMPy) to rounding: within 1e-9 relative on this smooth run
    result = fmpy.simulate_fmu(wheelset_fmu, stop_time=STOP, output_interval=H, output=READ,
                               start_values=LOADED)
    reference = np.array([[row[name] for name in ["time", *READ]] for row in result])
    # each signal's difference in its largest magnitude (the FMI Cross-Check's rule): the
    # lateral force Y, a small sum of large terms, crosses zero, where a difference
    # relative to the value itself is no measure of rounding
    assert rows.shape == reference.shape
    worst = {name: float(np.abs(rows[:, k] - reference[:, k]).max()
                         / max(np.abs(reference[:, k]).max(), 1e-300))
             for k, name in enumerate(["time", *READ])}
    # the motion to rounding (1e-9); the forces follow it through the Hertz stiffness,
    # dN/N = 1.5 dz/delta with a compression delta of about 60 um: 1e-13 m of rounding in
    # z is 2.5e-9 of the force, so 1e-8 for the forces (measured 2.4e-9, the motion 2.5e-12)
    motion = ("time", "wheelset.distance", "wheelset.y", "wheelset.z", "wheelset.yaw")
    assert max(worst[name] for name in motion) <= 1e-9, worst
    assert max(worst.values()) <= 1e-8, worst


RUN_FMPY = r"""
import json, sys
import numpy as np
from fmpy import simulate_fmu
messages = []
def logger(component, instance, status, category, message):
    messages.append(message.decode() if isinstance(message, bytes) else str(message))
result = simulate_fmu(sys.argv[1], stop_time=float(sys.argv[2]), output_interval=float(sys.argv[3]),
                      output=json.loads(sys.argv[4]), start_values=json.loads(sys.argv[5]),
                      debug_logging=True, logger=logger)
rows = [[float(row[name]) for name in ["time", *json.loads(sys.argv[4])]] for row in result]
print("RESULT " + json.dumps({"rows": rows, "log": messages}))
"""


def test_python_host_runs_it_in_a_worker_of_its_own_runtime(standalone_fmu, reference, tmp_path):
    # FMPy is Python: the FMU's runtime does not join it (another CPython, perhaps
    # another version, with other builds of numpy) but runs in a worker process
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", RUN_FMPY, standalone_fmu, repr(STOP), repr(H),
                           json.dumps(READ), json.dumps(START)], env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(next(line for line in proc.stdout.splitlines()
                             if line.startswith("RESULT "))[len("RESULT "):])
    assert any("runs in the worker process" in m and "self-contained" in m for m in result["log"]), result["log"]
    assert max_relative_difference(np.array(result["rows"]), reference) <= 1e-9
