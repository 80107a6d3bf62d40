"""The FMU's whole communication step in numba, reached from C without Python.

Two parts:

* numba functions that BOTH the Python step (solver.model.wheelset.WheelsetModel.
  advance_vector, fmu_wheelset/fmu/instance.py) and the fast step call, so that the
  two compute every accepted step with the same operations, bit for bit: the
  bookkeeping of an accepted step (`accept_step`, `update_safety`), the FMU's
  input mapping (`fmu_core_inputs`) and its output copy (`fmu_outputs`);
* `fmu_step_entry()`: a numba ``cfunc`` (nopython, in the on-disk cache, so in
  the FMU's shipped numba cache: fmu_wheelset/packaging/build.py ships what is compiled
  under solver/) doing a whole ACCEPTED step of the FMU: the communication
  point check, the inputs' finiteness and declared ranges, the input mapping,
  then `core_step` (the step's one route, that of advance_vector too: the
  substeps, solver.dynamics.integrators.step.advance_kernel, the bookkeeping),
  the acceptance checks of advance_vector (core problem, past the flange), the bookkeeping
  (time, distance, RHS evaluations, the undo record, the running-safety memory),
  the outputs into the FMU's value buffer and their declared ranges. The
  native front end (fmu_wheelset/fmu/native/fmi2_frontend.c) calls it in
  fmi2DoStep with a block of addresses built once (`pack_block`).

Anything that is not a clean accepted step returns a code other than
ACCEPTED and the front end runs the Python step, which composes the messages
and statuses. A step refused before it is integrated (bad input, the wrong
communication point, too many substeps) or a numba exception leaves
everything as it was before the call (the kernel saves what it may change
first and restores it): the Python step starts it again. A step that was
integrated and discarded (by the core, or past the flange) is handed over as
core_step left it (`_hand`): the Python step concludes it
(WheelsetModel.advance_vector's `handed`) without integrating it a second
time, so that a discarded doStep costs one integration (the work bound of
docs/SECURITY.md). An accepted step whose output leaves its declared range is
restored and recomputed by the Python step, as before: the Rosenbrock
method's kept Jacobian is not part of what a discard restores, so that only a
recomputation refuses the same step with the same numbers when it is tried
again.

Nothing here is physics: the equations are those of solver.dynamics.integrators /
solver.dynamics, called as they are.
"""

from __future__ import annotations

import math

import numpy as np
from numba import carray, njit, types
from numba.extending import intrinsic

from .. import codegen
from ..dynamics.acceptance import PROBLEM_AIRBORNE, PROBLEM_BAD_INPUT, PROBLEM_NONE
from ..dynamics.derailment import flange_climb_ratios, lateral_towards_flange, weinstock
from ..dynamics.integrators.step import (
    PROBLEM_SUBSTEPS, StepData, advance_kernel, communication_step,
)
from ..dynamics.rhs import GRAVITY
from ..layout import (
    CLK_BEFORE_DISTANCE, CLK_BEFORE_TIME, CLK_BEFORE_VALID, CLK_DISTANCE, CLK_INTERNAL_STEP,
    CLK_TIME, CORE_ARRAYS, ENTRY, E_CLOCK, E_CORE_U, E_FMU_U, E_INPUT_HI, E_INPUT_LO, E_INPUT_VRS,
    E_INTS, E_KEEP_CLOCK, E_KEEP_CONTACT, E_KEEP_DERIVED, E_KEEP_RECORD, E_KEEP_RHS_COUNT,
    E_KEEP_SAFETY, E_KEEP_STATE, E_KEEP_SUMMARY, E_KEEP_U, E_KEEP_U_BEFORE, E_MATRIX, E_OFFSET,
    E_OUTPUT_HI, E_OUTPUT_LO, E_OUTPUT_VRS, E_REALS, E_RECORD_INDEX, E_RHS_COUNT, E_SAFETY,
    E_SAFETY_BEFORE, E_SLAVE_TIME, E_STATE, E_STEP_DATA, E_U, E_U_BEFORE, E_VALUES, E_Y_NEW,
    FMU_ARRAYS, FR_CROSS_RAIL_DISTANCE, FR_FLANGE_PASSED, FR_HANDED_H, FR_HANDED_NEEDED,
    FR_HANDED_T, FR_SPEED, I_C_SLOT, I_DC_SLOT, I_HANDED, I_HANDED_CODE, I_HANDED_RHS,
    I_HANDED_WHERE, I_LIFT, I_MAX_SUBSTEPS, I_N_INPUTS, I_STATUS, M_FRICTION, N_CLOCK,
    N_ENTRIES, N_INTS, N_REALS, N_RHS_COUNT, N_SAFETY, O_GAP_LEFT, O_LIFT_LEFT, RC_FORCED,
    RC_FORCED_BEFORE, RC_RHS, RC_RHS_BEFORE, READ_ONLY, REC_AIRBORNE, REC_AXLE_SUM, REC_CLIMB,
    REC_CLIMB_DISTANCE, REC_CLIMB_TIME, REC_CLIMB_WARNING, REC_DISTANCE, REC_FORCED_STEPS, REC_TIME,
    REC_WEINSTOCK, SD_CONTACT, SD_DERIVED, SD_MODEL, SD_RECORD, SD_STEP_STATS, SD_SUMMARY,
    SD_WHEEL_TABLE, SF_AIRBORNE_SINCE, SF_CLIMB_FROM, SF_CLIMB_SINCE, SF_RATIO, STAT_FORCED,
    STEP_DATA_FIELDS, T_H,
)
from ..track.excitation import cross_level_roll_kernel


