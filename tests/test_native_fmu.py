"""The FMU's native FMI 2.0 front end in real hosts.

* the plain C host of tests/c_host (dlopen + the FMI C API, like a Modelica
  tool's or Simulink's FMU import), run with NO environment set-up: 20 runs
  that free, dlclose and return from main; the legal resource URI forms; an
  instance name with printf directives; wrong GUID; missing interpreter;
  unknown profile; NaN input -> fmi2Discard, restore, retry;
* FMPy (a Python host: the FMU joins its interpreter) with a foreign `solver`
  package first on sys.path, and two builds of the FMU in one process;
* the model description a co-simulation master relies on.

All use the session's one built FMU (tests/conftest.py) except the second
build of the two-builds test.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

fmpy = pytest.importorskip("fmpy")
from fmpy import read_model_description  # noqa: E402
from conftest import compile_c_host  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
H = 1e-3
GRAVITY = 9.81          # solver.dynamics.rhs.GRAVITY

pytestmark = pytest.mark.fmu        # the session's FMU in C hosts, and FMUs built here


@pytest.fixture(scope="session")
def md(wheelset_fmu):
    return read_model_description(wheelset_fmu)


@pytest.fixture(scope="session")
def vr(md):
    return {v.name: v.valueReference for v in md.modelVariables}


@pytest.fixture(scope="session")
def host(tmp_path_factory):
    return compile_c_host(tmp_path_factory.mktemp("c_host"))


def clean_environment(**extra):
    """What a user's desktop host has: no LD_PRELOAD, PYTHONPATH, PYTHONHOME."""
    env = {"PATH": "/usr/bin:/bin"}
    if "HOME" in os.environ:
        env["HOME"] = os.environ["HOME"]        # the per-user numba cache copy
    for key in ("WHEELSET_FMU_CACHE", "XDG_CACHE_HOME"):
        if key in os.environ:
            env[key] = os.environ[key]
    env.update(extra)
    return env


