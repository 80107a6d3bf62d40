"""The vehicle as a system of five FMUs (docs/vehicle.md): the cost of a 1 ms
vehicle step in libcosim, Ecos and the project's own master, each as a ratio
to the four wheelset cores' own 1 ms steps added up, measured in one run on
this machine (absolute times move 2x between the shared machines), and where
the time goes: the wheelset FMU's doStep, the vehicle-bodies FMU's doStep
(native front end and, for the choice of front end, the same step in a
pythonfmu build), each master's own share.

The case: straight track at 30 m/s, every wheelset released 3 mm off the
centreline (SSP case straight-3mm), 2 s in 1 ms steps; the cores alone: four
wheelset cores (solver.model.WheelsetModel.advance_vector) fed the box
forces the wheelset FMUs received in the project master's run of the case,
so that they go through the same motion.

Target: libcosim's vehicle step <= 1.25 x the four cores' steps.

usage: PYTHONPATH=. python benchmarks/bench_vehicle_system.py [--fmu Wheelset.fmu] [--duration 2]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from fmu_wheelset.validation.report import cpu_name  # noqa: E402

TARGET = 1.25




def recorded_run(fmu: str, duration: float):
    """The project master's run of the case (jacobi): the box forces it sent the
    four wheelset FMUs at every step (n, 4, 6) and the vehicle data."""
    from cosim.vehicle.curve_layout import CurveLayout
    from cosim.vehicle.master import VehicleCosim
    with VehicleCosim(fmu, speed=30.0, layout=CurveLayout(), coupling="jacobi", record_every=1,
                      fmu_parameters={"wheelset.initial_lateral": 0.003}) as vc:
        r = vc.run(duration)
        return r.box_force[:r.steps], vc.p


def cores_step_us(box, p) -> float:
    """The four wheelset cores' own 1 ms steps added up (us per vehicle step) on
    the recorded motion: the box forces replayed into four cores
    (solver.model.WheelsetModel.advance_vector, no FMI layer)."""
    from solver.model.outputs import WheelsetInputs
    from solver.model.parameters import WheelsetParameters
    from solver.model.wheelset import WheelsetModel
    jx, jy, jz = p.wheelset_inertia
    total = 0.0
    for j in range(4):
        model = WheelsetModel(WheelsetParameters(
            speed=30.0, mass=p.wheelset_mass, inertia_roll=jx, inertia_spin=jy, inertia_yaw=jz,
            nominal_radius=p.wheel_radius, axle_box_semi_spacing=p.primary_semi_spacing,
            initial_lateral=0.003))
        inputs = [model.input_vector(WheelsetInputs(axle_box_force=box[n, j].reshape(2, 3),
                                                    curvature=0.0, cant_angle=0.0))
                  for n in range(len(box))]
        model.initialize(inputs[0])
        t0 = time.perf_counter()
        for u in inputs:
            model.advance_vector(1e-3, u)
        total += time.perf_counter() - t0
    return total / len(box) * 1e6


def wheelset_fmus_step_us(fmu: str, box, p) -> float:
    """The four wheelset FMUs' steps added up (us per vehicle step) on the same
    recorded motion, called as the project master calls them (fmi2SetReal of
    the 8 inputs, fmi2DoStep, fmi2GetReal of the 12 kinematics, through ctypes
    on preset arrays: cosim.vehicle.fmu_wheelsets.FmuWheelset)."""
    from fmpy import read_model_description
    from cosim.vehicle.fmu_wheelsets import (INPUT_NAMES, KINEMATICS_NAMES, RECORD_NAMES,
                                             FmuWheelset, extracted)
    from cosim.vehicle.master import wheelset_parameters
    unzipped = extracted(fmu)
    md = read_model_description(unzipped)
    total = 0.0
    params = wheelset_parameters(p, 30.0)
    params["wheelset.initial_lateral"] = 0.003
    for j in range(4):
        inputs = np.zeros(len(INPUT_NAMES))
        inputs[0:6] = box[0, j]
        kin = np.zeros(len(KINEMATICS_NAMES))
        rec = np.zeros(len(RECORD_NAMES))
        w = FmuWheelset(unzipped, md, f"bench{j}", params, inputs, kin, rec)
        try:
            t = 0.0
            t0 = time.perf_counter()
            for n in range(len(box)):
                inputs[0:6] = box[n, j]
                w.step(t, 1e-3)
                w.read_kinematics()
                t += 1e-3
            total += time.perf_counter() - t0
        finally:
            w.close()
    return total / len(box) * 1e6


def bodies_fmu_step_us(fmu: str, n: int = 3000) -> float:
    """One vehicle-bodies FMU step (us): fmi2SetReal of the 48 kinematics,
    fmi2DoStep, fmi2GetReal of the 24 box forces and 8 track values, through
    ctypes on preset arrays (the wheelsets held at rest: the step's work does
    not depend on the motion)."""
    import ctypes
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave, fmi2ValueReference
    md = read_model_description(fmu)
    by = {v.name: v.valueReference for v in md.modelVariables}
    names = [v.name for v in md.modelVariables]
    kin_names = [x for x in names if ".axlebox." in x and (".position." in x or ".velocity." in x)]
    out_names = [x for x in names if ".force." in x or ".track." in x]
    s = FMU2Slave(guid=md.guid, unzipDirectory=extract(fmu),
                  modelIdentifier=md.coSimulation.modelIdentifier, instanceName="bench")
    s.instantiate()
    s.setupExperiment(startTime=0.0)
    s.enterInitializationMode()
    s.exitInitializationMode()
    kin = np.tile([0.0, 1.0, 0.46, 0, 0, 0, 0.0, -1.0, 0.46, 0, 0, 0], 4)
    out = np.zeros(len(out_names))
    dp = ctypes.POINTER(ctypes.c_double)
    in_refs = (fmi2ValueReference * len(kin_names))(*[by[x] for x in kin_names])
    out_refs = (fmi2ValueReference * len(out_names))(*[by[x] for x in out_names])
    set_real, do_step, get_real = s.dll.fmi2SetReal, s.dll.fmi2DoStep, s.dll.fmi2GetReal
    c = s.component
    t = 0.0
    for _ in range(20):
        set_real(c, in_refs, len(kin_names), kin.ctypes.data_as(dp))
        do_step(c, ctypes.c_double(t), ctypes.c_double(1e-3), 1)
        t += 1e-3
    t0 = time.perf_counter()
    for _ in range(n):
        set_real(c, in_refs, len(kin_names), kin.ctypes.data_as(dp))
        assert do_step(c, ctypes.c_double(t), ctypes.c_double(1e-3), 1) == 0
        get_real(c, out_refs, len(out_names), out.ctypes.data_as(dp))
        t += 1e-3
    us = (time.perf_counter() - t0) / n * 1e6
    s.terminate()
    s.freeInstance()
    return us


def master_run(master: str, ssp: str, case: str, duration: float) -> dict:
    """Wall time of a whole run of the system in a master, in its own process
    (the stepping only: loading and initialization excluded)."""
    code = r"""
