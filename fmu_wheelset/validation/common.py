"""Shared pieces of the validation suite: building/caching the FMU, running a
scenario through the FMU (FMPy) or the core, table rows and figure helpers.

`run_case(scenario, out_dir, backend="fmu"|"core", **overrides)` returns a
`Run` whose `columns` use the project's output names (the FMU's, e.g.
"wheel.left.Q", "contact.left.point[1].normal_force"; solver.model.wheelset
RECORD_INDEX), whatever the backend, and whose `backend` / `note` say which one
produced it.

FMU backend: the scenario's WheelsetParameters are turned into FMI start
values with the FMU's variable names (fmu_wheelset/fmu/variables.py); FMPy's
`simulate_fmu` drives it in co-simulation with the communication step =
`output_interval`. A scenario parameter the FMU cannot express (e.g. the
built-in bogie's suspension stiffness when the model description has no
variable for it, or a synthetic in-memory profile) makes the case run on the
core instead, and the note says why: the report never labels a core result as
an FMU result.
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from fmu_wheelset.fmu.variables import POINTS_PER_WHEEL

SIDES = ("left", "right")
POINTS = POINTS_PER_WHEEL      # contact points per wheel of the FMU's outputs

# The outputs a validation run through the FMU records (the columns of a `Run`
# use the project's output names, solver.model.outputs.RECORD_INDEX, whatever the
# backend; a core run has every named quantity).
POINT_OUTPUTS = ("active", "wheel_lateral", "rail_lateral", "contact_angle", "rolling_radius",
                 "normal_force", "longitudinal_force", "lateral_force")


def recorded_outputs() -> list:
    """The FMU outputs a validation run records."""
    names = ["wheelset.distance", "wheelset.y", "wheelset.z", "wheelset.roll", "wheelset.yaw",
             "wheelset.spin_rate"]
    for side in SIDES:
        names += [f"wheel.{side}.{q}" for q in ("Y", "Q", "Y_over_Q", "active_points")]
        for k in range(1, POINTS + 1):
            names += [f"contact.{side}.point[{k}].{q}" for q in POINT_OUTPUTS]
    return names


# ---------------------------------------------------------------------------
@dataclass
class Row:
    case: str
    quantity: str
    published: str           # published value (text, with unit)
    value: float             # this model's value
    unit: str
    reference: float         # number the difference is taken against (nan: none)
    tolerance: float         # |difference| <= tolerance passes (nan: pass/fail by `passed`)
    backend: str
    passed: bool | None = None
    note: str = ""
    why: str = ""            # why this tolerance (or this criterion): its source
    compared: bool = True    # False: reported, not compared (the note says why)

    def __post_init__(self):
        if not self.compared:
            self.passed = True          # not a failure, but counted apart (result "not compared")
        elif self.passed is None:
            self.passed = bool(abs(self.value - self.reference) <= self.tolerance)

    @property
    def difference(self) -> float:
        return self.value - self.reference if math.isfinite(self.reference) else float("nan")

    @property
    def result(self) -> str:
        if not self.compared:
            return "not compared"
        return "pass" if self.passed else "FAIL"

    def cells(self):
        """The table's cells as text: three significant digits, more where the
        tolerance is finer (rounding moves a number by at most a tenth of it)."""
        def num(x):
            if not math.isfinite(x):
                return ""
            return f"{x:.{significant_digits(x, self.tolerance)}g}"
        diff = num(self.difference)
        if diff and math.isfinite(self.reference) and self.reference != 0:
            percent = 100 * self.difference / abs(self.reference)
            relative_tolerance = (100 * self.tolerance / abs(self.reference)
                                  if math.isfinite(self.tolerance) else float("inf"))
            diff += f" ({percent:+.1f} %)" if relative_tolerance < 10 else f" ({percent:+.0f} %)"
        tol = ("±" + f"{self.tolerance:.3g}") if math.isfinite(self.tolerance) else ""
        return [self.case, self.quantity + (f" [{self.unit}]" if self.unit else ""), self.published,
                num(self.value), diff, tol, self.why, self.result, self.backend]


def significant_digits(value: float, tolerance: float, least: int = 3, most: int = 6) -> int:
    """Enough significant digits (at least `least`) that rounding `value` moves
    it by at most a tenth of `tolerance`, i.e. half the last digit's step at
    most tolerance / 10 (1.0117 against +-0.01: 4 digits, 1.012)."""
    if not (math.isfinite(value) and value != 0 and math.isfinite(tolerance) and tolerance > 0):
        return least
    digits = least
    while digits < most and 10.0 ** (math.floor(math.log10(abs(value))) - digits + 1) > tolerance / 5:
        digits += 1
    return digits


TABLE_HEADER = ["case", "quantity", "published", "this FMU / core", "difference", "tolerance",
                "why this tolerance", "result", "backend"]


def markdown_table(rows) -> str:
    lines = ["| " + " | ".join(TABLE_HEADER) + " |", "|" + "---|" * len(TABLE_HEADER)]
    for r in rows:
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in r.cells()) + " |")
    return "\n".join(lines)


@dataclass
class CaseResult:
    name: str
    title: str
    rows: list                # the comparisons: each a pass, a FAIL or (rarely) not compared
    figures: list = field(default_factory=list)     # (caption, path)
    csv: list = field(default_factory=list)
    backend: str = ""
    notes: list = field(default_factory=list)
    # figures measured for information, with no published value or criterion to
    # compare them with (a sensitivity, a shape, another wheel's number): Rows with
    # compared=False, shown under the case's table, not counted as comparisons
    info: list = field(default_factory=list)


# ---------------------------------------------------------------------------
def fmu_path(out_dir, progress=None) -> Path:
    """The FMU cached under the output directory, built if missing or older than
    its sources (fmu_wheelset/fmu/slave.py, variables.py, ..., solver/). It runs
    here only, so it carries the numba cache of this machine's CPU alone (the
    generic one would double the build's compiling). ``progress``: a callable
    told the build's steps (None: silent)."""
    from fmu_wheelset.packaging.build import build_fmu
    target = Path(out_dir) / "fmu" / "Wheelset.fmu"
    if not fmu_is_current(out_dir):
        build_fmu(target, quiet=True, numba_targets=("build-cpu",), progress=progress)
    return target


