"""The contact update: the points of the last full search re-located at a new pose."""

from __future__ import annotations

import numpy as np
from numba import njit

from ...layout import G_RAIL_DU, G_RAIL_U0, G_WHEEL_DS, G_WHEEL_S0, P_GAP, P_S_WHEEL, P_Y, T_SLOPE
from .distance import (
    axle_frames, distance_at, fill_point_row, interp_column, mirrored_pose, rail_frame_of,
    side_rail_pose, parabola_minimum,
)
from .search import fill_saddles


UPDATE_HALF_WINDOW = 12  # contact update: +-1.2 mm around the previous point


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
        distance_at(q, tables, pose, rail_frame, axle, work)
    for _ in range(max_steps + 1):
        if gg[k - 1] == np.inf or gg[k] == np.inf or gg[k + 1] == np.inf:
            return -1
        if gg[k - 1] < gg[k]:
            k -= 1
            if k < 1:
                return -1
            distance_at(k - 1, tables, pose, rail_frame, axle, work)
        elif gg[k + 1] < gg[k]:
            k += 1
            if k > n_w - 2:
                return -1
            distance_at(k + 1, tables, pose, rail_frame, axle, work)
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
    axle: the axle_frame of pose.
    """
    params = tables.params
    n_w = tables.wheel.shape[0]
    rail_frame = rail_frame_of(params, rail)
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
                distance_at(k, tables, pose, rail_frame, axle, work)
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
        zp = interp_column(tables.rail, u0, du, u, T_SLOPE)
        fill_point_row(row, tables, gx, gz, k, t, u, gy[k] * (1.0 - t) + gy[k + 1] * t,
                        gmin, (zp + tan_theta) / (1.0 - zp * tan_theta), zp)
    fill_saddles(tables, pose, rail, work, out, count, axle, True)


@njit(cache=True, error_model="numpy", _nrt=False)
def wheelset_contact_update(tables, pose, rail_motion, buffers):
    """Both wheels: `wheel_contact_update` of the points in `buffers` (track frame,
    as left by `wheelset_contact_kernel`)."""
    out = buffers.points
    counts = buffers.counts
    axle_left, axle_right = axle_frames(pose)
    wheel_contact_update(tables, pose, side_rail_pose(rail_motion, 0), counts[0], buffers.work, out[0],
                         axle_left)
    for i in range(counts[1]):
        out[1, i, P_Y] = -out[1, i, P_Y]
    wheel_contact_update(tables, mirrored_pose(pose), side_rail_pose(rail_motion, 1), counts[1],
                         buffers.work, out[1], axle_right)
    for i in range(counts[1]):
        out[1, i, P_Y] = -out[1, i, P_Y]
