"""The import graph of the project's three packages, read from their source
with the standard library's `ast` (nothing is imported, so nothing compiles).

The project's parts depend one way (PROJECT_PARTS): solver <- fmu_wheelset.fmu
<- cosim <- the rest of fmu_wheelset. The solver is the core and imports
nothing else; the FMU (fmu_wheelset/fmu) uses the solver; cosim (the masters
that couple several FMUs or the FMU and an OpenSees track) uses the solver and,
of fmu_wheelset, only the FMU's public interface (fmu/interface.py); the
command line, sweeps and validation use all of them. Inside the solver the
modules form layers of parts (subpackages or top-level modules), declared as
`LAYERS` in solver/__init__.py; no module imports one of a later part.
docs/ARCHITECTURE.md explains the layers.

What `ast` cannot see: `importlib.import_module` with a computed name. The FMU
side imports the solver that way on purpose (fmu_wheelset/fmu/slave.py imports the
solver bundled in the FMU under a name of its own), so those imports are not in
this graph; they follow the same one-way order.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("solver", "fmu_wheelset", "cosim")

def solver_layers() -> tuple:
    """The solver's layers as solver/__init__.py declares them (`LAYERS`), read
    with ast: (layer, its parts), a part a subpackage or a top-level module,
    "__init__" the package's own file."""
    tree = ast.parse((ROOT / "solver" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] == ["LAYERS"]:
            return ast.literal_eval(node.value)
    raise AssertionError("solver/__init__.py declares no LAYERS")


SOLVER_LAYERS = solver_layers()
SOLVER_PARTS = tuple(part for _, parts in SOLVER_LAYERS for part in parts)


# The modules of cosim in import order: the two subpackages are independent
# (neither imports the other), and inside each a module imports only modules
# listed before it, as their __init__.py docstrings say.
COSIM_ORDER = (
    "cosim", "cosim.fmpy_host",
    "cosim.vehicle", "cosim.vehicle.parameters", "cosim.vehicle.curve_layout",
    "cosim.vehicle.bodies", "cosim.vehicle.body_step", "cosim.vehicle.fmu_wheelsets", "cosim.vehicle.results",
    "cosim.vehicle.master", "cosim.vehicle.stability",
    "cosim.track", "cosim.track.parameters", "cosim.track.fe_model", "cosim.track.analytic",
    "cosim.track.newmark_kernel", "cosim.track.engines", "cosim.track.options",
    "cosim.track.rail_loads", "cosim.track.wheelset_fmu", "cosim.track.master",
)

# fmu_wheelset may import cosim only inside functions, and only in these
# subpackages: the commands `vehicle`, `stability` and `cosim-track` and the
# validation cases of the vehicle and of the flexible track run the
# co-simulation masters. A lazy import there keeps the packages in one order at
# import time; the FMU's own modules (slave, variables, ...) never import cosim,
# which is not bundled in the FMU.
# The vehicle-bodies FMU (fmu_wheelset.vehicle_fmu) packages cosim's bodies as an
# FMU and writes the SSP system around them: it reads cosim's vehicle as the
# commands do.
COSIM_USERS_IN_FMU_WHEELSET = ("fmu_wheelset.cli.commands", "fmu_wheelset.validation",
                               "fmu_wheelset.vehicle_fmu")

# What cosim may import of fmu_wheelset: the FMU's public interface for programs
# that drive it (fmu_wheelset/fmu/interface.py: the contact points per wheel,
# the FMI start values of core parameters), which imports only the FMU's table.
FMU_PUBLIC_INTERFACE = "fmu_wheelset.fmu.interface"

# The modules fmu_wheelset/packaging/build.py copies into the FMU's own package. They reach
# the solver only through importlib, as the copy bundled in the FMU under a name
# of its own (fmu_wheelset/fmu/core_loader.py, import_core), and import nothing else of
# the project by name: no `solver`, no `cosim`, no fmu_wheelset module that is
# not bundled. (`from .pythonfmu import ...` in slave.py names the copy of
# pythonfmu bundled beside them; in the source tree it resolves to the package
# fmu_wheelset.fmu.)
FMU_PACKAGE = "fmu_wheelset.fmu"
FMU_MODULES = tuple(f"{FMU_PACKAGE}.{name}" for name in (
    "slave", "slave_entry", "native_bridge", "native_worker", "variables", "fmu_state",
    "cache", "presets", "adapter", "core_loader", "instance", "registries"))

# The parts of the project in import order: a module imports (at any level) only
# modules of its own part or of one listed before it, so the picture of the
# imports has no arrow running back up. A module belongs to the longest prefix
# that names it; "fmu_wheelset" is that package's own file (it imports nothing).
# The FMU (fmu_wheelset.fmu) sits below cosim, whose masters drive it; the
# command line and the validation, which run those masters, sit above cosim.
# cli.args (argument types and input checks) comes before sweeps, which check a
# plan's names with it; the rest of cli (main, commands) comes last.
PROJECT_PARTS = ("fmu_wheelset", "solver", "fmu_wheelset.fmu", "cosim", "fmu_wheelset.plots",
                 "fmu_wheelset.packaging", "fmu_wheelset.vehicle_fmu", "fmu_wheelset.cli.args", "fmu_wheelset.sweeps",
                 "fmu_wheelset.validation", "fmu_wheelset.cli")


def module_files() -> dict[str, Path]:
    """{dotted module name: file} of every module of the three packages."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = module_files()


def _project_module(name: str) -> str | None:
    """The longest prefix of the dotted name that is a module of the packages."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        candidate = ".".join(parts[:n])
        if candidate in MODULES:
            return candidate
    return None


def imports_of(module: str) -> list[tuple[str, int, bool]]:
    """(imported project module, line, at module level) for every import
    statement of the module; an import inside a function or lambda body runs
    only when it is called and is not at module level."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []

    def targets(node) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        if node.level:
            base = package.split(".")
            base = base[:len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module
        # `from package import name`: the submodule when name is one
        return [f"{source}.{alias.name}" if f"{source}.{alias.name}" in MODULES else source
                for alias in node.names]

    def visit(node, module_level):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for name in targets(child):
                    target = _project_module(name)
                    if target is not None and target != module:
                        found.append((target, child.lineno, module_level))
            lazy = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(child, module_level and not lazy)

    visit(tree, True)
    return found


GRAPH = {module: imports_of(module) for module in MODULES}


def package_of(module: str) -> str:
    return module.split(".")[0]


def cycles(module_level_only: bool) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    edges = {m: sorted({t for t, _, top in GRAPH[m] if top or not module_level_only})
             for m in GRAPH}
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def connect(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            connect(v)
    return found


def test_the_graph_sees_imports_of_each_kind():
    """The reader finds a relative `from .x import` at module level and inside a
    function, an absolute import inside a function, and tells module level from
    function level: without this an empty graph would pass every test below."""
    assert any(t == "solver.contact.geometry.search" and top
               for t, _, top in GRAPH["solver.contact.geometry.update"])
    assert any(t == "solver.data_files" and not top for t, _, top in GRAPH["solver.profiles.files"])
    assert any(t == "solver.model.wheelset" and top for t, _, top in GRAPH["solver.model"])
    assert any(t == "cosim.vehicle.master" and not top
               for t, _, top in GRAPH["fmu_wheelset.cli.commands.vehicle"])
    assert any(t == FMU_PUBLIC_INTERFACE and not top
               for t, _, top in GRAPH["cosim.vehicle.stability"])


def test_no_cycle_at_module_level():
    assert cycles(module_level_only=True) == []


def test_no_cycle_even_through_function_level_imports():
    """Today no chain of imports, lazy ones included, leads back to its start."""
    assert cycles(module_level_only=False) == []


def test_the_solver_imports_neither_fmu_wheelset_nor_cosim():
    """The core is importable and testable without the FMU or the masters."""
    wrong = [(m, t, line) for m in MODULES if package_of(m) == "solver"
             for t, line, _ in GRAPH[m] if package_of(t) != "solver"]
    assert wrong == []


def test_fmu_wheelset_imports_cosim_only_lazily_in_the_commands_and_validation():
    wrong = [(m, t, line, "module level" if top else "in a function")
             for m in MODULES if package_of(m) == "fmu_wheelset"
             for t, line, top in GRAPH[m] if package_of(t) == "cosim"
             if top or not m.startswith(COSIM_USERS_IN_FMU_WHEELSET)]
    assert wrong == []


def test_the_fmus_own_modules_import_only_each_other():
    wrong = [(m, t, line) for m in FMU_MODULES for t, line, _ in GRAPH[m]
             if t not in FMU_MODULES and t != FMU_PACKAGE]
    assert wrong == []


def part_of(module: str, parts, qualify=lambda part: part, own_file=None) -> int | None:
    """The position in `parts` of the longest part naming `module` (the module
    itself or a package above it; the part `own_file` names its package's own
    file only); None if none does."""
    found = [i for i, part in enumerate(parts)
             if module == qualify(part)
             or (part != own_file and module.startswith(qualify(part) + "."))]
    return max(found, key=lambda i: len(qualify(parts[i]))) if found else None


def test_the_project_parts_import_in_order():
    """No arrow runs back up: solver <- fmu_wheelset.fmu <- cosim <- the rest of
    fmu_wheelset, each import to a part listed before its own (or its own)."""
    unplaced = [m for m in MODULES if part_of(m, PROJECT_PARTS, own_file="fmu_wheelset") is None]
    assert unplaced == [], "place these modules in PROJECT_PARTS"
    wrong = [(m, t, line) for m in MODULES for t, line, _ in GRAPH[m]
             if part_of(t, PROJECT_PARTS, own_file="fmu_wheelset")
             > part_of(m, PROJECT_PARTS, own_file="fmu_wheelset")]
    assert wrong == []


def test_cosim_imports_of_fmu_wheelset_only_the_fmus_public_interface():
    wrong = [(m, t, line) for m in MODULES if package_of(m) == "cosim"
             for t, line, _ in GRAPH[m] if package_of(t) == "fmu_wheelset"
             if t != FMU_PUBLIC_INTERFACE]
    assert wrong == []
    interface = {t for t, _, _ in GRAPH[FMU_PUBLIC_INTERFACE]
                 if package_of(t) != "solver"}
    assert interface <= set(FMU_MODULES), "the interface imports only the FMU's own modules"


def _solver_part(part: str) -> str:
    return "solver" if part == "__init__" else f"solver.{part}"


def test_the_solver_layer_table_places_every_solver_module_once():
    """Every part of solver/__init__.py's LAYERS names a module or subpackage that
    exists, once; every solver module falls under one part (by its package: a new
    module of an existing subpackage needs no entry)."""
    assert len(SOLVER_PARTS) == len(set(SOLVER_PARTS))
    assert all(_solver_part(p) in MODULES for p in SOLVER_PARTS), "a part that does not exist"
    unplaced = [m for m in MODULES if package_of(m) == "solver"
                and part_of(m, SOLVER_PARTS, _solver_part, "__init__") is None]
    assert unplaced == [], "place a new top-level solver module in solver/__init__.py LAYERS"


def test_each_solver_module_imports_only_its_own_part_or_earlier_ones():
    def position(m):
        return part_of(m, SOLVER_PARTS, _solver_part, "__init__")
    wrong = [(m, t, line) for m in MODULES if package_of(m) == "solver"
             for t, line, _ in GRAPH[m] if package_of(t) == "solver"
             if position(t) > position(m)]
    assert wrong == []


def test_architecture_md_shows_the_solver_layers_of_the_code():
    """docs/ARCHITECTURE.md's table of the solver's layers lists the parts of
    LAYERS, layer by layer, in order."""
    import re
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("## The layers of the solver", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|") for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| layer")]
    shown = tuple((row[1].strip(), tuple(re.findall(r"`([\w.]+)`", row[2]))) for row in rows)
    assert shown == SOLVER_LAYERS


def test_the_cosim_order_lists_every_cosim_module_once():
    assert len(COSIM_ORDER) == len(set(COSIM_ORDER))
    present = {m for m in MODULES if package_of(m) == "cosim"}
    assert set(COSIM_ORDER) == present, "place a new cosim module in COSIM_ORDER"


def test_each_cosim_module_imports_only_modules_listed_before_it():
    position = {m: i for i, m in enumerate(COSIM_ORDER)}
    wrong = [(m, t, line) for m in position for t, line, _ in GRAPH[m]
             if t in position and position[t] >= position[m]]
    assert wrong == []


def test_the_vehicle_and_the_track_do_not_import_each_other():
    wrong = [(m, t, line) for m in MODULES for t, line, _ in GRAPH[m]
             for a, b in (("cosim.vehicle", "cosim.track"), ("cosim.track", "cosim.vehicle"))
             if (m == a or m.startswith(a + ".")) and (t == b or t.startswith(b + "."))]
    assert wrong == []
