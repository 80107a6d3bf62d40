"""Build the wheelset FMU with pythonfmu and complete its model description.

``build_fmu(out)`` stages ``fmu_wheelset/fmu/slave_entry.py`` (as
``wheelset_slave.py``, pythonfmu's entry module), ``fmu_wheelset/fmu/slave.py`` (as
``wheelset_fmu_slave.py``), ``fmu_wheelset/fmu/variables.py`` (as
``wheelset_fmu_variables.py``, the table of variables), the ``solver`` package
and the ``scenarios`` / ``profiles`` / ``presets`` folders, builds the FMU with
``pythonfmu.FmuBuilder.build_FMU`` (state get/set and serialisation enabled)
and then completes ``modelDescription.xml`` in the zip from the table
(``fmu_wheelset.fmu.model_description``: units, types, ranges, enumerations,
ModelStructure, DefaultExperiment).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path

from fmu_wheelset.fmu.cache import SHIPPED_CACHE_DIR
from fmu_wheelset.packaging.standalone import RUNTIME_DIR
from fmu_wheelset.fmu.model_description import complete_model_description

ROOT = Path(__file__).resolve().parents[2]     # the repository root
FMU_DIR = ROOT / "fmu_wheelset" / "fmu"    # the FMU's own modules, bundled in it
SLAVE_MODULE = "wheelset_slave"       # pythonfmu's entry module inside the FMU resources
SLAVE_IMPL_MODULE = "wheelset_fmu_slave"  # the slave itself (fmu_wheelset/fmu/slave.py)
VARIABLES_MODULE = "wheelset_fmu_variables"  # the table (fmu_wheelset/fmu/variables.py)
# more modules of fmu_wheelset/fmu the slave imports, bundled beside it under these names
SLAVE_HELPER_MODULES = {"fmu_state.py": "wheelset_fmu_state.py", "cache.py": "wheelset_fmu_cache.py",
                        "presets.py": "wheelset_fmu_presets.py",
                        "adapter.py": "wheelset_fmu_adapter.py",
                        "core_loader.py": "wheelset_fmu_core_loader.py",
                        "instance.py": "wheelset_fmu_instance.py",
                        "registries.py": "wheelset_fmu_registries.py"}
# the modules of fmu_wheelset/fmu in the native front end's package (their own names)
NATIVE_PACKAGE_MODULES = ("slave.py", "native_bridge.py", "variables.py", "fmu_state.py", "cache.py",
                          "presets.py", "native_worker.py", "adapter.py", "core_loader.py",
                          "instance.py", "registries.py")

def content_guid(entries) -> str:
    """The FMU's GUID from its content: a UUID (version 5) of the sha256 of every
    (file name, bytes) but modelDescription.xml, which is derived from them. The
    same sources give the same GUID, so a serialized FMU state of one build
    restores in an identical rebuild and is refused by any other
    (fmu_wheelset/fmu/fmu_state.py); pythonfmu's own GUID is random per build."""
    import uuid
    h = hashlib.sha256()
    for name, data in sorted(entries):
        if name in ("modelDescription.xml", f"resources/{NATIVE_CONFIG}"):
            continue
        # the shipped numba cache is derived from the sources (and holds machine
        # code that may differ between identical rebuilds), the bundled Python
        # runtime is the build environment's (its byte code differs between
        # identical rebuilds), as the byte code of the FMU's own modules: none
        # is part of the GUID
        if not name.startswith((f"resources/{SHIPPED_CACHE_DIR}/", f"resources/{RUNTIME_DIR}/")) \
                and "/__pycache__/" not in name:
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
# the native FMI front end (fmu_wheelset/fmu/native)
# ---------------------------------------------------------------------------
NATIVE_DIR = FMU_DIR / "native"
# fmi2_frontend.c (with the parts it includes, fmi2_frontend_*.c) is compiled
# through frontend_inproc.c (internal names); the exported fmi2* are
# out_of_process.c's (in-process or worker process)
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
    """Compile fmu_wheelset/fmu/native into the shared library ``target`` (linux64).

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
    lines = ["# where the wheelset FMU finds Python (written by fmu_wheelset/packaging/build.py;",
             "# parsed, never executed). Override for a moved installation with",
             "# WHEELSET_FMU_LIBPYTHON, WHEELSET_FMU_PYTHONHOME and WHEELSET_FMU_SITE_PACKAGES."]
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
                            b'name (fmu_wheelset/fmu/native_bridge.py)."""\n'}
    for name in NATIVE_PACKAGE_MODULES:
        files[name] = (FMU_DIR / name).read_bytes()
    files["pythonfmu/__init__.py"] = PYTHONFMU_INIT.encode()
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
# the numba cache shipped inside the FMU (so that a cold start takes seconds)
# ---------------------------------------------------------------------------
# The FMU is run in a child process through FMPy (which loads the native
# library the way any host does) once per numba target: every kernel the
# default model and every creep / contact model choice needs is compiled into
# the verified cache copy of the solver (fmu_wheelset/fmu/cache.py), for the build
# machine's CPU (in the builder's per-user cache root, or a fresh private one
# when that is not usable) and for a generic x86-64 (NUMBA_CPU_NAME=generic, in
# a root of its own: numba keeps the entries of both targets in one index).
# Each target's numba files are stored in resources/wheelset_numba_cache/
# <target>/ with a manifest (the solver's full sha256, numba's version, the
# Python tag, the CPU signature numba keys its index on, every file's sha256);
# the FMU's loader installs the one whose CPU signature is this process's.
_WARM_UP = r"""
import json
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
# seconds (measured: about 7 s in the C host)
os.environ["WHEELSET_FMU_FAST_STEP"] = "0"
simulate_fmu(fmu, stop_time=0.002, output_interval=0.001)
from numba.core.registry import cpu_target
print("numba-target=" + json.dumps([str(x) for x in cpu_target.target_context.codegen().magic_tuple()]))
"""


