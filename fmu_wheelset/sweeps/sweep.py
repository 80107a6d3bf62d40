"""Parameter sweeps of the wheelset FMU on Dask.

A sweep file (TOML) names a base scenario (``solver.scenarios``) and either a
full grid or random samples of case parameters::

    scenario = "kang-r320"       # built-in scenario or scenario TOML
    duration = 3.0               # s simulated per case
    output_interval = 0.01       # s, FMI communication step
    ramp_time = 0.5              # s, curvature and cant ramped in linearly from t = 0
    direction = "left"           # side of the curve

    [fixed]                      # applied to every case
    friction = 0.3

    [grid]                       # full factorial (every combination)
    speed_kmh = [80.0, 100.0, 120.0]
    radius_m = [800.0, 1200.0]   # inf (or 0) = straight track
    cant_deficiency_mm = [60.0]  # or cant_mm = [...]; the cant it gives must be 0-200 mm
    wheel_profile = ["S1002"]

    # ... or instead of [grid]:
    [random]
    samples = 20
    seed = 1
    speed_kmh = [60.0, 120.0]    # two numbers: uniform on [lo, hi]
    wheel_profile = ["S1002", "LMA"]   # strings (or [[...]]): a random choice

``preset = "loaded-passenger"`` at the top (or a ``preset`` key in [fixed],
[grid] or [random]) applies a preset (fmu_wheelset/fmu/presets.py) to each case:
the scenario's values, then the preset's, then the case's own.

Case keys: ``speed_kmh``, ``radius_m``, ``cant_mm`` (outer-rail
superelevation, mm) or ``cant_deficiency_mm`` (the cant is then
``h = V^2 s / (g R) - deficiency``, s = 1.5 m between rail centres; a negative
h is a cant excess: the inner rail raised), ``duration``, and any
``WheelsetParameters`` field (``friction``, ``wheel_profile``, ...).

Track: when a case gives ``radius_m``, the FMU runs on the straight built-in
track with ``track.curvature_from_input`` / ``track.cant_from_input`` and an
FMPy input signal ramping the curvature 1/R and the cant angle in over
``ramp_time`` (a clothoid at constant speed), then constant. Without
``radius_m`` the base scenario's track is used.

Each case runs the FMU through ``fmpy.simulate_fmu`` in one Dask task. The
FMU's bytes are scattered to the workers (no shared file system); each worker
process writes and extracts them once into its own temp dir. Results are keyed
by a hash of the case (``case_key``) and stored under ``<out>/cases/<key>.json``
(summary row + status/message) as they come in, so that a rerun skips the
cases already done. ``<out>/summary.csv`` has one row per case, and
``<out>/heatmap_max_YQ.png`` the max Y/Q over speed x radius;
``--histories`` adds ``<out>/histories/<key>.csv`` (+ a PNG per case).

Summary quantities per case (over the output times; NaN when the case failed
before the first output): ``max_YQ_left`` / ``max_YQ_right`` (largest signed
derailment quotient Y/Q of each wheel, Y positive outwards), ``max_abs_y_mm``
(lateral displacement of the wheelset centre), ``max_flange_force_kN`` (largest
normal force of a point with contact angle > 20 deg), ``flange_contact_share``
(fraction of output times with at least one such point on either wheel; also
per wheel), ``max_wear_number_N`` (largest wear number T gamma of a wheel: the
sum over its contact points of |Fx xi| + |Fy eta|, the FMU output
``wheel.<side>.wear_number`` computed by the core).
"""
from __future__ import annotations

import contextlib
import csv
import dataclasses
import hashlib
import io
import itertools
import json
import math
import os
import random
import signal
import sys
import tempfile
import threading
import time
import tomllib
import traceback
from pathlib import Path

import numpy as np
from fmu_wheelset.fmu.interface import POINTS_PER_WHEEL, start_values

G = 9.81
RAIL_DISTANCE = 1.5                 # m between rail centres (solver.track default)
FLANGE_ANGLE = math.radians(20.0)   # a contact point steeper than this is a flange contact
SIDES = ("left", "right")
POINTS = POINTS_PER_WHEEL      # contact points per wheel of the FMU's outputs

SPECIAL_KEYS = ("speed_kmh", "radius_m", "cant_mm", "cant_deficiency_mm", "duration", "preset")


