"""THE table of the wheelset FMU's variables (FMI 2.0 co-simulation).

Every FMU variable is one `ScalarVariable` in `VARIABLES`: its name, type,
causality, variability, initial, unit, range, start, description and the core
quantity it carries (``core``):

* a parameter: the ``solver.model.parameters.WheelsetParameters`` field (and, for a
  3-vector field, the ``component``). Its start value is the core's default:
  ``start`` is ``CORE_DEFAULT`` and `fmi_value` reads it from
  ``WheelsetParameters()``; only the parameters the core does not have (the
  FMU's track options) carry their own start;
* an input: ``(layout constant, offset)`` of its entry in the core's input
  vector (``solver.model.wheelset.U_*``), or None for the track irregularities, which
  the slave spreads over both rails;
* an output: its name in the core's output record (the names are the same:
  ``solver.model.outputs.RECORD_INDEX``), None for the status flags that the slave
  sets.

Everything else derives from this table: the model description
(`fmu_wheelset.fmu.model_description`), the slave's parameter mapping
(`parameters_from_fmi`), the start values of the validation suite and of the
sweep runner (`start_values_for`) and the tests. A new FMU parameter is one
row here (plus the physics in the core that uses it).

Enumerations: the values are the core's ids (the position of the model name in
``solver.model.parameters.CREEP_MODEL_NAMES``, ``CONTACT_MODEL_NAMES``,
``CONTACT_GEOMETRY_NAMES``, ``INTEGRATOR_NAMES``); `ENUMERATIONS` only adds the FMI item name and its
description per core name.

This module imports only the standard library: it is bundled in the FMU as
``resources/wheelset_fmu_variables.py`` and imported by the slave when pythonfmu
instantiates it (no solver import there). Functions that need the core take
its ``wheelset`` module as an argument.

Names follow the FMI 2.0 "structured" convention: dots for the hierarchy,
``[i]`` (1-based) for the contact slots, ``left`` / ``right`` for the sides.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

if __package__:
    from . import registries
else:
    import wheelset_fmu_registries as registries

SIDES = ("left", "right")
POINTS_PER_WHEEL = 3     # solver.layout.MAX_POINTS (tests/test_variables.py holds them equal)
AXES = "xyz"


class _CoreDefault:
    """Marker of a start value that is the core's default (WheelsetParameters)."""

    def __repr__(self):
        return "CORE_DEFAULT"


CORE_DEFAULT = _CoreDefault()
# the `core` of a creep model's option parameter: WheelsetParameters.creep_options
# of the model in use; its `component` is (model, option)
CREEP_OPTION = "creep_options"


@dataclass(frozen=True)
class ScalarVariable:
    """One FMI 2.0 ScalarVariable (fields as in the model description)."""
    name: str
    type: str                 # "Real" | "Integer" | "Boolean" | "String" | "Enumeration"
    causality: str            # "parameter" | "input" | "output"
    variability: str          # "fixed" | "continuous" | "discrete"
    initial: Optional[str]    # "exact" | "approx" | None (inputs: not given)
    description: str
    start: Any = CORE_DEFAULT
    unit: Optional[str] = None
    min: Optional[float] = None
    max: Optional[float] = None
    declared_type: Optional[str] = None   # Enumeration type name
    core: Any = None          # see the module docstring
    component: Optional[int] = None       # parameters: index into a vector field


@dataclass(frozen=True)
class EnumerationType:
    """An FMI Enumeration whose values are the core's ids: ``core_names`` is the
    name of the core's tuple of model names (solver.model); ``items`` gives
    the FMI item name and description of each core name (from the solver's
    registries: registries.py)."""
    name: str
    core_names: str
    items: Dict[str, Tuple[str, str]]


ENUMERATIONS = tuple(
    EnumerationType(type_name, core_names, {name: (item, label) for name, item, label in items})
    for type_name, (core_names, items) in registries.ENUMERATIONS.items())
ENUMERATION_BY_NAME = {e.name: e for e in ENUMERATIONS}

BIG_FORCE = 1.0e7       # N, bound of forces (a wheel load is ~1e5 N)
BIG_MOMENT = 1.0e7      # N.m
BIG_LENGTH = 1.0e7      # m, travelled distance
# inputs on the axle boxes: 1e6 N (100 t) and 1e6 N.m, five times the static box
# load of the heaviest axles (40 t: 2e5 N per box); within them one doStep of
# 1 ms from rest is taken (tests/test_ranges.py)
BOX_FORCE = 1.0e6       # N
BOX_MOMENT = 1.0e6      # N.m
# most internal steps one doStep may take (solver.max_substeps): its declared
# maximum bounds the work one doStep can start (benchmarks/bench_worst_do_step.py,
# docs/limits_and_failures.md: 32 s of CPU time with the costliest choice,
# FaStrip with the Rosenbrock method at a tolerance no step meets, 0.32 ms per
# attempted internal step (25 s with RK45); 1.1 s with the defaults, the
# Rosenbrock method at 1e-5 and Polach; a discarded doStep is one integration:
# fast_step._hand)
MIN_SUBSTEPS = 10
MAX_SUBSTEPS = 100_000


def _parameter(name, kind, description, unit=None, lo=None, hi=None, *, core=None,
               component=None, start=CORE_DEFAULT, declared_type=None):
    return ScalarVariable(name, kind, "parameter", "fixed", "exact", description, start,
                          unit, lo, hi, declared_type, core, component)


def _input(name, description, unit, lo, hi, core=None):
    return ScalarVariable(name, "Real", "input", "continuous", None, description, 0.0,
                          unit, lo, hi, None, core)


def _output(name, kind, description, unit=None, lo=None, hi=None):
    start = {"Real": 0.0, "Integer": 0, "Boolean": False}[kind]
    return ScalarVariable(name, kind, "output", "continuous" if kind == "Real" else "discrete",
                          "approx", description, start, unit, lo, hi, None, core=name)


def model_names(type_name: str) -> Tuple[str, ...]:
    """The names of an enumeration's models in id order ("CreepModel",
    "ContactModel", "ContactGeometry", "Integrator"): the choices of the command
    line and of sweep plans, from the solver's registries (registries.py)."""
    return tuple(name for name, _, _ in registries.ENUMERATIONS[type_name][1])


