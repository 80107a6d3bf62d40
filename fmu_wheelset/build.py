"""Build the wheelset FMU with pythonfmu and complete its model description.

``build_fmu(out)`` stages ``fmu_wheelset/slave_entry.py`` (as
``wheelset_slave.py``, pythonfmu's entry module), ``fmu_wheelset/slave.py`` (as
``wheelset_fmu_slave.py``), the ``solver`` package and the ``scenarios`` / ``profiles`` folders, builds the
FMU with ``pythonfmu.FmuBuilder.build_FMU`` (state get/set and serialisation
enabled) and then post-processes ``modelDescription.xml`` in the zip, since
pythonfmu 0.7.0 writes no units, no min/max and no InitialUnknowns:

* ``UnitDefinitions`` for every unit used (m, rad, N, N.m, m/s, rad/s, s, kg,
  kg.m2, Pa, 1, 1/m, N.s/m, N/m), with SI base-unit exponents;
* ``TypeDefinitions``: one Real SimpleType per quantity (Length, Angle, Force,
  ...) and the Enumerations CreepModel, ContactModel, Integrator;
* ``unit``, ``min``, ``max`` and ``declaredType`` on every Real; the enumeration
  parameters become ``<Enumeration declaredType=...>``; Integer outputs get
  min/max;
* ``ModelStructure/InitialUnknowns`` = every output (initial="approx");
* a ``DefaultExperiment`` (0 .. 1 s, 1 ms).

All of it comes from ``fmu_wheelset.slave.VARIABLES``, the one table of names,
descriptions, starts, units and ranges. The result passes
``fmpy.validation.validate_fmu`` without a problem.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
import zipfile
from pathlib import Path
from xml.dom.minidom import parseString
from xml.etree import ElementTree as ET

ROOT = Path(__file__).resolve().parent.parent
SLAVE_MODULE = "wheelset_slave"       # pythonfmu's entry module inside the FMU resources
SLAVE_IMPL_MODULE = "wheelset_fmu_slave"  # the slave itself (fmu_wheelset/slave.py)

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
}


def _num(x: float) -> str:
    return repr(float(x))


def postprocess_model_description(xml: bytes) -> bytes:
    """Add units, types, ranges, InitialUnknowns and a DefaultExperiment to a
    modelDescription.xml written by pythonfmu for fmu_wheelset.slave."""
    from fmu_wheelset.slave import ENUMERATIONS, VARIABLES

    by_name = {v.name: v for v in VARIABLES}
    root = ET.fromstring(xml)
    for el in root.iter():          # drop pythonfmu's pretty-printing whitespace
        if el.text is not None and not el.text.strip():
            el.text = None
        el.tail = None
    children = list(root)
    cosim_index = [c.tag for c in children].index("CoSimulation")

    used_units = []
    for v in VARIABLES:
        if v.unit and v.unit not in used_units:
            used_units.append(v.unit)
    for unit in used_units:
        if unit not in UNITS:
            raise ValueError(f"unit {unit!r} has no definition in fmu_wheelset.build.UNITS")

    units_el = ET.Element("UnitDefinitions")
    for unit in used_units:
        u = ET.SubElement(units_el, "Unit", name=unit)
        ET.SubElement(u, "BaseUnit", {k: str(e) for k, e in UNITS[unit][2].items()})
    types_el = ET.Element("TypeDefinitions")
    for unit in used_units:
        type_name, quantity, _ = UNITS[unit]
        st = ET.SubElement(types_el, "SimpleType", name=type_name)
        ET.SubElement(st, "Real", quantity=quantity, unit=unit)
    for type_name, items in ENUMERATIONS.items():
        st = ET.SubElement(types_el, "SimpleType", name=type_name)
        en = ET.SubElement(st, "Enumeration")
        for value, (item, description) in enumerate(items):
            ET.SubElement(en, "Item", name=item, value=str(value), description=description)
    root.insert(cosim_index + 1, units_el)
    root.insert(cosim_index + 2, types_el)

    if root.find("DefaultExperiment") is None:
        de = ET.Element("DefaultExperiment", startTime="0.0", stopTime="1.0", stepSize="0.001")
        root.insert(list(root).index(root.find("ModelVariables")), de)

    outputs = []
    for index, sv in enumerate(root.find("ModelVariables"), start=1):
        name = sv.get("name")
        var = by_name.get(name)
        if var is None:
            raise ValueError(f"variable {name!r} of the model description is not in VARIABLES")
        if not sv.get("description"):
            raise ValueError(f"variable {name!r} has no description")
        typed = sv[0]
        if var.kind == "Real":
            typed.set("declaredType", UNITS[var.unit][0])
            typed.set("unit", var.unit)
            if var.min is not None:
                typed.set("min", _num(var.min))
            if var.max is not None:
                typed.set("max", _num(var.max))
            if typed.get("start") is not None:
                typed.set("start", _num(float(typed.get("start"))))
        elif var.kind == "Enumeration":
            typed.tag = "Enumeration"
            typed.set("declaredType", var.type_name)
        elif var.kind == "Integer" and var.causality == "output":
            typed.set("min", "0")
            typed.set("max", "3")
        if var.causality == "output":
            outputs.append(index)

    structure = root.find("ModelStructure")
    for child in list(structure):
        structure.remove(child)
    out_el = ET.SubElement(structure, "Outputs")
    for i in outputs:
        ET.SubElement(out_el, "Unknown", index=str(i))
    init_el = ET.SubElement(structure, "InitialUnknowns")
    for i in outputs:
        ET.SubElement(init_el, "Unknown", index=str(i))

    text = ET.tostring(root, encoding="UTF-8")
    return parseString(text).toprettyxml(indent="  ", encoding="UTF-8")


def _rewrite_model_description(fmu: Path):
    tmp = fmu.with_suffix(".fmu.tmp")
    with zipfile.ZipFile(fmu) as zin, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "modelDescription.xml":
                data = postprocess_model_description(data)
            zout.writestr(info.filename, data)
    tmp.replace(fmu)


def build_fmu(out: str | Path = "dist/Wheelset.fmu", *, solver_dir: str | Path | None = None,
              quiet: bool = False) -> Path:
    """Build the FMU at ``out`` (a .fmu path); returns its path.

    ``solver_dir``: the solver package to bundle (default: the one beside
    fmu_wheelset). Prints what it built unless ``quiet``."""
    from pythonfmu import FmuBuilder
    from fmu_wheelset.slave import VARIABLES, _tree_digest

    out = Path(out).resolve()
    if out.suffix != ".fmu":
        raise ValueError(f"the output must be a .fmu file, got {out}")
    out.parent.mkdir(parents=True, exist_ok=True)
    solver_dir = Path(solver_dir) if solver_dir else ROOT / "solver"
    with tempfile.TemporaryDirectory(prefix="wheelset_fmu_build_") as tmp:
        stage = Path(tmp)
        script = stage / f"{SLAVE_MODULE}.py"
        shutil.copy2(ROOT / "fmu_wheelset" / "slave_entry.py", script)
        shutil.copy2(ROOT / "fmu_wheelset" / "slave.py", stage / f"{SLAVE_IMPL_MODULE}.py")
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc")
        project = [stage / f"{SLAVE_IMPL_MODULE}.py", stage / "solver"]
        shutil.copytree(solver_dir, stage / "solver", ignore=ignore)
        for extra in ("scenarios", "profiles"):
            src = ROOT / extra
            if src.is_dir() and any(p.is_file() for p in src.iterdir()):
                shutil.copytree(src, stage / extra, ignore=ignore)
                project.append(stage / extra)
        saved_path = list(sys.path)
        try:
            fmu = FmuBuilder.build_FMU(script, dest=out, project_files=project,
                                       canGetAndSetFMUstate=True, canSerializeFMUstate=True)
        finally:
            sys.path[:] = saved_path
            sys.modules.pop(SLAVE_MODULE, None)
            sys.modules.pop(SLAVE_IMPL_MODULE, None)
        digest = _tree_digest(str(stage / "solver"))
    fmu = Path(fmu)
    _rewrite_model_description(fmu)
    if not quiet:
        counts = {c: sum(v.causality == c for v in VARIABLES) for c in ("parameter", "input", "output")}
        with zipfile.ZipFile(fmu) as z:
            n_files = len(z.namelist())
            binaries = [n for n in z.namelist() if n.startswith("binaries/")]
        print(f"built {fmu} ({fmu.stat().st_size / 1024:.0f} kB, {n_files} files)")
        print(f"  model Wheelset, FMI 2.0 co-simulation, pythonfmu; binaries: {', '.join(binaries)}")
        print(f"  variables: {counts['parameter']} parameters, {counts['input']} inputs, "
              f"{counts['output']} outputs")
        print(f"  bundled: resources/{SLAVE_MODULE}.py (entry), resources/{SLAVE_IMPL_MODULE}.py, "
              f"resources/solver (sources {digest}), "
              f"resources/pythonfmu" + (", resources/scenarios" if (ROOT / "scenarios").is_dir() else ""))
    return fmu


def main(argv=None) -> int:
    import argparse
    parser = argparse.ArgumentParser(description="Build the wheelset FMU.")
    parser.add_argument("--out", default="dist/Wheelset.fmu", help="FMU file to write")
    args = parser.parse_args(argv)
    build_fmu(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
