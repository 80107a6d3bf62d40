"""Lateral stability of a bogie and of the whole vehicle: linearised
eigenvalues, the linear critical speed and hunting frequency, root loci, and
the same study by bisection on nonlinear co-simulation runs through the FMU.

It lives here, beside the vehicle model it analyses (cosim.vehicle.bodies): the
bodies, the suspensions and their matrices are `VehicleModel`'s, used as they
are; the wheelsets are the project's wheelset core (solver.model.wheelset), the same
code the FMU runs, linearised numerically. Nothing is moved: solver/ keeps the
single-wheelset study (solver/stability.py), this module builds on both.

Linear model (`linear_vehicle`), straight track, speed V:
- bodies: the carbody and the two bogie frames, 6 DOF each, with VehicleModel's
  mass, stiffness and damping matrices (primary and secondary suspensions, the
  geometric stiffness of the static preloads, the drawbar that holds the
  carbody at V). `fixed_carbody=True` drops the carbody's DOF: each bogie then
  runs under a carbody that moves with the track frame (the classic bogie
  stability model; both bogies are in the matrix, with equal eigenvalues).
- wheelsets: each wheelset's linear states (x y z roll yaw, their rates, the
  spin rate, and its lumped rail bodies' displacements and rates where the
  track has them; solver.stability.linear_states) obey the core's state derivative
  (WheelsetModel.rhs, the contact geometry, creep and normal contact included)
  linearised by central differences about its steady run under the static
  axle-box forces: x' = A x + B u, u the axle-box forces (left xyz, right xyz)
  minus their static values. The four wheelsets share one linearisation (same
  profiles, loads and speed).
- coupling: u = the primary elements' forces on the wheelsets, k (D q) + c (D v)
  for the displacement D q of each element (VehicleModel.D), exactly the forces
  the co-simulation master sends to the FMUs; the bodies feel the elements
  through VehicleModel's K and C (whose wheelset columns act on the wheelset
  states).

Modes: a lateral mode is an oscillatory eigenvalue (imaginary part > 0.5
rad/s) whose eigenvector has more than half of its position part in the
lateral coordinates (y, and roll and yaw times 1 m); the hunting mode is the
lateral mode with the largest real part among those that move the wheelsets
(their lateral coordinates > 30 % of the position part; the carbody's sway
and yaw modes have < 10 %). The linear critical speed is the lowest speed at
which ANY lateral mode becomes unstable (usually the hunting mode; at small
conicities a carbody mode can come first: `least_stable` says which); the
hunting frequency is that mode's. Every unstable real eigenvalue is reported
too.

Nonlinear study (`nonlinear_critical_speed`): runs of the full vehicle over
four wheelset FMUs (cosim.vehicle.master.VehicleCosim) with a lateral push on the
leading wheelset; the vehicle hunts at a speed if the lateral amplitude of the
leading wheelset at the end of the run is still above a tenth of its first
amplitude and no longer decaying (`hunting_run`), or if the wheelset derails;
bisection on the speed. (No fixed-carbody variant: the co-simulation carries
the carbody.)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from .bodies import N_DOF, WHEELSETS, VehicleModel
from .parameters import GRAVITY, VehicleParameters


LATERAL_BODY = (1, 3, 5)          # y, roll, yaw of a body (6 DOF)
LATERAL_WHEELSET = (1, 3, 4)      # y, roll, yaw of a wheelset (x y z roll yaw)
HUNTING_MIN_OMEGA = 0.5           # rad/s: slower "oscillations" are not hunting
HUNTING_WHEELSET_SHARE = 0.3      # a hunting mode moves the wheelsets (carbody modes: < 0.1)
FORCE_STEP = 10.0                 # N: central differences of the axle-box forces


class VehicleStabilityError(ValueError):
    """A bad request or no steady run / no hunting mode."""


def wheelset_parameters(vehicle: VehicleParameters, base=None):
    """The core's WheelsetParameters for the vehicle's wheelsets: `base` (profiles,
    creep model, friction, the linear-study controls, ...) with the vehicle's
    wheelset mass, inertias, nominal radius and axle-box semi-spacing, no built-in
    suspension (the vehicle supplies the axle-box forces), straight track."""
    from solver.model.parameters import WheelsetParameters
    base = base or WheelsetParameters()
    jx, jy, jz = vehicle.wheelset_inertia
    return replace(base, mass=vehicle.wheelset_mass, inertia_roll=jx, inertia_spin=jy, inertia_yaw=jz,
                   nominal_radius=vehicle.wheel_radius,
                   axle_box_semi_spacing=vehicle.primary_semi_spacing, bogie=False, suspended_mass=0.0,
                   track="straight", initial_lateral=0.0, initial_yaw=0.0)


def static_box_force(vehicle: VehicleParameters) -> np.ndarray:
    """(2, 3) static force of the primary suspension on a wheelset at its boxes (N)."""
    load = (vehicle.carbody_mass / 2 + vehicle.bogie_mass) * GRAVITY / 4
    return np.array([[0.0, 0.0, -load], [0.0, 0.0, -load]])


@dataclass
class WheelsetLinearisation:
    speed: float
    a: np.ndarray          # (n, n) d(state')/d(state) of the linear states
    b: np.ndarray          # (n, 6) d(state')/d(axle-box force): left xyz, right xyz
    steady: np.ndarray     # the full steady state
    states: tuple          # the linear states (solver.stability.linear_states): 11, 23 with lumped rails


def steady_run(model, box_force: np.ndarray, iterations: int = 40):
    """The wheelset's steady centred run under the static axle-box forces
    `box_force` (2, 3): `initialize` under them, then Newton on (z, roll, spin
    rate, longitudinal box force, and the lumped rails' displacements where the
    track has them) for zero vertical, roll, spin, longitudinal and rail
    accelerations. The longitudinal box force (equal on both boxes) is what the
    vehicle's primary springs give to hold the wheelset against its rolling
    resistance (a few newtons); x itself is neutral. Returns (state, box_force)."""
    from solver.layout import (M_TRACK_MODEL, S_RAIL, S_RAIL_RATE, S_ROLL, S_ROLL_RATE,
                               S_SPIN_RATE, S_VX, S_VZ, S_Z, TRACK_LUMPED)
    from solver.errors import WheelsetError
    from solver.model.outputs import WheelsetInputs
    force = np.array(box_force, dtype=float).reshape(2, 3)
    try:
        model.initialize(WheelsetInputs(axle_box_force=force))
    except WheelsetError as exc:
        raise VehicleStabilityError(f"no static equilibrium: {exc}") from None
    state = model.state.copy()
    # rolling without creep at the centred contact points' rolling radius (a cone
    # touches the rail off its taping line: the nominal radius would mean a
    # longitudinal creepage of some 0.5 %, saturating the nonlinear creep laws)
    from solver.contact.geometry.points import static_contact
    radius = float(np.mean(static_contact(model.setup, 0.0, epsilon=0.0).points.rolling_radius[:, 0]))
    state[S_SPIN_RATE] = model.params.speed / radius
    unknowns = [S_Z, S_ROLL, S_SPIN_RATE]
    residual_of = [S_VX, S_VZ, S_ROLL_RATE, S_SPIN_RATE]
    steps = [1e-8, 1e-8, 1e-5]
    clips = [1e-4, 1e-4, 0.01 * state[S_SPIN_RATE]]
    if model.model[M_TRACK_MODEL] == TRACK_LUMPED:
        unknowns += list(range(S_RAIL, S_RAIL + 6))
        residual_of += list(range(S_RAIL_RATE, S_RAIL_RATE + 6))
        steps += [1e-8] * 6
        clips += [1e-4] * 6
    n = len(residual_of)            # the unknowns and the longitudinal box force

    def residual(st, fx):
        f = force.copy()
        f[:, 0] += fx / 2
        return model.rhs(st, WheelsetInputs(axle_box_force=f))[residual_of]

    fx = 0.0
    for _ in range(iterations):
        r = residual(state, fx)
        if np.all(np.abs(r) < 1e-9):
            break
        jac = np.zeros((n, n))
        for j, (idx, h) in enumerate(zip(unknowns, steps)):
            s2 = state.copy()
            s2[idx] += h
            jac[:, j] = (residual(s2, fx) - r) / h
        jac[:, -1] = (residual(state, fx + 1.0) - r) / 1.0
        delta = np.linalg.lstsq(jac, -r, rcond=None)[0]
        delta[:-1] *= min(1.0, float(np.min(np.array(clips) / np.maximum(np.abs(delta[:-1]), 1e-300))))
        for idx, d in zip(unknowns, delta[:-1]):
            state[idx] += d
        fx += delta[-1]
    r = residual(state, fx)
    if not np.all(np.isfinite(r)) or np.max(np.abs(r)) > 1e-6:
        raise VehicleStabilityError(f"no steady centred run at V = {model.params.speed:g} m/s "
                                    f"(residual accelerations {r})")
    force[:, 0] += fx / 2
    return state, force


def linearise_wheelset(params, speed: float, box_force: np.ndarray) -> WheelsetLinearisation:
    """The core (WheelsetParameters `params`, bogie False) linearised about its
    steady run at `speed` under the axle-box forces `box_force` (2, 3)."""
    from solver import stability
    from solver.layout import S_SPIN_ANGLE
    from solver.model.outputs import WheelsetInputs
    from solver.model.wheelset import WheelsetModel
    if not (isinstance(speed, (int, float)) and math.isfinite(speed) and speed > 0):
        raise VehicleStabilityError(f"speed must be positive and finite, got {speed!r}")
    model = WheelsetModel(replace(params, speed=float(speed)))
    x0, force = steady_run(model, box_force)
    inputs = WheelsetInputs(axle_box_force=force)
    idx = list(stability.linear_states(model))
    n = len(idx)
    a = model.state_jacobian(x0, idx, stability.POSITION_STEP, stability.RATE_STEP, inputs)
    b = np.zeros((n, 6))
    base = force.reshape(6)
    for j in range(6):
        plus, minus = base.copy(), base.copy()
        plus[j] += FORCE_STEP
        minus[j] -= FORCE_STEP
        dp = model.rhs(x0, WheelsetInputs(axle_box_force=plus.reshape(2, 3)))[idx]
        dm = model.rhs(x0, WheelsetInputs(axle_box_force=minus.reshape(2, 3)))[idx]
        b[:, j] = (dp - dm) / (2 * FORCE_STEP)
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise VehicleStabilityError(f"the linearised wheelset is not finite at V = {speed:g} m/s")
    assert S_SPIN_ANGLE not in idx
    return WheelsetLinearisation(float(speed), a, b, x0, tuple(idx))


@dataclass
class LinearVehicle:
    """x' = matrix x. States: the bodies' positions then their rates (carbody
    unless fixed, bogie 1, bogie 2; 6 each), then per wheelset its linear
    states (11, or 23 with lumped rails). `position_index` (n_pos,) and `lateral_weight` (n_pos,) select and
    weight the positions for the lateral share of a mode."""
    speed: float
    matrix: np.ndarray
    state_names: list
    position_index: np.ndarray
    lateral_mask: np.ndarray
    wheelset: WheelsetLinearisation
    fixed_carbody: bool


def _wheelset_dofs(j):
    return list(range(WHEELSETS[j], WHEELSETS[j] + 5))


def linear_vehicle(vehicle: VehicleParameters, wheelset_params, speed: float,
                   fixed_carbody: bool = False, linearisation: WheelsetLinearisation | None = None
                   ) -> LinearVehicle:
    """The vehicle linearised about its steady run on straight track at `speed`."""
    from solver.stability import STATE_NAMES
    vm = VehicleModel(vehicle)
    params = wheelset_parameters(vehicle, wheelset_params)
    lin = linearisation or linearise_wheelset(params, speed, static_box_force(vehicle))
    body_dofs = [d for d in range(18) if not (fixed_carbody and d < 6)]
    nb = len(body_dofs)
    nw = len(lin.states)
    n = 2 * nb + 4 * nw
    mat = np.zeros((n, n))
    # q (38 DOF of VehicleModel) and v as linear maps of the state vector
    q_of = np.zeros((N_DOF, n))
    v_of = np.zeros((N_DOF, n))
    for i, d in enumerate(body_dofs):
        q_of[d, i] = 1.0
        v_of[d, nb + i] = 1.0
    for j in range(4):
        start = 2 * nb + j * nw
        for d in range(5):              # x y z roll yaw are linear states 0..4, rates 5..9
            q_of[WHEELSETS[j] + d, start + d] = 1.0
            v_of[WHEELSETS[j] + d, start + 5 + d] = 1.0
    # bodies: M q'' = -K q - C v (the static preloads balance the weights)
    for i, d in enumerate(body_dofs):
        mat[i, nb + i] = 1.0
        mat[nb + i] = -(vm.K[d] @ q_of + vm.C[d] @ v_of) / vm.mass[d]
    # wheelsets: x' = A x + B u, u = k (D q) + c (D v) of the wheelset's primary elements
    rows = vm.primary_rows
    dp, kp, cp = vm.D[rows], vm.k[rows], vm.c[rows]
    box = kp[:, None] * (dp @ q_of) + cp[:, None] * (dp @ v_of)      # (24, n) force on the boxes
    for j in range(4):
        start = 2 * nb + j * nw
        block = slice(start, start + nw)
        mat[block, block] += lin.a
        mat[block] += lin.b @ box[6 * j:6 * j + 6]
    names = ([f"{_body_name(d)}" for d in body_dofs] + [f"{_body_name(d)} rate" for d in body_dofs]
             + [f"wheelset {j + 1} {STATE_NAMES[k]}" for j in range(4) for k in lin.states])
    pos = list(range(nb)) + [2 * nb + j * nw + d for j in range(4) for d in range(5)]
    lateral = [(d % 6) in LATERAL_BODY for d in body_dofs] + [d in LATERAL_WHEELSET
                                                              for _ in range(4) for d in range(5)]
    if not np.all(np.isfinite(mat)):
        raise VehicleStabilityError(f"the linear vehicle is not finite at V = {speed:g} m/s")
    return LinearVehicle(float(speed), mat, names, np.array(pos), np.array(lateral), lin, fixed_carbody)


def _body_name(d):
    body = "carbody" if d < 6 else f"bogie {1 + (d - 6) // 6}"
    return f"{body} {('x', 'y', 'z', 'roll', 'pitch', 'yaw')[d % 6]}"


@dataclass
class VehicleEigen:
    speed: float
    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    lateral_share: np.ndarray         # per eigenvalue
    wheelset_share: np.ndarray        # per eigenvalue: the wheelsets' lateral coordinates
    hunting: complex                  # the least stable lateral mode that moves the wheelsets
    least_stable: complex             # the least stable lateral mode of all
    least_stable_wheelset_share: float
    unstable_real: list = field(default_factory=list)   # real eigenvalues > 0 (1/s)

    @property
    def frequency(self) -> float:
        """Hz of the hunting mode."""
        return self.hunting.imag / (2 * math.pi)

    @property
    def damping_ratio(self) -> float:
        return -self.hunting.real / abs(self.hunting)


def eigen(vehicle: VehicleParameters, wheelset_params, speed: float, fixed_carbody: bool = False
          ) -> VehicleEigen:
    """Eigenvalues of the linear vehicle at `speed`, its hunting mode and its least
    stable lateral mode."""
    lin = linear_vehicle(vehicle, wheelset_params, speed, fixed_carbody)
    values, vectors = np.linalg.eig(lin.matrix)
    pos = np.abs(vectors[lin.position_index]) ** 2
    total = np.where(pos.sum(axis=0) > 0, pos.sum(axis=0), 1.0)
    share = pos[lin.lateral_mask].sum(axis=0) / total
    n_body = lin.position_index.size - 20
    wheelset_lateral = lin.lateral_mask.copy()
    wheelset_lateral[:n_body] = False
    wheelset_share = pos[wheelset_lateral].sum(axis=0) / total
    lateral = [i for i in range(values.size) if values[i].imag > HUNTING_MIN_OMEGA and share[i] > 0.5]
    if not lateral:
        raise VehicleStabilityError(f"no oscillatory lateral mode at V = {speed:g} m/s")
    least = max(lateral, key=lambda i: values[i].real)
    moving = [i for i in lateral if wheelset_share[i] > HUNTING_WHEELSET_SHARE]
    best = max(moving, key=lambda i: values[i].real) if moving else least
    scale = max(1.0, float(np.max(np.abs(values))))
    unstable = sorted(float(v.real) for v in values
                      if abs(v.imag) <= 1e-9 * scale and v.real > 1e-6 * scale)
    return VehicleEigen(float(speed), values, vectors, share, wheelset_share, complex(values[best]),
                        complex(values[least]), float(wheelset_share[least]), unstable)


def root_locus(vehicle, wheelset_params, speeds, fixed_carbody=False) -> list:
    return [eigen(vehicle, wheelset_params, float(v), fixed_carbody) for v in speeds]


@dataclass
class CriticalSpeed:
    speed: float           # m/s
    frequency: float       # Hz
    bracket: tuple         # (stable, unstable) m/s
    wheelset_share: float = float("nan")   # of the crossing mode (> 0.3: hunting of the bogies)


def linear_critical_speed(vehicle, wheelset_params, v_min=5.0, v_max=120.0, scan=12,
                          tolerance=0.05, fixed_carbody=False) -> CriticalSpeed:
    """The lowest speed in [v_min, v_max] where a lateral mode's real part
    crosses zero (scan, then bisection to `tolerance` m/s); the frequency is the
    crossing mode's."""
    if not (0 < v_min < v_max):
        raise VehicleStabilityError(f"need 0 < v_min < v_max, got {v_min}, {v_max}")

    from solver.stability import bisect_critical_speed, scan_for_instability

    def unstable(v):
        return eigen(vehicle, wheelset_params, v, fixed_carbody).least_stable.real > 0

    lo, hi = scan_for_instability(unstable, np.linspace(v_min, v_max, int(scan)))
    if lo is None:
        raise VehicleStabilityError(f"a lateral mode is already unstable at v_min = {v_min:g} m/s")
    if hi is None:
        raise VehicleStabilityError(f"every lateral mode stays stable up to {v_max:g} m/s")
    lo, hi = bisect_critical_speed(unstable, lo, hi, tolerance)
    e = eigen(vehicle, wheelset_params, hi, fixed_carbody)
    return CriticalSpeed(0.5 * (lo + hi), e.least_stable.imag / (2 * math.pi), (lo, hi),
                         e.least_stable_wheelset_share)


