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

import math

import numpy as np
from numba import njit

from ...errors import CreepError
from .fastrip import FASTRIP_DEFAULT_N, _fastrip_nb
from .fastsim import (
    FASTSIM_DEFAULT_N, FASTSIM_STRIPS, FASTSIM_UNIFORM, _bound_kind, _fastsim_ellipse_nb,
    _fastsim_ellipse_reference, _fastsim_grid_nb, _fastsim_grid_reference, _uniform_grid_nb,
)
from .inputs import _check_finite, _check_poisson
from .kalker import _KALKER_TABLE, _kalker, _kalker_coefficients, fastsim_flexibilities
from .saturated import POLACH_1999, _polach, _she


# ----------------------------------------------------------------------------
# Model identifiers and parameter sets
# ----------------------------------------------------------------------------
KALKER = 0
SHE = 1
POLACH = 2
FASTSIM = 3
FASTRIP = 4
MODEL_IDS = {"kalker": KALKER, "she": SHE, "polach": POLACH, "fastsim": FASTSIM,
             "fastrip": FASTRIP}


# ----------------------------------------------------------------------------
# One kernel, one signature
# ----------------------------------------------------------------------------

@njit(cache=True, error_model="numpy", _nrt=True)
def creep_forces_kernel(model_id, xi, eta, phi, a, b, normal_force, friction,
                        shear_modulus, poisson, speed, p1, p2, p3, p4, p5):
    """numba kernel of `creep_forces`; returns (Fx, Fy, Mz) (rail on wheel, contact frame).

    model_id: KALKER=0, SHE=1, POLACH=2, FASTSIM=3, FASTRIP=4. Extra parameters:
      KALKER, SHE: p1..p5 unused.
      POLACH: p1 = kA, p2 = kS (adhesion reduction, Polach 2005), p3 = A
        (mu_inf/mu0), p4 = B (s/m, friction decay with slip velocity); p5 unused.
        (1, 1, 1, 0) is Polach 1999; POLACH_2005_DRY / _WET hold the 2005 sets.
        friction is mu0; the slip velocity is w = |speed|*s_C (speed = 0 -> mu0).
      FASTSIM: p1 = nx (cells along x), p2 = ny (strips), values < 1 select
        the default 20; p3 = traction bound (0 parabolic, 1 elliptic Hertz);
        p4 = grid (0 uniform over [-a, a] x [-b, b], CONTACT's discretisation,
        default; 1 strips of their own length, as fastsim_ellipse); p5 unused.
        Variant: Kalker's (1982) three flexibilities L1, L2, L3, traction bound
        mu*p. On CONTACT's reference case (a = 8 mm, b = 4 mm, Fn = 82 kN,
        eta = -6.25e-4, phi = 0.625 1/m; published FASTSIM -0.61 ... -0.64
        by mesh, full theory -0.6074) the uniform 20 x 20 grid gives
        Fy/(mu Fn) = -0.636 (10 x 10 -0.628); refined grids converge to
        -0.644 (80 x 80), 0.7 % beyond the published band's end.
      FASTRIP: p1 = nx, p2 = ny (cells over [-a, a] x [-b, b]; values < 1
        select the default 20); p3..p5 unused.
    normal_force <= 0, friction <= 0 or a, b <= 0 give (0, 0, 0). The kernel
    does not check for NaN/inf input (the Python wrapper does).
    """
    if not (normal_force > 0.0) or not (friction > 0.0) or not (a > 0.0) or not (b > 0.0):
        return 0.0, 0.0, 0.0
    if model_id == 0:
        return _kalker(xi, eta, phi, a, b, shear_modulus, poisson)
    if model_id == 1:
        return _she(xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson)
    if model_id == 2:
        return _polach(xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson,
                       speed, p1, p2, p3, p4)
    if model_id == 4:
        nx = int(p1) if p1 >= 1.0 else 20
        ny = int(p2) if p2 >= 1.0 else 20
        dummy = np.zeros((1, 1))
        dummy_state = np.zeros((1, 1), dtype=np.int8)
        fx, fy, mz, adh, sl = _fastrip_nb(xi, eta, phi, a, b, normal_force, friction,
                                          shear_modulus, poisson, nx, ny, False,
                                          dummy, dummy, dummy_state)
        return fx, fy, mz
    # FASTSIM
    nx = int(p1) if p1 >= 1.0 else 20
    ny = int(p2) if p2 >= 1.0 else 20
    kind = 1 if p3 == 1.0 else 0
    c11, c22, c23, c33 = _kalker_coefficients(_KALKER_TABLE, a / b, poisson)
    l1 = 8.0 * a / (3.0 * c11 * shear_modulus)
    l2 = 8.0 * a / (3.0 * c22 * shear_modulus)
    l3 = math.pi * a * math.sqrt(a / b) / (4.0 * shear_modulus * c23)
    if p4 == 1.0:
        dummy = np.zeros((1, 1))
        dummy_state = np.zeros((1, 1), dtype=np.int8)
        fx, fy, mz, adh, sl = _fastsim_ellipse_nb(xi, eta, phi, a, b, normal_force, friction,
                                                  l1, l2, l3, nx, ny, kind, False,
                                                  dummy, dummy, dummy, dummy, dummy_state)
        return fx, fy, mz
    pressure, x, y, x_leading = _uniform_grid_nb(a, b, normal_force, nx, ny, kind)
    px = np.zeros((ny, nx))
    py = np.zeros((ny, nx))
    state = np.zeros((ny, nx), dtype=np.int8)
    fx, fy, mz, adh, sl = _fastsim_grid_nb(pressure, x, y, x_leading, xi, eta, phi, friction,
                                           l1, l2, l3, px, py, state)
    return fx, fy, mz


