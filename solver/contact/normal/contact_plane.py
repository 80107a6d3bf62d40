"""Non-Hertzian patches in their contact planes: the gap along each plane's
normal between the wheel and the rail profiles, and the patches of one wheel."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from .boundary_element import exact_normal_contact, exact_normal_contact_approach
from .hertz import NormalContactError


# ---------------------------------------------------------------------------
# Gaps in the contact plane of a wheel on its rail
# ---------------------------------------------------------------------------
# Side-local track frame of one wheel (solver.contact.geometry): Y lateral, positive
# towards the field side of the wheel's rail (the track's +y for the left
# wheel; the right wheel is the left wheel of the mirrored wheelset), Z up.
# The contact plane of a rigid contact point is the plane tangent to the rail
# at that point (the rail is a prismatic surface along x, so the plane
# contains the rolling direction x); at a rigid contact of a wheelset without
# yaw it is tangent to the wheel as well. In the plane: x (rolling), s along
# the tangent t = (cos d, sin d) in (Y, Z), and the normal n = (-sin d, cos d)
# pointing from the rail into the wheel, d the contact angle (CONVENTIONS.md:
# positive when the normal force pushes the wheel towards the track centre).
# The gap at (x, s) is measured along n, from the rail surface to the wheel
# surface: the wheel is the exact body of revolution of its profile about the
# axle of the pose (roll and yaw included), the rail the prismatic surface of
# its (inclined, moved) profile. This is the planar contact approach of
# Vollebregt's CONTACT (E.A.H. Vollebregt, "User guide for CONTACT", planar
# contact, D = 2), with the plane taken at the rigid contact point.

#: Fine sampling step of the profiles' splines for the gap construction (m):
#: the linear interpolation between samples errs by curvature * step^2 / 8,
#: below 0.01 um for radii down to 5 mm.
PLANE_SAMPLE_STEP = 2e-5


class ContactPlane(NamedTuple):
    """The contact plane of one rigid contact point (side-local track frame, m, rad)."""

    origin_y: float     # Y of the rail contact point (m)
    origin_z: float     # Z of the rail contact point (m)
    angle: float        # contact angle d (rad): normal n = (-sin d, cos d), tangent t = (cos d, sin d)
    rail_u: float       # lateral coordinate of the point on the rail profile (m)

    def to_plane(self, Y, Z):
        """(s, n) plane coordinates of side-local points (Y, Z)."""
        dy = np.asarray(Y, dtype=float) - self.origin_y
        dz = np.asarray(Z, dtype=float) - self.origin_z
        c, sn = math.cos(self.angle), math.sin(self.angle)
        return dy * c + dz * sn, -dy * sn + dz * c


@dataclass(frozen=True)
class ContactPlaneGrid:
    """Undeformed normal gap of one wheel on its rail on a grid of the contact plane (SI).

    gap: (nx, ny) normal distance rail -> wheel at the element centres (m,
    negative = interpenetration); x: (nx,) rolling coordinates, s: (ny,)
    in-plane lateral coordinates from the plane's origin (m); dx, ds (m);
    plane: the ContactPlane; min_gap: the smallest gap on the grid (m).
    """

    gap: np.ndarray
    x: np.ndarray
    s: np.ndarray
    dx: float
    ds: float
    plane: ContactPlane
    min_gap: float


def _side_pose(pose, side):
    """The pose of the wheel `side` as the left wheel of a (possibly mirrored) wheelset."""
    from ..geometry.setup import WheelsetPose
    if side == 0:
        return WheelsetPose(float(pose.y), float(pose.z), float(pose.roll), float(pose.yaw))
    if side == 1:
        return WheelsetPose(-float(pose.y), float(pose.z), -float(pose.roll), -float(pose.yaw))
    raise NormalContactError(f"side must be 0 (left) or 1 (right), got {side!r}")


def _rail_placement(setup, rail):
    """(centre_y, vertical, theta) of the (inclined, moved) rail in the side-local frame."""
    lateral, vertical, roll = (0.0, 0.0, 0.0) if rail is None else (float(v) for v in rail)
    return setup.rail_centre_y + lateral, vertical, setup.inclination + roll


def contact_plane(setup, rail_u, rail=None) -> ContactPlane:
    """The plane tangent to the rail at its profile coordinate rail_u (m).

    setup: solver.contact.geometry.setup.ContactSetup; rail: RailPose (lateral, vertical,
    roll) of the wheel's rail in its side-local frame, or None (at rest).
    """
    u = float(rail_u)
    centre, vertical, theta = _rail_placement(setup, rail)
    z = float(setup.rail.height_at(u))
    slope = float(setup.rail.slope_at(u))
    c, sn = math.cos(theta), math.sin(theta)
    origin_y = centre + c * u - sn * z
    origin_z = vertical + sn * u + c * z
    # rail normal (-z', 1) in the rail frame, turned by theta: d = atan(z') + theta
    return ContactPlane(origin_y, origin_z, math.atan(slope) + theta, u)


def _monotone_window(s, n, s_limits, name, cover=True):
    """The section (s, n) near the plane's origin as an increasing function n(s) over s_limits.

    Starts at the sample nearest the origin (the contact point) and extends
    both ways while s keeps its direction (a part of the profile that folds
    over beyond 90 deg to the plane ends the run), then keeps the samples
    within the limits plus one on each side. cover: require the run to span
    the limits.
    """
    lo, hi = s_limits
    k0 = int(np.argmin(s * s + n * n))
    steps = np.diff(s)
    direction = 1.0 if steps[min(k0, steps.size - 1)] > 0.0 else -1.0
    breaks = np.nonzero(direction * steps <= 0.0)[0]
    before = breaks[breaks < k0]
    after = breaks[breaks >= k0]
    first = int(before[-1]) + 1 if before.size else 0
    last = int(after[0]) if after.size else s.size - 1
    s_run, n_run = s[first:last + 1], n[first:last + 1]
    if direction < 0:
        s_run, n_run = s_run[::-1], n_run[::-1]
    a = max(int(np.searchsorted(s_run, lo)) - 1, 0)
    b = min(int(np.searchsorted(s_run, hi)) + 1, s_run.size)
    s_run, n_run = s_run[a:b], n_run[a:b]
    if s_run.size < 2 or (cover and (s_run[0] > lo or s_run[-1] < hi)):
        raise NormalContactError(
            f"the {name} profile does not cover the contact plane window (it ends, or folds over "
            "beyond 90 deg to the plane)")
    return s_run, n_run


def _rail_section(setup, plane, rail, s_limits, cover=True):
    """Rail surface n(s) in the plane, sampled on [s_limits] (arrays s, n, increasing s)."""
    centre, vertical, theta = _rail_placement(setup, rail)
    profile = setup.rail
    u = np.arange(profile.lateral_min, profile.lateral_max, PLANE_SAMPLE_STEP)
    z = profile.height_at(u)
    c, sn = math.cos(theta), math.sin(theta)
    s, n = plane.to_plane(centre + c * u - sn * z, vertical + sn * u + c * z)
    return _monotone_window(s, n, s_limits, "rail", cover)


def _wheel_points(setup, pose, plane, x, s_w):
    """Plane coordinates (s, n) of the wheel surface points of profile coordinates s_w at the
    rolling coordinate(s) x: arrays of shape broadcast(x, s_w) (left-wheel pose)."""
    profile = setup.wheel
    axial = setup.taping_line_axial + s_w
    radius = setup.nominal_radius + profile.height_at(s_w)
    cphi, sphi = math.cos(pose.roll), math.sin(pose.roll)
    cpsi, spsi = math.cos(pose.yaw), math.sin(pose.yaw)
    # wheel point (R sin th, a, -R cos th) turned by Rz(yaw) Rx(roll): its x is
    # R cos(psi) sin th - R sin(phi) sin(psi) cos th - a cos(phi) sin(psi) = x
    a_coef = radius * cpsi
    b_coef = -radius * sphi * spsi
    amplitude = np.hypot(a_coef, b_coef)
    ratio = (x + axial * cphi * spsi) / amplitude
    if np.any(np.abs(ratio) >= 1.0):
        raise NormalContactError("rolling coordinate beyond the wheel radius")
    th = np.arcsin(ratio) - np.arctan2(b_coef, a_coef)
    lateral = axial * cphi + radius * np.cos(th) * sphi
    Y = pose.y + radius * np.sin(th) * spsi + lateral * cpsi
    Z = pose.z + axial * sphi - radius * np.cos(th) * cphi
    return plane.to_plane(Y, Z)


def _wheel_section(setup, pose, plane, x, s_limits, cover=True):
    """Wheel surface n(s) in the plane at the rolling coordinate x (left-wheel pose)."""
    profile = setup.wheel
    s_w = np.arange(profile.lateral_min, profile.lateral_max, PLANE_SAMPLE_STEP)
    s, n = _wheel_points(setup, pose, plane, float(x), s_w)
    return _monotone_window(s, n, s_limits, "wheel", cover)


def contact_plane_gap(setup, pose, rail_u, *, side=0, rail=None, cell=1e-4, depth=3e-4,
                      s_window=25e-3, others=()) -> ContactPlaneGrid:
    """Normal gap of one wheel on its rail on a grid of the contact plane at rail_u.

    setup: solver.contact.geometry.setup.ContactSetup; pose: WheelsetPose (track frame);
    rail_u: the rail profile coordinate (m) of the rigid contact point whose
    plane is used; side: 0 left, 1 right wheel; rail: RailPose of the wheel's
    rail in its side-local frame (None: at rest); cell: element size (m);
    depth: the window holds the contiguous band around the contact point where
    the gap along x = 0 is within `depth` of its minimum, plus two elements,
    and along x the extent where x^2 cos(d) / (2 r) < depth, plus two
    elements (m); s_window: half-width of the search for that band (m);
    others: rail profile coordinates (m) of other contact points of the wheel
    that make patches of their own: the band stops at the highest gap between
    the contact point and each of them (the ridge between two patches).
    """
    if not (np.isfinite(cell) and cell > 0.0 and np.isfinite(depth) and depth > 0.0):
        raise NormalContactError("cell and depth must be finite and > 0 m")
    left_pose = _side_pose(pose, side)
    plane = contact_plane(setup, rail_u, rail)
    limits = (-float(s_window), float(s_window))
    s_r, n_r = _rail_section(setup, plane, rail, limits, cover=False)
    s_w, n_w = _wheel_section(setup, left_pose, plane, 0.0, limits, cover=False)
    s_line = np.arange(max(s_r[0], s_w[0]), min(s_r[-1], s_w[-1]), 0.25 * cell)
    if s_line.size < 3:
        raise NormalContactError("wheel and rail do not face each other in the contact plane")
    gap_line = np.interp(s_line, s_w, n_w) - np.interp(s_line, s_r, n_r)
    k0 = int(np.argmin(np.abs(s_line)))
    level = gap_line[k0] + depth
    lo_stop, hi_stop = 0, s_line.size - 1
    for u_other in others:
        other = contact_plane(setup, u_other, rail)
        s_other, _ = plane.to_plane(other.origin_y, other.origin_z)
        k_other = int(np.argmin(np.abs(s_line - s_other)))
        if k_other > k0:
            hi_stop = min(hi_stop, k0 + int(np.argmax(gap_line[k0:k_other + 1])))
        elif k_other < k0:
            lo_stop = max(lo_stop, k_other + int(np.argmax(gap_line[k_other:k0 + 1])))
    lo = k0
    while lo > lo_stop and gap_line[lo - 1] < level:
        lo -= 1
    hi = k0
    while hi < hi_stop and gap_line[hi + 1] < level:
        hi += 1
    s_lo = s_line[lo] - 2.0 * cell
    s_hi = s_line[hi] + 2.0 * cell
    ns = max(int(math.ceil((s_hi - s_lo) / cell)), 4)
    s = s_lo + cell * (np.arange(ns) + 0.5)
    radius = setup.nominal_radius + float(np.max(setup.wheel.height))
    x_half = math.sqrt(2.0 * radius * depth / max(math.cos(plane.angle), 0.05)) + 2.0 * cell
    nx = max(int(math.ceil(2.0 * x_half / cell)), 4)
    x = -0.5 * nx * cell + cell * (np.arange(nx) + 0.5)
    gap = plane_gap_on_grid(setup, pose, plane, x, s, side=side, rail=rail)
    return ContactPlaneGrid(gap, x, s, float(cell), float(cell), plane, float(gap.min()))


def plane_gap_on_grid(setup, pose, plane, x, s, *, side=0, rail=None):
    """Normal gap (m) of one wheel on its rail at the points x (nx,) by s (ns,) of a contact plane.

    The wheel of `pose` (WheelsetPose, track frame; side 0 left, 1 right) as
    the exact body of revolution of its profile; the rail (RailPose `rail`,
    side-local, or None) as the prismatic surface of its profile. Returns an
    (nx, ns) array, negative = interpenetration.
    """
    left_pose = _side_pose(pose, side)
    x = np.asarray(x, dtype=float)
    s = np.asarray(s, dtype=float)
    step = float(s[1] - s[0]) if s.size > 1 else PLANE_SAMPLE_STEP
    window = (float(s[0]) - step, float(s[-1]) + step)
    s_r, n_r = _rail_section(setup, plane, rail, window)
    rail_n = np.interp(s, s_r, n_r)
    # the wheel samples that cover the window at x = 0, with a margin for the other rows
    profile = setup.wheel
    s_all = np.arange(profile.lateral_min, profile.lateral_max, PLANE_SAMPLE_STEP)
    s_mid, n_mid = _wheel_points(setup, left_pose, plane, 0.0, s_all)
    s_run, _ = _monotone_window(s_mid, n_mid, window, "wheel")
    margin = 2e-3
    inside = np.nonzero((s_mid >= s_run[0] - margin) & (s_mid <= s_run[-1] + margin))[0]
    k_lo, k_hi = int(inside.min()), int(inside.max()) + 1
    samples = s_all[k_lo:k_hi]
    S, N = _wheel_points(setup, left_pose, plane, x[:, None], samples[None, :])
    if S[0, -1] < S[0, 0]:
        S, N = S[:, ::-1], N[:, ::-1]
    gap = np.empty((x.size, s.size))
    monotone = np.all(np.diff(S, axis=1) > 0.0, axis=1)
    for i in range(x.size):
        if monotone[i] and S[i, 0] <= window[0] and S[i, -1] >= window[1]:
            gap[i] = np.interp(s, S[i], N[i]) - rail_n
        else:
            s_w, n_w = _wheel_section(setup, left_pose, plane, float(x[i]), window)
            gap[i] = np.interp(s, s_w, n_w) - rail_n
    return gap


@dataclass(frozen=True)
class WheelNormalContact:
    """Exact normal contact of one wheel, each patch in its own contact plane. SI units.

    grids: ContactPlaneGrid per patch, its gap that of the loaded (lowered)
    wheel; results: ExactNormalResult per patch (its y axis is the plane's s);
    normal_forces: N per patch (N); approaches: the largest interpenetration
    of the undeformed surfaces of each patch along its plane normal (m);
    vertical_force: sum of N cos(d) (N), the vertical load carried;
    vertical_approach: how far the wheelset is lowered from its rigid contact
    to carry the load (m); iterations: evaluations of the vertical balance.
    """

    grids: tuple
    results: tuple
    normal_forces: tuple
    approaches: tuple
    vertical_force: float
    vertical_approach: float
    iterations: int


#: Contact points of one wheel farther apart than this along the rail profile are separate
#: patches, each in its own contact plane; nearer ones share the plane of the deeper one
#: (CONTACT's separation distance d_sep of its examples, 8 mm).
PATCH_SEPARATION = 8e-3


def _plane_patches(setup, pose, points, side, rail, cell, depth):
    """Contact-plane grids of the contact points of one wheel, deepest first: a point within
    PATCH_SEPARATION (along the rail profile) of an earlier one belongs to its patch."""
    count = int(points.count[side])
    if count < 1:
        raise NormalContactError("the wheel has no contact point")
    order = np.argsort(points.gap[side, :count])
    leaders = []
    for k in order:
        u = float(points.y_rail[side, k])
        if all(abs(u - v) >= PATCH_SEPARATION for v in leaders):
            leaders.append(u)
    grids = []
    for u in leaders:
        others = tuple(v for v in leaders if v != u)
        grids.append(contact_plane_gap(setup, pose, u, side=side, rail=rail, cell=cell, depth=depth,
                                       others=others))
    return grids


def wheel_normal_contact(setup, pose, points, vertical_load, young, poisson, *, side=0, rail=None,
                         cell=1e-4, depth=3e-4, tolerance=1e-9, load_tolerance=1e-6) -> WheelNormalContact:
    """Exact frictionless normal contact of one wheel carrying a vertical load, in contact planes.

    setup: ContactSetup; pose: WheelsetPose of the rigid contact (e.g. a
    static_contact() result); points: its ContactPoints (solver.contact.geometry);
    side: 0 left, 1 right; vertical_load: the load of the wheel on its rail
    along the track's vertical (N); young (Pa), poisson. Each patch is solved
    in the plane tangent to the rail at its rigid contact point
    (contact_plane_gap), the patches elastically independent (as CONTACT
    treats separate patches). The wheelset is lowered by dz from its rigid
    contact until sum N_i cos(d_i) equals the load (frictionless: the normal
    forces carry it alone), and the gaps are those of the lowered wheel: on an
    inclined plane the vertical motion also slides the wheel along the plane
    by dz sin(d), which changes a conformal flange-root patch by several per
    cent (CONTACT's module 1 does the same). dz is found by the secant method
    to a relative load error below load_tolerance.
    """
    if not (np.isfinite(vertical_load) and vertical_load > 0.0):
        raise NormalContactError(f"vertical load must be finite and > 0 N, got {vertical_load!r}")
    if side not in (0, 1):
        raise NormalContactError(f"side must be 0 (left) or 1 (right), got {side!r}")
    from ..geometry.setup import WheelsetPose
    grids = _plane_patches(setup, pose, points, side, rail, cell, depth)
    cosines = [math.cos(g.plane.angle) for g in grids]
    if min(cosines) <= 0.0:
        raise NormalContactError("a contact plane is vertical or beyond: it carries no vertical load")

    def lowered_gaps(dz):
        moved = WheelsetPose(float(pose.y), float(pose.z) - dz, float(pose.roll), float(pose.yaw))
        return [plane_gap_on_grid(setup, moved, g.plane, g.x, g.s, side=side, rail=rail) for g in grids]

    def finish(dz, gaps, results, iterations):
        moved = tuple(replace(g, gap=h, min_gap=float(h.min())) for g, h in zip(grids, gaps))
        return WheelNormalContact(moved, tuple(results), tuple(r.total_force for r in results),
                                  tuple(max(-float(h.min()), 0.0) for h in gaps),
                                  float(sum(r.total_force * c for r, c in zip(results, cosines))), float(dz),
                                  iterations)

    first = exact_normal_contact(grids[0].gap, grids[0].dx, grids[0].ds, vertical_load / cosines[0], young,
                                 poisson, x0=float(grids[0].x[0]), y0=float(grids[0].s[0]), method="fft",
                                 tolerance=tolerance)
    dz = first.approach / cosines[0]
    if len(grids) == 1:
        # one patch carries N = load / cos(d): lower the wheel until the solution needs no further
        # rigid approach of the lowered surfaces (a fixed point: the sliding is a small perturbation)
        grid = grids[0]
        for iterations in range(1, 31):
            gaps = lowered_gaps(dz)
            result = exact_normal_contact(gaps[0], grid.dx, grid.ds, vertical_load / cosines[0], young, poisson,
                                          x0=float(grid.x[0]), y0=float(grid.s[0]), method="fft",
                                          tolerance=tolerance)
            dz += result.approach / cosines[0]
            if abs(result.approach) <= load_tolerance * max(abs(dz), 1e-12):
                return finish(dz - result.approach / cosines[0], gaps, [result], iterations)
        raise NormalContactError("the wheel's vertical balance did not converge")

    pressures = [None] * len(grids)

    def balance(z):
        gaps = lowered_gaps(z)
        results = [exact_normal_contact_approach(h, g.dx, g.ds, 0.0, young, poisson, x0=float(g.x[0]),
                                                 y0=float(g.s[0]), tolerance=tolerance, initial_pressure=p)
                   for h, g, p in zip(gaps, grids, pressures)]
        for k, r in enumerate(results):
            if r.total_force > 0.0:
                pressures[k] = r.pressure
        return sum(r.total_force * c for r, c in zip(results, cosines)) - vertical_load, gaps, results

    # several patches: secant method on dz from the principal patch's estimate
    z0, z1 = dz, 1.05 * dz
    f0 = balance(z0)[0]
    f1, gaps, results = balance(z1)
    iterations = 2
    while abs(f1) > load_tolerance * vertical_load:
        if iterations >= 40 or f1 == f0:
            raise NormalContactError("the wheel's vertical balance did not converge")
        z2 = z1 - f1 * (z1 - z0) / (f1 - f0)
        z2 = min(max(z2, 0.25 * z1), 4.0 * z1)
        z0, f0 = z1, f1
        z1 = z2
        f1, gaps, results = balance(z1)
        iterations += 1
    return finish(z1, gaps, results, iterations)
