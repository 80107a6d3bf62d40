"""Build the wheelset FMU with pythonfmu and complete its model description.

``build_fmu(out)`` stages ``fmu_wheelset/slave_entry.py`` (as
``wheelset_slave.py``, pythonfmu's entry module), ``fmu_wheelset/slave.py`` (as
``wheelset_fmu_slave.py``), ``fmu_wheelset/variables.py`` (as
``wheelset_fmu_variables.py``, the table of variables), the ``solver`` package
and the ``scenarios`` / ``profiles`` / ``presets`` folders, builds the FMU with
``pythonfmu.FmuBuilder.build_FMU`` (state get/set and serialisation enabled)
and then completes ``modelDescription.xml`` in the zip from the table
(``fmu_wheelset.model_description``: units, types, ranges, enumerations,
ModelStructure, DefaultExperiment).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path

from fmu_wheelset.cache import SHIPPED_CACHE_DIR
from fmu_wheelset.model_description import complete_model_description

ROOT = Path(__file__).resolve().parent.parent
SLAVE_MODULE = "wheelset_slave"       # pythonfmu's entry module inside the FMU resources
SLAVE_IMPL_MODULE = "wheelset_fmu_slave"  # the slave itself (fmu_wheelset/slave.py)
VARIABLES_MODULE = "wheelset_fmu_variables"  # the table (fmu_wheelset/variables.py)
# more modules of fmu_wheelset the slave imports, bundled beside it under these names
SLAVE_HELPER_MODULES = {"fmu_state.py": "wheelset_fmu_state.py", "cache.py": "wheelset_fmu_cache.py",
                        "presets.py": "wheelset_fmu_presets.py"}

def content_guid(entries) -> str:
    """The FMU's GUID from its content: a UUID (version 5) of the sha256 of every
    (file name, bytes) but modelDescription.xml, which is derived from them. The
    same sources give the same GUID, so a serialized FMU state of one build
    restores in an identical rebuild and is refused by any other
    (fmu_wheelset/fmu_state.py); pythonfmu's own GUID is random per build."""
    import uuid
    h = hashlib.sha256()
    for name, data in sorted(entries):
        if name in ("modelDescription.xml", f"resources/{NATIVE_CONFIG}"):
            continue
        # the shipped numba cache is derived from the sources (and holds machine
        # code that may differ between identical rebuilds): not part of the GUID
        if not name.startswith(f"resources/{SHIPPED_CACHE_DIR}/"):
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
            elif info.filename == f"resources/{NATIVE_CONFIG}":
                data = data.replace(f"guid={GUID_PLACEHOLDER}".encode(), f"guid={guid}".encode())
            zout.writestr(info.filename, data)
    tmp.replace(fmu)


# ---------------------------------------------------------------------------
# the native FMI front end (fmu_wheelset/native, issue 16)
# ---------------------------------------------------------------------------
NATIVE_DIR = ROOT / "fmu_wheelset" / "native"
# fmi2_frontend.c is compiled through frontend_inproc.c (internal names); the
# exported fmi2* are out_of_process.c's (in-process or worker process, issue 17)
NATIVE_SOURCES = ("frontend_inproc.c", "out_of_process.c", "python_runtime.c", "platform_posix.c",
                  "oop_platform_posix.c")
NATIVE_CONFIG = "wheelset_native.cfg"
GUID_PLACEHOLDER = "@GUID@"         # replaced by the content GUID (_rewrite_model_description)
MODEL_IDENTIFIER = "Wheelset"
# the modules of pythonfmu's slave API the slave needs (not its builder)
PYTHONFMU_MODULES = ("_version.py", "enums.py", "fmi2slave.py", "variables.py",
                     "default_experiment.py", "logmsg.py")
PYTHONFMU_INIT = (
    '"""pythonfmu\'s slave API (pythonfmu 0.7.0, MIT licence), bundled inside the FMU\'s own\n'
    'package so that it never shadows a host\'s pythonfmu."""\n'
    "from ._version import __version__\n"
    "from .enums import Fmi2Causality, Fmi2Initial, Fmi2Variability\n"
    "from .fmi2slave import Fmi2Slave\n"
    "from .variables import Boolean, Integer, Real, String\n"
    "from .default_experiment import DefaultExperiment\n")
_ABSOLUTE_SOLVER_IMPORT = re.compile(r"^\s*(from solver(\.\w+)* import |import solver\b)",
                                     re.MULTILINE)


