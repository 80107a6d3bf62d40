"""Property tests: bad input never gives a silent or foreign failure.

hypothesis with bounded example counts (the file runs in well under 2 min):

* profile loader: random malformed files -> ProfileError (never another exception);
* geometry: any pose |y| <= 12 mm, |yaw| <= 10 mrad (|roll| <= 5 mrad, z within
  +-1 mm of the static height) gives finite contact points; the mirror pose
  (y, roll, yaw) -> (-y, -roll, -yaw) gives the mirrored points;
* creep: |F| <= mu N (1 + 1e-9) for any creepage, all four models;
* wheelset core: any finite axle-box force within |F| <= AXLE_BOX_FORCE_RANGE per
  component gives a finite state (status "ok") or a "discard" StepResult with a
  message, never NaN; non-finite inputs raise WheelsetError.
"""
from __future__ import annotations

import math
import os
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.contact.creep.forces import creep_forces
from solver.contact.geometry.setup import ContactSetup
from solver.contact.geometry.points import contact_points, static_contact
from solver.errors import ProfileError
from solver.profiles.files import load_profile
from solver.errors import WheelsetError
from solver.model.outputs import WheelsetInputs
from solver.model.wheelset import WheelsetModel
from solver.model.parameters import WheelsetParameters

# Documented range of the axle-box force inputs for the property test (N per
# component per box): 5x a heavy wheel load; the FMU's input range is 1e6 N.
AXLE_BOX_FORCE_RANGE = 5.0e5

SETTINGS = settings(deadline=None, max_examples=60,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


# ---------------------------------------------------------------------------
# profile loader on malformed files
# ---------------------------------------------------------------------------

_GOOD_LINES = [f"{x:.3f} {0.001 * x * x:.5f}" for x in np.linspace(-30.0, 30.0, 16)]

_token = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(min_value=-1e3, max_value=1e3).map(lambda v: f"{v:.4f}"),
    st.sampled_from(["nan", "inf", "-inf", "1e999", "0x10", "1,5", "--1", "", "#", "a", "1e-400",
                     "1_000", "\t", "\x00", "\u00e9", "\ufeff", "1e308", "-1e308"]),
    st.text(max_size=6),
)
_line = st.one_of(
    st.lists(_token, min_size=0, max_size=4).map(" ".join),
    st.sampled_from(["# kind: wheel", "# kind: rail", "# kind: tyre", "# units: m", "# units: mm",
                     "# flange_back_to_taping_line_mm: 70", "# flange_back_to_taping_line_mm: x",
                     "# flange_back_to_taping_line_mm: -5", "# name: x", "# source: y", "#"]),
    st.sampled_from(_GOOD_LINES),
)


@st.composite
def _malformed_file(draw):
    """Bytes of a profile-like file: good lines mutated, random lines, random bytes."""
    mode = draw(st.sampled_from(["lines", "mutate", "bytes", "scaled"]))
    if mode == "bytes":
        return draw(st.binary(max_size=400))
    if mode == "scaled":       # a valid shape scaled to odd units / spans / orders
        factor = draw(st.sampled_from([1e-9, 1e-3, 1.0, 1e3, 1e5, 1e9, 1e200, -1.0]))
        n = draw(st.integers(min_value=0, max_value=30))
        xs = np.linspace(-30.0, 30.0, max(n, 1)) * factor
        zs = draw(st.lists(st.floats(-1e3, 1e3), min_size=len(xs), max_size=len(xs)))
        order = draw(st.sampled_from(["up", "down", "shuffle"]))
        pts = list(zip(xs.tolist(), zs))
        if order == "down":
            pts = pts[::-1]
        elif order == "shuffle":
            pts = draw(st.permutations(pts))
        return "\n".join(f"{float(x)!r} {float(z)!r}" for x, z in pts).encode()
    if mode == "mutate":
        lines = list(_GOOD_LINES)
        for _ in range(draw(st.integers(1, 4))):
            i = draw(st.integers(0, len(lines) - 1))
            lines[i] = draw(_line)
        return "\n".join(lines).encode("utf-8", "surrogatepass")
    lines = draw(st.lists(_line, max_size=25))
    return "\n".join(lines).encode("utf-8", "surrogatepass")


def _write(tmpdir, data: bytes) -> str:
    path = os.path.join(tmpdir, "profile.txt")
    with open(path, "wb") as fh:
        fh.write(data)
    return path


@SETTINGS
@given(data=_malformed_file(), kind=st.sampled_from(["wheel", "rail", None]))
def test_profile_loader_raises_only_profile_error(data, kind):
    with tempfile.TemporaryDirectory() as tmpdir:
        path = _write(tmpdir, data)
        try:
            profile = load_profile(path, kind)
        except ProfileError as exc:
            assert str(exc), "a ProfileError must carry a message"
            assert type(exc) is ProfileError, f"{type(exc).__name__} escaped instead of ProfileError"
            assert path in str(exc), f"the message names the file: {exc}"
            return
        # accepted: it must then be a usable profile
        assert np.all(np.isfinite(profile.height))
        assert np.all(np.diff(profile.lateral) > 0)


def test_profile_loader_missing_and_directory(tmp_path):
    for path in (tmp_path / "none.txt", tmp_path):
        with pytest.raises(ProfileError):
            load_profile(path, "wheel")


# ---------------------------------------------------------------------------
# geometry
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def setup():
    s = ContactSetup.from_names("S1002", "UIC60")
    return s, static_contact(s, 0.0).z


_POINT_FIELDS = ("y_wheel", "y_rail", "contact_angle", "rolling_radius", "gap",
                 "wheel_curvature_lateral", "rail_curvature_lateral", "wheel_curvature_rolling")


