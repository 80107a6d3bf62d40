import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import tempfile
import threading
import zipfile
from pathlib import Path

import pytest


# zig cc's first win64 link in a new environment builds the mingw-w64 C runtime
# into zig's global cache: about 100 s of one core (measured: 119 s
# wall for the first cross build of the front end, 0.4 s for the next; a new
# .venv misses the cache, so every clean checkout pays it). When the session
# will run tests/test_cross_binaries.py, it starts that one-off build as soon as
# the tests are collected, in the background, so that it overlaps the numba
# compiling of the first tests (also one core) instead of adding to the run;
# the cross-binaries fixture waits for it before its own build.
_ZIG_WARM_UP = {"thread": None, "folder": None}


def _compile_cross_front_ends(folder):
    from fmu_wheelset.packaging import cross_build
    zig = cross_build.zig_command()
    for platform, (_triple, _sources, suffix, _flags) in cross_build.CROSS_TARGETS.items():
        try:
            cross_build.cross_compile(platform, Path(folder) / f"warm-up{suffix}", zig)
        except RuntimeError:
            return      # the test's own build reports the compiler's message


# The markers (registered in pyproject.toml) that `make test-fast` leaves out:
# fmu, cross, cosim and slow. A file whose every test qualifies says so with a
# module-level `pytestmark`; here, in addition, every test that uses the
# session's FMU (the fixture wheelset_fmu, which fmu, unzipped, md and
# wheelset_fmu_unzipped depend on) is marked `fmu`, since building it costs
# about a minute of one core and loading it starts an embedded interpreter.
FMU_FIXTURE = "wheelset_fmu"


def pytest_itemcollected(item):     # called for each test before -m deselects
    if FMU_FIXTURE in getattr(item, "fixturenames", ()):
        item.add_marker(pytest.mark.fmu)


@pytest.hookimpl(trylast=True)      # after -k / -m have deselected: only the tests that will run
def pytest_collection_modifyitems(session, config, items):
    from fmu_wheelset.packaging import cross_build
    if (cross_build.zig_command() is None
            or not any(item.path.name == "test_cross_binaries.py" for item in items)):
        return
    _ZIG_WARM_UP["folder"] = tempfile.TemporaryDirectory(prefix="wheelset-zig-warm-up-")
    thread = threading.Thread(target=_compile_cross_front_ends,
                              args=(_ZIG_WARM_UP["folder"].name,), daemon=True)
    thread.start()
    _ZIG_WARM_UP["thread"] = thread


def wait_for_zig_warm_up():
    """Block until the session's background cross build (above) has finished."""
    if _ZIG_WARM_UP["thread"] is not None:
        _ZIG_WARM_UP["thread"].join()


def pytest_sessionfinish(session, exitstatus):
    wait_for_zig_warm_up()
    if _ZIG_WARM_UP["folder"] is not None:
        _ZIG_WARM_UP["folder"].cleanup()
    # OpenSees prints "Process 0 Terminating" on stderr from a C++ destructor after
    # Python has finished: once pytest has written its summary, stderr goes to
    # /dev/null at exit (only when a test loaded OpenSees)
    import sys
    if any(name.startswith("openseespy") for name in sys.modules):
        from fmu_wheelset.cli.args import silence_stderr_at_exit
        silence_stderr_at_exit()


@pytest.fixture(scope="session")
def wheelset_fmu(tmp_path_factory):
    """The FMU, built once per test session.

    Every in-process FMI test uses this one file and its one extraction
    (`wheelset_fmu_unzipped`): two different pythonfmu binaries loaded into one
    process share the embedded interpreter's globals and crash it (a pythonfmu
    0.7.0 limit), so the tests never load a second copy.
    """
    from fmu_wheelset.packaging.build import build_fmu
    return str(build_fmu(tmp_path_factory.mktemp("fmu") / "Wheelset.fmu", quiet=True))


@pytest.fixture(scope="session")
def wheelset_fmu_unzipped(wheelset_fmu, tmp_path_factory):
    d = tmp_path_factory.mktemp("fmu-unzipped")
    with zipfile.ZipFile(wheelset_fmu) as z:
        z.extractall(d)
    return str(d)


# short names used by the FMU tests (test_fmu, test_faults, test_sweep)
@pytest.fixture(scope="session")
def fmu(wheelset_fmu):
    """Path of the session's FMU file."""
    return wheelset_fmu


