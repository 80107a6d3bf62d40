"""The parameters of the wheelset model and the names of its models."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..contact.creep.models import CREEP_MODELS
from ..contact.geometry.modes import CONTACT_MODELS, GEOMETRY_MODES
from ..dynamics.integrators.methods import INTEGRATORS
from ..errors import WheelsetError
from ..profiles.builtins import builtin_profile, is_builtin_profile
from ..profiles.files import load_profile
from ..track.alignment import Track, load_track
from ..track.builtins import TRACKS, builtin_track
from ..track.lumped_rails import TRACK_MODEL_NAMES, ZHAI_2009 as LUMPED_RAILS


# Model names, in id order, from their registries (the FMU's enumerations are
# made from the same registries: fmu_wheelset/fmu/registries.py).
INTEGRATOR_NAMES = INTEGRATORS.names()
CREEP_MODEL_NAMES = CREEP_MODELS.names()
CONTACT_MODEL_NAMES = CONTACT_MODELS.names()           # the id is M_MULTIPOINT: 0 single, 1 multipoint
CONTACT_GEOMETRY_NAMES = GEOMETRY_MODES.names()
MAX_SUBSTEPS_LIMIT = 10 ** 9      # upper bound of WheelsetParameters.max_substeps
# Hunt & Crossley's damping factor (1975, "Coefficient of restitution interpreted
# as damping in vibroimpact", J. Appl. Mech. 42(2) 440-445): e = 1 - alpha v for
# impacts at v, alpha 0.08-0.32 s/m for steel, bronze and ivory from Goldsmith's
# restitution data (their Table 1); the middle of that range for steel on steel.
HUNT_CROSSLEY_ALPHA = 0.2


@dataclass
class WheelsetParameters:
    """Parameters of the wheelset model (SI units).

    Profiles: a built-in name (solver.profiles), a path to a profile file, or a
    Profile object. `rail_inclination` in rad (atan(1/40) for 1:40). Defaults:
    Manchester benchmark wheelset (Iwnicki 1998) on S1002/UIC60 1:40.
    `creep_model`: "kalker", "she", "polach", "fastsim", "fastrip"; `creep_options`
    passed to solver.contact.creep (Polach kA, kS, A, B; FASTSIM and FaStrip nx, ny).
    `contact_model`: "multipoint" or "single" (deepest point per wheel only).
    `contact_geometry`: "online" (the profiles scanned; between scans the
    minima of the last one re-located, geometry.wheelset_contact_tracked: the
    same points as a scan at every full contact search) or "table"
    (solver.contact.geometry.table: contact point sets precomputed at initialisation,
    the same points to rounding).
    `contact_damping`: C in N = K delta^1.5 + C d(delta)/dt (N s/m, Kang 2012).
    `integrator`: "rosenbrock" (the default: the adaptive linearly implicit
    W-method with a kept Jacobian; the stiff contact and creep modes set it no
    step limit, and its error control resolves contact onsets and impacts),
    "rk4" (fixed steps of at most internal_step), "semi-implicit", or the
    adaptive explicit "rk23" / "rk45"; the adaptive ones take steps of at most
    internal_step under the local error `tolerance` (solver.dynamics.integrators). The
    defaults (Rosenbrock, tolerance 1e-5, steps of at most 1 ms) keep Q within
    2 % of the static wheel load and y within 1 um of a converged run on the
    loaded straight track, the Ren & Jin curve and hard flange contact
    (docs/convergence.md); internal_step 10 ms is faster with long
    communication steps, at the same tolerance.
    `bogie`: True for the built-in suspension of stand-alone runs
    (solver/dynamics/suspension.py); False when the host supplies the
    axle-box forces. `suspended_mass`: the share of the vehicle mass carried by
    this wheelset's primary suspension (the built-in suspension only). The
    built-in suspension is a quarter vehicle whose frame and suspended mass
    follow the wheelset laterally: in a curve the wheelset carries the
    suspended mass's uncompensated lateral force and its roll moment
    (`carbody_share` of it on the secondary suspension at `carbody_cg_height`,
    the rest at `frame_cg_height`; the secondary's `secondary_height`,
    `secondary_roll_stiffness`, `secondary_lateral_stiffness`), and the primary
    lateral stiffness and damping (`suspension_stiffness[1]`,
    `suspension_damping[1]`) do not act; `frame_on_centreline` True puts the
    frame on the track centreline instead (Wickens' single suspended wheelset
    of the stability studies: every spring to a frame without lateral freedom,
    no roll moment). A setting that has no effect in the chosen configuration
    and differs from its default is refused (`ineffective_settings`).
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
    # to the scales of solver.dynamics.integrators.embedded.ERROR_SCALE (1 mm, 1 mrad, 0.1 m/s, 0.1 rad/s);
    # internal_step is then their largest step
    tolerance: float = 1e-5
    track: object = "straight"
    axle_box_semi_spacing: float = 1.0
    bogie: bool = False
    suspension_stiffness: tuple = (31.391e6, 3.884e6, 1.22e6)   # kx, ky, kz per box (Iwnicki 1998)
    suspension_damping: tuple = (15e3, 2e3, 4e3)                # cx, cy, cz per box
    suspended_mass: float = 0.0
    # the built-in quarter vehicle (solver/dynamics/suspension.py); defaults: the
    # Manchester benchmark vehicle 1 (Iwnicki 1998) as cosim/vehicle/parameters.py
    # holds it, per wheelset (docs/parameters.md, "The built-in quarter vehicle")
    frame_on_centreline: bool = False
    carbody_share: float = 8000.0 / 9307.5     # of suspended_mass: carbody 32000 / 4 of 9307.5 kg
    carbody_cg_height: float = 2.0             # m above the rail
    frame_cg_height: float = 0.6               # m above the rail
    secondary_height: float = 1.0              # m above the rail
    secondary_roll_stiffness: float = 0.43e6   # N m/rad: 2 x 430 kN/m x (1.0 m)^2 per bogie, half of it
    secondary_lateral_stiffness: float = 0.16e6  # N/m: 2 x 160 kN/m per bogie, half of it
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
    # the track under the wheels (solver.track.lumped_rails): "lumped" rail bodies
    # on spring-damper supports (the default), or "prescribed" rails that move only
    # as the rail inputs say (rigid while they are 0; a host's track model)
    track_model: str = "lumped"
    # each rail body's mass, stiffness and damping matrices as (lateral, vertical,
    # roll, lateral-roll): kg, kg, kg m^2, kg m; N/m, N/m, N m/rad, N/rad; N s/m, ...
    rail_mass: tuple = LUMPED_RAILS.mass
    rail_stiffness: tuple = LUMPED_RAILS.stiffness
    rail_damping: tuple = LUMPED_RAILS.damping
    # the normal contact's damping after Hunt & Crossley (1975): N = K delta^1.5
    # (1 + 3/2 alpha d(delta)/dt); alpha (s/m)
    hunt_crossley: float = HUNT_CROSSLEY_ALPHA

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
        if not isinstance(self.creep_model, str) or self.creep_model not in CREEP_MODELS.names():
            raise WheelsetError(f"creep_model must be one of {list(CREEP_MODELS.names())}, "
                                f"got {self.creep_model!r}")
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
        for name in ("bogie", "frame_on_centreline"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise WheelsetError(f"{name} must be True or False, got {getattr(self, name)!r}")
        for name, low, high in QUARTER_VEHICLE_RANGES:
            value = getattr(self, name)
            if (isinstance(value, bool) or not isinstance(value, (int, float))
                    or not math.isfinite(value) or not low <= value <= high):
                raise WheelsetError(f"{name} must be a number in [{low:g}, {high:g}], got {value!r}")
        self._check_quarter_vehicle_upright()
        if self.track_model not in TRACK_MODEL_NAMES:
            raise WheelsetError(f"track_model must be one of {TRACK_MODEL_NAMES}, got {self.track_model!r}")
        for name, count, positive in (("rail_mass", 4, True), ("rail_stiffness", 4, False),
                                      ("rail_damping", 4, False)):
            vals = getattr(self, name)
            if (not isinstance(vals, (tuple, list)) or len(vals) != count
                    or any(isinstance(v, bool) or not isinstance(v, (int, float))
                           or not math.isfinite(v) for v in vals)
                    or any((v <= 0) if positive else (v < 0) for v in vals[:3])):
                raise WheelsetError(f"{name} must be {count} finite values ("
                                    + ("> 0" if positive else "the first three >= 0") + f"), got {vals!r}")
        for name in ("rail_mass", "rail_stiffness", "rail_damping"):
            lateral, _, roll, coupling = getattr(self, name)
            if coupling * coupling > lateral * roll * (0.999 if name == "rail_mass" else 1.0):
                raise WheelsetError(f"{name}: the lateral-roll coupling {coupling:g} makes the "
                                    f"matrix indefinite (needs coupling^2 <= lateral * roll)")
        if not (isinstance(self.hunt_crossley, (int, float)) and math.isfinite(self.hunt_crossley)
                and 0.0 <= self.hunt_crossley <= 10.0):
            raise WheelsetError(f"hunt_crossley must be in [0, 10] s/m, got {self.hunt_crossley!r}")
        ineffective = ineffective_settings(self)
        if ineffective:
            raise WheelsetError(ineffective[0])

    def _check_quarter_vehicle_upright(self):
        """The quarter vehicle's roll stiffnesses must hold the suspended mass up
        (solver/dynamics/suspension.py: the two rolls' equations have a positive
        definite matrix at the gravity g), else the quasi-static roll has no
        solution: the carbody would topple on its secondary, or the whole on the
        primary."""
        if not self.bogie or self.frame_on_centreline or self.suspended_mass <= 0:
            return
        g = 9.81
        carbody = self.suspended_mass * self.carbody_share
        frame = self.suspended_mass - carbody
        l2 = self.carbody_cg_height - self.secondary_height
        lever = (carbody * (self.carbody_cg_height - self.nominal_radius)
                 + frame * (self.frame_cg_height - self.nominal_radius))
        k2 = self.secondary_roll_stiffness
        k1 = 2.0 * self.suspension_stiffness[2] * self.axle_box_semi_spacing ** 2
        a11, a12, a22 = k2 - carbody * g * l2, -carbody * g * l2, k1 - g * lever
        if k2 > 0 and a11 <= 0:
            raise WheelsetError(
                f"secondary_roll_stiffness {k2:g} N m/rad cannot hold the carbody upright: it "
                f"must exceed m_s carbody_share g (carbody_cg_height - secondary_height) = "
                f"{carbody * g * l2:.4g} N m/rad")
        if k1 > 0 and (a22 <= 0 or (k2 > 0 and a11 * a22 - a12 * a12 <= 0)):
            raise WheelsetError(
                f"the primary roll stiffness 2 kz b^2 = {k1:.4g} N m/rad cannot hold the "
                f"suspended mass upright (it must exceed about g sum m_i (h_i - "
                f"nominal_radius) = {g * lever:.4g} N m/rad)")


# the quarter vehicle's numbers: name, lowest, highest (1, m, N m/rad, N/m)
QUARTER_VEHICLE_RANGES = (
    ("carbody_share", 0.0, 1.0),
    ("carbody_cg_height", 0.0, 10.0),
    ("frame_cg_height", 0.0, 10.0),
    ("secondary_height", 0.0, 10.0),
    ("secondary_roll_stiffness", 0.0, 1.0e10),
    ("secondary_lateral_stiffness", 0.0, 1.0e10),
)
QUARTER_VEHICLE_FIELDS = tuple(name for name, _, _ in QUARTER_VEHICLE_RANGES)


def ineffective_settings(params) -> list:
    """The settings of `params` that differ from their defaults and have no effect
    in its configuration, one sentence each (empty: none): the built-in
    suspension's values without it, the primary lateral spring and damper of the
    quarter vehicle (its frame follows the wheelset), the quarter vehicle's
    heights and stiffnesses with the frame on the centreline or no suspended mass."""
    default = WheelsetParameters()
    changed = [name for name in ("suspended_mass", "frame_on_centreline", *QUARTER_VEHICLE_FIELDS)
               if getattr(params, name) != getattr(default, name)]
    problems = []
    if not params.bogie:
        for name in ("suspension_stiffness", "suspension_damping"):
            if tuple(getattr(params, name)) != tuple(getattr(default, name)):
                changed.append(name)
        if changed:
            problems.append(f"{', '.join(changed)} set, but the built-in suspension is off "
                            "(bogie / suspension.builtin false): they have no effect; switch it "
                            "on or leave them at their defaults")
        return problems
    if not params.frame_on_centreline:
        lateral = [f"{name}[1] (y)" for name in ("suspension_stiffness", "suspension_damping")
                   if getattr(params, name)[1] != getattr(default, name)[1]]
        if lateral:
            problems.append(f"{' and '.join(lateral)} set, but the built-in quarter vehicle's "
                            "frame follows the wheelset laterally, so the primary lateral "
                            "spring and damper do not act; leave them at their defaults, or "
                            "set frame_on_centreline (suspension.frame_on_centreline) for a "
                            "frame on the track centreline")
    quarter = [name for name in QUARTER_VEHICLE_FIELDS if name in changed]
    if quarter and params.frame_on_centreline:
        problems.append(f"{', '.join(quarter)} set, but with the frame on the track centreline "
                        "the suspended mass has no roll moment or sway: they have no effect")
    elif quarter and params.suspended_mass == 0:
        problems.append(f"{', '.join(quarter)} set, but suspended_mass is 0: they have no "
                        "effect")
    return problems


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
    from ..data_files import resolve_contained
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


def resolve_profile(spec, kind, step):
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


def resolve_track(spec):
    if isinstance(spec, Track):
        return spec
    if isinstance(spec, str):
        source = resolve_source(spec, lambda name: name in TRACKS.names())
        if source is None:
            raise WheelsetError(f"unknown track {spec!r}: not built in "
                                f"({', '.join(sorted(TRACKS.names()))}) and no such file")
        if source == spec and spec in TRACKS.names():
            return builtin_track(spec)
        return load_track(source)
    raise WheelsetError(f"track must be a name, a path or a Track, got {spec!r}")