# ---------------------------------------------------------------------------
# nonlinear: bisection on co-simulation runs through the FMU
# ---------------------------------------------------------------------------

def fmu_parameters(wheelset_params, fmu) -> dict:
    """FMI start values of the wheelset parameters the vehicle does not set
    itself (profiles, creep model, friction, ...); ValueError if the FMU cannot
    express one of them."""
    from fmpy import read_model_description

    from fmu_wheelset.fmu.interface import start_values
    from .fmu_wheelsets import extracted
    names = {v.name for v in read_model_description(extracted(fmu)).modelVariables}
    values, missing = start_values(wheelset_params, names)
    if missing:
        raise VehicleStabilityError("the FMU cannot take: " + "; ".join(missing))
    for name in ("wheelset.speed", "wheelset.mass", "wheelset.inertia.x", "wheelset.inertia.y",
                 "wheelset.inertia.z", "wheel.nominal_rolling_radius", "wheelset.axle_box_semi_spacing",
                 "suspension.builtin", "track.scenario", "track.curvature_from_input",
                 "track.cant_from_input", "wheelset.initial_lateral", "wheelset.initial_yaw",
                 "suspension.suspended_mass"):
        values.pop(name, None)      # the vehicle sets these (VehicleCosim)
    return values


@dataclass
class HuntingRun:
    speed: float
    ratio: float           # last / first lateral amplitude of the leading wheelset
    hunts: bool
    frequency: float       # Hz, of the leading wheelset's lateral motion in the last window
    time: np.ndarray
    lateral: np.ndarray    # (n,) leading wheelset y (m)
    stopped: str = ""      # why the run stopped early (an FMU refused a step), else ""


