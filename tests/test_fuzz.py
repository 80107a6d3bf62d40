"""Fuzz targets: hypothesis-driven, bounded (the file runs < 60 s).

Only the documented error types may escape:

* profile files, ``solver.profiles.files.load_profile``: ProfileError;
* scenario TOML, ``solver.scenarios.load_scenario`` (+ ``WheelsetParameters.validate``):
  WheelsetError;
* track TOML, ``solver.track.alignment.Track.from_toml``: TrackError;
* sweep TOML, ``fmu_wheelset.sweeps.sweep.load_sweep`` (if present): ValueError
  (tomllib.TOMLDecodeError is one).

Documents are generated structurally (known keys with values of any TOML type,
unknown keys, nested tables) and as raw mutated bytes.
"""
from __future__ import annotations

import math
import os
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.errors import ProfileError
from solver.profiles.files import load_profile
from solver.scenarios import load_scenario
from solver.track.alignment import Track
from solver.track.sections import TrackError
from solver.errors import WheelsetError

FUZZ = settings(deadline=None, max_examples=120, suppress_health_check=[HealthCheck.too_slow])


# -- a small TOML writer for generated documents -------------------------------

def _key(k: str) -> str:
    return k if k and all(c.isalnum() or c in "_-" for c in k) else '"' + _esc(k) + '"'


def _esc(s: str) -> str:
    return (s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
            .replace("\t", "\\t"))


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return '"' + "".join(c if c.isprintable() or c in "\n\t" else f"\\u{ord(c):04x}"
                             for c in _esc(v)) + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(v)


def to_toml(doc: dict) -> str:
    lines, tables, arrays = [], [], []
    for k, v in doc.items():
        if isinstance(v, dict):
            tables.append((k, v))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            arrays.append((k, v))
        else:
            lines.append(f"{_key(k)} = {_value(v)}")
    for k, v in tables:
        lines.append(f"[{_key(k)}]")
        lines += [f"{_key(a)} = {_value(b)}" for a, b in v.items()]
    for k, items in arrays:
        for item in items:
            lines.append(f"[[{_key(k)}]]")
            lines += [f"{_key(a)} = {_value(b)}" for a, b in item.items()]
    return "\n".join(lines) + "\n"


_scalar = st.one_of(st.booleans(), st.integers(-10**6, 10**6), st.integers(), st.floats(),
                    st.floats(-1e4, 1e4), st.text(max_size=8),
                    st.sampled_from(["S1002", "UIC60", "left", "right", "straight", "curve",
                                     "transition", "kang-r320", "polach", "inf", "", "nan"]))
_leaf = st.one_of(_scalar, st.lists(_scalar, max_size=4), st.lists(st.floats(-1e3, 1e3), max_size=6))
_any = st.one_of(_leaf, st.dictionaries(st.text(max_size=5), _leaf, max_size=3))


def _doc(keys, table_keys=(), array_keys=(), inner_keys=()):
    inner = st.dictionaries(st.sampled_from(list(inner_keys) or ["x"]) | st.text(max_size=6), _any,
                            max_size=6)
    return st.fixed_dictionaries({}, optional={
        **{k: _any for k in keys},
        **{k: st.one_of(inner, _leaf) for k in table_keys},
        **{k: st.one_of(st.lists(inner, min_size=1, max_size=4), _leaf) for k in array_keys},
    }).flatmap(lambda d: st.dictionaries(st.text(max_size=4), _leaf, max_size=2).map(lambda e: {**d, **e}))


def _mutated(text_strategy):
    """A generated document as text, possibly mutated at the byte level."""
    @st.composite
    def build(draw):
        data = bytearray(draw(text_strategy).encode("utf-8", "surrogatepass"))
        for _ in range(draw(st.integers(0, 3))):
            if not data:
                break
            i = draw(st.integers(0, len(data) - 1))
            op = draw(st.sampled_from(["flip", "drop", "insert"]))
            if op == "flip":
                data[i] ^= 1 << draw(st.integers(0, 7))
            elif op == "drop":
                del data[i]
            else:
                data[i:i] = draw(st.binary(min_size=1, max_size=4))
        return bytes(data)
    return build()


def _run(tmpdir, data: bytes, name: str) -> str:
    path = os.path.join(tmpdir, name)
    with open(path, "wb") as fh:
        fh.write(data)
    return path


