"""The full contact search (trace line, Ren & Jin 2010): the minima of the
distance function, the multipoint criteria, and the saddles between points."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...layout import (
    G_E_D, G_E_K, G_RAIL_DU, G_RAIL_U0, G_WHEEL_DS, G_WHEEL_S0, MAX_MINIMA, MAX_POINTS, P_GAP,
    P_SADDLE, P_SADDLE_POS, P_S_WHEEL, P_TAN_CONTACT, P_Y, P_Z, T_SLOPE, W_ACCEPTED_POS,
    W_MINIMA_GAP, W_MINIMA_POS, W_WINDOWS,
)
from .distance import (
    axle_frame, distance_at, fill_point_row, interp_column, mirrored_pose, rail_frame_of,
    side_rail_pose, wheel_range, parabola_minimum, wheel_distance_function,
)


HUMP_MIN = 1e-7         # numerical margin on the intermediate maximum (m)
VIRTUAL_PENETRATION = 0.55   # Kik & Piotrowski's reduction of the interpenetration (Piotrowski & Kik 2008;
                             # used by solver.contact.normal)
# A local minimum of the distance function separated from a deeper one by a
# hump lower than this is part of that one's basin, not a contact point of its
# own: below 1 um the hump is within the profiles' own accuracy (a measured
# profile is known to a few um at best; the built-ins are sampled every 0.1 mm,
# whose interpolation leaves wiggles of tenths of a micrometre where arcs
# meet), and two points that close in depth share their load as one patch
# anyway (solver.contact.normal.load_sharing.merged_patch_forces_kernel). Without it such a wiggle,
# sinking below the rail, adds a point from one step to the next that only a
# full scan would see (drop_shallow_minima).
SHALLOW_HUMP = 1e-6     # m
SHALLOW_WALK = 6        # grid points walked each way to find the hump (a wiggle's scale)
COARSE_STRIDE = 10      # first pass of the distance function every 10th profile point (1 mm)


@njit(cache=True, error_model="numpy", _nrt=False)
def known_minimum(min_pos, n_min, k):
    """True if grid index k is the grid point of one of the first n_min minima
    (fractional grid indices): the one test of the scan and the tracked minima."""
    for m in range(n_min):
        if int(min_pos[m] + 0.5) == k or abs(min_pos[m] - k) < 1.0:
            return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False)
def window_minima(gg, windows, n_windows, stride, k0, k1, min_pos, min_gap):
    """The local minima of the distance samples `gg` on the full grid inside the
    search windows (a window: `stride` samples either side of windows[w], within
    k0..k1), each refined by the parabola through its three samples: the
    fractional grid index into min_pos, the gap into min_gap (at most
    MAX_MINIMA). Returns their number. Used by the online search and by the
    tabulated geometry (solver.contact.geometry.table), so that both locate a minimum
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
            if known_minimum(min_pos, n_min, k):
                continue
            t, gmin = parabola_minimum(g0, g1, g2)
            if n_min < MAX_MINIMA:
                min_pos[n_min] = k + t
                min_gap[n_min] = gmin
                n_min += 1
    return n_min

