"""The wheelset model: parameters, the Python object around the numba core.

`WheelsetParameters` (SI units, defaults: the Manchester benchmark wheelset on
S1002/UIC60 1:40) and `WheelsetModel`: profiles and track resolved, the static
equilibrium at t = 0, `advance(h)` over one host step, outputs, snapshots. The
equations of motion and the data layouts are those of solver.dynamics (the
numba side); the integrators those of solver.integrate. The layouts the callers
read (state S_*, input vector U_*, output record R_*, contact rows C_*, derived
outputs D_*) are re-exported here, as the interface of `WheelsetModel.record`
and `WheelsetModel.advance_vector`.
"""
from __future__ import annotations

import math
import operator
import os
from dataclasses import dataclass, field

import numpy as np

from . import geometry as geo
from . import geometry_table
from .creep import MODEL_IDS, kernel_parameters, linear_creep_coefficients
from .dynamics import (  # noqa: F401  (the layouts are re-exported: see the module docstring)
    C_A, C_ACTIVE, C_ANGLE, C_B, C_CREEP_LAT, C_CREEP_LONG, C_ELASTIC_ENERGY, C_ETA, C_FX,
    C_FY, C_FZ, C_GAP, C_HERTZ_FLAG, C_NORMAL, C_PENETRATION, C_RADIUS, C_S_WHEEL,
    C_SPIN, C_SPIN_MOMENT, C_U_RAIL, C_X, C_XI, C_Y, C_Z, D_BOX_POS, D_BOX_VEL, D_ENERGY,
    D_PQ, D_PY, D_PYQ, D_Q, D_WEAR, D_WHEEL_RAIL, D_Y, D_YQ, GRAVITY, INPUT_VECTOR_NAMES,
    M_BOGIE, M_BOX_SEMI_SPACING, M_BOX_Z_REF, M_CONTACT_DAMPING, M_CP1, M_CP5, M_CREEP_MODEL,
    M_CX, M_CZ, M_F11, M_F33, M_FRICTION, M_GRAVITY, M_GYROSCOPIC, M_ROLL_RATE_CREEPAGE, M_JX, M_JY, M_JZ, M_KX, M_KZ, M_MASS, M_MAX_STEPS, M_MULTIPOINT,
    M_POISSON, M_SPEED, M_SUSPENDED_MASS, M_TOLERANCE, M_YOUNG, N_CONTACT, N_DERIVED, N_INPUT, N_MODEL,
    N_RECORD, N_STATE, N_SUMMARY, O_GAP_LEFT, O_GAP_RIGHT, O_LIFT_LEFT, O_LIFT_RIGHT,
    O_MAX_PENETRATION, O_RAIL_ON_WHEEL_LEFT, PROBLEM_AIRBORNE, PROBLEM_BAD_INPUT,
    PROBLEM_DERAILMENT, PROBLEM_OFF_RAIL,
    PROBLEM_NON_FINITE, PROBLEM_NONE, PROBLEM_PENETRATION, PROBLEM_STEP_SIZE, R_CONTACT, R_COUNT, R_DERIVED,
    R_AIRBORNE, R_AXLE_SUM, R_CLIMB, R_CLIMB_DISTANCE, R_CLIMB_TIME, R_CLIMB_WARNING,
    R_DISTANCE, R_LIFT, R_LIFT_HEIGHT, R_STATE, R_TIME, R_WEAR, R_WEINSTOCK, S_ROLL, S_ROLL_RATE, S_SPIN_ANGLE,
    S_SPIN_RATE,
    S_VX, S_VY, S_VZ, S_X, S_Y, S_YAW, S_YAW_RATE, S_Z, U_BOX_FORCE, U_BOX_MOMENT, U_CANT,
    U_CURVATURE, U_RAIL_MOTION, U_RAIL_VELOCITY, U_TORQUE, ContactResults, StepInputs,
    TrackPoint, derived_outputs, fill_record, record_index_of_contact, wheelset_rhs)
from . import derailment
from .errors import WheelsetError
from . import fast_step
from .integrate import (ADAPTIVE_INTEGRATORS, INTEGRATOR_IDS, JAC_AGE, N_JACOBIAN, N_ROS_MEMO,
                        N_SEARCH_KEY, N_STAGE_ROWS, ROS_MEMO_END_VALID, ROS_MEMO_W_DT,
                        StepData, quantized_step)
from .profiles import builtin_profile, is_builtin_profile, load_profile
from .track import BUILTIN_TRACKS, Track, builtin_track, load_track, track_state_kernel
from .track_excitation import RailMotion

# Model names, in id order: the one list of each (the FMU's enumerations derive
# from these: fmu_wheelset/variables.py).
INTEGRATOR_NAMES = tuple(INTEGRATOR_IDS)
CREEP_MODEL_NAMES = tuple(sorted(MODEL_IDS, key=MODEL_IDS.get))   # solver.creep ids
CONTACT_MODEL_NAMES = ("single", "multipoint")                    # M_MULTIPOINT 0 / 1
CONTACT_GEOMETRY_NAMES = ("online", "table")                       # solver.geometry / geometry_table
MAX_SUBSTEPS_LIMIT = 10 ** 9      # upper bound of WheelsetParameters.max_substeps



def bad_input_error(u: np.ndarray):
    """Raise WheelsetError naming the non-finite entries of an input vector
    (curvature and cant may be NaN: taken from the track)."""
    bad = [f"{INPUT_VECTOR_NAMES[j]} = {float(u[j])!r}" for j in range(N_INPUT)
           if not (math.isfinite(u[j]) or (j in (U_CURVATURE, U_CANT) and math.isnan(u[j])))]
    if bad:
        raise WheelsetError("non-finite input: " + ", ".join(bad))


# Names of the record's entries: the one output vocabulary of the project (core
# histories, the FMU's outputs (fmu_wheelset/variables.py), sweeps, the
# validation report). Dots for the hierarchy, [k] (1-based) for the contact slots.
RECORD_SIDES = ("left", "right")
RECORD_POINT_COLUMNS = (   # name in the record vocabulary -> contact column C_*
    ("active", C_ACTIVE), ("wheel_lateral", C_S_WHEEL), ("rail_lateral", C_U_RAIL),
    ("position.y", C_Y), ("position.z", C_Z), ("contact_angle", C_ANGLE),
    ("rolling_radius", C_RADIUS), ("longitudinal_creepage", C_XI), ("lateral_creepage", C_ETA),
    ("spin_creepage", C_SPIN), ("normal_force", C_NORMAL), ("longitudinal_force", C_CREEP_LONG),
    ("lateral_force", C_CREEP_LAT), ("spin_moment", C_SPIN_MOMENT))


