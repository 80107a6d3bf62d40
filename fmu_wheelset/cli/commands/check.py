"""`wheelset-fmu check FMU`: load the FMU the way a C host does and report, one
line each, what is missing on this machine.

In order: the FMU archive and its model description; the binary for this
platform; the interpreter the build recorded (resources/wheelset_native.cfg,
with the WHEELSET_FMU_LIBPYTHON / _PYTHONHOME / _SITE_PACKAGES overrides a host
may set): libpython, its home, the site-packages and the packages the core
imports in them; the shipped numba cache (made for this CPU, numba and
Python?); the binary loaded with ctypes and its FMI 2.0 symbols; then, in a
child process, fmi2Instantiate, the initialization and one doStep through that
binary. Exit status 0 when everything is usable, 1 when something is missing
(each problem is one line starting with "missing:" or "not usable:").
"""
from __future__ import annotations

import ctypes
import json
import os
import platform
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REQUIRED_PACKAGES = ("numpy", "scipy", "numba", "llvmlite")
FMI2_FUNCTIONS = ("fmi2GetVersion", "fmi2GetTypesPlatform", "fmi2Instantiate", "fmi2FreeInstance",
                  "fmi2SetupExperiment", "fmi2EnterInitializationMode",
                  "fmi2ExitInitializationMode", "fmi2Terminate", "fmi2DoStep", "fmi2GetReal",
                  "fmi2SetReal", "fmi2GetInteger", "fmi2SetInteger", "fmi2GetBoolean",
                  "fmi2SetBoolean", "fmi2GetString", "fmi2SetString", "fmi2GetFMUstate",
                  "fmi2SetFMUstate", "fmi2FreeFMUstate", "fmi2SerializeFMUstate",
                  "fmi2DeSerializeFMUstate", "fmi2Reset", "fmi2GetStatus")
CONFIG = "resources/wheelset_native.cfg"
OVERRIDES = {"libpython": "WHEELSET_FMU_LIBPYTHON", "home": "WHEELSET_FMU_PYTHONHOME",
             "site_packages": "WHEELSET_FMU_SITE_PACKAGES"}


def fmi_platform() -> tuple[str, str]:
    """(FMI platform folder, library suffix) of this machine."""
    bits = "64" if sys.maxsize > 2 ** 32 else "32"
    system = platform.system()
    if system == "Windows":
        return f"win{bits}", ".dll"
    if system == "Darwin":
        return f"darwin{bits}", ".dylib"
    return f"linux{bits}", ".so"


def read_config(text: str) -> dict:
    """key=value lines of resources/wheelset_native.cfg (comments skipped)."""
    values = {}
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            values[key.strip()] = value.strip()
    return values


# the child process: instantiate + initialize + one step through the binary
_STEP = r"""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
messages = []
LOGGER = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_char_p, ctypes.c_char_p)
def log(env, name, status, category, fmt, arg):
    text = (arg if fmt == b"%s" and arg is not None else fmt or b"").decode("utf-8", "replace")
    messages.append((status, text))
logger = LOGGER(log)
ALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
libc = ctypes.CDLL(None)
libc.calloc.restype = ctypes.c_void_p
libc.calloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
alloc = ALLOC(lambda n, s: libc.calloc(n, s))
free = FREE(lambda p: libc.free(p))
class Callbacks(ctypes.Structure):
    _fields_ = [("logger", LOGGER), ("allocate", ALLOC), ("free", FREE),
                ("step_finished", ctypes.c_void_p), ("env", ctypes.c_void_p)]
callbacks = Callbacks(logger, alloc, free, None, None)
lib.fmi2Instantiate.restype = ctypes.c_void_p
lib.fmi2Instantiate.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
                                ctypes.POINTER(Callbacks), ctypes.c_int, ctypes.c_int]
for name in ("fmi2SetupExperiment", "fmi2EnterInitializationMode", "fmi2ExitInitializationMode",
             "fmi2DoStep", "fmi2Terminate", "fmi2FreeInstance"):
    getattr(lib, name).argtypes = [ctypes.c_void_p] + {
        "fmi2SetupExperiment": [ctypes.c_int, ctypes.c_double, ctypes.c_double, ctypes.c_int,
                                ctypes.c_double],
        "fmi2DoStep": [ctypes.c_double, ctypes.c_double, ctypes.c_int]}.get(name, [])
def report(what):
    for status, text in messages:
        if status >= 2:
            print(f"log: {text}")
    print(f"failed: {what}")
    sys.exit(1)
c = lib.fmi2Instantiate(b"check", 1, sys.argv[2].encode(), sys.argv[3].encode(),
                        ctypes.byref(callbacks), 0, 0)
if not c:
    report("fmi2Instantiate returned NULL")
for name, args in (("fmi2SetupExperiment", (0, 0.0, 0.0, 0, 0.0)),
                   ("fmi2EnterInitializationMode", ()), ("fmi2ExitInitializationMode", ()),
                   ("fmi2DoStep", (0.0, 0.001, 1))):
    status = getattr(lib, name)(c, *args)
    if status > 1:
        report(f"{name} returned status {status}")
lib.fmi2Terminate(c)
lib.fmi2FreeInstance(c)
for status, text in messages:
    if "solver imported from" in text:
        print(f"log: {text}")
print("ok")
"""


