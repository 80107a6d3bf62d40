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
(solver.geometry, trace line + multipoint detection) at every right-hand-side
evaluation: each contact point's Hertz contact by its own penetration, the
points of one wheel sharing the load of the patches their interpenetrations
form (solver.normal.merged_patch_forces_kernel: a point alone carries K
delta^1.5), plus C ddelta/dt, never pulling; its creep forces from the
creepages (solver.creep, model by parameter) on the Hertz ellipse of its load.
The single-point model puts the wheel's whole normal load on its deepest point.
Contact points appear and vanish as the wheel moves, with zero load; a wheel may lift.

Creepages at a contact point (velocity of the wheel material relative to the
rail, divided by V, in the contact frame t1 = rolling, t2 = lateral in the
contact plane towards +y, n = normal from rail into wheel):
  xi = (v_w - v_r).t1 / V, eta = (v_w - v_r).t2 / V, spin = (omega_w.n) / V,
with v_w = v_C + omega_w x r_c, omega_w = Omega e + (roll', 0, yaw' + V kappa).

The numba kernel `wheelset_rhs` evaluates all of this; solver.integrate steps
it; solver.wheelset (`WheelsetModel`) wraps both with parameters, the track,
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

from . import geometry as geo
from . import geometry_table
from .creep import creep_forces_kernel, kalker_coefficients_kernel
from .normal import hertz_from_penetration_fit_kernel, merged_patch_forces_kernel

GRAVITY = 9.81

# State vector layout.
S_X, S_Y, S_Z, S_ROLL, S_YAW, S_SPIN_ANGLE = 0, 1, 2, 3, 4, 5
S_VX, S_VY, S_VZ, S_ROLL_RATE, S_YAW_RATE, S_SPIN_RATE = 6, 7, 8, 9, 10, 11
N_STATE = 12

# Model parameter vector (numba side).
M_MASS, M_JX, M_JY, M_JZ = 0, 1, 2, 3
M_YOUNG, M_POISSON, M_FRICTION = 4, 5, 6
M_CREEP_MODEL, M_CP1, M_CP2, M_CP3, M_CP4, M_CP5 = 7, 8, 9, 10, 11, 12
M_CONTACT_DAMPING = 13
M_MULTIPOINT = 14
M_BOX_SEMI_SPACING = 15
M_BOGIE = 16            # 1: built-in spring-damper to a frame on the track centreline
M_KX, M_KY, M_KZ, M_CX, M_CY, M_CZ = 17, 18, 19, 20, 21, 22
M_SUSPENDED_MASS = 23   # mass carried by this wheelset's primary suspension (kg)
M_BOX_Z_REF = 24        # rest height of the axle boxes for the built-in bogie (m)
M_SPEED = 25
M_GRAVITY = 26
# linear-study controls: creep coefficient overrides of Kalker's linear theory
# (N, N, N m, N m^2 per contact point; 0 = from Kalker's table), and switches
# (1 on, 0 off) for the roll-rate term of the creepages and the gyroscopic moments
M_F11, M_F22, M_F23, M_F33 = 27, 28, 29, 30
M_ROLL_RATE_CREEPAGE = 31
M_GYROSCOPIC = 32
# adaptive integrators (solver.integrate, "rk23" / "rk45"): the local error
# tolerance (relative, see integrate.ERROR_SCALE) and the most steps, accepted
# or rejected, one host step may take
M_TOLERANCE = 33
M_MAX_STEPS = 34
N_MODEL = 35

# Per-contact-point result fields (numba side): array (2, MAX_POINTS, N_CONTACT).
C_ACTIVE = 0
C_S_WHEEL = 1
C_U_RAIL = 2
C_X, C_Y, C_Z = 3, 4, 5
C_ANGLE = 6
C_RADIUS = 7
C_GAP = 8
C_PENETRATION = 9
C_NORMAL = 10
C_CREEP_LONG, C_CREEP_LAT, C_SPIN_MOMENT = 11, 12, 13
C_XI, C_ETA, C_SPIN = 14, 15, 16
C_A, C_B = 17, 18
C_FX, C_FY, C_FZ = 19, 20, 21        # total force of the rail on the wheel, track frame
C_ELASTIC_ENERGY = 22                 # 2/5 K delta^2.5 (J)
C_HERTZ_FLAG = 23
N_CONTACT = 24

