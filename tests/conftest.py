import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import zipfile

import pytest


@pytest.fixture(scope="session")
def wheelset_fmu(tmp_path_factory):
    """The FMU, built once per test session.

    Every in-process FMI test uses this one file and its one extraction
    (`wheelset_fmu_unzipped`): two different pythonfmu binaries loaded into one
    process share the embedded interpreter's globals and crash it (a pythonfmu
    0.7.0 limit), so the tests never load a second copy.
    """
    from fmu_wheelset.build import build_fmu
    return str(build_fmu(tmp_path_factory.mktemp("fmu") / "Wheelset.fmu", quiet=True))


@pytest.fixture(scope="session")
def wheelset_fmu_unzipped(wheelset_fmu, tmp_path_factory):
    d = tmp_path_factory.mktemp("fmu-unzipped")
    with zipfile.ZipFile(wheelset_fmu) as z:
        z.extractall(d)
    return str(d)
