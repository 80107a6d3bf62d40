"""The `wheelset-fmu` command line as a new user meets it: the examples of the
help texts paste and run, profile files are taken wherever profile names are,
the scenarios have the FMU's names, nothing is left in the temporary folder
(the mistakes and their exit statuses: tests/test_security_cli.py)."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from fmu_wheelset.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "profiles"


def help_examples():
    """(command, example argv) of every `wheelset-fmu ...` line (with its
    backslash continuations) in the subcommands' descriptions."""
    parser = build_parser()
    examples = []
    for name, sub in parser._subparsers._group_actions[0].choices.items():
        text = re.sub(r"\\\n\s*", " ", sub.description or "")
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("wheelset-fmu "):
                examples.append((name, shlex.split(line, comments=True)[1:]))
    return examples


def test_every_command_with_examples_has_pasteable_ones():
    commands = {name for name, _ in help_examples()}
    assert {"conicity", "geometry", "creep", "simulate", "sweep"} <= commands, commands


@pytest.mark.parametrize("command, argv", help_examples(),
                         ids=[" ".join(a) for _, a in help_examples()])
def test_help_example_parses(command, argv, monkeypatch):
    """Every example line of a help text is a valid command line (no [options],
    no a|b alternatives): argparse takes it as it stands (its files aside, which
    may be outputs)."""
    monkeypatch.chdir(ROOT)
    args = build_parser().parse_args(argv)
    assert args.command == command


def test_conicity_help_example_runs_and_prints_what_it_says(capsys):
    """The example of `wheelset-fmu conicity --help`, pasted: it prints the value
    its text announces (S1002/UIC60 1:40 at 3 mm; EN 15302 Annex B's S1002/UIC60
    reference is 0.177 at 3 mm for this pair, tests/test_geometry.py)."""
    (argv,) = [a for c, a in help_examples() if c == "conicity"]
    description = build_parser()._subparsers._group_actions[0].choices["conicity"].description
    announced = re.search(r"prints (\d\.\d+)", description).group(1)
    assert main(argv) == 0
    assert capsys.readouterr().out.splitlines()[0] == announced


@pytest.mark.parametrize("command", [
    ["geometry", "--y=0:4:2", "--out", "{tmp}/g.csv"],
    ["conicity"],
    ["creep", "--out", "{tmp}/creep.png"],
])
def test_profile_files_are_taken_where_names_are(command, tmp_path, capsys):
    """The project's own profile files (profiles/*.txt, written from the built-in
    definitions by profiles/write_builtin_profiles.py) are taken by every
    command that takes a profile name, and give the built-in's results: the
    conicity within 1e-4 (the files' points are the definitions to 1 um, the
    resampling differs at that level)."""
    argv = [a.replace("{tmp}", str(tmp_path)) for a in command]
    assert main(argv + ["--wheel", str(PROFILES / "S1002.txt"),
                        "--rail", str(PROFILES / "UIC60.txt")]) == 0
    from_files = capsys.readouterr().out
    assert main(argv + ["--wheel", "S1002", "--rail", "UIC60"]) == 0
    from_names = capsys.readouterr().out
    if command[0] == "conicity":
        assert float(from_files.split()[0]) == pytest.approx(float(from_names.split()[0]), abs=1e-4)


def test_scenario_names_are_the_fmus_track_names():
    """One set of names: the command line's scenarios are the FMU's
    track.scenario names; the earlier names stay as aliases."""
    from fmu_wheelset.cli.args import SCENARIO_ALIASES, SCENARIOS, load_scenario
    from solver.track.builtins import TRACKS
    assert set(SCENARIOS) == set(TRACKS.names())
    for name in SCENARIOS:
        scenario = load_scenario(name)
        assert scenario.name == name
        # each runs on the FMU track of its name
        assert scenario.params.track == name
    for alias in SCENARIO_ALIASES:
        assert load_scenario(alias).params.track in TRACKS.names()
    assert load_scenario("ren-jin-r400-100").params == load_scenario("ren-jin-r400").params
    assert load_scenario("ren-jin-r400-80").params.speed == pytest.approx(80 / 3.6)


