"""One instance of the wheelset FMU, whatever front end drives it.

`FmuInstance` holds everything of an instance -- the values of its variables,
the parameters in force, the core's model, the communication point, the FMI
state machine -- and does every FMI call on it through public methods. The two
front ends are thin adapters over it:

* pythonfmu's slave (fmu_wheelset/fmu/slave.py) registers the variables of the
  table with pythonfmu and forwards each callback here;
* the native front end's bridge (fmu_wheelset/fmu/native_bridge.py) hands C the
  value buffer and forwards the calls C does not do itself.

No physics here: the parameters, inputs and outputs are converted to the
core's by fmu_wheelset/fmu/adapter.py, as the table of variables
(fmu_wheelset/fmu/variables.py) says; the core is imported by core_loader.py.

The values: one float64 per variable, indexed by value reference
(`values`): the Real, Integer and Boolean parameters in force (NaN for the
strings), the inputs and the outputs. The native front end's C code reads and
writes the same array. Inputs and outputs are found in it by the value
references of adapter.INPUT_VRS and OUTPUT_VRS (value references are fixed
for good, variables.py: a variable added later gets the next free one,
wherever its kind puts it in the table).

Nothing here raises into a front end for an expected failure: a refused call
logs its reason with status ERROR (the front end returns fmi2Error where it
can: `last_refusal` keeps the reason), a step that cannot be taken returns a
`StepOutcome` saying why (fmi2Discard or fmi2Error, the model left as it was
before the step). Statuses are FMI 2.0's numbers (OK ... FATAL).

Bundled in the FMU beside the slave (``resources/wheelset_fmu_instance.py``, or
``instance.py`` in the native front end's package); imports nothing but the
standard library, NumPy and the FMU's own modules at module level.
"""
from __future__ import annotations

import math
import os
from typing import Any, Callable, Dict, NamedTuple, Optional, Tuple

import numpy as np

if __package__:
    from . import adapter
    from . import core_loader
    from . import fmu_state
    from . import presets as fmu_presets
    from . import variables as fmu_variables
else:
    import wheelset_fmu_adapter as adapter
    import wheelset_fmu_core_loader as core_loader
    import wheelset_fmu_presets as fmu_presets
    import wheelset_fmu_state as fmu_state
    import wheelset_fmu_variables as fmu_variables

FMU_VERSION = "0.1.0"
VARIABLES = fmu_variables.VARIABLES
INPUT_NAMES = fmu_variables.INPUT_NAMES

# FMI 2.0 status values (fmi2Status)
OK, WARNING, DISCARD, ERROR, FATAL = 0, 1, 2, 3, 4
# an instance's phases (FMI 2.0 co-simulation state machine; fmi2Reset makes a
# new instance)
INSTANTIATED, INITIALIZATION, INITIALIZED = "instantiated", "initialization", "initialized"
INITIALIZATION_FAILED, TERMINATED = "initialization failed", "terminated"


class StepOutcome(NamedTuple):
    """What one fmi2DoStep came to: `kind` "ok"; "discard" (a step refused, the
    state unchanged: fmi2Discard); "terminal" (the wheelset derails: fmi2Discard
    and fmi2Terminated); "error" (a call that breaks the FMI rules or a core
    failure: fmi2Error). `reason` says why (empty when ok); it was logged."""
    kind: str
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.kind == "ok"

    @property
    def status(self) -> int:
        return {"ok": OK, "discard": DISCARD, "terminal": DISCARD}.get(self.kind, ERROR)


STEP_OK = StepOutcome("ok")


class FastStep(NamedTuple):
    """The native front end's compiled doStep (a numba cfunc) and its block of
    addresses, with everything the block points to (kept alive here)."""
    entry: Any
    block: np.ndarray
    kept: list
    step_data: Any

    @property
    def address(self) -> int:
        return int(self.entry.address)

    @property
    def block_address(self) -> int:
        return int(self.block.ctypes.data)


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


