"""The Kik-Piotrowski approximate non-Hertzian normal contact (virtual penetration)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..geometry.search import VIRTUAL_PENETRATION
from .boundary_element import rectangle_primitive, rectangle_primitive_kernel
from .hertz import NormalContactError, check_material, material_ok_kernel


#: Kik & Piotrowski (1996), Piotrowski & Kik (2008): virtual penetration = 0.55 * delta
#: (the same fact bounds the contact zones of the multipoint search: solver.contact.geometry).
KIK_PIOTROWSKI_REDUCTION = VIRTUAL_PENETRATION


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
    corner_high = rectangle_primitive(edges, v_high)
    corner_low = rectangle_primitive(edges, v_low)
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
            displacement_integral += average * 2.0 * (rectangle_primitive_kernel(x_half, v_high)
                                                      - rectangle_primitive_kernel(x_half, v_low))
        x_prev = L * (-1.0 + 2.0 * first / cells_per_strip)
        root = L * L - x_prev * x_prev
        prim_prev = 0.5 * (x_prev * math.sqrt(root if root > 0.0 else 0.0) + L * L * math.asin(x_prev / L))
        high_prev = rectangle_primitive_kernel(x_prev, v_high)
        low_prev = rectangle_primitive_kernel(x_prev, v_low)
        for k in range(first + 1, cells_per_strip + 1):
            x_next = L * (-1.0 + 2.0 * k / cells_per_strip)
            r = x_next / L
            if r > 1.0:
                r = 1.0
            root = L * L - x_next * x_next
            prim_next = 0.5 * (x_next * math.sqrt(root if root > 0.0 else 0.0) + L * L * math.asin(r))
            high_next = rectangle_primitive_kernel(x_next, v_high)
            low_next = rectangle_primitive_kernel(x_next, v_low)
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