import json, os, sys, tempfile, time, zipfile
master, ssp, case, duration = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
folder = tempfile.mkdtemp(); zipfile.ZipFile(ssp).extractall(folder)
suffix = "" if case == "benchmark" else "-" + case
if master == "libcosim":
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    log_output_level(CosimLogLevel.ERROR)
    ex = CosimExecution.from_ssp_file(os.path.join(folder, "SystemStructure" + suffix + ".ssd"))
    ex.step(1)
    t0 = time.perf_counter(); assert ex.simulate_until(int(round((duration + 1e-3) * 1e9))); wall = time.perf_counter() - t0
else:
    import ctypes
    ctypes.CDLL(os.path.join(sys.prefix, "lib", "libtbb.so.12"), mode=ctypes.RTLD_GLOBAL)
    from ecospy.EcosSimulation import EcosSimulation
    with EcosSimulation(ssp_path=folder, step_size=1e-3) as sim:
        sim.init(parameter_set=case); sim.step(1)
        t0 = time.perf_counter(); sim.step(int(round(duration / 1e-3))); wall = time.perf_counter() - t0
        sim.terminate()
print("RESULT " + json.dumps({"wall": wall, "steps": int(round(duration / 1e-3))}))
"""
    proc = subprocess.run([sys.executable, "-c", code, master, ssp, case, str(duration)],
                          capture_output=True, text=True, timeout=1800)
    line = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
    if not line:
        raise RuntimeError(f"{master}: {proc.stderr[-2000:]}")
    return json.loads(line[0][len("RESULT "):])


PYTHONFMU_SLAVE = '''
import sys
sys.path.insert(0, {root!r})
import numpy as np
from pythonfmu import Fmi2Causality, Fmi2Slave, Real
from cosim.vehicle import body_step as bs
from cosim.vehicle.bodies import VehicleModel
from cosim.vehicle.curve_layout import CurveLayout
from cosim.vehicle.parameters import VehicleParameters

NAMES = {names!r}


class VehicleBodiesPy(Fmi2Slave):
    """The same bodies step behind pythonfmu's binary (benchmark only)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.io = np.zeros(bs.N_IO)
        for i, name in enumerate(NAMES):
            causality = Fmi2Causality.input if i < 48 else Fmi2Causality.output
            self.register_variable(Real(name, causality=causality,
                                        getter=lambda i=i: float(self.io[i]),
                                        setter=(lambda v, i=i: self.io.__setitem__(i, v))
                                        if i < 48 else None))
        self.model = VehicleModel(VehicleParameters())
        self.work = bs.set_up(self.model, CurveLayout(), 30.0, 1e-3, bs.JACOBI)
        bs.initial_outputs(self.model, CurveLayout(), self.work, self.io)

    def do_step(self, current_time, step_size):
        return bs.bodies_step(current_time, step_size, self.io, self.work) == bs.STEP_OK
