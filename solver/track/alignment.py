"""Track layout along the travelled distance: curves, transitions, cant; TOML/CSV files.

Everything is a function of the travelled distance ``s`` (m) along the track
centreline, in SI units (m, rad). Sign conventions (``docs/CONVENTIONS.md``):

* track frame x forward, y to the LEFT, z UP;
* curvature ``kappa = 1/R`` (1/m), POSITIVE for a LEFT curve (turning towards +y);
* ``cant_angle`` (rad): roll of the track plane about +x, positive LIFTS THE LEFT
  rail. A left curve with its outer (right) rail raised has ``cant_angle < 0``;
* files and section definitions give the cant as the superelevation ``h`` of the
  OUTER rail, positive. It becomes the signed ``superelevation`` e = z_left -
  z_right (m) and ``cant_angle = asin(e / rail_distance)``, ``rail_distance``
  being the distance between the rail centres (default 1.5 m, parameter).

Geometry (``Track``)
--------------------
Internally a track is a chain of segments on which the curvature and the signed
superelevation vary LINEARLY with s. A straight and a circular curve have
constant values; a transition is a clothoid (curvature linear in s) with a
linear superelevation ramp (h linear in s, so the cant angle is asin of a linear
function -- linear to 1e-4 relative for h < 160 mm). The "stations" form of the
papers (Kang 2012: R = [inf, inf, 320, 320, 320] m at given stations)
interpolates curvature and superelevation linearly between stations, which is
the same thing: clothoid transitions between the stations.

* A section may start with a curvature or cant different from where the
  previous one ended (a straight followed directly by a curve): that is a jump,
  allowed; the values are right-continuous (at the jump the value after it is
  returned) and the rates there are the rates of the following segment.
* Beyond the last section (s > length) the track continues with the curvature
  and cant at the end of the last section (rates 0); for s < 0 it continues
  backwards with the values at s = 0. Heading and plan position are continued
  consistently (circular arc or straight).
* ``heading(s)`` is the exact integral of the piecewise-linear curvature
  (heading(0) = 0); the plan position ``(X, Y)`` (X(0) = Y(0) = 0) is
  integrated with ``scipy.integrate.quad`` between sub-knots (at most 25 m and
  0.05 rad apart) and 10-point Gauss-Legendre within a sub-piece (accurate to
  ~1e-10 m; checked against the Fresnel closed form of the clothoid).

Sections (Python): a list of ``TrackSection`` or dicts with keys
``type`` ("straight" | "transition" | "curve"), ``length`` (m; or ``length_m``),
``radius`` (m; or ``radius_m``), ``cant`` (m; or ``cant_m``, or ``cant_mm`` in
mm), ``direction`` ("left" | "right"). A curve needs a finite radius > 0; its
cant (outer-rail superelevation, >= 0) defaults to 0. A transition runs from the
state at the end of the previous section (straight, no cant, if it is the first)
to the state at the start of the next one; a transition that ends the track
(or is followed by another transition) must give its end state explicitly with
``radius`` (inf = straight), ``cant`` and ``direction``.

TOML track file (every number carries its unit in the key name)::

    name = "kang-r320"               # optional
    description = "..."              # optional
    rail_distance_m = 1.5            # optional, distance between rail centres
    direction = "left"               # optional, default direction of the curves

    # EITHER a list of sections ...
    [[section]]
    type = "straight"                # "straight" | "transition" | "curve"
    length_m = 100.0
    [[section]]
    type = "transition"              # clothoid + linear cant ramp
    length_m = 100.0
    [[section]]
    type = "curve"
    length_m = 300.0
    radius_m = 400.0
    cant_mm = 120.0                  # outer-rail superelevation in MILLIMETRES
    direction = "left"               # (or cant_m = 0.120 in metres)

    # ... OR stations (curvature and cant linear between stations)
    [stations]
    s_m = [0.0, 100.0, 200.0, 300.0, 400.0]      # first station at 0, increasing
    radius_m = [inf, inf, 320.0, 320.0, 320.0]   # inf = straight (Kang writes 0)
    cant_mm = [0.0, 0.0, 120.0, 120.0, 120.0]    # or cant_m
    direction = "left"                           # or one per station

CSV track file: comma separated, one header row, ``#`` comment lines allowed;
comment lines ``# name = ...`` and ``# rail_distance_m = ...`` are read as
metadata. Either sections, header ``type,length_m,radius_m,cant_mm,direction``
(empty cells where not applicable), or stations, header
``s_m,radius_m,cant_mm[,direction]`` (``inf`` = straight). ``cant_m`` may
replace ``cant_mm``.

Irregularities and rail motion (``TrackIrregularity``, ``RailMotion``) are in
solver.track.excitation.
"""

