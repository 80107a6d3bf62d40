"""FMU layer against the core: the same scenario through FMPy (FMU) and through
solver.scenarios.simulate must agree to round-off (the FMU only converts
variables). Uses ren-jin-r400-100 (every value of it is an FMU parameter), so
that any difference is the FMI layer's."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from fmu_wheelset.validation.common import (CaseResult, Row, figure, point_array, run_case, save,
                                            write_csv)


def fmu_scenario(duration=8.0):
    from solver.scenarios import load_scenario
    sc = load_scenario("ren-jin-r400-100", duration=duration)
    sc.name = "ren-jin-r400-100 (FMU and core)"
    return sc


def case_fmu_check(out, backend="fmu", duration=8.0) -> CaseResult:
    out = Path(out)
    name = "7 FMU vs core"
    fmu = run_case(fmu_scenario(duration), out, "fmu")
    core = run_case(fmu_scenario(duration), out, "core")
    a, b = fmu.columns, core.columns
    n = min(a["time"].size, b["time"].size)
    dy = float(np.max(np.abs(a["wheelset.y"][:n] - b["wheelset.y"][:n])))
    na = point_array(a, "right", "normal_force").sum(axis=1)[:n]
    nb = point_array(b, "right", "normal_force").sum(axis=1)[:n]
    dn = float(np.max(np.abs(na - nb)))
    rows = [Row(name, "max |y_FMU - y_core|", "0 (same core; < 1 um)", dy * 1e3, "mm", 0.0, 1e-3, fmu.backend,
                passed=bool(fmu.backend == "fmu" and dy <= 1e-6 and n == b["time"].size),
                why="same core, same steps: only round-off of the FMI value transfer; 1 um is "
                    "1e-4 of the signal"),
            Row(name, "max |N_FMU - N_core| outer wheel", "0 (same core; < 1 N)", dn, "N", 0.0, 1.0, fmu.backend,
                passed=bool(fmu.backend == "fmu" and dn <= 1.0),
                why="same core: 1 N is 1e-5 of the 70-100 kN wheel load")]
    csv = write_csv({"time_s": a["time"][:n], "y_fmu_m": a["wheelset.y"][:n], "y_core_m": b["wheelset.y"][:n],
                     "N_outer_fmu_N": na, "N_outer_core_N": nb}, out / "fmu_vs_core.csv")
    fig, ax = figure(2, 1, size=(7.5, 4.5))
    ax[0, 0].plot(a["wheelset.distance"][:n], a["wheelset.y"][:n] * 1e3, label="FMU (FMPy)")
    ax[0, 0].plot(b["wheelset.distance"][:n], b["wheelset.y"][:n] * 1e3, "--", label="core")
    ax[0, 0].set_ylabel("y (mm)")
    ax[0, 0].legend(fontsize=7)
    ax[1, 0].plot(a["wheelset.distance"][:n], (na - nb))
    ax[1, 0].set_ylabel("N_FMU - N_core (N)")
    ax[1, 0].set_title("outer (right) wheel: total normal force, FMU minus core", fontsize=9)
    ax[1, 0].set_xlabel("distance (m)")
    ax[0, 0].set_title("ren-jin-r400-100 with the FMU's default suspension: FMU vs core", fontsize=9)
    figs = [("FMU (FMPy) against the core, same parameters [FMU (FMPy) and core]",
             save(fig, out / "fmu_vs_core.png"))]
    return CaseResult("fmu_check", "FMU layer against the core", rows, figs, [csv], fmu.backend,
                      [fmu.note])
