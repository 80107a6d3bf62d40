"""FASTSIM, Kalker's simplified theory on the contact ellipse."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ...errors import CreepError
from .inputs import check_finite, check_poisson
from .kalker import KALKER_TABLE, kalker_coefficients_from_table, fastsim_flexibilities


# FASTSIM options: elements per strip nx, strips ny, traction bound.
FASTSIM_DEFAULT_N = 20
FASTSIM_PARABOLIC = 0   # p = 2N/(pi a b) * (1 - x^2/a^2 - y^2/b^2)   (Kalker 1982)
FASTSIM_ELLIPTIC = 1    # p = 3N/(2 pi a b) * sqrt(1 - x^2/a^2 - y^2/b^2)  (Hertz)
# FASTSIM grids of creep_forces / the kernel:
FASTSIM_UNIFORM = 0     # nx x ny equal cells over the ellipse's bounding rectangle [-a, a] x [-b, b]
                        # (CONTACT's discretisation of the potential contact area; default)
FASTSIM_STRIPS = 1      # ny strips, each cut into nx equal cells of its own length (fastsim_ellipse)


# ----------------------------------------------------------------------------
# FASTSIM (Kalker 1982): strip algorithm
# ----------------------------------------------------------------------------
# Along each strip y = const the material enters the patch at the leading edge
# (largest x: the rolling direction is +x) and is carried backwards. The
# elastic traction predictor between two points x_prev > x is
#   px <- px - (x_prev - x) * (xi/L1 - phi*y/L3)
#   py <- py - (x_prev - x) * (eta/L2 + phi*x_mid/L3),  x_mid = (x_prev + x)/2
# (the integral of the rigid slip (xi - phi*y, eta + phi*x) divided by the
# flexibility; the midpoint is exact for the linear slip), so that in full
# adhesion p = -(1/L) * integral_x^{x_lead} slip dx', the simplified-theory
# solution whose total forces are -f11*xi, -f22*eta - f23*phi by the choice of
# L1, L2, L3. Where |p| exceeds the bound mu*p_n the point slips and p is
# scaled back onto the bound (the traction then opposes the slip). Tractions
# are evaluated at cell centres; a cell is "adhesion" when the predictor is
# within the bound, "slip" otherwise.

_EXTERIOR = 0
_ADHESION = 1
_SLIP = 2


@njit(cache=True, error_model="numpy", _nrt=False)
def march_cell(px, py, x_prev, x, wx, eta, phi, l2, l3, bound):
    """One cell of FASTSIM's march along a strip (Kalker 1982): the tractions
    (px, py) of the cell ahead, at x_prev, carried to this cell, at x, by the
    rigid slip over the step (wx along; eta / L2 + phi x / L3 across, x at the
    step's middle), then held to the traction bound. Returns (px, py, state:
    2 slip, 1 adhesion)."""
    h = x_prev - x
    xm = 0.5 * (x_prev + x)
    px = px - h * wx
    py = py - h * (eta / l2 + phi * xm / l3)
    t = math.hypot(px, py)
    if t > bound:
        if t > 0.0:
            r = bound / t
            px = px * r
            py = py * r
        return px, py, 2
    return px, py, 1


@njit(cache=True, error_model="numpy", _nrt=False)
def add_cell(totals, tx, ty, x, y, da, state):
    """totals (Fx, Fy, Mz, adhesion area, slip area) with one cell's traction
    (tx, ty) at (x, y), of area da, in `state` (1 adhesion, 2 slip) added."""
    fx, fy, mz, adh, slip_area = totals
    if state == 1:
        adh += da
    else:
        slip_area += da
    return fx + tx * da, fy + ty * da, mz + (x * ty - y * tx) * da, adh, slip_area


@njit(cache=True, error_model="numpy", _nrt=False)
def _pressure_shape(x, y, a, b, bound_kind):
    """The traction bound's shape at (x, y) on the ellipse a, b: 1 - (x/a)^2 -
    (y/b)^2, 0 outside; its square root for the elliptic (Hertz) bound
    (bound_kind 1), itself for the parabolic one (Kalker 1982)."""
    s = 1.0 - (x / a) ** 2 - (y / b) ** 2
    if s < 0.0:
        s = 0.0
    if bound_kind == 1:
        s = math.sqrt(s)
    return s


@njit(cache=True, error_model="numpy", _nrt=False)
def _fastsim_ellipse_nb(creepages, ellipse, load, flexibilities, grid, out):
    """FASTSIM on the ellipse's strips: (Fx, Fy, Mz, adhesion area, slip area).
    creepages (xi, eta, phi); ellipse (a, b); load (N, mu); flexibilities (L1,
    L2, L3); grid (nx, ny, bound kind); out (store, x, p, px, py, state): with
    store the cells' positions, pressures, tractions and states are written
    into the (ny, nx) arrays."""
    xi, eta, phi = creepages
    a, b = ellipse
    n, mu = load
    l1, l2, l3 = flexibilities
    nx, ny, bound_kind = grid
    store, x_out, p_out, px_out, py_out, state_out = out
    dy = 2.0 * b / ny
    # normalisation of the discrete pressure so that sum(p dA) = N exactly
    total_shape = 0.0
    for j in range(ny):
        y = -b + (j + 0.5) * dy
        aj = a * math.sqrt(max(1.0 - (y / b) ** 2, 0.0))
        dxj = 2.0 * aj / nx
        for i in range(nx):
            x = aj - (i + 0.5) * dxj
            total_shape += _pressure_shape(x, y, a, b, bound_kind) * dxj * dy
    p_scale = n / total_shape
    totals = (0.0, 0.0, 0.0, 0.0, 0.0)
    for j in range(ny):
        y = -b + (j + 0.5) * dy
        aj = a * math.sqrt(max(1.0 - (y / b) ** 2, 0.0))
        dxj = 2.0 * aj / nx
        da = dxj * dy
        wx = xi / l1 - phi * y / l3
        px = 0.0
        py = 0.0
        x_prev = aj
        for i in range(nx):
            x = aj - (i + 0.5) * dxj
            pn = p_scale * _pressure_shape(x, y, a, b, bound_kind)
            px, py, state = march_cell(px, py, x_prev, x, wx, eta, phi, l2, l3, mu * pn)
            totals = add_cell(totals, px, py, x, y, da, state)
            if store:
                x_out[j, i] = x
                p_out[j, i] = pn
                px_out[j, i] = px
                py_out[j, i] = py
                state_out[j, i] = state
            x_prev = x
    return totals


def _march_arrays(ny, nx):
    """The NumPy references' march: the tractions and states of every cell
    (ny, nx) and the tractions carried along each strip (ny), all zero."""
    return (np.zeros((ny, nx)), np.zeros((ny, nx)), np.zeros((ny, nx), dtype=np.int8),
            np.zeros(ny), np.zeros(ny))


def _fastsim_ellipse_reference(xi, eta, phi, a, b, n, mu, l1, l2, l3, nx, ny, bound_kind):
    """NumPy reference of `_fastsim_ellipse_nb`: the same march, vectorised over
    the strips. Returns (fx, fy, mz, adhesion_area, slip_area, x, p, px, py, state)."""
    dy = 2.0 * b / ny
    y = -b + (np.arange(ny) + 0.5) * dy
    aj = a * np.sqrt(np.maximum(1.0 - (y / b) ** 2, 0.0))
    dxj = 2.0 * aj / nx
    x = aj[:, None] - (np.arange(nx)[None, :] + 0.5) * dxj[:, None]
    shape = np.maximum(1.0 - (x / a) ** 2 - (y[:, None] / b) ** 2, 0.0)
    if bound_kind == 1:
        shape = np.sqrt(shape)
    da = (dxj * dy)[:, None] * np.ones((1, nx))
    p = n / np.sum(shape * da) * shape
    px_all, py_all, state, px, py = _march_arrays(ny, nx)
    wx = xi / l1 - phi * y / l3
    x_prev = aj.copy()
    for i in range(nx):
        xc = x[:, i]
        h = x_prev - xc
        xm = 0.5 * (x_prev + xc)
        px = px - h * wx
        py = py - h * (eta / l2 + phi * xm / l3)
        bound = mu * p[:, i]
        t = np.hypot(px, py)
        slip = t > bound
        r = np.where(slip & (t > 0.0), bound / np.where(t > 0.0, t, 1.0), 1.0)
        px = px * r
        py = py * r
        px_all[:, i] = px
        py_all[:, i] = py
        state[:, i] = np.where(slip, _SLIP, _ADHESION)
        x_prev = xc
    fx = float(np.sum(px_all * da))
    fy = float(np.sum(py_all * da))
    mz = float(np.sum((x * py_all - y[:, None] * px_all) * da))
    adh = float(np.sum(da[state == _ADHESION]))
    sl = float(np.sum(da[state == _SLIP]))
    return fx, fy, mz, adh, sl, x, p, px_all, py_all, state


@njit(cache=True, error_model="numpy", _nrt=False)
def fastsim_grid_kernel(grid, creepages, mu, flexibilities, out):
    """FASTSIM on a pressure grid: (Fx, Fy, Mz, adhesion area, slip area). grid
    (pressure (ny, nx), x (nx,), y (ny,), x_leading (ny,)); creepages (xi, eta,
    phi); flexibilities (L1, L2, L3); out (px, py, state), filled."""
    pressure, x, y, x_leading = grid
    xi, eta, phi = creepages
    l1, l2, l3 = flexibilities
    px_out, py_out, state_out = out
    ny, nx = pressure.shape
    dx = x[1] - x[0] if nx > 1 else 1.0
    dy = y[1] - y[0] if ny > 1 else 1.0
    da = dx * dy
    totals = (0.0, 0.0, 0.0, 0.0, 0.0)
    for j in range(ny):
        yj = y[j]
        xl = x_leading[j]
        wx = xi / l1 - phi * yj / l3
        px = 0.0
        py = 0.0
        x_prev = xl
        for i in range(nx - 1, -1, -1):
            xc = x[i]
            pn = pressure[j, i]
            if xc >= xl or pn <= 0.0:
                # outside the patch: no traction; a new leading edge starts at
                # the front boundary of the next cell (or at x_leading)
                px = 0.0
                py = 0.0
                x_prev = min(xl, xc - 0.5 * dx)
                px_out[j, i] = 0.0
                py_out[j, i] = 0.0
                state_out[j, i] = 0
                continue
            px, py, state = march_cell(px, py, x_prev, xc, wx, eta, phi, l2, l3, mu * pn)
            totals = add_cell(totals, px, py, xc, yj, da, state)
            px_out[j, i] = px
            py_out[j, i] = py
            state_out[j, i] = state
            x_prev = xc
    return totals


def _fastsim_grid_reference(pressure, x, y, x_leading, xi, eta, phi, mu, l1, l2, l3):
    """NumPy reference of `fastsim_grid_kernel`, vectorised over the strips."""
    ny, nx = pressure.shape
    dx = x[1] - x[0] if nx > 1 else 1.0
    dy = y[1] - y[0] if ny > 1 else 1.0
    da = dx * dy
    px_all, py_all, state, px, py = _march_arrays(ny, nx)
    wx = xi / l1 - phi * y / l3
    x_prev = np.array(x_leading, dtype=float)
    for i in range(nx - 1, -1, -1):
        xc = x[i]
        pn = pressure[:, i]
        outside = (xc >= x_leading) | (pn <= 0.0)
        h = x_prev - xc
        xm = 0.5 * (x_prev + xc)
        px = px - h * wx
        py = py - h * (eta / l2 + phi * xm / l3)
        bound = mu * pn
        t = np.hypot(px, py)
        slip = t > bound
        r = np.where(slip & (t > 0.0), bound / np.where(t > 0.0, t, 1.0), 1.0)
        px = np.where(outside, 0.0, px * r)
        py = np.where(outside, 0.0, py * r)
        px_all[:, i] = px
        py_all[:, i] = py
        state[:, i] = np.where(outside, _EXTERIOR, np.where(slip, _SLIP, _ADHESION))
        x_prev = np.where(outside, np.minimum(x_leading, xc - 0.5 * dx), xc)
    fx = float(np.sum(px_all) * da)
    fy = float(np.sum(py_all) * da)
    mz = float(np.sum(x[None, :] * py_all - y[:, None] * px_all) * da)
    adh = float(np.count_nonzero(state == _ADHESION) * da)
    sl = float(np.count_nonzero(state == _SLIP) * da)
    return fx, fy, mz, adh, sl, px_all, py_all, state


@dataclass(frozen=True)
class FastsimResult:
    """Detailed FASTSIM result (SI units).

    fx, fy, mz: total forces (N) and moment (N*m) of the rail on the wheel,
        contact frame, as in `creep_forces`.
    x: (ny, nx) cell-centre x (m); y: (ny,) strip-centre y (m).
    cell_area: (ny, nx) area of each cell (m^2).
    pressure: (ny, nx) normal pressure p_n used for the bound mu*p_n (Pa).
    traction_x, traction_y: (ny, nx) tangential traction on the wheel (Pa).
    state: (ny, nx) int8: 0 outside the patch, 1 adhesion, 2 slip.
    adhesion_area, slip_area: areas of the adhesion and slip zones (m^2).
    """
    fx: float
    fy: float
    mz: float
    x: np.ndarray
    y: np.ndarray
    cell_area: np.ndarray
    pressure: np.ndarray
    traction_x: np.ndarray
    traction_y: np.ndarray
    state: np.ndarray
    adhesion_area: float
    slip_area: float


def _bound_kind(bound) -> int:
    if bound in ("parabolic", FASTSIM_PARABOLIC):
        return FASTSIM_PARABOLIC
    if bound in ("elliptic", "hertz", FASTSIM_ELLIPTIC):
        return FASTSIM_ELLIPTIC
    raise CreepError(f"FASTSIM bound must be 'parabolic' or 'elliptic', got {bound!r}")


def fastsim_ellipse(xi, eta, phi, a, b, normal_force, friction, shear_modulus, poisson,
                    nx=FASTSIM_DEFAULT_N, ny=FASTSIM_DEFAULT_N, bound="parabolic",
                    flexibilities=None, backend="numba") -> FastsimResult:
    """FASTSIM on the Hertz ellipse x^2/a^2 + y^2/b^2 <= 1.

    ny strips of equal width 2b/ny, each cut into nx cells of equal length
    2*a(y)/nx, a(y) = a*sqrt(1 - y^2/b^2) at the strip centre. The traction
    bound is friction * p_n with p_n parabolic (Kalker's FASTSIM, default) or
    elliptic (Hertz), scaled so that sum(p_n dA) = normal_force exactly.
    flexibilities: (L1, L2, L3) in m/Pa; default `fastsim_flexibilities`.
    backend: "numba" (default) or "numpy" (the reference implementation).
    Zero normal force or friction <= 0 gives zero tractions.
    """
    xi, eta, phi, a, b = float(xi), float(eta), float(phi), float(a), float(b)
    normal_force, friction = float(normal_force), float(friction)
    check_finite(xi=xi, eta=eta, phi=phi, a=a, b=b, normal_force=normal_force,
                  friction=friction, shear_modulus=float(shear_modulus))
    if not (a > 0.0 and b > 0.0):
        raise CreepError(f"semi-axes must be > 0, got a={a!r}, b={b!r}")
    nx, ny = int(nx), int(ny)
    if nx < 1 or ny < 1:
        raise CreepError("nx and ny must be >= 1")
    kind = _bound_kind(bound)
    if flexibilities is None:
        if not shear_modulus > 0.0:
            raise CreepError("shear_modulus must be > 0")
        check_poisson(float(poisson))
        flexibilities = fastsim_flexibilities(a, b, shear_modulus, poisson)
    l1, l2, l3 = (float(v) for v in flexibilities)
    n_eff = max(normal_force, 0.0)
    mu_eff = max(friction, 0.0)
    if backend == "numba":
        x = np.zeros((ny, nx))
        p = np.zeros((ny, nx))
        px = np.zeros((ny, nx))
        py = np.zeros((ny, nx))
        state = np.zeros((ny, nx), dtype=np.int8)
        fx, fy, mz, adh, sl = _fastsim_ellipse_nb((xi, eta, phi), (a, b), (n_eff, mu_eff),
                                                  (l1, l2, l3), (nx, ny, kind),
                                                  (True, x, p, px, py, state))
    elif backend == "numpy":
        fx, fy, mz, adh, sl, x, p, px, py, state = _fastsim_ellipse_reference(
            xi, eta, phi, a, b, n_eff, mu_eff, l1, l2, l3, nx, ny, kind)
    else:
        raise CreepError(f"backend must be 'numba' or 'numpy', got {backend!r}")
    dy = 2.0 * b / ny
    y = -b + (np.arange(ny) + 0.5) * dy
    aj = a * np.sqrt(np.maximum(1.0 - (y / b) ** 2, 0.0))
    cell_area = np.repeat((2.0 * aj / nx * dy)[:, None], nx, axis=1)
    return FastsimResult(fx, fy, mz, x, y, cell_area, p, px, py, state, adh, sl)


def fastsim_grid(pressure, x, y, xi, eta, phi, friction, flexibilities, x_leading=None,
                 backend="numba") -> FastsimResult:
    """FASTSIM strip algorithm on an arbitrary (non-Hertzian) pressure grid.

    pressure: (ny, nx) normal pressure at the cell centres (Pa), >= 0; cells
        with p <= 0 are outside the contact (a strip may hold several patches).
    x: (nx,) increasing, uniformly spaced cell-centre x (m, rolling direction);
    y: (ny,) uniformly spaced strip-centre y (m). Grid spacing dx = x[1]-x[0],
        dy = y[1]-y[0].
    x_leading: (ny,) x of the leading edge of each strip (m); the traction
        starts from zero there. Default: the front boundary (x + dx/2) of the
        foremost loaded cell of the strip. Loaded cells ahead of x_leading are
        treated as outside.
    flexibilities: (L1, L2, L3) in m/Pa (e.g. `fastsim_flexibilities` of an
        equivalent ellipse).
    Returns a `FastsimResult` (forces of the rail on the wheel, adhesion and
    slip areas, traction grids).
    """
    pressure = np.ascontiguousarray(pressure, dtype=np.float64)
    x = np.ascontiguousarray(x, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    if pressure.ndim != 2 or pressure.shape != (y.size, x.size):
        raise CreepError(f"pressure must have shape (len(y), len(x)) = {(y.size, x.size)}, "
                         f"got {pressure.shape}")
    if not (np.all(np.isfinite(pressure)) and np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise CreepError("pressure, x and y must be finite")
    for name, arr in (("x", x), ("y", y)):
        if arr.size > 1:
            d = np.diff(arr)
            if not (d[0] > 0.0 and np.allclose(d, d[0], rtol=1e-9, atol=0.0)):
                raise CreepError(f"{name} must be increasing with a uniform step")
    xi, eta, phi, friction = float(xi), float(eta), float(phi), float(friction)
    check_finite(xi=xi, eta=eta, phi=phi, friction=friction)
    l1, l2, l3 = (float(v) for v in flexibilities)
    if not (l1 > 0.0 and l2 > 0.0 and l3 > 0.0):
        raise CreepError("flexibilities must be > 0")
    ny, nx = pressure.shape
    dx = x[1] - x[0] if nx > 1 else 1.0
    if x_leading is None:
        x_leading = np.full(ny, -np.inf)
        for j in range(ny):
            loaded = np.nonzero(pressure[j] > 0.0)[0]
            if loaded.size:
                x_leading[j] = x[loaded[-1]] + 0.5 * dx
    x_leading = np.ascontiguousarray(x_leading, dtype=np.float64)
    if x_leading.shape != (ny,):
        raise CreepError(f"x_leading must have shape ({ny},)")
    mu_eff = max(friction, 0.0)
    if backend == "numba":
        px = np.zeros((ny, nx))
        py = np.zeros((ny, nx))
        state = np.zeros((ny, nx), dtype=np.int8)
        fx, fy, mz, adh, sl = fastsim_grid_kernel((pressure, x, y, x_leading), (xi, eta, phi),
                                               mu_eff, (l1, l2, l3), (px, py, state))
    elif backend == "numpy":
        fx, fy, mz, adh, sl, px, py, state = _fastsim_grid_reference(
            pressure, x, y, x_leading, xi, eta, phi, mu_eff, l1, l2, l3)
    else:
        raise CreepError(f"backend must be 'numba' or 'numpy', got {backend!r}")
    dy = y[1] - y[0] if ny > 1 else 1.0
    xx = np.repeat(x[None, :], ny, axis=0)
    cell_area = np.full((ny, nx), dx * dy)
    return FastsimResult(fx, fy, mz, xx, y.copy(), cell_area, pressure.copy(), px, py, state, adh, sl)


@njit(cache=True, error_model="numpy", _nrt=True)
def uniform_grid_kernel(a, b, normal_force, nx, ny, bound_kind):
    """CONTACT-style FASTSIM grid: nx x ny equal cells over [-a, a] x [-b, b];
    parabolic (0) or elliptic (1) pressure at the cell centres, scaled so that
    sum(p dA) = N exactly; the leading edge of each strip at the ellipse,
    x_lead = a sqrt(1 - y^2/b^2)."""
    dx = 2.0 * a / nx
    dy = 2.0 * b / ny
    x = np.empty(nx)
    y = np.empty(ny)
    for i in range(nx):
        x[i] = -a + (i + 0.5) * dx
    x_leading = np.empty(ny)
    for j in range(ny):
        y[j] = -b + (j + 0.5) * dy
        x_leading[j] = a * math.sqrt(max(1.0 - (y[j] / b) ** 2, 0.0))
    pressure = np.zeros((ny, nx))
    total = 0.0
    for j in range(ny):
        for i in range(nx):
            s = 1.0 - (x[i] / a) ** 2 - (y[j] / b) ** 2
            if s > 0.0:
                pressure[j, i] = math.sqrt(s) if bound_kind == 1 else s
                total += pressure[j, i]
    if total > 0.0:
        scale = normal_force / (total * dx * dy)
        for j in range(ny):
            for i in range(nx):
                pressure[j, i] *= scale
    return pressure, x, y, x_leading


@njit(cache=True, error_model="numpy", _nrt=True)
def fastsim_creep(patch, options):
    """FASTSIM on a CreepPatch, options (nx, ny, bound, grid): (Fx, Fy, Mz).
    nx, ny below 1 select FASTSIM_DEFAULT_N; bound 0 parabolic, 1 elliptic;
    grid 0 uniform (CONTACT's cells over [-a, a] x [-b, b]), 1 strips."""
    xi, eta, phi, a, b = patch.xi, patch.eta, patch.phi, patch.a, patch.b
    normal_force, friction, shear_modulus = patch.normal_force, patch.friction, patch.shear_modulus
    nx = int(options[0]) if options[0] >= 1.0 else 20
    ny = int(options[1]) if options[1] >= 1.0 else 20
    kind = 1 if options[2] == 1.0 else 0
    c11, c22, c23, c33 = kalker_coefficients_from_table(KALKER_TABLE, a / b, patch.poisson)
    l1 = 8.0 * a / (3.0 * c11 * shear_modulus)
    l2 = 8.0 * a / (3.0 * c22 * shear_modulus)
    l3 = math.pi * a * math.sqrt(a / b) / (4.0 * shear_modulus * c23)
    if options[3] == 1.0:
        dummy = np.zeros((1, 1))
        dummy_state = np.zeros((1, 1), dtype=np.int8)
        fx, fy, mz, adh, sl = _fastsim_ellipse_nb((xi, eta, phi), (a, b), (normal_force, friction),
                                                  (l1, l2, l3), (nx, ny, kind),
                                                  (False, dummy, dummy, dummy, dummy, dummy_state))
        return fx, fy, mz
    pressure, x, y, x_leading = uniform_grid_kernel(a, b, normal_force, nx, ny, kind)
    px = np.zeros((ny, nx))
    py = np.zeros((ny, nx))
    state = np.zeros((ny, nx), dtype=np.int8)
    fx, fy, mz, adh, sl = fastsim_grid_kernel((pressure, x, y, x_leading), (xi, eta, phi),
                                           friction, (l1, l2, l3), (px, py, state))
    return fx, fy, mz


def fastsim_creep_reference(patch, options):
    """fastsim_creep by the independent NumPy formulation of FASTSIM."""
    nx = int(options[0]) if options[0] >= 1.0 else FASTSIM_DEFAULT_N
    ny = int(options[1]) if options[1] >= 1.0 else FASTSIM_DEFAULT_N
    kind = 1 if options[2] == 1.0 else 0
    l1, l2, l3 = fastsim_flexibilities(patch.a, patch.b, patch.shear_modulus, patch.poisson)
    if options[3] == 1.0:
        fx, fy, mz, *_ = _fastsim_ellipse_reference(patch.xi, patch.eta, patch.phi, patch.a, patch.b,
                                                    patch.normal_force, patch.friction,
                                                    l1, l2, l3, nx, ny, kind)
        return fx, fy, mz
    pressure, x, y, x_leading = uniform_grid_kernel.py_func(patch.a, patch.b, patch.normal_force,
                                                         nx, ny, kind)
    fx, fy, mz, *_ = _fastsim_grid_reference(pressure, x, y, x_leading, patch.xi, patch.eta,
                                             patch.phi, patch.friction, l1, l2, l3)
    return fx, fy, mz