def _start_numba_cache(fmu: Path, root: Path, numba_env: dict, trace_imports: bool):
    """Start the child process that runs the FMU through FMPy with the cache
    root ``root`` and numba's settings ``numba_env`` (its output in temporary
    files: a child's full pipe must not stall it)."""
    env = dict(os.environ, WHEELSET_FMU_CACHE=str(root), **numba_env)
    for key in ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT", "NUMBA_CPU_FEATURES", "WHEELSET_FMU_OUT_OF_PROCESS"):
        env.pop(key, None)                     # numba must write beside the solver copy
    if "NUMBA_CPU_NAME" not in numba_env:
        env.pop("NUMBA_CPU_NAME", None)
    command = [sys.executable, *(["-X", "importtime"] if trace_imports else []), "-c", _WARM_UP, str(fmu)]
    stdout, stderr = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
    return subprocess.Popen(command, env=env, stdout=stdout, stderr=stderr, text=True), stdout, stderr


def _numba_cache_files(started, digest: str, root: Path, trace_imports: bool) -> tuple:
    """Collect what the child of `_start_numba_cache` (``started``, finished)
    compiled: (the numba files of the solver copy, the CPU signature they are
    keyed on, the names of the modules the child imported, empty unless
    ``trace_imports``)."""
    from fmu_wheelset.fmu import cache as fmu_cache
    proc, stdout_file, stderr_file = started
    stdout_file.seek(0)
    stderr_file.seek(0)
    stdout, stderr = stdout_file.read(), stderr_file.read()
    stdout_file.close()
    stderr_file.close()
    if proc.returncode != 0:
        raise RuntimeError("compiling the numba cache failed: "
                           + (stderr.strip().splitlines() or ["no output"])[-1])
    cpu = json.loads(next(line.split("=", 1)[1] for line in stdout.splitlines()
                          if line.startswith("numba-target=")))
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
    modules = set()
    if trace_imports:
        # "import time: <self us> | <cumulative us> | <indent><module>"
        for line in stderr.splitlines():
            if line.startswith("import time:") and line.count("|") == 2:
                name = line.rsplit("|", 1)[1].strip()
                if name and name != "package":
                    modules.add(name)
    return files, cpu, modules


