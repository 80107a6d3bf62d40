"""Lateral stability of a wheelset: eigenvalues of the core linearised about the
centred run, the linear critical speed and hunting frequency, and the
nonlinear critical speed by simulation.

The system is the core itself (`WheelsetModel`): a single wheelset on straight
track with the built-in primary suspension to a frame that follows the track
centreline (`WheelsetParameters(bogie=True, ...)`: longitudinal and lateral
springs and dampers per axle box at +-axle_box_semi_spacing, the classic
"single suspended wheelset" of Wickens 1965), or without it (`bogie=False`: the
free wheelset, whose kinematic mode tends to Klingel's frequency
omega = V sqrt(lambda / (r0 l0)) as V -> 0).

Linearisation (`linearise`): the steady centred run is found first (the
equilibrium of `initialize`, then Newton on the longitudinal position, the
height, the roll and the spin rate so that every acceleration vanishes: the
rolling radius of the loaded contact differs from r0, so the spin is not
exactly V/r0); the Jacobian of the state derivative `WheelsetModel.rhs` is
then taken by central differences (steps 1e-7 m / rad and 1e-5 m/s / rad/s:
the contact geometry is smooth at that scale, checked against steps 10x
larger). The spin angle is left out (nothing depends on it), so the linear
system has 11 states on prescribed rails (x y z roll yaw and their rates, and
the spin rate) and 23 on the lumped track (the two rail bodies' lateral,
vertical and roll displacements and their rates besides).

The hunting mode is the eigenvalue (imaginary part >= 0) whose eigenvector is
mostly lateral and yaw (share of y and l0*yaw in the position part > 0.5,
l0 = gauge/2) with the largest real part (at low speed a suspended wheelset's
may be overdamped: real). The linear critical
speed is the speed where its real part crosses zero (bisection); the nonlinear
critical speed is the lowest speed at which a large lateral perturbation does
not decay (bisection on perturbed runs of the core: the standard railway
practice for real profiles, whose conicity grows with the amplitude).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .errors import WheelsetError
from .layout import (
    M_TRACK_MODEL, N_STATE, N_WHEELSET_STATE, S_RAIL, S_RAIL_RATE, S_ROLL, S_ROLL_RATE,
    S_SPIN_ANGLE, S_SPIN_RATE, S_VX, S_VZ, S_Y, S_Z, TRACK_LUMPED, U_TORQUE,
)
from .model.parameters import WheelsetParameters
from .model.wheelset import WheelsetModel


# the linear states: all but the spin angle (nothing depends on it), and the rail
# bodies' only where the track has them (prescribed rails do not move)
STATE_NAMES = (("x", "y", "z", "roll", "yaw", "spin_angle", "vx", "vy", "vz", "roll_rate",
                "yaw_rate", "spin_rate")
               + tuple(f"rail_{side}_{q}" for side in ("left", "right")
                       for q in ("lateral", "vertical", "roll"))
               + tuple(f"rail_{side}_{q}_rate" for side in ("left", "right")
                       for q in ("lateral", "vertical", "roll")))
WHEELSET_LINEAR_STATES = tuple(i for i in range(N_WHEELSET_STATE) if i != S_SPIN_ANGLE)
LINEAR_STATES = tuple(i for i in range(N_STATE) if i != S_SPIN_ANGLE)


def linear_states(model: WheelsetModel) -> tuple:
    """The state entries of `model`'s linear system: LINEAR_STATES with lumped
    rail bodies, WHEELSET_LINEAR_STATES with prescribed rails."""
    return LINEAR_STATES if model.model[M_TRACK_MODEL] == TRACK_LUMPED else WHEELSET_LINEAR_STATES


POSITION_STEP = 1e-7      # m or rad: central differences of the positions
RATE_STEP = 1e-5          # m/s or rad/s: of the rates


class StabilityError(WheelsetError):
    """No steady centred run, or no hunting mode, or a bad speed range."""


@dataclass
class LinearModel:
    """x' = A x about the steady centred run (states `linear_states`)."""
    speed: float
    matrix: np.ndarray            # (n, n), n = 11 or 23
    steady_state: np.ndarray      # (N_STATE,) the full state of the steady run
    state_names: tuple


