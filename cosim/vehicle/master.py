"""The co-simulation master of the vehicle (VehicleCosim): it integrates the
bodies and the suspensions (cosim.vehicle.bodies) and exchanges, at every
communication step h, the axle-box forces (to the four wheelset FMUs,
cosim.vehicle.fmu_wheelsets) and the axle-box kinematics (from them).

Coupling analysis and the scheme used
-------------------------------------
The stiff elements are the primary longitudinal springs, kx = 31.4 MN/m per
box (Iwnicki 1998). The mode of the bogie frame (2615 kg) against its two
wheelsets (rolling mass m + J_y/r0^2 = 2342 kg each) on 4 kx has
omega^2 = 4 kx (1/m_frame + 1/(2 m_rolling)), omega = 259 rad/s (41 Hz), and
damping ratio zeta = 4 cx / (2 m_reduced omega) = 0.069 (cx = 15 kN s/m per
box). With the plain explicit (Jacobi) coupling the FMU holds the force of the
start of the step: a delay of h/2 in the spring force, which acts as a
negative damping d zeta = -omega h / 4 (x'' + omega^2 x(t - tau): the delayed
stiffness adds -omega^2 tau x', d zeta = -omega tau / 2 with tau = h/2). At
h = 1 ms d zeta = -0.065, nearly all of the physical 0.069: the mode is just
stable and the result depends on h (measured: `coupling="explicit"`, see
tests/test_vehicle.py and docs/vehicle.md). The bogie yaw mode against the wheelsets (4 kx b^2 + 4 ky l^2
on 3067 kg.m^2, omega = 222 rad/s) behaves alike; the lateral (4 ky on the
frame, 77 rad/s) and vertical (43 rad/s) modes lose less (-0.019, -0.011).

So the master uses a linearly implicit coupling with an interface model of
each wheelset (`coupling="interface"`, the default): over each step the
master integrates its bodies TOGETHER with a rigid-body model of each wheelset
(mass m + J_y/r0^2 in x, m in y and z, J_x in roll, J_z in yaw) carrying the
forces the FMU's wheelset received besides the suspension over the previous
step (contact, gravity, inertial: G = M (v_n - v_(n-1)) / h - F_(n-1), from the
FMU's own box velocities), with the trapezoidal rule (Newmark average
acceleration: A-stable, no numerical damping). The FMU then receives the
trapezoidal mean (F_n + F_(n+1))/2 of the suspension forces of that solution,
the same impulse the bogie frame receives (momentum is exchanged exactly), and
at the end of the step the interface models are reset to the FMU's box
kinematics. The coupling error is then only the difference between the FMU's
response and the interface model's over one step (the change of the contact
forces within the step, small against the suspension forces for the modes
above: the slip time constant of the creep forces, 0.2-0.8 ms, is shorter than
h, so within a step the wheelset rolls like the rolling mass of the model),
and the scheme needs one doStep per FMU per communication step, no rollback
(fmi2GetFMUstate) and no directional derivatives (the FMU provides them now,
fmi2GetDirectionalDerivative, but only for the direct feedthrough of the rail
inputs to the contact outputs; the axle-box forces act through the step): it
works with every FMI 2.0 co-simulation host.
"""
from __future__ import annotations

import math
import time as _time
from typing import NamedTuple

import numpy as np
from numba import njit

from .bodies import BOGIES, CARBODY, N_DOF, WHEELSETS, VehicleModel
from .curve_layout import CurveLayout
from .fmu_wheelsets import (INPUT_NAMES, KINEMATICS_NAMES, POSITION_COLUMNS, RECORD_NAMES,
                            FmuWheelset, extracted)
from .parameters import GRAVITY, VehicleError, VehicleParameters
from .results import VehicleResult, wheel_results


# (x, y, z, roll, yaw) of a wheelset = KINEMATICS_POSITION @ (left xyz, right xyz) positions
def _coordinate_map(semi_spacing):
    b2 = 2.0 * semi_spacing
    m = np.zeros((6, 5))
    m[0, 0] = m[3, 0] = 0.5
    m[1, 1] = m[4, 1] = 0.5
    m[2, 2] = m[5, 2] = 0.5
    m[2, 3], m[5, 3] = 1.0 / b2, -1.0 / b2
    m[0, 4], m[3, 4] = -1.0 / b2, 1.0 / b2
    return m


