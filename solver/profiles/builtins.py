"""The built-in profiles: analytic curves of published dimensions, the Manchester
benchmark's files, the worn LMA and the cone treads of the linear studies."""

from __future__ import annotations

import functools
import math
import os

import numpy as np

from ..errors import ProfileError
from .definitions import (
    LMA_WORN_HOLLOW_CENTRE_MM, LMA_WORN_HOLLOW_DEPTH_MM, LMA_WORN_HOLLOW_WIDTH_MM, chn60_curve,
    lma_curve, lma_worn_curve, s1002_curve, uic60_curve,
)
from .files import load_simpack_profile
from .profile import DEFAULT_STEP, Profile, RAIL, WHEEL, uniform_grid, profile_from_points


# ---------------------------------------------------------------------------
# Built-in profiles
# ---------------------------------------------------------------------------

_S1002_SOURCE = (
    "EN 13715 S1002 wheel tread, sections A-H (polynomials and arcs of the standard; coefficients "
    "cross-checked against a second published listing); s from -70 mm (flange back) to +60 mm; "
    "published sections meet to 1.2e-4 mm (at s = -35 mm)")
_UIC60_SOURCE = (
    "EN 13674-1 60E1 (UIC60) rail head: crown R300, R80, gauge corner R13, 1:20 flank; built from the radii, "
    "the R300/R80 junction half-width 20.456/2 mm and the 72 mm head width; reproduces the published centres "
    "R80 (7.5005, 80.1279) and R13 (23.0160, 14.9491) mm to 3e-4 mm; u from -36.5 to +36.5 mm "
    "(flank down to 24.3 mm below the crown); not inclined")
_CHN60_SOURCE = (
    "TB/T 2344 / GB 2585 60 kg/m rail (CHN60) head from published dimensions: arcs R300/R80/R13, head width "
    "73 mm. ASSUMED (full drawing not available): R300/R80 junction at half-width 10.228 mm as in 60E1, 1:20 "
    "flank, 73 mm at the top of the flank. Estimated deviation: exact on the crown |u| < 8 mm; < 0.05 mm for "
    "|u| < 15 mm and < 0.1 mm for |u| < 20 mm if the true junction is within 1 mm of the assumed; up to "
    "~0.3 mm at the gauge corner; u from -37 to +37 mm; not inclined")
_LMA_SOURCE = (
    "TB/T 449 LMA wheel (CRH1/CRH2/CRH380A/CR400AF) from the published geometry: the tangent chain of the "
    "public coordinate table 'LMA of CRH2/CRH380A/CR400AF' (github Legend19960404/Wheel-Rail-Interaction-"
    "Dataset, standard_profiles/LMA.txt, 1358 points; its points lie on the chain within 9e-7 mm): flange "
    "back R25 vertical at s = -70 mm, tip R12 centred at (-54, 16) (flange height 28.00 mm), R15, straight "
    "70 deg flange face, root R14 through the flange thickness point (32.90 mm at 10 mm above the taping "
    "line), R90, tread R450 through the taping-line origin, 1:40 to s = 30 mm, 1:15 to 60 mm, 45 deg chamfer "
    "to +65 mm (corners at 30 and 60 mm, as published). Chosen over the second public table (JBG_SDITT "
    "LMA_UnitMM.txt: same tread, but a spline through the flange with no straight face, flange height "
    "28.02 mm) because it is the standard's arc-and-line construction itself")


def _lma_worn_source(depth: float, width: float, centre: float) -> str:
    return (f"synthetic: LMA (published geometry, see LMA) minus a raised-cosine hollow of depth {depth:g} mm, width {width:g} mm, "
            f"centred at s = {centre:g} mm (hollow wear in the spirit of Ren & Jin 2010, Fig. 6; parameters "
            f"solver.profile_definitions.LMA_WORN_HOLLOW_*)")


# name -> (kind, curve factory, source, flange back in m)
_BUILTINS = {
    "S1002": (WHEEL, s1002_curve, _S1002_SOURCE, 0.070),
    "LMA": (WHEEL, lma_curve, _LMA_SOURCE, 0.070),
    "LMA-worn": (WHEEL, lma_worn_curve, None, 0.070),
    "UIC60": (RAIL, uic60_curve, _UIC60_SOURCE, None),
    "CHN60": (RAIL, chn60_curve, _CHN60_SOURCE, None),
}
BUILTIN_ALIASES = {"60E1": "UIC60"}

