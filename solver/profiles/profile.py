"""Wheel and rail profiles: the Profile object and its resampling onto a uniform grid."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from scipy.interpolate import (
    Akima1DInterpolator, CubicSpline, PPoly, PchipInterpolator,
)

from ..errors import ProfileError


WHEEL = "wheel"
RAIL = "rail"
KINDS = (WHEEL, RAIL)
DEFAULT_STEP = 1e-4                  # m (0.1 mm)
MIN_POINTS = 10                      # fewest points a profile file may have
RESAMPLING_METHODS = ("auto", "smoothing", "cubic", "akima", "pchip")
# The smoothing spline of measured or tabulated profiles (method "smoothing", and
# "auto", the reading of profile files): Reinsch's smoothing spline (Reinsch
# 1967; scipy's make_smoothing_spline), weighted so that it filters the profile
# like 1 / (1 + (k length)^4) in the wavenumber k along the arc, the same on the
# tread and on the flange (`_geometric_smoothing_spline`): features shorter
# than 2 pi length are halved. CONTACT and SIMPACK smooth profile files the same
# way (a smoothing spline with a stated parameter). Measured on the published
# LMA table (the chain of arcs and lines at 0.1 mm, tests/test_profiles.py): at
# 0.2 mm the spline stays within 0.53 um (normal) of the exact chain (the most
# at the flange root, where the curvature jumps by 71 1/m), and at the tread's
# R450 / 1:40 junction its curvature overshoots the true -2.22 1/m by 3.5 %
# (-2.30), where a cubic spline through the points overshoots by 11 % (-2.47)
# and Akima's interpolation by 56 % (-3.46), its curvature jumping at every
# point as well. The spline is broken at corners (slope discontinuities:
# declared, or found by `find_corners`), each stretch pinned at its ends.
DEFAULT_SMOOTHING_LENGTH = 0.2e-3    # m
_PIN_WEIGHT = 1e8                    # the weight of a stretch's end points (pinned)
_STEEP_WEIGHT = 1e6                  # the largest weight of an inner point (a near-vertical flank)
# Corner detection for method="auto": a vertex of the input polyline whose
# turning angle is at least CORNER_MIN_TURN_RAD and at least
# CORNER_ISOLATION_RATIO times the turning at each neighbouring vertex (a
# smooth curve, however tight, turns by similar amounts at neighbouring points).
CORNER_MIN_TURN_RAD = math.radians(2.0)
CORNER_ISOLATION_RATIO = 4.0
# A file whose lateral span is below this (in the file's unit) is taken to be
# written in metres instead of millimetres.
MIN_LATERAL_SPAN_MM = 1.0


# ---------------------------------------------------------------------------
# Profile
# ---------------------------------------------------------------------------

def _read_only(array) -> np.ndarray:
    out = np.array(array, dtype=float, copy=True)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class Profile:
    """A wheel or rail profile on a uniform grid (SI units: m, rad).

    `lateral` (m, increasing, uniform `step`), `height` (m), `slope` (-) and
    `second_derivative` (1/m) on the grid; `flange_back_to_taping_line` (m) for
    wheels (None for rails); `method` is the resampling spline type, `spline`
    the spline itself (scipy PPoly: `spline(u, nu)`), from which the `*_at`
    methods evaluate; `corners` (m) the declared slope discontinuities at which
    a cubic spline is broken (LMA: 1:40 -> 1:15 and 1:15 -> 45 deg).
    """

    name: str
    kind: str
    source: str
    lateral: np.ndarray
    height: np.ndarray
    step: float
    slope: np.ndarray
    second_derivative: np.ndarray
    flange_back_to_taping_line: float | None = None
    method: str = "cubic"
    spline: object = field(default=None, compare=False, repr=False)
    corners: tuple = ()

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ProfileError(f"profile {self.name!r}: kind must be 'wheel' or 'rail', got {self.kind!r}")
        lateral = _read_only(self.lateral)
        arrays = {"height": self.height, "slope": self.slope, "second_derivative": self.second_derivative}
        if lateral.ndim != 1 or lateral.size < 4:
            raise ProfileError(f"profile {self.name!r}: lateral must be a 1-D array of at least 4 points")
        if not np.all(np.isfinite(lateral)):
            raise ProfileError(f"profile {self.name!r}: lateral contains NaN or inf")
        step = float(self.step)
        if not (np.isfinite(step) and step > 0):
            raise ProfileError(f"profile {self.name!r}: step must be positive, got {self.step!r}")
        if not np.allclose(np.diff(lateral), step, rtol=1e-6, atol=1e-12):
            raise ProfileError(f"profile {self.name!r}: lateral is not a uniform increasing grid of step {step} m")
        object.__setattr__(self, "lateral", lateral)
        object.__setattr__(self, "step", step)
        for key, value in arrays.items():
            value = _read_only(value)
            if value.shape != lateral.shape:
                raise ProfileError(f"profile {self.name!r}: {key} has shape {value.shape}, lateral {lateral.shape}")
            if not np.all(np.isfinite(value)):
                raise ProfileError(f"profile {self.name!r}: {key} contains NaN or inf")
            object.__setattr__(self, key, value)
        fb = self.flange_back_to_taping_line
        if fb is not None:
            if self.kind == RAIL:
                raise ProfileError(f"profile {self.name!r}: a rail has no flange_back_to_taping_line")
            fb = float(fb)
            if not (np.isfinite(fb) and 0.0 < fb < 0.5):
                raise ProfileError(f"profile {self.name!r}: flange_back_to_taping_line {fb!r} m out of range")
            object.__setattr__(self, "flange_back_to_taping_line", fb)
        corners = tuple(float(c) for c in self.corners)
        if not all(lateral[0] < c < lateral[-1] for c in corners):
            raise ProfileError(f"profile {self.name!r}: corners {corners} outside the lateral range")
        object.__setattr__(self, "corners", corners)
        if self.spline is None:
            object.__setattr__(self, "spline", CubicSpline(lateral, self.height))
            object.__setattr__(self, "method", "cubic")

    # -- identity ----------------------------------------------------------
    def __eq__(self, other):
        if not isinstance(other, Profile):
            return NotImplemented
        return (self.name == other.name and self.kind == other.kind and self.source == other.source
                and self.step == other.step and self.method == other.method
                and self.flange_back_to_taping_line == other.flange_back_to_taping_line
                and self.corners == other.corners
                and all(np.array_equal(getattr(self, key), getattr(other, key))
                        for key in ("lateral", "height", "slope", "second_derivative")))

    def __hash__(self):
        return hash((self.name, self.kind, self.step, self.lateral.size, float(self.height[0])))

    def __repr__(self):
        fb = ("" if self.flange_back_to_taping_line is None
              else f", flange_back_to_taping_line={self.flange_back_to_taping_line * 1e3:g} mm")
        return (f"Profile(name={self.name!r}, kind={self.kind!r}, lateral=[{self.lateral_min * 1e3:g}, "
                f"{self.lateral_max * 1e3:g}] mm, points={self.lateral.size}, step={self.step * 1e3:g} mm, "
                f"method={self.method!r}{fb})")

    # -- grid --------------------------------------------------------------
    @property
    def lateral_min(self) -> float:
        """First grid point (m)."""
        return float(self.lateral[0])

    @property
    def lateral_max(self) -> float:
        """Last grid point (m)."""
        return float(self.lateral[-1])

    @property
    def curvature(self) -> np.ndarray:
        """Lateral curvature on the grid (1/m), convex positive."""
        return -self.second_derivative / (1.0 + self.slope ** 2) ** 1.5

    # -- evaluation --------------------------------------------------------
    def _evaluate(self, u, nu: int, extrapolate: bool):
        x = np.asarray(u, dtype=float)
        if not np.all(np.isfinite(x)):
            raise ProfileError(f"profile {self.name!r}: lateral coordinate is NaN or inf")
        if not extrapolate:
            tol = 1e-9 * max(1.0, abs(self.lateral_max)) + 1e-12
            if x.size and (x.min() < self.lateral_min - tol or x.max() > self.lateral_max + tol):
                raise ProfileError(
                    f"profile {self.name!r}: lateral coordinate outside [{self.lateral_min:.6g}, "
                    f"{self.lateral_max:.6g}] m (got {x.min():.6g} ... {x.max():.6g}); "
                    f"pass extrapolate=True to extrapolate the spline")
        out = np.asarray(self.spline(x, nu, extrapolate=True), dtype=float)
        return float(out) if out.ndim == 0 else out

    def height_at(self, u, extrapolate: bool = False):
        """Height (m) at lateral u (m), from the resampling spline; vectorised."""
        return self._evaluate(u, 0, extrapolate)

    def slope_at(self, u, extrapolate: bool = False):
        """d height / d lateral (-) at u (m)."""
        return self._evaluate(u, 1, extrapolate)

    def second_derivative_at(self, u, extrapolate: bool = False):
        """d2 height / d lateral2 (1/m) at u (m)."""
        return self._evaluate(u, 2, extrapolate)

    def curvature_at(self, u, extrapolate: bool = False):
        """Lateral curvature (1/m) at u, convex positive: -h''/(1+h'^2)^1.5."""
        slope = self.slope_at(u, extrapolate)
        second = self.second_derivative_at(u, extrapolate)
        return -second / (1.0 + np.square(slope)) ** 1.5


# ---------------------------------------------------------------------------
# Resampling
# ---------------------------------------------------------------------------

class ResampledProfile(NamedTuple):
    """Result of `resample_profile` (m): the uniform grid, values and the spline."""

    lateral: np.ndarray
    height: np.ndarray
    slope: np.ndarray
    second_derivative: np.ndarray
    step: float
    method: str
    spline: object
    corners: np.ndarray          # indices of the input points detected as corners


def find_corners(lateral, height) -> np.ndarray:
    """Indices of the input points where the polyline has a slope discontinuity (corner).

    A corner is a vertex turning by at least CORNER_MIN_TURN_RAD and by at least
    CORNER_ISOLATION_RATIO times the turning at each neighbouring vertex. The
    test is scale-free (any common unit for both coordinates).
    """
    x = np.asarray(lateral, dtype=float)
    y = np.asarray(height, dtype=float)
    if x.size < 3:
        return np.zeros(0, dtype=int)
    angle = np.arctan2(np.diff(y), np.diff(x))
    turn = np.abs(np.diff(angle))                  # turn[k] at vertex k+1
    left = np.concatenate(([0.0], turn[:-1]))
    right = np.concatenate((turn[1:], [0.0]))
    neighbour = np.maximum(left, right)
    is_corner = (turn >= CORNER_MIN_TURN_RAD) & (turn >= CORNER_ISOLATION_RATIO * neighbour)
    return np.flatnonzero(is_corner) + 1


def uniform_grid(lo: float, hi: float, step: float) -> np.ndarray:
    n = int(math.floor((hi - lo) / step + 1e-6)) + 1
    return lo + step * np.arange(n)


def resample_profile(lateral_m, height_m, step: float = DEFAULT_STEP, method: str = "auto",
                     corners=(), smoothing_length: float = DEFAULT_SMOOTHING_LENGTH) -> ResampledProfile:
    """Resample a profile given by points (m) on a uniform grid of `step` (m) by a spline.

    `method`: "smoothing" (the smoothing spline of DEFAULT_SMOOTHING_LENGTH or
    `smoothing_length` (m), broken at the declared corners and those
    `find_corners` finds: the reading of profile files), "cubic" (scipy
    CubicSpline, not-a-knot, through the points: the built-in profiles, sampled
    from their exact curves), "akima" (scipy Akima1DInterpolator), "pchip"
    (scipy PchipInterpolator, shape preserving), or "auto" = "smoothing". The
    grid starts at the first point and keeps `step` exactly; it ends at the last
    point when the span is a multiple of `step` (else up to one step short).
    Lateral coordinates must be strictly increasing. `corners` (m): declared
    slope discontinuities, each one of the points; with "cubic", "smoothing" or
    "auto" the spline is broken there (a spline per smooth stretch, continuous
    with a slope jump at each corner), so straight pieces stay straight.
    """
    x = np.asarray(lateral_m, dtype=float)
    y = np.asarray(height_m, dtype=float)
    if x.ndim != 1 or y.shape != x.shape:
        raise ProfileError(f"lateral and height must be 1-D arrays of one length, got {x.shape} and {y.shape}")
    if x.size < 4:
        raise ProfileError(f"a profile needs at least 4 points to be resampled, got {x.size}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ProfileError("profile points contain NaN or inf")
    if not np.all(np.diff(x) > 0):
        raise ProfileError("lateral coordinates must be strictly increasing")
    if method not in RESAMPLING_METHODS:
        raise ProfileError(f"method must be one of {RESAMPLING_METHODS}, got {method!r}")
    step = float(step)
    span = float(x[-1] - x[0])
    if not (np.isfinite(step) and step > 0):
        raise ProfileError(f"step must be a positive length in metres, got {step!r}")
    if step > span / 10.0:
        raise ProfileError(f"step {step!r} m is coarser than a tenth of the profile span {span:.4g} m "
                         f"(the step is in metres: 1e-4 = 0.1 mm)")
    if span / step > 2e6:
        raise ProfileError(f"step {step!r} m gives more than 2e6 grid points over {span:.4g} m")
    declared = sorted(float(c) for c in corners)
    for c in declared:
        if not (math.isfinite(c) and x[0] < c < x[-1]) or np.min(np.abs(x - c)) > 1e-12:
            raise ProfileError(f"declared corner {c * 1e3:g} mm is not one of the inner points")
    found = find_corners(x, y)
    chosen = "smoothing" if method == "auto" else method
    if chosen == "smoothing":
        if not (isinstance(smoothing_length, (int, float)) and math.isfinite(smoothing_length)
                and 0.0 < smoothing_length <= 0.01):
            raise ProfileError(f"smoothing_length must be in (0, 0.01] m, got {smoothing_length!r}")
        breaks = sorted(set(declared) | {float(x[k]) for k in found})
        spline = _smoothing_spline(x, y, breaks, float(smoothing_length))
    elif chosen == "cubic" and declared:
        spline = _corner_spline(x, y, declared)
    elif chosen == "cubic":
        spline = CubicSpline(x, y)
    elif chosen == "akima":
        spline = Akima1DInterpolator(x, y)
    else:
        spline = PchipInterpolator(x, y)
    grid = uniform_grid(float(x[0]), float(x[-1]), step)
    grid[-1] = min(grid[-1], float(x[-1]))
    height = np.asarray(spline(grid, 0, extrapolate=True))
    slope = np.asarray(spline(grid, 1, extrapolate=True))
    second = np.asarray(spline(grid, 2, extrapolate=True))
    return ResampledProfile(grid, height, slope, second, step, chosen, spline, found)


def _corner_spline(lateral_m, height_m, corners_m) -> PPoly:
    """Cubic splines (not-a-knot) through the points of each stretch between
    the corners (m, each one of the points), joined into one piecewise
    polynomial: C2 within each stretch, continuous with a slope jump at the
    corners."""
    x = np.asarray(lateral_m, dtype=float)
    y = np.asarray(height_m, dtype=float)
    cuts = [0] + [int(np.argmin(np.abs(x - c))) for c in corners_m] + [x.size - 1]
    breaks, coefficients = [], []
    for i0, i1 in zip(cuts[:-1], cuts[1:]):
        piece = CubicSpline(x[i0:i1 + 1], y[i0:i1 + 1])
        c = piece.c
        if c.shape[0] < 4:           # fewer than 4 points: a lower-order polynomial
            c = np.vstack([np.zeros((4 - c.shape[0], c.shape[1])), c])
        breaks.append(piece.x[:-1])
        coefficients.append(c)
    breaks.append(x[-1:])
    return PPoly(np.hstack(coefficients), np.concatenate(breaks))


def _geometric_smoothing_spline(x, y, length):
    """The smoothing spline of the points (x, y in mm) with the smoothing length
    `length` (mm) measured along the profile's arc: scipy's
    make_smoothing_spline (sum w_i (y_i - g(x_i))^2 + lambda int g''^2 dx) with
    lambda = length^4 / h (h the mean spacing) and the weights
    w_i = (dx_i / h) (1 + g'_i^2)^2, which make its local smoothing length in x
    length cos(theta) (theta the profile's slope angle, g' = tan theta): a wave
    of a given length along the arc is filtered alike on a flat tread and on a
    70 deg flange face, where a plain smoothing spline of height against
    lateral coordinate smooths the face's curvature (1 + g'^2)^1.5 times harder
    (22 times on the LMA's face) and moves it by tens of micrometres. The
    slopes g' are those of the interpolating cubic spline; the weights are at
    most _STEEP_WEIGHT (a near-vertical flange back or rail flank, which never
    touches: the spline nearly interpolates it). The end points are pinned
    (weight _PIN_WEIGHT). Returns a scipy BSpline (mm)."""
    from scipy.interpolate import make_smoothing_spline
    slope = CubicSpline(x, y)(x, 1)
    spacing = np.diff(x)
    h = float(spacing.mean())
    share = np.empty(x.size)
    share[0], share[-1] = 0.5 * spacing[0], 0.5 * spacing[-1]
    share[1:-1] = 0.5 * (spacing[:-1] + spacing[1:])
    weights = np.minimum(share / h * (1.0 + slope ** 2) ** 2, _STEEP_WEIGHT)
    weights[[0, -1]] = _PIN_WEIGHT
    return make_smoothing_spline(x, y, w=weights, lam=length ** 4 / h)


def _smoothing_spline(lateral_m, height_m, breaks_m, length) -> PPoly:
    """The geometric smoothing spline (`_geometric_smoothing_spline`) of `length` (m)
    through each stretch of the points between the breaks (m, each one of the
    points), the stretches' end points pinned (so the pieces join), as one
    piecewise cubic. Computed in mm (well scaled)."""
    x = np.asarray(lateral_m, dtype=float) * 1e3
    y = np.asarray(height_m, dtype=float) * 1e3
    cuts = [0] + [int(np.argmin(np.abs(x - c * 1e3))) for c in breaks_m] + [x.size - 1]
    pieces_x, pieces_c = [], []
    for i0, i1 in zip(cuts[:-1], cuts[1:]):
        xs, ys = x[i0:i1 + 1], y[i0:i1 + 1]
        if xs.size >= 5:
            piece = PPoly.from_spline(_geometric_smoothing_spline(xs, ys, length * 1e3))
            keep = (piece.x[:-1] >= xs[0]) & (piece.x[:-1] < xs[-1])     # (no padding intervals)
            px, pc = piece.x[:-1][keep], piece.c[:, keep]
        else:
            piece = CubicSpline(xs, ys) if xs.size >= 3 else PPoly(
                np.array([[0.0], [0.0], [(ys[1] - ys[0]) / (xs[1] - xs[0])], [ys[0]]]), xs)
            px, pc = piece.x[:-1], piece.c
            if pc.shape[0] < 4:
                pc = np.vstack([np.zeros((4 - pc.shape[0], pc.shape[1])), pc])
        pieces_x.append(px)
        pieces_c.append(pc)
    pieces_x.append(x[-1:])
    c = np.hstack(pieces_c)
    # back to m: y_m(x_m) = 1e-3 y_mm(1e3 x_m); the coefficient of (x - b)^j scales by 1e3^j
    powers = np.arange(c.shape[0] - 1, -1, -1)[:, None]
    return PPoly(c * 1e-3 * 1e3 ** powers, np.concatenate(pieces_x) * 1e-3)


def profile_from_points(lateral_m, height_m, *, name: str, kind: str, source: str,
                        step: float = DEFAULT_STEP, method: str = "auto",
                        flange_back_to_taping_line: float | None = None, corners=(),
                        smoothing_length: float = DEFAULT_SMOOTHING_LENGTH) -> Profile:
    """Build a `Profile` from points in metres (strictly increasing lateral);
    `corners`, `method` and `smoothing_length` (m) as in `resample_profile`."""
    r = resample_profile(lateral_m, height_m, step=step, method=method, corners=corners,
                         smoothing_length=smoothing_length)
    kept = ()
    if r.method == "cubic":
        kept = tuple(corners)
    elif r.method == "smoothing":     # the declared corners and those found: the spline's breaks
        x = np.asarray(lateral_m, dtype=float)
        kept = tuple(sorted({float(c) for c in corners} | {float(x[k]) for k in r.corners}))
    return Profile(name=name, kind=kind, source=source, lateral=r.lateral, height=r.height,
                   step=r.step, slope=r.slope, second_derivative=r.second_derivative,
                   flange_back_to_taping_line=flange_back_to_taping_line, method=r.method,
                   spline=r.spline, corners=kept)