# The normal-force layer's scratch per wheel (rows geometry.W_PATCH, W_PATCH + 1
# of the search's work array; each field MAX_POINTS entries): the points in
# order along the profile (PATCH_*, by rank), and each point's Hertz contact
# by its own penetration and its share of the load (HZ_*, by point index).
PATCH_DEPTH, PATCH_SADDLE, PATCH_STIFFNESS, PATCH_FORCE, PATCH_SHARED, PATCH_INDEX = 0, 1, 2, 3, 4, 5
HZ_FORCE, HZ_A, HZ_B, HZ_FLAG, HZ_STIFFNESS = 0, 1, 2, 3, 4
HZ_A_SUM, HZ_B_SUM, HZ_RANK = 5, 6, 7    # curvature sums A, B; the rank along the profile
# (8 fields of MAX_POINTS entries fit the MAX_MINIMA columns a work row has at least)

# Summary outputs of the kernel.
O_LIFT_LEFT, O_LIFT_RIGHT = 0, 1
O_MAX_PENETRATION = 2
O_GAP_LEFT, O_GAP_RIGHT = 3, 4     # smallest wheel-rail distance per wheel (m)
# where the rail's head centre lies under each wheel: its lateral coordinate on the
# wheel profile (s from the taping line, + field side; m), along the axle
O_RAIL_ON_WHEEL_LEFT, O_RAIL_ON_WHEEL_RIGHT = 5, 6
N_SUMMARY = 7


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
def wheelset_rhs(state, track, tables, model, inputs, search, results, deriv, update_only=False,
                 table_search=None, reuse_geometry=False, record=True):
    """Time derivative of the wheelset state (deriv, N_STATE) and the contact results.

    state (N_STATE,) S_*; track a TrackPoint; tables the geometry.ContactTables;
    model the parameter vector M_*; inputs the StepInputs; search the
    geometry.ContactBuffers of the contact search; results the ContactResults,
    filled. update_only: keep the contact points found by the last full search
    in `search.points` and only re-locate them at this state
    (geometry.wheelset_contact_update); the integrator does so at the
    intermediate stages of a step. table_search: a geometry_table.TableSearch;
    with a table in it (contact_geometry = "table") the full search reads the
    table instead of scanning the profiles (the same points); None or an empty
    table (no tparams) or None: the online search (geometry.wheelset_contact_tracked:
    the minima of the last full scan re-located while the pose stays near it,
    the same points as a full scan).
    reuse_geometry: the contact points in
    `search` are those of a full search at this very pose and rail motion (the
    caller knows it, solver.integrate compares them bit for bit): no search.
    record: fill the per-point rows of results.contact (False: only deriv and
    results.summary, for the integrators' stages whose rows nobody reads,
    solver.integrate: the derivative is the same to the bit, the rows are left as
    they were).
    """
    curvature = track.curvature
    curvature_rate = track.curvature_rate
    cant = track.cant
    rail_velocity = inputs.rail_velocity
    box_force = inputs.box_force
    box_moment = inputs.box_moment
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
    vx = state[S_VX]
    vy = state[S_VY]
    vz = state[S_VZ]
    roll_rate = state[S_ROLL_RATE]
    yaw_rate = state[S_YAW_RATE]
    spin_rate = state[S_SPIN_RATE]
    epsilon = -1.0   # elastic mode: every penetrating minimum is a candidate
    pose = geo.WheelsetPose(y, z, roll, yaw)
    if reuse_geometry:
        pass
    elif update_only:
        geo.wheelset_contact_update(tables, pose, inputs.rail_motion, search)
    elif table_search is not None:
        if table_search.arrays.tparams.size > 0:
            geometry_table.wheelset_table_kernel(tables, table_search.arrays, pose, inputs.rail_motion,
                                                 epsilon, search, table_search.scratch)
        else:
            geo.wheelset_contact_tracked(tables, pose, inputs.rail_motion, epsilon, search)
    else:
        geo.wheelset_contact_tracked(tables, pose, inputs.rail_motion, epsilon, search)
    cos_yaw = math.cos(yaw)     # the rolling direction of every contact point
    sin_yaw = math.sin(yaw)
    # Axle direction and angular velocity of the wheelset (absolute yaw rate
    # includes the rotation of the track-following frame, V kappa).
    ex = -math.sin(yaw) * math.cos(roll)
    ey = math.cos(yaw) * math.cos(roll)
    ez = math.sin(roll)
    wx = spin_rate * ex + roll_rate
    wy = spin_rate * ey
    wz = spin_rate * ez + yaw_rate + V * curvature
    young = model[M_YOUNG]
    nu = model[M_POISSON]
    shear = young / (2.0 * (1.0 + nu))
    fx_tot = 0.0
    fy_tot = 0.0
    fz_tot = 0.0
    mx_tot = 0.0
    my_tot = 0.0
    mz_tot = 0.0
    max_pen = 0.0
    inv_speed_ref = 1.0 / max(abs(V), 0.1)    # creepages: velocities over the reference speed
    creep_model = int(model[M_CREEP_MODEL])
    overrides = (model[M_F11] > 0.0 or model[M_F22] > 0.0 or model[M_F23] > 0.0
                 or model[M_F33] > 0.0)
    multipoint = model[M_MULTIPOINT] >= 0.5
    damping = model[M_CONTACT_DAMPING]
    patch = search.work[geo.W_PATCH]
    hertz = search.work[geo.W_PATCH + 1]
    n_max = geo.MAX_POINTS
    for side in range(2):
        sign = 1.0 if side == 0 else -1.0
        if record:
            for i in range(geo.MAX_POINTS):
                row = contact[side, i]
                for f in range(N_CONTACT):
                    row[f] = 0.0
        n_points = counts[side]
        # 1. each point's Hertz contact by its own penetration, and the load
        # sharing of the points along the wheel (solver.normal.merged_patch_forces_kernel)
        for i in range(n_points):
            p = points[side, i]
            rail_slope = p[geo.P_RAIL_SLOPE]
            rail_q = 1.0 + rail_slope * rail_slope
            rail_root = math.sqrt(rail_q)
            pen = -p[geo.P_GAP] / rail_root
            wheel_slope = p[geo.P_WHEEL_SLOPE]
            wheel_q = 1.0 + wheel_slope * wheel_slope
            wheel_root = math.sqrt(wheel_q)
            curv_roll = 1.0 / (wheel_root * p[geo.P_RADIUS])     # cos(gamma) / r, gamma = atan(-F')
            k_w = -p[geo.P_WHEEL_F2] / (wheel_q * wheel_root)     # F'' / (1 + F'^2)^1.5
            k_r = -p[geo.P_RAIL_Z2] / (rail_q * rail_root)
            A = 0.5 * curv_roll
            B = 0.5 * (k_w + k_r)
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
            # its place along the profile (equal s: the lower index first, as
            # geometry.fill_saddles orders them)
            rank = 0
            for j in range(n_points):
                sj = points[side, j, geo.P_S_WHEEL]
                if sj < p[geo.P_S_WHEEL] or (sj == p[geo.P_S_WHEEL] and j < i):
                    rank += 1
            patch[PATCH_INDEX * n_max + rank] = i
            hertz[HZ_RANK * n_max + i] = rank
            depth = -p[geo.P_GAP]
            patch[PATCH_DEPTH * n_max + rank] = depth if depth > 0.0 else 0.0
            patch[PATCH_SADDLE * n_max + rank] = -p[geo.P_SADDLE]
            # the force along the normal per (vertical depth)^1.5: K pen^1.5 = K (depth / root)^1.5
            patch[PATCH_STIFFNESS * n_max + rank] = stiffness / (rail_root * math.sqrt(rail_root))
        merged_patch_forces_kernel(patch[PATCH_DEPTH * n_max:(PATCH_DEPTH + 1) * n_max],
                                   patch[PATCH_SADDLE * n_max:(PATCH_SADDLE + 1) * n_max],
                                   patch[PATCH_STIFFNESS * n_max:(PATCH_STIFFNESS + 1) * n_max],
                                   n_points,
                                   patch[PATCH_FORCE * n_max:(PATCH_FORCE + 1) * n_max],
                                   patch[PATCH_SHARED * n_max:(PATCH_SHARED + 1) * n_max])
        wheel_load = 0.0        # (for linear creep coefficients given per wheel)
        for rank in range(n_points):
            wheel_load += patch[PATCH_FORCE * n_max + rank]
        if not multipoint and n_points > 1:
            # the single-point model: the wheel's whole load on its deepest point
            lump = 0.0
            for rank in range(n_points):
                lump += patch[PATCH_FORCE * n_max + rank]
            rank = int(hertz[HZ_RANK * n_max])
            patch[PATCH_FORCE * n_max + rank] = lump
            patch[PATCH_SHARED * n_max + rank] = 1.0
            n_points = 1
        # 2. forces and moments of each point
        any_force = False
        for i in range(n_points):
            p = points[side, i]
            tan_c = p[geo.P_TAN_CONTACT]
            # cos, sin of delta = atan(tan_c) by algebra (no further transcendental call)
            cd = 1.0 / math.sqrt(1.0 + tan_c * tan_c)
            sd = tan_c * cd
            # contact frame (track axes): n normal rail->wheel, t1 rolling, t2 = n x t1 lateral (+y)
            nx, ny, nz = 0.0, -sign * sd, cd
            # rolling direction along the wheelset's heading, projected into the contact plane
            t1x = cos_yaw
            t1y = sin_yaw
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
            # contact point relative to the wheelset centre
            rx = p[geo.P_X]
            ry = p[geo.P_Y] - y
            rz = p[geo.P_Z] - z
            cx_, cy_, cz_ = _cross(wx, wy, wz, rx, ry, rz)
            vwx = V + vx + cx_
            vwy = vy + cy_
            vwz = vz + cz_
            vrx = 0.0
            vry = rail_velocity[side, 0]
            vrz = rail_velocity[side, 1]
            # v_w - v_r: the rail material moves only with the rail motion inputs
            # (its longitudinal velocity is zero in the ground frame).
            dvx = vwx - vrx
            dvy = vwy - vry
            dvz = vwz - vrz
            rel_n = dvx * nx + dvy * ny + dvz * nz
            if model[M_ROLL_RATE_CREEPAGE] < 0.5:
                # the textbook creepages: without the velocity roll_rate x r of
                # the roll rate at the contact point (the normal rate keeps it)
                dvy += roll_rate * rz
                dvz -= roll_rate * ry
            rel_t1 = dvx * t1x + dvy * t1y + dvz * t1z
            rel_t2 = dvx * t2x + dvy * t2y + dvz * t2z
            # rail rotation rate about x contributes to the spin
            spin_w = wx * nx + wy * ny + wz * nz - rail_velocity[side, 2] * nx
            xi = rel_t1 * inv_speed_ref
            eta = rel_t2 * inv_speed_ref
            spin = spin_w * inv_speed_ref
            # penetration along the normal and its rate
            rail_slope = p[geo.P_RAIL_SLOPE]
            pen = -p[geo.P_GAP] / math.sqrt(1.0 + rail_slope * rail_slope)
            pen_rate = -rel_n
            own = hertz[HZ_FORCE * n_max + i]
            rank = int(hertz[HZ_RANK * n_max + i])
            normal = patch[PATCH_FORCE * n_max + rank]
            a = hertz[HZ_A * n_max + i]
            b = hertz[HZ_B * n_max + i]
            flag = int(hertz[HZ_FLAG * n_max + i])
            energy = 0.0
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
                energy = 0.4 * normal * equivalent
                # the damping of the point's own share of its compression
                normal += damping * pen_rate * (normal / own if own > normal else 1.0)
                if normal < 0.0:
                    normal = 0.0
            else:
                normal = 0.0
            fl = 0.0
            ft = 0.0
            ms = 0.0
            if normal > 0.0:
                any_force = True
                if creep_model == 0 and overrides:
                    share = min(patch[PATCH_FORCE * n_max + rank] / wheel_load, 1.0)
                    fl, ft, ms = kalker_with_overrides(model, xi, eta, spin, a, b, shear, nu,
                                                       share)
                else:
                    fl, ft, ms = creep_forces_kernel(creep_model, xi, eta, spin, a, b, normal,
                                                     model[M_FRICTION], shear, nu, V,
                                                     model[M_CP1], model[M_CP2], model[M_CP3],
                                                     model[M_CP4], model[M_CP5])
            fxp = normal * nx + fl * t1x + ft * t2x
            fyp = normal * ny + fl * t1y + ft * t2y
            fzp = normal * nz + fl * t1z + ft * t2z
            mxp, myp, mzp = _cross(rx, ry, rz, fxp, fyp, fzp)
            mxp += ms * nx
            myp += ms * ny
            mzp += ms * nz
            fx_tot += fxp
            fy_tot += fyp
            fz_tot += fzp
            mx_tot += mxp
            my_tot += myp
            mz_tot += mzp
            if not record:
                continue
            row = contact[side, i]
            row[C_ACTIVE] = 1.0 if normal > 0.0 else 0.0
            row[C_S_WHEEL] = p[geo.P_S_WHEEL]
            row[C_U_RAIL] = p[geo.P_U_RAIL]
            row[C_X] = p[geo.P_X]
            row[C_Y] = p[geo.P_Y]
            row[C_Z] = p[geo.P_Z]
            row[C_ANGLE] = math.atan(tan_c)
            row[C_RADIUS] = p[geo.P_RADIUS]
            row[C_GAP] = p[geo.P_GAP]
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
            row[C_ELASTIC_ENERGY] = energy
            row[C_HERTZ_FLAG] = flag
        summary[side] = 0.0 if any_force else 1.0
        summary[O_GAP_LEFT + side] = points[side, 0, geo.P_GAP] if counts[side] > 0 else 1.0
    summary[O_MAX_PENETRATION] = max_pen
    # the rail head's centre under each wheel, along the axle (side-local: the right
    # wheel mirrored), in the wheel profile's coordinate
    params = tables.params
    axle_cos = math.cos(yaw) * math.cos(roll)
    for side in range(2):
        sign = 1.0 if side == 0 else -1.0
        rail_centre = params[geo.G_RAIL_CENTRE_Y] + sign * inputs.rail_motion[side, 0]
        taping = sign * y + params[geo.G_TAPING_AXIAL] * axle_cos
        summary[O_RAIL_ON_WHEEL_LEFT + side] = (rail_centre - taping) / axle_cos
    # External loads at the axle boxes (host bogie) or the built-in bogie.
    b_ab = model[M_BOX_SEMI_SPACING]
    for side in range(2):
        sign = 1.0 if side == 0 else -1.0
        rbx = sign * b_ab * ex
        rby = sign * b_ab * ey
        rbz = sign * b_ab * ez
        fbx = box_force[side, 0]
        fby = box_force[side, 1]
        fbz = box_force[side, 2]
        if model[M_BOGIE] > 0.5:
            # box velocity = v_C + omega_body x r_b (body: roll, yaw rates only)
            vbx = vx + (roll_rate * 0.0 - yaw_rate * rby)
            vby = vy + yaw_rate * rbx - 0.0
            vbz = vz + roll_rate * rby
            dbx = rbx - 0.0
            dby = y + rby - sign * b_ab
            dbz = z + rbz - model[M_BOX_Z_REF]
            fbx += -model[M_KX] * (state[S_X] + dbx) - model[M_CX] * vbx
            fby += -model[M_KY] * dby - model[M_CY] * vby
            fbz += -model[M_KZ] * dbz - model[M_CZ] * vbz
            # the suspended mass' share: weight and uncompensated centrifugal force
            ms_half = 0.5 * model[M_SUSPENDED_MASS]
            fby += -ms_half * (V * V * curvature * math.cos(cant) + g * math.sin(cant))
            fbz += -ms_half * (g * math.cos(cant) - V * V * curvature * math.sin(cant))
        mbx, mby, mbz = _cross(rbx, rby, rbz, fbx, fby, fbz)
        fx_tot += fbx
        fy_tot += fby
        fz_tot += fbz
        mx_tot += mbx + box_moment[side, 0]
        my_tot += mby + box_moment[side, 1]
        mz_tot += mbz + box_moment[side, 2]
    my_tot += inputs.axle_torque
    jx = model[M_JX]
    jy = model[M_JY]
    jz = model[M_JZ]
    deriv[S_X] = vx
    deriv[S_Y] = vy
    deriv[S_Z] = vz
    deriv[S_ROLL] = roll_rate
    deriv[S_YAW] = yaw_rate
    deriv[S_SPIN_ANGLE] = spin_rate
    deriv[S_VX] = fx_tot / m
    deriv[S_VY] = (fy_tot - m * V * V * curvature * math.cos(cant) - m * g * math.sin(cant)) / m
    deriv[S_VZ] = (fz_tot - m * g * math.cos(cant) + m * V * V * curvature * math.sin(cant)) / m
    gyro = model[M_GYROSCOPIC]
    deriv[S_ROLL_RATE] = (mx_tot + gyro * jy * spin_rate * (yaw_rate + V * curvature)) / jx
    deriv[S_YAW_RATE] = (mz_tot - gyro * jy * spin_rate * roll_rate - jz * V * V * curvature_rate) / jz
    deriv[S_SPIN_RATE] = my_tot / jy


