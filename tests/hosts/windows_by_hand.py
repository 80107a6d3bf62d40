"""The FMU's win64 binary under Wine, by hand (needs Debian's wine64 and the
ziglang package: `apt-get install wine64`, `pip install ziglang`).

    .venv/bin/python tests/hosts/windows_by_hand.py [--work /tmp/wheelset-windows-check]

Builds the FMU with its win64 Wheelset.dll (build_fmu.py --platforms
linux64,win64, cross-compiled with zig cc), cross-builds the project's C host
(tests/c_host/host.c: LoadLibrary + the FMI 2.0 C API) for win64 with zig,
and runs it under Wine on the extracted FMU. There is no Windows CPython on
this machine (none can be had from the package registries it reaches:
docs/hosts.md), so every run must end the way a host on a Windows machine
without the FMU's Python sees it: fmi2Instantiate returns NULL with one
logged line giving the reason, and the host exits normally (its exit status 3,
"fmi2Instantiate returned NULL"; never a crash). Cases: the interpreter the
build recorded (a Linux libpython), a DLL that is not Python
(WHEELSET_FMU_LIBPYTHON=kernel32.dll), a python311.dll that does not exist,
the out-of-process mode (no python.exe for the worker), another build's GUID.
Prints one line per case; the results are in docs/hosts.md.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

CASES = [
    # (label, extra environment, GUID override, what the logged reason must contain)
    ("the recorded interpreter (a Linux libpython)", {}, None, "cannot load the Python runtime"),
    ("WHEELSET_FMU_LIBPYTHON=C:\\windows\\system32\\kernel32.dll (not a Python)",
     {"WHEELSET_FMU_LIBPYTHON": "C:\\windows\\system32\\kernel32.dll"}, None, "has no symbol Py_"),
    ("WHEELSET_FMU_LIBPYTHON=C:\\Python311\\python311.dll (absent)",
     {"WHEELSET_FMU_LIBPYTHON": "C:\\Python311\\python311.dll"}, None, "does not exist"),
    ("WHEELSET_FMU_OUT_OF_PROCESS=1 (the worker needs python.exe)",
     {"WHEELSET_FMU_OUT_OF_PROCESS": "1", "WHEELSET_FMU_PYTHON": "C:\\Python311\\python.exe"}, None,
     "no Python interpreter"),
    ("another build's GUID", {}, "{00000000-0000-0000-0000-000000000000}", "does not match this FMU's"),
]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default="/tmp/wheelset-windows-check")
    args = parser.parse_args(argv)
    wine = shutil.which("wine") or shutil.which("wine64")
    if wine is None:
        print("wine is not installed (apt-get install wine64)", file=sys.stderr)
        return 2
    from fmpy import read_model_description
    from fmu_wheelset.packaging.build import build_fmu
    from fmu_wheelset.packaging.cross_build import fmi_include_dir, zig_command
    zig = zig_command()
    if zig is None:
        print("zig is not installed (pip install ziglang)", file=sys.stderr)
        return 2
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    fmu = build_fmu(work / "Wheelset.fmu", quiet=True, platforms=("linux64", "win64"), numba_cache=False)
    folder = work / "fmu"
    with zipfile.ZipFile(fmu) as z:
        z.extractall(folder)
    host = work / "host.exe"
    subprocess.run([*zig, "cc", "-target", "x86_64-windows-gnu", "-O1", "-o", str(host),
                    str(ROOT / "tests" / "c_host" / "host.c"), f"-I{fmi_include_dir()}"], check=True)
    version = subprocess.run([wine, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{version}; host.exe and Wheelset.dll cross-built with zig "
          f"{subprocess.run([*zig, 'version'], capture_output=True, text=True).stdout.strip()}")
    md = read_model_description(str(fmu))
    y = next(v.valueReference for v in md.modelVariables if v.name == "wheelset.y")
    env_base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/root"),
                "WINEPREFIX": str(work / "wineprefix"), "WINEDEBUG": "-all"}
    subprocess.run([wine, "wineboot", "--init"], env=env_base, capture_output=True, timeout=600)
    failures = 0
    for label, extra, guid, expected in CASES:
        proc = subprocess.run([wine, str(host), f"Z:{folder}", guid or md.guid, "0.001", "10", f"o:{y}"],
                              env={**env_base, **extra}, capture_output=True, text=True, timeout=600)
        reason = next((line.split("fmi2Instantiate: ", 1)[1] for line in proc.stderr.splitlines()
                       if "fmi2Instantiate: " in line), "")
        ok = proc.returncode == 3 and expected in reason
        failures += not ok
        print(f"{'ok ' if ok else 'BAD'} {label}: exit {proc.returncode}; logged: {reason[:400] or proc.stderr[-400:]}")
    print(f"{len(CASES) - failures}/{len(CASES)} cases as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
