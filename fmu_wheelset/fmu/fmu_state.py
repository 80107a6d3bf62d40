"""The serialized FMU state of the wheelset FMU: a versioned, self-describing
JSON document that is parsed, never executed (docs/SECURITY.md).

``fmi2SerializeFMUstate`` writes, ``fmi2DeSerializeFMUstate`` reads, one UTF-8
JSON object (at most MAX_BLOB_BYTES)::

    {"format": "wheelset-fmu-state", "version": 2,
     "sha256": "<hex digest of the document without this key>",
     "guid": "<the build's GUID>", "fmu_version": "0.1.0",
     "initialized": true,
     "time": "0x1.0624dd2f1a9fcp-7",              # float.hex: bit-exact
     "values": {"track.gauge": "0x1.6f5c28f5c28f6p+0", "contact.model": 1,
                "wheel.profile": "S1002", "suspension.builtin": false, ...},
     "io": {"shape": [n], "float64_le": "<base64 of the little-endian doubles>"},
     "model": {"time": "<hex>", "distance": "<hex>", "rhs_evaluations": 1234,
               "initialized": true, "state": <array>, "contact": <array>,
               "summary": <array>, "inputs": <array>, "model": <array>,
               "safety": <array>, "jacobian": <array>}}

Every number travels bit-exactly (floats as ``float.hex`` strings, arrays as
raw little-endian float64 in base64), so a restored instance continues exactly
as the one that was saved.

``sha256`` is the digest of the canonical JSON of the document without it
(keys sorted, no spaces: what the encoder writes). It detects corruption: a
flipped bit, a truncated or spliced copy. It has no key, so it does NOT stop a
deliberate edit (anyone can recompute it); the field checks do that.

The decoder knows every key and its type; anything else -- another format or
version, a digest that does not match, an unknown or missing key, a wrong
type, a shape that does not match the data, a non-finite number where one is
not allowed, a number outside the range of its field (the declared range of
its FMU variable where it has one, else a bound stated here), a parameter the
FMU does not have -- is refused with a ``StateError`` whose message says which
field and why.

The checks that need the living instance (the build's GUID, the shapes of the
core's arrays and the range of each entry, the parameters the instance was
initialized with) are done by ``check_against_instance``. No ``pickle``,
``eval`` or ``exec`` anywhere: the worst a crafted blob can do is to be
refused.

This module imports only the standard library and NumPy: it is bundled into
the FMU beside the slave (``resources/wheelset_fmu_state.py``).
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import re
from typing import Any, Dict, Mapping, Optional, Tuple

import numpy as np

FORMAT = "wheelset-fmu-state"
VERSION = 2
DIGEST_KEY = "sha256"
MAX_BLOB_BYTES = 4 * 1024 * 1024       # a state is ~20 kB; anything far larger is refused unread
MAX_STRING_CHARS = 4096                # longest String parameter a state may carry
MAX_ARRAY_ELEMENTS = 100_000           # no array of the core has more than a few hundred
# |time| of a state: 1e12 s (31,700 years) is far beyond any simulation and keeps
# every time far from overflow (the FMU's own bound, no FMI variable declares it)
MAX_TIME = 1.0e12

# the keys of a document, of its "model" object, and of an array
_TOP_KEYS = {"format", "version", DIGEST_KEY, "guid", "fmu_version", "initialized", "time",
             "values", "io", "model"}
_MODEL_SCALARS = {"time", "distance", "rhs_evaluations", "initialized"}
MODEL_ARRAYS = ("state", "contact", "summary", "inputs", "model", "safety", "jacobian")
_MODEL_KEYS = _MODEL_SCALARS | set(MODEL_ARRAYS)
_ARRAY_KEYS = {"shape", "float64_le"}


# what float.hex writes: finite numbers, inf and nan (nothing else is read as a float)
_HEX_FLOAT = re.compile(r"\A-?(?:0x[01]\.[0-9a-f]{1,13}p[+-][0-9]{1,4}|inf|nan)\Z")


class StateError(ValueError):
    """A serialized FMU state that cannot be restored; the message says why."""


class Rejected:
    """What ``_fmu_state_from_bytes`` hands to ``fmi2SetFMUstate`` for a blob
    that failed to decode (pythonfmu turns an exception into fmi2Fatal, so the
    refusal travels as a value and is reported by the set)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason

    def __repr__(self):
        return f"Rejected({self.reason!r})"


