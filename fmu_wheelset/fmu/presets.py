"""Presets: named sets of the wheelset FMU's parameter values.

A preset is a data file ``presets/<name>.toml`` (bundled in the FMU as
``resources/presets/<name>.toml``)::

    description = "one line: what the preset is"

    [parameters]                 # FMU parameter name -> value (the variable table's names)
    "wheelset.mass" = 1813.0
    "suspension.builtin" = true
    "contact.creep_model" = "polach"   # an Enumeration: its core name, FMI item name or id

    [sources]                    # where every value comes from: one entry per parameter
    "wheelset.mass" = "Iwnicki 1998: wheelset mass 1813 kg"

Interface (standard library only; the file is parsed with ``tomllib``, never
executed):

* ``preset_names(directory=None) -> list[str]``: the presets available, sorted;
* ``load_preset(name, directory=None) -> dict``: ``{FMU parameter name: value}``
  of the preset, each value of its parameter's FMI type (Real -> float,
  Integer and Enumeration -> int, the enumeration's id; Boolean -> bool;
  String -> str) and inside its declared range. ``""`` is "no preset" (``{}``);
* ``load_preset_file(path) -> dict``: the same for a preset file named by path;
* ``preset_description(name, directory=None) -> str`` and
  ``preset_sources(name, directory=None) -> dict``: the description and the
  ``[sources]`` table, as written.

``directory`` defaults to the project's ``presets/`` folder (inside the FMU the
slave passes ``resources/presets``). A preset name is 1-64 characters of
``a-z 0-9 -`` (never a path). Every problem -- an unknown name, a file that is
not TOML, an unknown parameter or key, a value of the wrong type or outside its
declared range, a parameter without a source -- raises ``PresetError`` (a
ValueError) with one line saying which preset, which key and why.

What a preset does in the FMU (``preset`` parameter, fmu_wheelset/fmu/slave.py):
it sets the values in force of the parameters the host has not set itself;
a parameter the host sets keeps the host's value, whatever the order of the
calls; every getter returns the value in force.
"""
from __future__ import annotations

import math
import os
import re
import stat
import tomllib
from typing import Any, Dict, List, Optional

if __package__:
    from . import variables as fmu_variables
else:                                   # inside the FMU's pythonfmu layout
    import wheelset_fmu_variables as fmu_variables

PRESET_PARAMETER = "preset"             # the FMU parameter that names a preset
# an FMU built with other start values (fmu_wheelset/packaging/build.py start_values: the
# compatibility cases) names its start preset in this file of its resources
START_PRESET_FILE = "wheelset_start_preset.txt"
MAX_PRESET_BYTES = 64 * 1024            # a preset is a few kB
MAX_STRING_CHARS = 4096                 # longest String value a preset may give
_NAME = re.compile(r"\A[a-z0-9][a-z0-9-]{0,63}\Z")
_TOP_KEYS = {"description", "parameters", "sources"}


class PresetError(ValueError):
    """A preset that cannot be used; the message says which and why."""


def default_directory() -> str:
    """The project's presets/ folder (beside fmu_wheelset/)."""
    here = os.path.dirname(os.path.abspath(__file__))           # fmu_wheelset/fmu
    return os.path.join(os.path.dirname(os.path.dirname(here)), "presets")


def preset_names(directory: Optional[str] = None) -> List[str]:
    """The names of the presets in `directory` (default: the project's), sorted."""
    directory = directory or default_directory()
    try:
        entries = os.listdir(directory)
    except OSError:
        return []
    return sorted(entry[:-5] for entry in entries
                  if entry.endswith(".toml") and _NAME.match(entry[:-5]))


def _path_of(name: str, directory: Optional[str]) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise PresetError(f"preset {name!r}: a preset name is 1-64 characters of a-z, 0-9 "
                          "and '-' (one of: " + ", ".join(preset_names(directory)) + ")")
    path = os.path.join(directory or default_directory(), name + ".toml")
    if not os.path.isfile(path):
        raise PresetError(f"preset {name!r} does not exist (the presets are: "
                          + ", ".join(preset_names(directory)) + ")")
    return path


