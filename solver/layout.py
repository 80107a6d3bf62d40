"""The layout of the flat arrays the numba kernels share: every index family.

The kernels exchange plain float64 (and a few int64) arrays; a named integer
constant gives the meaning of each entry, row or column. They are all defined
here, derived from one contact point count (MAX_POINTS), and every module
imports them from here. One prefix per array:

    S_     the state vector (positions, velocities)
    M_     the model's parameter vector
    C_     one contact point's results (rows of the contact array)
    PATCH_, HZ_   the normal-force layer's scratch rows of one wheel
    O_     the contact summary
    D_     the derived outputs (axle-box motion, Y, Q, per-point Y/Q and wear)
    U_     the input vector
    REC_   the output record of one step
    W_     the contact search's scratch rows;  TR_  the head row of its tracked minima
    P_     one contact point's geometry;  G_  the geometry parameters of a wheel-rail pair
    T_     the columns of the wheel and rail tables of the contact search
    TP_    the contact table's grid parameters;  B_  a table branch;  TROW_  a table row
    TT_    a segment of the track table
    KEY_   the search key of the contact-point buffers
    LOAD_, JAC_, ROS_MEMO_   the Rosenbrock method's per-point loads, Jacobian record, memo
    CLK_   the model clock;  SF_  the running-safety memory
    E_, SD_   the fast step's block of addresses;  I_  its ints;  FR_  its reals
"""

from typing import NamedTuple

import numpy as np

# The one count the layouts below derive from.
MAX_POINTS = 3          # contact points per wheel
MAX_MINIMA = 24         # local minima of the distance function examined per wheel

# ===========================================================================
# the state, the model's parameters, the inputs
# ===========================================================================

# State vector layout: the wheelset's positions and velocities, then the lumped
# rail bodies under the wheels (solver.dynamics.rhs: their displacements from
# the unloaded track, per rail (left, right) lateral (+y), vertical (+z) in m and
# roll about +x in rad, track frame, as the rail inputs U_RAIL_MOTION; then
# their rates). With the prescribed rails (M_TRACK_MODEL 0) the rail entries
# stay 0.
S_X, S_Y, S_Z, S_ROLL, S_YAW, S_SPIN_ANGLE = 0, 1, 2, 3, 4, 5
S_VX, S_VY, S_VZ, S_ROLL_RATE, S_YAW_RATE, S_SPIN_RATE = 6, 7, 8, 9, 10, 11
N_WHEELSET_STATE = 12
S_RAIL = N_WHEELSET_STATE          # (2, 3)
S_RAIL_RATE = S_RAIL + 6           # (2, 3)
N_STATE = S_RAIL_RATE + 6
# the positions (m, rad) among the state entries; the others are rates
STATE_IS_POSITION = tuple(j < S_VX or S_RAIL <= j < S_RAIL_RATE for j in range(N_STATE))

