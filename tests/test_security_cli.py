"""Every mistake on the `wheelset-fmu` command line ends in one line on stderr and
exit status 2, never a traceback; impossible values are refused with the
allowed range (issue 18, item 12; fmu_wheelset/cli_args.py).

Before: more than 20 of these ended in a Python traceback (unwritable or
missing --out folders, TOML parse errors, --wheel-load 0, --cell 0, ...) or
ran with nonsense (`simulate --duration 0` ran the full default, `--yaw 1e9`,
`--poisson 0.5`, `--workers 0` took all cores).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fmu_wheelset.cli import main

ROOT = Path(__file__).resolve().parent.parent


def run(argv, capsys):
    """(exit status, stderr lines) of `wheelset-fmu argv` in this process."""
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exc:            # argparse exits itself
        status = exc.code
    captured = capsys.readouterr()
    return status, [line for line in captured.err.splitlines() if line.strip()]


@pytest.fixture
def files(tmp_path):
    """Input files for the mistakes: a bad TOML, plans out of bounds."""
    f = {
        "bad_toml": tmp_path / "bad.toml",
        "huge_grid": tmp_path / "huge.toml",
        "negative_samples": tmp_path / "negative.toml",
        "typo": tmp_path / "typo.toml",
        "friction": tmp_path / "friction.toml",
        "zero_duration": tmp_path / "zero.toml",
        "bad_scenario": tmp_path / "scenario.toml",
    }
    f["bad_toml"].write_text("[grid\nspeed_kmh = [60.0]\n")
    axis = ", ".join(str(float(v)) for v in range(1, 1001))
    f["huge_grid"].write_text(f"[grid]\nspeed_kmh = [{axis}]\nradius_m = [{', '.join(str(300.0 + v) for v in range(1000))}]\n"
                              f"friction = [{', '.join(str(0.001 * v) for v in range(1000))}]\n")
    f["negative_samples"].write_text("[random]\nsamples = -5\nspeed_kmh = [60.0, 100.0]\n")
    f["typo"].write_text("[grid]\nspeed_kmh = [60.0]\nfricton = [0.3]\n")
    f["friction"].write_text("[grid]\nspeed_kmh = [60.0]\nfriction = [3.0]\n")
    f["zero_duration"].write_text("duration = 0.0\n[grid]\nspeed_kmh = [60.0]\n")
    f["bad_scenario"].write_text("duration = [\n")
    f["folder"] = tmp_path
    f["missing_folder"] = tmp_path / "no" / "such" / "folder"
    return f


# (argv, words the one line must contain); {name} is replaced from `files`
MISTAKES = [
    (["creep", "--wheel-load", "0"], ["--wheel-load", "(0, 1000] kN"]),
    (["patch", "--cell", "0"], ["--cell", "[0.1, 5] mm"]),
    (["creep", "--poisson", "0.5"], ["--poisson", "[0, 0.5)"]),
    (["patch", "--poisson", "-0.1"], ["--poisson"]),
    (["geometry", "--yaw", "1e9"], ["--yaw", "mrad"]),
    (["simulate", "--duration", "0"], ["--duration", "(0, 3600] s"]),
    (["simulate", "--duration", "-1"], ["--duration"]),
    (["simulate", "--duration", "nan"], ["--duration", "not finite"]),
    (["creep", "--speed", "inf"], ["--speed", "not finite"]),
    (["creep", "--friction", "5"], ["--friction", "[0, 2]"]),
    (["geometry", "--gauge", "0"], ["--gauge", "mm"]),
    (["geometry", "--inclination", "2"], ["--inclination", "1:5"]),
    (["geometry", "--y=5:1:0.1"], ["--y", "bad range"]),
    (["geometry", "--y=-1e9:1e9:1e-9"], ["--y", "bad range"]),
    (["conicity", "--amplitude", "0"], ["--amplitude"]),
    (["profiles", "--step", "0"], ["--step"]),
    (["geometry", "--out", "{missing_folder}/table.csv"], ["--out", "no folder"]),
    (["geometry", "--out", "/etc/passwd/table.csv"], ["--out", "not a folder"]),
    (["creep", "--out", "{folder}"], ["--out", "is a folder"]),
    (["build", "--out", "{folder}/Wheelset.txt"], ["--out", ".fmu"]),
    (["sweep", "{missing_folder}/plan.toml"], ["no such file"]),
    (["sweep", "{folder}"], ["not a regular file"]),
    (["sweep", "{bad_toml}", "--runner", "core"], ["not valid TOML", "line"]),
    (["sweep", "{huge_grid}", "--runner", "core"], ["1e+09 cases", "100000"]),
    (["sweep", "{negative_samples}", "--runner", "core"], ["samples", "[1, 100000]"]),
    (["sweep", "{typo}", "--runner", "core"], ["unknown case parameter", "fricton"]),
    (["sweep", "{friction}", "--runner", "core"], ["friction", "[0, 2]"]),
    (["sweep", "{zero_duration}", "--runner", "core"], ["duration", "(0, 3600]"]),
    (["sweep", "{typo}", "--workers", "0"], ["--workers", "[1, 256]"]),
    (["sweep", "{typo}", "--workers", "many"], ["--workers", "not an integer"]),
    (["sweep", "{typo}", "--out", "/etc/passwd"], ["--out", "not a folder"]),
    (["profiles", "--check", "{missing_folder}/p.txt"], ["not found"]),
    (["profiles", "--check", "{bad_toml}", "--kind", "wheel"], ["line 1"]),
    (["conicity", "--wheel", "NoSuchWheel"], ["NoSuchWheel"]),
    (["simulate", "--scenario", "no-such-scenario"], ["no-such-scenario"]),
    (["simulate", "--scenario", "{bad_scenario}"], ["not valid TOML"]),
    (["no-such-command"], ["invalid choice"]),
    (["creep", "--no-such-option"], ["unrecognized arguments"]),
]


@pytest.mark.parametrize("argv, words", MISTAKES, ids=[" ".join(m[0]) for m in MISTAKES])
def test_mistake_gives_one_line_and_exit_2(argv, words, files, capsys):
    argv = [a.format(**{k: str(v) for k, v in files.items()}) for a in argv]
    status, lines = run(argv, capsys)
    assert status == 2, (status, lines)
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0]
    assert lines[0].startswith("wheelset-fmu"), lines[0]
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_mistakes_in_a_real_process(files):
    """The same in a separate process: nothing else reaches stderr (no traceback)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for argv in (["sweep", str(files["bad_toml"]), "--runner", "core"],
                 ["creep", "--wheel-load", "0"]):
        proc = subprocess.run([sys.executable, "-m", "fmu_wheelset.cli", *argv], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr


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
