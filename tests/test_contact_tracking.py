"""The online search of the dynamics scans the profiles only when it must
(geometry.wheelset_contact_tracked): the minima of the last full scan
are re-located at each new pose while the pose stays within TRACK_MOVE_* of that
scan. Its points must be those of the full scan (geometry.wheelset_contact_kernel)
at every pose of a trajectory -- same count, positions within 1e-9 m (the
required figure) -- including flange contact onset and loss, and most searches
must be answered without a scan (else the test would hold trivially).
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

from solver.contact.geometry.search import wheelset_contact_kernel
from solver.contact.geometry.tracked import wheelset_contact_tracked
from solver.layout import (
    P_GAP, P_S_WHEEL, P_U_RAIL, P_X, P_Y, P_Z, TR_SCANS, TR_TRACKED, W_TRACK_HEAD,
)
from solver.contact.geometry.setup import ContactSetup, WheelsetPose
from solver.contact.geometry.points import static_contact
from solver.scenarios import load_scenario, simulate
from tests.contact_points import acting
from solver.layout import S_ROLL, S_Y, S_YAW, S_Z
from solver.model.outputs import WheelsetInputs
from solver.model.wheelset import WheelsetModel
from solver.model.parameters import WheelsetParameters

# The warm-started search equals the full scan within 1e-9 m. The
# tracked minima use the full scan's samples and arithmetic, so the points are
# expected bit for bit; 1e-9 m is the bound asked of it, not a measured spread.
POSITION_TOLERANCE = 1e-9
POSITION_FIELDS = (P_S_WHEEL, P_U_RAIL, P_X, P_Y, P_Z, P_GAP)


def _compare_along(setup, poses, rail_motions):
    """Run the tracked search and the full scan along the poses (in order); return
    (largest position difference, the full scan's counts per pose, the share of
    searches answered without a scan). Asserts equal counts at every pose."""
    tracked = setup.buffers()
    full = setup.buffers()
    counts = np.zeros((len(poses), 2), dtype=int)
    worst = 0.0
    for i, (pose, motion) in enumerate(zip(poses, rail_motions)):
        wheelset_contact_tracked(setup.tables, pose, motion, -1.0, tracked)
        wheelset_contact_kernel(setup.tables, pose, motion, -1.0, full)
        assert list(tracked.counts) == list(full.counts), f"pose {i} {pose}: point counts differ"
        counts[i] = full.counts
        for side in range(2):
            n = full.counts[side]
            diff = np.abs(tracked.points[side, :n, list(POSITION_FIELDS)]
                          - full.points[side, :n, list(POSITION_FIELDS)])
            worst = max(worst, float(diff.max(initial=0.0)))
            # the curvatures and slopes with them (same interpolation of the same point)
            np.testing.assert_allclose(acting(tracked.points[side, :n]),
                                       acting(full.points[side, :n]), rtol=1e-9, atol=1e-12)
    head = tracked.work[W_TRACK_HEAD:W_TRACK_HEAD + 2]
    n_tracked = int(head[:, TR_TRACKED].sum())
    assert n_tracked + int(head[:, TR_SCANS].sum()) == 2 * len(poses)
    return worst, counts, n_tracked / (2 * len(poses))


def _count_changes(counts, side):
    """(onsets, losses) of contact points on one wheel along the trajectory."""
    steps = np.diff(counts[:, side])
    return int((steps > 0).sum()), int((steps < 0).sum())


def _compare_and_report(setup, poses, rail_motions):
    """_compare_along, its figures printed, the largest difference held to the
    required bound; returns (counts, share)."""
    worst, counts, share = _compare_along(setup, poses, rail_motions)
    print(f"largest difference {worst:.1e} m, tracked share {share:.4f}, onsets/losses "
          f"{_count_changes(counts, 0)} {_count_changes(counts, 1)}")
    assert worst <= POSITION_TOLERANCE
    return counts, share


def _assert_onset_and_loss_on_both_wheels(counts):
    for side in range(2):
        onsets, losses = _count_changes(counts, side)
        assert onsets >= 1 and losses >= 1, f"side {side}: the run must bring a point in and out"


def _substep_poses(model, dt, duration, inputs=None):
    """The poses at the start of each substep of an RK4 run advanced by its own
    internal step dt (the poses of the first-stage searches)."""
    poses = []
    for _ in range(int(round(duration / dt))):
        st = model.state
        poses.append(WheelsetPose(float(st[S_Y]), float(st[S_Z]), float(st[S_ROLL]), float(st[S_YAW])))
        assert model.advance(dt, inputs).status == "ok"
    return poses


@functools.lru_cache(maxsize=1)
def _ren_jin_poses():
    """The Ren & Jin R400 100 km/h run (tangent, transition, curve: both wheels
    start on the two tread points of the worn hollow and lose one as the curve
    pushes the wheelset over; in the curve the outer wheel's point moves to the
    flange root), recorded every 10 ms, interpolated to the 1 ms of the
    integrator's substeps."""
    scenario = load_scenario("ren-jin-r400-100")
    columns = simulate(scenario).columns
    t = np.asarray(columns["time"])
    fine = np.arange(t[0], t[-1], 1e-3)
    values = [np.interp(fine, t, np.asarray(columns[f"wheelset.{name}"]))
              for name in ("y", "z", "roll", "yaw")]
    return WheelsetModel(scenario.params).setup, [WheelsetPose(*map(float, v)) for v in zip(*values)]