def builtin_profile_names(kind: str) -> Tuple[str, ...]:
    """The built-in profiles of a kind ("wheel" / "rail") with their aliases, in
    registration order (registries.PROFILES, from the solver's registry)."""
    return tuple(n for name, k, aliases, _ in registries.PROFILES if k == kind
                 for n in (name, *aliases))


def _enumeration_text(type_name: str, declared=registries, labels: bool = False) -> str:
    """'0 Kalker, 1 SHE, ...': the values and item names of an enumeration (with
    `labels`: each followed by its description in parentheses)."""
    _, items = declared.ENUMERATIONS[type_name]
    return ", ".join(f"{i} {item}" + (f" ({label})" if labels else "")
                     for i, (_, item, label) in enumerate(items))


def creep_option_name(model: str, option: str) -> str:
    """The FMU parameter of a creep model's option."""
    return f"contact.creep.{model}.{option}"


def _creep_option_parameters(declared) -> List[ScalarVariable]:
    """One parameter per option of each creep model (registries.CREEP_OPTIONS): its
    unit, range and default are the registry's; the core takes the options of the
    model in use (contact.creep_model), the others are not read."""
    out = []
    for model, name, unit, default, low, high, integer, choices, text, source in \
            declared.CREEP_OPTIONS:
        kind = "Integer" if integer or choices else "Real"
        start = int(default) if kind == "Integer" else float(default)
        if choices:
            text += " (" + ", ".join(f"{i} {c}" for i, c in enumerate(choices)) + ")"
        description = f"{model} creep model: {text}" + (f"; source: {source}" if source else "")
        out.append(_parameter(creep_option_name(model, name), kind, description, unit,
                              int(low) if kind == "Integer" else low,
                              int(high) if kind == "Integer" else high,
                              core=CREEP_OPTION, component=(model, name), start=start))
    return out


def _builtin_profiles(declared, kind: str) -> str:
    """'S1002, LMA, ...': the built-in profiles of a kind, with their aliases."""
    return ", ".join(n for name, k, aliases, _ in declared.PROFILES if k == kind
                     for n in (name, *aliases))    # builtin_profile_names, of `declared`


