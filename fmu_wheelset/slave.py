"""pythonfmu slave of the wheelset FMU (FMI 2.0 co-simulation).

No physics here: this module only converts FMI variables to the core's
``WheelsetParameters``, its input vector and its output record
(``docs/CONVENTIONS.md``, "Wheelset core"), as the table of variables
(``fmu_wheelset/variables.py``) says. A parameter the host does not set takes
the core's default.

Inside the FMU this file is ``resources/wheelset_fmu_slave.py`` beside the table
(``resources/wheelset_fmu_variables.py``) and a copy of the ``solver`` package;
pythonfmu enters through ``resources/wheelset_slave.py``
(``fmu_wheelset/slave_entry.py``, which imports the class from here: see there
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
(``solver.fast_step.fmu_core_inputs`` and ``fmu_outputs``, numba);
``fmi2GetReal/Integer/Boolean`` read the array through an index built once per
list of value references. In the native front end (fmu_wheelset/native) the
whole accepted step runs without Python: a numba ``cfunc``
(solver/fast_step.py) on the same arrays, with the same numba functions, so
``do_step`` here runs only for the steps it hands over (bad input, a discard,
...), recomputing them from the unchanged state. The communication point
(``_time``) lives in the array ``_slave_time`` for that reason.

Variable names follow the FMI 2.0 "structured" convention: dots for the
hierarchy, ``[i]`` (1-based) for the contact slots, ``left`` / ``right`` for the
sides (``fmu_wheelset/variables.py``); the outputs carry the names of the core's
output record (``solver.wheelset.RECORD_INDEX``).

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

import importlib
import importlib.util
import math
import os
import sys
import weakref
from typing import Any, Dict, Optional, Tuple

import numpy as np
try:
    # inside the FMU's own package (native front end, fmu_wheelset/native_bridge.py):
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

# The table of variables: fmu_wheelset/variables.py, bundled in the FMU as
# resources/wheelset_fmu_variables.py beside this file (fmu_wheelset/build.py).
# The FMU state format and the solver cache: fmu_wheelset/fmu_state.py and
# fmu_wheelset/cache.py, bundled as resources/wheelset_fmu_state.py and
# resources/wheelset_fmu_cache.py. The presets: fmu_wheelset/presets.py (bundled as
# resources/wheelset_fmu_presets.py) reading resources/presets/<name>.toml.
if __package__:
    from . import cache as fmu_cache
    from . import fmu_state
    from . import presets as fmu_presets
    from . import variables as fmu_variables
else:
    import wheelset_fmu_cache as fmu_cache
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
# importing the bundled core with a stable numba cache
# ---------------------------------------------------------------------------
def _tree_digest(root: str) -> str:
    """First 16 hex digits of the sha256 of the sources under root (fmu_wheelset/cache.py)."""
    return fmu_cache.tree_digest(root)[:fmu_cache.DIGEST_CHARS]


cache_root = fmu_cache.cache_root


def stable_solver_dir(resources: str) -> Optional[str]:
    """The verified cache copy of resources/solver to put on sys.path, or None
    (fmu_wheelset/cache.py says what is checked and why)."""
    return fmu_cache.stable_solver_dir(resources)[0]


def import_core(resources: Optional[str]):
    """Import solver.wheelset (and solver.track), from the verified cache copy of
    the bundled solver when there is one (fmu_wheelset/cache.py). Returns
    (wheelset_module, track_module, where_from).

    Inside the FMU's own package (the native front end imports this file as
    ``wheelset_fmu_<build hash>.slave``) the bundled solver is imported as
    ``wheelset_solver_<hash of its sources>``, by file location, from the
    verified cache copy when there is one: nothing on sys.path is used or
    changed. numba's on-disk cache is keyed by the source path and records the
    module's name, so the same solver sources keep one path AND one name
    across builds (the copy lives under its own "native-solver" cache name,
    never shared with pythonfmu's top-level ``solver`` layout)."""
    if __package__ and __package__ != "fmu_wheelset":
        return _import_native_core()
    note = ""
    if "solver" not in sys.modules and resources:
        stable, note = fmu_cache.stable_solver_dir(resources)
        if stable is not None and stable not in sys.path:
            sys.path.insert(0, stable)
    wheelset = importlib.import_module("solver.wheelset")
    track = importlib.import_module("solver.track")
    where = os.path.dirname(os.path.dirname(os.path.abspath(wheelset.__file__)))
    return wheelset, track, where + (f" ({note})" if note else "")


def numba_cpu_signature() -> list:
    """What numba keys its cache entries on for this process's CPU: its codegen's
    magic tuple (LLVM target triple, CPU name, CPU feature string), as strings."""
    from numba.core.registry import cpu_target
    return [str(x) for x in cpu_target.target_context.codegen().magic_tuple()]


_NATIVE_CORE: list = []     # (wheelset, track, where), once per process and build


def _import_native_core():
    """Once per process: later instances (perhaps of another extraction of this
    build, the first one deleted, as fmpy.simulate_fmu does) reuse the modules."""
    if not _NATIVE_CORE:
        _NATIVE_CORE.append(_load_native_core())
    return _NATIVE_CORE[0]


def _load_native_core():
    package_dir = os.path.dirname(os.path.abspath(__file__))
    bundled = os.path.join(package_dir, "solver")
    name = f"wheelset_solver_{_tree_digest(bundled)}"
    note = ""
    if name not in sys.modules:
        shipped = os.path.join(os.path.dirname(package_dir), fmu_cache.SHIPPED_CACHE_DIR)
        stable, note = fmu_cache.stable_solver_dir(
            package_dir, kind="native-solver",
            shipped=(shipped, numba_cpu_signature()) if os.path.isdir(shipped) else None)
        where = os.path.join(stable, "solver") if stable is not None else bundled
        spec = importlib.util.spec_from_file_location(
            name, os.path.join(where, "__init__.py"), submodule_search_locations=[where])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    wheelset = importlib.import_module(f"{name}.wheelset")
    track = importlib.import_module(f"{name}.track")
    where = os.path.dirname(os.path.dirname(os.path.abspath(wheelset.__file__)))
    return wheelset, track, where + (f" ({note})" if note else "")


# ---------------------------------------------------------------------------
# living with pythonfmu 0.7.0's instantiation (see fmu_wheelset/slave_entry.py)
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
class Wheelset(Fmi2Slave):
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
        starts = np.array([_numeric_start(var) for var in VARIABLES])
        if value_buffer is not None:
            value_buffer[:] = starts
            starts = value_buffer
        self._buffer = starts
        # inputs then outputs, in declaration order (the FMU state copies this array)
        self._io = self._buffer[_N_PARAMETERS:]
        self._u = self._io[:len(INPUT_NAMES)]          # views, never rebound
        self._y = self._io[len(INPUT_NAMES):]
        self._io_slot: Dict[int, Tuple[str, int]] = {}  # value reference -> (kind, slot in _io)
        self._index_cache: Dict[Any, Any] = {}          # (kind, vrs) -> index array or None
        self._real_names: Dict[int, str] = {}           # value reference -> name, Reals only
        self._model = None
        self._core = None           # (wheelset module, track module)
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
        # step (solver/fast_step.py) advances too; `_time` reads and writes it
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
        """Register one variable of the table (fmu_wheelset/variables.py)."""
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
            wheelset = self._core[0] if self._core is not None else import_core(self.resources)[0]
            return fmu_variables.start_value(var, wheelset)
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
        """(values, problem) of preset `name` (fmu_wheelset/presets.py, files in
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
        for vr, var in enumerate(VARIABLES[:_N_PARAMETERS]):
            if var.type != "String" and (host_set is None or not host_set[vr]):
                self._buffer[vr] = float(self.value_in_force(var.name))

    def sync_parameters_from_buffer(self):
        """The numeric parameters from the value buffer (the native front end's
        fmi2SetReal/Integer/Boolean write them there)."""
        for vr, var in enumerate(VARIABLES[:_N_PARAMETERS]):
            x = float(self._buffer[vr])
            if var.type == "Real":
                self._values[var.name] = x
            elif var.type in ("Integer", "Enumeration"):
                self._values[var.name] = int(x) if math.isfinite(x) else x
            elif var.type == "Boolean":
                self._values[var.name] = x != 0.0

    def update_feedthrough_outputs(self) -> bool:
        """The outputs at the current state with the inputs as they are now (the
        direct feedthrough of variables.direct_inputs: the contact at the current
        pose against the rails where the host has just put them). False, outputs
        left as they are, before initialization or with a non-finite input (the
        next doStep reports it)."""
        model = self._model
        if model is None or not np.isfinite(self._u).all():
            return False
        model._u[:] = _adapter.core_inputs(self._u, self._input_map, self._core)
        model.rhs(model.state)          # contact search + forces at the current state
        model._update_record()
        self._store_outputs()
        return True

    def _feedthrough_scratch(self):
        """Every array update_feedthrough_outputs writes (the core's contact search
        and results, the record, the core's inputs, the running-safety memory and the
        FMU outputs): what directional_derivative saves and puts back bit for bit."""
        model = self._model
        arrays = [model._u, model._work, model._points, model._counts, model._contact,
                  model._summary, model._deriv, model._search_key, model.record, model._derived,
                  model._safety, self._y]
        if model._table_search is not None:
            arrays.extend(model._table_search.scratch)
        return arrays

    def _derivative_indices(self, name, unknowns, knowns):
        """(output slots, input slots, feedthrough matrix) of value references
        that are all Real outputs / Real inputs, else None with the reason logged."""
        out_slots, in_slots = [], []
        for vr in unknowns:
            entry = self._io_slot.get(vr)
            if entry is None or entry[0] != "Real" or entry[1] < _N_INPUTS:
                self._refuse(f"{name}: value reference {vr} is not a Real output (the unknowns "
                             "of a co-simulation FMU are its outputs)")
                return None
            out_slots.append(entry[1] - _N_INPUTS)
        for vr in knowns:
            entry = self._io_slot.get(vr)
            if entry is None or entry[0] != "Real" or entry[1] >= _N_INPUTS:
                self._refuse(f"{name}: value reference {vr} is not a Real input (the knowns of a "
                             "co-simulation FMU are its inputs)")
                return None
            in_slots.append(entry[1])
        out_index = np.array(out_slots, dtype=np.intp)
        in_index = np.array(in_slots, dtype=np.intp)
        return out_index, in_index, _FEEDTHROUGH[np.ix_(out_index, in_index)]

    def directional_derivative(self, unknowns, knowns, seed):
        """FMI 2.0 fmi2GetDirectionalDerivative (section 2.1.9) for co-simulation:
        dz = (d outputs / d inputs) . seed at the current state and inputs, the
        outputs `unknowns` and the inputs `knowns` given as value references.
        Only the direct feedthrough counts (variables.direct_inputs, the
        ModelStructure dependencies): an output that depends on none of the seeded
        inputs directly has derivative 0; the others are central differences of
        update_feedthrough_outputs along the seed, the step scaled so that no
        input moves by more than its _FD_STEP (a fraction of the contact's
        penetration / creepage: second-order error ~(step/penetration)^2 ~ 1e-4
        relative for Hertz). Nothing of the state changes: every array the
        evaluation writes is put back bit for bit. Returns the list dz, or None
        with the reason logged (fmi2Error)."""
        name = "fmi2GetDirectionalDerivative"
        if self._model is None or not self._initialized:
            self._refuse(f"{name}: the instance is {self._phase}; the wheelset model is built in "
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
            self._refuse(f"{name}: the seed dvKnown must be {len(in_index)} finite numbers")
            return None
        u = self._u
        if not np.isfinite(u).all():
            bad = [INPUT_NAMES[j] for j in np.flatnonzero(~np.isfinite(u))]
            self._refuse(f"{name}: input(s) {', '.join(bad)} not finite: no derivative")
            return None
        # outputs fed directly by a seeded input; all others: 0 by the ModelStructure
        fed = feeds[:, seed != 0.0].any(axis=1)
        dz = np.zeros(len(out_index))
        if not fed.any():
            return dz.tolist()
        ratio = float(np.max(np.abs(seed) / _FD_STEP[in_index]))
        eps = 1.0 / ratio
        arrays = self._feedthrough_scratch()
        saved = [a.copy() for a in arrays]
        u_saved = u.copy()
        values = []
        try:
            for sign in (1.0, -1.0):
                u[:] = u_saved
                np.add.at(u, in_index, sign * eps * seed)
                if not self.update_feedthrough_outputs():
                    raise ValueError("the perturbed inputs are not finite")
                values.append(self._y[out_index].copy())
        except Exception as exc:  # noqa: BLE001 - reported, state put back below
            self._refuse(f"{name}: the outputs could not be evaluated about the current state: "
                         f"{type(exc).__name__}: {exc}")
            return None
        finally:
            u[:] = u_saved
            for array, copy in zip(arrays, saved):
                np.copyto(array, copy)
        dz[fed] = ((values[0] - values[1]) / (2.0 * eps))[fed]
        if not np.isfinite(dz).all():
            self._refuse(f"{name}: a derivative is not finite (contact search failed about the "
                         "current state)")
            return None
        return dz.tolist()

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
            wheelset, track, where = import_core(self.resources)
            self._core = (wheelset, track)
            params = _adapter.make_parameters(self, wheelset, track)
            model = wheelset.WheelsetModel(params)
            input_map = _adapter.input_map(
                {flag: self.value_in_force(flag) for flag in _FROM_INPUT_FLAGS}, wheelset, track)
            u = self._u
            if not np.isfinite(u).all():
                bad = [f"{n} = {float(x)!r}" for n, x in zip(INPUT_NAMES, u.tolist())
                       if not math.isfinite(x)]
                raise ValueError("input(s) set in initialization mode are not finite: "
                                 + ", ".join(bad))
            if not ((u >= _IN_LO) & (u <= _IN_HI)).all():
                # declared ranges are checked on every set (docs/SECURITY.md): the
                # static equilibrium is not sought from inputs outside them
                bad = [f"{v.name} = {float(x)!r} outside [{v.min:g}, {v.max:g}] {v.unit}"
                       for v, x in zip(VARIABLES_IO, u.tolist()) if not v.min <= x <= v.max]
                raise ValueError("input(s) set in initialization mode are outside their "
                                 "declared range: " + ", ".join(bad))
            # the inputs set in initialization mode (axle-box loads, rail motion)
            # are those of the static equilibrium at t = 0
            model.initialize(_adapter.core_inputs(u, input_map, self._core))
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
        self._record_index = _adapter.record_index(wheelset)
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
        if not ((u >= _IN_LO) & (u <= _IN_HI)).all():      # NaN fails both comparisons
            bad = [f"{n} = {float(x)!r}" for n, x in zip(INPUT_NAMES, u.tolist())
                   if not math.isfinite(x)]
            if bad:
                self._error(f"t = {current_time:g} s: input(s) not finite: " + ", ".join(bad)
                            + "; step discarded, state unchanged")
                self.step_failure = "discard"
                return False
            bad = [f"{v.name} = {float(x)!r} outside [{v.min:g}, {v.max:g}] {v.unit}"
                   for v, x in zip(VARIABLES_IO, u.tolist()) if not v.min <= x <= v.max]
            self._error(f"t = {current_time:g} s: input(s) outside their declared range: "
                        + ", ".join(bad) + "; step discarded, state unchanged")
            self.step_failure = "discard"
            return False
        try:
            core_inputs = _adapter.core_inputs(u, self._input_map, self._core)
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
        if not ((y >= _OUT_LO) & (y <= _OUT_HI)).all():
            # an output would leave its declared range (NaN too): the step is taken
            # back, so that no output the host reads is ever outside its declaration
            bad = [f"{v.name} = {float(x)!r} outside [{v.min:g}, {v.max:g}]"
                   + (f" {v.unit}" if v.unit and v.unit != "1" else "")
                   for v, x in zip(VARIABLES_IO[_N_INPUTS:], y.tolist())
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
        The numba function the fast step uses too (solver/fast_step.py)."""
        wheelset = self._core[0]
        fast = wheelset.fast_step
        code = {"derailment": fast.REASON_DERAILMENT,
                "excessive_penetration": fast.REASON_PENETRATION}.get(reason, fast.REASON_NONE)
        fast.fmu_outputs(self._model.record, self._record_index, wheelset.REC_LIFT, _STATUS_SLOTS,
                         code, self._y)

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
            if index.max() >= _N_INPUTS:          # an output among them
                names = [VARIABLES_IO[j].name for j in index.tolist() if j >= _N_INPUTS]
                self._refuse(f"fmi2SetReal refused: {', '.join(names)} "
                             f"{'is an output' if len(names) == 1 else 'are outputs'} "
                             "(causality output: FMI 2.0 allows no set); nothing set")
                return
            self._io[index] = values
            u = self._io[index]
            if not ((u >= _IO_LO[index]) & (u <= _IO_HI[index])).all():
                # NaN passes here: doStep refuses it as not finite
                bad = [f"{VARIABLES_IO[j].name} = {x!r} outside [{_IO_LO[j]:g}, {_IO_HI[j]:g}]"
                       f" {VARIABLES_IO[j].unit}" for j, x in zip(index.tolist(), u.tolist())
                       if x < _IO_LO[j] or x > _IO_HI[j]]
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

    # -- FMU state: the WHOLE state, deep (format: fmu_wheelset/fmu_state.py) ----
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
        checks of fmu_wheelset/fmu_state.py; a state that fails them is refused
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
        every array entry within its range (fmu_wheelset/fmu_state.py)."""
        for var in fmu_variables.PARAMETERS:
            saved = self._in_force(state["values"], var.name)
            here = self.value_in_force(var.name)
            if saved != here:
                raise fmu_state.StateError(
                    f"it was saved with parameter {var.name} = {saved!r}, this instance has "
                    f"{here!r}")
        wheelset = self._core[0]
        state_bounds, array_bounds = _restore_bounds(wheelset, self._input_map)
        fmu_state.check_against_instance(
            state, guid=fmu_state.build_guid(self.resources), live_model=self._model.get_state(),
            nan_allowed={"inputs": (wheelset.U_CURVATURE, wheelset.U_CANT)},
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
                                parameter_kinds=_PARAMETER_KINDS)

    @staticmethod
    def _fmu_state_from_bytes(state: bytes):
        """The checked snapshot, or fmu_state.Rejected(reason) (never raises:
        pythonfmu would return fmi2Fatal); fmi2SetFMUstate reports a rejection."""
        try:
            return fmu_state.decode(state, parameters=_PARAMETER_SCHEMA, io_ranges=_IO_RANGES,
                                    distance_range=_DISTANCE_RANGE)
        except fmu_state.StateError as exc:
            return fmu_state.Rejected(str(exc))
        except Exception as exc:  # noqa: BLE001
            return fmu_state.Rejected(f"{type(exc).__name__}: {exc}")


# ---------------------------------------------------------------------------
# conversion FMI variables <-> core types (field names of solver.wheelset)
# ---------------------------------------------------------------------------
class _Adapter:
    """Stateless conversion functions (an object only to keep them together)."""

    def make_parameters(self, slave: "Wheelset", wheelset, track):
        """WheelsetParameters from the parameters set by the host (the others
        take the core's defaults), checked against the table's ranges."""

        profiles = importlib.import_module(wheelset.__package__ + ".profiles")

        def resolve(var, text):
            if var.name == "track.scenario":
                return self.make_track(slave, wheelset, track, text)
            # a built-in name, a file bundled in the FMU resources or an absolute
            # path (the core's lookup rule, relative names contained in the
            # resources: never the working directory)
            source = wheelset.resolve_source(text, profiles.is_builtin_profile,
                                             (slave.resources,), working_directory=False)
            if source is None:
                raise ValueError(f"{var.name} {text!r} is neither a built-in profile nor a file "
                                 "in the FMU resources (relative names are looked up there "
                                 "only; give an absolute path for a file elsewhere)")
            return source

        kwargs = fmu_variables.parameters_from_fmi(slave.given_values(), wheelset, resolve=resolve)
        if "track" not in kwargs:       # the default track, in track.direction
            kwargs["track"] = self.make_track(slave, wheelset, track, None)
        return wheelset.WheelsetParameters(**kwargs)

    def make_track(self, slave: "Wheelset", wheelset, track, spec):
        """The track of track.scenario (`spec`; None: the core's default) run in
        track.direction."""
        if spec is None:
            spec = str(slave._default("track.scenario")).strip()
        direction = str(slave.value_in_force("track.direction")).strip()
        source = wheelset.resolve_source(spec, lambda name: name in track.BUILTIN_TRACKS,
                                         (slave.resources,), working_directory=False)
        if source == spec and spec in track.BUILTIN_TRACKS:
            return track.builtin_track(spec, direction=direction)
        if source is None:
            raise ValueError(f"track.scenario {spec!r} is neither a built-in scenario "
                             f"({', '.join(sorted(track.BUILTIN_TRACKS))}) nor a file "
                             f"(relative names are looked up in the FMU resources only; "
                             f"give an absolute path for a file elsewhere)")
        return track.load_track(source)

    def input_map(self, v, wheelset, track):
        """(matrix, offset, cross-level slots): the core's input vector is
        matrix @ u + offset for the FMU inputs u (INPUT_NAMES order), plus the
        roll of both rails by the cross level (`core_inputs`). The irregularities
        add to the rail motion: alignment and level on both rails, gauge and cross
        level by halves with opposite signs (left +, right -)."""
        slot = {name: j for j, name in enumerate(INPUT_NAMES)}
        matrix = np.zeros((wheelset.N_INPUT, len(INPUT_NAMES)))
        offset = np.zeros(wheelset.N_INPUT)
        for j, var in enumerate(fmu_variables.INPUTS):      # the table's core entries
            if var.core is not None:
                block, index = var.core
                matrix[getattr(wheelset, block) + index, j] = 1.0
        for flag, name, row in (("track.curvature_from_input", "track.curvature", wheelset.U_CURVATURE),
                                ("track.cant_from_input", "track.cant_angle", wheelset.U_CANT)):
            if not v[flag]:
                matrix[row, slot[name]] = 0.0
                offset[row] = NAN                 # NaN: the core takes it from the track
        # the irregularities move the rails by the core's one rule
        # (solver.track_excitation.rail_displacements, as a matrix [side, axis, component])
        excitation = importlib.import_module(wheelset.__package__ + ".track_excitation")
        coefficients = excitation.rail_displacement_coefficients()
        for i in range(2):
            for axis in range(2):                 # lateral, vertical
                for base, suffix in ((wheelset.U_RAIL_MOTION, ""),
                                     (wheelset.U_RAIL_VELOCITY, "_velocity")):
                    r = base + 3 * i + axis
                    for j, component in enumerate(excitation.COMPONENTS):
                        if coefficients[i, axis, j] != 0.0:
                            matrix[r, slot[f"track.irregularity.{component}{suffix}"]] = \
                                coefficients[i, axis, j]
        return (matrix, offset, slot["track.irregularity.cross_level"],
                slot["track.irregularity.cross_level_velocity"], track.DEFAULT_RAIL_DISTANCE)

    def core_inputs(self, u, input_map, core):
        """The core's input vector for the FMU inputs u (finite): matrix @ u +
        offset, plus the roll of both rails by the cross level (the core's rule,
        solver.track_excitation.cross_level_roll), by the numba function the
        fast step uses too (solver/fast_step.py). `core`: (wheelset, track) modules."""
        matrix, offset, c_slot, dc_slot, rail_distance = input_map
        out = np.empty(matrix.shape[0])
        if not core[0].fast_step.fmu_core_inputs(u, matrix, offset, c_slot, dc_slot,
                                                 rail_distance, out):
            raise core[1].TrackError(f"cross-level {float(u[c_slot])} m is not below the rail "
                                     f"distance {rail_distance} m")
        return out

    def record_index(self, wheelset):
        """For each output but the status flags (OUTPUT_NAMES order), its index in
        the core's output record: the output names are the record's names
        (solver.wheelset.RECORD_INDEX)."""
        return np.array([wheelset.RECORD_INDEX[var.core] for var in fmu_variables.RECORD_OUTPUTS],
                        dtype=np.int64)


NAN = float("nan")
_N_PARAMETERS = len(fmu_variables.PARAMETERS)
_FROM_INPUT_FLAGS = ("track.curvature_from_input", "track.cant_from_input")
assert VARIABLES[:_N_PARAMETERS] == fmu_variables.PARAMETERS   # value reference = table index


def _numeric_start(var) -> float:
    """The start value of a variable in the value buffer (strings and core
    defaults: NaN until fill_parameter_buffer)."""
    if var.type == "String" or var.start is fmu_variables.CORE_DEFAULT or var.start is None:
        return NAN
    return float(var.start)


# the status flags come last; all outputs before them are copied from the core's record
_N_RECORD_OUTPUTS = len(fmu_variables.RECORD_OUTPUTS)
_STATUS_SLOTS = np.array([OUTPUT_NAMES.index(n) for n in STATUS_NAMES], dtype=np.int64)
# declared ranges of the inputs and outputs, in the order of the value array _io
VARIABLES_IO = tuple(v for v in VARIABLES if v.causality != "parameter")
_N_INPUTS = len(INPUT_NAMES)
_IO_LO = np.array([-INF if v.min is None else float(v.min) for v in VARIABLES_IO])
_IO_HI = np.array([INF if v.max is None else float(v.max) for v in VARIABLES_IO])
_IN_LO, _IN_HI = _IO_LO[:_N_INPUTS].copy(), _IO_HI[:_N_INPUTS].copy()
_OUT_LO, _OUT_HI = _IO_LO[_N_INPUTS:].copy(), _IO_HI[_N_INPUTS:].copy()


# direct feedthrough (variables.direct_inputs, the ModelStructure): [output slot, input slot]
_FEEDTHROUGH = np.array([[name in fmu_variables.direct_inputs(out) for name in INPUT_NAMES]
                         for out in OUTPUT_NAMES], dtype=bool)
# finite-difference step of each input for directional_derivative, by unit: 1 um of
# rail motion is ~1 % of the Hertz penetration at a static wheel load (~0.1 mm:
# error of the central difference ~(h/delta)^2 / 24 ~ 4e-6 relative), 1e-4 m/s a
# creepage change of ~4e-6 at 25 m/s (linear creep range); curvature 1e-7 1/m
_FD_STEP = np.array([{"m": 1e-6, "rad": 1e-6, "m/s": 1e-4, "rad/s": 1e-4, "1/m": 1e-7}.get(
    v.unit, 1.0) for v in VARIABLES_IO[:_N_INPUTS]])


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


# what a serialized state may carry (fmu_wheelset/fmu_state.py)
_PARAMETER_KINDS = {v.name: v.type for v in fmu_variables.PARAMETERS}
_PARAMETER_SCHEMA = {v.name: (v.type, *(
    (0, len(fmu_variables.ENUMERATION_BY_NAME[v.declared_type].items) - 1)
    if v.type == "Enumeration" else (v.min, v.max))) for v in fmu_variables.PARAMETERS}
# the declared range, kind and name of every input and output, in the order of _io
_IO_RANGES = tuple((v.min, v.max, "Integer" if v.type == "Enumeration" else v.type, v.name)
                   for v in VARIABLES if v.causality != "parameter")
_DISTANCE_RANGE = (fmu_variables.BY_NAME["wheelset.distance"].min,
                   fmu_variables.BY_NAME["wheelset.distance"].max)
# the core's state vector (solver.dynamics S_*, in this order) is the FMU's outputs
_STATE_OUTPUTS = ("wheelset.x", "wheelset.y", "wheelset.z", "wheelset.roll", "wheelset.yaw",
                  "wheelset.pitch", "wheelset.velocity.x", "wheelset.velocity.y",
                  "wheelset.velocity.z", "wheelset.roll_rate", "wheelset.yaw_rate",
                  "wheelset.spin_rate")
# contact columns (solver.dynamics C_*) that are FMU outputs of an active point
_CONTACT_OUTPUTS = {"C_S_WHEEL": "wheel_lateral", "C_U_RAIL": "rail_lateral", "C_Y": "position.y",
                    "C_Z": "position.z", "C_ANGLE": "contact_angle", "C_RADIUS": "rolling_radius",
                    "C_NORMAL": "normal_force", "C_CREEP_LONG": "longitudinal_force",
                    "C_CREEP_LAT": "lateral_force", "C_SPIN_MOMENT": "spin_moment",
                    "C_XI": "longitudinal_creepage", "C_ETA": "lateral_creepage",
                    "C_SPIN": "spin_creepage"}


def _restore_bounds(wheelset, input_map):
    """(state bounds, array bounds) of fmu_state.check_against_instance for the
    core `wheelset` and the instance's input map:

    * state: each entry the declared range of its output (_STATE_OUTPUTS);
    * contact: an active point's columns the declared ranges of its outputs,
      C_ACTIVE and the Hertz flag 0..1, every other column (no output) within
      +-BIG_FORCE, the largest magnitude the table declares for a contact
      quantity (1e7 in SI: N, m, J);
    * summary: the lift flags 0..1, penetration and gaps within +-BIG_FORCE;
    * inputs (the core's input vector): what inputs within their declared
      ranges can reach through the input map (|matrix| @ max|input| + |offset|,
      plus the cross level's rail roll and roll rate); the curvature and cant
      rows NaN when taken from the track (checked by the finiteness test);
    * safety (the running-safety memory, solver/fast_step.py SF_*): the
      flange-climb ratios within their outputs' range, the times since which a
      climb or a flight lasts NEVER (none) up to MAX_TIME, the distances within
      +-MAX_TIME (the travelled distance's own bound would do: 1e12 m)."""
    dynamics = importlib.import_module(wheelset.__package__ + ".dynamics")
    big = fmu_variables.BIG_FORCE
    by = fmu_variables.BY_NAME
    state_bounds = {j: (by[name].min, by[name].max, name) for j, name in enumerate(_STATE_OUTPUTS)}
    contact = [(-big, big, f"contact column {j}") for j in range(dynamics.N_CONTACT)]
    contact[dynamics.C_ACTIVE] = (0.0, 1.0, "active")
    contact[dynamics.C_HERTZ_FLAG] = (-big, big, "Hertz flag")
    for column, suffix in _CONTACT_OUTPUTS.items():
        var = by[f"contact.left.point[1].{suffix}"]
        contact[getattr(dynamics, column)] = (var.min, var.max, suffix, dynamics.C_ACTIVE)
    summary = [(-big, big, f"summary {j}") for j in range(dynamics.N_SUMMARY)]
    summary[dynamics.O_LIFT_LEFT] = (0.0, 1.0, "left wheel lifted")
    summary[dynamics.O_LIFT_RIGHT] = (0.0, 1.0, "right wheel lifted")
    matrix, offset, c_slot, dc_slot, rail_distance = input_map
    largest = np.maximum(np.abs(_IN_LO), np.abs(_IN_HI))
    reach = np.abs(matrix) @ largest + np.abs(np.nan_to_num(offset))
    c_max, dc_max = float(largest[c_slot]), float(largest[dc_slot])
    for side in range(2):
        reach[wheelset.U_RAIL_MOTION + 3 * side + 2] += math.asin(min(c_max / rail_distance, 1.0))
        reach[wheelset.U_RAIL_VELOCITY + 3 * side + 2] += dc_max / math.sqrt(
            max(rail_distance ** 2 - c_max ** 2, 1e-300))
    reach *= 1.0 + 1e-12                  # the rounding of the sums that reach it
    names = dynamics.INPUT_VECTOR_NAMES
    inputs = [(-float(r), float(r), names[j]) for j, r in enumerate(reach)]
    fast = wheelset.fast_step
    never = float(fast.NEVER)
    ratio = by["wheel.left.flange_climb_ratio"]
    safety = [None] * fast.N_SAFETY
    for side, name in enumerate(("left", "right")):
        safety[fast.SF_RATIO + side] = (ratio.min, ratio.max, f"{name} flange-climb ratio")
        safety[fast.SF_CLIMB_SINCE + side] = (never, fmu_state.MAX_TIME, f"{name} climb since")
        safety[fast.SF_CLIMB_FROM + side] = (-fmu_state.MAX_TIME, fmu_state.MAX_TIME,
                                             f"{name} climb from")
    safety[fast.SF_AIRBORNE_SINCE] = (never, fmu_state.MAX_TIME, "airborne since")
    return state_bounds, {"contact": contact, "summary": summary, "inputs": inputs,
                          "safety": safety}

_adapter = _Adapter()