def _force_map(semi_spacing):
    """(6, 5): generalised force (x y z roll yaw) = box forces (left xyz, right xyz) @ map."""
    b = semi_spacing
    m = np.zeros((6, 5))
    for side, sign in ((0, 1.0), (1, -1.0)):
        m[3 * side + 0, 0] = m[3 * side + 1, 1] = m[3 * side + 2, 2] = 1.0
        m[3 * side + 2, 3] = sign * b
        m[3 * side + 0, 4] = -sign * b
    return m


def wheelset_coordinates(kinematics: np.ndarray, semi_spacing: float):
    """(x, y, z, roll, yaw) and their rates from the axle-box kinematics
    (KINEMATICS_NAMES order: left position xyz, left velocity xyz, right ...)."""
    k = kinematics
    pl, vl, pr, vr = k[0:3], k[3:6], k[6:9], k[9:12]
    b2 = 2.0 * semi_spacing
    q = np.array([0.5 * (pl[0] + pr[0]), 0.5 * (pl[1] + pr[1]), 0.5 * (pl[2] + pr[2]),
                  (pl[2] - pr[2]) / b2, (pr[0] - pl[0]) / b2])
    v = np.array([0.5 * (vl[0] + vr[0]), 0.5 * (vl[1] + vr[1]), 0.5 * (vl[2] + vr[2]),
                  (vl[2] - vr[2]) / b2, (vr[0] - vl[0]) / b2])
    return q, v


def generalised_box_force(box_force: np.ndarray, semi_spacing: float) -> np.ndarray:
    """The generalised force (x, y, z, roll, yaw) on a wheelset of the forces
    (left xyz, right xyz) at its axle boxes (at y = +-b on the axle line)."""
    fl, fr = box_force[0:3], box_force[3:6]
    b = semi_spacing
    return np.array([fl[0] + fr[0], fl[1] + fr[1], fl[2] + fr[2],
                     b * (fl[2] - fr[2]), -b * (fl[0] - fr[0])])


class BodySystem(NamedTuple):
    """The master's linear system: the bodies and the wheelsets' interface models."""

    mass: np.ndarray      # (N_DOF,) the diagonal mass matrix
    K: np.ndarray         # (N_DOF, N_DOF) stiffness
    C: np.ndarray         # (N_DOF, N_DOF) damping
    S_inv: np.ndarray     # (M + h/2 C + h^2/4 K)^-1 of the trapezoidal rule


class PrimaryForces(NamedTuple):
    """The primary suspension force on the axle boxes: pre_p - kp (Dp q + g) - cp (Dp v + g')."""

    Dp: np.ndarray        # (24, N_DOF) the boxes' relative displacements of the DOFs
    kp: np.ndarray        # (24,) stiffnesses
    cp: np.ndarray        # (24,) dampings
    pre_p: np.ndarray     # (24,) preloads


class WheelsetLink(NamedTuple):
    """How the FMUs' wheelsets enter the master's DOFs 18..37."""

    kin: np.ndarray        # (4, 12) the FMUs' axle-box kinematics at t_n
    pos_map: np.ndarray    # (6, 5) box positions -> wheelset DOFs
    reference: np.ndarray  # (4, 5) the wheelsets' reference positions
    v_prev: np.ndarray     # (4, 5) their velocities at the last step (updated)
    applied: np.ndarray    # (4, 5) the generalised box forces applied then


class StepLoads(NamedTuple):
    """The loads at the two ends of a step: external forces, track offsets and rates."""

    f0: np.ndarray
    f1: np.ndarray
    g0: np.ndarray
    g1: np.ndarray
    gr0: np.ndarray
    gr1: np.ndarray


