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

from .errors import ProfileError
from scipy.optimize import brentq

__all__ = [
    "Section", "PiecewiseCurve",
    "s1002_curve", "rail_head_60_curve", "uic60_curve", "chn60_curve",
    "lma_curve", "lma_worn_curve", "hollow_depth_mm",
    "S1002_BREAKPOINTS_MM", "LMA_WORN_HOLLOW_DEPTH_MM", "LMA_WORN_HOLLOW_WIDTH_MM",
    "LMA_WORN_HOLLOW_CENTRE_MM",
]


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
# LMA (TB/T 449) rebuilt from its published key dimensions
# ---------------------------------------------------------------------------

# Published (TB/T 449; Chinese literature on CRH wheel profiles): flange back
# 70 mm from the taping line, flange height 28 mm above the taping line,
# flange thickness 32 mm, flange angle 70 deg, rim width 135 mm (field side end
# at s = +65 mm), tread taper about 1:40 from 0 to 30 mm, then steeper (about
# 1:15) to the field side. The tread is a "worn-type" arc profile.
LMA_FLANGE_BACK_MM = 70.0
LMA_FLANGE_HEIGHT_MM = 28.0
LMA_FLANGE_THICKNESS_MM = 32.0
LMA_FLANGE_ANGLE_DEG = 70.0
LMA_FIELD_END_MM = 65.0
LMA_TREAD_SLOPE = 1.0 / 40.0
LMA_FIELD_SLOPE = 1.0 / 15.0
LMA_TREAD_CONE_END_MM = 30.0
# ASSUMED (the drawing was not available to us), chosen after the usual
# construction of the LM family and of S1002:
LMA_FLANGE_THICKNESS_HEIGHT_MM = 10.0   # thickness measured 10 mm above the taping line (EN 15313 practice)
LMA_FIELD_RADIUS_MM = 220.0             # convex arc between the 1:40 cone and the 1:15 cone
LMA_TREAD_RADIUS_MM = 500.0             # concave arc on the flange side of the taping line ...
LMA_TREAD_ARC_WIDTH_MM = 10.0           # ... over this width
LMA_ROOT_TRANSITION_RADIUS_MM = 100.0   # concave arc from the tread into the flange root
LMA_ROOT_RADIUS_MM = 15.0               # concave flange-root arc
LMA_TIP_RADIUS_MM = 12.0                # convex flange-tip arc
LMA_BACK_RADIUS_MM = 20.0               # convex flange-back arc, vertical at s = -70 mm
# Estimated deviation from the TB/T 449 drawing: the published dimensions above
# are met exactly; between them the shape is a reconstruction: < ~0.2 mm on
# the tread within -10 < s < 30 mm, up to ~0.5 mm in the flange root and tip
# and on the field-side chamfer. Use a measured or standard file
# (load_profile) where this matters.


def _upper_normal(slope: float) -> np.ndarray:
    return np.array([-slope, 1.0]) / math.hypot(slope, 1.0)


def _tangent_arc(point, slope: float, radius: float, concave: bool):
    """Centre of the arc through `point` with `slope` there; concave = centre above."""
    sign = 1.0 if concave else -1.0
    return np.asarray(point, dtype=float) + sign * radius * _upper_normal(slope)


def _arc_point_at_slope(centre, radius: float, concave: bool, slope: float) -> np.ndarray:
    """Point of the arc (lower half if concave, upper if convex) where dF/ds = slope."""
    sign = 1.0 if concave else -1.0
    # F = Fc - sign*sqrt(R^2 - (s-sc)^2); F' = sign*(s-sc)/sqrt(...)
    ds = sign * slope * radius / math.hypot(slope, 1.0)
    dh = -sign * radius / math.hypot(slope, 1.0)
    return np.array([centre[0] + ds, centre[1] + dh])


