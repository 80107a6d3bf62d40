"""The track under the vehicle: straight, a linear transition (curvature and
cant ramp together) and a constant curve (CurveLayout), and the geometry of
the local track frame at one position seen from another, which the
suspension elements between bodies at different positions feel."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .parameters import GRAVITY, RAIL_DISTANCE, VehicleError


@dataclass
class CurveLayout:
    """Straight, linear transition (curvature and cant ramp together), constant
    curve. `radius` > 0 for a LEFT curve, < 0 for a right curve, inf for
    straight track; `cant` = superelevation of the outer rail (m, >= 0) on a
    rail distance of 1.5 m."""

    radius: float = math.inf
    cant: float = 0.0
    straight: float = 10.0
    transition: float = 50.0

    def __post_init__(self):
        if not (self.radius != 0 and not math.isnan(self.radius)):
            raise VehicleError(f"curve radius must be non-zero, got {self.radius!r}")
        if abs(self.radius) < 50.0:
            raise VehicleError(f"curve radius {self.radius} m is below 50 m")
        if not (0.0 <= self.cant < 0.2):
            raise VehicleError(f"cant {self.cant} m must be in [0, 0.2)")
        if not (self.straight >= 0 and self.transition > 0):
            raise VehicleError("straight length must be >= 0 and transition length > 0")

    @property
    def full_curvature(self) -> float:
        return 0.0 if math.isinf(self.radius) else 1.0 / self.radius

    @property
    def full_cant_angle(self) -> float:
        """Cant angle about +x in the curve (+ lifts the left rail)."""
        side = 0.0 if math.isinf(self.radius) else math.copysign(1.0, self.radius)
        return -side * math.asin(self.cant / RAIL_DISTANCE)

    def ramp(self, s):
        return np.clip((np.asarray(s, dtype=float) - self.straight) / self.transition, 0.0, 1.0)

    def curvature(self, s):
        return self.full_curvature * self.ramp(s)

    def cant_angle(self, s):
        return self.full_cant_angle * self.ramp(s)

    def curvature_slope(self, s):
        s = np.asarray(s, dtype=float)
        inside = (s > self.straight) & (s < self.straight + self.transition)
        return np.where(inside, self.full_curvature / self.transition, 0.0)

    def cant_deficiency(self, speed: float) -> float:
        """V^2 s / (g R) - h (m) in the curve."""
        if math.isinf(self.radius):
            return 0.0
        return speed * speed * RAIL_DISTANCE / (GRAVITY * abs(self.radius)) - self.cant

    def frames(self, s_from, s_to):
        """Geometry of the local track frame at s_from seen from the one at s_to
        (arrays): heading difference, lateral offset of the centreline point at
        s_from, cant difference (linearised; exact for piecewise-linear curvature
        up to the quadrature)."""
        s_from = np.asarray(s_from, dtype=float)
        s_to = np.asarray(s_to, dtype=float)
        heading = self._heading
        # heading(s) = int curvature; offset = int_{s_to}^{s_from} (heading(s) - heading(s_to)) ds
        d_heading = heading(s_from) - heading(s_to)
        nodes, weights = np.polynomial.legendre.leggauss(4)
        offset = np.zeros(np.broadcast(s_from, s_to).shape)
        half = 0.5 * (s_from - s_to)
        mid = 0.5 * (s_from + s_to)
        for x, w in zip(nodes, weights):
            offset = offset + w * half * (heading(mid + half * x) - heading(s_to))
        return d_heading, offset, self.cant_angle(s_from) - self.cant_angle(s_to)

    def _heading(self, s):
        s = np.asarray(s, dtype=float)
        k = self.full_curvature
        a, L = self.straight, self.transition
        u = np.clip(s - a, 0.0, L)
        return k * (u * u / (2 * L) + np.maximum(s - a - L, 0.0))