PROBLEM_NONE, PROBLEM_NON_FINITE, PROBLEM_PENETRATION = 0, 1, 2
PROBLEM_DERAILMENT = 4   # a loaded contact at the flange tip: the wheel has climbed its rail
PROBLEM_BAD_INPUT = 5    # a non-finite entry in the input vector (checked before integrating)
PROBLEM_STEP_SIZE = 6    # the adaptive integrator needed more than M_MAX_STEPS steps (accepted
                         # or rejected) in one host step
PROBLEM_OFF_RAIL = 7     # derailment: a wheel has dropped off its rail head inside the gauge
PROBLEM_AIRBORNE = 8     # derailment: both wheels off the rails longer than the airborne limit
                         # (solver/derailment.py airborne_limit; checked by the step's bookkeeping)
N_RHS_STEP_SIZE = -2     # the RHS count an integrator returns for PROBLEM_STEP_SIZE
CLIMB_MARGIN = 0.003     # a loaded contact within 3 mm of the flange tip: the wheel climbs


class StepLimits(NamedTuple):
    """What an accepted step may not exceed."""

    max_penetration: float   # m
    tread_end: float         # lateral coordinate of the wheel profile's field-side end (m)
    flange_tip: float        # lateral coordinate of the flange tip on the wheel profile (m)



