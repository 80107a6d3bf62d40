"""Non-Hertzian normal wheel-rail contact: Kik-Piotrowski, exact boundary elements, contact planes,
pressure maps.

Conventions as in solver.contact.normal (docs/CONVENTIONS.md): x rolling, y lateral,
SI units (m, Pa, N); wheel and rail of one material (Young's modulus
``young``, Poisson's ratio ``poisson``), combined modulus E* = E / (2 (1 - nu^2)).
Each hot loop is a numba kernel (names ending in ``_kernel``) with a plain
NumPy reference beside it; tests/test_normal.py holds the two equal.

Sources (facts and formulas only; the code is written here):

* Kik & Piotrowski (1996); Piotrowski & Kik (2008), "A simplified model of
  wheel/rail contact mechanics for non-Hertzian problems and its application in
  rail vehicle dynamic simulations", Vehicle System Dynamics 46(1-2):27-48:
  the patch is the interpenetration region at the virtual penetration
  eps*delta (eps = 0.55), the pressure is semi-elliptic along x in every
  lateral strip, and the load follows from the condition that the elastic
  approach at the point of maximum penetration equals delta.
* Influence coefficients of a uniformly loaded rectangle on the half-space
  (Love 1929, Phil. Trans. R. Soc. A 228:377; Johnson 1985, section 3.9); the
  constrained conjugate-gradient method with the total load as constraint:
  Polonsky & Keer (1999), Wear 231:206-219 (with the load or the approach
  prescribed); the matrix-vector product by discrete convolution and FFT
  with zero padding: Liu, Wang & Liu (2000), Wear 243:101-111.
* The contact plane of a wheel on its rail (contact_plane_gap,
  wheel_normal_contact): the planar contact approach of Vollebregt's CONTACT
  (E.A.H. Vollebregt, CONTACT user guide, module 1, planar contact, D = 2):
  each patch in the plane tangent to the surfaces, the gap of the exact
  surfaces measured along its normal, the wheel lowered until the normal
  forces carry the vertical load. Checked against CONTACT
  (tests/data/contact_reference, docs/contact_mechanics.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence

import numpy as np
from numba import njit
from scipy import fft as scipy_fft, ndimage

from .hertz import NormalContactError, check_material


# ---------------------------------------------------------------------------
# Influence coefficients of uniformly loaded rectangles (Love 1929)
# ---------------------------------------------------------------------------

def rectangle_primitive(u, v):
    """Signed integral over [0,u] x [0,v] of 1/sqrt(x^2+y^2) (NumPy, vectorised)."""
    au = np.abs(u)
    av = np.abs(v)
    safe_u = np.where(au > 0.0, au, 1.0)
    safe_v = np.where(av > 0.0, av, 1.0)
    value = (np.where(au > 0.0, au * np.arcsinh(av / safe_u), 0.0)
             + np.where(av > 0.0, av * np.arcsinh(au / safe_v), 0.0))
    return np.sign(u) * np.sign(v) * value


def _rectangle_integral(x, y, half_x, half_y):
    """Integral of 1/r over the rectangle |xi| <= half_x, |eta| <= half_y seen from (x, y)."""
    return (rectangle_primitive(x + half_x, y + half_y) - rectangle_primitive(x - half_x, y + half_y)
            - rectangle_primitive(x + half_x, y - half_y) + rectangle_primitive(x - half_x, y - half_y))


def influence_coefficients(nx, ny, dx, dy, young, poisson):
    """Normal displacement (m per Pa) at the centre of element (i, j) offsets from a unit pressure.

    Returns an (nx, ny) array C[i, j] for element offsets i along x, j along y:
    the combined approach of both surfaces under 1 Pa on one dx x dy
    rectangle, C = (1/(pi E*)) * integral of 1/r over the rectangle (Love 1929).
    """
    check_material(young, poisson)
    e_star = young / (2.0 * (1.0 - poisson * poisson))
    x = np.arange(nx, dtype=float)[:, None] * dx
    y = np.arange(ny, dtype=float)[None, :] * dy
    return _rectangle_integral(x, y, 0.5 * dx, 0.5 * dy) / (math.pi * e_star)


@njit(cache=True)
def rectangle_primitive_kernel(u, v):
    au = abs(u)
    av = abs(v)
    value = 0.0
    if au > 0.0:
        value += au * math.asinh(av / au)
    if av > 0.0:
        value += av * math.asinh(au / av)
    if (u < 0.0) != (v < 0.0):
        return -value
    return value


@njit(cache=True)
def influence_coefficients_kernel(nx, ny, dx, dy, young, poisson):
    """numba version of influence_coefficients() (same (nx, ny) array, m/Pa)."""
    e_star = young / (2.0 * (1.0 - poisson * poisson))
    hx = 0.5 * dx
    hy = 0.5 * dy
    out = np.empty((nx, ny))
    for i in range(nx):
        x = i * dx
        for j in range(ny):
            y = j * dy
            out[i, j] = (rectangle_primitive_kernel(x + hx, y + hy) - rectangle_primitive_kernel(x - hx, y + hy)
                         - rectangle_primitive_kernel(x + hx, y - hy)
                         + rectangle_primitive_kernel(x - hx, y - hy)) / (math.pi * e_star)
    return out


# ---------------------------------------------------------------------------
# Exact (boundary-element) normal contact on a rectangular grid
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ContactPatch:
    """One connected contact patch of an exact solution. SI units.

    label: its number in ExactNormalResult.labels (1, 2, ...; largest force
    first); area (m^2); normal_force (N); peak_pressure (Pa); centroid_x,
    centroid_y: centre of pressure (m); length, width: extents along x and y
    (m, whole elements); elements: number of elements in contact.
    """

    label: int
    area: float
    normal_force: float
    peak_pressure: float
    centroid_x: float
    centroid_y: float
    length: float
    width: float
    elements: int


@dataclass(frozen=True)
class ExactNormalResult:
    """Exact normal solution on a grid. SI units (m, Pa, N).

    pressure: (nx, ny) element pressures (x = axis 0, rolling; y = axis 1,
    lateral); x, y: element centres; dx, dy; approach: rigid approach delta0
    (the deformed gap gap - delta0 + u is 0 in contact, >= 0 outside);
    surface_displacement: u (m), the combined elastic approach of both
    surfaces; total_force; area; peak_pressure; labels: (nx, ny) int patch
    labels (0 = out of contact); patches: ContactPatch per label;
    iterations, converged, error (relative change of the pressure in the last
    iteration); method: "fft", "numba" or "numpy".
    """

    pressure: np.ndarray
    x: np.ndarray
    y: np.ndarray
    dx: float
    dy: float
    approach: float
    surface_displacement: np.ndarray
    total_force: float
    area: float
    peak_pressure: float
    labels: np.ndarray
    patches: tuple
    iterations: int
    converged: bool
    error: float
    method: str

    @property
    def contact_mask(self) -> np.ndarray:
        return self.labels > 0


def _pk_iterations(matvec, gap, tolerance, max_iterations, pressure, *, load=None,
                   approach=None):
    """Polonsky & Keer (1999) constrained conjugate gradients (NumPy loop), with
    one of two constraints: `load` = (total load N, cell area m^2), the rigid
    approach the unknown (the residual's mean over the contact set is taken
    off, the pressure rescaled to the load each iteration; error
    sum|p_new - p_old| dA / N); or the rigid `approach` (m) prescribed, the
    total force the unknown (residual u + gap - approach, no rescaling; error
    sum|p_new - p_old| / sum p_new). Elements with p = 0 and a negative
    deformed gap enter the contact set (the CG restarts).

    matvec(v) -> displacement grid of the pressure grid v. Returns (pressure,
    displacement, approach, iterations, error, converged): the approach found
    (load) or the one given.
    """
    conj = np.zeros_like(gap)
    restart_factor = 0.0
    g_norm_old = 1.0
    error = np.inf
    converged = False
    iterations = 0
    for iterations in range(1, max_iterations + 1):
        displacement = matvec(pressure)
        contact = pressure > 0.0
        residual = displacement + gap
        if load is not None:
            residual -= residual[contact].mean()
        else:
            residual -= approach
        g_norm = float(np.sum(residual[contact] ** 2))
        conj = np.where(contact, residual + restart_factor * (g_norm / g_norm_old) * conj, 0.0)
        g_norm_old = g_norm
        response = matvec(conj)
        if load is not None:
            response -= response[contact].mean()
        denominator = float(np.sum(response[contact] * conj[contact]))
        if denominator == 0.0:
            converged = True
            break
        step = float(np.sum(residual[contact] * conj[contact])) / denominator
        previous = pressure
        pressure = np.where(contact, pressure - step * conj, 0.0)
        pressure[pressure < 0.0] = 0.0
        overlap = (pressure == 0.0) & (residual < 0.0)
        if np.any(overlap):
            restart_factor = 0.0
            pressure[overlap] -= step * residual[overlap]
        else:
            restart_factor = 1.0
        if load is not None:
            total_load, cell_area = load
            pressure *= total_load / (float(pressure.sum()) * cell_area)
            error = cell_area * float(np.abs(pressure - previous).sum()) / total_load
        else:
            total = float(pressure.sum())
            if total <= 0.0:
                pressure = np.zeros_like(gap)
                converged = True
                error = 0.0
                break
            error = float(np.abs(pressure - previous).sum()) / total
        if error < tolerance:
            converged = True
            break
    displacement = matvec(pressure)
    if load is not None:
        contact = pressure > 0.0
        approach = float((displacement + gap)[contact].mean())
    return pressure, displacement, approach, iterations, error, converged


@njit(cache=True, fastmath=True)
def _convolve_dense_kernel(kernel_full, values, out, mask, masked_only):
    """out[i] = sum_k C(i - k) values[k] on an (nx, ny) grid; kernel_full is (2nx-1, 2ny-1).

    Scatter form over the nonzeros of ``values``: each adds a contiguous,
    vectorisable slice of the kernel to every output row (C is symmetric, so
    C(i - k) = C(k - i) and the slice runs forwards). With masked_only, only
    each output row's span of mask == True is computed (the rest is 0) -- the
    CG needs the response on the contact set only. fastmath lets the slices
    vectorise; results differ from the NumPy reference by rounding only.
    """
    nx, ny = values.shape
    low = np.zeros(nx, dtype=np.int64)
    high = np.full(nx, ny, dtype=np.int64)
    if masked_only:
        for ix in range(nx):
            low[ix] = ny
            high[ix] = 0
            for iy in range(ny):
                if mask[ix, iy]:
                    if iy < low[ix]:
                        low[ix] = iy
                    high[ix] = iy + 1
    out[:, :] = 0.0
    for kx in range(nx):
        for ky in range(ny):
            value = values[kx, ky]
            if value == 0.0:
                continue
            for ix in range(nx):
                start = low[ix]
                stop = high[ix]
                if stop <= start:
                    continue
                row = kx - ix + nx - 1 if kx >= ix else ix - kx + nx - 1
                source = kernel_full[row, ny - 1 - ky + start:ny - 1 - ky + stop]
                target = out[ix, start:stop]
                for i in range(stop - start):
                    target[i] += value * source[i]


@njit(cache=True)
def _pk_kernel(kernel_full, gap, total_load, cell_area, tolerance, max_iterations, pressure):
    """numba Polonsky & Keer constrained CG, dense convolution product; pressure is updated in place.

    Returns (displacement, approach, iterations, error, converged), the same
    algorithm step by step as _pk_iterations().
    """
    nx, ny = gap.shape
    displacement = np.empty((nx, ny))
    residual = np.empty((nx, ny))
    conj = np.zeros((nx, ny))
    response = np.empty((nx, ny))
    previous = np.empty((nx, ny))
    contact = np.zeros((nx, ny), dtype=np.bool_)
    restart_factor = 0.0
    g_norm_old = 1.0
    error = np.inf
    converged = False
    iterations = 0
    for it in range(1, max_iterations + 1):
        iterations = it
        _convolve_dense_kernel(kernel_full, pressure, displacement, contact, False)
        total = 0.0
        count = 0
        for i in range(nx):
            for j in range(ny):
                residual[i, j] = displacement[i, j] + gap[i, j]
                contact[i, j] = pressure[i, j] > 0.0
                if contact[i, j]:
                    total += residual[i, j]
                    count += 1
        mean = total / count
        g_norm = 0.0
        for i in range(nx):
            for j in range(ny):
                residual[i, j] -= mean
                if pressure[i, j] > 0.0:
                    g_norm += residual[i, j] * residual[i, j]
        factor = restart_factor * (g_norm / g_norm_old)
        for i in range(nx):
            for j in range(ny):
                if pressure[i, j] > 0.0:
                    conj[i, j] = residual[i, j] + factor * conj[i, j]
                else:
                    conj[i, j] = 0.0
        g_norm_old = g_norm
        _convolve_dense_kernel(kernel_full, conj, response, contact, True)
        total = 0.0
        for i in range(nx):
            for j in range(ny):
                if pressure[i, j] > 0.0:
                    total += response[i, j]
        mean = total / count
        numerator = 0.0
        denominator = 0.0
        for i in range(nx):
            for j in range(ny):
                if pressure[i, j] > 0.0:
                    denominator += (response[i, j] - mean) * conj[i, j]
                    numerator += residual[i, j] * conj[i, j]
        if denominator == 0.0:
            converged = True
            break
        step = numerator / denominator
        overlap = False
        load = 0.0
        for i in range(nx):
            for j in range(ny):
                old = pressure[i, j]
                previous[i, j] = old
                new = old - step * conj[i, j] if old > 0.0 else 0.0
                if new < 0.0:
                    new = 0.0
                if new == 0.0 and residual[i, j] < 0.0:
                    overlap = True
                    new -= step * residual[i, j]
                pressure[i, j] = new
                load += new
        restart_factor = 0.0 if overlap else 1.0
        scale = total_load / (load * cell_area)
        change = 0.0
        for i in range(nx):
            for j in range(ny):
                pressure[i, j] *= scale
                change += abs(pressure[i, j] - previous[i, j])
        error = cell_area * change / total_load
        if error < tolerance:
            converged = True
            break
    _convolve_dense_kernel(kernel_full, pressure, displacement, contact, False)
    total = 0.0
    count = 0
    for i in range(nx):
        for j in range(ny):
            if pressure[i, j] > 0.0:
                total += displacement[i, j] + gap[i, j]
                count += 1
    return displacement, total / count, iterations, error, converged


def _full_kernel(coefficients):
    """(2nx-1, 2ny-1) kernel C(i-k) from the offset coefficients (nx, ny) (symmetric)."""
    nx, ny = coefficients.shape
    ix = np.abs(np.arange(-(nx - 1), nx))
    iy = np.abs(np.arange(-(ny - 1), ny))
    return np.ascontiguousarray(coefficients[ix[:, None], iy[None, :]])


def _fft_matvec(coefficients):
    """Discrete-convolution FFT product (Liu, Wang & Liu 2000): zero padding to (2nx, 2ny)."""
    nx, ny = coefficients.shape
    circulant = np.zeros((2 * nx, 2 * ny))
    circulant[:nx, :ny] = coefficients
    circulant[nx + 1:, :ny] = coefficients[:0:-1, :]
    circulant[:nx, ny + 1:] = coefficients[:, :0:-1]
    circulant[nx + 1:, ny + 1:] = coefficients[:0:-1, :0:-1]
    spectrum = scipy_fft.rfft2(circulant)
    shape = (2 * nx, 2 * ny)

    def matvec(values):
        product = scipy_fft.irfft2(spectrum * scipy_fft.rfft2(values, s=shape), s=shape)
        return product[:nx, :ny]

    return matvec


def _dense_matvec(coefficients):
    """Plain dense matrix (N x N, N = nx*ny) product with NumPy (reference)."""
    nx, ny = coefficients.shape
    ix, iy = np.divmod(np.arange(nx * ny), ny)
    matrix = coefficients[np.abs(ix[:, None] - ix[None, :]), np.abs(iy[:, None] - iy[None, :])]

    def matvec(values):
        return (matrix @ values.ravel()).reshape(nx, ny)

    return matvec


_DENSE_NUMPY_LIMIT = 6000


def label_patches(pressure, x, y, dx, dy):
    """Label 8-connected contact patches (scipy.ndimage.label) and summarise them."""
    contact = pressure > 0.0
    raw_labels, count = ndimage.label(contact, structure=np.ones((3, 3), dtype=int))
    cell_area = dx * dy
    summaries = []
    for label in range(1, count + 1):
        mask = raw_labels == label
        p = np.where(mask, pressure, 0.0)
        force = float(p.sum()) * cell_area
        ix, iy = np.nonzero(mask)
        summaries.append((force, label, mask, p, ix, iy))
    summaries.sort(key=lambda item: -item[0])
    labels = np.zeros(pressure.shape, dtype=int)
    patches = []
    for new_label, (force, _, mask, p, ix, iy) in enumerate(summaries, start=1):
        labels[mask] = new_label
        weights = p[ix, iy]
        total = weights.sum()
        patches.append(ContactPatch(
            label=new_label,
            area=float(mask.sum()) * cell_area,
            normal_force=force,
            peak_pressure=float(p.max()),
            centroid_x=float(np.dot(weights, x[ix]) / total) if total > 0 else float(x[ix].mean()),
            centroid_y=float(np.dot(weights, y[iy]) / total) if total > 0 else float(y[iy].mean()),
            length=float(ix.max() - ix.min() + 1) * dx,
            width=float(iy.max() - iy.min() + 1) * dy,
            elements=int(mask.sum()),
        ))
    return labels, tuple(patches)


def exact_normal_contact(gap_grid, dx, dy, total_load, young, poisson, *, x0=None, y0=None, method="fft",
                         tolerance=1e-9, max_iterations=2000):
    """Exact frictionless normal contact of elastic half-spaces on a rectangular grid.

    gap_grid: undeformed gap h (m) at the element centres, shape (nx, ny),
    axis 0 = x (rolling, step dx), axis 1 = y (lateral, step dy); one patch or
    several. total_load: N >= 0 (N), the constraint; the rigid approach delta0
    is the unknown (deformed gap h - delta0 + u: zero where p > 0, >= 0
    elsewhere, p >= 0). young (Pa), poisson: the one material of both bodies.
    x0, y0: coordinates of element [0, 0]'s centre (default: grid centred on 0).
    method: "fft" (default: NumPy loop, FFT convolution), "numba" (numba loop,
    dense convolution) or "numpy" (reference: NumPy loop, dense matrix; small
    grids). Influence coefficients: uniform pressure on each rectangle (Love
    1929); iteration: Polonsky & Keer (1999) constrained conjugate gradients,
    stopped when sum|p_new - p_old| dA / N < tolerance.
    Returns ExactNormalResult with the patches labelled by scipy.ndimage.label.
    """
    check_material(young, poisson)
    gap, x, y, cell_area = _checked_grid(gap_grid, dx, dy, x0, y0)
    if not (np.isfinite(total_load) and total_load >= 0.0):
        raise NormalContactError(f"total load must be finite and >= 0 N, got {total_load!r}")
    if method not in ("fft", "numba", "numpy"):
        raise NormalContactError(f"method must be 'fft', 'numba' or 'numpy', got {method!r}")
    nx, ny = gap.shape
    if total_load == 0.0:
        zero = np.zeros_like(gap)
        return ExactNormalResult(zero, x, y, dx, dy, float(gap.min()), zero.copy(), 0.0, 0.0, 0.0,
                                 np.zeros(gap.shape, dtype=int), (), 0, True, 0.0, method)
    pressure = np.full(gap.shape, total_load / (gap.size * cell_area))
    if method == "numba":
        coefficients = influence_coefficients_kernel(nx, ny, float(dx), float(dy), float(young), float(poisson))
        displacement, approach, iterations, error, converged = _pk_kernel(
            _full_kernel(coefficients), gap, float(total_load), cell_area, float(tolerance),
            int(max_iterations), pressure)
    else:
        coefficients = influence_coefficients(nx, ny, dx, dy, young, poisson)
        if method == "numpy":
            if gap.size > _DENSE_NUMPY_LIMIT:
                raise NormalContactError(
                    f"method='numpy' builds a dense {gap.size}^2 matrix; use 'fft' above {_DENSE_NUMPY_LIMIT} elements")
            matvec = _dense_matvec(coefficients)
        else:
            matvec = _fft_matvec(coefficients)
        pressure, displacement, approach, iterations, error, converged = _pk_iterations(
            matvec, gap, float(tolerance), int(max_iterations), pressure,
            load=(float(total_load), cell_area))
    return _result(pressure, x, y, dx, dy, approach, displacement, cell_area, iterations,
                   converged, error, method)


def _checked_grid(gap_grid, dx, dy, x0, y0):
    """(gap, x, y, cell area) of a gap grid and its element sizes, checked; x0,
    y0: element [0, 0]'s centre (None: the grid centred on 0)."""
    gap = np.array(gap_grid, dtype=float)
    if gap.ndim != 2 or min(gap.shape) < 1:
        raise NormalContactError("gap_grid must be a 2-D array (nx, ny)")
    if not np.all(np.isfinite(gap)):
        raise NormalContactError("gap_grid must be finite")
    if not (np.isfinite(dx) and np.isfinite(dy) and dx > 0.0 and dy > 0.0):
        raise NormalContactError("element sizes dx, dy must be finite and > 0 m")
    nx, ny = gap.shape
    x_start = -(nx - 1) * dx / 2.0 if x0 is None else float(x0)
    y_start = -(ny - 1) * dy / 2.0 if y0 is None else float(y0)
    return gap, x_start + dx * np.arange(nx), y_start + dy * np.arange(ny), dx * dy


