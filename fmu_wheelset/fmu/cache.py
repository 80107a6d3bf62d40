"""The FMU's on-disk cache of the bundled solver, trusted only after checks
(docs/SECURITY.md).

numba's on-disk cache is keyed by the source file's path and mtime; a fresh FMU
extraction has a new path each time, so importing the solver from it would
compile every kernel again (10-30 s). The FMU therefore copies its bundled
``resources/solver`` once to ``<cache>/solver-<digest>/solver`` and imports it
from there. Whatever is imported from that folder runs in the host process, so
the folder is used only when

* the cache root is a real directory (not a symlink) owned by this user with
  no permission for group or others (mode 0700; created so when missing; the
  default folder, when it is this user's, is made 0700 if an older version
  left it open; a folder named by WHEELSET_FMU_CACHE is never changed, only
  refused);
* every directory and file below the entry is owned by this user, is a real
  directory or a regular file (no symlinks, FIFOs, devices) and is not
  writable by group or others;
* the sha256 of the entry's sources equals that of the bundled sources (the
  name carries the first 16 hex digits; the check uses all 64).

An entry that fails the content or the file checks is removed and copied again
from the FMU's resources; a cache root that fails its checks is not used at all
(the solver is then imported from the resources: correct, only slower). The
reason is returned so that the slave can log it.

The compiled files numba and Python keep in ``__pycache__`` (``.nbi`` index
files are pickles, ``.pyc`` files are code) are not covered by the digest:
they are trusted because only this user can write below a verified 0700
directory. That is the reason the ownership and mode checks exist.

Standard library only: bundled into the FMU as ``resources/wheelset_fmu_cache.py``.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from typing import Optional, Tuple

COMPILED_SUFFIXES = (".pyc", ".nbi", ".nbc")
DIGEST_CHARS = 16            # hex digits of the digest in an entry's name


def cache_root() -> str:
    """Per-user cache directory of the FMU: $WHEELSET_FMU_CACHE, else
    $XDG_CACHE_HOME/wheelset-fmu, else ~/.cache/wheelset-fmu
    (WHEELSET_FMU_CACHE=off: no cache copy, import the solver from the resources)."""
    explicit = os.environ.get("WHEELSET_FMU_CACHE")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "wheelset-fmu")


def tree_digest(root: str) -> str:
    """Full sha256 (hex) of the relative paths and contents of the source and data
    files under root (``__pycache__`` and compiled files left out)."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(COMPILED_SUFFIXES):
                continue
            path = os.path.join(dirpath, name)
            h.update(os.path.relpath(path, root).replace(os.sep, "/").encode())
            h.update(b"\0")
            with open(path, "rb") as f:
                h.update(f.read())
            h.update(b"\0")
    return h.hexdigest()


def _owner_problem(st: os.stat_result, path: str) -> Optional[str]:
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"{path} is owned by uid {st.st_uid}, not by this user (uid {os.getuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path} is writable by group or others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def root_problem(root: str) -> Optional[str]:
    """Why `root` may not hold the cache (None: it may). Creates it (0700) if missing."""
    try:
        st = os.lstat(root)
    except FileNotFoundError:
        try:
            os.makedirs(root, mode=0o700)
            os.chmod(root, 0o700)
            st = os.lstat(root)
        except OSError as exc:
            return f"cannot create {root} ({exc.strerror})"
    except OSError as exc:
        return f"cannot inspect {root} ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return f"{root} is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return f"{root} is not a directory"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"{root} is owned by uid {st.st_uid}, not by this user (uid {os.getuid()})"
    if st.st_mode & 0o077:
        if not os.environ.get("WHEELSET_FMU_CACHE"):
            # the default folder, ours, made by an older version with the umask's
            # mode: made private (its entries are checked one by one anyway)
            try:
                os.chmod(root, 0o700)
                return None
            except OSError:
                pass
        return (f"{root} has mode {stat.S_IMODE(st.st_mode):o}; the cache must be private "
                "(mode 700)")
    return None


