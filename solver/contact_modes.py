"""The modes of the wheelset on its contacts: quasi-static equilibria under a
lateral axle-box load, and the eigenvalues of the core linearised about them.

A flange contact under a growing lateral load is where an undamped interface
goes wrong: the wheelset's vertical and roll bounce on its Hertz springs is
almost undamped on a rigid track, and at the flange root a lateral-roll mode
can be driven unstable by the friction of the flange contact (a flutter: the
contact throws itself onto the flange flank before Nadal's limit is reached).
`load_sweep` finds, for each lateral force per axle box, the run at constant
speed in which every acceleration vanishes (Newton on the positions, the spin
rate and the lumped rail bodies' displacements, the velocities zero:
`quasi_static_state`), linearises the core there (central differences, as
solver.stability.linearise) and classifies its oscillatory modes by where their
kinetic energy is (`linear_modes`): the wheelset's vertical bounce, its roll,
its lateral-yaw motion, the longitudinal-spin creep mode, the rail bodies.
docs/stability.md and tests/test_contact_modes.py hold the figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .errors import WheelsetError
from .layout import (
    S_RAIL_RATE, S_ROLL, S_ROLL_RATE, S_SPIN_RATE, S_VX, S_VY, S_VZ, S_X, S_Y, S_YAW, S_YAW_RATE, S_Z,
)
from .model.outputs import WheelsetInputs
from .model.parameters import WheelsetParameters
from .model.wheelset import WheelsetModel, static_equilibrium
from .stability import linear_states

POSITION_STEP = 1e-8      # m or rad: central differences of the positions
RATE_STEP = 1e-6          # m/s or rad/s: of the rates
# the modes of interest: oscillatory, above this frequency (the hunting and
# the kinematic modes are solver.stability's)
MIN_FREQUENCY = 20.0      # Hz


class ContactModeError(WheelsetError):
    """No quasi-static equilibrium at a load (the wheel climbs), or a bad argument."""


@dataclass
class Mode:
    """One oscillatory mode of the linearised core."""

    frequency: float          # Hz (damped)
    damping_ratio: float      # -Re / |lambda|
    eigenvalue: complex       # 1/s
    kind: str                 # "vertical", "roll", "lateral", "longitudinal", "rail"
    shares: dict              # kinetic-energy share of each kind


@dataclass
class LoadedModes:
    """The quasi-static run under a lateral load and its modes."""

    box_force: float          # N, lateral, per axle box
    state: np.ndarray         # (N_STATE,) the quasi-static run
    flange_climb_ratio: float # the larger of the two wheels' (solver.dynamics.derailment)
    largest_contact_angle: float   # rad, of a loaded point
    modes: list               # Mode, by frequency

    def least_damped(self, kinds=None) -> Mode:
        """The mode of the smallest damping ratio (among `kinds`, all if None)."""
        chosen = [m for m in self.modes if kinds is None or m.kind in kinds]
        return min(chosen, key=lambda m: m.damping_ratio)


def _inputs(box_force: float) -> WheelsetInputs:
    inputs = WheelsetInputs()
    inputs.axle_box_force[:, 1] = box_force
    return inputs


START_SHIFTS = (0.0, 1e-4, 2.5e-4, 5e-4, 1e-3)     # m, lateral, of the quasi-static Newton's starts


def quasi_static_state(model: WheelsetModel, box_force: float, start=None) -> np.ndarray:
    """The run at constant speed under the lateral force `box_force` (N per axle
    box, track frame +y) in which every acceleration vanishes: Newton on x, y,
    z, roll, yaw, the spin rate (and the rail bodies' displacements), from
    `start` (a state; None: initialize's static equilibrium at y = 0). The
    model's inputs are set to the load. Raises ContactModeError if there is
    none (the wheel climbs its flange)."""
    inputs = _inputs(box_force)
    if start is None:
        model.initialize(inputs)
        start = model.state.copy()
    else:
        model.set_inputs(model.input_vector(inputs))
    state = np.array(start, dtype=float)
    state[[S_VX, S_VY, S_VZ, S_ROLL_RATE, S_YAW_RATE]] = 0.0
    state[S_RAIL_RATE:S_RAIL_RATE + 6] = 0.0
    unknowns = (S_X, S_Y, S_Z, S_ROLL, S_YAW, S_SPIN_RATE)
    residuals = (S_VX, S_VY, S_VZ, S_ROLL_RATE, S_YAW_RATE, S_SPIN_RATE)
    # the Newton's basin is rough where the contact angle turns fast with y (a
    # tread point running into the throat, the rail rolling under it): a start
    # that fails is followed by starts moved towards the flange the load pushes
    # the wheelset to
    towards = 1.0 if box_force >= 0.0 else -1.0
    for shift in START_SHIFTS:
        trial = state.copy()
        trial[S_Y] += towards * shift
        found = static_equilibrium(model, trial, unknowns, residuals, iterations=200)
        if found is not None:
            return found
    raise ContactModeError(f"no quasi-static run under {box_force / 1e3:g} kN per axle box")


def linearise_at(model: WheelsetModel, state: np.ndarray) -> tuple:
    """(A, the state entries of its rows) of the core linearised about `state`
    (central differences; the spin angle left out, and the rail bodies with
    prescribed rails)."""
    idx = list(linear_states(model))
    a = model.state_jacobian(state, idx, POSITION_STEP, RATE_STEP)
    if not np.all(np.isfinite(a)):
        raise ContactModeError("the linearised system is not finite")
    return a, idx


def _kinetic_shares(vector, idx, params: WheelsetParameters) -> dict:
    """The share of a mode's kinetic energy (its velocity part) in each kind of motion."""
    at = {k: i for i, k in enumerate(idx)}
    m, jx, jy, jz = params.mass, params.inertia_roll, params.inertia_spin, params.inertia_yaw
    energy = {
        "longitudinal": m * abs(vector[at[S_VX]]) ** 2 + jy * abs(vector[at[S_SPIN_RATE]]) ** 2,
        "lateral": m * abs(vector[at[S_VY]]) ** 2 + jz * abs(vector[at[S_YAW_RATE]]) ** 2,
        "vertical": m * abs(vector[at[S_VZ]]) ** 2,
        "roll": jx * abs(vector[at[S_ROLL_RATE]]) ** 2,
        "rail": 0.0,
    }
    if S_RAIL_RATE in at:
        mass = params.rail_mass
        for side in range(2):
            for c, inertia in enumerate((mass[0], mass[1], mass[2])):
                energy["rail"] += inertia * abs(vector[at[S_RAIL_RATE + 3 * side + c]]) ** 2
    total = sum(energy.values()) or 1.0
    return {kind: value / total for kind, value in energy.items()}


def linear_modes(model: WheelsetModel, state: np.ndarray) -> list:
    """The oscillatory modes above MIN_FREQUENCY of the core linearised about `state`."""
    a, idx = linearise_at(model, state)
    values, vectors = np.linalg.eig(a)
    modes = []
    for i, lam in enumerate(values):
        frequency = lam.imag / (2.0 * math.pi)
        if frequency < MIN_FREQUENCY:
            continue
        shares = _kinetic_shares(vectors[:, i], idx, model.params)
        kind = max(shares, key=shares.get)
        modes.append(Mode(float(frequency), float(-lam.real / abs(lam)), complex(lam), kind, shares))
    return sorted(modes, key=lambda mode: mode.frequency)


def load_sweep(params: WheelsetParameters, forces, speed: float | None = None) -> list:
    """LoadedModes at each lateral force per axle box of `forces` (N, increasing;
    each equilibrium starts from the one before), until one has no quasi-static
    run (the wheel climbs): the list ends there."""
    if speed is not None:
        params = replace(params, speed=float(speed))
    params = replace(params, initial_lateral=0.0, initial_yaw=0.0)
    model = WheelsetModel(params)
    out = []
    state = None
    for force in forces:
        try:
            state = quasi_static_state(model, float(force), state)
        except ContactModeError:
            break
        model.state[:] = state
        model.rhs(state)
        model.refresh_record()
        outputs = model.outputs()
        angles = outputs.contact_angle[outputs.contact_active > 0.5]
        out.append(LoadedModes(float(force), state.copy(), float(outputs.flange_climb_ratio.max()),
                               float(np.abs(angles).max()) if angles.size else 0.0,
                               linear_modes(model, state)))
    return out
