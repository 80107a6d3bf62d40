"""pythonfmu slave of the wheelset FMU (FMI 2.0 co-simulation).

No physics here: this module only converts FMI variables to the core's
``WheelsetParameters``, its input vector and its output record
(``docs/CONVENTIONS.md``, "Wheelset core"), as the table of variables
(``fmu_wheelset/fmu/variables.py``) says, by the functions of
``fmu_wheelset/fmu/adapter.py``. The core's import is
``fmu_wheelset/fmu/core_loader.py``, the direct feedthrough and the directional
derivative ``fmu_wheelset/fmu/feedthrough.py``. A parameter the host does not
set takes the core's default.

Inside the FMU this file is ``resources/wheelset_fmu_slave.py`` beside the table
(``resources/wheelset_fmu_variables.py``), the modules above
(``resources/wheelset_fmu_adapter.py``, ...) and a copy of the ``solver`` package;
pythonfmu enters through ``resources/wheelset_slave.py``
(``fmu_wheelset/fmu/slave_entry.py``, which imports the class from here: see there
why). It imports nothing but the standard library, NumPy and pythonfmu at module
level, so that pythonfmu can instantiate it cheaply at build time to read the
start values. The core is imported and the model created in
``exit_initialization_mode``; ``fmi2Instantiate`` also drops the duplicate
``sys.path`` entries that pythonfmu adds for every instance.

Per-step data path (one communication step costs ~one numba call plus a few
NumPy operations, see benchmarks/bench_fmu.py): the inputs and outputs live in
one float array per instance (``_io``: the Real inputs, then the outputs in
their declaration order); ``fmi2SetReal`` writes the inputs into it,
``fmi2DoStep`` maps them to the core's input vector with one matrix product
(plus the cross-level roll, which is not linear), calls
``WheelsetModel.advance_vector`` and copies the outputs from the core's record
(``solver.model.fast_step.fmu_core_inputs`` and ``fmu_outputs``, numba);
``fmi2GetReal/Integer/Boolean`` read the array through an index built once per
list of value references. In the native front end (fmu_wheelset/fmu/native) the
whole accepted step runs without Python: a numba ``cfunc``
(solver/model/fast_step.py) on the same arrays, with the same numba functions, so
``do_step`` here runs only for the steps it hands over (bad input, a discard,
...), recomputing them from the unchanged state. The communication point
(``_time``) lives in the array ``_slave_time`` for that reason.

Variable names follow the FMI 2.0 "structured" convention: dots for the
hierarchy, ``[i]`` (1-based) for the contact slots, ``left`` / ``right`` for the
sides (``fmu_wheelset/fmu/variables.py``); the outputs carry the names of the core's
output record (``solver.model.outputs.RECORD_INDEX``).

Status mapping of pythonfmu 0.7.0 (its C++ wrapper, ``fmi2DoStep``):
``do_step`` returning ``False`` gives **fmi2Discard**; a Python exception in any
callback gives **fmi2Fatal**, and pythonfmu then releases the instance's Python
objects, which ``fmi2FreeInstance`` releases a second time (a crash later in the
host). There is no way to return fmi2Error from Python. So nothing here raises:
a step that cannot be completed (NaN or infinite input, derailment, loss of all
contact, a core error) returns ``False`` -> fmi2Discard, with the reason logged
with status fmi2Error and the model left as it was before the step (the host
may roll back with fmi2SetFMUstate, change its inputs and retry). Bad
parameters (unknown profile, unreadable file, value out of range) are found in
``fmi2ExitInitializationMode``: it logs the reason with status fmi2Error (its
own return status stays fmi2OK, pythonfmu cannot do otherwise) and every
``fmi2DoStep`` then returns fmi2Discard with that reason.

Several instances may live in one process: everything is per instance; the
module holds only constants.
"""
from __future__ import annotations

import math
import os
import sys
import weakref
from typing import Any, Dict, Optional, Tuple

import numpy as np
try:
    # inside the FMU's own package (native front end, fmu_wheelset/fmu/native_bridge.py):
    # the copy of pythonfmu's slave API bundled in that package, never a top-level
    # name that would shadow the host's pythonfmu
    from .pythonfmu import Fmi2Slave
    from .pythonfmu.enums import Fmi2Causality, Fmi2Initial, Fmi2Status, Fmi2Variability
    from .pythonfmu.variables import Boolean, Integer, Real, String
except ImportError:
    from pythonfmu import Fmi2Slave
    from pythonfmu.enums import Fmi2Causality, Fmi2Initial, Fmi2Status, Fmi2Variability
    from pythonfmu.variables import Boolean, Integer, Real, String

