"""Fixed-step integrators inside one communication step.

`WheelsetModel.advance(h)` splits the host step h into n = ceil(h / internal
step) equal substeps, so that it reaches exactly t + h for any host step (the
host step may vary from call to call), and runs one of these numba kernels
over the substeps. The state is the plain array of solver.dynamics (N_STATE
entries, S_*); the kernels update it in place.

- `integrate_rk4`: classical 4th-order Runge-Kutta, 4 RHS evaluations per
  substep. The full multipoint contact search runs at the first
  stage of every substep; stages 2-4 keep that set of contact points and
  re-locate each one on the profiles at the stage's state (a new contact
  point thus enters at the next substep, at most one internal step later,
  when its penetration is still nil). In the steady curve of Ren & Jin R400
  and Kang R320 lateral displacement, outer-wheel Q, Y and flange force are
  the same to 4-5 significant digits for 0.25 to 1.25 ms, while 2 ms is
  unstable (the stiff flange contact makes the wheelset bounce off the rails).
  At a contact onset the late entry makes RK4 first order: at the Ren & Jin
  flange-root impact (5.9 s) RK4 at 1 ms is 14.4 kN (21 % of the wheel load)
  off the converged run, at 0.1 ms still 3.6 kN (docs/convergence.md).
- `integrate_semi_implicit`: semi-implicit (symplectic) Euler, velocities
  first, then positions with the new velocities; one RHS per substep, for
  stiff flange contact at small steps.
- `integrate_embedded` with the tableau RK23 (Bogacki & Shampine 1989) or
  RK45 (Dormand & Prince 1980): adaptive steps under a local error tolerance
  (model M_TOLERANCE), the internal step being the largest step. For hard
  flange contact, impacts and low speeds (stiff creep damping), where a fixed
  step must be cut for the worst moment of a run, and for long smooth stretches,
  where it may grow. The first stage of every step reuses the last stage of the
  step before (first same as last), which is evaluated at the step's end with
  the full contact search: a contact point born within the step enters that
  stage and its error estimate, so a step over a contact onset is repeated
  shorter until the onset's force jump is within the tolerance. Each host step
  starts with the largest step (nothing of the step-size history is carried
  over, so a host step depends on the state and the inputs only, as with the
  fixed-step integrators, and the FMU state needs nothing more).
- `integrate_rosenbrock`: adaptive steps of the linearly implicit W-method of
  Wolfbrandt / Shampine & Reichelt (ode23s), second order with a third-order
  error estimate, under the same error test. Each step solves with W = I -
  dt d J, J the Jacobian of the RHS by finite differences, kept from step to
  step (JAC_*; in the model's state, so the FMU state carries it), and so are
  W^-1 and the derivative at the host step's end (ROS_MEMO_*, scratch): a host
  step that starts where the last one ended, with the same inputs, reuses
  them bit for bit instead of evaluating them again. Being
  L-stable it is not held near 1 ms by the stiff modes that bound the
  explicit integrators (the vertical and roll bounce of the wheelset on its
  Hertz contacts, about 1300 rad/s; the creep damping of the spin, 900 1/s on
  Ren & Jin), so its steps grow to what the accuracy asks. The default: at
  tolerance 1e-5 it stays within 0.7 % of the wheel load and 0.08 um of the
  converged runs of docs/convergence.md, including the impacts.
The fixed-step kernels return the number of RHS evaluations, or -1 if the
state became non-finite; the adaptive one also -2 (N_RHS_STEP_SIZE) if it
needed more than model[M_MAX_STEPS] steps (the caller restores the state and
reports a discarded step).

`advance_kernel` is the whole host step in one numba call: the input check,
the track's curvature and cant at each substep (solver.track.alignment.track_state_kernel),
the integrator, the acceptance check (solver.dynamics.acceptance.step_problem) and the
output record (solver.dynamics.outputs.fill_record). `WheelsetModel.advance_vector`
calls it; only the messages of a discarded step are composed in Python.
"""

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ...contact.geometry.setup import ContactBuffers, ContactTables
from ...contact.geometry.table import TableArrays, TableScratch, TableSearch
from ...layout import (
    KEY_VALID, M_BOX_SEMI_SPACING, O_MAX_PENETRATION, STEP_DATA_FIELDS, U_BOX_FORCE, U_BOX_MOMENT,
    U_CANT, U_CURVATURE, U_RAIL_MOTION, U_RAIL_VELOCITY, U_TORQUE,
)
from ...registry import define_dispatch
from ..acceptance import (
    PROBLEM_BAD_INPUT, PROBLEM_NONE, PROBLEM_PENETRATION, StepLimits, step_problem,
)
from ..outputs import fill_record
from ..rhs import ContactResults, StepContact, StepInputs
from .embedded import RK45
from .methods import INTEGRATORS
from .stages import HostStep, full_rhs, key_matches, track_at


