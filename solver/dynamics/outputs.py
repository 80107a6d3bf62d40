"""The derived outputs of a state (axle-box motion, wheel forces Y and Q, per-point
Y/Q and wear) and the output record of one step."""

import math

from numba import njit

from ..layout import (
    C_ACTIVE, C_CREEP_LAT, C_CREEP_LONG, C_ETA, C_FX, C_FY, C_FZ, C_XI,
    D_BOX_POS, D_BOX_VEL, D_PQ, D_PY, D_PYQ, D_Q, D_WEAR, D_WHEEL_RAIL, D_Y, D_YQ,
    MAX_POINTS, N_CONTACT, N_DERIVED, N_STATE, O_GAP_LEFT, O_LIFT_LEFT, REC_CONTACT, REC_COUNT,
    REC_DERIVED, REC_LIFT, REC_LIFT_HEIGHT, REC_STATE, REC_WEAR, S_ROLL, S_ROLL_RATE, S_VX, S_VY, S_VZ, S_X,
    S_Y, S_YAW, S_YAW_RATE, S_Z,
)


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


def record_index_of_contact(side: int, point: int, column: int) -> int:
    """Index in the output record of contact column C_* of point `point` of wheel `side`."""
    return REC_CONTACT + (side * MAX_POINTS + point) * N_CONTACT + column


@njit(cache=True, error_model="numpy", _nrt=False)
def fill_record(state, results, box_semi_spacing, derived, record):
    """The output record (entries from REC_STATE on) at the current state and its
    ContactResults; `derived` (N_DERIVED,) is scratch for `derived_outputs`."""
    contact = results.contact
    summary = results.summary
    derived_outputs(state, contact, box_semi_spacing, derived)
    for j in range(N_STATE):
        record[REC_STATE + j] = state[j]
    for j in range(N_DERIVED):
        record[REC_DERIVED + j] = derived[j]
    k = REC_CONTACT
    for side in range(2):
        count = 0
        for i in range(contact.shape[1]):
            active = contact[side, i, C_ACTIVE] > 0.5
            if active:
                count += 1
            for f in range(N_CONTACT):
                record[k] = contact[side, i, f] if active else 0.0
                k += 1
        record[REC_COUNT + side] = count
        lifted = summary[O_LIFT_LEFT + side] > 0.5
        record[REC_LIFT + side] = 1.0 if lifted else 0.0
        gap = summary[O_GAP_LEFT + side]
        # (a wheel not over its rail at all, or a gap not found: 1 m, the output's cap)
        record[REC_LIFT_HEIGHT + side] = min(gap, 1.0) if lifted and gap > 0.0 else 0.0
        wear = 0.0                     # the wheel's T gamma: sum over its points
        for i in range(contact.shape[1]):
            wear += derived[D_WEAR + side * contact.shape[1] + i]
        record[REC_WEAR + side] = wear
