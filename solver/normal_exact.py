"""Non-Hertzian normal wheel-rail contact: Kik-Piotrowski, exact boundary elements, contact planes,
pressure maps.

Conventions as in solver.normal (docs/CONVENTIONS.md): x rolling, y lateral,
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
from dataclasses import dataclass, replace
from typing import Callable, NamedTuple, Sequence

import numpy as np
from numba import njit
from scipy import fft as scipy_fft
from scipy import ndimage

from .geometry import VIRTUAL_PENETRATION
from .normal import NormalContactError, check_material, material_ok_kernel

__all__ = [
    "KIK_PIOTROWSKI_REDUCTION",
    "KikPiotrowskiResult",
    "kik_piotrowski",
    "kik_piotrowski_force_kernel",
    "influence_coefficients",
    "influence_coefficients_kernel",
    "ContactPatch",
    "ExactNormalResult",
    "exact_normal_contact",
    "exact_normal_contact_approach",
    "PLANE_SAMPLE_STEP",
    "PATCH_SEPARATION",
    "ContactPlane",
    "ContactPlaneGrid",
    "contact_plane",
    "contact_plane_gap",
    "WheelNormalContact",
    "wheel_normal_contact",
    "GridLevel",
    "ExactConvergence",
    "converge_exact_normal",
    "plane_gap_on_grid",
]

#: Kik & Piotrowski (1996), Piotrowski & Kik (2008): virtual penetration = 0.55 * delta
#: (the same fact bounds the contact zones of the multipoint search: solver.geometry).
KIK_PIOTROWSKI_REDUCTION = VIRTUAL_PENETRATION

# ---------------------------------------------------------------------------
# Influence coefficients of uniformly loaded rectangles (Love 1929)
# ---------------------------------------------------------------------------

def _rectangle_primitive(u, v):
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
    return (_rectangle_primitive(x + half_x, y + half_y) - _rectangle_primitive(x - half_x, y + half_y)
            - _rectangle_primitive(x + half_x, y - half_y) + _rectangle_primitive(x - half_x, y - half_y))


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
def _rectangle_primitive_kernel(u, v):
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
            out[i, j] = (_rectangle_primitive_kernel(x + hx, y + hy) - _rectangle_primitive_kernel(x - hx, y + hy)
                         - _rectangle_primitive_kernel(x + hx, y - hy)
                         + _rectangle_primitive_kernel(x - hx, y - hy)) / (math.pi * e_star)
    return out


# ---------------------------------------------------------------------------
# Kik-Piotrowski virtual penetration method
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class KikPiotrowskiResult:
    """Kik-Piotrowski non-elliptic patch. SI units (m, Pa, N).

    lateral: strip centres y (ny,); half_length: L(y), the half-length of the
    patch along x in each strip (0 outside); x: rolling coordinates (nx,) of
    the pressure grid; pressure: (nx, ny) grid, p = c sqrt(L(y)^2 - x^2);
    normal_force; area; peak_pressure (the largest pressure);
    penetration delta and virtual_penetration eps*delta; reduction eps;
    y_max_penetration: y of the point of maximum penetration (gap minimum);
    lateral_extent: (y_min, y_max) of the patch (linear zero of the
    interpenetration between the last strip in and the first out); dy: strip
    width.
    """

    lateral: np.ndarray
    half_length: np.ndarray
    x: np.ndarray
    pressure: np.ndarray
    normal_force: float
    area: float
    peak_pressure: float
    penetration: float
    virtual_penetration: float
    reduction: float
    y_max_penetration: float
    lateral_extent: tuple
    dy: float

    @property
    def semi_length(self) -> float:
        """Largest half-length of the patch along x (m) (Hertz a for an elliptic gap)."""
        return float(self.half_length.max()) if self.half_length.size else 0.0

    @property
    def semi_width(self) -> float:
        """Half the lateral extent of the patch (m) (Hertz b for an elliptic gap)."""
        return 0.5 * (self.lateral_extent[1] - self.lateral_extent[0])

    @property
    def y(self) -> np.ndarray:
        """Lateral coordinates of the pressure grid's columns (m), same as lateral."""
        return self.lateral


def _check_strips(lateral, gap, rolling_radius):
    y = np.asarray(lateral, dtype=float)
    h = np.asarray(gap, dtype=float)
    if y.ndim != 1 or h.shape != y.shape or y.size < 3:
        raise NormalContactError("lateral and gap must be 1-D arrays of one length >= 3")
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(h))):
        raise NormalContactError("lateral and gap must be finite")
    steps = np.diff(y)
    dy = float(steps.mean())
    if not (dy > 0.0 and np.allclose(steps, dy, rtol=1e-6, atol=0.0)):
        raise NormalContactError("lateral coordinates must increase with a uniform step")
    radius = np.broadcast_to(np.asarray(rolling_radius, dtype=float), y.shape).astype(float)
    if not (np.all(np.isfinite(radius)) and np.all(radius > 0.0)):
        raise NormalContactError("rolling radius must be finite and > 0 m")
    return y, h, radius, dy


