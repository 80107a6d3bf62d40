"""The FMU's solver cache is used only when it can be trusted
(fmu_wheelset/fmu/cache.py, docs/SECURITY.md).

Before: any ``<cache>/solver-<hash>`` folder holding an ``__init__.py`` was put on
sys.path and imported, whatever its content, owner or mode. Now the folder
returned by ``stable_solver_dir`` (the only one ``import_core`` puts on
sys.path) always holds exactly the bundled sources, in a private folder of this
user; a planted, tampered, half-written or linked entry is replaced, and a
cache root that is shared, a link or someone else's is not used at all.
"""
from __future__ import annotations

import os
import shutil
import stat

import pytest

from fmu_wheelset.fmu import cache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVIL = "open(__file__ + '.ran', 'w').write('planted code ran')\n"


@pytest.fixture
def resources(tmp_path):
    """An FMU resources folder with the bundled solver (the repository's sources)."""
    res = tmp_path / "resources"
    shutil.copytree(os.path.join(ROOT, "solver"), res / "solver",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc"))
    return str(res)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    os.chmod(root, 0o700)
    monkeypatch.setenv("WHEELSET_FMU_CACHE", str(root))
    return root


def entry_for(resources, cache_dir):
    digest = cache.tree_digest(os.path.join(resources, "solver"))
    return cache_dir / f"solver-{digest[:cache.DIGEST_CHARS]}", digest


def plant(resources, cache_dir):
    """A complete copy of the solver under the right name, with __init__.py
    replaced by code that leaves a marker when imported."""
    entry, _ = entry_for(resources, cache_dir)
    shutil.copytree(os.path.join(resources, "solver"), entry / "solver")
    (entry / "solver" / "__init__.py").write_text(EVIL)
    return entry


def assert_verified_copy(path, resources):
    """`path` holds exactly the bundled sources, privately."""
    assert path is not None
    assert cache.tree_digest(os.path.join(path, "solver")) == \
        cache.tree_digest(os.path.join(resources, "solver"))
    with open(os.path.join(path, "solver", "__init__.py")) as fh:
        assert "planted" not in fh.read()
    assert cache.tree_problem(path) is None


def test_fresh_cache_is_created_and_reused(resources, cache_dir):
    path, note = cache.stable_solver_dir(resources)
    assert_verified_copy(path, resources)
    again, note2 = cache.stable_solver_dir(resources)
    assert again == path and note2 == "cache copy verified"


def test_planted_entry_is_replaced_not_imported(resources, cache_dir):
    entry = plant(resources, cache_dir)
    path, note = cache.stable_solver_dir(resources)
    assert path == str(entry)
    assert "rebuilt" in note and "differs from its name" in note
    assert_verified_copy(path, resources)


def test_half_written_entry_is_replaced(resources, cache_dir):
    entry, _ = entry_for(resources, cache_dir)
    (entry / "solver").mkdir(parents=True)
    (entry / "solver" / "__init__.py").write_text("")     # a copy interrupted after one file
    path, note = cache.stable_solver_dir(resources)
    assert "rebuilt" in note
    assert_verified_copy(path, resources)


def test_symlinked_file_in_entry_is_replaced(resources, cache_dir, tmp_path):
    entry = plant(resources, cache_dir)
    outside = tmp_path / "outside.py"
    shutil.copy(os.path.join(resources, "solver", "__init__.py"), outside)
    os.unlink(entry / "solver" / "__init__.py")
    os.symlink(outside, entry / "solver" / "__init__.py")  # right content, but a link
    path, note = cache.stable_solver_dir(resources)
    assert "symbolic link" in note
    assert_verified_copy(path, resources)
    assert outside.exists(), "the link's target must not be touched"


def test_symlinked_entry_is_replaced(resources, cache_dir, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(os.path.join(resources, "solver"), elsewhere / "solver")
    entry, _ = entry_for(resources, cache_dir)
    os.symlink(elsewhere, entry)
    path, note = cache.stable_solver_dir(resources)
    assert "rebuilt" in note
    assert not os.path.islink(path)
    assert_verified_copy(path, resources)
    assert (elsewhere / "solver" / "__init__.py").exists()


def test_entry_writable_by_others_is_replaced(resources, cache_dir):
    entry, _ = entry_for(resources, cache_dir)
    shutil.copytree(os.path.join(resources, "solver"), entry / "solver")
    os.chmod(entry / "solver" / "model" / "wheelset.py", 0o666)
    path, note = cache.stable_solver_dir(resources)
    assert "writable by group or others" in note
    assert_verified_copy(path, resources)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a file to another user needs root")
def test_entry_owned_by_another_user_is_replaced(resources, cache_dir):
    entry, _ = entry_for(resources, cache_dir)
    shutil.copytree(os.path.join(resources, "solver"), entry / "solver")
    os.chown(entry / "solver" / "track" / "alignment.py", 65534, 65534)
    path, note = cache.stable_solver_dir(resources)
    assert "owned by uid 65534" in note
    assert_verified_copy(path, resources)


@pytest.mark.parametrize("mode", [0o777, 0o755, 0o1777])
def test_shared_cache_root_is_not_used(resources, cache_dir, mode):
    """A folder named by WHEELSET_FMU_CACHE that group or others may enter (shared
    scratch space) is refused and left as it is: the solver is imported from the
    FMU's resources instead."""
    plant(resources, cache_dir)
    os.chmod(cache_dir, mode)
    path, note = cache.stable_solver_dir(resources)
    assert path is None
    assert "mode 700" in note
    assert stat.S_IMODE(os.stat(cache_dir).st_mode) == mode


def test_symlinked_cache_root_is_not_used(resources, tmp_path, monkeypatch):
    real = tmp_path / "real-cache"
    real.mkdir(mode=0o700)
    link = tmp_path / "link-cache"
    os.symlink(real, link)
    monkeypatch.setenv("WHEELSET_FMU_CACHE", str(link))
    path, note = cache.stable_solver_dir(resources)
    assert path is None and "symbolic link" in note


def test_default_cache_root_is_made_private(resources, tmp_path, monkeypatch):
    """The default folder ($XDG_CACHE_HOME/wheelset-fmu), this user's but left 0755 by
    an older version: made 0700 and used."""
    monkeypatch.delenv("WHEELSET_FMU_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    root = tmp_path / "xdg" / "wheelset-fmu"
    root.mkdir(parents=True)
    os.chmod(root, 0o755)
    path, _ = cache.stable_solver_dir(resources)
    assert_verified_copy(path, resources)
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700


def test_missing_cache_root_is_created_private(resources, tmp_path, monkeypatch):
    root = tmp_path / "new" / "cache"
    monkeypatch.setenv("WHEELSET_FMU_CACHE", str(root))
    path, _ = cache.stable_solver_dir(resources)
    assert_verified_copy(path, resources)
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
