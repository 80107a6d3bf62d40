"""Every mistake on the `wheelset-fmu` command line ends in one line on stderr,
never a traceback: exit status 2 when the command line or an input file is
invalid (nothing ran), 1 when a valid run failed; impossible values are
refused with the allowed range (fmu_wheelset/cli/args.py). The mistakes are
the table of tests/cli_mistakes.py (`python tests/cli_mistakes.py` runs it by
hand, each in a process of its own, against any checkout).

Before (6fe7f65, docs/cli.md): of the 90 mistakes of the table, 72 gave one
line without a traceback and 73 the expected exit status; 3 printed
tracebacks (a sweep plan with a misspelt scenario or track ran its cases and
printed theirs; `sweep --fmu <not an FMU>` printed Dask's), plans naming an
unknown or malformed profile ran every case before failing, profile files
were refused by geometry, conicity and creep, `--whee` was read as `--wheel`,
and the same kind of mistake exited 1 in one command and 2 in another.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_mistakes import MISTAKES, expand, make_files
from fmu_wheelset.cli.main import main

ROOT = Path(__file__).resolve().parent.parent


def run(argv, capsys):
    """(exit status, stderr lines) of `wheelset-fmu argv` in this process."""
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exc:            # argparse exits itself
        status = exc.code
    captured = capsys.readouterr()
    return status, [line for line in captured.err.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return make_files(tmp_path_factory.mktemp("mistakes"))


def test_the_table_holds_at_least_50_mistakes():
    assert len(MISTAKES) >= 50
    assert len({" ".join(argv) for argv, _, _ in MISTAKES}) == len(MISTAKES)


@pytest.mark.parametrize("argv, status, words", MISTAKES,
                         ids=[" ".join(m[0]) or "(no command)" for m in MISTAKES])
def test_mistake_gives_one_line_and_its_exit_status(argv, status, words, files, capfd,
                                                     monkeypatch, tmp_path):
    """capfd: what any child process or library writes to the file descriptors
    is seen too (Dask's workers, OpenSees)."""
    monkeypatch.chdir(tmp_path)
    got, lines = run(expand(argv, files), capfd)
    assert got == status, (got, lines)
    assert not any("Traceback" in line for line in lines), lines
    lines = [line for line in lines if line.startswith("wheelset-fmu")] if status == 1 else lines
    assert len(lines) == 1, lines
    assert lines[0].startswith("wheelset-fmu"), lines[0]
    for w in words:
        assert w in lines[0], (w, lines[0])


@pytest.mark.parametrize("argv", [
    ["sweep", "{misspelt_scenario}", "--runner", "core"],
    ["sweep", "{good_plan}", "--fmu", "{not_an_fmu}"],
    ["creep", "--wheel-load", "0"],
    ["vehicle", "--fmu", "{not_an_fmu}"],
    ["cosim-track", "--rail", "UIC99"],       # loads OpenSees: its exit banner is silenced
])
def test_mistakes_in_a_real_process(argv, files, tmp_path):
    """In a process of its own nothing else reaches stderr: one line, exit 2."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "fmu_wheelset.cli", *expand(argv, files)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    assert "Process 0 Terminating" not in proc.stdout + proc.stderr


def test_simulate_duration_is_the_duration(tmp_path, capsys):
    """A short --duration is run as given (it used to be ignored when 0)."""
    out = tmp_path / "run.csv"
    status, lines = run(["simulate", "--scenario", "straight-klingel", "--duration", "0.01",
                         "--out", out, "--no-progress"], capsys)
    assert status == 0, lines
    rows = out.read_text().splitlines()
    header = rows[0].split(",")
    last_time = float(rows[-1].split(",")[header.index("time")])
    assert last_time == pytest.approx(0.01, abs=1e-9)
