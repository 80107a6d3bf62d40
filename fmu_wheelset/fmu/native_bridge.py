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
from . import slave as slave_module
from .adapter import N_PARAMETERS
from .slave import INPUT_NAMES, VARIABLES, Wheelset
from .presets import PRESET_PARAMETER
from .variables import ENUMERATION_BY_NAME, direct_inputs

OK, WARNING, DISCARD, ERROR = 0, 1, 2, 3
MESSAGES = 0x100
TERMINAL = 0x200

KIND = {"Real": 0, "Integer": 1, "Enumeration": 1, "Boolean": 2, "String": 3}
CAUSALITY = {"parameter": 0, "input": 1, "output": 2}
FAST_STEP_SWITCH = "WHEELSET_FMU_FAST_STEP"   # "0": every fmi2DoStep through Python
STATUS_CODE = {"ok": OK, "warning": WARNING, "discard": DISCARD, "error": ERROR, "fatal": 4,
               "pending": 5}


def variable_table() -> np.ndarray:
    """(n, 4) int32 per value reference: kind (0 Real, 1 Integer, 2 Boolean,
    3 String), causality (0 parameter, 1 input, 2 output), tunable (0/1),
    direct feedthrough (an input some output depends on directly, or an output
    depending directly on some input: slave.direct_inputs)."""
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
    """One FMU instance as the C front end sees it."""

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
        self.n_parameters = N_PARAMETERS
        self.n_inputs = len(INPUT_NAMES)
        self.fast_step_address = 0       # the fast doStep (module docstring), 0: none
        self.fast_block_address = 0
        self._fast = None                # what the block points to, kept alive here
        self._fast_noted = set()         # what was logged about it (each kind once per instance)
        self._new_slave()

    def _new_slave(self):
        self.slave = Wheelset(instance_name=self.instance_name, resources=self.resources,
                              value_buffer=self.values)
        self._queue = self.slave.log_queue
        self.host_set[:] = 0
        # the parameters' values in force (start values) readable from C
        self.slave.fill_parameter_buffer()
        names = [v.name for v in self.slave.vars.values()]
        if names != [v.name for v in VARIABLES] or list(self.slave.vars) != list(range(len(names))):
            raise RuntimeError("value references are not the VARIABLES order")

    def _status(self, status: int) -> int:
        return status | (MESSAGES if self._queue else 0)

    def take_messages(self):
        """((status, category, message), ...) logged since the last call."""
        out = tuple((STATUS_CODE.get(getattr(m.status, "name", ""), int(m.status)),
                     str(m.category), str(m.msg)) for m in self._queue)
        self._queue.clear()
        return out

    # -- FMI calls ------------------------------------------------------------
    def setup_experiment(self, start_time: float, stop_time=None) -> int:
        """The slave checks the times (finite, stop >= start); a refused setup is
        fmi2Error now and makes fmi2ExitInitializationMode fail until a valid
        fmi2SetupExperiment replaces it."""
        slave = self.slave
        slave.last_refusal = None
        slave.setup_experiment(start_time, stop_time)
        return self._status(ERROR if slave.last_refusal is not None else OK)

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
        """The slave checks it (a preset that cannot be read is fmi2Error, and
        fmi2ExitInitializationMode then fails with the reason); a preset puts its
        values in force into the buffer for every numeric parameter the host has
        not set itself."""
        var = VARIABLES[vr]
        slave = self.slave
        slave.last_refusal = None
        slave._set_parameter(var.name, value)
        if var.name == PRESET_PARAMETER:
            slave.fill_parameter_buffer(self.host_set)
        return self._status(ERROR if slave.last_refusal is not None else OK)

    @staticmethod
    def variable_name(vr: int) -> str:
        return VARIABLES[vr].name

    def get_string(self, vr: int) -> str:
        """The value in force: the host's, else the start value (FMI 2.0 2.1.7)."""
        return str(self.slave.value_in_force(VARIABLES[vr].name))

    def exit_initialization_mode(self) -> int:
        slave = self.slave
        slave.sync_parameters_from_buffer()
        # the C front end has enforced the FMI 2.0 call order already (it has no
        # Python call for fmi2EnterInitializationMode): bring the slave's own
        # state table to initialization mode before leaving it
        if slave._phase == "instantiated":
            slave.enter_initialization_mode()
        slave.exit_initialization_mode()
        self._attach_fast_step()
        return self._status(ERROR if slave._failed else OK)

    def do_step(self, current_time: float, step_size: float) -> int:
        slave = self.slave
        if slave.do_step(current_time, step_size):
            return MESSAGES if self._queue else OK
        failure = slave.step_failure
        if failure == "terminal":
            return self._status(DISCARD | TERMINAL)
        return self._status(DISCARD if failure == "discard" else ERROR)

    def update_outputs(self) -> int:
        """Direct feedthrough: the host changed an input and reads an output
        that depends on it before the next doStep."""
        self.slave.update_feedthrough_outputs()
        return self._status(OK)

    def reset(self) -> int:
        self._drop_fast_step()
        self._new_slave()
        return self._status(OK)

    # -- the fast doStep (solver/model/fast_step.py) ------------------------------------
    def _drop_fast_step(self):
        self.fast_step_address = 0
        self.fast_block_address = 0
        self._fast = None

    def _note_fast_step(self, kind: str, message: str, status):
        if kind not in self._fast_noted:
            self._fast_noted.add(kind)
            self.slave.log(f"{self.instance_name}: {message}", status)

    def _attach_fast_step(self):
        """The cfunc and its block for the model as it is now (after it was built
        or restored); none before initialization or when it cannot be had."""
        self._drop_fast_step()
        slave = self.slave
        model = slave._model
        if model is None or not model.initialized or slave._failed:
            return
        Fmi2Status = slave_module.Fmi2Status
        if os.environ.get(FAST_STEP_SWITCH, "").strip() == "0":
            self._note_fast_step("off", f"fast doStep off ({FAST_STEP_SWITCH}=0): every "
                                 "fmi2DoStep runs the Python step", Fmi2Status.ok)
            return
        try:
            core = slave._core
            fast, layout = core.fast_step, core.layout
            entry = fast.fmu_step_entry()
            step_data = model.step_data
            a = model.arrays
            n_outputs = len(slave._y)
            ints = np.zeros(layout.N_INTS, dtype=np.int64)
            ints[layout.I_N_PARAMETERS] = N_PARAMETERS
            ints[layout.I_N_INPUTS] = len(INPUT_NAMES)
            _, _, c_slot, dc_slot, cross_rail_distance = slave._input_map
            ints[layout.I_C_SLOT], ints[layout.I_DC_SLOT] = c_slot, dc_slot
            ints[layout.I_LIFT] = layout.REC_LIFT
            ints[layout.I_STATUS:layout.I_STATUS + 3] = adapter.STATUS_SLOTS
            ints[layout.I_MAX_SUBSTEPS] = model.params.max_substeps
            reals = np.zeros(layout.N_REALS)
            # (StepData's own scalars: pack_block)
            reals[layout.FR_SPEED] = float(model.params.speed)
            reals[layout.FR_FRICTION] = model.model[layout.M_FRICTION]
            reals[layout.FR_FLANGE_PASSED] = model.flange_passed
            reals[layout.FR_CROSS_RAIL_DISTANCE] = cross_rail_distance
            arrays = {
                "values": self.values, "input_lo": adapter.IN_LO,
                "input_hi": adapter.IN_HI, "output_lo": adapter.OUT_LO,
                "output_hi": adapter.OUT_HI, "slave_time": slave._slave_time,
                "matrix": slave._input_map[0], "offset": slave._input_map[1],
                "record_index": slave._record_index, "core_u": np.zeros(layout.N_INPUT),
                "y_new": np.zeros(n_outputs), "state": a.state, "clock": a.clock,
                "rhs_count": a.rhs_count, "safety_before": a.safety_before,
                "safety": a.safety,
                "u": a.inputs, "u_before": a.inputs_before,
                "keep_state": np.zeros_like(a.state),
                "keep_contact": np.zeros_like(a.contact),
                "keep_summary": np.zeros_like(a.summary),
                "keep_record": np.zeros_like(a.record),
                "keep_derived": np.zeros_like(a.derived),
                "keep_clock": np.zeros_like(a.clock),
                "keep_rhs_count": np.zeros_like(a.rhs_count),
                "keep_safety": np.zeros(2 * layout.N_SAFETY)}
            if (len(adapter.IN_LO) != len(INPUT_NAMES)
                    or len(adapter.OUT_LO) != n_outputs
                    or len(slave._record_index) != n_outputs - len(adapter.STATUS_SLOTS)):
                raise fast.BlockError("the FMU's input/output layout is not the fast step's")
            block, kept = fast.pack_block(arrays, step_data, ints, reals)
        except Exception as exc:  # noqa: BLE001 - the Python step still works
            self._note_fast_step("unavailable", "fast doStep unavailable, every fmi2DoStep runs "
                                 f"the Python step: {type(exc).__name__}: {exc}",
                                 Fmi2Status.warning)
            return
        self._fast = (entry, block, kept, step_data)
        self.fast_step_address = int(entry.address)
        self.fast_block_address = int(block.ctypes.data)
        self._note_fast_step("on", "fast doStep on (numba cfunc called from C; a step it does not "
                             "accept runs the Python step)", Fmi2Status.ok)

    def directional_derivative(self, unknowns, knowns, seed):
        """fmi2GetDirectionalDerivative: (status word, dz tuple) for the output
        value references `unknowns`, input value references `knowns` and the
        seed (slave.directional_derivative; C has checked the lengths)."""
        dz = self.slave.directional_derivative(unknowns, knowns, seed)
        if dz is None:
            return self._status(ERROR), ()
        return self._status(OK), tuple(dz)

    # -- FMU state (the slave's format and checks: fmu_wheelset/fmu/fmu_state.py) -----
    def get_state(self):
        """An in-memory state (fmi2GetFMUstate): the slave's full snapshot and
        the instance, model and model array it was taken from."""
        slave = self.slave
        return MemoryState(slave._get_fmu_state(), slave, slave._model)

    def set_state(self, state) -> int:
        slave = self.slave
        slave.last_refusal = None
        if isinstance(state, MemoryState):
            if state.is_own(slave):
                # this instance's own state, not seen outside the process: its
                # arrays copied back, no parse or checks (those are for states from
                # outside, fmi2DeSerializeFMUstate). Same model, same parameters,
                # same model array: the fast step's block (the same arrays) stays
                slave._restore_own_state(state.snapshot)
                if self._fast is None:
                    self._attach_fast_step()
                return self._status(OK)
            state = state.snapshot
        slave._set_fmu_state(state)
        if slave.last_refusal is not None:
            return self._status(ERROR)
        slave.fill_parameter_buffer()       # a state restored into a fresh instance
        self._attach_fast_step()
        return self._status(OK)

    def current_time(self) -> float:
        return float(self.slave._time)

    def serialize(self, state) -> bytes:
        if isinstance(state, MemoryState):
            state = state.snapshot
        return self.slave._fmu_state_to_bytes(state)

    def deserialize(self, blob: bytes):
        """(status word, snapshot or None): the snapshot parsed and checked field
        by field (never executed) and against this instance, with everything
        fmi2SetFMUstate would check, so that fmi2DeSerializeFMUstate refuses
        (fmi2Error, the reason logged) what the set would."""
        slave = self.slave
        snapshot = slave._fmu_state_from_bytes(bytes(blob))
        try:
            slave.check_state(snapshot)
        except Exception as exc:  # noqa: BLE001 - reported to the host
            reason = str(exc) if isinstance(exc, slave_module.fmu_state.StateError) \
                else f"{type(exc).__name__}: {exc}"
            slave._refuse(f"fmi2DeSerializeFMUstate: state refused: {reason}")
            return self._status(ERROR), None
        return self._status(OK), snapshot


class MemoryState:
    """What fmi2GetFMUstate keeps: the slave's snapshot (a dict of copies, the
    format of fmu_state.py) and weak references to the slave and core model it
    was taken from. Restored into that same slave and model, with the model's
    parameter array unchanged, it needs no checks: nothing outside the process
    has seen or changed it."""

    __slots__ = ("snapshot", "_slave", "_model", "__weakref__")

    def __init__(self, snapshot, slave, model):
        self.snapshot = snapshot
        self._slave = weakref.ref(slave)
        self._model = weakref.ref(model) if model is not None else None

    def is_own(self, slave) -> bool:
        snap = self.snapshot
        model = slave._model
        return (self._slave() is slave and model is not None and self._model is not None
                and self._model() is model and snap["initialized"] and snap["model"] is not None
                and slave._initialized
                and np.array_equal(snap["model"]["model"], model.model))


def create(instance_name: str, resources: str) -> Instance:
    return Instance(instance_name, resources)
