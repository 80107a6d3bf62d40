"""Co-simulation of the wheelset FMU (through FMPy's FMU2Slave) with the
OpenSees track of ``cosim.track``: fixed-step Gauss-Seidel.

Each coupling step of length h:
- ``order="fmu-first"``: the FMU steps [t, t+h] with the rail motion under
  each wheel at t (or extrapolated, below) as its inputs
  ``rail.{side}.{lateral_displacement, vertical_displacement, roll_angle,
  lateral_velocity, vertical_velocity, roll_rate}``; its outputs at t+h,
  the force of each wheel ON its rail (``wheel.{side}.force_on_rail.{y,z}``,
  track frame x forward, y left, z up: the vertical load is negative) and the
  torque of the contact points about the rail axis, load the track at the
  wheel's position at t+h, and the track steps [t, t+h] (Newmark, loads at
  the end of the step).
- ``order="track-first"``: the track steps first with the forces of t (or
  extrapolated), then the FMU with the rail motion at t+h.
- ``extrapolation="none"``: the first subsystem of a step sees the coupled
  values of t (zero-order hold); ``"linear"``: their linear extrapolation from
  the last two coupling points, to the middle of the step for the FMU's
  inputs (it holds them over the step) and to its end for the track's loads.

The wheel's position on the track is ``start_position + wheelset.distance``;
both wheels load the rails at that x (the yaw's longitudinal offset of the
contact points, below a millimetre, is neglected). The torque on the rail
axis is M_x = sum over the contact points of (y_p - y_axis) F_z,p -
(z_p - z_axis) F_y,p, with the per-point force of the wheel on the rail from
the FMU's point outputs (normal force, creep forces, contact angle) in the
contact frame of docs/CONVENTIONS.md; y_p - y_axis = +-u (the point's rail
lateral coordinate, field side +) and z_p - z_axis = position.z + crown height
above the centroid (the 1:40 inclination of the rail is neglected there).

The track starts undeformed at rest (``static_start=True``: statically
deflected under the FMU's initial forces, which leaves the wheel above the
rail for the first steps); the FMU starts from its own static equilibrium on
the undeformed rail, so the first ~0.3 s hold the transient of the wheelset
settling by the static track deflection (the figures are taken after it).

Plain Gauss-Seidel is unstable at a 1 ms step: the rail's local mass on the
stiff Hertz spring (~1.5e9 N/m) oscillates far above 1/h. With
``interface_jacobian`` (default) the master probes the FMU's sensitivity of
the wheel forces to the rail inputs every ``jacobian_every`` steps: with
``jacobian_method="derivative"`` (default) the FMU's
fmi2GetDirectionalDerivative at the current state (the direct feedthrough,
central differences inside the FMU, no step); with ``"step"`` finite
differences of short perturbed doSteps from a saved FMU state (FMI 2 get/set
FMUstate), the older probe. Both agree within the step probe's forward-
difference error (tests/test_directional_derivative.py) and the track step solves the contact linearised
about the FMU's forces implicitly: load = F_FMU + J (w_new - w_FMU), w the
rail displacement under the wheel (a Jacobian-corrected, "linearly
implicit" coupling; only the assembled engine supports it).
"""
from __future__ import annotations

import os
import time
from typing import Mapping, Optional

import numpy as np
from numba import njit

from .engines import make_track
from .fe_model import RailLoad
from .options import CosimError, CosimOptions, CosimResult
from .parameters import SIDES, TrackModelError
from .rail_loads import POINTS, rail_load_kernel
from .wheelset_fmu import WheelsetFMU


def _rail_vector(track, x):
    values = []
    for s in range(2):
        st = track.rail_state(s, x)
        values += [st.lateral, st.vertical, st.roll, st.lateral_velocity, st.vertical_velocity,
                   st.roll_rate]
    return np.array(values, dtype=float)


@njit(cache=True)
def _head_kernel(axis, crown_above_centroid, rail):
    for s in range(2):
        for k in range(2):
            rail[6 * s + 3 * k] = axis[s, k, 0] - crown_above_centroid * axis[s, k, 2]
            rail[6 * s + 3 * k + 1] = axis[s, k, 1]
            rail[6 * s + 3 * k + 2] = axis[s, k, 2]


def _head_vector(axis, crown_above_centroid):
    """The twelve rail inputs (RAIL_INPUTS order, left then right) from the
    axis motion (2 points, (disp, rate), 3): the crown's lateral motion is the
    axis' minus d * roll."""
    rail = np.empty(12)
    _head_kernel(axis, crown_above_centroid, rail)
    return rail


