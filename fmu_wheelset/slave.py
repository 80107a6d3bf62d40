"""pythonfmu slave of the wheelset FMU (FMI 2.0 co-simulation).

No physics here: this module only converts FMI variables to the core's
``WheelsetParameters``, its input vector and its output record
(``docs/CONVENTIONS.md``, "Wheelset core").

Inside the FMU this file is ``resources/wheelset_fmu_slave.py`` beside a copy of
the ``solver`` package; pythonfmu enters through ``resources/wheelset_slave.py``
(``fmu_wheelset/slave_entry.py``, which imports the class from here: see there
why). It imports nothing but the standard library, NumPy and pythonfmu at module
level, so that pythonfmu can instantiate it cheaply at build time to read the
start values. The core is imported and the model created in
``exit_initialization_mode``; ``fmi2Instantiate`` also drops the duplicate
``sys.path`` entries that pythonfmu adds for every instance.

Per-step data path (one communication step costs ~one numba call plus a few
NumPy operations, see benchmarks/bench_fmu.py): the inputs and outputs live in
one float array per instance (``_io``: the Real inputs, then the outputs in
their declaration order); ``fmi2SetReal`` writes the inputs into it,
``fmi2DoStep`` maps them to the core's input vector with one matrix product
(plus the cross-level roll, which is not linear), calls
``WheelsetModel.advance_vector`` and copies the outputs from the core's record
with one ``numpy.take``; ``fmi2GetReal/Integer/Boolean`` read the array through
an index built once per list of value references.

Variable names follow the FMI 2.0 "structured" convention: dots for the
hierarchy, ``[i]`` (1-based) for the contact slots, ``left`` / ``right`` for the
sides (see ``VARIABLES`` below and the report in ``fmu_wheelset/build.py``).

Status mapping of pythonfmu 0.7.0 (its C++ wrapper, ``fmi2DoStep``):
``do_step`` returning ``False`` gives **fmi2Discard**; a Python exception in any
callback gives **fmi2Fatal**, and pythonfmu then releases the instance's Python
objects, which ``fmi2FreeInstance`` releases a second time (a crash later in the
host). There is no way to return fmi2Error from Python. So nothing here raises:
a step that cannot be completed (NaN or infinite input, derailment, loss of all
contact, a core error) returns ``False`` -> fmi2Discard, with the reason logged
with status fmi2Error and the model left as it was before the step (the host
may roll back with fmi2SetFMUstate, change its inputs and retry). Bad
parameters (unknown profile, unreadable file, value out of range) are found in
``fmi2ExitInitializationMode``: it logs the reason with status fmi2Error (its
own return status stays fmi2OK, pythonfmu cannot do otherwise) and every
``fmi2DoStep`` then returns fmi2Discard with that reason.

Several instances may live in one process: everything is per instance; the
module holds only constants.
"""
from __future__ import annotations

import copy
import hashlib
import math
import os
import pickle
import shutil
import sys
import tempfile
import weakref
from typing import Any, Dict, NamedTuple, Optional, Tuple

import numpy as np
from pythonfmu import Fmi2Slave
from pythonfmu.enums import Fmi2Causality, Fmi2Initial, Fmi2Status, Fmi2Variability
from pythonfmu.variables import Boolean, Integer, Real, String

FMU_VERSION = "0.1.0"

# Enumerations (Integer variables in pythonfmu; the build turns them into FMI
# Enumeration types). Values are the solver's integer ids.
CREEP_MODELS = ("kalker", "she", "polach", "fastsim")          # 0 1 2 3
CONTACT_MODELS = ("single", "multipoint")                       # 0 1
ENUMERATIONS = {
    "CreepModel": (("Kalker", "Kalker's linear theory"),
                   ("SHE", "Shen-Hedrick-Elkins saturation of Kalker's forces"),
                   ("Polach", "Polach 1999/2005 method"),
                   ("FASTSIM", "Kalker's simplified theory, FASTSIM")),
    "ContactModel": (("SinglePoint", "one contact point per wheel (the deepest)"),
                     ("Multipoint", "up to three independent contact points per wheel "
                                    "(trace-line extremum detection, Ren & Jin 2010)")),
    "Integrator": (("RK4", "classical Runge-Kutta, 4th order"),
                   ("SemiImplicit", "semi-implicit (symplectic) Euler")),
}
INTEGRATORS = ("rk4", "semi-implicit")                         # 0 1

SIDES = ("left", "right")
POINTS_PER_WHEEL = 3
INF = float("inf")


class Var(NamedTuple):
    """Definition of one FMI variable (the single source of truth: the slave
    registers it, the build writes unit/min/max/declaredType from it)."""
    name: str
    kind: str                 # "Real" | "Integer" | "Boolean" | "String" | "Enumeration"
    causality: str            # "parameter" | "input" | "output"
    start: Any
    description: str
    unit: Optional[str] = None
    min: Optional[float] = None
    max: Optional[float] = None
    type_name: Optional[str] = None   # declaredType (Enumeration name or SimpleType)


def _p(name, kind, start, description, unit=None, lo=None, hi=None, type_name=None):
    return Var(name, kind, "parameter", start, description, unit, lo, hi, type_name)


def _i(name, start, description, unit, lo, hi):
    return Var(name, "Real", "input", start, description, unit, lo, hi)


def _o(name, kind, start, description, unit=None, lo=None, hi=None):
    return Var(name, kind, "output", start, description, unit, lo, hi)


BIG_FORCE = 1.0e7       # N, bound of forces (a wheel load is ~1e5 N)
BIG_MOMENT = 1.0e7      # N.m
BIG_LENGTH = 1.0e7      # m, travelled distance