def _wait_with_progress(children: dict, progress, every: float = 15.0, timeout: float = 3600.0):
    """Wait for the child processes {target: started}; every ``every`` seconds
    tell ``progress`` (a callable taking one line, or None) how long they have
    run and which have finished."""
    import time
    t0 = time.monotonic()
    done = {}
    next_report = every
    while len(done) < len(children):
        for target, (proc, _, _) in children.items():
            if target not in done and proc.poll() is not None:
                done[target] = time.monotonic() - t0
                if progress:
                    progress(f"numba cache {target}: compiled in {done[target]:.0f} s")
        elapsed = time.monotonic() - t0
        if elapsed > timeout:
            for proc, _, _ in children.values():
                proc.kill()
            raise RuntimeError(f"compiling the numba cache took more than {timeout:.0f} s")
        if progress and elapsed >= next_report and len(done) < len(children):
            running = ", ".join(t for t in children if t not in done)
            progress(f"numba cache: compiling {running} ({elapsed:.0f} s; about 1.5 min of CPU "
                     "per target)")
            next_report += every
        time.sleep(0.2)
    return done


NUMBA_TARGETS = ("build-cpu", "generic")


def ship_numba_cache(fmu: Path, targets=NUMBA_TARGETS, trace_imports: bool = False,
                     progress=None):
    """Compile the FMU's kernels in a child process per numba target (``targets``:
    any of "build-cpu", "generic"; the children run at the same time, each on
    a core of its own when there are two) and store numba's cache files in the
    FMU (resources/wheelset_numba_cache/<target>/). ``progress``: a callable
    told a line every 15 s while they compile (None: silent). Returns (a
    one-line summary, the modules the child imported when ``trace_imports``)."""
    from fmu_wheelset.fmu import cache as fmu_cache
    import numba
    assert set(targets) <= set(fmu_cache.SHIPPED_VARIANTS) and targets, targets
    shipped = {}
    modules = set()
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
        roots, children = {}, {}
        for k, target in enumerate(targets):
            if target == fmu_cache.GENERIC_VARIANT:
                # a root of its own below the builder's (kept for rebuilds too)
                target_root = root / "generic-target"
                problem = fmu_cache.root_problem(str(target_root))
                if problem:
                    raise RuntimeError(f"no cache root for the generic target: {problem}")
                numba_env = {"NUMBA_CPU_NAME": "generic"}
            else:
                target_root, numba_env = root, {}
            roots[target] = target_root
            children[target] = _start_numba_cache(fmu, target_root, numba_env,
                                                  trace_imports and k == 0)
        try:
            _wait_with_progress(children, progress)
        finally:
            for proc, _, _ in children.values():
                if proc.poll() is None:
                    proc.kill()
        for k, target in enumerate(targets):
            files, cpu, traced = _numba_cache_files(children[target], digest, roots[target],
                                                    trace_imports and k == 0)
            modules |= traced
            if target == fmu_cache.GENERIC_VARIANT and cpu[1:] != ["generic", ""]:
                raise RuntimeError(f"the generic target compiled for {cpu[1:]}")
            manifest = {"format": fmu_cache.SHIPPED_FORMAT, "version": fmu_cache.SHIPPED_VERSION,
                        "numba": numba.__version__, "python": sys.implementation.cache_tag,
                        "cpu": cpu, "solver_sha256": digest,
                        "files": {name: hashlib.sha256(data).hexdigest()
                                  for name, data in files.items()}}
            shipped[target] = (manifest, files)
    prefix = f"resources/{fmu_cache.SHIPPED_CACHE_DIR}/"
    out = fmu.with_suffix(".fmu.tmp")
    with zipfile.ZipFile(fmu) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if not info.filename.startswith(prefix):
                zout.writestr(info, zin.read(info.filename))
        for target, (manifest, files) in shipped.items():
            zout.writestr(f"{prefix}{target}/{fmu_cache.SHIPPED_MANIFEST}", json.dumps(manifest, indent=1))
            for name, data in files.items():
                zout.writestr(f"{prefix}{target}/{name}", data)
    out.replace(fmu)
    parts = []
    for target, (manifest, files) in shipped.items():
        size = sum(len(d) for d in files.values())
        parts.append(f"{target} ({len(files)} files, {size / 1024:.0f} kB, CPU {manifest['cpu'][1]})")
    return f"resources/{fmu_cache.SHIPPED_CACHE_DIR}/: " + ", ".join(parts), modules