@dataclass
class Eigen:
    """Eigenvalues of the linearised core at one speed."""
    speed: float
    eigenvalues: np.ndarray       # (n,) complex, 1/s
    eigenvectors: np.ndarray      # (n, n) columns
    lateral_share: np.ndarray     # (n,) share of y and l0*yaw in the position part
    hunting: complex              # the hunting eigenvalue (imag > 0)

    @property
    def frequency(self) -> float:
        """Damped frequency of the hunting mode (Hz)."""
        return self.hunting.imag / (2 * math.pi)

    @property
    def damping_ratio(self) -> float:
        return -self.hunting.real / abs(self.hunting)


def _model(params: WheelsetParameters, speed: float) -> WheelsetModel:
    if not (isinstance(speed, (int, float)) and math.isfinite(speed) and speed > 0):
        raise StabilityError(f"speed must be positive and finite, got {speed!r}")
    p = replace(params, speed=float(speed), initial_lateral=0.0, initial_yaw=0.0)
    if not (isinstance(p.track, str) and p.track == "straight"):
        raise StabilityError("the stability analysis is about straight track (track='straight')")
    return WheelsetModel(p)


def steady_run(model: WheelsetModel, iterations: int = 30, inputs=None) -> np.ndarray:
    """The steady centred run at constant speed: `initialize` (under `inputs`,
    WheelsetInputs: e.g. the static axle-box forces of a vehicle; held for the
    rest), then Newton on (z, roll, spin rate, axle torque) for zero
    longitudinal, vertical, roll and spin accelerations (the other accelerations
    vanish by symmetry). The torque is the drive that holds the speed against
    the creep losses of a wheel whose patch spans points of different rolling
    radii (S1002 on UIC60 1:40 at the centre: 0 without it); it stays in the
    model's inputs for the analysis. Returns the full state."""
    model.initialize(inputs)
    state = model.state.copy()
    held = model.arrays.inputs              # the inputs every model.rhs below uses
    unknowns = [S_Z, S_ROLL, S_SPIN_RATE, -1]    # -1: the axle torque
    residual_of = [S_VX, S_VZ, S_ROLL_RATE, S_SPIN_RATE]
    steps = [1e-8, 1e-8, 1e-5, 1.0]
    clips = [1e-4, 1e-4, np.inf, np.inf]
    if model.model[M_TRACK_MODEL] == TRACK_LUMPED:
        unknowns += list(range(S_RAIL, S_RAIL + 6))
        residual_of += list(range(S_RAIL_RATE, S_RAIL_RATE + 6))
        steps += [1e-8] * 6
        clips += [1e-4] * 6
    n = len(unknowns)

    def shift(idx, d):
        if idx < 0:
            held[U_TORQUE] += d
        else:
            state[idx] += d

    for _ in range(iterations):
        f = model.rhs(state)[residual_of]
        if np.all(np.abs(f) < 1e-9):
            break
        jac = np.zeros((n, n))
        for j, (idx, h) in enumerate(zip(unknowns, steps)):
            shift(idx, h)
            jac[:, j] = (model.rhs(state)[residual_of] - f) / h
            shift(idx, -h)
        delta = np.linalg.lstsq(jac, -f, rcond=None)[0]
        delta *= min(1.0, float(np.min(np.array(clips) / np.maximum(np.abs(delta), 1e-300))))
        for idx, d in zip(unknowns, delta):
            shift(idx, d)
    f = model.rhs(state)
    if not np.all(np.isfinite(f)) or np.max(np.abs(f[residual_of])) > 1e-3:
        raise StabilityError(f"no steady centred run found at V = {model.params.speed:g} m/s "
                             f"(residual accelerations {f[residual_of]})")
    return state


def linearise(params: WheelsetParameters, speed: float) -> LinearModel:
    """The core linearised about its steady centred run at `speed` (m/s)."""
    model = _model(params, speed)
    x0 = steady_run(model)
    idx = list(linear_states(model))
    a = model.state_jacobian(x0, idx, POSITION_STEP, RATE_STEP)
    if not np.all(np.isfinite(a)):
        raise StabilityError(f"the linearised system is not finite at V = {speed:g} m/s")
    return LinearModel(float(speed), a, x0, tuple(STATE_NAMES[k] for k in idx))


