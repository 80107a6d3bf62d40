"""The FMU's value references are fixed for good.

A host keeps value references in its system files (an SSP, a libcosim or Ecos
configuration, a saved FMPy run), so a variable's number must never change: as
the FMI Reference-FMUs fix theirs in config.h, tests/data/value_references.json
holds the number of every variable the FMU had when they were fixed, and the
FMU's numbering (fmu_wheelset/fmu/registries.py VALUE_REFERENCES, which
`python -m fmu_wheelset.fmu.registry_declarations` extends) must keep each of
them. A new variable -- a parameter, an input, an output or a new creep model's
option, wherever it stands in the table -- takes the next free number.
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from fmu_wheelset.fmu import registries, variables
from fmu_wheelset.fmu.variables import in_value_reference_order

FIXED = json.loads((Path(__file__).parent / "data" / "value_references.json")
                   .read_text(encoding="utf-8"))["value_references"]


def test_every_fixed_value_reference_is_kept_by_the_table():
    changed = {name: (vr, variables.VALUE_REFERENCE.get(name)) for name, vr in FIXED.items()
               if variables.VALUE_REFERENCE.get(name) != vr}
    assert changed == {}, "value references changed (fixed, expected -> now)"
    assert sorted(FIXED.values()) == list(range(len(FIXED))), "the fixed numbers have no gap"


def test_the_numbering_covers_every_variable_of_the_table():
    """registries.VALUE_REFERENCES numbers every variable of the table: a new
    one has been numbered by `python -m fmu_wheelset.fmu.registry_declarations`."""
    numbered = registries.VALUE_REFERENCES
    assert len(numbered) == len(set(numbered))
    unnumbered = [v.name for v in variables.TABLE if v.name not in set(numbered)]
    assert unnumbered == [], ("run `python -m fmu_wheelset.fmu.registry_declarations` to "
                              "number the new variables")
    assert tuple(v.name for v in variables.VARIABLES) == numbered


def test_the_slave_and_the_native_front_end_use_these_numbers():
    """pythonfmu's slave registers the variables in value-reference order (it
    numbers them as it registers them) and the native front end's tables are
    indexed by them: both give each fixed variable its fixed number."""
    from fmu_wheelset.fmu import native_bridge, slave
    wheelset = slave.Wheelset(instance_name="numbers", resources=None)
    assert {var.name: vr for vr, var in wheelset.vars.items() if var.name in FIXED} == FIXED
    table = native_bridge.variable_table()
    causality = {"parameter": 0, "input": 1, "output": 2}
    for name, vr in FIXED.items():
        assert native_bridge.Instance.variable_name(vr) == name
        assert table[vr, 1] == causality[variables.BY_NAME[name].causality]


def test_a_new_variable_anywhere_in_the_table_takes_the_next_number():
    """A parameter put at the head of the table (as a new creep model's option
    lands among the others) and an output at its end: the old variables keep
    their numbers, the new ones are numbered after them in table order."""
    table = variables.TABLE
    new_parameter = replace(variables.BY_NAME["wheelset.mass"], name="wheelset.new_parameter")
    new_output = replace(variables.BY_NAME["wheelset.y"], name="wheelset.new_output")
    grown = (new_parameter,) + table + (new_output,)
    ordered = in_value_reference_order(grown, registries.VALUE_REFERENCES)
    numbers = {v.name: vr for vr, v in enumerate(ordered)}
    assert all(numbers[name] == vr for name, vr in FIXED.items())
    assert numbers["wheelset.new_parameter"] == len(table)
    assert numbers["wheelset.new_output"] == len(table) + 1


def test_a_numbered_variable_cannot_leave_the_table():
    """A removed variable would free its number for another: refused."""
    table = tuple(v for v in variables.TABLE if v.name != "wheelset.mass")
    with pytest.raises(ValueError, match="never removed or reused"):
        in_value_reference_order(table, registries.VALUE_REFERENCES)


def test_the_generator_keeps_the_numbers_and_appends_new_ones():
    """registry_declarations.value_references: the numbered names as they stand,
    then a new creep model option's parameter (here: an option added to the
    declarations) at the end."""
    from fmu_wheelset.fmu import registry_declarations
    options = registries.CREEP_OPTIONS + (
        ("kalker", "scale", "1", 1.0, 0.0, 2.0, False, (), "a test option", "none"),)
    names = registry_declarations.value_references(
        registries.ENUMERATIONS, options, registries.TRACKS, registries.PROFILES)
    assert names[:len(registries.VALUE_REFERENCES)] == registries.VALUE_REFERENCES
    assert names[len(registries.VALUE_REFERENCES):] == ("contact.creep.kalker.scale",)