NEVER = -1.0e9          # the time of something that has not happened (s, finite)

# reason of a discarded step, for the status outputs (fmu_outputs)
REASON_NONE, REASON_DERAILMENT, REASON_PENETRATION = 0, 1, 3

# return codes of the fast step: ACCEPTED, or why the Python step must take over
ACCEPTED = 1
FALLBACK_TIME = 2            # not at the FMU's communication point
FALLBACK_INPUT = 3           # an input not finite or outside its declared range
FALLBACK_CROSS_LEVEL = 4     # cross level not below the rail distance
FALLBACK_SUBSTEPS = 5        # more internal steps than solver.max_substeps
FALLBACK_CORE = 6            # advance_kernel found a problem (PROBLEM_*)
FALLBACK_FLANGE = 7          # past the flange: the Python step decides derailment
FALLBACK_OUTPUT = 8          # an output outside its declared range
FALLBACK_EXCEPTION = 9       # numba code raised


# ---------------------------------------------------------------------------
# shared by the Python step and the fast step
# ---------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def update_safety(results, friction, safety, record, now, start):
    """The running-safety outputs of the current state (solver/dynamics/derailment.py) into
    the record, and the memory of when they began into `safety` (SF_*): the
    flange-climb ratio per wheel and how long (s) / how far (m) it has been above
    1, Weinstock's axle sum, how long both wheels have been off their rails, the
    warning flag. Something that begins in a step is dated from the step's start
    (step_time, step_distance; the current time and distance outside a step).
    results: (contact, derived, summary); now: (time, distance); start:
    (step_time, step_distance)."""
    contact, derived, summary = results
    time, distance = now
    step_time, step_distance = start
    angle = flange_climb_ratios(contact, derived, friction, safety[SF_RATIO:SF_RATIO + 2])
    warning = 0.0
    for side in range(2):
        ratio = safety[SF_RATIO + side]
        record[REC_CLIMB + side] = ratio
        if ratio > 1.0:
            warning = 1.0
            if safety[SF_CLIMB_SINCE + side] == NEVER:
                safety[SF_CLIMB_SINCE + side] = step_time
                safety[SF_CLIMB_FROM + side] = step_distance
            record[REC_CLIMB_TIME + side] = time - safety[SF_CLIMB_SINCE + side]
            record[REC_CLIMB_DISTANCE + side] = abs(distance - safety[SF_CLIMB_FROM + side])
        else:
            safety[SF_CLIMB_SINCE + side] = NEVER
            safety[SF_CLIMB_FROM + side] = 0.0
            record[REC_CLIMB_TIME + side] = 0.0
            record[REC_CLIMB_DISTANCE + side] = 0.0
    record[REC_CLIMB_WARNING] = warning
    record[REC_AXLE_SUM], record[REC_WEINSTOCK] = weinstock(derived, angle, friction)
    if summary[O_LIFT_LEFT] > 0.5 and summary[O_LIFT_LEFT + 1] > 0.5:
        if safety[SF_AIRBORNE_SINCE] == NEVER:
            safety[SF_AIRBORNE_SINCE] = step_time
        record[REC_AIRBORNE] = time - safety[SF_AIRBORNE_SINCE]
    else:
        safety[SF_AIRBORNE_SINCE] = NEVER
        record[REC_AIRBORNE] = 0.0


