"""Track excitation: irregularity spectra and realisations, the irregularity-to-rail rule, rail motion.

Functions of the travelled distance ``s`` (m), SI units; signs as in
solver.track (docs/CONVENTIONS.md).

Irregularities (``TrackIrregularity``)
--------------------------------------
Four functions of s, in metres: lateral ``alignment`` (+y), vertical ``level``
(+z), ``gauge`` deviation (actual minus nominal gauge, + = wider) and
``cross_level`` (z_left - z_right, + = left rail higher, the same sign as
``cant_angle``). Per rail (last axis index 0 = left, 1 = right):

    left  rail lateral  = alignment + gauge/2     right rail lateral  = alignment - gauge/2
    left  rail vertical = level + cross_level/2   right rail vertical = level - cross_level/2

so a wider gauge moves the left rail to +y and the right rail to -y. This rule
is written once, `rail_displacements` (and `rail_displacement_coefficients`,
the same rule as a matrix for a host that maps its inputs with one matrix
product); with a rigid sleeper both rails also roll by
asin(cross_level / rail_distance) (`cross_level_roll`).

Sources: a CSV file (columns ``s_m, alignment_m, level_m, gauge_m,
crosslevel_m``; missing component columns are zero), or a realisation of a
standard one-sided PSD S(Omega) (m^2/(rad/m), Omega = 2 pi / wavelength in
rad/m) generated with a seed by the spectral representation (sum of harmonics
with deterministic amplitudes a_k = sqrt(2 * integral of S over the k-th
frequency bin) and uniform random phases, Shinozuka & Deodatis 1991), evaluated
on a grid by an inverse FFT. The realisation is PERIODIC with period
``length`` (choose it at least as long as the run), its variance over one
period equals the integral of the PSD over the wavelength band (default 1-120
m). Values between grid points come from a cubic Hermite spline fed with the
spectrally exact derivative.

Rail motion (``RailMotion``)
----------------------------
Lateral, vertical, roll displacement of each rail and their time derivatives,
arrays of shape (2,) [left, right], zero by default; ``combined_with_irregularity``
adds an irregularity at s (rates times the speed) so the dynamics sees one rail
motion.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, fields
from typing import Mapping, Sequence

import numpy as np
from numba import njit
from scipy import integrate
from scipy.interpolate import CubicSpline
from scipy.special import roots_legendre

from .files import check_columns, read_csv
from .sections import DEFAULT_RAIL_DISTANCE, TrackError, as_distance, finite_float, scalar_or_array


# --------------------------------------------------------------------------
# the irregularity-to-rail rule
# --------------------------------------------------------------------------
def rail_displacements(alignment, level, gauge, cross_level):
    """THE irregularity-to-rail rule: ((left lateral, right lateral), (left
    vertical, right vertical)) of the rails for the four irregularity
    components (m, or their rates): alignment +/- gauge/2, level +/-
    cross_level/2. Numbers or arrays of one shape."""
    return ((alignment + 0.5 * gauge, alignment - 0.5 * gauge),
            (level + 0.5 * cross_level, level - 0.5 * cross_level))


def rail_displacement_coefficients() -> np.ndarray:
    """`rail_displacements` as a matrix C[side, axis, component] (side 0 left,
    1 right; axis 0 lateral, 1 vertical; components in COMPONENTS order), so that
    rail displacement = C @ (alignment, level, gauge, cross_level)."""
    coefficients = np.zeros((2, 2, len(COMPONENTS)))
    for j in range(len(COMPONENTS)):
        unit = np.zeros(len(COMPONENTS))
        unit[j] = 1.0
        lateral, vertical = rail_displacements(*unit)
        coefficients[:, 0, j] = lateral
        coefficients[:, 1, j] = vertical
    return coefficients


def cross_level_roll(cross_level: float, cross_level_rate: float, rail_distance: float):
    """(roll (rad), roll rate) of both rails rolling with a rigid sleeper under
    the cross level c (m) and its rate: asin(c / d) and its derivative,
    d the distance between the rail centres (m). TrackError if |c| >= d."""
    if abs(cross_level) >= rail_distance:
        raise TrackError(f"cross-level {cross_level} m is not below the rail distance {rail_distance} m")
    return cross_level_roll_kernel(float(cross_level), float(cross_level_rate), float(rail_distance))


@njit(cache=True)
def cross_level_roll_kernel(cross_level, cross_level_rate, rail_distance):
    """`cross_level_roll` for |cross_level| < rail_distance (numba: the FMU's input
    mapping, solver/model/fast_step.py, computes it with the same operations)."""
    return (math.asin(cross_level / rail_distance),
            cross_level_rate / math.sqrt(rail_distance * rail_distance - cross_level * cross_level))


# --------------------------------------------------------------------------
# irregularity spectra
# --------------------------------------------------------------------------
# FRA track classes 1-6: the PSD fits of Hamid & Yang (FRA report "Analytical
# descriptions of track geometry variations", 1983; Fries & Coffey), in the form
# reproduced by Garg & Dukkipati (Dynamics of Railway Vehicle Systems, 1984) and
# Zhai (Vehicle-Track Coupled Dynamics, 2020, ch. on track irregularities):
#   profile (level)     S_v = k A_v Oc^2 / (O^2 (O^2 + Oc^2))
#   alignment           S_a = k A_a Oc^2 / (O^2 (O^2 + Oc^2))
#   cross-level, gauge  S_c = 4 k A_v Oc^2 / ((O^2 + Oc^2)(O^2 + Os^2))
# with S in cm^2/(rad/m), A in cm^2 rad/m, O in rad/m, k = 0.25. The original
# report fits gauge with its own parameters; the common reproduction above uses
# the cross-level form for both, as here. Table: class -> (A_v, A_a, Os, Oc).
FRA_K = 0.25
FRA_CLASSES = {
    1: (1.2107, 3.3634, 0.6046, 0.8245),
    2: (1.0181, 1.2107, 0.9308, 0.8245),
    3: (0.6816, 0.4128, 0.8520, 0.8245),
    4: (0.5376, 0.3027, 1.1312, 0.8245),
    5: (0.2095, 0.0762, 0.8209, 0.8245),
    6: (0.0339, 0.0339, 0.4380, 0.8245),
}
# German low / high disturbance spectra (ORE B176, 1989), in the form of Zhai
# (2020) and others: Oc = 0.8246, Or = 0.0206, Os = 0.4380 rad/m,
#   level      S_v = A_v Oc^2 / ((O^2 + Or^2)(O^2 + Oc^2))
#   alignment  S_a = A_a Oc^2 / ((O^2 + Or^2)(O^2 + Oc^2))
#   gauge      S_g = A_g Oc^2 O^2 / ((O^2 + Or^2)(O^2 + Oc^2)(O^2 + Os^2))
#   cross-level ANGLE  S_c = (A_v / b^2) Oc^2 O^2 / ((O^2+Or^2)(O^2+Oc^2)(O^2+Os^2)),
#     b = 0.75 m; as the height difference 2 b * angle used here: 4 b^2 S_c,
#     i.e. 4 A_v Oc^2 O^2 / (...), independent of b.
# S in m^2/(rad/m), A in m^2 rad/m. (low: A_a 2.119e-7, A_v 4.032e-7,
# A_g 0.532e-7; high: 6.125e-7, 10.80e-7, 1.032e-7.) The high-level alignment
# and level values were cross-checked against the ORE B176 high table printed
# in the GENSYS TRC_IPSD manual (m^2/(1/m) = 2 pi x m^2/(rad/m)): 6.1608e-6 at
# 10 m and 2.3194e-4 at 50 m for alignment, 1.0863e-5 at 10 m for level.
GERMAN_OMEGA_C, GERMAN_OMEGA_R, GERMAN_OMEGA_S = 0.8246, 0.0206, 0.4380
GERMAN_LEVELS = {"low": (2.119e-7, 4.032e-7, 0.532e-7), "high": (6.125e-7, 10.80e-7, 1.032e-7)}

COMPONENTS = ("alignment", "level", "gauge", "cross_level")
SPECTRA = tuple([f"fra-{c}" for c in FRA_CLASSES] + ["german-low", "german-high"])


def psd(spectrum: str, component: str, omega):
    """One-sided PSD S(omega) in m^2/(rad/m) of ``component`` ('alignment',
    'level', 'gauge', 'cross_level') for ``spectrum`` ('fra-1' .. 'fra-6',
    'german-low', 'german-high'); omega = 2 pi / wavelength (rad/m), > 0.
    The variance over a band is the integral of S over omega in that band."""
    if component not in COMPONENTS:
        raise TrackError(f"unknown irregularity component {component!r} (known: {COMPONENTS})")
    om = np.asarray(omega, dtype=float)
    if not np.all(np.isfinite(om)) or np.any(om <= 0.0):
        raise TrackError("omega must be finite and positive (rad/m)")
    o2 = om * om
    if isinstance(spectrum, str) and spectrum.startswith("fra-"):
        try:
            av, aa, os_, oc = FRA_CLASSES[int(spectrum[4:])]
        except (ValueError, KeyError):
            raise TrackError(f"unknown spectrum {spectrum!r} (known: {SPECTRA})") from None
        if component == "level":
            s = FRA_K * av * oc ** 2 / (o2 * (o2 + oc ** 2))
        elif component == "alignment":
            s = FRA_K * aa * oc ** 2 / (o2 * (o2 + oc ** 2))
        else:
            s = 4.0 * FRA_K * av * oc ** 2 / ((o2 + oc ** 2) * (o2 + os_ ** 2))
        s = s * 1e-4  # cm^2 -> m^2
    elif spectrum in ("german-low", "german-high"):
        aa, av, ag = GERMAN_LEVELS[spectrum[7:]]
        oc, or_, os_ = GERMAN_OMEGA_C, GERMAN_OMEGA_R, GERMAN_OMEGA_S
        base = oc ** 2 / ((o2 + or_ ** 2) * (o2 + oc ** 2))
        if component == "level":
            s = av * base
        elif component == "alignment":
            s = aa * base
        elif component == "gauge":
            s = ag * base * o2 / (o2 + os_ ** 2)
        else:
            s = 4.0 * av * base * o2 / (o2 + os_ ** 2)
    else:
        raise TrackError(f"unknown spectrum {spectrum!r} (known: {SPECTRA})")
    return float(s) if om.ndim == 0 else s


def _check_band(wavelength_band):
    try:
        lo, hi = (float(x) for x in wavelength_band)
    except (TypeError, ValueError):
        raise TrackError("wavelength_band must be two numbers (min, max) in m") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and 0.0 < lo < hi):
        raise TrackError(f"wavelength_band must satisfy 0 < min < max (finite), got {(lo, hi)}")
    return lo, hi


def psd_band_variance(spectrum: str, component: str, wavelength_band=(1.0, 120.0)) -> float:
    """Integral of the PSD over omega in the wavelength band (m^2)."""
    lo, hi = _check_band(wavelength_band)
    om_lo, om_hi = 2 * math.pi / hi, 2 * math.pi / lo
    psd(spectrum, component, om_lo)  # validates the names
    edges = np.geomspace(om_lo, om_hi, 9)
    return float(sum(integrate.quad(lambda o: psd(spectrum, component, o), a, b,
                                    epsabs=0.0, epsrel=1e-12, limit=200)[0]
                     for a, b in zip(edges[:-1], edges[1:])))


# --------------------------------------------------------------------------
# irregularity
# --------------------------------------------------------------------------
class _PeriodicHermite:
    """Cubic Hermite interpolation on a uniform periodic grid (values and exact
    derivatives at the nodes), vectorised, with a scalar fast path."""

    def __init__(self, values: np.ndarray, derivatives: np.ndarray, period: float):
        self.y = np.append(values, values[0])
        self.dy = np.append(derivatives, derivatives[0])
        self.n = values.size
        self.period = period
        self.h = period / values.size
        self._yl = self.y.tolist()
        self._dyl = self.dy.tolist()

    def _split(self, s):
        u = np.mod(s, self.period) / self.h
        i = np.minimum(np.floor(u).astype(int), self.n - 1)
        return i, u - i

    def value(self, s):
        i, t = self._split(s)
        t2, t3 = t * t, t * t * t
        return ((2 * t3 - 3 * t2 + 1) * self.y[i] + (t3 - 2 * t2 + t) * self.h * self.dy[i]
                + (-2 * t3 + 3 * t2) * self.y[i + 1] + (t3 - t2) * self.h * self.dy[i + 1])

    def rate(self, s):
        i, t = self._split(s)
        t2 = t * t
        return ((6 * t2 - 6 * t) * (self.y[i] - self.y[i + 1]) / self.h
                + (3 * t2 - 4 * t + 1) * self.dy[i] + (3 * t2 - 2 * t) * self.dy[i + 1])

    def both_scalar(self, s: float):
        u = (s % self.period) / self.h
        i = min(int(u), self.n - 1)
        t = u - i
        t2 = t * t
        t3 = t2 * t
        y0, y1, d0, d1 = self._yl[i], self._yl[i + 1], self._dyl[i], self._dyl[i + 1]
        val = ((2 * t3 - 3 * t2 + 1) * y0 + (t3 - 2 * t2 + t) * self.h * d0
               + (-2 * t3 + 3 * t2) * y1 + (t3 - t2) * self.h * d1)
        rate = ((6 * t2 - 6 * t) * (y0 - y1) / self.h + (3 * t2 - 4 * t + 1) * d0
                + (3 * t2 - 2 * t) * d1)
        return val, rate


_CSV_IRR_COLUMNS = {"alignment_m": "alignment", "level_m": "level", "gauge_m": "gauge",
                    "crosslevel_m": "cross_level"}


class TrackIrregularity:
    """Alignment, level, gauge and cross-level irregularities (m) as functions
    of s, with their s-derivatives and the per-rail displacements (module
    docstring). Build with ``from_psd``, ``from_csv`` or ``zero``."""

    def __init__(self, evaluators: Mapping, *, rail_distance: float = DEFAULT_RAIL_DISTANCE,
                 source: str = "", period: float | None = None, harmonics=None):
        """Low level: ``evaluators[component] = (value(s), rate(s)[, both(s)])``:
        callables on float arrays, and optionally one returning (value, rate)
        for a float; missing components are zero."""
        for key in evaluators:
            if key not in COMPONENTS:
                raise TrackError(f"unknown irregularity component {key!r} (known: {COMPONENTS})")
        self._eval = dict(evaluators)
        self.rail_distance = finite_float(rail_distance, "rail_distance")
        if self.rail_distance <= 0.0:
            raise TrackError("rail_distance must be positive")
        self.source = source
        self.period = period
        #: for PSD realisations: component -> (omega (rad/m), amplitude (m), phase (rad))
        self.harmonics = harmonics or {}

    def __repr__(self):
        return f"TrackIrregularity({self.source!r})"

    # --------------------------------------------------------------- builders
    @classmethod
    def zero(cls, rail_distance: float = DEFAULT_RAIL_DISTANCE) -> "TrackIrregularity":
        """A perfect track."""
        return cls({}, rail_distance=rail_distance, source="zero")

    @classmethod
    def from_psd(cls, spectrum: str, seed: int, *, length: float = 5000.0,
                 wavelength_band=(1.0, 120.0), step: float | None = None,
                 components: Sequence[str] | None = None,
                 rail_distance: float = DEFAULT_RAIL_DISTANCE) -> "TrackIrregularity":
        """Realisation of ``spectrum`` ('fra-1'..'fra-6', 'german-low',
        'german-high') for ``seed`` (int). Harmonics at omega_k = 2 pi k / length
        inside the band (wavelengths in m, default 1-120 m), amplitude
        sqrt(2 * integral of S over [omega_k -/+ pi/length] within the band),
        uniform random phase (numpy default_rng(seed), drawn for all four
        components in a fixed order, so choosing ``components`` does not change
        the others). Periodic with period ``length`` (m). ``step`` (m): grid of
        the inverse FFT (default min wavelength / 10). Components not chosen
        are zero."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise TrackError(f"seed must be a non-negative integer, got {seed!r}")
        lo, hi = _check_band(wavelength_band)
        length = finite_float(length, "length")
        if length < 2.0 * hi:
            raise TrackError(f"length {length} m must be at least twice the longest "
                             f"wavelength {hi} m")
        step = lo / 10.0 if step is None else finite_float(step, "step")
        if not 0.0 < step <= lo / 4.0:
            raise TrackError(f"step must be in (0, {lo / 4.0}] m (a quarter of the shortest "
                             f"wavelength), got {step}")
        comps = COMPONENTS if components is None else tuple(components)
        for c in comps:
            if c not in COMPONENTS:
                raise TrackError(f"unknown irregularity component {c!r} (known: {COMPONENTS})")
        psd(spectrum, "level", 1.0)  # validates the name
        n = int(math.ceil(length / step))
        n += n % 2
        dom = 2.0 * math.pi / length
        om_lo, om_hi = 2.0 * math.pi / hi, 2.0 * math.pi / lo
        k = np.arange(int(math.floor(om_lo / dom + 0.5)), int(math.ceil(om_hi / dom - 0.5)) + 1)
        k = k[(k >= 1) & (k < n // 2)]
        om = k * dom
        a = np.maximum(om - 0.5 * dom, om_lo)
        b = np.minimum(om + 0.5 * dom, om_hi)
        keep = b > a
        k, om, a, b = k[keep], om[keep], a[keep], b[keep]
        gx, gw = roots_legendre(8)
        nodes = 0.5 * (a[:, None] + b[:, None]) + 0.5 * (b - a)[:, None] * gx[None, :]
        rng = np.random.default_rng(int(seed))
        phases = {c: rng.uniform(0.0, 2.0 * math.pi, k.size) for c in COMPONENTS}
        evaluators, harmonics = {}, {}
        for c in comps:
            power = 0.5 * (b - a) * (psd(spectrum, c, nodes) @ gw)
            amp = np.sqrt(2.0 * power)
            spec = np.zeros(n // 2 + 1, dtype=complex)
            spec[k] = 0.5 * n * amp * np.exp(1j * phases[c])
            val = np.fft.irfft(spec, n=n)
            der = np.fft.irfft(1j * (np.arange(n // 2 + 1) * dom) * spec, n=n)
            herm = _PeriodicHermite(val, der, length)
            evaluators[c] = (herm.value, herm.rate, herm.both_scalar)
            harmonics[c] = (om.copy(), amp, phases[c].copy())
        return cls(evaluators, rail_distance=rail_distance, period=length, harmonics=harmonics,
                   source=f"{spectrum} seed {seed}, band {lo:g}-{hi:g} m, period {length:g} m")

    @classmethod
    def from_csv(cls, path, *, interpolation: str = "cubic",
                 rail_distance: float = DEFAULT_RAIL_DISTANCE) -> "TrackIrregularity":
        """Read irregularities from CSV: column ``s_m`` (strictly increasing) and
        any of ``alignment_m, level_m, gauge_m, crosslevel_m`` (m; a missing
        column is zero). ``interpolation`` 'cubic' (not-a-knot cubic spline,
        continuous rate; the default) or 'linear'. Outside the data range the
        end values are held (rate 0)."""
        path = os.fspath(path)
        if interpolation not in ("cubic", "linear"):
            raise TrackError(f"interpolation must be 'cubic' or 'linear', got {interpolation!r}")
        header, rows, _ = read_csv(path)
        try:
            check_columns(header, {"s_m", *_CSV_IRR_COLUMNS}, required=("s_m",))
            if not any(c in header for c in _CSV_IRR_COLUMNS):
                raise TrackError(f"no irregularity column (expected some of "
                                 f"{list(_CSV_IRR_COLUMNS)})")
            data = np.empty((len(rows), len(header)))
            for r, (lineno, row) in enumerate(rows):
                for c, (name, cell) in enumerate(zip(header, row)):
                    data[r, c] = finite_float(cell, f"line {lineno}: {name}")
            s = data[:, header.index("s_m")]
            if s.size < 2:
                raise TrackError("at least two rows are needed")
            bad = np.nonzero(np.diff(s) <= 0.0)[0]
            if bad.size:
                raise TrackError(f"s_m must increase strictly (row {bad[0] + 2} of the data: "
                                 f"{s[bad[0] + 1]} after {s[bad[0]]})")
        except TrackError as exc:
            raise TrackError(f"{path}: {exc}") from None
        evaluators = {}
        for col, comp in _CSV_IRR_COLUMNS.items():
            if col not in header:
                continue
            y = data[:, header.index(col)]
            evaluators[comp] = _interpolator(s, y, interpolation)
        return cls(evaluators, rail_distance=rail_distance,
                   source=f"{path} ({interpolation}, s {s[0]:g}-{s[-1]:g} m)")

    def to_csv(self, path, s) -> None:
        """Write the four components at the distances ``s`` (m, increasing)."""
        s = as_distance(s).reshape(-1)
        cols = [s] + [self.value(c, s) for c in COMPONENTS]
        with open(os.fspath(path), "w", encoding="utf-8", newline="") as fh:
            fh.write(f"# {self.source}\n")
            fh.write("s_m,alignment_m,level_m,gauge_m,crosslevel_m\n")
            for row in zip(*cols):
                fh.write(",".join(repr(float(x)) for x in row) + "\n")

    # ---------------------------------------------------------------- values
    def value(self, component: str, s):
        """Irregularity ``component`` (m) at s."""
        if component not in COMPONENTS:
            raise TrackError(f"unknown irregularity component {component!r} (known: {COMPONENTS})")
        arr = as_distance(s)
        ev = self._eval.get(component)
        out = np.zeros(arr.shape) if ev is None else np.asarray(ev[0](arr), dtype=float)
        return scalar_or_array(out, arr.ndim == 0)

    def rate(self, component: str, s):
        """d component / ds (m/m) at s."""
        if component not in COMPONENTS:
            raise TrackError(f"unknown irregularity component {component!r} (known: {COMPONENTS})")
        arr = as_distance(s)
        ev = self._eval.get(component)
        out = np.zeros(arr.shape) if ev is None else np.asarray(ev[1](arr), dtype=float)
        return scalar_or_array(out, arr.ndim == 0)

    def state(self, s: float):
        """(values, rates): two arrays of shape (4,) in the order of
        ``COMPONENTS`` (alignment, level, gauge, cross_level) at one distance s."""
        s = finite_float(s, "s")
        vals = np.zeros(4)
        rates = np.zeros(4)
        for j, comp in enumerate(COMPONENTS):
            ev = self._eval.get(comp)
            if ev is None:
                continue
            if len(ev) > 2:
                vals[j], rates[j] = ev[2](s)
            else:
                vals[j] = float(ev[0](np.asarray(s)))
                rates[j] = float(ev[1](np.asarray(s)))
        return vals, rates

    def alignment(self, s):
        """Lateral alignment (m, +y = left) of the track centreline."""
        return self.value("alignment", s)

    def level(self, s):
        """Vertical level (m, +z = up) of the track centreline."""
        return self.value("level", s)

    def gauge(self, s):
        """Gauge deviation (m, + = wider than nominal)."""
        return self.value("gauge", s)

    def cross_level(self, s):
        """Cross-level z_left - z_right (m, + = left rail higher)."""
        return self.value("cross_level", s)

    def alignment_rate(self, s):
        return self.rate("alignment", s)

    def level_rate(self, s):
        return self.rate("level", s)

    def gauge_rate(self, s):
        return self.rate("gauge", s)

    def cross_level_rate(self, s):
        return self.rate("cross_level", s)

    def _per_rail(self, s, axis, rates):
        """Axis 0 (lateral) or 1 (vertical) of `rail_displacements` at s, last axis
        [left, right]; of the s-rates with `rates`."""
        get = self.rate if rates else self.value
        components = [np.asarray(get(c, s)) for c in COMPONENTS]
        return np.stack(rail_displacements(*components)[axis], axis=-1)

    def rail_lateral(self, s):
        """Lateral displacement (m, +y) of each rail, last axis [left, right]:
        alignment +/- gauge/2."""
        return self._per_rail(s, 0, False)

    def rail_vertical(self, s):
        """Vertical displacement (m, +z) of each rail, last axis [left, right]:
        level +/- cross_level/2."""
        return self._per_rail(s, 1, False)

    def rail_lateral_rate(self, s):
        """d rail_lateral / ds, last axis [left, right]."""
        return self._per_rail(s, 0, True)

    def rail_vertical_rate(self, s):
        """d rail_vertical / ds, last axis [left, right]."""
        return self._per_rail(s, 1, True)


def _interpolator(s: np.ndarray, y: np.ndarray, kind: str):
    s0, s1 = s[0], s[-1]
    if kind == "linear":
        slopes = np.diff(y) / np.diff(s)

        def value(q):
            return np.interp(q, s, y)

        def rate(q):
            i = np.clip(np.searchsorted(s, q, side="right") - 1, 0, slopes.size - 1)
            return np.where((q >= s0) & (q < s1), slopes[i], 0.0)
        return value, rate
    spline = CubicSpline(s, y, bc_type="not-a-knot", extrapolate=False)
    dspline = spline.derivative()

    def value(q):
        return spline(np.clip(q, s0, s1))

    def rate(q):
        return np.where((q >= s0) & (q <= s1), dspline(np.clip(q, s0, s1)), 0.0)
    return value, rate


# --------------------------------------------------------------------------
# rail motion
# --------------------------------------------------------------------------
def _zeros2():
    return np.zeros(2)


@dataclass
class RailMotion:
    """Motion of the two rails, each an array of shape (2,) = [left, right]:
    lateral (m, +y), vertical (m, +z), roll (rad, right-handed about +x, the
    sign of ``cant_angle``: + raises the rail head's left edge) and their time
    derivatives (m/s, rad/s). All zero by default."""

    lateral: np.ndarray = field(default_factory=_zeros2)
    vertical: np.ndarray = field(default_factory=_zeros2)
    roll: np.ndarray = field(default_factory=_zeros2)
    lateral_velocity: np.ndarray = field(default_factory=_zeros2)
    vertical_velocity: np.ndarray = field(default_factory=_zeros2)
    roll_velocity: np.ndarray = field(default_factory=_zeros2)

    def __post_init__(self):
        for f in fields(self):
            raw = getattr(self, f.name)
            try:
                arr = np.array(raw, dtype=float)
            except (TypeError, ValueError):
                raise TrackError(f"RailMotion.{f.name} must be numbers, got {raw!r}") from None
            if arr.shape != (2,):
                raise TrackError(f"RailMotion.{f.name} must have shape (2,) [left, right], "
                                 f"got shape {arr.shape}")
            if not np.all(np.isfinite(arr)):
                raise TrackError(f"RailMotion.{f.name} must be finite, got {arr.tolist()}")
            setattr(self, f.name, arr)

    def as_array(self) -> np.ndarray:
        """(6, 2) array: lateral, vertical, roll, and the three velocities."""
        return np.stack([getattr(self, f.name) for f in fields(self)])

    @classmethod
    def from_array(cls, a) -> "RailMotion":
        arr = np.asarray(a, dtype=float)
        if arr.shape != (6, 2):
            raise TrackError(f"RailMotion.from_array needs shape (6, 2), got {arr.shape}")
        return cls(*arr)

    def combined_with_irregularity(self, irregularity: TrackIrregularity, s: float,
                                   speed: float, *, cross_level_rolls_rails: bool = True
                                   ) -> "RailMotion":
        """This motion plus the irregularity at distance s (m) for a wheelset
        moving at ``speed`` (m/s along +x): displacements add the per-rail
        irregularity, velocities add its s-rate times the speed. With
        ``cross_level_rolls_rails`` both rails also roll with the sleeper by
        asin(cross_level / rail_distance) (rigid-sleeper picture)."""
        s = finite_float(s, "s")
        speed = finite_float(speed, "speed")
        values, rates = irregularity.state(s)
        lat, ver = (np.array(pair) for pair in rail_displacements(*values))
        dlat, dver = (np.array(pair) * speed for pair in rail_displacements(*rates))
        roll = np.zeros(2)
        droll = np.zeros(2)
        if cross_level_rolls_rails:
            c, rc = values[3], rates[3]
            c_roll, c_roll_rate = cross_level_roll(c, rc * speed, irregularity.rail_distance)
            roll += c_roll
            droll += c_roll_rate
        return RailMotion(self.lateral + lat, self.vertical + ver, self.roll + roll,
                          self.lateral_velocity + dlat, self.vertical_velocity + dver,
                          self.roll_velocity + droll)