def creep_forces_reference(model_id, xi, eta, phi, a, b, normal_force, friction,
                           shear_modulus, poisson, speed, p1, p2, p3, p4, p5):
    """Plain Python/NumPy reference of `creep_forces_kernel` (same arguments): the
    analytic models' kernels run as plain Python (.py_func), FASTSIM by its
    independent NumPy formulation, FaStrip as its kernel's plain Python (.py_func)."""
    if not (normal_force > 0.0) or not (friction > 0.0) or not (a > 0.0) or not (b > 0.0):
        return 0.0, 0.0, 0.0
    if model_id == KALKER:
        return _kalker.py_func(xi, eta, phi, a, b, shear_modulus, poisson)
    if model_id == SHE:
        return _she.py_func(xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson)
    if model_id == POLACH:
        return _polach.py_func(xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson,
                               speed, p1, p2, p3, p4)
    if model_id == FASTSIM:
        nx = int(p1) if p1 >= 1.0 else FASTSIM_DEFAULT_N
        ny = int(p2) if p2 >= 1.0 else FASTSIM_DEFAULT_N
        kind = 1 if p3 == 1.0 else 0
        l1, l2, l3 = fastsim_flexibilities(a, b, shear_modulus, poisson)
        if p4 == 1.0:
            fx, fy, mz, *_ = _fastsim_ellipse_reference(xi, eta, phi, a, b, normal_force, friction,
                                                        l1, l2, l3, nx, ny, kind)
            return fx, fy, mz
        pressure, x, y, x_leading = _uniform_grid_nb.py_func(a, b, normal_force, nx, ny, kind)
        fx, fy, mz, *_ = _fastsim_grid_reference(pressure, x, y, x_leading, xi, eta, phi,
                                                 friction, l1, l2, l3)
        return fx, fy, mz
    if model_id == FASTRIP:
        nx = int(p1) if p1 >= 1.0 else FASTRIP_DEFAULT_N
        ny = int(p2) if p2 >= 1.0 else FASTRIP_DEFAULT_N
        dummy = np.zeros((1, 1))
        dummy_state = np.zeros((1, 1), dtype=np.int8)
        fx, fy, mz, *_ = _fastrip_nb.py_func(xi, eta, phi, a, b, normal_force, friction,
                                             shear_modulus, poisson, nx, ny, False,
                                             dummy, dummy, dummy_state)
        return fx, fy, mz
    raise CreepError(f"unknown model id {model_id!r}")


