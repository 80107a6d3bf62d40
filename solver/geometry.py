"""Wheel-rail contact geometry with multipoint detection.

The contact search follows the trace-line method: under yaw the point of a
wheel cross-section that can touch a rail (a prism along x) is the point whose
surface normal is perpendicular to x (Wang 1984). For each lateral position of
the wheel profile that point, the "trace line", is computed in the track frame;
the vertical wheel-rail distance along it is the distance function of Ren & Jin
(2010, J. Mech. Eng. 46(16), Eqs. 1-7; also Ren, Iwnicki & Xie 2011, VSD 49(10)).

Multipoint detection (trace-line extremum method, Ren & Jin 2010):
  1. the distance function g(Y) is sampled on the wheel profile grid (coarsely
     first, then on the full grid around every coarse minimum and over the
     whole interpenetration) and its extrema found; maxima (g'' < 0) are
     rejected, each minimum is refined by a parabola through its neighbours
     (the "interpolated" distance function);
  2. elastic mode (the dynamics, epsilon < 0): every minimum that penetrates
     (distance < 0) is a contact point, up to MAX_POINTS = 3 per wheel, and the
     saddle between neighbouring points (the highest distance between them,
     fill_saddles) says how they share the load: below the rail their
     interpenetrations form one patch, which solver.normal.merged_patch_forces_kernel
     distributes continuously (no "deepest point" choice, no independence
     threshold: a point enters and leaves with zero load);
  3. static mode (the rigid analysis, epsilon >= 0): minima whose distance is
     within epsilon of the smallest one are candidates (Eq. 4; epsilon an
     estimate of the difference of the elastic compressions), and a candidate
     is an independent contact point when, against every point already
     accepted,
       - the two points are at least e_d apart (Eq. 5, default 8 mm; measured
         in the cross-section plane, so that points on the steep flange count
         their height difference too),
       - the distance function rises, between the two, above the compression
         level g_min + epsilon (Eq. 6, the intermediate maximum), and
       - the slopes (tangent of the contact angle) differ by at least e_k
         (Eq. 7, default 0.025);
     otherwise it belongs to the patch of the deeper point. These binary
     criteria are what a static contact table needs; in the dynamics they made
     the force jump where a candidate crossed a threshold while loaded (a
     doubling of the wheel load at the S1002 tread jump), so the
     elastic mode shares the load by the saddles instead.

Frames and signs are those of docs/CONVENTIONS.md: track frame x forward, y
left, z up. The right wheel is computed as the left wheel of the wheelset
mirrored about the x-z plane (y -> -y, roll -> -roll, yaw -> -yaw), so that
y -> -y swaps left and right exactly.

The numba kernel `wheel_distance_minima` and its NumPy reference
`wheel_distance_minima_reference` compute the same thing; a test holds them
equal. The kernels take their arguments in named groups (ContactTables,
WheelsetPose, RailPose, ContactBuffers: named tuples, plain structs to numba).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numba import njit

from .errors import SolverError
from .profiles import Profile, builtin_profile

MAX_POINTS = 3          # contact points per wheel
MAX_MINIMA = 24         # local minima of the distance function examined per wheel
HUMP_MIN = 1e-7         # numerical margin on the intermediate maximum (m)
VIRTUAL_PENETRATION = 0.55   # Kik & Piotrowski's reduction of the interpenetration (Piotrowski & Kik 2008;
                             # used by solver.normal_exact)
UPDATE_HALF_WINDOW = 12  # contact update: +-1.2 mm around the previous point
# A local minimum of the distance function separated from a deeper one by a
# hump lower than this is part of that one's basin, not a contact point of its
# own: below 1 um the hump is within the profiles' own accuracy (a measured
# profile is known to a few um at best; the built-ins are sampled every 0.1 mm,
# whose interpolation leaves wiggles of tenths of a micrometre where arcs
# meet), and two points that close in depth share their load as one patch
# anyway (solver.normal.merged_patch_forces_kernel). Without it such a wiggle,
# sinking below the rail, adds a point from one step to the next that only a
# full scan would see (drop_shallow_minima).
SHALLOW_HUMP = 1e-6     # m
SHALLOW_WALK = 6        # grid points walked each way to find the hump (a wiggle's scale)
COARSE_STRIDE = 10      # first pass of the distance function every 10th profile point (1 mm)

# Rows of the search's scratch array `work` (N_WORK_ROWS, n_wheel): the distance
# function on the wheel grid (rows 0-4, see wheel_distance_function), then the
# search's short lists in the first MAX_MINIMA entries of their rows, so that a
# search allocates nothing (its 16 small arrays cost about 0.1 us per search).
W_MINIMA_POS = 5        # the minima found: fractional wheel grid index
W_MINIMA_GAP = 6        # their distance (m)
W_WINDOWS = 7           # grid indices of the coarse minima (whole numbers, as floats)
W_ACCEPTED_POS = 8      # grid index of the contact points accepted so far (MAX_POINTS)
# The tracked minima of wheelset_contact_tracked, per wheel (row + side, side 0
# left, 1 right): a head row (entries TR_*) and the minima's fractional grid
# indices (the first TR_COUNT entries of the positions row).
W_TRACK_HEAD = 9        # rows 9, 10
W_TRACK_POS = 11        # rows 11, 12
# Scratch of the normal-force layer for one wheel at a time (solver.dynamics:
# the points in order along the profile and their Hertz results, fields of
# MAX_POINTS entries each, PATCH_*).
W_PATCH = 13            # rows 13, 14
N_WORK_ROWS = 15

# Entries of a tracked-minima head row.
TR_COUNT = 0            # number of tracked minima (0: none; the next search scans)
TR_POSE = 1             # y, z, roll, yaw of the last full scan (side-local)
TR_RAIL = 5             # lateral, vertical, roll of the rail at the last full scan
TR_SCANS = 8            # full scans run by wheelset_contact_tracked (a counter)
TR_TRACKED = 9          # searches answered by the tracked minima (a counter)
TR_CLEARANCE = 10       # lowest distance of the scan's shoulders (m, _shoulder_clearance)
TR_RATE_LENGTH = 11     # bound on the change of a distance sample per m of lateral motion
TR_RATE_ANGLE = 12      # the same per rad of roll or yaw (m/rad)
TR_CANDIDATES = 13      # penetrating minima of the last full scan (more at a tracked pose: scan)
N_TRACK_HEAD = 14
# The full scan is repeated once the pose or the rail moved this far from the
# last one (see wheelset_contact_tracked).
TRACK_MOVE_LENGTH = 2e-4    # m, lateral and vertical
TRACK_MOVE_ANGLE = 2e-4     # rad, roll and yaw
# ... and when a tracked minimum moved more than this many grid points since
# the last search: its basin is flat (a conformal flange, a worn tread), where a
# second minimum can be born next to it unseen by the coarse samples.
TRACK_MAX_WALK = 3

# Columns of the per-point output array of the kernel.
P_S_WHEEL = 0       # lateral coordinate on the wheel profile s (m)
P_U_RAIL = 1        # lateral coordinate on the rail profile u (m)
P_X = 2             # contact point position in the track frame, side-local (m)
P_Y = 3
P_Z = 4
P_GAP = 5           # distance along the rail's vertical axis (m), negative = penetration
P_TAN_CONTACT = 6   # tangent of the contact angle in the track frame
P_WHEEL_SLOPE = 7   # dF/ds at the point
P_WHEEL_F2 = 8      # d2F/ds2 at the point (1/m)
P_RAIL_SLOPE = 9    # dz/du in the rail frame
P_RAIL_Z2 = 10      # d2z/du2 in the rail frame (1/m)
P_RADIUS = 11       # wheel radius at the point (m)
P_SADDLE = 12       # the highest distance between this point and the next contact point
                    # along the wheel profile (+s) (m); +inf for the last point (fill_saddles)
P_SADDLE_POS = 13   # its fractional wheel grid index (NaN with P_SADDLE = +inf)
N_POINT_FIELDS = 14

# Entries of the geometry parameter vector of the kernel.
G_WHEEL_S0 = 0          # first wheel grid abscissa (m)
G_WHEEL_DS = 1          # wheel grid step (m)
G_RAIL_U0 = 2
G_RAIL_DU = 3
G_TAPING_AXIAL = 4      # axial position of the taping line from the wheelset centre (m)
G_NOMINAL_RADIUS = 5
G_RAIL_CENTRE_Y = 6     # lateral position of the rail-head centreline (m, side-local)
G_INCLINATION = 7       # rail inclination angle (rad)
G_E_D = 8
G_E_K = 9
G_COS_INCLINATION = 10  # cos, sin, tan of G_INCLINATION (the rail frame of a rail that does not roll)
G_SIN_INCLINATION = 11
G_TAN_INCLINATION = 12
G_RAIL_INV_DU = 13      # 1 / G_RAIL_DU (the distance function's rail lookup multiplies by it)
N_GEOMETRY_PARAMS = 14

# Wheel and rail tables: columns lateral, height, slope, second derivative.
T_LAT, T_H, T_SLOPE, T_D2 = 0, 1, 2, 3

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


class _AxleFrame(NamedTuple):
    """Axle direction e and the trace-line basis (u1, u2) of `_axle_frame`."""

    ex: float
    ey: float
    ez: float
    u1x: float
    u1y: float
    u1z: float
    u2x: float
    u2y: float
    u2z: float
    inv_s1: float     # 1 / sqrt(1 - ex^2)


class _RailFrame(NamedTuple):
    """The inclined, moved rail of one wheel: where its head centre is and how it is turned."""

    centre_y: float   # lateral position of the rail-head centreline (m, side-local)
    vertical: float   # vertical rail motion (m)
    cos_theta: float  # theta = inclination + rail roll
    sin_theta: float
    tan_theta: float


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


# ---------------------------------------------------------------------------
# Kernel: distance function and its minima for the LEFT wheel (side-local)
# ---------------------------------------------------------------------------

@njit(cache=True, error_model="numpy", _nrt=False)
def _interp_column(table, x0, dx, x, col):
    """Linear interpolation of a column of a uniform-grid table at x (clamped)."""
    n = table.shape[0]
    f = (x - x0) / dx
    if f <= 0.0:
        return table[0, col]
    if f >= n - 1:
        return table[n - 1, col]
    i = int(f)
    t = f - i
    return table[i, col] * (1.0 - t) + table[i + 1, col] * t


@njit(cache=True, error_model="numpy", _nrt=False)
def _cos_sin_tan(theta):
    """cos, sin, tan of theta with the kernels' functions (the same bits as in them)."""
    return np.cos(theta), np.sin(theta), np.tan(theta)


