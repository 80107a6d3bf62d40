"""`wheelset-fmu patch`: non-Hertzian pressure map of the static contact of one wheel.

  wheelset-fmu patch --wheel LMA-worn --rail CHN60 --y 1 --out patch.png

Rigid static contact at the lateral displacement y (mm); the undeformed gap
of the LEFT wheel is taken from the trace-line distance function
(solver.geometry.wheel_distance_function_reference: vertical wheel-rail
distance g(Y) along the wheel, Y the lateral track coordinate of the trace
line point) plus the rolling-direction term x^2 / (2 r(Y)):
    h(x, Y) = g(Y) + x^2 / (2 r(Y)).
The exact (boundary-element) solver finds the approach that carries the
wheel load (exact_normal_contact, method "fft"), and the pressure map with
its patches is drawn by plot_pressure_map. Quasi-planar approximation: the
gaps are vertical and all patches are projected on the horizontal plane,
good for tread contacts (contact angles of a few degrees); flange patches
are drawn with their projected width.
"""
from __future__ import annotations

import argparse
import math

import numpy as np

from fmu_wheelset.commands.geometry import add_setup_arguments, build_setup


def register(subparsers) -> None:
    p = subparsers.add_parser("patch", help="non-Hertzian pressure map of the static contact",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_setup_arguments(p, wheel="LMA-worn", rail="CHN60", back_to_back=1353.0, radius=430.0)
    from fmu_wheelset.cli_args import number, output_file
    p.add_argument("--y", type=number(-30.0, 30.0, unit="mm"), default=0.0,
                   help="lateral displacement, mm (default 0)")
    p.add_argument("--wheel-load", type=number(0.0, 1000.0, lo_open=True, unit="kN"), default=80.0,
                   dest="wheel_load", help="vertical wheel load, kN (default 80)")
    p.add_argument("--young", type=number(1.0, 1000.0, unit="GPa"), default=210.0,
                   help="Young's modulus, GPa (default 210)")
    p.add_argument("--poisson", type=number(0.0, 0.5, hi_open=True), default=0.28,
                   help="Poisson's ratio (default 0.28)")
    # the grid has ~(2 sqrt(2 r depth) / cell) x (patch width / cell) elements: the
    # bounds keep it below ~1e5 elements (a few seconds of the exact solver)
    p.add_argument("--depth", type=number(0.0, 2.0, lo_open=True, unit="mm"), default=0.3,
                   help="gap window: cells with gap below this are meshed, mm (default 0.3)")
    p.add_argument("--cell", type=number(0.1, 5.0, unit="mm"), default=0.4,
                   help="element size, mm (default 0.4)")
    p.add_argument("--out", default="patch.png", type=output_file(), help="PNG to write")
    p.set_defaults(func=run)


def gap_grid(setup, sc, depth, cell, side=0):
    """(gap (nx, ny), dx, dy, x0, y0) of wheel `side` at the static contact sc (m)."""
    from solver.geometry import WheelsetPose, wheel_distance_function_reference

    y, roll, yaw = sc.y, sc.roll, sc.yaw
    if side == 1:   # the right wheel is the left wheel of the mirrored wheelset
        y, roll, yaw = -y, -roll, -yaw
    _, g, _, Y, _ = wheel_distance_function_reference(setup.tables, WheelsetPose(y, sc.z, roll, yaw))
    radius = setup.nominal_radius + setup.wheel_table[:, 1]
    ok = np.isfinite(g)
    g, Y, radius = g[ok], Y[ok], radius[ok]
    order = np.argsort(Y)
    g, Y, radius = g[order], Y[order], radius[order]
    g = g - g.min()
    near = g < depth
    if not np.any(near):
        raise ValueError("no part of the wheel within the gap window")
    y_lo, y_hi = Y[near].min() - 2 * cell, Y[near].max() + 2 * cell
    ny = max(int(math.ceil((y_hi - y_lo) / cell)), 4)
    yc = y_lo + cell * (np.arange(ny) + 0.5)
    g_lat = np.interp(yc, Y, g)
    r_lat = np.interp(yc, Y, radius)
    x_half = math.sqrt(2.0 * r_lat.max() * depth) + 2 * cell
    nx = max(int(math.ceil(2 * x_half / cell)), 4)
    xc = -x_half + cell * (np.arange(nx) + 0.5)
    h = g_lat[None, :] + xc[:, None] ** 2 / (2.0 * r_lat[None, :])
    # Lateral coordinate relative to the wheel's principal point.
    y_ref = float(sc.points.position[side, 0, 1])
    if side == 1:
        y_ref = -y_ref
    return h, cell, cell, float(xc[0]), float(yc[0] - y_ref)


def run(args) -> int:
    from solver.geometry import static_contact
    from solver.normal_exact import exact_normal_contact, plot_pressure_map

    # GeometryError, NormalContactError, ProfileError: ValueErrors, one line and
    # exit 2 (cli_args.run_command)
    setup = build_setup(args)
    sc = static_contact(setup, args.y * 1e-3)
    h, dx, dy, x0, y0 = gap_grid(setup, sc, args.depth * 1e-3, args.cell * 1e-3)
    load = args.wheel_load * 1e3
    result = exact_normal_contact(h, dx, dy, load, args.young * 1e9, args.poisson,
                                  x0=x0, y0=y0, method="fft")
    print(f"{args.wheel}/{args.rail} y = {args.y:g} mm: static contact points left "
          f"{int(sc.points.count[0])}, grid {h.shape[0]}x{h.shape[1]}, approach "
          f"{result.approach * 1e3:.4f} mm, converged {result.converged}")
    for patch in result.patches:
        print(f"  patch {patch.label}: N = {patch.normal_force / 1e3:.2f} kN, p_max = "
              f"{patch.peak_pressure / 1e6:.0f} MPa, area = {patch.area * 1e6:.1f} mm^2, "
              f"centre y = {patch.centroid_y * 1e3:.2f} mm")
    title = (f"{args.wheel}/{args.rail}, y = {args.y:g} mm, Q = {args.wheel_load:g} kN: "
             f"{len(result.patches)} patch(es), p_max {result.peak_pressure / 1e6:.0f} MPa")
    plot_pressure_map(result, args.out, title=title)
    print(f"wrote {args.out}")
    return 0
