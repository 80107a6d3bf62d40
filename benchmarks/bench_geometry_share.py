"""What the contact geometry costs inside a whole RK4 run, and what RK4 could
reach with a table that cost nothing.

`bench_speed.py` bounds RK4 with a free table by 4 x the RHS without geometry
at the curve's state. That leaves out what a run does besides its RHS (the
integrator, the track samples, the RHS for the outputs at the end of each
advance, the step's bookkeeping). This benchmark measures the geometry's share
of the whole run instead, by difference:

  - the Ren & Jin R400 100 km/h scenario, RK4 at 1 ms, 12 s, is run through
    the model's compiled step alone (`fast_step.core_step`, 10 ms per call, as
    the scenario's output interval: no Python per step), online and table;
  - the same with a copy of `solver/` in a temporary folder in which
    `dynamics.locate_contacts` runs its contact geometry (search or update) twice
    per call, the second time at the same pose (a guard that is never true
    keeps the compiler from merging the two);
  - geometry per step = (twice - once) / steps; a step without geometry =
    once - geometry; its real-time factor is what RK4 at 1 ms could reach with
    a table that answered in no time, to be held against the target of 300x.

The second call of the contact update starts at the points the first one has
just re-located, so it may walk less: the geometry's cost is then
underestimated and the bound printed for a free table is too high, not too low.
`profile_rhs.py` gives the same cost from the other side (search + 3 updates at
the curve's state).

The copy compiles its own numba cache (about 90 s, in the temporary folder,
deleted at the end); the two trees then run interleaved, REPEATS pairs, min.
CPU time. Measured figures only, no pass/fail.

Run: PYTHONPATH=. python benchmarks/bench_geometry_share.py [repeats]
"""
from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = "ren-jin-r400-100"
DURATION = 12.0      # s: the scenario's
ADVANCE = 0.01       # s per compiled call (the scenario's output interval)
INTERNAL_STEP = 1e-3  # s: RK4's step in the scenario (checked by the worker)
TARGET_TABLE = 300.0  # target: >= 300x real time with the table

# The copy runs the contact geometry block of dynamics.locate_contacts (the `if
# reuse_geometry: ... elif update_only: ... else: <search>` statement) a second
# time, found in the source by its syntax tree, not by its text.
GEOMETRY_CALLS = ("wheelset_contact_update(", "wheelset_table_kernel(",
                  "wheelset_contact_tracked(")
# false for every finite state (x is a NaN only in a state the integrator rejects), but
# the compiler cannot know it, so it keeps the second call
NEVER_TRUE_GUARD = "if reuse_geometry or not pose.y == pose.y:"


def geometry_block_lines(source: str) -> tuple[int, int]:
    """(first, last) line, 1-based, of the geometry statement of the right-hand side
    (locate_contacts, its first stage): the `if` whose test is `reuse_geometry`;
    it must hold every call of GEOMETRY_CALLS."""
    tree = ast.parse(source)
    rhs = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "locate_contacts"]
    found = [node for node in (rhs[0].body if rhs else [])
             if isinstance(node, ast.If) and ast.unparse(node.test) == "reuse_geometry"]
    if len(found) != 1:
        raise SystemExit("dynamics.locate_contacts has no single `if reuse_geometry:` statement: "
                         "update bench_geometry_share.py")
    first, last = found[0].lineno, found[0].end_lineno
    block = "\n".join(source.splitlines()[first - 1:last])
    missing = [call for call in GEOMETRY_CALLS if call not in block]
    if missing:
        raise SystemExit(f"the geometry statement of locate_contacts lacks {missing}: "
                         "update bench_geometry_share.py")
    return first, last


