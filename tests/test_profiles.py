"""Tests of solver.profiles, solver.profiles.definitions, profiles/*.txt and the `profiles` command."""
from __future__ import annotations

import math
import os
import re

import numpy as np
import pytest
from scipy.optimize import brentq

from solver.profiles import definitions as defs
from solver.profiles.profile import Profile, find_corners, profile_from_points, resample_profile
from solver.errors import ProfileError
from solver.profiles.builtins import builtin_profile, list_builtin_profiles, worn_lma_profile
from solver.profiles.files import load_profile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROFILE_DIR = os.path.join(ROOT, "profiles")
BUILTIN_NAMES = ["S1002", "LMA", "LMA-worn", "UIC60", "CHN60"]
FILE_BUILTIN_NAMES = ["MBench_S1002_v3", "MBench_UIC60_v3"]
CURVES = {
    "S1002": defs.s1002_curve, "LMA": defs.lma_curve, "LMA-worn": defs.lma_worn_curve,
    "UIC60": defs.uic60_curve, "CHN60": defs.chn60_curve,
}


# ---------------------------------------------------------------------------
# Published check values
# ---------------------------------------------------------------------------

def test_s1002_published_values():
    curve = defs.s1002_curve()
    assert curve(0.0) == pytest.approx(0.0, abs=1e-12)
    assert curve(-55.0) == pytest.approx(28.0, abs=1e-12)          # flange tip
    assert (curve.lateral_min, curve.lateral_max) == (-70.0, 60.0)
    profile = builtin_profile("S1002")
    assert profile.height_at(0.0) == pytest.approx(0.0, abs=1e-9)
    assert profile.height_at(-0.055) == pytest.approx(0.028, abs=1e-9)
    # the flange tip is the highest point of the grid
    assert profile.lateral[np.argmax(profile.height)] == pytest.approx(-0.055, abs=1e-9)
    assert profile.flange_back_to_taping_line == pytest.approx(0.070)
    assert profile.lateral_min == pytest.approx(-0.070) and profile.lateral_max == pytest.approx(0.060)
    # taper of section A is 1:15, tread slope at the taping line is -BB
    assert profile.slope_at(0.045) == pytest.approx(-0.066666667, rel=1e-6)
    assert profile.slope_at(0.0) == pytest.approx(-3.358537058e-2, rel=1e-5)


@pytest.mark.parametrize("index", range(7))
def test_s1002_sections_meet_at_breakpoints(index):
    curve = defs.s1002_curve()
    left, right = curve.sections[index], curve.sections[index + 1]
    x = left.upper
    assert x == pytest.approx(defs.S1002_BREAKPOINTS_MM[::-1][index + 1])
    # heights: published coefficients meet to 1.2e-4 mm (C/D at -35 mm), all others < 4e-5 mm
    tolerance = 1.5e-4 if (left.name, right.name) == ("D", "C") else 5e-5
    assert abs(left(x) - right(x)) < tolerance
    h = 1e-6
    slope_left = (left(x + h) - left(x - h)) / (2 * h)
    slope_right = (right(x + h) - right(x - h)) / (2 * h)
    assert abs(slope_left - slope_right) < 5e-5 * max(1.0, abs(slope_left))


def test_s1002_continuity_fails_with_wrong_section_c_sign():
    """The continuity test can fail: flipping the sign of section C breaks both junctions."""
    curve = defs.s1002_curve()
    c = curve.section_at(-30.0)
    assert c.name == "C"
    assert abs(-c(-26.0) - curve.section_at(-20.0)(-26.0)) > 1.0


def _one_sided_slopes(curve, index, h=1e-7):
    left, right = curve.sections[index], curve.sections[index + 1]
    x = left.upper
    return (left(x) - left(x - h)) / h, (right(x + h) - right(x)) / h, left(x) - right(x)


@pytest.mark.parametrize("name", ["UIC60", "CHN60", "LMA", "LMA-worn"])
def test_tangent_continuity_at_every_junction(name):
    curve = CURVES[name]()
    corners = curve.info.get("corners_mm", ())
    for index in range(len(curve.sections) - 1):
        slope_left, slope_right, jump = _one_sided_slopes(curve, index)
        assert abs(jump) < 1e-9, (name, index)
        if curve.sections[index].upper in corners:
            # a published corner (LMA: 1:40 -> 1:15 at 30 mm, 1:15 -> 45 deg at 60 mm)
            assert abs(slope_left - slope_right) > 0.04, (name, index)
            continue
        # one-sided differences: tolerance covers h*F''/2 at the steep R13 end
        assert abs(slope_left - slope_right) < 2e-4 * max(1.0, abs(slope_left)), (name, index)


def test_uic60_published_dimensions():
    curve = defs.uic60_curve()
    info = curve.info
    assert info["head_width_mm"] == 72.0
    assert info["shoulder_centre_mm"] == pytest.approx((7.5005, 80.1279), abs=5e-4)
    assert info["corner_centre_mm"] == pytest.approx((23.0160, 14.9491), abs=5e-4)
    assert info["shoulder_corner_junction_mm"] == pytest.approx(52.053 / 2, abs=5e-4)
    assert info["flank_top_mm"][0] == 36.0
    assert info["flank_top_mm"][1] == pytest.approx(14.304, abs=5e-3)
    profile = builtin_profile("UIC60")
    assert builtin_profile("60E1") is profile
    assert profile.height_at(0.0) == pytest.approx(0.0, abs=1e-12)
    assert profile.height.max() == pytest.approx(0.0, abs=1e-12)
    # head width: the 1:20 flank starts at |u| = 36 mm on both sides (the spline
    # settles on it within ~0.2 mm of the junction; the contact angle there is
    # within 1 deg of the exact one, 0.71 deg measured)
    for u in (-0.036, 0.036):
        assert abs(profile.slope_at(u + math.copysign(2.5e-4, u))) == pytest.approx(20.0, rel=0.01)
        assert abs(profile.slope_at(u - math.copysign(3e-4, u))) < 7.0
    exact = defs.uic60_curve()
    near = np.linspace(0.0355, 0.0364, 91)
    fd = (exact(near * 1e3 + 1e-5) - exact(near * 1e3 - 1e-5)) / 2e-5
    assert np.max(np.abs(np.degrees(np.arctan(profile.slope_at(near)) - np.arctan(fd)))) < 1.0
    # symmetric; the flank reaches > 20 mm below the crown (flange contact representable)
    u = np.linspace(0, profile.lateral_max, 200)
    np.testing.assert_allclose(profile.height_at(u), profile.height_at(-u), atol=1e-12)
    assert profile.height_at(profile.lateral_max) < -0.020
    assert np.all(np.diff(profile.lateral) > 0)


