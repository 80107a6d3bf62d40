"""`wheelset-fmu geometry`: static contact geometry over a lateral displacement range.

Example (Chinese practice, Ren & Jin 2010):
  wheelset-fmu geometry --wheel LMA --rail CHN60 --gauge 1435 --inclination 40 \
      --back-to-back 1353 --y=-12:12:0.1 --radius 430 --out table.csv --plot geometry.png

Lengths on the command line in mm; the inclination as the ratio n of 1:n
(0 = upright rail). The CSV has one row per (y, side, contact point), columns
solver.contact.geometry.analysis.TABLE_COLUMNS.
"""
from __future__ import annotations

import argparse
import csv
import math

import numpy as np


def parse_range(text: str) -> np.ndarray:
    """'start:stop:step' (mm, stop included when on the grid) or a single value -> array in m."""
    parts = text.split(":")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad range {text!r}: expected start:stop:step in mm")
    if len(values) == 1:
        if not (math.isfinite(values[0]) and abs(values[0]) <= 30.0):
            raise argparse.ArgumentTypeError(f"{text!r}: a lateral displacement is within [-30, 30] mm")
        return np.array([values[0] * 1e-3])
    if len(values) == 2:
        values.append(0.1)
    if len(values) != 3 or values[2] <= 0 or values[1] < values[0]:
        raise argparse.ArgumentTypeError(f"bad range {text!r}: expected start:stop:step with step > 0")
    if not all(math.isfinite(v) for v in values) or max(abs(values[0]), abs(values[1])) > 30.0:
        raise argparse.ArgumentTypeError(f"bad range {text!r}: lateral displacements are within "
                                         "[-30, 30] mm")
    start, stop, step = values
    if (stop - start) / step > 100_000:
        raise argparse.ArgumentTypeError(f"bad range {text!r}: more than 100000 positions")
    n = int(math.floor((stop - start) / step + 1e-9)) + 1
    return (start + step * np.arange(n)) * 1e-3


def add_setup_arguments(parser: argparse.ArgumentParser, wheel="S1002", rail="UIC60",
                        back_to_back=1360.0, radius=460.0) -> None:
    """Profile and track arguments shared by the geometry/conicity/creep/patch commands."""
    from fmu_wheelset.cli.args import number, profile
    from fmu_wheelset.fmu.variables import builtin_profile_names
    parser.add_argument("--wheel", default=wheel, type=profile("wheel"),
                        help="wheel profile: a built-in name ("
                             + ", ".join(builtin_profile_names("wheel")) + ", cone:<conicity>) "
                             f"or a profile file in mm (default {wheel})")
    parser.add_argument("--rail", default=rail, type=profile("rail"),
                        help="rail profile: a built-in name ("
                             + ", ".join(builtin_profile_names("rail")) + ") or a profile file "
                             f"in mm (default {rail})")
    # ranges: those of the FMU's parameters (fmu_wheelset/fmu/variables.py), in mm
    parser.add_argument("--gauge", type=number(1000.0, 2000.0, unit="mm"), default=1435.0,
                        help="track gauge, mm (default 1435)")
    parser.add_argument("--inclination", type=_inclination, default=40.0,
                        help="rail inclination 1:n, give n (default 40; 0 = none)")
    parser.add_argument("--back-to-back", type=number(1000.0, 2000.0, unit="mm"),
                        default=back_to_back, dest="back_to_back",
                        help=f"wheel back-to-back distance, mm (default {back_to_back:g})")
    parser.add_argument("--radius", type=number(100.0, 1500.0, unit="mm"), default=radius,
                        help=f"nominal rolling radius, mm (default {radius:g})")
    parser.add_argument("--step", type=number(0.01, 1.0, unit="mm"), default=0.1,
                        help="profile grid step, mm (default 0.1)")


def _inclination(text):
    """n of a 1:n rail inclination: 0 (upright) or n >= 5 (1:5 = 0.2 rad, the FMU's
    largest rail.inclination)."""
    import argparse
    from fmu_wheelset.cli.args import number
    n = number(0.0, 1.0e6)(text)
    if 0.0 < n < 5.0:
        raise argparse.ArgumentTypeError(f"1:{n:g} is steeper than 1:5 (give 0 for an upright "
                                         "rail or n >= 5)")
    return n


def build_setup(args):
    """The ContactSetup of the profile and track arguments (a profile: a built-in
    name or a file, fmu_wheelset.cli.args.check_profile)."""
    from fmu_wheelset.cli.args import check_profile
    from solver.contact.geometry.setup import ContactSetup
    step = args.step * 1e-3
    return ContactSetup(
        check_profile(args.wheel, "wheel", step), check_profile(args.rail, "rail", step),
        inclination=float(np.arctan(1.0 / args.inclination)) if args.inclination else 0.0,
        gauge=args.gauge * 1e-3, back_to_back=args.back_to_back * 1e-3,
        nominal_radius=args.radius * 1e-3)