@njit(cache=True, error_model="numpy")
def airborne_too_long(summary, safety, step_time, time, wheel_table):
    """True if both wheels are off their rails at `time` and either have been
    since before time - the airborne limit of solver/dynamics/derailment.py (2 sqrt(2 h /
    g), h the flange height: the radius increase at the flange tip,
    wheel_table[0]) or are both more than h above their rails (their flanges
    clear the rails); a flight that begins in this step dates from its start,
    step_time."""
    if not (summary[O_LIFT_LEFT] > 0.5 and summary[O_LIFT_LEFT + 1] > 0.5):
        return False
    height = max(wheel_table[0, T_H], 1e-3)
    if summary[O_GAP_LEFT] > height and summary[O_GAP_LEFT + 1] > height:
        return True
    since = safety[SF_AIRBORNE_SINCE]
    if since == NEVER:
        since = step_time
    return time - since > 2.0 * math.sqrt(2.0 * height / GRAVITY)


@njit(cache=True, error_model="numpy")
def accept_step(h, h_run, n_rhs, speed, friction, books, results, record):
    """Bookkeeping of an accepted step of h (s) with n_rhs RHS evaluations: what
    undo_step restores (before_*), time (+ h: the host's clock, exactly),
    distance (speed times h_run, the step as integrated: communication_step;
    where the next step's track starts, bit for bit), the RHS count, the
    record's time and distance, the forced steps (StepData.step_stats), the
    running-safety outputs. books: (clock, rhs_count, safety_before, safety,
    step_stats); results: (contact, derived, summary)."""
    clock, rhs_count, safety_before, safety, step_stats = books
    clock[CLK_BEFORE_VALID] = 1.0
    clock[CLK_BEFORE_TIME] = clock[CLK_TIME]
    clock[CLK_BEFORE_DISTANCE] = clock[CLK_DISTANCE]
    rhs_count[RC_RHS_BEFORE] = rhs_count[RC_RHS]
    rhs_count[RC_FORCED_BEFORE] = rhs_count[RC_FORCED]
    safety_before[:] = safety
    clock[CLK_TIME] += h
    clock[CLK_DISTANCE] += speed * h_run
    rhs_count[RC_RHS] += n_rhs
    rhs_count[RC_FORCED] += int(step_stats[STAT_FORCED])
    record[REC_TIME] = clock[CLK_TIME]
    record[REC_DISTANCE] = clock[CLK_DISTANCE]
    record[REC_FORCED_STEPS] = rhs_count[RC_FORCED]
    update_safety(results, friction, safety, record, (clock[CLK_TIME], clock[CLK_DISTANCE]),
                  (clock[CLK_BEFORE_TIME], clock[CLK_BEFORE_DISTANCE]))


