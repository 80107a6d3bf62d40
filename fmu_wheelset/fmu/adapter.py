"""Conversion between the FMU's values and the wheelset core (no physics).

The slave (fmu_wheelset/fmu/slave.py) turns the FMI variables into the core's
``WheelsetParameters``, its input vector and its output record with the
functions here, as the table of variables (fmu_wheelset/fmu/variables.py)
says; the field names are those of ``solver.model``. Also here: the layout
of the slave's value array derived from the table (the declared ranges of the
inputs and outputs in their slots, the status slots, the direct feedthrough,
the finite-difference steps of the directional derivative) and what a restored
FMU state is checked against (``restore_bounds``, fmu_wheelset/fmu/fmu_state.py).
The native bridge (fmu_wheelset/fmu/native_bridge.py) hands the same arrays to
the fast step.

Bundled in the FMU beside the slave (``resources/wheelset_fmu_adapter.py``, or
``adapter.py`` in the native front end's package); like the slave it imports
nothing but the standard library, NumPy and the FMU's own modules at module
level, and reaches the core only through the modules the slave passes in.
"""
from __future__ import annotations

import math

import numpy as np

if __package__:
    from . import fmu_state
    from . import variables as fmu_variables
else:
    import wheelset_fmu_state as fmu_state
    import wheelset_fmu_variables as fmu_variables

VARIABLES = fmu_variables.VARIABLES
INPUT_NAMES = fmu_variables.INPUT_NAMES
OUTPUT_NAMES = fmu_variables.OUTPUT_NAMES
STATUS_NAMES = fmu_variables.STATUS_NAMES
INF = float("inf")
NAN = float("nan")


# ---------------------------------------------------------------------------
# conversion FMI variables <-> core types (field names of solver.model.WheelsetParameters)
# ---------------------------------------------------------------------------
def make_parameters(instance, core):
    """WheelsetParameters from the parameters set by the host (the others
    take the core's defaults), checked against the table's ranges. `instance`:
    the FmuInstance (fmu_wheelset/fmu/instance.py); `core`: the core's
    public interface (the package solver.model, core_loader.import_core)."""

    def resolve(var, text):
        if var.name == "track.scenario":
            return make_track(instance, core, text)
        # a built-in name, a file bundled in the FMU resources or an absolute
        # path (the core's lookup rule, relative names contained in the
        # resources: never the working directory)
        source = core.resolve_source(text, core.is_builtin_profile,
                                     (instance.resources,), working_directory=False)
        if source is None:
            raise ValueError(f"{var.name} {text!r} is neither a built-in profile nor a file "
                             "in the FMU resources (relative names are looked up there "
                             "only; give an absolute path for a file elsewhere)")
        return source

    kwargs = fmu_variables.parameters_from_fmi(instance.given_values(), core, resolve=resolve)
    if "track" not in kwargs:       # the default track, in track.direction
        kwargs["track"] = make_track(instance, core, None)
    return core.WheelsetParameters(**kwargs)


def make_track(instance, core, spec):
    """The track of track.scenario (`spec`; None: the core's default) run in
    track.direction."""
    if spec is None:
        spec = str(instance.default("track.scenario")).strip()
    direction = str(instance.value_in_force("track.direction")).strip()
    source = core.resolve_source(spec, lambda name: name in core.TRACKS.names(),
                                 (instance.resources,), working_directory=False)
    if source == spec and spec in core.TRACKS.names():
        return core.builtin_track(spec, direction=direction)
    if source is None:
        raise ValueError(f"track.scenario {spec!r} is neither a built-in scenario "
                         f"({', '.join(sorted(core.TRACKS.names()))}) nor a file "
                         f"(relative names are looked up in the FMU resources only; "
                         f"give an absolute path for a file elsewhere)")
    return core.load_track(source)


