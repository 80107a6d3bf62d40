"""The wheelset model: parameters, the Python object around the numba core.

`WheelsetParameters` (SI units, defaults: the Manchester benchmark wheelset on
S1002/UIC60 1:40) and `WheelsetModel`: profiles and track resolved, the static
equilibrium at t = 0, `advance(h)` over one host step, outputs, snapshots. The
equations of motion and the data layouts are those of solver.dynamics (the
numba side); the integrators those of solver.dynamics.integrators. The layouts the callers
read (state S_*, input vector U_*, output record R_*, contact rows C_*, derived
outputs D_*) are re-exported here, as the interface of `WheelsetModel.record`
and `WheelsetModel.advance_vector`.
"""

from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np

from ..contact.creep.forces import kernel_parameters
from ..contact.creep.kalker import linear_creep_coefficients
from ..contact.geometry.modes import CONTACT_MODELS, GEOMETRY_MODES
from ..contact.geometry.points import static_contact
from ..contact.geometry.setup import (
    ContactBuffers, ContactSetup, GeometryError, forget_tracked_minima,
)
from ..contact.geometry.table import TableSearch, empty_table_arrays, table_scratch
from ..dynamics.acceptance import (
    PROBLEM_AIRBORNE, PROBLEM_BAD_INPUT, PROBLEM_NONE, PROBLEM_NON_FINITE, PROBLEM_OFF_RAIL,
    PROBLEM_PENETRATION, PROBLEM_STEP_SIZE,
)
from ..dynamics.derailment import (
    JUMP_FACTOR, airborne_limit, flange_height, flange_passed_lateral, lateral_towards_flange,
)
from ..dynamics.integrators.methods import INTEGRATORS
from ..dynamics.integrators.rosenbrock import lu_factor, lu_solve
from ..dynamics.integrators.step import N_STAGE_ROWS, PROBLEM_SUBSTEPS, StepData
from ..dynamics.outputs import derived_outputs, fill_record
from ..dynamics.rhs import (
    ContactResults, GRAVITY, StepContact, StepInputs, TrackPoint, contact_elastic_energy,
    wheelset_rhs,
)
from ..errors import WheelsetError
from ..layout import (
    CLK_BEFORE_DISTANCE, CLK_BEFORE_TIME, CLK_BEFORE_VALID, CLK_DISTANCE, CLK_INTERNAL_STEP,
    CLK_TIME, CORE_ARRAYS, C_A, C_ACTIVE, C_ANGLE, C_B, C_CREEP_LAT, C_CREEP_LONG,
    C_ETA, C_NORMAL, C_PENETRATION, C_RADIUS, C_SPIN, C_SPIN_MOMENT, C_S_WHEEL,
    C_U_RAIL, C_X, C_XI, C_Z, D_BOX_POS, D_BOX_VEL, D_PQ, D_PY, D_PYQ, D_Q, D_WEAR,
    D_WHEEL_RAIL, D_Y, D_YQ, JAC_AGE, MAX_POINTS, M_BOGIE, M_BOX_SEMI_SPACING, M_BOX_Z_REF,
    M_CARBODY_CG_HEIGHT, M_CARBODY_SHARE, M_FRAME_CG_HEIGHT, M_FRAME_ON_CENTRELINE,
    M_SECONDARY_HEIGHT, M_SECONDARY_LATERAL_STIFFNESS, M_SECONDARY_ROLL_STIFFNESS,
    M_CONTACT_DAMPING, M_CREEP_MODEL, M_CREEP_OPTIONS, M_CX, M_CZ, M_F11, M_F33, M_FRICTION,
    M_GRAVITY, M_GYROSCOPIC, M_JX, M_JY, M_JZ, M_KX, M_KZ, M_MASS, M_MAX_STEPS, M_MULTIPOINT,
    M_POISSON, M_ROLL_RATE_CREEPAGE, M_SPEED, M_SUSPENDED_MASS, M_TOLERANCE, M_YOUNG, N_CLOCK,
    N_CONTACT, N_CREEP_OPTIONS, N_DERIVED, N_INPUT, N_JACOBIAN, N_MODEL, N_RECORD, N_RHS_COUNT,
    N_ROS_MEMO, N_SAFETY, N_SEARCH_KEY, N_STATE, N_SUMMARY, O_GAP_LEFT, O_GAP_RIGHT,
    O_MAX_PENETRATION, O_RAIL_ON_WHEEL_LEFT, REC_AIRBORNE, REC_AXLE_SUM, REC_CLIMB,
    REC_CLIMB_DISTANCE, REC_CLIMB_TIME, REC_DISTANCE, REC_LIFT_HEIGHT, REC_TIME, REC_WEINSTOCK,
    M_HUNT_CROSSLEY, M_RAIL_DAMPING, M_RAIL_MASS, M_RAIL_STIFFNESS, M_TRACK_MODEL, S_RAIL,
    S_RAIL_RATE, TRACK_LUMPED,
    N_STEP_STATS, STATE_IS_POSITION, S_SPIN_ANGLE, RC_FORCED, RC_FORCED_BEFORE, RC_RHS, RC_RHS_BEFORE, REC_FORCED_STEPS,
    ROS_MEMO_END_VALID, ROS_MEMO_W_DT, SF_AIRBORNE_SINCE, SF_CLIMB_SINCE, S_ROLL, S_ROLL_RATE,
    S_SPIN_RATE, S_VX, S_VY, S_VZ, S_Y, S_YAW, S_YAW_RATE, S_Z, T_LAT, U_BOX_FORCE, U_BOX_MOMENT,
    U_CANT, U_CURVATURE, U_RAIL_MOTION, U_RAIL_VELOCITY, U_TORQUE,
)
from ..layout import I_MAX_SUBSTEPS       # the fast step's block: the step's bound
from ..track.alignment import track_state_kernel
from ..track.lumped_rails import TRACK_MODEL_NAMES
from .fast_step import NEVER, core_step, pack_core_block, update_safety
from .outputs import StepResult, WheelsetInputs, WheelsetOutputs, bad_input_error
from .parameters import WheelsetParameters, resolve_profile, resolve_track


class ModelArrays(NamedTuple):
    """The arrays a WheelsetModel works on, each created once and changed in place
    (the FMU's fast step reaches them by address); their layouts are solver.layout's."""

    state: np.ndarray           # (N_STATE,) S_*
    inputs: np.ndarray          # (N_INPUT,) U_*: the inputs of the last step
    inputs_before: np.ndarray   # the inputs before it (what undo_step restores)
    clock: np.ndarray           # (N_CLOCK,) CLK_*
    rhs_count: np.ndarray       # (N_RHS_COUNT,) int64: RHS evaluations, and before the last step
    safety: np.ndarray          # (N_SAFETY,) SF_*: the running-safety memory
    safety_before: np.ndarray   # its copy for undo_step
    contact: np.ndarray         # (2, MAX_POINTS, N_CONTACT) C_*
    summary: np.ndarray         # (N_SUMMARY,) O_*
    derived: np.ndarray         # (N_DERIVED,) D_*
    record: np.ndarray          # (N_RECORD,) REC_*: the outputs at the current state
    deriv: np.ndarray           # (N_STATE,) the last right-hand side
    search: ContactBuffers      # the contact search's scratch and points
    search_key: np.ndarray      # (N_SEARCH_KEY,) KEY_*
    jacobian: np.ndarray        # (N_JACOBIAN,) JAC_*: the Rosenbrock method's kept Jacobian
    table_scratch: object       # the contact table's TableScratch, None for the online search