def _worker() -> None:
    """Run the scenario through core_step, online and table; print one JSON line."""
    from solver.model import fast_step
    from solver.scenarios import load_scenario
    from solver.model.wheelset import WheelsetModel

    repeats = int(sys.argv[2])
    n_calls = int(round(DURATION / ADVANCE))
    n_sub = int(round(ADVANCE / INTERNAL_STEP))
    out = {}
    for geometry in ("online", "table"):
        scenario = load_scenario(SCENARIO, contact_geometry=geometry)
        if abs(scenario.params.internal_step - INTERNAL_STEP) > 1e-12:
            raise SystemExit(f"the scenario's internal step is {scenario.params.internal_step}, "
                             f"this benchmark assumes {INTERNAL_STEP}")
        best = None
        for _ in range(repeats):
            model = WheelsetModel(scenario.params)
            model.initialize()
            u, block = model.arrays.inputs, model.core_step_block()
            speed, flange_passed = float(model.params.speed), model.flange_passed
            step = fast_step.core_step
            c0 = time.process_time()
            for _ in range(n_calls):
                code, _where, _n = step(ADVANCE, n_sub, u, speed, flange_passed, *block)
                if code != 0:
                    raise SystemExit(f"{geometry}: the compiled step reported problem {code}")
            cpu = time.process_time() - c0
            best = cpu if best is None else min(best, cpu)
        out[geometry] = best / (n_calls * n_sub)      # s of CPU per 1 ms step
    print(json.dumps(out))


def _copy_with_geometry_twice(dest: Path) -> None:
    shutil.copytree(ROOT / "solver", dest / "solver",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc"))
    path = dest / "solver" / "dynamics" / "rhs.py"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    first, last = geometry_block_lines("".join(lines))
    block = lines[first - 1:last]
    indent = block[0][:len(block[0]) - len(block[0].lstrip())]
    again = [indent + NEVER_TRUE_GUARD + "\n"] + block[1:]
    path.write_text("".join(lines[:last] + again + lines[last:]), encoding="utf-8")


def _run(tree: Path, cache: Path | None, repeats: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", str(repeats)],
                          env=env, cwd=str(tree), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the worker in {tree} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with tempfile.TemporaryDirectory(prefix="geometry-twice-") as tmp:
        tmp = Path(tmp)
        _copy_with_geometry_twice(tmp)
        cache = tmp / "numba-cache"
        cache.mkdir()
        t0 = time.perf_counter()
        _run(tmp, cache, 1)                      # compile the copy (and load main's cache)
        _run(ROOT, None, 1)
        print(f"compiled the copy with the geometry twice in {time.perf_counter() - t0:.0f} s")
        once = {"online": [], "table": []}
        twice = {"online": [], "table": []}
        for _ in range(repeats):
            for key, value in _run(ROOT, None, 3).items():
                once[key].append(value)
            for key, value in _run(tmp, cache, 3).items():
                twice[key].append(value)
    print(f"scenario {SCENARIO}: RK4 at {INTERNAL_STEP * 1e3:g} ms, {DURATION:g} s, the compiled step "
          f"alone ({ADVANCE * 1e3:g} ms a call), CPU time, min of {repeats} interleaved pairs "
          "(of 3 runs each)")
    for geometry in ("online", "table"):
        a, b = min(once[geometry]), min(twice[geometry])
        per_geometry = b - a
        without = a - per_geometry
        print(f"[{geometry}] a step {a * 1e6:.2f} us (real-time factor {1e-3 / a:.1f}x), with the "
              f"geometry twice {b * 1e6:.2f} us: geometry {per_geometry * 1e6:.2f} us a step "
              f"({per_geometry / a * 100:.0f} % of the run)")
        print(f"  a step without any contact geometry {without * 1e6:.2f} us: RK4 at 1 ms with a "
              f"free table at most {1e-3 / without:.0f}x real time; the issue's {TARGET_TABLE:g}x "
              f"needs {1e-3 / TARGET_TABLE * 1e6:.2f} us a step: measured bound / target = "
              f"{1e-3 / without / TARGET_TABLE:.2f}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker()
    else:
        main()
