"""The built-in suspension of stand-alone runs (`WheelsetParameters.bogie`):
the loads of a quarter vehicle on the wheelset.

A wheelset under a vehicle carries its share of the vehicle (the suspended
mass m_s: here a share m_c of the carbody, on the secondary suspension, and
a share m_f = m_s - m_c of the bogie frame) through its primary suspension, one
spring-damper per axle box at +-b (axle_box_semi_spacing) along the axle.
Stand-alone, the frame above the boxes is one of two:

- the frame that follows the wheelset laterally (the default; the quarter
  vehicle): the frame and the carbody ride on the wheelset, so in a curve the
  wheelset carries their uncompensated lateral force and their roll moment to
  the rails, as a wheelset under a vehicle does. This is the quasi-static
  equivalent of the frame's lateral freedom: a frame whose mass is counted in
  m_s and that hangs on this wheelset's primary lateral springs alone
  transmits exactly the suspended mass's lateral load, whatever the springs'
  stiffness; the primary lateral stiffness and damping (M_KY, M_CY) therefore
  do not act. The longitudinal springs tie the boxes to a frame that runs along
  the track centreline and turns with it (the primary yaw stiffness 2 kx b^2
  against the bogie frame), the vertical ones to the frame's rest height (the
  bounce of the suspended mass, its weight a constant load); the roll couple
  of the vertical springs is the quasi-static roll moment below (the frame
  rolls until its springs carry it).
- the frame on the track centreline (M_FRAME_ON_CENTRELINE = 1): every spring
  and damper of the boxes to a frame that runs along the centreline without
  lateral freedom, Wickens' (1965) "single suspended wheelset" of the
  stability studies; the suspended mass adds its weight and uncompensated
  lateral force at the boxes, no roll moment. In a curve the frame then takes
  the curving force through the lateral springs (ky |y| per box), which a
  vehicle's frame does not: a straight-track model.

The quarter vehicle's loads, quasi-static (the track's curvature kappa and
cant angle phi_t where the wheelset is; speed V; z the axle's height):

  A = V^2 kappa cos(phi_t) + g sin(phi_t)     uncompensated lateral acceleration
  G = g cos(phi_t) - V^2 kappa sin(phi_t)     acceleration normal to the track

Each part i (carbody share m_c at the height h_c, frame share m_f at h_f, both
above the rail; d_i = h_i - z above the axle) loads the wheelset with -m_i A
laterally and -m_i G vertically at its centre of gravity, which moves
sideways as the suspension deflects under the lateral loads (angles and
offsets + towards +y at the top):

  the carbody on the secondary (height h2; per wheelset roll stiffness k_r2
  about h2, lateral stiffness k_y2; 0 = rigid): a lateral shift
  s2 = -m_c A / k_y2 and a roll phi_2, l2 = h_c - h2;
  both parts on the primary (roll stiffness k_r1 = 2 kz b^2 about the axle):
  a roll phi_1;
  (k_r2 - m_c G l2) phi_2 - m_c G l2 phi_1 = -m_c A l2
  -m_c G l2 phi_2 + (k_r1 - G sum m_i d_i) phi_1 = -A sum m_i d_i + m_c G s2
  e_c = s2 + d_c phi_1 + l2 phi_2,  e_f = d_f phi_1

and the roll moment on the wheelset about its centre is
M_x = sum_i m_i (A d_i - G e_i): the centrifugal force above the axle and the
weights' outward shift load the outer wheel. The carbody's lateral shift on
the secondary (a flexicoil's shear) counts as much as its roll: a vehicle
whose springs carried their vertical load from the carbody's end of the
sheared spring to the frame's unchanged would lose m_c G e (docs/running.md
compares the quarter vehicle with the four-wheelset vehicle of cosim/vehicle
on the same curve).
"""

import math

from numba import njit

from ..layout import (
    M_BOX_SEMI_SPACING, M_BOX_Z_REF, M_CARBODY_CG_HEIGHT, M_CARBODY_SHARE, M_CX, M_CY, M_CZ,
    M_FRAME_CG_HEIGHT, M_FRAME_ON_CENTRELINE, M_KX, M_KY, M_KZ, M_SECONDARY_HEIGHT,
    M_SECONDARY_LATERAL_STIFFNESS, M_SECONDARY_ROLL_STIFFNESS, M_SUSPENDED_MASS, S_ROLL,
    S_ROLL_RATE, S_VX, S_VY, S_VZ, S_X, S_Y, S_YAW, S_YAW_RATE, S_Z,
)


