"""Non-Hertzian normal contact in the contact plane (solver/contact/normal/, `wheelset-fmu patch`).

References:
- Hertz (closed form, solver.contact.normal.hertz.hertz_ellipse) for two circular profiles
  meeting at 25 deg: the gap of the exact surfaces in the contact plane is
  Hertzian to second order, so the patch must be Hertz's.
- An independent construction of the gap: root-finding of the normal line on
  the profiles' splines (scipy brentq), against the sampled construction.
- CONTACT (Vollebregt's program, module 1, planar contact), run by hand on the
  project's own S1002 and UIC60 profiles: tests/data/contact_reference/
  normal_s1002_uic60.json (how it was made: README.md there).
"""
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize

from solver.contact.normal import hertz as nm
from solver.contact.normal.boundary_element import (
    exact_normal_contact, exact_normal_contact_approach,
)
from solver.contact.normal.contact_plane import (
    contact_plane, contact_plane_gap, plane_gap_on_grid, wheel_normal_contact,
)
from solver.contact.geometry.setup import ContactSetup, _rail_gauge_point_offset
from solver.contact.geometry.points import static_contact
from solver.profiles.profile import profile_from_points

REFERENCE = Path(__file__).parent / "data" / "contact_reference" / "normal_s1002_uic60.json"
SHEAR = 82e9
POISSON = 0.28
YOUNG = 2.0 * SHEAR * (1.0 + POISSON)     # CONTACT's G = 82 GPa, nu = 0.28


def rel(value, reference):
    return abs(value - reference) / abs(reference)


def test_approach_prescribed_equals_load_prescribed():
    """The two modes of the exact solver are inverse to each other (sphere, R = 0.3 m)."""
    n, half = 48, 6e-3
    d = 2 * half / n
    x = -half + d * (np.arange(n) + 0.5)
    X, Y = np.meshgrid(x, x, indexing="ij")
    gap = (X ** 2 + Y ** 2) / 0.6
    by_load = exact_normal_contact(gap, d, d, 5e4, YOUNG, POISSON, x0=x[0], y0=x[0])
    by_approach = exact_normal_contact_approach(gap, d, d, by_load.approach, YOUNG, POISSON, x0=x[0], y0=x[0])
    assert by_approach.converged
    assert rel(by_approach.total_force, 5e4) < 1e-5
    assert by_approach.area == by_load.area
    assert rel(by_approach.peak_pressure, by_load.peak_pressure) < 1e-5
    # no interpenetration: no pressure
    zero = exact_normal_contact_approach(gap + 1e-6, d, d, 0.0, YOUNG, POISSON)
    assert zero.total_force == 0.0 and zero.patches == ()


def _circles_setup(angle_deg=25.0, rail_radius=13.0, wheel_radius=16.0):
    """A R13 rail crown (steep straight flanks below 12 mm) and a concave R16 wheel that
    touch at the rail point of slope angle_deg on the gauge side; no inclination; the
    wheel's s = 0 stands over the rail's u = 0 at y = 0. Lengths of the circles in mm."""
    d = math.radians(angle_deg)
    normal = np.array([-math.sin(d), math.cos(d)])
    contact = np.array([0.0, -rail_radius]) + rail_radius * normal
    centre = contact - wheel_radius * normal
    u = np.arange(-20.0, 20.0001, 0.1)
    au = np.minimum(np.abs(u), 12.0)
    z = np.sqrt(rail_radius ** 2 - au ** 2) - rail_radius - 3.0 * (np.abs(u) - au)
    rail = profile_from_points(u * 1e-3, z * 1e-3, name="R13", kind="rail", source="synthetic", method="akima")
    s = np.arange(-14.0, 2.0001, 0.1)
    radius_increase = -(centre[1] + np.sqrt(wheel_radius ** 2 - (s - centre[0]) ** 2))
    wheel = profile_from_points(s * 1e-3, radius_increase * 1e-3, name="R16", kind="wheel", source="synthetic",
                                method="cubic", flange_back_to_taping_line=0.07)
    taping = 0.68 + 0.07
    setup = ContactSetup(wheel, rail, gauge=2.0 * (taping - _rail_gauge_point_offset(rail, 0.0)),
                         inclination=0.0, back_to_back=1.36, nominal_radius=0.46)
    return setup, contact * 1e-3