FMU_VERSION = "0.1.0"

# The table of variables: fmu_wheelset/fmu/variables.py, bundled in the FMU as
# resources/wheelset_fmu_variables.py beside this file (fmu_wheelset/packaging/build.py).
# The FMU state format and the solver cache: fmu_wheelset/fmu/fmu_state.py and
# fmu_wheelset/fmu/cache.py, bundled as resources/wheelset_fmu_state.py and
# resources/wheelset_fmu_cache.py. The presets: fmu_wheelset/fmu/presets.py (bundled as
# resources/wheelset_fmu_presets.py) reading resources/presets/<name>.toml. The
# conversion to and from the core, the core's import and the direct feedthrough:
# fmu_wheelset/fmu/adapter.py, core_loader.py and feedthrough.py, bundled as
# resources/wheelset_fmu_adapter.py, wheelset_fmu_core_loader.py and
# wheelset_fmu_feedthrough.py.
if __package__:
    from . import adapter
    from . import core_loader
    from . import fmu_state
    from . import presets as fmu_presets
    from . import variables as fmu_variables
    from .feedthrough import FeedthroughMixin
else:
    import wheelset_fmu_adapter as adapter
    import wheelset_fmu_core_loader as core_loader
    from wheelset_fmu_feedthrough import FeedthroughMixin
    import wheelset_fmu_presets as fmu_presets
    import wheelset_fmu_state as fmu_state
    import wheelset_fmu_variables as fmu_variables

VARIABLES = fmu_variables.VARIABLES
INPUT_NAMES = fmu_variables.INPUT_NAMES
OUTPUT_NAMES = fmu_variables.OUTPUT_NAMES
STATUS_NAMES = fmu_variables.STATUS_NAMES
INF = float("inf")

_FMI_CLASS = {"Real": Real, "Integer": Integer, "Enumeration": Integer,
              "Boolean": Boolean, "String": String}
_CAUSALITY = {"parameter": Fmi2Causality.parameter, "input": Fmi2Causality.input,
              "output": Fmi2Causality.output}
_VARIABILITY = {"fixed": Fmi2Variability.fixed, "continuous": Fmi2Variability.continuous,
                "discrete": Fmi2Variability.discrete}
_INITIAL = {"exact": Fmi2Initial.exact, "approx": Fmi2Initial.approx, None: None}


# ---------------------------------------------------------------------------
# living with pythonfmu 0.7.0's instantiation (see fmu_wheelset/fmu/slave_entry.py)
# ---------------------------------------------------------------------------
_ENTRY_GLOBALS_KEPT: list = []


def keep_globals_alive(namespace: dict) -> None:
    """One reference to the entry module's globals per execution of that module
    (pythonfmu releases one it never took each time it executes it)."""
    _ENTRY_GLOBALS_KEPT.append(namespace)


def drop_duplicate_path_entries(entry: Optional[str]) -> None:
    """pythonfmu inserts the resources folder at the front of sys.path for every
    instance; keep its first occurrence only (sys.path would grow by one entry
    per instantiation, and every import searches it)."""
    if not entry:
        return
    first = True
    kept = []
    for p in sys.path:
        if p == entry:
            if not first:
                continue
            first = False
        kept.append(p)
    if len(kept) != len(sys.path):
        sys.path[:] = kept


