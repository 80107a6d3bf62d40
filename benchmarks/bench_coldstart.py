"""Cold start of the FMU (issue 17): a fresh extraction in a NEW process, the
time of fmi2Instantiate + initialization + the first doStep, with the numba
cache the build ships inside the FMU and without it, in one run.

Each case: the FMU extracted into a new folder, an empty private cache root
(WHEELSET_FMU_CACHE), and the C host of tests/c_host (dlopen + the FMI 2.0 C
API, no environment set-up) run for ONE 1 ms step. The figure is the wall time
of the whole host process (process start, dlopen, the Python start, instantiate,
initialize, one step, free): an upper bound of instantiate + init + first step.
"Without" removes resources/wheelset_numba_cache from the extraction (the FMU
then compiles every kernel it needs, as an FMU without a shipped cache does).
"warm" runs a second time on the same cache root (the per-user cache copy kept
across extractions). Goal: <= 3 s with the shipped cache.

usage: PYTHONPATH=. python benchmarks/bench_coldstart.py [--fmu F] [--repeat N]
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def compile_host(workdir: Path) -> str:
    import fmpy
    cc = shutil.which("cc") or shutil.which("gcc")
    exe = workdir / "host"
    subprocess.run([cc, "-O1", "-o", str(exe), str(ROOT / "tests" / "c_host" / "host.c"),
                    f"-I{Path(fmpy.__file__).parent / 'c-code'}", "-ldl", "-lm"], check=True)
    return str(exe)


def run_once(host: str, fmu: str, guid: str, vr_y: int, workdir: Path, *, shipped: bool,
             cache_root: Path | None = None) -> tuple[float, str, Path]:
    unzipped = Path(tempfile.mkdtemp(prefix="extract-", dir=workdir))
    with zipfile.ZipFile(fmu) as z:
        z.extractall(unzipped)
    if not shipped:
        shutil.rmtree(unzipped / "resources" / "wheelset_numba_cache", ignore_errors=True)
    if cache_root is None:
        cache_root = Path(tempfile.mkdtemp(prefix="cache-", dir=workdir))
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"),
           "WHEELSET_FMU_CACHE": str(cache_root)}
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([host, str(unzipped), guid, "0.001", "1", f"o:{vr_y}"], env=env,
                          capture_output=True, text=True, timeout=1800)
    elapsed = time.perf_counter() - start
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    if proc.returncode != 0:
        raise RuntimeError(f"host exit {proc.returncode}: {proc.stderr[-2000:]}")
    note = next((line.split("solver imported from", 1)[1].strip()
                 for line in proc.stderr.splitlines() if "solver imported from" in line), "")
    return elapsed, cpu, note, cache_root


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fmu", help="a built FMU (default: build one now)")
    parser.add_argument("--repeat", type=int, default=2, help="runs per case (best is printed)")
    args = parser.parse_args(argv)
    from fmpy import read_model_description
    with tempfile.TemporaryDirectory(prefix="bench_coldstart_") as tmp:
        workdir = Path(tmp)
        fmu = args.fmu
        if fmu is None:
            from fmu_wheelset.build import build_fmu
            t0 = time.perf_counter()
            fmu = str(build_fmu(workdir / "Wheelset.fmu", quiet=True))
            print(f"built the FMU with its numba cache in {time.perf_counter() - t0:.0f} s")
        md = read_model_description(fmu)
        vr_y = next(v.valueReference for v in md.modelVariables if v.name == "wheelset.y")
        host = compile_host(workdir)
        results = {}
        for case, shipped in (("shipped cache", True), ("no shipped cache", False)):
            runs = []
            for _ in range(max(1, args.repeat)):
                elapsed, cpu, note, root = run_once(host, fmu, md.guid, vr_y, workdir,
                                                    shipped=shipped)
                runs.append((elapsed, cpu))
            warm, _, _, _ = run_once(host, fmu, md.guid, vr_y, workdir, shipped=shipped,
                                          cache_root=root)
            results[case] = (min(r[0] for r in runs), runs, note, warm)
        load = os.getloadavg()[0]
        print(f"fresh extraction + new process (C host, 1 step of 1 ms; load average {load:.1f} "
              f"on {os.cpu_count()} cores)")
        for case, (best, runs, note, warm) in results.items():
            print(f"  {case:17s}: {best:6.2f} s  (runs {', '.join(f'{r:.2f} s wall / {c:.2f} s CPU' for r, c in runs)}; "
                  f"then with the kept per-user cache {warm:.2f} s)")
            print(f"  {'':17s}  log: ...{note[-110:]}")
        with_cache = results["shipped cache"][0]
        without = results["no shipped cache"][0]
        print(f"  ratio without / with the shipped cache: {without / with_cache:.1f}x; "
              f"goal <= 3 s with it: {'met' if with_cache <= 3.0 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
