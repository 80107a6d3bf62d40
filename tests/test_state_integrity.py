"""Serialized FMU states are tamper-evident and range-checked (format:
fmu_wheelset/fmu/fmu_state.py; what each check defends against: docs/SECURITY.md).

* 1000 random single-bit flips of a serialized state: none may be accepted
  with a result that differs from the clean state's (an outside tester found
  7 of 1000 accepted with a silently different result and 1 failing at the
  next step): the digest over the payload detects corruption;
* crafted values with a recomputed digest (what a deliberate edit does: the
  digest is not keyed, so it does not stop one) are refused by the range check
  of their field, each with its reason: model.distance = 2^100, a
  100,000-digit integer, outputs and state entries outside their declared
  ranges;
* fmi2DeSerializeFMUstate refuses what fmi2SetFMUstate would (fmi2Error with
  the reason), into an initialized instance and into a fresh one.
"""
from __future__ import annotations

import base64
import hashlib
import json
import random

import numpy as np
import pytest

fmpy = pytest.importorskip("fmpy")
from fmpy.fmi1 import FMICallException  # noqa: E402

from test_security_state import Host, H  # noqa: E402

from fmu_wheelset.fmu import fmu_state  # noqa: E402

ERROR = 3
FLIPS = 1000


def resign(doc: dict) -> bytes:
    """The document with its digest recomputed, as the encoder writes it: what
    anyone who edits a state on purpose can do (the digest has no key)."""
    doc = {k: v for k, v in doc.items() if k != "sha256"}
    payload = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    doc["sha256"] = hashlib.sha256(payload).hexdigest()
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def get_array(a):
    return np.frombuffer(base64.b64decode(a["float64_le"]), dtype="<f8").reshape(a["shape"]).copy()


def set_array(a, values):
    a["float64_le"] = base64.b64encode(np.asarray(values, dtype="<f8").tobytes()).decode()


def try_restore(h, blob):
    """('deserialize' | 'set', messages) for a refused blob, ('accepted', messages)."""
    n = len(h.messages)
    try:
        state = h.s.deSerializeFMUstate(bytes(blob))
    except FMICallException as exc:
        assert exc.status == ERROR
        return "deserialize", h.messages[n:]
    try:
        h.s.setFMUstate(state)
    except FMICallException as exc:
        assert exc.status == ERROR
        return "set", h.messages[n:]
    finally:
        h.s.freeFMUstate(state)
    return "accepted", h.messages[n:]


@pytest.fixture(scope="module")
def clean(md, unzipped):
    """(blob after 3 steps, outputs after 3 more steps) of a clean run, and an
    instance to restore into (3 steps in)."""
    h = Host(md, unzipped, "integrity")
    h.step(3)
    blob = h.blob()
    good = h.s.getFMUstate()
    h.step(3)
    after = h.observe()
    yield h, blob, good, after
    h.s.freeFMUstate(good)
    h.close()


