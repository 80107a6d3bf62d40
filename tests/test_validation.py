"""Key figures of the validation suite (fmu_wheelset.validation), so that a
regression in any layer (profiles, geometry, contact, dynamics, FMU) fails.

The Ren & Jin and Kang scenarios run in full through the core (~1.5-2.5 s
each); the FMU layer is checked on a shortened run against the core and on the
80 km/h case through FMPy, and the Klingel case through the FMU."""
from __future__ import annotations

import pytest

from fmu_wheelset.validation import common, fmu_check, geometry, kang, klingel, ren_jin


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    return tmp_path_factory.mktemp("validation")


def rows_by_quantity(result):
    return {r.quantity: r for r in result.rows}


def test_static_flange_onset_and_worn_tread_points(out):
    """Classified by contact angle, with the published LMA: the static contact
    reaches the flange (>= 60 deg) at 9.30 mm, compared with the paper's 9.4 mm
    (within 0.3 mm, CHN60's estimated gauge-corner deviation); no two distance
    minima (the two-point row is reported, not compared, with the reason). The
    synthetic LMA-worn's two inner tread points are compared with the paper's
    "about 1 mm" and FAIL (a row of the report, not asserted away): its hollow,
    centred where the wheel runs, gives two points from y = 0; the note says
    so and shows where a hollow centred elsewhere puts them."""
    res = geometry.case_geometry(out)
    rows = rows_by_quantity(res)
    two = rows["LMA/CHN60 two-point onset with a flange (>= 60 deg) point (static, two distance "
               "minima within 0.1 mm)"]
    assert not two.compared and "slides through the flange root" in two.why
    reach = rows["LMA/CHN60 static contact reaches the flange (>= 60 deg), rigid"]
    assert reach.compared and reach.passed and abs(reach.value - 9.4) <= 0.3
    worn = rows["LMA-worn/CHN60 two tread points on the inner wheel: onset |y| (static)"]
    assert worn.compared and "about 1 mm" in worn.why and "synthetic" in worn.note
    assert "hollow centred at +7.7 mm" in worn.note
    assert all(r.passed for r in res.rows if r is not worn)


def test_ren_jin_100_multipoint_rows_judged_by_the_paper(out):
    """Every row of Figs. 7-10 is compared with the criterion of the paper's
    text (docs/ren_jin_2010.md) and says why; none is 'not compared'. Known
    differences, FAIL rows of the report with their reasons in the note: on the
    rigid track the wheelset is held on the flange root (largest outer contact
    angle about 22 deg), so the flange-root + flange contact, the flange root's
    larger share and the flange point's 70 deg angle are not reached; the
    synthetic hollow gives the inner wheel two tread points from y = 0, not
    from about 1 mm. Flange points (>= 60 deg), where there are any, lie on the
    flange; Y/Q stays below 0.8."""
    res = ren_jin.case_multipoint_100(out, backend="core")
    figure_rows = [r for r in res.rows if "(Fig. " in r.quantity]
    assert {f"Fig. {k})" in " ".join(r.quantity for r in figure_rows) for k in (7, 8, 9, 10)} == {True}
    assert all(r.compared and r.why for r in res.rows)
    for r in res.rows:
        assert r.passed or r.note, f"a FAIL row without its reason: {r.quantity}"
    rows = rows_by_quantity(res)
    onset = rows["outer (right) wheel: flange-root + flange (>= 60 deg) two-point onset |y|, rigid "
                 "track (Fig. 7)"]
    assert onset.passed or "not reached" in onset.note
    assert rows["flange points (>= 60 deg) lie at s < -25 mm"].passed
    assert rows["max Y/Q outer wheel (Fig. 10)"].passed
    assert {r.quantity for r in res.info} >= {"max |y| in the curve, rigid track"}


def test_ren_jin_100_single_point_jumps(out):
    """The single contact point jumps between zones as in Ren & Jin's Fig. 11.
    Known difference (a FAIL row of the report, not asserted away): the
    single-point model carries the wheel's whole load, shared along the
    saddles, on its deepest point, so its load no longer jumps with the point
    (docs/contact_load_sharing.md); the paper's Fig. 12 oscillation came with
    flange root <-> flange jumps and their lateral impacts, which this run on
    the rigid track does not reach (tread <-> flange root only: the note)."""
    res = ren_jin.case_single_100(out, backend="core")
    rows = rows_by_quantity(res)
    assert rows["jumps of the single contact point between contact zones (outer wheel)"].value >= 2
    known = "outer normal force oscillation (max-min)/mean, t > 8 s"
    assert all(r.passed for r in res.rows if r.quantity != known)


