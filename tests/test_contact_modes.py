"""The modes of the wheel-rail interface under a growing lateral load
(solver/contact_modes.py): the core linearised about its quasi-static run
(every acceleration zero) under a lateral force on each axle box, from 0 to
past the quasi-static Nadal force (the flanging wheel's Y/Q at Nadal's limit).

The loaded wheelset of the running-safety cases (the built-in suspension with
its frame on the track centreline, 12 400 kg, 100 km/h, Polach, mu = 0.3).
With the default interface (the lumped rail bodies, Hunt & Crossley's contact
damping) every mode of the contacts is damped: the flutter of the flange root
that threw the rigid track's wheel onto its flange (a roll mode near 140 Hz
growing at +55 1/s at 49 kN per box, docs/running_safety.md) is gone. The
bounds are the ones asked of the interface: zeta >= 0.02 for every mode above
20 Hz (the contact and rail modes: the suspension's are below), >= 0.05 for the
wheelset's bounce on its contacts."""
from __future__ import annotations

import math

import numpy as np
import pytest

from solver.contact_modes import load_sweep
from solver.model.parameters import WheelsetParameters

PAIRS = {
    "S1002/UIC60 1:40": {},
    "LMA/CHN60 1:40": dict(wheel_profile="LMA", rail_profile="CHN60",
                           rail_inclination=math.atan(1.0 / 40.0), back_to_back=1.353,
                           nominal_radius=0.43),
}
FORCES = np.arange(0.0, 200e3, 5e3)      # N per axle box, until the wheel climbs
CONTACT_MODES_ABOVE = 20.0               # Hz: the suspension's modes lie below
MIN_DAMPING = 0.02
MIN_BOUNCE_DAMPING = 0.05


def loaded(**overrides):
    return WheelsetParameters(bogie=True, frame_on_centreline=True, suspended_mass=12400.0,
                              speed=100.0 / 3.6, **overrides)


def up_to_nadal(sweep):
    """The loads of `sweep` up to and including the first whose flange-climb
    ratio reaches 1 (AssertionError if none does)."""
    for k, loaded_modes in enumerate(sweep):
        if loaded_modes.flange_climb_ratio >= 1.0:
            return sweep[:k + 1]
    raise AssertionError(f"the quasi-static Nadal force is not reached: the sweep ends at "
                         f"{sweep[-1].box_force / 1e3:g} kN per box")


@pytest.mark.parametrize("pair", list(PAIRS))
def test_every_contact_mode_is_damped_up_to_the_nadal_force(pair):
    sweep = up_to_nadal(load_sweep(loaded(**PAIRS[pair]), FORCES))
    worst = min(((m.damping_ratio, m.frequency, m.kind, lm.box_force) for lm in sweep
                 for m in lm.modes if m.frequency > CONTACT_MODES_ABOVE))
    bounce = min((m.damping_ratio, m.frequency, lm.box_force) for lm in sweep for m in lm.modes
                 if m.kind == "vertical" and m.frequency > CONTACT_MODES_ABOVE)
    print(f"{pair}: Nadal reached at {sweep[-1].box_force / 1e3:g} kN per box; least damped "
          f"mode zeta {worst[0]:.3f} ({worst[1]:.1f} Hz, {worst[2]}, at {worst[3] / 1e3:g} kN); "
          f"bounce zeta >= {bounce[0]:.3f} ({bounce[1]:.1f} Hz)")
    assert worst[0] >= MIN_DAMPING
    assert bounce[0] >= MIN_BOUNCE_DAMPING


def test_the_rigid_track_flutters_before_the_nadal_force():
    """The same sweep on the rigid track (prescribed rails), Hunt & Crossley's
    damping kept: a flange-root roll mode of the wheelset on its contacts turns
    unstable before the Nadal force on S1002/UIC60 (the contact's stiffness
    alone, no rail mass to share the motion with: the reason its derailment
    times do not converge, docs/running_safety.md)."""
    sweep = up_to_nadal(load_sweep(loaded(track_model="prescribed"), FORCES))
    worst = min(((m.damping_ratio, m.frequency, m.kind, lm.box_force) for lm in sweep
                 for m in lm.modes if m.frequency > CONTACT_MODES_ABOVE))
    print(f"rigid track: least damped zeta {worst[0]:.4f} ({worst[1]:.1f} Hz, {worst[2]}, "
          f"at {worst[3] / 1e3:g} kN per box)")
    assert worst[0] < 0.0
