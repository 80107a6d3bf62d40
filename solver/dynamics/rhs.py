"""The numba side of the wheelset: data layouts, right-hand side, step check, outputs.

Rigid 6-DOF wheelset on a track with N elastic contact points per wheel.

Equations of motion in the track-following frame (x forward, y left, z up; the
frame moves along the track centreline at the speed V), after Ren & Jin (2010,
Eq. 8a-e), generalised to up to MAX_POINTS contact points per wheel:

  m (x'')           = sum Fx + Fx_ext
  m (y'')           = sum Fy + Fy_ext - m V^2 kappa cos(phi_t) - m g sin(phi_t)
  m (z'')           = sum Fz + Fz_ext - m g cos(phi_t) + m V^2 kappa sin(phi_t)
  Jx roll''         = sum Mx + Mx_ext + Jy Omega (yaw' + V kappa)         (gyroscopic)
  Jz yaw''          = sum Mz + Mz_ext - Jy Omega roll' - Jz V^2 kappa'    (track heading)
  Jy Omega'         = sum My + axle torque

kappa = track curvature (1/m, + left curve), phi_t = track cant angle (rad, +
lifts the left rail), Omega = spin about the axle (rad/s, + rolls forward,
Omega = V/r0 in pure rolling). The contact forces come from the contact search
(solver.contact.geometry, trace line + multipoint detection) at every right-hand-side
evaluation: each contact point's Hertz contact by its own penetration, the
points of one wheel sharing the load of the patches their interpenetrations
form (solver.contact.normal.load_sharing.merged_patch_forces_kernel: a point alone carries K
delta^1.5), plus C ddelta/dt, never pulling; its creep forces from the
creepages (solver.contact.creep, model by parameter) on the Hertz ellipse of its load.
The single-point model puts the wheel's whole normal load on its deepest point.
Contact points appear and vanish as the wheel moves, with zero load; a wheel may lift.

Creepages at a contact point (velocity of the wheel material relative to the
rail, divided by V, in the contact frame t1 = rolling, t2 = lateral in the
contact plane towards +y, n = normal from rail into wheel):
  xi = (v_w - v_r).t1 / V, eta = (v_w - v_r).t2 / V, spin = (omega_w.n) / V,
with v_w = v_C + omega_w x r_c, omega_w = Omega e + (roll', 0, yaw' + V kappa).

The numba kernel `wheelset_rhs` evaluates all of this; solver.dynamics.integrators steps
it; solver.model.wheelset (`WheelsetModel`) wraps both with parameters, the track,
inputs, outputs and state snapshots. This module owns the data layouts everybody
shares: the state vector (S_*), the model parameter vector (M_*), the contact
rows (C_*), the summary (O_*), the derived outputs (D_*), the input vector (U_*)
and the output record (R_*). Kernel arguments come in named groups (named
tuples, plain structs to numba): TrackPoint, StepInputs, ContactResults and
geometry's ContactTables and ContactBuffers.
"""

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ..contact.creep.forces import creep_forces_kernel
from ..contact.creep.inputs import CreepPatch
from ..contact.creep.kalker import kalker_coefficients_kernel
from ..contact.creep.models import KALKER
from ..contact.geometry.setup import WheelsetPose
from ..contact.geometry.distance import interp_column
from ..contact.geometry.table import wheelset_table_kernel
from ..contact.geometry.tracked import wheelset_contact_tracked
from ..contact.geometry.update import wheelset_contact_update
from ..contact.normal.hertz import hertz_from_penetration_fit_kernel
from ..contact.normal.load_sharing import merged_patch_forces_kernel
from ..contact.normal.patch_curvature import patch_geometry
from .suspension import builtin_suspension_loads
from ..layout import (
    C_A, C_ACTIVE, C_ANGLE, C_B, C_CREEP_LAT, C_CREEP_LONG, C_ELASTIC_NORMAL, C_ETA, C_FX, C_FY,
    C_FZ, C_GAP, C_HERTZ_FLAG, C_NORMAL, C_PENETRATION, C_RADIUS, C_SPIN, C_SPIN_MOMENT, C_S_WHEEL,
    C_U_RAIL, C_X, C_XI, C_Y, C_Z, G_RAIL_CENTRE_Y, G_RAIL_DU, G_RAIL_U0, G_TAPING_AXIAL,
    G_WHEEL_DS, G_WHEEL_S0, HZ_A, HZ_A_SUM, HZ_B, HZ_B_SUM, HZ_FLAG, HZ_FORCE, HZ_RANK, HZ_SHIFT,
    HZ_STIFFNESS, HZ_TURN, MAX_POINTS, M_BOGIE, M_BOX_SEMI_SPACING, M_CONTACT_DAMPING,
    M_CREEP_MODEL, M_CREEP_OPTIONS, M_F11, M_F22, M_F23, M_F33, M_FRICTION, M_GRAVITY,
    M_GYROSCOPIC, M_HUNT_CROSSLEY, M_JX, M_JY, M_JZ, M_MASS, M_MULTIPOINT, M_POISSON,
    M_RAIL_DAMPING, M_RAIL_MASS, M_RAIL_STIFFNESS, M_ROLL_RATE_CREEPAGE, M_SPEED, M_TRACK_MODEL,
    M_YOUNG, N_CONTACT, N_CREEP_OPTIONS, O_GAP_LEFT, O_MAX_PENETRATION, O_RAIL_ON_WHEEL_LEFT,
    PATCH_ANGLE, PATCH_DEPTH, PATCH_FORCE, PATCH_INDEX, PATCH_OWN, PATCH_SADDLE, PATCH_SHARED,
    PATCH_X, PATCH_Y, PATCH_Z, PATCH_STIFFNESS, P_GAP, P_RADIUS, P_RAIL_SLOPE, P_RAIL_Z2, P_SADDLE,
    P_S_WHEEL, P_TAN_CONTACT, P_U_RAIL, P_WHEEL_F2, P_WHEEL_SLOPE, P_X, P_Y, P_Z, S_RAIL,
    S_RAIL_RATE, S_ROLL, S_ROLL_RATE, S_SPIN_ANGLE, S_SPIN_RATE, S_VX, S_VY, S_VZ, S_X, S_Y, S_YAW,
    S_YAW_RATE, S_Z, T_D2, T_SLOPE, W_PATCH, W_RAIL,
)