def run_host(host, unzipped, guid, args, options=(), n=3, env=None, cwd=None):
    cmd = [host, *options, unzipped, guid, repr(H), str(n), *args]
    return subprocess.run(cmd, env=env or clean_environment(), capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def rows(stdout):
    return np.array([[float(x) for x in line.split()] for line in stdout.splitlines()
                     if line and line[0].isdigit()])


def test_c_host_twenty_runs_without_environment(host, wheelset_fmu_unzipped, md, vr):
    # the FMU finds its Python from resources/wheelset_native.cfg; every run
    # frees the instance, dlcloses the library and returns from main: exit 0
    # each time (pythonfmu's binary crashed at exit in 13 of 20)
    args = [f"o:{vr['wheelset.distance']}", f"o:{vr['wheelset.y']}", f"o:{vr['wheel.left.Q']}"]
    outputs = []
    for run in range(20):
        proc = run_host(host, wheelset_fmu_unzipped, md.guid, args, n=2)
        assert proc.returncode == 0, f"run {run}: exit {proc.returncode}\n{proc.stderr[-3000:]}"
        outputs.append(proc.stdout)
    assert len(set(outputs)) == 1          # the same numbers every run
    table = rows(outputs[0])
    # travelled distance = V t exactly (default speed 27.78 m/s; floating point only)
    speed = float(next(v.start for v in md.modelVariables if v.name == "wheelset.speed"))
    assert table[:, 1] == pytest.approx(speed * table[:, 0], rel=1e-12, abs=1e-15)


def test_c_host_uri_forms_and_format_characters(host, wheelset_fmu_unzipped, md, vr, tmp_path):
    # file:/p, file://localhost/p and a percent-encoded path with a space all name
    # the same resources; an instance name full of printf directives is logged
    # literally (every message goes to the host's logger through "%s")
    spaced = tmp_path / "FMU dir %41"
    shutil.copytree(wheelset_fmu_unzipped, spaced)
    args = [f"o:{vr['wheelset.distance']}", f"o:{vr['wheel.left.Q']}"]
    reference = run_host(host, wheelset_fmu_unzipped, md.guid, args)
    assert reference.returncode == 0, reference.stderr[-2000:]
    name = "%s%n%s%n%x"
    for form, where in (("single", wheelset_fmu_unzipped), ("localhost", wheelset_fmu_unzipped),
                        ("encoded", str(spaced))):
        proc = run_host(host, where, md.guid, args, options=("--uri", form, "--name", name))
        assert proc.returncode == 0, f"{form}: {proc.stderr[-2000:]}"
        assert proc.stdout == reference.stdout, form
        assert f"[{name}]" in proc.stderr and f"{name}: solver imported" not in proc.stdout
    assert "%20" in run_host(host, str(spaced), md.guid, args, options=("--uri", "encoded")).stderr


def test_c_host_wrong_guid_and_missing_interpreter(host, wheelset_fmu_unzipped, md, vr):
    args = [f"o:{vr['wheelset.y']}"]
    proc = run_host(host, wheelset_fmu_unzipped, "{not-this-fmu}", args)
    assert proc.returncode == 3, proc.stderr                   # fmi2Instantiate returned NULL
    assert "GUID {not-this-fmu} does not match" in proc.stderr
    proc = run_host(host, wheelset_fmu_unzipped, md.guid, args,
                    env=clean_environment(WHEELSET_FMU_LIBPYTHON="/nonexistent/libpython3.so"))
    assert proc.returncode == 3, proc.stderr
    assert "/nonexistent/libpython3.so does not exist" in proc.stderr
    # not a loadable library: a clear reason, never a crash
    proc = run_host(host, wheelset_fmu_unzipped, md.guid, args,
                    env=clean_environment(WHEELSET_FMU_LIBPYTHON=str(Path(md_path(wheelset_fmu_unzipped)))))
    assert proc.returncode == 3, proc.stderr
    assert "cannot load the Python runtime" in proc.stderr


def md_path(unzipped):
    return Path(unzipped) / "modelDescription.xml"


def test_c_host_unknown_profile_is_an_error(host, wheelset_fmu_unzipped, md, vr):
    proc = run_host(host, wheelset_fmu_unzipped, md.guid,
                    [f"s:{vr['wheel.profile']}=no-such-wheel", f"o:{vr['wheelset.y']}"])
    assert proc.returncode == 2, proc.stderr
    assert "fmi2ExitInitializationMode failed with status 3" in proc.stderr
    assert "no-such-wheel" in proc.stderr


def test_c_host_nan_input_discarded_then_restored(host, wheelset_fmu_unzipped, md, vr):
    # NaN input -> fmi2Discard, outputs unchanged, fmi2Terminated false; after
    # fmi2SetFMUstate and a finite input the step is fmi2OK, fmi2Terminated false
    lateral = vr["axlebox.left.force.y"]
    proc = run_host(host, wheelset_fmu_unzipped, md.guid,
                    [f"r:{lateral}=3000.0", f"o:{vr['wheelset.y']}", f"o:{vr['wheel.left.Q']}"],
                    options=("--nan-test", str(lateral)))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "nan-step status 2" in proc.stdout and "retry status 0" in proc.stdout
    assert "terminated 0" in proc.stdout
    assert "axlebox.left.force.y = nan" in proc.stderr
    table = rows(proc.stdout)
    assert np.isfinite(table).all() and table[-1, 0] == pytest.approx(4 * H)


def test_inputs_in_initialization_mode_give_the_static_equilibrium(host, wheelset_fmu_unzipped,
                                                                  md, vr):
    # axle-box loads set before fmi2ExitInitializationMode are those of the static
    # equilibrium: each wheel carries m g / 2 + the box load at t = 0 and keeps it
    # (was 8.9 kN -> 106 kN swing when the load arrived as a step at t = 0)
    load = 50.0e3                                  # N per axle box, downwards
    mass = float(next(v.start for v in md.modelVariables if v.name == "wheelset.mass"))
    static = mass * GRAVITY / 2.0 + load
    proc = run_host(host, wheelset_fmu_unzipped, md.guid,
                    [f"r:{vr['axlebox.left.force.z']}={-load!r}",
                     f"r:{vr['axlebox.right.force.z']}={-load!r}",
                     f"o:{vr['wheel.left.Q']}", f"o:{vr['wheel.right.Q']}"], n=5)
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = rows(proc.stdout)
    # 1 %: the required tolerance; straight track, symmetric: both wheels alike
    assert table[:, 1:] == pytest.approx(static, rel=0.01)


# ---------------------------------------------------------------------------
FOREIGN_HOST = r"""
import json, sys
import fmpy
import solver                                   # the host's own package called solver
assert solver.FOREIGN, solver.__file__
path_before = list(sys.path)
modules_before = set(sys.modules)
# twice: each call extracts the FMU to a new temporary folder and deletes it after
for _ in range(2):
    result = fmpy.simulate_fmu(sys.argv[1], stop_time=0.01, output_interval=1e-3,
                               output=["wheelset.distance", "wheel.left.Q"])
assert list(sys.path) == path_before, "the FMU changed sys.path"
assert sys.modules["solver"] is solver, "the FMU replaced the host's solver module"
assert "pythonfmu" not in set(sys.modules) - modules_before, "the FMU imported a top-level pythonfmu"
own = sorted({m.split(".")[0] for m in set(sys.modules) - modules_before if m.startswith("wheelset_fmu_")})
print(json.dumps({"distance": result["wheelset.distance"].tolist(),
                  "Q": result["wheel.left.Q"].tolist(), "packages": own}))
"""


def test_fmpy_with_a_foreign_solver_package(wheelset_fmu, tmp_path):
    foreign = tmp_path / "host_code" / "solver"
    foreign.mkdir(parents=True)
    (foreign / "__init__.py").write_text("FOREIGN = True\n")
    (foreign / "wheelset.py").write_text("raise ImportError('the host solver was imported')\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "host_code"))
    proc = subprocess.run([sys.executable, "-c", FOREIGN_HOST, wheelset_fmu], env=env,
                          capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    import json
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(out["packages"]) == 1
    assert out["distance"][-1] == pytest.approx(27.78 * 0.01, rel=1e-12)


def _build_variant(tmp_path, speed):
    """A second build whose only difference is the default forward speed."""
    src = tmp_path / "variant"
    for name in ("fmu_wheelset", "solver", "profiles", "scenarios"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    shutil.copy2(ROOT / "build_fmu.py", src / "build_fmu.py")
    table = src / "fmu_wheelset" / "fmu" / "variables.py"
    text = table.read_text()
    old = '"m/s", 0.0, 150.0, core="speed"),'
    assert text.count(old) == 1
    table.write_text(text.replace(old, f'"m/s", 0.0, 150.0, core="speed", start={speed!r}),'))
    out = tmp_path / "Variant.fmu"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, str(src / "build_fmu.py"), "--out", str(out)], check=True,
                   cwd=str(src), env=env, capture_output=True, timeout=300)
    return str(out)


def test_two_builds_in_one_process_give_their_own_results(wheelset_fmu, tmp_path):
    variant = _build_variant(tmp_path, 20.0)
    names = []
    for fmu in (wheelset_fmu, variant):
        with zipfile.ZipFile(fmu) as z:
            cfg = z.read("resources/wheelset_native.cfg").decode()
        names.append(next(line.split("=", 1)[1] for line in cfg.splitlines()
                          if line.startswith("package=")))
    assert names[0] != names[1]
    # both in this process, interleaved: distance = V t with each build's own default
    from fmpy.fmi2 import FMU2Slave
    slaves = []
    for i, fmu in enumerate((wheelset_fmu, variant)):
        d = tmp_path / f"unzipped{i}"
        with zipfile.ZipFile(fmu) as z:
            z.extractall(d)
        m = read_model_description(fmu)
        s = FMU2Slave(guid=m.guid, unzipDirectory=str(d), modelIdentifier="Wheelset",
                      instanceName=f"build{i}")
        s.instantiate()
        s.setupExperiment(startTime=0.0)
        s.enterInitializationMode()
        s.exitInitializationMode()
        ref = next(v.valueReference for v in m.modelVariables if v.name == "wheelset.distance")
        slaves.append((s, ref))
    try:
        for k in range(5):
            for s, _ in slaves:
                s.doStep(currentCommunicationPoint=k * H, communicationStepSize=H)
        distances = [s.getReal([ref])[0] for s, ref in slaves]
    finally:
        for s, _ in slaves:
            s.terminate()
            s.freeInstance()
    assert distances[0] == pytest.approx(27.78 * 5 * H, rel=1e-12)
    assert distances[1] == pytest.approx(20.0 * 5 * H, rel=1e-12)


# ---------------------------------------------------------------------------
def test_model_description_for_a_cosimulation_master(md):
    outputs = [v for v in md.modelVariables if v.causality == "output"]
    assert all(v.initial == "calculated" for v in outputs)
    assert {u.variable.name for u in md.outputs} == {v.name for v in outputs}
    deps = {u.variable.name: {d.name for d in u.dependencies} for u in md.outputs}
    inputs = {v.name for v in md.modelVariables if v.causality == "input"}
    # state outputs do not feed through; contact outputs depend on their own rail only
    for name in ("wheelset.y", "wheelset.yaw", "wheelset.velocity.y", "axlebox.left.position.z",
                 "axlebox.right.velocity.y", "wheelset.distance", "status.derailment"):
        assert deps[name] == set(), name
    left = deps["wheel.left.Q"]
    assert "rail.left.vertical_displacement" in left and "rail.left.vertical_velocity" in left
    assert not any(n.startswith("rail.right.") for n in left)
    assert not any(n.startswith(("axlebox.", "axle.")) for n in set().union(*deps.values()))
    assert set().union(*deps.values()) <= inputs
    names = {v.name for v in md.modelVariables}
    assert "benchmark.skip_core" not in names
    # the model choices are Integer parameters (libcosim and Ecos ignore Enumerations:
    # tests/hosts/enumerations_by_hand.py), one value per registered model, each
    # item named in the description
    from fmu_wheelset.fmu.registries import ENUMERATIONS
    by = {v.name: v for v in md.modelVariables}
    for name, kind in (("contact.creep_model", "CreepModel"), ("contact.model", "ContactModel"),
                       ("contact.geometry", "ContactGeometry"),
                       ("solver.integrator", "Integrator")):
        items = ENUMERATIONS[kind][1]
        assert by[name].type == "Integer"
        assert (int(by[name].min), int(by[name].max)) == (0, len(items) - 1)
        assert all(f"{i} {item}" in by[name].description for i, (_, item, _) in enumerate(items))
    assert all(v.type != "Enumeration" for v in md.modelVariables)


def _after_three_steps(md, unzipped, name):
    """An FMPy instance of the FMU, initialized with its defaults, after three
    doSteps of H (the caller terminates and frees it)."""
    from fmpy.fmi2 import FMU2Slave
    s = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier="Wheelset",
                  instanceName=name)
    s.instantiate()
    s.setupExperiment(startTime=0.0)
    s.enterInitializationMode()
    s.exitInitializationMode()
    for k in range(3):
        s.doStep(currentCommunicationPoint=k * H, communicationStepSize=H)
    return s


def test_direct_feedthrough_of_rail_motion(md, wheelset_fmu_unzipped):
    # a host moving the left rail down and reading before the next doStep sees the
    # left wheel's load fall at once (less penetration, Hertz) and nothing else move
    by = {v.name: v.valueReference for v in md.modelVariables}
    s = _after_three_steps(md, wheelset_fmu_unzipped, "feedthrough")
    try:
        read = [by[n] for n in ("wheel.left.Q", "wheel.right.Q", "wheelset.z", "wheelset.y")]
        before = s.getReal(read)
        rail = [by["rail.left.vertical_displacement"]]
        s.setReal(rail, [-2.0e-6])                    # 2 um down
        moved = s.getReal(read)
        s.setReal(rail, [0.0])
        back = s.getReal(read)
    finally:
        s.terminate()
        s.freeInstance()
    assert moved[0] < before[0] - 10.0                  # N: Hertz, dQ ~ 1.5 Q / delta * 2 um
    assert moved[1:] == before[1:]                      # right wheel and the state: unchanged
    # the same inputs give the record of the step again (same kernel, same state)
    assert back == pytest.approx(before, rel=1e-12, abs=1e-9)


def test_c_host_directional_derivative_equals_fmpy(host, wheelset_fmu_unzipped, md, vr):
    """fmi2GetDirectionalDerivative from a plain C host (embedded interpreter)
    after 3 steps equals FMPy's at the same state bit for bit (the same
    deterministic evaluation); in the out-of-process mode it is fmi2Error with
    the reason logged, not a wrong number."""
    z, u = vr["wheel.left.force_on_rail.z"], vr["rail.left.vertical_displacement"]
    proc = run_host(host, wheelset_fmu_unzipped, md.guid, [f"o:{z}"],
                    options=("--derivative", f"{z}:{u}"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = [x for x in proc.stdout.splitlines() if x.startswith("derivative ")]
    c_value = float(line[0].split()[1])
    s = _after_three_steps(md, wheelset_fmu_unzipped, "fmpy_derivative")
    try:
        fmpy_value = s.getDirectionalDerivative([z], [u], [1.0])[0]
    finally:
        s.terminate()
        s.freeInstance()
    assert c_value == fmpy_value
    assert c_value < -1e8                 # N/m: rail down, less load (Hertz)
    remote = run_host(host, wheelset_fmu_unzipped, md.guid, [f"o:{z}"],
                      options=("--derivative", f"{z}:{u}"),
                      env=clean_environment(WHEELSET_FMU_OUT_OF_PROCESS="1"))
    assert remote.returncode == 2
    assert "not available out of process" in remote.stderr
