"""Built-in simulation scenarios and scenario files.

A scenario is a set of WheelsetParameters, a duration and an output interval.
Built-in:

- `ren-jin-r400-100`, `ren-jin-r400-80`: Ren & Jin (2010): hollow-worn LMA
  on CHN60 rails (1:40, gauge 1435 mm, back-to-back 1353 mm, r0 = 0.43 m),
  R = 400 m curve (track `ren-jin-r400`: 100 m straight, 100 m transition,
  120 mm cant) at 100 and 80 km/h. Ren & Jin give no vehicle data, so every
  value has another source (REN_JIN_VEHICLE_SOURCES) and the validation
  report shows the sensitivity of the 80 km/h result to the assumed ones:
  wheelset mass and inertia: Kang (2012); primary suspension per axle box
  kx 31.391 MN/m, kz 1.22 MN/m, cx 15, cy 2, cz 4 kN s/m: the Manchester
  benchmark vehicle (Iwnicki 1998); the built-in quarter vehicle (its frame
  follows the wheelset laterally, so the lateral load is the uncompensated
  centrifugal force of the suspended mass, with its roll moment) with the
  Manchester vehicle's heights and secondary suspension; assumed: a 14 t axle
  load (12 400 kg suspended per wheelset, a CRH-type coach), contact damping
  1e5 N s/m, friction 0.3.
- `kang-r320`: Kang (2012): 1600 kg, [660 160 600] kg m^2, S1002 on UIC60 1:20,
  track R = [inf, inf, 320, 320, 320] m (stations every 100 m, 120 mm cant), at
  80 km/h, Polach creep; same built-in bogie.
- `straight-klingel`: a free S1002/UIC60 1:40 wheelset (the WheelsetParameters
  defaults: Manchester benchmark wheelset, no suspension) on straight track at
  5 m/s, released with a 1 mm lateral offset: the kinematic (Klingel-type)
  oscillation of the real profile pair, not of a pure cone (the pure-cone
  Klingel check with its formula is fmu_wheelset/validation/klingel.py).
  At 5 m/s the creep-damping stability limit is ~1 ms, so the model takes
  its internal step from WheelsetModel.stable_internal_step (~0.5 ms).

A scenario file is TOML:

    duration = 10.0          # s
    output_interval = 0.01   # s
    [wheelset]               # any WheelsetParameters field, SI units
    wheel_profile = "S1002"
    speed = 27.78
    track = "kang-r320"      # built-in track name or a track file
"""

from __future__ import annotations

import dataclasses
import math
import os
import tomllib
from dataclasses import dataclass

import numpy as np

from .errors import WheelsetError
from .model.outputs import named_outputs
from .model.parameters import WheelsetParameters
from .registry import Entry, Registry


@dataclass
class Scenario:
    name: str
    params: WheelsetParameters
    duration: float = 10.0
    output_interval: float = 0.01
    description: str = ""


# Where each Ren & Jin scenario value comes from (the paper gives no vehicle data).
REN_JIN_VEHICLE_SOURCES = {
    "wheel/rail profiles, gauge, inclination, back-to-back, r0": "Ren & Jin 2010",
    "track (R 400 m, 120 mm cant, 100 m transition)": "Ren & Jin 2010",
    "mass 1600 kg, inertia [660 160 600] kg m^2": "Kang 2012 (wheelset)",
    "kx 31.391 MN/m, kz 1.22 MN/m per box": "Manchester benchmark vehicle 1 (Iwnicki 1998)",
    "cx 15, cy 2, cz 4 kN s/m per box": "Manchester benchmark vehicle 1 (Iwnicki 1998)",
    "the frame follows the wheelset laterally (the built-in quarter vehicle)": "assumption",
    "carbody share 0.86 at 2.0 m, frame at 0.6 m; secondary 1.0 m high, 0.43 MN m/rad, "
    "0.16 MN/m": "Manchester benchmark vehicle 1 (Iwnicki 1998), per wheelset",
    "suspended mass 12 400 kg (14 t axle load)": "assumption (CRH-type coach)",
    "contact damping 1e5 N s/m (constant, no Hunt & Crossley term)": "assumption",
    "rigid track (prescribed rails), as the published comparisons of the project's validation "
    "were made": "assumption (Ren & Jin's own model has a flexible track; track_model='lumped' "
    "runs the same scenario on the default lumped rail bodies)",
    "friction 0.3": "assumption",
}


def _ren_jin(speed_kmh: float) -> Scenario:
    params = WheelsetParameters(
        wheel_profile="LMA-worn", rail_profile="CHN60", gauge=1.435,
        rail_inclination=math.atan(1.0 / 40.0), back_to_back=1.353, nominal_radius=0.43,
        mass=1600.0, inertia_roll=660.0, inertia_spin=160.0, inertia_yaw=600.0,
        friction=0.3, creep_model="polach", contact_model="multipoint",
        speed=speed_kmh / 3.6, track="ren-jin-r400", bogie=True,
        suspended_mass=12400.0, contact_damping=1e5, track_model="prescribed", hunt_crossley=0.0)
    return Scenario(f"ren-jin-r400-{int(speed_kmh)}", params, duration=12.0, output_interval=0.01,
                    description=f"Ren & Jin 2010: LMA-worn/CHN60, R = 400 m, {speed_kmh:g} km/h")


