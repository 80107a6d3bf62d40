"""Tangential wheel-rail contact: creep forces.

Five models share one signature (docs/CONVENTIONS.md):

    creep_forces(model, xi, eta, phi, a, b, normal_force, friction,
                 shear_modulus, poisson, speed, options=None) -> (Fx, Fy, Mz)

- ``"kalker"``  Kalker's linear theory (Kalker 1967/1990):
  Fx = -f11*xi, Fy = -f22*eta - f23*phi, Mz = f23*eta - f33*phi,
  f11 = G*a*b*C11, f22 = G*a*b*C22, f23 = G*(a*b)^1.5*C23, f33 = G*(a*b)^2*C33.
- ``"she"``     Shen, Hedrick & Elkins (1983, VSD 12 suppl., 79-83): the linear
  resultant F = |(Fx, Fy)| is saturated by the cubic law
  F' = mu*N*[u - u^2/3 + u^3/27], u = F/(mu*N), for u < 3, F' = mu*N beyond;
  Fx, Fy are scaled by F'/F; Mz: see "Spin moment of the saturated models".
- ``"polach"``  Polach (1999, VSD 33 suppl., 728-739) with spin (corrected
  lateral creepage and the lateral spin force), extended by Polach (2005,
  Wear 258, 992-1000): adhesion reduction kA, kS and the falling friction
  mu = mu0*((1-A)*exp(-B*w) + A), w = slip velocity; Mz: see "Spin moment of
  the saturated models".
- ``"fastsim"`` Kalker's simplified theory, FASTSIM algorithm (Kalker 1982,
  VSD 11, 1-13) on the Hertz ellipse; flexibilities L1 = 8a/(3*C11*G),
  L2 = 8a/(3*C22*G), L3 = pi*a*sqrt(a/b)/(4*G*C23); traction bound mu*p with a
  parabolic (default, as in Kalker's FASTSIM) or elliptic (Hertz) pressure p.
- ``"fastrip"`` FaStrip (Sichani, Enblom & Berg 2016, VSD 54(6), 748-764):
  Kalker's strip theory with creepages normalised by C11, C22, C23 in the
  adhesion zone, mu*p (elliptic) in the slip zone in the FASTSIM direction
  (see the FaStrip block below for the equations and their source).

Units and signs (docs/CONVENTIONS.md)
-------------------------------------
- Creepages: xi (longitudinal), eta (lateral), dimensionless; phi (spin) in 1/m:
  velocity of the WHEEL relative to the RAIL at the contact point divided by
  the rolling speed V (spin: relative angular velocity about the contact
  normal / V). The rigid slip at a point (x, y) of the patch is therefore
  (xi - phi*y, eta + phi*x).
- Forces: those of the RAIL ON THE WHEEL in the contact frame: x rolling
  direction, y lateral in the contact plane, z = x cross y the contact normal
  (pointing from the rail into the wheel). N, and N*m for Mz.
- Mz is the moment of the tangential tractions about the contact normal z
  through the centre of the contact ellipse, Mz = integral(x*py - y*px) dA,
  positive counter-clockwise seen from the wheel (from +z). A positive spin
  (wheel turning counter-clockwise relative to the rail) gives a negative Mz.
- a is the semi-axis along x (rolling), b the lateral one (m); G the combined
  shear modulus (Pa), poisson the combined Poisson ratio (0 ... 0.5).

Edge cases (all models)
-----------------------
- normal_force <= 0 gives (0, 0, 0), no NaN, whatever a and b are.
- friction <= 0 gives (0, 0, 0): no tangential traction can be transmitted
  (this also applies to the linear theory, which is the limit mu -> infinity).
- speed only enters the Polach 2005 falling friction law through the slip
  velocity w = |speed| * s_C (s_C the corrected creepage magnitude). speed = 0
  gives w = 0, i.e. mu = mu0 (static friction): no NaN. The creepages
  themselves are inputs; regularising them at low speed is the caller's job.
- Non-finite input or a, b <= 0 with a load raises ValueError in the Python
  functions; the numba kernel assumes checked input (it returns zeros for
  a, b <= 0).

Numba kernels sit beside plain NumPy/Python reference versions of the same
algorithm (``*_reference``); tests/test_creep.py holds them equal.
"""

from __future__ import annotations

import math  # noqa: F401 - the generated dispatch returns math.nan for an unknown id

import numpy as np
from numba import njit

from ...errors import CreepError
from ...registry import define_dispatch
from .inputs import CreepPatch, check_poisson
from .models import CREEP_MODELS


# ----------------------------------------------------------------------------
# One kernel, one signature: the dispatch on the registry's ids
# ----------------------------------------------------------------------------

