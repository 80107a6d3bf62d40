"""Argument types, input checks and the error convention of the `wheelset-fmu`
command (docs/SECURITY.md, docs/cli.md).

Exit status:

* 0: the command ran to its end;
* 2: the command line or an input file is invalid (a usage mistake, an option
  abbreviated or misspelt, an unknown profile, scenario or preset name, a
  malformed profile, plan, scenario or FMU file, a value out of its range):
  ONE line on stderr, ``wheelset-fmu <command>: error: <what and the allowed
  range>``, and nothing has run;
* 1: a valid run that failed (a derailment, a discarded FMU step, a failed
  sweep case, a check that found a problem): one line on stderr saying where
  and why, after what the run wrote;
* 130: interrupted (Ctrl-C).

Never a Python traceback: values are checked when the arguments are parsed,
by the types here (`number`: a finite number inside a range, the range named
in the message; `profile`: a built-in profile of the right kind or a profile
file that loads; `fmu_file`: an FMI 2.0 co-simulation FMU of the wheelset;
`scenario`: a scenario name or file; `output_file` / `output_dir`: the
folder exists, or can be made, and is writable, checked before any work is
done; `input_file`: an existing regular file). What can only be found while
running (a malformed TOML file, a sweep plan out of its bounds) raises a
ValueError that `run_command` turns into the same one line (exit 2); a
`RunFailed` is the one line of a failed run (exit 1); any other exception is
a bug of the program: one line too, exit 1 (WHEELSET_FMU_DEBUG=1 shows the
traceback).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Callable, Optional

ERRORS_OF_USE = (ValueError, OSError, KeyError, LookupError)   # bad input, file problems


class RunFailed(Exception):
    """A valid run that did not reach its end (a derailment, a failed case):
    `run_command` prints its message as one line and returns exit status 1."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors, ``prog: error: message`` (no usage block),
    and no abbreviated options (``--scenari`` is refused, not read as
    ``--scenario``): an abbreviation that works today may name a different
    option when one is added."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):
        if "expected one argument" in message:
            # argparse reads a value starting with "-" as an option
            message += " (attach a value that starts with '-': --y=-12:12:0.1)"
        self.exit(2, f"{self.prog}: error: {message}\n")

    def parse_args(self, args=None, namespace=None):
        """As argparse's, but an unrecognized argument is named with its command
        and the command's nearest option (argparse names neither: the arguments a
        subcommand does not know reach the top parser's error)."""
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            self._unrecognized(namespace, extras)
        return namespace

    def _unrecognized(self, namespace, extras):
        import difflib
        parser, prog = self, self.prog
        command = getattr(namespace, "command", None)
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction) and command in action.choices:
                parser = action.choices[command]
                prog = parser.prog
        options = sorted({s for a in parser._actions for s in a.option_strings})
        hints = []
        for extra in extras:
            name = extra.split("=", 1)[0]
            if not name.startswith("-"):
                continue
            near = [o for o in options if o.startswith(name)] or difflib.get_close_matches(
                name, options, n=1, cutoff=0.6)
            if near:
                hints.append(f"{name}: did you mean {near[0]}?")
        shown = " ".join(extras[:5]) + (f" ... ({len(extras)} in all)" if len(extras) > 5 else "")
        self.exit(2, f"{prog}: error: unrecognized arguments: {shown}"
                     + (f" ({'; '.join(hints)})" if hints else "")
                     + f"; `{prog} --help` lists its options\n")