def _patch_edge(y, interpenetration, index, direction, dy):
    """Lateral edge of the patch beyond strip ``index`` (linear zero of the interpenetration)."""
    outer = index + direction
    if outer < 0 or outer >= y.size:
        return float(y[index] + 0.5 * direction * dy)
    inner_value = interpenetration[index]
    outer_value = interpenetration[outer]
    return float(y[index] + direction * dy * inner_value / (inner_value - outer_value))


def kik_piotrowski(lateral, gap, rolling_radius, penetration, young, poisson, *,
                   reduction=KIK_PIOTROWSKI_REDUCTION, cells_per_strip=32, rolling_points=41):
    """Kik-Piotrowski normal contact from the profiles' gap function (reference, NumPy).

    lateral: strip centres y (m), uniform step, across the contact region;
    gap: undeformed normal distance between the profiles at x = 0 (m) -- only
    its shape matters, it is shifted so that its minimum (first touch, the
    point of maximum penetration y0) is zero; rolling_radius: longitudinal
    radius of curvature of the wheel, scalar or per strip (m; r/cos(contact
    angle) for a contact on an inclined part of the profile, the rail being
    straight); penetration: delta (m), the approach beyond first touch (for the
    geometry's gap with negative = penetration pass -gap.min()); young (Pa),
    poisson; reduction: eps = 0.55 (Piotrowski & Kik 2008).

    The patch is where eps*delta - gap(y) - x^2/(2 R(y)) > 0, so its half-length
    is L(y) = sqrt(2 R (eps delta - gap(y))); the pressure is
    p = c sqrt(L(y)^2 - x^2), and c follows from the elastic approach at
    (0, y0) being delta: delta = (1/(pi E*)) int p/r dA, evaluated with the
    exact integral of 1/r over cells_per_strip cells in every strip (cell
    averages of the pressure). Several separated regions share the one
    condition at y0: call once per patch for separated contacts.
    Returns KikPiotrowskiResult; zero force for delta <= 0.
    """
    check_material(young, poisson)
    y, h, radius, dy = _check_strips(lateral, gap, rolling_radius)
    if not np.isfinite(penetration):
        raise NormalContactError(f"penetration must be finite, got {penetration!r}")
    if not (0.0 < reduction <= 1.0):
        raise NormalContactError(f"reduction factor must lie in (0, 1], got {reduction!r}")
    cells = int(cells_per_strip)
    if cells < 2:
        raise NormalContactError("cells_per_strip must be >= 2")
    e_star = young / (2.0 * (1.0 - poisson * poisson))
    h = h - h.min()
    j0 = int(np.argmin(h))
    y0 = float(y[j0])
    virtual = reduction * max(float(penetration), 0.0)
    interpenetration = virtual - h
    inside = interpenetration > 0.0
    half_length = np.where(inside, np.sqrt(2.0 * radius * np.clip(interpenetration, 0.0, None)), 0.0)
    if penetration <= 0.0 or not np.any(inside):
        x = np.zeros(max(int(rolling_points), 1))
        return KikPiotrowskiResult(y, np.zeros_like(y), x, np.zeros((x.size, y.size)), 0.0, 0.0, 0.0,
                                   max(float(penetration), 0.0), virtual, reduction, y0, (y0, y0), dy)
    strips = np.nonzero(inside)[0]
    L = half_length[strips][:, None]
    edges = L * np.linspace(-1.0, 1.0, cells + 1)[None, :]
    # cell averages of sqrt(L^2 - x^2): primitive (x sqrt(L^2-x^2) + L^2 asin(x/L))/2
    ratio = np.clip(edges / L, -1.0, 1.0)
    primitive = 0.5 * (edges * np.sqrt(np.clip(L * L - edges * edges, 0.0, None)) + L * L * np.arcsin(ratio))
    widths = np.diff(edges, axis=1)
    average = np.diff(primitive, axis=1) / widths
    v_low = (y[strips] - 0.5 * dy - y0)[:, None]
    v_high = (y[strips] + 0.5 * dy - y0)[:, None]
    corner_high = _rectangle_primitive(edges, v_high)
    corner_low = _rectangle_primitive(edges, v_low)
    influence = np.diff(corner_high, axis=1) - np.diff(corner_low, axis=1)
    displacement_integral = float(np.sum(average * influence))
    coefficient = math.pi * e_star * float(penetration) / displacement_integral
    force = coefficient * float(np.sum(0.5 * math.pi * half_length[strips] ** 2)) * dy
    area = float(np.sum(2.0 * half_length[strips])) * dy
    peak = coefficient * float(half_length.max())
    x_max = float(half_length.max())
    x = np.linspace(-x_max, x_max, max(int(rolling_points), 2))
    pressure = coefficient * np.sqrt(np.clip(half_length[None, :] ** 2 - x[:, None] ** 2, 0.0, None))
    extent = (_patch_edge(y, interpenetration, strips[0], -1, dy), _patch_edge(y, interpenetration, strips[-1], 1, dy))
    return KikPiotrowskiResult(y, half_length, x, pressure, force, area, peak, float(penetration), virtual,
                               float(reduction), y0, extent, dy)


