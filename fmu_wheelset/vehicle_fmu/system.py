"""The Manchester benchmark vehicle 1 as a standard co-simulation system: an
SSP 1.0 archive (`write_vehicle_ssp`) of five FMUs, the vehicle-bodies FMU
(fmu_wheelset/vehicle_fmu) and four instances of the wheelset FMU as it is,
and the same system as libcosim's OspSystemStructure.xml.

The archive holds
  SystemStructure.ssd              the system (the "benchmark" case's values first),
  SystemStructure-<case>.ssd       the same system with that case's values first
                                   (libcosim applies a component's first binding),
  resources/VehicleBodies.fmu, resources/Wheelset.fmu,
  resources/<case>/<component>.ssv one parameter set per case and component (each
                                   SSD binds all of them: Ecos picks one by name),
  OspSystemStructure.xml, OspSystemStructure-<case>.xml
                                   libcosim's format (sources resources/*.fmu).
Every connector carries its unit (ssd:Units), every connection joins two
connectors of the same unit; `validate_system` checks the files against the
published schemas (fmu_wheelset/vehicle_fmu/schemas).
"""
from __future__ import annotations

import math
import zipfile
from pathlib import Path
from xml.dom.minidom import parseString
from xml.etree import ElementTree as ET

from fmu_wheelset.fmu.model_description import UNITS

from .variables import N_IO, SCHEME_NAMES, VARIABLES, connections

SSD = "http://ssp-standard.org/SSP1/SystemStructureDescription"
SSC = "http://ssp-standard.org/SSP1/SystemStructureCommon"
SSV = "http://ssp-standard.org/SSP1/SystemStructureParameterValues"
OSP_ANNOTATION = "http://opensimulationplatform.com/SSP/OSPAnnotations"
OSP_CONFIG = "http://opensimulationplatform.com/MSMI/OSPSystemStructure"
SCHEMAS = Path(__file__).resolve().parent / "schemas"
BODIES = "bodies"
WHEELSETS = tuple(f"wheelset{j}" for j in range(1, 5))
STEP = 1e-3
# the cases: speed (m/s), curve radius (m, 0 straight), cant (m), straight and
# transition (m), initial lateral offset of every wheelset (m), default stop time (s)
CASES = {
    "benchmark": dict(speed=30.0, radius=0.0, cant=0.0, straight=10.0, transition=50.0,
                      initial_lateral=0.0, stop=5.0),
    "straight-3mm": dict(speed=30.0, radius=0.0, cant=0.0, straight=10.0, transition=50.0,
                         initial_lateral=0.003, stop=5.0),
    "curve-R600": dict(speed=113.0 / 3.6, radius=600.0, cant=0.15, straight=5.0, transition=40.0,
                       initial_lateral=0.0, stop=12.0),
}
for _ns, _prefix in ((SSD, "ssd"), (SSC, "ssc"), (SSV, "ssv"), (OSP_ANNOTATION, "osp")):
    ET.register_namespace(_prefix, _ns)


def case_values(case: str, vehicle=None, scheme: int = 1, push=(1, 0.0, 0.0)) -> dict:
    """{component: {variable: value}} of one case (bodies and each wheelset):
    what the project's master sets itself (cosim.vehicle.master) as FMI values."""
    from cosim.vehicle import body_step as bs
    from cosim.vehicle.bodies import VehicleModel
    from cosim.vehicle.curve_layout import CurveLayout
    from cosim.vehicle.master import wheelset_parameters
    from cosim.vehicle.parameters import VehicleParameters
    from .variables import vehicle_parameter_names
    if case not in CASES:
        raise ValueError(f"unknown case {case!r}; cases: {', '.join(CASES)}")
    c = CASES[case]
    p = vehicle or VehicleParameters()
    bodies = {}
    for field, value in p.__dict__.items():
        for name, v in zip(vehicle_parameter_names(field, value),
                           value if isinstance(value, tuple) else (value,)):
            bodies[name] = float(v)
    bodies.update({"vehicle.speed": c["speed"], "track.curve_radius": c["radius"],
                   "track.cant": c["cant"], "track.straight": c["straight"],
                   "track.transition": c["transition"], "coupling.scheme": int(scheme),
                   "push.wheelset": int(push[0]), "push.force": float(push[1]),
                   "push.duration": float(push[2])})
    model = VehicleModel(p)
    layout = CurveLayout(radius=math.inf if c["radius"] == 0 else c["radius"], cant=c["cant"],
                         straight=c["straight"], transition=c["transition"])
    box = bs.static_box_forces(model)
    s = -(p.bogie_semi_spacing + p.semi_wheelbase) + model.wheelset_positions
    out = {BODIES: bodies}
    for j, name in enumerate(WHEELSETS):
        values = wheelset_parameters(p, c["speed"])
        values["wheelset.initial_lateral"] = c["initial_lateral"]
        for k, side in enumerate(("left", "right")):
            for a, axis in enumerate("xyz"):
                values[f"axlebox.{side}.force.{axis}"] = float(box[j, 3 * k + a])
        values["track.curvature"] = float(layout.curvature(s[j]))
        values["track.cant_angle"] = float(layout.cant_angle(s[j]))
        out[name] = values
    return out