from __future__ import annotations

import bisect
import math
import os
import tomllib
from typing import Iterable, Mapping, NamedTuple, Sequence

import numpy as np
from numba import njit
from scipy import integrate
from scipy.special import roots_legendre

from ..layout import TT_E0, TT_ER, TT_K0, TT_KR, TT_LENGTH, TT_S0
from .files import csv_number, toml_number, toml_string, check_columns, read_csv
from .sections import (
    DEFAULT_RAIL_DISTANCE, MAX_CURVATURE, TrackError, TrackSection, check_direction, float_or_inf,
    normalise_section, section_from_mapping, section_state, as_distance, finite_float,
    scalar_or_array,
)


@njit(cache=True, error_model="numpy", _nrt=False)
def track_state_kernel(table, rail_distance, length, s):
    """(curvature, curvature_rate, cant_angle) at s from a segment table: the
    numba twin of ``Track.evaluate`` (which stays the reference; the tests
    compare them), for the integrator's substeps."""
    n = table.shape[1]
    lo, hi = 0, n                     # bisect_right on the segment starts
    while lo < hi:
        mid = (lo + hi) // 2
        if s < table[TT_S0, mid]:
            hi = mid
        else:
            lo = mid + 1
    i = min(max(lo - 1, 0), n - 1)
    ds_in = min(max(s - table[TT_S0, i], 0.0), table[TT_LENGTH, i])
    curvature = table[TT_K0, i] + table[TT_KR, i] * ds_in
    e = table[TT_E0, i] + table[TT_ER, i] * ds_in
    rate = table[TT_KR, i] if 0.0 <= s < length else 0.0
    return curvature, rate, math.asin(e / rail_distance)


class TrackState(NamedTuple):
    """Track geometry at s (arrays like s): curvature (1/m), curvature_rate
    (1/m^2), cant_angle (rad), cant_rate (rad/m), heading (rad)."""

    curvature: np.ndarray
    curvature_rate: np.ndarray
    cant_angle: np.ndarray
    cant_rate: np.ndarray
    heading: np.ndarray


# Gauss-Legendre nodes on [0, 1] for the position integral inside a sub-piece
_GL_X, _GL_W = roots_legendre(10)
_GL_X = 0.5 * (_GL_X + 1.0)
_GL_W = 0.5 * _GL_W
_SUB_LENGTH = 25.0  # m, longest sub-piece of the position integration
_SUB_ANGLE = 0.05   # rad, largest heading change over a sub-piece