# ---------------------------------------------------------------------------
# encoding
# ---------------------------------------------------------------------------
def _hex(x: float) -> str:
    return float(x).hex()


def _array(a) -> dict:
    a = np.ascontiguousarray(a, dtype="<f8")
    return {"shape": list(a.shape), "float64_le": base64.b64encode(a.tobytes()).decode("ascii")}


def _encode_value(kind: str, value):
    if kind == "Real":
        return _hex(value)
    if kind in ("Integer", "Enumeration"):
        return int(value)
    if kind == "Boolean":
        return bool(value)
    return str(value)


def _canonical(doc: Mapping[str, Any]) -> bytes:
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode("utf-8")


def digest(doc: Mapping[str, Any]) -> str:
    """The sha256 (hex) of the canonical JSON of `doc` without its digest key."""
    return hashlib.sha256(_canonical({k: v for k, v in doc.items() if k != DIGEST_KEY})).hexdigest()


def encode(snapshot: Mapping[str, Any], *, guid: str, fmu_version: str,
           parameter_kinds: Mapping[str, str]) -> bytes:
    """The JSON document of a slave snapshot (the structure `decode` returns),
    with its digest."""
    model = snapshot.get("model")
    doc = {
        "format": FORMAT, "version": VERSION, "guid": str(guid), "fmu_version": str(fmu_version),
        "initialized": bool(snapshot["initialized"]), "time": _hex(snapshot["time"]),
        "values": {name: _encode_value(parameter_kinds[name], value)
                   for name, value in snapshot["values"].items()},
        "io": _array(snapshot["io"]),
        "model": None if model is None else {
            "time": _hex(model["time"]), "distance": _hex(model["distance"]),
            "rhs_evaluations": int(model["rhs_evaluations"]),
            "initialized": bool(model["initialized"]),
            **{key: _array(model[key]) for key in MODEL_ARRAYS}},
    }
    doc[DIGEST_KEY] = digest(doc)
    return _canonical(doc)


# ---------------------------------------------------------------------------
# decoding: structure and types only (no instance needed)
# ---------------------------------------------------------------------------
def _refuse_constant(token):
    raise StateError(f"the JSON number {token} is not allowed (non-finite numbers are "
                     "written as float.hex strings)")


def _keys(obj, expected: set, where: str):
    if not isinstance(obj, dict):
        raise StateError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    missing = expected - set(obj)
    unknown = set(obj) - expected
    if missing:
        raise StateError(f"{where}: missing key(s) {sorted(missing)}")
    if unknown:
        raise StateError(f"{where}: unknown key(s) {sorted(unknown)[:5]}")


def _bool(value, where: str) -> bool:
    if not isinstance(value, bool):
        raise StateError(f"{where}: expected true or false, got {type(value).__name__}")
    return value


