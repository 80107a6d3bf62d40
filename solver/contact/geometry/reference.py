"""Plain NumPy references of the distance function and its minima (for the tests)."""

from __future__ import annotations

import math

import numpy as np

from ...layout import (
    G_E_D, G_E_K, G_INCLINATION, G_NOMINAL_RADIUS, G_RAIL_CENTRE_Y, G_TAPING_AXIAL, G_WHEEL_DS,
    G_WHEEL_S0, MAX_MINIMA, MAX_POINTS, N_POINT_FIELDS, P_GAP, P_RADIUS, P_RAIL_SLOPE, P_RAIL_Z2,
    P_SADDLE, P_SADDLE_POS, P_S_WHEEL, P_TAN_CONTACT, P_U_RAIL, P_WHEEL_F2, P_WHEEL_SLOPE, P_X,
    P_Y, P_Z, T_D2, T_H, T_LAT, T_SLOPE,
)
from .search import HUMP_MIN
from .setup import ContactTables, RailPose, WheelsetPose


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
