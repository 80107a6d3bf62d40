"""The Python runtime a self-contained FMU carries (``build_fmu(standalone=True)``).

The FMU's resources get ``wheelset_python/``, a relocatable copy of the build
interpreter (CPython, Linux x86-64, built with a shared libpython) holding only
what the FMU runs:

* ``lib/libpython3.X.so.1.0`` (debug symbols stripped when ``strip`` exists)
  and the few shared libraries its modules need beyond the base system
  (``libffi`` for ctypes, which numba and llvmlite use): the native front end
  loads them by path from the resources, never from the build machine;
* ``lib/python3.X/``: the standard library's pure-Python modules without the
  parts no model code uses (tests, IDLE, tkinter, ensurepip, lib2to3,
  distutils, turtledemo, pydoc's data, the static library), and the extension
  modules of ``lib-dynload`` that the import trace names (or that the worker
  process needs);
* ``lib/python3.X/site-packages/``: numpy, scipy (only the subpackages the
  model imports, found with an import trace: a static import of every module
  of the FMU's package and solver, and the build's warm-up runs through FMPy),
  numba and llvmlite, each without its tests, C headers, Cython sources and
  stubs, with its licence files (``*.dist-info``);
* ``.pyc`` files (unchecked-hash: valid whatever the extraction's file times)
  for the modules the trace saw imported, so that a cold start compiles no
  Python source;
* ``bin/python3.X``: a launcher (a ``main`` calling ``Py_BytesMain``, compiled
  here, RPATH ``$ORIGIN/../lib``), the interpreter of the out-of-process worker.

The front end starts this runtime isolated (the host's PYTHONPATH, PYTHONHOME
and user site-packages are ignored; docs/SECURITY.md).
"""
from __future__ import annotations

import json
import os
import py_compile
import shutil
import struct
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

RUNTIME_DIR = "wheelset_python"       # resources/<this>/
PACKAGES = ("numpy", "scipy", "numba", "llvmlite")      # the distributions the model needs
# top-level stdlib folders no model code imports
STDLIB_LEFT_OUT = {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "distutils",
                   "pydoc_data", "site-packages", "lib-dynload", "__pycache__", "venv", "sqlite3",
                   "curses", "dbm"}
# inside packages: folders and file kinds that are never imported
LEFT_OUT_DIRS = {"tests", "test", "__pycache__", "include", "_pyinstaller"}
# numba's optional threading layers on TBB and OpenMP (parallel=True, which the
# model does not use; numba's own workqueue layer stays)
LEFT_OUT_PREFIXES = ("tbbpool.", "omppool.")
LEFT_OUT_SUFFIXES = (".pyc", ".pyi", ".pxd", ".pyx", ".pxi", ".h", ".hpp", ".c", ".cpp", ".cxx",
                     ".f", ".f90", ".tmpl", ".def", ".lib", ".a")
# the libraries any Linux x86-64 with glibc has (Debian's "required" / minbase
# set): not bundled. Everything else a bundled module needs is.
SYSTEM_LIBRARIES = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
                    "libutil.so.1", "ld-linux-x86-64.so.2", "libstdc++.so.6", "libgcc_s.so.1",
                    "libz.so.1"}
LIBRARY_DIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
                "/lib", "/usr/lib")
# extension modules that would pull a library beyond the base system into the
# runtime, and what the model does without them: zipfile, tarfile and shutil
# import bz2/lzma only when such a file is opened; uuid works without _uuid
# (libuuid). OpenSSL's _hashlib stays (with libcrypto): the cold start hashes
# the shipped numba cache, 3.6x faster than with hashlib's own _sha256
# (measured: 21 ms against 76 ms for its 22 MB)
DYNLOAD_LEFT_OUT = {"_ssl", "_bz2", "_lzma", "_uuid", "_sqlite3", "_tkinter", "readline",
                    "_curses", "_curses_panel", "_dbm", "_gdbm", "nis", "_crypt"}
# modules the out-of-process worker (native_worker.py) and the front end's
# bootstrap import in the runtime besides what the trace sees
EXTRA_MODULES = {"_md5", "_sha1", "_sha256", "_sha512", "_sha3", "_blake2", "ctypes", "mmap", "_posixshmem", "struct", "importlib.util", "site", "json",
                 "hashlib", "tomllib", "encodings.utf_8", "encodings.latin_1", "encodings.ascii"}

