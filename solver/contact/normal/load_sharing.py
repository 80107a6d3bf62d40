"""Load sharing of the contact points of one wheel: the merged patch of their
interpenetrations, each point's Hertz force by its own penetration."""

from __future__ import annotations

import math

import numpy as np
from numba import njit


# ---------------------------------------------------------------------------
# Load sharing of the contact points of one wheel (the merged patch)
# ---------------------------------------------------------------------------
# The contact points of a wheel are the penetrating minima of its distance
# function g(s) (vertical gap along the wheel profile, solver.contact.geometry). Two
# neighbouring minima whose saddle (the highest g between them) lies above the
# rail (g >= 0) touch the rail in separate patches: each carries K d^1.5 by its
# own depth d = -g (Ren & Jin 2010, Eqs. 10-11). When the saddle penetrates
# too, the interpenetration is one region: its part above the saddle's depth
# is one patch. The forces follow the merge tree of the minima (how they join
# as the level rises from the deepest point to the rail):
#   - each point carries its own part, from the depth D at which it joins a
#     neighbour (the deeper of its two adjacent saddle depths; 0 if neither
#     penetrates) to its depth d: k (d^1.5 - D^1.5);
#   - each penetrating saddle closes a region (the points it joins); the layer
#     of that region from the depth at which it joins the rest (the deeper of
#     the saddle depths bounding it, 0 at the rail) to the saddle's depth q
#     carries K (q^1.5 - D^1.5), handed down the tree: at every split, to the
#     two sides in proportion to the squares of how deep each side reaches below
#     the split's saddle (its deepest point's depth minus the saddle depth); K
#     is the stiffness of the points weighted by the same fractions.
# Every term is continuous in the depths: a point born at the rail, or from a
# shoulder of the distance function (where it is exactly as deep as its
# saddle), starts from zero force and weight; two minima of equal depth share
# symmetrically (no "deepest point" choice); a saddle rising through the rail
# splits one patch into two continuously. Separate patches (saddles above the
# rail) carry exactly the independent Hertz forces of their points. (Only where
# two saddles of three joined points pass each other in height does the split
# order, and with it the sharing, change at once: a rare event.)
#
# Why the squares: a minimum born from a shoulder then enters with its share
# growing as its reach squared, not linearly. In a flat-bottomed conformal
# patch (a flange root in a gauge corner, 130 um deep) the minima are dimples a
# fraction of a micrometre below their saddles, and the distance function's
# sampling makes them appear and vanish by such amounts. In proportion to the
# reaches, a dimple 0.22 um deep on the flange face, against 0.95 um at the
# root, took 19 % of the whole patch's layer, whose stiffness per vertical depth
# at 70 deg is a fifth of the root's at 39 deg: 15 % of the wheel's load came
# and went with it within microseconds (docs/contact_load_sharing.md); with the
# squares 5 %. At equal reaches the sides still share half each.

@njit(cache=True, error_model="numpy", _nrt=False)
def _top_saddle(saddle_depth, lo, hi):
    """The shallowest saddle between points lo..hi (ties: the lowest index)."""
    top = lo
    for j in range(lo + 1, hi):
        if saddle_depth[j] < saddle_depth[top]:
            top = j
    return top


@njit(cache=True, error_model="numpy", _nrt=False)
def _layer_fraction(depth, saddle_depth, lo, hi, i):
    """The fraction of a layer of the region of points lo..hi that point i
    carries: the product, down the merge tree, of its side's share at each
    split (the square of how deep the side reaches below the split's saddle)."""
    fraction = 1.0
    while hi > lo:
        j = _top_saddle(saddle_depth, lo, hi)
        q = saddle_depth[j]
        left = 0.0
        for k in range(lo, j + 1):
            left = max(left, depth[k] - q)
        right = 0.0
        for k in range(j + 1, hi + 1):
            right = max(right, depth[k] - q)
        left *= left            # (the squares of the reaches: the comment above)
        right *= right
        both = left + right
        if i <= j:
            fraction *= left / both if both > 0.0 else 0.5
            hi = j
        else:
            fraction *= right / both if both > 0.0 else 0.5
            lo = j + 1
    return fraction


@njit(cache=True, error_model="numpy", _nrt=False)
def _region_bounds(saddle_depth, n, j):
    """(first, last) point of the region saddle j closes: the points reached from
    it without crossing a shallower saddle (ties: the lower index is shallower)."""
    lo = j
    while lo > 0 and (saddle_depth[lo - 1] > saddle_depth[j]
                      or (saddle_depth[lo - 1] == saddle_depth[j] and lo - 1 > j)):
        lo -= 1
    hi = j
    while hi < n - 2 and (saddle_depth[hi + 1] > saddle_depth[j]
                          or (saddle_depth[hi + 1] == saddle_depth[j] and hi + 1 > j)):
        hi += 1
    return lo, hi + 1