@njit(cache=True, error_model="numpy", _nrt=False)
def _axle_frame(roll, yaw):
    """Axle direction e = Rz(yaw) Rx(roll) (0,1,0) and the basis (u1, u2) of the
    trace-line construction: u1 along the part of x perpendicular to e, u2 = e x u1
    pointing down."""
    return _axle_frame_of(np.cos(roll), np.sin(roll), np.cos(yaw), np.sin(yaw))


@njit(cache=True, error_model="numpy", _nrt=False)
def _axle_frames(pose):
    """_axle_frame of both wheels: of `pose` and of its mirror (_mirrored: roll
    and yaw negated), from one cos and sin of each angle (cos(-x) = cos(x),
    sin(-x) = -sin(x), also to the bit in the C library's functions)."""
    cphi = np.cos(pose.roll)
    sphi = np.sin(pose.roll)
    cpsi = np.cos(pose.yaw)
    spsi = np.sin(pose.yaw)
    return _axle_frame_of(cphi, sphi, cpsi, spsi), _axle_frame_of(cphi, -sphi, cpsi, -spsi)


@njit(cache=True, error_model="numpy", _nrt=False)
def _axle_frame_of(cphi, sphi, cpsi, spsi):
    """_axle_frame from the cos and sin of roll (phi) and yaw (psi)."""
    ex = -spsi * cphi
    ey = cpsi * cphi
    ez = sphi
    s1 = np.sqrt(1.0 - ex * ex)
    u1x = (1.0 - ex * ex) / s1
    u1y = (-ex * ey) / s1
    u1z = (-ex * ez) / s1
    u2x = ey * u1z - ez * u1y
    u2y = ez * u1x - ex * u1z
    u2z = ex * u1y - ey * u1x
    if u2z > 0.0:
        u2x, u2y, u2z = -u2x, -u2y, -u2z
    return _AxleFrame(ex, ey, ez, u1x, u1y, u1z, u2x, u2y, u2z, 1.0 / s1)


@njit(cache=True, error_model="numpy", _nrt=False)
def _rail_frame(params, rail):
    """The rail of one wheel (RailPose `rail`, side-local) placed on the track."""
    if rail.roll == 0.0:
        # inclination + 0 is the inclination: its cos, sin, tan of the set-up
        return _RailFrame(params[G_RAIL_CENTRE_Y] + rail.lateral, rail.vertical,
                          params[G_COS_INCLINATION], params[G_SIN_INCLINATION],
                          params[G_TAN_INCLINATION])
    theta = params[G_INCLINATION] + rail.roll
    return _RailFrame(params[G_RAIL_CENTRE_Y] + rail.lateral, rail.vertical,
                      np.cos(theta), np.sin(theta), np.tan(theta))


@njit(cache=True, error_model="numpy", _nrt=False)
def _mirrored(pose):
    """The pose of the mirrored wheelset (y -> -y): its left wheel is the right wheel."""
    return WheelsetPose(-pose.y, pose.z, -pose.roll, -pose.yaw)


@njit(cache=True, error_model="numpy", _nrt=False)
def _rail_pose(rail_motion, side):
    """RailPose of rail `side` (0 left, 1 right) from the (2, 3) track-frame rail motion,
    in the side-local frame of its wheel (the right rail mirrored)."""
    if side == 0:
        return RailPose(rail_motion[0, 0], rail_motion[0, 1], rail_motion[0, 2])
    return RailPose(-rail_motion[1, 0], rail_motion[1, 1], -rail_motion[1, 2])


@njit(cache=True, error_model="numpy", _nrt=False)
def _wheel_range(tables, y, rail_lateral):
    """Wheel grid indices [k0, k1) that can lie over the rail head (+-10 mm margin)."""
    params = tables.params
    n_w = tables.wheel.shape[0]
    n_r = tables.rail.shape[0]
    u0 = params[G_RAIL_U0]
    u_last = u0 + (n_r - 1) * params[G_RAIL_DU]
    shift = y + params[G_TAPING_AXIAL] - (params[G_RAIL_CENTRE_Y] + rail_lateral) + params[G_WHEEL_S0]
    ds = params[G_WHEEL_DS]
    k0 = int(np.floor((u0 - 0.01 - shift) / ds))
    k1 = int(np.ceil((u_last + 0.01 - shift) / ds)) + 1
    return max(k0, 0), min(k1, n_w)


@njit(cache=True, error_model="numpy", _nrt=False)
def _distance_at(k, tables, pose, rail_frame, axle, work):
    """Trace-line point and wheel-rail distance at wheel grid index k (into work[:, k]).

    The trace-line point P (Wang 1984) is the point of the wheel section at
    axial coordinate a whose surface normal n - r' e has no x component:
    n_x = r' e_x, n the downward unit vector perpendicular to the axle e.
    P is expressed in the frame of the (inclined, moved) rail, u lateral and
    zeta along the rail's vertical axis; the distance is zeta - z_rail(u)
    (negative = penetration), +inf where P is not over the rail head.
    """
    wheel = tables.wheel
    rail = tables.rail
    params = tables.params
    n_r = rail.shape[0]
    a = params[G_TAPING_AXIAL] + wheel[k, T_LAT]
    radius = params[G_NOMINAL_RADIUS] + wheel[k, T_H]
    alpha = wheel[k, T_SLOPE] * axle.ex * axle.inv_s1
    alpha = min(max(alpha, -0.999), 0.999)
    beta = np.sqrt(1.0 - alpha * alpha)
    px = a * axle.ex + radius * (alpha * axle.u1x + beta * axle.u2x)
    py = pose.y + a * axle.ey + radius * (alpha * axle.u1y + beta * axle.u2y)
    pz = pose.z + a * axle.ez + radius * (alpha * axle.u1z + beta * axle.u2z)
    dY = py - rail_frame.centre_y
    dZ = pz - rail_frame.vertical
    u = rail_frame.cos_theta * dY + rail_frame.sin_theta * dZ
    zeta = -rail_frame.sin_theta * dY + rail_frame.cos_theta * dZ
    work[0, k] = u
    work[2, k] = px
    work[3, k] = py
    work[4, k] = pz
    f = (u - params[G_RAIL_U0]) * params[G_RAIL_INV_DU]
    if f <= 0.0 or f >= n_r - 1:
        work[1, k] = np.inf
        return
    i = int(f)
    t = f - i
    work[1, k] = zeta - (rail[i, T_H] * (1.0 - t) + rail[i + 1, T_H] * t)


@njit(cache=True, error_model="numpy", _nrt=False)
def wheel_distance_function(tables, pose, rail, work, stride=1):
    """Distance function of the left wheel (side-local frame) on the wheel grid.

    `pose` a WheelsetPose, `rail` the RailPose of the wheel's rail. Fills
    work[0] = u on the rail, work[1] = distance (m; +inf where not over
    the rail or not evaluated), work[2:5] = trace-line point x, y, z in the
    track frame, at every `stride`-th grid index of the part of the wheel that
    can be over the rail. Returns (k0, k1), the index range examined; entries
    outside it are left as they were (not meaningful).
    """
    rail_frame = _rail_frame(tables.params, rail)
    axle = _axle_frame(pose.roll, pose.yaw)
    k0, k1 = _wheel_range(tables, pose.y, rail.lateral)
    # only [k0, k1) is ever read: reset it (the rest of the wheel is off the rail);
    # a slice fill, which numba vectorises (a scalar loop costs 0.3 us more per wheel)
    work[1, k0:k1] = np.inf
    for k in range(k0, k1, stride):
        _distance_at(k, tables, pose, rail_frame, axle, work)
    return k0, k1