def _variables() -> Tuple[Var, ...]:
    v = []
    # ---------------------------------------------------------------- parameters
    v += [
        _p("wheel.profile", "String", "S1002",
           "wheel profile: built-in name (S1002, LMA, LMA-worn), a file in the FMU "
           "resources (e.g. profiles/my_wheel.txt) or a path; files in mm"),
        _p("rail.profile", "String", "UIC60",
           "rail profile: built-in name (UIC60, 60E1, CHN60), a file in the FMU "
           "resources or a path; files in mm"),
        _p("track.gauge", "Real", 1.435, "track gauge, measured 14 mm below the rail top",
           "m", 1.0, 2.0),
        _p("rail.inclination", "Real", math.atan(1.0 / 40.0),
           "rail cant (inclination of the rail towards the track centre), 1:40 = 0.025 rad",
           "rad", 0.0, 0.2),
        _p("wheelset.back_to_back", "Real", 1.360, "distance between the wheels' inner faces",
           "m", 1.0, 2.0),
        _p("wheel.nominal_rolling_radius", "Real", 0.46,
           "wheel radius at the taping line (nominal rolling circle)", "m", 0.1, 1.5),
        _p("wheelset.mass", "Real", 1813.0, "wheelset mass", "kg", 1.0, 1.0e5),
        _p("wheelset.inertia.x", "Real", 1120.0, "roll moment of inertia (about x)",
           "kg.m2", 1.0e-3, 1.0e5),
        _p("wheelset.inertia.y", "Real", 112.0, "spin moment of inertia (about the axle, y)",
           "kg.m2", 1.0e-3, 1.0e5),
        _p("wheelset.inertia.z", "Real", 1120.0, "yaw moment of inertia (about z)",
           "kg.m2", 1.0e-3, 1.0e5),
        _p("material.youngs_modulus", "Real", 2.1e11, "Young's modulus of wheel and rail",
           "Pa", 1.0e9, 1.0e12),
        _p("material.poisson_ratio", "Real", 0.28, "Poisson's ratio of wheel and rail",
           "1", 0.0, 0.5),
        _p("contact.friction_coefficient", "Real", 0.3, "wheel-rail friction coefficient",
           "1", 0.0, 2.0),
        _p("contact.creep_model", "Enumeration", 2,
           "tangential contact model: 0 Kalker linear, 1 SHE, 2 Polach, 3 FASTSIM",
           type_name="CreepModel"),
        _p("contact.model", "Enumeration", 1,
           "contact points per wheel: 0 single point, 1 multipoint (up to 3)",
           type_name="ContactModel"),
        _p("contact.multipoint.min_separation", "Real", 0.008,
           "e_d of Ren & Jin (Eq. 5): minimum lateral separation of two contact points",
           "m", 0.0, 0.1),
        _p("contact.multipoint.min_slope_difference", "Real", 0.025,
           "e_k of Ren & Jin (Eq. 7): minimum difference of the contact angle tangents",
           "1", 0.0, 10.0),
        _p("contact.damping", "Real", 0.0,
           "normal contact damping C in N = K delta^1.5 + C d(delta)/dt (Kang 2012)",
           "N.s/m", 0.0, 1.0e9),
        _p("contact.max_penetration", "Real", 2.0e-3,
           "a step with a larger normal penetration is discarded (impact or instability)",
           "m", 1.0e-6, 0.1),
        _p("contact.lift_tolerance", "Real", 1.0e-3,
           "contact is lost (step discarded) when both wheels are further than this off "
           "their rails", "m", 1.0e-6, 0.1),
        _p("solver.internal_step", "Real", 1.0e-3,
           "largest internal integration step; a communication step is split into equal "
           "sub-steps no longer than this", "s", 1.0e-7, 0.01),
        _p("solver.integrator", "Enumeration", 0,
           "internal integrator: 0 classical Runge-Kutta 4, 1 semi-implicit Euler",
           type_name="Integrator"),
        _p("wheelset.initial_lateral", "Real", 0.0,
           "lateral displacement at t = 0 (static equilibrium is found there)", "m", -0.05, 0.05),
        _p("wheelset.initial_yaw", "Real", 0.0, "yaw angle at t = 0", "rad", -0.1, 0.1),
        _p("wheelset.axle_box_semi_spacing", "Real", 1.0,
           "half the lateral distance between the axle boxes (where the inputs act)",
           "m", 0.1, 2.0),
        _p("suspension.builtin", "Boolean", False,
           "stand-alone runs: a built-in primary suspension (Iwnicki 1998 stiffness and "
           "damping) to a frame following the track centreline; false when the host "
           "supplies the axle-box forces"),
        *[_p(f"suspension.stiffness.{ax}", "Real", k,
             f"built-in primary suspension: {ax} stiffness per axle box", "N/m", 0.0, 1.0e10)
          for ax, k in zip("xyz", (31.391e6, 3.884e6, 1.22e6))],
        *[_p(f"suspension.damping.{ax}", "Real", c,
             f"built-in primary suspension: {ax} damping per axle box", "N.s/m", 0.0, 1.0e9)
          for ax, c in zip("xyz", (15.0e3, 2.0e3, 4.0e3))],
        _p("suspension.suspended_mass", "Real", 0.0,
           "share of the vehicle mass carried by this wheelset (built-in suspension only)",
           "kg", 0.0, 1.0e5),
        _p("wheelset.speed", "Real", 27.78, "forward speed along the track",
           "m/s", 0.0, 150.0),
        _p("track.scenario", "String", "straight",
           "track: built-in scenario (straight, ren-jin-r400, kang-r320), a TOML/CSV file "
           "in the FMU resources (e.g. scenarios/kang-r320.toml) or a path"),
        _p("track.direction", "String", "left",
           "side of the curves of a built-in scenario: left or right"),
        _p("track.curvature_from_input", "Boolean", False,
           "take the track curvature from the input track.curvature instead of the scenario"),
        _p("track.cant_from_input", "Boolean", False,
           "take the cant angle from the input track.cant_angle instead of the scenario"),
        _p("benchmark.skip_core", "Boolean", False,
           "benchmarking only: doStep converts inputs and outputs but does not advance the "
           "core (measures the FMI layer)"),
    ]
    # -------------------------------------------------------------------- inputs
    for side in SIDES:
        for ax in "xyz":
            v.append(_i(f"axlebox.{side}.force.{ax}", 0.0,
                        f"{ax} force of the primary suspension on the wheelset at the {side} "
                        f"axle box, track frame (x forward, y left, z up)",
                        "N", -BIG_FORCE, BIG_FORCE))
        for ax in "xyz":
            v.append(_i(f"axlebox.{side}.moment.{ax}", 0.0,
                        f"moment about {ax} of the primary suspension on the wheelset at the "
                        f"{side} axle box, track frame", "N.m", -BIG_MOMENT, BIG_MOMENT))
    v.append(_i("axle.torque", 0.0, "traction/braking torque on the axle, + drives forward",
                "N.m", -BIG_MOMENT, BIG_MOMENT))
    for side in SIDES:
        v += [
            _i(f"rail.{side}.lateral_displacement", 0.0,
               f"lateral displacement of the {side} rail under the wheel (+y, track FE)",
               "m", -0.1, 0.1),
            _i(f"rail.{side}.vertical_displacement", 0.0,
               f"vertical displacement of the {side} rail under the wheel (+z)", "m", -0.1, 0.1),
            _i(f"rail.{side}.roll_angle", 0.0,
               f"roll of the {side} rail about +x (+ raises the head's left edge)",
               "rad", -0.5, 0.5),
            _i(f"rail.{side}.lateral_velocity", 0.0,
               f"time derivative of rail.{side}.lateral_displacement", "m/s", -100.0, 100.0),
            _i(f"rail.{side}.vertical_velocity", 0.0,
               f"time derivative of rail.{side}.vertical_displacement", "m/s", -100.0, 100.0),
            _i(f"rail.{side}.roll_rate", 0.0,
               f"time derivative of rail.{side}.roll_angle", "rad/s", -1000.0, 1000.0),
        ]
    v += [
        _i("track.curvature", 0.0, "track curvature 1/R, + for a left curve (used when "
           "track.curvature_from_input)", "1/m", -1.0, 1.0),
        _i("track.cant_angle", 0.0, "track roll angle about +x, + lifts the left rail "
           "(used when track.cant_from_input)", "rad", -0.5, 0.5),
    ]
    for comp, desc in (("alignment", "lateral alignment (+y)"), ("level", "vertical level (+z)"),
                       ("gauge", "gauge deviation (+ = wider)"),
                       ("cross_level", "cross level z_left - z_right")):
        v.append(_i(f"track.irregularity.{comp}", 0.0,
                    f"track irregularity: {desc}, added to the rail displacements",
                    "m", -0.1, 0.1))
        v.append(_i(f"track.irregularity.{comp}_velocity", 0.0,
                    f"time derivative of track.irregularity.{comp}", "m/s", -100.0, 100.0))
    # ------------------------------------------------------------------- outputs
    v += [
        _o("wheelset.distance", "Real", 0.0, "travelled distance s along the track", "m",
           -BIG_LENGTH, BIG_LENGTH),
        _o("wheelset.x", "Real", 0.0, "longitudinal displacement of the wheelset centre "
           "relative to the frame moving along the track at wheelset.speed", "m", -10.0, 10.0),
        _o("wheelset.y", "Real", 0.0, "lateral displacement of the wheelset centre "
           "relative to the track centreline (+ left)", "m", -1.0, 1.0),
        _o("wheelset.z", "Real", 0.0, "vertical displacement of the wheelset centre (+ up)",
           "m", -1.0, 1.0),
        _o("wheelset.roll", "Real", 0.0, "roll angle about +x relative to the track", "rad",
           -math.pi, math.pi),
        _o("wheelset.yaw", "Real", 0.0, "yaw angle about +z relative to the track", "rad",
           -math.pi, math.pi),
        _o("wheelset.pitch", "Real", 0.0, "rotation angle of the axle about y (spin angle)",
           "rad", -1.0e9, 1.0e9),
        _o("wheelset.velocity.x", "Real", 0.0, "longitudinal velocity relative to the frame "
           "moving at wheelset.speed", "m/s", -1000.0, 1000.0),
        _o("wheelset.velocity.y", "Real", 0.0, "lateral velocity", "m/s", -1000.0, 1000.0),
        _o("wheelset.velocity.z", "Real", 0.0, "vertical velocity", "m/s", -1000.0, 1000.0),
        _o("wheelset.roll_rate", "Real", 0.0, "roll rate", "rad/s", -1.0e4, 1.0e4),
        _o("wheelset.yaw_rate", "Real", 0.0, "yaw rate", "rad/s", -1.0e4, 1.0e4),
        _o("wheelset.spin_rate", "Real", 0.0, "angular velocity of the axle about y",
           "rad/s", -1.0e4, 1.0e4),
    ]
    for side in SIDES:
        for ax in "xyz":
            v.append(_o(f"axlebox.{side}.position.{ax}", "Real", 0.0,
                        f"{ax} position of the {side} axle box centre, track frame "
                        f"relative to the track centreline at the wheelset", "m",
                        -BIG_LENGTH, BIG_LENGTH))
        for ax in "xyz":
            v.append(_o(f"axlebox.{side}.velocity.{ax}", "Real", 0.0,
                        f"{ax} velocity of the {side} axle box centre, track frame", "m/s",
                        -1000.0, 1000.0))
    for side in SIDES:
        for ax in "xyz":
            v.append(_o(f"wheel.{side}.force_on_rail.{ax}", "Real", 0.0,
                        f"{ax} component of the resultant force of the {side} wheel on its "
                        f"rail, track frame (sum over the contact points)", "N",
                        -BIG_FORCE, BIG_FORCE))
        v += [
            _o(f"wheel.{side}.Y", "Real", 0.0, f"lateral wheel-rail force Y of the {side} "
               f"wheel on the rail, + towards the field side (outwards)", "N",
               -BIG_FORCE, BIG_FORCE),
            _o(f"wheel.{side}.Q", "Real", 0.0, f"vertical wheel load Q of the {side} wheel "
               f"on the rail, + downwards", "N", -BIG_FORCE, BIG_FORCE),
            _o(f"wheel.{side}.Y_over_Q", "Real", 0.0, f"derailment quotient Y/Q of the {side} "
               f"wheel (0 when unloaded)", "1", -100.0, 100.0),
            _o(f"wheel.{side}.active_points", "Integer", 0,
               f"number of active contact points of the {side} wheel (0..3)"),
            _o(f"wheel.{side}.lift", "Boolean", False,
               f"the {side} wheel has lost contact with its rail"),
        ]
    for side in SIDES:
        for k in range(1, POINTS_PER_WHEEL + 1):
            pre = f"contact.{side}.point[{k}]"
            what = f"contact slot {k} of the {side} wheel"
            v += [
                _o(f"{pre}.active", "Boolean", False, f"{what}: in contact"),
                _o(f"{pre}.wheel_lateral", "Real", 0.0, f"{what}: lateral position on the "
                   f"wheel profile, s from the taping line, + towards the field side", "m",
                   -1.0, 1.0),
                _o(f"{pre}.rail_lateral", "Real", 0.0, f"{what}: lateral position on the rail "
                   f"profile, u from the rail-head centreline, + towards the field side", "m",
                   -1.0, 1.0),
                _o(f"{pre}.position.y", "Real", 0.0, f"{what}: lateral position of the point "
                   f"in the track frame", "m", -10.0, 10.0),
                _o(f"{pre}.position.z", "Real", 0.0, f"{what}: vertical position of the point "
                   f"in the track frame", "m", -10.0, 10.0),
                _o(f"{pre}.contact_angle", "Real", 0.0, f"{what}: contact angle, + when the "
                   f"rail pushes the wheel towards the track centre", "rad",
                   -math.pi / 2, math.pi / 2),
                _o(f"{pre}.rolling_radius", "Real", 0.0, f"{what}: wheel rolling radius at "
                   f"the point", "m", 0.0, 10.0),
                _o(f"{pre}.longitudinal_creepage", "Real", 0.0, f"{what}: longitudinal "
                   f"creepage xi", "1", -10.0, 10.0),
                _o(f"{pre}.lateral_creepage", "Real", 0.0, f"{what}: lateral creepage eta",
                   "1", -10.0, 10.0),
                _o(f"{pre}.spin_creepage", "Real", 0.0, f"{what}: spin creepage phi", "1/m",
                   -1.0e4, 1.0e4),
                _o(f"{pre}.normal_force", "Real", 0.0, f"{what}: normal force (>= 0)", "N",
                   0.0, BIG_FORCE),
                _o(f"{pre}.longitudinal_force", "Real", 0.0, f"{what}: longitudinal creep "
                   f"force of the rail on the wheel, contact frame", "N",
                   -BIG_FORCE, BIG_FORCE),
                _o(f"{pre}.lateral_force", "Real", 0.0, f"{what}: lateral creep force of the "
                   f"rail on the wheel, contact frame", "N", -BIG_FORCE, BIG_FORCE),
                _o(f"{pre}.spin_moment", "Real", 0.0, f"{what}: spin creep moment of the rail "
                   f"on the wheel about the contact normal", "N.m", -BIG_MOMENT, BIG_MOMENT),
            ]
    v += [
        _o("status.derailment", "Boolean", False,
           "derailment: a flange has climbed over its rail (the step was discarded)"),
        _o("status.wheel_lift", "Boolean", False,
           "at least one wheel has lost contact (or, after a discarded step, both wheels "
           "lifted off the rails)"),
        _o("status.excessive_penetration", "Boolean", False,
           "the last step was discarded: penetration above contact.max_penetration "
           "(impact or instability)"),
    ]
    return tuple(v)