def _only(expected, fn, path):
    try:
        fn(path)
    except expected as exc:
        assert str(exc), f"{type(exc).__name__} without a message"
    except Exception as exc:  # noqa: BLE001 - the point of the test
        pytest.fail(f"{type(exc).__name__} escaped (documented: "
                    f"{', '.join(e.__name__ for e in expected)}): {exc!r}\n--- file ---\n"
                    + open(path, "rb").read().decode("utf-8", "replace"))


# -- scenario TOML -----------------------------------------------------------------

_WHEELSET_KEYS = ["wheel_profile", "rail_profile", "speed", "friction", "creep_model", "contact_model",
                  "internal_step", "mass", "track", "suspension_stiffness", "suspension_damping",
                  "creep_options", "bogie", "gauge", "poisson", "integrator"]
_scenario_doc = _doc(["duration", "output_interval", "description"], table_keys=["wheelset"],
                     inner_keys=_WHEELSET_KEYS).map(to_toml)


def _load_scenario(path):
    scenario = load_scenario(path)
    scenario.params.validate()


@FUZZ
@given(data=_mutated(_scenario_doc))
def test_fuzz_scenario_toml(data):
    with tempfile.TemporaryDirectory() as tmp:
        _only((WheelsetError,), _load_scenario, _run(tmp, data, "scenario.toml"))


# -- track TOML -------------------------------------------------------------------------

_SECTION_KEYS = ["type", "length", "length_m", "radius", "radius_m", "cant", "cant_m", "cant_mm", "direction"]
_track_doc = _doc(["name", "description", "rail_distance_m", "direction"], table_keys=["stations"],
                  array_keys=["section"], inner_keys=_SECTION_KEYS + ["s_m", "radius_m", "cant_mm"]).map(to_toml)


@FUZZ
@given(data=_mutated(_track_doc))
def test_fuzz_track_toml(data):
    with tempfile.TemporaryDirectory() as tmp:
        _only((TrackError,), Track.from_toml, _run(tmp, data, "track.toml"))


_section = st.fixed_dictionaries({"type": st.sampled_from(["straight", "curve", "transition"])},
                                 optional={"length_m": st.floats(-10, 500) | st.just(math.inf),
                                           "radius_m": st.floats(-10, 2000) | st.just(math.inf),
                                           "cant_mm": st.floats(-50, 2000),
                                           "direction": st.sampled_from(["left", "right", "up"])})


@FUZZ
@given(sections=st.lists(_section, min_size=1, max_size=5))
def test_fuzz_track_sections(sections):
    """Near-valid section lists (the interesting region for the value checks)."""
    with tempfile.TemporaryDirectory() as tmp:
        _only((TrackError,), Track.from_toml, _run(tmp, to_toml({"section": sections}).encode(), "t.toml"))


# -- profile files -----------------------------------------------------------------------

_profile_text = st.lists(st.one_of(
    st.tuples(st.floats(-80, 80), st.floats(-40, 40)).map(lambda p: f"{p[0]!r} {p[1]!r}"),
    st.sampled_from(["# kind: wheel", "# kind: rail", "# units: mm", "# units: inch",
                     "# flange_back_to_taping_line_mm: 70", "# name: f", "1 2 3", "nan 1", ""])),
    max_size=40).map("\n".join)


@FUZZ
@given(data=_mutated(_profile_text), kind=st.sampled_from(["wheel", "rail", None]))
def test_fuzz_profile_file(data, kind):
    with tempfile.TemporaryDirectory() as tmp:
        _only((ProfileError,), lambda p: load_profile(p, kind), _run(tmp, data, "profile.txt"))


# -- sweep TOML (if the parser exists) -----------------------------------------------------

try:
    from fmu_wheelset.sweeps.sweep import load_sweep
except Exception:  # noqa: BLE001 - not written yet
    load_sweep = None

_sweep_doc = _doc(["scenario", "duration", "output_interval", "ramp_time", "direction"],
                  table_keys=["fixed", "grid", "random"],
                  inner_keys=["speed_kmh", "radius_m", "cant_mm", "cant_deficiency_mm", "samples", "seed",
                              "friction", "wheel_profile"]).map(to_toml)


@pytest.mark.skipif(load_sweep is None, reason="fmu_wheelset.sweeps.sweep.load_sweep not present")
@FUZZ
@given(data=_mutated(_sweep_doc))
def test_fuzz_sweep_toml(data):
    with tempfile.TemporaryDirectory() as tmp:
        _only((ValueError,), load_sweep, _run(tmp, data, "sweep.toml"))
