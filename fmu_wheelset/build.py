"""Build the wheelset FMU with pythonfmu and complete its model description.

``build_fmu(out)`` stages ``fmu_wheelset/slave_entry.py`` (as
``wheelset_slave.py``, pythonfmu's entry module), ``fmu_wheelset/slave.py`` (as
``wheelset_fmu_slave.py``), ``fmu_wheelset/variables.py`` (as
``wheelset_fmu_variables.py``, the table of variables), the ``solver`` package
and the ``scenarios`` / ``profiles`` folders, builds the FMU with
``pythonfmu.FmuBuilder.build_FMU`` (state get/set and serialisation enabled)
and then completes ``modelDescription.xml`` in the zip from the table
(``fmu_wheelset.model_description``: units, types, ranges, enumerations,
ModelStructure, DefaultExperiment).
"""
from __future__ import annotations

import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from fmu_wheelset.model_description import complete_model_description

ROOT = Path(__file__).resolve().parent.parent
SLAVE_MODULE = "wheelset_slave"       # pythonfmu's entry module inside the FMU resources
SLAVE_IMPL_MODULE = "wheelset_fmu_slave"  # the slave itself (fmu_wheelset/slave.py)
VARIABLES_MODULE = "wheelset_fmu_variables"  # the table (fmu_wheelset/variables.py)
# more modules of fmu_wheelset the slave imports, bundled beside it under these names
SLAVE_HELPER_MODULES = {"fmu_state.py": "wheelset_fmu_state.py", "cache.py": "wheelset_fmu_cache.py"}

def content_guid(entries) -> str:
    """The FMU's GUID from its content: a UUID (version 5) of the sha256 of every
    (file name, bytes) but modelDescription.xml, which is derived from them. The
    same sources give the same GUID, so a serialized FMU state of one build
    restores in an identical rebuild and is refused by any other
    (fmu_wheelset/fmu_state.py); pythonfmu's own GUID is random per build."""
    import hashlib
    import uuid
    h = hashlib.sha256()
    for name, data in sorted(entries):
        if name != "modelDescription.xml":
            h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return "{" + str(uuid.uuid5(uuid.NAMESPACE_URL, "wheelset-fmu:" + h.hexdigest())) + "}"


def _set_guid(xml: bytes, guid: str) -> bytes:
    import re
    xml, n = re.subn(rb'(<fmiModelDescription\b[^>]*?\sguid=")[^"]*(")',
                     b"\\g<1>" + guid.encode() + b"\\g<2>", xml, count=1)
    if n != 1:
        raise ValueError("modelDescription.xml has no guid attribute")
    return xml


def _rewrite_model_description(fmu: Path):
    tmp = fmu.with_suffix(".fmu.tmp")
    with zipfile.ZipFile(fmu) as zin, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zout:
        entries = [(info, zin.read(info.filename)) for info in zin.infolist()]
        guid = content_guid((info.filename, data) for info, data in entries)
        for info, data in entries:
            if info.filename == "modelDescription.xml":
                data = _set_guid(complete_model_description(data), guid)
            zout.writestr(info.filename, data)
    tmp.replace(fmu)


def build_fmu(out: str | Path = "dist/Wheelset.fmu", *, solver_dir: str | Path | None = None,
              quiet: bool = False) -> Path:
    """Build the FMU at ``out`` (a .fmu path); returns its path.

    ``solver_dir``: the solver package to bundle (default: the one beside
    fmu_wheelset). Prints what it built unless ``quiet``."""
    from pythonfmu import FmuBuilder
    from fmu_wheelset.slave import _tree_digest
    from fmu_wheelset.variables import VARIABLES
    import solver.wheelset  # noqa: F401 - the slave reads the core's defaults (start values)

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
        shutil.copy2(ROOT / "fmu_wheelset" / "variables.py", stage / f"{VARIABLES_MODULE}.py")
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc")
        project = [stage / f"{SLAVE_IMPL_MODULE}.py", stage / f"{VARIABLES_MODULE}.py",
                   stage / "solver"]
        for source, bundled in SLAVE_HELPER_MODULES.items():
            shutil.copy2(ROOT / "fmu_wheelset" / source, stage / bundled)
            project.append(stage / bundled)
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
            sys.modules.pop(VARIABLES_MODULE, None)
            for bundled in SLAVE_HELPER_MODULES.values():
                sys.modules.pop(bundled[:-3], None)
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
              f"resources/{VARIABLES_MODULE}.py, "
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