GRAVITY = 9.81
# the creep model whose linear coefficients may be overridden (M_F11 .. M_F33)
KALKER_ID = KALKER.id


class TrackPoint(NamedTuple):
    """The track layout where the wheelset is."""

    curvature: float        # kappa (1/m), + left curve
    curvature_rate: float   # d kappa / ds (1/m^2)
    cant: float             # cant angle phi_t (rad), + lifts the left rail


class StepInputs(NamedTuple):
    """External inputs, held constant over one step; (2, 3) arrays are per side
    (left, right) in the track frame."""

    rail_motion: np.ndarray     # lateral, vertical (m), roll (rad) of each rail
    rail_velocity: np.ndarray   # their rates
    box_force: np.ndarray       # force on each axle box (N)
    box_moment: np.ndarray      # moment on each axle box (N m)
    axle_torque: float          # about the axle (N m), + drives forward


class StepContact(NamedTuple):
    """The contact arrays a right-hand side works on."""

    tables: object          # geometry ContactTables
    search: object          # geometry ContactBuffers
    results: object         # ContactResults
    table_search: object    # geometry table TableSearch (an empty table: the online search)


class ContactResults(NamedTuple):
    """What `wheelset_rhs` reports of the contact besides the derivative."""

    contact: np.ndarray   # (2, MAX_POINTS, N_CONTACT) rows C_*
    summary: np.ndarray   # (N_SUMMARY,) entries O_*


@njit(cache=True, error_model="numpy", _nrt=False)
def _cross(ax, ay, az, bx, by, bz):
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx


@njit(cache=True, error_model="numpy", _nrt=False)
def kalker_with_overrides(model, xi, eta, spin, a, b, shear, nu, share):
    """Kalker's linear creep forces (Fx, Fy, Mz, rail on wheel) with the
    coefficients overridden where model[M_F11..M_F33] > 0; the others from
    Kalker's table: f11 = G a b C11, f22 = G a b C22, f23 = G (ab)^1.5 C23,
    f33 = G (ab)^2 C33 (docs/CONVENTIONS.md, Creep).

    An override is the coefficient of the wheel's whole load. A point carrying
    `share` of it (multipoint contact) gets it scaled as Kalker's own are with
    a Hertz patch of that load (a b ~ N^(2/3)): f11, f22 by share^(2/3), f23 by
    share, f33 by share^(4/3). So a point that joins with no load adds no creep
    force (a constant coefficient per point would add its whole force at once)."""
    c11, c22, c23, c33 = kalker_coefficients_kernel(a / b, nu)
    ab = a * b
    area = share ** (2.0 / 3.0)
    f11 = model[M_F11] * area if model[M_F11] > 0.0 else shear * ab * c11
    f22 = model[M_F22] * area if model[M_F22] > 0.0 else shear * ab * c22
    f23 = model[M_F23] * share if model[M_F23] > 0.0 else shear * ab ** 1.5 * c23
    f33 = model[M_F33] * area * area if model[M_F33] > 0.0 else shear * ab * ab * c33
    return -f11 * xi, -f22 * eta - f23 * spin, f23 * eta - f33 * spin


@njit(cache=True, error_model="numpy", _nrt=False)
def rails_under_wheels(state, inputs, scratch):
    """The rails as the contact sees them: the rail inputs (irregularities, a
    host's track model) plus the lumped rail bodies' displacements and rates
    (state S_RAIL, S_RAIL_RATE; 0 with the prescribed rails). Written into
    `scratch` (12 entries: motion then velocity); returns the two (2, 3) views."""
    for side in range(2):
        for c in range(3):
            j = 3 * side + c
            scratch[j] = inputs.rail_motion[side, c] + state[S_RAIL + j]
            scratch[6 + j] = inputs.rail_velocity[side, c] + state[S_RAIL_RATE + j]
    return scratch[0:6].reshape((2, 3)), scratch[6:12].reshape((2, 3))


@njit(cache=True, error_model="numpy", _nrt=False)
def locate_contacts(tables, pose, rail_motion, search, table_search, update_only, reuse_geometry):
    """Stage 1, the contact points (solver.contact.geometry): none searched when
    `reuse_geometry` (those in `search` are this pose's), re-located when
    `update_only`, else the full search (the table's, or the online tracked one)."""
    epsilon = -1.0   # elastic mode: every penetrating minimum is a candidate
    if reuse_geometry:
        pass
    elif update_only:
        wheelset_contact_update(tables, pose, rail_motion, search)
    elif table_search.arrays.tparams.size > 0:
        wheelset_table_kernel(tables, table_search.arrays, pose, rail_motion, epsilon,
                              search, table_search.scratch)
    else:
        wheelset_contact_tracked(tables, pose, rail_motion, epsilon, search)


