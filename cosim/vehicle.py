"""A bogie vehicle over four wheelset FMUs: the reference example of coupling
the FMU into a vehicle model.

The vehicle is the Manchester benchmark vehicle 1 (Iwnicki 1998, "The
Manchester benchmarks for rail vehicle simulation", VSD 30:3-4, 295-313): a
carbody and two bogie frames, rigid bodies with six degrees of freedom each,
joined by the secondary suspension; each bogie frame carries two wheelsets
through the primary suspension (one linear spring-damper triple per axle box).
The wheelsets are four instances of `Wheelset.fmu` (FMI 2.0 co-simulation,
loaded with FMPy's `FMU2Slave`); this master integrates the bodies and the
suspensions and exchanges, at every communication step h, the axle-box forces
(to the FMUs) and the axle-box kinematics (from the FMUs). A Modelica or
Simulink vehicle model couples the FMU in exactly the same way.

Exchanged variables and their signs (every one in the track frame of the
wheelset: x forward along the track, y to the LEFT, z UP, moving along the
track centreline at the speed V; SI units)
-----------------------------------------------------------------------------
to each FMU, held constant over the step:
  axlebox.{left,right}.force.{x,y,z}  (N)   force OF the primary suspension ON
      the wheelset at that axle box (+ along the axes). At rest on straight
      track force.z = -(carbody/8 + bogie/4)*g = -48.6 kN: the spring pushes the
      wheelset DOWN. The master sends the trapezoidal mean of the suspension
      force over the step (see the coupling below).
  axlebox.{left,right}.moment.{x,y,z} (N.m) moment on the wheelset at the box:
      0 here (the primary springs act at the box centres on the axle line).
  track.curvature (1/m, + left curve) and track.cant_angle (rad, about +x, +
      lifts the LEFT rail; a left curve with the outer rail raised has a
      negative cant angle), at the wheelset's own position along the track
      (parameters track.curvature_from_input = track.cant_from_input = true).
from each FMU, at the end of the step:
  axlebox.{left,right}.position.{x,y,z} (m) position of the axle-box centre
      relative to the track centreline at the wheelset (x relative to the frame
      moving at V); the left box is at y = +b (b = axle-box semi-spacing).
  axlebox.{left,right}.velocity.{x,y,z} (m/s) its velocity in that frame.
  From the two boxes the master forms the wheelset's x, y, z (means), roll =
  (z_left - z_right)/(2b) and yaw = (x_right - x_left)/(2b) (+ about +z: the
  wheelset heads to the left).
  For the results (read every `record_every` steps): wheel.{side}.Q (N, wheel
  on rail, + down), wheel.{side}.Y (N, + towards the field side),
  wheel.{side}.force_on_rail.y (N, wheel on rail, +y), wheelset.y, wheelset.yaw,
  and the creep forces and creepages of the contact slots (wear number).

Reference geometry and static equilibrium
-----------------------------------------
All body coordinates are displacements relative to the body's nominal
position in its own local track frame (at its position along the track). The
springs carry their static loads at zero displacement (the vertical preloads
carbody/4 per secondary spring, (carbody/2 + bogie)/4 per axle box: a
symmetric vehicle is statically determinate), and each FMU is initialised with
the static axle-box forces as its inputs (the FMU finds its static equilibrium
under the inputs set before fmi2ExitInitializationMode), so at t = 0 every
body is in equilibrium: no load step. Between bodies at different positions
along a curve, the relative displacement of a suspension element includes the
track's own geometry (heading difference, lateral offset of the curved
centreline, cant difference; linearised, exact for constant curvature), and
the geometric stiffness of the vertical preloads in roll and pitch (the static
forces stay vertical while the bodies rotate).
Inertial loads of each body in its track frame: lateral -m (V^2 k cos c + g sin c),
vertical -m (g cos c - V^2 k sin c) (k curvature, c cant angle, as in the
wheelset core), yaw -J_z V^2 dk/ds. The roll acceleration of the track frame
at the ends of a cant transition (a second derivative of the cant) is left out.

Coupling analysis and the scheme used
-------------------------------------
The stiff elements are the primary longitudinal springs, kx = 31.4 MN/m per
box (Iwnicki 1998). The mode of the bogie frame (2615 kg) against its two
wheelsets (rolling mass m + J_y/r0^2 = 2342 kg each) on 4 kx has
omega^2 = 4 kx (1/m_frame + 1/(2 m_rolling)), omega = 259 rad/s (41 Hz), and
damping ratio zeta = 4 cx / (2 m_reduced omega) = 0.069 (cx = 15 kN s/m per
box). With the plain explicit (Jacobi) coupling the FMU holds the force of the
start of the step: a delay of h/2 in the spring force, which acts as a
negative damping d zeta = -omega h / 4 (x'' + omega^2 x(t - tau): the delayed
stiffness adds -omega^2 tau x', d zeta = -omega tau / 2 with tau = h/2). At
h = 1 ms d zeta = -0.065, nearly all of the physical 0.069: the mode is just
stable and the result depends on h (measured: `coupling="explicit"`, see
tests/test_vehicle.py and docs/vehicle.md). The bogie yaw mode against the wheelsets (4 kx b^2 + 4 ky l^2
on 3067 kg.m^2, omega = 222 rad/s) behaves alike; the lateral (4 ky on the
frame, 77 rad/s) and vertical (43 rad/s) modes lose less (-0.019, -0.011).

So the master uses a linearly implicit coupling with an interface model of
each wheelset (`coupling="interface"`, the default): over each step the
master integrates its bodies TOGETHER with a rigid-body model of each wheelset
(mass m + J_y/r0^2 in x, m in y and z, J_x in roll, J_z in yaw) carrying the
forces the FMU's wheelset received besides the suspension over the previous
step (contact, gravity, inertial: G = M (v_n - v_(n-1)) / h - F_(n-1), from the
FMU's own box velocities), with the trapezoidal rule (Newmark average
acceleration: A-stable, no numerical damping). The FMU then receives the
trapezoidal mean (F_n + F_(n+1))/2 of the suspension forces of that solution,
the same impulse the bogie frame receives (momentum is exchanged exactly), and
at the end of the step the interface models are reset to the FMU's box
kinematics. The coupling error is then only the difference between the FMU's
response and the interface model's over one step (the change of the contact
forces within the step, small against the suspension forces for the modes
above: the slip time constant of the creep forces, 0.2-0.8 ms, is shorter than
h, so within a step the wheelset rolls like the rolling mass of the model),
and the scheme needs one doStep per FMU per communication step, no rollback
(fmi2GetFMUstate) and no directional derivatives (the FMU provides them now,
fmi2GetDirectionalDerivative, but only for the direct feedthrough of the rail
inputs to the contact outputs; the axle-box forces act through the step): it
works with every FMI 2.0 co-simulation host.
"""
from __future__ import annotations

import ctypes
import math
import shutil
import tempfile
import time as _time
import zipfile
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from .fmpy_host import set_variable