@pytest.fixture(scope="session")
def unzipped(wheelset_fmu_unzipped):
    """Its extraction directory."""
    return wheelset_fmu_unzipped


@pytest.fixture(scope="session")
def md(wheelset_fmu):
    """Its model description (fmpy.read_model_description)."""
    from fmpy import read_model_description
    return read_model_description(wheelset_fmu)


# pythonfmu 0.7.0 can call the logger of an instance freed earlier in the process
# (docs/limits_and_failures.md): every callbacks struct stays alive to the end.
_FMI_CALLBACKS_KEPT_ALIVE = []


class FmiLog:
    """fmi2 callbacks (for fmpy's FMU2Slave.instantiate) that record every log
    message as (status, category, text)."""

    def __init__(self):
        from ctypes import byref
        from fmpy.fmi2 import (calloc, fmi2CallbackAllocateMemoryTYPE, fmi2CallbackFreeMemoryTYPE,
                               fmi2CallbackFunctions, fmi2CallbackLoggerTYPE, free)
        from fmpy.logging import addLoggerProxy
        self.messages = []

        def logger(component, instance, status, category, message):
            self.messages.append((status, (category or b"").decode(errors="replace"),
                                  message.decode(errors="replace")))

        self.callbacks = fmi2CallbackFunctions()
        self._raw_logger = fmi2CallbackLoggerTYPE(logger)
        self.callbacks.logger = self._raw_logger
        self.callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
        self.callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
        # fmpy's proxy turns the variadic C logger into a plain one
        addLoggerProxy(byref(self.callbacks))
        _FMI_CALLBACKS_KEPT_ALIVE.append(self)

    def point_proxy_here(self):
        """fmpy's logger proxy forwards to ONE Python logger for the whole process:
        the one of the last addLoggerProxy call. Re-aim it at this log before an
        instantiation whose messages must come here, when other FmiLogs may have
        been made in between (measured: messages of one module's instances went
        to another module's log)."""
        from ctypes import byref
        from fmpy.logging import addLoggerProxy
        self.callbacks.logger = self._raw_logger
        addLoggerProxy(byref(self.callbacks))

    def since(self, n):
        """The messages logged after the first n."""
        return self.messages[n:]


_MODULE_LOGS: dict = {}


def compile_c_host(folder, source: str = "host.c", *flags: str) -> str:
    """tests/c_host/<source> compiled into folder (a Path) against FMPy's FMI 2.0
    headers; the executable's path. Skips the test without a C compiler."""
    import shutil
    import subprocess
    import fmpy
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    exe = Path(folder) / Path(source).stem
    subprocess.run([cc, "-O1", *flags, "-o", str(exe), os.path.join(ROOT, "tests", "c_host", source),
                    f"-I{Path(fmpy.__file__).parent / 'c-code'}", "-ldl", "-lm"], check=True)
    return str(exe)


def md_start(var):
    """The start value of a model-description variable (FMPy's) as the getter's type."""
    if var.type == "Real":
        return float(var.start)
    if var.type in ("Integer", "Enumeration"):
        return int(var.start)
    if var.type == "Boolean":
        return var.start in (True, "true", "1", 1)
    return var.start


def module_log(owner: str) -> FmiLog:
    """The FmiLog of a test module (`owner`: its __name__), made on first use,
    with fmpy's logger proxy aimed at it (point_proxy_here) on every call."""
    log = _MODULE_LOGS.get(owner)
    if log is None:
        log = _MODULE_LOGS[owner] = FmiLog()
    log.point_proxy_here()
    return log


@pytest.fixture(scope="session")
def plain_fmpy_python(tmp_path_factory):
    """The python of a new virtual environment with only `pip install fmpy` in
    it (FMPy and its own dependencies, numpy among them: no scipy, numba or
    anything of this project), as a user's plain FMPy set-up has. Skipped when
    pip cannot install fmpy here (no package index reachable)."""
    import subprocess
    import sys
    venv = tmp_path_factory.mktemp("plain-fmpy") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", "fmpy"],
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        pytest.skip("pip could not install fmpy into a new virtual environment: "
                    + (proc.stderr.strip().splitlines() or ["no output"])[-1])
    return str(python)
