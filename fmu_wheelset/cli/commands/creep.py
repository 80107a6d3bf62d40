"""`wheelset-fmu creep`: creep-force curves at the static contact of a wheel/rail pair.

  wheelset-fmu creep --model polach --wheel S1002 --rail UIC60 --y 0 --out creep.png

--wheel and --rail take built-in names or profile files in mm (e.g.
profiles/S1002.txt).

Rigid static contact at the lateral displacement y (mm); Hertz ellipse at the
LEFT wheel's principal contact point with the normal force of the static
wheel load (N = Q / cos(delta)); curvature sums (CONVENTIONS.md)
A = wheel rolling curvature / 2 (cos(delta)/r, straight rail) and
B = (wheel lateral + rail lateral curvature) / 2; then the creep curves of
all models, the selected one drawn first and named in the title.
"""
from __future__ import annotations

import argparse
import math

from fmu_wheelset.cli.commands.geometry import add_setup_arguments, build_setup
from fmu_wheelset.fmu.variables import model_names

MODELS = model_names("CreepModel")


def register(subparsers) -> None:
    p = subparsers.add_parser("creep", help="creep-force curves at the static contact point",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_setup_arguments(p)
    p.add_argument("--model", choices=MODELS, default="polach", help="highlighted creep model")
    from fmu_wheelset.cli.args import number, output_file
    # ranges: those of the FMU's parameters (fmu_wheelset/fmu/variables.py)
    p.add_argument("--y", type=number(-30.0, 30.0, unit="mm"), default=0.0,
                   help="lateral displacement, mm (default 0)")
    p.add_argument("--wheel-load", type=number(0.0, 1000.0, lo_open=True, unit="kN"), default=80.0,
                   dest="wheel_load", help="static vertical wheel load Q, kN (default 80)")
    p.add_argument("--friction", type=number(0.0, 2.0), default=0.3,
                   help="friction coefficient (default 0.3)")
    p.add_argument("--young", type=number(1.0, 1000.0, unit="GPa"), default=210.0,
                   help="Young's modulus, GPa (default 210)")
    p.add_argument("--poisson", type=number(0.0, 0.5, hi_open=True), default=0.28,
                   help="Poisson's ratio (default 0.28)")
    p.add_argument("--speed", type=number(0.0, 150.0, lo_open=True, unit="m/s"), default=20.0,
                   help="rolling speed, m/s (default 20)")
    p.add_argument("--out", default="creep.png", type=output_file(), help="PNG to write")
    p.set_defaults(func=run)


def hertz_at_principal_point(setup, y, wheel_load, young, poisson, side=0):
    """(static contact, HertzEllipse, normal force) at the principal point of wheel `side`."""
    from solver.contact.geometry.points import static_contact
    from solver.contact.normal.hertz import hertz_ellipse

    sc = static_contact(setup, y)
    pts = sc.points
    delta = float(pts.contact_angle[side, 0])
    normal_force = wheel_load / max(math.cos(delta), 0.2)
    A = 0.5 * float(pts.wheel_curvature_rolling[side, 0])
    B = 0.5 * (float(pts.wheel_curvature_lateral[side, 0]) + float(pts.rail_curvature_lateral[side, 0]))
    ellipse = hertz_ellipse(A, B, normal_force, young, poisson)
    return sc, ellipse, normal_force, A, B


def run(args) -> int:
    from fmu_wheelset.plots import plot_creep_curves

    young = args.young * 1e9
    # GeometryError, NormalContactError, ProfileError: ValueErrors, one line and
    # exit 2 (cli.args.run_command)
    setup = build_setup(args)
    sc, ell, normal_force, A, B = hertz_at_principal_point(
        setup, args.y * 1e-3, args.wheel_load * 1e3, young, args.poisson)
    shear = young / (2.0 * (1.0 + args.poisson))
    pts = sc.points
    print(f"left principal point: s = {pts.y_wheel[0, 0] * 1e3:.2f} mm, contact angle "
          f"{math.degrees(pts.contact_angle[0, 0]):.2f} deg, r = {pts.rolling_radius[0, 0] * 1e3:.2f} mm")
    print(f"A = {A:.4f} 1/m, B = {B:.4f} 1/m, N = {normal_force / 1e3:.2f} kN: "
          f"a = {ell.a * 1e3:.3f} mm, b = {ell.b * 1e3:.3f} mm, p0 = {ell.p0 / 1e6:.0f} MPa")
    models = (args.model,) + tuple(m for m in MODELS if m != args.model)
    title = (f"{args.wheel}/{args.rail} y = {args.y:g} mm, model {args.model} (first in legend): "
             f"a = {ell.a * 1e3:.2f} mm, b = {ell.b * 1e3:.2f} mm, N = {normal_force / 1e3:.1f} kN, "
             f"mu = {args.friction:g}")
    plot_creep_curves(ell.a, ell.b, normal_force, args.friction, shear, args.poisson, args.speed,
                      args.out, models=models, title=title)
    print(f"wrote {args.out}")
    return 0
