"""The inputs of a creep model: one contact patch's creepages, ellipse and
material (CreepPatch, what every model's kernel takes), and their checks."""

from __future__ import annotations

import math
from typing import NamedTuple

from ...errors import CreepError


def check_poisson(poisson):
    if not (math.isfinite(poisson) and 0.0 <= poisson <= 0.5):
        raise CreepError(f"poisson must be in [0, 0.5], got {poisson!r}")


def check_finite(**values):
    for name, v in values.items():
        if not math.isfinite(v):
            raise CreepError(f"{name} must be finite, got {v!r}")


class CreepPatch(NamedTuple):
    """One contact point as the creep models see it (SI units, docs/CONVENTIONS.md)."""

    xi: float               # longitudinal creepage (-)
    eta: float              # lateral creepage (-)
    phi: float              # spin creepage (1/m)
    a: float                # semi-axis of the contact ellipse along x, rolling (m)
    b: float                # lateral semi-axis (m)
    normal_force: float     # N (N)
    friction: float         # mu (Polach: mu0)
    shear_modulus: float    # G (Pa)
    poisson: float          # nu (0 ... 0.5)
    speed: float            # rolling speed V (m/s)