def find_c_compiler() -> str | None:
    """$CC, else cc, gcc or clang on PATH (None: there is none)."""
    if os.environ.get("CC"):
        return shutil.which(os.environ["CC"].split()[0]) and os.environ["CC"]
    for name in ("cc", "gcc", "clang"):
        if shutil.which(name):
            return name
    return None


def compile_native_library(target: Path, compiler: str) -> None:
    """Compile fmu_wheelset/native into the shared library ``target`` (linux64).

    No link to libpython: the library loads it at run time (python_runtime.c)."""
    import fmpy
    include = Path(fmpy.__file__).parent / "c-code"     # the FMI 2.0 standard headers
    cmd = [*compiler.split(), "-std=c99", "-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-pthread",
           f"-I{include}", "-o", str(target), *[str(NATIVE_DIR / f) for f in NATIVE_SOURCES],
           "-ldl", "-lm", "-lrt"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"compiling the native FMI front end failed ({' '.join(cmd)}):\n"
                           + proc.stderr[-4000:])


def python_location() -> dict:
    """What the native library needs to start this interpreter in a plain C host:
    the shared libpython, the home (sys.base_prefix), the site-packages of this
    environment (a virtual environment's own first) and the version."""
    import site
    import sysconfig
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    libpython = ""
    for name in (sysconfig.get_config_var("INSTSONAME"), sysconfig.get_config_var("LDLIBRARY")):
        if name and (name.endswith(".so") or ".so." in name or name.endswith(".dylib")):
            candidate = Path(libdir) / name
            if candidate.is_file():
                libpython = str(candidate)
                break
    dirs = []
    for d in [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
              *site.getsitepackages()]:
        if d not in dirs and Path(d).is_dir():
            dirs.append(d)
    return {"libpython": libpython, "home": sys.base_prefix, "site_packages": dirs,
            "python_version": f"{sys.version_info.major}.{sys.version_info.minor}"}


def native_config_text(guid: str, package: str, where: dict) -> str:
    """resources/wheelset_native.cfg: key=value lines, parsed by the C library."""
    values = {"guid": guid, "package": package, "libpython": where["libpython"],
              "home": where["home"], "site_packages": os.pathsep.join(where["site_packages"]),
              "python_version": where["python_version"]}
    for key, value in values.items():
        if "\n" in value or "\r" in value:
            raise ValueError(f"{key} {value!r} contains a line break")
    lines = ["# where the wheelset FMU finds Python (written by fmu_wheelset/build.py; parsed,",
             "# never executed). Override for a moved installation with WHEELSET_FMU_LIBPYTHON,",
             "# WHEELSET_FMU_PYTHONHOME and WHEELSET_FMU_SITE_PACKAGES."]
    lines += [f"{k}={v}" for k, v in values.items()]
    return "\n".join(lines) + "\n"


def check_relative_solver_imports(name: str, source: str) -> None:
    """The bundled solver must import itself relatively: an absolute ``solver``
    import inside the FMU's package would run a host's top-level ``solver``."""
    m = _ABSOLUTE_SOLVER_IMPORT.search(source)
    if m:
        raise ValueError(f"solver/{name}: absolute import {m.group(0).strip()!r}; the FMU's "
                         "solver copy must use relative imports")


def native_package_files(solver_dir: Path) -> dict:
    """{path inside the package: bytes} of the FMU's Python package."""
    import pythonfmu
    files = {"__init__.py": b'"""The wheelset FMU\'s Python code, under this build\'s own package '
                            b'name (fmu_wheelset/native_bridge.py)."""\n',
             "slave.py": (ROOT / "fmu_wheelset" / "slave.py").read_bytes(),
             "native_bridge.py": (ROOT / "fmu_wheelset" / "native_bridge.py").read_bytes(),
             "variables.py": (ROOT / "fmu_wheelset" / "variables.py").read_bytes(),
             "fmu_state.py": (ROOT / "fmu_wheelset" / "fmu_state.py").read_bytes(),
             "cache.py": (ROOT / "fmu_wheelset" / "cache.py").read_bytes(),
             "presets.py": (ROOT / "fmu_wheelset" / "presets.py").read_bytes(),
             "native_worker.py": (ROOT / "fmu_wheelset" / "native_worker.py").read_bytes(),
             "pythonfmu/__init__.py": PYTHONFMU_INIT.encode()}
    pfmu = Path(pythonfmu.__file__).parent
    for name in PYTHONFMU_MODULES:
        files[f"pythonfmu/{name}"] = (pfmu / name).read_bytes()
    for path in sorted(solver_dir.rglob("*")):
        rel = path.relative_to(solver_dir)
        if not path.is_file() or "__pycache__" in rel.parts or path.suffix in (".pyc", ".nbi", ".nbc"):
            continue
        data = path.read_bytes()
        if path.suffix == ".py":
            check_relative_solver_imports(rel.as_posix(), data.decode())
        files[f"solver/{rel.as_posix()}"] = data
    return files