def standalone_config_text(guid: str, package: str, info: dict) -> str:
    """resources/wheelset_native.cfg of a self-contained FMU: every path relative
    to resources/wheelset_python/ (checked by the C library: no absolute path,
    no "..")."""
    values = {"guid": guid, "package": package, "standalone": "1", "runtime": RUNTIME_DIR,
              "libpython": info["libpython"], "home": info["home"],
              "site_packages": info["site_packages"], "worker": info["worker"],
              "preload": ",".join(info["preload"]), "python_version": info["version"]}
    lines = ["# the wheelset FMU's own Python runtime, in resources/" + RUNTIME_DIR + "/ (written by",
             "# fmu_wheelset/packaging/build.py; parsed, never executed). Started isolated: the",
             "# environment's PYTHON* and WHEELSET_FMU_LIBPYTHON/PYTHONHOME/SITE_PACKAGES/PYTHON",
             "# variables are ignored."]
    lines += [f"{k}={v}" for k, v in values.items()]
    return "\n".join(lines) + "\n"


def _pyc_name(source: str) -> str:
    folder, _, name = source.rpartition("/")
    return f"{folder}/__pycache__/{name[:-3]}.{sys.implementation.cache_tag}.pyc"


def _byte_code(source: bytes, shown_path: str) -> bytes:
    """The .pyc of ``source`` for this interpreter, unchecked-hash (used whatever
    the extracted file's time; it comes from the same FMU as its source)."""
    import importlib.util
    import marshal
    code = compile(source, shown_path, "exec", dont_inherit=True)
    return importlib.util.MAGIC_NUMBER + (1).to_bytes(4, "little") \
        + importlib.util.source_hash(source) + marshal.dumps(code)


def install_standalone_runtime(fmu: Path, traced: set, compiler: str) -> dict:
    """Add resources/wheelset_python/ (fmu_wheelset/packaging/standalone.py) to the FMU and
    point its interpreter record at it. ``traced``: modules the build's warm-up
    imported (with the static trace of the FMU's code, they choose what of the
    standard library and scipy is bundled and which modules get byte code)."""
    from fmu_wheelset.packaging import standalone
    traced = set(traced) | standalone.static_trace(ROOT)
    with tempfile.TemporaryDirectory(prefix="wheelset_runtime_") as tmp:
        folder, info = standalone.stage_runtime(traced, compiler, Path(tmp))
        out = fmu.with_suffix(".fmu.tmp")
        with zipfile.ZipFile(fmu) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
            for item in zin.infolist():
                data = zin.read(item.filename)
                if item.filename.startswith(f"resources/{RUNTIME_DIR}/"):
                    continue
                if item.filename == f"resources/{NATIVE_CONFIG}":
                    config = dict(line.split("=", 1) for line in data.decode().splitlines()
                                  if "=" in line and not line.startswith("#"))
                    data = standalone_config_text(config["guid"], config["package"], info).encode()
                zout.writestr(item, data)
            for path in sorted(folder.rglob("*")):
                if path.is_file():
                    # ZipInfo.from_file keeps the mode (the launcher's execute bit)
                    zout.write(path, f"resources/{RUNTIME_DIR}/{path.relative_to(folder).as_posix()}")
            # byte code of the FMU's own package and solver, for this runtime (a
            # first start then compiles no source; the solver's is copied with
            # the solver into the per-user cache copy, fmu_wheelset/fmu/cache.py)
            package = f"resources/{config['package']}/"
            for name in zin.namelist():
                if name.startswith(package) and name.endswith(".py"):
                    zout.writestr(_pyc_name(name), _byte_code(zin.read(name), name[len("resources/"):]))
        out.replace(fmu)
    return info


