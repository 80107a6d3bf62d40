"""The co-simulation master of the vehicle (VehicleCosim): it steps the
bodies and the suspensions (cosim.vehicle.body_step, the same step the
vehicle-bodies FMU runs) and exchanges, at every
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

That is the default, `coupling="interface"`: a Gauss-Seidel exchange (the
bodies first). `coupling="jacobi"` is the exchange of libcosim's and Ecos's
fixed-step algorithms (every FMU steps from the values of t_n): the bodies
then run one step ahead, predicting the wheelsets with the interface models
(cosim.vehicle.body_step, docs/vehicle.md).
"""
from __future__ import annotations

import math
import time as _time
import numpy as np

from . import body_step as bs
from .bodies import N_DOF, VehicleModel
from .curve_layout import CurveLayout
from .fmu_wheelsets import INPUT_NAMES, KINEMATICS_NAMES, RECORD_NAMES, FmuWheelset, extracted
from .parameters import GRAVITY, VehicleError, VehicleParameters
from .results import VehicleResult, wheel_results

# the master's coupling option -> the scheme of cosim.vehicle.body_step
COUPLINGS = {"interface": bs.GAUSS_SEIDEL, "jacobi": bs.JACOBI, "explicit": bs.EXPLICIT}


def wheelset_parameters(p: VehicleParameters, speed: float) -> dict:
    """The FMU parameters every wheelset under the vehicle gets: its mass,
    inertia, radius and box spacing from the vehicle, the speed, no built-in
    suspension, the track's curvature and cant from the inputs."""
    jx, jy, jz = p.wheelset_inertia
    return {"wheelset.speed": float(speed), "wheelset.mass": p.wheelset_mass,
            "wheelset.inertia.x": jx, "wheelset.inertia.y": jy, "wheelset.inertia.z": jz,
            "wheel.nominal_rolling_radius": p.wheel_radius,
            "wheelset.axle_box_semi_spacing": p.primary_semi_spacing,
            "suspension.builtin": False, "track.scenario": "straight",
            "track.curvature_from_input": True, "track.cant_from_input": True}


