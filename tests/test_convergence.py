"""The defaults are accurate: the model with its default integrator,
step and tolerance stays within 2 % of the static wheel load in Q and within
1 um in y of a converged run, on the three cases of
fmu_wheelset/validation/reference_data/convergence/make_references.py (loaded straight track, the Ren & Jin
curve with its flange-root impact, hard flange contact:
fmu_wheelset/validation/convergence.py), in 1 ms communication steps. The
references (RK45 at 1e-10, agreeing with RK4 at 10 us to 0.3 % of the wheel
load and 0.05 um: reference_data/convergence/references.json) are stored, not
recomputed.
"""
from __future__ import annotations

import numpy as np
import pytest

from fmu_wheelset.validation.convergence import CASES, Q_TOLERANCE, Y_TOLERANCE, case, references, run

META, REFERENCES = references()


@pytest.mark.parametrize("name", CASES)
def test_defaults_converge(name):
    reference = REFERENCES[name]
    got = run(name)                                  # the defaults
    static = META[name]["static_wheel_load_N"]
    dy = np.abs(got[:, 0] - reference[:, 0]).max()
    dq = np.abs(got[:, 1:] - reference[:, 1:]).max()
    print(f"case {name}: max |y - y_ref| {dy * 1e6:.3f} um, max |Q - Q_ref| {dq:.1f} N "
          f"({dq / static * 100:.3f} % of {static / 1e3:.1f} kN)")
    assert dy <= Y_TOLERANCE
    assert dq <= Q_TOLERANCE * static


def test_references_agree_with_their_second_method():
    # what makes them converged: two methods within a fifth of the tolerances
    for name in CASES:
        assert META[name]["rk45_vs_rk4_max_dy_m"] <= 0.2 * Y_TOLERANCE
        assert META[name]["rk45_vs_rk4_max_dQ_N"] <= 0.2 * Q_TOLERANCE * META[name]["static_wheel_load_N"]


def test_peak_wheel_load_after_a_lateral_offset():
    """The loaded wheelset released 2 mm off the centreline (case a)
    crosses the S1002/UIC60 tread jump several times; its peak Q stays within
    1.25 times the static wheel load."""
    reference = REFERENCES["a"]
    static = case("a")[4]
    peak = run("a")[:, 1:].max()
    print(f"peak Q {peak / 1e3:.2f} kN = {peak / static:.3f} x static "
          f"(converged {reference[:, 1:].max() / 1e3:.2f} kN)")
    assert peak <= 1.25 * static
