"""Tabulated contact geometry: the per-wheel contact point sets precomputed
over the wheel's pose relative to its rail, interpolated at run time.

The commercial multibody codes tabulate the wheel-rail contact geometry before
the run (the "contact table" over lateral displacement, and yaw or roll) and
interpolate it at every evaluation. This module does the same for the
trace-line multipoint geometry of solver.contact.geometry, so that a run can choose
`contact_geometry = "online"` (every evaluation scans the profiles) or
`"table"` (this module).

What is tabulated. For one wheel (the left wheel of the side-local frame; the
right wheel is the mirrored left wheel, exactly as in solver.contact.geometry) the
contact geometry depends on the pose of the wheelset relative to the rail
only through three numbers:
  - the lateral position of the wheelset centre along the rail's own lateral
    axis (the inclined u axis), `lateral`;
  - the roll of the axle relative to the rail (roll minus rail roll), `roll`;
  - the yaw of the axle, `yaw`.
A translation along the rail's vertical axis moves every trace-line point by
the same vector: the contact locations (s on the wheel, u on the rail) stay,
and every wheel-rail distance changes by exactly that translation. A rotation
of wheelset and rail together about the track's x axis leaves the trace-line
construction unchanged (it only uses the axle direction relative to x). So
the rail's lateral, vertical and roll motion and the wheelset's vertical
position are applied exactly at run time; only (lateral, roll, yaw) are
interpolated.

Multipoint entries, exact points, sharp onset. At each grid node the table
keeps every local minimum of the distance function that can become a contact
point (its distance within RELEVANCE of the deepest one), ordered along the
wheel profile: one "branch" per minimum, with its wheel coordinate s, its
distance and the highest distance between it and the next branch (the
intermediate maximum of Ren & Jin's Eq. 6). At run time
  1. the cell of the pose is found; where its eight nodes hold the same number
     of branches (minima cannot pass each other without merging, so branch b is
     branch b everywhere in the cell), each branch's s is interpolated
     (trilinear); where a minimum is born or lost inside the cell, every
     node's branches are taken;
  2. each branch is re-located on the profile grid by a short downhill walk of
     the distance function from that s, and refined by the parabola of the
     online search: its position, distance, curvatures and contact angle are
     the online ones, to rounding;
  3. the multipoint selection of solver.contact.geometry (candidate level, e_d, e_k,
     intermediate maximum) runs on these points, with the interpolated
     intermediate maxima (sampled on the pose, as online, in a cell where the
     minima change or within HUMP_DOUBT of the threshold).
So the table replaces the scan of the whole profile (about 160 distance
evaluations per wheel) by a few per contact point, and a point appears where
the distance of its own minimum crosses zero: the onset is as sharp as online.
A pose outside the table is computed online (counted).

The error against the online geometry is zero to rounding wherever both find
the same minima; tests/test_geometry_table.py holds it on a dense check grid
(tread and flange contact, penetrating and lifted, rail motion, onset and loss
of flange contact).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from ...layout import (
    B_GAP, B_HUMP, B_S, G_COS_INCLINATION, G_E_D, G_E_K, G_INCLINATION, G_NOMINAL_RADIUS,
    G_RAIL_CENTRE_Y, G_RAIL_DU, G_RAIL_U0, G_SIN_INCLINATION, G_WHEEL_DS, G_WHEEL_S0, MAX_MINIMA,
    MAX_POINTS, N_BRANCH_FIELDS, N_SCRATCH, N_TABLE_PARAMS, N_WORK_ROWS, P_GAP, P_RADIUS,
    P_RAIL_SLOPE, P_RAIL_Z2, P_S_WHEEL, P_TAN_CONTACT, P_U_RAIL, P_WHEEL_F2, P_WHEEL_SLOPE, P_X,
    P_Y, P_Z, TROW_GAP, TROW_HUMP, TROW_POS, TROW_U, TROW_X, TROW_Y, TROW_Z, TP_DLAT, TP_DROLL, TP_DYAW, TP_LAT0,
    TP_ROLL0, TP_YAW0, TP_ZETA_REF, T_D2, T_H, T_SLOPE,
)
from .distance import (
    axle_frames, distance_at, interp_column, mirrored_pose, rail_frame_of, side_rail_pose,
    wheel_range, parabola_minimum, wheel_distance_function,
)
from .points import ContactPoints, check_pose, rail_motion_array, points_from_kernel
from .search import (
    COARSE_STRIDE, HUMP_MIN, apart, hump_side, window_minima, coarse_minima, fill_saddles,
    fill_windows, wheel_distance_minima,
)
from .setup import ContactSetup, GeometryError, RailPose, WheelsetPose
from .update import walk_to_minimum


MAX_BRANCHES = 6          # local minima kept per node
RELEVANCE = 0.004         # m: minima further than this above the deepest are not kept
                          # (they can only become candidates once the deepest point
                          # penetrates more than 4 mm, twice the 2 mm a step may reach)
HUMP_DOUBT = 5e-5         # m: an interpolated intermediate maximum this close to its
                          # threshold is sampled on the pose instead
MAX_WALK = 60             # profile grid steps of the exact re-location of a branch


class GeometryTableError(GeometryError):
    """A contact table that cannot be built (bad range or step)."""


class TableArrays(NamedTuple):
    """The contact table as the kernels see it (see ContactTable)."""

    tparams: np.ndarray   # (N_TABLE_PARAMS,) entries TP_*
    flags: np.ndarray     # (n_lat - 1, n_roll - 1, n_yaw - 1) int8: 1 = the cell's nodes agree
    nodes: np.ndarray     # (n_lat, n_roll, n_yaw, MAX_BRANCHES, N_BRANCH_FIELDS), NaN = no branch


class TableScratch(NamedTuple):
    """Scratch arrays of the table kernels (one per model: not shared between threads)."""

    rows: np.ndarray     # (MAX_SEEDS, N_SCRATCH) float
    index: np.ndarray    # (MAX_SEEDS + MAX_POINTS,) int64


def table_scratch() -> "TableScratch":
    return TableScratch(np.zeros((MAX_SEEDS, N_SCRATCH)), np.zeros(MAX_SEEDS + MAX_POINTS, dtype=np.int64))


def empty_table_arrays() -> TableArrays:
    """TableArrays without a table (no tparams): the kernels then search online."""
    return TableArrays(np.zeros(0), np.zeros((1, 1, 1), dtype=np.int8),
                       np.zeros((1, 1, 1, MAX_BRANCHES, N_BRANCH_FIELDS)))


class TableSearch(NamedTuple):
    """What the dynamics pass to the contact search for contact_geometry = "table"."""

    arrays: TableArrays
    scratch: TableScratch


# ---------------------------------------------------------------------------
# Build: all relevant minima of the distance function at one pose
# ---------------------------------------------------------------------------

@njit(cache=True, error_model="numpy", _nrt=True)
def _node_minima(tables, pose, work, branches):
    """Every relevant local minimum of the left wheel's distance function at `pose`
    (nominal rail), ordered along the wheel profile, into branches (MAX_BRANCHES,
    N_BRANCH_FIELDS). Returns the number of branches, -1 if the wheel is not over
    the rail or more than MAX_BRANCHES minima are relevant.

    The minima are located exactly as solver.contact.geometry.search.wheel_distance_minima does
    (coarse pass every COARSE_STRIDE points, full grid around each coarse
    minimum, parabola refinement), so that the table holds the online points."""
    n_w = tables.wheel.shape[0]
    gg = work[1]
    stride = COARSE_STRIDE
    rail = RailPose(0.0, 0.0, 0.0)
    k0, k1 = wheel_distance_function(tables, pose, rail, work, stride)
    windows = np.empty(MAX_MINIMA)     # grid indices as floats, as the online search keeps them
    n_windows, n_coarse = coarse_minima(gg, k0, k1, windows)
    if n_coarse < 2:
        return -1
    fill_windows(tables, pose, rail, work, windows, n_windows, k0, k1)
    min_pos = np.empty(MAX_MINIMA)
    min_gap = np.empty(MAX_MINIMA)
    # (every minimum, those in a deeper one's basin too: whether one is depends on
    # the pose, and table_wheel_points decides it at the pose, as the online search)
    n_min = window_minima(gg, windows, n_windows, stride, k0, k1, min_pos, min_gap)
    if n_min == 0:
        return -1
    deepest = min_gap[0]
    for m in range(n_min):
        deepest = min(deepest, min_gap[m])
    # the relevant minima, in order along the wheel (insertion sort by position)
    n_keep = 0
    keep_pos = np.empty(MAX_MINIMA)
    keep_gap = np.empty(MAX_MINIMA)
    for m in range(n_min):
        if min_gap[m] - deepest > RELEVANCE:
            continue
        q = n_keep
        while q > 0 and keep_pos[q - 1] > min_pos[m]:
            keep_pos[q] = keep_pos[q - 1]
            keep_gap[q] = keep_gap[q - 1]
            q -= 1
        keep_pos[q] = min_pos[m]
        keep_gap[q] = min_gap[m]
        n_keep += 1
    if n_keep > MAX_BRANCHES:
        return -1
    s0 = tables.params[G_WHEEL_S0]
    ds = tables.params[G_WHEEL_DS]
    for b in range(n_keep):
        pos = keep_pos[b]
        row = branches[b]
        row[B_S] = s0 + pos * ds
        row[B_GAP] = keep_gap[b]
        row[B_HUMP] = np.inf
        if b > 0:
            # intermediate maximum between this branch and the previous one, over the
            # samples the online search evaluated (as wheel_distance_minima reads them)
            lo = int(keep_pos[b - 1])
            hi = int(pos) + 1
            hump = -np.inf
            for q in range(lo, min(hi + 1, n_w)):
                if gg[q] != np.inf and gg[q] > hump:
                    hump = gg[q]
            branches[b - 1, B_HUMP] = hump
    return n_keep


@njit(cache=True, error_model="numpy", _nrt=True)
def _build_kernel(tables, lat, rolls, yaws, zeta_ref, work, counts, nodes):
    """Fill counts (n_lat, n_roll, n_yaw) and nodes (..., MAX_BRANCHES, N_BRANCH_FIELDS)."""
    params = tables.params
    yc = params[G_RAIL_CENTRE_Y]
    theta = params[G_INCLINATION]
    ct = math.cos(theta)
    st = math.sin(theta)
    branches = np.empty((MAX_BRANCHES, N_BRANCH_FIELDS))
    for i in range(lat.size):
        # wheelset centre in the side-local track frame from its rail-frame coordinates
        y = yc + ct * lat[i] - st * zeta_ref
        z = st * lat[i] + ct * zeta_ref
        for j in range(rolls.size):
            for k in range(yaws.size):
                n = _node_minima(tables, WheelsetPose(y, z, rolls[j], yaws[k]), work, branches)
                counts[i, j, k] = n
                for b in range(max(n, 0)):
                    for f in range(N_BRANCH_FIELDS):
                        nodes[i, j, k, b, f] = branches[b, f]


@njit(cache=True, error_model="numpy", _nrt=True)
def _cell_flags(counts):
    """1 where the cell's eight nodes hold the same number of branches, else 0. (The
    minima of a distance function cannot pass each other without merging: in such a
    cell branch b of one node is branch b of the others.)"""
    n_lat, n_roll, n_yaw = counts.shape
    flags = np.zeros((n_lat - 1, n_roll - 1, n_yaw - 1), dtype=np.int8)
    for i in range(n_lat - 1):
        for j in range(n_roll - 1):
            for k in range(n_yaw - 1):
                n = counts[i, j, k]
                ok = n > 0
                for c in range(8):
                    if not ok:
                        break
                    ii = i + (c & 1)
                    jj = j + ((c >> 1) & 1)
                    kk = k + ((c >> 2) & 1)
                    if counts[ii, jj, kk] != n:
                        ok = False
                        break
                if ok:
                    flags[i, j, k] = 1
    return flags
MAX_SEEDS = 8 * MAX_BRANCHES


@njit(cache=True, error_model="numpy", _nrt=False)
def _refine_branch(k, tables, pose, rail_frame, axle, work, result, max_walk):
    """Walk down the distance function on the profile grid from index k to its local
    minimum and refine it by the parabola of solver.contact.geometry (the same arithmetic as
    the online search, so the point is the online point). Fills result[TROW_POS..TROW_Z].
    Returns False if no interior minimum is reached within max_walk steps."""
    gg = work[1]
    k = walk_to_minimum(k, tables, pose, rail_frame, axle, work, max_walk)
    if k < 0:
        return False
    g0 = gg[k - 1]
    g1 = gg[k]
    g2 = gg[k + 1]
    if g0 == np.inf or g1 == np.inf or g2 == np.inf:
        return False
    t, gmin = parabola_minimum(g0, g1, g2)
    pos = k + t
    kk = int(pos)
    tt = pos - kk
    result[TROW_POS] = pos
    result[TROW_GAP] = gmin
    result[TROW_U] = work[0, kk] * (1.0 - tt) + work[0, kk + 1] * tt
    result[TROW_X] = work[2, kk] * (1.0 - tt) + work[2, kk + 1] * tt
    result[TROW_Y] = work[3, kk] * (1.0 - tt) + work[3, kk + 1] * tt
    result[TROW_Z] = work[4, kk] * (1.0 - tt) + work[4, kk + 1] * tt
    return True


@njit(cache=True, error_model="numpy", _nrt=False)
def _hump_online(tables, pose, rail, rail_frame, axle, pos_a, pos_b, work):
    """Intermediate maximum of the distance function between two minima (fractional
    grid indices), over the coarse samples the online search would take there."""
    k0, k1 = wheel_range(tables, pose.y, rail.lateral)
    stride = COARSE_STRIDE
    lo = int(min(pos_a, pos_b))
    hi = int(max(pos_a, pos_b)) + 1
    first = k0 + ((max(lo, k0) - k0 + stride - 1) // stride) * stride
    hump = -np.inf
    for k in range(first, min(hi + 1, k1), stride):
        distance_at(k, tables, pose, rail_frame, axle, work)
        if work[1, k] != np.inf and work[1, k] > hump:
            hump = work[1, k]
    return hump


@njit(cache=True, error_model="numpy", _nrt=False)
def _relative_pose(params, pose, rail):
    """The pose of the wheelset relative to its rail (left wheel, side-local): undo
    the rail roll (a rotation about x of wheelset and rail together), then the
    rail-frame coordinates of the centre. Returns (lateral, zeta, roll, yaw):
    along the rail's inclined lateral and vertical axes (m), roll and yaw of the
    axle relative to the rail (rad)."""
    yc = params[G_RAIL_CENTRE_Y] + rail.lateral
    dY = pose.y - yc
    dZ = pose.z - rail.vertical
    roll_rel = pose.roll
    yaw_rel = pose.yaw
    if rail.roll != 0.0:
        ca = math.cos(rail.roll)
        sa = math.sin(rail.roll)
        dY, dZ = ca * dY + sa * dZ, -sa * dY + ca * dZ
        cphi = math.cos(pose.roll)
        ex = -math.sin(pose.yaw) * cphi
        ey = math.cos(pose.yaw) * cphi
        ez = math.sin(pose.roll)
        ey, ez = ca * ey + sa * ez, -sa * ey + ca * ez
        roll_rel = math.asin(min(max(ez, -1.0), 1.0))
        yaw_rel = math.atan2(-ex, ey)
    ct0 = params[G_COS_INCLINATION]
    st0 = params[G_SIN_INCLINATION]
    return ct0 * dY + st0 * dZ, -st0 * dY + ct0 * dZ, roll_rel, yaw_rel


@njit(cache=True, error_model="numpy", _nrt=False)
def table_wheel_points(tables, table, pose, rail, epsilon, work, scratch, index_scratch, out, axle):
    """Contact points of the left wheel (side-local frame) from the table.

    As solver.contact.geometry.search.wheel_distance_minima (same arguments, plus the table and
    the scratch arrays of TableScratch, and the axle frame of the pose,
    geometry.axle_frame; same output rows); returns the number
    of points, or -1 when the pose is outside the table or a branch cannot be
    re-located (the caller then runs the online search).

    The table gives the relevant minima (branches) of the distance function near
    this pose with their interpolated positions on the wheel; each is re-located
    exactly on the profile grid by a short downhill walk and refined by the
    parabola of the online search (_refine_branch), so that its position,
    distance and curvatures are those of the online geometry. In a cell whose
    nodes agree the intermediate maxima are interpolated too; elsewhere every
    branch of the cell's eight nodes is re-located (duplicates merged) and the
    intermediate maxima are sampled on the coarse grid of the online search."""
    params = tables.params
    # 1. the pose relative to the rail
    lateral, zeta, roll_rel, yaw_rel = _relative_pose(params, pose, rail)
    shift = zeta - table.tparams[TP_ZETA_REF]
    # 2. the cell and the weights
    tp = table.tparams
    fi = (lateral - tp[TP_LAT0]) / tp[TP_DLAT]
    fj = (roll_rel - tp[TP_ROLL0]) / tp[TP_DROLL]
    fk = (yaw_rel - tp[TP_YAW0]) / tp[TP_DYAW]
    n_i, n_j, n_k = table.flags.shape
    if not (fi >= 0.0 and fj >= 0.0 and fk >= 0.0 and fi <= n_i and fj <= n_j and fk <= n_k):
        return -1
    i = min(int(fi), n_i - 1)
    j = min(int(fj), n_j - 1)
    k = min(int(fk), n_k - 1)
    ti = fi - i
    tj = fj - j
    tk = fk - k
    nodes = table.nodes
    s0 = params[G_WHEEL_S0]
    ds = params[G_WHEEL_DS]
    rail_frame = rail_frame_of(params, rail)
    # 3. the branches, re-located exactly
    n_b = 0
    agree = table.flags[i, j, k] == 1
    if agree:
        for b in range(MAX_BRANCHES):
            if nodes[i, j, k, b, B_S] != nodes[i, j, k, b, B_S]:   # NaN: no branch b
                break
            acc_s = 0.0
            acc_h = 0.0
            for c in range(8):
                di = c & 1
                dj = (c >> 1) & 1
                dk = (c >> 2) & 1
                w = (ti if di else 1.0 - ti) * (tj if dj else 1.0 - tj) * (tk if dk else 1.0 - tk)
                node = nodes[i + di, j + dj, k + dk, b]
                acc_s += w * node[B_S]
                acc_h += w * node[B_HUMP]     # inf after the last branch: not read
            if not _refine_branch(int(round((acc_s - s0) / ds)), tables, pose, rail_frame, axle,
                                  work, scratch[b], MAX_WALK):
                return -1
            scratch[b, TROW_HUMP] = acc_h + shift
            if b > 0 and abs(scratch[b, TROW_POS] - scratch[b - 1, TROW_POS]) < 1.0:
                agree = False      # two branches fell into one minimum
                break
            n_b += 1
    if not agree:
        # a minimum is born or lost inside the cell: every branch of the eight nodes
        # is re-located from its position there (the nearest node first), the
        # duplicates merged
        near = (1 if ti > 0.5 else 0) + (2 if tj > 0.5 else 0) + (4 if tk > 0.5 else 0)
        n_b = 0
        for c0 in range(8):
            c = c0 ^ near
            node_set = nodes[i + (c & 1), j + ((c >> 1) & 1), k + ((c >> 2) & 1)]
            for b in range(MAX_BRANCHES):
                sb = node_set[b, B_S]
                if sb != sb:
                    break
                kc = int(round((sb - s0) / ds))
                seen = False
                for q in range(n_b):
                    if abs(scratch[q, TROW_POS] - kc) < 2.0:
                        seen = True
                        break
                if seen or n_b == MAX_SEEDS:
                    continue
                if not _refine_branch(kc, tables, pose, rail_frame, axle, work, scratch[n_b],
                                      MAX_WALK):
                    continue      # no minimum near where the node had one: it is lost here
                for q in range(n_b):
                    if abs(scratch[q, TROW_POS] - scratch[n_b, TROW_POS]) < 1.0:
                        seen = True
                        break
                if not seen:
                    n_b += 1
        if n_b == 0:
            return -1
        # in order along the wheel, the intermediate maxima not known yet (NaN)
        for b in range(1, n_b):
            q = b
            while q > 0 and scratch[q - 1, TROW_POS] > scratch[q, TROW_POS]:
                for f in range(TROW_HUMP + 1):
                    scratch[q - 1, f], scratch[q, f] = scratch[q, f], scratch[q - 1, f]
                q -= 1
        for b in range(n_b):
            scratch[b, TROW_HUMP] = np.nan
    # 4. without the minima in a deeper one's basin (at this pose, as the online search)
    n_kept = _drop_shallow_branches(tables, pose, rail, rail_frame, axle, work, scratch, n_b)
    if n_kept < n_b:
        agree = False       # (the interpolated maxima between branches no longer fit)
        n_b = n_kept
    # 5. the multipoint selection of solver.contact.geometry.search.wheel_distance_minima, and the
    # saddles between the points as its full search finds them
    n_acc = _select_branches(tables, pose, rail, epsilon, work, scratch, index_scratch, n_b, agree,
                             rail_frame, axle, out)
    fill_saddles(tables, pose, rail, work, out, n_acc, axle, False)
    return n_acc


@njit(cache=True, error_model="numpy", _nrt=False)
def _drop_shallow_branches(tables, pose, rail, rail_frame, axle, work, scratch, n_b):
    """solver.contact.geometry.search.drop_shallow_minima on the re-located branches (rows of
    scratch, in place, order kept): every branch but the deepest that lies in a
    deeper one's basin is removed. Returns the number left."""
    if n_b < 2:
        return n_b
    k0, k1 = wheel_range(tables, pose.y, rail.lateral)
    deepest = 0
    for b in range(1, n_b):
        if scratch[b, TROW_GAP] < scratch[deepest, TROW_GAP]:
            deepest = b
    n_keep = 0
    for b in range(n_b):
        k = int(scratch[b, TROW_POS] + 0.5)
        shallow = b != deepest and (
            hump_side(tables, pose, rail_frame, axle, work, k, -1, k0, k1)
            or hump_side(tables, pose, rail_frame, axle, work, k, 1, k0, k1))
        if not shallow:
            if n_keep != b:
                for f in range(scratch.shape[1]):
                    scratch[n_keep, f] = scratch[b, f]
            n_keep += 1
    return n_keep