def tree_problem(root: str) -> Optional[str]:
    """Why the tree at `root` may not be imported (None: it may): a symbolic
    link, a special file, or an entry not owned by this user / writable by others."""
    try:
        st = os.lstat(root)
    except OSError as exc:
        return f"cannot inspect {root} ({exc.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return f"{root} is not a directory"
    problem = _owner_problem(st, root)
    if problem:
        return problem
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except OSError as exc:
                return f"cannot inspect {path} ({exc.strerror})"
            if stat.S_ISLNK(st.st_mode):
                return f"{path} is a symbolic link"
            if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
                return f"{path} is not a regular file"
            problem = _owner_problem(st, path)
            if problem:
                return problem
    return None


def _entry_problem(entry: str, digest: str) -> Optional[str]:
    problem = tree_problem(entry)
    if problem:
        return problem
    solver = os.path.join(entry, "solver")
    if not os.path.isfile(os.path.join(solver, "__init__.py")):
        return f"{entry} holds no solver package"
    try:
        found = tree_digest(solver)
    except OSError as exc:
        return f"cannot read {solver} ({exc.strerror})"
    if found != digest:
        return f"{solver}: content sha256 {found[:DIGEST_CHARS]}... differs from its name"
    return None


def stable_solver_dir(resources: str, kind: str = "solver",
                      shipped: Optional[Tuple[str, list]] = None) -> Tuple[Optional[str], str]:
    """(directory to put on sys.path, note): the verified cache copy of
    resources/solver, created or repaired if needed; (None, reason) when the
    cache is switched off or cannot be trusted (then import from the resources).
    ``kind`` names the import layout: "solver" (the top-level ``solver`` of
    pythonfmu's binary) or "native-solver" (``wheelset_solver_<hash>`` of the
    native front end); numba's cache records module names, so they never share.
    ``shipped``: (folder, this process's numba CPU signature) of the numba cache
    the build prepared (``resources/wheelset_numba_cache``): installed into a new
    entry when it fits (``install_shipped_numba_cache``)."""
    src = os.path.join(resources, "solver")
    if os.environ.get("WHEELSET_FMU_CACHE", "").lower() == "off":
        return None, "cache switched off (WHEELSET_FMU_CACHE=off)"
    if not os.path.isfile(os.path.join(src, "__init__.py")):
        return None, "no bundled solver"
    root = cache_root()
    problem = root_problem(root)
    if problem:
        return None, f"cache not used: {problem}"
    try:
        digest = tree_digest(src)
    except OSError as exc:
        return None, f"cannot read the bundled solver ({exc.strerror})"
    target = os.path.join(root, f"{kind}-{digest[:DIGEST_CHARS]}")
    note = "cache copy verified"
    if os.path.lexists(target):
        problem = _entry_problem(target, digest)
        if problem is None:
            return target, note
        note = f"cache copy rebuilt ({problem})"
        if not _remove(target, root):
            return None, f"cache not used: cannot remove the bad copy {target}"
    else:
        note = "cache copy made"
    try:
        tmp = tempfile.mkdtemp(prefix=f"{kind}-{digest[:DIGEST_CHARS]}.tmp-", dir=root)
        shutil.copytree(src, os.path.join(tmp, "solver"), symlinks=False, ignore=_not_copied)
        if shipped is not None:
            note += "".join(f"; {n}" for n in _TARGET_NOTE)
            note += "; " + install_shipped_numba_cache(shipped[0], os.path.join(tmp, "solver"),
                                                       shipped[1], digest)
        for dirpath, dirnames, filenames in os.walk(tmp):
            for name in filenames:
                os.chmod(os.path.join(dirpath, name), 0o600)
            for name in dirnames:
                os.chmod(os.path.join(dirpath, name), 0o700)
        try:
            os.rename(tmp, target)          # atomic; another process may have won
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
    except OSError as exc:
        return None, f"cache not used: cannot copy the solver ({exc.strerror})"
    problem = _entry_problem(target, digest)
    if problem is None:
        return target, note
    return None, f"cache not used: {problem}"


