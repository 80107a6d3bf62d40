"""Build the vehicle-bodies FMU (VehicleBodies.fmu, FMI 2.0 co-simulation).

The binary is the project's native front end (fmu_wheelset/fmu/native),
compiled unchanged under the model identifier VehicleBodies: it embeds or
joins Python and loads ``resources/<package>/native_bridge.py``, here this
package's bridge (fmu_wheelset/vehicle_fmu/native_bridge.py), whose
fmi2DoStep is cosim.vehicle.body_step's numba step called from C. The
package carries the variable table as data (variables.json), the wheelset
FMU's out-of-process worker and cache module (the verified per-user copy of the bundled code, so that
numba's cache outlives an extraction) and the bodies' code from cosim/vehicle
(parameters, curve_layout, bodies, body_step) as ``bodies_source/solver/``.
"""
from __future__ import annotations

import hashlib
import json
import tempfile
import uuid
import zipfile
from dataclasses import asdict, fields
from pathlib import Path
from xml.dom.minidom import parseString
from xml.etree import ElementTree as ET

from fmu_wheelset.fmu.model_description import UNITS
from fmu_wheelset.packaging.build import (NATIVE_CONFIG, compile_native_library, find_c_compiler,
                                          native_config_text, python_location)

from .variables import N_IO, VARIABLES, vehicle_parameter_names

ROOT = Path(__file__).resolve().parents[2]
MODEL_IDENTIFIER = "VehicleBodies"
VEHICLE_MODULES = ("parameters.py", "curve_layout.py", "bodies.py", "body_step.py")
BRIDGE_DIR = Path(__file__).resolve().parent


def variable_table_json() -> bytes:
    from cosim.vehicle.parameters import VehicleParameters
    defaults = VehicleParameters()
    vehicle_fields = [(f.name, vehicle_parameter_names(f.name, getattr(defaults, f.name)))
                      for f in fields(VehicleParameters)]
    doc = {"n_io": N_IO, "vehicle_fields": vehicle_fields,
           "variables": [asdict(v) for v in VARIABLES]}
    return json.dumps(doc, indent=0).encode()


def package_files() -> dict:
    """{path inside resources/<package>/: bytes}."""
    files = {"__init__.py": b'"""The vehicle-bodies FMU\'s Python code (fmu_wheelset/vehicle_fmu)."""\n',
             "native_bridge.py": (BRIDGE_DIR / "native_bridge.py").read_bytes(),
             "cache.py": (ROOT / "fmu_wheelset" / "fmu" / "cache.py").read_bytes(),
             # the out-of-process worker (WHEELSET_FMU_OUT_OF_PROCESS=1), as it is
             "native_worker.py": (ROOT / "fmu_wheelset" / "fmu" / "native_worker.py").read_bytes(),
             "variables.json": variable_table_json(),
             "bodies_source/solver/__init__.py":
                 b'"""cosim/vehicle\'s bodies, bundled in the vehicle-bodies FMU."""\n'}
    for name in VEHICLE_MODULES:
        files[f"bodies_source/solver/{name}"] = (ROOT / "cosim" / "vehicle" / name).read_bytes()
    return files