@njit(cache=True, error_model="numpy", _nrt=False)
def _select_branches(tables, pose, rail, epsilon, work, scratch, index_scratch, n_b, agree,
                     rail_frame, axle, out):
    """The multipoint selection of solver.contact.geometry.search.select_minima on the n_b
    re-located branches in scratch (in order along the wheel; their intermediate
    maxima in TROW_HUMP when `agree`, else sampled on the pose): the points into
    out, deepest first. Returns their number."""
    params = tables.params
    s0 = params[G_WHEEL_S0]
    ds = params[G_WHEEL_DS]
    order = index_scratch
    for b in range(n_b):
        q = b
        while q > 0 and scratch[order[q - 1], TROW_GAP] > scratch[b, TROW_GAP]:
            order[q] = order[q - 1]
            q -= 1
        order[q] = b
    tan_theta = rail_frame.tan_theta
    wheel_t = tables.wheel
    rail_t = tables.rail
    u0 = params[G_RAIL_U0]
    du = params[G_RAIL_DU]
    e_d = params[G_E_D]
    e_k = params[G_E_K]
    gap_min = scratch[order[0], TROW_GAP]
    level = 0.0 if epsilon < 0.0 else gap_min + epsilon
    acc_b = index_scratch[MAX_SEEDS:]
    n_acc = 0
    for r in range(n_b):
        if n_acc >= MAX_POINTS:
            break
        b = order[r]
        gap = scratch[b, TROW_GAP]
        if r > 0 and gap > level:
            break
        u = scratch[b, TROW_U]
        py = scratch[b, TROW_Y]
        pz = scratch[b, TROW_Z]
        zp = interp_column(rail_t, u0, du, u, T_SLOPE)
        tan_c = (zp + tan_theta) / (1.0 - zp * tan_theta)
        independent = True
        for m in range(n_acc if epsilon >= 0.0 else 0):
            a = acc_b[m]
            # (out[m] is the row of table point a: its P_Y, P_Z are TROW_Y, TROW_Z)
            if not apart(py, pz, tan_c, out[m], e_d, e_k):
                independent = False
                break
            lo = min(b, a)
            hi = max(b, a)
            threshold = level + HUMP_MIN
            hump = -np.inf
            if agree:
                for q in range(lo, hi):
                    hump = max(hump, scratch[q, TROW_HUMP])
            if not agree or abs(hump - threshold) < HUMP_DOUBT:
                hump = _hump_online(tables, pose, rail, rail_frame, axle, scratch[lo, TROW_POS],
                                    scratch[hi, TROW_POS], work)
            if hump <= threshold:
                independent = False
                break
        if not independent:
            continue
        acc_b[n_acc] = b
        row = out[n_acc]
        s = s0 + scratch[b, TROW_POS] * ds
        row[P_S_WHEEL] = s
        row[P_U_RAIL] = u
        row[P_X] = scratch[b, TROW_X]
        row[P_Y] = py
        row[P_Z] = pz
        row[P_GAP] = gap
        row[P_TAN_CONTACT] = tan_c
        row[P_WHEEL_SLOPE] = interp_column(wheel_t, s0, ds, s, T_SLOPE)
        row[P_WHEEL_F2] = interp_column(wheel_t, s0, ds, s, T_D2)
        row[P_RAIL_SLOPE] = zp
        row[P_RAIL_Z2] = interp_column(rail_t, u0, du, u, T_D2)
        row[P_RADIUS] = params[G_NOMINAL_RADIUS] + interp_column(wheel_t, s0, ds, s, T_H)
        n_acc += 1
    return n_acc