def import_package_as(name: str, folder: str):
    """Import the package in `folder` (its __init__.py, its submodules from the
    same folder) as module `name` (a verified solver copy under the name of its
    digest); nothing of it stays in sys.modules if its import fails."""
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(folder, "__init__.py"), submodule_search_locations=[folder])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _not_copied(directory: str, names: list) -> list:
    """What of the bundled solver stays out of its cache copy: numba's files
    (the shipped cache is installed from its own folder, checked) and any byte
    code but this interpreter's own .pyc files in __pycache__ (a self-contained
    FMU ships them, unchecked-hash, beside the sources they were made from)."""
    import sys
    own = f".{sys.implementation.cache_tag}.pyc"
    if os.path.basename(directory) == "__pycache__":
        return [n for n in names if not n.endswith(own) or os.path.isdir(os.path.join(directory, n))]
    return [n for n in names if n.endswith(COMPILED_SUFFIXES)]


def _remove(path: str, root: str) -> bool:
    """Remove a bad entry (a link itself, never what it points to)."""
    try:
        if os.path.islink(path) or not os.path.isdir(path):
            os.unlink(path)
        else:
            aside = tempfile.mkdtemp(prefix="bad-", dir=root)
            os.rename(path, os.path.join(aside, "entry"))
            shutil.rmtree(aside, ignore_errors=True)
        return not os.path.lexists(path)
    except OSError:
        return False


# ---------------------------------------------------------------------------
# the numba cache prepared at build time and shipped inside the FMU
# ---------------------------------------------------------------------------
SHIPPED_CACHE_DIR = "wheelset_numba_cache"     # resources/<this>/: manifest + files
SHIPPED_MANIFEST = "manifest.json"
SHIPPED_FORMAT = "wheelset-numba-cache"
SHIPPED_VERSION = 1
# a cache per numba target, in these sub-folders of SHIPPED_CACHE_DIR: code for the
# build machine's CPU (used when this CPU is the same) and for a generic x86-64
# (NUMBA_CPU_NAME=generic: baseline instructions, fits any x86-64 CPU)
BUILD_CPU_VARIANT = "build-cpu"
GENERIC_VARIANT = "generic"
SHIPPED_VARIANTS = (BUILD_CPU_VARIANT, GENERIC_VARIANT)
SHIPPED_MAX_FILES = 2000
SHIPPED_MAX_BYTES = 200 * 1024 * 1024
_SHIPPED_NAME = re.compile(r"^(?:[A-Za-z0-9_]+/)*__pycache__/[A-Za-z0-9_.\-]+\.(?:nbi|nbc)$")


