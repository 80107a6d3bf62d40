"""Tabulated contact geometry (solver/contact/geometry/table.py) against the online search.

The table only chooses which minima of the distance function to look at; each
is then re-located on the profile grid by the arithmetic of the online search
(solver.contact.geometry.search.wheel_distance_minima). So wherever both find the same minima
the points must be the online points to rounding (1e-12 m, 1e-12 rad: a few
ulps of the 0.5 m coordinates), not merely within an interpolation error; the
required bound (0.01 mm, 0.1 %) is a much weaker statement of the same. The
check grid is dense in lateral position (steps well below the table's 0.2 mm
are not needed: each pose is independent), covers yaw and roll off the table's
nodes, tread and flange contact, penetrating and lifted wheels, and rail motion.
"""
import math

import numpy as np
import pytest

from solver.contact.geometry.points import rail_motion_array, contact_points, static_contact
from solver.contact.geometry.search import wheelset_contact_kernel
from solver.contact.geometry.setup import ContactSetup, WheelsetPose
from solver.contact.geometry import table as gt
from tests.contact_points import acting

ROUNDING = 1e-12   # m and rad: the same arithmetic on the same numbers, a few ulps of 0.5 m


def _ren_jin_setup():
    # Ren & Jin (2010) wheel/rail pair of the R400 scenario (solver/scenarios.py)
    return ContactSetup.from_names("LMA-worn", "CHN60", inclination_ratio=40, gauge=1.435,
                                       back_to_back=1.353, nominal_radius=0.43)


@pytest.fixture(scope="module", params=["ren-jin", "s1002"])
def setup_and_table(request):
    if request.param == "ren-jin":
        setup = _ren_jin_setup()
    else:
        setup = ContactSetup.from_names("S1002", "UIC60", inclination_ratio=40)
    return setup, gt.build_contact_table(setup)


def _compare(setup, table, poses, rail_motion=None, epsilon=-1.0):
    """Worst differences (count mismatches, max |field difference|) and the share of
    wheels the table answered itself."""
    motion = rail_motion_array(rail_motion)
    online_buffers = setup.buffers()
    table_buffers = setup.buffers()
    scratch = gt.table_scratch()
    count_mismatch = 0
    worst = 0.0
    online_wheels = 0
    for y, z, roll, yaw in poses:
        pose = WheelsetPose(float(y), float(z), float(roll), float(yaw))
        wheelset_contact_kernel(setup.tables, pose, motion, epsilon, online_buffers)
        online_wheels += gt.wheelset_table_kernel(setup.tables, table.arrays, pose, motion, epsilon,
                                                  table_buffers, scratch)
        if not np.array_equal(online_buffers.counts, table_buffers.counts):
            count_mismatch += 1
            continue
        for side in range(2):
            n = online_buffers.counts[side]
            if n:
                diff = np.abs(acting(online_buffers.points[side, :n])
                              - acting(table_buffers.points[side, :n])).max()
                worst = max(worst, float(diff))
    return count_mismatch, worst, 1.0 - online_wheels / (2.0 * len(poses))


def _check_grid(setup, n_lateral=61, elastic=True):
    """Poses: y over the flangeway in fine steps (off the 0.2 mm nodes), yaw and roll
    off the table nodes, the wheelset lowered into the rails (0, 50, 200 um)."""
    poses = []
    for y in np.linspace(-0.0117, 0.0117, n_lateral):
        for yaw in (-7.3e-3, 0.0, 4.1e-3):
            rigid = static_contact(setup, float(y), yaw)
            for droll in (-6e-4, 2.7e-4):
                for dz in ((0.0, 5e-5, 2e-4) if elastic else (0.0,)):
                    poses.append((y, rigid.z - dz, rigid.roll + droll, yaw))
    return poses


def test_table_points_are_the_online_points(setup_and_table):
    setup, table = setup_and_table
    poses = _check_grid(setup)
    mismatch, worst, table_share = _compare(setup, table, poses)
    assert mismatch == 0
    assert worst < ROUNDING
    # the table must answer nearly every evaluation itself, else it is not a table;
    # 7-11 % of its cells see a minimum born or lost, but those are re-located too
    assert table_share > 0.95


def test_table_static_mode_matches(setup_and_table):
    # the static (epsilon >= 0) multipoint selection of the rigid analysis
    setup, table = setup_and_table
    poses = _check_grid(setup, n_lateral=31, elastic=False)
    mismatch, worst, _ = _compare(setup, table, poses, epsilon=1e-4)
    assert mismatch == 0
    assert worst < ROUNDING


