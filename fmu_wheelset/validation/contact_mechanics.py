"""Contact mechanics against Kalker's theory as computed by CONTACT (no FMU).

References: CONTACT (E.A.H. Vollebregt and J.J. Kalker; Apache-2.0,
github.com/eve70a/CONTACT), built and run by hand on inputs written by
tests/data/contact_reference/make_contact_reference.py; its results are
stored as data in tests/data/contact_reference/*.json (how: README.md
there; docs/contact_mechanics.md):

- non-Hertzian normal contact of the project's S1002 on its UIC60 1:40
  (CONTACT module 1, planar contact), tread (y = 0, 3 mm) and flange root
  (y = 6 mm, 24 deg), 80 kN, against the exact solver in the contact plane
  (solver.contact.normal.contact_plane.wheel_normal_contact, `wheelset-fmu patch`);
- Kalker's full theory with spin (CONTACT module 3) against the spin moment of
  the saturated models Shen-Hedrick-Elkins and Polach (solver.contact.creep): at full
  sliding, in the linear range, and everywhere between (reported); and the
  forces of the two models under large spin (reported: a limit of the models,
  docs/contact_mechanics.md);
- non-Hertzian normal contact of LMA on CHN60 1:40 (normal_lma_chn60.json)
  across the tread's arc/line junction and on the flange root, against the
  patch's Hertz contact (solver.contact.normal.patch_curvature).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from fmu_wheelset.validation.common import CaseResult, Row

ROOT = Path(__file__).resolve().parents[2]
REFERENCE_DIR = ROOT / "tests" / "data" / "contact_reference"

SHEAR = 82e9          # CONTACT's G = 82 GPa, nu = 0.28 in every reference case
POISSON = 0.28
NAME = "contact mechanics vs CONTACT"
FULL_SLIDING = ("full lateral sliding", "full lateral sliding + spin",
                "full lateral sliding, eta = -0.1, + spin", "full longitudinal sliding + spin")


def load_reference(filename: str) -> dict:
    """One of the stored CONTACT reference files (JSON, read as data)."""
    return json.loads((REFERENCE_DIR / filename).read_text())


def _normal_rows(rows):
    from solver.contact.geometry.setup import ContactSetup
    from solver.contact.geometry.points import static_contact
    from solver.contact.normal.contact_plane import wheel_normal_contact
    reference = load_reference("normal_s1002_uic60.json")
    setup = ContactSetup.from_names("S1002", "UIC60", step=1e-4, gauge=1.435, back_to_back=1.36,
                                    nominal_radius=0.46)
    young = 2.0 * SHEAR * (1.0 + POISSON)
    for case in reference["cases"]:
        if abs(case["cell"] - 2e-4) > 1e-9:
            continue
        y = case["y"]
        flange = y > 4e-3
        where = "flange root" if flange else "tread"
        sc = static_contact(setup, y)
        contact = wheel_normal_contact(setup, sc, sc.points, reference["setup"]["wheel_load"], young, POISSON,
                                       cell=case["cell"])
        result = contact.results[0]
        tolerance = 0.02 if flange else 0.01
        why = ("2 %: CONTACT's plane lies at its weighted contact angle (25.3 deg; here the rigid point's "
               "24.2 deg) and carries a 0.9 % larger normal force; the issue's target is 5 %" if flange else
               "1 %: the agreement of the quasi-planar solver on the tread (kept)")
        for label, value, ref, unit, scale in (
                ("area", result.area, case["area"], "mm^2", 1e6),
                ("peak pressure", result.peak_pressure, case["peak_pressure"], "MPa", 1e-6),
                ("approach", contact.approaches[0], case["approach"], "um", 1e6)):
            rows.append(Row(NAME, f"S1002/UIC60 y = {y * 1e3:g} mm ({where}, "
                                  f"{math.degrees(contact.grids[0].plane.angle):.1f} deg), {label}",
                            f"{ref * scale:.4g} {unit} (CONTACT, 0.2 mm cells)", value * scale, unit,
                            ref * scale, tolerance * ref * scale, "core", why=why,
                            note=f"{(value / ref - 1) * 100:+.2f} %"))


def _moment_error(model, case):
    from solver.contact.creep.forces import creep_forces
    mz = creep_forces(model, case["xi"], case["eta"], case["phi"], case["a"], case["b"], case["normal_force"],
                      case["friction"], SHEAR, POISSON, 0.0)[2]
    return (mz - case["mz"]) / (case["friction"] * case["normal_force"] * math.sqrt(case["a"] * case["b"]))


def _force_error(model, case):
    from solver.contact.creep.forces import creep_forces
    fx, fy, _ = creep_forces(model, case["xi"], case["eta"], case["phi"], case["a"], case["b"],
                             case["normal_force"], case["friction"], SHEAR, POISSON, 0.0)
    return math.hypot(fx - case["fx"], fy - case["fy"]) / (case["friction"] * case["normal_force"])


def _spin_rows(rows):
    from solver.contact.creep.forces import creep_forces
    cases = load_reference("spin_moment.json")["cases"]
    full = [c for c in cases if c["label"] in FULL_SLIDING]
    for model, label in (("she", "Shen-Hedrick-Elkins"), ("polach", "Polach")):
        worst = max(full, key=lambda c: abs(_moment_error(model, c)))
        rows.append(Row(NAME, f"{label} spin moment at full sliding, largest |Mz - Mz_full| / (mu N sqrt(ab))",
                        "0 (CONTACT, full theory)", abs(_moment_error(model, worst)), "-", 0.0, 0.02, "core",
                        why="0.02: the issue's figure (before: 0.53 for a/b = 2, pure lateral sliding)",
                        note=f"{len(full)} cases, worst {worst['ellipse']} {worst['label']}"))
        for kind in ("linear eta", "linear phi"):
            for case in (c for c in cases if c["label"] == kind):
                mz = creep_forces(model, case["xi"], case["eta"], case["phi"], case["a"], case["b"],
                                  case["normal_force"], case["friction"], SHEAR, POISSON, 0.0)[2]
                ref = case["extrapolated"]["mz"]
                rows.append(Row(NAME, f"{label} spin moment, {kind}, {case['ellipse']}",
                                f"{ref:.4g} N m (CONTACT, extrapolated from 40/80/160 elements)", mz, "N m",
                                ref, 0.03 * abs(ref), "core",
                                why="3 %: Kalker's tabulated C23, C33 (interpolated in nu) against the "
                                    "converged full theory: C33 1.2-1.9 % below",
                                note=f"{(mz / ref - 1) * 100:+.1f} %"))
        everywhere = max(cases, key=lambda c: abs(_moment_error(model, c)))
        rows.append(Row(NAME, f"{label} spin moment, all {len(cases)} cases, largest |Mz - Mz_full| / "
                              "(mu N sqrt(ab))", "0 (CONTACT, full theory)", abs(_moment_error(model, everywhere)),
                        "-", 0.0, float("nan"), "core", compared=False,
                        why="reported: the heuristic's accuracy in partial slip (docs/contact_mechanics.md)",
                        note=f"worst {everywhere['ellipse']} {everywhere['label']}"))
        forces = max(cases, key=lambda c: _force_error(model, c))
        rows.append(Row(NAME, f"{label} tangential force, all {len(cases)} cases, largest |F - F_full| / (mu N)",
                        "0 (CONTACT, full theory)", _force_error(model, forces), "-", 0.0, float("nan"), "core",
                        compared=False,
                        why="reported: the published force laws under large spin (a limit of the model)",
                        note=f"worst {forces['ellipse']} {forces['label']}"))


# the patch's Hertz contact (solver/contact/normal/patch_curvature.py) against
# CONTACT on LMA/CHN60 (normal_lma_chn60.json): 3.5 %, CONTACT against itself
# at 0.1 and 0.2 mm elements within 1 %, and a Hertz patch keeps one curvature
# where the profile's changes within it (measured within 3.2 %). At y = 9.0 mm
# the patch spans the flange root's turn from 27 to some 50 degrees, where
# CONTACT warns that its planar half-space does not hold: reported only.
PATCH_FORCE_TOLERANCE = 0.035
PLANAR_INVALID_Y = (0.009,)


def lma_chn60_setup(reference):
    """The contact setup of the LMA/CHN60 reference (its back-to-back and radius)."""
    from solver.model.parameters import WheelsetParameters
    from solver.model.wheelset import WheelsetModel
    setup = reference["setup"]
    return WheelsetModel(WheelsetParameters(
        wheel_profile="LMA", rail_profile="CHN60", rail_inclination=math.atan(1.0 / 40.0),
        back_to_back=setup["back_to_back"], nominal_radius=setup["nominal_radius"])).setup


def forces_at_contact_approach(setup, reference, case):
    """(pointwise Hertz force, patch Hertz force, the patch centre's wheel s) at
    the approach CONTACT found for `case` of `reference`, at its rigid point: the
    pointwise force with the curvatures at the point, the patch's with the lateral
    curvature sum B the secant of the gap at the patch's edges (patch_geometry)."""
    from solver.contact.normal.hertz import hertz_from_penetration_fit_kernel
    from solver.contact.normal.patch_curvature import patch_geometry
    from solver.layout import G_RAIL_DU, G_RAIL_U0, G_WHEEL_DS, G_WHEEL_S0
    shear, nu = reference["setup"]["shear_modulus"], reference["setup"]["poisson"]
    young = 2.0 * shear * (1.0 + nu)
    tables, wheel, rail = setup.tables, setup.wheel, setup.rail
    point = case["rigid_points"][0]
    s, u = point["wheel_s"], point["rail_u"]
    f1, f2 = wheel.slope_at(s), wheel.second_derivative_at(s)
    z1, z2 = rail.slope_at(u), rail.second_derivative_at(u)
    a_sum = 0.5 * math.cos(math.atan(f1)) / (reference["setup"]["nominal_radius"] + wheel.height_at(s))
    b_point = 0.5 * (-f2 / (1 + f1 * f1) ** 1.5 - z2 / (1 + z1 * z1) ** 1.5)
    approach = case["patches"][0]["approach"]
    grids = ((tables.params[G_WHEEL_S0], tables.params[G_WHEEL_DS]),
             (tables.params[G_RAIL_U0], tables.params[G_RAIL_DU]))
    b_patch, shift, _ = patch_geometry(tables.wheel, tables.rail, *grids, s, u, approach, a_sum,
                                       young, nu)
    pointwise = hertz_from_penetration_fit_kernel(approach, a_sum, b_point, young, nu)[0]
    patch = hertz_from_penetration_fit_kernel(approach, a_sum, b_patch, young, nu)[0]
    return pointwise, patch, s + shift


def _patch_rows(rows):
    """The patch's Hertz force at CONTACT's approach, by group (the tread's
    arc/line junction, the flange root): the largest difference, and the
    pointwise curvature's beside it."""
    reference = load_reference("normal_lma_chn60.json")
    setup = lma_chn60_setup(reference)
    groups: dict = {}
    for case in reference["cases"]:
        if len(case["patches"]) != 1:
            continue
        pointwise, patch, _ = forces_at_contact_approach(setup, reference, case)
        want = case["patches"][0]["normal_force"]
        invalid = any(abs(case["y"] - y) < 1e-9 for y in PLANAR_INVALID_Y)
        entry = groups.setdefault((case["group"], invalid), [0.0, 0.0, 0])
        entry[0] = max(entry[0], abs(patch / want - 1.0))
        entry[1] = max(entry[1], abs(pointwise / want - 1.0))
        entry[2] += 1
    for (group, invalid), (patch_error, point_error, count) in sorted(groups.items()):
        where = f"{group}, y = 9.0 mm (CONTACT's planar contact invalid)" if invalid else group
        rows.append(Row(NAME, f"LMA/CHN60 patch Hertz force at CONTACT's approach, {where}, "
                        f"{count} cases: largest |F / F_CONTACT - 1|", "0 (CONTACT, non-Hertzian)",
                        patch_error, "-", 0.0, PATCH_FORCE_TOLERANCE, "core", compared=not invalid,
                        why=("3.5 %: CONTACT's own discretisation 1 %, one curvature per patch"
                             if not invalid else "reported: the planar half-space does not hold there"),
                        note=f"with the curvatures at the point instead: {point_error:.3f}"))


def case_contact_mechanics(out=None, backend="core") -> CaseResult:
    rows: list = []
    _normal_rows(rows)
    _patch_rows(rows)
    _spin_rows(rows)
    return CaseResult("contact_mechanics", "Contact mechanics against Kalker's theory (CONTACT)", rows, [], [],
                      "core", ["references: CONTACT run by hand, tests/data/contact_reference/*.json "
                               "(make_contact_reference.py, README.md there); docs/contact_mechanics.md"])