def output_names():
    """The outputs a case records (the project's output names: the FMU's, and
    the core's record, solver.model.outputs.RECORD_INDEX)."""
    names = ["wheelset.y"]
    for side in SIDES:
        names += [f"wheel.{side}.Y_over_Q", f"wheel.{side}.wear_number"]
        for k in range(1, POINTS + 1):
            p = f"contact.{side}.point[{k}]"
            names += [f"{p}.active", f"{p}.contact_angle", f"{p}.normal_force"]
    return names


# ----------------------------------------------------------------- sweep spec
@dataclasses.dataclass
class Sweep:
    scenario: str
    duration: float
    output_interval: float
    ramp_time: float
    direction: str
    cases: list          # list of dict (the varying + fixed case parameters)
    source: str = ""


def _axis(values, key):
    if not isinstance(values, list):
        values = [values]
    if not values:
        raise ValueError(f"sweep axis {key!r} is empty")
    return values


def load_sweep(path) -> Sweep:
    """Read a sweep TOML (format in the module docstring); ValueError naming the
    file for anything malformed (not TOML, wrong types, missing keys)."""
    from fmu_wheelset.sweeps.plan import PlanError, check_plan
    from solver.data_files import read_text
    try:
        # a regular UTF-8 file within the size and line caps (solver/data_files.py)
        data = tomllib.loads(read_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise PlanError(f"{path}: not valid TOML: {exc}") from None
    check_plan(data, str(path))      # the whole plan, before anything is expanded (PlanError)
    try:
        return _parse_sweep(data, path)
    except (TypeError, KeyError, AttributeError, OverflowError) as exc:
        raise ValueError(f"{path}: malformed sweep file: {type(exc).__name__}: {exc}") from exc


def _parse_sweep(data: dict, path) -> Sweep:
    from fmu_wheelset.sweeps.plan import resolve_scenario
    # a scenario name, or a file relative to the sweep file
    scenario = resolve_scenario(str(data.get("scenario", "kang-r320")), str(path))
    fixed = dict(data.get("fixed", {}))
    if "preset" in data:                       # a preset for every case ([fixed] may override)
        fixed.setdefault("preset", data["preset"])
    if "grid" in data and "random" in data:
        raise ValueError(f"{path}: give [grid] or [random], not both")
    cases = []
    if "random" in data:
        spec = dict(data["random"])
        n = int(spec.pop("samples"))
        rng = random.Random(int(spec.pop("seed", 0)))
        for _ in range(n):
            case = dict(fixed)
            for key, values in spec.items():
                values = _axis(values, key)
                if (len(values) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                             for v in values)):
                    case[key] = rng.uniform(float(values[0]), float(values[1]))
                else:
                    case[key] = rng.choice(values)
            cases.append(case)
    else:
        grid = dict(data.get("grid", {}))
        keys = list(grid)
        for combo in itertools.product(*[_axis(grid[k], k) for k in keys]):
            case = dict(fixed)
            case.update(zip(keys, combo))
            cases.append(case)
    return Sweep(scenario=scenario, duration=float(data.get("duration", 3.0)),
                 output_interval=float(data.get("output_interval", 0.01)),
                 ramp_time=float(data.get("ramp_time", 0.5)),
                 direction=str(data.get("direction", "left")),
                 cases=[make_case(c, scenario=scenario, duration=float(data.get("duration", 3.0)),
                                  output_interval=float(data.get("output_interval", 0.01)),
                                  ramp_time=float(data.get("ramp_time", 0.5)),
                                  direction=str(data.get("direction", "left"))) for c in cases],
                 source=str(path))


def make_case(params: dict, *, scenario="kang-r320", duration=3.0, output_interval=0.01,
              ramp_time=0.5, direction="left") -> dict:
    """A case: everything that determines its result (and so its key)."""
    params = {k: (float(v) if isinstance(v, int) and not isinstance(v, bool) else v)
              for k, v in params.items()}
    duration = float(params.pop("duration", duration))
    return {"scenario": scenario, "duration": duration, "output_interval": float(output_interval),
            "ramp_time": float(ramp_time), "direction": direction, "params": params}


