"""`wheelset-fmu stability`: eigenvalues of the linearised wheelset core, the
linear and nonlinear critical speeds, a root-locus plot and a table
(solver.stability)."""
from __future__ import annotations


def register(subparsers):
    from fmu_wheelset.cli_args import number, output_file, profile
    p = subparsers.add_parser(
        "stability", help="hunting stability of a suspended wheelset: eigenvalues, critical speeds",
        description="Linearise the wheelset core about its centred run on straight track "
                    "(built-in primary suspension to a frame on the track centreline, or a "
                    "free wheelset) and report the hunting eigenvalue per speed, the linear "
                    "critical speed and hunting frequency, optionally the nonlinear critical "
                    "speed (bisection on perturbed runs) and a root-locus plot.")
    p.add_argument("--wheel-profile", default="S1002", type=profile("wheel"),
                   help="S1002, LMA, cone:<conicity>, a file")
    p.add_argument("--rail-profile", default="UIC60", type=profile("rail"),
                   help="UIC60, CHN60, a file")
    p.add_argument("--creep-model", default="polach", choices=["kalker", "she", "polach", "fastsim", "fastrip"])
    p.add_argument("--free", action="store_true", help="free wheelset (no suspension)")
    p.add_argument("--kx", type=number(0.0, 10000000000.0, unit="N/m"), default=1.0e6,
                   help="longitudinal stiffness per axle box (N/m; Manchester vehicle 1: 31.391e6)")
    p.add_argument("--ky", type=number(0.0, 10000000000.0, unit="N/m"), default=3.884e6, help="lateral stiffness per axle box (N/m)")
    p.add_argument("--suspended-mass", type=number(0.0, 100000.0, unit="kg"), default=9307.5,
                   help="mass carried by the wheelset (kg; Manchester vehicle 1: 9307.5)")
    p.add_argument("--speeds", default="10,20,30,40,50,60,70,80,90,100,110,120,130,140",
                   type=_speeds, help="comma-separated speeds of the table and root locus (m/s)")
    p.add_argument("--v-min", type=number(0.0, 150.0, unit="m/s"), default=5.0)
    p.add_argument("--v-max", type=number(0.0, 150.0, unit="m/s"), default=150.0)
    p.add_argument("--nonlinear", action="store_true",
                   help="also the nonlinear critical speed (perturbed runs, 6 mm, 3 s each)")
    p.add_argument("--plot", type=output_file(".png"), help="PNG of the root locus")
    p.set_defaults(func=run)


def _speeds(text):
    """An argparse type: comma-separated speeds in (0, 150] m/s (the FMU's
    wheelset.speed range)."""
    import argparse
    from fmu_wheelset.cli_args import number
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts:
        raise argparse.ArgumentTypeError("no speed given (e.g. 10,20,30)")
    return [number(0.0, 150.0, lo_open=True, unit="m/s")(part) for part in parts]


def parameters(args):
    from solver.wheelset import WheelsetParameters
    return WheelsetParameters(
        wheel_profile=args.wheel_profile, rail_profile=args.rail_profile,
        creep_model=args.creep_model, bogie=not args.free,
        suspension_stiffness=(args.kx, args.ky, 1.22e6),
        suspended_mass=0.0 if args.free else args.suspended_mass)


def run(args) -> int:
    import sys
    from solver import stability
    if not args.v_min < args.v_max:
        print(f"wheelset-fmu stability: error: --v-min {args.v_min:g} must be below --v-max "
              f"{args.v_max:g}", file=sys.stderr)
        return 2
    params = parameters(args)
    speeds = args.speeds
    try:
        locus = stability.root_locus(params, speeds)
    except stability.StabilityError as exc:
        print(f"wheelset-fmu stability: {exc}", file=sys.stderr)
        return 1
    print(f"{'V (m/s)':>8} {'Re (1/s)':>10} {'Im (rad/s)':>11} {'f (Hz)':>7} {'damping':>8}")
    for e in locus:
        print(f"{e.speed:8.1f} {e.hunting.real:10.3f} {e.hunting.imag:11.3f} {e.frequency:7.3f} "
              f"{e.damping_ratio:8.4f}")
    status = 0
    try:
        crit = stability.linear_critical_speed(params, args.v_min, args.v_max)
        print(f"linear critical speed {crit.speed:.2f} m/s ({crit.speed * 3.6:.1f} km/h), "
              f"hunting frequency {crit.frequency:.3f} Hz")
    except stability.StabilityError as exc:
        print(f"wheelset-fmu stability: linear critical speed: {exc}", file=sys.stderr)
        status = 1
    if args.nonlinear:
        try:
            crit = stability.nonlinear_critical_speed(params, args.v_min, args.v_max)
            print(f"nonlinear critical speed {crit.speed:.2f} m/s ({crit.speed * 3.6:.1f} km/h), "
                  f"limit-cycle frequency {crit.frequency:.3f} Hz (6 mm perturbation)")
        except stability.StabilityError as exc:
            print(f"wheelset-fmu stability: nonlinear critical speed: {exc}", file=sys.stderr)
            status = 1
    if args.plot:
        plot_root_locus(locus, args.plot, f"{args.wheel_profile} / {args.rail_profile}, "
                        f"{args.creep_model}" + (", free wheelset" if args.free else
                                                 f", kx {args.kx:.3g} N/m, ky {args.ky:.3g} N/m"))
        print(f"wrote {args.plot}")
    return status


def plot_root_locus(locus, path, title):
    import numpy as np
    from matplotlib.figure import Figure
    fig = Figure(figsize=(8, 6))
    ax = fig.subplots()
    speeds = np.array([e.speed for e in locus])
    for e in locus:
        w = e.eigenvalues
        keep = (np.abs(w) < 400) & (w.imag >= 0)
        ax.scatter(w.real[keep], w.imag[keep] / (2 * np.pi), s=8, c="0.7")
    hunting = np.array([e.hunting for e in locus])
    sc = ax.scatter(hunting.real, hunting.imag / (2 * np.pi), c=speeds, cmap="viridis", s=30,
                    label="hunting mode")
    ax.plot(hunting.real, hunting.imag / (2 * np.pi), "-", color="C0", lw=0.8)
    fig.colorbar(sc, ax=ax, label="speed (m/s)")
    ax.axvline(0.0, color="k", lw=0.8)
    ax.set_xlabel("real part (1/s)")
    ax.set_ylabel("frequency (Hz)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.savefig(path, dpi=110)