@njit(cache=True, error_model="numpy")
def fmu_core_inputs(u, matrix, offset, c_slot, dc_slot, rail_distance, core):
    """The core's input vector (U_*) of the FMU inputs u into core: matrix @ u +
    offset (fmu_wheelset/fmu/adapter.py input_map), plus the roll of both rails
    by the cross level u[c_slot] (rate u[dc_slot]; solver.track.excitation).
    False (core unchanged) if the cross level is not below rail_distance."""
    c = u[c_slot]
    dc = u[dc_slot]
    rolled = c != 0.0 or dc != 0.0
    if rolled and not abs(c) < rail_distance:
        return False
    # matrix @ u, column by column over the inputs that are not zero (most are,
    # in most runs): each row still sums its terms in the order of j, and the
    # terms left out are +-0, which change no sum (a sum that starts at +0.0 is
    # never -0.0), so this is the row-by-row product to the bit
    n_core, n_u = matrix.shape
    for r in range(n_core):
        core[r] = 0.0
    for j in range(n_u):
        x = u[j]
        if x != 0.0:
            for r in range(n_core):
                core[r] += matrix[r, j] * x
    for r in range(n_core):
        core[r] += offset[r]
    if rolled:
        roll, rate = cross_level_roll_kernel(c, dc, rail_distance)
        for side in range(2):
            core[3 * side + 2] += roll          # U_RAIL_MOTION roll
            core[6 + 3 * side + 2] += rate      # U_RAIL_VELOCITY roll rate
    return True


@njit(cache=True, error_model="numpy")
def fmu_outputs(record, record_index, lift, status_slots, reason, y):
    """The FMU's outputs into y: record[record_index] first, then the status flags
    at status_slots (derailment, wheel lift, excessive penetration) from the
    reason of a discarded step (REASON_*) and the record's lift flags (REC_LIFT at lift)."""
    for k in range(record_index.size):
        y[k] = record[record_index[k]]
    y[status_slots[0]] = 1.0 if reason == REASON_DERAILMENT else 0.0
    y[status_slots[1]] = 1.0 if (record[lift] > 0.5 or record[lift + 1] > 0.5) else 0.0
    y[status_slots[2]] = 1.0 if reason == REASON_PENETRATION else 0.0


class BlockError(Exception):
    """The arrays do not have the layout the fast step was written for."""


def _put(block, kept, entry, name, array, dtype, ndim):
    """Block row `entry`: the address and shape of `array`, which must have the
    dtype and number of axes of the layout, be C-contiguous and writable (or one
    of READ_ONLY): BlockError otherwise. The array goes into `kept`."""
    if (not isinstance(array, np.ndarray) or array.dtype != dtype or array.ndim != ndim
            or not array.flags.c_contiguous
            or not (array.flags.writeable or name in READ_ONLY)):
        raise BlockError(f"{name}: {getattr(array, 'dtype', type(array).__name__)} "
                         f"{getattr(array, 'shape', '')} is not a writable C-contiguous "
                         f"{np.dtype(dtype).name} array with {ndim} axes")
    block[entry, 0] = array.ctypes.data
    block[entry, 1:1 + ndim] = array.shape
    kept.append(array)


def _put_step_data(block, kept, step_data, ints, reals):
    """The entries E_STEP_DATA... of StepData's arrays, its scalars into their
    slots of ints / reals (solver.layout.STEP_DATA_FIELDS)."""
    if len(step_data) != len(STEP_DATA_FIELDS):
        raise BlockError(f"a StepData has {len(STEP_DATA_FIELDS)} fields, got {len(step_data)}")
    for i, (field, value) in enumerate(zip(STEP_DATA_FIELDS, step_data)):
        if field.ndim:
            _put(block, kept, E_STEP_DATA + i, field.name, value, field.dtype, field.ndim)
        elif not isinstance(value, field.dtype) or isinstance(value, bool):
            raise BlockError(f"{field.name}: {value!r} is not a {field.dtype.__name__}")
        elif field.dtype is int:
            ints[field.slot] = value
        else:
            reals[field.slot] = value


def pack_core_block(model_arrays: dict, step_data: tuple):
    """(int64 block, ints, reals, the arrays it points to) of the model's arrays
    CORE_ARRAYS and StepData (the FMU's other entries left 0): what `core_step`
    takes, so that WheelsetModel.advance_vector hands numba 3 arrays instead of
    40 in two calls (numba unboxes each array of a call: about 3.5 us of them).
    The block is valid while the arrays live and are changed in place only
    (WheelsetModel builds them once)."""
    block = np.zeros((N_ENTRIES, ENTRY), dtype=np.int64)
    ints = np.zeros(N_INTS, dtype=np.int64)
    reals = np.zeros(N_REALS)
    kept = []
    for entry, (name, dtype, ndim) in enumerate(FMU_ARRAYS):
        if name in CORE_ARRAYS:
            _put(block, kept, entry, name, model_arrays[name], dtype, ndim)
    _put_step_data(block, kept, step_data, ints, reals)
    return block, ints, reals, kept


