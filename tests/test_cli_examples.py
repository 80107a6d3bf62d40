"""Every command's --help has an example that pastes: each example line of each
of the `wheelset-fmu` commands' help runs as printed, from a folder laid out as
the repository (its examples/, profiles/, scenarios/ and presets/, and
dist/Wheelset.fmu as `make fmu` leaves it), and exits 0."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fmu_wheelset.cli.main import build_parser

ROOT = Path(__file__).resolve().parent.parent


def command_helps() -> dict:
    parser = build_parser()
    action = next(a for a in parser._actions if hasattr(a, "choices") and isinstance(a.choices, dict))
    return {name: sub.format_help() for name, sub in action.choices.items()}


def example_lines(help_text: str) -> list:
    """The example command lines of a help text: indented lines that start with
    `wheelset-fmu `, a trailing backslash joining the next line, `#` comments off."""
    lines, pending = [], ""
    for line in help_text.splitlines():
        stripped = line.strip()
        if pending:
            pending += " " + stripped
        elif line.startswith(" ") and stripped.startswith("wheelset-fmu "):
            pending = stripped
        else:
            continue
        if pending.endswith("\\"):
            pending = pending[:-1].rstrip()
            continue
        lines.append(" ".join(shlex.split(pending, comments=True)))
        pending = ""
    return lines


HELPS = command_helps()
EXAMPLES = [(name, line) for name, text in sorted(HELPS.items()) for line in example_lines(text)]


def test_every_command_has_an_example():
    """18 commands, each with at least one example line in its --help."""
    assert len(HELPS) == 18, sorted(HELPS)
    missing = sorted(set(HELPS) - {name for name, _ in EXAMPLES})
    assert not missing, f"commands without an example in --help: {missing}"
    for name, line in EXAMPLES:
        assert line.split()[1] == name, line


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, wheelset_fmu):
    """A folder laid out as the repository after `make fmu`."""
    folder = tmp_path_factory.mktemp("examples")
    for name in ("examples", "profiles", "scenarios", "presets"):
        os.symlink(ROOT / name, folder / name)
    # the data files an example names inside solver/ (not the package: a folder
    # without __init__.py leaves the import of `solver` to the repository's)
    data = Path("solver") / "profiles" / "data"
    shutil.copytree(ROOT / data, folder / data)
    (folder / "dist").mkdir()
    (folder / "docs").mkdir()                   # variables --markdown --out docs/variables.md
    shutil.copy2(wheelset_fmu, folder / "dist" / "Wheelset.fmu")   # the build example rewrites it
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("name, line", EXAMPLES, ids=[f"{n}:{k}" for k, (n, _) in enumerate(EXAMPLES)])
def test_the_example_runs(workdir, name, line):
    args = shlex.split(line)[1:]
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, "-m", "fmu_wheelset.cli", *args], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, f"{line}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    assert not re.search(r"Traceback \(most recent call last\)", proc.stderr), proc.stderr[-2000:]