@SETTINGS
@given(y=st.floats(-12e-3, 12e-3), yaw=st.floats(-10e-3, 10e-3), roll=st.floats(-5e-3, 5e-3),
       dz=st.floats(-1e-3, 1e-3))
def test_geometry_finite_and_mirrored(setup, y, yaw, roll, dz):
    s, z0 = setup
    a = contact_points(s, y, z0 + dz, roll, yaw)
    b = contact_points(s, -y, z0 + dz, -roll, -yaw)
    for name in _POINT_FIELDS + ("position",):
        assert np.all(np.isfinite(getattr(a, name))), name
    assert np.all(a.count >= 1), f"a wheel without any candidate point at y={y}, yaw={yaw}"
    assert b.count.tolist() == a.count[::-1].tolist()
    for name in _POINT_FIELDS:
        np.testing.assert_array_equal(getattr(b, name), getattr(a, name)[::-1], err_msg=name)
    pa, pb = a.position, b.position
    np.testing.assert_array_equal(pb[..., 0], pa[::-1, :, 0])    # x: trace line mirrored with yaw
    np.testing.assert_array_equal(pb[..., 1], -pa[::-1, :, 1])
    np.testing.assert_array_equal(pb[..., 2], pa[::-1, :, 2])


# ---------------------------------------------------------------------------
# creep saturation
# ---------------------------------------------------------------------------

_creepage = st.one_of(st.floats(-1.0, 1.0), st.floats(-1e-3, 1e-3), st.sampled_from([0.0, 1e-12, -1e-12]),
                      st.floats(-1e6, 1e6))


@settings(deadline=None, max_examples=150)
@given(model=st.sampled_from(["kalker", "she", "polach", "fastsim"]), xi=_creepage, eta=_creepage,
       phi=st.one_of(st.floats(-50.0, 50.0), st.floats(-1e4, 1e4)),
       a=st.floats(1e-4, 2e-2), ratio=st.floats(0.1, 10.0), normal=st.floats(1.0, 3e5),
       mu=st.floats(0.01, 1.0), speed=st.floats(0.0, 100.0))
def test_creep_force_bounded_by_friction(model, xi, eta, phi, a, ratio, normal, mu, speed):
    b = a / ratio
    fx, fy, mz = creep_forces(model, xi, eta, phi, a, b, normal, mu, 8.2e10, 0.28, speed)
    assert all(math.isfinite(v) for v in (fx, fy, mz)), (fx, fy, mz)
    if model == "kalker":
        return    # linear theory: unbounded by design (documented); finite is all it promises
    assert math.hypot(fx, fy) <= mu * normal * (1.0 + 1e-9), (math.hypot(fx, fy), mu * normal)


@settings(deadline=None, max_examples=40)
@given(xi=_creepage, eta=_creepage, phi=st.floats(-50.0, 50.0))
def test_kalker_is_linear_and_finite(xi, eta, phi):
    """Kalker's linear theory is not saturated (the bound holds only for the
    saturated models); it must be finite and odd in the creepages."""
    f1 = creep_forces("kalker", xi, eta, phi, 5e-3, 4e-3, 8e4, 0.3, 8.2e10, 0.28, 30.0)
    f2 = creep_forces("kalker", -xi, -eta, -phi, 5e-3, 4e-3, 8e4, 0.3, 8.2e10, 0.28, 30.0)
    assert all(math.isfinite(v) for v in f1)
    np.testing.assert_allclose(f2, [-v for v in f1], rtol=1e-12, atol=1e-9)


# ---------------------------------------------------------------------------
# wheelset core inputs
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def core():
    model = WheelsetModel(WheelsetParameters(creep_model="kalker", contact_model="single",
                                             internal_step=1e-3))
    model.initialize()
    return model, model.get_state()


_force = st.floats(-AXLE_BOX_FORCE_RANGE, AXLE_BOX_FORCE_RANGE)


@settings(deadline=None, max_examples=40,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(force=st.lists(_force, min_size=6, max_size=6), moment=st.lists(st.floats(-1e5, 1e5), min_size=6,
                                                                       max_size=6),
       torque=st.floats(-1e5, 1e5), steps=st.integers(1, 5), h=st.sampled_from([1e-4, 1e-3, 5e-3]))
def test_core_any_finite_force_ok_or_discard(core, force, moment, torque, steps, h):
    model, snap = core
    model.set_state(snap)
    inputs = WheelsetInputs(axle_box_force=np.array(force).reshape(2, 3),
                            axle_box_moment=np.array(moment).reshape(2, 3), axle_torque=torque)
    for _ in range(steps):
        before = model.get_state()
        result = model.advance(h, inputs)
        assert result.status in ("ok", "discard")
        assert np.all(np.isfinite(model.state)), model.state
        if result.status == "discard":
            assert result.message, "a discard must say why"
            np.testing.assert_array_equal(model.state, before["state"])     # left as it was
            assert model.time == before["time"]
            break
        out = model.outputs()
        for name in ("position", "velocity", "normal_force", "wheel_rail_force", "derailment_quotient"):
            assert np.all(np.isfinite(getattr(out, name))), name


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_core_non_finite_input_raises(core, bad):
    model, snap = core
    model.set_state(snap)
    f = np.zeros((2, 3))
    f[1, 2] = bad
    with pytest.raises(WheelsetError, match="non-finite input"):
        model.advance(1e-3, WheelsetInputs(axle_box_force=f))
    np.testing.assert_array_equal(model.state, snap["state"])
    for h in (0.0, -1e-3, math.nan, math.inf):
        with pytest.raises(WheelsetError, match="step size"):
            model.advance(h, WheelsetInputs())
