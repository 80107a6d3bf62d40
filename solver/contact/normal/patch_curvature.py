"""The lateral curvature of a contact patch: from the gap at the patch's edges,
not the profiles' curvature at one point.

Hertz's theory takes the relative curvatures at the contact point as those of
the whole patch. Real profiles change curvature inside a patch (the LMA tread's
R450 arc meets its 1:40 line at s = 4.254 mm; the flange root's arcs meet the
flange face and the tread), so a stiffness from the point's own curvatures
steps when the point crosses such a junction, while the patch (5-15 mm wide)
slides over it gradually; and at a conformal flange root (S1002's R13 in
UIC60's R13 gauge corner) the curvatures at the point nearly cancel, where the
patch's width is set by how the profiles part further out. The equivalent-
ellipse methods take the patch's curvature from the gap over the patch
instead (Piotrowski & Chollet 2005, "Wheel-rail contact models for vehicle
system dynamics including multi-point contact", Vehicle System Dynamics
43(6-7) 455-483, section 5; Kik & Piotrowski 1996; Ayasse & Chollet 2005).
Here the lateral curvature sum is the secant of the gap at the patch's
lateral edges:

    B = (g(+b) + g(-b)) / (2 b^2),

g(t) the gap between the two surfaces, normal to the contact plane, at the
distance t along their common tangent from the contact point (the wheel's and
the rail's offsets from their tangent lines, each exact on its own profile: a
cubic Hermite interpolation of the contact tables' height and slope columns),
b the lateral semi-axis of the Hertz ellipse of that B. For a gap B t^2 (a
Hertz contact) it is B exactly; where the curvature jumps inside the patch it
weighs both sides; at a conformal root it grows with b as the profiles part.
b and B are found together by a fixed number of substitutions from a start
that depends on the penetration only (FIXED_POINT_PASSES), so B is a
continuous function of the point's place and penetration. It is held at least
CURVATURE_FLOOR (the gap of a contact deeper than this point at the edge would
make it negative: that is the neighbouring point's patch).

Checked against the point curvature on circular arcs, for continuity across the
LMA tread junction (tests/test_patch_curvature.py) and, through the normal
force it gives, against CONTACT's non-Hertzian solutions at the flange root and
across the LMA tread junction (docs/contact_mechanics.md).
"""

import math

from numba import njit

from ...layout import T_H, T_SLOPE
from .hertz import hertz_from_penetration_fit_kernel

# substitutions of b -> B -> b (the result is continuous for any fixed number;
# tests/test_patch_curvature.py measures how close 3 come to the fixed point)
FIXED_POINT_PASSES = 3
# the start: the Hertz semi-axis of a contact of this lateral curvature sum (1/m;
# a tread against a rail crown), which depends on the penetration only
START_CURVATURE_SUM = 2.0
# the smallest lateral curvature sum (1/m): a lateral radius of 20 m
CURVATURE_FLOOR = 0.05
# the widest half-window (m along the tangent)
MAX_WINDOW = 0.02


@njit(cache=True, error_model="numpy", _nrt=False)
def hermite_height_slope(table, x0, dx, x):
    """(height, slope) of a profile table (columns T_H, T_SLOPE on the uniform grid
    x0 + i dx) at x by cubic Hermite interpolation (continuous height and slope);
    beyond the table's ends its end tangent (the contact tables end where the
    profiles turn steeper than 80 deg, solver.contact.geometry.setup)."""
    n = table.shape[0]
    f = (x - x0) / dx
    if f <= 0.0:
        return table[0, T_H] + table[0, T_SLOPE] * (x - x0), table[0, T_SLOPE]
    if f >= n - 1:
        end = x0 + (n - 1) * dx
        return table[n - 1, T_H] + table[n - 1, T_SLOPE] * (x - end), table[n - 1, T_SLOPE]
    i = int(f)
    t = f - i
    h0 = table[i, T_H]
    h1 = table[i + 1, T_H]
    m0 = table[i, T_SLOPE] * dx
    m1 = table[i + 1, T_SLOPE] * dx
    t2 = t * t
    t3 = t2 * t
    height = ((2.0 * t3 - 3.0 * t2 + 1.0) * h0 + (t3 - 2.0 * t2 + t) * m0
              + (-2.0 * t3 + 3.0 * t2) * h1 + (t3 - t2) * m1)
    slope = ((6.0 * t2 - 6.0 * t) * (h0 - h1) + (3.0 * t2 - 4.0 * t + 1.0) * m0
             + (3.0 * t2 - 2.0 * t) * m1) / dx
    return height, slope