def _record_names() -> dict:
    names = {"time": R_TIME, "wheelset.distance": R_DISTANCE}
    for name, column in (("x", S_X), ("y", S_Y), ("z", S_Z), ("roll", S_ROLL), ("yaw", S_YAW),
                         ("pitch", S_SPIN_ANGLE), ("velocity.x", S_VX), ("velocity.y", S_VY),
                         ("velocity.z", S_VZ), ("roll_rate", S_ROLL_RATE),
                         ("yaw_rate", S_YAW_RATE), ("spin_rate", S_SPIN_RATE)):
        names[f"wheelset.{name}"] = R_STATE + column
    for side, side_name in enumerate(RECORD_SIDES):
        for a, ax in enumerate("xyz"):
            names[f"axlebox.{side_name}.position.{ax}"] = R_DERIVED + D_BOX_POS + 3 * side + a
            names[f"axlebox.{side_name}.velocity.{ax}"] = R_DERIVED + D_BOX_VEL + 3 * side + a
            names[f"wheel.{side_name}.force_on_rail.{ax}"] = R_DERIVED + D_WHEEL_RAIL + 3 * side + a
        names[f"wheel.{side_name}.Y"] = R_DERIVED + D_Y + side
        names[f"wheel.{side_name}.Q"] = R_DERIVED + D_Q + side
        names[f"wheel.{side_name}.Y_over_Q"] = R_DERIVED + D_YQ + side
        names[f"wheel.{side_name}.active_points"] = R_COUNT + side
        names[f"wheel.{side_name}.lift"] = R_LIFT + side
        names[f"wheel.{side_name}.wear_number"] = R_WEAR + side
        names[f"wheel.{side_name}.lift_height"] = R_LIFT_HEIGHT + side
        names[f"wheel.{side_name}.flange_climb_ratio"] = R_CLIMB + side
        names[f"wheel.{side_name}.flange_climb_time"] = R_CLIMB_TIME + side
        names[f"wheel.{side_name}.flange_climb_distance"] = R_CLIMB_DISTANCE + side
        for point in range(geo.MAX_POINTS):
            prefix = f"contact.{side_name}.point[{point + 1}]."
            for name, column in RECORD_POINT_COLUMNS:
                names[prefix + name] = record_index_of_contact(side, point, column)
            j = side * geo.MAX_POINTS + point
            names[prefix + "Y_over_Q"] = R_DERIVED + D_PYQ + j
            names[prefix + "wear_number"] = R_DERIVED + D_WEAR + j
    names["wheelset.axle_sum_Y_over_Q"] = R_AXLE_SUM
    names["wheelset.weinstock_ratio"] = R_WEINSTOCK
    names["wheelset.airborne_time"] = R_AIRBORNE
    names["status.flange_climb_warning"] = R_CLIMB_WARNING
    return names


RECORD_INDEX = _record_names()      # name -> index in the output record


def named_outputs(record: np.ndarray) -> dict:
    """Every named quantity of an output record (RECORD_INDEX): one row of a
    history, in the project's output vocabulary."""
    return {name: float(record[i]) for name, i in RECORD_INDEX.items()}


