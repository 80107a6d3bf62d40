"""What the wheel-rail interface's parts cost in the core's default step.

On the Ren & Jin scenario (ren-jin-r400-100, from t = 7 s: the curve, the
outer wheel in flange-root contact) this times `WheelsetModel.advance` over
2000 steps of 1 ms (CPU time per step, best of `--repeats`) on the rigid track,
on the rigid track without Hunt & Crossley's damping, and on the default
interface (lumped rails and the damping); then the same in a copy of this
checkout's solver in which each point's Hertz contact takes the curvatures at
the point instead of its patch's (the call of patch_curvature.patch_geometry
knocked out in solver/dynamics/rhs.py). Each in a fresh process; the copy
compiles its own numba cache first (a minute or two). Prints a table and the
CPU; docs/speed.md holds the figures.

usage: PYTHONPATH=. python benchmarks/profile_interface_cost.py [--repeats 2]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from fmu_wheelset.validation.report import cpu_name  # noqa: E402

PATCH_CALL = "        if pen > 0.0 and multipoint:\n"
KNOCKED_OUT = "        if pen > 0.0 and multipoint and False:\n"

CHILD = r"""
import sys, time
from solver.scenarios import load_scenario
from solver.model.wheelset import WheelsetModel

repeats = int(sys.argv[1])
for label, kw in (("rigid track", {}), ("rigid track, no contact damping", {"hunt_crossley": 0.0}),
                  ("lumped rails and contact damping", {"track_model": "lumped", "hunt_crossley": 0.2})):
    params = load_scenario("ren-jin-r400-100", **kw).params
    best, per_step = 1e9, 0.0
    for _ in range(repeats):
        m = WheelsetModel(params)
        m.initialize()
        while m.time < 7.0 - 1e-9:
            m.advance(1e-2)
        r0 = m.rhs_evaluations
        t = time.process_time()
        for _ in range(2000):
            m.advance(1e-3)
        best = min(best, (time.process_time() - t) / 2000 * 1e6)
        per_step = (m.rhs_evaluations - r0) / 2000
    print(f"{label}\t{best:.1f}\t{per_step:.2f}", flush=True)
"""




def run(tree: Path, repeats: int) -> list:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", CHILD, str(repeats)], cwd=tree, env=env,
                         capture_output=True, text=True, check=True).stdout
    return [line.split("\t") for line in out.splitlines() if "\t" in line]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args(argv)
    rhs = (ROOT / "solver" / "dynamics" / "rhs.py").read_text()
    if rhs.count(PATCH_CALL) != 1:
        raise SystemExit("the patch call of solver/dynamics/rhs.py is not where this script "
                         "expects it: update PATCH_CALL")
    print(f"CPU: {cpu_name()}")
    print("Ren & Jin from t = 7 s, 2000 steps of 1 ms, CPU time per step (best of "
          f"{args.repeats}), right-hand sides per step:")
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "tree"
        shutil.copytree(ROOT / "solver", copy / "solver",
                        ignore=shutil.ignore_patterns("__pycache__"))
        target = copy / "solver" / "dynamics" / "rhs.py"
        target.write_text(rhs.replace(PATCH_CALL, KNOCKED_OUT))
        for title, tree in (("this checkout", ROOT), ("without the patch's curvature", copy)):
            print(f" {title}:")
            for label, us, per_step in run(tree, args.repeats):
                print(f"  {label:34s} {float(us):6.1f} us  {float(per_step):5.2f} RHS/step")


if __name__ == "__main__":
    main()