@njit(cache=True, error_model="numpy", _nrt=False)
def tangent_offset(table, grid, centre, height0, slope0, t):
    """The profile's offset from its tangent line at `centre` (convex positive, m)
    at the distance t (m, signed, + towards larger lateral) along that tangent;
    `height0`, `slope0` the profile's height and slope at `centre`. The profile
    point at tangent distance t is found by two Newton corrections from the
    first-order guess."""
    x0, dx = grid
    c0 = 1.0 / math.sqrt(1.0 + slope0 * slope0)
    x = centre + t * c0
    for _ in range(2):
        h, slope = hermite_height_slope(table, x0, dx, x)
        along = (x - centre + slope0 * (h - height0)) * c0
        rate = (1.0 + slope0 * slope) * c0
        if not rate > 0.1 * c0:         # the profile turned by more than about 84 deg
            break
        x += (t - along) / rate
    h, _ = hermite_height_slope(table, x0, dx, x)
    return -(h - height0 - slope0 * (x - centre)) * c0


@njit(cache=True, error_model="numpy", _nrt=False)
def patch_geometry(wheel, rail, wheel_grid, rail_grid, s_wheel, u_rail, penetration, A, young,
                   poisson):
    """(B, shift, rail slope at the patch's centre) of the patch of a contact point
    at wheel coordinate s_wheel and rail coordinate u_rail (m) with normal
    penetration `penetration` (m, > 0) and longitudinal curvature sum A (1/m):
    B (1/m) the secant of the gap at the patch's lateral edges (module
    docstring); shift (m, along the common tangent, + towards larger lateral)
    the patch's centre from the point: the vertex of the parabola through the
    gap at -b, 0 and +b, -b (g(+b) - g(-b)) / (2 (g(+b) + g(-b))), at most b:
    the patch leans to the side where the surfaces part more slowly (in a flat-
    bottomed conformal patch the minimum of the gap wanders over millimetres for
    sub-micrometre changes of it, while the patch's centre does not); the rail
    profile's slope (in its own frame) there. wheel_grid, rail_grid: (first
    abscissa, step) of the tables."""
    f0, fs0 = hermite_height_slope(wheel, wheel_grid[0], wheel_grid[1], s_wheel)
    z0, zs0 = hermite_height_slope(rail, rail_grid[0], rail_grid[1], u_rail)
    _, _, b, _ = hertz_from_penetration_fit_kernel(penetration, A, START_CURVATURE_SUM, young,
                                                   poisson)
    B = START_CURVATURE_SUM
    shift = 0.0
    for _ in range(FIXED_POINT_PASSES):
        if not b > 0.0:
            break
        b = min(b, MAX_WINDOW)
        g_minus = (tangent_offset(wheel, wheel_grid, s_wheel, f0, fs0, -b)
                   + tangent_offset(rail, rail_grid, u_rail, z0, zs0, -b))
        g_plus = (tangent_offset(wheel, wheel_grid, s_wheel, f0, fs0, b)
                  + tangent_offset(rail, rail_grid, u_rail, z0, zs0, b))
        B = max(0.5 * (g_plus + g_minus) / (b * b), CURVATURE_FLOOR)
        shift = -0.25 * (g_plus - g_minus) / (B * b)
        if shift > b:
            shift = b
        elif shift < -b:
            shift = -b
        _, _, b, _ = hertz_from_penetration_fit_kernel(penetration, A, B, young, poisson)
    _, slope = hermite_height_slope(rail, rail_grid[0], rail_grid[1],
                                    u_rail + shift / math.sqrt(1.0 + zs0 * zs0))
    return B, shift, slope
