"""numba's on-disk cache in a development checkout: cleared when any solver
source changes.

numba keys each cached function on its own source file's path and mtime only.
A kernel that calls (and so compiles in) functions of another module keeps its
cached machine code when that other module is edited: the next run would
silently execute the old code (seen here: a step kernel of fast_step.py kept
running the integrator of integrate.py from before an edit). In a git checkout
(where sources are edited) `clear_if_sources_changed` therefore keeps the
sha256 of all of the solver's sources beside the cache and removes every
numba cache file of the solver when it differs, so that everything compiles
from the current sources. Installed copies and the FMU's verified copy (no
.git above them; the FMU keys its whole copy on this digest already,
fmu_wheelset/cache.py) are left alone.
"""

from __future__ import annotations

import hashlib
import os


SOLVER_DIR = os.path.dirname(os.path.abspath(__file__))
STAMP_NAME = "solver-sources.sha256"
NUMBA_SUFFIXES = (".nbi", ".nbc")


def _in_git_checkout(path: str) -> bool:
    parent = os.path.dirname(path)
    return os.path.isdir(os.path.join(parent, ".git")) or os.path.isfile(os.path.join(parent, ".git"))


def sources_digest(root: str = SOLVER_DIR) -> str:
    """sha256 over the relative path and bytes of every .py file below root."""
    digest = hashlib.sha256()
    for folder, dirs, files in sorted(os.walk(root)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                digest.update(os.path.relpath(path, root).encode() + b"\0")
                with open(path, "rb") as f:
                    digest.update(f.read())
    return digest.hexdigest()


def clear_if_sources_changed(root: str = SOLVER_DIR) -> bool:
    """In a git checkout: remove the solver's numba cache files if any source
    changed since they were written. Returns True if it removed them. Never
    raises (a read-only checkout, a race with another process: the cache is
    then left as it is)."""
    if not _in_git_checkout(root):
        return False
    try:
        digest = sources_digest(root)
        stamp = os.path.join(root, "__pycache__", STAMP_NAME)
        try:
            with open(stamp, encoding="ascii") as f:
                if f.read().strip() == digest:
                    return False
        except OSError:
            pass
        for folder, dirs, files in os.walk(root):
            if os.path.basename(folder) == "__pycache__":
                for name in files:
                    if name.endswith(NUMBA_SUFFIXES):
                        os.remove(os.path.join(folder, name))
        os.makedirs(os.path.dirname(stamp), exist_ok=True)
        with open(stamp, "w", encoding="ascii") as f:
            f.write(digest + "\n")
        return True
    except OSError:
        return False