def package_name(files: dict) -> str:
    """wheelset_fmu_<sha256 of the package's files, 16 hex digits>."""
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name] + b"\0")
    return f"wheelset_fmu_{h.hexdigest()[:16]}"


def install_native_front_end(fmu: Path, solver_dir: Path, compiler: str) -> str:
    """Replace pythonfmu's binary and resource layout by the native front end:
    binaries/linux64/Wheelset.so (compiled here), resources/<package>/ (the slave,
    the bridge, pythonfmu's slave API and the solver) and the interpreter record.
    Returns the package name."""
    files = native_package_files(solver_dir)
    package = package_name(files)
    dropped_prefixes = ("binaries/", "resources/solver/", "resources/pythonfmu/")
    dropped_prefixes += ("resources/slavemodule.txt",)
    dropped = {f"resources/{SLAVE_MODULE}.py", f"resources/{SLAVE_IMPL_MODULE}.py",
               f"resources/{VARIABLES_MODULE}.py", "resources/slavemodule.txt",
               *(f"resources/{bundled}" for bundled in SLAVE_HELPER_MODULES.values())}
    with tempfile.TemporaryDirectory(prefix="wheelset_native_") as tmp:
        library = Path(tmp) / f"{MODEL_IDENTIFIER}.so"
        compile_native_library(library, compiler)
        out = fmu.with_suffix(".fmu.tmp")
        with zipfile.ZipFile(fmu) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
            for info in zin.infolist():
                if info.filename in dropped or info.filename.startswith(dropped_prefixes):
                    continue
                zout.writestr(info, zin.read(info.filename))
            zout.write(library, f"binaries/linux64/{MODEL_IDENTIFIER}.so")
            for name, data in files.items():
                zout.writestr(f"resources/{package}/{name}", data)
            zout.writestr(f"resources/{NATIVE_CONFIG}",
                          native_config_text(GUID_PLACEHOLDER, package, python_location()))
        out.replace(fmu)
    return package


# ---------------------------------------------------------------------------
# the numba cache shipped inside the FMU (issue 17: a cold start in seconds)
# ---------------------------------------------------------------------------
# The FMU is run once, in a child process through FMPy (which loads the native
# library the way any host does), with the builder's per-user cache root (or a
# fresh private one when that is not usable): every kernel
# the default model and every creep / contact model choice needs is compiled
# into the verified cache copy of the solver (fmu_wheelset/cache.py). Its
# numba files are then stored in resources/wheelset_numba_cache/ with a
# manifest (the solver's full sha256, numba's version, the Python tag, the CPU
# signature numba keys its index on, every file's sha256); the FMU's loader
# installs them into a new cache copy only when all of these fit.
_WARM_UP = r"""
import os
import sys
from fmpy import simulate_fmu, read_model_description
fmu = sys.argv[1]
md = read_model_description(fmu)
choices = {v.name: v for v in md.modelVariables if v.type in ("Integer", "Enumeration")
           and v.causality == "parameter"}
runs = [{}]
for name in ("contact.creep_model", "contact.model", "contact.geometry", "solver.integrator"):
    var = choices.get(name)
    if var is not None and var.min is not None and var.max is not None:
        runs += [{name: value} for value in range(int(var.min), int(var.max) + 1)
                 if value != int(var.start)]
for start in runs:
    simulate_fmu(fmu, stop_time=0.002, output_interval=0.001, start_values=start)
# the Python step too: the front end's path for every step that is not a clean
# accepted one (a discarded step, an output out of range, ...) and for
# WHEELSET_FMU_FAST_STEP=0; without it a host's first such step compiles for
# seconds (measured: about 7 s in the C host, 2026-12-06)
os.environ["WHEELSET_FMU_FAST_STEP"] = "0"
simulate_fmu(fmu, stop_time=0.002, output_interval=0.001)
"""


