"""The master's mechanical model (VehicleModel, linear, 38 DOF): the carbody
and the two bogie frames (6 DOF each) and an interface model of each of the
four wheelsets (5 DOF), joined by the primary and secondary suspensions as
spring-damper elements.

Reference geometry and static equilibrium
-----------------------------------------
All body coordinates are displacements relative to the body's nominal
position in its own local track frame (at its position along the track). The
springs carry their static loads at zero displacement (the vertical preloads
carbody/4 per secondary spring, (carbody/2 + bogie)/4 per axle box: a
symmetric vehicle is statically determinate), and each FMU is initialised with
the static axle-box forces as its inputs (the FMU finds its static equilibrium
under the inputs set before fmi2ExitInitializationMode), so at t = 0 every
body is in equilibrium: no load step. Between bodies at different positions
along a curve, the relative displacement of a suspension element includes the
track's own geometry (heading difference, lateral offset of the curved
centreline, cant difference; linearised, exact for constant curvature), and
the geometric stiffness of the vertical preloads in roll and pitch (the static
forces stay vertical while the bodies rotate).
Inertial loads of each body in its track frame: lateral -m (V^2 k cos c + g sin c),
vertical -m (g cos c - V^2 k sin c) (k curvature, c cant angle, as in the
wheelset core), yaw -J_z V^2 dk/ds. The roll acceleration of the track frame
at the ends of a cant transition (a second derivative of the cant) is left out.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .curve_layout import CurveLayout
from .parameters import GRAVITY, SIDES, VehicleParameters


BODY_DOFS = ("x", "y", "z", "roll", "pitch", "yaw")
WHEELSET_DOFS = ("x", "y", "z", "roll", "yaw")
N_BODY, N_WHEELSET = 6, 5
CARBODY = 0
BOGIES = (6, 12)
WHEELSETS = (18, 23, 28, 33)
N_DOF = 38


def _point_matrix(offset, wheelset=False):
    """Displacement (3) of a body-fixed point at `offset` (dx, dy, dz from the
    centre of mass) per body DOF (small rotations: u = t + rotation x offset)."""
    dx, dy, dz = offset
    if wheelset:   # x y z roll yaw (the spin angle does not move the boxes)
        return np.array([[1, 0, 0, 0, -dy], [0, 1, 0, -dz, dx], [0, 0, 1, dy, 0]], dtype=float)
    return np.array([[1, 0, 0, 0, dz, -dy], [0, 1, 0, -dz, 0, dx], [0, 0, 1, dy, -dx, 0]],
                    dtype=float)


@dataclass
class Element:
    """A linear spring-damper triple between a point of body A and a point of
    body B (forces along the track axes). `preload` = its static force on A."""
    name: str
    body_a: int          # first DOF index of A
    offset_a: tuple      # point on A from A's centre of mass (m)
    body_b: int
    offset_b: tuple
    stiffness: np.ndarray
    damping: np.ndarray
    preload: np.ndarray
    position_a: float    # longitudinal position of A's centre in the vehicle (m, + forward)
    position_b: float
    height: float        # height of the connection point above the rail (m)


class VehicleModel:
    """Mass, damping and stiffness of the 38-DOF model (carbody and bogie frames
    6 DOF each, the four wheelset interface models 5 DOF each) and the element
    layout. Body order: carbody, leading bogie, trailing bogie, wheelsets 1-4
    from the front."""

    def __init__(self, p: VehicleParameters):
        p.validate()
        self.p = p
        a, l, r0 = p.bogie_semi_spacing, p.semi_wheelbase, p.wheel_radius
        self.body_positions = {CARBODY: 0.0, BOGIES[0]: a, BOGIES[1]: -a,
                               WHEELSETS[0]: a + l, WHEELSETS[1]: a - l,
                               WHEELSETS[2]: -a + l, WHEELSETS[3]: -a - l}
        self.wheelset_positions = np.array([a + l, a - l, -a + l, -a - l])
        m = np.zeros(N_DOF)
        m[0:6] = [p.carbody_mass] * 3 + list(p.carbody_inertia)
        for b in BOGIES:
            m[b:b + 6] = [p.bogie_mass] * 3 + list(p.bogie_inertia)
        jx, jy, jz = p.wheelset_inertia
        self.rolling_mass = p.wheelset_mass + jy / r0 ** 2
        for w in WHEELSETS:
            m[w:w + 5] = [self.rolling_mass, p.wheelset_mass, p.wheelset_mass, jx, jz]
        self.mass = m
        g = GRAVITY
        elements = []
        sec_load = p.carbody_mass * g / 4
        prim_load = (p.carbody_mass / 2 + p.bogie_mass) * g / 4
        hs, hb, hc = p.secondary_height, p.bogie_height, p.carbody_height
        for k, b in enumerate(BOGIES):
            xb = self.body_positions[b]
            for side, sign in zip(SIDES, (1.0, -1.0)):
                ys = sign * p.secondary_semi_spacing
                elements.append(Element(
                    f"secondary {k + 1} {side}", CARBODY, (xb, ys, hs - hc), b, (0.0, ys, hs - hb),
                    np.array(p.secondary_stiffness, float), np.array(p.secondary_damping, float),
                    np.array([0.0, 0.0, sec_load]), 0.0, xb, hs))
        for j, w in enumerate(WHEELSETS):
            b = BOGIES[j // 2]
            dxw = self.body_positions[w] - self.body_positions[b]
            for side, sign in zip(SIDES, (1.0, -1.0)):
                yp = sign * p.primary_semi_spacing
                elements.append(Element(
                    f"primary {j + 1} {side}", b, (dxw, yp, r0 - hb), w, (0.0, yp, 0.0),
                    np.array(p.primary_stiffness, float), np.array(p.primary_damping, float),
                    np.array([0.0, 0.0, prim_load]), self.body_positions[b],
                    self.body_positions[w], r0))
        self.elements = elements
        n_e = len(elements)
        # relative displacement of all elements: delta = D q + g(t)
        D = np.zeros((3 * n_e, N_DOF))
        for e, el in enumerate(elements):
            rows = slice(3 * e, 3 * e + 3)
            ta = _point_matrix(el.offset_a, el.body_a in WHEELSETS)
            tb = _point_matrix(el.offset_b, el.body_b in WHEELSETS)
            D[rows, el.body_a:el.body_a + ta.shape[1]] += ta
            D[rows, el.body_b:el.body_b + tb.shape[1]] -= tb
        self.D = D
        self.k = np.concatenate([el.stiffness for el in elements])
        self.c = np.concatenate([el.damping for el in elements])
        self.preload = np.concatenate([el.preload for el in elements])
        self.K = D.T @ (self.k[:, None] * D)
        self.C = D.T @ (self.c[:, None] * D)
        # geometric stiffness of the preloads: the static forces stay vertical while
        # the bodies roll and pitch, so a preload P at a point dz above the centre
        # of mass adds the moment -P dz (roll, pitch) per radian on A (the load
        # -P on B: +P dz_B); the dx, dy cross terms cancel between symmetric springs
        for el in elements:
            load = el.preload[2]
            for body, dz, sign in ((el.body_a, el.offset_a[2], 1.0), (el.body_b, el.offset_b[2], -1.0)):
                if body in WHEELSETS:
                    self.K[body + 3, body + 3] += sign * load * dz      # roll (no pitch DOF)
                else:
                    self.K[body + 3, body + 3] += sign * load * dz
                    self.K[body + 4, body + 4] += sign * load * dz
        # the couple of a preload across a sheared spring: when the ends of a
        # secondary spring move apart sideways by d (its lateral displacement D q
        # + g, the track's part included), its vertical load P, which the spring
        # carries from the carbody's end, reaches the frame d beside the frame's
        # end: a roll moment -P d on the frame. Without it the carbody's lateral
        # shift on its springs (about 32 mm per 0.64 m/s^2 uncompensated) would
        # not load the outer wheels, and the wheels' roll moments would miss
        # m_carbody g d (tests/test_vehicle.py holds the roll balance).
        # Generalised force -shear_couple (D q + g): stiffness shear_couple D here,
        # the track's part in the master's forcing. The primary springs' shear
        # (about 1 mm) is left out: its couple (~0.1 kN m per wheelset) would
        # have to reach the FMUs as axle-box moments.
        self.shear_couple = np.zeros((N_DOF, 3 * n_e))
        for e, el in enumerate(elements):
            if el.body_b in BOGIES:
                self.shear_couple[el.body_b + 3, 3 * e + 1] = el.preload[2]
        self.K += self.shear_couple @ D
        # the train: a drawbar holds the carbody at the speed V against the rolling
        # and curving resistance (constant-speed runs; no traction on the axles)
        self.K[CARBODY, CARBODY] += p.drawbar_stiffness
        self.C[CARBODY, CARBODY] += p.drawbar_damping
        self.primary_rows = np.arange(3 * 4, 3 * n_e)     # after the 4 secondary elements
        # generalised force of the element forces F (3 n_e, force on A): D^T F
        self.static_force = D.T @ self.preload

    def track_terms(self, layout: CurveLayout, s_centre):
        """g (n_steps, 3 n_e): the track's part of the element displacements for
        the carbody centre at distances s_centre."""
        s_centre = np.asarray(s_centre, dtype=float)
        out = np.zeros((s_centre.size, 3 * len(self.elements)))
        for e, el in enumerate(self.elements):
            s_a = s_centre + el.position_a
            s_b = s_centre + el.position_b
            d_heading, offset, d_cant = layout.frames(s_a, s_b)
            dx_p = el.offset_a[0]          # the point's longitudinal offset in A's frame
            dy = el.offset_a[1]
            out[:, 3 * e] = -d_heading * dy
            out[:, 3 * e + 1] = offset + d_heading * dx_p - d_cant * el.height
            out[:, 3 * e + 2] = d_cant * dy
        return out