@njit(cache=True, error_model="numpy", _nrt=False)
def _region_blend(points, side, n_points, patch, hertz):
    """Each point's contact angle and place drawn towards its region's
    (PATCH_ANGLE, PATCH_X/Y/Z, by rank): mu times the region's plus (1 - mu) times
    its own, mu the share of its load that it carries in layers shared with the
    other points of its region (1 - its own part / its force: 0 for a patch of
    its own, 1 for a point born from a shoulder), the region the points joined
    by penetrating saddles, its angle and place their load-weighted mean. In a
    flat-bottomed conformal patch (a flange root in a gauge corner) the minima of
    the distance function wander over millimetres for sub-micrometre changes of
    the gap (load_sharing's comment): the load's direction and place must not
    (the rail bodies, tens of kg, would follow every such jump)."""
    n_max = MAX_POINTS
    sign = 1.0 if side == 0 else -1.0
    first = 0
    while first < n_points:
        last = first
        while last < n_points - 1 and patch[PATCH_SADDLE * n_max + last] > 0.0:
            last += 1
        weight = 0.0
        angle = 0.0
        x = 0.0
        y = 0.0
        z = 0.0
        # each point's patch centre (patch_curvature.patch_geometry: shifted along
        # the tangent, the rail turned there), first into the rows ...
        for rank in range(first, last + 1):
            i = int(patch[PATCH_INDEX * n_max + rank])
            p = points[side, i]
            shift = hertz[HZ_SHIFT * n_max + i]
            own_angle = math.atan(p[P_TAN_CONTACT]) + hertz[HZ_TURN * n_max + i]
            patch[PATCH_ANGLE * n_max + rank] = own_angle
            patch[PATCH_X * n_max + rank] = p[P_X]
            patch[PATCH_Y * n_max + rank] = p[P_Y] + sign * shift * math.cos(own_angle)
            patch[PATCH_Z * n_max + rank] = p[P_Z] + shift * math.sin(own_angle)
            w = patch[PATCH_FORCE * n_max + rank]
            angle += w * own_angle
            x += w * patch[PATCH_X * n_max + rank]
            y += w * patch[PATCH_Y * n_max + rank]
            z += w * patch[PATCH_Z * n_max + rank]
            weight += w
        # ... then drawn towards the region's
        for rank in range(first, last + 1):
            force = patch[PATCH_FORCE * n_max + rank]
            mu = 1.0 - patch[PATCH_OWN * n_max + rank] / force if force > 0.0 else 1.0
            if not weight > 0.0:
                continue
            scale = mu / weight
            for field, mean in ((PATCH_ANGLE, angle), (PATCH_X, x), (PATCH_Y, y), (PATCH_Z, z)):
                patch[field * n_max + rank] = (1.0 - mu) * patch[field * n_max + rank] + scale * mean
        first = last + 1


def _energy_quadrature():
    """Nodes t and weights w on [0, 1] of the 3-point Gauss-Jacobi rule for the
    weight t^1.5: int_0^1 f(t) t^1.5 dt = sum w f(t), exact for f a polynomial of
    degree 5 (so for a constant Hertz stiffness, the energy 2/5 K pen^2.5)."""
    from scipy.special import roots_jacobi
    x, w = roots_jacobi(3, 0.0, 1.5)
    return tuple(0.5 * (x + 1.0)), tuple(w * 0.5 ** 2.5)


_ENERGY_T, _ENERGY_W = _energy_quadrature()


@njit(cache=True, error_model="numpy", _nrt=False)
def contact_elastic_energy(tables, contact, young, nu, multipoint):
    """The elastic energy (J) stored in the contacts of the rows `contact` (2,
    MAX_POINTS, N_CONTACT), as the last right-hand side that filled them left
    them: per point int_0^pen N(d) dd of its own Hertz contact, N(d) = K(d)
    d^1.5 with the patch's curvature at each depth d (patch_geometry: B changes
    with the patch's width, so K is not one constant and the energy not 2/5 N
    pen; pen^2.5 int_0^1 K(t pen) t^1.5 dt by Gauss-Jacobi, _ENERGY_T,
    _ENERGY_W), scaled to the point's elastic share of the load
    (C_ELASTIC_NORMAL; the energy grows as N^(5/3)); the single-point model's
    point with its own curvatures, 2/5 N pen. Computed on demand
    (WheelsetModel.outputs, mechanical_energy), not in the right-hand side."""
    wheel_grid = (tables.params[G_WHEEL_S0], tables.params[G_WHEEL_DS])
    rail_grid = (tables.params[G_RAIL_U0], tables.params[G_RAIL_DU])
    total = 0.0
    for side in range(contact.shape[0]):
        for i in range(contact.shape[1]):
            row = contact[side, i]
            pen = row[C_PENETRATION]
            share = row[C_ELASTIC_NORMAL]
            if not (row[C_ACTIVE] > 0.5 and pen > 0.0 and share > 0.0):
                continue
            s_wheel, u_rail = row[C_S_WHEEL], row[C_U_RAIL]
            wheel_slope = interp_column(tables.wheel, wheel_grid[0], wheel_grid[1], s_wheel, T_SLOPE)
            A = 0.5 / (math.sqrt(1.0 + wheel_slope * wheel_slope) * row[C_RADIUS])
            if multipoint:
                own_energy = 0.0
                for k in range(3):
                    d = _ENERGY_T[k] * pen
                    B, _, _ = patch_geometry(tables.wheel, tables.rail, wheel_grid, rail_grid,
                                             s_wheel, u_rail, d, A, young, nu)
                    force, _, _, _ = hertz_from_penetration_fit_kernel(d, A, B, young, nu)
                    own_energy += _ENERGY_W[k] * force / (d * math.sqrt(d))
                own_energy *= pen * pen * math.sqrt(pen)
                B, _, _ = patch_geometry(tables.wheel, tables.rail, wheel_grid, rail_grid,
                                         s_wheel, u_rail, pen, A, young, nu)
            else:
                rail_slope = interp_column(tables.rail, rail_grid[0], rail_grid[1], u_rail, T_SLOPE)
                k_w = -interp_column(tables.wheel, wheel_grid[0], wheel_grid[1], s_wheel, T_D2) \
                    / (1.0 + wheel_slope * wheel_slope) ** 1.5
                k_r = -interp_column(tables.rail, rail_grid[0], rail_grid[1], u_rail, T_D2) \
                    / (1.0 + rail_slope * rail_slope) ** 1.5
                B = 0.5 * (k_w + k_r)
                own_energy = -1.0
            own, _, _, _ = hertz_from_penetration_fit_kernel(pen, A, B, young, nu)
            if not own > 0.0:
                continue
            if own_energy < 0.0:
                own_energy = 0.4 * own * pen
            total += own_energy * (share / own) ** (5.0 / 3.0)
    return total