# Model parameter vector (numba side).
M_MASS, M_JX, M_JY, M_JZ = 0, 1, 2, 3
M_YOUNG, M_POISSON, M_FRICTION = 4, 5, 6
M_CREEP_MODEL = 7       # the creep model's registry id (solver.contact.creep.models)
M_CREEP_OPTIONS = 8     # (N_CREEP_OPTIONS,) its options, in its entry's order (unused: 0)
N_CREEP_OPTIONS = 5
M_CONTACT_DAMPING = M_CREEP_OPTIONS + N_CREEP_OPTIONS
M_MULTIPOINT = 14
M_BOX_SEMI_SPACING = 15
M_BOGIE = 16            # 1: the built-in suspension (solver.dynamics.suspension)
M_KX, M_KY, M_KZ, M_CX, M_CY, M_CZ = 17, 18, 19, 20, 21, 22
M_SUSPENDED_MASS = 23   # mass carried by this wheelset's primary suspension (kg)
M_BOX_Z_REF = 24        # rest height of the axle boxes for the built-in bogie (m)
M_SPEED = 25
M_GRAVITY = 26
# linear-study controls: creep coefficient overrides of Kalker's linear theory
# (N, N, N m, N m^2 per contact point; 0 = from Kalker's table), and switches
# (1 on, 0 off) for the roll-rate term of the creepages and the gyroscopic moments
M_F11, M_F22, M_F23, M_F33 = 27, 28, 29, 30
M_ROLL_RATE_CREEPAGE = 31
M_GYROSCOPIC = 32
# adaptive integrators (solver.dynamics.integrators, "rk23" / "rk45"): the local error
# tolerance (relative, see integrate.ERROR_SCALE) and the most steps, accepted
# or rejected, one host step may take
M_TOLERANCE = 33
M_MAX_STEPS = 34
# the built-in suspension's quarter vehicle (solver.dynamics.suspension): 1 for the
# frame on the track centreline (Wickens' single suspended wheelset), 0 for the frame
# that follows the wheelset laterally; the share of the suspended mass on the secondary
# suspension (the carbody's, 0..1), its centre of gravity and the frame's above the
# rail (m); the secondary's height above the rail (m), its roll (N m/rad) and lateral
# (N/m) stiffness per wheelset (0: rigid)
M_FRAME_ON_CENTRELINE = M_MAX_STEPS + 1
M_CARBODY_SHARE = M_FRAME_ON_CENTRELINE + 1
M_CARBODY_CG_HEIGHT = M_CARBODY_SHARE + 1
M_FRAME_CG_HEIGHT = M_CARBODY_CG_HEIGHT + 1
M_SECONDARY_HEIGHT = M_FRAME_CG_HEIGHT + 1
M_SECONDARY_ROLL_STIFFNESS = M_SECONDARY_HEIGHT + 1
M_SECONDARY_LATERAL_STIFFNESS = M_SECONDARY_ROLL_STIFFNESS + 1
# the track under the wheels (solver.dynamics.rhs): M_TRACK_MODEL 1 lumped rail
# bodies (TRACK_LUMPED, the default), 0 rails that move only as the rail inputs
# say (TRACK_PRESCRIBED: rigid while they are 0, a track model of the host's
# when it sets them); each rail body's mass matrix, its supports' stiffness and
# damping matrices in (lateral, vertical, roll) at the rail head's reference
# point, each as (lateral, vertical, roll, lateral-roll): kg, kg, kg m^2, kg m;
# N/m, N/m, N m/rad, N/rad; N s/m, N s/m, N m s/rad, N s/rad
M_TRACK_MODEL = M_SECONDARY_LATERAL_STIFFNESS + 1
M_RAIL_MASS = M_TRACK_MODEL + 1             # (4,)
M_RAIL_STIFFNESS = M_RAIL_MASS + 4          # (4,)
M_RAIL_DAMPING = M_RAIL_STIFFNESS + 4       # (4,)
# the normal contact's damping after Hunt & Crossley (1975): N = K delta^1.5 (1 +
# 3/2 alpha d(delta)/dt), alpha (s/m); solver.dynamics.rhs
M_HUNT_CROSSLEY = M_RAIL_DAMPING + 4
N_MODEL = M_HUNT_CROSSLEY + 1
TRACK_PRESCRIBED, TRACK_LUMPED = 0, 1

# Input vector of `WheelsetModel.advance_vector` (what `WheelsetInputs` holds, flat):
# per side (left, right) lateral, vertical, roll of the rail, then their rates,
# then the axle-box force and moment (track frame), the axle torque, and the
# track curvature and cant angle overriding the track's (NaN: from the track).
U_RAIL_MOTION, U_RAIL_VELOCITY, U_BOX_FORCE, U_BOX_MOMENT = 0, 6, 12, 18   # (2, 3) each
U_TORQUE, U_CURVATURE, U_CANT = 24, 25, 26
N_INPUT = 27
INPUT_VECTOR_NAMES = tuple(
    [f"rail motion ({sd} {q})" for sd in ("left", "right") for q in ("lateral", "vertical", "roll")]
    + [f"rail velocity ({sd} {q})" for sd in ("left", "right") for q in ("lateral", "vertical", "roll")]
    + [f"axle-box force ({sd} {a})" for sd in ("left", "right") for a in "xyz"]
    + [f"axle-box moment ({sd} {a})" for sd in ("left", "right") for a in "xyz"]
    + ["axle torque", "curvature", "cant angle"])

# ===========================================================================
# the track
# ===========================================================================

# Rows of Track.segment_table(), read by the numba kernel track_state_kernel.
TT_S0, TT_LENGTH, TT_K0, TT_KR, TT_E0, TT_ER = 0, 1, 2, 3, 4, 5


# ===========================================================================
# the contact geometry
# ===========================================================================