def read_shipped_manifest(shipped_dir: str) -> Tuple[Optional[dict], str]:
    """(manifest, "") or (None, why not): resources/wheelset_numba_cache/manifest.json,
    every key and type checked (it names the files to copy, so no path may leave
    the solver copy's ``__pycache__`` folders)."""
    path = os.path.join(shipped_dir, SHIPPED_MANIFEST)
    try:
        with open(path, "rb") as f:
            raw = f.read(1024 * 1024 + 1)
    except FileNotFoundError:
        return None, "no numba cache shipped in the FMU"
    except OSError as exc:
        return None, f"cannot read {path} ({exc.strerror})"
    if len(raw) > 1024 * 1024:
        return None, f"{path} is larger than 1 MB"
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"{path} is not JSON ({exc})"
    expected = {"format": str, "version": int, "numba": str, "python": str, "cpu": list,
                "solver_sha256": str, "files": dict}
    if not isinstance(doc, dict) or set(doc) != set(expected):
        return None, f"{path}: keys {sorted(doc) if isinstance(doc, dict) else type(doc).__name__}, " \
                     f"expected {sorted(expected)}"
    for key, kind in expected.items():
        if not isinstance(doc[key], kind) or isinstance(doc[key], bool):
            return None, f"{path}: {key} is not a {kind.__name__}"
    if doc["format"] != SHIPPED_FORMAT or doc["version"] != SHIPPED_VERSION:
        return None, f"{path}: format {doc['format']!r} version {doc['version']}, " \
                     f"expected {SHIPPED_FORMAT!r} version {SHIPPED_VERSION}"
    if not all(isinstance(x, str) for x in doc["cpu"]):
        return None, f"{path}: cpu is not a list of strings"
    if len(doc["files"]) > SHIPPED_MAX_FILES:
        return None, f"{path}: more than {SHIPPED_MAX_FILES} files"
    for name, sha in doc["files"].items():
        if not _SHIPPED_NAME.match(name) or ".." in name.split("/"):
            return None, f"{path}: file name {name[:80]!r} is not a numba cache file"
        if not (isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{64}", sha)):
            return None, f"{path}: {name}: not a sha256"
    return doc, ""


def shipped_cache_problem(doc: dict, cpu: list, solver_digest: str) -> Optional[str]:
    """Why the shipped numba cache does not fit this process (None: it fits).
    Keyed by the sha256 of the WHOLE solver (a cached kernel that calls a kernel
    of another module is not invalidated by numba when that module changes),
    numba's version (its index format), the Python tag and the CPU (numba's
    codegen magic tuple: target triple, CPU name, CPU features)."""
    import sys
    python = f"{sys.implementation.cache_tag}"
    if doc["solver_sha256"] != solver_digest:
        return "made for other solver sources"
    if doc["python"] != python:
        return f"made for {doc['python']}, this is {python}"
    if list(doc["cpu"]) != list(cpu):
        made = " ".join(doc["cpu"][:2])
        here = " ".join(str(c) for c in cpu[:2])
        return f"made for CPU {made!r} (features differ)" if made == here \
            else f"made for CPU {made!r}, this is {here!r}"
    return None


def host_cpu_signature() -> list:
    """numba's codegen magic tuple (LLVM target triple, CPU name, CPU features)
    for this machine's own CPU, computed as numba's JIT codegen does but without
    creating it (its target is fixed once it exists)."""
    import llvmlite.binding as ll
    from numba.core.codegen import get_host_cpu_features
    return [str(ll.get_process_triple()), str(ll.get_host_cpu_name()), str(get_host_cpu_features())]


_TARGET_NOTE: list = []     # what choose_numba_target decided, for the log


def choose_numba_target(shipped_dir: str) -> str:
    """Before this interpreter compiles or loads anything with numba: its target.

    Called only in an interpreter the FMU started itself (a C host's embedded
    Python, the out-of-process worker), never in a host's own: numba's target is
    process-wide. numba compiles for this machine's CPU when it is the build
    machine's CPU (the shipped build-cpu cache then fits), else for a generic
    x86-64 (numba's config CPU_NAME "generic", no extra features: the shipped
    generic cache fits any x86-64 CPU). Set in numba's config module, not in
    os.environ (which would change the host process's environment). A
    NUMBA_CPU_NAME the user set is left alone. Returns a note for the log."""
    import sys
    if os.environ.get("NUMBA_CPU_NAME"):
        note = f"numba target {os.environ['NUMBA_CPU_NAME']!r} (NUMBA_CPU_NAME)"
    elif "numba.core.registry" in sys.modules and \
            "_toplevel_target_context" in vars(sys.modules["numba.core.registry"].cpu_target):
        note = "numba target: already chosen in this process"
    elif not os.path.isfile(os.path.join(shipped_dir, GENERIC_VARIANT, SHIPPED_MANIFEST)):
        note = "numba target: this CPU (no generic cache shipped)"
    else:
        doc, _ = read_shipped_manifest(os.path.join(shipped_dir, BUILD_CPU_VARIANT))
        here = host_cpu_signature()
        if doc is not None and list(doc["cpu"]) == here:
            note = f"numba target: this CPU ({here[1]}, the build machine's)"
        else:
            from numba.core import config
            config.CPU_NAME = "generic"
            config.CPU_FEATURES = ""
            note = f"numba target: generic x86-64 (this CPU {here[1]} is not the build machine's)"
    _TARGET_NOTE[:] = [note]
    return note


def install_shipped_numba_cache(shipped_dir: str, solver_copy: str, cpu: list,
                                solver_digest: str, numba_version: Optional[str] = None) -> str:
    """Copy the shipped numba cache files into a NEW (not yet visible) solver copy
    when a manifest fits this process and every file has its recorded sha256;
    all or nothing. ``shipped_dir`` holds one cache (a manifest.json) or one per
    target, in the fixed sub-folders SHIPPED_VARIANTS (the build's CPU and a
    generic x86-64): the one whose CPU signature equals ``cpu`` is installed.
    Returns a note for the log; never raises for a bad cache (numba then
    compiles, as without a shipped cache)."""
    if os.path.isfile(os.path.join(shipped_dir, SHIPPED_MANIFEST)):
        return _install_one_variant(shipped_dir, solver_copy, cpu, solver_digest, numba_version)
    reasons = []
    for variant in SHIPPED_VARIANTS:
        folder = os.path.join(shipped_dir, variant)
        if not os.path.isfile(os.path.join(folder, SHIPPED_MANIFEST)):
            continue
        doc, why = read_shipped_manifest(folder)
        if doc is not None and list(doc["cpu"]) != list(cpu):
            reasons.append(f"{variant}: made for CPU {' '.join(doc['cpu'][1:2])!r}")
            continue
        note = _install_one_variant(folder, solver_copy, cpu, solver_digest, numba_version)
        return note.replace("shipped numba cache", f"shipped numba cache ({variant})", 1)
    if not reasons:
        return "shipped numba cache not used: no numba cache shipped in the FMU"
    return (f"shipped numba cache not used: this process compiles for CPU "
            f"{' '.join(str(c) for c in cpu[1:2])!r} ({'; '.join(reasons)}); compiling")


def _install_one_variant(shipped_dir: str, solver_copy: str, cpu: list, solver_digest: str,
                         numba_version: Optional[str]) -> str:
    doc, why = read_shipped_manifest(shipped_dir)
    if doc is None:
        return f"shipped numba cache not used: {why}"
    if numba_version is None:
        try:
            import numba
            numba_version = numba.__version__
        except ImportError:
            return "shipped numba cache not used: numba is not installed"
    if doc["numba"] != numba_version:
        return f"shipped numba cache not used: made with numba {doc['numba']}, this is {numba_version}"
    problem = shipped_cache_problem(doc, cpu, solver_digest)
    if problem:
        return f"shipped numba cache not used: {problem}; compiling"
    blobs = {}
    total = 0
    for name, sha in doc["files"].items():
        path = os.path.join(shipped_dir, *name.split("/"))
        try:
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode):
                return f"shipped numba cache not used: {name} is not a regular file; compiling"
            total += st.st_size
            if total > SHIPPED_MAX_BYTES:
                return "shipped numba cache not used: larger than 200 MB; compiling"
            with open(path, "rb") as f:
                data = f.read()
        except OSError as exc:
            return f"shipped numba cache not used: cannot read {name} ({exc.strerror}); compiling"
        if hashlib.sha256(data).hexdigest() != sha:
            return f"shipped numba cache not used: {name} differs from its recorded sha256; compiling"
        blobs[name] = data
    try:
        for name, data in blobs.items():
            path = os.path.join(solver_copy, *name.split("/"))
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            with open(path, "xb") as f:
                f.write(data)
    except OSError as exc:
        return f"shipped numba cache not used: cannot write {exc.filename} ({exc.strerror}); compiling"
    return f"shipped numba cache installed ({len(blobs)} files)"
