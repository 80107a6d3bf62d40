"""What every FMPy-driven host here needs once: setting a variable of any
type through an ``fmpy.fmi2.FMU2Slave`` (the vehicle master, the track master,
the benchmarks and the tests share it)."""
from __future__ import annotations


def set_variable(slave, variable, value) -> None:
    """Set one variable (an ``fmpy.model_description.ScalarVariable``) with the
    FMI setter of its type: Real, Integer/Enumeration, Boolean or String.
    Raises FMPy's FMICallException when the FMU refuses it."""
    vr = [variable.valueReference]
    if variable.type == "Real":
        slave.setReal(vr, [float(value)])
    elif variable.type in ("Integer", "Enumeration"):
        slave.setInteger(vr, [int(value)])
    elif variable.type == "Boolean":
        slave.setBoolean(vr, [bool(value)])
    elif variable.type == "String":
        slave.setString(vr, [str(value)])
    else:
        raise TypeError(f"cannot set {variable.name!r} of type {variable.type}")


def set_variables(slave, by_name: dict, values: dict) -> None:
    """`set_variable` for every name -> value of `values` (by_name: name ->
    ScalarVariable of the model description); KeyError for an unknown name."""
    for name, value in values.items():
        set_variable(slave, by_name[name], value)