def _kang() -> Scenario:
    params = WheelsetParameters(
        wheel_profile="S1002", rail_profile="UIC60", gauge=1.435,
        rail_inclination=math.atan(1.0 / 20.0), back_to_back=1.360, nominal_radius=0.46,
        mass=1600.0, inertia_roll=660.0, inertia_spin=160.0, inertia_yaw=600.0,
        friction=0.3, creep_model="polach", contact_model="multipoint",
        speed=80.0 / 3.6, track="kang-r320", bogie=True,
        suspended_mass=12400.0, contact_damping=1e5, track_model="prescribed", hunt_crossley=0.0)
    return Scenario("kang-r320", params, duration=20.0, output_interval=0.01,
                    description="Kang 2012: S1002/UIC60 1:20, R = [inf, inf, 320, 320, 320] m, 80 km/h")


def _klingel() -> Scenario:
    # on the rigid track, without contact damping: Klingel's kinematic oscillation
    # is a rigid-track result
    params = WheelsetParameters(creep_model="kalker", speed=5.0, track="straight",
                                initial_lateral=0.001, track_model="prescribed", hunt_crossley=0.0)
    return Scenario("straight-klingel", params, duration=8.0, output_interval=0.01,
                    description="free S1002/UIC60 1:40 wheelset (no suspension) on straight rigid "
                                "track, 5 m/s, 1 mm initial offset")


def _ren_jin_100() -> Scenario:
    return _ren_jin(100.0)


def _ren_jin_80() -> Scenario:
    return _ren_jin(80.0)


# the built-in scenarios (solver.registry); facts: `track`, the FMU's name of its
# track (track.scenario), which the command line also names the scenario by, and
# `aliases`, the other names the command line takes (fmu_wheelset/cli/args.py,
# through fmu_wheelset/fmu/registries.py)
SCENARIOS = Registry("built-in scenario", error=WheelsetError)
SCENARIOS.register(Entry("ren-jin-r400-100", "Ren & Jin 2010: LMA-worn/CHN60, R 400 m curve, "
                         "100 km/h", builder=_ren_jin_100, source="Ren & Jin (2010)"),
                   track="ren-jin-r400", aliases=("ren-jin-r400-100",))
SCENARIOS.register(Entry("ren-jin-r400-80", "Ren & Jin 2010 at 80 km/h", builder=_ren_jin_80,
                         source="Ren & Jin (2010)"),
                   track=None, aliases=("ren-jin-r400-80",))
SCENARIOS.register(Entry("kang-r320", "Kang 2012: S1002/UIC60 1:20, R 320 m curve, 80 km/h",
                         builder=_kang, source="Kang (2012)"),
                   track="kang-r320", aliases=())
SCENARIOS.register(Entry("straight-klingel", "free S1002/UIC60 wheelset on straight rigid track, "
                         "5 m/s, released 1 mm off centre", builder=_klingel),
                   track="straight", aliases=("straight-klingel",))


# the top-level keys of a scenario file, and those that mark a track file
SCENARIO_FILE_KEYS = ("duration", "output_interval", "description", "wheelset")
TRACK_FILE_KEYS = ("stations", "section", "rail_distance_m")


def scenario_file_problem(data: dict) -> str:
    """Why a parsed TOML document is not a scenario file ('' if it is one): a
    track file (its [stations] or [[section]] tables), unknown keys, or no
    [wheelset] table and no duration (nothing of a scenario: its run would be
    the defaults' free wheelset on straight track)."""
    track_keys = sorted(set(data) & set(TRACK_FILE_KEYS))
    if track_keys:
        return (f"this is a track file ({', '.join(track_keys)}), not a scenario: name it as "
                "the track of a scenario ([wheelset] track = \"FILE\") or pass --track FILE")
    unknown = sorted(set(data) - set(SCENARIO_FILE_KEYS))
    if unknown:
        return (f"unknown top-level key(s) {unknown} (a scenario file has "
                f"{', '.join(SCENARIO_FILE_KEYS)})")
    if "wheelset" not in data and "duration" not in data:
        return "no [wheelset] table and no duration: not a scenario"
    return ""


