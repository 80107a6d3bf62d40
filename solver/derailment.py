"""Derailment: the flange-climb indicator (Nadal) and the geometric criteria
(issue 18 item 9), the same for every contact and creep model.

Nadal's limit (Nadal 1908; the basis of the Y/Q limits of EN 14363 and UIC
518): a flange contact at contact angle delta, with friction coefficient mu,
starts to climb when the quotient of the lateral and vertical forces of that
contact exceeds

    (Y/Q)_limit = (tan delta - mu) / (1 + mu tan delta)

(1.34 for delta = 70 deg, mu = 0.3). ``flange_climb_ratios`` gives, per wheel,
the largest Y/Q of a flange contact (contact angle >= FLANGE_CONTACT_ANGLE)
divided by its Nadal limit: above 1 the flange climbs.

A step is a derailment (``derailment_cause``), whatever the creep and contact
model, when

* the wheelset's lateral displacement is past the flange: the flange tip has
  crossed the rail's gauge face (the line the gauge is measured at, 14 mm below
  the rail top, EN 13848-1). `flange_passed_lateral` is that displacement for a
  wheel/rail setup: half the gauge minus the flange tip's lateral position at
  y = 0 (22.5 mm for S1002 on UIC60, gauge 1435 mm, back-to-back 1360 mm), or
* a loaded contact lies within CLIMB_MARGIN of the flange tip (the step check
  of solver/dynamics.py), or
* both wheels lost contact (what the contact check alone would call "wheel
  lift") while a flange had climbed -- its Nadal ratio above 1 -- within the
  last CLIMB_MEMORY seconds: the wheelset jumped off the rail on its flange.

Both wheels off the rails with no flange climbing before is a wheel lift
(contact lost), told apart by the FMU's outputs status.wheel_lift and
status.derailment.
"""
from __future__ import annotations

import math

from numba import njit

from .dynamics import C_ACTIVE, C_ANGLE, D_PYQ
from . import geometry as geo

FLANGE_CONTACT_ANGLE = math.radians(45.0)   # a contact steeper than this is on the flange
# how long a climbing flange (Nadal ratio > 1) explains a later loss of all
# contact: the jump of the flange slam of tests/test_security_derailment.py
# takes 2-5 ms from the first exceedance to both wheels off the rails; 50 ms
# is ten times that and still far below a wheelset's lateral period (~0.5 s)
CLIMB_MEMORY = 0.05
# a step that takes the wheelset from before the flange to more than this many
# times the flange's lateral reach is an integration failure, not a climb (a
# climbing flange rises over ~30 mm of flange height at most a few m/s)
JUMP_FACTOR = 3.0


@njit(cache=True)
def nadal_limit(contact_angle, friction):
    """(tan delta - mu) / (1 + mu tan delta)."""
    t = math.tan(contact_angle)
    return (t - friction) / (1.0 + friction * t)


@njit(cache=True)
def flange_climb_ratios(contact, derived, friction, out):
    """out[side] = the largest Y/Q of an active flange contact of the wheel divided
    by Nadal's limit at its contact angle (0 with no flange contact)."""
    for side in range(2):
        best = 0.0
        for i in range(contact.shape[1]):
            if contact[side, i, C_ACTIVE] > 0.5:
                delta = contact[side, i, C_ANGLE]
                if delta >= FLANGE_CONTACT_ANGLE:
                    limit = nadal_limit(delta, friction)
                    if limit > 0.0:
                        # a limit near 0 (contact angle near atan(mu), mu ~ 1: not a
                        # wheel-rail pair) is taken as 1e-3: the ratio stays bounded
                        ratio = derived[D_PYQ + geo.MAX_POINTS * side + i] / max(limit, 1.0e-3)
                        if ratio > best:
                            best = ratio
        out[side] = best


def flange_passed_lateral(setup) -> float:
    """Lateral displacement (m) at which a wheel's flange tip crosses its rail's
    gauge face (the wheel is then over the rail): gauge / 2 - (back-to-back / 2 +
    flange back to taping line + flange tip's lateral coordinate)."""
    taping = setup.back_to_back / 2.0 + float(setup.wheel.flange_back_to_taping_line)
    flange_tip = float(setup.wheel_table[0, geo.T_LAT])
    return setup.gauge / 2.0 - (taping + flange_tip)


def derailment_cause(lateral, flange_passed, climbed_side, contact_lost):
    """(side, sentence) when the state is a derailment, else None. `lateral`: the
    wheelset's lateral displacement y (m; + left); `climbed_side`: the wheel whose
    flange climbed (Nadal ratio > 1) within CLIMB_MEMORY, or -1; `contact_lost`:
    both wheels are off the rails."""
    if abs(lateral) > flange_passed:
        side = 0 if lateral > 0 else 1
        return side, (f"the lateral displacement {lateral * 1e3:.1f} mm is past the flange (the "
                      f"flange tip crosses the gauge face at {flange_passed * 1e3:.1f} mm)")
    if contact_lost and climbed_side >= 0:
        return climbed_side, (f"its flange climbed (Y/Q of the flange contact above Nadal's "
                              f"limit) within the last {CLIMB_MEMORY * 1e3:.0f} ms, then both "
                              "wheels left the rails")
    return None