@njit(cache=True, error_model="numpy", _nrt=False)
def merged_patch_forces_kernel(depth, saddle_depth, stiffness, n, force_out, shared_out, own_out):
    """Elastic normal forces of the n contact points of one wheel, in order along
    the wheel profile (see the comment above): depth[i] = -gap of point i (m,
    vertical; <= 0: not in contact), saddle_depth[j] = -(the highest gap
    between points j and j + 1) (m; <= 0: separate patches), stiffness[i] =
    k_i, the force along the point's normal per (vertical depth)^1.5
    (N/m^1.5). force_out[i] receives the force (N); shared_out[i] 1.0 where the
    point shares a patch (its force differs from k_i depth_i^1.5), else 0.0;
    own_out[i] its own part, below its saddles (N). Returns the total."""
    for i in range(n):
        force_out[i] = 0.0
        shared_out[i] = 0.0
        own_out[i] = 0.0
    for i in range(n):
        d = depth[i]
        if not d > 0.0:
            continue
        base = 0.0
        if i > 0 and saddle_depth[i - 1] > base:
            base = saddle_depth[i - 1]
        if i < n - 1 and saddle_depth[i] > base:
            base = saddle_depth[i]
        if d > base:
            force_out[i] = stiffness[i] * (d * math.sqrt(d) - base * math.sqrt(base))
            own_out[i] = force_out[i]
        if base > 0.0:
            shared_out[i] = 1.0
    for j in range(n - 1):
        q = saddle_depth[j]
        if not q > 0.0:
            continue
        lo, hi = _region_bounds(saddle_depth, n, j)
        base = 0.0
        if lo > 0 and saddle_depth[lo - 1] > base:
            base = saddle_depth[lo - 1]
        if hi < n - 1 and saddle_depth[hi] > base:
            base = saddle_depth[hi]
        if not q > base:
            continue
        layer_stiffness = 0.0
        for i in range(lo, hi + 1):
            layer_stiffness += _layer_fraction(depth, saddle_depth, lo, hi, i) * stiffness[i]
        layer = layer_stiffness * (q * math.sqrt(q) - base * math.sqrt(base))
        for i in range(lo, hi + 1):
            force_out[i] += layer * _layer_fraction(depth, saddle_depth, lo, hi, i)
    total = 0.0
    for i in range(n):
        total += force_out[i]
    return total


def merged_patch_forces(depth, saddle_depth, stiffness):
    """NumPy reference of merged_patch_forces_kernel, written as the merge tree it
    describes: top-down, each region split at its highest saddle, the layers
    above it handed to the two sides. Returns (forces, shared) arrays."""
    depth = np.where(np.asarray(depth, dtype=float) > 0.0, np.asarray(depth, dtype=float), 0.0)
    saddle_depth = np.asarray(saddle_depth, dtype=float)
    stiffness = np.asarray(stiffness, dtype=float)
    n = depth.size
    force = np.zeros(n)
    shared = np.zeros(n)
    def fractions(lo, hi):
        # the share of each point of the region lo..hi-1 in a layer above its top saddle
        if hi - lo == 1:
            return np.ones(1)
        inner = saddle_depth[lo:hi - 1]
        j = lo + int(np.flatnonzero(inner == inner.min())[0])
        q = saddle_depth[j]
        left = max(0.0, depth[lo:j + 1].max() - q) ** 2
        right = max(0.0, depth[j + 1:hi].max() - q) ** 2
        both = left + right
        wl, wr = (left / both, right / both) if both > 0.0 else (0.5, 0.5)
        return np.concatenate([wl * fractions(lo, j + 1), wr * fractions(j + 1, hi)])

    def split(lo, hi, base):
        # the region of points lo..hi-1, whose part below `base` remains
        if hi - lo == 1:
            if depth[lo] > base:
                force[lo] += stiffness[lo] * (depth[lo] ** 1.5 - base ** 1.5)
            if base > 0.0:
                shared[lo] = 1.0
            return
        inner = saddle_depth[lo:hi - 1]
        j = lo + int(np.flatnonzero(inner == inner.min())[0])
        q = saddle_depth[j]
        if q > base:
            f = fractions(lo, hi)
            force[lo:hi] += np.dot(f, stiffness[lo:hi]) * (q ** 1.5 - base ** 1.5) * f
            base = q
        split(lo, j + 1, base)
        split(j + 1, hi, base)

    if n:
        split(0, n, 0.0)
    return force, shared