GRAVITY = 9.81
RAIL_DISTANCE = 1.5   # m, lateral distance of the rail centres (cant angle = asin(h / 1.5))
SIDES = ("left", "right")


class VehicleError(RuntimeError):
    """The coupled run cannot go on (bad parameters, an FMU refused a step)."""


# ---------------------------------------------------------------------------
# vehicle data
# ---------------------------------------------------------------------------

@dataclass
class VehicleParameters:
    """Manchester benchmark vehicle 1 (Iwnicki 1998, VSD 30).

    From docs/references.md (Iwnicki 1998): wheelset 1813 kg, J 1120/112/
    1120 kg m^2, r0 0.46 m, semi-wheelbase 1.28 m, primary springs at 1.0 m
    lateral semi-spacing, kx 31.391 MN/m, ky 3.884 MN/m, kz 1.22 MN/m, cx 15,
    cy 2, cz 4 kN s/m per box; bogie frame 2615 kg, J 1722/1476/3067 kg m^2.
    Checked against a second source (the TTB-2D vehicle table citing Iwnicki
    1998, DanielCanteroNTNU/TTB-2D TrainProp_Manchester): carbody 32 000 kg,
    J_y 1.97e6 kg m^2, bogie semi-spacing 9.5 m, secondary vertical 430 kN/m
    and 20 kN s/m per side (that table gives the primary vertical as 1.2 MN/m).
    The static wheel load (32000/8 + 2615/4 + 1813/2) g = 54.55 kN agrees with
    REFERENCES' 54.5 kN.

    ASSUMED (Iwnicki 1998 not at hand, values as recalled and not checked
    against a second source): carbody J_x 56 800 and J_z 1.97e6 kg m^2;
    secondary longitudinal and lateral stiffness 160 kN/m per side, lateral
    damping 32 kN s/m per side, no longitudinal damping, no yaw damper or
    anti-roll bar; secondary springs at 1.0 m lateral semi-spacing, 1.0 m above
    the rail; centres of mass 2.0 m (carbody) and 0.6 m (bogie frame) above
    the rail. They change the carbody modes, not the static loads or the
    quasi-static curving balance checked in the tests.
    """

    carbody_mass: float = 32000.0
    carbody_inertia: tuple = (56800.0, 1.97e6, 1.97e6)
    carbody_height: float = 2.0
    bogie_mass: float = 2615.0
    bogie_inertia: tuple = (1722.0, 1476.0, 3067.0)
    bogie_height: float = 0.6
    wheelset_mass: float = 1813.0
    wheelset_inertia: tuple = (1120.0, 112.0, 1120.0)
    wheel_radius: float = 0.46
    bogie_semi_spacing: float = 9.5
    semi_wheelbase: float = 1.28
    primary_semi_spacing: float = 1.0
    primary_stiffness: tuple = (31.391e6, 3.884e6, 1.22e6)
    primary_damping: tuple = (15e3, 2e3, 4e3)
    secondary_semi_spacing: float = 1.0
    secondary_height: float = 1.0
    secondary_stiffness: tuple = (0.16e6, 0.16e6, 0.43e6)
    secondary_damping: tuple = (0.0, 32e3, 20e3)
    # not part of the benchmark: the coupling of the carbody to the train that
    # keeps the speed constant (a longitudinal spring-damper to the frame moving
    # at V; 2e5 N/m, 1e5 N s/m: 10 mm per 2 kN of running resistance, damping
    # ratio 0.5 with the vehicle's 42 t)
    drawbar_stiffness: float = 2e5
    drawbar_damping: float = 1e5

    def static_wheel_load(self) -> float:
        """The static vertical load of one wheel on its rail (N)."""
        return (self.carbody_mass / 8 + self.bogie_mass / 4 + self.wheelset_mass / 2) * GRAVITY

    def validate(self):
        for name, value in self.__dict__.items():
            values = value if isinstance(value, tuple) else (value,)
            for v in values:
                if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                    raise VehicleError(f"vehicle parameter {name} must be finite and >= 0, got {value!r}")
        for name in ("carbody_mass", "bogie_mass", "wheelset_mass", "wheel_radius",
                     "primary_semi_spacing", "secondary_semi_spacing"):
            if getattr(self, name) <= 0:
                raise VehicleError(f"vehicle parameter {name} must be > 0")
        for name in ("carbody_inertia", "bogie_inertia", "wheelset_inertia"):
            if min(getattr(self, name)) <= 0:
                raise VehicleError(f"vehicle parameter {name} must be > 0")


# ---------------------------------------------------------------------------
# track layout
# ---------------------------------------------------------------------------

@dataclass
class CurveLayout:
    """Straight, linear transition (curvature and cant ramp together), constant
    curve. `radius` > 0 for a LEFT curve, < 0 for a right curve, inf for
    straight track; `cant` = superelevation of the outer rail (m, >= 0) on a
    rail distance of 1.5 m."""

    radius: float = math.inf
    cant: float = 0.0
    straight: float = 10.0
    transition: float = 50.0

    def __post_init__(self):
        if not (self.radius != 0 and not math.isnan(self.radius)):
            raise VehicleError(f"curve radius must be non-zero, got {self.radius!r}")
        if abs(self.radius) < 50.0:
            raise VehicleError(f"curve radius {self.radius} m is below 50 m")
        if not (0.0 <= self.cant < 0.2):
            raise VehicleError(f"cant {self.cant} m must be in [0, 0.2)")
        if not (self.straight >= 0 and self.transition > 0):
            raise VehicleError("straight length must be >= 0 and transition length > 0")

    @property
    def full_curvature(self) -> float:
        return 0.0 if math.isinf(self.radius) else 1.0 / self.radius

    @property
    def full_cant_angle(self) -> float:
        """Cant angle about +x in the curve (+ lifts the left rail)."""
        side = 0.0 if math.isinf(self.radius) else math.copysign(1.0, self.radius)
        return -side * math.asin(self.cant / RAIL_DISTANCE)

    def ramp(self, s):
        return np.clip((np.asarray(s, dtype=float) - self.straight) / self.transition, 0.0, 1.0)

    def curvature(self, s):
        return self.full_curvature * self.ramp(s)

    def cant_angle(self, s):
        return self.full_cant_angle * self.ramp(s)

    def curvature_slope(self, s):
        s = np.asarray(s, dtype=float)
        inside = (s > self.straight) & (s < self.straight + self.transition)
        return np.where(inside, self.full_curvature / self.transition, 0.0)

    def cant_deficiency(self, speed: float) -> float:
        """V^2 s / (g R) - h (m) in the curve."""
        if math.isinf(self.radius):
            return 0.0
        return speed * speed * RAIL_DISTANCE / (GRAVITY * abs(self.radius)) - self.cant

    def frames(self, s_from, s_to):
        """Geometry of the local track frame at s_from seen from the one at s_to
        (arrays): heading difference, lateral offset of the centreline point at
        s_from, cant difference (linearised; exact for piecewise-linear curvature
        up to the quadrature)."""
        s_from = np.asarray(s_from, dtype=float)
        s_to = np.asarray(s_to, dtype=float)
        heading = self._heading
        # heading(s) = int curvature; offset = int_{s_to}^{s_from} (heading(s) - heading(s_to)) ds
        d_heading = heading(s_from) - heading(s_to)
        nodes, weights = np.polynomial.legendre.leggauss(4)
        offset = np.zeros(np.broadcast(s_from, s_to).shape)
        half = 0.5 * (s_from - s_to)
        mid = 0.5 * (s_from + s_to)
        for x, w in zip(nodes, weights):
            offset = offset + w * half * (heading(mid + half * x) - heading(s_to))
        return d_heading, offset, self.cant_angle(s_from) - self.cant_angle(s_to)

    def _heading(self, s):
        s = np.asarray(s, dtype=float)
        k = self.full_curvature
        a, L = self.straight, self.transition
        u = np.clip(s - a, 0.0, L)
        return k * (u * u / (2 * L) + np.maximum(s - a - L, 0.0))