def test_tracked_search_equals_the_full_scan_on_the_ren_jin_run():
    setup, poses = _ren_jin_poses()
    motions = [np.zeros((2, 3))] * len(poses)
    counts, share = _compare_and_report(setup, poses, motions)
    # a point is lost on both wheels during the run (the worn hollow's second
    # tread point; with the earlier rebuilt LMA the outer flange root's point was
    # born instead: the published LMA-worn has no second minimum there, see
    # test_lma_worn_two_tread_points_across_the_hollow)
    assert all(_count_changes(counts, side)[1] >= 1 for side in range(2))
    # the share of searches the tracked minima answered (the rest fell back to a
    # scan): the bound says that the equality above is mostly the tracked path's,
    # not the scan's. Measured 98.9 % with the earlier rebuilt LMA; 75.0 % with the
    # published LMA, whose worn outer wheel in the curve alternates between two
    # distance minima 5.2 mm apart (closer than the 8 mm separation: one is kept
    # at a time, and every switch is a rescan; the validation rows report it)
    assert share > 0.7


def test_tracked_search_equals_the_full_scan_through_flange_onset_and_loss():
    """A lateral sweep of the wheelset across the track (+-10 mm, both flanges in
    and out of contact, 20 um per search as at 1 ms and 20 mm/s), with yaw and a
    moving rail (lateral, vertical, roll: a track FE coupling), the wheelset
    pressed 0.1 mm into the rails (the Hertz approach at 80 kN; at 0.05 mm the
    published LMA-worn's right wheel keeps one point all the way)."""
    setup = ContactSetup.from_names("LMA-worn", "CHN60")
    ys = np.concatenate([np.linspace(0.0, 10e-3, 501), np.linspace(10e-3, -10e-3, 1001),
                         np.linspace(-10e-3, 0.0, 501)])
    statics = {}
    poses, motions = [], []
    for i, y in enumerate(ys):
        key = round(y * 2e3) / 2e3          # static contact every 0.5 mm, interpolated between
        for k in (key, key + 5e-4):
            if k not in statics:
                statics[k] = static_contact(setup, k, yaw=1e-3)
        a, b = statics[key], statics[key + 5e-4]
        w = (y - key) / 5e-4
        z = a.z + w * (b.z - a.z) - 1e-4
        roll = a.roll + w * (b.roll - a.roll)
        poses.append(WheelsetPose(float(y), float(z), float(roll), 1e-3 + 5e-4 * np.sin(i / 150)))
        phase = i / 80.0
        motions.append(np.array([[2e-4 * np.sin(phase), -1e-4 * (1 + np.sin(phase)), 1e-3 * np.sin(phase)],
                                 [2e-4 * np.sin(phase), -1e-4 * (1 + np.cos(phase)), -1e-3 * np.cos(phase)]]))
    counts, share = _compare_and_report(setup, poses, motions)
    _assert_onset_and_loss_on_both_wheels(counts)
    # measured 26.4 % (19.8 % with the rebuilt LMA at 0.05 mm): the sweep spends most of its time
    # with a flange near its rail, where a shoulder of the distance function
    # (a minimum about to be born) makes the search scan; the bound of 10 %
    # says that hundreds of searches on the way were answered by the tracked minima
    assert share > 0.1


