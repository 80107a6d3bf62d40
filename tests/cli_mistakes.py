"""The mistakes a new user makes on the `wheelset-fmu` command line, as data
(tests/test_security_cli.py runs them; `python tests/cli_mistakes.py` runs them
by hand, each in a process of its own, against this checkout or another one
with --root, and prints the exit status, the stderr line count and whether a
traceback appeared).

Each entry: (command line, exit status, words the one line on stderr must
hold). Exit 2: the command line or an input file is invalid (nothing ran);
exit 1: a valid run that failed. `{name}` is replaced by the path of the file
`make_files` writes under that name.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

GOOD_PROFILE = ROOT / "profiles" / "S1002.txt"


def make_files(folder: Path) -> dict:
    """The input files of the mistakes, written under `folder`; name -> path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    texts = {
        "bad_toml": "[grid\nspeed_kmh = [60.0]\n",
        "huge_grid": "[grid]\nspeed_kmh = [" + ", ".join(f"{60.0 + 0.01 * k}" for k in range(1000))
                     + "]\nradius_m = [" + ", ".join(f"{300.0 + k}" for k in range(1000))
                     + "]\nfriction = [" + ", ".join(f"{0.001 * k}" for k in range(1000)) + "]\n",
        "negative_samples": "[random]\nsamples = -5\nspeed_kmh = [60.0, 100.0]\n",
        "typo": "[grid]\nspeed_kmh = [60.0]\nfricton = [0.3]\n",
        "friction": "[grid]\nspeed_kmh = [60.0]\nfriction = [3.0]\n",
        "zero_duration": "duration = 0.0\n[grid]\nspeed_kmh = [60.0]\n",
        "misspelt_scenario": "scenario = \"kang-r32\"\nduration = 0.1\n[grid]\nspeed_kmh = [60.0, 80.0]\n",
        "unknown_profile_plan": "scenario = \"kang-r320\"\nduration = 0.1\n[grid]\n"
                                "wheel_profile = [\"S1020\"]\n",
        "cone_plan": "duration = 0.1\n[grid]\nwheel_profile = [\"cone:0.9\"]\n",
        "rail_as_wheel_plan": "duration = 0.1\n[fixed]\nwheel_profile = \"UIC60\"\n",
        "bad_track_plan": "duration = 0.1\n[fixed]\ntrack = \"kang-r999\"\n",
        "malformed_profile_plan": "duration = 0.1\n[grid]\nrail_profile = [\"{malformed_profile}\"]\n",
        "unknown_preset_plan": "preset = \"loaded\"\nduration = 0.1\n[grid]\nspeed_kmh = [60.0]\n",
        "good_plan": "scenario = \"kang-r320\"\nduration = 0.02\n[grid]\nspeed_kmh = [60.0]\n",
        "bad_scenario": "duration = [\n",
        "unknown_key_scenario": "duration = 1.0\n[wheelset]\nwheel_profil = \"S1002\"\n",
        "unknown_profile_scenario": "duration = 0.05\n[wheelset]\nwheel_profile = \"S1020\"\n",
        "mass_without_suspension_scenario": "duration = 0.05\n[wheelset]\nsuspended_mass = 9307.5\n",
        "good_scenario": "duration = 0.05\n[wheelset]\nwheel_profile = \"S1002\"\n",
        "derived_cant_plan": "scenario = \"kang-r320\"\nduration = 0.1\n[grid]\n"
                             "speed_kmh = [60.0, 100.0]\nradius_m = [300.0, 600.0]\n"
                             "cant_deficiency_mm = [80.0]\n",
        "malformed_profile": "# kind: wheel\n0 0\n1 x\n2 0\n",
        "empty_profile": "",
        "not_an_fmu": "this is not an FMU\n",
        "fmu_without_description": None,      # a zip without modelDescription.xml
    }
    paths = {}
    for name, text in texts.items():
        path = folder / (name + (".fmu" if "fmu" in name else ".txt" if "profile" in name
                                 and "plan" not in name and "scenario" not in name else ".toml"))
        paths[name] = path
    for name, text in texts.items():
        if text is None:
            import zipfile
            with zipfile.ZipFile(paths[name], "w") as archive:
                archive.writestr("readme.txt", "no model description")
            continue
        paths[name].write_text(text.replace("{malformed_profile}", str(paths["malformed_profile"])))
    paths["folder"] = folder
    paths["missing_folder"] = folder / "no" / "such" / "folder"
    paths["good_profile"] = GOOD_PROFILE
    return paths


