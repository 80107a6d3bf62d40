"""Compatibility information in the FMI project's format (`wheelset-fmu compat`,
fmu_wheelset/cli/commands/compat.py): three validation cases as FMU + _in.csv +
_ref.csv + _ref.opt + README in the FMI Cross-Check layout.

Each case folder is checked with FMPy's cross-check validator
(`validate_test_fmu`: layout, sizes, the model description, the options, the
CSVs against the FMU's variables) and `fmpy.validation.validate_fmu`, each FMU
with fmu-manipulation-toolbox's checker (`fmutool -check`), and each case is
run in FMPy (an independent run from the files alone) and in libcosim (its own
FMI importer, FMI Library; a last-value observer reading every variable), both
compared with the reference within the case's RelTol (_ref.opt: 1e-6, each
signal's absolute tolerance RelTol times its largest magnitude, as the
Cross-Check results state theirs); FMPy's run also by the Cross-Check's rule
(`fmpy.cross_check.validate_result`). libcosim counts time in nanoseconds and
hands the FMU communication points that differ from FMPy's in the last bits:
over 4 to 12 s of hunting and curving its outputs differ from FMPy's by up to
5e-10 of their largest magnitude (measured), well within RelTol.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

fmpy = pytest.importorskip("fmpy")
from fmpy.cross_check import validate_result  # noqa: E402
from fmpy.cross_check.validate_vendor_repo import read_csv, validate_test_fmu  # noqa: E402
from fmpy.util import read_ref_opt_file  # noqa: E402
from fmpy.validation import validate_fmu  # noqa: E402

from fmu_wheelset.cli.commands import compat  # noqa: E402

HOSTS = Path(__file__).resolve().parent / "hosts"

pytestmark = pytest.mark.fmu        # `wheelset-fmu compat` builds an FMU per case


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    out = tmp_path_factory.mktemp("compat")
    proc = subprocess.run([sys.executable, "-m", "fmu_wheelset.cli", "compat", str(out)],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = sorted(p.parent for p in out.glob("fmus/2.0/cs/linux64/wheelset-fmu/*/*/*.fmu"))
    assert [f.name for f in found] == sorted(c.name for c in compat.CASES)
    assert (out / "README.md").is_file()
    return found


def files_of(folder):
    name = folder.name
    return {suffix: folder / f"{name}{suffix}" for suffix in (".fmu", "_in.csv", "_ref.csv",
                                                               "_ref.opt")}


def assert_close(got, reference, rel_tol, label, cross_check=True):
    if cross_check:
        problem = validate_result(got, reference, 0.0, float(reference["time"][-1]))
        assert problem is None, (label, problem)
    assert np.allclose(got["time"], reference["time"], rtol=0.0, atol=1e-9), label
    largest = 0.0
    for name in reference.dtype.names[1:]:
        a = np.asarray(got[name], dtype=float)
        b = np.asarray(reference[name], dtype=float)
        assert a.shape == b.shape, (label, name)
        scale = max(float(np.max(np.abs(b))), 1e-12)
        worst = float(np.max(np.abs(a - b))) / scale
        assert worst <= rel_tol, (label, name, worst)
        largest = max(largest, worst)
    print(f"{label}: largest difference {largest:.1e} of a signal's largest magnitude")


def test_every_case_has_the_cross_check_files_and_passes_fmpys_validator(folders):
    for folder in folders:
        files = files_of(folder)
        for path in (*files.values(), folder / "README.md"):
            assert path.is_file(), path
        assert validate_test_fmu(str(folder)) == [], folder.name
        assert validate_fmu(str(files[".fmu"])) == [], folder.name
        opts = read_ref_opt_file(str(files["_ref.opt"]))
        reference = read_csv(str(files["_ref.csv"]))
        assert reference["time"][-1] == pytest.approx(opts["StopTime"])
        assert reference.size == int(round(opts["StopTime"] / opts["StepSize"])) + 1


def test_fmu_manipulation_toolbox_finds_no_problem(folders):
    fmutool = Path(sys.executable).parent / "fmutool"
    if not fmutool.exists():
        pytest.skip("fmu-manipulation-toolbox not installed (pip install -e '.[test]')")
    for folder in folders:
        proc = subprocess.run([str(fmutool), "-input", str(files_of(folder)[".fmu"]), "-check"],
                              capture_output=True, text=True, timeout=300)
        text = proc.stdout + proc.stderr
        assert proc.returncode == 0, text[-2000:]
        assert "This FMU seems to be compliant with FMI-2.0." in text, text[-2000:]
        assert "No semantic error against the FMI-2 standard." in text, text[-2000:]
        assert "ERROR" not in text and "WARNING" not in text, text[-2000:]


def test_the_cases_run_in_fmpy_from_their_files_alone(folders):
    for folder in folders:
        files = files_of(folder)
        opts = read_ref_opt_file(str(files["_ref.opt"]))
        reference = read_csv(str(files["_ref.csv"]))
        result = fmpy.simulate_fmu(str(files[".fmu"]), start_time=opts["StartTime"],
                                   stop_time=opts["StopTime"], output_interval=opts["StepSize"],
                                   input=read_csv(str(files["_in.csv"])),
                                   output=list(reference.dtype.names[1:]))
        assert_close(result, reference, opts["RelTol"], f"FMPy {folder.name}")


def test_the_cases_run_in_libcosim(folders, tmp_path):
    if importlib.util.find_spec("libcosimpy") is None:
        pytest.skip("libcosimpy not installed")
    for folder in folders:
        files = files_of(folder)
        opts = read_ref_opt_file(str(files["_ref.opt"]))
        reference = read_csv(str(files["_ref.csv"]))
        out = tmp_path / f"{folder.name}_libcosim.csv"
        proc = subprocess.run([sys.executable, str(HOSTS / "run_libcosim_case.py"),
                               str(files[".fmu"]), str(files["_in.csv"]), repr(opts["StopTime"]),
                               repr(opts["StepSize"]), json.dumps(list(reference.dtype.names[1:])),
                               str(out)],
                              env={"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")},
                              capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr[-3000:]
        got = read_csv(str(out))
        # libcosim reports the outputs after each step: the reference from its
        # second row (t = StepSize) on
        assert_close(got, reference[1:], opts["RelTol"], f"libcosim {folder.name}",
                     cross_check=False)