@njit(cache=True, error_model="numpy", _nrt=False)
def _fill_point_row(row, tables, gx, gz, k, t, u, py, gap, tan_contact, rail_slope):
    """One contact point's output row, at the fractional wheel grid index k + t."""
    wheel = tables.wheel
    rail = tables.rail
    params = tables.params
    s0 = params[G_WHEEL_S0]
    ds = params[G_WHEEL_DS]
    s = s0 + (k + t) * ds
    row[P_S_WHEEL] = s
    row[P_U_RAIL] = u
    row[P_X] = gx[k] * (1.0 - t) + gx[k + 1] * t
    row[P_Y] = py
    row[P_Z] = gz[k] * (1.0 - t) + gz[k + 1] * t
    row[P_GAP] = gap
    row[P_TAN_CONTACT] = tan_contact
    row[P_WHEEL_SLOPE] = _interp_column(wheel, s0, ds, s, T_SLOPE)
    row[P_WHEEL_F2] = _interp_column(wheel, s0, ds, s, T_D2)
    row[P_RAIL_SLOPE] = rail_slope
    row[P_RAIL_Z2] = _interp_column(rail, params[G_RAIL_U0], params[G_RAIL_DU], u, T_D2)
    row[P_RADIUS] = params[G_NOMINAL_RADIUS] + _interp_column(wheel, s0, ds, s, T_H)



@njit(cache=True, error_model="numpy", _nrt=False)
def parabola_minimum(g0, g1, g2):
    """The minimum of the parabola through three equally spaced distance samples
    around a grid minimum g1: (its offset t from the middle sample in grid steps,
    its value). (0, g1) if the samples do not bend upwards. The one refinement
    of every search (scan, tracked minima, update, table)."""
    curv = g0 - 2.0 * g1 + g2
    if curv > 0.0:
        t = 0.5 * (g0 - g2) / curv
        return t, g1 - 0.25 * (g0 - g2) * t
    return 0.0, g1


@njit(cache=True, error_model="numpy", _nrt=False)
def _known_minimum(min_pos, n_min, k):
    """True if grid index k is the grid point of one of the first n_min minima
    (fractional grid indices): the one test of the scan and the tracked minima."""
    for m in range(n_min):
        if int(min_pos[m] + 0.5) == k or abs(min_pos[m] - k) < 1.0:
            return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False)
def _window_minima(gg, windows, n_windows, stride, k0, k1, min_pos, min_gap):
    """The local minima of the distance samples `gg` on the full grid inside the
    search windows (a window: `stride` samples either side of windows[w], within
    k0..k1), each refined by the parabola through its three samples: the
    fractional grid index into min_pos, the gap into min_gap (at most
    MAX_MINIMA). Returns their number. Used by the online search and by the
    tabulated geometry (solver.geometry_table), so that both locate a minimum
    with the same arithmetic."""
    n_min = 0
    for w in range(n_windows):
        centre = int(windows[w])
        lo = max(centre - stride - 1, k0 + 1)
        hi = min(centre + stride + 2, k1 - 1)
        for k in range(lo, hi):
            g1 = gg[k]
            if g1 == np.inf:
                continue
            g0 = gg[k - 1]
            g2 = gg[k + 1]
            if not (g1 < g0 and g1 <= g2 and g0 != np.inf and g2 != np.inf):
                continue
            if _known_minimum(min_pos, n_min, k):
                continue
            t, gmin = parabola_minimum(g0, g1, g2)
            if n_min < MAX_MINIMA:
                min_pos[n_min] = k + t
                min_gap[n_min] = gmin
                n_min += 1
    return n_min

@njit(cache=True, error_model="numpy", _nrt=False)
def _hump_side(tables, pose, rail_frame, axle, work, k, direction, k0, k1):
    """From the minimum at grid index k, walk in `direction` over the hump to the
    other side (every sample computed at this pose: the tracked search keeps
    samples of other poses in work). True if the hump rises less than SHALLOW_HUMP
    above gg[k] and beyond it the function falls below gg[k] within SHALLOW_WALK
    points: the minimum lies in a deeper one's basin."""
    gg = work[1]
    _distance_at(k, tables, pose, rail_frame, axle, work)
    floor = gg[k]
    top = floor
    passed = False          # over the top of the hump
    q = k
    for _ in range(SHALLOW_WALK):
        q += direction
        if q < k0 or q >= k1:
            return False
        _distance_at(q, tables, pose, rail_frame, axle, work)
        g = gg[q]
        if g == np.inf:
            return False
        if not passed:
            if g > top:
                top = g
                if top - floor >= SHALLOW_HUMP:
                    return False
            elif g < top:
                passed = True
        if passed and g < floor:
            return True
        if passed and g > top:
            return False        # rising again: a basin of its own, not deeper
    return False


@njit(cache=True, error_model="numpy", _nrt=False)
def drop_shallow_minima(tables, pose, rail, work, k0, k1, min_pos, min_gap, n_min):
    """Remove from min_pos / min_gap (in place, order kept) every minimum but the
    deepest that a hump lower than SHALLOW_HUMP separates from a deeper part of the
    distance function (_hump_side). Returns the number left."""
    if n_min < 2:
        return n_min
    rail_frame = _rail_frame(tables.params, rail)
    axle = _axle_frame(pose.roll, pose.yaw)
    deepest = 0
    for m in range(1, n_min):
        if min_gap[m] < min_gap[deepest]:
            deepest = m
    n_keep = 0
    for m in range(n_min):
        k = int(min_pos[m] + 0.5)
        shallow = m != deepest and (
            _hump_side(tables, pose, rail_frame, axle, work, k, -1, k0, k1)
            or _hump_side(tables, pose, rail_frame, axle, work, k, 1, k0, k1))
        if not shallow:
            min_pos[n_keep] = min_pos[m]
            min_gap[n_keep] = min_gap[m]
            n_keep += 1
    return n_keep


@njit(cache=True, error_model="numpy", _nrt=False)
def scan_minima(tables, pose, rail, work, windows, min_pos, min_gap):
    """The scan of wheel_distance_minima: the local minima of the left wheel's
    distance function (side-local frame), deepest first, into min_pos
    (fractional grid index) and min_gap (m), MAX_MINIMA each; windows a
    scratch row of the wheel grid's length (grid indices, as floats). Returns (n_min, fallback):
    n_min = -1 if the wheel is not over the rail (fewer than two coarse
    samples); fallback True when there is no interior minimum and the smallest
    sample stands in."""
    gg = work[1]
    stride = COARSE_STRIDE
    k0, k1 = wheel_distance_function(tables, pose, rail, work, stride)
    # Coarse minima (maxima rejected), then the full grid around each, and over
    # the whole interpenetration (coarse samples <= 0): a minimum there carries
    # load even when it is too shallow for the coarse samples to show it.
    n_windows, n_coarse = coarse_minima(gg, k0, k1, windows)
    if n_coarse < 2:
        return -1, False
    for k in range(k0, k1, stride):
        if gg[k] <= 0.0 and n_windows < windows.shape[0]:
            windows[n_windows] = k
            n_windows += 1
    fill_windows(tables, pose, rail, work, windows, n_windows, k0, k1)
    # 1. Local minima on the full grid inside the windows, refined by a parabola,
    # without those in a deeper one's basin.
    n_min = _window_minima(gg, windows, n_windows, stride, k0, k1, min_pos, min_gap)
    n_min = drop_shallow_minima(tables, pose, rail, work, k0, k1, min_pos, min_gap, n_min)
    # No interior minimum (e.g. the wheel far off the rail): the smallest sample.
    fallback = False
    if n_min == 0:
        best = -1
        for k in range(k0, k1):
            if gg[k] != np.inf and (best < 0 or gg[k] < gg[best]):
                best = k
        min_pos[0] = best
        min_gap[0] = gg[best]
        n_min = 1
        fallback = True
    sort_minima(min_pos, min_gap, n_min)
    return n_min, fallback


@njit(cache=True, error_model="numpy", _nrt=False)
def coarse_minima(gg, k0, k1, windows):
    """The local minima of the coarse samples gg[k0::COARSE_STRIDE] below k1 (a
    sample lower than the one before and not higher than the one after; a
    missing neighbour or one off the rail counts as +inf): their grid indices
    into windows (at most MAX_MINIMA). Returns (their number, the number of
    coarse samples over the rail)."""
    stride = COARSE_STRIDE
    n_coarse = 0
    prev2 = np.inf
    prev1 = np.inf
    kprev = -1
    n_windows = 0
    for k in range(k0, k1, stride):
        g = gg[k]
        if g != np.inf:
            n_coarse += 1
        # a minimum at kprev: prev1 < prev2 (or prev2 missing) and prev1 <= g (or g missing)
        if kprev >= 0 and prev1 != np.inf and prev1 < prev2 and prev1 <= g:
            if n_windows < MAX_MINIMA:
                windows[n_windows] = kprev
                n_windows += 1
        prev2 = prev1
        prev1 = g
        kprev = k
    if kprev >= 0 and prev1 != np.inf and prev1 < prev2 and n_windows < MAX_MINIMA:
        windows[n_windows] = kprev
        n_windows += 1
    return n_windows, n_coarse


@njit(cache=True, error_model="numpy", _nrt=False)
def fill_windows(tables, pose, rail, work, windows, n_windows, k0, k1):
    """The distance function on the full grid inside the search windows of
    scan_minima: COARSE_STRIDE + 1 samples either side of each coarse minimum,
    within k0..k1, where not sampled yet (+inf)."""
    stride = COARSE_STRIDE
    gg = work[1]
    rail_frame = _rail_frame(tables.params, rail)
    axle = _axle_frame(pose.roll, pose.yaw)
    for w in range(n_windows):
        centre = int(windows[w])
        lo = max(centre - stride - 1, k0)
        hi = min(centre + stride + 2, k1)
        for k in range(lo, hi):
            if gg[k] == np.inf:
                _distance_at(k, tables, pose, rail_frame, axle, work)


