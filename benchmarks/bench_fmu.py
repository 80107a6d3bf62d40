"""Benchmark of the wheelset FMU through FMPy.

* instantiate + initialize in a NEW process with a NEW extraction directory:
  cold (empty numba cache), warm (cache filled), and without the stable solver
  copy (WHEELSET_FMU_CACHE=off: numba's cache is keyed by the source path, so
  every fresh extraction compiles again);
* the Ren & Jin scenario (track ren-jin-r400, LMA-worn on CHN60, 100 km/h,
  the vehicle of solver.scenarios 'ren-jin-r400-100') for 10 s with 1 ms
  communication steps through fmpy.simulate_fmu: wall time, real-time factor,
  (a) recording the outputs a coupled host reads every step (COUPLING_OUTPUTS:
  axle-box kinematics, wheel forces on the rails, Y, Q, Y/Q, active points) --
  the figure of the target -- and (b) recording all 128 outputs;
* the same steps on the core directly (WheelsetModel.advance_vector, what the
  slave calls), hence the share of the FMI layer (FMPy + the native front end + the slave);
* the plain C host of tests/c_host (a Modelica/Simulink-like importer with no
  Python of its own) reading ALL outputs after every 1 ms doStep, twice: the
  fast doStep (the numba cfunc the front end calls, solver/model/fast_step.py) and
  the Python step (WHEELSET_FMU_FAST_STEP=0); its per-step cost against the
  core's own step (goal <= 1.15x) and its real-time factor (goal >= 30x); then the same C host with the Rosenbrock integrator as the core's
  speed figures run it (solver.integrator 4, internal step 10 ms, tolerance
  1e-4) at 10 ms communication steps. Wall and CPU time (process
  time) are printed: on a loaded machine the CPU figures are the ones to compare.

usage: python benchmarks/bench_fmu.py [--fmu dist/Wheelset.fmu] [--duration 10]
       [--no-instantiation] [--c-host-only]
"""
from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

H = 1e-3
SPEED = 100.0 / 3.6
# the vehicle of solver.scenarios 'ren-jin-r400-100', as FMU parameters
REN_JIN = {
    "wheel.profile": "LMA-worn", "rail.profile": "CHN60", "track.gauge": 1.435,
    "rail.inclination": math.atan(1.0 / 40.0), "wheelset.back_to_back": 1.353,
    "wheel.nominal_rolling_radius": 0.43, "wheelset.mass": 1600.0,
    "wheelset.inertia.x": 660.0, "wheelset.inertia.y": 160.0, "wheelset.inertia.z": 600.0,
    "contact.friction_coefficient": 0.3, "contact.creep_model": 2, "contact.model": 1,
    "wheelset.speed": SPEED, "track.scenario": "ren-jin-r400", "suspension.builtin": True,
    "suspension.stiffness.x": 31.391e6, "suspension.stiffness.z": 1.22e6,
    "suspension.damping.x": 15e3, "suspension.damping.z": 4e3,
    "suspension.suspended_mass": 12400.0, "contact.damping": 1e5,
    # the scenario's own track (solver/scenarios.py): rigid, no Hunt & Crossley term
    "track.model": 0, "contact.hunt_crossley": 0.0,
}

# what a host coupling the wheelset to a bogie and a track model reads every step
COUPLING_OUTPUTS = (
    [f"axlebox.{s}.{q}.{a}" for s in ("left", "right") for q in ("position", "velocity")
     for a in "xyz"]
    + [f"wheel.{s}.force_on_rail.{a}" for s in ("left", "right") for a in "xyz"]
    + [f"wheel.{s}.{q}" for s in ("left", "right") for q in ("Y", "Q", "Y_over_Q", "active_points")]
    + ["wheelset.y", "wheelset.yaw"])

