"""Co-simulation of the wheelset FMU (through FMPy's FMU2Slave) with the
OpenSees track of ``cosim.track_fe``: fixed-step Gauss-Seidel.

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

import collections
import math
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from typing import Mapping, Optional

import numpy as np
from numba import njit

from cosim.track_fe import (SIDES, RailLoad, TrackModelError, TrackParameters, make_track)

RAIL_INPUTS = ("lateral_displacement", "vertical_displacement", "roll_angle",
               "lateral_velocity", "vertical_velocity", "roll_rate")
POINTS = 3


class CosimError(RuntimeError):
    """The co-simulation could not go on (FMU error or discard, track failure)."""


@dataclass
class CosimOptions:
    step: float = 1e-3                  # s, communication step
    duration: float = 1.0               # s
    order: str = "fmu-first"            # or "track-first"
    extrapolation: str = "none"         # or "linear"
    engine: str = "assembled"           # or "opensees" (ops.analyze each step)
    start_position: float = 15.0        # m, wheel position on the track model at t = 0
    window_margin: float = 20.0         # m: shift the model when less than this is ahead
    track: TrackParameters = field(default_factory=TrackParameters)
    fmu_parameters: Mapping[str, object] = field(default_factory=dict)
    rigid_track: bool = False           # True: no track (rail inputs zero), same master
    interface_jacobian: bool = True     # implicit contact linearisation in the track step
    jacobian_every: int = 10            # steps between two probes of the FMU's sensitivity
    jacobian_perturbation: float = 1e-6  # m
    jacobian_probe_step: float = 1e-6   # s, the short step of the probes ("step" method)
    jacobian_method: str = "derivative"  # fmi2GetDirectionalDerivative; "step": perturbed doSteps
    output_every: int = 1               # record every n-th step
    static_start: bool = False          # True: the track starts statically deflected

    def __post_init__(self):
        if self.order not in ("fmu-first", "track-first"):
            raise ValueError(f"order must be 'fmu-first' or 'track-first', got {self.order!r}")
        if self.jacobian_method not in ("derivative", "step"):
            raise ValueError(f"jacobian_method must be 'derivative' or 'step', got "
                             f"{self.jacobian_method!r}")
        if self.extrapolation not in ("none", "linear"):
            raise ValueError(f"extrapolation must be 'none' or 'linear', got {self.extrapolation!r}")
        if not (math.isfinite(self.step) and self.step > 0):
            raise ValueError(f"step must be positive, got {self.step!r}")
        if not (math.isfinite(self.duration) and self.duration > 0):
            raise ValueError(f"duration must be positive, got {self.duration!r}")


@dataclass
class CosimResult:
    columns: dict                        # name -> array over the recorded steps
    wall_fmu: float                      # s spent in the FMU's steps (set/doStep/get, probes)
    wall_track: float                    # s spent stepping the track model (window shifts included)
    wall_total: float                    # s for the whole run (set-ups included)
    steps: int
    options: CosimOptions
    window_shifts: int = 0
    wall_track_setup: float = 0.0        # s building the track (OpenSees matrices, factor, kernels)
    wall_fmu_setup: float = 0.0          # s loading, instantiating and initialising the FMU
    wall_master_setup: float = 0.0       # s the master's tables and first calls before the loop

    @property
    def simulated(self) -> float:
        return self.steps * self.options.step

    @property
    def real_time_factor(self) -> float:
        return self.simulated / max(self.wall_total, 1e-12)


_CALLBACKS_KEPT_ALIVE = []


def _kept_alive_callbacks(messages):
    """fmi2 callbacks that record the FMU's log messages and are never freed:
    pythonfmu 0.7.0 can call the logger of an instance freed earlier in the
    process (docs/limits_and_failures.md); with FMPy's default callbacks, which
    go when their FMU2Slave goes, that corrupted the heap at exit. The native
    front end (fmu_wheelset/native) calls only the live instance's logger, so
    this is no longer needed for it; kept because it is harmless (the logger
    holds only its message deque) and the pythonfmu binary is still the
    build's no-compiler fallback."""
    from ctypes import byref
    from fmpy.fmi2 import (calloc, fmi2CallbackAllocateMemoryTYPE, fmi2CallbackFreeMemoryTYPE,
                           fmi2CallbackFunctions, fmi2CallbackLoggerTYPE, free)

    def logger(component, instance, status, category, message):
        messages.append((status, (category or b"").decode(errors="replace"),
                         (message or b"").decode(errors="replace")))

    callbacks = fmi2CallbackFunctions()
    callbacks.logger = fmi2CallbackLoggerTYPE(logger)
    callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
    callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
    try:  # FMPy's proxy turns the variadic C logger into a plain one
        from fmpy.logging import addLoggerProxy
        addLoggerProxy(byref(callbacks))
    except Exception:  # noqa: BLE001 - older FMPy: the plain logger is used
        pass
    _CALLBACKS_KEPT_ALIVE.append((callbacks, logger))
    return callbacks


