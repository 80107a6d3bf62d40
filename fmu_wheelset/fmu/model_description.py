"""The wheelset FMU's model description, from the table of variables
(`fmu_wheelset.fmu.variables`).

pythonfmu 0.7.0 writes the ``modelDescription.xml`` skeleton (GUID, model
identifier, CoSimulation capabilities, the ScalarVariables with names,
causalities, variabilities, initials, descriptions and starts, in the table's
order); `complete_model_description` adds what it does not write:

* ``UnitDefinitions`` for every unit used (m, rad, N, N.m, m/s, rad/s, s, kg,
  kg.m2, Pa, 1, 1/m, N.s/m, N/m), with SI base-unit exponents;
* ``TypeDefinitions``: one Real SimpleType per quantity (Length, Angle, Force,
  ...) and the Enumerations CreepModel, ContactModel, ContactGeometry, Integrator, checked against the core (their values
  are the core's model ids, `variables.ENUMERATIONS`);
* ``unit``, ``min``, ``max`` and ``declaredType`` on every Real; min/max on
  Integers; the model choices (the table's Enumeration parameters) are written
  as ``<Integer min=0 max=n-1>`` with their items in the description, because
  libcosim and Ecos ignore Enumeration variables (measured with this FMU
  declaring them ``<Enumeration declaredType=...>``: FMPy sets and reads them;
  libcosimpy 0.0.6 lists no Enumeration variable and refuses
  ``integer_initial_value`` on one; ecospy 0.7.2 has no property for one and drops
  it from a parameter set without a word, so the run would use the default
  model: docs/hosts.md);
* outputs ``initial="calculated"`` (no start: a host never sets them);
* ``ModelStructure/Outputs`` with the direct-feedthrough ``dependencies`` of
  ``variables.direct_inputs`` (``""``: none) and ``InitialUnknowns`` depending
  on every parameter and input (the static equilibrium at
  fmi2ExitInitializationMode uses them all);
* a ``DefaultExperiment`` (0 .. 1 s, 1 ms);
* ``providesDirectionalDerivative="true"`` on CoSimulation (the native front
  end's fmi2GetDirectionalDerivative: the direct feedthrough, section 2.1.9).

The result passes ``fmpy.validation.validate_fmu`` without a problem.
"""
from __future__ import annotations

from xml.dom.minidom import parseString
from xml.etree import ElementTree as ET

from fmu_wheelset.fmu.variables import (BY_NAME, ENUMERATIONS, VARIABLES, direct_inputs,
                                     enumeration_names, start_value)

# unit -> (SimpleType name, quantity, SI base-unit exponents)
UNITS = {
    "m": ("Length", "Length", {"m": 1}),
    "rad": ("Angle", "Angle", {"rad": 1}),
    "N": ("Force", "Force", {"kg": 1, "m": 1, "s": -2}),
    "N.m": ("Moment", "Torque", {"kg": 1, "m": 2, "s": -2}),
    "m/s": ("Velocity", "Velocity", {"m": 1, "s": -1}),
    "rad/s": ("AngularVelocity", "AngularVelocity", {"rad": 1, "s": -1}),
    "s": ("Time", "Time", {"s": 1}),
    "kg": ("Mass", "Mass", {"kg": 1}),
    "kg.m2": ("MomentOfInertia", "MomentOfInertia", {"kg": 1, "m": 2}),
    "Pa": ("Pressure", "Pressure", {"kg": 1, "m": -1, "s": -2}),
    "1": ("Dimensionless", "Dimensionless", {}),
    "1/m": ("Curvature", "Curvature", {"m": -1}),
    "N.s/m": ("DampingCoefficient", "DampingCoefficient", {"kg": 1, "s": -1}),
    "N/m": ("Stiffness", "Stiffness", {"kg": 1, "s": -2}),
    # the roll stiffness of the quarter vehicle's secondary suspension
    "N.m/rad": ("RotationalStiffness", "RotationalStiffness", {"kg": 1, "m": 2, "s": -2, "rad": -1}),
    # Kalker's spin creep coefficient f33 = G (ab)^2 C33 (contact.creep_coefficient.f33)
    "N.m2": ("SpinCreepCoefficient", "SpinCreepCoefficient", {"kg": 1, "m": 3, "s": -2}),
    # Polach's decay of the friction with the slip velocity, mu = mu0 ((1 - A) exp(-B w) + A)
    "s/m": ("InverseVelocity", "InverseVelocity", {"m": -1, "s": 1}),
    # the lumped rail bodies' matrices (rail.lumped.*): the roll damping and the
    # lateral-roll coupling terms of the mass, stiffness and damping matrices
    "N.m.s/rad": ("RotationalDamping", "RotationalDamping", {"kg": 1, "m": 2, "s": -1, "rad": -1}),
    "kg.m": ("MassCoupling", "MassCoupling", {"kg": 1, "m": 1}),
    "N/rad": ("StiffnessCoupling", "StiffnessCoupling", {"kg": 1, "m": 1, "s": -2, "rad": -1}),
    "N.s/rad": ("DampingCoupling", "DampingCoupling", {"kg": 1, "m": 1, "s": -1, "rad": -1}),
}