VARIABLES: Tuple[Var, ...] = _variables()
INPUT_NAMES = tuple(var.name for var in VARIABLES if var.causality == "input")
OUTPUT_NAMES = tuple(var.name for var in VARIABLES if var.causality == "output")
STATUS_NAMES = ("status.derailment", "status.wheel_lift", "status.excessive_penetration")

_FMI_CLASS = {"Real": Real, "Integer": Integer, "Enumeration": Integer,
              "Boolean": Boolean, "String": String}
_CAUSALITY = {"parameter": Fmi2Causality.parameter, "input": Fmi2Causality.input,
              "output": Fmi2Causality.output}


# ---------------------------------------------------------------------------
# importing the bundled core with a stable numba cache
# ---------------------------------------------------------------------------
def _tree_digest(root: str) -> str:
    """sha256 of the relative paths and contents of the .py/data files under root."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".pyc", ".nbi", ".nbc")):
                continue
            path = os.path.join(dirpath, name)
            h.update(os.path.relpath(path, root).replace(os.sep, "/").encode())
            h.update(b"\0")
            with open(path, "rb") as f:
                h.update(f.read())
            h.update(b"\0")
    return h.hexdigest()[:16]


def cache_root() -> str:
    """Per-user cache directory of the FMU: $WHEELSET_FMU_CACHE, else
    $XDG_CACHE_HOME/wheelset-fmu, else ~/.cache/wheelset-fmu
    (WHEELSET_FMU_CACHE=off: no cache copy, import the solver from the resources)."""
    explicit = os.environ.get("WHEELSET_FMU_CACHE")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "wheelset-fmu")


def stable_solver_dir(resources: str) -> Optional[str]:
    """Copy resources/solver once to <cache>/solver-<hash of its sources>/solver and
    return the directory to put on sys.path (None if there is no bundled solver
    or the cache is not writable: then the resources copy is used).

    numba's on-disk cache is keyed by the source file's path and mtime; a fresh
    FMU extraction has a new path each time, so importing from it would compile
    every kernel again. The copy keeps one path (and mtime) per source version."""
    src = os.path.join(resources, "solver")
    if os.environ.get("WHEELSET_FMU_CACHE", "").lower() == "off":
        return None                         # measurement switch: import from resources
    if not os.path.isfile(os.path.join(src, "__init__.py")):
        return None
    try:
        digest = _tree_digest(src)
        target = os.path.join(cache_root(), f"solver-{digest}")
        if os.path.isfile(os.path.join(target, "solver", "__init__.py")):
            return target
        os.makedirs(cache_root(), exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=f"solver-{digest}.tmp-", dir=cache_root())
        shutil.copytree(src, os.path.join(tmp, "solver"),
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        try:
            os.rename(tmp, target)          # atomic; another process may have won
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
        if os.path.isfile(os.path.join(target, "solver", "__init__.py")):
            return target
    except OSError:
        pass
    return None


def import_core(resources: Optional[str]):
    """Import solver.wheelset (and solver.track), from the stable cache copy of the
    bundled solver when there is one. Returns (wheelset_module, track_module,
    where_from)."""
    import importlib
    if "solver" not in sys.modules:
        stable = stable_solver_dir(resources) if resources else None
        if stable is not None and stable not in sys.path:
            sys.path.insert(0, stable)
    wheelset = importlib.import_module("solver.wheelset")
    track = importlib.import_module("solver.track")
    return wheelset, track, os.path.dirname(os.path.dirname(os.path.abspath(wheelset.__file__)))


def _is_finite(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


# ---------------------------------------------------------------------------
# living with pythonfmu 0.7.0's instantiation (see fmu_wheelset/slave_entry.py)
# ---------------------------------------------------------------------------
_ENTRY_GLOBALS_KEPT: list = []


def keep_globals_alive(namespace: dict) -> None:
    """One reference to the entry module's globals per execution of that module
    (pythonfmu releases one it never took each time it executes it)."""
    _ENTRY_GLOBALS_KEPT.append(namespace)


def drop_duplicate_path_entries(entry: Optional[str]) -> None:
    """pythonfmu inserts the resources folder at the front of sys.path for every
    instance; keep its first occurrence only (sys.path would grow by one entry
    per instantiation, and every import searches it)."""
    if not entry:
        return
    first = True
    kept = []
    for p in sys.path:
        if p == entry:
            if not first:
                continue
            first = False
        kept.append(p)
    if len(kept) != len(sys.path):
        sys.path[:] = kept


# ---------------------------------------------------------------------------
# the slave
# ---------------------------------------------------------------------------
class Wheelset(Fmi2Slave):
    """Railway wheelset with multipoint wheel-rail contact (6 DOF, SI units)."""

    author = "wheelset-fmu contributors"
    description = ("Railway wheelset with multipoint wheel-rail contact (trace-line "
                   "multipoint detection, Hertz normal contact, Kalker/SHE/Polach/FASTSIM "
                   "creep), 6-DOF dynamics; inputs: primary suspension forces on the axle "
                   "boxes, axle torque, rail motion; SI units")
    version = FMU_VERSION
    license = "MIT"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        drop_duplicate_path_entries(self.resources)
        # everything per instance; __init__ is cheap (no solver import)
        self._values: Dict[str, Any] = {var.name: var.start for var in VARIABLES
                                        if var.causality == "parameter"}
        # inputs then outputs, in declaration order (the FMU state copies this array)
        self._io = np.array([float(var.start) for var in VARIABLES if var.causality != "parameter"])
        self._u = self._io[:len(INPUT_NAMES)]          # views, never rebound
        self._y = self._io[len(INPUT_NAMES):]
        self._io_slot: Dict[int, Tuple[str, int]] = {}  # value reference -> (kind, slot in _io)
        self._index_cache: Dict[Any, Any] = {}          # (kind, vrs) -> index array or None
        self._real_names: Dict[int, str] = {}           # value reference -> name, Reals only
        self._model = None
        self._core = None           # (wheelset module, track module)
        self._initialized = False
        self._failed: Optional[str] = None
        self._time = 0.0
        self._skip_core = False
        self._input_map = None      # (matrix, offset, cross-level slots) to the core's inputs
        self._record_index = None   # output slot -> index in the core's record
        slot = 0
        for var in VARIABLES:
            self._register(var, None if var.causality == "parameter" else slot)
            if var.causality != "parameter":
                slot += 1

    # -- registration ------------------------------------------------------
    def _register(self, var: Var, slot: Optional[int]):
        name = var.name
        cls = _FMI_CLASS[var.kind]
        io = self._io
        if slot is None:
            values = self._values
            getter = lambda: values[name]                       # noqa: E731
        else:
            getter = lambda: io[slot]                           # noqa: E731
        kwargs = dict(causality=_CAUSALITY[var.causality], description=var.description,
                      getter=getter)
        if var.causality == "parameter":
            kwargs["variability"] = Fmi2Variability.fixed
            kwargs["initial"] = Fmi2Initial.exact
            # a weak reference: no cycle instance -> variable -> setter -> instance,
            # so that fmi2FreeInstance frees the instance at once (no wait for the
            # cyclic garbage collector)
            owner = weakref.ref(self)
            kwargs["setter"] = lambda value: owner()._set_parameter(name, value)
        elif var.causality == "input":
            kwargs["variability"] = Fmi2Variability.continuous
            kwargs["setter"] = lambda value: io.__setitem__(slot, value)
        else:
            kwargs["variability"] = (Fmi2Variability.continuous if var.kind == "Real"
                                     else Fmi2Variability.discrete)
            kwargs["initial"] = Fmi2Initial.approx
        variable = cls(name, **kwargs)
        self.register_variable(variable, nested=False)
        if var.kind == "Real":
            self._real_names[variable.value_reference] = name
        if slot is not None:
            self._io_slot[variable.value_reference] = (var.kind, slot)

    def _set_parameter(self, name: str, value):
        if self._initialized:
            # pythonfmu 0.7.0 cannot return fmi2Error from fmi2SetReal (an exception
            # would be fmi2Fatal): the value is refused and the error logged.
            self._error(f"parameter {name} cannot be changed after initialization "
                        f"(fixed variability); the new value {value!r} is ignored")
            return
        self._values[name] = value

    # -- helpers -----------------------------------------------------------
    def _error(self, message: str, status: Fmi2Status = Fmi2Status.error):
        self.log(message, status)

    def _resolve_file(self, value: str) -> Optional[str]:
        """A relative name is looked up in the FMU resources, then the working
        directory; an absolute path is used as is. None if no such file."""
        candidates = [value] if os.path.isabs(value) else (
            ([os.path.join(self.resources, value)] if self.resources else []) + [value])
        for c in candidates:
            if os.path.isfile(c):
                return c
        return None

    # -- FMI ---------------------------------------------------------------
    def setup_experiment(self, start_time, stop_time=None, tolerance=None):
        # the first doStep must start here (FMI 2.0 fmi2SetupExperiment)
        self._time = float(start_time) if start_time is not None and math.isfinite(start_time) else 0.0

    def exit_initialization_mode(self):
        # Never raise here: a Python exception makes pythonfmu 0.7.0 return
        # fmi2Fatal and release the instance's Python objects, and the host's
        # fmi2FreeInstance then releases them a second time (crash). A bad
        # parameter is logged with status fmi2Error and every doStep returns
        # fmi2Discard with the reason.
        try:
            wheelset, track, where = import_core(self.resources)
            self._core = (wheelset, track)
            params = _adapter.make_parameters(self, wheelset, track)
            model = wheelset.WheelsetModel(params)
            model.initialize()
        except Exception as exc:  # noqa: BLE001 - reported to the host
            self._failed = f"initialization failed: {exc}"
            self._error(f"{self.instance_name}: {self._failed}")
            return
        self.log(f"{self.instance_name}: solver imported from {where}", Fmi2Status.ok)
        self._model = model
        self._failed = None
        self._initialized = True
        self._skip_core = bool(self._values["benchmark.skip_core"])
        self._input_map = _adapter.input_map(self._values, wheelset, track)
        self._record_index = _adapter.record_index(wheelset)
        self._store_outputs()

    def do_step(self, current_time: float, step_size: float) -> bool:
        model = self._model
        if model is None:
            self._error(f"{self.instance_name}: " + (self._failed or "doStep before "
                        "initialization") + "; step discarded")
            return False
        if not 0.0 < step_size < INF:
            self._error(f"communication step size {step_size!r} must be > 0 and finite")
            return False
        if not abs(current_time - self._time) <= 1e-9 * max(1.0, abs(self._time)):
            self._error(f"doStep at communication point {current_time!r} s, but the FMU is "
                        f"at t = {self._time!r} s (FMI 2.0: the previous point + step size; "
                        "roll back with fmi2SetFMUstate to repeat a step); step discarded")
            return False
        u = self._u
        if not np.isfinite(u).all():
            bad = [f"{n} = {float(x)!r}" for n, x in zip(INPUT_NAMES, u.tolist())
                   if not math.isfinite(x)]
            self._error(f"t = {current_time:g} s: input(s) not finite: " + ", ".join(bad)
                        + "; step discarded, state unchanged")
            return False
        try:
            core_inputs = _adapter.core_inputs(u, self._input_map, self._core[1])
            if self._skip_core:
                # benchmarking the FMI layer: conversions in and out, no core call
                self._store_outputs()
                self._time = current_time + step_size
                return True
            # the core checks its inputs before it integrates and restores its
            # state itself when it discards a step
            result = model.advance_vector(step_size, core_inputs)
        except Exception as exc:  # noqa: BLE001 - reported to the host
            self._error(f"t = {current_time:g} s: step failed: {exc}; step discarded")
            return False
        if result.status != "ok":
            self._store_outputs(result.reason)
            self._error(f"t = {current_time:g} s: step cannot be completed: "
                        f"{result.message or result.status}")
            return False
        self._store_outputs()
        self._time = current_time + step_size
        return True

    def _store_outputs(self, reason: str = ""):
        """The outputs from the core's record; the status flags from the reason of a
        discarded step (the record then still holds the state before the step)."""
        record = self._model.record
        y = self._y
        np.take(record, self._record_index, out=y[:_N_RECORD_OUTPUTS])
        lift = self._core[0].R_LIFT
        y[_STATUS_SLOT[0]] = 1.0 if reason == "derailment" else 0.0
        y[_STATUS_SLOT[1]] = 1.0 if (record[lift] > 0.5 or record[lift + 1] > 0.5
                                     or reason == "contact_lost") else 0.0
        y[_STATUS_SLOT[2]] = 1.0 if reason == "excessive_penetration" else 0.0

    # -- fast access to inputs and outputs -------------------------------------
    def _io_index(self, kind: str, vrs):
        """Index array into _io for value references that are all inputs or outputs
        of this kind (Real; Integer; Boolean), else None. Built once per list."""
        key = (kind, tuple(vrs))
        try:
            return self._index_cache[key]
        except KeyError:
            pass
        slots = []
        for vr in key[1]:
            entry = self._io_slot.get(vr)
            if entry is None or entry[0] != kind:
                slots = None
                break
            slots.append(entry[1])
        index = None if slots is None else np.array(slots, dtype=np.intp)
        if len(self._index_cache) < 256:      # hosts use a handful of lists
            self._index_cache[key] = index
        return index

    def get_real(self, vrs):
        index = self._io_index("Real", vrs)
        if index is not None:
            return self._io[index].tolist()
        # parameters, or a value reference that is not a Real: logged and read as 0.0
        # (pythonfmu would turn the TypeError into fmi2Fatal)
        names = self._real_names
        bad = [vr for vr in vrs if vr not in names]
        if bad:
            self._error(f"fmi2GetReal: value reference(s) {bad} are not Real variables; read as 0.0")
        return [float(self.vars[vr].getter()) if vr in names else 0.0 for vr in vrs]

    def get_integer(self, vrs):
        index = self._io_index("Integer", vrs)
        if index is None:
            return super().get_integer(vrs)
        return [int(x) for x in self._io[index].tolist()]

    def get_boolean(self, vrs):
        index = self._io_index("Boolean", vrs)
        if index is None:
            return super().get_boolean(vrs)
        return [x != 0.0 for x in self._io[index].tolist()]

    def set_real(self, vrs, values):
        index = self._io_index("Real", vrs)
        if index is not None and len(values) == len(index):
            self._io[index] = values            # inputs: no causality check needed
        else:
            super().set_real(vrs, values)       # parameters (and the type check)

    def terminate(self):
        pass

    # -- FMU state: the WHOLE state, deep -----------------------------------
    def _get_fmu_state(self) -> Dict[str, Any]:
        return {
            "values": dict(self._values),
            "io": self._io.copy(),
            "model": self._model.get_state() if self._model is not None else None,
            "initialized": self._initialized,
            "time": self._time,
        }

    def _set_fmu_state(self, state: Dict[str, Any]):
        self._values.clear()
        self._values.update(state["values"])
        snap = state["model"]
        if snap is not None:
            if self._model is None:
                # a state serialised by another instance: build the model from the
                # parameters in the state, then overwrite its state
                self._initialized = False
                self.exit_initialization_mode()
            self._model.set_state(copy.deepcopy(snap))
        self._io[:] = state["io"]
        self._initialized = state["initialized"]
        self._time = state["time"]

    @staticmethod
    def _fmu_state_to_bytes(state: Dict[str, Any]) -> bytes:
        return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def _fmu_state_from_bytes(state: bytes) -> Dict[str, Any]:
        return pickle.loads(state)


# ---------------------------------------------------------------------------
# conversion FMI variables <-> core types (field names of solver.wheelset)
# ---------------------------------------------------------------------------
class _Adapter:
    """Stateless conversion functions (an object only to keep them together)."""

    def make_parameters(self, slave: "Wheelset", wheelset, track):
        v = slave._values

        def enum(name, names):
            k = v[name]
            if not isinstance(k, int) or not 0 <= k < len(names):
                raise ValueError(f"{name} = {k!r} is not one of "
                                 + ", ".join(f"{i} ({n})" for i, n in enumerate(names)))
            return names[k]

        def real(name):
            x = v[name]
            var = _BY_NAME[name]
            if not _is_finite(x):
                raise ValueError(f"parameter {name} = {x!r} is not a finite number")
            if (var.min is not None and x < var.min) or (var.max is not None and x > var.max):
                raise ValueError(f"parameter {name} = {x!r} {var.unit} is out of range "
                                 f"[{var.min}, {var.max}]")
            return float(x)

        def profile(name):
            spec = str(v[name]).strip()
            if not spec:
                raise ValueError(f"parameter {name} is empty")
            if not os.path.isabs(spec) and slave.resources:
                candidate = os.path.join(slave.resources, spec)
                if os.path.isfile(candidate):
                    return candidate          # a file bundled in the FMU resources
            return spec                       # built-in name or path (the core resolves it)

        return wheelset.WheelsetParameters(
            wheel_profile=profile("wheel.profile"),
            rail_profile=profile("rail.profile"),
            gauge=real("track.gauge"),
            rail_inclination=real("rail.inclination"),
            back_to_back=real("wheelset.back_to_back"),
            nominal_radius=real("wheel.nominal_rolling_radius"),
            mass=real("wheelset.mass"),
            inertia_roll=real("wheelset.inertia.x"),
            inertia_spin=real("wheelset.inertia.y"),
            inertia_yaw=real("wheelset.inertia.z"),
            young=real("material.youngs_modulus"),
            poisson=real("material.poisson_ratio"),
            friction=real("contact.friction_coefficient"),
            creep_model=enum("contact.creep_model", CREEP_MODELS),
            contact_model=enum("contact.model", CONTACT_MODELS),
            separation_min=real("contact.multipoint.min_separation"),
            slope_difference_min=real("contact.multipoint.min_slope_difference"),
            contact_damping=real("contact.damping"),
            max_penetration=real("contact.max_penetration"),
            lift_tolerance=real("contact.lift_tolerance"),
            speed=real("wheelset.speed"),
            internal_step=real("solver.internal_step"),
            integrator=enum("solver.integrator", INTEGRATORS),
            track=self.make_track(slave, track),
            axle_box_semi_spacing=real("wheelset.axle_box_semi_spacing"),
            bogie=bool(v["suspension.builtin"]),
            suspension_stiffness=tuple(real(f"suspension.stiffness.{ax}") for ax in "xyz"),
            suspension_damping=tuple(real(f"suspension.damping.{ax}") for ax in "xyz"),
            suspended_mass=real("suspension.suspended_mass"),
            initial_lateral=real("wheelset.initial_lateral"),
            initial_yaw=real("wheelset.initial_yaw"),
        )

    def make_track(self, slave: "Wheelset", track):
        v = slave._values
        spec = str(v["track.scenario"]).strip()
        direction = str(v["track.direction"]).strip()
        if spec in track.BUILTIN_TRACKS:
            return track.builtin_track(spec, direction=direction)
        path = slave._resolve_file(spec)
        if path is None:
            raise ValueError(f"track.scenario {spec!r} is neither a built-in scenario "
                             f"({', '.join(sorted(track.BUILTIN_TRACKS))}) nor a file "
                             f"(looked in the FMU resources and the working directory)")
        return track.load_track(path)

    def input_map(self, v, wheelset, track):
        """(matrix, offset, cross-level slots): the core's input vector is
        matrix @ u + offset for the FMU inputs u (INPUT_NAMES order), plus the
        roll of both rails by the cross level (`core_inputs`). The irregularities
        add to the rail motion: alignment and level on both rails, gauge and cross
        level by halves with opposite signs (left +, right -)."""
        slot = {name: j for j, name in enumerate(INPUT_NAMES)}
        matrix = np.zeros((wheelset.N_INPUT, len(INPUT_NAMES)))
        offset = np.zeros(wheelset.N_INPUT)
        irregular = {  # core component -> (common irregularity, split irregularity)
            "lateral_displacement": ("alignment", "gauge"),
            "vertical_displacement": ("level", "cross_level"),
            "roll_angle": (None, None),
        }
        for i, side in enumerate(SIDES):
            half = 0.5 if i == 0 else -0.5
            for c, quantity in enumerate(("lateral_displacement", "vertical_displacement",
                                          "roll_angle")):
                common, split = irregular[quantity]
                rate = quantity.replace("displacement", "velocity").replace("angle", "rate")
                for base, row, suffix, name in (
                        (wheelset.U_RAIL_MOTION, 3 * i + c, "", quantity),
                        (wheelset.U_RAIL_VELOCITY, 3 * i + c, "_velocity", rate)):
                    r = base + row
                    matrix[r, slot[f"rail.{side}.{name}"]] = 1.0
                    if common is not None:
                        matrix[r, slot[f"track.irregularity.{common}{suffix}"]] = 1.0
                        matrix[r, slot[f"track.irregularity.{split}{suffix}"]] = half
            for a, ax in enumerate("xyz"):
                matrix[wheelset.U_BOX_FORCE + 3 * i + a, slot[f"axlebox.{side}.force.{ax}"]] = 1.0
                matrix[wheelset.U_BOX_MOMENT + 3 * i + a, slot[f"axlebox.{side}.moment.{ax}"]] = 1.0
        matrix[wheelset.U_TORQUE, slot["axle.torque"]] = 1.0
        for flag, name, row in (("track.curvature_from_input", "track.curvature", wheelset.U_CURVATURE),
                                ("track.cant_from_input", "track.cant_angle", wheelset.U_CANT)):
            if v[flag]:
                matrix[row, slot[name]] = 1.0
            else:
                offset[row] = NAN                 # NaN: the core takes it from the track
        cross = (slot["track.irregularity.cross_level"],
                 slot["track.irregularity.cross_level_velocity"])
        return matrix, offset, cross

    def core_inputs(self, u, input_map, track):
        """The core's input vector for the FMU inputs u (finite)."""
        matrix, offset, (c_slot, dc_slot) = input_map
        core = matrix @ u
        core += offset
        c, dc = u[c_slot], u[dc_slot]
        if c != 0.0 or dc != 0.0:
            # cross level rolls both rails with the sleeper (as solver.track does)
            d = track.DEFAULT_RAIL_DISTANCE
            if abs(c) >= d:
                raise ValueError(f"track.irregularity.cross_level {c} m is not below {d} m")
            r, dr = math.asin(c / d), dc / math.sqrt(d * d - c * c)
            for side in range(2):
                core[3 * side + 2] += r           # U_RAIL_MOTION roll
                core[6 + 3 * side + 2] += dr      # U_RAIL_VELOCITY roll rate
        return core

    def record_index(self, wheelset):
        """For each output but the status flags (OUTPUT_NAMES order), its index in
        the core's output record (solver.wheelset R_*)."""
        w = wheelset
        where = {"wheelset.distance": w.R_DISTANCE}
        for name, col in (("x", w.S_X), ("y", w.S_Y), ("z", w.S_Z), ("roll", w.S_ROLL),
                          ("yaw", w.S_YAW), ("pitch", w.S_SPIN_ANGLE), ("velocity.x", w.S_VX),
                          ("velocity.y", w.S_VY), ("velocity.z", w.S_VZ),
                          ("roll_rate", w.S_ROLL_RATE), ("yaw_rate", w.S_YAW_RATE),
                          ("spin_rate", w.S_SPIN_RATE)):
            where[f"wheelset.{name}"] = w.R_STATE + col
        for i, side in enumerate(SIDES):
            for a, ax in enumerate("xyz"):
                where[f"axlebox.{side}.position.{ax}"] = w.R_DERIVED + w.D_BOX_POS + 3 * i + a
                where[f"axlebox.{side}.velocity.{ax}"] = w.R_DERIVED + w.D_BOX_VEL + 3 * i + a
                where[f"wheel.{side}.force_on_rail.{ax}"] = w.R_DERIVED + w.D_WHEEL_RAIL + 3 * i + a
            where[f"wheel.{side}.Y"] = w.R_DERIVED + w.D_Y + i
            where[f"wheel.{side}.Q"] = w.R_DERIVED + w.D_Q + i
            where[f"wheel.{side}.Y_over_Q"] = w.R_DERIVED + w.D_YQ + i
            where[f"wheel.{side}.active_points"] = w.R_COUNT + i
            where[f"wheel.{side}.lift"] = w.R_LIFT + i
            for k in range(POINTS_PER_WHEEL):
                pre = f"contact.{side}.point[{k + 1}]."
                for suffix, column in _POINT_COLUMNS:
                    where[pre + suffix] = w.record_index_of_contact(i, k, getattr(w, column))
        return np.array([where[name] for name in OUTPUT_NAMES[:_N_RECORD_OUTPUTS]], dtype=np.intp)


