"""Speed of the wheelset core, online and tabulated contact geometry.

On the Ren & Jin R = 400 m, 100 km/h scenario (LMA-worn/CHN60, Polach creep,
RK4 at 1 ms) this prints, for contact_geometry = "online" and "table":
  - the real-time factor of the core alone (advance only, no recording) over
    the full 12 s, min and median of REPEATS runs, wall and CPU time, advancing
    by the scenario's output interval (10 ms) and by 1 ms (the FMU's
    communication step: every advance ends with the evaluation for the outputs);
  - in the curve (t = 9 s, outer wheel in two-point flange contact): the cost
    of one right-hand side with the contact search of the first RK4 stage (as
    the integrator runs it: online the minima of the last full scan re-located,
    geometry.wheelset_contact_tracked, or the table; online also with the full
    scan of the profiles forced at every call), of one with the contact update
    (the other three stages), and their mean per RHS as the integrator calls
    them (1 search + 3 updates per step; online the search a full scan in the
    share of the run's searches that scanned, printed);
  - the build time and size of the table, and the cost of an RHS without any
    contact geometry (the points of the last search reused): the floor under
    any table, which bounds RK4's real-time factor with a table (4 per step);
  - the largest difference of the scenario's output columns between the two,
    and how many of the table run's searches (at its recorded states) the table
    handed to the online scan (a zero difference is expected: the table only
    chooses the minima, each point is re-located with the online arithmetic,
    solver/contact/geometry/table.py);
the same runs with the adaptive RK23 integrator and with the linearly implicit
Rosenbrock W-method (steps of at most 10 ms, tolerances 1e-4 and 1e-3: the
configurations that reach the real-time targets); the accuracy of the
fixed-step RK4, of RK23 and of the Rosenbrock runs against a converged run
(RK45, tolerance 1e-10), i.e. what each speed figure buys;
and the ratios to the targets (RHS <= 2 us online, <= 1 us table;
>= 150x / >= 300x real time). The machine may be shared: the CPU-time figures
are the ones to compare; min and median both printed. Measured figures only,
no pass/fail.

Run: PYTHONPATH=. python benchmarks/bench_speed.py [repeats]
"""
import statistics
import sys
import time

import numpy as np
from numba import njit

from solver.contact.geometry.setup import WheelsetPose
from solver.layout import TR_COUNT, TR_SCANS, TR_TRACKED, W_TRACK_HEAD
from solver.contact.geometry import table as geometry_table
from solver.layout import S_ROLL, S_Y, S_YAW, S_Z
from solver.dynamics.rhs import StepInputs, TrackPoint, wheelset_rhs
from solver.scenarios import load_scenario, simulate
from solver.model.wheelset import WheelsetModel

SCENARIO = "ren-jin-r400-100"
# the Rosenbrock configurations measured: (largest step s, tolerance)
ROSENBROCK_RUNS = ((1e-2, 1e-4), (1e-2, 1e-3))
TARGET_RHS_US = {"online": 2.0, "table": 1.0}
TARGET_RTF = {"online": 150.0, "table": 300.0}


@njit
def _rhs_loop(n, state, model, zero, contact, d, update_only, scan=False, no_search=False):
    """n right-hand sides at `state`, as the integrator's stages call them (the
    contact rows not filled: only a step's last RHS fills them, for the outputs);
    scan: forget the tracked minima before each, so that the online search scans
    the profiles every time; no_search: the contact points in `search` reused as
    they are (no geometry at all)."""
    search = contact.search
    track = TrackPoint(1.0 / 400.0, 0.0, -0.08)
    inputs = StepInputs(zero, zero, zero, zero, 0.0)
    for _ in range(n):
        if scan:
            search.work[W_TRACK_HEAD, TR_COUNT] = 0.0
            search.work[W_TRACK_HEAD + 1, TR_COUNT] = 0.0
        wheelset_rhs(state, track, model, inputs, contact, d, update_only, no_search, False)


def _min_median(values):
    return min(values), statistics.median(values)


def _core_runs(params, duration, output_interval, repeats):
    walls, cpus = [], []
    for _ in range(repeats):
        core = WheelsetModel(params)
        core.initialize()
        n_out = int(round(duration / output_interval))
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(n_out):
            core.advance(output_interval)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return walls, cpus, core.rhs_evaluations


def _scan_share(params, duration, output_interval):
    """(full scans, searches) of the online search over a run, both wheels."""
    core = WheelsetModel(params)
    core.initialize()
    for _ in range(int(round(duration / output_interval))):
        core.advance(output_interval)
    head = core.arrays.search.work[W_TRACK_HEAD:W_TRACK_HEAD + 2]
    scans = int(head[:, TR_SCANS].sum())
    return scans, scans + int(head[:, TR_TRACKED].sum())


