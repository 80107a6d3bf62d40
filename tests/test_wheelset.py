"""Wheelset dynamics against analytic results (Klingel, pure-rolling curving,
energy conservation) and the step/state contract used by the FMU."""
import math
import pickle
import re

import numpy as np
import pytest

from solver.dynamics import derailment
from solver.dynamics.outputs import record_index_of_contact
from solver.dynamics.rhs import GRAVITY
from solver.layout import (
    C_NORMAL, D_BOX_POS, D_Q, N_DERIVED, REC_COUNT, REC_DERIVED, REC_DISTANCE, REC_LIFT, REC_STATE, REC_TIME,
    S_VX, U_BOX_FORCE, U_CURVATURE, U_RAIL_MOTION, U_TORQUE,
)
from solver.layout import S_Y, S_Z, S_VZ
from solver.errors import WheelsetError
from solver.model.outputs import WheelsetInputs
from solver.model.wheelset import WheelsetModel
from solver.model.parameters import WheelsetParameters
from tests.synthetic_profiles import circular_crown_rail, cone_wheel

R0 = 0.46
L0 = 0.75          # back-to-back 1.360 / 2 + 70 mm to the taping line
CONICITY = 0.05


def free_wheelset(**kw):
    base = dict(wheel_profile=cone_wheel(CONICITY), rail_profile=circular_crown_rail(0.08),
                creep_model="kalker", speed=5.0, friction=0.3, mass=1600.0, inertia_roll=660.0,
                inertia_spin=160.0, inertia_yaw=600.0, nominal_radius=R0, internal_step=1e-3,
                track="straight")
    base.update(kw)
    return WheelsetModel(WheelsetParameters(**base))


def run(model, duration, h=0.002, inputs=None):
    t, y = [], []
    for _ in range(int(round(duration / h))):
        result = model.advance(h, inputs)
        assert result.status == "ok", result.message
        t.append(model.time)
        y.append(model.state[S_Y])
    return np.array(t), np.array(y)


def test_klingel_wavelength_within_3_percent():
    # Klingel: lambda_w = 2 pi sqrt(r0 l0 / lambda) (docs/references.md: 16.50 m for 0.05)
    model = free_wheelset()
    model.initialize(lateral=0.001)
    t, y = run(model, 8.0)
    up = t[1:][(y[:-1] < 0) & (y[1:] >= 0)]
    assert len(up) >= 2
    wavelength = np.diff(up).mean() * model.params.speed
    expected = 2 * math.pi * math.sqrt(R0 * L0 / CONICITY)
    assert expected == pytest.approx(16.50, abs=0.01)
    assert wavelength == pytest.approx(expected, rel=0.03)


def test_free_wheelset_curving_offset_within_5_percent():
    # Pure rolling in a curve: y0 = r0 l0 / (lambda R), outwards (to -y in a left curve).
    radius = 2000.0
    speed = 5.0
    cant = -math.atan(speed ** 2 / radius / 9.81)          # no cant deficiency
    inputs = WheelsetInputs(curvature=1.0 / radius, cant_angle=cant)
    model = free_wheelset(speed=speed)
    model.initialize(inputs)
    t, y = run(model, 8.0, inputs=inputs)
    centre = 0.5 * (y[t > 1.0].max() + y[t > 1.0].min())
    # The roll of the wheelset moves the contact across the cone by r0*roll
    # (roll = dr / (2 l0)); for a cone on a knife-edge rail this gives the
    # kinematic conicity lambda / (1 - lambda r0 / l0), 3 % above lambda here.
    conicity = CONICITY / (1.0 - CONICITY * R0 / L0)
    expected = -R0 * L0 / (conicity * radius)
    assert centre == pytest.approx(expected, rel=0.05)
    # the plain formula with the nominal cone is within 6 %
    assert centre == pytest.approx(-R0 * L0 / (CONICITY * radius), rel=0.06)


# (track model, internal step, tolerance): on the rigid track the bounce energy
# stays within 1e-3; on the lumped rail bodies, which ring on the Hertz springs at
# about 5000 rad/s (RK4 at 0.1 ms drifts by 8e-3 there), at 25 us within 3e-3
# (measured 2.0e-3: the point contact's normal force is the gradient of its
# elastic energy only to O(penetration x curvature), 1.3e-3 on this 12.5 1/m rail
# crown: -4.4 N of lateral force against -6.9 N of -dE/dy under 15.7 kN, which
# the soft lateral rail body, ringing undamped, picks up)
@pytest.mark.parametrize("track_model, internal_step, tolerance",
                         [("prescribed", 1e-4, 1e-3), ("lumped", 2.5e-5, 3e-3)])