def input_map(v, core):
    """(matrix, offset, cross-level slots): the core's input vector is
    matrix @ u + offset for the FMU inputs u (INPUT_NAMES order), plus the
    roll of both rails by the cross level (`core_inputs`). The irregularities
    add to the rail motion: alignment and level on both rails, gauge and cross
    level by halves with opposite signs (left +, right -)."""
    slot = {name: j for j, name in enumerate(INPUT_NAMES)}
    layout = core.layout
    matrix = np.zeros((layout.N_INPUT, len(INPUT_NAMES)))
    offset = np.zeros(layout.N_INPUT)
    for j, var in enumerate(fmu_variables.INPUTS):      # the table's core entries
        if var.core is not None:
            block, index = var.core
            matrix[getattr(layout, block) + index, j] = 1.0
    for flag, name, row in (("track.curvature_from_input", "track.curvature", layout.U_CURVATURE),
                            ("track.cant_from_input", "track.cant_angle", layout.U_CANT)):
        if not v[flag]:
            matrix[row, slot[name]] = 0.0
            offset[row] = NAN                 # NaN: the core takes it from the track
    # the irregularities move the rails by the core's one rule
    # (solver.track.excitation.rail_displacements, as a matrix [side, axis, component])
    excitation = core.excitation
    coefficients = excitation.rail_displacement_coefficients()
    for i in range(2):
        for axis in range(2):                 # lateral, vertical
            for base, suffix in ((layout.U_RAIL_MOTION, ""),
                                 (layout.U_RAIL_VELOCITY, "_velocity")):
                r = base + 3 * i + axis
                for j, component in enumerate(excitation.COMPONENTS):
                    if coefficients[i, axis, j] != 0.0:
                        matrix[r, slot[f"track.irregularity.{component}{suffix}"]] = \
                            coefficients[i, axis, j]
    return (matrix, offset, slot["track.irregularity.cross_level"],
            slot["track.irregularity.cross_level_velocity"], core.DEFAULT_RAIL_DISTANCE)


def core_inputs(u, input_map, core):
    """The core's input vector for the FMU inputs u (finite): matrix @ u +
    offset, plus the roll of both rails by the cross level (the core's rule,
    solver.track.excitation.cross_level_roll), by the numba function the
    fast step uses too (solver/model/fast_step.py). `core`: the core's interface."""
    matrix, offset, c_slot, dc_slot, rail_distance = input_map
    out = np.empty(matrix.shape[0])
    if not core.fast_step.fmu_core_inputs(u, matrix, offset, c_slot, dc_slot,
                                          rail_distance, out):
        raise core.TrackError(f"cross-level {float(u[c_slot])} m is not below the rail "
                                 f"distance {rail_distance} m")
    return out


def record_index(core):
    """For each output but the status flags (OUTPUT_NAMES order), its index in
    the core's output record: the output names are the record's names
    (solver.model.RECORD_INDEX)."""
    return np.array([core.RECORD_INDEX[var.core] for var in fmu_variables.RECORD_OUTPUTS],
                    dtype=np.int64)


# ---------------------------------------------------------------------------
# the value buffer (one float64 per variable, indexed by value reference), from
# the table: where the parameters, inputs and outputs are in it
# ---------------------------------------------------------------------------
FROM_INPUT_FLAGS = ("track.curvature_from_input", "track.cant_from_input")
VALUE_REFERENCE = fmu_variables.VALUE_REFERENCE
PARAMETER_VRS = np.array([VALUE_REFERENCE[v.name] for v in fmu_variables.PARAMETERS],
                         dtype=np.int64)
INPUT_VRS = np.array([VALUE_REFERENCE[n] for n in INPUT_NAMES], dtype=np.int64)
OUTPUT_VRS = np.array([VALUE_REFERENCE[n] for n in OUTPUT_NAMES], dtype=np.int64)
IO_VRS = np.concatenate([INPUT_VRS, OUTPUT_VRS])      # the FMU state's "io", in this order
N_INPUTS, N_OUTPUTS = len(INPUT_VRS), len(OUTPUT_VRS)
# per value reference: its slot among the inputs or among the outputs (or
# parameters), and the kind of an input or output (None for a parameter)
SLOT = [0] * len(VARIABLES)
for _group in (fmu_variables.PARAMETERS, fmu_variables.INPUTS, fmu_variables.OUTPUTS):
    for _slot, _v in enumerate(_group):
        SLOT[VALUE_REFERENCE[_v.name]] = _slot
