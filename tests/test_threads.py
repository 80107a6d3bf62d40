"""Two host threads doing a process's first fmi2Instantiate at the same time
(FMI 2.0 section 2.1.5: different instances may be used from different
threads), in the plain C host tests/c_host/two_threads_host.c with an empty
environment.

Both threads race to start the FMU's embedded Python; without a lock around
that start the process crashed in every one of 30 runs ("Fatal Python error:
pyinit_core_reconfigure: failed to read thread state", SIGSEGV). Each run is a
new process (only the first instantiation of a process races); the number of
runs is WHEELSET_TWO_THREAD_RUNS (default 20: about a minute here; 100 of 100
clean runs were measured by hand, see docs/hosts.md).
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

fmpy = pytest.importorskip("fmpy")
from fmpy import read_model_description  # noqa: E402
from conftest import compile_c_host  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RUNS = int(os.environ.get("WHEELSET_TWO_THREAD_RUNS", "20"))


@pytest.fixture(scope="module")
def two_threads_host(tmp_path_factory):
    return compile_c_host(tmp_path_factory.mktemp("c_host"), "two_threads_host.c", "-pthread")


def empty_environment():
    """What `env -i PATH=/usr/bin:/bin HOME=...` gives: nothing of this session's
    Python (the per-user numba cache copy lives under HOME)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")}
    for key in ("WHEELSET_FMU_CACHE", "XDG_CACHE_HOME"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def run(host, unzipped, md, nsteps):
    vr = {v.name: v.valueReference for v in md.modelVariables}
    cmd = [host, unzipped, md.guid, str(nsteps), str(vr["wheelset.distance"]),
           str(vr["wheelset.y"]), str(vr["wheel.left.Q"])]
    return subprocess.run(cmd, env=empty_environment(), capture_output=True, text=True,
                          timeout=300)


def test_two_threads_instantiate_first_at_once(two_threads_host, wheelset_fmu_unzipped):
    md = read_model_description(wheelset_fmu_unzipped)
    failed = []
    for k in range(RUNS):
        proc = run(two_threads_host, wheelset_fmu_unzipped, md, 0)
        if proc.returncode != 0:
            failed.append((k, proc.returncode, proc.stderr[-1500:]))
    assert not failed, f"{len(failed)} of {RUNS} runs failed; first: {failed[0]}"


def test_two_threads_step_their_own_instances_at_once(two_threads_host, wheelset_fmu_unzipped):
    # each thread initializes its instance and takes 20 steps while the other does
    # the same: both must give the numbers of a run alone (the same parameters),
    # bit for bit, and the distance must be V t (default speed)
    md = read_model_description(wheelset_fmu_unzipped)
    speed = float(next(v.start for v in md.modelVariables if v.name == "wheelset.speed"))
    for _ in range(3):
        proc = run(two_threads_host, wheelset_fmu_unzipped, md, 20)
        assert proc.returncode == 0, proc.stderr[-3000:]
        lines = sorted(proc.stdout.split("\n")[:2])
        assert [line.split()[:2] for line in lines] == [["thread", "0"], ["thread", "1"]]
        a, b = (line.split()[2:] for line in lines)
        assert a == b
        assert float(a[0]) == pytest.approx(speed * 20e-3, rel=1e-12)