def test_inclined_circles_give_hertz_in_the_contact_plane():
    """Two circles meeting at 25 deg: Hertz with A = cos(25 deg)/(2 r), B = (1/13 - 1/16)/2 per mm.
    Measured (0.1 mm cells): area +0.7 %, p_max +0.2 %, approach +0.1 %. Tolerances: 2 % on the
    area (whole elements along the rim of a 1.5 mm wide patch), 1 % on p_max and the approach;
    the quasi-planar projection of the old `patch` is off by cos(25 deg) in the width alone."""
    setup, point = _circles_setup()
    sc = static_contact(setup, 0.0)
    assert math.degrees(sc.points.contact_angle[0, 0]) == pytest.approx(25.0, abs=0.01)
    assert sc.points.y_rail[0, 0] == pytest.approx(point[0], abs=2e-6)
    load = 20e3
    contact = wheel_normal_contact(setup, sc, sc.points, load, YOUNG, POISSON, cell=1e-4)
    assert len(contact.results) == 1 and contact.results[0].converged
    d = contact.grids[0].plane.angle
    assert math.degrees(d) == pytest.approx(25.0, abs=0.01)
    radius = setup.nominal_radius + float(setup.wheel.height_at(point[0]))
    hertz = nm.hertz_ellipse(0.5 * math.cos(d) / radius, 0.5 * (1 / 0.013 - 1 / 0.016), load / math.cos(d),
                             YOUNG, POISSON)
    result = contact.results[0]
    assert rel(contact.vertical_force, load) < 1e-6
    assert rel(result.total_force, load / math.cos(d)) < 1e-6
    assert rel(result.area, hertz.area) < 0.02
    assert rel(result.peak_pressure, hertz.p0) < 0.01
    assert rel(contact.approaches[0], hertz.approach) < 0.01


def test_plane_gap_equals_root_finding_on_the_profiles():
    """The sampled gap construction against root-finding of the normal line on the splines (S1002 on
    UIC60 1:40 at y = 6 mm, the flange root, 24 deg), at x = 0 and x = 4 mm. Tolerance 0.01 um: the
    linear interpolation between samples 0.02 mm apart errs by curvature * step^2 / 8 ~ 0.004 um."""
    setup = ContactSetup.from_names("S1002", "UIC60", step=1e-4, gauge=1.435, back_to_back=1.36,
                                    nominal_radius=0.46)
    sc = static_contact(setup, 6e-3)
    plane = contact_plane(setup, float(sc.points.y_rail[0, 0]))
    s = np.array([-3e-3, -1e-3, 0.0, 1.5e-3, 4e-3])
    x = np.array([0.0, 4e-3])
    gap = plane_gap_on_grid(setup, sc, plane, x, s)
    theta = setup.inclination
    t = np.array([math.cos(plane.angle), math.sin(plane.angle)])
    n = np.array([-math.sin(plane.angle), math.cos(plane.angle)])
    origin = np.array([plane.origin_y, plane.origin_z])

    def rail_surface(lam, sv):
        point = origin + sv * t + lam * n
        dy, dz = point[0] - setup.rail_centre_y, point[1]
        u = math.cos(theta) * dy + math.sin(theta) * dz
        zeta = -math.sin(theta) * dy + math.cos(theta) * dz
        return zeta - setup.rail.height_at(u)

    def wheel_surface(lam, sv, xv):
        point = origin + sv * t + lam * n
        dy, dz = point[0] - sc.y, point[1] - sc.z
        axial = dy * math.cos(sc.roll) + dz * math.sin(sc.roll)
        radial = -dy * math.sin(sc.roll) + dz * math.cos(sc.roll)
        return math.hypot(xv, radial) - (setup.nominal_radius + setup.wheel.height_at(axial - setup.taping_line_axial))

    for i, xv in enumerate(x):
        for j, sv in enumerate(s):
            lam_r = optimize.brentq(rail_surface, -2e-3, 2e-3, args=(sv,), xtol=1e-14)
            lam_w = optimize.brentq(wheel_surface, -2e-3, 2e-3, args=(sv, xv), xtol=1e-14)
            assert abs(gap[i, j] - (lam_w - lam_r)) < 1e-8


def _reference():
    return json.loads(REFERENCE.read_text())