@njit(cache=True, error_model="numpy", _nrt=False)
def state_is_finite(state):
    """True if every entry of the state vector is finite."""
    for j in range(state.shape[0]):
        if not math.isfinite(state[j]):
            return False
    return True


@njit(cache=True, error_model="numpy", _nrt=False)
def step_problem(state, n_rhs, results, limits):
    """Why a step cannot be accepted: (PROBLEM_* code, side). `results` the
    ContactResults at the end of the step, `limits` the StepLimits. Checked in
    this order: the adaptive integrator out of steps, non-finite
    state, penetration above limits.max_penetration, a loaded contact point within
    CLIMB_MARGIN of the flange tip (derailment: the wheel has climbed over the
    rail, risen by the flange height), a wheel whose rail head's centre lies
    beyond the field-side end of its profile (derailment: the wheel has dropped
    off the rail head inside the gauge)."""
    summary = results.summary
    contact = results.contact
    max_penetration = limits.max_penetration
    flange_tip = limits.flange_tip
    if n_rhs == N_RHS_STEP_SIZE:
        return PROBLEM_STEP_SIZE, -1
    if n_rhs < 0 or not state_is_finite(state):
        return PROBLEM_NON_FINITE, -1
    if summary[O_MAX_PENETRATION] > max_penetration:
        return PROBLEM_PENETRATION, -1
    for side in range(2):
        for i in range(contact.shape[1]):
            if contact[side, i, C_ACTIVE] > 0.5 and contact[side, i, C_S_WHEEL] < flange_tip + CLIMB_MARGIN:
                return PROBLEM_DERAILMENT, side
    for side in range(2):
        if not summary[O_RAIL_ON_WHEEL_LEFT + side] <= limits.tread_end:
            return PROBLEM_OFF_RAIL, side
    return PROBLEM_NONE, -1