@njit(cache=True, error_model="numpy", _nrt=False)
def sort_minima(min_pos, min_gap, n_min):
    """Sort the first n_min minima by depth, deepest first (insertion sort, n_min is small)."""
    for i in range(1, n_min):
        pg = min_gap[i]
        pp = min_pos[i]
        m = i - 1
        while m >= 0 and min_gap[m] > pg:
            min_gap[m + 1] = min_gap[m]
            min_pos[m + 1] = min_pos[m]
            m -= 1
        min_gap[m + 1] = pg
        min_pos[m + 1] = pp


@njit(cache=True, error_model="numpy", _nrt=False)
def select_minima(tables, rail, epsilon, work, min_pos, min_gap, n_min, out):
    """The contact points among the minima of scan_minima (deepest first; `work`
    as the scan left it), into out, deepest first. Returns their number.

    Elastic mode (epsilon < 0, the dynamics): the deepest minimum and every
    other minimum that penetrates (distance <= 0), up to MAX_POINTS. No
    independence test: how much load two penetrating minima share follows
    from the distance function between them (the saddle, fill_saddles, and
    solver.normal.merged_patch_forces_kernel), continuously.

    Static mode (epsilon >= 0, the rigid analysis of Ren & Jin 2010): the minima
    within epsilon of the deepest are candidates (Eq. 4); a candidate is a
    point of its own when, against every point already accepted, the two are
    at least e_d apart (Eq. 5, measured in the cross-section plane, so that
    points on the steep flange count their height difference too), their
    slopes differ by at least e_k (Eq. 7) and the distance function rises
    between them above the compression level (Eq. 6); otherwise it belongs to
    the deeper point's patch.
    """
    params = tables.params
    n_w = tables.wheel.shape[0]
    gu = work[0]
    gg = work[1]
    gx = work[2]
    gy = work[3]
    gz = work[4]
    elastic = epsilon < 0.0
    level = 0.0 if elastic else min_gap[0] + epsilon
    e_d = params[G_E_D]
    e_k = params[G_E_K]
    u0 = params[G_RAIL_U0]
    du = params[G_RAIL_DU]
    tan_theta = _rail_frame(params, rail).tan_theta
    n_acc = 0
    # the accepted points: their rows of `out` (y, z, gap, tangent) and their
    # grid positions (work row W_ACCEPTED_POS)
    acc_pos = work[W_ACCEPTED_POS]
    for i in range(n_min):
        if n_acc >= MAX_POINTS:
            break
        if i > 0 and min_gap[i] > level:
            break
        pos = min_pos[i]
        k = int(pos)
        t = pos - k
        if k >= n_w - 1:
            k = n_w - 2
            t = 1.0
        u = gu[k] * (1.0 - t) + gu[k + 1] * t
        py = gy[k] * (1.0 - t) + gy[k + 1] * t
        zp = _interp_column(tables.rail, u0, du, u, T_SLOPE)
        # Tangent of the contact angle in the track frame: rail slope plus inclination.
        tan_c = (zp + tan_theta) / (1.0 - zp * tan_theta)
        independent = True
        pz = gz[k] * (1.0 - t) + gz[k + 1] * t
        for m in range(n_acc if not elastic else 0):
            dy_ = py - out[m, P_Y]
            dz_ = pz - out[m, P_Z]
            if dy_ * dy_ + dz_ * dz_ < e_d * e_d:
                independent = False
                break
            if abs(tan_c - out[m, P_TAN_CONTACT]) < e_k:
                independent = False
                break
            # Intermediate maximum of the distance function between the two (Eq. 6).
            lo = int(min(pos, acc_pos[m]))
            hi = min(int(max(pos, acc_pos[m])) + 1, n_w - 1)
            level_between = level + HUMP_MIN     # the compression level of the static analysis
            hump = -np.inf
            for q in range(lo, hi + 1):
                if gg[q] != np.inf and gg[q] > hump:
                    hump = gg[q]
            if not hump > level_between:
                independent = False
                break
        if not independent:
            continue
        acc_pos[n_acc] = pos
        _fill_point_row(out[n_acc], tables, gx, gz, k, t, u, py, min_gap[i], tan_c, zp)
        n_acc += 1
    return n_acc


@njit(cache=True, error_model="numpy", _nrt=False)
def _walk_to_maximum(k, lo, hi, tables, pose, rail_frame, axle, work):
    """From grid index k in [lo, hi], step uphill on the sampled distance function
    until a grid point is not below either neighbour inside [lo, hi]. Returns it;
    its neighbours are evaluated (into work) where they lie in [lo - 1, hi + 1]."""
    gg = work[1]
    for q in range(k - 1, k + 2):
        _distance_at(q, tables, pose, rail_frame, axle, work)
    for _ in range(hi - lo + 1):
        if k > lo and gg[k - 1] > gg[k]:
            k -= 1
            _distance_at(k - 1, tables, pose, rail_frame, axle, work)
        elif k < hi and gg[k + 1] > gg[k]:
            k += 1
            _distance_at(k + 1, tables, pose, rail_frame, axle, work)
        else:
            break
    return k


