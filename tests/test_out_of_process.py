"""Out-of-process mode of the native front end in the plain C host.

WHEELSET_FMU_OUT_OF_PROCESS=1: the FMU's library runs the slave in a worker
Python process and forwards every FMI call over shared memory. The same C
host (tests/c_host/host.c, no LD_PRELOAD or PYTHONPATH) must print the same
numbers as in-process: the worker runs the very same library and core, so
the rows are compared bit for bit (any difference is a forwarding bug, not
round-off). A worker killed with SIGKILL mid-run must be fmi2Error in the
host within 1 s (the required figure), the host returning normally.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

fmpy = pytest.importorskip("fmpy")
from fmpy import read_model_description  # noqa: E402
from conftest import compile_c_host  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def compile_host(tmp_path_factory, source: str) -> str:
    return compile_c_host(tmp_path_factory.mktemp("oop_host"), source)


@pytest.fixture(scope="module")
def md(wheelset_fmu):
    return read_model_description(wheelset_fmu)


def environment(**extra):
    env = {"PATH": "/usr/bin:/bin"}
    for key in ("HOME", "WHEELSET_FMU_CACHE", "XDG_CACHE_HOME"):
        if key in os.environ:
            env[key] = os.environ[key]
    env.update(extra)
    return env


def test_out_of_process_run_equals_in_process(tmp_path_factory, wheelset_fmu_unzipped, md):
    host = compile_host(tmp_path_factory, "host.c")
    outputs = [f"o:{v.valueReference}" for v in md.modelVariables
               if v.causality == "output" and v.type == "Real"]
    cmd = [host, wheelset_fmu_unzipped, md.guid, "0.001", "20", *outputs]
    inproc = subprocess.run(cmd, env=environment(), capture_output=True, text=True, timeout=300)
    remote = subprocess.run(cmd, env=environment(WHEELSET_FMU_OUT_OF_PROCESS="1"),
                            capture_output=True, text=True, timeout=300)
    assert inproc.returncode == 0, inproc.stderr[-2000:]
    assert remote.returncode == 0, remote.stderr[-2000:]
    rows = [line for line in remote.stdout.splitlines() if line[:1].isdigit()]
    assert len(rows) == 21 and len(rows[-1].split()) == 1 + len(outputs)
    assert remote.stdout == inproc.stdout


def test_killed_worker_is_an_error_within_one_second(tmp_path_factory, wheelset_fmu_unzipped, md):
    host = compile_host(tmp_path_factory, "kill_worker_host.c")
    run = subprocess.run([host, wheelset_fmu_unzipped, md.guid, "0.001", "10"],
                         env=environment(WHEELSET_FMU_OUT_OF_PROCESS="1"),
                         capture_output=True, text=True, timeout=300)
    print(run.stdout, run.stderr[-1500:])
    # exit 0: fmi2DoStep after the kill was fmi2Error in < 1 s, later calls
    # fmi2Error, the instance freed, the library dlclosed, main returned
    assert run.returncode == 0, run.stdout + run.stderr[-2000:]
    assert "was killed by signal 9" in run.stderr


def test_missing_worker_interpreter_fails_instantiate(tmp_path_factory, wheelset_fmu_unzipped, md):
    host = compile_host(tmp_path_factory, "host.c")
    run = subprocess.run([host, wheelset_fmu_unzipped, md.guid, "0.001", "1"],
                         env=environment(WHEELSET_FMU_OUT_OF_PROCESS="1",
                                         WHEELSET_FMU_PYTHON="/nonexistent/python"),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 3, run.stderr[-2000:]          # fmi2Instantiate returned NULL
    assert "no Python interpreter /nonexistent/python for the worker process" in run.stderr
