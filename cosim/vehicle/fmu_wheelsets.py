"""The wheelset FMUs under the vehicle: one FMI 2.0 co-simulation instance of
`Wheelset.fmu` per wheelset through FMPy's FMU2Slave (FmuWheelset), the
variables exchanged with it every step, and the extraction of the FMU file.

Exchanged variables and their signs (every one in the track frame of the
wheelset: x forward along the track, y to the LEFT, z UP, moving along the
track centreline at the speed V; SI units)
-----------------------------------------------------------------------------
to each FMU, held constant over the step:
  axlebox.{left,right}.force.{x,y,z}  (N)   force OF the primary suspension ON
      the wheelset at that axle box (+ along the axes). At rest on straight
      track force.z = -(carbody/8 + bogie/4)*g = -48.6 kN: the spring pushes the
      wheelset DOWN. The master sends the trapezoidal mean of the suspension
      force over the step (see the coupling in cosim.vehicle.master).
  axlebox.{left,right}.moment.{x,y,z} (N.m) moment on the wheelset at the box:
      0 here (the primary springs act at the box centres on the axle line).
  track.curvature (1/m, + left curve) and track.cant_angle (rad, about +x, +
      lifts the LEFT rail; a left curve with the outer rail raised has a
      negative cant angle), at the wheelset's own position along the track
      (parameters track.curvature_from_input = track.cant_from_input = true).
from each FMU, at the end of the step:
  axlebox.{left,right}.position.{x,y,z} (m) position of the axle-box centre
      relative to the track centreline at the wheelset (x relative to the frame
      moving at V); the left box is at y = +b (b = axle-box semi-spacing).
  axlebox.{left,right}.velocity.{x,y,z} (m/s) its velocity in that frame.
  From the two boxes the master forms the wheelset's x, y, z (means), roll =
  (z_left - z_right)/(2b) and yaw = (x_right - x_left)/(2b) (+ about +z: the
  wheelset heads to the left).
  For the results (read every `record_every` steps): wheel.{side}.Q (N, wheel
  on rail, + down), wheel.{side}.Y (N, + towards the field side),
  wheel.{side}.force_on_rail.y (N, wheel on rail, +y), wheelset.y, wheelset.yaw,
  and the creep forces and creepages of the contact slots (wear number).
"""
from __future__ import annotations

import ctypes
import shutil
import tempfile
import zipfile

import numpy as np

from cosim.fmpy_host import set_variable

from .parameters import SIDES, VehicleError
from fmu_wheelset.fmu.interface import POINTS_PER_WHEEL


INPUT_NAMES = [f"axlebox.{s}.force.{a}" for s in SIDES for a in "xyz"] + [
    "track.curvature", "track.cant_angle"]
KINEMATICS_NAMES = [f"axlebox.{s}.{q}.{a}" for s in SIDES for q in ("position", "velocity")
                    for a in "xyz"]
POINTS = POINTS_PER_WHEEL      # contact points per wheel of the FMU's outputs
POSITION_COLUMNS = [0, 1, 2, 6, 7, 8]    # of KINEMATICS_NAMES: left xyz, right xyz
VELOCITY_COLUMNS = [3, 4, 5, 9, 10, 11]
RECORD_NAMES = (["wheelset.y", "wheelset.yaw"]
                + [f"wheel.{s}.{q}" for s in SIDES for q in ("Q", "Y", "Y_over_Q", "force_on_rail.y")]
                + [f"contact.{s}.point[{k}].{q}" for s in SIDES for k in range(1, POINTS + 1)
                   for q in ("longitudinal_force", "longitudinal_creepage",
                             "lateral_force", "lateral_creepage")])
# The fmi2 callbacks of every instance, never freed. Needed with pythonfmu 0.7.0,
# which could call the logger of an instance freed earlier; the native front end
# (fmu_wheelset/fmu/native) copies the callbacks at fmi2Instantiate and calls them
# only for that live instance, so this is no longer needed for it - kept because
# it is harmless (a few hundred bytes per instance) and the pythonfmu binary is
# still the build's no-compiler fallback (docs/limits_and_failures.md).
_CALLBACKS_KEPT_ALIVE = []
_MESSAGES_KEPT = 50          # log messages kept per FMU instance


