"""Input files cannot hang, flood or leak, and relative names stay inside the
FMU (solver/data_files.py, docs/SECURITY.md).

Before: a FIFO as a profile hung forever, /dev/zero was read until memory ran
out (5.4 GB), a 100 MB profile took 1.9 GB, `../../etc/passwd` as an FMU
profile name was opened and its first line echoed in the error, and one doStep
of 1e5 s ran for hours. Now each is refused at once with the file named and
its content never quoted; the FMU's relative names resolve only inside its
resources; a doStep needing more internal steps than solver.max_substeps is
discarded before it starts.
"""
from __future__ import annotations

import os
import threading
import time

import pytest

from solver.data_files import (
    MAX_FILE_BYTES, MAX_FILE_LINES, DataFileError, read_text, resolve_contained,
)
from solver.errors import ProfileError
from solver.profiles.builtins import builtin_profile
from solver.profiles.files import load_profile
from solver.track.sections import TrackError
from solver.track.alignment import load_track

SECRET = "SECRET-TOKEN-7f3a"
# a refused file must be refused at once: 2 s is generous for a stat and a short
# read on a loaded machine, and far below the hang (forever) or the minutes of
# reading a device that this replaces
QUICK_S = 2.0


def within(seconds, call, *args, **kwargs):
    """(exception raised, elapsed s) of call(*args) run in a daemon thread; fails
    if it has not returned after `seconds` (a hang)."""
    out = {}

    def run():
        t0 = time.perf_counter()
        try:
            call(*args, **kwargs)
            out["exc"] = None
        except Exception as exc:  # noqa: BLE001 - inspected by the test
            out["exc"] = exc
        out["elapsed"] = time.perf_counter() - t0

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{call.__name__} still running after {seconds} s (hang)"
    return out["exc"], out["elapsed"]


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "profile.txt"
    os.mkfifo(path)
    yield path
    # release a reader that would still be blocked in open() (the old behaviour)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
    except OSError:
        pass


def test_fifo_profile_refused_without_hanging(fifo):
    exc, elapsed = within(QUICK_S, load_profile, str(fifo), "wheel")
    assert isinstance(exc, ProfileError), exc
    assert "FIFO" in str(exc) and str(fifo) in str(exc)


def test_fifo_track_refused_without_hanging(tmp_path):
    path = tmp_path / "track.toml"
    os.mkfifo(path)
    try:
        exc, _ = within(QUICK_S, load_track, str(path))
        assert isinstance(exc, TrackError) and "FIFO" in str(exc), exc
    finally:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_device_profile_refused(device):
    if not os.path.exists(device):
        pytest.skip(f"no {device} here")
    exc, _ = within(QUICK_S, load_profile, device, "rail")
    assert isinstance(exc, ProfileError) and "device" in str(exc), exc


def test_device_behind_a_track_link_refused(tmp_path):
    link = tmp_path / "track.toml"
    os.symlink("/dev/zero", link)
    exc, _ = within(QUICK_S, load_track, str(link))
    assert isinstance(exc, TrackError) and "device" in str(exc), exc


def test_oversize_profile_refused_unread(tmp_path):
    """A 100 MB profile (sparse: no disk used) is refused on its size, not read."""
    path = tmp_path / "huge.txt"
    with open(path, "wb") as fh:
        fh.write(b"0 0\n")
        fh.truncate(100 * 1024 * 1024)
    exc, _ = within(QUICK_S, load_profile, str(path), "wheel")
    assert isinstance(exc, ProfileError) and "larger than the 10 MB allowed" in str(exc), exc


def test_too_many_lines_refused(tmp_path):
    path = tmp_path / "long.txt"
    path.write_text("# kind: wheel\n" + "1 2\n" * (MAX_FILE_LINES + 1))
    assert path.stat().st_size < MAX_FILE_BYTES
    exc, _ = within(QUICK_S, load_profile, str(path), "wheel")
    assert isinstance(exc, ProfileError) and f"more than {MAX_FILE_LINES} lines" in str(exc), exc


@pytest.mark.parametrize("line", [f"{SECRET}", f"{SECRET} 1 2", f"1 {SECRET}", f"1 2 {SECRET}",
                                  f"# kind: {SECRET}", f"# units: {SECRET}"])
def test_profile_errors_name_the_line_never_its_content(tmp_path, line):
    lines = [f"{x:.1f} {0.01 * x * x:.4f}" for x in range(-20, 20)]
    lines.insert(3, line)
    path = tmp_path / "p.txt"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ProfileError) as info:
        load_profile(str(path), "wheel")
    message = str(info.value)
    assert SECRET not in message, message
    assert str(path) in message and "line 4" in message, message


@pytest.mark.parametrize("text", [f"type,length_m\nstraight,{SECRET}\n",
                                  f"type,{SECRET}\nstraight,10\n",
                                  f"type,length_m,radius_m,direction\ncurve,10,300,{SECRET}\n"])
def test_track_errors_never_quote_content(tmp_path, text):
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(TrackError) as info:
        load_track(str(path))
    assert SECRET not in str(info.value), str(info.value)


def test_passwd_as_profile_is_not_echoed():
    if not os.path.isfile("/etc/passwd"):
        pytest.skip("no /etc/passwd")
    with pytest.raises(ProfileError) as info:
        load_profile("/etc/passwd", "rail")
    assert "root:" not in str(info.value) and "/bin/" not in str(info.value), str(info.value)