INSTANTIATE = r"""
import json, shutil, sys, tempfile, time, zipfile
fmu, params = sys.argv[1], json.loads(sys.argv[2])
t0 = time.perf_counter()
from fmpy import read_model_description
from fmpy.fmi2 import FMU2Slave
md = read_model_description(fmu)
by = {v.name: v for v in md.modelVariables}
d = tempfile.mkdtemp(prefix="wheelset_bench_")
zipfile.ZipFile(fmu).extractall(d)
t1 = time.perf_counter()
s = FMU2Slave(guid=md.guid, unzipDirectory=d, modelIdentifier="Wheelset", instanceName="bench")
s.instantiate()
for name, value in params.items():
    v = by[name]
    if v.type == "Real": s.setReal([v.valueReference], [float(value)])
    elif v.type in ("Integer", "Enumeration"): s.setInteger([v.valueReference], [int(value)])
    elif v.type == "Boolean": s.setBoolean([v.valueReference], [bool(value)])
    else: s.setString([v.valueReference], [str(value)])
s.setupExperiment(startTime=0.0); s.enterInitializationMode(); s.exitInitializationMode()
t2 = time.perf_counter()
s.doStep(0.0, 1e-3)
t3 = time.perf_counter()
print(json.dumps({"prepare": t1 - t0, "init": t2 - t1, "first_step": t3 - t2}))
s.terminate(); s.freeInstance(); shutil.rmtree(d, ignore_errors=True)
"""


