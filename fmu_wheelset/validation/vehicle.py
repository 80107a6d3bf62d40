"""The Manchester benchmark vehicle 1 over four wheelset FMUs (cosim/vehicle.py):
static wheel loads, stability below and above the critical speed, steady
curving balance (R = 1200 m and 600 m with cant, two cant deficiencies each).

Always through the FMU (the vehicle host couples FMU instances; there is no
core backend for it). S1002/UIC60 1:40, Polach, 1 ms communication steps."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from fmu_wheelset.validation.common import CaseResult, Row, figure, fmu_path, save, write_csv

CURVES = ((1200.0, 0.10, 0.05), (1200.0, 0.10, 0.10), (600.0, 0.15, 0.05), (600.0, 0.15, 0.10))
CURVE_DURATION, CURVE_AVERAGE_FROM = 12.0, 8.0


def case_vehicle(out, backend="fmu") -> CaseResult:
    from cosim.vehicle import GRAVITY, RAIL_DISTANCE, CurveLayout, VehicleCosim
    out = Path(out)
    fmu = str(fmu_path(out))
    name = "9 vehicle (4 FMUs)"
    rows = []
    notes = ["always the FMU: the vehicle host couples four FMU instances"
             + ("" if backend == "fmu" else f" (backend {backend!r} asked)")]
    with VehicleCosim(fmu, speed=30.0, record_every=5) as vc:
        straight = vc.run(1.0)
        share = vc.p.static_wheel_load()
    dev = float(np.abs(straight.wheel_load / share - 1.0).max())
    rows.append(Row(name, "straight track: largest |Q / static share - 1| (8 wheels, 1 s)",
                    "0 (static equilibrium, no load step)", dev * 100, "%", 0.0, 0.5, "fmu"))
    push = (0, 30e3, 0.05)
    histories = {}
    for speed, hunts in ((30.0, False), (70.0, True)):
        with VehicleCosim(fmu, speed=speed, perturbation=push, record_every=5) as vc:
            r = vc.run(2.5)
        y = r.lateral[:, 0]
        first, last = np.abs(y[r.time <= 0.5]).max(), np.abs(y[r.time >= r.time[-1] - 0.5]).max()
        ratio = float(last / first)
        histories[speed] = r
        rows.append(Row(name, f"30 kN push at {speed:g} m/s: last/first lateral amplitude of "
                              f"wheelset 1", "hunts (> 0.3)" if hunts else "decays (< 0.02)",
                        ratio, "1", float("nan"), float("nan"), "fmu",
                        passed=(ratio > 0.3) if hunts else (ratio < 0.02)))
    curve_rows = []
    for radius, cant, deficiency in CURVES:
        speed = math.sqrt((deficiency + cant) * GRAVITY * radius / RAIL_DISTANCE)
        layout = CurveLayout(radius=radius, cant=cant, straight=5.0, transition=40.0)
        with VehicleCosim(fmu, speed=speed, layout=layout, record_every=20) as vc:
            r = vc.run(CURVE_DURATION, average_from=CURVE_AVERAGE_FROM)
            p = vc.p
            couple = vc.secondary_yaw_couple(r)
        mass = p.carbody_mass / 2 + p.bogie_mass + 2 * p.wheelset_mass
        c = layout.full_cant_angle
        required = mass * (speed ** 2 / radius * math.cos(c) + GRAVITY * math.sin(c))
        textbook = mass * (speed ** 2 / radius - GRAVITY * cant / RAIL_DISTANCE)
        sampled = r.mean_bogie_lateral_force()
        momentum = r.mean_bogie_lateral_force(from_momentum=True)
        label = f"R {radius:g} m, h {cant * 1e3:g} mm, D {deficiency * 1e3:g} mm ({speed * 3.6:.0f} km/h)"
        for b in range(2):
            rows.append(Row(name, f"{label}: bogie {b + 1} sum of lateral rail forces / "
                                  f"m(V^2/R cos c + g sin c) (mean {CURVE_AVERAGE_FROM:g}-"
                                  f"{CURVE_DURATION:g} s)", f"1 (textbook m(V^2/R - g h/s) = "
                                  f"{textbook / required:.4f})", float(sampled[b] / required), "1",
                            1.0, 0.01, "fmu",
                            note=f"from the wheelsets' momentum: {momentum[b] / required:.4f}; "
                                 f"of it the carbody's secondary yaw couple {couple[b]:+.0f} N "
                                 f"({100 * couple[b] / required:+.2f} %)"))
            rows.append(Row(name, f"{label}: bogie {b + 1}, the same with the carbody's secondary "
                                  "yaw couple taken out (cosim.vehicle.secondary_yaw_couple)", "1",
                            float((sampled[b] - couple[b]) / required), "1", 1.0, 0.01, "fmu",
                            note="like with like: the textbook per-bogie balance has no carbody "
                                 "yaw couple; the couple comes from the bogie frames' yaw "
                                 "relative to the carbody on the secondary longitudinal springs"))
        rows.append(Row(name, f"{label}: whole vehicle, sum of lateral rail forces / "
                              "M(V^2/R cos c + g sin c)", "1", float(sampled.sum() / (2 * required)),
                        "1", 1.0, 0.01, "fmu",
                        note="per bogie the secondary yaw stiffness moves load between the "
                             "bogies: the bogie frames' yaw moments on the carbody are balanced by "
                             "a lateral force couple (+ leading, - trailing), which the sum over "
                             "the vehicle does not see"))
        m = r.mean
        lead_ok = all(m["lateral"][j] < 0 and m["yaw"][j] < 0 for j in (0, 2))
        rows.append(Row(name, f"{label}: leading wheelsets towards the outer rail, yawed "
                              "outwards (y < 0, yaw < 0 in a left curve)",
                        "y < 0, positive angle of attack",
                        float(m["yaw"][0] * 1e3), "mrad (yaw 1)", float("nan"), float("nan"),
                        "fmu", passed=lead_ok,
                        note=f"y = {m['lateral'][0] * 1e3:.2f} / {m['lateral'][2] * 1e3:.2f} mm"))
        curve_rows.append([radius, cant, deficiency, speed]
                          + list(m["lateral"]) + list(m["yaw"])
                          + list(m["derailment_quotient"].ravel()) + list(m["wear_number"].ravel())
                          + list(sampled / required) + list(momentum / required))
    names = (["radius_m", "cant_m", "deficiency_m", "speed_m_s"]
             + [f"y{j + 1}_m" for j in range(4)] + [f"yaw{j + 1}_rad" for j in range(4)]
             + [f"YQ{j + 1}_{s}" for j in range(4) for s in ("left", "right")]
             + [f"wear{j + 1}_{s}_N" for j in range(4) for s in ("left", "right")]
             + ["bogie1_balance", "bogie2_balance", "bogie1_balance_momentum",
                "bogie2_balance_momentum"])
    table = np.array(curve_rows)
    csv = write_csv({n: table[:, k] for k, n in enumerate(names)}, out / "vehicle_curves.csv")
    fig, ax = figure(2, 1, size=(7.5, 5.5))
    for speed, r in histories.items():
        ax[0, 0].plot(r.time, r.lateral[:, 0] * 1e3, label=f"{speed:g} m/s")
    ax[0, 0].set_ylabel("wheelset 1 y (mm)")
    ax[0, 0].set_xlabel("time (s)")
    ax[0, 0].legend(fontsize=7)
    ax[0, 0].set_title("30 kN lateral push for 50 ms on the leading wheelset", fontsize=9)
    x = np.arange(len(CURVES))
    ax[1, 0].bar(x - 0.2, table[:, -4], 0.4, label="bogie 1")
    ax[1, 0].bar(x + 0.2, table[:, -3], 0.4, label="bogie 2")
    ax[1, 0].axhline(1.0, color="k", lw=0.8)
    ax[1, 0].axhspan(0.99, 1.01, color="C2", alpha=0.15, label="tolerance +-1 %")
    ax[1, 0].set_ylim(0.95, 1.05)
    ax[1, 0].set_xticks(x, [f"R{r:g} D{d * 1e3:g}" for r, _, d in CURVES], fontsize=7)
    ax[1, 0].set_ylabel("rail forces / m a_nc")
    ax[1, 0].set_title("curving balance per bogie in left curves (outer rail: the right one): "
                       "sum of lateral rail forces / m a_nc", fontsize=9)
    ax[1, 0].legend(fontsize=7)
    fig.suptitle("Manchester benchmark vehicle 1 over four wheelset FMUs (backend: FMU (FMPy))",
                 fontsize=8)
    figs = [("Vehicle over four FMUs: stability and the curving balance per bogie [FMU (FMPy)]",
             save(fig, out / "vehicle.png"))]
    return CaseResult("vehicle", "Manchester benchmark vehicle 1 over four wheelset FMUs", rows,
                      figs, [csv], "fmu", notes)