def fmu_is_current(out_dir) -> bool:
    """The FMU under `out_dir` exists and is newer than its sources."""
    from fmu_wheelset.packaging.build import ROOT
    target = Path(out_dir) / "fmu" / "Wheelset.fmu"
    sources = list((ROOT / "fmu_wheelset" / "fmu").rglob("*.py"))
    sources += list((ROOT / "fmu_wheelset" / "fmu" / "native").glob("*.[ch]"))
    sources.append(ROOT / "fmu_wheelset" / "packaging" / "build.py")
    sources += list((ROOT / "solver").rglob("*.py"))
    newest = max(p.stat().st_mtime for p in sources if p.exists())
    return target.exists() and target.stat().st_mtime >= newest


_MD_CACHE = {}


def fmu_variables(fmu) -> set:
    key = str(fmu)
    if key not in _MD_CACHE:
        from fmpy import read_model_description
        _MD_CACHE[key] = {v.name: v for v in read_model_description(key).modelVariables}
    return _MD_CACHE[key]


def fmu_start_values(params, variables) -> tuple[dict, list]:
    """FMI start values for WheelsetParameters `params`, and the list of what the
    FMU (whose model description has `variables`) cannot express: the sweep's
    (a profile file named relative to the working directory passed absolute, as
    the FMU looks relative names up in its resources only)."""
    from fmu_wheelset.fmu.interface import start_values
    return start_values(params, variables)


@dataclass
class Run:
    name: str
    columns: dict
    backend: str             # "fmu" | "core"
    note: str
    wall_time: float
    status: str = "ok"


