"""The FMU's on-disk cache of the bundled solver, trusted only after checks
(issue 18 item 2, docs/SECURITY.md).

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
import os
import shutil
import stat
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


def stable_solver_dir(resources: str, kind: str = "solver") -> Tuple[Optional[str], str]:
    """(directory to put on sys.path, note): the verified cache copy of
    resources/solver, created or repaired if needed; (None, reason) when the
    cache is switched off or cannot be trusted (then import from the resources).
    ``kind`` names the import layout: "solver" (the top-level ``solver`` of
    pythonfmu's binary) or "native-solver" (``wheelset_solver_<hash>`` of the
    native front end); numba's cache records module names, so they never share."""
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
    try:
        tmp = tempfile.mkdtemp(prefix=f"{kind}-{digest[:DIGEST_CHARS]}.tmp-", dir=root)
        shutil.copytree(src, os.path.join(tmp, "solver"), symlinks=False,
                        ignore=shutil.ignore_patterns("__pycache__", *("*" + s for s in COMPILED_SUFFIXES)))
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
