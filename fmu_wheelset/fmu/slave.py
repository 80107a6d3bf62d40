"""pythonfmu slave of the wheelset FMU (FMI 2.0 co-simulation): a thin adapter.

Everything of an instance is in ``fmu_wheelset/fmu/instance.py``
(`FmuInstance`: the values, the parameters in force, the model, the step,
the FMU states, the direct feedthrough); this module registers the variables
of the table (``fmu_wheelset/fmu/variables.py``) with pythonfmu, in the order
of their value references, and forwards each pythonfmu callback to the
instance, turning its statuses into pythonfmu's.

Inside the FMU this file is ``resources/wheelset_fmu_slave.py`` beside the table
(``resources/wheelset_fmu_variables.py``), the instance
(``resources/wheelset_fmu_instance.py``), the modules it uses and a copy of the
``solver`` package; pythonfmu enters through ``resources/wheelset_slave.py``
(``fmu_wheelset/fmu/slave_entry.py``, which imports the class from here: see
there why). It imports nothing but the standard library, NumPy and pythonfmu
at module level, so that pythonfmu can instantiate it cheaply at build time
to read the start values; the core is imported in
``exit_initialization_mode``. ``fmi2Instantiate`` also drops the duplicate
``sys.path`` entries that pythonfmu adds for every instance.

Status mapping of pythonfmu 0.7.0 (its C++ wrapper, ``fmi2DoStep``):
``do_step`` returning ``False`` gives **fmi2Discard**; a Python exception in any
callback gives **fmi2Fatal**, and pythonfmu then releases the instance's Python
objects, which ``fmi2FreeInstance`` releases a second time (a crash later in the
host). There is no way to return fmi2Error from Python. So nothing here raises:
a step that cannot be completed returns ``False`` -> fmi2Discard, with the
reason logged with status fmi2Error and the model left as it was before the
step. Bad parameters are found in ``fmi2ExitInitializationMode``: it logs the
reason with status fmi2Error (its own return status stays fmi2OK, pythonfmu
cannot do otherwise) and every ``fmi2DoStep`` then returns fmi2Discard with
that reason. The native front end (fmu_wheelset/fmu/native) returns the FMI
statuses in full.

Several instances may live in one process: everything is per instance; the
module holds only constants.
"""
from __future__ import annotations

import sys
import weakref
from typing import Optional

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

# The FMU's instance and what it uses (fmu_wheelset/fmu/), bundled in the FMU as
# resources/wheelset_fmu_<module>.py beside this file (fmu_wheelset/packaging/build.py).
if __package__:
    from . import instance as fmu_instance
    from . import variables as fmu_variables
else:
    import wheelset_fmu_instance as fmu_instance
    import wheelset_fmu_variables as fmu_variables

FMU_VERSION = fmu_instance.FMU_VERSION
VARIABLES = fmu_variables.VARIABLES

_FMI_CLASS = {"Real": Real, "Integer": Integer, "Enumeration": Integer,
              "Boolean": Boolean, "String": String}
_CAUSALITY = {"parameter": Fmi2Causality.parameter, "input": Fmi2Causality.input,
              "output": Fmi2Causality.output}
_VARIABILITY = {"fixed": Fmi2Variability.fixed, "continuous": Fmi2Variability.continuous,
                "discrete": Fmi2Variability.discrete}