SLOT = tuple(SLOT)
IO_KIND = tuple(None if v.causality == "parameter" else v.type for v in VARIABLES)
del _group, _slot, _v
# the declared range of every variable, by value reference (-inf/inf: none)
LO = np.array([-INF if v.min is None or v.type not in ("Real", "Integer") else float(v.min)
               for v in VARIABLES])
HI = np.array([INF if v.max is None or v.type not in ("Real", "Integer") else float(v.max)
               for v in VARIABLES])
IN_LO, IN_HI = LO[INPUT_VRS], HI[INPUT_VRS]
OUT_LO, OUT_HI = LO[OUTPUT_VRS], HI[OUTPUT_VRS]


def numeric_start(var) -> float:
    """The start value of a variable in the value buffer (strings and core
    defaults: NaN until fill_parameter_buffer)."""
    if var.type == "String" or var.start is fmu_variables.CORE_DEFAULT or var.start is None:
        return NAN
    return float(var.start)


# the status flags come last among the outputs; all outputs before them are
# copied from the core's record
N_RECORD_OUTPUTS = len(fmu_variables.RECORD_OUTPUTS)
STATUS_SLOTS = np.array([OUTPUT_NAMES.index(n) for n in STATUS_NAMES], dtype=np.int64)


# direct feedthrough (variables.direct_inputs, the ModelStructure): [output slot, input slot]
FEEDTHROUGH = np.array([[name in fmu_variables.direct_inputs(out) for name in INPUT_NAMES]
                        for out in OUTPUT_NAMES], dtype=bool)
# finite-difference step of each input for directional_derivative, by unit: 1 um of
# rail motion is ~1 % of the Hertz penetration at a static wheel load (~0.1 mm:
# error of the central difference ~(h/delta)^2 / 24 ~ 4e-6 relative), 1e-4 m/s a
# creepage change of ~4e-6 at 25 m/s (linear creep range); curvature 1e-7 1/m
FD_STEP = np.array([{"m": 1e-6, "rad": 1e-6, "m/s": 1e-4, "rad/s": 1e-4, "1/m": 1e-7}.get(
    v.unit, 1.0) for v in fmu_variables.INPUTS])


# what a serialized state may carry (fmu_wheelset/fmu/fmu_state.py)
PARAMETER_KINDS = {v.name: v.type for v in fmu_variables.PARAMETERS}
PARAMETER_SCHEMA = {v.name: (v.type, *(
    (0, len(fmu_variables.ENUMERATION_BY_NAME[v.declared_type].items) - 1)
    if v.type == "Enumeration" else (v.min, v.max))) for v in fmu_variables.PARAMETERS}
# the declared range, kind and name of every input and output, in the order of IO_VRS
IO_RANGES = tuple((v.min, v.max, "Integer" if v.type == "Enumeration" else v.type, v.name)
                  for v in fmu_variables.INPUTS + fmu_variables.OUTPUTS)
DISTANCE_RANGE = (fmu_variables.BY_NAME["wheelset.distance"].min,
                  fmu_variables.BY_NAME["wheelset.distance"].max)
# the core's state vector (solver.dynamics S_*, in this order) is the FMU's outputs
STATE_OUTPUTS = ("wheelset.x", "wheelset.y", "wheelset.z", "wheelset.roll", "wheelset.yaw",
                 "wheelset.pitch", "wheelset.velocity.x", "wheelset.velocity.y",
                 "wheelset.velocity.z", "wheelset.roll_rate", "wheelset.yaw_rate",
                 "wheelset.spin_rate")
# contact columns (solver.dynamics C_*) that are FMU outputs of an active point
CONTACT_OUTPUTS = {"C_S_WHEEL": "wheel_lateral", "C_U_RAIL": "rail_lateral", "C_Y": "position.y",
                   "C_Z": "position.z", "C_ANGLE": "contact_angle", "C_RADIUS": "rolling_radius",
                   "C_NORMAL": "normal_force", "C_CREEP_LONG": "longitudinal_force",
                   "C_CREEP_LAT": "lateral_force", "C_SPIN_MOMENT": "spin_moment",
                   "C_XI": "longitudinal_creepage", "C_ETA": "lateral_creepage",
                   "C_SPIN": "spin_creepage"}


