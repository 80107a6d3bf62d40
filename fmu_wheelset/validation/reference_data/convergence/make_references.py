"""Converged runs of the convergence cases (fmu_wheelset/validation/convergence.py).

    PYTHONPATH=. python fmu_wheelset/validation/reference_data/convergence/make_references.py [a b c]

Each case runs with the embedded Dormand-Prince RK45 at local error tolerance
1e-10 (steps of at most 1 ms; stored) and, as the independent check, with the
classical RK4 at fixed steps of 10 us and 2.5 us, all in 1 ms communication
steps. RK4 is of first order where a contact's stiffness changes within
microseconds (the Ren & Jin outer wheel near 5.904 s: its contact point runs
over a fast change of the profiles' curvature, and its load doubles within
0.5 ms: RK4 at 10 us is 4.6 kN low there, at 2.5 us 1.2 kN), so the check is
the Richardson extrapolation of the two RK4 runs for first order, Q_2.5 +
(Q_2.5 - Q_10) / 3: it must agree with RK45 within 0.4 % of the static wheel
load in Q and 0.1 um in y (a fifth of what the defaults may differ). Stored: y
and the wheel loads Q (left, right) at the end of every 1 ms step, float32 (y
to 1e-9 m, Q to 0.01 N), with the differences in references.json. About five
minutes of CPU (3 min in all on a shared 2-core machine, 2026-12-08); run it again whenever the physics changes.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[4]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fmu_wheelset.validation.convergence import CASES, case, run  # noqa: E402

HERE = Path(__file__).resolve().parent


def main(names=CASES):
    """Make the references of the cases `names` (command line: their letters;
    default all three); the others' stay as stored."""
    path = HERE / "references.json"
    meta = json.loads(path.read_text()) if path.exists() else {}
    for name in names:
        t0 = time.process_time()
        rk45 = run(name, integrator="rk45", tolerance=1e-10, internal_step=1e-3)
        coarse = run(name, integrator="rk4", internal_step=1e-5)
        fine = run(name, integrator="rk4", internal_step=2.5e-6)
        rk4 = fine + (fine - coarse) / 3.0
        static = case(name)[4]
        dy = float(np.abs(rk45[:, 0] - rk4[:, 0]).max())
        dq = float(np.abs(rk45[:, 1:] - rk4[:, 1:]).max())
        dq10 = float(np.abs(rk45[:, 1:] - coarse[:, 1:]).max())
        print(f"case {name}: RK45 1e-10 against RK4 10/2.5 us extrapolated: y {dy * 1e6:.3f} um, "
              f"Q {dq:.1f} N ({dq / static * 100:.3f} % of {static / 1e3:.1f} kN); RK4 10 us "
              f"alone {dq10:.1f} N; {time.process_time() - t0:.0f} s")
        if not (dy < 1e-7 and dq < 0.004 * static):
            raise SystemExit(f"case {name}: the runs disagree: no converged reference")
        np.savez_compressed(HERE / f"case_{name}.npz", y_q=rk45.astype(np.float32))
        meta[name] = {"static_wheel_load_N": static, "steps": len(rk45),
                      "rk45_vs_rk4_max_dy_m": dy, "rk45_vs_rk4_max_dQ_N": dq,
                      "rk45_vs_rk4_10us_max_dQ_N": dq10}
    meta["how"] = ("make_references.py beside this file: RK45 at tolerance 1e-10 (stored) "
                   "against RK4 at 10 and 2.5 us extrapolated for first order, 1 ms "
                   "communication steps")
    (HERE / "references.json").write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    main(tuple(sys.argv[1:]) or CASES)
