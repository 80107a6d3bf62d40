"""How long a new user waits: `make demo` and `make fmu` in a fresh clone.

    python benchmarks/time_setup.py [--keep]

Clones this checkout's HEAD into a temporary folder and runs there, as a new
user would, with pip's cache as it is on this machine (warm) and an empty
numba cache (its own WHEELSET_FMU_CACHE folder): `make demo` (the virtual
environment with what the demo needs, then the demo: the FMU's build and the
validation suite), then, with another empty numba cache, `make fmu` (the FMU
alone). Prints each step's wall time, the CPU time of all its processes and
the machine's load (the 1-min load average sampled every 5 s while it ran:
the machine is shared, so the CPU time is the figure to compare), and writes
them to docs/figures.json ("setup"), from which docs/figures.py puts them into
the README. It never asserts (a benchmark).
"""
from __future__ import annotations

import datetime
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STORED = ROOT / "docs" / "figures.json"


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command, cwd, env, log):
    """(wall s, CPU s of the command's processes, mean 1-min load, its output)."""
    loads, done = [], threading.Event()

    def sample():
        while not done.wait(5.0):
            loads.append(os.getloadavg()[0])
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    cpu0, t0 = cpu_of_children(), time.monotonic()
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    wall, cpu = time.monotonic() - t0, cpu_of_children() - cpu0
    done.set()
    sampler.join()
    log.write(f"$ {' '.join(command)}\n{proc.stdout}{proc.stderr}\n")
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}); see {log.name}")
    load = sum(loads) / len(loads) if loads else os.getloadavg()[0]
    return wall, cpu, load, proc.stdout + proc.stderr


def machine() -> str:
    sys.path.insert(0, str(ROOT))
    from fmu_wheelset.validation.report import machine as describe
    return describe()


def minutes(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m} min {s} s" if m else f"{s} s"


def main(argv=None) -> int:
    keep = "--keep" in (argv if argv is not None else sys.argv[1:])
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    folder = Path(tempfile.mkdtemp(prefix="wheelset-fresh-clone-"))
    log_path = folder.parent / f"{folder.name}.log"
    results = {}
    try:
        clone = folder / "wheelset-fmu"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "-q", commit], check=True)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("VIRTUAL_ENV", "NUMBA_", "WHEELSET_FMU", "PYTHONPATH"))}
        with open(log_path, "w", encoding="utf-8") as log:
            env["WHEELSET_FMU_CACHE"] = str(folder / "numba-cache-demo")
            venv = timed(["make", ".venv/.demo-stamp"], clone, env, log)
            print(f"make: the virtual environment {minutes(venv[0])} (CPU {minutes(venv[1])}, "
                  f"load {venv[2]:.1f})", flush=True)
            demo = timed(["make", "demo"], clone, env, log)
            built = re.search(r"built in ([\d.]+) s", demo[3])
            build = float(built.group(1)) if built else float("nan")
            print(f"make demo after it {minutes(demo[0])} (CPU {minutes(demo[1])}, load "
                  f"{demo[2]:.1f}); of it the FMU's build {minutes(build)}", flush=True)
            env["WHEELSET_FMU_CACHE"] = str(folder / "numba-cache-fmu")
            fmu = timed(["make", "fmu"], clone, env, log)
            print(f"make fmu {minutes(fmu[0])} (CPU {minutes(fmu[1])}, load {fmu[2]:.1f})",
                  flush=True)
        total, total_cpu = venv[0] + demo[0], venv[1] + demo[1]
        load = (venv[2] * venv[0] + demo[2] * demo[0]) / total
        results = {
            "make_demo": f"{minutes(total)} (CPU {minutes(total_cpu)}; load {load:.1f})",
            "fmu_build": minutes(build),
            "make_fmu": f"{minutes(fmu[0])} (CPU {minutes(fmu[1])}; load {fmu[2]:.1f})",
            "measured": f"{datetime.date.today().isoformat()}, commit {commit}, {machine()}, "
                        "warm pip cache, empty numba cache",
        }
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    stored = json.loads(STORED.read_text(encoding="utf-8")) if STORED.exists() else {}
    stored["setup"] = results
    STORED.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {STORED} (log: {log_path})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