_EXTRACTIONS = {}


def extracted(fmu) -> str:
    """The directory of the FMU's files: `fmu` itself if it is a directory
    (already extracted), else one extraction per FMU file and process, reused by
    every later vehicle in the process and removed at exit. (pythonfmu 0.7.0:
    two copies of the FMU's binary in one process share the embedded
    interpreter and crash it; docs/limits_and_failures.md. The native front end
    imports the FMU's Python under a build-unique package name; one extraction
    per process is kept anyway - harmless, it saves an unzip per vehicle, and
    the pythonfmu binary is still the no-compiler fallback.)"""
    import os
    path = os.path.abspath(str(fmu))
    if os.path.isdir(path):
        return path
    if not os.path.isfile(path):
        raise VehicleError(f"no FMU at {path}")
    key = (path, os.path.getmtime(path))
    if key not in _EXTRACTIONS:
        if any(k[0] == path for k in _EXTRACTIONS):
            raise VehicleError(f"{path} changed since this process loaded it; a new FMU "
                               "binary needs a new process")
        target = tempfile.mkdtemp(prefix="vehicle-fmu-")
        try:
            with zipfile.ZipFile(path) as z:
                z.extractall(target)
        except zipfile.BadZipFile as exc:
            shutil.rmtree(target, ignore_errors=True)
            raise VehicleError(f"{path} is not an FMU (zip) file: {exc}") from exc
        import atexit
        atexit.register(shutil.rmtree, target, True)
        _EXTRACTIONS[key] = target
    return _EXTRACTIONS[key]


