"""numba's on-disk cache in a development checkout: cleared module by module,
for the modules whose code or whose imports' code changed.

numba keys each cached function on its own source file's path and mtime only.
A kernel that calls (and so compiles in) functions of another module keeps its
cached machine code when that other module is edited: the next run would
silently execute the old code (seen here: a step kernel kept running the
integrator from before an edit). A numba function can call only what its
module imports (at module level: numba compiles no import statement), so the
code compiled into a module's cached functions is that of the module and of
the solver modules it imports, directly or through others.

In a git checkout (where sources are edited) `clear_if_sources_changed`
therefore keeps, beside the cache, each solver module's digest over its own
source and the digests of the solver modules it imports (read with `ast`,
nothing imported), and removes the numba cache files of exactly the modules
whose digest differs: an edit to a creep model clears the caches of the creep
model, of the modules that import it (the registry, the dispatch, the
right-hand side, the integrators, the step) and of nothing else (the contact
geometry, the profiles, the track keep theirs). Imports inside functions count
too (a module's digest covers every solver module it names), which clears a
few caches more than needed but never too few. Installed copies and the FMU's
verified copy (no .git above them; the FMU keys its whole copy on the digest
of all its sources already, fmu_wheelset/fmu/cache.py) are left alone.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os

SOLVER_DIR = os.path.dirname(os.path.abspath(__file__))
STAMP_NAME = "solver-modules.json"
NUMBA_SUFFIXES = (".nbi", ".nbc")


def _in_git_checkout(path: str) -> bool:
    parent = os.path.dirname(path)
    return os.path.isdir(os.path.join(parent, ".git")) or os.path.isfile(os.path.join(parent, ".git"))


def module_files(root: str = SOLVER_DIR) -> dict:
    """{dotted name inside the package ("" for the package itself,
    "contact.creep.fastsim"): path} of every .py file below root."""
    found = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                parts = os.path.relpath(os.path.join(folder, name), root)[:-3].split(os.sep)
                if parts[-1] == "__init__":
                    parts.pop()
                found[".".join(parts)] = os.path.join(folder, name)
    return found


def imports_of(module: str, path: str, source: bytes, modules: dict) -> set:
    """The solver modules `module` imports (relative imports, at any level)."""
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError:
        return set()
    is_package = os.path.basename(path) == "__init__.py"
    package = module.split(".") if module else []
    if not is_package:
        package = package[:-1]
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not node.level:
            continue
        base = package[:len(package) - (node.level - 1)] if node.level > 1 else package
        source_name = ".".join(base + ([node.module] if node.module else []))
        for alias in node.names:
            for candidate in (f"{source_name}.{alias.name}".lstrip("."), source_name):
                if candidate in modules:
                    found.add(candidate)
                    break
    found.discard(module)
    return found


def module_digests(root: str = SOLVER_DIR) -> dict:
    """{module: sha256 over its own source and the digests of the solver modules
    it imports, transitively}; modules on an import cycle share their sources."""
    modules = module_files(root)
    own, edges = {}, {}
    for module, path in modules.items():
        with open(path, "rb") as f:
            source = f.read()
        own[module] = hashlib.sha256(source).hexdigest()
        edges[module] = imports_of(module, path, source, modules)
    digests = {}

    def closure(module, seen):
        if module in digests:
            return digests[module]
        if module in seen:              # a cycle: its own source stands for it
            return own[module]
        seen = seen | {module}
        h = hashlib.sha256(own[module].encode())
        for dependency in sorted(edges[module]):
            h.update(dependency.encode() + b"\0" + closure(dependency, seen).encode())
        digests[module] = h.hexdigest()
        return digests[module]

    for module in modules:
        closure(module, frozenset())
    return digests


def _cache_files(root: str, module: str, path: str) -> list:
    """The numba cache files of one module: __pycache__/<file stem>.*.nbi/.nbc
    beside it (functions the module generates from a table are cached under its
    stem too: solver/codegen.py)."""
    folder = os.path.join(os.path.dirname(path), "__pycache__")
    stem = os.path.splitext(os.path.basename(path))[0] + "."
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names
            if n.startswith(stem) and n.endswith(NUMBA_SUFFIXES)]


def clear_if_sources_changed(root: str = SOLVER_DIR) -> list:
    """In a git checkout: remove the numba cache files of every solver module
    whose digest (module_digests) changed since they were written. Returns the
    modules cleared. Never raises (a read-only checkout, a race with another
    process: the cache is then left as it is)."""
    if not _in_git_checkout(root):
        return []
    try:
        digests = module_digests(root)
        stamp = os.path.join(root, "__pycache__", STAMP_NAME)
        try:
            with open(stamp, encoding="utf-8") as f:
                recorded = json.load(f)
            if not isinstance(recorded, dict):
                recorded = {}
        except (OSError, ValueError):
            recorded = {}
        if recorded == digests:
            return []
        files = module_files(root)
        changed = sorted(m for m, d in digests.items() if recorded.get(m) != d)
        for module in changed:
            for path in _cache_files(root, module, files[module]):
                os.remove(path)
        os.makedirs(os.path.dirname(stamp), exist_ok=True)
        with open(stamp + ".tmp", "w", encoding="utf-8") as f:
            json.dump(digests, f, indent=0, sort_keys=True)
        os.replace(stamp + ".tmp", stamp)
        return changed
    except OSError:
        return []
