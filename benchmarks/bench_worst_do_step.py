"""The worst-case wall time of ONE fmi2DoStep of the wheelset FMU (the bound
docs/limits_and_failures.md states): solver.max_substeps at its declared
maximum (100 000 internal steps), for the defaults (Rosenbrock, Polach, multipoint)
and for the costliest choices (FaStrip with RK45 and with the Rosenbrock
integrator at a tolerance no step meets, so that every one of the 100 000
attempts is made). Each doStep runs in FMPy (the native front end in this
process); its wall and CPU time are printed, and the cost per internal step.

usage: python benchmarks/bench_worst_do_step.py [--fmu dist/Wheelset.fmu]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASES = {
    "defaults (Rosenbrock, Polach, multipoint)": {},
    "FaStrip, RK45, tolerance 1e-12": {"contact.creep_model": 4, "solver.integrator": 3,
                                       "solver.tolerance": 1e-12},
    "FaStrip, Rosenbrock, tolerance 1e-12": {"contact.creep_model": 4, "solver.integrator": 4,
                                             "solver.tolerance": 1e-12},
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fmu", help="the FMU (default: build one into a temporary folder)")
    args = parser.parse_args(argv)
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave
    from fmpy.fmi1 import FMICallException
    with tempfile.TemporaryDirectory(prefix="bench_worst_") as tmp:
        fmu = args.fmu
        if fmu is None:
            from fmu_wheelset.packaging.build import build_fmu
            fmu = str(build_fmu(Path(tmp) / "Wheelset.fmu", quiet=True))
        md = read_model_description(fmu)
        by = {v.name: v for v in md.modelVariables}
        limit = int(by["solver.max_substeps"].max)
        internal = 1e-4
        unzipped = extract(fmu, unzipdir=str(Path(tmp) / "x"))
        print(f"solver.max_substeps declared at most {limit}; one doStep of {limit * internal:g} s "
              f"with internal steps of {internal:g} s")
        for label, values in CASES.items():
            s = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier="Wheelset",
                          instanceName="worst")
            s.instantiate()
            values = {**values, "solver.max_substeps": limit, "solver.internal_step": internal}
            for name, value in values.items():
                var = by[name]
                {"Real": s.setReal, "Integer": s.setInteger}[var.type]([var.valueReference], [value])
            s.setupExperiment(startTime=0.0)
            s.enterInitializationMode()
            s.exitInitializationMode()
            s.doStep(0.0, 1e-3)                    # compiled and warm
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                s.doStep(1e-3, limit * internal)
                status = "ok"
            except FMICallException as exc:
                status = f"status {exc.status}"
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            s.freeInstance()
            print(f"  {label:40s} {wall:7.1f} s wall, {cpu:7.1f} s CPU ({status}), "
                  f"{1e6 * cpu / limit:6.1f} us CPU per internal step")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