def test_energy_conserved_without_friction_and_damping(track_model, internal_step, tolerance):
    # (no contact damping, no rail damping: the rail bodies' energy is in
    # mechanical_energy)
    model = free_wheelset(friction=0.0, speed=10.0, internal_step=internal_step, hunt_crossley=0.0,
                          track_model=track_model, rail_damping=(0.0, 0.0, 0.0, 0.0))
    model.initialize()
    z_eq = model.state[S_Z]
    e_spin = 0.5 * model.params.inertia_spin * model.state[11] ** 2

    def bounce_energy():
        return model.mechanical_energy() - model.params.mass * 9.81 * z_eq - e_spin

    model.state[S_Z] += 30e-6        # drop the wheelset from 30 um above equilibrium
    e0 = bounce_energy()
    assert e0 > 0.4                  # m g dz (the wheels are lifted off the rails)
    energies = []
    for _ in range(200):
        assert model.advance(0.005).status == "ok"
        energies.append(bounce_energy())
    assert np.max(np.abs(np.array(energies) - e0)) < tolerance * e0
    # and it does bounce: the vertical velocity changes sign
    assert model.outputs().elastic_energy >= 0


def test_advance_reaches_exactly_t_plus_h_for_varying_steps():
    model = free_wheelset()
    model.initialize(lateral=0.001)
    total = 0.0
    for h in (0.001, 0.0037, 0.0005, 0.01, 0.00123):
        model.advance(h)
        total += h
    assert model.time == pytest.approx(total, rel=0, abs=1e-15)
    assert model.distance == pytest.approx(total * model.params.speed, rel=1e-12)


def test_state_snapshot_replays_bit_for_bit():
    model = free_wheelset()
    model.initialize(lateral=0.002)
    run(model, 0.1)
    snap = pickle.loads(pickle.dumps(model.get_state()))
    run(model, 0.2)
    first = model.state.copy()
    first_out = model.outputs().normal_force.copy()
    model.set_state(snap)
    run(model, 0.2)
    assert np.array_equal(model.state, first)
    assert np.array_equal(model.outputs().normal_force, first_out)


def test_a_copied_model_steps_its_own_arrays():
    """The step reaches the model's arrays by address (fast_step.pack_step_data):
    a deep copy must get a block of its own, so that stepping the copy leaves the
    original bit for bit as it was, and both step as models built alike (the same
    bits: the same kernel on the same numbers)."""
    import copy

    model = free_wheelset()
    model.initialize()
    model.advance(0.05)
    state_before = model.state.copy()
    record_before = model.record.copy()
    twin = copy.deepcopy(model)
    twin.advance(0.05)
    assert np.array_equal(model.state, state_before)
    assert np.array_equal(model.record, record_before)
    model.advance(0.05)
    assert np.array_equal(model.state, twin.state)
    assert np.array_equal(model.record, twin.record)
    # the step writes the inputs it took into the model's own input array
    u = model.arrays.inputs.copy()
    u[U_TORQUE] = 10.0
    assert model.advance_vector(0.05, u).status == "ok"
    assert np.array_equal(model.arrays.inputs, u, equal_nan=True)   # NaN: curvature and cant from the track
    assert not np.array_equal(twin.arrays.inputs, u, equal_nan=True)


def test_static_equilibrium_carries_the_weight():
    model = free_wheelset()
    model.initialize()
    out = model.outputs()
    weight = model.params.mass * 9.81
    assert out.vertical_force.sum() == pytest.approx(weight, rel=1e-4)
    assert out.vertical_force[0] == pytest.approx(out.vertical_force[1], rel=1e-6)
    assert abs(model.rhs()[S_VZ]) < 1e-4


def test_bad_parameters_and_inputs_raise_clear_errors():
    with pytest.raises(WheelsetError, match="mass"):
        free_wheelset(mass=-1.0)
    with pytest.raises(WheelsetError, match="creep_model"):
        free_wheelset(creep_model="magic")
    model = free_wheelset()
    with pytest.raises(WheelsetError, match="before initialize"):
        model.advance(0.001)
    model.initialize()
    bad = WheelsetInputs(axle_box_force=np.array([[0.0, np.nan, 0.0], [0.0, 0.0, 0.0]]))
    with pytest.raises(WheelsetError, match="axle-box force"):
        model.advance(0.001, bad)
    with pytest.raises(WheelsetError, match="step size"):
        model.advance(0.0)


