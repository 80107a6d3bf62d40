"""The stored CONTACT results for LMA on CHN60 (tests/data/contact_reference/
normal_lma_chn60.json, made by make_contact_reference.py --only lma): the file
parses, each case is what its input says and obeys the statics of a
frictionless contact, the approach grows with the load, and the 0.1 mm and
0.2 mm element results agree as the README states."""
import json
import math
from collections import defaultdict
from pathlib import Path

import pytest

DATA = json.loads((Path(__file__).parent / "data" / "contact_reference" / "normal_lma_chn60.json").read_text())
CASES = DATA["cases"]


def test_every_case_is_what_its_input_says():
    setup = DATA["setup"]
    assert setup["wheel"] == "LMA" and setup["rail"] == "CHN60"
    groups = defaultdict(set)
    for case in CASES:
        text = case["input"]
        assert f"y = {case['y'] * 1e3:g} mm, {case['wheel_load'] / 1e3:g} kN" in text
        assert f"  {case['cell'] * 1e3:.3f}   {case['cell'] * 1e3:.3f}   1.000" in text      # DX, DS
        assert "'LMA_project.wheel'" in text and "'CHN60_project.rail'" in text
        assert " 1353.000  -70.0   430.000" in text                                          # FBDIST, NOMRAD
        groups[case["group"]].add(case["y"])
        assert case["patches"], "every case is in contact"
    # stored: 5 junction positions (the rigid point from s = +9.6 to +3.9 mm), 6 at the flange root
    assert len(groups["junction"]) >= 5 and len(groups["flange_root"]) >= 4


def test_patch_forces_carry_the_prescribed_vertical_load():
    """Frictionless: each patch's force is along its normal, so sum Fn cos(delta) is the
    prescribed vertical load. CONTACT prints Fn and FZ to 4 digits and delta to 1e-4 rad
    (tan(delta) <= 3 here): 0.3 %."""
    for case in CASES:
        vertical = sum(p["normal_force"] * math.cos(p["contact_angle"]) for p in case["patches"])
        assert vertical == pytest.approx(case["wheel_load"], rel=3e-3), (case["y"], case["wheel_load"])
        assert case["total_vertical_force_on_rail"] == pytest.approx(case["wheel_load"], rel=1e-3)
        for p in case["patches"]:
            # the pressed elements fit in the patch's bounding box; a patch is longer than 1 element
            assert p["area"] <= p["lateral_extent"] * p["longitudinal_extent"] * (1 + 1e-9)
            assert p["lateral_extent"] >= 2 * case["cell"] and p["longitudinal_extent"] >= 2 * case["cell"]
            assert p["approach"] > 0.0 and p["peak_pressure"] > 0.0


def test_approach_and_patch_grow_with_the_load():
    series = defaultdict(list)
    for case in CASES:
        series[(case["y"], case["cell"])].append(case)
    for key, cases in series.items():
        cases.sort(key=lambda c: c["wheel_load"])
        approach = [max(p["approach"] for p in c["patches"]) for c in cases]
        area = [sum(p["area"] for p in c["patches"]) for c in cases]
        assert all(b > a for a, b in zip(approach, approach[1:])), key
        assert all(b > a for a, b in zip(area, area[1:])), key


def test_element_size_changes_the_results_little():
    """0.1 mm against 0.2 mm elements, same position and load, the largest patch: approach
    within 1 %, contact angle within 1 mrad, centre on the wheel within 0.2 mm, extents
    within two 0.2 mm elements (the README's statement of the discretisation error)."""
    pairs = defaultdict(dict)
    for case in CASES:
        pairs[(case["y"], case["wheel_load"])][case["cell"]] = case
    compared = 0
    for key, by_cell in pairs.items():
        if len(by_cell) < 2:
            continue
        coarse, fine = by_cell[2e-4], by_cell[1e-4]
        a = max(coarse["patches"], key=lambda p: p["normal_force"])
        b = max(fine["patches"], key=lambda p: p["normal_force"])
        assert b["approach"] == pytest.approx(a["approach"], rel=0.01), key
        assert b["contact_angle"] == pytest.approx(a["contact_angle"], abs=1e-3), key
        assert b["centre_wheel_s"] == pytest.approx(a["centre_wheel_s"], abs=2e-4), key
        assert b["lateral_extent"] == pytest.approx(a["lateral_extent"], abs=4e-4), key
        assert b["longitudinal_extent"] == pytest.approx(a["longitudinal_extent"], abs=4e-4), key
        compared += 1
    assert compared >= 10