@njit(cache=True, error_model="numpy", _nrt=False)
def normal_loads(side, tables, points, n_points, young, nu, multipoint, patch, hertz, record):
    """Stage 2, the elastic normal loads of one wheel's points: each point's
    Hertz contact by its own penetration with its patch's lateral curvature
    (solver.contact.normal.patch_curvature: the profiles' mean curvature over
    the patch, so that a curvature jump inside the patch does not step the load),
    then the load sharing of the points along the wheel
    (merged_patch_forces_kernel). Fills the HZ_* and PATCH_* scratch rows;
    the single-point model puts the wheel's whole load on its deepest point,
    with that point's own curvatures (the classical model).
    Returns (the number of points that carry load, the largest penetration)."""
    n_max = MAX_POINTS
    wheel_grid = (tables.params[G_WHEEL_S0], tables.params[G_WHEEL_DS])
    rail_grid = (tables.params[G_RAIL_U0], tables.params[G_RAIL_DU])
    max_pen = 0.0
    # each point's place along the profile (equal s: the lower index first, as
    # geometry.fill_saddles orders them)
    for i in range(n_points):
        rank = 0
        for j in range(n_points):
            sj = points[side, j, P_S_WHEEL]
            if sj < points[side, i, P_S_WHEEL] or (sj == points[side, i, P_S_WHEEL] and j < i):
                rank += 1
        patch[PATCH_INDEX * n_max + rank] = i
        hertz[HZ_RANK * n_max + i] = rank
    for i in range(n_points):
        p = points[side, i]
        rail_slope = p[P_RAIL_SLOPE]
        rail_q = 1.0 + rail_slope * rail_slope
        rail_root = math.sqrt(rail_q)
        pen = -p[P_GAP] / rail_root
        wheel_slope = p[P_WHEEL_SLOPE]
        wheel_q = 1.0 + wheel_slope * wheel_slope
        wheel_root = math.sqrt(wheel_q)
        curv_roll = 1.0 / (wheel_root * p[P_RADIUS])     # cos(gamma) / r, gamma = atan(-F')
        k_w = -p[P_WHEEL_F2] / (wheel_q * wheel_root)     # F'' / (1 + F'^2)^1.5
        k_r = -p[P_RAIL_Z2] / (rail_q * rail_root)
        A = 0.5 * curv_roll
        B = 0.5 * (k_w + k_r)
        shift = 0.0
        turn = 0.0
        if pen > 0.0 and multipoint:
            # (the single-point model is the classical one of the published
            # comparisons, Ren & Jin's: its deepest point with the curvatures there)
            B, shift, slope = patch_geometry(tables.wheel, tables.rail, wheel_grid, rail_grid,
                                             p[P_S_WHEEL], p[P_U_RAIL], pen, A, young, nu)
            turn = math.atan(slope) - math.atan(rail_slope)
        hertz[HZ_SHIFT * n_max + i] = shift
        hertz[HZ_TURN * n_max + i] = turn
        elastic, a, b, flag = hertz_from_penetration_fit_kernel(pen, A, B, young, nu)
        stiffness = elastic / (pen * math.sqrt(pen)) if elastic > 0.0 else 0.0
        hertz[HZ_FORCE * n_max + i] = elastic
        hertz[HZ_A * n_max + i] = a
        hertz[HZ_B * n_max + i] = b
        hertz[HZ_FLAG * n_max + i] = flag
        hertz[HZ_STIFFNESS * n_max + i] = stiffness
        hertz[HZ_A_SUM * n_max + i] = A
        hertz[HZ_B_SUM * n_max + i] = B
        if pen > max_pen:
            max_pen = pen
        rank = int(hertz[HZ_RANK * n_max + i])
        depth = -p[P_GAP]
        patch[PATCH_DEPTH * n_max + rank] = depth if depth > 0.0 else 0.0
        patch[PATCH_SADDLE * n_max + rank] = -p[P_SADDLE]
        # the force along the normal per (vertical depth)^1.5: K pen^1.5 = K (depth / root)^1.5
        patch[PATCH_STIFFNESS * n_max + rank] = stiffness / (rail_root * math.sqrt(rail_root))
    merged_patch_forces_kernel(patch[PATCH_DEPTH * n_max:(PATCH_DEPTH + 1) * n_max],
                               patch[PATCH_SADDLE * n_max:(PATCH_SADDLE + 1) * n_max],
                               patch[PATCH_STIFFNESS * n_max:(PATCH_STIFFNESS + 1) * n_max],
                               n_points,
                               patch[PATCH_FORCE * n_max:(PATCH_FORCE + 1) * n_max],
                               patch[PATCH_SHARED * n_max:(PATCH_SHARED + 1) * n_max],
                               patch[PATCH_OWN * n_max:(PATCH_OWN + 1) * n_max])
    _region_blend(points, side, n_points, patch, hertz)
    if not multipoint and n_points > 1:
        # the single-point model: the wheel's whole load on its deepest point
        lump = 0.0
        for rank in range(n_points):
            lump += patch[PATCH_FORCE * n_max + rank]
        rank = int(hertz[HZ_RANK * n_max])
        patch[PATCH_FORCE * n_max + rank] = lump
        patch[PATCH_SHARED * n_max + rank] = 1.0
        p = points[side, 0]
        sign = 1.0 if side == 0 else -1.0
        angle = math.atan(p[P_TAN_CONTACT]) + hertz[HZ_TURN * n_max]
        patch[PATCH_ANGLE * n_max + rank] = angle
        patch[PATCH_X * n_max + rank] = p[P_X]
        patch[PATCH_Y * n_max + rank] = p[P_Y] + sign * hertz[HZ_SHIFT * n_max] * math.cos(angle)
        patch[PATCH_Z * n_max + rank] = p[P_Z] + hertz[HZ_SHIFT * n_max] * math.sin(angle)
        n_points = 1
    return n_points, max_pen