@pytest.mark.parametrize("backend", ["core", pytest.param("fmu", marks=pytest.mark.fmu)])
def test_ren_jin_80_no_flange_two_point_and_q_within_2_percent(out, backend):
    """No flange (>= 60 deg) contact at 80 km/h. The single-point method against
    the multipoint one (0.2 s running mean; the paper: nearly identical) differed
    by 6.3 % with the earlier rebuilt LMA, where the outer wheel reached a tread +
    flange-root two-point contact (a FAIL row); with the published LMA it stays
    on the tread (largest angle 8.9 deg) and they agree within 0.73 %. The row is
    still kept out of the all-pass check below: it hinges on whether the
    flange-root contact occurs (sensitivity case 3b)."""
    res = ren_jin.case_80(out, backend=backend)
    assert res.backend == backend
    rows = rows_by_quantity(res)
    assert rows["samples with flange (>= 60 deg) two-point contact"].value == 0
    # the inner wheel's two tread points: the synthetic hollow's (see the static row)
    assert all(r.passed for r in res.rows
               if not r.quantity.startswith(("max 0.2 s running mean", "inner (left) wheel")))


def test_kang_flange_limit(out):
    """Kang's 7.6 mm is for S1004, this run is S1002: the row is
    not compared; the limit is this pair's flange clearance (within 0.5 mm)."""
    res = kang.case_kang(out, backend="core")
    rows = rows_by_quantity(res)
    limit = rows["lateral displacement limit |y|"]
    assert not limit.compared and "different wheel" in limit.why
    clearance = [r for r in res.rows if r.quantity.startswith("|y| limit vs flange clearance")][0]
    assert abs(clearance.difference) <= 0.5
    assert all(r.passed for r in res.rows)


def test_profiles_against_their_standards(out):
    """S1002 within 1 um of EN 13715 at every point, UIC60 within 5 um of the EN
    13674-1 arcs, the LMA built-in within 1 um of the published chain with its
    key dimensions, the benchmark's S1002 file within 1 um of EN 13715, A-2.2
    against CONTACT (rigid delta r 0.01 mm, elastic reference location 0.1 mm);
    the analytic pair's A-2.2 rows are reported, not compared."""
    from fmu_wheelset.validation import profiles
    res = profiles.case_profiles(out)
    data = [r for r in res.rows if r.compared]
    assert len(data) == 4 + 4 + 1 + 4 + 18 and all(r.passed for r in data), \
        [r.cells() for r in data if not r.passed]
    assert all(not r.compared for r in res.rows if "analytic S1002 / UIC60" in r.quantity)
    assert all(r.why for r in res.rows)


def test_creep_models_against_published_full_theory(out):
    """FaStrip within 1.5 % of CONTACT's FaStrip (20 x 20 and
    40 x 40 against its 40 x 40), within 1 % at 200 x 200 (Fy) and 2 % (Mz), and within 5 % of
    CONTACT's full-theory creep curve (measured 0.7 %). Against the full theory on CONTACT's
    FASTSIM case FaStrip is +6.9 %, CONTACT's own FaStrip +5.9 %: the method's limit, reported
    (not compared)."""
    from fmu_wheelset.validation import creep_models
    res = creep_models.case_creep_models(out)
    rows = rows_by_quantity(res)
    default = rows["FaStrip Fy/(mu Fn), CONTACT's FASTSIM case, 20 x 20 (default)"]
    assert default.passed and abs(default.value / default.reference - 1) < 0.015
    against_full = rows["FaStrip Fy/(mu Fn) against the full theory, CONTACT's FASTSIM case, 20 x 20"]
    assert not against_full.compared and 0.05 < against_full.value / against_full.reference - 1 < 0.08
    assert rows["FaStrip Fy/(mu Fn), CONTACT's FASTSIM case, 200 x 200"].passed
    assert rows["FaStrip Mz, CONTACT's FASTSIM case, 200 x 200"].passed
    curve = [r for r in res.rows if r.quantity.startswith("FaStrip longitudinal")][0]
    assert curve.passed and abs(curve.value) < 1.0
    assert all(r.why for r in res.rows)
    assert all(r.passed for r in res.rows)


def test_contact_mechanics_against_contact(out):
    """The non-Hertzian patch in the contact plane within 1 % (tread) and
    2 % (flange root) of CONTACT; the patch's Hertz force on LMA/CHN60 within
    3.5 %; the spin moment of SHE and Polach within 0.02 mu N sqrt(ab) at
    full sliding and 3 % in the linear range; the partial-slip moment and the forces under large
    spin reported (not compared)."""
    from fmu_wheelset.validation import contact_mechanics
    res = contact_mechanics.case_contact_mechanics(out)
    compared = [r for r in res.rows if r.compared]
    assert len([r for r in compared if r.quantity.startswith("S1002/UIC60")]) == 9
    assert len([r for r in compared if "full sliding" in r.quantity]) == 2
    # the patch's Hertz force on LMA/CHN60 within 3.5 % (the junction, the flange root)
    assert len([r for r in compared if r.quantity.startswith("LMA/CHN60 patch")]) == 2
    assert all(r.passed for r in compared), [r.cells() for r in compared if not r.passed]
    reported = [r for r in res.rows if not r.compared]
    # + the patch at y = 9.0 mm, where CONTACT's planar contact does not hold
    assert len(reported) == 5 and all(r.why for r in res.rows)


@pytest.mark.fmu        # builds the FMU (common.fmu_path)
def test_fmu_matches_core_on_a_short_run(out):
    res = fmu_check.case_fmu_check(out, duration=5.0)
    assert res.backend == "fmu"
    assert all(r.passed for r in res.rows), [r.cells() for r in res.rows]