def test_chn60_published_dimensions():
    curve = defs.chn60_curve()
    assert curve.info["head_width_mm"] == 73.0
    assert curve.info["radii_mm"] == (300.0, 80.0, 13.0)
    profile = builtin_profile("CHN60")
    assert profile.height_at(0.0) == pytest.approx(0.0, abs=1e-12)
    assert profile.height.max() == pytest.approx(0.0, abs=1e-12)
    for u in (-0.0365, 0.0365):
        assert abs(profile.slope_at(u + math.copysign(2.5e-4, u))) == pytest.approx(20.0, rel=0.01)
    # the 1:20 flank starts 0.5 mm further out than on UIC60
    uic = builtin_profile("UIC60")
    assert abs(uic.slope_at(0.03625)) == pytest.approx(20.0, rel=0.01)
    assert abs(profile.slope_at(0.03625)) < 7.0
    assert profile.height_at(profile.lateral_max) < -0.020


from fmu_wheelset.validation.profiles import LMA_TABLE_POINTS_MM  # noqa: E402


def test_lma_is_the_published_chain():
    """The built-in LMA is the published geometry: the table's points lie on the
    chain, and the resampled built-in follows the chain within 1 um."""
    curve = defs.lma_curve()
    s, f = np.array(LMA_TABLE_POINTS_MM).T
    # 1e-6 mm: the table prints 8 significant digits; its two face junctions have s
    # rounded to 1e-6 mm on the 2.75 face slope (2.7e-6 mm of height at most)
    face = (s > -40.3) & (s < -38.0)
    assert np.max(np.abs(curve(s[~face]) - f[~face])) < 1e-6
    assert np.max(np.abs(curve(s[face]) - f[face])) < 3e-6
    # junctions as the table lists them
    info = curve.info
    for key, s_table in (("back_tip_junction", -62.307692), ("tip_flank_junction", -52.557372),
                         ("face_top", -40.265268), ("face_bottom", -38.053345),
                         ("root_throat_junction", -28.4709), ("throat_tread_junction", -10.75),
                         ("tread_cone_junction", 4.253514)):
        assert info[key][0] == pytest.approx(s_table, abs=1e-4 if key == "root_throat_junction" else 1e-6)
    # the built-in (spline through the 0.1 mm grid) within 1 um of the chain; the last
    # 0.5 mm of the flange back (vertical tangent at -70 mm) never touches a rail
    profile = builtin_profile("LMA")
    x = np.linspace(-0.0695, 0.065, 27001)
    assert np.max(np.abs(profile.height_at(x) - curve(x * 1e3) * 1e-3)) < 1e-6
    assert profile.corners == pytest.approx((0.030, 0.060), abs=1e-15)


def test_lma_published_dimensions():
    curve = defs.lma_curve()
    profile = builtin_profile("LMA")
    assert profile.height_at(0.0) == pytest.approx(0.0, abs=1e-12)
    assert profile.flange_back_to_taping_line == pytest.approx(0.070)
    assert profile.lateral_min == pytest.approx(-0.070)
    assert profile.lateral_max == pytest.approx(0.065)
    # flange height 28.00 mm above the taping line, at s = -54 mm
    assert profile.height.max() == pytest.approx(0.028, abs=1e-9)
    assert profile.lateral[np.argmax(profile.height)] == pytest.approx(-0.054, abs=1e-9)
    # flange thickness 32.90 mm at 10 mm above the taping line: s = -37.1 mm
    s10 = brentq(lambda s: profile.height_at(s) - 0.010, -0.050, -0.030, xtol=1e-12)
    assert s10 + 0.070 == pytest.approx(0.0329, abs=1e-8)
    # straight 70 deg flange face
    face = curve.section_at(-39.0)
    assert face.name.startswith("flange face")
    assert profile.slope_at(-0.039) == pytest.approx(-math.tan(math.radians(70.0)), rel=1e-6)
    # tread 1:40 to 30 mm, 1:15 to 60 mm, 45 deg chamfer; the corners are kept sharp
    assert profile.slope_at(0.015) == pytest.approx(-1 / 40, rel=1e-9)
    assert profile.slope_at(0.02999) == pytest.approx(-1 / 40, rel=1e-9)
    assert profile.slope_at(0.03001) == pytest.approx(-1 / 15, rel=1e-9)
    assert profile.slope_at(0.050) == pytest.approx(-1 / 15, rel=1e-9)
    assert profile.slope_at(0.0625) == pytest.approx(-1.0, rel=1e-9)
    # C1 at every other junction of the resampled profile
    for x in curve.breakpoints:
        if x in curve.info["corners_mm"]:
            continue
        below, above = profile.slope_at(x * 1e-3 - 1e-6), profile.slope_at(x * 1e-3 + 1e-6)
        assert abs(below - above) < 1e-3 * (1 + abs(below)), x


