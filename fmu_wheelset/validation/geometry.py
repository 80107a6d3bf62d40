"""Static contact geometry of LMA/CHN60 and LMA-worn/CHN60 (Ren & Jin 2010):
static flange-root + flange two-point onset at 9.4 mm (new LMA); the worn LMA
touches at two tread points near 1 mm. solver.geometry_analysis, no FMU."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from fmu_wheelset.validation.common import CaseResult, Row, figure, save

EPS_STATIC = 1e-4


def _setup(wheel):
    from solver.geometry import ContactSetup
    return ContactSetup.from_names(wheel, "CHN60", inclination_ratio=40, gauge=1.435,
                                   back_to_back=1.353, nominal_radius=0.43)


def case_geometry(out, backend="fmu") -> CaseResult:
    from solver.geometry_analysis import geometry_sweep, two_point_onset
    out = Path(out)
    name = "5 static geometry"
    new, worn = _setup("LMA"), _setup("LMA-worn")
    onset = two_point_onset(new, "left", epsilon=EPS_STATIC, y_max=0.013, step=2e-4, tolerance=1e-5)
    rows = [Row(name, "LMA/CHN60 flange-root + flange two-point onset", "9.4 mm", onset * 1e3, "mm",
                9.4, 0.7, "geometry")]
    ys = np.arange(0.0, 0.0121, 2e-4)
    csv_rows = []
    figs_data = {}
    for label, setup in (("LMA", new), ("LMA-worn", worn)):
        sweep = geometry_sweep(setup, ys, epsilon=EPS_STATIC)
        pts = []
        for y, sc in zip(ys, sweep):
            p = sc.points
            for k in range(int(p.count[0])):
                pts.append((y, p.y_wheel[0, k], np.degrees(p.contact_angle[0, k])))
                csv_rows.append((label, y * 1e3, k + 1, p.y_wheel[0, k] * 1e3,
                                 np.degrees(p.contact_angle[0, k]), p.rolling_radius[0, k] * 1e3))
        figs_data[label] = np.array(pts)
    # worn: two tread points near 1 mm
    sc = geometry_sweep(worn, [1e-3], epsilon=EPS_STATIC)[0]
    p = sc.points
    side = int(np.argmax(p.count))
    n = int(p.count[side])
    tread = n >= 2 and bool(np.all(np.abs(p.contact_angle[side, :n]) < np.radians(10)))
    rows.append(Row(name, "LMA-worn/CHN60 contact points per wheel at y = 1 mm", "2 (tread, either "
                    "side of the hollow)", n, "", 2.0, 0.0, "geometry", passed=bool(n >= 2 and tread)))
    two_worn = [y for y, s in zip(ys, geometry_sweep(worn, ys, epsilon=EPS_STATIC))
                if int(s.points.count[0]) >= 2 and np.all(np.abs(s.points.contact_angle[0, :s.points.count[0]]) < np.radians(10))]
    if two_worn:
        rows.append(Row(name, "LMA-worn two tread points: y range", "near 1 mm",
                        float(np.mean([two_worn[0], two_worn[-1]])) * 1e3, "mm", 1.0, 1.0, "geometry",
                        note=f"{two_worn[0] * 1e3:.1f}-{two_worn[-1] * 1e3:.1f} mm"))
    csv = out / "static_geometry.csv"
    with open(csv, "w") as fh:
        fh.write("wheel,y_mm,point,s_mm,contact_angle_deg,rolling_radius_mm\n")
        for r in csv_rows:
            fh.write(f"{r[0]},{r[1]:.3f},{r[2]},{r[3]:.4f},{r[4]:.4f},{r[5]:.4f}\n")
    fig, ax = figure(1, 2, size=(9.0, 3.6))
    for a, label in zip(ax[0], ("LMA", "LMA-worn")):
        d = figs_data[label]
        sc_ = a.scatter(d[:, 0] * 1e3, d[:, 1] * 1e3, c=d[:, 2], s=6, cmap="viridis")
        a.set_xlabel("lateral displacement y (mm)")
        a.set_ylabel("contact point s on the wheel (mm)")
        a.set_title(f"{label}/CHN60, flange-side wheel", fontsize=9)
        fig.colorbar(sc_, ax=a, label="contact angle (deg)")
    ax[0, 0].axvline(onset * 1e3, color="r", lw=0.8)
    figs = [("Static contact geometry, contact points vs lateral displacement (Ren & Jin 2010 "
             "Figs. 3-6) [geometry, no FMU]", save(fig, out / "static_geometry.png"))]
    return CaseResult("geometry", "Static contact geometry LMA / LMA-worn on CHN60", rows, figs,
                      [csv], "geometry", ["solver.geometry_analysis (rigid static contact, epsilon 0.1 mm)"])
