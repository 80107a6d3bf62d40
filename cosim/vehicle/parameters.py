"""The data of the vehicle (Manchester benchmark vehicle 1), the constants the
vehicle's modules share (gravity, the rail distance, the side names) and the
error of a run that cannot go on."""
from __future__ import annotations

import math
from dataclasses import dataclass


GRAVITY = 9.81
RAIL_DISTANCE = 1.5   # m, lateral distance of the rail centres (cant angle = asin(h / 1.5))
SIDES = ("left", "right")


class VehicleError(RuntimeError):
    """The coupled run cannot go on (bad parameters, an FMU refused a step)."""


@dataclass
class VehicleParameters:
    """Manchester benchmark vehicle 1 (Iwnicki 1998, VSD 30).

    From docs/references.md (Iwnicki 1998): wheelset 1813 kg, J 1120/112/
    1120 kg m^2, r0 0.46 m, semi-wheelbase 1.28 m, primary springs at 1.0 m
    lateral semi-spacing, kx 31.391 MN/m, ky 3.884 MN/m, kz 1.22 MN/m, cx 15,
    cy 2, cz 4 kN s/m per box; bogie frame 2615 kg, J 1722/1476/3067 kg m^2.
    Checked against a second source (the TTB-2D vehicle table citing Iwnicki
    1998, DanielCanteroNTNU/TTB-2D TrainProp_Manchester): carbody 32 000 kg,
    J_y 1.97e6 kg m^2, bogie semi-spacing 9.5 m, secondary vertical 430 kN/m
    and 20 kN s/m per side (that table gives the primary vertical as 1.2 MN/m).
    The static wheel load (32000/8 + 2615/4 + 1813/2) g = 54.55 kN agrees with
    REFERENCES' 54.5 kN.

    ASSUMED (Iwnicki 1998 not at hand, values as recalled and not checked
    against a second source): carbody J_x 56 800 and J_z 1.97e6 kg m^2;
    secondary longitudinal and lateral stiffness 160 kN/m per side, lateral
    damping 32 kN s/m per side, no longitudinal damping, no yaw damper or
    anti-roll bar; secondary springs at 1.0 m lateral semi-spacing, 1.0 m above
    the rail; centres of mass 2.0 m (carbody) and 0.6 m (bogie frame) above
    the rail. They change the carbody modes, not the static loads or the
    quasi-static curving balance checked in the tests.
    """

    carbody_mass: float = 32000.0
    carbody_inertia: tuple = (56800.0, 1.97e6, 1.97e6)
    carbody_height: float = 2.0
    bogie_mass: float = 2615.0
    bogie_inertia: tuple = (1722.0, 1476.0, 3067.0)
    bogie_height: float = 0.6
    wheelset_mass: float = 1813.0
    wheelset_inertia: tuple = (1120.0, 112.0, 1120.0)
    wheel_radius: float = 0.46
    bogie_semi_spacing: float = 9.5
    semi_wheelbase: float = 1.28
    primary_semi_spacing: float = 1.0
    primary_stiffness: tuple = (31.391e6, 3.884e6, 1.22e6)
    primary_damping: tuple = (15e3, 2e3, 4e3)
    secondary_semi_spacing: float = 1.0
    secondary_height: float = 1.0
    secondary_stiffness: tuple = (0.16e6, 0.16e6, 0.43e6)
    secondary_damping: tuple = (0.0, 32e3, 20e3)
    # not part of the benchmark: the coupling of the carbody to the train that
    # keeps the speed constant (a longitudinal spring-damper to the frame moving
    # at V; 2e5 N/m, 1e5 N s/m: 10 mm per 2 kN of running resistance, damping
    # ratio 0.5 with the vehicle's 42 t)
    drawbar_stiffness: float = 2e5
    drawbar_damping: float = 1e5

    def static_wheel_load(self) -> float:
        """The static vertical load of one wheel on its rail (N)."""
        return (self.carbody_mass / 8 + self.bogie_mass / 4 + self.wheelset_mass / 2) * GRAVITY

    def validate(self):
        for name, value in self.__dict__.items():
            values = value if isinstance(value, tuple) else (value,)
            for v in values:
                if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                    raise VehicleError(f"vehicle parameter {name} must be finite and >= 0, got {value!r}")
        for name in ("carbody_mass", "bogie_mass", "wheelset_mass", "wheel_radius",
                     "primary_semi_spacing", "secondary_semi_spacing"):
            if getattr(self, name) <= 0:
                raise VehicleError(f"vehicle parameter {name} must be > 0")
        for name in ("carbody_inertia", "bogie_inertia", "wheelset_inertia"):
            if min(getattr(self, name)) <= 0:
                raise VehicleError(f"vehicle parameter {name} must be > 0")
