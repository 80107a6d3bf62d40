"""The built-in profiles: analytic curves of published dimensions, the Manchester
benchmark's files, the worn LMA and the cone treads of the linear studies."""

from __future__ import annotations

import functools
import math
import os

import numpy as np

from ..errors import ProfileError
from ..registry import Entry, Registry
from .definitions import (
    LMA_WORN_HOLLOW_CENTRE_MM, LMA_WORN_HOLLOW_DEPTH_MM, LMA_WORN_HOLLOW_WIDTH_MM, chn60_curve,
    lma_curve, lma_worn_curve, s1002_curve, uic60_curve,
)
from .files import load_simpack_profile
from .profile import DEFAULT_STEP, Profile, RAIL, WHEEL, profile_from_points, uniform_grid


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
            f"solver.profiles.definitions.LMA_WORN_HOLLOW_*)")


# Built-ins read from files shipped inside the solver package (so that they
# travel with it into the FMU and its cache copy), with their licence notice.
PROFILE_FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
MANCHESTER_RAIL_CANT = math.atan(1.0 / 40.0)
_MANCHESTER_WHEEL_SOURCE = (
    "the Manchester contact benchmark's S1002 wheel (Shackleton & Iwnicki 2008), "
    "SIMPACK file MBench_S1002_v3.prw as distributed with CONTACT (github eve70a/"
    "CONTACT, Apache-2.0; solver/profiles/data/manchester/NOTICE.md); within 1 um of EN 13715 for "
    "s > -60 mm; s from -69.6 mm (flange back at -70 mm) to +60 mm")
_MANCHESTER_RAIL_SOURCE = (
    "the Manchester contact benchmark's UIC60 rail (Shackleton & Iwnicki 2008), "
    "SIMPACK file MBench_UIC60_v3.prr as distributed with CONTACT (github eve70a/"
    "CONTACT, Apache-2.0; solver/profiles/data/manchester/NOTICE.md); drawn canted 1:40 in the "
    "file, the cant taken out (rail in its own frame, origin at the crown); differs "
    "from the analytic UIC60 by 22 um rms, 40 um at most for |u| < 30 mm")


def _from_curve(curve, kind, flange_back, source=None):
    """The builder of a built-in generated from its curve: builder(name, step) -> Profile."""
    def build(name, step):
        return _profile_from_curve(curve(), name, kind, source or _source_of(name), step,
                                   flange_back)
    return build


def _from_file(kind, relative, **options):
    """The builder of a built-in read from a file under PROFILE_FOLDER."""
    def build(name, step):
        return load_simpack_profile(os.path.join(PROFILE_FOLDER, relative), kind, step=step,
                                    name=name, source=PROFILES.get(name).source, **options)
    return build


# the built-in profiles (solver.registry); facts: kind ("wheel" / "rail"),
# aliases (other names of the same profile), generated (True: from its curve in
# code, written out under profiles/ by profiles/write_builtin_profiles.py)
PROFILES = Registry("built-in profile", error=ProfileError)
PROFILES.register(Entry("S1002", "S1002 wheel (EN 13715)", source=_S1002_SOURCE,
                        builder=_from_curve(s1002_curve, WHEEL, 0.070)),
                  kind=WHEEL, aliases=(), generated=True)
PROFILES.register(Entry("LMA", "LMA wheel (TB/T 449), the published geometry", source=_LMA_SOURCE,
                        builder=_from_curve(lma_curve, WHEEL, 0.070)),
                  kind=WHEEL, aliases=(), generated=True)
PROFILES.register(Entry("LMA-worn", "LMA with a synthetic hollow (Ren & Jin 2010, Fig. 6)",
                        source=_lma_worn_source(LMA_WORN_HOLLOW_DEPTH_MM, LMA_WORN_HOLLOW_WIDTH_MM,
                                                LMA_WORN_HOLLOW_CENTRE_MM),
                        builder=_from_curve(lma_worn_curve, WHEEL, 0.070)),
                  kind=WHEEL, aliases=(), generated=True)
PROFILES.register(Entry("UIC60", "UIC60 rail (60E1, EN 13674-1)", source=_UIC60_SOURCE,
                        builder=_from_curve(uic60_curve, RAIL, None)),
                  kind=RAIL, aliases=("60E1",), generated=True)
PROFILES.register(Entry("CHN60", "CHN60 rail (GB/T 2585)", source=_CHN60_SOURCE,
                        builder=_from_curve(chn60_curve, RAIL, None)),
                  kind=RAIL, aliases=(), generated=True)
PROFILES.register(Entry("MBench_S1002_v3", "the Manchester benchmark's S1002 file",
                        source=_MANCHESTER_WHEEL_SOURCE,
                        builder=_from_file(WHEEL, os.path.join("manchester", "MBench_S1002_v3.prw"),
                                           flange_back_to_taping_line=0.070)),
                  kind=WHEEL, aliases=(), generated=False)
PROFILES.register(Entry("MBench_UIC60_v3", "the Manchester benchmark's UIC60 file",
                        source=_MANCHESTER_RAIL_SOURCE,
                        builder=_from_file(RAIL, os.path.join("manchester", "MBench_UIC60_v3.prr"),
                                           cant=MANCHESTER_RAIL_CANT)),
                  kind=RAIL, aliases=(), generated=False)
BUILTIN_ALIASES = {alias: e.name for e in PROFILES for alias in e.facts["aliases"]}


def _canonical_name(name: str) -> str:
    if not isinstance(name, str):
        raise ProfileError(f"profile name must be a string, got {name!r}")
    wanted = name.strip().upper()
    for alias, target in BUILTIN_ALIASES.items():
        if wanted == alias.upper():
            return target
    for key in PROFILES.names():
        if wanted == key.upper():
            return key
    known = ", ".join(list(PROFILES.names()) + list(BUILTIN_ALIASES))
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
    return PROFILES.get(name).source


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
    return PROFILES.get(name).builder(name, step)


def builtin_profile(name: str, step: float = DEFAULT_STEP) -> Profile:
    """A built-in profile generated from its published definition, on a grid of `step` (m).

    Names: those of PROFILES (`list_builtin_profiles`; aliases too),
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
    the ones read from the files shipped in profiles/data/)."""
    return [(e.name, e.facts["kind"], e.source) for e in PROFILES
            if e.facts["generated"] or not generated_only]


def worn_lma_profile(depth_mm: float | None = None, width_mm: float | None = None,
                     centre_mm: float | None = None, step: float = DEFAULT_STEP) -> Profile:
    """LMA with a raised-cosine hollow of the given depth, width and centre (mm; defaults LMA_WORN_HOLLOW_*)."""
    curve = lma_worn_curve(depth_mm, width_mm, centre_mm)
    info = curve.info
    source = _lma_worn_source(info["hollow_depth_mm"], info["hollow_width_mm"], info["hollow_centre_mm"])
    return _profile_from_curve(curve, "LMA-worn", WHEEL, source, step, 0.070)