# Layout of the derived-output vector of `derived_outputs`.
D_BOX_POS, D_BOX_VEL, D_WHEEL_RAIL = 0, 6, 12      # (2, 3) each
D_Y, D_Q, D_YQ = 18, 20, 22                        # (2,) each
D_PY, D_PQ, D_PYQ, D_WEAR = 24, 30, 36, 42         # (2, MAX_POINTS) each
D_ENERGY = 48
N_DERIVED = 49


@njit(cache=True, error_model="numpy", _nrt=False)
def derived_outputs(state, contact, box_semi_spacing, out):
    """Axle-box kinematics, wheel-rail forces, Y, Q, Y/Q (per wheel and per
    point) and the wear number T gamma = |Fx xi| + |Fy eta| per point.

    Forces on the rail are those of the wheel on the rail (minus the contact
    forces on the wheel). Y is positive towards the field side of each wheel
    (left: +y, right: -y), Q positive downwards; Y/Q is 0 where Q < 1 N."""
    roll = state[S_ROLL]
    yaw = state[S_YAW]
    ex = -math.sin(yaw) * math.cos(roll)
    ey = math.cos(yaw) * math.cos(roll)
    ez = math.sin(roll)
    energy = 0.0
    for side in range(2):
        sign = 1.0 if side == 0 else -1.0
        rx = sign * box_semi_spacing * ex
        ry = sign * box_semi_spacing * ey
        rz = sign * box_semi_spacing * ez
        out[D_BOX_POS + 3 * side] = state[S_X] + rx
        out[D_BOX_POS + 3 * side + 1] = state[S_Y] + ry
        out[D_BOX_POS + 3 * side + 2] = state[S_Z] + rz
        wx = state[S_ROLL_RATE]
        wz = state[S_YAW_RATE]
        out[D_BOX_VEL + 3 * side] = state[S_VX] - wz * ry
        out[D_BOX_VEL + 3 * side + 1] = state[S_VY] + wz * rx - wx * rz
        out[D_BOX_VEL + 3 * side + 2] = state[S_VZ] + wx * ry
        fx = 0.0
        fy = 0.0
        fz = 0.0
        for i in range(contact.shape[1]):
            row = contact[side, i]
            j = side * contact.shape[1] + i
            py = -row[C_FY] * sign
            pq = row[C_FZ]
            active = row[C_ACTIVE] > 0.5
            fx -= row[C_FX]
            fy -= row[C_FY]
            fz -= row[C_FZ]
            energy += row[C_ELASTIC_ENERGY]
            out[D_PY + j] = py if active else 0.0
            out[D_PQ + j] = pq if active else 0.0
            out[D_PYQ + j] = py / pq if (active and pq > 1.0) else 0.0
            out[D_WEAR + j] = (abs(row[C_CREEP_LONG] * row[C_XI]) + abs(row[C_CREEP_LAT] * row[C_ETA])
                               if active else 0.0)
        out[D_WHEEL_RAIL + 3 * side] = fx
        out[D_WHEEL_RAIL + 3 * side + 1] = fy
        out[D_WHEEL_RAIL + 3 * side + 2] = fz
        y_force = fy * sign
        q_force = -fz
        out[D_Y + side] = y_force
        out[D_Q + side] = q_force
        out[D_YQ + side] = y_force / q_force if q_force > 1.0 else 0.0
    out[D_ENERGY] = energy


