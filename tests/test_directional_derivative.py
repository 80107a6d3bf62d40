"""fmi2GetDirectionalDerivative of the native front end (FMI 2.0 section 2.1.9)
and the cheap in-memory FMU state, through FMPy and the session's FMU."""
import math

import numpy as np
import pytest

from conftest import FmiLog

H = 1e-3
SIDES = ("left", "right")
RAIL = ("lateral_displacement", "vertical_displacement", "roll_angle", "lateral_velocity",
        "vertical_velocity")


def _slave(md, unzipped, name, log=None):
    from fmpy.fmi2 import FMU2Slave
    s = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier="Wheelset",
                  instanceName=name)
    if log is not None:
        log.point_proxy_here()
        s.instantiate(loggingOn=True, callbacks=log.callbacks)
    else:
        s.instantiate()
    return s


def _started(md, unzipped, name, steps=20, log=None):
    s = _slave(md, unzipped, name, log)
    s.setupExperiment(startTime=0.0)
    s.enterInitializationMode()
    s.exitInitializationMode()
    for k in range(steps):
        s.doStep(currentCommunicationPoint=k * H, communicationStepSize=H)
    return s


def _close(s):
    s.terminate()
    s.freeInstance()


@pytest.fixture(scope="module")
def by(md):
    return {v.name: v.valueReference for v in md.modelVariables}


def test_vertical_contact_stiffness_is_hertz(md, wheelset_fmu_unzipped, by):
    """dQ/d(rail vertical displacement) at the static load is the tangent of the
    contact law: each point's Hertz stiffness K (the SciPy reference of
    solver/contact/normal/, from the curvatures at the point), the load shared along
    the saddles of the wheel's distance function (merged_patch_forces, the
    recursive reference), differentiated for a rail raised uniformly (every
    depth and saddle depth of the vertical gap grows alike) and projected on the
    vertical; each point's lateral curvature the patch's (patch_curvature). The points are those of the core run in this process through the
    same bridge (native_bridge.Instance, the same steps): an independent
    evaluation of the law, not of the FMU's difference."""
    from fmu_wheelset.fmu import native_bridge
    from solver import layout
    from solver.contact.normal.hertz import hertz_stiffness
    from solver.contact.normal.load_sharing import merged_patch_forces
    from solver.contact.normal.patch_curvature import patch_geometry
    s = _started(md, wheelset_fmu_unzipped, "hertz")
    try:
        q = by["wheel.left.force_on_rail.z"]
        dq = s.getDirectionalDerivative([q], [by["rail.left.vertical_displacement"]], [1.0])[0]
        fz = s.getReal([q])[0]
    finally:
        _close(s)
    core = native_bridge.create("core", None)
    core.exit_initialization_mode()
    for k in range(20):
        core.do_step(k * H, H)
    model = core.fmu.model
    params = model.params
    contact, points = model.arrays.contact[0], model.arrays.search.points[0]
    assert fz == pytest.approx(core.values[q], rel=1e-12)      # the same state
    active = [p for p in range(contact.shape[0]) if contact[p, layout.C_ACTIVE] > 0]
    order = sorted(active, key=lambda p: points[p, layout.P_S_WHEEL])
    tables = model.setup.tables
    wheel_grid = (tables.params[layout.G_WHEEL_S0], tables.params[layout.G_WHEEL_DS])
    rail_grid = (tables.params[layout.G_RAIL_U0], tables.params[layout.G_RAIL_DU])
    depth, curvature, cosine, where = [], [], [], []
    for p in order:
        row = points[p]
        rail_q = 1.0 + row[layout.P_RAIL_SLOPE] ** 2
        wheel_q = 1.0 + row[layout.P_WHEEL_SLOPE] ** 2
        curvature.append((0.5 / (math.sqrt(wheel_q) * row[layout.P_RADIUS]), rail_q))
        where.append((row[layout.P_S_WHEEL], row[layout.P_U_RAIL]))
        depth.append(-row[layout.P_GAP])
        cosine.append(math.cos(contact[p, layout.C_ANGLE]))
    saddle = [-points[p, layout.P_SADDLE] for p in order[:-1]]

    def stiffness(depths):
        """Each point's Hertz stiffness along the vertical: its lateral curvature
        the patch's (patch_geometry: the profiles' secant over the patch's width
        at the point's own normal penetration), so it changes with the depth."""
        out = []
        for d, (A, rail_q), (s_wheel, u_rail) in zip(depths, curvature, where):
            B, _, _ = patch_geometry(tables.wheel, tables.rail, wheel_grid, rail_grid, s_wheel,
                                     u_rail, d / math.sqrt(rail_q), A, params.young, params.poisson)
            out.append(hertz_stiffness(A, B, params.young, params.poisson) / rail_q ** 0.75)
        return out

    def vertical(rise):
        depths = np.array(depth) + rise
        forces, _ = merged_patch_forces(depths, np.array(saddle) + rise, stiffness(depths))
        return forces

    # the law's forces are the core's (its inputs read right)
    # (the elastic share: the contact damping, Hunt & Crossley's, acts on the rate)
    np.testing.assert_allclose(vertical(0.0), contact[order, layout.C_ELASTIC_NORMAL], rtol=1e-9)
    h = 1e-9
    law = -np.dot((vertical(h) - vertical(-h)) / (2.0 * h), cosine)
    # 0.5 %: the lateral creep force's share of the vertical (T2 sin(angle), its
    # change with N through the creep coefficients) is neglected here, ~|T2/N| *
    # angle < 1e-3 on straight track; the FMU's central difference's own error
    # is (h/delta)^2/24 ~ 2e-4 (h = 1 um; the default load, 8.9 kN: delta = 16 um).
    print(f"{len(order)} points, dQ/dz {dq:.6g} N/m, the law {law:.6g} N/m ({dq / law - 1:+.2e})")
    assert dq == pytest.approx(law, rel=5e-3), (dq, law, dq / law - 1)


