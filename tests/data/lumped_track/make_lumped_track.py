"""Lumped rail bodies for the FMU from the project's finite-element track (run by hand).

    .venv/bin/python tests/data/lumped_track/make_lumped_track.py

For each rail section (CHN60, UIC60) and beam theory (Timoshenko, Euler-Bernoulli) of
cosim/track/ (TrackParameters' defaults otherwise: Zhai, Wang & Cai 2009), this script
computes, at the rail head's reference point (the crown on the rail's centreline, the
point the FMU's rail inputs rail.{side}.lateral_displacement / vertical_displacement /
roll_angle move and turn the rail profile about; q = (lateral y, vertical z, roll about
+x), track frame, the same matrices for both rails):

1. the 3 x 3 static point flexibility over a sleeper, at mid-span and their mean, and the
   stiffness K = inverse of the mean;
2. the 3 x 3 point receptance H(f), 0-600 Hz, with the FE model's damping;
3. a lumped body M q'' + C q' + K q = F (F the force and moment of the wheel on the rail
   at that point) fitted to the mean receptance over 0-300 Hz, its error in |H| and
   phase, and the closed forms of an infinite Winkler beam (vertical, lateral) and of a
   torsion bar on an elastic foundation (roll);
4. a moving constant and harmonic load at 100 km/h on the FE track (assembled engine,
   Newmark) against the lumped body stepped by the same rule.

The FE track's wheel interface (cosim.track.fe_model.TrackModel.head_state) gives the
crown's lateral displacement as that of the axis minus d * roll (d = crown height above
the centroid) and its vertical displacement as the axis'; the torque of a load at the
crown about the axis is M_x - d F_y. So with A = [[1, 0, -d], [0, 1, 0], [0, 0, 1]] the
crown's flexibility is A G_axis A^T (exact). The FE rail stands upright (the 1:40
inclination is not in it): the crown of the inclined rail lies d sin(1/40) = 2.4 mm
beside the axis' vertical, which would add a vertical-roll coupling of that lever; it is
left out here as in the FE interface.

Writes lumped_track.json beside this script (SI units).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from cosim.track.engines import AssembledTrack            # noqa: E402
from cosim.track.fe_model import TrackModel                # noqa: E402
from cosim.track.parameters import TrackParameters         # noqa: E402

CONFIGS = (("CHN60", "timoshenko"), ("CHN60", "euler-bernoulli"),
           ("UIC60", "timoshenko"), ("UIC60", "euler-bernoulli"))
DEFAULT = "CHN60/timoshenko"
ELEMENTS_PER_BAY = 4          # 0.15 m elements: mid-span is a node; 2 per bay checked below
BAYS = 100                    # 60 m per rail; the point at 30 m, > 20 decay lengths from the ends
POINT_BAY = 50
FREQUENCIES = np.arange(0.0, 601.0, 1.0)      # Hz, receptance
FIT_BAND = 300.0                               # Hz, the lumped body fitted over (0, FIT_BAND]
STORE_EVERY = 5                                # store the receptances every 5 Hz
SPEED = 100.0 / 3.6                            # m/s, the time-domain check
TIME_STEP = 1e-4                               # s
DURATION = 1.0                                 # s
START = 15.0                                   # m, load position at t = 0
WINDOW = (0.2, 1.0)                            # s, the compared part of each run
ENTRIES = (("lateral", 0, 0), ("lateral_roll", 0, 2), ("roll", 2, 2), ("vertical", 1, 1))


def matrix(m):
    return [[float(v) for v in row] for row in np.asarray(m)]


def head_transform(track_params: TrackParameters) -> np.ndarray:
    """A: crown motion (lateral, vertical, roll) = A @ axis motion; axis load = A.T @ crown load."""
    d = track_params.rail.crown_above_centroid
    return np.array([[1.0, 0.0, -d], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


class PointModel:
    """The FE track's matrices (one AssembledTrack, both rails; the left one is loaded)
    and the unit-load vectors of the crown at the two points of interest."""

    def __init__(self, params: TrackParameters):
        from scipy import sparse
        self.params = params
        self.track = AssembledTrack(TrackModel(params), TIME_STEP)
        self.A = head_transform(params)
        a = params.sleeper_spacing
        self.positions = {"over_sleeper": POINT_BAY * a, "mid_span": (POINT_BAY + 0.5) * a}
        n = self.track.n
        cols = {}
        for name, x in self.positions.items():
            dofs, g = self.track.point(0, x)
            e = np.zeros((n, 3))
            e[dofs] = g @ self.A.T            # crown loads (Fy, Fz, Mx) -> nodal loads
            cols[name] = e
        self.names = list(self.positions)
        self.E = sparse.csc_matrix(np.hstack([cols[k] for k in self.names]))
        self.K = self.track.K.tocsc()
        self.M = self.track.M.tocsc()
        self.C = self.track.C.tocsc()

    def _split(self, block):
        """(6, 6) E^T X for both points -> {name: 3 x 3} (the diagonal blocks)."""
        return {k: block[3 * i:3 * i + 3, 3 * i:3 * i + 3] for i, k in enumerate(self.names)}

    def static(self):
        """({name: flexibility 3 x 3}, {name: E^T K^-1 M K^-1 E}) at the crown."""
        from scipy.sparse.linalg import splu
        lu = splu(self.K)
        u = lu.solve(self.E.toarray())
        flex = self.E.T @ u
        inertia = u.T @ (self.M @ u)
        return self._split(0.5 * (flex + flex.T)), self._split(0.5 * (inertia + inertia.T))

    def bay_average(self, samples=8):
        """Static crown flexibility averaged over one sleeper bay (samples equally spaced
        positions from the sleeper on; the flexibility is periodic in x, so their mean is the
        trapezoidal average): what a wheel rolling steadily over the bay meets on average."""
        from scipy import sparse
        from scipy.sparse.linalg import splu
        a = self.params.sleeper_spacing
        cols = []
        for j in range(samples):
            dofs, g = self.track.point(0, (POINT_BAY + j / samples) * a)
            e = np.zeros((self.track.n, 3))
            e[dofs] = g @ self.A.T
            cols.append(e)
        E = sparse.csc_matrix(np.hstack(cols))
        flex = E.T @ splu(self.K).solve(E.toarray())
        blocks = [flex[3 * j:3 * j + 3, 3 * j:3 * j + 3] for j in range(samples)]
        return 0.5 * (np.mean(blocks, axis=0) + np.mean(blocks, axis=0).T)

    def receptance(self, frequencies):
        """{name: (nf, 3, 3) complex}: (K + i w C - w^2 M)^-1 at the crown."""
        from scipy.sparse.linalg import splu
        e = self.E.toarray().astype(complex)
        out = {k: np.zeros((len(frequencies), 3, 3), dtype=complex) for k in self.names}
        for i, f in enumerate(frequencies):
            w = 2.0 * math.pi * f
            lu = splu((self.K + 1j * w * self.C - (w * w) * self.M).tocsc())
            h = self._split(self.E.T @ lu.solve(e))
            for k in self.names:
                out[k][i] = h[k]
        return out


# --------------------------------------------------------------------------- closed forms
def winkler(params: TrackParameters) -> dict:
    """Infinite continuously supported rail, crown point load, low-frequency expansion.

    Vertical and lateral: Winkler beam, k_f = (pad and ballast in series per sleeper) /
    spacing, beta = (k_f / (4 E I))^(1/4); static point stiffness 8 E I beta^3 = 2 k_f / beta;
    the receptance 1 / (2 (4 E I)^(1/4) (k_f - m' w^2)^(3/4)) expands to an effective mass
    3 m' / (2 beta), m' = rail mass + half-sleeper mass * (k_pad / (k_pad + k_ballast))^2 /
    spacing (the sleeper between the two springs moves by that ratio of the rail's
    displacement, and its kinetic energy counts with its square).
    Roll: a torsion bar (G J) on the pads' roll springs (k_r = k_roll / spacing; the
    sleepers do not roll in the FE model): stiffness 2 sqrt(G J k_r), effective inertia
    I_x' sqrt(G J / k_r), I_x' = rho I_p (mass moment of inertia per length).
    These are on the rail axis; the crown is d above it."""
    p, r = params, params.rail
    a = p.sleeper_spacing
    out = {}
    for name, kp, kb, inertia in (("vertical", p.pad_vertical_stiffness, p.ballast_vertical_stiffness,
                                   r.vertical_inertia),
                                  ("lateral", p.pad_lateral_stiffness, p.ballast_lateral_stiffness,
                                   r.lateral_inertia)):
        kf = 1.0 / (1.0 / kp + 1.0 / kb) / a
        ei = r.youngs_modulus * inertia
        beta = (kf / (4.0 * ei)) ** 0.25
        mass = r.mass_per_length + p.half_sleeper_mass * (kp / (kp + kb)) ** 2 / a
        out[name] = dict(foundation_modulus=kf, beta=beta, beta_times_spacing=beta * a,
                         stiffness=2.0 * kf / beta, stiffness_8EIbeta3=8.0 * ei * beta ** 3,
                         mass_per_length=mass, effective_mass=1.5 * mass / beta)
    gj = r.shear_modulus * r.torsion_constant
    kr = p.pad_roll_stiffness / a
    rotary = r.mass_per_length / r.area * r.polar_inertia
    out["roll"] = dict(foundation_modulus=kr, decay=math.sqrt(kr / gj),
                       decay_times_spacing=math.sqrt(kr / gj) * a,
                       stiffness=2.0 * math.sqrt(gj * kr), rotary_inertia_per_length=rotary,
                       effective_mass=rotary * math.sqrt(gj / kr))
    return out


# --------------------------------------------------------------------------- lumped fit
AXIS_NAMES = ("lateral", "vertical", "roll")


def lumped_receptance(K, M, C, frequencies):
    w = 2.0 * math.pi * np.asarray(frequencies)
    return np.linalg.inv(K[None] - (w * w)[:, None, None] * M[None] + 1j * w[:, None, None] * C[None])


def single_mass_receptance(x, k, w):
    """1 / (k - w^2 m + i w c), x = (m, c)."""
    return 1.0 / (k - w * w * x[0] + 1j * w * x[1])


def two_layer_receptance(x, k, w):
    """Receptance at the rail of a rail body m_r on a spring k_1 (damper c_1) to a second
    body m_s on a spring k_2 (damper c_2) to the ground, k_2 such that the static stiffness
    is k (1/k = 1/k_1 + 1/k_2); x = (m_r, k_1, c_1, m_s, c_2)."""
    m_r, k1, c1, m_s, c2 = x
    k2 = 1.0 / (1.0 / k - 1.0 / k1)
    z1 = k1 + 1j * w * c1
    return 1.0 / (z1 - w * w * m_r - z1 * z1 / (z1 + k2 + 1j * w * c2 - w * w * m_s))


def fit_direction(k, h, frequencies, model, start):
    """Least squares of the complex log ratio (log |H| ratio and phase difference weighted
    alike) of the lumped receptance to the FE's h over (0, FIT_BAND]."""
    from scipy.optimize import least_squares
    band = (frequencies > 0.0) & (frequencies <= FIT_BAND)
    w = 2.0 * math.pi * frequencies[band]
    hb = h[band]

    def residual(x):
        if model is two_layer_receptance and not x[1] > 1.0001 * k:
            return np.full(2 * hb.size, 1e3)        # k_1 below k: no positive k_2
        r = np.log(model(x, k, w) / hb)
        return np.concatenate([r.real, r.imag])
    start = np.asarray(start, dtype=float)
    sol = least_squares(residual, start, x_scale=np.abs(start), method="trf", max_nfev=20000)
    return sol.x


def direction_errors(k, h, frequencies, model, x, upper):
    band = (frequencies > 0.0) & (frequencies <= upper)
    ratio = model(x, k, 2.0 * math.pi * frequencies[band]) / h[band]
    mag = np.abs(ratio) - 1.0
    phase = np.degrees(np.angle(ratio))
    k1 = int(np.argmax(np.abs(mag)))
    k2 = int(np.argmax(np.abs(phase)))
    return dict(max_abs_error=float(mag[k1]), at_frequency=float(frequencies[band][k1]),
                max_phase_error_deg=float(phase[k2]), phase_at_frequency=float(frequencies[band][k2]),
                rms_abs_error=float(np.sqrt(np.mean(mag ** 2))))


def crown_errors(K, M, C, H, frequencies, upper):
    """Largest |H| error (relative) and phase error (deg) of each crown entry over (0, upper]."""
    band = (frequencies > 0.0) & (frequencies <= upper)
    h = lumped_receptance(K, M, C, frequencies[band])
    out = {}
    for name, i, j in ENTRIES:
        ratio = h[:, i, j] / H[band, i, j]
        mag = np.abs(ratio) - 1.0
        phase = np.degrees(np.angle(ratio))
        k = int(np.argmax(np.abs(mag)))
        q = int(np.argmax(np.abs(phase)))
        out[name] = dict(max_abs_error=float(mag[k]), at_frequency=float(frequencies[band][k]),
                         max_phase_error_deg=float(phase[q]), phase_at_frequency=float(frequencies[band][q]),
                         rms_abs_error=float(np.sqrt(np.mean(mag ** 2))))
    return out


def fit_lumped(params, H_crown, frequencies):
    """The lumped fits of the mean receptance, direction by direction on the rail AXIS.

    The FE track's axis receptance is diagonal (its matrices join no two of lateral,
    vertical and roll at the axis: upright symmetric rail, the pads' springs act on each
    freedom alone), so each axis direction is fitted on its own; the crown's 3 x 3 follow
    with A (crown = A axis): M = A^-T diag(m) A^-1, the same for C and K, which couples the
    crown's lateral and roll through d (M_y,phi = m_y d, M_phi,phi = I + m_y d^2).
    single_mass: one body (m, c per direction) on K, the form the FMU's rail body has;
    two_layer: a rail body on a pad-like spring/damper to a second body on a
    ballast-like spring/damper (the static stiffness kept), for comparison."""
    A = head_transform(params)
    Ai = np.linalg.inv(A)
    H_axis = np.einsum("ij,fjk,lk->fil", Ai, H_crown, Ai)
    coupling = float(np.max(np.abs(H_axis[:, [0, 0, 1], [1, 2, 2]])) / np.max(np.abs(H_axis)))
    k_axis = np.diag(np.linalg.inv(H_axis[0].real))
    single, two = {}, {}
    w1 = 2.0 * math.pi * frequencies[1]
    for i, name in enumerate(AXIS_NAMES):
        h = H_axis[:, i, i]
        d1 = 1.0 / h[1]
        start = [(k_axis[i] - d1.real) / w1 ** 2, d1.imag / w1]
        x = fit_direction(k_axis[i], h, frequencies, single_mass_receptance, start)
        single[name] = dict(stiffness=float(k_axis[i]), mass=float(x[0]), damping=float(x[1]),
                            natural_frequency_hz=float(math.sqrt(k_axis[i] / x[0]) / (2 * math.pi)),
                            damping_ratio=float(x[1] / (2 * math.sqrt(k_axis[i] * x[0]))),
                            errors_0_300hz=direction_errors(k_axis[i], h, frequencies, single_mass_receptance,
                                                            x, FIT_BAND),
                            errors_0_600hz=direction_errors(k_axis[i], h, frequencies, single_mass_receptance,
                                                            x, 600.0))
        start2 = [0.5 * x[0], 2.0 * k_axis[i], x[1], 3.0 * x[0], x[1]]
        y = fit_direction(k_axis[i], h, frequencies, two_layer_receptance, start2)
        two[name] = dict(rail_mass=float(y[0]), upper_stiffness=float(y[1]), upper_damping=float(y[2]),
                         lower_mass=float(y[3]), lower_stiffness=float(1.0 / (1.0 / k_axis[i] - 1.0 / y[1])),
                         lower_damping=float(y[4]),
                         errors_0_300hz=direction_errors(k_axis[i], h, frequencies, two_layer_receptance,
                                                         y, FIT_BAND),
                         errors_0_600hz=direction_errors(k_axis[i], h, frequencies, two_layer_receptance,
                                                         y, 600.0))
    m_axis = np.diag([single[n]["mass"] for n in AXIS_NAMES])
    c_axis = np.diag([single[n]["damping"] for n in AXIS_NAMES])
    M = Ai.T @ m_axis @ Ai
    C = Ai.T @ c_axis @ Ai
    K = Ai.T @ np.diag(k_axis) @ Ai
    return dict(axis_receptance_coupling=coupling, single_mass_axis=single, two_layer_axis=two,
                crown=dict(stiffness=matrix(K), mass=matrix(M), damping=matrix(C),
                           errors_0_300hz=crown_errors(K, M, C, H_crown, frequencies, FIT_BAND),
                           errors_0_600hz=crown_errors(K, M, C, H_crown, frequencies, 600.0)))


def peak_frequencies(H, frequencies):
    """Frequency of the largest |H| of each diagonal crown entry over (0, 600] Hz."""
    band = frequencies > 0.0
    return {name: float(frequencies[band][int(np.argmax(np.abs(H[band, i, j])))])
            for name, i, j in ENTRIES if i == j}


# --------------------------------------------------------------------------- time domain
def newmark_lumped(K, M, C, loads, dt):
    """A lumped system stepped by Newmark's average-acceleration rule (as the FE engine),
    loads (nt, n) at the end of each step, starting from the static state of loads[0]."""
    q = np.linalg.solve(K, loads[0])
    v = np.zeros_like(q)
    acc = np.zeros_like(q)
    a0, a1 = 4.0 / dt ** 2, 2.0 / dt
    keff_inv = np.linalg.inv(K + a1 * C + a0 * M)
    out = np.empty((len(loads), q.size))
    for n in range(len(loads)):
        rhs = loads[n] + M @ (a0 * q + 4.0 / dt * v + acc) + C @ (a1 * q + v)
        qn = keff_inv @ rhs
        vn = a1 * (qn - q) - v
        acc = a0 * (qn - q) - 4.0 / dt * v - acc
        q, v = qn, vn
        out[n] = q
    return out


def two_layer_matrices(params, two):
    """(K, M, C) 6 x 6 of the two-layer bodies: crown (lateral, vertical, roll) of the rail
    body, then the lower bodies' (lateral, vertical, roll) on the axis frame."""
    Ai = np.linalg.inv(head_transform(params))
    T = np.zeros((6, 6))
    T[:3, :3] = Ai                      # rail body: axis = A^-1 crown
    T[3:, 3:] = np.eye(3)
    mats = []
    for upper, lower, body in (("upper_stiffness", "lower_stiffness", None),
                               ("upper_damping", "lower_damping", None),
                               (None, None, ("rail_mass", "lower_mass"))):
        m = np.zeros((6, 6))
        for i, name in enumerate(AXIS_NAMES):
            d = two[name]
            if body is None:
                a, b = d[upper], d[lower]
                m[np.ix_([i, i + 3], [i, i + 3])] += np.array([[a, -a], [-a, a + b]])
            else:
                m[i, i] = d[body[0]]
                m[i + 3, i + 3] = d[body[1]]
        mats.append(T.T @ m @ T)
    return mats


def moving_load_case(params, lumped, two_layer, label, direction, amplitude, frequency):
    """Crown displacement under a load moving at SPEED: FE track vs the lumped bodies."""
    from cosim.track.fe_model import RailLoad
    track = AssembledTrack(TrackModel(params), TIME_STEP)
    A = head_transform(params)
    nt = int(round(DURATION / TIME_STEP))
    t = (np.arange(nt) + 1) * TIME_STEP
    unit = np.zeros(3)
    unit[0 if direction == "lateral" else 1] = 1.0
    shape = np.ones(nt) if frequency == 0.0 else np.sin(2 * math.pi * frequency * t)
    crown = amplitude * shape[:, None] * unit[None, :]            # (nt, 3) at the crown
    axis_loads = crown @ A                                         # = (A.T @ F) per row
    if frequency == 0.0:
        f0 = axis_loads[0]
        track.static([(0, START, RailLoad(lateral=f0[0], vertical=f0[1], torque=f0[2]))])
    fe = np.empty((nt, 3))
    for n in range(nt):
        x = START + SPEED * t[n]
        axis = track.step_points((0,), (x,), axis_loads[n][None, :])
        fe[n] = A @ axis[0, 0]
    start_loads = crown if frequency == 0.0 else np.vstack([np.zeros(3), crown])
    lump = newmark_lumped(lumped["K"], lumped["M"], lumped["C"], start_loads, TIME_STEP)
    K2, C2, M2 = two_layer
    two = newmark_lumped(K2, M2, C2, np.hstack([start_loads, np.zeros_like(start_loads)]), TIME_STEP)[:, :3]
    if frequency != 0.0:
        lump, two = lump[1:], two[1:]
    window = (t >= WINDOW[0]) & (t <= WINDOW[1])
    result = dict(label=label, direction=direction, amplitude=amplitude, frequency=frequency)
    for name, i in (("lateral", 0), ("vertical", 1), ("roll", 2)):
        a, b, c = fe[window, i], lump[window, i], two[window, i]
        if frequency == 0.0:
            entry = dict(fe_mean=float(a.mean()), fe_min=float(a.min()), fe_max=float(a.max()),
                         single_mass=float(b.mean()), two_layer=float(c.mean()))
        else:
            basis = np.column_stack([np.sin(2 * math.pi * frequency * t[window]),
                                     np.cos(2 * math.pi * frequency * t[window]), np.ones(window.sum())])
            entry = {}
            for key, series in (("fe", a), ("single_mass", b), ("two_layer", c)):
                co = np.linalg.lstsq(basis, series, rcond=None)[0]
                entry[f"{key}_amplitude"] = float(math.hypot(co[0], co[1]))
                entry[f"{key}_phase_deg"] = float(math.degrees(math.atan2(co[1], co[0])))
            entry["single_mass_rms_difference"] = float(np.sqrt(np.mean((a - b) ** 2)))
            entry["two_layer_rms_difference"] = float(np.sqrt(np.mean((a - c) ** 2)))
            entry["fe_rms"] = float(np.sqrt(np.mean(a ** 2)))
        result[name] = entry
    return result


# --------------------------------------------------------------------------- driver
def one_config(section, beam, with_time_domain):
    t0 = time.perf_counter()
    params = TrackParameters(rail=section, beam=beam, elements_per_bay=ELEMENTS_PER_BAY, bays=BAYS)
    model = PointModel(params)
    A = head_transform(params)
    Ai = np.linalg.inv(A)
    flex, inertia = model.static()
    mean_flex = 0.5 * (flex["over_sleeper"] + flex["mid_span"])
    K = np.linalg.inv(mean_flex)
    bay_flex = model.bay_average()
    mean_inertia = 0.5 * (inertia["over_sleeper"] + inertia["mid_span"])
    low_mass = K @ mean_inertia @ K          # the undamped receptance's w^2 term: H = G + w^2 G M_lf G
    H = model.receptance(FREQUENCIES)
    H["mean"] = 0.5 * (H["over_sleeper"] + H["mid_span"])
    static_check = float(np.max(np.abs(H["mean"][0].real - mean_flex)) / np.max(np.abs(mean_flex)))
    fit = fit_lumped(params, H["mean"], FREQUENCIES)
    # the TrackParameters default mesh (2 elements per bay): static only
    coarse_flex, _ = PointModel(dataclasses.replace(params, elements_per_bay=2)).static()
    axis_mean = Ai @ mean_flex @ Ai.T
    axis_mass = np.linalg.inv(axis_mean) @ (Ai @ mean_inertia @ Ai.T) @ np.linalg.inv(axis_mean)
    closed = winkler(params)
    check = dict(
        vertical_stiffness=dict(fe=float(1.0 / axis_mean[1, 1]), closed_form=closed["vertical"]["stiffness"]),
        lateral_stiffness=dict(fe=float(1.0 / axis_mean[0, 0]), closed_form=closed["lateral"]["stiffness"]),
        roll_stiffness=dict(fe=float(1.0 / axis_mean[2, 2]), closed_form=closed["roll"]["stiffness"]),
        vertical_effective_mass=dict(fe=float(axis_mass[1, 1]), closed_form=closed["vertical"]["effective_mass"]),
        lateral_effective_mass=dict(fe=float(axis_mass[0, 0]), closed_form=closed["lateral"]["effective_mass"]),
        roll_effective_inertia=dict(fe=float(axis_mass[2, 2]), closed_form=closed["roll"]["effective_mass"]))
    for v in check.values():
        v["fe_over_closed_form"] = float(v["fe"] / v["closed_form"])
    step = int(round(STORE_EVERY / (FREQUENCIES[1] - FREQUENCIES[0])))
    stored = {where: {name: dict(re=[float(v) for v in H[where][::step, i, j].real],
                                 im=[float(v) for v in H[where][::step, i, j].imag])
                      for name, i, j in ENTRIES}
              for where in ("over_sleeper", "mid_span", "mean")}
    out = dict(
        rail=section, beam=beam, track_parameters=dataclasses.asdict(params),
        crown_above_centroid=params.rail.crown_above_centroid, points=dict(model.positions),
        flexibility=dict(over_sleeper=matrix(flex["over_sleeper"]), mid_span=matrix(flex["mid_span"]),
                         mean=matrix(mean_flex), bay_average=matrix(bay_flex)),
        stiffness=matrix(K),
        stiffness_bay_average=matrix(np.linalg.inv(bay_flex)),
        stiffness_over_sleeper=matrix(np.linalg.inv(flex["over_sleeper"])),
        stiffness_mid_span=matrix(np.linalg.inv(flex["mid_span"])),
        flexibility_two_elements_per_bay=dict(over_sleeper=matrix(coarse_flex["over_sleeper"]),
                                              mid_span=matrix(coarse_flex["mid_span"])),
        low_frequency_mass=matrix(low_mass),
        receptance_at_0hz_vs_static=static_check,
        receptance_peaks_hz={k: peak_frequencies(H[k], FREQUENCIES) for k in ("over_sleeper", "mid_span", "mean")},
        lumped=fit, closed_forms=closed, closed_form_check=check,
        receptance=dict(frequencies=[float(f) for f in FREQUENCIES[::step]],
                        entries=[n for n, _, _ in ENTRIES], **stored))
    t1 = time.perf_counter()
    out["seconds_frequency_domain"] = t1 - t0
    if with_time_domain:
        lumped = {k: np.array(fit["crown"][name]) for k, name in (("K", "stiffness"), ("M", "mass"),
                                                                    ("C", "damping"))}
        two = two_layer_matrices(params, fit["two_layer_axis"])
        cases = []
        for label, direction, amp, freq in (("vertical constant 100 kN", "vertical", -100e3, 0.0),
                                            ("vertical 20 kN at 50 Hz", "vertical", -20e3, 50.0),
                                            ("vertical 20 kN at 100 Hz", "vertical", -20e3, 100.0),
                                            ("lateral constant 30 kN", "lateral", 30e3, 0.0),
                                            ("lateral 10 kN at 50 Hz", "lateral", 10e3, 50.0),
                                            ("lateral 10 kN at 100 Hz", "lateral", 10e3, 100.0)):
            cases.append(moving_load_case(params, lumped, two, label, direction, amp, freq))
            print(f"  {label}: {json.dumps({k: cases[-1][k] for k in ('lateral', 'vertical', 'roll')})}",
                  flush=True)
        out["time_domain"] = cases
        out["seconds_time_domain"] = time.perf_counter() - t1
    return out


def git_commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "cosim/track"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        return head + (" (cosim/track modified)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=HERE / "lumped_track.json")
    parser.add_argument("--no-time-domain", action="store_true")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    configs = {}
    for section, beam in CONFIGS:
        key = f"{section}/{beam}"
        print(f"{key} ...", flush=True)
        configs[key] = one_config(section, beam, not args.no_time_domain)
        c = configs[key]
        print(f"{key}: K = {np.array(c['stiffness']).round(-3).tolist()}", flush=True)
        print(f"  single mass {json.dumps(c['lumped']['single_mass_axis'])}", flush=True)
        print(f"  two layer {json.dumps(c['lumped']['two_layer_axis'])}", flush=True)
        print(f"  closed forms {json.dumps(c['closed_form_check'])}", flush=True)
    data = dict(
        description="Lumped rail bodies for the wheelset FMU from the project's FE ballasted track "
                    "(cosim/track/): q = (lateral y, vertical z, roll about +x) of the crown (the rail "
                    "profile's origin, the point the FMU's rail inputs move and turn the profile about), "
                    "track frame, the same matrices for both rails; M q'' + C q' + K q = F, F the force "
                    "(N) and moment (N m, about +x through the crown) of the wheel on the rail. "
                    "K = inverse of the mean of the static point flexibilities over a sleeper and at "
                    "mid-span; M, C fitted to the mean point receptance over 0-300 Hz.",
        units="SI: m, N, N m, rad, kg, kg m^2, s, Hz; receptance in m/N, m/(N m) or rad/(N m)",
        default=DEFAULT,
        provenance=dict(commit=git_commit(), made_by="tests/data/lumped_track/make_lumped_track.py",
                        fe_settings=dict(engine="assembled OpenSees element matrices (cosim.track.engines."
                                                "AssembledTrack), consistent mass, damping of the pads and "
                                                "ballast as in TrackParameters",
                                         elements_per_bay=ELEMENTS_PER_BAY, bays=BAYS,
                                         point_over_sleeper_bay=POINT_BAY,
                                         frequencies_hz=dict(start=float(FREQUENCIES[0]), stop=float(FREQUENCIES[-1]),
                                                             step=float(FREQUENCIES[1] - FREQUENCIES[0]),
                                                             stored_every=STORE_EVERY),
                                         fit_band_hz=[0.0, FIT_BAND],
                                         time_domain=dict(speed=SPEED, time_step=TIME_STEP, duration=DURATION,
                                                          start=START, compared_window=list(WINDOW),
                                                          integrator="Newmark average acceleration "
                                                                     "(both models)"))),
        configurations=configs)
    data["provenance"]["seconds_total"] = time.perf_counter() - t0
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {args.out} in {data['provenance']['seconds_total']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