# Input vector of `WheelsetModel.advance_vector` (what `WheelsetInputs` holds, flat):
# per side (left, right) lateral, vertical, roll of the rail, then their rates,
# then the axle-box force and moment (track frame), the axle torque, and the
# track curvature and cant angle overriding the track's (NaN: from the track).
U_RAIL_MOTION, U_RAIL_VELOCITY, U_BOX_FORCE, U_BOX_MOMENT = 0, 6, 12, 18   # (2, 3) each
U_TORQUE, U_CURVATURE, U_CANT = 24, 25, 26
N_INPUT = 27
INPUT_VECTOR_NAMES = tuple(
    [f"rail motion ({sd} {q})" for sd in ("left", "right") for q in ("lateral", "vertical", "roll")]
    + [f"rail velocity ({sd} {q})" for sd in ("left", "right") for q in ("lateral", "vertical", "roll")]
    + [f"axle-box force ({sd} {a})" for sd in ("left", "right") for a in "xyz"]
    + [f"axle-box moment ({sd} {a})" for sd in ("left", "right") for a in "xyz"]
    + ["axle torque", "curvature", "cant angle"])

# Output record (`WheelsetModel.record`, rebuilt by `fill_record` after every
# accepted step): time and distance, the state, the derived outputs, the contact
# rows (2, MAX_POINTS, N_CONTACT; zero for inactive points), the active points,
# the lift flag and the wear number per wheel. A host that reads many outputs every step (the
# FMU) takes them from this one array instead of building `WheelsetOutputs`.
R_TIME, R_DISTANCE = 0, 1
R_STATE = 2
R_DERIVED = R_STATE + N_STATE
R_CONTACT = R_DERIVED + N_DERIVED
R_COUNT = R_CONTACT + 2 * geo.MAX_POINTS * N_CONTACT     # (2,)
R_LIFT = R_COUNT + 2                                      # (2,) 1.0 = lifted
R_WEAR = R_LIFT + 2                                       # (2,) wear number T gamma per wheel (N)
R_LIFT_HEIGHT = R_WEAR + 2                                # (2,) a lifted wheel's height above its rail (m)
# running safety (solver/derailment.py), written by the step's bookkeeping
# (solver/fast_step.py update_safety): per wheel the flange-climb ratio (flange
# Y/Q over Nadal's limit), how long (s) and how far (m) it has been above 1;
# Weinstock's axle sum of |Y/Q| and its ratio to Weinstock's limit; how long
# both wheels have been off the rails (s); the flange-climb warning (1.0: a
# ratio above 1)
R_CLIMB = R_LIFT_HEIGHT + 2
R_CLIMB_TIME = R_CLIMB + 2
R_CLIMB_DISTANCE = R_CLIMB_TIME + 2
R_AXLE_SUM = R_CLIMB_DISTANCE + 2
R_WEINSTOCK = R_AXLE_SUM + 1
R_AIRBORNE = R_WEINSTOCK + 1
R_CLIMB_WARNING = R_AIRBORNE + 1
N_RECORD = R_CLIMB_WARNING + 1


