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

def _rewrite_model_description(fmu: Path):
    tmp = fmu.with_suffix(".fmu.tmp")
    with zipfile.ZipFile(fmu) as zin, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "modelDescription.xml":
                data = complete_model_description(data)
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