class Track:
    """Track geometry along s; build with ``from_sections``, ``from_stations``,
    ``load_track`` (TOML/CSV) or ``builtin_track``. See the module docstring."""

    def __init__(self, knots_s, knots_curvature, knots_superelevation, *,
                 rail_distance: float = DEFAULT_RAIL_DISTANCE, name: str = "",
                 description: str = "", sections=None, stations=None):
        """Low-level constructor from segment knots: arrays of length 2*n (start
        and end of each of the n segments, the end of one = the start s of the
        next) of s (m), curvature (1/m) and signed superelevation (m)."""
        self.name = str(name)
        self.description = str(description)
        self.rail_distance = finite_float(rail_distance, "rail_distance")
        if self.rail_distance <= 0.0:
            raise TrackError(f"rail_distance must be positive, got {self.rail_distance} m")
        s = np.asarray(knots_s, dtype=float)
        k = np.asarray(knots_curvature, dtype=float)
        e = np.asarray(knots_superelevation, dtype=float)
        if s.ndim != 1 or s.size < 2 or s.size % 2 or k.shape != s.shape or e.shape != s.shape:
            raise TrackError("track knots must be 1-D arrays of equal, even length >= 2")
        if not (np.all(np.isfinite(s)) and np.all(np.isfinite(k)) and np.all(np.isfinite(e))):
            raise TrackError("track knots must be finite")
        if np.any(np.abs(e) >= self.rail_distance):
            raise TrackError("superelevation must be smaller than the rail distance")
        if np.any(np.abs(k) > MAX_CURVATURE):
            raise TrackError(f"curvature above {MAX_CURVATURE:g} 1/m (radius below "
                             f"{1 / MAX_CURVATURE:g} m)")
        s0, s1 = s[0::2], s[1::2]
        if abs(s0[0]) > 0.0 or np.any(s1 <= s0) or np.any(np.abs(s0[1:] - s1[:-1]) > 1e-9):
            raise TrackError("track segments must start at s = 0, have positive lengths "
                             "and follow each other")
        self._sections = None if sections is None else tuple(sections)
        self._stations = stations
        self._s0 = s0
        self._len = s1 - s0
        self._k0 = k[0::2]
        self._k1 = k[1::2]
        self._kr = (self._k1 - self._k0) / self._len
        self._e0 = e[0::2]
        self._e1 = e[1::2]
        self._er = (self._e1 - self._e0) / self._len
        self.length = float(s1[-1])
        dpsi = self._k0 * self._len + 0.5 * self._kr * self._len ** 2
        self._psi0 = np.concatenate(([0.0], np.cumsum(dpsi)[:-1]))
        self._psi_end = float(self._psi0[-1] + dpsi[-1])
        self._s0_list, self._len_list = self._s0.tolist(), self._len.tolist()
        self._k0_list, self._kr_list = self._k0.tolist(), self._kr.tolist()
        self._e0_list, self._er_list = self._e0.tolist(), self._er.tolist()
        self._psi0_list = self._psi0.tolist()
        self._build_position_knots()

    # ---------------------------------------------------------------- builders
    @classmethod
    def from_sections(cls, sections: Iterable, *, rail_distance: float = DEFAULT_RAIL_DISTANCE,
                      direction: str = "left", name: str = "", description: str = "") -> "Track":
        """Track from a list of ``TrackSection`` or dicts (see module docstring)."""
        rail_distance = finite_float(rail_distance, "rail_distance")
        if rail_distance <= 0.0:
            raise TrackError(f"rail_distance must be positive, got {rail_distance} m")
        default_direction = check_direction(direction, "direction")
        if isinstance(sections, (str, bytes, Mapping)):
            raise TrackError("sections must be a list of sections")
        secs = [normalise_section(sec, i, default_direction, rail_distance)
                for i, sec in enumerate(list(sections))]
        if not secs:
            raise TrackError("a track needs at least one section")
        starts, ends = [], []
        prev_end = (0.0, 0.0)
        for i, sec in enumerate(secs):
            if sec.type != "transition":
                st = section_state((sec.radius, sec.cant, sec.direction))
                starts.append(st)
                ends.append(st)
                prev_end = st
                continue
            start = prev_end
            nxt = secs[i + 1] if i + 1 < len(secs) else None
            if sec.radius is not None:
                end = section_state((sec.radius, sec.cant, sec.direction))
                if nxt is not None and nxt.type != "transition":
                    nstart = section_state((nxt.radius, nxt.cant, nxt.direction))
                    if (abs(nstart[0] - end[0]) > 1e-12 or abs(nstart[1] - end[1]) > 1e-9):
                        raise TrackError(
                            f"section {i} (transition): its explicit end (radius "
                            f"{sec.radius} m, cant {sec.cant} m, {sec.direction}) does not "
                            f"match the start of section {i + 1} ({nxt.type})")
            elif nxt is None:
                raise TrackError(f"section {i} (transition): a transition that ends the track "
                                 "needs its end radius (inf = straight), cant and direction")
            elif nxt.type == "transition":
                raise TrackError(f"section {i} (transition): followed by another transition, "
                                 "so it needs an explicit end radius, cant and direction")
            else:
                end = section_state((nxt.radius, nxt.cant, nxt.direction))
            starts.append(start)
            ends.append(end)
            prev_end = end
        ks, kk, ke = [], [], []
        s = 0.0
        for sec, st, en in zip(secs, starts, ends):
            ks += [s, s + sec.length]
            kk += [st[0], en[0]]
            ke += [st[1], en[1]]
            s += sec.length
        return cls(ks, kk, ke, rail_distance=rail_distance, name=name,
                   description=description, sections=secs)

    @classmethod
    def from_stations(cls, stations: Sequence[float], radii: Sequence[float],
                      cants: Sequence[float] | None = None, *, direction="left",
                      rail_distance: float = DEFAULT_RAIL_DISTANCE, name: str = "",
                      description: str = "") -> "Track":
        """Stations form (Kang 2012): radius (m, > 0, inf = straight) and outer-rail
        cant (m, >= 0) at stations s (m, first 0, increasing); curvature and
        superelevation are linear in s between stations. ``direction`` is one
        string or one per station."""
        rail_distance = finite_float(rail_distance, "rail_distance")
        if rail_distance <= 0.0:
            raise TrackError(f"rail_distance must be positive, got {rail_distance} m")
        st = [finite_float(x, f"station {i}: s") for i, x in enumerate(stations)]
        n = len(st)
        if n < 2:
            raise TrackError("the stations form needs at least two stations")
        rad = [float_or_inf(x, f"station {i}: radius") for i, x in enumerate(radii)]
        if len(rad) != n:
            raise TrackError(f"{n} stations but {len(rad)} radii")
        can = [0.0] * n if cants is None else [
            finite_float(x, f"station {i}: cant") for i, x in enumerate(cants)]
        if len(can) != n:
            raise TrackError(f"{n} stations but {len(can)} cant values")
        if isinstance(direction, str):
            dirs = [check_direction(direction, "direction")] * n
        else:
            dirs = [check_direction(d, f"station {i}: direction") for i, d in enumerate(direction)]
            if len(dirs) != n:
                raise TrackError(f"{n} stations but {len(dirs)} directions")
        if st[0] != 0.0:
            raise TrackError(f"the first station must be at s = 0 m, got {st[0]} m")
        for i in range(1, n):
            if st[i] <= st[i - 1]:
                raise TrackError(f"stations must increase: station {i} at {st[i]} m "
                                 f"follows {st[i - 1]} m")
        for i in range(n):
            if rad[i] <= 0.0:
                raise TrackError(f"station {i}: radius must be positive (inf = straight), "
                                 f"got {rad[i]} m")
            if can[i] < 0.0:
                raise TrackError(f"station {i}: cant must be >= 0, got {can[i]} m")
            if can[i] >= rail_distance:
                raise TrackError(f"station {i}: cant {can[i]} m is not below the rail "
                                 f"distance {rail_distance} m")
        states = [section_state((rad[i], can[i], dirs[i])) for i in range(n)]
        ks, kk, ke = [], [], []
        for i in range(n - 1):
            ks += [st[i], st[i + 1]]
            kk += [states[i][0], states[i + 1][0]]
            ke += [states[i][1], states[i + 1][1]]
        stations_rec = {"s": tuple(st), "radius": tuple(rad), "cant": tuple(can),
                        "direction": tuple(dirs)}
        return cls(ks, kk, ke, rail_distance=rail_distance, name=name,
                   description=description, stations=stations_rec)

    @classmethod
    def from_toml(cls, path) -> "Track":
        """Read a TOML track file (format in the module docstring)."""
        from ..data_files import DataFileError, read_text
        path = os.fspath(path)
        try:
            # a regular UTF-8 file within the size and line caps (solver/data_files.py)
            data = tomllib.loads(read_text(path))
        except DataFileError as exc:
            reason = "no such track file" if exc.reason == "no such file" else exc.reason
            raise TrackError(f"{path}: {reason}") from None
        except tomllib.TOMLDecodeError as exc:
            raise TrackError(f"{path}: not valid TOML: {exc}") from None
        return cls.from_mapping(data, where=path)

    @classmethod
    def from_mapping(cls, data: Mapping, *, where: str = "track") -> "Track":
        """Track from a parsed TOML document (dict)."""
        allowed = {"name", "description", "rail_distance_m", "direction", "section", "stations"}
        unknown = set(data) - allowed
        if unknown & {"wheelset", "duration", "output_interval"}:
            raise TrackError(f"{where}: this is a scenario file ({', '.join(sorted(unknown))}), "
                             "not a track: run it with `wheelset-fmu simulate --scenario FILE`, "
                             "or name a track file ([stations] or [[section]] tables)")
        if unknown:
            raise TrackError(f"{where}: unknown top-level key(s) {sorted(unknown)} "
                             f"(allowed: {sorted(allowed)})")
        rail_distance = data.get("rail_distance_m", DEFAULT_RAIL_DISTANCE)
        direction = data.get("direction", "left")
        name = str(data.get("name", ""))
        description = str(data.get("description", ""))
        has_sec, has_st = "section" in data, "stations" in data
        if has_sec == has_st:
            raise TrackError(f"{where}: give either [[section]] tables or one [stations] table")
        try:
            if has_sec:
                secs = data["section"]
                if not isinstance(secs, list) or not all(isinstance(x, dict) for x in secs):
                    raise TrackError("'section' must be an array of tables ([[section]])")
                for i, sec in enumerate(secs):
                    bad = set(sec) - {"type", "length_m", "radius_m", "cant_mm", "cant_m",
                                      "direction"}
                    if bad:
                        raise TrackError(f"section {i}: unknown key(s) {sorted(bad)} (file keys "
                                         "carry units: length_m, radius_m, cant_mm or cant_m)")
                return cls.from_sections(secs, rail_distance=rail_distance, direction=direction,
                                         name=name, description=description)
            st = data["stations"]
            if not isinstance(st, dict):
                raise TrackError("'stations' must be a table ([stations])")
            bad = set(st) - {"s_m", "radius_m", "cant_mm", "cant_m", "direction"}
            if bad:
                raise TrackError(f"[stations]: unknown key(s) {sorted(bad)}")
            for key in ("s_m", "radius_m"):
                if key not in st:
                    raise TrackError(f"[stations]: missing '{key}'")
            if "cant_mm" in st and "cant_m" in st:
                raise TrackError("[stations]: give cant_mm or cant_m, not both")
            cants = None
            if "cant_mm" in st:
                cants = [1e-3 * finite_float(x, "[stations] cant_mm") for x in st["cant_mm"]]
            elif "cant_m" in st:
                cants = st["cant_m"]
            return cls.from_stations(st["s_m"], st["radius_m"], cants,
                                     direction=st.get("direction", direction),
                                     rail_distance=rail_distance, name=name,
                                     description=description)
        except TrackError as exc:
            raise TrackError(f"{where}: {exc}") from None

    @classmethod
    def from_csv(cls, path, *, rail_distance: float | None = None,
                 direction: str = "left") -> "Track":
        """Read a CSV track file: sections or stations (module docstring)."""
        path = os.fspath(path)
        header, rows, meta = read_csv(path)
        name = meta.get("name", "")
        if rail_distance is None:
            rail_distance = meta.get("rail_distance_m", DEFAULT_RAIL_DISTANCE)
        try:
            if "type" in header:
                allowed = {"type", "length_m", "radius_m", "cant_mm", "cant_m", "direction"}
                check_columns(header, allowed, required=("type", "length_m"))
                secs = []
                for lineno, row in rows:
                    d = {}
                    for key, val in zip(header, row):
                        if val.strip() == "":
                            continue
                        d[key] = val.strip()
                    if "length_m" in d:
                        d["length_m"] = finite_float(d["length_m"], f"line {lineno}: length_m")
                    if "cant_mm" in d:
                        d["cant_mm"] = finite_float(d["cant_mm"], f"line {lineno}: cant_mm")
                    if "cant_m" in d:
                        d["cant_m"] = finite_float(d["cant_m"], f"line {lineno}: cant_m")
                    if "radius_m" in d:
                        d["radius_m"] = float_or_inf(d["radius_m"], f"line {lineno}: radius_m")
                    secs.append(section_from_mapping(d, f"line {lineno}"))
                return cls.from_sections(secs, rail_distance=rail_distance, direction=direction,
                                         name=name)
            if "s_m" in header:
                allowed = {"s_m", "radius_m", "cant_mm", "cant_m", "direction"}
                check_columns(header, allowed, required=("s_m", "radius_m"))
                if "cant_mm" in header and "cant_m" in header:
                    raise TrackError("give a cant_mm or a cant_m column, not both")
                col = {k: i for i, k in enumerate(header)}
                s, r, c, d = [], [], [], []
                for lineno, row in rows:
                    s.append(finite_float(row[col["s_m"]], f"line {lineno}: s_m"))
                    r.append(float_or_inf(row[col["radius_m"]], f"line {lineno}: radius_m"))
                    if "cant_mm" in col:
                        c.append(1e-3 * finite_float(row[col["cant_mm"]], f"line {lineno}: cant_mm"))
                    elif "cant_m" in col:
                        c.append(finite_float(row[col["cant_m"]], f"line {lineno}: cant_m"))
                    else:
                        c.append(0.0)
                    d.append(row[col["direction"]].strip() if "direction" in col
                             and row[col["direction"]].strip() else direction)
                return cls.from_stations(s, r, c, direction=d, rail_distance=rail_distance,
                                         name=name)
            raise TrackError("the header must contain 'type' (sections) or 's_m' (stations)")
        except TrackError as exc:
            raise TrackError(f"{path}: {exc}") from None

    # ---------------------------------------------------------------- writers
    def to_toml(self, path) -> None:
        """Write the track as a TOML file that ``load_track`` reads back."""
        lines = []
        if self.name:
            lines.append(f"name = {toml_string(self.name)}")
        if self.description:
            lines.append(f"description = {toml_string(self.description)}")
        lines.append(f"rail_distance_m = {toml_number(self.rail_distance)}")
        if self._stations is not None:
            st = self._stations
            lines += ["", "[stations]",
                      "s_m = [" + ", ".join(toml_number(x) for x in st["s"]) + "]",
                      "radius_m = [" + ", ".join(toml_number(x) for x in st["radius"]) + "]",
                      "cant_mm = [" + ", ".join(toml_number(1e3 * x) for x in st["cant"]) + "]",
                      "direction = [" + ", ".join(toml_string(x) for x in st["direction"]) + "]"]
        elif self._sections is not None:
            for sec in self._sections:
                lines += ["", "[[section]]", f"type = {toml_string(sec.type)}",
                          f"length_m = {toml_number(sec.length)}"]
                if sec.type == "curve" or (sec.type == "transition" and sec.radius is not None):
                    lines += [f"radius_m = {toml_number(sec.radius)}",
                              f"cant_mm = {toml_number(1e3 * sec.cant)}",
                              f"direction = {toml_string(sec.direction)}"]
        else:
            raise TrackError("this track was built from knots; it has no section or station form")
        with open(os.fspath(path), "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")

    def to_csv(self, path) -> None:
        """Write the track as a CSV file that ``load_track`` reads back."""
        out = [f"# name = {self.name}", f"# rail_distance_m = {self.rail_distance!r}"]
        if self._stations is not None:
            st = self._stations
            out.append("s_m,radius_m,cant_mm,direction")
            for s, r, c, d in zip(st["s"], st["radius"], st["cant"], st["direction"]):
                out.append(f"{s!r},{csv_number(r)},{1e3 * c!r},{d}")
        elif self._sections is not None:
            out.append("type,length_m,radius_m,cant_mm,direction")
            for sec in self._sections:
                explicit = sec.type == "curve" or (sec.type == "transition"
                                                   and sec.radius is not None)
                if explicit:
                    out.append(f"{sec.type},{sec.length!r},{csv_number(sec.radius)},"
                               f"{1e3 * sec.cant!r},{sec.direction}")
                else:
                    out.append(f"{sec.type},{sec.length!r},,,")
        else:
            raise TrackError("this track was built from knots; it has no section or station form")
        with open(os.fspath(path), "w", encoding="utf-8", newline="") as fh:
            fh.write("\n".join(out) + "\n")

    # ---------------------------------------------------------------- queries
    @property
    def sections(self):
        """The normalised sections (tuple of TrackSection, SI), or None."""
        return self._sections

    @property
    def stations(self):
        """The stations (dict of tuples s, radius, cant, direction), or None."""
        return None if self._stations is None else dict(self._stations)

    @property
    def knots(self):
        """(s, curvature, superelevation) at the start and end of every segment."""
        n = self._s0.size
        s = np.empty(2 * n)
        s[0::2], s[1::2] = self._s0, self._s0 + self._len
        k = np.empty(2 * n)
        k[0::2], k[1::2] = self._k0, self._k1
        e = np.empty(2 * n)
        e[0::2], e[1::2] = self._e0, self._e1
        return s, k, e

    def __repr__(self) -> str:
        form = "stations" if self._stations is not None else "sections"
        return (f"Track(name={self.name!r}, length={self.length:g} m, {self._s0.size} "
                f"segments from {form}, rail_distance={self.rail_distance:g} m)")

    def _locate(self, s: np.ndarray):
        idx = np.searchsorted(self._s0, s, side="right") - 1
        idx = np.clip(idx, 0, self._s0.size - 1)
        ds = s - self._s0[idx]
        ds_in = np.clip(ds, 0.0, self._len[idx])
        inside = (s >= 0.0) & (s < self.length)
        return idx, ds, ds_in, inside

    def curvature(self, s):
        """Curvature kappa = 1/R (1/m) at s, positive for a left curve."""
        arr = as_distance(s)
        idx, _, ds_in, _ = self._locate(arr)
        return scalar_or_array(self._k0[idx] + self._kr[idx] * ds_in, arr.ndim == 0)

    def curvature_rate(self, s):
        """d kappa / ds (1/m^2); 0 outside [0, length)."""
        arr = as_distance(s)
        idx, _, _, inside = self._locate(arr)
        return scalar_or_array(np.where(inside, self._kr[idx], 0.0), arr.ndim == 0)

    def superelevation(self, s):
        """Signed superelevation z_left - z_right (m); < 0 in a canted left curve."""
        arr = as_distance(s)
        idx, _, ds_in, _ = self._locate(arr)
        return scalar_or_array(self._e0[idx] + self._er[idx] * ds_in, arr.ndim == 0)

    def cant_angle(self, s):
        """Track roll angle (rad) about +x, positive lifts the LEFT rail:
        asin(superelevation / rail_distance)."""
        arr = as_distance(s)
        idx, _, ds_in, _ = self._locate(arr)
        e = self._e0[idx] + self._er[idx] * ds_in
        return scalar_or_array(np.arcsin(e / self.rail_distance), arr.ndim == 0)

    def cant_rate(self, s):
        """d cant_angle / ds (rad/m); 0 outside [0, length)."""
        arr = as_distance(s)
        idx, _, ds_in, inside = self._locate(arr)
        e = self._e0[idx] + self._er[idx] * ds_in
        rate = self._er[idx] / np.sqrt(self.rail_distance ** 2 - e ** 2)
        return scalar_or_array(np.where(inside, rate, 0.0), arr.ndim == 0)

    def heading(self, s):
        """Heading (rad) of the centreline, the integral of the curvature; 0 at s = 0."""
        arr = as_distance(s)
        return scalar_or_array(self._heading(arr), arr.ndim == 0)

    def _heading(self, arr):
        idx, ds, ds_in, _ = self._locate(arr)
        k_in = self._k0[idx] + self._kr[idx] * ds_in
        return (self._psi0[idx] + self._k0[idx] * ds_in + 0.5 * self._kr[idx] * ds_in ** 2
                + k_in * (ds - ds_in))

    def evaluate(self, s) -> TrackState:
        """All the geometry at s in one call (one segment search)."""
        if isinstance(s, (float, int)) and not isinstance(s, bool):
            return self._evaluate_scalar(float(s))
        arr = as_distance(s)
        idx, ds, ds_in, inside = self._locate(arr)
        k_in = self._k0[idx] + self._kr[idx] * ds_in
        e = self._e0[idx] + self._er[idx] * ds_in
        psi = (self._psi0[idx] + self._k0[idx] * ds_in + 0.5 * self._kr[idx] * ds_in ** 2
               + k_in * (ds - ds_in))
        kr = np.where(inside, self._kr[idx], 0.0)
        cr = np.where(inside, self._er[idx] / np.sqrt(self.rail_distance ** 2 - e ** 2), 0.0)
        sc = arr.ndim == 0
        return TrackState(scalar_or_array(k_in, sc), scalar_or_array(kr, sc),
                          scalar_or_array(np.arcsin(e / self.rail_distance), sc), scalar_or_array(cr, sc),
                          scalar_or_array(psi, sc))

    def _evaluate_scalar(self, s: float) -> TrackState:
        if not math.isfinite(s):
            raise TrackError("the distance s must be finite")
        i = min(max(bisect.bisect_right(self._s0_list, s) - 1, 0), len(self._s0_list) - 1)
        ds = s - self._s0_list[i]
        ds_in = min(max(ds, 0.0), self._len_list[i])
        k0, kr, e0, er = self._k0_list[i], self._kr_list[i], self._e0_list[i], self._er_list[i]
        k_in = k0 + kr * ds_in
        e = e0 + er * ds_in
        psi = self._psi0_list[i] + k0 * ds_in + 0.5 * kr * ds_in * ds_in + k_in * (ds - ds_in)
        inside = 0.0 <= s < self.length
        d = self.rail_distance
        return TrackState(k_in, kr if inside else 0.0, math.asin(e / d),
                          er / math.sqrt(d * d - e * e) if inside else 0.0, psi)

    def segment_table(self) -> np.ndarray:
        """The segments as a (6, n) array for `track_state_kernel`: rows TT_S0
        (start s), TT_LENGTH, TT_K0 (curvature at the start), TT_KR (its rate),
        TT_E0 (superelevation at the start), TT_ER (its rate)."""
        return np.ascontiguousarray(np.stack([self._s0, self._len, self._k0, self._kr,
                                              self._e0, self._er]))

    # position -------------------------------------------------------------
    def _build_position_knots(self):
        sub_s, sub_seg = [], []
        for i in range(self._s0.size):
            L = self._len[i]
            kmax = max(abs(self._k0[i]), abs(self._k1[i]))
            n = max(1, int(math.ceil(L / _SUB_LENGTH)), int(math.ceil(kmax * L / _SUB_ANGLE)))
            for j in range(n):
                sub_s.append(self._s0[i] + L * j / n)
                sub_seg.append(i)
        sub_s = np.array(sub_s)
        sub_seg = np.array(sub_seg, dtype=int)
        sub_end = np.append(sub_s[1:], self.length)
        X = np.zeros(sub_s.size + 1)
        Y = np.zeros(sub_s.size + 1)
        for j in range(sub_s.size):
            i = sub_seg[j]
            a, b = sub_s[j], sub_end[j]

            def psi(x, i=i):
                t = x - self._s0[i]
                return self._psi0[i] + self._k0[i] * t + 0.5 * self._kr[i] * t * t

            dx = integrate.quad(lambda x: math.cos(psi(x)), a, b, epsabs=1e-13, epsrel=1e-13)[0]
            dy = integrate.quad(lambda x: math.sin(psi(x)), a, b, epsabs=1e-13, epsrel=1e-13)[0]
            X[j + 1] = X[j] + dx
            Y[j + 1] = Y[j] + dy
        self._sub_s = sub_s
        self._sub_seg = sub_seg
        self._sub_X = X
        self._sub_Y = Y

    def position(self, s):
        """Plan position (X, Y) in m of the centreline at s; (0, 0) at s = 0,
        initial heading along +X, a left curve turns towards +Y."""
        arr = as_distance(s)
        flat = arr.reshape(-1)
        X = np.empty_like(flat)
        Y = np.empty_like(flat)
        inside = (flat >= 0.0) & (flat <= self.length)
        if np.any(inside):
            q = flat[inside]
            j = np.clip(np.searchsorted(self._sub_s, q, side="right") - 1, 0, self._sub_s.size - 1)
            a = self._sub_s[j]
            i = self._sub_seg[j]
            h = q - a
            x = a[:, None] + h[:, None] * _GL_X[None, :]
            t = x - self._s0[i][:, None]
            psi = (self._psi0[i][:, None] + self._k0[i][:, None] * t
                   + 0.5 * self._kr[i][:, None] * t * t)
            X[inside] = self._sub_X[j] + h * (np.cos(psi) @ _GL_W)
            Y[inside] = self._sub_Y[j] + h * (np.sin(psi) @ _GL_W)
        for mask, s_ref, x_ref, y_ref, psi_ref, k_ref in (
                (flat < 0.0, 0.0, 0.0, 0.0, 0.0, self._k0[0]),
                (flat > self.length, self.length, self._sub_X[-1], self._sub_Y[-1],
                 self._psi_end, self._k1[-1])):
            if np.any(mask):
                d = flat[mask] - s_ref
                half = 0.5 * k_ref * d
                chord = d * np.sinc(half / np.pi)  # exact arc chord, stable for k -> 0
                X[mask] = x_ref + chord * np.cos(psi_ref + half)
                Y[mask] = y_ref + chord * np.sin(psi_ref + half)
        if arr.ndim == 0:
            return float(X[0]), float(Y[0])
        return X.reshape(arr.shape), Y.reshape(arr.shape)

    def mirrored(self) -> "Track":
        """The same track with left and right exchanged (curvature and cant negated)."""
        s, k, e = self.knots
        secs = None
        if self._sections is not None:
            secs = [TrackSection(x.type, x.length, x.radius, x.cant,
                                 None if x.direction is None else
                                 ("right" if x.direction == "left" else "left"))
                    for x in self._sections]
        st = None
        if self._stations is not None:
            st = dict(self._stations)
            st["direction"] = tuple("right" if d == "left" else "left" for d in st["direction"])
        return Track(s, -k, -e, rail_distance=self.rail_distance, name=self.name,
                     description=self.description, sections=secs, stations=st)


def load_track(path, **kwargs) -> Track:
    """Read a track file by its extension: ``.toml`` or ``.csv``."""
    p = os.fspath(path)
    ext = os.path.splitext(p)[1].lower()
    if ext == ".toml":
        if kwargs:
            raise TrackError("a TOML track file carries its own options")
        return Track.from_toml(p)
    if ext == ".csv":
        return Track.from_csv(p, **kwargs)
    raise TrackError(f"{p}: unknown track file type {ext!r} (use .toml or .csv)")