class PointKinematics(NamedTuple):
    """What the forces of every contact point share: the wheelset's motion."""

    y: float
    z: float
    cos_yaw: float
    sin_yaw: float
    vx: float
    vy: float
    vz: float
    wx: float               # angular velocity (track axes), the track's heading rate included
    wy: float
    wz: float
    roll_rate: float
    yaw_rate: float         # relative to the track-following frame
    speed: float            # V
    inv_speed_ref: float    # 1 / max(|V|, 0.1): creepages are velocities over it


@njit(cache=True, error_model="numpy", _nrt=False)
def point_forces(side, i, p, kin, rail_velocity, rail_y, rail_z, model, patch, hertz, wheel_load,
                 shear, row, record):
    """Stage 3, one contact point's forces: its contact frame, creepages, normal
    force (elastic share, Hunt & Crossley's damping and the constant damping of
    its own compression, never pulling) and creep forces (the registry's model,
    solver.contact.creep). Returns (fx, fy, fz, mx, my, mz) of the rail on the
    wheel (track frame; the moment about the wheelset's centre) and the normal
    force; fills the contact row when `record`."""
    n_max = MAX_POINTS
    sign = 1.0 if side == 0 else -1.0
    V = kin.speed
    young = model[M_YOUNG]
    nu = model[M_POISSON]
    # the contact angle drawn towards its region's (normal_loads, PATCH_ANGLE)
    rank = int(hertz[HZ_RANK * n_max + i])
    angle = patch[PATCH_ANGLE * n_max + rank]
    cd = math.cos(angle)
    sd = math.sin(angle)
    # contact frame (track axes): n normal rail->wheel, t1 rolling, t2 = n x t1 lateral (+y)
    nx, ny, nz = 0.0, -sign * sd, cd
    # rolling direction along the wheelset's heading, projected into the contact plane
    t1x = kin.cos_yaw
    t1y = kin.sin_yaw
    t1z = 0.0
    dotn = t1x * nx + t1y * ny + t1z * nz
    t1x -= dotn * nx
    t1y -= dotn * ny
    t1z -= dotn * nz
    inv_norm = 1.0 / math.sqrt(t1x * t1x + t1y * t1y + t1z * t1z)
    t1x *= inv_norm
    t1y *= inv_norm
    t1z *= inv_norm
    t2x, t2y, t2z = _cross(nx, ny, nz, t1x, t1y, t1z)
    # the contact point (drawn towards its region's: normal_loads) relative to the
    # wheelset centre
    px = patch[PATCH_X * n_max + rank]
    py = patch[PATCH_Y * n_max + rank]
    pz = patch[PATCH_Z * n_max + rank]
    rx = px
    ry = py - kin.y
    rz = pz - kin.z
    cx_, cy_, cz_ = _cross(kin.wx, kin.wy, kin.wz, rx, ry, rz)
    # the rail's material at the contact point: the rail's motion at its reference
    # point (rail_y, rail_z) and its roll rate about it (its longitudinal velocity
    # is zero in the ground frame)
    roll_rate_rail = rail_velocity[side, 2]
    vry = rail_velocity[side, 0] - roll_rate_rail * (pz - rail_z)
    vrz = rail_velocity[side, 1] + roll_rate_rail * (py - rail_y)
    # v_w - v_r
    dvx = V + kin.vx + cx_
    dvy = kin.vy + cy_ - vry
    dvz = kin.vz + cz_ - vrz
    # the penetration's rate: the surfaces' approach along the normal, without the
    # wheel's rolling about its axle (a wheel of revolution rolling in place does
    # not change the gap) and the frame's travel along the rail (the rail keeps its
    # section along the track: in the track-following frame it stands still)
    gx_, gy_, gz_ = _cross(kin.roll_rate, 0.0, kin.yaw_rate, rx, ry, rz)
    pen_rate = -((kin.vx + gx_) * nx + (kin.vy + gy_ - vry) * ny + (kin.vz + gz_ - vrz) * nz)
    if model[M_ROLL_RATE_CREEPAGE] < 0.5:
        # the textbook creepages: without the velocity roll_rate x r of
        # the roll rate at the contact point (the normal rate keeps it)
        dvy += kin.roll_rate * rz
        dvz -= kin.roll_rate * ry
    rel_t1 = dvx * t1x + dvy * t1y + dvz * t1z
    rel_t2 = dvx * t2x + dvy * t2y + dvz * t2z
    # rail rotation rate about x contributes to the spin
    spin_w = kin.wx * nx + kin.wy * ny + kin.wz * nz - roll_rate_rail * nx
    xi = rel_t1 * kin.inv_speed_ref
    eta = rel_t2 * kin.inv_speed_ref
    spin = spin_w * kin.inv_speed_ref
    # penetration along the normal
    rail_slope = p[P_RAIL_SLOPE]
    pen = -p[P_GAP] / math.sqrt(1.0 + rail_slope * rail_slope)
    own = hertz[HZ_FORCE * n_max + i]
    normal = patch[PATCH_FORCE * n_max + rank]
    a = hertz[HZ_A * n_max + i]
    b = hertz[HZ_B * n_max + i]
    flag = int(hertz[HZ_FLAG * n_max + i])
    elastic = 0.0
    if normal > 0.0:
        stiffness = hertz[HZ_STIFFNESS * n_max + i]
        # the patch of a shared load: the Hertz ellipse of the penetration
        # that carries it alone, (N / K)^(2/3)
        equivalent = pen
        if patch[PATCH_SHARED * n_max + rank] > 0.0:
            equivalent = (normal / stiffness) ** (2.0 / 3.0)
            _, a, b, flag = hertz_from_penetration_fit_kernel(
                equivalent, hertz[HZ_A_SUM * n_max + i], hertz[HZ_B_SUM * n_max + i],
                young, nu)
        elastic = normal       # its elastic part (contact_elastic_energy takes it)
        # Hunt & Crossley's damping of the elastic load, and the constant damping
        # of the point's own share of its compression
        normal += (1.5 * model[M_HUNT_CROSSLEY] * normal * pen_rate
                   + model[M_CONTACT_DAMPING] * pen_rate * (normal / own if own > normal else 1.0))
        if normal < 0.0:
            normal = 0.0
    else:
        normal = 0.0
    fl = 0.0
    ft = 0.0
    ms = 0.0
    if normal > 0.0:
        creep_model = int(model[M_CREEP_MODEL])
        overrides = (model[M_F11] > 0.0 or model[M_F22] > 0.0 or model[M_F23] > 0.0
                     or model[M_F33] > 0.0)
        if creep_model == KALKER_ID and overrides:
            share = min(patch[PATCH_FORCE * n_max + rank] / wheel_load, 1.0)
            fl, ft, ms = kalker_with_overrides(model, xi, eta, spin, a, b, shear, nu, share)
        else:
            fl, ft, ms = creep_forces_kernel(
                creep_model, CreepPatch(xi, eta, spin, a, b, normal, model[M_FRICTION],
                                        shear, nu, V),
                model[M_CREEP_OPTIONS:M_CREEP_OPTIONS + N_CREEP_OPTIONS])
    fxp = normal * nx + fl * t1x + ft * t2x
    fyp = normal * ny + fl * t1y + ft * t2y
    fzp = normal * nz + fl * t1z + ft * t2z
    mxp, myp, mzp = _cross(rx, ry, rz, fxp, fyp, fzp)
    mxp += ms * nx
    myp += ms * ny
    mzp += ms * nz
    if record:
        row[C_ACTIVE] = 1.0 if normal > 0.0 else 0.0
        row[C_S_WHEEL] = p[P_S_WHEEL]
        row[C_U_RAIL] = p[P_U_RAIL]
        row[C_X] = px
        row[C_Y] = py
        row[C_Z] = pz
        row[C_ANGLE] = angle
        row[C_RADIUS] = p[P_RADIUS]
        row[C_GAP] = p[P_GAP]
        row[C_PENETRATION] = pen
        row[C_NORMAL] = normal
        row[C_CREEP_LONG] = fl
        row[C_CREEP_LAT] = ft
        row[C_SPIN_MOMENT] = ms
        row[C_XI] = xi
        row[C_ETA] = eta
        row[C_SPIN] = spin
        row[C_A] = a
        row[C_B] = b
        row[C_FX] = fxp
        row[C_FY] = fyp
        row[C_FZ] = fzp
        row[C_ELASTIC_NORMAL] = elastic
        row[C_HERTZ_FLAG] = flag
    return fxp, fyp, fzp, mxp, myp, mzp, normal, py, pz