# run in a child of the build interpreter: every module of the FMU's Python
# code imported, the names in sys.modules printed (a static import trace)
_STATIC_TRACE = r"""
import importlib, json, pkgutil, sys
sys.path.insert(0, sys.argv[1])
import solver
for info in pkgutil.walk_packages(solver.__path__, "solver."):
    importlib.import_module(info.name)
for name in ("slave", "native_bridge", "native_worker", "fmu_state", "cache", "presets", "variables",
             "adapter", "core_loader", "instance", "registries"):
    importlib.import_module("fmu_wheelset.fmu." + name)
print(json.dumps(sorted(sys.modules)))
"""


def check_interpreter() -> str:
    """Why this interpreter cannot be bundled (empty: it can)."""
    if not sys.platform.startswith("linux"):
        return f"a self-contained FMU is built on Linux only (this is {sys.platform})"
    if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        return (f"{sys.base_prefix} has no shared libpython (configure --enable-shared); "
                "build with an interpreter that has one (pyenv: PYTHON_CONFIGURE_OPTS=--enable-shared)")
    if not libpython_path():
        return "the shared libpython of this interpreter was not found"
    return ""


def libpython_path() -> str:
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    for name in (sysconfig.get_config_var("INSTSONAME"), sysconfig.get_config_var("LDLIBRARY")):
        if name and ".so" in name and os.path.isfile(os.path.join(libdir, name)):
            return os.path.realpath(os.path.join(libdir, name))
    return ""


# --------------------------------------------------------------- ELF reading
def elf_dynamic(path: str) -> dict:
    """{"needed": [...], "rpath": str, "runpath": str, "glibc": "2.x"} of an ELF64
    little-endian file (its dynamic section and the newest GLIBC_ version it
    needs); {} for anything else."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return {}
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    out = {"needed": [], "rpath": "", "runpath": "", "glibc": ""}
    for _name, kind, _flags, _addr, offset, size, link, *_ in sections:
        if kind == 6:                               # SHT_DYNAMIC
            strtab = sections[link][4]

            def text(at):
                end = data.index(b"\0", strtab + at)
                return data[strtab + at:end].decode()
            for k in range(size // 16):
                tag, value = struct.unpack_from("<qQ", data, offset + 16 * k)
                if tag == 0:
                    break
                if tag == 1:
                    out["needed"].append(text(value))
                elif tag == 15:
                    out["rpath"] = text(value)
                elif tag == 29:
                    out["runpath"] = text(value)
    newest = (0, 0)
    at = data.find(b"GLIBC_2.")
    while at >= 0:
        end = at + 6
        while end < len(data) and (data[end:end + 1].isdigit() or data[end:end + 1] == b"."):
            end += 1
        try:
            version = tuple(int(x) for x in data[at + 6:end].decode().strip(".").split(".")[:2])
            if len(version) == 2:
                newest = max(newest, version)
        except ValueError:
            pass
        at = data.find(b"GLIBC_2.", end)
    out["glibc"] = "%d.%d" % newest if newest != (0, 0) else ""
    return out


def _library_notice(path: str, soname: str, folder: Path) -> str:
    """Copy the Debian copyright file of the package holding ``path`` (dpkg -S)
    into ``folder``; returns a line naming the library and its notice."""
    folder.mkdir(exist_ok=True)
    package = ""
    if shutil.which("dpkg"):
        proc = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
        if proc.returncode == 0 and ":" in proc.stdout:
            package = proc.stdout.split(":", 1)[0].strip()
    notice = Path("/usr/share/doc") / package / "copyright" if package else None
    if notice is not None and notice.is_file():
        shutil.copyfile(notice, folder / f"{package}.copyright")
        return f"{soname}: Debian package {package} (licenses/{package}.copyright)"
    return f"{soname}: from {path} (no notice found)"


def find_library(soname: str) -> str:
    for d in (sysconfig.get_config_var("LIBDIR") or "", *LIBRARY_DIRS):
        candidate = os.path.join(d, soname)
        if d and os.path.isfile(candidate):
            return os.path.realpath(candidate)
    return ""


# ------------------------------------------------------------------ tracing
def static_trace(root: Path) -> set:
    """The modules a fresh interpreter imports for every module of the FMU's code."""
    proc = subprocess.run([sys.executable, "-c", _STATIC_TRACE, str(root)], capture_output=True,
                          text=True, timeout=600, cwd=str(root))
    if proc.returncode != 0:
        raise RuntimeError("the import trace of the FMU's code failed: "
                           + (proc.stderr.strip().splitlines() or ["no output"])[-1])
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


def _module_names_to_keep(traced: set) -> tuple:
    """(the scipy subpackages to bundle, the lib-dynload modules to bundle)."""
    scipy_parts = {name.split(".")[1] for name in traced if name.startswith("scipy.") and name.count(".") >= 1}
    dynload = {name.split(".")[0] for name in traced}
    return scipy_parts, dynload