class WheelsetFMU:
    """The wheelset FMU through FMPy's FMU2Slave, with value references
    looked up once by name."""

    def __init__(self, fmu_path: str, parameters: Mapping[str, object], unzipped: Optional[str] = None,
                 instance_name: str = "wheelset"):
        from fmpy import extract, read_model_description
        from fmpy.fmi2 import FMU2Slave
        self.md = read_model_description(fmu_path)
        self._own_dir = None
        if unzipped is None:
            unzipped = extract(fmu_path, unzipdir=tempfile.mkdtemp(prefix="wheelset_fmu_"))
            self._own_dir = unzipped
        self.vars = {v.name: v for v in self.md.modelVariables}
        self.slave = FMU2Slave(guid=self.md.guid, unzipDirectory=unzipped,
                               modelIdentifier=self.md.coSimulation.modelIdentifier,
                               instanceName=instance_name)
        self.messages = collections.deque(maxlen=50)      # the FMU's last log messages
        try:
            self.slave.instantiate(loggingOn=True, callbacks=_kept_alive_callbacks(self.messages))
        except Exception as exc:  # noqa: BLE001 - FMPy raises on a NULL component
            raise CosimError(f"fmi2Instantiate failed ({exc}): {self.last_problem()}") from None
        try:
            self._initialize(parameters)
        except Exception:
            self.slave.freeInstance()
            if self._own_dir:
                shutil.rmtree(self._own_dir, ignore_errors=True)
            raise
        self.input_refs = [self.ref(f"rail.{side}.{name}") for side in SIDES for name in RAIL_INPUTS]
        self.output_names = (
            [f"wheel.{side}.force_on_rail.{ax}" for side in SIDES for ax in "xyz"]
            + ["wheelset.distance", "wheelset.y", "wheelset.z", "wheelset.yaw"]
            + [f"contact.{side}.point[{k}].{what}" for side in SIDES for k in range(1, POINTS + 1)
               for what in ("normal_force", "lateral_force", "longitudinal_force", "contact_angle",
                            "rail_lateral", "wheel_lateral", "position.z")])
        self.output_refs = [self.ref(n) for n in self.output_names]
        self.index = {n: i for i, n in enumerate(self.output_names)}
        self.load_index = load_index(self.index)
        # value references and values as C arrays made once: one fmi2SetReal /
        # fmi2GetReal per step (FMPy's setReal/getReal convert lists each call)
        from ctypes import POINTER
        from fmpy.fmi2 import fmi2Real, fmi2ValueReference
        self._in_refs = (fmi2ValueReference * len(self.input_refs))(*self.input_refs)
        self._in_values = np.zeros(len(self.input_refs))
        self._in_pointer = self._in_values.ctypes.data_as(POINTER(fmi2Real))
        self._out_refs = (fmi2ValueReference * len(self.output_refs))(*self.output_refs)
        self._out_values = np.zeros(len(self.output_refs))
        self._out_pointer = self._out_values.ctypes.data_as(POINTER(fmi2Real))

    def _initialize(self, parameters):
        """Parameters and initialization. The native front end refuses a value
        outside its declared range or a failed initialization with fmi2Error and
        the reason logged (FMPy raises FMICallException): a CosimError with it."""
        from fmpy.fmi1 import FMICallException
        for name, value in parameters.items():
            try:
                self.set(name, value)
            except FMICallException as exc:
                raise CosimError(f"the FMU refused {name} = {value!r} ({exc}): "
                                 f"{self.last_problem()}") from None
        try:
            self.slave.setupExperiment(startTime=0.0)
            self.slave.enterInitializationMode()
            self.slave.exitInitializationMode()
        except FMICallException as exc:
            raise CosimError(f"FMU initialization failed ({exc}): {self.last_problem()}") from None

    def last_problem(self) -> str:
        """The last message the FMU logged with fmi2Error or worse, else its last one."""
        errors = [m for m in self.messages if m[0] >= 3] or list(self.messages)
        return errors[-1][2] if errors else "no message logged"

    def ref(self, name):
        try:
            return self.vars[name].valueReference
        except KeyError:
            raise CosimError(f"the FMU has no variable {name!r}") from None

    def set(self, name, value):
        var = self.vars.get(name)
        if var is None:
            raise CosimError(f"the FMU has no parameter {name!r}")
        if var.type == "Real":
            self.slave.setReal([var.valueReference], [float(value)])
        elif var.type in ("Integer", "Enumeration"):
            self.slave.setInteger([var.valueReference], [int(value)])
        elif var.type == "Boolean":
            self.slave.setBoolean([var.valueReference], [bool(value)])
        elif var.type == "String":
            self.slave.setString([var.valueReference], [str(value)])
        else:  # pragma: no cover
            raise CosimError(f"cannot set {name!r} of type {var.type}")

    def outputs(self) -> np.ndarray:
        """The outputs of ``output_names`` (a new array), one fmi2GetReal."""
        self.slave.fmi2GetReal(self.slave.component, self._out_refs, len(self._out_values),
                               self._out_pointer)
        return self._out_values.copy()

    def set_rail(self, values):
        """The twelve rail inputs (left then right, RAIL_INPUTS order), one fmi2SetReal."""
        self._in_values[:] = values
        self.slave.fmi2SetReal(self.slave.component, self._in_refs, len(self._in_values),
                               self._in_pointer)

    def do_step(self, t, h):
        from fmpy.fmi1 import FMICallException
        try:
            self.slave.doStep(currentCommunicationPoint=t, communicationStepSize=h)
        except FMICallException as exc:
            flags = self.slave.getBoolean([self.ref(n) for n in (
                "status.derailment", "status.wheel_lift", "status.excessive_penetration")])
            reason = self.last_problem()
            raise CosimError(f"FMU doStep at t = {t:.4f} s failed ({exc}): {reason}; derailment, "
                             f"wheel lift, excessive penetration = {flags}") from None

    def probe(self, t, rail_in, probe_step, crown_above_centroid):
        """Instantaneous stiffness and damping of the wheel-rail contact seen by
        the rails: the change of the loads on each rail axis (lateral force,
        vertical force, torque) per unit change of the rail inputs of the same
        side (lateral displacement, vertical displacement, roll; lateral and
        vertical velocity), by finite differences over a very short step
        ``probe_step`` from the FMU state at t (FMI 2 get/set FMUstate; the
        state is restored). The head's lateral input is the axis' lateral
        motion minus d * roll: the roll column is taken at a fixed axis.
        Returns (stiffness, damping), each (2 sides, 3, 3), or None."""
        state = self.slave.getFMUstate()
        d = crown_above_centroid
        h, r = self.perturbation, self.rate_perturbation
        # (input perturbation of one side's six inputs, divisor, column, kind)
        columns = [(None, 1.0, None, None),
                   ((h, 0, 0, 0, 0, 0), h, 0, 0), ((0, h, 0, 0, 0, 0), h, 1, 0),
                   ((-d * h / d if d else 0, 0, h / d if d else 0, 0, 0, 0), None, 2, 0),
                   ((0, 0, 0, r, 0, 0), r, 0, 1), ((0, 0, 0, 0, r, 0), r, 1, 1)]
        theta = h / max(d, 1e-3) if d else h
        columns[3] = ((-d * theta, 0, theta, 0, 0, 0), theta, 2, 0)
        loads = []
        moved = False          # the FMU left the state at t (restored once per column)
        try:
            for pert_one, _, _, _ in columns:
                pert = np.array(rail_in, dtype=float)
                if pert_one is not None:
                    pert[:6] += pert_one
                    pert[6:] += pert_one
                moved = True
                self.set_rail(pert)
                try:
                    self.slave.doStep(currentCommunicationPoint=t, communicationStepSize=probe_step)
                except Exception:  # noqa: BLE001 - a failed probe keeps the old Jacobian
                    return None
                loads.append(rail_load_array(self.outputs(), self.load_index, d))
                self.slave.setFMUstate(state)
                moved = False
        finally:
            if moved:          # left early: back to the state at t
                self.slave.setFMUstate(state)
            self.slave.freeFMUstate(state)   # a state left allocated crashes the process at exit
        base = loads[0]
        stiffness = np.zeros((2, 3, 3))
        damping = np.zeros((2, 3, 3))
        for k, (_, divisor, col, kind) in enumerate(columns[1:], start=1):
            target = stiffness if kind == 0 else damping
            target[:, :, col] = (loads[k] - base) / divisor
        # the head's lateral velocity input is the axis' minus d * roll rate
        damping[:, :, 2] = -d * damping[:, :, 0]
        return stiffness, damping

    rate_perturbation = 1e-4

    def probe_derivative(self, crown_above_centroid):
        """The same (stiffness, damping) as ``probe``, from the FMU's
        fmi2GetDirectionalDerivative at the current state and inputs (no step,
        no state saved or restored): one call per column of RAIL_INPUTS seeded
        on both sides at once (a wheel's outputs depend only on its own rail's
        inputs: ModelStructure), giving d(outputs)/d(input); the rail loads'
        change is the central difference of rail_load_array along it (the torque
        is a smooth function of the contact points' outputs), step
        ``perturbation`` (m) per unit input. None if the FMU refuses."""
        from fmpy.fmi1 import FMICallException
        d = crown_above_centroid
        out = self.outputs()
        h = self.perturbation
        # seed of one side's six inputs (RAIL_INPUTS), column, kind (0 stiffness, 1 damping)
        columns = [((1, 0, 0, 0, 0, 0), 0, 0), ((0, 1, 0, 0, 0, 0), 1, 0),
                   ((-d, 0, 1, 0, 0, 0), 2, 0),       # roll about the rail axis
                   ((0, 0, 0, 1, 0, 0), 0, 1), ((0, 0, 0, 0, 1, 0), 1, 1)]
        stiffness = np.zeros((2, 3, 3))
        damping = np.zeros((2, 3, 3))
        for seed_one, col, kind in columns:
            seed = list(seed_one) * 2
            try:
                dout = np.array(self.slave.getDirectionalDerivative(
                    self.output_refs, self.input_refs, seed))
            except FMICallException:
                return None
            if not np.isfinite(dout).all():
                return None
            plus = rail_load_array(out + h * dout, self.load_index, d)
            minus = rail_load_array(out - h * dout, self.load_index, d)
            target = stiffness if kind == 0 else damping
            target[:, :, col] = (plus - minus) / (2.0 * h)
        damping[:, :, 2] = -d * damping[:, :, 0]
        return stiffness, damping

    def forces(self, out):
        return [(out[self.index[f"wheel.{side}.force_on_rail.y"]],
                 out[self.index[f"wheel.{side}.force_on_rail.z"]]) for side in SIDES]

    perturbation = 1e-6

    def close(self):
        try:
            self.slave.terminate()
        finally:
            self.slave.freeInstance()
            if self._own_dir:
                shutil.rmtree(self._own_dir, ignore_errors=True)


