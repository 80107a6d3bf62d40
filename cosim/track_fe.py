"""A ballasted track in OpenSeesPy: both rails as beams on discrete rail pads,
sleepers and ballast, loaded by moving wheel forces.

Model (track frame of docs/CONVENTIONS.md: x along the track, y left, z up)
---------------------------------------------------------------------------
- Each rail is a line of 3-D beam elements along x at its centroid (OpenSees
  ``ElasticTimoshenkoBeam``, or ``elasticBeamColumn`` for Euler-Bernoulli
  rails), ``elements_per_bay`` elements between two sleepers, consistent mass.
  Rail nodes carry lateral (uy), vertical (uz), roll (rx) and the two bending
  rotations (ry, rz); the longitudinal motion is not modelled (ux fixed).
  OpenSees' beam mass has the torsional inertia rho*J/A; the rest of the polar
  inertia rho*(I_p - J) is added as nodal mass on rx.
- At every sleeper a rail pad joins the rail node to a half-sleeper mass
  (OpenSees ``zeroLength``, ``Elastic`` materials with a viscous term):
  vertical, lateral and roll spring+damper; the roll stiffness and damping of
  the pad are those of its vertical stiffness spread over the rail foot width
  w: k_roll = k_v w^2 / 12 (uniform pressure under the foot).
- Each half-sleeper (vertical and lateral motion) sits on the ballast: a
  vertical and a lateral spring+damper to the ground. The two half-sleepers of
  a sleeper are not joined (the rails interact only through the vehicle).
- The wheel force acts at the rail head; on the beam axis it is the force and
  the torque M_x = sum (y_p - y_axis) F_z - (z_p - z_axis) F_y of the contact
  points (``RailLoad``). A point load at x inside an element is distributed to
  the element's end nodes by the element's own shape functions (Hermite cubic
  for Euler-Bernoulli; the interdependent interpolation of the Timoshenko
  element with phi = 12 E I / (kappa G A L^2); linear for the torque). The
  rail's displacement, roll and velocity at x are interpolated with the same
  functions; the head's lateral displacement is that of the axis minus
  d * roll (d = height of the crown above the centroid), which is what the
  FMU's rail inputs mean (the rail profile turns about its crown).

Two engines step the same model in time with Newmark's average-acceleration
rule (gamma = 1/2, beta = 1/4):
- ``engine="opensees"``: ``ops.analyze`` each step, the loads in a plain
  pattern rebuilt each step (reference, ~1.2 us per degree of freedom per step);
- ``engine="assembled"``: the element matrices are taken from OpenSees
  (integrator GimmeMCK, one element at a time), assembled into sparse global
  M, C, K and stepped by the same Newmark rule with the effective stiffness
  factorised once (banded Cholesky after a reverse Cuthill-McKee ordering).
  The two rails are the same system, joined only through the vehicle: one
  rail's matrices step both rails as two columns, one compiled call per step
  (cosim/newmark_kernel.py: moving loads, Newmark, the contact springs by a
  Woodbury update, interpolation). A moving window (shifts of whole sleeper
  bays) keeps a short model under a wheel that runs for ever.
  ``tests/test_track_fe.py`` holds the two engines equal.

Default data (``TrackParameters``): the ballasted track data set of Zhai's
vehicle-track coupled dynamics for Chinese main lines (Zhai, Wang & Cai 2009,
Vehicle System Dynamics 47(11) 1349-1376): CHN60 rail, rail pad 7.8e7 N/m and
5.0e4 N s/m vertical, 2.94e7 N/m lateral, ballast 1.8e8 N/m and 5.88e4 N s/m.
The values are those quoted from that paper in the literature; the lateral
pad damping, the lateral ballast values and the 0.6 m sleeper spacing are
assumptions (named in the fields).
"""
from __future__ import annotations

import ctypes
import importlib.util
import math
import os
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

SIDES = ("left", "right")
INSTALL_HINT = ("the track model needs OpenSeesPy: pip install openseespy "
                "(or pip install -e '.[track]')")


class TrackModelError(ValueError):
    """Bad track parameters or a request outside the model (e.g. off the track)."""


_OPS = None


class _QuietStderr:
    """Silence the C-level stderr (OpenSees' warnings of the singular solve of
    a single free element, which is expected) inside a with-block."""

    def __enter__(self):
        import sys
        sys.stderr.flush()
        self._saved = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
        return self

    def __exit__(self, *exc):
        os.dup2(self._saved, 2)
        os.close(self._saved)
        return False


def opensees():
    """The ``openseespy.opensees`` module, imported once.

    The Linux wheel bundles libblas.so.3 next to its liblapack but does not
    find it on machines without a system BLAS; it is preloaded from the wheel.
    Raises ImportError with the install command when OpenSeesPy is missing."""
    global _OPS
    if _OPS is not None:
        return _OPS
    spec = importlib.util.find_spec("openseespylinux")
    if spec is None and importlib.util.find_spec("openseespy") is None:
        raise ImportError(INSTALL_HINT)
    if spec is not None and spec.origin:
        blas = os.path.join(os.path.dirname(spec.origin), "lib", "libblas.so.3")
        if os.path.isfile(blas):
            ctypes.CDLL(blas, mode=ctypes.RTLD_GLOBAL)
    try:
        import openseespy.opensees as ops
    except (ImportError, RuntimeError) as exc:
        raise ImportError(f"{INSTALL_HINT} ({exc})") from None
    _OPS = ops
    return ops


# --------------------------------------------------------------------------
# rail sections
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class RailSection:
    """Rail cross-section; SI units. ``vertical_inertia`` is the second moment
    about the horizontal axis (vertical bending), ``lateral_inertia`` about the
    vertical axis."""
    name: str
    source: str
    mass_per_length: float        # kg/m
    area: float                   # m^2
    youngs_modulus: float         # Pa
    shear_modulus: float          # Pa
    vertical_inertia: float       # m^4
    lateral_inertia: float        # m^4
    torsion_constant: float       # m^4 (St Venant J, G*J = torsional stiffness)
    polar_inertia: float          # m^4 (I_y + I_z, for the rotary mass in roll)
    vertical_shear_coefficient: float
    lateral_shear_coefficient: float
    crown_above_centroid: float   # m, the rail head's top above the centroid
    foot_width: float             # m