@njit(cache=True)
def kik_piotrowski_force_kernel(lateral, gap, rolling_radius, penetration, young, poisson, reduction,
                                cells_per_strip):
    """numba Kik-Piotrowski: (normal_force, area, peak_pressure, y_max_penetration, flag).

    Same numbers as kik_piotrowski() (lateral uniform, gap and rolling_radius
    arrays of the same length, rolling_radius per strip). flag: 0 contact,
    1 no contact (delta <= 0 or empty patch: zeros), 2 invalid input (zeros).
    Never NaN.
    """
    n = lateral.shape[0]
    if (n < 3 or gap.shape[0] != n or rolling_radius.shape[0] != n or cells_per_strip < 2
            or not material_ok_kernel(young, poisson) or not math.isfinite(penetration)
            or not (0.0 < reduction <= 1.0)):
        return 0.0, 0.0, 0.0, 0.0, 2
    dy = (lateral[n - 1] - lateral[0]) / (n - 1)
    if not dy > 0.0:
        return 0.0, 0.0, 0.0, 0.0, 2
    gap_min = gap[0]
    j0 = 0
    for j in range(n):
        if not (math.isfinite(gap[j]) and math.isfinite(lateral[j]) and rolling_radius[j] > 0.0):
            return 0.0, 0.0, 0.0, 0.0, 2
        if gap[j] < gap_min:
            gap_min = gap[j]
            j0 = j
    y0 = lateral[j0]
    if penetration <= 0.0:
        return 0.0, 0.0, 0.0, y0, 1
    e_star = young / (2.0 * (1.0 - poisson * poisson))
    virtual = reduction * penetration
    displacement_integral = 0.0
    force_integral = 0.0
    length_sum = 0.0
    length_max = 0.0
    for j in range(n):
        interpenetration = virtual - (gap[j] - gap_min)
        if interpenetration <= 0.0:
            continue
        L = math.sqrt(2.0 * rolling_radius[j] * interpenetration)
        length_sum += 2.0 * L
        force_integral += 0.5 * math.pi * L * L
        if L > length_max:
            length_max = L
        v_low = lateral[j] - 0.5 * dy - y0
        v_high = lateral[j] + 0.5 * dy - y0
        # the cells are symmetric about x = 0 (the primitive is odd in x): sum
        # the right half twice, the middle cell of an odd count once
        first = (cells_per_strip + 1) // 2
        if cells_per_strip % 2 == 1:
            x_half = L / cells_per_strip
            average = (0.5 * (x_half * math.sqrt(max(L * L - x_half * x_half, 0.0)) + L * L * math.asin(
                x_half / L))) / x_half
            displacement_integral += average * 2.0 * (_rectangle_primitive_kernel(x_half, v_high)
                                                      - _rectangle_primitive_kernel(x_half, v_low))
        x_prev = L * (-1.0 + 2.0 * first / cells_per_strip)
        root = L * L - x_prev * x_prev
        prim_prev = 0.5 * (x_prev * math.sqrt(root if root > 0.0 else 0.0) + L * L * math.asin(x_prev / L))
        high_prev = _rectangle_primitive_kernel(x_prev, v_high)
        low_prev = _rectangle_primitive_kernel(x_prev, v_low)
        for k in range(first + 1, cells_per_strip + 1):
            x_next = L * (-1.0 + 2.0 * k / cells_per_strip)
            r = x_next / L
            if r > 1.0:
                r = 1.0
            root = L * L - x_next * x_next
            prim_next = 0.5 * (x_next * math.sqrt(root if root > 0.0 else 0.0) + L * L * math.asin(r))
            high_next = _rectangle_primitive_kernel(x_next, v_high)
            low_next = _rectangle_primitive_kernel(x_next, v_low)
            average = (prim_next - prim_prev) / (x_next - x_prev)
            displacement_integral += 2.0 * average * ((high_next - high_prev) - (low_next - low_prev))
            x_prev = x_next
            prim_prev = prim_next
            high_prev = high_next
            low_prev = low_next
    if length_sum == 0.0 or not displacement_integral > 0.0:
        return 0.0, 0.0, 0.0, y0, 1
    coefficient = math.pi * e_star * penetration / displacement_integral
    return coefficient * force_integral * dy, length_sum * dy, coefficient * length_max, y0, 0


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


