"""Cold start: the numba cache the build ships inside the FMU.

Not timed (benchmarks/bench_coldstart.py measures): these tests check that a
fresh extraction in a new process compiles nothing, that a shipped cache made
for another CPU, a tampered file or a hostile manifest is not installed (numba
then compiles, as without a cache), that numba itself keys its cache on the
CPU, and `wheelset-fmu check` on the built FMU and on a broken copy.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

fmpy = pytest.importorskip("fmpy")
from fmpy import read_model_description  # noqa: E402

from fmu_wheelset.fmu import cache as fmu_cache  # noqa: E402
from conftest import compile_c_host  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    return compile_c_host(tmp_path_factory.mktemp("c_host_cold"))


# "this CPU": the cache compiled for the build machine's CPU (this one). "another
# CPU": the build-cpu manifest of the extraction says the build machine was a
# skylake-avx512, as it says on any CPU that is not the build machine's: the FMU's
# interpreter then compiles for numba's generic x86-64 target and installs the
# generic cache. "generic asked": NUMBA_CPU_NAME=generic set by the user.
CPU_CASES = {"this CPU": (fmu_cache.BUILD_CPU_VARIANT, {}, False),
             "another CPU": (fmu_cache.GENERIC_VARIANT, {}, True),
             "generic asked": (fmu_cache.GENERIC_VARIANT, {"NUMBA_CPU_NAME": "generic"}, False)}


@pytest.mark.parametrize("fast_step", ["on", "off"])
@pytest.mark.parametrize("cpu_case", list(CPU_CASES))
def test_fresh_extraction_in_a_new_process_compiles_nothing(wheelset_fmu, host, tmp_path, fast_step,
                                                            cpu_case):
    # "off": the Python step (WHEELSET_FMU_FAST_STEP=0), the front end's path for every
    # step that is not a clean accepted one: its kernels are shipped too (before they
    # were not, and a host's first such step compiled for about 7 s)
    variant, extra_env, other_cpu = CPU_CASES[cpu_case]
    unzipped = tmp_path / "fmu"
    with zipfile.ZipFile(wheelset_fmu) as z:
        z.extractall(unzipped)
    shipped = unzipped / "resources" / fmu_cache.SHIPPED_CACHE_DIR
    if other_cpu:
        path = shipped / fmu_cache.BUILD_CPU_VARIANT / fmu_cache.SHIPPED_MANIFEST
        doc = json.loads(path.read_text())
        doc["cpu"][1] = "skylake-avx512"
        path.write_text(json.dumps(doc))
    manifest = json.loads((shipped / variant / fmu_cache.SHIPPED_MANIFEST).read_text())
    assert manifest["files"], "the build shipped no numba cache"
    if variant == fmu_cache.GENERIC_VARIANT:
        assert manifest["cpu"][1:] == ["generic", ""]
    root = tmp_path / "cache"                 # an empty cache: a new user, a new machine
    md = read_model_description(wheelset_fmu)
    vr = {v.name: v.valueReference for v in md.modelVariables}
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", str(tmp_path)),
           "WHEELSET_FMU_CACHE": str(root), "NUMBA_DEBUG_CACHE": "1",
           "PYTHONUNBUFFERED": "1", **extra_env}   # the FMU never finalizes Python: no flush at exit
    if fast_step == "off":
        env["WHEELSET_FMU_FAST_STEP"] = "0"
    proc = subprocess.run([host, str(unzipped), md.guid, "0.001", "1", f"o:{vr['wheelset.y']}"],
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"shipped numba cache ({variant}) installed" in proc.stderr, proc.stderr[-3000:]
    # numba's cache log (NUMBA_DEBUG_CACHE): kernels loaded, none compiled and saved
    assert "[cache] data loaded" in proc.stdout
    assert "[cache] data saved" not in proc.stdout, proc.stdout[-2000:]
    assert "[cache] index saved" not in proc.stdout
    # and the copy holds exactly the shipped files, unchanged (no new .nbi/.nbc)
    entries = list(root.glob("native-solver-*"))
    assert len(entries) == 1
    solver_copy = entries[0] / "solver"
    found = {p.relative_to(solver_copy).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in solver_copy.rglob("*") if p.suffix in (".nbi", ".nbc")}
    assert found == manifest["files"]


def _fake_shipped(tmp_path, cpu, solver_digest="d" * 64, tamper=False, name=None):
    import numba
    shipped = tmp_path / "shipped"
    (shipped / "__pycache__").mkdir(parents=True)
    data = b"numba index bytes"
    (shipped / "__pycache__" / "normal.f-1.py311.nbi").write_bytes(data + (b"!" if tamper else b""))
    manifest = {"format": fmu_cache.SHIPPED_FORMAT, "version": fmu_cache.SHIPPED_VERSION,
                "numba": numba.__version__, "python": sys.implementation.cache_tag, "cpu": cpu,
                "solver_sha256": solver_digest,
                "files": {name or "__pycache__/normal.f-1.py311.nbi": hashlib.sha256(data).hexdigest()}}
    (shipped / fmu_cache.SHIPPED_MANIFEST).write_text(json.dumps(manifest))
    copy = tmp_path / "copy"
    copy.mkdir()
    return str(shipped), str(copy)


def test_shipped_cache_fits_only_its_cpu_and_untampered_files(tmp_path):
    from fmu_wheelset.fmu.core_loader import numba_cpu_signature
    here = numba_cpu_signature()
    # made for this CPU, intact: installed
    shipped, copy = _fake_shipped(tmp_path / "a", here)
    note = fmu_cache.install_shipped_numba_cache(shipped, copy, here, "d" * 64)
    assert note.startswith("shipped numba cache installed"), note
    assert os.path.isfile(os.path.join(copy, "__pycache__", "normal.f-1.py311.nbi"))
    # made for another CPU (name or features): nothing installed, the reason said
    other = [here[0], "nehalem", "+sse2"]
    shipped, copy = _fake_shipped(tmp_path / "b", other)
    note = fmu_cache.install_shipped_numba_cache(shipped, copy, here, "d" * 64)
    assert "not used" in note and "nehalem" in note, note
    assert os.listdir(copy) == []
    shipped, copy = _fake_shipped(tmp_path / "b2", [here[0], here[1], here[2] + ",-avx"])
    note = fmu_cache.install_shipped_numba_cache(shipped, copy, here, "d" * 64)
    assert "features differ" in note and os.listdir(copy) == []
    # a file that differs from its recorded sha256: nothing installed
    shipped, copy = _fake_shipped(tmp_path / "c", here, tamper=True)
    note = fmu_cache.install_shipped_numba_cache(shipped, copy, here, "d" * 64)
    assert "differs from its recorded sha256" in note and os.listdir(copy) == []
    # made for other solver sources (the whole solver's sha256: a kernel calling
    # a kernel of a changed module is not invalidated by numba itself)
    shipped, copy = _fake_shipped(tmp_path / "d", here, solver_digest="e" * 64)
    note = fmu_cache.install_shipped_numba_cache(shipped, copy, here, "d" * 64)
    assert "other solver sources" in note and os.listdir(copy) == []
    # a manifest naming a path outside __pycache__: refused before anything is read
    for bad in ("../../evil.nbi", "__pycache__/../../x.nbi", "/etc/x.nbi", "__init__.py"):
        shipped, copy = _fake_shipped(tmp_path / f"e{abs(hash(bad))}", here, name=bad)
        note = fmu_cache.install_shipped_numba_cache(shipped, copy, here, "d" * 64)
        assert "is not a numba cache file" in note, (bad, note)
        assert os.listdir(copy) == []


def test_shipped_caches_per_target_the_fitting_one_installed(tmp_path):
    from fmu_wheelset.fmu.core_loader import numba_cpu_signature
    here = numba_cpu_signature()
    generic = [here[0], "generic", ""]
    root = tmp_path / "shipped"
    root.mkdir()
    for variant, cpu in ((fmu_cache.BUILD_CPU_VARIANT, [here[0], "nehalem", "+sse2"]),
                         (fmu_cache.GENERIC_VARIANT, generic)):
        folder, _ = _fake_shipped(tmp_path / variant, cpu)
        shutil.move(folder, root / variant)
    copy = tmp_path / "copy"
    copy.mkdir()
    # a process compiling for the generic target gets the generic cache
    note = fmu_cache.install_shipped_numba_cache(str(root), str(copy), generic, "d" * 64)
    assert note.startswith("shipped numba cache (generic) installed"), note
    assert os.path.isfile(copy / "__pycache__" / "normal.f-1.py311.nbi")
    # one compiling for this CPU gets none (the build machine was a nehalem): it
    # compiles, and the note says for which CPUs the caches were made
    copy2 = tmp_path / "copy2"
    copy2.mkdir()
    note = fmu_cache.install_shipped_numba_cache(str(root), str(copy2), here, "d" * 64)
    assert "not used" in note and "nehalem" in note and "generic" in note, note
    assert os.listdir(copy2) == []


CHOOSE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from fmu_wheelset.fmu import cache
note = cache.choose_numba_target(sys.argv[2])
from fmu_wheelset.fmu.core_loader import numba_cpu_signature
print(json.dumps({"note": note, "chosen": numba_cpu_signature()}))
"""
HOST_SIGNATURE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from fmu_wheelset.fmu import cache
before = cache.host_cpu_signature()
from fmu_wheelset.fmu.core_loader import numba_cpu_signature
print(json.dumps([before, numba_cpu_signature()]))
"""


def test_numba_target_chosen_before_numba_compiles(tmp_path):
    # the signature computed without numba's codegen is the one numba then keys on
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CPU")}
    proc = subprocess.run([sys.executable, "-c", HOST_SIGNATURE, str(ROOT)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    before, after = json.loads(proc.stdout)
    assert before == after and after[1] != "generic"
    here = after
    # a build-cpu manifest of this CPU: numba stays on this CPU; of another CPU:
    # numba's config is switched to the generic target before its codegen exists
    for build_cpu, expected in ((here, here), ([here[0], "skylake-avx512", "+avx"], [here[0], "generic", ""])):
        shipped = tmp_path / build_cpu[1]
        shipped.mkdir()
        for variant, cpu in ((fmu_cache.BUILD_CPU_VARIANT, build_cpu),
                             (fmu_cache.GENERIC_VARIANT, [here[0], "generic", ""])):
            folder, _ = _fake_shipped(tmp_path / f"{build_cpu[1]}-{variant}", cpu)
            shutil.move(folder, shipped / variant)
        proc = subprocess.run([sys.executable, "-c", CHOOSE, str(ROOT), str(shipped)], env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        result = json.loads(proc.stdout)
        assert result["chosen"] == expected, result
    # the user's NUMBA_CPU_NAME is left alone
    proc = subprocess.run([sys.executable, "-c", CHOOSE, str(ROOT), str(shipped)],
                          env=dict(env, NUMBA_CPU_NAME="nehalem"), capture_output=True, text=True,
                          timeout=300)
    result = json.loads(proc.stdout)
    assert result["chosen"][1] == "nehalem" and "NUMBA_CPU_NAME" in result["note"]


NUMBA_MODULE = textwrap.dedent("""
    from numba import njit
    @njit(cache=True)
    def twice(x):
        return 2.0 * x