def _fmi_variables(fmu) -> dict:
    from fmpy import read_model_description
    return {v.name: v for v in read_model_description(str(fmu)).modelVariables}


def _typed(parent, ns, value, unit=None):
    """ssv:Real / Integer / Boolean / String (or ssc: for connectors: value None)."""
    if isinstance(value, bool):
        kind, text = "Boolean", "true" if value else "false"
    elif isinstance(value, int):
        kind, text = "Integer", str(value)
    elif isinstance(value, float):
        kind, text = "Real", repr(value)
    else:
        kind, text = "String", str(value)
    el = ET.SubElement(parent, f"{{{ns}}}{kind}", {"value": text})
    if kind == "Real" and unit:
        el.set("unit", unit)
    return el


def _units_element(parent, ns_units, units):
    units_el = ET.SubElement(parent, f"{{{ns_units}}}Units")
    for unit in units:
        u = ET.SubElement(units_el, f"{{{SSC}}}Unit", name=unit)
        ET.SubElement(u, f"{{{SSC}}}BaseUnit", {k: str(e) for k, e in UNITS[unit][2].items()})


def _pretty(root) -> bytes:
    return parseString(ET.tostring(root, encoding="UTF-8")).toprettyxml(indent="  ", encoding="UTF-8")


def parameter_set_xml(case: str, values: dict, variables: dict) -> bytes:
    root = ET.Element(f"{{{SSV}}}ParameterSet", version="1.0", name=case)
    params = ET.SubElement(root, f"{{{SSV}}}Parameters")
    units = []
    for name, value in values.items():
        unit = variables[name].unit or None
        if unit and unit not in units:
            units.append(unit)
        p = ET.SubElement(params, f"{{{SSV}}}Parameter", name=name)
        _typed(p, SSV, value, unit)
    if units:
        _units_element(root, SSV, units)
    return _pretty(root)


def _connector_kind(var) -> str:
    return {"input": "input", "output": "output", "parameter": "parameter"}[var.causality]


def system_description(first_case: str, cases: dict, bodies_vars: dict, wheelset_vars: dict) -> bytes:
    """SystemStructure.ssd with every case's parameter sets bound, first_case first."""
    root = ET.Element(f"{{{SSD}}}SystemStructureDescription", version="1.0",
                      name="ManchesterBenchmarkVehicle1",
                      description="Manchester benchmark vehicle 1 (Iwnicki 1998) over four wheelset "
                                  "FMUs: the carbody, bogie frames and suspensions in "
                                  "VehicleBodies.fmu (wheelset-fmu system vehicle)")
    system = ET.SubElement(root, f"{{{SSD}}}System", name="vehicle",
                           description=f"case {first_case} first; the cases: {', '.join(cases)}")
    elements = ET.SubElement(system, f"{{{SSD}}}Elements")
    order = [first_case] + [c for c in cases if c != first_case]
    units = []
    links = connections()
    for component in (BODIES,) + WHEELSETS:
        is_bodies = component == BODIES
        source = "resources/VehicleBodies.fmu" if is_bodies else "resources/Wheelset.fmu"
        variables = bodies_vars if is_bodies else wheelset_vars
        comp = ET.SubElement(elements, f"{{{SSD}}}Component", name=component, source=source,
                             type="application/x-fmu-sharedlibrary")
        connectors = ET.SubElement(comp, f"{{{SSD}}}Connectors")
        if is_bodies:
            names = [v.name for v in VARIABLES[:N_IO]]
        else:
            j = int(component[-1])
            names = [w for (_, k, w, _, _) in links if k == j]
        names += [n for n in cases[first_case][component] if n not in names]
        for name in names:
            var = variables[name]
            con = ET.SubElement(connectors, f"{{{SSD}}}Connector", name=name, kind=_connector_kind(var))
            kind = {"Real": "Real", "Integer": "Integer", "Enumeration": "Integer",
                    "Boolean": "Boolean", "String": "String"}[var.type]
            typed = ET.SubElement(con, f"{{{SSC}}}{kind}")
            if kind == "Real" and var.unit:
                typed.set("unit", var.unit)
                if var.unit not in units:
                    units.append(var.unit)
        bindings = ET.SubElement(comp, f"{{{SSD}}}ParameterBindings")
        for case in order:
            ET.SubElement(bindings, f"{{{SSD}}}ParameterBinding",
                          source=f"resources/{case}/{component}.ssv")
    conns = ET.SubElement(system, f"{{{SSD}}}Connections")
    for bodies_name, j, wheelset_name, _unit, causality in links:
        ends = ((f"wheelset{j}", wheelset_name), (BODIES, bodies_name))
        if causality == "output":          # the bodies' output to the wheelset's input
            ends = ends[::-1]
        (se, sc), (ee, ec) = ends
        ET.SubElement(conns, f"{{{SSD}}}Connection", startElement=se, startConnector=sc,
                      endElement=ee, endConnector=ec)
    _units_element(root, SSD, units)
    experiment = ET.SubElement(root, f"{{{SSD}}}DefaultExperiment", startTime="0.0",
                               stopTime=repr(CASES[first_case]["stop"]))
    annotations = ET.SubElement(experiment, f"{{{SSD}}}Annotations")
    annotation = ET.SubElement(annotations, f"{{{SSC}}}Annotation", type="com.opensimulationplatform")
    algorithm = ET.SubElement(annotation, f"{{{OSP_ANNOTATION}}}Algorithm")
    ET.SubElement(algorithm, f"{{{OSP_ANNOTATION}}}FixedStepAlgorithm", baseStepSize=repr(STEP))
    return _pretty(root)


