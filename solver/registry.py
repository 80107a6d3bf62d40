"""Registries: the models a user chooses by name, each kind in one table.

One registry per kind (creep models, integrators, contact geometry modes,
built-in profiles, tracks and scenarios), each in the module of its kind. An
entry names the model and says everything the rest of the project derives
from it: the numba kernel's dispatch on the entry's id, the FMU's
enumeration items and parameters, the command line's choices, the docs'
tables and the tests. Adding a model is one entry, one kernel and one test;
the contract for each kind is in docs/ARCHITECTURE.md ("Adding a model").

Ids are the entries' positions, 0, 1, 2, ... in the order of registration:
they are the FMU's enumeration values, so an entry is never removed or moved.
A registry whose kernels are dispatched by compiled code is frozen when that
code is generated (solver.codegen): an entry registered after that would not be
reached, so `register` refuses it with a message saying where to register.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from . import codegen
from .errors import SolverError

# one identifier of an FMI 2.0 structured name (FMI 2.0 section 2.2.9, "B-name":
# nondigit {digit | nondigit}, nondigit = "_" | a-z | A-Z)
FMI_NAME_PART = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class RegistryError(SolverError):
    """An unknown name, a duplicate entry, a registration too late, an option out of range."""


@dataclass(frozen=True)
class Option:
    """One numeric option of a model, as the FMU declares it (a parameter named
    <prefix>.<model>.<name>) and the Python API takes it (options={name: value})."""

    name: str                 # its key; an identifier
    unit: str                 # SI unit, "1" for a pure number
    default: float
    low: float                # declared range, both ends included
    high: float
    description: str
    source: str = ""          # where the default and the range come from
    integer: bool = False     # a count (FMI Integer)
    choices: tuple = ()       # named values (FMI Enumeration): the names, in value order

    def __post_init__(self):
        codegen.check_identifier(self.name)
        if self.choices:
            object.__setattr__(self, "low", 0.0)
            object.__setattr__(self, "high", float(len(self.choices) - 1))
        if not (self.low <= self.default <= self.high):
            raise RegistryError(f"option {self.name}: default {self.default} outside "
                                f"[{self.low}, {self.high}]")

    def value(self, given, model: str) -> float:
        """The option's number from what a user gave (a number or one of the
        choices' names), checked against the declared range: RegistryError
        otherwise."""
        if self.choices and isinstance(given, str):
            if given not in self.choices:
                raise RegistryError(f"{model} option {self.name} must be one of "
                                    f"{list(self.choices)}, got {given!r}")
            return float(self.choices.index(given))
        if isinstance(given, bool):
            raise RegistryError(f"{model} option {self.name} must be a number, got {given!r}")
        try:
            number = float(given)
        except (TypeError, ValueError):
            raise RegistryError(f"{model} option {self.name} must be a number, got {given!r}") from None
        if not (math.isfinite(number) and self.low <= number <= self.high):
            raise RegistryError(f"{model} option {self.name} = {given!r} is outside its declared "
                                f"range [{self.low:g}, {self.high:g}] {self.unit}")
        if (self.integer or self.choices) and number != int(number):
            raise RegistryError(f"{model} option {self.name} must be a whole number, got {given!r}")
        return number


@dataclass(frozen=True)
class Entry:
    """One model of a registry."""

    name: str                 # what users write (the CLI, WheelsetParameters, a file)
    label: str                # one line: the FMU enumeration item's description
    fmi_name: str = ""        # the FMU enumeration item's name (an identifier; "": none)
    kernel: object = None     # the numba function with the kind's one signature
    reference: object = None  # a plain Python version of the kernel, if the kind has them
    builder: object = None    # for the built-ins: the function that makes one
    options: tuple = ()       # Option, in the order of the kernel's option vector
    source: str = ""          # the published source of the model
    facts: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    id: int = -1              # set by the registry: its position

    def option(self, name: str) -> Option:
        for opt in self.options:
            if opt.name == name:
                return opt
        raise RegistryError(f"{self.name} has no option {name!r}; it has "
                            f"{[o.name for o in self.options] or 'none'}")


class Registry:
    """The entries of one kind, in id order."""

    def __init__(self, kind: str, max_options: int = 0, error=RegistryError):
        self.kind = kind
        self.max_options = max_options
        self.error = error          # the class of its errors (a subclass of SolverError)
        self._entries: list[Entry] = []
        self._frozen_by: str | None = None

    def register(self, entry: Entry, **facts) -> Entry:
        """Add entry (its facts updated by `facts`) with the next id; returns it as registered."""
        if self._frozen_by is not None:
            raise RegistryError(f"{self.kind} {entry.name!r} registered after {self._frozen_by} "
                                f"was generated from the registry: register it before that "
                                f"module is imported")
        if not isinstance(entry.name, str) or not entry.name.strip() or entry.name != entry.name.strip():
            raise RegistryError(f"a {self.kind} needs a name without surrounding blanks, "
                                f"got {entry.name!r}")
        if any(e.name == entry.name for e in self._entries):
            raise RegistryError(f"{self.kind} {entry.name!r} is registered already")
        if entry.fmi_name:
            codegen.check_identifier(entry.fmi_name)
        if entry.options:
            # the FMU declares each option as the parameter contact.creep.<name>.<option>:
            # both must be FMI 2.0 structured-name identifiers (letters, digits, _)
            for part in (entry.name, *(o.name for o in entry.options)):
                if not FMI_NAME_PART.match(part):
                    raise RegistryError(
                        f"{self.kind} {entry.name!r}: {part!r} is not an FMI 2.0 structured-name "
                        "identifier (a letter or _, then letters, digits or _): the FMU names "
                        "a parameter after each option of the model")
        if len(entry.options) > self.max_options:
            raise RegistryError(f"a {self.kind} has at most {self.max_options} options, "
                                f"{entry.name!r} has {len(entry.options)}")
        merged = MappingProxyType({**entry.facts, **facts})
        entry = Entry(**{**entry.__dict__, "facts": merged, "id": len(self._entries)})
        self._entries.append(entry)
        return entry

    def freeze(self, by: str):
        """No more entries: `by` (a module) has generated code from them."""
        self._frozen_by = by

    @property
    def entries(self) -> tuple:
        return tuple(self._entries)

    def names(self) -> tuple:
        return tuple(e.name for e in self._entries)

    def get(self, key) -> Entry:
        """The entry of a name (case and surrounding blanks ignored) or an id."""
        if isinstance(key, str):
            wanted = key.strip().lower()
            for e in self._entries:
                if e.name.lower() == wanted:
                    return e
        elif (isinstance(key, (int, np.integer)) and not isinstance(key, bool)
              and 0 <= int(key) < len(self._entries)):
            return self._entries[int(key)]
        raise self.error(f"unknown {self.kind} {key!r}; choose one of {list(self.names())}")

    def __contains__(self, key) -> bool:
        try:
            self.get(key)
        except RegistryError:
            return False
        return True

    def __iter__(self):
        return iter(self._entries)

    def __len__(self):
        return len(self._entries)

    def digest(self) -> str:
        """A digest of the entries' names, ids and kernels (the generated code's name carries it)."""
        return codegen.digest(*((e.id, e.name, getattr(e.kernel, "__module__", ""),
                                 getattr(e.kernel, "__name__", "")) for e in self._entries))

    def option_vector(self, key, given=None) -> list:
        """The entry's option values in kernel order (defaults where not given),
        padded with zeros to max_options: RegistryError for an unknown option or
        a value outside its range."""
        entry = self.get(key)
        given = dict(given or {})
        unknown = set(given) - {o.name for o in entry.options}
        if unknown:
            raise self.error(f"unknown option(s) {sorted(unknown)} for {self.kind} "
                             f"{entry.name!r}; it has {[o.name for o in entry.options] or 'none'}")
        try:
            values = [opt.value(given.get(opt.name, opt.default), entry.name) for opt in entry.options]
        except RegistryError as exc:
            raise self.error(str(exc)) from None
        return values + [0.0] * (self.max_options - len(values))


def dispatch_source(registry: Registry, name: str, arguments: str, guard: str = "",
                    fallback: str = "") -> str:
    """The source of `def <name>(id, <arguments>)`: the kernel of the entry with
    that id called with the arguments (each kernel bound in the namespace as
    _kernel_<id>), `guard` (a statement block, 4-space indented) first and
    `fallback` returned for an id no entry has."""
    codegen.check_identifier(name)
    args = [codegen.check_identifier(a.strip()) for a in arguments.split(",")]
    call = ", ".join(args)
    lines = [f"def {name}(entry_id, {call}):"]
    if guard:
        lines += [guard.rstrip("\n")]
    for entry in registry.entries:
        lines += [f"    if entry_id == {int(entry.id)}:",
                  f"        return _kernel_{int(entry.id)}({call})"]
    lines += [f"    return {fallback}"]
    return "\n".join(lines) + "\n"


def define_dispatch(registry: Registry, name: str, arguments: str, namespace: dict, *,
                    guard: str = "", fallback: str, jit) -> object:
    """Generate the dispatch function of dispatch_source in `namespace` (a
    module's globals), compile it with `jit` (numba.njit(...)) and freeze the
    registry. The compiled function's name carries the registry's digest, so
    numba's cache never serves the dispatch of another set of entries."""
    package = namespace.get("__name__", "").split(".")[0]
    for entry in registry.entries:
        if entry.kernel is None:
            raise RegistryError(f"{registry.kind} {entry.name!r} has no kernel")
        namespace[f"_kernel_{int(entry.id)}"] = entry.kernel
    # numba caches a kernel by its own source only: the compiled kernels that call
    # this dispatch (the right-hand side, the step) would come from the cache with
    # the dispatch of the built-in entries in them. Entries of a user's own need
    # a cache of their own, one per set of registrations.
    own = [e.name for e in registry.entries
           if getattr(e.kernel, "__module__", "").split(".")[0] != package]
    if own and not os.environ.get("NUMBA_CACHE_DIR"):
        raise RegistryError(f"{registry.kind}(s) {own} registered outside the solver: numba's "
                            f"cache of the solver's kernels does not know them; set "
                            f"NUMBA_CACHE_DIR to a folder of your own (one per set of "
                            f"registrations) before Python starts")
    unique = f"{name}_{registry.digest()}"
    source = dispatch_source(registry, unique, arguments, guard, fallback)
    function = codegen.define(source, unique, namespace)
    registry.freeze(namespace.get("__name__", "?"))
    return jit(function)
