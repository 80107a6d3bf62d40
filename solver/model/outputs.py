"""The model's inputs and outputs: the names of the output record (the project's
one output vocabulary), the Python views of a step's results."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..dynamics.outputs import record_index_of_contact
from ..errors import WheelsetError
from ..layout import (
    C_ACTIVE, C_ANGLE, C_CREEP_LAT, C_CREEP_LONG, C_ETA, C_NORMAL, C_RADIUS, C_SPIN,
    C_SPIN_MOMENT, C_S_WHEEL, C_U_RAIL, C_XI, C_Y, C_Z, D_BOX_POS, D_BOX_VEL, D_PYQ, D_Q, D_WEAR,
    D_WHEEL_RAIL, D_Y, D_YQ, INPUT_VECTOR_NAMES, MAX_POINTS, N_INPUT, REC_AIRBORNE, REC_AXLE_SUM,
    REC_CLIMB, REC_CLIMB_DISTANCE, REC_CLIMB_TIME, REC_CLIMB_WARNING, REC_COUNT, REC_DERIVED, REC_DISTANCE,
    REC_FORCED_STEPS, REC_LIFT, REC_LIFT_HEIGHT, REC_STATE, REC_TIME, REC_WEAR, REC_WEINSTOCK, S_RAIL, S_ROLL, S_ROLL_RATE,
    S_SPIN_ANGLE, S_SPIN_RATE, S_VX, S_VY, S_VZ, S_X, S_Y, S_YAW, S_YAW_RATE, S_Z, U_CANT,
    U_CURVATURE,
)
from ..track.excitation import RailMotion


def bad_input_error(u: np.ndarray):
    """Raise WheelsetError naming the non-finite entries of an input vector
    (curvature and cant may be NaN: taken from the track)."""
    bad = [f"{INPUT_VECTOR_NAMES[j]} = {float(u[j])!r}" for j in range(N_INPUT)
           if not (math.isfinite(u[j]) or (j in (U_CURVATURE, U_CANT) and math.isnan(u[j])))]
    if bad:
        raise WheelsetError("non-finite input: " + ", ".join(bad))


# Names of the record's entries: the one output vocabulary of the project (core
# histories, the FMU's outputs (fmu_wheelset/fmu/variables.py), sweeps, the
# validation report). Dots for the hierarchy, [k] (1-based) for the contact slots.
RECORD_SIDES = ("left", "right")
RECORD_POINT_COLUMNS = (   # name in the record vocabulary -> contact column C_*
    ("active", C_ACTIVE), ("wheel_lateral", C_S_WHEEL), ("rail_lateral", C_U_RAIL),
    ("position.y", C_Y), ("position.z", C_Z), ("contact_angle", C_ANGLE),
    ("rolling_radius", C_RADIUS), ("longitudinal_creepage", C_XI), ("lateral_creepage", C_ETA),
    ("spin_creepage", C_SPIN), ("normal_force", C_NORMAL), ("longitudinal_force", C_CREEP_LONG),
    ("lateral_force", C_CREEP_LAT), ("spin_moment", C_SPIN_MOMENT))


def _record_names() -> dict:
    names = {"time": REC_TIME, "wheelset.distance": REC_DISTANCE}
    for name, column in (("x", S_X), ("y", S_Y), ("z", S_Z), ("roll", S_ROLL), ("yaw", S_YAW),
                         ("pitch", S_SPIN_ANGLE), ("velocity.x", S_VX), ("velocity.y", S_VY),
                         ("velocity.z", S_VZ), ("roll_rate", S_ROLL_RATE),
                         ("yaw_rate", S_YAW_RATE), ("spin_rate", S_SPIN_RATE)):
        names[f"wheelset.{name}"] = REC_STATE + column
    for side, side_name in enumerate(RECORD_SIDES):
        for a, ax in enumerate("xyz"):
            names[f"axlebox.{side_name}.position.{ax}"] = REC_DERIVED + D_BOX_POS + 3 * side + a
            names[f"axlebox.{side_name}.velocity.{ax}"] = REC_DERIVED + D_BOX_VEL + 3 * side + a
            names[f"wheel.{side_name}.force_on_rail.{ax}"] = REC_DERIVED + D_WHEEL_RAIL + 3 * side + a
        names[f"wheel.{side_name}.Y"] = REC_DERIVED + D_Y + side
        names[f"wheel.{side_name}.Q"] = REC_DERIVED + D_Q + side
        names[f"wheel.{side_name}.Y_over_Q"] = REC_DERIVED + D_YQ + side
        names[f"wheel.{side_name}.active_points"] = REC_COUNT + side
        names[f"wheel.{side_name}.lift"] = REC_LIFT + side
        names[f"wheel.{side_name}.wear_number"] = REC_WEAR + side
        names[f"wheel.{side_name}.lift_height"] = REC_LIFT_HEIGHT + side
        names[f"wheel.{side_name}.flange_climb_ratio"] = REC_CLIMB + side
        names[f"wheel.{side_name}.flange_climb_time"] = REC_CLIMB_TIME + side
        names[f"wheel.{side_name}.flange_climb_distance"] = REC_CLIMB_DISTANCE + side
        for point in range(MAX_POINTS):
            prefix = f"contact.{side_name}.point[{point + 1}]."
            for name, column in RECORD_POINT_COLUMNS:
                names[prefix + name] = record_index_of_contact(side, point, column)
            j = side * MAX_POINTS + point
            names[prefix + "Y_over_Q"] = REC_DERIVED + D_PYQ + j
            names[prefix + "wear_number"] = REC_DERIVED + D_WEAR + j
    names["wheelset.axle_sum_Y_over_Q"] = REC_AXLE_SUM
    names["wheelset.weinstock_ratio"] = REC_WEINSTOCK
    names["wheelset.airborne_time"] = REC_AIRBORNE
    names["status.flange_climb_warning"] = REC_CLIMB_WARNING
    for side, side_name in enumerate(RECORD_SIDES):
        for k, name in enumerate(("lateral", "vertical", "roll")):
            names[f"rail.{side_name}.deflection.{name}"] = REC_STATE + S_RAIL + 3 * side + k
    names["solver.forced_steps"] = REC_FORCED_STEPS
    return names


RECORD_INDEX = _record_names()      # name -> index in the output record


def named_outputs(record: np.ndarray) -> dict:
    """Every named quantity of an output record (RECORD_INDEX): one row of a
    history, in the project's output vocabulary."""
    return {name: float(record[i]) for name, i in RECORD_INDEX.items()}


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
    flange_climb_ratio: np.ndarray         # (2,) flange Y/Q over Nadal's limit (solver/py)
    flange_climb_time: np.ndarray          # (2,) how long (s) the ratio has been above 1
    flange_climb_distance: np.ndarray      # (2,) over what distance (m)
    axle_sum_y_over_q: float               # Weinstock's sum of |Y/Q| of both wheels
    weinstock_ratio: float                 # that sum over Weinstock's limit (0: no flange contact)
    airborne_time: float                   # how long (s) both wheels have been off their rails
    lift_height: np.ndarray                # (2,) a lifted wheel's height above its rail (m)
    wheel_lift: np.ndarray                 # (2,) bool (a derailing step is discarded:
                                           # StepResult.reason says so)
    rhs_evaluations: int
