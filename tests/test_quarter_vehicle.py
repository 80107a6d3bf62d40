"""The built-in suspension's quarter vehicle (solver/dynamics/suspension.py):
its roll moment against the statics of the four-wheelset vehicle's own body
model (an independent formulation: the 38-DOF spring-element matrices of
cosim/vehicle/bodies.py), the lateral balance of a stand-alone wheelset in a
canted curve, the frame on the centreline, and the settings that have no
effect (refused, not ignored)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from solver.dynamics.suspension import builtin_suspension_loads, quarter_vehicle_roll
from solver.errors import WheelsetError
from solver.layout import M_BOX_Z_REF, N_STATE, S_Y, S_Z
from solver.model.parameters import WheelsetParameters, ineffective_settings
from solver.model.wheelset import WheelsetModel

LOADED = dict(bogie=True, suspended_mass=9307.5)      # the Manchester vehicle's quarter


def _model_vector(**fields):
    return WheelsetModel(WheelsetParameters(**{**LOADED, **fields})).model.copy()


def test_roll_moment_matches_the_vehicle_body_model_statics():
    """Under the same uncompensated lateral acceleration (0.6437 m/s^2: R 600 m,
    150 mm cant, 31.3 m/s) and gravity, the quarter vehicle's roll moment on its
    wheelset equals a quarter of the roll moment that the vehicle model of
    cosim/vehicle (carbody and bogie frames on their spring elements, the
    wheelsets held) puts on its four wheelsets through the primary vertical
    springs, within 1.5 %: the vehicle model leaves out the couple of the
    primary springs' preload across their ~1.5 mm lateral shear (about 0.14 kN m
    per wheelset, 1.1 %), which the quarter vehicle's frame, riding on the
    wheelset, does not have. Measured 0.6 %."""
    from cosim.vehicle.bodies import BOGIES, CARBODY, N_DOF, WHEELSETS, VehicleModel
    from cosim.vehicle.parameters import GRAVITY, VehicleParameters
    a = 0.6437
    p = VehicleParameters()
    vm = VehicleModel(p)
    force = np.zeros(N_DOF)
    force[CARBODY + 1] = -p.carbody_mass * a
    for b in BOGIES:
        force[b + 1] = -p.bogie_mass * a
    free = np.arange(18)                        # the carbody and the frames; wheelsets held
    q = np.zeros(N_DOF)
    q[free] = np.linalg.solve(vm.K[np.ix_(free, free)], force[free])
    element_force = vm.k * (vm.D @ q)           # on body A of each element
    vehicle = 0.0
    for e, el in enumerate(vm.elements):
        if el.body_b in WHEELSETS:               # primary: B is the wheelset, at (0, +-1 m, 0)
            vehicle += el.offset_b[1] * -element_force[3 * e + 2]
    vehicle = -vehicle / 4                      # per wheelset, + loads the right wheel
    model = _model_vector()
    moment, carbody_offset, frame_offset = quarter_vehicle_roll(model, a, GRAVITY, p.wheel_radius)
    assert moment == pytest.approx(vehicle, rel=0.015)
    # the carbody's centre of gravity moves out as far as the vehicle's (its shift
    # on the secondary and the two rolls), within 5 % (the frame's primary shear)
    assert carbody_offset == pytest.approx(q[CARBODY + 1] - 0.0, rel=0.05)
    assert frame_offset < 0 and carbody_offset < 0


def test_roll_moment_without_flexibility_is_the_lever_of_the_heights():
    """With rigid secondary and primary (stiffnesses 0), the roll moment is the
    lateral force at the heights of the two centres of gravity above the axle:
    m_s A (share h_c + (1 - share) h_f - z), exactly (closed form)."""
    model = _model_vector(secondary_roll_stiffness=0.0, secondary_lateral_stiffness=0.0,
                          suspension_stiffness=(31.391e6, 3.884e6, 0.0))
    share = 8000.0 / 9307.5
    lever = share * 2.0 + (1 - share) * 0.6 - 0.46
    moment, e_c, e_f = quarter_vehicle_roll(model, 0.5, 9.81, 0.46)
    assert moment == pytest.approx(9307.5 * 0.5 * lever, rel=1e-12)
    assert e_c == 0.0 and e_f == 0.0


def test_loads_on_straight_track_are_the_weight_only():
    """No curvature, no cant: the suspended mass loads the boxes with its weight
    only (no lateral force, no roll moment), and the quarter vehicle's frame
    puts no lateral spring force on a displaced wheelset; the frame on the
    centreline pulls it back with 2 ky y (Wickens' single suspended wheelset)."""
    state = np.zeros(N_STATE)
    state[S_Z] = 0.46
    state[S_Y] = 2e-3
    quarter = _model_vector()
    quarter[M_BOX_Z_REF] = 0.46
    fx, fy, fz, mx, my, mz = builtin_suspension_loads(state, quarter, 30.0, 9.81, 0.0, 0.0)
    assert fy == 0.0 and mx == pytest.approx(0.0, abs=1e-9)
    assert fz == pytest.approx(-9307.5 * 9.81, rel=1e-12)
    wickens = _model_vector(frame_on_centreline=True)
    wickens[M_BOX_Z_REF] = 0.46
    fy_centreline = builtin_suspension_loads(state, wickens, 30.0, 9.81, 0.0, 0.0)[1]
    assert fy_centreline == pytest.approx(-2 * 3.884e6 * 2e-3, rel=1e-9)


@pytest.fixture(scope="module")
def r600_track(tmp_path_factory):
    """R 600 m left curve, 150 mm cant, after 5 m of straight and a 40 m
    transition (the vehicle command's layout, cosim/vehicle/curve_layout.py)."""
    from fmu_wheelset.validation.quarter_vehicle import write_track
    return str(write_track(tmp_path_factory.mktemp("track")))


@pytest.mark.parametrize("speed", [25.0, 31.3, 35.0])
def test_standalone_curve_lateral_balance(r600_track, speed):
    """R 600 m, 150 mm cant: the stand-alone loaded wheelset's rails push it
    inwards with the uncompensated lateral force of everything it carries,
    sum Y = (m_s + m_w) (V^2/R cos c - g sin c), within 1 % (the figure the
    issue asks for) as a mean over the last 4 s of 12 s; the outer (right)
    wheel carries more load than the inner one above the balance speed
    (24.4 m/s). Measured within 0.05 %."""
    from fmu_wheelset.validation.quarter_vehicle import standalone_run
    run = standalone_run(r600_track, speed, backend="core")
    assert run["status"] == "ok"
    assert run["lateral_force"] / run["required"] == pytest.approx(1.0, abs=0.01)
    assert run["q_outer"] > run["q_inner"]


def test_settings_without_effect_are_refused():
    """A setting that differs from its default and has no effect in the chosen
    configuration is refused with a sentence naming it (WheelsetError), not
    ignored: the suspended mass without the built-in suspension (the FMU's
    suspension.suspended_mass without suspension.builtin ran a free wheelset),
    the primary lateral spring of the quarter vehicle, the quarter vehicle's
    numbers with the frame on the centreline or without a suspended mass."""
    cases = [
        (dict(suspended_mass=9307.5), "suspended_mass"),
        (dict(suspension_stiffness=(1e6, 3.884e6, 1.22e6)), "suspension_stiffness"),
        (dict(carbody_cg_height=1.8), "carbody_cg_height"),
        (dict(bogie=True, suspended_mass=9307.5, suspension_stiffness=(31.391e6, 0.0, 1.22e6)),
         "suspension_stiffness[1]"),
        (dict(bogie=True, suspended_mass=9307.5, suspension_damping=(15e3, 20e3, 4e3)),
         "suspension_damping[1]"),
        (dict(bogie=True, suspended_mass=9307.5, frame_on_centreline=True,
              secondary_roll_stiffness=1e6), "secondary_roll_stiffness"),
        (dict(bogie=True, secondary_lateral_stiffness=1e6), "suspended_mass is 0"),
    ]
    for fields, words in cases:
        params = WheelsetParameters(**fields)
        assert any(words in problem for problem in ineffective_settings(params)), fields
        with pytest.raises(WheelsetError, match=re_escape(words)):
            WheelsetModel(params)
    # what has an effect is accepted
    for fields in (LOADED, dict(LOADED, frame_on_centreline=True,
                                suspension_stiffness=(1e6, 2e6, 1.22e6)),
                   dict(LOADED, carbody_cg_height=1.8, secondary_lateral_stiffness=0.0)):
        assert ineffective_settings(WheelsetParameters(**fields)) == []


def test_a_toppling_quarter_vehicle_is_refused():
    """A secondary roll stiffness below m_c g (h_c - h2) cannot hold the carbody
    up: the quasi-static roll has no solution, and the parameters are refused."""
    with pytest.raises(WheelsetError, match="upright"):
        WheelsetModel(WheelsetParameters(**LOADED, secondary_roll_stiffness=5e4))


def re_escape(text):
    import re
    return re.escape(text)


def test_quarter_vehicle_parameters_are_the_vehicles():
    """The defaults are the Manchester vehicle of cosim/vehicle per wheelset:
    the carbody's quarter on the secondary, the heights, the secondary's roll
    stiffness 2 kz2 b2^2 per bogie and lateral stiffness 2 ky2 per bogie, each
    halved per wheelset (one source of the numbers: VehicleParameters)."""
    from cosim.vehicle.parameters import VehicleParameters
    v, w = VehicleParameters(), WheelsetParameters()
    suspended = v.carbody_mass / 4 + v.bogie_mass / 2
    assert suspended == 9307.5
    assert w.carbody_share == pytest.approx(v.carbody_mass / 4 / suspended, rel=1e-15)
    assert (w.carbody_cg_height, w.frame_cg_height, w.secondary_height) == (
        v.carbody_height, v.bogie_height, v.secondary_height)
    assert w.secondary_roll_stiffness == pytest.approx(
        2 * v.secondary_stiffness[2] * v.secondary_semi_spacing ** 2 / 2)
    assert w.secondary_lateral_stiffness == pytest.approx(2 * v.secondary_stiffness[1] / 2)
    assert math.isclose(w.suspension_stiffness[2], v.primary_stiffness[2])


@pytest.mark.cosim
def test_load_transfer_against_the_vehicle_over_four_fmus(wheelset_fmu_unzipped, tmp_path):
    """R 600 m, 150 mm cant: the stand-alone wheelset's load transfer (Q outer -
    Q inner)/2 within 5 % (the figure the issue asks for) of the Manchester
    vehicle's over four FMUs, the mean of its four wheelsets, at 31.3 and 35 m/s
    (cant deficiency 100 and 162 mm; measured +1.4 % and +3.2 %); at 25 m/s
    (9 mm), where the roll moment is small and the transfer is the creep forces'
    moments, within the spread of the vehicle's own four wheelsets (measured
    1.99 kN against 1.1-3.4 kN). The stand-alone Y/Q stays below the leading
    wheelsets' (no bogie to set an angle of attack)."""
    from fmu_wheelset.validation.quarter_vehicle import measure, transfer
    # the session's one extraction of the FMU (tests/conftest.py: never a second
    # copy of its binary in this process)
    for speed, alone, vehicle in measure(tmp_path, "core", speeds=(25.0, 31.3, 35.0),
                                         fmu=wheelset_fmu_unzipped):
        mine = float(transfer(alone["q_inner"], alone["q_outer"]))
        theirs = transfer(vehicle["q_inner"], vehicle["q_outer"])
        if speed > 30.0:
            assert mine == pytest.approx(float(np.mean(theirs)), rel=0.05), (speed, theirs)
        else:
            assert theirs.min() <= mine <= theirs.max(), (speed, theirs)
        assert alone["yq_outer"] < min(vehicle["yq_outer"][[0, 2]])


@pytest.mark.fmu
def test_the_fmu_refuses_a_suspended_mass_without_the_suspension(wheelset_fmu):
    """suspension.suspended_mass without suspension.builtin used to run a free
    wheelset (8.9 kN per wheel instead of 54.5): now fmi2ExitInitializationMode
    fails, its reason in the log. In a process of its own: a failed
    initialization of this build followed, in one process, by one of another
    build of the FMU crashes the second (tests/test_validation.py builds its
    own; a front-end matter, not this test's)."""
    import subprocess
    import sys
    code = """
import sys, fmpy
messages = []
def log(component, instance, status, category, message):
    messages.append(message.decode() if isinstance(message, bytes) else str(message))
try:
    fmpy.simulate_fmu(sys.argv[1], stop_time=0.01, output_interval=0.001,
                      start_values={"suspension.suspended_mass": 9307.5}, logger=log)
    print("RAN")
except Exception:
    print("REFUSED")
print("\\n".join(messages))
"""
    proc = subprocess.run([sys.executable, "-c", code, wheelset_fmu], capture_output=True,
                          text=True, timeout=600)
    assert proc.stdout.startswith("REFUSED"), proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "suspended_mass" in proc.stdout and "built-in suspension" in proc.stdout