""")
NUMBA_RUN = "import sys; sys.path.insert(0, sys.argv[1]); import kernel; print(kernel.twice(21.0))"


def test_numba_keys_its_cache_on_the_cpu(tmp_path):
    # numba's index key holds codegen.magic_tuple() (triple, CPU name, features):
    # an entry made for another CPU is a miss, compiled again and saved, no crash
    (tmp_path / "kernel.py").write_text(NUMBA_MODULE)

    def run(**extra):
        env = dict(os.environ, NUMBA_DEBUG_CACHE="1", **extra)
        env.pop("NUMBA_CACHE_DIR", None)
        proc = subprocess.run([sys.executable, "-c", NUMBA_RUN, str(tmp_path)], env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "42.0" in proc.stdout
        return proc.stdout

    assert "[cache] data saved" in run(NUMBA_CPU_NAME="generic")
    assert "[cache] data saved" not in run(NUMBA_CPU_NAME="generic")     # hit
    assert "[cache] data saved" in run()        # this CPU: a miss, compiled, no crash
    assert "[cache] data saved" not in run()


def run_check(fmu, *options, env=None):
    return subprocess.run([sys.executable, "-m", "fmu_wheelset.cli", "check", str(fmu), *options],
                          capture_output=True, text=True, timeout=900, cwd=ROOT,
                          env=env or dict(os.environ, PYTHONPATH=str(ROOT)))


def test_check_command_on_the_built_fmu(wheelset_fmu):
    proc = run_check(wheelset_fmu)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "usable on this machine" in proc.stdout
    assert "instantiated, initialized, one step" in proc.stdout


def test_check_command_on_a_broken_copy(wheelset_fmu, tmp_path):
    # the interpreter record names a Python that is not there, and the shipped
    # cache claims another CPU: one line each, exit 1
    broken = tmp_path / "Broken.fmu"
    with zipfile.ZipFile(wheelset_fmu) as zin, zipfile.ZipFile(broken, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "resources/wheelset_native.cfg":
                data = b"\n".join(b"libpython=/nonexistent/libpython3.99.so" if
                                  line.startswith(b"libpython=") else line
                                  for line in data.split(b"\n"))
            elif info.filename.endswith(fmu_cache.SHIPPED_MANIFEST):
                doc = json.loads(data)
                doc["cpu"][1] = "pentium4"
                data = json.dumps(doc).encode()
            zout.writestr(info, data)
    proc = run_check(broken)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith("missing: Python") and "/nonexistent/libpython3.99.so" in line
               for line in lines), proc.stdout
    assert any(line.startswith("not usable: shipped numba cache") and "pentium4" in line
               for line in lines), proc.stdout
    assert "usable on this machine" not in proc.stdout
    # a copy without a binary for this platform
    nobin = tmp_path / "NoBinary.fmu"
    with zipfile.ZipFile(wheelset_fmu) as zin, zipfile.ZipFile(nobin, "w") as zout:
        for info in zin.infolist():
            if not info.filename.startswith("binaries/"):
                zout.writestr(info, zin.read(info.filename))
    proc = run_check(nobin)
    assert proc.returncode == 1
    assert any(line.startswith("missing: binary for this platform")
               for line in proc.stdout.splitlines()), proc.stdout