def load_index(index: Mapping[str, int]) -> np.ndarray:
    """(2 sides, 8) int: the output indices of the resultant lateral and
    vertical force then, for the contact points, normal force, lateral creep
    force, contact angle, rail lateral coordinate, position.z of point 1, and
    the offset between two points' blocks (for rail_load_kernel)."""
    rows = []
    for side in SIDES:
        pre = f"contact.{side}.point[1]."
        nxt = f"contact.{side}.point[2].normal_force"
        rows.append([index[f"wheel.{side}.force_on_rail.y"], index[f"wheel.{side}.force_on_rail.z"],
                     index[pre + "normal_force"], index[pre + "lateral_force"],
                     index[pre + "contact_angle"], index[pre + "rail_lateral"],
                     index[pre + "position.z"], index[nxt] - index[pre + "normal_force"]])
    for s, side in enumerate(SIDES):      # the kernel walks the points by a fixed stride
        for k in range(1, POINTS + 1):
            pre = f"contact.{side}.point[{k}]."
            for c, what in enumerate(("normal_force", "lateral_force", "contact_angle",
                                      "rail_lateral", "position.z")):
                if index[pre + what] != rows[s][2 + c] + (k - 1) * rows[s][7]:
                    raise CosimError(f"the outputs of {pre}* are not laid out by a fixed stride")
    return np.array(rows, dtype=np.int64)


