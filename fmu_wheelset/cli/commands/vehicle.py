"""`wheelset-fmu vehicle`: the Manchester benchmark vehicle 1 over four
wheelset FMUs (cosim/vehicle/master.py), on straight track or a curve."""
from __future__ import annotations

import math


def register(subparsers):
    from fmu_wheelset.cli.args import fmu_file, number, output_file
    p = subparsers.add_parser(
        "vehicle", help="run the Manchester benchmark vehicle over four wheelset FMUs",
        description="Co-simulate a bogie vehicle (carbody, two bogie frames, primary and "
                    "secondary suspensions) over four instances of Wheelset.fmu: straight "
                    "track, a transition and a constant curve with cant.")
    p.add_argument("--fmu", type=fmu_file,
                   help="Wheelset.fmu (default: build one into a temporary folder, removed at "
                        "the end)")
    p.add_argument("--speed", type=number(0.0, 150.0, lo_open=True, unit="m/s"), default=30.0,
                   help="m/s")
    p.add_argument("--radius", type=_radius, default=math.inf,
                   help="curve radius (m, + left, - right; inf: straight track; |R| >= 50 m)")
    p.add_argument("--cant", type=number(0.0, 0.2, hi_open=True, unit="m"), default=0.0, help="superelevation of the outer rail (m)")
    p.add_argument("--straight", type=number(0.0, 1e5, unit="m"), default=5.0, help="straight before the transition (m)")
    p.add_argument("--transition", type=number(0.0, 1e5, lo_open=True, unit="m"), default=40.0, help="transition length (m)")
    p.add_argument("--duration", type=number(0.0, 3600.0, lo_open=True, unit="s"), default=5.0, help="simulated time (s)")
    p.add_argument("--step", type=number(0.0, 0.01, lo_open=True, unit="s"), default=1e-3, help="communication step (s)")
    p.add_argument("--coupling", default="interface", choices=["interface", "jacobi", "explicit"],
                   help="interface: Gauss-Seidel with interface models (default); jacobi: the scheme "
                        "of libcosim and Ecos (all step, then exchange); explicit: for comparison")
    p.add_argument("--push", type=number(-1e6, 1e6, unit="N"), default=0.0,
                   help="lateral force on the leading wheelset for the first 50 ms (N)")
    p.add_argument("--average-last", type=number(0.0, 3600.0, unit="s"), default=2.0,
                   help="average the wheel results over the last ... s (0: none)")
    p.add_argument("--out", type=output_file(".csv"), help="CSV of the time histories")
    p.add_argument("--plot", type=output_file(".png"), help="PNG of lateral displacements, Q and Y/Q")
    p.set_defaults(func=run)


def _radius(text):
    """An argparse type: a curve radius, |R| >= 50 m (the sweep plans' bound), or
    inf for straight track."""
    import argparse
    from fmu_wheelset.cli.args import number
    radius = float(text) if text.strip().lower() in ("inf", "+inf", "-inf") else number()(text)
    if abs(radius) < 50.0:
        raise argparse.ArgumentTypeError(f"{radius:g} m: a curve radius is at least 50 m in "
                                         "magnitude (inf for straight track)")
    return radius


def run(args) -> int:
    import sys
    import tempfile
    from pathlib import Path

    if args.average_last >= args.duration:
        print(f"wheelset-fmu vehicle: error: --average-last {args.average_last:g} s must be "
              f"shorter than --duration {args.duration:g} s (0: no average)", file=sys.stderr)
        return 2
    if args.fmu is not None:
        return _run(args, args.fmu)
    from fmu_wheelset.packaging.build import build_fmu
    with tempfile.TemporaryDirectory(prefix="wheelset-fmu-") as folder:
        fmu = build_fmu(Path(folder) / "Wheelset.fmu", quiet=True, numba_targets=("build-cpu",),
                        progress=lambda line: print(line, file=sys.stderr, flush=True))
        return _run(args, str(fmu))


