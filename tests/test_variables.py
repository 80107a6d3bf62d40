"""The FMU's table of variables (fmu_wheelset/fmu/variables.py) against the core,
without building an FMU: every core parameter has an FMU parameter (or is on
the short list of those the FMU deliberately does not expose), the mapping
FMI <-> core round-trips, and the output names are the core record's names."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import solver.model as wheelset
from fmu_wheelset.fmu import variables as fmu_variables
from solver.model.parameters import WheelsetParameters

# WheelsetParameters fields with no FMU parameter, and why
NOT_IN_FMU = {
    "profile_step": "resampling step of the profiles: a numerical setting fixed in the FMU",
    "separation_min": "e_d of Ren & Jin's static analysis (the geometry command, the two-point "
                      "onset); the dynamics share the load by the saddles instead",
    "slope_difference_min": "e_k of Ren & Jin's static analysis, as separation_min",
}


def test_every_core_parameter_is_in_the_table_or_listed():
    fields = {f.name for f in dataclasses.fields(WheelsetParameters)}
    mapped = set(fmu_variables.CORE_FIELDS) | {fmu_variables.CREEP_OPTION}
    assert mapped <= fields, mapped - fields
    assert fields - mapped == set(NOT_IN_FMU)


def test_defaults_lie_in_the_declared_ranges():
    for var in fmu_variables.PARAMETERS:
        start = fmu_variables.start_value(var, wheelset)
        if var.type == "Real":
            assert var.min <= start <= var.max, var.name


def test_enumerations_cover_the_core_models():
    for enum in fmu_variables.ENUMERATIONS:
        assert set(enum.items) == set(getattr(wheelset, enum.core_names)), enum.name


def test_fmi_values_round_trip_to_the_core():
    """start values for non-default parameters give back the same parameters."""
    params = WheelsetParameters(wheel_profile="LMA", creep_model="fastsim", contact_model="single",
                                integrator="semi-implicit", speed=12.5, bogie=True,
                                suspension_stiffness=(1.0e6, 2.0e6, 3.0e6), track="kang-r320")
    values, missing = fmu_variables.start_values_for(params, wheelset)
    assert missing == []
    assert values["contact.creep_model"] == wheelset.CREEP_MODEL_NAMES.index("fastsim")
    assert values["suspension.stiffness.y"] == 2.0e6
    back = WheelsetParameters(**fmu_variables.parameters_from_fmi(values, wheelset))
    assert back == params


def test_fastrip_is_the_fifth_creep_model():
    """FaStrip is contact.creep_model = 4 and round-trips."""
    assert wheelset.CREEP_MODEL_NAMES.index("fastrip") == 4
    values, missing = fmu_variables.start_values_for(WheelsetParameters(creep_model="fastrip"),
                                                     wheelset)
    assert missing == [] and values["contact.creep_model"] == 4
    assert fmu_variables.parameters_from_fmi({"contact.creep_model": 4},
                                             wheelset)["creep_model"] == "fastrip"


def test_what_the_fmu_cannot_express_is_reported():
    params = WheelsetParameters(profile_step=2e-4, creep_options={"kX": 0.5})
    _, missing = fmu_variables.start_values_for(params, wheelset)
    assert len(missing) == 2 and "profile_step" in missing[0] and "kX" in missing[1]
    _, missing = fmu_variables.start_values_for(WheelsetParameters(speed=3.0), wheelset,
                                                available={"wheel.profile"})
    assert missing == ["the FMU has no parameter wheelset.speed for speed"]


@pytest.mark.parametrize("name, value, message", [
    ("wheelset.mass", -1.0, "out of range"), ("wheelset.mass", float("nan"), "not a finite"),
    ("contact.creep_model", 7, "is not one of"), ("wheel.profile", "  ", "is empty")])
def test_bad_fmi_values_are_refused_with_the_name(name, value, message):
    with pytest.raises(ValueError, match=message) as err:
        fmu_variables.parameters_from_fmi({name: value}, wheelset)
    assert name in str(err.value)


def test_output_names_are_the_record_names():
    """One output vocabulary: every FMU output but the status flags is a named
    quantity of the core's output record, under the same name."""
    for var in fmu_variables.RECORD_OUTPUTS:
        assert var.core == var.name and var.name in wheelset.RECORD_INDEX, var.name
    indices = [wheelset.RECORD_INDEX[v.core] for v in fmu_variables.RECORD_OUTPUTS]
    assert len(set(indices)) == len(indices)