def model_description(guid: str) -> bytes:
    root = ET.Element("fmiModelDescription", {
        "fmiVersion": "2.0", "modelName": MODEL_IDENTIFIER, "guid": guid,
        "description": "Manchester benchmark vehicle 1 (Iwnicki 1998): carbody, two bogie frames, "
                       "primary and secondary suspensions; inputs the four wheelsets' axle-box "
                       "kinematics, outputs their axle-box forces (cosim/vehicle/body_step.py)",
        "generationTool": "wheelset-fmu (fmu_wheelset/vehicle_fmu/build.py)",
        "variableNamingConvention": "structured", "numberOfEventIndicators": "0"})
    ET.SubElement(root, "CoSimulation", {
        "modelIdentifier": MODEL_IDENTIFIER, "needsExecutionTool": "false",
        "canHandleVariableCommunicationStepSize": "true", "canInterpolateInputs": "false",
        "maxOutputDerivativeOrder": "0", "canRunAsynchronuously": "false",
        "canBeInstantiatedOnlyOncePerProcess": "false", "canNotUseMemoryManagementFunctions": "true",
        "canGetAndSetFMUstate": "false", "canSerializeFMUstate": "false",
        "providesDirectionalDerivative": "false"})
    units = []
    for v in VARIABLES:
        if v.unit and v.unit not in units:
            units.append(v.unit)
    units_el = ET.SubElement(root, "UnitDefinitions")
    for unit in units:
        u = ET.SubElement(units_el, "Unit", name=unit)
        ET.SubElement(u, "BaseUnit", {k: str(e) for k, e in UNITS[unit][2].items()})
    types_el = ET.SubElement(root, "TypeDefinitions")
    for unit in units:
        st = ET.SubElement(types_el, "SimpleType", name=UNITS[unit][0])
        ET.SubElement(st, "Real", quantity=UNITS[unit][1], unit=unit)
    ET.SubElement(root, "DefaultExperiment", startTime="0.0", stopTime="1.0", stepSize="0.001")
    mv = ET.SubElement(root, "ModelVariables")
    outputs = []
    for vr, v in enumerate(VARIABLES):
        description = v.description + (f" [source: {v.source}]" if v.source else "")
        attrs = {"name": v.name, "valueReference": str(vr), "description": description,
                 "causality": v.causality}
        if v.causality == "parameter":
            attrs.update(variability="fixed", initial="exact")
        else:
            attrs["variability"] = "continuous"
        if v.causality == "output":
            attrs["initial"] = "calculated"
            outputs.append(vr + 1)
        sv = ET.SubElement(mv, "ScalarVariable", attrs)
        typed = {"min": repr(float(v.min)) if v.type == "Real" else str(int(v.min)),
                 "max": repr(float(v.max)) if v.type == "Real" else str(int(v.max))}
        if v.causality != "output":
            typed["start"] = repr(float(v.start)) if v.type == "Real" else str(int(v.start))
        if v.type == "Real":
            typed.update(declaredType=UNITS[v.unit][0], unit=v.unit)
        ET.SubElement(sv, v.type, typed)
    ms = ET.SubElement(root, "ModelStructure")
    out_el = ET.SubElement(ms, "Outputs")
    for i in outputs:
        ET.SubElement(out_el, "Unknown", index=str(i), dependencies="")
    init_el = ET.SubElement(ms, "InitialUnknowns")
    knowns = " ".join(str(vr + 1) for vr, v in enumerate(VARIABLES) if v.causality != "output")
    for i in outputs:
        ET.SubElement(init_el, "Unknown", index=str(i), dependencies=knowns)
    return parseString(ET.tostring(root, encoding="UTF-8")).toprettyxml(indent="  ",
                                                                          encoding="UTF-8")


def build_vehicle_fmu(out, quiet: bool = True) -> Path:
    """Build VehicleBodies.fmu at ``out``; returns its path."""
    out = Path(out).resolve()
    if out.suffix != ".fmu":
        raise ValueError(f"the output must be a .fmu file, got {out}")
    compiler = find_c_compiler()
    if compiler is None:
        raise RuntimeError("building the vehicle-bodies FMU needs a C compiler (cc, gcc, clang or $CC)")
    files = package_files()
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name] + b"\0")
    package = f"vehicle_bodies_fmu_{h.hexdigest()[:16]}"
    guid = "{" + str(uuid.uuid5(uuid.NAMESPACE_URL, "vehicle-bodies-fmu:" + h.hexdigest())) + "}"
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="vehicle_fmu_") as tmp:
        library = Path(tmp) / f"{MODEL_IDENTIFIER}.so"
        compile_native_library(library, compiler)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("modelDescription.xml", model_description(guid))
            z.write(library, f"binaries/linux64/{MODEL_IDENTIFIER}.so")
            for name, data in files.items():
                z.writestr(f"resources/{package}/{name}", data)
            z.writestr(f"resources/{NATIVE_CONFIG}", native_config_text(guid, package, python_location()))
    if not quiet:
        print(f"built {out} ({out.stat().st_size / 1024:.0f} kB): model {MODEL_IDENTIFIER}, "
              f"FMI 2.0 co-simulation, native front end, resources/{package}/")
    return out