def _parameters(declared) -> List[ScalarVariable]:
    p = _parameter
    return [
        p("wheel.profile", "String",
          f"wheel profile: built-in name ({_builtin_profiles(declared, 'wheel')}), a file in "
          "the FMU resources (e.g. profiles/my_wheel.txt) or an absolute path; files in mm",
          core="wheel_profile"),
        p("rail.profile", "String",
          f"rail profile: built-in name ({_builtin_profiles(declared, 'rail')}), a file in "
          "the FMU resources or an absolute path; files in mm", core="rail_profile"),
        p("track.gauge", "Real", "track gauge, measured 14 mm below the rail top",
          "m", 1.0, 2.0, core="gauge"),
        p("rail.inclination", "Real",
          "rail cant (inclination of the rail towards the track centre), 1:40 = 0.025 rad",
          "rad", 0.0, 0.2, core="rail_inclination"),
        # with track.gauge: the gauge minus 75 mm (1435 - 1360) over the whole
        # gauge range (each alone, the other at its start value, puts the wheels
        # beside the rails: fmi2ExitInitializationMode says so)
        p("wheelset.back_to_back", "Real", "distance between the wheels' inner faces",
          "m", 0.925, 1.925, core="back_to_back"),
        p("wheel.nominal_rolling_radius", "Real",
          "wheel radius at the taping line (nominal rolling circle)", "m", 0.1, 1.5,
          core="nominal_radius"),
        p("wheelset.mass", "Real", "wheelset mass", "kg", 1.0, 1.0e5, core="mass"),
        p("wheelset.inertia.x", "Real", "roll moment of inertia (about x)",
          "kg.m2", 1.0e-3, 1.0e5, core="inertia_roll"),
        p("wheelset.inertia.y", "Real", "spin moment of inertia (about the axle, y)",
          "kg.m2", 1.0e-3, 1.0e5, core="inertia_spin"),
        p("wheelset.inertia.z", "Real", "yaw moment of inertia (about z)",
          "kg.m2", 1.0e-3, 1.0e5, core="inertia_yaw"),
        p("material.youngs_modulus", "Real", "Young's modulus of wheel and rail",
          "Pa", 1.0e9, 1.0e12, core="young"),
        # max 0.499, not 0.5: the core takes 0 <= nu < 0.5 (0.5, incompressible, is
        # not a wheel-rail material), and FMI has no open bound; every declared
        # value is accepted
        p("material.poisson_ratio", "Real", "Poisson's ratio of wheel and rail",
          "1", 0.0, 0.499, core="poisson"),
        p("contact.friction_coefficient", "Real", "wheel-rail friction coefficient",
          "1", 0.0, 2.0, core="friction"),
        p("contact.creep_model", "Enumeration",
          "tangential contact model: " + _enumeration_text("CreepModel", declared)
          + "; its options are the parameters contact.creep.<model>.*",
          core="creep_model", declared_type="CreepModel"),
        *_creep_option_parameters(declared),
        p("contact.model", "Enumeration",
          "contact points per wheel: " + _enumeration_text("ContactModel", declared, labels=True),
          core="contact_model", declared_type="ContactModel"),
        p("contact.geometry", "Enumeration",
          "contact geometry: " + _enumeration_text("ContactGeometry", declared, labels=True),
          core="contact_geometry", declared_type="ContactGeometry"),
        p("contact.damping", "Real",
          "normal contact damping C in N = K delta^1.5 + C d(delta)/dt (Kang 2012)",
          "N.s/m", 0.0, 1.0e9, core="contact_damping"),
        # maxima about 400 times Kalker's values for a 200 kN wheel load on a
        # 8 mm contact patch (G a b C11 = 2.4e7 N, G (ab)^1.5 C23 = 6e4 N.m,
        # G (ab)^2 C33 = 340 N.m2); a step of 1 ms is taken at each of them
        # with contact.creep_model Kalker (tests/test_ranges.py)
        *[p(f"contact.creep_coefficient.{name}", "Real",
            f"linear studies: Kalker's creep coefficient {name} per contact point "
            f"({what}); 0 = from Kalker's table (default); used with contact.creep_model "
            f"Kalker only", unit, 0.0, top, core="creep_coefficients", component=k)
          for k, (name, unit, what, top) in enumerate((
              ("f11", "N", "longitudinal", 1.0e10), ("f22", "N", "lateral", 1.0e10),
              ("f23", "N.m", "lateral/spin coupling", 1.0e6), ("f33", "N.m2", "spin", 1.0e6)))],
        p("wheelset.roll_rate_creepage", "Boolean",
          "include the roll rate of the wheelset in the lateral creepages (true); false: the "
          "textbook creepages without it", core="roll_rate_creepage"),
        p("wheelset.gyroscopic", "Boolean",
          "include the gyroscopic moments of the spinning axle (J_y Omega x yaw/roll rates; "
          "true); false: the textbook model without them", core="gyroscopic"),
        p("contact.max_penetration", "Real",
          "a step with a larger normal penetration is discarded (impact or instability)",
          "m", 1.0e-3, 0.1, core="max_penetration"),
        p("solver.internal_step", "Real",
          "largest internal integration step; a communication step is split into equal "
          "sub-steps no longer than this, and no longer than half the creep-damping "
          "stability limit at the initial contact (about 0.5 ms at 5 m/s); the adaptive "
          "integrators' largest step", "s", 1.0e-7, 0.01,
          core="internal_step"),
        p("solver.max_substeps", "Integer",
          "most internal steps one doStep may take, an adaptive integrator's rejected "
          "tries included (at least 10: a rejected step shrinks at most 5 times, so 10 "
          "tries reach 1/2e6 of the step); a longer communication step is discarded "
          "before it starts (fmi2Discard, reason logged); at most 100000: one doStep then "
          "takes at most about 32 s of CPU time (FaStrip with an adaptive integrator at a "
          "tolerance no step meets; docs/SECURITY.md)",
          None, MIN_SUBSTEPS, MAX_SUBSTEPS, core="max_substeps"),
        p("solver.integrator", "Enumeration",
          "internal integrator: " + _enumeration_text("Integrator", declared) + " (the adaptive ones "
          "take steps of at most solver.internal_step under solver.tolerance: for hard "
          "flange contact and impacts; the Rosenbrock W-method is linearly implicit, the "
          "stiff contact sets it no step limit)",
          core="integrator", declared_type="Integrator"),
        p("solver.tolerance", "Real",
          "adaptive integrators: local error tolerance per step, relative to 1 mm, 1 mrad, "
          "0.1 m/s and 0.1 rad/s (and to each state entry's own size)", "1", 1.0e-12, 0.1,
          core="tolerance"),
        # +-20 mm: flange contact of every built-in profile pair, short of climbing
        p("wheelset.initial_lateral", "Real",
          "lateral displacement at t = 0 (static equilibrium is found there)", "m", -0.02, 0.02,
          core="initial_lateral"),
        p("wheelset.initial_yaw", "Real", "yaw angle at t = 0", "rad", -0.1, 0.1,
          core="initial_yaw"),
        p("wheelset.axle_box_semi_spacing", "Real",
          "half the lateral distance between the axle boxes (where the inputs act)",
          "m", 0.1, 2.0, core="axle_box_semi_spacing"),
        p("suspension.builtin", "Boolean",
          "stand-alone runs: a built-in quarter vehicle (the primary suspension of Iwnicki "
          "1998, a frame and the suspended mass that follow the wheelset laterally: in a "
          "curve the wheelset carries the suspended mass's uncompensated lateral force and "
          "roll moment); false when the host supplies the axle-box forces", core="bogie"),
        *[p(f"suspension.stiffness.{ax}", "Real",
            f"built-in primary suspension: {ax} stiffness per axle box"
            + (" (with suspension.frame_on_centreline only)" if ax == "y" else ""),
            "N/m", 0.0, 1.0e10,
            core="suspension_stiffness", component=a) for a, ax in enumerate(AXES)],
        *[p(f"suspension.damping.{ax}", "Real",
            f"built-in primary suspension: {ax} damping per axle box"
            + (" (with suspension.frame_on_centreline only)" if ax == "y" else ""),
            "N.s/m", 0.0, 1.0e9,
            core="suspension_damping", component=a) for a, ax in enumerate(AXES)],
        p("suspension.suspended_mass", "Real",
          "share of the vehicle mass carried by this wheelset (built-in suspension only)",
          "kg", 0.0, 1.0e5, core="suspended_mass"),
        p("wheelset.speed", "Real", "forward speed along the track",
          "m/s", 0.0, 150.0, core="speed"),
        p("track.scenario", "String",
          "track: built-in scenario (" + ", ".join(name for name, _ in declared.TRACKS)
          + "), a TOML/CSV file in the FMU resources (e.g. scenarios/kang-r320.toml) or an "
          "absolute path",
          core="track"),
        # FMU-only options (the core has no such field): their start is here
        p("track.direction", "String",
          "side of the curves of a built-in scenario: left or right", start="left"),
        p("track.curvature_from_input", "Boolean",
          "take the track curvature from the input track.curvature instead of the scenario",
          start=False),
        p("track.cant_from_input", "Boolean",
          "take the cant angle from the input track.cant_angle instead of the scenario",
          start=False),
        # a named parameter set (fmu_wheelset/fmu/presets.py, resources/presets/<name>.toml)
        p("preset", "String",
          "named parameter set: free, loaded-passenger, manchester-vehicle-1, "
          "ren-jin-lma-chn60 (resources/presets/<name>.toml, each value with its source); "
          "it sets every parameter it names that the host does not set itself; empty = none",
          start=""),
    ] + _quarter_vehicle_parameters() + _track_interface_parameters(declared)