def record_index_of_contact(side: int, point: int, column: int) -> int:
    """Index in the output record of contact column C_* of point `point` of wheel `side`."""
    return R_CONTACT + (side * geo.MAX_POINTS + point) * N_CONTACT + column


@njit(cache=True, error_model="numpy", _nrt=False)
def fill_record(state, results, box_semi_spacing, derived, record):
    """The output record (entries from R_STATE on) at the current state and its
    ContactResults; `derived` (N_DERIVED,) is scratch for `derived_outputs`."""
    contact = results.contact
    summary = results.summary
    derived_outputs(state, contact, box_semi_spacing, derived)
    for j in range(N_STATE):
        record[R_STATE + j] = state[j]
    for j in range(N_DERIVED):
        record[R_DERIVED + j] = derived[j]
    k = R_CONTACT
    for side in range(2):
        count = 0
        for i in range(contact.shape[1]):
            active = contact[side, i, C_ACTIVE] > 0.5
            if active:
                count += 1
            for f in range(N_CONTACT):
                record[k] = contact[side, i, f] if active else 0.0
                k += 1
        record[R_COUNT + side] = count
        lifted = summary[O_LIFT_LEFT + side] > 0.5
        record[R_LIFT + side] = 1.0 if lifted else 0.0
        gap = summary[O_GAP_LEFT + side]
        # (a wheel not over its rail at all, or a gap not found: 1 m, the output's cap)
        record[R_LIFT_HEIGHT + side] = min(gap, 1.0) if lifted and gap > 0.0 else 0.0
        wear = 0.0                     # the wheel's T gamma: sum over its points
        for i in range(contact.shape[1]):
            wear += derived[D_WEAR + side * contact.shape[1] + i]
        record[R_WEAR + side] = wear