def solve_dense(a, b):
    """x with a x = b (rosenbrock.lu_factor and lu_solve: partial pivoting,
    plain arithmetic, no BLAS/LAPACK: the initial state must not depend on which
    OpenBLAS kernel the host's environment selects, e.g. OPENBLAS_CORETYPE; the
    same FMU gave runs 4e-9 apart otherwise). None if `a` is singular."""
    lu = np.array(a, dtype=float)
    n = lu.shape[0]
    pivots = np.zeros(n)
    if not lu_factor(lu, n, pivots):
        return None
    x = np.zeros(n)
    lu_solve(lu, pivots, n, np.asarray(b, dtype=float), x)
    return x


def _norm(v):
    """The 2-norm without BLAS (see solve_dense)."""
    return math.sqrt(math.fsum(float(e) * float(e) for e in v))


POLISH_STEPS = 3       # Newton steps after the tolerance is met (static_equilibrium)


def static_equilibrium(model, state, unknowns, residuals, iterations=100, tolerance=1e-6):
    """Damped Newton on the state entries `unknowns` (plus the lumped rail bodies'
    displacements, when the track has them) for zero derivative entries
    `residuals` (plus the rail bodies' accelerations), the other entries of
    `state` held; forward-difference Jacobian (steps 1e-7 m or rad); a Newton
    step longer than 1 mm or 1 mrad in any entry (5 mrad in a rail's roll, 1 m/s
    or rad/s in a rate) is shortened as a whole, then halved until the residual
    falls; once the residual is below `tolerance` (m/s^2, rad/s^2), up to
    POLISH_STEPS more steps while they lower it. Returns the state, or None if
    the residual is not below `tolerance` in time."""
    unknowns = list(unknowns)
    residuals = list(residuals)
    limits = [1e-3 if STATE_IS_POSITION[k] else 1.0 for k in unknowns]
    if model.model[M_TRACK_MODEL] == TRACK_LUMPED:
        unknowns += list(range(S_RAIL, S_RAIL + 6))
        residuals += list(range(S_RAIL_RATE, S_RAIL_RATE + 6))
        limits += [1e-3, 1e-3, 5e-3] * 2
    limits = np.array(limits)
    n = len(unknowns)
    st = np.array(state, dtype=float)
    # the residuals as forces and moments (accelerations times masses and
    # inertias): the merit of the line search weighs the light rail bodies and the
    # wheelset alike
    p = model.params
    inertia = np.ones(N_STATE)
    inertia[[S_VX, S_VY, S_VZ]] = p.mass
    inertia[[S_ROLL_RATE, S_YAW_RATE, S_SPIN_RATE]] = p.inertia_roll, p.inertia_yaw, p.inertia_spin
    inertia[S_RAIL_RATE:S_RAIL_RATE + 6] = tuple(p.rail_mass[:3]) * 2
    scale = inertia[residuals]

    def residual(x):
        return model.rhs(x)[residuals]

    f = residual(st)
    polish = 0
    for _ in range(iterations):
        if np.all(np.abs(f) < tolerance):
            # within the tolerance: up to POLISH_STEPS more Newton steps, each kept
            # only if it lowers the residual, so that the state does not depend on
            # which iteration first passed the tolerance (two hosts whose inputs
            # differ in the last bits stopped one iteration apart: 7e-7 of Q)
            if polish == POLISH_STEPS:
                return st
            polish += 1
        jac = np.zeros((n, n))
        for j, idx in enumerate(unknowns):
            st2 = st.copy()
            st2[idx] += 1e-7
            jac[:, j] = (residual(st2) - f) / 1e-7
        step = solve_dense(jac, -f) if np.all(np.isfinite(jac)) else None
        if step is None or not np.all(np.isfinite(step)):
            step = np.zeros(n)
            step[0] = -1e-5              # not yet in contact on both wheels: lower the wheelset
        step *= min(1.0, float(np.min(limits / np.maximum(np.abs(step), 1e-300))))
        for _ in range(12):
            trial = st.copy()
            trial[unknowns] += step
            f_trial = residual(trial)
            if (_norm(f_trial * scale) < _norm(f * scale)
                    or not np.all(np.isfinite(jac))):
                break
            step = 0.5 * step
        if polish and not _norm(f_trial * scale) < _norm(f * scale):
            return st                    # no lower residual to be had: polished
        st, f = trial, f_trial
    return st if np.all(np.abs(f) < tolerance) else None