@njit(cache=True)
def rail_load_kernel(out, index, crown_above_centroid, no_torque, loads):
    """loads (2, 3): lateral, vertical force of each wheel on its rail and the
    torque of its contact points about the rail axis (see rail_loads)."""
    for s in range(2):
        sign = 1.0 if s == 0 else -1.0
        torque = 0.0
        for k in range(POINTS):
            o = k * index[s, 7]
            normal = out[index[s, 2] + o]
            if normal <= 0.0:
                continue
            lateral_creep = out[index[s, 3] + o]
            delta = out[index[s, 4] + o]
            cd, sd = math.cos(delta), math.sin(delta)
            # force of the rail on the wheel: N n + T2 t2, n = (0, -sign sd, cd),
            # t2 = n x t1 = (0, cd, sign sd) (docs/CONVENTIONS.md, solver.wheelset)
            fy = -(-sign * sd * normal + cd * lateral_creep)      # of the wheel on the rail
            fz = -(cd * normal + sign * sd * lateral_creep)
            y_offset = sign * out[index[s, 5] + o]                # field side = +y on the left
            z_offset = out[index[s, 6] + o] + crown_above_centroid
            torque += y_offset * fz - z_offset * fy
        loads[s, 0] = out[index[s, 0]]
        loads[s, 1] = out[index[s, 1]]
        loads[s, 2] = 0.0 if no_torque else torque


def rail_load_array(out: np.ndarray, index: np.ndarray, crown_above_centroid: float) -> np.ndarray:
    """(2, 3) array of rail_loads (index = load_index(...))."""
    loads = np.empty((2, 3))
    rail_load_kernel(out, index, crown_above_centroid, bool(os.environ.get("COSIM_NO_TORQUE")),
                     loads)
    return loads


def rail_loads(out: np.ndarray, index: Mapping[str, int], crown_above_centroid: float):
    """[RailLoad left, RailLoad right] from one FMU output vector: resultant
    lateral/vertical force of the wheel on the rail and the torque M_x of the
    contact points about the rail axis (environment COSIM_NO_TORQUE set: no
    torque, a diagnostic)."""
    loads = rail_load_array(out, load_index(index), crown_above_centroid)
    return [RailLoad(lateral=f[0], vertical=f[1], torque=f[2]) for f in loads]


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
    from cosim.track_fe import AssembledTrack
    o = options or CosimOptions()
    h = o.step
    n_steps = int(round(o.duration / h))
    fmu_params = dict(o.fmu_parameters)
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