def test_table_with_rail_motion():
    # rail lateral, vertical and roll motion are applied exactly (a rotation of
    # wheelset and rail together about x, a translation along the rail axes)
    setup = _ren_jin_setup()
    table = gt.build_contact_table(setup)
    motion = np.array([[0.8e-3, -0.3e-3, 2.0e-3], [-0.5e-3, 0.2e-3, -1.5e-3]])
    poses = []
    for y in np.linspace(-0.009, 0.009, 41):
        rigid = static_contact(setup, float(y), 2e-3, rail_motion=motion)
        for dz in (0.0, 1e-4):
            poses.append((y, rigid.z - dz, rigid.roll, 2e-3))
    mismatch, worst, table_share = _compare(setup, table, poses, rail_motion=motion)
    assert mismatch == 0
    assert worst < ROUNDING
    assert table_share > 0.95


def test_second_point_onset_and_loss_are_sharp():
    # lower the wheelset in 1 um steps at a lateral position where a second point
    # of the left wheel is about to touch: it must appear at the same height as
    # online (the gap of its own branch crosses zero), and vanish again on the
    # way back up. (With the published LMA-worn the wheel has no second minimum
    # at the flange root; the second minimum is across the worn hollow.)
    setup = _ren_jin_setup()
    table = gt.build_contact_table(setup)
    y, yaw = 0.001, 0.0    # rigid: tread point at -8.7 mm, the hollow's far side 164 um above, at +18.9 mm
    rigid = static_contact(setup, y, yaw)
    heights = rigid.z - np.concatenate([np.arange(0, 400e-6, 1e-6), np.arange(400e-6, 0, -1e-6)])
    online_counts, table_counts = [], []
    for z in heights:
        a = contact_points(setup, y, z, rigid.roll, yaw, epsilon=-1.0)
        b = gt.table_contact_points(setup, table, y, z, rigid.roll, yaw, epsilon=-1.0)
        online_counts.append(int(a.count[0]))
        table_counts.append(int(b.count[0]))
        assert np.allclose(a.gap, b.gap, atol=ROUNDING, rtol=0)
    assert online_counts == table_counts
    assert max(online_counts) >= 2 and min(online_counts) == 1   # onset and loss happen


def test_table_build_reports_size_and_time():
    setup = _ren_jin_setup()
    table = gt.build_contact_table(setup)
    assert table.build_time > 0.0
    assert "built in" in table.describe()
    assert table.arrays.nodes.shape[:3] == (201, 41, 9)


@pytest.mark.parametrize("grid", [dict(lateral_step=0.0), dict(roll_range=-1.0),
                                  dict(yaw_step=math.nan), dict(lateral_step=1e-7),
                                  dict(roll_range=0.5, roll_step=0.01)])
def test_bad_table_grid_is_refused(grid):
    with pytest.raises(gt.GeometryTableError):
        gt.TableGrid(**grid).axes()


def test_core_with_table_runs_as_online():
    # the wheelset pushed into flange contact and released (a 40 kN lateral axle-box
    # load on for 0.3 s, then off): with contact_geometry = "table" every output of
    # every step is the online one (the same points, hence the same forces)
    from solver.scenarios import load_scenario
    from solver.model.outputs import WheelsetInputs
    from solver.model.wheelset import WheelsetModel
    models = {}
    for geometry in ("online", "table"):
        params = load_scenario("ren-jin-r400-100", contact_geometry=geometry).params
        model = WheelsetModel(params)
        model.initialize()
        models[geometry] = model
    assert models["table"].contact_table is not None and models["online"].contact_table is None
    push = np.array([[0.0, 2.0e4, 0.0], [0.0, 2.0e4, 0.0]])
    max_points = 0
    for step in range(60):
        inputs = WheelsetInputs(axle_box_force=push if step < 30 else np.zeros((2, 3)))
        records = []
        for model in models.values():
            assert model.advance(0.01, inputs).status == "ok"
            records.append(model.record.copy())
        np.testing.assert_allclose(records[1], records[0], rtol=1e-12, atol=1e-12)
        max_points = max(max_points, int(models["online"].outputs().contact_count.max()))
    assert max_points >= 2      # the flange did touch


def test_fmu_parameter_selects_the_table():
    from fmu_wheelset.fmu import variables
    import solver.model as wheelset
    var = variables.BY_NAME["contact.geometry"]
    assert variables.core_value(var, 1, wheelset) == "table"
    assert variables.core_value(var, 0, wheelset) == "online"
    with pytest.raises(ValueError):
        variables.core_value(var, 2, wheelset)