@pytest.mark.fmu        # builds the FMU (common.fmu_path)
def test_klingel_through_the_fmu(out, monkeypatch):
    """With a relative output folder, as `make demo` gives it: the case writes its
    profile files there and must hand the FMU their absolute paths (the FMU looks a
    relative name up in its resources only; with relative paths the demo's
    Klingel rows would fall back to the core with 'the FMU run failed')."""
    monkeypatch.chdir(out.parent)
    res = klingel.case_klingel(out.name, backend="fmu")
    assert res.backend == "fmu", [r.cells() for r in res.rows]
    assert all(r.passed for r in res.rows), [r.cells() for r in res.rows]


@pytest.mark.fmu        # builds the FMU (common.fmu_path)
def test_a_failed_fmu_run_leaves_no_extraction_behind(out, tmp_path, monkeypatch):
    """An FMU run that raises (here: a profile file that does not exist, refused
    at initialization) must not leave its extraction in the temporary folder
    (FMPy's simulate_fmu removes its own only when the run returns)."""
    import fmpy
    from fmpy.fmi1 import FMICallException
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(scratch))
    fmu = common.fmu_path(out)
    with pytest.raises(FMICallException):
        common.quiet_simulate(fmpy, str(fmu), stop_time=0.01, output_interval=0.005,
                              start_values={"wheel.profile": str(tmp_path / "no-such-profile.txt")})
    assert list(scratch.iterdir()) == []


def test_report_is_self_contained(out):
    from fmu_wheelset.validation.report import write_report
    res = [geometry.case_geometry(out)]
    page = write_report(res, out / "report.html").read_text()
    assert "data:image/png;base64," in page and "<table>" in page
    assert "src=\"http" not in page and "9.4 mm" in page


@pytest.mark.fmu        # builds the FMU (common.fmu_path)
def test_report_opens_with_its_summary(out):
    """The summary comes first: the counts, every FAIL row with why, the
    version, the commit and the FMU's hash; then each section's rows with its
    figures right after them (the page as a browser lays it out:
    tests/browser/screenshot_report.py, docs/validation.md)."""
    import hashlib
    import re
    from fmu_wheelset.validation.common import CaseResult, Row
    from fmu_wheelset.validation.report import write_report
    rows = [Row("9 vehicle", "balance", "1", 1.0117, "1", 1.0, 0.01, "fmu", note="bogie 1"),
            Row("9 vehicle", "other", "1", 1.002, "1", 1.0, 0.01, "fmu"),
            Row("9 vehicle", "not this", "x", 3.0, "mm", float("nan"), float("nan"), "fmu",
                compared=False)]
    geometry_result = geometry.case_geometry(out)
    fmu = common.fmu_path(out)
    page = write_report([CaseResult("vehicle", "Vehicle", rows), geometry_result],
                        out / "summary.html", fmu=fmu).read_text()
    summary = page[page.index("class='summary'"):page.index("<h2")]
    # the vehicle's rows and the geometry case's (one FAIL: the synthetic worn
    # profile's two tread points; one not compared)
    assert "2 pass" in summary and "2 FAIL" in summary and "2 not compared" in summary
    # the FAIL row with its why: the value at four digits against +-0.01, the note
    assert "1.012 against 1 (tolerance ±0.01, difference 0.0117 (+1.2 %)): balance; bogie 1" \
        in summary
    assert "other" not in summary
    digest = hashlib.sha256(fmu.read_bytes()).hexdigest()[:16]
    assert f"sha256 {digest}" in summary
    for key in ("version", "commit", "date", "machine"):
        assert f"<b>{key}</b>" in summary
    assert re.search(r"<b>commit</b></td><td>([0-9a-f]{12}|unknown)", summary)
    # a section's figures follow its own rows, before the next section
    sections = page.split("<h2")[1:]
    assert "<figure>" not in sections[0]
    assert sections[1].index("<table>") < sections[1].index("<figure>")


@pytest.mark.parametrize("value, tolerance, text", [
    (1.0117, 0.01, "1.012"),        # three digits would read 1.01 against 1 +- 0.01
    (-0.6491, 0.0121, "-0.649"),    # three digits resolve a tenth of this tolerance
    (9.72, float("nan"), "9.72"),
    (4.9e-6, 1e-3, "4.9e-06"),
    (100.03, 0.5, "100"),
    (100.03, 0.05, "100.03")])
def test_significant_digits_follow_the_tolerance(value, tolerance, text):
    from fmu_wheelset.validation.common import Row
    assert Row("c", "q", "", value, "", 0.0, tolerance, "core").cells()[3] == text


@pytest.mark.fmu        # builds the FMU (common.fmu_path)
def test_fmu_start_values_name_every_scenario_parameter(out):
    from solver.scenarios import load_scenario
    variables = common.fmu_variables(common.fmu_path(out))
    for name in ("ren-jin-r400-100", "kang-r320"):
        start, missing = common.fmu_start_values(load_scenario(name).params, variables)
        assert not missing, missing
        assert set(start) <= set(variables)