START_PRESET = "fmu-start"     # the preset of a build with its own start values


def build_fmu(out: str | Path = "dist/Wheelset.fmu", *, solver_dir: str | Path | None = None,
              quiet: bool = False, native: bool = True, platforms=("linux64",),
              numba_cache: bool = True, start_values: dict | None = None,
              start_source: str = "", standalone: bool = False,
              numba_targets=NUMBA_TARGETS, progress="default") -> Path:
    """Build the FMU at ``out`` (a .fmu path); returns its path.

    ``solver_dir``: the solver package to bundle (default: the one beside
    fmu_wheelset). ``platforms``: linux64 and any of win64, darwin64
    (cross-compiled with zig: fmu_wheelset/packaging/cross_build.py). ``numba_cache``: run
    the FMU once here and ship the compiled numba cache inside it (native front
    end only; ship_numba_cache). ``start_values``: {parameter name: FMI value} that become the
    FMU's start values (the model description's and the getters'): written as
    the preset resources/presets/fmu-start.toml, each value with
    ``start_source`` as its source, and named in
    resources/wheelset_start_preset.txt (fmu_wheelset/fmu/presets.py).
    ``standalone``: the FMU carries its own Python runtime (this interpreter's
    CPython with numpy, scipy, numba and llvmlite, fmu_wheelset/packaging/standalone.py)
    and needs no Python on the machine that runs it (linux64 only).
    ``numba_targets``: the numba caches to ship ("build-cpu", "generic").
    Prints what it built unless ``quiet``. ``progress``: a callable told one
    line per step and every 15 s while the numba cache compiles (the default:
    print, unless ``quiet``; None: silent)."""
    from pythonfmu import FmuBuilder
    from fmu_wheelset.fmu.core_loader import source_digest
    from fmu_wheelset.fmu.variables import VARIABLES
    import solver.model  # noqa: F401 - the slave reads the core's defaults (start values)

    import time
    if progress == "default":
        progress = None if quiet else _print_progress
    t_start = time.monotonic()

    def say(text):
        if progress:
            progress(f"[{time.monotonic() - t_start:5.0f} s] {text}")

    out = Path(out).resolve()
    if standalone:
        from fmu_wheelset.packaging.standalone import check_interpreter
        problem = check_interpreter()
        if problem:
            raise RuntimeError(f"cannot build a self-contained FMU: {problem}")
        if tuple(platforms) != ("linux64",):
            raise ValueError("a self-contained FMU carries a Linux x86-64 Python runtime: build it "
                             "for linux64 only (--platforms linux64)")
        if not native:
            raise ValueError("a self-contained FMU needs the native front end")
    if out.suffix != ".fmu":
        raise ValueError(f"the output must be a .fmu file, got {out}")
    out.parent.mkdir(parents=True, exist_ok=True)
    solver_dir = Path(solver_dir) if solver_dir else ROOT / "solver"
    say(f"building {out.name}: the solver, the slave and pythonfmu's files")
    with tempfile.TemporaryDirectory(prefix="wheelset_fmu_build_") as tmp:
        stage = Path(tmp)
        script = stage / f"{SLAVE_MODULE}.py"
        shutil.copy2(FMU_DIR / "slave_entry.py", script)
        shutil.copy2(FMU_DIR / "slave.py", stage / f"{SLAVE_IMPL_MODULE}.py")
        shutil.copy2(FMU_DIR / "variables.py", stage / f"{VARIABLES_MODULE}.py")
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc")
        project = [stage / f"{SLAVE_IMPL_MODULE}.py", stage / f"{VARIABLES_MODULE}.py",
                   stage / "solver"]
        for source, bundled in SLAVE_HELPER_MODULES.items():
            shutil.copy2(FMU_DIR / source, stage / bundled)
            project.append(stage / bundled)
        shutil.copytree(solver_dir, stage / "solver", ignore=ignore)
        for extra in ("scenarios", "profiles", "presets"):
            src = ROOT / extra
            if src.is_dir() and any(p.is_file() for p in src.iterdir()):
                shutil.copytree(src, stage / extra, ignore=ignore)
                project.append(stage / extra)
        if start_values:
            from fmu_wheelset.fmu.presets import START_PRESET_FILE, preset_text
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
        digest = source_digest(str(stage / "solver"))
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
        say(f"the native front end ({Path(compiler).name})")
        package = install_native_front_end(fmu, solver_dir, compiler)
        front_end = f"native (resources/{package})"
        from fmu_wheelset.packaging.cross_build import add_cross_binaries
        others = [name for name in platforms if name != "linux64"]
        if others:
            say(f"cross-compiling the front end for {', '.join(others)} (zig cc)")
        add_cross_binaries(fmu, platforms, MODEL_IDENTIFIER, quiet=quiet)
    _rewrite_model_description(fmu)
    if standalone and compiler is None:
        raise RuntimeError("a self-contained FMU needs a C compiler (cc, gcc, clang or $CC)")
    shipped = None
    traced = set()
    if compiler is not None and numba_cache:
        say(f"the numba cache: compiling the solver for {' and '.join(numba_targets)}"
            + (", one process each at the same time" if len(numba_targets) > 1 else "")
            + " (about 1.5 min of CPU a target)")
        shipped, traced = ship_numba_cache(fmu, numba_targets, trace_imports=standalone,
                                           progress=say)
    runtime = None
    if standalone:
        say("the self-contained Python runtime")
        runtime = install_standalone_runtime(fmu, traced, compiler)
    say(f"done: {out}")
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
            print(f"  bundled: resources/{package}/ ({', '.join(NATIVE_PACKAGE_MODULES)}, "
                  f"pythonfmu's slave API, solver with sources {digest}), "
                  f"resources/presets/, resources/{NATIVE_CONFIG} (the Python to load)")
            print(f"  numba cache: {shipped or 'not shipped (--no-numba-cache)'}")
            if runtime is not None:
                from fmu_wheelset.packaging.standalone import runtime_summary
                print(f"  self-contained: {runtime_summary(runtime)}")
        else:
            print(f"  bundled: resources/{SLAVE_MODULE}.py (entry), resources/{SLAVE_IMPL_MODULE}.py, "
                  f"resources/{VARIABLES_MODULE}.py, resources/solver (sources {digest}), "
                  f"resources/pythonfmu")
    return fmu