def test_simulate_runs_a_scenario_by_its_fmu_name(tmp_path, capsys):
    out = tmp_path / "run.csv"
    assert main(["simulate", "--scenario", "straight", "--duration", "0.02", "--speed", "4",
                 "--out", str(out), "--no-progress"]) == 0
    assert "straight:" in capsys.readouterr().out
    header = out.read_text().splitlines()[0].split(",")
    assert "wheelset.y" in header


def test_simulate_exits_1_when_the_run_stops(tmp_path, capfd):
    """A valid scenario whose run stops (the largest penetration allowed, 1 um, is
    below the static Hertz approach of about 0.1 mm): exit 1, one line saying
    why, the CSV up to there."""
    scenario = tmp_path / "tight.toml"
    scenario.write_text("duration = 0.05\n[wheelset]\nmax_penetration = 1e-6\n"
                        "speed = 5.0\ntrack = \"straight\"\n")
    out = tmp_path / "run.csv"
    assert main(["simulate", "--scenario", str(scenario), "--out", str(out), "--no-progress"]) == 1
    lines = [line for line in capfd.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and "excessive penetration" in lines[0], lines
    assert out.exists()


@pytest.mark.fmu
@pytest.mark.cosim      # builds the FMU and runs the vehicle over four of them
def test_vehicle_leaves_no_temporary_folder(tmp_path):
    """`vehicle` without --fmu builds the FMU into a temporary folder: removed
    at the end (it left 11 MB per call), with the FMU's extractions."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(tmp))
    proc = subprocess.run([sys.executable, "-m", "fmu_wheelset.cli", "vehicle", "--duration",
                           "0.02", "--average-last", "0"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp.iterdir()) == []


def test_simulate_takes_a_preset(tmp_path, capsys):
    """--preset loaded-passenger: the wheelset carries a quarter coach, so the
    two wheel loads at the start sum to about (9307.5 + 1813) kg x g = 109.1 kN
    (the scenario's own free wheelset: 17.8 kN). 1 %: the start is the
    initialization's equilibrium at the scenario's 1 mm offset with creep at
    5 m/s (measured 0.16 % below the weight), not what this test is about; it
    tells the preset's load from the free wheelset's by a factor of six."""
    import numpy as np
    out = tmp_path / "run.csv"
    assert main(["simulate", "--scenario", "straight", "--preset", "loaded-passenger",
                 "--duration", "0.01", "--out", str(out), "--no-progress"]) == 0
    data = np.genfromtxt(out, delimiter=",", names=True)
    total = data["wheelleftQ"][0] + data["wheelrightQ"][0]
    assert total == pytest.approx((9307.5 + 1813.0) * 9.81, rel=1e-2)


def test_sweep_cases_take_the_plans_preset(tmp_path):
    """A plan's preset reaches every case: the scenario's values, then the
    preset's, then the case's own; an unknown preset is refused before any case."""
    from fmu_wheelset.sweeps import sweep as sw
    from fmu_wheelset.sweeps.plan import PlanError
    plan = tmp_path / "p.toml"
    plan.write_text('scenario = "straight"\npreset = "loaded-passenger"\nduration = 0.1\n'
                    '[grid]\nsuspended_mass = [5000.0, 9307.5]\n')
    cases = sw.load_sweep(plan).cases
    params = [sw.case_scenario(c).params for c in cases]
    assert [p.bogie for p in params] == [True, True]                   # from the preset
    assert [p.suspended_mass for p in params] == [5000.0, 9307.5]      # the case's own
    assert all(p.speed == 5.0 for p in params)                         # the scenario's
    plan.write_text('preset = "loaded-pasenger"\n[grid]\nspeed_kmh = [60.0]\n')
    with pytest.raises(PlanError, match="loaded-pasenger"):
        sw.load_sweep(plan)