def test_wheel_lift_goes_on_until_the_flanges_clear_the_rails():
    """40 kN per axle box upwards on the 1600 kg wheelset: both wheels leave the
    rails. A wheel lift is not a discarded step: the steps go on with the lift
    and its height reported, until both wheels are higher above their rails
    than the flange (2 mm on the synthetic cone wheel): a derailment, the state
    kept at the last good step."""
    model = free_wheelset()
    model.initialize()
    lift = WheelsetInputs(axle_box_force=np.array([[0.0, 0.0, 4e4], [0.0, 0.0, 4e4]]))
    for _ in range(200):
        before = model.state.copy()
        result = model.advance(1e-3, lift)
        if result.status != "ok":
            break
        out = model.outputs()
        assert out.lift_height.max() <= derailment.flange_height(model.setup)
    assert result.reason == "derailment", result.message
    assert "more than the flange height (2.0 mm) above their rails" in result.message
    assert np.array_equal(model.state, before)
    assert out.wheel_lift.all() and 0.0 < out.lift_height.min()


def test_semi_implicit_integrator_gives_the_same_wavelength():
    model = free_wheelset(integrator="semi-implicit", internal_step=1e-4)
    model.initialize(lateral=0.001)
    t, y = run(model, 8.0)
    up = t[1:][(y[:-1] < 0) & (y[1:] >= 0)]
    wavelength = np.diff(up).mean() * model.params.speed
    assert wavelength == pytest.approx(2 * math.pi * math.sqrt(R0 * L0 / CONICITY), rel=0.03)


def test_output_record_equals_outputs_and_vector_step_equals_advance():
    # advance_vector (the FMU's path: one numba call, outputs in `record`) and
    # advance + outputs() (the Python API) are the same computation
    inputs = WheelsetInputs(axle_box_force=np.array([[0.0, 2.0e3, -1.0e4], [0.0, 2.0e3, -1.0e4]]),
                            axle_torque=100.0)
    # 20 m/s: at 5 m/s this load makes linear Kalker creep too stiff for the 1 ms step
    a, b = free_wheelset(speed=20.0), free_wheelset(speed=20.0)
    a.initialize(inputs, lateral=0.002)
    b.initialize(inputs, lateral=0.002)
    u = b.input_vector(inputs)
    for _ in range(50):
        assert a.advance(0.002, inputs).status == "ok"
        assert b.advance_vector(0.002, u).status == "ok"
    assert np.array_equal(a.state, b.state)
    out, rec = a.outputs(), b.record
    assert rec[REC_TIME] == pytest.approx(out.time) and rec[REC_DISTANCE] == out.distance
    assert np.array_equal(rec[REC_STATE:REC_STATE + 3], out.position)
    d = rec[REC_DERIVED:REC_DERIVED + N_DERIVED]
    assert np.array_equal(d[D_BOX_POS:D_BOX_POS + 6].reshape(2, 3), out.axle_box_position)
    assert np.array_equal(d[D_Q:D_Q + 2], out.vertical_force)
    assert np.array_equal(rec[REC_COUNT:REC_COUNT + 2], out.contact_count)
    assert np.array_equal(rec[REC_LIFT:REC_LIFT + 2] > 0.5, out.wheel_lift)
    for side in range(2):
        for k in range(3):
            on = out.contact_active[side, k]
            got = rec[record_index_of_contact(side, k, C_NORMAL)]
            assert got == (out.normal_force[side, k] if on else 0.0)
    # the loads are carried: Q sums to the weight and the applied box loads
    weight = a.params.mass * GRAVITY + 2 * 1.0e4
    assert d[D_Q] + d[D_Q + 1] == pytest.approx(weight, rel=0.02)


