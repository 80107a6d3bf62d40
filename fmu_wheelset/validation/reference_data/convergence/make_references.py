"""Converged runs of the convergence cases (fmu_wheelset/validation/convergence.py).

    PYTHONPATH=. python fmu_wheelset/validation/reference_data/convergence/make_references.py

Each case runs twice, with the embedded Dormand-Prince RK45 at local error
tolerance 1e-10 (steps of at most 1 ms) and with the classical RK4 at fixed
10 us steps, both in 1 ms communication steps; the two must agree (checked
here: within 0.5 % of the static wheel load in Q and 0.1 um in y, a fifth of
what the defaults may differ), and the RK45 run is stored: y and the wheel
loads Q (left, right) at the end of every 1 ms step, float32 (y to 1e-9 m, Q
to 0.01 N), with the two runs' differences in references.json. About 20 s of
CPU; run it again whenever the physics changes.
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

from fmu_wheelset.validation.convergence import case, run  # noqa: E402

HERE = Path(__file__).resolve().parent


def main():
    meta = {}
    for name in ("a", "b", "c"):
        t0 = time.process_time()
        rk45 = run(name, integrator="rk45", tolerance=1e-10, internal_step=1e-3)
        rk4 = run(name, integrator="rk4", internal_step=1e-5)
        static = case(name)[4]
        dy = float(np.abs(rk45[:, 0] - rk4[:, 0]).max())
        dq = float(np.abs(rk45[:, 1:] - rk4[:, 1:]).max())
        print(f"case {name}: RK45 1e-10 against RK4 10 us: y {dy * 1e6:.3f} um, Q {dq:.1f} N "
              f"({dq / static * 100:.3f} % of {static / 1e3:.1f} kN), {time.process_time() - t0:.0f} s")
        if not (dy < 1e-7 and dq < 0.005 * static):
            raise SystemExit(f"case {name}: the two runs disagree: no converged reference")
        np.savez_compressed(HERE / f"case_{name}.npz", y_q=rk45.astype(np.float32))
        meta[name] = {"static_wheel_load_N": static, "steps": len(rk45),
                      "rk45_vs_rk4_max_dy_m": dy, "rk45_vs_rk4_max_dQ_N": dq}
    meta["how"] = ("make_references.py beside this file: RK45 at tolerance 1e-10 "
                   "(stored) against RK4 at 10 us, 1 ms communication steps")
    (HERE / "references.json").write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    main()