@njit(cache=True, error_model="numpy", _nrt=False)
def wheelset_table_kernel(tables, table, pose, rail_motion, epsilon, buffers, table_scratch):
    """Both wheels from the table, as solver.contact.geometry.search.wheelset_contact_kernel (same
    arguments plus the TableArrays `table` and a TableScratch, same output in the
    track frame). A wheel whose pose the table does not cover is computed online.
    Returns the number of wheels computed online (0, 1 or 2)."""
    out = buffers.points
    counts = buffers.counts
    scratch = table_scratch.rows
    index_scratch = table_scratch.index
    online = 0
    axle_left, axle_right = axle_frames(pose)
    rail = side_rail_pose(rail_motion, 0)
    n = table_wheel_points(tables, table, pose, rail, epsilon, buffers.work, scratch, index_scratch, out[0],
                           axle_left)
    if n < 0:
        n = wheel_distance_minima(tables, pose, rail, epsilon, buffers.work, out[0])
        online += 1
    counts[0] = n
    mirrored = mirrored_pose(pose)
    rail = side_rail_pose(rail_motion, 1)
    n = table_wheel_points(tables, table, mirrored, rail, epsilon, buffers.work, scratch, index_scratch, out[1],
                           axle_right)
    if n < 0:
        n = wheel_distance_minima(tables, mirrored, rail, epsilon, buffers.work, out[1])
        online += 1
    counts[1] = n
    for i in range(counts[1]):
        out[1, i, P_Y] = -out[1, i, P_Y]
    return online