# Rows of the search's scratch array `work` (N_WORK_ROWS, n_wheel): the distance
# function on the wheel grid (rows 0-4, see wheel_distance_function), then the
# search's short lists in the first MAX_MINIMA entries of their rows, so that a
# search allocates nothing (its 16 small arrays cost about 0.1 us per search).
W_MINIMA_POS = 5        # the minima found: fractional wheel grid index
W_MINIMA_GAP = 6        # their distance (m)
W_WINDOWS = 7           # grid indices of the coarse minima (whole numbers, as floats)
W_ACCEPTED_POS = 8      # grid index of the contact points accepted so far (MAX_POINTS)
# The tracked minima of wheelset_contact_tracked, per wheel (row + side, side 0
# left, 1 right): a head row (entries TR_*) and the minima's fractional grid
# indices (the first TR_COUNT entries of the positions row).
W_TRACK_HEAD = 9        # rows 9, 10
W_TRACK_POS = 11        # rows 11, 12
# Scratch of the normal-force layer for one wheel at a time (solver.dynamics:
# the points in order along the profile and their Hertz results, fields of
# MAX_POINTS entries each, PATCH_*).
W_PATCH = 13            # rows 13, 14
# the rails under the wheels as the contact sees them (solver.dynamics.rhs): the
# rail inputs plus the lumped rail bodies' displacements, (2, 3) motion then
# (2, 3) velocity in the row's first 12 entries
W_RAIL = 15
N_WORK_ROWS = 16

# Entries of a tracked-minima head row.
TR_COUNT = 0            # number of tracked minima (0: none; the next search scans)
TR_POSE = 1             # y, z, roll, yaw of the last full scan (side-local)
TR_RAIL = 5             # lateral, vertical, roll of the rail at the last full scan
TR_SCANS = 8            # full scans run by wheelset_contact_tracked (a counter)
TR_TRACKED = 9          # searches answered by the tracked minima (a counter)
TR_CLEARANCE = 10       # lowest distance of the scan's shoulders (m, _shoulder_clearance)
TR_RATE_LENGTH = 11     # bound on the change of a distance sample per m of lateral motion
TR_RATE_ANGLE = 12      # the same per rad of roll or yaw (m/rad)
TR_CANDIDATES = 13      # penetrating minima of the last full scan (more at a tracked pose: scan)
N_TRACK_HEAD = 14

# Columns of the per-point output array of the kernel.
P_S_WHEEL = 0       # lateral coordinate on the wheel profile s (m)
P_U_RAIL = 1        # lateral coordinate on the rail profile u (m)
P_X = 2             # contact point position in the track frame, side-local (m)
P_Y = 3
P_Z = 4
P_GAP = 5           # distance along the rail's vertical axis (m), negative = penetration
P_TAN_CONTACT = 6   # tangent of the contact angle in the track frame
P_WHEEL_SLOPE = 7   # dF/ds at the point
P_WHEEL_F2 = 8      # d2F/ds2 at the point (1/m)
P_RAIL_SLOPE = 9    # dz/du in the rail frame
P_RAIL_Z2 = 10      # d2z/du2 in the rail frame (1/m)
P_RADIUS = 11       # wheel radius at the point (m)
P_SADDLE = 12       # the highest distance between this point and the next contact point
                    # along the wheel profile (+s) (m); +inf for the last point (fill_saddles)
P_SADDLE_POS = 13   # its fractional wheel grid index (NaN with P_SADDLE = +inf)
N_POINT_FIELDS = 14

# Entries of the geometry parameter vector of the kernel.
G_WHEEL_S0 = 0          # first wheel grid abscissa (m)
G_WHEEL_DS = 1          # wheel grid step (m)
G_RAIL_U0 = 2
G_RAIL_DU = 3
G_TAPING_AXIAL = 4      # axial position of the taping line from the wheelset centre (m)
G_NOMINAL_RADIUS = 5
G_RAIL_CENTRE_Y = 6     # lateral position of the rail-head centreline (m, side-local)
G_INCLINATION = 7       # rail inclination angle (rad)
G_E_D = 8
G_E_K = 9
G_COS_INCLINATION = 10  # cos, sin, tan of G_INCLINATION (the rail frame of a rail that does not roll)
G_SIN_INCLINATION = 11
G_TAN_INCLINATION = 12
G_RAIL_INV_DU = 13      # 1 / G_RAIL_DU (the distance function's rail lookup multiplies by it)
N_GEOMETRY_PARAMS = 14

# Wheel and rail tables: columns lateral, height, slope, second derivative.
T_LAT, T_H, T_SLOPE, T_D2 = 0, 1, 2, 3


# Fields of a branch in the node table.
B_S, B_GAP, B_HUMP = 0, 1, 2   # wheel coordinate (m), distance (m), highest distance up to the next branch
N_BRANCH_FIELDS = 3

# Entries of the table's parameter vector.
TP_LAT0, TP_DLAT, TP_ROLL0, TP_DROLL, TP_YAW0, TP_DYAW = 0, 1, 2, 3, 4, 5
TP_ZETA_REF = 6           # height of the wheelset centre above the rail origin (rail frame) at build
N_TABLE_PARAMS = 7