@njit(cache=True)
def coupling_step(h, explicit, update_other, link, system, primary, loads, state, out):
    """One step of the master (numba; see the module docstring).

    Puts the FMUs' wheelsets at t_n (link: a WheelsetLink) into q, v (DOFs
    18..37 of state = (q, v, other)), updates the interface models' other forces
    G (from the velocity change over the last step and the box forces applied
    then), integrates bodies and interface models over h with the trapezoidal
    rule (system: a BodySystem) into out = (q1, v1, box) and writes the axle-box
    forces for the FMUs into box (4, 6): the trapezoidal mean of the primary
    suspension forces (a PrimaryForces) on the wheelsets (explicit: the forces
    at t_n); loads: the StepLoads."""
    kin, pos_map, reference, v_prev, applied = link
    mass, K, C, S_inv = system
    Dp, kp, cp, pre_p = primary
    f0, f1, g0, g1, gr0, gr1 = loads
    q, v, other = state
    q1, v1, box = out
    n_w = kin.shape[0]
    for j in range(n_w):
        for d in range(5):
            pos = 0.0
            vel = 0.0
            for c in range(6):
                col = c if c < 3 else c + 3          # left xyz (0-2), right xyz (6-8)
                pos += kin[j, col] * pos_map[c, d]
                vel += kin[j, col + 3] * pos_map[c, d]
            k = 18 + 5 * j + d
            q[k] = pos - reference[j, d]
            v[k] = vel
            if update_other:
                other[k] = mass[k] * (vel - v_prev[j, d]) / h - applied[j, d]
            v_prev[j, d] = vel
    a0 = (f0 + other - K @ q - C @ v) / mass
    hh = 0.25 * h * h
    q_pred = q + h * v + hh * a0
    v_pred = v + 0.5 * h * a0
    a1 = S_inv @ (f1 + other - K @ q_pred - C @ v_pred)
    q1[:] = q_pred + hh * a1
    v1[:] = v_pred + 0.5 * h * a1
    force0 = pre_p - kp * (Dp @ q + g0) - cp * (Dp @ v + gr0)
    if explicit:
        on_box = -force0
    else:
        force1 = pre_p - kp * (Dp @ q1 + g1) - cp * (Dp @ v1 + gr1)
        on_box = -0.5 * (force0 + force1)
    for j in range(n_w):
        for c in range(6):
            box[j, c] = on_box[6 * j + c]


