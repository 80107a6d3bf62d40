"""The wheelset FMU under the track master, through FMPy's FMU2Slave
(WheelsetFMU): parameters and initialization, the rail inputs and force
outputs as C arrays, one doStep per coupling step, and the probes of the
contact's stiffness and damping seen by the rails."""
from __future__ import annotations

import collections
import shutil
import tempfile
from typing import Mapping, Optional

import numpy as np

from .options import CosimError
from .parameters import SIDES
from .rail_loads import POINTS, load_index, rail_load_array


RAIL_INPUTS = ("lateral_displacement", "vertical_displacement", "roll_angle",
               "lateral_velocity", "vertical_velocity", "roll_rate")


_CALLBACKS_KEPT_ALIVE = []


def _kept_alive_callbacks(messages):
    """fmi2 callbacks that record the FMU's log messages and are never freed:
    pythonfmu 0.7.0 can call the logger of an instance freed earlier in the
    process (docs/limits_and_failures.md); with FMPy's default callbacks, which
    go when their FMU2Slave goes, that corrupted the heap at exit. The native
    front end (fmu_wheelset/fmu/native) calls only the live instance's logger, so
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