# Columns of the table search's per-branch scratch rows.
TROW_POS, TROW_GAP, TROW_U, TROW_X, TROW_Y, TROW_Z, TROW_HUMP = 0, 1, 2, 3, 4, 5, 6
N_SCRATCH = 7


# ===========================================================================
# the contact results, the derived outputs, the output record
# ===========================================================================

# Per-contact-point result fields (numba side): array (2, MAX_POINTS, N_CONTACT).
C_ACTIVE = 0
C_S_WHEEL = 1
C_U_RAIL = 2
C_X, C_Y, C_Z = 3, 4, 5
C_ANGLE = 6
C_RADIUS = 7
C_GAP = 8
C_PENETRATION = 9
C_NORMAL = 10
C_CREEP_LONG, C_CREEP_LAT, C_SPIN_MOMENT = 11, 12, 13
C_XI, C_ETA, C_SPIN = 14, 15, 16
C_A, C_B = 17, 18
C_FX, C_FY, C_FZ = 19, 20, 21        # total force of the rail on the wheel, track frame
C_ELASTIC_NORMAL = 22                 # the normal force's elastic part (N), before the contact damping
C_HERTZ_FLAG = 23
N_CONTACT = 24

# The normal-force layer's scratch per wheel (rows geometry.W_PATCH, W_PATCH + 1
# of the search's work array; each field MAX_POINTS entries): the points in
# order along the profile (PATCH_*, by rank), and each point's Hertz contact
# by its own penetration and its share of the load (HZ_*, by point index).
PATCH_DEPTH, PATCH_SADDLE, PATCH_STIFFNESS, PATCH_FORCE, PATCH_SHARED, PATCH_INDEX = 0, 1, 2, 3, 4, 5
PATCH_OWN = 6           # the point's own part of its force, below its saddles (N)
PATCH_ANGLE = 7         # the contact angle drawn towards its region's (rhs.normal_loads)
PATCH_X, PATCH_Y, PATCH_Z = 8, 9, 10    # the point's place drawn towards its region's (track frame)
HZ_FORCE, HZ_A, HZ_B, HZ_FLAG, HZ_STIFFNESS = 0, 1, 2, 3, 4
HZ_A_SUM, HZ_B_SUM, HZ_RANK = 5, 6, 7    # curvature sums A, B; the rank along the profile
HZ_SHIFT, HZ_TURN = 8, 9    # the patch's centre from the point (m along the tangent) and the
                            # rail's turning there (rad): contact.normal.patch_curvature
# (the fields of MAX_POINTS entries fit easily in a work row: n_wheel columns)

# Summary outputs of the kernel.
O_LIFT_LEFT, O_LIFT_RIGHT = 0, 1
O_MAX_PENETRATION = 2
O_GAP_LEFT, O_GAP_RIGHT = 3, 4     # smallest wheel-rail distance per wheel (m)
# where the rail's head centre lies under each wheel: its lateral coordinate on the
# wheel profile (s from the taping line, + field side; m), along the axle
O_RAIL_ON_WHEEL_LEFT, O_RAIL_ON_WHEEL_RIGHT = 5, 6
N_SUMMARY = 7


# Layout of the derived-output vector of `derived_outputs`.
D_BOX_POS, D_BOX_VEL, D_WHEEL_RAIL = 0, 6, 12      # (2, 3) each
D_Y, D_Q, D_YQ = 18, 20, 22                        # (2,) each
D_PY = 24                                          # (2, MAX_POINTS) each: Y, Q, Y/Q, wear
D_PQ = D_PY + 2 * MAX_POINTS
D_PYQ = D_PQ + 2 * MAX_POINTS
D_WEAR = D_PYQ + 2 * MAX_POINTS
N_DERIVED = D_WEAR + 2 * MAX_POINTS


