"""The Python side of the project's native FMI 2.0 front end (fmu_wheelset/fmu/native).

Inside the FMU this file is ``resources/<package>/native_bridge.py`` where
``<package>`` is ``wheelset_fmu_<build hash>`` (one name per build, so two
builds and a host package called ``solver`` coexist in one process); the C
library imports that package by file location, without touching ``sys.path``,
and calls ``create``.

The C side owns the FMI state machine, the argument checks, the logger and the
getters/setters: every Real, Integer and Boolean variable lives in one float64
array (``Instance.values``, indexed by value reference) whose data pointer C
holds, so fmi2Get*/fmi2Set* never call Python. Python is called for strings,
the initialization, each doStep (one call) and the FMU states.

fmi2DoStep runs without Python when it can: after every call that
builds or restores the model (exitInitializationMode, set_state) the bridge
sets ``fast_step_address`` and ``fast_block_address``: a numba ``cfunc`` doing
the whole accepted step (solver/model/fast_step.py) and the block of array
addresses it works on; C calls it directly and takes the Python ``do_step``
only when it returns anything but ACCEPTED (the state then as before the
call). 0, 0: every step through Python (the cfunc could not be had -- logged
once -- or WHEELSET_FMU_FAST_STEP=0).

Every method returns an int: the FMI status (0 OK, 1 warning, 2 discard,
3 error) plus the flag ``MESSAGES`` when log messages are waiting
(``take_messages``) and ``TERMINAL`` when the model cannot go on (derailment:
fmi2Terminated). Nothing here raises into C for an expected failure; an
unexpected exception becomes fmi2Error with its text logged by C.
"""
from __future__ import annotations

import math
import os
import weakref

import numpy as np

from . import adapter
from . import fmu_state
from . import instance as fmu_instance
from .instance import DISCARD, ERROR, OK, WARNING
from .presets import PRESET_PARAMETER
from .variables import ENUMERATION_BY_NAME, VARIABLES, direct_inputs

MESSAGES = 0x100
TERMINAL = 0x200

KIND = {"Real": 0, "Integer": 1, "Enumeration": 1, "Boolean": 2, "String": 3}
CAUSALITY = {"parameter": 0, "input": 1, "output": 2}
FAST_STEP_SWITCH = "WHEELSET_FMU_FAST_STEP"   # "0": every fmi2DoStep through Python
CATEGORY = {OK: "logAll", WARNING: "logStatusWarning", DISCARD: "logStatusDiscard",
            ERROR: "logStatusError", fmu_instance.FATAL: "logStatusFatal"}


def variable_table() -> np.ndarray:
    """(n, 4) int32 per value reference: kind (0 Real, 1 Integer, 2 Boolean,
    3 String), causality (0 parameter, 1 input, 2 output), tunable (0/1),
    direct feedthrough (an input some output depends on directly, or an output
    depending directly on some input: variables.direct_inputs)."""
    feeding = {name for var in VARIABLES if var.causality == "output"
               for name in direct_inputs(var.name)}
    table = np.zeros((len(VARIABLES), 4), dtype=np.int32)
    for vr, var in enumerate(VARIABLES):
        feedthrough = (var.name in feeding if var.causality == "input"
                       else bool(direct_inputs(var.name)) if var.causality == "output" else False)
        table[vr] = (KIND[var.type], CAUSALITY[var.causality], 0, int(feedthrough))
    return table


def variable_limits() -> np.ndarray:
    """(n, 2) float64 per value reference: the declared [min, max] (Enumerations:
    their first and last item; -inf/inf where nothing is declared), checked by
    the C front end on every fmi2SetReal/fmi2SetInteger."""
    limits = np.empty((len(VARIABLES), 2))
    limits[:, 0], limits[:, 1] = -np.inf, np.inf
    for vr, var in enumerate(VARIABLES):
        if var.type == "Enumeration":
            limits[vr] = (0, len(ENUMERATION_BY_NAME[var.declared_type].items) - 1)
        elif var.type in ("Real", "Integer"):
            limits[vr] = (-np.inf if var.min is None else var.min,
                          np.inf if var.max is None else var.max)
    return limits