def _pk_iterations(matvec, gap, total_load, cell_area, tolerance, max_iterations, pressure):
    """Polonsky & Keer (1999) constrained CG with the total load as constraint (NumPy loop).

    matvec(v) -> displacement grid of the pressure grid v. Returns (pressure,
    displacement, approach, iterations, error, converged).
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
        residual -= residual[contact].mean()
        g_norm = float(np.sum(residual[contact] ** 2))
        conj = np.where(contact, residual + restart_factor * (g_norm / g_norm_old) * conj, 0.0)
        g_norm_old = g_norm
        response = matvec(conj)
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
        pressure *= total_load / (float(pressure.sum()) * cell_area)
        error = cell_area * float(np.abs(pressure - previous).sum()) / total_load
        if error < tolerance:
            converged = True
            break
    displacement = matvec(pressure)
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
    gap = np.array(gap_grid, dtype=float)
    if gap.ndim != 2 or min(gap.shape) < 1:
        raise NormalContactError("gap_grid must be a 2-D array (nx, ny)")
    if not np.all(np.isfinite(gap)):
        raise NormalContactError("gap_grid must be finite")
    if not (np.isfinite(dx) and np.isfinite(dy) and dx > 0.0 and dy > 0.0):
        raise NormalContactError("element sizes dx, dy must be finite and > 0 m")
    if not (np.isfinite(total_load) and total_load >= 0.0):
        raise NormalContactError(f"total load must be finite and >= 0 N, got {total_load!r}")
    if method not in ("fft", "numba", "numpy"):
        raise NormalContactError(f"method must be 'fft', 'numba' or 'numpy', got {method!r}")
    nx, ny = gap.shape
    x_start = -(nx - 1) * dx / 2.0 if x0 is None else float(x0)
    y_start = -(ny - 1) * dy / 2.0 if y0 is None else float(y0)
    x = x_start + dx * np.arange(nx)
    y = y_start + dy * np.arange(ny)
    cell_area = dx * dy
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
            matvec, gap, float(total_load), cell_area, float(tolerance), int(max_iterations), pressure)
    labels, patches = label_patches(pressure, x, y, dx, dy)
    return ExactNormalResult(
        pressure=pressure, x=x, y=y, dx=float(dx), dy=float(dy), approach=float(approach),
        surface_displacement=displacement, total_force=float(pressure.sum()) * cell_area,
        area=float(np.count_nonzero(pressure > 0.0)) * cell_area, peak_pressure=float(pressure.max()),
        labels=labels, patches=patches, iterations=int(iterations), converged=bool(converged),
        error=float(error), method=method)


def _pk_approach_iterations(matvec, gap, approach, tolerance, max_iterations, pressure):
    """Constrained CG of Polonsky & Keer (1999) with the rigid approach prescribed (NumPy loop).

    The same iteration as _pk_iterations() without the load constraint: the
    residual is the deformed gap u + gap - approach (no mean subtracted) and
    the pressure is not rescaled; elements with p = 0 and a negative deformed
    gap enter the contact set (the CG restarts). Returns (pressure,
    displacement, iterations, error, converged); error is the relative change
    sum|p_new - p_old| / sum p_new of the last iteration.
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
        residual = displacement + gap - approach
        g_norm = float(np.sum(residual[contact] ** 2))
        conj = np.where(contact, residual + restart_factor * (g_norm / g_norm_old) * conj, 0.0)
        g_norm_old = g_norm
        response = matvec(conj)
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
    return pressure, displacement, iterations, error, converged


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
    gap = np.array(gap_grid, dtype=float)
    if gap.ndim != 2 or min(gap.shape) < 1:
        raise NormalContactError("gap_grid must be a 2-D array (nx, ny)")
    if not np.all(np.isfinite(gap)):
        raise NormalContactError("gap_grid must be finite")
    if not (np.isfinite(dx) and np.isfinite(dy) and dx > 0.0 and dy > 0.0):
        raise NormalContactError("element sizes dx, dy must be finite and > 0 m")
    if not np.isfinite(approach):
        raise NormalContactError(f"approach must be finite, got {approach!r}")
    nx, ny = gap.shape
    x_start = -(nx - 1) * dx / 2.0 if x0 is None else float(x0)
    y_start = -(ny - 1) * dy / 2.0 if y0 is None else float(y0)
    x = x_start + dx * np.arange(nx)
    y = y_start + dy * np.arange(ny)
    cell_area = dx * dy
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
    pressure, displacement, iterations, error, converged = _pk_approach_iterations(
        matvec, gap, float(approach), float(tolerance), int(max_iterations), pressure)
    labels, patches = label_patches(pressure, x, y, dx, dy)
    return ExactNormalResult(
        pressure=pressure, x=x, y=y, dx=float(dx), dy=float(dy), approach=float(approach),
        surface_displacement=displacement, total_force=float(pressure.sum()) * cell_area,
        area=float(np.count_nonzero(pressure > 0.0)) * cell_area, peak_pressure=float(pressure.max()),
        labels=labels, patches=patches, iterations=int(iterations), converged=bool(converged),
        error=float(error), method="fft")


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


# ---------------------------------------------------------------------------
# Gaps in the contact plane of a wheel on its rail
# ---------------------------------------------------------------------------
# Side-local track frame of one wheel (solver.geometry): Y lateral, positive
# towards the field side of the wheel's rail (the track's +y for the left
# wheel; the right wheel is the left wheel of the mirrored wheelset), Z up.
# The contact plane of a rigid contact point is the plane tangent to the rail
# at that point (the rail is a prismatic surface along x, so the plane
# contains the rolling direction x); at a rigid contact of a wheelset without
# yaw it is tangent to the wheel as well. In the plane: x (rolling), s along
# the tangent t = (cos d, sin d) in (Y, Z), and the normal n = (-sin d, cos d)
# pointing from the rail into the wheel, d the contact angle (CONVENTIONS.md:
# positive when the normal force pushes the wheel towards the track centre).
# The gap at (x, s) is measured along n, from the rail surface to the wheel
# surface: the wheel is the exact body of revolution of its profile about the
# axle of the pose (roll and yaw included), the rail the prismatic surface of
# its (inclined, moved) profile. This is the planar contact approach of
# Vollebregt's CONTACT (E.A.H. Vollebregt, "User guide for CONTACT", planar
# contact, D = 2), with the plane taken at the rigid contact point.