def _print_progress(line: str) -> None:
    print(line, flush=True)


def add_standalone_options(parser) -> None:
    """--standalone and --numba-targets (build_fmu.py and `wheelset-fmu build`)."""
    parser.add_argument("--standalone", action="store_true",
                        help="carry a Python runtime (this interpreter's CPython with numpy, scipy, "
                             "numba, llvmlite) inside the FMU: it then runs on a Linux x86-64 "
                             "machine without Python (linux64 only; about 140 MB)")
    parser.add_argument("--numba-targets", default=",".join(NUMBA_TARGETS),
                        help="numba caches to ship: a comma list of build-cpu (this machine's "
                             "CPU) and generic (any x86-64 CPU) (default %(default)s)")


def parse_numba_targets(text: str) -> tuple:
    targets = tuple(t.strip() for t in text.split(",") if t.strip())
    unknown = [t for t in targets if t not in NUMBA_TARGETS]
    if unknown or not targets:
        raise ValueError(f"--numba-targets: {', '.join(unknown) or 'none given'}; choose from "
                         f"{', '.join(NUMBA_TARGETS)}")
    return targets


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
    add_standalone_options(parser)
    args = parser.parse_args(argv)
    from fmu_wheelset.packaging.cross_build import parse_platforms
    build_fmu(args.out, native=not args.pythonfmu_binary, platforms=parse_platforms(args.platforms),
              numba_cache=not args.no_numba_cache, standalone=args.standalone,
              numba_targets=parse_numba_targets(args.numba_targets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
