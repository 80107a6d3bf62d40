"""The loads of the wheels on the rail axes from the wheelset FMU's outputs:
the resultant lateral and vertical force of each wheel on its rail and the
torque of its contact points about the rail axis."""
from __future__ import annotations

import math
import os
from typing import Mapping

import numpy as np
from numba import njit

from .fe_model import RailLoad
from .options import CosimError
from .parameters import SIDES
from fmu_wheelset.fmu.interface import POINTS_PER_WHEEL


POINTS = POINTS_PER_WHEEL      # contact points per wheel of the FMU's outputs


def load_index(index: Mapping[str, int]) -> np.ndarray:
    """(2 sides, 8) int: the output indices of the resultant lateral and
    vertical force then, for the contact points, normal force, lateral creep
    force, contact angle, rail lateral coordinate, position.z of point 1, and
    the offset between two points' blocks (for rail_load_kernel)."""
    rows = []
    for side in SIDES:
        pre = f"contact.{side}.point[1]."
        nxt = f"contact.{side}.point[2].normal_force"
        rows.append([index[f"wheel.{side}.force_on_rail.y"], index[f"wheel.{side}.force_on_rail.z"],
                     index[pre + "normal_force"], index[pre + "lateral_force"],
                     index[pre + "contact_angle"], index[pre + "rail_lateral"],
                     index[pre + "position.z"], index[nxt] - index[pre + "normal_force"]])
    for s, side in enumerate(SIDES):      # the kernel walks the points by a fixed stride
        for k in range(1, POINTS + 1):
            pre = f"contact.{side}.point[{k}]."
            for c, what in enumerate(("normal_force", "lateral_force", "contact_angle",
                                      "rail_lateral", "position.z")):
                if index[pre + what] != rows[s][2 + c] + (k - 1) * rows[s][7]:
                    raise CosimError(f"the outputs of {pre}* are not laid out by a fixed stride")
    return np.array(rows, dtype=np.int64)


@njit(cache=True)
def rail_load_kernel(out, index, crown_above_centroid, no_torque, loads):
    """loads (2, 3): lateral, vertical force of each wheel on its rail and the
    torque of its contact points about the rail axis (see rail_loads)."""
    for s in range(2):
        sign = 1.0 if s == 0 else -1.0
        torque = 0.0
        for k in range(POINTS):
            o = k * index[s, 7]
            normal = out[index[s, 2] + o]
            if normal <= 0.0:
                continue
            lateral_creep = out[index[s, 3] + o]
            delta = out[index[s, 4] + o]
            cd, sd = math.cos(delta), math.sin(delta)
            # force of the rail on the wheel: N n + T2 t2, n = (0, -sign sd, cd),
            # t2 = n x t1 = (0, cd, sign sd) (docs/CONVENTIONS.md, solver.model.wheelset)
            fy = -(-sign * sd * normal + cd * lateral_creep)      # of the wheel on the rail
            fz = -(cd * normal + sign * sd * lateral_creep)
            y_offset = sign * out[index[s, 5] + o]                # field side = +y on the left
            z_offset = out[index[s, 6] + o] + crown_above_centroid
            torque += y_offset * fz - z_offset * fy
        loads[s, 0] = out[index[s, 0]]
        loads[s, 1] = out[index[s, 1]]
        loads[s, 2] = 0.0 if no_torque else torque


def rail_load_array(out: np.ndarray, index: np.ndarray, crown_above_centroid: float) -> np.ndarray:
    """(2, 3) array of rail_loads (index = load_index(...))."""
    loads = np.empty((2, 3))
    rail_load_kernel(out, index, crown_above_centroid, bool(os.environ.get("COSIM_NO_TORQUE")),
                     loads)
    return loads


def rail_loads(out: np.ndarray, index: Mapping[str, int], crown_above_centroid: float):
    """[RailLoad left, RailLoad right] from one FMU output vector: resultant
    lateral/vertical force of the wheel on the rail and the torque M_x of the
    contact points about the rail axis (environment COSIM_NO_TORQUE set: no
    torque, a diagnostic)."""
    loads = rail_load_array(out, load_index(index), crown_above_centroid)
    return [RailLoad(lateral=f[0], vertical=f[1], torque=f[2]) for f in loads]