#: Fine sampling step of the profiles' splines for the gap construction (m):
#: the linear interpolation between samples errs by curvature * step^2 / 8,
#: below 0.01 um for radii down to 5 mm.
PLANE_SAMPLE_STEP = 2e-5


class ContactPlane(NamedTuple):
    """The contact plane of one rigid contact point (side-local track frame, m, rad)."""

    origin_y: float     # Y of the rail contact point (m)
    origin_z: float     # Z of the rail contact point (m)
    angle: float        # contact angle d (rad): normal n = (-sin d, cos d), tangent t = (cos d, sin d)
    rail_u: float       # lateral coordinate of the point on the rail profile (m)

    def to_plane(self, Y, Z):
        """(s, n) plane coordinates of side-local points (Y, Z)."""
        dy = np.asarray(Y, dtype=float) - self.origin_y
        dz = np.asarray(Z, dtype=float) - self.origin_z
        c, sn = math.cos(self.angle), math.sin(self.angle)
        return dy * c + dz * sn, -dy * sn + dz * c


@dataclass(frozen=True)
class ContactPlaneGrid:
    """Undeformed normal gap of one wheel on its rail on a grid of the contact plane (SI).

    gap: (nx, ny) normal distance rail -> wheel at the element centres (m,
    negative = interpenetration); x: (nx,) rolling coordinates, s: (ny,)
    in-plane lateral coordinates from the plane's origin (m); dx, ds (m);
    plane: the ContactPlane; min_gap: the smallest gap on the grid (m).
    """

    gap: np.ndarray
    x: np.ndarray
    s: np.ndarray
    dx: float
    ds: float
    plane: ContactPlane
    min_gap: float


def _side_pose(pose, side):
    """The pose of the wheel `side` as the left wheel of a (possibly mirrored) wheelset."""
    from .geometry import WheelsetPose
    if side == 0:
        return WheelsetPose(float(pose.y), float(pose.z), float(pose.roll), float(pose.yaw))
    if side == 1:
        return WheelsetPose(-float(pose.y), float(pose.z), -float(pose.roll), -float(pose.yaw))
    raise NormalContactError(f"side must be 0 (left) or 1 (right), got {side!r}")


def _rail_placement(setup, rail):
    """(centre_y, vertical, theta) of the (inclined, moved) rail in the side-local frame."""
    lateral, vertical, roll = (0.0, 0.0, 0.0) if rail is None else (float(v) for v in rail)
    return setup.rail_centre_y + lateral, vertical, setup.inclination + roll


def contact_plane(setup, rail_u, rail=None) -> ContactPlane:
    """The plane tangent to the rail at its profile coordinate rail_u (m).

    setup: solver.geometry.ContactSetup; rail: RailPose (lateral, vertical,
    roll) of the wheel's rail in its side-local frame, or None (at rest).
    """
    u = float(rail_u)
    centre, vertical, theta = _rail_placement(setup, rail)
    z = float(setup.rail.height_at(u))
    slope = float(setup.rail.slope_at(u))
    c, sn = math.cos(theta), math.sin(theta)
    origin_y = centre + c * u - sn * z
    origin_z = vertical + sn * u + c * z
    # rail normal (-z', 1) in the rail frame, turned by theta: d = atan(z') + theta
    return ContactPlane(origin_y, origin_z, math.atan(slope) + theta, u)


def _monotone_window(s, n, s_limits, name, cover=True):
    """The section (s, n) near the plane's origin as an increasing function n(s) over s_limits.

    Starts at the sample nearest the origin (the contact point) and extends
    both ways while s keeps its direction (a part of the profile that folds
    over beyond 90 deg to the plane ends the run), then keeps the samples
    within the limits plus one on each side. cover: require the run to span
    the limits.
    """
    lo, hi = s_limits
    k0 = int(np.argmin(s * s + n * n))
    steps = np.diff(s)
    direction = 1.0 if steps[min(k0, steps.size - 1)] > 0.0 else -1.0
    breaks = np.nonzero(direction * steps <= 0.0)[0]
    before = breaks[breaks < k0]
    after = breaks[breaks >= k0]
    first = int(before[-1]) + 1 if before.size else 0
    last = int(after[0]) if after.size else s.size - 1
    s_run, n_run = s[first:last + 1], n[first:last + 1]
    if direction < 0:
        s_run, n_run = s_run[::-1], n_run[::-1]
    a = max(int(np.searchsorted(s_run, lo)) - 1, 0)
    b = min(int(np.searchsorted(s_run, hi)) + 1, s_run.size)
    s_run, n_run = s_run[a:b], n_run[a:b]
    if s_run.size < 2 or (cover and (s_run[0] > lo or s_run[-1] < hi)):
        raise NormalContactError(
            f"the {name} profile does not cover the contact plane window (it ends, or folds over "
            "beyond 90 deg to the plane)")
    return s_run, n_run