def test_vector_step_rejects_non_finite_inputs_and_keeps_the_state():
    model = free_wheelset()
    model.initialize()
    u = model.input_vector(WheelsetInputs())
    before = model.state.copy()
    for j, name in ((U_BOX_FORCE + 4, "axle-box force (right y)"),
                    (U_RAIL_MOTION + 1, "rail motion (left vertical)")):
        bad = u.copy()
        bad[j] = np.inf
        with pytest.raises(WheelsetError, match=re.escape(name)):
            model.advance_vector(0.001, bad)
        assert np.array_equal(model.state, before)
    bad = u.copy()
    bad[U_CURVATURE] = -np.inf           # NaN means "from the track", inf is an error
    with pytest.raises(WheelsetError, match="curvature"):
        model.advance_vector(0.001, bad)
    assert model.advance_vector(0.001, u).status == "ok"     # NaN curvature/cant: the track
    # the compiled step reads N_INPUT entries without bounds checks: a vector of
    # another length is an error, not a read past its end
    before = model.state.copy()
    for wrong in (u[:5], np.concatenate([u, u]), "not numbers"):
        with pytest.raises(WheelsetError, match="input vector"):
            model.advance_vector(0.001, wrong)
        assert np.array_equal(model.state, before)
    # numbers of another type or layout are taken as float64
    assert model.advance_vector(0.001, list(u)).status == "ok"
    assert model.advance_vector(0.001, np.repeat(u, 2)[::2]).status == "ok"


def test_creep_stiffness_instability_is_named_in_the_discard_message():
    # Linear Kalker creep at 5 m/s under 10 kN per axle box: the longitudinal slip
    # (wheelset braked, axle spun up) decays with tau = V / sum f11 (1/m + r^2/J_y)
    # ~ 0.34 ms, and RK4 is stable only for h < 2.785 tau ~ 0.94 ms: with the 1 ms
    # step the slip grows by a factor ~1.7 per step (measured) until the step is
    # discarded, and the message says why. A quarter of the step integrates the
    # same case.
    # (the prescribed rigid track: the lumped rail bodies' own fast modes are the
    # next test's)
    inputs = WheelsetInputs(axle_box_force=np.array([[0.0, 0.0, -1.0e4], [0.0, 0.0, -1.0e4]]))
    model = free_wheelset(integrator="rk4", track_model="prescribed")
    model.initialize(inputs)
    tau = model.creep_time_constant()
    r0, p = 0.46, model.params
    without_spin = tau * (1.0 / p.mass + r0 ** 2 / p.inertia_spin) * p.mass    # m V / sum f11
    assert 2.785 * tau < 1e-3 < 2.785 * without_spin   # unstable only with the spin coupling
    # by default the model holds its step to half the limit (stable_internal_step) ...
    assert model.internal_step == pytest.approx(0.5 * 2.785 * tau)
    auto = [model.advance(0.002, inputs) for _ in range(60)]
    assert all(r.status == "ok" for r in auto)
    # ... forced to the 1 ms step the run fails, and the message says why
    model = free_wheelset(integrator="rk4", track_model="prescribed")
    model.initialize(inputs)
    model.internal_step = 1e-3
    results = [model.advance(0.002, inputs) for _ in range(60)]
    bad = [r for r in results if r.status != "ok"]
    assert bad, "the 1 ms RK4 step should be unstable here"
    assert "stability limit" in bad[0].message and "reduce the internal step" in bad[0].message
    fine = free_wheelset(integrator="rk4", internal_step=2.5e-4)
    fine.initialize(inputs)
    for _ in range(60):
        r = fine.advance(0.002, inputs)
        assert r.status == "ok", r.message
    assert abs(fine.state[S_VX]) < 1e-3        # no runaway: creep holds the wheelset


def test_rhs_without_the_contact_rows_gives_the_same_derivative():
    # The integrators' stages call the RHS with record=False (solver/dynamics/rhs.py):
    # only the contact rows, which no stage reads, may be left out. At a Ren &
    # Jin state with several loaded points per wheel (1 s into the run, on the
    # straight: the worn hollow's two tread points on each wheel) the derivative
    # and the summary must be the same bits as with the rows filled, and the
    # rows must be left as they were -- for the full search and the update.
    from solver.layout import C_ACTIVE
    from solver.dynamics.rhs import StepInputs, TrackPoint, wheelset_rhs
    from solver.scenarios import load_scenario
    model = WheelsetModel(load_scenario("ren-jin-r400-100").params)
    model.initialize()
    for _ in range(100):
        assert model.advance(0.01).status == "ok"
    zero = np.zeros((2, 3))
    inputs = StepInputs(zero, zero, zero, zero, 0.0)
    track = TrackPoint(0.0, 0.0, 0.0)
    results = model.step_contact.results
    for update_only in (False, True):
        state = model.state.copy()
        state[S_Y] += 2e-6          # off the last search's pose: the points move
        wheelset_rhs(state, track, model.model, inputs, model.step_contact, model.arrays.deriv,
                     update_only, False, True)
        with_rows = (model.arrays.deriv.copy(), results.summary.copy(), results.contact.copy())
        assert (with_rows[2][:, :, C_ACTIVE] > 0.5).sum() == 4          # two active points per wheel
        results.contact[:] = -7.0
        wheelset_rhs(state, track, model.model, inputs, model.step_contact, model.arrays.deriv,
                     update_only, False, False)
        assert np.array_equal(model.arrays.deriv, with_rows[0])
        assert np.array_equal(results.summary, with_rows[1])
        assert np.all(results.contact == -7.0)


