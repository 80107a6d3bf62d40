"""By-hand check: would the hosts take the model choices as FMI Enumerations?

The FMU declares its model choices (contact.creep_model, contact.model,
contact.geometry, solver.integrator) as Integer parameters with their items in
the description (fmu_wheelset/fmu/model_description.py). This script copies a
built FMU, rewrites the copy's modelDescription.xml to declare them as
Enumerations instead (an Enumeration SimpleType per choice in TypeDefinitions,
its items the registry's, values the model ids; the variable
``<Enumeration declaredType=...>``), and asks each host to run it with the
creep model set to SHE (1) instead of the default: FMPy, libcosim (libcosimpy)
and Ecos (ecospy). It prints what each host did. Results: docs/hosts.md.

usage: python tests/hosts/enumerations_by_hand.py Wheelset.fmu WORK_DIR
"""
from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from xml.etree import ElementTree as ET

ROOT = Path(__file__).resolve().parents[2]
CHOICES = {"contact.creep_model": "CreepModel", "contact.model": "ContactModel",
           "contact.geometry": "ContactGeometry", "solver.integrator": "Integrator"}


def with_enumerations(fmu: Path, out: Path) -> None:
    sys.path.insert(0, str(ROOT))
    from fmu_wheelset.fmu import registries
    with zipfile.ZipFile(fmu) as z:
        entries = {name: z.read(name) for name in z.namelist()}
    root = ET.fromstring(entries["modelDescription.xml"])
    types = root.find("TypeDefinitions")
    for type_name, (_, items) in registries.ENUMERATIONS.items():
        simple = ET.SubElement(types, "SimpleType", name=type_name)
        enum = ET.SubElement(simple, "Enumeration")
        for value, (_, item, label) in enumerate(items):
            ET.SubElement(enum, "Item", name=item, value=str(value), description=label)
    for sv in root.find("ModelVariables"):
        if sv.get("name") in CHOICES:
            typed = sv[0]
            typed.tag = "Enumeration"
            typed.attrib.pop("min", None)
            typed.attrib.pop("max", None)
            typed.set("declaredType", CHOICES[sv.get("name")])
    entries["modelDescription.xml"] = ET.tostring(root, encoding="UTF-8", xml_declaration=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries.items():
            z.writestr(name, data)


LIBCOSIM = r"""
import json, sys
from fmpy import read_model_description
from libcosimpy.CosimExecution import CosimExecution
from libcosimpy.CosimSlave import CosimLocalSlave
from libcosimpy.CosimObserver import CosimObserver
fmu = sys.argv[1]
by = {v.name: v for v in read_model_description(fmu).modelVariables}
ex = CosimExecution.from_step_size(step_size=int(1e6))
index = ex.add_local_slave(local_slave=CosimLocalSlave(fmu_path=fmu, instance_name="w"))
listed = [v.name.decode() for v in ex.slave_variables(index)]
obs = CosimObserver.create_last_value()
ex.add_observer(observer=obs)
accepted = ex.integer_initial_value(index, by["contact.creep_model"].valueReference, 1)
ex.simulate_until(target_time=int(5e7))
print(json.dumps({"lists contact.creep_model": "contact.creep_model" in listed,
                  "integer_initial_value accepted": bool(accepted),
                  "wheel.right.Y": obs.last_real_values(index, [by["wheel.right.Y"].valueReference])[0]}))
"""

ECOS = r"""
import ctypes, json, os, sys
ctypes.CDLL(os.path.join(sys.prefix, "lib", "libtbb.so.12"), mode=ctypes.RTLD_GLOBAL)
from ecospy.EcosSimulation import EcosSimulation
from ecospy.EcosSimulationStructure import EcosSimulationStructure
fmu, creep = sys.argv[1], int(sys.argv[2])
with EcosSimulationStructure() as structure:
    structure.add_model("w", fmu)
    structure.add_parameter_set("p", {"w::contact.creep_model": creep})
    with EcosSimulation(structure=structure, step_size=1e-3) as sim:
        sim.init(parameter_set="p")
        sim.step_until(0.05)
        try:
            read = sim.get_integer("w::contact.creep_model")
        except Exception as exc:
            read = f"{type(exc).__name__}: {exc}"
        print(json.dumps({"read back": read, "wheel.right.Y": sim.get_real("w::wheel.right.Y")}))
        sim.terminate()
"""


def main(fmu: str, work: str) -> None:
    work_dir = Path(work)
    work_dir.mkdir(parents=True, exist_ok=True)
    enum_fmu = work_dir / "WheelsetEnumerations.fmu"
    with_enumerations(Path(fmu), enum_fmu)
    import fmpy
    md = fmpy.read_model_description(str(enum_fmu), validate=True)
    kind = next(v.type for v in md.modelVariables if v.name == "contact.creep_model")
    runs = {creep: fmpy.simulate_fmu(str(enum_fmu), stop_time=0.05, output_interval=1e-3,
                                     start_values={"contact.creep_model": creep},
                                     output=["wheel.right.Y"])["wheel.right.Y"][-1]
            for creep in (2, 1)}
    print("FMPy:", json.dumps({"type": kind, "Y default (Polach)": runs[2], "Y SHE": runs[1]}))
    for name, script, args in (("libcosim", LIBCOSIM, []), ("Ecos default", ECOS, ["2"]),
                               ("Ecos SHE", ECOS, ["1"])):
        proc = subprocess.run([sys.executable, "-c", script, str(enum_fmu), *args],
                              capture_output=True, text=True, timeout=600)
        lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
        print(f"{name}:", lines[-1] if lines else proc.stderr[-500:])


if __name__ == "__main__":
    main(*sys.argv[1:3])