class WheelsetModel:
    """The wheelset core: parameters, track, state, and `advance`."""

    def __init__(self, params: WheelsetParameters | None = None):
        self.params = params = params or WheelsetParameters()
        params.validate()
        try:
            wheel = resolve_profile(params.wheel_profile, "wheel", params.profile_step)
            rail = resolve_profile(params.rail_profile, "rail", params.profile_step)
            self.setup = ContactSetup(
                wheel, rail, gauge=params.gauge, inclination=params.rail_inclination,
                back_to_back=params.back_to_back, nominal_radius=params.nominal_radius,
                separation_min=params.separation_min,
                slope_difference_min=params.slope_difference_min)
        except GeometryError as exc:
            raise WheelsetError(str(exc)) from exc
        self.track = resolve_track(params.track)
        model_id, creep_options = kernel_parameters(params.creep_model, dict(params.creep_options))
        m = np.zeros(N_MODEL)
        m[M_MASS] = params.mass
        m[M_JX] = params.inertia_roll
        m[M_JY] = params.inertia_spin
        m[M_JZ] = params.inertia_yaw
        m[M_YOUNG] = params.young
        m[M_POISSON] = params.poisson
        m[M_FRICTION] = params.friction
        m[M_CREEP_MODEL] = model_id
        m[M_CREEP_OPTIONS:M_CREEP_OPTIONS + N_CREEP_OPTIONS] = creep_options
        m[M_CONTACT_DAMPING] = params.contact_damping
        m[M_MULTIPOINT] = float(CONTACT_MODELS.get(params.contact_model).id)
        m[M_BOX_SEMI_SPACING] = params.axle_box_semi_spacing
        m[M_BOGIE] = 1.0 if params.bogie else 0.0
        m[M_KX:M_KZ + 1] = params.suspension_stiffness
        m[M_CX:M_CZ + 1] = params.suspension_damping
        m[M_SUSPENDED_MASS] = params.suspended_mass
        m[M_SPEED] = params.speed
        m[M_GRAVITY] = GRAVITY
        m[M_F11:M_F33 + 1] = params.creep_coefficients
        m[M_ROLL_RATE_CREEPAGE] = 1.0 if params.roll_rate_creepage else 0.0
        m[M_GYROSCOPIC] = 1.0 if params.gyroscopic else 0.0
        m[M_TOLERANCE] = params.tolerance
        m[M_MAX_STEPS] = params.max_substeps
        m[M_FRAME_ON_CENTRELINE] = 1.0 if params.frame_on_centreline else 0.0
        m[M_CARBODY_SHARE] = params.carbody_share
        m[M_CARBODY_CG_HEIGHT] = params.carbody_cg_height
        m[M_FRAME_CG_HEIGHT] = params.frame_cg_height
        m[M_SECONDARY_HEIGHT] = params.secondary_height
        m[M_SECONDARY_ROLL_STIFFNESS] = params.secondary_roll_stiffness
        m[M_SECONDARY_LATERAL_STIFFNESS] = params.secondary_lateral_stiffness
        m[M_TRACK_MODEL] = float(TRACK_MODEL_NAMES.index(params.track_model))
        m[M_RAIL_MASS:M_RAIL_MASS + 4] = params.rail_mass
        m[M_RAIL_STIFFNESS:M_RAIL_STIFFNESS + 4] = params.rail_stiffness
        m[M_RAIL_DAMPING:M_RAIL_DAMPING + 4] = params.rail_damping
        m[M_HUNT_CROSSLEY] = params.hunt_crossley
        self.model = m
        self._track_table = self.track.segment_table()
        self._search = self.setup.buffers()          # the contact search's scratch and points
        self._work, self._points, self._counts = self._search
        self._results = ContactResults(np.zeros((2, MAX_POINTS, N_CONTACT)), np.zeros(N_SUMMARY))
        self._contact, self._summary = self._results
        self._deriv = np.zeros(N_STATE)
        self._saved = (np.zeros(N_STATE), np.zeros_like(self._contact), np.zeros(N_SUMMARY))
        # (creep time constant s, fastest mode rate 1/s) at the start: stable_internal_step
        self._initial_rates = (math.inf, 0.0)
        self._derived = np.zeros(N_DERIVED)
        # pose and rail motion of the points in self._search (integrate.K_*; 0 = none)
        self._search_key = np.zeros(N_SEARCH_KEY)
        # the Rosenbrock integrator's Jacobian, kept from step to step (integrate.JAC_*)
        self._jacobian = self._no_jacobian()
        # and its W^-1 and last derivative (integrate.ROS_MEMO_*; none: W_DT -1, END_VALID 0)
        self._rosenbrock_memo = np.zeros(N_ROS_MEMO)
        self._rosenbrock_memo[ROS_MEMO_W_DT] = -1.0
        # tabulated contact geometry: built here (the mode's builder), shared by the
        # models of one set-up
        self.contact_table = None
        self._table_search = None
        table_arrays = empty_table_arrays()
        mode = GEOMETRY_MODES.get(params.contact_geometry)
        if mode.builder is not None:
            self.contact_table = mode.builder(self.setup)
            table_arrays = self.contact_table.arrays
            self._table_search = TableSearch(table_arrays, table_scratch())
        scratch = (self._table_search.scratch if self._table_search is not None
                   else table_scratch())
        self.state = np.zeros(N_STATE)
        self.record = np.zeros(N_RECORD)    # the outputs at the current state, flat (R_*)
        # all that the per-step kernel works on, as the plain tuple it takes (see
        # integrate.advance_kernel); the arrays are shared, changed in place
        saved_state, saved_contact, saved_summary = self._saved
        self._step_data = tuple(StepData(
            track_table=self._track_table, rail_distance=self.track.rail_distance,
            track_length=self.track.length, wheel_table=self.setup.wheel_table,
            rail_table=self.setup.rail_table, geometry_params=self.setup.params, model=self.model,
            integrator_id=INTEGRATORS.get(params.integrator).id,
            max_penetration=params.max_penetration,
            tread_end=float(self.setup.wheel_table[-1, T_LAT]),
            flange_tip=float(self.setup.wheel_table[0, T_LAT]),
            work=self._work, points=self._points, counts=self._counts,
            contact=self._contact, summary=self._summary,
            stages=np.zeros((N_STAGE_ROWS, N_STATE)),
            saved_state=saved_state, saved_contact=saved_contact, saved_summary=saved_summary,
            derived=self._derived, record=self.record, table_params=table_arrays.tparams,
            table_flags=table_arrays.flags, table_nodes=table_arrays.nodes,
            table_rows=scratch.rows, table_index=scratch.index,
            search_key=self._search_key, jacobian=self._jacobian,
            rosenbrock_memo=self._rosenbrock_memo, step_stats=np.zeros(N_STEP_STATS)))
        self._block_owner = (0, (), ())     # core_step_block: none yet
        # the scalars that evolve live in arrays, which the FMU's fast step
        # (solver/py) updates from numba as the Python step does:
        # time, distance, internal step and what undo_step restores
        # (K_*), the RHS evaluations and their number before the last step
        self._clock = np.zeros(N_CLOCK)
        self._rhs_count = np.zeros(N_RHS_COUNT, dtype=np.int64)
        self._u = self.input_vector(WheelsetInputs())   # the inputs of the last step
        # derailment (solver/py): the lateral displacement past the flange,
        # the Nadal ratios at the current state, the time each flange last climbed
        self._flange_passed = flange_passed_lateral(self.setup)
        # the running-safety memory (SF_*) and its copy for undo_step
        self._safety = self._no_safety()
        self._safety_before = self._no_safety()
        self._u_before = self._u.copy()     # what undo_step restores
        self._initialized = False
        # the contact arrays the right-hand side works on (StepContact: the online
        # search has an empty table)
        self.step_contact = StepContact(
            self.setup.tables, self._search, self._results,
            self._table_search if self._table_search is not None
            else TableSearch(table_arrays, scratch))
        self.arrays = ModelArrays(
            state=self.state, inputs=self._u, inputs_before=self._u_before, clock=self._clock,
            rhs_count=self._rhs_count, safety=self._safety, safety_before=self._safety_before,
            contact=self._contact, summary=self._summary, derived=self._derived,
            record=self.record, deriv=self._deriv, search=self._search,
            search_key=self._search_key, jacobian=self._jacobian,
            table_scratch=self._table_search.scratch if self._table_search is not None else None)

    # the model's public view of its state of work, for the FMU and for diagnostics
    @property
    def initialized(self) -> bool:
        """True once initialize() has run (or a state of an initialized model was set)."""
        return self._initialized

    @property
    def step_data(self) -> tuple:
        """The plain tuple of StepData that advance_kernel (and the FMU's fast step) takes."""
        return self._step_data

    @property
    def flange_passed(self) -> float:
        """The lateral displacement (m) past which a flange has passed its rail (derailment)."""
        return self._flange_passed

    def set_inputs(self, u: np.ndarray):
        """Set the input vector (U_*, N_INPUT entries, as input_vector builds it) in
        place, then the record: the outputs at the current state with these inputs
        take a contact evaluation first (rhs), which the caller chooses."""
        self._u[:] = u

    # the evolving scalars, stored in _clock / _rhs_count (see __init__)
    @property
    def time(self) -> float:
        return float(self._clock[CLK_TIME])

    @time.setter
    def time(self, value: float):
        self._clock[CLK_TIME] = value

    @property
    def distance(self) -> float:
        return float(self._clock[CLK_DISTANCE])

    @distance.setter
    def distance(self, value: float):
        self._clock[CLK_DISTANCE] = value

    @property
    def rhs_evaluations(self) -> int:
        return int(self._rhs_count[RC_RHS])

    @rhs_evaluations.setter
    def rhs_evaluations(self, value: int):
        self._rhs_count[RC_RHS] = value

    @property
    def forced_steps(self) -> int:
        """Steps the adaptive integrator accepted at its shortest step with the
        error test failed, since initialize (REC_FORCED_STEPS)."""
        return int(self._rhs_count[RC_FORCED])

    @forced_steps.setter
    def forced_steps(self, value: int):
        self._rhs_count[RC_FORCED] = value

    @property
    def internal_step(self) -> float:
        """The internal step advance() uses (s; set by initialize: stable_internal_step)."""
        return float(self._clock[CLK_INTERNAL_STEP])

    @internal_step.setter
    def internal_step(self, value: float):
        self._clock[CLK_INTERNAL_STEP] = value

    # -- state ---------------------------------------------------------------
    @staticmethod
    def _no_jacobian() -> np.ndarray:
        """A kept-Jacobian array (integrate.JAC_*) that holds none."""
        jacobian = np.zeros(N_JACOBIAN)
        jacobian[JAC_AGE] = -1.0
        return jacobian

    def get_state(self) -> dict:
        """A deep, picklable snapshot of everything that evolves."""
        return {"state": self.state.copy(), "time": self.time, "distance": self.distance,
                "rhs_evaluations": self.rhs_evaluations, "forced_steps": self.forced_steps,
                "contact": self._contact.copy(),
                "summary": self._summary.copy(), "inputs": self._u.copy(),
                "initialized": self._initialized, "model": self.model.copy(),
                "safety": self._safety.copy(), "jacobian": self._jacobian.copy()}

    def set_state(self, snapshot: dict):
        self._clock[CLK_BEFORE_VALID] = 0.0
        self.state[:] = snapshot["state"]
        self.time = float(snapshot["time"])
        self.distance = float(snapshot["distance"])
        self.rhs_evaluations = int(snapshot["rhs_evaluations"])
        self.forced_steps = int(snapshot.get("forced_steps", 0))
        self._contact[:] = snapshot["contact"]
        self._summary[:] = snapshot["summary"]
        self._u[:] = snapshot["inputs"]
        self._initialized = bool(snapshot["initialized"])
        self.model[:] = snapshot["model"]
        self._safety[:] = snapshot.get("safety", self._no_safety())
        # the Rosenbrock integrator's kept Jacobian; without one the next step computes it
        self._jacobian[:] = snapshot.get("jacobian", self._no_jacobian())
        self._rosenbrock_memo[ROS_MEMO_W_DT] = -1.0
        self._rosenbrock_memo[ROS_MEMO_END_VALID] = 0.0
        # the contact search's tracked minima belong to another pose: the next search scans
        forget_tracked_minima(self._work)
        self.refresh_record()

    # -- track and inputs ------------------------------------------------------
    def _track_values(self, s: float, u: np.ndarray):
        """(curvature, curvature rate, cant angle) at s, with the overrides of the input vector."""
        kap, rate, cant = track_state_kernel(self._track_table, self.track.rail_distance,
                                             self.track.length, float(s))
        if math.isfinite(u[U_CURVATURE]):
            kap, rate = u[U_CURVATURE], 0.0
        if math.isfinite(u[U_CANT]):
            cant = u[U_CANT]
        return kap, rate, cant

    @staticmethod
    def input_vector(inputs: WheelsetInputs) -> np.ndarray:
        """The flat input vector (U_*, N_INPUT) of `inputs`; WheelsetError if an
        entry is not finite (curvature and cant may be NaN: from the track)."""
        rm = inputs.rail_motion
        u = np.empty(N_INPUT)
        motion = u[U_RAIL_MOTION:U_RAIL_MOTION + 6].reshape(2, 3)
        motion[:, 0], motion[:, 1], motion[:, 2] = rm.lateral, rm.vertical, rm.roll
        rate = u[U_RAIL_VELOCITY:U_RAIL_VELOCITY + 6].reshape(2, 3)
        rate[:, 0], rate[:, 1], rate[:, 2] = rm.lateral_velocity, rm.vertical_velocity, rm.roll_velocity
        u[U_BOX_FORCE:U_BOX_FORCE + 6] = np.asarray(inputs.axle_box_force, dtype=float).reshape(6)
        u[U_BOX_MOMENT:U_BOX_MOMENT + 6] = np.asarray(inputs.axle_box_moment, dtype=float).reshape(6)
        u[U_TORQUE] = float(inputs.axle_torque)
        u[U_CURVATURE] = float(inputs.curvature)
        u[U_CANT] = float(inputs.cant_angle)
        bad_input_error(u)
        return u

    def rhs(self, state=None, inputs: WheelsetInputs | None = None, s=None):
        """The state derivative at `state` (default: the current one); fills the contact results."""
        state = self.state if state is None else np.asarray(state, dtype=float)
        u = self._u if inputs is None else self.input_vector(inputs)
        s = self.distance if s is None else s
        kap, rate, cant = self._track_values(s, u)
        inputs = StepInputs(rail_motion=u[U_RAIL_MOTION:U_RAIL_MOTION + 6].reshape(2, 3),
                            rail_velocity=u[U_RAIL_VELOCITY:U_RAIL_VELOCITY + 6].reshape(2, 3),
                            box_force=u[U_BOX_FORCE:U_BOX_FORCE + 6].reshape(2, 3),
                            box_moment=u[U_BOX_MOMENT:U_BOX_MOMENT + 6].reshape(2, 3),
                            axle_torque=u[U_TORQUE])
        self._search_key[:] = 0.0     # the points below are not those of the step's key
        wheelset_rhs(state, TrackPoint(kap, rate, cant), self.model, inputs, self.step_contact,
                     self._deriv)
        return self._deriv.copy()

    def refresh_record(self):
        """Rebuild the output record (and the running-safety outputs) from the
        current state and contact results: after the inputs or the state were set
        from outside (set_inputs, set_state, a feedthrough evaluation)."""
        fill_record(self.state, self._results, self.params.axle_box_semi_spacing,
                    self._derived, self.record)
        self.record[REC_TIME] = self.time
        self.record[REC_DISTANCE] = self.distance
        self.record[REC_FORCED_STEPS] = self.forced_steps
        self._update_safety()

    def _update_safety(self):
        """The running-safety outputs of the current state into the record
        (update_safety, outside a step: anything that begins now is
        dated now)."""
        time, distance = self.time, self.distance
        update_safety((self._contact, self._derived, self._summary), self.model[M_FRICTION],
                      self._safety, self.record, (time, distance), (time, distance))

    @staticmethod
    def _no_safety() -> np.ndarray:
        """A running-safety memory (SF_*) with nothing begun."""
        safety = np.zeros(N_SAFETY)
        safety[SF_CLIMB_SINCE:SF_CLIMB_SINCE + 2] = NEVER
        safety[SF_AIRBORNE_SINCE] = NEVER
        return safety

    # -- initialisation ----------------------------------------------------------
    def initialize(self, inputs: WheelsetInputs | None = None, lateral: float | None = None,
                   yaw: float | None = None):
        """Static equilibrium at t = 0, s = 0: the rigid contact pose, then the
        vertical position and roll that balance the loads with the elastic
        contact forces (Newton on z and roll with the velocities of pure rolling).

        `inputs` (WheelsetInputs or the flat U_* vector) are the loads held at
        t = 0, e.g. the static axle-box forces of the vehicle the wheelset
        carries: the equilibrium is found under them, so a coupled run starts
        without a load step."""
        p = self.params
        if isinstance(inputs, np.ndarray):        # the flat vector of input_vector (U_*)
            u = np.array(inputs, dtype=float).reshape(N_INPUT)
            bad_input_error(u)
            self._u[:] = u
        else:
            # in place: the step reaches self._u by address (core_step_block)
            self._u[:] = self.input_vector(inputs or WheelsetInputs())
        y0 = p.initial_lateral if lateral is None else lateral
        yaw0 = p.initial_yaw if yaw is None else yaw
        rigid = self._rigid_start(y0, yaw0)
        st = np.zeros(N_STATE)
        st[S_Y] = y0
        st[S_YAW] = yaw0
        st[S_Z] = rigid.z - 5e-5     # start just inside the elastic contact
        st[S_ROLL] = rigid.roll
        st[S_SPIN_RATE] = p.speed / p.nominal_radius
        if p.bogie:
            self.model[M_BOX_Z_REF] = rigid.z
        # Newton on (z, roll) for zero vertical and roll accelerations, and on the
        # lumped rail bodies' displacements for zero rail accelerations, damped: a
        # step that does not reduce them is halved (the creep forces' vertical
        # parts may make the accelerations turn faster than their finite-difference
        # Jacobian says, e.g. with a large linear spin coefficient f23)
        st = self._equilibrium_from_starts(st)
        if st is None:
            hint = ""
            if p.contact_model == "single" and p.track_model == "lumped":
                hint = ("; the single-point model has none where two points of a wheel are about "
                        "equally deep on a rail that rolls (the whole load jumps between them "
                        "and rolls the rail back): use the multipoint model, or the prescribed "
                        "(rigid) track of track_model 'prescribed'")
            raise WheelsetError("static equilibrium not found at the initial pose" + hint)
        if p.bogie:
            # the built-in suspension's rest height: the boxes at rest where the
            # wheelset sits in its equilibrium (its springs then carry the suspended
            # mass's weight exactly, however far the contacts and the rails yield):
            # a fixed point, each pass shrinking the error by the ratio of the
            # suspension's vertical stiffness to the contacts' and the rails'
            for _ in range(3):
                z_ref, before = st[S_Z], self.model[M_BOX_Z_REF]
                self.model[M_BOX_Z_REF] = z_ref
                settled = self._equilibrium_from_starts(st)
                if settled is None:         # keep the equilibrium found (rest height before)
                    self.model[M_BOX_Z_REF] = before
                    break
                st = settled
                if abs(st[S_Z] - z_ref) < 1e-9:
                    break
        self.state[:] = st
        self.time = 0.0
        self.distance = 0.0
        self.rhs(self.state)
        self.refresh_record()
        self.internal_step = self.stable_internal_step()
        self._initialized = True

    def _rigid_start(self, y0, yaw0):
        """The rigid static contact at (y0, yaw0), the static equilibrium's start;
        where its own iteration fails (two points of a wheel touching at once, at
        the onset of flange contact) the one a micrometre or a few aside (a start
        only: the equilibrium is solved at y0)."""
        error = None
        for dy in (0.0, 1e-6, -1e-6, 5e-6, -5e-6):
            try:
                return static_contact(self.setup, y0 + dy, yaw0)
            except GeometryError as exc:
                error = error or exc
        raise WheelsetError(f"no static contact at the initial pose: {error}") from error

    # the starts of the static equilibrium's Newton, offsets (z m, roll rad) from the
    # first (just inside the rigid contact): its basin is rough where a point is on
    # the steep flange (the contacts switch and the rails roll within a micrometre),
    # so a failed start is followed by others above, below and rolled either way
    EQUILIBRIUM_STARTS = ((0.0, 0.0), (5e-5, 0.0), (0.0, 1e-4), (0.0, -1e-4),
                          (-1.5e-4, 1e-4), (-1.5e-4, -1e-4))

    def _equilibrium_from_starts(self, start):
        """static_equilibrium on (z, roll) (and the rails) from `start`, then from
        EQUILIBRIUM_STARTS' other offsets until one converges; None if none does."""
        for dz, droll in self.EQUILIBRIUM_STARTS:
            st = start.copy()
            st[S_Z] += dz
            st[S_ROLL] += droll
            st = static_equilibrium(self, st, (S_Z, S_ROLL), (S_VZ, S_ROLL_RATE))
            if st is not None:
                return st
        return None

    # -- stepping ------------------------------------------------------------------
    def advance(self, h: float, inputs: WheelsetInputs | None = None) -> StepResult:
        """Advance by exactly h (s) with n = ceil(h / internal_step) equal substeps.

        Returns StepResult("discard", reason) and leaves the state unchanged if
        the step cannot be completed (non-finite state, excessive penetration,
        derailment, loss of all contact)."""
        return self.advance_vector(h, self._u if inputs is None else self.input_vector(inputs))

    def core_step_block(self):
        """(block, ints, reals) of pack_core_block: the step's arrays by
        address (numba unboxes 3 arrays instead of 40). Built on first use and
        again for a copy of the model (whose arrays are its own: the block
        records the id of the model it was made for)."""
        core = (self.state, self._clock, self._rhs_count, self._safety_before, self._safety,
                self._u, self._u_before)
        owner = self._block_owner
        if owner[0] != id(self) or not all(map(operator.is_, core, owner[1])):
            # (also if one of these arrays was replaced rather than changed in place)
            block, ints, reals, kept = pack_core_block(
                dict(zip(CORE_ARRAYS, core)), self._step_data)
            ints[I_MAX_SUBSTEPS] = self.params.max_substeps
            self._block = (block, ints, reals)
            self._block_owner = (id(self), core, kept)
        return self._block

    def advance_vector(self, h: float, u: np.ndarray, handed=None) -> StepResult:
        """`advance` with the inputs as the flat vector of `input_vector` (U_*):
        one numba call for the whole step and its bookkeeping (core_step:
        solver.dynamics.integrators.step.advance_kernel, accept_step); the outputs at
        the new state are in `record`. A non-finite input raises
        WheelsetError and changes nothing. `handed`: the outcome (problem code,
        where, RHS evaluations, substeps) of this very step as the FMU's fast
        step ran it with these inputs, the model left as core_step leaves it
        (fast_step._hand): the step is concluded from it, not run again."""
        if not self._initialized:
            raise WheelsetError("advance() before initialize()")
        if not (isinstance(h, (int, float)) and 0.0 < h < math.inf):
            raise WheelsetError(f"step size must be positive and finite, got {h!r}")
        if not (type(u) is np.ndarray and u.dtype == np.float64 and u.shape == (N_INPUT,)
                and u.flags.c_contiguous):
            # the compiled step reads N_INPUT entries without bounds checks
            try:
                u = np.ascontiguousarray(u, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise WheelsetError(f"the input vector must be {N_INPUT} numbers (input_vector): "
                                    f"{exc}") from None
            if u.shape != (N_INPUT,):
                raise WheelsetError(f"the input vector must have {N_INPUT} entries "
                                    f"(input_vector), got shape {u.shape}")
        saved_state, saved_contact, saved_summary = self._saved
        # the one route of a step (fast_step.core_step: communication_step rounds
        # h and splits it into substeps)
        if handed is None:
            code, where, n_rhs, n_sub = core_step(float(h), u, float(self.params.speed),
                                                  self._flange_passed, *self.core_step_block())
        else:
            code, where, n_rhs, n_sub = handed
        if code == PROBLEM_SUBSTEPS:
            return StepResult(
                "discard", f"a step of {h:g} s needs {n_sub:.0f} internal steps of at most "
                f"{self.internal_step:g} s, more than the {self.params.max_substeps} "
                "allowed per step (max_substeps, FMU parameter solver.max_substeps): split "
                "it into shorter communication steps", 0, "too_many_substeps")
        if code == PROBLEM_BAD_INPUT:
            bad_input_error(u)
        if code == PROBLEM_NONE and lateral_towards_flange(self.state, u) > self._flange_passed:
            # past the flange: the flange tip has crossed the rail's gauge face
            y_before = lateral_towards_flange(saved_state, self._u_before)
            y_after = lateral_towards_flange(self.state, u)
            side = 0 if self.state[S_Y] - u[U_RAIL_MOTION] - self.state[S_RAIL] >= y_after else 1
            self.state[:] = saved_state
            self._contact[:] = saved_contact
            self._summary[:] = saved_summary
            self.refresh_record()
            if y_before <= self._flange_passed and y_after > JUMP_FACTOR * self._flange_passed:
                # from before the flange to far beyond it in one step: not a wheel
                # climbing but the integration failing
                return StepResult(
                    "discard", f"the lateral displacement relative to the rails jumped from "
                    f"{y_before * 1e3:.1f} to {y_after * 1e3:.1f} mm in one step (numerical "
                    "instability: reduce the internal step)" + self._stability_hint(h / n_sub), 0,
                    "non_finite")
            return StepResult(
                "discard", f"derailment: the {('left', 'right')[side]} wheel is off its rail "
                f"head on the field side: the lateral displacement {y_after * 1e3:.1f} mm relative "
                f"to its rail is past the flange (its tip crosses the gauge face at "
                f"{self._flange_passed * 1e3:.1f} mm)" + self._stability_hint(h / n_sub), 0,
                "derailment")
        if code == PROBLEM_AIRBORNE and min(self._summary[O_GAP_LEFT:O_GAP_RIGHT + 1]) >= 0.5:
            # both wheels half a metre off their rails (or not over them at all)
            # after one step: not a flight but the integration failing
            self.state[:] = saved_state
            self._contact[:] = saved_contact
            self._summary[:] = saved_summary
            self.refresh_record()
            return StepResult(
                "discard", "both wheels left their rails by more than 0.5 m in one step "
                "(numerical instability: reduce the internal step)"
                + self._stability_hint(h / n_sub), 0, "non_finite")
        if code == PROBLEM_OFF_RAIL:
            moved = abs(self._summary[O_RAIL_ON_WHEEL_LEFT + where]
                        - saved_summary[O_RAIL_ON_WHEEL_LEFT + where])
            if moved > self._flange_passed:
                # across the rail head by more than the flange's reach in one step:
                # not a wheel sliding off its rail but the integration failing
                self.state[:] = saved_state
                self._contact[:] = saved_contact
                self._summary[:] = saved_summary
                return StepResult(
                    "discard", f"the {('left', 'right')[where]} wheel moved {moved * 1e3:.1f} mm "
                    "across its rail head in one step (numerical instability: reduce the internal "
                    "step)" + self._stability_hint(h / n_sub), 0, "non_finite")
        if code != PROBLEM_NONE:
            reason, message = self._problem_message(code, where)
            self.state[:] = saved_state
            self._contact[:] = saved_contact
            self._summary[:] = saved_summary
            if code == PROBLEM_AIRBORNE:
                # (the step's outputs were recorded before its flight was judged)
                self.refresh_record()
            # (a derailment too: an explicit integrator above its stability limit
            # may throw the wheelset off its rails)
            message += self._stability_hint(h / n_sub)
            return StepResult("discard", message, 0, reason)
        # accepted: core_step did the bookkeeping (as the FMU's fast step does)
        return StepResult("ok", "", n_rhs)

    def undo_step(self):
        """Take back the last accepted step (the state, time, inputs and outputs as
        before it, bit for bit): for a caller that refuses its result, e.g. the FMU
        when an output would leave its declared range. Only once per step."""
        if not self._clock[CLK_BEFORE_VALID]:
            raise WheelsetError("undo_step() without an accepted step to take back")
        saved_state, saved_contact, saved_summary = self._saved
        self.state[:] = saved_state
        self._contact[:] = saved_contact
        self._summary[:] = saved_summary
        self._u[:] = self._u_before
        clock = self._clock
        clock[CLK_TIME] = clock[CLK_BEFORE_TIME]
        clock[CLK_DISTANCE] = clock[CLK_BEFORE_DISTANCE]
        self._rhs_count[RC_RHS] = self._rhs_count[RC_RHS_BEFORE]
        self._rhs_count[RC_FORCED] = self._rhs_count[RC_FORCED_BEFORE]
        self._safety[:] = self._safety_before
        clock[CLK_BEFORE_VALID] = 0.0
        self.refresh_record()

    def creep_time_constant(self) -> float:
        """Time constant (s) of the longitudinal slip mode at the current contact
        patches. A longitudinal slip velocity dv = vx - r Omega decays under the
        creep forces f11 dv / V, which brake the wheelset (mass m) and spin up the
        axle (inertia J_y, lever r):  d(dv)/dt = -(1/V) sum f11 (1/m + r^2/J_y) dv,
        so tau = V / sum[f11 (1/m + r^2/J_y)], with Kalker's f11 = G a b C11 per
        active point (the initial slope of every creep model here; saturation only
        lowers it). inf when no point is in contact or V = 0."""
        p = self.params
        shear = p.young / (2.0 * (1.0 + p.poisson))
        rate = 0.0
        for row in self._contact.reshape(-1, N_CONTACT):
            if row[C_ACTIVE] > 0.5 and row[C_A] > 0.0 and row[C_B] > 0.0:
                f11 = (p.creep_coefficients[0] if p.creep_coefficients[0] > 0 else
                       linear_creep_coefficients(row[C_A], row[C_B], shear, p.poisson)[0])
                rate += f11 * (1.0 / p.mass + row[C_RADIUS] ** 2 / p.inertia_spin)
        return p.speed / rate if rate > 0.0 and p.speed > 0.0 else math.inf

    #: fraction of the explicit stability limit the internal step is held to: the
    #: limit is computed at the initial contact; flange contact adds contact
    #: points and can halve the time constant during a run.
    STABILITY_SAFETY = 0.5

    def stable_internal_step(self) -> float:
        """The internal step used by `advance`: params.internal_step, or less where
        an explicit integrator's stability limit (its stability_limit fact,
        solver.dynamics.integrators.methods) over the fastest mode at the initial
        state, times STABILITY_SAFETY, is smaller. The fastest modes are the creep
        damping of the longitudinal slip (its time constant is proportional to V:
        creep_time_constant(), e.g. 0.986 ms for the S1002/UIC60 wheelset at 5 m/s
        with RK4) and the lumped rail bodies on the contact (fastest_mode_rate():
        their lateral and roll motion under the creep damping of the wheel, whose
        lateral creepage their velocity enters, about 5.5e4 1/s on the loaded
        S1002/UIC60 pair at 30 m/s, and their vertical ringing on the Hertz
        springs, about 5200 1/s). With an adaptive integrator
        ("rk23", "rk45", "rosenbrock") params.internal_step, their largest step:
        the error test keeps every step within the stability limit."""
        method = INTEGRATORS.get(self.params.integrator)
        if method.facts["adaptive"]:
            return self.params.internal_step     # the largest step; the error test does the rest
        self._initial_rates = (self.creep_time_constant(), self.fastest_mode_rate())
        tau, fastest = self._initial_rates
        limit = method.facts["stability_limit"] * min(tau, 1.0 / fastest)
        return min(self.params.internal_step, self.STABILITY_SAFETY * limit)

    def state_jacobian(self, state, idx, position_step, rate_step,
                       inputs: WheelsetInputs | None = None) -> np.ndarray:
        """d(derivative[idx]) / d(state[idx]) at `state` by central differences:
        steps `position_step` (m or rad) in the positions, `rate_step` (m/s or
        rad/s) in the rates; `inputs` as rhs takes them."""
        idx = list(idx)
        state = np.asarray(state, dtype=float)
        a = np.zeros((len(idx), len(idx)))
        for j, k in enumerate(idx):
            h = position_step if STATE_IS_POSITION[k] else rate_step
            xp = state.copy()
            xm = state.copy()
            xp[k] += h
            xm[k] -= h
            a[:, j] = (self.rhs(xp, inputs)[idx] - self.rhs(xm, inputs)[idx]) / (2.0 * h)
        return a

    def fastest_mode_rate(self) -> float:
        """The largest |eigenvalue| (1/s) of the core linearised about the current
        state (central differences; the spin angle left out): the rate an explicit
        integrator's step must resolve."""
        state = self.state.copy()
        a = self.state_jacobian(state, [k for k in range(N_STATE) if k != S_SPIN_ANGLE], 1e-8, 1e-6)
        self.rhs(state)
        values = np.linalg.eigvals(a) if np.all(np.isfinite(a)) else np.array([np.inf])
        return max(float(np.max(np.abs(values))), 1e-9)

    def _stability_hint(self, dt: float) -> str:
        """A sentence for a discarded step when the internal step is above an
        explicit integrator's stability limit (else empty): the stricter of the
        creep damping's and the fastest mode's."""
        method = INTEGRATORS.get(self.params.integrator)
        if method.facts["adaptive"]:
            return ""
        # the stricter of now (the state before the refused step) and the start (an
        # instability may have grown over several accepted steps, and lost the
        # contacts whose modes it came from, before a step is refused)
        tau0, fastest0 = self._initial_rates
        tau = min(self.creep_time_constant(), tau0)
        creep_limit = method.facts["stability_limit"] * tau
        fastest = max(self.fastest_mode_rate(), fastest0)
        mode_limit = method.facts["stability_limit"] / fastest
        if not dt > min(creep_limit, mode_limit):
            return ""
        if creep_limit <= mode_limit:
            return (f"; probable cause: the internal step {dt * 1e3:.3g} ms is above the "
                    f"stability limit {creep_limit * 1e3:.3g} ms of the creep damping "
                    f"(longitudinal slip time constant {tau * 1e3:.3g} ms at V = "
                    f"{self.params.speed:g} m/s, WheelsetModel.creep_time_constant): reduce "
                    "the internal step")
        return (f"; probable cause: the internal step {dt * 1e3:.3g} ms is above the "
                f"stability limit {mode_limit * 1e3:.3g} ms of the fastest mode ({fastest:.0f} "
                "1/s: the rail bodies on the contact's springs and creep damping, "
                "WheelsetModel.fastest_mode_rate): reduce the internal step")

    def _problem_message(self, code, side):
        """(reason, message) of a step that cannot be accepted (PROBLEM_* code)."""
        if code == PROBLEM_STEP_SIZE:
            return ("step_size", f"the {self.params.integrator} integrator needed more than "
                    f"{self.params.max_substeps} steps (max_substeps) in this communication "
                    f"step to meet its tolerance {self.params.tolerance:g} (an impact or an "
                    "instability; raise solver.tolerance or split the communication step)")
        if code == PROBLEM_NON_FINITE:
            return ("non_finite", "the wheelset state became non-finite (numerical instability: "
                    "reduce the internal step)")
        if code == PROBLEM_PENETRATION:
            pen = self._summary[O_MAX_PENETRATION]
            return ("excessive_penetration", f"excessive penetration {pen * 1e3:.2f} mm > "
                    f"{self.params.max_penetration * 1e3:.2f} mm (impact or instability)")
        name = ("left", "right")[side] if side >= 0 else ""
        if code == PROBLEM_OFF_RAIL:
            offset = self._summary[O_RAIL_ON_WHEEL_LEFT + side]
            return ("derailment", f"derailment: the {name} wheel has dropped off its rail head "
                    f"inside the gauge (the rail head's centre lies {offset * 1e3:.1f} mm from "
                    f"its taping line, beyond the profile's field-side end at "
                    f"{self.setup.wheel_table[-1, T_LAT] * 1e3:.1f} mm)")
        if code == PROBLEM_AIRBORNE:
            height = flange_height(self.setup)
            gaps = self._summary[O_GAP_LEFT:O_GAP_RIGHT + 1]
            if min(gaps) > height:
                return ("derailment", "derailment: both wheels are more than the flange height "
                        f"({height * 1e3:.1f} mm) above their rails (gaps {gaps[0] * 1e3:.1f} and "
                        f"{gaps[1] * 1e3:.1f} mm): the flanges no longer guide the wheelset")
            return ("derailment", "derailment: both wheels have been off their rails for longer "
                    f"than {airborne_limit(self.setup) * 1e3:.0f} ms, the flight of a "
                    f"wheelset rising by the flange height ({height * 1e3:.1f} mm) under gravity "
                    "alone: the flanges no longer guide it")
        return ("derailment", f"derailment: the {name} wheel has climbed its rail (a loaded "
                "contact within 3 mm of the flange tip: risen by the flange height)")

    # -- outputs -------------------------------------------------------------------
    def outputs(self) -> WheelsetOutputs:
        """The outputs at the current state (derived quantities by the numba kernel
        `derived_outputs`; the arrays are fresh copies, safe to keep)."""
        c = self._contact.copy()
        d = np.empty(N_DERIVED)
        derived_outputs(self.state, c, self.params.axle_box_semi_spacing, d)
        st = self.state
        active = c[..., C_ACTIVE] > 0.5
        return WheelsetOutputs(
            time=self.time, distance=self.distance, position=st[0:3].copy(),
            orientation=st[3:6].copy(), velocity=st[6:9].copy(), angular_velocity=st[9:12].copy(),
            axle_box_position=d[D_BOX_POS:D_BOX_POS + 6].reshape(2, 3),
            axle_box_velocity=d[D_BOX_VEL:D_BOX_VEL + 6].reshape(2, 3),
            wheel_rail_force=d[D_WHEEL_RAIL:D_WHEEL_RAIL + 6].reshape(2, 3),
            lateral_force=d[D_Y:D_Y + 2], vertical_force=d[D_Q:D_Q + 2], derailment_quotient=d[D_YQ:D_YQ + 2],
            contact_count=active.sum(axis=1), contact_active=active,
            contact_y_wheel=c[..., C_S_WHEEL], contact_y_rail=c[..., C_U_RAIL],
            contact_position=c[..., C_X:C_Z + 1], contact_angle=c[..., C_ANGLE],
            rolling_radius=c[..., C_RADIUS], creepage_longitudinal=c[..., C_XI],
            creepage_lateral=c[..., C_ETA], creepage_spin=c[..., C_SPIN], normal_force=c[..., C_NORMAL],
            creep_force_longitudinal=c[..., C_CREEP_LONG], creep_force_lateral=c[..., C_CREEP_LAT],
            spin_moment=c[..., C_SPIN_MOMENT], semi_axis_a=c[..., C_A], semi_axis_b=c[..., C_B],
            point_lateral_force=d[D_PY:D_PY + 6].reshape(2, 3),
            point_vertical_force=d[D_PQ:D_PQ + 6].reshape(2, 3),
            point_derailment_quotient=d[D_PYQ:D_PYQ + 6].reshape(2, 3),
            wear_number=d[D_WEAR:D_WEAR + 6].reshape(2, 3), penetration=c[..., C_PENETRATION],
            elastic_energy=self.elastic_energy(),
            flange_climb_ratio=self.record[REC_CLIMB:REC_CLIMB + 2].copy(),
            flange_climb_time=self.record[REC_CLIMB_TIME:REC_CLIMB_TIME + 2].copy(),
            flange_climb_distance=self.record[REC_CLIMB_DISTANCE:REC_CLIMB_DISTANCE + 2].copy(),
            axle_sum_y_over_q=float(self.record[REC_AXLE_SUM]),
            weinstock_ratio=float(self.record[REC_WEINSTOCK]),
            airborne_time=float(self.record[REC_AIRBORNE]),
            lift_height=self.record[REC_LIFT_HEIGHT:REC_LIFT_HEIGHT + 2].copy(),
            wheel_lift=self._summary[:2] > 0.5,
            rhs_evaluations=self.rhs_evaluations)

    def mechanical_energy(self) -> float:
        """Kinetic + gravitational (track frame, no cant) + elastic contact energy (J),
        the lumped rail bodies' kinetic and spring energy included."""
        p, st = self.params, self.state
        kinetic = 0.5 * p.mass * (st[S_VX] ** 2 + st[S_VY] ** 2 + st[S_VZ] ** 2) \
            + 0.5 * p.inertia_roll * st[S_ROLL_RATE] ** 2 + 0.5 * p.inertia_yaw * st[S_YAW_RATE] ** 2 \
            + 0.5 * p.inertia_spin * st[S_SPIN_RATE] ** 2
        rails = 0.0
        if self.model[M_TRACK_MODEL] == TRACK_LUMPED:
            def matrix(values):
                lateral, vertical, roll, coupling = values
                return np.array([[lateral, 0.0, coupling], [0.0, vertical, 0.0],
                                 [coupling, 0.0, roll]])
            mass, stiffness = matrix(p.rail_mass), matrix(p.rail_stiffness)
            for side in range(2):
                q = st[S_RAIL + 3 * side:S_RAIL + 3 * side + 3]
                v = st[S_RAIL_RATE + 3 * side:S_RAIL_RATE + 3 * side + 3]
                rails += 0.5 * v @ mass @ v + 0.5 * q @ stiffness @ q
        self.rhs(self.state)
        return float(kinetic + rails + p.mass * GRAVITY * st[S_Z] + self.elastic_energy())

    def elastic_energy(self) -> float:
        """The elastic energy (J) stored in the contacts as the last evaluation left
        them (solver.dynamics.rhs.contact_elastic_energy: computed here, on
        demand, not in every right-hand side)."""
        p = self.params
        return float(contact_elastic_energy(self.setup.tables, self._contact, p.young, p.poisson,
                                            p.contact_model == "multipoint"))