def test_lma_worn_hollow():
    new, worn = builtin_profile("LMA"), builtin_profile("LMA-worn")
    depth = defs.LMA_WORN_HOLLOW_DEPTH_MM * 1e-3
    half = defs.LMA_WORN_HOLLOW_WIDTH_MM * 1e-3 / 2
    centre = defs.LMA_WORN_HOLLOW_CENTRE_MM * 1e-3
    assert 0.5e-3 <= depth <= 1.5e-3 and 0.040 <= 2 * half <= 0.050
    assert new.height_at(centre) - worn.height_at(centre) == pytest.approx(depth, abs=1e-9)
    outside = np.abs(new.lateral - centre) > half + 1e-4
    np.testing.assert_allclose(worn.height[outside], new.height[outside], atol=1e-12)
    assert "synthetic" in worn.source and f"{defs.LMA_WORN_HOLLOW_WIDTH_MM:g} mm" in worn.source
    tuned = worn_lma_profile(depth_mm=0.5, width_mm=40.0, centre_mm=0.0, step=2e-4)
    assert new.height_at(0.0) - tuned.height_at(0.0) == pytest.approx(0.5e-3, abs=1e-9)
    assert "0.5 mm" in tuned.source and tuned.step == 2e-4


def test_every_builtin_names_its_source():
    listing = list_builtin_profiles()
    # the published built-ins keep their places (a new one is appended)
    names = [row[0] for row in listing]
    generated = [row[0] for row in list_builtin_profiles(generated_only=True)]
    assert names[:len(BUILTIN_NAMES)] == BUILTIN_NAMES and set(FILE_BUILTIN_NAMES) <= set(names)
    assert generated[:len(BUILTIN_NAMES)] == BUILTIN_NAMES
    for name, kind, source in listing:
        profile = builtin_profile(name)
        assert profile.kind == kind and profile.source == source
        assert len(source) > 40
    sources = dict((row[0], row[2]) for row in listing)
    assert "EN 13715" in sources["S1002"] and "EN 13674-1" in sources["UIC60"]
    assert "TB/T 449" in sources["LMA"] and "Legend19960404" in sources["LMA"]
    assert "TB/T 2344" in sources["CHN60"] and "ASSUMED" in sources["CHN60"]
    assert builtin_profile("UIC60").flange_back_to_taping_line is None


# ---------------------------------------------------------------------------
# Derivatives and curvature
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_slope_matches_finite_difference_of_height(name):
    profile = builtin_profile(name)
    rng = np.random.default_rng(1)
    u = rng.uniform(profile.lateral_min + 1e-3, profile.lateral_max - 1e-3, 400)
    h = 1e-6
    for corner in profile.corners:         # a published slope jump (LMA): no derivative there
        u = u[np.abs(u - corner) > 2 * h]
    fd_slope = (profile.height_at(u + h) - profile.height_at(u - h)) / (2 * h)
    np.testing.assert_allclose(profile.slope_at(u), fd_slope, rtol=1e-6, atol=1e-6)
    fd_second = (profile.slope_at(u + h) - profile.slope_at(u - h)) / (2 * h)
    smooth = np.abs(profile.slope_at(u)) < 3.0          # away from the near-vertical ends
    np.testing.assert_allclose(profile.second_derivative_at(u[smooth]), fd_second[smooth],
                               rtol=1e-4, atol=1e-2)


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_grid_height_matches_analytic_definition(name):
    profile, curve = builtin_profile(name), CURVES[name]()
    mid = 0.5 * (profile.lateral[:-1] + profile.lateral[1:])
    exact = curve(np.clip(mid * 1e3, curve.lateral_min, curve.lateral_max)) * 1e-3
    error = np.abs(profile.height_at(mid) - exact)
    # distance along the normal: < 1e-5 m even at the vertical flange back / steep flank
    assert np.max(error / np.sqrt(1 + profile.slope_at(mid) ** 2)) < 1e-5
    moderate = np.abs(profile.slope_at(mid)) < 1.0
    assert np.max(error[moderate]) < 1e-7


@pytest.mark.parametrize("name", ["UIC60", "CHN60"])
def test_rail_curvatures(name):
    profile = builtin_profile(name)
    crown = profile.curvature_at(np.array([-0.008, -0.004, 0.0, 0.004, 0.008]))
    np.testing.assert_allclose(crown, 1 / 0.300, rtol=0.01)
    shoulder = profile.curvature_at(np.array([-0.018, 0.018]))
    np.testing.assert_allclose(shoulder, 1 / 0.080, rtol=0.01)
    corner = profile.curvature_at(np.array([-0.031, -0.029, 0.029, 0.031]))
    np.testing.assert_allclose(corner, 1 / 0.013, rtol=0.02)
    # convex positive, and the grid array agrees with the method
    assert np.all(profile.curvature[np.abs(profile.lateral) < 0.030] > 0)
    np.testing.assert_allclose(profile.curvature[::50], profile.curvature_at(profile.lateral[::50]), rtol=1e-9)


def test_wheel_curvatures_convex_tip_concave_root():
    s1002 = builtin_profile("S1002")
    assert s1002.curvature_at(-0.055) == pytest.approx(1 / 0.012, rel=0.02)        # G: flange tip R12
    assert s1002.curvature_at(-0.037) == pytest.approx(-1 / 0.013, rel=0.02)       # D: flange root R13
    lma = builtin_profile("LMA")
    tip = lma.lateral[np.argmax(lma.height)]
    assert lma.curvature_at(tip) == pytest.approx(1 / 0.012, rel=0.02)
    assert lma.curvature_at(-0.046) == pytest.approx(1 / 0.015, rel=0.02)       # flank R15
    assert lma.curvature_at(-0.033) == pytest.approx(-1 / 0.014, rel=0.02)      # flange root R14
    assert lma.curvature_at(-0.020) == pytest.approx(-1 / 0.090, rel=0.02)      # throat R90
    assert lma.curvature_at(-0.005) == pytest.approx(-1 / 0.450, rel=0.02)      # tread R450
    assert abs(lma.curvature_at(0.015)) < 1e-6 and abs(lma.curvature_at(0.045)) < 1e-6