@njit(cache=True, error_model="numpy", _nrt=False)
def axle_box_loads(state, model, track, box_force, box_moment, axle):
    """Stage 4, the loads at the axle boxes: the host's (box_force, box_moment:
    (2, 3) track frame) plus, with the built-in suspension (M_BOGIE), the quarter
    vehicle's (solver.dynamics.suspension). `axle` the axle's direction
    (ex, ey, ez). Returns (fx, fy, fz, mx, my, mz) about the wheelset's centre."""
    ex, ey, ez = axle
    b_ab = model[M_BOX_SEMI_SPACING]
    fx_tot = 0.0
    fy_tot = 0.0
    fz_tot = 0.0
    mx_tot = 0.0
    my_tot = 0.0
    mz_tot = 0.0
    for side in range(2):
        sign = 1.0 if side == 0 else -1.0
        rbx = sign * b_ab * ex
        rby = sign * b_ab * ey
        rbz = sign * b_ab * ez
        fbx = box_force[side, 0]
        fby = box_force[side, 1]
        fbz = box_force[side, 2]
        mbx, mby, mbz = _cross(rbx, rby, rbz, fbx, fby, fbz)
        fx_tot += fbx
        fy_tot += fby
        fz_tot += fbz
        mx_tot += mbx + box_moment[side, 0]
        my_tot += mby + box_moment[side, 1]
        mz_tot += mbz + box_moment[side, 2]
    if model[M_BOGIE] > 0.5:
        sfx, sfy, sfz, smx, smy, smz = builtin_suspension_loads(
            state, model, model[M_SPEED], model[M_GRAVITY], track.curvature, track.cant)
        fx_tot += sfx
        fy_tot += sfy
        fz_tot += sfz
        mx_tot += smx
        my_tot += smy
        mz_tot += smz
    return fx_tot, fy_tot, fz_tot, mx_tot, my_tot, mz_tot