# (command line, exit status, words of the one line on stderr)
MISTAKES = [
    # usage
    ([], 2, ["a command is needed"]),
    (["no-such-command"], 2, ["invalid choice"]),
    (["creep", "--no-such-option"], 2, ["unrecognized arguments"]),
    (["simulate", "--scenari", "ren-jin-r400"], 2, ["unrecognized arguments", "--scenari"]),
    (["geometry", "--whee", "S1002"], 2, ["unrecognized arguments", "--whee"]),
    (["geometry", "--y", "-12:12:0.1"], 2, ["--y", "expected one argument", "--y=-12:12:0.1"]),
    (["simulate", "--duration"], 2, ["--duration", "expected one argument"]),
    (["simulate", "--duration", "abc"], 2, ["--duration", "not a number"]),
    (["env", "--bogus"], 2, ["unrecognized arguments"]),
    # values out of range
    (["simulate", "--duration", "0"], 2, ["--duration", "(0, 3600] s"]),
    (["simulate", "--duration", "nan"], 2, ["--duration", "not finite"]),
    (["simulate", "--internal-step", "1"], 2, ["--internal-step", "[1e-07, 0.01] s"]),
    (["simulate", "--tolerance", "0"], 2, ["--tolerance"]),
    (["simulate", "--speed", "200"], 2, ["--speed", "(0, 150] m/s"]),
    (["creep", "--wheel-load", "0"], 2, ["--wheel-load", "(0, 1000] kN"]),
    (["creep", "--friction", "5"], 2, ["--friction", "[0, 2]"]),
    (["creep", "--poisson", "0.5"], 2, ["--poisson", "[0, 0.5)"]),
    (["creep", "--speed", "inf"], 2, ["--speed", "not finite"]),
    (["creep", "--y", "40"], 2, ["--y", "[-30, 30] mm"]),
    (["patch", "--cell", "0"], 2, ["--cell", "[0.1, 5] mm"]),
    (["patch", "--wheel-load", "-5"], 2, ["--wheel-load"]),
    (["geometry", "--gauge", "1.435"], 2, ["--gauge", "[1000, 2000] mm"]),
    (["geometry", "--inclination", "0.025"], 2, ["--inclination", "1:5"]),
    (["geometry", "--yaw", "1e9"], 2, ["--yaw", "mrad"]),
    (["geometry", "--y=5:1:0.1"], 2, ["--y", "bad range"]),
    (["geometry", "--epsilon", "0"], 2, ["--epsilon"]),
    (["conicity", "--amplitude", "0"], 2, ["--amplitude"]),
    (["profiles", "--step", "0"], 2, ["--step"]),
    (["vehicle", "--speed", "0"], 2, ["--speed", "(0, 150] m/s"]),
    (["vehicle", "--radius", "abc"], 2, ["--radius"]),
    (["vehicle", "--radius", "20"], 2, ["--radius", "50 m"]),
    (["vehicle", "--duration", "1"], 2, ["--average-last", "--duration"]),
    (["cosim-track", "--sleeper-spacing", "5"], 2, ["--sleeper-spacing", "[0.1, 2] m"]),
    (["stability", "--speeds", "10,abc"], 2, ["--speeds", "abc"]),
    (["stability", "--v-min", "100", "--v-max", "50"], 2, ["--v-min", "--v-max"]),
    # names and choices
    (["simulate", "--scenario", "no-such-scenario"], 2, ["no-such-scenario", "ren-jin-r400"]),
    (["simulate", "--integrator", "euler"], 2, ["--integrator", "invalid choice"]),
    (["simulate", "--preset", "loaded-pasenger"], 2, ["--preset", "loaded-passenger"]),
    (["simulate", "--preset", "{bad_toml}"], 2, ["--preset", "not valid TOML"]),
    (["simulate", "--contact-geometry", "fast"], 2, ["--contact-geometry"]),
    (["creep", "--model", "magic"], 2, ["--model", "invalid choice"]),
    (["conicity", "--wheel", "NoSuchWheel"], 2, ["NoSuchWheel", "S1002"]),
    (["conicity", "--wheel", "cone:0.9"], 2, ["cone:0.9", "(0, 0.5]"]),
    (["geometry", "--wheel", "UIC60"], 2, ["UIC60 is a rail profile"]),
    (["creep", "--rail", "S1002"], 2, ["S1002 is a wheel profile"]),
    (["stability", "--wheel-profile", "S1020"], 2, ["S1020"]),
    (["cosim-track", "--rail", "UIC99"], 2, ["UIC99"]),
    (["profiles", "--kind", "tyre"], 2, ["--kind", "invalid choice"]),
    (["report", "--backend", "opensees"], 2, ["--backend", "invalid choice"]),
    (["build", "--platforms", "win32"], 2, ["win32"]),
    # input files
    (["geometry", "--wheel", "{missing_folder}/wheel.txt"], 2, ["no such file"]),
    (["creep", "--wheel", "{malformed_profile}"], 2, ["line 3"]),
    (["geometry", "--wheel", "{empty_profile}"], 2, ["empty_profile"]),
    (["profiles", "--check", "{missing_folder}/p.txt"], 2, ["not found"]),
    (["profiles", "--check", "{bad_toml}", "--kind", "wheel"], 2, ["line 1"]),
    (["simulate", "--scenario", "{bad_scenario}"], 2, ["not valid TOML"]),
    (["simulate", "--scenario", "{unknown_key_scenario}", "--no-progress"], 2,
     ["wheel_profil"]),
    (["simulate", "--scenario", "{unknown_profile_scenario}", "--no-progress"], 2, ["S1020"]),
    (["check", "{not_an_fmu}"], 2, ["not an FMU"]),
    (["vehicle", "--fmu", "{not_an_fmu}"], 2, ["not an FMU"]),
    (["cosim-track", "--fmu", "{fmu_without_description}"], 2, ["no modelDescription.xml"]),
    (["cosim-track", "--param", "wheelset.mass"], 2, ["--param", "NAME=VALUE"]),
    (["cosim-track", "--param", "no.such.parameter=1"], 2, ["no.such.parameter"]),
    # output files
    (["geometry", "--out", "{missing_folder}/table.csv"], 2, ["--out", "no folder"]),
    (["geometry", "--out", "/etc/passwd/table.csv"], 2, ["--out", "not a folder"]),
    (["creep", "--out", "{folder}"], 2, ["--out", "is a folder"]),
    (["simulate", "--out", "{folder}"], 2, ["--out", "is a folder"]),
    (["build", "--out", "{folder}/Wheelset.txt"], 2, ["--out", ".fmu"]),
    (["demo", "--out", "/etc/passwd"], 2, ["--out", "not a folder"]),
    # sweep plans (whole, before any case runs)
    (["sweep", "{missing_folder}/plan.toml"], 2, ["no such file"]),
    (["sweep", "{folder}"], 2, ["not a regular file"]),
    (["sweep", "{bad_toml}", "--runner", "core"], 2, ["not valid TOML", "line"]),
    (["sweep", "{huge_grid}", "--runner", "core"], 2, ["1e+09 cases", "100000"]),
    (["sweep", "{negative_samples}", "--runner", "core"], 2, ["samples", "[1, 100000]"]),
    (["sweep", "{typo}", "--runner", "core"], 2, ["unknown case parameter", "fricton"]),
    (["sweep", "{friction}", "--runner", "core"], 2, ["friction", "[0, 2]"]),
    (["sweep", "{zero_duration}", "--runner", "core"], 2, ["duration", "(0, 3600]"]),
    (["sweep", "{misspelt_scenario}", "--runner", "core"], 2, ["kang-r32", "kang-r320"]),
    (["sweep", "{unknown_profile_plan}", "--runner", "core"], 2, ["S1020", "wheel_profile"]),
    (["sweep", "{cone_plan}", "--runner", "core"], 2, ["cone:0.9", "(0, 0.5]"]),
    (["sweep", "{rail_as_wheel_plan}", "--runner", "core"], 2, ["UIC60 is a rail profile"]),
    (["sweep", "{bad_track_plan}", "--runner", "core"], 2, ["kang-r999"]),
    (["sweep", "{malformed_profile_plan}", "--runner", "core"], 2, ["line 3"]),
    (["sweep", "{unknown_preset_plan}", "--runner", "core"], 2, ["preset", "free"]),
    (["sweep", "{good_plan}", "--fmu", "{not_an_fmu}"], 2, ["--fmu", "not an FMU"]),
    (["sweep", "{good_plan}", "--fmu", "{missing_folder}/Wheelset.fmu"], 2, ["--fmu", "no such file"]),
    (["sweep", "{good_plan}", "--workers", "0"], 2, ["--workers", "[1, 256]"]),
    (["sweep", "{good_plan}", "--workers", "many"], 2, ["--workers", "not an integer"]),
    (["sweep", "{good_plan}", "--out", "/etc/passwd"], 2, ["--out", "not a folder"]),
    # settings that would have no effect (issue 50): refused, not ignored
    (["simulate", "--scenario", str(ROOT / "scenarios" / "kang-r320.toml")], 2,
     ["track file", "--track"]),
    (["simulate", "--track", "{good_scenario}", "--duration", "0.05"], 2,
     ["scenario file", "not a track"]),
    (["simulate", "--scenario", "{mass_without_suspension_scenario}"], 2,
     ["suspended_mass", "built-in suspension"]),
    (["sweep", "{derived_cant_plan}", "--runner", "core"], 2, ["cant", "[0, 200] mm", "-9 mm"]),
    (["stability", "--free", "--kx", "2e6"], 2, ["--kx", "--free"]),
    # valid runs that fail
    (["stability", "--speeds", "10,20", "--v-min", "5", "--v-max", "6"], 1,
     ["linear critical speed", "stable up to 6"]),
]