def ship_numba_cache(fmu: Path) -> str:
    """Compile the FMU's kernels in a child process and store numba's cache files
    in the FMU (resources/wheelset_numba_cache). Returns a one-line summary."""
    from fmu_wheelset import cache as fmu_cache
    from fmu_wheelset.slave import numba_cpu_signature
    import json
    import numba
    with tempfile.TemporaryDirectory(prefix="wheelset_numba_cache_") as tmp:
        with zipfile.ZipFile(fmu) as z:
            z.extractall(Path(tmp) / "fmu")
        config = (Path(tmp) / "fmu" / "resources" / NATIVE_CONFIG).read_text()
        package = next(line.split("=", 1)[1] for line in config.splitlines()
                       if line.startswith("package="))
        digest = fmu_cache.tree_digest(str(Path(tmp) / "fmu" / "resources" / package / "solver"))
        # the builder's own per-user cache when it passes the checks (a rebuild of
        # the same solver then compiles nothing), else a fresh private folder
        root = Path(fmu_cache.cache_root())
        if (os.environ.get("WHEELSET_FMU_CACHE", "").lower() == "off"
                or fmu_cache.root_problem(str(root)) is not None):
            root = Path(tmp) / "cache"
            root.mkdir(mode=0o700)
        env = dict(os.environ, WHEELSET_FMU_CACHE=str(root))
        env.pop("NUMBA_CACHE_DIR", None)       # numba must write beside the solver copy
        env.pop("NUMBA_DISABLE_JIT", None)
        proc = subprocess.run([sys.executable, "-c", _WARM_UP, str(fmu)], env=env,
                              capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            raise RuntimeError("compiling the numba cache failed: "
                               + (proc.stderr.strip().splitlines() or ["no output"])[-1])
        solver_copy = root / f"native-solver-{digest[:fmu_cache.DIGEST_CHARS]}" / "solver"
        problem = fmu_cache.tree_problem(str(solver_copy.parent))
        if problem or fmu_cache.tree_digest(str(solver_copy)) != digest:
            raise RuntimeError(f"the solver copy compiled into is not usable: "
                               f"{problem or 'its sources differ from the FMU'}")
        files = {}
        for path in sorted(solver_copy.rglob("*")):
            if path.is_file() and path.suffix in (".nbi", ".nbc"):
                files[path.relative_to(solver_copy).as_posix()] = path.read_bytes()
        if not files:
            raise RuntimeError("compiling the numba cache wrote no numba files")
        manifest = {"format": fmu_cache.SHIPPED_FORMAT, "version": fmu_cache.SHIPPED_VERSION,
                    "numba": numba.__version__, "python": sys.implementation.cache_tag,
                    "cpu": numba_cpu_signature(),
                    "solver_sha256": digest,
                    "files": {name: hashlib.sha256(data).hexdigest()
                              for name, data in files.items()}}
    prefix = f"resources/{fmu_cache.SHIPPED_CACHE_DIR}/"
    out = fmu.with_suffix(".fmu.tmp")
    with zipfile.ZipFile(fmu) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if not info.filename.startswith(prefix):
                zout.writestr(info, zin.read(info.filename))
        zout.writestr(prefix + fmu_cache.SHIPPED_MANIFEST, json.dumps(manifest, indent=1))
        for name, data in files.items():
            zout.writestr(prefix + name, data)
    out.replace(fmu)
    size = sum(len(d) for d in files.values())
    return (f"resources/{fmu_cache.SHIPPED_CACHE_DIR}/ ({len(files)} files, "
            f"{size / 1024:.0f} kB, CPU {manifest['cpu'][1]})")


START_PRESET = "fmu-start"     # the preset of a build with its own start values


def build_fmu(out: str | Path = "dist/Wheelset.fmu", *, solver_dir: str | Path | None = None,
              quiet: bool = False, native: bool = True, platforms=("linux64",),
              numba_cache: bool = True, start_values: dict | None = None,
              start_source: str = "") -> Path:
    """Build the FMU at ``out`` (a .fmu path); returns its path.

    ``solver_dir``: the solver package to bundle (default: the one beside
    fmu_wheelset). ``platforms``: linux64 and any of win64, darwin64
    (cross-compiled with zig: fmu_wheelset/cross_build.py). ``numba_cache``: run
    the FMU once here and ship the compiled numba cache inside it (native front
    end only; ship_numba_cache). ``start_values``: {parameter name: FMI value} that become the
    FMU's start values (the model description's and the getters'): written as
    the preset resources/presets/fmu-start.toml, each value with
    ``start_source`` as its source, and named in
    resources/wheelset_start_preset.txt (fmu_wheelset/presets.py). Prints what
    it built unless ``quiet``."""
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
        for extra in ("scenarios", "profiles", "presets"):
            src = ROOT / extra
            if src.is_dir() and any(p.is_file() for p in src.iterdir()):
                shutil.copytree(src, stage / extra, ignore=ignore)
                project.append(stage / extra)
        if start_values:
            from fmu_wheelset.presets import START_PRESET_FILE, preset_text
            (stage / "presets").mkdir(exist_ok=True)
            if stage / "presets" not in project:
                project.append(stage / "presets")
            (stage / "presets" / f"{START_PRESET}.toml").write_text(preset_text(
                start_values, f"start values of this build: {start_source}", start_source))
            (stage / START_PRESET_FILE).write_text(START_PRESET + "\n")
            project.append(stage / START_PRESET_FILE)
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
    front_end = "pythonfmu"
    compiler = find_c_compiler() if native else None
    if native and compiler is None:
        print("no C compiler found (cc, gcc, clang or $CC): the FMU keeps pythonfmu's binary",
              file=sys.stderr)
        warnings.warn("wheelset FMU built with pythonfmu's binary (no C compiler): it needs "
                      "LD_PRELOAD/PYTHONPATH in C hosts and lacks the native front end's checks "
                      "(docs/limits_and_failures.md)")
    if compiler is not None:
        package = install_native_front_end(fmu, solver_dir, compiler)
        front_end = f"native (resources/{package})"
        from fmu_wheelset.cross_build import add_cross_binaries
        add_cross_binaries(fmu, platforms, MODEL_IDENTIFIER, quiet=quiet)
    _rewrite_model_description(fmu)
    shipped = None
    if compiler is not None and numba_cache:
        shipped = ship_numba_cache(fmu)
    if not quiet:
        counts = {c: sum(v.causality == c for v in VARIABLES) for c in ("parameter", "input", "output")}
        with zipfile.ZipFile(fmu) as z:
            n_files = len(z.namelist())
            binaries = [n for n in z.namelist() if n.startswith("binaries/")]
        print(f"built {fmu} ({fmu.stat().st_size / 1024:.0f} kB, {n_files} files)")
        print(f"  model Wheelset, FMI 2.0 co-simulation, front end {front_end}; "
              f"binaries: {', '.join(binaries)}")
        print(f"  variables: {counts['parameter']} parameters, {counts['input']} inputs, "
              f"{counts['output']} outputs")
        if compiler is not None:
            print(f"  bundled: resources/{package}/ (slave, native_bridge, variables, fmu_state, "
                  f"cache, presets, pythonfmu's slave API, solver with sources {digest}), "
                  f"resources/presets/, resources/{NATIVE_CONFIG} (the Python to load)")
            print(f"  numba cache: {shipped or 'not shipped (--no-numba-cache)'}")
        else:
            print(f"  bundled: resources/{SLAVE_MODULE}.py (entry), resources/{SLAVE_IMPL_MODULE}.py, "
                  f"resources/{VARIABLES_MODULE}.py, resources/solver (sources {digest}), "
                  f"resources/pythonfmu")
    return fmu


def main(argv=None) -> int:
    import argparse
    parser = argparse.ArgumentParser(description="Build the wheelset FMU.")
    parser.add_argument("--out", default="dist/Wheelset.fmu", help="FMU file to write")
    parser.add_argument("--pythonfmu-binary", action="store_true",
                        help="ship pythonfmu's binary instead of the native front end")
    parser.add_argument("--platforms", default="linux64",
                        help="binaries to build: 'all' or a comma list of linux64, win64, darwin64 "
                             "(win64 and darwin64 cross-compiled with zig cc, package ziglang)")
    parser.add_argument("--no-numba-cache", action="store_true",
                        help="do not compile and ship the numba cache (the first run on each "
                             "machine then compiles for 10-60 s)")
    args = parser.parse_args(argv)
    from fmu_wheelset.cross_build import parse_platforms
    build_fmu(args.out, native=not args.pythonfmu_binary, platforms=parse_platforms(args.platforms),
              numba_cache=not args.no_numba_cache)
    return 0


if __name__ == "__main__":
    sys.exit(main())