@njit(cache=True, error_model="numpy", _nrt=False)
def rail_body_accelerations(state, model, rail_loads, deriv):
    """Stage 5, the lumped rail bodies (M_TRACK_MODEL TRACK_LUMPED): per rail
    M q'' = F - K q - C q', q = (lateral, vertical, roll) of the rail head's
    reference point (the rail profile's origin), F the wheel's load on the rail
    there (`rail_loads` (2, 3): lateral, vertical force and the moment about +x),
    M, K and C with the lateral-roll coupling (the rail rolls about a point
    below its head; one matrix each for both rails in the track frame: the right
    rail is the left one mirrored, which leaves the coupling's sign as it is). The prescribed rails do not move (the inputs move
    them): their derivative is 0."""
    lumped = model[M_TRACK_MODEL] > 0.5
    for side in range(2):
        for c in range(3):
            j = 3 * side + c
            deriv[S_RAIL + j] = state[S_RAIL_RATE + j] if lumped else 0.0
            deriv[S_RAIL_RATE + j] = 0.0
        if not lumped:
            continue
        q0 = state[S_RAIL + 3 * side]
        q1 = state[S_RAIL + 3 * side + 1]
        q2 = state[S_RAIL + 3 * side + 2]
        r0 = state[S_RAIL_RATE + 3 * side]
        r1 = state[S_RAIL_RATE + 3 * side + 1]
        r2 = state[S_RAIL_RATE + 3 * side + 2]
        k_y, k_z, k_r, k_yr = (model[M_RAIL_STIFFNESS], model[M_RAIL_STIFFNESS + 1],
                               model[M_RAIL_STIFFNESS + 2], model[M_RAIL_STIFFNESS + 3])
        c_y, c_z, c_r, c_yr = (model[M_RAIL_DAMPING], model[M_RAIL_DAMPING + 1],
                               model[M_RAIL_DAMPING + 2], model[M_RAIL_DAMPING + 3])
        f_y = rail_loads[side, 0] - k_y * q0 - k_yr * q2 - c_y * r0 - c_yr * r2
        f_z = rail_loads[side, 1] - k_z * q1 - c_z * r1
        m_r = rail_loads[side, 2] - k_yr * q0 - k_r * q2 - c_yr * r0 - c_r * r2
        # the lateral and roll accelerations through the mass matrix's coupling
        m_y, m_z, j_r, m_yr = (model[M_RAIL_MASS], model[M_RAIL_MASS + 1],
                               model[M_RAIL_MASS + 2], model[M_RAIL_MASS + 3])
        det = m_y * j_r - m_yr * m_yr
        deriv[S_RAIL_RATE + 3 * side] = (j_r * f_y - m_yr * m_r) / det
        deriv[S_RAIL_RATE + 3 * side + 1] = f_z / m_z
        deriv[S_RAIL_RATE + 3 * side + 2] = (m_y * m_r - m_yr * f_y) / det


