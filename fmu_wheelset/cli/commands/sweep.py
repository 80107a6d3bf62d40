"""`wheelset-fmu sweep`: parameter sweeps of the FMU on Dask (fmu_wheelset.sweeps.sweep).

Example (3 speeds x 2 radii of Kang's wheelset, 3 s each):

  wheelset-fmu sweep examples/sweep.toml --out results/

The whole plan is checked before anything runs (keys, ranges, profiles,
tracks, scenario, the FMU file): a mistake is one line and exit status 2.
Exit status 1 when a case failed (the table of failed cases is printed; a
rerun with the same --out retries them).
"""
from __future__ import annotations

import argparse


def register(subparsers):
    p = subparsers.add_parser("sweep", help="parameter sweep of the FMU on a Dask cluster",
                              description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    from fmu_wheelset.cli.args import input_file, number, output_dir
    from fmu_wheelset.sweeps.plan import MAX_WORKERS
    p.add_argument("sweep_file", type=input_file,
                   help="sweep TOML (base scenario + [grid] or [random])")
    p.add_argument("--out", default="results", type=output_dir,
                   help="results directory (cases/, summary.csv)")
    p.add_argument("--fmu", help="FMU to run (default: build one into <out>/Wheelset.fmu "
                                 "unless it exists; with --rebuild, build it at --fmu)")
    p.add_argument("--rebuild", action="store_true", help="build the FMU even if <out>/Wheelset.fmu exists")
    p.add_argument("--runner", choices=("fmu", "core"), default="fmu",
                   help="fmu (FMPy, default) or core (solver without the FMU)")
    p.add_argument("--scheduler", help="address of an existing Dask scheduler, tcp://HOST:PORT "
                                       "(default: a local cluster)")
    p.add_argument("--workers", type=number(1, MAX_WORKERS, integer=True),
                   help="local cluster: worker processes (default: one per core)")
    p.add_argument("--resume", action="store_true",
                   help="continue a sweep in --out (what a rerun always does: cases done are "
                        "skipped, failed or damaged ones run again)")
    p.add_argument("--histories", action="store_true",
                   help="also write per-case time histories (histories/<key>.csv and .png)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    """Exit status: 0 when every case ran to the end, 1 when any failed (the table
    of failed cases is printed), 2 for a plan or an option that is wrong."""
    import sys
    from pathlib import Path
    from fmu_wheelset.cli.args import check_fmu_file, output_file
    from fmu_wheelset.sweeps.sweep import load_sweep, run_sweep
    from fmu_wheelset.sweeps.plan import summary_table
    if args.runner == "fmu" and args.fmu:
        # an FMU given is checked before anything runs: one line, not a task error per case
        try:
            if args.rebuild:
                output_file(".fmu", may_create=True)(args.fmu)
            else:
                check_fmu_file(args.fmu)
        except (ValueError, argparse.ArgumentTypeError) as exc:
            print(f"wheelset-fmu sweep: error: --fmu: {exc}", file=sys.stderr)
            return 2
    sweep = load_sweep(args.sweep_file)       # the whole plan is checked here (PlanError)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fmu = None
    if args.runner == "fmu":
        fmu = Path(args.fmu) if args.fmu else out / "Wheelset.fmu"
        if args.rebuild or not fmu.exists():
            from fmu_wheelset.packaging.build import build_fmu
            # both numba targets: a Dask scheduler's workers may run on other CPUs
            build_fmu(fmu, quiet=True,
                      progress=lambda line: print(line, file=sys.stderr, flush=True))
            print(f"built {fmu}")
        else:
            check_fmu_file(fmu)               # <out>/Wheelset.fmu of an earlier run
    print(f"{sweep.source}: {len(sweep.cases)} cases of {sweep.scenario}, "
          f"{sweep.duration:g} s each -> {out}")
    rows = run_sweep(sweep.cases, out, fmu_path=fmu, runner=args.runner,
                     scheduler=args.scheduler, n_workers=args.workers,
                     histories=args.histories, progress=not args.no_progress)
    stats = run_sweep.last_stats
    failed = [r for r in rows if r.get("status") != "ok"]
    print(f"{stats['total']} cases: {stats['skipped']} already done, {stats['ran']} run, "
          f"{len(failed)} failed")
    print(f"wrote {out / 'summary.csv'}" + (f", {out / 'heatmap_max_YQ.png'}"
                                           if (out / 'heatmap_max_YQ.png').exists() else ""))
    if failed:
        print(f"\n{len(failed)} of {stats['total']} cases failed (a rerun with the same --out "
              "retries them):")
        print(summary_table(failed))
        print(f"wheelset-fmu sweep: {len(failed)} of {stats['total']} cases failed (table above, "
              f"{out / 'summary.csv'})", file=sys.stderr)
        return 1
    return 0
