"""Analytic definitions of the built-in wheel and rail profiles, in MILLIMETRES.

Every profile here is a piecewise curve `height(lateral)` made of named
sections (polynomials, circular arcs, straight lines) on closed intervals of the
lateral coordinate. `solver.profiles` samples these curves on a uniform grid,
converts them to metres and builds the resampling spline; nothing else in the
solver calls this module directly.

Coordinate conventions (the same as `docs/CONVENTIONS.md`, but in mm here):

- Wheel: s from the taping line (nominal rolling circle), positive towards the
  field side; F(s) = radius increase, positive = larger radius. The flange is at
  s < 0 and the flange back at s = -70 mm.
- Rail: u from the rail-head centreline, positive towards the field side (the
  gauge face is at u < 0); z(u) up positive, z = 0 at the crown. The rail is in
  its own frame (not inclined).

Sources (facts and figures only; the code is written for this project):

- S1002: EN 13715, sections A-H. The coefficients were cross-checked against a
  second published listing of the same standard (the S1002 function widely
  circulated with the DLR wheel-rail benchmark, "courtesy Dr. H. Netter").
  Neighbouring sections of the published polynomials meet to 1.2e-4 mm (worst,
  at s = -35 mm, C/D); this is the rounding of the published coefficients.
- UIC60 / 60E1: EN 13674-1 rail head: crown R300, R80, gauge corner R13 and a
  1:20 flank. Built from the radii, the R300/R80 junction half-width 20.456/2
  mm and the head width 72 mm at the top of the flank; the construction
  reproduces the published centres R80 (7.5005, 80.1279) and R13 (23.0160,
  14.9491) mm (depths below the crown) to 3e-4 mm and the R80/R13 junction
  half-width 52.053/2 mm to 3e-4 mm; the flank start comes out at depth
  14.300 mm against the published 14.304 mm (the published point has a
  tangent of 1:20.13; we keep the nominal 1:20).
- CHN60: TB/T 2344 / GB 2585 60 kg/m rail, head arcs R300/R80/R13 and head
  width 73 mm (published). The full drawing (arc junction positions) was not
  available; see `CHN60_*` below for the assumptions and the estimated deviation.
- LMA: TB/T 449 LMA tread (CRH1/CRH2). The standard's drawing was not
  available; the profile is rebuilt from its published key dimensions, see
  `LMA_*` below for what is published, what is assumed, and the estimated
  deviation.
- LMA-worn: synthetic hollow-worn LMA (raised-cosine hollow), in the spirit of
  Ren & Jin 2010, Fig. 6 (not digitised from it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.optimize import brentq

from ..errors import ProfileError


# ---------------------------------------------------------------------------
# Piecewise curves
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Section:
    """One section of a piecewise profile: `function` is valid on [lower, upper] (mm)."""

    name: str
    lower: float
    upper: float
    function: Callable[[np.ndarray], np.ndarray]
    description: str = ""

    def __call__(self, lateral_mm):
        return self.function(np.asarray(lateral_mm, dtype=float))


@dataclass(frozen=True)
class PiecewiseCurve:
    """A profile height(lateral) in mm made of contiguous sections, in increasing lateral order.

    `info` holds derived construction values (centres, junctions) for checks.
    """

    name: str
    sections: tuple[Section, ...]
    info: dict

    def __post_init__(self):
        for left, right in zip(self.sections[:-1], self.sections[1:]):
            if not math.isclose(left.upper, right.lower, abs_tol=1e-9):
                raise ProfileError(f"{self.name}: sections {left.name} and {right.name} are not contiguous")
        for sec in self.sections:
            if not sec.upper > sec.lower:
                raise ProfileError(f"{self.name}: section {sec.name} has an empty interval")

    @property
    def lateral_min(self) -> float:
        return self.sections[0].lower

    @property
    def lateral_max(self) -> float:
        return self.sections[-1].upper

    @property
    def breakpoints(self) -> list[float]:
        """The interior section junctions (mm)."""
        return [sec.upper for sec in self.sections[:-1]]

    def section_at(self, lateral_mm: float) -> Section:
        for sec in self.sections:
            if sec.lower <= lateral_mm <= sec.upper:
                return sec
        raise ProfileError(f"{self.name}: lateral {lateral_mm} mm outside "
                         f"[{self.lateral_min}, {self.lateral_max}] mm")

    def __call__(self, lateral_mm):
        x = np.asarray(lateral_mm, dtype=float)
        tol = 1e-9
        if np.any(x < self.lateral_min - tol) or np.any(x > self.lateral_max + tol):
            raise ProfileError(f"{self.name}: lateral coordinate outside "
                             f"[{self.lateral_min}, {self.lateral_max}] mm")
        out = np.empty_like(x)
        done = np.zeros(x.shape, dtype=bool)
        for sec in self.sections:
            mask = (~done) & (x <= sec.upper + tol)
            if np.any(mask):
                out[mask] = sec(x[mask])
                done |= mask
        return out if out.ndim else float(out)


def _sqrt_clipped(arg):
    """sqrt that tolerates the rounding of a published constant at a vertical tangent."""
    return np.sqrt(np.maximum(arg, 0.0))


def _arc(centre_lateral: float, centre_height: float, radius: float, upper: bool):
    """Function of the upper (centre below) or lower (centre above) half of a circle."""
    sign = 1.0 if upper else -1.0
    return lambda x: centre_height + sign * _sqrt_clipped(radius * radius - (x - centre_lateral) ** 2)


def _line(lateral0: float, height0: float, slope: float):
    return lambda x: height0 + slope * (x - lateral0)


# ---------------------------------------------------------------------------
# S1002 (EN 13715)
# ---------------------------------------------------------------------------

# Section junctions, mm, from the field side to the flange back (EN 13715).
S1002_BREAKPOINTS_MM = (60.0, 32.15796, -26.0, -35.0, -38.426669071, -39.764473993,
                        -49.662510381, -62.764705882, -70.0)

# Section A: F = AA - BA*s
_S1002_A = (1.364323640, 0.066666667)
# Section B: F = -BB*s + CB*s^2 - DB*s^3 + EB*s^4 - FB*s^5 + GB*s^6 - HB*s^7 + IB*s^8
_S1002_B = (3.358537058e-2, 1.565681624e-3, 2.810427944e-5, 5.844240864e-8,
            1.562379023e-8, 5.309217349e-15, 5.957839843e-12, 2.646656573e-13)
# Section C: F = -(AC + BC*s + CC*s^2 + ... + HC*s^7)
_S1002_C = (4320.221063, 1038.384026, 106.5501873, 6.051367875, 0.2054332446,
            4.169739389e-3, 4.687195829e-5, 2.25275554e-7)


def _s1002_a(x):
    aa, ba = _S1002_A
    return aa - ba * x


def _s1002_b(x):
    bb, cb, db, eb, fb, gb, hb, ib = _S1002_B
    # Signs alternate as in the standard; written as a polynomial in s with
    # coefficients (0, -BB, +CB, -DB, +EB, -FB, +GB, -HB, +IB).
    coefficients = (ib, -hb, gb, -fb, eb, -db, cb, -bb, 0.0)
    return np.polyval(coefficients, x)


def _s1002_c(x):
    return -np.polyval(_S1002_C[::-1], x)


def s1002_curve() -> PiecewiseCurve:
    """EN 13715 S1002 wheel tread, s in [-70, 60] mm, F(0) = 0, flange tip F(-55) = 28 mm."""
    bp = S1002_BREAKPOINTS_MM
    # (name, function, description) from the flange back (H) to the field side (A)
    parts = [
        ("H", _arc(-49.5, 9.519259302, 20.5, upper=True), "flange back, R20.5"),
        ("G", _arc(-55.0, 16.0, 12.0, upper=True), "flange tip, R12"),
        ("F", _arc(-58.558326413, 8.834924130, 20.0, upper=True), "flange flank, R20"),
        ("E", _line(0.0, -93.576667419, -2.747477419), "flange face, 70 deg"),
        ("D", _arc(-26.210665, 16.446, 13.0, upper=False), "flange root, R13"),
        ("C", _s1002_c, "flange root transition, polynomial"),
        ("B", _s1002_b, "tread, polynomial"),
        ("A", _s1002_a, "field-side chamfer, 1:15"),
    ]
    lowers = list(bp[::-1][:-1])   # -70, -62.76, ..., 32.15796
    uppers = list(bp[::-1][1:])    # -62.76, ..., 60
    sections = tuple(Section(name, lo, hi, fn, desc)
                     for (name, fn, desc), lo, hi in zip(parts, lowers, uppers))
    return PiecewiseCurve("S1002", sections, {"flange_tip_lateral_mm": -55.0})


# ---------------------------------------------------------------------------
# Rail heads from crown R300, R80, gauge corner R13 and a 1:20 flank
# ---------------------------------------------------------------------------

RAIL_CROWN_RADIUS_MM = 300.0
RAIL_SHOULDER_RADIUS_MM = 80.0
RAIL_CORNER_RADIUS_MM = 13.0
RAIL_FLANK_INCLINATION = 1.0 / 20.0   # lateral per vertical

# 60E1 (EN 13674-1): R300/R80 junctions at +-20.456/2 mm, head width 72 mm.
UIC60_CROWN_HALF_WIDTH_MM = 20.456 / 2.0
UIC60_HEAD_HALF_WIDTH_MM = 72.0 / 2.0
UIC60_FLANK_END_MM = 36.5             # |u| where the profile ends (24.3 mm below the crown)

# CHN60 (TB/T 2344 / GB 2585 60 kg/m): head arcs R300/R80/R13 and head width
# 73 mm are published. ASSUMED here (not available to us): the R300/R80
# junction at the 60E1 half-width 10.228 mm, the 1:20 flank of 60E1, and the
# 73 mm measured at the top of the flank (as the 72 mm of 60E1). The R13 centre
# then follows from the tangency with R80 and with the flank. Estimated
# deviation from the drawing (sensitivity of this construction to the assumed
# junction): exact on the R300 crown for |u| < 8 mm; if the true R300/R80
# junction lies within +-1 mm of 10.228 mm, < 0.05 mm for |u| < 15 mm,
# < 0.1 mm for |u| < 20 mm and up to 0.16 mm at the gauge corner; within
# +-2 mm: < 0.11 / 0.20 / 0.33 mm. The 1:20 flank is an assumption.
CHN60_CROWN_HALF_WIDTH_MM = UIC60_CROWN_HALF_WIDTH_MM
CHN60_HEAD_HALF_WIDTH_MM = 73.0 / 2.0
CHN60_FLANK_END_MM = 37.0             # |u| where the profile ends (24.4 mm below the crown)


def rail_head_60_curve(name: str, crown_half_width_mm: float, head_half_width_mm: float,
                       flank_end_mm: float, crown_radius_mm: float = RAIL_CROWN_RADIUS_MM,
                       shoulder_radius_mm: float = RAIL_SHOULDER_RADIUS_MM,
                       corner_radius_mm: float = RAIL_CORNER_RADIUS_MM,
                       flank_inclination: float = RAIL_FLANK_INCLINATION) -> PiecewiseCurve:
    """Symmetric rail head: crown arc, shoulder arcs, gauge-corner arcs and flanks, all tangent.

    The crown arc (centre on the centreline) meets the shoulder arc at
    |u| = crown_half_width_mm; the corner arc is internally tangent to the
    shoulder arc and tangent to the flank, which starts at |u| = head_half_width_mm
    and widens downwards by `flank_inclination` (lateral per vertical). The
    profile ends at |u| = flank_end_mm on both sides.
    Heights z up, 0 at the crown (mm).
    """
    r1, r2, r3 = crown_radius_mm, shoulder_radius_mm, corner_radius_mm
    c1 = np.array([0.0, -r1])
    # crown/shoulder junction and shoulder centre on the line of centres
    a1 = crown_half_width_mm
    j1 = np.array([a1, -r1 + math.sqrt(r1 * r1 - a1 * a1)])
    normal1 = (j1 - c1) / r1
    c2 = j1 - r2 * normal1
    # corner centre: tangent to the flank at its top (|u| = head half width)
    beta = math.atan(flank_inclination)          # flank normal tilt above horizontal
    w = head_half_width_mm
    u3 = w - r3 * math.cos(beta)
    dist23 = r2 - r3
    du = u3 - c2[0]
    if abs(du) >= dist23:
        raise ProfileError(f"{name}: corner arc cannot be tangent to the shoulder arc")
    c3 = np.array([u3, c2[1] + math.sqrt(dist23 * dist23 - du * du)])
    j2 = c2 + r2 * (c3 - c2) / dist23
    flank_top = c3 + r3 * np.array([math.cos(beta), math.sin(beta)])
    flank_slope = -1.0 / flank_inclination       # dz/du on the field side (u > 0)
    u_end = float(flank_end_mm)
    if not (0.0 < a1 < j2[0] < w < u_end):
        raise ProfileError(f"{name}: arc junctions out of order")

    crown = _arc(0.0, c1[1], r1, upper=True)
    shoulder = _arc(c2[0], c2[1], r2, upper=True)
    corner = _arc(c3[0], c3[1], r3, upper=True)
    flank = _line(w, flank_top[1], flank_slope)

    def mirrored(fn):
        return lambda x: fn(-x)

    sections = (
        Section("flank (gauge side)", -u_end, -w, mirrored(flank), "1:20 flank"),
        Section("R13 (gauge side)", -w, -j2[0], mirrored(corner), "gauge corner"),
        Section("R80 (gauge side)", -j2[0], -a1, mirrored(shoulder), "shoulder"),
        Section("R300", -a1, a1, crown, "crown"),
        Section("R80 (field side)", a1, j2[0], shoulder, "shoulder"),
        Section("R13 (field side)", j2[0], w, corner, "corner"),
        Section("flank (field side)", w, u_end, flank, "1:20 flank"),
    )
    info = {
        # centres as (lateral, depth below the crown), as drawings give them
        "crown_centre_mm": (0.0, -c1[1]),
        "shoulder_centre_mm": (float(c2[0]), float(-c2[1])),
        "corner_centre_mm": (float(c3[0]), float(-c3[1])),
        "crown_shoulder_junction_mm": float(a1),
        "shoulder_corner_junction_mm": float(j2[0]),
        "flank_top_mm": (float(flank_top[0]), float(-flank_top[1])),
        "head_width_mm": 2.0 * w,
        "radii_mm": (r1, r2, r3),
        "flank_end_depth_mm": float(-(flank_top[1] + flank_slope * (u_end - w))),
    }
    return PiecewiseCurve(name, sections, info)


def uic60_curve() -> PiecewiseCurve:
    """EN 13674-1 60E1 (UIC60) rail head."""
    return rail_head_60_curve("UIC60", UIC60_CROWN_HALF_WIDTH_MM, UIC60_HEAD_HALF_WIDTH_MM,
                              UIC60_FLANK_END_MM)


def chn60_curve() -> PiecewiseCurve:
    """Chinese 60 kg/m rail head (TB/T 2344 / GB 2585) from published dimensions (see CHN60_*)."""
    return rail_head_60_curve("CHN60", CHN60_CROWN_HALF_WIDTH_MM, CHN60_HEAD_HALF_WIDTH_MM,
                              CHN60_FLANK_END_MM)


# ---------------------------------------------------------------------------
# LMA (TB/T 449) from the published geometry
# ---------------------------------------------------------------------------

# The LMA wheel as a tangent chain of arcs and lines, s from the taping line
# (mm, + field side), F = radius increase (mm). The chain is the geometry of
# the public coordinate table "LMA of CRH2/CRH380A/CR400AF" (repository
# Legend19960404/Wheel-Rail-Interaction-Dataset, standard_profiles/LMA.txt,
# 1358 points; no licence stated, so the project carries the geometry, not the
# file): every point of that table lies on this chain within 6e-7 mm, and the
# table lists the chain's own junctions (-62.307692, -52.557372, -40.265268,
# -38.053345, -28.4709, -10.75, 4.253514, 30, 60) as points.
# Defining dimensions (the construction below derives every centre from them):
LMA_FLANGE_BACK_MM = 70.0               # flange back (vertical tangent) at s = -70 mm
LMA_BACK_RADIUS_MM = 25.0               # convex flange back arc
LMA_TIP_RADIUS_MM = 12.0                # convex flange tip arc ...
LMA_TIP_CENTRE_MM = (-54.0, 16.0)       # ... centred here: flange height 28 mm at s = -54 mm
LMA_FLANGE_HEIGHT_MM = 28.0
LMA_FLANK_RADIUS_MM = 15.0              # convex arc between the tip and the flange face
LMA_FLANGE_ANGLE_DEG = 70.0             # straight flange face
LMA_ROOT_RADIUS_MM = 14.0               # concave flange root arc, through ...
LMA_FLANGE_THICKNESS_MM = 32.9          # ... the flange thickness point: 32.9 mm from the back
LMA_FLANGE_THICKNESS_HEIGHT_MM = 10.0   # ... at 10 mm above the taping line (s = -37.1, F = 10)
LMA_THROAT_RADIUS_MM = 90.0             # concave arc centred at s = ...
LMA_THROAT_CENTRE_S_MM = -5.5
LMA_TREAD_RADIUS_MM = 450.0             # concave tread arc centred at s = ..., through (0, 0)
LMA_TREAD_CENTRE_S_MM = 15.5
LMA_TREAD_SLOPE = 1.0 / 40.0            # 1:40 cone from the R450 tangent point to ...
LMA_TREAD_CONE_END_MM = 30.0            # ... s = 30 mm (a corner: no transition arc)
LMA_FIELD_SLOPE = 1.0 / 15.0            # 1:15 cone to ...
LMA_FIELD_CONE_END_MM = 60.0            # ... s = 60 mm (a corner)
LMA_CHAMFER_SLOPE = 1.0                 # 45 deg chamfer to ...
LMA_FIELD_END_MM = 65.0                 # ... the field-side face at s = +65 mm (rim width 135 mm)


def _arc_point_at_slope(centre, radius: float, concave: bool, slope: float) -> np.ndarray:
    """Point of the arc (lower half if concave, upper if convex) where dF/ds = slope."""
    sign = 1.0 if concave else -1.0
    # F = Fc - sign*sqrt(R^2 - (s-sc)^2); F' = sign*(s-sc)/sqrt(...)
    ds = sign * slope * radius / math.hypot(slope, 1.0)
    dh = -sign * radius / math.hypot(slope, 1.0)
    return np.array([centre[0] + ds, centre[1] + dh])


def _line_circle_centre(normal, offset: float, point, distance: float, pick: float):
    """Centre on the line {c: normal . c = offset} (unit normal) at `distance`
    from `point`; of the two solutions the one with the larger (pick = +1) or
    smaller (-1) coordinate along the line direction (-normal[1], normal[0])."""
    n = np.asarray(normal, dtype=float)
    p = np.asarray(point, dtype=float)
    t = np.array([-n[1], n[0]])
    foot = p + (offset - n @ p) * n
    h2 = distance * distance - float((foot - p) @ (foot - p))
    if h2 < 0.0:
        raise ProfileError("LMA: construction has no solution (a circle misses a line)")
    return foot + pick * math.sqrt(h2) * t


def _lma_construction() -> dict:
    """Centres and junctions of the LMA chain (mm) from the defining dimensions.

    Closed-form arcs: R25 (vertical at the flange back, internally tangent to
    R12), R450 (centred at s = 15.5 mm, through the taping-line origin), R90
    (centred at s = -5.5 mm, internally tangent to R450), the 1:40 line tangent
    to R450. The flange face offset b (F = b - tan(70 deg) s) is the one root
    left: R15 is internally tangent to R12 and tangent to the face below it,
    R14 tangent to the face above it and internally tangent to R90, and R14
    must pass through the flange thickness point.
    """
    tip = np.array(LMA_TIP_CENTRE_MM)
    r_back, r_tip, r_flank = LMA_BACK_RADIUS_MM, LMA_TIP_RADIUS_MM, LMA_FLANK_RADIUS_MM
    r_root, r_throat, r_tread = LMA_ROOT_RADIUS_MM, LMA_THROAT_RADIUS_MM, LMA_TREAD_RADIUS_MM
    back_s = -LMA_FLANGE_BACK_MM + r_back
    c_back = np.array([back_s, tip[1] - math.sqrt((r_back - r_tip) ** 2 - (back_s - tip[0]) ** 2)])
    c_tread = np.array([LMA_TREAD_CENTRE_S_MM, math.sqrt(r_tread ** 2 - LMA_TREAD_CENTRE_S_MM ** 2)])
    ds = LMA_THROAT_CENTRE_S_MM - c_tread[0]
    c_throat = np.array([LMA_THROAT_CENTRE_S_MM,
                         c_tread[1] - math.sqrt((r_tread - r_throat) ** 2 - ds * ds)])
    m = math.tan(math.radians(LMA_FLANGE_ANGLE_DEG))     # F = b - m s on the face
    n_face = np.array([m, 1.0]) / math.hypot(m, 1.0)     # upward unit normal of the face
    thickness_point = np.array([-LMA_FLANGE_BACK_MM + LMA_FLANGE_THICKNESS_MM,
                                LMA_FLANGE_THICKNESS_HEIGHT_MM])

    def centres(b):
        offset = b / math.hypot(m, 1.0)                  # n_face . (s, F) = offset on the face
        c_flank = _line_circle_centre(n_face, offset - r_flank, tip, r_flank - r_tip, -1.0)
        c_root = _line_circle_centre(n_face, offset + r_root, c_throat, r_throat - r_root, -1.0)
        return c_flank, c_root

    def miss(b):
        _, c_root = centres(b)
        return float(np.hypot(*(thickness_point - c_root)) - r_root)

    b = brentq(miss, -95.0, -90.0, xtol=1e-13)
    c_flank, c_root = centres(b)
    d = (c_flank - tip) / np.linalg.norm(c_flank - tip)
    tip_flank = tip - r_tip * d
    back_tip = c_back + r_back * (tip - c_back) / (r_back - r_tip)
    face_top = c_flank + r_flank * n_face
    face_bottom = c_root - r_root * n_face
    root_throat = c_throat + r_throat * (c_root - c_throat) / (r_throat - r_root)
    throat_tread = c_tread + r_tread * (c_throat - c_tread) / (r_tread - r_throat)
    tread_cone = _arc_point_at_slope(c_tread, r_tread, True, -LMA_TREAD_SLOPE)
    cone_end = np.array([LMA_TREAD_CONE_END_MM,
                         tread_cone[1] - LMA_TREAD_SLOPE * (LMA_TREAD_CONE_END_MM - tread_cone[0])])
    field_end = np.array([LMA_FIELD_CONE_END_MM,
                          cone_end[1] - LMA_FIELD_SLOPE * (LMA_FIELD_CONE_END_MM - LMA_TREAD_CONE_END_MM)])
    if not (-LMA_FLANGE_BACK_MM < back_tip[0] < tip[0] < tip_flank[0] < face_top[0] < face_bottom[0]
            < thickness_point[0] < root_throat[0] < throat_tread[0] < 0.0 < tread_cone[0]
            < LMA_TREAD_CONE_END_MM < LMA_FIELD_CONE_END_MM < LMA_FIELD_END_MM):
        raise ProfileError("LMA: construction junctions out of order")
    return {
        "face_slope": -m, "face_offset": b,
        "back_centre": c_back, "tip_centre": tip, "flank_centre": c_flank, "root_centre": c_root,
        "throat_centre": c_throat, "tread_centre": c_tread,
        "back_tip_junction": back_tip, "tip_flank_junction": tip_flank, "face_top": face_top,
        "face_bottom": face_bottom, "root_throat_junction": root_throat,
        "throat_tread_junction": throat_tread, "tread_cone_junction": tread_cone,
        "cone_end": cone_end, "field_cone_end": field_end,
    }


def lma_curve() -> PiecewiseCurve:
    """LMA wheel (TB/T 449) from the published geometry, s in [-70, 65] mm (see LMA_*)."""
    g = _lma_construction()
    c_back, c_tip, c_flank = g["back_centre"], g["tip_centre"], g["flank_centre"]
    c_root, c_throat, c_tread = g["root_centre"], g["throat_centre"], g["tread_centre"]
    p_cone, p_end, p_field = g["tread_cone_junction"], g["cone_end"], g["field_cone_end"]
    sections = (
        Section("flange back R25", -LMA_FLANGE_BACK_MM, g["back_tip_junction"][0],
                _arc(c_back[0], c_back[1], LMA_BACK_RADIUS_MM, upper=True)),
        Section("flange tip R12", g["back_tip_junction"][0], g["tip_flank_junction"][0],
                _arc(c_tip[0], c_tip[1], LMA_TIP_RADIUS_MM, upper=True)),
        Section("flange flank R15", g["tip_flank_junction"][0], g["face_top"][0],
                _arc(c_flank[0], c_flank[1], LMA_FLANK_RADIUS_MM, upper=True)),
        Section("flange face 70 deg", g["face_top"][0], g["face_bottom"][0],
                _line(0.0, g["face_offset"], g["face_slope"])),
        Section("flange root R14", g["face_bottom"][0], g["root_throat_junction"][0],
                _arc(c_root[0], c_root[1], LMA_ROOT_RADIUS_MM, upper=False)),
        Section("throat R90", g["root_throat_junction"][0], g["throat_tread_junction"][0],
                _arc(c_throat[0], c_throat[1], LMA_THROAT_RADIUS_MM, upper=False)),
        Section("tread R450", g["throat_tread_junction"][0], p_cone[0],
                _arc(c_tread[0], c_tread[1], LMA_TREAD_RADIUS_MM, upper=False)),
        Section("tread cone 1:40", p_cone[0], LMA_TREAD_CONE_END_MM,
                _line(p_cone[0], p_cone[1], -LMA_TREAD_SLOPE)),
        Section("field cone 1:15", LMA_TREAD_CONE_END_MM, LMA_FIELD_CONE_END_MM,
                _line(p_end[0], p_end[1], -LMA_FIELD_SLOPE)),
        Section("chamfer 45 deg", LMA_FIELD_CONE_END_MM, LMA_FIELD_END_MM,
                _line(p_field[0], p_field[1], -LMA_CHAMFER_SLOPE)),
    )
    info = {key: (tuple(float(v) for v in val) if isinstance(val, np.ndarray) else float(val))
            for key, val in g.items()}
    info["flange_tip_lateral_mm"] = float(c_tip[0])
    # slope discontinuities of the published geometry (s, mm): the resampling
    # spline is broken there instead of rounding them off
    info["corners_mm"] = (LMA_TREAD_CONE_END_MM, LMA_FIELD_CONE_END_MM)
    return PiecewiseCurve("LMA", sections, info)


# ---------------------------------------------------------------------------
# LMA-worn: synthetic hollow wear
# ---------------------------------------------------------------------------

# Raised-cosine hollow subtracted from LMA (hollow wear as in Ren & Jin 2010,
# Fig. 6; the parameters are ours). The hollow is worn where the wheel runs:
# with the wheelset centred on CHN60 at 1:40 (gauge 1435 mm at 14 mm below the
# top, back-to-back 1353 mm) the taping line lies at 1353/2 + 70 = 746.5 mm and
# the CHN60 head centre at 753.5 mm, so the rail crown runs under s = +7 mm;
# the hollow is centred at s = +6 mm (1 mm deep, 45 mm wide).
LMA_WORN_HOLLOW_DEPTH_MM = 1.0
LMA_WORN_HOLLOW_WIDTH_MM = 45.0
LMA_WORN_HOLLOW_CENTRE_MM = 6.0


def hollow_depth_mm(lateral_mm, depth_mm: float, width_mm: float, centre_mm: float):
    """Raised-cosine hollow: depth_mm at centre_mm, zero (with zero slope) at +-width_mm/2."""
    x = (np.asarray(lateral_mm, dtype=float) - centre_mm) / width_mm
    return np.where(np.abs(x) < 0.5, 0.5 * depth_mm * (1.0 + np.cos(2.0 * np.pi * x)), 0.0)


def lma_worn_curve(depth_mm: float | None = None, width_mm: float | None = None,
                   centre_mm: float | None = None) -> PiecewiseCurve:
    """LMA minus a raised-cosine hollow (defaults: the LMA_WORN_HOLLOW_* constants)."""
    depth = LMA_WORN_HOLLOW_DEPTH_MM if depth_mm is None else float(depth_mm)
    width = LMA_WORN_HOLLOW_WIDTH_MM if width_mm is None else float(width_mm)
    centre = LMA_WORN_HOLLOW_CENTRE_MM if centre_mm is None else float(centre_mm)
    if not (np.isfinite(depth) and np.isfinite(width) and np.isfinite(centre)) or depth < 0 or width <= 0:
        raise ProfileError(f"hollow depth {depth} mm, width {width} mm: need depth >= 0, width > 0")
    base = lma_curve()
    lo, hi = centre - width / 2.0, centre + width / 2.0
    if lo < base.info["face_bottom"][0] or hi > LMA_FIELD_END_MM:
        raise ProfileError(f"hollow [{lo}, {hi}] mm reaches the flange face or beyond the field side")
    sections = tuple(
        Section(sec.name, sec.lower, sec.upper,
                (lambda fn: (lambda x: fn(x) - hollow_depth_mm(x, depth, width, centre)))(sec.function),
                sec.description)
        for sec in base.sections)
    info = dict(base.info, hollow_depth_mm=depth, hollow_width_mm=width, hollow_centre_mm=centre)
    return PiecewiseCurve("LMA-worn", sections, info)