# ---------------------------------------------------------------------------
# Resampling
# ---------------------------------------------------------------------------

def test_step_option_and_cache():
    fine = builtin_profile("S1002")
    coarse = builtin_profile("S1002", step=5e-4)
    assert coarse.step == 5e-4 and fine.step == 1e-4
    assert coarse.lateral.size == 261 and fine.lateral.size == 1301
    np.testing.assert_allclose(np.diff(coarse.lateral), 5e-4, rtol=1e-9)
    tread = np.linspace(-0.030, 0.055, 300)
    np.testing.assert_allclose(coarse.height_at(tread), fine.height_at(tread), atol=2e-7)
    assert builtin_profile("s1002") is fine
    assert builtin_profile("S1002", step=5e-4) is coarse
    with pytest.raises(ValueError, match="step"):
        builtin_profile("S1002", step=0.1)          # mm given as m
    with pytest.raises(ValueError, match="unknown built-in"):
        builtin_profile("S1003")


def test_resample_profile_grid():
    x = np.linspace(-0.02, 0.0315, 60)
    y = 0.3 - np.sqrt(0.3 ** 2 - x ** 2)
    assert resample_profile(x, y, step=2e-4).method == "smoothing"    # the default
    r = resample_profile(x, y, step=2e-4, method="cubic")
    assert r.method == "cubic" and r.corners.size == 0
    assert r.lateral[0] == x[0] and r.lateral[-1] <= x[-1] and x[-1] - r.lateral[-1] < 2e-4
    np.testing.assert_allclose(np.diff(r.lateral), 2e-4, rtol=1e-9)
    np.testing.assert_allclose(r.height, 0.3 - np.sqrt(0.3 ** 2 - r.lateral ** 2), atol=1e-9)
    np.testing.assert_allclose(r.slope, r.lateral / np.sqrt(0.3 ** 2 - r.lateral ** 2), atol=1e-6)
    for method in ("smoothing", "cubic", "akima", "pchip"):
        assert resample_profile(x, y, method=method).method == method
    # the smoothing spline leaves an arc of constant curvature as it is (0.13 um
    # here, from a 0.87 mm point spacing: its 4th derivative)
    smooth = resample_profile(x, y, step=2e-4)
    np.testing.assert_allclose(smooth.height, 0.3 - np.sqrt(0.3 ** 2 - smooth.lateral ** 2), atol=2e-7)
    with pytest.raises(ValueError):
        resample_profile(x, y, method="linear")
    with pytest.raises(ProfileError):
        resample_profile(x[::-1], y)


def test_auto_breaks_the_smoothing_spline_at_a_found_corner():
    x = np.linspace(-0.020, 0.020, 41)
    y = np.where(x < 0, -0.05 * x, 0.25 * x)          # slope jump at x = 0
    assert list(find_corners(x, y)) == [20]
    r = resample_profile(x, y, step=1e-4, method="auto")
    assert r.method == "smoothing"
    # both straight pieces stay exactly straight and the corner sharp (a line
    # has no curvature to smooth); Akima rounds the corner ...
    exact = np.where(r.lateral < 0, -0.05 * r.lateral, 0.25 * r.lateral)
    np.testing.assert_allclose(r.height, exact, atol=1e-15)
    akima = resample_profile(x, y, step=1e-4, method="akima")
    assert 1e-7 < np.max(np.abs(akima.height - exact)) < 3e-5
    # ... and a cubic spline through the points rings along the whole profile
    cubic = resample_profile(x, y, step=1e-4, method="cubic")
    cubic_error = np.abs(cubic.height - exact)
    assert np.max(cubic_error[np.abs(r.lateral) > 5e-3]) > 1e-8
    # a smooth tight arc sampled coarsely is no corner
    t = np.linspace(0, 1.2, 30)
    assert find_corners(0.013 * np.sin(t), -0.013 * (1 - np.cos(t))).size == 0


def _published_lma_table(tmp_path, header):
    """The public LMA table's form (github Legend19960404/Wheel-Rail-Interaction-
    Dataset, standard_profiles/LMA.txt, not stored here: no licence stated):
    s every 0.1 mm from -70 to 65 mm and at the chain's junctions, F to 8
    significant digits, here from the chain its points lie on (within 9e-7 mm)."""
    from solver.profiles.definitions import lma_curve
    curve = lma_curve()
    s = sorted(set(np.round(np.arange(-700, 651) * 0.1, 1))
               | {-62.307692, -52.557372, -40.265268, -38.053345, -28.4709, 4.253514})
    lines = [f"{v:.8g}\t{float(curve(np.array([v]))[0]):.8g}" for v in s]
    return _write(tmp_path, header + "\n".join(lines) + "\n", "LMA_table.txt")


def test_the_published_lma_table_as_a_file_keeps_its_shape_and_curvature(tmp_path):
    """The public LMA table read as a file (a free-text header line, no
    directives): the smoothing spline stays within 1 um (normal) of the exact
    chain everywhere the wheel can touch (measured 0.53 um, at the flange
    root), and its curvature at the tread's R450 / 1:40 junction overshoots the
    true jump (-2.222 -> 0 1/m) by at most 5 % of it (measured 3.5 %), where
    Akima's interpolation (the old reading of a file with corners) overshot by
    more than half of it."""
    from solver.profiles.definitions import lma_curve
    path = _published_lma_table(tmp_path, "# units: mm. columns: lateral height (free text)\n")
    profile = load_profile(path, "wheel")
    assert profile.method == "smoothing"
    assert profile.corners == pytest.approx((0.030, 0.060), abs=1e-12)     # found, not declared
    assert profile.flange_back_to_taping_line == pytest.approx(0.070)      # EN 13715's, stated
    assert "70 mm" in profile.source
    x = np.linspace(-0.0535, 0.0595, 40001)
    exact = lma_curve()(x * 1e3) * 1e-3
    normal = np.abs(profile.height_at(x) - exact) / np.sqrt(1.0 + np.gradient(exact, x) ** 2)
    assert normal.max() < 1e-6, normal.max()
    near = np.abs(x - 0.004253514) < 2e-3
    jump = 1.0 / 0.45 * 0.9994          # the R450 arc's curvature there (1/m), convex positive = -2.22
    kappa = profile.curvature_at(x[near])
    assert kappa.min() > -jump * 1.05 and kappa.max() < 0.05 * jump, (kappa.min(), kappa.max())
    data = np.loadtxt(path)
    akima = profile_from_points(data[:, 0] * 1e-3, data[:, 1] * 1e-3, name="a", kind="wheel",
                                source="a", method="akima")
    assert akima.curvature_at(x[near]).min() < -1.5 * jump