def _lma_construction(flange_thickness_height_mm: float = LMA_FLANGE_THICKNESS_HEIGHT_MM) -> dict:
    """Tangent chain of the LMA profile; returns centres and junctions (mm)."""
    face_slope = -math.tan(math.radians(LMA_FLANGE_ANGLE_DEG))   # dF/ds on the flange face
    t40 = -LMA_TREAD_SLOPE
    # Concave R500 from the taping line towards the flange over LMA_TREAD_ARC_WIDTH_MM.
    c_tread = _tangent_arc((0.0, 0.0), t40, LMA_TREAD_RADIUS_MM, concave=True)
    s1 = -LMA_TREAD_ARC_WIDTH_MM
    f1 = c_tread[1] - math.sqrt(LMA_TREAD_RADIUS_MM ** 2 - (s1 - c_tread[0]) ** 2)
    m1 = (s1 - c_tread[0]) / math.sqrt(LMA_TREAD_RADIUS_MM ** 2 - (s1 - c_tread[0]) ** 2)
    c_trans = _tangent_arc((s1, f1), m1, LMA_ROOT_TRANSITION_RADIUS_MM, concave=True)

    def chain(m2):
        p2 = _arc_point_at_slope(c_trans, LMA_ROOT_TRANSITION_RADIUS_MM, True, m2)
        c_root = _tangent_arc(p2, m2, LMA_ROOT_RADIUS_MM, concave=True)
        p3 = _arc_point_at_slope(c_root, LMA_ROOT_RADIUS_MM, True, face_slope)
        return p2, c_root, p3

    h = flange_thickness_height_mm
    s_target = -(LMA_FLANGE_BACK_MM - LMA_FLANGE_THICKNESS_MM)

    def lateral_at_height(m2):
        p2, c_root, p3 = chain(m2)
        if h >= p3[1]:
            return p3[0] + (h - p3[1]) / face_slope
        if h >= p2[1]:
            return c_root[0] - math.sqrt(max(LMA_ROOT_RADIUS_MM ** 2 - (h - c_root[1]) ** 2, 0.0))
        return c_trans[0] - math.sqrt(max(LMA_ROOT_TRANSITION_RADIUS_MM ** 2 - (h - c_trans[1]) ** 2, 0.0))

    # m2 (slope where the root arc starts) between the tread slope and ~ -0.45
    m2 = brentq(lambda m: lateral_at_height(m) - s_target, m1 - 1e-9, -0.45, xtol=1e-14)
    p2, c_root, p3 = chain(m2)
    # Flange tip: convex circle, apex at the flange height, tangent to the face line.
    tip_c_h = LMA_FLANGE_HEIGHT_MM - LMA_TIP_RADIUS_MM
    n_face = _upper_normal(face_slope)
    q_h = tip_c_h + LMA_TIP_RADIUS_MM * n_face[1]
    q = np.array([p3[0] + (q_h - p3[1]) / face_slope, q_h])   # face/tip tangency
    c_tip = q - LMA_TIP_RADIUS_MM * n_face
    # Flange back: convex circle with its vertical tangent at s = -70, internally
    # tangent to the tip circle.
    back_c_s = -LMA_FLANGE_BACK_MM + LMA_BACK_RADIUS_MM
    d = LMA_BACK_RADIUS_MM - LMA_TIP_RADIUS_MM
    if abs(c_tip[0] - back_c_s) >= d:
        raise ProfileError("LMA: flange back arc cannot reach the tip arc")
    c_back = np.array([back_c_s, c_tip[1] - math.sqrt(d * d - (c_tip[0] - back_c_s) ** 2)])
    j_tb = c_tip + LMA_TIP_RADIUS_MM * (c_tip - c_back) / d
    # Field side: 1:40 cone to 30 mm, convex R220, then the 1:15 cone.
    p_cone = np.array([LMA_TREAD_CONE_END_MM, -LMA_TREAD_SLOPE * LMA_TREAD_CONE_END_MM])
    c_field = _tangent_arc(p_cone, -LMA_TREAD_SLOPE, LMA_FIELD_RADIUS_MM, concave=False)
    p_field = _arc_point_at_slope(c_field, LMA_FIELD_RADIUS_MM, False, -LMA_FIELD_SLOPE)
    if not (-LMA_FLANGE_BACK_MM < j_tb[0] < q[0] < p3[0] < p2[0] < s1 < 0.0
            < LMA_TREAD_CONE_END_MM < p_field[0] < LMA_FIELD_END_MM):
        raise ProfileError("LMA: construction junctions out of order")
    return {
        "face_slope": face_slope,
        "tread_centre": c_tread, "tread_end": np.array([s1, f1]),
        "transition_centre": c_trans, "root_start": p2, "root_start_slope": m2,
        "root_centre": c_root, "face_start": p3, "face_end": q,
        "tip_centre": c_tip, "back_centre": c_back, "tip_back_junction": j_tb,
        "cone_end": p_cone, "field_centre": c_field, "field_arc_end": p_field,
    }


