"""Checks of a whole sweep plan before any case runs (docs/SECURITY.md).

A sweep file is input from outside: before anything is expanded, built or
started, ``check_plan`` walks the parsed TOML and refuses, with the file, the
table, the key and the allowed range in the message:

* unknown top-level keys, tables or case parameters (a typo would otherwise
  run the default silently);
* a plan of more than MAX_CASES cases: the grid's size is the product of its
  axes' lengths, computed before anything is built (a 1e9-case grid used to
  die with MemoryError after minutes);
* ``samples`` that is not an integer in [1, MAX_CASES] (``-5`` used to run
  0 cases and report success);
* every value of every axis outside its range: the FMU's declared min/max for
  the wheelset parameters (fmu_wheelset/fmu/variables.py), and the ranges
  of SPECIAL_RANGES for the sweep's own keys;
* every profile, track, scenario and preset the plan names that is not a built-in
  name nor a file that loads as one (a misspelt ``wheel_profile = ["S1020"]``,
  ``cone:0.9``, a rail profile given as a wheel, ``scenario = "kang-r32"``):
  each distinct name is loaded once, here, before any case runs;
* durations and output intervals giving more than MAX_OUTPUT_SAMPLES outputs;
* the values a case derives from its keys: the cant that ``cant_deficiency_mm``
  gives at a case's speed and radius must lie in DERIVED_CANT_MM (a plan
  giving -9 mm or 313 mm ran them without a word).

`PlanError` is a ValueError: the CLI prints its one line and exits with 2.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping, Optional

MAX_CASES = 100_000            # cases in one plan
MAX_OUTPUT_SAMPLES = 1_000_000  # output times of one case (duration / output_interval)
MAX_WORKERS = 256               # local worker processes
MAX_STRING = 4096

TOP_KEYS = {"scenario", "duration", "output_interval", "ramp_time", "direction",
            "fixed", "grid", "random", "description", "name", "preset"}

# sweep keys: (lo, hi, lo_open, hi_open, unit, what)
SPECIAL_RANGES = {
    "speed_kmh": (0.0, 540.0, True, False, "km/h", "forward speed"),
    "cant_mm": (-250.0, 250.0, False, False, "mm", "cant (superelevation)"),
    "cant_deficiency_mm": (-300.0, 300.0, False, False, "mm", "cant deficiency"),
    "duration": (0.0, 3600.0, True, False, "s", "simulated time per case"),
    "output_interval": (0.0, 1.0, True, False, "s", "FMI communication step"),
    "ramp_time": (0.0, 3600.0, False, False, "s", "curve ramp time"),
}
MIN_RADIUS_M = 50.0            # tighter curves are outside the wheelset model (and any railway)
# the cant a case derives from its cant deficiency (mm): not below 0 (the inner rail
# raised: the deficiency then exceeds the balance cant) nor above 200 mm (EN 13803
# allows 180 mm on ballasted track; the vehicle command takes up to 200 mm)
DERIVED_CANT_MM = (0.0, 200.0)
GRAVITY = 9.81                 # as fmu_wheelset/sweeps/sweep.py derives the cant
RAIL_DISTANCE = 1.5


class PlanError(ValueError):
    """A sweep plan that cannot run; says where and why."""


def _number(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PlanError(f"{where}: expected a number, got {type(value).__name__}")
    x = float(value)
    if math.isnan(x):
        raise PlanError(f"{where}: NaN is not a value")
    return x


def _in_range(x: float, where: str, lo, hi, lo_open=False, hi_open=False, unit=""):
    low_ok = lo is None or (x > lo if lo_open else x >= lo)
    high_ok = hi is None or (x < hi if hi_open else x <= hi)
    if not (low_ok and high_ok and (math.isfinite(x) or x in (lo, hi))):
        interval = (f"{'(' if lo_open else '['}{'-inf' if lo is None else f'{lo:g}'}, "
                    f"{'inf' if hi is None else f'{hi:g}'}{')' if hi_open else ']'}")
        raise PlanError(f"{where} = {x:g}{' ' + unit if unit else ''} is outside {interval}")
    return x


def _parameter_table():
    """WheelsetParameters field -> checker(value, where), from the FMU's table of
    variables (fmu_wheelset/fmu/variables.py): the declared range of each parameter."""
    from fmu_wheelset.fmu import variables as fmu_variables
    import solver.model as wheelset
    checks = {}

    def scalar(var):
        if var.type == "Real":
            unit = "" if var.unit in (None, "1") else var.unit
            return lambda value, where: _in_range(_number(value, where), where, var.min, var.max,
                                                  unit=unit)
        if var.type == "Integer":
            def integer(value, where):
                if isinstance(value, bool) or not isinstance(value, int):
                    raise PlanError(f"{where}: expected an integer")
                return _in_range(float(value), where, var.min, var.max)
            return integer
        if var.type == "Boolean":
            def boolean(value, where):
                if not isinstance(value, bool):
                    raise PlanError(f"{where}: expected true or false")
                return value
            return boolean
        if var.type == "Enumeration":
            options = fmu_variables.enumeration_names(var, wheelset)

            def enum(value, where):
                if value not in options:
                    raise PlanError(f"{where}: expected one of {', '.join(options)}")
                return value
            return enum

        load = LOADED_FIELDS.get(var.core)

        def string(value, where):
            if not isinstance(value, str) or not value.strip() or len(value) > MAX_STRING \
                    or "\0" in value:
                raise PlanError(f"{where}: expected a non-empty name or path (at most "
                                f"{MAX_STRING} characters)")
            if load is not None:
                _loads(load, value, where)
            return value
        return string

    for field, variables in fmu_variables.CORE_FIELDS.items():
        if variables[0].component is None:
            checks[field] = scalar(variables[0])
            continue
        parts = [scalar(v) for v in variables]

        def vector(value, where, parts=parts):
            if not isinstance(value, list) or len(value) != len(parts):
                raise PlanError(f"{where}: expected a list of {len(parts)} numbers (x, y, z)")
            for k, (x, check) in enumerate(zip(value, parts)):
                check(x, f"{where}[{k}]")
            return value
        checks[field] = vector
    return checks


def check_profile(value, kind):
    from fmu_wheelset.cli.args import check_profile as check
    return check(value, kind)


def check_track(value):
    """A built-in track name (solver.track.builtins.TRACKS: the FMU's
    track.scenario names) or a track file that loads; ValueError otherwise."""
    import os
    from solver.track.builtins import TRACKS
    from solver.track.alignment import load_track
    if value in TRACKS.names():
        return value
    if os.path.exists(value):
        return load_track(value)
    raise ValueError(f"unknown track {value!r}: not built in ({', '.join(TRACKS.names())}) "
                     "and no such file")


# WheelsetParameters fields whose value is a name or a file that must load
LOADED_FIELDS = {"wheel_profile": "wheel", "rail_profile": "rail", "track": "track"}


def _loads(what: str, value: str, where: str) -> None:
    """Load the wheel or rail profile or the track `value` ("wheel", "rail",
    "track"); PlanError naming `where` with the loader's reason. A file is
    loaded each time (it may have changed); built-in profiles are cached by
    solver.profiles."""
    try:
        if what == "track":
            check_track(value)
        elif what == "preset":
            from fmu_wheelset.cli.args import preset_parameters
            preset_parameters(value)
        else:
            check_profile(value, what)
    except ValueError as exc:          # ProfileError, TrackError, DataFileError, ...
        raise PlanError(f"{where}: {' '.join(str(exc).split())}") from None


def resolve_scenario(name: str, source: str) -> str:
    """The scenario a plan names: a command-line scenario name (the FMU's
    track names; fmu_wheelset/cli/args.py) as it is, a relative file name
    relative to the plan's folder, else as given."""
    import os
    from pathlib import Path
    from fmu_wheelset.cli.args import SCENARIO_ALIASES, SCENARIOS
    if name in SCENARIOS or name in SCENARIO_ALIASES or os.path.isabs(name):
        return name
    candidate = Path(source).parent / name
    return str(candidate.resolve()) if candidate.exists() else name