# ---------------------------------------------------------------------------
# the slave
# ---------------------------------------------------------------------------
class Wheelset(FeedthroughMixin, Fmi2Slave):
    """Railway wheelset with multipoint wheel-rail contact (6 DOF, SI units)."""

    author = "wheelset-fmu contributors"
    description = ("Railway wheelset with multipoint wheel-rail contact (trace-line "
                   "multipoint detection, Hertz normal contact, Kalker/SHE/Polach/FASTSIM "
                   "creep), 6-DOF dynamics; inputs: primary suspension forces on the axle "
                   "boxes, axle torque, rail motion; SI units")
    version = FMU_VERSION
    license = "MIT"

    def __init__(self, **kwargs):
        value_buffer = kwargs.pop("value_buffer", None)
        super().__init__(**kwargs)
        drop_duplicate_path_entries(self.resources)
        # everything per instance; __init__ is cheap (no solver import). The values
        # set by the host (the native front end copies every numeric one in at
        # fmi2ExitInitializationMode); a parameter not set has the preset's value
        # (parameter `preset`) or else its start value (`value_in_force`)
        self._values: Dict[str, Any] = {}
        self._presets: Dict[str, Tuple[Dict[str, Any], Optional[str]]] = {}  # name -> (values, problem)
        # one float per variable, indexed by value reference (the table's order):
        # the parameters (NaN for strings and core defaults, see
        # fill_parameter_buffer), then the inputs and outputs. The native front end
        # reads and writes it from C (``value_buffer``: its array).
        starts = np.array([adapter.numeric_start(var) for var in VARIABLES])
        if value_buffer is not None:
            value_buffer[:] = starts
            starts = value_buffer
        self._buffer = starts
        # inputs then outputs, in declaration order (the FMU state copies this array)
        self._io = self._buffer[adapter.N_PARAMETERS:]
        self._u = self._io[:len(INPUT_NAMES)]          # views, never rebound
        self._y = self._io[len(INPUT_NAMES):]
        self._io_slot: Dict[int, Tuple[str, int]] = {}  # value reference -> (kind, slot in _io)
        self._index_cache: Dict[Any, Any] = {}          # (kind, vrs) -> index array or None
        self._real_names: Dict[int, str] = {}           # value reference -> name, Reals only
        self._model = None
        self._core = None           # the core's interface (core_loader.import_core)
        self._initialized = False
        self._failed: Optional[str] = None
        self.last_refusal: Optional[str] = None
        self.terminate_requested = False           # fmi2GetBooleanStatus(fmi2Terminated)
        self._setup_problem: Optional[str] = None   # a refused fmi2SetupExperiment
        self._terminated = False
        # FMI 2.0 co-simulation state: instantiated -> initialization -> initialized
        # (stepComplete) -> terminated; fmi2Reset makes a new instance
        self._phase = "instantiated"
        # the communication point, in an array that the native front end's fast
        # step (solver/model/fast_step.py) advances too; `_time` reads and writes it
        self._slave_time = np.zeros(1)
        self._time = 0.0
        self._input_map = None      # (matrix, offset, cross-level slots) to the core's inputs
        self._record_index = None   # output slot -> index in the core's record
        slot = 0
        for var in VARIABLES:
            self._register(var, None if var.causality == "parameter" else slot)
            if var.causality != "parameter":
                slot += 1

    # -- registration ------------------------------------------------------
    def _register(self, var, slot: Optional[int]):
        """Register one variable of the table (fmu_wheelset/fmu/variables.py)."""
        name = var.name
        cls = _FMI_CLASS[var.type]
        io = self._io
        # a weak reference: no cycle instance -> variable -> setter -> instance,
        # so that fmi2FreeInstance frees the instance at once (no wait for the
        # cyclic garbage collector)
        owner = weakref.ref(self)
        if slot is None:
            getter = lambda: owner().value_in_force(name)      # noqa: E731
        else:
            getter = lambda: io[slot]                           # noqa: E731
        kwargs = dict(causality=_CAUSALITY[var.causality],
                      variability=_VARIABILITY[var.variability],
                      description=var.description, getter=getter)
        if var.initial is not None:
            kwargs["initial"] = _INITIAL[var.initial]
        if var.causality == "parameter":
            kwargs["setter"] = lambda value: owner()._set_parameter(name, value)
        elif var.causality == "input":
            kwargs["setter"] = lambda value: io.__setitem__(slot, value)
        variable = cls(name, **kwargs)
        self.register_variable(variable, nested=False)
        if var.type == "Real":
            self._real_names[variable.value_reference] = name
        if slot is not None:
            self._io_slot[variable.value_reference] = (var.type, slot)

    def _default(self, name: str):
        """Start value of a parameter: its own, or the core's default
        (WheelsetParameters), read from the bundled core (imported here on first
        use, else in fmi2ExitInitializationMode)."""
        var = fmu_variables.BY_NAME[name]
        if name == fmu_presets.PRESET_PARAMETER:
            return fmu_presets.start_preset(self.resources)    # "" but in a case build
        if var.start is not fmu_variables.CORE_DEFAULT:
            return var.start
        try:
            core = (self._core if self._core is not None
                    else core_loader.import_core(self.resources)[0])
            return fmu_variables.start_value(var, core)
        except Exception as exc:  # noqa: BLE001 - a getter must not raise (fmi2Fatal)
            self._error(f"{self.instance_name}: the default of {name} cannot be read from "
                        f"the core: {exc}")
            return {"Real": 0.0, "Integer": 0, "Enumeration": 0, "Boolean": False}.get(var.type, "")

    def _set_parameter(self, name: str, value):
        if self._phase not in ("instantiated", "initialization", "initialized"):
            self._refuse(f"parameter {name} cannot be set: the instance is {self._phase} "
                         "(fmi2Reset first); the value is ignored")
            return
        if self._initialized:
            # pythonfmu 0.7.0 cannot return fmi2Error from fmi2SetReal (an exception
            # would be fmi2Fatal): the value is refused and the error logged.
            self._refuse(f"parameter {name} cannot be changed after initialization "
                         f"(fixed variability); the new value {value!r} is ignored")
            return
        var = fmu_variables.BY_NAME[name]
        if name == fmu_presets.PRESET_PARAMETER:
            problem = self._preset(value)[1]
            if problem is not None:
                # kept, so that fmi2ExitInitializationMode fails with the same reason
                self._refuse(f"fmi2SetString: {problem}; fmi2ExitInitializationMode will fail")
        if var.type in ("Real", "Integer") and (
                not _is_number(value) or not math.isfinite(value)
                or (var.min is not None and value < var.min)
                or (var.max is not None and value > var.max)):
            # kept, so that fmi2ExitInitializationMode fails with the same reason
            # (a refused value must not leave the default silently in place)
            self._refuse(f"fmi2Set{var.type}: parameter {name} = {value!r} is outside its "
                         f"declared range [{var.min:g}, {var.max:g}]"
                         + (f" {var.unit}" if var.unit and var.unit != "1" else "")
                         + "; fmi2ExitInitializationMode will fail")
        self._values[name] = value

    # -- presets and the values in force ---------------------------------------
    def _preset(self, name) -> Tuple[Dict[str, Any], Optional[str]]:
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

    def _preset_name(self, values: Dict[str, Any]) -> str:
        """The preset in force with the host's values `values`."""
        name = fmu_presets.PRESET_PARAMETER
        return values[name] if name in values else self._default(name)

    def _in_force(self, values: Dict[str, Any], name: str):
        """The value parameter `name` has with the host's values `values`: the
        host's, else the named preset's, else the start value."""
        if name in values:
            return values[name]
        preset = self._preset_name(values)
        if preset and name != fmu_presets.PRESET_PARAMETER:
            chosen = self._preset(preset)[0]
            if name in chosen:
                return chosen[name]
        return self._default(name)

    def value_in_force(self, name: str):
        """What fmi2Get* returns for parameter `name` (FMI 2.0 2.1.7: the actual
        value): the host's value, else the preset's, else its start value."""
        return self._in_force(self._values, name)

    def given_values(self) -> Dict[str, Any]:
        """The parameters given by the host or the preset (the others take the
        core's defaults), for the core's parameters."""
        preset = self._preset_name(self._values)
        return {**(self._preset(preset)[0] if preset else {}), **self._values}

    # -- the native front end's value buffer ---------------------------------
    def fill_parameter_buffer(self, host_set=None):
        """Every numeric parameter's value in force (set, the preset's, or the
        start value) into the value buffer, so that fmi2GetReal/Integer/Boolean
        read it from C. `host_set`: per value reference, nonzero where the host
        has set the value in the buffer itself (left as it is)."""
        for vr, var in enumerate(VARIABLES[:adapter.N_PARAMETERS]):
            if var.type != "String" and (host_set is None or not host_set[vr]):
                self._buffer[vr] = float(self.value_in_force(var.name))

    def sync_parameters_from_buffer(self):
        """The numeric parameters from the value buffer (the native front end's
        fmi2SetReal/Integer/Boolean write them there)."""
        for vr, var in enumerate(VARIABLES[:adapter.N_PARAMETERS]):
            x = float(self._buffer[vr])
            if var.type == "Real":
                self._values[var.name] = x
            elif var.type in ("Integer", "Enumeration"):
                self._values[var.name] = int(x) if math.isfinite(x) else x
            elif var.type == "Boolean":
                self._values[var.name] = x != 0.0

    # -- helpers -----------------------------------------------------------
    def _error(self, message: str, status: Fmi2Status = Fmi2Status.error):
        self.log(message, status)

    def _refuse(self, message: str):
        """A call refused: logged with status fmi2Error; `last_refusal` keeps the
        reason for a front end that can return fmi2Error (pythonfmu 0.7.0 cannot)."""
        self.last_refusal = message
        self._error(message)

    # -- FMI ---------------------------------------------------------------
    def setup_experiment(self, start_time, stop_time=None, tolerance=None):
        # the first doStep must start here (FMI 2.0 fmi2SetupExperiment). Refused
        # (logged, and fmi2ExitInitializationMode then fails with the reason): a
        # call after initialization, a start time that is not finite, a stop time
        # before it, a negative or non-finite tolerance (docs/SECURITY.md)
        problem = None
        if self._phase != "instantiated":
            problem = (f"the instance is {self._phase} (FMI 2.0: only before "
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
            if self._phase == "instantiated":       # a bad value: initialization fails
                self._setup_problem = message
            self._refuse(message)
            return
        self._setup_problem = None
        self._time = float(start_time)

    def enter_initialization_mode(self):
        if self._phase != "instantiated":
            self._refuse(f"{self.instance_name}: fmi2EnterInitializationMode refused: the "
                         f"instance is {self._phase} (FMI 2.0: only after fmi2Instantiate or "
                         "fmi2Reset)")
            return
        self._phase = "initialization"

    def exit_initialization_mode(self):
        if self._phase == "instantiated":
            self._refuse(f"{self.instance_name}: fmi2ExitInitializationMode refused: "
                         "fmi2EnterInitializationMode was not called (FMI 2.0 state order)")
            return
        if self._phase != "initialization":
            # FMI 2.0: only in initialization mode; a second call must not rebuild
            # the model silently
            self._refuse(f"{self.instance_name}: fmi2ExitInitializationMode refused: the "
                         f"instance is {self._phase}, not in initialization mode (fmi2Reset "
                         "first); state unchanged")
            return
        if self._setup_problem is not None:
            self._phase = "initialization failed"
            self._failed = f"initialization failed: {self._setup_problem}"
            self._error(f"{self.instance_name}: {self._failed}")
            return
        self._initialize_model()

    def _initialize_model(self):
        self._phase = "initialization failed"     # until the model is built
        # Never raise here: a Python exception makes pythonfmu 0.7.0 return
        # fmi2Fatal and release the instance's Python objects, and the host's
        # fmi2FreeInstance then releases them a second time (crash). A bad
        # parameter is logged with status fmi2Error and every doStep returns
        # fmi2Discard with the reason.
        try:
            preset = self._preset_name(self._values)
            problem = self._preset(preset)[1]
            if problem is not None:
                raise ValueError(problem)
            core, where = core_loader.import_core(self.resources)
            self._core = core
            params = adapter.make_parameters(self, core)
            model = core.WheelsetModel(params)
            input_map = adapter.input_map(
                {flag: self.value_in_force(flag) for flag in adapter.FROM_INPUT_FLAGS}, core)
            u = self._u
            if not np.isfinite(u).all():
                bad = [f"{n} = {float(x)!r}" for n, x in zip(INPUT_NAMES, u.tolist())
                       if not math.isfinite(x)]
                raise ValueError("input(s) set in initialization mode are not finite: "
                                 + ", ".join(bad))
            if not ((u >= adapter.IN_LO) & (u <= adapter.IN_HI)).all():
                # declared ranges are checked on every set (docs/SECURITY.md): the
                # static equilibrium is not sought from inputs outside them
                bad = [f"{v.name} = {float(x)!r} outside [{v.min:g}, {v.max:g}] {v.unit}"
                       for v, x in zip(adapter.VARIABLES_IO, u.tolist()) if not v.min <= x <= v.max]
                raise ValueError("input(s) set in initialization mode are outside their "
                                 "declared range: " + ", ".join(bad))
            # the inputs set in initialization mode (axle-box loads, rail motion)
            # are those of the static equilibrium at t = 0
            model.initialize(adapter.core_inputs(u, input_map, self._core))
        except Exception as exc:  # noqa: BLE001 - reported to the host
            self._failed = f"initialization failed: {exc}"
            self._error(f"{self.instance_name}: {self._failed}")
            return
        self.log(f"{self.instance_name}: solver imported from {where}", Fmi2Status.ok)
        self._model = model
        self._failed = None
        self._initialized = True
        self._phase = "initialized"
        self._input_map = input_map
        self._record_index = adapter.record_index(core)
        self._store_outputs()

    def do_step(self, current_time: float, step_size: float) -> bool:
        if self._terminated:
            self._refuse(f"{self.instance_name}: fmi2DoStep after fmi2Terminate (FMI 2.0: not "
                         "allowed; fmi2Reset or free the instance); step discarded")
            self.step_failure = "error"
            return False
        model = self._model
        if model is None:
            self._error(f"{self.instance_name}: " + (self._failed or "doStep before "
                        "initialization") + "; step discarded")
            self.step_failure = "error"
            return False
        if not 0.0 < step_size < INF:
            self._error(f"communication step size {step_size!r} must be > 0 and finite")
            self.step_failure = "error"
            return False
        if not abs(current_time - self._time) <= 1e-9 * max(1.0, abs(self._time)):
            self._error(f"doStep at communication point {current_time!r} s, but the FMU is "
                        f"at t = {self._time!r} s (FMI 2.0: the previous point + step size; "
                        "roll back with fmi2SetFMUstate to repeat a step); step discarded")
            self.step_failure = "error"
            return False
        u = self._u
        if not ((u >= adapter.IN_LO) & (u <= adapter.IN_HI)).all():  # NaN fails both comparisons
            bad = [f"{n} = {float(x)!r}" for n, x in zip(INPUT_NAMES, u.tolist())
                   if not math.isfinite(x)]
            if bad:
                self._error(f"t = {current_time:g} s: input(s) not finite: " + ", ".join(bad)
                            + "; step discarded, state unchanged")
                self.step_failure = "discard"
                return False
            bad = [f"{v.name} = {float(x)!r} outside [{v.min:g}, {v.max:g}] {v.unit}"
                   for v, x in zip(adapter.VARIABLES_IO, u.tolist()) if not v.min <= x <= v.max]
            self._error(f"t = {current_time:g} s: input(s) outside their declared range: "
                        + ", ".join(bad) + "; step discarded, state unchanged")
            self.step_failure = "discard"
            return False
        try:
            core_inputs = adapter.core_inputs(u, self._input_map, self._core)
            # the core checks its inputs before it integrates and restores its
            # state itself when it discards a step
            result = model.advance_vector(step_size, core_inputs)
        except Exception as exc:  # noqa: BLE001 - reported to the host
            self._error(f"t = {current_time:g} s: step failed: {exc}; step discarded")
            self.step_failure = "error"
            return False
        if result.status != "ok":
            self._store_outputs(result.reason)
            self._error(f"t = {current_time:g} s: step cannot be completed: "
                        f"{result.message or result.status}")
            self.step_failure = "terminal" if result.reason == "derailment" else "discard"
            if result.reason == "derailment":
                # FMI 2.0 section 4.2.3: fmi2DoStep returns fmi2Discard and
                # fmi2GetBooleanStatus(fmi2Terminated) true: the simulation should
                # end (the native front end reports it from step_failure "terminal";
                # pythonfmu 0.7.0 has no such status); a rollback clears it
                self.terminate_requested = True
                self._error(f"t = {current_time:g} s: the wheelset derails: the simulation "
                            "should end (fmi2Terminated), or roll back with fmi2SetFMUstate")
            return False
        self._store_outputs()
        y = self._y
        if not ((y >= adapter.OUT_LO) & (y <= adapter.OUT_HI)).all():
            # an output would leave its declared range (NaN too): the step is taken
            # back, so that no output the host reads is ever outside its declaration
            bad = [f"{v.name} = {float(x)!r} outside [{v.min:g}, {v.max:g}]"
                   + (f" {v.unit}" if v.unit and v.unit != "1" else "")
                   for v, x in zip(adapter.VARIABLES_IO[adapter.N_INPUTS:], y.tolist())
                   if not (v.min is None or x >= v.min) or not (v.max is None or x <= v.max)]
            model.undo_step()
            self._store_outputs()
            self._error(f"t = {current_time:g} s: step discarded, state unchanged: output(s) "
                        "outside their declared range (the model leaves its validity): "
                        + ", ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else ""))
            # a refused step, state unchanged: fmi2Discard (FMI 2.0 section 4.2.3)
            self.step_failure = "discard"
            return False
        self._time = current_time + step_size
        return True

    @property
    def _time(self) -> float:
        return float(self._slave_time[0])

    @_time.setter
    def _time(self, value: float):
        self._slave_time[0] = value

    def _store_outputs(self, reason: str = ""):
        """The outputs from the core's record; the status flags from the reason of a
        discarded step (the record then still holds the state before the step).
        The numba function the fast step uses too (solver/model/fast_step.py)."""
        fast = self._core.fast_step
        code = {"derailment": fast.REASON_DERAILMENT,
                "excessive_penetration": fast.REASON_PENETRATION}.get(reason, fast.REASON_NONE)
        fast.fmu_outputs(self._model.record, self._record_index, self._core.layout.REC_LIFT,
                         adapter.STATUS_SLOTS, code, self._y)

    # -- fast access to inputs and outputs -------------------------------------
    def _io_index(self, kind: str, vrs):
        """Index array into _io for value references that are all inputs or outputs
        of this kind (Real; Integer; Boolean), else None. Built once per list."""
        key = (kind, tuple(vrs))
        try:
            return self._index_cache[key]
        except KeyError:
            pass
        slots = []
        for vr in key[1]:
            entry = self._io_slot.get(vr)
            if entry is None or entry[0] != kind:
                slots = None
                break
            slots.append(entry[1])
        index = None if slots is None else np.array(slots, dtype=np.intp)
        if len(self._index_cache) < 256:      # hosts use a handful of lists
            self._index_cache[key] = index
        return index

    def get_real(self, vrs):
        index = self._io_index("Real", vrs)
        if index is not None:
            return self._io[index].tolist()
        # parameters, or a value reference that is not a Real: logged and read as 0.0
        # (pythonfmu would turn the TypeError into fmi2Fatal)
        names = self._real_names
        bad = [vr for vr in vrs if vr not in names]
        if bad:
            self._error(f"fmi2GetReal: value reference(s) {bad} are not Real variables; read as 0.0")
        return [float(self.vars[vr].getter()) if vr in names else 0.0 for vr in vrs]

    def get_integer(self, vrs):
        index = self._io_index("Integer", vrs)
        if index is None:
            return super().get_integer(vrs)
        return [int(x) for x in self._io[index].tolist()]

    def get_boolean(self, vrs):
        index = self._io_index("Boolean", vrs)
        if index is None:
            return super().get_boolean(vrs)
        return [x != 0.0 for x in self._io[index].tolist()]

    def set_real(self, vrs, values):
        if self._phase in ("terminated", "initialization failed"):
            self._refuse(f"fmi2SetReal refused: the instance is {self._phase} (FMI 2.0: "
                         "fmi2Reset first); nothing set")
            return
        index = self._io_index("Real", vrs)
        if index is not None and len(values) == len(index):
            if index.max() >= adapter.N_INPUTS:          # an output among them
                names = [adapter.VARIABLES_IO[j].name for j in index.tolist()
                         if j >= adapter.N_INPUTS]
                self._refuse(f"fmi2SetReal refused: {', '.join(names)} "
                             f"{'is an output' if len(names) == 1 else 'are outputs'} "
                             "(causality output: FMI 2.0 allows no set); nothing set")
                return
            self._io[index] = values
            u = self._io[index]
            if not ((u >= adapter.IO_LO[index]) & (u <= adapter.IO_HI[index])).all():
                # NaN passes here: doStep refuses it as not finite
                io, lo, hi = adapter.VARIABLES_IO, adapter.IO_LO, adapter.IO_HI
                bad = [f"{io[j].name} = {x!r} outside [{lo[j]:g}, {hi[j]:g}] {io[j].unit}"
                       for j, x in zip(index.tolist(), u.tolist()) if x < lo[j] or x > hi[j]]
                self._refuse("fmi2SetReal: " + ", ".join(bad) + " (the declared range); "
                             "the next fmi2DoStep is discarded until the input is in range")
        else:
            super().set_real(vrs, values)       # parameters (and the type check)

    def terminate(self):
        if self._phase != "initialized":
            self._refuse(f"{self.instance_name}: fmi2Terminate refused: the instance is "
                         f"{self._phase} (FMI 2.0: only after initialization)")
            return
        self._terminated = True
        self._phase = "terminated"

    # -- FMU state: the WHOLE state, deep (format: fmu_wheelset/fmu/fmu_state.py) ----
    def _get_fmu_state(self) -> Dict[str, Any]:
        return {
            "guid": fmu_state.build_guid(self.resources),
            "values": dict(self._values),
            "io": self._io.copy(),
            "model": self._model.get_state() if self._model is not None else None,
            "initialized": self._initialized,
            "time": self._time,
        }

    def _set_fmu_state(self, state):
        """Restore a state of _get_fmu_state or of _fmu_state_from_bytes after the
        checks of fmu_wheelset/fmu/fmu_state.py; a state that fails them is refused
        with the reason logged (fmi2Error) and the instance left as it was."""
        try:
            self._restore_state(state)
        except fmu_state.StateError as exc:
            self._refuse(f"fmi2SetFMUstate: state refused, instance unchanged: {exc}")
        except Exception as exc:  # noqa: BLE001 - never raise into pythonfmu
            self._refuse(f"fmi2SetFMUstate: state refused, instance unchanged: "
                         f"{type(exc).__name__}: {exc}")

    def _restore_state(self, state):
        if isinstance(state, fmu_state.Rejected):
            raise fmu_state.StateError(state.reason)
        if not isinstance(state, dict):
            raise fmu_state.StateError(f"not a state of this FMU ({type(state).__name__})")
        model_snapshot = state["model"]
        if not state["initialized"] or model_snapshot is None:
            raise fmu_state.StateError(
                "the state was saved before initialization (fmi2GetFMUstate before "
                "fmi2ExitInitializationMode); it holds no wheelset state to restore")
        preset_problem = self._preset(self._preset_name(state["values"]))[1]
        if preset_problem is not None:
            raise fmu_state.StateError(f"its preset cannot be used: {preset_problem}")
        built_here = False
        phase = self._phase
        if self._model is None:
            # a state serialised by another instance: build the model from the
            # parameters in the state, then check and overwrite its state
            saved_values = dict(self._values)
            self._values.clear()
            self._values.update(state["values"])
            self._initialized = False
            self._initialize_model()
            if self._model is None:
                reason = self._failed
                self._values.clear()
                self._values.update(saved_values)
                self._failed = None
                self._phase = phase
                raise fmu_state.StateError(f"its parameters do not initialize the FMU: {reason}")
            built_here = True
        try:
            self._check_against_model(state)
        except fmu_state.StateError:
            if built_here:
                self._model, self._initialized, self._phase = None, False, phase
            raise
        self._model.set_state(model_snapshot)
        self._io[:] = state["io"]
        self._initialized = True
        self._terminated = False
        self.terminate_requested = False
        self._phase = "initialized"
        self._time = float(state["time"])

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
        layout = self._core.layout
        state_bounds, array_bounds = adapter.restore_bounds(self._core, self._input_map)
        fmu_state.check_against_instance(
            state, guid=fmu_state.build_guid(self.resources), live_model=self._model.get_state(),
            nan_allowed={"inputs": (layout.U_CURVATURE, layout.U_CANT)},
            state_bounds=state_bounds, array_bounds=array_bounds)

    def check_state(self, state) -> None:
        """StateError unless fmi2SetFMUstate would restore `state` into this
        instance now; nothing of the instance changes (fmi2DeSerializeFMUstate
        refuses what the set would). An instance without a model checks it the
        way the set would: by building one, in a scratch instance."""
        if self._model is None or not self._initialized:
            scratch = type(self)(instance_name=f"{self.instance_name} (state check)",
                                 resources=self.resources)
            scratch._restore_state(state)
            return
        if isinstance(state, fmu_state.Rejected):
            raise fmu_state.StateError(state.reason)
        if not isinstance(state, dict) or not state["initialized"] or state["model"] is None:
            raise fmu_state.StateError(
                "the state was saved before initialization (fmi2GetFMUstate before "
                "fmi2ExitInitializationMode); it holds no wheelset state to restore")
        preset_problem = self._preset(self._preset_name(state["values"]))[1]
        if preset_problem is not None:
            raise fmu_state.StateError(f"its preset cannot be used: {preset_problem}")
        self._check_against_model(state)

    def _restore_own_state(self, state):
        """_restore_state without the checks, for a state this instance took of
        its current model (native_bridge.MemoryState.is_own): the same
        assignments in the same order, so the rollback is the same bit for bit."""
        self._model.set_state(state["model"])
        self._io[:] = state["io"]
        self._initialized = True
        self._terminated = False
        self.terminate_requested = False
        self._phase = "initialized"
        self._time = float(state["time"])

    @staticmethod
    def _fmu_state_to_bytes(state: Dict[str, Any]) -> bytes:
        return fmu_state.encode(state, guid=state.get("guid", ""), fmu_version=FMU_VERSION,
                                parameter_kinds=adapter.PARAMETER_KINDS)

    @staticmethod
    def _fmu_state_from_bytes(state: bytes):
        """The checked snapshot, or fmu_state.Rejected(reason) (never raises:
        pythonfmu would return fmi2Fatal); fmi2SetFMUstate reports a rejection."""
        try:
            return fmu_state.decode(state, parameters=adapter.PARAMETER_SCHEMA,
                                    io_ranges=adapter.IO_RANGES,
                                    distance_range=adapter.DISTANCE_RANGE)
        except fmu_state.StateError as exc:
            return fmu_state.Rejected(str(exc))
        except Exception as exc:  # noqa: BLE001
            return fmu_state.Rejected(f"{type(exc).__name__}: {exc}")


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)