def test_tracked_search_equals_the_full_scan_under_hard_flange_impacts():
    """The wheelset pushed into its left flange by 100 kN of axle-box force
    (tests/test_adaptive_integrator.py): impacts, then hard contact on a flange
    whose distance function is a plateau a few millimetres wide with minima a
    few nanometres apart in depth, where the deepest jumps from one to another
    between steps (the search must scan there: see wheel_contact_tracked). The
    poses are those of the first 0.25 s of the RK4 run at 25 us (its converged
    reference: the impacts and the settling on the plateau)."""
    dt = 2.5e-5
    params = WheelsetParameters(internal_step=dt, integrator="rk4", bogie=True,
                                frame_on_centreline=True, suspended_mass=2 * 100e3 / 9.81)
    model = WheelsetModel(params)
    inputs = WheelsetInputs()
    model.initialize(inputs)
    inputs.axle_box_force[:, 1] = 50e3
    poses = _substep_poses(model, dt, 0.25, inputs)
    _, share = _compare_and_report(model.setup, poses, [np.zeros((2, 3))] * len(poses))
    # measured 48.9 %: the right wheel's tread is tracked, the left flange plateau
    # scanned (without the convexity test of wheel_contact_tracked this run differs
    # from the full scan: measured, the test fails)
    assert share > 0.1


def test_tracked_search_equals_the_full_scan_while_hunting():
    """A free wheelset hunting flange to flange (LMA-worn/CHN60, 20 m/s, 3 mm
    initial offset, SHE creep, RK4 at 0.25 ms: the case of the FMI host tests,
    where an earlier warm start missed a gauge-face minimum born between two
    substeps): the poses of every substep over 1.15 s, flange onset and loss on
    both wheels (at 1.2 s this unrestrained wheelset climbs its left flange)."""
    dt = 2.5e-4
    params = WheelsetParameters(wheel_profile="LMA-worn", rail_profile="CHN60", speed=20.0,
                                creep_model="she", internal_step=dt, integrator="rk4",
                                initial_lateral=0.003)
    model = WheelsetModel(params)
    model.initialize()
    poses = _substep_poses(model, dt, 1.15)
    counts, share = _compare_and_report(model.setup, poses, [np.zeros((2, 3))] * len(poses))
    _assert_onset_and_loss_on_both_wheels(counts)
    # measured 65.1 %: near the flanges the search scans (shoulders, flat basins)
    assert share > 0.1


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_tracked_search_scans_a_pose_that_is_not_finite(bad):
    """A non-finite pose is never "near the last scan": the full scan answers it
    (as before tracking); the tracked minima are not used nor corrupted."""
    setup = ContactSetup.from_names("LMA-worn", "CHN60")
    sc = static_contact(setup, 0.0)
    tracked = setup.buffers()
    full = setup.buffers()
    motion = np.zeros((2, 3))
    good = WheelsetPose(0.0, sc.z - 5e-5, sc.roll, 0.0)
    wheelset_contact_tracked(setup.tables, good, motion, -1.0, tracked)
    scans = tracked.work[W_TRACK_HEAD, TR_SCANS]
    bad_pose = WheelsetPose(bad, sc.z, sc.roll, 0.0)
    wheelset_contact_tracked(setup.tables, bad_pose, motion, -1.0, tracked)
    wheelset_contact_kernel(setup.tables, bad_pose, motion, -1.0, full)
    assert tracked.work[W_TRACK_HEAD, TR_SCANS] == scans + 1
    assert list(tracked.counts) == list(full.counts)
    wheelset_contact_tracked(setup.tables, good, motion, -1.0, tracked)
    wheelset_contact_kernel(setup.tables, good, motion, -1.0, full)
    np.testing.assert_array_equal(tracked.points[:, :1], full.points[:, :1])


def test_a_minimum_that_starts_to_penetrate_is_not_answered_from_the_tracked_minima():
    """Two poses of the hard-flange run above (S1002/UIC60, left flange pushed by
    100 kN; substeps 5536 and 5545 of the RK4 run at 25 us on the machine they were
    found on, taken as literals so that the case does not depend on the trajectory's last
    bits). At the first the flange's only minimum is 0.15 um above its rail; at
    the second it penetrates, and on the flange's plateau a second minimum born
    1 mm away is 22 nm deeper. The tracked search must scan there (the basin of
    a minimum that was not penetrating was never checked for convexity): before
    it answered from the tracked minimum, 1.03 mm from the full scan's point."""
    setup = WheelsetModel(WheelsetParameters(internal_step=2.5e-5, integrator="rk4", bogie=True,
                                             suspended_mass=2 * 100e3 / 9.81)).setup
    scanned = WheelsetPose(0.006218927450104049, 0.4603366277827256, 0.0008148973059443822,
                           -0.0004885964320649976)
    later = WheelsetPose(0.006221056974841122, 0.4603326192366053, 0.0008087590393067555,
                         -0.0004896489051247572)
    _compare_along(setup, [scanned, later], [np.zeros((2, 3))] * 2)