def instantiate_once(fmu: str, cache: str | None) -> dict:
    import json
    env = dict(os.environ)
    if cache is not None:
        env["WHEELSET_FMU_CACHE"] = cache
    out = subprocess.run([sys.executable, "-c", INSTANTIATE, fmu, json.dumps(REN_JIN)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_instantiation(fmu: str):
    print("instantiate + initialize (new process, new extraction directory each time)")
    with tempfile.TemporaryDirectory(prefix="wheelset_cache_") as cache:
        cold = instantiate_once(fmu, cache)
        warm = [instantiate_once(fmu, cache) for _ in range(2)]
    best = min(warm, key=lambda r: r["init"])
    print(f"  cold (empty numba cache)        : {cold['init']:6.2f} s  "
          f"(+ first doStep {cold['first_step']:.2f} s)")
    print(f"  warm (stable per-version cache) : {best['init']:6.2f} s  "
          f"(+ first doStep {best['first_step']:.3f} s; runs: "
          + ", ".join(f"{r['init']:.2f}" for r in warm) + ")")
    off = instantiate_once(fmu, "off")
    print(f"  without the stable copy (WHEELSET_FMU_CACHE=off, fresh extraction): "
          f"{off['init']:6.2f} s (+ first doStep {off['first_step']:.2f} s)")


def simulate(fmu: str, duration: float, extra=None, output=None):
    import fmpy
    t0 = time.perf_counter()
    result = fmpy.simulate_fmu(fmu, stop_time=duration, output_interval=H,
                               start_values={**REN_JIN, **(extra or {})}, output=output)
    return time.perf_counter() - t0, result


def core_run(duration: float):
    """The FMU's per-step core call: advance_vector (outputs in model.record)."""
    from solver.model.outputs import WheelsetInputs
    from solver.model.wheelset import WheelsetModel
    params = _core_parameters()
    warm = WheelsetModel(params)            # compiles (or loads) the kernels untimed
    warm.initialize()
    warm.advance_vector(H, warm.input_vector(WheelsetInputs()))
    model = WheelsetModel(params)
    model.initialize()
    n = int(round(duration / H))
    u = model.input_vector(WheelsetInputs())
    t, t0, c0 = 0.0, time.perf_counter(), time.process_time()
    for k in range(n):
        t_next = (k + 1) * H
        r = model.advance_vector(t_next - t, u)
        if r.status != "ok":
            raise RuntimeError(f"core discarded the step at t = {t:g} s: {r.message}")
        t = t_next
    return time.perf_counter() - t0, time.process_time() - c0, model


# the Rosenbrock integrator as benchmarks/bench_speed.py measures the core with it
ROSENBROCK = {"solver.integrator": 4, "solver.internal_step": 0.01, "solver.tolerance": 1e-4}
ROSENBROCK_STEP = 0.01


def c_host_args(md, values=None) -> list:
    """host.c arguments setting REN_JIN (or `values`) and reading every output each step."""
    by = {v.name: v for v in md.modelVariables}
    args = []
    for name, value in (REN_JIN if values is None else values).items():
        v = by[name]
        code = {"Real": "r", "Integer": "I", "Boolean": "B", "String": "s"}[v.type]
        value = int(value) if v.type in ("Integer", "Boolean") else value
        args.append(f"{code}:{v.valueReference}={value!r}" if v.type == "Real"
                    else f"{code}:{v.valueReference}={value}")
    for v in md.modelVariables:
        if v.causality == "output":
            args.append({"Real": "o", "Integer": "i", "Boolean": "b"}[v.type] + f":{v.valueReference}")
    return args


GOAL_RATIO = 1.15        # C host step / core step (target)
GOAL_REAL_TIME = 30.0    # real-time factor of the C host (target)


def c_host_section(fmu: str, duration: float, core_wall: float, core_cpu: float, tmp: str):
    """The plain C host of tests/c_host (no Python of its own: the FMU embeds it)
    reading ALL outputs (getReal + getInteger + getBoolean) after every 1 ms doStep,
    with the fast doStep and with the Python step (WHEELSET_FMU_FAST_STEP=0)."""
    import shutil
    import zipfile
    import fmpy
    from fmpy import read_model_description
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        print("  C host: no C compiler, skipped")
        return
    exe = Path(tmp) / "host"
    subprocess.run([cc, "-O2", "-o", str(exe), str(ROOT / "tests" / "c_host" / "host.c"),
                    f"-I{Path(fmpy.__file__).parent / 'c-code'}", "-ldl", "-lm"], check=True)
    unzipped = Path(tmp) / "c_host_fmu"
    with zipfile.ZipFile(fmu) as z:
        if "resources/wheelset_native.cfg" not in z.namelist():
            print("  C host: skipped (pythonfmu's binary needs LD_PRELOAD/PYTHONPATH)")
            return
        z.extractall(unzipped)
    md = read_model_description(fmu)
    n = int(round(duration / H))
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LD_PRELOAD", "WHEELSET_FMU_FAST_STEP")}
    print(f"  plain C host (tests/c_host/host.c, no environment), all outputs read every step "
          f"(core's own step: {core_wall / n * 1e6:.1f} us wall, {core_cpu / n * 1e6:.1f} us CPU; "
          f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores):")
    for label, extra in (("fast doStep (cfunc)", {}),
                         ("Python step (WHEELSET_FMU_FAST_STEP=0)", {"WHEELSET_FMU_FAST_STEP": "0"})):
        proc = subprocess.run([str(exe), "--timing", str(unzipped), md.guid, repr(H), str(n),
                               *c_host_args(md)], capture_output=True, text=True,
                              env={**env, **extra})
        if proc.returncode != 0:
            raise RuntimeError(f"C host failed: {proc.stderr[-2000:]}")
        line = next(l for l in proc.stderr.splitlines() if l.startswith("stepping"))
        wall = float(re.search(r"([0-9.]+) s wall", line).group(1))
        cpu = float(re.search(r"([0-9.]+) s CPU", line).group(1))
        what = line.split(" CPU, ", 1)[1]
        print(f"    {label}:")
        for kind, value, core in (("wall", wall, core_wall), ("CPU ", cpu, core_cpu)):
            ratio, factor = value / core, duration / value
            print(f"      {kind}: {value / n * 1e6:6.1f} us per step = {ratio:.3f}x the core's step "
                  f"(goal <= {GOAL_RATIO}: {'met' if ratio <= GOAL_RATIO else 'NOT met'}), "
                  f"{factor:.1f}x real time (goal >= {GOAL_REAL_TIME:g}: "
                  f"{'met' if factor >= GOAL_REAL_TIME else 'NOT met'})")
        print(f"      ({what})")
    n = int(round(duration / ROSENBROCK_STEP))
    proc = subprocess.run([str(exe), "--timing", str(unzipped), md.guid, repr(ROSENBROCK_STEP),
                           str(n), *c_host_args(md, {**REN_JIN, **ROSENBROCK})],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"C host failed: {proc.stderr[-2000:]}")
    line = next(l for l in proc.stderr.splitlines() if l.startswith("stepping"))
    wall = float(re.search(r"([0-9.]+) s wall", line).group(1))
    cpu = float(re.search(r"([0-9.]+) s CPU", line).group(1))
    print(f"  plain C host, fast doStep, Rosenbrock ({ROSENBROCK}), {n} communication steps of "
          f"{ROSENBROCK_STEP * 1e3:g} ms, all outputs read every step: {duration / wall:.1f}x real "
          f"time wall, {duration / cpu:.1f}x CPU")


def _core_parameters():
    from solver.model.parameters import WheelsetParameters
    p = REN_JIN
    return WheelsetParameters(
        wheel_profile=p["wheel.profile"], rail_profile=p["rail.profile"], gauge=p["track.gauge"],
        rail_inclination=p["rail.inclination"], back_to_back=p["wheelset.back_to_back"],
        nominal_radius=p["wheel.nominal_rolling_radius"], mass=p["wheelset.mass"],
        inertia_roll=p["wheelset.inertia.x"], inertia_spin=p["wheelset.inertia.y"],
        inertia_yaw=p["wheelset.inertia.z"], friction=p["contact.friction_coefficient"],
        creep_model="polach", contact_model="multipoint", speed=p["wheelset.speed"],
        track=p["track.scenario"], bogie=True,
        suspended_mass=p["suspension.suspended_mass"], contact_damping=p["contact.damping"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fmu", help="an FMU to use (default: build one in a temporary folder)")
    parser.add_argument("--duration", type=float, default=10.0, help="simulated time (s)")
    parser.add_argument("--no-instantiation", action="store_true",
                        help="skip the cold/warm instantiation measurements")
    parser.add_argument("--c-host-only", action="store_true",
                        help="only the core and the plain C host (fast doStep and Python step)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="wheelset_bench_fmu_") as tmp:
        fmu = args.fmu
        if fmu is None:
            from fmu_wheelset.packaging.build import build_fmu
            fmu = str(build_fmu(Path(tmp) / "Wheelset.fmu", quiet=True))
        print(f"FMU: {fmu}")
        if not (args.no_instantiation or args.c_host_only):
            bench_instantiation(fmu)

        n = int(round(args.duration / H))
        print(f"\nRen & Jin: ren-jin-r400, LMA-worn/CHN60, 100 km/h, {args.duration:g} s, "
              f"{n} communication steps of 1 ms (fmpy.simulate_fmu)")
        simulate(fmu, 0.01)                                    # warm-up (imports, compile)
        fixed, _ = simulate(fmu, 0.01)      # extraction + instantiation + initialisation (+10 steps)
        core_wall, core_cpu, model = core_run(args.duration)
        print(f"  core directly (advance_vector): {core_wall:6.2f} s wall, "
              f"{core_wall / n * 1e6:.0f} us/step, {args.duration / core_wall:.1f}x real time; "
              f"{core_cpu / n * 1e6:.0f} us/step CPU")
        if args.c_host_only:
            c_host_section(fmu, args.duration, core_wall, core_cpu, tmp)
            return 0
        result = None
        for label, output in ((f"{len(COUPLING_OUTPUTS)} coupling outputs recorded", list(COUPLING_OUTPUTS)),
                              ("all outputs recorded", None)):
            wall, res = simulate(fmu, args.duration, output=output)
            result = res if output is None else result
            stepping = wall - fixed
            share = (stepping - core_wall) / stepping
            print(f"  FMU through FMPy, {label}:")
            print(f"    end to end     : {wall:6.2f} s wall, {args.duration / wall:.2f}x real time "
                  f"(incl. {fixed:.2f} s extraction + instantiation + initialisation)")
            print(f"    stepping only  : {stepping:6.2f} s wall, {args.duration / stepping:.2f}x real "
                  f"time, {stepping / n * 1e6:.0f} us per step; FMI layer {100 * share:.0f} % "
                  f"({(stepping - core_wall) / n * 1e6:.0f} us/step: FMPy, the front end, the slave)")
        print(f"    end: y = {result['wheelset.y'][-1] * 1e3:.2f} mm, "
              f"Y/Q right {result['wheel.right.Y_over_Q'][-1]:.3f}, "
              f"left {result['wheel.left.Y_over_Q'][-1]:.3f}, contact points "
              f"{result['wheel.left.active_points'][-1]} / {result['wheel.right.active_points'][-1]}")
        c_host_section(fmu, args.duration, core_wall, core_cpu, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