def expand(argv, files) -> list:
    return [str(a).format(**{k: str(v) for k, v in files.items()}) for a in argv]


def run_all(root: Path, python: str, folder: Path, only=None, timeout=300):
    """Each mistake in a process of its own (`python -m fmu_wheelset.cli` in
    `root`): (argv, status, stderr lines, traceback seen, seconds)."""
    files = make_files(folder)
    env = dict(os.environ, PYTHONPATH=str(root))
    results = []
    for k, (argv, expected, words) in enumerate(MISTAKES):
        if only is not None and k not in only:
            continue
        args = expand(argv, files)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run([python, "-m", "fmu_wheelset.cli", *args], cwd=folder, env=env,
                                  capture_output=True, text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:     # a mistake that runs instead of stopping
            err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
            results.append((argv, expected, "timeout", [f"still running after {timeout} s"],
                            "Traceback" in err, time.perf_counter() - t0))
            continue
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        results.append((argv, expected, proc.returncode, lines,
                        "Traceback" in proc.stderr or "Traceback" in proc.stdout,
                        time.perf_counter() - t0))
    return results


def main() -> int:
    import argparse
    import tempfile
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=str(ROOT), help="the checkout to run (default: this one)")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--only", help="comma-separated indices of the mistakes to run")
    args = parser.parse_args()
    only = None if not args.only else {int(k) for k in args.only.split(",")}
    with tempfile.TemporaryDirectory(prefix="wheelset-cli-mistakes-") as folder:
        results = run_all(Path(args.root), args.python, Path(folder), only)
    clear = tracebacks = right_status = 0
    for argv, expected, status, lines, traceback, seconds in results:
        one = len(lines) == 1 and not traceback
        clear += one
        tracebacks += traceback
        right_status += status == expected
        print(f"{status!s:>3} {'ok ' if status == expected else 'BAD'} {len(lines):>3} lines"
              f"{' TRACEBACK' if traceback else ''} {seconds:5.1f} s  {' '.join(argv)[:60]}")
        last = lines[-1] if lines else ""
        print(f"      {re.sub(r'/tmp/wheelset-cli-mistakes-[^/]+', '<tmp>', last)[:150]}")
    print(f"{len(results)} mistakes: {clear} with one line and no traceback, {tracebacks} with "
          f"a traceback, {right_status} with the expected exit status")
    return 0


if __name__ == "__main__":
    sys.exit(main())