def load_scenario(name_or_path: str, **overrides) -> Scenario:
    """A built-in scenario by name or a scenario TOML file; `overrides` replace
    WheelsetParameters fields (and `duration`, `output_interval`)."""
    if name_or_path in SCENARIOS.names():
        scenario = SCENARIOS.get(name_or_path).builder()
    elif os.path.exists(name_or_path):
        from .data_files import DataFileError, read_text
        try:
            # a regular UTF-8 file within the size and line caps (solver/data_files.py)
            data = tomllib.loads(read_text(name_or_path))
        except DataFileError as exc:
            raise WheelsetError(f"scenario file {exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise WheelsetError(f"scenario file {name_or_path}: not valid TOML: {exc}") from None
        problem = scenario_file_problem(data)
        if problem:
            raise WheelsetError(f"scenario file {name_or_path}: {problem}")
        known = {f.name for f in dataclasses.fields(WheelsetParameters)}
        if not isinstance(data.get("wheelset", {}), dict):
            raise WheelsetError(f"scenario file {name_or_path}: [wheelset] must be a table")
        wheelset = dict(data.get("wheelset", {}))
        unknown = set(wheelset) - known
        if unknown:
            raise WheelsetError(f"scenario file {name_or_path}: unknown wheelset keys {sorted(unknown)}")
        try:
            for key in ("suspension_stiffness", "suspension_damping"):
                if key in wheelset:
                    wheelset[key] = tuple(wheelset[key])
            scenario = Scenario(os.path.basename(name_or_path), WheelsetParameters(**wheelset),
                                duration=float(data.get("duration", 10.0)),
                                output_interval=float(data.get("output_interval", 0.01)),
                                description=str(data.get("description", "")))
        except (TypeError, ValueError) as exc:
            raise WheelsetError(f"scenario file {name_or_path}: {exc}") from exc
    else:
        raise WheelsetError(f"unknown scenario {name_or_path!r}: not built in "
                            f"({', '.join(SCENARIOS.names())}) and no such file")
    for key in ("duration", "output_interval"):
        if key in overrides:
            setattr(scenario, key, float(overrides.pop(key)))
    if overrides:
        scenario.params = dataclasses.replace(scenario.params, **overrides)
    if not (scenario.duration > 0 and scenario.output_interval > 0):
        raise WheelsetError("duration and output_interval must be positive")
    return scenario


def first_curve(track):
    """(where the track's first curve or transition begins, where it reaches its
    first constant curvature) in m along the track, or None for a straight
    track (a Track of solver/track/alignment.py, or a name or file)."""
    from .model.parameters import resolve_track
    table = resolve_track(track).segment_table()
    from .layout import TT_K0, TT_KR, TT_S0
    begins = full = None
    for j in range(table.shape[1]):
        curved = table[TT_K0, j] != 0.0 or table[TT_KR, j] != 0.0
        if curved and begins is None:
            begins = float(table[TT_S0, j])
        if begins is not None and table[TT_KR, j] == 0.0 and table[TT_K0, j] != 0.0:
            full = float(table[TT_S0, j])
            break
    return None if begins is None else (begins, full if full is not None else begins)


def short_of_the_curve(scenario, distance) -> str:
    """A sentence when a run of `scenario` that ends at `distance` (m) stops short
    of its track's first curve ('' otherwise): its results hold no curving, whatever
    the scenario's name says."""
    curve = first_curve(scenario.params.track)
    if curve is None or distance >= curve[0]:
        return ""
    begins, full = curve
    speed = scenario.params.speed
    needed = (full + 20.0) / speed if speed > 0 else float("inf")
    return (f"the run ends at {distance:.1f} m, before the track's first curve (it begins at "
            f"{begins:.0f} m, full at {full:.0f} m): nothing of the curve is simulated; "
            f"--duration {math.ceil(needed):d} reaches it at {speed:.3g} m/s")


# Columns recorded by `simulate`, per time step: every named quantity of the
# model's output record, under the project's output names (solver.model.wheelset
# RECORD_INDEX: the FMU's output names, e.g. "wheel.left.Q",
# "contact.left.point[1].normal_force"; "time" in s).
def _record(model) -> dict:
    return named_outputs(model.record)


@dataclass
class SimulationResult:
    scenario: Scenario
    columns: dict          # output name (solver.model.outputs.RECORD_INDEX) -> 1-D array over the output times
    status: str
    message: str
    wall_time: float
    rhs_evaluations: int
    internal_step: float = float("nan")   # s, the step the model used (stable_internal_step)

    def write_csv(self, path):
        names = list(self.columns)
        data = np.column_stack([np.asarray(self.columns[n], dtype=float) for n in names])
        np.savetxt(path, data, delimiter=",", header=",".join(names), comments="", fmt="%.10g")


def simulate(scenario: Scenario, progress: bool = False, inputs=None) -> SimulationResult:
    """Run the core without the FMU: initialise, then advance by output_interval."""
    import time as _time
    from .model.wheelset import WheelsetModel
    model = WheelsetModel(scenario.params)
    model.initialize(inputs)
    n_steps = int(round(scenario.duration / scenario.output_interval))
    rows = [_record(model)]
    status, message = "ok", ""
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=n_steps, desc=scenario.name, unit="step")
    t0 = _time.perf_counter()
    for _ in range(n_steps):
        result = model.advance(scenario.output_interval, inputs)
        if result.status != "ok":
            status, message = result.status, f"t = {model.time:.3f} s: {result.message}"
            break
        rows.append(_record(model))
        if bar is not None:
            bar.update(1)
    wall = _time.perf_counter() - t0
    if bar is not None:
        bar.close()
    columns = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    return SimulationResult(scenario, columns, status, message, wall, model.rhs_evaluations,
                            model.internal_step)
