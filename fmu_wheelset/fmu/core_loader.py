"""Importing the core bundled in the FMU, with a stable numba cache.

numba's on-disk cache is keyed by a module's source path and records its
name, so the slave imports the solver the FMU carries from a verified copy in
a per-user cache folder (fmu_wheelset/fmu/cache.py) under a name fixed by its
sources: the same sources keep one path and one name across extractions and
builds. Bundled in the FMU beside the slave
(``resources/wheelset_fmu_core_loader.py``, or ``core_loader.py`` in the native
front end's package); imports nothing but the standard library and the FMU's
own modules at module level.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import threading
from typing import Optional

if __package__:
    from . import cache as fmu_cache
else:
    import wheelset_fmu_cache as fmu_cache

SOURCE_PACKAGE = "fmu_wheelset.fmu"     # this package in the source tree (not the FMU's)

# One lock for the whole process, shared by every build of the FMU loaded in it
# and by the native front end's bootstrap (fmu_wheelset/fmu/native/
# fmi2_frontend_python.c, which takes the same object): the core's first import
# (numba, scipy, the bundled solver) runs in one thread at a time. numba's
# modules import each other, and two host threads instantiating at once would
# otherwise import them side by side: one then sees a partly initialised
# module ("ImportError: cannot import name ... (most likely due to a circular
# import)"), and the other finds the bundled solver registered in sys.modules
# but not yet run. Kept on the sys module because each build has its own copy
# of this file.
IMPORT_LOCK = sys.__dict__.setdefault("_wheelset_fmu_import_lock", threading.RLock())


def source_digest(root: str) -> str:
    """First 16 hex digits of the sha256 of the sources under root (fmu_wheelset/fmu/cache.py)."""
    return fmu_cache.tree_digest(root)[:fmu_cache.DIGEST_CHARS]


cache_root = fmu_cache.cache_root


def stable_solver_dir(resources: str) -> Optional[str]:
    """The verified cache copy of resources/solver to put on sys.path, or None
    (fmu_wheelset/fmu/cache.py says what is checked and why)."""
    return fmu_cache.stable_solver_dir(resources)[0]


def import_core(resources: Optional[str]):
    """Import the core's public interface, the package solver.model, from the
    verified cache copy of the bundled solver when there is one
    (fmu_wheelset/fmu/cache.py). Returns (core, where_from): `core` is that
    package (WheelsetModel, WheelsetParameters, layout, fast_step, ...).

    Inside the FMU's own package (the native front end imports this file as
    ``wheelset_fmu_<build hash>.core_loader``) the bundled solver is imported as
    ``wheelset_solver_<hash of its sources>``, by file location, from the
    verified cache copy when there is one: nothing on sys.path is used or
    changed. numba's on-disk cache is keyed by the source path and records the
    module's name, so the same solver sources keep one path AND one name
    across builds (the copy lives under its own "native-solver" cache name,
    never shared with pythonfmu's top-level ``solver`` layout). Thread-safe:
    IMPORT_LOCK."""
    with IMPORT_LOCK:
        if __package__ and __package__ != SOURCE_PACKAGE:
            return _import_native_core()
        return _import_top_level_core(resources)


def _import_top_level_core(resources: Optional[str]):
    note = ""
    if "solver" not in sys.modules and resources:
        stable, note = fmu_cache.stable_solver_dir(resources)
        if stable is not None and stable not in sys.path:
            sys.path.insert(0, stable)
    core = importlib.import_module("solver.model")
    return core, _solver_folder(core) + (f" ({note})" if note else "")


def _solver_folder(core) -> str:
    """The folder the solver package was imported from (the one above solver/)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(core.__file__))))


def numba_cpu_signature() -> list:
    """What numba keys its cache entries on for this process's CPU: its codegen's
    magic tuple (LLVM target triple, CPU name, CPU feature string), as strings."""
    from numba.core.registry import cpu_target
    return [str(x) for x in cpu_target.target_context.codegen().magic_tuple()]


_NATIVE_CORE: list = []     # (core, where), once per process and build


def _import_native_core():
    """Once per process: later instances (perhaps of another extraction of this
    build, the first one deleted, as fmpy.simulate_fmu does) reuse the modules."""
    if not _NATIVE_CORE:
        _NATIVE_CORE.append(_load_native_core())
    return _NATIVE_CORE[0]


def _load_native_core():
    package_dir = os.path.dirname(os.path.abspath(__file__))
    bundled = os.path.join(package_dir, "solver")
    name = f"wheelset_solver_{source_digest(bundled)}"
    note = ""
    if name not in sys.modules:
        shipped = os.path.join(os.path.dirname(package_dir), fmu_cache.SHIPPED_CACHE_DIR)
        stable, note = fmu_cache.stable_solver_dir(
            package_dir, kind="native-solver",
            shipped=(shipped, numba_cpu_signature()) if os.path.isdir(shipped) else None)
        where = os.path.join(stable, "solver") if stable is not None else bundled
        fmu_cache.import_package_as(name, where)
    core = importlib.import_module(f"{name}.model")
    return core, _solver_folder(core) + (f" ({note})" if note else "")