def check_scenario(name: str, source: str):
    """The plan's base scenario loads (a name or a scenario file, its profiles
    and track too); PlanError otherwise."""
    from fmu_wheelset.cli.args import load_scenario
    where = f"{source}: scenario"
    try:
        scenario = load_scenario(resolve_scenario(name, source))
    except ValueError as exc:
        raise PlanError(f"{where}: {' '.join(str(exc).split())}") from None
    params = scenario.params
    for field, what in LOADED_FIELDS.items():
        value = getattr(params, field)
        if isinstance(value, str):
            _loads(what, value, f"{where} {name}: {field}")
    return scenario


def _radius(value, where):
    x = _number(value, where)
    if x == 0.0 or math.isinf(x):
        return x                      # straight track
    if abs(x) < MIN_RADIUS_M:
        raise PlanError(f"{where} = {x:g} m: a curve radius must be at least {MIN_RADIUS_M:g} m "
                        "in magnitude (0 or inf for straight track)")
    return x


def _preset(value, where):
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_STRING:
        raise PlanError(f"{where}: expected a preset name or a preset file")
    _loads("preset", value, where)
    return value


def _checker(key: str, table: Mapping[str, Any], where: str):
    if key == "preset":
        return _preset
    if key in SPECIAL_RANGES:
        lo, hi, lo_open, hi_open, unit, _ = SPECIAL_RANGES[key]
        return lambda v, w: _in_range(_number(v, w), w, lo, hi, lo_open, hi_open, unit)
    if key == "radius_m":
        return _radius
    if key in table:
        return table[key]
    from solver.model.parameters import WheelsetParameters
    fields = {f.name for f in dataclasses.fields(WheelsetParameters)}
    if key in fields:
        raise PlanError(f"{where}: {key} cannot be varied in a sweep of the FMU (the FMU has "
                        "no parameter for it)")
    if len(key) >= 100:
        raise PlanError(f"{where}: unknown case parameter")
    import difflib
    from fmu_wheelset.fmu.variables import PARAMETERS
    # the FMU's names of the core's fields (contact.friction_coefficient: friction)
    fmu_names = {}
    for var in PARAMETERS:
        if isinstance(var.core, str) and var.core in table:
            for alias in (var.name, var.name.replace(".", "_"), var.name.rsplit(".", 1)[-1]):
                fmu_names.setdefault(alias, var.core)
    known = sorted(SPECIAL_RANGES) + ["radius_m", "preset"] + sorted(table)
    near = ([fmu_names[key]] if key in fmu_names else
            difflib.get_close_matches(key, known, n=3, cutoff=0.6))
    raise PlanError(f"{where}: unknown case parameter {key!r}"
                    + (f" (did you mean {' or '.join(near)}?)" if near else "")
                    + f"; the sweep keys are {', '.join(sorted(SPECIAL_RANGES) + ['radius_m'])} "
                    "and the wheelset's core parameters (`wheelset-fmu stability "
                    "--list-parameters` lists them as wheelset.NAME)")