def _table_fallbacks(params, duration, output_interval):
    """Wheels, at the recorded states of a table run, that the table kernel hands
    to the online scan (pose outside the table or a branch not re-located)."""
    model = WheelsetModel(params)
    model.initialize()
    buffers = model.setup.buffers()
    online, total = 0, 0
    for _ in range(int(round(duration / output_interval))):
        model.advance(output_interval)
        st = model.state
        pose = WheelsetPose(st[S_Y], st[S_Z], st[S_ROLL], st[S_YAW])
        table_search = model.step_contact.table_search
        online += geometry_table.wheelset_table_kernel(model.setup.tables, table_search.arrays, pose,
                                                       np.zeros((2, 3)), -1.0, buffers,
                                                       table_search.scratch)
        total += 2
    return online, total


def _rhs_costs(params, repeats, n=20000):
    model = WheelsetModel(params)
    model.initialize()
    for _ in range(900):
        model.advance(0.01)
    su = model.setup
    zero = np.zeros((2, 3))
    state = model.state.copy()
    args = (state, model.model, zero, model.step_contact, model.arrays.deriv)

    def us_per_rhs(update_only, scan=False, no_search=False, calls=n):
        c0 = time.process_time()
        _rhs_loop(calls, *args, update_only, scan, no_search)
        return (time.process_time() - c0) / calls * 1e6

    for update_only, scan_flag, no_search in ((False, False, False), (True, False, False),
                                              (False, True, False), (False, False, True)):
        us_per_rhs(update_only, scan_flag, no_search, calls=2)      # compile each variant

    full, update, scan, reused = [], [], [], []
    for _ in range(repeats):
        _rhs_loop(1, *args, False)      # the points of a full search at this state
        full.append(us_per_rhs(False))
        update.append(us_per_rhs(True))
        scan.append(us_per_rhs(False, scan=True))   # the full scan of the profiles every time
        _rhs_loop(1, *args, False)      # again: the scans above forgot the tracked minima
        reused.append(us_per_rhs(False, no_search=True))   # no search: the points of the last one
    return full, update, scan, reused, [int(c) for c in model.arrays.search.counts]


def _integrator_rows(label, geometry, repeats, **settings):
    """The core alone with the integrator `settings` (load_scenario keywords), at
    the scenario's 10 ms advances and at 1 ms advances: CPU time, real-time
    factor and its ratio to the target."""
    scenario = load_scenario(SCENARIO, contact_geometry=geometry, **settings)
    simulate(load_scenario(SCENARIO, contact_geometry=geometry, duration=0.05, **settings))
    params = scenario.params
    for interval in (scenario.output_interval, 0.001):
        _, cpus, n_rhs = _core_runs(params, scenario.duration, interval, repeats)
        cpu_min, cpu_med = _min_median(cpus)
        print(f"  core alone, {label} (tolerance {params.tolerance:g}, steps <= "
              f"{params.internal_step * 1e3:g} ms), {interval * 1e3:g} ms advances: CPU "
              f"{cpu_min:.3f} / {cpu_med:.3f} s; real-time factor (CPU) "
              f"{scenario.duration / cpu_min:.1f}x / {scenario.duration / cpu_med:.1f}x, {n_rhs} RHS: "
              f"measured / target = {scenario.duration / cpu_min / TARGET_RTF[geometry]:.2f}")


