"""The built-in tracks of the scenarios (Ren & Jin R400, Kang R320, straight)."""

from __future__ import annotations

import math

from ..registry import Entry, Registry
from .alignment import Track
from .sections import DEFAULT_RAIL_DISTANCE, TrackError, TrackSection, check_direction


# --------------------------------------------------------------------------
# built-in scenarios
# --------------------------------------------------------------------------
def _ren_jin_r400(direction, rail_distance):
    # Ren & Jin 2010 run a wheelset (LMA on CHN60) into an R = 400 m curve at
    # 100 and 80 km/h. The paper's curve is the data; lead-in, transition length
    # and cant are chosen here: 120 mm cant (on Chinese mixed lines the cant of a
    # 400 m curve is set from the mean speed and capped at 150 mm; 120 mm gives
    # equilibrium at 23 m/s = 82 km/h with 1.5 m rail distance, and at 100 km/h a
    # cant deficiency of ~175 mm, so the flange works, which is the paper's
    # point); 100 m transition (ramp 1.2 mm/m = 1:833, cant rate 33 mm/s at
    # 100 km/h, within the ~ 1:(9 v_max) ramp rule of Chinese practice); 100 m
    # straight lead-in and 300 m of circular curve (~11 s at 100 km/h).
    return Track.from_sections(
        [TrackSection("straight", 100.0),
         TrackSection("transition", 100.0),
         TrackSection("curve", 300.0, radius=400.0, cant=0.120, direction=direction)],
        rail_distance=rail_distance, direction=direction, name="ren-jin-r400",
        description="Ren & Jin 2010: 100 m straight, 100 m clothoid, R = 400 m curve, "
                    "cant 120 mm (lengths and cant chosen here)")


def _kang_r320(direction, rail_distance):
    # Kang 2012: R = [inf, inf, 320, 320, 320] m at five stations (the paper
    # writes 0 for straight). Stations chosen here every 100 m: straight 0-100 m,
    # clothoid 100-200 m, R = 320 m curve 200-400 m. Cant 120 mm on the curve
    # (equilibrium 57 km/h; 80 km/h with ~110 mm deficiency), ramped linearly
    # over the same 100 m as the curvature.
    return Track.from_stations(
        [0.0, 100.0, 200.0, 300.0, 400.0],
        [math.inf, math.inf, 320.0, 320.0, 320.0],
        [0.0, 0.0, 0.120, 0.120, 0.120],
        direction=direction, rail_distance=rail_distance, name="kang-r320",
        description="Kang 2012: stations 0/100/200/300/400 m, R = inf/inf/320/320/320 m, "
                    "cant 0/0/120/120/120 mm (spacing and cant chosen here)")


def _straight(direction, rail_distance):
    return Track.from_sections([TrackSection("straight", 1000.0)],
                               rail_distance=rail_distance, name="straight",
                               description="straight, no cant (continues beyond 1000 m)")


# the built-in tracks by name (solver.registry): the FMU's track.scenario names
TRACKS = Registry("built-in track", error=TrackError)
TRACKS.register(Entry("ren-jin-r400", "Ren & Jin 2010: 100 m straight, 100 m transition, R 400 m "
                      "curve with 120 mm cant", builder=_ren_jin_r400,
                      source="Ren & Jin (2010), Vehicle System Dynamics 48(suppl.), 173-189"))
TRACKS.register(Entry("kang-r320", "Kang 2012: R = inf/inf/320/320/320 m at stations 0-400 m, "
                      "120 mm cant", builder=_kang_r320,
                      source="Kang (2012), Vehicle System Dynamics 50(7)"))
TRACKS.register(Entry("straight", "straight, no cant", builder=_straight))


def builtin_track(name: str, *, direction: str = "left",
                  rail_distance: float = DEFAULT_RAIL_DISTANCE) -> Track:
    """Built-in scenario by name: 'ren-jin-r400', 'kang-r320', 'straight';
    ``direction`` 'left' (default) or 'right' chooses the side of the curve."""
    if not isinstance(name, str) or name not in TRACKS.names():
        raise TrackError(f"unknown built-in track {name!r} (known: {sorted(TRACKS.names())})")
    return TRACKS.get(name).builder(check_direction(direction, "direction"), rail_distance)