def check(fmu: str, *, step: bool = True) -> list[str]:
    """Problems found (one line each; empty: the FMU is usable here) and notes
    (lines starting with "ok:")."""
    lines: list[str] = []
    problems: list[str] = []
    try:
        archive = zipfile.ZipFile(fmu)
    except (OSError, zipfile.BadZipFile) as exc:
        return [f"missing: {fmu} is not a readable FMU ({exc})"]
    with archive, tempfile.TemporaryDirectory(prefix="wheelset_check_") as tmp:
        try:
            archive.extractall(tmp)
        except (OSError, zipfile.BadZipFile) as exc:
            return [f"missing: {fmu} cannot be extracted ({exc})"]
        from fmpy import read_model_description
        try:
            md = read_model_description(os.path.join(tmp, "modelDescription.xml"))
        except Exception as exc:  # noqa: BLE001 - any parse failure is one line
            return [f"not usable: modelDescription.xml ({exc})"]
        identifier = md.coSimulation.modelIdentifier if md.coSimulation else None
        folder, suffix = fmi_platform()
        binary = os.path.join(tmp, "binaries", folder, f"{identifier}{suffix}")
        if not os.path.isfile(binary):
            found = sorted(os.listdir(os.path.join(tmp, "binaries"))) \
                if os.path.isdir(os.path.join(tmp, "binaries")) else []
            problems.append(f"missing: binary for this platform (binaries/{folder}/"
                            f"{identifier}{suffix}; the FMU has {', '.join(found) or 'none'})")
        config_path = os.path.join(tmp, *CONFIG.split("/"))
        config = {}
        if os.path.isfile(config_path):
            with open(config_path, encoding="utf-8", errors="replace") as f:
                config = read_config(f.read())
            if config.get("standalone") == "1":
                # the FMU's own runtime: the overrides are ignored (as by the binary)
                config, runtime_problems = standalone_paths(config, os.path.join(tmp, "resources"))
                problems += runtime_problems
                lines.append(f"ok: self-contained: the FMU's own Python {config.get('python_version', '?')} "
                             "(resources/" + config.get("runtime", "?") + "; WHEELSET_FMU_LIBPYTHON, "
                             "_PYTHONHOME, _SITE_PACKAGES and _PYTHON are ignored)")
            else:
                for key, variable in OVERRIDES.items():
                    if os.environ.get(variable):
                        config[key] = os.environ[variable]
                        lines.append(f"ok: {key} from {variable}")
            problems += interpreter_problems(config)
        else:
            lines.append("ok: no interpreter record (pythonfmu's binary: the host must provide "
                         "Python, see `wheelset-fmu env`)")
        problems += shipped_cache_problems(os.path.join(tmp, "resources"))
        if os.path.isfile(binary):
            try:
                lib = ctypes.CDLL(binary)
                absent = [name for name in FMI2_FUNCTIONS if not hasattr(lib, name)]
                if absent:
                    problems.append(f"not usable: {binary} lacks {', '.join(absent)}")
            except OSError as exc:
                problems.append(f"not usable: the binary does not load ({exc})")
            if step and not problems:
                uri = Path(tmp, "resources").as_uri()
                proc = subprocess.run([sys.executable, "-c", _STEP, binary, md.guid, uri],
                                      capture_output=True, text=True, timeout=1800)
                out = [line for line in proc.stdout.splitlines() if line.strip()]
                if proc.returncode != 0:
                    detail = "; ".join(out) or (proc.stderr.strip().splitlines() or ["crashed"])[-1]
                    problems.append(f"not usable: instantiate + one step failed ({detail[:600]})")
                else:
                    lines += [f"ok: {line[5:]}" for line in out if line.startswith("log: ")]
                    lines.append("ok: instantiated, initialized, one step of 1 ms")
    return problems + lines