# Output record (`WheelsetModel.record`, rebuilt by `fill_record` after every
# accepted step): time and distance, the state, the derived outputs, the contact
# rows (2, MAX_POINTS, N_CONTACT; zero for inactive points), the active points,
# the lift flag and the wear number per wheel. A host that reads many outputs every step (the
# FMU) takes them from this one array instead of building `WheelsetOutputs`.
REC_TIME, REC_DISTANCE = 0, 1
REC_STATE = 2
REC_DERIVED = REC_STATE + N_STATE
REC_CONTACT = REC_DERIVED + N_DERIVED
REC_COUNT = REC_CONTACT + 2 * MAX_POINTS * N_CONTACT     # (2,)
REC_LIFT = REC_COUNT + 2                                      # (2,) 1.0 = lifted
REC_WEAR = REC_LIFT + 2                                       # (2,) wear number T gamma per wheel (N)
REC_LIFT_HEIGHT = REC_WEAR + 2                                # (2,) a lifted wheel's height above its rail (m)
# running safety (solver/dynamics/derailment.py), written by the step's bookkeeping
# (solver/model/fast_step.py update_safety): per wheel the flange-climb ratio (flange
# Y/Q over Nadal's limit), how long (s) and how far (m) it has been above 1;
# Weinstock's axle sum of |Y/Q| and its ratio to Weinstock's limit; how long
# both wheels have been off the rails (s); the flange-climb warning (1.0: a
# ratio above 1)
REC_CLIMB = REC_LIFT_HEIGHT + 2
REC_CLIMB_TIME = REC_CLIMB + 2
REC_CLIMB_DISTANCE = REC_CLIMB_TIME + 2
REC_AXLE_SUM = REC_CLIMB_DISTANCE + 2
REC_WEINSTOCK = REC_AXLE_SUM + 1
REC_AIRBORNE = REC_WEINSTOCK + 1
REC_CLIMB_WARNING = REC_AIRBORNE + 1
# the steps the adaptive integrators accepted at their shortest step with the
# error test failed, since the start (solver.dynamics.integrators; counted by the
# step's bookkeeping)
REC_FORCED_STEPS = REC_CLIMB_WARNING + 1
N_RECORD = REC_FORCED_STEPS + 1


# ===========================================================================
# the integrators
# ===========================================================================

# The search key (StepData.search_key): the pose and rail motion of the full
# contact search whose points are in the contact buffers, so that the next full
# search at the bitwise same pose and rail motion (the end-of-step evaluation
# for the outputs, then the first stage of the next step) reuses them.
KEY_VALID = 0              # 1.0: the points in the buffers belong to the key below
KEY_POSE = 1               # y, z, roll, yaw (S_Y, S_Z, S_ROLL, S_YAW)
KEY_RAIL = 5               # rail motion (2, 3), row-major
N_SEARCH_KEY = 11
# The kept Jacobian and step history (StepData.jacobian, flat; part of the
# model's state: the FMU state carries it, so a restored instance continues bit
# for bit): the Jacobian's age (s of simulated time since it was computed; -1:
# none or due), the step the error control proposed for the next host step, the
# state at which the last host step ended (both serve the next host step only
# from that very state: after a discarded or undone step, or a state set from
# outside, the first step is the largest and a new Jacobian is computed), the
# contact points per wheel, the normal force, angle and traction ratio of each
# point when the Jacobian was computed (LOAD_*), and the matrix (row-major).
# A new Jacobian is computed
#   - when it is older than JACOBIAN_MAX_AGE;
#   - when a wheel's number of contact points changed (a point born or lost
#     changes the contact stiffness by a factor of order 2);
#   - when a point's Hertz stiffness (proportional to N^(1/3)) moved by more
#     than JACOBIAN_STIFFNESS_CHANGE of the stiffest point's, its contact angle
#     by more than JACOBIAN_ANGLE_CHANGE, or its traction ratio (how far into
#     saturation its creep is: the slope of the creep damping) by more than
#     JACOBIAN_TRACTION_CHANGE;
#   - after a step whose error asked for a shorter next step, and after a
#     rejected step if it was not computed at that step's start.
# The stiff modes are those of the contact; a Jacobian that no longer holds
# them leaves them to an explicit-like treatment, unstable at these steps.
# Measured on the hard-flange case (100 kN lateral axle-box step load at exactly
# 50 kN per box, tolerances 1e-3 ... 1e-6): the age and count rules alone let
# the wheelset bounce on the flange (0.2-0.5 mm) or end in a derailment at some
# tolerances; with all the rules it settled at every tolerance, with 1 ms host
# steps. (That run's end is not a function of the integrator's accuracy alone:
# the converged RK4 itself bounces or derails for some loads within +-500 N,
# tests/test_adaptive_integrator.py.)
LOAD_NORMAL, LOAD_ANGLE, LOAD_TRACTION = 0, 1, 2     # N (N), angle (rad), |creep force| / N
N_LOAD = 3
JAC_AGE = 0
JAC_NEXT_STEP = 1               # s, the step the error control proposed for the next host step
JAC_KEY = 2
JAC_COUNTS = JAC_KEY + N_STATE
JAC_CONTACT = JAC_COUNTS + 2                # (2, MAX_POINTS, N_LOAD): LOAD_*
JAC_MATRIX = JAC_CONTACT + 2 * MAX_POINTS * N_LOAD
N_JACOBIAN = JAC_MATRIX + N_STATE * N_STATE
# What the Rosenbrock integrator remembers from one host step to the next besides
# its Jacobian (StepData.rosenbrock_memo; scratch, not part of a saved state):
# - the LU factors of W (ROS_MEMO_W, its row exchanges ROS_MEMO_W_PIVOTS) with the
#   dt (ROS_MEMO_W_DT; -1: none) and the Jacobian they were made of: a host step
#   that starts with the same Jacobian and step (the common case in 1 ms
#   communication steps) does not factor W again;
# - the derivative at the end of the last host step (ROS_MEMO_END_*) with all it
#   depends on (state, track point, inputs, model; the contact points by the
#   search key): the next host step that starts there takes it as its f(y0)
#   instead of evaluating it again (about 1 us). Both are bit-identical reuses.
ROS_MEMO_W_DT = 0
ROS_MEMO_W = 1                                          # (N_STATE, N_STATE) W's LU factors
ROS_MEMO_W_PIVOTS = ROS_MEMO_W + N_STATE * N_STATE      # (N_STATE,) the row exchanges
ROS_MEMO_W_JACOBIAN = ROS_MEMO_W_PIVOTS + N_STATE
ROS_MEMO_END_VALID = ROS_MEMO_W_JACOBIAN + N_STATE * N_STATE   # 1.0: the END_* rows hold
ROS_MEMO_END_F = ROS_MEMO_END_VALID + 1
ROS_MEMO_END_STATE = ROS_MEMO_END_F + N_STATE
ROS_MEMO_END_TRACK = ROS_MEMO_END_STATE + N_STATE       # curvature, its rate, cant
ROS_MEMO_END_INPUTS = ROS_MEMO_END_TRACK + 3
ROS_MEMO_END_MODEL = ROS_MEMO_END_INPUTS + N_INPUT
# scratch of one host step (kept here rather than allocated in every host step):
ROS_MEMO_RHS = ROS_MEMO_END_MODEL + N_MODEL              # (N_STATE,) a stage's right-hand side
ROS_MEMO_LOADS = ROS_MEMO_RHS + N_STATE                  # (2, MAX_POINTS, N_LOAD) LOAD_*
ROS_MEMO_START_POINTS = ROS_MEMO_LOADS + 2 * MAX_POINTS * N_LOAD   # the step start's points,
ROS_MEMO_START_KEY = ROS_MEMO_START_POINTS + 2 * MAX_POINTS * N_POINT_FIELDS  # their key
ROS_MEMO_START_COUNTS = ROS_MEMO_START_KEY + N_SEARCH_KEY                    # and counts (2)
N_ROS_MEMO = ROS_MEMO_START_COUNTS + 2


