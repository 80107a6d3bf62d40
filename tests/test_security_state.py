"""Serialized FMU states are parsed, never executed, and checked field by field
(format: fmu_wheelset/fmu/fmu_state.py, docs/SECURITY.md).

Through FMPy's low-level API on the built FMU: a crafted pickle runs nothing,
every malformed or inconsistent state is refused with the reason logged at
fmi2Error and the instance goes on exactly as if the call had not been made;
a state restores bit-exactly into another instance.

Status: pythonfmu 0.7.0 returns fmi2OK from fmi2SetFMUstate whatever the slave
does (an exception would be fmi2Fatal and crash the host later), so the
refusal is asserted through the log and the unchanged instance; the slave keeps
the reason in `last_refusal` for the project's native front end
(fmu_wheelset/fmu/native/), which returns fmi2Error.
"""
from __future__ import annotations

import base64
import json
import math
import os
import pickle

import numpy as np
import pytest

fmpy = pytest.importorskip("fmpy")
from fmpy.fmi2 import FMU2Slave  # noqa: E402

from conftest import FmiLog  # noqa: E402
from fmpy.fmi1 import FMICallException  # noqa: E402

from fmu_wheelset.fmu import fmu_state  # noqa: E402

ERROR = 3
H = 1e-3
CHEAP = {"contact.creep_model": 0, "contact.model": 0}   # Kalker, single point: fast steps
BOX_LOAD = -6.0e4                                        # N per axle box, ~70 kN wheel load
OBSERVED = ["wheelset.y", "wheelset.z", "wheelset.roll", "wheelset.velocity.z",
            "wheel.left.Q", "wheel.right.Q", "contact.left.point[1].normal_force"]
_LOG = None


class Host:
    def __init__(self, md, unzipped, name, params=CHEAP, initialize=True):
        global _LOG
        if _LOG is None:
            _LOG = FmiLog()     # one set of callbacks for every instance of this module:
            # pythonfmu 0.7.0 may deliver an instance's messages to the logger of
            # another instance (docs/limits_and_failures.md): one list, read in order
        self.messages = _LOG.messages
        _LOG.point_proxy_here()
        cb = _LOG.callbacks
        self.vr = {v.name: v.valueReference for v in md.modelVariables}
        self.type = {v.name: v.type for v in md.modelVariables}
        self.s = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier="Wheelset",
                           instanceName=name)
        self.s.instantiate(loggingOn=True, callbacks=cb)
        self.t = 0.0
        self.params = params
        self.initialized = False
        if initialize:
            self.initialize()

    def initialize(self):
        for name, value in self.params.items():
            self.s.setInteger([self.vr[name]], [int(value)])
        self.s.setupExperiment(startTime=0.0)
        self.s.enterInitializationMode()
        self.s.exitInitializationMode()
        self.initialized = True
        self.s.setReal([self.vr[f"axlebox.{side}.force.z"] for side in ("left", "right")],
                       [BOX_LOAD, BOX_LOAD])

    def step(self, n=1):
        for _ in range(n):
            self.s.doStep(currentCommunicationPoint=self.t, communicationStepSize=H)
            self.t += H

    def observe(self):
        return self.s.getReal([self.vr[n] for n in OBSERVED])

    def blob(self) -> bytes:
        state = self.s.getFMUstate()
        try:
            return bytes(self.s.serializeFMUstate(state))
        finally:
            self.s.freeFMUstate(state)

    def restore(self, blob: bytes):
        """fmi2DeSerializeFMUstate + fmi2SetFMUstate; returns the messages logged.
        A refused state is fmi2Error from fmi2DeSerializeFMUstate (the native
        front end checks there all that fmi2SetFMUstate would)."""
        n = len(self.messages)
        try:
            state = self.s.deSerializeFMUstate(bytes(blob))
        except FMICallException as exc:
            status = exc.status
        else:
            try:
                self.s.setFMUstate(state)
                status = 0
            except FMICallException as exc:
                status = exc.status
            self.s.freeFMUstate(state)
        messages = self.messages[n:]
        refused = any("state refused" in m for st, _, m in messages if st >= ERROR)
        assert status == (3 if refused else 0), (status, messages)
        return messages

    def close(self):
        if self.initialized:            # fmi2Terminate is not allowed before initialization
            self.s.terminate()
        self.s.freeInstance()


@pytest.fixture(scope="module")
def saved(md, unzipped):
    """(blob after 3 steps, OBSERVED after 3 and after 6 steps) of a clean run."""
    h = Host(md, unzipped, "saved")
    try:
        h.step(3)
        blob, three = h.blob(), h.observe()
        h.step(3)
        return blob, three, h.observe()
    finally:
        h.close()


@pytest.fixture
def host(md, unzipped):
    h = Host(md, unzipped, "target")
    yield h
    h.close()


def assert_refused(messages, *words):
    errors = [m for status, _, m in messages if status >= ERROR]
    assert errors, f"nothing logged at fmi2Error: {messages}"
    text = " ".join(errors)
    assert "state refused" in text, errors
    for w in words:
        assert w.lower() in text.lower(), f"{w!r} not in {errors}"