# ---------------------------------------------------------------------------
# Python API
# ---------------------------------------------------------------------------

@dataclass
class ContactTable:
    """The contact table of one wheel/rail pair (both wheels use it, mirrored).

    Grid: `lateral` (m, the wheelset centre along the rail's inclined lateral
    axis, relative to its position at y = 0), `roll` and `yaw` (rad, relative
    to the rail). `arrays` is what the kernels take; `build_time` the wall time
    of the build (s); `disagreeing_fraction` the share of cells whose nodes do
    not hold the same branches (there every node's branches are re-located)."""

    arrays: TableArrays
    lateral: np.ndarray
    roll: np.ndarray
    yaw: np.ndarray
    build_time: float

    @property
    def disagreeing_fraction(self) -> float:
        return float(1.0 - self.arrays.flags.mean())

    @property
    def nbytes(self) -> int:
        return int(self.arrays.nodes.nbytes + self.arrays.flags.nbytes)

    def describe(self) -> str:
        step = lambda axis: (axis[1] - axis[0]) * 1e3     # noqa: E731
        return (f"contact table {self.lateral.size} x {self.roll.size} x {self.yaw.size} nodes "
                f"(lateral +-{self.lateral[-1] * 1e3:g} mm step {step(self.lateral):g} mm, "
                f"roll +-{self.roll[-1] * 1e3:g} mrad step {step(self.roll):g}, "
                f"yaw +-{self.yaw[-1] * 1e3:g} mrad step {step(self.yaw):g}), built in "
                f"{self.build_time:.2f} s, {self.nbytes / 2 ** 20:.1f} MiB, "
                f"{self.disagreeing_fraction * 100:.1f} % of cells with disagreeing nodes")