# ---------------------------------------------------------------------------
# the mechanical model of the master (bodies + suspensions, linear)
# ---------------------------------------------------------------------------

BODY_DOFS = ("x", "y", "z", "roll", "pitch", "yaw")
WHEELSET_DOFS = ("x", "y", "z", "roll", "yaw")
N_BODY, N_WHEELSET = 6, 5
CARBODY = 0
BOGIES = (6, 12)
WHEELSETS = (18, 23, 28, 33)
N_DOF = 38


def _point_matrix(offset, wheelset=False):
    """Displacement (3) of a body-fixed point at `offset` (dx, dy, dz from the
    centre of mass) per body DOF (small rotations: u = t + rotation x offset)."""
    dx, dy, dz = offset
    if wheelset:   # x y z roll yaw (the spin angle does not move the boxes)
        return np.array([[1, 0, 0, 0, -dy], [0, 1, 0, -dz, dx], [0, 0, 1, dy, 0]], dtype=float)
    return np.array([[1, 0, 0, 0, dz, -dy], [0, 1, 0, -dz, 0, dx], [0, 0, 1, dy, -dx, 0]],
                    dtype=float)


@dataclass
class Element:
    """A linear spring-damper triple between a point of body A and a point of
    body B (forces along the track axes). `preload` = its static force on A."""
    name: str
    body_a: int          # first DOF index of A
    offset_a: tuple      # point on A from A's centre of mass (m)
    body_b: int
    offset_b: tuple
    stiffness: np.ndarray
    damping: np.ndarray
    preload: np.ndarray
    position_a: float    # longitudinal position of A's centre in the vehicle (m, + forward)
    position_b: float
    height: float        # height of the connection point above the rail (m)


