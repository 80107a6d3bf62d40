"""Wheel and rail profiles: load, resample on a uniform grid, derivatives, curvature.

A `Profile` is a curve (lateral coordinate, height) in its own frame, in metres,
on a uniform increasing grid, with the spline that resampled it (see
`docs/CONVENTIONS.md` for the coordinate conventions):

- wheel: lateral s from the taping line, positive towards the field side;
  height F(s) = radius increase (the flange is at s < 0);
- rail: lateral u from the head centreline, positive towards the field side;
  height z(u), up positive, 0 at the crown.

Built-in profiles (`builtin_profile`) are generated from their published
definitions in `solver.profile_definitions`; files (`load_profile`) are
two-column text in millimetres.
"""
from __future__ import annotations

import functools
import math
import os
import re
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from scipy.interpolate import Akima1DInterpolator, CubicSpline, PchipInterpolator, PPoly

from . import profile_definitions as definitions
from .errors import ProfileError  # noqa: F401  (public here as solver.profiles.ProfileError)
from .profile_formats import SIMPACK_EXTENSIONS, read_simpack

__all__ = [
    "ProfileError", "Profile", "ResampledProfile", "resample_profile", "find_corners",
    "profile_from_points", "load_profile", "builtin_profile", "list_builtin_profiles",
    "worn_lma_profile", "BUILTIN_ALIASES", "DEFAULT_STEP", "RESAMPLING_METHODS",
    "load_simpack_profile", "SIMPACK_EXTENSIONS",
]

WHEEL = "wheel"
RAIL = "rail"
KINDS = (WHEEL, RAIL)
DEFAULT_STEP = 1e-4                  # m (0.1 mm)
MIN_POINTS = 10                      # fewest points a profile file may have
RESAMPLING_METHODS = ("auto", "cubic", "akima", "pchip")
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


def _grid(lo: float, hi: float, step: float) -> np.ndarray:
    n = int(math.floor((hi - lo) / step + 1e-6)) + 1
    return lo + step * np.arange(n)