@njit(cache=True, error_model="numpy", _nrt=False)
def _saddle_between(tables, pose, rail_frame, axle, work, pos_a, pos_b, gap_a, gap_b, k0, hint):
    """The highest distance between two minima at fractional grid indices
    pos_a <= pos_b (gaps gap_a, gap_b): (value, fractional grid index).

    hint < 0 (a full search): the coarse samples of the scan's grid (every
    COARSE_STRIDE-th index from k0) between the two; a sample >= 0 answers at
    once (their patches do not touch, the exact height does not matter); else
    the highest is refined by an uphill walk on the full grid and the parabola
    of the minima (parabola_minimum of the negated samples). Every full search
    (scan, tracked minima, table) computes the same value for the same points.
    hint >= 0 (the re-location within a step): the walk starts from the grid
    index of the saddle at the step's start. With no grid point strictly
    between the two (one basin), the higher of the two minima."""
    gg = work[1]
    lo = int(math.floor(pos_a)) + 1
    hi = int(math.ceil(pos_b)) - 1
    if lo > hi:
        if gap_a >= gap_b:
            return gap_a, pos_a
        return gap_b, pos_b
    stride = COARSE_STRIDE
    if hint >= 0.0:
        best = min(max(int(hint + 0.5), lo), hi)
    else:
        best = -1
        first = k0 + ((max(lo, k0) - k0 + stride - 1) // stride) * stride
        for q in range(first, hi + 1, stride):
            _distance_at(q, tables, pose, rail_frame, axle, work)
            if gg[q] >= 0.0:
                return gg[q], float(q)
            if best < 0 or gg[q] > gg[best]:
                best = q
        if best < 0:
            for q in range(lo, hi + 1):
                _distance_at(q, tables, pose, rail_frame, axle, work)
                if best < 0 or gg[q] > gg[best]:
                    best = q
    k = _walk_to_maximum(best, lo, hi, tables, pose, rail_frame, axle, work)
    g0 = gg[k - 1]
    g1 = gg[k]
    g2 = gg[k + 1]
    if g1 == np.inf:
        return np.inf, float(k)
    if g0 <= g1 and g2 <= g1 and g0 != np.inf and g2 != np.inf:
        t, neg = parabola_minimum(-g0, -g1, -g2)
        return -neg, k + t
    return g1, float(k)


@njit(cache=True, error_model="numpy", _nrt=False)
def _next_along_profile(out, n, i):
    """The point after point i along the wheel profile (+s; equal s: the higher
    index), -1 for the last."""
    si = out[i, P_S_WHEEL]
    nxt = -1
    for j in range(n):
        sj = out[j, P_S_WHEEL]
        if sj > si or (sj == si and j > i):
            if nxt < 0 or sj < out[nxt, P_S_WHEEL] or (sj == out[nxt, P_S_WHEEL] and j < nxt):
                nxt = j
    return nxt


@njit(cache=True, error_model="numpy", _nrt=False)
def fill_saddles(tables, pose, rail, work, out, n, axle, use_hints):
    """P_SADDLE and P_SADDLE_POS of the n points in `out` (side-local): the
    saddle between each point and the next along the wheel profile
    (_saddle_between), +inf / NaN for the last. use_hints: start from the
    saddles in `out` (the re-location within a step) instead of a full search."""
    params = tables.params
    s0 = params[G_WHEEL_S0]
    ds = params[G_WHEEL_DS]
    rail_frame = _rail_frame(params, rail)
    k0, k1 = _wheel_range(tables, pose.y, rail.lateral)
    for i in range(n):
        hint = -1.0
        if use_hints and out[i, P_SADDLE_POS] == out[i, P_SADDLE_POS]:
            hint = out[i, P_SADDLE_POS]
        out[i, P_SADDLE] = np.inf
        out[i, P_SADDLE_POS] = np.nan
        j = _next_along_profile(out, n, i)
        if j < 0:
            continue
        pos_a = (out[i, P_S_WHEEL] - s0) / ds
        pos_b = (out[j, P_S_WHEEL] - s0) / ds
        saddle, saddle_pos = _saddle_between(tables, pose, rail_frame, axle, work, pos_a, pos_b,
                                             out[i, P_GAP], out[j, P_GAP], k0, hint)
        out[i, P_SADDLE] = saddle
        out[i, P_SADDLE_POS] = saddle_pos


@njit(cache=True, error_model="numpy", _nrt=False)
def wheel_distance_minima(tables, pose, rail, epsilon, work, out):
    """Contact points of the left wheel (side-local frame) by the trace-line extremum method.

    The distance function is first sampled every COARSE_STRIDE grid points;
    around each coarse minimum it is then evaluated on the full profile grid
    (0.1 mm by default), where the minima are located and refined by a
    parabola (scan_minima); then the multipoint selection (select_minima).
    `pose` is a WheelsetPose, `rail` the RailPose of the wheel's
    rail (side-local); `work` is a (N_WORK_ROWS, n_wheel) scratch array; `out` a (MAX_POINTS,
    N_POINT_FIELDS) array that receives the points, deepest first. Returns the
    number of contact points (>= 1 when the wheel is over the rail at all).
    """
    min_pos = work[W_MINIMA_POS]
    min_gap = work[W_MINIMA_GAP]
    n_min, fallback = scan_minima(tables, pose, rail, work, work[W_WINDOWS], min_pos, min_gap)
    if n_min < 0:
        return 0
    n_acc = select_minima(tables, rail, epsilon, work, min_pos, min_gap, n_min, out)
    fill_saddles(tables, pose, rail, work, out, n_acc, _axle_frame(pose.roll, pose.yaw), False)
    return n_acc


@njit(cache=True, error_model="numpy", _nrt=False)
def wheelset_contact_kernel(tables, pose, rail_motion, epsilon, buffers):
    """Both wheels. `pose` a WheelsetPose; rail_motion is a (2, 3) array: lateral,
    vertical (m), roll (rad) per rail (left, right) in the track frame.
    `buffers.points` (2, MAX_POINTS, N_POINT_FIELDS) is filled in the TRACK frame
    (the right wheel's Y mirrored back), `buffers.counts` (2,)."""
    out = buffers.points
    counts = buffers.counts
    counts[0] = wheel_distance_minima(tables, pose, _rail_pose(rail_motion, 0), epsilon,
                                      buffers.work, out[0])
    # Right wheel: the left wheel of the mirrored wheelset.
    counts[1] = wheel_distance_minima(tables, _mirrored(pose), _rail_pose(rail_motion, 1), epsilon,
                                      buffers.work, out[1])
    for i in range(counts[1]):
        out[1, i, P_Y] = -out[1, i, P_Y]


@njit(cache=True, error_model="numpy", _nrt=False)
def walk_to_minimum(k, tables, pose, rail_frame, axle, work, max_steps):
    """Warm start of a contact point: from wheel grid index k (its previous place),
    evaluate the distance function at k-1, k, k+1 and step downhill until a grid
    point is not above either neighbour (a local minimum of the sampled distance
    function, as the full search finds them). Returns its index, with the three
    samples around it in `work`, or -1 if none is reached within max_steps steps,
    the walk leaves the profile, or a sample is off the rail."""
    n_w = tables.wheel.shape[0]
    gg = work[1]
    if k < 1 or k > n_w - 2:
        return -1
    for q in range(k - 1, k + 2):
        _distance_at(q, tables, pose, rail_frame, axle, work)
    for _ in range(max_steps + 1):
        if gg[k - 1] == np.inf or gg[k] == np.inf or gg[k + 1] == np.inf:
            return -1
        if gg[k - 1] < gg[k]:
            k -= 1
            if k < 1:
                return -1
            _distance_at(k - 1, tables, pose, rail_frame, axle, work)
        elif gg[k + 1] < gg[k]:
            k += 1
            if k > n_w - 2:
                return -1
            _distance_at(k + 1, tables, pose, rail_frame, axle, work)
        else:
            return k
    return -1


@njit(cache=True, error_model="numpy", _nrt=False)
def wheel_contact_update(tables, pose, rail, count, work, out, axle):
    """Re-locate the contact points already in `out` (side-local frame) at a new pose.

    For each of the `count` points the local minimum of the distance function
    next to its previous position is found by `walk_to_minimum` (warm start: a
    few evaluations; if that fails, the smallest distance on the full grid within
    +-UPDATE_HALF_WINDOW points), refined by the parabola, and replaces the row;
    the saddles between them are re-located from their places (fill_saddles). The set of
    contact points is kept: the integrator uses this for the intermediate
    stages of one step, the full search (`wheel_distance_minima`) at its start.
    axle: the _axle_frame of pose.
    """
    params = tables.params
    n_w = tables.wheel.shape[0]
    rail_frame = _rail_frame(params, rail)
    s0 = params[G_WHEEL_S0]
    ds = params[G_WHEEL_DS]
    u0 = params[G_RAIL_U0]
    du = params[G_RAIL_DU]
    tan_theta = rail_frame.tan_theta
    gu = work[0]
    gg = work[1]
    gx = work[2]
    gy = work[3]
    gz = work[4]
    for i in range(count):
        row = out[i]
        kc = int(round((row[P_S_WHEEL] - s0) / ds))
        # warm start: walk down from the previous point (a few evaluations) ...
        best = walk_to_minimum(kc, tables, pose, rail_frame, axle, work, UPDATE_HALF_WINDOW)
        if best < 0:
            # ... else the smallest distance within the window around it
            lo = max(kc - UPDATE_HALF_WINDOW, 1)
            hi = min(kc + UPDATE_HALF_WINDOW + 1, n_w - 1)
            for k in range(lo - 1, hi + 1):
                _distance_at(k, tables, pose, rail_frame, axle, work)
            for k in range(lo, hi):
                if gg[k] != np.inf and (best < 0 or gg[k] < gg[best]):
                    best = k
        if best < 0:
            row[P_GAP] = np.inf
            continue
        g0 = gg[best - 1]
        g1 = gg[best]
        g2 = gg[best + 1]
        t = 0.0
        gmin = g1
        if g0 != np.inf and g2 != np.inf:
            t, gmin = parabola_minimum(g0, g1, g2)
        k = best
        if t < 0.0:
            k -= 1
            t += 1.0
        u = gu[k] * (1.0 - t) + gu[k + 1] * t
        zp = _interp_column(tables.rail, u0, du, u, T_SLOPE)
        _fill_point_row(row, tables, gx, gz, k, t, u, gy[k] * (1.0 - t) + gy[k + 1] * t,
                        gmin, (zp + tan_theta) / (1.0 - zp * tan_theta), zp)
    fill_saddles(tables, pose, rail, work, out, count, axle, True)


@njit(cache=True, error_model="numpy", _nrt=False)
def wheelset_contact_update(tables, pose, rail_motion, buffers):
    """Both wheels: `wheel_contact_update` of the points in `buffers` (track frame,
    as left by `wheelset_contact_kernel`)."""
    out = buffers.points
    counts = buffers.counts
    axle_left, axle_right = _axle_frames(pose)
    wheel_contact_update(tables, pose, _rail_pose(rail_motion, 0), counts[0], buffers.work, out[0],
                         axle_left)
    for i in range(counts[1]):
        out[1, i, P_Y] = -out[1, i, P_Y]
    wheel_contact_update(tables, _mirrored(pose), _rail_pose(rail_motion, 1), counts[1],
                         buffers.work, out[1], axle_right)
    for i in range(counts[1]):
        out[1, i, P_Y] = -out[1, i, P_Y]


def forget_tracked_minima(work):
    """No tracked minima on either wheel: the next wheelset_contact_tracked scans
    both (a new scratch, a state set from outside)."""
    for side in range(2):
        work[W_TRACK_HEAD + side, :N_TRACK_HEAD] = 0.0


@njit(cache=True, error_model="numpy", _nrt=False)
def _near_last_scan(head, pose, rail):
    """True if the pose and the rail are within TRACK_MOVE_* of the last full scan
    in `head` and no new contact can have been born from a shoulder of the
    distance function: a distance sample moves by at most `change` (the motion
    times the rates in head, see _record_scan), and the scan's lowest shoulder
    (TR_CLEARANCE) stays above twice that. False for anything not finite."""
    dy = abs(pose.y - head[TR_POSE])
    dz = abs(pose.z - head[TR_POSE + 1])
    droll = abs(pose.roll - head[TR_POSE + 2])
    dyaw = abs(pose.yaw - head[TR_POSE + 3])
    d_lat = abs(rail.lateral - head[TR_RAIL])
    d_vert = abs(rail.vertical - head[TR_RAIL + 1])
    d_roll = abs(rail.roll - head[TR_RAIL + 2])
    if not (max(dy, dz, d_lat, d_vert) <= TRACK_MOVE_LENGTH
            and max(droll, dyaw, d_roll) <= TRACK_MOVE_ANGLE):
        return False
    change = ((dy + dz + d_lat + d_vert) * head[TR_RATE_LENGTH]
              + (droll + dyaw + d_roll) * head[TR_RATE_ANGLE])
    return 2.0 * change < head[TR_CLEARANCE]


@njit(cache=True, error_model="numpy", _nrt=False)
def _shoulder_clearance(gg, k0, k1):
    """The lowest distance of the shoulders of the coarse samples gg[k0:k1:COARSE_STRIDE]:
    where the function flattens without turning (the steps to either side of a
    step are steeper and of the same sign), i.e. where a new minimum is born when
    the pose changes (the flange approaching its rail), and the first and last
    samples over the rail (a minimum may also appear at an end). +inf if none."""
    stride = COARSE_STRIDE
    clearance = np.inf
    g0 = np.inf             # the two samples before this one in the run over the rail
    g1 = np.inf
    d_prev = 0.0            # the steps g1 - g0 and the one before it
    d_cur = 0.0
    n = 0                   # samples in the current run over the rail
    for k in range(k0, k1, stride):
        g = gg[k]
        if g == np.inf:
            if n > 0:
                clearance = min(clearance, g1)      # the end of a run
            n = 0
            continue
        if n == 0:
            clearance = min(clearance, g)           # the start of a run
        else:
            d_next = g - g1
            # the step d_cur (g0 to g1) is a shoulder if it is flatter than the
            # steps on either side, all three of one sign
            if n >= 3 and ((d_prev < 0.0 and d_cur < 0.0 and d_next < 0.0)
                           or (d_prev > 0.0 and d_cur > 0.0 and d_next > 0.0)):
                if abs(d_cur) < abs(d_prev) and abs(d_cur) <= abs(d_next):
                    clearance = min(clearance, g0, g1)
            d_prev = d_cur
            d_cur = d_next
        g0 = g1
        g1 = g
        n += 1
    if n > 0:
        clearance = min(clearance, g1)
    return clearance


@njit(cache=True, error_model="numpy", _nrt=False)
def _convex_window(gg, k):
    """True if the distance samples of the scan's window around grid index k
    (k +- COARSE_STRIDE, where sampled) bend upwards at every sample: a smooth
    basin. A plateau with wiggles of the profile (a conformal flange) fails:
    there a second minimum is born next to the first from one step to the next,
    which only a scan sees."""
    lo = max(k - COARSE_STRIDE, 1)
    hi = min(k + COARSE_STRIDE, gg.shape[0] - 2)
    for q in range(lo, hi + 1):
        g0 = gg[q - 1]
        g1 = gg[q]
        g2 = gg[q + 1]
        if g0 == np.inf or g1 == np.inf or g2 == np.inf:
            continue
        if not g0 - 2.0 * g1 + g2 > 0.0:
            return False
    return True


@njit(cache=True, error_model="numpy", _nrt=False)
def _penetrating_shoulder(gg, k0, k1):
    """True if the scan's full-grid samples of the interpenetration (gg <= 0) show
    a shoulder: a step flatter than the steps on either side, all three of one
    sign. There a new minimum can be born from one step to the next (a fold of
    the distance function), and it carries load from birth: only a scan sees it."""
    for k in range(max(k0, 1), k1 - 2):
        g0 = gg[k - 1]
        g1 = gg[k]
        g2 = gg[k + 1]
        g3 = gg[k + 2]
        if not (g1 <= 0.0 or g2 <= 0.0):
            continue
        if g0 == np.inf or g3 == np.inf:
            continue
        d_prev = g1 - g0
        d_cur = g2 - g1
        d_next = g3 - g2
        if ((d_prev < 0.0 and d_cur < 0.0 and d_next < 0.0)
                or (d_prev > 0.0 and d_cur > 0.0 and d_next > 0.0)):
            if abs(d_cur) < abs(d_prev) and abs(d_cur) <= abs(d_next):
                return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False)