def _rail_section(setup, plane, rail, s_limits, cover=True):
    """Rail surface n(s) in the plane, sampled on [s_limits] (arrays s, n, increasing s)."""
    centre, vertical, theta = _rail_placement(setup, rail)
    profile = setup.rail
    u = np.arange(profile.lateral_min, profile.lateral_max, PLANE_SAMPLE_STEP)
    z = profile.height_at(u)
    c, sn = math.cos(theta), math.sin(theta)
    s, n = plane.to_plane(centre + c * u - sn * z, vertical + sn * u + c * z)
    return _monotone_window(s, n, s_limits, "rail", cover)


def _wheel_points(setup, pose, plane, x, s_w):
    """Plane coordinates (s, n) of the wheel surface points of profile coordinates s_w at the
    rolling coordinate(s) x: arrays of shape broadcast(x, s_w) (left-wheel pose)."""
    profile = setup.wheel
    axial = setup.taping_line_axial + s_w
    radius = setup.nominal_radius + profile.height_at(s_w)
    cphi, sphi = math.cos(pose.roll), math.sin(pose.roll)
    cpsi, spsi = math.cos(pose.yaw), math.sin(pose.yaw)
    # wheel point (R sin th, a, -R cos th) turned by Rz(yaw) Rx(roll): its x is
    # R cos(psi) sin th - R sin(phi) sin(psi) cos th - a cos(phi) sin(psi) = x
    a_coef = radius * cpsi
    b_coef = -radius * sphi * spsi
    amplitude = np.hypot(a_coef, b_coef)
    ratio = (x + axial * cphi * spsi) / amplitude
    if np.any(np.abs(ratio) >= 1.0):
        raise NormalContactError("rolling coordinate beyond the wheel radius")
    th = np.arcsin(ratio) - np.arctan2(b_coef, a_coef)
    lateral = axial * cphi + radius * np.cos(th) * sphi
    Y = pose.y + radius * np.sin(th) * spsi + lateral * cpsi
    Z = pose.z + axial * sphi - radius * np.cos(th) * cphi
    return plane.to_plane(Y, Z)


def _wheel_section(setup, pose, plane, x, s_limits, cover=True):
    """Wheel surface n(s) in the plane at the rolling coordinate x (left-wheel pose)."""
    profile = setup.wheel
    s_w = np.arange(profile.lateral_min, profile.lateral_max, PLANE_SAMPLE_STEP)
    s, n = _wheel_points(setup, pose, plane, float(x), s_w)
    return _monotone_window(s, n, s_limits, "wheel", cover)


def contact_plane_gap(setup, pose, rail_u, *, side=0, rail=None, cell=1e-4, depth=3e-4,
                      s_window=25e-3, others=()) -> ContactPlaneGrid:
    """Normal gap of one wheel on its rail on a grid of the contact plane at rail_u.

    setup: solver.geometry.ContactSetup; pose: WheelsetPose (track frame);
    rail_u: the rail profile coordinate (m) of the rigid contact point whose
    plane is used; side: 0 left, 1 right wheel; rail: RailPose of the wheel's
    rail in its side-local frame (None: at rest); cell: element size (m);
    depth: the window holds the contiguous band around the contact point where
    the gap along x = 0 is within `depth` of its minimum, plus two elements,
    and along x the extent where x^2 cos(d) / (2 r) < depth, plus two
    elements (m); s_window: half-width of the search for that band (m);
    others: rail profile coordinates (m) of other contact points of the wheel
    that make patches of their own: the band stops at the highest gap between
    the contact point and each of them (the ridge between two patches).
    """
    if not (np.isfinite(cell) and cell > 0.0 and np.isfinite(depth) and depth > 0.0):
        raise NormalContactError("cell and depth must be finite and > 0 m")
    left_pose = _side_pose(pose, side)
    plane = contact_plane(setup, rail_u, rail)
    limits = (-float(s_window), float(s_window))
    s_r, n_r = _rail_section(setup, plane, rail, limits, cover=False)
    s_w, n_w = _wheel_section(setup, left_pose, plane, 0.0, limits, cover=False)
    s_line = np.arange(max(s_r[0], s_w[0]), min(s_r[-1], s_w[-1]), 0.25 * cell)
    if s_line.size < 3:
        raise NormalContactError("wheel and rail do not face each other in the contact plane")
    gap_line = np.interp(s_line, s_w, n_w) - np.interp(s_line, s_r, n_r)
    k0 = int(np.argmin(np.abs(s_line)))
    level = gap_line[k0] + depth
    lo_stop, hi_stop = 0, s_line.size - 1
    for u_other in others:
        other = contact_plane(setup, u_other, rail)
        s_other, _ = plane.to_plane(other.origin_y, other.origin_z)
        k_other = int(np.argmin(np.abs(s_line - s_other)))
        if k_other > k0:
            hi_stop = min(hi_stop, k0 + int(np.argmax(gap_line[k0:k_other + 1])))
        elif k_other < k0:
            lo_stop = max(lo_stop, k_other + int(np.argmax(gap_line[k_other:k0 + 1])))
    lo = k0
    while lo > lo_stop and gap_line[lo - 1] < level:
        lo -= 1
    hi = k0
    while hi < hi_stop and gap_line[hi + 1] < level:
        hi += 1
    s_lo = s_line[lo] - 2.0 * cell
    s_hi = s_line[hi] + 2.0 * cell
    ns = max(int(math.ceil((s_hi - s_lo) / cell)), 4)
    s = s_lo + cell * (np.arange(ns) + 0.5)
    radius = setup.nominal_radius + float(np.max(setup.wheel.height))
    x_half = math.sqrt(2.0 * radius * depth / max(math.cos(plane.angle), 0.05)) + 2.0 * cell
    nx = max(int(math.ceil(2.0 * x_half / cell)), 4)
    x = -0.5 * nx * cell + cell * (np.arange(nx) + 0.5)
    gap = plane_gap_on_grid(setup, pose, plane, x, s, side=side, rail=rail)
    return ContactPlaneGrid(gap, x, s, float(cell), float(cell), plane, float(gap.min()))


