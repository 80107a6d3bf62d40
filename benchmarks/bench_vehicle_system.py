"""The vehicle as a system of five FMUs (docs/vehicle.md): the cost of a 1 ms
vehicle step in libcosim, Ecos and the project's own master, each as a ratio
to the four wheelset cores' own 1 ms steps added up, measured in one run on
this machine (absolute times move 2x between the shared machines), and where
the time goes: the wheelset FMU's doStep, the vehicle-bodies FMU's doStep
(native front end and, for the choice of front end, the same step in a
pythonfmu build), each master's own share.

The case: straight track at 30 m/s, every wheelset released 3 mm off the
centreline (SSP case straight-3mm), 2 s in 1 ms steps; the cores alone: one
wheelset core (solver.model.WheelsetModel.advance_vector) under the static
axle-box load, released 3 mm off the centreline, times four.

Target: libcosim's vehicle step <= 1.25 x the four cores' steps.

usage: PYTHONPATH=. python benchmarks/bench_vehicle_system.py [--fmu Wheelset.fmu] [--duration 2]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TARGET = 1.25


def cpu_name() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def core_step_us(n: int = 2000) -> float:
    """One wheelset core's 1 ms step (us), loaded, released 3 mm off centre."""
    from cosim.vehicle.parameters import GRAVITY, VehicleParameters
    from solver.model.outputs import WheelsetInputs
    from solver.model.parameters import WheelsetParameters
    from solver.model.wheelset import WheelsetModel
    p = VehicleParameters()
    load = (p.carbody_mass / 2 + p.bogie_mass) * GRAVITY / 4
    model = WheelsetModel(WheelsetParameters(speed=30.0, initial_lateral=0.003))
    u = model.input_vector(WheelsetInputs(axle_box_force=[[0, 0, -load], [0, 0, -load]]))
    model.initialize(u)
    for _ in range(50):
        model.advance_vector(1e-3, u)
    t0 = time.perf_counter()
    for _ in range(n):
        model.advance_vector(1e-3, u)
    return (time.perf_counter() - t0) / n * 1e6


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


def fmu_step_us(fmu: str, inputs: dict, outputs: list, start: dict, n: int = 2000) -> float:
    """fmi2SetReal (inputs) + fmi2DoStep + fmi2GetReal (outputs) of one FMU in
    FMPy (us per step, constant inputs)."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave
    md = read_model_description(fmu)
    vr = {v.name: v.valueReference for v in md.modelVariables}
    unzipped = extract(fmu)
    s = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier=md.coSimulation.modelIdentifier,
                  instanceName="bench")
    s.instantiate()
    for name, value in start.items():
        (s.setBoolean if isinstance(value, bool) else s.setString if isinstance(value, str)
         else s.setReal)([vr[name]], [value])
    in_refs = [vr[k] for k in inputs]
    in_values = list(inputs.values())
    out_refs = [vr[k] for k in outputs]
    s.setReal(in_refs, in_values)
    s.setupExperiment(startTime=0.0)
    s.enterInitializationMode()
    s.exitInitializationMode()
    t = 0.0
    for _ in range(20):
        s.setReal(in_refs, in_values); s.doStep(t, 1e-3); s.getReal(out_refs); t += 1e-3
    t0 = time.perf_counter()
    for _ in range(n):
        s.setReal(in_refs, in_values)
        s.doStep(t, 1e-3)
        s.getReal(out_refs)
        t += 1e-3
    us = (time.perf_counter() - t0) / n * 1e6
    s.terminate()
    s.freeInstance()
    return us


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
    args = parser.parse_args()
    from fmu_wheelset.vehicle_fmu.build import build_vehicle_fmu
    from fmu_wheelset.vehicle_fmu.system import write_vehicle_ssp
    from fmu_wheelset.vehicle_fmu.variables import N_IO, VARIABLES
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
    core = core_step_us()
    four = 4 * core
    print(f"the wheelset core's own 1 ms step: {core:.1f} us; four cores: {four:.1f} us")
    rows = []
    for master in ("libcosim", "ecos"):
        r = master_run(master, ssp, "straight-3mm", args.duration)
        rows.append((master + " (SSP)", r["wall"] / r["steps"] * 1e6))
    from cosim.vehicle.curve_layout import CurveLayout
    from cosim.vehicle.master import VehicleCosim
    for coupling in ("jacobi", "interface"):
        with VehicleCosim(fmu, speed=30.0, layout=CurveLayout(), coupling=coupling, record_every=10,
                          fmu_parameters={"wheelset.initial_lateral": 0.003}) as vc:
            r = vc.run(args.duration)
        rows.append((f"project master, {coupling}", r.wall_time / r.steps * 1e6))
    for name, us in rows:
        ratio = us / four
        verdict = f" (target <= {TARGET:g}: {'MET' if ratio <= TARGET else 'NOT MET'})" \
            if name.startswith("libcosim") else ""
        print(f"  {name:32s} {us:8.1f} us per vehicle step = {ratio:.2f} x the four cores{verdict}")
    # where the time goes: each FMU's step in FMPy (set inputs, doStep, get outputs)
    kin = [0.0, 1.0, 0.46, 0, 0, 0, 0.0, -1.0, 0.46, 0, 0, 0] * 4
    inputs = {v.name: x for v, x in zip(VARIABLES[:48], kin)}
    outputs = [v.name for v in VARIABLES[48:N_IO]]
    native = fmu_step_us(str(bodies), inputs, outputs, {})
    try:
        python = fmu_step_us(pythonfmu_bodies(folder), inputs, outputs, {})
    except Exception as exc:  # noqa: BLE001 - reported, the rest stands
        python = float("nan")
        print(f"  pythonfmu build of the bodies failed: {type(exc).__name__}: {exc}")
    from cosim.vehicle.master import wheelset_parameters
    from cosim.vehicle.parameters import GRAVITY, VehicleParameters
    p = VehicleParameters()
    load = (p.carbody_mass / 2 + p.bogie_mass) * GRAVITY / 4
    w_inputs = {f"axlebox.{s}.force.{a}": (-load if a == "z" else 0.0) for s in ("left", "right")
                for a in "xyz"}
    w_inputs.update({"track.curvature": 0.0, "track.cant_angle": 0.0})
    w_outputs = [f"axlebox.{s}.{q}.{a}" for s in ("left", "right") for q in ("position", "velocity")
                 for a in "xyz"] + ["wheel.left.Q", "wheel.right.Q", "wheel.left.Y", "wheel.right.Y"]
    start = {k: v for k, v in wheelset_parameters(p, 30.0).items()}
    start["wheelset.initial_lateral"] = 0.003
    wheelset = fmu_step_us(fmu, w_inputs, w_outputs, start)
    print(f"  per FMU (FMPy: set inputs, doStep, get outputs): wheelset FMU {wheelset:.1f} us "
          f"({wheelset / core:.2f} x its core); bodies FMU, native front end {native:.1f} us, "
          f"pythonfmu {python:.1f} us ({python / native:.0f} x)")
    for name, us in rows:
        share = us - 4 * wheelset - native
        print(f"  {name:32s} beyond four wheelset FMU steps and one bodies step: {share:7.1f} us")


if __name__ == "__main__":
    main()
