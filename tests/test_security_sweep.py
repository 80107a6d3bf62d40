"""The sweep runner checks the whole plan first, reports failures, retries them,
survives damaged results and leaves no temporary folders
(fmu_wheelset/sweeps/plan.py, fmu_wheelset/sweeps/sweep.py).

Before: `sweep --resume` crashed on a result file with a missing key, `sweep`
exited 0 when every case failed, failed cases were cached as done and never
retried, every worker left a `wheelset-sweep-*` folder (1.7 MB) behind, a
1e9-case grid died with MemoryError after minutes, `--samples -5` ran 0 cases
and `--workers 0` took all cores.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")
from fmu_wheelset.sweeps import sweep as sw  # noqa: E402
from fmu_wheelset.sweeps.plan import MAX_CASES, PlanError, check_plan, check_workers  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# ---------------------------------------------------------------------------
# item 11: the plan is checked, whole and first
# ---------------------------------------------------------------------------
def test_huge_grid_refused_before_expansion(tmp_path):
    axis = "[" + ", ".join(f"{60.0 + 0.01 * k}" for k in range(1000)) + "]"
    plan = write(tmp_path / "huge.toml", f"[grid]\nspeed_kmh = {axis}\nfriction = "
                 + "[" + ", ".join(f"{0.0002 * k}" for k in range(1000)) + "]\nmass = "
                 + "[" + ", ".join(f"{1000.0 + k}" for k in range(1000)) + "]\n")
    check_plan({"grid": {"speed_kmh": [60.0]}})       # imports done before the clock starts
    t0 = time.perf_counter()
    with pytest.raises(PlanError, match=r"1e\+09 cases, more than the 100000"):
        sw.load_sweep(plan)
    # refused from the axis lengths (a product of three numbers), not by building
    # 1e9 dicts (minutes, then MemoryError): 5 s is far on either side of both
    assert time.perf_counter() - t0 < 5.0


@pytest.mark.parametrize("samples", [-5, 0, 1.5, True, "10", MAX_CASES + 1])
def test_bad_sample_counts_refused(tmp_path, samples):
    value = json.dumps(samples) if not isinstance(samples, bool) else "true"
    plan = write(tmp_path / "r.toml", f"[random]\nsamples = {value}\nspeed_kmh = [60.0, 100.0]\n")
    with pytest.raises(PlanError, match="samples must be an integer"):
        sw.load_sweep(plan)


@pytest.mark.parametrize("body, words", [
    ("[grid]\nspeed_kmh = [60.0, -5.0]\n", "speed_kmh[1] = -5 km/h"),
    ("[grid]\nradius_m = [300.0, 10.0]\n", "at least 50 m"),
    ("[grid]\nfriction = [0.3, 2.5]\n", "friction[1] = 2.5"),
    ("[grid]\npoisson = [0.5]\n", "poisson[0] = 0.5"),
    ("[grid]\ncreep_model = [\"polach\", \"magic\"]\n", "creep_model[1]: expected one of"),
    ("[grid]\nspeed_kmh = []\n", "empty axis"),
    ("[fixed]\nmass = -1.0\n[grid]\nspeed_kmh = [60.0]\n", "[fixed] mass"),
    ("[random]\nsamples = 3\nspeed_kmh = [100.0, 60.0]\n", "is empty"),
    ("[random]\nsamples = 3\nfriction = [0.1, 9.0]\n", "friction[1] = 9"),
    ("colour = \"red\"\n", "unknown key"),
    ("[grid]\nspeed = [20.0]\nwheel_profile = [\"S1002\"]\nmax_substeps = [0]\n", "max_substeps[0]"),
    ("duration = 100.0\noutput_interval = 1e-5\n", "outputs per case"),
    ("direction = \"up\"\n", "direction"),
])
def test_plan_values_checked_against_their_ranges(tmp_path, body, words):
    with pytest.raises(PlanError) as info:
        sw.load_sweep(write(tmp_path / "p.toml", body))
    assert words in str(info.value), str(info.value)
    assert str(tmp_path / "p.toml") in str(info.value)


def test_example_plan_passes():
    assert check_plan(__import__("tomllib").loads((ROOT / "examples" / "sweep.toml").read_text())) == 6


@pytest.mark.parametrize("n", [0, -1, 10_000, 2.0, True])
def test_worker_counts_refused(n):
    with pytest.raises(PlanError, match="workers must be an integer"):
        check_workers(n)


def test_run_sweep_refuses_zero_workers(tmp_path):
    case = sw.make_case({"speed_kmh": 60.0}, duration=0.01)
    with pytest.raises(PlanError):
        sw.run_sweep([case], tmp_path, runner="core", n_workers=0, progress=False, plot=False)


# ---------------------------------------------------------------------------
# item 10: damaged results, failed cases, exit status, temporary folders
# ---------------------------------------------------------------------------
def test_damaged_result_files_named_and_rerun(tmp_path):
    cases_dir = tmp_path / "cases"
    cases_dir.mkdir()
    good = {"key": "a" * 16, "status": "ok", "message": ""}
    (cases_dir / f"{good['key']}.json").write_text(json.dumps(good))
    (cases_dir / f"{'b' * 16}.json").write_text('{\n "key": "bbbbbbbbbbbbbbbb",\n "status": ok\n}')
    (cases_dir / f"{'c' * 16}.json").write_text(json.dumps({"status": "ok"}))      # no key
    (cases_dir / f"{'d' * 16}.json").write_text(json.dumps([1, 2]))
    (cases_dir / f"{'e' * 16}.json").write_text(json.dumps({"key": "e" * 16, "status": "failed"}))
    (cases_dir / f"{'f' * 16}.json").write_bytes(b"\xff\xfe")
    warnings = []
    done = sw.load_done(tmp_path, warn=warnings.append)
    assert list(done) == [good["key"]]           # failed and damaged cases run again
    text = "\n".join(warnings)
    assert f"{'b' * 16}.json: line 3: damaged result file" in text, text
    assert f"{'c' * 16}.json: line 1: damaged result file" in text and "key" in text
    assert f"{'d' * 16}.json: line 1" in text
    assert f"{'f' * 16}.json: unreadable" in text
    assert len(warnings) == 4


def _plan(path, profile="S1002", duration=0.05, fail=False):
    """A plan of two cases; `fail`: each case fails at its first step (a valid
    plan whose run fails: its 10 ms output steps need 100 internal steps of at
    most 0.1 ms, more than the 10 it allows per step)."""
    return write(path, f'scenario = "kang-r320"\nduration = {duration}\noutput_interval = 0.01\n'
                       + ("[fixed]\nmax_substeps = 10\ninternal_step = 1e-4\n" if fail else "")
                       + f'[grid]\nspeed_kmh = [60.0, 80.0]\nwheel_profile = ["{profile}"]\n')


def _cli(args, env_extra=None, timeout=300):
    env = dict(os.environ, PYTHONPATH=str(ROOT), **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "fmu_wheelset.cli", *map(str, args)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=timeout)


def test_failed_sweep_exits_non_zero_and_retries(tmp_path):
    """Every case fails: exit 1 with the table of failed cases; the rerun runs
    them again instead of taking them as done."""
    plan = _plan(tmp_path / "fail.toml", fail=True)
    out = tmp_path / "out"
    first = _cli(["sweep", plan, "--runner", "core", "--workers", "1", "--no-progress", "--out", out])
    assert first.returncode == 1, first.stdout + first.stderr
    assert "2 of 2 cases failed" in first.stdout
    assert "max_substeps" in first.stdout and "case" in first.stdout
    assert "Traceback" not in first.stderr
    assert "2 of 2 cases failed" in first.stderr.splitlines()[-1]
    second = _cli(["sweep", plan, "--runner", "core", "--workers", "1", "--no-progress", "--out", out,
                   "--resume"])
    assert second.returncode == 1
    assert "0 already done, 2 run, 2 failed" in second.stdout, second.stdout


def _leftovers(root: Path):
    return sorted(str(p) for p in root.rglob("wheelset-sweep-*"))


def test_no_temporary_folders_left(tmp_path, wheelset_fmu):
    """A sweep through the FMU on a local cluster: the workers' FMU extractions
    are gone when the command returns."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    plan = _plan(tmp_path / "p.toml", profile="S1002", duration=0.02)
    proc = _cli(["sweep", plan, "--fmu", wheelset_fmu, "--workers", "1", "--no-progress",
                 "--out", tmp_path / "out"], env_extra={"TMPDIR": str(tmp)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _leftovers(tmp) == []


def test_no_temporary_folders_left_after_ctrl_c(tmp_path, wheelset_fmu):
    """Ctrl-C while a case runs: exit 130, one line, and the extracted FMU of the
    worker removed with the worker."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    plan = _plan(tmp_path / "long.toml", profile="S1002", duration=600.0)
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(tmp))
    proc = subprocess.Popen([sys.executable, "-m", "fmu_wheelset.cli", "sweep", str(plan), "--fmu",
                             wheelset_fmu, "--workers", "1", "--no-progress", "--out",
                             str(tmp_path / "out")], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 120
        while not _leftovers(tmp):                 # the worker has extracted the FMU
            assert proc.poll() is None, proc.communicate()
            assert time.time() < deadline, "the worker never extracted the FMU"
            time.sleep(0.2)
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (proc.returncode, out, err)
    assert "interrupted" in err and "Traceback" not in err, err
    assert _leftovers(tmp) == []


def test_ctrl_c_swallowed_by_library_code_still_stops_the_sweep():
    """A KeyboardInterrupt raised inside code that swallows it (a finaliser run by
    the garbage collector prints "Exception ignored" and goes on) must still stop
    the sweep: the handler records the Ctrl-C and the wait loop polls it."""
    from fmu_wheelset.sweeps.sweep import _completed_unless_interrupted, _ctrl_c_recorded
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        with _ctrl_c_recorded() as interrupted:
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.5)  # the handler runs at the next bytecode boundary
            except KeyboardInterrupt:
                pass  # swallowed, as a finaliser would
            assert interrupted.is_set()
            next(_completed_unless_interrupted([object()], interrupted))
    assert signal.getsignal(signal.SIGINT) is before  # the handler is put back