def eigen(params: WheelsetParameters, speed: float) -> Eigen:
    """Eigenvalues of the linearised core at `speed` and its hunting mode."""
    lin = linearise(params, speed)
    values, vectors = np.linalg.eig(lin.matrix)
    half = params.gauge / 2
    # position part: x y z roll yaw (linear states 0..4)
    pos = np.abs(vectors[0:5, :]) ** 2
    weights = np.array([1.0, 1.0, 1.0, half ** 2, half ** 2])[:, None]
    total = (pos * weights).sum(axis=0)
    lateral = (pos[1] + half ** 2 * pos[4]) / np.where(total > 0, total, 1.0)
    # lateral-yaw modes (one of each complex pair: imag >= 0); at low speed the
    # suspended wheelset's may be overdamped (real)
    candidates = [i for i in range(values.size) if values[i].imag >= 0 and lateral[i] > 0.5]
    if not candidates:
        raise StabilityError(f"no lateral-yaw mode at V = {speed:g} m/s")
    best = max(candidates, key=lambda i: values[i].real)
    return Eigen(float(speed), values, vectors, lateral, complex(values[best]))


def root_locus(params: WheelsetParameters, speeds) -> list[Eigen]:
    """`eigen` at each speed (m/s)."""
    return [eigen(params, float(v)) for v in speeds]


@dataclass
class CriticalSpeed:
    speed: float          # m/s
    frequency: float      # Hz, hunting frequency at the critical speed
    bracket: tuple        # (stable, unstable) speeds that bound it (m/s)


def scan_for_instability(unstable, speeds) -> tuple:
    """(the last stable, the first unstable) of `speeds` in order, where
    `unstable(v)` says whether the system is unstable at v m/s; (None, first)
    if the first speed is unstable already, (last, None) if none is. The scan
    stops at the first unstable speed."""
    previous = None
    for v in speeds:
        if unstable(float(v)):
            return previous, float(v)
        previous = float(v)
    return previous, None


def bisect_critical_speed(unstable, stable_speed: float, unstable_speed: float,
                          tolerance: float) -> tuple:
    """(lo, hi): the bracket of the speed where `unstable(v)` turns True,
    halved from (stable_speed, unstable_speed) until it is no wider than
    `tolerance` m/s (lo stable, hi unstable)."""
    lo, hi = float(stable_speed), float(unstable_speed)
    while hi - lo > tolerance:
        mid = 0.5 * (lo + hi)
        if unstable(mid):
            hi = mid
        else:
            lo = mid
    return lo, hi


def linear_critical_speed(params: WheelsetParameters, v_min: float = 5.0, v_max: float = 120.0,
                          scan: int = 12, tolerance: float = 0.05) -> CriticalSpeed:
    """The lowest speed in [v_min, v_max] where the real part of the hunting
    eigenvalue crosses zero (scan, then bisection to `tolerance` m/s)."""
    if not (0 < v_min < v_max):
        raise StabilityError(f"need 0 < v_min < v_max, got {v_min}, {v_max}")

    def unstable(v):
        return eigen(params, v).hunting.real > 0

    lo, hi = scan_for_instability(unstable, np.linspace(v_min, v_max, scan))
    if lo is None:
        raise StabilityError(f"the hunting mode is already unstable at v_min = {v_min:g} m/s")
    if hi is None:
        raise StabilityError(f"the hunting mode stays stable up to {v_max:g} m/s")
    lo, hi = bisect_critical_speed(unstable, lo, hi, tolerance)
    e = eigen(params, hi)
    return CriticalSpeed(0.5 * (lo + hi), e.frequency, (lo, hi))


def perturbed_run(params: WheelsetParameters, speed: float, lateral: float, duration: float,
                  step: float = 1e-3, steady: np.ndarray | None = None):
    """The core from its steady centred run with the wheelset displaced by
    `lateral` (m), for `duration` s in steps `step`: (time, y) arrays."""
    model = _model(params, speed)
    x0 = steady_run(model) if steady is None else steady
    model.state[:] = x0
    model.state[S_Y] += lateral
    n = int(round(duration / step))
    time = np.zeros(n + 1)
    y = np.zeros(n + 1)
    y[0] = model.state[S_Y]
    for k in range(n):
        result = model.advance(step)
        if result.status != "ok":
            raise StabilityError(f"perturbed run at V = {speed:g} m/s stopped at "
                                 f"t = {k * step:.3f} s: {result.message}")
        time[k + 1] = model.time
        y[k + 1] = model.state[S_Y]
    return time, y