def osp_configuration(case: str, values: dict) -> bytes:
    """OspSystemStructure.xml of one case (libcosim's format, version 0.1)."""
    ET.register_namespace("", OSP_CONFIG)
    q = lambda tag: f"{{{OSP_CONFIG}}}{tag}"       # noqa: E731
    root = ET.Element(q("OspSystemStructure"), version="0.1")
    ET.SubElement(root, q("StartTime")).text = "0.0"
    ET.SubElement(root, q("BaseStepSize")).text = repr(STEP)
    ET.SubElement(root, q("Algorithm")).text = "fixedStep"
    simulators = ET.SubElement(root, q("Simulators"))
    for component in (BODIES,) + WHEELSETS:
        source = "resources/VehicleBodies.fmu" if component == BODIES else "resources/Wheelset.fmu"
        sim = ET.SubElement(simulators, q("Simulator"), name=component, source=source,
                            stepSize=repr(STEP))
        initial = ET.SubElement(sim, q("InitialValues"))
        for name, value in values[component].items():
            iv = ET.SubElement(initial, q("InitialValue"), variable=name)
            kind = ("Boolean" if isinstance(value, bool) else "Integer" if isinstance(value, int)
                    else "Real" if isinstance(value, float) else "String")
            text = ("true" if value else "false") if kind == "Boolean" else (
                repr(value) if kind == "Real" else str(value))
            ET.SubElement(iv, q(kind), value=text)
    conns = ET.SubElement(root, q("Connections"))
    for bodies_name, j, wheelset_name, _unit, causality in connections():
        ends = ((f"wheelset{j}", wheelset_name), (BODIES, bodies_name))
        if causality == "output":
            ends = ends[::-1]
        vc = ET.SubElement(conns, q("VariableConnection"))
        for sim, name in ends:
            ET.SubElement(vc, q("Variable"), simulator=sim, name=name)
    text = _pretty(root)
    ET.register_namespace("osp", OSP_ANNOTATION)
    return text


def write_vehicle_ssp(out, wheelset_fmu, bodies_fmu, vehicle=None, scheme: int = 1) -> Path:
    """Write the SSP archive `out` (see the module docstring) from the two FMU
    files; returns its path. scheme: the bodies' coupling scheme for the
    masters that will run it (1 jacobi: libcosim, Ecos)."""
    out = Path(out)
    if out.suffix != ".ssp":
        raise ValueError(f"the output must be a .ssp file, got {out}")
    if scheme not in range(len(SCHEME_NAMES)):
        raise ValueError(f"scheme must be one of 0..{len(SCHEME_NAMES) - 1}")
    bodies_vars = _fmi_variables(bodies_fmu)
    wheelset_vars = _fmi_variables(wheelset_fmu)
    cases = {case: case_values(case, vehicle, scheme) for case in CASES}
    for case, values in cases.items():
        for component, vals in values.items():
            known = bodies_vars if component == BODIES else wheelset_vars
            missing = [n for n in vals if n not in known]
            if missing:
                raise ValueError(f"{component} has no variables {missing[:3]} (another FMU build?)")
    files = {}
    for case in CASES:
        name = "SystemStructure.ssd" if case == "benchmark" else f"SystemStructure-{case}.ssd"
        files[name] = system_description(case, cases, bodies_vars, wheelset_vars)
        osp = "OspSystemStructure.xml" if case == "benchmark" else f"OspSystemStructure-{case}.xml"
        files[osp] = osp_configuration(case, cases[case])
        for component, vals in cases[case].items():
            variables = bodies_vars if component == BODIES else wheelset_vars
            files[f"resources/{case}/{component}.ssv"] = parameter_set_xml(case, vals, variables)
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
        z.write(str(bodies_fmu), "resources/VehicleBodies.fmu")
        z.write(str(wheelset_fmu), "resources/Wheelset.fmu")
    return out


