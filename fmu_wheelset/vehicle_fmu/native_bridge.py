"""The Python side of the vehicle-bodies FMU (VehicleBodies.fmu) for the
project's native FMI 2.0 front end (fmu_wheelset/fmu/native, compiled
unchanged under the model identifier VehicleBodies).

Inside the FMU this file is ``resources/<package>/native_bridge.py`` (package
``vehicle_bodies_fmu_<build hash>``); the C library imports it by file
location and calls ``create``, and then reads and writes the value buffer
``Instance.values`` (one float64 per value reference) without Python. The
bodies' equations are cosim/vehicle's (parameters, curve_layout, bodies,
body_step), bundled as ``resources/<package>/bodies_source/solver/`` and
imported from a verified per-user cache copy (the wheelset FMU's cache.py,
bundled as it is) so that numba's on-disk cache survives new extractions.

The first value references are body_step's io vector, so the buffer's first
N_IO entries are what ``bodies_step`` reads and writes. Every fmi2DoStep runs
``bodies_step`` through a numba cfunc called from C (attached at
fmi2ExitInitializationMode, set up for 1 ms steps); a step it refuses (a
non-finite input, another step size, another communication point) comes here
and is reported or, for a new step size, taken after the step's matrix is
rebuilt (the cfunc then takes the following steps of that size).

Every method returns an int: the FMI status (0 OK, 1 warning, 2 discard,
3 error) plus MESSAGES when log messages wait in ``take_messages``.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import math
import os
import sys

import numpy as np

from . import cache

OK, WARNING, DISCARD, ERROR = 0, 1, 2, 3
MESSAGES = 0x100
KIND = {"Real": 0, "Integer": 1, "Boolean": 2, "String": 3}
CAUSALITY = {"parameter": 0, "input": 1, "output": 2}
CATEGORY = {OK: "logAll", WARNING: "logStatusWarning", DISCARD: "logStatusDiscard",
            ERROR: "logStatusError"}
HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "variables.json"), encoding="utf-8") as _f:
    _TABLE = json.load(_f)
VARIABLES = _TABLE["variables"]
N_IO = _TABLE["n_io"]
VEHICLE_FIELDS = _TABLE["vehicle_fields"]      # [(field, [parameter names])]
BY_NAME = {v["name"]: vr for vr, v in enumerate(VARIABLES)}

_MODEL = []


def bodies_model():
    """The bundled cosim/vehicle modules (parameters, curve_layout, bodies,
    body_step), imported once per process from the verified cache copy
    (or from the resources when there is none)."""
    if _MODEL:
        return _MODEL[0]
    source = os.path.join(HERE, "bodies_source")
    digest = cache.tree_digest(os.path.join(source, "solver"))[:cache.DIGEST_CHARS]
    name = f"vehicle_bodies_{digest}"
    note = ""
    if name not in sys.modules:
        stable, note = cache.stable_solver_dir(source, kind="vehicle-bodies")
        where = os.path.join(stable if stable is not None else source, "solver")
        cache.import_package_as(name, where)
    modules = {m: importlib.import_module(f"{name}.{m}")
               for m in ("parameters", "curve_layout", "bodies", "body_step")}
    _MODEL.append((modules, note))
    return _MODEL[0]


class Instance:
    """One FMU instance as the C front end sees it."""

    def __init__(self, instance_name: str, resources: str):
        self.instance_name = instance_name
        self.resources = resources
        n = len(VARIABLES)
        self.n_variables = n
        self.values = np.zeros(n)
        self.table = np.zeros((n, 4), dtype=np.int32)
        self.limits = np.zeros((n, 2))
        for vr, v in enumerate(VARIABLES):
            self.table[vr] = (KIND[v["type"]], CAUSALITY[v["causality"]], 0, 0)
            self.limits[vr] = (v["min"], v["max"])
        self.host_set = np.zeros(n, dtype=np.uint8)
        self.values_address = self.values.ctypes.data
        self.table_address = self.table.ctypes.data
        self.limits_address = self.limits.ctypes.data
        self.host_set_address = self.host_set.ctypes.data
        self._messages = []
        self._start_values()

    def _start_values(self):
        for vr, v in enumerate(VARIABLES):
            self.values[vr] = v["start"]
        self.io = self.values[:N_IO]          # body_step's io vector (a view)
        self.work = None
        self.model = None
        self.time = 0.0
        self.start_time = 0.0
        self._drop_fast_step()
        # the outputs in initialization mode (a master passes them on before the
        # wheelsets leave it: their static equilibrium is found under them): those
        # of the start values; fmi2ExitInitializationMode recomputes them from the
        # parameters in force (the C front end calls no Python before it)
        self._set_up()
        self.work = None

    def _log(self, status: int, text: str):
        self._messages.append((status, CATEGORY[status], f"{self.instance_name}: {text}"))

    def _status(self, status: int) -> int:
        return status | (MESSAGES if self._messages else 0)

    def take_messages(self):
        out = tuple(self._messages)
        self._messages.clear()
        return out

    # -- FMI calls ------------------------------------------------------------
    def setup_experiment(self, start_time: float, stop_time=None) -> int:
        if not math.isfinite(start_time) or (stop_time is not None and not stop_time >= start_time):
            self._log(ERROR, f"fmi2SetupExperiment: start {start_time!r}, stop {stop_time!r} refused")
            return self._status(ERROR)
        self.start_time = float(start_time)
        self.time = self.start_time
        return self._status(OK)

    def range_refusal(self, vr: int, value: float) -> str:
        v = VARIABLES[vr]
        return (f"{v['name']} = {value!r} is outside its declared range [{v['min']:g}, "
                f"{v['max']:g}] {v['unit']}".rstrip())

    @staticmethod
    def variable_name(vr: int) -> str:
        return VARIABLES[vr]["name"]

    def get_string(self, vr: int) -> str:
        raise ValueError("the vehicle-bodies FMU has no String variables")

    def set_string(self, vr: int, value: str) -> int:
        self._log(ERROR, "fmi2SetString: the vehicle-bodies FMU has no String variables")
        return self._status(ERROR)

    def _value(self, name: str) -> float:
        return float(self.values[BY_NAME[name]])

    def exit_initialization_mode(self) -> int:
        try:
            note = self._set_up()
        except (ValueError, RuntimeError, np.linalg.LinAlgError) as exc:
            self._log(ERROR, f"initialization failed: {exc}")
            self.work = None
            return self._status(ERROR)
        self._log(OK, f"bodies ready ({note or 'bundled code'}), scheme "
                      f"{int(self._value('coupling.scheme'))}")
        self.time = self.start_time
        self._attach_fast_step()      # C takes the address after this call
        return self._status(OK)

    def _set_up(self) -> str:
        """The bodies' model and work array from the parameters in the buffer, and
        the outputs at the start time."""
        (modules, note) = bodies_model()
        bp, layout_m, bodies_m, step_m = (modules[m] for m in
                                          ("parameters", "curve_layout", "bodies", "body_step"))
        values = {}
        for field, names in VEHICLE_FIELDS:
            got = tuple(self._value(n) for n in names)
            values[field] = got if len(got) > 1 else got[0]
        vehicle = bp.VehicleParameters(**values)
        radius = self._value("track.curve_radius")
        layout = layout_m.CurveLayout(radius=math.inf if radius == 0.0 else radius,
                                      cant=self._value("track.cant"),
                                      straight=self._value("track.straight"),
                                      transition=self._value("track.transition"))
        self.model = bodies_m.VehicleModel(vehicle)
        push = (int(self._value("push.wheelset")) - 1, self._value("push.force"),
                self._value("push.duration"))
        self.layout = layout
        self.work = step_m.set_up(self.model, layout, self._value("vehicle.speed"), 1e-3,
                                  int(self._value("coupling.scheme")), push)
        self.step_module = step_m
        step_m.initial_outputs(self.model, layout, self.work, self.io, self.start_time)
        return note

    def do_step(self, current_time: float, step_size: float) -> int:
        step = self.step_module
        if self.work is None:
            self._log(ERROR, "fmi2DoStep: not initialized")
            return self._status(ERROR)
        sc = self.work[step.W_SCALARS:step.W_SCALARS + 16]
        reached = sc[step.SC_TIME] if sc[step.SC_STEPS] > 0 else self.start_time
        if not abs(current_time - reached) <= 1e-9 * max(1.0, abs(reached)):
            self._log(ERROR, f"fmi2DoStep: communication point {current_time!r} s is not the "
                             f"last one reached ({reached!r} s); this FMU cannot go back")
            return self._status(ERROR)
        if step_size != sc[step.SC_RATE_STEP]:
            try:
                step.set_step(self.model, self.work, step_size)
            except ValueError as exc:
                self._log(ERROR, f"fmi2DoStep: {exc}")
                return self._status(ERROR)
        status = step.bodies_step(current_time, step_size, self.io, self.work)
        if status == step.STEP_BAD_INPUT:
            bad = [VARIABLES[i]["name"] for i in range(N_IO) if not math.isfinite(self.values[i])]
            self._log(DISCARD, f"fmi2DoStep at t = {current_time!r} s: non-finite input(s) "
                               f"{', '.join(bad[:4])}; step discarded")
            return self._status(DISCARD)
        if status != step.STEP_OK:
            self._log(ERROR, f"fmi2DoStep at t = {current_time!r} s refused (code {status})")
            return self._status(ERROR)
        self.time = current_time + step_size
        return self._status(OK)

    def update_outputs(self) -> int:
        return self._status(OK)          # no direct feedthrough

    def reset(self) -> int:
        self._start_values()
        self.host_set[:] = 0
        return self._status(OK)

    def _drop_fast_step(self):
        self.fast_step_address = 0
        self.fast_block_address = 0
        self._block = None

    def _attach_fast_step(self):
        if os.environ.get("WHEELSET_FMU_FAST_STEP", "").strip() == "0":
            return
        try:
            entry = self.step_module.c_step_function()
        except Exception as exc:  # noqa: BLE001 - the Python step still works
            self._log(WARNING, f"fast doStep unavailable ({type(exc).__name__}: {exc}); every "
                               "fmi2DoStep runs through Python")
            self.fast_step_address = 0
            return
        self._block = np.array([self.io.ctypes.data, self.work.ctypes.data], dtype=np.int64)
        self._entry = entry
        self.fast_block_address = int(self._block.ctypes.data)
        self.fast_step_address = int(entry.address)

    def directional_derivative(self, unknowns, knowns, seed):
        self._log(ERROR, "fmi2GetDirectionalDerivative: not provided by the vehicle-bodies FMU")
        return self._status(ERROR), ()

    # -- FMU state: a copy of the value buffer and the work array ---------------
    def get_state(self):
        return (self.values.copy(), None if self.work is None else self.work.copy(), self.time)

    def set_state(self, state) -> int:
        values, work, time = state
        self.values[:] = values
        if work is not None and self.work is not None:
            self.work[:] = work
        self.time = time
        return self._status(OK)

    def current_time(self) -> float:
        step = self.step_module if self.work is not None else None
        if step is not None and self.work[step.W_SCALARS + step.SC_STEPS] > 0:
            return float(self.work[step.W_SCALARS + step.SC_TIME])
        return float(self.time)

    def serialize(self, state) -> bytes:
        raise ValueError("the vehicle-bodies FMU does not serialize its state "
                         "(canSerializeFMUstate=false)")

    def deserialize(self, blob: bytes):
        self._log(ERROR, "fmi2DeSerializeFMUstate: not supported (canSerializeFMUstate=false)")
        return self._status(ERROR), None


def create(instance_name: str, resources: str) -> Instance:
    return Instance(instance_name, resources)