def hunting_run(fmu, vehicle: VehicleParameters, speed: float, fmu_values: dict, push: float = 30e3,
                push_time: float = 0.05, duration: float = 3.0, window: float = 0.5,
                threshold: float = 0.1, sustain: float = 0.9, step: float = 1e-3,
                coupling: str = "interface") -> HuntingRun:
    """One co-simulation run with a lateral push on the leading wheelset. It hunts
    if the lateral amplitude of the leading wheelset in the last `window` s is
    above `threshold` times the amplitude in the first `window` s after the push
    AND above `sustain` times the amplitude in the window before the last (a
    limit cycle, or growth; a slow decay fails the second test). A run in which
    an FMU refuses a step (its wheelset derails or leaves the rail: the motion
    grew past what the wheelset model accepts) counts as hunting, the reason in
    `stopped`."""
    from .master import VehicleCosim
    from .parameters import VehicleError
    if not duration >= push_time + 3 * window:
        raise VehicleStabilityError("duration must cover the push and three windows")
    with VehicleCosim(fmu, vehicle=vehicle, speed=speed, step=step, record_every=5,
                      fmu_parameters=fmu_values, perturbation=(0, push, push_time),
                      coupling=coupling) as vc:
        try:
            r = vc.run(duration)
        except VehicleError as exc:
            reasons = [m for inst in vc.instances for m in inst.messages
                       if "cannot be completed" in m or "derail" in m]
            return HuntingRun(float(speed), math.inf, True, float("nan"), np.zeros(0), np.zeros(0),
                              (reasons[0] if reasons else str(exc))[:400])
    return hunting_verdict(speed, r.time, r.lateral[:, 0], push_time, window, threshold, sustain)