def _accuracy(rk4_columns):
    """The largest difference of a few outputs from a converged run (adaptive RK45,
    tolerance 1e-10, steps <= 0.25 ms), as a share of each output's range over the
    run: the fixed-step RK4 of the scenario and the adaptive RK23 at its default
    tolerance (what the speed figures above buy)."""
    reference = simulate(load_scenario(SCENARIO, integrator="rk45", tolerance=1e-10,
                                       internal_step=2.5e-4)).columns
    runs = {"RK4 1 ms": rk4_columns,
            "RK23 1e-6": simulate(load_scenario(SCENARIO, integrator="rk23")).columns}
    for step, tolerance in ROSENBROCK_RUNS:
        runs[f"Rosenbrock {tolerance:g}, <= {step * 1e3:g} ms"] = simulate(load_scenario(
            SCENARIO, integrator="rosenbrock", internal_step=step, tolerance=tolerance)).columns
    names = ("wheelset.y", "wheelset.yaw", "wheel.right.Q", "wheel.right.Y")
    print("accuracy against a converged run (RK45, tolerance 1e-10, steps <= 0.25 ms): largest "
          "difference / the output's range over the run")
    for label, columns in runs.items():
        parts = []
        for name in names:
            ref = np.asarray(reference[name])
            diff = np.max(np.abs(np.asarray(columns[name]) - ref)) / (ref.max() - ref.min())
            parts.append(f"{name} {diff:.1e}")
        q = np.asarray(columns["wheel.right.Q"])
        i = int(np.argmax(np.asarray(reference["wheel.right.Q"])))
        parts.append(f"right Q at the flange-root impact ({reference['time'][i]:.2f} s) "
                     f"{q[i] / 1e3:.1f} kN (converged {reference['wheel.right.Q'][i] / 1e3:.1f} kN)")
        print(f"  {label}: " + ", ".join(parts))


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    base = load_scenario(SCENARIO)
    columns = {}
    print(f"scenario {SCENARIO}: {base.duration:g} s, internal step {base.params.internal_step * 1e3:g} ms "
          f"(RK4), advance every {base.output_interval * 1e3:g} ms; {repeats} repeats, min / median")
    for geometry in ("online", "table"):
        scenario = load_scenario(SCENARIO, contact_geometry=geometry)
        simulate(load_scenario(SCENARIO, contact_geometry=geometry, duration=0.05))   # compile
        columns[geometry] = simulate(scenario).columns
        line = f"[{geometry}]"
        if geometry == "table":
            t0 = time.perf_counter()
            table = geometry_table.build_contact_table(WheelsetModel(scenario.params).setup)
            line += (f" {table.describe()} (this build {time.perf_counter() - t0:.2f} s wall incl. "
                     "set-up; shared by the models of one set-up in a process)")
        print(line)
        walls, cpus, n_rhs = _core_runs(scenario.params, scenario.duration, scenario.output_interval, repeats)
        wall_min, wall_med = _min_median(walls)
        cpu_min, cpu_med = _min_median(cpus)
        rtf_cpu = scenario.duration / cpu_min
        print(f"  core alone: wall {wall_min:.3f} / {wall_med:.3f} s, CPU {cpu_min:.3f} / {cpu_med:.3f} s; "
              f"real-time factor (CPU) {rtf_cpu:.1f}x / {scenario.duration / cpu_med:.1f}x, "
              f"{n_rhs} RHS: {cpu_min / n_rhs * 1e6:.2f} us per RHS incl. everything")
        print(f"    target >= {TARGET_RTF[geometry]:g}x: measured / target = {rtf_cpu / TARGET_RTF[geometry]:.2f}")
        walls, cpus, n_rhs = _core_runs(scenario.params, scenario.duration, 0.001, repeats)
        cpu_min, cpu_med = _min_median(cpus)
        rtf_cpu = scenario.duration / cpu_min
        print(f"  core alone, 1 ms advances (the FMU's steps): CPU {cpu_min:.3f} / {cpu_med:.3f} s; "
              f"real-time factor (CPU) {rtf_cpu:.1f}x / {scenario.duration / cpu_med:.1f}x, "
              f"{n_rhs} RHS ({n_rhs / (scenario.duration / 0.001):.2f} per step): "
              f"measured / target = {rtf_cpu / TARGET_RTF[geometry]:.2f}")
        full, update, scan, reused, counts = _rhs_costs(scenario.params, repeats)
        full_min, full_med = _min_median(full)
        upd_min, upd_med = _min_median(update)
        if geometry == "online":
            n_scans, n_searches = _scan_share(scenario.params, scenario.duration, scenario.output_interval)
            share = n_scans / n_searches
            search = share * min(scan) + (1.0 - share) * full_min
            mean = (search + 3 * upd_min) / 4
            print(f"  the online search over the run: {n_scans} full scans in {n_searches} searches "
                  f"({100 * share:.1f} %), the others answered by the tracked minima")
        else:
            mean = (full_min + 3 * upd_min) / 4
        what = "tracked search" if geometry == "online" else "table search"
        print(f"  in the curve (points per wheel {counts}): RHS with the {what} {full_min:.2f} / {full_med:.2f} us, "
              f"with update {upd_min:.2f} / {upd_med:.2f} us, mean per RHS (1 + 3) {mean:.2f} us"
              + (f"; with the full scan {min(scan):.2f} / {statistics.median(scan):.2f} us"
                 if geometry == "online" else ""))
        print(f"    target <= {TARGET_RHS_US[geometry]:g} us: search RHS / target = "
              f"{full_min / TARGET_RHS_US[geometry]:.2f}, mean RHS / target = {mean / TARGET_RHS_US[geometry]:.2f}")
        if geometry == "table":
            # the floor under any contact table: its geometry cannot cost less than nothing
            floor = min(reused)
            print(f"  RHS without any contact geometry (the points of the last search reused; normal, creep, "
                  f"frames, assembly): {floor:.2f} / {statistics.median(reused):.2f} us; RK4 at 1 ms "
                  f"(4 per step) cannot exceed {1e3 / (4 * floor):.0f}x real time with any table "
                  f"(target {TARGET_RTF[geometry]:g}x)")
        _integrator_rows("adaptive RK23", geometry, repeats, integrator="rk23")
        for step, tolerance in ROSENBROCK_RUNS:
            _integrator_rows("Rosenbrock", geometry, repeats, integrator="rosenbrock",
                             internal_step=step, tolerance=tolerance)
        if geometry == "table":
            online, total = _table_fallbacks(scenario.params, scenario.duration, scenario.output_interval)
            print(f"  the table in use: at the {total // 2} recorded states {online} of {total} wheels "
                  "were handed to the online scan")
    _accuracy(columns["online"])
    worst, worst_name = 0.0, ""
    for name, online in columns["online"].items():
        diff = float(np.max(np.abs(np.asarray(online) - np.asarray(columns["table"][name]))))
        if diff > worst:
            worst, worst_name = diff, name
    print(f"table vs online, all {len(columns['online'])} output columns of the scenario: largest "
          f"difference {worst:.3g}" + (f" ({worst_name})" if worst_name else ""))


if __name__ == "__main__":
    main()