def pack_block(fmu: dict, step_data: tuple, ints, reals):
    """(int64 block, the arrays it points to): `fmu` maps each name of FMU_ARRAYS
    to its array; step_data is WheelsetModel._step_data, whose scalars are
    written into ints / reals (I_INTEGRATOR_ID, FR_RAIL_DISTANCE ... FR_FLANGE_TIP;
    the caller sets the others). Every array must have
    the dtype and number of axes of the layout and be C-contiguous (the
    cfunc views them with numba.carray): BlockError otherwise (e.g. StepData
    changed its fields: the fast step then needs the same change)."""
    block = np.zeros((N_ENTRIES, ENTRY), dtype=np.int64)
    kept = []
    if len(ints) != N_INTS or len(reals) != N_REALS:
        raise BlockError("ints/reals have the wrong length")
    for entry, (name, dtype, ndim) in enumerate(FMU_ARRAYS):
        array = {"ints": ints, "reals": reals}.get(name, fmu.get(name))
        _put(block, kept, entry, name, array, dtype, ndim)
    _put_step_data(block, kept, step_data, ints, reals)
    # what the cfunc copies into each other must have the same shapes
    data = dict(zip(StepData._fields, step_data))
    shape = {**{name: np.shape(a) for name, a in fmu.items()},
             **{name: np.shape(a) for name, a in data.items()}}
    same = (("state", "keep_state"), ("contact", "keep_contact"), ("summary", "keep_summary"),
            ("record", "keep_record"), ("derived", "keep_derived"), ("clock", "keep_clock"),
            ("rhs_count", "keep_rhs_count"), ("state", "saved_state"), ("u", "core_u"),
            ("u", "u_before"), ("y_new", "output_lo"), ("y_new", "output_hi"),
            ("input_lo", "input_hi"), ("safety", "safety_before"), ("input_vrs", "input_lo"),
            ("input_vrs", "fmu_u"), ("output_vrs", "y_new"), ("u", "keep_u"),
            ("u", "keep_u_before"))
    for a, b in same:
        if shape[a] != shape[b]:
            raise BlockError(f"{a} {shape[a]} and {b} {shape[b]} differ in shape")
    if (shape["clock"] != (N_CLOCK,) or shape["rhs_count"] != (N_RHS_COUNT,)
            or shape["safety"] != (N_SAFETY,) or shape["keep_safety"] != (2 * N_SAFETY,)
            or shape["slave_time"] != (1,) or shape["matrix"] != shape["offset"] + shape["input_lo"]
            or shape["offset"] != shape["u"]):
        raise BlockError("the clock, safety or input-map arrays have the wrong shapes")
    # the cfunc indexes the value buffer with these unchecked
    for name in ("input_vrs", "output_vrs"):
        vrs = fmu[name]
        if vrs.size and not (0 <= vrs.min() and vrs.max() < shape["values"][0]):
            raise BlockError(f"{name} point outside the value buffer")
    if shape["record_index"][0] + 3 != shape["y_new"][0]:
        raise BlockError("the outputs are not the record's outputs and the 3 status flags")
    return block, kept


# ---------------------------------------------------------------------------
# the cfunc
# ---------------------------------------------------------------------------
@intrinsic
def _pointer(typingctx, address, dtype):
    """The int64 `address` as a pointer to `dtype` (for numba.carray)."""
    pointer = types.CPointer(dtype.instance_type)
    sig = pointer(types.int64, dtype)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(pointer))
    return sig, codegen