# ===========================================================================
# the model's clock and running-safety memory
# ===========================================================================

# WheelsetModel._clock (float64): the model's scalars that both steps update
CLK_TIME, CLK_DISTANCE, CLK_INTERNAL_STEP, CLK_BEFORE_VALID, CLK_BEFORE_TIME, CLK_BEFORE_DISTANCE = range(6)
N_CLOCK = 6
# WheelsetModel._rhs_count (int64): RHS evaluations, and their number before the
# last step; the forced steps (REC_FORCED_STEPS), and their number before it
N_RHS_COUNT = 4
RC_RHS, RC_RHS_BEFORE, RC_FORCED, RC_FORCED_BEFORE = range(N_RHS_COUNT)
# StepData.step_stats (float64): what the integrator of one host step reports
# besides its RHS count: the steps it accepted at its shortest step with the
# error test failed, and the largest scaled error (relative to the tolerance)
# among them
STAT_FORCED, STAT_FORCED_ERROR = 0, 1
N_STEP_STATS = 2

# WheelsetModel._safety (float64): the running-safety memory of the model (update_safety)
SF_RATIO = 0            # (2,) flange-climb ratio per wheel (flange Y/Q over Nadal's limit)
SF_CLIMB_SINCE = 2      # (2,) time (s) since which the ratio has been above 1 (NEVER: not)
SF_CLIMB_FROM = 4       # (2,) the distance (m) at that time
SF_AIRBORNE_SINCE = 6   # time (s) since which both wheels have been off their rails (NEVER: not)
N_SAFETY = 7


# ===========================================================================
# the fast step's block of addresses
# ===========================================================================

# The compiled step of solver.model.fast_step works on a block of int64 rows, one
# per array: its address, then its shape (up to 5 axes).
ENTRY = 6