# Built-ins read from files shipped inside the solver package (so that they
# travel with it into the FMU and its cache copy), with their licence notice:
# name -> (kind, file under solver/profiles/data/, loader options, source)
PROFILE_FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
MANCHESTER_RAIL_CANT = math.atan(1.0 / 40.0)
_FILE_BUILTINS = {
    "MBench_S1002_v3": (WHEEL, os.path.join("manchester", "MBench_S1002_v3.prw"),
                        {"flange_back_to_taping_line": 0.070},
                        "the Manchester contact benchmark's S1002 wheel (Shackleton & Iwnicki 2008), "
                        "SIMPACK file MBench_S1002_v3.prw as distributed with CONTACT (github eve70a/"
                        "CONTACT, Apache-2.0; solver/profiles/data/manchester/NOTICE.md); within 1 um of EN 13715 for "
                        "s > -60 mm; s from -69.6 mm (flange back at -70 mm) to +60 mm"),
    "MBench_UIC60_v3": (RAIL, os.path.join("manchester", "MBench_UIC60_v3.prr"),
                        {"cant": MANCHESTER_RAIL_CANT},
                        "the Manchester contact benchmark's UIC60 rail (Shackleton & Iwnicki 2008), "
                        "SIMPACK file MBench_UIC60_v3.prr as distributed with CONTACT (github eve70a/"
                        "CONTACT, Apache-2.0; solver/profiles/data/manchester/NOTICE.md); drawn canted 1:40 in the "
                        "file, the cant taken out (rail in its own frame, origin at the crown); differs "
                        "from the analytic UIC60 by 22 um rms, 40 um at most for |u| < 30 mm"),
}


def _canonical_name(name: str) -> str:
    if not isinstance(name, str):
        raise ProfileError(f"profile name must be a string, got {name!r}")
    wanted = name.strip().upper()
    for alias, target in BUILTIN_ALIASES.items():
        if wanted == alias.upper():
            return target
    for key in list(_BUILTINS) + list(_FILE_BUILTINS):
        if wanted == key.upper():
            return key
    known = ", ".join(list(_BUILTINS) + list(_FILE_BUILTINS) + list(BUILTIN_ALIASES))
    raise ProfileError(f"unknown built-in profile {name!r}; known: {known}")


def is_builtin_profile(name) -> bool:
    """True if `name` names a built-in profile (case-insensitive, aliases too,
    and the cone family "cone:<conicity>" with a valid conicity)."""
    try:
        if isinstance(name, str) and name.strip().lower().startswith(CONE_PREFIX):
            _cone_conicity(name)
        else:
            _canonical_name(name)
    except ValueError:
        return False
    return True


def _source_of(name: str) -> str:
    if name in _FILE_BUILTINS:
        return _FILE_BUILTINS[name][3]
    source = _BUILTINS[name][2]
    if source is None:
        source = _lma_worn_source(LMA_WORN_HOLLOW_DEPTH_MM, LMA_WORN_HOLLOW_WIDTH_MM,
                                  LMA_WORN_HOLLOW_CENTRE_MM)
    return source


def _profile_from_curve(curve, name: str, kind: str, source: str, step: float,
                        flange_back: float | None) -> Profile:
    step = float(step)
    lo, hi = curve.lateral_min * 1e-3, curve.lateral_max * 1e-3
    if not (np.isfinite(step) and 0.0 < step <= (hi - lo) / 10.0):
        raise ProfileError(f"step must be a positive length in metres below {(hi - lo) / 10:.4g}, got {step!r}")
    grid = uniform_grid(lo, hi, step)
    grid[-1] = min(grid[-1], hi)
    # Published corners (slope jumps, LMA): the samples include them and the
    # cubic spline breaks there; elsewhere the curves are tangent-continuous.
    corners = [c * 1e-3 for c in curve.info.get("corners_mm", ())]
    samples = np.union1d(grid, corners)
    samples = samples[np.concatenate(([True], np.diff(samples) > 1e-12))]
    height = curve(np.clip(samples * 1e3, curve.lateral_min, curve.lateral_max)) * 1e-3
    return profile_from_points(samples, height, name=name, kind=kind, source=source, step=step,
                               method="cubic", flange_back_to_taping_line=flange_back,
                               corners=corners)


@functools.lru_cache(maxsize=64)
def _builtin_cached(name: str, step: float) -> Profile:
    if name in _FILE_BUILTINS:
        kind, relative, options, source = _FILE_BUILTINS[name]
        return load_simpack_profile(os.path.join(PROFILE_FOLDER, relative), kind, step=step, name=name,
                                    source=source, **options)
    kind, factory, _, flange_back = _BUILTINS[name]
    return _profile_from_curve(factory(), name, kind, _source_of(name), step, flange_back)