def _int(value, where: str, lo: int, hi: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise StateError(f"{where}: expected an integer, got {type(value).__name__}")
    if not lo <= value <= hi:
        shown = str(value) if abs(value) < 10 ** 30 else f"an integer of {len(str(abs(value)))} digits"
        raise StateError(f"{where}: {shown} is outside [{lo}, {hi}]")
    return value


def _float(value, where: str, *, finite: bool = True, lo: Optional[float] = None,
           hi: Optional[float] = None) -> float:
    """A float written with float.hex (the only form the encoder writes), in [lo, hi]."""
    if not isinstance(value, str) or not _HEX_FLOAT.match(value):
        raise StateError(f"{where}: expected a float.hex string")
    try:
        x = float.fromhex(value)
    except (ValueError, OverflowError):
        raise StateError(f"{where}: not a float.hex number") from None
    if finite and not math.isfinite(x):
        raise StateError(f"{where}: {x!r} is not finite")
    if (lo is not None and x < lo) or (hi is not None and x > hi):
        raise StateError(f"{where}: {x!r} is outside [{lo:g}, {hi:g}]")
    return x


def _decode_array(obj, where: str) -> np.ndarray:
    _keys(obj, _ARRAY_KEYS, where)
    shape = obj["shape"]
    if (not isinstance(shape, list) or not 1 <= len(shape) <= 4
            or any(not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_ARRAY_ELEMENTS
                   for n in shape)):
        raise StateError(f"{where}.shape: expected 1 to 4 integers in [0, {MAX_ARRAY_ELEMENTS}]")
    count = int(np.prod(shape)) if shape else 0
    if count > MAX_ARRAY_ELEMENTS:
        raise StateError(f"{where}: {count} elements, more than {MAX_ARRAY_ELEMENTS}")
    data = obj["float64_le"]
    if not isinstance(data, str):
        raise StateError(f"{where}.float64_le: expected a base64 string")
    try:
        raw = base64.b64decode(data.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise StateError(f"{where}.float64_le: not valid base64") from None
    if len(raw) != 8 * count:
        raise StateError(f"{where}: {len(raw)} bytes of data for shape {shape} "
                         f"({8 * count} expected)")
    return np.frombuffer(raw, dtype="<f8").astype(np.float64).reshape(shape)


def _decode_value(name: str, kind: str, lo, hi, value):
    where = f"values[{name!r}]"
    if kind == "Real":
        x = _float(value, where)
        if (lo is not None and x < lo) or (hi is not None and x > hi):
            raise StateError(f"{where}: {x!r} is outside its declared range [{lo}, {hi}]")
        return x
    if kind in ("Integer", "Enumeration"):
        return _int(value, where, int(lo) if lo is not None else -2**31,
                    int(hi) if hi is not None else 2**31 - 1)
    if kind == "Boolean":
        return _bool(value, where)
    if not isinstance(value, str):
        raise StateError(f"{where}: expected a string, got {type(value).__name__}")
    if len(value) > MAX_STRING_CHARS or "\0" in value:
        raise StateError(f"{where}: longer than {MAX_STRING_CHARS} characters or contains NUL")
    return value


def decode(blob, *, parameters: Mapping[str, Tuple[str, Optional[float], Optional[float]]],
           io_ranges: Tuple[tuple, ...],
           distance_range: Tuple[float, float] = (-math.inf, math.inf)) -> Dict[str, Any]:
    """Parse and check a serialized state; returns the snapshot (as `encode` takes it).

    `parameters`: name -> (kind, min, max) of every FMU parameter (the state
    carries those the host set, no others); `io_ranges`: for every input and
    output in the order of the slave's value array, (min, max) or (min, max,
    kind, name) (None: unbounded; kind "Boolean": 0 or 1, "Integer": a whole
    number); `distance_range`: the declared range of the travelled distance.
    Raises StateError with the reason; never runs anything from the blob."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise StateError(f"a serialized state is bytes, got {type(blob).__name__}")
    blob = bytes(blob)
    if len(blob) > MAX_BLOB_BYTES:
        raise StateError(f"{len(blob)} bytes, more than the {MAX_BLOB_BYTES} a state may have")
    if not blob.lstrip()[:1] == b"{":
        what = "a Python pickle" if blob[:1] == b"\x80" else "not a JSON object"
        raise StateError(f"not a wheelset FMU state ({what}; expected the JSON format "
                         f"{FORMAT!r} version {VERSION})")
    try:
        doc = json.loads(blob.decode("utf-8"), parse_constant=_refuse_constant)
    except StateError:
        raise
    except UnicodeDecodeError:
        raise StateError("not UTF-8 text") from None
    except RecursionError:
        raise StateError("not valid JSON (nested too deeply)") from None
    except json.JSONDecodeError as exc:
        raise StateError(f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") \
            from None
    except ValueError as exc:
        # e.g. an integer of more digits than Python converts (sys.get_int_max_str_digits)
        raise StateError(f"not valid JSON ({str(exc)[:200]})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise StateError(f"not a wheelset FMU state (no \"format\": {FORMAT!r})")
    if doc.get("version") != VERSION:
        raise StateError(f"state format version {doc.get('version')!r}; this FMU reads "
                         f"version {VERSION}")
    if not isinstance(doc.get(DIGEST_KEY), str) or doc[DIGEST_KEY] != digest(doc):
        raise StateError(f"the digest ({DIGEST_KEY}) does not match the content: the state is "
                         "corrupted (changed after it was written)")
    _keys(doc, _TOP_KEYS, "state")
    for key in ("guid", "fmu_version"):
        if not isinstance(doc[key], str) or len(doc[key]) > 200:
            raise StateError(f"{key}: expected a string of at most 200 characters")

    values = doc["values"]
    if not isinstance(values, dict):
        raise StateError("values: expected a JSON object")
    unknown = set(values) - set(parameters)
    if unknown:        # a parameter not given has its default: missing ones are fine
        raise StateError(f"values: unknown key(s) {sorted(unknown)[:5]}")
    snapshot = {
        "guid": doc["guid"], "fmu_version": doc["fmu_version"],
        "initialized": _bool(doc["initialized"], "initialized"),
        "time": _float(doc["time"], "time", lo=-MAX_TIME, hi=MAX_TIME),
        "values": {name: _decode_value(name, *parameters[name], values[name]) for name in values},
    }
    io = _decode_array(doc["io"], "io")
    if io.shape != (len(io_ranges),):
        raise StateError(f"io: shape {list(io.shape)}, this FMU has {len(io_ranges)} inputs "
                         "and outputs")
    if not np.isfinite(io).all():
        raise StateError(f"io: {int((~np.isfinite(io)).sum())} non-finite value(s)")
    for j, entry in enumerate(io_ranges):
        lo, hi = entry[:2]
        kind, name = entry[2:] if len(entry) == 4 else ("Real", f"io[{j}]")
        x = float(io[j])
        if (lo is not None and x < lo) or (hi is not None and x > hi):
            raise StateError(f"io[{j}] ({name}): {x!r} is outside its declared range [{lo}, {hi}]")
        if kind == "Boolean" and x not in (0.0, 1.0):
            raise StateError(f"io[{j}] ({name}): {x!r} is not 0 or 1 (a Boolean)")
        if kind == "Integer" and x != math.floor(x):
            raise StateError(f"io[{j}] ({name}): {x!r} is not a whole number (an Integer)")
    snapshot["io"] = io

    model = doc["model"]
    if model is None:
        snapshot["model"] = None
    else:
        _keys(model, _MODEL_KEYS, "model")
        snapshot["model"] = {
            "time": _float(model["time"], "model.time", lo=0.0, hi=MAX_TIME),
            "distance": _float(model["distance"], "model.distance", lo=distance_range[0],
                               hi=distance_range[1]),
            "rhs_evaluations": _int(model["rhs_evaluations"], "model.rhs_evaluations", 0, 2**62),
            "initialized": _bool(model["initialized"], "model.initialized"),
            **{key: _decode_array(model[key], f"model.{key}") for key in MODEL_ARRAYS},
        }
    return snapshot


# ---------------------------------------------------------------------------
# checks against the living instance
# ---------------------------------------------------------------------------
def check_against_instance(snapshot: Mapping[str, Any], *, guid: str,
                           live_model: Optional[Mapping[str, Any]],
                           nan_allowed: Mapping[str, Tuple[int, ...]] = {},
                           state_bounds: Mapping[int, Tuple[float, float, str]] = {},
                           array_bounds: Mapping[str, Any] = {}) -> None:
    """Raise StateError unless `snapshot` can be restored into this instance.

    `guid`: the build's GUID ("" when unknown: not checked); `live_model`: the
    core's snapshot of this (initialized) instance, which fixes the shapes of
    the arrays and the model constants; `nan_allowed`: array name -> indices
    that may be NaN (the curvature and cant inputs: "from the track");
    `state_bounds`: index of the state vector -> (lo, hi, name);
    `array_bounds`: array name -> (lo, hi, name) for every entry, or a sequence
    of them, one per index of the array's last axis; an entry (lo, hi, name,
    flag) applies only to the rows whose column `flag` is > 0.5 (the active
    contact points: inactive rows are never output). NaN is left to the
    finiteness check above."""
    if guid and snapshot.get("guid") and snapshot["guid"] != guid:
        raise StateError(f"the state was saved by another build of the FMU (GUID "
                         f"{snapshot['guid']}, this FMU {guid})")
    model = snapshot["model"]
    if not snapshot["initialized"] or model is None or not model["initialized"]:
        raise StateError("the state was saved before initialization (fmi2GetFMUstate before "
                         "fmi2ExitInitializationMode); it holds no wheelset state to restore")
    if live_model is None:
        raise StateError("the instance has no model to restore the state into")
    for key in MODEL_ARRAYS:
        got, want = model[key], np.asarray(live_model[key])
        if got.shape != want.shape:
            raise StateError(f"model.{key}: shape {list(got.shape)}, this FMU's core has "
                             f"{list(want.shape)}")
        finite = np.isfinite(got)
        for j in nan_allowed.get(key, ()):
            finite.flat[j] = finite.flat[j] or math.isnan(got.flat[j])
        if not finite.all():
            bad = int(np.flatnonzero(~finite)[0])
            raise StateError(f"model.{key}[{bad}] = {got.flat[bad]!r} is not finite")
    if not np.array_equal(model["model"], np.asarray(live_model["model"])):
        raise StateError("model.model: the core constants of the state differ from those of "
                         "this instance (saved with other parameters or another core)")
    for j, (lo, hi, name) in state_bounds.items():
        x = model["state"][j]
        if not lo <= x <= hi:
            raise StateError(f"model.state: {name} = {x!r} is outside [{lo}, {hi}]")
    for key, bounds in array_bounds.items():
        values = np.asarray(model[key])
        columns = [bounds] * values.shape[-1] if isinstance(bounds[0], (int, float)) else bounds
        if len(columns) != values.shape[-1]:
            raise StateError(f"model.{key}: {values.shape[-1]} entries per row, this FMU's core "
                             f"has {len(columns)}")
        rows = values.reshape(-1, values.shape[-1])
        for j, (lo, hi, name, *flag) in enumerate(columns):
            outside = (rows[:, j] < lo) | (rows[:, j] > hi)
            if flag:
                outside &= rows[:, flag[0]] > 0.5
            bad = np.flatnonzero(outside)
            if bad.size:
                x = float(rows[bad[0], j])
                raise StateError(f"model.{key} ({name}) = {x!r} is outside [{lo:g}, {hi:g}]")
    if model["time"] < 0.0:
        raise StateError(f"model.time {model['time']!r} s is negative")


# ---------------------------------------------------------------------------
# the build's GUID
# ---------------------------------------------------------------------------
_GUID_PATTERN = None
_GUIDS: Dict[str, str] = {}


def build_guid(resources: Optional[str]) -> str:
    """The GUID in the modelDescription.xml beside an FMU's resources folder
    ("" when there is none, e.g. the slave used outside an FMU)."""
    global _GUID_PATTERN
    if not resources:
        return ""
    if resources in _GUIDS:
        return _GUIDS[resources]
    import os
    import re
    if _GUID_PATTERN is None:
        _GUID_PATTERN = re.compile(rb"<fmiModelDescription\b[^>]*?\sguid\s*=\s*\"([^\"]{1,100})\"")
    guid = ""
    path = os.path.join(os.path.dirname(os.path.abspath(resources)), "modelDescription.xml")
    try:
        with open(path, "rb") as fh:
            head = fh.read(65536)
        match = _GUID_PATTERN.search(head)
        if match:
            guid = match.group(1).decode("ascii", errors="replace")
    except OSError:
        pass
    _GUIDS[resources] = guid
    return guid