def run_track_cosim(fmu_path: str, options: CosimOptions | None = None,
                    unzipped: Optional[str] = None, progress=None) -> CosimResult:
    """Run the coupled wheelset + track; returns the recorded time histories."""
    from .engines import AssembledTrack
    o = options or CosimOptions()
    h = o.step
    n_steps = int(round(o.duration / h))
    # the FE track replaces the FMU's own lumped rail bodies: its rail motion
    # comes in through the rail inputs, on rails the FMU does not move itself
    # (track.model 0 = Prescribed, solver/track/lumped_rails.py)
    fmu_params = {"track.model": 0, **dict(o.fmu_parameters)}
    t_wall0 = time.perf_counter()
    cpu0 = time.process_time()
    cpu = {"fmu": 0.0, "track": 0.0, "fmu_setup": 0.0, "track_setup": 0.0, "master_setup": 0.0,
           "probe": 0.0}

    def stamp():
        return time.perf_counter(), time.process_time()

    def since(t0, key):
        """wall seconds since t0; the process CPU seconds go to cpu[key]."""
        cpu[key] += time.process_time() - t0[1]
        return time.perf_counter() - t0[0]
    t0 = stamp()
    fmu = WheelsetFMU(fmu_path, fmu_params, unzipped=unzipped)
    wall_fmu_setup = since(t0, "fmu_setup")
    wall_fmu = wall_track = wall_track_setup = wall_master_setup = 0.0
    no_torque = bool(os.environ.get("COSIM_NO_TORQUE"))
    try:
        track = None
        d = o.track.rail.crown_above_centroid
        idx = fmu.index
        lidx = fmu.load_index
        out = fmu.outputs()

        def loads_of(out):
            loads = np.empty((2, 3))
            rail_load_kernel(out, lidx, d, no_torque, loads)
            return loads

        x0 = o.start_position
        if not o.rigid_track:
            if o.start_position + o.window_margin > o.track.length and o.engine != "assembled":
                raise TrackModelError("the track model is shorter than start_position + window_margin")
            t0 = stamp()
            track = make_track(o.engine, o.track, h)
            if o.static_start:
                track.static([(s, x0, RailLoad(*ld)) for s, ld in enumerate(loads_of(out))])
            wall_track_setup += since(t0, "track_setup")
        t0 = stamp()                                   # the master's own set-up
        fast = isinstance(track, AssembledTrack)       # one compiled call per track step
        names = (["time", "distance", "x_track", "wheelset_y", "wheelset_z"]
                 + [f"{side}_{what}" for side in SIDES for what in
                    ("force_y", "force_z", "torque", "rail_lateral", "rail_vertical", "rail_roll")]
                 + [f"{side}_p{k}_{what}" for side in SIDES for k in range(1, POINTS + 1)
                    for what in ("normal_force", "contact_angle", "wheel_lateral")])
        # the record: columns copied from the FMU outputs by one index array
        from_out = {"distance": "wheelset.distance", "wheelset_y": "wheelset.y",
                    "wheelset_z": "wheelset.z"}
        for side in SIDES:
            for k in range(1, POINTS + 1):
                for what in ("normal_force", "contact_angle", "wheel_lateral"):
                    from_out[f"{side}_p{k}_{what}"] = f"contact.{side}.point[{k}].{what}"
        col = {name: i for i, name in enumerate(names)}
        out_cols = np.array([col[c] for c in from_out])
        out_src = np.array([idx[v] for v in from_out.values()])
        load_cols = np.array([col[f"{side}_{w}"] for side in SIDES for w in ("force_y", "force_z", "torque")])
        rail_cols = np.array([col[f"{side}_{w}"] for side in SIDES
                              for w in ("rail_lateral", "rail_vertical", "rail_roll")])
        rail_src = np.array([0, 1, 2, 6, 7, 8])
        data = np.empty((n_steps // o.output_every + 1, len(names)))
        recorded = 0
        i_distance = idx["wheelset.distance"]
        shifts = 0
        sides = np.array([0, 1], dtype=np.int64)
        if track is None:
            rail_prev = rail_now = np.zeros(12)
        elif fast:
            rail_prev = rail_now = _head_vector(track.axis_at(sides, (x0, x0)), d)
        else:
            rail_prev = rail_now = _rail_vector(track, x0)
        loads_prev = loads_now = loads_of(out)
        x_prev = x_now = x0 + out[i_distance]

        def record(t, out, loads, rail):
            nonlocal recorded
            row = data[recorded]
            row[0] = t
            row[col["x_track"]] = x_now
            row[out_cols] = out[out_src]
            row[load_cols] = loads.reshape(6)
            row[rail_cols] = rail[rail_src]
            recorded += 1

        record(0.0, out, loads_now, rail_now)
        use_jacobian = (o.interface_jacobian and track is not None and o.engine == "assembled"
                        and o.order == "fmu-first")
        jacobian = (np.zeros((2, 3, 3)), np.zeros((2, 3, 3)))
        springs = (np.zeros((2, 3, 3)), np.zeros((2, 3, 3)))     # -jacobian: the contact's S, D
        probes = 0
        fmu.perturbation = o.jacobian_perturbation

        def extrapolated_loads(fraction):
            if o.extrapolation == "none":
                return loads_now
            return loads_now + fraction * (loads_now - loads_prev)

        wall_master_setup += since(t0, "master_setup")

        for n in range(n_steps):
            t = n * h
            if track is not None and o.engine == "assembled" and \
                    track.local(x_now) > o.track.length - o.window_margin:
                bays = int((track.local(x_now) - o.start_position) / o.track.sleeper_spacing)
                t0 = stamp()
                track.shift_window(bays)
                wall_track += since(t0, "track")
                shifts += 1
            if o.order == "fmu-first" or track is None:
                rail_in = rail_now if o.extrapolation == "none" else rail_now + 0.5 * (rail_now - rail_prev)
                # one clock reading at each boundary (a CPU clock costs a system
                # call): FMU = inputs, doStep, outputs (and their finiteness
                # check); track = the outputs' rail loads, the track step and
                # the rail inputs from it
                t0 = stamp()
                if use_jacobian and n % o.jacobian_every == 0:
                    p0 = time.process_time()
                    if o.jacobian_method == "derivative":
                        fmu.set_rail(rail_in)        # the derivative at the step's inputs
                        probed = fmu.probe_derivative(d)
                    else:
                        probed = fmu.probe(t, rail_in, o.jacobian_probe_step, d)
                    cpu["probe"] += time.process_time() - p0
                    if probed is not None:
                        jacobian = probed
                        springs = (-jacobian[0], -jacobian[1])
                        if os.environ.get("COSIM_DEBUG"):
                            print("J", t, jacobian[0].reshape(-1), jacobian[1].reshape(-1))
                        probes += 1
                fmu.set_rail(rail_in)
                fmu.do_step(t, h)
                out = fmu.outputs()
                finite = np.all(np.isfinite(out))
                t1 = stamp()
                cpu["fmu"] += t1[1] - t0[1]
                wall_fmu += t1[0] - t0[0]
                if not finite:
                    raise CosimError(f"non-finite FMU output at t = {t + h:.4f} s")
                x_new = x0 + out[i_distance]
                loads_new = loads_of(out)
                rail_new = rail_now
                if track is not None:
                    if fast:
                        axis = track.step_wheelset(x_new, loads_new,
                                                   *(springs if use_jacobian else (None, None)))
                        rail_new = _head_vector(axis, d)
                    else:
                        track.step([(s, x_new, RailLoad(*loads_new[s])) for s in range(2)])
                        rail_new = _rail_vector(track, x_new)
                    wall_track += since(t1, "track")
            else:
                x_guess = x_now + (x_now - x_prev if n > 0 else h * float(fmu_params.get("wheelset.speed", 27.78)))
                loads_in = extrapolated_loads(1.0)
                t0 = stamp()
                if fast:
                    rail_new = _head_vector(track.step_wheelset(x_guess, loads_in), d)
                else:
                    track.step([(s, x_guess, RailLoad(*loads_in[s])) for s in range(2)])
                    rail_new = _rail_vector(track, x_guess)
                wall_track += since(t0, "track")
                t0 = stamp()
                fmu.set_rail(rail_new)
                fmu.do_step(t, h)
                out = fmu.outputs()
                wall_fmu += since(t0, "fmu")
                if not np.all(np.isfinite(out)):
                    raise CosimError(f"non-finite FMU output at t = {t + h:.4f} s")
                x_new = x0 + out[i_distance]
                loads_new = loads_of(out)
            rail_prev, rail_now = rail_now, rail_new
            loads_prev, loads_now = loads_now, loads_new
            x_prev, x_now = x_now, x_new
            if (n + 1) % o.output_every == 0:
                record(t + h, out, loads_now, rail_now)
            if progress is not None:
                progress(n + 1, n_steps)
    finally:
        fmu.close()
    wall_total = time.perf_counter() - t_wall0
    columns = {name: data[:recorded, i].copy() for i, name in enumerate(names)}
    result = CosimResult(columns, wall_fmu, wall_track, wall_total, n_steps, o, shifts,
                         wall_track_setup=wall_track_setup, wall_fmu_setup=wall_fmu_setup,
                         wall_master_setup=wall_master_setup)
    result.jacobian_probes = probes
    result.cpu_probe = cpu["probe"]          # CPU s in the probes (part of cpu_fmu)
    result.cpu_fmu, result.cpu_track = cpu["fmu"], cpu["track"]
    result.cpu_fmu_setup, result.cpu_track_setup = cpu["fmu_setup"], cpu["track_setup"]
    result.cpu_master_setup = cpu["master_setup"]
    result.cpu_total = time.process_time() - cpu0
    return result


def static_wheel_load(fmu_parameters: Mapping[str, object], wheelset_mass: float = 1813.0) -> float:
    """(wheelset mass + suspended mass) g / 2, N: the static vertical load per
    wheel on a straight track with the FMU's built-in suspension."""
    mass = float(fmu_parameters.get("wheelset.mass", wheelset_mass))
    suspended = float(fmu_parameters.get("suspension.suspended_mass", 0.0))
    return 0.5 * (mass + suspended) * 9.81
