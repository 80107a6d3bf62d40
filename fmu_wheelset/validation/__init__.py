"""Validation suite of the wheelset FMU against the published figures.

One module per case (plain functions `case_*(out, backend) -> CaseResult`):
ren_jin (Ren & Jin 2010, cases 1-3), kang (Kang 2012), geometry (static
contact geometry, no FMU), creep_models and contact_mechanics (against
Kalker's theory as computed by CONTACT, no FMU), klingel (free coned wheelset),
fmu_check (FMU vs core), load_continuity, convergence and running_safety (the
wheel loads, the defaults' accuracy and the running-safety criteria of the
core), vehicle (the Manchester vehicle over four FMUs, cosim/vehicle/master.py),
quarter_vehicle (the stand-alone loaded wheelset against that vehicle).
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
    ("quarter_vehicle", "case_quarter_vehicle"),
)


CASE_MODULES = tuple(dict.fromkeys(m for m, _ in CASES))
# the cases that never run the FMU (the geometry, the core, CONTACT's results):
# they run while the FMU builds
WITHOUT_FMU = ("geometry", "profiles", "creep_models", "contact_mechanics", "load_continuity",
               "convergence", "running_safety")


def select_cases(names=None) -> tuple:
    """The (module, function) pairs of the suite named by `names` (module names,
    e.g. "geometry", or function names, e.g. "case_80"; None: all), in the
    suite's order; ValueError naming an unknown one and the nearest names."""
    if not names:
        return CASES
    import difflib
    known = set(CASE_MODULES) | {f for _, f in CASES}
    unknown = [n for n in names if n not in known]
    if unknown:
        near = difflib.get_close_matches(unknown[0], sorted(known), n=3)
        raise ValueError(f"unknown validation case {unknown[0]!r}"
                         + (f" (did you mean {' or '.join(near)}?)" if near else "")
                         + f"; the cases: {', '.join(CASE_MODULES)}")
    return tuple((m, f) for m, f in CASES if m in names or f in names)


def case_functions(names=None):
    import importlib
    return [getattr(importlib.import_module(f"{__name__}.{m}"), f) for m, f in select_cases(names)]


def run_suite(out, backend: str = "fmu", progress: bool = True, cases=None) -> list[CaseResult]:
    """Run the suite (or the `cases` it names, select_cases) under `out`. With
    the FMU backend the FMU builds in a child process while the cases that do
    not need it run (WITHOUT_FMU): on two cores the build costs no wall time
    of its own."""
    import time
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    selected = select_cases(cases)
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(selected), desc="validation", unit="case")
    say = bar.write if bar is not None else (lambda line: None)
    builder = None
    if backend == "fmu" and any(m not in WITHOUT_FMU for m, _ in selected):
        from fmu_wheelset.validation.common import fmu_is_current
        if not fmu_is_current(out):
            builder = _start_fmu_build(out, say)
    first = [c for c in selected if c[0] in WITHOUT_FMU] if builder else list(selected)
    later = [c for c in selected if c not in first]
    results = {}
    try:
        for module, function in first + later:
            if builder is not None and (module, function) == (later[0] if later else None):
                _finish_fmu_build(builder, say)
                builder = None
            if bar is not None:
                bar.set_postfix_str(function)
            results[(module, function)] = _run_case(module, function, out, backend)
            if bar is not None:
                bar.update(1)
    finally:
        if builder is not None:
            builder[0].kill()
    if bar is not None:
        bar.close()
    return [results[c] for c in selected]


def _run_case(module, function, out, backend):
    import importlib
    result = getattr(importlib.import_module(f"{__name__}.{module}"), function)(out, backend)
    # a row that is not a comparison (compared=False: no published value or
    # criterion, a sensitivity, another wheel's figure) is information: shown
    # under its case's table, not counted among the comparisons
    result.info += [r for r in result.rows if not r.compared]
    result.rows = [r for r in result.rows if r.compared]
    return result


def _start_fmu_build(out, say):
    """The suite's FMU (common.fmu_path) built in a child process; its progress
    lines go to `say` as they come."""
    import subprocess
    import sys
    import threading
    import time
    code = ("import sys; from fmu_wheelset.validation.common import fmu_path; "
            "fmu_path(sys.argv[1], progress=lambda line: print(line, flush=True))")
    proc = subprocess.Popen([sys.executable, "-c", code, str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines = []

    def relay():
        for line in proc.stdout:
            lines.append(line.rstrip())
            say(f"FMU build {line.rstrip()}")
    thread = threading.Thread(target=relay, daemon=True)
    thread.start()
    say("building the FMU in a child process while the cases without it run")
    return proc, thread, lines, time.monotonic()


def _finish_fmu_build(builder, say):
    import time
    proc, thread, lines, t0 = builder
    proc.wait()
    thread.join()
    if proc.returncode != 0:
        raise RuntimeError("building the FMU failed: " + (lines[-1] if lines else "no output"))
    say(f"FMU built in {time.monotonic() - t0:.1f} s (beside the cases that do not need it)")
