"""Running safety: the flange-climb indicators (Nadal, Weinstock) and the
criteria of a derailment, the same for every contact model, integrator and step.

Indicators (outputs; a warning, not a derailment):

* Nadal's limit (Nadal 1896, "Théorie de la stabilité des locomotives, part 2:
  mouvement de lacet", Annales des Mines 10; the basis of the Y/Q limits of
  EN 14363 and UIC 518): a flange contact at contact angle delta, with
  friction coefficient mu, starts to climb when the quotient of the lateral
  and vertical forces of that contact exceeds

      (Y/Q)_limit = (tan delta - mu) / (1 + mu tan delta)

  (1.34 for delta = 70 deg, mu = 0.3). ``flange_climb_ratios`` gives, per
  wheel, the largest Y/Q of a flange contact (contact angle >=
  FLANGE_CONTACT_ANGLE) divided by its Nadal limit: above 1 the flange
  climbs, and the step's bookkeeping (solver/model/fast_step.py update_safety)
  counts how long and over what distance the ratio has stayed above 1 (a
  flange climb needs both: EN 14363 averages Y/Q over a 2 m window for the
  same reason).
* Weinstock's axle-sum criterion (Weinstock 1984, "Wheel climb derailment
  criteria for evaluation of rail vehicle safety", ASME 84-WA/RT-1; also in
  49 CFR 213.333 as the "truck side L/V" family of limits): the sum of |Y/Q|
  of the two wheels of an axle against the Nadal limit of the flanging wheel
  plus the friction coefficient of the other (whose |Y/Q| cannot exceed mu):
  ``weinstock`` gives the sum and its ratio to that limit.

Derailment (a discarded step, fmi2Discard then fmi2Terminated in the FMU),
reported at the end of the first communication step in which one holds:

* a loaded contact point reaches the flange tip (within CLIMB_MARGIN, 3 mm,
  of it, solver/dynamics/rhs.py step_problem): the wheel has risen over its rail
  by the flange height;
* a wheel is off its rail head: the flange tip has crossed the rail's gauge
  face (the lateral displacement is past `flange_passed_lateral`: the wheel
  is over the rail on the field side), or the rail head's centre lies beyond
  the field-side end of the wheel profile (step_problem: the wheel has
  dropped inside the gauge);
* both wheels have been off their rails for longer than `airborne_limit`: a
  wheelset that falls under gravity (at least: the suspension only adds to
  it) for that long has been more than the flange height above its rails, so
  its flanges no longer guide it; or both are more than the flange height
  above their rails already.
"""

from __future__ import annotations

import math

from numba import njit

from ..layout import (
    C_ACTIVE, C_ANGLE, D_PYQ, D_YQ, MAX_POINTS, S_RAIL, S_Y, T_H, T_LAT, U_RAIL_MOTION,
)
from .rhs import GRAVITY


FLANGE_CONTACT_ANGLE = math.radians(45.0)   # a contact steeper than this is on the flange
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
    by Nadal's limit at its contact angle (0 with no flange contact). Returns the
    contact angle of the flange contact with the largest ratio of both wheels (0
    with none)."""
    angle = 0.0
    largest = -math.inf
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
                        ratio = derived[D_PYQ + MAX_POINTS * side + i] / max(limit, 1.0e-3)
                        best = max(best, ratio)
                        if ratio > largest:
                            largest = ratio
                            angle = delta
        out[side] = best
    return angle


@njit(cache=True)
def weinstock(derived, flange_angle, friction):
    """(sum of |Y/Q| of both wheels, its ratio to Weinstock's limit: Nadal's limit
    at the flange contact angle plus mu; 0 without a flange contact)."""
    total = abs(derived[D_YQ]) + abs(derived[D_YQ + 1])
    if flange_angle <= 0.0:
        return total, 0.0
    limit = nadal_limit(flange_angle, friction) + friction
    return total, total / max(limit, 1.0e-3)


def flange_height(setup) -> float:
    """The flange height of the wheel profile: its radius increase at the flange
    tip over the taping line (m)."""
    return float(setup.wheel_table[0, T_H])


def airborne_limit(setup) -> float:
    """The longest time (s) both wheels may be off their rails: 2 sqrt(2 h / g),
    the flight of a body that rises by the flange height h and falls back under
    gravity alone (0.151 s for a 28 mm flange). A wheelset is pulled down by its
    weight and its suspension, so a longer flight means it has risen more than
    the flange height."""
    return 2.0 * math.sqrt(2.0 * max(flange_height(setup), 1e-3) / GRAVITY)


@njit(cache=True, error_model="numpy", _nrt=False)
def lateral_towards_flange(state, inputs):
    """How far (m) the wheelset has moved towards a flange relative to that
    flange's rail: the larger of y - (left rail's lateral motion) and
    (right rail's lateral motion) - y, the rails' motion the rail inputs plus the
    lumped rail bodies' displacement (a rail pushed outwards takes its wheel
    with it: the flange passes the gauge face only relative to the rail)."""
    y = state[S_Y]
    left = inputs[U_RAIL_MOTION] + state[S_RAIL]
    right = inputs[U_RAIL_MOTION + 3] + state[S_RAIL + 3]
    return max(y - left, right - y)


def flange_passed_lateral(setup) -> float:
    """Lateral displacement (m) at which a wheel's flange tip crosses its rail's
    gauge face (the wheel is then over the rail): gauge / 2 - (back-to-back / 2 +
    flange back to taping line + flange tip's lateral coordinate)."""
    taping = setup.back_to_back / 2.0 + float(setup.wheel.flange_back_to_taping_line)
    flange_tip = float(setup.wheel_table[0, T_LAT])
    return setup.gauge / 2.0 - (taping + flange_tip)