class VehicleCosim:
    """Co-simulation of the Manchester benchmark vehicle 1 over four wheelset FMUs.

    fmu: path of Wheelset.fmu. speed (m/s), layout (CurveLayout), step: the
    communication step (s). coupling: "interface" (linearly implicit with the
    wheelsets' interface models, default) or "explicit" (the FMUs hold the
    suspension forces of the start of the step; for comparison).
    fmu_parameters: more FMU parameters for every instance (e.g.
    {"wheel.profile": "S1002", "contact.creep_model": 2}).
    perturbation: (wheelset index, lateral force N, duration s), a lateral
    force on that wheelset from t = 0 (both boxes, half each).
    """

    def __init__(self, fmu, vehicle: VehicleParameters | None = None, speed: float = 30.0,
                 layout: CurveLayout | None = None, step: float = 1e-3,
                 coupling: str = "interface", fmu_parameters: dict | None = None,
                 record_every: int = 10, perturbation: tuple | None = None):
        from fmpy import read_model_description
        self.p = p = vehicle or VehicleParameters()
        self.model = VehicleModel(p)
        self.layout = layout or CurveLayout()
        if not (isinstance(speed, (int, float)) and 0.0 < speed <= 150.0):
            raise VehicleError(f"speed must be in (0, 150] m/s, got {speed!r}")
        if not (isinstance(step, (int, float)) and 0.0 < step <= 0.01):
            raise VehicleError(f"communication step must be in (0, 0.01] s, got {step!r}")
        if coupling not in ("interface", "explicit"):
            raise VehicleError(f"coupling must be 'interface' or 'explicit', got {coupling!r}")
        if not (isinstance(record_every, int) and record_every >= 1):
            raise VehicleError("record_every must be an integer >= 1")
        self.speed, self.step, self.coupling = float(speed), float(step), coupling
        self.record_every = record_every
        self.perturbation = perturbation
        self._tmp = extracted(fmu)
        self.description = read_model_description(self._tmp)
        jx, jy, jz = p.wheelset_inertia
        params = {"wheelset.speed": self.speed, "wheelset.mass": p.wheelset_mass,
                  "wheelset.inertia.x": jx, "wheelset.inertia.y": jy, "wheelset.inertia.z": jz,
                  "wheel.nominal_rolling_radius": p.wheel_radius,
                  "wheelset.axle_box_semi_spacing": p.primary_semi_spacing,
                  "suspension.builtin": False, "track.scenario": "straight",
                  "track.curvature_from_input": True, "track.cant_from_input": True}
        params.update(fmu_parameters or {})
        self.leading_offset = p.bogie_semi_spacing + p.semi_wheelbase
        prim_load = (p.carbody_mass / 2 + p.bogie_mass) * GRAVITY / 4
        self.static_box_force = np.array([0.0, 0.0, -prim_load] * 2)
        # the values exchanged every step, one row per wheelset (INPUT_NAMES,
        # KINEMATICS_NAMES order); the FMU instances read and write these rows
        self.inputs = np.zeros((4, len(INPUT_NAMES)))
        self.kinematics = np.zeros((4, len(KINEMATICS_NAMES)))
        self.recorded = np.zeros((4, len(RECORD_NAMES)))
        self.instances = []
        try:
            for j in range(4):
                s_w = self.model.wheelset_positions[j] - self.leading_offset
                self.inputs[j, 0:6] = self.static_box_force
                self.inputs[j, 6] = float(self.layout.curvature(s_w))
                self.inputs[j, 7] = float(self.layout.cant_angle(s_w))
                self.instances.append(FmuWheelset(self._tmp, self.description, f"wheelset{j + 1}",
                                                  params, self.inputs[j], self.kinematics[j],
                                                  self.recorded[j]))
        except Exception:
            self.close()
            raise
        self._position_map = _coordinate_map(p.primary_semi_spacing)
        self._force_map = _force_map(p.primary_semi_spacing)
        # reference: the FMUs' static equilibrium = zero displacement of the interface models
        self.reference = self.kinematics[:, POSITION_COLUMNS] @ self._position_map
        self.time = 0.0

    def close(self):
        for w in self.instances:
            try:
                w.close()
            except Exception:  # noqa: BLE001 - closing after a failure
                pass
        self.instances = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- the forcing of the whole run, computed before it starts -----------------
    def _forcing(self, n_steps: int):
        m, p, V, h = self.model, self.p, self.speed, self.step
        t = np.arange(n_steps + 1) * h
        s_centre = V * t - self.leading_offset
        g = m.track_terms(self.layout, s_centre)
        g_rate = np.gradient(g, h, axis=0) if n_steps > 1 else np.zeros_like(g)
        f = np.tile(m.static_force, (n_steps + 1, 1))
        f -= (m.k * g + m.c * g_rate) @ m.D + g @ m.shear_couple.T
        for body in (CARBODY,) + BOGIES:
            s = s_centre + m.body_positions[body]
            kap = self.layout.curvature(s)
            cant = self.layout.cant_angle(s)
            mass = m.mass[body]
            f[:, body + 1] += -mass * (V * V * kap * np.cos(cant) + GRAVITY * np.sin(cant))
            f[:, body + 2] += -mass * (GRAVITY * np.cos(cant) - V * V * kap * np.sin(cant))
            f[:, body + 5] += -m.mass[body + 5] * V * V * self.layout.curvature_slope(s)
        s_w = s_centre[:, None] + m.wheelset_positions[None, :]
        return g, g_rate, f, self.layout.curvature(s_w), self.layout.cant_angle(s_w)

    def run(self, duration: float, average_from: float | None = None,
            progress=None) -> VehicleResult:
        """Advance the coupled vehicle by `duration` seconds from t = 0.

        average_from (s): also average the wheel results over every
        communication point from that time to the end (`VehicleResult.mean`;
        quasi-static values in a curve: the mean of the wheel-rail forces over a
        window equals the steady force up to (momentum change)/(window), while
        samples every `record_every` steps would alias the fast contact
        oscillations)."""
        if self.time != 0.0:
            raise VehicleError("run() once per VehicleCosim (the FMUs are not reset)")
        n_steps = int(round(duration / self.step))
        if n_steps < 1:
            raise VehicleError(f"duration {duration!r} s is shorter than one step")
        m, p, h = self.model, self.p, self.step
        g, g_rate, f_ext, kap_w, cant_w = self._forcing(n_steps)
        mass = m.mass.copy()
        explicit = self.coupling == "explicit"
        if explicit:   # the wheelsets move on at constant velocity within the master's step
            for w in WHEELSETS:
                mass[w:w + 5] *= 1e9
        S_inv = np.linalg.inv(np.diag(mass) + 0.5 * h * m.C + 0.25 * h * h * m.K)
        K, C, D, k_el, c_el = m.K, m.C, m.D, m.k, m.c
        rows = m.primary_rows
        Dp, kp, cp, pre_p = D[rows], k_el[rows], c_el[rows], m.preload[rows]
        q = np.zeros(N_DOF)
        v = np.zeros(N_DOF)
        other = np.zeros(N_DOF)          # G on the wheelset DOFs (contact, gravity, ...)
        for w in WHEELSETS:
            other[w:w + 5] = -m.static_force[w:w + 5]
        pert_j, pert_f, pert_t = self.perturbation or (0, 0.0, 0.0)
        n_rec = n_steps // self.record_every + 1
        rec = {k: np.zeros(s) for k, s in (
            ("time", n_rec), ("lateral", (n_rec, 4)), ("yaw", (n_rec, 4)),
            ("wheel_load", (n_rec, 4, 2)), ("lateral_force", (n_rec, 4, 2)),
            ("derailment_quotient", (n_rec, 4, 2)), ("force_on_rail_y", (n_rec, 4, 2)),
            ("wear_number", (n_rec, 4, 2)), ("bodies", (n_rec, 18)),
            ("box_force", (n_rec, 4, 6)), ("curvature", (n_rec, 4)), ("cant_angle", (n_rec, 4)))}
        box = np.zeros((4, 6))
        box_prev = np.tile(self.static_box_force, (4, 1))   # the last box forces sent
        i_rec = 0
        pos_map, force_map, ref = self._position_map, self._force_map, self.reference
        kin, inputs = self.kinematics, self.inputs
        v_prev = np.zeros((4, 5))
        applied = np.tile(self.static_box_force, (4, 1)) @ force_map
        q1 = np.zeros(N_DOF)
        v1 = np.zeros(N_DOF)
        g_p = np.ascontiguousarray(g[:, rows])
        gr_p = np.ascontiguousarray(g_rate[:, rows])
        Dp = np.ascontiguousarray(Dp)
        average = average_from is not None
        first_averaged = int(math.ceil(average_from / h - 1e-9)) if average else n_steps + 1
        if average and not 0 <= first_averaged <= n_steps:
            raise VehicleError(f"average_from {average_from!r} s is not within the run")
        sums = {key: np.zeros_like(value) for key, value in wheel_results(self.recorded).items()}
        sums["bodies"] = np.zeros(18)
        sums["secondary_track_terms"] = np.zeros(12)
        n_averaged = 0
        box_impulse = np.zeros(4)
        inertial_impulse = np.zeros(4)
        v_start = np.zeros(4)
        # lateral inertial load of each wheelset in its track frame (N, + = towards -y)
        inertial_w = p.wheelset_mass * (self.speed ** 2 * kap_w * np.cos(cant_w)
                                         + GRAVITY * np.sin(cant_w))
        system = BodySystem(mass, K, C, S_inv)
        primary = PrimaryForces(Dp, kp, cp, pre_p)
        wall0 = _time.perf_counter()
        for n in range(n_steps + 1):
            last = n == n_steps
            nx = n if last else n + 1
            # the FMUs' wheelsets at t_n replace the interface models; the
            # master's step over [t_n, t_n + h] (in q1, v1) and the box forces
            # (applied: the box forces of the last step, a new array each step)
            link = WheelsetLink(kin, pos_map, ref, v_prev, applied)
            coupling_step(h, explicit, n > 0 and not explicit, link, system, primary,
                          StepLoads(f_ext[n], f_ext[nx], g_p[n], g_p[nx], gr_p[n], gr_p[nx]),
                          (q, v, other), (q1, v1, box))
            if n % self.record_every == 0:
                self._record(rec, i_rec, n * h, q, box_prev, kap_w[n], cant_w[n])
                i_rec += 1
            elif average and n >= first_averaged:
                for inst in self.instances:
                    inst.read_record()
            if average and n >= first_averaged:
                for key, value in wheel_results(self.recorded).items():
                    sums[key] += value
                sums["bodies"] += q[:18]
                sums["secondary_track_terms"] += g[n, :12]
                n_averaged += 1
            if average and n == first_averaged:
                v_start = q_v_lateral(v).copy()
            if last:
                break
            t = n * h
            inputs[:, 0:6] = box
            if t < pert_t:
                inputs[pert_j, 1] += 0.5 * pert_f
                inputs[pert_j, 4] += 0.5 * pert_f
            inputs[:, 6] = kap_w[n]
            inputs[:, 7] = cant_w[n]
            box_prev[:] = inputs[:, 0:6]
            applied = inputs[:, 0:6] @ force_map
            if average and n >= first_averaged:
                # impulses over the step: the box forces (held), the inertial load
                # of the wheelset's track frame (trapezoidal, as the FMU integrates it)
                box_impulse += h * applied[:, 1]
                inertial_impulse += 0.5 * h * (inertial_w[n] + inertial_w[n + 1])
            for inst in self.instances:
                inst.step(t, h)
                inst.read_kinematics()
            q, q1 = q1, q
            v, v1 = v1, v
            self.time = t + h
            if progress and n % 1000 == 0:
                progress(n, n_steps)
        wall = _time.perf_counter() - wall0
        self.final_state = (q.copy(), v.copy(), g[n_steps].copy(), g_rate[n_steps].copy())
        for key in rec:
            rec[key] = rec[key][:i_rec]
        mean = {key: value / n_averaged for key, value in sums.items()} if n_averaged else {}
        if n_averaged and n_steps > first_averaged:
            window = (n_steps - first_averaged) * h
            m_w = p.wheelset_mass
            # the time mean of the lateral contact forces of the rails on each wheelset
            # from its momentum: m dv = int (contact + box - inertial) dt
            mean["contact_force_y"] = (m_w * (q_v_lateral(v) - v_start) - box_impulse
                                       + inertial_impulse) / window
        return VehicleResult(distance=rec["time"] * self.speed, speed=self.speed, step=h,
                             coupling=self.coupling, wall_time=wall, steps=n_steps,
                             mean=mean, mean_window=(first_averaged * h, n_steps * h)
                             if n_averaged else None, **rec)

    def secondary_yaw_couple(self, result: VehicleResult) -> np.ndarray:
        """(2,) the part of each bogie's lateral rail force (N, +y) that holds the
        carbody against the yaw moment of the secondary springs' longitudinal
        forces, time mean over result.mean_window.

        In a curve both bogie frames yaw relative to the carbody; the secondary
        longitudinal springs (at +-secondary_semi_spacing) then put a yaw moment
        M on the carbody, which the carbody's yaw balance answers with a lateral
        force couple on its two secondary suspensions: -M / (2a) on the leading
        bogie, +M / (2a) on the trailing one (a: bogie semi-spacing). The
        textbook per-bogie balance m (V^2/R - g h/s) leaves this couple out; the
        whole vehicle's balance does not see it. M from the mean body positions
        and the track's part of the element displacements (the linear element
        model of VehicleModel; damping forces vanish in the steady state)."""
        if "bodies" not in result.mean:
            raise VehicleError("run(..., average_from=...) to average over a window")
        m = self.model
        q = np.zeros(N_DOF)
        q[:18] = result.mean["bodies"]
        delta = m.D[:12] @ q + result.mean["secondary_track_terms"]
        force = -m.k[:12] * delta                # on the carbody (body A of the secondary elements)
        moment = 0.0
        for e in range(4):
            moment += -m.elements[e].offset_a[1] * force[3 * e]
        half = moment / (2.0 * self.p.bogie_semi_spacing)
        return np.array([-half, half])

    def _record(self, rec, i, t, q, box, kap, cant):
        rec["time"][i] = t
        rec["bodies"][i] = q[:18]
        rec["box_force"][i] = box
        rec["curvature"][i] = kap
        rec["cant_angle"][i] = cant
        for inst in self.instances:
            inst.read_record()
        for key, value in wheel_results(self.recorded).items():
            rec[key][i] = value


def q_v_lateral(v: np.ndarray) -> np.ndarray:
    """The lateral velocities (4,) of the wheelsets in the master's velocity vector."""
    return v[WHEELSETS[0] + 1:N_DOF:5]