def _record_scan(tables, pose, rail, work, min_pos, n_min, k0, k1, head, track_pos):
    """Keep the minima of a full scan (grid positions into track_pos) with its pose,
    the clearance of its shoulders (_shoulder_clearance) and, once per scratch,
    the rates that bound how fast a distance sample changes with the pose."""
    if head[TR_RATE_LENGTH] == 0.0:
        params = tables.params
        wheel = tables.wheel
        rail_t = tables.rail
        # a distance sample: zeta - z_rail(u). A motion of the point by d (any
        # direction across the rail) changes it by at most d (1 + s), s the steepest
        # rail slope in the track frame (with the inclination and a rail roll of
        # TRACK_MOVE_ANGLE); roll and yaw move the point by at most (axial arm +
        # radius) per rad
        s_rail = 0.0
        for i in range(rail_t.shape[0]):
            s_rail = max(s_rail, abs(rail_t[i, T_SLOPE]))
        tan_incl = abs(np.tan(params[G_INCLINATION])) + TRACK_MOVE_ANGLE
        s_rail = (s_rail + tan_incl) / max(1.0 - s_rail * tan_incl, 1e-3)
        arm = abs(params[G_TAPING_AXIAL]) + max(abs(wheel[0, T_LAT]), abs(wheel[-1, T_LAT]))
        radius = params[G_NOMINAL_RADIUS] + max(abs(wheel[0, T_H]), abs(wheel[-1, T_H]))
        head[TR_RATE_LENGTH] = 1.0 + s_rail
        head[TR_RATE_ANGLE] = (arm + radius) * (1.0 + s_rail)
    for m in range(n_min):
        track_pos[m] = min_pos[m]
    head[TR_COUNT] = n_min
    head[TR_POSE] = pose.y
    head[TR_POSE + 1] = pose.z
    head[TR_POSE + 2] = pose.roll
    head[TR_POSE + 3] = pose.yaw
    head[TR_RAIL] = rail.lateral
    head[TR_RAIL + 1] = rail.vertical
    head[TR_RAIL + 2] = rail.roll
    head[TR_CLEARANCE] = _shoulder_clearance(work[1], k0, k1)


@njit(cache=True, error_model="numpy", _nrt=False)
def _tracked_points(tables, pose, rail, epsilon, work, head, track_pos, out, axle):
    """The contact points of wheel_distance_minima from the tracked minima, or -1
    when they cannot answer for sure (then the caller scans).

    Each minimum of the last full scan is walked down to its local minimum of
    the sampled distance function at this pose (walk_to_minimum) and refined by
    the same parabola as in the scan (parabola_minimum): the same grid samples,
    the same arithmetic, so the same position and gap bit for bit; the saddles
    between the points are those of the scan's search (fill_saddles). -1:
    elastic mode off (epsilon >= 0), a walk that fails, ends on a tie or goes
    farther than TRACK_MAX_WALK grid points, two minima walking into one, no
    penetrating minimum (a lifted wheel: a new deepest minimum could appear
    anywhere), more penetrating minima than at the scan (a minimum that starts
    to penetrate: its basin was not checked for convexity, see
    wheel_contact_tracked), more penetrating minima than contact points."""
    if epsilon >= 0.0:
        return -1
    n_tr = int(head[TR_COUNT])
    rail_frame = _rail_frame(tables.params, rail)
    gg = work[1]
    min_pos = work[W_MINIMA_POS]
    min_gap = work[W_MINIMA_GAP]
    for m in range(n_tr):
        start = int(track_pos[m] + 0.5)
        k = walk_to_minimum(start, tables, pose, rail_frame, axle, work, TRACK_MAX_WALK)
        # the scan takes k only if strictly below its left neighbour
        if k < 0 or not gg[k] < gg[k - 1] or _known_minimum(min_pos, m, k):
            return -1
        t, gmin = parabola_minimum(gg[k - 1], gg[k], gg[k + 1])
        min_pos[m] = k + t
        min_gap[m] = gmin
    k0, k1 = _wheel_range(tables, pose.y, rail.lateral)
    n_kept = drop_shallow_minima(tables, pose, rail, work, k0, k1, min_pos, min_gap, n_tr)
    if n_kept < n_tr:
        return -1           # a tracked minimum merged into a deeper one's basin: scan
    sort_minima(min_pos, min_gap, n_tr)
    if not min_gap[0] < 0.0:
        return -1
    # the penetrating minima (candidates, level 0 in the elastic mode)
    n_cand = 0
    for m in range(n_tr):
        if min_gap[m] <= 0.0:
            n_cand += 1
    if n_cand > head[TR_CANDIDATES]:
        return -1
    for m in range(n_tr):
        track_pos[m] = min_pos[m]
    n_acc = select_minima(tables, rail, epsilon, work, min_pos, min_gap, n_tr, out)
    # more penetrating minima than contact points: the scan decides which
    if n_acc < n_cand:
        return -1
    fill_saddles(tables, pose, rail, work, out, n_acc, axle, False)
    return n_acc


@njit(cache=True, error_model="numpy", _nrt=False)
def wheel_contact_tracked(tables, pose, rail, epsilon, work, head, track_pos, out, axle):
    """wheel_distance_minima with the full scan only when needed: the minima of
    the last full scan are re-located at this pose (_tracked_points) while the
    pose and the rail stay within TRACK_MOVE_* of that scan; else, or when the
    tracked minima cannot answer for sure, the full scan, whose minima are kept
    (head: the row W_TRACK_HEAD + side of `work`, track_pos: W_TRACK_POS + side;
    axle: the _axle_frame of pose)."""
    n_tr = head[TR_COUNT]
    if n_tr >= 1.0 and n_tr <= MAX_MINIMA and _near_last_scan(head, pose, rail):
        n = _tracked_points(tables, pose, rail, epsilon, work, head, track_pos, out, axle)
        if n >= 0:
            head[TR_TRACKED] += 1.0
            return n
    head[TR_SCANS] += 1.0
    head[TR_COUNT] = 0.0
    min_pos = work[W_MINIMA_POS]
    min_gap = work[W_MINIMA_GAP]
    n_min, fallback = scan_minima(tables, pose, rail, work, work[W_WINDOWS], min_pos, min_gap)
    if n_min < 0:
        return 0
    n_acc = select_minima(tables, rail, epsilon, work, min_pos, min_gap, n_min, out)
    fill_saddles(tables, pose, rail, work, out, n_acc, axle, False)
    # the minima are kept unless the scan fell back on its smallest sample or
    # filled its list, or there were more penetrating minima than contact
    # points, or the interpenetration has a shoulder (_penetrating_shoulder), or
    # a penetrating minimum lies in a basin that is not convex on the grid (a flat basin with
    # several minima, a conformal flange: within micrometres of depth the
    # deepest of them jumps from one to another, which only the scan can follow)
    n_cand = 0
    convex = True
    for m in range(n_min):
        if min_gap[m] <= 0.0:
            n_cand += 1
            convex = convex and _convex_window(work[1], int(min_pos[m] + 0.5))
    # (the convexity is known for the penetrating minima only: a minimum that starts
    # to penetrate at a tracked pose sends the search back to the scan,
    # _tracked_points; measured: on the hard-flange run of tests/test_contact_tracking.py
    # a minimum 0.15 um above its rail at the scan penetrated within the next
    # substeps, on a plateau where a second minimum was born 1 mm away and became
    # the deepest)
    k0, k1 = _wheel_range(tables, pose.y, rail.lateral)
    if (not fallback and n_min < MAX_MINIMA and n_cand <= n_acc and convex
            and not _penetrating_shoulder(work[1], k0, k1)):
        _record_scan(tables, pose, rail, work, min_pos, n_min, k0, k1, head, track_pos)
        head[TR_CANDIDATES] = n_cand
    return n_acc


