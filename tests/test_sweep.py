"""Parameter sweeps on Dask: cluster results = serial results, resume,
failed cases recorded, an external dask-scheduler / dask-worker.

Cases are short (1.0 s simulated, 10 ms communication steps). The FMU is the
session's one build (tests/conftest.py)."""
from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")
from fmu_wheelset.sweeps import sweep as sw  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
COMPARED = ["status", "samples", "simulated_s", "max_YQ_left", "max_YQ_right", "max_abs_y_mm",
            "max_flange_force_kN", "flange_contact_share", "max_wear_number_N"]


def cases(speeds=(60.0, 80.0, 100.0), radii=(300.0, 600.0), duration=1.0):
    return [sw.make_case({"speed_kmh": v, "radius_m": r, "cant_deficiency_mm": 80.0},
                         scenario="kang-r320", duration=duration, ramp_time=0.3)
            for v in speeds for r in radii]


def runner(fmu):
    return "fmu" if fmu else "core"


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def same(a, b):
    for k in COMPARED:
        x, y = a[k], b[k]
        if isinstance(x, float) and math.isnan(x):
            assert isinstance(y, float) and math.isnan(y), k
        else:
            assert x == y, (k, x, y)


def test_cluster_matches_serial_and_rerun_skips(fmu, client, tmp_path):
    todo = cases()
    assert len(todo) == 6
    rows = sw.run_sweep(todo, tmp_path, fmu_path=fmu, runner=runner(fmu), client=client,
                        progress=False)
    assert sw.run_sweep.last_stats == {"total": 6, "skipped": 0, "ran": 6, "failed": 0}
    assert [r["status"] for r in rows] == ["ok"] * 6, [r["message"] for r in rows]
    serial = [sw.run_case(fmu, c) for c in todo]          # in-process, same function
    for a, b in zip(rows, serial):
        assert a["key"] == b["key"] == sw.case_key(todo[rows.index(a)])
        same(a, b)
    assert all(r["simulated_s"] == pytest.approx(1.0) for r in rows)
    assert len(list((tmp_path / "cases").glob("*.json"))) == 6
    summary = (tmp_path / "summary.csv").read_text().splitlines()
    assert len(summary) == 7 and "max_YQ_left" in summary[0]
    assert (tmp_path / "heatmap_max_YQ.png").stat().st_size > 1000
    # rerun: nothing runs (no cluster needed), same rows
    again = sw.run_sweep(todo, tmp_path, fmu_path=fmu, runner=runner(fmu), progress=False)
    assert sw.run_sweep.last_stats["ran"] == 0 and sw.run_sweep.last_stats["skipped"] == 6
    for a, b in zip(rows, again):
        same(a, b)
    # one more case: only that one runs
    more = todo + cases(speeds=(70.0,), radii=(300.0,))
    sw.run_sweep(more, tmp_path, fmu_path=fmu, runner=runner(fmu), client=client, progress=False)
    assert sw.run_sweep.last_stats["ran"] == 1 and sw.run_sweep.last_stats["skipped"] == 6


def test_failing_case_is_recorded(fmu, client, tmp_path):
    bad = sw.make_case({"speed_kmh": 80.0, "radius_m": 300.0, "wheel_profile": "NoSuchProfile"},
                       duration=0.5)
    good = cases(speeds=(80.0,), radii=(300.0,), duration=0.5)[0]
    rows = sw.run_sweep([bad, good], tmp_path, fmu_path=fmu, runner=runner(fmu), client=client,
                        progress=False, histories=True)
    assert sw.run_sweep.last_stats["failed"] == 1
    assert rows[0]["status"] == "failed" and rows[0]["message"]
    assert rows[1]["status"] == "ok"
    stored = json.loads((tmp_path / "cases" / f"{sw.case_key(bad)}.json").read_text())
    assert stored["status"] == "failed" and stored["message"] == rows[0]["message"]
    assert (tmp_path / "histories" / f"{sw.case_key(good)}.csv").exists()
    text = (tmp_path / "summary.csv").read_text()
    assert "failed" in text
    # a failed case is not done: the rerun retries it, and only it
    sw.run_sweep([bad, good], tmp_path, fmu_path=fmu, runner=runner(fmu), client=client,
                 progress=False, histories=True)
    assert sw.run_sweep.last_stats["ran"] == 1
    assert sw.run_sweep.last_stats["failed"] == 1


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_external_scheduler_and_worker(fmu, tmp_path):
    from distributed import Client
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = []
    try:
        procs.append(subprocess.Popen(
            [PY, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port),
             "--no-dashboard"], cwd=tmp_path, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        procs.append(subprocess.Popen(
            [PY, "-m", "distributed.cli.dask_worker", address, "--nworkers", "1", "--nthreads", "1",
             "--no-dashboard", "--host", "127.0.0.1"], cwd=tmp_path, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.time() + 60
        while True:
            try:
                with Client(address, timeout=5) as c:
                    c.wait_for_workers(1, timeout=60)
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.5)
        todo = cases(speeds=(80.0,), radii=(300.0, 600.0), duration=0.5)
        rows = sw.run_sweep(todo, tmp_path / "res", fmu_path=fmu, runner=runner(fmu),
                            scheduler=address, progress=False)
        assert [r["status"] for r in rows] == ["ok", "ok"], [r["message"] for r in rows]
        for r, c in zip(rows, todo):
            same(r, sw.run_case(fmu, c))
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