class Instance:
    """One FMU instance as the C front end sees it: the FmuInstance
    (fmu_wheelset/fmu/instance.py) on the value buffer C holds."""

    def __init__(self, instance_name: str, resources: str):
        self.instance_name = instance_name
        self.resources = resources
        self.values = np.zeros(len(VARIABLES))
        self.table = variable_table()
        self.values_address = self.values.ctypes.data
        self.table_address = self.table.ctypes.data
        self.limits = variable_limits()
        self.limits_address = self.limits.ctypes.data
        # per value reference: 1 once the host has set it (C marks the Real, Integer
        # and Boolean parameters it writes into `values`); a preset never
        # overwrites those
        self.host_set = np.zeros(len(VARIABLES), dtype=np.uint8)
        self.host_set_address = self.host_set.ctypes.data
        self.n_variables = len(VARIABLES)
        self.fast_step_address = 0       # the fast doStep (module docstring), 0: none
        self.fast_block_address = 0
        self._fast = None                # what the block points to, kept alive here
        self._fast_noted = set()         # what was logged about it (each kind once per instance)
        self._queue = []                 # (status, category, message) not yet taken by C
        self._new_instance()

    def _log(self, status: int, message: str):
        self._queue.append((status, CATEGORY.get(status, "logAll"), message))

    def _new_instance(self):
        self.fmu = fmu_instance.FmuInstance(self.instance_name, self.resources, self._log,
                                            values=self.values)
        self.host_set[:] = 0
        # the parameters' values in force (start values) readable from C
        self.fmu.fill_parameter_buffer()

    def _status(self, status: int) -> int:
        return status | (MESSAGES if self._queue else 0)

    def take_messages(self):
        """((status, category, message), ...) logged since the last call."""
        out = tuple((int(status), str(category), str(message))
                    for status, category, message in self._queue)
        self._queue.clear()
        return out

    def _refused(self) -> int:
        """ERROR if the last call was refused, else OK (and the messages flag)."""
        return self._status(ERROR if self.fmu.last_refusal is not None else OK)

    # -- FMI calls ------------------------------------------------------------
    def setup_experiment(self, start_time: float, stop_time=None) -> int:
        """The instance checks the times (finite, stop >= start); a refused setup
        is fmi2Error now and makes fmi2ExitInitializationMode fail until a valid
        fmi2SetupExperiment replaces it."""
        self.fmu.last_refusal = None
        self.fmu.setup_experiment(start_time, stop_time)
        return self._refused()

    def range_refusal(self, vr: int, value: float) -> str:
        """The message for a value outside the declared range of variable vr (the
        C front end found it; the value is kept, see docs/limits_and_failures.md)."""
        var = VARIABLES[vr]
        lo, hi = self.limits[vr]
        unit = f" {var.unit}" if var.unit and var.unit != "1" else ""
        kind = "Integer" if var.type == "Enumeration" else var.type
        shown = repr(int(value)) if kind == "Integer" and math.isfinite(value) else repr(float(value))
        if var.causality == "parameter":
            return (f"fmi2Set{kind}: parameter {var.name} = {shown} is outside its declared "
                    f"range [{lo:g}, {hi:g}]{unit}; fmi2ExitInitializationMode will fail")
        return (f"fmi2Set{kind}: {var.name} = {shown} outside [{lo:g}, {hi:g}]{unit} (the "
                "declared range); the next fmi2DoStep is discarded until the input is in range")

    def set_string(self, vr: int, value: str) -> int:
        """The instance checks it (a preset that cannot be read is fmi2Error, and
        fmi2ExitInitializationMode then fails with the reason); a preset puts its
        values in force into the buffer for every numeric parameter the host has
        not set itself."""
        var = VARIABLES[vr]
        self.fmu.last_refusal = None
        self.fmu.set_parameter(var.name, value)
        if var.name == PRESET_PARAMETER:
            self.fmu.fill_parameter_buffer(self.host_set)
        return self._refused()

    @staticmethod
    def variable_name(vr: int) -> str:
        return VARIABLES[vr].name

    def get_string(self, vr: int) -> str:
        """The value in force: the host's, else the start value (FMI 2.0 2.1.7)."""
        return str(self.fmu.value_in_force(VARIABLES[vr].name))

    def exit_initialization_mode(self) -> int:
        fmu = self.fmu
        fmu.sync_parameters_from_buffer()
        # the C front end has enforced the FMI 2.0 call order already (it has no
        # Python call for fmi2EnterInitializationMode): bring the instance's own
        # state machine to initialization mode before leaving it
        if fmu.phase == fmu_instance.INSTANTIATED:
            fmu.enter_initialization_mode()
        fmu.exit_initialization_mode()
        self._attach_fast_step()
        return self._status(ERROR if fmu.failure else OK)

    def do_step(self, current_time: float, step_size: float) -> int:
        outcome = self.fmu.do_step(current_time, step_size)
        if outcome.kind == "terminal":
            return self._status(DISCARD | TERMINAL)
        return self._status(outcome.status)

    def update_outputs(self) -> int:
        """Direct feedthrough: the host changed an input and reads an output
        that depends on it before the next doStep."""
        self.fmu.update_feedthrough_outputs()
        return self._status(OK)

    def reset(self) -> int:
        self._drop_fast_step()
        self._new_instance()
        return self._status(OK)

    # -- the fast doStep (solver/model/fast_step.py) ------------------------------------
    def _drop_fast_step(self):
        self.fast_step_address = 0
        self.fast_block_address = 0
        self._fast = None

    def _note_fast_step(self, kind: str, message: str, status: int):
        if kind not in self._fast_noted:
            self._fast_noted.add(kind)
            self._log(status, f"{self.instance_name}: {message}")

    def _attach_fast_step(self):
        """The cfunc and its block for the model as it is now (after it was built
        or restored); none before initialization or when it cannot be had."""
        self._drop_fast_step()
        if not self.fmu.ready_to_step():
            return
        if os.environ.get(FAST_STEP_SWITCH, "").strip() == "0":
            self._note_fast_step("off", f"fast doStep off ({FAST_STEP_SWITCH}=0): every "
                                 "fmi2DoStep runs the Python step", OK)
            return
        try:
            fast = self.fmu.fast_step()
        except Exception as exc:  # noqa: BLE001 - the Python step still works
            self._note_fast_step("unavailable", "fast doStep unavailable, every fmi2DoStep runs "
                                 f"the Python step: {type(exc).__name__}: {exc}", WARNING)
            return
        self._fast = fast
        self.fast_step_address = fast.address
        self.fast_block_address = fast.block_address
        self._note_fast_step("on", "fast doStep on (numba cfunc called from C; a step it does not "
                             "accept runs the Python step)", OK)

    def directional_derivative(self, unknowns, knowns, seed):
        """fmi2GetDirectionalDerivative: (status word, dz tuple) for the output
        value references `unknowns`, input value references `knowns` and the
        seed (FmuInstance.directional_derivative; C has checked the lengths)."""
        dz = self.fmu.directional_derivative(unknowns, knowns, seed)
        if dz is None:
            return self._status(ERROR), ()
        return self._status(OK), tuple(dz)

    # -- FMU state (the instance's format and checks: fmu_wheelset/fmu/fmu_state.py) -----
    def get_state(self):
        """An in-memory state (fmi2GetFMUstate): the instance's full snapshot and
        the instance and model it was taken from."""
        return MemoryState(self.fmu.get_fmu_state(), self.fmu, self.fmu.model)

    def set_state(self, state) -> int:
        fmu = self.fmu
        fmu.last_refusal = None
        if isinstance(state, MemoryState):
            if state.is_own(fmu):
                # this instance's own state, not seen outside the process: its
                # arrays copied back, no parse or checks (those are for states from
                # outside, fmi2DeSerializeFMUstate). Same model, same parameters,
                # same model array: the fast step's block (the same arrays) stays
                fmu.restore_own_state(state.snapshot)
                if self._fast is None:
                    self._attach_fast_step()
                return self._status(OK)
            state = state.snapshot
        fmu.set_fmu_state(state)
        if fmu.last_refusal is not None:
            return self._status(ERROR)
        fmu.fill_parameter_buffer()       # a state restored into a fresh instance
        self._attach_fast_step()
        return self._status(OK)

    def current_time(self) -> float:
        return self.fmu.time

    @staticmethod
    def serialize(state) -> bytes:
        if isinstance(state, MemoryState):
            state = state.snapshot
        return fmu_instance.state_to_bytes(state)

    def deserialize(self, blob: bytes):
        """(status word, snapshot or None): the snapshot parsed and checked field
        by field (never executed) and against this instance, with everything
        fmi2SetFMUstate would check, so that fmi2DeSerializeFMUstate refuses
        (fmi2Error, the reason logged) what the set would."""
        snapshot = fmu_instance.state_from_bytes(bytes(blob))
        try:
            self.fmu.check_state(snapshot)
        except Exception as exc:  # noqa: BLE001 - reported to the host
            reason = str(exc) if isinstance(exc, fmu_state.StateError) \
                else f"{type(exc).__name__}: {exc}"
            self.fmu.refuse(f"fmi2DeSerializeFMUstate: state refused: {reason}")
            return self._status(ERROR), None
        return self._status(OK), snapshot


class MemoryState:
    """What fmi2GetFMUstate keeps: the instance's snapshot (a dict of copies, the
    format of fmu_state.py) and weak references to the instance and core model it
    was taken from. Restored into that same instance and model, with the model's
    parameter array unchanged, it needs no checks: nothing outside the process
    has seen or changed it."""

    __slots__ = ("snapshot", "instance", "model", "__weakref__")

    def __init__(self, snapshot, instance, model):
        self.snapshot = snapshot
        self.instance = weakref.ref(instance)
        self.model = weakref.ref(model) if model is not None else None

    def is_own(self, instance) -> bool:
        return (self.instance() is instance and self.model is not None
                and instance.is_own_state(self.snapshot, self.model()))


def create(instance_name: str, resources: str) -> Instance:
    return Instance(instance_name, resources)