# creep_forces_kernel(model_id, patch, options) -> (Fx, Fy, Mz): the kernel of the
# CREEP_MODELS entry with that id on patch (a CreepPatch) and options (its option
# vector, N_CREEP_OPTIONS entries); (0, 0, 0) without load, friction or a patch
# (normal_force, friction, a or b not > 0); NaN for an id no entry has. The kernel
# does not check for NaN/inf input (creep_forces does). Written out from the
# registry (solver.registry.define_dispatch; dispatch_source shows it).
creep_forces_kernel = define_dispatch(
    CREEP_MODELS, "creep_forces_kernel", "patch, options", globals(),
    guard="""    if (not (patch.normal_force > 0.0) or not (patch.friction > 0.0) or not (patch.a > 0.0)
            or not (patch.b > 0.0)):
        return 0.0, 0.0, 0.0""",
    fallback="math.nan, math.nan, math.nan",
    jit=njit(cache=True, error_model="numpy", _nrt=True))


def creep_forces_reference(model_id, patch, options):
    """Plain Python/NumPy reference of `creep_forces_kernel` (same arguments): each
    entry's reference (the analytic models' kernels as plain Python, FASTSIM by its
    independent NumPy formulation, FaStrip as its kernel's plain Python)."""
    if not (patch.normal_force > 0.0) or not (patch.friction > 0.0) or not (patch.a > 0.0) \
            or not (patch.b > 0.0):
        return 0.0, 0.0, 0.0
    return CREEP_MODELS.get(int(model_id)).reference(patch, options)


def kernel_parameters(model, options=None):
    """(model_id, option vector) for `creep_forces_kernel` from a model (name or id)
    and the options dict of `creep_forces` (the key "backend" is ignored here):
    each option of the model's entry given or its default, checked against its
    declared range (CreepError otherwise)."""
    entry = CREEP_MODELS.get(model)
    opts = dict(options or {})
    opts.pop("backend", None)
    return entry.id, np.array(CREEP_MODELS.option_vector(entry.id, opts))


def creep_forces(model, xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson,
                 speed, options=None):
    """Creep forces (Fx, Fy, Mz) of the rail on the wheel, contact frame.

    model: "kalker", "she", "polach", "fastsim" or "fastrip" (or the integer ids).
    xi, eta: longitudinal and lateral creepage (-); phi: spin (1/m);
    a, b: semi-axes of the contact ellipse along x (rolling) and y (m);
    normal_force: N (N); friction: mu (for Polach: mu0); shear_modulus: G (Pa);
    poisson: nu (0 ... 0.5); speed: rolling speed V (m/s, used by Polach's
    slip velocity only). Any of them may be arrays (broadcast); then Fx, Fy,
    Mz are arrays of the broadcast shape.
    options: dict; "backend": "numba" (default, the kernel, as everywhere) or
        "numpy" (`creep_forces_reference`); for "polach": "kA", "kS", "A", "B"
        (default POLACH_1999; see POLACH_2005_DRY / _WET); for "fastsim":
        "nx", "ny" (default 20), "bound" ("parabolic" default, "elliptic") and
        "grid" ("uniform" default: CONTACT's nx x ny cells over the bounding
        rectangle; "strips": fastsim_ellipse's strips); for "fastrip": "nx", "ny"
        (default 20, cells over [-a, a] x [-b, b]).
    See the module docstring for signs, the Mz definition and the edge cases.
    """
    opts = dict(options or {})
    backend = opts.get("backend", "numba")
    if backend not in ("numpy", "numba"):
        raise CreepError(f"backend must be 'numpy' or 'numba', got {backend!r}")
    model_id, option_vector = kernel_parameters(model, opts)
    arrays = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in
                                   (xi, eta, phi, a, b, normal_force, friction,
                                    shear_modulus, poisson, speed)))
    names = ("xi", "eta", "phi", "a", "b", "normal_force", "friction",
             "shear_modulus", "poisson", "speed")
    for name, arr in zip(names, arrays):
        if not np.all(np.isfinite(arr)):
            raise CreepError(f"{name} must be finite")
    shape = arrays[0].shape
    out = np.zeros((3,) + shape)
    func = creep_forces_kernel if backend == "numba" else creep_forces_reference
    for idx in np.ndindex(shape):
        vals = [float(arr[idx]) for arr in arrays]
        xi_, eta_, phi_, a_, b_, n_, mu_, g_, nu_, v_ = vals
        if n_ <= 0.0 or mu_ <= 0.0:
            continue
        if not (a_ > 0.0 and b_ > 0.0):
            raise CreepError(f"semi-axes must be > 0 under load, got a={a_!r}, b={b_!r}")
        if not g_ > 0.0:
            raise CreepError(f"shear_modulus must be > 0, got {g_!r}")
        check_poisson(nu_)
        out[(slice(None),) + idx] = func(model_id, CreepPatch(xi_, eta_, phi_, a_, b_, n_, mu_, g_, nu_, v_),
                                         option_vector)
    if shape == ():
        return float(out[0]), float(out[1]), float(out[2])
    return out[0], out[1], out[2]
