"""The ballasted track as an OpenSeesPy finite-element model (TrackModel): both
rails as beams on discrete rail pads, sleepers and ballast, loaded by moving
wheel forces; importing OpenSeesPy (opensees).

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
"""
from __future__ import annotations

import ctypes
import importlib.util
import math
import os
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from .parameters import TrackModelError, TrackParameters


INSTALL_HINT = ("the track model needs OpenSeesPy: pip install openseespy "
                "(or pip install -e '.[track]')")


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
