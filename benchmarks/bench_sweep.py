"""Sweep throughput on Dask: cases per minute on 1 and 2 local worker processes
(threads_per_worker=1) and the scaling ratio.

    python benchmarks/bench_sweep.py [--fmu Wheelset.fmu] [--cases 8] [--duration 1.0]

Each worker first runs one tiny untimed case (FMU extraction, imports, numba
cache load), then the timed sweep of `--cases` cases (speed x radius grid,
Kang's S1002/UIC60 wheelset, 10 ms communication steps) runs into a fresh
results directory. Note: the 2 cores of the machine may be shared."""
from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fmu_wheelset.sweeps import sweep as sw  # noqa: E402


def bench_cases(n, duration):
    speeds = [60.0, 70.0, 80.0, 90.0, 100.0, 110.0, 120.0, 130.0]
    radii = [300.0, 400.0, 600.0, 800.0]
    out = []
    for r in radii:
        for v in speeds:
            out.append(sw.make_case({"speed_kmh": v, "radius_m": r, "cant_deficiency_mm": 80.0},
                                    duration=duration, ramp_time=0.3))
    return out[:n]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fmu", help="FMU file (default: build one in a temp dir)")
    ap.add_argument("--runner", choices=("fmu", "core"), default="fmu")
    ap.add_argument("--cases", type=int, default=8)
    ap.add_argument("--duration", type=float, default=1.0)
    args = ap.parse_args(argv)
    from distributed import Client, LocalCluster
    with tempfile.TemporaryDirectory(prefix="bench_sweep_") as tmp:
        fmu = None
        if args.runner == "fmu":
            fmu = args.fmu
            if fmu is None:
                from fmu_wheelset.packaging.build import build_fmu
                fmu = str(build_fmu(Path(tmp) / "Wheelset.fmu", quiet=True))
        cases = bench_cases(args.cases, args.duration)
        rates = {}
        for n_workers in (1, 2):
            cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            client = Client(cluster)
            try:
                blob = None
                if fmu:
                    data = Path(fmu).read_bytes()
                    blob = (hashlib.sha256(data).hexdigest(), data)
                warm = sw.make_case({"speed_kmh": 80.0, "radius_m": 500.0}, duration=0.05)
                client.run(sw.dask_task, blob, warm)          # every worker, untimed
                t0 = time.perf_counter()
                rows = sw.run_sweep(cases, Path(tmp) / f"res{n_workers}", fmu_path=fmu,
                                    runner=args.runner, client=client, progress=False, plot=False)
                wall = time.perf_counter() - t0
            finally:
                client.close()
                cluster.close()
            failed = sum(r["status"] != "ok" for r in rows)
            per_case = sum(float(r.get("wall_s", 0.0)) for r in rows) / max(len(rows), 1)
            rates[n_workers] = len(cases) / wall * 60.0
            print(f"{n_workers} worker process(es): {len(cases)} cases x {args.duration:g} s "
                  f"({args.runner}) in {wall:.1f} s wall -> {rates[n_workers]:.1f} cases/min "
                  f"(mean {per_case:.2f} s per case inside the task)"
                  + (f" ({failed} failed)" if failed else ""))
        print(f"scaling ratio 2/1 workers: {rates[2] / rates[1]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