# views of the array of one block entry (row r = block[entry]: address, shape);
# the row, not the entry number, is the argument: numba compiles a function
# called with an integer constant once per value
@njit(cache=True, error_model="numpy")
def _v1(r):
    return carray(_pointer(r[0], np.float64), (r[1],))


@njit(cache=True, error_model="numpy")
def _v2(r):
    return carray(_pointer(r[0], np.float64), (r[1], r[2]))


@njit(cache=True, error_model="numpy")
def _v3(r):
    return carray(_pointer(r[0], np.float64), (r[1], r[2], r[3]))


@njit(cache=True, error_model="numpy")
def _v5(r):
    return carray(_pointer(r[0], np.float64), (r[1], r[2], r[3], r[4], r[5]))


@njit(cache=True, error_model="numpy")
def _n1(r):
    return carray(_pointer(r[0], np.int64), (r[1],))


@njit(cache=True, error_model="numpy")
def _b3(r):
    return carray(_pointer(r[0], np.int8), (r[1], r[2], r[3]))


# the view of a block entry, by the dtype and number of axes of its array
_VIEWS = {(np.float64, 1): "_v1", (np.float64, 2): "_v2", (np.float64, 3): "_v3",
          (np.float64, 5): "_v5", (np.int64, 1): "_n1", (np.int8, 3): "_b3"}


def step_data_source() -> str:
    """The source of `_step_data(b, ints, reals)`, the plain tuple of StepData
    that advance_kernel takes, from the block: each field of STEP_DATA_FIELDS
    in its order, an array as the view of its entry, a scalar from its slot."""
    items = []
    for i, field in enumerate(STEP_DATA_FIELDS):
        if field.ndim:
            view = _VIEWS.get((field.dtype, field.ndim))
            if view is None:
                raise BlockError(f"no view of a {np.dtype(field.dtype).name} array with "
                                 f"{field.ndim} axes for the StepData field {field.name!r}")
            items.append(f"{view}(b[{E_STEP_DATA + i}])")
        else:
            items.append(f"{'ints' if field.dtype is int else 'reals'}[{int(field.slot)}]")
        codegen.check_identifier(field.name)
    lines = ",\n            ".join(items)
    return f"def _step_data(b, ints, reals):\n    return ({lines},)\n"


_step_data = njit(cache=True, error_model="numpy")(
    codegen.define(step_data_source(), "_step_data", globals()))


@njit(cache=True, error_model="numpy")
def _accept_in_block(h, h_run, n_rhs, speed, friction, b):
    """accept_step on the arrays of block b (the core's step and the FMU's)."""
    accept_step(h, h_run, n_rhs, speed, friction,
                (_v1(b[E_CLOCK]), _n1(b[E_RHS_COUNT]), _v1(b[E_SAFETY_BEFORE]), _v1(b[E_SAFETY]),
                 _v1(b[SD_STEP_STATS])),
                (_v3(b[SD_CONTACT]), _v1(b[SD_DERIVED]), _v1(b[SD_SUMMARY])), _v1(b[SD_RECORD]))


@njit(cache=True, error_model="numpy")
def _airborne_in_block(h, b):
    """airborne_too_long at the end of a step of h on the arrays of block b."""
    clock = _v1(b[E_CLOCK])
    return airborne_too_long(_v1(b[SD_SUMMARY]), _v1(b[E_SAFETY]), clock[CLK_TIME],
                             clock[CLK_TIME] + h, _v2(b[SD_WHEEL_TABLE]))


