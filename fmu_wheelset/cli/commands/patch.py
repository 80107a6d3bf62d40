"""`wheelset-fmu patch`: non-Hertzian pressure map of the static contact of one wheel.

  wheelset-fmu patch --wheel LMA-worn --rail CHN60 --y 1 --out patch.png

Rigid static contact at the lateral displacement y (mm); every contact patch
of the LEFT wheel is solved in its own contact plane, the plane tangent to
the rail at the patch's rigid contact point, with the gaps measured along
the plane's normal between the exact surfaces: the wheel as the body of
revolution of its profile, the rail as the prismatic surface of its
(inclined) profile (solver.contact.normal.contact_plane.contact_plane_gap). The wheelset is
lowered until the normal forces carry the vertical wheel load (frictionless:
sum of N cos(contact angle) = load), the gaps those of the lowered wheel, so
that a flange-root or flange patch is as right as a tread patch: within 1 %
of CONTACT's area, peak pressure and approach at the S1002/UIC60 flange root
(docs/contact_mechanics.md). The exact (boundary-element) solver of each
patch: solver.contact.normal; the maps of all patches are drawn side by side.
"""
from __future__ import annotations

import argparse
import math

from fmu_wheelset.cli.commands.geometry import add_setup_arguments, build_setup


def register(subparsers) -> None:
    p = subparsers.add_parser("patch", help="non-Hertzian pressure map of the static contact",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_setup_arguments(p, wheel="LMA-worn", rail="CHN60", back_to_back=1353.0, radius=430.0)
    from fmu_wheelset.cli.args import number, output_file
    p.add_argument("--y", type=number(-30.0, 30.0, unit="mm"), default=0.0,
                   help="lateral displacement, mm (default 0)")
    p.add_argument("--wheel-load", type=number(0.0, 1000.0, lo_open=True, unit="kN"), default=80.0,
                   dest="wheel_load", help="vertical wheel load, kN (default 80)")
    p.add_argument("--young", type=number(1.0, 1000.0, unit="GPa"), default=210.0,
                   help="Young's modulus, GPa (default 210)")
    p.add_argument("--poisson", type=number(0.0, 0.5, hi_open=True), default=0.28,
                   help="Poisson's ratio (default 0.28)")
    # each patch's grid has ~(2 sqrt(2 r depth / cos d) / cell) x (band width / cell) elements:
    # the bounds keep it below ~1e5 elements (seconds of the exact solver)
    p.add_argument("--depth", type=number(0.0, 2.0, lo_open=True, unit="mm"), default=0.3,
                   help="gap window: the band within this of the first touch is meshed, mm (default 0.3; "
                        "it must exceed the approach)")
    p.add_argument("--cell", type=number(0.1, 5.0, unit="mm"), default=0.2,
                   help="element size, mm (default 0.2)")
    p.add_argument("--out", default="patch.png", type=output_file(), help="PNG to write")
    p.set_defaults(func=run)


def run(args) -> int:
    from solver.contact.geometry.points import static_contact
    from solver.contact.normal.contact_plane import wheel_normal_contact
    from fmu_wheelset.plots import plot_plane_pressure_maps

    # GeometryError, NormalContactError, ProfileError: ValueErrors, one line and
    # exit 2 (cli.args.run_command)
    setup = build_setup(args)
    sc = static_contact(setup, args.y * 1e-3)
    load = args.wheel_load * 1e3
    contact = wheel_normal_contact(setup, sc, sc.points, load, args.young * 1e9, args.poisson,
                                   side=0, cell=args.cell * 1e-3, depth=args.depth * 1e-3)
    print(f"{args.wheel}/{args.rail} y = {args.y:g} mm: static contact points left "
          f"{int(sc.points.count[0])}, {len(contact.grids)} contact plane(s), wheel lowered "
          f"{contact.vertical_approach * 1e3:.4f} mm, vertical force {contact.vertical_force / 1e3:.2f} kN")
    for k, (grid, result, approach) in enumerate(zip(contact.grids, contact.results, contact.approaches), 1):
        converged = "" if result.converged else " (NOT converged)"
        print(f"  patch {k}: contact angle {math.degrees(grid.plane.angle):.2f} deg, grid "
              f"{grid.gap.shape[0]}x{grid.gap.shape[1]}, N = {result.total_force / 1e3:.2f} kN, p_max = "
              f"{result.peak_pressure / 1e6:.0f} MPa, area = {result.area * 1e6:.1f} mm^2, approach "
              f"{approach * 1e3:.4f} mm{converged}")
    title = (f"{args.wheel}/{args.rail}, y = {args.y:g} mm, Q = {args.wheel_load:g} kN: "
             f"{len(contact.grids)} contact plane(s)")
    plot_plane_pressure_maps(contact, args.out, title=title)
    print(f"wrote {args.out}")
    return 0
