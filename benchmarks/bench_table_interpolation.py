"""What an interpolating contact table would cost in accuracy.

The table of solver/contact/geometry/table.py interpolates only WHERE the minima of the
distance function lie and re-locates each point with the online arithmetic, so
its points are the online ones (zero table error) but it saves little time over
the tracked online search. The commercial codes' tables interpolate the contact
quantities themselves. This benchmark measures what that would give on the
wheel/rail pairs of the project, before anyone builds it: the error of
interpolating the contact point's position on the wheel profile (s) and the
wheel-rail distance at the minimum (gap) between table nodes, against the required
bound for a table (position within 0.01 mm; rolling radius and contact angle
within 0.1 %, which follow from the position on the wheel profile).

How. The table's own build kernel (geometry_table._build_kernel, exact online
minima) is run on a fine lateral grid (5 um) at fixed roll and yaw relative to
the rail: each relevant minimum is one branch. For a node spacing H, every cell
whose fine samples all hold the same branches (the cells an interpolating table
could interpolate; the others would need the exact path anyway) is interpolated
linearly (the commercial practice) and by the cubic through the four nearest
nodes (Lagrange, where the four agree), and the largest differences from the
fine samples are printed, with the share of cells within the bound and the size
a 3-D table (lateral x roll x yaw, the grid of geometry_table.TableGrid in roll
and yaw) would need at that lateral spacing. Lateral interpolation alone is a
lower bound of a 3-D table's error (roll and yaw add their own).

Then, on the Ren & Jin scenario in its curve (t = 9 s, the outer wheel in
two-point flange contact), the linear interpolation's error in the cells at the
outer wheel's lateral position, and what the gap error means for the normal
force there (Hertz: N ~ penetration^1.5, so dN/N = 1.5 d(gap)/penetration).

Measured figures only, no pass/fail.

Run: PYTHONPATH=. python benchmarks/bench_table_interpolation.py
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from solver.contact.geometry.setup import ContactSetup, RailPose, WheelsetPose  # noqa: E402
from solver.layout import N_WORK_ROWS  # noqa: E402
from solver.contact.geometry.table import (
    MAX_BRANCHES, TableGrid, _build_kernel, _relative_pose, table_origin,
)  # noqa: E402
from solver.layout import N_BRANCH_FIELDS  # noqa: E402
from solver.layout import C_ACTIVE, C_PENETRATION, S_ROLL, S_Y, S_YAW, S_Z  # noqa: E402
from solver.scenarios import load_scenario  # noqa: E402
from solver.model.wheelset import WheelsetModel  # noqa: E402

FINE_STEP = 5e-6                    # m: the reference samples
LATERAL_RANGE = 0.012               # m: +-12 mm, tread to flange contact
SPACINGS = (2e-4, 1e-4, 5e-5, 2e-5)  # m: 0.2 mm is geometry_table.TableGrid's lateral step
SLICES = ((0.0, 0.0), (5e-3, 0.0), (0.0, 6e-3), (-5e-3, -6e-3))   # (roll, yaw) relative to the rail, rad
POSITION_BOUND = 1e-5               # m: the required 0.01 mm on the contact position
FIELDS_PER_BRANCH = 8               # s, u, gap, x, y, z and the intermediate maximum, + 1: what
                                    # an interpolating table would hold per branch and node
PAIRS = {
    # Ren & Jin (2010): the R400 scenario's pair (solver/scenarios.py)
    "LMA-worn / CHN60": dict(wheel="LMA-worn", rail="CHN60", inclination_ratio=40, gauge=1.435,
                             back_to_back=1.353, nominal_radius=0.43),
    "S1002 / UIC60": dict(wheel="S1002", rail="UIC60", inclination_ratio=40),
}


def branches_on_fine_grid(setup, roll, yaw):
    """(lateral offsets, counts (n,), nodes (n, MAX_BRANCHES, 3)) of the table build on
    the fine lateral grid at one roll and yaw."""
    lat0, zeta_ref = table_origin(setup)
    n = int(round(LATERAL_RANGE / FINE_STEP))
    offsets = np.linspace(-n * FINE_STEP, n * FINE_STEP, 2 * n + 1)
    counts = np.zeros((offsets.size, 1, 1), dtype=np.int64)
    nodes = np.full((offsets.size, 1, 1, MAX_BRANCHES, N_BRANCH_FIELDS), np.nan)
    work = np.empty((N_WORK_ROWS, setup.wheel_table.shape[0]))
    _build_kernel(setup.tables, lat0 + offsets, np.array([roll]), np.array([yaw]), zeta_ref, work,
                     counts, nodes)
    return offsets, counts[:, 0, 0], nodes[:, 0, 0]


def cell_branches(counts, i0, i1):
    """The number of branches the fine samples i0..i1 all hold (0: none, or not the
    same throughout: a minimum born or lost inside, no interpolation there)."""
    n_b = counts[i0]
    return n_b if n_b > 0 and np.all(counts[i0:i1 + 1] == n_b) else 0


def linear_cell_error(nodes, i0, i1, n_b):
    """Largest |error| of (s, gap) of the linear interpolation between fine samples i0
    and i1 (the cell's nodes), over the samples between them."""
    t = np.linspace(0.0, 1.0, i1 - i0 + 1)[:, None, None]
    linear = nodes[i0, :n_b, :2][None] * (1 - t) + nodes[i1, :n_b, :2][None] * t
    return np.abs(linear - nodes[i0:i1 + 1, :n_b, :2]).max(axis=(0, 1))


def interpolation_errors(offsets, counts, nodes, spacing):
    """Largest |error| of s and gap over the interpolable cells, linear and cubic, the
    worst cell's lateral offset, and the cells counted (interpolable, within the bound)."""
    stride = int(round(spacing / FINE_STEP))
    worst = {"linear": [0.0, 0.0, 0.0], "cubic": [0.0, 0.0, 0.0]}   # s, gap, where
    cells = {"linear": [0, 0], "cubic": [0, 0]}
    node_index = np.arange(0, offsets.size, stride)
    for c in range(node_index.size - 1):
        i0, i1 = node_index[c], node_index[c + 1]
        n_b = cell_branches(counts, i0, i1)
        if n_b == 0:
            continue
        errors = {"linear": linear_cell_error(nodes, i0, i1, n_b)}
        if c >= 1 and c + 2 < node_index.size:
            im, i2 = node_index[c - 1], node_index[c + 2]
            if np.all(counts[im:i2 + 1] == n_b):
                # Lagrange cubic through the nodes at -1, 0, 1, 2 (in cell units)
                t = (np.arange(i0, i1 + 1) - i0) / stride
                w = [-t * (t - 1) * (t - 2) / 6, (t + 1) * (t - 1) * (t - 2) / 2,
                     -(t + 1) * t * (t - 2) / 2, (t + 1) * t * (t - 1) / 6]
                cubic = sum(wk[:, None, None] * nodes[ik, :n_b, :2][None]
                            for wk, ik in zip(w, (im, i0, i1, i2)))
                errors["cubic"] = np.abs(cubic - nodes[i0:i1 + 1, :n_b, :2]).max(axis=(0, 1))
        for kind, err in errors.items():
            cells[kind][0] += 1
            cells[kind][1] += int(err[0] <= POSITION_BOUND)
            if err[0] > worst[kind][0]:
                worst[kind][0] = err[0]
                worst[kind][2] = offsets[i0]
            worst[kind][1] = max(worst[kind][1], err[1])
    return worst, cells


def cell_errors_near(offsets, counts, nodes, spacing, lateral, half_width):
    """(cell start, s error, gap error or None where the branches change) of the linear
    interpolation for the cells within half_width of `lateral`."""
    stride = int(round(spacing / FINE_STEP))
    rows = []
    for i0 in range(0, offsets.size - stride, stride):
        if abs(offsets[i0] + 0.5 * spacing - lateral) > half_width:
            continue
        i1 = i0 + stride
        n_b = cell_branches(counts, i0, i1)
        if n_b == 0:
            rows.append((offsets[i0], None, None))
            continue
        err = linear_cell_error(nodes, i0, i1, n_b)
        rows.append((offsets[i0], err[0], err[1]))
    return rows


def ren_jin_curve():
    """(outer wheel's lateral offset relative to the rail as the table sees it (mirrored
    right wheel), roll and yaw, its smallest active penetration) at t = 9 s."""
    scenario = load_scenario("ren-jin-r400-100")
    model = WheelsetModel(scenario.params)
    model.initialize()
    for _ in range(900):
        model.advance(0.01)
    contact = model.arrays.contact
    active = contact[1, :, C_ACTIVE] > 0
    state = model.state
    setup = model.setup
    # the right wheel is the left wheel of the mirrored pose (solver.contact.geometry); its pose
    # relative to the rail in the table's coordinates (lateral offset from the build's y = 0)
    mirrored = WheelsetPose(-state[S_Y], state[S_Z], -state[S_ROLL], -state[S_YAW])
    lateral, _, roll, yaw = _relative_pose(setup.params, mirrored, RailPose(0.0, 0.0, 0.0))
    return lateral - table_origin(setup)[0], roll, yaw, float(contact[1, active, C_PENETRATION].min())


def table_mebibytes(spacing):
    grid = TableGrid()
    n_lat = 2 * int(round(grid.lateral_range / spacing)) + 1
    n_roll = 2 * int(round(grid.roll_range / grid.roll_step)) + 1
    n_yaw = 2 * int(round(grid.yaw_range / grid.yaw_step)) + 1
    return n_lat * n_roll * n_yaw * MAX_BRANCHES * FIELDS_PER_BRANCH * 8 / 2 ** 20


def main():
    print(f"interpolation of the contact point between table nodes in lateral position "
          f"(fine reference {FINE_STEP * 1e6:g} um, +-{LATERAL_RANGE * 1e3:g} mm, (roll, yaw) slices "
          f"{[(r * 1e3, y * 1e3) for r, y in SLICES]} mrad); bound: position within "
          f"{POSITION_BOUND * 1e3:g} mm")
    for name, kw in PAIRS.items():
        kw = dict(kw)
        setup = ContactSetup.from_names(kw.pop("wheel"), kw.pop("rail"), **kw)
        samples = [branches_on_fine_grid(setup, roll, yaw) for roll, yaw in SLICES]
        print(f"[{name}]")
        for spacing in SPACINGS:
            line = [f"  node spacing {spacing * 1e3:g} mm (3-D table {table_mebibytes(spacing):,.0f} MiB):"]
            for kind in ("linear", "cubic"):
                worst_s, worst_gap, where, n_cells, n_ok = 0.0, 0.0, 0.0, 0, 0
                for offsets, counts, nodes in samples:
                    worst, cells = interpolation_errors(offsets, counts, nodes, spacing)
                    if worst[kind][0] > worst_s:
                        worst_s, where = worst[kind][0], worst[kind][2]
                    worst_gap = max(worst_gap, worst[kind][1])
                    n_cells += cells[kind][0]
                    n_ok += cells[kind][1]
                line.append(f"{kind}: position on the wheel {worst_s * 1e3:.4f} mm (at {where * 1e3:+.2f} mm), "
                            f"gap {worst_gap * 1e6:.3f} um, cells within the bound "
                            f"{n_ok}/{n_cells} ({100.0 * n_ok / max(n_cells, 1):.1f} %)")
            print("\n    ".join(line))
    lateral, roll, yaw, penetration = ren_jin_curve()
    kw = dict(PAIRS["LMA-worn / CHN60"])
    setup = ContactSetup.from_names(kw.pop("wheel"), kw.pop("rail"), **kw)
    spacing = TableGrid().lateral_step
    offsets, counts, nodes = branches_on_fine_grid(setup, roll, yaw)
    print(f"Ren & Jin curve (t = 9 s): outer wheel at {lateral * 1e3:+.2f} mm lateral, roll {roll * 1e3:+.2f}, "
          f"yaw {yaw * 1e3:+.2f} mrad, smallest penetration of its contact points "
          f"{penetration * 1e6:.1f} um; linear interpolation at the table's {spacing * 1e3:g} mm, cells within "
          f"+-0.5 mm:")
    for start, err_s, err_gap in cell_errors_near(offsets, counts, nodes, spacing, lateral, 5e-4):
        where = f"  cell {start * 1e3:+.2f} ... {(start + spacing) * 1e3:+.2f} mm: "
        if err_s is None:
            print(where + "a branch is born or lost inside (the exact path in any table)")
        else:
            print(where + f"position {err_s * 1e3:.4f} mm, gap {err_gap * 1e6:.3f} um = "
                  f"{100 * err_gap / penetration:.1f} % of the penetration (normal force "
                  f"{150 * err_gap / penetration:.1f} %)")


if __name__ == "__main__":
    main()