def _quarter_vehicle_parameters() -> List[ScalarVariable]:
    p = _parameter
    return [
        # the built-in quarter vehicle (solver/dynamics/suspension.py); defaults: the
        # Manchester benchmark vehicle 1 per wheelset (docs/parameters.md)
        p("suspension.frame_on_centreline", "Boolean",
          "built-in suspension: the frame on the track centreline (Wickens' single suspended "
          "wheelset of the stability studies: every primary spring to a frame without "
          "lateral freedom, no roll moment; in a curve that frame takes the curving force) "
          "instead of the quarter vehicle's frame that follows the wheelset",
          core="frame_on_centreline"),
        p("suspension.carbody_share", "Real",
          "built-in quarter vehicle: the part of suspension.suspended_mass on the secondary "
          "suspension, the carbody's share (the rest, the bogie frame's, rides on the primary)",
          "1", 0.0, 1.0, core="carbody_share"),
        p("suspension.carbody_cg_height", "Real",
          "built-in quarter vehicle: height of the carbody's centre of gravity above the rail",
          "m", 0.0, 10.0, core="carbody_cg_height"),
        p("suspension.frame_cg_height", "Real",
          "built-in quarter vehicle: height of the bogie frame's centre of gravity above the "
          "rail", "m", 0.0, 10.0, core="frame_cg_height"),
        p("suspension.secondary_height", "Real",
          "built-in quarter vehicle: height of the secondary suspension above the rail, the "
          "axis the carbody rolls about", "m", 0.0, 10.0, core="secondary_height"),
        p("suspension.secondary_roll_stiffness", "Real",
          "built-in quarter vehicle: roll stiffness of the secondary suspension per wheelset "
          "(0: rigid)", "N.m/rad", 0.0, 1.0e10, core="secondary_roll_stiffness"),
        p("suspension.secondary_lateral_stiffness", "Real",
          "built-in quarter vehicle: lateral stiffness of the secondary suspension per "
          "wheelset (0: rigid)", "N/m", 0.0, 1.0e10, core="secondary_lateral_stiffness"),
    ]


def _track_interface_parameters(declared) -> List[ScalarVariable]:
    """The track under the wheels and the contact's damping (docs/wheel_rail_interface.md)."""
    p = _parameter
    return [
        p("track.model", "Enumeration",
          "track under the wheels: " + _enumeration_text("TrackModel", declared, labels=True)
          + "; a host that couples its own track model through the rail inputs sets Prescribed",
          core="track_model", declared_type="TrackModel"),
        *_rail_body_parameters(),
        p("contact.hunt_crossley", "Real",
          "normal contact damping after Hunt & Crossley (1975, J. Appl. Mech. 42, 440-445): "
          "N = K delta^1.5 (1 + 3/2 alpha d(delta)/dt), alpha in s/m (0.2, steel on steel: a "
          "restitution e = 1 - alpha v of 0.94 at 0.3 m/s; 0: none); beside contact.damping",
          "s/m", 0.0, 10.0, core="hunt_crossley"),
    ]


# each lumped rail body's matrices (lateral, vertical, roll, lateral-roll coupling):
# name, core field, the components' units and declared ranges. The ranges span
# every ballasted and slab track of the literature with margin (rail masses of
# 10-400 kg, stiffnesses 1e6-1e10 N/m); their combination must still be positive
# definite (coupling^2 <= lateral * roll), checked when the FMU initialises: each
# coupling's range lies within half the largest it can have, sqrt of the
# diagonal terms' maxima
RAIL_BODY_MATRICES = (
    ("mass", "rail_mass", ("kg", "kg", "kg.m2", "kg.m"),
     ((0.1, 1.0e4), (0.1, 1.0e4), (1.0e-4, 1.0e3), (-1.0e3, 1.0e3))),
    ("stiffness", "rail_stiffness", ("N/m", "N/m", "N.m/rad", "N/rad"),
     ((1.0e5, 1.0e11), (1.0e5, 1.0e11), (1.0e2, 1.0e9), (-5.0e9, 5.0e9))),
    ("damping", "rail_damping", ("N.s/m", "N.s/m", "N.m.s/rad", "N.s/rad"),
     ((0.0, 1.0e8), (0.0, 1.0e8), (0.0, 1.0e6), (-5.0e6, 5.0e6))),
)
RAIL_BODY_COMPONENTS = ("lateral", "vertical", "roll", "lateral_roll")


def _rail_body_parameters() -> List[ScalarVariable]:
    """rail.lumped.<matrix>.<component>: the lumped rail bodies (track.model Lumped)."""
    out = []
    for matrix, core, units, ranges in RAIL_BODY_MATRICES:
        for k, (component, unit, (lo, hi)) in enumerate(zip(RAIL_BODY_COMPONENTS, units, ranges)):
            what = ("lateral-roll coupling term" if component == "lateral_roll" else f"{component} term")
            out.append(_parameter(
                f"rail.lumped.{matrix}.{component}", "Real",
                f"track.model Lumped: each rail body's {matrix} matrix, {what} (at the rail head's "
                f"reference point, track frame; default: the finite-element ballasted track of "
                f"Zhai, Wang & Cai 2009 reduced to the point under the wheel)",
                unit, lo, hi, core=core, component=k))
    return out


def _inputs() -> List[ScalarVariable]:
    v = []
    for i, side in enumerate(SIDES):
        for a, ax in enumerate(AXES):
            v.append(_input(f"axlebox.{side}.force.{ax}",
                            f"{ax} force of the primary suspension on the wheelset at the {side} "
                            f"axle box, track frame (x forward, y left, z up)",
                            "N", -BOX_FORCE, BOX_FORCE, core=("U_BOX_FORCE", 3 * i + a)))
        for a, ax in enumerate(AXES):
            v.append(_input(f"axlebox.{side}.moment.{ax}",
                            f"moment about {ax} of the primary suspension on the wheelset at the "
                            f"{side} axle box, track frame", "N.m", -BOX_MOMENT, BOX_MOMENT,
                            core=("U_BOX_MOMENT", 3 * i + a)))
    v.append(_input("axle.torque", "traction/braking torque on the axle, + drives forward",
                    "N.m", -BOX_MOMENT, BOX_MOMENT, core=("U_TORQUE", 0)))
    for i, side in enumerate(SIDES):
        motion, rate = ("U_RAIL_MOTION", 3 * i), ("U_RAIL_VELOCITY", 3 * i)
        v += [
            _input(f"rail.{side}.lateral_displacement",
                   f"lateral displacement of the {side} rail under the wheel (+y, track FE)",
                   "m", -0.1, 0.1, core=(motion[0], motion[1])),
            _input(f"rail.{side}.vertical_displacement",
                   f"vertical displacement of the {side} rail under the wheel (+z)", "m", -0.1, 0.1,
                   core=(motion[0], motion[1] + 1)),
            _input(f"rail.{side}.roll_angle",
                   f"roll of the {side} rail about +x (+ raises the head's left edge)",
                   "rad", -0.5, 0.5, core=(motion[0], motion[1] + 2)),
            _input(f"rail.{side}.lateral_velocity",
                   f"time derivative of rail.{side}.lateral_displacement", "m/s", -100.0, 100.0,
                   core=(rate[0], rate[1])),
            _input(f"rail.{side}.vertical_velocity",
                   f"time derivative of rail.{side}.vertical_displacement", "m/s", -100.0, 100.0,
                   core=(rate[0], rate[1] + 1)),
            _input(f"rail.{side}.roll_rate",
                   f"time derivative of rail.{side}.roll_angle", "rad/s", -1000.0, 1000.0,
                   core=(rate[0], rate[1] + 2)),
        ]
    v += [
        # used only when track.curvature_from_input / track.cant_from_input (the slave)
        _input("track.curvature", "track curvature 1/R, + for a left curve (used when "
               "track.curvature_from_input)", "1/m", -1.0, 1.0, core=("U_CURVATURE", 0)),
        _input("track.cant_angle", "track roll angle about +x, + lifts the left rail "
               "(used when track.cant_from_input)", "rad", -0.5, 0.5, core=("U_CANT", 0)),
    ]
    for comp, desc in (("alignment", "lateral alignment (+y)"), ("level", "vertical level (+z)"),
                       ("gauge", "gauge deviation (+ = wider)"),
                       ("cross_level", "cross level z_left - z_right")):
        v.append(_input(f"track.irregularity.{comp}",
                        f"track irregularity: {desc}, added to the rail displacements",
                        "m", -0.1, 0.1))
        v.append(_input(f"track.irregularity.{comp}_velocity",
                        f"time derivative of track.irregularity.{comp}", "m/s", -100.0, 100.0))
    return v