# rows of StepData.stages: the fixed-step kernels use 5, the adaptive one s + 1
N_STAGE_ROWS = RK45.b.shape[0] + 1


# integrate_host_step(integrator_id, state, step, data, inputs, step_inputs, contact):
# the kernel of the INTEGRATORS entry with that id (solver.dynamics.integrators.
# methods); -1 for an id no entry has (the step is then discarded as non-finite).
# Written out from the registry (solver.registry.define_dispatch).
integrate_host_step = define_dispatch(
    INTEGRATORS, "integrate_host_step", "state, step, data, inputs, step_inputs, contact",
    globals(), fallback="-1", jit=njit(cache=True, error_model="numpy", _nrt=True))


# Everything `advance_kernel` works on besides the state, the step and the
# inputs: the track table, the contact tables, the model, and the scratch and
# result arrays it fills, as the fields of solver.layout.STEP_DATA_FIELDS say.
# All fields are arrays or numbers (no nested tuples), so that the plain tuple
# of a StepData is what `advance_kernel` takes.
StepData = NamedTuple("StepData", [(f.name, np.ndarray if f.ndim else f.dtype)
                                   for f in STEP_DATA_FIELDS])


@njit(cache=True, error_model="numpy", _nrt=True)
def _step_inputs(inputs):
    """The StepInputs of the flat input vector (U_*): (2, 3) views of its parts."""
    return StepInputs(inputs[U_RAIL_MOTION:U_RAIL_MOTION + 6].reshape((2, 3)),
                      inputs[U_RAIL_VELOCITY:U_RAIL_VELOCITY + 6].reshape((2, 3)),
                      inputs[U_BOX_FORCE:U_BOX_FORCE + 6].reshape((2, 3)),
                      inputs[U_BOX_MOMENT:U_BOX_MOMENT + 6].reshape((2, 3)), inputs[U_TORQUE])


# A communication step is integrated over h rounded to 40 significant bits
# (relative change at most 2^-40, 9e-13): hosts compute the same step in
# different ways (FMPy as (n + 1) h - n h, libcosim from integer nanoseconds,
# Ecos by summing), which differ in the last bits, and the adaptive
# integrator's step sequence turns such differences into output differences far
# above rounding (measured on the Klingel run: 2e-5 of Q and 1e-3 of Y after
# 8 s). Rounded, every host's step is the same number (unless it straddles a
# rounding boundary: a chance of about 1e-3 per distinct step value). The
# model's time goes on by h (the host's clock, exactly), its distance by the
# rounded step (where the step's integration ended: the next step's track
# point, bit for bit), within 9e-13 of speed times time, relative.
STEP_BITS = 40


@njit(cache=True, error_model="numpy", _nrt=False)
def quantized_step(h):
    """h (s, > 0 and finite) rounded to STEP_BITS significant bits."""
    mantissa, exponent = math.frexp(h)
    return math.ldexp(round(math.ldexp(mantissa, STEP_BITS)), exponent - STEP_BITS)