def _axis(values) -> list:
    return values if isinstance(values, list) else [values]


def check_plan(data: Mapping[str, Any], source: str = "sweep") -> int:
    """Check a parsed sweep TOML (format: fmu_wheelset/sweeps/sweep.py); returns the
    number of cases it gives. PlanError on the first problem."""
    if not isinstance(data, Mapping):
        raise PlanError(f"{source}: not a TOML table")
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise PlanError(f"{source}: unknown key(s) {unknown[:5]} (allowed: {', '.join(sorted(TOP_KEYS))})")
    for key in ("duration", "output_interval", "ramp_time"):
        if key in data:
            _checker(key, {}, source)(data[key], f"{source}: {key}")
    duration = float(data.get("duration", 3.0))
    interval = float(data.get("output_interval", 0.01))
    if "direction" in data and data["direction"] not in ("left", "right"):
        raise PlanError(f"{source}: direction must be \"left\" or \"right\"")
    if "scenario" in data and (not isinstance(data["scenario"], str) or not data["scenario"].strip()
                               or len(data["scenario"]) > MAX_STRING):
        raise PlanError(f"{source}: scenario must be a built-in scenario name or a file name")
    if "grid" in data and "random" in data:
        raise PlanError(f"{source}: give [grid] or [random], not both")
    table = _parameter_table()
    base = check_scenario(data.get("scenario", "kang-r320"), source)
    if "preset" in data:
        _preset(data["preset"], f"{source}: preset")

    fixed = data.get("fixed", {})
    if not isinstance(fixed, Mapping):
        raise PlanError(f"{source}: [fixed] must be a table")
    for key, value in fixed.items():
        _checker(key, table, f"{source}: [fixed]")(value, f"{source}: [fixed] {key}")
    durations = [float(fixed["duration"])] if "duration" in fixed else [duration]

    if "random" in data:
        spec = data["random"]
        if not isinstance(spec, Mapping):
            raise PlanError(f"{source}: [random] must be a table")
        samples = spec.get("samples")
        if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= MAX_CASES:
            raise PlanError(f"{source}: [random] samples must be an integer in [1, {MAX_CASES}]"
                            + (f", got {samples}" if isinstance(samples, int) else ""))
        seed = spec.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise PlanError(f"{source}: [random] seed must be an integer")
        for key, values in spec.items():
            if key in ("samples", "seed"):
                continue
            where = f"{source}: [random] {key}"
            check = _checker(key, table, where)
            values = _axis(values)
            if not values:
                raise PlanError(f"{where}: empty")
            numeric = (len(values) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                for v in values))
            if numeric and not values[0] <= values[1]:
                raise PlanError(f"{where}: the interval [{values[0]:g}, {values[1]:g}] is empty "
                                "(lo must not exceed hi)")
            for k, value in enumerate(values):
                check(value, f"{where}[{k}]")
            if key == "duration":
                durations = values if not numeric else [max(values)]
        n_cases = samples
    else:
        grid = data.get("grid", {})
        if not isinstance(grid, Mapping):
            raise PlanError(f"{source}: [grid] must be a table")
        n_cases = 1
        for key, values in grid.items():
            where = f"{source}: [grid] {key}"
            values = _axis(values)
            if not values:
                raise PlanError(f"{where}: empty axis")
            n_cases *= len(values)
            if n_cases > MAX_CASES:
                break
        if n_cases > MAX_CASES:
            total = math.prod(len(_axis(v)) for v in grid.values())
            raise PlanError(f"{source}: the grid has {total:.3g} cases, more than the "
                            f"{MAX_CASES} one sweep may run (split it)")
        for key, values in grid.items():
            where = f"{source}: [grid] {key}"
            check = _checker(key, table, where)
            for k, value in enumerate(_axis(values)):
                check(value, f"{where}[{k}]")
            if key == "duration":
                durations = _axis(values)
    longest = max(float(d) for d in durations)
    if longest / interval > MAX_OUTPUT_SAMPLES:
        raise PlanError(f"{source}: duration {longest:g} s / output_interval {interval:g} s gives "
                        f"{longest / interval:.3g} outputs per case, more than {MAX_OUTPUT_SAMPLES}")
    _check_derived_cant(data, base.params.speed, source)
    return n_cases