def builtin_profile(name: str, step: float = DEFAULT_STEP) -> Profile:
    """A built-in profile generated from its published definition, on a grid of `step` (m).

    Names: S1002, LMA, LMA-worn (wheels), UIC60 (alias 60E1), CHN60 (rails),
    and the Manchester benchmark's files MBench_S1002_v3 (wheel) and
    MBench_UIC60_v3 (rail), read from solver/profiles/data/manchester/;
    case-insensitive; and the family of straight cone treads "cone:<conicity>"
    (e.g. "cone:0.15", `cone_profile`; not in `list_builtin_profiles`). Results are cached per (name, step); call
    `builtin_profile.cache_clear()` after changing the LMA_WORN_HOLLOW_*
    constants, or use `worn_lma_profile` with explicit parameters.
    """
    if isinstance(name, str) and name.strip().lower().startswith(CONE_PREFIX):
        return cone_profile(_cone_conicity(name), step)
    return _builtin_cached(_canonical_name(name), float(step))


builtin_profile.cache_clear = _builtin_cached.cache_clear      # type: ignore[attr-defined]

# The built-in family of straight cone treads for the linear (textbook) studies:
# "cone:<conicity>", e.g. "cone:0.15".
CONE_PREFIX = "cone:"
CONE_HALF_WIDTH = 0.060     # m: the tread spans s = -60 .. +60 mm (no flange)
CONE_MAX_CONICITY = 0.5


def _cone_conicity(name: str) -> float:
    text = name.strip()[len(CONE_PREFIX):]
    try:
        conicity = float(text)
    except ValueError:
        raise ProfileError(f"cone profile {name!r}: the conicity after 'cone:' must be a number, "
                         f"e.g. cone:0.15") from None
    if not (math.isfinite(conicity) and 0.0 < conicity <= CONE_MAX_CONICITY):
        raise ProfileError(f"cone profile {name!r}: conicity must be in (0, {CONE_MAX_CONICITY}], "
                         f"got {conicity!r}")
    return conicity


@functools.lru_cache(maxsize=16)
def _cone_cached(conicity: float, step: float) -> Profile:
    lo, hi = -CONE_HALF_WIDTH, CONE_HALF_WIDTH
    if not (math.isfinite(step) and 0.0 < step <= (hi - lo) / 10.0):
        raise ProfileError(f"step must be a positive length in metres below {(hi - lo) / 10:.4g}, got {step!r}")
    grid = uniform_grid(lo, hi, step)
    grid[-1] = min(grid[-1], hi)
    source = (f"synthetic straight cone tread F(s) = -{conicity:g} s (radius r0 + F) for "
              f"s = -60 .. +60 mm, no flange: every contact point of a lateral displacement "
              f"within +-20 mm (and more) lies on the cone, so the equivalent conicity is "
              f"{conicity:g} exactly (Klingel's and Wickens' textbook wheelset)")
    return profile_from_points(grid, -conicity * grid, name=f"cone:{conicity:g}", kind=WHEEL,
                               source=source, step=step, method="cubic",
                               flange_back_to_taping_line=0.070)


def cone_profile(conicity: float, step: float = DEFAULT_STEP) -> Profile:
    """A straight cone wheel tread of the given conicity (the `cone:<conicity>`
    built-in): F(s) = -conicity * s over s = -60 .. +60 mm, no flange."""
    if not (isinstance(conicity, (int, float)) and math.isfinite(conicity)
            and 0.0 < conicity <= CONE_MAX_CONICITY):
        raise ProfileError(f"conicity must be in (0, {CONE_MAX_CONICITY}], got {conicity!r}")
    return _cone_cached(float(conicity), float(step))


def list_builtin_profiles(generated_only: bool = False) -> list[tuple[str, str, str]]:
    """(name, kind, source) of every built-in profile (aliases in BUILTIN_ALIASES);
    `generated_only`: only those generated from their definitions in code (not
    the ones read from the files shipped in profiles/)."""
    rows = [(name, entry[0], _source_of(name)) for name, entry in _BUILTINS.items()]
    if not generated_only:
        rows += [(name, entry[0], entry[3]) for name, entry in _FILE_BUILTINS.items()]
    return rows


def worn_lma_profile(depth_mm: float | None = None, width_mm: float | None = None,
                     centre_mm: float | None = None, step: float = DEFAULT_STEP) -> Profile:
    """LMA with a raised-cosine hollow of the given depth, width and centre (mm; defaults LMA_WORN_HOLLOW_*)."""
    curve = lma_worn_curve(depth_mm, width_mm, centre_mm)
    info = curve.info
    source = _lma_worn_source(info["hollow_depth_mm"], info["hollow_width_mm"], info["hollow_centre_mm"])
    return _profile_from_curve(curve, "LMA-worn", WHEEL, source, step, 0.070)