_INITIAL = {"exact": Fmi2Initial.exact, "approx": Fmi2Initial.approx, None: None}
_STATUS = {fmu_instance.OK: Fmi2Status.ok, fmu_instance.WARNING: Fmi2Status.warning,
           fmu_instance.DISCARD: Fmi2Status.discard, fmu_instance.ERROR: Fmi2Status.error,
           fmu_instance.FATAL: Fmi2Status.fatal}


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
class Wheelset(Fmi2Slave):
    """Railway wheelset with multipoint wheel-rail contact (6 DOF, SI units)."""

    author = "wheelset-fmu contributors"
    description = ("Railway wheelset with multipoint wheel-rail contact (trace-line "
                   "multipoint detection, Hertz normal contact, "
                   + "/".join(item for _, item, _ in
                              fmu_variables.registries.ENUMERATIONS["CreepModel"][1])
                   + " creep), 6-DOF dynamics; inputs: primary suspension forces on the axle "
                   "boxes, axle torque, rail motion; SI units")
    version = FMU_VERSION
    license = "MIT"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        drop_duplicate_path_entries(self.resources)
        # everything per instance; cheap (no solver import)
        owner = weakref.ref(self)
        self.instance = fmu_instance.FmuInstance(
            self.instance_name, self.resources,
            lambda status, message: owner().log(message, _STATUS[status]))
        for var in VARIABLES:
            self._register(var)

    def _register(self, var):
        """Register one variable of the table, its value reference the next
        (VARIABLES is in value-reference order: pythonfmu numbers in order)."""
        name = var.name
        cls = _FMI_CLASS[var.type]
        values = self.instance.values
        vr = len(self.vars)
        # a weak reference: no cycle instance -> variable -> setter -> instance,
        # so that fmi2FreeInstance frees the instance at once (no wait for the
        # cyclic garbage collector)
        owner = weakref.ref(self.instance)
        if var.causality == "parameter":
            getter = lambda: owner().value_in_force(name)      # noqa: E731
        else:
            getter = lambda: values[vr]                          # noqa: E731
        kwargs = dict(causality=_CAUSALITY[var.causality],
                      variability=_VARIABILITY[var.variability],
                      description=var.description, getter=getter)
        if var.initial is not None:
            kwargs["initial"] = _INITIAL[var.initial]
        if var.causality == "parameter":
            kwargs["setter"] = lambda value: owner().set_parameter(name, value)
        elif var.causality == "input":
            kwargs["setter"] = lambda value: values.__setitem__(vr, value)
        variable = cls(name, **kwargs)
        self.register_variable(variable, nested=False)
        if variable.value_reference != vr:
            raise RuntimeError(f"{name}: pythonfmu numbered it {variable.value_reference}, "
                               f"its value reference is {vr}")

    # -- FMI ---------------------------------------------------------------
    def setup_experiment(self, start_time, stop_time=None, tolerance=None):
        self.instance.setup_experiment(start_time, stop_time, tolerance)

    def enter_initialization_mode(self):
        self.instance.enter_initialization_mode()

    def exit_initialization_mode(self):
        self.instance.exit_initialization_mode()

    def do_step(self, current_time: float, step_size: float) -> bool:
        return self.instance.do_step(current_time, step_size).ok

    def terminate(self):
        self.instance.terminate()

    def _get_values(self, kind: str, vrs, convert, fallback):
        index = self.instance.io_index(kind, vrs)
        if index is None:
            return fallback(vrs)
        return [convert(x) for x in self.instance.values[index].tolist()]

    def get_real(self, vrs):
        index = self.instance.io_index("Real", vrs)
        if index is not None:
            return self.instance.values[index].tolist()
        # parameters, or a value reference that is not a Real: logged and read as 0.0
        # (pythonfmu would turn the TypeError into fmi2Fatal)
        reals = [isinstance(vr, int) and 0 <= vr < len(VARIABLES) and VARIABLES[vr].type == "Real"
                 for vr in vrs]
        bad = [vr for vr, real in zip(vrs, reals) if not real]
        if bad:
            self.instance.log(f"fmi2GetReal: value reference(s) {bad} are not Real variables; "
                              "read as 0.0", fmu_instance.ERROR)
        return [float(self.vars[vr].getter()) if real else 0.0 for vr, real in zip(vrs, reals)]

    def get_integer(self, vrs):
        return self._get_values("Integer", vrs, int, super().get_integer)

    def get_boolean(self, vrs):
        return self._get_values("Boolean", vrs, lambda x: x != 0.0, super().get_boolean)

    def set_real(self, vrs, values):
        if not self.instance.set_inputs(vrs, values):
            super().set_real(vrs, values)       # parameters (and the type check)

    # -- FMU state: the instance's snapshot (format: fmu_wheelset/fmu/fmu_state.py) ----
    def _get_fmu_state(self):
        return self.instance.get_fmu_state()

    def _set_fmu_state(self, state):
        self.instance.set_fmu_state(state)

    @staticmethod
    def _fmu_state_to_bytes(state) -> bytes:
        return fmu_instance.state_to_bytes(state)

    @staticmethod
    def _fmu_state_from_bytes(state: bytes):
        return fmu_instance.state_from_bytes(state)