def test_builtin_profiles_within_the_caps():
    """The caps leave room: every shipped profile file is far below them."""
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "profiles")
    for name in os.listdir(folder):
        if name.endswith(".txt"):
            text = read_text(os.path.join(folder, name))
            assert text.count("\n") < MAX_FILE_LINES / 50
    assert builtin_profile("S1002").kind == "wheel"


# ---------------------------------------------------------------------------
# containment of relative names
# ---------------------------------------------------------------------------
def test_relative_names_stay_inside(tmp_path):
    resources = tmp_path / "resources"
    (resources / "profiles").mkdir(parents=True)
    (resources / "profiles" / "w.txt").write_text("x")
    (tmp_path / "outside.txt").write_text("x")
    os.symlink(tmp_path / "outside.txt", resources / "profiles" / "link.txt")
    folders = [str(resources)]
    assert resolve_contained("profiles/w.txt", folders) == str((resources / "profiles" / "w.txt").resolve())
    assert resolve_contained("profiles/missing.txt", folders) is None
    for escaping in ("../outside.txt", "profiles/../../outside.txt", "profiles/link.txt",
                     "../../../../../../etc/passwd"):
        with pytest.raises(DataFileError, match="leads out of"):
            resolve_contained(escaping, folders)
    # an absolute path is taken on purpose
    assert resolve_contained(str(tmp_path / "outside.txt"), folders) == str(tmp_path / "outside.txt")
    assert resolve_contained("", folders) is None and resolve_contained("a\0b", folders) is None


# ---------------------------------------------------------------------------
# through the FMU: traversal refused, endless doStep discarded
# ---------------------------------------------------------------------------
fmpy = pytest.importorskip("fmpy")
from test_security_state import Host  # noqa: E402  (one logger for the module's instances)


def _init_with_strings(md, unzipped, name, strings):
    h = Host(md, unzipped, name, initialize=False)
    for key, value in strings.items():
        h.s.setString([h.vr[key]], [value])
    n = len(h.messages)
    try:
        h.initialize()
    except fmpy.fmi1.FMICallException as exc:
        # the native front end: a parameter that does not initialize is fmi2Error
        assert exc.status == 3, exc
    return h, h.messages[n:]


@pytest.mark.parametrize("parameter, value", [
    ("wheel.profile", "../../../../../../../../etc/passwd"),
    ("rail.profile", "profiles/../../../../../../../../etc/passwd"),
    ("track.scenario", "../../../../../../../../etc/hosts.toml"),
])
def test_fmu_relative_name_cannot_leave_the_resources(md, unzipped, parameter, value):
    h, messages = _init_with_strings(md, unzipped, "traversal", {parameter: value})
    try:
        errors = [m for status, _, m in messages if status >= 3]
        assert errors and "leads out of" in " ".join(errors), messages
        assert not any("root:" in m for _, _, m in messages)
        with pytest.raises(fmpy.fmi1.FMICallException) as info:
            h.step()
        assert info.value.status == 3          # fmi2Error: the instance is in the error state
    finally:
        h.close()


def test_fmu_resource_file_still_found(md, unzipped):
    h, messages = _init_with_strings(md, unzipped, "resource-file",
                                     {"track.scenario": "scenarios/kang-r320.toml",
                                      "wheel.profile": "profiles/S1002.txt"})
    try:
        assert not [m for status, _, m in messages if status >= 3], messages
        h.step()
    finally:
        h.close()


def test_fmu_huge_do_step_discarded_quickly(md, unzipped):
    """One doStep of 1e5 s (1e8 internal steps of 1 ms: hours) is discarded before it
    starts, with the reason; the instance then steps on normally."""
    h = Host(md, unzipped, "long-step")
    try:
        h.step(2)
        before = h.observe()
        n = len(h.messages)
        t0 = time.perf_counter()
        with pytest.raises(fmpy.fmi1.FMICallException) as info:
            h.s.doStep(currentCommunicationPoint=h.t, communicationStepSize=1.0e5)
        elapsed = time.perf_counter() - t0
        assert info.value.status == 2
        assert elapsed < 1.0, f"the refused doStep took {elapsed:.2f} s"
        text = " ".join(m for status, _, m in h.messages[n:] if status >= 3)
        assert "100000000 internal steps" in text and "solver.max_substeps" in text, text
        assert h.observe() == before
        h.step()
    finally:
        h.close()


def test_fmu_max_substeps_parameter(md, unzipped):
    h = Host(md, unzipped, "few-substeps", initialize=False)
    try:
        h.s.setInteger([h.vr["solver.max_substeps"]], [10])
        # fixed steps, so that a step's count of internal steps is known before it runs
        h.s.setInteger([h.vr["solver.integrator"]], [0])
        # on the rigid track, where RK4's default step is the 1 ms maximum (the
        # lumped rail bodies hold it to about 25 us, their fastest mode)
        h.s.setInteger([h.vr["track.model"]], [0])
        h.initialize()
        h.s.doStep(currentCommunicationPoint=0.0, communicationStepSize=0.01)   # 10 substeps
        with pytest.raises(fmpy.fmi1.FMICallException):
            h.s.doStep(currentCommunicationPoint=0.01, communicationStepSize=0.011)  # 11
    finally:
        h.close()