def hunting_verdict(speed: float, t: np.ndarray, y: np.ndarray, push_time: float, window: float,
                    threshold: float, sustain: float) -> HuntingRun:
    """The verdict of `hunting_run` on the leading wheelset's lateral history
    y(t) of a run from any master."""
    from solver.stability import dominant_frequency
    end = t[-1]
    first = np.abs(y[(t >= push_time) & (t <= push_time + window)]).max()
    before = np.abs(y[(t >= end - 2 * window) & (t < end - window)]).max()
    last = np.abs(y[t >= end - window]).max()
    ratio = float(last / max(first, 1e-12))
    hunts = bool(ratio > threshold and last > sustain * before)
    return HuntingRun(float(speed), ratio, hunts, dominant_frequency(t, y), t, y)


def nonlinear_critical_speed(fmu, vehicle: VehicleParameters, wheelset_params, v_min: float,
                             v_max: float, tolerance: float = 1.0, progress=None, **run_options
                             ) -> tuple[CriticalSpeed, list]:
    """The lowest speed in [v_min, v_max] at which the vehicle over four FMUs
    keeps hunting after the push (bisection on `hunting_run`). Returns the
    critical speed and every run made."""
    if not (0 < v_min < v_max):
        raise VehicleStabilityError(f"need 0 < v_min < v_max, got {v_min}, {v_max}")
    values = fmu_parameters(wheelset_parameters(vehicle, wheelset_params), fmu)
    runs = []

    def run(v):
        r = hunting_run(fmu, vehicle, v, values, **run_options)
        runs.append(r)
        if progress:
            progress(r)
        return r

    return bisect_critical_speed(run, v_min, v_max, tolerance), runs


