"""The tracked online search: the minima of the last full scan re-located while
the pose stays near it (the same points as a full scan)."""

from __future__ import annotations

import numpy as np
from numba import njit

from ...layout import (
    G_INCLINATION, G_NOMINAL_RADIUS, G_TAPING_AXIAL, MAX_MINIMA, P_Y, TR_CANDIDATES, TR_CLEARANCE,
    TR_COUNT, TR_POSE, TR_RAIL, TR_RATE_ANGLE, TR_RATE_LENGTH, TR_SCANS, TR_TRACKED, T_H, T_LAT,
    T_SLOPE, W_MINIMA_GAP, W_MINIMA_POS, W_TRACK_HEAD, W_TRACK_POS, W_WINDOWS,
)
from .distance import (
    axle_frames, mirrored_pose, rail_frame_of, side_rail_pose, wheel_range, parabola_minimum,
)
from .search import (
    COARSE_STRIDE, known_minimum, drop_shallow_minima, fill_saddles, scan_minima, select_minima,
    sort_minima,
)
from .update import walk_to_minimum


# The full scan is repeated once the pose or the rail moved this far from the
# last one (see wheelset_contact_tracked).
TRACK_MOVE_LENGTH = 2e-4    # m, lateral and vertical
TRACK_MOVE_ANGLE = 2e-4     # rad, roll and yaw
# ... and when a tracked minimum moved more than this many grid points since
# the last search: its basin is flat (a conformal flange, a worn tread), where a
# second minimum can be born next to it unseen by the coarse samples.
TRACK_MAX_WALK = 3


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
    rail_frame = rail_frame_of(tables.params, rail)
    gg = work[1]
    min_pos = work[W_MINIMA_POS]
    min_gap = work[W_MINIMA_GAP]
    for m in range(n_tr):
        start = int(track_pos[m] + 0.5)
        k = walk_to_minimum(start, tables, pose, rail_frame, axle, work, TRACK_MAX_WALK)
        # the scan takes k only if strictly below its left neighbour
        if k < 0 or not gg[k] < gg[k - 1] or known_minimum(min_pos, m, k):
            return -1
        t, gmin = parabola_minimum(gg[k - 1], gg[k], gg[k + 1])
        min_pos[m] = k + t
        min_gap[m] = gmin
    k0, k1 = wheel_range(tables, pose.y, rail.lateral)
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
    axle: the axle_frame of pose)."""
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
    k0, k1 = wheel_range(tables, pose.y, rail.lateral)
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
    axle_left, axle_right = axle_frames(pose)
    counts[0] = wheel_contact_tracked(tables, pose, side_rail_pose(rail_motion, 0), epsilon, work,
                                      work[W_TRACK_HEAD], work[W_TRACK_POS], out[0], axle_left)
    counts[1] = wheel_contact_tracked(tables, mirrored_pose(pose), side_rail_pose(rail_motion, 1), epsilon,
                                      work, work[W_TRACK_HEAD + 1], work[W_TRACK_POS + 1], out[1],
                                      axle_right)
    for i in range(counts[1]):
        out[1, i, P_Y] = -out[1, i, P_Y]