@njit(cache=True, error_model="numpy", _nrt=False)
def wheelset_rhs(state, track, model, inputs, step_contact, deriv, update_only=False,
                 reuse_geometry=False, record=True):
    """Time derivative of the state (deriv, N_STATE: the wheelset and the lumped
    rail bodies) and the contact results, in named stages: the rails under the
    wheels (`rails_under_wheels`), the contact points (`locate_contacts`), each
    wheel's normal loads (`normal_loads`) and each point's forces
    (`point_forces`), the axle-box loads (`axle_box_loads`), the rail bodies
    (`rail_body_accelerations`), then the wheelset's equations of motion.

    state (N_STATE,) S_*; track a TrackPoint; model the parameter vector M_*;
    inputs the StepInputs; step_contact a StepContact: the geometry's
    ContactTables, the ContactBuffers of the contact search, the
    ContactResults (filled) and the TableSearch. update_only: keep the contact points found by the last full search
    in `search.points` and only re-locate them at this state
    (geometry.wheelset_contact_update); the integrator does so at the
    intermediate stages of a step. The TableSearch: with a table in it
    (contact_geometry = "table") the full search reads the table instead of
    scanning the profiles (the same points); an empty table (no tparams): the
    online search (geometry.wheelset_contact_tracked:
    the minima of the last full scan re-located while the pose stays near it,
    the same points as a full scan).
    reuse_geometry: the contact points in
    `search` are those of a full search at this very pose and rail motion (the
    caller knows it, solver.dynamics.integrators compares them bit for bit): no search.
    record: fill the per-point rows of results.contact (False: only deriv and
    results.summary, for the integrators' stages whose rows nobody reads,
    solver.dynamics.integrators: the derivative is the same to the bit, the rows are left as
    they were).
    """
    tables, search, results, table_search = step_contact
    points = search.points
    counts = search.counts
    contact = results.contact
    summary = results.summary
    V = model[M_SPEED]
    g = model[M_GRAVITY]
    m = model[M_MASS]
    y = state[S_Y]
    z = state[S_Z]
    roll = state[S_ROLL]
    yaw = state[S_YAW]
    roll_rate = state[S_ROLL_RATE]
    yaw_rate = state[S_YAW_RATE]
    spin_rate = state[S_SPIN_RATE]
    curvature = track.curvature
    cant = track.cant
    rail_motion, rail_velocity = rails_under_wheels(state, inputs, search.work[W_RAIL])
    locate_contacts(tables, WheelsetPose(y, z, roll, yaw), rail_motion, search, table_search,
                    update_only, reuse_geometry)
    # Axle direction and angular velocity of the wheelset (absolute yaw rate
    # includes the rotation of the track-following frame, V kappa).
    ex = -math.sin(yaw) * math.cos(roll)
    ey = math.cos(yaw) * math.cos(roll)
    ez = math.sin(roll)
    kin = PointKinematics(y, z, math.cos(yaw), math.sin(yaw), state[S_VX], state[S_VY],
                          state[S_VZ], spin_rate * ex + roll_rate, spin_rate * ey,
                          spin_rate * ez + yaw_rate + V * curvature, roll_rate, yaw_rate, V,
                          1.0 / max(abs(V), 0.1))
    young = model[M_YOUNG]
    nu = model[M_POISSON]
    shear = young / (2.0 * (1.0 + nu))
    multipoint = model[M_MULTIPOINT] >= 0.5
    patch = search.work[W_PATCH]
    hertz = search.work[W_PATCH + 1]
    n_max = MAX_POINTS
    rail_loads = search.work[W_RAIL, 12:18].reshape((2, 3))
    fx_tot = 0.0
    fy_tot = 0.0
    fz_tot = 0.0
    mx_tot = 0.0
    my_tot = 0.0
    mz_tot = 0.0
    max_pen = 0.0
    params = tables.params
    for side in range(2):
        sign = 1.0 if side == 0 else -1.0
        if record:
            for i in range(MAX_POINTS):
                row = contact[side, i]
                for f in range(N_CONTACT):
                    row[f] = 0.0
        n_points, side_pen = normal_loads(side, tables, points, counts[side], young, nu,
                                          multipoint, patch, hertz, record)
        if side_pen > max_pen:
            max_pen = side_pen
        wheel_load = 0.0        # (for linear creep coefficients given per wheel)
        for rank in range(counts[side]):
            wheel_load += patch[PATCH_FORCE * n_max + rank]
        # the rail head's reference point (the rail profile's origin), track frame
        rail_y = sign * params[G_RAIL_CENTRE_Y] + rail_motion[side, 0]
        rail_z = rail_motion[side, 1]
        any_force = False
        load_y = 0.0
        load_z = 0.0
        load_roll = 0.0
        for i in range(n_points):
            p = points[side, i]
            fxp, fyp, fzp, mxp, myp, mzp, normal, py, pz = point_forces(
                side, i, p, kin, rail_velocity, rail_y, rail_z, model, patch, hertz, wheel_load,
                shear, contact[side, i], record)
            if normal > 0.0:
                any_force = True
            fx_tot += fxp
            fy_tot += fyp
            fz_tot += fzp
            mx_tot += mxp
            my_tot += myp
            mz_tot += mzp
            # the wheel's load on the rail, and its moment about the rail's reference point
            load_y -= fyp
            load_z -= fzp
            load_roll -= (py - rail_y) * fzp - (pz - rail_z) * fyp
        rail_loads[side, 0] = load_y
        rail_loads[side, 1] = load_z
        rail_loads[side, 2] = load_roll
        summary[side] = 0.0 if any_force else 1.0
        summary[O_GAP_LEFT + side] = points[side, 0, P_GAP] if counts[side] > 0 else 1.0
    summary[O_MAX_PENETRATION] = max_pen
    # the rail head's centre under each wheel, along the axle (side-local: the right
    # wheel mirrored), in the wheel profile's coordinate
    axle_cos = math.cos(yaw) * math.cos(roll)
    for side in range(2):
        sign = 1.0 if side == 0 else -1.0
        rail_centre = params[G_RAIL_CENTRE_Y] + sign * rail_motion[side, 0]
        taping = sign * y + params[G_TAPING_AXIAL] * axle_cos
        summary[O_RAIL_ON_WHEEL_LEFT + side] = (rail_centre - taping) / axle_cos
    bx, by, bz, bmx, bmy, bmz = axle_box_loads(state, model, track, inputs.box_force,
                                               inputs.box_moment, (ex, ey, ez))
    fx_tot += bx
    fy_tot += by
    fz_tot += bz
    mx_tot += bmx
    my_tot += bmy + inputs.axle_torque
    mz_tot += bmz
    rail_body_accelerations(state, model, rail_loads, deriv)
    jx = model[M_JX]
    jy = model[M_JY]
    jz = model[M_JZ]
    deriv[S_X] = state[S_VX]
    deriv[S_Y] = state[S_VY]
    deriv[S_Z] = state[S_VZ]
    deriv[S_ROLL] = roll_rate
    deriv[S_YAW] = yaw_rate
    deriv[S_SPIN_ANGLE] = spin_rate
    deriv[S_VX] = fx_tot / m
    deriv[S_VY] = (fy_tot - m * V * V * curvature * math.cos(cant) - m * g * math.sin(cant)) / m
    deriv[S_VZ] = (fz_tot - m * g * math.cos(cant) + m * V * V * curvature * math.sin(cant)) / m
    gyro = model[M_GYROSCOPIC]
    deriv[S_ROLL_RATE] = (mx_tot + gyro * jy * spin_rate * (yaw_rate + V * curvature)) / jx
    deriv[S_YAW_RATE] = (mz_tot - gyro * jy * spin_rate * roll_rate
                         - jz * V * V * track.curvature_rate) / jz
    deriv[S_SPIN_RATE] = my_tot / jy