@njit(cache=True, error_model="numpy")
def core_step(h, u, speed, flange_passed, b, ints, reals):
    """One communication step of h (s, > 0 and finite) on the block of
    `pack_core_block` (WheelsetModel.advance_vector) or of `pack_block` (the
    FMU's fast step): the one route of a step. communication_step gives the
    step as integrated and its substeps (at most ints[I_MAX_SUBSTEPS], else
    PROBLEM_SUBSTEPS and nothing done); advance_kernel integrates it from the
    model's state and distance with the inputs u; unless an input is bad, u
    becomes the model's inputs (the last ones kept for undo); an accepted step
    (no problem, not past the flange at flange_passed) gets its bookkeeping
    (accept_step, at speed); a step that leaves both wheels off their rails
    too long is not accepted (PROBLEM_AIRBORNE). Returns (problem code, where,
    RHS evaluations, substeps as a float: those taken, or those a refused step
    would need): the caller composes the messages of problems."""
    clock = _v1(b[E_CLOCK])
    h_run, n_sub, needed = communication_step(h, clock[CLK_INTERNAL_STEP], ints[I_MAX_SUBSTEPS])
    if n_sub == 0:
        return PROBLEM_SUBSTEPS, -1, 0, needed
    clock[CLK_BEFORE_VALID] = 0.0
    state = _v1(b[E_STATE])
    code, where, n_rhs = advance_kernel(state, h_run, n_sub, clock[CLK_DISTANCE], u,
                                        _step_data(b, ints, reals))
    if code == PROBLEM_BAD_INPUT:
        return code, where, n_rhs, needed
    u_core, u_before = _v1(b[E_U]), _v1(b[E_U_BEFORE])
    u_before[:] = u_core
    u_core[:] = u
    if code == PROBLEM_NONE and not lateral_towards_flange(state, u) > flange_passed:
        if _airborne_in_block(h, b):
            return PROBLEM_AIRBORNE, -1, n_rhs, needed
        _accept_in_block(h, h_run, n_rhs, speed, _v1(b[SD_MODEL])[M_FRICTION], b)
    return code, where, n_rhs, needed


@njit(cache=True, error_model="numpy")
def _keep(b, restore):
    """Save (restore False) or restore everything the step may change before it
    is accepted: state, contact, summary, record, derived, clock, RHS count,
    the model's inputs and those before, the running-safety memory and its
    copy for undo."""
    pairs = ((E_STATE, E_KEEP_STATE), (SD_SUMMARY, E_KEEP_SUMMARY),
             (SD_RECORD, E_KEEP_RECORD), (SD_DERIVED, E_KEEP_DERIVED), (E_CLOCK, E_KEEP_CLOCK),
             (E_U, E_KEEP_U), (E_U_BEFORE, E_KEEP_U_BEFORE))
    for live, kept in pairs:
        a, k = _v1(b[live]), _v1(b[kept])
        if restore:
            a[:] = k
        else:
            k[:] = a
    contact, keep_contact = _v3(b[SD_CONTACT]), _v3(b[E_KEEP_CONTACT])
    rhs_count, keep_rhs = _n1(b[E_RHS_COUNT]), _n1(b[E_KEEP_RHS_COUNT])
    kept_safety = _v1(b[E_KEEP_SAFETY])
    safety, before = _v1(b[E_SAFETY]), _v1(b[E_SAFETY_BEFORE])
    n = safety.size
    if restore:
        contact[:] = keep_contact
        rhs_count[:] = keep_rhs
        safety[:] = kept_safety[:n]
        before[:] = kept_safety[n:]
    else:
        keep_contact[:] = contact
        keep_rhs[:] = rhs_count
        kept_safety[:n] = safety
        kept_safety[n:] = before


@njit(cache=True, error_model="numpy")
def _hand(t, h, outcome, ints, reals):
    """Hand the step at t of h to the Python step as core_step left it (its
    outcome: problem code, where, RHS evaluations, substeps): the Python step
    concludes it (WheelsetModel.advance_vector's `handed`) instead of running
    it again, so a discarded step costs one integration."""
    code, where, n_rhs, needed = outcome
    ints[I_HANDED] = 1
    ints[I_HANDED_CODE] = code
    ints[I_HANDED_WHERE] = where
    ints[I_HANDED_RHS] = n_rhs
    reals[FR_HANDED_T] = t
    reals[FR_HANDED_H] = h
    reals[FR_HANDED_NEEDED] = needed


