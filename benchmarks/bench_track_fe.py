"""Benchmark of the wheelset FMU coupled with the OpenSees track (figure 5 of
issue 22): a 100 km/h run on straight track, 1 ms communication steps, both
rails over 60 m (100 bays of 0.6 m, 2 Timoshenko elements per bay, moving
window), the contact Jacobian probed once; prints the real-time factor and the
shares of the FMU (setReal + doStep + getReal + probes) and of the track
(Newmark step of the assembled OpenSees matrices, loads and interpolation).
Also the same master on a rigid track (FMU alone) and the track's
``ops.analyze`` engine for a few steps (OpenSees' own transient analysis).

usage: python benchmarks/bench_track_fe.py [--fmu dist/Wheelset.fmu] [--duration 10]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cosim.track_cosim import CosimOptions, run_track_cosim  # noqa: E402
from cosim.track_fe import UIC60, RailLoad, TrackParameters, make_track  # noqa: E402

SPEED = 100.0 / 3.6
PARAMS = {"suspension.builtin": True, "suspension.suspended_mass": 2 * 1e5 / 9.81 - 1813.0,
          "suspension.stiffness.z": 1.0e4, "wheelset.speed": SPEED,
          "wheel.profile": "S1002", "rail.profile": "UIC60"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fmu", default=str(ROOT / "dist" / "Wheelset.fmu"))
    ap.add_argument("--duration", type=float, default=10.0)
    args = ap.parse_args(argv)
    if not Path(args.fmu).is_file():
        from fmu_wheelset.build import build_fmu
        build_fmu(args.fmu, quiet=True)
    track = TrackParameters(rail=UIC60, bays=100, elements_per_bay=2)
    print(f"track: 2 rails x {track.length:g} m, {track.bays} bays of {track.sleeper_spacing} m, "
          f"{track.elements_per_bay} {track.beam} elements per bay")

    o = CosimOptions(duration=args.duration, step=1e-3, fmu_parameters=PARAMS, track=track,
                     start_position=15.0, window_margin=20.0, jacobian_every=10 ** 9)
    t0 = time.perf_counter()
    r = run_track_cosim(args.fmu, o)
    loop = r.wall_total
    other = loop - r.wall_fmu - r.wall_track
    print(f"coupled {r.simulated:g} s at 1 ms in {loop:.2f} s wall (incl. set-up): "
          f"real-time factor {r.real_time_factor:.2f}")
    print(f"  FMU      {r.wall_fmu:7.2f} s ({100 * r.wall_fmu / loop:4.1f} %, "
          f"{1e6 * r.wall_fmu / r.steps:.0f} us/step)")
    print(f"  OpenSees track {r.wall_track:7.2f} s ({100 * r.wall_track / loop:4.1f} %, "
          f"{1e6 * r.wall_track / r.steps:.0f} us/step; {r.window_shifts} window shifts)")
    print(f"  master + set-up {other:7.2f} s ({100 * other / loop:4.1f} %)")
    stepping = r.wall_fmu + r.wall_track
    print(f"  stepping only (FMU + track): real-time factor {r.simulated / stepping:.2f}")
    cpu_step = r.cpu_fmu + r.cpu_track
    print(f"  CPU time of this process (not inflated by waiting for a shared core): FMU "
          f"{1e6 * r.cpu_fmu / r.steps:.0f} us/step, track {1e6 * r.cpu_track / r.steps:.0f} us/step; "
          f"CPU real-time factor of the stepping {r.simulated / cpu_step:.2f}, of the whole run "
          f"{r.simulated / r.cpu_total:.2f}")

    rigid = run_track_cosim(args.fmu, CosimOptions(duration=min(args.duration, 2.0), step=1e-3,
                                                   fmu_parameters=PARAMS, rigid_track=True))
    print(f"rigid track (FMU alone, same master): {1e6 * rigid.wall_fmu / rigid.steps:.0f} us/step "
          f"(real-time factor of the FMU {rigid.simulated / rigid.wall_fmu:.2f}; CPU "
          f"{1e6 * rigid.cpu_fmu / rigid.steps:.0f} us/step)")

    n = 200
    ops_track = make_track("opensees", track, 1e-3)
    t0 = time.perf_counter()
    c0 = time.process_time()
    for k in range(n):
        x = 15.0 + SPEED * (k + 1) * 1e-3
        ops_track.step([(0, x, RailLoad(vertical=-1e5)), (1, x, RailLoad(vertical=-1e5))])
        ops_track.rail_state(0, x)
        ops_track.rail_state(1, x)
    per = (time.perf_counter() - t0) / n
    per_cpu = (time.process_time() - c0) / n
    print(f"OpenSees ops.analyze engine (same model): {1e6 * per:.0f} us/step, CPU "
          f"{1e6 * per_cpu:.0f} us/step (real-time factor of the track alone {1e-3 / per:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