# a communication step that needs more internal steps than allowed
# (WheelsetParameters.max_substeps): refused before anything is integrated
PROBLEM_SUBSTEPS = 9


@njit(cache=True, error_model="numpy", _nrt=False)
def communication_step(h, internal_step, max_substeps):
    """The one place a communication step of h (s, > 0 and finite: the callers
    refuse others) becomes what is integrated: (the step as integrated, h
    rounded by quantized_step; the number of equal substeps of at most
    internal_step, n = ceil(h / internal_step), 0 when n would exceed
    max_substeps (PROBLEM_SUBSTEPS); n as a float, also when it is too many:
    for the message)."""
    h_run = quantized_step(h)
    # (ceil(q) <= max_substeps exactly when q <= max_substeps, an integer; tested
    # on the float first: ceil of a huge q would not fit the integer)
    q = h_run / internal_step - 1e-9
    needed = np.ceil(q)
    if not q <= max_substeps:
        return h_run, 0, needed
    return h_run, max(1, int(needed)), needed


@njit(cache=True, error_model="numpy", _nrt=True)
def advance_kernel(state, h, n_sub, distance, inputs, step_data):
    """Advance the state by h in n_sub equal substeps (the adaptive integrators:
    in steps of at most h / n_sub; see the module docstring).

    inputs: the input vector of solver.dynamics (U_*); step_data: the plain
    tuple of a StepData (numba types a plain tuple from its fast fingerprint,
    a named tuple passed from Python through a slow path: about 6 us more per
    call, measured; so the per-step entry takes the plain tuple and names it
    here). The state, contact rows and summary before the step are copied into
    saved_*; on a problem they are NOT restored here (the caller composes its
    message from the rejected step's values, then restores). Returns (problem
    code, side or the index of a bad input, RHS evaluations); the record is
    rebuilt only for an accepted step."""
    data = StepData(*step_data)
    for j in range(U_CURVATURE):
        if not math.isfinite(inputs[j]):
            return PROBLEM_BAD_INPUT, j, 0
    for j in (U_CURVATURE, U_CANT):
        if math.isinf(inputs[j]):
            return PROBLEM_BAD_INPUT, j, 0
    step_inputs = _step_inputs(inputs)
    tables = ContactTables(data.wheel_table, data.rail_table, data.geometry_params)
    search = ContactBuffers(data.work, data.points, data.counts)
    results = ContactResults(data.contact, data.summary)
    table_search = TableSearch(TableArrays(data.table_params, data.table_flags, data.table_nodes),
                               TableScratch(data.table_rows, data.table_index))
    contact = StepContact(tables, search, results, table_search)
    model = data.model
    dt = h / n_sub
    data.step_stats[:] = 0.0
    data.saved_state[:] = state
    data.saved_contact[:] = data.contact
    data.saved_summary[:] = data.summary
    if not key_matches(data.search_key, state, step_inputs.rail_motion):
        # the rails moved (or the pose was set) since the last contact search: the
        # penetration at the step's start, with the rails where the inputs put them
        # (a rail jumped into the wheel beyond max_penetration is refused here, not
        # integrated through: Hertz's half-space no longer holds)
        full_rhs(state, track_at(data, distance, inputs), model, step_inputs, contact,
                 data.stages[0], data.search_key, bool(False))
        if data.summary[O_MAX_PENETRATION] > data.max_penetration:
            data.search_key[KEY_VALID] = 0.0      # a retry of this step checks again
            return PROBLEM_PENETRATION, -1, 1
    n_rhs = integrate_host_step(data.integrator_id, state, HostStep(h, n_sub, dt, distance), data,
                                inputs, step_inputs, contact)
    limits = StepLimits(data.max_penetration, data.tread_end, data.flange_tip)
    code, side = step_problem(state, n_rhs, results, limits)
    if code != PROBLEM_NONE:
        return code, side, n_rhs
    fill_record(state, results, model[M_BOX_SEMI_SPACING], data.derived, data.record)
    return PROBLEM_NONE, -1, n_rhs
