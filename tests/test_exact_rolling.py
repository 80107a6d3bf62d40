"""solver.contact.creep.exact_rolling: Kalker's exact steady rolling (half-space boundary
elements), the independent reference for the approximate creep models."""
import math

import pytest

from solver.contact.creep.forces import creep_forces
from solver.contact.creep.kalker import linear_creep_coefficients
from solver.contact.creep.exact_rolling import exact_rolling

A, B, FN, G, NU, MU = 8e-3, 4e-3, 82e3, 82e9, 0.28, 0.3


def test_linear_limit_reproduces_kalkers_coefficients():
    """Full adhesion (tiny creepage, large mu): the forces are Kalker's exact
    linear theory f11, f22, f23 (Kalker 1990, Table E.3). Tolerance 7 %: the
    measured first-order discretisation error of the rolling difference at
    16 x 16 cells is +5.5 % (C11, C22) and +0.8 % (C23); at 32 x 32 +2.0 %."""
    f11, f22, f23, _ = linear_creep_coefficients(A, B, G, NU)
    tiny = 1e-7
    fx = exact_rolling(tiny, 0, 0, A, B, FN, 100.0, G, NU, 16, 16).fx
    fy = exact_rolling(0, tiny, 0, A, B, FN, 100.0, G, NU, 16, 16).fy
    fs = exact_rolling(0, 0, tiny * 100, A, B, FN, 100.0, G, NU, 16, 16).fy
    assert -fx / (tiny * f11) == pytest.approx(1.0, abs=0.07)
    assert -fy / (tiny * f22) == pytest.approx(1.0, abs=0.07)
    assert -fs / (tiny * 100 * f23) == pytest.approx(1.0, abs=0.07)


def test_contact_reference_case_and_bounds():
    """CONTACT's reference case: full theory Fy/(mu Fn) = -0.6074. Measured with
    16 cells across: 32 along x -0.589, 64 along x -0.603; Aitken extrapolation
    of 16/32/64 gives -0.612 (+0.8 % from CONTACT's value). Asserted here at
    32 x 16 within 4 % of -0.6074 (the measured -3.0 % first-order error of 32
    cells); the resultant never exceeds mu Fn and the model is between the
    saturated FASTSIM value and zero traction."""
    r = exact_rolling(0.0, -6.25e-4, 0.625, A, B, FN, MU, G, NU, 32, 16)
    ratio = r.fy / (MU * FN)
    assert ratio == pytest.approx(-0.6074, rel=0.04)
    assert math.hypot(r.fx, r.fy) <= MU * FN * (1 + 1e-9)
    fastsim = creep_forces("fastsim", 0.0, -6.25e-4, 0.625, A, B, FN, MU, G, NU, 0.0)[1]
    assert fastsim / (MU * FN) < ratio < 0.0
    big = exact_rolling(0.05, 0.0, 0.0, A, B, FN, MU, G, NU, 12, 12)
    # full slip but for the first cell of each strip (traction builds up from 0 at the edge)
    assert -big.fx == pytest.approx(MU * FN, rel=1e-4)


def test_bad_input_is_rejected():
    with pytest.raises(ValueError):
        exact_rolling(float("nan"), 0, 0, A, B, FN, MU, G, NU)
    with pytest.raises(ValueError):
        exact_rolling(0, 0, 0, A, -B, FN, MU, G, NU)