def _body_outputs() -> List[ScalarVariable]:
    """The wheelset's state and its axle boxes' motion."""
    o = _output
    v = [
        # widened (outputs stay within their declaration; a step that would
        # leave it is discarded): 1e12 m = 200 years at 150 m/s
        o("wheelset.distance", "Real", "travelled distance s along the track", "m",
          -1.0e12, 1.0e12),
        o("wheelset.x", "Real", "longitudinal displacement of the wheelset centre "
          "relative to the frame moving along the track at wheelset.speed", "m", -10.0, 10.0),
        o("wheelset.y", "Real", "lateral displacement of the wheelset centre "
          "relative to the track centreline (+ left)", "m", -1.0, 1.0),
        # the height of the centre above the rail tops: about the wheel radius
        # (wheel.nominal_rolling_radius up to 1.5 m), so up to 2 m
        o("wheelset.z", "Real", "vertical displacement of the wheelset centre (+ up)",
          "m", -1.0, 2.0),
        o("wheelset.roll", "Real", "roll angle about +x relative to the track", "rad",
          -math.pi, math.pi),
        o("wheelset.yaw", "Real", "yaw angle about +z relative to the track", "rad",
          -math.pi, math.pi),
        # widened: 1e13 rad = 200 years at 1500 rad/s (150 m/s on a 0.1 m wheel)
        o("wheelset.pitch", "Real", "rotation angle of the axle about y (spin angle)",
          "rad", -1.0e13, 1.0e13),
        o("wheelset.velocity.x", "Real", "longitudinal velocity relative to the frame "
          "moving at wheelset.speed", "m/s", -1000.0, 1000.0),
        o("wheelset.velocity.y", "Real", "lateral velocity", "m/s", -1000.0, 1000.0),
        o("wheelset.velocity.z", "Real", "vertical velocity", "m/s", -1000.0, 1000.0),
        o("wheelset.roll_rate", "Real", "roll rate", "rad/s", -1.0e4, 1.0e4),
        o("wheelset.yaw_rate", "Real", "yaw rate", "rad/s", -1.0e4, 1.0e4),
        o("wheelset.spin_rate", "Real", "angular velocity of the axle about y",
          "rad/s", -1.0e4, 1.0e4),
    ]
    for side in SIDES:
        for ax in AXES:
            v.append(o(f"axlebox.{side}.position.{ax}", "Real",
                       f"{ax} position of the {side} axle box centre, track frame "
                       f"relative to the track centreline at the wheelset", "m",
                       -BIG_LENGTH, BIG_LENGTH))
        for ax in AXES:
            v.append(o(f"axlebox.{side}.velocity.{ax}", "Real",
                       f"{ax} velocity of the {side} axle box centre, track frame", "m/s",
                       -1000.0, 1000.0))
    return v


def _wheel_outputs(side: str) -> List[ScalarVariable]:
    """One wheel's forces on its rail, its contact count, lift and flange climb."""
    o = _output
    v = []
    for ax in AXES:
        v.append(o(f"wheel.{side}.force_on_rail.{ax}", "Real",
                   f"{ax} component of the resultant force of the {side} wheel on its "
                   f"rail, track frame (sum over the contact points)", "N",
                   -BIG_FORCE, BIG_FORCE))
    v += [
        o(f"wheel.{side}.Y", "Real", f"lateral wheel-rail force Y of the {side} "
          f"wheel on the rail, + towards the field side (outwards)", "N",
          -BIG_FORCE, BIG_FORCE),
        o(f"wheel.{side}.Q", "Real", f"vertical wheel load Q of the {side} wheel "
          f"on the rail, + downwards", "N", -BIG_FORCE, BIG_FORCE),
        # widened: Y/Q is 0 unless Q > 1 N and |Y| <= 1e7 N (its own range), so
        # |Y/Q| <= 1e7; near a wheel lift (Q of a few N) it exceeds 100
        o(f"wheel.{side}.Y_over_Q", "Real", f"derailment quotient Y/Q of the {side} "
          f"wheel (0 when unloaded, i.e. Q <= 1 N)", "1", -BIG_FORCE, BIG_FORCE),
        o(f"wheel.{side}.active_points", "Integer",
          f"number of active contact points of the {side} wheel (0..{POINTS_PER_WHEEL})",
          None,
          0, POINTS_PER_WHEEL),
        o(f"wheel.{side}.lift", "Boolean",
          f"the {side} wheel has lost contact with its rail"),
        # a wheel not over its rail at all reads 1 m (solver/dynamics/rhs.py fill_record)
        o(f"wheel.{side}.lift_height", "Real",
          f"height of the {side} wheel above its rail while it has lost contact "
          f"(the smallest wheel-rail distance; 0 in contact)", "m", 0.0, 1.0),
        # bound: a point's Y/Q is 0 unless Q > 1 N, so |Y/Q| <= BIG_FORCE / 1 N;
        # the Nadal limit is taken >= 1e-3 (solver/dynamics/derailment.py): ratio <= 1e10
        o(f"wheel.{side}.flange_climb_ratio", "Real",
          f"flange-climb indicator of the {side} wheel: the largest Y/Q of a flange "
          f"contact (contact angle >= 45 deg) divided by Nadal's limit (tan d - mu) / "
          f"(1 + mu tan d) at its angle; above 1 the flange climbs (Nadal 1896, the "
          f"basis of EN 14363's Y/Q limit)", "1", 0.0, 1.0e10),
        o(f"wheel.{side}.flange_climb_time", "Real",
          f"how long the flange-climb ratio of the {side} wheel has been above 1, "
          f"without interruption (0 when it is not)", "s", 0.0, 1.0e12),
        o(f"wheel.{side}.flange_climb_distance", "Real",
          f"over what distance travelled the flange-climb ratio of the {side} wheel has "
          f"been above 1 (0 when it is not)", "m", 0.0, 1.0e12),
    ]
    return v