def plane_gap_on_grid(setup, pose, plane, x, s, *, side=0, rail=None):
    """Normal gap (m) of one wheel on its rail at the points x (nx,) by s (ns,) of a contact plane.

    The wheel of `pose` (WheelsetPose, track frame; side 0 left, 1 right) as
    the exact body of revolution of its profile; the rail (RailPose `rail`,
    side-local, or None) as the prismatic surface of its profile. Returns an
    (nx, ns) array, negative = interpenetration.
    """
    left_pose = _side_pose(pose, side)
    x = np.asarray(x, dtype=float)
    s = np.asarray(s, dtype=float)
    step = float(s[1] - s[0]) if s.size > 1 else PLANE_SAMPLE_STEP
    window = (float(s[0]) - step, float(s[-1]) + step)
    s_r, n_r = _rail_section(setup, plane, rail, window)
    rail_n = np.interp(s, s_r, n_r)
    # the wheel samples that cover the window at x = 0, with a margin for the other rows
    profile = setup.wheel
    s_all = np.arange(profile.lateral_min, profile.lateral_max, PLANE_SAMPLE_STEP)
    s_mid, n_mid = _wheel_points(setup, left_pose, plane, 0.0, s_all)
    s_run, _ = _monotone_window(s_mid, n_mid, window, "wheel")
    margin = 2e-3
    inside = np.nonzero((s_mid >= s_run[0] - margin) & (s_mid <= s_run[-1] + margin))[0]
    k_lo, k_hi = int(inside.min()), int(inside.max()) + 1
    samples = s_all[k_lo:k_hi]
    S, N = _wheel_points(setup, left_pose, plane, x[:, None], samples[None, :])
    if S[0, -1] < S[0, 0]:
        S, N = S[:, ::-1], N[:, ::-1]
    gap = np.empty((x.size, s.size))
    monotone = np.all(np.diff(S, axis=1) > 0.0, axis=1)
    for i in range(x.size):
        if monotone[i] and S[i, 0] <= window[0] and S[i, -1] >= window[1]:
            gap[i] = np.interp(s, S[i], N[i]) - rail_n
        else:
            s_w, n_w = _wheel_section(setup, left_pose, plane, float(x[i]), window)
            gap[i] = np.interp(s, s_w, n_w) - rail_n
    return gap


@dataclass(frozen=True)
class WheelNormalContact:
    """Exact normal contact of one wheel, each patch in its own contact plane. SI units.

    grids: ContactPlaneGrid per patch, its gap that of the loaded (lowered)
    wheel; results: ExactNormalResult per patch (its y axis is the plane's s);
    normal_forces: N per patch (N); approaches: the largest interpenetration
    of the undeformed surfaces of each patch along its plane normal (m);
    vertical_force: sum of N cos(d) (N), the vertical load carried;
    vertical_approach: how far the wheelset is lowered from its rigid contact
    to carry the load (m); iterations: evaluations of the vertical balance.
    """

    grids: tuple
    results: tuple
    normal_forces: tuple
    approaches: tuple
    vertical_force: float
    vertical_approach: float
    iterations: int


#: Contact points of one wheel farther apart than this along the rail profile are separate
#: patches, each in its own contact plane; nearer ones share the plane of the deeper one
#: (CONTACT's separation distance d_sep of its examples, 8 mm).
PATCH_SEPARATION = 8e-3


def _plane_patches(setup, pose, points, side, rail, cell, depth):
    """Contact-plane grids of the contact points of one wheel, deepest first: a point within
    PATCH_SEPARATION (along the rail profile) of an earlier one belongs to its patch."""
    count = int(points.count[side])
    if count < 1:
        raise NormalContactError("the wheel has no contact point")
    order = np.argsort(points.gap[side, :count])
    leaders = []
    for k in order:
        u = float(points.y_rail[side, k])
        if all(abs(u - v) >= PATCH_SEPARATION for v in leaders):
            leaders.append(u)
    grids = []
    for u in leaders:
        others = tuple(v for v in leaders if v != u)
        grids.append(contact_plane_gap(setup, pose, u, side=side, rail=rail, cell=cell, depth=depth,
                                       others=others))
    return grids


