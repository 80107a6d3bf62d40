"""What the FMU declares of the solver's registries, written out as data.

The FMU's variable table (variables.py) runs inside the FMU without the
solver (it is read before the solver is imported), so what it needs of the
registries -- the enumeration items of the creep models, contact models,
contact geometry modes and integrators, and the creep models' options as
parameters -- is written from the registries into fmu_wheelset/fmu/registries.py:

    python -m fmu_wheelset.fmu.registry_declarations        # rewrites registries.py

tests/test_variables.py fails when that file and the registries differ; the FMU
build refuses to bundle a stale one. Not bundled in the FMU (it imports the solver).
"""
from __future__ import annotations

import importlib
import pprint
import sys
from pathlib import Path

# FMI enumeration type, the solver.model tuple of its names, the registry
KINDS = (
    ("CreepModel", "CREEP_MODEL_NAMES", "solver.contact.creep.models", "CREEP_MODELS"),
    ("ContactModel", "CONTACT_MODEL_NAMES", "solver.contact.geometry.modes", "CONTACT_MODELS"),
    ("ContactGeometry", "CONTACT_GEOMETRY_NAMES", "solver.contact.geometry.modes", "GEOMETRY_MODES"),
    ("Integrator", "INTEGRATOR_NAMES", "solver.dynamics.integrators.methods", "INTEGRATORS"),
)
TARGET = Path(__file__).with_name("registries.py")

HEADER = '''"""The solver's registries as the FMU declares them (GENERATED, do not edit).

Written by `python -m fmu_wheelset.fmu.registry_declarations` from the
registries of solver.contact.creep.models, solver.contact.geometry.modes,
solver.dynamics.integrators.methods, solver.scenarios and solver.track.builtins; tests/test_variables.py fails when this
file and the registries differ. Bundled in the FMU beside variables.py (plain
data: the standard library only).

ENUMERATIONS: FMI type -> (the solver.model tuple of the names, the items in id
order as (name, FMI item name, description)).
CREEP_OPTIONS: per option of a creep model (model, option, unit, default, low,
high, integer, choices, description, source); the FMU parameter is
contact.creep.<model>.<option>.
SCENARIOS: the built-in scenarios (name, description, the FMU's name of its
track or None, the command line's aliases); TRACKS: the built-in tracks
(name, description), the values of track.scenario.
"""
'''


def registry(module: str, name: str):
    return getattr(importlib.import_module(module), name)


def declarations() -> dict:
    """{"ENUMERATIONS": ..., "CREEP_OPTIONS": ...} from the live registries."""
    enumerations = {}
    for type_name, core_names, module, name in KINDS:
        reg = registry(module, name)
        enumerations[type_name] = (core_names, tuple((e.name, e.fmi_name or e.name, e.label)
                                                     for e in reg.entries))
    creep = registry("solver.contact.creep.models", "CREEP_MODELS")
    options = tuple((e.name, o.name, o.unit, float(o.default), float(o.low), float(o.high),
                     bool(o.integer), tuple(o.choices), o.description, o.source)
                    for e in creep.entries for o in e.options)
    scenarios = tuple((e.name, e.label, e.facts["track"], tuple(e.facts["aliases"]))
                      for e in registry("solver.scenarios", "SCENARIOS").entries)
    tracks = tuple((e.name, e.label) for e in registry("solver.track.builtins", "TRACKS").entries)
    return {"ENUMERATIONS": enumerations, "CREEP_OPTIONS": options, "SCENARIOS": scenarios,
            "TRACKS": tracks}


def source(data: dict | None = None) -> str:
    """The text of registries.py for `data` (default: the live registries)."""
    data = declarations() if data is None else data
    body = "".join(f"\n{key} = {pprint.pformat(value, width=99, sort_dicts=False)}\n"
                   for key, value in data.items())
    return HEADER + body


def main(argv=None) -> int:
    TARGET.write_text(source(), encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
