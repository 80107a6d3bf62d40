"""The self-contained FMU on a machine without Python, by hand (root only).

    sudo .venv/bin/python tests/hosts/standalone_by_hand.py dist/Wheelset.fmu \
        [--runs 10] [--ordinary dist/Wheelset-ordinary.fmu] [--debian-root /srv/bookworm]

Two ways to take Python away, each run in a new process with an empty
environment (`env -i PATH=/usr/bin:/bin HOME=/root`), the project's C host
(tests/c_host/host.c) running 1 s of 1 ms steps with a moving wheelset:

* a mount namespace (`unshare -m`) in which every Python directory of this
  machine is hidden under an empty tmpfs (pyenv's interpreters, Debian's
  /usr/lib/python3*, /work with every virtual environment, ~/.cache with the
  FMU's per-user cache, ~/.local) and every python executable and libpython
  file under /dev/null; each run starts with an empty ~/.cache, as on a fresh
  machine. Half the runs on this CPU, half with the extraction's build-cpu
  manifest naming another CPU (the FMU then installs its generic numba cache);
* with --debian-root, a minimal Debian made beforehand with
  `debootstrap --variant=minbase bookworm DIR http://deb.debian.org/debian`
  (no Python at all): the C host and the extraction copied into it, run with
  chroot (its /proc mounted in a mount namespace).

Each run's outputs are compared with FMPy's run of the same FMU joined to
this script's own interpreter (the project's environment: another runtime,
the environment's numpy, scipy and numba): "clean" is exit 0 and every output
at every step within 1e-9 relative. With --ordinary, an FMU built without
--standalone is run in the namespace first as a control: it must fail
(fmi2Instantiate NULL, naming the missing Python), which shows the hiding works.
Prints a summary; the measured results are in docs/hosts.md.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent
STOP, H = 1.0, 1e-3
READ = ["wheelset.distance", "wheelset.y", "wheelset.z", "wheelset.yaw", "wheel.left.Q",
        "wheel.right.Q", "wheel.left.Y", "contact.left.point[1].normal_force",
        "contact.right.point[1].lateral_force"]
START = {"wheelset.initial_lateral": 0.003}
HIDDEN_DIRS = ["/root/.pyenv", "/usr/lib/python3*", "/usr/local/lib/python3*", "/usr/share/python3*",
               "/work", "/root/.cache", "/root/.local", "/opt/python*", "/usr/lib/x86_64-linux-gnu/python3*"]
HIDDEN_FILES = ["/usr/bin/python*", "/usr/local/bin/python*", "/usr/bin/pydoc*",
                "/usr/lib/x86_64-linux-gnu/libpython3*", "/usr/local/lib/libpython3*"]
STARTUP = re.compile(r"startup: .*total ([\d.]+) s wall, ([\d.]+) s CPU")

REFERENCE = r"""
import json, os, sys
os.environ["WHEELSET_FMU_OUT_OF_PROCESS"] = "0"       # join this interpreter: the project's packages
from fmpy import simulate_fmu
names = json.loads(sys.argv[2])
result = simulate_fmu(sys.argv[1], stop_time=float(sys.argv[3]), output_interval=float(sys.argv[4]),
                      output=names, start_values=json.loads(sys.argv[5]))