NAN = float("nan")
_BY_NAME = {var.name: var for var in VARIABLES}
# output suffix of a contact slot -> contact column of solver.wheelset (C_*)
_POINT_COLUMNS = (("active", "C_ACTIVE"), ("wheel_lateral", "C_S_WHEEL"),
                  ("rail_lateral", "C_U_RAIL"), ("position.y", "C_Y"), ("position.z", "C_Z"),
                  ("contact_angle", "C_ANGLE"), ("rolling_radius", "C_RADIUS"),
                  ("longitudinal_creepage", "C_XI"), ("lateral_creepage", "C_ETA"),
                  ("spin_creepage", "C_SPIN"), ("normal_force", "C_NORMAL"),
                  ("longitudinal_force", "C_CREEP_LONG"), ("lateral_force", "C_CREEP_LAT"),
                  ("spin_moment", "C_SPIN_MOMENT"))
# the status flags come last; all outputs before them are copied from the core's record
_N_RECORD_OUTPUTS = len(OUTPUT_NAMES) - len(STATUS_NAMES)
assert OUTPUT_NAMES[_N_RECORD_OUTPUTS:] == STATUS_NAMES
_STATUS_SLOT = tuple(OUTPUT_NAMES.index(n) for n in STATUS_NAMES)
_adapter = _Adapter()