@dataclass
class WheelsetParameters:
    """Parameters of the wheelset model (SI units).

    Profiles: a built-in name (solver.profiles), a path to a profile file, or a
    Profile object. `rail_inclination` in rad (atan(1/40) for 1:40). Defaults:
    Manchester benchmark wheelset (Iwnicki 1998) on S1002/UIC60 1:40.
    `creep_model`: "kalker", "she", "polach", "fastsim", "fastrip"; `creep_options`
    passed to solver.creep (Polach kA, kS, A, B; FASTSIM and FaStrip nx, ny).
    `contact_model`: "multipoint" or "single" (deepest point per wheel only).
    `contact_geometry`: "online" (the profiles scanned; between scans the
    minima of the last one re-located, geometry.wheelset_contact_tracked: the
    same points as a scan at every full contact search) or "table"
    (solver.geometry_table: contact point sets precomputed at initialisation,
    the same points to rounding).
    `contact_damping`: C in N = K delta^1.5 + C d(delta)/dt (N s/m, Kang 2012).
    `integrator`: "rosenbrock" (the default: the adaptive linearly implicit
    W-method with a kept Jacobian; the stiff contact and creep modes set it no
    step limit, and its error control resolves contact onsets and impacts),
    "rk4" (fixed steps of at most internal_step), "semi-implicit", or the
    adaptive explicit "rk23" / "rk45"; the adaptive ones take steps of at most
    internal_step under the local error `tolerance` (solver.integrate). The
    defaults (Rosenbrock, tolerance 1e-5, steps of at most 1 ms) keep Q within
    2 % of the static wheel load and y within 1 um of a converged run on the
    loaded straight track, the Ren & Jin curve and hard flange contact
    (docs/convergence.md); internal_step 10 ms is faster with long
    communication steps, at the same tolerance.
    `bogie`: True for the built-in spring-damper to a frame following the
    track centreline (stand-alone runs); False when the host supplies the
    axle-box forces. `suspended_mass`: the share of the vehicle mass carried by
    this wheelset's primary suspension (used by the built-in bogie only).
    `track`: a built-in scenario name, a track file path, or a Track.
    """

    wheel_profile: object = "S1002"
    rail_profile: object = "UIC60"
    profile_step: float = 1e-4
    gauge: float = 1.435
    rail_inclination: float = float(np.arctan(1.0 / 40.0))
    back_to_back: float = 1.360
    nominal_radius: float = 0.46
    mass: float = 1813.0
    inertia_roll: float = 1120.0
    inertia_spin: float = 112.0
    inertia_yaw: float = 1120.0
    young: float = 2.1e11
    poisson: float = 0.28
    friction: float = 0.3
    creep_model: str = "polach"
    creep_options: dict = field(default_factory=dict)
    contact_model: str = "multipoint"
    contact_geometry: str = "online"
    separation_min: float = 0.008
    slope_difference_min: float = 0.025
    contact_damping: float = 0.0
    speed: float = 27.78
    internal_step: float = 1e-3
    integrator: str = "rosenbrock"
    # the adaptive integrators ("rk23", "rk45", "rosenbrock"): local error tolerance, relative
    # to the scales of solver.integrate.ERROR_SCALE (1 mm, 1 mrad, 0.1 m/s, 0.1 rad/s);
    # internal_step is then their largest step
    tolerance: float = 1e-5
    track: object = "straight"
    axle_box_semi_spacing: float = 1.0
    bogie: bool = False
    suspension_stiffness: tuple = (31.391e6, 3.884e6, 1.22e6)   # kx, ky, kz per box (Iwnicki 1998)
    suspension_damping: tuple = (15e3, 2e3, 4e3)                # cx, cy, cz per box
    suspended_mass: float = 0.0
    initial_lateral: float = 0.0
    initial_yaw: float = 0.0
    max_penetration: float = 2e-3
    # most internal steps one advance() may take: a longer step is discarded before
    # it starts (1e5 steps of 1 ms = 100 s of simulated time, some seconds of wall
    # time; a host asking for a step of 1e5 s gets a discard, not an hour's wait)
    max_substeps: int = 100_000
    # linear-study controls (the textbook models): Kalker's linear coefficients
    # f11, f22 (N), f23 (N m), f33 (N m^2) per contact point, 0 = from Kalker's
    # table (used with creep_model "kalker" only); the roll-rate term of the
    # creepages and the gyroscopic moments on (True) or off
    creep_coefficients: tuple = (0.0, 0.0, 0.0, 0.0)
    roll_rate_creepage: bool = True
    gyroscopic: bool = True

    def validate(self):
        positive = ["profile_step", "gauge", "back_to_back", "nominal_radius", "mass",
                    "inertia_roll", "inertia_spin", "inertia_yaw", "young", "internal_step",
                    "axle_box_semi_spacing", "max_penetration", "separation_min"]
        for name in positive:
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise WheelsetError(f"parameter {name} must be a positive finite number, got {value!r}")
        for name in ["speed", "friction", "contact_damping", "suspended_mass", "rail_inclination",
                     "initial_lateral", "initial_yaw", "slope_difference_min", "poisson"]:
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise WheelsetError(f"parameter {name} must be finite, got {value!r}")
        if not 0.0 <= self.poisson < 0.5:
            raise WheelsetError(f"poisson must be in [0, 0.5), got {self.poisson}")
        if self.friction < 0 or self.friction > 2:
            raise WheelsetError(f"friction must be in [0, 2], got {self.friction}")
        if self.speed < 0:
            raise WheelsetError(f"speed must be >= 0 (m/s), got {self.speed}")
        if self.suspended_mass < 0 or self.contact_damping < 0:
            raise WheelsetError("suspended_mass and contact_damping must be >= 0")
        if not isinstance(self.creep_model, str) or self.creep_model not in MODEL_IDS:
            raise WheelsetError(f"creep_model must be one of {sorted(MODEL_IDS)}, got {self.creep_model!r}")
        if self.contact_geometry not in CONTACT_GEOMETRY_NAMES:
            raise WheelsetError(f"contact_geometry must be one of {CONTACT_GEOMETRY_NAMES}, "
                                f"got {self.contact_geometry!r}")
        if self.contact_model not in CONTACT_MODEL_NAMES:
            raise WheelsetError(f"contact_model must be 'multipoint' or 'single', got {self.contact_model!r}")
        if self.integrator not in INTEGRATOR_NAMES:
            raise WheelsetError(f"integrator must be one of {INTEGRATOR_NAMES}, got {self.integrator!r}")
        if not (isinstance(self.tolerance, (int, float)) and 1e-12 <= self.tolerance <= 0.1):
            raise WheelsetError(f"tolerance must be a number in [1e-12, 0.1], got {self.tolerance!r}")
        if self.internal_step > 0.01:
            raise WheelsetError(f"internal_step {self.internal_step} s is too large (<= 0.01 s)")
        if (not isinstance(self.max_substeps, int) or isinstance(self.max_substeps, bool)
                or not 1 <= self.max_substeps <= MAX_SUBSTEPS_LIMIT):
            raise WheelsetError(f"max_substeps must be an integer in [1, {MAX_SUBSTEPS_LIMIT}], "
                                f"got {self.max_substeps!r}")
        vals = self.creep_coefficients
        if (not isinstance(vals, (tuple, list)) or len(vals) != 4
                or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
                       or v < 0 for v in vals)):
            raise WheelsetError("creep_coefficients must be four finite values >= 0 "
                                f"(f11, f22, f23, f33; 0 = Kalker's table), got {vals!r}")
        if any(v > 0 for v in vals) and self.creep_model != "kalker":
            raise WheelsetError("creep coefficient overrides apply to Kalker's linear theory: "
                                f"set creep_model 'kalker' (got {self.creep_model!r})")
        for name in ("roll_rate_creepage", "gyroscopic"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise WheelsetError(f"{name} must be True or False, got {getattr(self, name)!r}")
        for name in ("suspension_stiffness", "suspension_damping"):
            vals = getattr(self, name)
            if (not isinstance(vals, (tuple, list)) or len(vals) != 3
                    or any(not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 for v in vals)):
                raise WheelsetError(f"{name} must be three finite values >= 0")


def resolve_source(spec: str, is_builtin, search_dirs=(), working_directory: bool = True):
    """THE lookup rule for a profile or a track given by name (the core and the
    FMU slave both use it): a built-in name (`is_builtin(spec)`) first; else a
    file: an absolute path as it is, a relative one in each of `search_dirs`
    (the FMU's resources), then, if `working_directory`, relative to the working
    directory. Returns the built-in name or the file's path; None if it is neither.

    The FMU calls it with ``working_directory=False``: a relative name must then
    stay inside a search folder ('..' or a link out of it raises DataFileError,
    solver/data_files.py), so that a host's string cannot name any file of the
    machine unless it is an absolute path, given on purpose."""
    import os
    from .data_files import resolve_contained
    if is_builtin(spec):
        return spec
    if not working_directory:
        return resolve_contained(spec, search_dirs)
    if os.path.isabs(spec):
        candidates = [spec]
    else:
        candidates = [os.path.join(d, spec) for d in search_dirs if d] + [spec]
    for candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
    return None


def _resolve_profile(spec, kind, step):
    if hasattr(spec, "lateral") and hasattr(spec, "kind"):   # a Profile (or one built alike)
        if spec.kind != kind:
            raise WheelsetError(f"a {kind} profile is needed, got a {spec.kind} profile")
        return spec
    if not isinstance(spec, str):
        raise WheelsetError(f"{kind} profile must be a name, a path or a Profile, got {spec!r}")
    source = resolve_source(spec, is_builtin_profile)
    if source is None:
        raise WheelsetError(f"unknown {kind} profile {spec!r} (not built in, no such file)")
    if source == spec and is_builtin_profile(spec):
        return builtin_profile(spec, step=step)
    return load_profile(source, kind, step=step)


def _resolve_track(spec):
    if isinstance(spec, Track):
        return spec
    if isinstance(spec, str):
        source = resolve_source(spec, lambda name: name in BUILTIN_TRACKS)
        if source is None:
            raise WheelsetError(f"unknown track {spec!r}: not built in "
                                f"({', '.join(sorted(BUILTIN_TRACKS))}) and no such file")
        if source == spec and spec in BUILTIN_TRACKS:
            return builtin_track(spec)
        return load_track(source)
    raise WheelsetError(f"track must be a name, a path or a Track, got {spec!r}")


@dataclass
class WheelsetInputs:
    """External inputs over one step (held constant within it)."""

    axle_box_force: np.ndarray = field(default_factory=lambda: np.zeros((2, 3)))
    axle_box_moment: np.ndarray = field(default_factory=lambda: np.zeros((2, 3)))
    axle_torque: float = 0.0
    rail_motion: RailMotion = field(default_factory=RailMotion)
    curvature: float = float("nan")    # NaN: from the track
    cant_angle: float = float("nan")   # NaN: from the track


@dataclass
class StepResult:
    status: str          # "ok" or "discard"
    message: str = ""
    rhs_evaluations: int = 0
    reason: str = ""     # for a discard: "non_finite", "excessive_penetration",
                         # "derailment", "too_many_substeps" or
                         # "step_size" (an adaptive integrator needing more than
                         # max_substeps steps)


@dataclass
class WheelsetOutputs:
    """Outputs after a step. Per-wheel arrays (2,) [left, right]; per contact
    point (2, MAX_POINTS). Forces on the rail are those of the wheel on the rail."""

    time: float
    distance: float
    position: np.ndarray          # x, y, z of the wheelset centre (m), track frame
    orientation: np.ndarray       # roll, yaw, spin angle (rad)
    velocity: np.ndarray          # (m/s)
    angular_velocity: np.ndarray  # roll rate, yaw rate, spin rate (rad/s)
    axle_box_position: np.ndarray   # (2, 3)
    axle_box_velocity: np.ndarray   # (2, 3)
    wheel_rail_force: np.ndarray    # (2, 3) force of each wheel on its rail, track frame (N)
    lateral_force: np.ndarray       # Y (2,): wheel on rail, + towards the field side (N)
    vertical_force: np.ndarray      # Q (2,): wheel on rail, + downwards (N)
    derailment_quotient: np.ndarray  # Y/Q (2,)
    contact_count: np.ndarray       # (2,) active points
    contact_active: np.ndarray      # (2, 3) bool
    contact_y_wheel: np.ndarray     # lateral position on the wheel profile (m)
    contact_y_rail: np.ndarray      # lateral position on the rail profile (m)
    contact_position: np.ndarray    # (2, 3, 3) track frame (m)
    contact_angle: np.ndarray       # (rad)
    rolling_radius: np.ndarray      # (m)
    creepage_longitudinal: np.ndarray
    creepage_lateral: np.ndarray
    creepage_spin: np.ndarray       # (1/m)
    normal_force: np.ndarray        # (N)
    creep_force_longitudinal: np.ndarray   # (N), contact frame
    creep_force_lateral: np.ndarray        # (N), contact frame
    spin_moment: np.ndarray                # (N m)
    semi_axis_a: np.ndarray
    semi_axis_b: np.ndarray
    point_lateral_force: np.ndarray        # Y per point (N)
    point_vertical_force: np.ndarray       # Q per point (N)
    point_derailment_quotient: np.ndarray  # Y/Q per point
    wear_number: np.ndarray                # T gamma per point (N)
    penetration: np.ndarray                # normal penetration per point (m)
    elastic_energy: float                  # J
    flange_climb_ratio: np.ndarray         # (2,) flange Y/Q over Nadal's limit (solver/derailment.py)
    flange_climb_time: np.ndarray          # (2,) how long (s) the ratio has been above 1
    flange_climb_distance: np.ndarray      # (2,) over what distance (m)
    axle_sum_y_over_q: float               # Weinstock's sum of |Y/Q| of both wheels
    weinstock_ratio: float                 # that sum over Weinstock's limit (0: no flange contact)
    airborne_time: float                   # how long (s) both wheels have been off their rails
    lift_height: np.ndarray                # (2,) a lifted wheel's height above its rail (m)
    wheel_lift: np.ndarray                 # (2,) bool (a derailing step is discarded:
                                           # StepResult.reason says so)
    rhs_evaluations: int


class WheelsetModel:
    """The wheelset core: parameters, track, state, and `advance`."""

    def __init__(self, params: WheelsetParameters | None = None):
        self.params = params = params or WheelsetParameters()
        params.validate()
        try:
            wheel = _resolve_profile(params.wheel_profile, "wheel", params.profile_step)
            rail = _resolve_profile(params.rail_profile, "rail", params.profile_step)
            self.setup = geo.ContactSetup(
                wheel, rail, gauge=params.gauge, inclination=params.rail_inclination,
                back_to_back=params.back_to_back, nominal_radius=params.nominal_radius,
                separation_min=params.separation_min,
                slope_difference_min=params.slope_difference_min)
        except geo.GeometryError as exc:
            raise WheelsetError(str(exc)) from exc
        self.track = _resolve_track(params.track)
        model_id, p1, p2, p3, p4, p5 = kernel_parameters(params.creep_model, dict(params.creep_options))
        m = np.zeros(N_MODEL)
        m[M_MASS] = params.mass
        m[M_JX] = params.inertia_roll
        m[M_JY] = params.inertia_spin
        m[M_JZ] = params.inertia_yaw
        m[M_YOUNG] = params.young
        m[M_POISSON] = params.poisson
        m[M_FRICTION] = params.friction
        m[M_CREEP_MODEL] = model_id
        m[M_CP1:M_CP5 + 1] = (p1, p2, p3, p4, p5)
        m[M_CONTACT_DAMPING] = params.contact_damping
        m[M_MULTIPOINT] = 1.0 if params.contact_model == "multipoint" else 0.0
        m[M_BOX_SEMI_SPACING] = params.axle_box_semi_spacing
        m[M_BOGIE] = 1.0 if params.bogie else 0.0
        m[M_KX:M_KZ + 1] = params.suspension_stiffness
        m[M_CX:M_CZ + 1] = params.suspension_damping
        m[M_SUSPENDED_MASS] = params.suspended_mass
        m[M_SPEED] = params.speed
        m[M_GRAVITY] = GRAVITY
        m[M_F11:M_F33 + 1] = params.creep_coefficients
        m[M_ROLL_RATE_CREEPAGE] = 1.0 if params.roll_rate_creepage else 0.0
        m[M_GYROSCOPIC] = 1.0 if params.gyroscopic else 0.0
        m[M_TOLERANCE] = params.tolerance
        m[M_MAX_STEPS] = params.max_substeps
        self.model = m
        self._track_table = self.track.segment_table()
        self._search = self.setup.buffers()          # the contact search's scratch and points
        self._work, self._points, self._counts = self._search
        self._results = ContactResults(np.zeros((2, geo.MAX_POINTS, N_CONTACT)), np.zeros(N_SUMMARY))
        self._contact, self._summary = self._results
        self._deriv = np.zeros(N_STATE)
        self._saved = (np.zeros(N_STATE), np.zeros_like(self._contact), np.zeros(N_SUMMARY))
        self._derived = np.zeros(N_DERIVED)
        # pose and rail motion of the points in self._search (integrate.K_*; 0 = none)
        self._search_key = np.zeros(N_SEARCH_KEY)
        # the Rosenbrock integrator's Jacobian, kept from step to step (integrate.JAC_*)
        self._jacobian = self._no_jacobian()
        # and its W^-1 and last derivative (integrate.ROS_MEMO_*; none: W_DT -1, END_VALID 0)
        self._rosenbrock_memo = np.zeros(N_ROS_MEMO)
        self._rosenbrock_memo[ROS_MEMO_W_DT] = -1.0
        # tabulated contact geometry: built here, shared by the models of one set-up
        self.contact_table = None
        self._table_search = None
        table_arrays = geometry_table.empty_table_arrays()
        if params.contact_geometry == "table":
            self.contact_table = geometry_table.shared_contact_table(self.setup)
            table_arrays = self.contact_table.arrays
            self._table_search = geometry_table.TableSearch(table_arrays, geometry_table.table_scratch())
        table_scratch = (self._table_search.scratch if self._table_search is not None
                         else geometry_table.table_scratch())
        self.state = np.zeros(N_STATE)
        self.record = np.zeros(N_RECORD)    # the outputs at the current state, flat (R_*)
        # all that the per-step kernel works on, as the plain tuple it takes (see
        # integrate.advance_kernel); the arrays are shared, changed in place
        saved_state, saved_contact, saved_summary = self._saved
        self._step_data = tuple(StepData(
            track_table=self._track_table, rail_distance=self.track.rail_distance,
            track_length=self.track.length, wheel_table=self.setup.wheel_table,
            rail_table=self.setup.rail_table, geometry_params=self.setup.params, model=self.model,
            integrator_id=INTEGRATOR_IDS[params.integrator],
            max_penetration=params.max_penetration,
            tread_end=float(self.setup.wheel_table[-1, geo.T_LAT]),
            flange_tip=float(self.setup.wheel_table[0, geo.T_LAT]),
            work=self._work, points=self._points, counts=self._counts,
            contact=self._contact, summary=self._summary,
            stages=np.zeros((N_STAGE_ROWS, N_STATE)),
            saved_state=saved_state, saved_contact=saved_contact, saved_summary=saved_summary,
            derived=self._derived, record=self.record, table_params=table_arrays.tparams,
            table_flags=table_arrays.flags, table_nodes=table_arrays.nodes,
            table_rows=table_scratch.rows, table_index=table_scratch.index,
            search_key=self._search_key, jacobian=self._jacobian,
            rosenbrock_memo=self._rosenbrock_memo))
        self._block_owner = (0, (), ())     # _step_block: none yet
        # the scalars that evolve live in arrays, which the FMU's fast step
        # (solver/fast_step.py) updates from numba as the Python step does:
        # time, distance, internal step and what undo_step restores
        # (fast_step.K_*), the RHS evaluations and their number before the last step
        self._clock = np.zeros(fast_step.N_CLOCK)
        self._rhs_count = np.zeros(fast_step.N_RHS_COUNT, dtype=np.int64)
        self._u = self.input_vector(WheelsetInputs())   # the inputs of the last step
        # derailment (solver/derailment.py): the lateral displacement past the flange,
        # the Nadal ratios at the current state, the time each flange last climbed
        self._flange_passed = derailment.flange_passed_lateral(self.setup)
        # the running-safety memory (fast_step.SF_*) and its copy for undo_step
        self._safety = self._no_safety()
        self._safety_before = self._no_safety()
        self._u_before = self._u.copy()     # what undo_step restores
        self._initialized = False

    # the evolving scalars, stored in _clock / _rhs_count (see __init__)
    @property
    def time(self) -> float:
        return float(self._clock[fast_step.K_TIME])

    @time.setter
    def time(self, value: float):
        self._clock[fast_step.K_TIME] = value

    @property
    def distance(self) -> float:
        return float(self._clock[fast_step.K_DISTANCE])

    @distance.setter
    def distance(self, value: float):
        self._clock[fast_step.K_DISTANCE] = value

    @property
    def rhs_evaluations(self) -> int:
        return int(self._rhs_count[0])

    @rhs_evaluations.setter
    def rhs_evaluations(self, value: int):
        self._rhs_count[0] = value

    @property
    def internal_step(self) -> float:
        """The internal step advance() uses (s; set by initialize: stable_internal_step)."""
        return float(self._clock[fast_step.K_INTERNAL_STEP])

    @internal_step.setter
    def internal_step(self, value: float):
        self._clock[fast_step.K_INTERNAL_STEP] = value

    # -- state ---------------------------------------------------------------
    @staticmethod
    def _no_jacobian() -> np.ndarray:
        """A kept-Jacobian array (integrate.JAC_*) that holds none."""
        jacobian = np.zeros(N_JACOBIAN)
        jacobian[JAC_AGE] = -1.0
        return jacobian

    def get_state(self) -> dict:
        """A deep, picklable snapshot of everything that evolves."""
        return {"state": self.state.copy(), "time": self.time, "distance": self.distance,
                "rhs_evaluations": self.rhs_evaluations, "contact": self._contact.copy(),
                "summary": self._summary.copy(), "inputs": self._u.copy(),
                "initialized": self._initialized, "model": self.model.copy(),
                "safety": self._safety.copy(), "jacobian": self._jacobian.copy()}

    def set_state(self, snapshot: dict):
        self._clock[fast_step.K_BEFORE_VALID] = 0.0
        self.state[:] = snapshot["state"]
        self.time = float(snapshot["time"])
        self.distance = float(snapshot["distance"])
        self.rhs_evaluations = int(snapshot["rhs_evaluations"])
        self._contact[:] = snapshot["contact"]
        self._summary[:] = snapshot["summary"]
        self._u[:] = snapshot["inputs"]
        self._initialized = bool(snapshot["initialized"])
        self.model[:] = snapshot["model"]
        self._safety[:] = snapshot.get("safety", self._no_safety())
        # the Rosenbrock integrator's kept Jacobian; without one the next step computes it
        self._jacobian[:] = snapshot.get("jacobian", self._no_jacobian())
        self._rosenbrock_memo[ROS_MEMO_W_DT] = -1.0
        self._rosenbrock_memo[ROS_MEMO_END_VALID] = 0.0
        # the contact search's tracked minima belong to another pose: the next search scans
        geo.forget_tracked_minima(self._work)
        self._update_record()

    # -- track and inputs ------------------------------------------------------
    def _track_values(self, s: float, u: np.ndarray):
        """(curvature, curvature rate, cant angle) at s, with the overrides of the input vector."""
        kap, rate, cant = track_state_kernel(self._track_table, self.track.rail_distance,
                                             self.track.length, float(s))
        if math.isfinite(u[U_CURVATURE]):
            kap, rate = u[U_CURVATURE], 0.0
        if math.isfinite(u[U_CANT]):
            cant = u[U_CANT]
        return kap, rate, cant

    @staticmethod
    def input_vector(inputs: WheelsetInputs) -> np.ndarray:
        """The flat input vector (U_*, N_INPUT) of `inputs`; WheelsetError if an
        entry is not finite (curvature and cant may be NaN: from the track)."""
        rm = inputs.rail_motion
        u = np.empty(N_INPUT)
        motion = u[U_RAIL_MOTION:U_RAIL_MOTION + 6].reshape(2, 3)
        motion[:, 0], motion[:, 1], motion[:, 2] = rm.lateral, rm.vertical, rm.roll
        rate = u[U_RAIL_VELOCITY:U_RAIL_VELOCITY + 6].reshape(2, 3)
        rate[:, 0], rate[:, 1], rate[:, 2] = rm.lateral_velocity, rm.vertical_velocity, rm.roll_velocity
        u[U_BOX_FORCE:U_BOX_FORCE + 6] = np.asarray(inputs.axle_box_force, dtype=float).reshape(6)
        u[U_BOX_MOMENT:U_BOX_MOMENT + 6] = np.asarray(inputs.axle_box_moment, dtype=float).reshape(6)
        u[U_TORQUE] = float(inputs.axle_torque)
        u[U_CURVATURE] = float(inputs.curvature)
        u[U_CANT] = float(inputs.cant_angle)
        bad_input_error(u)
        return u

    def rhs(self, state=None, inputs: WheelsetInputs | None = None, s=None):
        """The state derivative at `state` (default: the current one); fills the contact results."""
        state = self.state if state is None else np.asarray(state, dtype=float)
        u = self._u if inputs is None else self.input_vector(inputs)
        s = self.distance if s is None else s
        kap, rate, cant = self._track_values(s, u)
        inputs = StepInputs(rail_motion=u[U_RAIL_MOTION:U_RAIL_MOTION + 6].reshape(2, 3),
                            rail_velocity=u[U_RAIL_VELOCITY:U_RAIL_VELOCITY + 6].reshape(2, 3),
                            box_force=u[U_BOX_FORCE:U_BOX_FORCE + 6].reshape(2, 3),
                            box_moment=u[U_BOX_MOMENT:U_BOX_MOMENT + 6].reshape(2, 3),
                            axle_torque=u[U_TORQUE])
        self._search_key[:] = 0.0     # the points below are not those of the step's key
        wheelset_rhs(state, TrackPoint(kap, rate, cant), self.setup.tables, self.model, inputs,
                     self._search, self._results, self._deriv, False, self._table_search)
        return self._deriv.copy()

    def _update_record(self):
        fill_record(self.state, self._results, self.params.axle_box_semi_spacing,
                    self._derived, self.record)
        self.record[R_TIME] = self.time
        self.record[R_DISTANCE] = self.distance
        self._update_safety()

    def _update_safety(self):
        """The running-safety outputs of the current state into the record
        (fast_step.update_safety, outside a step: anything that begins now is
        dated now)."""
        time, distance = self.time, self.distance
        fast_step.update_safety(self._contact, self._derived, self._summary, self.model[M_FRICTION],
                                self._safety, self.record, time, distance, time, distance)

    @staticmethod
    def _no_safety() -> np.ndarray:
        """A running-safety memory (fast_step.SF_*) with nothing begun."""
        safety = np.zeros(fast_step.N_SAFETY)
        safety[fast_step.SF_CLIMB_SINCE:fast_step.SF_CLIMB_SINCE + 2] = fast_step.NEVER
        safety[fast_step.SF_AIRBORNE_SINCE] = fast_step.NEVER
        return safety

    # -- initialisation ----------------------------------------------------------
    def initialize(self, inputs: WheelsetInputs | None = None, lateral: float | None = None,
                   yaw: float | None = None):
        """Static equilibrium at t = 0, s = 0: the rigid contact pose, then the
        vertical position and roll that balance the loads with the elastic
        contact forces (Newton on z and roll with the velocities of pure rolling).

        `inputs` (WheelsetInputs or the flat U_* vector) are the loads held at
        t = 0, e.g. the static axle-box forces of the vehicle the wheelset
        carries: the equilibrium is found under them, so a coupled run starts
        without a load step."""
        p = self.params
        if isinstance(inputs, np.ndarray):        # the flat vector of input_vector (U_*)
            u = np.array(inputs, dtype=float).reshape(N_INPUT)
            bad_input_error(u)
            self._u[:] = u
        else:
            # in place: the step reaches self._u by address (_step_block)
            self._u[:] = self.input_vector(inputs or WheelsetInputs())
        y0 = p.initial_lateral if lateral is None else lateral
        yaw0 = p.initial_yaw if yaw is None else yaw
        try:
            rigid = geo.static_contact(self.setup, y0, yaw0)
        except geo.GeometryError as exc:
            raise WheelsetError(f"no static contact at the initial pose: {exc}") from exc
        st = np.zeros(N_STATE)
        st[S_Y] = y0
        st[S_YAW] = yaw0
        st[S_Z] = rigid.z - 5e-5     # start just inside the elastic contact
        st[S_ROLL] = rigid.roll
        st[S_SPIN_RATE] = p.speed / p.nominal_radius
        if p.bogie:
            self.model[M_BOX_Z_REF] = rigid.z
        # Newton on (z, roll) for zero vertical and roll accelerations, damped: a
        # step that does not reduce them is halved (the creep forces' vertical
        # parts may make the accelerations turn faster than their finite-difference
        # Jacobian says, e.g. with a large linear spin coefficient f23)
        z_ref0 = rigid.z

        def residual(pose):
            d = self.rhs(pose)
            return np.array([d[S_VZ], d[S_ROLL_RATE]])

        f = residual(st)
        for _ in range(60):
            if abs(f[0]) < 1e-6 and abs(f[1]) < 1e-6:
                break
            jac = np.zeros((2, 2))
            for j, (idx, h) in enumerate(((S_Z, 1e-7), (S_ROLL, 1e-7))):
                st2 = st.copy()
                st2[idx] += h
                jac[:, j] = (residual(st2) - f) / h
            if abs(np.linalg.det(jac)) < 1e-30:
                step = np.array([-1e-5, 0.0])     # not yet in contact on both wheels
            else:
                step = np.clip(np.linalg.solve(jac, -f), -2e-5, 2e-5)
            for _ in range(12):
                trial = st.copy()
                trial[S_Z] += step[0]
                trial[S_ROLL] += step[1]
                f_trial = residual(trial)
                if np.linalg.norm(f_trial) < np.linalg.norm(f) or not np.all(np.isfinite(jac)):
                    break
                step = 0.5 * step
            st, f = trial, f_trial
        else:
            raise WheelsetError("static equilibrium not found at the initial pose")
        if p.bogie:
            # the built-in bogie's rest height: the boxes at rest where the wheelset sits
            self.model[M_BOX_Z_REF] = z_ref0
        self.state[:] = st
        self.time = 0.0
        self.distance = 0.0
        self.rhs(self.state)
        self._update_record()
        self.internal_step = self.stable_internal_step()
        self._initialized = True

    # -- stepping ------------------------------------------------------------------
    def advance(self, h: float, inputs: WheelsetInputs | None = None) -> StepResult:
        """Advance by exactly h (s) with n = ceil(h / internal_step) equal substeps.

        Returns StepResult("discard", reason) and leaves the state unchanged if
        the step cannot be completed (non-finite state, excessive penetration,
        derailment, loss of all contact)."""
        return self.advance_vector(h, self._u if inputs is None else self.input_vector(inputs))

    def _step_block(self):
        """(block, ints, reals) of fast_step.pack_core_block: the step's arrays by
        address (numba unboxes 3 arrays instead of 40). Built on first use and
        again for a copy of the model (whose arrays are its own: the block
        records the id of the model it was made for)."""
        core = (self.state, self._clock, self._rhs_count, self._safety_before, self._safety,
                self._u, self._u_before)
        owner = self._block_owner
        if owner[0] != id(self) or not all(map(operator.is_, core, owner[1])):
            # (also if one of these arrays was replaced rather than changed in place)
            block, ints, reals, kept = fast_step.pack_core_block(
                dict(zip(fast_step.CORE_ARRAYS, core)), self._step_data)
            self._block = (block, ints, reals)
            self._block_owner = (id(self), core, kept)
        return self._block

    def advance_vector(self, h: float, u: np.ndarray) -> StepResult:
        """`advance` with the inputs as the flat vector of `input_vector` (U_*):
        one numba call for the whole step and its bookkeeping (fast_step.core_step:
        solver.integrate.advance_kernel, fast_step.accept_step); the outputs at
        the new state are in `record`. A non-finite input raises
        WheelsetError and changes nothing."""
        if not self._initialized:
            raise WheelsetError("advance() before initialize()")
        if not (isinstance(h, (int, float)) and 0.0 < h < math.inf):
            raise WheelsetError(f"step size must be positive and finite, got {h!r}")
        if not (type(u) is np.ndarray and u.dtype == np.float64 and u.shape == (N_INPUT,)
                and u.flags.c_contiguous):
            # the compiled step reads N_INPUT entries without bounds checks
            try:
                u = np.ascontiguousarray(u, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise WheelsetError(f"the input vector must be {N_INPUT} numbers (input_vector): "
                                    f"{exc}") from None
            if u.shape != (N_INPUT,):
                raise WheelsetError(f"the input vector must have {N_INPUT} entries "
                                    f"(input_vector), got shape {u.shape}")
        # (the substeps of the step as integrated: fast_step.core_step rounds h)
        n_sub = max(1, int(math.ceil(quantized_step(float(h)) / self.internal_step - 1e-9)))
        if n_sub > self.params.max_substeps:
            return StepResult(
                "discard", f"a step of {h:g} s needs {n_sub} internal steps of at most "
                f"{self.internal_step:g} s, more than the {self.params.max_substeps} "
                "allowed per step (max_substeps, FMU parameter solver.max_substeps): split "
                "it into shorter communication steps", 0, "too_many_substeps")
        saved_state, saved_contact, saved_summary = self._saved
        code, where, n_rhs = fast_step.core_step(float(h), n_sub, u, float(self.params.speed),
                                                 self._flange_passed, *self._step_block())
        if code == PROBLEM_BAD_INPUT:
            bad_input_error(u)
        if code == PROBLEM_NONE and abs(self.state[S_Y]) > self._flange_passed:
            # past the flange: the flange tip has crossed the rail's gauge face
            y_before, y_after = float(saved_state[S_Y]), float(self.state[S_Y])
            self.state[:] = saved_state
            self._contact[:] = saved_contact
            self._summary[:] = saved_summary
            self._update_record()
            if (abs(y_before) <= self._flange_passed
                    and abs(y_after) > derailment.JUMP_FACTOR * self._flange_passed):
                # from before the flange to far beyond it in one step: not a wheel
                # climbing but the integration failing
                return StepResult(
                    "discard", f"the lateral displacement jumped from {y_before * 1e3:.1f} "
                    f"to {y_after * 1e3:.1f} mm in one step (numerical instability: reduce "
                    "the internal step)" + self._stability_hint(h / n_sub), 0, "non_finite")
            side = 0 if y_after > 0 else 1
            return StepResult(
                "discard", f"derailment: the {('left', 'right')[side]} wheel is off its rail "
                f"head on the field side: the lateral displacement {y_after * 1e3:.1f} mm is past "
                f"the flange (its tip crosses the gauge face at {self._flange_passed * 1e3:.1f} mm)",
                0, "derailment")
        if code == PROBLEM_AIRBORNE and min(self._summary[O_GAP_LEFT:O_GAP_RIGHT + 1]) >= 0.5:
            # both wheels half a metre off their rails (or not over them at all)
            # after one step: not a flight but the integration failing
            self.state[:] = saved_state
            self._contact[:] = saved_contact
            self._summary[:] = saved_summary
            self._update_record()
            return StepResult(
                "discard", "both wheels left their rails by more than 0.5 m in one step "
                "(numerical instability: reduce the internal step)"
                + self._stability_hint(h / n_sub), 0, "non_finite")
        if code == PROBLEM_OFF_RAIL:
            moved = abs(self._summary[O_RAIL_ON_WHEEL_LEFT + where]
                        - saved_summary[O_RAIL_ON_WHEEL_LEFT + where])
            if moved > self._flange_passed:
                # across the rail head by more than the flange's reach in one step:
                # not a wheel sliding off its rail but the integration failing
                self.state[:] = saved_state
                self._contact[:] = saved_contact
                self._summary[:] = saved_summary
                return StepResult(
                    "discard", f"the {('left', 'right')[where]} wheel moved {moved * 1e3:.1f} mm "
                    "across its rail head in one step (numerical instability: reduce the internal "
                    "step)" + self._stability_hint(h / n_sub), 0, "non_finite")
        if code != PROBLEM_NONE:
            reason, message = self._problem_message(code, where)
            self.state[:] = saved_state
            self._contact[:] = saved_contact
            self._summary[:] = saved_summary
            if code == PROBLEM_AIRBORNE:
                # (the step's outputs were recorded before its flight was judged)
                self._update_record()
            if reason != "derailment":
                message += self._stability_hint(h / n_sub)
            return StepResult("discard", message, 0, reason)
        # accepted: core_step did the bookkeeping (as the FMU's fast step does)
        return StepResult("ok", "", n_rhs)

    def undo_step(self):
        """Take back the last accepted step (the state, time, inputs and outputs as
        before it, bit for bit): for a caller that refuses its result, e.g. the FMU
        when an output would leave its declared range. Only once per step."""
        if not self._clock[fast_step.K_BEFORE_VALID]:
            raise WheelsetError("undo_step() without an accepted step to take back")
        saved_state, saved_contact, saved_summary = self._saved
        self.state[:] = saved_state
        self._contact[:] = saved_contact
        self._summary[:] = saved_summary
        self._u[:] = self._u_before
        clock = self._clock
        clock[fast_step.K_TIME] = clock[fast_step.K_BEFORE_TIME]
        clock[fast_step.K_DISTANCE] = clock[fast_step.K_BEFORE_DISTANCE]
        self._rhs_count[0] = self._rhs_count[1]
        self._safety[:] = self._safety_before
        clock[fast_step.K_BEFORE_VALID] = 0.0
        self._update_record()

    # Stability limit of the explicit integrators for a decaying mode x' = -x / tau:
    # RK4 on the negative real axis to h = 2.785 tau, semi-implicit Euler to h = 2 tau.
    STABILITY_LIMIT = {"rk4": 2.785, "semi-implicit": 2.0}

    def creep_time_constant(self) -> float:
        """Time constant (s) of the longitudinal slip mode at the current contact
        patches. A longitudinal slip velocity dv = vx - r Omega decays under the
        creep forces f11 dv / V, which brake the wheelset (mass m) and spin up the
        axle (inertia J_y, lever r):  d(dv)/dt = -(1/V) sum f11 (1/m + r^2/J_y) dv,
        so tau = V / sum[f11 (1/m + r^2/J_y)], with Kalker's f11 = G a b C11 per
        active point (the initial slope of every creep model here; saturation only
        lowers it). inf when no point is in contact or V = 0."""
        p = self.params
        shear = p.young / (2.0 * (1.0 + p.poisson))
        rate = 0.0
        for row in self._contact.reshape(-1, N_CONTACT):
            if row[C_ACTIVE] > 0.5 and row[C_A] > 0.0 and row[C_B] > 0.0:
                f11 = (p.creep_coefficients[0] if p.creep_coefficients[0] > 0 else
                       linear_creep_coefficients(row[C_A], row[C_B], shear, p.poisson)[0])
                rate += f11 * (1.0 / p.mass + row[C_RADIUS] ** 2 / p.inertia_spin)
        return p.speed / rate if rate > 0.0 and p.speed > 0.0 else math.inf

    #: fraction of the explicit stability limit the internal step is held to: the
    #: limit is computed at the initial contact; flange contact adds contact
    #: points and can halve the time constant during a run.
    STABILITY_SAFETY = 0.5

    def stable_internal_step(self) -> float:
        """The internal step used by `advance`: params.internal_step, or less where
        the explicit stability limit of the creep damping at the initial contact
        (STABILITY_LIMIT[integrator] * creep_time_constant(), e.g. 0.986 ms for
        the S1002/UIC60 wheelset at 5 m/s with RK4) times STABILITY_SAFETY is
        smaller (low speeds: the time constant is proportional to V). With an
        adaptive integrator ("rk23", "rk45", "rosenbrock") params.internal_step, their largest
        step: the error test keeps every step within the stability limit."""
        if self.params.integrator in ADAPTIVE_INTEGRATORS:
            return self.params.internal_step     # the largest step; the error test does the rest
        limit = self.STABILITY_LIMIT[self.params.integrator] * self.creep_time_constant()
        return min(self.params.internal_step, self.STABILITY_SAFETY * limit)

    def _stability_hint(self, dt: float) -> str:
        """A sentence for a discarded step when the internal step is above the
        explicit stability limit of the creep damping (else empty)."""
        if self.params.integrator in ADAPTIVE_INTEGRATORS:
            return ""
        tau = self.creep_time_constant()
        limit = self.STABILITY_LIMIT[self.params.integrator] * tau
        if not dt > limit:
            return ""
        return (f"; probable cause: the internal step {dt * 1e3:.3g} ms is above the "
                f"stability limit {limit * 1e3:.3g} ms of the creep damping (longitudinal "
                f"slip time constant {tau * 1e3:.3g} ms at V = {self.params.speed:g} m/s, "
                "WheelsetModel.creep_time_constant): reduce the internal step")

    def _problem_message(self, code, side):
        """(reason, message) of a step that cannot be accepted (PROBLEM_* code)."""
        if code == PROBLEM_STEP_SIZE:
            return ("step_size", f"the {self.params.integrator} integrator needed more than "
                    f"{self.params.max_substeps} steps (max_substeps) in this communication "
                    f"step to meet its tolerance {self.params.tolerance:g} (an impact or an "
                    "instability; raise solver.tolerance or split the communication step)")
        if code == PROBLEM_NON_FINITE:
            return ("non_finite", "the wheelset state became non-finite (numerical instability: "
                    "reduce the internal step)")
        if code == PROBLEM_PENETRATION:
            pen = self._summary[O_MAX_PENETRATION]
            return ("excessive_penetration", f"excessive penetration {pen * 1e3:.2f} mm > "
                    f"{self.params.max_penetration * 1e3:.2f} mm (impact or instability)")
        name = ("left", "right")[side] if side >= 0 else ""
        if code == PROBLEM_OFF_RAIL:
            offset = self._summary[O_RAIL_ON_WHEEL_LEFT + side]
            return ("derailment", f"derailment: the {name} wheel has dropped off its rail head "
                    f"inside the gauge (the rail head's centre lies {offset * 1e3:.1f} mm from "
                    f"its taping line, beyond the profile's field-side end at "
                    f"{self.setup.wheel_table[-1, geo.T_LAT] * 1e3:.1f} mm)")
        if code == PROBLEM_AIRBORNE:
            height = derailment.flange_height(self.setup)
            gaps = self._summary[O_GAP_LEFT:O_GAP_RIGHT + 1]
            if min(gaps) > height:
                return ("derailment", "derailment: both wheels are more than the flange height "
                        f"({height * 1e3:.1f} mm) above their rails (gaps {gaps[0] * 1e3:.1f} and "
                        f"{gaps[1] * 1e3:.1f} mm): the flanges no longer guide the wheelset")
            return ("derailment", "derailment: both wheels have been off their rails for longer "
                    f"than {derailment.airborne_limit(self.setup) * 1e3:.0f} ms, the flight of a "
                    f"wheelset rising by the flange height ({height * 1e3:.1f} mm) under gravity "
                    "alone: the flanges no longer guide it")
        return ("derailment", f"derailment: the {name} wheel has climbed its rail (a loaded "
                "contact within 3 mm of the flange tip: risen by the flange height)")

    # -- outputs -------------------------------------------------------------------
    def outputs(self) -> WheelsetOutputs:
        """The outputs at the current state (derived quantities by the numba kernel
        `derived_outputs`; the arrays are fresh copies, safe to keep)."""
        c = self._contact.copy()
        d = np.empty(N_DERIVED)
        derived_outputs(self.state, c, self.params.axle_box_semi_spacing, d)
        st = self.state
        active = c[..., C_ACTIVE] > 0.5
        return WheelsetOutputs(
            time=self.time, distance=self.distance, position=st[0:3].copy(),
            orientation=st[3:6].copy(), velocity=st[6:9].copy(), angular_velocity=st[9:12].copy(),
            axle_box_position=d[D_BOX_POS:D_BOX_POS + 6].reshape(2, 3),
            axle_box_velocity=d[D_BOX_VEL:D_BOX_VEL + 6].reshape(2, 3),
            wheel_rail_force=d[D_WHEEL_RAIL:D_WHEEL_RAIL + 6].reshape(2, 3),
            lateral_force=d[D_Y:D_Y + 2], vertical_force=d[D_Q:D_Q + 2], derailment_quotient=d[D_YQ:D_YQ + 2],
            contact_count=active.sum(axis=1), contact_active=active,
            contact_y_wheel=c[..., C_S_WHEEL], contact_y_rail=c[..., C_U_RAIL],
            contact_position=c[..., C_X:C_Z + 1], contact_angle=c[..., C_ANGLE],
            rolling_radius=c[..., C_RADIUS], creepage_longitudinal=c[..., C_XI],
            creepage_lateral=c[..., C_ETA], creepage_spin=c[..., C_SPIN], normal_force=c[..., C_NORMAL],
            creep_force_longitudinal=c[..., C_CREEP_LONG], creep_force_lateral=c[..., C_CREEP_LAT],
            spin_moment=c[..., C_SPIN_MOMENT], semi_axis_a=c[..., C_A], semi_axis_b=c[..., C_B],
            point_lateral_force=d[D_PY:D_PY + 6].reshape(2, 3),
            point_vertical_force=d[D_PQ:D_PQ + 6].reshape(2, 3),
            point_derailment_quotient=d[D_PYQ:D_PYQ + 6].reshape(2, 3),
            wear_number=d[D_WEAR:D_WEAR + 6].reshape(2, 3), penetration=c[..., C_PENETRATION],
            elastic_energy=float(d[D_ENERGY]),
            flange_climb_ratio=self.record[R_CLIMB:R_CLIMB + 2].copy(),
            flange_climb_time=self.record[R_CLIMB_TIME:R_CLIMB_TIME + 2].copy(),
            flange_climb_distance=self.record[R_CLIMB_DISTANCE:R_CLIMB_DISTANCE + 2].copy(),
            axle_sum_y_over_q=float(self.record[R_AXLE_SUM]),
            weinstock_ratio=float(self.record[R_WEINSTOCK]),
            airborne_time=float(self.record[R_AIRBORNE]),
            lift_height=self.record[R_LIFT_HEIGHT:R_LIFT_HEIGHT + 2].copy(),
            wheel_lift=self._summary[:2] > 0.5,
            rhs_evaluations=self.rhs_evaluations)

    def mechanical_energy(self) -> float:
        """Kinetic + gravitational (track frame, no cant) + elastic contact energy (J)."""
        p, st = self.params, self.state
        kinetic = 0.5 * p.mass * (st[S_VX] ** 2 + st[S_VY] ** 2 + st[S_VZ] ** 2) \
            + 0.5 * p.inertia_roll * st[S_ROLL_RATE] ** 2 + 0.5 * p.inertia_yaw * st[S_YAW_RATE] ** 2 \
            + 0.5 * p.inertia_spin * st[S_SPIN_RATE] ** 2
        self.rhs(self.state)
        return float(kinetic + p.mass * GRAVITY * st[S_Z] + self._contact[..., C_ELASTIC_ENERGY].sum())