def test_wheel_wear_number_is_the_sum_over_its_points():
    """T gamma of a wheel = sum over its points of |Fx xi| + |Fy eta| (the
    creep forces and creepages of the same record; 1e-9 relative: summation
    order only)."""
    from solver.scenarios import load_scenario, simulate
    c = simulate(load_scenario("kang-r320", duration=0.3)).columns
    for side in ("left", "right"):
        expected = sum(np.abs(c[f"contact.{side}.point[{k}].longitudinal_force"]
                              * c[f"contact.{side}.point[{k}].longitudinal_creepage"])
                       + np.abs(c[f"contact.{side}.point[{k}].lateral_force"]
                                * c[f"contact.{side}.point[{k}].lateral_creepage"])
                       for k in (1, 2, 3))
        assert np.max(expected) > 1.0          # creeping in the curve entry: not trivially 0
        np.testing.assert_allclose(c[f"wheel.{side}.wear_number"], expected, rtol=1e-9, atol=1e-9)


def test_creep_options_are_parameters_of_the_registry():
    """Every option of every creep model (solver.contact.creep.models) is an FMU
    parameter contact.creep.<model>.<option> with the registry's unit, range and
    default; the options of the model in use round-trip (a choice by its name)."""
    from solver.contact.creep.models import CREEP_MODELS
    for entry in CREEP_MODELS:
        for opt in entry.options:
            var = fmu_variables.BY_NAME[fmu_variables.creep_option_name(entry.name, opt.name)]
            assert (var.unit, var.min, var.max, var.start) == (opt.unit, opt.low, opt.high,
                                                               opt.default), var.name
    params = WheelsetParameters(creep_model="polach", creep_options={"kA": 0.3, "kS": 0.1, "B": 0.2})
    values, missing = fmu_variables.start_values_for(params, wheelset)
    assert missing == [] and values["contact.creep.polach.kA"] == 0.3
    assert WheelsetParameters(**fmu_variables.parameters_from_fmi(values, wheelset)) == params
    params = WheelsetParameters(creep_model="fastsim", creep_options={"nx": 12, "bound": "elliptic"})
    values, _ = fmu_variables.start_values_for(params, wheelset)
    assert values["contact.creep.fastsim.bound"] == 1
    assert WheelsetParameters(**fmu_variables.parameters_from_fmi(values, wheelset)) == params
    # an option outside the registry's range is refused with the parameter's name
    with pytest.raises(ValueError, match="contact.creep.polach.kA"):
        fmu_variables.parameters_from_fmi({"contact.creep_model": 2,
                                           "contact.creep.polach.kA": 1.5}, wheelset)


def test_the_fmus_registry_declarations_are_the_registries():
    """fmu_wheelset/fmu/registries.py (what the FMU declares of the solver's
    registries) is what the registries give: regenerate it with
    `python -m fmu_wheelset.fmu.registry_declarations`."""
    from fmu_wheelset.fmu import registry_declarations
    assert registry_declarations.TARGET.read_text(encoding="utf-8") == \
        registry_declarations.source(), "fmu_wheelset/fmu/registries.py is stale: regenerate it"
    from solver.contact.creep.models import CREEP_MODELS
    creep = fmu_variables.ENUMERATION_BY_NAME["CreepModel"]
    assert list(creep.items) == list(CREEP_MODELS.names())
    assert tuple(wheelset.CREEP_MODEL_NAMES) == CREEP_MODELS.names()


def test_the_fmus_contact_slots_are_the_solvers_point_count():
    """The FMU's contact.*.point[k] outputs and the hosts that read them count the
    points per wheel of solver.layout (the one count the array layout derives from)."""
    from solver.layout import MAX_POINTS
    assert fmu_variables.POINTS_PER_WHEEL == MAX_POINTS
    assert f"contact.left.point[{MAX_POINTS}].normal_force" in fmu_variables.BY_NAME
    assert f"contact.left.point[{MAX_POINTS + 1}].normal_force" not in fmu_variables.BY_NAME