def test_full_search_rhs_is_called_with_a_plain_bool_record():
    """In the solver's numba code every call of the integrators' full_rhs passes `record`
    as bool(...), never as a bare True / False: numba would compile full_rhs and
    the RHS it inlines (the whole contact model, 3-4 s a compile) once more per
    constant (docs/CONVENTIONS.md: three versions of wheelset_rhs, not six)."""
    import ast
    import os
    from pathlib import Path
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    calls, constants = 0, []
    for path in sorted(Path(root, "solver").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "full_rhs"):
                calls += 1
                record = node.args[7] if len(node.args) > 7 else None
                if not (isinstance(record, ast.Call) and ast.unparse(record.func) == "bool"):
                    constants.append(f"{name}:{node.lineno}")
    assert calls >= 8, calls          # RK4 (2), semi-implicit (2), the pairs (2), Rosenbrock (2)
    assert not constants, f"full_rhs without a bool(...) record at {constants}"


def test_rail_body_modes_hold_the_explicit_step_and_name_the_cause():
    """The lumped rail bodies are the fastest part of the loaded wheelset: their
    lateral and roll motion enters the wheel's lateral creepage, so the creep
    damping f22 / V of the wheel ties them down with a rate of about 5.5e4 1/s
    (an overdamped real eigenvalue; 35 kg and 0.46 kg m^2 with their coupling,
    at 30 m/s), and they ring on the Hertz springs at about 5200 rad/s. RK4 is
    stable only for steps below 2.785 / 5.5e4 s = 50 us, so the model holds its
    internal step to half of that (stable_internal_step); forced to 1 ms the
    run is discarded with the fastest mode named."""
    inputs = WheelsetInputs(axle_box_force=np.array([[0.0, 0.0, -6.2e4], [0.0, 0.0, -6.2e4]]))
    model = WheelsetModel(WheelsetParameters(integrator="rk4", speed=30.0))
    model.initialize(inputs)
    fastest = model.fastest_mode_rate()
    assert 3e4 < fastest < 1e5
    assert model.internal_step == pytest.approx(0.5 * 2.785 / fastest, rel=1e-9)
    assert all(model.advance(0.002, inputs).status == "ok" for _ in range(20))
    model = WheelsetModel(WheelsetParameters(integrator="rk4", speed=30.0, initial_lateral=1e-3))
    model.initialize(inputs)
    model.internal_step = 1e-3
    results = [model.advance(0.002, inputs) for _ in range(100)]
    bad = [r for r in results if r.status != "ok"]
    assert bad, "the 1 ms RK4 step should be unstable on the rail bodies"
    assert "fastest mode" in bad[0].message and "reduce the internal step" in bad[0].message


def test_geometry_share_benchmark_doubles_the_rhs_geometry_block(tmp_path):
    """benchmarks/bench_geometry_share.py measures the contact geometry's share of
    a whole RK4 run by running a copy of solver/ whose wheelset_rhs does its
    geometry twice (the bound for a free table). This checks that the
    copy it writes parses and calls every geometry kernel of the RHS exactly
    twice as often, so the benchmark cannot silently measure an unpatched copy."""
    import ast
    import os

    from benchmarks import bench_geometry_share as bench
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "solver", "dynamics", "rhs.py"), encoding="utf-8") as f:
        original = f.read()
    first, last = bench.geometry_block_lines(original)
    assert 0 < first < last
    bench._copy_with_geometry_twice(tmp_path)
    patched = (tmp_path / "solver" / "dynamics" / "rhs.py").read_text(encoding="utf-8")
    ast.parse(patched)
    for call in bench.GEOMETRY_CALLS:
        assert original.count(call) >= 1, call
        assert patched.count(call) == 2 * original.count(call), call
    assert patched.count(bench.NEVER_TRUE_GUARD) == 1
    assert len(patched.splitlines()) == len(original.splitlines()) + last - first + 1