@njit(cache=True, error_model="numpy")
def _fmu_step(t, h, b):
    """The accepted step (module docstring); a FALLBACK_* code otherwise (the
    caller restores what was saved, unless the step was handed over: _hand)."""
    ints, reals = _n1(b[E_INTS]), _v1(b[E_REALS])
    slave_time = _v1(b[E_SLAVE_TIME])
    # the instance's communication point rule (fmu_wheelset/fmu/instance.py do_step)
    now = slave_time[0]
    if not abs(t - now) <= 1e-9 * max(1.0, abs(now)):
        return FALLBACK_TIME
    values = _v1(b[E_VALUES])
    n_in = ints[I_N_INPUTS]
    # the inputs, gathered from the value buffer by their value references
    input_vrs, u = _n1(b[E_INPUT_VRS]), _v1(b[E_FMU_U])
    for j in range(n_in):
        u[j] = values[input_vrs[j]]
    lo, hi = _v1(b[E_INPUT_LO]), _v1(b[E_INPUT_HI])
    for j in range(n_in):
        if not (u[j] >= lo[j] and u[j] <= hi[j]):        # NaN fails both
            return FALLBACK_INPUT
    core_u = _v1(b[E_CORE_U])
    if not fmu_core_inputs(u, _v2(b[E_MATRIX]), _v1(b[E_OFFSET]), ints[I_C_SLOT], ints[I_DC_SLOT],
                           reals[FR_CROSS_RAIL_DISTANCE], core_u):
        return FALLBACK_CROSS_LEVEL
    # the step itself: the route of WheelsetModel.advance_vector
    outcome = core_step(h, core_u, reals[FR_SPEED], reals[FR_FLANGE_PASSED], b, ints, reals)
    code = outcome[0]
    if code == PROBLEM_SUBSTEPS:
        return FALLBACK_SUBSTEPS
    if code != PROBLEM_NONE:
        _hand(t, h, outcome, ints, reals)
        return FALLBACK_CORE
    if lateral_towards_flange(_v1(b[E_STATE]), core_u) > reals[FR_FLANGE_PASSED]:
        _hand(t, h, outcome, ints, reals)
        return FALLBACK_FLANGE
    record = _v1(b[SD_RECORD])
    y_new = _v1(b[E_Y_NEW])
    fmu_outputs(record, _n1(b[E_RECORD_INDEX]), ints[I_LIFT], ints[I_STATUS:I_STATUS + 3],
                REASON_NONE, y_new)
    lo, hi = _v1(b[E_OUTPUT_LO]), _v1(b[E_OUTPUT_HI])
    for k in range(y_new.size):
        if not (y_new[k] >= lo[k] and y_new[k] <= hi[k]):
            # restored and recomputed by the Python step (not handed over): the
            # kept Jacobian of the Rosenbrock method is not part of what a
            # discard restores, and the same refused step must come out the
            # same when it is tried again
            return FALLBACK_OUTPUT
    # accepted: commit what the Python step sets besides the model's arrays
    output_vrs = _n1(b[E_OUTPUT_VRS])
    for k in range(y_new.size):
        values[output_vrs[k]] = y_new[k]
    slave_time[0] = t + h
    return ACCEPTED


def _fmu_do_step(t, h, block):
    """int fast_step(double t, double h, const int64_t *block): ACCEPTED or a
    FALLBACK_* code with everything as before the call."""
    b = carray(block, (N_ENTRIES, ENTRY))
    ints = _n1(b[E_INTS])
    ints[I_HANDED] = 0
    _keep(b, False)
    try:
        code = _fmu_step(t, h, b)
    except Exception:       # noqa: BLE001 - numba's exceptions: the Python step reports
        code = FALLBACK_EXCEPTION
        ints[I_HANDED] = 0
    if code != ACCEPTED and ints[I_HANDED] == 0:
        _keep(b, True)
    return code


CFUNC_SIGNATURE = types.intc(types.float64, types.float64, types.CPointer(types.int64))
_ENTRY: list = []


def fmu_step_entry():
    """The compiled cfunc (numba.cfunc of _fmu_do_step, from numba's on-disk cache
    when it is there); compiled on the first call only, not at import."""
    if not _ENTRY:
        from numba import cfunc
        _ENTRY.append(cfunc(CFUNC_SIGNATURE, nopython=True, cache=True)(_fmu_do_step))
    return _ENTRY[0]