print(json.dumps([[float(row[n]) for n in ["time", *names]] for row in result]))
"""


def hidden() -> tuple[list, list]:
    dirs = sorted({d for pattern in HIDDEN_DIRS for d in glob.glob(pattern) if os.path.isdir(d)})
    files = sorted({f for pattern in HIDDEN_FILES for f in glob.glob(pattern)
                    if os.path.isfile(f) or os.path.islink(f)})
    files = [f for f in files if os.path.exists(f)]          # links to something that exists
    return dirs, files


def namespace_script(dirs, files, command) -> str:
    lines = ["set -e", "mount --make-rprivate /"]
    # the files first: some link into a folder hidden next
    lines += [f"mount --bind /dev/null {shlex.quote(os.path.realpath(f))}" for f in files]
    lines += [f"mount -t tmpfs -o size=64m,mode=0755 tmpfs {shlex.quote(d)}" for d in dirs]
    # nothing of Python may be left: no interpreter on PATH, no pyenv, no venv
    lines += ["if command -v python3 >/dev/null 2>&1 && python3 -c pass 2>/dev/null; then "
              "echo 'a python3 still runs' >&2; exit 97; fi",
              *[f"if [ -n \"$(ls -A {shlex.quote(d)})\" ]; then echo '{d} not hidden' >&2; exit 98; fi"
                for d in dirs],
              "exec " + " ".join(shlex.quote(c) for c in command)]
    return "\n".join(lines)


def host_command(host, folder, guid, vr) -> list:
    return ["env", "-i", "PATH=/usr/bin:/bin", "HOME=/root", host, "--startup-timing", str(folder), guid,
            repr(H), str(int(round(STOP / H))),
            f"r:{vr['wheelset.initial_lateral']}={START['wheelset.initial_lateral']!r}",
            *[f"o:{vr[n]}" for n in READ]]


def compare(stdout: str, reference: np.ndarray) -> float:
    rows = np.array([[float(x) for x in line.split()] for line in stdout.splitlines()
                     if line and line[0].isdigit()])
    if rows.shape != reference.shape:
        return float("inf")
    scale = np.maximum(np.abs(reference), 1e-3)
    return float(np.max(np.abs(rows - reference) / scale))


def other_cpu_copy(folder: Path, target: Path) -> Path:
    shutil.copytree(folder, target, symlinks=True)
    path = target / "resources" / "wheelset_numba_cache" / "build-cpu" / "manifest.json"
    doc = json.loads(path.read_text())
    doc["cpu"][1] = "skylake-avx512"
    path.write_text(json.dumps(doc))
    return target


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fmu")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--ordinary", help="an FMU built without --standalone (the control)")
    parser.add_argument("--debian-root", help="a debootstrap --variant=minbase root")
    parser.add_argument("--work", default="/tmp/wheelset-standalone-check",
                        help="work folder (must not lie under a hidden folder)")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("run as root (unshare -m, mount, chroot)", file=sys.stderr)
        return 2
    import fmpy
    from fmpy import read_model_description
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    host = work / "host"
    cc = shutil.which("cc") or shutil.which("gcc")
    subprocess.run([cc, "-O1", "-o", str(host), str(ROOT / "tests" / "c_host" / "host.c"),
                    f"-I{Path(fmpy.__file__).parent / 'c-code'}", "-ldl", "-lm"], check=True)
    folder = work / "fmu"
    with zipfile.ZipFile(args.fmu) as z:
        z.extractall(folder)
    other = other_cpu_copy(folder, work / "fmu-other-cpu")
    md = read_model_description(str(folder / "modelDescription.xml"))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    proc = subprocess.run([sys.executable, "-c", REFERENCE, args.fmu, json.dumps(READ), repr(STOP), repr(H),
                           json.dumps(START)], capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
        return 1
    reference = np.array(json.loads(proc.stdout.strip().splitlines()[-1]))
    print(f"reference: FMPy {fmpy.__version__} joined to {sys.executable} ({len(reference)} rows)")
    dirs, files = hidden()
    print("hidden folders: " + ", ".join(dirs))
    print("hidden files: " + ", ".join(files))

    if args.ordinary:
        control = work / "ordinary"
        with zipfile.ZipFile(args.ordinary) as z:
            z.extractall(control)
        cmd = host_command(str(host), control, read_model_description(args.ordinary).guid, vr)
        p = subprocess.run(["unshare", "-m", "sh", "-c", namespace_script(dirs, files, cmd)],
                           capture_output=True, text=True, timeout=900)
        reason = next((line for line in p.stderr.splitlines() if "fmi2Instantiate:" in line), p.stderr[-300:])
        print(f"control, the ordinary FMU with Python hidden: exit {p.returncode} ({reason.strip()[:300]})")

    def report(label, results):
        clean = sum(1 for code, diff, _ in results if code == 0 and diff <= 1e-9)
        diffs = [d for code, d, _ in results if code == 0]
        times = [t for code, _, t in results if code == 0 and t]
        print(f"{label}: clean runs {clean}/{len(results)}; max relative difference to FMPy "
              f"{max(diffs) if diffs else float('nan'):.2e}; instantiate + initialize + first step "
              + (f"{min(t[0] for t in times):.2f}-{max(t[0] for t in times):.2f} s wall, "
                 f"{min(t[1] for t in times):.2f}-{max(t[1] for t in times):.2f} s CPU" if times else "-"))
        for code, diff, _ in results:
            if code != 0 or diff > 1e-9:
                print(f"  failed run: exit {code}, difference {diff:.2e}")

    for label, extraction in (("namespace, this CPU", folder), ("namespace, another CPU (generic cache)", other)):
        results = []
        for k in range(max(1, args.runs // 2)):
            cmd = host_command(str(host), extraction, md.guid, vr)
            p = subprocess.run(["unshare", "-m", "sh", "-c", namespace_script(dirs, files, cmd)],
                               capture_output=True, text=True, timeout=900)
            m = STARTUP.search(p.stderr)
            results.append((p.returncode, compare(p.stdout, reference) if p.returncode == 0 else float("inf"),
                            (float(m.group(1)), float(m.group(2))) if m else None))
            if p.returncode != 0:
                print(p.stderr[-2000:], file=sys.stderr)
            elif k == 0:
                note = next((line for line in p.stderr.splitlines() if "solver imported from" in line), "")
                print(f"  {label}, first run's log: {note.strip()[:260]}")
        report(label, results)

    if args.debian_root:
        droot = Path(args.debian_root)
        inside = droot / "opt" / "wheelset-check"
        shutil.rmtree(inside, ignore_errors=True)
        inside.mkdir(parents=True)
        shutil.copy2(host, inside / "host")
        for name, source in (("fmu", folder), ("fmu-other-cpu", other)):
            shutil.copytree(source, inside / name, symlinks=True)
        check = subprocess.run(["chroot", str(droot), "sh", "-c",
                                "command -v python3 python || ls -d /usr/lib/python3* /usr/lib/*/libpython* 2>/dev/null"],
                               capture_output=True, text=True)
        version = (droot / "etc" / "debian_version").read_text().strip() if (droot / "etc" / "debian_version").exists() else "?"
        print(f"Debian root {droot} (Debian {version}): Python there: {check.stdout.strip() or 'none'}")
        for label, name in (("Debian minbase chroot, this CPU", "fmu"),
                            ("Debian minbase chroot, another CPU (generic cache)", "fmu-other-cpu")):
            results = []
            for k in range(max(1, args.runs // 2)):
                shutil.rmtree(droot / "root" / ".cache", ignore_errors=True)
                cmd = host_command("/opt/wheelset-check/host", Path("/opt/wheelset-check") / name, md.guid, vr)
                script = (f"set -e; mount -t proc proc {shlex.quote(str(droot / 'proc'))}; "
                          f"exec chroot {shlex.quote(str(droot))} " + " ".join(shlex.quote(c) for c in cmd))
                p = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                                   timeout=900)
                m = STARTUP.search(p.stderr)
                results.append((p.returncode, compare(p.stdout, reference) if p.returncode == 0 else float("inf"),
                                (float(m.group(1)), float(m.group(2))) if m else None))
                if p.returncode != 0:
                    print(p.stderr[-2000:], file=sys.stderr)
            report(label, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