def _contact_point_outputs(side: str, k: int) -> List[ScalarVariable]:
    """Contact slot k (1-based) of a wheel: where it is, its creepages and forces."""
    o = _output
    pre = f"contact.{side}.point[{k}]"
    what = f"contact slot {k} of the {side} wheel"
    return [
        o(f"{pre}.active", "Boolean", f"{what}: in contact"),
        o(f"{pre}.wheel_lateral", "Real", f"{what}: lateral position on the "
          f"wheel profile, s from the taping line, + towards the field side", "m",
          -1.0, 1.0),
        o(f"{pre}.rail_lateral", "Real", f"{what}: lateral position on the rail "
          f"profile, u from the rail-head centreline, + towards the field side", "m",
          -1.0, 1.0),
        o(f"{pre}.position.y", "Real", f"{what}: lateral position of the point "
          f"in the track frame", "m", -10.0, 10.0),
        o(f"{pre}.position.z", "Real", f"{what}: vertical position of the point "
          f"in the track frame", "m", -10.0, 10.0),
        o(f"{pre}.contact_angle", "Real", f"{what}: contact angle, + when the "
          f"rail pushes the wheel towards the track centre", "rad",
          -math.pi / 2, math.pi / 2),
        o(f"{pre}.rolling_radius", "Real", f"{what}: wheel rolling radius at "
          f"the point", "m", 0.0, 10.0),
        # widened from +-10: a wheel spinning under a driving torque has
        # xi = (V - omega r) / V far below -1 (tests/test_security_fmi.py)
        o(f"{pre}.longitudinal_creepage", "Real", f"{what}: longitudinal "
          f"creepage xi", "1", -1.0e4, 1.0e4),
        o(f"{pre}.lateral_creepage", "Real", f"{what}: lateral creepage eta",
          "1", -10.0, 10.0),
        o(f"{pre}.spin_creepage", "Real", f"{what}: spin creepage phi", "1/m",
          -1.0e4, 1.0e4),
        o(f"{pre}.normal_force", "Real", f"{what}: normal force (>= 0)", "N",
          0.0, BIG_FORCE),
        o(f"{pre}.longitudinal_force", "Real", f"{what}: longitudinal creep "
          f"force of the rail on the wheel, contact frame", "N",
          -BIG_FORCE, BIG_FORCE),
        o(f"{pre}.lateral_force", "Real", f"{what}: lateral creep force of the "
          f"rail on the wheel, contact frame", "N", -BIG_FORCE, BIG_FORCE),
        o(f"{pre}.spin_moment", "Real", f"{what}: spin creep moment of the rail "
          f"on the wheel about the contact normal", "N.m", -BIG_MOMENT, BIG_MOMENT),
    ]


def _safety_outputs() -> List[ScalarVariable]:
    """The running-safety criteria of the axle and the wear numbers."""
    o = _output
    v = [
        # |Y/Q| <= 1e7 per wheel (wheel.*.Y_over_Q), Weinstock's limit >= 1e-3
        o("wheelset.axle_sum_Y_over_Q", "Real",
          "Weinstock's axle sum of the derailment quotients |Y/Q| of both wheels "
          "(Weinstock 1984)", "1", 0.0, 2.0 * BIG_FORCE),
        o("wheelset.weinstock_ratio", "Real",
          "the axle sum of |Y/Q| divided by Weinstock's limit: Nadal's limit at the "
          "flange contact angle plus the friction coefficient (0 without flange "
          "contact); above 1 the flange may climb", "1", 0.0, 1.0e10),
        o("wheelset.airborne_time", "Real",
          "how long both wheels have been off their rails (0 in contact); beyond "
          "2 sqrt(2 h / g), h the flange height, the step is a derailment", "s",
          0.0, 1.0e12),
        o("solver.forced_steps", "Integer",
          "internal steps accepted since the start with their error test failed (an adaptive "
          "integrator at its shortest step, through a contact impact); 0 with the fixed-step "
          "integrators", None, 0, 2 ** 31 - 1),
        o("status.flange_climb_warning", "Boolean",
          "a flange's Y/Q is above Nadal's limit at its contact angle (a warning: the "
          "wheel may climb; wheel.*.flange_climb_time and _distance say for how long)"),
    ]
    for side in SIDES:
        v.append(o(f"wheel.{side}.wear_number", "Real",
                   f"wear number T gamma of the {side} wheel: sum over its contact points of "
                   f"|longitudinal force x creepage| + |lateral force x creepage|", "N",
                   0.0, BIG_FORCE))
    return v


def _rail_outputs() -> List[ScalarVariable]:
    """The lumped rail bodies' deflections from their supports (0 with
    track.model Prescribed)."""
    o = _output
    v = []
    for side in SIDES:
        for name, unit, what in (("lateral", "m", "lateral deflection (+ left, track frame)"),
                                 ("vertical", "m", "vertical deflection (+ up)"),
                                 ("roll", "rad", "roll about +x")):
            v.append(o(f"rail.{side}.deflection.{name}", "Real",
                       f"the {side} rail body under its wheel (track.model Lumped): {what} "
                       f"from its supports, the rail inputs' motion not included", unit,
                       -1.0 if unit == "m" else -math.pi, 1.0 if unit == "m" else math.pi))
    return v