@njit(cache=True, error_model="numpy", _nrt=False)
def hump_side(tables, pose, rail_frame, axle, work, k, direction, k0, k1):
    """From the minimum at grid index k, walk in `direction` over the hump to the
    other side (every sample computed at this pose: the tracked search keeps
    samples of other poses in work). True if the hump rises less than SHALLOW_HUMP
    above gg[k] and beyond it the function falls below gg[k] within SHALLOW_WALK
    points: the minimum lies in a deeper one's basin."""
    gg = work[1]
    distance_at(k, tables, pose, rail_frame, axle, work)
    floor = gg[k]
    top = floor
    passed = False          # over the top of the hump
    q = k
    for _ in range(SHALLOW_WALK):
        q += direction
        if q < k0 or q >= k1:
            return False
        distance_at(q, tables, pose, rail_frame, axle, work)
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
    distance function (hump_side). Returns the number left."""
    if n_min < 2:
        return n_min
    rail_frame = rail_frame_of(tables.params, rail)
    axle = axle_frame(pose.roll, pose.yaw)
    deepest = 0
    for m in range(1, n_min):
        if min_gap[m] < min_gap[deepest]:
            deepest = m
    n_keep = 0
    for m in range(n_min):
        k = int(min_pos[m] + 0.5)
        shallow = m != deepest and (
            hump_side(tables, pose, rail_frame, axle, work, k, -1, k0, k1)
            or hump_side(tables, pose, rail_frame, axle, work, k, 1, k0, k1))
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
    n_min = window_minima(gg, windows, n_windows, stride, k0, k1, min_pos, min_gap)
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
    rail_frame = rail_frame_of(tables.params, rail)
    axle = axle_frame(pose.roll, pose.yaw)
    for w in range(n_windows):
        centre = int(windows[w])
        lo = max(centre - stride - 1, k0)
        hi = min(centre + stride + 2, k1)
        for k in range(lo, hi):
            if gg[k] == np.inf:
                distance_at(k, tables, pose, rail_frame, axle, work)


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
def apart(py, pz, tan_c, accepted, e_d, e_k):
    """Ren & Jin's (2010) first two conditions for a new contact point at (py,
    pz) with contact-angle tangent tan_c to be independent of an accepted one
    (its point row, P_*): at least e_d from it in the track's cross-section,
    and contact angles whose tangents differ by at least e_k. (The third, a
    hump of the distance function between them, is the caller's: the online
    search and the table sample the function differently.)"""
    dy_ = py - accepted[P_Y]
    dz_ = pz - accepted[P_Z]
    if dy_ * dy_ + dz_ * dz_ < e_d * e_d:
        return False
    return not abs(tan_c - accepted[P_TAN_CONTACT]) < e_k


@njit(cache=True, error_model="numpy", _nrt=False)
def select_minima(tables, rail, epsilon, work, min_pos, min_gap, n_min, out):
    """The contact points among the minima of scan_minima (deepest first; `work`
    as the scan left it), into out, deepest first. Returns their number.

    Elastic mode (epsilon < 0, the dynamics): the deepest minimum and every
    other minimum that penetrates (distance <= 0), up to MAX_POINTS. No
    independence test: how much load two penetrating minima share follows
    from the distance function between them (the saddle, fill_saddles, and
    solver.contact.normal.load_sharing.merged_patch_forces_kernel), continuously.

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
    tan_theta = rail_frame_of(params, rail).tan_theta
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
        zp = interp_column(tables.rail, u0, du, u, T_SLOPE)
        # Tangent of the contact angle in the track frame: rail slope plus inclination.
        tan_c = (zp + tan_theta) / (1.0 - zp * tan_theta)
        independent = True
        pz = gz[k] * (1.0 - t) + gz[k + 1] * t
        for m in range(n_acc if not elastic else 0):
            if not apart(py, pz, tan_c, out[m], e_d, e_k):
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
        fill_point_row(out[n_acc], tables, gx, gz, k, t, u, py, min_gap[i], tan_c, zp)
        n_acc += 1
    return n_acc


@njit(cache=True, error_model="numpy", _nrt=False)
def _walk_to_maximum(k, lo, hi, tables, pose, rail_frame, axle, work):
    """From grid index k in [lo, hi], step uphill on the sampled distance function
    until a grid point is not below either neighbour inside [lo, hi]. Returns it;
    its neighbours are evaluated (into work) where they lie in [lo - 1, hi + 1]."""
    gg = work[1]
    for q in range(k - 1, k + 2):
        distance_at(q, tables, pose, rail_frame, axle, work)
    for _ in range(hi - lo + 1):
        if k > lo and gg[k - 1] > gg[k]:
            k -= 1
            distance_at(k - 1, tables, pose, rail_frame, axle, work)
        elif k < hi and gg[k + 1] > gg[k]:
            k += 1
            distance_at(k + 1, tables, pose, rail_frame, axle, work)
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
            distance_at(q, tables, pose, rail_frame, axle, work)
            if gg[q] >= 0.0:
                return gg[q], float(q)
            if best < 0 or gg[q] > gg[best]:
                best = q
        if best < 0:
            for q in range(lo, hi + 1):
                distance_at(q, tables, pose, rail_frame, axle, work)
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
    rail_frame = rail_frame_of(params, rail)
    k0, k1 = wheel_range(tables, pose.y, rail.lateral)
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
    fill_saddles(tables, pose, rail, work, out, n_acc, axle_frame(pose.roll, pose.yaw), False)
    return n_acc


@njit(cache=True, error_model="numpy", _nrt=False)
def wheelset_contact_kernel(tables, pose, rail_motion, epsilon, buffers):
    """Both wheels. `pose` a WheelsetPose; rail_motion is a (2, 3) array: lateral,
    vertical (m), roll (rad) per rail (left, right) in the track frame.
    `buffers.points` (2, MAX_POINTS, N_POINT_FIELDS) is filled in the TRACK frame
    (the right wheel's Y mirrored back), `buffers.counts` (2,)."""
    out = buffers.points
    counts = buffers.counts
    counts[0] = wheel_distance_minima(tables, pose, side_rail_pose(rail_motion, 0), epsilon,
                                      buffers.work, out[0])
    # Right wheel: the left wheel of the mirrored wheelset.
    counts[1] = wheel_distance_minima(tables, mirrored_pose(pose), side_rail_pose(rail_motion, 1), epsilon,
                                      buffers.work, out[1])
    for i in range(counts[1]):
        out[1, i, P_Y] = -out[1, i, P_Y]