class VehicleCosim:
    """Co-simulation of the Manchester benchmark vehicle 1 over four wheelset FMUs.

    fmu: path of Wheelset.fmu. speed (m/s), layout (CurveLayout), step: the
    communication step (s). coupling: how the bodies (cosim.vehicle.body_step,
    the same step the vehicle-bodies FMU runs) and the FMUs exchange values:
    "interface" (default: the bodies step first, the FMUs then receive the
    forces of that step: Gauss-Seidel with the interface models), "jacobi"
    (all step from the values of t_n and exchange afterwards, as libcosim's
    and Ecos's fixed-step algorithms do: the bodies predict the wheelsets one
    step) or "explicit" (Gauss-Seidel, the FMUs hold the suspension forces of
    the start of the step; for comparison).
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
        if coupling not in COUPLINGS:
            raise VehicleError(f"coupling must be one of {', '.join(COUPLINGS)}, got {coupling!r}")
        if not (isinstance(record_every, int) and record_every >= 1):
            raise VehicleError("record_every must be an integer >= 1")
        self.speed, self.step, self.coupling = float(speed), float(step), coupling
        self.record_every = record_every
        self.perturbation = perturbation
        self.work = bs.set_up(self.model, self.layout, self.speed, self.step, COUPLINGS[coupling],
                              perturbation or (0, 0.0, 0.0))
        # the values exchanged with the bodies (body_step's io layout)
        self.io = np.zeros(bs.N_IO)
        self._tmp = extracted(fmu)
        self.description = read_model_description(self._tmp)
        params = wheelset_parameters(p, self.speed)
        params.update(fmu_parameters or {})
        self.leading_offset = p.bogie_semi_spacing + p.semi_wheelbase
        prim_load = (p.carbody_mass / 2 + p.bogie_mass) * GRAVITY / 4
        self.static_box_force = np.array([0.0, 0.0, -prim_load] * 2)
        # the values exchanged every step, one row per wheelset (INPUT_NAMES,
        # KINEMATICS_NAMES order); the FMU instances read and write these rows
        self.inputs = np.zeros((4, len(INPUT_NAMES)))
        self.kinematics = self.io[bs.IO_KINEMATICS:bs.IO_BOX_FORCE].reshape(4, len(KINEMATICS_NAMES))
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
        work, io = self.work, self.io
        jacobi = self.coupling == "jacobi"
        n_rec = n_steps // self.record_every + 1
        rec = {k: np.zeros(s) for k, s in (
            ("time", n_rec), ("lateral", (n_rec, 4)), ("yaw", (n_rec, 4)),
            ("wheel_load", (n_rec, 4, 2)), ("lateral_force", (n_rec, 4, 2)),
            ("derailment_quotient", (n_rec, 4, 2)), ("force_on_rail_y", (n_rec, 4, 2)),
            ("wear_number", (n_rec, 4, 2)), ("bodies", (n_rec, 18)),
            ("box_force", (n_rec, 4, 6)), ("curvature", (n_rec, 4)), ("cant_angle", (n_rec, 4)))}
        i_rec = 0
        kin, inputs = self.kinematics, self.inputs
        bs.initial_outputs(m, self.layout, work, io)
        force_map = bs.force_map(p.primary_semi_spacing)
        q = work[bs.W_Q:bs.W_Q + N_DOF]            # the bodies (see body_step: in jacobi one step ahead)
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
        terms = np.zeros((2, 3 * bs.N_ELEMENTS))
        scalars = work[bs.W_SCALARS:bs.W_SCALARS + 16]
        s_wheelsets = m.wheelset_positions - scalars[bs.SC_LEADING]

        def inertial_w(t):
            """Lateral inertial load of each wheelset in its track frame (N, + = towards -y)."""
            s = self.speed * t + s_wheelsets
            kap, cant = self.layout.curvature(s), self.layout.cant_angle(s)
            return p.wheelset_mass * (self.speed ** 2 * kap * np.cos(cant) + GRAVITY * np.sin(cant))

        def lateral_velocity():
            return 0.5 * (kin[:, 4] + kin[:, 10])    # left and right box velocity y

        wall0 = _time.perf_counter()
        for n in range(n_steps + 1):
            last = n == n_steps
            t = n * h
            if jacobi:   # the FMUs step with the forces the bodies gave at t_n
                self._take_outputs()
            if not last:
                status = bs.bodies_step(t, h, io, work)
                if status != bs.STEP_OK:
                    raise VehicleError(f"the bodies refused the step at t = {t:.6f} s (code {status}: "
                                       "a non-finite axle-box kinematics or a bad step)")
                if not jacobi:
                    self._take_outputs()
            if n % self.record_every == 0:
                self._record(rec, i_rec, t, q, inputs[:, 0:6], inputs[:, 6], inputs[:, 7])
                i_rec += 1
            elif average and n >= first_averaged:
                for inst in self.instances:
                    inst.read_record()
            if average and n >= first_averaged:
                for key, value in wheel_results(self.recorded).items():
                    sums[key] += value
                sums["bodies"] += q[:18]
                bs.track_terms(self.speed * t - scalars[bs.SC_LEADING], self.speed, scalars, work,
                               terms[0], terms[1])
                sums["secondary_track_terms"] += terms[0, :12]
                n_averaged += 1
            if average and n == first_averaged:
                v_start = lateral_velocity().copy()
            if last:
                break
            applied = inputs[:, 0:6] @ force_map
            if average and n >= first_averaged:
                # impulses over the step: the box forces (held), the inertial load
                # of the wheelset's track frame (trapezoidal, as the FMU integrates it)
                box_impulse += h * applied[:, 1]
                inertial_impulse += 0.5 * h * (inertial_w(t) + inertial_w(t + h))
            for inst in self.instances:
                inst.step(t, h)
                inst.read_kinematics()
            self.time = t + h
            if progress and n % 1000 == 0:
                progress(n, n_steps)
        wall = _time.perf_counter() - wall0
        for key in rec:
            rec[key] = rec[key][:i_rec]
        mean = {key: value / n_averaged for key, value in sums.items()} if n_averaged else {}
        if n_averaged and n_steps > first_averaged:
            window = (n_steps - first_averaged) * h
            m_w = p.wheelset_mass
            # the time mean of the lateral contact forces of the rails on each wheelset
            # from its momentum: m dv = int (contact + box - inertial) dt
            mean["contact_force_y"] = (m_w * (lateral_velocity() - v_start) - box_impulse
                                       + inertial_impulse) / window
        return VehicleResult(distance=rec["time"] * self.speed, speed=self.speed, step=h,
                             coupling=self.coupling, wall_time=wall, steps=n_steps,
                             mean=mean, mean_window=(first_averaged * h, n_steps * h)
                             if n_averaged else None, **rec)

    def _take_outputs(self):
        """The FMUs' inputs from the bodies' outputs: box forces, curvature, cant."""
        io = self.io
        self.inputs[:, 0:6] = io[bs.IO_BOX_FORCE:bs.IO_CURVATURE].reshape(4, 6)
        self.inputs[:, 6] = io[bs.IO_CURVATURE:bs.IO_CANT]
        self.inputs[:, 7] = io[bs.IO_CANT:bs.IO_BODIES]

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