def _read(path: str, label: str) -> dict:
    """The parsed TOML document of a preset file (a regular file of at most
    MAX_PRESET_BYTES, UTF-8)."""
    try:
        # non-blocking open: a FIFO named as a preset must not wait for a writer
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise PresetError(f"{label}: not a regular file")
            data = fh.read(MAX_PRESET_BYTES + 1)
    except OSError as exc:
        raise PresetError(f"{label}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_PRESET_BYTES:
        raise PresetError(f"{label}: larger than {MAX_PRESET_BYTES} bytes")
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise PresetError(f"{label}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise PresetError(f"{label}: not valid TOML ({exc})") from None
    unknown = set(doc) - _TOP_KEYS
    if unknown:
        raise PresetError(f"{label}: unknown key(s) {sorted(unknown)} (a preset has "
                          "description, [parameters] and [sources])")
    for key in ("parameters", "sources"):
        if not isinstance(doc.get(key), dict):
            raise PresetError(f"{label}: [{key}] must be a table")
    if not isinstance(doc.get("description"), str) or not doc["description"].strip():
        raise PresetError(f"{label}: description must be a non-empty string")
    return doc


def _fmi_value(label: str, name: str, raw: Any):
    """The FMI value of parameter `name` for the preset's `raw`, checked."""
    var = fmu_variables.BY_NAME.get(name)
    if var is None or var.causality != "parameter" or name == PRESET_PARAMETER:
        raise PresetError(f"{label}: {name!r} is not a parameter of the FMU")
    where = f"{label}: {name}"
    if var.type == "Enumeration":
        enum = fmu_variables.ENUMERATION_BY_NAME[var.declared_type]
        core_names = list(enum.items)
        if isinstance(raw, str):
            fmi_names = [item[0] for item in enum.items.values()]
            for names in (core_names, fmi_names):
                if raw in names:
                    return names.index(raw)
        elif isinstance(raw, int) and not isinstance(raw, bool) and 0 <= raw < len(core_names):
            return raw
        raise PresetError(f"{where} = {raw!r} is not one of "
                          + ", ".join(f"{i} ({n})" for i, n in enumerate(core_names)))
    if var.type == "Real":
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
            raise PresetError(f"{where} = {raw!r} is not a finite number")
        if not var.min <= raw <= var.max:
            raise PresetError(f"{where} = {raw!r} is outside its declared range "
                              f"[{var.min:g}, {var.max:g}] {var.unit}")
        return float(raw)
    if var.type == "Integer":
        if isinstance(raw, bool) or not isinstance(raw, int) or not var.min <= raw <= var.max:
            raise PresetError(f"{where} = {raw!r} is not an integer in [{var.min}, {var.max}]")
        return raw
    if var.type == "Boolean":
        if not isinstance(raw, bool):
            raise PresetError(f"{where} = {raw!r} is not true or false")
        return raw
    if not isinstance(raw, str) or not raw.strip() or len(raw) > MAX_STRING_CHARS or "\0" in raw:
        raise PresetError(f"{where}: expected a non-empty string of at most "
                          f"{MAX_STRING_CHARS} characters")
    return raw


def _checked(doc: dict, label: str) -> Dict[str, Any]:
    values = {name: _fmi_value(label, name, raw) for name, raw in doc["parameters"].items()}
    sources = doc["sources"]
    unsourced = sorted(set(values) - set(sources))
    if unsourced:
        raise PresetError(f"{label}: no source for {', '.join(unsourced)} (every value needs "
                          "an entry in [sources])")
    stray = sorted(set(sources) - set(values))
    if stray:
        raise PresetError(f"{label}: [sources] names {', '.join(stray)}, which the preset "
                          "does not set")
    for name, text in sources.items():
        if not isinstance(text, str) or not text.strip():
            raise PresetError(f"{label}: the source of {name} must be a non-empty string")
    return values


def start_preset(resources: Optional[str]) -> str:
    """The preset an FMU build starts with ("" for the FMU's own defaults): the
    name in resources/START_PRESET_FILE, when it is a preset name."""
    if not resources:
        return ""
    try:
        with open(os.path.join(resources, START_PRESET_FILE), "rb") as fh:
            name = fh.read(100).decode("ascii", errors="replace").strip()
    except OSError:
        return ""
    return name if _NAME.match(name) else ""


def preset_text(values: Dict[str, Any], description: str, source: str) -> str:
    """A preset file (TOML) giving `values` (FMU parameter name -> FMI value),
    each with the same `source`; checked as load_preset checks it."""
    def literal(x):
        if isinstance(x, bool):
            return "true" if x else "false"
        if isinstance(x, (int, float)):
            return repr(x)
        return '"' + str(x).replace("\\", "\\\\").replace('"', '\\"') + '"'
    lines = [f"description = {literal(description)}", "", "[parameters]"]
    lines += [f"{literal(name)} = {literal(value)}" for name, value in values.items()]
    lines += ["", "[sources]"]
    lines += [f"{literal(name)} = {literal(source)}" for name in values]
    text = "\n".join(lines) + "\n"
    _checked(tomllib.loads(text), "generated preset")
    return text


def load_preset(name: str, directory: Optional[str] = None) -> Dict[str, Any]:
    """{FMU parameter name: FMI value} of preset `name` ("" -> {}); PresetError
    with the reason when it cannot be used."""
    if name == "":
        return {}
    return _checked(_read(_path_of(name, directory), f"preset {name!r}"), f"preset {name!r}")


def load_preset_file(path: str) -> Dict[str, Any]:
    """{FMU parameter name: FMI value} of the preset file at `path`."""
    label = f"preset file {os.fspath(path)}"
    return _checked(_read(os.fspath(path), label), label)


def preset_description(name: str, directory: Optional[str] = None) -> str:
    """The one-line description of preset `name`."""
    return _read(_path_of(name, directory), f"preset {name!r}")["description"].strip()


def preset_sources(name: str, directory: Optional[str] = None) -> Dict[str, str]:
    """{parameter name: where its value comes from} of preset `name`."""
    label = f"preset {name!r}"
    doc = _read(_path_of(name, directory), label)
    _checked(doc, label)
    return dict(doc["sources"])
