"""Track sections (straight, transition, curve) and the checks of their values."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ..errors import SolverError


#: distance between the rail centres (m) used to turn superelevation into a
#: cant angle: standard gauge 1435 mm + one rail-head width (~65-73 mm).
DEFAULT_RAIL_DISTANCE = 1.5

SECTION_TYPES = ("straight", "transition", "curve")
DIRECTIONS = ("left", "right")


MAX_CURVATURE = 1.0      # 1/m: radius >= 1 m (the FMU input range of track.curvature)


class TrackError(SolverError):
    """Bad track, irregularity or rail-motion input (the message names it)."""


# --------------------------------------------------------------------------
# small validation helpers
# --------------------------------------------------------------------------
def finite_float(value, what: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        # the value itself is not quoted: it may be a line of any file
        raise TrackError(f"{what} must be a number") from None
    if not math.isfinite(x):
        raise TrackError(f"{what} must be finite, got {x!r}")
    return x


def float_or_inf(value, what: str) -> float:
    if isinstance(value, str) and value.strip().lower() in ("inf", "+inf", "infinity"):
        return math.inf
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise TrackError(f"{what} must be a number or 'inf'") from None
    if math.isnan(x) or x == -math.inf:
        raise TrackError(f"{what} must be a number or +inf, got {x!r}")
    return x


def check_direction(value, what: str) -> str:
    if not isinstance(value, str) or value.strip().lower() not in DIRECTIONS:
        raise TrackError(f"{what} must be 'left' or 'right'")
    return value.strip().lower()


def _sign(direction: str) -> float:
    return 1.0 if direction == "left" else -1.0


def as_distance(s) -> np.ndarray:
    arr = np.asarray(s, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise TrackError("the distance s must be finite")
    return arr


def scalar_or_array(x: np.ndarray, scalar: bool):
    return float(x) if scalar else x


# --------------------------------------------------------------------------
# sections
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class TrackSection:
    """One section of a track, SI units.

    type: "straight" | "transition" | "curve"; length (m, > 0);
    radius (m): curve radius (finite, > 0), or for a transition its END radius
    (inf = straight), None = inferred from the next section;
    cant (m): superelevation of the OUTER rail (>= 0); for a transition its end
    value; direction: "left" | "right" (None = the track's default).
    """

    type: str
    length: float
    radius: float | None = None
    cant: float | None = None
    direction: str | None = None


_SECTION_KEYS = {
    "type": "type",
    "length": "length", "length_m": "length",
    "radius": "radius", "radius_m": "radius",
    "cant": "cant_m", "cant_m": "cant_m", "cant_mm": "cant_mm",
    "direction": "direction",
}


def section_from_mapping(d: Mapping, where: str) -> TrackSection:
    out: dict = {}
    for key, value in d.items():
        canon = _SECTION_KEYS.get(str(key))
        if canon is None:
            raise TrackError(
                f"{where}: unknown key {key!r} (allowed: type, length/length_m, "
                f"radius/radius_m, cant/cant_m (m) or cant_mm (mm), direction)")
        if canon in ("cant_m", "cant_mm") and "cant" in out:
            raise TrackError(f"{where}: give the cant once (cant, cant_m or cant_mm)")
        if canon == "length" and "length" in out:
            raise TrackError(f"{where}: give the length once")
        if canon == "radius" and "radius" in out:
            raise TrackError(f"{where}: give the radius once")
        if canon == "cant_m":
            out["cant"] = None if value is None else finite_float(value, f"{where}: cant (m)")
        elif canon == "cant_mm":
            out["cant"] = None if value is None else 1e-3 * finite_float(value, f"{where}: cant_mm")
        else:
            out[canon] = value
    if "type" not in out:
        raise TrackError(f"{where}: missing 'type' (one of {', '.join(SECTION_TYPES)})")
    if "length" not in out:
        raise TrackError(f"{where}: missing 'length' (m)")
    return TrackSection(type=out["type"], length=out["length"], radius=out.get("radius"),
                        cant=out.get("cant"), direction=out.get("direction"))


def normalise_section(sec, index: int, default_direction: str,
                       rail_distance: float) -> TrackSection:
    where = f"section {index}"
    if isinstance(sec, Mapping):
        sec = section_from_mapping(sec, where)
    elif not isinstance(sec, TrackSection):
        raise TrackError(f"{where}: expected a TrackSection or a dict, got {type(sec).__name__}")
    kind = sec.type.strip().lower() if isinstance(sec.type, str) else sec.type
    if kind not in SECTION_TYPES:
        raise TrackError(f"{where}: unknown section type {sec.type!r} "
                         f"(allowed: {', '.join(SECTION_TYPES)})")
    where = f"section {index} ({kind})"
    length = finite_float(sec.length, f"{where}: length")
    if length <= 0.0:
        raise TrackError(f"{where}: length must be positive, got {length} m")
    direction = default_direction if sec.direction is None else check_direction(
        sec.direction, f"{where}: direction")
    radius = None if sec.radius is None else float_or_inf(sec.radius, f"{where}: radius")
    cant = None if sec.cant is None else finite_float(sec.cant, f"{where}: cant")
    if radius is not None and radius <= 0.0:
        raise TrackError(f"{where}: radius must be positive (use 'direction' for the side), "
                         f"got {radius} m")
    if cant is not None:
        if cant < 0.0:
            raise TrackError(f"{where}: cant (outer-rail superelevation) must be >= 0, "
                             f"got {cant} m")
        if cant >= rail_distance:
            raise TrackError(f"{where}: cant {cant} m is not below the rail distance "
                             f"{rail_distance} m")
    if kind == "straight":
        if radius is not None and math.isfinite(radius):
            raise TrackError(f"{where}: a straight has no finite radius (got {radius} m)")
        if cant not in (None, 0.0):
            raise TrackError(f"{where}: a straight has no cant (got {cant} m)")
        return TrackSection("straight", length, math.inf, 0.0, direction)
    if kind == "curve":
        if radius is None:
            raise TrackError(f"{where}: a curve needs a radius")
        if not math.isfinite(radius):
            raise TrackError(f"{where}: a curve needs a finite radius (use a straight)")
        return TrackSection("curve", length, radius, 0.0 if cant is None else cant, direction)
    # transition: radius/cant are the optional explicit END state
    if radius is None and cant is not None:
        raise TrackError(f"{where}: an explicit transition end needs the radius too "
                         "(inf for a straight end)")
    if radius is not None and cant is None:
        cant = 0.0
    return TrackSection("transition", length, radius, cant, direction)


def section_state(radius_cant_direction: tuple) -> tuple:
    """(radius, outer-rail cant, direction) -> (curvature, signed superelevation)."""
    radius, cant, direction = radius_cant_direction
    sign = _sign(direction)
    kappa = 0.0 if not math.isfinite(radius) else sign / radius
    # the outer rail is the right rail of a left curve: z_left - z_right = -h
    return kappa, -sign * cant
