"""`wheelset-fmu compat OUT/`: compatibility information in the FMI project's
format (the FMI Cross-Check rules of fmi-standard.org).

Three cases of the validation suite, each as one folder
``OUT/fmus/2.0/cs/linux64/wheelset-fmu/<version>/<case>/`` holding

* ``<case>.fmu``: the FMU built with the case's parameters as its start values
  (fmu_wheelset/packaging/build.py ``start_values``: the model description and the
  getters agree), without the shipped numba cache (the Cross-Check rules allow
  10 MB per FMU, the cache alone takes 9.7 MB compressed, and it only serves
  the CPU it was compiled on): the first run on a machine compiles the solver,
  about a minute, later runs reuse the per-user cache;
* ``<case>_in.csv``: the inputs (time, then one column per input; values
  between rows interpolated linearly);
* ``<case>_ref.csv``: the reference outputs, FMPy's run of that FMU with
  those inputs (time, then the outputs, ``%.17g``);
* ``<case>_ref.opt``: StartTime, StopTime, StepSize (the communication step),
  RelTol;
* ``README.md``: what the case is, where its parameters come from, how the
  reference was made.

An importing tool runs the FMU from StartTime to StopTime with communication
steps of StepSize, its inputs from ``_in.csv``, every parameter at its start
value, and compares its outputs with ``_ref.csv``
(``fmpy.cross_check.validate_result``). ``tests/test_compat.py`` does that with
FMPy and libcosim and checks each folder with ``fmpy``'s cross-check validator
and fmu-manipulation-toolbox's ``fmutool -check``; docs/hosts.md lists the
tools and versions run.
"""
from __future__ import annotations

import csv
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Tuple

FMI_TYPE_DIR = ("2.0", "cs", "linux64")
TOOL = "wheelset-fmu"
REL_TOL = 1e-6          # the FMU is deterministic: any importer reproduces it to rounding
OUTPUTS = ("wheelset.y", "wheelset.yaw", "wheelset.z", "wheel.left.Q", "wheel.right.Q",
           "wheel.left.Y", "wheel.right.Y", "wheel.left.Y_over_Q", "wheel.right.Y_over_Q",
           "contact.left.point[1].normal_force", "contact.right.point[1].normal_force")


@dataclass
class Case:
    """One compatibility case: its FMU start values, inputs and run."""
    name: str
    description: str
    source: str                         # where the parameters come from
    start_values: Callable[[], Dict[str, object]]
    stop_time: float
    step: float
    inputs: List[Tuple[float, Dict[str, float]]] = field(default_factory=list)


def _scenario_values(name: str, **overrides) -> Dict[str, object]:
    """The FMU start values of a built-in scenario of solver.scenarios."""
    import dataclasses

    import solver.model as wheelset
    from fmu_wheelset.fmu.variables import start_values_for
    from solver.scenarios import load_scenario
    params = load_scenario(name).params
    if overrides:
        params = dataclasses.replace(params, **overrides)
    values, missing = start_values_for(params, wheelset)
    if missing:
        raise ValueError(f"scenario {name}: the FMU cannot express {'; '.join(missing)}")
    return values


def _pushed_values() -> Dict[str, object]:
    from fmu_wheelset.fmu.presets import load_preset
    return {**load_preset("loaded-passenger"), "wheelset.speed": 30.0}


PUSH = 1.0e4            # N per axle box, lateral (the vehicle test's 10 kN push)
CASES = (
    Case("Wheelset_Klingel",
         "free S1002/UIC60 1:40 wheelset (no suspension) on straight track at 5 m/s, 1 mm "
         "initial lateral offset, Kalker's linear creep: its hunting wavelength against "
         "Klingel's formula (validation case klingel)",
         "solver.scenarios 'straight-klingel' (fmu_wheelset/validation/klingel.py)",
         lambda: _scenario_values("straight-klingel"), 8.0, 0.01,
         [(0.0, {"axle.torque": 0.0}), (8.0, {"axle.torque": 0.0})]),
    Case("Wheelset_RenJin_R400",
         "Ren & Jin (2010): worn LMA wheel on CHN60 1:40 in the R = 400 m curve at 100 km/h "
         "with the built-in primary suspension, multipoint contact: flange-root and flange "
         "two-point contact of the outer wheel (validation case ren_jin multipoint 100)",
         "solver.scenarios 'ren-jin-r400-100' (fmu_wheelset/validation/ren_jin.py)",
         lambda: _scenario_values("ren-jin-r400-100"), 12.0, 0.01,
         [(0.0, {"axle.torque": 0.0}), (12.0, {"axle.torque": 0.0})]),
    Case("Wheelset_Lateral_Push",
         "the loaded Manchester benchmark vehicle 1 wheelset (preset loaded-passenger, "
         "54.5 kN per wheel) at 30 m/s on straight track, pushed sideways by 10 kN per axle "
         "box from 1 to 3 s (ramps of 0.5 s): the lateral force input of a vehicle model "
         "(validation case vehicle, tests/test_vehicle.py's push)",
         "presets/loaded-passenger.toml (Iwnicki 1998) and wheelset.speed 30 m/s",
         _pushed_values, 4.0, 0.01,
         [(t, {"axlebox.left.force.y": f, "axlebox.right.force.y": f})
          for t, f in ((0.0, 0.0), (1.0, 0.0), (1.5, PUSH), (3.0, PUSH), (3.5, 0.0), (4.0, 0.0))]),
)