def _result(pressure, x, y, dx, dy, approach, displacement, cell_area, iterations, converged,
            error, method) -> "ExactNormalResult":
    """The ExactNormalResult of a converged pressure grid, its patches labelled."""
    labels, patches = label_patches(pressure, x, y, dx, dy)
    return ExactNormalResult(
        pressure=pressure, x=x, y=y, dx=float(dx), dy=float(dy), approach=float(approach),
        surface_displacement=displacement, total_force=float(pressure.sum()) * cell_area,
        area=float(np.count_nonzero(pressure > 0.0)) * cell_area, peak_pressure=float(pressure.max()),
        labels=labels, patches=patches, iterations=int(iterations), converged=bool(converged),
        error=float(error), method=method)


def exact_normal_contact_approach(gap_grid, dx, dy, approach, young, poisson, *, x0=None, y0=None,
                                  tolerance=1e-9, max_iterations=5000, initial_pressure=None):
    """Exact frictionless normal contact on a grid with the rigid approach prescribed.

    As exact_normal_contact() (same grid, material and result), but the rigid
    approach delta0 (m) is given and the total force is the unknown: the
    deformed gap gap - delta0 + u is 0 where p > 0 and >= 0 elsewhere.
    approach <= min(gap) gives zero pressure. Influence coefficients: Love
    (1929); iteration: Polonsky & Keer (1999) constrained CG without the load
    constraint; products by FFT (Liu, Wang & Liu 2000). initial_pressure:
    an (nx, ny) start (Pa, e.g. a neighbouring solution); default the
    interpenetration over the self-influence of one element.
    """
    check_material(young, poisson)
    gap, x, y, cell_area = _checked_grid(gap_grid, dx, dy, x0, y0)
    if not np.isfinite(approach):
        raise NormalContactError(f"approach must be finite, got {approach!r}")
    nx, ny = gap.shape
    interpenetration = np.clip(float(approach) - gap, 0.0, None)
    if not np.any(interpenetration > 0.0):
        zero = np.zeros_like(gap)
        return ExactNormalResult(zero, x, y, float(dx), float(dy), float(approach), zero.copy(), 0.0, 0.0, 0.0,
                                 np.zeros(gap.shape, dtype=int), (), 0, True, 0.0, "fft")
    coefficients = influence_coefficients(nx, ny, dx, dy, young, poisson)
    matvec = _fft_matvec(coefficients)
    if initial_pressure is not None:
        pressure = np.clip(np.array(initial_pressure, dtype=float), 0.0, None)
        if pressure.shape != gap.shape or not np.all(np.isfinite(pressure)):
            raise NormalContactError("initial_pressure must be a finite array of the grid's shape")
        pressure = np.where(interpenetration > 0.0, np.maximum(pressure, 0.0), pressure)
        if not np.any(pressure > 0.0):
            pressure = interpenetration / coefficients[0, 0]
    else:
        # start: the interpenetration over the self-influence of one element
        pressure = interpenetration / coefficients[0, 0]
    pressure, displacement, _, iterations, error, converged = _pk_iterations(
        matvec, gap, float(tolerance), int(max_iterations), pressure, approach=float(approach))
    return _result(pressure, x, y, dx, dy, approach, displacement, cell_area, iterations,
                   converged, error, "fft")