# ---------------------------------------------------------------- assembling
def _copy_tree(src: Path, dst: Path, skip_dir, skip_file) -> None:
    for dirpath, dirnames, filenames in os.walk(src):
        rel = Path(dirpath).relative_to(src)
        dirnames[:] = sorted(d for d in dirnames if not skip_dir(rel / d))
        for name in sorted(filenames):
            if skip_file(rel / name):
                continue
            target = dst / rel / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path(dirpath) / name, target)


def _strip(path: Path) -> None:
    tool = shutil.which("strip")
    if tool:
        subprocess.run([tool, "--strip-unneeded", str(path)], check=True, capture_output=True)


def _compile_launcher(target: Path, libpython: Path, compiler: str) -> None:
    source = target.with_suffix(".c")
    source.write_text("/* the bundled runtime's interpreter (the out-of-process worker) */\n"
                      "int Py_BytesMain(int argc, char **argv);\n"
                      "int main(int argc, char **argv) { return Py_BytesMain(argc, argv); }\n")
    # DT_RPATH (not RUNPATH): it also serves the libraries loaded later (libffi for _ctypes)
    cmd = [*compiler.split(), "-O2", "-o", str(target), str(source), str(libpython),
           "-Wl,--disable-new-dtags,-rpath,$ORIGIN/../lib"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    source.unlink()
    if proc.returncode != 0:
        raise RuntimeError(f"compiling the runtime's launcher failed ({' '.join(cmd)}):\n{proc.stderr[-2000:]}")


def _module_files(traced: set, roots: list) -> list:
    """The source files of the traced modules found under ``roots`` (copied trees)."""
    files = []
    for name in sorted(traced):
        parts = name.split(".")
        for root in roots:
            base = root.joinpath(*parts)
            for candidate in (base / "__init__.py", base.with_suffix(".py")):
                if candidate.is_file():
                    files.append(candidate)
                    break
            else:
                continue
            break
    return files


def assemble_runtime(dest: Path, traced: set, compiler: str) -> dict:
    """Write the runtime into ``dest`` (resources/wheelset_python). Returns what
    the interpreter record and the build summary need: the paths relative to
    the resources, the libraries to preload, the newest glibc needed, sizes."""
    problem = check_interpreter()
    if problem:
        raise RuntimeError(problem)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    lib = dest / "lib"
    stdlib_dst = lib / f"python{version}"
    site_dst = stdlib_dst / "site-packages"
    lib.mkdir(parents=True)
    libpython = Path(libpython_path())
    libpython_dst = lib / libpython.name
    shutil.copyfile(libpython, libpython_dst)
    _strip(libpython_dst)

    # the standard library's Python modules
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    config_dir = Path(sysconfig.get_config_var("LIBPL") or "/nonexistent").name
    _copy_tree(stdlib, stdlib_dst,
               skip_dir=lambda rel: (rel.parts[0] in STDLIB_LEFT_OUT or rel.parts[0] == config_dir
                                     or rel.name in LEFT_OUT_DIRS),
               skip_file=lambda rel: not rel.name.endswith(".py") or rel.name.startswith("_test"))
    shutil.copyfile(stdlib / "LICENSE.txt", stdlib_dst / "LICENSE.txt")

    # extension modules: those the trace saw (and the worker needs)
    scipy_parts, top_names = _module_names_to_keep(traced | EXTRA_MODULES)
    dynload = Path(sysconfig.get_config_var("DESTSHARED") or stdlib / "lib-dynload")
    (stdlib_dst / "lib-dynload").mkdir()
    needed = set()
    for ext in sorted(dynload.glob("*.so")):
        if ext.name.split(".")[0] in top_names and ext.name.split(".")[0] not in DYNLOAD_LEFT_OUT:
            shutil.copyfile(ext, stdlib_dst / "lib-dynload" / ext.name)

    # the packages: numpy, scipy (the traced subpackages), numba, llvmlite
    site = next(Path(p) for p in (sysconfig.get_paths()["platlib"], sysconfig.get_paths()["purelib"])
                if (Path(p) / "numba").is_dir())
    for entry in sorted(site.iterdir()):
        name = entry.name
        top = name.split("-")[0].split(".")[0]
        if top not in PACKAGES:
            continue
        if entry.is_dir() and name.endswith(".dist-info"):
            _copy_tree(entry, site_dst / name, lambda rel: False,
                       lambda rel: rel.name not in ("METADATA", "LICENSE", "LICENSE.txt", "COPYING")
                       and "licenses" not in rel.parts)
        elif entry.is_dir() and name.endswith(".libs"):
            _copy_tree(entry, site_dst / name, lambda rel: False, lambda rel: False)
        elif entry.is_dir() and name == top:
            def skip_dir(rel, top=top):
                if rel.name in LEFT_OUT_DIRS:
                    return True
                if top == "numba" and rel.parts[0] in ("cuda", "pycc", "testing", "scripts"):
                    return True
                return top == "scipy" and len(rel.parts) == 1 and rel.parts[0] not in scipy_parts
            _copy_tree(entry, site_dst / name, skip_dir,
                       lambda rel: rel.name.endswith(LEFT_OUT_SUFFIXES) or rel.name == "conftest.py"
                       or rel.name.startswith(LEFT_OUT_PREFIXES))
    llvm = next(site_dst.glob("llvmlite/binding/libllvmlite*.so"), None)
    if llvm is not None:
        _strip(llvm)

    # shared libraries beyond the base system, needed by a bundled module
    preload = []
    newest_glibc = (0, 0)
    for path in sorted(p for p in dest.rglob("*") if p.is_file() and (p.suffix == ".so" or ".so." in p.name)):
        info = elf_dynamic(str(path))
        if info.get("glibc"):
            newest_glibc = max(newest_glibc, tuple(int(x) for x in info["glibc"].split(".")))
        for soname in info.get("needed", ()):
            if soname in SYSTEM_LIBRARIES or soname == libpython.name or (path.parent / soname).is_file():
                continue
            if "$ORIGIN" in info["rpath"] + info["runpath"]:
                # auditwheel's numpy.libs / scipy.libs: found through the module's own RPATH
                origin = path.parent
                dirs = [Path(str(d).replace("$ORIGIN", str(origin)))
                        for d in (info["rpath"] or info["runpath"]).split(":")]
                if any((d / soname).is_file() for d in dirs):
                    continue
            needed.add(soname)
    notices = []
    for soname in sorted(needed):
        found = find_library(soname)
        if not found:
            raise RuntimeError(f"a bundled module needs {soname}, not found on this machine")
        shutil.copyfile(found, lib / soname)
        preload.append(f"lib/{soname}")
        notices.append(_library_notice(found, soname, dest / "licenses"))
    if notices:
        (dest / "licenses" / "README.txt").write_text(
            "Libraries of the build machine bundled in lib/ (the notices beside this file):\n"
            + "".join(f"  lib/{n}\n" for n in notices))

    # byte code of every traced module, valid whatever the file times
    compiled = 0
    for source in _module_files(traced | EXTRA_MODULES, [stdlib_dst, site_dst]):
        py_compile.compile(str(source), cfile=None, dfile=str(source.relative_to(dest)), doraise=True,
                           invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        compiled += 1

    # the worker's interpreter
    (dest / "bin").mkdir()
    launcher = dest / "bin" / f"python{version}"
    _compile_launcher(launcher, libpython_dst, compiler)

    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    return {"version": version, "libpython": f"lib/{libpython.name}", "home": ".",
            "site_packages": f"lib/python{version}/site-packages", "worker": f"bin/python{version}",
            "preload": preload, "glibc": "%d.%d" % newest_glibc, "bytes": size,
            "pyc": compiled, "scipy": sorted(scipy_parts)}


def runtime_summary(info: dict) -> str:
    return (f"resources/{RUNTIME_DIR}/ (CPython {sys.version.split()[0]}, numpy, scipy "
            f"[{', '.join(p for p in info['scipy'] if not p.startswith('_'))}], numba, llvmlite; "
            f"{info['bytes'] / 1e6:.0f} MB unpacked, {info['pyc']} .pyc; needs glibc >= {info['glibc']}"
            + (f"; bundles {', '.join(Path(p).name for p in info['preload'])}" if info["preload"] else "")
            + ")")


def stage_runtime(traced: set, compiler: str, tmp: Path) -> tuple:
    """(the runtime folder, its info) staged in ``tmp``."""
    dest = Path(tmp) / RUNTIME_DIR
    info = assemble_runtime(dest, traced, compiler)
    return dest, info


if __name__ == "__main__":      # a quick look: python -m fmu_wheelset.packaging.standalone OUT
    out = Path(sys.argv[1])
    root = Path(__file__).resolve().parents[2]
    traced = static_trace(root)
    with tempfile.TemporaryDirectory() as tmp:
        folder, info = stage_runtime(traced, "cc", Path(tmp))
        if out.exists():
            shutil.rmtree(out)
        shutil.copytree(folder, out)
    print(runtime_summary(info))