@dataclass(frozen=True)
class TableGrid:
    """Range and step of the contact table (m, rad). The defaults cover the
    lateral travel of a wheelset to flange climbing (+-20 mm), its roll there
    (S1002/UIC60 reaches 14 mrad rigid at 12 mm: +-20 mrad) and the yaw of
    curving and hunting (+-12 mrad); the steps only need to keep each
    interpolated branch within the basin of its minimum (it is re-located
    exactly), so they are coarse: 0.2 mm, 1 mrad, 3 mrad."""

    lateral_range: float = 0.020
    lateral_step: float = 2e-4
    roll_range: float = 0.020
    roll_step: float = 1e-3
    yaw_range: float = 0.012
    yaw_step: float = 3e-3

    def axes(self):
        out = []
        for rng, step, name in ((self.lateral_range, self.lateral_step, "lateral"),
                                (self.roll_range, self.roll_step, "roll"),
                                (self.yaw_range, self.yaw_step, "yaw")):
            if not (isinstance(rng, (int, float)) and isinstance(step, (int, float))
                    and math.isfinite(rng) and math.isfinite(step) and rng > 0 and step > 0):
                raise GeometryTableError(
                    f"contact table {name}: range and step must be positive numbers, got {rng!r}, {step!r}")
            n = int(round(rng / step))
            if n < 1 or n > 1000:
                raise GeometryTableError(
                    f"contact table {name}: {2 * n + 1} nodes (range {rng!r} / step {step!r}) out of 3..2001")
            out.append(np.linspace(-n * step, n * step, 2 * n + 1))
        if abs(out[1][-1]) > 0.1 or abs(out[2][-1]) > 0.1:
            raise GeometryTableError("contact table roll and yaw ranges are in rad (<= 0.1)")
        return out