def test_derivative_is_the_feedthrough_difference_and_zero_elsewhere(md, wheelset_fmu_unzipped, by):
    """Against an independent difference through fmi2SetReal/fmi2GetReal (the
    feedthrough outputs the host reads after changing an input): equal within
    the central difference's truncation error; outputs with no direct
    dependency (ModelStructure) are exactly 0."""
    s = _started(md, wheelset_fmu_unzipped, "feedthrough")
    try:
        outs = [by[f"wheel.{side}.force_on_rail.{ax}"] for side in SIDES for ax in "yz"]
        outs += [by["wheelset.z"], by["wheelset.y"]]
        known = [by[f"rail.left.{n}"] for n in RAIL]
        base = s.getReal(outs)
        for j, vr in enumerate(known):
            seed = [0.0] * len(known)
            seed[j] = 1.0
            dz = s.getDirectionalDerivative(outs, known, seed)
            step = 1e-6 if j < 3 else 1e-4
            s.setReal([vr], [step])
            plus = s.getReal(outs)
            s.setReal([vr], [-step])
            minus = s.getReal(outs)
            s.setReal([vr], [0.0])
            assert s.getReal(outs) == base               # input back: the same outputs
            fd = [(a - b) / (2 * step) for a, b in zip(plus, minus)]
            # same formula, same step: equal to rounding (1e-6 of the largest entry)
            scale = max(abs(x) for x in fd)
            assert np.allclose(dz, fd, rtol=0, atol=1e-6 * scale), (j, dz, fd)
            assert dz[2:] == [0.0, 0.0, 0.0, 0.0]         # right wheel, wheelset state
    finally:
        _close(s)


def test_derivative_leaves_the_run_bit_exact(md, wheelset_fmu_unzipped, by):
    """A run with directional derivatives between its steps is the same bit for
    bit as one without (the evaluation puts back every array it writes); the
    in-memory state restores it bit for bit too."""
    read = [v.valueReference for v in md.modelVariables
            if v.causality == "output" and v.type == "Real"]
    outs = [by[f"wheel.{side}.force_on_rail.{ax}"] for side in SIDES for ax in "yz"]
    known = [by[f"rail.{side}.{n}"] for side in SIDES for n in RAIL]
    s = _started(md, wheelset_fmu_unzipped, "bitexact", steps=5)
    try:
        state = s.getFMUstate()
        for k in range(5, 25):
            s.doStep(currentCommunicationPoint=k * H, communicationStepSize=H)
        plain = s.getReal(read)
        s.setFMUstate(state)
        for k in range(5, 25):
            s.getDirectionalDerivative(outs, known, [1.0] * len(known))
            s.doStep(currentCommunicationPoint=k * H, communicationStepSize=H)
        probed = s.getReal(read)
        s.setFMUstate(state)
        for k in range(5, 25):
            s.doStep(currentCommunicationPoint=k * H, communicationStepSize=H)
        again = s.getReal(read)
        s.freeFMUstate(state)
    finally:
        _close(s)
    assert probed == plain
    assert again == plain


