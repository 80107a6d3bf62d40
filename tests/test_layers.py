"""The import graph of the project's three packages, read from their source
with the standard library's `ast` (nothing is imported, so nothing compiles).

The packages depend one way: solver <- fmu_wheelset <- cosim. The solver is the
core and imports neither of the others; fmu_wheelset (the FMU, its build, the
command line, sweeps, validation) uses the solver; cosim (the masters that
couple several FMUs or the FMU and an OpenSees track) uses both. The parts of
fmu_wheelset import in the order of FMU_WHEELSET_PARTS. Inside the
solver the modules form layers, written down below as SOLVER_LAYERS; no module
imports one of a later layer or one listed after it. docs/ARCHITECTURE.md
explains the layers.

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

# The solver's modules in layer order, as the code imports them today. A module
# may import (at module level or inside a function) only modules listed before
# it, in its own layer or an earlier one. "__init__" is the package itself.
SOLVER_LAYERS = (
    ("support: errors, the numba cache check, the packaged data files, the array layout, "
     "the registries and the code they generate",
     ("errors", "numba_cache", "__init__", "data_files", "layout", "codegen", "registry")),
    ("inputs: wheel and rail profiles, track layout, track excitation",
     ("profiles", "profiles.profile", "profiles.simpack", "profiles.files", "profiles.definitions",
      "profiles.builtins", "track", "track.sections", "track.files", "track.alignment",
      "track.builtins", "track.excitation", "track.lumped_rails")),
    ("contact geometry: contact point search, its table, its analysis over y",
     ("contact", "contact.geometry", "contact.geometry.setup", "contact.geometry.distance",
      "contact.geometry.search", "contact.geometry.update", "contact.geometry.tracked",
      "contact.geometry.points", "contact.geometry.reference", "contact.geometry.table",
      "contact.geometry.modes", "contact.geometry.analysis")),
    ("contact forces: normal problem, creep models, Kalker's exact theory",
     ("contact.normal", "contact.normal.hertz", "contact.normal.patch_curvature",
      "contact.normal.load_sharing",
      "contact.normal.boundary_element", "contact.normal.kik_piotrowski",
      "contact.normal.contact_plane", "contact.creep", "contact.creep.inputs",
      "contact.creep.kalker", "contact.creep.saturated", "contact.creep.fastsim",
      "contact.creep.fastrip", "contact.creep.models", "contact.creep.forces",
      "contact.creep.exact_rolling")),
    ("wheelset dynamics: right-hand side, step checks, outputs, running safety, integrators",
     ("dynamics", "dynamics.suspension", "dynamics.rhs", "dynamics.acceptance", "dynamics.outputs",
      "dynamics.derailment",
      "dynamics.integrators", "dynamics.integrators.stages", "dynamics.integrators.fixed",
      "dynamics.integrators.embedded", "dynamics.integrators.rosenbrock",
      "dynamics.integrators.methods", "dynamics.integrators.step")),
    ("the wheelset model: parameters, outputs, the compiled communication step, the Python object",
     ("model.parameters", "model.outputs", "model.fast_step", "model.wheelset", "model")),
    ("uses of the model: scenarios, linear and nonlinear stability",
     ("scenarios", "stability", "contact_modes")),
)

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
# validation cases of the vehicle and of the flexible track run the co-simulation
# masters, which themselves use fmu_wheelset (cosim.vehicle.stability runs
# fmu_wheelset.sweeps.sweep). A lazy import there keeps the packages in one order at
# import time; the FMU's own modules (slave, variables, ...) never import cosim,
# which is not bundled in the FMU.
# The vehicle-bodies FMU (fmu_wheelset.vehicle_fmu) packages cosim's bodies as an
# FMU and writes the SSP system around them: it reads cosim's vehicle as the
# commands do.
COSIM_USERS_IN_FMU_WHEELSET = ("fmu_wheelset.cli.commands", "fmu_wheelset.validation",
                               "fmu_wheelset.vehicle_fmu")

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
    "cache", "presets", "adapter", "core_loader", "feedthrough", "registries"))

# The parts of fmu_wheelset in import order: a module imports (at any level) only
# modules of its own part or of one listed before it. A module belongs to the
# longest prefix that names it; "fmu_wheelset" is the package itself. cli.args
# (argument types and input checks) comes before sweeps, which check a plan's
# names with it; the rest of cli (main, commands) comes last.
FMU_WHEELSET_PARTS = ("fmu_wheelset", "fmu_wheelset.fmu", "fmu_wheelset.plots",
                      "fmu_wheelset.packaging", "fmu_wheelset.vehicle_fmu", "fmu_wheelset.cli.args",
                      "fmu_wheelset.sweeps", "fmu_wheelset.validation", "fmu_wheelset.cli")


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
    assert any(t == "fmu_wheelset.sweeps.sweep" and not top
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


def fmu_wheelset_part(module: str) -> int:
    """The position in FMU_WHEELSET_PARTS of the longest prefix naming `module`."""
    found = [i for i, part in enumerate(FMU_WHEELSET_PARTS)
             if module == part or module.startswith(part + ".")]
    assert found, f"place {module} in FMU_WHEELSET_PARTS"
    return max(found, key=lambda i: len(FMU_WHEELSET_PARTS[i]))


def test_fmu_wheelset_parts_import_in_order():
    wrong = [(m, t, line) for m in MODULES if package_of(m) == "fmu_wheelset"
             for t, line, _ in GRAPH[m] if package_of(t) == "fmu_wheelset"
             if fmu_wheelset_part(t) > fmu_wheelset_part(m)]
    assert wrong == []


def test_the_solver_layer_table_lists_every_solver_module_once():
    listed = [name for _, names in SOLVER_LAYERS for name in names]
    assert len(listed) == len(set(listed))
    present = {"__init__" if m == "solver" else m.split(".", 1)[1]
               for m in MODULES if package_of(m) == "solver"}
    assert set(listed) == present, "place a new solver module in SOLVER_LAYERS"


def test_each_solver_module_imports_only_modules_listed_before_it():
    order = [name for _, names in SOLVER_LAYERS for name in names]
    position = {("solver" if n == "__init__" else f"solver.{n}"): i for i, n in enumerate(order)}
    wrong = [(m, t, line) for m in position for t, line, _ in GRAPH[m]
             if t in position and position[t] >= position[m]]
    assert wrong == []


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
