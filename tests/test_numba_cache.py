"""numba's cache in a checkout is cleared module by module (solver/numba_cache.py):
an edit clears the cached code of the edited module and of the modules that
import it, directly or not, and of no other."""
from __future__ import annotations

import shutil
from pathlib import Path

from solver import numba_cache

SOLVER = Path(numba_cache.SOLVER_DIR)


def _copy_of_the_solver(tmp_path: Path) -> Path:
    """A copy of the solver in a folder with a .git beside it (a checkout)."""
    shutil.copytree(SOLVER, tmp_path / "solver", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / ".git").mkdir()
    return tmp_path / "solver"


def _cached(root: Path, relative: str, function: str) -> Path:
    """A stand-in numba cache file of `function` of the module at `relative`."""
    path = root / relative
    folder = path.parent / "__pycache__"
    folder.mkdir(exist_ok=True)
    cached = folder / f"{path.stem}.{function}-1.py311.nbi"
    cached.write_bytes(b"index")
    return cached


def test_an_edit_to_a_creep_model_clears_its_importers_and_nothing_else(tmp_path):
    root = _copy_of_the_solver(tmp_path)
    numba_cache.clear_if_sources_changed(str(root))         # the first stamp
    kept = {name: _cached(root, name, "kernel") for name in (
        "contact/geometry/search.py", "contact/normal/hertz.py", "profiles/profile.py",
        "contact/creep/kalker.py", "track/alignment.py")}
    cleared = {name: _cached(root, name, "kernel") for name in (
        "contact/creep/fastsim.py", "contact/creep/models.py", "contact/creep/forces.py",
        "dynamics/rhs.py", "dynamics/integrators/step.py", "model/fast_step.py")}
    assert numba_cache.clear_if_sources_changed(str(root)) == []     # nothing changed
    fastsim = root / "contact" / "creep" / "fastsim.py"
    fastsim.write_text(fastsim.read_text(encoding="utf-8") + "\n# a one-line edit\n",
                       encoding="utf-8")
    changed = numba_cache.clear_if_sources_changed(str(root))
    assert "contact.creep.fastsim" in changed and "dynamics.rhs" in changed
    assert "contact.geometry.search" not in changed
    assert [n for n, p in cleared.items() if p.exists()] == []
    assert [n for n, p in kept.items() if not p.exists()] == []
    # the dispatch the creep registry generates is cached under forces' stem
    # (solver/codegen.py): cleared with it
    assert numba_cache.clear_if_sources_changed(str(root)) == []


def test_the_digest_covers_imports_through_other_modules():
    """model.fast_step reaches the creep models only through the dynamics: its
    digest depends on theirs (module_digests, read from the real solver)."""
    modules = numba_cache.module_files()
    assert {"contact.creep.fastsim", "dynamics.rhs", "model.fast_step", ""} <= set(modules)
    imports = numba_cache.imports_of("model.fast_step", modules["model.fast_step"],
                                   Path(modules["model.fast_step"]).read_bytes(), modules)
    assert "layout" in imports and "contact.creep.fastsim" not in imports


def test_an_installed_copy_is_left_alone(tmp_path):
    shutil.copytree(SOLVER, tmp_path / "solver", ignore=shutil.ignore_patterns("__pycache__"))
    cached = _cached(tmp_path / "solver", "dynamics/rhs.py", "kernel")
    assert numba_cache.clear_if_sources_changed(str(tmp_path / "solver")) == []
    assert cached.exists()