def test_comment_lines_are_free_text_but_directives_are_checked(tmp_path):
    body = "\n".join(_good_lines()) + "\n"
    for text in ("# units: mm. columns: lateral, height\n", "# kind: the wheel of the test rig\n",
                 "# a plain comment: with a colon\n"):
        assert load_profile(_write(tmp_path, text + body), "wheel").kind == "wheel"
    with pytest.raises(ProfileError, match="millimetres"):
        load_profile(_write(tmp_path, "# units: m\n" + body), "wheel")
    with pytest.raises(ProfileError, match="smoothing_length_mm"):
        load_profile(_write(tmp_path, "# smoothing_length_mm: -1\n" + body), "wheel")
    smooth = load_profile(_write(tmp_path, "# smoothing_length_mm: 1.0\n" + body), "wheel")
    default = load_profile(_write(tmp_path, body), "wheel")
    assert smooth.method == default.method == "smoothing"


def test_profile_is_immutable_and_checks_its_input():
    profile = builtin_profile("UIC60")
    with pytest.raises(ValueError):
        profile.height[0] = 1.0
    with pytest.raises(AttributeError):
        profile.name = "x"
    assert isinstance(profile.height_at(0.001), float)
    assert profile.height_at(np.zeros((2, 3))).shape == (2, 3)
    with pytest.raises(ValueError, match="outside"):
        profile.height_at(0.05)
    assert np.isfinite(profile.height_at(0.037, extrapolate=True))
    with pytest.raises(ValueError, match="NaN"):
        profile.slope_at(np.array([0.0, np.nan]))
    assert "UIC60" in repr(profile) and "spline" not in repr(profile)
    first, second = (profile_from_points(profile.lateral, profile.height, name="UIC60", kind="rail",
                                         source=profile.source, method="cubic") for _ in range(2))
    assert first == second and first is not second
    assert first != builtin_profile("CHN60")
    with pytest.raises(ProfileError, match="kind"):
        profile_from_points(profile.lateral, profile.height, name="x", kind="wagon", source="s")
    with pytest.raises(ProfileError, match="flange_back"):
        Profile(name="x", kind="rail", source="s", lateral=profile.lateral, height=profile.height,
                step=profile.step, slope=profile.slope, second_derivative=profile.second_derivative,
                flange_back_to_taping_line=0.07)


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------

