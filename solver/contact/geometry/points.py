"""The contact search from Python: contact points at a pose and the static contact."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...layout import (
    MAX_POINTS, P_GAP, P_RADIUS, P_RAIL_SLOPE, P_RAIL_Z2, P_S_WHEEL, P_TAN_CONTACT, P_U_RAIL,
    P_WHEEL_F2, P_WHEEL_SLOPE, P_X, P_Y, P_Z,
)
from .search import wheelset_contact_kernel
from .setup import ContactSetup, GeometryError, WheelsetPose


# ---------------------------------------------------------------------------
# Python API
# ---------------------------------------------------------------------------

@dataclass
class ContactPoints:
    """Contact points of both wheels; arrays are (2, MAX_POINTS), side 0 = left.

    Inactive slots hold zeros. Positions are in the track frame (m);
    `contact_angle` per CONVENTIONS.md (positive pushes the wheel towards the
    track centre); `gap` vertical, negative = penetration.
    """

    count: np.ndarray                 # (2,) number of points per wheel
    y_wheel: np.ndarray               # lateral coordinate on the wheel profile s (m)
    y_rail: np.ndarray                # lateral coordinate on the rail profile u (m)
    position: np.ndarray              # (2, MAX_POINTS, 3) x, y, z in the track frame (m)
    contact_angle: np.ndarray         # rad
    rolling_radius: np.ndarray        # m
    gap: np.ndarray                   # m
    wheel_curvature_lateral: np.ndarray   # 1/m, convex > 0
    rail_curvature_lateral: np.ndarray    # 1/m, convex > 0
    wheel_curvature_rolling: np.ndarray   # 1/m: cos(gamma)/r

    @property
    def active(self) -> np.ndarray:
        idx = np.arange(MAX_POINTS)[None, :]
        return idx < self.count[:, None]

    @property
    def longitudinal_offset(self) -> np.ndarray:
        return self.position[..., 0]


def points_from_kernel(out: np.ndarray, counts: np.ndarray) -> ContactPoints:
    """Convert the kernel's (2, MAX_POINTS, N_POINT_FIELDS) output to ContactPoints."""
    active = np.arange(MAX_POINTS)[None, :] < counts[:, None]
    o = np.where(active[..., None], out, 0.0)
    wheel_slope = o[..., P_WHEEL_SLOPE]
    gamma = np.arctan(-wheel_slope)
    radius = o[..., P_RADIUS]
    with np.errstate(divide="ignore", invalid="ignore"):
        rolling_curv = np.where(active, np.cos(gamma) / np.where(radius > 0, radius, 1.0), 0.0)
    wheel_k = -o[..., P_WHEEL_F2] / (1.0 + wheel_slope ** 2) ** 1.5
    rail_slope = o[..., P_RAIL_SLOPE]
    rail_k = -o[..., P_RAIL_Z2] / (1.0 + rail_slope ** 2) ** 1.5
    position = np.stack([o[..., P_X], o[..., P_Y], o[..., P_Z]], axis=-1)
    return ContactPoints(
        count=counts.astype(int).copy(),
        y_wheel=o[..., P_S_WHEEL].copy(),
        y_rail=o[..., P_U_RAIL].copy(),
        position=position,
        contact_angle=np.where(active, np.arctan(o[..., P_TAN_CONTACT]), 0.0),
        rolling_radius=radius.copy(),
        gap=o[..., P_GAP].copy(),
        wheel_curvature_lateral=np.where(active, wheel_k, 0.0),
        rail_curvature_lateral=np.where(active, rail_k, 0.0),
        wheel_curvature_rolling=rolling_curv,
    )


def check_pose(**values):
    for name, value in values.items():
        if not np.all(np.isfinite(value)):
            raise GeometryError(f"{name} must be finite, got {value!r}")


def rail_motion_array(rail_motion) -> np.ndarray:
    if rail_motion is None:
        return np.zeros((2, 3))
    arr = np.asarray(rail_motion, dtype=float).reshape(2, 3)
    check_pose(rail_motion=arr)
    return np.ascontiguousarray(arr)


