"""Out-of-process mode: per-step cost against in-process, in one run.

The plain C host of tests/c_host (--timing) runs the FMU for N steps of 1 ms,
reading every Real output after each doStep, once in-process and once with
WHEELSET_FMU_OUT_OF_PROCESS=1 (the slave in a worker process, every FMI call
forwarded over shared memory), alternating A/B/A/B so machine load hits both
alike; it prints the per-step wall time of each, the overhead per step
(goal <= 20 us) and the time a SIGKILLed worker takes to be reported as
fmi2Error (goal < 1 s).

usage: python benchmarks/bench_out_of_process.py [--fmu FILE] [--steps 2000] [--repeats 3]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fmu", help="an FMU built with the native front end (default: build one)")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import fmpy
    from fmpy import read_model_description
    include = Path(fmpy.__file__).parent / "c-code"
    cc = shutil.which("cc") or shutil.which("gcc")
    with tempfile.TemporaryDirectory(prefix="bench_oop_") as tmp:
        tmp = Path(tmp)
        fmu = args.fmu
        if fmu is None:
            from fmu_wheelset.packaging.build import build_fmu
            fmu = str(build_fmu(tmp / "Wheelset.fmu", quiet=True))
        unzipped = tmp / "fmu"
        with zipfile.ZipFile(fmu) as z:
            z.extractall(unzipped)
        md = read_model_description(fmu)
        outputs = [f"o:{v.valueReference}" for v in md.modelVariables
                   if v.causality == "output" and v.type == "Real"]
        hosts = {}
        for name in ("host", "kill_worker_host"):
            hosts[name] = tmp / name
            subprocess.run([cc, "-O2", "-o", str(hosts[name]), str(ROOT / "tests" / "c_host" / f"{name}.c"),
                            f"-I{include}", "-ldl", "-lm"], check=True)
        env = {"PATH": "/usr/bin:/bin", **{k: os.environ[k] for k in ("HOME",) if k in os.environ}}
        per_step = {"in-process": [], "out-of-process": []}
        for _ in range(args.repeats):
            for mode, extra in (("in-process", {}), ("out-of-process", {"WHEELSET_FMU_OUT_OF_PROCESS": "1"})):
                run = subprocess.run([str(hosts["host"]), "--timing", str(unzipped), md.guid, "0.001",
                                      str(args.steps), *outputs], env={**env, **extra},
                                     capture_output=True, text=True, timeout=600)
                if run.returncode != 0:
                    raise RuntimeError(run.stderr[-2000:])
                wall = float(re.search(r"([0-9.]+) s wall", run.stderr).group(1))
                per_step[mode].append(wall / args.steps)
        best = {mode: min(v) for mode, v in per_step.items()}
        print(f"C host, {args.steps} steps of 1 ms, {len(outputs)} Real outputs read every step "
              f"(best of {args.repeats}, load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores):")
        for mode, value in best.items():
            print(f"  {mode:15s} {value * 1e6:8.1f} us per step  (all runs: "
                  f"{', '.join(f'{v * 1e6:.0f}' for v in per_step[mode])})")
        overhead = best["out-of-process"] - best["in-process"]
        print(f"  overhead of the worker process: {overhead * 1e6:.1f} us per step "
              f"(goal <= 20 us: {'met' if overhead <= 20e-6 else 'NOT met'})")
        kill = subprocess.run([str(hosts["kill_worker_host"]), str(unzipped), md.guid, "0.001", "20"],
                              env={**env, "WHEELSET_FMU_OUT_OF_PROCESS": "1"},
                              capture_output=True, text=True, timeout=600)
        print(f"  killed worker: {kill.stdout.strip()} (host exit {kill.returncode}; goal < 1000 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