def wheel_normal_contact(setup, pose, points, vertical_load, young, poisson, *, side=0, rail=None,
                         cell=1e-4, depth=3e-4, tolerance=1e-9, load_tolerance=1e-6) -> WheelNormalContact:
    """Exact frictionless normal contact of one wheel carrying a vertical load, in contact planes.

    setup: ContactSetup; pose: WheelsetPose of the rigid contact (e.g. a
    static_contact() result); points: its ContactPoints (solver.geometry);
    side: 0 left, 1 right; vertical_load: the load of the wheel on its rail
    along the track's vertical (N); young (Pa), poisson. Each patch is solved
    in the plane tangent to the rail at its rigid contact point
    (contact_plane_gap), the patches elastically independent (as CONTACT
    treats separate patches). The wheelset is lowered by dz from its rigid
    contact until sum N_i cos(d_i) equals the load (frictionless: the normal
    forces carry it alone), and the gaps are those of the lowered wheel: on an
    inclined plane the vertical motion also slides the wheel along the plane
    by dz sin(d), which changes a conformal flange-root patch by several per
    cent (CONTACT's module 1 does the same). dz is found by the secant method
    to a relative load error below load_tolerance.
    """
    if not (np.isfinite(vertical_load) and vertical_load > 0.0):
        raise NormalContactError(f"vertical load must be finite and > 0 N, got {vertical_load!r}")
    if side not in (0, 1):
        raise NormalContactError(f"side must be 0 (left) or 1 (right), got {side!r}")
    from .geometry import WheelsetPose
    grids = _plane_patches(setup, pose, points, side, rail, cell, depth)
    cosines = [math.cos(g.plane.angle) for g in grids]
    if min(cosines) <= 0.0:
        raise NormalContactError("a contact plane is vertical or beyond: it carries no vertical load")

    def lowered_gaps(dz):
        moved = WheelsetPose(float(pose.y), float(pose.z) - dz, float(pose.roll), float(pose.yaw))
        return [plane_gap_on_grid(setup, moved, g.plane, g.x, g.s, side=side, rail=rail) for g in grids]

    def finish(dz, gaps, results, iterations):
        moved = tuple(replace(g, gap=h, min_gap=float(h.min())) for g, h in zip(grids, gaps))
        return WheelNormalContact(moved, tuple(results), tuple(r.total_force for r in results),
                                  tuple(max(-float(h.min()), 0.0) for h in gaps),
                                  float(sum(r.total_force * c for r, c in zip(results, cosines))), float(dz),
                                  iterations)

    first = exact_normal_contact(grids[0].gap, grids[0].dx, grids[0].ds, vertical_load / cosines[0], young,
                                 poisson, x0=float(grids[0].x[0]), y0=float(grids[0].s[0]), method="fft",
                                 tolerance=tolerance)
    dz = first.approach / cosines[0]
    if len(grids) == 1:
        # one patch carries N = load / cos(d): lower the wheel until the solution needs no further
        # rigid approach of the lowered surfaces (a fixed point: the sliding is a small perturbation)
        grid = grids[0]
        for iterations in range(1, 31):
            gaps = lowered_gaps(dz)
            result = exact_normal_contact(gaps[0], grid.dx, grid.ds, vertical_load / cosines[0], young, poisson,
                                          x0=float(grid.x[0]), y0=float(grid.s[0]), method="fft",
                                          tolerance=tolerance)
            dz += result.approach / cosines[0]
            if abs(result.approach) <= load_tolerance * max(abs(dz), 1e-12):
                return finish(dz - result.approach / cosines[0], gaps, [result], iterations)
        raise NormalContactError("the wheel's vertical balance did not converge")

    pressures = [None] * len(grids)

    def balance(z):
        gaps = lowered_gaps(z)
        results = [exact_normal_contact_approach(h, g.dx, g.ds, 0.0, young, poisson, x0=float(g.x[0]),
                                                 y0=float(g.s[0]), tolerance=tolerance, initial_pressure=p)
                   for h, g, p in zip(gaps, grids, pressures)]
        for k, r in enumerate(results):
            if r.total_force > 0.0:
                pressures[k] = r.pressure
        return sum(r.total_force * c for r, c in zip(results, cosines)) - vertical_load, gaps, results

    # several patches: secant method on dz from the principal patch's estimate
    z0, z1 = dz, 1.05 * dz
    f0 = balance(z0)[0]
    f1, gaps, results = balance(z1)
    iterations = 2
    while abs(f1) > load_tolerance * vertical_load:
        if iterations >= 40 or f1 == f0:
            raise NormalContactError("the wheel's vertical balance did not converge")
        z2 = z1 - f1 * (z1 - z0) / (f1 - f0)
        z2 = min(max(z2, 0.25 * z1), 4.0 * z1)
        z0, f0 = z1, f1
        z1 = z2
        f1, gaps, results = balance(z1)
        iterations += 1
    return finish(z1, gaps, results, iterations)
