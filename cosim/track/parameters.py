"""The track's data: rail cross-sections (UIC60, CHN60) and the parameters of
the track model (TrackParameters), with the error of a bad value or a request
outside the model.

Default data (``TrackParameters``): the ballasted track data set of Zhai's
vehicle-track coupled dynamics for Chinese main lines (Zhai, Wang & Cai 2009,
Vehicle System Dynamics 47(11) 1349-1376): CHN60 rail, rail pad 7.8e7 N/m and
5.0e4 N s/m vertical, 2.94e7 N/m lateral, ballast 1.8e8 N/m and 5.88e4 N s/m.
The values are those quoted from that paper in the literature; the lateral
pad damping, the lateral ballast values and the 0.6 m sleeper spacing are
assumptions (named in the fields).
"""
from __future__ import annotations

import math
from dataclasses import dataclass


SIDES = ("left", "right")


class TrackModelError(ValueError):
    """Bad track parameters or a request outside the model (e.g. off the track)."""


@dataclass(frozen=True)
class RailSection:
    """Rail cross-section; SI units. ``vertical_inertia`` is the second moment
    about the horizontal axis (vertical bending), ``lateral_inertia`` about the
    vertical axis."""
    name: str
    source: str
    mass_per_length: float        # kg/m
    area: float                   # m^2
    youngs_modulus: float         # Pa
    shear_modulus: float          # Pa
    vertical_inertia: float       # m^4
    lateral_inertia: float        # m^4
    torsion_constant: float       # m^4 (St Venant J, G*J = torsional stiffness)
    polar_inertia: float          # m^4 (I_y + I_z, for the rotary mass in roll)
    vertical_shear_coefficient: float
    lateral_shear_coefficient: float
    crown_above_centroid: float   # m, the rail head's top above the centroid
    foot_width: float             # m


# UIC60 = 60E1, EN 13674-1:2011 Annex A: 60.21 kg/m, A = 76.70 cm^2,
# I (horizontal axis) = 3038.3 cm^4, I (vertical axis) = 512.3 cm^4, height
# 172 mm, foot 150 mm, centroid 80.9 mm above the foot (crown 91.1 mm above).
# E = 2.1e11 Pa, nu = 0.3. The torsion constant is not in EN 13674-1: the
# CHN60 value (a section of the same family) is used. Shear coefficients
# 0.4 vertical / 0.5 lateral are those commonly used for UIC60 (Thompson 2009,
# Railway Noise and Vibration, ch. 3).
UIC60 = RailSection(
    name="UIC60", source="EN 13674-1 (60E1); torsion constant of CHN60",
    mass_per_length=60.21, area=76.70e-4, youngs_modulus=2.1e11,
    shear_modulus=2.1e11 / (2 * 1.3), vertical_inertia=3038.3e-8,
    lateral_inertia=512.3e-8, torsion_constant=1.9587e5 / 7.9e10,
    polar_inertia=(3038.3 + 512.3) * 1e-8, vertical_shear_coefficient=0.4,
    lateral_shear_coefficient=0.5, crown_above_centroid=0.172 - 0.0809,
    foot_width=0.150)

# CHN60, GB 2585 / TB/T 2344 as used by Zhai et al. 2009 (Table of track
# parameters): E = 2.059e11 Pa, 60.64 kg/m, A = 77.45 cm^2, I = 3217 cm^4
# (horizontal axis) and 524 cm^4 (vertical axis), torsional stiffness
# G K = 1.9587e5 N m^2, torsional inertia 3.741e-5 m^4; height 176 mm, foot
# 150 mm, centroid 81 mm above the foot. G = 7.9e10 Pa.
CHN60 = RailSection(
    name="CHN60", source="GB 2585 / TB/T 2344 as used by Zhai, Wang & Cai 2009",
    mass_per_length=60.64, area=77.45e-4, youngs_modulus=2.059e11,
    shear_modulus=7.9e10, vertical_inertia=3217e-8, lateral_inertia=524e-8,
    torsion_constant=1.9587e5 / 7.9e10, polar_inertia=3.741e-5,
    vertical_shear_coefficient=0.4, lateral_shear_coefficient=0.5,
    crown_above_centroid=0.176 - 0.081, foot_width=0.150)