def register(subparsers) -> None:
    p = subparsers.add_parser("geometry", help="static wheel-rail contact geometry over a y range",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_setup_arguments(p)
    p.add_argument("--y", type=parse_range, default=parse_range("-10:10:0.5"),
                   help="lateral displacements start:stop:step in mm (use --y=-12:12:0.1)")
    from fmu_wheelset.cli.args import number, output_file
    p.add_argument("--yaw", type=number(-100.0, 100.0, unit="mrad"), default=0.0,
                   help="yaw angle, mrad (default 0)")
    p.add_argument("--epsilon", type=number(0.0, 10.0, lo_open=True, unit="mm"), default=0.1,
                   help="multipoint tolerance, mm (default 0.1 ~ difference of elastic compressions)")
    p.add_argument("--out", default="geometry.csv", type=output_file(), help="CSV table to write")
    p.add_argument("--plot", default=None, type=output_file(),
                   help="PNG with profiles, contact points and delta r(y)")
    p.set_defaults(func=run)


def write_csv(rows, path) -> None:
    from solver.contact.geometry.analysis import TABLE_COLUMNS
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(TABLE_COLUMNS))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (f"{v:.9g}" if isinstance(v, float) else v) for k, v in row.items()})


def plot_geometry(setup, sweep, path, title=None) -> str:
    """Profiles of the LEFT wheel and rail in the track frame (wheel drawn lifted),
    the contact points of every y on both, joined by a line coloured by y; second
    panel: Delta r(y)."""
    from matplotlib import cm, colors
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    th = setup.inclination
    ct, st = math.cos(th), math.sin(th)
    yc = setup.rail_centre_y
    taping = setup.taping_line_axial
    r0 = setup.nominal_radius
    rail_u = setup.rail.lateral
    rail_z = setup.rail.height
    rail_Y = yc + rail_u * ct - rail_z * st
    rail_Z = rail_u * st + rail_z * ct
    wheel_s = setup.wheel.lateral
    wheel_F = setup.wheel.height
    lift = 0.040  # the wheel is drawn 40 mm above its centred position
    wheel_Y = taping + wheel_s
    wheel_Z = -wheel_F + lift
    ys = np.array([sc.y for sc in sweep])
    norm = colors.Normalize(vmin=ys.min() * 1e3, vmax=max(ys.max(), ys.min() + 1e-6) * 1e3)
    cmap = cm.get_cmap("coolwarm") if hasattr(cm, "get_cmap") else cm.coolwarm

    fig = Figure(figsize=(11, 5.2), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 2, 1)
    ax.plot(rail_Y * 1e3, rail_Z * 1e3, "k-", lw=1.2, label=f"rail {setup.rail.name}")
    ax.plot(wheel_Y * 1e3, wheel_Z * 1e3, "0.3", lw=1.2, label=f"wheel {setup.wheel.name} (lifted 40 mm)")
    for sc in sweep:
        pts = sc.points
        colour = cmap(norm(sc.y * 1e3))
        for k in range(int(pts.count[0])):
            s = pts.y_wheel[0, k]
            u = pts.y_rail[0, k]
            zr = float(np.interp(u, rail_u, rail_z))
            Yr, Zr = yc + u * ct - zr * st, u * st + zr * ct
            Yw = taping + s
            Zw = -float(np.interp(s, wheel_s, wheel_F)) + lift
            ax.plot([Yw * 1e3, Yr * 1e3], [Zw * 1e3, Zr * 1e3], "-", color=colour, lw=0.5, alpha=0.8)
            ax.plot([Yw * 1e3], [Zw * 1e3], "o", color=colour, ms=2.5)
            ax.plot([Yr * 1e3], [Zr * 1e3], "o", color=colour, ms=2.5)
    ax.set_xlim((yc - 0.05) * 1e3, (yc + 0.05) * 1e3)
    ax.set_ylim(-25, lift * 1e3 + 10)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("track lateral Y (mm, left wheel / rail)")
    ax.set_ylabel("Z (mm)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)
    sm = cm.ScalarMappable(norm=norm, cmap=cmap)
    fig.colorbar(sm, ax=ax, label="wheelset displacement y (mm)")

    ax2 = fig.add_subplot(1, 2, 2)
    dr = np.array([sc.rolling_radius_difference for sc in sweep])
    ax2.plot(ys * 1e3, dr * 1e3, "b-", lw=1.2)
    ax2.set_xlabel("wheelset lateral displacement y (mm)")
    ax2.set_ylabel("rolling radius difference r_left - r_right (mm)")
    ax2.grid(True, alpha=0.3)
    ax2.set_title("delta r (principal contact points)")
    incl = f"inclination 1:{1 / math.tan(th):.0f}" if th else "upright rails"
    fig.suptitle(title or (f"{setup.wheel.name} / {setup.rail.name}, gauge {setup.gauge * 1e3:.0f} mm, "
                           f"{incl}, back-to-back {setup.back_to_back * 1e3:.0f} mm"))
    fig.tight_layout()
    fig.savefig(str(path))
    return str(path)


def run(args) -> int:
    from solver.contact.geometry.analysis import geometry_sweep, geometry_table

    # a profile, a set-up or a displacement the geometry cannot answer is a
    # ValueError (GeometryError, ProfileError): one line, exit 2 (cli.args.run_command)
    setup = build_setup(args)
    sweep = geometry_sweep(setup, args.y, yaw=args.yaw * 1e-3, epsilon=args.epsilon * 1e-3)
    rows = geometry_table(setup, args.y, sweep=sweep)
    write_csv(rows, args.out)
    print(f"wrote {len(rows)} rows for {len(sweep)} displacements to {args.out}")
    if args.plot:
        plot_geometry(setup, sweep, args.plot)
        print(f"wrote {args.plot}")
    return 0