class FmuInstance:
    """One FMU instance (module docstring). `log(status, message)` receives every
    message (status: OK ... FATAL); `values`: the value buffer to use (the
    native front end's array, one float64 per value reference), else its own."""

    def __init__(self, instance_name: str, resources: Optional[str],
                 log: Callable[[int, str], None], values: Optional[np.ndarray] = None):
        self.instance_name = instance_name
        self.resources = resources
        self._log = log
        starts = np.array([adapter.numeric_start(var) for var in VARIABLES])
        if values is None:
            values = starts
        else:
            values[:] = starts
        self.values = values
        # the values set by the host (the native front end copies every numeric one
        # in at fmi2ExitInitializationMode); a parameter not set has the preset's
        # value (parameter `preset`) or else its start value (`value_in_force`)
        self._host_values: Dict[str, Any] = {}
        self._presets: Dict[str, Tuple[Dict[str, Any], Optional[str]]] = {}
        self._index_cache: Dict[Any, Any] = {}     # (kind, value references) -> index
        self.model = None           # the core's WheelsetModel, from initialization on
        self.core = None            # the core's interface (core_loader.import_core)
        self.input_map = None       # (matrix, offset, cross-level slots) to the core's inputs
        self.record_index = None    # output slot -> index in the core's record
        self.initialized = False
        self.failure: Optional[str] = None        # why initialization failed
        self.last_refusal: Optional[str] = None   # the last call refused (fmi2Error)
        self.terminate_requested = False           # fmi2GetBooleanStatus(fmi2Terminated)
        self._forced_logged = 0                    # solver.forced_steps the log has told of
        self._setup_problem: Optional[str] = None  # a refused fmi2SetupExperiment
        self.phase = INSTANTIATED
        # the communication point, in an array the native front end's fast step
        # (solver/model/fast_step.py) advances too
        self.clock = np.zeros(1)
        self._outputs = np.zeros(adapter.N_OUTPUTS)   # scratch: the outputs of a step
        self._fast_books = None     # (ints, reals) of the fast step's block (fast_step)

    # -- messages --------------------------------------------------------------
    def log(self, message: str, status: int = OK) -> None:
        self._log(status, message)

    def refuse(self, message: str) -> None:
        """A call refused: logged with status ERROR; `last_refusal` keeps the
        reason for a front end that returns fmi2Error."""
        self.last_refusal = message
        self._log(ERROR, message)

    # -- the communication point -------------------------------------------------
    @property
    def time(self) -> float:
        return float(self.clock[0])

    @time.setter
    def time(self, value: float) -> None:
        self.clock[0] = value

    # -- parameters ----------------------------------------------------------------
    def default(self, name: str):
        """Start value of a parameter: its own, or the core's default
        (WheelsetParameters), read from the bundled core (imported here on first
        use, else in fmi2ExitInitializationMode)."""
        var = fmu_variables.BY_NAME[name]
        if name == fmu_presets.PRESET_PARAMETER:
            return fmu_presets.start_preset(self.resources)    # "" but in a case build
        if var.start is not fmu_variables.CORE_DEFAULT:
            return var.start
        try:
            core = self.core if self.core is not None else core_loader.import_core(self.resources)[0]
            return fmu_variables.start_value(var, core)
        except Exception as exc:  # noqa: BLE001 - a getter must not raise (fmi2Fatal)
            self._log(ERROR, f"{self.instance_name}: the default of {name} cannot be read from "
                      f"the core: {exc}")
            return {"Real": 0.0, "Integer": 0, "Enumeration": 0, "Boolean": False}.get(var.type, "")

    def set_parameter(self, name: str, value) -> None:
        """fmi2Set* of a parameter: kept when it may be set now (a value that
        cannot be used is kept too, so that fmi2ExitInitializationMode fails with
        the reason: a refused value must not leave the default silently in place)."""
        if self.phase not in (INSTANTIATED, INITIALIZATION, INITIALIZED):
            self.refuse(f"parameter {name} cannot be set: the instance is {self.phase} "
                        "(fmi2Reset first); the value is ignored")
            return
        if self.initialized:
            self.refuse(f"parameter {name} cannot be changed after initialization "
                        f"(fixed variability); the new value {value!r} is ignored")
            return
        var = fmu_variables.BY_NAME[name]
        if name == fmu_presets.PRESET_PARAMETER:
            problem = self.preset(value)[1]
            if problem is not None:
                self.refuse(f"fmi2SetString: {problem}; fmi2ExitInitializationMode will fail")
        elif var.type in ("Real", "Integer") and _is_number(value) and (
                (var.min is not None and value < var.min)
                or (var.max is not None and value > var.max)):
            self.refuse(f"fmi2Set{var.type}: parameter {name} = {value!r} is outside its "
                        f"declared range [{var.min:g}, {var.max:g}]"
                        + (f" {var.unit}" if var.unit and var.unit != "1" else "")
                        + "; fmi2ExitInitializationMode will fail")
        self._host_values[name] = value

    def preset(self, name) -> Tuple[Dict[str, Any], Optional[str]]:
        """(values, problem) of preset `name` (fmu_wheelset/fmu/presets.py, files in
        resources/presets): ({}, None) for "" or a good preset's values; ({}, the
        reason) when it cannot be used. Read once per name and instance."""
        name = str(name)
        found = self._presets.get(name)
        if found is None:
            directory = os.path.join(self.resources, "presets") if self.resources else None
            try:
                found = (fmu_presets.load_preset(name, directory), None)
            except fmu_presets.PresetError as exc:
                found = ({}, str(exc))
            except Exception as exc:  # noqa: BLE001 - a getter must not raise
                found = ({}, f"preset {name!r}: {type(exc).__name__}: {exc}")
            if len(self._presets) < 64:
                self._presets[name] = found
        return found

    def _preset_name(self, host_values: Dict[str, Any]) -> str:
        name = fmu_presets.PRESET_PARAMETER
        return host_values[name] if name in host_values else self.default(name)

    def _in_force(self, host_values: Dict[str, Any], name: str):
        if name in host_values:
            return host_values[name]
        preset = self._preset_name(host_values)
        if preset and name != fmu_presets.PRESET_PARAMETER:
            chosen = self.preset(preset)[0]
            if name in chosen:
                return chosen[name]
        return self.default(name)

    def value_in_force(self, name: str):
        """What fmi2Get* returns for parameter `name` (FMI 2.0 2.1.7: the actual
        value): the host's value, else the preset's, else its start value."""
        return self._in_force(self._host_values, name)

    def given_values(self) -> Dict[str, Any]:
        """The parameters given by the host or the preset (the others take the
        core's defaults), for the core's parameters."""
        preset = self._preset_name(self._host_values)
        return {**(self.preset(preset)[0] if preset else {}), **self._host_values}

    def fill_parameter_buffer(self, host_set=None) -> None:
        """Every numeric parameter's value in force (set, the preset's, or the
        start value) into the value buffer, so that fmi2GetReal/Integer/Boolean
        read it from C. `host_set`: per value reference, nonzero where the host
        has set the value in the buffer itself (left as it is)."""
        for vr in adapter.PARAMETER_VRS.tolist():
            var = VARIABLES[vr]
            if var.type != "String" and (host_set is None or not host_set[vr]):
                self.values[vr] = float(self.value_in_force(var.name))

    def sync_parameters_from_buffer(self) -> None:
        """The numeric parameters from the value buffer (the native front end's
        fmi2SetReal/Integer/Boolean write them there)."""
        for vr in adapter.PARAMETER_VRS.tolist():
            var = VARIABLES[vr]
            x = float(self.values[vr])
            if var.type == "Real":
                self._host_values[var.name] = x
            elif var.type in ("Integer", "Enumeration"):
                self._host_values[var.name] = int(x) if math.isfinite(x) else x
            elif var.type == "Boolean":
                self._host_values[var.name] = x != 0.0

    # -- inputs and outputs ------------------------------------------------------
    def inputs(self) -> np.ndarray:
        """The inputs (INPUT_NAMES order), a copy."""
        return self.values[adapter.INPUT_VRS]

    def outputs(self) -> np.ndarray:
        """The outputs (OUTPUT_NAMES order), a copy."""
        return self.values[adapter.OUTPUT_VRS]

    def io_index(self, kind: str, vrs) -> Optional[np.ndarray]:
        """The value references as an index array when all are inputs or outputs
        of this kind ("Real", "Integer", "Boolean"), else None. Built once per list."""
        key = (kind, tuple(vrs))
        try:
            return self._index_cache[key]
        except KeyError:
            pass
        io_kind = adapter.IO_KIND
        n = len(io_kind)
        ok = all(isinstance(vr, int) and 0 <= vr < n and io_kind[vr] == kind for vr in key[1])
        index = np.array(key[1], dtype=np.intp) if ok else None
        if len(self._index_cache) < 256:      # hosts use a handful of lists
            self._index_cache[key] = index
        return index

    def set_inputs(self, vrs, values) -> bool:
        """fmi2SetReal of inputs (`vrs` all Real inputs: else False, nothing set).
        A value outside its declared range is kept and logged; the next
        fmi2DoStep is discarded until it is in range (docs/SECURITY.md)."""
        if self.phase in (TERMINATED, INITIALIZATION_FAILED):
            self.refuse(f"fmi2SetReal refused: the instance is {self.phase} (FMI 2.0: "
                        "fmi2Reset first); nothing set")
            return True
        index = self.io_index("Real", vrs)
        if index is None or len(values) != len(index):
            return False
        outputs = [VARIABLES[vr].name for vr in index.tolist()
                   if VARIABLES[vr].causality == "output"]
        if outputs:
            self.refuse(f"fmi2SetReal refused: {', '.join(outputs)} "
                        f"{'is an output' if len(outputs) == 1 else 'are outputs'} "
                        "(causality output: FMI 2.0 allows no set); nothing set")
            return True
        self.values[index] = values
        u = self.values[index]
        lo, hi = adapter.LO[index], adapter.HI[index]
        if not ((u >= lo) & (u <= hi)).all():
            # NaN passes here: doStep refuses it as not finite
            bad = [f"{VARIABLES[vr].name} = {x!r} outside [{VARIABLES[vr].min:g}, "
                   f"{VARIABLES[vr].max:g}] {VARIABLES[vr].unit}"
                   for vr, x in zip(index.tolist(), u.tolist())
                   if x < adapter.LO[vr] or x > adapter.HI[vr]]
            self.refuse("fmi2SetReal: " + ", ".join(bad) + " (the declared range); "
                        "the next fmi2DoStep is discarded until the input is in range")
        return True

    def store_outputs(self, reason: str = "") -> None:
        """The outputs from the core's record into the value buffer; the status
        flags from the reason of a discarded step (the record then still holds the
        state before the step). The numba function the fast step uses too
        (solver/model/fast_step.py)."""
        fast = self.core.fast_step
        code = {"derailment": fast.REASON_DERAILMENT,
                "excessive_penetration": fast.REASON_PENETRATION}.get(reason, fast.REASON_NONE)
        fast.fmu_outputs(self.model.record, self.record_index, self.core.layout.REC_LIFT,
                         adapter.STATUS_SLOTS, code, self._outputs)
        self.values[adapter.OUTPUT_VRS] = self._outputs

    # -- the FMI calls ----------------------------------------------------------------
    def setup_experiment(self, start_time, stop_time=None, tolerance=None) -> None:
        """The first doStep must start at start_time (FMI 2.0 fmi2SetupExperiment).
        Refused (logged, and fmi2ExitInitializationMode then fails with the
        reason): a call after initialization, a start time that is not finite, a
        stop time before it, a negative or non-finite tolerance (docs/SECURITY.md)."""
        problem = None
        if self.phase != INSTANTIATED:
            problem = (f"the instance is {self.phase} (FMI 2.0: only before "
                       "fmi2EnterInitializationMode)")
        elif start_time is None or not _is_number(start_time) or not math.isfinite(start_time):
            problem = f"startTime {start_time!r} is not a finite number"
        elif stop_time is not None and (not _is_number(stop_time) or math.isnan(stop_time)
                                        or stop_time < start_time):
            problem = f"stopTime {stop_time!r} is not a number >= startTime {start_time!r}"
        elif tolerance is not None and (not _is_number(tolerance) or not tolerance >= 0.0
                                        or math.isinf(tolerance)):
            problem = f"tolerance {tolerance!r} is not a finite number >= 0"
        if problem is not None:
            message = f"{self.instance_name}: fmi2SetupExperiment refused: {problem}"
            if self.phase == INSTANTIATED:       # a bad value: initialization fails
                self._setup_problem = message
            self.refuse(message)
            return
        self._setup_problem = None
        self.time = float(start_time)

    def enter_initialization_mode(self) -> None:
        if self.phase != INSTANTIATED:
            self.refuse(f"{self.instance_name}: fmi2EnterInitializationMode refused: the "
                        f"instance is {self.phase} (FMI 2.0: only after fmi2Instantiate or "
                        "fmi2Reset)")
            return
        self.phase = INITIALIZATION

    def exit_initialization_mode(self) -> None:
        """Builds the model (the static equilibrium at t = 0 with the inputs set
        so far). A bad parameter is logged with status ERROR (`failure` says
        why) and every doStep then fails with the reason."""
        if self.phase == INSTANTIATED:
            self.refuse(f"{self.instance_name}: fmi2ExitInitializationMode refused: "
                        "fmi2EnterInitializationMode was not called (FMI 2.0 state order)")
            return
        if self.phase != INITIALIZATION:
            # a second call must not rebuild the model silently
            self.refuse(f"{self.instance_name}: fmi2ExitInitializationMode refused: the "
                        f"instance is {self.phase}, not in initialization mode (fmi2Reset "
                        "first); state unchanged")
            return
        if self._setup_problem is not None:
            self.phase = INITIALIZATION_FAILED
            self.failure = f"initialization failed: {self._setup_problem}"
            self._log(ERROR, f"{self.instance_name}: {self.failure}")
            return
        self._forced_logged = 0
        self._initialize_model()

    def _checked_inputs(self, subject: str) -> Tuple[np.ndarray, Optional[str]]:
        """(the inputs, None or why they cannot be used: `subject` "are not
        finite: ..." or "are outside their declared range: ...")."""
        u = self.inputs()
        if ((u >= adapter.IN_LO) & (u <= adapter.IN_HI)).all():   # NaN fails both
            return u, None
        bad = [f"{n} = {float(x)!r}" for n, x in zip(INPUT_NAMES, u.tolist())
               if not math.isfinite(x)]
        if bad:
            return u, f"{subject} not finite: " + ", ".join(bad)
        bad = [f"{v.name} = {float(x)!r} outside [{v.min:g}, {v.max:g}] {v.unit}"
               for v, x in zip(fmu_variables.INPUTS, u.tolist()) if not v.min <= x <= v.max]
        return u, f"{subject} outside their declared range: " + ", ".join(bad)

    def _initialize_model(self) -> None:
        self.phase = INITIALIZATION_FAILED     # until the model is built
        try:
            problem = self.preset(self._preset_name(self._host_values))[1]
            if problem is not None:
                raise ValueError(problem)
            core, where = core_loader.import_core(self.resources)
            self.core = core
            params = adapter.make_parameters(self, core)
            model = core.WheelsetModel(params)
            input_map = adapter.input_map(
                {flag: self.value_in_force(flag) for flag in adapter.FROM_INPUT_FLAGS}, core)
            # declared ranges are checked on every set (docs/SECURITY.md): the
            # static equilibrium is not sought from inputs outside them
            u, problem = self._checked_inputs("input(s) set in initialization mode are")
            if problem is not None:
                raise ValueError(problem)
            # the inputs set in initialization mode (axle-box loads, rail motion)
            # are those of the static equilibrium at t = 0
            model.initialize(adapter.core_inputs(u, input_map, core))
        except Exception as exc:  # noqa: BLE001 - reported to the host
            self.failure = f"initialization failed: {exc}"
            self._log(ERROR, f"{self.instance_name}: {self.failure}")
            return
        self._log(OK, f"{self.instance_name}: solver imported from {where}")
        self.model = model
        self.failure = None
        self.initialized = True
        self.phase = INITIALIZED
        self.input_map = input_map
        self.record_index = adapter.record_index(core)
        self.store_outputs()

    def _fail(self, kind: str, message: str) -> StepOutcome:
        self._log(ERROR, message)
        return StepOutcome(kind, message)

    def do_step(self, current_time: float, step_size: float) -> StepOutcome:
        """fmi2DoStep: the step from current_time to current_time + step_size with
        the inputs as set; the outcome says what came of it (StepOutcome)."""
        if self.phase == TERMINATED:
            self.last_refusal = (f"{self.instance_name}: fmi2DoStep after fmi2Terminate (FMI 2.0: "
                                 "not allowed; fmi2Reset or free the instance); step discarded")
            return self._fail("error", self.last_refusal)
        model = self.model
        if model is None:
            return self._fail("error", f"{self.instance_name}: " + (
                self.failure or "doStep before initialization") + "; step discarded")
        now = self.time
        if not abs(current_time - now) <= 1e-9 * max(1.0, abs(now)):
            return self._fail("error", f"doStep at communication point {current_time!r} s, but "
                              f"the FMU is at t = {now!r} s (FMI 2.0: the previous point + step "
                              "size; roll back with fmi2SetFMUstate to repeat a step); step "
                              "discarded")
        u, problem = self._checked_inputs(f"t = {current_time:g} s: input(s)")
        if problem is not None:
            return self._fail("discard", problem + "; step discarded, state unchanged")
        try:
            core_inputs = adapter.core_inputs(u, self.input_map, self.core)
            # the core checks the step size and its inputs before it integrates
            # and restores its state itself when it discards a step
            result = model.advance_vector(step_size, core_inputs,
                                          handed=self._handed(current_time, step_size))
        except Exception as exc:  # noqa: BLE001 - reported to the host
            return self._fail("error", f"t = {current_time:g} s: step failed: {exc}; step "
                              "discarded")
        if result.status != "ok":
            self.store_outputs(result.reason)
            message = (f"t = {current_time:g} s: step cannot be completed: "
                       f"{result.message or result.status}")
            if result.reason != "derailment":
                return self._fail("discard", message)
            # FMI 2.0 section 4.2.3: fmi2DoStep returns fmi2Discard and
            # fmi2GetBooleanStatus(fmi2Terminated) true: the simulation should end;
            # a rollback clears it
            self._log(ERROR, message)
            self.terminate_requested = True
            return self._fail("terminal", f"t = {current_time:g} s: the wheelset derails: the "
                              "simulation should end (fmi2Terminated), or roll back with "
                              "fmi2SetFMUstate")
        self.store_outputs()
        self._log_forced_steps(f"t = {current_time:g} s")
        y = self._outputs
        if not ((y >= adapter.OUT_LO) & (y <= adapter.OUT_HI)).all():
            # an output would leave its declared range (NaN too): the step is taken
            # back, so that no output the host reads is ever outside its declaration
            bad = [f"{v.name} = {float(x)!r} outside [{v.min:g}, {v.max:g}]"
                   + (f" {v.unit}" if v.unit and v.unit != "1" else "")
                   for v, x in zip(fmu_variables.OUTPUTS, y.tolist())
                   if not (v.min is None or x >= v.min) or not (v.max is None or x <= v.max)]
            model.undo_step()
            self.store_outputs()
            # a refused step, state unchanged: fmi2Discard (FMI 2.0 section 4.2.3)
            return self._fail("discard", f"t = {current_time:g} s: step discarded, state "
                              "unchanged: output(s) outside their declared range (the model "
                              "leaves its validity): " + ", ".join(bad[:5])
                              + (f" and {len(bad) - 5} more" if len(bad) > 5 else ""))
        self.time = current_time + step_size
        return STEP_OK

    def terminate(self) -> None:
        if self.phase != INITIALIZED:
            self.refuse(f"{self.instance_name}: fmi2Terminate refused: the instance is "
                        f"{self.phase} (FMI 2.0: only after initialization)")
            return
        self.phase = TERMINATED
        self._log_forced_steps("at fmi2Terminate")

    def _log_forced_steps(self, when: str) -> None:
        """A warning in the log with the number of internal steps accepted with
        their error test failed (solver.forced_steps), when there are any and more
        than were logged last (the fast doStep does not log: the count is its
        output solver.forced_steps, and this summary)."""
        model = self.model
        count = 0 if model is None else int(model.forced_steps)
        if count > self._forced_logged:
            self._log(WARNING, f"{when}: {count} internal step(s) accepted with the error test "
                      f"failed at the integrator's shortest step (contact impacts or switches; "
                      f"output solver.forced_steps; docs/convergence.md)")
            self._forced_logged = count

    # -- the native front end's fast doStep (solver/model/fast_step.py) -------------
    def _handed(self, t: float, h: float):
        """The outcome of the step at t of h that the fast step has just run and
        handed over (fast_step._hand: the model as that step left it), or None.
        Taken once."""
        books = self._fast_books
        if books is None:
            return None
        ints, reals = books
        layout = self.core.layout
        if not ints[layout.I_HANDED]:
            return None
        ints[layout.I_HANDED] = 0
        if not (reals[layout.FR_HANDED_T] == t and reals[layout.FR_HANDED_H] == h):
            raise RuntimeError("the fast step handed over another step than this one")
        return (int(ints[layout.I_HANDED_CODE]), int(ints[layout.I_HANDED_WHERE]),
                int(ints[layout.I_HANDED_RHS]), float(reals[layout.FR_HANDED_NEEDED]))

    def ready_to_step(self) -> bool:
        """Is there an initialized model to step?"""
        return self.model is not None and self.model.initialized and not self.failure

    def fast_step(self) -> "FastStep":
        """The compiled doStep of this instance and the block of addresses it
        works on (the model's arrays, the value buffer, the input map, the
        declared ranges): valid while this model lives. Raises when it cannot be
        had (the Python step still works)."""
        core, model = self.core, self.model
        fast, layout = core.fast_step, core.layout
        entry = fast.fmu_step_entry()
        step_data = model.step_data
        a = model.arrays
        ints = np.zeros(layout.N_INTS, dtype=np.int64)
        ints[layout.I_N_INPUTS] = adapter.N_INPUTS
        matrix, offset, c_slot, dc_slot, cross_rail_distance = self.input_map
        ints[layout.I_C_SLOT], ints[layout.I_DC_SLOT] = c_slot, dc_slot
        ints[layout.I_LIFT] = layout.REC_LIFT
        ints[layout.I_STATUS:layout.I_STATUS + 3] = adapter.STATUS_SLOTS
        ints[layout.I_MAX_SUBSTEPS] = model.params.max_substeps
        reals = np.zeros(layout.N_REALS)
        # (StepData's own scalars: pack_block)
        reals[layout.FR_SPEED] = float(model.params.speed)
        reals[layout.FR_FLANGE_PASSED] = model.flange_passed
        reals[layout.FR_CROSS_RAIL_DISTANCE] = cross_rail_distance
        if len(self.record_index) != adapter.N_OUTPUTS - len(adapter.STATUS_SLOTS):
            raise fast.BlockError("the FMU's outputs are not the fast step's")
        arrays = {
            "values": self.values, "input_vrs": adapter.INPUT_VRS.copy(),
            "output_vrs": adapter.OUTPUT_VRS.copy(), "fmu_u": np.zeros(adapter.N_INPUTS),
            "input_lo": adapter.IN_LO.copy(), "input_hi": adapter.IN_HI.copy(),
            "output_lo": adapter.OUT_LO.copy(), "output_hi": adapter.OUT_HI.copy(),
            "slave_time": self.clock, "matrix": matrix, "offset": offset,
            "record_index": self.record_index, "core_u": np.zeros(layout.N_INPUT),
            "y_new": np.zeros(adapter.N_OUTPUTS), "state": a.state, "clock": a.clock,
            "rhs_count": a.rhs_count, "safety_before": a.safety_before, "safety": a.safety,
            "u": a.inputs, "u_before": a.inputs_before,
            "keep_state": np.zeros_like(a.state), "keep_contact": np.zeros_like(a.contact),
            "keep_summary": np.zeros_like(a.summary), "keep_record": np.zeros_like(a.record),
            "keep_derived": np.zeros_like(a.derived), "keep_clock": np.zeros_like(a.clock),
            "keep_rhs_count": np.zeros_like(a.rhs_count),
            "keep_safety": np.zeros(2 * layout.N_SAFETY), "keep_u": np.zeros_like(a.inputs),
            "keep_u_before": np.zeros_like(a.inputs_before)}
        block, kept = fast.pack_block(arrays, step_data, ints, reals)
        self._fast_books = (ints, reals)
        return FastStep(entry, block, kept, step_data)

    # -- direct feedthrough ------------------------------------------------------------
    def update_feedthrough_outputs(self) -> bool:
        """The outputs at the current state with the inputs as they are now (the
        direct feedthrough of variables.direct_inputs: the contact at the current
        pose against the rails where the host has just put them). False, outputs
        left as they are, before initialization or with a non-finite input (the
        next doStep reports it)."""
        model = self.model
        u = self.inputs()
        if model is None or not np.isfinite(u).all():
            return False
        model.set_inputs(adapter.core_inputs(u, self.input_map, self.core))
        model.rhs(model.state)          # contact search + forces at the current state
        model.refresh_record()
        self.store_outputs()
        return True

    def _feedthrough_scratch(self):
        """Every array update_feedthrough_outputs writes but the value buffer (the
        core's contact search and results, the record, the core's inputs, the
        running-safety memory): what directional_derivative puts back bit for bit."""
        a = self.model.arrays
        arrays = [a.inputs, *a.search, a.contact, a.summary, a.deriv, a.search_key, a.record,
                  a.derived, a.safety, self._outputs]
        if a.table_scratch is not None:
            arrays.extend(a.table_scratch)
        return arrays

    def _derivative_indices(self, name, unknowns, knowns):
        """(output slots, input slots, feedthrough matrix) of value references
        that are all Real outputs / Real inputs, else None with the reason logged."""
        slots = []
        for vrs, causality, what in ((unknowns, "output", "outputs"), (knowns, "input", "inputs")):
            found = []
            for vr in vrs:
                var = VARIABLES[vr] if isinstance(vr, int) and 0 <= vr < len(VARIABLES) else None
                if var is None or var.type != "Real" or var.causality != causality:
                    self.refuse(f"{name}: value reference {vr} is not a Real {causality} (the "
                                f"{'unknowns' if causality == 'output' else 'knowns'} of a "
                                f"co-simulation FMU are its {what})")
                    return None
                found.append(adapter.SLOT[vr])
            slots.append(np.array(found, dtype=np.intp))
        out_index, in_index = slots
        return out_index, in_index, adapter.FEEDTHROUGH[np.ix_(out_index, in_index)]

    def directional_derivative(self, unknowns, knowns, seed):
        """FMI 2.0 fmi2GetDirectionalDerivative (section 2.1.9) for co-simulation:
        dz = (d outputs / d inputs) . seed at the current state and inputs, the
        outputs `unknowns` and the inputs `knowns` given as value references.
        Only the direct feedthrough counts (variables.direct_inputs, the
        ModelStructure dependencies): an output that depends on none of the seeded
        inputs directly has derivative 0; the others are central differences of
        update_feedthrough_outputs along the seed, the step scaled so that no
        input moves by more than its adapter.FD_STEP (a fraction of the contact's
        penetration / creepage: second-order error ~(step/penetration)^2 ~ 1e-4
        relative for Hertz). Nothing of the state changes: every array the
        evaluation writes is put back bit for bit. Returns the list dz, or None
        with the reason logged (fmi2Error)."""
        name = "fmi2GetDirectionalDerivative"
        if self.model is None or not self.initialized:
            self.refuse(f"{name}: the instance is {self.phase}; the wheelset model is built in "
                        "fmi2ExitInitializationMode, no derivative before it")
            return None
        key = ("derivative", tuple(unknowns), tuple(knowns))
        indices = self._index_cache.get(key)
        if indices is None:
            indices = self._derivative_indices(name, key[1], key[2])
            if indices is None:
                return None
            if len(self._index_cache) < 256:      # hosts use a handful of lists
                self._index_cache[key] = indices
        out_index, in_index, feeds = indices
        seed = np.array(seed, dtype=float)
        if seed.shape != (len(in_index),) or not np.isfinite(seed).all():
            self.refuse(f"{name}: the seed dvKnown must be {len(in_index)} finite numbers")
            return None
        u = self.inputs()
        if not np.isfinite(u).all():
            bad = [INPUT_NAMES[j] for j in np.flatnonzero(~np.isfinite(u))]
            self.refuse(f"{name}: input(s) {', '.join(bad)} not finite: no derivative")
            return None
        # outputs fed directly by a seeded input; all others: 0 by the ModelStructure
        fed = feeds[:, seed != 0.0].any(axis=1)
        dz = np.zeros(len(out_index))
        if not fed.any():
            return dz.tolist()
        ratio = float(np.max(np.abs(seed) / adapter.FD_STEP[in_index]))
        eps = 1.0 / ratio
        arrays = self._feedthrough_scratch()
        saved = [a.copy() for a in arrays]
        saved_values = self.values.copy()
        found = []
        try:
            for sign in (1.0, -1.0):
                perturbed = u.copy()
                np.add.at(perturbed, in_index, sign * eps * seed)
                self.values[adapter.INPUT_VRS] = perturbed
                if not self.update_feedthrough_outputs():
                    raise ValueError("the perturbed inputs are not finite")
                found.append(self._outputs[out_index].copy())
        except Exception as exc:  # noqa: BLE001 - reported, state put back below
            self.refuse(f"{name}: the outputs could not be evaluated about the current state: "
                        f"{type(exc).__name__}: {exc}")
            return None
        finally:
            np.copyto(self.values, saved_values)
            for array, copy in zip(arrays, saved):
                np.copyto(array, copy)
        dz[fed] = ((found[0] - found[1]) / (2.0 * eps))[fed]
        if not np.isfinite(dz).all():
            self.refuse(f"{name}: a derivative is not finite (contact search failed about the "
                        "current state)")
            return None
        return dz.tolist()

    # -- FMU state: the WHOLE state, deep (format: fmu_wheelset/fmu/fmu_state.py) ----
    def get_fmu_state(self) -> Dict[str, Any]:
        """fmi2GetFMUstate: a snapshot (a dict of copies)."""
        return {
            "guid": fmu_state.build_guid(self.resources),
            "values": dict(self._host_values),
            "io": self.values[adapter.IO_VRS],
            "model": self.model.get_state() if self.model is not None else None,
            "initialized": self.initialized,
            "time": self.time,
        }

    def set_fmu_state(self, state) -> None:
        """fmi2SetFMUstate: restore a snapshot of get_fmu_state or of
        state_from_bytes after the checks of fmu_wheelset/fmu/fmu_state.py; one
        that fails them is refused with the reason logged (ERROR) and the
        instance left as it was."""
        try:
            self._restore_state(state)
        except fmu_state.StateError as exc:
            self.refuse(f"fmi2SetFMUstate: state refused, instance unchanged: {exc}")
        except Exception as exc:  # noqa: BLE001 - never raise into a front end
            self.refuse(f"fmi2SetFMUstate: state refused, instance unchanged: "
                        f"{type(exc).__name__}: {exc}")

    @staticmethod
    def _saved_model(state):
        if isinstance(state, fmu_state.Rejected):
            raise fmu_state.StateError(state.reason)
        if not isinstance(state, dict):
            raise fmu_state.StateError(f"not a state of this FMU ({type(state).__name__})")
        if not state["initialized"] or state["model"] is None:
            raise fmu_state.StateError(
                "the state was saved before initialization (fmi2GetFMUstate before "
                "fmi2ExitInitializationMode); it holds no wheelset state to restore")
        return state["model"]

    def _check_preset_of(self, state):
        problem = self.preset(self._preset_name(state["values"]))[1]
        if problem is not None:
            raise fmu_state.StateError(f"its preset cannot be used: {problem}")

    def _restore_state(self, state):
        self._saved_model(state)
        self._check_preset_of(state)
        built_here = False
        phase = self.phase
        if self.model is None:
            # a state serialised by another instance: build the model from the
            # parameters in the state, then check and overwrite its state
            saved_values = dict(self._host_values)
            self._host_values.clear()
            self._host_values.update(state["values"])
            self.initialized = False
            self._initialize_model()
            if self.model is None:
                reason = self.failure
                self._host_values.clear()
                self._host_values.update(saved_values)
                self.failure = None
                self.phase = phase
                raise fmu_state.StateError(f"its parameters do not initialize the FMU: {reason}")
            built_here = True
        try:
            self._check_against_model(state)
        except fmu_state.StateError:
            if built_here:
                self.model, self.initialized, self.phase = None, False, phase
            raise
        self.restore_own_state(state)

    def restore_own_state(self, state) -> None:
        """A state this instance took of its current model, without the checks
        (the native bridge's MemoryState.is_own): the arrays copied back, so the
        rollback is the same bit for bit."""
        self.model.set_state(state["model"])
        self.values[adapter.IO_VRS] = state["io"]
        self.initialized = True
        self.terminate_requested = False
        self.phase = INITIALIZED
        self.time = float(state["time"])
        self._forced_logged = min(self._forced_logged, int(self.model.forced_steps))

    def _check_against_model(self, state):
        """StateError unless `state` fits this initialized instance: the same
        parameters in force, the build, the core's shapes and constants, and
        every array entry within its range (fmu_wheelset/fmu/fmu_state.py)."""
        for var in fmu_variables.PARAMETERS:
            saved = self._in_force(state["values"], var.name)
            here = self.value_in_force(var.name)
            if saved != here:
                raise fmu_state.StateError(
                    f"it was saved with parameter {var.name} = {saved!r}, this instance has "
                    f"{here!r}")
        layout = self.core.layout
        state_bounds, array_bounds = adapter.restore_bounds(self.core, self.input_map)
        fmu_state.check_against_instance(
            state, guid=fmu_state.build_guid(self.resources), live_model=self.model.get_state(),
            nan_allowed={"inputs": (layout.U_CURVATURE, layout.U_CANT)},
            state_bounds=state_bounds, array_bounds=array_bounds)

    def check_state(self, state) -> None:
        """StateError unless set_fmu_state would restore `state` into this
        instance now; nothing of the instance changes (fmi2DeSerializeFMUstate
        refuses what the set would). An instance without a model checks it the
        way the set would: by building one, in a scratch instance."""
        if self.model is None or not self.initialized:
            scratch = FmuInstance(f"{self.instance_name} (state check)", self.resources,
                                  lambda status, message: None)
            scratch._restore_state(state)
            return
        self._saved_model(state)
        self._check_preset_of(state)
        self._check_against_model(state)

    def is_own_state(self, state, model) -> bool:
        """Was `state` (a snapshot) taken of this instance's current model
        (`model`: the model it was taken of), the model's parameter array
        unchanged since? Then it needs no checks (restore_own_state)."""
        live = self.model
        return (live is not None and model is live and self.initialized
                and state["initialized"] and state["model"] is not None
                and np.array_equal(state["model"]["model"], live.model))


def state_to_bytes(state: Dict[str, Any]) -> bytes:
    """fmi2SerializeFMUstate of a snapshot (fmu_wheelset/fmu/fmu_state.py)."""
    return fmu_state.encode(state, guid=state.get("guid", ""), fmu_version=FMU_VERSION,
                            parameter_kinds=adapter.PARAMETER_KINDS)


def state_from_bytes(blob: bytes):
    """The checked snapshot, or fmu_state.Rejected(reason) (never raises);
    set_fmu_state reports a rejection."""
    try:
        return fmu_state.decode(blob, parameters=adapter.PARAMETER_SCHEMA,
                                io_ranges=adapter.IO_RANGES,
                                distance_range=adapter.DISTANCE_RANGE)
    except fmu_state.StateError as exc:
        return fmu_state.Rejected(str(exc))
    except Exception as exc:  # noqa: BLE001
        return fmu_state.Rejected(f"{type(exc).__name__}: {exc}")