def _num(x: float) -> str:
    return repr(float(x))


def used_units() -> list:
    """The units of the table, in first-use order (each must be in UNITS)."""
    units = []
    for v in VARIABLES:
        if v.unit and v.unit not in units:
            if v.unit not in UNITS:
                raise ValueError(f"unit {v.unit!r} of {v.name} has no definition in "
                                 "fmu_wheelset.fmu.model_description.UNITS")
            units.append(v.unit)
    return units


def complete_model_description(xml: bytes, wheelset=None) -> bytes:
    """Add units, types, ranges, ModelStructure and a DefaultExperiment to a
    modelDescription.xml written by pythonfmu for fmu_wheelset.fmu.slave.
    `wheelset`: the core's module (its model names give the enumeration values;
    default: solver.model.wheelset)."""
    if wheelset is None:
        import solver.model as wheelset
    root = ET.fromstring(xml)
    for el in root.iter():          # drop pythonfmu's pretty-printing whitespace
        if el.text is not None and not el.text.strip():
            el.text = None
        el.tail = None
    children = list(root)
    cosim_index = [c.tag for c in children].index("CoSimulation")
    # the native front end's fmi2GetDirectionalDerivative (slave.directional_derivative)
    children[cosim_index].set("providesDirectionalDerivative", "true")

    units = used_units()
    units_el = ET.Element("UnitDefinitions")
    for unit in units:
        u = ET.SubElement(units_el, "Unit", name=unit)
        ET.SubElement(u, "BaseUnit", {k: str(e) for k, e in UNITS[unit][2].items()})
    types_el = ET.Element("TypeDefinitions")
    for unit in units:
        type_name, quantity, _ = UNITS[unit]
        st = ET.SubElement(types_el, "SimpleType", name=type_name)
        ET.SubElement(st, "Real", quantity=quantity, unit=unit)
    for enum in ENUMERATIONS:
        names = tuple(getattr(wheelset, enum.core_names))
        if set(names) != set(enum.items):
            raise ValueError(f"enumeration {enum.name}: the core's models {names} and the "
                             f"items of fmu_wheelset.fmu.variables {tuple(enum.items)} differ")
    root.insert(cosim_index + 1, units_el)
    root.insert(cosim_index + 2, types_el)

    if root.find("DefaultExperiment") is None:
        de = ET.Element("DefaultExperiment", startTime="0.0", stopTime="1.0", stepSize="0.001")
        root.insert(list(root).index(root.find("ModelVariables")), de)

    outputs = []
    index_of = {}
    knowns = []
    for index, sv in enumerate(root.find("ModelVariables"), start=1):
        name = sv.get("name")
        var = BY_NAME.get(name)
        if var is None:
            raise ValueError(f"variable {name!r} of the model description is not in the table")
        if not sv.get("description"):
            raise ValueError(f"variable {name!r} has no description")
        typed = sv[0]
        if var.type == "Real":
            typed.set("declaredType", UNITS[var.unit][0])
            typed.set("unit", var.unit)
            if var.min is not None:
                typed.set("min", _num(var.min))
            if var.max is not None:
                typed.set("max", _num(var.max))
            if typed.get("start") is not None:
                # the table's own value (pythonfmu writes 16 digits, which does not
                # always round-trip: the start must be the core's default exactly)
                typed.set("start", _num(start_value(var, wheelset)))
        elif var.type == "Enumeration":
            # an Integer holding the core's model id (libcosim and Ecos cannot set
            # Enumeration variables); the ids and names are in the description
            typed.tag = "Integer"
            typed.set("min", "0")
            typed.set("max", str(len(enumeration_names(var, wheelset)) - 1))
        elif var.type == "Integer":
            if var.min is not None:
                typed.set("min", str(int(var.min)))
            if var.max is not None:
                typed.set("max", str(int(var.max)))
        if var.causality == "output":
            # computed by the FMU: never set by a host, so no start value
            sv.set("initial", "calculated")
            typed.attrib.pop("start", None)
            outputs.append((index, name))
        index_of[name] = index
        if var.causality in ("parameter", "input"):
            knowns.append(index)

    structure = root.find("ModelStructure")
    for child in list(structure):
        structure.remove(child)
    out_el = ET.SubElement(structure, "Outputs")
    for i, name in outputs:
        deps = sorted(index_of[n] for n in direct_inputs(name))
        ET.SubElement(out_el, "Unknown", index=str(i), dependencies=" ".join(map(str, deps)))
    init_el = ET.SubElement(structure, "InitialUnknowns")
    all_knowns = " ".join(map(str, knowns))
    for i, _ in outputs:
        ET.SubElement(init_el, "Unknown", index=str(i), dependencies=all_knowns)

    text = ET.tostring(root, encoding="UTF-8")
    return parseString(text).toprettyxml(indent="  ", encoding="UTF-8")
