"""The wheel loads are continuous where the contact point jumps.

The sweeps of fmu_wheelset/validation/load_continuity.py: the wheelset in
vertical and roll equilibrium under its axle load (static wheel load 69.7 kN)
at each lateral displacement through every jump of the rigid contact point of
four profile pairs. The old model put a merged patch on its deepest minimum
with that minimum's Hertz stiffness: at the S1002/UIC60 tread jump (y = 0.23
mm) the left wheel's total Q stepped by 1.26 kN (1.8 % of the static load), no
equilibrium existed at y = 0.23 mm itself, and the point's load jumped by its
whole 70 kN.
"""
from __future__ import annotations

import pytest

from fmu_wheelset.validation import load_continuity as lc


def test_every_pair_has_standing_jumps():
    # the sweep finds the jumps it checks: tread and flange-root jumps of every
    # pair; the only jumps without an equilibrium are those onto the flange face
    found = {pair: [round(y * 1e3, 2) for y in lc.standing_jumps(pair)[0]] for pair in lc.PAIRS}
    print(found, {pair: lc.standing_jumps(pair)[1] for pair in lc.PAIRS})
    assert all(found.values()), found
    assert any(abs(y - 0.23) < 0.05 for y in found["S1002/UIC60 1:40"]), found


@pytest.mark.parametrize("pair", list(lc.PAIRS))
def test_loads_shrink_with_the_spacing_at_every_jump(pair):
    """At every jump the largest step of the left wheel's total Q and of each
    point's load shrinks as the y spacing is halved (0.01, 0.005, 0.0025 mm), as
    a continuous function's does: each halving must take off at least a quarter
    (a jump keeps its size; a smooth load halves its steps). The floor of 1e-6
    of the static load is the solver's own noise (Newton to 1e-6 m/s^2)."""
    floor = 1e-6 * lc.static_wheel_load()
    for centre in lc.standing_jumps(pair)[0]:
        steps = [lc.largest_steps(lc.sweep(pair, centre, spacing)) for spacing in lc.SPACINGS]
        print(pair, f"jump at {centre * 1e3:.3f} mm:",
              ", ".join(f"{s * 1e3:.4f} mm: dQ {dq:.1f} N, point {dp:.1f} N"
                        for s, (dq, dp) in zip(lc.SPACINGS, steps)))
        for (dq, dp), (dq_half, dp_half) in zip(steps[:-1], steps[1:]):
            assert dq_half <= 0.75 * dq + floor, (pair, centre, steps)
            assert dp_half <= 0.75 * dp + floor, (pair, centre, steps)


def test_tread_jump_of_s1002_uic60_steps_less_than_one_percent():
    """At the S1002/UIC60 1:40 tread jump the total Q of a wheel steps by
    at most 1 % of the static wheel load between neighbouring y 0.01 mm apart."""
    centre, dq = lc.tread_jump_step()
    static = lc.static_wheel_load()
    print(f"tread jump at {centre * 1e3:.3f} mm: largest step of Q {dq:.1f} N "
          f"({dq / static * 100:.3f} % of {static / 1e3:.1f} kN)")
    assert dq <= 0.01 * static