def table_origin(setup: ContactSetup) -> tuple[float, float]:
    """(lateral, zeta): the rail-frame coordinates of the wheelset centre at y = 0,
    z = nominal radius (nominal rail), the origin of the table's lateral axis and its
    reference height."""
    p = setup.params
    theta = p[G_INCLINATION]
    ct, st = math.cos(theta), math.sin(theta)
    dY0, dZ0 = -p[G_RAIL_CENTRE_Y], setup.nominal_radius
    return ct * dY0 + st * dZ0, -st * dY0 + ct * dZ0


def build_contact_table(setup: ContactSetup, grid: TableGrid | None = None) -> ContactTable:
    """Precompute the contact table of `setup` over `grid` (both wheels share it)."""
    grid = grid or TableGrid()
    lat_rel, rolls, yaws = grid.axes()
    lat0, zeta_ref = table_origin(setup)
    lat = lat0 + lat_rel
    n = (lat.size, rolls.size, yaws.size)
    counts = np.zeros(n, dtype=np.int64)
    nodes = np.full(n + (MAX_BRANCHES, N_BRANCH_FIELDS), np.nan)
    work = np.empty((N_WORK_ROWS, setup.wheel_table.shape[0]))
    t0 = time.perf_counter()
    _build_kernel(setup.tables, lat, rolls, yaws, zeta_ref, work, counts, nodes)
    flags = _cell_flags(counts)
    build_time = time.perf_counter() - t0
    tparams = np.zeros(N_TABLE_PARAMS)
    tparams[TP_LAT0], tparams[TP_DLAT] = lat[0], lat[1] - lat[0]
    tparams[TP_ROLL0], tparams[TP_DROLL] = rolls[0], rolls[1] - rolls[0]
    tparams[TP_YAW0], tparams[TP_DYAW] = yaws[0], yaws[1] - yaws[0]
    tparams[TP_ZETA_REF] = zeta_ref
    return ContactTable(TableArrays(tparams, flags, nodes), lat_rel, rolls, yaws, build_time)


