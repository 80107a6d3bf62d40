"""The vehicle's bodies as one step function: the carbody, the bogie frames,
the primary and secondary suspensions and the track they run on
(bodies.VehicleModel, curve_layout.CurveLayout), advanced over one
communication step against the four wheelsets' axle-box kinematics, giving
the axle-box forces for the wheelsets.

This is the one implementation of the master's side of the coupling: the
project's master (cosim.vehicle.master.VehicleCosim) calls `bodies_step` in
Python, the vehicle-bodies FMU (fmu_wheelset/vehicle_fmu) calls the very same
numba function from C through a cfunc, on arrays of the same layout.

Arrays
------
``io`` (N_IO floats, the exchanged values; the vehicle-bodies FMU's value
references 0..N_IO-1 are these entries):
  IO_KINEMATICS (4 x 12) each wheelset's axle-box kinematics, in
      cosim.vehicle.fmu_wheelsets.KINEMATICS_NAMES order (left position xyz,
      left velocity xyz, right position xyz, right velocity xyz), track frame;
  IO_BOX_FORCE (4 x 6) the force of the primary suspension ON each wheelset at
      its left and right axle box (x y z), held over the wheelsets' next step;
  IO_CURVATURE, IO_CANT (4) the track's curvature (1/m) and cant angle (rad)
      at each wheelset at the time of those forces;
  IO_BODIES (18) carbody, leading and trailing bogie frame displacements
      (x y z m, roll pitch yaw rad).
``work`` (N_WORK floats): the set-up (matrices, the layout, the scheme) that
`set_up` writes once, and the state that `bodies_step` updates.

Coupling schemes (`SCHEMES`; the module docstring of cosim.vehicle.master
derives the interface-model coupling):
  0 "gauss-seidel": the bodies step first from the wheelsets' kinematics at
      t_n, then the wheelsets step over [t_n, t_n + h] with the forces this
      step returned (a master that steps the bodies before the wheelsets and
      passes the forces on at once: the project's master, `interface`).
  1 "jacobi": every FMU steps from the values of t_n and the values are
      exchanged after all have stepped (libcosim's and Ecos's fixed-step
      algorithms). The forces this step returns are then used by the
      wheelsets over the NEXT step [t_n + h, t_n + 2h]: the bodies run one
      step ahead. From the wheelsets' kinematics at t_n and the forces they
      receive over [t_n, t_n + h] (this FMU's previous output) the interface
      models predict the wheelsets at t_n + h (constant acceleration: the
      forces besides the suspension estimated from the last step, as in
      gauss-seidel), and the bodies and interface models are integrated over
      [t_n + h, t_n + 2h] as in gauss-seidel; both sides receive the same
      impulse, so momentum is exchanged exactly.
  2 "explicit": gauss-seidel order, the wheelsets receive the suspension
      forces of the start of the step (no interface model; for comparison).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .bodies import BOGIES, CARBODY, N_DOF, WHEELSETS, VehicleModel
from .curve_layout import CurveLayout
from .parameters import GRAVITY, VehicleError

SCHEMES = ("gauss-seidel", "jacobi", "explicit")
GAUSS_SEIDEL, JACOBI, EXPLICIT = 0, 1, 2
N_WHEELSETS = 4
N_KINEMATICS = 12
N_ELEMENTS = 12          # 4 secondary (2 bogies x 2 sides), 8 primary (4 wheelsets x 2 sides)
N_PRIMARY_ROWS = 24      # 3 x 8 primary elements (after the 4 secondary ones)

IO_KINEMATICS = 0
IO_BOX_FORCE = IO_KINEMATICS + N_WHEELSETS * N_KINEMATICS
IO_CURVATURE = IO_BOX_FORCE + N_WHEELSETS * 6
IO_CANT = IO_CURVATURE + N_WHEELSETS
IO_BODIES = IO_CANT + N_WHEELSETS
N_IO = IO_BODIES + 18


def _layout(fields):
    offsets, at = {}, 0
    for name, size in fields:
        offsets[name] = at
        at += size
    return offsets, at


_W, N_WORK = _layout((
    ("scalars", 16),
    ("mass", N_DOF), ("K", N_DOF * N_DOF), ("C", N_DOF * N_DOF), ("S_inv", N_DOF * N_DOF),
    ("D", 3 * N_ELEMENTS * N_DOF), ("k", 3 * N_ELEMENTS), ("c", 3 * N_ELEMENTS),
    ("preload", 3 * N_ELEMENTS), ("static_force", N_DOF),
    ("elements", N_ELEMENTS * 5), ("bodies", 3 * 4), ("wheelset_positions", N_WHEELSETS),
    ("position_map", 6 * 5), ("force_map", 6 * 5), ("reference", N_WHEELSETS * 5),
    ("q", N_DOF), ("v", N_DOF), ("other", N_DOF), ("q1", N_DOF), ("v1", N_DOF),
    ("v_prev", N_WHEELSETS * 5), ("applied", N_WHEELSETS * 5), ("box", N_WHEELSETS * 6),
    ("f0", N_DOF), ("f1", N_DOF), ("g0", 3 * N_ELEMENTS), ("g1", 3 * N_ELEMENTS),
    ("gr0", 3 * N_ELEMENTS), ("gr1", 3 * N_ELEMENTS), ("wheelsets_now", N_WHEELSETS * 10),
    ("applied_now", N_WHEELSETS * 5), ("DT", N_DOF * 3 * N_ELEMENTS), ("ends", 4 * 3 * N_ELEMENTS),
    ("shear_couple", N_DOF * 3 * N_ELEMENTS),
))
W_SCALARS = _W["scalars"]
# the scalars
SC_SCHEME, SC_SPEED, SC_LEADING, SC_CURVATURE, SC_CANT, SC_STRAIGHT, SC_TRANSITION = range(7)
SC_PUSH_WHEELSET, SC_PUSH_FORCE, SC_PUSH_TIME, SC_STEPS, SC_RATE_STEP, SC_TIME, SC_START = range(7, 14)
W_MASS, W_K, W_C, W_S_INV = _W["mass"], _W["K"], _W["C"], _W["S_inv"]
W_D, W_KE, W_CE, W_PRELOAD, W_STATIC = _W["D"], _W["k"], _W["c"], _W["preload"], _W["static_force"]
W_ELEMENTS, W_BODIES, W_WPOS = _W["elements"], _W["bodies"], _W["wheelset_positions"]
W_POSMAP, W_FORCEMAP, W_REFERENCE = _W["position_map"], _W["force_map"], _W["reference"]
W_Q, W_V, W_OTHER, W_Q1, W_V1 = _W["q"], _W["v"], _W["other"], _W["q1"], _W["v1"]
W_VPREV, W_APPLIED, W_BOX = _W["v_prev"], _W["applied"], _W["box"]
W_F0, W_F1, W_G0, W_G1, W_GR0, W_GR1 = _W["f0"], _W["f1"], _W["g0"], _W["g1"], _W["gr0"], _W["gr1"]
W_NOW, W_APPLIED_NOW = _W["wheelsets_now"], _W["applied_now"]
W_DT, W_ENDS, W_SHEAR = _W["DT"], _W["ends"], _W["shear_couple"]

# status codes of bodies_step
STEP_OK, STEP_BAD_INPUT, STEP_BAD_TIME = 0, 1, 2
# 4-point Gauss-Legendre rule (the offset of the curved centreline)
_GAUSS_NODES, _GAUSS_WEIGHTS = np.polynomial.legendre.leggauss(4)


def position_map(semi_spacing):
    """(6, 5): wheelset (x, y, z, roll, yaw) = box positions (left xyz, right xyz) @ map."""
    b2 = 2.0 * semi_spacing
    m = np.zeros((6, 5))
    m[0, 0] = m[3, 0] = 0.5
    m[1, 1] = m[4, 1] = 0.5
    m[2, 2] = m[5, 2] = 0.5
    m[2, 3], m[5, 3] = 1.0 / b2, -1.0 / b2
    m[0, 4], m[3, 4] = -1.0 / b2, 1.0 / b2
    return m


def force_map(semi_spacing):
    """(6, 5): generalised force (x y z roll yaw) = box forces (left xyz, right xyz) @ map."""
    b = semi_spacing
    m = np.zeros((6, 5))
    for side, sign in ((0, 1.0), (1, -1.0)):
        m[3 * side + 0, 0] = m[3 * side + 1, 1] = m[3 * side + 2, 2] = 1.0
        m[3 * side + 2, 3] = sign * b
        m[3 * side + 0, 4] = -sign * b
    return m


def set_up(model: VehicleModel, layout: CurveLayout, speed: float, step: float, scheme: int,
           push=(0, 0.0, 0.0)) -> np.ndarray:
    """The work array of a vehicle run: the model's matrices, the track layout,
    the speed (m/s), the communication step (s; the trapezoidal rule's
    matrix depends on it), the coupling scheme (SCHEMES index) and a lateral
    push on a wheelset (index 0..3, force N on both boxes together, until
    time s). The state is set at the first `bodies_step`."""
    if scheme not in (GAUSS_SEIDEL, JACOBI, EXPLICIT):
        raise VehicleError(f"coupling scheme must be one of {SCHEMES}, got {scheme!r}")
    if not (isinstance(speed, (int, float)) and 0.0 < speed <= 150.0):
        raise VehicleError(f"speed must be in (0, 150] m/s, got {speed!r}")
    if not (isinstance(step, (int, float)) and 0.0 < step <= 0.01):
        raise VehicleError(f"communication step must be in (0, 0.01] s, got {step!r}")
    j, force, until = push
    if j not in range(N_WHEELSETS) or not (math.isfinite(force) and math.isfinite(until)):
        raise VehicleError(f"push must be (wheelset 0..3, finite force, finite time), got {push!r}")
    p = model.p
    w = np.zeros(N_WORK)
    sc = w[W_SCALARS:W_SCALARS + 16]
    sc[SC_SCHEME] = scheme
    sc[SC_SPEED] = speed
    sc[SC_LEADING] = p.bogie_semi_spacing + p.semi_wheelbase
    sc[SC_CURVATURE] = layout.full_curvature
    sc[SC_CANT] = layout.full_cant_angle
    sc[SC_STRAIGHT] = layout.straight
    sc[SC_TRANSITION] = layout.transition
    sc[SC_PUSH_WHEELSET], sc[SC_PUSH_FORCE], sc[SC_PUSH_TIME] = j, force, until
    sc[SC_RATE_STEP] = step
    mass = model.mass.copy()
    if scheme == EXPLICIT:   # the wheelsets move on at constant velocity within the step
        for d in WHEELSETS:
            mass[d:d + 5] *= 1e9
    h = float(step)
    S_inv = np.linalg.inv(np.diag(mass) + 0.5 * h * model.C + 0.25 * h * h * model.K)
    w[W_MASS:W_MASS + N_DOF] = mass
    # K, C and S_inv stored transposed: _subtract_transposed_product and the
    # corrector's loop go over their rows (K is not symmetric: shear_couple)
    w[W_K:W_K + N_DOF * N_DOF] = model.K.T.ravel()
    w[W_C:W_C + N_DOF * N_DOF] = model.C.T.ravel()
    w[W_S_INV:W_S_INV + N_DOF * N_DOF] = S_inv.T.ravel()
    n3 = 3 * N_ELEMENTS
    w[W_D:W_D + n3 * N_DOF] = model.D.ravel()
    w[W_DT:W_DT + n3 * N_DOF] = model.D.T.ravel()
    # the springs' and dampers' own matrices are symmetric; K also holds the
    # couple of the secondary preloads across their shear (shear_couple D), which
    # is not
    elastic = model.K - model.shear_couple @ model.D
    if not (np.allclose(elastic, elastic.T, rtol=0, atol=1e-9 * np.abs(elastic).max())
            and np.allclose(model.C, model.C.T, rtol=0, atol=1e-9 * np.abs(model.C).max())):
        raise VehicleError("the vehicle's stiffness (but the preloads' shear couple) and damping "
                           "matrices must be symmetric")
    w[W_KE:W_KE + n3] = model.k
    w[W_CE:W_CE + n3] = model.c
    w[W_PRELOAD:W_PRELOAD + n3] = model.preload
    w[W_STATIC:W_STATIC + N_DOF] = model.static_force
    w[W_SHEAR:W_SHEAR + N_DOF * n3] = model.shear_couple.ravel()
    for e, el in enumerate(model.elements):
        w[W_ELEMENTS + 5 * e:W_ELEMENTS + 5 * e + 5] = (
            el.position_a, el.position_b, el.offset_a[0], el.offset_a[1], el.height)
    for i, body in enumerate((CARBODY,) + BOGIES):
        w[W_BODIES + 4 * i:W_BODIES + 4 * i + 4] = (
            body, model.body_positions[body], model.mass[body], model.mass[body + 5])
    w[W_WPOS:W_WPOS + N_WHEELSETS] = model.wheelset_positions
    w[W_POSMAP:W_POSMAP + 30] = position_map(p.primary_semi_spacing).ravel()
    w[W_FORCEMAP:W_FORCEMAP + 30] = force_map(p.primary_semi_spacing).ravel()
    return w


def static_box_forces(model: VehicleModel) -> np.ndarray:
    """(4, 6) the static axle-box forces on the wheelsets (the primary preloads)."""
    p = model.p
    prim_load = (p.carbody_mass / 2 + p.bogie_mass) * GRAVITY / 4
    return np.tile([0.0, 0.0, -prim_load] * 2, (N_WHEELSETS, 1))


def initial_outputs(model: VehicleModel, layout: CurveLayout, work: np.ndarray, io: np.ndarray,
                    start_time: float = 0.0):
    """The outputs before the first step (the wheelsets' inputs over their
    first step): the static box forces, the push at the start time, the track
    at the wheelsets."""
    box = static_box_forces(model)
    sc = work[W_SCALARS:W_SCALARS + 16]
    if start_time < sc[SC_PUSH_TIME]:
        j = int(sc[SC_PUSH_WHEELSET])
        box[j, 1] += 0.5 * sc[SC_PUSH_FORCE]
        box[j, 4] += 0.5 * sc[SC_PUSH_FORCE]
    io[IO_BOX_FORCE:IO_BOX_FORCE + 24] = box.ravel()
    s = sc[SC_SPEED] * start_time - sc[SC_LEADING] + model.wheelset_positions
    io[IO_CURVATURE:IO_CURVATURE + 4] = layout.curvature(s)
    io[IO_CANT:IO_CANT + 4] = layout.cant_angle(s)
    io[IO_BODIES:IO_BODIES + 18] = 0.0


# ---------------------------------------------------------------------------
# the track under the bodies (numba twins of CurveLayout's functions)
# ---------------------------------------------------------------------------
@njit(cache=True)
def _ramp(s, straight, transition):
    r = (s - straight) / transition
    return min(max(r, 0.0), 1.0)


@njit(cache=True)
def _ramp_slope(s, straight, transition):
    return 1.0 / transition if straight < s < straight + transition else 0.0


@njit(cache=True)
def _heading(s, k, straight, transition):
    u = min(max(s - straight, 0.0), transition)
    return k * (u * u / (2.0 * transition) + max(s - straight - transition, 0.0))


@njit(cache=True)
def track_terms(s_centre, speed, sc, work, g, g_rate):
    """g (3 n_e): the track's part of the element displacements for the carbody
    centre at s_centre (cosim.vehicle.bodies.VehicleModel.track_terms, the
    frames of CurveLayout.frames), g_rate its time derivative at the speed."""
    k, cant = sc[SC_CURVATURE], sc[SC_CANT]
    a, L = sc[SC_STRAIGHT], sc[SC_TRANSITION]
    for e in range(N_ELEMENTS):
        el = W_ELEMENTS + 5 * e
        s_a = s_centre + work[el]
        s_b = s_centre + work[el + 1]
        dx_p, dy, height = work[el + 2], work[el + 3], work[el + 4]
        h_a = _heading(s_a, k, a, L)
        h_b = _heading(s_b, k, a, L)
        d_heading = h_a - h_b
        half = 0.5 * (s_a - s_b)
        mid = 0.5 * (s_a + s_b)
        offset = 0.0
        for i in range(4):
            offset += _GAUSS_WEIGHTS[i] * half * (_heading(mid + half * _GAUSS_NODES[i], k, a, L) - h_b)
        d_cant = cant * (_ramp(s_a, a, L) - _ramp(s_b, a, L))
        # d/ds of each (both ends move together)
        k_a = k * _ramp(s_a, a, L)
        k_b = k * _ramp(s_b, a, L)
        d_heading_s = k_a - k_b
        offset_s = d_heading - (s_a - s_b) * k_b
        d_cant_s = cant * (_ramp_slope(s_a, a, L) - _ramp_slope(s_b, a, L))
        g[3 * e] = -d_heading * dy
        g[3 * e + 1] = offset + d_heading * dx_p - d_cant * height
        g[3 * e + 2] = d_cant * dy
        g_rate[3 * e] = -speed * d_heading_s * dy
        g_rate[3 * e + 1] = speed * (offset_s + d_heading_s * dx_p - d_cant_s * height)
        g_rate[3 * e + 2] = speed * d_cant_s * dy


@njit(cache=True)
def forcing(s_centre, sc, work, f, g, g_rate):
    """The external generalised forces f (N_DOF) on the bodies for the carbody
    centre at s_centre: the preloads, minus the elements' forces of the track
    geometry (k g + c g') and the couple of the secondary springs' preload
    across their shear by it (VehicleModel.shear_couple g), the inertial loads
    of each body in its track frame
    (lateral -m (V^2 k cos c + g sin c), vertical -m (g cos c - V^2 k sin c),
    yaw -J_z V^2 dk/ds)."""
    speed = sc[SC_SPEED]
    track_terms(s_centre, speed, sc, work, g, g_rate)
    n3 = 3 * N_ELEMENTS
    for d in range(N_DOF):
        f[d] = work[W_STATIC + d]
    for r in range(n3):
        force = work[W_KE + r] * g[r] + work[W_CE + r] * g_rate[r]
        if force != 0.0:
            row = W_D + r * N_DOF
            for d in range(N_DOF):
                f[d] -= force * work[row + d]
        if g[r] != 0.0:
            for d in range(N_DOF):
                f[d] -= work[W_SHEAR + d * n3 + r] * g[r]
    k, cant = sc[SC_CURVATURE], sc[SC_CANT]
    a, L = sc[SC_STRAIGHT], sc[SC_TRANSITION]
    for i in range(3):
        b = int(work[W_BODIES + 4 * i])
        s = s_centre + work[W_BODIES + 4 * i + 1]
        m = work[W_BODIES + 4 * i + 2]
        jz = work[W_BODIES + 4 * i + 3]
        kap = k * _ramp(s, a, L)
        c = cant * _ramp(s, a, L)
        f[b + 1] += -m * (speed * speed * kap * math.cos(c) + GRAVITY * math.sin(c))
        f[b + 2] += -m * (GRAVITY * math.cos(c) - speed * speed * kap * math.sin(c))
        f[b + 5] += -jz * speed * speed * k * _ramp_slope(s, a, L)


# ---------------------------------------------------------------------------
# the step
# ---------------------------------------------------------------------------
@njit(cache=True)
def _wheelset_coordinates(kin, work, out):
    """out (4, 10): each wheelset's (x y z roll yaw) displacement from its
    reference and their rates, from the axle-box kinematics kin (4, 12)."""
    for j in range(N_WHEELSETS):
        for d in range(5):
            pos = 0.0
            vel = 0.0
            for c in range(6):
                col = c if c < 3 else c + 3          # left xyz (0-2), right xyz (6-8)
                pos += kin[j, col] * work[W_POSMAP + 5 * c + d]
                vel += kin[j, col + 3] * work[W_POSMAP + 5 * c + d]
            out[j, d] = pos - work[W_REFERENCE + 5 * j + d]
            out[j, 5 + d] = vel


@njit(cache=True)
def _matrix(work, at, rows, cols):
    return work[at:at + rows * cols].reshape((rows, cols))


@njit(cache=True)
def _subtract_transposed_product(transposed, x, out):
    """out -= M @ x for M stored transposed (`transposed` = M.T), as a sum of
    the rows of M.T (axpy: the inner loop runs over contiguous memory with no
    dependence between its iterations, so that the compiler vectorises it)."""
    n = x.shape[0]
    for d in range(n):
        xd = x[d]
        if xd != 0.0:
            row = transposed[d]
            for r in range(n):
                out[r] -= row[r] * xd


@njit(cache=True)
def _integrate(h, explicit, work):
    """Bodies and interface models over one step by the trapezoidal rule (from
    q, v with the forcing f0, f1 and the track terms g0, g1, gr0, gr1 in work)
    into q1, v1; the box forces on the wheelsets into box: the trapezoidal
    mean of the primary suspension forces (explicit: those at the start).
    K, C and S_inv = (M + h/2 C + h^2/4 K)^-1 are stored transposed (set_up)."""
    q = work[W_Q:W_Q + N_DOF]
    v = work[W_V:W_V + N_DOF]
    other = work[W_OTHER:W_OTHER + N_DOF]
    q1 = work[W_Q1:W_Q1 + N_DOF]
    v1 = work[W_V1:W_V1 + N_DOF]
    mass = work[W_MASS:W_MASS + N_DOF]
    K = _matrix(work, W_K, N_DOF, N_DOF)
    C = _matrix(work, W_C, N_DOF, N_DOF)
    S_inv = _matrix(work, W_S_INV, N_DOF, N_DOF)
    f0 = work[W_F0:W_F0 + N_DOF]
    f1 = work[W_F1:W_F1 + N_DOF]
    hh = 0.25 * h * h
    # a0 = (f0 + other - K q - C v) / mass -> the predictor in q1, v1 (f0 becomes the residual)
    for r in range(N_DOF):
        f0[r] += other[r]
    _subtract_transposed_product(K, q, f0)
    _subtract_transposed_product(C, v, f0)
    for r in range(N_DOF):
        a0 = f0[r] / mass[r]
        q1[r] = q[r] + h * v[r] + hh * a0
        v1[r] = v[r] + 0.5 * h * a0
    # residual at the predictor, f1 + other - K q_pred - C v_pred (in f1)
    for r in range(N_DOF):
        f1[r] += other[r]
    _subtract_transposed_product(K, q1, f1)
    _subtract_transposed_product(C, v1, f1)
    # a1 = S_inv residual (in f0), the corrector (S_inv stored transposed)
    for r in range(N_DOF):
        f0[r] = 0.0
    for d in range(N_DOF):
        rd = f1[d]
        row = S_inv[d]
        for r in range(N_DOF):
            f0[r] += row[r] * rd
    for r in range(N_DOF):
        q1[r] += hh * f0[r]
        v1[r] += 0.5 * h * f0[r]
    # the primary elements' displacements and rates at both ends (D^T stored: axpy)
    DT = _matrix(work, W_DT, N_DOF, 3 * N_ELEMENTS)
    ends = _matrix(work, W_ENDS, 4, 3 * N_ELEMENTS)
    for e in range(3 * N_ELEMENTS):
        ends[0, e] = work[W_G0 + e]
        ends[1, e] = work[W_GR0 + e]
        ends[2, e] = work[W_G1 + e]
        ends[3, e] = work[W_GR1 + e]
    for d in range(N_DOF):
        row = DT[d]
        qd, vd, q1d, v1d = q[d], v[d], q1[d], v1[d]
        for e in range(12, 3 * N_ELEMENTS):
            ends[0, e] += row[e] * qd
            ends[1, e] += row[e] * vd
            ends[2, e] += row[e] * q1d
            ends[3, e] += row[e] * v1d
    box = work[W_BOX:W_BOX + 4 * 6]
    for p in range(N_PRIMARY_ROWS):
        r = 12 + p
        kp, cp, pre = work[W_KE + r], work[W_CE + r], work[W_PRELOAD + r]
        force0 = pre - kp * ends[0, r] - cp * ends[1, r]
        if explicit:
            box[p] = -force0
        else:
            box[p] = -0.5 * (force0 + pre - kp * ends[2, r] - cp * ends[3, r])


@njit(cache=True)
def _forcing_over(t0, h, sc, work):
    """f0, g0, gr0 at t0 and f1, g1, gr1 at t0 + h (carbody centre V t - leading offset)."""
    speed = sc[SC_SPEED]
    s0 = speed * t0 - sc[SC_LEADING]
    forcing(s0, sc, work, work[W_F0:W_F0 + N_DOF], work[W_G0:W_G0 + 3 * N_ELEMENTS],
            work[W_GR0:W_GR0 + 3 * N_ELEMENTS])
    forcing(s0 + speed * h, sc, work, work[W_F1:W_F1 + N_DOF], work[W_G1:W_G1 + 3 * N_ELEMENTS],
            work[W_GR1:W_GR1 + 3 * N_ELEMENTS])


@njit(cache=True)
def _accept(work):
    """q, v <- q1, v1 (the bodies at the end of the integrated step)."""
    for d in range(N_DOF):
        work[W_Q + d] = work[W_Q1 + d]
        work[W_V + d] = work[W_V1 + d]


@njit(cache=True)
def _outputs(t_out, sc, work, io):
    """The box forces (with the push while t_out < its end) and the track at the
    wheelsets at t_out; the bodies' displacements (q)."""
    j_push = int(sc[SC_PUSH_WHEELSET])
    push = 0.5 * sc[SC_PUSH_FORCE] if t_out < sc[SC_PUSH_TIME] else 0.0
    for j in range(N_WHEELSETS):
        for c in range(6):
            value = work[W_BOX + 6 * j + c]
            if j == j_push and (c == 1 or c == 4):
                value += push
            io[IO_BOX_FORCE + 6 * j + c] = value
    speed = sc[SC_SPEED]
    k, cant = sc[SC_CURVATURE], sc[SC_CANT]
    a, L = sc[SC_STRAIGHT], sc[SC_TRANSITION]
    for j in range(N_WHEELSETS):
        s = speed * t_out - sc[SC_LEADING] + work[W_WPOS + j]
        io[IO_CURVATURE + j] = k * _ramp(s, a, L)
        io[IO_CANT + j] = cant * _ramp(s, a, L)
    for d in range(18):
        io[IO_BODIES + d] = work[W_Q + d]


@njit(cache=True)
def _applied_from_outputs(io, work, applied):
    """applied (4, 5): the generalised forces of the box forces in io (the
    forces the wheelsets receive over their step)."""
    for j in range(N_WHEELSETS):
        for d in range(5):
            acc = 0.0
            for c in range(6):
                acc += io[IO_BOX_FORCE + 6 * j + c] * work[W_FORCEMAP + 5 * c + d]
            applied[j, d] = acc


@njit(cache=True)
def bodies_step(t, h, io, work):
    """One communication step of the bodies from t by h (see the module
    docstring): reads the wheelsets' kinematics at t from io, writes the box
    forces, the track and the bodies into io. Returns STEP_OK, or
    STEP_BAD_INPUT (a non-finite kinematics input) / STEP_BAD_TIME (a step
    other than the set-up one, a time other than the one the last step
    reached) with nothing changed."""
    sc = work[W_SCALARS:W_SCALARS + 16]
    if not (math.isfinite(t) and abs(h - sc[SC_RATE_STEP]) <= 1e-9 * sc[SC_RATE_STEP]):
        return STEP_BAD_TIME
    if sc[SC_STEPS] > 0.0 and not abs(t - sc[SC_TIME]) <= 1e-9 * max(1.0, abs(t)):
        return STEP_BAD_TIME      # not the point the last step reached: the bodies cannot go back
    for i in range(IO_KINEMATICS, IO_KINEMATICS + N_WHEELSETS * N_KINEMATICS):
        if not math.isfinite(io[i]):
            return STEP_BAD_INPUT
    # the bodies' own clock: the set-up step and the first step's time plus the
    # steps taken, not the host's t and h, which agree with them only to the last
    # bits (libcosim counts integer nanoseconds, Ecos adds h to its time): the
    # track's curvature and cant at t + h, the forcing and the trapezoidal rule
    # must not depend on a host's time arithmetic (Ecos's vehicle differed from
    # the project master's by 7e-5 of Q in the transition, libcosim's by up to
    # 3e-5, from last-bit differences of t)
    if sc[SC_STEPS] == 0.0:
        sc[SC_START] = t
    h = sc[SC_RATE_STEP]
    t = sc[SC_START] + sc[SC_STEPS] * h
    scheme = int(sc[SC_SCHEME])
    first = sc[SC_STEPS] == 0.0
    kin = io[IO_KINEMATICS:IO_KINEMATICS + N_WHEELSETS * N_KINEMATICS].reshape(
        (N_WHEELSETS, N_KINEMATICS))
    now = work[W_NOW:W_NOW + N_WHEELSETS * 10].reshape((N_WHEELSETS, 10))
    v_prev = work[W_VPREV:W_VPREV + N_WHEELSETS * 5].reshape((N_WHEELSETS, 5))
    applied = work[W_APPLIED:W_APPLIED + N_WHEELSETS * 5].reshape((N_WHEELSETS, 5))
    mass = work[W_MASS:W_MASS + N_DOF]
    if first:
        # the wheelsets' state at the first step is the reference (zero
        # displacement of the interface models: the FMUs' static equilibrium)
        for d in range(W_REFERENCE, W_REFERENCE + N_WHEELSETS * 5):
            work[d] = 0.0
        _wheelset_coordinates(kin, work, now)
        for j in range(N_WHEELSETS):
            for d in range(5):
                work[W_REFERENCE + 5 * j + d] = now[j, d]
        for d in range(N_DOF):
            work[W_Q + d] = 0.0
            work[W_V + d] = 0.0
            work[W_OTHER + d] = 0.0
        for wd in range(18, N_DOF):
            work[W_OTHER + wd] = -work[W_STATIC + wd]
        _applied_from_outputs(io, work, applied)
    _wheelset_coordinates(kin, work, now)
    if scheme == JACOBI:
        applied_now = work[W_APPLIED_NOW:W_APPLIED_NOW + N_WHEELSETS * 5].reshape((N_WHEELSETS, 5))
        _applied_from_outputs(io, work, applied_now)
        if first:
            # the bodies from t to t + h with the wheelsets as they are (their forces discarded)
            for j in range(N_WHEELSETS):
                for d in range(5):
                    work[W_Q + 18 + 5 * j + d] = now[j, d]
                    work[W_V + 18 + 5 * j + d] = now[j, 5 + d]
            _forcing_over(t, h, sc, work)
            _integrate(h, False, work)
            _accept(work)
        else:
            for j in range(N_WHEELSETS):
                for d in range(5):
                    k = 18 + 5 * j + d
                    work[W_OTHER + k] = mass[k] * (now[j, 5 + d] - v_prev[j, d]) / h - applied[j, d]
        # the interface models predict the wheelsets at t + h under the forces they receive now
        for j in range(N_WHEELSETS):
            for d in range(5):
                k = 18 + 5 * j + d
                acc = (applied_now[j, d] + work[W_OTHER + k]) / mass[k]
                work[W_Q + k] = now[j, d] + h * now[j, 5 + d] + 0.5 * h * h * acc
                work[W_V + k] = now[j, 5 + d] + h * acc
                v_prev[j, d] = now[j, 5 + d]
                applied[j, d] = applied_now[j, d]
        _forcing_over(t + h, h, sc, work)
        _integrate(h, False, work)
        _accept(work)
        _outputs(t + h, sc, work, io)
    else:
        explicit = scheme == EXPLICIT
        for j in range(N_WHEELSETS):
            for d in range(5):
                k = 18 + 5 * j + d
                work[W_Q + k] = now[j, d]
                work[W_V + k] = now[j, 5 + d]
                if not first and not explicit:
                    work[W_OTHER + k] = mass[k] * (now[j, 5 + d] - v_prev[j, d]) / h - applied[j, d]
                v_prev[j, d] = now[j, 5 + d]
        _forcing_over(t, h, sc, work)
        _integrate(h, explicit, work)
        _accept(work)
        _outputs(t, sc, work, io)
        _applied_from_outputs(io, work, applied)
    sc[SC_STEPS] += 1.0
    sc[SC_TIME] = t + h
    return STEP_OK


def set_step(model: VehicleModel, work: np.ndarray, step: float) -> None:
    """Set the communication step of a work array (the trapezoidal rule's matrix
    S_inv = (M + h/2 C + h^2/4 K)^-1 depends on it); the state is kept."""
    if not (math.isfinite(step) and 0.0 < step <= 0.01):
        raise VehicleError(f"communication step must be in (0, 0.01] s, got {step!r}")
    mass = work[W_MASS:W_MASS + N_DOF]
    S_inv = np.linalg.inv(np.diag(mass) + 0.5 * step * model.C + 0.25 * step * step * model.K)
    work[W_S_INV:W_S_INV + N_DOF * N_DOF] = S_inv.T.ravel()     # transposed, as set_up
    work[W_SCALARS + SC_RATE_STEP] = step


# ---------------------------------------------------------------------------
# the step as a C function (the vehicle-bodies FMU's fast doStep)
# ---------------------------------------------------------------------------
FAST_STEP_ACCEPTED = 1        # what the native front end takes as a completed step


def _c_step():
    from numba import carray, types
    from numba.extending import intrinsic

    @intrinsic
    def as_double_pointer(typingctx, address):
        """The int64 address as a double* (for numba.carray)."""
        sig = types.CPointer(types.float64)(types.int64)

        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], context.get_value_type(signature.return_type))
        return sig, codegen

    def c_step(t, h, block):
        """block: (address of io, address of work). FAST_STEP_ACCEPTED, or
        100 + bodies_step's status with nothing changed."""
        b = carray(block, (2,))
        io = carray(as_double_pointer(b[0]), (N_IO,))
        work = carray(as_double_pointer(b[1]), (N_WORK,))
        status = bodies_step(t, h, io, work)
        return FAST_STEP_ACCEPTED if status == STEP_OK else 100 + status
    return c_step, types.intc(types.float64, types.float64, types.CPointer(types.int64))


_C_STEP = []


def c_step_function():
    """The numba cfunc of `bodies_step` on a block of two addresses, compiled once
    per process (numba's on-disk cache keeps it)."""
    if not _C_STEP:
        from numba import cfunc
        function, signature = _c_step()
        _C_STEP.append(cfunc(signature, nopython=True, cache=True)(function))
    return _C_STEP[0]
