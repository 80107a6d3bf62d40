"""Converged event times of the running-safety cases
(fmu_wheelset/validation/running_safety.py: the cases).

    PYTHONPATH=. python fmu_wheelset/validation/reference_data/running_safety/make_references.py

Each case runs with RK45 at tolerance 1e-10 and with RK4 at 10 us. Stored: the time
of the first flange-climb warning (the flange contact's Y/Q above Nadal's
limit) and of the wheel drop, where the two agree within 0.5 ms (checked), and
the derailment times of the climb cases with both methods: these do not agree
(the flange contact starts a growing oscillation, then impacts and lifts whose
path no integrator converges), so they are reported, not references.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parents[4]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fmu_wheelset.validation.running_safety import HOST_STEP, climb, drop  # noqa: E402

HERE = Path(__file__).resolve().parent


def main():
    meta = {}
    t0 = time.process_time()
    for rate in (5e3, 50e3):
        runs = {name: climb(rate, **over) for name, over in (
            ("rk45_1e-10", {"integrator": "rk45", "tolerance": 1e-10}),
            ("rk4_10us", {"integrator": "rk4", "internal_step": 1e-5}))}
        warnings = [runs[n][0] for n in runs]
        if None in warnings or abs(warnings[0] - warnings[1]) > 0.5e-3:
            raise SystemExit(f"{rate} N/s: the warning times disagree: {warnings}")
        meta[f"climb_{rate:.0f}"] = {
            "first_warning_s": warnings[0],
            "derailment_s": {n: runs[n][2] + HOST_STEP if runs[n][1].status != "ok" else None
                             for n in runs},
            "end": {n: runs[n][1].message for n in runs}}
        print(rate, meta[f"climb_{rate:.0f}"])
    drops = {name: drop(**over) for name, over in (
        ("rk45_1e-10", {"integrator": "rk45", "tolerance": 1e-10}),
        ("rk4_10us", {"integrator": "rk4", "internal_step": 1e-5}))}
    times = [t for _, t in drops.values()]
    if abs(times[0] - times[1]) > 0.5e-3:
        raise SystemExit(f"drop: the times disagree: {times}")
    meta["drop"] = {"wheel_drop_s": times[0], "end": drops["rk45_1e-10"][0].message}
    print(meta["drop"], f"{time.process_time() - t0:.0f} s")
    meta["how"] = ("make_references.py beside this file: RK45 at tolerance 1e-10 "
                   "against RK4 at 10 us, 1 ms communication steps")
    (HERE / "references.json").write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    main()