@njit(cache=True, error_model="numpy", _nrt=False)
def wheelset_contact_tracked(tables, pose, rail_motion, epsilon, buffers):
    """wheelset_contact_kernel (the same points, same arguments) with the full
    scan of each wheel only when its tracked minima cannot answer
    (wheel_contact_tracked): the search of the dynamics in the online mode."""
    out = buffers.points
    counts = buffers.counts
    work = buffers.work
    axle_left, axle_right = _axle_frames(pose)
    counts[0] = wheel_contact_tracked(tables, pose, _rail_pose(rail_motion, 0), epsilon, work,
                                      work[W_TRACK_HEAD], work[W_TRACK_POS], out[0], axle_left)
    counts[1] = wheel_contact_tracked(tables, _mirrored(pose), _rail_pose(rail_motion, 1), epsilon,
                                      work, work[W_TRACK_HEAD + 1], work[W_TRACK_POS + 1], out[1],
                                      axle_right)
    for i in range(counts[1]):
        out[1, i, P_Y] = -out[1, i, P_Y]


# ---------------------------------------------------------------------------
# NumPy reference of the same algorithm
# ---------------------------------------------------------------------------

def wheel_distance_function_reference(tables: ContactTables, pose: WheelsetPose,
                                      rail_pose: RailPose = RailPose(0.0, 0.0, 0.0)):
    """Vectorised NumPy version of `wheel_distance_function`: returns (u, gap, X, Y, Z)."""
    wheel, rail, params = tables
    y, z, roll, yaw = pose
    rail_dy, rail_dz, rail_roll = rail_pose
    s = wheel[:, T_LAT]
    a = params[G_TAPING_AXIAL] + s
    radius = params[G_NOMINAL_RADIUS] + wheel[:, T_H]
    e = np.array([-np.sin(yaw) * np.cos(roll), np.cos(yaw) * np.cos(roll), np.sin(roll)])
    u1 = np.array([1.0, 0.0, 0.0]) - e[0] * e
    u1 /= np.linalg.norm(u1)
    u2 = np.cross(e, u1)
    if u2[2] > 0:
        u2 = -u2
    alpha = np.clip(wheel[:, T_SLOPE] * e[0] / np.sqrt(1.0 - e[0] ** 2), -0.999, 0.999)
    beta = np.sqrt(1.0 - alpha ** 2)
    n = alpha[:, None] * u1[None, :] + beta[:, None] * u2[None, :]
    p = np.array([0.0, y, z])[None, :] + a[:, None] * e[None, :] + radius[:, None] * n
    theta = params[G_INCLINATION] + rail_roll
    dY = p[:, 1] - (params[G_RAIL_CENTRE_Y] + rail_dy)
    dZ = p[:, 2] - rail_dz
    u = np.cos(theta) * dY + np.sin(theta) * dZ
    zeta = -np.sin(theta) * dY + np.cos(theta) * dZ
    u_grid = rail[:, T_LAT]
    over = (u > u_grid[0]) & (u < u_grid[-1])
    # The kernel's cheap pre-test excludes points far from the rail; same here.
    y_est = y + a - (params[G_RAIL_CENTRE_Y] + rail_dy)
    over &= (y_est >= u_grid[0] - 0.01) & (y_est <= u_grid[-1] + 0.01)
    gap = np.full(s.size, np.inf)
    gap[over] = zeta[over] - np.interp(u[over], u_grid, rail[:, T_H])
    return u, gap, p[:, 0], p[:, 1], p[:, 2]


def wheel_distance_minima_reference(tables: ContactTables, pose: WheelsetPose,
                                    rail_pose: RailPose = RailPose(0.0, 0.0, 0.0), epsilon=0.0):
    """NumPy/Python reference of `wheel_distance_minima`: returns an (n, N_POINT_FIELDS) array."""
    wheel, rail, params = tables
    rail_roll = rail_pose.roll
    gu, gg, gx, gy, gz = wheel_distance_function_reference(tables, pose, rail_pose)
    finite = np.isfinite(gg)
    if finite.sum() < 3:
        return np.zeros((0, N_POINT_FIELDS))
    g0, g1, g2 = gg[:-2], gg[1:-1], gg[2:]
    with np.errstate(invalid="ignore"):
        is_min = np.isfinite(g0) & np.isfinite(g1) & np.isfinite(g2) & (g1 < g0) & (g1 <= g2)
    ks = np.nonzero(is_min)[0] + 1
    curv = gg[ks - 1] - 2 * gg[ks] + gg[ks + 1]
    safe = np.where(curv > 0, curv, 1.0)
    t = np.where(curv > 0, 0.5 * (gg[ks - 1] - gg[ks + 1]) / safe, 0.0)
    gmin = np.where(curv > 0, gg[ks] - 0.25 * (gg[ks - 1] - gg[ks + 1]) * t, gg[ks])
    pos = ks + t
    if pos.size == 0:
        best = int(np.argmin(np.where(finite, gg, np.inf)))
        pos = np.array([float(best)])
        gmin = np.array([gg[best]])
    if pos.size > MAX_MINIMA:
        keep = np.sort(np.argsort(gmin, kind="stable")[:MAX_MINIMA])
        pos, gmin = pos[keep], gmin[keep]
    order = np.argsort(gmin, kind="stable")
    pos, gmin = pos[order], gmin[order]
    level = 0.0 if epsilon < 0.0 else gmin[0] + epsilon
    s_grid, u_grid = wheel[:, T_LAT], rail[:, T_LAT]
    tan_theta = np.tan(params[G_INCLINATION] + rail_roll)
    rows, accepted_pos = [], []
    n_w = wheel.shape[0]
    for p_i, g_i in zip(pos, gmin):
        if len(rows) >= MAX_POINTS or (rows and g_i > level):
            break
        k, tt = int(p_i), p_i - int(p_i)
        if k >= n_w - 1:
            k, tt = n_w - 2, 1.0
        u = gu[k] * (1 - tt) + gu[k + 1] * tt
        py = gy[k] * (1 - tt) + gy[k + 1] * tt
        zp = np.interp(u, u_grid, rail[:, T_SLOPE])
        tan_c = (zp + tan_theta) / (1.0 - zp * tan_theta)
        ok = True
        pz = gz[k] * (1 - tt) + gz[k + 1] * tt
        for r, r_pos in zip(rows if epsilon >= 0.0 else [], accepted_pos):
            if math.hypot(py - r[P_Y], pz - r[P_Z]) < params[G_E_D]:
                ok = False
                break
            if abs(tan_c - r[P_TAN_CONTACT]) < params[G_E_K]:
                ok = False
                break
            lo, hi = int(min(p_i, r_pos)), int(max(p_i, r_pos)) + 1
            seg = gg[lo:min(hi + 1, n_w)]
            seg = seg[np.isfinite(seg)]
            if seg.size == 0 or seg.max() <= level + HUMP_MIN:
                ok = False
                break
        if not ok:
            continue
        s = params[G_WHEEL_S0] + (k + tt) * params[G_WHEEL_DS]
        row = np.zeros(N_POINT_FIELDS)
        row[P_S_WHEEL] = s
        row[P_U_RAIL] = u
        row[P_X] = gx[k] * (1 - tt) + gx[k + 1] * tt
        row[P_Y] = py
        row[P_Z] = gz[k] * (1 - tt) + gz[k + 1] * tt
        row[P_GAP] = g_i
        row[P_TAN_CONTACT] = tan_c
        row[P_WHEEL_SLOPE] = np.interp(s, s_grid, wheel[:, T_SLOPE])
        row[P_WHEEL_F2] = np.interp(s, s_grid, wheel[:, T_D2])
        row[P_RAIL_SLOPE] = zp
        row[P_RAIL_Z2] = np.interp(u, u_grid, rail[:, T_D2])
        row[P_RADIUS] = params[G_NOMINAL_RADIUS] + np.interp(s, s_grid, wheel[:, T_H])
        rows.append(row)
        accepted_pos.append(p_i)
    if not rows:
        return np.zeros((0, N_POINT_FIELDS))
    rows = np.array(rows)
    # the saddle to the next point along the profile: the highest sample strictly
    # between the two, refined by the parabola (the kernel may stop at a coarse
    # sample >= 0: compare the saddles below zero)
    rows[:, P_SADDLE] = np.inf
    rows[:, P_SADDLE_POS] = np.nan
    by_s = np.lexsort((np.arange(len(rows)), rows[:, P_S_WHEEL]))
    grid_pos = (rows[:, P_S_WHEEL] - params[G_WHEEL_S0]) / params[G_WHEEL_DS]
    for a, b in zip(by_s[:-1], by_s[1:]):
        lo, hi = int(math.floor(grid_pos[a])) + 1, int(math.ceil(grid_pos[b])) - 1
        if lo > hi:
            higher = a if rows[a, P_GAP] >= rows[b, P_GAP] else b
            rows[a, P_SADDLE], rows[a, P_SADDLE_POS] = rows[higher, P_GAP], grid_pos[higher]
            continue
        k = lo + int(np.argmax(gg[lo:hi + 1]))
        g0, g1, g2 = gg[k - 1], gg[k], gg[k + 1]
        if g0 <= g1 and g2 <= g1 and np.isfinite(g0) and np.isfinite(g2):
            t = 0.5 * (g0 - g2) / (g0 - 2.0 * g1 + g2) if g0 - 2.0 * g1 + g2 < 0.0 else 0.0
            rows[a, P_SADDLE], rows[a, P_SADDLE_POS] = g1 - 0.25 * (g0 - g2) * t, k + t
        else:
            rows[a, P_SADDLE], rows[a, P_SADDLE_POS] = g1, float(k)
    return rows


