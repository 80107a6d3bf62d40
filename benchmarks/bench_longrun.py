"""Long runs of the wheelset FMU through fmpy: memory over many doSteps
and over instantiate/free cycles.

    python benchmarks/bench_longrun.py [--steps 1000000] [--cycles 100]
                                       [--budget 900] [--step 1e-4]

Cheap configuration: S1002/UIC60, Kalker, single point, straight track, a
static 60 kN load per axle box, communication step = internal step (--step,
default 0.1 ms, one RK4 substep per doStep). RSS (from /proc/self/statm, else
peak RSS from resource) is printed at intervals; the growth is measured from
after a warm-up (the first 1 % of the steps, at least 1000). If the requested
number of steps does not fit in --budget seconds, the run stops there and the
growth is extrapolated linearly to --steps (said so in the output).
"""
from __future__ import annotations

import argparse
import gc
import resource
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fmpy import read_model_description  # noqa: E402
from fmpy.fmi2 import FMU2Slave  # noqa: E402

from fmu_wheelset.packaging.build import build_fmu  # noqa: E402

BOX_LOAD = -6.0e4


def rss_mb() -> float:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * resource.getpagesize() / 2 ** 20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def make(md, unzipped, name, step):
    s = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier="Wheelset", instanceName=name)
    s.instantiate(loggingOn=False)
    vr = {v.name: v.valueReference for v in md.modelVariables}
    s.setInteger([vr["contact.creep_model"], vr["contact.model"]], [0, 0])
    s.setReal([vr["solver.internal_step"]], [step])
    s.setupExperiment(startTime=0.0)
    s.enterInitializationMode()
    s.exitInitializationMode()
    s.setReal([vr["axlebox.left.force.z"], vr["axlebox.right.force.z"]], [BOX_LOAD, BOX_LOAD])
    return s, vr


def long_run(md, unzipped, steps, step, budget):
    s, vr = make(md, unzipped, "longrun", step)
    out = [vr["wheelset.z"], vr["wheel.left.Q"]]
    warm = max(1000, steps // 100)
    interval = max(warm, steps // 20)
    t = 0.0
    t0 = time.perf_counter()
    base = None
    done = 0
    print(f"doSteps: {steps} requested, h = {step:g} s, budget {budget:g} s")
    print(f"{'steps':>10} {'elapsed s':>10} {'RSS MB':>9} {'us/step':>8}")
    for k in range(1, steps + 1):
        s.doStep(currentCommunicationPoint=t, communicationStepSize=step)
        t = k * step
        if k % 100 == 0:
            s.getReal(out)                # a host reads outputs too
        if k == warm:
            base = (k, rss_mb(), time.perf_counter() - t0)
            print(f"{k:>10} {base[2]:>10.1f} {base[1]:>9.1f} {1e6 * base[2] / k:>8.1f}  (warm-up end)")
        elif k % interval == 0:
            el = time.perf_counter() - t0
            print(f"{k:>10} {el:>10.1f} {rss_mb():>9.1f} {1e6 * el / k:>8.1f}")
        done = k
        if time.perf_counter() - t0 > budget:
            break
    elapsed = time.perf_counter() - t0
    end = rss_mb()
    z, q = s.getReal(out)
    s.terminate()
    s.freeInstance()
    if base is None:
        print("budget too small for the warm-up; no growth figure")
        return
    growth = end - base[1]
    n = done - base[0]
    print(f"done {done} doSteps in {elapsed:.1f} s ({1e6 * elapsed / done:.1f} us/step); "
          f"final z = {z:.6f} m, Q_left = {q:.1f} N")
    print(f"RSS growth after warm-up: {growth:+.2f} MB over {n} doSteps "
          f"({1e3 * growth / max(n, 1):+.4f} kB/step)")
    if done < steps:
        extra = growth * (steps - base[0]) / max(n, 1)
        print(f"EXTRAPOLATED (linear, {done} of {steps} steps run within the budget): "
              f"{extra:+.2f} MB over {steps - base[0]} doSteps, "
              f"{steps * elapsed / done / 60:.1f} min estimated for {steps}")


def cycles(md, unzipped, n, step):
    print(f"instantiate/initialize/10 doSteps/free cycles: {n}")
    samples = []
    t0 = time.perf_counter()
    for k in range(1, n + 1):
        s, _ = make(md, unzipped, f"cycle{k}", step)
        t = 0.0
        for i in range(10):
            s.doStep(currentCommunicationPoint=t, communicationStepSize=step)
            t = (i + 1) * step
        s.terminate()
        s.freeInstance()
        # FMPy's FMU2Slave is cyclic garbage of the host (~300 objects); the slave
        # has no cycles. Collect so that the figure is the FMU's.
        gc.collect()
        if k in (1, 10) or k % max(1, n // 5) == 0:
            samples.append((k, rss_mb()))
            print(f"  cycle {k:>5}: RSS {samples[-1][1]:.1f} MB ({time.perf_counter() - t0:.1f} s)")
    base = dict(samples).get(10, samples[0][1])
    growth = samples[-1][1] - base
    print(f"RSS growth over cycles 10..{n}: {growth:+.2f} MB ({1e3 * growth / max(n - 10, 1):+.1f} kB/cycle)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1_000_000)
    ap.add_argument("--cycles", type=int, default=100)
    ap.add_argument("--step", type=float, default=1e-4, help="communication = internal step (s)")
    ap.add_argument("--budget", type=float, default=900.0, help="seconds for the long run")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        fmu = build_fmu(Path(tmp) / "Wheelset.fmu", quiet=True)
        unzipped = str(Path(tmp) / "unzipped")
        with zipfile.ZipFile(str(fmu)) as z:
            z.extractall(unzipped)
        md = read_model_description(unzipped)
        print(f"RSS at start: {rss_mb():.1f} MB")
        if args.cycles:
            cycles(md, unzipped, args.cycles, args.step)
        if args.steps:
            long_run(md, unzipped, args.steps, args.step, args.budget)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