def test_random_bit_flips_are_never_accepted_with_another_result(clean):
    h, blob, good, after = clean
    rng = random.Random(20261207)
    outcomes = {"deserialize": 0, "set": 0, "same": 0, "different": 0, "failed step": 0}
    unexplained = []
    for _ in range(FLIPS):
        bit = rng.randrange(8 * len(blob))
        flipped = bytearray(blob)
        flipped[bit // 8] ^= 1 << (bit % 8)
        where, messages = try_restore(h, flipped)
        if where != "accepted":
            outcomes[where] += 1
            errors = [m for status, _, m in messages if status >= ERROR]
            if not any("state refused" in m for m in errors):
                unexplained.append((bit, errors))
        else:
            h.t = 3 * H
            try:
                h.step(3)
                outcomes["same" if h.observe() == after else "different"] += 1
            except FMICallException:
                outcomes["failed step"] += 1
        h.s.setFMUstate(good)
        h.t = 3 * H
    print("bit flips:", outcomes)
    assert outcomes["different"] == 0 and outcomes["failed step"] == 0, outcomes
    # each refusal says why, and deserialization refuses what the set would
    assert not unexplained, unexplained[:3]
    assert outcomes["set"] == 0, outcomes


def _distance_2_100(doc):
    doc["model"]["distance"] = float(2.0 ** 100).hex()


def _huge_integer(doc):
    doc["model"]["rhs_evaluations"] = int("9" * 4000)      # Python's str->int limit is 4300 digits


def _output_out_of_range(doc, md):
    from fmu_wheelset.fmu import adapter          # the state's "io" order: inputs, then outputs, table order
    names = [entry[3] for entry in adapter.IO_RANGES]
    io = get_array(doc["io"])
    io[names.index("wheelset.z")] = 1.0e30                  # declared within -1 .. 2 m
    set_array(doc["io"], io)


def _boolean_output_not_boolean(doc, md):
    from fmu_wheelset.fmu import adapter          # the state's "io" order: inputs, then outputs, table order
    names = [entry[3] for entry in adapter.IO_RANGES]
    io = get_array(doc["io"])
    io[names.index("status.derailment")] = 0.5
    set_array(doc["io"], io)


def _spin_rate_out_of_range(doc):
    state = get_array(doc["model"]["state"])
    state[11] = 1.0e20                                      # spin rate, declared +-1e4 rad/s
    set_array(doc["model"]["state"], state)


def _normal_force_out_of_range(doc):
    contact = get_array(doc["model"]["contact"])
    contact[0, 0, 10] = 1.0e30                              # normal force, declared [0, 1e7] N
    set_array(doc["model"]["contact"], contact)


def _time_far_future(doc):
    doc["time"] = float(1.0e300).hex()


def _climb_since(doc):
    # the running-safety memory (solver/model/fast_step.py SF_*): a climb dated 1e300 s
    doc["model"]["safety"]["float64_le"] = base64.b64encode(
        np.array([0.0, 0.0, 1.0e300, -1.0e9, 0.0, 0.0, -1.0e9]).tobytes()).decode()


def _preset_path(doc):
    doc["values"]["preset"] = "../../../etc/passwd"


CRAFTED = {
    "model.distance = 2^100": (_distance_2_100, ["model.distance", "outside"]),
    "100,000-digit integer": (None, ["integer", "digits"]),
    "4000-digit rhs count": (_huge_integer, ["model.rhs_evaluations", "outside"]),
    "output outside its range": (_output_out_of_range, ["wheelset.z", "declared range"]),
    "Boolean output 0.5": (_boolean_output_not_boolean, ["status.derailment", "0 or 1"]),
    "spin rate 1e20": (_spin_rate_out_of_range, ["wheelset.spin_rate", "outside"]),
    "normal force 1e30": (_normal_force_out_of_range, ["model.contact", "normal_force"]),
    "time 1e300": (_time_far_future, ["time", "outside"]),
    "climb since 1e300": (_climb_since, ["model.safety", "outside"]),
    "preset not a name": (_preset_path, ["preset", "name"]),
}


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_crafted_fields_are_refused_by_their_range_check(clean, md, case):
    h, blob, good, after = clean
    edit, words = CRAFTED[case]
    doc = json.loads(blob)
    if edit is None:
        # a 100,000-digit integer: json.loads itself refuses it (Python's limit)
        text = resign(doc).replace(b'"rhs_evaluations":', b'"rhs_evaluations":' + b"9" * 100_000
                                   + b",\"x\":", 1)
        crafted = text
    else:
        edit(doc, md) if edit.__code__.co_argcount == 2 else edit(doc)
        crafted = resign(doc)
    where, messages = try_restore(h, crafted)
    assert where == "deserialize", (where, messages)
    errors = " ".join(m for status, _, m in messages if status >= ERROR)
    assert "state refused" in errors
    for w in words:
        assert w.lower() in errors.lower(), (w, errors)
    assert "AttributeError" not in errors
    # nothing changed: the instance goes on as the clean run
    h.s.setFMUstate(good)
    h.t = 3 * H
    h.step(3)
    assert h.observe() == after


def test_an_edit_without_the_digest_is_refused_as_corrupt(clean):
    h, blob, good, after = clean
    doc = json.loads(blob)
    doc["model"]["distance"] = float(1.0).hex()             # in range, digest not recomputed
    where, messages = try_restore(h, json.dumps(doc, sort_keys=True, separators=(",", ":")).encode())
    assert where == "deserialize"
    assert any("digest" in m for status, _, m in messages if status >= ERROR), messages


def test_deserialize_into_a_fresh_instance_refuses_what_set_would(clean, md, unzipped):
    # a state whose core constants differ from what its own parameters build
    # (a deliberate edit): a fresh instance has no model to compare with until
    # it builds one; deserialization builds it and refuses
    h, blob, good, after = clean
    doc = json.loads(blob)
    m = get_array(doc["model"]["model"])
    m[0] += 1.0
    set_array(doc["model"]["model"], m)
    fresh = Host(md, unzipped, "fresh-integrity", initialize=False)
    try:
        where, messages = try_restore(fresh, resign(doc))
        assert where == "deserialize", messages
        assert any("model.model" in m for status, _, m in messages if status >= ERROR), messages
        # and the clean blob restores there, bit for bit
        where, messages = try_restore(fresh, blob)
        assert where == "accepted", messages
        fresh.t = 3 * H
        fresh.step(3)
        assert fresh.observe() == after
    finally:
        fresh.close()


def test_the_digest_round_trips_through_the_format():
    kinds = {"a": "Real"}
    schema = {"a": ("Real", -1.0, 1.0)}
    arrays = {key: np.zeros(2) for key in fmu_state.MODEL_ARRAYS}
    snapshot = {"initialized": True, "time": 0.5, "io": np.array([0.25]), "values": {"a": 0.5},
                "model": {"time": 0.5, "distance": 1.0, "rhs_evaluations": 3,
                          "initialized": True, **arrays}}
    blob = fmu_state.encode(snapshot, guid="{g}", fmu_version="0.1.0", parameter_kinds=kinds)
    doc = json.loads(blob)
    assert doc["sha256"] == hashlib.sha256(
        json.dumps({k: v for k, v in doc.items() if k != "sha256"}, sort_keys=True,
                   separators=(",", ":")).encode()).hexdigest()
    back = fmu_state.decode(blob, parameters=schema, io_ranges=((None, None),))
    assert back["values"] == {"a": 0.5}
    with pytest.raises(fmu_state.StateError, match="digest"):
        fmu_state.decode(blob.replace(b'"distance":"0x1', b'"distance":"0x1.8', 1) or blob,
                         parameters=schema, io_ranges=((None, None),))