def lma_curve() -> PiecewiseCurve:
    """LMA wheel tread (TB/T 449) rebuilt from published dimensions, s in [-70, 65] mm."""
    g = _lma_construction()
    c_back, c_tip, c_root = g["back_centre"], g["tip_centre"], g["root_centre"]
    c_trans, c_tread, c_field = g["transition_centre"], g["tread_centre"], g["field_centre"]
    p3, q = g["face_start"], g["face_end"]
    sections = (
        Section("flange back R20", -LMA_FLANGE_BACK_MM, g["tip_back_junction"][0],
                _arc(c_back[0], c_back[1], LMA_BACK_RADIUS_MM, upper=True)),
        Section("flange tip R12", g["tip_back_junction"][0], q[0],
                _arc(c_tip[0], c_tip[1], LMA_TIP_RADIUS_MM, upper=True)),
        Section("flange face 70 deg", q[0], p3[0], _line(p3[0], p3[1], g["face_slope"])),
        Section("flange root R15", p3[0], g["root_start"][0],
                _arc(c_root[0], c_root[1], LMA_ROOT_RADIUS_MM, upper=False)),
        Section("root transition R100", g["root_start"][0], g["tread_end"][0],
                _arc(c_trans[0], c_trans[1], LMA_ROOT_TRANSITION_RADIUS_MM, upper=False)),
        Section("tread R500", g["tread_end"][0], 0.0,
                _arc(c_tread[0], c_tread[1], LMA_TREAD_RADIUS_MM, upper=False)),
        Section("tread cone 1:40", 0.0, LMA_TREAD_CONE_END_MM, _line(0.0, 0.0, -LMA_TREAD_SLOPE)),
        Section("field arc R220", LMA_TREAD_CONE_END_MM, g["field_arc_end"][0],
                _arc(c_field[0], c_field[1], LMA_FIELD_RADIUS_MM, upper=True)),
        Section("field cone 1:15", g["field_arc_end"][0], LMA_FIELD_END_MM,
                _line(g["field_arc_end"][0], g["field_arc_end"][1], -LMA_FIELD_SLOPE)),
    )
    info = {key: (tuple(float(v) for v in val) if isinstance(val, np.ndarray) else float(val))
            for key, val in g.items()}
    info["flange_tip_lateral_mm"] = float(c_tip[0])
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
    if lo < base.info["face_start"][0] or hi > LMA_FIELD_END_MM:
        raise ProfileError(f"hollow [{lo}, {hi}] mm reaches the flange face or beyond the field side")
    sections = tuple(
        Section(sec.name, sec.lower, sec.upper,
                (lambda fn: (lambda x: fn(x) - hollow_depth_mm(x, depth, width, centre)))(sec.function),
                sec.description)
        for sec in base.sections)
    info = dict(base.info, hollow_depth_mm=depth, hollow_width_mm=width, hollow_centre_mm=centre)
    return PiecewiseCurve("LMA-worn", sections, info)
