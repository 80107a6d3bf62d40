"""The stand-alone loaded wheelset (the built-in quarter vehicle,
solver/dynamics/suspension.py) against the Manchester vehicle over four FMUs
(cosim/vehicle) on the same curve: R 600 m left, 150 mm cant, after 5 m of
straight and a 40 m transition, at 25, 31.3 and 35 m/s (cant deficiency 9,
100 and 162 mm), 12 s, means over the last 4 s.

The stand-alone wheelset is the FMU with `suspension.builtin` and the
Manchester vehicle's quarter (`suspension.suspended_mass` 9307.5 kg, the
other quarter-vehicle values their defaults). Compared:
- its lateral balance: the rails push it inwards with the uncompensated
  lateral force of all it carries, (m_s + m_w) (V^2/R cos c - g sin c);
- its load transfer (Q_outer - Q_inner) / 2 against the vehicle's, the mean
  of its four wheelsets (the quasi-static roll moment of the carbody and the
  frames; the wheelsets' own spread, leading against trailing, is their yaw
  and creep forces, which a single wheelset does not have).
The Y/Q of the stand-alone wheelset is reported beside the vehicle's leading
and trailing wheelsets (docs/running.md): a single wheelset has no bogie to
set its angle of attack, so its Y/Q is not the leading wheelset's.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from fmu_wheelset.validation.common import CaseResult, Row, figure, fmu_path, run_case, save

RADIUS = 600.0          # m, left curve
CANT = 0.15             # m, superelevation of the outer rail
STRAIGHT = 5.0          # m
TRANSITION = 40.0       # m
SPEEDS = (25.0, 31.3, 35.0)     # m/s: cant deficiency 9, 100, 162 mm
DURATION = 12.0         # s
AVERAGE_FROM = 8.0      # s
SUSPENDED_MASS = 9307.5     # kg: 32000 / 4 + 2615 / 2 (Iwnicki 1998)
GRAVITY = 9.81
RAIL_DISTANCE = 1.5     # m (cant angle = asin(h / 1.5), as the vehicle's)
TRACK_FILE = "r600_c150.toml"


def write_track(folder) -> Path:
    """The vehicle command's curve as a track file (the same layout as
    cosim/vehicle/curve_layout.CurveLayout(600, 0.15, 5, 40))."""
    path = Path(folder) / TRACK_FILE
    end = STRAIGHT + TRANSITION + 2000.0
    path.write_text(
        'name = "r600-c150"\n'
        'description = "R 600 m left curve, 150 mm cant, after 5 m of straight and a 40 m '
        'transition"\n'
        f"rail_distance_m = {RAIL_DISTANCE}\n"
        "[stations]\n"
        f"s_m = [0.0, {STRAIGHT}, {STRAIGHT + TRANSITION}, {end}]\n"
        f"radius_m = [inf, inf, {RADIUS}, {RADIUS}]\n"
        f"cant_mm = [0.0, 0.0, {CANT * 1e3}, {CANT * 1e3}]\n"
        'direction = "left"\n', encoding="utf-8")
    return path


def uncompensated_acceleration(speed: float) -> float:
    """V^2/R cos c - g sin c (m/s^2) in the full curve."""
    c = math.asin(CANT / RAIL_DISTANCE)
    return speed ** 2 / RADIUS * math.cos(c) - GRAVITY * math.sin(c)


def standalone_parameters(track, speed):
    from solver.model.parameters import WheelsetParameters
    return WheelsetParameters(bogie=True, suspended_mass=SUSPENDED_MASS, speed=speed,
                              track=str(track))


def standalone_run(track, speed, backend="fmu", out=None) -> dict:
    """The stand-alone wheelset on the curve: its means over the last 4 s
    (lateral force of the rails on it, + inwards; Q and Y/Q of the inner, left,
    and outer, right, wheel) and the force it must take."""
    from solver.scenarios import Scenario
    params = standalone_parameters(track, speed)
    scenario = Scenario(f"quarter vehicle {speed:g} m/s", params, duration=DURATION,
                        output_interval=0.01)
    run = run_case(scenario, out if out is not None else Path(track).parent, backend)
    c = run.columns
    late = c["time"] >= AVERAGE_FROM - 1e-9
    mean = {k: float(np.mean(c[k][late])) for k in (
        "wheel.left.Y", "wheel.right.Y", "wheel.left.Q", "wheel.right.Q",
        "wheel.left.Y_over_Q", "wheel.right.Y_over_Q", "wheelset.y")}
    return {"status": run.status, "backend": run.backend,
            # Y is + towards each wheel's field side: the rails push the wheelset
            # by Y_right - Y_left along +y
            "lateral_force": mean["wheel.right.Y"] - mean["wheel.left.Y"],
            "required": (SUSPENDED_MASS + params.mass) * uncompensated_acceleration(speed),
            "q_inner": mean["wheel.left.Q"], "q_outer": mean["wheel.right.Q"],
            "yq_inner": mean["wheel.left.Y_over_Q"], "yq_outer": mean["wheel.right.Y_over_Q"],
            "y": mean["wheelset.y"], "columns": c}


def vehicle_run(fmu, speed) -> dict:
    """The vehicle over four FMUs on the same curve: per wheelset (front to
    back) the means over the last 4 s of Q and Y/Q (inner left, outer right)."""
    from cosim.vehicle.curve_layout import CurveLayout
    from cosim.vehicle.master import VehicleCosim
    layout = CurveLayout(radius=RADIUS, cant=CANT, straight=STRAIGHT, transition=TRANSITION)
    with VehicleCosim(str(fmu), speed=speed, layout=layout, record_every=10) as vc:
        result = vc.run(DURATION, average_from=AVERAGE_FROM)
    load = result.mean["wheel_load"]
    quotient = result.mean["derailment_quotient"]
    return {"q_inner": load[:, 0], "q_outer": load[:, 1], "yq_inner": quotient[:, 0],
            "yq_outer": quotient[:, 1], "y": result.mean["lateral"]}


def transfer(q_inner, q_outer):
    return (np.asarray(q_outer) - np.asarray(q_inner)) / 2.0


def measure(out, backend="fmu", speeds=SPEEDS, fmu=None) -> list:
    """Both on the curve at each speed: a list of (speed, stand-alone, vehicle);
    `fmu`: the FMU file the vehicle runs (default: the suite's, built under `out`)."""
    out = Path(out)
    track = write_track(out)
    fmu = fmu if fmu is not None else fmu_path(out)
    return [(v, standalone_run(track, v, backend, out), vehicle_run(fmu, v)) for v in speeds]


def case_quarter_vehicle(out, backend="fmu") -> CaseResult:
    out = Path(out)
    name = "11 stand-alone wheelset (quarter vehicle) vs the vehicle over 4 FMUs"
    rows, info = [], []
    lines = ["speed_m_s,cant_deficiency_mm,backend,balance_ratio,transfer_standalone_kN,"
             "transfer_vehicle_mean_kN,transfer_vehicle_min_kN,transfer_vehicle_max_kN,"
             "q_inner_standalone_kN,q_outer_standalone_kN,q_inner_vehicle_kN,q_outer_vehicle_kN,"
             "yq_outer_standalone,yq_outer_leading,yq_outer_trailing,y_standalone_mm"]
    results = measure(out, backend)
    for speed, alone, vehicle in results:
        deficiency = (speed ** 2 / RADIUS / GRAVITY * RAIL_DISTANCE - CANT) * 1e3
        ratio = alone["lateral_force"] / alone["required"]
        rows.append(Row(
            name, f"{speed:g} m/s: sum of the rails' lateral forces / (m_s + m_w) (V^2/R cos c - "
                  "g sin c)", "1 (quasi-static balance)", ratio, "", 1.0, 0.01, alone["backend"],
            why="1 %: the figure asked for (issue 50); the wheelset carries the uncompensated "
                "lateral force of its suspended mass and its own, and nothing else holds it",
            note=f"{alone['lateral_force'] / 1e3:.3f} kN against {alone['required'] / 1e3:.3f} kN"
                 + ("" if alone["status"] == "ok" else f"; {alone['status']}")))
        mine = float(transfer(alone["q_inner"], alone["q_outer"]))
        theirs = transfer(vehicle["q_inner"], vehicle["q_outer"])
        reference = float(np.mean(theirs))
        if deficiency >= 50.0:
            tolerance = 0.05 * abs(reference)
            why = ("5 % of the vehicle's: the figure asked for (issue 50); the load transfer of "
                   "the carbody's and the frames' roll moment, which the quarter vehicle carries")
        else:
            tolerance = max(abs(float(theirs.max()) - reference), abs(reference - float(theirs.min())))
            why = (f"the spread of the vehicle's own four wheelsets ({theirs.min() / 1e3:.2f}-"
                   f"{theirs.max() / 1e3:.2f} kN): at {deficiency:.0f} mm of cant deficiency the "
                   "roll moment is small and the transfer is the creep forces' moments, which "
                   "differ between leading and trailing wheelsets; 5 % of it is below that spread")
        rows.append(Row(
            name, f"{speed:g} m/s: load transfer (Q outer - Q inner) / 2",
            f"{reference / 1e3:.3g} kN, the vehicle's (mean of its 4 wheelsets)", mine / 1e3, "kN",
            reference / 1e3, tolerance / 1e3,
            f"{alone['backend']} vs vehicle (4 FMUs)", why=why,
            note="vehicle's wheelsets front to back: "
                 + ", ".join(f"{t / 1e3:.2f}" for t in theirs) + " kN"))
        leading = float(np.mean(vehicle["yq_outer"][[0, 2]]))
        trailing = float(np.mean(vehicle["yq_outer"][[1, 3]]))
        info.append(Row(
            name, f"{speed:g} m/s: Y/Q of the outer wheel, stand-alone",
            f"the vehicle's leading wheelsets {leading:.3g}, trailing {trailing:.3g}",
            alone["yq_outer"], "", float("nan"), float("nan"), alone["backend"], compared=False,
            why="a single wheelset has no bogie to set its angle of attack: its Y/Q is not a "
                "leading wheelset's (docs/running.md)"))
        lines.append(
            f"{speed:g},{deficiency:.0f},{alone['backend']},{ratio:.5f},{mine / 1e3:.3f},"
            f"{reference / 1e3:.3f},{theirs.min() / 1e3:.3f},{theirs.max() / 1e3:.3f},"
            f"{alone['q_inner'] / 1e3:.2f},{alone['q_outer'] / 1e3:.2f},"
            f"{np.mean(vehicle['q_inner']) / 1e3:.2f},{np.mean(vehicle['q_outer']) / 1e3:.2f},"
            f"{alone['yq_outer']:.3f},{leading:.3f},{trailing:.3f},{alone['y'] * 1e3:.2f}")
    csv = out / "quarter_vehicle.csv"
    csv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fig, ax = figure(2, 1)
    speeds = [r[0] for r in results]
    ax[0, 0].plot(speeds, [transfer(a["q_inner"], a["q_outer"]) / 1e3 for _, a, _ in results],
                  "o-", label="stand-alone wheelset (quarter vehicle)")
    for k in range(4):
        ax[0, 0].plot(speeds, [transfer(v["q_inner"], v["q_outer"])[k] / 1e3 for _, _, v in results],
                      ".--", label=f"vehicle, wheelset {k + 1}")
    ax[0, 0].set_ylabel("(Q outer - Q inner) / 2 (kN)")
    ax[0, 0].set_title("load transfer, R 600 m left curve, 150 mm cant (outer: right wheel)",
                       fontsize=9)
    ax[0, 0].legend(fontsize=7)
    ax[1, 0].plot(speeds, [a["yq_outer"] for _, a, _ in results], "o-",
                  label="stand-alone wheelset")
    for k in range(4):
        ax[1, 0].plot(speeds, [v["yq_outer"][k] for _, _, v in results], ".--",
                      label=f"vehicle, wheelset {k + 1}")
    ax[1, 0].set_ylabel("Y/Q outer (right) wheel")
    ax[1, 0].set_xlabel("speed (m/s)")
    ax[1, 0].set_title("Y/Q of the outer wheel: a single wheelset has no bogie to set its "
                       "angle of attack", fontsize=9)
    ax[1, 0].legend(fontsize=7)
    figs = [("Stand-alone wheelset (built-in quarter vehicle) and the vehicle over four FMUs, "
             "R 600 m, 150 mm cant", save(fig, out / "quarter_vehicle.png"))]
    return CaseResult("quarter_vehicle", "Stand-alone loaded wheelset against the vehicle, "
                      "R 600 m / 150 mm cant", rows, figs, [csv], backend,
                      ["the stand-alone wheelset: suspension.builtin, suspended_mass 9307.5 kg, "
                       "the quarter vehicle's defaults (Manchester vehicle 1); the vehicle: "
                       "cosim/vehicle over four FMUs; means over 8-12 s"], info=info)