# ---------------------------------------------------------------------------
# Python API
# ---------------------------------------------------------------------------

@dataclass
class ContactPoints:
    """Contact points of both wheels; arrays are (2, MAX_POINTS), side 0 = left.

    Inactive slots hold zeros. Positions are in the track frame (m);
    `contact_angle` per CONVENTIONS.md (positive pushes the wheel towards the
    track centre); `gap` vertical, negative = penetration.
    """

    count: np.ndarray                 # (2,) number of points per wheel
    y_wheel: np.ndarray               # lateral coordinate on the wheel profile s (m)
    y_rail: np.ndarray                # lateral coordinate on the rail profile u (m)
    position: np.ndarray              # (2, MAX_POINTS, 3) x, y, z in the track frame (m)
    contact_angle: np.ndarray         # rad
    rolling_radius: np.ndarray        # m
    gap: np.ndarray                   # m
    wheel_curvature_lateral: np.ndarray   # 1/m, convex > 0
    rail_curvature_lateral: np.ndarray    # 1/m, convex > 0
    wheel_curvature_rolling: np.ndarray   # 1/m: cos(gamma)/r

    @property
    def active(self) -> np.ndarray:
        idx = np.arange(MAX_POINTS)[None, :]
        return idx < self.count[:, None]

    @property
    def longitudinal_offset(self) -> np.ndarray:
        return self.position[..., 0]


def points_from_kernel(out: np.ndarray, counts: np.ndarray) -> ContactPoints:
    """Convert the kernel's (2, MAX_POINTS, N_POINT_FIELDS) output to ContactPoints."""
    active = np.arange(MAX_POINTS)[None, :] < counts[:, None]
    o = np.where(active[..., None], out, 0.0)
    wheel_slope = o[..., P_WHEEL_SLOPE]
    gamma = np.arctan(-wheel_slope)
    radius = o[..., P_RADIUS]
    with np.errstate(divide="ignore", invalid="ignore"):
        rolling_curv = np.where(active, np.cos(gamma) / np.where(radius > 0, radius, 1.0), 0.0)
    wheel_k = -o[..., P_WHEEL_F2] / (1.0 + wheel_slope ** 2) ** 1.5
    rail_slope = o[..., P_RAIL_SLOPE]
    rail_k = -o[..., P_RAIL_Z2] / (1.0 + rail_slope ** 2) ** 1.5
    position = np.stack([o[..., P_X], o[..., P_Y], o[..., P_Z]], axis=-1)
    return ContactPoints(
        count=counts.astype(int).copy(),
        y_wheel=o[..., P_S_WHEEL].copy(),
        y_rail=o[..., P_U_RAIL].copy(),
        position=position,
        contact_angle=np.where(active, np.arctan(o[..., P_TAN_CONTACT]), 0.0),
        rolling_radius=radius.copy(),
        gap=o[..., P_GAP].copy(),
        wheel_curvature_lateral=np.where(active, wheel_k, 0.0),
        rail_curvature_lateral=np.where(active, rail_k, 0.0),
        wheel_curvature_rolling=rolling_curv,
    )


def _check_pose(**values):
    for name, value in values.items():
        if not np.all(np.isfinite(value)):
            raise GeometryError(f"{name} must be finite, got {value!r}")


def _rail_motion_array(rail_motion) -> np.ndarray:
    if rail_motion is None:
        return np.zeros((2, 3))
    arr = np.asarray(rail_motion, dtype=float).reshape(2, 3)
    _check_pose(rail_motion=arr)
    return np.ascontiguousarray(arr)


def contact_points(setup: ContactSetup, y: float, z: float, roll: float, yaw: float = 0.0,
                   rail_motion=None, epsilon: float = 0.0) -> ContactPoints:
    """Contact points for a given pose (penetration-based: the gaps may be negative).

    y, z: lateral and vertical position of the wheelset centre (m), roll, yaw
    (rad); rail_motion (2, 3): lateral, vertical (m) and roll (rad) of the left
    and right rail. epsilon: multipoint tolerance on the distance (m).
    """
    _check_pose(y=y, z=z, roll=roll, yaw=yaw, epsilon=epsilon)
    if abs(yaw) > 0.2 or abs(roll) > 0.2:
        raise GeometryError(f"pose out of range: roll {roll!r} rad, yaw {yaw!r} rad (|.| <= 0.2)")
    motion = _rail_motion_array(rail_motion)
    buffers = setup.buffers()
    wheelset_contact_kernel(setup.tables, WheelsetPose(float(y), float(z), float(roll), float(yaw)),
                            motion, float(epsilon), buffers)
    return points_from_kernel(buffers.points, buffers.counts)


@dataclass
class StaticContact:
    """Rigid contact: the wheelset resting on both rails with zero penetration."""

    y: float
    yaw: float
    z: float
    roll: float
    points: ContactPoints

    @property
    def rolling_radius_difference(self) -> float:
        """r_left - r_right at the principal (deepest) contact points (m)."""
        return float(self.points.rolling_radius[0, 0] - self.points.rolling_radius[1, 0])

    @property
    def contact_angle_difference(self) -> float:
        """contact angle left - right at the principal contact points (rad)."""
        return float(self.points.contact_angle[0, 0] - self.points.contact_angle[1, 0])


def _min_gaps(setup, pose, motion, buffers):
    wheelset_contact_kernel(setup.tables, pose, motion, 0.0, buffers)
    out, counts = buffers.points, buffers.counts
    y = pose.y
    if counts[0] == 0 or counts[1] == 0:
        raise GeometryError(
            f"wheel not over the rail at y = {y * 1e3:.2f} mm: the wheelset has left the track")
    return out[0, 0, P_GAP], out[1, 0, P_GAP], out[0, 0, P_Y], out[1, 0, P_Y]


def static_contact(setup: ContactSetup, y: float, yaw: float = 0.0, rail_motion=None,
                   epsilon: float = 1e-4, tolerance: float = 1e-10,
                   max_iterations: int = 50) -> StaticContact:
    """Rigid contact: the vertical position and roll angle that put both wheels on the rails.

    Solves min gap(left) = min gap(right) = 0 for (z, roll) by Newton's method
    (dgap/dz = 1 exactly; dgap/droll from the contact arm, refined by a secant).
    `epsilon` (m, default 0.1 mm) is the multipoint tolerance of the static
    analysis: minima within it of the deepest count as contact (an estimate of
    the difference of elastic compressions, Ren & Jin 2010).
    """
    _check_pose(y=y, yaw=yaw)
    motion = _rail_motion_array(rail_motion)
    buffers = setup.buffers()
    z = setup.nominal_radius
    roll = 0.0
    y = float(y)
    yaw = float(yaw)
    converged = False
    for _ in range(max_iterations):
        gl, gr, yl, yr = _min_gaps(setup, WheelsetPose(y, z, roll, yaw), motion, buffers)
        if abs(gl) < tolerance and abs(gr) < tolerance:
            converged = True
            break
        # d gap / d roll: rotation about x raises the left contact by (Y - y),
        # lowers the right by (y - Y_right); finite difference for the profile terms.
        h = 1e-6
        gl2, gr2, _, _ = _min_gaps(setup, WheelsetPose(y, z, roll + h, yaw), motion, buffers)
        jl = (gl2 - gl) / h
        jr = (gr2 - gr) / h
        det = jr - jl
        if abs(det) < 1e-9:
            det = -(yl - yr)
        # Solve [1 jl; 1 jr] [dz; droll] = [-gl; -gr]
        droll = (-gr + gl) / det
        dz = -gl - jl * droll
        droll = float(np.clip(droll, -0.01, 0.01))
        z += dz
        roll += droll
    if not converged:
        raise GeometryError(f"rigid contact did not converge at y = {y * 1e3:.3f} mm")
    wheelset_contact_kernel(setup.tables, WheelsetPose(y, z, roll, yaw), motion, float(epsilon), buffers)
    return StaticContact(y=y, yaw=yaw, z=z, roll=roll,
                         points=points_from_kernel(buffers.points, buffers.counts))