def test_directional_derivative_refusals(md, wheelset_fmu_unzipped, by):
    """Wrong value references, types, seeds and states: fmi2Error with the reason
    logged; nothing written."""
    from fmpy.fmi1 import FMICallException
    log = FmiLog()
    s = _slave(md, wheelset_fmu_unzipped, "refusals", log)
    q = by["wheel.left.force_on_rail.z"]
    z = by["rail.left.vertical_displacement"]
    try:
        s.setupExperiment(startTime=0.0)
        s.enterInitializationMode()
        n = len(log.messages)
        with pytest.raises(FMICallException):        # no model before initialization ends
            s.getDirectionalDerivative([q], [z], [1.0])
        assert any("fmi2ExitInitializationMode" in m[2] for m in log.since(n))
        s.exitInitializationMode()
        count = by["wheel.left.active_points"]        # an Integer output
        cases = [([z], [z], [1.0], "is not a Real output"),       # an input as unknown
                 ([q], [q], [1.0], "is not a Real input"),        # an output as known
                 ([count], [z], [1.0], "is not a Real output"),
                 ([q], [by["wheelset.mass"]], [1.0], "is not a Real input"),   # a parameter
                 ([q], [10 ** 6], [1.0], "is not a Real input"),
                 ([q], [z], [math.nan], "not finite")]
        for unknowns, knowns, seed, reason in cases:
            n = len(log.messages)
            with pytest.raises(FMICallException):
                s.getDirectionalDerivative(unknowns, knowns, seed)
            assert any(reason in m[2] and m[0] == 3 for m in log.since(n)), (reason, log.since(n))
        # a zero seed or no dependency: 0 without an evaluation
        assert s.getDirectionalDerivative([q, by["wheelset.z"]], [z], [0.0]) == [0.0, 0.0]
    finally:
        _close(s)


@pytest.mark.cosim      # the track master's probes (cosim/track/wheelset_fmu.py)
def test_probe_by_derivative_matches_the_probe_by_steps(wheelset_fmu):
    """The master's two contact-Jacobian probes (cosim/track/wheelset_fmu.py) at the
    same state: fmi2GetDirectionalDerivative (central, no step) and perturbed
    1 us doSteps from a saved state (forward differences, h = 1 um, 1e-4 m/s).
    The dominant vertical stiffness differs by the forward difference's
    truncation error, h f''/(2 f') = h / (4 delta) for Hertz (0.3 % at delta ~
    80 um): 0.6 % allowed; the damping (creep, linear range) 0.5 % of the
    largest entry of its side."""
    from cosim.track.parameters import UIC60
    from cosim.track.wheelset_fmu import WheelsetFMU
    params = {"track.model": 0,         # the master's rails are the track model's (cosim/track/master.py)
              "suspension.builtin": True, "suspension.suspended_mass": 2 * 1e5 / 9.81 - 1813.0,
              "suspension.stiffness.z": 0.0, "wheelset.speed": 100.0 / 3.6}
    f = WheelsetFMU(wheelset_fmu, params)
    try:
        rail = np.zeros(12)
        for k in range(20):
            f.set_rail(rail)
            f.do_step(k * H, H)
        d = UIC60.crown_above_centroid
        f.set_rail(rail)
        k_new, d_new = f.probe_derivative(d)
        k_old, d_old = f.probe(20 * H, rail, 1e-6, d)
    finally:
        f.close()
    kzz = k_new[:, 1, 1]
    assert np.all(kzz < -1e9)
    assert np.allclose(k_old[:, 1, 1], kzz, rtol=6e-3, atol=0)
    for s in range(2):
        assert np.abs(d_old[s] - d_new[s]).max() < 5e-3 * np.abs(d_new[s]).max()
        # the whole stiffness matrix: within 1 % of its largest (vertical) entry
        assert np.abs(k_old[s] - k_new[s]).max() < 1e-2 * np.abs(k_new[s]).max()