# UIC60 = 60E1, EN 13674-1:2011 Annex A: 60.21 kg/m, A = 76.70 cm^2,
# I (horizontal axis) = 3038.3 cm^4, I (vertical axis) = 512.3 cm^4, height
# 172 mm, foot 150 mm, centroid 80.9 mm above the foot (crown 91.1 mm above).
# E = 2.1e11 Pa, nu = 0.3. The torsion constant is not in EN 13674-1: the
# CHN60 value (a section of the same family) is used. Shear coefficients
# 0.4 vertical / 0.5 lateral are those commonly used for UIC60 (Thompson 2009,
# Railway Noise and Vibration, ch. 3).
UIC60 = RailSection(
    name="UIC60", source="EN 13674-1 (60E1); torsion constant of CHN60",
    mass_per_length=60.21, area=76.70e-4, youngs_modulus=2.1e11,
    shear_modulus=2.1e11 / (2 * 1.3), vertical_inertia=3038.3e-8,
    lateral_inertia=512.3e-8, torsion_constant=1.9587e5 / 7.9e10,
    polar_inertia=(3038.3 + 512.3) * 1e-8, vertical_shear_coefficient=0.4,
    lateral_shear_coefficient=0.5, crown_above_centroid=0.172 - 0.0809,
    foot_width=0.150)

# CHN60, GB 2585 / TB/T 2344 as used by Zhai et al. 2009 (Table of track
# parameters): E = 2.059e11 Pa, 60.64 kg/m, A = 77.45 cm^2, I = 3217 cm^4
# (horizontal axis) and 524 cm^4 (vertical axis), torsional stiffness
# G K = 1.9587e5 N m^2, torsional inertia 3.741e-5 m^4; height 176 mm, foot
# 150 mm, centroid 81 mm above the foot. G = 7.9e10 Pa.
CHN60 = RailSection(
    name="CHN60", source="GB 2585 / TB/T 2344 as used by Zhai, Wang & Cai 2009",
    mass_per_length=60.64, area=77.45e-4, youngs_modulus=2.059e11,
    shear_modulus=7.9e10, vertical_inertia=3217e-8, lateral_inertia=524e-8,
    torsion_constant=1.9587e5 / 7.9e10, polar_inertia=3.741e-5,
    vertical_shear_coefficient=0.4, lateral_shear_coefficient=0.5,
    crown_above_centroid=0.176 - 0.081, foot_width=0.150)

RAIL_SECTIONS = {"UIC60": UIC60, "60E1": UIC60, "CHN60": CHN60}


def rail_section(name_or_section) -> RailSection:
    if isinstance(name_or_section, RailSection):
        return name_or_section
    try:
        return RAIL_SECTIONS[str(name_or_section).upper()]
    except KeyError:
        raise TrackModelError(f"unknown rail section {name_or_section!r}; "
                              f"built-in: {', '.join(RAIL_SECTIONS)}") from None