class VehicleModel:
    """Mass, damping and stiffness of the 38-DOF model (carbody and bogie frames
    6 DOF each, the four wheelset interface models 5 DOF each) and the element
    layout. Body order: carbody, leading bogie, trailing bogie, wheelsets 1-4
    from the front."""

    def __init__(self, p: VehicleParameters):
        p.validate()
        self.p = p
        a, l, r0 = p.bogie_semi_spacing, p.semi_wheelbase, p.wheel_radius
        self.body_positions = {CARBODY: 0.0, BOGIES[0]: a, BOGIES[1]: -a,
                               WHEELSETS[0]: a + l, WHEELSETS[1]: a - l,
                               WHEELSETS[2]: -a + l, WHEELSETS[3]: -a - l}
        self.wheelset_positions = np.array([a + l, a - l, -a + l, -a - l])
        m = np.zeros(N_DOF)
        m[0:6] = [p.carbody_mass] * 3 + list(p.carbody_inertia)
        for b in BOGIES:
            m[b:b + 6] = [p.bogie_mass] * 3 + list(p.bogie_inertia)
        jx, jy, jz = p.wheelset_inertia
        self.rolling_mass = p.wheelset_mass + jy / r0 ** 2
        for w in WHEELSETS:
            m[w:w + 5] = [self.rolling_mass, p.wheelset_mass, p.wheelset_mass, jx, jz]
        self.mass = m
        g = GRAVITY
        elements = []
        sec_load = p.carbody_mass * g / 4
        prim_load = (p.carbody_mass / 2 + p.bogie_mass) * g / 4
        hs, hb, hc = p.secondary_height, p.bogie_height, p.carbody_height
        for k, b in enumerate(BOGIES):
            xb = self.body_positions[b]
            for side, sign in zip(SIDES, (1.0, -1.0)):
                ys = sign * p.secondary_semi_spacing
                elements.append(Element(
                    f"secondary {k + 1} {side}", CARBODY, (xb, ys, hs - hc), b, (0.0, ys, hs - hb),
                    np.array(p.secondary_stiffness, float), np.array(p.secondary_damping, float),
                    np.array([0.0, 0.0, sec_load]), 0.0, xb, hs))
        for j, w in enumerate(WHEELSETS):
            b = BOGIES[j // 2]
            dxw = self.body_positions[w] - self.body_positions[b]
            for side, sign in zip(SIDES, (1.0, -1.0)):
                yp = sign * p.primary_semi_spacing
                elements.append(Element(
                    f"primary {j + 1} {side}", b, (dxw, yp, r0 - hb), w, (0.0, yp, 0.0),
                    np.array(p.primary_stiffness, float), np.array(p.primary_damping, float),
                    np.array([0.0, 0.0, prim_load]), self.body_positions[b],
                    self.body_positions[w], r0))
        self.elements = elements
        n_e = len(elements)
        # relative displacement of all elements: delta = D q + g(t)
        D = np.zeros((3 * n_e, N_DOF))
        for e, el in enumerate(elements):
            rows = slice(3 * e, 3 * e + 3)
            ta = _point_matrix(el.offset_a, el.body_a in WHEELSETS)
            tb = _point_matrix(el.offset_b, el.body_b in WHEELSETS)
            D[rows, el.body_a:el.body_a + ta.shape[1]] += ta
            D[rows, el.body_b:el.body_b + tb.shape[1]] -= tb
        self.D = D
        self.k = np.concatenate([el.stiffness for el in elements])
        self.c = np.concatenate([el.damping for el in elements])
        self.preload = np.concatenate([el.preload for el in elements])
        self.K = D.T @ (self.k[:, None] * D)
        self.C = D.T @ (self.c[:, None] * D)
        # geometric stiffness of the preloads: the static forces stay vertical while
        # the bodies roll and pitch, so a preload P at a point dz above the centre
        # of mass adds the moment -P dz (roll, pitch) per radian on A (the load
        # -P on B: +P dz_B); the dx, dy cross terms cancel between symmetric springs
        for el in elements:
            load = el.preload[2]
            for body, dz, sign in ((el.body_a, el.offset_a[2], 1.0), (el.body_b, el.offset_b[2], -1.0)):
                if body in WHEELSETS:
                    self.K[body + 3, body + 3] += sign * load * dz      # roll (no pitch DOF)
                else:
                    self.K[body + 3, body + 3] += sign * load * dz
                    self.K[body + 4, body + 4] += sign * load * dz
        # the train: a drawbar holds the carbody at the speed V against the rolling
        # and curving resistance (constant-speed runs; no traction on the axles)
        self.K[CARBODY, CARBODY] += p.drawbar_stiffness
        self.C[CARBODY, CARBODY] += p.drawbar_damping
        self.primary_rows = np.arange(3 * 4, 3 * n_e)     # after the 4 secondary elements
        # generalised force of the element forces F (3 n_e, force on A): D^T F
        self.static_force = D.T @ self.preload

    def track_terms(self, layout: CurveLayout, s_centre):
        """g (n_steps, 3 n_e): the track's part of the element displacements for
        the carbody centre at distances s_centre."""
        s_centre = np.asarray(s_centre, dtype=float)
        out = np.zeros((s_centre.size, 3 * len(self.elements)))
        for e, el in enumerate(self.elements):
            s_a = s_centre + el.position_a
            s_b = s_centre + el.position_b
            d_heading, offset, d_cant = layout.frames(s_a, s_b)
            dx_p = el.offset_a[0]          # the point's longitudinal offset in A's frame
            dy = el.offset_a[1]
            out[:, 3 * e] = -d_heading * dy
            out[:, 3 * e + 1] = offset + d_heading * dx_p - d_cant * el.height
            out[:, 3 * e + 2] = d_cant * dy
        return out


# ---------------------------------------------------------------------------
# the FMU instances
# ---------------------------------------------------------------------------

INPUT_NAMES = [f"axlebox.{s}.force.{a}" for s in SIDES for a in "xyz"] + [
    "track.curvature", "track.cant_angle"]
KINEMATICS_NAMES = [f"axlebox.{s}.{q}.{a}" for s in SIDES for q in ("position", "velocity")
                    for a in "xyz"]
POINTS = 3
POSITION_COLUMNS = [0, 1, 2, 6, 7, 8]    # of KINEMATICS_NAMES: left xyz, right xyz
VELOCITY_COLUMNS = [3, 4, 5, 9, 10, 11]
RECORD_NAMES = (["wheelset.y", "wheelset.yaw"]
                + [f"wheel.{s}.{q}" for s in SIDES for q in ("Q", "Y", "Y_over_Q", "force_on_rail.y")]
                + [f"contact.{s}.point[{k}].{q}" for s in SIDES for k in range(1, POINTS + 1)
                   for q in ("longitudinal_force", "longitudinal_creepage",
                             "lateral_force", "lateral_creepage")])
# The fmi2 callbacks of every instance, never freed. Needed with pythonfmu 0.7.0,
# which could call the logger of an instance freed earlier; the native front end
# (fmu_wheelset/native) copies the callbacks at fmi2Instantiate and calls them
# only for that live instance, so this is no longer needed for it - kept because
# it is harmless (a few hundred bytes per instance) and the pythonfmu binary is
# still the build's no-compiler fallback (docs/limits_and_failures.md).
_CALLBACKS_KEPT_ALIVE = []
_MESSAGES_KEPT = 50          # log messages kept per FMU instance


_EXTRACTIONS = {}


def extracted(fmu) -> str:
    """The directory of the FMU's files: `fmu` itself if it is a directory
    (already extracted), else one extraction per FMU file and process, reused by
    every later vehicle in the process and removed at exit. (pythonfmu 0.7.0:
    two copies of the FMU's binary in one process share the embedded
    interpreter and crash it; docs/limits_and_failures.md. The native front end
    imports the FMU's Python under a build-unique package name; one extraction
    per process is kept anyway - harmless, it saves an unzip per vehicle, and
    the pythonfmu binary is still the no-compiler fallback.)"""
    import os
    path = os.path.abspath(str(fmu))
    if os.path.isdir(path):
        return path
    if not os.path.isfile(path):
        raise VehicleError(f"no FMU at {path}")
    key = (path, os.path.getmtime(path))
    if key not in _EXTRACTIONS:
        if any(k[0] == path for k in _EXTRACTIONS):
            raise VehicleError(f"{path} changed since this process loaded it; a new FMU "
                               "binary needs a new process")
        target = tempfile.mkdtemp(prefix="vehicle-fmu-")
        try:
            with zipfile.ZipFile(path) as z:
                z.extractall(target)
        except zipfile.BadZipFile as exc:
            shutil.rmtree(target, ignore_errors=True)
            raise VehicleError(f"{path} is not an FMU (zip) file: {exc}") from exc
        import atexit
        atexit.register(shutil.rmtree, target, True)
        _EXTRACTIONS[key] = target
    return _EXTRACTIONS[key]


class FmuWheelset:
    """One wheelset FMU instance (FMPy FMU2Slave). The values exchanged every
    step live in numpy rows the master owns (`inputs`: INPUT_NAMES order,
    `kinematics`: KINEMATICS_NAMES order); fmi2SetReal / fmi2DoStep /
    fmi2GetReal are called through the FMU's ctypes functions on them
    directly, without per-call conversions."""

    def __init__(self, unzipped: str, description, name: str, parameters: dict,
                 inputs: np.ndarray, kinematics: np.ndarray, recorded: np.ndarray):
        from fmpy.fmi2 import (FMU2Slave, calloc, fmi2CallbackAllocateMemoryTYPE,
                               fmi2CallbackFreeMemoryTYPE, fmi2CallbackFunctions,
                               fmi2CallbackLoggerTYPE, fmi2ValueReference, free)
        self.name = name
        # the native front end calls the logger of the instance a message is
        # about (pythonfmu 0.7.0 called the last instance's for all of them and
        # this list used to be shared): one message list per instance, each
        # message "[instance] text" with the name the FMU passes
        self.messages = messages = []
        # the last message logged with fmi2Discard or worse (a one-item list, so
        # that the logger, kept alive for ever, holds no reference to self)
        self._last_problem = last_problem = [None]

        def logger(component, instance, status, category, message):
            who = (instance or b"").decode(errors="replace")
            text = f"[{who}] {(message or b'').decode(errors='replace')}"
            messages.append(text)
            del messages[:-_MESSAGES_KEPT]
            if status >= 2:   # fmi2Discard, fmi2Error, fmi2Fatal
                last_problem[0] = text

        callbacks = fmi2CallbackFunctions()
        callbacks.logger = fmi2CallbackLoggerTYPE(logger)
        callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
        callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
        try:
            from fmpy.logging import addLoggerProxy
            addLoggerProxy(ctypes.byref(callbacks))
        except Exception:  # noqa: BLE001 - older FMPy: plain logger
            pass
        _CALLBACKS_KEPT_ALIVE.append(callbacks)
        by_name = {v.name: v for v in description.modelVariables}
        missing = [n for n in INPUT_NAMES + KINEMATICS_NAMES + RECORD_NAMES if n not in by_name]
        if missing:
            raise VehicleError(f"the FMU lacks the variables {missing[:5]}")
        real_p = ctypes.POINTER(ctypes.c_double)

        def refs(names):
            return (fmi2ValueReference * len(names))(*[by_name[n].valueReference for n in names])

        self.inputs, self.kinematics = inputs, kinematics
        self.recorded = recorded
        self._in = (refs(INPUT_NAMES), len(INPUT_NAMES), inputs.ctypes.data_as(real_p))
        self._kin = (refs(KINEMATICS_NAMES), len(KINEMATICS_NAMES), kinematics.ctypes.data_as(real_p))
        self._rec = (refs(RECORD_NAMES), len(RECORD_NAMES), self.recorded.ctypes.data_as(real_p))
        s = FMU2Slave(guid=description.guid, unzipDirectory=unzipped,
                      modelIdentifier=description.coSimulation.modelIdentifier,
                      instanceName=name)
        self.slave = s
        try:
            s.instantiate(loggingOn=True, callbacks=callbacks)
        except Exception as exc:  # noqa: BLE001 - FMPy raises on a NULL component
            raise VehicleError(f"{name}: fmi2Instantiate failed ({exc}): "
                               f"{self._last_error()}") from None
        try:
            self._set_up(parameters, by_name)
        except Exception:
            self.slave.freeInstance()   # not yet in the vehicle's list: free it here
            raise

    def _set_up(self, parameters, by_name):
        """Parameters, inputs and initialization (after fmi2Instantiate). The
        native front end answers a refused call (a value outside its declared
        range, a failed initialization) with fmi2Error and the reason logged;
        FMPy raises FMICallException: turned into a VehicleError with the reason."""
        from fmpy.fmi1 import FMICallException
        s, name = self.slave, self.name
        self._component = s.component
        dll = s.dll
        self._set_real, self._get_real, self._do_step = (
            dll.fmi2SetReal, dll.fmi2GetReal, dll.fmi2DoStep)
        for key, value in parameters.items():
            v = by_name.get(key)
            if v is None or v.causality != "parameter":
                raise VehicleError(f"{key!r} is not a parameter of the FMU")
            try:
                set_variable(s, v, value)
            except FMICallException as exc:
                raise VehicleError(f"{name}: the FMU refused {key} = {value!r} ({exc}): "
                                   f"{self._last_error()}") from None
        self._check(self._set_real(self._component, *self._in), "fmi2SetReal")
        try:
            s.setupExperiment(startTime=0.0)
            s.enterInitializationMode()
            s.exitInitializationMode()
        except FMICallException as exc:
            raise VehicleError(f"{name}: initialization failed ({exc}): "
                               f"{self._last_error()}") from None
        # pythonfmu 0.7.0 returned fmi2OK from a failed initialization and only
        # logged it; the native front end returns fmi2Error (above). Kept for the
        # pythonfmu fallback build: harmless.
        failure = [m for m in self.messages if "initialization failed" in m]
        if failure:
            raise VehicleError(f"{name}: {failure[-1]}")
        self.read_kinematics()
        self.read_record()

    def _last_error(self) -> str:
        """This instance's last message logged as a problem, else its last message."""
        if self._last_problem[0]:
            return self._last_problem[0]
        return self.messages[-1] if self.messages else "no message logged"

    def _check(self, status, function):
        if status > 1:    # fmi2OK 0, fmi2Warning 1; fmi2Discard 2, fmi2Error 3, fmi2Fatal 4
            raise VehicleError(f"{self.name}: {function} returned status {status} "
                               f"(last FMU message: {self._last_error()})")

    def step(self, t: float, h: float):
        """Set the inputs (the row `inputs`) and advance from t by h."""
        c = self._component
        self._check(self._set_real(c, *self._in), "fmi2SetReal")
        self._check(self._do_step(c, t, h, 1), "fmi2DoStep")

    def read_kinematics(self):
        self._check(self._get_real(self._component, *self._kin), "fmi2GetReal")
        return self.kinematics

    def read_record(self):
        self._check(self._get_real(self._component, *self._rec), "fmi2GetReal")
        return self.recorded

    def close(self):
        try:
            self.slave.terminate()
        finally:
            self.slave.freeInstance()


# (x, y, z, roll, yaw) of a wheelset = KINEMATICS_POSITION @ (left xyz, right xyz) positions
def _coordinate_map(semi_spacing):
    b2 = 2.0 * semi_spacing
    m = np.zeros((6, 5))
    m[0, 0] = m[3, 0] = 0.5
    m[1, 1] = m[4, 1] = 0.5
    m[2, 2] = m[5, 2] = 0.5
    m[2, 3], m[5, 3] = 1.0 / b2, -1.0 / b2
    m[0, 4], m[3, 4] = -1.0 / b2, 1.0 / b2
    return m


def _force_map(semi_spacing):
    """(6, 5): generalised force (x y z roll yaw) = box forces (left xyz, right xyz) @ map."""
    b = semi_spacing
    m = np.zeros((6, 5))
    for side, sign in ((0, 1.0), (1, -1.0)):
        m[3 * side + 0, 0] = m[3 * side + 1, 1] = m[3 * side + 2, 2] = 1.0
        m[3 * side + 2, 3] = sign * b
        m[3 * side + 0, 4] = -sign * b
    return m


def wheelset_coordinates(kinematics: np.ndarray, semi_spacing: float):
    """(x, y, z, roll, yaw) and their rates from the axle-box kinematics
    (KINEMATICS_NAMES order: left position xyz, left velocity xyz, right ...)."""
    k = kinematics
    pl, vl, pr, vr = k[0:3], k[3:6], k[6:9], k[9:12]
    b2 = 2.0 * semi_spacing
    q = np.array([0.5 * (pl[0] + pr[0]), 0.5 * (pl[1] + pr[1]), 0.5 * (pl[2] + pr[2]),
                  (pl[2] - pr[2]) / b2, (pr[0] - pl[0]) / b2])
    v = np.array([0.5 * (vl[0] + vr[0]), 0.5 * (vl[1] + vr[1]), 0.5 * (vl[2] + vr[2]),
                  (vl[2] - vr[2]) / b2, (vr[0] - vl[0]) / b2])
    return q, v


def generalised_box_force(box_force: np.ndarray, semi_spacing: float) -> np.ndarray:
    """The generalised force (x, y, z, roll, yaw) on a wheelset of the forces
    (left xyz, right xyz) at its axle boxes (at y = +-b on the axle line)."""
    fl, fr = box_force[0:3], box_force[3:6]
    b = semi_spacing
    return np.array([fl[0] + fr[0], fl[1] + fr[1], fl[2] + fr[2],
                     b * (fl[2] - fr[2]), -b * (fl[0] - fr[0])])



@njit(cache=True)
def coupling_step(h, explicit, update_other, kin, pos_map, reference, v_prev, applied,
                  q, v, other, mass, f0, f1, K, C, S_inv, Dp, kp, cp, pre_p, g0, g1, gr0, gr1,
                  q1, v1, box):
    """One step of the master (numba; see the module docstring).

    Puts the FMUs' wheelsets at t_n (kin: (4, 12) box kinematics) into q, v
    (DOFs 18..37), updates the interface models' other forces G (from the
    velocity change over the last step and the box forces `applied` then),
    integrates bodies and interface models over h with the trapezoidal rule
    (S_inv = (M + h/2 C + h^2/4 K)^-1) into q1, v1 and writes the axle-box
    forces for the FMUs into box (4, 6): the trapezoidal mean of the primary
    suspension forces on the wheelsets (explicit: the forces at t_n)."""
    n_w = kin.shape[0]
    for j in range(n_w):
        for d in range(5):
            pos = 0.0
            vel = 0.0
            for c in range(6):
                col = c if c < 3 else c + 3          # left xyz (0-2), right xyz (6-8)
                pos += kin[j, col] * pos_map[c, d]
                vel += kin[j, col + 3] * pos_map[c, d]
            k = 18 + 5 * j + d
            q[k] = pos - reference[j, d]
            v[k] = vel
            if update_other:
                other[k] = mass[k] * (vel - v_prev[j, d]) / h - applied[j, d]
            v_prev[j, d] = vel
    a0 = (f0 + other - K @ q - C @ v) / mass
    hh = 0.25 * h * h
    q_pred = q + h * v + hh * a0
    v_pred = v + 0.5 * h * a0
    a1 = S_inv @ (f1 + other - K @ q_pred - C @ v_pred)
    q1[:] = q_pred + hh * a1
    v1[:] = v_pred + 0.5 * h * a1
    force0 = pre_p - kp * (Dp @ q + g0) - cp * (Dp @ v + gr0)
    if explicit:
        on_box = -force0
    else:
        force1 = pre_p - kp * (Dp @ q1 + g1) - cp * (Dp @ v1 + gr1)
        on_box = -0.5 * (force0 + force1)
    for j in range(n_w):
        for c in range(6):
            box[j, c] = on_box[6 * j + c]


# ---------------------------------------------------------------------------
# the co-simulation master
# ---------------------------------------------------------------------------

@dataclass
class VehicleResult:
    """Time histories every `record_every` steps. Wheelset index 0..3 from the
    front, side 0 left, 1 right."""
    time: np.ndarray               # (n,) s
    distance: np.ndarray           # (n,) distance of the leading wheelset along the track (m)
    lateral: np.ndarray            # (n, 4) wheelset y (m)
    yaw: np.ndarray                # (n, 4) wheelset yaw (rad)
    wheel_load: np.ndarray         # (n, 4, 2) Q (N)
    lateral_force: np.ndarray      # (n, 4, 2) Y (N, + towards the field side)
    derailment_quotient: np.ndarray  # (n, 4, 2) Y/Q
    force_on_rail_y: np.ndarray    # (n, 4, 2) y force of the wheel on its rail (N, +y)
    wear_number: np.ndarray        # (n, 4, 2) sum over the points |Fx xi| + |Fy eta| (N)
    bodies: np.ndarray             # (n, 18) carbody and bogie coordinates
    box_force: np.ndarray          # (n, 4, 6) axle-box forces sent to the FMUs (N)
    curvature: np.ndarray          # (n, 4) at the wheelsets (1/m)
    cant_angle: np.ndarray         # (n, 4) at the wheelsets (rad)
    speed: float
    step: float
    coupling: str
    wall_time: float
    steps: int
    mean: dict = field(default_factory=dict)   # wheel_results averaged over mean_window
    mean_window: tuple | None = None           # (from, to) s

    @property
    def real_time_factor(self) -> float:
        return self.steps * self.step / max(self.wall_time, 1e-12)

    def bogie_lateral_force(self) -> np.ndarray:
        """(n, 2) sum of the lateral forces of the rails on the wheels of each
        bogie (N, +y): minus the wheels' forces on the rails."""
        f = -self.force_on_rail_y.sum(axis=2)
        return np.stack([f[:, 0] + f[:, 1], f[:, 2] + f[:, 3]], axis=1)

    def mean_bogie_lateral_force(self, from_momentum: bool = False) -> np.ndarray:
        """(2,) `bogie_lateral_force` averaged over mean_window (N): the mean of
        the FMUs' force outputs at every communication point, or
        (from_momentum) the exact time mean from the wheelsets' momentum balance
        (sampled outputs alias the fast contact oscillations of flange contact)."""
        if not self.mean:
            raise VehicleError("run(..., average_from=...) to average over a window")
        f = self.mean["contact_force_y"] if from_momentum else -self.mean["force_on_rail_y"].sum(axis=1)
        return np.array([f[0] + f[1], f[2] + f[3]])


class VehicleCosim:
    """Co-simulation of the Manchester benchmark vehicle 1 over four wheelset FMUs.

    fmu: path of Wheelset.fmu. speed (m/s), layout (CurveLayout), step: the
    communication step (s). coupling: "interface" (linearly implicit with the
    wheelsets' interface models, default) or "explicit" (the FMUs hold the
    suspension forces of the start of the step; for comparison).
    fmu_parameters: more FMU parameters for every instance (e.g.
    {"wheel.profile": "S1002", "contact.creep_model": 2}).
    perturbation: (wheelset index, lateral force N, duration s), a lateral
    force on that wheelset from t = 0 (both boxes, half each).
    """

    def __init__(self, fmu, vehicle: VehicleParameters | None = None, speed: float = 30.0,
                 layout: CurveLayout | None = None, step: float = 1e-3,
                 coupling: str = "interface", fmu_parameters: dict | None = None,
                 record_every: int = 10, perturbation: tuple | None = None):
        from fmpy import read_model_description
        self.p = p = vehicle or VehicleParameters()
        self.model = VehicleModel(p)
        self.layout = layout or CurveLayout()
        if not (isinstance(speed, (int, float)) and 0.0 < speed <= 150.0):
            raise VehicleError(f"speed must be in (0, 150] m/s, got {speed!r}")
        if not (isinstance(step, (int, float)) and 0.0 < step <= 0.01):
            raise VehicleError(f"communication step must be in (0, 0.01] s, got {step!r}")
        if coupling not in ("interface", "explicit"):
            raise VehicleError(f"coupling must be 'interface' or 'explicit', got {coupling!r}")
        if not (isinstance(record_every, int) and record_every >= 1):
            raise VehicleError("record_every must be an integer >= 1")
        self.speed, self.step, self.coupling = float(speed), float(step), coupling
        self.record_every = record_every
        self.perturbation = perturbation
        self._tmp = extracted(fmu)
        self.description = read_model_description(self._tmp)
        jx, jy, jz = p.wheelset_inertia
        params = {"wheelset.speed": self.speed, "wheelset.mass": p.wheelset_mass,
                  "wheelset.inertia.x": jx, "wheelset.inertia.y": jy, "wheelset.inertia.z": jz,
                  "wheel.nominal_rolling_radius": p.wheel_radius,
                  "wheelset.axle_box_semi_spacing": p.primary_semi_spacing,
                  "suspension.builtin": False, "track.scenario": "straight",
                  "track.curvature_from_input": True, "track.cant_from_input": True}
        params.update(fmu_parameters or {})
        self.leading_offset = p.bogie_semi_spacing + p.semi_wheelbase
        prim_load = (p.carbody_mass / 2 + p.bogie_mass) * GRAVITY / 4
        self.static_box_force = np.array([0.0, 0.0, -prim_load] * 2)
        # the values exchanged every step, one row per wheelset (INPUT_NAMES,
        # KINEMATICS_NAMES order); the FMU instances read and write these rows
        self.inputs = np.zeros((4, len(INPUT_NAMES)))
        self.kinematics = np.zeros((4, len(KINEMATICS_NAMES)))
        self.recorded = np.zeros((4, len(RECORD_NAMES)))
        self.instances = []
        try:
            for j in range(4):
                s_w = self.model.wheelset_positions[j] - self.leading_offset
                self.inputs[j, 0:6] = self.static_box_force
                self.inputs[j, 6] = float(self.layout.curvature(s_w))
                self.inputs[j, 7] = float(self.layout.cant_angle(s_w))
                self.instances.append(FmuWheelset(self._tmp, self.description, f"wheelset{j + 1}",
                                                  params, self.inputs[j], self.kinematics[j],
                                                  self.recorded[j]))
        except Exception:
            self.close()
            raise
        self._position_map = _coordinate_map(p.primary_semi_spacing)
        self._force_map = _force_map(p.primary_semi_spacing)
        # reference: the FMUs' static equilibrium = zero displacement of the interface models
        self.reference = self.kinematics[:, POSITION_COLUMNS] @ self._position_map
        self.time = 0.0

    def close(self):
        for w in self.instances:
            try:
                w.close()
            except Exception:  # noqa: BLE001 - closing after a failure
                pass
        self.instances = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- the forcing of the whole run, computed before it starts -----------------
    def _forcing(self, n_steps: int):
        m, p, V, h = self.model, self.p, self.speed, self.step
        t = np.arange(n_steps + 1) * h
        s_centre = V * t - self.leading_offset
        g = m.track_terms(self.layout, s_centre)
        g_rate = np.gradient(g, h, axis=0) if n_steps > 1 else np.zeros_like(g)
        f = np.tile(m.static_force, (n_steps + 1, 1))
        f -= (m.k * g + m.c * g_rate) @ m.D
        for body in (CARBODY,) + BOGIES:
            s = s_centre + m.body_positions[body]
            kap = self.layout.curvature(s)
            cant = self.layout.cant_angle(s)
            mass = m.mass[body]
            f[:, body + 1] += -mass * (V * V * kap * np.cos(cant) + GRAVITY * np.sin(cant))
            f[:, body + 2] += -mass * (GRAVITY * np.cos(cant) - V * V * kap * np.sin(cant))
            f[:, body + 5] += -m.mass[body + 5] * V * V * self.layout.curvature_slope(s)
        s_w = s_centre[:, None] + m.wheelset_positions[None, :]
        return g, g_rate, f, self.layout.curvature(s_w), self.layout.cant_angle(s_w)

    def run(self, duration: float, average_from: float | None = None,
            progress=None) -> VehicleResult:
        """Advance the coupled vehicle by `duration` seconds from t = 0.

        average_from (s): also average the wheel results over every
        communication point from that time to the end (`VehicleResult.mean`;
        quasi-static values in a curve: the mean of the wheel-rail forces over a
        window equals the steady force up to (momentum change)/(window), while
        samples every `record_every` steps would alias the fast contact
        oscillations)."""
        if self.time != 0.0:
            raise VehicleError("run() once per VehicleCosim (the FMUs are not reset)")
        n_steps = int(round(duration / self.step))
        if n_steps < 1:
            raise VehicleError(f"duration {duration!r} s is shorter than one step")
        m, p, h = self.model, self.p, self.step
        g, g_rate, f_ext, kap_w, cant_w = self._forcing(n_steps)
        mass = m.mass.copy()
        explicit = self.coupling == "explicit"
        if explicit:   # the wheelsets move on at constant velocity within the master's step
            for w in WHEELSETS:
                mass[w:w + 5] *= 1e9
        S_inv = np.linalg.inv(np.diag(mass) + 0.5 * h * m.C + 0.25 * h * h * m.K)
        K, C, D, k_el, c_el = m.K, m.C, m.D, m.k, m.c
        rows = m.primary_rows
        Dp, kp, cp, pre_p = D[rows], k_el[rows], c_el[rows], m.preload[rows]
        q = np.zeros(N_DOF)
        v = np.zeros(N_DOF)
        other = np.zeros(N_DOF)          # G on the wheelset DOFs (contact, gravity, ...)
        for w in WHEELSETS:
            other[w:w + 5] = -m.static_force[w:w + 5]
        pert_j, pert_f, pert_t = self.perturbation or (0, 0.0, 0.0)
        n_rec = n_steps // self.record_every + 1
        rec = {k: np.zeros(s) for k, s in (
            ("time", n_rec), ("lateral", (n_rec, 4)), ("yaw", (n_rec, 4)),
            ("wheel_load", (n_rec, 4, 2)), ("lateral_force", (n_rec, 4, 2)),
            ("derailment_quotient", (n_rec, 4, 2)), ("force_on_rail_y", (n_rec, 4, 2)),
            ("wear_number", (n_rec, 4, 2)), ("bodies", (n_rec, 18)),
            ("box_force", (n_rec, 4, 6)), ("curvature", (n_rec, 4)), ("cant_angle", (n_rec, 4)))}
        box = np.zeros((4, 6))
        box_prev = np.tile(self.static_box_force, (4, 1))   # the last box forces sent
        i_rec = 0
        pos_map, force_map, ref = self._position_map, self._force_map, self.reference
        kin, inputs = self.kinematics, self.inputs
        v_prev = np.zeros((4, 5))
        applied = np.tile(self.static_box_force, (4, 1)) @ force_map
        q1 = np.zeros(N_DOF)
        v1 = np.zeros(N_DOF)
        g_p = np.ascontiguousarray(g[:, rows])
        gr_p = np.ascontiguousarray(g_rate[:, rows])
        Dp = np.ascontiguousarray(Dp)
        average = average_from is not None
        first_averaged = int(math.ceil(average_from / h - 1e-9)) if average else n_steps + 1
        if average and not 0 <= first_averaged <= n_steps:
            raise VehicleError(f"average_from {average_from!r} s is not within the run")
        sums = {key: np.zeros_like(value) for key, value in wheel_results(self.recorded).items()}
        sums["bodies"] = np.zeros(18)
        sums["secondary_track_terms"] = np.zeros(12)
        n_averaged = 0
        box_impulse = np.zeros(4)
        inertial_impulse = np.zeros(4)
        v_start = np.zeros(4)
        # lateral inertial load of each wheelset in its track frame (N, + = towards -y)
        inertial_w = p.wheelset_mass * (self.speed ** 2 * kap_w * np.cos(cant_w)
                                         + GRAVITY * np.sin(cant_w))
        wall0 = _time.perf_counter()
        for n in range(n_steps + 1):
            last = n == n_steps
            nx = n if last else n + 1
            # the FMUs' wheelsets at t_n replace the interface models; the
            # master's step over [t_n, t_n + h] (in q1, v1) and the box forces
            coupling_step(h, explicit, n > 0 and not explicit, kin, pos_map, ref, v_prev,
                          applied, q, v, other, mass, f_ext[n], f_ext[nx], K, C, S_inv, Dp,
                          kp, cp, pre_p, g_p[n], g_p[nx], gr_p[n], gr_p[nx], q1, v1, box)
            if n % self.record_every == 0:
                self._record(rec, i_rec, n * h, q, box_prev, kap_w[n], cant_w[n])
                i_rec += 1
            elif average and n >= first_averaged:
                for inst in self.instances:
                    inst.read_record()
            if average and n >= first_averaged:
                for key, value in wheel_results(self.recorded).items():
                    sums[key] += value
                sums["bodies"] += q[:18]
                sums["secondary_track_terms"] += g[n, :12]
                n_averaged += 1
            if average and n == first_averaged:
                v_start = q_v_lateral(v).copy()
            if last:
                break
            t = n * h
            inputs[:, 0:6] = box
            if t < pert_t:
                inputs[pert_j, 1] += 0.5 * pert_f
                inputs[pert_j, 4] += 0.5 * pert_f
            inputs[:, 6] = kap_w[n]
            inputs[:, 7] = cant_w[n]
            box_prev[:] = inputs[:, 0:6]
            applied = inputs[:, 0:6] @ force_map
            if average and n >= first_averaged:
                # impulses over the step: the box forces (held), the inertial load
                # of the wheelset's track frame (trapezoidal, as the FMU integrates it)
                box_impulse += h * applied[:, 1]
                inertial_impulse += 0.5 * h * (inertial_w[n] + inertial_w[n + 1])
            for inst in self.instances:
                inst.step(t, h)
                inst.read_kinematics()
            q, q1 = q1, q
            v, v1 = v1, v
            self.time = t + h
            if progress and n % 1000 == 0:
                progress(n, n_steps)
        wall = _time.perf_counter() - wall0
        self.final_state = (q.copy(), v.copy(), g[n_steps].copy(), g_rate[n_steps].copy())
        for key in rec:
            rec[key] = rec[key][:i_rec]
        mean = {key: value / n_averaged for key, value in sums.items()} if n_averaged else {}
        if n_averaged and n_steps > first_averaged:
            window = (n_steps - first_averaged) * h
            m_w = p.wheelset_mass
            # the time mean of the lateral contact forces of the rails on each wheelset
            # from its momentum: m dv = int (contact + box - inertial) dt
            mean["contact_force_y"] = (m_w * (q_v_lateral(v) - v_start) - box_impulse
                                       + inertial_impulse) / window
        return VehicleResult(distance=rec["time"] * self.speed, speed=self.speed, step=h,
                             coupling=self.coupling, wall_time=wall, steps=n_steps,
                             mean=mean, mean_window=(first_averaged * h, n_steps * h)
                             if n_averaged else None, **rec)

    def secondary_yaw_couple(self, result: VehicleResult) -> np.ndarray:
        """(2,) the part of each bogie's lateral rail force (N, +y) that holds the
        carbody against the yaw moment of the secondary springs' longitudinal
        forces, time mean over result.mean_window.

        In a curve both bogie frames yaw relative to the carbody; the secondary
        longitudinal springs (at +-secondary_semi_spacing) then put a yaw moment
        M on the carbody, which the carbody's yaw balance answers with a lateral
        force couple on its two secondary suspensions: -M / (2a) on the leading
        bogie, +M / (2a) on the trailing one (a: bogie semi-spacing). The
        textbook per-bogie balance m (V^2/R - g h/s) leaves this couple out; the
        whole vehicle's balance does not see it. M from the mean body positions
        and the track's part of the element displacements (the linear element
        model of VehicleModel; damping forces vanish in the steady state)."""
        if "bodies" not in result.mean:
            raise VehicleError("run(..., average_from=...) to average over a window")
        m = self.model
        q = np.zeros(N_DOF)
        q[:18] = result.mean["bodies"]
        delta = m.D[:12] @ q + result.mean["secondary_track_terms"]
        force = -m.k[:12] * delta                # on the carbody (body A of the secondary elements)
        moment = 0.0
        for e in range(4):
            moment += -m.elements[e].offset_a[1] * force[3 * e]
        half = moment / (2.0 * self.p.bogie_semi_spacing)
        return np.array([-half, half])

    def _record(self, rec, i, t, q, box, kap, cant):
        rec["time"][i] = t
        rec["bodies"][i] = q[:18]
        rec["box_force"][i] = box
        rec["curvature"][i] = kap
        rec["cant_angle"][i] = cant
        for inst in self.instances:
            inst.read_record()
        for key, value in wheel_results(self.recorded).items():
            rec[key][i] = value


def q_v_lateral(v: np.ndarray) -> np.ndarray:
    """The lateral velocities (4,) of the wheelsets in the master's velocity vector."""
    return v[WHEELSETS[0] + 1:N_DOF:5]


def wheel_results(recorded: np.ndarray) -> dict:
    """Per-wheelset and per-wheel results from the recorded outputs (4, RECORD_NAMES):
    lateral, yaw (4,); wheel_load, lateral_force, derailment_quotient,
    force_on_rail_y, wear_number (4, 2) (wear: sum over the contact slots of
    |Fx xi| + |Fy eta|, N)."""
    r = recorded
    per_side = r[:, 2:2 + 8].reshape(-1, 2, 4)          # side, (Q, Y, Y/Q, force_on_rail.y)
    points = r[:, 10:].reshape(-1, 2, POINTS, 4)         # side, point, (Fx, xi, Fy, eta)
    wear = (np.abs(points[..., 0] * points[..., 1]) + np.abs(points[..., 2] * points[..., 3])).sum(axis=2)
    return {"lateral": r[:, 0], "yaw": r[:, 1], "wheel_load": per_side[..., 0],
            "lateral_force": per_side[..., 1], "derailment_quotient": per_side[..., 2],
            "force_on_rail_y": per_side[..., 3], "wear_number": wear}
