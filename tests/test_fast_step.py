"""The fast doStep: a numba cfunc (solver/py) that the C
front end calls in fmi2DoStep, and the Python step it hands every step it does
not accept to, in real hosts (FMPy in this process, the plain C host of
tests/c_host), on the Ren & Jin scenario (benchmarks/bench_fmu.py REN_JIN).

* the two paths give bit-identical outputs (every Real, Integer and Boolean
  output) at every one of 300 steps of 1 ms: they run the same numba functions
  for the core, the bookkeeping, the input map and the output copy;
* a NaN input: fmi2Discard with the same logged message on both paths, the
  outputs unchanged, then a restored state and a finite step fmi2OK;
* a rollback with fmi2SetFMUstate after fast steps repeats them bit for bit.

WHEELSET_FMU_FAST_STEP=0 forces the Python path (read at
fmi2ExitInitializationMode). With logging on, the front end logs each step the
fast step hands to Python: none may be logged over the clean steps, so the
equality is not that of the Python path with itself.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

fmpy = pytest.importorskip("fmpy")
from fmpy.fmi1 import FMICallException  # noqa: E402
from fmpy.fmi2 import FMU2Slave  # noqa: E402

from benchmarks.bench_fmu import REN_JIN, c_host_args  # noqa: E402
from conftest import module_log  # noqa: E402
from test_native_fmu import clean_environment, host, rows, run_host  # noqa: E402,F401

H = 1e-3
N_STEPS = 300
FMI2_TERMINATED = 3          # fmi2StatusKind fmi2Terminated (FMI 2.0)
HANDED = "the fast step handed the step to Python"
def _log():
    return module_log(__name__)      # one set of callbacks for this module's instances


class Instance:
    def __init__(self, md, unzipped, name, monkeypatch, fast, extra=None):
        log = _log()
        first = len(log.messages)
        self.s = s = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier="Wheelset",
                               instanceName=name)
        s.instantiate(loggingOn=True, callbacks=log.callbacks)
        by = {v.name: v for v in md.modelVariables}
        for key, value in {**REN_JIN, **(extra or {})}.items():
            v = by[key]
            if v.type == "Real":
                s.setReal([v.valueReference], [float(value)])
            elif v.type in ("Integer", "Enumeration"):
                s.setInteger([v.valueReference], [int(value)])
            elif v.type == "Boolean":
                s.setBoolean([v.valueReference], [bool(value)])
            else:
                s.setString([v.valueReference], [str(value)])
        s.setupExperiment(startTime=0.0)
        s.enterInitializationMode()
        with monkeypatch.context() as m:
            if fast:
                m.delenv("WHEELSET_FMU_FAST_STEP", raising=False)
            else:
                m.setenv("WHEELSET_FMU_FAST_STEP", "0")
            s.exitInitializationMode()
        self.log, self.name = log, name
        texts = self.messages(first)
        assert any(("fast doStep on" if fast else "fast doStep off") in t for t in texts), texts
        outputs = [v for v in md.modelVariables if v.causality == "output"]
        self.real = [v.valueReference for v in outputs if v.type == "Real"]
        self.integer = [v.valueReference for v in outputs if v.type in ("Integer", "Enumeration")]
        self.boolean = [v.valueReference for v in outputs if v.type == "Boolean"]
        assert len(self.real) + len(self.integer) + len(self.boolean) == len(outputs)
        self.t = 0.0
        self.k = 0

    def messages(self, first=0):
        """This instance's messages since the first `first` (the bridge's begin with its name)."""
        return [text for _, _, text in self.log.since(first) if text.startswith(self.name + ":")]

    def outputs(self):
        s = self.s
        return np.concatenate([np.array(s.getReal(self.real)),
                               np.array(s.getInteger(self.integer), dtype=float),
                               np.array(s.getBoolean(self.boolean), dtype=float)])

    def step(self):
        self.k += 1
        t_next = self.k * H           # communication points as FMPy computes them
        status = self.s.doStep(self.t, t_next - self.t)
        self.t = t_next
        return status

    def free(self):
        self.s.terminate()
        self.s.freeInstance()


def make_pair(md, unzipped, monkeypatch, extra=None):
    return (Instance(md, unzipped, "fast", monkeypatch, fast=True, extra=extra),
            Instance(md, unzipped, "python", monkeypatch, fast=False, extra=extra))


@pytest.fixture()
def pair(md, unzipped, monkeypatch):
    instances = make_pair(md, unzipped, monkeypatch)
    yield instances
    for inst in instances:
        inst.free()


# contact.geometry 1 = "table": the shared, read-only contact table (fewer steps:
# the same kernels, only the full contact search reads the table); solver.integrator
# 2 = adaptive RK23 (its own kernel, the step history restarted at every doStep);
# 4 = Rosenbrock (its Jacobian kept from doStep to doStep in the model's state)
ROSENBROCK = {"solver.integrator": 4, "solver.internal_step": 0.01, "solver.tolerance": 1e-4}


@pytest.mark.parametrize("extra, n_steps", [({"contact.geometry": 0}, N_STEPS),
                                            ({"contact.geometry": 1}, 100),
                                            ({"solver.integrator": 2}, 100),
                                            (ROSENBROCK, 100)],
                         ids=["online", "table", "adaptive", "rosenbrock"])
def test_fast_and_python_steps_are_bit_identical(md, unzipped, monkeypatch, extra, n_steps):
    pair = make_pair(md, unzipped, monkeypatch, extra)
    try:
        check_identical(pair, n_steps)
    finally:
        for inst in pair:
            inst.free()


def check_identical(pair, n_steps):
    fast, python = pair
    first = len(fast.log.messages)
    assert np.array_equal(fast.outputs(), python.outputs())
    for k in range(n_steps):
        fast.step()
        python.step()
        a, b = fast.outputs(), python.outputs()
        assert np.isfinite(a).all()
        differ = np.nonzero(a != b)[0]
        assert differ.size == 0, f"step {k + 1}: outputs {differ[:5].tolist()} differ"
    handed = [t for _, _, t in fast.log.since(first) if HANDED in t]
    assert handed == [], handed[:3]          # every step went through the fast step
    # the scenario is not trivial: the wheelset has moved in the R400 curve entry
    y = python.s.getReal([python.real[0]])
    assert np.isfinite(y).all()


def test_rollback_after_fast_steps_repeats_bit_for_bit(pair):
    check_rollback(pair)


def test_rollback_with_the_kept_jacobian_repeats_bit_for_bit(md, unzipped, monkeypatch):
    # the Rosenbrock integrator's Jacobian, computed at one doStep and used by the
    # next ones, travels in the FMU state (plain and serialized)
    pair = make_pair(md, unzipped, monkeypatch, ROSENBROCK)
    try:
        check_rollback(pair)
    finally:
        for inst in pair:
            inst.free()


def check_rollback(pair):
    fast, _ = pair
    for _ in range(100):
        fast.step()
    state = fast.s.getFMUstate()
    t0, k0 = fast.t, fast.k
    first = []
    for _ in range(100):
        fast.step()
        first.append(fast.outputs())
    # the serialized form too (fmi2SerializeFMUstate / fmi2DeSerializeFMUstate)
    blob = fast.s.serializeFMUstate(state)
    copy = fast.s.deSerializeFMUstate(blob)
    for restore in (state, copy):
        fast.s.setFMUstate(restore)
        fast.t, fast.k = t0, k0
        for j in range(100):
            fast.step()
            assert np.array_equal(fast.outputs(), first[j]), f"step {j + 1} after the rollback"
    fast.s.freeFMUstate(state)
    fast.s.freeFMUstate(copy)


def test_nan_input_discarded_with_the_python_message(pair, md):
    lateral = next(v.valueReference for v in md.modelVariables if v.name == "axlebox.left.force.y")
    texts = {}
    for inst in pair:
        for _ in range(20):
            inst.step()                                        # raises unless fmi2OK
        before = inst.outputs()
        state = inst.s.getFMUstate()
        first = len(inst.log.messages)
        inst.s.setReal([lateral], [float("nan")])
        with pytest.raises(FMICallException) as failed:
            inst.step()
        assert failed.value.status == 2                        # fmi2Discard
        assert not inst.s.getBooleanStatus(FMI2_TERMINATED)                  # fmi2Terminated false
        assert np.array_equal(inst.outputs(), before)          # nothing changed
        texts[inst.name] = [t for _, _, t in inst.log.since(first) if "not finite" in t]
        inst.s.setFMUstate(state)
        inst.s.setReal([lateral], [0.0])
        inst.k -= 1
        inst.t = inst.k * H
        inst.step()                                            # fmi2OK after the restore
        assert not inst.s.getBooleanStatus(FMI2_TERMINATED)
        inst.s.freeFMUstate(state)
    fast, python = pair
    assert texts["fast"] == texts["python"] and len(texts["fast"]) == 1, texts
    assert "axlebox.left.force.y = nan" in texts["fast"][0]
    assert np.array_equal(fast.outputs(), python.outputs())


def test_c_host_fast_and_python_paths_agree(host, wheelset_fmu_unzipped, md):
    # the plain C host (no Python of its own): every Real output printed after
    # each of N_STEPS steps, %.17g (round-trip exact); the NaN test at the end
    lateral = next(v.valueReference for v in md.modelVariables if v.name == "axlebox.left.force.y")
    args = c_host_args(md)
    runs = {}
    for label, extra in (("fast", {}), ("python", {"WHEELSET_FMU_FAST_STEP": "0"})):
        proc = run_host(host, wheelset_fmu_unzipped, md.guid, args, n=N_STEPS,
                        options=("--nan-test", str(lateral)), env=clean_environment(**extra))
        assert proc.returncode == 0, f"{label}: {proc.stderr[-3000:]}"
        runs[label] = proc
    fast, python = runs["fast"], runs["python"]
    assert "fast doStep on" in fast.stderr and "fast doStep off" in python.stderr
    assert fast.stdout == python.stdout                         # every row, every digit
    table = rows(fast.stdout)
    assert table.shape[0] == N_STEPS + 2 and np.isfinite(table).all()

    def discard_messages(stderr):
        return [re.sub(r"^\[[^\]]*\] ", "", line) for line in stderr.splitlines()
                if "not finite" in line]
    assert discard_messages(fast.stderr) == discard_messages(python.stderr) != []
    # the fast step handed exactly the NaN step to Python (FALLBACK_INPUT = 3)
    handed = [line for line in fast.stderr.splitlines() if HANDED in line]
    assert len(handed) == 1 and "(code 3," in handed[0], handed


def test_pack_block_refuses_a_layout_it_was_not_written_for():
    # the bridge turns this into one warning and the Python step for every
    # doStep (never a crash): a view the cfunc could not address as C-contiguous,
    # a wrong dtype
    from solver.layout import (
        ENTRY, E_STATE, E_STEP_DATA, FMU_ARRAYS, N_ENTRIES, N_INTS, N_REALS, SD_CONTACT,
        SD_RECORD,
    )
    from solver.model.fast_step import BlockError, pack_block
    from solver.model.wheelset import WheelsetModel
    model = WheelsetModel()
    data = list(model.step_data)
    arrays = {name: np.zeros(3 if ndim == 1 else (3,) * ndim,
                             dtype=dtype) for name, dtype, ndim in FMU_ARRAYS}
    arrays.update(state=model.state, keep_state=np.zeros_like(model.state),
                  keep_contact=np.zeros_like(model.arrays.contact), keep_summary=np.zeros_like(model.arrays.summary),
                  keep_record=np.zeros_like(model.record), keep_derived=np.zeros_like(model.arrays.derived),
                  clock=model.arrays.clock, keep_clock=np.zeros_like(model.arrays.clock),
                  rhs_count=model.arrays.rhs_count, keep_rhs_count=np.zeros_like(model.arrays.rhs_count),
                  safety=model.arrays.safety, safety_before=np.zeros_like(model.arrays.safety),
                  keep_safety=np.zeros(2 * model.arrays.safety.size), slave_time=np.zeros(1),
                  matrix=np.zeros((33, 3)),
                  offset=np.zeros(33), u=np.zeros(33), u_before=np.zeros(33), core_u=np.zeros(33),
                  keep_u=np.zeros(33), keep_u_before=np.zeros(33),
                  # 3 record outputs and the 3 status flags
                  y_new=np.zeros(6), output_lo=np.zeros(6), output_hi=np.zeros(6),
                  output_vrs=np.arange(6, dtype=np.int64), values=np.zeros(9))
    ints = np.zeros(N_INTS, dtype=np.int64)
    reals = np.zeros(N_REALS)
    block, kept = pack_block(arrays, tuple(data), ints, reals)
    assert block.shape == (N_ENTRIES, ENTRY)
    assert block[E_STATE, 0] == arrays["state"].ctypes.data
    assert tuple(block[SD_CONTACT, 1:4]) == model.arrays.contact.shape
    strided = dict(arrays, state=np.zeros(2 * model.state.size)[::2])
    with pytest.raises(BlockError, match="state"):
        pack_block(strided, tuple(data), ints, reals)
    wrong = list(data)
    wrong[SD_RECORD - E_STEP_DATA] = model.record.astype(np.float32)
    with pytest.raises(BlockError, match="record"):
        pack_block(arrays, tuple(wrong), ints, reals)
    short = dict(arrays, keep_record=np.zeros(model.record.size - 1))
    with pytest.raises(BlockError, match="keep_record"):
        pack_block(short, tuple(data), ints, reals)
    # the cfunc indexes the value buffer by these value references unchecked
    outside = dict(arrays, output_vrs=np.arange(4, 10, dtype=np.int64))
    with pytest.raises(BlockError, match="output_vrs"):
        pack_block(outside, tuple(data), ints, reals)
    no_status = dict(arrays, y_new=np.zeros(3), output_lo=np.zeros(3), output_hi=np.zeros(3),
                     output_vrs=np.arange(3, dtype=np.int64))
    with pytest.raises(BlockError, match="status flags"):
        pack_block(no_status, tuple(data), ints, reals)


def test_block_entry_constants_follow_the_array_table():
    # solver/layout.py writes the E_* constants out by hand beside FMU_ARRAYS (numba
    # reads them as module globals): each must be its array's position in the table
    from solver import layout
    for position, (name, _, _) in enumerate(layout.FMU_ARRAYS):
        assert getattr(layout, "E_" + name.upper()) == position, name
    assert set(layout.CORE_ARRAYS) <= {name for name, _, _ in layout.FMU_ARRAYS}