RAIL_SECTIONS = {"UIC60": UIC60, "60E1": UIC60, "CHN60": CHN60}


def rail_section(name_or_section) -> RailSection:
    if isinstance(name_or_section, RailSection):
        return name_or_section
    try:
        return RAIL_SECTIONS[str(name_or_section).upper()]
    except KeyError:
        raise TrackModelError(f"unknown rail section {name_or_section!r}; "
                              f"built-in: {', '.join(RAIL_SECTIONS)}") from None


@dataclass(frozen=True)
class TrackParameters:
    """Track model data; SI units. Defaults: Zhai et al. 2009 ballasted track
    (see the module docstring); fields marked 'assumed' are not from it."""
    rail: RailSection = CHN60
    beam: str = "timoshenko"                  # or "euler-bernoulli"
    sleeper_spacing: float = 0.6              # m (assumed; Zhai's data use 0.545-0.6 m)
    elements_per_bay: int = 2
    bays: int = 100                           # model length = bays * spacing
    rail_distance: float = 1.505              # m between the rail axes (gauge + head width)
    pad_vertical_stiffness: float = 7.8e7     # N/m  (Zhai 2009)
    pad_vertical_damping: float = 5.0e4       # N s/m (Zhai 2009)
    pad_lateral_stiffness: float = 2.94e7     # N/m  (Zhai 2009)
    pad_lateral_damping: float = 5.0e4        # N s/m (assumed, as vertical)
    half_sleeper_mass: float = 125.5          # kg (half of a 251 kg sleeper, Zhai 2009)
    ballast_vertical_stiffness: float = 1.8e8  # N/m per half sleeper (Zhai 2009)
    ballast_vertical_damping: float = 5.88e4  # N s/m (Zhai 2009)
    ballast_lateral_stiffness: float = 5.0e7  # N/m (assumed)
    ballast_lateral_damping: float = 4.0e4    # N s/m (assumed)
    fixed_sleepers: bool = False              # True: pads on rigid supports (receptance checks)

    def __post_init__(self):
        object.__setattr__(self, "rail", rail_section(self.rail))
        if self.beam not in ("timoshenko", "euler-bernoulli"):
            raise TrackModelError(f"beam must be 'timoshenko' or 'euler-bernoulli', got {self.beam!r}")
        for name in ("sleeper_spacing", "rail_distance", "pad_vertical_stiffness",
                     "pad_lateral_stiffness", "half_sleeper_mass",
                     "ballast_vertical_stiffness", "ballast_lateral_stiffness"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise TrackModelError(f"{name} must be a positive finite number, got {value!r}")
        for name in ("pad_vertical_damping", "pad_lateral_damping",
                     "ballast_vertical_damping", "ballast_lateral_damping"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise TrackModelError(f"{name} must be >= 0 and finite, got {value!r}")
        if int(self.elements_per_bay) != self.elements_per_bay or self.elements_per_bay < 1:
            raise TrackModelError(f"elements_per_bay must be an integer >= 1, got {self.elements_per_bay!r}")
        if int(self.bays) != self.bays or self.bays < 2:
            raise TrackModelError(f"bays must be an integer >= 2, got {self.bays!r}")

    @property
    def length(self) -> float:
        return self.bays * self.sleeper_spacing

    @property
    def element_length(self) -> float:
        return self.sleeper_spacing / self.elements_per_bay

    @property
    def pad_roll_stiffness(self) -> float:
        """k_v w^2 / 12: the vertical pad stiffness spread evenly under the foot."""
        return self.pad_vertical_stiffness * self.rail.foot_width ** 2 / 12.0

    @property
    def pad_roll_damping(self) -> float:
        return self.pad_vertical_damping * self.rail.foot_width ** 2 / 12.0

    def shear_parameter(self, vertical: bool) -> float:
        """phi = 12 E I / (kappa G A L^2) of one element (0 for Euler-Bernoulli)."""
        if self.beam == "euler-bernoulli":
            return 0.0
        r = self.rail
        inertia, kappa = ((r.vertical_inertia, r.vertical_shear_coefficient) if vertical
                          else (r.lateral_inertia, r.lateral_shear_coefficient))
        return 12.0 * r.youngs_modulus * inertia / (kappa * r.shear_modulus * r.area
                                                    * self.element_length ** 2)