def case_folder(out: Path, version: str, case: Case) -> Path:
    return Path(out, "fmus", *FMI_TYPE_DIR, TOOL, version, case.name)


def write_inputs(case: Case, path: Path) -> None:
    names = list(case.inputs[0][1])
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["time", *names])
        for t, row in case.inputs:
            w.writerow([repr(float(t)), *(repr(float(row[n])) for n in names)])


def input_signals(case: Case):
    """The inputs as the structured array fmpy.simulate_fmu takes."""
    import numpy as np
    names = list(case.inputs[0][1])
    dtype = [("time", np.float64)] + [(n, np.float64) for n in names]
    return np.array([(t, *(row[n] for n in names)) for t, row in case.inputs], dtype=dtype)


def reference_run(fmu: Path, case: Case):
    """FMPy's run of the case: the reference outputs (a structured array)."""
    import fmpy
    return fmpy.simulate_fmu(str(fmu), start_time=0.0, stop_time=case.stop_time,
                             output_interval=case.step, input=input_signals(case),
                             output=list(OUTPUTS))


def write_case(out: Path, version: str, case: Case, quiet: bool = True) -> Path:
    from fmu_wheelset.packaging.build import build_fmu
    folder = case_folder(out, version, case)
    folder.mkdir(parents=True, exist_ok=True)
    fmu = build_fmu(folder / f"{case.name}.fmu", quiet=True, start_values=case.start_values(),
                    start_source=case.source, numba_cache=False)
    write_inputs(case, folder / f"{case.name}_in.csv")
    result = reference_run(fmu, case)
    with open(folder / f"{case.name}_ref.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(result.dtype.names)
        for row in result:
            w.writerow([format(float(x), ".17g") for x in row])
    (folder / f"{case.name}_ref.opt").write_text(
        f"StartTime, 0.0\nStopTime, {case.stop_time!r}\nStepSize, {case.step!r}\n"
        f"RelTol, {REL_TOL!r}\n")
    import fmpy
    (folder / "README.md").write_text(
        f"# {case.name}\n\n{case.description}.\n\n"
        f"Parameters: the FMU's start values, {case.source} "
        f"(resources/presets/fmu-start.toml inside the FMU, each value with its source).\n\n"
        f"Inputs: `{case.name}_in.csv` (linear between rows). Reference: `{case.name}_ref.csv`, "
        f"FMPy {fmpy.__version__} `simulate_fmu` (co-simulation, communication step "
        f"{case.step:g} s) on {platform.system()} {platform.machine()}, Python "
        f"{platform.python_version()}. Written by `wheelset-fmu compat`.\n\n"
        "The FMU carries no compiled numba cache (the Cross-Check size limit): its first "
        "run on a machine compiles the solver, about a minute.\n")
    if not quiet:
        print(f"wrote {folder} ({fmu.stat().st_size / 1e6:.1f} MB FMU, {len(result)} reference rows)")
    return folder


def write_compat(out, quiet: bool = True) -> List[Path]:
    """Every case under `out`; returns their folders."""
    from fmu_wheelset.fmu.slave import FMU_VERSION
    out = Path(out)
    folders = [write_case(out, FMU_VERSION, case, quiet=quiet) for case in CASES]
    (out / "README.md").write_text(
        "# Wheelset FMU: compatibility information (FMI Cross-Check format)\n\n"
        + "\n".join(f"- `{f.relative_to(out)}`: {c.description}" for f, c in zip(folders, CASES))
        + "\n\nEach folder: the FMU, its inputs (`_in.csv`), the reference outputs "
        "(`_ref.csv`), the run's options (`_ref.opt`) and a README. The tools it was run "
        "with and their versions: docs/hosts.md of the wheelset-fmu project.\n")
    return folders


def register(subparsers):
    parser = subparsers.add_parser(
        "compat", help="write compatibility cases in the FMI Cross-Check format",
        description="Write three validation cases as FMU + _in.csv + _ref.csv + _ref.opt + "
                    "README (the FMI Cross-Check layout fmus/2.0/cs/linux64/...).")
    parser.add_argument("out", help="folder to write into (created)")
    parser.set_defaults(func=run)


def run(args) -> int:
    write_compat(args.out, quiet=False)
    return 0
