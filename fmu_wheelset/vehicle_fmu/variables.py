"""The one table of the vehicle-bodies FMU's variables (VehicleBodies.fmu:
the carbody, bogie frames and suspensions of the Manchester benchmark vehicle
1, cosim/vehicle/). The model description, the native bridge, the SSP system
(fmu_wheelset/vehicle_fmu/system.py), docs/vehicle.md's connection table and the
tests derive from it.

Value references are the positions in VARIABLES. The first N_IO (inputs and
outputs) are the entries of cosim.vehicle.body_step's io vector, in its order,
so that the FMU's value buffer IS that vector (tests/test_vehicle_system.py
holds them equal).

The FMU carries the table as data (resources/<package>/variables.json,
written by fmu_wheelset/vehicle_fmu/build.py), never this module.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

N_WHEELSETS = 4
SIDES = ("left", "right")
AXES = "xyz"
BODIES = ("carbody", "bogie1", "bogie2")
BODY_DOFS = ("x", "y", "z", "roll", "pitch", "yaw")
SCHEME_NAMES = ("gauss-seidel", "jacobi", "explicit")


@dataclass(frozen=True)
class Variable:
    name: str
    type: str              # Real | Integer
    causality: str         # parameter | input | output
    unit: str
    min: float
    max: float
    start: float
    description: str
    source: str = ""       # where a parameter's value comes from


def _kinematics():
    out = []
    for j in range(1, N_WHEELSETS + 1):
        for side in SIDES:
            for quantity, unit in (("position", "m"), ("velocity", "m/s")):
                for a in AXES:
                    out.append(Variable(
                        f"wheelset{j}.axlebox.{side}.{quantity}.{a}", "Real", "input", unit,
                        -1e7 if quantity == "position" else -1e3, 1e7 if quantity == "position" else 1e3,
                        0.0, f"{quantity} {a} of wheelset {j}'s {side} axle-box centre, track frame "
                        f"(x forward relative to the frame moving at the speed, y to the left, z up); "
                        f"connect wheelset{j}'s axlebox.{side}.{quantity}.{a}"))
    return out


def _forces():
    out = []
    for j in range(1, N_WHEELSETS + 1):
        for side in SIDES:
            for a in AXES:
                out.append(Variable(
                    f"wheelset{j}.axlebox.{side}.force.{a}", "Real", "output", "N", -1e7, 1e7, 0.0,
                    f"force {a} of the primary suspension ON wheelset {j} at its {side} axle box, "
                    f"track frame (+ along the axis; at rest about -48.6 kN in z), held over the "
                    f"wheelset's next step; connect to wheelset{j}'s axlebox.{side}.force.{a}"))
    return out


def _track():
    out = [Variable(f"wheelset{j}.track.curvature", "Real", "output", "1/m", -0.02, 0.02, 0.0,
                    f"track curvature at wheelset {j} (+ left curve); connect to wheelset{j}'s "
                    "track.curvature") for j in range(1, N_WHEELSETS + 1)]
    out += [Variable(f"wheelset{j}.track.cant_angle", "Real", "output", "rad", -0.2, 0.2, 0.0,
                     f"track cant angle at wheelset {j} (about +x, + lifts the left rail); connect "
                     f"to wheelset{j}'s track.cant_angle") for j in range(1, N_WHEELSETS + 1)]
    return out


def _bodies():
    return [Variable(f"{body}.{dof}", "Real", "output", "m" if dof in "xyz" else "rad", -1e3, 1e3, 0.0,
                     f"{body} displacement {dof} from its nominal position in its own track frame "
                     "(for the results; the bodies run one step ahead in the Jacobi scheme)")
            for body in BODIES for dof in BODY_DOFS]


IWNICKI = "Iwnicki 1998, Manchester benchmark vehicle 1 (docs/references.md)"
TTB = "Iwnicki 1998 as tabulated in TTB-2D TrainProp_Manchester (cosim/vehicle/parameters.py)"
ASSUMED = "ASSUMED, not checked against a second source (cosim/vehicle/parameters.py)"
NOT_BENCHMARK = "not part of the benchmark: the train's drawbar holding the speed (cosim/vehicle/parameters.py)"
# VehicleParameters field -> (unit, min, max, source, what)
PARAMETER_FIELDS = {
    "carbody_mass": ("kg", 1.0, 1e6, TTB, "carbody mass"),
    "carbody_inertia": ("kg.m2", 1.0, 1e9, f"x, z: {ASSUMED}; y: {TTB}", "carbody moment of inertia"),
    "carbody_height": ("m", 0.0, 10.0, ASSUMED, "carbody centre of mass above the rail"),
    "bogie_mass": ("kg", 1.0, 1e5, IWNICKI, "bogie frame mass"),
    "bogie_inertia": ("kg.m2", 1.0, 1e7, IWNICKI, "bogie frame moment of inertia"),
    "bogie_height": ("m", 0.0, 5.0, ASSUMED, "bogie frame centre of mass above the rail"),
    "wheelset_mass": ("kg", 1.0, 1e5, IWNICKI, "wheelset mass (the interface models; equal to the "
                      "wheelset FMUs' wheelset.mass)"),
    "wheelset_inertia": ("kg.m2", 1e-3, 1e6, IWNICKI, "wheelset moment of inertia (the interface "
                         "models; equal to the wheelset FMUs' wheelset.inertia)"),
    "wheel_radius": ("m", 0.1, 1.5, IWNICKI, "nominal rolling radius (axle height of the primary "
                     "springs; equal to the wheelset FMUs' wheel.nominal_rolling_radius)"),
    "bogie_semi_spacing": ("m", 0.5, 50.0, TTB, "half the distance of the bogie centres"),
    "semi_wheelbase": ("m", 0.2, 10.0, IWNICKI, "half the bogie wheelbase"),
    "primary_semi_spacing": ("m", 0.1, 2.0, IWNICKI, "lateral semi-spacing of the primary springs "
                             "(equal to the wheelset FMUs' wheelset.axle_box_semi_spacing)"),
    "primary_stiffness": ("N/m", 0.0, 1e10, IWNICKI, "primary stiffness per axle box"),
    "primary_damping": ("N.s/m", 0.0, 1e9, IWNICKI, "primary damping per axle box"),
    "secondary_semi_spacing": ("m", 0.1, 3.0, ASSUMED, "lateral semi-spacing of the secondary springs"),
    "secondary_height": ("m", 0.0, 5.0, ASSUMED, "height of the secondary springs above the rail"),
    "secondary_stiffness": ("N/m", 0.0, 1e10, f"z: {TTB}; x, y: {ASSUMED}",
                            "secondary stiffness per side"),
    "secondary_damping": ("N.s/m", 0.0, 1e9, f"z: {TTB}; x, y: {ASSUMED}",
                          "secondary damping per side"),
    "drawbar_stiffness": ("N/m", 0.0, 1e9, NOT_BENCHMARK, "longitudinal stiffness holding the carbody at the speed"),
    "drawbar_damping": ("N.s/m", 0.0, 1e9, NOT_BENCHMARK, "longitudinal damping holding the carbody at the speed"),
}


def vehicle_parameter_names(field_name: str, value) -> list:
    """The FMU parameter names of one VehicleParameters field (tuples: .x .y .z)."""
    base = "vehicle." + field_name
    return [f"{base}.{a}" for a in AXES] if isinstance(value, tuple) else [base]


def _parameters():
    from cosim.vehicle.parameters import VehicleParameters
    defaults = VehicleParameters()
    out = []
    for f in fields(VehicleParameters):
        unit, lo, hi, source, what = PARAMETER_FIELDS[f.name]
        value = getattr(defaults, f.name)
        values = value if isinstance(value, tuple) else (value,)
        for name, v in zip(vehicle_parameter_names(f.name, value), values):
            axis = f" ({name[-1]})" if isinstance(value, tuple) else ""
            out.append(Variable(name, "Real", "parameter", unit, lo, hi, float(v), what + axis, source))
    out += [
        Variable("vehicle.speed", "Real", "parameter", "m/s", 0.1, 150.0, 30.0,
                 "running speed (equal to the wheelset FMUs' wheelset.speed)", "the run's"),
        Variable("track.curve_radius", "Real", "parameter", "m", -1e5, 1e5, 0.0,
                 "radius of the curve after the transition (+ left, - right; 0: straight track; "
                 "|R| >= 50 m)", "the run's"),
        Variable("track.cant", "Real", "parameter", "m", 0.0, 0.199,
                 0.0, "superelevation of the outer rail in the curve (on 1.5 m between the rail "
                 "centres)", "the run's"),
        Variable("track.straight", "Real", "parameter", "m", 0.0, 1e5, 10.0,
                 "straight track before the transition, measured from the carbody's position "
                 "at t = 0 minus the leading wheelset's offset (cosim/vehicle/curve_layout.py)",
                 "the run's"),
        Variable("track.transition", "Real", "parameter", "m", 0.1, 1e5, 50.0,
                 "length of the linear transition (curvature and cant ramp together)", "the run's"),
        Variable("coupling.scheme", "Integer", "parameter", "", 0, 2, 1,
                 "how the master exchanges values: 0 gauss-seidel (this FMU steps first and its "
                 "forces go to the wheelsets' same step), 1 jacobi (all step, then exchange: "
                 "libcosim's and Ecos's fixed-step algorithms), 2 explicit (gauss-seidel without "
                 "the interface models); cosim/vehicle/body_step.py", "the master's"),
        Variable("push.wheelset", "Integer", "parameter", "", 1, 4, 1,
                 "wheelset that receives the lateral push (1 leading .. 4 trailing)", "the run's"),
        Variable("push.force", "Real", "parameter", "N", -1e6, 1e6, 0.0,
                 "lateral push on that wheelset, half at each axle box (+ to the left)", "the run's"),
        Variable("push.duration", "Real", "parameter", "s", 0.0, 1e4, 0.0,
                 "the push acts from t = 0 while t < duration", "the run's"),
    ]
    return out


VARIABLES = _kinematics() + _forces() + _track() + _bodies() + _parameters()
BY_NAME = {v.name: v for v in VARIABLES}
N_IO = 48 + 24 + 8 + 18


def connections() -> list:
    """(bodies variable, wheelset index 1..4, wheelset variable, unit) of every
    connection between the bodies FMU and the wheelset FMUs, in the direction
    of the data (the input's side last)."""
    out = []
    for v in VARIABLES[:N_IO]:
        if not v.name.startswith("wheelset"):
            continue
        j = int(v.name[len("wheelset")])
        wheelset_name = v.name.split(".", 1)[1]
        out.append((v.name, j, wheelset_name, v.unit, v.causality))
    return out
