"""Every FMI getter returns the value in force (FMI 2.0 section 2.1.7: fmi2Get*
returns the actual value of a variable): the start value of the model
description for anything the host did not set, the host's value for anything it
set, for every parameter of every type (Real, Integer, Boolean, String).

An outside tester found fmi2GetString failing with "KeyError" for every String
parameter the host had not set (wheel.profile, rail.profile, track.scenario):
the FMI reference importer fmusim reads every String and stopped with exit 3,
libcosim's last-value observer aborted the process. The reference values here
are the model description's start attributes as FMPy parses them (an
independent reader of the XML), never the FMU's own table.
"""
from __future__ import annotations

import pytest

fmpy = pytest.importorskip("fmpy")
from fmpy.fmi2 import FMU2Slave  # noqa: E402

from conftest import md_start, module_log  # noqa: E402

def _log():
    return module_log(__name__)


def read(slave, var):
    vr = [var.valueReference]
    if var.type == "Real":
        return slave.getReal(vr)[0]
    if var.type in ("Integer", "Enumeration"):
        return slave.getInteger(vr)[0]
    if var.type == "Boolean":
        return bool(slave.getBoolean(vr)[0])
    return slave.getString(vr)[0].decode("utf-8")


def parameters(md):
    return [v for v in md.modelVariables if v.causality == "parameter"]


def instantiate(md, unzipped, name):
    log = _log()
    slave = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier="Wheelset",
                      instanceName=name)
    slave.instantiate(loggingOn=True, callbacks=log.callbacks)
    return slave, log


def test_every_parameter_reads_its_start_value_when_not_set(md, unzipped):
    slave, log = instantiate(md, unzipped, "getters-start")
    n = len(log.messages)
    try:
        slave.setupExperiment(startTime=0.0)
        slave.enterInitializationMode()
        # initialization mode: nothing set by the host yet
        got = {v.name: read(slave, v) for v in parameters(md)}
        slave.exitInitializationMode()
        after = {v.name: read(slave, v) for v in parameters(md)}
        slave.doStep(currentCommunicationPoint=0.0, communicationStepSize=1e-3)
        stepped = {v.name: read(slave, v) for v in parameters(md)}
        slave.terminate()
    finally:
        slave.freeInstance()
    errors = [m for status, _, m in log.since(n) if status >= 3]
    assert not errors, errors
    want = {v.name: md_start(v) for v in parameters(md)}
    # every type is covered, the strings among them
    assert {v.type for v in parameters(md)} >= {"Real", "Integer", "Boolean", "String"}
    for name in want:
        # the same value the model description declares: exactly (floats travel as
        # repr of a double in the XML, so equality is bit for bit)
        assert got[name] == want[name], (name, got[name], want[name])
        assert after[name] == want[name], (name, after[name], want[name])
        assert stepped[name] == want[name], (name, stepped[name], want[name])


def test_a_parameter_set_by_the_host_reads_back_as_set(md, unzipped):
    by = {v.name: v for v in md.modelVariables}
    chosen = {"wheel.profile": "LMA", "rail.profile": "CHN60", "track.scenario": "straight",
              "track.direction": "right", "wheelset.mass": 1600.0, "contact.creep_model": 0,
              "suspension.builtin": True}
    slave, log = instantiate(md, unzipped, "getters-set")
    n = len(log.messages)
    try:
        for name, value in chosen.items():
            var = by[name]
            if var.type == "String":
                slave.setString([var.valueReference], [value])
            elif var.type == "Real":
                slave.setReal([var.valueReference], [value])
            elif var.type == "Boolean":
                slave.setBoolean([var.valueReference], [value])
            else:
                slave.setInteger([var.valueReference], [value])
        slave.setupExperiment(startTime=0.0)
        slave.enterInitializationMode()
        before = {name: read(slave, by[name]) for name in chosen}
        slave.exitInitializationMode()
        after = {name: read(slave, by[name]) for name in chosen}
        untouched = {v.name: read(slave, v) for v in parameters(md) if v.name not in chosen}
        slave.terminate()
    finally:
        slave.freeInstance()
    errors = [m for status, _, m in log.since(n) if status >= 3]
    assert not errors, errors
    assert before == chosen and after == chosen
    for v in parameters(md):
        if v.name in untouched:
            assert untouched[v.name] == md_start(v), v.name