def contact_points(setup: ContactSetup, y: float, z: float, roll: float, yaw: float = 0.0,
                   rail_motion=None, epsilon: float = 0.0) -> ContactPoints:
    """Contact points for a given pose (penetration-based: the gaps may be negative).

    y, z: lateral and vertical position of the wheelset centre (m), roll, yaw
    (rad); rail_motion (2, 3): lateral, vertical (m) and roll (rad) of the left
    and right rail. epsilon: multipoint tolerance on the distance (m).
    """
    check_pose(y=y, z=z, roll=roll, yaw=yaw, epsilon=epsilon)
    if abs(yaw) > 0.2 or abs(roll) > 0.2:
        raise GeometryError(f"pose out of range: roll {roll!r} rad, yaw {yaw!r} rad (|.| <= 0.2)")
    motion = rail_motion_array(rail_motion)
    buffers = setup.buffers()
    wheelset_contact_kernel(setup.tables, WheelsetPose(float(y), float(z), float(roll), float(yaw)),
                            motion, float(epsilon), buffers)
    return points_from_kernel(buffers.points, buffers.counts)


@dataclass
class StaticContact:
    """Rigid contact: the wheelset resting on both rails with zero penetration."""

    y: float
    yaw: float
    z: float
    roll: float
    points: ContactPoints

    @property
    def rolling_radius_difference(self) -> float:
        """r_left - r_right at the principal (deepest) contact points (m)."""
        return float(self.points.rolling_radius[0, 0] - self.points.rolling_radius[1, 0])

    @property
    def contact_angle_difference(self) -> float:
        """contact angle left - right at the principal contact points (rad)."""
        return float(self.points.contact_angle[0, 0] - self.points.contact_angle[1, 0])


def _min_gaps(setup, pose, motion, buffers):
    wheelset_contact_kernel(setup.tables, pose, motion, 0.0, buffers)
    out, counts = buffers.points, buffers.counts
    y = pose.y
    if counts[0] == 0 or counts[1] == 0:
        raise GeometryError(
            f"wheel not over the rail at y = {y * 1e3:.2f} mm: the wheelset has left the track")
    return out[0, 0, P_GAP], out[1, 0, P_GAP], out[0, 0, P_Y], out[1, 0, P_Y]


def static_contact(setup: ContactSetup, y: float, yaw: float = 0.0, rail_motion=None,
                   epsilon: float = 1e-4, tolerance: float = 1e-10,
                   max_iterations: int = 50) -> StaticContact:
    """Rigid contact: the vertical position and roll angle that put both wheels on the rails.

    Solves min gap(left) = min gap(right) = 0 for (z, roll) by Newton's method
    (dgap/dz = 1 exactly; dgap/droll from the contact arm, refined by a secant).
    `epsilon` (m, default 0.1 mm) is the multipoint tolerance of the static
    analysis: minima within it of the deepest count as contact (an estimate of
    the difference of elastic compressions, Ren & Jin 2010).
    """
    check_pose(y=y, yaw=yaw)
    motion = rail_motion_array(rail_motion)
    buffers = setup.buffers()
    z = setup.nominal_radius
    roll = 0.0
    y = float(y)
    yaw = float(yaw)
    converged = False
    for _ in range(max_iterations):
        gl, gr, yl, yr = _min_gaps(setup, WheelsetPose(y, z, roll, yaw), motion, buffers)
        if abs(gl) < tolerance and abs(gr) < tolerance:
            converged = True
            break
        # d gap / d roll: rotation about x raises the left contact by (Y - y),
        # lowers the right by (y - Y_right); finite difference for the profile terms.
        h = 1e-6
        gl2, gr2, _, _ = _min_gaps(setup, WheelsetPose(y, z, roll + h, yaw), motion, buffers)
        jl = (gl2 - gl) / h
        jr = (gr2 - gr) / h
        det = jr - jl
        if abs(det) < 1e-9:
            det = -(yl - yr)
        # Solve [1 jl; 1 jr] [dz; droll] = [-gl; -gr]
        droll = (-gr + gl) / det
        dz = -gl - jl * droll
        droll = float(np.clip(droll, -0.01, 0.01))
        z += dz
        roll += droll
    if not converged:
        raise GeometryError(f"rigid contact did not converge at y = {y * 1e3:.3f} mm")
    wheelset_contact_kernel(setup.tables, WheelsetPose(y, z, roll, yaw), motion, float(epsilon), buffers)
    return StaticContact(y=y, yaw=yaw, z=z, roll=roll,
                         points=points_from_kernel(buffers.points, buffers.counts))
