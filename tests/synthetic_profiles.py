"""Synthetic profiles for analytic checks: a pure cone and a circular-crown rail.

They carry the same attributes as solver.profiles.profile.Profile (lateral, height,
slope, second_derivative in SI units on a uniform grid), built from closed-form
expressions so that the analytic results (Klingel, pure-rolling curving) apply.
"""
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class AnalyticProfile:
    name: str
    kind: str
    source: str
    lateral: np.ndarray
    height: np.ndarray
    slope: np.ndarray
    second_derivative: np.ndarray
    step: float
    flange_back_to_taping_line: float | None = None


def cone_wheel(conicity: float, step: float = 1e-4) -> AnalyticProfile:
    """Pure cone F(s) = -conicity * s over s in [-40, 50] mm (no flange)."""
    s = np.arange(-0.040, 0.050 + step / 2, step)
    return AnalyticProfile("cone", "wheel", f"synthetic cone, conicity {conicity}", s,
                           -conicity * s, np.full(s.size, -conicity), np.zeros(s.size), step, 0.070)


def circular_crown_rail(radius: float = 0.3, half_width: float = 0.036,
                        step: float = 1e-4) -> AnalyticProfile:
    """Rail head z(u) = sqrt(R^2 - u^2) - R (a single crown arc, +-half_width),
    continued by steep straight flanks so that a gauge point 14 mm down exists."""
    u = np.arange(-0.045, 0.045 + step / 2, step)
    au = np.abs(u)
    z = np.sqrt(radius ** 2 - np.minimum(au, half_width) ** 2) - radius
    zp = -np.minimum(au, half_width) / np.sqrt(radius ** 2 - np.minimum(au, half_width) ** 2)
    flank = au > half_width
    z = np.where(flank, z - (au - half_width) * 3.0, z)
    zp = np.where(flank, -3.0, zp)
    zp = zp * np.sign(u + 1e-30)
    zpp = np.where(flank, 0.0, -radius ** 2 / (radius ** 2 - np.minimum(au, half_width) ** 2) ** 1.5)
    return AnalyticProfile("crown", "rail", f"synthetic R{radius * 1e3:g} crown", u, z, zp, zpp, step)