def oscillation_lasts(t: np.ndarray, y: np.ndarray, window: float = 1.0,
                      floor: float = 5e-5, sustain: float = 0.9) -> bool:
    """True if the oscillation of y(t) lasts: its amplitude (half its range)
    in the last `window` s is above `floor` (m) and at least `sustain` times
    the amplitude in the window before (a limit cycle, or growth). A decay,
    however slow, fails the second test once it loses more than 10 % a
    window; a cycle of any size passes it."""
    end = t[-1]
    last = y[t >= end - window]
    before = y[(t >= end - 2 * window) & (t < end - window)]
    if last.size < 2 or before.size < 2:
        raise StabilityError(f"the run is shorter than two windows of {window:g} s")
    amplitude_last = 0.5 * (last.max() - last.min())
    amplitude_before = 0.5 * (before.max() - before.min())
    return bool(amplitude_last > floor and amplitude_last >= sustain * amplitude_before)


def hunts(params: WheelsetParameters, speed: float, lateral: float = 0.006,
          duration: float = 4.0) -> bool:
    """True if the lateral oscillation after a perturbation `lateral` (m)
    lasts (`oscillation_lasts`: the last second's amplitude above 0.05 mm and
    at least 0.9 times the second before's), False if it dies out. The
    amplitude of the cycle does not matter: a subcritical cycle of 1 mm after
    a 6 mm push is hunting."""
    t, y = perturbed_run(params, speed, lateral, duration)
    return oscillation_lasts(t, y)


def nonlinear_critical_speed(params: WheelsetParameters, v_min: float, v_max: float,
                             lateral: float = 0.006, duration: float = 4.0,
                             tolerance: float = 0.5) -> CriticalSpeed:
    """The lowest speed in [v_min, v_max] at which a lateral perturbation of
    `lateral` m does not decay (bisection on perturbed runs, `hunts`)."""
    if hunts(params, v_min, lateral, duration):
        raise StabilityError(f"the wheelset already hunts at v_min = {v_min:g} m/s")
    if not hunts(params, v_max, lateral, duration):
        raise StabilityError(f"the perturbation still decays at v_max = {v_max:g} m/s")
    lo, hi = bisect_critical_speed(lambda v: hunts(params, v, lateral, duration),
                                   v_min, v_max, tolerance)
    t, y = perturbed_run(params, hi, lateral, duration)
    return CriticalSpeed(0.5 * (lo + hi), dominant_frequency(t, y), (lo, hi))


def dominant_frequency(t: np.ndarray, y: np.ndarray) -> float:
    """Frequency (Hz) of the strongest oscillation of y(t) in its second half
    (mean of the zero-crossing intervals)."""
    half = t >= t[-1] / 2
    tt, yy = t[half], y[half] - y[half].mean()
    crossings = tt[1:][(yy[:-1] < 0) & (yy[1:] >= 0)]
    if crossings.size < 2:
        return 0.0
    return float(1.0 / np.mean(np.diff(crossings)))


def fit_damped_oscillation(t: np.ndarray, y: np.ndarray):
    """(decay rate sigma 1/s, angular frequency omega rad/s) of a free decay
    y ~ A exp(sigma t) cos(omega t + phi): omega from the mean interval of
    successive maxima, sigma from the least-squares slope of log |peak|."""
    peaks = [i for i in range(1, y.size - 1) if y[i] > y[i - 1] and y[i] >= y[i + 1] and y[i] > 0]
    if len(peaks) < 3:
        raise StabilityError("fewer than three maxima: no oscillation to fit")
    # parabolic refinement of each maximum
    tp, ap = [], []
    for i in peaks:
        a, b, c = y[i - 1], y[i], y[i + 1]
        denom = a - 2 * b + c
        shift = 0.5 * (a - c) / denom if denom != 0 else 0.0
        dt = t[i + 1] - t[i]
        tp.append(t[i] + shift * dt)
        ap.append(b - 0.25 * (a - c) * shift)
    tp, ap = np.array(tp), np.array(ap)
    omega = 2 * math.pi / np.mean(np.diff(tp))
    sigma = np.polyfit(tp, np.log(ap), 1)[0]
    return float(sigma), float(omega)
