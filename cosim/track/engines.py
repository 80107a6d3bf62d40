"""Time stepping of the track model.

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
  (cosim/track/newmark_kernel.py: moving loads, Newmark, the contact springs by a
  Woodbury update, interpolation). A moving window (shifts of whole sleeper
  bays) keeps a short model under a wheel that runs for ever.
  ``tests/test_track_fe.py`` holds the two engines equal.
"""
from __future__ import annotations

import math

import numpy as np

from .fe_model import N_RAIL_DOF, RAIL_DOFS, RailLoad, RailState, TrackModel, opensees
from .parameters import TrackModelError, TrackParameters


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
    row envelopes of cosim.track.newmark_kernel.profile_solve_pair (``profile``;
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
    cosim.track.newmark_kernel); ``u``, ``v``, ``a`` give it in the global order."""

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
        from .newmark_kernel import RailGeometry
        self._geometry = RailGeometry(p.element_length, nn, self.model.phi_lateral,
                                      self.model.phi_vertical)
        self._window_maps = {}
        self._load_kernels()

    def _one_rail(self, nn, nb):
        """The two rails are the same system (same element matrices, joined
        only through the vehicle): one rail's matrices in the band order of its
        effective stiffness serve both, the state is (n1, 2), one column per
        rail (see cosim.track.newmark_kernel)."""
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
        table the step kernel uses (cosim.track.newmark_kernel.point_table), the
        same numbers as TrackModel.nodal_loads."""
        from .newmark_kernel import point_table
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
        the step. One compiled call (cosim.track.newmark_kernel.newmark_step)."""
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
        from .newmark_kernel import NewmarkSystem, PointLoads, newmark_step
        system = NewmarkSystem(self._coefficients, self.MC.data, self.MC.indices, self.MC.indptr,
                               self.lu.profile, self._element_dofs)
        if not newmark_step((self._u, self._v, self._a), system, self._geometry,
                            PointLoads(sides, local, forces, stiffness, damping),
                            (self._blocks, self._have, self._work), axis):
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
        from .newmark_kernel import interpolate_points
        sides, local = self._points(sides, xs)
        axis = np.empty((local.shape[0], 2, 3))
        interpolate_points(self._u, self._v, self._element_dofs, self._geometry, sides, local, axis)
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