def case_key(case: dict) -> str:
    text = json.dumps(case, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ------------------------------------------------------------ case -> model
def _track_values(case, speed):
    """(curvature 1/m, cant angle rad, cant mm) of the curve of a case, or None."""
    p = case["params"]
    if "radius_m" not in p:
        return None
    radius = float(p["radius_m"])
    if radius == 0.0 or not math.isfinite(radius):
        return 0.0, 0.0, 0.0
    if "cant_mm" in p:
        h = float(p["cant_mm"]) / 1000.0
    elif "cant_deficiency_mm" in p:
        h = speed * speed * RAIL_DISTANCE / (G * abs(radius)) - float(p["cant_deficiency_mm"]) / 1000.0
    else:
        h = 0.0
    sign = 1.0 if case.get("direction", "left") == "left" else -1.0
    kappa = sign / abs(radius)
    # left curve: outer (right) rail raised -> cant_angle < 0 (docs/CONVENTIONS.md)
    angle = -sign * math.asin(max(-0.99, min(0.99, h / RAIL_DISTANCE)))
    return kappa, angle, h * 1000.0


def case_scenario(case):
    """The solver Scenario of a case (base scenario + case parameters). The
    scenario names are the command line's (fmu_wheelset/cli/args.py: the FMU's
    track names, the earlier names as aliases)."""
    from fmu_wheelset.cli.args import load_scenario
    p = case["params"]
    overrides = {k: v for k, v in p.items() if k not in SPECIAL_KEYS}
    for k in ("suspension_stiffness", "suspension_damping"):
        if k in overrides:
            overrides[k] = tuple(overrides[k])
    if "speed_kmh" in p:
        overrides["speed"] = float(p["speed_kmh"]) / 3.6
    if "radius_m" in p:
        overrides["track"] = "straight"
    overrides["duration"] = case["duration"]
    overrides["output_interval"] = case["output_interval"]
    # the scenario's values, then the preset's, then the case's
    return load_scenario(case["scenario"], preset=p.get("preset"), **overrides)


def ramp(t, ramp_time):
    t = np.asarray(t, dtype=float)
    return np.minimum(t / ramp_time, 1.0) if ramp_time > 0 else np.ones_like(t)


# --------------------------------------------------------------- summaries
def summarize(columns: dict) -> dict:
    """Summary quantities of a case from its time histories (FMI names)."""
    n = len(columns.get("time", []))
    out = {"samples": n}
    if n == 0:
        for k in ("max_YQ_left", "max_YQ_right", "max_abs_y_mm", "max_flange_force_kN",
                  "flange_contact_share", "flange_share_left", "flange_share_right",
                  "max_wear_number_N"):
            out[k] = float("nan")
        return out
    flange_any = np.zeros(n, dtype=bool)
    max_flange, max_wear = 0.0, 0.0
    for side in SIDES:
        out[f"max_YQ_{side}"] = float(np.max(columns[f"wheel.{side}.Y_over_Q"]))
        side_flange = np.zeros(n, dtype=bool)
        for k in range(1, POINTS + 1):
            p = f"contact.{side}.point[{k}]"
            active = np.asarray(columns[f"{p}.active"]).astype(bool)
            normal = np.asarray(columns[f"{p}.normal_force"], dtype=float)
            flange = active & (np.asarray(columns[f"{p}.contact_angle"]) > FLANGE_ANGLE) & (normal > 0)
            side_flange |= flange
            if flange.any():
                max_flange = max(max_flange, float(np.max(normal[flange])))
        max_wear = max(max_wear, float(np.max(columns[f"wheel.{side}.wear_number"])))
        out[f"flange_share_{side}"] = float(np.mean(side_flange))
        flange_any |= side_flange
    out["max_abs_y_mm"] = float(np.max(np.abs(columns["wheelset.y"]))) * 1e3
    out["max_flange_force_kN"] = max_flange / 1e3
    out["flange_contact_share"] = float(np.mean(flange_any))
    out["max_wear_number_N"] = max_wear
    return out


# ----------------------------------------------------------------- runners
def _fmu_run(fmu_path, case, want_history):
    import fmpy
    from fmpy import read_model_description
    scenario = case_scenario(case)
    md = read_model_description(fmu_path)
    fmi_names = {v.name for v in md.modelVariables}
    values, missing = start_values(scenario.params, fmi_names)
    track = _track_values(case, scenario.params.speed)
    table = None
    stop = scenario.duration
    dt = scenario.output_interval
    if track is not None:
        kappa, angle, _ = track
        values["track.scenario"] = "straight"
        values["track.curvature_from_input"] = True
        values["track.cant_from_input"] = True
        t = np.arange(int(round(stop / dt)) + 1) * dt
        table = np.zeros(t.size, dtype=[("time", float), ("track.curvature", float),
                                        ("track.cant_angle", float)])
        table["time"] = t
        r = ramp(t, case["ramp_time"])
        table["track.curvature"] = kappa * r
        table["track.cant_angle"] = angle * r
    messages = []

    def logger(component, instance, status, category, message):
        text = message.decode(errors="replace") if isinstance(message, bytes) else str(message)
        if status >= 3:                            # fmi2Error and fmi2Fatal
            messages.append(text)

    holder = {}

    def step_finished(time_, recorder):
        holder["rec"] = recorder
        return True

    status, message = "ok", ""
    try:
        with contextlib.redirect_stdout(io.StringIO()):    # fmpy's "missing input" warnings
            result = fmpy.simulate_fmu(fmu_path, start_time=0.0, stop_time=stop, output_interval=dt,
                                       start_values=values, input=table, output=output_names(),
                                       logger=logger, step_finished=step_finished,
                                       model_description=md, validate=False, debug_logging=True)
    except Exception as exc:  # noqa: BLE001 - recorded with the case
        status = "failed"
        errors = [m for m in messages if m]
        message = f"{type(exc).__name__}: {exc}" + (f" | FMU: {errors[-1]}" if errors else "")
        rec = holder.get("rec")
        result = rec.result() if rec is not None and rec.rows else None
    columns = {}
    if result is not None:
        columns = {name: np.asarray(result[name], dtype=float) for name in result.dtype.names}
    reached = float(columns["time"][-1]) if columns and len(columns["time"]) else 0.0
    if status == "ok" and reached < stop - 0.5 * dt:
        # fmi2Discard: FMPy ends the simulation early without an exception
        errors = [m for m in messages if m]
        status = "failed"
        message = (f"FMU stopped at t = {reached:.3f} s (fmi2Discard): "
                   + (errors[-1] if errors else "no message"))
    return status, message, columns, missing, track


def _core_run(case, want_history):
    """The same case with the core (no FMU): the reference runner."""
    from solver.model.outputs import WheelsetInputs, named_outputs
    from solver.model.wheelset import WheelsetModel
    from solver.track.excitation import RailMotion
    scenario = case_scenario(case)
    track = _track_values(case, scenario.params.speed)
    dt, stop = scenario.output_interval, scenario.duration
    n = int(round(stop / dt))

    def inputs(t):
        if track is None:
            return None
        r = float(ramp(t, case["ramp_time"]))
        return WheelsetInputs(rail_motion=RailMotion(), curvature=track[0] * r, cant_angle=track[1] * r)

    rows = []
    names = ["time"] + output_names()

    def record(model):
        row = named_outputs(model.record)         # the FMU's output names
        rows.append({name: row[name] for name in names})

    status, message = "ok", ""
    try:
        model = WheelsetModel(scenario.params)
        model.initialize(inputs(0.0))
        record(model)
        for i in range(n):
            res = model.advance(dt, inputs(i * dt))
            if res.status != "ok":
                status, message = "failed", f"t = {(i + 1) * dt:.3f} s: {res.status}: {res.message}"
                break
            record(model)
    except Exception as exc:  # noqa: BLE001
        status, message = "failed", f"{type(exc).__name__}: {exc}"
    columns = {k: np.array([r[k] for r in rows]) for k in rows[0]} if rows else {}
    return status, message, columns, [], track


def run_case(fmu_path, case, want_history=False) -> dict:
    """Run one case; never raises. `fmu_path`: an .fmu file or an extracted FMU
    directory, or None for the core runner. Returns a dict with ``key``,
    ``status`` ("ok" | "failed"), ``message``, the case parameters, the summary
    quantities and (if `want_history`) ``history`` (name -> list)."""
    t0 = time.perf_counter()
    key = case_key(case)
    trace = None
    try:
        if fmu_path is None:
            status, message, columns, missing, track = _core_run(case, want_history)
        else:
            status, message, columns, missing, track = _fmu_run(fmu_path, case, want_history)
    except Exception as exc:  # noqa: BLE001 - a case never kills the sweep
        # the reason in one line; the traceback only in the case's result file
        status, message, columns, missing, track = (
            "failed", f"{type(exc).__name__}: {' '.join(str(exc).split())}", {}, [], None)
        trace = traceback.format_exc(limit=5)
    row = {"key": key, "status": status, "message": message,
           "runner": "core" if fmu_path is None else "fmu"}
    row.update({f"case.{k}": v for k, v in sorted(case["params"].items())})
    row["duration_s"] = case["duration"]
    if track is not None:
        row["curvature_1_m"], row["cant_angle_rad"], row["cant_mm_applied"] = track
    row["simulated_s"] = float(columns["time"][-1]) if columns and len(columns["time"]) else 0.0
    row.update(summarize(columns))
    if missing:
        row["not_in_fmu"] = "; ".join(missing)
    if trace:
        row["traceback"] = trace
    row["wall_s"] = time.perf_counter() - t0
    if want_history:
        row["history"] = {k: np.asarray(v, dtype=float).tolist() for k, v in columns.items()}
    return row


# ------------------------------------------------------------ dask plumbing
_WORKER_FMUS: dict = {}


def _scratch_directory():
    """Where a worker extracts the FMU: the Dask worker's own local directory,
    which Dask removes when the worker closes (and purges after a crash when
    the next worker starts); outside a worker, a folder removed at exit."""
    try:
        from distributed import get_worker
        return get_worker().local_directory
    except (ImportError, ValueError, AttributeError):
        pass
    global _PROCESS_SCRATCH
    if _PROCESS_SCRATCH is None:
        import atexit
        import shutil
        _PROCESS_SCRATCH = tempfile.mkdtemp(prefix="wheelset-sweep-")
        atexit.register(shutil.rmtree, _PROCESS_SCRATCH, True)
    return _PROCESS_SCRATCH


_PROCESS_SCRATCH = None


def worker_fmu(digest: str, data: bytes) -> str:
    """On a worker: the FMU written and extracted once per process (temp dir)."""
    path = _WORKER_FMUS.get(digest)
    if path is not None and os.path.isdir(path):
        return path
    import zipfile
    root = tempfile.mkdtemp(prefix=f"wheelset-sweep-{digest[:8]}-", dir=_scratch_directory())
    fmu = os.path.join(root, "Wheelset.fmu")
    with open(fmu, "wb") as fh:
        fh.write(data)
    unzipped = os.path.join(root, "unzipped")
    with zipfile.ZipFile(fmu) as z:
        z.extractall(unzipped)
    _WORKER_FMUS[digest] = unzipped
    return unzipped


def dask_task(fmu_blob, case, want_history=False):
    """The task run on a worker: ``fmu_blob`` = (digest, bytes) or None (core)."""
    path = None if fmu_blob is None else worker_fmu(*fmu_blob)
    return run_case(path, case, want_history)


def _json_default(x):
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    return repr(x)


def _write_case(out: Path, row: dict, want_history: bool):
    history = row.pop("history", None)
    cases_dir = out / "cases"
    cases_dir.mkdir(parents=True, exist_ok=True)
    tmp = cases_dir / f".{row['key']}.json.tmp"
    tmp.write_text(json.dumps(row, default=_json_default, indent=1, allow_nan=True))
    tmp.replace(cases_dir / f"{row['key']}.json")
    if want_history and history:
        hdir = out / "histories"
        hdir.mkdir(parents=True, exist_ok=True)
        names = list(history)
        data = np.column_stack([history[n] for n in names])
        np.savetxt(hdir / f"{row['key']}.csv", data, delimiter=",", header=",".join(names),
                   comments="", fmt="%.10g")
        try:
            plot_history(history, hdir / f"{row['key']}.png", title=_case_label(row))
        except Exception as exc:  # noqa: BLE001 - a plot never stops the sweep
            print(f"history plot of {row['key']} failed: {exc}", file=sys.stderr)


def _case_label(row):
    return ", ".join(f"{k[5:]}={v:g}" if isinstance(v, float) else f"{k[5:]}={v}"
                     for k, v in row.items() if k.startswith("case."))


def load_done(out: Path, want_history=False, warn=None) -> dict:
    """The cases of ``out/cases`` that ran to the end ("ok"), by key. A failed
    case is not done: a rerun retries it. A damaged result file (not JSON, not
    an object, a missing or wrong field) is reported through `warn` (default:
    stderr), naming the file and the bad line, and its case runs again."""
    if warn is None:
        def warn(message):
            print(message, file=sys.stderr)
    done = {}
    cases_dir = Path(out) / "cases"
    if not cases_dir.is_dir():
        return done
    for f in sorted(cases_dir.glob("*.json")):
        try:
            row = json.loads(f.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            warn(f"{f}: line {exc.lineno}: damaged result file ({exc.msg}); the case runs again")
            continue
        except (OSError, UnicodeDecodeError) as exc:
            warn(f"{f}: unreadable result file ({type(exc).__name__}); the case runs again")
            continue
        problem = None
        if not isinstance(row, dict):
            problem = "not a JSON object"
        elif not isinstance(row.get("key"), str) or row["key"] != f.stem:
            problem = "its \"key\" is missing or differs from the file name"
        elif row.get("status") not in ("ok", "failed"):
            problem = "its \"status\" is missing or unknown"
        if problem:
            warn(f"{f}: line 1: damaged result file ({problem}); the case runs again")
            continue
        if row["status"] != "ok":
            continue                     # failed before: retried
        if want_history and not (Path(out) / "histories" / f"{row['key']}.csv").exists():
            continue
        done[row["key"]] = row
    return done


def run_sweep(cases, out, *, fmu_path=None, runner="fmu", scheduler=None, n_workers=None,
              histories=False, progress=True, client=None, plot=True):
    """Run `cases` (list of case dicts) on Dask; returns the rows (one per case,
    in the order of `cases`). Cases whose result is in ``out/cases`` are skipped.
    `runner`: "fmu" (needs `fmu_path`, an .fmu file) or "core"."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    keys = [case_key(c) for c in cases]
    done = load_done(out, histories)
    todo = {}
    for k, c in zip(keys, cases):
        if k not in done and k not in todo:
            todo[k] = c
    stats = {"total": len(set(keys)), "skipped": len(set(keys)) - len(todo), "ran": 0, "failed": 0}
    if todo:
        with _ctrl_c_recorded() as interrupted:
            _run_todo(todo, out, done, stats, fmu_path=fmu_path, runner=runner, scheduler=scheduler,
                      n_workers=n_workers, histories=histories, progress=progress, client=client,
                      interrupted=interrupted)
    rows = [done[k] for k in keys]
    write_summary(rows, out / "summary.csv")
    if plot:
        try:
            plot_heatmap(rows, out / "heatmap_max_YQ.png")
        except Exception as exc:  # noqa: BLE001
            print(f"heat map failed: {exc}", file=sys.stderr)
    run_sweep.last_stats = stats
    return rows



@contextlib.contextmanager
def _ctrl_c_recorded():
    """Ctrl-C during a sweep: the first SIGINT sets the returned event and
    raises KeyboardInterrupt as usual (a second one finds the previous handler).
    The wait loop also polls the event, so the interrupt is not lost when the
    exception lands in library code that swallows it (a finaliser run by the
    garbage collector, a BaseException handler of the cluster start-up).
    Outside the main thread nothing changes."""
    interrupted = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield interrupted
        return

    def on_sigint(signum, frame):
        interrupted.set()
        signal.signal(signal.SIGINT, previous)  # a second Ctrl-C acts as before
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield interrupted
        if interrupted.is_set():
            raise KeyboardInterrupt
    finally:
        signal.signal(signal.SIGINT, previous)


def _completed_unless_interrupted(futures, interrupted, poll=0.2):
    """The futures in the order they finish, like distributed.as_completed, but
    checking `interrupted` every `poll` seconds (KeyboardInterrupt when set)."""
    from distributed import wait
    pending = set(futures)
    while pending:
        if interrupted.is_set():
            raise KeyboardInterrupt
        try:
            finished, pending = wait(pending, timeout=poll, return_when="FIRST_COMPLETED")
        except TimeoutError:
            continue
        yield from finished


def _run_todo(todo, out, done, stats, *, fmu_path, runner, scheduler, n_workers, histories,
              progress, client, interrupted):
    """Run the cases of `todo` (key -> case) on Dask, writing each result to
    ``out/cases`` and into `done` as it finishes."""
    from distributed import Client, LocalCluster
    own_cluster = None
    if client is None:
        if scheduler:
            client = Client(scheduler)
        else:
            from fmu_wheelset.sweeps.plan import check_workers
            n = check_workers(n_workers) or os.cpu_count() or 1
            # its own log at ERROR: the nanny's warning that a worker still ran 4 s
            # after close (the workers' interpreter shutdown) followed every sweep
            import logging
            own_cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
            client = Client(own_cluster)
        own_client = True
    else:
        own_client = False
    try:
        blob = None
        if runner == "fmu":
            if fmu_path is None:
                raise ValueError("runner 'fmu' needs an FMU file")
            data = Path(fmu_path).read_bytes()
            blob = client.scatter((hashlib.sha256(data).hexdigest(), data), broadcast=True, hash=False)
        futures = [client.submit(dask_task, blob, c, histories, key=f"case-{k}", pure=False)
                   for k, c in todo.items()]
        bar = None
        if progress:
            from tqdm import tqdm
            bar = tqdm(total=len(futures), desc="sweep", unit="case")
        for fut in _completed_unless_interrupted(futures, interrupted):
            try:
                row = fut.result()
            except Exception as exc:  # noqa: BLE001 - worker died, etc.
                k = fut.key[5:] if isinstance(fut.key, str) else str(fut.key)
                row = {"key": k, "status": "failed", "message": f"task error: {type(exc).__name__}: {exc}",
                       "runner": runner}
                row.update({f"case.{p}": v for p, v in sorted(todo[k]["params"].items())})
            _write_case(out, row, histories)
            stats["ran"] += 1
            stats["failed"] += row["status"] != "ok"
            done[row["key"]] = row
            if bar is not None:
                bar.update(1)
                if row["status"] != "ok":
                    bar.write(f"case {row['key']} failed: {row['message'][:200]}")
        if bar is not None:
            bar.close()
    finally:
        if own_client:
            client.close()
        if own_cluster is not None:
            own_cluster.close()


def write_summary(rows, path):
    columns = []
    for r in rows:
        for k in r:
            if k not in ("history", "traceback") and k not in columns:
                columns.append(k)
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        seen = set()
        for r in rows:
            if r["key"] in seen:
                continue
            seen.add(r["key"])
            w.writerow({k: (f"{v:.10g}" if isinstance(v, float) else v) for k, v in r.items()})


# ------------------------------------------------------------------ plots
def plot_heatmap(rows, path):
    """Max Y/Q (of both wheels) over speed x radius; other axes: the max over them."""
    rows = [r for r in rows if "case.speed_kmh" in r and "case.radius_m" in r]
    if not rows:
        return None
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    speeds = sorted({float(r["case.speed_kmh"]) for r in rows})
    radii = sorted({float(r["case.radius_m"]) for r in rows})
    grid = np.full((len(radii), len(speeds)), np.nan)
    failed = np.zeros_like(grid, dtype=bool)
    for r in rows:
        i, j = radii.index(float(r["case.radius_m"])), speeds.index(float(r["case.speed_kmh"]))
        if r.get("status") != "ok":
            failed[i, j] = True
        v = max(float(r.get("max_YQ_left", np.nan)), float(r.get("max_YQ_right", np.nan)))
        if math.isfinite(v):
            grid[i, j] = v if math.isnan(grid[i, j]) else max(grid[i, j], v)
    fig = Figure(figsize=(1.4 + 1.1 * len(speeds), 1.2 + 0.8 * len(radii)))
    ax = fig.add_subplot()
    im = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(speeds)), [f"{s:g}" for s in speeds])
    ax.set_yticks(range(len(radii)), [f"{r:g}" for r in radii])
    ax.set_xlabel("speed (km/h)")
    ax.set_ylabel("curve radius (m)")
    ax.set_title("max Y/Q (both wheels)")
    for i in range(len(radii)):
        for j in range(len(speeds)):
            text = "n/a" if math.isnan(grid[i, j]) else f"{grid[i, j]:.2f}"
            if failed[i, j]:
                text += "\nfailed"
            ax.text(j, i, text, ha="center", va="center", color="w", fontsize=8)
    fig.colorbar(im, ax=ax, label="Y/Q")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def plot_history(history, path, title=""):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    t = np.asarray(history["time"])
    fig = Figure(figsize=(8, 7))
    axes = fig.subplots(3, 1, sharex=True)
    axes[0].plot(t, np.asarray(history["wheelset.y"]) * 1e3)
    axes[0].set_ylabel("y (mm)")
    for side in SIDES:
        axes[1].plot(t, history[f"wheel.{side}.Y_over_Q"], label=side)
        for k in range(1, POINTS + 1):
            axes[2].plot(t, np.asarray(history[f"contact.{side}.point[{k}].normal_force"]) / 1e3,
                         label=f"{side} p{k}")
    axes[1].set_ylabel("Y/Q")
    axes[1].legend(fontsize=7)
    axes[2].set_ylabel("normal force (kN)")
    axes[2].legend(fontsize=7, ncol=3)
    axes[2].set_xlabel("time (s)")
    axes[0].set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return path