def assert_unchanged(h, saved):
    """A host that made 3 steps, then a refused restore: it goes on exactly like
    the clean run (the refused call changed nothing)."""
    _, three, six = saved
    assert h.observe() == three
    h.step(3)
    assert h.observe() == six


def edited(blob: bytes, edit) -> bytes:
    """The state with `edit` applied and its digest recomputed, as a deliberate
    edit does (the digest has no key): the field checks must refuse it."""
    doc = json.loads(blob)
    edit(doc)
    doc.pop(fmu_state.DIGEST_KEY, None)
    doc[fmu_state.DIGEST_KEY] = fmu_state.digest(doc)
    return json.dumps(doc).encode()


def set_array(doc_array, values):
    a = np.asarray(values, dtype="<f8")
    doc_array["shape"] = list(a.shape)
    doc_array["float64_le"] = base64.b64encode(a.tobytes()).decode()


def get_array(doc_array):
    raw = base64.b64decode(doc_array["float64_le"])
    return np.frombuffer(raw, dtype="<f8").reshape(doc_array["shape"]).copy()


# ---------------------------------------------------------------------------
# item 1: a crafted pickle runs nothing
# ---------------------------------------------------------------------------
class _Payload:
    """A pickle that, when loaded, creates the file `marker` (what an attacker's
    state file would do with os.system or exec)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('ran')",))


def test_crafted_pickle_state_runs_nothing(host, saved, tmp_path):
    marker = tmp_path / "pwned"
    blob = pickle.dumps({"values": _Payload(str(marker))}, protocol=pickle.HIGHEST_PROTOCOL)
    host.step(3)
    messages = host.restore(blob)
    assert not marker.exists(), "the pickle in the state blob was executed"
    assert_refused(messages, "pickle")
    assert_unchanged(host, saved)


# ---------------------------------------------------------------------------
# item 5: every malformed or inconsistent state is refused, with its reason
# ---------------------------------------------------------------------------
def _nan_state(doc):
    state = get_array(doc["model"]["state"])
    state[1] = math.nan                       # lateral displacement y
    set_array(doc["model"]["state"], state)


def _wrong_shape(doc):
    contact = get_array(doc["model"]["contact"])
    set_array(doc["model"]["contact"], contact.reshape(-1)[:-6].reshape(2, 3, -1))


def _short_data(doc):
    doc["model"]["summary"]["float64_le"] = base64.b64encode(b"\0" * 12).decode()


def _io_out_of_range(doc):
    io = get_array(doc["io"])
    io[0] = 1.0e12                            # axlebox.left.force.x, declared within +-1e6 N
    set_array(doc["io"], io)


def _lateral_out_of_range(doc):
    state = get_array(doc["model"]["state"])
    state[1] = 5.0                            # y = 5 m, declared within +-1 m
    set_array(doc["model"]["state"], state)


def _other_mass(doc):
    doc["values"]["wheelset.mass"] = float(2000.0).hex()


def _mass_out_of_range(doc):
    doc["values"]["wheelset.mass"] = float(-5.0).hex()


def _unknown_parameter(doc):
    doc["values"]["__class__"] = "os.system"


def _model_constants(doc):
    m = get_array(doc["model"]["model"])
    m[0] += 1.0                               # a constant of the core changed
    set_array(doc["model"]["model"], m)


CASES = {
    "time is a string": (lambda d: d.update(time="abc"), ["time", "float.hex"]),
    "time is a JSON number": (lambda d: d.update(time=0.003), ["time", "float.hex"]),
    "time NaN": (lambda d: d.update(time=float("nan").hex()), ["time", "not finite"]),
    "NaN in the wheelset state": (_nan_state, ["model.state", "not finite"]),
    "contact array of another shape": (_wrong_shape, ["model.contact", "shape"]),
    "data shorter than its shape": (_short_data, ["model.summary", "bytes"]),
    "input outside its declared range": (_io_out_of_range, ["io[0]", "declared range"]),
    "lateral displacement outside its range": (_lateral_out_of_range, ["wheelset.y", "outside"]),
    "saved with another mass": (_other_mass, ["wheelset.mass"]),
    "parameter outside its declared range": (_mass_out_of_range, ["wheelset.mass", "range"]),
    "unknown parameter": (_unknown_parameter, ["unknown key"]),
    "core constants changed": (_model_constants, ["model.model"]),
    "another build": (lambda d: d.update(guid="{00000000-0000-0000-0000-000000000000}"),
                      ["another build", "GUID"]),
    "another format version": (lambda d: d.update(version=1), ["version 1"]),
    "another format": (lambda d: d.update(format="x"), ["not a wheelset FMU state"]),
    "model missing": (lambda d: d.pop("model"), ["missing key", "model"]),
    "rhs count negative": (lambda d: d["model"].update(rhs_evaluations=-1), ["rhs_evaluations"]),
    "boolean as string": (lambda d: d.update(initialized="true"), ["initialized"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_malformed_json_state_refused(host, saved, case):
    edit, words = CASES[case]
    host.step(3)
    assert_refused(host.restore(edited(saved[0], edit)), *words)
    assert_unchanged(host, saved)


@pytest.mark.parametrize("blob, words", [
    (b"", ["not a JSON object"]),
    (b"\x00" * 64, ["not a JSON object"]),
    (b'{"format": "wheelset-fmu-state", "version": 1, "time": NaN}', ["NaN", "not allowed"]),
    (b'{"format": "wheelset-fmu-state", "version": 1' + b', "a": [' * 100000, ["JSON"]),
    (b"{" + b" " * (fmu_state.MAX_BLOB_BYTES + 1) + b"}", ["more than"]),
    (b"{\xff\xfe}", ["UTF-8"]),
])
def test_malformed_bytes_refused(host, saved, blob, words):
    host.step(3)
    assert_refused(host.restore(blob), *words)
    assert_unchanged(host, saved)


def test_truncated_state_refused(host, saved):
    host.step(3)
    assert_refused(host.restore(saved[0][: len(saved[0]) // 2]), "not valid JSON")
    assert_unchanged(host, saved)


def test_state_taken_before_initialization_refused(md, unzipped, host, saved):
    early = Host(md, unzipped, "early", initialize=False)
    try:
        blob = early.blob()
    finally:
        early.close()
    host.step(3)
    assert_refused(host.restore(blob), "before initialization")
    assert_unchanged(host, saved)


def test_in_memory_state_before_initialization_refused(md, unzipped, saved):
    """fmi2GetFMUstate before initialization, fmi2SetFMUstate after: refused,
    the initialized instance is kept."""
    h = Host(md, unzipped, "memory", initialize=False)
    try:
        early = h.s.getFMUstate()
        h.initialize()
        h.step(3)
        n = len(h.messages)
        with pytest.raises(FMICallException) as info:
            h.s.setFMUstate(early)
        assert info.value.status == 3          # fmi2Error (native front end)
        h.s.freeFMUstate(early)
        assert_refused(h.messages[n:], "before initialization")
        assert_unchanged(h, saved)
    finally:
        h.close()


# ---------------------------------------------------------------------------
# good states restore bit-exactly
# ---------------------------------------------------------------------------
def test_state_restores_bit_exactly_in_a_fresh_instance(md, unzipped, saved):
    """A state serialized by one instance, restored into a new one that was never
    initialized (the state carries its parameters): the same numbers, bit for bit."""
    blob, three, six = saved
    h = Host(md, unzipped, "fresh", initialize=False)
    try:
        messages = h.restore(blob)
        assert not [m for status, _, m in messages if status >= ERROR], messages
        h.t = 3 * H
        assert h.observe() == three
        h.step(3)
        assert h.observe() == six
        assert json.loads(h.blob())["guid"] == md.guid      # the build's GUID travels along
    finally:
        h.close()


def test_state_document_round_trip_is_bit_exact():
    """encode/decode of the format: -0.0, subnormals, NaN in the arrays kept bit
    for bit (the checks against the instance decide where NaN is allowed)."""
    kinds = {"a": "Real", "n": "Integer", "b": "Boolean", "s": "String"}
    schema = {"a": ("Real", -1.0, 1.0), "n": ("Integer", 0, 3), "b": ("Boolean", None, None),
              "s": ("String", None, None)}
    arrays = {"state": np.array([-0.0, 5e-324, 1.0 / 3.0]), "contact": np.arange(12.0).reshape(2, 3, 2),
              "summary": np.zeros(5), "inputs": np.array([1.0, math.nan]), "model": np.ones(3),
              "safety": np.array([0.0, 1.5, -1.0e9, 0.25, 0.0, 3.0, -1.0e9]),
              "jacobian": np.array([-1.0, 0.5, -2.5e9])}
    snapshot = {"initialized": True, "time": 0.1 + 0.2, "io": np.array([-0.0, 2.5]),
                "values": {"a": -0.0, "n": 2, "b": True, "s": "S1002 ünïcode"},
                "model": {"time": 0.30000000000000004, "distance": 8.334, "rhs_evaluations": 12,
                          "initialized": True, **arrays}}
    blob = fmu_state.encode(snapshot, guid="{g}", fmu_version="0.1.0", parameter_kinds=kinds)
    back = fmu_state.decode(blob, parameters=schema, io_ranges=((None, None), (None, None)))
    assert back["time"].hex() == snapshot["time"].hex()
    assert math.copysign(1.0, back["values"]["a"]) == -1.0
    assert back["values"] == {"a": -0.0, "n": 2, "b": True, "s": "S1002 ünïcode"}
    assert back["io"].tobytes() == snapshot["io"].tobytes()
    for key, value in arrays.items():
        assert back["model"][key].tobytes() == value.tobytes(), key
        assert back["model"][key].shape == value.shape, key


def test_no_pickle_in_the_fmu_sources():
    """Nothing in the FMU's Python (slave, state format, cache, adapter, core
    loader) imports pickle."""
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fmu_wheelset", "fmu")
    for name in ("slave.py", "fmu_state.py", "cache.py", "adapter.py", "core_loader.py"):
        with open(os.path.join(root, name), encoding="utf-8") as fh:
            text = fh.read()
        assert "import pickle" not in text and "pickle.loads" not in text, name