# --------------------------------------------------------------------------
# parameters
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class TrackParameters:
    """Track model data; SI units. Defaults: Zhai et al. 2009 ballasted track
    (see the module docstring); fields marked 'assumed' are not from it."""
    rail: RailSection = CHN60
    beam: str = "timoshenko"                  # or "euler-bernoulli"
    sleeper_spacing: float = 0.6              # m (assumed; Zhai's data use 0.545-0.6 m)
    elements_per_bay: int = 2
    bays: int = 100                           # model length = bays * spacing
    rail_distance: float = 1.505              # m between the rail axes (gauge + head width)
    pad_vertical_stiffness: float = 7.8e7     # N/m  (Zhai 2009)
    pad_vertical_damping: float = 5.0e4       # N s/m (Zhai 2009)
    pad_lateral_stiffness: float = 2.94e7     # N/m  (Zhai 2009)
    pad_lateral_damping: float = 5.0e4        # N s/m (assumed, as vertical)
    half_sleeper_mass: float = 125.5          # kg (half of a 251 kg sleeper, Zhai 2009)
    ballast_vertical_stiffness: float = 1.8e8  # N/m per half sleeper (Zhai 2009)
    ballast_vertical_damping: float = 5.88e4  # N s/m (Zhai 2009)
    ballast_lateral_stiffness: float = 5.0e7  # N/m (assumed)
    ballast_lateral_damping: float = 4.0e4    # N s/m (assumed)
    fixed_sleepers: bool = False              # True: pads on rigid supports (receptance checks)

    def __post_init__(self):
        object.__setattr__(self, "rail", rail_section(self.rail))
        if self.beam not in ("timoshenko", "euler-bernoulli"):
            raise TrackModelError(f"beam must be 'timoshenko' or 'euler-bernoulli', got {self.beam!r}")
        for name in ("sleeper_spacing", "rail_distance", "pad_vertical_stiffness",
                     "pad_lateral_stiffness", "half_sleeper_mass",
                     "ballast_vertical_stiffness", "ballast_lateral_stiffness"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise TrackModelError(f"{name} must be a positive finite number, got {value!r}")
        for name in ("pad_vertical_damping", "pad_lateral_damping",
                     "ballast_vertical_damping", "ballast_lateral_damping"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise TrackModelError(f"{name} must be >= 0 and finite, got {value!r}")
        if int(self.elements_per_bay) != self.elements_per_bay or self.elements_per_bay < 1:
            raise TrackModelError(f"elements_per_bay must be an integer >= 1, got {self.elements_per_bay!r}")
        if int(self.bays) != self.bays or self.bays < 2:
            raise TrackModelError(f"bays must be an integer >= 2, got {self.bays!r}")

    @property
    def length(self) -> float:
        return self.bays * self.sleeper_spacing

    @property
    def element_length(self) -> float:
        return self.sleeper_spacing / self.elements_per_bay

    @property
    def pad_roll_stiffness(self) -> float:
        """k_v w^2 / 12: the vertical pad stiffness spread evenly under the foot."""
        return self.pad_vertical_stiffness * self.rail.foot_width ** 2 / 12.0

    @property
    def pad_roll_damping(self) -> float:
        return self.pad_vertical_damping * self.rail.foot_width ** 2 / 12.0

    def shear_parameter(self, vertical: bool) -> float:
        """phi = 12 E I / (kappa G A L^2) of one element (0 for Euler-Bernoulli)."""
        if self.beam == "euler-bernoulli":
            return 0.0
        r = self.rail
        inertia, kappa = ((r.vertical_inertia, r.vertical_shear_coefficient) if vertical
                          else (r.lateral_inertia, r.lateral_shear_coefficient))
        return 12.0 * r.youngs_modulus * inertia / (kappa * r.shear_modulus * r.area
                                                    * self.element_length ** 2)


# --------------------------------------------------------------------------
# shape functions
# --------------------------------------------------------------------------
def bending_shape(xi: float, length: float, phi: float):
    """Shape functions (N1, N2, N3, N4) of a two-node beam for the transverse
    displacement w(xi) = N1 w1 + N2 w1' + N3 w2 + N4 w2' (w' = dw/dx at the
    nodes), xi = x / length in [0, 1]. phi = 0: Hermite cubics
    (Euler-Bernoulli); phi > 0: the interdependent interpolation of the
    Timoshenko element (exact under end loads)."""
    x2, x3 = xi * xi, xi * xi * xi
    d = 1.0 + phi
    n1 = (1.0 - 3.0 * x2 + 2.0 * x3 + phi * (1.0 - xi)) / d
    n2 = length * (xi - 2.0 * x2 + x3 + 0.5 * phi * (xi - x2)) / d
    n3 = (3.0 * x2 - 2.0 * x3 + phi * xi) / d
    n4 = length * (-x2 + x3 + 0.5 * phi * (x2 - xi)) / d
    return n1, n2, n3, n4


@dataclass
class RailLoad:
    """Force of a wheel on one rail, on the rail's axis: lateral and vertical
    force (N, track frame) and the torque about +x (N m)."""
    lateral: float = 0.0
    vertical: float = 0.0
    torque: float = 0.0


@dataclass
class RailState:
    """The rail head under a wheel, in the FMU's terms: lateral and vertical
    displacement of the crown (m), roll (rad) and their rates."""
    lateral: float
    vertical: float
    roll: float
    lateral_velocity: float
    vertical_velocity: float
    roll_rate: float


# dof order of a rail node in this module: uy, uz, rx, ry, rz (OpenSees dofs 2..6)
RAIL_DOFS = (2, 3, 4, 5, 6)
N_RAIL_DOF = 5


class TrackModel:
    """The OpenSees track: ``build()`` creates the model in the (global)
    OpenSees domain. Node i of rail `side` sits at x = i * element_length."""

    def __init__(self, params: TrackParameters | None = None, **overrides):
        params = params or TrackParameters()
        if overrides:
            params = replace(params, **overrides)
        self.params = params
        self.n_nodes = params.bays * params.elements_per_bay + 1
        self.n_bays_nodes = params.bays + 1
        self.phi_vertical = params.shear_parameter(True)
        self.phi_lateral = params.shear_parameter(False)
        self.built = False

    # ---------------------------------------------------------- tags
    @staticmethod
    def rail_node(side: int, i: int) -> int:
        return 1 + side * 1_000_000 + i

    @staticmethod
    def sleeper_node(side: int, j: int) -> int:
        return 500_001 + side * 1_000_000 + j

    @staticmethod
    def ground_node(side: int, j: int) -> int:
        return 700_001 + side * 1_000_000 + j

    def rail_y(self, side: int) -> float:
        return 0.5 * self.params.rail_distance * (1.0 if side == 0 else -1.0)

    # ---------------------------------------------------------- building
    def _beam_element(self, ops, tag, i_node, j_node, transf):
        p, r = self.params, self.params.rail
        mass = ("-mass", r.mass_per_length, "-cMass")
        if p.beam == "timoshenko":
            ops.element("ElasticTimoshenkoBeam", tag, i_node, j_node, r.youngs_modulus,
                        r.shear_modulus, r.area, r.torsion_constant, r.vertical_inertia,
                        r.lateral_inertia, r.lateral_shear_coefficient * r.area,
                        r.vertical_shear_coefficient * r.area, transf, *mass)
        else:
            ops.element("elasticBeamColumn", tag, i_node, j_node, r.area, r.youngs_modulus,
                        r.shear_modulus, r.torsion_constant, r.vertical_inertia,
                        r.lateral_inertia, transf, *mass)

    def _materials(self, ops):
        p = self.params
        ops.uniaxialMaterial("Elastic", 1, p.pad_lateral_stiffness, p.pad_lateral_damping)
        ops.uniaxialMaterial("Elastic", 2, p.pad_vertical_stiffness, p.pad_vertical_damping)
        ops.uniaxialMaterial("Elastic", 3, p.pad_roll_stiffness, p.pad_roll_damping)
        ops.uniaxialMaterial("Elastic", 4, p.ballast_lateral_stiffness, p.ballast_lateral_damping)
        ops.uniaxialMaterial("Elastic", 5, p.ballast_vertical_stiffness, p.ballast_vertical_damping)

    def rotary_mass(self, end_node: bool) -> float:
        """Nodal roll inertia added to the beam's rho*J/A: rho*(I_p - J)*length."""
        r = self.params.rail
        density = r.mass_per_length / r.area
        tributary = self.params.element_length * (0.5 if end_node else 1.0)
        return max(density * (r.polar_inertia - r.torsion_constant), 0.0) * tributary

    def build(self):
        """Create the model in OpenSees (wipes the domain first)."""
        ops = opensees()
        p = self.params
        ops.wipe()
        ops.model("basic", "-ndm", 3, "-ndf", 6)
        # local x along +x, local z = global z (vertical bending about local y)
        ops.geomTransf("Linear", 1, 0.0, 0.0, 1.0)
        self._materials(ops)
        h = p.element_length
        for side in range(2):
            y = self.rail_y(side)
            for i in range(self.n_nodes):
                tag = self.rail_node(side, i)
                ops.node(tag, i * h, y, 0.0)
                ops.fix(tag, 1, 0, 0, 0, 0, 0)
                end = i in (0, self.n_nodes - 1)
                ops.mass(tag, 0.0, 0.0, 0.0, self.rotary_mass(end), 0.0, 0.0)
            for i in range(self.n_nodes - 1):
                self._beam_element(ops, self.rail_node(side, i), self.rail_node(side, i),
                                   self.rail_node(side, i + 1), 1)
            for j in range(self.n_bays_nodes):
                x = j * p.sleeper_spacing
                rail = self.rail_node(side, j * p.elements_per_bay)
                s, g = self.sleeper_node(side, j), self.ground_node(side, j)
                ops.node(s, x, y, 0.0)
                if p.fixed_sleepers:
                    ops.fix(s, 1, 1, 1, 1, 1, 1)
                else:
                    ops.fix(s, 1, 0, 0, 1, 1, 1)
                    ops.mass(s, 0.0, p.half_sleeper_mass, p.half_sleeper_mass, 0.0, 0.0, 0.0)
                    ops.node(g, x, y, 0.0)
                    ops.fix(g, 1, 1, 1, 1, 1, 1)
                    ops.element("zeroLength", g, s, g, "-mat", 4, 5, "-dir", 2, 3)
                ops.element("zeroLength", s, rail, s, "-mat", 1, 2, 3, "-dir", 2, 3, 4)
        ops.timeSeries("Constant", 1)
        self.built = True
        return self

    # ---------------------------------------------------------- moving load
    def locate(self, x: float):
        """(element index, xi) of the point x (m) on the rails."""
        if not math.isfinite(x) or x < 0.0 or x > self.params.length:
            raise TrackModelError(f"x = {x} m is off the track model [0, {self.params.length:g}] m")
        h = self.params.element_length
        e = min(int(x / h), self.n_nodes - 2)
        return e, (x - e * h) / h

    def nodal_loads(self, x: float, load: RailLoad):
        """[(node index, dof index in RAIL_DOFS order, value)] of a point load at x,
        distributed by the element's shape functions (consistent nodal loads)."""
        e, xi = self.locate(x)
        h = self.params.element_length
        nv = bending_shape(xi, h, self.phi_vertical)
        nl = bending_shape(xi, h, self.phi_lateral)
        fy, fz, mx = load.lateral, load.vertical, load.torque
        # lateral v(x): slope dv/dx = rz; vertical w(x): slope dw/dx = -ry
        return [
            (e, 0, nl[0] * fy), (e, 4, nl[1] * fy), (e + 1, 0, nl[2] * fy), (e + 1, 4, nl[3] * fy),
            (e, 1, nv[0] * fz), (e, 3, -nv[1] * fz), (e + 1, 1, nv[2] * fz), (e + 1, 3, -nv[3] * fz),
            (e, 2, (1.0 - xi) * mx), (e + 1, 2, xi * mx),
        ]

    def interpolate(self, x: float, node_values_i, node_values_j):
        """(lateral, vertical, roll) of the rail AXIS at x from the five dof values
        (uy, uz, rx, ry, rz) of the element's two nodes (displacements or rates)."""
        e, xi = self.locate(x)
        h = self.params.element_length
        nv = bending_shape(xi, h, self.phi_vertical)
        nl = bending_shape(xi, h, self.phi_lateral)
        a, b = node_values_i, node_values_j
        lateral = nl[0] * a[0] + nl[1] * a[4] + nl[2] * b[0] + nl[3] * b[4]
        vertical = nv[0] * a[1] - nv[1] * a[3] + nv[2] * b[1] - nv[3] * b[3]
        roll = (1.0 - xi) * a[2] + xi * b[2]
        return lateral, vertical, roll

    def head_state(self, axis_disp, axis_rate) -> RailState:
        """The crown's motion (the FMU's rail inputs) from the axis motion."""
        d = self.params.rail.crown_above_centroid
        # rotation +roll about +x moves a point d above the axis by -d*roll in y
        return RailState(axis_disp[0] - d * axis_disp[2], axis_disp[1], axis_disp[2],
                         axis_rate[0] - d * axis_rate[2], axis_rate[1], axis_rate[2])

    # ---------------------------------------------------------- static analysis
    def static_response(self, loads: Sequence[tuple]):
        """OpenSees static analysis under [(side, x, RailLoad)]; returns the rail
        node displacements (2, n_nodes, 5: uy uz rx ry rz) and the rail-seat
        loads (2, bays + 1, 3: lateral, vertical, roll; the pad's force on the
        sleeper as OpenSees reports it: + = compression for a downward load)."""
        ops = opensees()
        if not self.built:
            self.build()
        ops.wipeAnalysis()
        ops.remove("loadPattern", 1)
        ops.pattern("Plain", 1, 1)
        for side, x, load in loads:
            for i, d, value in self.nodal_loads(x, load):
                vec = [0.0] * 6
                vec[RAIL_DOFS[d] - 1] = value
                ops.load(self.rail_node(side, i), *vec)
        ops.constraints("Plain")
        ops.numberer("RCM")
        ops.system("BandSPD")
        ops.algorithm("Linear")
        ops.integrator("LoadControl", 1.0)
        ops.analysis("Static")
        if ops.analyze(1) != 0:
            raise TrackModelError("OpenSees static analysis failed")
        disp = np.array([[ops.nodeDisp(self.rail_node(side, i))[1:] for i in range(self.n_nodes)]
                         for side in range(2)])
        ops.reactions()
        pads = np.zeros((2, self.n_bays_nodes, 3))
        for side in range(2):
            for j in range(self.n_bays_nodes):
                f = ops.eleResponse(self.sleeper_node(side, j), "force")
                # zeroLength basic forces on the (rail -> sleeper) element: node j end
                pads[side, j] = f[7], f[8], f[9]
        ops.remove("loadPattern", 1)
        ops.loadConst("-time", 0.0)
        ops.wipeAnalysis()
        return disp, pads

    # ---------------------------------------------------------- matrices
    def element_matrices(self):
        """(K, M, C) of one rail element (10 x 10, dofs uy uz rx ry rz of node i
        then node j), of a pad (6 x 6: rail uy uz rx, sleeper uy uz rx) and of
        the ballast (2 x 2, sleeper uy uz to the ground), each from OpenSees
        (integrator GimmeMCK on a model holding only that element)."""
        ops = opensees()
        p = self.params

        def mck(build, n_expected):
            ops.wipe()
            ops.model("basic", "-ndm", 3, "-ndf", 6)
            ops.geomTransf("Linear", 1, 0.0, 0.0, 1.0)
            self._materials(ops)
            build()
            ops.system("FullGeneral")
            ops.numberer("Plain")
            ops.constraints("Plain")
            ops.algorithm("Linear")
            out = []
            for coefficients in ((0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)):
                ops.integrator("GimmeMCK", *coefficients)
                ops.analysis("Transient")
                ops.analyze(1, 0.0)   # forms the matrix; the (singular) solve may fail
                n = ops.systemSize()
                if n != n_expected:
                    raise TrackModelError(f"OpenSees element model has {n} equations, "
                                          f"expected {n_expected}")
                out.append(np.array(ops.printA("-ret"), dtype=float).reshape(n, n))
                ops.wipeAnalysis()
                ops.system("FullGeneral")
                ops.numberer("Plain")
                ops.constraints("Plain")
                ops.algorithm("Linear")
            return out

        def beam():
            ops.node(1, 0.0, 0.0, 0.0)
            ops.node(2, p.element_length, 0.0, 0.0)
            ops.fix(1, 1, 0, 0, 0, 0, 0)
            ops.fix(2, 1, 0, 0, 0, 0, 0)
            self._beam_element(ops, 1, 1, 2, 1)

        def pad():
            ops.node(1, 0.0, 0.0, 0.0)
            ops.node(2, 0.0, 0.0, 0.0)
            ops.fix(1, 1, 0, 0, 0, 1, 1)
            ops.fix(2, 1, 0, 0, 0, 1, 1)
            ops.element("zeroLength", 1, 1, 2, "-mat", 1, 2, 3, "-dir", 2, 3, 4)

        def ballast():
            ops.node(1, 0.0, 0.0, 0.0)
            ops.node(2, 0.0, 0.0, 0.0)
            ops.fix(1, 1, 0, 0, 1, 1, 1)
            ops.fix(2, 1, 1, 1, 1, 1, 1)
            ops.element("zeroLength", 1, 1, 2, "-mat", 4, 5, "-dir", 2, 3)

        try:
            with _QuietStderr():
                matrices = {"beam": mck(beam, 10), "pad": mck(pad, 6), "ballast": mck(ballast, 2)}
        finally:
            ops.wipe()
            self.built = False
        return matrices


def euler_pinned_pinned_frequency(section: RailSection, spacing: float) -> float:
    """(pi/L)^2 sqrt(E I / m) / (2 pi), Hz: the first bending frequency of a
    simply supported Euler-Bernoulli span L (the pinned-pinned frequency)."""
    return (math.pi / spacing) ** 2 * math.sqrt(
        section.youngs_modulus * section.vertical_inertia / section.mass_per_length) / (2 * math.pi)


def timoshenko_pinned_pinned_frequency(section: RailSection, spacing: float) -> float:
    """First bending frequency (Hz) of a simply supported Timoshenko span L with
    rotary inertia: the lower root of
    E I k^4 - rho A w^2 - rho I w^2 k^2 (1 + E / (kappa G)) + rho^2 I w^4 / (kappa G) = 0,
    k = pi / L (Timoshenko 1921; e.g. Han, Benaroya & Wei 1999, JSV 225)."""
    r = section
    rho = r.mass_per_length / r.area
    k = math.pi / spacing
    kg = r.vertical_shear_coefficient * r.shear_modulus
    a = rho * rho * r.vertical_inertia / kg
    b = -(rho * r.area + rho * r.vertical_inertia * k * k * (1.0 + r.youngs_modulus / kg))
    c = r.youngs_modulus * r.vertical_inertia * k ** 4
    w2 = (-b - math.sqrt(b * b - 4 * a * c)) / (2 * a)
    return math.sqrt(w2) / (2 * math.pi)


def winkler_response(section: RailSection, foundation_modulus: float, load: float, x):
    """Zimmermann / Winkler beam on an elastic foundation (k, N/m^2) under a point
    load P at x = 0: deflection w(x) = P beta / (2 k) e^(-beta|x|) (cos + sin)(beta|x|),
    beta = (k / (4 E I))^(1/4). Returns (w(x), beta); w positive along the load."""
    beta = (foundation_modulus / (4.0 * section.youngs_modulus * section.vertical_inertia)) ** 0.25
    ax = beta * np.abs(np.asarray(x, dtype=float))
    return load * beta / (2.0 * foundation_modulus) * np.exp(-ax) * (np.cos(ax) + np.sin(ax)), beta


# --------------------------------------------------------------------------
# time stepping
# --------------------------------------------------------------------------
NEWMARK_GAMMA = 0.5
NEWMARK_BETA = 0.25


class TrackStepper:
    """Common interface of the two engines: ``static(loads)`` sets the static
    equilibrium under [(side, x, RailLoad)] as the initial state (at rest),
    ``step(loads)`` advances one time step with those loads at the end of the
    step, ``rail_state(side, x)`` is the crown motion under x (RailState)."""

    def __init__(self, model: TrackModel, time_step: float):
        if not (math.isfinite(time_step) and time_step > 0):
            raise TrackModelError(f"time step must be positive, got {time_step!r}")
        self.model = model
        self.time_step = float(time_step)
        self.time = 0.0
        self.origin = 0.0        # track coordinate of model node 0 (moving window)

    def local(self, x: float) -> float:
        return x - self.origin


class _BandedCholesky:
    """Cholesky factor of a sparse symmetric positive definite matrix in band
    storage after a reverse Cuthill-McKee ordering (the track's matrices are
    banded along x; LAPACK dpbtrf through scipy), and the same factor as the
    row envelopes of cosim.newmark_kernel.profile_solve_inplace (``profile``;
    most rows of the RCM band hold only 1-3 nonzeros: the model falls apart
    into independent vertical, lateral and roll parts of each rail)."""

    def __init__(self, matrix):
        from scipy.linalg import cholesky_banded
        from scipy.sparse.csgraph import reverse_cuthill_mckee
        a = matrix.tocsr()
        perm = reverse_cuthill_mckee(a, symmetric_mode=True)
        ap = a[perm][:, perm].tocoo()
        bandwidth = int(np.max(np.abs(ap.row - ap.col))) if ap.nnz else 0
        n = a.shape[0]
        band = np.zeros((bandwidth + 1, n))
        upper = ap.col >= ap.row
        # upper form: band[bandwidth + i - j, j] = a[i, j] for i <= j
        band[bandwidth + ap.row[upper] - ap.col[upper], ap.col[upper]] = ap.data[upper]
        self.factor = cholesky_banded(band, lower=False)
        self.perm = perm.astype(np.int64)
        self.bandwidth = bandwidth
        self.profile = self._profile(self.factor)

    @staticmethod
    def _profile(factor):
        """(forward, first_row, backward, last_col, inv_d2) of the factor U."""
        bw, n = factor.shape[0] - 1, factor.shape[1]
        # ut[j, bw + i - j] = U[i, j]: row j holds column j of U
        ut = np.ascontiguousarray(factor.T)
        diag = ut[:, bw].copy()
        rows = np.arange(n)[:, None] - bw + np.arange(bw + 1)[None, :]    # i of ut[j, k]
        valid = rows >= 0
        forward = np.where(valid, ut / diag[np.clip(rows, 0, None)], 0.0)
        nonzero = (ut != 0.0) & valid
        first_row = np.where(nonzero.any(axis=1), rows[np.arange(n), nonzero.argmax(axis=1)],
                             np.arange(n))
        backward = np.zeros((n, bw + 1))      # backward[i, k] = U[i, i + k] / U[i, i]
        for k in range(bw + 1):
            i = np.arange(n - k)
            backward[i, k] = ut[i + k, bw - k] / diag[i]
        last_col = np.zeros(n, dtype=np.int64)
        for k in range(1, bw + 1):
            last_col[backward[:, k] != 0.0] = k
        return (np.ascontiguousarray(forward), first_row.astype(np.int64), backward, last_col,
                1.0 / diag ** 2)

    def solve(self, b):
        from scipy.linalg import lapack
        b = np.asarray(b, dtype=float)
        x, info = lapack.dpbtrs(self.factor, b[self.perm])
        if info != 0:  # pragma: no cover - the factor is valid by construction
            raise TrackModelError(f"banded solve failed (LAPACK dpbtrs info {info})")
        out = np.empty_like(x)
        out[self.perm] = x
        return out


class AssembledTrack(TrackStepper):
    """OpenSees element matrices assembled into sparse M, C, K (global dof
    order, kept for the static and frequency-domain analyses); Newmark average
    acceleration with the effective stiffness of one rail factorised once, the
    state of both rails as (n1, 2) arrays in that rail's band order (see
    cosim.newmark_kernel); ``u``, ``v``, ``a`` give it in the global order."""

    def __init__(self, model: TrackModel, time_step: float):
        super().__init__(model, time_step)
        from scipy import sparse
        p = model.params
        mats = model.element_matrices()
        nn, nb = model.n_nodes, model.n_bays_nodes
        self.n_rail = 2 * nn * N_RAIL_DOF
        n_sleeper = 0 if p.fixed_sleepers else 2 * nb * 2
        n = self.n_rail + n_sleeper
        self.n = n
        rows, cols = [], []
        vals = {"K": [], "M": [], "C": []}

        def add(dofs, kmc):
            dofs = np.asarray(dofs)
            keep = dofs >= 0
            idx = dofs[keep]
            r, c = np.meshgrid(idx, idx, indexing="ij")
            rows.append(r.ravel())
            cols.append(c.ravel())
            for name, m in zip("KMC", kmc):
                vals[name].append(m[np.ix_(keep, keep)].ravel())

        beam = mats["beam"]
        pad = mats["pad"]
        ballast = mats["ballast"]
        for side in range(2):
            for i in range(nn - 1):
                add([self.rail_dof(side, i, d) for d in range(5)]
                    + [self.rail_dof(side, i + 1, d) for d in range(5)], beam)
            for j in range(nb):
                rail = j * p.elements_per_bay
                sl = [-1, -1] if p.fixed_sleepers else [self.sleeper_dof(side, j, 0),
                                                        self.sleeper_dof(side, j, 1)]
                # pad dofs: rail uy uz rx, sleeper uy uz rx (sleeper rx is fixed)
                add([self.rail_dof(side, rail, 0), self.rail_dof(side, rail, 1),
                     self.rail_dof(side, rail, 2)] + sl + [-1], pad)
                if not p.fixed_sleepers:
                    add(sl, ballast)
        r = np.concatenate(rows)
        c = np.concatenate(cols)
        K = sparse.coo_matrix((np.concatenate(vals["K"]), (r, c)), shape=(n, n)).tocsc()
        M = sparse.coo_matrix((np.concatenate(vals["M"]), (r, c)), shape=(n, n)).tolil()
        C = sparse.coo_matrix((np.concatenate(vals["C"]), (r, c)), shape=(n, n)).tocsc()
        for side in range(2):
            for i in range(nn):
                k = self.rail_dof(side, i, 2)
                M[k, k] += model.rotary_mass(i in (0, nn - 1))
            if not p.fixed_sleepers:
                for j in range(nb):
                    for d in range(2):
                        k = self.sleeper_dof(side, j, d)
                        M[k, k] += p.half_sleeper_mass
        self.K, self.M, self.C = K, M.tocsc(), C
        h, g, b = self.time_step, NEWMARK_GAMMA, NEWMARK_BETA
        self.a0 = 1.0 / (b * h * h)
        self.a1 = g / (b * h)
        self.a2 = 1.0 / (b * h)
        self.a3 = 1.0 / (2 * b) - 1.0
        self.a4 = g / b - 1.0
        self.a5 = h * (g / (2 * b) - 1.0)
        self.M = self.M.tocsr()
        self.C = self.C.tocsr()
        self.K = self.K.tocsr()
        for matrix in (self.M, self.C, self.K):
            matrix.eliminate_zeros()      # the beams have no damping: C is the pads' only
        self._coefficients = np.array([h, g, self.a0, self.a1, self.a2, self.a3, self.a4, self.a5])
        self._one_rail(nn, nb)
        self._geometry = (p.element_length, nn, self.model.phi_lateral, self.model.phi_vertical)
        self._window_maps = {}
        self._load_kernels()

    def _one_rail(self, nn, nb):
        """The two rails are the same system (same element matrices, joined
        only through the vehicle): one rail's matrices in the band order of its
        effective stiffness serve both, the state is (n1, 2), one column per
        rail (see cosim.newmark_kernel)."""
        from scipy import sparse
        n_sleeper_one = 0 if self.model.params.fixed_sleepers else 2 * nb
        n1 = N_RAIL_DOF * nn + n_sleeper_one
        rail = np.arange(N_RAIL_DOF * nn)
        sleeper = np.arange(n_sleeper_one)
        of_side = np.array([np.concatenate([s * N_RAIL_DOF * nn + rail,
                                            self.n_rail + s * n_sleeper_one + sleeper])
                            for s in range(2)])                     # (2, n1) global dofs
        one = {}
        for name in "KMC":
            matrix = getattr(self, name)
            blocks = [[matrix[of_side[r]][:, of_side[c]] for c in range(2)] for r in range(2)]
            # an internal invariant of the assembly above, checked once
            if (abs(blocks[0][0] - blocks[1][1]).max() != 0.0 or blocks[0][1].nnz
                    or blocks[1][0].nnz):
                raise TrackModelError(f"internal: the two rails' {name} differ or are joined")
            one[name] = blocks[0][0]
        self.lu = _BandedCholesky(one["K"] + self.a1 * one["C"] + self.a0 * one["M"])
        perm = self.lu.perm
        position = np.empty(n1, dtype=np.int64)
        position[perm] = np.arange(n1)
        self.n_one = n1
        self._order = np.ascontiguousarray(of_side[:, perm].T)      # (n1, 2) global dof
        self._position = position                                   # one-rail dof -> band row
        self._element_dofs = np.ascontiguousarray(
            position[N_RAIL_DOF * np.arange(nn - 1)[:, None] + np.arange(10)[None, :]])
        band = {name: one[name][perm][:, perm] for name in "MC"}
        self.MC = sparse.hstack([band["M"], band["C"]]).tocsr()    # one product per step
        self.MC.eliminate_zeros()
        self._blocks = np.zeros((nn - 1, 10, 10))    # K_eff^-1 at each element's ten dofs
        self._have = np.zeros(nn - 1, dtype=np.bool_)
        self._work = np.zeros((6 * n1, 2))
        self._u = np.zeros((n1, 2))
        self._v = np.zeros((n1, 2))
        self._a = np.zeros((n1, 2))

    def _global(self, state):
        out = np.empty(self.n)
        out[self._order] = state
        return out

    @property
    def u(self):
        """Nodal displacements (n,), global dof order (a copy)."""
        return self._global(self._u)

    @property
    def v(self):
        return self._global(self._v)

    @property
    def a(self):
        return self._global(self._a)

    def _load_kernels(self):
        """Load (or, on a cold numba cache, compile) the step kernels now, so
        that it counts as set-up and not as the first step: one step of the
        unloaded model at rest on copies of the state (at rest it stays)."""
        saved = self._u, self._v, self._a, self.time
        self._u, self._v, self._a = self._u.copy(), self._v.copy(), self._a.copy()
        try:
            x = self.origin + 0.5 * self.model.params.length
            self.step_points((0, 1), (x, x), np.zeros((2, 3)))
            self.axis_at((0, 1), (x, x))
        finally:
            self._u, self._v, self._a, self.time = saved

    def rail_dof(self, side, i, d):
        return (side * self.model.n_nodes + i) * N_RAIL_DOF + d

    def sleeper_dof(self, side, j, d):
        return self.n_rail + (side * self.model.n_bays_nodes + j) * 2 + d

    def _model_x(self, x):
        """The model coordinate of track position x, checked to be on the model."""
        local = x - self.origin
        if not (0.0 <= local <= self.model.params.length):    # also refuses NaN
            self.model.locate(local)                          # raises with the reason
        return local

    def point(self, side, x):
        """(dofs (10,), g (10, 3)) of the point x on rail `side`: the element's
        ten dofs and the consistent nodal loads of a unit lateral force,
        vertical force and torque (g.T interpolates lateral, vertical, roll)."""
        e, g = self._distribution(side, x)
        first = self.rail_dof(side, e, 0)
        return np.arange(first, first + 10), g   # the two nodes' dofs are consecutive

    def load_vector(self, loads):
        f = np.zeros(self.n)
        for side, x, load in loads:
            dofs, g = self.point(side, x)
            f[dofs] += g @ np.array([load.lateral, load.vertical, load.torque])
        return f

    def static(self, loads):
        from scipy.sparse.linalg import spsolve
        self._u[:] = spsolve(self.K.tocsc(), self.load_vector(loads))[self._order]
        self._v[:] = 0.0
        self._a[:] = 0.0

    def _distribution(self, side, x):
        """(element, (10, 3) matrix): the consistent nodal loads of a unit
        lateral force, vertical force and torque at x on the element's ten
        dofs (its transpose interpolates lateral, vertical, roll at x); the
        table the step kernel uses (cosim.newmark_kernel.point_table), the
        same numbers as TrackModel.nodal_loads."""
        from cosim.newmark_kernel import point_table
        g = np.zeros((10, 3))
        e = point_table(self._model_x(x), *self._geometry, g)
        return e, g

    def step_points(self, sides, xs, forces, stiffness=None, damping=None):
        """One Newmark step with point loads at the end of the step: sides (m,)
        rails, xs (m,) track positions, forces (m, 3) lateral, vertical force
        and torque on the axis; optional stiffness, damping (m, 3, 3) of the
        linearised contact (load = F - S dw - D dw', w = the axis' lateral,
        vertical, roll at the point), solved implicitly. Returns (m, 2, 3): the
        axis' (lateral, vertical, roll) and their rates at the points after
        the step. One compiled call (cosim.newmark_kernel.newmark_step)."""
        sides, local = self._points(sides, xs)
        m = local.shape[0]
        forces = np.ascontiguousarray(forces, dtype=float).reshape(m, 3)
        zero = np.zeros((m, 3, 3)) if stiffness is None or damping is None else None
        if stiffness is not None:
            stiffness = np.ascontiguousarray(stiffness, dtype=float).reshape(m, 3, 3)
        if damping is not None:
            damping = np.ascontiguousarray(damping, dtype=float).reshape(m, 3, 3)
        stiffness = zero if stiffness is None else stiffness
        damping = zero if damping is None else damping
        axis = np.empty((m, 2, 3))
        return self._newmark_step(sides, local, forces, stiffness, damping, axis)

    def _newmark_step(self, sides, local, forces, stiffness, damping, axis):
        """One Newmark step of both rails in the compiled kernel (the common end
        of step_points and step_wheelset); refuses non-finite loads with the
        state left as it was. Returns axis, filled."""
        from cosim.newmark_kernel import newmark_step
        if not newmark_step(self._u, self._v, self._a, self._coefficients, self.MC.data,
                            self.MC.indices, self.MC.indptr, self.lu.profile, self._element_dofs,
                            *self._geometry, sides, local, forces, stiffness, damping,
                            self._blocks, self._have, self._work, axis):
            raise TrackModelError(f"non-finite wheel load or contact stiffness/damping at "
                                  f"t = {self.time:g} s: loads {forces.tolist()}")
        self.time += self.time_step
        return axis

    def step_wheelset(self, x, forces, stiffness=None, damping=None):
        """step_points for the two wheels of a wheelset at track position x
        (left rail, right rail; forces (2, 3)), with the buffers made once:
        the master's per-step call. Returns (2, 2, 3) as step_points (a view of
        a buffer the next call overwrites)."""
        buffers = self.__dict__.get("_wheelset_buffers")
        if buffers is None:
            buffers = self._wheelset_buffers = (np.array([0, 1], dtype=np.int64), np.zeros(2),
                                                np.zeros((2, 3, 3)), np.empty((2, 2, 3)))
        sides, local, zero, axis = buffers
        local[:] = self._model_x(x)
        forces = np.ascontiguousarray(forces, dtype=float).reshape(2, 3)
        if stiffness is not None:
            stiffness = np.ascontiguousarray(stiffness, dtype=float).reshape(2, 3, 3)
        if damping is not None:
            damping = np.ascontiguousarray(damping, dtype=float).reshape(2, 3, 3)
        stiffness = zero if stiffness is None else stiffness
        damping = zero if damping is None else damping
        return self._newmark_step(sides, local, forces, stiffness, damping, axis)

    def axis_at(self, sides, xs):
        """(m, 2, 3): the axis' (lateral, vertical, roll) and their rates at the
        points (sides, track positions xs), interpolated by the shape functions."""
        from cosim.newmark_kernel import interpolate_points
        sides, local = self._points(sides, xs)
        axis = np.empty((local.shape[0], 2, 3))
        interpolate_points(self._u, self._v, self._element_dofs, *self._geometry, sides, local, axis)
        return axis

    def _points(self, sides, xs):
        """(sides, model coordinates) as arrays, checked (plain Python: m is 1-4)."""
        if len(sides) != len(xs):
            raise TrackModelError("one track position per rail side is needed")
        for side in sides:
            if side != 0 and side != 1:
                raise TrackModelError(f"rail sides must be 0 (left) or 1 (right), got {side!r}")
        return (np.array(sides, dtype=np.int64),
                np.array([self._model_x(x) for x in xs], dtype=float))

    def step(self, loads, interface_stiffness=None):
        """One Newmark step with `loads` [(side, x, RailLoad)] at the end of the
        step. ``interface_stiffness``: optional [(side, x, S)] or
        [(side, x, (S, D))], S and D 3 x 3 matrices (lateral, vertical, roll)
        such that the load (lateral, vertical force, torque) at x is
        F - S (w_new - w_old) - D (w'_new - w'_old), w the axis' (lateral,
        vertical, roll) at x: the wheel-rail contact linearised about the
        step's forces, solved implicitly (see step_points)."""
        springs = {}
        for side, x, stiffness in (interface_stiffness or ()):
            if isinstance(stiffness, tuple):
                springs[(side, x)] = (np.asarray(stiffness[0], dtype=float).reshape(3, 3),
                                      np.asarray(stiffness[1], dtype=float).reshape(3, 3))
            else:
                springs[(side, x)] = (np.asarray(stiffness, dtype=float).reshape(3, 3),
                                      np.zeros((3, 3)))
        m = len(loads)
        S = np.zeros((m, 3, 3))
        D = np.zeros((m, 3, 3))
        for p, (side, x, _) in enumerate(loads):
            spring = springs.get((side, x))
            if spring is not None:
                S[p], D[p] = spring
        self.step_points([ld[0] for ld in loads], [ld[1] for ld in loads],
                         [(ld.lateral, ld.vertical, ld.torque) for _, _, ld in loads], S, D)

    def axis_motion(self, side, x):
        axis = self.axis_at((side,), (x,))
        return axis[0, 0], axis[0, 1]

    def rail_state(self, side, x) -> RailState:
        return self.model.head_state(*self.axis_motion(side, x))

    def shift_window(self, bays: int):
        """Move the model `bays` sleeper bays forward along the track: the state
        of every node is taken from the node `bays` bays ahead; the new part at
        the far end starts at rest, undeformed (exact for a periodic track as
        long as the response has not reached the far end)."""
        if bays not in self._window_maps:
            p = self.model.params
            nn, nb = self.model.n_nodes, self.model.n_bays_nodes
            src = np.full(self.n_one, -1, dtype=np.int64)      # one-rail dof order
            keep = N_RAIL_DOF * (nn - bays * p.elements_per_bay)
            if keep > 0:
                src[:keep] = np.arange(keep) + N_RAIL_DOF * bays * p.elements_per_bay
            if not p.fixed_sleepers and nb - bays > 0:
                first = N_RAIL_DOF * nn
                src[first:first + 2 * (nb - bays)] = first + 2 * bays + np.arange(2 * (nb - bays))
            valid = src >= 0
            pos = self._position
            self._window_maps[bays] = (pos[valid], pos[src[valid]], pos[~valid])
        dst, src, vacated = self._window_maps[bays]
        for state in (self._u, self._v, self._a):    # both rails; state[src] is a copy
            state[dst] = state[src]
            state[vacated] = 0.0
        self.origin += bays * self.model.params.sleeper_spacing

    def receptance(self, side, x, frequencies, direction="vertical"):
        """Point receptance (m/N, complex) of the rail axis at x for a harmonic
        force at x: (K + i w C - w^2 M) u = f, from the assembled OpenSees
        matrices. direction: 'vertical' or 'lateral'."""
        from scipy.sparse.linalg import spsolve
        unit = RailLoad(vertical=1.0) if direction == "vertical" else RailLoad(lateral=1.0)
        f = self.load_vector([(side, x, unit)]).astype(complex)
        e, _ = self.model.locate(self.local(x))
        i0, i1 = self.rail_dof(side, e, 0), self.rail_dof(side, e + 1, 0)
        out = []
        for freq in np.asarray(frequencies, dtype=float):
            w = 2 * math.pi * freq
            u = spsolve((self.K + 1j * w * self.C - w * w * self.M).tocsc(), f)
            lat, ver, _ = self.model.interpolate(self.local(x), u[i0:i0 + 5], u[i1:i1 + 5])
            out.append(ver if direction == "vertical" else lat)
        return np.array(out)


class OpenSeesTrack(TrackStepper):
    """``ops.analyze`` every step (Newmark average acceleration, the same rule);
    the loads of a step in a plain pattern rebuilt each step."""

    PATTERN = 2

    def __init__(self, model: TrackModel, time_step: float):
        super().__init__(model, time_step)
        model.build()
        self._setup_transient()

    def _setup_transient(self):
        ops = opensees()
        ops.wipeAnalysis()
        ops.constraints("Plain")
        ops.numberer("RCM")
        ops.system("BandSPD")
        ops.algorithm("Linear", "-factorOnce")
        ops.integrator("Newmark", NEWMARK_GAMMA, NEWMARK_BETA)
        ops.analysis("Transient")

    def _apply(self, loads):
        ops = opensees()
        ops.remove("loadPattern", self.PATTERN)
        ops.pattern("Plain", self.PATTERN, 1)
        acc = {}
        for side, x, load in loads:
            for i, d, value in self.model.nodal_loads(self.local(x), load):
                key = (side, i)
                acc.setdefault(key, [0.0] * 6)[RAIL_DOFS[d] - 1] += value
        for (side, i), vec in acc.items():
            ops.load(self.model.rail_node(side, i), *vec)

    def static(self, loads):
        self.model.static_response(loads)      # leaves the static displacements committed
        self._setup_transient()

    def step(self, loads):
        ops = opensees()
        self._apply(loads)
        if ops.analyze(1, self.time_step) != 0:
            raise TrackModelError(f"OpenSees transient step failed at t = {self.time:g} s")
        self.time += self.time_step

    def axis_motion(self, side, x):
        ops = opensees()
        e, _ = self.model.locate(self.local(x))
        a, b = self.model.rail_node(side, e), self.model.rail_node(side, e + 1)
        disp = self.model.interpolate(self.local(x), ops.nodeDisp(a)[1:], ops.nodeDisp(b)[1:])
        rate = self.model.interpolate(self.local(x), ops.nodeVel(a)[1:], ops.nodeVel(b)[1:])
        return disp, rate

    def rail_state(self, side, x) -> RailState:
        return self.model.head_state(*self.axis_motion(side, x))


def make_track(engine: str, params: TrackParameters | None = None, time_step: float = 1e-3):
    """A stepper of the track model: engine 'assembled' (fast) or 'opensees'."""
    model = TrackModel(params)
    if engine == "assembled":
        return AssembledTrack(model, time_step)
    if engine == "opensees":
        return OpenSeesTrack(model, time_step)
    raise TrackModelError(f"engine must be 'assembled' or 'opensees', got {engine!r}")