def _status_outputs() -> List[ScalarVariable]:
    """The status flags: set from the reason of a discarded step (FmuInstance,
    not in the core's record); they come last."""
    o = _output
    return [ScalarVariable(var.name, var.type, var.causality, var.variability, var.initial,
                         var.description, var.start, core=None) for var in (
        o("status.derailment", "Boolean",
          "derailment (the step was discarded, the FMU terminated): a flange contact "
          "reached the flange tip, a wheel is off its rail head (over it on the field "
          "side or dropped inside the gauge), or both wheels were off their rails longer "
          "than 2 sqrt(2 h / g), h the flange height"),
        o("status.wheel_lift", "Boolean",
          "at least one wheel has lost contact with its rail (wheel.*.lift_height "
          "says how high)"),
        o("status.excessive_penetration", "Boolean",
          "the last step was discarded: penetration above contact.max_penetration "
          "(impact or instability)"),
    )]


def _outputs() -> List[ScalarVariable]:
    return (_body_outputs() + [v for side in SIDES for v in _wheel_outputs(side)]
            + [v for side in SIDES for k in range(1, POINTS_PER_WHEEL + 1)
               for v in _contact_point_outputs(side, k)]
            + _safety_outputs() + _rail_outputs() + _status_outputs())


def in_value_reference_order(table, numbered) -> Tuple[ScalarVariable, ...]:
    """The variables of `table` in value-reference order: first those of
    `numbered` (the names in the order of their value references 0, 1, 2, ...;
    registries.VALUE_REFERENCES), then any the table has beyond them, in its
    order (until `python -m fmu_wheelset.fmu.registry_declarations` numbers
    them; tests/test_value_references.py fails meanwhile). A value reference is
    never reused: a numbered name the table lacks is an error."""
    by_name = {v.name: v for v in table}
    gone = [n for n in numbered if n not in by_name]
    if gone:
        raise ValueError(f"variables {gone[:5]} have value references but are no longer in "
                         "the table: a value reference is never removed or reused")
    known = set(numbered)
    return tuple(by_name[n] for n in numbered) + tuple(v for v in table if v.name not in known)


# the table in the order the variables are written above (parameters, inputs,
# outputs), and in value-reference order: a variable's value reference is fixed
# for good (FMI hosts keep them in their system files), a new variable gets the
# next free one wherever it stands in the table
def make_table(declared=registries) -> Tuple[ScalarVariable, ...]:
    """The variables in the order they are written above, from the registries'
    declarations `declared` (registries.py, or what registry_declarations is
    about to write there)."""
    return tuple(_parameters(declared) + _inputs() + _outputs())


TABLE: Tuple[ScalarVariable, ...] = make_table()
VARIABLES: Tuple[ScalarVariable, ...] = in_value_reference_order(
    TABLE, getattr(registries, "VALUE_REFERENCES", ()))
VALUE_REFERENCE: Dict[str, int] = {v.name: vr for vr, v in enumerate(VARIABLES)}
BY_NAME: Dict[str, ScalarVariable] = {v.name: v for v in TABLE}
PARAMETERS = tuple(v for v in TABLE if v.causality == "parameter")
INPUTS = tuple(v for v in TABLE if v.causality == "input")
OUTPUTS = tuple(v for v in TABLE if v.causality == "output")
INPUT_NAMES = tuple(v.name for v in INPUTS)
OUTPUT_NAMES = tuple(v.name for v in OUTPUTS)
STATUS_NAMES = tuple(v.name for v in OUTPUTS if v.core is None)
RECORD_OUTPUTS = tuple(v for v in OUTPUTS if v.core is not None)
assert OUTPUT_NAMES[len(RECORD_OUTPUTS):] == STATUS_NAMES, "status flags come last"
# WheelsetParameters field -> its FMU parameter(s), in component order
CORE_FIELDS: Dict[str, Tuple[ScalarVariable, ...]] = {}
for _v in PARAMETERS:
    if _v.core is not None and _v.core != CREEP_OPTION:
        CORE_FIELDS[_v.core] = CORE_FIELDS.get(_v.core, ()) + (_v,)
# creep model -> its option parameters, in the registry's order
CREEP_OPTION_PARAMETERS: Dict[str, Tuple[ScalarVariable, ...]] = {}
for _v in PARAMETERS:
    if _v.core == CREEP_OPTION:
        CREEP_OPTION_PARAMETERS[_v.component[0]] = (
            CREEP_OPTION_PARAMETERS.get(_v.component[0], ()) + (_v,))
del _v


# ---------------------------------------------------------------------------
# conversions FMI value <-> core value (need the core's wheelset module)
# ---------------------------------------------------------------------------
def enumeration_names(var: ScalarVariable, wheelset) -> Tuple[str, ...]:
    """The core's model names of an Enumeration parameter, in id (FMI value) order."""
    return tuple(getattr(wheelset, ENUMERATION_BY_NAME[var.declared_type].core_names))


def fmi_value(var: ScalarVariable, core_value, wheelset):
    """The FMI value of parameter `var` for the core value `core_value` of its
    field (the whole field: a vector parameter takes its component)."""
    if var.component is not None:
        core_value = core_value[var.component]
    if var.type == "Real":
        return float(core_value)
    if var.type == "Integer":
        return int(core_value)
    if var.type == "Enumeration":
        return enumeration_names(var, wheelset).index(core_value)
    if var.type == "Boolean":
        return bool(core_value)
    if isinstance(core_value, os.PathLike):
        return os.fspath(core_value)
    return str(core_value)


def start_value(var: ScalarVariable, wheelset):
    """The start value of `var`: its own, or the core's default of its field."""
    if var.start is not CORE_DEFAULT:
        return var.start
    return fmi_value(var, getattr(wheelset.WheelsetParameters(), var.core), wheelset)


def expressible(var: ScalarVariable, core_value) -> bool:
    """Can parameter `var` carry this core value? (A String parameter carries a
    name or a path, not an in-memory Profile or Track object.)"""
    if var.type == "String":
        return isinstance(core_value, (str, os.PathLike))
    return True