_OPTION_KEYS = {
    KALKER: set(),
    SHE: set(),
    POLACH: {"kA", "kS", "A", "B"},
    FASTSIM: {"nx", "ny", "bound", "grid"},
    FASTRIP: {"nx", "ny"},
}


def _model_id(model) -> int:
    if isinstance(model, str):
        key = model.strip().lower()
        if key not in MODEL_IDS:
            raise CreepError(f"unknown creep model {model!r}; choose one of {sorted(MODEL_IDS)}")
        return MODEL_IDS[key]
    if isinstance(model, (int, np.integer)) and int(model) in MODEL_IDS.values():
        return int(model)
    raise CreepError(f"unknown creep model {model!r}; choose one of {sorted(MODEL_IDS)}")


def kernel_parameters(model, options=None):
    """(model_id, p1, p2, p3, p4, p5) for `creep_forces_kernel` from a model name and
    the options dict of `creep_forces` (the key "backend" is ignored here)."""
    model_id = _model_id(model)
    opts = dict(options or {})
    opts.pop("backend", None)
    unknown = set(opts) - _OPTION_KEYS[model_id]
    if unknown:
        raise CreepError(f"unknown option(s) {sorted(unknown)} for model {model!r}; "
                         f"allowed: {sorted(_OPTION_KEYS[model_id]) + ['backend']}")
    params = [0.0, 0.0, 0.0, 0.0, 0.0]
    if model_id == POLACH:
        merged = dict(POLACH_1999)
        merged.update(opts)
        k_a, k_s, big_a, big_b = (float(merged[k]) for k in ("kA", "kS", "A", "B"))
        _check_finite(kA=k_a, kS=k_s, A=big_a, B=big_b)
        if not (k_a > 0.0 and k_s > 0.0):
            raise CreepError(f"Polach kA and kS must be > 0, got kA={k_a}, kS={k_s}")
        if not (0.0 <= big_a <= 1.0) or big_b < 0.0:
            raise CreepError(f"Polach A must be in [0, 1] and B >= 0, got A={big_a}, B={big_b}")
        params[:4] = [k_a, k_s, big_a, big_b]
    elif model_id == FASTSIM:
        nx = int(opts.get("nx", FASTSIM_DEFAULT_N))
        ny = int(opts.get("ny", FASTSIM_DEFAULT_N))
        if nx < 1 or ny < 1:
            raise CreepError("FASTSIM nx and ny must be >= 1")
        grid = opts.get("grid", "uniform")
        if grid not in ("uniform", "strips"):
            raise CreepError(f"FASTSIM grid must be 'uniform' or 'strips', got {grid!r}")
        params[:4] = [float(nx), float(ny), float(_bound_kind(opts.get("bound", "parabolic"))),
                      float(FASTSIM_STRIPS if grid == "strips" else FASTSIM_UNIFORM)]
    elif model_id == FASTRIP:
        nx = int(opts.get("nx", FASTRIP_DEFAULT_N))
        ny = int(opts.get("ny", FASTRIP_DEFAULT_N))
        if nx < 1 or ny < 1:
            raise CreepError("FaStrip nx and ny must be >= 1")
        params[:2] = [float(nx), float(ny)]
    return (model_id, *params)


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
    model_id, p1, p2, p3, p4, p5 = kernel_parameters(model, opts)
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
        _check_poisson(nu_)
        out[(slice(None),) + idx] = func(model_id, xi_, eta_, phi_, a_, b_, n_, mu_, g_, nu_, v_,
                                         p1, p2, p3, p4, p5)
    if shape == ():
        return float(out[0]), float(out[1]), float(out[2])
    return out[0], out[1], out[2]
