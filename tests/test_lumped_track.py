"""The lumped rail bodies of tests/data/lumped_track/lumped_track.json (made by
make_lumped_track.py from the FE track of cosim/track/): their static stiffness
against a fresh OpenSees static analysis of the same track, against the
closed forms of a continuously supported rail, and their fits against the
stored FE receptance. Real OpenSees, one static model per configuration."""
import json
import math
from pathlib import Path

import numpy as np
import pytest

from cosim.track.fe_model import RailLoad, TrackModel
from cosim.track.parameters import TrackParameters

pytestmark = pytest.mark.cosim      # the OpenSees track

DATA = json.loads((Path(__file__).parent / "data" / "lumped_track" / "lumped_track.json").read_text())
CONFIGS = DATA["configurations"]


def crown_transform(d):
    """crown (lateral, vertical, roll) = A @ axis; the crown is d above the rail axis."""
    return np.array([[1.0, 0.0, -d], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


def params_of(config):
    stored = dict(config["track_parameters"])
    stored["rail"] = config["rail"]
    return TrackParameters(**stored)


@pytest.mark.parametrize("key", sorted(CONFIGS))
def test_stored_flexibility_is_a_fresh_opensees_static_analysis(key):
    """The stored 3 x 3 crown flexibilities (assembled matrices, SuperLU) against OpenSees'
    own static analysis (BandSPD) of the same model with unit loads at the crown: the same
    linear system solved twice, so 1e-6 leaves room for round-off only."""
    config = CONFIGS[key]
    params = params_of(config)
    model = TrackModel(params)
    A = crown_transform(params.rail.crown_above_centroid)
    for where, x in config["points"].items():
        e, _ = model.locate(x)
        flex = np.zeros((3, 3))
        for j in range(3):
            axis_load = A.T[:, j]           # a unit crown load as axis force and torque
            disp, _ = model.static_response([(0, x, RailLoad(*axis_load))])
            flex[:, j] = A @ np.array(model.interpolate(x, disp[0, e], disp[0, e + 1]))
        stored = np.array(config["flexibility"][where])
        scale = np.abs(stored).max(axis=1, keepdims=True)
        assert np.abs(flex - stored) / scale == pytest.approx(np.zeros((3, 3)), abs=1e-6), where
    mean = np.array(config["flexibility"]["mean"])
    assert np.array(config["stiffness"]) @ mean == pytest.approx(np.eye(3), abs=1e-9)


def continuous_support(params):
    """Point stiffness and low-frequency effective mass of an infinite rail on a continuous
    foundation: Winkler beam 2 k_f / beta (= 8 E I beta^3) and 3 m' / (2 beta) (vertical,
    lateral; k_f = pad and ballast in series per sleeper spacing, m' = rail + the sleeper's
    share m_s (k_p / (k_p + k_b))^2 / spacing); a torsion bar on the pads' roll springs
    2 sqrt(G J k_r) (the sleepers do not roll in the model)."""
    p, r = params, params.rail
    out = {}
    for name, kp, kb, inertia in (("vertical", p.pad_vertical_stiffness, p.ballast_vertical_stiffness,
                                   r.vertical_inertia),
                                  ("lateral", p.pad_lateral_stiffness, p.ballast_lateral_stiffness,
                                   r.lateral_inertia)):
        kf = kp * kb / (kp + kb) / p.sleeper_spacing
        beta = (kf / (4.0 * r.youngs_modulus * inertia)) ** 0.25
        mass = r.mass_per_length + p.half_sleeper_mass * (kp / (kp + kb)) ** 2 / p.sleeper_spacing
        out[name] = (2.0 * kf / beta, 1.5 * mass / beta)
    out["roll"] = (2.0 * math.sqrt(r.shear_modulus * r.torsion_constant * p.pad_roll_stiffness
                                   / p.sleeper_spacing), None)
    return out


@pytest.mark.parametrize("rail", ["CHN60", "UIC60"])
def test_euler_bernoulli_rail_body_matches_the_continuous_support(rail):
    """Euler-Bernoulli rails: the crown stiffness (back on the axis) and the vertical
    low-frequency mass against the closed forms within 1 % (the discrete sleepers at
    beta a = 0.82 vertical, 0.98 lateral make the two differ by < 0.4 %, as the
    Zimmermann check of test_track_fe.py finds); roll within 0.5 % (0.14 % measured).
    Timoshenko rails are softer (shear deflection) than Euler-Bernoulli ones."""
    config = CONFIGS[f"{rail}/euler-bernoulli"]
    params = params_of(config)
    Ai = np.linalg.inv(crown_transform(params.rail.crown_above_centroid))
    axis_flex = Ai @ np.array(config["flexibility"]["mean"]) @ Ai.T
    # the FE model joins lateral and roll only through the crown's height above the axis
    assert abs(axis_flex[0, 2]) < 1e-9 * math.sqrt(axis_flex[0, 0] * axis_flex[2, 2])
    closed = continuous_support(params)
    assert 1.0 / axis_flex[1, 1] == pytest.approx(closed["vertical"][0], rel=0.01)
    assert 1.0 / axis_flex[0, 0] == pytest.approx(closed["lateral"][0], rel=0.01)
    assert 1.0 / axis_flex[2, 2] == pytest.approx(closed["roll"][0], rel=0.005)
    assert np.array(config["low_frequency_mass"])[1, 1] == pytest.approx(closed["vertical"][1], rel=0.01)
    timoshenko = CONFIGS[f"{rail}/timoshenko"]
    assert np.array(timoshenko["stiffness"])[1, 1] < np.array(config["stiffness"])[1, 1]


def lumped(K, M, C, f):
    w = 2.0 * math.pi * np.asarray(f)
    return np.linalg.inv(K[None] - (w * w)[:, None, None] * M[None] + 1j * w[:, None, None] * C[None])


@pytest.mark.parametrize("key", sorted(CONFIGS))
def test_stored_fits_reproduce_their_stated_errors(key):
    """The crown's K, M, C (single mass) and the two-layer bodies, evaluated afresh at the
    stored frequencies up to 300 Hz against the stored mean receptance: within the errors
    the file states (computed there at 1 Hz steps; these are 5 Hz samples of the same
    curves, so they cannot be larger), the single mass at 0 Hz exact, and the two-layer
    bodies within 12 % in |H| and 5 deg (the figures docs/flexible_track.md gives)."""
    config = CONFIGS[key]
    rec = config["receptance"]
    f = np.array(rec["frequencies"])
    band = (f > 0.0) & (f <= 300.0)
    index = {"lateral": (0, 0), "lateral_roll": (0, 2), "roll": (2, 2), "vertical": (1, 1)}
    crown = config["lumped"]["crown"]
    K, M, C = (np.array(crown[k]) for k in ("stiffness", "mass", "damping"))
    assert K == pytest.approx(np.array(config["stiffness"]), rel=1e-9)
    h = lumped(K, M, C, f[band])
    for name, (i, j) in index.items():
        fe = np.array(rec["mean"][name]["re"]) + 1j * np.array(rec["mean"][name]["im"])
        ratio = h[:, i, j] / fe[band]
        stated = crown["errors_0_300hz"][name]
        assert np.max(np.abs(np.abs(ratio) - 1.0)) <= abs(stated["max_abs_error"]) + 1e-9, name
        assert np.max(np.abs(np.degrees(np.angle(ratio)))) <= abs(stated["max_phase_error_deg"]) + 1e-6, name
        assert fe[0].imag == 0.0 and fe[0].real == pytest.approx(np.linalg.inv(K)[i, j], rel=1e-9)
    d = config["crown_above_centroid"]
    Ai = np.linalg.inv(crown_transform(d))
    for axis_index, name in enumerate(("lateral", "vertical", "roll")):
        two = config["lumped"]["two_layer_axis"][name]
        A = crown_transform(d)
        K_axis = (A.T @ K @ A)[axis_index, axis_index]      # K_crown = A^-T K_axis A^-1
        assert 1.0 / (1.0 / two["upper_stiffness"] + 1.0 / two["lower_stiffness"]) == pytest.approx(K_axis)
        w = 2.0 * math.pi * f[band]
        z1 = two["upper_stiffness"] + 1j * w * two["upper_damping"]
        z2 = two["lower_stiffness"] + 1j * w * two["lower_damping"] - w * w * two["lower_mass"]
        h2 = 1.0 / (z1 - w * w * two["rail_mass"] - z1 * z1 / (z1 + z2))
        # the FE's axis receptance from the crown's
        entries = {n: np.array(rec["mean"][n]["re"]) + 1j * np.array(rec["mean"][n]["im"]) for n in index}
        Hc = np.zeros((band.sum(), 3, 3), dtype=complex)
        for n, (i, j) in index.items():
            Hc[:, i, j] = Hc[:, j, i] = entries[n][band]
        fe_axis = np.einsum("ij,fjk,lk->fil", Ai, Hc, Ai)[:, axis_index, axis_index]
        ratio = h2 / fe_axis
        assert np.max(np.abs(np.abs(ratio) - 1.0)) < 0.12, name
        assert np.max(np.abs(np.degrees(np.angle(ratio)))) < 5.0, name


def test_the_cores_default_rail_bodies_are_the_stored_fe_fit():
    """solver.track.lumped_rails.ZHAI_2009 (the default of WheelsetParameters'
    rail_mass, rail_stiffness, rail_damping) holds the stored fit of the
    default configuration to the last digit: stiffness the bay average of the
    FE point stiffness, mass and damping the crown fit of its receptance
    (lateral, vertical, roll, lateral-roll coupling)."""
    from solver.model.parameters import WheelsetParameters
    from solver.track.lumped_rails import ZHAI_2009
    config = CONFIGS[DATA["default"]]
    stiffness = np.array(config["stiffness_bay_average"])
    crown = config["lumped"]["crown"]
    mass, damping = np.array(crown["mass"]), np.array(crown["damping"])

    def entries(m):
        return (m[0][0], m[1][1], m[2][2], m[0][2])
    assert ZHAI_2009.stiffness == pytest.approx(entries(stiffness), rel=1e-12)
    assert ZHAI_2009.mass == pytest.approx(entries(mass), rel=1e-12)
    assert ZHAI_2009.damping == pytest.approx(entries(damping), rel=1e-12)
    params = WheelsetParameters()
    assert params.track_model == "lumped"
    assert tuple(params.rail_mass) == ZHAI_2009.mass
    assert tuple(params.rail_stiffness) == ZHAI_2009.stiffness
    assert tuple(params.rail_damping) == ZHAI_2009.damping