def start_values_for(params, wheelset, available=None) -> Tuple[Dict[str, Any], List[str]]:
    """FMI start values that make the FMU run with WheelsetParameters `params`,
    and the list of what the FMU cannot express (a field with no FMU parameter,
    or one the FMU `available` names (a set; None: this table) lack, that
    differs from the core default; an in-memory profile or track object).
    Every parameter the FMU has is given, default or not."""
    import dataclasses
    defaults = wheelset.WheelsetParameters()
    values, missing = {}, []
    for f in dataclasses.fields(params):
        if f.name == CREEP_OPTION:
            continue                    # _creep_option_start_values
        value = getattr(params, f.name)
        differs = value != getattr(defaults, f.name)
        variables = CORE_FIELDS.get(f.name, ())
        if not variables:
            if differs:
                missing.append(f"no FMI parameter for {f.name}")
            continue
        if not all(expressible(v, value) for v in variables):
            missing.append(f"{f.name} is an in-memory {type(value).__name__} object")
            continue
        if available is not None and not all(v.name in available for v in variables):
            if differs:
                missing.append(f"the FMU has no parameter "
                               + ", ".join(v.name for v in variables) + f" for {f.name}")
            continue
        for v in variables:
            values[v.name] = fmi_value(v, value, wheelset)
    _creep_option_start_values(params, values, missing, available)
    return values, missing


def _creep_option_start_values(params, values, missing, available):
    """The creep option parameters of start_values_for: the model in use takes
    params.creep_options (a choice by its name or number), the rest their starts."""
    given = dict(params.creep_options or {})
    own = CREEP_OPTION_PARAMETERS.get(params.creep_model, ())
    unknown = set(given) - {v.component[1] for v in own}
    if unknown:
        missing.append(f"no FMI parameter for the {params.creep_model} option(s) "
                       f"{sorted(unknown)}")
    for model, variables in CREEP_OPTION_PARAMETERS.items():
        for v in variables:
            if available is not None and v.name not in available:
                if model == params.creep_model and v.component[1] in given:
                    missing.append(f"the FMU has no parameter {v.name}")
                continue
            value = given.get(v.component[1], v.start) if model == params.creep_model else v.start
            if isinstance(value, str):
                choices = _creep_option_choices(model, v.component[1])
                if value not in choices:
                    missing.append(f"{v.name}: {value!r} is not one of {list(choices)}")
                    continue
                value = choices.index(value)
            values[v.name] = int(value) if v.type == "Integer" else float(value)


def _creep_option_choices(model, option) -> tuple:
    for m, name, *_rest in registries.CREEP_OPTIONS:
        if (m, name) == (model, option):
            return _rest[5]
    return ()


def parameters_from_fmi(values: Dict[str, Any], wheelset, *, resolve=None, check=True) -> Dict[str, Any]:
    """WheelsetParameters keyword arguments from the FMI parameter values
    `values` (name -> value; a parameter not given takes the core default).
    `resolve(var, text)` turns a String parameter's text into the core's value
    (the slave looks files up in the FMU resources); `check`: refuse values that
    are not finite or outside [min, max] (ValueError naming the parameter)."""
    kwargs: Dict[str, Any] = {}
    for field, variables in CORE_FIELDS.items():
        given = [v for v in variables if v.name in values]
        if not given:
            continue                          # the core's default
        parts = []
        for v in variables:
            raw = values[v.name] if v.name in values else start_value(v, wheelset)
            parts.append(core_value(v, raw, wheelset, resolve=resolve, check=check))
        kwargs[field] = tuple(parts) if variables[0].component is not None else parts[0]
    # the options of the creep model in use that differ from their defaults (a
    # choice by its name, as WheelsetParameters.creep_options takes it)
    model = kwargs.get("creep_model", wheelset.WheelsetParameters().creep_model)
    options = {}
    for v in CREEP_OPTION_PARAMETERS.get(model, ()):
        if v.name in values:
            value = core_value(v, values[v.name], wheelset, check=check)
            if value != v.start:
                choices = _creep_option_choices(model, v.component[1])
                options[v.component[1]] = choices[value] if choices else value
    if options:
        kwargs["creep_options"] = options
    return kwargs


def core_value(var: ScalarVariable, raw, wheelset, *, resolve=None, check=True):
    """The core value of one FMI parameter value (see parameters_from_fmi)."""
    if var.type == "Enumeration":
        names = enumeration_names(var, wheelset)
        if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw < len(names):
            raise ValueError(f"{var.name} = {raw!r} is not one of "
                             + ", ".join(f"{i} ({n})" for i, n in enumerate(names)))
        return names[raw]
    if var.type == "Real":
        if check:
            if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
                raise ValueError(f"parameter {var.name} = {raw!r} is not a finite number")
            if (var.min is not None and raw < var.min) or (var.max is not None and raw > var.max):
                raise ValueError(f"parameter {var.name} = {raw!r} {var.unit} is out of range "
                                 f"[{var.min}, {var.max}]")
        return float(raw)
    if var.type == "Integer":
        if isinstance(raw, bool) or not isinstance(raw, int) or (
                check and not var.min <= raw <= var.max):
            raise ValueError(f"parameter {var.name} = {raw!r} is not an integer in "
                             f"[{var.min}, {var.max}]")
        return raw
    if var.type == "Boolean":
        return raw in (True, 1, "true", "1")
    text = str(raw).strip()
    if not text:
        raise ValueError(f"parameter {var.name} is empty")
    return resolve(var, text) if resolve is not None else text


def direct_inputs(output: str) -> Tuple[str, ...]:
    """The inputs on which an output depends directly, at the same instant
    (ModelStructure/Outputs dependencies: direct feedthrough).

    The wheelset's state outputs (position, orientation, velocities, axle-box
    kinematics, distance) depend on the inputs only through the integration of
    a step: none. The contact outputs of a wheel are algebraic functions of the
    state AND of its rail's motion (position and velocity of the rail head, with
    the track irregularities, which move both rails) and of the track curvature
    (it enters the creepages, V kappa) and cant (taken conservatively): a wheel's
    forces, Y, Q, Y/Q, contact count, lift and every quantity of its contact
    points. The axle-box forces, moments and the axle torque act on the
    accelerations only: no output depends on them directly. The status flags
    report the last doStep: none (status.wheel_lift: both wheels' contact)."""
    track = ("track.curvature", "track.cant_angle") + tuple(
        n for n in INPUT_NAMES if n.startswith("track.irregularity."))
    for side in SIDES:
        if output.startswith((f"wheel.{side}.", f"contact.{side}.")):
            return tuple(n for n in INPUT_NAMES if n.startswith(f"rail.{side}.")) + track
    if output == "status.wheel_lift":
        return tuple(n for n in INPUT_NAMES if n.startswith("rail.")) + track
    return ()