def bisect_critical_speed(run, v_min: float, v_max: float, tolerance: float) -> CriticalSpeed:
    """The lowest speed in [v_min, v_max] at which run(v) (a HuntingRun) hunts,
    by bisection to `tolerance` (m/s; solver.stability.bisect_critical_speed)."""
    from solver.stability import bisect_critical_speed as bisect

    verdicts = {}

    def hunts(v):
        verdicts[v] = run(v)
        return verdicts[v].hunts

    if hunts(v_min):
        raise VehicleStabilityError(f"the vehicle already hunts at v_min = {v_min:g} m/s")
    if not hunts(v_max):
        raise VehicleStabilityError(f"the push still decays at v_max = {v_max:g} m/s")
    lo, hi = bisect(hunts, v_min, v_max, tolerance)
    return CriticalSpeed(0.5 * (lo + hi), verdicts[hi].frequency, (lo, hi))


# ---------------------------------------------------------------------------
# the profile pair's conicity
# ---------------------------------------------------------------------------

def profile_pair_conicity(wheelset_params, amplitude: float = 0.003) -> dict:
    """The equivalent conicity of the wheelset's profile pair on its track:
    EN 15302 at `amplitude` (m) and the linear one, d(r_left - r_right)/(2 dy) at
    y = 0 (what the linearisation sees); for a cone, its nominal conicity too."""
    from solver.contact.geometry.setup import ContactSetup
    from solver.contact.geometry.analysis import equivalent_conicity, rolling_radius_difference
    from solver.profiles.builtins import builtin_profile
    from solver.profiles.files import load_profile
    p = wheelset_params
    profiles = []
    for spec, kind in ((p.wheel_profile, "wheel"), (p.rail_profile, "rail")):
        if hasattr(spec, "lateral"):
            profiles.append(spec)
        else:
            from solver.profiles.builtins import is_builtin_profile
            profiles.append(builtin_profile(spec, step=p.profile_step) if is_builtin_profile(spec)
                            else load_profile(spec, kind, step=p.profile_step))
    setup = ContactSetup(profiles[0], profiles[1], gauge=p.gauge, inclination=p.rail_inclination,
                         back_to_back=p.back_to_back, nominal_radius=p.nominal_radius)
    dy = 1e-5
    dr = rolling_radius_difference(setup, [dy, -dy])
    out = {"wheel": profiles[0].name, "rail": profiles[1].name,
           "en15302": equivalent_conicity(setup, amplitude), "amplitude": amplitude,
           "linear": float((dr[0] - dr[1]) / (4 * dy))}
    name = profiles[0].name
    if name.startswith("cone:"):
        out["nominal"] = float(name.split(":", 1)[1])
    return out


def describe_conicity(c: dict) -> str:
    text = (f"{c['wheel']} / {c['rail']}: equivalent conicity {c['en15302']:.4f} (EN 15302, "
            f"{c['amplitude'] * 1e3:g} mm), {c['linear']:.4f} linear (d delta_r / 2 dy at y = 0)")
    if "nominal" in c:
        text += (f"; the cone's own conicity is {c['nominal']:g}: the wheelset rolls on the crowned, "
                 "inclined rail, which raises it")
    return text
