"""The set-up of the contact search: the wheel and rail tables, the geometry
parameters of a wheel-rail pair, and the named groups of the kernels' arguments."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numba import njit

from ...errors import SolverError
from ...layout import (
    G_COS_INCLINATION, G_E_D, G_E_K, G_INCLINATION, G_NOMINAL_RADIUS, G_RAIL_CENTRE_Y, G_RAIL_DU,
    G_RAIL_INV_DU, G_RAIL_U0, G_SIN_INCLINATION, G_TAN_INCLINATION, G_TAPING_AXIAL, G_WHEEL_DS,
    G_WHEEL_S0, MAX_MINIMA, MAX_POINTS, N_GEOMETRY_PARAMS, N_POINT_FIELDS, N_TRACK_HEAD,
    N_WORK_ROWS, T_LAT, W_TRACK_HEAD,
)
from ...profiles.builtins import builtin_profile
from ...profiles.profile import Profile


def forget_tracked_minima(work):
    """No tracked minima on either wheel: the next wheelset_contact_tracked scans
    both (a new scratch, a state set from outside)."""
    for side in range(2):
        work[W_TRACK_HEAD + side, :N_TRACK_HEAD] = 0.0


@njit(cache=True, error_model="numpy", _nrt=False)
def _cos_sin_tan(theta):
    """cos, sin, tan of theta with the kernels' functions (the same bits as in them)."""
    return np.cos(theta), np.sin(theta), np.tan(theta)


GAUGE_MEASURING_DEPTH = 0.014   # EN 13848-1 / EN 13674: gauge measured 14 mm below the rail top


class GeometryError(SolverError):
    """A contact-geometry request that cannot be answered (bad pose or set-up)."""


# ---------------------------------------------------------------------------
# Named argument groups of the kernels (numba passes them as plain structs)
# ---------------------------------------------------------------------------

class ContactTables(NamedTuple):
    """What the contact kernels know of the profiles placed on the track."""

    wheel: np.ndarray    # (n_wheel, 4) wheel table, columns T_*
    rail: np.ndarray     # (n_rail, 4) rail table, columns T_*
    params: np.ndarray   # (N_GEOMETRY_PARAMS,) entries G_*


class WheelsetPose(NamedTuple):
    """Position of the wheelset centre in the track frame (m) and its attitude (rad)."""

    y: float
    z: float
    roll: float
    yaw: float


class RailPose(NamedTuple):
    """Motion of one rail from its nominal place, in the side-local frame of its wheel."""

    lateral: float    # m
    vertical: float   # m
    roll: float       # rad


class ContactBuffers(NamedTuple):
    """Scratch and result arrays of a two-wheel contact search."""

    work: np.ndarray     # (N_WORK_ROWS, n_wheel) search scratch, rows W_*
    points: np.ndarray   # (2, MAX_POINTS, N_POINT_FIELDS) contact points, track frame
    counts: np.ndarray   # (2,) int64, points per wheel


# ---------------------------------------------------------------------------
# Set-up: profiles placed on the track
# ---------------------------------------------------------------------------

def _contact_table(profile: Profile, max_slope_deg: float, wheel: bool) -> np.ndarray:
    """Profile grid restricted to the part that can touch, as a (n, 4) table."""
    lateral = np.asarray(profile.lateral, dtype=float)
    height = np.asarray(profile.height, dtype=float)
    slope = np.asarray(profile.slope, dtype=float)
    d2 = np.asarray(profile.second_derivative, dtype=float)
    max_slope = np.tan(np.radians(max_slope_deg))
    if wheel:
        # From the flange tip (largest radius) to the field side end; the back of
        # the flange never touches the running rail.
        start = int(np.argmax(height))
        keep = np.zeros(lateral.size, dtype=bool)
        keep[start:] = True
        keep &= np.abs(slope) <= max_slope
        first = np.argmax(keep)
        last = lateral.size - np.argmax(keep[::-1])
        sel = slice(first, last)
    else:
        keep = np.abs(slope) <= max_slope
        # The contiguous run around the crown.
        crown = int(np.argmax(height))
        first = crown
        while first > 0 and keep[first - 1]:
            first -= 1
        last = crown
        while last < lateral.size - 1 and keep[last + 1]:
            last += 1
        sel = slice(first, last + 1)
    table = np.column_stack([lateral[sel], height[sel], slope[sel], d2[sel]])
    if table.shape[0] < 10:
        raise GeometryError(f"profile {profile.name!r}: too few points usable for contact")
    return np.ascontiguousarray(table)


def _rail_gauge_point_offset(rail: Profile, inclination: float) -> float:
    """Lateral distance from the rail-head centreline to the gauge point.

    The rail is inclined by `inclination` towards the track centre; the gauge
    point is the gauge-side point of the inclined head 14 mm below its top.
    Returned as a positive distance in the track's lateral direction
    (side-local frame: gauge side at smaller Y).
    """
    u = np.asarray(rail.lateral, dtype=float)
    z = np.asarray(rail.height, dtype=float)
    ci, si = np.cos(inclination), np.sin(inclination)
    y_local = u * ci - z * si
    z_local = u * si + z * ci
    top = z_local.max()
    target = top - GAUGE_MEASURING_DEPTH
    gauge_side = y_local < y_local[np.argmax(z_local)]
    ys, zs = y_local[gauge_side], z_local[gauge_side]
    if zs.min() > target:
        raise GeometryError(
            "rail profile does not reach 14 mm below its top on the gauge side; "
            "the gauge point cannot be located")
    # Walk from the top towards the gauge side to the first crossing of `target`.
    order = np.argsort(-ys)
    ys, zs = ys[order], zs[order]
    idx = int(np.argmax(zs <= target))
    if idx == 0:
        return float(-ys[0])
    t = (zs[idx - 1] - target) / (zs[idx - 1] - zs[idx])
    y_gauge = ys[idx - 1] + t * (ys[idx] - ys[idx - 1])
    return float(-y_gauge)