@pytest.mark.parametrize("y, tolerance", [(0.0, 0.01), (3e-3, 0.01), (6e-3, 0.02)])
def test_s1002_uic60_patch_against_contact(y, tolerance):
    """S1002 on UIC60 1:40, 80 kN, 0.2 mm cells, against CONTACT on the same profiles and cells
    (its module 1, planar contact). Measured: tread (y = 0, 3 mm) within 0.3 %, flange root
    (y = 6 mm, 24 deg) within 0.7 % (area 59.2 / 59.4 mm^2, p_max 2419 / 2433 MPa, approach
    119.1 / 119.9 um); the quasi-planar solver this replaces was 14.6 % below in area at the flange
    root (0.4 mm cells). Tolerances: 1 % on the tread (the old solver's agreement there, kept);
    2 % at the flange root, where CONTACT's plane lies at its weighted contact angle (25.3 deg,
    here the rigid point's 24.2 deg) and carries a 0.9 % larger normal force. The
    target: 5 %."""
    case = next(c for c in _reference()["cases"] if c["y"] == y and c["cell"] == pytest.approx(2e-4))
    setup = ContactSetup.from_names("S1002", "UIC60", step=1e-4, gauge=1.435, back_to_back=1.36,
                                    nominal_radius=0.46)
    sc = static_contact(setup, y)
    assert sc.roll == pytest.approx(case["roll"], abs=1e-12)
    contact = wheel_normal_contact(setup, sc, sc.points, 80e3, YOUNG, POISSON, cell=2e-4)
    assert len(contact.results) == 1
    result = contact.results[0]
    assert result.converged and rel(contact.vertical_force, 80e3) < 1e-6
    assert rel(result.area, case["area"]) < tolerance
    assert rel(result.peak_pressure, case["peak_pressure"]) < tolerance
    assert rel(contact.approaches[0], case["approach"]) < tolerance


def test_two_contact_planes_share_the_vertical_load():
    """LMA-worn on CHN60 at y = 0.2 mm: two tread points 27 mm apart (6.7 and -2.4 deg, the second
    33 um higher) are two
    patches in two planes, tied by the wheel's vertical motion: the normal forces carry the load
    (sum N cos(d) = Q to 1e-6), each patch lies at its own point and the deeper point carries more."""
    setup = ContactSetup.from_names("LMA-worn", "CHN60", step=1e-4, back_to_back=1.353, nominal_radius=0.43)
    sc = static_contact(setup, 0.2e-3)
    assert sc.points.count[0] == 2
    contact = wheel_normal_contact(setup, sc, sc.points, 80e3, YOUNG, POISSON, cell=2e-4)
    assert len(contact.grids) == 2
    angles = sorted(math.degrees(g.plane.angle) for g in contact.grids)
    # the planes are the two points' contact angles (static_contact: -2.354 and 6.676 deg)
    assert angles[0] == pytest.approx(-2.35, abs=0.05) and angles[1] == pytest.approx(6.68, abs=0.05)
    assert rel(contact.vertical_force, 80e3) < 1e-6
    assert all(r.converged and r.total_force > 0.0 for r in contact.results)
    vertical = sum(r.total_force * math.cos(g.plane.angle) for r, g in zip(contact.results, contact.grids))
    assert rel(vertical, 80e3) < 1e-6
    principal = contact.results[0]
    assert principal.total_force > contact.results[1].total_force
    for result in contact.results:   # each patch centred on its own plane's origin (within 1.5 mm)
        assert abs(result.patches[0].centroid_y) < 1.5e-3 and abs(result.patches[0].centroid_x) < 1e-4


def test_patch_command_draws_the_planes(tmp_path):
    from fmu_wheelset.cli.main import main
    out = tmp_path / "patch.png"
    code = main(["patch", "--wheel", "S1002", "--rail", "UIC60", "--back-to-back", "1360", "--radius", "460",
                 "--y", "6", "--cell", "0.3", "--out", str(out)])
    assert code == 0 and out.stat().st_size > 1000


def test_plane_gap_bad_input():
    setup = ContactSetup.from_names("S1002", "UIC60", step=1e-4)
    sc = static_contact(setup, 0.0)
    with pytest.raises(nm.NormalContactError):
        contact_plane_gap(setup, sc, float(sc.points.y_rail[0, 0]), cell=0.0)
    with pytest.raises(nm.NormalContactError):
        wheel_normal_contact(setup, sc, sc.points, -1.0, YOUNG, POISSON)
    with pytest.raises(nm.NormalContactError):
        wheel_normal_contact(setup, sc, sc.points, 80e3, YOUNG, POISSON, side=2)
