"""Ren & Jin (2010) R = 400 m at 100 km/h on the FLEXIBLE track: the wheelset
FMU co-simulated with the OpenSees track of cosim/ (CHN60 rails on Zhai's
ballasted track, cosim.track.fe_model defaults), next to the same master on a rigid
track, against the paper's dynamic two-point onset of 10.2 mm (its static
value is 9.4 mm; the paper attributes the difference to dynamic effects).

A contact point is classified by its contact angle, not by
its position on the profile: FLANGE points have a contact angle of at least
FLANGE_MIN_ANGLE = 60 deg (the LMA flange flank is at about 70 deg, Ren & Jin's
flange contact; the flange-root points of the project sit at 25-45 deg),
FLANGE-ROOT points 20-60 deg, tread points below 20 deg. The onset is the
lateral displacement |y| at the first sample where the outer (right) wheel
has a flange point and a second point at the same time.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from fmu_wheelset.validation.common import CaseResult, Row, figure, fmu_path, save, write_csv
from fmu_wheelset.validation.common import POINTS

OUTER = "right"
FLANGE_MIN_ANGLE = np.radians(60.0)
ROOT_MIN_ANGLE = np.radians(20.0)
PUBLISHED_DYNAMIC_ONSET = 10.2e-3     # m (Ren & Jin 2010)
PUBLISHED_STATIC_ONSET = 9.4e-3       # m
# Half of the paper's static-to-dynamic difference (0.8 mm): a model that
# cannot place the onset within 0.4 mm of 10.2 mm cannot show the effect.
ONSET_TOLERANCE = 0.4e-3


def _points(c, side=OUTER):
    n = np.stack([c[f"{side}_p{k}_normal_force"] for k in (1, 2, 3)], axis=1)
    a = np.stack([c[f"{side}_p{k}_contact_angle"] for k in (1, 2, 3)], axis=1)
    return n, a


def onsets(c):
    """(flange two-point onset |y|, flange-root + tread onset |y|, largest
    contact angle of the outer wheel) of one run; nan when never reached."""
    n, a = _points(c)
    active = n > 0.0
    flange = active & (a >= FLANGE_MIN_ANGLE)
    root = active & (a >= ROOT_MIN_ANGLE) & (a < FLANGE_MIN_ANGLE)
    count = active.sum(axis=1)
    y = np.abs(c["wheelset_y"])
    two_flange = flange.any(axis=1) & (count >= 2)
    two_root = root.any(axis=1) & (count >= 2) & ~flange.any(axis=1)
    first = lambda mask: float(y[np.argmax(mask)]) if mask.any() else float("nan")  # noqa: E731
    max_angle = float(np.max(np.where(active, a, -np.inf)))
    return first(two_flange), first(two_root), max_angle


def coupled_runs(fmu, duration=12.0, unzipped=None):
    """(flexible, rigid) runs of the Ren & Jin 100 km/h scenario through the master."""
    from cosim.track.master import run_track_cosim
    from cosim.track.options import CosimOptions
    from cosim.track.parameters import CHN60, TrackParameters
    from fmu_wheelset.validation.common import fmu_start_values, fmu_variables
    from solver.scenarios import load_scenario
    scenario = load_scenario("ren-jin-r400-100")
    params, missing = fmu_start_values(scenario.params, fmu_variables(fmu))
    if missing:
        raise RuntimeError(f"the FMU cannot take the Ren & Jin scenario: {missing}")
    runs = []
    for rigid in (False, True):
        o = CosimOptions(duration=duration, step=1e-3, fmu_parameters=params,
                         track=TrackParameters(rail=CHN60, bays=100), rigid_track=rigid,
                         jacobian_every=10)
        runs.append(run_track_cosim(str(fmu), o, unzipped=unzipped))
    return runs


def plot(flexible, rigid, path):
    fig, ax = figure(3, 1, size=(7.5, 8.0))
    c = flexible.columns
    x = c["distance"]
    ax[0, 0].plot(x, c[f"{OUTER}_rail_lateral"] * 1e3, label="lateral displacement (mm, +y)")
    ax[0, 0].plot(x, c[f"{OUTER}_rail_roll"] * 1e3, label="roll (mrad, about +x)")
    ax[0, 0].set_title("flexible track: outer (right) rail head under the wheel", fontsize=9)
    ax[0, 0].legend(fontsize=7)
    n, a = _points(c)
    for k in range(POINTS):
        on = n[:, k] > 0
        ax[1, 0].plot(x, np.where(on, n[:, k] / 1e3, np.nan), lw=1,
                      label=f"point {k + 1} (angle at the end {np.degrees(a[-1, k]):.0f} deg)")
    ax[1, 0].set_ylabel("normal force (kN)")
    ax[1, 0].set_title("outer (right) wheel: normal force of each contact point (flexible track)",
                       fontsize=9)
    ax[1, 0].legend(fontsize=7)
    for run, label in ((flexible, "flexible track"), (rigid, "rigid track")):
        ax[2, 0].plot(run.columns["distance"], run.columns["wheelset_y"] * 1e3, label=label)
    ax[2, 0].axhline(-PUBLISHED_DYNAMIC_ONSET * 1e3, color="k", ls="--", lw=0.8,
                     label="paper: dynamic onset 10.2 mm")
    ax[2, 0].set_ylabel("wheelset lateral y (mm)")
    ax[2, 0].set_title("lateral displacement y (+ left; negative: towards the outer rail), "
                       "flexible and rigid track", fontsize=9)
    ax[2, 0].set_xlabel("distance (m)")
    fig.suptitle("Ren & Jin 2010, 100 km/h, R 400 m left curve, wheelset FMU on the OpenSees "
                 "track (backend: FMU (FMPy) + OpenSees)", fontsize=8)
    ax[2, 0].legend(fontsize=7)
    return save(fig, path)


def case_flexible_100(out, backend="fmu") -> CaseResult:
    """Runs on the FMU whatever the backend (the co-simulation needs it)."""
    from cosim.track.options import CosimError
    out = Path(out)
    fmu = fmu_path(out)
    name = "4 Ren & Jin 100 km/h, flexible track (OpenSees)"
    try:
        flexible, rigid = coupled_runs(fmu)
    except CosimError as exc:
        # a run that stops (the wheelset derails) is a result of the case: one FAIL row
        row = Row(name, "coupled run on the flexible track reaches its 12 s", "runs through the curve",
                  float("nan"), "", float("nan"), float("nan"), "fmu+opensees", passed=False,
                  why="criterion: the paper's wheelset runs through the curve",
                  note=" ".join(str(exc).split())[:400])
        return CaseResult("ren_jin_flexible", "Ren & Jin 2010, R = 400 m, 100 km/h, flexible track "
                          "(wheelset FMU + OpenSees track, cosim/)", [row], [], [], "fmu+opensees",
                          ["the coupled run stopped: see the row"])
    csvs = [write_csv(flexible.columns, out / "ren_jin_100_flexible_track.csv"),
            write_csv(rigid.columns, out / "ren_jin_100_rigid_track_master.csv")]
    f_flex, r_flex, a_flex = onsets(flexible.columns)
    f_rigid, r_rigid, a_rigid = onsets(rigid.columns)
    rows = []
    for value, label, ang in ((f_flex, "flexible", a_flex), (f_rigid, "rigid", a_rigid)):
        reached = np.isfinite(value)
        rows.append(Row(name, f"outer flange (>= 60 deg) two-point onset |y|, {label} track",
                        "10.2 mm (dynamic)", value * 1e3 if reached else float("nan"), "mm",
                        PUBLISHED_DYNAMIC_ONSET * 1e3, ONSET_TOLERANCE * 1e3, "fmu+opensees"
                        if label == "flexible" else "fmu", passed=bool(
                            reached and abs(value - PUBLISHED_DYNAMIC_ONSET) <= ONSET_TOLERANCE),
                        compared=label == "flexible",
                        why=("0.4 mm: half the paper's static-to-dynamic difference (9.4 -> 10.2 mm): "
                             "a wider band could not tell the dynamic onset from the static one"
                             if label == "flexible" else
                             "not compared: rigid track: static onset only (the paper's 10.2 mm is "
                             "the dynamic, flexible-track value)"),
                        note="" if reached else f"not reached: largest outer contact angle "
                                               f"{np.degrees(ang):.1f} deg"))
    for value, label in ((r_flex, "flexible"), (r_rigid, "rigid")):
        rows.append(Row(name, f"outer tread + flange-root (20-60 deg) two-point onset |y|, {label} track",
                        "9.4 mm static / 10.2 mm dynamic (paper's flange-root + flange)",
                        value * 1e3, "mm", float("nan"), float("nan"), "fmu",
                        passed=bool(np.isfinite(value)),
                        note="not the paper's quantity: reported, not compared", compared=False,
                        why="not compared: the paper reports the flange-root + flange onset"))
    y_flex = float(np.max(np.abs(flexible.columns["wheelset_y"])))
    y_rigid = float(np.max(np.abs(rigid.columns["wheelset_y"])))
    rows.append(Row(name, "max |y| in the curve, flexible - rigid track", "dynamic > static: 0.8 mm",
                    (y_flex - y_rigid) * 1e3, "mm", float("nan"), float("nan"), "fmu+opensees",
                    passed=bool(y_flex > y_rigid),
                    why="criterion: the sign of the paper's dynamic effect (flexible > rigid)",
                    note=f"flexible {y_flex * 1e3:.2f} mm, rigid {y_rigid * 1e3:.2f} mm"))
    curve = flexible.columns["time"] >= flexible.columns["time"][-1] - 2.0
    rows.append(Row(name, "outer rail head under the wheel in the curve: lateral / roll",
                    "(no published value)",
                    float(np.mean(flexible.columns[f"{OUTER}_rail_lateral"][curve])) * 1e3, "mm",
                    float("nan"), float("nan"), "fmu+opensees", compared=False,
                    why="not compared: no published value",
                    note=f"roll {np.mean(flexible.columns[f'{OUTER}_rail_roll'][curve]) * 1e3:.2f} mrad"))
    fig = plot(flexible, rigid, out / "ren_jin_100_flexible_track.png")
    figures = [("Ren & Jin 2010, 100 km/h on the flexible OpenSees track: outer rail head motion, "
                "outer wheel contact points, lateral displacement vs rigid track [fmu+opensees]", fig)]
    return CaseResult("ren_jin_flexible", "Ren & Jin 2010, R = 400 m, 100 km/h, flexible track "
                      "(wheelset FMU + OpenSees track, cosim/)", rows, figures, csvs, "fmu+opensees",
                      [f"coupled run: {flexible.simulated:g} s in {flexible.wall_total:.0f} s wall"])