@njit(cache=True, error_model="numpy", _nrt=False)
def quarter_vehicle_roll(model, lateral_acceleration, normal_acceleration, axle_height):
    """(M_x, e_c, e_f): the quasi-static roll moment (N m, about +x) of the
    quarter vehicle on the wheelset and the lateral offsets (m, + left) of the
    carbody's and the frame's centres of gravity from above the wheelset
    centre, under the uncompensated lateral acceleration A and the normal
    acceleration G (m/s^2; module docstring)."""
    total = model[M_SUSPENDED_MASS]
    carbody = total * model[M_CARBODY_SHARE]
    frame = total - carbody
    d_c = model[M_CARBODY_CG_HEIGHT] - axle_height
    d_f = model[M_FRAME_CG_HEIGHT] - axle_height
    a = lateral_acceleration
    g = normal_acceleration
    k_lateral = model[M_SECONDARY_LATERAL_STIFFNESS]
    shift = -carbody * a / k_lateral if k_lateral > 0.0 else 0.0
    k_roll2 = model[M_SECONDARY_ROLL_STIFFNESS]
    l2 = model[M_CARBODY_CG_HEIGHT] - model[M_SECONDARY_HEIGHT]
    b = model[M_BOX_SEMI_SPACING]
    k_roll1 = 2.0 * model[M_KZ] * b * b
    lever = carbody * d_c + frame * d_f
    # the two rolls (module docstring); a stiffness of 0 is a rigid joint
    a11 = k_roll2 - carbody * g * l2
    a12 = -carbody * g * l2
    b1 = -carbody * a * l2
    a22 = k_roll1 - g * lever
    b2 = -a * lever + carbody * g * shift
    roll1 = 0.0
    roll2 = 0.0
    if k_roll2 > 0.0 and k_roll1 > 0.0:
        det = a11 * a22 - a12 * a12
        roll2 = (b1 * a22 - a12 * b2) / det
        roll1 = (a11 * b2 - a12 * b1) / det
    elif k_roll2 > 0.0:
        roll2 = b1 / a11
    elif k_roll1 > 0.0:
        roll1 = b2 / a22
    e_c = shift + d_c * roll1 + l2 * roll2
    e_f = d_f * roll1
    moment = a * lever - g * (carbody * e_c + frame * e_f)
    return moment, e_c, e_f


@njit(cache=True, error_model="numpy", _nrt=False)
def builtin_suspension_loads(state, model, speed, gravity, curvature, cant):
    """(fx, fy, fz, mx, my, mz): the force (N) and the moment about the wheelset
    centre (N m) of the built-in suspension on the wheelset, track frame, at the
    state `state` (S_*) and the track point (`curvature` 1/m, + left; `cant` the
    cant angle, rad): the axle boxes' springs and dampers and the suspended
    mass's loads (module docstring)."""
    y = state[S_Y]
    z = state[S_Z]
    roll = state[S_ROLL]
    yaw = state[S_YAW]
    vx = state[S_VX]
    vy = state[S_VY]
    vz = state[S_VZ]
    roll_rate = state[S_ROLL_RATE]
    yaw_rate = state[S_YAW_RATE]
    ex = -math.sin(yaw) * math.cos(roll)       # the axle's direction
    ey = math.cos(yaw) * math.cos(roll)
    ez = math.sin(roll)
    b = model[M_BOX_SEMI_SPACING]
    on_centreline = model[M_FRAME_ON_CENTRELINE] > 0.5
    suspended = model[M_SUSPENDED_MASS]
    lateral_acceleration = speed * speed * curvature * math.cos(cant) + gravity * math.sin(cant)
    normal_acceleration = gravity * math.cos(cant) - speed * speed * curvature * math.sin(cant)
    fx = fy = mx = my = mz = 0.0
    fz_left = fz_right = 0.0
    for side in range(2):
        sign = 1.0 if side == 0 else -1.0
        rbx = sign * b * ex
        rby = sign * b * ey
        rbz = sign * b * ez
        # box velocity = v_C + omega_body x r_b (the body's roll and yaw rates)
        vbx = vx - yaw_rate * rby
        vby = vy + yaw_rate * rbx
        vbz = vz + roll_rate * rby
        fbx = -model[M_KX] * (state[S_X] + rbx) - model[M_CX] * vbx
        fby = -0.5 * suspended * lateral_acceleration
        fbz = (-model[M_KZ] * (z + rbz - model[M_BOX_Z_REF]) - model[M_CZ] * vbz
               - 0.5 * suspended * normal_acceleration)
        if on_centreline:
            fby += -model[M_KY] * (y + rby - sign * b) - model[M_CY] * vby
        if side == 0:
            fz_left = fbz
        else:
            fz_right = fbz
        fx += fbx
        fy += fby
        mx += rby * fbz - rbz * fby
        my += rbz * fbx - rbx * fbz
        mz += rbx * fby - rby * fbx
    fz = fz_left + fz_right
    if not on_centreline:
        # the frame rolls with the suspended mass: the vertical springs' roll couple
        # on the wheelset is the quasi-static roll moment, not the wheelset's own
        # roll against a level frame
        left_minus_right = fz_left - fz_right
        mx -= b * ey * left_minus_right
        my += b * ex * left_minus_right
        moment, _, _ = quarter_vehicle_roll(model, lateral_acceleration, normal_acceleration, z)
        mx += moment
    return fx, fy, fz, mx, my, mz