def resample_profile(lateral_m, height_m, step: float = DEFAULT_STEP, method: str = "auto",
                     corners=()) -> ResampledProfile:
    """Resample a profile given by points (m) on a uniform grid of `step` (m) by a spline.

    `method`: "cubic" (scipy CubicSpline, not-a-knot), "akima" (scipy
    Akima1DInterpolator, for profiles with sharp corners), "pchip" (scipy
    PchipInterpolator, shape preserving), or "auto": Akima when a corner is
    found (`find_corners`), else cubic. The grid starts at the first point and
    keeps `step` exactly; it ends at the last point when the span is a multiple
    of `step` (else up to one step short). Lateral coordinates must be strictly
    increasing. `corners` (m): declared slope discontinuities, each one of the
    points; with "cubic" or "auto" the cubic spline is broken there (a spline
    per smooth stretch, continuous with a slope jump at each corner), so straight
    pieces stay straight and arcs keep the cubic spline's accuracy.
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
    chosen = method
    if method == "auto":
        chosen = "cubic" if declared else ("akima" if found.size else "cubic")
    if chosen == "cubic" and declared:
        spline = _corner_spline(x, y, declared)
    elif chosen == "cubic":
        spline = CubicSpline(x, y)
    elif chosen == "akima":
        spline = Akima1DInterpolator(x, y)
    else:
        spline = PchipInterpolator(x, y)
    grid = _grid(float(x[0]), float(x[-1]), step)
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


def profile_from_points(lateral_m, height_m, *, name: str, kind: str, source: str,
                        step: float = DEFAULT_STEP, method: str = "auto",
                        flange_back_to_taping_line: float | None = None, corners=()) -> Profile:
    """Build a `Profile` from points in metres (strictly increasing lateral);
    `corners` (m) as in `resample_profile`."""
    r = resample_profile(lateral_m, height_m, step=step, method=method, corners=corners)
    kept = tuple(corners) if r.method == "cubic" else ()
    return Profile(name=name, kind=kind, source=source, lateral=r.lateral, height=r.height,
                   step=r.step, slope=r.slope, second_derivative=r.second_derivative,
                   flange_back_to_taping_line=flange_back_to_taping_line, method=r.method,
                   spline=r.spline, corners=kept)


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------

_DIRECTIVE = re.compile(r"^\s*#\s*([A-Za-z][A-Za-z0-9_ \-]*?)\s*:\s*(.*?)\s*$")
_SEPARATORS = re.compile(r"[\s,;]+")
_KNOWN_DIRECTIVES = ("kind", "name", "source", "flange_back_to_taping_line_mm", "units", "corners_mm")


def load_profile(path, kind: str | None, step: float = DEFAULT_STEP, method: str = "auto",
                 name: str | None = None) -> Profile:
    """Load a two-column profile file in MILLIMETRES (lateral, height) and resample it.

    Lines: `lateral height` separated by whitespace, commas or semicolons;
    `#` starts a comment. Header directives in comment lines (optional):
    `# kind: wheel|rail`, `# name: ...`, `# source: ...`,
    `# flange_back_to_taping_line_mm: 70` (wheels), `# units: mm`,
    `# corners_mm: 30 60` (slope discontinuities, each one of the points: the
    cubic spline is broken there, see `resample_profile`).
    `kind` None takes the kind from the header. The coordinate conventions of
    docs/CONVENTIONS.md apply (wheel: s from the taping line, flange at s < 0;
    rail: u from the head centreline, gauge side u < 0, z = 0 at the crown).
    A file written in decreasing lateral order is reversed. Raises
    ProfileError naming the file and line for anything it cannot use.
    A SIMPACK profile (.prw wheel, .prr rail) is read by `load_simpack_profile`
    with its defaults.
    """
    from .data_files import DataFileError, read_text
    path_str = os.fspath(path)
    if not os.path.exists(path_str):
        raise ProfileError("profile file not found", path_str)
    if os.path.isdir(path_str):
        raise ProfileError("is a directory, not a profile file", path_str)
    if os.path.splitext(path_str)[1].lower() in SIMPACK_EXTENSIONS:
        return load_simpack_profile(path_str, kind, step=step, method=method, name=name)
    try:
        # a regular file of at most 10 MB and 200 000 lines (solver/data_files.py):
        # no hang on a FIFO, no endless read of a device
        lines = read_text(path_str).splitlines()
    except DataFileError as exc:
        raise ProfileError(exc.reason, path_str) from None

    header: dict[str, tuple[str, int]] = {}
    lateral: list[float] = []
    height: list[float] = []
    line_of: list[int] = []
    for lineno, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if stripped.startswith("#"):
            match = _DIRECTIVE.match(stripped)
            if match:
                key = re.sub(r"[\s\-]+", "_", match.group(1).strip().lower())
                if key in _KNOWN_DIRECTIVES:
                    if key in header:
                        raise ProfileError(f"directive {key!r} given twice (first on line {header[key][1]})",
                                           path_str, lineno)
                    header[key] = (match.group(2), lineno)
            continue
        content = stripped.split("#", 1)[0].strip()
        if not content:
            continue
        tokens = [tok for tok in _SEPARATORS.split(content) if tok]
        if len(tokens) != 2:
            raise ProfileError(f"expected 2 columns (lateral, height in mm), found {len(tokens)}",
                               path_str, lineno)
        values = []
        for column, tok in enumerate(tokens, start=1):
            try:
                value = float(tok)
            except ValueError:
                raise ProfileError(f"column {column} is not a number", path_str, lineno) from None
            if not math.isfinite(value):
                raise ProfileError(f"column {column} is not finite (NaN or inf)", path_str, lineno)
            values.append(value)
        lateral.append(values[0])
        height.append(values[1])
        line_of.append(lineno)

    # -- header directives ----------------------------------------------------
    if "units" in header:
        units, lineno = header["units"]
        if units.strip().lower() not in ("mm", "millimetre", "millimetres", "millimeter", "millimeters"):
            raise ProfileError("units: profile files are read in millimetres (mm)", path_str, lineno)
    if "kind" in header:
        header_kind, lineno = header["kind"]
        header_kind = header_kind.strip().lower()
        if header_kind not in KINDS:
            raise ProfileError("kind must be 'wheel' or 'rail'", path_str, lineno)
        if kind is not None and kind != header_kind:
            raise ProfileError(f"file says kind {header_kind!r}, caller asked for {kind!r}", path_str, lineno)
        kind = header_kind
    if kind is None:
        raise ProfileError("kind not given (argument or '# kind:' directive)", path_str)
    if kind not in KINDS:
        raise ProfileError(f"kind must be 'wheel' or 'rail', got {kind!r}", path_str)
    flange_back = None
    if "flange_back_to_taping_line_mm" in header:
        text, lineno = header["flange_back_to_taping_line_mm"]
        if kind == RAIL:
            raise ProfileError("flange_back_to_taping_line_mm given for a rail profile", path_str, lineno)
        try:
            fb_mm = float(text)
        except ValueError:
            raise ProfileError("flange_back_to_taping_line_mm: not a number", path_str, lineno) from None
        if not (math.isfinite(fb_mm) and 0.0 < fb_mm < 500.0):
            raise ProfileError(f"flange_back_to_taping_line_mm {fb_mm!r} out of range (0, 500) mm",
                               path_str, lineno)
        flange_back = fb_mm * 1e-3
    corners_mm: list[float] = []
    if "corners_mm" in header:
        text, lineno = header["corners_mm"]
        try:
            corners_mm = [float(tok) for tok in _SEPARATORS.split(text.strip()) if tok]
        except ValueError:
            raise ProfileError("corners_mm: expected numbers (mm)", path_str, lineno) from None
        if len(corners_mm) > 100 or not all(math.isfinite(c) for c in corners_mm):
            raise ProfileError("corners_mm: at most 100 finite numbers (mm)", path_str, lineno)

    # -- the points -----------------------------------------------------------
    if not lateral:
        raise ProfileError("empty profile file: no data points", path_str, max(len(lines), 1))
    if len(lateral) < MIN_POINTS:
        raise ProfileError(f"only {len(lateral)} data points, at least {MIN_POINTS} are needed",
                           path_str, line_of[-1])
    x = np.asarray(lateral)
    z = np.asarray(height)
    first_seen: dict[float, int] = {}
    for value, lineno in zip(lateral, line_of):
        if value in first_seen:
            raise ProfileError(f"duplicate lateral coordinate {value:g} mm (also on line {first_seen[value]})",
                               path_str, lineno)
        first_seen[value] = lineno
    span = float(x.max() - x.min())
    if span < MIN_LATERAL_SPAN_MM:
        raise ProfileError(f"lateral span {span:g} is below {MIN_LATERAL_SPAN_MM:g} mm: the coordinates look "
                           f"like metres; profile files are in millimetres", path_str, line_of[0])
    steps = np.diff(x)
    direction = 1.0 if steps[0] > 0 else -1.0
    reversal = np.flatnonzero(steps * direction < 0)
    if reversal.size:
        k = int(reversal[0]) + 1
        raise ProfileError(f"lateral coordinate {x[k]:g} mm reverses the direction of the preceding points "
                           f"(line {line_of[k - 1]}: {x[k - 1]:g} mm); lateral must be monotonic",
                           path_str, line_of[k])
    if direction < 0:
        x, z = x[::-1], z[::-1]
        line_of = line_of[::-1]
    if not (x[0] <= 0.0 <= x[-1]):
        origin = "taping line (s = 0)" if kind == WHEEL else "rail-head centreline (u = 0)"
        raise ProfileError(f"lateral range [{x[0]:g}, {x[-1]:g}] mm does not contain the {origin}; "
                           f"see docs/CONVENTIONS.md", path_str, line_of[0])
    if kind == WHEEL:
        tip = int(np.argmax(z))
        if x[tip] > 0.0 and z[tip] > z[0] + 5.0:
            raise ProfileError(f"the flange (largest height, at {x[tip]:g} mm) is on the positive side; the wheel "
                               f"convention puts the flange at s < 0 (field side positive)",
                               path_str, line_of[tip])

    header_name = header.get("name", (None, 0))[0]
    profile_name = name or header_name or os.path.splitext(os.path.basename(path_str))[0]
    source = header.get("source", (None, 0))[0] or f"file {os.path.basename(path_str)}"
    try:
        return profile_from_points(x * 1e-3, z * 1e-3, name=profile_name, kind=kind, source=source,
                                   step=step, method=method, flange_back_to_taping_line=flange_back,
                                   corners=[c * 1e-3 for c in corners_mm])
    except ProfileError as exc:
        raise ProfileError(exc.reason, path_str) from None
    except ValueError as exc:       # grid too fine for the span (e.g. a file in the wrong unit)
        raise ProfileError(str(exc), path_str) from None


CROWN_FIT_HALF_WIDTH_MM = 5.0     # the crown of a rail file: a parabola through the points within this of the top


def _monotonic_run(x, around: int):
    """The index range [i0, i1] of the longest run of strictly increasing x through `around`."""
    i0 = around
    while i0 > 0 and x[i0 - 1] < x[i0]:
        i0 -= 1
    i1 = around
    while i1 < x.size - 1 and x[i1 + 1] > x[i1]:
        i1 += 1
    return i0, i1


def load_simpack_profile(path, kind: str | None = None, step: float = DEFAULT_STEP, method: str = "auto",
                         name: str | None = None, *, cant: float = 0.0, mirror_y: bool = False,
                         flange_back_to_taping_line: float = 0.070, source: str | None = None) -> Profile:
    """Load a SIMPACK wheel (.prw) or rail (.prr) profile and resample it.

    The header's processing (units, shift, rotation, bounds, mirroring,
    inversion: solver.profile_formats) is applied first; then the processed
    profile is read as a right-hand profile, y towards the field side and z
    down (`mirror_y` flips y for a file drawn the other way):

    - wheel: s = y, F = z; the taping line is the file's y = 0;
      `flange_back_to_taping_line` (m; SIMPACK files do not state it) defaults
      to 70 mm, the EN 13715 / UIC convention of S1002 and LMA.
    - rail: u = y, height = -z. `cant` (rad): the file is drawn already canted
      (inclined) by this angle in the track frame, field side up (the
      Manchester benchmark's UIC60 file: atan(1/40)); it is rotated back into
      the rail's own frame, as the project's rails are (the inclination is a
      parameter of the track set-up, solver.geometry.ContactSetup). The origin
      is then moved to the crown: the vertex of a parabola through the points
      within CROWN_FIT_HALF_WIDTH_MM of the highest point. Points of the head's
      flanks that overhang after this (lateral no longer increasing) are cut
      off at both ends; the profile's source says how many.
    `kind` None takes the kind from the header (header.type); a kind that
    contradicts the header or the extension is an error.
    """
    path_str = os.fspath(path)
    parsed = read_simpack(path_str)
    ext_kind = SIMPACK_EXTENSIONS.get(os.path.splitext(path_str)[1].lower())
    if ext_kind is not None and ext_kind != parsed.kind:
        raise ProfileError(f"header.type says {parsed.kind}, the extension a {ext_kind}", path_str)
    if kind is not None and kind != parsed.kind:
        raise ProfileError(f"file says kind {parsed.kind!r}, caller asked for {kind!r}", path_str)
    if not (isinstance(cant, (int, float)) and math.isfinite(cant) and abs(cant) < 0.2):
        raise ProfileError(f"cant must be an angle below 0.2 rad, got {cant!r}", path_str)
    y = -parsed.y_mm if mirror_y else parsed.y_mm.copy()
    notes = list(parsed.steps) + (["mirrored in y on loading"] if mirror_y else [])
    if parsed.kind == WHEEL:
        lateral, height = y, parsed.z_mm.copy()
        if cant:
            raise ProfileError("cant applies to rail profiles only", path_str)
    else:
        lateral, height = y, -parsed.z_mm
        if cant:
            c, s = math.cos(cant), math.sin(cant)
            lateral, height = lateral * c + height * s, -lateral * s + height * c
            notes.append(f"cant {cant:.6g} rad (1:{1 / math.tan(cant):.4g}) taken out")
    if lateral[0] > lateral[-1]:
        lateral, height = lateral[::-1], height[::-1]
    top = int(np.argmax(height))
    i0, i1 = _monotonic_run(lateral, top)
    if parsed.kind == RAIL:
        if i0 > 0 or i1 < lateral.size - 1:
            notes.append(f"{i0} + {lateral.size - 1 - i1} overhanging flank points cut off "
                         f"(below {-(max(height[i0], height[i1]) - height[top]):.1f} mm)")
        lateral, height = lateral[i0:i1 + 1], height[i0:i1 + 1]
        near = np.abs(lateral - lateral[np.argmax(height)]) <= CROWN_FIT_HALF_WIDTH_MM
        if near.sum() < 3:
            raise ProfileError("too few points near the crown to locate it", path_str)
        a, b, c0 = np.polyfit(lateral[near], height[near], 2)
        if not a < 0:
            raise ProfileError("the top of the rail is not convex: no crown", path_str)
        u0 = -b / (2 * a)
        lateral, height = lateral - u0, height - (c0 - b * b / (4 * a))
        notes.append(f"origin moved to the crown (file y = {u0 if not mirror_y else -u0:.4f} mm)")
    elif i0 > 0 or i1 < lateral.size - 1:
        k = i0 - 1 if i0 > 0 else i1 + 1
        raise ProfileError(f"lateral not monotonic after processing near y = {lateral[k]:.4g} mm", path_str)
    if not (lateral[0] <= 0.0 <= lateral[-1]):
        raise ProfileError(f"lateral range [{lateral[0]:g}, {lateral[-1]:g}] mm does not contain the origin",
                           path_str)
    if parsed.kind == WHEEL:
        tip = int(np.argmax(height))
        if lateral[tip] > 0.0 and height[tip] > height[0] + 5.0:
            raise ProfileError("the flange is on the positive side after processing: the file is drawn "
                               "the other way round (mirror_y=True)", path_str)
    profile_name = name or os.path.splitext(os.path.basename(path_str))[0]
    if source is None:
        source = (f"SIMPACK {parsed.kind} profile file {os.path.basename(path_str)}"
                  + (f" ({parsed.comment})" if parsed.comment else "")
                  + (": " + "; ".join(notes) if notes else ""))
    try:
        return profile_from_points(lateral * 1e-3, height * 1e-3, name=profile_name, kind=parsed.kind,
                                   source=source, step=step, method=method,
                                   flange_back_to_taping_line=(flange_back_to_taping_line
                                                               if parsed.kind == WHEEL else None))
    except ProfileError as exc:
        raise ProfileError(exc.reason, path_str) from None


# ---------------------------------------------------------------------------
# Built-in profiles
# ---------------------------------------------------------------------------

_S1002_SOURCE = (
    "EN 13715 S1002 wheel tread, sections A-H (polynomials and arcs of the standard; coefficients "
    "cross-checked against a second published listing); s from -70 mm (flange back) to +60 mm; "
    "published sections meet to 1.2e-4 mm (at s = -35 mm)")
_UIC60_SOURCE = (
    "EN 13674-1 60E1 (UIC60) rail head: crown R300, R80, gauge corner R13, 1:20 flank; built from the radii, "
    "the R300/R80 junction half-width 20.456/2 mm and the 72 mm head width; reproduces the published centres "
    "R80 (7.5005, 80.1279) and R13 (23.0160, 14.9491) mm to 3e-4 mm; u from -36.5 to +36.5 mm "
    "(flank down to 24.3 mm below the crown); not inclined")
_CHN60_SOURCE = (
    "TB/T 2344 / GB 2585 60 kg/m rail (CHN60) head from published dimensions: arcs R300/R80/R13, head width "
    "73 mm. ASSUMED (full drawing not available): R300/R80 junction at half-width 10.228 mm as in 60E1, 1:20 "
    "flank, 73 mm at the top of the flank. Estimated deviation: exact on the crown |u| < 8 mm; < 0.05 mm for "
    "|u| < 15 mm and < 0.1 mm for |u| < 20 mm if the true junction is within 1 mm of the assumed; up to "
    "~0.3 mm at the gauge corner; u from -37 to +37 mm; not inclined")
_LMA_SOURCE = (
    "TB/T 449 LMA wheel (CRH1/CRH2/CRH380A/CR400AF) from the published geometry: the tangent chain of the "
    "public coordinate table 'LMA of CRH2/CRH380A/CR400AF' (github Legend19960404/Wheel-Rail-Interaction-"
    "Dataset, standard_profiles/LMA.txt, 1358 points; its points lie on the chain within 9e-7 mm): flange "
    "back R25 vertical at s = -70 mm, tip R12 centred at (-54, 16) (flange height 28.00 mm), R15, straight "
    "70 deg flange face, root R14 through the flange thickness point (32.90 mm at 10 mm above the taping "
    "line), R90, tread R450 through the taping-line origin, 1:40 to s = 30 mm, 1:15 to 60 mm, 45 deg chamfer "
    "to +65 mm (corners at 30 and 60 mm, as published). Chosen over the second public table (JBG_SDITT "
    "LMA_UnitMM.txt: same tread, but a spline through the flange with no straight face, flange height "
    "28.02 mm) because it is the standard's arc-and-line construction itself")


def _lma_worn_source(depth: float, width: float, centre: float) -> str:
    return (f"synthetic: LMA (published geometry, see LMA) minus a raised-cosine hollow of depth {depth:g} mm, width {width:g} mm, "
            f"centred at s = {centre:g} mm (hollow wear in the spirit of Ren & Jin 2010, Fig. 6; parameters "
            f"solver.profile_definitions.LMA_WORN_HOLLOW_*)")


# name -> (kind, curve factory, source, flange back in m)
_BUILTINS = {
    "S1002": (WHEEL, definitions.s1002_curve, _S1002_SOURCE, 0.070),
    "LMA": (WHEEL, definitions.lma_curve, _LMA_SOURCE, 0.070),
    "LMA-worn": (WHEEL, definitions.lma_worn_curve, None, 0.070),
    "UIC60": (RAIL, definitions.uic60_curve, _UIC60_SOURCE, None),
    "CHN60": (RAIL, definitions.chn60_curve, _CHN60_SOURCE, None),
}
BUILTIN_ALIASES = {"60E1": "UIC60"}

# Built-ins read from files shipped inside the solver package (so that they
# travel with it into the FMU and its cache copy), with their licence notice:
# name -> (kind, file under solver/profile_data/, loader options, source)
PROFILE_FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "profile_data")
MANCHESTER_RAIL_CANT = math.atan(1.0 / 40.0)
_FILE_BUILTINS = {
    "MBench_S1002_v3": (WHEEL, os.path.join("manchester", "MBench_S1002_v3.prw"),
                        {"flange_back_to_taping_line": 0.070},
                        "the Manchester contact benchmark's S1002 wheel (Shackleton & Iwnicki 2008), "
                        "SIMPACK file MBench_S1002_v3.prw as distributed with CONTACT (github eve70a/"
                        "CONTACT, Apache-2.0; solver/profile_data/manchester/NOTICE.md); within 1 um of EN 13715 for "
                        "s > -60 mm; s from -69.6 mm (flange back at -70 mm) to +60 mm"),
    "MBench_UIC60_v3": (RAIL, os.path.join("manchester", "MBench_UIC60_v3.prr"),
                        {"cant": MANCHESTER_RAIL_CANT},
                        "the Manchester contact benchmark's UIC60 rail (Shackleton & Iwnicki 2008), "
                        "SIMPACK file MBench_UIC60_v3.prr as distributed with CONTACT (github eve70a/"
                        "CONTACT, Apache-2.0; solver/profile_data/manchester/NOTICE.md); drawn canted 1:40 in the "
                        "file, the cant taken out (rail in its own frame, origin at the crown); differs "
                        "from the analytic UIC60 by 22 um rms, 40 um at most for |u| < 30 mm"),
}


def _canonical_name(name: str) -> str:
    if not isinstance(name, str):
        raise ProfileError(f"profile name must be a string, got {name!r}")
    wanted = name.strip().upper()
    for alias, target in BUILTIN_ALIASES.items():
        if wanted == alias.upper():
            return target
    for key in list(_BUILTINS) + list(_FILE_BUILTINS):
        if wanted == key.upper():
            return key
    known = ", ".join(list(_BUILTINS) + list(_FILE_BUILTINS) + list(BUILTIN_ALIASES))
    raise ProfileError(f"unknown built-in profile {name!r}; known: {known}")


def is_builtin_profile(name) -> bool:
    """True if `name` names a built-in profile (case-insensitive, aliases too,
    and the cone family "cone:<conicity>" with a valid conicity)."""
    try:
        if isinstance(name, str) and name.strip().lower().startswith(CONE_PREFIX):
            _cone_conicity(name)
        else:
            _canonical_name(name)
    except ValueError:
        return False
    return True


def _source_of(name: str) -> str:
    if name in _FILE_BUILTINS:
        return _FILE_BUILTINS[name][3]
    source = _BUILTINS[name][2]
    if source is None:
        source = _lma_worn_source(definitions.LMA_WORN_HOLLOW_DEPTH_MM, definitions.LMA_WORN_HOLLOW_WIDTH_MM,
                                  definitions.LMA_WORN_HOLLOW_CENTRE_MM)
    return source


def _profile_from_curve(curve, name: str, kind: str, source: str, step: float,
                        flange_back: float | None) -> Profile:
    step = float(step)
    lo, hi = curve.lateral_min * 1e-3, curve.lateral_max * 1e-3
    if not (np.isfinite(step) and 0.0 < step <= (hi - lo) / 10.0):
        raise ProfileError(f"step must be a positive length in metres below {(hi - lo) / 10:.4g}, got {step!r}")
    grid = _grid(lo, hi, step)
    grid[-1] = min(grid[-1], hi)
    # Published corners (slope jumps, LMA): the samples include them and the
    # cubic spline breaks there; elsewhere the curves are tangent-continuous.
    corners = [c * 1e-3 for c in curve.info.get("corners_mm", ())]
    samples = np.union1d(grid, corners)
    samples = samples[np.concatenate(([True], np.diff(samples) > 1e-12))]
    height = curve(np.clip(samples * 1e3, curve.lateral_min, curve.lateral_max)) * 1e-3
    return profile_from_points(samples, height, name=name, kind=kind, source=source, step=step,
                               method="cubic", flange_back_to_taping_line=flange_back,
                               corners=corners)


@functools.lru_cache(maxsize=64)
def _builtin_cached(name: str, step: float) -> Profile:
    if name in _FILE_BUILTINS:
        kind, relative, options, source = _FILE_BUILTINS[name]
        return load_simpack_profile(os.path.join(PROFILE_FOLDER, relative), kind, step=step, name=name,
                                    source=source, **options)
    kind, factory, _, flange_back = _BUILTINS[name]
    return _profile_from_curve(factory(), name, kind, _source_of(name), step, flange_back)


def builtin_profile(name: str, step: float = DEFAULT_STEP) -> Profile:
    """A built-in profile generated from its published definition, on a grid of `step` (m).

    Names: S1002, LMA, LMA-worn (wheels), UIC60 (alias 60E1), CHN60 (rails),
    and the Manchester benchmark's files MBench_S1002_v3 (wheel) and
    MBench_UIC60_v3 (rail), read from solver/profile_data/manchester/;
    case-insensitive; and the family of straight cone treads "cone:<conicity>"
    (e.g. "cone:0.15", `cone_profile`; not in `list_builtin_profiles`). Results are cached per (name, step); call
    `builtin_profile.cache_clear()` after changing the LMA_WORN_HOLLOW_*
    constants, or use `worn_lma_profile` with explicit parameters.
    """
    if isinstance(name, str) and name.strip().lower().startswith(CONE_PREFIX):
        return cone_profile(_cone_conicity(name), step)
    return _builtin_cached(_canonical_name(name), float(step))


builtin_profile.cache_clear = _builtin_cached.cache_clear      # type: ignore[attr-defined]

# The built-in family of straight cone treads for the linear (textbook) studies:
# "cone:<conicity>", e.g. "cone:0.15".
CONE_PREFIX = "cone:"
CONE_HALF_WIDTH = 0.060     # m: the tread spans s = -60 .. +60 mm (no flange)
CONE_MAX_CONICITY = 0.5


def _cone_conicity(name: str) -> float:
    text = name.strip()[len(CONE_PREFIX):]
    try:
        conicity = float(text)
    except ValueError:
        raise ProfileError(f"cone profile {name!r}: the conicity after 'cone:' must be a number, "
                         f"e.g. cone:0.15") from None
    if not (math.isfinite(conicity) and 0.0 < conicity <= CONE_MAX_CONICITY):
        raise ProfileError(f"cone profile {name!r}: conicity must be in (0, {CONE_MAX_CONICITY}], "
                         f"got {conicity!r}")
    return conicity


@functools.lru_cache(maxsize=16)
def _cone_cached(conicity: float, step: float) -> Profile:
    lo, hi = -CONE_HALF_WIDTH, CONE_HALF_WIDTH
    if not (math.isfinite(step) and 0.0 < step <= (hi - lo) / 10.0):
        raise ProfileError(f"step must be a positive length in metres below {(hi - lo) / 10:.4g}, got {step!r}")
    grid = _grid(lo, hi, step)
    grid[-1] = min(grid[-1], hi)
    source = (f"synthetic straight cone tread F(s) = -{conicity:g} s (radius r0 + F) for "
              f"s = -60 .. +60 mm, no flange: every contact point of a lateral displacement "
              f"within +-20 mm (and more) lies on the cone, so the equivalent conicity is "
              f"{conicity:g} exactly (Klingel's and Wickens' textbook wheelset)")
    return profile_from_points(grid, -conicity * grid, name=f"cone:{conicity:g}", kind=WHEEL,
                               source=source, step=step, method="cubic",
                               flange_back_to_taping_line=0.070)


def cone_profile(conicity: float, step: float = DEFAULT_STEP) -> Profile:
    """A straight cone wheel tread of the given conicity (the `cone:<conicity>`
    built-in): F(s) = -conicity * s over s = -60 .. +60 mm, no flange."""
    if not (isinstance(conicity, (int, float)) and math.isfinite(conicity)
            and 0.0 < conicity <= CONE_MAX_CONICITY):
        raise ProfileError(f"conicity must be in (0, {CONE_MAX_CONICITY}], got {conicity!r}")
    return _cone_cached(float(conicity), float(step))


def list_builtin_profiles(generated_only: bool = False) -> list[tuple[str, str, str]]:
    """(name, kind, source) of every built-in profile (aliases in BUILTIN_ALIASES);
    `generated_only`: only those generated from their definitions in code (not
    the ones read from the files shipped in profiles/)."""
    rows = [(name, entry[0], _source_of(name)) for name, entry in _BUILTINS.items()]
    if not generated_only:
        rows += [(name, entry[0], entry[3]) for name, entry in _FILE_BUILTINS.items()]
    return rows


def worn_lma_profile(depth_mm: float | None = None, width_mm: float | None = None,
                     centre_mm: float | None = None, step: float = DEFAULT_STEP) -> Profile:
    """LMA with a raised-cosine hollow of the given depth, width and centre (mm; defaults LMA_WORN_HOLLOW_*)."""
    curve = definitions.lma_worn_curve(depth_mm, width_mm, centre_mm)
    info = curve.info
    source = _lma_worn_source(info["hollow_depth_mm"], info["hollow_width_mm"], info["hollow_centre_mm"])
    return _profile_from_curve(curve, "LMA-worn", WHEEL, source, step, 0.070)