@dataclass
class ContactSetup:
    """Wheel and rail profiles placed on a track, ready for the contact kernels.

    Lengths in metres. `inclination` is the rail cant angle in rad (1:40 ->
    atan(1/40)). `back_to_back` is the distance between the inner faces of the
    wheels; the taping line of each wheel lies `flange_back_to_taping_line` of
    the wheel profile outside its inner face.
    """

    wheel: Profile
    rail: Profile
    gauge: float = 1.435
    inclination: float = float(np.arctan(1.0 / 40.0))
    back_to_back: float = 1.360
    nominal_radius: float = 0.46
    separation_min: float = 0.008      # e_d, Ren & Jin 2010
    slope_difference_min: float = 0.025  # e_k, Ren & Jin 2010
    wheel_table: np.ndarray = field(init=False, repr=False)
    rail_table: np.ndarray = field(init=False, repr=False)
    params: np.ndarray = field(init=False, repr=False)
    rail_centre_y: float = field(init=False)
    tables: ContactTables = field(init=False, repr=False)

    def __post_init__(self):
        for name in ("gauge", "back_to_back", "nominal_radius"):
            value = getattr(self, name)
            if not np.isfinite(value) or value <= 0:
                raise GeometryError(f"{name} must be a positive length in metres, got {value!r}")
        if self.gauge > 3.0 or self.back_to_back > 3.0:
            raise GeometryError("gauge and back-to-back are in metres (e.g. 1.435, 1.360)")
        if not np.isfinite(self.inclination) or abs(self.inclination) > 0.2:
            raise GeometryError(f"rail inclination {self.inclination!r} rad is out of range")
        if self.wheel.kind != "wheel" or self.rail.kind != "rail":
            raise GeometryError("ContactSetup needs a wheel profile and a rail profile")
        self.wheel_table = _contact_table(self.wheel, 80.0, wheel=True)
        self.rail_table = _contact_table(self.rail, 80.0, wheel=False)
        for table, prof in ((self.wheel_table, self.wheel), (self.rail_table, self.rail)):
            steps = np.diff(table[:, T_LAT])
            if not np.allclose(steps, steps[0], rtol=1e-6, atol=1e-12):
                raise GeometryError(f"profile {prof.name!r} is not on a uniform grid")
        if self.wheel_table.shape[0] < MAX_MINIMA:
            # the search keeps its lists of minima in rows of the wheel-grid scratch (W_*)
            raise GeometryError(f"wheel profile {self.wheel.name!r} has {self.wheel_table.shape[0]} "
                                f"grid points, fewer than the {MAX_MINIMA} the contact search needs")
        gauge_offset = _rail_gauge_point_offset(self.rail, self.inclination)
        self.rail_centre_y = self.gauge / 2.0 + gauge_offset
        taping = self.back_to_back / 2.0 + float(self.wheel.flange_back_to_taping_line)
        p = np.zeros(N_GEOMETRY_PARAMS)
        p[G_WHEEL_S0] = self.wheel_table[0, T_LAT]
        p[G_WHEEL_DS] = self.wheel_table[1, T_LAT] - self.wheel_table[0, T_LAT]
        p[G_RAIL_U0] = self.rail_table[0, T_LAT]
        p[G_RAIL_DU] = self.rail_table[1, T_LAT] - self.rail_table[0, T_LAT]
        p[G_TAPING_AXIAL] = taping
        p[G_NOMINAL_RADIUS] = self.nominal_radius
        p[G_RAIL_CENTRE_Y] = self.rail_centre_y
        p[G_INCLINATION] = self.inclination
        p[G_E_D] = self.separation_min
        p[G_E_K] = self.slope_difference_min
        p[G_COS_INCLINATION], p[G_SIN_INCLINATION], p[G_TAN_INCLINATION] = _cos_sin_tan(self.inclination)
        p[G_RAIL_INV_DU] = 1.0 / p[G_RAIL_DU]
        self.params = p
        self.tables = ContactTables(self.wheel_table, self.rail_table, self.params)

    def buffers(self) -> ContactBuffers:
        """Fresh scratch and result arrays for `wheelset_contact_kernel` on this set-up
        (no tracked minima: the first `wheelset_contact_tracked` scans)."""
        work = np.empty((N_WORK_ROWS, self.wheel_table.shape[0]))
        forget_tracked_minima(work)
        return ContactBuffers(work, np.zeros((2, MAX_POINTS, N_POINT_FIELDS)),
                              np.zeros(2, dtype=np.int64))

    @property
    def taping_line_axial(self) -> float:
        """Axial distance of each wheel's taping line from the wheelset centre (m)."""
        return float(self.params[G_TAPING_AXIAL])

    @classmethod
    def from_names(cls, wheel: str = "S1002", rail: str = "UIC60", *, step: float = 1e-4,
                   inclination_ratio: float | None = 40.0, **kwargs) -> "ContactSetup":
        """Set-up from built-in profile names; `inclination_ratio` 40 means 1:40, 0 or None flat."""
        if "inclination" not in kwargs:
            kwargs["inclination"] = (float(np.arctan(1.0 / inclination_ratio))
                                     if inclination_ratio else 0.0)
        return cls(builtin_profile(wheel, step=step), builtin_profile(rail, step=step), **kwargs)