class GridLevel(NamedTuple):
    """One grid of a convergence study: cells, sizes (m) and the main results."""

    nx: int
    ny: int
    dx: float
    dy: float
    peak_pressure: float
    area: float
    approach: float
    total_force: float
    patches: int
    change: float  # relative change of the peak pressure from the previous grid (nan on the first)


class ExactConvergence(NamedTuple):
    """converge_exact_normal() result: the finest result, the history of grids, converged flag."""

    result: ExactNormalResult
    history: tuple
    converged: bool


def converge_exact_normal(gap_function: Callable, x_limits: Sequence[float], y_limits: Sequence[float],
                          total_load, young, poisson, *, cells=(16, 16), refinement=1.5, tolerance=0.01,
                          max_levels=6, max_elements=200_000, method="fft", solver_tolerance=1e-9):
    """Refine the grid of exact_normal_contact() until the peak pressure changes by < tolerance.

    gap_function(x, y) -> gap (m) for arrays x (rolling) and y (lateral) of one
    shape (m); x_limits, y_limits: (min, max) of the potential contact area
    (m); cells: starting (nx, ny); refinement: factor on the cell counts per
    level; tolerance: relative change of the peak pressure between two grids
    (0.01 = 1 %); stops also at max_levels or when a grid would exceed
    max_elements. Returns ExactConvergence(result, history, converged); the
    history lists every grid with its peak pressure, area, approach, force.
    """
    x_low, x_high = map(float, x_limits)
    y_low, y_high = map(float, y_limits)
    if not (x_high > x_low and y_high > y_low):
        raise NormalContactError("limits must be increasing (min, max) pairs")
    if refinement <= 1.0:
        raise NormalContactError("refinement must be > 1")
    nx, ny = (int(c) for c in cells)
    history = []
    result = None
    previous_peak = None
    converged = False
    for _ in range(int(max_levels)):
        dx = (x_high - x_low) / nx
        dy = (y_high - y_low) / ny
        x = x_low + dx * (np.arange(nx) + 0.5)
        y = y_low + dy * (np.arange(ny) + 0.5)
        gap = np.asarray(gap_function(x[:, None] + 0.0 * y[None, :], y[None, :] + 0.0 * x[:, None]), dtype=float)
        result = exact_normal_contact(gap, dx, dy, total_load, young, poisson, x0=x[0], y0=y[0], method=method,
                                      tolerance=solver_tolerance)
        change = (float("nan") if previous_peak is None
                  else abs(result.peak_pressure - previous_peak) / max(result.peak_pressure, 1e-300))
        history.append(GridLevel(nx, ny, dx, dy, result.peak_pressure, result.area, result.approach,
                                 result.total_force, len(result.patches), change))
        if previous_peak is not None and change < tolerance:
            converged = True
            break
        previous_peak = result.peak_pressure
        nx_next = int(math.ceil(nx * refinement))
        ny_next = int(math.ceil(ny * refinement))
        if nx_next * ny_next > max_elements:
            break
        nx, ny = nx_next, ny_next
    return ExactConvergence(result, tuple(history), converged)
