"""Contact-geometry analysis over a range of lateral displacements.

Built on `solver.contact.geometry.points.static_contact` (rigid contact: the wheelset resting
on both rails, z and roll solved so that both wheels just touch). Everything
here is a function of the lateral displacement y of the wheelset centre
(track frame, y LEFT positive; a positive y moves the LEFT wheel towards its
rail, i.e. the left wheel is the flange-side wheel).

Functions
---------
geometry_sweep(setup, y_values, yaw, epsilon)     StaticContact per y
geometry_table(setup, y_values, yaw, epsilon)     rows (y, side, point) for CSV output
rolling_radius_difference(...)                    Delta r(y) = r_left - r_right (principal points)
contact_angle_difference(...), roll_angle(...), contact_point_count(...)
equivalent_conicity(setup, amplitude, method)     EN 15302
flange_contact_clearance(setup, side)             lateral clearance to flange contact
two_point_onset(setup, side)                      first y with >= 2 contact points on a wheel

Equivalent conicity (EN 15302:2008+A1:2010, Railway applications - Method for
determining the equivalent conicity; formerly UIC 519):

* method="integration" (default; EN 15302 Annex B, "integration of the
  non-linear differential equation"): the kinematic wheelset motion
  d(psi)/dx = -Delta r(y)/(e r0), dy/dx = psi has the first integral
  psi^2 = -(2/(e r0)) (S(y) - C), S(y) = int_0^y Delta r dy'. For the
  amplitude y_hat the turning points y1 < y2 satisfy S(y1) = S(y2) = C with
  y2 - y1 = 2 y_hat; the wavelength is lambda = 2 int_{y1}^{y2} dy/psi and the
  equivalent conicity follows from Klingel's formula
  lambda = 2 pi sqrt(e r0/(2 tan(gamma_e))), i.e.
  tan(gamma_e) = 2 e r0 (pi/lambda)^2. (e and r0 cancel out.) The integral is
  evaluated with the substitution y = c + y_hat sin(theta), which removes the
  square-root singularities at the turning points.
* method="harmonic" (harmonic linearisation / describing function; the
  linear-regression idea of EN 15302 Annex C with the weighting of a
  sinusoidal motion): tan(gamma_e) = (1/(pi y_hat)) int_0^{2 pi}
  (Delta r(y_hat sin tau)/2) sin tau d tau. Equals the conicity for a cone.

The two methods agree for a linear Delta r function and differ by a few per
cent for real profiles.

The multipoint tolerance epsilon of the static analysis (default 0.1 mm):
minima of the distance function within epsilon of the deepest one count as
contact points. Ren & Jin (2010) take epsilon as the difference of the
elastic compressions of the points; with wheel loads of 50-100 kN the Hertz
approach is 0.05-0.15 mm, so 0.1 mm is a physically reasonable static value.
The rigid kinematic quantities (Delta r, conicity, flange clearance) use the
principal (deepest) point and do not depend on epsilon; two-point detection
does.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np

from .points import StaticContact, static_contact
from .setup import ContactSetup, GeometryError


#: Default multipoint tolerance of the static analysis (m): ~ the difference of
#: the elastic compressions (Hertz approach 0.05-0.15 mm for 50-100 kN).
DEFAULT_EPSILON = 1e-4

TABLE_COLUMNS = (
    "y_mm", "side", "point", "count", "y_wheel_mm", "y_rail_mm", "contact_angle_rad",
    "contact_angle_deg", "rolling_radius_mm", "roll_rad", "z_mm", "x_offset_mm",
    "y_contact_mm", "z_contact_mm", "gap_mm",
)

SIDES = ("left", "right")


def _side_index(side) -> int:
    if side in (0, "left", "l", "L"):
        return 0
    if side in (1, "right", "r", "R"):
        return 1
    raise GeometryError(f"side must be 'left' or 'right', got {side!r}")


def _towards(side: int) -> float:
    """Sign of y that moves wheel `side` towards its rail (left: +y, right: -y)."""
    return 1.0 if side == 0 else -1.0


def geometry_sweep(setup: ContactSetup, y_values: Iterable[float], yaw: float = 0.0,
                   epsilon: float = DEFAULT_EPSILON) -> list[StaticContact]:
    """static_contact at each lateral displacement y (m)."""
    return [static_contact(setup, float(y), yaw=float(yaw), epsilon=float(epsilon)) for y in y_values]


def geometry_table(setup: ContactSetup, y_values: Iterable[float], yaw: float = 0.0,
                   epsilon: float = DEFAULT_EPSILON, sweep: Sequence[StaticContact] | None = None
                   ) -> list[dict]:
    """One row per (y, side, contact point) of the static geometry, lengths in mm.

    Columns TABLE_COLUMNS: y_mm (wheelset displacement), side ('left' /
    'right'), point (0 = principal, deepest), count (points on that wheel),
    y_wheel_mm (s on the wheel profile, from the taping line, + field side),
    y_rail_mm (u on the rail profile, from the head centreline, + field side),
    contact_angle_rad/deg (CONVENTIONS.md sign: + pushes the wheel to the
    track centre), rolling_radius_mm, roll_rad (wheelset), z_mm (wheelset
    centre height), x_offset_mm (longitudinal position of the point ahead of
    the axle, track frame), y_contact_mm, z_contact_mm (point, track frame),
    gap_mm (vertical, negative = penetration; 0 at the principal points).
    """
    if sweep is None:
        sweep = geometry_sweep(setup, y_values, yaw, epsilon)
    rows = []
    for sc in sweep:
        pts = sc.points
        for side in range(2):
            for k in range(int(pts.count[side])):
                rows.append({
                    "y_mm": sc.y * 1e3,
                    "side": SIDES[side],
                    "point": k,
                    "count": int(pts.count[side]),
                    "y_wheel_mm": pts.y_wheel[side, k] * 1e3,
                    "y_rail_mm": pts.y_rail[side, k] * 1e3,
                    "contact_angle_rad": pts.contact_angle[side, k],
                    "contact_angle_deg": math.degrees(pts.contact_angle[side, k]),
                    "rolling_radius_mm": pts.rolling_radius[side, k] * 1e3,
                    "roll_rad": sc.roll,
                    "z_mm": sc.z * 1e3,
                    "x_offset_mm": pts.position[side, k, 0] * 1e3,
                    "y_contact_mm": pts.position[side, k, 1] * 1e3,
                    "z_contact_mm": pts.position[side, k, 2] * 1e3,
                    "gap_mm": pts.gap[side, k] * 1e3,
                })
    return rows


def _sweep(setup, y_values, yaw, epsilon):
    return geometry_sweep(setup, np.atleast_1d(np.asarray(y_values, dtype=float)), yaw, epsilon)


def rolling_radius_difference(setup: ContactSetup, y_values, yaw: float = 0.0,
                              epsilon: float = 0.0) -> np.ndarray:
    """Delta r(y) = r_left - r_right at the principal contact points (m)."""
    return np.array([sc.rolling_radius_difference for sc in _sweep(setup, y_values, yaw, epsilon)])


def contact_angle_difference(setup: ContactSetup, y_values, yaw: float = 0.0,
                             epsilon: float = 0.0) -> np.ndarray:
    """Contact angle left - right at the principal points (rad)."""
    return np.array([sc.contact_angle_difference for sc in _sweep(setup, y_values, yaw, epsilon)])


def roll_angle(setup: ContactSetup, y_values, yaw: float = 0.0) -> np.ndarray:
    """Wheelset roll angle of the rigid contact (rad, about +x)."""
    return np.array([sc.roll for sc in _sweep(setup, y_values, yaw, 0.0)])


def contact_point_count(setup: ContactSetup, y_values, yaw: float = 0.0,
                        epsilon: float = DEFAULT_EPSILON) -> np.ndarray:
    """Number of contact points per wheel, (n, 2) ints (column 0 left, 1 right)."""
    return np.array([sc.points.count.copy() for sc in _sweep(setup, y_values, yaw, epsilon)],
                    dtype=int).reshape(-1, 2)


# ---------------------------------------------------------------------------
# Equivalent conicity (EN 15302)
# ---------------------------------------------------------------------------

def _delta_r_table(setup, y_max, step):
    n = int(math.ceil(y_max / step))
    y = step * np.arange(-n, n + 1)
    dr = rolling_radius_difference(setup, y, 0.0, 0.0)
    return y, dr


def _conicity_harmonic(y, dr, amplitude, n_tau=720):
    tau = (np.arange(n_tau) + 0.5) * (2.0 * math.pi / n_tau)
    d = np.interp(amplitude * np.sin(tau), y, dr)
    return float(np.sum(0.5 * d * np.sin(tau)) * (2.0 * math.pi / n_tau) / (math.pi * amplitude))


def _conicity_integration(y, dr, amplitude, e=1.5, r0=0.46, n_theta=2000):
    # S(y) = int_0^y Delta r, exact for the piecewise-linear Delta r of the table.
    step = y[1] - y[0]
    S = np.concatenate([[0.0], np.cumsum(0.5 * (dr[1:] + dr[:-1]) * step)])
    S -= np.interp(0.0, y, S)

    def S_at(v):
        # piecewise quadratic: integrate the linear interpolant of Delta r
        v = np.asarray(v, dtype=float)
        i = np.clip(((v - y[0]) / step).astype(int), 0, y.size - 2)
        t = v - y[i]
        slope = (dr[i + 1] - dr[i]) / step
        return S[i] + dr[i] * t + 0.5 * slope * t * t

    # Centre c of the motion: S(c - a) = S(c + a) (the turning points).
    def mismatch(c):
        return float(S_at(c + amplitude) - S_at(c - amplitude))

    limit = y[-1] - amplitude
    lo, hi = -0.5 * limit, 0.5 * limit
    f_lo, f_hi = mismatch(lo), mismatch(hi)
    if f_lo * f_hi > 0.0:
        c = 0.0
    else:
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            f_mid = mismatch(mid)
            if f_mid == 0.0:
                lo = hi = mid
                break
            if (f_mid > 0.0) == (f_hi > 0.0):
                hi, f_hi = mid, f_mid
            else:
                lo, f_lo = mid, f_mid
        c = 0.5 * (lo + hi)
    C = float(S_at(c - amplitude))
    theta = (np.arange(n_theta) + 0.5) * (math.pi / n_theta) - 0.5 * math.pi
    yy = c + amplitude * np.sin(theta)
    psi2 = -(2.0 / (e * r0)) * (S_at(yy) - C)
    if np.any(psi2 <= 0.0):
        raise GeometryError(
            f"the Delta r function gives no kinematic oscillation of amplitude "
            f"{amplitude * 1e3:.2f} mm (not restoring)")
    half = float(np.sum(amplitude * np.cos(theta) / np.sqrt(psi2)) * (math.pi / n_theta))
    wavelength = 2.0 * half
    return float(2.0 * e * r0 * (math.pi / wavelength) ** 2)


def equivalent_conicity(setup: ContactSetup, amplitude: float = 0.003, method: str = "integration",
                        step: float = 1e-4, table=None) -> float:
    """Equivalent conicity tan(gamma_e) at the lateral amplitude y_hat (m), EN 15302.

    method "integration" (EN 15302 Annex B: wavelength of the kinematic
    motion from the Delta r function, converted by Klingel's formula) or
    "harmonic" (harmonic linearisation of Delta r over a sinusoid of
    amplitude y_hat). Delta r is tabulated at `step` (m) over
    [-(y_hat + 1 mm), y_hat + 1 mm] from the rigid static contact (principal
    points); `table` = (y, delta_r) may be given instead.
    """
    amplitude = float(amplitude)
    if not (np.isfinite(amplitude) and amplitude > 0.0):
        raise GeometryError(f"amplitude must be > 0 m, got {amplitude!r}")
    if table is None:
        y, dr = _delta_r_table(setup, amplitude + 1e-3, step)
    else:
        y, dr = (np.asarray(v, dtype=float) for v in table)
    if method == "harmonic":
        return _conicity_harmonic(y, dr, amplitude)
    if method == "integration":
        return _conicity_integration(y, dr, amplitude,
                                     r0=setup.nominal_radius if setup is not None else 0.46)
    raise GeometryError(f"method must be 'integration' or 'harmonic', got {method!r}")


# ---------------------------------------------------------------------------
# Flange contact and two-point contact
# ---------------------------------------------------------------------------

def _first_true(predicate, side, y_max, step, tolerance):
    """Smallest |y| in (0, y_max] (towards `side`) where predicate(y) holds: a scan at
    `step` then bisection to `tolerance`. Returns nan when never."""
    sign = _towards(side)
    previous = 0.0
    if predicate(0.0):
        return 0.0
    n = int(math.ceil(y_max / step))
    for i in range(1, n + 1):
        y = min(i * step, y_max)
        try:
            hit = predicate(sign * y)
        except GeometryError:
            return float("nan")
        if hit:
            lo, hi = previous, y
            while hi - lo > tolerance:
                mid = 0.5 * (lo + hi)
                if predicate(sign * mid):
                    hi = mid
                else:
                    lo = mid
            return hi
        previous = y
    return float("nan")


def flange_contact_clearance(setup: ContactSetup, side="left", angle_deg: float = 60.0,
                             y_max: float = 0.02, step: float = 2e-4, tolerance: float = 1e-6,
                             epsilon: float = 0.0, yaw: float = 0.0) -> float:
    """Lateral displacement (m, >= 0, towards `side`) at which the flange-side wheel's
    contact reaches the flange: the first y where a contact point of that wheel
    has a contact angle above `angle_deg` (60 deg by default; the flange face
    of S1002 and LMA is at ~70 deg, so a jump of the contact to the flange is
    caught as well). epsilon = 0: the rigid geometric contact (the flange
    clearance of the track-wheelset pair). nan when not reached by y_max.
    """
    s = _side_index(side)
    threshold = math.radians(angle_deg)

    def flange(y):
        pts = static_contact(setup, y, yaw=yaw, epsilon=epsilon).points
        return bool(np.any(pts.contact_angle[s, :pts.count[s]] > threshold))

    return _first_true(flange, s, y_max, step, tolerance)


def two_point_onset(setup: ContactSetup, side="left", epsilon: float = DEFAULT_EPSILON,
                    y_max: float = 0.02, step: float = 2e-4, tolerance: float = 1e-6,
                    yaw: float = 0.0, y_start: float = 0.0) -> float:
    """First lateral displacement |y| (m, towards `side`, from `y_start`) at which
    the wheel `side` has two or more contact points (multipoint tolerance
    epsilon, m). nan when not reached by y_max."""
    s = _side_index(side)
    sign = _towards(s)

    def two(y):
        return int(static_contact(setup, y + sign * y_start, yaw=yaw, epsilon=epsilon).points.count[s]) >= 2

    result = _first_true(two, s, y_max - y_start, step, tolerance)
    return result + y_start