def _case_values(data: Mapping[str, Any], key: str):
    """The values `key` takes in the plan's cases ([fixed], [grid] or [random]:
    a numeric [random] interval by its two ends), or None when no case sets it."""
    for table in ("grid", "random"):
        if isinstance(data.get(table), Mapping) and key in data[table]:
            return [float(v) for v in _axis(data[table][key])]
    fixed = data.get("fixed", {})
    if isinstance(fixed, Mapping) and key in fixed:
        return [float(fixed[key])]
    return None


def _check_derived_cant(data: Mapping[str, Any], scenario_speed: float, source: str):
    """The cant each case derives from its cant deficiency, speed and radius
    (h = V^2 s / (g R) - deficiency, fmu_wheelset/sweeps/sweep.py) within
    DERIVED_CANT_MM; PlanError naming the cases outside it (the extremes: the
    cant grows with the speed and falls with the radius and the deficiency)."""
    deficiencies = _case_values(data, "cant_deficiency_mm")
    radii = _case_values(data, "radius_m")
    if deficiencies is None or radii is None:
        return
    radii = [abs(r) for r in radii if math.isfinite(r) and r != 0.0]
    if not radii:
        return
    speeds = _case_values(data, "speed_kmh") or [scenario_speed * 3.6]
    lo, hi = DERIVED_CANT_MM
    bad = []
    for speed, radius, deficiency in ((min(speeds), max(radii), max(deficiencies)),
                                      (max(speeds), min(radii), min(deficiencies))):
        v = speed / 3.6
        cant = (v * v * RAIL_DISTANCE / (GRAVITY * radius)) * 1e3 - deficiency
        if not lo <= cant <= hi:
            balance = cant + deficiency
            bad.append(f"{speed:g} km/h on R {radius:g} m with {deficiency:g} mm of cant "
                       f"deficiency gives a cant of {cant:.0f} mm (balance cant {balance:.0f} mm)")
    if bad:
        raise PlanError(f"{source}: the cant a case derives from cant_deficiency_mm must lie in "
                        f"[{lo:g}, {hi:g}] mm: " + "; ".join(bad)
                        + " (give cant_mm, or change the speeds, radii or deficiencies)")


def check_workers(n: Optional[int]) -> Optional[int]:
    """None (one per core) or an integer in [1, MAX_WORKERS]."""
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_WORKERS:
        raise PlanError(f"workers must be an integer in [1, {MAX_WORKERS}], got {n!r}")
    return n


def summary_table(rows, width: int = 100) -> str:
    """The failed cases as a plain-text table: key, parameters, reason."""
    failed = [r for r in rows if r.get("status") != "ok"]
    if not failed:
        return ""
    lines = [f"{'case':<16}  {'parameters':<40}  reason", f"{'-' * 16}  {'-' * 40}  {'-' * 30}"]
    for r in failed:
        params = ", ".join(f"{k[5:]}={v:g}" if isinstance(v, float) else f"{k[5:]}={v}"
                           for k, v in r.items() if k.startswith("case."))
        reason = " ".join(str(r.get("message", "")).split())
        lines.append(f"{str(r.get('key', '?')):<16}  {params[:40]:<40}  {reason[:width]}")
    return "\n".join(lines)