def _write(tmp_path, text, name="profile.txt"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _good_lines(n=20, decreasing=False):
    s = np.linspace(-20.0, 30.0, n)
    if decreasing:
        s = s[::-1]
    return [f"{x:.6f} {0.0 - x / 40 + 0.002 * x * x:.6f}" for x in s]


def _assert_names_file_and_line(exc_info, path, line):
    message = str(exc_info.value)
    assert path in message, message
    assert re.search(rf"\bline {line}\b", message), message
    assert exc_info.value.line == line and exc_info.value.path == path


def test_load_profile_reads_directives_commas_and_reverses_decreasing_files(tmp_path):
    body = _good_lines()
    text = ("# name: test wheel\n# kind: wheel\n# source: made up for the test\n"
            "# flange_back_to_taping_line_mm: 70\n# units: mm\n"
            + "\n".join(line.replace(" ", ", ") + "   # comment" for line in body) + "\n")
    path = _write(tmp_path, text)
    profile = load_profile(path, None, step=1e-4)
    assert profile.name == "test wheel" and profile.kind == "wheel"
    assert profile.source == "made up for the test"
    assert profile.flange_back_to_taping_line == pytest.approx(0.070)
    assert profile.lateral_min == pytest.approx(-0.020) and profile.lateral_max == pytest.approx(0.030)
    assert profile.height_at(0.010) == pytest.approx((-10 / 40 + 0.2) * 1e-3, abs=1e-9)
    reversed_path = _write(tmp_path, "\n".join(_good_lines(decreasing=True)) + "\n", "rev.txt")
    reversed_profile = load_profile(reversed_path, "wheel", name="rev")
    np.testing.assert_allclose(reversed_profile.height, profile.height, atol=1e-15)
    assert reversed_profile.name == "rev" and reversed_profile.flange_back_to_taping_line == 0.070
    assert "rev.txt" in reversed_profile.source


@pytest.mark.parametrize("case, line, pattern", [
    ("non-numeric", 4, "not a number"),
    ("nan", 5, "not finite"),
    ("inf", 5, "not finite"),
    ("three columns", 6, "2 columns"),
    ("one column", 6, "2 columns"),
    ("too few", 9, "at least 10"),
    ("duplicate", 8, "duplicate"),
    ("zig-zag", 9, "reverses"),
    ("metres", 2, "metres"),
    ("empty", 1, "no data"),
    ("comments only", 3, "no data"),
    ("bad kind", 1, "kind"),
    ("kind conflict", 1, "caller asked"),
    ("bad flange back", 2, "flange_back"),
    ("flange on the wrong side", None, "flange"),
])
def test_profile_errors_name_file_and_line(tmp_path, case, line, pattern):
    good = _good_lines()
    header = "# test profile\n"                          # line 1
    lines = [header.rstrip("\n")] + good                  # data starts on line 2
    kind = "wheel"
    if case == "non-numeric":
        lines[3] = "1.5 abc"
    elif case == "nan":
        lines[4] = "nan 1.0"
    elif case == "inf":
        lines[4] = "2.0 inf"
    elif case == "three columns":
        lines[5] = "1 2 3"
    elif case == "one column":
        lines[5] = "1.0"
    elif case == "too few":
        lines = lines[:9]
    elif case == "duplicate":
        lines[7] = lines[3]
    elif case == "zig-zag":
        lines[8] = lines[4]
        lines[8] = f"{float(lines[5].split()[0]) - 0.5:.6f} 0.1"
    elif case == "metres":
        lines = [header.rstrip("\n")] + [f"{x * 1e-3:.6f} {0.0:.6f}" for x in np.linspace(-20, 30, 20)]
    elif case == "empty":
        lines = []
    elif case == "comments only":
        lines = ["# nothing", "", "# here"]
    elif case == "bad kind":
        lines[0] = "# kind: bogie"
    elif case == "kind conflict":
        lines[0] = "# kind: rail"
    elif case == "bad flange back":
        lines.insert(1, "# flange_back_to_taping_line_mm: seventy")
    elif case == "flange on the wrong side":
        s = np.linspace(-30.0, 60.0, 91)
        lines = [header.rstrip("\n")] + [f"{x:.3f} {max(0.0, x - 40.0):.3f}" for x in s]
        line = 2 + int(np.argmax(np.maximum(0.0, s - 40.0)))
    path = _write(tmp_path, "\n".join(lines) + ("\n" if lines else ""))
    with pytest.raises(ProfileError, match=pattern) as exc_info:
        load_profile(path, kind)
    _assert_names_file_and_line(exc_info, path, line)


def test_duplicate_error_mentions_both_lines(tmp_path):
    lines = _good_lines()
    lines[9] = lines[2]
    path = _write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(ProfileError) as exc_info:
        load_profile(path, "wheel")
    _assert_names_file_and_line(exc_info, path, 10)
    assert "line 3" in str(exc_info.value)


def test_missing_file(tmp_path):
    path = str(tmp_path / "no_such_profile.txt")
    with pytest.raises(ProfileError, match="not found") as exc_info:
        load_profile(path, "rail")
    assert path in str(exc_info.value)


def test_files_in_metres_are_rejected_not_misread(tmp_path):
    # a whole real profile written in metres
    profile = builtin_profile("UIC60", step=1e-3)
    text = "\n".join(f"{u:.7f} {z:.7f}" for u, z in zip(profile.lateral, profile.height))
    path = _write(tmp_path, text + "\n")
    with pytest.raises(ProfileError, match="metres"):
        load_profile(path, "rail")


# ---------------------------------------------------------------------------
# profiles/*.txt
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", [row[0] for row in list_builtin_profiles(generated_only=True)])
def test_written_files_reproduce_the_builtins(name):
    path = os.path.join(PROFILE_DIR, f"{name}.txt")
    builtin = builtin_profile(name)
    loaded = load_profile(path, builtin.kind)
    assert loaded.name == name and loaded.kind == builtin.kind
    assert loaded.source == builtin.source
    assert loaded.flange_back_to_taping_line == builtin.flange_back_to_taping_line
    assert loaded.lateral.size == builtin.lateral.size
    np.testing.assert_allclose(loaded.lateral, builtin.lateral, atol=1e-9)
    # a file is read by the smoothing spline (solver.profiles.profile, 0.2 mm):
    # within 1 um, normal to the profile, of the built-in wherever it can touch
    # a rail (slopes up to 80 deg: the contact tables' range; measured 0.59-0.65
    # um at the flange root and the rail's gauge corner); a near-vertical flange
    # back or rail flank is nearly interpolated
    u = np.linspace(builtin.lateral_min, builtin.lateral_max, 20001)
    slope = builtin.slope_at(u)
    normal = np.abs(loaded.height_at(u) - builtin.height_at(u)) / np.sqrt(1.0 + slope ** 2)
    touching = np.abs(slope) <= math.tan(math.radians(80.0))
    assert np.max(normal[touching]) < 1e-6
    assert np.max(normal) < 1e-5


def test_profiles_readme_lists_every_file():
    """Its table is the one profiles/write_builtin_profiles.py writes from the
    registry (`make generate`): every written profile, its source."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "write_builtin_profiles", os.path.join(PROFILE_DIR, "write_builtin_profiles.py"))
    writer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(writer)
    with open(os.path.join(PROFILE_DIR, "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    assert readme == writer.readme_with_table(readme), "run `make generate`"
    for name, _, _ in list_builtin_profiles(generated_only=True):
        assert f"`{name}.txt`" in readme


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

def _cli_main(argv):
    # Only this subcommand: the test does not depend on the other command modules.
    import argparse

    from fmu_wheelset.cli.commands import profiles as command

    parser = argparse.ArgumentParser(prog="wheelset-fmu")
    command.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_lists_profiles(capsys):
    main = _cli_main
    assert main(["profiles"]) == 0
    out = capsys.readouterr().out
    for name in BUILTIN_NAMES:
        assert re.search(rf"^{re.escape(name)}\b.*\b(wheel|rail)\b", out, re.MULTILINE), name
    assert "EN 13715" in out and "alias 60E1" in out


def test_cli_checks_a_file(tmp_path, capsys):
    main = _cli_main
    assert main(["profiles", "--check", os.path.join(PROFILE_DIR, "CHN60.txt")]) == 0
    assert "CHN60 (rail)" in capsys.readouterr().out
    bad = _write(tmp_path, "1 2\n3 x\n")
    assert main(["profiles", "--check", bad, "--kind", "wheel"]) == 2      # a mistake of use: exit 2
    assert "line 2" in capsys.readouterr().err


def test_cli_checks_a_simpack_file_with_its_cant(capsys):
    main = _cli_main
    rail = os.path.join(ROOT, "solver", "profiles", "data", "manchester", "MBench_UIC60_v3.prr")
    assert main(["profiles", "--check", rail, "--cant", "40"]) == 0
    out = capsys.readouterr().out
    assert "MBench_UIC60_v3 (rail)" in out and "1:40) taken out" in out
    assert main(["profiles", "--check", os.path.join(PROFILE_DIR, "CHN60.txt"), "--cant", "40"]) == 2
    assert "apply to SIMPACK files" in capsys.readouterr().err
    assert main(["profiles"]) == 0
    listing = capsys.readouterr().out
    assert "MBench_S1002_v3  wheel" in listing and "MBench_UIC60_v3  rail" in listing


# ---------------------------------------------------------------------------
# Declared corners, SIMPACK files, the Manchester benchmark's built-ins
# ---------------------------------------------------------------------------

def test_declared_corners_keep_straight_pieces_straight(tmp_path):
    """A file with '# corners_mm:' is resampled by smoothing splines broken at
    the corners: both straight pieces stay exactly straight and the corner
    sharp, where the plain cubic spline rings and Akima rounds the corner."""
    x = np.linspace(-20.0, 20.0, 81)
    y = np.where(x < 0, -0.05 * x, 0.25 * x)
    text = "# corners_mm: 0\n" + "\n".join(f"{a:.6f} {b:.9f}" for a, b in zip(x, y)) + "\n"
    profile = load_profile(_write(tmp_path, text), "rail")
    assert profile.corners == (0.0,) and profile.method == "smoothing"
    u = np.linspace(-0.0199, 0.0199, 3001)
    np.testing.assert_allclose(profile.height_at(u), np.where(u < 0, -0.05 * u, 0.25 * u), atol=1e-15)
    assert profile.slope_at(-1e-6) == pytest.approx(-0.05) and profile.slope_at(1e-6) == pytest.approx(0.25)
    plain = load_profile(_write(tmp_path, text.split("\n", 1)[1], "plain.txt"), "rail")
    assert plain.method == "smoothing" and plain.corners == (0.0,)      # found
    np.testing.assert_allclose(plain.height_at(u), np.where(u < 0, -0.05 * u, 0.25 * u), atol=1e-15)
    with pytest.raises(ProfileError, match="not one of the inner points"):
        load_profile(_write(tmp_path, "# corners_mm: 0.05\n" + text.split("\n", 1)[1], "off.txt"), "rail")
    with pytest.raises(ProfileError, match="corners_mm"):
        load_profile(_write(tmp_path, "# corners_mm: 1; x\n" + text.split("\n", 1)[1], "bad.txt"), "rail")


def test_written_lma_file_declares_its_corners():
    loaded = load_profile(os.path.join(PROFILE_DIR, "LMA.txt"), "wheel")
    assert loaded.corners == pytest.approx((0.030, 0.060), abs=1e-12)


SIMPACK_WHEEL = """! a synthetic SIMPACK wheel profile
  header.begin
    version = 1
    type = 1          ! 1 = wheel
  header.end
  spline.begin
    comment = 'test wheel'
    shift.y = {shift_y}
    rotate = 0
    bound.y.min = 1.0
    bound.y.max = 0.0
    mirror.y = {mirror}
    mirror.z = 0
    inversion = {inversion}
    units.len.f = {unit}
    units.ang.f = 1
    point.begin
{points}
    point.end
  spline.end
"""


def _simpack_wheel(tmp_path, unit=1000.0, mirror=1, inversion=1, shift_y=0.0, name="w.prw"):
    """The S1002 built-in written as a SIMPACK wheel file: y = -s (flange at +y,
    mirror.y = 1 turns it back) in decreasing s order (inversion = 1), in the
    unit given by its factor (length unit per metre)."""
    ref = builtin_profile("S1002", step=5e-4)
    s_mm, f_mm = ref.lateral * 1e3, ref.height * 1e3
    y = -s_mm if mirror else s_mm
    y, z = (y - shift_y * 1e3 / unit, f_mm)
    if inversion:
        y, z = y[::-1], z[::-1]
    points = "\n".join(f"{a * unit / 1e3:.10e} {b * unit / 1e3:.10e}" for a, b in zip(y, z))
    return _write(tmp_path, SIMPACK_WHEEL.format(points=points, unit=unit, mirror=mirror,
                                                 inversion=inversion, shift_y=shift_y), name)


@pytest.mark.parametrize("unit, mirror, inversion, shift", [(1000.0, 1, 1, 0.0), (1.0, 1, 1, 0.0),
                                                            (1000.0, 0, 0, 0.0), (1000.0, 1, 0, 2.5)])
def test_simpack_header_conventions(tmp_path, unit, mirror, inversion, shift):
    """Units (metres or mm), mirroring, inversion and shifts of the header give the
    same wheel back."""
    path = _simpack_wheel(tmp_path, unit, mirror, inversion, shift)
    profile = load_profile(path, None)
    ref = builtin_profile("S1002")
    assert profile.kind == "wheel" and profile.flange_back_to_taping_line == pytest.approx(0.070)
    # at the file's points (every 0.5 mm) exactly; between them on the tread and the
    # flange root the two splines (0.5 mm and 0.1 mm samples) agree within 0.2 um
    points = builtin_profile("S1002", step=5e-4).lateral[:-1]
    assert np.max(np.abs(profile.height_at(points) - ref.height_at(points))) < 1e-10
    u = np.linspace(-0.035, 0.059, 500)
    assert np.max(np.abs(profile.height_at(u) - ref.height_at(u))) < 2e-7
    assert "test wheel" in profile.source


def test_simpack_rotation_and_bounds(tmp_path):
    """rotate turns the points about x (angle unit from units.ang.f), bound.y drops
    the points outside the bounds."""
    ref = builtin_profile("UIC60", step=5e-4)
    u, z = ref.lateral * 1e3, -ref.height * 1e3
    a = 0.02
    # the file holds the head turned by -a; rotate = a (in mrad: units.ang.f = 1000) turns it back
    yr, zr = u * math.cos(a) + z * math.sin(a), -u * math.sin(a) + z * math.cos(a)
    points = "\n".join(f"{p:.10f} {q:.10f}" for p, q in zip(yr, zr))
    text = (SIMPACK_WHEEL.replace("type = 1", "type = 0").replace("rotate = 0", "rotate = 20")
            .replace("units.ang.f = 1", "units.ang.f = 1000").replace("bound.y.min = 1.0", "bound.y.min = -30")
            .replace("bound.y.max = 0.0", "bound.y.max = 31"))
    path = _write(tmp_path, text.format(points=points, unit=1000.0, mirror=0, inversion=0, shift_y=0.0),
                  "r.prr")
    rail = load_profile(path, "rail")
    assert rail.lateral_min > -0.0301 and rail.lateral_max < 0.0311
    v = np.linspace(-0.029, 0.029, 300)
    assert np.max(np.abs(rail.height_at(v) - ref.height_at(v))) < 1e-7


@pytest.mark.parametrize("change, message", [
    (("units.len.f = 1000", "! no unit"), "units.len.f missing"),
    (("type = 1", "type = 0"), "header.type says rail, the extension a wheel"),
    (("type = 1", "type = 3"), "header.type must be 0"),
    (("point.end", "1.0 2.0 3.0 4.0\n    point.end"), "expected 2 or 3 columns"),
    (("mirror.y = 1", "mirror.y = 2"), "mirror.y must be 0 or 1"),
    (("spline.end", ""), "not closed"),
    (("header.begin", "profile.begin"), "unexpected section"),
    (("shift.y = 0.0", "shift.y = abc"), "shift.y"),
    (("inversion = 1", "inversion = 0"), "the flange is on the positive side"),
])
def test_simpack_bad_files_name_the_reason(tmp_path, change, message):
    path = _simpack_wheel(tmp_path)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if change[1] == "! no unit":
        text = text.replace("units.len.f = 1000.0", "")
    elif change == ("inversion = 1", "inversion = 0"):
        text = text.replace("mirror.y = 1", "mirror.y = 0")
    else:
        text = text.replace(change[0], change[1], 1)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    with pytest.raises(ProfileError, match=message):
        load_profile(path, None)


def test_manchester_benchmark_files_as_builtins():
    """The benchmark's S1002 file follows EN 13715 within 1 um on s = -60 ... 60 mm;
    its rail file, with the 1:40 cant taken out, is a symmetric UIC60 head whose
    crown is at the origin (with the cant taken out the wrong way round the head
    would lean by 2/40)."""
    from fmu_wheelset.validation.profiles import s1002_standard_mm
    wheel, rail = builtin_profile("MBench_S1002_v3"), builtin_profile("mbench_uic60_v3")
    assert wheel.kind == "wheel" and rail.kind == "rail"
    s = np.linspace(-60.0, 59.98, 1200)
    standard = np.array([s1002_standard_mm(v) for v in s]) * 1e-3
    assert np.max(np.abs(wheel.height_at(s * 1e-3) - standard)) < 1e-6
    u = np.linspace(0.0, 0.035, 351)
    assert np.max(np.abs(rail.height_at(u) - rail.height_at(-u))) < 1e-7
    assert rail.height_at(0.0) == pytest.approx(0.0, abs=1e-9) and abs(rail.slope_at(0.0)) < 1e-6
    from solver.profiles.files import load_simpack_profile
    leaning = load_simpack_profile(os.path.join(ROOT, "solver", "profiles", "data", "manchester", "MBench_UIC60_v3.prr"),
                                   cant=-math.atan(1 / 40))
    assert np.max(np.abs(leaning.height_at(u[:250]) - leaning.height_at(-u[:250]))) > 1e-4
    with open(os.path.join(ROOT, "solver", "profiles", "data", "manchester", "NOTICE.md"), encoding="utf-8") as fh:
        notice = fh.read()
    assert "Apache" in notice and "eve70a/CONTACT" in notice
    assert os.path.isfile(os.path.join(ROOT, "solver", "profiles", "data", "manchester", "LICENSE-Apache-2.0.md"))


def test_a22_rigid_delta_r_matches_contact():
    """Rigid Delta r at y = 1-4 mm with the benchmark's files (its yaw) within 0.01
    mm of CONTACT run at vanishing load on the same files; the analytic pair is
    3-4 % lower (its UIC60 differs from the benchmark's rail by 22 um rms), which
    the test must be able to tell apart."""
    from fmu_wheelset.validation import profiles as validation
    reference = {r["y_mm"]: r["delta_r_mm"] for r in validation.read_reference("a22_rigid_contact.csv")}
    files = validation.a22_rolling_radius_difference() * 1e3
    analytic = validation.a22_rolling_radius_difference(setup=validation.a22_setup("S1002", "UIC60")) * 1e3
    for y, v, va in zip(validation.A22_Y_MM, files, analytic):
        # 0.01 mm: a tenth of the 3-4 % the analytic rail's shape moves Delta r
        assert abs(v - reference[y]) < 0.01, y
        assert abs(va - reference[y]) > 0.02, y


def test_a22_elastic_reference_location_matches_contact():
    """CONTACT's contact reference location at 10 kN per wheel (its A-2.2 outputs),
    computed here for y = 1 and 3 mm on both wheels: within 0.1 mm (half of
    CONTACT's 0.2 mm elements; the rigid point is 0.3 mm away at y = 1 mm)."""
    from fmu_wheelset.validation import profiles as validation
    for y, side, s_here, s_contact, approach, approach_contact in validation.a22_elastic_rows(y_mm=(1.0, 3.0)):
        assert abs(s_here - s_contact) < 0.1, (y, side)
        # the approach of the frictionless solution within 5 % of CONTACT's (with creep)
        assert approach == pytest.approx(approach_contact, rel=0.05), (y, side)