def run_case(scenario, out_dir, backend: str = "fmu", **overrides) -> Run:
    """Run a scenario (name or solver.scenarios.Scenario) through the FMU with FMPy
    (backend "fmu") or through the core (backend "core"). Falls back to the core,
    with a note, when the FMU cannot take the scenario's parameters."""
    from solver.scenarios import Scenario, load_scenario, simulate
    if isinstance(scenario, Scenario):
        sc = scenario
        if overrides:
            for key in ("duration", "output_interval"):
                if key in overrides:
                    setattr(sc, key, float(overrides.pop(key)))
            sc.params = dataclasses.replace(sc.params, **overrides)
    else:
        sc = load_scenario(scenario, **overrides)
    note = ""
    if backend == "fmu":
        fmu = fmu_path(out_dir)
        variables = fmu_variables(fmu)
        start, missing = fmu_start_values(sc.params, variables)
        if missing:
            note = "core: " + "; ".join(missing)
            backend = "core"
        else:
            import fmpy
            outputs = [n for n in recorded_outputs() if n in variables]
            t0 = time.perf_counter()
            result = quiet_simulate(fmpy, str(fmu), start_time=0.0, stop_time=sc.duration,
                                    output_interval=sc.output_interval,
                                    start_values=start, output=outputs)
            wall = time.perf_counter() - t0
            cols = {n: np.asarray(result[n], dtype=float) for n in result.dtype.names}
            status = "ok" if abs(cols["time"][-1] - sc.duration) < 0.5 * sc.output_interval \
                else f"stopped at t = {cols['time'][-1]:.3f} s"
            return Run(sc.name, cols, "fmu", "FMPy simulate_fmu, co-simulation, "
                       f"communication step {sc.output_interval:g} s", wall, status)
    elif backend != "core":
        raise ValueError(f"backend must be 'fmu' or 'core', got {backend!r}")
    r = simulate(sc)
    cols = {k: np.asarray(v, dtype=float) for k, v in r.columns.items()}
    return Run(sc.name, cols, "core", note or "solver.scenarios.simulate", r.wall_time,
               r.status if r.status == "ok" else f"{r.status}: {r.message}")


def quiet_simulate(fmpy, fmu, **kwargs):
    """fmpy.simulate_fmu of the .fmu file `fmu` without FMPy's 'missing input'
    chatter on stdout, extracted into a temporary folder of its own that is removed
    however the run ends: FMPy removes the folder it extracts to only when the run
    returns, so every run that raised (an FMU refusing its parameters, a failed
    step) left a whole extraction (24 MB) in the system's temporary folder."""
    import contextlib
    import io
    import tempfile
    with tempfile.TemporaryDirectory(prefix="wheelset-validation-fmu-") as unzipped:
        fmpy.extract(str(fmu), unzipdir=unzipped)
        with contextlib.redirect_stdout(io.StringIO()):
            return fmpy.simulate_fmu(unzipped, **kwargs)


def write_csv(columns: dict, path) -> Path:
    names = list(columns)
    data = np.column_stack([np.asarray(columns[n], dtype=float) for n in names])
    np.savetxt(path, data, delimiter=",", header=",".join(names), comments="", fmt="%.8g")
    return Path(path)


def figure(nrows=2, ncols=1, size=(7.5, 6.0)):
    from matplotlib.figure import Figure
    fig = Figure(figsize=size)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def save(fig, path) -> Path:
    """Write a figure of the report. Every panel must have a title (say which
    wheel it shows: outer or inner, left or right): a ValueError names the
    panel that has none."""
    untitled = [k for k, ax in enumerate(fig.axes)
                if ax.get_label() != "<colorbar>" and not ax.get_title()]
    if untitled:
        raise ValueError(f"{Path(path).name}: panel(s) {untitled} of the figure have no title")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    return Path(path)


def backend_label(run: Run) -> str:
    return "FMU (FMPy)" if run.backend == "fmu" else "core"


# -- per-point helpers over a run's columns ------------------------------------
def point_array(c, side, field):
    return np.stack([c[f"contact.{side}.point[{k}].{field}"] for k in range(1, POINTS + 1)], axis=1)


def zone_points(c, side, lo, hi):
    """Per time: summed normal force, largest contact angle and presence of the
    active points of `side` whose CONTACT ANGLE lies in [lo, hi) (rad)."""
    act = point_array(c, side, "active") > 0.5
    n = point_array(c, side, "normal_force")
    ang = point_array(c, side, "contact_angle")
    inzone = act & (ang >= lo) & (ang < hi)
    force = np.where(inzone, n, 0.0).sum(axis=1)
    angle = np.where(inzone, ang, -np.inf).max(axis=1)
    has = inzone.any(axis=1)
    return np.where(has, force, np.nan), np.where(has, angle, np.nan), has


_RUNS = {}


def cached_run(name, out_dir, backend="fmu", **overrides) -> Run:
    """run_case, memoised per (scenario, overrides, backend, out_dir) in this process."""
    key = (name, tuple(sorted(overrides.items())), backend, str(out_dir))
    if key not in _RUNS:
        _RUNS[key] = run_case(name, out_dir, backend, **overrides)
    return _RUNS[key]


def first_index(mask):
    mask = np.asarray(mask, dtype=bool)
    return int(np.argmax(mask)) if mask.any() else None