def validate_system(ssp) -> list:
    """Every .ssd, .ssv and OSP file of the archive checked against its
    published schema (fmu_wheelset/vehicle_fmu/schemas); returns what was
    checked; raises xmlschema.XMLSchemaValidationError on the first failure.
    Also every connection joins connectors of the same type and unit."""
    import xmlschema
    schema = {
        ".ssd": xmlschema.XMLSchema(str(SCHEMAS / "SystemStructureDescription.xsd")),
        ".ssv": xmlschema.XMLSchema(str(SCHEMAS / "SystemStructureParameterValues.xsd")),
        ".xml": xmlschema.XMLSchema(str(SCHEMAS / "OspSystemStructure.xsd")),
    }
    checked = []
    with zipfile.ZipFile(ssp) as z:
        for name in z.namelist():
            suffix = Path(name).suffix
            if suffix in schema and (suffix != ".xml" or Path(name).name.startswith("OspSystemStructure")):
                data = z.read(name)
                schema[suffix].validate(data.decode())
                checked.append(name)
                if suffix == ".ssd":
                    _check_connection_units(data, name)
    return checked


def _check_connection_units(data: bytes, name: str):
    root = ET.fromstring(data)
    ns = {"ssd": SSD, "ssc": SSC}
    kinds = {}
    for comp in root.iterfind(".//ssd:Component", ns):
        for con in comp.iterfind("ssd:Connectors/ssd:Connector", ns):
            typed = con[0]
            kinds[(comp.get("name"), con.get("name"))] = (typed.tag, typed.get("unit"), con.get("kind"))
    for c in root.iterfind(".//ssd:Connection", ns):
        start = kinds[(c.get("startElement"), c.get("startConnector"))]
        end = kinds[(c.get("endElement"), c.get("endConnector"))]
        if start[:2] != end[:2] or start[1] is None or (start[2], end[2]) != ("output", "input"):
            raise ValueError(f"{name}: connection {c.attrib} joins {start} to {end}")


def connection_table_markdown() -> str:
    """What a vehicle model (Modelica, Simulink, any host) must connect to each
    wheelset FMU, as a Markdown table from the bodies FMU's variable table
    (docs/vehicle.md holds it; tests/test_vehicle_system.py keeps it current)."""
    from fmu_wheelset.fmu.variables import VARIABLES as WHEELSET
    wheelset = {v.name: v for v in WHEELSET}
    lines = ["| wheelset FMU variable (each wheelset j = 1..4) | direction | unit | "
             "vehicle-bodies FMU variable | meaning |",
             "|---|---|---|---|---|"]
    seen = set()
    for bodies_name, j, wheelset_name, unit, causality in connections():
        if j != 1 or wheelset_name in seen:
            continue
        seen.add(wheelset_name)
        direction = "vehicle -> wheelset" if causality == "output" else "wheelset -> vehicle"
        meaning = wheelset[wheelset_name].description.split(";")[0].rstrip(".")
        lines.append(f"| `{wheelset_name}` | {direction} | {unit} | "
                     f"`{bodies_name.replace('wheelset1.', 'wheelset<j>.')}` | {meaning} |")
    fixed = ["`suspension.builtin` = false", "`track.curvature_from_input` = true",
             "`track.cant_from_input` = true", "`track.scenario` = straight",
             "`wheelset.speed`, `wheelset.mass`, `wheelset.inertia.{x,y,z}`, "
             "`wheel.nominal_rolling_radius`, `wheelset.axle_box_semi_spacing` = the vehicle's"]
    lines.append("")
    lines.append("Parameters of every wheelset FMU: " + "; ".join(fixed) + ".")
    return "\n".join(lines) + "\n"
