"""The core's default step against an earlier commit's, measured in one run.

On the Ren & Jin scenario (ren-jin-r400-100: LMA-worn/CHN60, R 400 m, 100
km/h) this times the core with its default parameters (whatever each commit's
defaults are: the integrator, the contact model; the scenario's own rigid
track, and again on the default interface of the lumped rails where the
checkout has them)
advancing by 1 ms communication steps over `--duration` s from t = 7 s (the
curve, the outer wheel in flange contact), in a fresh process per run, the two
commits alternating `--repeats` times. It prints the CPU time per step of
each run, the median of each commit and their ratio (this checkout / the
other), and the CPU the runs shared. Absolute speeds move 2x from one day to
the next on shared machines: the ratio, measured in one run on one machine,
is the figure.

The other commit is checked out once into a temporary git worktree (removed
afterwards); each run compiles nothing new after its first (numba's cache of
that tree), and the first run of each tree is a warm-up, not counted.

usage: python benchmarks/bench_default_step_vs_commit.py --vs 098fe18
       [--duration 2] [--repeats 3]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from fmu_wheelset.validation.report import cpu_name  # noqa: E402

# what each run takes: the scenario as it is (its own track: the published
# comparisons' rigid one), and the scenario on the default interface (the lumped
# rail bodies and Hunt & Crossley's damping, where the checkout has them)
VARIANTS = {"scenario": "the scenario's own parameters",
            "interface": "the scenario on the default interface (lumped rails, contact damping)"}

# what one run does, the same text in both trees (only the public API the two
# commits share: load_scenario, WheelsetModel, initialize, advance)
RUN = r"""
import dataclasses, json, sys, time
from solver.scenarios import load_scenario
from solver.model.wheelset import WheelsetModel

params = load_scenario("ren-jin-r400-100").params
if sys.argv[2] == "interface" and hasattr(params, "track_model"):
    # the default interface (the scenario itself keeps the published rigid track)
    params = dataclasses.replace(params, track_model="lumped", hunt_crossley=0.2)
model = WheelsetModel(params)
model.initialize()
while model.time < 7.0 - 1e-9:                 # to the curve, not timed
    model.advance(1e-2)
n = int(round(float(sys.argv[1]) / 1e-3))
cpu = time.process_time()
for _ in range(n):
    result = model.advance(1e-3)
    if result.status != "ok":
        raise SystemExit(result.message)
cpu = time.process_time() - cpu
print(json.dumps({"cpu_per_step_us": cpu / n * 1e6, "steps": n}))
"""




def one_run(tree: Path, duration: float, variant: str) -> float:
    out = subprocess.run([sys.executable, "-c", RUN, str(duration), variant], cwd=tree, check=True,
                         capture_output=True, text=True, env={"PYTHONPATH": str(tree),
                                                               "PATH": "/usr/bin:/bin"})
    return json.loads(out.stdout.strip().splitlines()[-1])["cpu_per_step_us"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vs", required=True, help="the commit to compare against")
    parser.add_argument("--duration", type=float, default=2.0, help="timed seconds of simulation")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="bench-vs-") as tmp:
        other = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", str(other), args.vs], cwd=ROOT,
                       check=True, capture_output=True)
        try:
            trees = {f"this checkout ({head})": ROOT, f"{args.vs}": other}
            for tree in trees.values():
                one_run(tree, 0.05, "scenario")      # warm-up: numba's cache of the tree
            times = {(variant, name): [] for variant in VARIANTS for name in trees}
            for _ in range(args.repeats):
                for variant in VARIANTS:
                    for name, tree in trees.items():
                        times[(variant, name)].append(one_run(tree, args.duration, variant))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=ROOT,
                           capture_output=True)
    print(f"CPU: {cpu_name()}")
    print(f"Ren & Jin from t = 7 s, {args.duration:g} s in 1 ms steps, defaults, CPU time per step:")
    for variant in VARIANTS:
        print(f" {VARIANTS[variant]}:")
        medians = []
        for name in trees:
            values = times[(variant, name)]
            medians.append(statistics.median(values))
            print(f"  {name:32s} " + "  ".join(f"{v:7.1f}" for v in values)
                  + f"  median {medians[-1]:7.1f} us")
        print(f"  ratio (this checkout / {args.vs}): {medians[0] / medians[1]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
