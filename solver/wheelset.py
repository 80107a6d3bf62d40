"""Rigid 6-DOF wheelset on a track with N elastic contact points per wheel.

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
evaluation: each contact point's normal force from its own penetration by Hertz
(solver.normal, N = K delta^1.5 + C ddelta/dt, never pulling), its creep forces
from the creepages (solver.creep, model by parameter). Contact points appear and
vanish as the wheel moves; a wheel may lift.

Creepages at a contact point (velocity of the wheel material relative to the
rail, divided by V, in the contact frame t1 = rolling, t2 = lateral in the
contact plane towards +y, n = normal from rail into wheel):
  xi = (v_w - v_r).t1 / V, eta = (v_w - v_r).t2 / V, spin = (omega_w.n) / V,
with v_w = v_C + omega_w x r_c, omega_w = Omega e + (roll', 0, yaw' + V kappa).

The numba kernel `wheelset_rhs` evaluates all of this; `WheelsetModel` wraps it
with parameters, the track, inputs, outputs and state snapshots.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from . import geometry as geo
from .creep import MODEL_IDS, creep_forces_kernel
from .normal import hertz_from_penetration_kernel
from .track import (BUILTIN_TRACKS, Track, RailMotion, builtin_track, load_track,
                    track_state_kernel)

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
N_MODEL = 27

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

# Summary outputs of the kernel.
O_LIFT_LEFT, O_LIFT_RIGHT = 0, 1
O_MAX_PENETRATION = 2
O_GAP_LEFT, O_GAP_RIGHT = 3, 4     # smallest wheel-rail distance per wheel (m)
N_SUMMARY = 5


class WheelsetError(ValueError):
    """Bad wheelset parameters or inputs."""


# ---------------------------------------------------------------------------
# numba kernel
# ---------------------------------------------------------------------------

def bad_input_error(u: np.ndarray):
    """Raise WheelsetError naming the non-finite entries of an input vector
    (curvature and cant may be NaN: taken from the track)."""
    bad = [f"{INPUT_VECTOR_NAMES[j]} = {float(u[j])!r}" for j in range(N_INPUT)
           if not (math.isfinite(u[j]) or (j in (U_CURVATURE, U_CANT) and math.isnan(u[j])))]
    if bad:
        raise WheelsetError("non-finite input: " + ", ".join(bad))


@njit(cache=True)
def _cross(ax, ay, az, bx, by, bz):
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx


@njit(cache=True)
def wheelset_rhs(state, curvature, curvature_rate, cant, wheel, rail, gparams, model,
                 rail_motion, rail_velocity, box_force, box_moment, axle_torque,
                 work, points, counts, contact, summary, deriv, update_only=False):
    """Time derivative of the wheelset state (deriv, 12) and the contact results.

    rail_motion, rail_velocity: (2, 3) lateral, vertical, roll per rail and their
    rates; box_force, box_moment: (2, 3) external loads at the left/right axle
    boxes (track frame); contact: (2, MAX_POINTS, N_CONTACT) filled; summary (N_SUMMARY,).
    update_only: keep the contact points found by the last full search in
    `points` and only re-locate them at this state (geometry.wheelset_contact_update);
    the integrator does so at the intermediate stages of a step.
    """
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
    tables = geo.ContactTables(wheel, rail, gparams)
    pose = geo.WheelsetPose(y, z, roll, yaw)
    buffers = geo.ContactBuffers(work, points, counts)
    if update_only:
        geo.wheelset_contact_update(tables, pose, rail_motion, buffers)
    else:
        geo.wheelset_contact_kernel(tables, pose, rail_motion, epsilon, buffers)
    if model[M_MULTIPOINT] < 0.5:
        for side in range(2):
            if counts[side] > 1:
                counts[side] = 1
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
    speed_ref = max(abs(V), 0.1)
    creep_model = int(model[M_CREEP_MODEL])
    for side in range(2):
        sign = 1.0 if side == 0 else -1.0
        for i in range(geo.MAX_POINTS):
            row = contact[side, i]
            for f in range(N_CONTACT):
                row[f] = 0.0
        any_force = False
        for i in range(counts[side]):
            p = points[side, i]
            row = contact[side, i]
            tan_c = p[geo.P_TAN_CONTACT]
            delta = math.atan(tan_c)
            cd = math.cos(delta)
            sd = math.sin(delta)
            # contact frame (track axes): n normal rail->wheel, t1 rolling, t2 = n x t1 lateral (+y)
            nx, ny, nz = 0.0, -sign * sd, cd
            # rolling direction along the wheelset's heading, projected into the contact plane
            t1x = math.cos(yaw)
            t1y = math.sin(yaw)
            t1z = 0.0
            dotn = t1x * nx + t1y * ny + t1z * nz
            t1x -= dotn * nx
            t1y -= dotn * ny
            t1z -= dotn * nz
            norm = math.sqrt(t1x * t1x + t1y * t1y + t1z * t1z)
            t1x /= norm
            t1y /= norm
            t1z /= norm
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
            rel_t1 = dvx * t1x + dvy * t1y + dvz * t1z
            rel_t2 = dvx * t2x + dvy * t2y + dvz * t2z
            rel_n = dvx * nx + dvy * ny + dvz * nz
            # rail rotation rate about x contributes to the spin
            spin_w = wx * nx + wy * ny + wz * nz - rail_velocity[side, 2] * nx
            xi = rel_t1 / speed_ref
            eta = rel_t2 / speed_ref
            spin = spin_w / speed_ref
            # penetration along the normal and its rate
            rail_slope = p[geo.P_RAIL_SLOPE]
            pen = -p[geo.P_GAP] / math.sqrt(1.0 + rail_slope * rail_slope)
            pen_rate = -rel_n
            # Hertz curvature sums (convex > 0): rolling A, lateral B
            wheel_slope = p[geo.P_WHEEL_SLOPE]
            radius = p[geo.P_RADIUS]
            gamma = math.atan(-wheel_slope)
            curv_roll = math.cos(gamma) / radius
            k_w = -p[geo.P_WHEEL_F2] / (1.0 + wheel_slope * wheel_slope) ** 1.5
            k_r = -p[geo.P_RAIL_Z2] / (1.0 + rail_slope * rail_slope) ** 1.5
            A = 0.5 * curv_roll
            B = 0.5 * (k_w + k_r)
            normal = 0.0
            a = 0.0
            b = 0.0
            flag = 0
            energy = 0.0
            if pen > 0.0:
                normal, a, b, flag = hertz_from_penetration_kernel(pen, A, B, young, nu)
                energy = 0.4 * normal * pen
                normal += model[M_CONTACT_DAMPING] * pen_rate
                if normal < 0.0:
                    normal = 0.0
                if pen > max_pen:
                    max_pen = pen
            fl = 0.0
            ft = 0.0
            ms = 0.0
            if normal > 0.0:
                any_force = True
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
            row[C_ACTIVE] = 1.0 if normal > 0.0 else 0.0
            row[C_S_WHEEL] = p[geo.P_S_WHEEL]
            row[C_U_RAIL] = p[geo.P_U_RAIL]
            row[C_X] = p[geo.P_X]
            row[C_Y] = p[geo.P_Y]
            row[C_Z] = p[geo.P_Z]
            row[C_ANGLE] = delta
            row[C_RADIUS] = radius
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
    my_tot += axle_torque
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
    deriv[S_ROLL_RATE] = (mx_tot + jy * spin_rate * (yaw_rate + V * curvature)) / jx
    deriv[S_YAW_RATE] = (mz_tot - jy * spin_rate * roll_rate - jz * V * V * curvature_rate) / jz
    deriv[S_SPIN_RATE] = my_tot / jy


PROBLEM_NONE, PROBLEM_NON_FINITE, PROBLEM_PENETRATION, PROBLEM_CONTACT_LOST, PROBLEM_DERAILMENT = 0, 1, 2, 3, 4
PROBLEM_BAD_INPUT = 5    # a non-finite entry in the input vector (checked before integrating)
CLIMB_MARGIN = 0.003     # a loaded contact within 3 mm of the flange tip: the wheel climbs


@njit(cache=True)
def state_is_finite(state):
    """True if every entry of the state vector is finite."""
    for j in range(state.shape[0]):
        if not math.isfinite(state[j]):
            return False
    return True


@njit(cache=True)
def step_problem(state, n_rhs, summary, contact, max_penetration, lift_tolerance, flange_tip):
    """Why a step cannot be accepted: (PROBLEM_* code, side). Checked in this order:
    non-finite state, penetration above max_penetration, both wheels further than
    lift_tolerance off the rails, a loaded contact point within CLIMB_MARGIN of
    the flange tip (derailment: the wheel is climbing over the rail)."""
    if n_rhs < 0 or not state_is_finite(state):
        return PROBLEM_NON_FINITE, -1
    if summary[O_MAX_PENETRATION] > max_penetration:
        return PROBLEM_PENETRATION, -1
    if summary[O_GAP_LEFT] > lift_tolerance and summary[O_GAP_RIGHT] > lift_tolerance:
        return PROBLEM_CONTACT_LOST, -1
    for side in range(2):
        for i in range(contact.shape[1]):
            if contact[side, i, C_ACTIVE] > 0.5 and contact[side, i, C_S_WHEEL] < flange_tip + CLIMB_MARGIN:
                return PROBLEM_DERAILMENT, side
    return PROBLEM_NONE, -1


# Layout of the derived-output vector of `derived_outputs`.
D_BOX_POS, D_BOX_VEL, D_WHEEL_RAIL = 0, 6, 12      # (2, 3) each
D_Y, D_Q, D_YQ = 18, 20, 22                        # (2,) each
D_PY, D_PQ, D_PYQ, D_WEAR = 24, 30, 36, 42         # (2, MAX_POINTS) each
D_ENERGY = 48
N_DERIVED = 49


@njit(cache=True)
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
# rows (2, MAX_POINTS, N_CONTACT; zero for inactive points), the active points
# and the lift flag per wheel. A host that reads many outputs every step (the
# FMU) takes them from this one array instead of building `WheelsetOutputs`.
R_TIME, R_DISTANCE = 0, 1
R_STATE = 2
R_DERIVED = R_STATE + N_STATE
R_CONTACT = R_DERIVED + N_DERIVED
R_COUNT = R_CONTACT + 2 * geo.MAX_POINTS * N_CONTACT     # (2,)
R_LIFT = R_COUNT + 2                                      # (2,) 1.0 = lifted
N_RECORD = R_LIFT + 2


def record_index_of_contact(side: int, point: int, column: int) -> int:
    """Index in the output record of contact column C_* of point `point` of wheel `side`."""
    return R_CONTACT + (side * geo.MAX_POINTS + point) * N_CONTACT + column


# Names of the record's entries: the one output vocabulary of the project (core
# histories, the FMU's outputs (fmu_wheelset/variables.py), sweeps, the
# validation report). Dots for the hierarchy, [k] (1-based) for the contact slots.
RECORD_SIDES = ("left", "right")
RECORD_POINT_COLUMNS = (   # name in the record vocabulary -> contact column C_*
    ("active", C_ACTIVE), ("wheel_lateral", C_S_WHEEL), ("rail_lateral", C_U_RAIL),
    ("position.y", C_Y), ("position.z", C_Z), ("contact_angle", C_ANGLE),
    ("rolling_radius", C_RADIUS), ("longitudinal_creepage", C_XI), ("lateral_creepage", C_ETA),
    ("spin_creepage", C_SPIN), ("normal_force", C_NORMAL), ("longitudinal_force", C_CREEP_LONG),
    ("lateral_force", C_CREEP_LAT), ("spin_moment", C_SPIN_MOMENT))


def _record_names() -> dict:
    names = {"time": R_TIME, "wheelset.distance": R_DISTANCE}
    for name, column in (("x", S_X), ("y", S_Y), ("z", S_Z), ("roll", S_ROLL), ("yaw", S_YAW),
                         ("pitch", S_SPIN_ANGLE), ("velocity.x", S_VX), ("velocity.y", S_VY),
                         ("velocity.z", S_VZ), ("roll_rate", S_ROLL_RATE),
                         ("yaw_rate", S_YAW_RATE), ("spin_rate", S_SPIN_RATE)):
        names[f"wheelset.{name}"] = R_STATE + column
    for side, side_name in enumerate(RECORD_SIDES):
        for a, ax in enumerate("xyz"):
            names[f"axlebox.{side_name}.position.{ax}"] = R_DERIVED + D_BOX_POS + 3 * side + a
            names[f"axlebox.{side_name}.velocity.{ax}"] = R_DERIVED + D_BOX_VEL + 3 * side + a
            names[f"wheel.{side_name}.force_on_rail.{ax}"] = R_DERIVED + D_WHEEL_RAIL + 3 * side + a
        names[f"wheel.{side_name}.Y"] = R_DERIVED + D_Y + side
        names[f"wheel.{side_name}.Q"] = R_DERIVED + D_Q + side
        names[f"wheel.{side_name}.Y_over_Q"] = R_DERIVED + D_YQ + side
        names[f"wheel.{side_name}.active_points"] = R_COUNT + side
        names[f"wheel.{side_name}.lift"] = R_LIFT + side
        for point in range(geo.MAX_POINTS):
            prefix = f"contact.{side_name}.point[{point + 1}]."
            for name, column in RECORD_POINT_COLUMNS:
                names[prefix + name] = record_index_of_contact(side, point, column)
    return names


RECORD_INDEX = _record_names()      # name -> index in the output record


@njit(cache=True)
def fill_record(state, contact, summary, box_semi_spacing, derived, record):
    """The output record (entries from R_STATE on) at the current state."""
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
        record[R_LIFT + side] = 1.0 if summary[O_LIFT_LEFT + side] > 0.5 else 0.0


# ---------------------------------------------------------------------------
# Python API
# ---------------------------------------------------------------------------

# Model names, in id order: the one list of each (the FMU's enumerations derive
# from these: fmu_wheelset/variables.py).
INTEGRATOR_NAMES = ("rk4", "semi-implicit")
CREEP_MODEL_NAMES = tuple(sorted(MODEL_IDS, key=MODEL_IDS.get))   # solver.creep ids
CONTACT_MODEL_NAMES = ("single", "multipoint")                    # M_MULTIPOINT 0 / 1


@dataclass
class WheelsetParameters:
    """Parameters of the wheelset model (SI units).

    Profiles: a built-in name (solver.profiles), a path to a profile file, or a
    Profile object. `rail_inclination` in rad (atan(1/40) for 1:40). Defaults:
    Manchester benchmark wheelset (Iwnicki 1998) on S1002/UIC60 1:40.
    `creep_model`: "kalker", "she", "polach", "fastsim"; `creep_options`
    passed to solver.creep (Polach kA, kS, A, B; FASTSIM nx, ny).
    `contact_model`: "multipoint" or "single" (deepest point per wheel only).
    `contact_damping`: C in N = K delta^1.5 + C d(delta)/dt (N s/m, Kang 2012).
    `bogie`: True for the built-in spring-damper to a frame following the
    track centreline (stand-alone runs); False when the host supplies the
    axle-box forces. `suspended_mass`: the share of the vehicle mass carried by
    this wheelset's primary suspension (used by the built-in bogie only).
    `track`: a built-in scenario name, a track file path, or a Track.
    """

    wheel_profile: object = "S1002"
    rail_profile: object = "UIC60"
    profile_step: float = 1e-4
    gauge: float = 1.435
    rail_inclination: float = float(np.arctan(1.0 / 40.0))
    back_to_back: float = 1.360
    nominal_radius: float = 0.46
    mass: float = 1813.0
    inertia_roll: float = 1120.0
    inertia_spin: float = 112.0
    inertia_yaw: float = 1120.0
    young: float = 2.1e11
    poisson: float = 0.28
    friction: float = 0.3
    creep_model: str = "polach"
    creep_options: dict = field(default_factory=dict)
    contact_model: str = "multipoint"
    separation_min: float = 0.008
    slope_difference_min: float = 0.025
    contact_damping: float = 0.0
    speed: float = 27.78
    internal_step: float = 1e-3
    integrator: str = "rk4"
    track: object = "straight"
    axle_box_semi_spacing: float = 1.0
    bogie: bool = False
    suspension_stiffness: tuple = (31.391e6, 3.884e6, 1.22e6)   # kx, ky, kz per box (Iwnicki 1998)
    suspension_damping: tuple = (15e3, 2e3, 4e3)                # cx, cy, cz per box
    suspended_mass: float = 0.0
    initial_lateral: float = 0.0
    initial_yaw: float = 0.0
    max_penetration: float = 2e-3
    lift_tolerance: float = 1e-3      # both wheels further than this off the rails: contact lost

    def validate(self):
        positive = ["profile_step", "gauge", "back_to_back", "nominal_radius", "mass",
                    "inertia_roll", "inertia_spin", "inertia_yaw", "young", "internal_step",
                    "axle_box_semi_spacing", "max_penetration", "separation_min", "lift_tolerance"]
        for name in positive:
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise WheelsetError(f"parameter {name} must be a positive finite number, got {value!r}")
        for name in ["speed", "friction", "contact_damping", "suspended_mass", "rail_inclination",
                     "initial_lateral", "initial_yaw", "slope_difference_min", "poisson"]:
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise WheelsetError(f"parameter {name} must be finite, got {value!r}")
        if not 0.0 <= self.poisson < 0.5:
            raise WheelsetError(f"poisson must be in [0, 0.5), got {self.poisson}")
        if self.friction < 0 or self.friction > 2:
            raise WheelsetError(f"friction must be in [0, 2], got {self.friction}")
        if self.speed < 0:
            raise WheelsetError(f"speed must be >= 0 (m/s), got {self.speed}")
        if self.suspended_mass < 0 or self.contact_damping < 0:
            raise WheelsetError("suspended_mass and contact_damping must be >= 0")
        if not isinstance(self.creep_model, str) or self.creep_model not in MODEL_IDS:
            raise WheelsetError(f"creep_model must be one of {sorted(MODEL_IDS)}, got {self.creep_model!r}")
        if self.contact_model not in CONTACT_MODEL_NAMES:
            raise WheelsetError(f"contact_model must be 'multipoint' or 'single', got {self.contact_model!r}")
        if self.integrator not in INTEGRATOR_NAMES:
            raise WheelsetError(f"integrator must be one of {INTEGRATOR_NAMES}, got {self.integrator!r}")
        if self.internal_step > 0.01:
            raise WheelsetError(f"internal_step {self.internal_step} s is too large (<= 0.01 s)")
        for name in ("suspension_stiffness", "suspension_damping"):
            vals = getattr(self, name)
            if (not isinstance(vals, (tuple, list)) or len(vals) != 3
                    or any(not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 for v in vals)):
                raise WheelsetError(f"{name} must be three finite values >= 0")


def resolve_source(spec: str, is_builtin, search_dirs=()):
    """THE lookup rule for a profile or a track given by name (the core and the
    FMU slave both use it): a built-in name (`is_builtin(spec)`) first; else a
    file: an absolute path as it is, a relative one in each of `search_dirs`
    (the FMU's resources), then relative to the working directory. Returns the
    built-in name or the file's path; None if it is neither."""
    import os
    if is_builtin(spec):
        return spec
    if os.path.isabs(spec):
        candidates = [spec]
    else:
        candidates = [os.path.join(d, spec) for d in search_dirs if d] + [spec]
    for candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
    return None


def _resolve_profile(spec, kind, step):
    from .profiles import builtin_profile, is_builtin_profile, load_profile
    if hasattr(spec, "lateral") and hasattr(spec, "kind"):   # a Profile (or one built alike)
        if spec.kind != kind:
            raise WheelsetError(f"a {kind} profile is needed, got a {spec.kind} profile")
        return spec
    if not isinstance(spec, str):
        raise WheelsetError(f"{kind} profile must be a name, a path or a Profile, got {spec!r}")
    source = resolve_source(spec, is_builtin_profile)
    if source is None:
        raise WheelsetError(f"unknown {kind} profile {spec!r} (not built in, no such file)")
    if source == spec and is_builtin_profile(spec):
        return builtin_profile(spec, step=step)
    return load_profile(source, kind, step=step)


def _resolve_track(spec):
    if isinstance(spec, Track):
        return spec
    if isinstance(spec, str):
        source = resolve_source(spec, lambda name: name in BUILTIN_TRACKS)
        if source is None:
            raise WheelsetError(f"unknown track {spec!r}: not built in "
                                f"({', '.join(sorted(BUILTIN_TRACKS))}) and no such file")
        if source == spec and spec in BUILTIN_TRACKS:
            return builtin_track(spec)
        return load_track(source)
    raise WheelsetError(f"track must be a name, a path or a Track, got {spec!r}")


@dataclass
class WheelsetInputs:
    """External inputs over one step (held constant within it)."""

    axle_box_force: np.ndarray = field(default_factory=lambda: np.zeros((2, 3)))
    axle_box_moment: np.ndarray = field(default_factory=lambda: np.zeros((2, 3)))
    axle_torque: float = 0.0
    rail_motion: RailMotion = field(default_factory=RailMotion)
    curvature: float = float("nan")    # NaN: from the track
    cant_angle: float = float("nan")   # NaN: from the track


@dataclass
class StepResult:
    status: str          # "ok" or "discard"
    message: str = ""
    rhs_evaluations: int = 0
    reason: str = ""     # for a discard: "non_finite", "excessive_penetration",
                         # "contact_lost" or "derailment"


@dataclass
class WheelsetOutputs:
    """Outputs after a step. Per-wheel arrays (2,) [left, right]; per contact
    point (2, MAX_POINTS). Forces on the rail are those of the wheel on the rail."""

    time: float
    distance: float
    position: np.ndarray          # x, y, z of the wheelset centre (m), track frame
    orientation: np.ndarray       # roll, yaw, spin angle (rad)
    velocity: np.ndarray          # (m/s)
    angular_velocity: np.ndarray  # roll rate, yaw rate, spin rate (rad/s)
    axle_box_position: np.ndarray   # (2, 3)
    axle_box_velocity: np.ndarray   # (2, 3)
    wheel_rail_force: np.ndarray    # (2, 3) force of each wheel on its rail, track frame (N)
    lateral_force: np.ndarray       # Y (2,): wheel on rail, + towards the field side (N)
    vertical_force: np.ndarray      # Q (2,): wheel on rail, + downwards (N)
    derailment_quotient: np.ndarray  # Y/Q (2,)
    contact_count: np.ndarray       # (2,) active points
    contact_active: np.ndarray      # (2, 3) bool
    contact_y_wheel: np.ndarray     # lateral position on the wheel profile (m)
    contact_y_rail: np.ndarray      # lateral position on the rail profile (m)
    contact_position: np.ndarray    # (2, 3, 3) track frame (m)
    contact_angle: np.ndarray       # (rad)
    rolling_radius: np.ndarray      # (m)
    creepage_longitudinal: np.ndarray
    creepage_lateral: np.ndarray
    creepage_spin: np.ndarray       # (1/m)
    normal_force: np.ndarray        # (N)
    creep_force_longitudinal: np.ndarray   # (N), contact frame
    creep_force_lateral: np.ndarray        # (N), contact frame
    spin_moment: np.ndarray                # (N m)
    semi_axis_a: np.ndarray
    semi_axis_b: np.ndarray
    point_lateral_force: np.ndarray        # Y per point (N)
    point_vertical_force: np.ndarray       # Q per point (N)
    point_derailment_quotient: np.ndarray  # Y/Q per point
    wear_number: np.ndarray                # T gamma per point (N)
    penetration: np.ndarray                # normal penetration per point (m)
    elastic_energy: float                  # J
    wheel_lift: np.ndarray                 # (2,) bool (a derailing step is discarded:
                                           # StepResult.reason says so)
    rhs_evaluations: int


class WheelsetModel:
    """The wheelset core: parameters, track, state, and `advance`."""

    def __init__(self, params: WheelsetParameters | None = None):
        self.params = params = params or WheelsetParameters()
        params.validate()
        try:
            wheel = _resolve_profile(params.wheel_profile, "wheel", params.profile_step)
            rail = _resolve_profile(params.rail_profile, "rail", params.profile_step)
            self.setup = geo.ContactSetup(
                wheel, rail, gauge=params.gauge, inclination=params.rail_inclination,
                back_to_back=params.back_to_back, nominal_radius=params.nominal_radius,
                separation_min=params.separation_min,
                slope_difference_min=params.slope_difference_min)
        except geo.GeometryError as exc:
            raise WheelsetError(str(exc)) from exc
        self.track = _resolve_track(params.track)
        from .creep import kernel_parameters
        model_id, p1, p2, p3, p4, p5 = kernel_parameters(params.creep_model, dict(params.creep_options))
        m = np.zeros(N_MODEL)
        m[M_MASS] = params.mass
        m[M_JX] = params.inertia_roll
        m[M_JY] = params.inertia_spin
        m[M_JZ] = params.inertia_yaw
        m[M_YOUNG] = params.young
        m[M_POISSON] = params.poisson
        m[M_FRICTION] = params.friction
        m[M_CREEP_MODEL] = model_id
        m[M_CP1:M_CP5 + 1] = (p1, p2, p3, p4, p5)
        m[M_CONTACT_DAMPING] = params.contact_damping
        m[M_MULTIPOINT] = 1.0 if params.contact_model == "multipoint" else 0.0
        m[M_BOX_SEMI_SPACING] = params.axle_box_semi_spacing
        m[M_BOGIE] = 1.0 if params.bogie else 0.0
        m[M_KX:M_KZ + 1] = params.suspension_stiffness
        m[M_CX:M_CZ + 1] = params.suspension_damping
        m[M_SUSPENDED_MASS] = params.suspended_mass
        m[M_SPEED] = params.speed
        m[M_GRAVITY] = GRAVITY
        self.model = m
        # the integrator layer sits below this one (solver/integrate.py calls
        # wheelset_rhs): resolved once here, not on every advance()
        from .integrate import INTEGRATOR_IDS, advance_kernel, substeps
        self._advance_kernel = advance_kernel
        self._integrator_id = INTEGRATOR_IDS[params.integrator]
        self._substeps = substeps
        self._track_table = self.track.segment_table()
        # limits of an accepted step: max penetration, lift tolerance, flange tip position
        self._limits = np.array([params.max_penetration, params.lift_tolerance,
                                 self.setup.wheel_table[0, geo.T_LAT]])
        n_w = self.setup.wheel_table.shape[0]
        self._work = np.empty((5, n_w))
        self._points = np.zeros((2, geo.MAX_POINTS, geo.N_POINT_FIELDS))
        self._counts = np.zeros(2, dtype=np.int64)
        self._contact = np.zeros((2, geo.MAX_POINTS, N_CONTACT))
        self._summary = np.zeros(N_SUMMARY)
        self._k = np.zeros((5, N_STATE))
        self._deriv = np.zeros(N_STATE)
        self._saved = (np.zeros(N_STATE), np.zeros_like(self._contact), np.zeros(N_SUMMARY))
        self._derived = np.zeros(N_DERIVED)
        self.state = np.zeros(N_STATE)
        self.record = np.zeros(N_RECORD)    # the outputs at the current state, flat (R_*)
        self.time = 0.0
        self.distance = 0.0
        self.rhs_evaluations = 0
        self._u = self.input_vector(WheelsetInputs())   # the inputs of the last step
        self._initialized = False

    # -- state ---------------------------------------------------------------
    def get_state(self) -> dict:
        """A deep, picklable snapshot of everything that evolves."""
        return {"state": self.state.copy(), "time": self.time, "distance": self.distance,
                "rhs_evaluations": self.rhs_evaluations, "contact": self._contact.copy(),
                "summary": self._summary.copy(), "inputs": self._u.copy(),
                "initialized": self._initialized, "model": self.model.copy()}

    def set_state(self, snapshot: dict):
        self.state[:] = snapshot["state"]
        self.time = float(snapshot["time"])
        self.distance = float(snapshot["distance"])
        self.rhs_evaluations = int(snapshot["rhs_evaluations"])
        self._contact[:] = snapshot["contact"]
        self._summary[:] = snapshot["summary"]
        self._u[:] = snapshot["inputs"]
        self._initialized = bool(snapshot["initialized"])
        self.model[:] = snapshot["model"]
        self._update_record()

    # -- track and inputs ------------------------------------------------------
    def _track_values(self, s: float, u: np.ndarray):
        """(curvature, curvature rate, cant angle) at s, with the overrides of the input vector."""
        kap, rate, cant = track_state_kernel(self._track_table, self.track.rail_distance,
                                             self.track.length, float(s))
        if math.isfinite(u[U_CURVATURE]):
            kap, rate = u[U_CURVATURE], 0.0
        if math.isfinite(u[U_CANT]):
            cant = u[U_CANT]
        return kap, rate, cant

    @staticmethod
    def input_vector(inputs: WheelsetInputs) -> np.ndarray:
        """The flat input vector (U_*, N_INPUT) of `inputs`; WheelsetError if an
        entry is not finite (curvature and cant may be NaN: from the track)."""
        rm = inputs.rail_motion
        u = np.empty(N_INPUT)
        motion = u[U_RAIL_MOTION:U_RAIL_MOTION + 6].reshape(2, 3)
        motion[:, 0], motion[:, 1], motion[:, 2] = rm.lateral, rm.vertical, rm.roll
        rate = u[U_RAIL_VELOCITY:U_RAIL_VELOCITY + 6].reshape(2, 3)
        rate[:, 0], rate[:, 1], rate[:, 2] = rm.lateral_velocity, rm.vertical_velocity, rm.roll_velocity
        u[U_BOX_FORCE:U_BOX_FORCE + 6] = np.asarray(inputs.axle_box_force, dtype=float).reshape(6)
        u[U_BOX_MOMENT:U_BOX_MOMENT + 6] = np.asarray(inputs.axle_box_moment, dtype=float).reshape(6)
        u[U_TORQUE] = float(inputs.axle_torque)
        u[U_CURVATURE] = float(inputs.curvature)
        u[U_CANT] = float(inputs.cant_angle)
        bad_input_error(u)
        return u

    def rhs(self, state=None, inputs: WheelsetInputs | None = None, s=None):
        """The state derivative at `state` (default: the current one); fills the contact results."""
        state = self.state if state is None else np.asarray(state, dtype=float)
        u = self._u if inputs is None else self.input_vector(inputs)
        s = self.distance if s is None else s
        kap, rate, cant = self._track_values(s, u)
        wheelset_rhs(state, kap, rate, cant, self.setup.wheel_table, self.setup.rail_table,
                     self.setup.params, self.model, u[0:6].reshape(2, 3), u[6:12].reshape(2, 3),
                     u[12:18].reshape(2, 3), u[18:24].reshape(2, 3), u[U_TORQUE],
                     self._work, self._points, self._counts, self._contact, self._summary,
                     self._deriv)
        return self._deriv.copy()

    def _update_record(self):
        fill_record(self.state, self._contact, self._summary, self.params.axle_box_semi_spacing,
                    self._derived, self.record)
        self.record[R_TIME] = self.time
        self.record[R_DISTANCE] = self.distance

    # -- initialisation ----------------------------------------------------------
    def initialize(self, inputs: WheelsetInputs | None = None, lateral: float | None = None,
                   yaw: float | None = None):
        """Static equilibrium at t = 0, s = 0: the rigid contact pose, then the
        vertical position and roll that balance the loads with the elastic
        contact forces (Newton on z and roll with the velocities of pure rolling)."""
        p = self.params
        self._u = self.input_vector(inputs or WheelsetInputs())
        y0 = p.initial_lateral if lateral is None else lateral
        yaw0 = p.initial_yaw if yaw is None else yaw
        try:
            rigid = geo.static_contact(self.setup, y0, yaw0)
        except geo.GeometryError as exc:
            raise WheelsetError(f"no static contact at the initial pose: {exc}") from exc
        st = np.zeros(N_STATE)
        st[S_Y] = y0
        st[S_YAW] = yaw0
        st[S_Z] = rigid.z - 5e-5     # start just inside the elastic contact
        st[S_ROLL] = rigid.roll
        st[S_SPIN_RATE] = p.speed / p.nominal_radius
        if p.bogie:
            self.model[M_BOX_Z_REF] = rigid.z
        # Newton on (z, roll) for zero vertical and roll accelerations.
        z_ref0 = rigid.z
        for _ in range(40):
            d = self.rhs(st)
            f = np.array([d[S_VZ], d[S_ROLL_RATE]])
            if abs(f[0]) < 1e-6 and abs(f[1]) < 1e-6:
                break
            jac = np.zeros((2, 2))
            for j, (idx, h) in enumerate(((S_Z, 1e-7), (S_ROLL, 1e-7))):
                st2 = st.copy()
                st2[idx] += h
                d2 = self.rhs(st2)
                jac[:, j] = (np.array([d2[S_VZ], d2[S_ROLL_RATE]]) - f) / h
            if abs(np.linalg.det(jac)) < 1e-30:
                step = np.array([-1e-5, 0.0])     # not yet in contact on both wheels
            else:
                step = np.linalg.solve(jac, -f)
            step = np.clip(step, -2e-5, 2e-5)
            st[S_Z] += step[0]
            st[S_ROLL] += step[1]
        else:
            raise WheelsetError("static equilibrium not found at the initial pose")
        if p.bogie:
            # the built-in bogie's rest height: the boxes at rest where the wheelset sits
            self.model[M_BOX_Z_REF] = z_ref0
        self.state[:] = st
        self.time = 0.0
        self.distance = 0.0
        self.rhs(self.state)
        self._update_record()
        self._initialized = True

    # -- stepping ------------------------------------------------------------------
    def advance(self, h: float, inputs: WheelsetInputs | None = None) -> StepResult:
        """Advance by exactly h (s) with n = ceil(h / internal_step) equal substeps.

        Returns StepResult("discard", reason) and leaves the state unchanged if
        the step cannot be completed (non-finite state, excessive penetration,
        derailment, loss of all contact)."""
        return self.advance_vector(h, self._u if inputs is None else self.input_vector(inputs))

    def advance_vector(self, h: float, u: np.ndarray) -> StepResult:
        """`advance` with the inputs as the flat vector of `input_vector` (U_*):
        one numba call for the whole step (solver.integrate.advance_kernel); the
        outputs at the new state are in `record`. A non-finite input raises
        WheelsetError and changes nothing."""
        if not self._initialized:
            raise WheelsetError("advance() before initialize()")
        if not (isinstance(h, (int, float)) and 0.0 < h < math.inf):
            raise WheelsetError(f"step size must be positive and finite, got {h!r}")
        n_sub = max(1, int(math.ceil(h / self.params.internal_step - 1e-9)))
        saved_state, saved_contact, saved_summary = self._saved
        setup = self.setup
        code, where, n_rhs = self._advance_kernel(
            self.state, float(h), n_sub, self.distance, u, self._track_table,
            self.track.rail_distance, self.track.length, setup.wheel_table, setup.rail_table,
            setup.params, self.model, self._integrator_id, self._limits, self._work,
            self._points, self._counts, self._contact, self._summary, self._k, saved_state,
            saved_contact, saved_summary, self._derived, self.record)
        if code == PROBLEM_BAD_INPUT:
            bad_input_error(u)
        self._u[:] = u
        if code != PROBLEM_NONE:
            reason, message = self._problem_message(code, where)
            self.state[:] = saved_state
            self._contact[:] = saved_contact
            self._summary[:] = saved_summary
            if reason != "derailment":
                message += self._stability_hint(h / n_sub)
            return StepResult("discard", message, 0, reason)
        self.time += h
        self.distance += self.params.speed * h
        self.rhs_evaluations += n_rhs
        self.record[R_TIME] = self.time
        self.record[R_DISTANCE] = self.distance
        return StepResult("ok", "", n_rhs)

    # Stability limit of the explicit integrators for a decaying mode x' = -x / tau:
    # RK4 on the negative real axis to h = 2.785 tau, semi-implicit Euler to h = 2 tau.
    STABILITY_LIMIT = {"rk4": 2.785, "semi-implicit": 2.0}

    def creep_time_constant(self) -> float:
        """Time constant (s) of the longitudinal slip mode at the current contact
        patches. A longitudinal slip velocity dv = vx - r Omega decays under the
        creep forces f11 dv / V, which brake the wheelset (mass m) and spin up the
        axle (inertia J_y, lever r):  d(dv)/dt = -(1/V) sum f11 (1/m + r^2/J_y) dv,
        so tau = V / sum[f11 (1/m + r^2/J_y)], with Kalker's f11 = G a b C11 per
        active point (the initial slope of every creep model here; saturation only
        lowers it). inf when no point is in contact or V = 0."""
        from .creep import linear_creep_coefficients
        p = self.params
        shear = p.young / (2.0 * (1.0 + p.poisson))
        rate = 0.0
        for row in self._contact.reshape(-1, N_CONTACT):
            if row[C_ACTIVE] > 0.5 and row[C_A] > 0.0 and row[C_B] > 0.0:
                f11 = linear_creep_coefficients(row[C_A], row[C_B], shear, p.poisson)[0]
                rate += f11 * (1.0 / p.mass + row[C_RADIUS] ** 2 / p.inertia_spin)
        return p.speed / rate if rate > 0.0 and p.speed > 0.0 else math.inf

    def _stability_hint(self, dt: float) -> str:
        """A sentence for a discarded step when the internal step is above the
        explicit stability limit of the creep damping (else empty)."""
        tau = self.creep_time_constant()
        limit = self.STABILITY_LIMIT[self.params.integrator] * tau
        if not dt > limit:
            return ""
        return (f"; probable cause: the internal step {dt * 1e3:.3g} ms is above the "
                f"stability limit {limit * 1e3:.3g} ms of the creep damping (longitudinal "
                f"slip time constant {tau * 1e3:.3g} ms at V = {self.params.speed:g} m/s, "
                "WheelsetModel.creep_time_constant): reduce the internal step")

    def _problem_message(self, code, side):
        """(reason, message) of a step that cannot be accepted (PROBLEM_* code)."""
        if code == PROBLEM_NON_FINITE:
            return ("non_finite", "the wheelset state became non-finite (numerical instability: "
                    "reduce the internal step)")
        if code == PROBLEM_PENETRATION:
            pen = self._summary[O_MAX_PENETRATION]
            return ("excessive_penetration", f"excessive penetration {pen * 1e3:.2f} mm > "
                    f"{self.params.max_penetration * 1e3:.2f} mm (impact or instability)")
        if code == PROBLEM_CONTACT_LOST:
            gaps = self._summary[O_GAP_LEFT:O_GAP_RIGHT + 1]
            return ("contact_lost", "loss of all wheel-rail contact: both wheels lifted off the rails "
                    f"(gaps {gaps[0] * 1e3:.2f} and {gaps[1] * 1e3:.2f} mm)")
        name = ("left", "right")[side]
        return ("derailment", f"derailment: the {name} wheel is climbing over the rail "
                "(contact within 3 mm of the flange tip)")

    # -- outputs -------------------------------------------------------------------
    def outputs(self) -> WheelsetOutputs:
        """The outputs at the current state (derived quantities by the numba kernel
        `derived_outputs`; the arrays are fresh copies, safe to keep)."""
        c = self._contact.copy()
        d = np.empty(N_DERIVED)
        derived_outputs(self.state, c, self.params.axle_box_semi_spacing, d)
        st = self.state
        active = c[..., C_ACTIVE] > 0.5
        return WheelsetOutputs(
            time=self.time, distance=self.distance, position=st[0:3].copy(),
            orientation=st[3:6].copy(), velocity=st[6:9].copy(), angular_velocity=st[9:12].copy(),
            axle_box_position=d[D_BOX_POS:D_BOX_POS + 6].reshape(2, 3),
            axle_box_velocity=d[D_BOX_VEL:D_BOX_VEL + 6].reshape(2, 3),
            wheel_rail_force=d[D_WHEEL_RAIL:D_WHEEL_RAIL + 6].reshape(2, 3),
            lateral_force=d[D_Y:D_Y + 2], vertical_force=d[D_Q:D_Q + 2], derailment_quotient=d[D_YQ:D_YQ + 2],
            contact_count=active.sum(axis=1), contact_active=active,
            contact_y_wheel=c[..., C_S_WHEEL], contact_y_rail=c[..., C_U_RAIL],
            contact_position=c[..., C_X:C_Z + 1], contact_angle=c[..., C_ANGLE],
            rolling_radius=c[..., C_RADIUS], creepage_longitudinal=c[..., C_XI],
            creepage_lateral=c[..., C_ETA], creepage_spin=c[..., C_SPIN], normal_force=c[..., C_NORMAL],
            creep_force_longitudinal=c[..., C_CREEP_LONG], creep_force_lateral=c[..., C_CREEP_LAT],
            spin_moment=c[..., C_SPIN_MOMENT], semi_axis_a=c[..., C_A], semi_axis_b=c[..., C_B],
            point_lateral_force=d[D_PY:D_PY + 6].reshape(2, 3),
            point_vertical_force=d[D_PQ:D_PQ + 6].reshape(2, 3),
            point_derailment_quotient=d[D_PYQ:D_PYQ + 6].reshape(2, 3),
            wear_number=d[D_WEAR:D_WEAR + 6].reshape(2, 3), penetration=c[..., C_PENETRATION],
            elastic_energy=float(d[D_ENERGY]), wheel_lift=self._summary[:2] > 0.5,
            rhs_evaluations=self.rhs_evaluations)

    def mechanical_energy(self) -> float:
        """Kinetic + gravitational (track frame, no cant) + elastic contact energy (J)."""
        p, st = self.params, self.state
        kinetic = 0.5 * p.mass * (st[S_VX] ** 2 + st[S_VY] ** 2 + st[S_VZ] ** 2) \
            + 0.5 * p.inertia_roll * st[S_ROLL_RATE] ** 2 + 0.5 * p.inertia_yaw * st[S_YAW_RATE] ** 2 \
            + 0.5 * p.inertia_spin * st[S_SPIN_RATE] ** 2
        self.rhs(self.state)
        return float(kinetic + p.mass * GRAVITY * st[S_Z] + self._contact[..., C_ELASTIC_ENERGY].sum())
