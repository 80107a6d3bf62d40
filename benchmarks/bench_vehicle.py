"""Real-time factor of the vehicle co-simulation: the Manchester
benchmark vehicle 1 over four wheelset FMUs (cosim/vehicle/), 1 ms
communication steps, straight track at 30 m/s after a 30 kN lateral push on the
leading wheelset, S1002/UIC60 1:40, Polach (the FMU's defaults).

Prints, best of `--repeat` runs: the wall time and real-time factor of the
whole run (target >= 5x), and the split per communication step: the four FMU
doSteps (with their fmi2SetReal/fmi2GetReal), the master's own step (the
interface models and bodies, cosim/vehicle/body_step.py), and, for reference, one core
step (`WheelsetModel.advance_vector`) without the FMI layer.

usage: python benchmarks/bench_vehicle.py [--fmu Wheelset.fmu] [--duration 5] [--repeat 3]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET = 5.0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fmu")
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from cosim.vehicle.master import VehicleCosim
    fmu = args.fmu
    if fmu is None:
        from fmu_wheelset.packaging.build import build_fmu
        fmu = str(build_fmu(Path(tempfile.mkdtemp()) / "Wheelset.fmu", quiet=True))
    push = (0, 30e3, 0.05)
    with VehicleCosim(fmu, speed=30.0, perturbation=push) as vc:      # numba caches, warm-up
        vc.run(0.2)
    best = None
    for _ in range(args.repeat):
        with VehicleCosim(fmu, speed=30.0, perturbation=push, record_every=10) as vc:
            result = vc.run(args.duration)
        if best is None or result.wall_time < best.wall_time:
            best = result
    steps = best.steps
    print(f"vehicle, 4 FMUs, h = 1 ms, {args.duration:g} s: wall {best.wall_time:.3f} s, "
          f"real-time factor {best.real_time_factor:.2f} (target >= {TARGET:g}): "
          f"{'MET' if best.real_time_factor >= TARGET else 'NOT MET'}; "
          f"{best.wall_time / steps * 1e6:.0f} us per communication step")

    # the split: the FMU steps alone, the master alone, the core alone
    with VehicleCosim(fmu, speed=30.0) as vc:
        n = 2000
        t = 0.0
        t0 = time.perf_counter()
        for _ in range(n):
            for inst in vc.instances:
                inst.step(t, 1e-3)
                inst.read_kinematics()
            t += 1e-3
        fmu_us = (time.perf_counter() - t0) / n * 1e6
    with VehicleCosim(fmu, speed=30.0, record_every=10) as vc:
        for inst in vc.instances:
            inst.step = lambda t, h: None
            inst.read_kinematics = lambda: None
        master = vc.run(2.0)
    master_us = master.wall_time / master.steps * 1e6
    from solver.model.outputs import WheelsetInputs
    from solver.model.wheelset import WheelsetModel
    from solver.model.parameters import WheelsetParameters
    model = WheelsetModel(WheelsetParameters(speed=30.0))
    u = model.input_vector(WheelsetInputs(axle_box_force=[[0, 0, -48.6e3], [0, 0, -48.6e3]]))
    model.initialize(u)
    for _ in range(200):
        model.advance_vector(1e-3, u)
    t0 = time.perf_counter()
    for _ in range(n):
        model.advance_vector(1e-3, u)
    core_us = (time.perf_counter() - t0) / n * 1e6
    print(f"per communication step: 4 FMU doSteps {fmu_us:.0f} us ({fmu_us / 4:.0f} us each, of "
          f"which the core {core_us:.0f} us), master {master_us:.0f} us "
          f"(incl. recording every 10 steps)")
    print(f"bound from the FMUs alone: {1e3 / fmu_us:.2f}x real time; with the core alone "
          f"(no FMI layer): {1e3 / (4 * core_us + master_us):.2f}x")


if __name__ == "__main__":
    main()
