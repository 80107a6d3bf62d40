"""Validation suite of the wheelset FMU against the published figures.

One module per case (plain functions `case_*(out, backend) -> CaseResult`):
ren_jin (Ren & Jin 2010, cases 1-3), kang (Kang 2012), geometry (static
contact geometry, no FMU), creep_models and contact_mechanics (against
Kalker's theory as computed by CONTACT, no FMU), klingel (free coned wheelset),
fmu_check (FMU vs core), load_continuity, convergence and running_safety (the
wheel loads, the defaults' accuracy and the running-safety criteria of the
core), vehicle (the Manchester vehicle over four FMUs, cosim/vehicle/master.py).
`run_suite(out, backend="fmu", progress=True)` runs them all, writing
CSVs and PNGs under `out`; `fmu_wheelset.validation.report.write_report`
writes the HTML page. Each dynamic case runs the FMU through FMPy
(`fmpy.simulate_fmu`, co-simulation) by default; backend="core" runs
solver.scenarios.simulate instead. The backend of every row and figure is
recorded.
"""
from __future__ import annotations

from pathlib import Path

from fmu_wheelset.validation.common import CaseResult, Row, markdown_table, run_case  # noqa: F401

CASES = (
    ("ren_jin", "case_multipoint_100"),
    ("ren_jin", "case_single_100"),
    ("ren_jin", "case_80"),
    ("ren_jin", "case_80_sensitivity"),
    ("ren_jin_flexible", "case_flexible_100"),
    ("kang", "case_kang"),
    ("geometry", "case_geometry"),
    ("profiles", "case_profiles"),
    ("creep_models", "case_creep_models"),
    ("contact_mechanics", "case_contact_mechanics"),
    ("klingel", "case_klingel"),
    ("fmu_check", "case_fmu_check"),
    ("load_continuity", "case_load_continuity"),
    ("convergence", "case_convergence"),
    ("running_safety", "case_running_safety"),
    ("vehicle", "case_vehicle"),
)


def case_functions():
    import importlib
    return [getattr(importlib.import_module(f"{__name__}.{m}"), f) for m, f in CASES]


def run_suite(out, backend: str = "fmu", progress: bool = True) -> list[CaseResult]:
    from fmu_wheelset.validation.common import fmu_path
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    functions = case_functions()
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(functions) + (backend == "fmu"), desc="validation", unit="case")
    if backend == "fmu":
        if bar is not None:
            bar.set_postfix_str("building the FMU")
        fmu_path(out)
        if bar is not None:
            bar.update(1)
    results = []
    for fn in functions:
        if bar is not None:
            bar.set_postfix_str(fn.__name__)
        results.append(fn(out, backend))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return results
