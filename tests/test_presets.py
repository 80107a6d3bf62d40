"""Presets: named parameter sets (presets/<name>.toml, fmu_wheelset/fmu/presets.py)
and the FMU parameter `preset`.

A preset sets the values in force of the parameters the host has not set
itself, whatever the order of the calls; every getter returns the value in
force; a preset that cannot be used is fmi2Error when set and makes
fmi2ExitInitializationMode fail with the reason. The physical check is the
Manchester benchmark vehicle 1's static wheel load (Iwnicki 1998: carbody
32 000 kg, bogie frame 2615 kg, wheelset 1813 kg -> 54.5 kN per wheel).
"""
from __future__ import annotations

import math

import pytest

from fmu_wheelset.fmu import presets, variables

fmpy = pytest.importorskip("fmpy")
from fmpy.fmi2 import FMU2Slave  # noqa: E402
from fmpy.fmi1 import FMICallException  # noqa: E402

from conftest import module_log  # noqa: E402

GRAVITY = 9.81                  # solver.dynamics.rhs.GRAVITY
REQUIRED = {"free", "loaded-passenger", "ren-jin-lma-chn60", "manchester-vehicle-1"}
def _log():
    return module_log(__name__)


# --------------------------------------------------------------- the module
def test_the_presets_load_and_every_value_has_a_source():
    assert REQUIRED <= set(presets.preset_names())
    for name in presets.preset_names():
        values = presets.load_preset(name)
        sources = presets.preset_sources(name)
        assert set(sources) == set(values), name
        assert presets.preset_description(name)
        for key, value in values.items():
            var = variables.BY_NAME[key]
            assert var.causality == "parameter"
            if var.type == "Real":
                assert isinstance(value, float) and var.min <= value <= var.max, key
    assert presets.load_preset("free") == {}
    assert presets.load_preset("") == {}
    loaded = presets.load_preset("loaded-passenger")
    assert loaded["suspension.builtin"] is True
    # a quarter of the carbody and half a bogie frame (Iwnicki 1998)
    assert loaded["suspension.suspended_mass"] == 32000.0 / 4 + 2615.0 / 2
    ren_jin = presets.load_preset("ren-jin-lma-chn60")
    assert ren_jin["contact.creep_model"] == 2 and ren_jin["contact.model"] == 1  # Polach, multipoint
    assert ren_jin["wheel.profile"] == "LMA" and ren_jin["track.scenario"] == "ren-jin-r400"