class FmuWheelset:
    """One wheelset FMU instance (FMPy FMU2Slave). The values exchanged every
    step live in numpy rows the master owns (`inputs`: INPUT_NAMES order,
    `kinematics`: KINEMATICS_NAMES order); fmi2SetReal / fmi2DoStep /
    fmi2GetReal are called through the FMU's ctypes functions on them
    directly, without per-call conversions."""

    def __init__(self, unzipped: str, description, name: str, parameters: dict,
                 inputs: np.ndarray, kinematics: np.ndarray, recorded: np.ndarray):
        from fmpy.fmi2 import (FMU2Slave, calloc, fmi2CallbackAllocateMemoryTYPE,
                               fmi2CallbackFreeMemoryTYPE, fmi2CallbackFunctions,
                               fmi2CallbackLoggerTYPE, fmi2ValueReference, free)
        self.name = name
        # the native front end calls the logger of the instance a message is
        # about (pythonfmu 0.7.0 called the last instance's for all of them and
        # this list used to be shared): one message list per instance, each
        # message "[instance] text" with the name the FMU passes
        self.messages = messages = []
        # the last message logged with fmi2Discard or worse (a one-item list, so
        # that the logger, kept alive for ever, holds no reference to self)
        self._last_problem = last_problem = [None]

        def logger(component, instance, status, category, message):
            who = (instance or b"").decode(errors="replace")
            text = f"[{who}] {(message or b'').decode(errors='replace')}"
            messages.append(text)
            del messages[:-_MESSAGES_KEPT]
            if status >= 2:   # fmi2Discard, fmi2Error, fmi2Fatal
                last_problem[0] = text

        callbacks = fmi2CallbackFunctions()
        callbacks.logger = fmi2CallbackLoggerTYPE(logger)
        callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
        callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
        try:
            from fmpy.logging import addLoggerProxy
            addLoggerProxy(ctypes.byref(callbacks))
        except Exception:  # noqa: BLE001 - older FMPy: plain logger
            pass
        _CALLBACKS_KEPT_ALIVE.append(callbacks)
        by_name = {v.name: v for v in description.modelVariables}
        missing = [n for n in INPUT_NAMES + KINEMATICS_NAMES + RECORD_NAMES if n not in by_name]
        if missing:
            raise VehicleError(f"the FMU lacks the variables {missing[:5]}")
        real_p = ctypes.POINTER(ctypes.c_double)

        def refs(names):
            return (fmi2ValueReference * len(names))(*[by_name[n].valueReference for n in names])

        self.inputs, self.kinematics = inputs, kinematics
        self.recorded = recorded
        self._in = (refs(INPUT_NAMES), len(INPUT_NAMES), inputs.ctypes.data_as(real_p))
        self._kin = (refs(KINEMATICS_NAMES), len(KINEMATICS_NAMES), kinematics.ctypes.data_as(real_p))
        self._rec = (refs(RECORD_NAMES), len(RECORD_NAMES), self.recorded.ctypes.data_as(real_p))
        s = FMU2Slave(guid=description.guid, unzipDirectory=unzipped,
                      modelIdentifier=description.coSimulation.modelIdentifier,
                      instanceName=name)
        self.slave = s
        try:
            s.instantiate(loggingOn=True, callbacks=callbacks)
        except Exception as exc:  # noqa: BLE001 - FMPy raises on a NULL component
            raise VehicleError(f"{name}: fmi2Instantiate failed ({exc}): "
                               f"{self._last_error()}") from None
        try:
            self._set_up(parameters, by_name)
        except Exception:
            self.slave.freeInstance()   # not yet in the vehicle's list: free it here
            raise

    def _set_up(self, parameters, by_name):
        """Parameters, inputs and initialization (after fmi2Instantiate). The
        native front end answers a refused call (a value outside its declared
        range, a failed initialization) with fmi2Error and the reason logged;
        FMPy raises FMICallException: turned into a VehicleError with the reason."""
        from fmpy.fmi1 import FMICallException
        s, name = self.slave, self.name
        self._component = s.component
        dll = s.dll
        self._set_real, self._get_real, self._do_step = (
            dll.fmi2SetReal, dll.fmi2GetReal, dll.fmi2DoStep)
        for key, value in parameters.items():
            v = by_name.get(key)
            if v is None or v.causality != "parameter":
                raise VehicleError(f"{key!r} is not a parameter of the FMU")
            try:
                set_variable(s, v, value)
            except FMICallException as exc:
                raise VehicleError(f"{name}: the FMU refused {key} = {value!r} ({exc}): "
                                   f"{self._last_error()}") from None
        self._check(self._set_real(self._component, *self._in), "fmi2SetReal")
        try:
            s.setupExperiment(startTime=0.0)
            s.enterInitializationMode()
            s.exitInitializationMode()
        except FMICallException as exc:
            raise VehicleError(f"{name}: initialization failed ({exc}): "
                               f"{self._last_error()}") from None
        # pythonfmu 0.7.0 returned fmi2OK from a failed initialization and only
        # logged it; the native front end returns fmi2Error (above). Kept for the
        # pythonfmu fallback build: harmless.
        failure = [m for m in self.messages if "initialization failed" in m]
        if failure:
            raise VehicleError(f"{name}: {failure[-1]}")
        self.read_kinematics()
        self.read_record()

    def _last_error(self) -> str:
        """This instance's last message logged as a problem, else its last message."""
        if self._last_problem[0]:
            return self._last_problem[0]
        return self.messages[-1] if self.messages else "no message logged"

    def _check(self, status, function):
        if status > 1:    # fmi2OK 0, fmi2Warning 1; fmi2Discard 2, fmi2Error 3, fmi2Fatal 4
            raise VehicleError(f"{self.name}: {function} returned status {status} "
                               f"(last FMU message: {self._last_error()})")

    def step(self, t: float, h: float):
        """Set the inputs (the row `inputs`) and advance from t by h."""
        c = self._component
        self._check(self._set_real(c, *self._in), "fmi2SetReal")
        self._check(self._do_step(c, t, h, 1), "fmi2DoStep")

    def read_kinematics(self):
        self._check(self._get_real(self._component, *self._kin), "fmi2GetReal")
        return self.kinematics

    def read_record(self):
        self._check(self._get_real(self._component, *self._rec), "fmi2GetReal")
        return self.recorded

    def close(self):
        try:
            self.slave.terminate()
        finally:
            self.slave.freeInstance()
