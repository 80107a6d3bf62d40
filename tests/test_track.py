"""Tests of solver/track/: analytic geometry, file round trips, errors,
irregularity statistics and rail motion."""
import math
import os

import numpy as np
import pytest
from scipy.special import fresnel

from solver.track.alignment import Track, load_track, track_state_kernel
from solver.track.sections import TrackError, TrackSection
from solver.track.builtins import builtin_track
from solver.track.excitation import (
    COMPONENTS, SPECTRA, RailMotion, TrackIrregularity, psd, psd_band_variance,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
R, LT, LC, H = 400.0, 100.0, 300.0, 0.120  # radius, transition, curve length, cant (m)


@pytest.fixture(scope="module")
def spiral():
    """Straight 50 m, clothoid 100 m, R = 400 m left curve 300 m, cant 120 mm."""
    return Track.from_sections([
        {"type": "straight", "length": 50.0},
        {"type": "transition", "length": LT},
        {"type": "curve", "length": LC, "radius": R, "cant": H, "direction": "left"},
    ])


# ------------------------------------------------------------------ geometry
def test_clothoid_curvature_linear_in_s(spiral):
    s = np.linspace(50.0, 150.0, 41)
    assert np.allclose(spiral.curvature(s[:-1]), (s[:-1] - 50.0) / (LT * R), rtol=0, atol=1e-15)
    assert np.allclose(spiral.curvature_rate(s[:-1]), 1.0 / (LT * R), rtol=1e-14)
    assert spiral.curvature(20.0) == 0.0 and spiral.curvature_rate(20.0) == 0.0
    assert spiral.curvature(300.0) == pytest.approx(1.0 / R, rel=1e-15)
    assert spiral.curvature_rate(300.0) == 0.0


def test_clothoid_end_offset_small_angle():
    track = Track.from_sections([{"type": "transition", "length": LT},
                                 {"type": "curve", "length": 10.0, "radius": R}])
    x, y = track.position(LT)
    # small-angle offset L^2/(6R) = 4.1667 m, next term of the series -L^4/(336 R^3)
    assert y == pytest.approx(LT ** 2 / (6 * R), rel=2e-3)
    assert y == pytest.approx(LT ** 2 / (6 * R) - LT ** 4 / (336 * R ** 3), abs=5e-6)
    assert track.heading(LT) == pytest.approx(LT / (2 * R), rel=1e-14)


def test_clothoid_position_against_fresnel(spiral):
    # psi = t^2/(2 R L): X = a C(t/a), Y = a S(t/a), a = sqrt(pi R L) (scipy fresnel -> S, C)
    t = np.linspace(0.0, LT, 201)
    x, y = spiral.position(50.0 + t)
    a = math.sqrt(math.pi * R * LT)
    fs, fc = fresnel(t / a)
    assert np.max(np.abs(x - (50.0 + a * fc))) < 1e-6
    assert np.max(np.abs(y - a * fs)) < 1e-6


def test_curve_heading_and_circle(spiral):
    # heading = L_t/(2R) + L_c/R at the end of the curve
    assert spiral.heading(50.0 + LT + LC) == pytest.approx(LT / (2 * R) + LC / R, rel=1e-13)
    pure = Track.from_sections([TrackSection("curve", 200.0, radius=R)])
    assert pure.heading(200.0) == pytest.approx(200.0 / R, rel=1e-14)
    s = np.linspace(0.0, 200.0, 57)
    x, y = pure.position(s)
    assert np.max(np.abs(np.hypot(x, y - R) - R)) < 1e-8  # centre (0, R): turns left
    assert np.allclose(x, R * np.sin(s / R), atol=1e-8)


def test_heading_and_position_derivatives(spiral):
    s = np.linspace(1.0, 520.0, 300)
    h = 1e-4
    dpsi = (spiral.heading(s + h) - spiral.heading(s - h)) / (2 * h)
    assert np.allclose(dpsi, spiral.curvature(s), atol=1e-9)
    x1, y1 = spiral.position(s + h)
    x0, y0 = spiral.position(s - h)
    psi = spiral.heading(s)
    assert np.allclose((x1 - x0) / (2 * h), np.cos(psi), atol=1e-7)
    assert np.allclose((y1 - y0) / (2 * h), np.sin(psi), atol=1e-7)


def test_left_and_right_are_mirror_images(spiral):
    right = Track.from_sections([
        {"type": "straight", "length": 50.0},
        {"type": "transition", "length": LT},
        {"type": "curve", "length": LC, "radius": R, "cant_mm": 1e3 * H, "direction": "right"},
    ])
    s = np.linspace(-20.0, 600.0, 157)
    assert np.allclose(right.curvature(s), -spiral.curvature(s), rtol=0, atol=0)
    assert np.allclose(right.cant_angle(s), -spiral.cant_angle(s), rtol=0, atol=0)
    assert np.allclose(right.heading(s), -spiral.heading(s), atol=1e-15)
    xl, yl = spiral.position(s)
    xr, yr = right.position(s)
    assert np.allclose(xr, xl, atol=1e-12) and np.allclose(yr, -yl, atol=1e-12)
    m = spiral.mirrored()
    assert np.allclose(m.cant_angle(s), right.cant_angle(s), atol=0)
    b = builtin_track("ren-jin-r400", direction="right")
    assert b.curvature(300.0) == pytest.approx(-1.0 / 400.0)
    assert b.cant_angle(300.0) > 0.0  # right curve: outer = LEFT rail raised


def test_cant_ramp_linear_and_sign(spiral):
    s = np.linspace(50.0, 150.0, 21)
    e = spiral.superelevation(s)
    assert np.allclose(e, -H * (s - 50.0) / LT, atol=1e-15)  # left curve: right rail up
    ang = spiral.cant_angle(s)
    assert np.allclose(ang, np.arcsin(-H * (s - 50.0) / LT / 1.5), atol=1e-15)
    full = spiral.cant_angle(300.0)
    assert full == pytest.approx(-math.asin(0.12 / 1.5), rel=1e-14)  # -0.0800856 rad
    assert full < 0.0
    # the ramp in angle is linear to < 1e-3 relative (asin of a linear ramp)
    lin = full * (s - 50.0) / LT
    assert np.max(np.abs(ang - lin)) < 1e-3 * abs(full)
    # cant rate = derivative of the angle
    q = np.linspace(51.0, 149.0, 30)
    num = (spiral.cant_angle(q + 1e-4) - spiral.cant_angle(q - 1e-4)) / 2e-4
    assert np.allclose(spiral.cant_rate(q), num, rtol=1e-7)
    assert spiral.cant_rate(300.0) == 0.0
    # rail distance is a parameter
    wide = Track.from_sections([{"type": "curve", "length": 10.0, "radius": R, "cant": H}],
                               rail_distance=1.435 + 0.073)
    assert wide.cant_angle(5.0) == pytest.approx(-math.asin(0.12 / 1.508))


def test_evaluate_matches_single_methods(spiral):
    s = np.linspace(-5.0, 600.0, 50)
    st = spiral.evaluate(s)
    assert np.array_equal(st.curvature, spiral.curvature(s))
    assert np.array_equal(st.curvature_rate, spiral.curvature_rate(s))
    assert np.array_equal(st.cant_angle, spiral.cant_angle(s))
    assert np.array_equal(st.cant_rate, spiral.cant_rate(s))
    assert np.array_equal(st.heading, spiral.heading(s))
    assert isinstance(spiral.evaluate(3.0).curvature, float)
    for q in (-5.0, 0.0, 50.0, 77.7, 150.0, 449.0, 450.0, 900.0):  # scalar fast path
        assert spiral.evaluate(q) == pytest.approx(tuple(spiral.evaluate(np.array(q))),
                                                   rel=1e-14, abs=1e-300)


def test_numba_track_kernel_equals_evaluate(spiral):
    # the integrator's twin of Track.evaluate: same segment search, same values,
    # inside, at the segment joints, before the start and beyond the end
    table = spiral.segment_table()
    joints = [0.0, 50.0, 150.0, 450.0]
    for s in list(np.linspace(-5.0, 600.0, 301)) + joints + [j - 1e-9 for j in joints]:
        ref = spiral.evaluate(float(s))
        got = track_state_kernel(table, spiral.rail_distance, spiral.length, float(s))
        assert got == pytest.approx((ref.curvature, ref.curvature_rate, ref.cant_angle),
                                    rel=1e-14, abs=1e-300), s


def test_beyond_the_ends(spiral):
    end = spiral.length
    assert end == 450.0
    for s in (end, end + 1.0, end + 1000.0):
        assert spiral.curvature(s) == pytest.approx(1.0 / R)
        assert spiral.cant_angle(s) == pytest.approx(-math.asin(0.08))
        assert spiral.curvature_rate(s) == 0.0 and spiral.cant_rate(s) == 0.0
    assert spiral.heading(end + 100.0) == pytest.approx(spiral.heading(end) + 100.0 / R)
    # continuation is the same circle: distance from the curve centre stays R
    xe, ye = spiral.position(end)
    psi = spiral.heading(end)
    cx, cy = xe - R * math.sin(psi), ye + R * math.cos(psi)
    x, y = spiral.position(np.array([end + 10.0, end + 500.0]))
    assert np.allclose(np.hypot(x - cx, y - cy), R, atol=1e-8)
    x, y = spiral.position(-30.0)
    assert (x, y) == pytest.approx((-30.0, 0.0), abs=1e-12)
    assert spiral.curvature(-5.0) == 0.0 and spiral.heading(-5.0) == 0.0


def test_curvature_jump_is_right_continuous():
    t = Track.from_sections([{"type": "straight", "length": 10.0},
                             {"type": "curve", "length": 10.0, "radius": 100.0}])
    assert t.curvature(10.0 - 1e-9) == 0.0
    assert t.curvature(10.0) == pytest.approx(0.01)
    assert t.heading(10.0) == pytest.approx(0.0, abs=1e-15)  # heading stays continuous


def test_stations_form_piecewise_linear():
    k = builtin_track("kang-r320")
    assert k.length == 400.0
    s = np.linspace(0.0, 400.0, 801)[:-1]
    expected = np.interp(s, [0, 100, 200, 300, 400], [0, 0, 1 / 320, 1 / 320, 1 / 320])
    assert np.allclose(k.curvature(s), expected, atol=1e-16)
    e = np.interp(s, [0, 100, 200, 300, 400], [0, 0, -0.12, -0.12, -0.12])
    assert np.allclose(k.superelevation(s), e, atol=1e-16)
    assert k.curvature_rate(150.0) == pytest.approx(1.0 / (320.0 * 100.0))
    # equals the same track written as sections
    sec = Track.from_sections([{"type": "straight", "length": 100.0},
                               {"type": "transition", "length": 100.0},
                               {"type": "curve", "length": 200.0, "radius": 320.0, "cant": 0.12}])
    q = np.linspace(0.0, 450.0, 91)
    assert np.allclose(sec.position(q), k.position(q), atol=1e-9)
    # a reverse curve in stations form passes through zero curvature linearly
    rev = Track.from_stations([0, 50, 100], [200.0, math.inf, 200.0], [0.1, 0.0, 0.1],
                              direction=["left", "left", "right"])
    assert rev.curvature(25.0) == pytest.approx(0.5 / 200.0)
    assert rev.curvature(75.0) == pytest.approx(-0.5 / 200.0)
    assert rev.superelevation(75.0) == pytest.approx(0.05)


def test_builtin_tracks():
    r = builtin_track("ren-jin-r400")
    assert r.length == 500.0
    assert r.curvature(250.0) == pytest.approx(1 / 400.0)
    assert r.superelevation(250.0) == pytest.approx(-0.120)
    st = builtin_track("straight")
    assert st.curvature(123.0) == 0.0 and st.cant_angle(5000.0) == 0.0
    with pytest.raises(TrackError, match="unknown built-in"):
        builtin_track("nope")
    with pytest.raises(TrackError, match="left.*right"):
        builtin_track("kang-r320", direction="up")


# ------------------------------------------------------------------ files
def _same_track(a, b):
    s = np.linspace(-10.0, max(a.length, b.length) + 50.0, 211)
    assert a.rail_distance == b.rail_distance
    for f in ("curvature", "cant_angle", "heading"):
        assert np.allclose(getattr(a, f)(s), getattr(b, f)(s), rtol=0, atol=1e-14), f
    assert np.allclose(a.position(s), b.position(s), atol=1e-10)


@pytest.mark.parametrize("ext", ["toml", "csv"])
def test_round_trips(tmp_path, spiral, ext):
    for track in (spiral, builtin_track("kang-r320", direction="right"),
                  Track.from_sections([{"type": "curve", "length": 30.0, "radius": 250.0,
                                        "cant_mm": 90.0},
                                       {"type": "transition", "length": 40.0,
                                        "radius": math.inf, "cant": 0.0}],
                                      rail_distance=1.505, name="exit")):
        p = tmp_path / f"t.{ext}"
        getattr(track, f"to_{ext}")(p)
        back = load_track(p)
        _same_track(track, back)
        assert back.name == track.name


def test_scenario_file_is_kang():
    path = os.path.join(ROOT, "scenarios", "kang-r320.toml")
    _same_track(load_track(path), builtin_track("kang-r320"))


def test_toml_sections_with_units(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('direction = "right"\nrail_distance_m = 1.5\n'
                 '[[section]]\ntype = "straight"\nlength_m = 20\n'
                 '[[section]]\ntype = "transition"\nlength_m = 30\n'
                 '[[section]]\ntype = "curve"\nlength_m = 50\nradius_m = 500\ncant_mm = 60\n')
    t = load_track(p)
    assert t.curvature(80.0) == pytest.approx(-1 / 500.0)  # file default direction: right
    assert t.superelevation(80.0) == pytest.approx(+0.060)


# ------------------------------------------------------------------ errors
BAD_SECTIONS = [
    ([{"type": "straight", "length": -5.0}], "length must be positive"),
    ([{"type": "straight", "length": 0.0}], "length must be positive"),
    ([{"type": "straight", "length": float("nan")}], "length must be finite"),
    ([{"type": "straight", "length": float("inf")}], "length must be finite"),
    ([{"type": "straight", "length": "abc"}], "length must be a number"),
    ([{"type": "curve", "length": 10.0, "radius": 0.0}], "radius must be positive"),
    ([{"type": "curve", "length": 10.0, "radius": -300.0}], "radius must be positive"),
    ([{"type": "curve", "length": 10.0, "radius": float("nan")}], "radius"),
    ([{"type": "curve", "length": 10.0}], "needs a radius"),
    ([{"type": "curve", "length": 10.0, "radius": math.inf}], "finite radius"),
    ([{"type": "curve", "length": 10.0, "radius": 300.0, "cant": -0.01}], "must be >= 0"),
    ([{"type": "curve", "length": 10.0, "radius": 300.0, "cant": 1.6}], "rail distance"),
    ([{"type": "curve", "length": 10.0, "radius": 300.0, "cant": float("inf")}], "finite"),
    ([{"type": "curve", "length": 10.0, "radius": 300.0, "direction": "up"}], "left.*right"),
    ([{"type": "spiral", "length": 10.0}], "unknown section type 'spiral'"),
    ([{"type": "straight", "length": 10.0, "lenght": 3}], "unknown key 'lenght'"),
    ([{"length": 10.0}], "missing 'type'"),
    ([{"type": "straight"}], "missing 'length'"),
    ([{"type": "straight", "length": 10.0, "cant": 0.1}], "no cant"),
    ([{"type": "straight", "length": 10.0, "radius": 100.0}], "no finite radius"),
    ([{"type": "curve", "length": 10, "radius": 300, "cant": 0.1, "cant_mm": 100}], "once"),
    ([{"type": "straight", "length": 10.0}, {"type": "transition", "length": 10.0}],
     "ends the track"),
    ([{"type": "transition", "length": 10.0}, {"type": "transition", "length": 10.0},
      {"type": "curve", "length": 10.0, "radius": 300.0}], "another transition"),
    ([{"type": "transition", "length": 10.0, "radius": 500.0},
      {"type": "curve", "length": 10.0, "radius": 300.0}], "does not match"),
    ([], "at least one section"),
    ([42], "expected a TrackSection"),
]


@pytest.mark.parametrize("sections, message", BAD_SECTIONS)
def test_bad_sections(sections, message):
    with pytest.raises(TrackError, match=message):
        Track.from_sections(sections)


@pytest.mark.parametrize("args, message", [
    (([0, 100, 50], [math.inf] * 3), "stations must increase"),
    (([10, 100], [math.inf] * 2), "first station must be at s = 0"),
    (([0, 100], [math.inf]), "2 stations but 1 radii"),
    (([0, 100], [math.inf, 0.0]), "radius must be positive"),
    (([0, 100], [math.inf, 300.0], [0.0]), "cant values"),
    (([0, 100], [math.inf, 300.0], [0.0, -0.1]), "cant must be >= 0"),
    (([0, float("nan")], [math.inf, 300.0]), "finite"),
    (([0], [300.0]), "at least two stations"),
])
def test_bad_stations(args, message):
    with pytest.raises(TrackError, match=message):
        Track.from_stations(*args)


@pytest.mark.parametrize("text, message", [
    ("[[section]\ntype = 'straight'", "not valid TOML"),
    ("name = 'x'\n", "either"),
    ("[[section]]\ntype = 'straight'\nlength_m = 1\n[stations]\ns_m = [0, 1]\n"
     "radius_m = [inf, inf]\n", "either"),
    ("[[section]]\ntype = 'straight'\nlength = 10\n", "unknown key.*length_m"),
    ("colour = 'red'\n[[section]]\ntype = 'straight'\nlength_m = 10\n", "unknown top-level"),
    ("[stations]\ns_m = [0, 100]\n", "missing 'radius_m'"),
    ("[[section]]\ntype = 'curve'\nlength_m = 10\nradius_m = 0\n", "section 0.*radius"),
    ("[[section]]\ntype = 'straight'\nlength_m = -3\n", "length must be positive"),
])
def test_bad_toml(tmp_path, text, message):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(TrackError, match=message):
        load_track(p)


@pytest.mark.parametrize("text, message", [
    ("length_m,radius_m\n10,inf\n", "must contain 'type'"),
    ("type,length_m,colour\nstraight,10,red\n", "unknown column"),
    ("type,length_m\nstraight,ten\n", "line 2: length_m must be a number"),
    ("type,length_m\nstraight,10,3\n", "line 2: 3 values for 2 columns"),
    ("type,length_m\n", "no data rows"),
    ("", "empty file"),
    ("s_m,radius_m,cant_mm\n0,inf,0\n100,nan,0\n", "line 3: radius_m"),
    ("s_m,cant_mm\n0,0\n", "missing column 'radius_m'"),
    ("type,length_m,radius_m\ncurve,10,0\n", "radius must be positive"),
])
def test_bad_csv(tmp_path, text, message):
    p = tmp_path / "bad.csv"
    p.write_text(text)
    with pytest.raises(TrackError, match=message):
        load_track(p)


def test_other_file_errors(tmp_path):
    with pytest.raises(TrackError, match="no such"):
        load_track(tmp_path / "missing.toml")
    with pytest.raises(TrackError, match="unknown track file type"):
        load_track(tmp_path / "t.json")
    with pytest.raises(TrackError, match="finite"):
        builtin_track("straight").curvature([1.0, float("nan")])


# ------------------------------------------------------------------ irregularity
def test_psd_values_cross_checked():
    # ORE B176 high alignment / level against the GENSYS TRC_IPSD table
    # (m^2/(1/m) = 2 pi * m^2/(rad/m)) at 10 m and 50 m wavelength.
    om10, om50 = 2 * math.pi / 10.0, 2 * math.pi / 50.0
    assert 2 * math.pi * psd("german-high", "alignment", om10) == pytest.approx(6.1608e-6, rel=1e-3)
    assert 2 * math.pi * psd("german-high", "alignment", om50) == pytest.approx(2.3194e-4, rel=1e-3)
    assert 2 * math.pi * psd("german-high", "level", om10) == pytest.approx(1.0863e-5, rel=1e-3)
    # FRA class 6 level, formula by hand: k A_v Oc^2 / (O^2 (O^2 + Oc^2)), cm^2 -> m^2
    o = 0.5
    assert psd("fra-6", "level", o) == pytest.approx(
        1e-4 * 0.25 * 0.0339 * 0.8245 ** 2 / (o ** 2 * (o ** 2 + 0.8245 ** 2)), rel=1e-14)
    with pytest.raises(TrackError, match="unknown spectrum"):
        psd("fra-7", "level", 1.0)
    with pytest.raises(TrackError, match="unknown irregularity component"):
        psd("fra-6", "twist", 1.0)


@pytest.mark.parametrize("spectrum", SPECTRA)
def test_realisation_variance_over_one_period(spectrum):
    # Over one period the harmonics are orthogonal: the sample variance is
    # sum(a_k^2)/2, which is the PSD integral over the band by construction
    # (bin integrals). Compared with an independent scipy.quad integral.
    irr = TrackIrregularity.from_psd(spectrum, 7, length=3000.0)
    s = np.arange(0.0, 3000.0, 0.1)
    for comp in COMPONENTS:
        x = irr.value(comp, s)
        ref = psd_band_variance(spectrum, comp, (1.0, 120.0))
        assert abs(x.mean()) < 1e-12 + 1e-6 * math.sqrt(ref)
        assert x.var() == pytest.approx(ref, rel=1e-6), comp


def test_realisation_variance_statistical():
    # Over a 5 km window of a 20 km realisation the cross terms between
    # harmonics do not cancel: measured spread of the window variance over
    # seeds is ~10 % (std) for German-low level. The mean of 40 seeds has a
    # std of ~10 %/sqrt(40) = 1.6 %, so 5 % is a > 3 sigma bound.
    ref = psd_band_variance("german-low", "level")
    ratios = []
    for seed in range(40):
        irr = TrackIrregularity.from_psd("german-low", seed, length=20000.0, step=0.25,
                                         components=["level"])
        ratios.append(irr.level(np.arange(0.0, 5000.0, 0.25)).var() / ref)
    assert np.mean(ratios) == pytest.approx(1.0, abs=0.05)
    assert 0.02 < np.std(ratios) < 0.25  # windows differ: the phases are random


def test_realisation_spectrum_shape():
    # The power of the realisation in a sub-band (FFT over one period) equals the
    # PSD integral over that sub-band; edges misaligned by up to half a bin.
    L, ds = 4000.0, 0.1
    irr = TrackIrregularity.from_psd("fra-4", 3, length=L, step=ds)
    x = irr.alignment(np.arange(0.0, L, ds))
    X = np.fft.rfft(x)
    om = 2 * math.pi * np.arange(X.size) / L
    power = 4 * np.abs(X) ** 2 / x.size ** 2  # X_k = N a_k e^(i phi)/2 -> a_k^2
    for lo, hi in ((5.0, 20.0), (20.0, 60.0), (1.0, 3.0)):
        band = (om > 2 * math.pi / hi) & (om < 2 * math.pi / lo)
        assert 0.5 * power[band].sum() == pytest.approx(
            psd_band_variance("fra-4", "alignment", (lo, hi)), rel=0.01)
    outside = om < 2 * math.pi / 120.0 - math.pi / L
    assert 0.5 * power[outside].sum() < 1e-20  # nothing longer than 120 m


def test_realisation_seed_and_interpolation():
    a = TrackIrregularity.from_psd("german-high", 11, length=2000.0)
    b = TrackIrregularity.from_psd("german-high", 11, length=2000.0)
    c = TrackIrregularity.from_psd("german-high", 12, length=2000.0)
    only = TrackIrregularity.from_psd("german-high", 11, length=2000.0, components=["level"])
    q = np.random.default_rng(1).uniform(0.0, 2000.0, 400)
    for comp in COMPONENTS:
        assert np.array_equal(a.value(comp, q), b.value(comp, q))
        assert not np.allclose(a.value(comp, q), c.value(comp, q))
    assert np.array_equal(only.level(q), a.level(q))  # choosing components keeps phases
    assert np.all(only.alignment(q) == 0.0)
    # periodic with period = length
    assert np.allclose(a.level(q + 2000.0), a.level(q), atol=1e-12)
    assert np.allclose(a.level(q - 4000.0), a.level(q), atol=1e-12)
    # between grid points the spline is the sum of harmonics (to 1e-7 of ~1e-2 m)
    om, amp, ph = a.harmonics["cross_level"]
    direct = (amp * np.cos(om * q[:, None] + ph)).sum(axis=1)
    rate = (-amp * om * np.sin(om * q[:, None] + ph)).sum(axis=1)
    assert np.max(np.abs(a.cross_level(q) - direct)) < 1e-7
    assert np.max(np.abs(a.cross_level_rate(q) - rate)) < 1e-3 * np.max(np.abs(rate))
    # the scalar path gives the same numbers
    vals, rates = a.state(float(q[3]))
    assert np.allclose(vals, [a.value(c, q[3]) for c in COMPONENTS], rtol=1e-12, atol=1e-18)
    assert np.allclose(rates, [a.rate(c, q[3]) for c in COMPONENTS], rtol=1e-12, atol=1e-18)


def test_realisation_errors():
    with pytest.raises(TrackError, match="seed"):
        TrackIrregularity.from_psd("fra-5", -1)
    with pytest.raises(TrackError, match="seed"):
        TrackIrregularity.from_psd("fra-5", 1.5)
    with pytest.raises(TrackError, match="unknown spectrum"):
        TrackIrregularity.from_psd("german-medium", 1)
    with pytest.raises(TrackError, match="0 < min < max"):
        TrackIrregularity.from_psd("fra-5", 1, wavelength_band=(50.0, 10.0))
    with pytest.raises(TrackError, match="twice the longest"):
        TrackIrregularity.from_psd("fra-5", 1, length=100.0)
    with pytest.raises(TrackError, match="step"):
        TrackIrregularity.from_psd("fra-5", 1, step=0.5)
    with pytest.raises(TrackError, match="component"):
        TrackIrregularity.from_psd("fra-5", 1, components=["twist"])


def test_band_option():
    irr = TrackIrregularity.from_psd("german-low", 2, length=1000.0, wavelength_band=(3.0, 25.0),
                                     step=0.25)
    x = irr.alignment(np.arange(0.0, 1000.0, 0.25))  # one whole period
    assert x.var() == pytest.approx(psd_band_variance("german-low", "alignment", (3.0, 25.0)),
                                    rel=1e-6)


def _write(path, text):
    path.write_text(text)
    return path


def test_csv_irregularity_interpolation(tmp_path):
    s = np.linspace(0.0, 30.0, 16)
    poly = 1e-3 * (0.5 + 0.2 * s - 0.03 * s ** 2 + 0.001 * s ** 3)
    lines = ["# measured", "s_m,alignment_m,level_m,gauge_m,crosslevel_m"]
    lines += [f"{float(a)!r},{float(b)!r},{0.002 * float(a)!r},0.004,-0.002"
              for a, b in zip(s, poly)]
    p = _write(tmp_path / "irr.csv", "\n".join(lines) + "\n")
    cub = TrackIrregularity.from_csv(p)
    lin = TrackIrregularity.from_csv(p, interpolation="linear")
    q = np.linspace(0.0, 30.0, 97)
    exact = 1e-3 * (0.5 + 0.2 * q - 0.03 * q ** 2 + 0.001 * q ** 3)
    # not-a-knot cubic spline reproduces a cubic exactly
    assert np.allclose(cub.alignment(q), exact, atol=1e-15)
    assert np.allclose(cub.alignment_rate(q), 1e-3 * (0.2 - 0.06 * q + 0.003 * q ** 2), atol=1e-14)
    # linear: exact at the nodes, chord midpoints between them
    assert np.allclose(lin.alignment(s), poly, atol=1e-18)
    mid = 0.5 * (s[1:] + s[:-1])
    assert np.allclose(lin.alignment(mid), 0.5 * (poly[1:] + poly[:-1]), atol=1e-18)
    assert np.allclose(lin.alignment_rate(mid), np.diff(poly) / np.diff(s), atol=1e-15)
    assert np.allclose(lin.level(q), 0.002 * q, atol=1e-16)
    # end values are held outside the data, with zero rate
    assert cub.alignment(-5.0) == pytest.approx(poly[0]) and cub.alignment_rate(-5.0) == 0.0
    assert cub.alignment(99.0) == pytest.approx(poly[-1]) and cub.alignment_rate(99.0) == 0.0
    # per-rail convention: left = alignment + gauge/2, vertical left = level + cross_level/2
    lat = cub.rail_lateral(10.0)
    ver = cub.rail_vertical(10.0)
    a10 = cub.alignment(10.0)
    assert lat == pytest.approx([a10 + 0.002, a10 - 0.002], abs=1e-15)
    assert ver == pytest.approx([0.02 - 0.001, 0.02 + 0.001], abs=1e-15)
    assert cub.rail_lateral(q).shape == (q.size, 2)
    # round trip through to_csv
    cub.to_csv(tmp_path / "back.csv", q)
    back = TrackIrregularity.from_csv(tmp_path / "back.csv")
    assert np.allclose(back.alignment(q), cub.alignment(q), atol=1e-15)


def test_csv_missing_columns_are_zero(tmp_path):
    p = _write(tmp_path / "lvl.csv", "s_m,level_m\n0,0.001\n10,0.002\n20,0.0\n")
    irr = TrackIrregularity.from_csv(p)
    assert irr.alignment(5.0) == 0.0 and irr.gauge_rate(5.0) == 0.0
    assert irr.level(10.0) == pytest.approx(0.002)


@pytest.mark.parametrize("text, message", [
    ("alignment_m\n0.1\n0.2\n", "missing column 's_m'"),
    ("s_m,alignment\n0,1\n1,2\n", "unknown column"),
    ("s_m\n0\n1\n", "no irregularity column"),
    ("s_m,level_m\n0,0\n0,1\n", "increase strictly"),
    ("s_m,level_m\n0,0\n1,nan\n", "line 3: level_m must be finite"),
    ("s_m,level_m\n0,0\n1,x\n", "line 3: level_m must be a number"),
    ("s_m,level_m\n0,0\n", "at least two rows"),
])
def test_csv_irregularity_errors(tmp_path, text, message):
    p = _write(tmp_path / "bad.csv", text)
    with pytest.raises(TrackError, match=message):
        TrackIrregularity.from_csv(p)


def test_zero_irregularity_and_rate_by_finite_difference():
    z = TrackIrregularity.zero()
    assert np.all(z.rail_vertical(np.arange(5.0)) == 0.0)
    irr = TrackIrregularity.from_psd("fra-6", 5, length=1000.0)
    q = np.linspace(1.0, 999.0, 50)
    for comp in COMPONENTS:
        num = (irr.value(comp, q + 1e-4) - irr.value(comp, q - 1e-4)) / 2e-4
        assert np.allclose(irr.rate(comp, q), num, atol=1e-8)


# ------------------------------------------------------------------ rail motion
def test_rail_motion_defaults_and_validation():
    m = RailMotion()
    assert m.as_array().shape == (6, 2) and np.all(m.as_array() == 0.0)
    with pytest.raises(TrackError, match="lateral must have shape"):
        RailMotion(lateral=[0.0, 0.0, 0.0])
    with pytest.raises(TrackError, match="roll_velocity must be finite"):
        RailMotion(roll_velocity=[0.0, float("nan")])
    with pytest.raises(TrackError, match="vertical must be numbers"):
        RailMotion(vertical=["a", "b"])
    assert np.array_equal(RailMotion.from_array(np.arange(12.0).reshape(6, 2)).roll, [4.0, 5.0])


def test_rail_motion_combined_with_irregularity(tmp_path):
    p = _write(tmp_path / "irr.csv",
               "s_m,alignment_m,level_m,gauge_m,crosslevel_m\n"
               "0,0,0,0,0\n10,0.001,0.002,0.004,0.003\n")
    irr = TrackIrregularity.from_csv(p, interpolation="linear")
    base = RailMotion(lateral=[1e-4, -1e-4], vertical_velocity=[0.01, 0.02])
    V = 20.0
    out = base.combined_with_irregularity(irr, 5.0, V)
    assert out.lateral == pytest.approx([1e-4 + 0.0005 + 0.001, -1e-4 + 0.0005 - 0.001])
    assert out.vertical == pytest.approx([0.001 + 0.00075, 0.001 - 0.00075])
    assert out.lateral_velocity == pytest.approx([V * (1e-4 + 2e-4), V * (1e-4 - 2e-4)])
    assert out.vertical_velocity == pytest.approx([0.01 + V * (2e-4 + 1.5e-4),
                                                   0.02 + V * (2e-4 - 1.5e-4)])
    assert out.roll == pytest.approx([math.asin(0.0015 / 1.5)] * 2)
    assert out.roll_velocity == pytest.approx([V * 3e-4 / 1.5] * 2, rel=1e-5)
    assert np.all(base.lateral == [1e-4, -1e-4])  # not mutated
    flat = base.combined_with_irregularity(irr, 5.0, V, cross_level_rolls_rails=False)
    assert np.all(flat.roll == 0.0)
    with pytest.raises(TrackError, match="speed must be finite"):
        base.combined_with_irregularity(irr, 5.0, float("inf"))
    with pytest.raises(TrackError, match="s must be finite"):
        base.combined_with_irregularity(irr, float("nan"), V)