BAD = {
    "unknown parameter": ('description = "x"\n[parameters]\n"wheelset.weight" = 1.0\n'
                          '[sources]\n"wheelset.weight" = "s"\n', "not a parameter"),
    "out of range": ('description = "x"\n[parameters]\n"wheelset.mass" = -5.0\n'
                     '[sources]\n"wheelset.mass" = "s"\n', "outside its declared range"),
    "wrong type": ('description = "x"\n[parameters]\n"suspension.builtin" = 1\n'
                   '[sources]\n"suspension.builtin" = "s"\n', "not true or false"),
    "bad enumeration": ('description = "x"\n[parameters]\n"contact.creep_model" = "magic"\n'
                        '[sources]\n"contact.creep_model" = "s"\n', "is not one of"),
    "no source": ('description = "x"\n[parameters]\n"wheelset.mass" = 1600.0\n[sources]\n',
                  "no source for wheelset.mass"),
    "not TOML": ("description = \n", "not valid TOML"),
    "unknown key": ('description = "x"\nrun = "rm -rf /"\n[parameters]\n[sources]\n',
                    "unknown key"),
    "the preset itself": ('description = "x"\n[parameters]\n"preset" = "free"\n'
                          '[sources]\n"preset" = "s"\n', "not a parameter"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_preset_file_is_refused_with_its_reason(case, tmp_path):
    text, words = BAD[case]
    (tmp_path / "bad.toml").write_text(text)
    with pytest.raises(presets.PresetError) as info:
        presets.load_preset("bad", str(tmp_path))
    assert words in str(info.value) and "bad" in str(info.value)


def test_preset_names_are_never_paths(tmp_path):
    for name in ("../free", "/etc/passwd", "Free", "a/b", "x" * 65, "free.toml"):
        with pytest.raises(presets.PresetError, match="preset name is"):
            presets.load_preset(name)
    (tmp_path / "big.toml").write_text("# " + "x" * presets.MAX_PRESET_BYTES)
    with pytest.raises(presets.PresetError, match="larger than"):
        presets.load_preset("big", str(tmp_path))


# ------------------------------------------------------------------ the FMU
class Slave:
    def __init__(self, md, unzipped, name):
        self.log = _log()
        self.by = {v.name: v for v in md.modelVariables}
        self.s = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier="Wheelset",
                           instanceName=name)
        self.s.instantiate(loggingOn=True, callbacks=self.log.callbacks)

    def set(self, name, value):
        var = self.by[name]
        vr = [var.valueReference]
        if var.type == "String":
            self.s.setString(vr, [value])
        elif var.type == "Real":
            self.s.setReal(vr, [value])
        elif var.type == "Boolean":
            self.s.setBoolean(vr, [value])
        else:
            self.s.setInteger(vr, [value])

    def get(self, name):
        var = self.by[name]
        vr = [var.valueReference]
        if var.type == "String":
            return self.s.getString(vr)[0].decode()
        if var.type == "Real":
            return self.s.getReal(vr)[0]
        if var.type == "Boolean":
            return bool(self.s.getBoolean(vr)[0])
        return self.s.getInteger(vr)[0]


def test_a_preset_sets_what_the_host_did_not_whatever_the_order(md, unzipped):
    chosen = presets.load_preset("ren-jin-lma-chn60")
    mine = {"wheelset.mass": 1700.0, "wheel.profile": "LMA-worn", "contact.creep_model": 0}
    for order in ("preset first", "preset last"):
        h = Slave(md, unzipped, f"preset-{order.split()[1]}")
        n = len(h.log.messages)
        try:
            if order == "preset first":
                h.set("preset", "ren-jin-lma-chn60")
            for name, value in mine.items():
                h.set(name, value)
            if order == "preset last":
                h.set("preset", "ren-jin-lma-chn60")
            h.s.setupExperiment(startTime=0.0)
            h.s.enterInitializationMode()
            before = {name: h.get(name) for name in chosen}
            h.s.exitInitializationMode()
            after = {name: h.get(name) for name in chosen}
            assert h.get("preset") == "ren-jin-lma-chn60"
            h.s.doStep(currentCommunicationPoint=0.0, communicationStepSize=1e-3)
            h.s.terminate()
        finally:
            h.s.freeInstance()
        assert not [m for st, _, m in h.log.since(n) if st >= 3], order
        want = {**chosen, **mine}
        assert before == {k: want[k] for k in chosen}, order
        assert after == before, order


def test_changing_the_preset_reverts_what_the_first_one_set(md, unzipped):
    h = Slave(md, unzipped, "preset-change")
    try:
        h.set("preset", "ren-jin-lma-chn60")
        h.set("preset", "manchester-vehicle-1")
        h.s.setupExperiment(startTime=0.0)
        h.s.enterInitializationMode()
        # contact.damping is in ren-jin-lma-chn60 only: back to its start value
        assert h.get("contact.damping") == float(h.by["contact.damping"].start)
        assert h.get("wheel.profile") == "S1002" and h.get("wheelset.mass") == 1813.0
        assert h.get("track.scenario") == h.by["track.scenario"].start
    finally:
        h.s.freeInstance()


def test_an_unknown_preset_is_refused_and_initialization_fails(md, unzipped):
    h = Slave(md, unzipped, "preset-unknown")
    n = len(h.log.messages)
    try:
        with pytest.raises(FMICallException) as info:
            h.set("preset", "../../etc/passwd")
        assert info.value.status == 3
        h.s.setupExperiment(startTime=0.0)
        h.s.enterInitializationMode()
        with pytest.raises(FMICallException):
            h.s.exitInitializationMode()
    finally:
        h.s.freeInstance()
    errors = [m for st, _, m in h.log.since(n) if st >= 3]
    assert any("preset name is" in m for m in errors), errors
    assert any("initialization failed" in m and "preset" in m for m in errors), errors


def test_loaded_passenger_carries_the_benchmark_wheel_load(md, unzipped, wheelset_fmu):
    # static equilibrium at fmi2ExitInitializationMode: Iwnicki 1998 gives a
    # static wheel load of 54.5 kN (three digits: +-0.05 kN). The weight share
    # (1813 + 9307.5) kg g / 2 is 54.55 kN; the model gives 54.48 kN per wheel,
    # 0.12 % less, because the built-in frame is held at its nominal height: the
    # wheelset settles 54 um into the rails and the primary springs (2 x
    # 1.22 MN/m) lift it by 132 N (solver/dynamics/rhs.py; reported, not hidden)
    h = Slave(md, unzipped, "preset-loaded")
    try:
        h.set("preset", "loaded-passenger")
        h.s.setupExperiment(startTime=0.0)
        h.s.enterInitializationMode()
        h.s.exitInitializationMode()
        loads = h.get("wheel.left.Q"), h.get("wheel.right.Q")
        h.s.terminate()
    finally:
        h.s.freeInstance()
    for q in loads:
        assert abs(q - 54.5e3) <= 0.05e3, loads
    # a newcomer's first run: 30 m/s, 3 mm initial offset, 2 s: the
    # loaded wheelset runs (the free one derails at 0.28 s), its lateral motion
    # decays, the wheel load stays near the static one
    result = fmpy.simulate_fmu(wheelset_fmu, stop_time=2.0, output_interval=1e-3,
                               start_values={"preset": "loaded-passenger", "wheelset.speed": 30.0,
                                             "wheelset.initial_lateral": 0.003},
                               output=["wheelset.y", "wheel.left.Q", "status.derailment"])
    assert result["time"][-1] == pytest.approx(2.0)
    assert not result["status.derailment"].any()
    assert abs(result["wheelset.y"][-1]) < 0.003
    # 5 %: the wheel load of a wheelset still settling its lateral motion
    assert math.isclose(result["wheel.left.Q"][-1], 54.5e3, rel_tol=0.05)