def table_contact_points(setup: ContactSetup, table: ContactTable, y: float, z: float,
                         roll: float, yaw: float = 0.0, rail_motion=None,
                         epsilon: float = 0.0) -> ContactPoints:
    """As solver.contact.geometry.points.contact_points, from the table."""
    check_pose(y=y, z=z, roll=roll, yaw=yaw, epsilon=epsilon)
    if abs(yaw) > 0.2 or abs(roll) > 0.2:
        raise GeometryError(f"pose out of range: roll {roll!r} rad, yaw {yaw!r} rad (|.| <= 0.2)")
    motion = rail_motion_array(rail_motion)
    buffers = setup.buffers()
    wheelset_table_kernel(setup.tables, table.arrays,
                          WheelsetPose(float(y), float(z), float(roll), float(yaw)),
                          motion, float(epsilon), buffers, table_scratch())
    return points_from_kernel(buffers.points, buffers.counts)


_SHARED_TABLES: dict = {}
_SHARED_TABLES_MAX = 8


def shared_contact_table(setup: ContactSetup, grid: TableGrid | None = None) -> ContactTable:
    """The contact table of `setup`, built once per wheel/rail pair, placement and grid
    in this process (the four wheelsets of a vehicle, the cases of a sweep share it).
    The arrays are read-only."""
    grid = grid or TableGrid()
    key = (setup.wheel_table.tobytes(), setup.rail_table.tobytes(), setup.params.tobytes(), grid)
    table = _SHARED_TABLES.get(key)
    if table is None:
        table = build_contact_table(setup, grid)
        for array in (table.arrays.tparams, table.arrays.flags, table.arrays.nodes):
            array.setflags(write=False)
        if len(_SHARED_TABLES) >= _SHARED_TABLES_MAX:
            _SHARED_TABLES.pop(next(iter(_SHARED_TABLES)))
        _SHARED_TABLES[key] = table
    return table