# ints[]: the FMU's layout, StepData.integrator_id, and what a step the fast step
# hands to the Python step leaves it (I_HANDED 1: the model as core_step left it,
# its outcome in I_HANDED_* and FR_HANDED_*, for the step at FR_HANDED_T of FR_HANDED_H)
(I_HANDED, I_N_INPUTS, I_C_SLOT, I_DC_SLOT, I_LIFT, I_STATUS, I_INTEGRATOR_ID,
 I_MAX_SUBSTEPS, I_HANDED_CODE, I_HANDED_WHERE, I_HANDED_RHS) = (0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12)
N_INTS = 13
# reals[]: StepData's floats, the model's constants, the input map's rail distance
(FR_RAIL_DISTANCE, FR_TRACK_LENGTH, FR_MAX_PENETRATION, FR_TREAD_END, FR_FLANGE_TIP, FR_SPEED,
 FR_FRICTION, FR_FLANGE_PASSED, FR_CROSS_RAIL_DISTANCE, FR_HANDED_T, FR_HANDED_H,
 FR_HANDED_NEEDED) = range(12)
N_REALS = 12

# The FMU side's and the model's own arrays, in block order.
FMU_ARRAYS = (
    ("values", np.float64, 1),          # the FMU's value buffer (value reference order)
    ("input_lo", np.float64, 1), ("input_hi", np.float64, 1),     # declared input ranges
    ("output_lo", np.float64, 1), ("output_hi", np.float64, 1),   # declared output ranges
    ("slave_time", np.float64, 1),      # (1,): the slave's communication point
    ("matrix", np.float64, 2), ("offset", np.float64, 1),         # the input map
    ("record_index", np.int64, 1),      # output slot -> record index
    ("ints", np.int64, 1),              # I_*
    ("reals", np.float64, 1),           # FR_*
    ("core_u", np.float64, 1),          # scratch: the core's input vector
    ("y_new", np.float64, 1),           # scratch: the outputs of the step
    ("state", np.float64, 1), ("clock", np.float64, 1), ("rhs_count", np.int64, 1),
    ("safety_before", np.float64, 1), ("safety", np.float64, 1),
    ("u", np.float64, 1), ("u_before", np.float64, 1),
    # scratch: what the step may change, saved at its start (restored unless accepted)
    ("keep_state", np.float64, 1), ("keep_contact", np.float64, 3),
    ("keep_summary", np.float64, 1), ("keep_record", np.float64, 1),
    ("keep_derived", np.float64, 1), ("keep_clock", np.float64, 1),
    ("keep_rhs_count", np.int64, 1), ("keep_safety", np.float64, 1),
    # the value references of the FMU's inputs and outputs (where they are in
    # `values`), and a scratch for the inputs gathered from it
    ("input_vrs", np.int64, 1), ("output_vrs", np.int64, 1), ("fmu_u", np.float64, 1),
    # scratch: the model's inputs and its inputs before, saved at the step's start
    ("keep_u", np.float64, 1), ("keep_u_before", np.float64, 1),
)
(E_VALUES, E_INPUT_LO, E_INPUT_HI, E_OUTPUT_LO, E_OUTPUT_HI, E_SLAVE_TIME, E_MATRIX, E_OFFSET,
 E_RECORD_INDEX, E_INTS, E_REALS, E_CORE_U, E_Y_NEW, E_STATE, E_CLOCK, E_RHS_COUNT,
 E_SAFETY_BEFORE, E_SAFETY, E_U, E_U_BEFORE, E_KEEP_STATE, E_KEEP_CONTACT,
 E_KEEP_SUMMARY, E_KEEP_RECORD, E_KEEP_DERIVED, E_KEEP_CLOCK, E_KEEP_RHS_COUNT,
 E_KEEP_SAFETY, E_INPUT_VRS, E_OUTPUT_VRS, E_FMU_U, E_KEEP_U, E_KEEP_U_BEFORE) = range(
    len(FMU_ARRAYS))
# the entries of FMU_ARRAYS that the core's own step (core_step) uses
CORE_ARRAYS = ("state", "clock", "rhs_count", "safety_before", "safety", "u", "u_before")


class StepDataField(NamedTuple):
    """One field of solver.dynamics.integrators.step.StepData."""

    name: str
    dtype: type      # an array's numpy dtype, or float / int for a scalar
    ndim: int        # an array's number of axes; 0 for a scalar
    slot: int        # a scalar's entry in the fast step's reals (float, FR_*) or ints (int, I_*)
    meaning: str


def _array(name, dtype, ndim, meaning):
    return StepDataField(name, dtype, ndim, -1, meaning)