'''


def pythonfmu_bodies(folder: Path) -> str:
    """VehicleBodiesPy.fmu: bodies_step behind pythonfmu 0.7.0's binary."""
    from pythonfmu import FmuBuilder
    from fmu_wheelset.vehicle_fmu.variables import N_IO, VARIABLES
    script = folder / "vehicle_bodies_py.py"
    script.write_text(PYTHONFMU_SLAVE.format(root=str(ROOT), names=[v.name for v in VARIABLES[:N_IO]]))
    return str(FmuBuilder.build_FMU(script, dest=folder))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fmu", help="Wheelset.fmu (default: build one)")
    parser.add_argument("--duration", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from fmu_wheelset.vehicle_fmu.build import build_vehicle_fmu
    from fmu_wheelset.vehicle_fmu.system import write_vehicle_ssp
    folder = Path(tempfile.mkdtemp(prefix="bench-vehicle-system-"))
    fmu = args.fmu
    if fmu is None:
        from fmu_wheelset.packaging.build import build_fmu
        fmu = str(build_fmu(folder / "Wheelset.fmu", quiet=True))
    bodies = build_vehicle_fmu(folder / "VehicleBodies.fmu")
    ssp = str(write_vehicle_ssp(folder / "vehicle.ssp", fmu, bodies))
    print(f"CPU: {cpu_name()} ({os.cpu_count()} logical cores), load average "
          f"{os.getloadavg()[0]:.1f}; {args.duration:g} s of straight-3mm in 1 ms steps")
    # warm-up: numba caches of the bodies and the wheelset core in the per-user caches
    master_run("libcosim", ssp, "straight-3mm", 0.05)
    from cosim.vehicle.curve_layout import CurveLayout
    from cosim.vehicle.master import VehicleCosim
    python_bodies = pythonfmu_bodies(folder)
    box, p = recorded_run(fmu, args.duration)
    best = {}

    def keep(name, value):
        best[name] = min(best.get(name, math.inf), value)
    for _ in range(args.repeat):      # interleaved, best of each: the load of the machine moves
        keep("cores", cores_step_us(box, p))
        for master in ("libcosim", "ecos"):
            r = master_run(master, ssp, "straight-3mm", args.duration)
            keep(master + " (SSP)", r["wall"] / r["steps"] * 1e6)
        for coupling in ("jacobi", "interface"):
            with VehicleCosim(fmu, speed=30.0, layout=CurveLayout(), coupling=coupling, record_every=10,
                              fmu_parameters={"wheelset.initial_lateral": 0.003}) as vc:
                r = vc.run(args.duration)
            keep(f"project master, {coupling}", r.wall_time / r.steps * 1e6)
        keep("wheelset FMUs", wheelset_fmus_step_us(fmu, box, p))
        keep("bodies FMU, native", bodies_fmu_step_us(str(bodies)))
        keep("bodies FMU, pythonfmu", bodies_fmu_step_us(python_bodies))
    four = best["cores"]
    print(f"the four wheelset cores' own 1 ms steps on this motion: {four:.1f} us ({four / 4:.1f} us each)")
    for name in ("libcosim (SSP)", "ecos (SSP)", "project master, jacobi", "project master, interface"):
        us = best[name]
        ratio = us / four
        verdict = f" (target <= {TARGET:g}: {'MET' if ratio <= TARGET else 'NOT MET'})" \
            if name.startswith("libcosim") else ""
        print(f"  {name:28s} {us:8.1f} us per vehicle step = {ratio:.2f} x the four cores{verdict}")
    fmus = best["wheelset FMUs"]
    native, python = best["bodies FMU, native"], best["bodies FMU, pythonfmu"]
    print(f"  where the time goes: the four wheelset FMUs' steps (set, doStep, get) {fmus:.1f} us "
          f"({fmus / four:.2f} x their cores); the bodies FMU's step {native:.1f} us with the native "
          f"front end, {python:.1f} us with pythonfmu ({python / native:.1f} x)")
    for name in ("libcosim (SSP)", "ecos (SSP)", "project master, jacobi", "project master, interface"):
        share = best[name] - fmus - native
        print(f"  {name:28s} beyond the five FMU steps called one after the other: {share:+7.1f} us"
              f"{' (negative: FMUs stepped in parallel on the 2 cores)' if share < 0 else ''}")


if __name__ == "__main__":
    main()
