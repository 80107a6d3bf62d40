"""The wheel loads are continuous where the contact point jumps
(docs/contact_load_sharing.md).

Quasi-static: the lateral displacement y is swept through every jump of the
rigid contact point of a profile pair (the deepest point of the rigid geometry
moves by more than 1 mm between neighbouring y), with the wheelset in vertical
and roll equilibrium under its axle load at each y (WheelsetModel.initialize:
Newton on z and roll, no speed, so no creep). A continuous load has steps that
shrink with the spacing of y; a jump of the load does not.

Axle load: the loaded straight case (12 400 kg carried by the axle boxes, the
Manchester benchmark wheelset of 1813 kg): static wheel load 69.7 kN.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from fmu_wheelset.validation.common import CaseResult, Row

SUSPENDED_MASS = 12400.0
PAIRS = {       # wheel, rail, inclination 1:n, back-to-back (m), nominal radius (m)
    "S1002/UIC60 1:40": ("S1002", "UIC60", 40, 1.360, 0.46),
    "S1002/UIC60 1:20": ("S1002", "UIC60", 20, 1.360, 0.46),
    "LMA/CHN60 1:40": ("LMA", "CHN60", 40, 1.353, 0.43),
    "LMA-worn/CHN60 1:40": ("LMA-worn", "CHN60", 40, 1.353, 0.43),
}
SPACINGS = (1e-5, 5e-6, 2.5e-6)     # m: 0.01, 0.005, 0.0025 mm
WINDOW = 5e-5                      # m: +-0.05 mm around each jump
JUMP = 1e-3                        # m: the rigid point moves this far between neighbours
CLIMBING_ANGLE = math.radians(60.0)


def static_wheel_load() -> float:
    from solver.model.parameters import WheelsetParameters
    return (SUSPENDED_MASS + WheelsetParameters().mass) * 9.81 / 2.0


@functools.lru_cache(maxsize=None)
def model(pair):
    from solver.model.wheelset import WheelsetModel
    from solver.model.parameters import WheelsetParameters
    wheel, rail, ratio, back_to_back, radius = PAIRS[pair]
    return WheelsetModel(WheelsetParameters(
        wheel_profile=wheel, rail_profile=rail, rail_inclination=math.atan(1.0 / ratio),
        back_to_back=back_to_back, nominal_radius=radius, speed=0.0))


def _inputs():
    from solver.model.outputs import WheelsetInputs
    load = SUSPENDED_MASS * 9.81 / 2.0
    return WheelsetInputs(axle_box_force=np.array([[0.0, 0.0, -load], [0.0, 0.0, -load]]))


@functools.lru_cache(maxsize=None)
def rigid_jumps(pair, y_max=11e-3, dy=2e-5):
    """The lateral displacements where the left wheel's rigid contact point jumps."""
    from solver.contact.geometry.points import static_contact
    from solver.contact.geometry.setup import GeometryError
    setup = model(pair).setup
    jumps, prev = [], None
    for y in np.arange(-y_max, y_max, dy):
        try:
            rigid = static_contact(setup, float(y), epsilon=0.0)
        except GeometryError:
            prev = None
            continue
        s = rigid.points.y_wheel[0, 0]
        if prev is not None and abs(s - prev[1]) > JUMP:
            jumps.append(0.5 * (y + prev[0]))
        prev = (y, s)
    return tuple(jumps)


def equilibrium_loads(pair, y):
    """(total Q of the left wheel, [(s, normal force)] of its points) at the
    equilibrium at y, or None where there is none."""
    from solver.layout import MAX_POINTS
    from solver.errors import WheelsetError
    m = model(pair)
    try:
        m.initialize(_inputs(), lateral=float(y))
    except WheelsetError:
        return None
    out = m.outputs()
    points = [(out.contact_y_wheel[0, k], out.normal_force[0, k])
              for k in range(MAX_POINTS) if out.contact_active[0, k]]
    return float(out.vertical_force[0]), points


def largest_steps(loads):
    """Largest step of the total Q and of a point's load between neighbours; the
    points matched by their place on the wheel (within 2 mm; a point that
    appears or vanishes steps from or to 0)."""
    dq = dp = 0.0
    for (qa, pa), (qb, pb) in zip(loads[:-1], loads[1:]):
        dq = max(dq, abs(qb - qa))
        for here, there in ((pa, pb), (pb, pa)):
            for s, force in here:
                match = [f for t, f in there if abs(t - s) < 2e-3]
                dp = max(dp, abs((match[0] if match else 0.0) - force))
    return dq, dp


@functools.lru_cache(maxsize=None)
def sweep(pair, centre, spacing):
    ys = centre + np.arange(-WINDOW, WINDOW + 0.5 * spacing, spacing)
    return tuple(equilibrium_loads(pair, y) for y in ys)


@functools.lru_cache(maxsize=None)
def standing_jumps(pair):
    """(the jumps with an equilibrium everywhere in the window, the climbing
    jumps). A jump may lack one only where the rigid contact jumps onto the
    steep flange face (> 60 deg): the face's normal force then tips the wheelset
    over its flange (a lateral force at the rail level against the wheel loads'
    lever: the other wheel would have to pull): the wheel climbs. Any other
    jump without an equilibrium raises AssertionError."""
    from solver.contact.geometry.points import static_contact
    standing, climbing = [], []
    setup = model(pair).setup
    for centre in rigid_jumps(pair):
        if all(entry is not None for entry in sweep(pair, centre, SPACINGS[0])):
            standing.append(centre)
            continue
        angle = static_contact(setup, float(centre + WINDOW), epsilon=0.0).points.contact_angle[0, 0]
        if not angle > CLIMBING_ANGLE:
            raise AssertionError(f"{pair}: no equilibrium around the jump at {centre * 1e3:.3f} mm, "
                                 f"where the rigid contact reaches {math.degrees(angle):.1f} deg")
        climbing.append(centre)
    return tuple(standing), tuple(climbing)


def tread_jump_step():
    """(centre, the largest step of Q at 0.01 mm spacing) at the S1002/UIC60 1:40 tread jump."""
    pair = "S1002/UIC60 1:40"
    centre = min(standing_jumps(pair)[0], key=lambda y: abs(y - 0.23e-3))
    return centre, largest_steps(sweep(pair, centre, SPACINGS[0]))[0]


def case_load_continuity(out, backend="fmu") -> CaseResult:
    static = static_wheel_load()
    centre, dq = tread_jump_step()
    rows = [Row("Wheel-load continuity", f"S1002/UIC60 1:40 tread jump (y = {centre * 1e3:.2f} mm): "
                "largest step of the wheel's Q between y 0.01 mm apart, of the static load",
                "<= 1 %", dq / static * 100, "%", 0.0, 1.0, "core",
                why="1 %: a continuous load shows no step at this spacing (the single deepest-point model stepped by 1.8 %, with no equilibrium at the jump)")]
    return CaseResult("load_continuity", "Wheel loads through contact-point jumps",
                      rows, [], [], "core")
