"""What a vehicle run gives: the time histories every `record_every` steps
(VehicleResult, with the bogies' lateral forces from them) and the per-wheel
results from the outputs the FMUs recorded (wheel_results)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .fmu_wheelsets import POINTS
from .parameters import VehicleError


@dataclass
class VehicleResult:
    """Time histories every `record_every` steps. Wheelset index 0..3 from the
    front, side 0 left, 1 right."""
    time: np.ndarray               # (n,) s
    distance: np.ndarray           # (n,) distance of the leading wheelset along the track (m)
    lateral: np.ndarray            # (n, 4) wheelset y (m)
    yaw: np.ndarray                # (n, 4) wheelset yaw (rad)
    wheel_load: np.ndarray         # (n, 4, 2) Q (N)
    lateral_force: np.ndarray      # (n, 4, 2) Y (N, + towards the field side)
    derailment_quotient: np.ndarray  # (n, 4, 2) Y/Q
    force_on_rail_y: np.ndarray    # (n, 4, 2) y force of the wheel on its rail (N, +y)
    wear_number: np.ndarray        # (n, 4, 2) sum over the points |Fx xi| + |Fy eta| (N)
    bodies: np.ndarray             # (n, 18) carbody and bogie coordinates
    box_force: np.ndarray          # (n, 4, 6) axle-box forces sent to the FMUs (N)
    curvature: np.ndarray          # (n, 4) at the wheelsets (1/m)
    cant_angle: np.ndarray         # (n, 4) at the wheelsets (rad)
    speed: float
    step: float
    coupling: str
    wall_time: float
    steps: int
    mean: dict = field(default_factory=dict)   # wheel_results averaged over mean_window
    mean_window: tuple | None = None           # (from, to) s

    @property
    def real_time_factor(self) -> float:
        return self.steps * self.step / max(self.wall_time, 1e-12)

    def bogie_lateral_force(self) -> np.ndarray:
        """(n, 2) sum of the lateral forces of the rails on the wheels of each
        bogie (N, +y): minus the wheels' forces on the rails."""
        f = -self.force_on_rail_y.sum(axis=2)
        return np.stack([f[:, 0] + f[:, 1], f[:, 2] + f[:, 3]], axis=1)

    def mean_bogie_lateral_force(self, from_momentum: bool = False) -> np.ndarray:
        """(2,) `bogie_lateral_force` averaged over mean_window (N): the mean of
        the FMUs' force outputs at every communication point, or
        (from_momentum) the exact time mean from the wheelsets' momentum balance
        (sampled outputs alias the fast contact oscillations of flange contact)."""
        if not self.mean:
            raise VehicleError("run(..., average_from=...) to average over a window")
        f = self.mean["contact_force_y"] if from_momentum else -self.mean["force_on_rail_y"].sum(axis=1)
        return np.array([f[0] + f[1], f[2] + f[3]])


def wheel_results(recorded: np.ndarray) -> dict:
    """Per-wheelset and per-wheel results from the recorded outputs (4, RECORD_NAMES):
    lateral, yaw (4,); wheel_load, lateral_force, derailment_quotient,
    force_on_rail_y, wear_number (4, 2) (wear: sum over the contact slots of
    |Fx xi| + |Fy eta|, N)."""
    r = recorded
    per_side = r[:, 2:2 + 8].reshape(-1, 2, 4)          # side, (Q, Y, Y/Q, force_on_rail.y)
    points = r[:, 10:].reshape(-1, 2, POINTS, 4)         # side, point, (Fx, xi, Fy, eta)
    wear = (np.abs(points[..., 0] * points[..., 1]) + np.abs(points[..., 2] * points[..., 3])).sum(axis=2)
    return {"lateral": r[:, 0], "yaw": r[:, 1], "wheel_load": per_side[..., 0],
            "lateral_force": per_side[..., 1], "derailment_quotient": per_side[..., 2],
            "force_on_rail_y": per_side[..., 3], "wear_number": wear}
