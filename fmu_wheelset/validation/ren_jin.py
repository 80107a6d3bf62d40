"""Ren & Jin (2010), Chinese J. Mech. Eng. 46(16): multipoint wheel-rail contact,
hollow-worn LMA wheels on CHN60 rails, R = 400 m curve (scenarios
ren-jin-r400-100 and ren-jin-r400-80 of solver.scenarios).

The curve turns left, so the RIGHT wheel is the outer (flange-side) wheel.
Zones on the wheel profile (s from the taping line, flange at s < 0):
flange s < -25 mm, flange root -25 <= s < -15 mm, tread s >= -15 mm.

Figures as the paper draws them, against the travelled distance:
Fig. 7 contact point positions on the inner and outer wheel; Fig. 8 normal
force of each contact patch and the lateral displacement; Fig. 9 contact angle
and flange force of the outer wheel; Fig. 10 derailment quotient; Figs. 11-12
the same with the single-point method; Figs. 13-16 at 80 km/h.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from fmu_wheelset.validation.common import (CaseResult, Row, backend_label, cached_run,
                                            figure, first_index, point_array, save, write_csv,
                                            zone_points)

FLANGE = (-1.0, -0.025)
ROOT = (-0.025, -0.015)
TREAD = (-0.015, 1.0)
OUTER, INNER = "right", "left"
PUBLISHED_DYNAMIC_ONSET = 10.2e-3     # m, flange-root + flange two-point contact
ONSET_TOLERANCE = 1.0e-3


def _plot_points(ax, c, side, title):
    x = c["wheelset.distance"]
    for k in range(1, 4):
        a = c[f"contact.{side}.point[{k}].active"] > 0.5
        s = np.where(a, c[f"contact.{side}.point[{k}].wheel_lateral"] * 1e3, np.nan)
        ax.plot(x, s, ".", ms=2, label=f"point {k}")
    ax.set_ylabel("contact point s (mm)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, markerscale=4)


def _plot_fig7(run, path, label):
    fig, ax = figure(2, 1)
    c = run.columns
    _plot_points(ax[0, 0], c, OUTER, f"{label}: outer (right) wheel, contact point on the tread")
    _plot_points(ax[1, 0], c, INNER, "inner (left) wheel")
    ax[1, 0].set_xlabel("distance (m)")
    fig.suptitle(f"backend: {backend_label(run)}", fontsize=8)
    return save(fig, path)


def _plot_fig8(run, path, label):
    fig, ax = figure(2, 1)
    c = run.columns
    x = c["wheelset.distance"]
    for side, what in ((OUTER, "outer"), (INNER, "inner")):
        for k in range(1, 4):
            n = c[f"contact.{side}.point[{k}].normal_force"]
            if (n > 0).any():
                ax[0, 0].plot(x, np.where(n > 0, n / 1e3, np.nan), lw=1, label=f"{what} patch {k}")
    for zone, name in ((FLANGE, "outer flange"), (ROOT, "outer flange root")):
        f, _, _ = zone_points(c, OUTER, *zone)
        ax[0, 0].plot(x, f / 1e3, "--", lw=1.5, label=name)
    ax[0, 0].set_ylabel("normal force (kN)")
    ax[0, 0].set_title(f"{label}: normal force of each contact patch", fontsize=9)
    ax[0, 0].legend(fontsize=6, ncol=2)
    ax[1, 0].plot(x, c["wheelset.y"] * 1e3)
    ax[1, 0].set_ylabel("lateral displacement (mm)")
    ax[1, 0].set_xlabel("distance (m)")
    fig.suptitle(f"backend: {backend_label(run)}", fontsize=8)
    return save(fig, path)


def _plot_fig9(run, path, label):
    fig, ax = figure(2, 1)
    c = run.columns
    x = c["wheelset.distance"]
    for k in range(1, 4):
        a = c[f"contact.{OUTER}.point[{k}].active"] > 0.5
        ax[0, 0].plot(x, np.where(a, np.degrees(c[f"contact.{OUTER}.point[{k}].contact_angle"]), np.nan),
                      ".", ms=2, label=f"point {k}")
    ax[0, 0].set_ylabel("contact angle (deg)")
    ax[0, 0].set_title(f"{label}: outer wheel", fontsize=9)
    ax[0, 0].legend(fontsize=7, markerscale=4)
    f, _, _ = zone_points(c, OUTER, *FLANGE)
    ax[1, 0].plot(x, np.nan_to_num(f) / 1e3)
    ax[1, 0].set_ylabel("flange normal force (kN)")
    ax[1, 0].set_xlabel("distance (m)")
    fig.suptitle(f"backend: {backend_label(run)}", fontsize=8)
    return save(fig, path)


def _plot_fig10(run, path, label):
    fig, ax = figure(1, 1, size=(7.5, 3.2))
    c = run.columns
    for side, what in ((OUTER, "outer"), (INNER, "inner")):
        ax[0, 0].plot(c["wheelset.distance"], c[f"wheel.{side}.Y_over_Q"], label=f"{what} wheel")
    ax[0, 0].set_ylabel("derailment quotient Y/Q")
    ax[0, 0].set_xlabel("distance (m)")
    ax[0, 0].set_title(f"{label} (backend: {backend_label(run)})", fontsize=9)
    ax[0, 0].legend(fontsize=7)
    return save(fig, path)


def _figures(run, out, stem, label, numbers):
    figs = []
    for fn, number, caption in zip((_plot_fig7, _plot_fig8, _plot_fig9, _plot_fig10), numbers,
                                   ("contact point positions on the wheel tread",
                                    "normal force of each contact patch, lateral displacement",
                                    "contact angle and flange force, outer wheel",
                                    "derailment quotient")):
        if number is None:
            continue
        path = fn(run, out / f"{stem}_fig{number}.png", label)
        figs.append((f"Ren & Jin 2010 Fig. {number} ({label}): {caption} "
                     f"[{backend_label(run)}]", path))
    return figs


def flange_two_point(c):
    """Per time: the outer wheel touches at the flange root AND the flange."""
    _, _, root = zone_points(c, OUTER, *ROOT)
    _, _, flange = zone_points(c, OUTER, *FLANGE)
    return root & flange


def case_multipoint_100(out, backend="fmu") -> CaseResult:
    out = Path(out)
    run = cached_run("ren-jin-r400-100", out, backend)
    c = run.columns
    csv = write_csv(c, out / "ren_jin_100_multipoint.csv")
    name = "1 Ren & Jin 100 km/h multipoint"
    rows = []
    two = flange_two_point(c)
    i = first_index(two)
    onset = abs(c["wheelset.y"][i]) if i is not None else float("nan")
    rows.append(Row(name, "flange-root + flange two-point onset |y|", "10.2 mm (dynamic)",
                    onset * 1e3, "mm", PUBLISHED_DYNAMIC_ONSET * 1e3, ONSET_TOLERANCE * 1e3,
                    run.backend))
    steady = c["time"] >= c["time"][-1] - 2.0
    f_root, _, _ = zone_points(c, OUTER, *ROOT)
    f_flange, ang_flange, _ = zone_points(c, OUTER, *FLANGE)
    ratio = np.nanmean(f_root[steady & two]) / np.nanmean(f_flange[steady & two]) if (steady & two).any() else float("nan")
    rows.append(Row(name, "flange-root / flange normal force (curve)", "> 1 (larger at the flange root)",
                    ratio, "", float("nan"), float("nan"), run.backend,
                    passed=bool(ratio > 1.0)))
    yq = float(np.nanmax(c[f"wheel.{OUTER}.Y_over_Q"]))
    rows.append(Row(name, "max Y/Q outer wheel", "< 0.8 (limit; paper's curve well below)",
                    yq, "", float("nan"), float("nan"), run.backend, passed=bool(yq < 0.8)))
    rows.append(Row(name, "max |y| in the curve", "~10.2 mm (two-point from there)",
                    float(np.max(np.abs(c["wheelset.y"]))) * 1e3, "mm", 10.2, 1.0, run.backend))
    figs = _figures(run, out, "ren_jin_100_multipoint", "100 km/h, multipoint", (7, 8, 9, 10))
    return CaseResult("ren_jin_100", "Ren & Jin 2010, R = 400 m, 100 km/h, multipoint (Figs. 7-10)",
                      rows, figs, [csv], run.backend, [run.note])


def _jumps(c):
    """Number of jumps of the outer wheel's single contact point between the
    flange root and the flange, and the force range at the flange root."""
    s = c[f"contact.{OUTER}.point[1].wheel_lateral"]
    a = c[f"contact.{OUTER}.point[1].active"] > 0.5
    zone = np.where(a & (s < FLANGE[1]), 2, np.where(a & (s < ROOT[1]), 1, 0))
    in_curve = zone > 0
    z = zone[in_curve]
    jumps = int(np.sum((z[1:] != z[:-1]) & (z[1:] > 0) & (z[:-1] > 0)))
    return jumps


def case_single_100(out, backend="fmu") -> CaseResult:
    out = Path(out)
    run = cached_run("ren-jin-r400-100", out, backend, contact_model="single")
    multi = cached_run("ren-jin-r400-100", out, backend)
    c = run.columns
    csv = write_csv(c, out / "ren_jin_100_single.csv")
    name = "2 Ren & Jin 100 km/h single-point"
    jumps = _jumps(c)
    rows = [Row(name, "jumps flange root <-> flange (outer wheel)", "repeated jumps (Fig. 11)",
                jumps, "", float("nan"), float("nan"), run.backend, passed=jumps >= 2)]
    steady = c["time"] >= 8.0
    n_single = c[f"contact.{OUTER}.point[1].normal_force"][steady]
    n_multi = point_array(multi.columns, OUTER, "normal_force").sum(axis=1)[multi.columns["time"] >= 8.0]
    osc_s = (n_single.max() - n_single.min()) / n_single.mean()
    osc_m = (n_multi.max() - n_multi.min()) / n_multi.mean()
    rows.append(Row(name, "outer normal force oscillation (max-min)/mean, t > 8 s",
                    "oscillates (Fig. 12); multipoint smooth", osc_s * 100, "%",
                    float("nan"), float("nan"), run.backend, passed=bool(osc_s > 0.1 and osc_s > 5 * osc_m),
                    note=f"multipoint {osc_m * 100:.2g} %"))
    rows.append(Row(name, "multipoint outer normal force oscillation, t > 8 s", "smooth",
                    osc_m * 100, "%", 0.0, 5.0, multi.backend))
    figs = []
    for fn, number, caption in ((_plot_fig7, 11, "contact point position on the outer wheel tread"),
                                (_plot_fig8, 12, "normal force and lateral displacement")):
        path = fn(run, out / f"ren_jin_100_single_fig{number}.png", "100 km/h, single point")
        figs.append((f"Ren & Jin 2010 Fig. {number} (100 km/h, single point): {caption} "
                     f"[{backend_label(run)}]", path))
    return CaseResult("ren_jin_100_single", "Ren & Jin 2010, 100 km/h, single-point method (Figs. 11-12)",
                      rows, figs, [csv], run.backend, [run.note])


def running_relative_difference(a, b, t, window=0.2):
    """Running mean (over `window` s, the resolution of the paper's plots) of |a - b| / b."""
    dt = float(np.median(np.diff(t))) if t.size > 1 else 1.0
    n = max(1, int(round(window / dt)))
    k = np.ones(n) / n
    ra, rb = np.convolve(a, k, "valid"), np.convolve(b, k, "valid")
    return np.abs(ra - rb) / np.maximum(rb, 1.0)


def case_80(out, backend="fmu") -> CaseResult:
    out = Path(out)
    multi = cached_run("ren-jin-r400-80", out, backend)
    single = cached_run("ren-jin-r400-80", out, backend, contact_model="single")
    csvs = [write_csv(multi.columns, out / "ren_jin_80_multipoint.csv"),
            write_csv(single.columns, out / "ren_jin_80_single.csv")]
    name = "3 Ren & Jin 80 km/h"
    c = multi.columns
    n_two = int(flange_two_point(c).sum())
    rows = [Row(name, "samples with flange-root + flange two-point contact", "none (Fig. 13)",
                n_two, "", 0.0, 0.0, multi.backend)]
    _, ang, _ = zone_points(c, OUTER, *FLANGE)
    rows.append(Row(name, "max outer contact angle (multipoint)", "tread/flange root only",
                    float(np.degrees(np.nanmax(point_array(c, OUTER, "contact_angle")))), "deg",
                    float("nan"), float("nan"), multi.backend,
                    passed=bool(np.all(np.isnan(ang)))))
    tm, ts = c["time"], single.columns["time"]
    nm = point_array(c, OUTER, "normal_force").sum(axis=1)
    ns = point_array(single.columns, OUTER, "normal_force").sum(axis=1)
    m = min(nm.size, ns.size)
    rel = np.abs(nm[:m] - ns[:m]) / np.maximum(ns[:m], 1.0)
    smooth = running_relative_difference(nm[:m], ns[:m], c["time"][:m])
    rows.append(Row(name, "max 0.2 s running mean of |sum N multi - N single| / N single, outer wheel",
                    "nearly identical (Fig. 16)", float(smooth.max()) * 100, "%", 0.0, 2.0, multi.backend,
                    note=f"instantaneous max {float(rel.max()) * 100:.2g} % (one short transient), "
                         f"mean {float(rel.mean()) * 100:.2g} %"))
    rows.append(Row(name, "max |y| (multipoint)", "below the flange two-point onset",
                    float(np.max(np.abs(c["wheelset.y"]))) * 1e3, "mm", float("nan"), float("nan"),
                    multi.backend, passed=bool(np.max(np.abs(c["wheelset.y"])) < PUBLISHED_DYNAMIC_ONSET)))
    figs = _figures(multi, out, "ren_jin_80_multipoint", "80 km/h, multipoint", (13, 14, None, None))
    fig, ax = figure(2, 1)
    for run, lab in ((multi, "multipoint, sum of patches"), (single, "single point")):
        cc = run.columns
        ax[0, 0].plot(cc["wheelset.distance"], point_array(cc, OUTER, "normal_force").sum(axis=1) / 1e3, label=lab)
        ax[1, 0].plot(cc["wheelset.distance"], cc["wheelset.y"] * 1e3, label=lab)
    ax[0, 0].set_ylabel("outer wheel normal force (kN)")
    ax[0, 0].legend(fontsize=7)
    ax[0, 0].set_title("80 km/h: multipoint vs single point", fontsize=9)
    ax[1, 0].set_ylabel("lateral displacement (mm)")
    ax[1, 0].set_xlabel("distance (m)")
    fig.suptitle(f"backend: {backend_label(multi)}", fontsize=8)
    figs.append((f"Ren & Jin 2010 Figs. 15-16 (80 km/h): single vs multipoint normal force "
                 f"[{backend_label(multi)}]", save(fig, out / "ren_jin_80_compare_fig16.png")))
    return CaseResult("ren_jin_80", "Ren & Jin 2010, 80 km/h, multipoint and single point (Figs. 13-16)",
                      rows, figs, csvs, multi.backend, [multi.note])