def restore_bounds(core, input_map):
    """(state bounds, array bounds) of fmu_state.check_against_instance for the
    core (its public interface) and the instance's input map:

    * state: each entry the declared range of its output (STATE_OUTPUTS);
    * contact: an active point's columns the declared ranges of its outputs,
      C_ACTIVE and the Hertz flag 0..1, every other column (no output) within
      +-BIG_FORCE, the largest magnitude the table declares for a contact
      quantity (1e7 in SI: N, m, J);
    * summary: the lift flags 0..1, penetration and gaps within +-BIG_FORCE;
    * inputs (the core's input vector): what inputs within their declared
      ranges can reach through the input map (|matrix| @ max|input| + |offset|,
      plus the cross level's rail roll and roll rate); the curvature and cant
      rows NaN when taken from the track (checked by the finiteness test);
    * safety (the running-safety memory, solver/model/fast_step.py SF_*): the
      flange-climb ratios within their outputs' range, the times since which a
      climb or a flight lasts NEVER (none) up to MAX_TIME, the distances within
      +-MAX_TIME (the travelled distance's own bound would do: 1e12 m)."""
    dynamics = core.layout
    big = fmu_variables.BIG_FORCE
    by = fmu_variables.BY_NAME
    state_bounds = {j: (by[name].min, by[name].max, name) for j, name in enumerate(STATE_OUTPUTS)}
    contact = [(-big, big, f"contact column {j}") for j in range(dynamics.N_CONTACT)]
    contact[dynamics.C_ACTIVE] = (0.0, 1.0, "active")
    contact[dynamics.C_HERTZ_FLAG] = (-big, big, "Hertz flag")
    for column, suffix in CONTACT_OUTPUTS.items():
        var = by[f"contact.left.point[1].{suffix}"]
        contact[getattr(dynamics, column)] = (var.min, var.max, suffix, dynamics.C_ACTIVE)
    summary = [(-big, big, f"summary {j}") for j in range(dynamics.N_SUMMARY)]
    summary[dynamics.O_LIFT_LEFT] = (0.0, 1.0, "left wheel lifted")
    summary[dynamics.O_LIFT_RIGHT] = (0.0, 1.0, "right wheel lifted")
    matrix, offset, c_slot, dc_slot, rail_distance = input_map
    largest = np.maximum(np.abs(IN_LO), np.abs(IN_HI))
    reach = np.abs(matrix) @ largest + np.abs(np.nan_to_num(offset))
    c_max, dc_max = float(largest[c_slot]), float(largest[dc_slot])
    for side in range(2):
        reach[dynamics.U_RAIL_MOTION + 3 * side + 2] += math.asin(min(c_max / rail_distance, 1.0))
        reach[dynamics.U_RAIL_VELOCITY + 3 * side + 2] += dc_max / math.sqrt(
            max(rail_distance ** 2 - c_max ** 2, 1e-300))
    reach *= 1.0 + 1e-12                  # the rounding of the sums that reach it
    names = dynamics.INPUT_VECTOR_NAMES
    inputs = [(-float(r), float(r), names[j]) for j, r in enumerate(reach)]
    fast = core.fast_step
    never = float(fast.NEVER)
    ratio = by["wheel.left.flange_climb_ratio"]
    safety = [None] * dynamics.N_SAFETY
    for side, name in enumerate(("left", "right")):
        safety[dynamics.SF_RATIO + side] = (ratio.min, ratio.max, f"{name} flange-climb ratio")
        safety[dynamics.SF_CLIMB_SINCE + side] = (never, fmu_state.MAX_TIME, f"{name} climb since")
        safety[dynamics.SF_CLIMB_FROM + side] = (-fmu_state.MAX_TIME, fmu_state.MAX_TIME,
                                             f"{name} climb from")
    safety[dynamics.SF_AIRBORNE_SINCE] = (never, fmu_state.MAX_TIME, "airborne since")
    return state_bounds, {"contact": contact, "summary": summary, "inputs": inputs,
                          "safety": safety}