def number(lo: Optional[float] = None, hi: Optional[float] = None, *, lo_open: bool = False,
           hi_open: bool = False, unit: str = "", integer: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite number in [lo, hi] (an end open if *_open)."""
    interval = (("(" if lo_open else "[") + ("-inf" if lo is None else f"{lo:g}") + ", "
                + ("inf" if hi is None else f"{hi:g}") + (")" if hi_open else "]")
                + (f" {unit}" if unit else ""))

    def parse(text: str):
        try:
            value = int(text) if integer else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not {'an integer' if integer else 'a number'} (allowed: {interval})") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text} is not finite (allowed: {interval})")
        too_low = lo is not None and (value <= lo if lo_open else value < lo)
        too_high = hi is not None and (value >= hi if hi_open else value > hi)
        if too_low or too_high:
            raise argparse.ArgumentTypeError(f"{value:g} is outside the allowed {interval}")
        return value

    parse.__name__ = "integer" if integer else "number"     # argparse names the type in messages
    return parse


def _writable_folder(folder: str, may_create: bool = True) -> Optional[str]:
    """None if files can be written in `folder` (existing, or creatable if
    `may_create`), else why not."""
    probe = os.path.abspath(folder or ".")
    if not may_create and not os.path.exists(probe):
        return f"no folder {probe}"
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if not os.path.isdir(probe):
        return f"{probe} is not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{probe} is not writable"
    return None


def output_file(suffix: Optional[str] = None, may_create: bool = False) -> Callable[[str], str]:
    """An argparse type: a file that can be written (its folder exists and is
    writable; not a folder itself; the suffix if given)."""

    def parse(text: str) -> str:
        if not text:
            raise argparse.ArgumentTypeError("empty file name")
        if suffix and not text.lower().endswith(suffix):
            raise argparse.ArgumentTypeError(f"{text}: the file must end in {suffix}")
        if os.path.isdir(text):
            raise argparse.ArgumentTypeError(f"{text} is a folder, not a file")
        if os.path.exists(text) and not os.access(text, os.W_OK):
            raise argparse.ArgumentTypeError(f"{text} is not writable")
        problem = _writable_folder(os.path.dirname(text), may_create=may_create)
        if problem:
            raise argparse.ArgumentTypeError(f"cannot write {text}: {problem}")
        return text

    parse.__name__ = "output file"
    return parse


def output_dir(text: str) -> str:
    """An argparse type: a folder that exists and is writable, or can be made."""
    if not text:
        raise argparse.ArgumentTypeError("empty folder name")
    if os.path.exists(text) and not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text} exists and is not a folder")
    problem = _writable_folder(text)
    if problem:
        raise argparse.ArgumentTypeError(f"cannot write in {text}: {problem}")
    return text


output_dir.__name__ = "output folder"


def input_file(text: str) -> str:
    """An argparse type: an existing regular file."""
    if not os.path.exists(text):
        raise argparse.ArgumentTypeError(f"{text}: no such file")
    if not os.path.isfile(text):
        raise argparse.ArgumentTypeError(f"{text} is not a regular file")
    return text


input_file.__name__ = "input file"


# ----------------------------------------------------------------- inputs
def _type(check: Callable[[str], object], name: str) -> Callable[[str], str]:
    """An argparse type from a check that raises ValueError with its reason."""

    def parse(text: str) -> str:
        try:
            check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(one_line(exc)) from None
        return text

    parse.__name__ = name
    return parse


def builtin_profile_names(kind: str) -> list:
    """The built-in profiles of a kind ("wheel" or "rail"), aliases included."""
    from solver.profiles.builtins import BUILTIN_ALIASES, list_builtin_profiles
    names = [name for name, k, _ in list_builtin_profiles() if k == kind]
    names += [alias for alias, target in BUILTIN_ALIASES.items() if target in names]
    return names + (["cone:<conicity>"] if kind == "wheel" else [])


def check_profile(spec, kind: str, step: float = 1.0e-4):
    """The Profile that `spec` names: a built-in profile of this kind (S1002,
    cone:0.15, UIC60, ...) or a profile file (mm) that loads as this kind; a
    ValueError (solver.errors.ProfileError) saying why not otherwise. A
    relative file name is taken relative to the working directory (as the core
    takes it)."""
    from solver.profiles.builtins import CONE_PREFIX, builtin_profile, is_builtin_profile
    from solver.errors import ProfileError
    from solver.profiles.files import load_profile
    if not isinstance(spec, str) or not spec.strip():
        raise ProfileError(f"a {kind} profile is a built-in name or a file name, got {spec!r}")
    if spec.strip().lower().startswith(CONE_PREFIX) or is_builtin_profile(spec):
        profile = builtin_profile(spec, step=step)     # a cone's conicity: its range
        if profile.kind != kind:
            raise ProfileError(f"{spec} is a {profile.kind} profile, not a {kind} profile "
                               f"(built-in {kind} profiles: {', '.join(builtin_profile_names(kind))})")
        return profile
    if os.path.exists(spec):
        return load_profile(spec, kind, step=step)     # ProfileError names file and line
    raise ProfileError(f"unknown {kind} profile {spec!r}: not a built-in {kind} profile "
                       f"({', '.join(builtin_profile_names(kind))}) and no such file")


def profile(kind: str) -> Callable[[str], str]:
    """An argparse type: a built-in profile of `kind` or a profile file that loads."""
    return _type(lambda text: check_profile(text, kind), f"{kind} profile")


# The scenarios of the command line have the FMU's names (track.scenario): each
# runs its paper's wheelset on the FMU's track of the same name. The names the
# command line had before stay accepted as aliases.
def _cli_scenarios():
    """(SCENARIOS, SCENARIO_ALIASES) from the solver's scenario registry, as the
    FMU declares it (fmu/registries.py: no solver import for the command line)."""
    from fmu_wheelset.fmu import registries
    names, aliases = {}, {}
    for name, label, track, _ in registries.SCENARIOS:
        if track is not None:
            names[track] = (name, label)
    for name, _, track, others in registries.SCENARIOS:
        for alias in others:
            aliases[alias] = track or name
    return names, aliases


SCENARIOS, SCENARIO_ALIASES = _cli_scenarios()


def scenario_help() -> str:
    return ("scenario: " + "; ".join(f"{name} ({what})" for name, (_, what) in SCENARIOS.items())
            + "; or a scenario TOML file (aliases: "
            + ", ".join(f"{a} = {t}" if a != t else f"{a} = ren-jin-r400 at 80 km/h"
                        for a, t in SCENARIO_ALIASES.items()) + ")")


def core_scenario_name(name: str) -> str:
    """The solver.scenarios name of a command-line scenario name (a file: itself)."""
    name = SCENARIO_ALIASES.get(name, name)
    if name in SCENARIOS:
        return SCENARIOS[name][0]
    return name


def check_scenario(spec) -> str:
    """A scenario name (SCENARIOS, SCENARIO_ALIASES) or an existing file; a
    ValueError naming the known scenarios otherwise. The file's content is
    read by `load_scenario`."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"a scenario is a name or a file name, got {spec!r}")
    if spec in SCENARIOS or spec in SCENARIO_ALIASES:
        return spec
    if os.path.isfile(spec):
        return spec
    if os.path.exists(spec):
        raise ValueError(f"scenario {spec}: not a regular file")
    raise ValueError(f"unknown scenario {spec!r}: not one of {', '.join(SCENARIOS)} "
                     f"(aliases {', '.join(SCENARIO_ALIASES)}) and no such file")


scenario = _type(check_scenario, "scenario")


def load_scenario(spec: str, preset: str | None = None, **overrides):
    """solver.scenarios.load_scenario of a command-line scenario (name, alias or
    file), named as the command line names it; a preset's values replace the
    scenario's, `overrides` (WheelsetParameters fields, duration,
    output_interval) replace both."""
    import dataclasses
    from solver.scenarios import load_scenario as load
    check_scenario(spec)
    result = load(core_scenario_name(spec))
    if spec in SCENARIOS:
        result.name = spec
    if preset:
        result.params = dataclasses.replace(result.params, **preset_parameters(preset))
    for key in ("duration", "output_interval"):
        if key in overrides:
            setattr(result, key, float(overrides.pop(key)))
    if overrides:
        result.params = dataclasses.replace(result.params, **overrides)
    return result


def load_preset(spec: str) -> dict:
    """The FMU parameter values of a preset (fmu_wheelset/fmu/presets.py): a preset
    name (presets/<name>.toml) or a preset file named by its path (.toml);
    PresetError (a ValueError) saying why not."""
    from fmu_wheelset.fmu import presets
    if not isinstance(spec, str) or not spec.strip():
        raise presets.PresetError(f"a preset is a name or a .toml file, got {spec!r}")
    if spec.endswith(".toml") or os.sep in spec:
        if not os.path.isfile(spec):
            raise presets.PresetError(f"preset file {spec}: no such file")
        return presets.load_preset_file(spec)
    return presets.load_preset(spec)


def preset_parameters(spec: str) -> dict:
    """WheelsetParameters fields of a preset: its FMU values through the
    variable table. A preset value the core has no field for (an FMU-only
    option such as track.direction) is refused, not dropped."""
    import solver.model as wheelset
    from fmu_wheelset.fmu import variables
    values = load_preset(spec)
    fmu_only = [name for name in values if variables.BY_NAME[name].core is None]
    if fmu_only:
        raise ValueError(f"preset {spec}: {', '.join(fmu_only)} can only be set in the FMU "
                         "(the command line and the sweeps take them from their own options)")
    return variables.parameters_from_fmi(values, wheelset)


def preset(text: str) -> str:
    """An argparse type: a preset name or file that loads."""
    try:
        preset_parameters(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(one_line(exc)) from None
    return text


preset.__name__ = "preset"


def check_fmu_file(path) -> str:
    """`path` if it is an FMI 2.0 co-simulation FMU of the wheelset (a zip
    archive whose modelDescription.xml FMPy reads, with a CoSimulation
    interface and the wheelset's outputs); a ValueError saying why not."""
    import zipfile
    path = os.fspath(path)
    if not os.path.exists(path):
        raise ValueError(f"{path}: no such file")
    if not os.path.isfile(path):
        raise ValueError(f"{path} is not a regular file")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path} is not an FMU (not a zip archive; build one with "
                         "`wheelset-fmu build`)")
    try:
        with zipfile.ZipFile(path) as archive:
            if "modelDescription.xml" not in archive.namelist():
                raise ValueError(f"{path} is not an FMU (no modelDescription.xml)")
        from fmpy import read_model_description
        md = read_model_description(path, validate=False)
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken archive or XML: one line
        raise ValueError(f"{path}: unreadable FMU ({type(exc).__name__}: {one_line(exc)})") from None
    if md.fmiVersion != "2.0" or md.coSimulation is None:
        raise ValueError(f"{path} is not an FMI 2.0 co-simulation FMU")
    names = {v.name for v in md.modelVariables}
    if not {"wheelset.y", "wheel.left.Q", "wheel.profile"} <= names:
        raise ValueError(f"{path} is an FMU, but not the wheelset FMU (no wheelset.y, "
                         "wheel.left.Q, wheel.profile)")
    return path


fmu_file = _type(check_fmu_file, "FMU file")


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 500 else text[:497] + "..."


def silence_stderr_at_exit() -> None:
    """OpenSees prints "Process 0 Terminating" on stderr from a C++ destructor
    after Python has finished: once the command's own output is flushed, the
    process's stderr goes to /dev/null (the command line only; called as the
    last thing of `main`)."""
    import atexit

    def silence():
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
        except OSError:
            pass
    atexit.register(silence)


def run_command(prog: str, func, args) -> int:
    """Run a subcommand; an error becomes one line on stderr (exit 2 for a
    mistake of use, 1 for a failed run or anything else, 130 for Ctrl-C)."""
    try:
        return int(func(args) or 0)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except RunFailed as exc:
        print(f"{prog}: {one_line(exc)}", file=sys.stderr)
        return 1
    except ERRORS_OF_USE as exc:
        if os.environ.get("WHEELSET_FMU_DEBUG"):
            raise
        print(f"{prog}: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a bug: still one line, the traceback on request
        if os.environ.get("WHEELSET_FMU_DEBUG"):
            raise
        print(f"{prog}: internal error: {type(exc).__name__}: {one_line(exc)} "
              "(WHEELSET_FMU_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1
