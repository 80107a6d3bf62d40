"""The distance function between the wheel and rail profiles of one side, in the
axle's and the rail's frames, and the point rows of its minima."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ...layout import (
    G_COS_INCLINATION, G_INCLINATION, G_NOMINAL_RADIUS, G_RAIL_CENTRE_Y, G_RAIL_DU, G_RAIL_INV_DU,
    G_RAIL_U0, G_SIN_INCLINATION, G_TAN_INCLINATION, G_TAPING_AXIAL, G_WHEEL_DS, G_WHEEL_S0,
    P_GAP, P_RADIUS, P_RAIL_SLOPE, P_RAIL_Z2, P_S_WHEEL, P_TAN_CONTACT, P_U_RAIL, P_WHEEL_F2,
    P_WHEEL_SLOPE, P_X, P_Y, P_Z, T_D2, T_H, T_LAT, T_SLOPE,
)
from .setup import RailPose, WheelsetPose


class _AxleFrame(NamedTuple):
    """Axle direction e and the trace-line basis (u1, u2) of `axle_frame`."""

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
# Kernel: distance function and its minima for the LEFT wheel (side-local)
# ---------------------------------------------------------------------------

@njit(cache=True, error_model="numpy", _nrt=False)
def interp_column(table, x0, dx, x, col):
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
def axle_frame(roll, yaw):
    """Axle direction e = Rz(yaw) Rx(roll) (0,1,0) and the basis (u1, u2) of the
    trace-line construction: u1 along the part of x perpendicular to e, u2 = e x u1
    pointing down."""
    return _axle_frame_of(np.cos(roll), np.sin(roll), np.cos(yaw), np.sin(yaw))


@njit(cache=True, error_model="numpy", _nrt=False)
def axle_frames(pose):
    """axle_frame of both wheels: of `pose` and of its mirror (mirrored_pose: roll
    and yaw negated), from one cos and sin of each angle (cos(-x) = cos(x),
    sin(-x) = -sin(x), also to the bit in the C library's functions)."""
    cphi = np.cos(pose.roll)
    sphi = np.sin(pose.roll)
    cpsi = np.cos(pose.yaw)
    spsi = np.sin(pose.yaw)
    return _axle_frame_of(cphi, sphi, cpsi, spsi), _axle_frame_of(cphi, -sphi, cpsi, -spsi)


@njit(cache=True, error_model="numpy", _nrt=False)
def _axle_frame_of(cphi, sphi, cpsi, spsi):
    """axle_frame from the cos and sin of roll (phi) and yaw (psi)."""
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
def rail_frame_of(params, rail):
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
def mirrored_pose(pose):
    """The pose of the mirrored wheelset (y -> -y): its left wheel is the right wheel."""
    return WheelsetPose(-pose.y, pose.z, -pose.roll, -pose.yaw)


@njit(cache=True, error_model="numpy", _nrt=False)
def side_rail_pose(rail_motion, side):
    """RailPose of rail `side` (0 left, 1 right) from the (2, 3) track-frame rail motion,
    in the side-local frame of its wheel (the right rail mirrored)."""
    if side == 0:
        return RailPose(rail_motion[0, 0], rail_motion[0, 1], rail_motion[0, 2])
    return RailPose(-rail_motion[1, 0], rail_motion[1, 1], -rail_motion[1, 2])


@njit(cache=True, error_model="numpy", _nrt=False)
def wheel_range(tables, y, rail_lateral):
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
def distance_at(k, tables, pose, rail_frame, axle, work):
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
    rail_frame = rail_frame_of(tables.params, rail)
    axle = axle_frame(pose.roll, pose.yaw)
    k0, k1 = wheel_range(tables, pose.y, rail.lateral)
    # only [k0, k1) is ever read: reset it (the rest of the wheel is off the rail);
    # a slice fill, which numba vectorises (a scalar loop costs 0.3 us more per wheel)
    work[1, k0:k1] = np.inf
    for k in range(k0, k1, stride):
        distance_at(k, tables, pose, rail_frame, axle, work)
    return k0, k1


@njit(cache=True, error_model="numpy", _nrt=False)
def fill_point_row(row, tables, gx, gz, k, t, u, py, gap, tan_contact, rail_slope):
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
    row[P_WHEEL_SLOPE] = interp_column(wheel, s0, ds, s, T_SLOPE)
    row[P_WHEEL_F2] = interp_column(wheel, s0, ds, s, T_D2)
    row[P_RAIL_SLOPE] = rail_slope
    row[P_RAIL_Z2] = interp_column(rail, params[G_RAIL_U0], params[G_RAIL_DU], u, T_D2)
    row[P_RADIUS] = params[G_NOMINAL_RADIUS] + interp_column(wheel, s0, ds, s, T_H)


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