# The one specification of what advance_kernel works on besides the state, the
# step and the inputs: StepData (solver.dynamics.integrators.step), the fast
# step's block entries after FMU_ARRAYS (E_STEP_DATA + i) and its unpacking of
# them (solver.model.fast_step) are all made from it.
STEP_DATA_FIELDS = (
    _array("track_table", np.float64, 2, "Track.segment_table() (rows TT_*)"),
    StepDataField("rail_distance", float, 0, FR_RAIL_DISTANCE, "m, between the rail centres"),
    StepDataField("track_length", float, 0, FR_TRACK_LENGTH, "m (Track.length)"),
    _array("wheel_table", np.float64, 2, "ContactTables: the wheel table (columns T_*)"),
    _array("rail_table", np.float64, 2, "ContactTables: the rail table (columns T_*)"),
    _array("geometry_params", np.float64, 1, "ContactTables: the geometry parameters (G_*)"),
    _array("model", np.float64, 1, "the model's parameter vector (M_*)"),
    StepDataField("integrator_id", int, 0, I_INTEGRATOR_ID, "the integrator's registry id"),
    StepDataField("max_penetration", float, 0, FR_MAX_PENETRATION, "StepLimits: m"),
    StepDataField("tread_end", float, 0, FR_TREAD_END, "StepLimits: m"),
    StepDataField("flange_tip", float, 0, FR_FLANGE_TIP, "StepLimits: m"),
    _array("work", np.float64, 2, "ContactBuffers: the search's scratch (rows W_*)"),
    _array("points", np.float64, 3, "ContactBuffers: the points found (2, MAX_POINTS, P_*)"),
    _array("counts", np.int64, 1, "ContactBuffers: points per wheel"),
    _array("contact", np.float64, 3, "ContactResults: the contact rows (2, MAX_POINTS, C_*)"),
    _array("summary", np.float64, 1, "ContactResults: the summary (O_*)"),
    _array("stages", np.float64, 2, "(N_STAGE_ROWS, N_STATE): the stages k1.. and the stage state"),
    _array("saved_state", np.float64, 1, "the state before the step"),
    _array("saved_contact", np.float64, 3, "the contact rows before the step"),
    _array("saved_summary", np.float64, 1, "the summary before the step"),
    _array("derived", np.float64, 1, "(N_DERIVED,) scratch of fill_record"),
    _array("record", np.float64, 1, "(N_RECORD,) the output record, rebuilt after an accepted step"),
    _array("table_params", np.float64, 1, "TableArrays: grid parameters (TP_*; empty: online search)"),
    _array("table_flags", np.int8, 3, "TableArrays: cell flags"),
    _array("table_nodes", np.float64, 5, "TableArrays: node branches (B_*)"),
    _array("table_rows", np.float64, 2, "TableScratch: rows (TROW_*)"),
    _array("table_index", np.int64, 1, "TableScratch: index"),
    _array("search_key", np.float64, 1, "(N_SEARCH_KEY,) KEY_*: pose and rail motion of `points`"),
    _array("jacobian", np.float64, 1, "(N_JACOBIAN,) JAC_*: the Rosenbrock method's kept Jacobian"),
    _array("rosenbrock_memo", np.float64, 1, "(N_ROS_MEMO,) ROS_MEMO_*: its kept W^-1 and end derivative"),
    _array("step_stats", np.float64, 1, "(N_STEP_STATS,) STAT_*: the host step's forced steps"),
)
E_STEP_DATA = len(FMU_ARRAYS)
STEP_DATA_ENTRY = {f.name: E_STEP_DATA + i for i, f in enumerate(STEP_DATA_FIELDS)}
SD_CONTACT, SD_SUMMARY, SD_DERIVED, SD_RECORD = (STEP_DATA_ENTRY["contact"], STEP_DATA_ENTRY["summary"],
                                                 STEP_DATA_ENTRY["derived"], STEP_DATA_ENTRY["record"])
SD_MODEL, SD_WHEEL_TABLE = STEP_DATA_ENTRY["model"], STEP_DATA_ENTRY["wheel_table"]
SD_STEP_STATS = STEP_DATA_ENTRY["step_stats"]
N_ENTRIES = E_STEP_DATA + len(STEP_DATA_FIELDS)
# arrays the step only reads, which may be read-only (the contact table that the
# models of one set-up share, solver.contact.geometry.table.shared_contact_table)
READ_ONLY = frozenset(("input_lo", "input_hi", "output_lo", "output_hi", "matrix", "offset",
                       "record_index", "table_params", "table_flags", "table_nodes"))