def _run(args, fmu) -> int:
    import sys

    from cosim.vehicle.curve_layout import CurveLayout
    from cosim.vehicle.master import VehicleCosim
    from cosim.vehicle.parameters import GRAVITY, VehicleError
    try:
        layout = CurveLayout(radius=args.radius, cant=args.cant, straight=args.straight,
                             transition=args.transition)
        average = args.duration - args.average_last if args.average_last > 0 else None
        with VehicleCosim(fmu, speed=args.speed, layout=layout, step=args.step,
                          coupling=args.coupling, record_every=max(1, int(round(1e-2 / args.step))),
                          perturbation=(0, args.push, 0.05) if args.push else None) as vc:
            result = vc.run(args.duration, average_from=average)
            p = vc.p
    except VehicleError as exc:
        print(f"wheelset-fmu vehicle: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    print(f"{args.duration:g} s simulated in {result.wall_time:.2f} s wall "
          f"(real-time factor {result.real_time_factor:.2f}), coupling {args.coupling}, "
          f"h = {args.step * 1e3:g} ms, cant deficiency {layout.cant_deficiency(args.speed) * 1e3:.0f} mm")
    values = result.mean if result.mean else {k: getattr(result, k)[-1] for k in (
        "lateral", "yaw", "wheel_load", "lateral_force", "derailment_quotient", "wear_number")}
    what = (f"mean over {result.mean_window[0]:g}-{result.mean_window[1]:g} s" if result.mean
            else "at the end")
    print(f"wheelsets ({what}):")
    print(f"{'':4}{'y (mm)':>8}{'yaw (mrad)':>11}{'Q left':>9}{'Q right':>9}{'Y/Q left':>9}"
          f"{'Y/Q right':>10}{'wear L (N)':>11}{'wear R (N)':>11}")
    for j in range(4):
        q, yq, wear = values["wheel_load"][j], values["derailment_quotient"][j], values["wear_number"][j]
        print(f"{j + 1:>4}{values['lateral'][j] * 1e3:8.2f}{values['yaw'][j] * 1e3:11.3f}"
              f"{q[0] / 1e3:9.2f}{q[1] / 1e3:9.2f}{yq[0]:9.3f}{yq[1]:10.3f}{wear[0]:11.1f}{wear[1]:11.1f}")
    if result.mean and not math.isinf(args.radius):
        mass = p.carbody_mass / 2 + p.bogie_mass + 2 * p.wheelset_mass
        c = layout.full_cant_angle
        required = mass * (args.speed ** 2 * layout.full_curvature * math.cos(c) + GRAVITY * math.sin(c))
        for name, force in (("FMU outputs", result.mean_bogie_lateral_force()),
                            ("momentum", result.mean_bogie_lateral_force(True))):
            print(f"bogie lateral rail forces ({name}): {force[0] / 1e3:.3f}, {force[1] / 1e3:.3f} kN; "
                  f"m (V^2/R cos c - g sin c) = {required / 1e3:.3f} kN, c = asin(h / 1.5) "
                  f"(ratios {force[0] / required:.4f}, {force[1] / required:.4f})")
    if args.out:
        import csv
        with open(args.out, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["time_s"] + [f"w{j + 1}_{q}" for j in range(4) for q in (
                "y_m", "yaw_rad", "Q_left_N", "Q_right_N", "YQ_left", "YQ_right")])
            for i, t in enumerate(result.time):
                row = [f"{t:.4f}"]
                for j in range(4):
                    row += [f"{result.lateral[i, j]:.6e}", f"{result.yaw[i, j]:.6e}",
                            f"{result.wheel_load[i, j, 0]:.1f}", f"{result.wheel_load[i, j, 1]:.1f}",
                            f"{result.derailment_quotient[i, j, 0]:.4f}",
                            f"{result.derailment_quotient[i, j, 1]:.4f}"]
                w.writerow(row)
        print(f"wrote {args.out}")
    if args.plot:
        from matplotlib.figure import Figure
        fig = Figure(figsize=(9, 8))
        ax = fig.subplots(3, 1, sharex=True)
        # a left curve (radius > 0) has its outer rail on the right (docs/CONVENTIONS.md)
        right = ("right wheel" if math.isinf(args.radius)
                 else "right (outer) wheel" if args.radius > 0 else "right (inner) wheel")
        for j in range(4):
            ax[0].plot(result.time, result.lateral[:, j] * 1e3, label=f"wheelset {j + 1}")
            ax[1].plot(result.time, result.wheel_load[:, j, 1] / 1e3, label=f"wheelset {j + 1}")
            ax[2].plot(result.time, result.derailment_quotient[:, j, 1], label=f"wheelset {j + 1}")
        ax[0].set_ylabel("y (mm, + left)")
        ax[0].set_title("lateral displacement of each wheelset", fontsize=9)
        ax[1].set_ylabel("Q (kN)")
        ax[1].set_title(f"wheel load Q of the {right}", fontsize=9)
        ax[2].set_ylabel("Y/Q")
        ax[2].set_title(f"derailment quotient Y/Q of the {right}", fontsize=9)
        ax[2].set_xlabel("time (s)")
        curve = ("straight track" if math.isinf(args.radius) else
                 f"R {abs(args.radius):g} m {'left' if args.radius > 0 else 'right'} curve, cant "
                 f"{args.cant * 1e3:g} mm")
        fig.suptitle(f"Manchester benchmark vehicle 1 over four wheelset FMUs: {curve}, "
                     f"{args.speed:g} m/s, coupling {args.coupling}", fontsize=10)
        for a in ax:
            a.legend(fontsize=7)
        fig.savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")
    return 0