def standalone_paths(config: dict, resources: str) -> tuple[dict, list[str]]:
    """A self-contained FMU's record with its paths made absolute (they are
    relative to resources/<runtime>/; the binary refuses anything else)."""
    runtime = config.get("runtime", "")
    problems = []
    if not runtime or not all(c.islower() or c.isdigit() or c == "_" for c in runtime):
        return config, [f"not usable: {CONFIG} names no runtime folder"]
    resolved = dict(config)
    for key in ("libpython", "home", "site_packages", "worker"):
        value = config.get(key, "")
        if not value or value.startswith("/") or ".." in value.split("/") or ":" in value:
            problems.append(f"not usable: {CONFIG}: {key} is not a relative path in the runtime")
            continue
        resolved[key] = os.path.normpath(os.path.join(resources, runtime, value))
    worker = resolved.get("worker", "")
    if worker and not problems and not os.path.isfile(worker):
        problems.append(f"missing: the runtime's interpreter {worker} (the FMU's resources are incomplete)")
    return resolved, problems


def interpreter_problems(config: dict) -> list[str]:
    problems = []
    version = config.get("python_version", "?")
    libpython = config.get("libpython", "")
    if not libpython or not os.path.isfile(libpython):
        problems.append(f"missing: Python {version} (libpython {libpython or 'not recorded'}; "
                        f"set WHEELSET_FMU_LIBPYTHON to another installation's libpython)")
    home = config.get("home", "")
    if home and not os.path.isdir(home):
        problems.append(f"missing: Python home {home} (set WHEELSET_FMU_PYTHONHOME)")
    site_dirs = [p for p in config.get("site_packages", "").split(os.pathsep) if p]
    absent_dirs = [p for p in site_dirs if not os.path.isdir(p)]
    for p in absent_dirs:
        problems.append(f"missing: site-packages {p} (set WHEELSET_FMU_SITE_PACKAGES)")
    present = [p for p in site_dirs if os.path.isdir(p)]
    if present:
        for package in REQUIRED_PACKAGES:
            if not any(os.path.isfile(os.path.join(p, package, "__init__.py")) for p in present):
                problems.append(f"missing: package {package} in {os.pathsep.join(present)}")
    return problems


def shipped_cache_problems(resources: str) -> list[str]:
    """The shipped numba caches (one per target: the build machine's CPU and a
    generic x86-64, fmu_wheelset/fmu/cache.py): usable when one fits this CPU or
    the generic one fits this numba (the FMU's own interpreter, in a C host or
    its worker process, then compiles for the generic target)."""
    from fmu_wheelset.fmu import cache as fmu_cache
    shipped = os.path.join(resources, fmu_cache.SHIPPED_CACHE_DIR)
    if not os.path.isdir(shipped):
        return ["not usable: no numba cache shipped (the first start compiles, 10-60 s)"]
    try:
        import numba
        from fmu_wheelset.fmu.core_loader import numba_cpu_signature
        cpu = numba_cpu_signature()
    except ImportError:
        return ["missing: numba in this Python (cannot check the shipped cache)"]
    reasons = []
    for variant in fmu_cache.SHIPPED_VARIANTS:
        folder = os.path.join(shipped, variant)
        if not os.path.isdir(folder):
            continue
        doc, why = fmu_cache.read_shipped_manifest(folder)
        if doc is None:
            reasons.append(f"{variant}: {why}")
            continue
        if doc["numba"] != numba.__version__:
            reasons.append(f"{variant}: made with numba {doc['numba']}, this Python has {numba.__version__}")
            continue
        target = cpu if variant == fmu_cache.BUILD_CPU_VARIANT else [cpu[0], "generic", ""]
        problem = fmu_cache.shipped_cache_problem(doc, target, doc["solver_sha256"])
        if problem is None:
            return []
        reasons.append(f"{variant}: {problem}")
    if not reasons:
        return ["not usable: no numba cache shipped (the first start compiles, 10-60 s)"]
    return [f"not usable: shipped numba cache ({'; '.join(reasons)}; the first start compiles)"]


def register(subparsers):
    parser = subparsers.add_parser(
        "check", help="load the FMU as a C host does and report what is missing here",
        description="Extract the FMU, read its interpreter record, check the Python, the "
                    "packages, the binary for this platform and the shipped numba cache, load "
                    "the binary with ctypes and run fmi2Instantiate + initialization + one "
                    "step. One line per problem; exit 0 when all is well.")
    from fmu_wheelset.cli.args import fmu_file
    # not an FMU of the wheelset at all: exit 2 (an invalid input file); 1 is for
    # an FMU that cannot be used on this machine
    parser.add_argument("fmu", type=fmu_file, help="the FMU file (e.g. dist/Wheelset.fmu)")
    parser.add_argument("--no-step", action="store_true",
                        help="only the static checks and the library load (no instantiation)")
    parser.set_defaults(func=run)


def run(args) -> int:
    results = check(args.fmu, step=not args.no_step)
    for line in results:
        print(line)
    problems = [line for line in results if not line.startswith("ok:")]
    if not problems:
        print(f"{args.fmu}: usable on this machine")
    return 1 if problems else 0
